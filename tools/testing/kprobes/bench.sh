#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: make bench. Builds two kernels from the same fragments (our
# kprobes, and the pristine tree with its own), boots each under QEMU with
# -icount shift=0 running guest/bench, and writes the comparison to
# out/bench.txt and out/bench.png.
#
# Sizes (override from the environment): BENCH_ATTACH (batched
# register_kprobes() sizes), BENCH_SINGLE (one register_kprobe() at a
# time), BENCH_SCALE (probes registered beside the measured one),
# BENCH_BIG (probes on consecutive instructions of one large function),
# BENCH_ENTRIES (probes at the entries of distinct functions), BENCH_KRET
# (kretprobes there).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
out=$repo/out
: "${BENCH_ATTACH:=1,100,1000,10000}"
: "${BENCH_SINGLE:=1,100,1000}"
: "${BENCH_SCALE:=1,1000,10000,100000}"
: "${BENCH_BIG:=1000,10000}"
: "${BENCH_ENTRIES:=1000,10000}"
: "${BENCH_KRET:=1000}"
mkdir -p "$out"

for which in ours upstream; do
	"$t/bench-build.sh" "$which"
	"$t/make-initramfs.sh" --bench "$which"
done

for which in ours upstream; do
	echo "  QEMU    bench, $which kprobes (-icount shift=0), console in .build/console-bench-$which.log"
	KERNEL=$build/obj-bench-$which/arch/x86/boot/bzImage \
	INITRD=$build/initramfs-bench-$which.cpio.gz \
	QEMU_EXTRA="-icount shift=0" \
	KPTEST_APPEND="kpbench_attach=$BENCH_ATTACH kpbench_single=$BENCH_SINGLE kpbench_scale=$BENCH_SCALE kpbench_big=$BENCH_BIG kpbench_entries=$BENCH_ENTRIES kpbench_kret=$BENCH_KRET" \
		"$t/run-guest.sh" bench "$build/console-bench-$which.log" 5400
done

python3 "$t/bench-report.py" "$build/console-bench-ours.log" \
	"$build/console-bench-upstream.log" "$(cat "$build/upstream-version")" "$out"
