#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""coverage-report.py OURS.log UPSTREAM.log

Read the "COV <function> <symbol+offset> opt|ftrace|trap [<rule>]" lines
guest/coverage printed on each kernel's console and print, per function
and in all, how many probe-able instruction boundaries that are not
ftrace's site end [OPTIMIZED] on each kernel, then why ours left the
others as traps (the query file's rule), as a histogram.
"""
import collections
import re
import sys


def parse(path):
    """{function: {place: (verdict, rule)}}, and the functions' sizes."""
    probes = collections.OrderedDict()
    sizes = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"COV-FUNC (\S+) (\d+)", line)
            if m:
                sizes[m.group(1)] = int(m.group(2))
                probes.setdefault(m.group(1), {})
                continue
            m = re.search(r"COV (\S+) (\S+) (opt|ftrace|trap) ?(.*)$", line)
            if m:
                fn, where, verdict, rule = m.groups()
                # +0 and +4 are one place under IBT: kept once.
                probes.setdefault(fn, {})[where] = (verdict, rule.strip())
    return probes, sizes


def counts(places):
    body = [v for v, _ in places.values() if v != "ftrace"]
    return sum(1 for v in body if v == "opt"), len(body)


def share(opt, total):
    return "%.3f" % (opt / total) if total else "-"


def main():
    ours, sizes = parse(sys.argv[1])
    up, _ = parse(sys.argv[2])
    if not ours:
        print("Optimization coverage: no COV lines on our console")
        return
    print("Optimization coverage: every instruction boundary of each function,")
    print("probed through kprobe_events, none inside another's jump; the share of")
    print("probe-able offsets other than ftrace's site that end [OPTIMIZED]")
    print("%-26s %6s %8s %8s %7s %8s %7s" %
          ("function", "bytes", "probes", "ours", "share", "upstream", "share"))
    to = tt = uo = ut = 0
    for fn in ours:
        o, t = counts(ours[fn])
        u, v = counts(up.get(fn, {}))
        to, tt, uo, ut = to + o, tt + t, uo + u, ut + v
        print("%-26s %6s %8d %8d %7s %8d %7s" %
              (fn, sizes.get(fn, "-"), t, o, share(o, t), u, share(u, v)))
    print("%-26s %6s %8d %8d %7s %8d %7s" %
          ("all", "", tt, to, share(to, tt), uo, share(uo, ut)))
    print("")
    rules = collections.Counter(rule or "(no rule given)"
                                for places in ours.values()
                                for v, rule in places.values() if v == "trap")
    print("Why ours left the others as traps (the query file's rule):")
    for rule, n in rules.most_common():
        print("%6d  %s" % (n, rule))
    print("")


if __name__ == "__main__":
    main()
