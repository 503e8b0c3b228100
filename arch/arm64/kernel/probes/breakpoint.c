// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes: which instructions may be probed, and what a hit does.
 *
 * A probe's instruction is replaced by BRK #KPROBES_BRK_IMM. A hit runs
 * the pre_handler, then the instruction, then the post_handler, in one
 * of two ways that arch_prepare_kprobe() chooses:
 *
 *  simulated	branches, PC-relative address computations and literal
 *		loads (the kinds decode-insn.c hands to simulate-insn.c)
 *		are carried out on pt_regs inside the BRK handler: one
 *		exception per hit;
 *  boosted	anything else that is safe to run elsewhere, hit with no
 *		post_handler to run, runs from the second half of its
 *		slot, [copy, B back to the next instruction], with DAIF as
 *		the probed code had it: one exception per hit. The hit
 *		ends when the CPU leaves for the slot;
 *  stepped	the same instructions, when a post_handler must run after
 *		the copy, the hit is nested, or the slot is out of the B's
 *		reach, run from the first half, [copy, BRK
 *		#KPROBES_BRK_SS_IMM], with DAIF masked, and the second BRK
 *		brings the CPU back: two exceptions per hit.
 *
 * Per-CPU state (struct kprobe_ctlblk, current_kprobe) follows one hit:
 *
 *   (none) --BRK--> HIT_ACTIVE --pre_handler redirects--> (none)
 *                      |                 \--boosted--> (none)
 *                      |                 \--simulated--> HIT_SSDONE --> (none)
 *                      \--stepped--> HIT_SS --step BRK--> HIT_SSDONE --> (none)
 *
 * HIT_SSDONE lasts while the post_handler runs. A probe hit while this
 * CPU handles another (a handler calls probed code) only counts as
 * missed: a simulated one is simulated on the spot; a stepped one runs
 * from its slot as KPROBE_REENTER, with the interrupted hit's state kept
 * in the control block's outer_* fields and put back when its step ends.
 * Nothing can hit a probe while a step runs (DAIF is masked and the copy
 * is one instruction), so one saved level is all there is.
 *
 * The BRK handlers run with every DAIF bit masked (debug exceptions are
 * NMI-like on arm64), so no lock is taken here. A step's half of a slot
 * is never left by a preempted task; the boosted half may be, so a slot
 * whose copy can be boosted is freed dirty (reused after an RCU-tasks
 * grace period).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/kasan.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>
#include <asm/cacheflush.h>
#include <asm/daifflags.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/sections.h>
#include <asm/virt.h>

#include "decode-insn.h"
#include "simulate-insn.h"

/* ---- where a probe may go -------------------------------------------------- */

/*
 * LDR (literal) into a SIMD&FP register: opc x 011 V=1 00. The decoder's
 * literal test knows only the general-register forms, and a copy of this
 * one would load from an address relative to the slot.
 */
static bool is_simd_fp_literal_load(u32 insn)
{
	return (insn & 0x3f000000) == 0x1c000000;
}

/*
 * With DYNAMIC_FTRACE_WITH_CALL_OPS the two words before a function's
 * patch site hold the address of its ftrace_ops, which ftrace_caller
 * loads as data; kallsyms counts them as the end of the function before.
 * A breakpoint there would turn that pointer into garbage.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
static bool is_ftrace_ops_literal(unsigned long addr)
{
	unsigned long site, literal;

	site = ftrace_location_range(addr + 1, addr + 4 * AARCH64_INSN_SIZE);
	if (!site)
		return false;
	literal = ALIGN_DOWN(site - 3 * AARCH64_INSN_SIZE, 8);
	return addr >= literal && addr < literal + 8;
}
#else
static bool is_ftrace_ops_literal(unsigned long addr)
{
	return false;
}
#endif

/*
 * Decode @insn with the decoder arm64's uprobes share, plus the literal
 * loads, which only kprobes simulate (a uprobe's copy runs them in the
 * task).
 */
static enum probe_insn decode_insn(u32 insn, struct arch_probe_insn *api)
{
	if (aarch64_insn_is_ldr_lit(insn))
		api->handler = simulate_ldr_literal;
	else if (aarch64_insn_is_ldrsw_lit(insn))
		api->handler = simulate_ldrsw_literal;
	else
		return arm_probe_decode_insn(insn, api);
	return INSN_GOOD_NO_SLOT;
}

/*
 * Is @addr inside an exclusive load/store sequence: an exclusive load
 * before it, no exclusive store between, looking back at most
 * MAX_ATOMIC_CONTEXT_SIZE words and not past its function's start (in
 * no function, not at all)? A breakpoint there clears the exclusive
 * monitor, and the store would fail for ever. The function comes from
 * the core, which has looked it up already: finding it again through
 * kallsyms, as the tree's arm_kprobe_decode_insn() does, walks every
 * symbol of a module, most of the cost of registering a probe there.
 */
static bool in_exclusive_sequence(kprobe_opcode_t *addr)
{
	unsigned long func, size, back;
	kprobe_opcode_t *at;

	if (!kprobe_function_bounds((unsigned long)addr, &func, &size))
		return false;
	back = min_t(unsigned long, ((unsigned long)addr - func) / AARCH64_INSN_SIZE,
		     MAX_ATOMIC_CONTEXT_SIZE);
	for (at = addr - 1; at >= addr - back; at--) {
		u32 insn = le32_to_cpu(*(__le32 *)at);

		if (aarch64_insn_is_store_ex(insn))
			return false;
		if (aarch64_insn_is_load_ex(insn))
			return true;
	}
	return false;
}

/* ---- slots ---------------------------------------------------------------- */

/*
 * The boosted half of @p's slot, or NULL when the slot lies out of its
 * B's reach of the instruction after the probe (then only its step's
 * half was written). @p has a slot.
 */
static __always_inline kprobe_opcode_t *boosted_copy(struct kprobe *p)
{
	kprobe_opcode_t *copy = p->ainsn.api.insn + MAX_INSN_SIZE;

	if (!kprobe_b_reaches((unsigned long)(copy + 1), (unsigned long)(p->addr + 1)))
		return NULL;
	return copy;
}

/**
 * arch_kprobe_alloc_insn_page_within() - an executable page in [@lo, @hi)
 * @lo: lowest address the page may start at
 * @hi: address the page must end at or before
 *
 * Slot pages for copies that branch back: the core's own pages come from
 * EXECMEM_KPROBES, anywhere in vmalloc, which under KASLR is far out of a
 * B's reach of the kernel image and of modules. The range is clamped to
 * the module and vmalloc areas, where the kernel's text lies.
 *
 * Return: the page (read-only, executable; written through the text
 * fixmap), or NULL when the range has no room.
 */
void *arch_kprobe_alloc_insn_page_within(unsigned long lo, unsigned long hi)
{
	void *page;

	lo = max_t(unsigned long, lo, MODULES_VADDR);
	hi = min_t(unsigned long, hi, VMALLOC_END);
	if (lo >= hi)
		return NULL;
	page = __vmalloc_node_range(PAGE_SIZE, PAGE_SIZE, lo, hi,
				    GFP_KERNEL | __GFP_NOWARN, PAGE_KERNEL_ROX,
				    VM_FLUSH_RESET_PERMS, NUMA_NO_NODE,
				    __builtin_return_address(0));
	return page ? kasan_reset_tag(page) : NULL;
}

/*
 * A slot for @p: within a B's reach of the instruction after it when
 * one can be had there (every slot of a page that starts at least a
 * page past the reach's low end and ends a page before its high end
 * reaches), any slot otherwise, whose copy is then only stepped.
 */
static kprobe_opcode_t *take_slot(struct kprobe *p)
{
	unsigned long next = (unsigned long)(p->addr + 1);
	kprobe_opcode_t *slot;

	slot = kprobe_get_insn_slot_within(next - SZ_128M + PAGE_SIZE,
					   next + SZ_128M - PAGE_SIZE);
	return slot ?: get_insn_slot();
}

/*
 * Write the slot: for the step, the copy and the BRK that ends it; for a
 * boosted hit, when the slot is in reach, the copy and a B to the
 * instruction after the probe. Each half is one 64-bit write, since each
 * write maps the slot's page at a fixmap address and unmaps it, with a
 * broadcast TLB invalidation. Slots are 16 bytes, so the halves are
 * 8-byte aligned.
 */
static int fill_slot(struct kprobe *p)
{
	kprobe_opcode_t *slot, *copy;
	union {
		__le32 insn[MAX_INSN_SIZE];
		u64 both;
	} step = {
		.insn = { cpu_to_le32(p->opcode), cpu_to_le32(BRK64_OPCODE_KPROBES_SS) },
	}, boost = {
		.insn = { cpu_to_le32(p->opcode) },
	};

	BUILD_BUG_ON(sizeof(step) != sizeof(u64));
	slot = take_slot(p);
	if (!slot)
		return kprobe_refuse(-ENOMEM, "out of memory");
	p->ainsn.api.insn = slot;
	copy = boosted_copy(p);
	if (copy) {
		u32 back = aarch64_insn_gen_branch_imm((unsigned long)(copy + 1),
						       (unsigned long)(p->addr + 1),
						       AARCH64_INSN_BRANCH_NOLINK);

		boost.insn[1] = cpu_to_le32(back);
	}
	if (aarch64_insn_write_literal_u64(slot, step.both) ||
	    (copy && aarch64_insn_write_literal_u64(copy, boost.both))) {
		p->ainsn.api.insn = NULL;
		free_insn_slot(slot, 0);
		return kprobe_refuse(-ENOMEM, "the slot could not be written");
	}
	/*
	 * The slot is cleaned to the point of unification here, before
	 * the probe's BRK is written; a CPU reaches it only through that
	 * BRK, whose exception synchronises its instruction fetch.
	 */
	caches_clean_inval_pou((unsigned long)slot, (unsigned long)(slot + KPROBE_SLOT_SIZE));
	return 0;
}

/**
 * arch_prepare_kprobe() - check a probe point and set up its execution
 * @p: the probe (p->addr set); kprobe_mutex and text_mutex held
 *
 * Return: 0; -EINVAL for an address that is not a word boundary, an
 * instruction with an exception table entry, the ftrace ops pointer
 * before a function, or an instruction that can be neither stepped nor
 * simulated (as the tree's arm64 code answers each); -ENOMEM.
 */
int arch_prepare_kprobe(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr;
	enum probe_insn kind;
	u32 insn;

	lockdep_assert_held(&text_mutex);
	if (!IS_ALIGNED(addr, AARCH64_INSN_SIZE))
		return kprobe_refuse(-EINVAL, "not an instruction boundary");
	if (search_exception_tables(addr))
		return kprobe_refuse(-EINVAL, "an access whose fault is fixed up");
	if (is_ftrace_ops_literal(addr))
		return kprobe_refuse(-EINVAL, "the ftrace ops pointer before a function");
	if (aarch64_insn_read(p->addr, &insn))
		return kprobe_refuse(-EINVAL, "text that cannot be read");
	if (is_simd_fp_literal_load(insn))
		return kprobe_refuse(-EINVAL, "a literal load into a SIMD&FP register");

	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = insn;
	kind = decode_insn(insn, &p->ainsn.api);
	if (kind != INSN_REJECTED && in_exclusive_sequence(p->addr))
		return kprobe_refuse(-EINVAL, "inside an exclusive load/store sequence");
	switch (kind) {
	case INSN_GOOD_NO_SLOT:
		return 0;
	case INSN_GOOD:
		if (p->flags & KPROBE_FLAG_QUERY)
			return 0;
		return fill_slot(p);
	default:
		return kprobe_refuse(-EINVAL, "an instruction kprobes cannot execute");
	}
}

/**
 * arch_kprobe_boostable() - may hits of @p run without a second exception?
 * @p: a prepared probe; kprobe_mutex held
 * @why: set to the rule that decided
 *
 * Return: true for a simulated instruction, and for a copied one whose
 * slot is within a B's reach (a query's probe has no slot: the answer is
 * the one registering gives when it gets a slot in reach, as it does for
 * kernel and module text); false for a slot out of reach.
 */
bool arch_kprobe_boostable(struct kprobe *p, const char **why)
{
	kprobe_assert_mutex_held();
	if (p->ainsn.api.handler) {
		*why = "simulated";
		return true;
	}
	if (!p->ainsn.api.insn || boosted_copy(p)) {
		*why = "the copy branches back, when no post_handler runs";
		return true;
	}
	*why = "the slot is out of a B's reach: a second BRK ends the copy";
	return false;
}

/**
 * arch_remove_kprobe() - free what arch_prepare_kprobe() took
 * @p: the probe; no CPU is in a hit of it any more
 *
 * A step runs with interrupts masked, so its half of a slot is never
 * left half-run by a preempted task; a boosted copy runs with them as
 * the probed code had them, and a task preempted there outlives the
 * core's synchronize_rcu(): such a slot goes back dirty.
 */
void arch_remove_kprobe(struct kprobe *p)
{
	kprobe_assert_mutex_held();
	if (p->ainsn.api.insn) {
		free_insn_slot(p->ainsn.api.insn,
			       IS_ENABLED(CONFIG_PREEMPTION) && boosted_copy(p));
		p->ainsn.api.insn = NULL;
	}
}

/*
 * A jump label site is a NOP or a B, a BUG() or WARN() a BRK; 6.12's
 * arm64 has no inline static calls. Anything else is in no table.
 */
unsigned int arch_kprobe_listed_tables(unsigned long addr)
{
	u32 insn;

	if (aarch64_insn_read((void *)addr, &insn))
		return KPROBE_LISTED_ANY;
	if (insn == aarch64_insn_gen_nop() || aarch64_insn_is_b(insn))
		return KPROBE_LISTED_JUMP_LABEL;
	if (aarch64_insn_is_brk(insn))
		return KPROBE_LISTED_BUG;
	return 0;
}

/**
 * arch_populate_kprobe_blacklist() - the text a probe must never go in
 *
 * Exception entry and return, the irqentry text, and the hypervisor's
 * text (and, when the kernel does not run at EL2 itself, its identity
 * mapped text): listed, so that debugfs shows them.
 *
 * Return: 0, or the error of the first range that could not be added.
 */
int __init arch_populate_kprobe_blacklist(void)
{
	static const struct {
		const char *start, *end;
	} areas[] = {
		{ __entry_text_start, __entry_text_end },
		{ __irqentry_text_start, __irqentry_text_end },
		{ __hyp_text_start, __hyp_text_end },
	};
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(areas); i++) {
		ret = kprobe_add_area_blacklist((unsigned long)areas[i].start,
						(unsigned long)areas[i].end);
		if (ret)
			return ret;
	}
	if (is_kernel_in_hyp_mode())
		return 0;
	return kprobe_add_area_blacklist((unsigned long)__hyp_idmap_text_start,
					 (unsigned long)__hyp_idmap_text_end);
}

/* ---- the hit path ------------------------------------------------------------ */

/* The probe this CPU is handling, and its state: the core reads them. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
DEFINE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
DEFINE_PER_CPU(unsigned long, kprobe_brk_traps);
EXPORT_PER_CPU_SYMBOL_GPL(kprobe_brk_traps);

static __always_inline void count_brk_trap(void)
{
	__this_cpu_inc(kprobe_brk_traps);
}
#else
static __always_inline void count_brk_trap(void)
{
}
#endif

/*
 * Where the CPU goes next is not where it branched to: a BTYPE left from
 * an indirect branch to the probed landing pad must not be checked
 * against the instruction we resume at.
 */
static __always_inline void resume_at(struct pt_regs *regs, unsigned long pc)
{
	regs->pc = pc;
	regs->pstate &= ~PSR_BTYPE_MASK;
}

/* Carry out @p's simulated instruction on @regs. */
static __always_inline void simulate(struct kprobe *p, struct pt_regs *regs)
{
	regs->pstate &= ~PSR_BTYPE_MASK;
	p->ainsn.api.handler(p->opcode, (long)p->addr, regs);
}

/*
 * The helpers of the hit path are inlined into the BRK handlers, which
 * NOKPROBE_SYMBOL() covers: a call of its own, with its pointer
 * authentication and frame, would cost every hit a dozen instructions.
 * The handlers are notrace, as the tree's arm64 hit path is: no function
 * tracer callback runs inside a hit, and no ftrace NOPs are executed by
 * every one.
 */

/* Send the CPU to @p's slot with DAIF masked, in hit state @status. */
static __always_inline void step_out_of_line(struct kprobe *p, struct pt_regs *regs,
					     struct kprobe_ctlblk *kcb,
					     unsigned int status)
{
	unsigned long slot = (unsigned long)p->ainsn.api.insn;
	u64 pstate = regs->pstate;

	/* Read before any store: the compiler cannot tell they don't alias. */
	kcb->kprobe_status = status;
	kcb->saved_daif = pstate & DAIF_MASK;
	regs->pstate = (pstate | DAIF_MASK) & ~PSR_BTYPE_MASK;
	regs->pc = slot;
}

/*
 * Run @p's copy: boosted, the hit over, when no post_handler waits for
 * it (none does for a hit of a disabled probe) and the slot is in reach
 * (DAIF stays as the probed code had it); stepped otherwise. Read once:
 * an aggregate's post_handler is set when a member with one joins,
 * while other CPUs hit the site.
 */
static __always_inline void boost_or_step(struct kprobe *p, struct pt_regs *regs,
					  struct kprobe_ctlblk *kcb, bool enabled)
{
	kprobe_opcode_t *copy;

	if (!enabled || !READ_ONCE(p->post_handler)) {
		copy = boosted_copy(p);
		if (copy) {
			reset_current_kprobe();
			resume_at(regs, (unsigned long)copy);
			return;
		}
	}
	if (unlikely(!enabled)) {
		/*
		 * Stepped as a nested hit is, with no outer hit to go back
		 * to: the step's end runs no post_handler and leaves
		 * current_kprobe NULL.
		 */
		kcb->outer = NULL;
		kcb->outer_status = 0;
		kcb->outer_daif = 0;
		step_out_of_line(p, regs, kcb, KPROBE_REENTER);
		return;
	}
	step_out_of_line(p, regs, kcb, KPROBE_HIT_SS);
}

/*
 * The probed instruction of an enabled probe's hit has run:
 * post_handler, then leave the probe.
 */
static __always_inline void finish_hit(struct kprobe *p, struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb)
{
	kprobe_post_handler_t post;

	/*
	 * Read once: an aggregate's post_handler is cleared when its last
	 * member with one leaves, while other CPUs hit the site.
	 */
	post = READ_ONCE(p->post_handler);
	if (post) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		post(p, regs, 0);
	}
	reset_current_kprobe();
}

/*
 * @p was hit while this CPU runs another probe's handler: count a miss
 * and run the instruction without the handlers.
 */
static notrace int nested_hit(struct kprobe *p, struct kprobe *cur,
			      struct pt_regs *regs, struct kprobe_ctlblk *kcb)
{
	if (kcb->kprobe_status == KPROBE_REENTER) {
		/*
		 * A nested step's copy is one instruction run with DAIF
		 * masked: nothing in it can hit a probe. The outer_* fields
		 * hold one level only.
		 */
		pr_err("hit at %pS while stepping for a nested hit at %pS\n",
		       p->addr, cur->addr);
		return DBG_HOOK_ERROR;
	}
	kprobes_inc_nmissed_count(p);
	if (!p->ainsn.api.insn) {
		simulate(p, regs);
		return DBG_HOOK_HANDLED;
	}
	kcb->outer = cur;
	kcb->outer_status = kcb->kprobe_status;
	kcb->outer_daif = kcb->saved_daif;
	__this_cpu_write(current_kprobe, p);
	step_out_of_line(p, regs, kcb, KPROBE_REENTER);
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(nested_hit);

/* Put back the hit a KPROBE_REENTER step interrupted. */
static notrace void resume_outer_hit(struct kprobe_ctlblk *kcb)
{
	__this_cpu_write(current_kprobe, kcb->outer);
	kcb->kprobe_status = kcb->outer_status;
	kcb->saved_daif = kcb->outer_daif;
	kcb->outer = NULL;
}
NOKPROBE_SYMBOL(resume_outer_hit);

/*
 * A BRK #KPROBES_BRK_IMM that no probe owns, at @regs' pc. Out of line:
 * its local, whose address is taken, would cost every hit a stack slot.
 */
static noinline notrace int unowned_brk(struct pt_regs *regs)
{
	kprobe_opcode_t *addr = (kprobe_opcode_t *)instruction_pointer(regs);
	u32 insn;

	/* A redirected hit of an optimized site leaves by its own BRK. */
	if (kprobe_optprobe_redirect(regs))
		return DBG_HOOK_HANDLED;

	/*
	 * The probe left after this CPU took its BRK and the text is
	 * restored: run the original instruction.
	 */
	if (!aarch64_insn_read(addr, &insn) && insn != BRK64_OPCODE_KPROBES)
		return DBG_HOOK_HANDLED;
	WARN_ONCE(1, "kprobes: BRK at %pS that no probe owns\n", addr);
	return DBG_HOOK_ERROR;
}
NOKPROBE_SYMBOL(unowned_brk);

/**
 * kprobe_brk_handler() - handle BRK #KPROBES_BRK_IMM
 * @regs: the trapped context; regs->pc is the BRK's address
 * @esr: the exception syndrome
 *
 * Called by debug-monitors.c with every DAIF bit masked.
 *
 * Return: DBG_HOOK_HANDLED, or DBG_HOOK_ERROR for a BRK no probe owns
 * (the kernel then dies, as for any unclaimed BRK).
 */
notrace int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	struct kprobe *p = get_kprobe((kprobe_opcode_t *)instruction_pointer(regs));
	struct kprobe_ctlblk *kcb;
	unsigned int flags;
	bool enabled;

	/*
	 * The per-CPU state is read after the lookup, so that no register
	 * holds it across that call (DAIF is masked: this CPU stays).
	 */
	if (unlikely(!p))
		return unowned_brk(regs);
	count_brk_trap();
	kcb = get_kprobe_ctlblk();
	if (unlikely(kprobe_running()))
		return nested_hit(p, kprobe_running(), regs, kcb);

	/*
	 * The flags are read once, before any store (which the compiler
	 * must assume may change them), and the hit counted before the
	 * per-CPU state is written, so that the per-CPU offset read for
	 * kprobe_running() serves it.
	 */
	flags = READ_ONCE(p->flags);
	enabled = !(flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE));
	if (enabled)
		kprobe_count_hit(p);
	__this_cpu_write(current_kprobe, p);
	kcb->kprobe_status = KPROBE_HIT_ACTIVE;
	if (enabled && kprobe_site_pre_handler(p, flags, regs)) {
		/* The handler moved regs->pc: skip the instruction. */
		regs->pstate &= ~PSR_BTYPE_MASK;
		reset_current_kprobe();
		return DBG_HOOK_HANDLED;
	}
	if (p->ainsn.api.insn) {
		boost_or_step(p, regs, kcb, enabled);
		return DBG_HOOK_HANDLED;
	}
	simulate(p, regs);
	if (enabled)
		finish_hit(p, regs, kcb);
	else
		reset_current_kprobe();
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_brk_handler);

/*
 * Is this the BRK behind the copy in the slot of the step this CPU runs?
 * A simulated probe has no slot (0), and no BRK is at address 4.
 */
static __always_inline bool is_step_end(struct kprobe *cur, unsigned int status,
					unsigned long pc)
{
	return cur && (status == KPROBE_HIT_SS || status == KPROBE_REENTER) &&
	       pc == (unsigned long)cur->ainsn.api.insn + AARCH64_INSN_SIZE;
}

/**
 * kprobe_ss_brk_handler() - handle the BRK that ends a step out of line
 * @regs: the trapped context, in the slot
 * @esr: the exception syndrome
 *
 * Return: DBG_HOOK_HANDLED, or DBG_HOOK_ERROR when the BRK is not the end
 * of this CPU's step.
 */
notrace int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe *cur = kprobe_running();
	unsigned int status = kcb->kprobe_status;

	if (!is_step_end(cur, status, instruction_pointer(regs)))
		return DBG_HOOK_ERROR;
	count_brk_trap();
	/* DAIF as it was at the BRK, and no BTYPE: as resume_at(). */
	regs->pstate = (regs->pstate & ~(DAIF_MASK | PSR_BTYPE_MASK)) | kcb->saved_daif;
	regs->pc = (unsigned long)cur->addr + AARCH64_INSN_SIZE;
	if (status == KPROBE_REENTER)
		resume_outer_hit(kcb);
	else
		finish_hit(cur, regs, kcb);
	return DBG_HOOK_HANDLED;
}
NOKPROBE_SYMBOL(kprobe_ss_brk_handler);

/**
 * kprobe_fault_handler() - a fault while this CPU handles a probe
 * @regs: the faulting context
 * @esr: the exception syndrome
 *
 * A fault in a step's copy is rewound to the probed instruction, with
 * the hit ended and DAIF as it was there, so that the fault is handled
 * (or reported) as the original instruction's. Faults in handlers are
 * left to the fault handling that follows.
 *
 * Return: 0: the fault is always handled further by the caller.
 */
notrace int kprobe_fault_handler(struct pt_regs *regs, unsigned int esr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe *cur = kprobe_running();

	if (!cur || (kcb->kprobe_status != KPROBE_HIT_SS &&
		     kcb->kprobe_status != KPROBE_REENTER) ||
	    instruction_pointer(regs) != (unsigned long)cur->ainsn.api.insn)
		return 0;
	regs->pstate = (regs->pstate & ~DAIF_MASK) | kcb->saved_daif;
	resume_at(regs, (unsigned long)cur->addr);
	if (kcb->kprobe_status == KPROBE_REENTER)
		resume_outer_hit(kcb);
	else
		reset_current_kprobe();
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);
