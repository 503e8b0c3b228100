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

case $arch in
arm64|arm64-kasan|arm64-bti|arm64-bti-kasan)
	karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image
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
	;;
riscv64)
	karch=riscv cross=riscv64-linux-gnu- image=arch/riscv/boot/Image
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
	# arm64 and riscv64 also the storm's (its share of make storm, without
	# the shell clients).
	cm=$build/cross-modules-$arch
	mkdir -p "$cm"
	mods="kprobe_callee kprobe_deferred"
	[[ $karch != arm64 && $arch != riscv64 ]] || mods+=" kprobe_storm"
	for m in $mods; do rsync -c "$t/modules/$m.c" "$cm/"; done
	echo "obj-m += $(printf '%s.o ' $mods)" > "$cm/Kbuild.new"
	cmp -s "$cm/Kbuild.new" "$cm/Kbuild" 2>/dev/null && rm "$cm/Kbuild.new" || mv "$cm/Kbuild.new" "$cm/Kbuild"
	make -s -C "$build/src" O="$obj" CC="ccache ${kcc:-${cross}gcc}" -j"${JOBS:-$(( $(nproc) + 1 ))}" M="$cm" modules

	# /init: the selftests program, which as PID 1 loads the KUnit suites,
	# runs the selftests and powers off.
	"$t/make-initramfs.sh" --cross "$arch"
fi
[ "$mode" = build ] && exit 0

if [ "$mode" = demo ]; then
	log=$build/console-demo-$arch.log append="kpdemo"
else
	log=$build/console-$arch.log append=""
fi
echo "  QEMU    $arch, console in ${log#$repo/}"
"$t/run-guest.sh" -a "$arch" -k "$obj/$image" -i "$build/initramfs-$arch.cpio.gz" \
	-t "${GUEST_TIMEOUT:-1200}" "$log" $append${FILTER:+ kunit.filter_glob=$FILTER}
