#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack the guest's initramfs: static busybox, our guest scripts and
# programs (the selftests every architecture runs among them) and the
# test and sample modules. Rewritten only when an input changed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
obj=$repo/.build/obj
out=$repo/.build/initramfs.cpio.gz
root=$repo/.build/initramfs
t=$repo/tools/testing/kprobes
mods=("$obj/lib/test_kprobes.ko" "$obj/kernel/kprobes/kretprobe_kunit.ko"
      "$obj/arch/x86/kernel/kprobes/kprobes_x86_kunit.ko" "$obj/samples/kprobes/kprobe_example.ko"
      "$obj/samples/kprobes/kretprobe_example.ko" "$t/modules/kprobe_target.ko"
      "$t/modules/kprobe_twin_a.ko" "$t/modules/kprobe_twin_b.ko" "$t/modules/kprobe_storm.ko"
      "$t/modules/kprobe_notice.ko" "$t/modules/kprobe_pair.ko" "$t/modules/kprobe_ftrace_kill.ko"
      "$t/modules/kprobe_callee.ko" "$t/modules/kprobe_deferred.ko"
      "$repo/.build/upstream-kunit/test_kprobes_upstream.ko"
      "$obj/samples/livepatch/livepatch-sample.ko"
      "$obj/samples/ftrace/ftrace-direct.ko" "$obj/samples/ftrace/ftrace-direct-modify.ko")
# --bare: busybox and the scripts only, for kernels without modules.
# --bench ours|upstream: the scripts and make bench's module for that kernel.
mode=${1:-}
case $mode in
--bare)
	out=$repo/.build/initramfs-bare.cpio.gz
	root=$repo/.build/initramfs-bare
	mods=()
	;;
--bench)
	out=$repo/.build/initramfs-bench-$2.cpio.gz
	root=$repo/.build/initramfs-bench-$2
	mods=("$repo/.build/bench-mod-$2/kprobe_bench.ko"
	      "$repo/.build/bench-mod-$2/kprobe_bench_fns.ko"
	      "$repo/.build/bench-mod-$2/kprobe_bench_gp.ko")
	;;
esac
# The guest programs: the tests' for the test initramfs, kprobe_clients
# (make bench's clients run) for the bench ones.
names=()
case $mode in
'')      names=(textpoke kprobes_selftests) ;;
--bench) names=(kprobe_clients) ;;
esac
progs=()
for name in "${names[@]}"; do
	prog=$repo/.build/$name
	srcs=("$t/guest-progs/$name.c")
	# The selftests run perf and BPF through kprobe_pmu.c, linked in.
	[ "$name" = kprobes_selftests ] && srcs+=("$t/guest-progs/kprobe_pmu.c")
	if [ ! -x "$prog" ] || [ -n "$(find "${srcs[@]}" -newer "$prog")" ]; then
		echo "  CC      .build/$name (static, for the guest)"
		gcc -static -O2 -Wall -pthread -o "$prog" "${srcs[@]}"
	fi
	progs+=("$prog")
done
# The tree's own ftrace selftests for kprobes, from the pristine source,
# and the sample module one of them loads with modprobe.
ftrace=$repo/.build/linux-source-6.12/tools/testing/selftests/ftrace
ftrace_mods=()
if [ -z "$mode" ]; then
	ftrace_mods=("$obj/samples/trace_printk/trace-printk.ko")
fi
inputs=("${mods[@]}" "${ftrace_mods[@]}" "$t"/guest/* "${progs[@]}" /bin/busybox "$0")
if [ -f "$out" ]; then
	stale=0
	for f in "${inputs[@]}"; do [ "$f" -nt "$out" ] && stale=1; done
	[ $stale = 0 ] && exit 0
fi
echo "  CPIO    ${out#$repo/}"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/modules/kprobes}
cp /bin/busybox "$root/bin/busybox"
for app in $("$root/bin/busybox" --list); do
	[ "$app" = busybox ] || ln -s busybox "$root/bin/$app"
done
cp "$t"/guest/init "$root/init"
cp "$t"/guest/run-tests "$t"/guest/demo "$t"/guest/bench "$t"/guest/coverage "$t"/guest/storm "${progs[@]}" "$root/bin/"
for m in "${mods[@]}"; do cp "$m" "$root/lib/modules/kprobes/"; done
if [ -n "${ftrace_mods[*]}" ]; then
	mkdir -p "$root/ftrace/test.d"
	cp "$ftrace"/ftracetest "$root/ftrace/"
	cp -r "$ftrace"/test.d/functions "$ftrace"/test.d/kprobe "$ftrace"/test.d/dynevent \
		"$ftrace"/test.d/ftrace "$root/ftrace/test.d/"
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
