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
if perl "$src/scripts/kernel-doc" -none -Wall $(git ls-files 'kernel/*.[ch]' 'arch/*.c' 'include/*.h') 2>&1 |
	grep -E "warning|error"; then
	status=1
fi

echo "== W=1 and sparse"
objs="kernel/kprobes/ arch/x86/kernel/kprobes/"
log=$(make -s -C "$src" O="$obj" CC="ccache gcc" W=1 C=2 $objs 2>&1 |
	grep -E "warning|error" | grep -E "kprobes" )
if [ -n "$log" ]; then
	echo "$log"
	status=1
fi

# The core on arm64 too (the tree's arm64 kprobes code on it), in the
# arm64 guest's build directory when make test has made one.
if [ -f "$repo/.build/obj-arm64/.config" ]; then
	echo "== W=1 and sparse, arm64"
	log=$(make -s -C "$src" O="$repo/.build/obj-arm64" ARCH=arm64 \
		CROSS_COMPILE=aarch64-linux-gnu- CC="ccache aarch64-linux-gnu-gcc" \
		W=1 C=2 kernel/kprobes/ 2>&1 | grep -E "warning|error" | grep -E "kprobes")
	if [ -n "$log" ]; then
		echo "$log"
		status=1
	fi
fi
exit $status
