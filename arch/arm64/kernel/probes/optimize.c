// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 optimized kprobes: a B instead of the BRK.
 *
 * A probe that is not on a landing pad gets, when it is registered, a
 * detour: a slot within a B's reach (128 MiB) of the probe, which
 * holds, from when the site is first optimized, a copy of the template
 * in optprobe.S:
 *
 *	save x16, x17, x29 and x30 in a pt_regs below sp, and call
 *		kprobe_optprobe_common, which saves the rest and calls
 *		kprobe_optprobe_hit(op, regs) to run the handlers
 *	restore them, do what the probed instruction does at its address,
 *		and branch to where the probed code goes on
 *
 * Once the probe is armed, and only while no post_handler wants the trap
 * after the instruction, the core's optimizer has the B to the detour
 * written over the BRK, a batch at a time (arming.c), and the BRK written
 * back over the B when it unoptimizes. Both are among the instructions
 * the architecture lets change under a running CPU; a CPU that still
 * fetches the BRK takes the breakpoint path, which stays valid. The
 * detour is written before, and every CPU synchronises its context
 * before the B is written (kprobe_queue_detour_jump()).
 *
 * What the handlers see, and the objections raised against earlier arm64
 * optprobes, one by one:
 *
 *  - reach: the detour's page is taken within 128 MiB of the probe
 *    (kprobe_get_optinsn_slot_within()), for the kernel and for modules
 *    wherever KASLR put them; a probe with no page in reach stays a
 *    breakpoint, and the query file says why;
 *  - PSTATE: pt_regs holds NZCV, DAIF and EL1h as the probed code has
 *    them; handlers run with interrupts as the probed code had them and
 *    preemption disabled. NZCV is restored from regs; DAIF, PAN, DIT,
 *    SSBS and TCO are left as the handlers leave them, which is as they
 *    found them. BTYPE is 0 after the B into the detour and after the B
 *    back, both direct, and a landing pad (BTI, PACIASP, PACIBSP) is
 *    never replaced, since an indirect branch arriving at a B instead
 *    would fault under BTI. A pre_handler that redirects (returns
 *    non-zero) leaves through a BRK, whose exception saves the full
 *    PSTATE, and an ERET that restores it with the registers, pc and sp
 *    it set (kprobe_optprobe_redirect());
 *  - PC-relative instructions: the detour does not run them as they
 *    are but what they do at the probe's address (relocate()): ADR and
 *    ADRP load their result, a literal load loads from the literal's
 *    address, a branch goes to its target (a conditional one tests its
 *    condition with the opposite branch over a B to the target), BL
 *    sets x30 to the instruction after the probe first; BLR, whose
 *    callee would return into the detour, stays on its one-BRK path;
 *  - patching: no stop_machine() for the jumps, one IPI round per batch.
 *
 * With TTBR0 PAN, an exception's entry switches user access off and its
 * return back on; the detour does not, so no probe is optimized then.
 * A fault in the detour's copy of the instruction is reported at the
 * slot, whose kallsyms name is kprobe_optinsn_page.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/preempt.h>
#include <linux/sizes.h>
#include <asm/cacheflush.h>
#include <asm/cpufeature.h>
#include <asm/daifflags.h>
#include <asm/debug-monitors.h>	/* BRK64_OPCODE_KPROBES */
#include <asm/insn.h>
#include <asm/patching.h>

/* Word offsets into a detour. */
#define TMPL_AT(label)	((label) - kprobe_optprobe_tmpl)

/* Words between the copy area and the literals: the most relocate() writes. */
#define COPY_WORDS	3

/* Loads from [Xn, #0] into Xt, Wt (zero-extended) and Xt (sign-extended). */
#define LDR_X_XN(t, n)		(0xf9400000 | (n) << 5 | (t))
#define LDR_W_XN(t, n)		(0xb9400000 | (n) << 5 | (t))
#define LDRSW_X_XN(t, n)	(0xb9800000 | (n) << 5 | (t))

/* The B from @op's site to its detour. */
static u32 detour_jump(struct optimized_kprobe *op)
{
	return aarch64_insn_gen_branch_imm((unsigned long)op->kp.addr,
					   (unsigned long)op->optinsn.insn,
					   AARCH64_INSN_BRANCH_NOLINK);
}

/**
 * kprobe_optprobe_hit() - run the handlers of an optimized site's hit
 * @op: the site
 * @regs: the registers kprobe_optprobe_common saved
 *
 * Called from a detour, with interrupts as the probed code had them.
 * A site that is retiring has no members left and runs no handler.
 *
 * Return: 0, or non-zero when a pre_handler redirected the hit
 * (regs->pc and the registers are then where and how the probed code
 * goes on).
 */
notrace int kprobe_optprobe_hit(struct optimized_kprobe *op, struct pt_regs *regs)
{
	struct kprobe *p = &op->kp;
	int redirect = 0;

	kprobe_regs_as_el1_entry(regs);
	preempt_disable();
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
	} else {
		__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
		kprobe_count_hit(p);
		/* Each member is current_kprobe while its handler runs. */
		redirect = kprobe_site_pre_handler(p, READ_ONCE(p->flags), regs);
		__this_cpu_write(current_kprobe, NULL);
	}
	preempt_enable();
	return redirect;
}
NOKPROBE_SYMBOL(kprobe_optprobe_hit);

/**
 * kprobe_optprobe_redirect() - finish a hit whose pre_handler redirected
 * @regs: the BRK's exception registers
 *
 * Called by the BRK handler for a BRK #KPROBES_BRK_IMM that no probe
 * owns: when it is kprobe_optprobe_common's, the registers and NZCV are
 * already the handlers', and the pt_regs they wrote lies at sp. An
 * exception return at EL1 cannot move sp, so it returns to
 * kprobe_optprobe_redirect_eret, with DAIF masked, which pops the
 * pt_regs and returns to the handlers' pc with the PSTATE stored here:
 * the hardware's at the BRK, BTYPE aside.
 *
 * Return: true when handled, false for another BRK.
 */
notrace bool kprobe_optprobe_redirect(struct pt_regs *regs)
{
	struct pt_regs *set = (struct pt_regs *)regs->sp;

	if (regs->pc != (unsigned long)kprobe_optprobe_redirect_brk)
		return false;
	regs->pstate &= ~PSR_BTYPE_MASK;
	set->pstate = regs->pstate;
	regs->pstate |= DAIF_MASK;
	regs->pc = (unsigned long)kprobe_optprobe_redirect_eret;
	return true;
}
NOKPROBE_SYMBOL(kprobe_optprobe_redirect);

/*
 * A detour's copy area: up to COPY_WORDS instructions that do what the
 * probed instruction does at its address, ending in a branch to where
 * the probed code goes on, and the value they may load from the
 * detour's value literal.
 */
struct detour_copy {
	u32 insn[COPY_WORDS];
	unsigned int len;
	u64 val;
};

/*
 * Append a B from the next word of the copy area at @at to @to.
 * Return: 0, or -ERANGE when @to is out of its reach.
 */
static int copy_b(struct detour_copy *c, unsigned long at, unsigned long to)
{
	unsigned long pc = at + c->len * AARCH64_INSN_SIZE;

	if (!kprobe_b_reaches(pc, to))
		return kprobe_refuse(-ERANGE, "where it goes is out of a B's reach of the detour");
	c->insn[c->len++] = aarch64_insn_gen_branch_imm(pc, to, AARCH64_INSN_BRANCH_NOLINK);
	return 0;
}

/* Append an LDR (literal) of the detour's value literal at @val_at into Xt. */
static void copy_load_val(struct detour_copy *c, unsigned long at, unsigned long val_at,
			  unsigned int t)
{
	unsigned long pc = at + c->len * AARCH64_INSN_SIZE;

	c->insn[c->len++] = aarch64_insn_gen_load_literal(pc, val_at, t, true);
}

/* What ADR or ADRP @insn at @addr computes. */
static u64 adr_value(u32 insn, unsigned long addr)
{
	s64 imm = sign_extend64(aarch64_insn_decode_immediate(AARCH64_INSN_IMM_ADR, insn), 20);

	if (aarch64_insn_is_adrp(insn))
		return (addr & ~0xfffUL) + (imm << 12);	/* 4 KiB pages whatever PAGE_SIZE */
	return addr + imm;
}

/*
 * Fill @c with what the probed instruction @insn does at @addr, for a
 * copy area at @at whose value literal is at @val_at.
 *
 * Return: 0; -EOPNOTSUPP or -ERANGE, with the rule, when the site must
 * stay a breakpoint.
 */
static int relocate(u32 insn, unsigned long addr, unsigned long at,
		    unsigned long val_at, struct detour_copy *c)
{
	unsigned int t = aarch64_insn_decode_register(AARCH64_INSN_REGTYPE_RT, insn);
	unsigned long next = addr + AARCH64_INSN_SIZE;
	int ret;

	c->len = 0;
	c->val = 0;
	if (aarch64_insn_is_blr(insn))
		return kprobe_refuse(-EOPNOTSUPP, "BLR: the callee would return into the detour");
	/* b.al and b.nv branch always: their opposite is no test. */
	if (aarch64_insn_is_bcond(insn) && (insn & 0xf) >= 0xe)
		return kprobe_refuse(-EOPNOTSUPP, "b.al or b.nv");
	if (aarch64_insn_is_br(insn) || aarch64_insn_is_ret(insn)) {
		c->insn[c->len++] = insn;	/* they go where the register says */
		return 0;
	}
	if (aarch64_insn_is_b(insn))
		return copy_b(c, at, addr + aarch64_get_branch_offset(insn));
	if (aarch64_insn_is_bl(insn)) {
		/* The callee returns to the probed code, not to the detour. */
		c->val = next;
		copy_load_val(c, at, val_at, AARCH64_INSN_REG_LR);
		return copy_b(c, at, addr + aarch64_get_branch_offset(insn));
	}

	if (aarch64_insn_is_bcond(insn) || aarch64_insn_is_cbz(insn) ||
	    aarch64_insn_is_cbnz(insn) || aarch64_insn_is_tbz(insn) ||
	    aarch64_insn_is_tbnz(insn)) {
		/* The opposite test, branching over the B to the target. */
		u32 skip = aarch64_insn_is_bcond(insn) ? insn ^ 1 : insn ^ BIT(24);

		c->insn[c->len++] = aarch64_set_branch_offset(skip, 2 * AARCH64_INSN_SIZE);
		ret = copy_b(c, at, addr + aarch64_get_branch_offset(insn));
		if (ret)
			return ret;
	} else if (aarch64_insn_is_adr(insn) || aarch64_insn_is_adrp(insn)) {
		c->val = adr_value(insn, addr);
		copy_load_val(c, at, val_at, t);
	} else if (aarch64_insn_is_ldr_lit(insn) || aarch64_insn_is_ldrsw_lit(insn)) {
		/* The literal's address, then a load from it as the original's. */
		c->val = addr + (sign_extend64(aarch64_insn_decode_immediate(AARCH64_INSN_IMM_19,
									     insn), 18) << 2);
		copy_load_val(c, at, val_at, t);
		if (aarch64_insn_is_ldrsw_lit(insn))
			c->insn[c->len++] = LDRSW_X_XN(t, t);
		else if (insn & BIT(30))
			c->insn[c->len++] = LDR_X_XN(t, t);
		else
			c->insn[c->len++] = LDR_W_XN(t, t);
	} else {
		c->insn[c->len++] = insn;	/* copied: runs the same anywhere */
	}
	return copy_b(c, at, next);
}

/* relocate() for @orig's instruction, in a detour at @slot. */
static int relocate_at(struct kprobe *orig, kprobe_opcode_t *slot, struct detour_copy *c)
{
	return relocate(orig->opcode, (unsigned long)orig->addr,
			(unsigned long)(slot + TMPL_AT(kprobe_optprobe_tmpl_copy)),
			(unsigned long)(slot + TMPL_AT(kprobe_optprobe_tmpl_val)), c);
}

/*
 * Where a detour for @insn at @addr may lie: within a B's reach of the
 * instruction after it, to which the detour returns, and of the target
 * of a direct branch, to which its copy branches; a page inside each
 * bound, for the words of the slot. A range that is only the probe's
 * would let the slot allocator, which fills a range from its low end,
 * put a detour 128 MiB below the probe, out of reach of every target
 * below it.
 */
static void detour_window(u32 insn, unsigned long addr, unsigned long *lo,
			  unsigned long *hi)
{
	unsigned long next = addr + AARCH64_INSN_SIZE, low = next, high = next, to;

	if (aarch64_insn_is_b(insn) || aarch64_insn_is_bl(insn) ||
	    aarch64_insn_is_bcond(insn) || aarch64_insn_is_cbz(insn) ||
	    aarch64_insn_is_cbnz(insn) || aarch64_insn_is_tbz(insn) ||
	    aarch64_insn_is_tbnz(insn)) {
		to = addr + aarch64_get_branch_offset(insn);
		low = min(next, to);
		high = max(next, to);
	}
	*lo = high - SZ_128M + PAGE_SIZE;
	*hi = low + SZ_128M - PAGE_SIZE;
}

/* May an indirect branch land on @insn (BTI, PACIASP, PACIBSP)? */
static bool is_landing_pad(u32 insn)
{
	return aarch64_insn_is_bti(insn) ||
	       insn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_PACIASP) ||
	       insn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_PACIBSP);
}

/*
 * Write @op's detour into its slot: the template, what relocate() made
 * of the probed instruction, the literals. Done when the site is first
 * optimized, not when it is registered: a probe that never is (a
 * post_handler, a short life) costs no writes, and registering stays
 * one breakpoint write a probe. Written a doubleword at a time through
 * the text fixmap and cleaned to the point of unification; the batch
 * that writes the B makes every CPU synchronise its context first.
 */
static int write_detour(struct optimized_kprobe *op)
{
	kprobe_opcode_t *slot = op->optinsn.insn;
	unsigned int copy = TMPL_AT(kprobe_optprobe_tmpl_copy);
	unsigned int lit = TMPL_AT(kprobe_optprobe_tmpl_op);
	struct detour_copy c;
	union {
		__le32 insn[KPROBE_OPTINSN_SLOT_SIZE];
		u64 dword[KPROBE_OPTINSN_SLOT_SIZE / 2];
	} image;
	unsigned int i;

	/* Checked when the slot was taken: it is in reach. */
	if (relocate_at(&op->kp, slot, &c))
		return -ERANGE;
	memcpy(image.insn, kprobe_optprobe_tmpl, sizeof(image));
	for (i = 0; i < c.len; i++)
		image.insn[copy + i] = cpu_to_le32(c.insn[i]);
	/* The literals, loaded as data: in the CPU's byte order. */
	image.dword[lit / 2] = (u64)op;
	image.dword[lit / 2 + 1] = (u64)kprobe_optprobe_common;
	image.dword[lit / 2 + 2] = (u64)op->kp.addr;
	image.dword[lit / 2 + 3] = c.val;
	for (i = 0; i < ARRAY_SIZE(image.dword); i++)
		if (aarch64_insn_write_literal_u64(slot + 2 * i, image.dword[i]))
			return -EFAULT;
	caches_clean_inval_pou((unsigned long)slot,
			       (unsigned long)(slot + KPROBE_OPTINSN_SLOT_SIZE));
	op->optinsn.written = true;
	return 0;
}

/**
 * arch_prepare_optimized_kprobe() - build the detour of an optimizable site
 * @op: the aggregate site
 * @orig: the probe the site is made for, prepared
 *
 * Called with kprobe_mutex and text_mutex held. A query's site is
 * answered as registering it answers when a page in reach can be had,
 * as it can for the kernel and its modules; nothing is taken.
 *
 * Return: 0 with op->optinsn filled in (the detour is written when the
 * site is first optimized); -EOPNOTSUPP for a landing pad, a BLR, b.al
 * or b.nv, or under TTBR0 PAN; -ERANGE when no detour page is within a
 * B's reach, or a branch target is out of a B's reach of the detour.
 */
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op, struct kprobe *orig)
{
	unsigned long addr = (unsigned long)orig->addr, lo, hi;
	struct detour_copy c;
	kprobe_opcode_t *slot;
	int ret;

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(TMPL_AT(kprobe_optprobe_tmpl_end) != KPROBE_OPTINSN_SLOT_SIZE ||
			 TMPL_AT(kprobe_optprobe_tmpl_op) % 2 ||
			 TMPL_AT(kprobe_optprobe_tmpl_op) - TMPL_AT(kprobe_optprobe_tmpl_copy) !=
			 COPY_WORDS))
		return kprobe_refuse(-EOPNOTSUPP, "the detour template does not fit its slot");
	if (is_landing_pad(orig->opcode))
		return kprobe_refuse(-EOPNOTSUPP,
				     "a landing pad: an indirect branch may arrive, and a B is none");
	if (system_uses_ttbr0_pan())
		return kprobe_refuse(-EOPNOTSUPP,
				     "TTBR0 PAN: user access is not switched off in a detour");
	/*
	 * A query's site is laid out as if its detour were at the probe:
	 * a page within reach can be had for the kernel and its modules.
	 */
	if (orig->flags & KPROBE_FLAG_QUERY) {
		ret = relocate_at(orig, orig->addr, &c);
		if (!ret)
			op->optinsn.size = MAX_OPTIMIZED_LENGTH;
		return ret;
	}

	detour_window(orig->opcode, addr, &lo, &hi);
	slot = kprobe_get_optinsn_slot_within(lo, hi);
	if (!slot)
		return kprobe_refuse(-ERANGE, "no detour page within a B's reach");
	ret = kprobe_b_reaches(addr, (unsigned long)slot) ? relocate_at(orig, slot, &c) :
		kprobe_refuse(-ERANGE, "no detour page within a B's reach");
	if (ret) {
		free_optinsn_slot(slot, 0);
		return ret;
	}
	op->optinsn.insn = slot;
	op->optinsn.size = MAX_OPTIMIZED_LENGTH;
	op->optinsn.written = false;
	return 0;
}

/**
 * arch_remove_optimized_kprobe() - free a site's detour
 * @op: the site; it is neither optimized nor queued
 *
 * A task may have been preempted inside the detour (in the copy, or in
 * a handler called from it): the slot is freed dirty.
 */
void arch_remove_optimized_kprobe(struct optimized_kprobe *op)
{
	kprobe_assert_mutex_held();
	op->optinsn.size = 0;
	if (!op->optinsn.insn)
		return;
	free_optinsn_slot(op->optinsn.insn, 1);
	op->optinsn.insn = NULL;
}

/**
 * arch_within_optimized_kprobe() - is @addr the instruction @op's B covers?
 * @op: the site
 * @addr: an address
 *
 * Return: non-zero when @addr is @op's own, with a detour built or laid out.
 */
int arch_within_optimized_kprobe(struct optimized_kprobe *op, kprobe_opcode_t *addr)
{
	kprobe_assert_mutex_held();
	return (unsigned long)addr - (unsigned long)op->kp.addr < op->optinsn.size;
}

/**
 * arch_kprobe_queue_optimize() - queue the B to @op's detour over its BRK
 * @op: an armed site with a detour; kprobe_mutex and text_mutex held
 */
void arch_kprobe_queue_optimize(struct optimized_kprobe *op)
{
	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	/* No B to a detour that could not be written: the BRK stays. */
	if (!op->optinsn.written && WARN_ONCE(write_detour(op),
					      "kprobes: detour of %pS not written\n", op->kp.addr))
		return;
	kprobe_queue_detour_jump(op->kp.addr, detour_jump(op));
}

/**
 * arch_kprobe_queue_unoptimize() - queue taking @op's B out
 * @op: an optimized site; kprobe_mutex and text_mutex held
 * @armed: write the BRK (the site stays armed) rather than the original
 *	instruction, which needs stop_machine() unless it is one of those
 *	the architecture lets change under a running CPU
 */
void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op, bool armed)
{
	kprobe_assert_mutex_held();
	kprobe_queue_text_write(op->kp.addr, armed ? BRK64_OPCODE_KPROBES : op->kp.opcode,
				detour_jump(op));
}
