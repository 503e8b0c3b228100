#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-guest.sh MODE LOG [TIMEOUT]: boot the test kernel under QEMU (TCG,
# 2 vCPUs) with kptest=MODE, console to LOG (and to the terminal for
# MODE=shell). Gives up after TIMEOUT seconds (default 900).
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mode=$1 log=$2 limit=${3:-900}
kernel=${KERNEL:-$repo/.build/obj/arch/x86/boot/bzImage}
initrd=${INITRD:-$repo/.build/initramfs.cpio.gz}
# thread=single: with multi-threaded TCG, QEMU 7.2 can keep executing a
# stale translation of a byte that another vCPU changed with text_poke()
# (seen as a vCPU trapping on an int3 that memory no longer holds, in
# test_kretprobe_unregister_racing). Round-robin TCG still runs two
# vCPUs, interleaved, and does not have the problem.
args=(-machine pc -accel tcg,thread=single -cpu max -smp 2 -m 1G
      -no-reboot -nographic -kernel "$kernel" -initrd "$initrd"
      -append "console=ttyS0 panic=-1 kptest=$mode ${KPTEST_APPEND:-}")
args+=(${QEMU_EXTRA:-})
if [ "$mode" = shell ]; then
	exec qemu-system-x86_64 "${args[@]}" -serial mon:stdio 2>&1 | tee "$log"
fi
timeout --foreground -k 10 "$limit" qemu-system-x86_64 "${args[@]}" \
	-serial file:"$log" -monitor none </dev/null >/dev/null 2>&1
rc=$?
[ $rc = 124 ] && echo "run-guest: timed out after ${limit}s" >> "$log"
exit 0
