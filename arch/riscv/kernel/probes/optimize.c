// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv optimized kprobes: "auipc rd; jalr x0, rd" instead of the EBREAK.
 *
 * The jump is 8 bytes and replaces the whole instructions of the site's
 * first 8 bytes (its region: 8 bytes, or 10 when a 4-byte instruction
 * straddles the end, whose last 2 bytes become a C.NOP so that the text
 * stays a run of whole instructions). It goes to a detour, a slot
 * within AUIPC's 2 GiB of the site, holding a copy of the template in
 * optprobe.S:
 *
 *	save the registers in a pt_regs below sp and call
 *		kprobe_optprobe_hit(op, regs) to run the handlers
 *	restore them, run copies of the region's instructions, and
 *		"auipc rb; jalr x0, rb" to the instruction after the region
 *
 * What may be optimized, and why:
 *
 *  - every instruction of the region runs the same from the detour: the
 *    decoder copies it (no branch, jump or AUIPC, which it simulates),
 *    it is no LR or SC and has no exception table entry (a fault's
 *    fix-up is found by the faulting address);
 *  - rd, which the jump writes, is dead at the site and rb dead after
 *    the region (liveness.c): on every path from there written before
 *    it is read. So the handlers see rd as the jump left it, the one
 *    register a hit changes, and one nothing reads;
 *  - control enters the region only at its start: no branch or jump of
 *    the function, nor any fix-up, lands inside it, and the function
 *    has no jump through a register but returns and far tail calls
 *    (liveness.c); the region holds no jump label or ftrace site and
 *    ends inside the function;
 *  - the slot is within AUIPC's reach of the site and of the
 *    instruction after the region, as the module area is of the kernel
 *    and of modules: a site with no slot in reach stays a breakpoint.
 *
 * The checks that read the function are made when the optimizer first
 * claims the site (arch_kprobe_ready_detour()), with the detour's write,
 * not at registration: registering stays a breakpoint write a probe.
 * The query file makes them all at once.
 *
 * Patching: the region is two or more instructions, so the jump is
 * written, and taken out, in the stop_machine() of arming.c, where
 * every other hart waits with interrupts off and executes FENCE.I
 * after. A hart may still be between the AUIPC and the JALR when it
 * enters stop_machine(), or inside the region when the jump is written:
 * only if its task was preempted there, which a kernel without
 * preemption never does (interrupts return first) and which is why
 * HAVE_OPTPROBES is selected only without PREEMPTION, the rule riscv's
 * own ftrace patching of "auipc; jalr" pairs relies on in 6.12. The
 * optimizer's RCU-tasks grace period covers tasks that slept there
 * (none can: the region makes no call). Breakpoint hits of a site the
 * optimizer has claimed continue in the detour's copy (KPROBE_FLAG_OPT_
 * READY, breakpoint.c), not inside the region.
 *
 * A pre_handler that redirects leaves the detour through an EBREAK whose
 * trap return loads every register and pc it set
 * (kprobe_optprobe_redirect()).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/sizes.h>
#include <linux/unaligned.h>
#include <asm/bug.h>
#include <asm/patch.h>

#include "decode-insn.h"

/* Word offsets into a detour. */
#define TMPL_AT(label)	((label) - kprobe_optprobe_tmpl)

/*
 * Where optprobe.S's loads expect the copy and the literals: nine
 * 4-byte instructions before the copy, the literals from word 14.
 */
#define TMPL_COPY_WORD	9
#define TMPL_LIT_WORD	14
static_assert((TMPL_LIT_WORD - TMPL_COPY_WORD) * 4 >= MAX_OPTIMIZED_LENGTH + 8);

/* The jump's bytes: AUIPC and JALR. */
#define JUMP_BYTES	8
#define C_NOP		0x0001U

/* Bytes of the instruction whose first parcel is @insn. */
static unsigned int insn_len(u32 insn)
{
	return (insn & 3) == 3 ? 4 : 2;
}

/* Sites with a region laid out and a slot: while none, text is as it reads. */
static unsigned int nr_regions;

/*
 * The parcel at @at as it is without probes: from the opcode of a probe
 * whose instruction covers it, or the saved bytes of a detour site whose
 * region does, or the text. kprobe_mutex held.
 */
static u16 unprobed_parcel(unsigned long at)
{
	struct optimized_kprobe *op;
	struct kprobe *p;
	unsigned long k;

	for (k = 0; k < MAX_OPTIMIZED_LENGTH; k += 2) {
		p = get_kprobe((kprobe_opcode_t *)(at - k));
		if (!p || kprobe_gone(p) || kprobe_ftrace(p))
			continue;
		op = kprobe_detour_site(p);
		if (op && k < op->optinsn.size)
			return get_unaligned((u16 *)(op->optinsn.orig + k));
		if (k < insn_len(p->opcode))
			return p->opcode >> (8 * k);
	}
	return READ_ONCE(*(u16 *)at);
}

/**
 * kprobe_text_parcel() - a parcel of text as decoders must see it
 * @at: a 2-byte aligned address of kernel or module text
 *
 * Inside an optimized site's region the text is its jump, whose
 * instruction boundaries are not the region's: while any site has a
 * region, the parcel comes from what the jump replaced (and a probe's
 * EBREAK reads as its instruction). kprobe_mutex held.
 *
 * Return: the parcel.
 */
u16 kprobe_text_parcel(unsigned long at)
{
	kprobe_assert_mutex_held();
	if (!nr_regions)
		return READ_ONCE(*(u16 *)at);
	return unprobed_parcel(at);
}

/* Does AUIPC at @from, with the JALR after it, reach @to? */
static bool in_reach(unsigned long from, unsigned long to)
{
	s64 off = (s64)(to - from);

	return off >= -(s64)SZ_2G - SZ_2K && off < (s64)SZ_2G - SZ_2K;
}

/* AUIPC rx and JALR x0 from @from to @to, which is in reach. */
static void jump_pair(unsigned long from, unsigned long to, unsigned int rx,
		      u32 *auipc, u32 *jalr)
{
	s32 off = (s32)(to - from), hi = (off + SZ_2K) & ~(SZ_4K - 1);

	*auipc = (u32)hi | rx << 7 | 0x17;
	*jalr = (u32)(off - hi) << 20 | rx << 15 | 0x67;
}

/* LR and SC: AMO major opcode, funct5 00010 and 00011. */
static bool is_lr_or_sc(u32 insn)
{
	return (insn & 0x7f) == 0x2f && ((insn >> 27) == 2 || (insn >> 27) == 3);
}

/*
 * May the instruction @insn at @at run as a copy in the detour?
 * Return: 0, or -EOPNOTSUPP with the rule.
 */
static int copyable(u32 insn, unsigned long at)
{
	struct arch_probe_insn api = {};
	probe_opcode_t copy = insn;

	if (riscv_probe_decode_insn(&copy, &api) != INSN_GOOD)
		return kprobe_refuse(-EOPNOTSUPP,
				     "a branch, jump or AUIPC in the region (simulated, not copied)");
	if (is_lr_or_sc(insn))
		return kprobe_refuse(-EOPNOTSUPP, "an LR or SC in the region");
	if (search_exception_tables(at))
		return kprobe_refuse(-EOPNOTSUPP,
				     "an access with a fix-up in the region: found by its address");
	return 0;
}

/*
 * Lay out @p's region in @oi: its size and original bytes.
 * Return: 0, or -EOPNOTSUPP with the rule.
 */
static int lay_out_region(struct kprobe *p, struct arch_optimized_insn *oi)
{
	unsigned long addr = (unsigned long)p->addr, func, fsize, at;
	unsigned int len;
	u32 insn = p->opcode;
	int ret;

	if (p->ainsn.api.handler)
		return kprobe_refuse(-EOPNOTSUPP,
				     "a branch, jump or AUIPC: simulated, not copied");
	if (!kprobe_function_bounds(addr, &func, &fsize))
		return kprobe_refuse(-EOPNOTSUPP, "in no function: the region cannot be checked");
	for (at = addr; at < addr + JUMP_BYTES; at += len) {
		if (at != addr) {
			insn = unprobed_parcel(at);
			if (insn_len(insn) == 4)
				insn |= (u32)unprobed_parcel(at + 2) << 16;
		}
		len = insn_len(insn);
		if (at + len > func + fsize)
			return kprobe_refuse(-EOPNOTSUPP, "the jump would reach past the function");
		ret = copyable(insn, at);
		if (ret)
			return ret;
		memcpy(oi->orig + (at - addr), &insn, len);
	}
	if (jump_label_text_reserved((void *)addr, (void *)(at - 1)) ||
	    ftrace_location_range(addr, at - 1))
		return kprobe_refuse(-EOPNOTSUPP, "a jump label or ftrace site in the region");
	oi->size = at - addr;
	return 0;
}

/*
 * The checks that read @op's function: control enters the region at
 * its start only, and registers are free for the jumps: @rd at the site
 * and @rb after the region. Return: 0, or -EOPNOTSUPP with the rule.
 */
static int check_function(struct optimized_kprobe *op, unsigned int *rd, unsigned int *rb)
{
	unsigned long addr = (unsigned long)op->kp.addr, func, fsize;
	unsigned long end = addr + op->optinsn.size;

	if (!kprobe_function_bounds(addr, &func, &fsize))
		return kprobe_refuse(-EOPNOTSUPP, "in no function: the region cannot be checked");
	if (kprobe_region_entered(addr, end, func, func + fsize))
		return kprobe_refuse(-EOPNOTSUPP,
				     "a jump may land inside the region, or the function jumps through a register");
	*rd = kprobe_free_register(addr, func, func + fsize);
	if (!*rd)
		return kprobe_refuse(-EOPNOTSUPP, "no register is free at the probe for the jump");
	*rb = kprobe_free_register(end, func, func + fsize);
	if (!*rb)
		return kprobe_refuse(-EOPNOTSUPP,
				     "no register is free after the region for the jump back");
	return 0;
}

/* The detour's copy of the region, in a detour at @slot. */
static unsigned long copy_at(kprobe_opcode_t *slot)
{
	return (unsigned long)(slot + TMPL_AT(kprobe_optprobe_tmpl_copy));
}

/*
 * A detour slot in reach of the site at @addr and of the instruction
 * after its region at @end, from the copy, whose jump back lies inside
 * the slot's first page. The kernel's text lies in the top 2 GiB: the
 * window's high end is clamped to the top of the address space.
 */
static kprobe_opcode_t *slot_in_reach(unsigned long addr, unsigned long end)
{
	unsigned long lo = end - SZ_2G + PAGE_SIZE;
	unsigned long hi = addr > ULONG_MAX - SZ_2G ? ULONG_MAX : addr + SZ_2G;
	kprobe_opcode_t *slot = kprobe_get_optinsn_slot_within(lo, hi - 2 * PAGE_SIZE);

	if (slot && (!in_reach(addr, (unsigned long)slot) ||
		     !in_reach(copy_at(slot) + end - addr, end))) {
		free_optinsn_slot(slot, 0);
		slot = NULL;
	}
	return slot;
}

/**
 * arch_prepare_optimized_kprobe() - lay out the region of an optimizable site
 * @op: the aggregate site
 * @orig: the probe the site is made for, prepared
 *
 * Called with kprobe_mutex and text_mutex held. The region is laid out
 * and a slot in reach taken; the checks that read the function wait for
 * the optimizer (arch_kprobe_ready_detour()). A query's site is checked
 * in full and answered as if a slot in reach could be had, as one can
 * for the kernel and its modules; nothing is taken.
 *
 * Return: 0 with op->optinsn filled in; -EOPNOTSUPP, with the rule,
 * when the site must stay a breakpoint; -ERANGE when no slot is in
 * AUIPC's reach.
 */
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op, struct kprobe *orig)
{
	struct arch_optimized_insn *oi = &op->optinsn;
	unsigned int rd, rb;
	kprobe_opcode_t *slot;
	int ret;

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(TMPL_AT(kprobe_optprobe_tmpl_end) != KPROBE_OPTINSN_SLOT_SIZE ||
			 TMPL_AT(kprobe_optprobe_tmpl_copy) != TMPL_COPY_WORD ||
			 TMPL_AT(kprobe_optprobe_tmpl_lit) != TMPL_LIT_WORD))
		return kprobe_refuse(-EOPNOTSUPP, "the detour template does not fit its slot");
	oi->size = 0;
	oi->written = false;
	ret = lay_out_region(orig, oi);
	if (ret)
		return ret;
	if (orig->flags & KPROBE_FLAG_QUERY) {
		ret = check_function(op, &rd, &rb);
		if (ret)
			oi->size = 0;
		return ret;
	}
	slot = slot_in_reach((unsigned long)orig->addr, (unsigned long)orig->addr + oi->size);
	if (!slot) {
		oi->size = 0;
		return kprobe_refuse(-ERANGE, "no detour slot within AUIPC's reach");
	}
	oi->insn = slot;
	nr_regions++;
	return 0;
}

/* Write @op's detour: the template, the region's copy, the jump back, the literals. */
static int write_detour(struct optimized_kprobe *op, unsigned int rb)
{
	struct arch_optimized_insn *oi = &op->optinsn;
	unsigned long addr = (unsigned long)op->kp.addr, copy = copy_at(oi->insn);
	unsigned int lit = TMPL_AT(kprobe_optprobe_tmpl_lit) / 2;
	union {
		u32 insn[KPROBE_OPTINSN_SLOT_SIZE];
		u64 dword[KPROBE_OPTINSN_SLOT_SIZE / 2];
	} image;
	u8 *at = (u8 *)&image.insn[TMPL_AT(kprobe_optprobe_tmpl_copy)];
	u32 auipc, jalr;

	memcpy(image.insn, kprobe_optprobe_tmpl, sizeof(image));
	memcpy(at, oi->orig, oi->size);
	jump_pair(copy + oi->size, addr + oi->size, rb, &auipc, &jalr);
	memcpy(at + oi->size, &auipc, sizeof(auipc));
	memcpy(at + oi->size + 4, &jalr, sizeof(jalr));
	image.dword[lit] = (u64)op;
	image.dword[lit + 1] = (u64)kprobe_optprobe_common;
	image.dword[lit + 2] = addr;
	return patch_insn_write(oi->insn, &image, sizeof(image));
}

/**
 * arch_kprobe_ready_detour() - check @op's function and write its detour
 * @op: a site the optimizer claims; kprobe_mutex held
 *
 * Before the optimizer marks the site KPROBE_FLAG_OPT_READY, from when
 * its breakpoint hits go on in the detour's copy. The detour's stores
 * are ordered before the flag's; a hart that reads the flag executes
 * FENCE.I before it fetches there (breakpoint.c), and the jump is
 * written in a stop_machine() after which every hart has.
 *
 * Return: true when the detour is written; false, with the detour
 * removed, when the site must stay a breakpoint.
 */
bool arch_kprobe_ready_detour(struct optimized_kprobe *op)
{
	unsigned int rd, rb;
	int ret;

	kprobe_assert_mutex_held();
	if (op->optinsn.written)
		return true;
	mutex_lock(&text_mutex);
	ret = check_function(op, &rd, &rb);
	if (!ret && write_detour(op, rb))
		ret = -EFAULT;
	mutex_unlock(&text_mutex);
	if (ret) {
		arch_remove_optimized_kprobe(op);
		return false;
	}
	op->optinsn.jump_reg = rd;
	smp_wmb();	/* the detour, then KPROBE_FLAG_OPT_READY */
	op->optinsn.written = true;
	return true;
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
	op->optinsn.written = false;
	nr_regions--;
}

/**
 * arch_within_optimized_kprobe() - is @addr in the region @op's jump covers?
 * @op: the site
 * @addr: an address
 *
 * Return: non-zero when @addr is in @op's region, laid out.
 */
int arch_within_optimized_kprobe(struct optimized_kprobe *op, kprobe_opcode_t *addr)
{
	kprobe_assert_mutex_held();
	return (unsigned long)addr - (unsigned long)op->kp.addr < op->optinsn.size;
}

/**
 * arch_kprobe_queue_optimize() - queue the jump to @op's detour over its region
 * @op: an armed site with a written detour; kprobe_mutex and text_mutex held
 */
void arch_kprobe_queue_optimize(struct optimized_kprobe *op)
{
	unsigned long addr = (unsigned long)op->kp.addr;
	u32 auipc, jalr;

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	if (WARN_ON_ONCE(!op->optinsn.written))
		return;
	jump_pair(addr, (unsigned long)op->optinsn.insn, op->optinsn.jump_reg, &auipc, &jalr);
	kprobe_queue_text_write(op->kp.addr, auipc, 4);
	kprobe_queue_text_write((void *)(addr + 4), jalr, 4);
	if (op->optinsn.size > JUMP_BYTES)
		kprobe_queue_text_write((void *)(addr + JUMP_BYTES), C_NOP, 2);
}

/**
 * arch_kprobe_queue_unoptimize() - queue taking @op's jump out
 * @op: an optimized site; kprobe_mutex and text_mutex held
 * @armed: write the EBREAK (the site stays armed) rather than the
 *	original instruction first
 *
 * The region's other instructions are written back as they were.
 */
void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op, bool armed)
{
	unsigned long addr = (unsigned long)op->kp.addr;
	unsigned int at, len;
	u32 insn;

	kprobe_assert_mutex_held();
	for (at = 0; at < op->optinsn.size; at += len) {
		insn = get_unaligned((u16 *)(op->optinsn.orig + at));
		len = insn_len(insn);
		if (len == 4)
			insn = get_unaligned((u32 *)(op->optinsn.orig + at));
		if (!at && armed)
			insn = len == 4 ? __BUG_INSN_32 : __BUG_INSN_16;
		kprobe_queue_text_write((void *)(addr + at), insn, len);
	}
}

/**
 * kprobe_optprobe_copy() - where a breakpoint hit of a claimed site goes on
 * @p: a site marked KPROBE_FLAG_OPT_READY
 *
 * Return: the address of its detour's copy of the region.
 */
notrace unsigned long kprobe_optprobe_copy(struct kprobe *p)
{
	return copy_at(container_of(p, struct optimized_kprobe, kp)->optinsn.insn);
}
NOKPROBE_SYMBOL(kprobe_optprobe_copy);

/**
 * kprobe_optprobe_hit() - run the handlers of an optimized site's hit
 * @op: the site
 * @regs: the registers kprobe_optprobe_common saved
 *
 * Called from a detour, with interrupts as the probed code had them.
 * A site that is retiring has no members left and runs no handler.
 *
 * Return: 0, or non-zero when a pre_handler redirected the hit
 * (regs->epc and the registers are then where and how the probed code
 * goes on).
 */
notrace int kprobe_optprobe_hit(struct optimized_kprobe *op, struct pt_regs *regs)
{
	struct kprobe *p = &op->kp;
	int redirect = 0;

	preempt_disable_notrace();
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
	} else {
		__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
		kprobe_count_hit(p);
		/* Each member is current_kprobe while its handler runs. */
		redirect = kprobe_site_pre_handler(p, READ_ONCE(p->flags), regs);
		__this_cpu_write(current_kprobe, NULL);
	}
	preempt_enable_notrace();
	return redirect;
}
NOKPROBE_SYMBOL(kprobe_optprobe_hit);

/**
 * kprobe_optprobe_redirect() - finish a hit whose pre_handler redirected
 * @regs: the EBREAK's trap registers
 *
 * Called for an EBREAK that no probe owns: when it is
 * kprobe_optprobe_common's, the pt_regs the handlers wrote lies at sp,
 * and the trap returns with every register and pc from it (sstatus
 * stays the trap's: the probed code's interrupts).
 *
 * Return: true when handled, false for another EBREAK.
 */
notrace bool kprobe_optprobe_redirect(struct pt_regs *regs)
{
	if (regs->epc != (unsigned long)kprobe_optprobe_redirect_ebreak)
		return false;
	memcpy(regs, (struct pt_regs *)regs->sp, offsetof(struct pt_regs, status));
	return true;
}
NOKPROBE_SYMBOL(kprobe_optprobe_redirect);
