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
# time), BENCH_CONC (probes per thread, four threads, registered and
# unregistered one at a time at once), BENCH_SCALE (probes registered
# beside the measured one),
# BENCH_BIG (probes on consecutive instructions of one large function),
# BENCH_ENTRIES (probes at the entries of distinct functions), BENCH_KRET
# (kretprobes there), BENCH_PENDING (ours only: releases left pending
# while 100 probes are registered one at a time), BENCH_COVERAGE (the functions guest/coverage probes
# at every instruction boundary; empty to skip), BENCH_CLIENTS (numbers
# of events guest-progs/kprobe_clients.c attaches and detaches one at a
# time, as bpftrace, perf, pwru and Tetragon do, through the perf kprobe
# PMU and kprobe_events, on as many functions; empty to skip),
# BENCH_CLIENTS_REPS (its repetitions of each measurement),
# BENCH_CLIENTS_ONLY (the experiments to run, comma-separated: e.g.
# perf_entry,perf_kret,events_enable,multi_entry; empty for all),
# BENCH_CLIENTS_BUDGET (seconds, virtual: a repetition after the first
# starts only if it should end within them), BENCH_CLIENTS_BOOTS (further
# boots of each kernel that run the clients alone, on functions no run
# touched in that boot, so that a size too big for one boot's supply of
# fresh functions still gets several samples: one word per boot, the
# experiments it runs, as in BENCH_CLIENTS_ONLY, and optionally @K to
# start at the K-th candidate function, another layout (kprobe_clients
# --from); the tables take the medians and ranges over every boot),
# BENCH_KERNELS (which
# kernels to build and boot: "ours upstream"; the report reads the last
# console log of one not booted).
#
# bench.sh coverage: only the coverage run (make coverage), into
# out/coverage.txt.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
out=$repo/out
: "${BENCH_ATTACH:=1,100,1000,10000}"
: "${BENCH_SINGLE:=1,100,1000}"
: "${BENCH_CONC:=25}"
: "${BENCH_SCALE:=1,1000,10000,100000}"
: "${BENCH_BIG:=1000,10000}"
: "${BENCH_ENTRIES:=1000,10000}"
: "${BENCH_KRET:=1000}"
: "${BENCH_PENDING:=0,1000,10000}"
# Ordinary functions of several subsystems, each one symbol of its name.
: "${BENCH_COVERAGE=vfs_read,vfs_write,do_sys_openat2,pipe_read,do_dentry_open,dput,__fput,kernel_clone,wake_up_new_task,try_to_wake_up,do_group_exit,alloc_pid,handle_mm_fault,do_mmap,__kmalloc_noprof,kmem_cache_alloc_noprof,__alloc_pages_noprof,free_pgtables,__split_vma,__queue_work,process_one_work,do_send_sig_info,hrtimer_start_range_ns,do_sys_poll}"
: "${BENCH_CLIENTS=100,1000}"
: "${BENCH_CLIENTS_REPS:=3}"
: "${BENCH_CLIENTS_BUDGET:=1500}"
: "${BENCH_CLIENTS_ONLY:=}"
: "${BENCH_CLIENTS_BOOTS:=}"
: "${BENCH_KERNELS:=ours upstream}"
mode=${1:-bench}
mkdir -p "$out"

for which in $BENCH_KERNELS; do
	"$t/bench-build.sh" "$which"
	"$t/make-initramfs.sh" --bench "$which"
done

if [ "$mode" = coverage ]; then
	for which in $BENCH_KERNELS; do
		echo "  QEMU    coverage, $which kprobes, console in .build/console-coverage-$which.log"
		"$t/run-guest.sh" -t 3600 -k "$build/obj-bench-$which/arch/x86/boot/bzImage" \
			-i "$build/initramfs-bench-$which.cpio.gz" \
			"$build/console-coverage-$which.log" kptest=coverage "kpcov_fns=$BENCH_COVERAGE"
	done
	python3 "$t/coverage-report.py" "$build/console-coverage-ours.log" \
		"$build/console-coverage-upstream.log" | tee "$out/coverage.txt"
	exit 0
fi

# clients_args EXPS[@K]: the clients' boot options, for experiments EXPS
# (all when empty) from candidate K on (kprobe_clients --only, --from).
clients_args() {
	local only=${1%@*} from=
	[[ $1 = *@* ]] && from=${1#*@}
	echo "kpbench_clients=$BENCH_CLIENTS kpbench_clients_reps=$BENCH_CLIENTS_REPS kpbench_clients_budget=$BENCH_CLIENTS_BUDGET${only:+ kpbench_clients_only=$only}${from:+ kpbench_clients_from=$from}"
}

# bench_guest WHICH LOG APPEND: boot WHICH's bench kernel, console into LOG.
bench_guest() {
	"$t/run-guest.sh" -c -t 5400 -k "$build/obj-bench-$1/arch/x86/boot/bzImage" \
		-i "$build/initramfs-bench-$1.cpio.gz" "$2" kptest=bench "$3"
}

for which in $BENCH_KERNELS; do
	pending=
	[ "$which" = ours ] && [ -n "$BENCH_PENDING" ] && pending=" kpbench_pending=$BENCH_PENDING"
	echo "  QEMU    bench, $which kprobes (-icount shift=0), console in .build/console-bench-$which.log"
	bench_guest "$which" "$build/console-bench-$which.log" \
		"kpbench_attach=$BENCH_ATTACH kpbench_single=$BENCH_SINGLE kpbench_conc=$BENCH_CONC kpbench_scale=$BENCH_SCALE kpbench_big=$BENCH_BIG kpbench_entries=$BENCH_ENTRIES kpbench_kret=$BENCH_KRET$pending${BENCH_COVERAGE:+ kpcov_fns=$BENCH_COVERAGE}${BENCH_CLIENTS:+ $(clients_args "$BENCH_CLIENTS_ONLY")}"
	k=1
	for only in $BENCH_CLIENTS_BOOTS; do
		k=$((k + 1))
		log=$build/console-bench-$which-boot$k.log
		echo "  QEMU    bench clients ($only), $which kprobes, boot $k, console in ${log#$repo/}"
		bench_guest "$which" "$log" "kpbench_clients_alone $(clients_args "$only")"
	done
done
extra=()
k=1
for only in $BENCH_CLIENTS_BOOTS; do
	k=$((k + 1))
	extra+=("$build/console-bench-ours-boot$k.log" "$build/console-bench-upstream-boot$k.log")
done

python3 "$t/bench-report.py" "$build/console-bench-ours.log" \
	"$build/console-bench-upstream.log" "$(cat "$build/upstream-version")" "$out" \
	"${extra[@]}"
if [ -n "$BENCH_COVERAGE" ]; then
	python3 "$t/coverage-report.py" "$build/console-bench-ours.log" \
		"$build/console-bench-upstream.log" | tee -a "$out/bench.txt"
fi
