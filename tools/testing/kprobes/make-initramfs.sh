#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make-initramfs.sh [FLAVOUR]: the one initramfs packer of the harness.
# Each flavour names its contents; packing them is the same for all, and
# an image is rewritten only when one of its inputs changed.
#
#   (none)               x86-64 make test (.build/initramfs.cpio.gz):
#                        static busybox, the guest scripts (guest/, /init
#                        among them), the guest programs, the test and
#                        sample modules, the tree's ftrace selftests
#   --bare               the same without modules, for kernels without
#   --bench WHICH        make bench's, for WHICH (ours, upstream) kprobes
#   --cross ARCH         make test on another architecture (arm64[-...],
#                        riscv64, arm): /init is kprobes_selftests, built
#                        static for ARCH, with the modules of
#                        .build/obj-ARCH and cross-guest.sh's
#   --bench-arm64 WHICH  make bench-arm64's, for WHICH kprobes
#   --bench-riscv64 WHICH  make bench-riscv64's
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
flavour=${1:-}
which=${2:-}

# What goes in: busybox (with the guest scripts) or not; the guest
# programs, built static for the guest's arch (the first of them is /init
# when there is no busybox); modules into /lib/modules/kprobes/ (or / for
# make bench-arm64's /init, which loads them from there).
busybox=y init_prog='' cross='' progs=() mods=() mod_dir=lib/modules/kprobes ftrace=''
case $flavour in
'')
	name=initramfs
	obj=$build/obj
	progs=(textpoke kprobes_selftests)
	mods=("$obj/lib/test_kprobes.ko" "$obj/kernel/kprobes/kretprobe_kunit.ko"
	      "$obj/arch/x86/kernel/kprobes/kprobes_x86_kunit.ko"
	      "$obj/samples/kprobes/kprobe_example.ko" "$obj/samples/kprobes/kretprobe_example.ko"
	      "$t/modules/kprobe_target.ko" "$t/modules/kprobe_twin_a.ko"
	      "$t/modules/kprobe_twin_b.ko" "$t/modules/kprobe_storm.ko"
	      "$t/modules/kprobe_notice.ko" "$t/modules/kprobe_pair.ko"
	      "$t/modules/kprobe_ftrace_kill.ko" "$t/modules/kprobe_callee.ko"
	      "$t/modules/kprobe_deferred.ko" "$build/upstream-kunit/test_kprobes_upstream.ko"
	      "$obj/samples/livepatch/livepatch-sample.ko"
	      "$obj/samples/ftrace/ftrace-direct.ko" "$obj/samples/ftrace/ftrace-direct-modify.ko")
	ftrace=y
	;;
--bare)
	name=initramfs-bare
	;;
--bench)
	name=initramfs-bench-$which
	progs=(kprobe_clients)
	mods=("$build/bench-mod-$which"/kprobe_bench{,_fns,_gp}.ko)
	;;
--cross)
	name=initramfs-$which
	obj=$build/obj-$which
	case $which in
	arm64*)  cross=aarch64-linux-gnu- ;;
	riscv64) cross=riscv64-linux-gnu- ;;
	arm)     cross=arm-linux-gnueabihf- ;;
	*) echo "make-initramfs: no guest for $which" >&2; exit 2 ;;
	esac
	busybox='' init_prog=kprobes_selftests progs=(kprobes_selftests)
	# The ftrace direct call samples and the arch's own KUnit suite
	# only where they are built.
	shopt -s nullglob
	mods=("$obj"/samples/kprobes/*.ko "$obj"/samples/ftrace/ftrace-direct*.ko
	      "$obj/lib/test_kprobes.ko"
	      "$obj/kernel/kprobes/kretprobe_kunit.ko"
	      "$obj"/arch/*/kernel/probes/kprobes_*_kunit.ko
	      "$build/upstream-kunit-$which/test_kprobes_upstream.ko"
	      "$build/cross-modules-$which"/*.ko)
	;;
--bench-arm64|--bench-riscv64)
	arch=${1#--bench-}
	name=initramfs-bench-$arch-$which
	case $arch in
	arm64)   cross=aarch64-linux-gnu- ;;
	riscv64) cross=riscv64-linux-gnu- ;;
	esac
	busybox='' init_prog=init progs=(init kprobe_clients) mod_dir=.
	mods=("$build/bench-$arch-mod-$which"/kprobe_bench_{arch,gp}.ko)
	;;
*)
	echo "usage: $0 [--bare | --bench WHICH | --cross ARCH | --bench-{arm64,riscv64} WHICH]" >&2
	exit 2
	;;
esac
out=$build/$name.cpio.gz
root=$build/$name

# A guest program, built static for the guest's arch into
# .build/guest-bin/CROSS_COMPILE/ when its sources changed: make
# bench-arm64's /init is bench-arm64/init.c, the others guest-progs/NAME.c.
guest_prog() {
	local prog=$build/guest-bin/${cross:-native}/$1 srcs=("$t/guest-progs/$1.c") deps=()
	[ "$1" = init ] && srcs=("$t/bench-arm64/init.c")
	# The selftests: x86-64's own cases in a file of their own, and perf
	# and BPF through kprobe_pmu.c, linked in.
	if [ "$1" = kprobes_selftests ]; then
		srcs+=("$t/guest-progs/kprobes_selftests_x86.c" "$t/guest-progs/kprobe_pmu.c")
		deps=("$t/guest-progs/selftests.h")
	fi
	mkdir -p "${prog%/*}"
	if [ ! -x "$prog" ] || [ -n "$(find "${srcs[@]}" "${deps[@]}" -newer "$prog")" ]; then
		echo "  CC      ${prog#$repo/} (static, for the guest)" >&2
		"${cross}gcc" -static -O2 -Wall -pthread -o "$prog" "${srcs[@]}"
	fi
	echo "$prog"
}
prog_files=()
for p in "${progs[@]}"; do prog_files+=("$(guest_prog "$p")"); done

# The tree's own ftrace selftests for kprobes, from the pristine source,
# and the sample module one of them loads with modprobe.
ftrace_src=$build/linux-source-6.12/tools/testing/selftests/ftrace
ftrace_mods=()
[ -z "$ftrace" ] || ftrace_mods=("$obj/samples/trace_printk/trace-printk.ko")

inputs=("${mods[@]}" "${ftrace_mods[@]}" "${prog_files[@]}" "$0")
[ -z "$busybox" ] || inputs+=("$t"/guest/* /bin/busybox)
if [ -f "$out" ]; then
	stale=0
	for f in "${inputs[@]}"; do [ "$f" -nt "$out" ] && stale=1; done
	[ $stale = 0 ] && exit 0
fi
echo "  CPIO    ${out#$repo/}"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,"$mod_dir"}
if [ -n "$busybox" ]; then
	cp /bin/busybox "$root/bin/busybox"
	for app in $("$root/bin/busybox" --list); do
		[ "$app" = busybox ] || ln -s busybox "$root/bin/$app"
	done
	cp "$t"/guest/init "$root/init"
	cp "$t"/guest/run-tests "$t"/guest/demo "$t"/guest/bench "$t"/guest/coverage \
		"$root/bin/"
fi
for i in "${!progs[@]}"; do
	if [ "${progs[$i]}" = "$init_prog" ]; then
		cp "${prog_files[$i]}" "$root/init"
	else
		cp "${prog_files[$i]}" "$root/bin/${progs[$i]}"
	fi
done
for m in "${mods[@]}"; do cp "$m" "$root/$mod_dir/"; done
if [ -n "${ftrace_mods[*]}" ]; then
	mkdir -p "$root/ftrace/test.d"
	cp "$ftrace_src"/ftracetest "$root/ftrace/"
	cp -r "$ftrace_src"/test.d/functions "$ftrace_src"/test.d/kprobe \
		"$ftrace_src"/test.d/dynevent "$ftrace_src"/test.d/ftrace "$root/ftrace/test.d/"
	kver=$(cat "$obj/include/config/kernel.release")
	mkdir -p "$root/lib/modules/$kver/extra"
	: > "$root/lib/modules/$kver/modules.dep"
	for m in "${ftrace_mods[@]}"; do
		cp "$m" "$root/lib/modules/$kver/extra/"
		echo "extra/$(basename "$m"):" >> "$root/lib/modules/$kver/modules.dep"
	done
fi
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
