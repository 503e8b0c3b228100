#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cross-guest.sh ARCH [demo]: build the kernel of another architecture
# (arm64, riscv64, arm; arm64-kasan: arm64 with generic KASAN; arm64-bti:
# arm64 built with clang and BTI in the kernel; arm64-bti-kasan: both) with our
# kprobes core and the tree's arch code, boot it
# under QEMU (TCG, 2 vCPUs) and leave its console in
# .build/console-ARCH.log: /init (guest-progs/kprobes_selftests.c) loads
# both KUnit suites, runs the selftests that are not x86's and powers off.
# ktap-summary.py reads it. With "demo", the samples are shown at work
# instead (.build/console-demo-ARCH.log); with "build", the kernel,
# modules and initramfs are built and nothing is booted; with "run", what
# "build" made is booted, nothing is built (make test builds the next
# architecture meanwhile).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
arch=$1
mode=${2:-test}

mem=1G smp=2
case $arch in
arm64|arm64-kasan|arm64-bti|arm64-bti-kasan)
	karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image
	# QEMU's own pointer authentication algorithm: the architected
	# QARMA5, computed in software for every paciasp and autiasp, is
	# most of the guest's time. The kernel authenticates as with any.
	qemu=(qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on)
	console=ttyAMA0
	# PREEMPT_DYNAMIC, as distributions boot it for full preemption.
	cmdline="preempt=full"
	# Variants of the same guest: -bti built with clang (LLVM=1) and BTI
	# in the kernel (arm64-bti.config), -kasan with generic KASAN
	# (arm64-kasan.config).
	frags=("$t/arm64.config")
	case $arch in
	*-bti*)	frags+=("$t/arm64-bti.config"); export LLVM=1; kcc=clang ;;
	esac
	[[ $arch != *-kasan ]] || frags+=("$t/arm64-kasan.config")
	;;
arm)
	karch=arm cross=arm-linux-gnueabihf- image=arch/arm/boot/zImage
	qemu=(qemu-system-arm -machine virt -cpu cortex-a15)
	console=ttyAMA0 mem=512M	# all lowmem: no HIGHMEM needed
	# One vCPU: with two, TCG makes arm's broadcast TLB flushes of the
	# init memory freed at boot so slow that RCU-tasks grace periods
	# (which the optimizer waits for) took up to 130 s.
	smp=1
	;;
riscv64)
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image
	qemu=(qemu-system-riscv64 -machine virt
	      -bios /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.bin)
	console=ttyS0
	;;
*)
	echo "cross-guest: no guest for $arch (arm64[-bti][-kasan], riscv64, arm)" >&2
	exit 1
	;;
esac

obj=$build/obj-$arch
export ARCH=$karch CROSS_COMPILE=$cross
if [ "$mode" != run ]; then
	[ -n "${frags+set}" ] || frags=("$t/$arch.config")
	"$t/config.sh" "$build/src" "$obj" "$t/arch-common.config" "${frags[@]}"
	echo "  KERNEL  $arch (our core; arm64: our arch code too)"
	make -s -C "$build/src" O="$obj" CC="ccache ${kcc:-${cross}gcc}" -j"${JOBS:-$(( $(nproc) + 1 ))}" "${image##*/}" modules
	# The tree's own KUnit suite, as on x86-64 (upstream-kunit.sh), built for
	# this arch in a directory of its own.
	"$t/upstream-kunit.sh"
	uk=$build/upstream-kunit-$arch
	mkdir -p "$uk"
	rsync -c "$build/upstream-kunit/test_kprobes_upstream.c" "$build/upstream-kunit/Kbuild" "$uk/"
	make -s -C "$build/src" O="$obj" CC="ccache ${kcc:-${cross}gcc}" -j"${JOBS:-$(( $(nproc) + 1 ))}" M="$uk" modules
	# The selftests' modules (modules/kprobe_callee.c and kprobe_deferred.c,
	# the ones of modules/ that every architecture builds), likewise; on
	# arm64 also the storm's (its share of make storm, without the shell
	# clients).
	cm=$build/cross-modules-$arch
	mkdir -p "$cm"
	mods="kprobe_callee kprobe_deferred"
	[[ $karch != arm64 ]] || mods+=" kprobe_storm"
	for m in $mods; do rsync -c "$t/modules/$m.c" "$cm/"; done
	echo "obj-m += $(printf '%s.o ' $mods)" > "$cm/Kbuild.new"
	cmp -s "$cm/Kbuild.new" "$cm/Kbuild" 2>/dev/null && rm "$cm/Kbuild.new" || mv "$cm/Kbuild.new" "$cm/Kbuild"
	make -s -C "$build/src" O="$obj" CC="ccache ${kcc:-${cross}gcc}" -j"${JOBS:-$(( $(nproc) + 1 ))}" M="$cm" modules

	root=$build/initramfs-$arch
	rm -rf "$root"
	mkdir -p "$root"/{proc,sys,dev,lib/modules/kprobes}
	# /init: the selftests program, which as PID 1 loads the KUnit suites,
	# runs the selftests and powers off.
	"${cross}gcc" -static -O2 -Wall -pthread -o "$root/init" \
		"$t/guest-progs/kprobes_selftests.c" "$t/guest-progs/kprobe_pmu.c"
	cp "$obj"/samples/kprobes/*.ko "$obj/lib/test_kprobes.ko" "$uk/test_kprobes_upstream.ko" \
		"$obj/kernel/kprobes/kretprobe_kunit.ko" \
		$(ls "$obj"/arch/*/kernel/probes/kprobes_*_kunit.ko 2>/dev/null) \
		"$cm"/*.ko "$root/lib/modules/kprobes/"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$build/initramfs-$arch.cpio.gz"
fi
[ "$mode" = build ] && exit 0

if [ "$mode" = demo ]; then
	log=$build/console-demo-$arch.log append="kpdemo"
else
	log=$build/console-$arch.log append=""
fi
echo "  QEMU    $arch, console in ${log#$repo/}"
timeout --foreground -k 10 "${GUEST_TIMEOUT:-1200}" "${qemu[@]}" \
	-accel tcg,thread=single -smp "$smp" -m "$mem" -no-reboot -nographic \
	-kernel "$obj/$image" -initrd "$build/initramfs-$arch.cpio.gz" \
	-append "console=$console panic=-1 ${cmdline:-} $append${FILTER:+ kunit.filter_glob=$FILTER}" \
	-serial file:"$log" -monitor none </dev/null >/dev/null 2>&1 ||
	echo "cross-guest: QEMU ended with status $?" >> "$log"
