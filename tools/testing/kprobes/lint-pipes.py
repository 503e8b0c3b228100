#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Find pipes that fail at random under 'set -o pipefail'.

A reader that stops before its input ends (grep -q, grep -m, head) makes
the writer die of SIGPIPE when the writer has more to write; with
pipefail the whole pipe then fails, or, after '&&', the branch is
silently not taken. Whether the writer had more to write depends on how
its output was split into writes, which depends on the machine's load:
the failure comes and goes. Such readers must read all of their input
(grep >/dev/null, sed -n 1p).

Usage: lint-pipes.py FILE...  Prints each offending pipe, exits 1 if any.
"""
import re
import sys

# A reader that may stop early, right after a '|' (not '||').
EARLY_READER = re.compile(
    r'(?<!\|)\|(?!\|)\s*(?:(?:grep|egrep|fgrep)\s+(?:-\S*\s+)*-[a-zA-Z]*[qm]|head\b)')


def logical_lines(text):
    """Lines with continuations (a trailing '\\' or '|') joined."""
    buf, start = '', None
    for number, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = number
        stripped = line.rstrip()
        if stripped.endswith('\\'):
            buf += stripped[:-1] + ' '
            continue
        if stripped.endswith('|') and not stripped.endswith('||'):
            buf += stripped + ' '
            continue
        yield start, buf + line
        buf, start = '', None
    if buf:
        yield start, buf


def main(paths):
    bad = 0
    for path in paths:
        text = open(path, encoding='utf-8', errors='replace').read()
        if 'pipefail' not in text:
            continue
        for number, line in logical_lines(text):
            code = line.split('#', 1)[0] if line.lstrip().startswith('#') else line
            if EARLY_READER.search(code):
                print(f'{path}:{number}: a reader that stops early, under pipefail: '
                      f'{line.strip()}')
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
