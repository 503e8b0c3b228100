#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OURS_LOG UPSTREAM_LOG UPSTREAM_VERSION OUTDIR

Read the "BENCH-RUN <label>" and "BENCH <key> <value>" lines of the two
bench consoles, print the comparison tables, write OUTDIR/bench.txt and
plot the hit costs to OUTDIR/bench.png with gnuplot when it is there.
The clients run (guest-progs/kprobe_clients.c) also prints
"BENCH-SKIP <exp> <N|all> <rep|all> <reason>" for what it could not
measure; the clients tables say so.
"""
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

HITS = [
    # key, label, traps per hit by design (the same in both kernels)
    ("hit_breakpoint_post", "kprobe with post_handler (not boosted)", 2),
    ("hit_boosted", "kprobe, boosted", 1),
    ("hit_optimized", "kprobe, optimized", 0),
    ("hit_ftrace", "kprobe on the ftrace site", 0),
    ("hit_kretprobe", "kretprobe (entry on ftrace)", 0),
    ("hit_kretprobe_entry", "kretprobe + entry_handler + data", 0),
    ("hit_aggregate4", "4 kprobes at one address (optimized)", 0),
]


def parse(path):
    runs = {}
    label = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip().replace("\r", "")
            m = re.search(r"BENCH-RUN (.+)$", line)
            if m:
                label = m.group(1).strip()
                runs.setdefault(label, {})
                continue
            m = re.search(r"\bBENCH (\w+) (\d+)$", line)
            if m and label:
                runs[label][m.group(1)] = int(m.group(2))
    return runs


def ratio(a, b):
    if a is None or b is None:
        return "-"
    if b == 0:
        return "-" if a else "1.00"
    return "%.2f" % (a / b)


def fmt(v, scale=1):
    return "-" if v is None else ("%d" % (v / scale) if scale == 1 else "%.1f" % (v / scale))


def compare_row(out, first, width, label, a, b, scale=1):
    """One line of a comparison table: two labels, ours, upstream, ratio."""
    out("%-*s %-*s %9s %9s %8s" % (width[0], first, width[1], label,
                                    fmt(a, scale), fmt(b, scale), ratio(a, b)))


LAYOUTS = [
    # run label, key prefix, title
    ("big", "big", "N probes on consecutive instructions of one function of 24,000"),
    ("entries", "entry", "N probes at the entries of N functions (ftrace sites)"),
    ("kret", "kret", "N kretprobes at the entries of N functions"),
]


KINDS = ["lea", "load", "add", "push", "rip", "jcc", "call"]
KIND_PATHS = [
    # run label, key suffix, label
    ("kinds_trap", "post", "breakpoint + post_handler"),
    ("kinds_trap", "trap", "breakpoint (boosted where it can be)"),
    ("kinds_opt", "optimized", "optimized"),
]


def kinds(ours, up, out):
    """Hit cost per instruction kind and path; '-' where a kprobes cannot."""
    if not any(r in ours or r in up for r in ("kinds_trap", "kinds_opt")):
        return
    out("Hit cost by instruction kind, instructions over an unprobed call (median")
    out("of 1001): lea 8(%rdi),%rax; movq (%rsp),%rax; addq $1,%rax; pushq %rdi;")
    out("movq sym(%rip),%rax; jz (emulated); call (emulated). '-': not optimized")
    out("%-6s %-38s %9s %9s %8s" % ("kind", "path", "ours", "upstream", "ratio"))
    width = (6, 38)
    for kind in KINDS:
        for run, suffix, label in KIND_PATHS:
            key = "kind_%s_%s" % (kind, suffix)
            a, b = ours.get(run, {}).get(key), up.get(run, {}).get(key)
            if a is None and b is None:
                continue
            compare_row(out, kind, width, label, a, b)
    out("")


CONCURRENT = [
    # key suffix, label, unit scale
    ("register_ns", "4 threads register, ms", 1e6),
    ("unregister_ns", "4 threads unregister, ms", 1e6),
    ("alone_unregister_ns", "1 thread unregisters as many, ms", 1e6),
    ("toggles", "disable+enable meanwhile, count", 1),
    ("toggle_max_ns", "longest disable+enable, ms", 1e6),
]


def concurrent(ours, up, out):
    """Threads that close their probes one at a time at once."""
    runs = sorted({k for k in list(ours) + list(up) if k.startswith("concurrent ")})
    if not runs:
        return
    out("Four threads each register N probes one at a time, then unregister them one")
    out("at a time, all at once, while a fifth thread disables and enables another")
    out("probe over and over; then one thread unregisters 4N alone. Wall time")
    out("(virtual; grace periods pass at real speed), median of 3 rounds.")
    out("%-18s %-34s %9s %9s %8s" % ("where, N", "", "ours", "upstream", "ratio"))
    width = (18, 34)
    for run in runs:
        _, where, n = run.split()
        o, u = ours.get(run, {}), up.get(run, {})
        for suffix, label, scale in CONCURRENT:
            key = "conc_%s_%s" % (where, suffix)
            a, b = o.get(key), u.get(key)
            compare_row(out, "%s, %s" % (where, n), width, label, a, b, scale)
    out("")


def layouts(ours, up, out):
    """Per-probe costs of the layout runs; a run may stop at its budget."""
    for run, prefix, title in LAYOUTS:
        o, u = ours.get(run, {}), up.get(run, {})
        keys = sorted({k for k in list(o) + list(u) if k.endswith("_done")},
                      key=lambda k: (int(k.split("_")[2]), k.split("_")[1]))
        if not keys:
            continue
        out(title + ": microseconds (virtual) per probe, for N probes registered")
        out("in batches (register_kprobes() of 10, 20, 40, ... up to 1,000) or one at")
        out("a time, until all are registered or 5 s (virtual) have gone; the ratio")
        out("is of the per-probe costs; done: the probes each kprobes registered")
        out("%-7s %-7s %-11s %9s %9s %8s %7s %7s" % ("N", "how", "", "ours", "upstream",
                                                     "ratio", "done", "done"))
        for k in keys:
            _, how, n = k.split("_")[:3]
            base = "%s_%s_%s" % (prefix, how, n)
            for what in ("register", "unregister"):
                per = []
                for runs in (o, u):
                    done, ns = runs.get(base + "_done"), runs.get("%s_%s_ns" % (base, what))
                    per.append(ns / done / 1000 if done and ns is not None else None)
                a, b = per
                out("%-7s %-7s %-11s %9s %9s %8s %7s %7s" % (
                    n, how, what, "-" if a is None else "%.1f" % a,
                    "-" if b is None else "%.1f" % b,
                    "-" if a is None or not b else "%.3f" % (a / b),
                    o.get(base + "_done", "-"), u.get(base + "_done", "-")))
        out("")


CLIENT_EXPS = [
    # experiment, label
    ("perf_entry", "PMU entry"),
    ("perf_entry_bpf", "PMU entry, BPF"),
    ("perf_entry_link", "PMU entry, BPF link"),
    ("perf_entry_bpf_threads", "PMU entry, BPF, 4 closing"),
    ("perf_kret", "PMU kretprobe"),
    ("perf_kret_bpf", "PMU kretprobe, BPF"),
    ("perf_body", "PMU body"),
    ("perf_body_bpf", "PMU body, BPF"),
    ("perf_body_bpf_threads", "PMU body, BPF, 4 closing"),
    ("events_remove", "kprobe_events, removed"),
    ("events_clear", "kprobe_events, truncated"),
    ("multi_entry", "kprobe_multi link, one"),
]
CLIENT_GPS = [("rcu", "rcu"), ("rcu_exp", "exp"), ("srcu_tp", "srcu"),
              ("tasks_trace", "tt"), ("tasks_rude", "rude")]
CLIENT_KEY = re.compile(r"^cl_(.+)_(\d+)_r(\d+)_(events|refused|attach_ns|attach_tsc|"
                        r"detach_ns|detach_tsc|gp_\w+)$")


def parse_skips(path):
    """The clients run's BENCH-SKIP lines: (exp, N, rep, reason)."""
    skips = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip().replace("\r", "")
            m = re.search(r"BENCH-SKIP (\S+) (\S+) (\S+) (.*)$", line)
            if m:
                skips.append(m.groups())
    return skips


def client_reps(runs):
    """{(exp, N): [{metric: value} per repetition with figures]}."""
    reps = {}
    for key, value in runs.get("clients", {}).items():
        m = CLIENT_KEY.match(key)
        if m:
            exp, n, rep, metric = m.groups()
            reps.setdefault((exp, int(n)), {}).setdefault(int(rep), {})[metric] = value
    return {k: [v[r] for r in sorted(v)] for k, v in reps.items()}


def per_event(reps, metric):
    """Per-event values of @metric, one per repetition that has it."""
    return [r[metric] / r["events"] for r in reps if r.get("events") and metric in r]


def med(values):
    return statistics.median(values) if values else None


def multi_ratios(o, u, out):
    """Attach one at a time against one kprobe_multi link, per function."""
    sizes = sorted({n for e, n in list(o) + list(u) if e == "multi_entry"})
    if not sizes:
        return
    out("")
    out("Attach per event against kprobe_multi's per function on the same kernel")
    out("(medians): how far one-at-a-time attach is from the batched interface")
    out("%-31s %9s %9s" % ("experiment, N", "ours", "upstream"))
    for n in sizes:
        mo = med(per_event(o.get(("multi_entry", n), []), "attach_ns"))
        mu = med(per_event(u.get(("multi_entry", n), []), "attach_ns"))
        for exp in ("perf_entry", "perf_entry_bpf", "perf_entry_link", "perf_kret_bpf",
                    "events_remove"):
            ao = med(per_event(o.get((exp, n), []), "attach_ns"))
            au = med(per_event(u.get((exp, n), []), "attach_ns"))
            out("%-31s %9s %9s" % ("%s, %d" % (dict(CLIENT_EXPS)[exp], n),
                                   ratio(ao, mo), ratio(au, mu)))


def clients(ours, up, skips, out):
    """Events attached one at a time, then detached one at a time."""
    o, u = client_reps(ours), client_reps(up)
    if not o and not u and not any(skips):
        return
    known = [e for e, _ in CLIENT_EXPS]
    labels = dict(CLIENT_EXPS)
    exps = known + sorted({e for e, _ in list(o) + list(u)} - set(known))
    # Every size measured or tried (a size may have failed everywhere).
    tried = set(o) | set(u) | {(e, int(n)) for sk in skips for e, n, _, _ in sk
                               if n.isdigit()}
    exps += sorted({e for e, _ in tried} - set(exps))
    rows = [(e, n) for e in exps for n in sorted({k[1] for k in tried if k[0] == e})]
    out("")
    out("Clients (guest-progs/kprobe_clients.c): N perf kprobe PMU events on N")
    out("distinct functions (entry, kretprobe, or the instruction after the ftrace")
    out("site), or N kprobe_events lines, attached one at a time, then detached one")
    out("at a time (4 closing: by four threads at once; truncated: one truncating")
    out("open), as bpftrace, perf, pwru and Tetragon do. Per event, microseconds")
    out("(virtual: CLOCK_MONOTONIC; a grace period is idle time, which passes at")
    out("real speed): the median of the repetitions, and their range; tsc: the")
    out("ratio of the TSC medians.")
    width = (31, 6)
    out("%-31s %-6s %9s %9s %8s %14s %14s %6s" % (
        "experiment, N", "phase", "ours", "upstream", "ratio", "ours range",
        "upstream range", "tsc"))

    def rng(values):
        return "%.0f-%.0f" % (min(values) / 1e3, max(values) / 1e3) if values else "-"

    for exp, n in rows:
        ro, ru = o.get((exp, n), []), u.get((exp, n), [])
        for phase in ("detach", "attach"):
            vo, vu = per_event(ro, phase + "_ns"), per_event(ru, phase + "_ns")
            to, tu = per_event(ro, phase + "_tsc"), per_event(ru, phase + "_tsc")
            line = []
            compare_row(line.append, "%s, %d" % (labels.get(exp, exp), n), width,
                        phase, med(vo), med(vu), 1e3)
            out("%s %14s %14s %6s" % (line[0], rng(vo), rng(vu), ratio(med(to), med(tu))))
    multi_ratios(o, u, out)
    out("")
    out("Grace periods completed per detached event while detaching, median of the")
    out("repetitions (anyone's: other users' count too): rcu normal, exp expedited,")
    out("srcu tracepoint_srcu, tt Tasks Trace, rude Tasks Rude RCU; reps: the")
    out("repetitions with figures; ref: functions refused on the way (median)")
    cols = "".join("%6s" % short for _, short in CLIENT_GPS) + " %4s %4s" % ("reps", "ref")
    out("%-31s %-40s %s" % ("", "ours", "upstream"))
    out("%-31s%s %s" % ("experiment, N", cols, cols))
    for exp, n in rows:
        cells = []
        for reps in (o.get((exp, n), []), u.get((exp, n), [])):
            part = ""
            for flavour, _ in CLIENT_GPS:
                v = med(per_event(reps, "gp_" + flavour))
                part += "%6s" % ("-" if v is None else "%.2f" % v)
            refused = med([r["refused"] for r in reps if "refused" in r])
            part += " %4d %4s" % (len(reps), "-" if refused is None else "%d" % refused)
            cells.append(part)
        out("%-31s%s %s" % ("%s, %d" % (labels.get(exp, exp), n), cells[0], cells[1]))
    for who, sk in (("ours", skips[0]), ("upstream", skips[1])):
        # One line per experiment, size and reason, with its repetitions.
        seen = {}
        for exp, n, rep, reason in sk:
            seen.setdefault((exp, n, reason), []).append(
                str(int(rep) + 1) if rep.isdigit() else rep)
        for (exp, n, reason), reps in seen.items():
            what = exp if n == "all" else "%s, N=%s, repetition%s %s" % (
                exp, n, "s" if len(reps) > 1 else "", ", ".join(reps))
            out("(%s: not measured: %s: %s)" % (who, what, reason))


def pending(ours, out):
    runs = ours.get("pending", {})
    sizes = sorted(int(k.split("_")[1]) for k in runs if k.startswith("pending_"))
    if not sizes:
        return
    out("")
    out("register_kprobe() while M releases are pending (kprobe_unregister_deferred()),")
    out("ours only, microseconds (virtual) per probe, mean of 100, probes disabled")
    out("%-10s %9s" % ("M", "ours"))
    for m in sizes:
        out("%-10d %9s" % (m, fmt(runs["pending_%d_register_ns" % m], 1e3)))


def main():
    ours, up = parse(sys.argv[1]), parse(sys.argv[2])
    version, outdir = sys.argv[3], sys.argv[4]
    lines = []
    out = lines.append
    out("kprobes benchmark, %s: ours against the tree's kprobes of linux-source-6.12 %s"
        % (datetime.date.today().isoformat(), version))
    out("QEMU TCG -icount shift=0: costs are guest instructions (a trap counts as one;")
    out("add the hardware's price per trap, shown in the traps column). Times are")
    out("virtual: instructions at 1 ns each, plus idle time, which passes at real speed.")
    out("")
    out("Hit cost over an unprobed call, instructions (median of 1001 calls)")
    out("%-40s %6s %9s %9s %8s" % ("", "traps", "ours", "upstream", "ratio"))
    oh, uh = ours.get("hits", {}), up.get("hits", {})
    plot = []
    for key, label, traps in HITS:
        a, b = oh.get(key), uh.get(key)
        out("%-40s %6d %9s %9s %8s" % (label, traps, fmt(a), fmt(b), ratio(a, b)))
        plot.append((label, a or 0, b or 0))
    out("%-40s %6s %9s %9s" % ("(the unprobed call itself)", "", fmt(oh.get("base_call")),
                                 fmt(uh.get("base_call"))))
    out("")
    for kind, title in (("attach_batch", "register_kprobes() of N probes, one call"),
                        ("attach_single", "register_kprobe() N times")):
        out("%s, milliseconds (virtual)" % title)
        out("(register: until it returns, the probes armed; optimized: from the register")
        out("call until the first and last probe run optimized; unregister: until it")
        out("returns; text restored: from the unregister call until both run unprobed)")
        out("%-10s %-14s %9s %9s %8s" % ("N", "", "ours", "upstream", "ratio"))
        sizes = sorted({int(k.split()[1]) for k in list(ours) + list(up)
                        if k.startswith(kind + " ")})
        for n in sizes:
            a, b = ours.get("%s %d" % (kind, n), {}), up.get("%s %d" % (kind, n), {})
            for key, name in (("register_ns", "register"), ("optimized_ns", "optimized"),
                              ("unregister_ns", "unregister"), ("unprobed_ns", "text restored")):
                out("%-10d %-14s %9s %9s %8s" % (n, name, fmt(a.get(key), 1e6),
                                                  fmt(b.get(key), 1e6),
                                                  ratio(a.get(key), b.get(key))))
        out("")
    kinds(ours, up, out)
    concurrent(ours, up, out)
    layouts(ours, up, out)
    out("Hit cost of a boosted probe with N other probes registered, instructions")
    out("%-10s %9s %9s %8s" % ("N", "ours", "upstream", "ratio"))
    os_, us_ = ours.get("scale", {}), up.get("scale", {})
    sizes = sorted({int(k.rsplit("_", 1)[1]) for k in list(os_) + list(us_)
                    if k.startswith("hit_boosted_among_")})
    for n in sizes:
        a = os_.get("hit_boosted_among_%d" % n)
        b = us_.get("hit_boosted_among_%d" % n)
        out("%-10d %9s %9s %8s" % (n, fmt(a), fmt(b), ratio(a, b)))
    for who, runs in (("ours", os_), ("upstream", us_)):
        if "scale_stopped_at" in runs:
            out("(%s: registering stopped at %d probes, after the time budget)"
                % (who, runs["scale_stopped_at"]))
    pending(ours, out)
    clients(ours, up, (parse_skips(sys.argv[1]), parse_skips(sys.argv[2])), out)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "bench.txt"), "w") as f:
        f.write(text)

    if not shutil.which("gnuplot"):
        print("gnuplot not found: no out/bench.png")
        return
    dat = os.path.join(outdir, "bench-hits.dat")
    with open(dat, "w") as f:
        for label, a, b in plot:
            f.write('"%s" %d %d\n' % (label, a, b))
    script = """
set terminal png size 1100,600 noenhanced
set output '%s'
set yrange [0:*]
set bmargin 10
set rmargin 24
set title 'kprobes hit cost over an unprobed call (guest instructions, -icount)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'instructions'
set xtics rotate by -25 scale 0
set key top right
set grid ytics
plot '%s' using 2:xtic(1) title 'ours', '' using 3 title 'upstream 6.12'
""" % (os.path.join(outdir, "bench.png"), dat)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print("plot: %s" % os.path.join(outdir, "bench.png"))


if __name__ == "__main__":
    main()
