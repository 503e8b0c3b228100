// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv kprobes: which instructions may be probed, and what a hit does.
 *
 * A probe's instruction is replaced by an EBREAK of its own size (C.EBREAK
 * over a compressed one). A hit runs the pre_handler, then the
 * instruction, then the post_handler, in one of three ways:
 *
 *  simulated	branches, jumps and AUIPC (the kinds decode-insn.c hands
 *		to simulate-insn.c) are carried out on pt_regs inside the
 *		EBREAK handler: one exception per hit; so are integer
 *		arithmetic and loads and stores of integer registers
 *		(emulate.c), when they are not boosted;
 *  boosted	anything else that may run elsewhere, hit with no
 *		post_handler to run, runs from the second part of its
 *		slot, [copy, AUIPC rX, JALR x0 back to the next
 *		instruction], with interrupts as the probed code had them:
 *		one exception per hit. rX is a register the text after the
 *		probe writes before it reads (liveness.c); the slot lies
 *		within AUIPC's 2 GiB of the probe, which module space is of
 *		the kernel and of modules. The hit ends when the CPU leaves
 *		for the slot;
 *  stepped	the other copied instructions (atomics, FP; an access
 *		with an exception table entry, whose fault must be fixed
 *		up at the probe's address, or one that faulted when
 *		emulated), when a post_handler must run after the copy,
 *		the hit is nested, or no register is free, run from the
 *		first part, [copy, EBREAK], with interrupts masked (SPIE
 *		cleared), and the second EBREAK brings the CPU back: two
 *		exceptions per hit.
 *
 * Per-CPU state (struct kprobe_ctlblk, current_kprobe) follows one hit:
 *
 *   (none) --EBREAK--> HIT_ACTIVE --pre_handler redirects--> (none)
 *                         |                 \--boosted--> (none)
 *                         |                 \--simulated--> HIT_SSDONE --> (none)
 *                         \--stepped--> HIT_SS --step EBREAK--> HIT_SSDONE --> (none)
 *
 * HIT_SSDONE lasts while the post_handler runs. A probe hit while this
 * CPU handles another (a handler calls probed code) only counts as
 * missed: a simulated or emulated one is carried out on the spot; a
 * copied one is stepped as KPROBE_REENTER, with the interrupted hit's
 * state kept in the control block's outer_* fields and put back when its
 * step ends.
 *
 * The EBREAK handlers run as NMIs do (do_trap_break() enters with
 * irqentry_nmi_enter()), with interrupts masked: no lock is taken here.
 * A step's part of a slot is never left by a preempted task; the boosted
 * part may be, so a slot with one is freed dirty (reused after an
 * RCU-tasks grace period).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/bug.h>
#include <asm/cacheflush.h>
#include <asm/insn.h>
#include <asm/patch.h>
#include <asm/sections.h>

#include "decode-insn.h"

#define EBREAK		0x00100073U
#define C_EBREAK	0x9002U

/* ---- where a probe may go -------------------------------------------------- */

/* Read the instruction at @addr; false when its text cannot be read. */
static bool read_insn(unsigned long addr, u32 *insn)
{
	u16 lo, hi = 0;

	if (get_kernel_nofault(lo, (u16 *)addr))
		return false;
	if ((lo & 3) == 3 && get_kernel_nofault(hi, (u16 *)(addr + 2)))
		return false;
	*insn = lo | (u32)hi << 16;
	return true;
}

/* LR and SC: AMO major opcode, funct5 00010 and 00011. */
static bool is_lr_or_sc(u32 insn)
{
	return (insn & 0x7f) == 0x2f && ((insn >> 27) == 2 || (insn >> 27) == 3);
}

/*
 * Instructions an LR/SC sequence spans at most: the ISA guarantees
 * progress only to constrained loops of 16 instructions.
 */
#define LRSC_SPAN	16

/*
 * Where the last walk_to() stopped: a function, an instruction boundary
 * in it, and the LR/SC window open there. kprobe_mutex guards it;
 * arch_kprobe_text_gone() forgets a function whose text goes away, and
 * only text whose going the core hears of is remembered.
 */
static struct {
	unsigned long func;
	unsigned long at;
	unsigned int lr_left;
} last_walk;

/*
 * Walk @addr's function from its start, @func, to @addr: 2- and 4-byte
 * instructions mix, so only the walk can tell where one starts. On the
 * way, note an LR whose SC has not come yet: any trap between them
 * (the return from it clears the reservation) makes the SC fail, every
 * time round its loop. The function's text is mapped while kprobes
 * holds its mutexes.
 *
 * Return: 0, -EILSEQ when no instruction starts at @addr, -EINVAL when
 * @addr is an LR or SC or lies between them.
 */
static int walk_to(unsigned long addr, unsigned long func)
{
	unsigned int lr_left = 0;
	unsigned long at = func;
	u16 lo;
	u32 insn;

	kprobe_assert_mutex_held();
	/*
	 * Probes of one function tend to come in address order (a batch,
	 * a tool walking a function): go on from where the last walk of
	 * this function stopped, an instruction boundary of it.
	 */
	if (last_walk.func == func && last_walk.at <= addr) {
		at = last_walk.at;
		lr_left = last_walk.lr_left;
	}
	for (; at < addr; at += GET_INSN_LENGTH(lo)) {
		lo = kprobe_text_parcel(at, false);
		if (lr_left)
			lr_left--;
		if ((lo & 3) != 3)
			continue;
		insn = lo | (u32)kprobe_text_parcel(at + 2, false) << 16;
		if (is_lr_or_sc(insn))
			lr_left = insn >> 27 == 2 ? LRSC_SPAN : 0;
	}
	if (at != addr)
		return -EILSEQ;
	if (kprobe_hears_text_gone(func)) {
		last_walk.func = func;
		last_walk.at = at;
		last_walk.lr_left = lr_left;
	}
	return lr_left ? -EINVAL : 0;
}

/**
 * arch_kprobe_text_gone() - forget the last walk and decoded text when it goes
 * @start: first byte of the text going away
 * @end: the byte after its last
 *
 * Other text may be loaded there, with other instruction boundaries.
 */
void arch_kprobe_text_gone(unsigned long start, unsigned long end)
{
	kprobe_assert_mutex_held();
	if (last_walk.func >= start && last_walk.func < end)
		last_walk.func = 0;
	kprobe_forget_decoded(start, end);
}

/*
 * A traced function starts with ftrace's call site, AUIPC and JALR (or
 * two NOPs): the core refuses its first word and serves a probe there
 * through ftrace where it can; a probe on its second would be undone,
 * or undo ftrace's write, as each side writes its own instruction back.
 */
#ifdef CONFIG_DYNAMIC_FTRACE
static bool inside_ftrace_site(unsigned long addr, unsigned long func)
{
	unsigned long site;

	/* The call site is the function's first instructions. */
	if (addr - func >= MCOUNT_INSN_SIZE)
		return false;
	site = ftrace_location_range(addr, addr);
	return site && site != addr;
}
#else
static bool inside_ftrace_site(unsigned long addr, unsigned long func)
{
	return false;
}
#endif

/* ---- slots ----------------------------------------------------------------- */

/* Does AUIPC at @from, with the JALR after it, reach @to? */
static bool auipc_reaches(unsigned long from, unsigned long to)
{
	s64 off = (s64)(to - from);

	return off >= -(s64)SZ_2G - SZ_2K && off < (s64)SZ_2G - SZ_2K;
}

/**
 * arch_kprobe_alloc_insn_page_within() - an executable page in [@lo, @hi)
 * @lo: lowest address the page may start at
 * @hi: address the page must end at or before
 *
 * Slot pages for copies that jump back: the core's own pages come from
 * EXECMEM_KPROBES, anywhere in vmalloc, out of AUIPC's reach of the
 * kernel image. The range is clamped to the module area, which lies
 * within 2 GiB of the kernel's and modules' text.
 *
 * Return: the page (read-only, executable; written through the text
 * fixmap), or NULL when the range has no room.
 */
void *arch_kprobe_alloc_insn_page_within(unsigned long lo, unsigned long hi)
{
	lo = max_t(unsigned long, lo, MODULES_VADDR);
	hi = min_t(unsigned long, hi, MODULES_END);
	if (lo >= hi)
		return NULL;
	return __vmalloc_node_range(PAGE_SIZE, PAGE_SIZE, lo, hi,
				    GFP_KERNEL | __GFP_NOWARN, PAGE_KERNEL_READ_EXEC,
				    VM_FLUSH_RESET_PERMS, NUMA_NO_NODE,
				    __builtin_return_address(0));
}

/*
 * The register a boosted copy of @p may use, 0 for none: one the text
 * after the probe writes before reading, and no boost for an access
 * whose fault the exception table fixes up, since the fix-up is found
 * by the faulting address. An instruction emulate.c carries out has no
 * table entry (it asked, for an access).
 */
static unsigned int boost_register(struct kprobe *p, unsigned long func,
				   unsigned long size)
{
	unsigned long next = (unsigned long)p->addr + GET_INSN_LENGTH(p->opcode);

	if (!p->ainsn.api.handler && search_exception_tables((unsigned long)p->addr))
		return 0;
	return kprobe_free_register(next, func, func + size);
}

/*
 * A slot within AUIPC's reach of @next (its page a page inside the
 * reach). The kernel's text lies in the top 2 GiB: the reach's high end
 * is clamped to the top of the address space.
 */
static kprobe_opcode_t *slot_near(unsigned long next)
{
	unsigned long hi = next > ULONG_MAX - SZ_2G ? ULONG_MAX : next + SZ_2G;

	return kprobe_get_insn_slot_within(next - SZ_2G + PAGE_SIZE, hi - 2 * PAGE_SIZE);
}

/*
 * Take and write @p's slot: the step's part, [copy, EBREAK]; and, when
 * register @rx is free and the slot is in reach, the boosted part,
 * [copy, AUIPC rx, JALR x0 to the next instruction], whose address goes
 * to p->ainsn.api.restore (0 when the copy is only stepped).
 */
static int fill_slot(struct kprobe *p, unsigned int rx)
{
	unsigned int len = GET_INSN_LENGTH(p->opcode);
	unsigned long next = (unsigned long)p->addr + len;
	kprobe_opcode_t *slot = NULL;
	unsigned long boost, jump;
	u8 buf[KPROBE_SLOT_SIZE * sizeof(kprobe_opcode_t)] = {};
	u32 insn = EBREAK, auipc, jalr;
	s32 off, hi;

	if (rx)
		slot = slot_near(next);
	if (!slot) {
		rx = 0;
		slot = get_insn_slot();
	}
	if (!slot)
		return kprobe_refuse(-ENOMEM, "out of memory");
	memcpy(buf, &p->opcode, len);
	memcpy(buf + len, &insn, sizeof(insn));
	boost = (unsigned long)slot + KPROBE_SLOT_STEP_BYTES;
	jump = boost + len;
	if (rx && auipc_reaches(jump, next)) {
		off = (s32)(next - jump);
		hi = (off + SZ_2K) & ~(SZ_4K - 1);
		auipc = hi | rx << 7 | 0x17;
		jalr = (u32)(off - hi) << 20 | rx << 15 | 0x67;
		memcpy(buf + KPROBE_SLOT_STEP_BYTES, &p->opcode, len);
		memcpy(buf + KPROBE_SLOT_STEP_BYTES + len, &auipc, sizeof(auipc));
		memcpy(buf + KPROBE_SLOT_STEP_BYTES + len + 4, &jalr, sizeof(jalr));
		p->ainsn.api.restore = boost;
	}
	p->ainsn.api.insn = slot;
	/*
	 * No FENCE.I on the other harts here: a hart reaches the slot only
	 * through the probe's EBREAK, which is written later, in the
	 * stop_machine() of arming.c, where every hart executes FENCE.I.
	 */
	if (patch_insn_write(slot, buf, sizeof(buf))) {
		p->ainsn.api.insn = NULL;
		p->ainsn.api.restore = 0;
		free_insn_slot(slot, 0);
		return kprobe_refuse(-ENOMEM, "the slot could not be written");
	}
	return 0;
}

/**
 * arch_prepare_kprobe() - check a probe point and set up its execution
 * @p: the probe (p->addr set); kprobe_mutex and text_mutex held
 *
 * Return: 0; -EILSEQ for an odd address or one inside an instruction
 * (or in no function, where that cannot be told) or inside an ftrace
 * call site; -EINVAL for an instruction the decoder rejects (as the
 * tree's riscv code answers each) and inside an LR/SC sequence;
 * -ENOMEM.
 */
int arch_prepare_kprobe(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr, func, size;
	u32 insn;
	int ret;

	lockdep_assert_held(&text_mutex);
	if (addr & 1 || !kprobe_function_bounds(addr, &func, &size))
		return kprobe_refuse(-EILSEQ, "not an instruction boundary");
	ret = walk_to(addr, func);
	if (ret == -EILSEQ)
		return kprobe_refuse(ret, "not an instruction boundary");
	if (!read_insn(addr, &insn))
		return kprobe_refuse(-EINVAL, "text that cannot be read");
	/* Inside an optimized site's region, the text is its jump. */
	insn = kprobe_text_parcel(addr, false);
	if (GET_INSN_LENGTH(insn) == 4)
		insn |= (u32)kprobe_text_parcel(addr + 2, false) << 16;
	if (ret || is_lr_or_sc(insn))
		return kprobe_refuse(-EINVAL, "inside an LR/SC sequence");
	if (inside_ftrace_site(addr, func))
		return kprobe_refuse(-EILSEQ, "inside an ftrace call site");

	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = insn;
	switch (riscv_probe_decode_insn(&insn, &p->ainsn.api)) {
	case INSN_GOOD_NO_SLOT:
		return 0;
	case INSN_GOOD:
		p->ainsn.api.handler = kprobe_emulation(insn, addr);
		if (p->flags & KPROBE_FLAG_QUERY)
			return 0;
		return fill_slot(p, boost_register(p, func, size));
	default:
		return kprobe_refuse(-EINVAL, "an instruction kprobes cannot execute");
	}
}

/**
 * arch_kprobe_boostable() - may hits of @p run without a second exception?
 * @p: a prepared probe; kprobe_mutex held
 * @why: set to the rule that decided
 *
 * Return: true for a simulated instruction, and for a copied one with a
 * boosted part in its slot (a query's probe has no slot: the answer is
 * whether a register is free after it); false otherwise.
 */
bool arch_kprobe_boostable(struct kprobe *p, const char **why)
{
	unsigned long func, size;

	kprobe_assert_mutex_held();
	if (p->ainsn.api.handler == kprobe_emulate_int) {
		*why = "integer arithmetic: carried out on the trap's registers";
		return true;
	}
	if (p->ainsn.api.handler == kprobe_emulate_access) {
		*why = "a load or store: carried out on the trap's registers";
		return true;
	}
	if (p->ainsn.api.handler) {
		*why = "simulated";
		return true;
	}
	if (p->ainsn.api.restore ||
	    (!p->ainsn.api.insn &&
	     kprobe_function_bounds((unsigned long)p->addr, &func, &size) &&
	     boost_register(p, func, size))) {
		*why = "the copy jumps back through a free register, when no post_handler runs";
		return true;
	}
	*why = "no register is free after it, or its fault is fixed up: an EBREAK ends the copy";
	return false;
}

/**
 * arch_remove_kprobe() - free what arch_prepare_kprobe() took
 * @p: the probe; no CPU is in a hit of it any more
 *
 * A step runs with interrupts masked, so its part of a slot is never
 * left half-run by a preempted task; a boosted copy runs with them as
 * the probed code had them, and a task preempted there outlives the
 * core's synchronize_rcu(): such a slot goes back dirty.
 */
void arch_remove_kprobe(struct kprobe *p)
{
	kprobe_assert_mutex_held();
	if (p->ainsn.api.insn) {
		free_insn_slot(p->ainsn.api.insn,
			       IS_ENABLED(CONFIG_PREEMPTION) && p->ainsn.api.restore);
		p->ainsn.api.insn = NULL;
		p->ainsn.api.restore = 0;
	}
}

/*
 * A jump label site is a NOP or a JAL x0, a BUG() or WARN() an EBREAK;
 * 6.12's riscv has no inline static calls. Anything else is in no table.
 */
unsigned int arch_kprobe_listed_tables(unsigned long addr)
{
	u32 insn;

	if (!read_insn(addr, &insn))
		return KPROBE_LISTED_ANY;
	if (insn == 0x00000013 || (insn & 0xfff) == 0x06f)
		return KPROBE_LISTED_JUMP_LABEL;
	if (insn == EBREAK || insn == C_EBREAK)
		return KPROBE_LISTED_BUG;
	return 0;
}

/**
 * arch_populate_kprobe_blacklist() - the text a probe must never go in
 *
 * Exception entry and return and the irqentry text: listed, so that
 * debugfs shows them.
 *
 * Return: 0, or the error of the range that could not be added.
 */
int __init arch_populate_kprobe_blacklist(void)
{
	return kprobe_add_area_blacklist((unsigned long)__entry_text_start,
					 (unsigned long)__entry_text_end) ?:
	       kprobe_add_area_blacklist((unsigned long)__irqentry_text_start,
					 (unsigned long)__irqentry_text_end);
}

/* ---- the hit path ------------------------------------------------------------ */

/* The probe this CPU is handling, and its state: the core reads them. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
DEFINE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
DEFINE_PER_CPU(unsigned long, kprobe_ebreak_traps);
EXPORT_PER_CPU_SYMBOL_GPL(kprobe_ebreak_traps);

static __always_inline void count_ebreak_trap(void)
{
	__this_cpu_inc(kprobe_ebreak_traps);
}
#else
static __always_inline void count_ebreak_trap(void)
{
}
#endif

/*
 * The helpers of the hit path are inlined into the EBREAK handlers,
 * which NOKPROBE_SYMBOL() covers. The handlers are notrace: no function
 * tracer callback runs inside a hit.
 */

/*
 * Carry out @p's simulated instruction on @regs (it sets regs->epc):
 * false when an emulated access faulted, which left @regs alone.
 */
static __always_inline bool simulate(struct kprobe *p, struct pt_regs *regs)
{
	return p->ainsn.api.handler(p->opcode, (unsigned long)p->addr, regs);
}

/* Send the CPU to @p's slot with interrupts masked, in hit state @status. */
static __always_inline void step_out_of_line(struct kprobe *p, struct pt_regs *regs,
					     struct kprobe_ctlblk *kcb,
					     unsigned int status)
{
	kcb->kprobe_status = status;
	kcb->saved_status = regs->status;
	regs->status &= ~SR_SPIE;
	regs->epc = (unsigned long)p->ainsn.api.insn;
}

/*
 * Send the CPU to @p's slot: boosted, the hit over, when no post_handler
 * waits for the copy (none does for a hit of a disabled probe) and the
 * slot has a boosted part; else stepped, unless the instruction is
 * carried out here (false: the caller finishes the hit). The
 * post_handler is read once: an aggregate's is set when a member with
 * one joins, while other CPUs hit the site.
 */
static __always_inline bool to_slot(struct kprobe *p, struct pt_regs *regs,
				    struct kprobe_ctlblk *kcb, struct kprobe **running,
				    bool enabled)
{
	if (p->ainsn.api.restore && (!enabled || !READ_ONCE(p->post_handler))) {
		*running = NULL;
		regs->epc = p->ainsn.api.restore;
		return true;
	}
	if (p->ainsn.api.handler && likely(simulate(p, regs)))
		return false;
	if (unlikely(!enabled)) {
		/*
		 * Stepped as a nested hit is, with no outer hit to go back
		 * to: the step's end runs no post_handler and leaves
		 * current_kprobe NULL.
		 */
		kcb->outer = NULL;
		kcb->outer_status = 0;
		kcb->outer_saved_status = 0;
		step_out_of_line(p, regs, kcb, KPROBE_REENTER);
		return true;
	}
	step_out_of_line(p, regs, kcb, KPROBE_HIT_SS);
	return true;
}

/*
 * The probed instruction of an enabled probe's hit has run:
 * post_handler, then leave the probe. @running: this CPU's
 * current_kprobe.
 */
static __always_inline void finish_hit(struct kprobe *p, struct pt_regs *regs,
				       struct kprobe_ctlblk *kcb, struct kprobe **running)
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
	*running = NULL;
}

/*
 * Send a hit of a site the optimizer has claimed (KPROBE_FLAG_OPT_READY
 * in @flags) on in its detour's copy of the region, so that no hart
 * enters the region's inside once the optimizer waits for those there;
 * false for any other site. The flag was read before: FENCE.I makes this
 * hart fetch the detour as written before the flag was set.
 */
static __always_inline bool continue_in_detour(struct kprobe *p, unsigned int flags,
					       struct pt_regs *regs)
{
#ifdef CONFIG_OPTPROBES
	if (unlikely(flags & KPROBE_FLAG_OPT_READY)) {
		smp_rmb();	/* the flag, then the slot and detour it guards */
		regs->epc = kprobe_optprobe_copy(p);
		local_flush_icache_all();
		return true;
	}
#endif
	return false;
}

/*
 * @p was hit while this CPU runs another probe's hit: count a miss and
 * run the instruction without the handlers.
 */
static notrace bool nested_hit(struct kprobe *p, struct kprobe *cur,
			       struct pt_regs *regs, struct kprobe_ctlblk *kcb)
{
	if (kcb->kprobe_status == KPROBE_REENTER) {
		/*
		 * A nested step's copy is one instruction run with
		 * interrupts masked: nothing in it can hit a probe. The
		 * outer_* fields hold one level only.
		 */
		pr_err("hit at %pS while stepping for a nested hit at %pS\n",
		       p->addr, cur->addr);
		return false;
	}
	kprobes_inc_nmissed_count(p);
	if (continue_in_detour(p, READ_ONCE(p->flags), regs))
		return true;
	/* An emulated access that faults is stepped, for the fault to be its own. */
	if (p->ainsn.api.handler && (simulate(p, regs) || !p->ainsn.api.insn))
		return true;
	kcb->outer = cur;
	kcb->outer_status = kcb->kprobe_status;
	kcb->outer_saved_status = kcb->saved_status;
	__this_cpu_write(current_kprobe, p);
	step_out_of_line(p, regs, kcb, KPROBE_REENTER);
	return true;
}
NOKPROBE_SYMBOL(nested_hit);

/* Put back the hit a KPROBE_REENTER step interrupted. */
static notrace void resume_outer_hit(struct kprobe_ctlblk *kcb)
{
	__this_cpu_write(current_kprobe, kcb->outer);
	kcb->kprobe_status = kcb->outer_status;
	kcb->saved_status = kcb->outer_saved_status;
	kcb->outer = NULL;
}
NOKPROBE_SYMBOL(resume_outer_hit);

/*
 * An EBREAK at @regs' epc that no probe owns. When the probe left after
 * this CPU took it and the text is back, run the original instruction;
 * otherwise it is someone else's (BUG(), a debugger).
 */
static noinline notrace bool unowned_ebreak(struct pt_regs *regs)
{
	u32 insn;

#ifdef CONFIG_OPTPROBES
	if (kprobe_optprobe_redirect(regs))
		return true;
#endif
	if (!read_insn(regs->epc, &insn))
		return false;
	return insn != EBREAK && insn != C_EBREAK;
}
NOKPROBE_SYMBOL(unowned_ebreak);

/**
 * kprobe_breakpoint_handler() - handle a kernel-mode EBREAK
 * @regs: the trapped context; regs->epc is the EBREAK's address
 *
 * Called by handle_break() as an NMI, interrupts masked.
 *
 * Return: true when the EBREAK was a probe's (or one since removed),
 * false to let the kernel's other EBREAK users have it.
 */
notrace bool kprobe_breakpoint_handler(struct pt_regs *regs)
{
	struct kprobe *p = get_kprobe_inline((void *)instruction_pointer(regs));
	struct kprobe_ctlblk *kcb;
	struct kprobe **running;
	unsigned int flags;
	bool enabled;

	if (unlikely(p == &kprobe_index_empty))
		return unowned_ebreak(regs);
	/*
	 * The flags are read once, before any store, and the hit counted
	 * before the per-CPU state is written. A probe at an ftrace site is
	 * ftrace's call: an EBREAK there is someone else's (kgdb's, say).
	 */
	flags = READ_ONCE(p->flags);
	if (unlikely(flags & KPROBE_FLAG_FTRACE))
		return unowned_ebreak(regs);
	count_ebreak_trap();
	/*
	 * This CPU's hit state, addressed once: every per-CPU access would
	 * load the CPU's offset again, the stores between may alias it.
	 */
	kcb = get_kprobe_ctlblk();
	running = this_cpu_ptr(&current_kprobe);
	if (unlikely(*running))
		return nested_hit(p, *running, regs, kcb);

	enabled = !(flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE));
	if (enabled)
		kprobe_count_hit(p);
	*running = p;
	kcb->kprobe_status = KPROBE_HIT_ACTIVE;
	if (enabled && kprobe_site_pre_handler(p, flags, regs)) {
		/* The handler moved regs->epc: skip the instruction. */
		*running = NULL;
		return true;
	}
	if (continue_in_detour(p, flags, regs)) {
		*running = NULL;
		return true;
	}
	if (p->ainsn.api.insn) {
		if (to_slot(p, regs, kcb, running, enabled))
			return true;
	} else {
		simulate(p, regs);
	}
	if (enabled)
		finish_hit(p, regs, kcb, running);
	else
		*running = NULL;
	return true;
}
NOKPROBE_SYMBOL(kprobe_breakpoint_handler);

/*
 * Is @pc the EBREAK behind the copy in the slot of the step this CPU
 * runs? A simulated probe has no slot.
 */
static __always_inline bool is_step_end(struct kprobe *cur, unsigned int status,
					unsigned long pc)
{
	return cur && (status == KPROBE_HIT_SS || status == KPROBE_REENTER) &&
	       cur->ainsn.api.insn &&
	       pc == (unsigned long)cur->ainsn.api.insn + GET_INSN_LENGTH(cur->opcode);
}

/*
 * Interrupts as the probed code had them: only SPIE was changed for the
 * step, and the copy may have changed other bits (FS, after an FP
 * instruction), which stay.
 */
static __always_inline void restore_spie(struct pt_regs *regs, struct kprobe_ctlblk *kcb)
{
	regs->status = (regs->status & ~SR_SPIE) | (kcb->saved_status & SR_SPIE);
}

/* @cur's step, in hit state @status, has ended at @regs: leave the slot. */
static __always_inline void end_step(struct kprobe *cur, unsigned int status,
				     struct pt_regs *regs, struct kprobe_ctlblk *kcb)
{
	count_ebreak_trap();
	restore_spie(regs, kcb);
	regs->epc = (unsigned long)cur->addr + GET_INSN_LENGTH(cur->opcode);
	if (status == KPROBE_REENTER)
		resume_outer_hit(kcb);
	else
		finish_hit(cur, regs, kcb, this_cpu_ptr(&current_kprobe));
}

/**
 * kprobe_single_step_handler() - handle the EBREAK that ends a step
 * @regs: the trapped context, in the slot
 *
 * Called by handle_break() before kprobe_breakpoint_handler().
 *
 * Return: true when the EBREAK ends this CPU's step, false otherwise.
 */
notrace bool kprobe_single_step_handler(struct pt_regs *regs)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe *cur = kprobe_running();
	unsigned int status = kcb->kprobe_status;

	/*
	 * Every kernel EBREAK asks here first: the usual answer, no, is
	 * given before the step's end sets up a frame.
	 */
	if (!is_step_end(cur, status, instruction_pointer(regs)))
		return false;
	end_step(cur, status, regs, kcb);
	return true;
}
NOKPROBE_SYMBOL(kprobe_single_step_handler);

/**
 * kprobe_fault_handler() - a fault while this CPU handles a probe
 * @regs: the faulting context
 * @trapnr: the trap's cause
 *
 * A fault in a step's copy is rewound to the probed instruction, with
 * the hit ended and interrupts as they were there, so that the fault is
 * handled (fixed up through the exception table, or reported) as the
 * original instruction's. Faults in handlers are left to the fault
 * handling that follows.
 *
 * Return: 0: the fault is always handled further by the caller.
 */
notrace int kprobe_fault_handler(struct pt_regs *regs, unsigned int trapnr)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();
	struct kprobe *cur = kprobe_running();

	if (!cur || (kcb->kprobe_status != KPROBE_HIT_SS &&
		     kcb->kprobe_status != KPROBE_REENTER) ||
	    instruction_pointer(regs) != (unsigned long)cur->ainsn.api.insn)
		return 0;
	restore_spie(regs, kcb);
	regs->epc = (unsigned long)cur->addr;
	if (kcb->kprobe_status == KPROBE_REENTER)
		resume_outer_hit(kcb);
	else
		reset_current_kprobe();
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);
