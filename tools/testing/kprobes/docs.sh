#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the tree's trace documentation with Sphinx (make htmldocs
# SPHINXDIRS=trace, Debian's python3-sphinx) and fail on any warning
# about Documentation/trace/kprobes.rst. The HTML is in
# .build/docs/Documentation/output/trace/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
log=$build/htmldocs.log
echo "  SPHINX  Documentation/trace (htmldocs), log in .build/htmldocs.log"
make -s -C "$build/src" O="$build/docs" SPHINXDIRS=trace htmldocs >"$log" 2>&1 ||
	{ tail -20 "$log"; echo "docs: htmldocs failed" >&2; exit 1; }
if grep -n "kprobes.rst" "$log"; then
	echo "docs: Sphinx warns about kprobes.rst" >&2
	exit 1
fi
echo "  DOCS    kprobes.rst: no warning ($(grep -ci 'warning' "$log" || true) warnings elsewhere in trace/)"
