#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-guest.sh [-a ARCH] [-k KERNEL] [-i INITRD] [-t SECONDS] [-c] [-s] LOG
#              [ARG...]
# The one QEMU launcher of the harness: boots KERNEL with INITRD under
# QEMU (TCG, single-threaded) for ARCH (x86_64, the default; arm64 and its
# variants arm64-kasan, arm64-bti, arm64-bti-kasan; riscv64; arm), with
# the console into LOG and the ARGs on the kernel command line after the
# console and panic=-1. Gives up after SECONDS (900). -c counts
# instructions (-icount shift=0: the virtual clock advances 1 ns per
# guest instruction, for the benches); -s is interactive: the console is
# the terminal too (make shell). KERNEL and INITRD default to make test's
# x86-64 ones. Why it stopped, when QEMU did not end by itself, goes to
# the end of LOG.
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
arch=x86_64 kernel='' initrd='' limit=900 icount='' interactive=''
while getopts a:k:i:t:cs opt; do
	case $opt in
	a) arch=$OPTARG ;;
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	t) limit=$OPTARG ;;
	c) icount=1 ;;
	s) interactive=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
log=$1
shift

mem=1G smp=2 cmdline=()
case $arch in
x86_64)
	qemu=(qemu-system-x86_64 -machine pc -cpu max)
	console=ttyS0
	: "${kernel:=$repo/.build/obj/arch/x86/boot/bzImage}"
	: "${initrd:=$repo/.build/initramfs.cpio.gz}"
	;;
arm64|arm64-*)
	# QEMU's own pointer authentication algorithm: the architected
	# QARMA5, computed in software for every paciasp and autiasp, is
	# most of the guest's time. The guest runs the same instructions
	# either way, so -c counts the same.
	qemu=(qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on)
	console=ttyAMA0
	# PREEMPT_DYNAMIC, as distributions boot it for full preemption.
	cmdline=(preempt=full)
	;;
riscv64)
	qemu=(qemu-system-riscv64 -machine virt
	      -bios /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.bin)
	console=ttyS0
	# With -icount, QEMU 7.2 never gets a riscv64 guest of two vCPUs
	# past the firmware (no kernel output, even with earlycon): one.
	[ -z "$icount" ] || smp=1
	;;
arm)
	qemu=(qemu-system-arm -machine virt -cpu cortex-a15)
	console=ttyAMA0 mem=512M	# all lowmem: no HIGHMEM needed
	# One vCPU: with two, TCG makes arm's broadcast TLB flushes of the
	# init memory freed at boot so slow that RCU-tasks grace periods
	# (which the optimizer waits for) took up to 130 s.
	smp=1
	;;
*)
	echo "run-guest: no guest for $arch (x86_64, arm64[-bti][-kasan], riscv64, arm)" >&2
	exit 2
	;;
esac
if [ -z "$kernel" ] || [ -z "$initrd" ]; then
	echo "run-guest: $arch needs -k KERNEL and -i INITRD" >&2
	exit 2
fi

# thread=single: with multi-threaded TCG, QEMU 7.2 can keep executing a
# stale translation of a byte that another vCPU changed with text_poke()
# (seen as a vCPU trapping on an int3 that memory no longer holds, in
# test_kretprobe_unregister_racing). Round-robin TCG still runs two
# vCPUs, interleaved, and does not have the problem; -icount needs it.
args=("${qemu[@]}" -accel tcg,thread=single -smp "$smp" -m "$mem"
      -no-reboot -nographic -kernel "$kernel" -initrd "$initrd"
      -append "console=$console panic=-1 ${cmdline[*]} $*")
[ -z "$icount" ] || args+=(-icount shift=0)

if [ -n "$interactive" ]; then
	"${args[@]}" -serial mon:stdio 2>&1 | tee "$log"
	exit 0
fi
timeout --foreground -k 10 "$limit" "${args[@]}" \
	-serial file:"$log" -monitor none </dev/null >/dev/null 2>&1
rc=$?
case $rc in
0) ;;
124) echo "run-guest: timed out after ${limit}s" >> "$log" ;;
*) echo "run-guest: QEMU ended with status $rc" >> "$log" ;;
esac
exit 0
