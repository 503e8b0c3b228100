#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-build.sh ours|upstream: build a kernel for make bench from
# kprobes.config + bench.config, and the benchmark module against it.
# ours: the prepared tree (.build/src, our kprobes); upstream: the
# pristine unpack (.build/linux-source-6.12, the tree's own kprobes).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
t=$repo/tools/testing/kprobes
build=$repo/.build
which=$1
case $which in
ours)     src=$build/src ;;
upstream) src=$build/linux-source-6.12 ;;
*)        echo "usage: $0 ours|upstream" >&2; exit 2 ;;
esac
obj=$build/obj-bench-$which
mod=$build/bench-mod-$which
jobs=${JOBS:-$(( $(nproc) + 1 ))}
"$t/config.sh" "$src" "$obj" "$t/kprobes.config" "$t/bench.config"
echo "  KERNEL  bench, $which kprobes"
make -s -C "$src" O="$obj" CC="ccache gcc" -j"$jobs" bzImage modules
mkdir -p "$mod"
cp "$t"/bench/*.c "$t"/bench/*.h "$t/bench/Kbuild" "$mod/"
make -s -C "$src" O="$obj" CC="ccache gcc" -j"$jobs" M="$mod" modules
