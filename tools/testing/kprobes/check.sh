#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Static checks of our C files: checkpatch --strict, kernel-doc, and a
# rebuild of our objects with W=1 and sparse (C=2). Prints what they say;
# exits non-zero on a compiler or sparse warning or a kernel-doc error.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
src=$repo/.build/src
obj=$repo/.build/obj
cd "$repo"
files=$(git ls-files 'kernel/*.c' 'include/*.h' 'arch/*.[ch]' 'samples/*.c' 'lib/*.c')
status=0

echo "== checkpatch --strict"
perl "$src/scripts/checkpatch.pl" --no-tree --strict --terse -f $files |
	grep -v "^total:" || true

echo "== kernel-doc"
if perl "$src/scripts/kernel-doc" -none -Wall $(git ls-files 'kernel/*.c' 'arch/*.c' 'include/*.h') 2>&1 |
	grep -E "warning|error"; then
	status=1
fi

echo "== W=1 and sparse"
objs="kernel/kprobes.o arch/x86/kernel/kprobes/core.o arch/x86/kernel/kprobes/funcmap.o
	arch/x86/kernel/kprobes/opt.o arch/x86/kernel/kprobes/ftrace.o"
log=$(make -s -C "$src" O="$obj" CC="ccache gcc" W=1 C=2 $objs 2>&1 |
	grep -E "warning|error" | grep -E "kprobes" )
if [ -n "$log" ]; then
	echo "$log"
	status=1
fi
exit $status
