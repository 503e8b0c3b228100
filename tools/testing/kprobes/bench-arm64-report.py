#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-arm64-report.py OURS_LOG UPSTREAM_LOG UPSTREAM_VERSION [OURS UPSTREAM]...

Read the "KPB-..." lines (key=value words) that bench-arm64/
kprobe_bench_arch.ko printed on the two consoles of make bench-arm64 (or,
with BENCH_ARCH=riscv64, make bench-riscv64) and print the comparison: hit costs in instructions (median over the
repetitions of a loop of calls, probed minus unprobed, per call), BRK
exceptions per hit, and registration times (virtual, median). Then the
clients run's tables (guest-progs/kprobe_clients.c, after the guest's
"BENCH-RUN clients"), the same as make bench's, from bench_clients.py;
further pairs of consoles are boots that ran the clients alone
(BENCH_ARM64_CLIENTS_BOOTS), whose figures join those tables.
"""
import datetime
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import bench_clients  # noqa: E402

ARCH = os.environ.get("BENCH_ARCH", "arm64")

# What the instructions probed are, on each arch (kprobe_bench_ARCH_fns.S).
KINDS = {
    "arm64": dict(cbz="cbz", bcond="b.eq", add="add", ldr="ldr x0, [sp, #8]",
                  body=8, qemu="qemu-system-aarch64 -machine virt -cpu max, 2 vCPUs",
                  exc="BRK", traps="kprobe_brk_traps", via="do_el1_brk64()"),
    "riscv64": dict(cbz="c.beqz", bcond="beq", add="addi", ldr="ld a0, 8(sp)",
                    body=2, qemu="qemu-system-riscv64 -machine virt, 1 vCPU",
                    exc="EBREAK", traps="kprobe_ebreak_traps", via="handle_break()"),
}[ARCH]

HITS = [
    # item, label
    ("entry_mod", "kprobe at +0 of a C function of the module"),
    ("entry_kernel", "kprobe at +0 of jiffies_to_msecs (kernel text)"),
    ("sim_cbz", "kprobe on %s (body, simulated)" % KINDS["cbz"]),
    ("sim_bcond", "kprobe on %s (body, simulated)" % KINDS["bcond"]),
    ("step_add", "kprobe on %s (body, copied)" % KINDS["add"]),
    ("step_add_post", "kprobe on %s + post_handler" % KINDS["add"]),
    ("copy_ldr", "kprobe on %s (body, copied)" % KINDS["ldr"]),
    ("step_ldr_post", "kprobe on %s + post_handler" % KINDS["ldr"]),
] + ([
    ("step_amo_post", "kprobe on amoadd.w + post_handler (stepped)"),
] if ARCH == "riscv64" else []) + [
    ("body_kernel", "kprobe at +%d of jiffies_to_usecs (kernel body)" % KINDS["body"]),
    ("opt_add", "kprobe on %s, after the optimizer ran" % KINDS["add"]),
    ("opt_ldr", "kprobe on %s, after the optimizer ran" % KINDS["ldr"]),
    ("opt_kernel", "kprobe at +%d of jiffies_to_usecs, after the optimizer ran" %
     KINDS["body"]),
    ("kret_mod", "kretprobe, C function of the module"),
    ("kret_kernel", "kretprobe, jiffies_to_msecs"),
]

LAYOUTS = [
    ("adds", "1,000 '%s' (x += 1) of one function of the module" % KINDS["add"]),
    ("nops", "1,000 NOPs of one function of the module"),
    ("entries", "entries (+0) of kernel text functions, from kernel_read() on"),
]


def parse(path):
    """The KPB lines of a console: a list of (tag, {key: value})."""
    lines = []
    try:
        f = open(path, errors="replace")
    except OSError:
        return lines
    with f:
        for line in f:
            m = re.search(r"(KPB-[A-Z-]+)(.*)$", line.replace("\r", ""))
            if not m:
                continue
            words = dict(w.split("=", 1) for w in m.group(2).split() if "=" in w)
            lines.append((m.group(1), words))
    return lines


def median(values):
    return statistics.median(values) if values else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2f" % (a / b)


def num(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


class Run:
    def __init__(self, path):
        self.lines = parse(path)
        self.tags = {tag for tag, _ in self.lines}

    def all(self, tag, **match):
        return [w for t, w in self.lines
                if t == tag and all(w.get(k) == str(v) for k, v in match.items())]

    def hit(self, item):
        """Instructions per hit over an unprobed call, and per unprobed call."""
        rows = self.all("KPB-HIT", item=item)
        if not rows:
            return None, None, None
        calls = int(rows[0]["calls"])
        base = median([int(r["base"]) for r in rows])
        probed = median([int(r["probed"]) for r in rows])
        return (probed - base) / calls, base / calls, rows[0]["insn"]

    def exc(self, item, key):
        rows = self.all("KPB-EXC", item=item)
        if not rows or int(rows[0][key]) < 0:
            return None
        return int(rows[0][key]) / int(rows[0]["calls"])

    def reg(self, layout, n, how, key):
        rows = self.all("KPB-REG", layout=layout, n=n, how=how)
        if not rows:
            return None, None
        return median([int(r[key]) for r in rows]), rows


def segments(ours, up, out):
    """riscv64: one hit cut at its handlers, from instret (KPB-SEG)."""
    if not ours.all("KPB-SEG") and not up.all("KPB-SEG"):
        return
    out("One hit cut at its handlers (riscv64: instret, the last of three calls;")
    out("the read costs a few itself): call to pre_handler, pre_handler to")
    out("post_handler, then to the call's return, ours / upstream")
    for item, label in HITS:
        a, b = ours.all("KPB-SEG", item=item), up.all("KPB-SEG", item=item)
        if not a and not b:
            continue
        cell = lambda rows, k: rows[0][k] if rows else "-"
        out("  %-46s %9s %9s %9s  total %s / %s" % (
            label,
            "%s/%s" % (cell(a, "to_pre"), cell(b, "to_pre")),
            "%s/%s" % (cell(a, "pre_to_post"), cell(b, "pre_to_post")),
            "%s/%s" % (cell(a, "to_return"), cell(b, "to_return")),
            cell(a, "total"), cell(b, "total")))


def main():
    ours, up = Run(sys.argv[1]), Run(sys.argv[2])
    version = sys.argv[3] if len(sys.argv) > 3 else "?"
    out = print
    out("make bench-%s of %s, against linux-source-6.12 %s" %
        (ARCH, datetime.date.today().isoformat(), version))
    out("%s, -icount shift=0;" % KINDS["qemu"])
    out("virtual ns = guest instructions (of every vCPU; the others idle)")
    for name, run in (("ours", ours), ("upstream", up)):
        if "KPB-END" not in run.tags:
            out("WARNING: the %s console has no KPB-END: the run did not finish" % name)
    out("")

    out("Clock check: a loop of two instructions, interrupts off; loop_ns - ktime_ns")
    out("(one ktime_get_ns() call) against the 2n + 2 instructions it executes")
    out("%-9s %9s %9s %9s %9s %7s" % ("kernel", "iters", "expect", "ktime_ns", "loop_ns", "ratio"))
    for name, run in (("ours", ours), ("upstream", up)):
        for w in run.all("KPB-CHECK"):
            got = int(w["loop_ns"]) - int(w["ktime_ns"])
            out("%-9s %9s %9s %9s %9s %7.4f" % (name, w["iters"], w["expect"], w["ktime_ns"],
                                               w["loop_ns"], got / int(w["expect"])))
        cf = run.all("KPB-BEGIN")
        if cf and "cntfrq" in cf[0]:
            out("%-9s CNTFRQ_EL0 %s Hz" % (name, cf[0]["cntfrq"]))
    out("")

    begin = ours.all("KPB-BEGIN") or up.all("KPB-BEGIN")
    reps = begin[0].get("reps", "?") if begin else "?"
    calls = begin[0].get("calls", "?") if begin else "?"
    out("Hit cost over an unprobed call, instructions: median of %s loops of %s" % (reps, calls))
    out("calls each, interrupts off, probed minus unprobed, per call. A handler")
    out("that only counts. insn: the probed instruction word (the low half a 2-byte")
    out("one's). exc: %s exceptions per hit, counted by a function tracer callback" % KINDS["exc"])
    out("on %s (both kernels, its own pass; '-' with no function tracer);" % KINDS["via"])
    out("brk: ours' %s" % KINDS["traps"])
    out("%-48s %8s %8s %8s %6s %4s %4s %4s" %
        ("probe", "insn", "ours", "upstream", "ratio", "exc", "exc", "brk"))
    out("%-48s %8s %8s %8s %6s %4s %4s %4s" % ("", "", "", "", "", "ours", "up", "ours"))
    bases = []
    for item, label in HITS:
        a, abase, insn_a = ours.hit(item)
        b, bbase, insn_b = up.hit(item)
        insn = insn_a or insn_b or "-"
        if insn_a and insn_b and insn_a != insn_b:
            insn = insn_a + "/" + insn_b
        out("%-48s %8s %8s %8s %6s %4s %4s %4s" % (
            label, insn, num(a), num(b), ratio(a, b),
            num(ours.exc(item, "brk_ftrace"), "%.2g"), num(up.exc(item, "brk_ftrace"), "%.2g"),
            num(ours.exc(item, "brk_ours"), "%.2g")))
        bases.append((label, abase, bbase))
    for name, run in (("ours", ours), ("upstream", up)):
        for w in run.all("KPB-HIT-FAIL"):
            out("%s: %s not registered (%s)" % (name, w["item"], w["err"]))
    odd = []
    for name, run in (("ours", ours), ("upstream", up)):
        for item, _ in HITS:
            h = run.exc(item, "hits")
            if h is not None and h != 1:
                odd.append("%s %s: %.3f handler runs per call" % (name, item, h))
    if odd:
        out("handler runs per call other than 1 (other callers of a kernel function):")
        for line in odd:
            out("  " + line)
    out("unprobed call, instructions (loop included): " +
        "; ".join("%s %s/%s" % (item, num(a), num(b)) for (item, _), (_, a, b)
                  in zip(HITS, bases)))
    segments(ours, up, out)
    out("")

    out("Registering N probes, virtual ms per call (batch: one register_kprobes()")
    out("or unregister_kprobes() of N; single: N register_kprobe() or")
    out("unregister_kprobe() calls, in total), median of the repetitions; us/probe;")
    out("syncs: ours' text synchronisations (stop_machine() or IPI rounds) per call")
    out("%-8s %5s %-7s %-10s %10s %10s %7s %9s %9s %6s" % (
        "layout", "N", "how", "phase", "ours ms", "upstr ms", "ratio",
        "ours us/p", "upstr us/p", "syncs"))
    for layout, title in LAYOUTS:
        keys = sorted({(int(w["n"]), w["how"]) for run in (ours, up)
                       for w in run.all("KPB-REG", layout=layout)},
                      key=lambda k: (k[1] != "batch", k[0]))
        if not keys:
            continue
        out("%s:" % title)
        for n, how in keys:
            for phase, key, skey in (("register", "reg_ns", "syncs_reg"),
                                     ("unregister", "unreg_ns", "syncs_unreg")):
                a, arows = ours.reg(layout, n, how, key)
                b, brows = up.reg(layout, n, how, key)
                syncs = median([int(r[skey]) for r in arows]) if arows else None
                out("%-8s %5d %-7s %-10s %10s %10s %7s %9s %9s %6s" % (
                    layout, n, how, phase, num(a and a / 1e6, "%.3f"),
                    num(b and b / 1e6, "%.3f"), ratio(a, b),
                    num(a and a / 1e3 / n), num(b and b / 1e3 / n),
                    num(syncs, "%d") if syncs is not None and syncs >= 0 else "-"))
                for name, rows in (("ours", arows), ("upstream", brows)):
                    if rows and any(int(r["ok"]) != n for r in rows):
                        out("  %s registered only %s of %d" %
                            (name, ",".join(r["ok"] for r in rows), n))
        for name, run in (("ours", ours), ("upstream", up)):
            for w in run.all("KPB-REG-FAIL", layout=layout):
                out("  %s: %s n=%s rep %s failed: %s" % (name, w["how"], w["n"], w["rep"], w["err"]))
    out("")
    out("Entries layout: the functions walked from kernel_read() on whose entry")
    out("takes a probe (a disabled one, registered and removed first)")
    for name, run in (("ours", ours), ("upstream", up)):
        e = run.all("KPB-ENTRIES")
        first = run.all("KPB-ENTRY")
        refused = [w["sym"] + " (" + w["err"] + ")" for w in run.all("KPB-REFUSED")]
        if e:
            out("%-9s %s functions of %s symbols, %s refused; from %s to %s" % (
                name, e[0]["found"], e[0]["symbols"], e[0]["refused"],
                first[0]["sym"] if first else "?", first[-1]["sym"] if first else "?"))
        if refused:
            out("          refused: " + ", ".join(refused))
    ra = {w["sym"] for w in ours.all("KPB-REFUSED")}
    rb = {w["sym"] for w in up.all("KPB-REFUSED")}
    if ra != rb:
        out("the kernels refused different functions: the sets differ")
    cover(ours, up, out)
    clients(sys.argv[1], sys.argv[2], sys.argv[4:], out)


def clients(ours_log, up_log, more, out):
    """make bench's Clients tables, from the BENCH lines of the two consoles."""
    runs, skips = [], []
    for path in (ours_log, up_log):
        try:
            runs.append(bench_clients.parse(path))
            skips.append(bench_clients.parse_skips(path))
        except OSError:
            runs.append({})
            skips.append([])
    bench_clients.perf_hits(runs[0], runs[1], skips, out)
    if not any("clients" in r for r in runs):
        return
    # Further boots that ran the clients alone: ours, upstream, in pairs.
    bench_clients.boots(runs[0], skips[0], more[0::2])
    bench_clients.boots(runs[1], skips[1], more[1::2])
    for name, r in zip(("ours", "upstream"), runs):
        if "clients" not in r:
            out("WARNING: the %s console has no clients run" % name)
        elif "end" not in r:
            out("WARNING: the %s console has no BENCH-RUN end: the clients run did not"
                " finish" % name)
    bench_clients.clients(runs[0], runs[1], skips, out)


RV_MAJOR = {0x03: "load", 0x13: "op-imm", 0x17: "auipc", 0x1b: "op-imm-32", 0x23: "store",
            0x2f: "amo", 0x33: "op", 0x37: "lui", 0x3b: "op-32", 0x63: "branch",
            0x67: "jalr", 0x6f: "jal", 0x73: "system", 0x0f: "fence"}
RV_C = {(0, 0): "c.addi4spn", (0, 2): "c.lw", (0, 3): "c.ld", (0, 6): "c.sw", (0, 7): "c.sd",
        (1, 0): "c.addi", (1, 1): "c.addiw", (1, 2): "c.li", (1, 3): "c.lui/addi16sp",
        (1, 4): "c.alu", (1, 5): "c.j", (1, 6): "c.beqz", (1, 7): "c.bnez",
        (2, 0): "c.slli", (2, 2): "c.lwsp", (2, 3): "c.ldsp", (2, 4): "c.mv/add/jr/jalr",
        (2, 6): "c.swsp", (2, 7): "c.sdsp"}


def rv_insn_kind(w):
    """A name for the kind of the RISC-V instruction whose first parcel is in w."""
    if w & 3 != 3:
        return RV_C.get((w & 3, (w >> 13) & 7), "c.other")
    return RV_MAJOR.get(w & 0x7f, "other")


def insn_kind(w):
    """A name for the kind of an instruction the optimizer left."""
    if ARCH == "riscv64":
        return rv_insn_kind(w)
    kinds = [
        (0xffffffff, 0xd503233f, "paciasp"), (0xffffffff, 0xd503237f, "pacibsp"),
        (0xffffff3f, 0xd503241f, "bti"), (0xfffffc1f, 0xd63f0000, "blr"),
        (0xfffff800, 0xd63f0800, "blraa/blrab"), (0xfc000000, 0x94000000, "bl"),
        (0xff000010, 0x54000000, "b.cond"), (0xd4000000, 0xd4000000, "brk/svc/hvc"),
    ]
    for mask, value, name in kinds:
        if w & mask == value:
            return name
    return "other %08x" % w


def cover(ours, up, out):
    rows_a, rows_b = ours.all("KPB-COVER"), up.all("KPB-COVER")
    if not rows_a:
        return
    out("")
    out("Optimized body offsets: a probe at every offset from +4 to the end of")
    out("ordinary functions (from kernel_read(), kstrtoull(), jiffies_to_msecs()")
    out("on), registered together (riscv64: in five rounds, probes five instructions")
    out("apart, so that none is inside another's jump); probe-able: register_kprobe()")
    out("took it; optimized: its word became a jump (%s) after" %
        ("an AUIPC" if ARCH == "riscv64" else "a B"))
    out("wait_for_kprobe_optimizer()")
    out("%-32s %5s %7s %8s %8s %8s %8s" % ("function", "size", "offsets", "probed",
                                          "opt", "probed", "opt"))
    out("%-32s %5s %7s %8s %8s %8s %8s" % ("", "", "", "ours", "ours", "up", "up"))
    up_by = {w["sym"]: w for w in rows_b}
    tot = [0, 0, 0, 0]
    for w in rows_a:
        b = up_by.get(w["sym"], {})
        vals = [int(w["probed"]), int(w["optimized"]),
                int(b.get("probed", 0)), int(b.get("optimized", 0))]
        tot = [t + v for t, v in zip(tot, vals)]
        out("%-32s %5s %7s %8d %8d %8d %8d" % (w["sym"][:32], w["size"], w["offsets"], *vals))
    out("%-32s %5s %7s %8d %8d %8d %8d" % ("all %d functions" % len(rows_a), "", "", *tot))
    out("optimized / probe-able: ours %s, upstream %s" % (
        ratio(tot[1], tot[0]), ratio(tot[3], tot[2])))
    boosted = [int(w.get("boosted", -1)) for w in rows_a]
    if boosted and min(boosted) >= 0:
        out("ours, one exception per hit (simulated, emulated or a boosted copy) / probe-able: "
            "%s (%d of %d); the tree's: simulated ones only" % (
                ratio(sum(boosted), tot[0]), sum(boosted), tot[0]))
    left = {}
    for w in ours.all("KPB-NOOPT"):
        k = insn_kind(int(w["insn"], 16))
        left[k] = left.get(k, 0) + 1
    if left:
        out("ours, left a%s %s, by kind: " % ("n" if KINDS["exc"][0] in "AEIOU" else "", KINDS["exc"]) + ", ".join(
            "%s %d" % kv for kv in sorted(left.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
