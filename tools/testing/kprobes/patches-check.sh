#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that the series is bisectable: build every prefix of it (the
# commits make patches leaves in .build/patches-git) for x86-64 in the
# two test configurations, incrementally with ccache, and boot the alt
# kernel of each. The alt kernel has the kprobes KUnit suite built in
# (the tree's before the switch to the new core, ours after), whose
# probes take the breakpoint path: the prefix passes when that suite
# passes and the console shows no oops, BUG, WARNING or hang. A prefix
# whose alt kernel is the same as the last one booted is not booted
# again.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
T=$repo/tools/testing/kprobes
series=$build/patches-git
# Laid out as .build/src and .build/obj are, so that ccache (whose base
# directory is .build) finds what the test builds compiled.
src=$build/bisect/src
objm=$build/bisect/obj
obja=$build/bisect/obj-alt
log=$build/console-bisect.log
jobs=${JOBS:-$(( $(nproc) + 1 ))}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/kprobes-ccache}
export CCACHE_BASEDIR=$build CCACHE_SLOPPINESS=time_macros

[ -d "$series/.git" ] || "$T/make-patches.sh"
[ -f "$build/initramfs-bare.cpio.gz" ] || "$T/make-initramfs.sh" --bare

# One checkout, moved from commit to commit: git rewrites only the files
# that differ, so each build is incremental.
if [ ! -d "$src/.git" ]; then
	git clone -q --no-checkout "$series" "$src"
	git -C "$src" config gc.auto 0
fi
git -C "$src" fetch -q -f "$series" '+refs/tags/upstream:refs/tags/upstream' \
	'+HEAD:refs/heads/series'

kmake() { make -s -C "$src" O="$1" CC="ccache gcc" -j"$jobs" "${@:2}"; }

n=0 failed=0 booted=
for c in $(git -C "$src" rev-list --reverse upstream..series); do
	n=$((n + 1))
	subject=$(git -C "$src" log -1 --format=%s "$c")
	git -C "$src" checkout -q -f --detach "$c"
	what="build"
	if "$T/config.sh" "$src" "$obja" "$T/kprobes.config" "$T/alt.config" &&
	   kmake "$obja" bzImage &&
	   "$T/config.sh" "$src" "$objm" "$T/kprobes.config" "$T/debug.config" &&
	   kmake "$objm" bzImage modules; then
		sum=$(sha1sum < "$obja/arch/x86/boot/bzImage")
		what="boot"
		if [ "$sum" = "$booted" ]; then
			what="same alt kernel as the last booted"
		else
			"$T/run-guest.sh" -k "$obja/arch/x86/boot/bzImage" \
				-i "$build/initramfs-bare.cpio.gz" "$log" kptest=kunit
			if grep -q '^ok [0-9]* kprobes_test' "$log" &&
			   python3 "$T/ktap-summary.py" "$log:prefix-$n" >/dev/null; then
				booted=$sum
				what="booted, kprobes_test passed"
			else
				what="boot: kprobes_test failed or the console shows a report ($log)"
			fi
		fi
	fi
	case $what in
	build|boot:*) echo "not ok $n $subject: $what"; failed=$((failed + 1))
		      cp "$log" "$build/console-bisect-$n.log" 2>/dev/null || true ;;
	*)	      echo "ok $n $subject: $what" ;;
	esac
done
echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
