#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Static checks of our C files: checkpatch --strict, kernel-doc, a
# rebuild of our objects with W=1 and sparse (C=2), the global names our
# objects define, the harness's pipes, the layers of kernel/kprobes/
# (check-layers.py) and the README's lists of files and patches
# (check-readme.py). Prints what they say; exits non-zero on a compiler
# or sparse warning, a kernel-doc error, a global name without the
# prefix or defined elsewhere in the tree, a pipe that can die of
# SIGPIPE, a call up between the core's files that is not listed, or a
# README list that differs from the tree.
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
# The core and our riscv code, in the riscv64 guest's build directory.
if [ -f "$repo/.build/obj-riscv64/.config" ]; then
	echo "== W=1 and sparse, riscv64"
	log=$(make -s -C "$src" O="$repo/.build/obj-riscv64" ARCH=riscv \
		CROSS_COMPILE=riscv64-linux-gnu- CC="ccache riscv64-linux-gnu-gcc" \
		W=1 C=2 kernel/kprobes/ arch/riscv/kernel/probes/ 2>&1 |
		grep -E "warning|error" |
		grep -E "kprobes/|probes/(breakpoint|arming|liveness|emulate|optimize|optprobe|ftrace_entry|ftrace_stub|kunit_)")
	if [ -n "$log" ]; then
		echo "$log"
		status=1
	fi
fi
# Every global name our objects define carries the subsystem's prefix
# and is defined nowhere else in the tree (a clash breaks the link of
# kernels we do not build: drivers/counter's counter_alloc(), once).
echo "== global names"
builds=""
for b in obj obj-alt obj-arm64 obj-riscv64 obj-arm; do
	[ -f "$repo/.build/$b/.config" ] && builds="$builds $repo/.build/$b"
done
if ! python3 "$repo/tools/testing/kprobes/check-names.py" "$src" \
	"$repo/tools/testing/kprobes/owned-files" $builds; then
	status=1
fi

# Pipes that die of SIGPIPE now and then under pipefail.
echo "== harness pipes"
if ! python3 "$repo/tools/testing/kprobes/lint-pipes.py" \
	$(git ls-files 'tools/testing/kprobes/*.sh' .ci/run); then
	status=1
fi

# The core's files call only down, but for the exceptions listed there.
echo "== layers of kernel/kprobes/"
if ! python3 "$repo/tools/testing/kprobes/check-layers.py" "$repo/kernel/kprobes"; then
	status=1
fi

# The README's lists of our files and patches, against the tree.
echo "== README"
if ! python3 "$repo/tools/testing/kprobes/check-readme.py" "$repo"; then
	status=1
fi
exit $status
