#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize guest console logs: print every leaf test result found in
their KTAP output (KUnit suites and the guest selftests), flag kernel
warnings, and end with 'N passed, N failed'. Exit 1 on any failure, on
a bad console, on no tests at all, or when a guest never finished.

usage: ktap-summary.py LOG[:LABEL] ..."""

import re
import sys

RESULT = re.compile(r'^(\s*)(not ok|ok) (\d+)\s*-?\s*([^#]*?)\s*(#\s*(\w+).*)?$')
SUBTEST = re.compile(r'^(\s*)# Subtest: (\S+)')
PRINTK_TIME = re.compile(r'^\[\s*\d+\.\d+\]\s?')
BAD = re.compile(r'(Oops|BUG:|WARNING:|kernel BUG|general protection fault|'
                 r'Kernel panic|possible recursive locking|possible circular '
                 r'locking|inconsistent lock state|suspicious RCU usage|'
                 r'INFO: task .* blocked|rcu_sched self-detected stall|'
                 r'rcu: INFO|UBSAN:|Call Trace:|DEBUG_LOCKS_WARN_ON|soft lockup|hard LOCKUP|'
                 r'W\+X mappings: FAILED|KASAN:|suspected memory leak)')
DONE = 'KPROBES-GUEST-DONE'


# What went wrong, printed again just before the totals, so that the
# last lines of a run (all a CI report may keep) say what failed.
PROBLEMS = []


def summarize(path, label):
    """Print one log's results; return (passed, failed, skipped, ok)."""
    lines = [PRINTK_TIME.sub('', l.rstrip('\r\n').replace('\r', ''))
             for l in open(path, errors='replace')]
    passed = failed = skipped = 0
    last_indent = -1
    subtest = {}
    bad = []
    for line in lines:
        if BAD.search(line):
            bad.append(line)
        m = SUBTEST.match(line)
        if m:
            subtest[len(m.group(1))] = m.group(2)
            continue
        m = RESULT.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        leaf = last_indent <= indent
        last_indent = indent
        if not leaf:
            continue
        name = m.group(4)
        prefix = subtest.get(indent)
        full = f'{prefix}.{name}' if prefix else name
        if label:
            full = f'{label}: {full}'
        directive = (m.group(6) or '').upper()
        if directive == 'SKIP':
            skipped += 1
            print(f'SKIP  {full}')
        elif m.group(2) == 'ok':
            passed += 1
            print(f'PASS  {full}')
        else:
            failed += 1
            print(f'FAIL  {full}')
            PROBLEMS.append(f'FAIL  {full}')
    ok = True
    if bad:
        ok = False
        print(f'\n{path}: the guest console shows kernel warnings:')
        for line in bad[:40]:
            print('  ' + line)
        PROBLEMS.append(f'{path}: kernel warnings, the first: {bad[0].strip()}')
    if not any(DONE in l for l in lines):
        ok = False
        print(f'\n{path}: the guest did not finish (no {DONE}): crash or hang.')
        PROBLEMS.append(f'{path}: the guest did not finish')
    if passed + failed == 0:
        ok = False
        print(f'\n{path}: no test results found.')
        PROBLEMS.append(f'{path}: no test results')
    if not ok or failed:
        print(f'Console log: {path}\n')
    return passed, failed, skipped, ok


def main(args):
    passed = failed = skipped = 0
    for arg in args:
        path, _, label = arg.partition(':')
        p, f, s, ok = summarize(path, label)
        passed += p
        skipped += s
        # A bad console counts as one more failure.
        failed += f + (0 if ok else 1)
    if skipped:
        print(f'({skipped} skipped, counted as neither passed nor failed)')
    if PROBLEMS:
        print('What failed:')
        for line in PROBLEMS:
            print('  ' + line)
    print(f'{passed} passed, {failed} failed')
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
