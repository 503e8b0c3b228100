/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _LINUX_KPROBES_ARCH_H
#define _LINUX_KPROBES_ARCH_H
/*
 * The interface between the kprobes core (kernel/kprobes/) and an
 * architecture's kprobes code: what the arch provides, what the core
 * provides it with, and the default the core uses for each optional hook.
 * <linux/kprobes.h> includes this header once struct kprobe is known; the
 * arch code includes <linux/kprobes.h>.
 *
 * What <asm/kprobes.h> defines
 * ----------------------------
 * kprobe_opcode_t	the unit of text a breakpoint replaces, and the unit
 *			of the sizes below (x86: a byte; s390, arc: 16 bits;
 *			arm64, riscv, powerpc: 32 bits)
 * MAX_INSN_SIZE	the longest instruction, in kprobe_opcode_t units
 * struct arch_specific_insn	the arch's copy of a probed instruction
 * struct kprobe_ctlblk	per-CPU state of the hit a CPU is handling
 * struct arch_optimized_insn, MAX_OPTIMIZED_LENGTH	with CONFIG_OPTPROBES:
 *			a site's detour, and how many bytes its jump covers
 * kprobe_fault_handler()	the arch's fault fix-up (see kprobe_page_fault())
 * kretprobe_blacklist_size	0 when the arch lists no function that must
 *			not get a return probe (its kretprobe_blacklist[] may
 *			then be empty, as s390's is)
 *
 * And, each only when the arch wants it:
 * __ARCH_WANT_KPROBES_INSN_SLOT	the core keeps executable slots for
 *			the arch's instruction copies (get_insn_slot())
 * KPROBE_SLOT_SIZE	a slot's size in kprobe_opcode_t units; default
 *			MAX_INSN_SIZE
 * KPROBE_OPTINSN_SLOT_SIZE or MAX_OPTINSN_SIZE	a detour's size in units;
 *			MAX_OPTINSN_SIZE may be a run-time value (arm and
 *			powerpc: a difference of two symbols)
 * KPROBE_INSN_ALIGN	bytes an instruction is aligned to, when less
 *			than a kprobe_opcode_t (riscv: 2); default
 *			sizeof(kprobe_opcode_t)
 * arch_kprobe_ready_detour()	with CONFIG_OPTPROBES: finish a site's
 *			detour before the optimizer sends hits there (see
 *			below); default: nothing to finish
 * arch_kprobe_counts_hits	true when the arch's hit paths call
 *			kprobe_count_hit() for the site they hit. Default
 *			false: the core then makes every site an aggregate and
 *			counts in the aggregate's pre_handler.
 * HAVE_KPROBE_BATCH	the arch queues its text writes and makes them
 *			visible to all CPUs at once when the core applies a
 *			batch (x86). It then implements arch_kprobe_queue_arm()
 *			and arch_kprobe_queue_apply() and, with
 *			CONFIG_OPTPROBES, arch_kprobe_queue_optimize() and
 *			arch_kprobe_queue_unoptimize(), instead of
 *			arch_arm_kprobe(), arch_disarm_kprobe() and the tree's
 *			optprobe interface. Without it, defaults below write
 *			through those, one site at a time.
 * The arch's code defines the per-CPU current_kprobe and kprobe_ctlblk.
 *
 * Context and locks
 * -----------------
 * Unless a hook says otherwise, the core calls it in process context, may
 * sleep, and holds kprobe_mutex (which serializes every registration-side
 * change) and, for anything that reads or writes text, also
 * cpus_read_lock(), jump_label_lock() and text_mutex, in that order: an
 * arch that patches text with stop_machine() must use
 * stop_machine_cpuslocked(). A hook checks kprobe_mutex with
 * kprobe_assert_mutex_held() and text_mutex with lockdep_assert_held().
 * Hit-path hooks run wherever the arch's trap or detour calls them, with
 * preemption or interrupts disabled; they may not sleep nor take any lock
 * that registration holds.
 */

#include <linux/hash.h>

/* ---- the arch's hooks: a probe's life ------------------------------- */

/*
 * Set by the core in p->flags (and op->kp.flags) of a probe it only asks
 * about, for /sys/kernel/debug/kprobes/query: arch_prepare_kprobe() and
 * arch_prepare_optimized_kprobe() check the point as for registering
 * but need not take a slot nor write text (x86 does neither); the core
 * releases the probe with arch_remove_kprobe() and
 * arch_remove_optimized_kprobe() as any other. An arch that ignores the
 * flag allocates and frees as for a probe registered and unregistered.
 */
#define KPROBE_FLAG_QUERY	BIT(22)

/*
 * Analyse the instruction at p->addr and prepare to execute it out of
 * line: save what the breakpoint replaces in p->opcode and fill
 * p->ainsn (a slot from get_insn_slot(), or emulation). Called for a new
 * site, and again when text at a gone site's address is probed anew.
 * Return 0, or -EINVAL for an instruction that cannot be probed, -EILSEQ
 * for an address that is not an instruction boundary, -ENOMEM.
 */
int arch_prepare_kprobe(struct kprobe *p);

/*
 * Release what arch_prepare_kprobe() took, when the site leaves the table
 * (after an RCU grace period) or its text was freed and is probed anew.
 * kprobe_mutex held, with or without the text locks: it must not take
 * text_mutex. Default: nothing; sparc defines it as a macro that does
 * nothing.
 */
#ifndef arch_remove_kprobe
void arch_remove_kprobe(struct kprobe *p);
#endif

#ifdef HAVE_KPROBE_BATCH
/*
 * Batched arming: queue the write of the breakpoint at p->addr (@arm), or
 * of the original p->opcode back; arch_kprobe_queue_apply() then makes
 * every queued write, and with CONFIG_OPTPROBES every queued jump write,
 * visible on every CPU at once, for example with one text_poke_sync() for
 * a whole registration call.
 */
void arch_kprobe_queue_arm(struct kprobe *p, bool arm);
void arch_kprobe_queue_apply(void);
#else
/*
 * Without HAVE_KPROBE_BATCH: write the breakpoint at p->addr, or the
 * original p->opcode back, and make the change visible to every CPU
 * before returning.
 */
void arch_arm_kprobe(struct kprobe *p);
void arch_disarm_kprobe(struct kprobe *p);

/* Without batching each write is made at once, and nothing is left to apply. */
static inline void arch_kprobe_queue_arm(struct kprobe *p, bool arm)
{
	if (arm)
		arch_arm_kprobe(p);
	else
		arch_disarm_kprobe(p);
}

static inline void arch_kprobe_queue_apply(void)
{
}
#endif /* HAVE_KPROBE_BATCH */

/*
 * Once at boot (early_initcall), after the blacklist is built and before
 * the die notifier: registering probes (one on a return trampoline, say)
 * is allowed from here on. Default: 0.
 */
int arch_init_kprobes(void);

/* ---- the arch's hooks: where a probe may go ----------------------------- */

/*
 * True when @addr must never be probed, beyond what the core knows (the
 * NOKPROBE_SYMBOL() list, .kprobes.text, .noinstr.text): the arch's entry
 * code, say. Any process context, no lock. Default: false.
 */
bool arch_within_kprobe_blacklist(unsigned long addr);

/*
 * At boot: add the arch's ranges to the blacklist with
 * kprobe_add_area_blacklist() and kprobe_add_ksym_blacklist(), so that
 * the debugfs blacklist shows them. Default: 0, nothing added.
 */
int arch_populate_kprobe_blacklist(void);

/*
 * Which of the kernel's tables of sites could list @addr, from the
 * instruction there: KPROBE_LISTED_JUMP_LABEL for what a jump label
 * writes, _STATIC_CALL for what a static call writes, _BUG for a BUG()'s
 * trap. The core looks @addr up only in those, and the bug table's
 * lookup walks all of it (and every module's). kprobe_mutex and
 * text_mutex held. Default: KPROBE_LISTED_ANY.
 */
#define KPROBE_LISTED_JUMP_LABEL	BIT(0)
#define KPROBE_LISTED_STATIC_CALL	BIT(1)
#define KPROBE_LISTED_BUG		BIT(2)
#define KPROBE_LISTED_ANY		(KPROBE_LISTED_JUMP_LABEL | \
					 KPROBE_LISTED_STATIC_CALL | \
					 KPROBE_LISTED_BUG)
unsigned int arch_kprobe_listed_tables(unsigned long addr);

/*
 * The text [@start, @end) is about to be freed (a module going, its init
 * text or the kernel's after boot): forget what the arch remembers of
 * it, such as decoded functions, since other text may be loaded there.
 * kprobe_mutex held. Default: nothing.
 */
void arch_kprobe_text_gone(unsigned long start, unsigned long end);

/*
 * For /sys/kernel/debug/kprobes/query, on a probe that
 * arch_prepare_kprobe() accepted: may its hits run the probed
 * instruction without a second trap (a boosted copy, or emulation)? Set
 * *@why to the rule that decided, or leave it NULL. kprobe_mutex held.
 * Default: false, "not on this architecture".
 */
bool arch_kprobe_boostable(struct kprobe *p, const char **why);

/*
 * The address of a symbol to probe, for arches whose symbols need more
 * than kallsyms_lookup_name() (function descriptors, dot symbols). Any
 * process context. Default: kallsyms_lookup_name().
 */
kprobe_opcode_t *kprobe_lookup_name(const char *name, unsigned int offset);

/*
 * Map "function at @addr, @offset bytes in" to the instruction to probe,
 * and say whether that is the function's entry (x86: the ENDBR at +0 is
 * skipped; powerpc: the global entry point). Return NULL or an
 * ERR_PTR() for an offset that cannot be probed. Any process context.
 * Default: @addr + @offset, an entry when @offset is 0.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr, unsigned long offset,
					 bool *on_func_entry);

/*
 * kallsyms names for executable pages the arch keeps itself, beyond the
 * core's slot caches; *@symnum counts down through them. Does not sleep.
 * Default: -ERANGE, none.
 */
int arch_kprobe_get_kallsym(unsigned int *symnum, unsigned long *value,
			    char *type, char *sym);

/* ---- the arch's hooks: traps -------------------------------------------- */

/*
 * For arches whose trap code reaches kprobes through the die chain (s390,
 * mips, sh, sparc, arc; x86-64 for traps in a copy other than #PF and
 * #GP; arm's lets every event pass): the core registers it first on the
 * chain. Any context a trap can come in. Default: NOTIFY_DONE, every
 * event passes.
 */
int kprobe_exceptions_notify(struct notifier_block *self,
			     unsigned long val, void *data);

/* ---- the arch's hooks: optimized probes (CONFIG_OPTPROBES) -------------- */

#ifdef CONFIG_OPTPROBES
/**
 * struct optimized_kprobe - a probe that may be armed with a jump
 * @kp: the probe as the hash table sees it
 * @list: link in the optimizer's queues
 * @optinsn: the arch's detour buffer
 */
struct optimized_kprobe {
	struct kprobe kp;
	struct list_head list;
	struct arch_optimized_insn optinsn;
};

/*
 * Build @op's detour buffer (op->optinsn) for the site @orig was
 * prepared as; non-zero when the site cannot be reached by a jump, which
 * is no error: it stays a breakpoint. Called for sites that are not on
 * ftrace, with @orig's arch state prepared: a new site's lone probe,
 * which becomes the aggregate @op (its arch state copied after this
 * call), or @op's own probe when a gone site's address is probed anew.
 */
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op,
				  struct kprobe *orig);

/* Free the detour; op->optinsn.insn NULL after. Locks as arch_remove_kprobe(). */
void arch_remove_optimized_kprobe(struct optimized_kprobe *op);

/*
 * Called by the optimizer, kprobe_mutex held, for a site it is about to
 * mark KPROBE_FLAG_OPT_READY, from when breakpoint hits continue in the
 * detour: an arch that builds the detour lazily finishes it here, its
 * stores ordered before the flag's. False when the site turns out not
 * to be reachable by a jump; the arch has then removed the detour
 * (arch_remove_optimized_kprobe()), so the site stays a breakpoint.
 */
#ifndef arch_kprobe_ready_detour
static inline bool arch_kprobe_ready_detour(struct optimized_kprobe *op)
{
	return true;
}
#endif

/* Non-zero when @op's jump (written or not) covers @addr. kprobe_mutex held. */
int arch_within_optimized_kprobe(struct optimized_kprobe *op,
				 kprobe_opcode_t *addr);

#ifdef HAVE_KPROBE_BATCH
/*
 * Queued optimizer hooks: queue the write of @op's jump over its armed
 * breakpoint, or of the breakpoint (@armed) or the original bytes back
 * over the jump; arch_kprobe_queue_apply() writes them. Jumps are queued
 * only by the optimizer, after an RCU-tasks grace period that followed
 * KPROBE_FLAG_OPT_READY, so that no task is inside the region. A site
 * being unoptimized without @armed may be out of the table already (its
 * last probe went): no breakpoint may appear there meanwhile.
 */
void arch_kprobe_queue_optimize(struct optimized_kprobe *op);
void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op, bool armed);
#else
/*
 * The tree's optprobe interface, as arm and powerpc implement it. The
 * core calls the first two through the defaults below; the others are
 * the arch's own business and declared for its definitions. The arch's
 * detour calls opt_pre_handler() with @op's probe as current_kprobe.
 */
void arch_optimize_kprobes(struct list_head *oplist);
void arch_unoptimize_kprobe(struct optimized_kprobe *op);
void arch_unoptimize_kprobes(struct list_head *oplist,
			     struct list_head *done_list);
int arch_check_optimized_kprobe(struct optimized_kprobe *op);
int arch_prepared_optinsn(struct arch_optimized_insn *optinsn);

/*
 * The queued optimizer hooks without batching: each jump, and each
 * breakpoint or original instruction that replaces one, is written at
 * once, one site at a time, so the arch's optimizer code has nothing
 * left for arch_kprobe_queue_apply().
 */
static inline void arch_kprobe_queue_optimize(struct optimized_kprobe *op)
{
	LIST_HEAD(one);

	list_add(&op->list, &one);
	arch_optimize_kprobes(&one);	/* takes @op off the list */
}

static inline void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op,
						bool armed)
{
	/*
	 * A site to be disarmed gets its original instruction over the
	 * jump in one write: it may be out of the table already (retiring),
	 * and a breakpoint there, even for a moment, would be one that no
	 * probe owns.
	 */
	if (armed)
		arch_unoptimize_kprobe(op);	/* the breakpoint is back */
	else
		arch_disarm_kprobe(&op->kp);
}
#endif /* HAVE_KPROBE_BATCH */
#endif /* CONFIG_OPTPROBES */

/* ---- the arch's hooks: probes on ftrace (CONFIG_KPROBES_ON_FTRACE) ------- */

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Prepare a probe at a function's ftrace site, which ftrace reaches by
 * calling kprobe_ftrace_handler(): no breakpoint, no instruction copy
 * (p->ainsn may still be set up for a post_handler).
 */
int arch_prepare_kprobe_ftrace(struct kprobe *p);

/* The arch's ftrace callback; the core gives it to ftrace in its ftrace_ops. */
void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs);

/* Set once ftrace is dead: the arch's handler must then do nothing. */
extern bool kprobe_ftrace_disabled __read_mostly;

/*
 * Optional: the address of the arch's own trampoline for our ftrace_ops
 * (ftrace_ops::trampoline). ftrace calls it straight from a function's
 * call site while our ops is the function's only ftrace user; when there
 * are others, ftrace's own trampoline calls kprobe_ftrace_handler() as
 * it calls them. It must build the entry's pt_regs and run the probe at
 * the site as kprobe_ftrace_handler() would; then go on past the call
 * site with at least the argument registers the handlers left in regs,
 * or, when a pre_handler redirected, where it sent the function, with
 * every register of regs the arch lets a handler change. Default 0:
 * none.
 */
#ifndef arch_kprobe_ftrace_trampoline
#define arch_kprobe_ftrace_trampoline	0UL
#endif
#else
static inline int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	return -EINVAL;
}
#endif /* CONFIG_KPROBES_ON_FTRACE */

/*
 * Where a probe meets ftrace's call site. On most arches the probe sits
 * on the call site itself (x86's arch_adjust_kprobe_addr() moves a probe
 * at the symbol there, past ENDBR): the probe's address is the ip ftrace
 * knows the site by. arm64's call site is a BL one or two instructions
 * into the function, which a probe at the symbol rides while staying at
 * the symbol, where the tree's breakpoint was: these two map between the
 * probe's address and the ip.
 *
 * arch_kprobe_ftrace_ip(addr): the ip of the call site a probe at @addr
 *	would ride, or 0. Only a candidate: the core takes it when ftrace
 *	has a call site there. Registration side (kprobe_mutex, the text
 *	pinned); default @addr. An arch that defines it defines both.
 * arch_kprobe_ftrace_site(ip): the registered site (KPROBE_FLAG_FTRACE)
 *	that rides the call site at @ip, or NULL. As get_kprobe(): preemption
 *	off or kprobe_mutex held; default get_kprobe(@ip).
 */
#ifndef arch_kprobe_ftrace_ip
#define arch_kprobe_ftrace_ip(addr)	(addr)
#define arch_kprobe_ftrace_site(ip)	get_kprobe((kprobe_opcode_t *)(ip))
#endif

/* ---- the arch's hooks: kretprobes without rethook ----------------------- */

#if defined(CONFIG_KRETPROBES) && !defined(CONFIG_KRETPROBE_ON_RETHOOK)
/*
 * The core keeps the instances (kernel/kprobes/kretprobe.c). On a hooked call's
 * entry, save its return address in ri->ret_addr and its frame in ri->fp
 * and make it return to kretprobe_trampoline_addr() instead. Hit path.
 */
void arch_prepare_kretprobe(struct kretprobe_instance *ri, struct pt_regs *regs);

/*
 * Optional: after the return handlers ran, set up @regs for the return
 * to @correct_ret_addr beyond the pc, which the core already pointed
 * there for the handlers (parisc: its return register). Hit path.
 * Default: nothing.
 */
void arch_kretprobe_fixup_return(struct pt_regs *regs,
				 kprobe_opcode_t *correct_ret_addr);

/*
 * The arch's return trampoline: it calls kretprobe_trampoline_handler()
 * (or, when reached through a kprobe of its own, which makes kprobes
 * busy already, __kretprobe_trampoline_handler()) and continues at the
 * address that returns.
 */
void __kretprobe_trampoline(void);
#endif

#ifdef CONFIG_KRETPROBES
/*
 * True for the kprobe an arch puts on its own return trampoline (powerpc,
 * mips, sh, sparc, parisc, arc): it stays armed while kprobes are
 * switched off, so that returns already hooked are still caught.
 * kprobe_mutex held. Default: 0.
 */
int arch_trampoline_kprobe(struct kprobe *p);
#else
static inline int arch_trampoline_kprobe(struct kprobe *p)
{
	return 0;
}
#endif

/* ---- executable memory for copies and detours --------------------------- */

/*
 * One page for the slot caches; the cache's mutex held, may sleep.
 * Default: execmem_alloc(EXECMEM_KPROBES). An arch may place it where its
 * copies can reach their targets. alloc_optinsn_page() and
 * free_optinsn_page() do the same for detour buffers; default
 * alloc_insn_page() and execmem_free().
 */
void *alloc_insn_page(void);
void *alloc_optinsn_page(void);
void free_optinsn_page(void *page);

/*
 * ======================================================================
 * What the core gives the arch code
 * ======================================================================
 */

/* The probe whose handlers this CPU is running (or last ran), if any. */
DECLARE_PER_CPU(struct kprobe *, current_kprobe);
DECLARE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

/* The probe site at @addr. Hit path (preemption off), or kprobe_mutex held. */
struct kprobe *get_kprobe(void *addr);

/*
 * The index get_kprobe() searches: an open-addressing table of site
 * pointers (kernel/kprobes/table.c keeps it and says how). It is here so
 * that a hit path can search it inline, get_kprobe_inline(), where a
 * call would be a good part of the hit's cost (x86's ftrace trampoline).
 */
struct kprobe_index {
	struct kprobe **entry;
	unsigned long mask;
	unsigned int shift;		/* 32 - log2(number of entries) */
	unsigned int used;		/* entries not empty: live and removed */
	unsigned int live;
	struct rcu_head rcu;
};

extern struct kprobe_index __rcu *kprobe_index;
/*
 * Where a search ends: an entry no site ever used. It looks like a
 * disabled site, so that a hit path may test what
 * kprobe_index_search() returns with kprobe_disabled() alone.
 */
extern struct kprobe kprobe_index_empty;

static __always_inline unsigned long
kprobe_index_start(const struct kprobe_index *idx, unsigned long addr)
{
	/*
	 * The low 32 bits tell apart the text of one kernel and its
	 * modules, which lie within a few GiB of each other; a 32-bit
	 * multiplier costs arm64 two instructions fewer to build.
	 */
	return ((u32)addr * GOLDEN_RATIO_32) >> idx->shift;
}

/*
 * Search @idx for the site at @addr: one load of each entry on the way,
 * and the address compared is that of the site the load returned, so no
 * interleaving with writers returns a site at another address (the
 * entries' stores pair with these loads). @between, constant NULL but in
 * the KUnit suite's search, runs between the load of the first entry and
 * the read of its site's address. Returns the site, or @none when there
 * is none.
 */
static __always_inline struct kprobe *
kprobe_index_search(struct kprobe_index *idx, void *addr, struct kprobe *none,
		    void (*between)(void *arg), void *arg)
{
	struct kprobe **entry = idx->entry;
	unsigned long i = kprobe_index_start(idx, (unsigned long)addr);
	struct kprobe *site = READ_ONCE(entry[i]);

	if (between)
		between(arg);
	/* Most hits find their site first: no more work for them. */
	while (unlikely(site->addr != addr)) {
		if (site == &kprobe_index_empty)
			return none;
		i = (i + 1) & idx->mask;
		site = READ_ONCE(entry[i]);
	}
	return site;
}

/*
 * get_kprobe() without the call, on a hit path (preemption off); but
 * where there is no site, &kprobe_index_empty, which kprobe_disabled()
 * says is disabled.
 */
static __always_inline struct kprobe *get_kprobe_inline(void *addr)
{
	return kprobe_index_search(rcu_dereference_check(kprobe_index,
							 rcu_read_lock_any_held()),
				   addr, &kprobe_index_empty, NULL, NULL);
}

static inline struct kprobe *kprobe_running(void)
{
	return __this_cpu_read(current_kprobe);
}

static inline void reset_current_kprobe(void)
{
	__this_cpu_write(current_kprobe, NULL);
}

static inline struct kprobe_ctlblk *get_kprobe_ctlblk(void)
{
	return this_cpu_ptr(&kprobe_ctlblk);
}

/*
 * Count a hit that runs the handlers at site @p, once per hit (arches
 * that define arch_kprobe_counts_hits true). Every site in the table has
 * a counter; an aggregate's members are counted by their site's.
 */
#ifndef arch_kprobe_counts_hits
#define arch_kprobe_counts_hits	false
#endif

/*
 * A plain per-CPU increment: hit paths run with preemption off and with
 * current_kprobe set, so no other count of this CPU's can come between
 * its load and its store (a hit nested in this one is missed, not
 * counted). this_cpu_inc() would cost an atomic and a preemption count
 * round trip on arches without a per-CPU add instruction (arm64).
 */
static __always_inline void kprobe_count_hit(struct kprobe *p)
{
	raw_cpu_inc(*p->nhit);
}

/* A hit on @p whose handlers were skipped (it nested in another). */
void kprobes_inc_nmissed_count(struct kprobe *p);

/*
 * For an arch hit path that reaches an aggregate site directly (x86's
 * optimized probes), after counting the site's hit: run its members'
 * pre_handlers, leaving current_kprobe at the last member run.
 */
int kprobe_aggr_run_pre_handlers(struct kprobe *site, struct pt_regs *regs);

/* An aggregate site's pre_handler: it runs its members'. */
int kprobe_aggr_pre_handler(struct kprobe *site, struct pt_regs *regs);

/* A member registered without a pre_handler. */
#define KPROBE_FLAG_NO_PRE	BIT(24)
/*
 * A site that is an aggregate (its pre_handler kprobe_aggr_pre_handler()):
 * set when it is made, before it is published, and never cleared.
 */
#define KPROBE_FLAG_AGGREGATE	BIT(27)

/* Members whose pre_handler the aggregate's hit loop skips: one test each. */
#define KPROBE_MEMBER_SKIP	(KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE | KPROBE_FLAG_NO_PRE)

/**
 * kprobe_site_pre_handler() - run a hit site's pre_handlers on a trap path
 * @site: the site hit, enabled, its hit counted, as current_kprobe
 * @flags: @site's flags as the caller read them for this hit (a flag
 *	the call tests, KPROBE_FLAG_AGGREGATE, never changes)
 * @regs: the hit's registers
 *
 * Where the optimizer may put a jump, a site is an aggregate from its
 * registration on, most with a single member; until the jump is in (or
 * with the sysctl off) its hits take the breakpoint, and a call through
 * kprobe_aggr_pre_handler() would cost each some forty instructions more
 * than a lone probe's (its frame and loop). A single member's handler is
 * called here as that loop would call it: as current_kprobe, which is
 * the site again afterwards. Both list links are read once, under the
 * hit path's RCU: a member joining or leaving meanwhile is seen by this
 * hit or not, as by the loop.
 *
 * Return: non-zero when a pre_handler changed the resume address.
 */
static __always_inline int kprobe_site_pre_handler(struct kprobe *site, unsigned int flags,
						   struct pt_regs *regs)
{
	struct kprobe *only;

	if (!(flags & KPROBE_FLAG_AGGREGATE))
		return site->pre_handler && site->pre_handler(site, regs);
	only = list_entry(READ_ONCE(site->list.next), struct kprobe, list);
	/* No member left: a retiring site, reached through its detour. */
	if (only == site)
		return 0;
	if (READ_ONCE(only->list.next) != &site->list ||
	    (READ_ONCE(only->flags) & KPROBE_MEMBER_SKIP))
		return kprobe_aggr_pre_handler(site, regs);
	__this_cpu_write(current_kprobe, only);
	if (only->pre_handler(only, regs))
		return 1;
	__this_cpu_write(current_kprobe, site);
	return 0;
}

/*
 * Mark a stretch of code that a probe must not interrupt (a return
 * trampoline's handler, say): kprobes hit meanwhile count as missed.
 */
void kprobe_busy_begin(void);
void kprobe_busy_end(void);

/*
 * Return @err; when the query file is asking about the point, record
 * @rule (a string constant naming the rule that refused a probe point,
 * or its optimization) in its answer. kprobe_mutex held: call it from
 * arch_prepare_kprobe() and arch_prepare_optimized_kprobe(), where they
 * refuse.
 */
int kprobe_refuse(int err, const char *rule);

/*
 * For a hook the core calls with kprobe_mutex held, which is the core's
 * own: a lockdep warning when it is not held. Nothing without lockdep.
 */
#ifdef CONFIG_LOCKDEP
void kprobe_assert_mutex_held(void);
#else
static inline void kprobe_assert_mutex_held(void)
{
}
#endif

/* The function around @addr: true and its bounds, or false when none. */
bool kprobe_function_bounds(unsigned long addr, unsigned long *start,
			    unsigned long *size);

/*
 * The target of the jump label site whose instruction starts at @addr:
 * where it jumps when its branch is taken, enabled or not; 0 when @addr
 * is no jump label site. kprobe_mutex held, the text pinned.
 */
unsigned long kprobe_jump_label_target(unsigned long addr);

/* For arch_populate_kprobe_blacklist(). */
int kprobe_add_ksym_blacklist(unsigned long entry);
int kprobe_add_area_blacklist(unsigned long start, unsigned long end);

/* Bounds of the '_kprobe_blacklist' section NOKPROBE_SYMBOL() fills. */
extern unsigned long __start_kprobe_blacklist[];
extern unsigned long __stop_kprobe_blacklist[];

/*
 * Functions that must never get a return probe, ended by an entry whose
 * name is NULL, unless kretprobe_blacklist_size is 0. The arch may list
 * its own; the core's weak default lists none.
 */
extern struct kretprobe_blackpoint kretprobe_blacklist[];

/*
 * For the arch's reader of original text: true while the text may hold
 * a jump of ours that get_kprobe() does not find (an optimized site whose
 * last probe went, "retiring"; see kernel/kprobes/batch.c). The core
 * writes such jumps back before any path decodes text, so an arch that
 * finds this true is called against that rule, and must neither trust
 * nor keep what it decodes. kprobe_mutex held. Without CONFIG_OPTPROBES
 * no jump is ever written: always false.
 */
#ifdef CONFIG_OPTPROBES
bool kprobe_text_hides_jumps(void);
#else
static inline bool kprobe_text_hides_jumps(void)
{
	return false;
}
#endif

/*
 * True when the core will be told, and tell the arch (arch_kprobe_text_gone()),
 * that the text at @addr is freed: what the arch learns of it may be
 * kept. kprobe_mutex held.
 */
bool kprobe_hears_text_gone(unsigned long addr);

#ifdef CONFIG_OPTPROBES
/*
 * For the tree's optprobe interface: the arch's detour calls this with
 * @p (the site) as current_kprobe; it counts the hit where the arch does
 * not, and runs the members' pre_handlers as a breakpoint hit does (one
 * that redirects ends the walk; the tree's ran every one).
 */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs);

/*
 * For the arch's reader of original text, kprobe_mutex held: @p's
 * optimized_kprobe when its detour records the bytes a jump replaces,
 * or will, or did; NULL otherwise (see kernel/kprobes/optimizer.c).
 */
struct optimized_kprobe *kprobe_detour_site(struct kprobe *p);
#endif

/* ---- executable slots for instruction copies and detours ---------------- */

struct kprobe_insn_page;

/**
 * struct kprobe_insn_cache - pages of executable slots for copied insns
 * @mutex: serializes slot allocation and freeing
 * @alloc: allocates one executable page
 * @free: frees a page from @alloc
 * @sym: name under which the pages appear in kallsyms
 * @pages: the pages, an RCU list (read without @mutex by address checks)
 * @insn_size: size of a slot, in kprobe_opcode_t units
 * @nr_garbage: slots freed but possibly still in use (reclaimed later)
 * @last_freed: the page a slot was last freed to, looked at first: slots
 *	are freed in runs, in the order they were handed out
 */
struct kprobe_insn_cache {
	struct mutex mutex;	/* see @mutex above */
	void *(*alloc)(void);
	void (*free)(void *page);
	const char *sym;
	struct list_head pages;
	size_t insn_size;
	int nr_garbage;
	struct kprobe_insn_page *last_freed;
};

#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
/*
 * A slot, or NULL. Freed "dirty" when a task may still be executing it
 * (it was ever reachable): it is reused only after an RCU-tasks grace
 * period.
 */
kprobe_opcode_t *__get_insn_slot(struct kprobe_insn_cache *c);
void __free_insn_slot(struct kprobe_insn_cache *c,
		      kprobe_opcode_t *slot, int dirty);
/* Safe in any context: takes no lock that sleeps. */
bool __is_insn_slot_addr(struct kprobe_insn_cache *c, unsigned long addr);

/* The names under which the two caches' pages appear in kallsyms. */
#define KPROBE_INSN_PAGE_SYM		"kprobe_insn_page"
#define KPROBE_OPTINSN_PAGE_SYM		"kprobe_optinsn_page"
int kprobe_cache_get_kallsym(struct kprobe_insn_cache *c, unsigned int *symnum,
			     unsigned long *value, char *type, char *sym);

/* Slots for instruction copies, of KPROBE_SLOT_SIZE units each. */
extern struct kprobe_insn_cache kprobe_insn_slots;

static inline kprobe_opcode_t *get_insn_slot(void)
{
	return __get_insn_slot(&kprobe_insn_slots);
}

/*
 * A slot whose page lies inside [@lo, @hi), for a copy that branches
 * back with a short reach; NULL when none can be had there. New pages
 * come from the arch's arch_kprobe_alloc_insn_page_within() (by default
 * none: NULL).
 */
kprobe_opcode_t *kprobe_get_insn_slot_within(unsigned long lo, unsigned long hi);
void *arch_kprobe_alloc_insn_page_within(unsigned long lo, unsigned long hi);

static inline void free_insn_slot(kprobe_opcode_t *slot, int dirty)
{
	__free_insn_slot(&kprobe_insn_slots, slot, dirty);
}

static inline bool is_kprobe_insn_slot(unsigned long addr)
{
	return __is_insn_slot_addr(&kprobe_insn_slots, addr);
}

#ifdef CONFIG_OPTPROBES
/* Slots for optimized probes' detours. */
extern struct kprobe_insn_cache kprobe_optinsn_slots;

static inline kprobe_opcode_t *get_optinsn_slot(void)
{
	return __get_insn_slot(&kprobe_optinsn_slots);
}

/* As kprobe_get_insn_slot_within(), for a detour. */
kprobe_opcode_t *kprobe_get_optinsn_slot_within(unsigned long lo, unsigned long hi);

static inline void free_optinsn_slot(kprobe_opcode_t *slot, int dirty)
{
	__free_insn_slot(&kprobe_optinsn_slots, slot, dirty);
}

static inline bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return __is_insn_slot_addr(&kprobe_optinsn_slots, addr);
}
#endif /* CONFIG_OPTPROBES */
#else /* !__ARCH_WANT_KPROBES_INSN_SLOT: the arch keeps no such slots */
static inline bool is_kprobe_insn_slot(unsigned long addr)
{
	return false;
}

#ifdef CONFIG_OPTPROBES
static inline bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return false;
}
#endif
#endif /* __ARCH_WANT_KPROBES_INSN_SLOT */

/* ---- kretprobes without rethook: the core's instances ------------------- */

#if defined(CONFIG_KRETPROBES) && !defined(CONFIG_KRETPROBE_ON_RETHOOK)
/* Where a hooked call returns to; function descriptors are looked through. */
static nokprobe_inline void *kretprobe_trampoline_addr(void)
{
	return dereference_kernel_function_descriptor(__kretprobe_trampoline);
}

/*
 * Run the handlers of the current task's innermost hooked call that
 * returns through @frame_pointer, recycle its instance and return the
 * real return address. For a trampoline reached through a kprobe, which
 * makes kprobes busy already.
 */
unsigned long __kretprobe_trampoline_handler(struct pt_regs *regs,
					     void *frame_pointer);

/* The same for a trampoline reached directly: no probe may run inside. */
static nokprobe_inline
unsigned long kretprobe_trampoline_handler(struct pt_regs *regs,
					   void *frame_pointer)
{
	unsigned long ret_addr;

	kprobe_busy_begin();
	ret_addr = __kretprobe_trampoline_handler(regs, frame_pointer);
	kprobe_busy_end();
	return ret_addr;
}
#endif

#endif /* _LINUX_KPROBES_ARCH_H */
