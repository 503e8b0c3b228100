#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the series to out/patches/: a git repository of the pristine
# linux-source-6.12 tree gets patches/*.patch (changes to files we do not
# own) and then our files, one commit per area; git format-patch writes
# the series with a cover letter. Then check that it applies with git am
# to a fresh copy of the pristine tree.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
out=$repo/out/patches
work=$build/patches-git
"$repo/tools/testing/kprobes/prepare-tree.sh" >/dev/null
version=$(cat "$build/upstream-version")
pristine=$build/linux-source-6.12
owned=$repo/tools/testing/kprobes/owned-files

g() { git -C "$work" -c user.name="kprobes team" -c user.email="kprobes@example.org" "$@"; }

rm -rf "$work" "$out"
mkdir -p "$work" "$out"
echo "  GIT     baseline of linux-source-6.12 $version"
cp -a "$pristine/." "$work/"
rm -f "$work/.unpacked-"*
g init -q
# A scratch repository: no automatic gc of the whole kernel's objects.
g config gc.auto 0
# Debian's tarball ignores everything in its top .gitignore: add by force.
g add -f -A .
g commit -q -m "Linux $version (Debian linux-source-6.12)"
g tag upstream

for p in "$repo"/patches/*.patch; do
	[ -e "$p" ] || continue
	g am -q --keep-cr "$p"
done

commit_paths() {	# commit_paths "subject" "body" path...
	local subject=$1 body=$2
	shift 2
	for path in "$@"; do
		rm -rf "${work:?}/$path"
		if [ -e "$repo/$path" ]; then
			mkdir -p "$(dirname "$work/$path")"
			cp -a "$repo/$path" "$work/$path"
		fi
		g add -f -A -- "$path"
	done
	g commit -q -m "$subject" -m "$body"
}

commit_paths "kprobes: replace the core and the x86-64 code" \
"Rewrite kernel/kprobes.c, the kprobes headers and arch/x86/kernel/kprobes
in one step (the old x86 code does not build against the new core). The
interface the rest of the tree uses (struct kprobe, struct kretprobe,
the KPROBE_FLAG_* flags, register/unregister/enable/disable and their
error codes, the arch hooks traps.c and fault.c call) is unchanged; the
implementation is new.

Core:
- one hash table of probe sites, read under RCU on the hit path, with
  aggregates for several probes at one address;
- every change of a site's armed state goes through one function and is
  batched: a register_kprobes()/unregister_kprobes() call patches the
  text once and waits for one RCU grace period, whatever its size;
- one header, include/linux/kprobes_arch.h, is the interface to every
  architecture's kprobes code: each hook, its context and locks, and the
  default of the optional ones. The other architectures' code builds and
  runs on this core unchanged (arm64, riscv64 and arm booted, every arch
  with a Debian cross compiler built); arm's and powerpc's optprobe code
  is driven one site at a time;
- kretprobes are built on rethook where the arch has it; elsewhere the
  core keeps the instances (a pool per kretprobe, a per-task list of
  pending returns, the trampoline handler and the unwinders' lookup);
  maxactive and nmissed mean the same either way;
- probes on freed module or init text become GONE; a module's own
  blacklist is honoured;
- a delayed optimizer turns armed sites into jumps: it waits one
  RCU-tasks grace period for all the queued sites and writes all their
  jumps in one text_poke_queue() batch; every reason to take a jump out
  (post_handler, probe inside the region, disable, unregister, the
  debug.kprobes-optimization sysctl, text going away) goes through the
  same single function as arming; the jumps of unregistered sites are
  written back while unregister's grace period runs (256 at a time,
  for as long as it lasts) and by a worker just after, their detours
  running no handler until then;
- per-probe hit counters (per CPU) and debugfs list, enabled, blacklist
  and stats; debugfs query says what registering a probe at a point
  would do and which rule refuses it (or keeps it from being boosted or
  optimized), from the same checks registration runs (kprobe_refuse());
- slots a preempted task may still be inside are reused only after an
  RCU-tasks grace period, waited for by a worker.

x86-64:
- control transfers and the instructions that touch IF are emulated on
  the trap frame; every other instruction runs from a slot followed by an
  int3, with interrupts off, RIP-relative operands fixed up;
- breakpoint writes are queued with text_poke() and made visible with one
  text_poke_sync() per batch;
- a function is decoded once for all the probes in it (funcmap.c:
  instruction starts, landings of jumps and fixups, kept for the 64
  functions used last and dropped when their text is freed), so that
  probing every line of a large function costs O(lines + size), not
  O(lines x size);
- a fault in a copied instruction is rewound to the original address so
  that its exception-table fixup applies;
- boosting: once a copy ran cleanly, hits without a post_handler run a
  second copy that jumps back by itself (one trap per hit);
- optimized probes (opt.c): a five-byte jump to a detour buffer that
  saves a pt_regs, calls the handlers (a redirecting pre_handler leaves
  through iret), runs the relocated region and jumps back; the region
  may hold a jcc (rewritten rel32) and end with a jmp, ret or call (a
  push of the region's end and a jmp, so that callees return to the
  text), or padding after them; regions are checked for jumps into
  them, exception-table entries, ENDBR and patched text; with IBT an
  indirect tail call does not block its function; handlers run with EFLAGS.AC clear (SMAP), a site that
  ever had a jump is freed after an RCU-tasks grace period;
- every text change (int3, slot, detour, jump) is told to perf as a
  PERF_RECORD_TEXT_POKE;
- probes at ftrace sites are served by two ftrace_ops: sites armed
  with a post_handler in one with FTRACE_OPS_FL_IPMODIFY, the others in
  one without, so that kprobe events, perf and BPF probes at a
  function's entry live beside a livepatch of it, as in the tree. A
  site stays in its ops while armed, so that no call misses it.

The blacklist covers the pieces a compiler splits off a blacklisted
function (foo.cold, foo.isra.0, ...), and __pfx_/__cfi_ preambles are
refused; refusals return the tree's error codes.

get_kprobe(), within_kprobe_blacklist() and current_kprobe are now
exported (GPL) so that modules, the KUnit suite among them, can use them
and kprobe_running()." \
	kernel/kprobes.c include/linux/kprobes.h include/linux/kprobes_arch.h \
	include/asm-generic/kprobes.h \
	arch/x86/include/asm/kprobes.h arch/x86/kernel/kprobes

commit_paths "kprobes: new samples, KUnit suite and documentation" \
"samples/kprobes: a kprobe that prints on each entry of a function, and
a kretprobe that times each call. lib/test_kprobes.c: a KUnit suite
covering registration, refusals and their error codes, instruction
kinds, aggregates, enable/disable, recursion, kretprobes, hit counters,
boosting and optimization (counting traps per hit), with transitions
raced by a second thread." \
	samples/kprobes lib/test_kprobes.c Documentation/trace/kprobes.rst

cat > "$build/cover.txt" <<COVER
kprobes: a new core for every architecture, and new x86-64 code

This series replaces the kprobes core and the x86-64 kprobes code of
Linux $version with a new implementation, for every architecture's
kprobes code: the same interface for the rest of the tree, for modules
and for the other architectures, batched text patching (one patch and
one RCU grace period per register_kprobes()/unregister_kprobes() call),
boosting, jump optimization with a batched optimizer, per-probe hit
counters, and a documented probe life cycle. The first two patches make
text_poke_queue() batches cheaper (one mapping per page and step, no
instruction decoder for five-byte calls, jumps and NOPs); ftrace and
jump labels gain from them too. The third offers kprobes on 64-bit x86
kernels only: the new x86 code is 64-bit code.

Built and tested with the configurations in tools/testing/kprobes of
the project tree (QEMU): the KUnit suite in lib/test_kprobes.c,
the tree's own kprobes KUnit suite and ftrace selftests, and guest
selftests of debugfs, kprobe_events and module unload, on x86-64, arm64,
riscv64 and arm; built for ppc64le, s390x, mips, sh4, sparc64, hppa and
arc as well.
COVER
g format-patch -q --cover-letter -o "$out" upstream
# Fill the cover letter's subject and blurb.
cover=$(ls "$out"/0000-*.patch)
python3 - "$cover" "$build/cover.txt" <<'PY'
import sys
path, blurb = sys.argv[1], open(sys.argv[2]).read().split('\n', 1)
s = open(path).read()
s = s.replace('*** SUBJECT HERE ***', blurb[0])
s = s.replace('*** BLURB HERE ***', blurb[1].strip())
open(path, 'w').write(s)
PY

echo "  CHECK   git am on a fresh copy"
check=$build/patches-check
rm -rf "$check"
mkdir -p "$check"
cp -a "$pristine/." "$check/"
rm -f "$check/.unpacked-"*
git -C "$check" init -q
git -C "$check" config gc.auto 0
git -C "$check" add -f -A .
git -C "$check" -c user.name=x -c user.email=x@x commit -q -m base
git -C "$check" -c user.name=x -c user.email=x@x am -q $(ls "$out"/*.patch | grep -v '/0000-')
diff -r -q -x .git "$check" "$work" >/dev/null || { echo "make-patches: applied tree differs" >&2; exit 1; }
rm -rf "$check"
ls "$out"
