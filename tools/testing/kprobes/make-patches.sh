#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the series to out/patches/. A git repository of the pristine
# linux-source-6.12 tree (.build/patches-git, kept for make patches-check)
# gets, in order:
#
#   patches/[0-9]*.patch        changes to files we do not own, by git am
#   our new files, one concept per commit, not built yet
#   the switch: our headers, the Makefiles, patches/switch-*.patch
#   the removal of the tree's old core and x86 code
#   our samples, the KUnit suite (generic cases, then x86-64's in three), the
#   documentation
#   patches/after-*.patch       by git am
#
# Each commit that adds or deletes files updates the KPROBES entry of
# MAINTAINERS with them. git format-patch writes the series with a cover
# letter; then it is checked to apply with git am to a fresh copy of the
# pristine tree, to end in the same tree as ours, and to keep every
# patch file under 2,500 lines but the KUnit suite's.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$repo/.build
out=$repo/out/patches
work=$build/patches-git
pristine=$build/linux-source-6.12
# Only the pristine tree is needed: leave .build/src (a build may be
# using it) alone when the tree is unpacked already.
if ! ls "$pristine"/.unpacked-* >/dev/null 2>&1 || [ ! -f "$build/upstream-version" ]; then
	"$repo/tools/testing/kprobes/prepare-tree.sh" >/dev/null
fi
version=$(cat "$build/upstream-version")

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

for p in "$repo"/patches/[0-9]*.patch; do
	[ -e "$p" ] || continue
	g am -q --keep-cr "$p"
done

# maintainers_files add|del PATH...: the KPROBES entry's F: lines.
maintainers_files() {
	python3 - "$work/MAINTAINERS" "$@" <<'PY'
import sys
path, op, files = sys.argv[1], sys.argv[2], sys.argv[3:]
lines = open(path).read().split('\n')
start = lines.index('KPROBES')
end = lines.index('', start)
entry = lines[start:end]
fs = [l for l in entry if l.startswith('F:\t')]
others = [l for l in entry if not l.startswith('F:\t')]
for f in files:
    line = 'F:\t' + f
    if op == 'add' and line not in fs:
        fs.append(line)
    if op == 'del' and line in fs:
        fs.remove(line)
lines[start:end] = others + sorted(fs)
open(path, 'w').write('\n'.join(lines))
PY
	g add MAINTAINERS
}

# put PATH...: our version of each file into the series' tree.
put() {
	local path
	for path in "$@"; do
		mkdir -p "$(dirname "$work/$path")"
		cp -a "$repo/$path" "$work/$path"
		g add -f -- "$path"
	done
}

# add PATH...: new files of ours, listed in MAINTAINERS.
add() {
	put "$@"
	maintainers_files add "$@"
}

# put_no_kunit MAKEFILE...: as put, without the Makefile's closing
# "# KUnit" block, which the KUnit patches at the end of the series add.
put_no_kunit() {
	local path
	for path in "$@"; do
		mkdir -p "$(dirname "$work/$path")"
		python3 -c 'import sys; t = open(sys.argv[1]).read(); i = t.find("\n\n# KUnit")
print(t if i < 0 else t[:i + 1], end="")' "$repo/$path" > "$work/$path"
		g add -f -- "$path"
	done
}

# remove PATH...: the tree's files, and their MAINTAINERS lines.
remove() {
	g rm -q -- "$@"
	maintainers_files del "$@"
}

commit() {	# commit "subject" <<body
	g commit -q -s -m "$1" -m "$(cat)"
}

core=kernel/kprobes
x86=arch/x86/kernel/kprobes

# ---- the new files, not built until the switch ----------------------------

add include/linux/kprobes_arch.h
commit "kprobes: document the interface between the core and the architectures" <<'EOF'
The kprobes core and the architectures' kprobes code meet through some
forty functions and a per-CPU control block, declared across
<linux/kprobes.h> with their contexts and locks left to the reader of
kernel/kprobes.c, and their defaults scattered as __weak functions.

Add <linux/kprobes_arch.h>: every hook an architecture provides or may
provide, what the core provides it with, the context each is called in
and the locks held, and the default the core uses for each optional
hook. The new core this series brings in is written against it, and so
is the new x86-64 code; the other architectures' kprobes code builds on
it unchanged, since it keeps the tree's names and semantics. It adds
one switch and a hook: an arch that defines HAVE_KPROBE_BATCH (as
jump_label's HAVE_JUMP_LABEL_BATCH) queues its breakpoint writes and
the optimizer's jumps and applies them once per batch
(arch_kprobe_queue_arm(), arch_kprobe_queue_apply(), and with
CONFIG_OPTPROBES the queued optimize/unoptimize hooks); the others get
inline defaults that write through their arch_arm_kprobe(),
arch_disarm_kprobe() and optprobe functions as today. A hook that
tells the arch that a range of text went away (module unload, init
memory). Two that map a probe's address to the ip of the ftrace
call site it rides and back, the same address by default (arm64's
probe at a symbol stays there while riding the BL after it), and one
that gives kprobes' ftrace_ops a trampoline of the arch's. And the
index get_kprobe() searches, so that a hit path where a call costs
much can search it inline (get_kprobe_inline()).

Nothing includes the header yet: the switch to the new core does.
EOF

add $core/internal.h $core/table.c
put_no_kunit $core/Makefile
maintainers_files add $core/Makefile
commit "kprobes: a new core: the probe table" <<'EOF'
The kprobes core in kernel/kprobes.c registers probes one at a time:
each register_kprobe() writes its breakpoint and synchronizes every CPU,
each unregister_kprobe() waits for its own RCU grace period, and the
state of a probe and of the aggregate that holds several at one address
is spread over flags that many functions test and change. Attaching
1,000 probes costs the tree 5.3 s of virtual time in QEMU -icount, and
unregistering them one call each 5.3 s.

Add the core of a replacement, in kernel/kprobes/, one file per concept
(internal.h is the map: the structures, every flag with who sets it and
who reads it without a lock, and what each file offers the others).
This first part is the probe table (table.c): one hash table of sites
by address for registration, and for the hit path an open-addressing
index, rebuilt and published whole under RCU, so that get_kprobe()
costs the same with one site or 100,000. A removed entry becomes a
tombstone that a registration may fill at once, with no grace period
in between: get_kprobe() returns the site it found only if it is at the
address asked for, so that a lookup that read an entry's address before
the entry changed hands cannot return another address's site. The
index's structure and its search are in <linux/kprobes_arch.h>, for the
hit paths that search it inline.

Not built until the switch to the new core, later in this series.
EOF

add $core/core.c $core/gone.c
commit "kprobes: a new core: the life cycle of probes" <<'EOF'
The second part of the new core (core.c, gone.c):

- sites and members: a lone probe is its own site; a second probe at
  the same address makes an aggregate that takes over the first's arch
  state; an aggregate's handlers run its members';
- the life cycle (core.c), documented in one place at the top of it:
  every path that may change whether a site should be armed ends in
  kprobe_site_sync_armed() (arming.c, two patches on), the one place
  that arms or disarms;
- registration in batches: register_kprobes() and unregister_kprobes()
  resolve and check every probe (place.c, next patch), queue their
  sites' text changes, apply them once and wait for one grace period
  for all of them, with no lock held (batch.c, three patches on), so
  that threads closing probes at once share grace periods and nobody
  else waits behind them; a failed batch rolls back. The error codes
  are the tree's;
- text that goes away (gone.c: module unload, init memory): its probes
  become GONE, as in the tree.

With the rest of the series, register_kprobes() of 1,000 probes takes
190 ms (virtual) against the tree's 5,259 (0.04), and one call of
unregister_kprobes() for 10,000 probes 5.2 ms against 52.9.

Not built until the switch to the new core, later in this series.
EOF

add $core/place.c
commit "kprobes: a new core: where a probe may go" <<'EOF'
place.c resolves a probe point to the instruction the probe is placed
on and makes every check of it that needs no arch state, in the tree's
order, which decides the error code. The registering path and the
query file (debugfs.c) ask the same function, so that they cannot
disagree; a query has the rule of each refusal recorded, and the
blacklist entry that refused it.

Two of the checks keep data of their own, here too:

- the blacklist. Probing some functions would recurse into the
  breakpoint handler or run with state the handlers cannot cope with;
  NOKPROBE_SYMBOL(), the __kprobes section, the arch's own ranges and
  each module's _kprobe_blacklist name them. The entries of boot (a
  thousand or more on a distribution kernel) are kept in an index of
  disjoint ranges sorted by address besides the RCU list that debugfs
  shows: each probe's check is a binary search, where the tree walks
  every entry for every probe. The blacklist also covers the pieces a
  compiler splits off a blacklisted function (foo.cold, foo.isra.0,
  foo.constprop.0, ...), which the tree's misses: a probe there is as
  dangerous as in foo itself. A module's own entries come and go with
  it.
- the sites the kernel lists. Jump label and static call sites, which
  the kernel rewrites, and BUG() and WARN() sites, which trap on
  purpose, take no probe. The kernel's lookups walk each whole table,
  and for vmlinux's thousands of jump entries that walk cost a probe on
  a NOP more than the rest of registering it. The arch says which
  tables the instruction at the address could be in at all
  (arch_kprobe_listed_tables(); by default all), and vmlinux's jump
  label sites are looked up in an index sorted by address, built the
  first time a probe needs it (the table is final once
  jump_label_init() has sorted it). A module's own table is short and
  still walked. Each refusal is -EINVAL, as in the tree.

Not built until the switch to the new core, later in this series.
EOF

add $core/arming.c
commit "kprobes: arm and disarm sites in batches, with kprobes on ftrace" <<'EOF'
Arming a site means a breakpoint in its text, or, at a function's
ftrace site, its ip in one of our ftrace filters. The tree arms each
probe when it is registered: one text_poke_sync() per probe, one
ftrace filter update per probe.

arming.c holds kprobe_site_sync_armed(), the one function that brings a
site in line with whether it should be armed, and what it queues into
the caller's batch (next patch): breakpoint writes go to the arch
(arch_kprobe_queue_arm(): queued where the arch defines
HAVE_KPROBE_BATCH, written at once by the default elsewhere) and are
applied once per batch with text_mutex held; ftrace filter changes are
summed per ip and applied once per batch after text_mutex is dropped
(ftrace takes it). Queuing a filter change can fail only for an
addition: the queues keep room for removing every ip they hold, so that
a site that leaves (its probe unregistered, its text gone), which is
freed whatever happens, always leaves the filter too, and the count of
sites in each filter stays true. When ftrace refuses the batch (a
livepatch holds one of the functions), each site is tried alone, so
that every site it takes is armed and each it does not is reported, as
the tree reports them. Sites at ftrace sites are served by two
ftrace_ops, one with FTRACE_OPS_FL_IPMODIFY for sites with a
post_handler and one without, so that probes at a function's entry can
live beside a livepatch of it, as in the tree.

An ftrace site that is disarmed because its probes were disabled or are
leaving keeps its ip in the plain filter for a tenth of a second: ftrace
calls our handler there meanwhile, which finds no enabled probe and
returns. Then one ftrace update takes out all such ips, instead of one
update per site: tools that close perf kprobe events one at a time
disable one probe per call. An ip armed again meanwhile just stays;
one that moves to the IPMODIFY filter, or whose text goes away, has
the waiting ips taken out first.

Registering probes at the entries of 1,000 functions in one call takes
0.07 of the tree's time (one ftrace update instead of 1,000).
EOF

add $core/batch.c
commit "kprobes: one batch per registration call, and one grace period" <<'EOF'
The tree changes probes one at a time: each register_kprobe() writes
and serializes its own breakpoint, and each unregister_kprobe() waits
for an RCU grace period of its own.

batch.c holds the batch in which registering, unregistering, enable
and disable, text going away and the global switches change sites: it
takes the text locks when it begins; when it ends, it applies the
queued breakpoint writes once, drops text_mutex, applies the ftrace
filter changes, takes the sites that left out of the table and starts
one grace period for all of them at once, so that it runs while the
rest is done. It waits for it with kprobe_mutex dropped, then frees the
sites that left. A batch in which no probe left the table waits for
nothing; one handed to a deferred probe (kprobe_batch::defer_to, the
unregistering that does not wait, later in this series) leaves the
waiting and the freeing to it.

Every way a site leaves the table is here, so that one file frees
sites: with CONFIG_OPTPROBES, an optimized site whose last probe went
retires (the optimizer's patch says why), its jump written back in
chunks, and a site whose jump was ever written is freed after an
RCU-tasks grace period.
EOF

add $core/slots.c
commit "kprobes: instruction slots reused after an RCU-tasks grace period" <<'EOF'
Architectures that execute the probed instruction out of line
(__ARCH_WANT_KPROBES_INSN_SLOT) get it a slot in executable memory; the
optimizer gets detour buffers the same way. A slot may be freed while a
preempted task is still inside it (a boosted copy runs with interrupts
on), so it may be reused only after an RCU-tasks grace period.

slots.c hands out slots from pages of equal slots on an RCU list, frees
slots "dirty" and leaves them to a worker that waits for the grace
period and reclaims them in batches, so that unregister never waits for
RCU-tasks. Empty pages are freed by the worker too. Slot pages are
listed in /proc/kallsyms as the tree lists them ([__builtin__kprobes]
and [__builtin__optinsn]), for perf.

kprobe_get_insn_slot_within() hands out a slot whose page lies in an
address range, for a copy that branches back with a short reach
(arm64's B: 128 MiB), from the arch's
arch_kprobe_alloc_insn_page_within() when no page there has room;
kprobe_get_optinsn_slot_within() does the same for a detour.
EOF

add $core/counters.c
commit "kprobes: per-CPU hit counters for every probe" <<'EOF'
/sys/kernel/debug/kprobes/stats (debugfs.c, later in this series) shows
how often each probe was hit. A shared counter would make every hit of
a busy probe bounce a cache line between CPUs, and a per-CPU allocation
per probe costs a percpu chunk lookup per registration.

counters.c carves one per-CPU counter per probe and per aggregate out
of shared per-CPU chunks, with a bitmap per chunk, and gives them back
after the grace period that ends the last hit. An aggregate counts its
hits once for all its members; a member's own counter holds the
difference, so that a hit on four probes at one address costs one
increment.
EOF

add $core/kretprobe.c
commit "kprobes: kretprobe instances, on rethook and without it" <<'EOF'
A kretprobe is a kprobe at a function's entry whose handler replaces
the return address, so that the function returns to a trampoline that
calls the user's return handler.

kretprobe.c builds them on rethook where the architecture has it
(CONFIG_KRETPROBE_ON_RETHOOK: x86, riscv, s390, loongarch,
powerpc); elsewhere the core keeps the instances itself: a pool per
kretprobe (objpool), a per-task list of pending returns, the trampoline
handler and the lookup the unwinders use to find the real return
address. maxactive, nmissed, entry_handler and data mean the same
either way, as in the tree. register_kretprobes() and
unregister_kretprobes() go through the batched registration.
EOF

add $core/deferred.c
commit "kprobes: unregister without waiting for a grace period" <<'EOF'
unregister_kprobe() returns only after an RCU grace period, so that the
caller may free the probe. Clients that take probes down one at a time
(a perf kprobe event closed, a kprobe_events line removed: what
bpftrace, perf, pwru and Tetragon do) wait for one grace period per
probe, and detaching a few hundred probes takes seconds.

Add kprobe_unregister_deferred() and kretprobe_unregister_deferred():
the probe leaves its site as with unregister_kprobe(), so that no
handler of it starts after the call returns, and the call returns at
once. The probe goes back to its owner through a callback, from a work
item, after one RCU grace period that began once the probe was out
(start_poll_synchronize_rcu() when it leaves, cond_synchronize_rcu() of
the newest pending one in the work item), so that the probes
unregistered meanwhile share one grace period. The core frees its own
state of the probe (its site, instruction slot and hit counter; a
kretprobe's instances) before the callback runs. Until then the probe
is the core's: register_kprobe() and register_kretprobe() refuse it
with -EBUSY, and unregistering it again leaves it alone (a kretprobe
keeps its instances, which a call in flight may still take from), each
telling a pending probe by a flag and a hash, at no cost per
registration. kprobe_deferred_barrier() waits for every release asked
for, and takes out of the ftrace filter the entries that wait to leave
it (arming.c), for module exit and tests; a module that goes with
releases pending into its code or of its probes has them waited for
before its memory is freed, whether or not its exit called it.
unregister_kprobe() is unchanged.
EOF

add $core/optimizer.c
commit "kprobes: a batched optimizer" <<'EOF'
On architectures with CONFIG_OPTPROBES, an armed probe may be reached
by a jump into a detour buffer instead of a breakpoint: no trap per
hit. The tree's optimizer decides this in many places, each probe
being queued, unqueued and unoptimized by functions of its own.

optimizer.c holds the optimizer's states (documented with the others at
the top of core.c) and one function that moves a site between them,
called from kprobe_site_sync_armed(): a site is optimizable when it
should be armed, has a detour, no post_handler and no other probe
inside its region, and the debug.kprobes-optimization sysctl is 1. (A
probe with a post_handler goes in as a lone site, without a detour:
its breakpoint hits skip an aggregate's handler loop; the first probe
without one to join its site gives the site its detour.) A
delayed work claims the queued sites, waits one RCU-tasks grace period
for all of them (no task may still be in the text the jump covers),
and asks the arch to write all their jumps in one batch
(arch_kprobe_queue_optimize(); arm's and powerpc's optprobe code is
driven through the tree's interface, one site at a time). An optimized
site whose last probe goes "retires" (batch.c): it leaves the table at
once, its jump is written back in chunks while the unregistering call's
grace period runs and by a work item after it, and no path decodes text
while one retires. Sites whose jump was ever written are freed after
an RCU-tasks grace period, since a task may be on its way through the
detour to the handler call.

An arch may finish a site's detour when the optimizer first claims it
(arch_kprobe_ready_detour(), default: nothing to do), and give
KPROBE_INSN_ALIGN when its instructions start at a finer alignment
than kprobe_opcode_t (riscv: 2 bytes in 32-bit units), so that a probe
at any place inside a jump's region is seen.

1,000 probes registered in one call are all optimized 195 ms (virtual)
after the call, against the tree's 5,262 ms.
EOF

add $core/debugfs.c
commit "kprobes: debugfs: per-probe hits in stats, and a query file" <<'EOF'
Keep /sys/kernel/debug/kprobes/list, enabled and blacklist in the
tree's formats, and add two files:

- stats: each probe's hits and misses, from the per-CPU counters;
- query: write SYMBOL[+OFFSET], MODULE:SYMBOL[+OFFSET] or an address,
  read back what registering a probe there would do without registering
  anything: where it goes, whether it is refused and by which rule
  (the blacklist entry named), whether it takes the ftrace path, and
  whether it would be boosted and optimized, and if not, why. Users of
  bpftrace and bcc have long met a bare -EINVAL; the answer comes from
  the same checks registration runs (kprobe_check_point()), so the two
  cannot disagree. The probe asked about is marked KPROBE_FLAG_QUERY:
  an arch that knows the flag (x86-64) takes no slot and writes no text
  for it. Each open of the file has its own answer, read back through
  the descriptor the point was written to.
EOF

add $x86/breakpoint.c
commit "x86/kprobes: breakpoints, out-of-line execution and boosting" <<'EOF'
The x86-64 part of the new kprobes: a probe point gets an int3; on a
hit, kprobe_int3_handler() runs the handlers and then either emulates
the instruction on the trap frame (control transfers, and cli, sti,
pushf and popf, which touch IF) or runs a copy of it from an
instruction slot with interrupts off, RIP-relative operands fixed up,
followed by an int3 that brings it back. A fault in the copy (a page
fault or #GP from the trap handlers, #UD, #SS, #DE or an FPU trap from
the die chain) is rewound to the original address so that its
exception-table fixup applies; an access whose machine check is
recovered (copy_mc) is refused, since the machine check handler looks
its fixup up by the faulting address before anyone else.

Boosting: once a copy ran cleanly, hits of a site without a
post_handler run a second copy that jumps back by itself, so one trap
per hit instead of two. The first copy to end, cleanly or by a fault,
settles it once (cmpxchg), so that a slot a CPU may already run the
second copy of is never freed as one that was not boosted.

A probe hit inside another hit (from a handler, or from an NMI or a
data breakpoint's #DB in the middle of one) runs no handlers and keeps
no per-CPU state: it always runs the second copy, and a fault there is
rewound with the original's address kept in the slot. So hits nest to
any depth, where the tree keeps one level and calls BUG() on a probe
hit while a nested hit single-steps.

The load of load_unaligned_zeropad() is refused with -EILSEQ, as a
kCFI check is: its fault fixup decodes the instruction at the faulting
address, which after a fault in the copy is the probe's int3 (the
tree's kprobes accept the probe and oops when the load faults).

Breakpoint writes are queued with text_poke()
and made visible with one text_poke_sync() per batch; every text change
is told to perf as a PERF_RECORD_TEXT_POKE.

A boosted hit costs 271 instructions in QEMU -icount against the tree's
287, one with a post_handler 521 against 553.

Not built until the switch later in this series.
EOF

add $x86/funcmap.c
commit "x86/kprobes: decode each probed function once" <<'EOF'
To check that a probe address is an instruction boundary, and to find
out whether a region may be replaced by a jump (no jump from elsewhere
in the function lands inside it), the tree decodes the function from
its start for every probe, and looks every address it decodes up in
the symbol table (a module's symbols one by one). Probing every
instruction of a module function of 24,000 one-byte instructions then
takes the tree 1.5 s (virtual, QEMU -icount) per probe.

funcmap.c decodes a function once for all the probes in it: its
instruction starts, the landings of its jumps and of its exception-table
fixups, kept for the 64 functions used last and dropped when their text
goes away (so only for text whose going kprobes hears of: the kernel's,
and a module's once kprobes was told it is coming). The text is read
as it was before any probe of ours, with our jumps mended; no path
decodes while a jump kprobes cannot find is in the text. Registering
1,000 probes on consecutive instructions of that function costs 103 us
per probe, and 10,000 of them 80 us per probe.
EOF

add $x86/optimize.c
commit "x86/kprobes: jump optimization, with branches in the region" <<'EOF'
An optimized probe replaces the five bytes at the probe point with a
jump to a detour buffer that saves a pt_regs, calls the handlers (a
pre_handler that redirects leaves through iret), runs a relocated copy
of the instructions the jump covers and jumps back. The tree refuses a
region holding any branch; on 24 ordinary functions (README of the
project tree) it optimizes 0.51 of the probe-able offsets.

optimize.c relocates a conditional jump anywhere in the region (as a
rel32 jcc), and a jmp, ret or indirect jmp as its last instruction; a
call or indirect call last becomes a push of the region's end and a
jmp, so that the callee returns to the text. Padding after them (int3
after jmp and ret, nops after a call) is not copied. With IBT an
indirect tail call no longer keeps the whole function from being
optimized. Regions are still checked for jumps into them,
exception-table entries, ENDBR and text that other mechanisms patch
(jump labels, static calls, alternatives). Jumps are queued with
text_poke_queue() and written in one batch per optimizer run.

On the same 24 functions: 0.95 of the offsets optimized. An optimized
hit costs 94 instructions against the tree's 99.
EOF

add $x86/ftrace_entry.c $x86/ftrace_trampoline.S
commit "x86/kprobes: probes at ftrace sites, called from their call site" <<'EOF'
A probe at a function's ftrace site (its entry, after ENDBR) is served
by ftrace: the handlers run on the pt_regs of the entry, and the
post_handler as if the five-byte nop had been single-stepped. No text
of ours is written.

Most probes real clients place are at function entries, so this is the
hit that matters most, and ftrace's generic path costs it most of its
time: ftrace's regs trampoline, its recursion guard, then our lookup.
ftrace calls an ftrace_ops' own trampoline straight from a function's
call site while that ops is the function's only user (ops->trampoline
without FTRACE_OPS_FL_ALLOC_TRAMP; ftrace moves the call site to its
own trampoline when another user comes, and back when it leaves). So
our ops get one, kprobe_ftrace_trampoline: it saves the registers as a
pt_regs and calls kprobe_ftrace_trampoline_hit(), which finds the probe
by the call site's address with the index searched inline
(get_kprobe_inline()) and runs it with preemption off. The only
recursion guard needed is the one every hit path has, kprobe_running():
nothing before current_kprobe is set is traced, and a hit nested in the
handlers is missed. The function then goes on past its call site with
the argument registers from regs; the callee-saved ones are intact, and
r10, r11 are dead at an entry, as ftrace's own trampolines assume. A
pre_handler that redirects gets every register from regs, ip included.
Attaching and detaching stay what they were: an ip added to or removed
from the ops' filter, in batches. When other ftrace users trace the
function too, ftrace's trampoline calls kprobe_ftrace_handler() as it
calls them.

A hit at an entry costs 91 instructions, the tree's 160; a kretprobe
344, the tree's 416 (make bench, QEMU -icount).
EOF

# ---- the switch ------------------------------------------------------------

put include/linux/kprobes.h \
	arch/x86/include/asm/kprobes.h $x86/common.h
put_no_kunit $x86/Makefile
for p in "$repo"/patches/switch-*.patch; do
	[ -e "$p" ] || continue
	g apply --index "$p"
done
commit "kprobes: switch to the new core and x86-64 code" <<'EOF'
Build kernel/kprobes/ instead of kernel/kprobes.c, and the new x86-64
files instead of core.c, opt.c and ftrace.c, and switch the headers.

The interface the rest of the tree uses is unchanged: struct kprobe and
struct kretprobe with their fields, the KPROBE_FLAG_* flags, the
register/unregister/enable/disable functions with their error codes,
kprobe_running(), the hooks traps.c and fault.c call. <linux/kprobes.h>
includes <linux/kprobes_arch.h> for the arch interface. get_kprobe(),
within_kprobe_blacklist() and current_kprobe are now exported (GPL), so
that modules, the KUnit suite among them, can use kprobe_running().
common.h keeps the register save macros the rethook trampoline uses.

The old files are removed in the next three patches, so that this one can
be read on its own.
EOF

# ---- the old code goes ------------------------------------------------------

# In two halves, each under 2,500 lines: the kretprobe code onwards,
# then the rest.
old_core=$work/kernel/kprobes.c
cut=$(grep -n '^#ifdef CONFIG_KRETPROBES$' "$old_core" | sed -n 1p | cut -d: -f1)
head -n $((cut - 1)) "$old_core" > "$old_core.new"
mv "$old_core.new" "$old_core"
g add -f kernel/kprobes.c
commit "kprobes: remove the old core's kretprobes, module handling and debugfs" <<'EOF'
Nothing builds kernel/kprobes.c since the switch to kernel/kprobes/.
Remove its second half (kretprobes and their instances, the module
notifier, init, debugfs); the next patch removes the rest. The removal
is split only to keep each patch under 2,500 lines.
EOF

remove kernel/kprobes.c
maintainers_files add kernel/kprobes/
maintainers_files del $core/Makefile $core/internal.h $core/core.c \
	$core/table.c $core/place.c $core/gone.c $core/arming.c $core/batch.c \
	$core/slots.c $core/counters.c \
	$core/kretprobe.c $core/deferred.c $core/optimizer.c $core/debugfs.c
commit "kprobes: remove the rest of the old core" <<'EOF'
Nothing builds kernel/kprobes.c since the switch to kernel/kprobes/.
Remove what is left of it, and let MAINTAINERS name the directory.
EOF

g rm -q $x86/core.c $x86/opt.c $x86/ftrace.c
maintainers_files del $x86/breakpoint.c $x86/funcmap.c $x86/optimize.c \
	$x86/ftrace_entry.c $x86/ftrace_trampoline.S
maintainers_files add $x86/ arch/x86/include/asm/kprobes.h
commit "x86/kprobes: remove the old x86 code" <<'EOF'
Nothing builds arch/x86/kernel/kprobes/core.c, opt.c and ftrace.c since
the switch to the new x86-64 code. Remove them, and name the directory
and <asm/kprobes.h> in the KPROBES entry of MAINTAINERS.
EOF

# ---- arm64 ---------------------------------------------------------------

a64=arch/arm64/kernel/probes
g rm -q $a64/kprobes.c $a64/kprobes_trampoline.S
# put_probes_headers DIR HEADER BLOCK...: DIR/Makefile and HEADER (an
# asm/kprobes.h) without the parts (KPROBES_ON_FTRACE, OPTPROBES) that
# later patches add.
put_probes_headers() {
	local dir=$1 hdr=$2 pat
	shift 2
	pat=$(IFS='|'; echo "$*")
	mkdir -p "$work/$dir"
	python3 - "$repo/$dir/Makefile" "$pat" > "$work/$dir/Makefile" <<'PY'
import re, sys
words = {'KPROBES_ON_FTRACE': r'ftrace', 'OPTPROBES': r'optimiz|optprobe'}
pat = '|'.join(words[b] for b in sys.argv[2].split('|'))
text = open(sys.argv[1]).read()
if '\n\n# KUnit' in text:
    text = text[:text.find('\n\n# KUnit') + 1]
for line in text.splitlines():
    if not re.search(pat, line):
        print(line)
PY
	python3 - "$repo/$hdr" "$pat" > "$work/$hdr" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# A block's #else part (the stubs for the option unset) stays, unguarded.
for b in sys.argv[2].split('|'):
    text = re.sub(r'#ifdef CONFIG_%s\n.*?(?:#else\n(.*?))?#endif\n\n' % b,
                  lambda m: m.group(1) + '\n' if m.group(1) else '', text, flags=re.S)
print(text, end='')
PY
	g add -f "$dir/Makefile" "$hdr"
}
put_a64_headers() {
	put_probes_headers $a64 arch/arm64/include/asm/kprobes.h "$@"
}
put_a64_headers KPROBES_ON_FTRACE OPTPROBES
add $a64/breakpoint.c $a64/arming.c $a64/kretprobe.c $a64/kretprobe_trampoline.S
commit "arm64: kprobes: a breakpoint path of our own, batched arming" <<'EOF'
Replace arm64's kprobes.c and kprobes_trampoline.S with code written
against <linux/kprobes_arch.h>. decode-insn.c and simulate-insn.c stay
as they are (uprobes share them), and so does what a hit does: a
branch, a PC-relative address or a literal load is simulated in the
BRK handler, anything else steppable runs from a slot ended by a
second BRK, with DAIF masked.

What changes:
- Boosting: a copied instruction hit with no post_handler to run (and
  not nested) runs from a second copy in its slot followed by a B back
  to the next instruction, with the interrupt mask of the probed code:
  one exception per hit, not two. The slot is taken from a page within
  the B's 128 MiB of the probe (vmalloc or module area, wherever KASLR
  put the kernel and the module); where none can be had the probe is
  only stepped, as before, and the query file says so. A task
  preempted in a boosted copy keeps the slot from reuse until an
  RCU-tasks grace period has passed (the slot is freed dirty).
- Arming is batched (HAVE_KPROBE_BATCH): register_kprobes() of N
  probes writes its N breakpoints in one stop_machine(), not N. When
  every instruction involved is one the architecture lets change under
  a running CPU (B, BL, NOP, ISB, BRK), the writes go without
  stop_machine() and one IPI round synchronises the CPUs.
- A kretprobe's return runs through a trampoline that saves a pt_regs
  and calls the handler (no BRK), with a frame record the unwinder
  maps back to the real return address.
- Refused, which the tree accepts: an LDR (literal) into a SIMD&FP
  register, which the decoder's literal test misses, so the tree steps
  it out of line and loads from an address relative to the slot; and,
  with DYNAMIC_FTRACE_WITH_CALL_OPS, the two words before a function's
  patch site, which hold the ftrace_ops pointer ftrace_caller loads.
- PSTATE.BTYPE is cleared wherever the hit resumes somewhere else than
  the probed instruction (a redirecting pre_handler, a simulated
  branch, the slot and back), so a landing pad's BTYPE is not checked
  against the instruction we resume at.
- Hits count per probe (arch_kprobe_counts_hits), disabled-but-armed
  sites run their instruction without handlers, and a BRK whose probe
  left after the CPU took it (the word already restored) retries the
  original instruction instead of dying.
- The query file names the rule that refused a point (misaligned, an
  exception table entry, inside an exclusive load/store sequence, ...).

Error codes are the tree's arm64 ones: -EINVAL for a misaligned
address and for every refused instruction, -ENOMEM.
EOF

add $a64/ftrace_entry.c $a64/ftrace_stub.S
put_a64_headers OPTPROBES
commit "arm64: kprobes: probes at ftrace sites" <<'EOF'
A traced arm64 function starts with "mov x9, lr; bl ftrace_caller"
(after BTI C with BTI). Serve a probe at the function's symbol (+0) by
ftrace, as x86-64 serves one on its five-byte call: the core puts the
BL's address in its ftrace_ops' filter, and ftrace calls
kprobe_ftrace_handler. No exception is taken, and kprobes writes no
text. The MOV (and BTI) before the BL only copy lr to the scratch x9,
so the handlers see the registers of the entry.

The probe stays at +0, where the tree's arm64 puts its breakpoint: the
list, trace lines and bpf_get_func_ip() show the symbol, which tools
match addresses against. arch_kprobe_ftrace_ip() maps the probe's
address to the BL and arch_kprobe_ftrace_site() maps the BL back to
the site, through the table (the word before the MOV may lie outside
the function's section). The BL itself is refused, as in the tree.

arm64 has DYNAMIC_FTRACE_WITH_ARGS only: ftrace_caller saves x0-x8,
fp, lr, sp and pc, not a pt_regs. kprobe_ftrace_handler is an assembly
stub that saves x18-x28 too, which are still the function's when
ftrace_caller called it itself (fregs then sits at its sp: kprobes is
the function's only ftrace user); kprobe_ftrace_hit() builds the
handlers' pt_regs from both, and writes back what a handler may change:
x0-x8, fp, lr (a kretprobe's trampoline goes there), x19-x28 when they
were the function's, and pc when a pre_handler redirected. Through
ftrace's list function (another ftrace user of the function) x19-x28
read 0. sp is read-only; x10-x17, scratch at an entry, read 0.
kprobes.rst says so.

That path runs ftrace_caller's frame, the ops' func, the stub and a
lookup by call for every hit, and entries are where real clients put
most probes. ftrace calls an ftrace_ops' own trampoline straight from
the call site while that ops alone traces the function
(ops->trampoline without FTRACE_OPS_FL_ALLOC_TRAMP): arm64's
ftrace_make_call() points the BL at it when it is in reach, and at
ftrace_caller otherwise, which still reaches our ops. So our ops get
one, kprobe_ftrace_trampoline: it saves the registers into a pt_regs
on the stack, with frame records for the function and its caller so
that the unwinder sees both, and calls kprobe_ftrace_trampoline_hit(),
which finds the site in the index inline, runs it with kprobe_running()
as the only recursion guard (nothing before current_kprobe is set is
traced) and returns where the function goes on. The trampoline puts
back x0-x8, x19-x28, fp and lr, and RETs there: no landing pad is
needed. The handlers see the same pt_regs on both paths. A hit at an
entry costs 134 instructions, the tree's BRK 515; a kretprobe 445, the
tree's 963 (make bench-arm64, QEMU -icount).

A pre_handler that redirects goes where it would go from the tree's
breakpoint at +0. A pc inside the entry before the body (the MOV, the
BL: "skip the probed instruction") resumes past the BL, which would
otherwise hit the probe again for ever. A return to the caller (pc =
lr: fail_function, bpf_override_return) goes through a "ret": with a
direct trampoline on the function (BPF fexit, fmod_ret), ftrace gives
it the pc it would return to, which the trampoline calls as the
function's body: the caller's code would run as a callee.

Nothing builds this until the arch's Kconfig selects
HAVE_KPROBES_ON_FTRACE, later in the series.
EOF

add $a64/optimize.c $a64/optprobe.S
put arch/arm64/include/asm/kprobes.h
put_no_kunit $a64/Makefile
commit "arm64: kprobes: optimized probes, a B to a detour" <<'EOF'
A copied instruction's hit costs one exception when boosted, two when
stepped. Reach such a probe, when no post_handler needs the trap after
the instruction, by a B to a detour instead of the BRK: no exception.
The arm64 optprobes posted from 2021 to 2025 were not merged; each
objection raised in their review is answered here:

- Reach under KASLR: the detour is a slot of a page taken within the
  B's 128 MiB of the probe, and of a branch's target where it has one
  (kprobe_get_optinsn_slot_within()), for the kernel and for modules,
  wherever KASLR put them, modules in a 2 GiB window too. A probe with
  no page in reach stays a breakpoint, and the query file says why.
- PSTATE: the handlers' pt_regs holds NZCV, DAIF and EL1h as the
  probed code has them; NZCV and the registers are restored from it.
  A redirecting pre_handler's hit leaves through a BRK, whose
  exception saves every PSTATE field, and an ERET that restores them
  with the handler's registers, pc and sp. Landing pads (BTI, PACIASP,
  PACIBSP) are never replaced: an indirect branch arriving at a B
  would fault under BTI. BTYPE is 0 after the two direct branches in
  and out.
- PC-relative instructions are not run as they are: the detour does
  what they do at the probe's address. ADR and ADRP load their result
  from a literal, LDR/LDRSW (literal) load from the literal's address,
  B and BL go to the target (BL setting x30 to the instruction after
  the probe first, so the callee returns to the probed code), B.cond,
  CBZ/CBNZ and TBZ/TBNZ test the opposite condition over a B to the
  target. BLR, whose callee would return into the detour, and b.al
  stay on their one-BRK path.
- Patching: the B replaces the BRK and the BRK the B without
  stop_machine() (both may change under a running CPU), one IPI round
  a batch, after one that makes the freshly written detours visible.
- TTBR0 PAN: an exception entry switches user access off; the detour
  does not, so nothing is optimized under it.

The detour saves x16, x17, x29 and x30, loads its site and the common
code's address from literals and calls it (BLR: the common code may be
out of a BL's reach); kprobe_optprobe_common saves the rest as a
pt_regs with a frame record naming the probed instruction, and
kprobe_optprobe_hit() runs the handlers with preemption disabled and
interrupts as the probed code had them. The detour then runs its copy
of the instruction and branches back.

In QEMU -icount (make bench-arm64 of the project, the tree's arm64
kprobes in the same run), an optimized hit costs 133 instructions over
the call and no exception, against the tree's 516.8 and two; over
every body offset of 24 ordinary functions, 899 of the 915 that take a
probe are optimized (PACIASP and BLR are left), the tree's none.

Nothing builds this until the arch's Kconfig selects HAVE_OPTPROBES,
at the end of the series.
EOF

# ---- riscv ---------------------------------------------------------------

rv=arch/riscv/kernel/probes
add $rv/liveness.c $rv/emulate.c
commit "riscv: kprobes: a register free after a probe, and instructions run on pt_regs" <<'EOF'
Two pieces of riscv's new kprobes code, which nothing builds before
the next patch, where the breakpoint path that uses them replaces
kprobes.c.

liveness.c finds a register a copied instruction's slot can jump back
through, with AUIPC and JALR: one the text after the probe writes
before reading on every path. It solves that as the backward dataflow
problem it is, from "all dead" down to a fixed point, for what a query
reaches (both ways at a branch, round loops, a JAL x0 and a 4-byte NOP
taken as jump label sites that may change, a budget of 512
instructions), and keeps the answers with the function's decoded text,
so that the probes of a batch in one function find most of theirs
solved. A call or a return ends a path: with GCC's -fipa-ra a caller
keeps values in caller-saved registers across calls of functions known
to leave them alone, so the calling convention alone proves nothing
there; but a function that writes such a register anywhere does not
leave it alone, so t0-t6 and a2-a7 the function writes are dead at its
returns, and t0-t6 a direct callee writes at the call. ra and s1-s11
count where the function saved them and writes them again before
reading (s0, the frame pointer, never). An access with an exception
table entry ends a path (its fix-up may read anything); the table is
searched once for the function's range. Readers of text go through
kprobe_text_parcel(), which the optimizer's patch makes see what a
written jump replaced.

emulate.c carries out, in the EBREAK handler, on the trap's pt_regs,
the instructions the tree would step (a second exception) when a
post_handler waits or no register is free: integer arithmetic (OP,
OP-IMM, their 32-bit forms, MUL, LUI and the compressed forms of those)
and loads and stores of integer registers that no exception table entry
is for, as one access of the same width at the same address through
__get_kernel_nofault()/__put_kernel_nofault(). An access that faults
leaves the registers alone and the hit goes to its step, for the copy
to fault as the instruction would have. Writes to gp and tp, atomics,
floating point and the rest are left to the copy. RV64 only.
EOF

g rm -q $rv/kprobes.c
put_probes_headers $rv arch/riscv/include/asm/kprobes.h KPROBES_ON_FTRACE OPTPROBES
add $rv/breakpoint.c $rv/arming.c
commit "riscv: kprobes: a breakpoint path of our own, boosted copies" <<'EOF'
Replace riscv's kprobes.c with code written against
<linux/kprobes_arch.h>. decode-insn.c and simulate-insn.c stay as they
are (uprobes share them), rethook still runs the kretprobes, and so
does what the tree's hit does: a branch, a jump or an AUIPC is
simulated in the EBREAK handler, anything else the decoder accepts runs
from a slot ended by a second EBREAK, with interrupts masked.

What changes:
- Boosting: a copied instruction hit with no post_handler to run (and
  not nested) runs from a second copy in its slot followed by AUIPC and
  JALR back to the next instruction: one exception per hit, not two.
  The jump's register is one liveness.c proves dead after the probe.
  The slot is taken from module space, within AUIPC's 2 GiB of kernel
  and module text. A task preempted in a boosted copy keeps the slot
  from reuse until an RCU-tasks grace period has passed (the slot is
  freed dirty).
- Not boosted (a post_handler, no register free), integer arithmetic,
  loads and stores are carried out on the trap's registers (emulate.c):
  one exception per hit. Only what is left (atomics, floating point, an
  access with an exception table entry, whose fault must be fixed up at
  the probe's address) is stepped, as before, and the query file says
  which.
- Arming is batched (HAVE_KPROBE_BATCH): register_kprobes() of N
  probes writes its N breakpoints in one stop_machine(), not N. Every
  write still waits for stop_machine(): an EBREAK may replace a 4-byte
  instruction on a 2-byte boundary, a store the ISA does not make
  atomic for another hart's fetch; each hart runs FENCE.I before going
  on (Zifencei), as patch_text() has them do.
- After a step only SPIE is put back: the copy of an FP instruction
  leaves FS dirty, which restoring the whole saved sstatus would undo.
- Hits count per probe (arch_kprobe_counts_hits), disabled-but-armed
  sites run their instruction without handlers, a nested step keeps
  the outer hit's saved status, and an EBREAK whose probe left after
  the hart took it (the text already restored) retries the original
  instruction instead of being reported as a BUG().
- The instruction boundary check walks from the function's start that
  the core has already looked up, and entry text is blacklisted as
  well as the irqentry text.
- Refused, which the tree accepts: an LR, an SC and anything between
  them (-EINVAL; the trap's return clears the reservation, so the SC
  would fail every time round its loop), and the second word of an
  ftrace call site (-EILSEQ; ftrace and kprobes would each write their
  own instruction back over the other's).

Error codes are the tree's riscv ones: -EILSEQ for an odd address or
one inside an instruction, -EINVAL for a refused instruction, -ENOMEM.
EOF

add $rv/ftrace_entry.c $rv/ftrace_stub.S
put_probes_headers $rv arch/riscv/include/asm/kprobes.h OPTPROBES
commit "riscv: kprobes: probes at ftrace sites" <<'EOF'
A traced riscv function starts with ftrace's call site, "auipc t0;
jalr t0" at its symbol. Serve a probe there by ftrace, as x86-64 and
arm64 serve one at theirs: the core puts the site in its ftrace_ops'
filter and no exception is taken. The site's second word stays refused
(-EILSEQ).

riscv has DYNAMIC_FTRACE_WITH_ARGS only: ftrace_caller saves a0-a7, ra,
sp, the resume address and, with the graph tracer's frame test, s0; not
a pt_regs. While kprobes alone traces a function, ftrace calls our
ftrace_ops' own trampoline (ftrace_ops::trampoline) straight from the
call site: it saves every register as the entry's pt_regs, with two
frame records so that a stack trace from a handler shows the function
and its caller, runs the probe, and loads back ra, s0-s11 and a0-a7,
which a handler may change (a kretprobe puts its trampoline in ra).
No generic ftrace code runs on that path. With other ftrace users of
the function, ftrace_caller calls kprobe_ftrace_handler through its
list: an assembly stub that saves s0-s11, still the function's when
ftrace_caller called it itself, and builds the pt_regs from them and
ftrace_regs; s1-s11 read 0 through the list. kprobes.rst says which
registers a handler sees and may change.

The pre_handler sees the symbol as pc, as a breakpoint there would show
it; the post_handler the address after the call site. A pre_handler
that resumes inside the call site goes on after it (through it again
it would hit the probe again, for ever), and one that returns for the
function (pc = ra: fail_function, bpf_override_return) goes through a
"ret", so that a direct trampoline on the function that goes on where
ftrace's call would (BPF's for fentry programs) does not run the
caller's code as the function's rest. BPF's trampoline for fexit and
fmod_ret programs runs the function's body itself: the caller then gets
the body's return value, not the handler's.

A kretprobe's rethook records s0 at the entry and checks it at the
return, so the patch that selects HAVE_KPROBES_ON_FTRACE for riscv
(at the end of the series, with arm64's) does so only with the graph
tracer and frame pointers, where ftrace_caller keeps s0.
EOF

add $rv/optimize.c $rv/optprobe.S
put arch/riscv/include/asm/kprobes.h
put_no_kunit $rv/Makefile
commit "riscv: kprobes: optimized probes, a jump to a detour" <<'EOF'
Every riscv kprobe takes an EBREAK, and a stepped copy a second one.
Reach a probe, when no post_handler needs the trap after the
instruction, by "auipc rd; jalr x0, rd" to a detour instead: no
exception. Optimized probes for riscv were posted (Chen Guokai, Liao
Chang, 2022-2023) and not merged; the points of their review are
answered here:

- Instruction boundaries: the jump replaces the whole instructions of
  the probe's first 8 bytes (8, or 10 with a C.NOP behind the jump when
  a 4-byte instruction straddles its end). Boundaries are found by
  walking the function, and readers of text (the walk, the liveness
  scan, the region of another probe) read what a written jump
  replaced, kept in the site (kprobe_text_parcel()): a probe on an
  instruction inside an optimized region is taken and the jump taken
  out; one inside an instruction there still gets -EILSEQ.
- Compressed instructions are laid out and copied as they are.
- The register the jump writes is one the code writes before reading
  it on every path from the probe, found in the text (liveness.c); so
  is each register the detour's jumps out use, where they land. Where
  none is free right after the region, the detour goes on with copies
  of the next instructions (up to 16 bytes from the probe, where a
  probe keeps the site a breakpoint as one in the region does) and
  jumps back where one is. None found: the probe stays an EBREAK.
- The detour does what the region does, at the probe's address:
  copied instructions run as they are, AUIPC loads its value, a branch
  becomes a branch over a jump to its target, a jump a jump, a return
  runs as it is. Calls are refused (the callee would return into the
  detour), and so are LR/SC, accesses with a fix-up, regions that a
  jump of the function, a fix-up or a jump table may enter in the
  middle, jump label and ftrace sites.
- Patching: the jump is written and taken out in the stop_machine()
  that already writes riscv's breakpoints (one per batch), where every
  hart waits and executes FENCE.I after. A region is two or more
  instructions, so the kernel must not be preemptible (no task may
  stop inside one, nor between the AUIPC and the JALR), the rule
  riscv's own ftrace "auipc; jalr" call sites rely on in 6.12: the
  Kconfig patch selects HAVE_OPTPROBES only then, and on 64-bit.
- Reach: the detour slot is taken from the module area within AUIPC's
  2 GiB of the probe and of where the detour jumps back, for the
  kernel and modules wherever KASLR put them; none in reach, the probe
  stays an EBREAK.
- The slot, the checks that read the function and the detour's write
  wait for the optimizer (arch_kprobe_ready_detour()): registering
  stays a breakpoint write a probe.

The detour saves t0 and t1 and calls kprobe_optprobe_common (out of a
JAL's reach), which saves the rest as a pt_regs with a frame record
naming the probed instruction; kprobe_optprobe_hit() runs the handlers
with preemption disabled and interrupts as the probed code had them. A
pre_handler that redirects leaves through an EBREAK whose trap return
loads the registers it set, sp and pc included.

Nothing builds this until the arch's Kconfig selects HAVE_OPTPROBES,
at the end of the series.
EOF

# ---- samples, tests, documentation ----------------------------------------


put samples/kprobes/kprobe_example.c samples/kprobes/kretprobe_example.c \
	samples/kprobes/Makefile
commit "samples/kprobes: samples that show the API as it is" <<'EOF'
kprobe_example registers a kprobe on a function (kernel_clone unless
the symbol parameter names another) and prints from its pre_handler and
post_handler; with post=0 it has no post_handler, so that it can be
optimized, which /sys/kernel/debug/kprobes/list then shows.
kretprobe_example times each call of a function with an entry_handler
and per-instance data. Both print the error code when registration
fails.
EOF

# The KUnit suites: the cases every architecture runs and the kretprobe
# cases; then x86-64's in three steps, each earlier one written by the
# tree's own unifdef (scripts/unifdef.c; it exits 1 when it took
# something out) without the later ones' cases; then arm64's.
gcc -O2 -o "$build/unifdef" "$pristine/scripts/unifdef.c"
put lib/test_kprobes.c
add lib/test_kprobes.h
commit "kprobes: a KUnit suite for the core" <<'EOF'
Replace lib/test_kprobes.c with a suite of the core's behaviour on
every architecture: registration by symbol and address, in batches,
and the rollback of a failed batch; each refusal with the tree's error
code; aggregates and their members' handlers; enable and disable;
recursion counted in nmissed; handler context; hit counters.
Transitions are raced against a second thread hitting the probes.
Unregistering waits for its grace period holding no lock (two threads
unregister and a third disables and enables a probe while an RCU
reader holds the grace period off), and unregistering without waiting
releases each probe once, after its readers; the enabled switch arms
every ftrace site it can while another IPMODIFY user holds one; every
allocation of registering fails once in turn (fault injection) and
gives -ENOMEM with nothing left behind.

lib/test_kprobes.h holds what this suite shares with those that follow
(the kretprobe cases, and each architecture's beside its code): the
counting handlers, the checks a handler makes, a thread hitting a
probe.
EOF

add $core/kretprobe_kunit.c
put $core/Makefile
commit "kprobes: KUnit cases for kretprobes" <<'EOF'
Add a KUnit suite for kretprobes beside the core
(kernel/kprobes/kretprobe_kunit.c, a module of its own): entry_handler,
data and maxactive, batches and their rollback, the return address the
probed function and its caller see, nested and recursing hits, tasks
exiting inside a probed call, unregistering while calls are in flight
and without waiting, and the stack traces through the trampoline that
the tree's suite checked.
EOF

# Then the x86-64 cases of the breakpoint path, then those of jump
# optimization, then those that need a data breakpoint, each in a patch
# of its own.
"$build/unifdef" -B -UCONFIG_HAVE_HW_BREAKPOINT -UCONFIG_OPTPROBES \
	"$repo/$x86/kunit_cases.c" > "$work/$x86/kunit_cases.c" || [ $? = 1 ]
g add -f $x86/kunit_cases.c
maintainers_files add $x86/kunit_cases.c
add $x86/kunit_targets.c $x86/kunit_targets.h
put $x86/Makefile
commit "x86/kprobes: KUnit cases for the x86-64 breakpoint path" <<'EOF'
Add a KUnit suite for the x86-64 code, beside it: probes on each
instruction kind the int3 handler emulates or copies (RIP-relative
load, call, jmp, ret, jcc, loop, push/pop, indirect calls through a
register and through memory, pushf), ENDBR entries (+0 and +4, and
+1..+3 refused), __pfx_ preambles, static call and jump label sites,
boosting counted in traps per hit (and settled once by the first copy
to end), a fault in a nested hit's copy, a #UD fixup in a copy
(vmxoff), a copy_mc-style access refused, someone else's int3 passed
on, an int3 trap for a byte already restored, and a lock prefix patched
out on a kernel booted with one CPU. The targets are written in
assembly (kunit_targets.c), so that each probed instruction is known.
EOF

"$build/unifdef" -B -UCONFIG_HAVE_HW_BREAKPOINT "$repo/$x86/kunit_cases.c" \
	> "$work/$x86/kunit_cases.c" || [ $? = 1 ]
g add -f $x86/kunit_cases.c
commit "x86/kprobes: KUnit cases for jump optimization" <<'EOF'
Add the cases of CONFIG_OPTPROBES on x86-64 to its KUnit suite: regions
with branches, calls, returns, padding and indirect tail calls, jump
label sites in and after a region, the optimizer's refusals, batches
optimized and unoptimized, sites freed only after an RCU-tasks grace
period, a nested hit in a detour, each optimized and unoptimized while
a second CPU hits it, and the query file on a function whose jump is
still retiring (the query must not decode text that holds it).
EOF

put $x86/kunit_cases.c
commit "x86/kprobes: KUnit cases for probe hits nested three deep" <<'EOF'
A data breakpoint's handler runs in the #DB, as an NMI handler runs in
the NMI: it may come in the middle of a probe hit, even of a nested
one. Put a breakpoint on the data that a nested hit's copied
instruction reads, and have its handler call a probed function: a hit
three levels deep, which the tree answers with BUG(). Also the probe
hit again from the #DB while its own trapping copy runs, which must not
be taken for the end of the outer hit.
EOF

add $a64/kunit_cases.c $a64/kunit_targets.c $a64/kunit_targets.h
put $a64/Makefile
commit "arm64: kprobes: KUnit cases for the arm64 breakpoint path" <<'EOF'
Add a KUnit suite for the arm64 code, beside it, on functions written
in assembly (kunit_targets.c) so that each probed instruction is known:
every kind the BRK handler
simulates (B, BL, B.cond over all conditions and flags, CBZ/CBNZ,
TBZ/TBNZ, ADR, ADRP, LDR/LDRSW literal, BR, BLR, RET) in one BRK per
hit, and kinds stepped out of line (ALU, stack loads and stores with
writeback, barriers, LSE atomics, PACIASP and BTI) in two, counted
with a per-CPU trap counter, or boosted in one when no post_handler
runs (and stepped again while a member with one shares the site; a
boosted probe registered and removed while another CPU calls through
it); each refused kind with -EINVAL and its word untouched (BRK,
SVC, HVC, ERET, MSR, MRS DAIF, WFI/WFE/YIELD, AUTIASP, RETAA, PRFM
literal, SIMD&FP literal loads, an exception table entry, the
exclusive load/store window, misaligned addresses);
a redirecting pre_handler; the interrupt mask seen by handlers and
restored after the step; nested hits; a kretprobe on a function that
signs its return address; one register_kprobes() of 32 probes
costing one text synchronisation each way; and probes at function
entries on ftrace: no exception, the arguments, return address, stack
pointer and callee-saved registers the handlers see (also with another
ftrace user of the function), a redirecting pre_handler, a post_handler
changing an argument, and a kretprobe beside a kprobe.
EOF

add $rv/kunit_cases.c $rv/kunit_targets.c $rv/kunit_targets.h
put $rv/Makefile
commit "riscv: kprobes: KUnit cases for the riscv breakpoint path" <<'EOF'
Add a KUnit suite for the riscv code, beside it, on functions written
in assembly (kunit_targets.c) so that each probed instruction is known,
4-byte or compressed: copied instructions (ADDI, C.MV, C.ADDI, stack
stores and loads) boosted in one EBREAK per hit and stepped in two when
a post_handler runs, counted with a per-CPU trap counter; a live t0,
and every t register live on one side of a branch, intact after
boosted hits; t0 live across a call, t0 read by the fix-up of a
faulting load, and an indirect jump after the probe (no register
provably free): stepped, t0 intact; ra written by a call after the
probe: boosted through it; a register
written on both ways, one through a backward jump: boosted; kernel
functions' slots in module space within reach; the simulated kinds
(BEQ, C.BEQZ, C.J, AUIPC, JAL, RET) in one EBREAK; EBREAK, C.EBREAK, a
CSR access, FENCE and an LR/SC sequence refused with -EINVAL, an
address inside a 4-byte instruction and an odd one with -EILSEQ; a
redirecting pre_handler; nested hits; one register_kprobes() of 32
probes costing one stop_machine() each way; and probes at function
entries on ftrace: no exception, the registers the handlers see (s0-s11
also with another ftrace user of the function), a stack trace through
the function, the call site's second word refused, a redirecting
pre_handler and a post_handler changing an argument on both of ftrace's
paths, resuming inside the call site, probes and another ftrace user
coming and going while another CPU calls, a return beside a direct
trampoline, and a kretprobe beside a kprobe. Optimized probes: no
exception, the registers, interrupts and stack trace the handler sees,
a post_handler member, disabling and enabling, a redirect that pops the
frame; a 10-byte region (the C.NOP behind the jump) with a probe taken
on an instruction inside it and one refused inside an instruction; ra
and s1 as the jump's register; a branch taken and not, C.BEQZ, AUIPC,
C.J and a return in the region; a branch into the region and a call in
it left on the EBREAK path.
EOF

put Documentation/trace/kprobes.rst
commit "Documentation: kprobes: describe the new implementation" <<'EOF'
Rewrite Documentation/trace/kprobes.rst for module authors and users of
the debugfs files: the concepts, the API with every error code and when
it is returned, the debugfs files (list, enabled, blacklist, stats,
query) with their formats, the debug.kprobes-optimization sysctl, what
can and cannot be probed and why, the measured overhead with its
method, the architectures, and a section for readers of the older
documentation (jprobes and fault_handler are gone, and what replaces
them).
EOF

for p in "$repo"/patches/after-*.patch; do
	[ -e "$p" ] || continue
	g am -q --keep-cr "$p"
done

g format-patch -q --cover-letter -o "$out" upstream

# checkpatch --strict on every patch, from the top of the series' tree:
# no error or warning may remain; the checks are counted by type for the
# cover letter, which says why each kind stays.
echo "  CHECK   checkpatch --strict"
cp_log=$build/checkpatch.log
: > "$cp_log"
for p in "$out"/0*.patch; do
	case $p in */0000-*) continue ;; esac
	# The distribution's python3 (checkpatch's spdxcheck.py needs
	# python3-ply), before any other python3 on the PATH.
	(cd "$work" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --terse --show-types \
		--summary-file "$p" || true) | sed "s|^|$(basename "$p"): |" >> "$cp_log"
done
# BUG() where there is no way on (the cover letter says where and why)
# is the one warning let through.
bad=$(grep -E ": (ERROR|WARNING):" "$cp_log" | grep -v ": WARNING:AVOID_BUG:" || true)
if [ -n "$bad" ]; then
	echo "$bad" >&2
	echo "make-patches: checkpatch errors or warnings (all in $cp_log)" >&2
	exit 1
fi

# get_maintainer.pl names the KPROBES entry for every patch of ours.
for p in "$out"/0*.patch; do
	case $p in */0000-*) continue ;; esac
	# Our files that the series' last tree still has (get_maintainer.pl
	# reads that tree's MAINTAINERS).
	ours=$(sed -n 's|^+++ b/||p' "$p" | grep -E '^(kernel/kprobes|include/linux/kprobes|arch/x86/kernel/kprobes|arch/x86/include/asm/kprobes|samples/kprobes|lib/test_kprobes|Documentation/trace/kprobes)' |
		while read -r f; do [ ! -e "$work/$f" ] || echo "$f"; done || true)
	[ -n "$ours" ] || continue
	(cd "$work" && PATH=/usr/bin:$PATH perl scripts/get_maintainer.pl --no-git \
		--no-git-fallback "$p" 2>/dev/null) | grep ':KPROBES)' >/dev/null ||
		{ echo "make-patches: get_maintainer.pl does not name KPROBES for $(basename "$p")" >&2; exit 1; }
done

# Fill the cover letter's subject and blurb.
cover=$(ls "$out"/0000-*.patch)
python3 - "$cover" "$repo/tools/testing/kprobes/cover-letter.txt" "$version" "$cp_log" <<'PY'
import collections
import re
import sys
path, blurb, version = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
checks = collections.OrderedDict()
for line in open(sys.argv[4]):
    m = re.match(r'(\d{4})-\S*: .*? (CHECK|WARNING):(\w+):', line)
    if m:
        kind = m.group(3) if m.group(2) == 'CHECK' else 'WARNING ' + m.group(3)
        checks.setdefault(m.group(1), collections.Counter())[kind] += 1
table = []
for patch, types in checks.items():
    table.append('  %s: %s' % (patch, ', '.join('%s %d' % t for t in sorted(types.items()))))
blurb = blurb.replace('@VERSION@', version)
blurb = blurb.replace('@CHECKPATCH@', '\n'.join(table) or '  none')
blurb = blurb.split('\n', 1)
s = open(path).read()
s = s.replace('*** SUBJECT HERE ***', blurb[0])
s = s.replace('*** BLURB HERE ***', blurb[1].strip())
open(path, 'w').write(s)
PY

echo "  CHECK   git am on a fresh copy"
check=$build/patches-am
rm -rf "$check"
mkdir -p "$check"
cp -a "$pristine/." "$check/"
rm -f "$check/.unpacked-"*
git -C "$check" init -q
git -C "$check" config gc.auto 0
git -C "$check" add -f -A .
git -C "$check" -c user.name=x -c user.email=x@x commit -q -m base
git -C "$check" -c user.name=x -c user.email=x@x am -q $(ls "$out"/*.patch | grep -v '/0000-')
diff -r -q -x .git "$check" "$work" >/dev/null ||
	{ echo "make-patches: applied tree differs" >&2; exit 1; }
rm -rf "$check"
# The series ends in our tree: every file of ours, as it is here.
grep -v '^#' "$repo/tools/testing/kprobes/owned-files" | while read -r path; do
	[ -n "$path" ] || continue
	if [ -e "$repo/$path" ]; then
		diff -r -q "$repo/$path" "$work/$path" >/dev/null ||
			{ echo "make-patches: $path differs from ours" >&2; exit 1; }
	elif [ -e "$work/$path" ]; then
		echo "make-patches: the tree's $path survived" >&2; exit 1
	fi
done
# What a maintainer receives: the whole patch file, message included.
# Only the KUnit suite's patches (lib/test_kprobes.*, MAINTAINERS) may be larger.
big=0
for p in "$out"/0*.patch; do
	case $p in */0000-*) continue ;; esac
	lines=$(wc -l < "$p")
	[ "$lines" -gt 2500 ] || continue
	if git apply --numstat "$p" |
		awk '$3 !~ /^(lib\/test_kprobes\.|MAINTAINERS$)/ { n++ } END { exit !n }'; then
		echo "make-patches: $(basename "$p") is $lines lines, over 2,500" >&2
		big=$((big + 1))
	else
		echo "  BIG     $(basename "$p"): $lines lines (the KUnit suite)"
	fi
done
echo "  PATCHES $(ls "$out"/0*.patch | grep -vc '/0000-') in out/patches ($big over 2,500 lines but the KUnit suite's)"
[ "$big" = 0 ] || exit 1
