#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cross-build.sh [ARCH...]: build the series for other architectures with
# Debian's cross compilers (installed when missing), a kprobes
# configuration each (allnoconfig plus cross.config plus the lines below),
# and print a table: arch / kprobes / kretprobes / optprobes / on ftrace /
# result. A build fails on an error, or on a warning in a file we own.
# i386 is built without kprobes, which x86 offers on 64-bit kernels only
# (patches/0003), but with fprobe, so that the tree's rethook trampoline
# builds against our x86 header; its row fails if KPROBES could be set.
# Logs in .build/cross-ARCH.log.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build

# name: kernel ARCH, compiler prefix, Debian package, extra config lines,
# extra compiler flags
declare -A KARCH CROSS PKG EXTRA FLAGS
add() { KARCH[$1]=$2 CROSS[$1]=$3 PKG[$1]=$4 EXTRA[$1]=${5:-} FLAGS[$1]=${6:-}; }
add arm       arm     arm-linux-gnueabihf-   gcc-arm-linux-gnueabihf \
	"CONFIG_MMU=y CONFIG_ARCH_MULTI_V7=y CONFIG_ARCH_VIRT=y CONFIG_AEABI=y"
add arm64     arm64   aarch64-linux-gnu-     gcc-aarch64-linux-gnu
add riscv64   riscv   riscv64-linux-gnu-     gcc-riscv64-linux-gnu \
	"CONFIG_MMU=y CONFIG_NONPORTABLE=n CONFIG_FUNCTION_GRAPH_TRACER=y"
add ppc64le   powerpc powerpc64le-linux-gnu- gcc-powerpc64le-linux-gnu \
	"CONFIG_PPC64=y CONFIG_CPU_LITTLE_ENDIAN=y"
add s390x     s390    s390x-linux-gnu-       gcc-s390x-linux-gnu
add mips      mips    mips-linux-gnu-        gcc-mips-linux-gnu
add sh4       sh      sh4-linux-gnu-         gcc-sh4-linux-gnu \
	"CONFIG_CPU_SUBTYPE_SH7751R=y CONFIG_MMU=y"
add sparc64   sparc   sparc64-linux-gnu-     gcc-sparc64-linux-gnu \
	"CONFIG_64BIT=y CONFIG_NR_CPUS=4"
# Objects the tree itself cannot build for an arch, with or without our
# series: the build goes on past them (make -k), and the row fails if
# anything else fails or an object of ours is missing. Debian's 6.12.117
# gives sparc's __O_TMPFILE the bit of FMODE_NONOTIFY (1 << 25), and
# fcntl_init()'s BUILD_BUG_ON counts one flag short.
declare -A KNOWN=([sparc64]=fs/fcntl.o)
add hppa      parisc  hppa-linux-gnu-        gcc-hppa-linux-gnu
# Debian's gcc 12 for ARC stops with an internal error in arc_ifcvt
# (its conditional execution pass) on mm/memory.c, at -O2 and -Os.
add arc       arc     arc-linux-gnu-         gcc-arc-linux-gnu "" -mno-cond-exec
add i386      i386    ""                     gcc \
	"CONFIG_64BIT=n CONFIG_KPROBES=n CONFIG_KRETPROBES=n CONFIG_KPROBE_EVENTS=n CONFIG_KPROBES_SANITY_TEST=n CONFIG_SAMPLE_KPROBES=n CONFIG_SAMPLE_KRETPROBES=n CONFIG_FPROBE=y"
ALL="arm arm64 riscv64 ppc64le s390x mips sh4 sparc64 hppa arc i386"
arches=${*:-$ALL}

missing=""
for a in $arches; do
	[ -n "${KARCH[$a]:-}" ] || { echo "cross-build: unknown arch $a" >&2; exit 1; }
	command -v "${CROSS[$a]}gcc" >/dev/null || missing="$missing ${PKG[$a]}"
done
if [ -n "$missing" ]; then
	echo "  APT    $missing"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
		--no-install-recommends $missing >/dev/null || exit 1
fi

ours=$(grep -v '^#' "$t/owned-files" | sed '/^$/d')
yes_no() { grep -q "^$1=y" "$2" && echo yes || echo no; }
fail=0
rows=()
for a in $arches; do
	obj=$build/obj-cross-$a log=$build/cross-$a.log
	frag=$build/cross-$a.config
	{ cat "$t/cross.config"; tr ' ' '\n' <<< "${EXTRA[$a]}"; } > "$frag"
	echo "  CROSS   $a"
	export ARCH=${KARCH[$a]} CROSS_COMPILE=${CROSS[$a]}
	result=ok
	# Options the arch cannot have are reported in the table; kprobes
	# themselves must be there (and on i386 must not be possible).
	"$t/config.sh" "$build/src" "$obj" "$frag" > "$log" 2>&1
	if [ "$a" = i386 ]; then
		grep -q '^CONFIG_HAVE_KPROBES=y' "$obj/.config" && result=FAILED
		grep -q '^CONFIG_RETHOOK=y' "$obj/.config" || result=FAILED
	else
		grep -q '^CONFIG_KPROBES=y' "$obj/.config" || result=FAILED
	fi
	known=${KNOWN[$a]:-}
	if ! make -s ${known:+-k} -C "$build/src" O="$obj" CC="ccache ${CROSS[$a]}gcc" \
		KCFLAGS="${FLAGS[$a]}" -j"${JOBS:-$(( $(nproc) + 1 ))}" vmlinux modules >> "$log" 2>&1; then
		failed=$(sed -n 's/.*Makefile.build:[0-9]*: \(.*\.o\)\] Error.*/\1/p' "$log" | sort -u)
		if [ -z "$known" ] || [ "$failed" != "$known" ]; then
			result=FAILED
		fi
		for o in kernel/kprobes/core.o lib/test_kprobes.o samples/kprobes/kprobe_example.o; do
			[ -f "$obj/$o" ] || result=FAILED
		done
		[ "$result" = FAILED ] || result="ok (the tree fails in $known)"
	fi
	for f in $ours; do
		if grep -E "^(\.\./src/)?${f}[^ ]*:[0-9]+:[0-9]+: (warning|error)" "$log" >/dev/null; then
			result=FAILED
		fi
	done
	case $result in ok*) ;; *) fail=1 ;; esac
	c=$obj/.config
	rows+=("$(printf '%-8s %-7s %-11s %-9s %-9s %s' "$a" "$(yes_no CONFIG_KPROBES "$c")" \
		"$(grep -q '^CONFIG_KRETPROBES=y' "$c" && { grep -q '^CONFIG_KRETPROBE_ON_RETHOOK=y' "$c" && echo rethook || echo core; } || echo no)" \
		"$(yes_no CONFIG_OPTPROBES "$c")" "$(yes_no CONFIG_KPROBES_ON_FTRACE "$c")" "$result")")
	unset ARCH CROSS_COMPILE
done
printf '%-8s %-7s %-11s %-9s %-9s %s\n' arch kprobes kretprobes optprobes on-ftrace result
printf '%s\n' "${rows[@]}"
exit $fail
