#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make .build/src: the upstream tree with patches/ applied, the tree's own
# kprobes implementation deleted and ours copied in. Re-runs only touch
# files whose content changed, so the kernel build stays incremental.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
pristine=$build/linux-source-6.12
src=$build/src
owned=$repo/tools/testing/kprobes/owned-files

die() { echo "prepare-tree: $*" >&2; exit 1; }

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | sed -n 1p)
[ -n "$tarball" ] || die "no /usr/src/linux-source-6.12.tar.*; install linux-source-6.12"
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)

mkdir -p "$build"
if [ ! -f "$pristine/.unpacked-$version" ]; then
	echo "  UNPACK  linux-source-6.12 $version"
	rm -rf "$pristine" "$src"
	tar xf "$tarball" -C "$build"
	touch "$pristine/.unpacked-$version"
fi
echo "$version" > "$build/upstream-version"

# The source tree is rebuilt from scratch only when the patch series changes.
patch_id=$( (echo "$version"; cat "$repo"/patches/*.patch 2>/dev/null || true) | sha1sum | cut -c1-40)
if [ "$(cat "$src/.patch-id" 2>/dev/null)" != "$patch_id" ]; then
	echo "  COPY    pristine tree -> .build/src"
	rm -rf "$src"
	cp -a "$pristine" "$src"
	rm -f "$src/.unpacked-"*
	for p in "$repo"/patches/*.patch; do
		[ -e "$p" ] || continue
		echo "  PATCH   $(basename "$p")"
		patch -s -p1 -d "$src" < "$p" || die "$(basename "$p") does not apply"
	done
	echo "$patch_id" > "$src/.patch-id"
fi

# Delete every file of the tree's that we own, unless ours has the same
# content (then keep it, with its timestamp).
grep -v '^#' "$owned" | while read -r path; do
	[ -n "$path" ] || continue
	(cd "$pristine" && find "$path" -type f 2>/dev/null || true) | while read -r f; do
		if [ ! -f "$repo/$f" ]; then
			rm -f "$src/$f"
		fi
	done
	# Copy ours in, touching only what changed.
	if [ -e "$repo/$path" ]; then
		case $path in
		*/) mkdir -p "$src/$path"
		    rsync -rc --delete "$repo/$path" "$src/$path" ;;
		*)  mkdir -p "$(dirname "$src/$path")"
		    rsync -c "$repo/$path" "$src/$path" ;;
		esac
	fi
done

# Fail loudly if any of the tree's own kprobes files survived.
grep -v '^#' "$owned" | while read -r path; do
	[ -n "$path" ] || continue
	(cd "$pristine" && find "$path" -type f 2>/dev/null || true)
done | while read -r f; do
	if [ -f "$src/$f" ] && cmp -s "$pristine/$f" "$src/$f"; then
		echo "prepare-tree: the tree's own $f survived" >&2
		echo x
	fi
done | grep x >/dev/null && die "upstream kprobes files still in .build/src"
# None did: succeed, rather than end with the false && list above.
exit 0
