#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suite run by the tree's own runner, in the patched tree:
#   tools/testing/kunit/kunit.py run --arch=x86_64 \
#	--kunitconfig=tools/testing/kprobes/kunitconfig
# (kunit.py builds its own small kernel in .build/kunit and boots it in
# QEMU). FILTER=suite.case (a glob) runs those cases only. Exits with
# kunit.py's status.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/kprobes-ccache}
export CCACHE_BASEDIR=$build CCACHE_SLOPPINESS=time_macros
cd "$build/src"
exec ./tools/testing/kunit/kunit.py run --arch=x86_64 \
	--kunitconfig="$repo/tools/testing/kprobes/kunitconfig" \
	--build_dir="$build/kunit" --jobs="${JOBS:-$(( $(nproc) + 1 ))}" \
	--make_options CC="ccache gcc" --timeout=900 ${FILTER:+"$FILTER"}
