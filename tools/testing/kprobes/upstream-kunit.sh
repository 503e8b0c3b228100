#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The tree's own kprobes KUnit suite, as a test of compatibility: copy the
# pristine lib/test_kprobes.c to .build/upstream-kunit/ under another
# module and suite name, to be built against our kernel and run beside
# ours. Nothing of it is committed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$repo/.build/upstream-kunit
mkdir -p "$dir"
sed 's/\.name = "kprobes_test"/.name = "kprobes_test_upstream"/' \
	"$repo/.build/linux-source-6.12/lib/test_kprobes.c" > "$dir/new.c"
grep -q kprobes_test_upstream "$dir/new.c" || { echo "upstream-kunit: suite name not found" >&2; exit 1; }
if ! cmp -s "$dir/new.c" "$dir/test_kprobes_upstream.c"; then
	mv "$dir/new.c" "$dir/test_kprobes_upstream.c"
else
	rm "$dir/new.c"
fi
# Always a module, also where the kernel builds our suite in (the other
# architectures' guests): the file's IS_MODULE() test must say so, or it
# calls stack_trace_save_regs(), which modules cannot.
cat > "$dir/Kbuild.new" <<'KBUILD'
obj-m += test_kprobes_upstream.o
CFLAGS_test_kprobes_upstream.o += -DCONFIG_KPROBES_SANITY_TEST_MODULE=1
KBUILD
cmp -s "$dir/Kbuild.new" "$dir/Kbuild" 2>/dev/null && rm "$dir/Kbuild.new" || mv "$dir/Kbuild.new" "$dir/Kbuild"
