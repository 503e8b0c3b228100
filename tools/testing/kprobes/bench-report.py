#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OURS_LOG UPSTREAM_LOG UPSTREAM_VERSION OUTDIR [OURS UPSTREAM]...

Read the "BENCH-RUN <label>" and "BENCH <key> <value>" lines of the two
bench consoles, print the comparison tables, write OUTDIR/bench.txt and
plot the hit costs to OUTDIR/bench.png with gnuplot when it is there.
The clients run (guest-progs/kprobe_clients.c) also prints
"BENCH-SKIP <exp> <N|all> <rep|all> <reason>" for what it could not
measure; the clients tables say so. Those tables, and the reading of
the consoles, are bench_clients.py's (make bench-arm64 prints them too).
Further pairs of consoles are boots that ran the clients alone
(BENCH_CLIENTS_BOOTS): their figures join the clients tables.
"""
import datetime
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from bench_clients import (boots, clients, compare_row, fmt, parse, parse_skips,  # noqa: E402
                           perf_hits, ratio)

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
    skips = (parse_skips(sys.argv[1]), parse_skips(sys.argv[2]))
    perf_hits(ours, up, skips, out)
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
    # Further boots that ran the clients alone: ours, upstream, in pairs.
    more = sys.argv[5:]
    boots(ours, skips[0], more[0::2])
    boots(up, skips[1], more[1::2])
    clients(ours, up, skips, out)
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
