# SPDX-License-Identifier: GPL-2.0
"""The clients tables of make bench and make bench-arm64.

guest-progs/kprobe_clients.c prints, after the guest's "BENCH-RUN
clients", "BENCH cl_<exp>_<N>_r<rep>_<metric> <value>" lines and
"BENCH-SKIP <exp> <N|all> <rep|all> <reason>" for what it could not
measure. bench-report.py (x86-64) and bench-arm64-report.py (arm64)
import this module to read them (parse(), parse_skips(); boots()
adds the consoles of further boots that ran the clients alone) and
print the same tables (clients()). The cycle counter's metric is attach_tsc and
detach_tsc on x86-64 (the TSC), attach_cntvct and detach_cntvct on
arm64 (CNTVCT_EL0); clients() takes whichever the consoles have.
"""
import re
import statistics


# kprobe_clients' progress lines: how many of its candidates are cold, and
# which candidates each measurement took.
COLD_LINE = re.compile(r"clients: \d+ functions in available_filter_functions, \d+ to try "
                       r"\((\d+) of cold subsystems first\)")
TOOK_LINE = re.compile(r"clients: rep (\d+)/\d+ N=(\d+) (\w+): .*; functions (\d+)-(\d+) of \d+")
LAYOUTS = ("cold", "mixed", "other")


def parse(path):
    """{run label: {key: value}} of a console's BENCH-RUN and BENCH lines.

    Each clients measurement also gets a metric "layout": 0 when it took
    functions of the cold subsystems only, 2 when none, 1 when both (from
    kprobe_clients' progress lines)."""
    runs = {}
    label = None
    cold = None
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
                continue
            m = COLD_LINE.search(line)
            if m:
                cold = int(m.group(1))
                continue
            m = TOOK_LINE.search(line)
            if m and label and cold is not None:
                rep, n, exp, first, last = m.groups()
                if int(first) <= int(last):
                    layout = (0 if int(last) < cold else 2 if int(first) >= cold else 1)
                    runs[label]["cl_%s_%s_r%d_layout" % (exp, n, int(rep) - 1)] = layout
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


PERF_HITS = [
    # key, label
    ("hit_perf_entry_event", "perf kprobe event, counting"),
    ("hit_perf_entry_bpf", "perf kprobe event + BPF program"),
]


def perf_hits(o, u, skips, out):
    """The hits_perf run's table (kprobe_clients --hit): a perf kprobe event
    at the entry of a module's C function, alone and with a BPF program."""
    oh, uh = o.get("hits_perf", {}), u.get("hits_perf", {})
    if not oh and not uh:
        return
    out("Hit cost at a function entry through a perf kprobe event (perf_event_open()")
    out("of the kprobe PMU on CPU 0, as libbpf does; the BPF program \"r0 = 0; exit\",")
    out("attached with PERF_EVENT_IOC_SET_BPF), instructions over an unprobed call")
    out("(median of 21 loops of 1,000 calls on CPU 0, interrupts off)")
    width = (0, 40)
    out("%-41s %9s %9s %8s" % ("", "ours", "upstream", "ratio"))
    for key, label in PERF_HITS:
        compare_row(out, "", width, label, oh.get(key), uh.get(key))
    compare_row(out, "", width, "(the unprobed call itself)", oh.get("hit_perf_entry_base"),
                uh.get("hit_perf_entry_base"))
    for name, sk in zip(("ours", "upstream"), skips):
        for exp, _, _, why in sk:
            if exp.startswith("hit_perf_entry"):
                out("%s: %s not measured: %s" % (name, exp, why))
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
    ("events_enable", "kprobe_events, enabled"),
    ("multi_entry", "kprobe_multi link, one"),
    ("perf_floor", "perf tracepoint, no kprobe"),
]
CLIENT_GPS = [("rcu", "rcu"), ("rcu_exp", "exp"), ("srcu_tp", "srcu"),
              ("tasks_trace", "tt"), ("tasks_rude", "rude")]
CLIENT_KEY = re.compile(r"^cl_(.+)_(\d+)_r(\d+)_(events|refused|layout|attach_ns|attach_tsc|"
                        r"attach_cntvct|detach_ns|detach_tsc|detach_cntvct|gp_\w+)$")
# The cycle counters: metric suffix, what the table's notes call it.
COUNTERS = [("tsc", "the TSC"), ("cntvct", "CNTVCT_EL0 (the generic timer's count)")]


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


def boots(runs, skips, paths):
    """Add the clients run of each console in @paths to @runs and @skips.

    runs, skips: parse() and parse_skips() of a kernel's main console;
    paths: consoles of further boots of the same kernel (missing ones
    are left out). Their repetitions are numbered after the ones before,
    so every figure is one more sample of the same measurement."""
    base = 1 + max([int(m.group(3)) for m in map(CLIENT_KEY.match, runs.get("clients", {}))
                    if m] or [-1])
    for boot, path in enumerate(paths, 2):
        try:
            more = parse(path)
            more_skips = parse_skips(path)
        except OSError:
            continue
        top = -1
        for key, value in more.get("clients", {}).items():
            m = CLIENT_KEY.match(key)
            if m:
                exp, n, rep, metric = m.groups()
                top = max(top, int(rep))
                runs.setdefault("clients", {})["cl_%s_%s_r%d_%s" % (
                    exp, n, base + int(rep), metric)] = value
        for exp, n, rep, reason in more_skips:
            # The first console says once what the runs left out.
            if reason.startswith("not selected"):
                continue
            skips.append((exp, n, "boot %d" % boot if rep == "all" else
                          "%d (boot %d)" % (int(rep) + 1, boot) if rep.isdigit() else rep,
                          reason))
        base += top + 1


def client_reps(runs):
    """{(exp, N): [{metric: value} per repetition with figures]}."""
    reps = {}
    for key, value in runs.get("clients", {}).items():
        m = CLIENT_KEY.match(key)
        if m:
            exp, n, rep, metric = m.groups()
            if metric.startswith("gp_"):
                # Consoles from before kprobe_clients' gp_delta(): RCU's
                # counters (without their state bits) wrap at 2^62.
                value &= (1 << 62) - 1
            reps.setdefault((exp, int(n)), {}).setdefault(int(rep), {})[metric] = value
    return {k: [v[r] for r in sorted(v)] for k, v in reps.items()}


def per_event(reps, metric):
    """Per-event values of @metric, one per repetition that has it."""
    return [r[metric] / r["events"] for r in reps if r.get("events") and metric in r]


def med(values):
    return statistics.median(values) if values else None


def attach_med(runs, exp, n):
    """The median attach time per event of @exp at @n, in ns, or None."""
    return med(per_event(runs.get((exp, n), []), "attach_ns"))


def rng(values):
    """The range of per-event ns values, in us: "min-max"."""
    return "%.0f-%.0f" % (min(values) / 1e3, max(values) / 1e3) if values else "-"


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
        mo = attach_med(o, "multi_entry", n)
        mu = attach_med(u, "multi_entry", n)
        for exp in ("perf_entry", "perf_entry_bpf", "perf_entry_link", "perf_kret",
                    "perf_kret_bpf", "events_remove", "events_enable"):
            ao = attach_med(o, exp, n)
            au = attach_med(u, exp, n)
            out("%-31s %9s %9s" % ("%s, %d" % (dict(CLIENT_EXPS)[exp], n),
                                   ratio(ao, mo), ratio(au, mu)))


def floor_table(o, u, out):
    """Attach per event less perf's own cost at the same N (perf_floor)."""
    sizes = sorted({n for e, n in list(o) + list(u) if e == "perf_floor"})
    if not sizes:
        return
    out("")
    out("Attach per event less perf's own at the same N (perf_floor: a perf event")
    out("on a tracepoint, no kprobe), medians, us: what the kprobe event costs")
    out("%-31s %9s %9s %8s" % ("experiment, N", "ours", "upstream", "ratio"))
    for n in sizes:
        fo = attach_med(o, "perf_floor", n)
        fu = attach_med(u, "perf_floor", n)
        out("%-31s %9s %9s" % ("(the floor), %d" % n, fmt(fo, 1e3), fmt(fu, 1e3)))
        for exp, label in CLIENT_EXPS:
            if not exp.startswith("perf_") or exp == "perf_floor":
                continue
            ao = attach_med(o, exp, n)
            au = attach_med(u, exp, n)
            if ao is None and au is None:
                continue
            do = None if ao is None or fo is None else ao - fo
            du = None if au is None or fu is None else au - fu
            out("%-31s %9s %9s %8s" % ("%s, %d" % (label, n), fmt(do, 1e3), fmt(du, 1e3),
                                       ratio(do, du)))


def layout_table(o, u, out):
    """Attach per event by the part of the function list measured."""
    rows = []
    for exp, label in CLIENT_EXPS:
        for n in sorted({k[1] for k in list(o) + list(u) if k[0] == exp}):
            for i, name in enumerate(LAYOUTS):
                vo = per_event([r for r in o.get((exp, n), []) if r.get("layout") == i],
                               "attach_ns")
                vu = per_event([r for r in u.get((exp, n), []) if r.get("layout") == i],
                               "attach_ns")
                if vo or vu:
                    rows.append(("%s, %d, %s" % (label, n, name), vo, vu))
    if len({r[0].rsplit(", ", 1)[0] for r in rows}) == len(rows):
        return      # one layout per experiment: the table above says it all
    out("")
    out("Attach per event by layout: cold, the functions of the cold subsystems")
    out("the list starts with; other, the rest of the list; mixed, both. Medians")
    out("and ranges, us (a layout's samples come from different boots)")
    out("%-40s %9s %9s %8s %14s %14s" % ("experiment, N, layout", "ours", "upstream", "ratio",
                                         "ours range", "upstream range"))
    for name, vo, vu in rows:
        out("%-40s %9s %9s %8s %14s %14s" % (name, fmt(med(vo), 1e3), fmt(med(vu), 1e3),
                                             ratio(med(vo), med(vu)), rng(vo), rng(vu)))


def counter_of(*reps):
    """The cycle counter the figures have: ("tsc", ...) unless only cntvct."""
    for name, what in COUNTERS:
        if any("attach_" + name in r for runs in reps for lst in runs.values() for r in lst):
            return name, what
    return COUNTERS[0]


def clients(ours, up, skips, out):
    """Events attached one at a time, then detached one at a time.

    ours, up: parse() of the two consoles; skips: parse_skips() of each."""
    o, u = client_reps(ours), client_reps(up)
    if not o and not u and not any(skips):
        return
    counter, counter_what = counter_of(o, u)
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
    out("real speed): the median of the repetitions, and their range; %s: the"
        % counter)
    out("ratio of the medians of %s." % counter_what
        if counter != "tsc" else "ratio of the TSC medians.")
    width = (31, 6)
    out("%-31s %-6s %9s %9s %8s %14s %14s %6s" % (
        "experiment, N", "phase", "ours", "upstream", "ratio", "ours range",
        "upstream range", counter))
    for exp, n in rows:
        ro, ru = o.get((exp, n), []), u.get((exp, n), [])
        for phase in ("detach", "attach"):
            vo, vu = per_event(ro, phase + "_ns"), per_event(ru, phase + "_ns")
            to = per_event(ro, "%s_%s" % (phase, counter))
            tu = per_event(ru, "%s_%s" % (phase, counter))
            line = []
            compare_row(line.append, "%s, %d" % (labels.get(exp, exp), n), width,
                        phase, med(vo), med(vu), 1e3)
            out("%s %14s %14s %6s" % (line[0], rng(vo), rng(vu), ratio(med(to), med(tu))))
    layout_table(o, u, out)
    multi_ratios(o, u, out)
    floor_table(o, u, out)
    out("")
    # Without kprobe_bench_gp.ko's counts, only the repetitions and refusals.
    gps = CLIENT_GPS if any(k.startswith("gp_") for runs in (o, u) for lst in runs.values()
                            for r in lst for k in r) else []
    if gps:
        out("Grace periods completed per detached event while detaching, median of the")
        out("repetitions (anyone's: other users' count too): rcu normal, exp expedited,")
        out("srcu tracepoint_srcu, tt Tasks Trace, rude Tasks Rude RCU; reps: the")
        out("repetitions with figures; ref: functions refused on the way (median)")
    else:
        out("No grace-period counts (no kprobe_bench_gp.ko). reps: the repetitions with")
        out("figures; ref: functions refused on the way (median)")
    cols = "".join("%6s" % short for _, short in gps) + " %4s %4s" % ("reps", "ref")
    out("%-31s %-*s %s" % ("", len(cols), "ours", "upstream"))
    out("%-31s%s %s" % ("experiment, N", cols, cols))
    for exp, n in rows:
        cells = []
        for reps in (o.get((exp, n), []), u.get((exp, n), [])):
            part = ""
            for flavour, _ in gps:
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
            # Left out of one boot, measured in another.
            if reason.startswith("not selected") and any(
                    k[0] == exp for k in (o if who == "ours" else u)):
                continue
            seen.setdefault((exp, n, reason), []).append(
                str(int(rep) + 1) if rep.isdigit() else rep)
        for (exp, n, reason), reps in seen.items():
            what = exp if n == "all" else "%s, N=%s, repetition%s %s" % (
                exp, n, "s" if len(reps) > 1 else "", ", ".join(reps))
            out("(%s: not measured: %s: %s)" % (who, what, reason))
