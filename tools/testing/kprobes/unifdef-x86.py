#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Read C on stdin, write it as if CONFIG_X86_64 were not set: every
# "#ifdef CONFIG_X86_64" block and every "#if defined(CONFIG_X86_64) &&
# ..." block loses its first branch and keeps its #else branch, without
# the directives. make-patches.sh uses it to split the KUnit suite into
# the cases every architecture runs and then the x86-64 ones.
import re
import sys

lines = sys.stdin.read().split('\n')
out = []
# One entry per open #if: None for a block passed through; for a block
# being taken out, 'drop' in its first branch and 'keep' after its #else.
stack = []


def dropping():
    return 'drop' in stack


for line in lines:
    d = line.strip()
    if d.startswith('#if'):
        x86 = (re.match(r'#ifdef\s+CONFIG_X86_64\b', d) or
               re.match(r'#if\s+defined\(CONFIG_X86_64\)\s*&&', d))
        if x86 and not dropping():
            stack.append('drop')
            continue
        stack.append(None)
    elif d.startswith('#else') or d.startswith('#elif'):
        if stack and stack[-1] is not None:
            if d.startswith('#elif'):
                sys.exit('unifdef-x86: #elif in an x86-64 block')
            stack[-1] = 'keep'
            continue
    elif d.startswith('#endif'):
        if stack.pop() is not None:
            continue
    if not dropping():
        out.append(line)
if stack:
    sys.exit('unifdef-x86: unbalanced #if')
# No runs of blank lines where blocks were taken out, and none left
# before a closing brace.
text = re.sub(r'\n{3,}', '\n\n', '\n'.join(out))
sys.stdout.write(re.sub(r'\n\n(\})', r'\n\1', text))
