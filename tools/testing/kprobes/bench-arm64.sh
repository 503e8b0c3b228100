#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-arm64.sh [kernels|modules|boot|report|all]: make bench-arm64, and
# with BENCH_ARCH=riscv64 make bench-riscv64. Our kprobes against the
# tree's on ARCH (BENCH_ARCH, arm64 by default), each built from the ARCH
# guest's fragments (arch-common.config, ARCH.config) plus
# bench-ARCH.config, each booted once (run-guest.sh -a ARCH -c: -icount
# shift=0) with an initramfs (make-initramfs.sh --bench-ARCH) whose /init
# (bench-arm64/init.c) loads bench-arm64/kprobe_bench_arch.ko, which
# prints "KPB..." lines on the console, then runs the clients
# (guest-progs/kprobe_clients.c, as make bench does on x86-64), with
# bench/kprobe_bench_gp.ko for its grace-period counts; then
# bench-arm64-report.py writes out/bench-ARCH.txt.
#
#   kernels  build the two kernels (.build/obj-bench-ARCH-ours, -upstream)
#   modules  build the module against each, and the initramfs
#   boot     boot each: .build/console-bench-ARCH-{ours,upstream}.log
#   report   only the report, from the last consoles
#   all      (the default) all of the above
#
# Environment: BENCH_ARM64_KERNELS ("ours upstream"), BENCH_ARM64_SRC (the
# source of "ours"; default .build/src, made by prepare-tree.sh first),
# BENCH_ARM64_ARGS (module parameters, e.g. "reps=7 sizes=1,100,1000"),
# BENCH_ARM64_CLIENTS (the clients' numbers of events, "100,1000"; empty:
# no clients run), BENCH_ARM64_CLIENTS_REPS (their repetitions, 1),
# BENCH_ARM64_CLIENTS_BUDGET (seconds, virtual: a repetition after the
# first starts only if it should end within them, 1500),
# BENCH_ARM64_CLIENTS_ONLY (the experiments the first boot's clients run,
# as make bench's BENCH_CLIENTS_ONLY; empty: all), BENCH_ARM64_CLIENTS_BOOTS
# (further boots of each kernel that run the clients alone, one word per
# boot: the experiments it runs, @K to start at the K-th candidate; the
# tables take every boot's figures, as make bench's BENCH_CLIENTS_BOOTS),
# BENCH_ARM64_TIMEOUT (seconds per guest, 3600), JOBS (2).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
out=$repo/out
: "${BENCH_ARM64_KERNELS:=ours upstream}"
: "${BENCH_ARM64_SRC:=}"
: "${BENCH_ARM64_ARGS:=}"
: "${BENCH_ARM64_CLIENTS=100,1000}"
: "${BENCH_ARM64_CLIENTS_REPS:=1}"
: "${BENCH_ARM64_CLIENTS_BUDGET:=1500}"
: "${BENCH_ARM64_CLIENTS_ONLY:=}"
: "${BENCH_ARM64_CLIENTS_BOOTS:=}"
: "${BENCH_ARM64_TIMEOUT:=3600}"
jobs=${JOBS:-2}
mode=${1:-all}
arch=${BENCH_ARCH:-arm64}
case $arch in
arm64)   export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ;;
riscv64) export ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- ;;
*) echo "bench-arm64: no bench for $arch (arm64, riscv64)" >&2; exit 2 ;;
esac
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/kprobes-ccache}
cc="ccache ${CROSS_COMPILE}gcc"

src_of() {
	case $1 in
	ours)     echo "${BENCH_ARM64_SRC:-$build/src}" ;;
	upstream) echo "$build/linux-source-6.12" ;;
	*)        echo "bench-arm64: no kernel '$1' (ours, upstream)" >&2; exit 2 ;;
	esac
}

kmake() {
	local which=$1
	shift
	nice -n 19 make -s -C "$(src_of "$which")" O="$build/obj-bench-$arch-$which" \
		CC="$cc" -j"$jobs" "$@"
}

kernels() {
	local which
	if [[ " $BENCH_ARM64_KERNELS " = *" ours "* ]] && [ -z "$BENCH_ARM64_SRC" ]; then
		"$t/prepare-tree.sh"
	fi
	for which in $BENCH_ARM64_KERNELS; do
		# bench-ARCH-KERNEL.config, where there is one: what one
		# kernel needs apart (the tree's riscv64: no function tracer).
		local only=()
		[ -f "$t/bench-$arch-$which.config" ] && only=("$t/bench-$arch-$which.config")
		"$t/config.sh" "$(src_of "$which")" "$build/obj-bench-$arch-$which" \
			"$t/arch-common.config" "$t/$arch.config" "$t/bench-$arch.config" \
			"${only[@]}"
		echo "  KERNEL  bench-$arch, $which kprobes"
		kmake "$which" Image modules
	done
}

modules() {
	local which mod ours
	for which in $BENCH_ARM64_KERNELS; do
		mod=$build/bench-$arch-mod-$which
		mkdir -p "$mod"
		# kprobe_bench_gp.ko: make bench's, for the clients' grace periods.
		rsync -c "$t"/bench-arm64/kprobe_bench_*.[chS] "$t/bench-arm64/Kbuild" \
			"$t/bench/kprobe_bench_gp.c" "$mod/"
		# Only ours has the breakpoint and text synchronisation
		# counters, and only with KPROBES_SANITY_TEST.
		ours=n counters=n
		[ "$which" = ours ] && ours=y
		[ "$which" = ours ] &&
			grep -q '^CONFIG_KPROBES_SANITY_TEST=[ym]' "$build/obj-bench-$arch-$which/.config" &&
			counters=y
		echo "  MODULE  bench-$arch, $which kprobes"
		kmake "$which" M="$mod" KPB_OURS="$ours" KPB_COUNTERS="$counters" modules
		# /init is bench-arm64/init.c, /bin/kprobe_clients make bench's.
		"$t/make-initramfs.sh" --bench-$arch "$which"
	done
}

# qemu_boot WHICH LOG APPEND: one guest, its console into LOG; -icount
# needs single-threaded TCG: the two vCPUs run in turn and the virtual
# clock advances 1 ns per instruction of either.
qemu_boot() {
	"$t/run-guest.sh" -a "$arch" -c -t "$BENCH_ARM64_TIMEOUT" \
		-k "$build/obj-bench-$arch-$1/arch/$ARCH/boot/Image" \
		-i "$build/initramfs-bench-$arch-$1.cpio.gz" "$2" "$3"
}

# clients_args EXPS[@K]: the clients' boot options (make bench's).
clients_args() {
	local only=${1%@*} from=
	[[ $1 = *@* ]] && from=${1#*@}
	echo "kpb_clients=$BENCH_ARM64_CLIENTS kpb_clients_reps=$BENCH_ARM64_CLIENTS_REPS kpb_clients_budget=$BENCH_ARM64_CLIENTS_BUDGET${only:+ kpb_clients_only=$only}${from:+ kpb_clients_from=$from}"
}

boot() {
	local which log append only k
	for which in $BENCH_ARM64_KERNELS; do
		log=$build/console-bench-$arch-$which.log
		append=
		[ -n "$BENCH_ARM64_ARGS" ] && append="kpb_args=\"$BENCH_ARM64_ARGS\""
		[ -n "$BENCH_ARM64_CLIENTS" ] &&
			append="$append $(clients_args "$BENCH_ARM64_CLIENTS_ONLY")"
		echo "  QEMU    bench-$arch, $which kprobes (-icount shift=0), console in ${log#$repo/}"
		qemu_boot "$which" "$log" "$append"
		[ -n "$BENCH_ARM64_CLIENTS" ] || continue
		k=1
		for only in $BENCH_ARM64_CLIENTS_BOOTS; do
			k=$((k + 1))
			log=$build/console-bench-$arch-$which-boot$k.log
			echo "  QEMU    bench-$arch clients ($only), $which kprobes, boot $k, console in ${log#$repo/}"
			qemu_boot "$which" "$log" \
				"kpb_clients_alone=1 $(clients_args "$only")"
		done
	done
}

report() {
	local more=() k=1 only
	for only in $BENCH_ARM64_CLIENTS_BOOTS; do
		k=$((k + 1))
		more+=("$build/console-bench-$arch-ours-boot$k.log"
		       "$build/console-bench-$arch-upstream-boot$k.log")
	done
	mkdir -p "$out"
	BENCH_ARCH=$arch python3 "$t/bench-arm64-report.py" \
		"$build/console-bench-$arch-ours.log" "$build/console-bench-$arch-upstream.log" \
		"$(cat "$build/upstream-version" 2>/dev/null || echo '?')" "${more[@]}" \
		> "$out/bench-$arch.txt"
	cat "$out/bench-$arch.txt"
}

case $mode in
kernels|modules|boot|report) "$mode" ;;
all) kernels; modules; boot; report ;;
*) echo "usage: $0 [kernels|modules|boot|report|all]" >&2; exit 2 ;;
esac
