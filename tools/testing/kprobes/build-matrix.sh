#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-matrix.sh [ROW...]: build the series in small configurations,
# one row each, for the architectures whose kprobes code is ours (x86-64,
# arm64): allnoconfig plus matrix.config plus the row's own lines, so
# that each option kprobes depends on is both on and off somewhere
# (KRETPROBES cannot be: it is on wherever kprobes and the arch have it). A
# row fails on an error, or on a warning in a file we own. Prints a
# table; logs in .build/matrix-ROW.log. Run by make matrix and make cross.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build

# row: arch, then the lines it adds to matrix.config
declare -A ARCHOF LINES
row() { ARCHOF[$1]=$2; LINES[$1]=${3:-}; }
FT="CONFIG_FTRACE=y CONFIG_FUNCTION_TRACER=y CONFIG_DYNAMIC_FTRACE=y"
for a in x86_64 arm64; do
	row $a-full $a "$FT CONFIG_KRETPROBES=y CONFIG_PREEMPT=y CONFIG_MODULES=y CONFIG_MODULE_UNLOAD=y"
	row $a-noftrace $a "CONFIG_FUNCTION_TRACER=n CONFIG_KRETPROBES=y CONFIG_MODULES=y"
	row $a-nomodules $a "$FT CONFIG_KRETPROBES=y CONFIG_MODULES=n"
	row $a-nopreempt $a "$FT CONFIG_PREEMPT_NONE=y CONFIG_KRETPROBES=y CONFIG_MODULES=y"
done
# arm64 is always SMP.
row x86_64-nomodules-up x86_64 "$FT CONFIG_KRETPROBES=y CONFIG_MODULES=n CONFIG_SMP=n"
ALL="x86_64-full x86_64-noftrace x86_64-nomodules-up x86_64-nopreempt
     arm64-full arm64-noftrace arm64-nomodules arm64-nopreempt"
rows_wanted=${*:-$ALL}

if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "  APT     gcc-aarch64-linux-gnu"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
		--no-install-recommends gcc-aarch64-linux-gnu >/dev/null || exit 1
fi

ours=$(grep -v '^#' "$t/owned-files" | sed '/^$/d')
yes_no() { grep -q "^$1=y" "$2" && echo yes || echo no; }
fail=0
out=()
for r in $rows_wanted; do
	[ -n "${ARCHOF[$r]:-}" ] || { echo "build-matrix: unknown row $r" >&2; exit 1; }
	a=${ARCHOF[$r]} obj=$build/obj-matrix-$r log=$build/matrix-$r.log
	frag=$build/matrix-$r.config
	{ cat "$t/matrix.config"; tr ' ' '\n' <<< "${LINES[$r]}"; } > "$frag"
	if [ "$a" = arm64 ]; then
		export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
		cc="ccache aarch64-linux-gnu-gcc"
	else
		export ARCH=x86_64
		unset CROSS_COMPILE
		cc="ccache gcc"
	fi
	echo "  MATRIX  $r"
	result=ok
	"$t/config.sh" "$build/src" "$obj" "$frag" > "$log" 2>&1 || result=FAILED
	start=$(date +%s)
	if [ $result = ok ] && ! make -s -C "$build/src" O="$obj" CC="$cc" \
		-j"${JOBS:-$(( $(nproc) + 1 ))}" vmlinux >> "$log" 2>&1; then
		result=FAILED
	fi
	for f in $ours; do
		if grep -E "^(\.\./src/)?${f}[^ ]*:[0-9]+:[0-9]+: (warning|error)" "$log" >/dev/null; then
			result=FAILED
		fi
	done
	[ $result = ok ] || fail=1
	c=$obj/.config
	out+=("$(printf '%-21s %-6s %-10s %-9s %-9s %-7s %-4s %-7s %-6s %s' "$r" "$a" \
		"$(yes_no CONFIG_KRETPROBES "$c")" "$(yes_no CONFIG_OPTPROBES "$c")" \
		"$(yes_no CONFIG_KPROBES_ON_FTRACE "$c")" "$(yes_no CONFIG_MODULES "$c")" \
		"$(yes_no CONFIG_SMP "$c")" "$(yes_no CONFIG_PREEMPTION "$c")" \
		"$(( $(date +%s) - start ))s" "$result")")
	unset ARCH CROSS_COMPILE
done
printf '%-21s %-6s %-10s %-9s %-9s %-7s %-4s %-7s %-6s %s\n' row arch kretprobes optprobes \
	on-ftrace modules smp preempt time result
printf '%s\n' "${out[@]}"
exit $fail
