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
 *	restore them, do what the region's instructions do (the copy,
 *		build_copy()), and "auipc rb; jalr x0, rb" to the
 *		instruction after the region
 *
 * What may be optimized, and why:
 *
 *  - the detour does what each instruction of the region does there:
 *    one the decoder copies runs as it is; an AUIPC loads the value it
 *    gives at its address; a branch, C.BEQZ or C.BNEZ becomes a 4-byte
 *    branch to a jump to its target; a jump (JAL x0, C.J) a jump to its
 *    target, a jump through a register (a return) runs as it is, and
 *    the way through the region ends there. A call is refused (its
 *    callee would return into the detour), and so are an LR or SC and
 *    an access with an exception table entry (a fault's fix-up is found
 *    by the faulting address);
 *  - rd, which the jump writes, is dead at the site, and the register of
 *    each jump out of the detour dead where it lands (liveness.c): on
 *    every path from there written before it is read. So the handlers
 *    see rd as the jump left it, the one register a hit changes, and
 *    one nothing reads. Targets outside the function (tail calls) are
 *    refused: their liveness is not scanned. Where no register is free
 *    right after the region, the copy goes on with the instructions
 *    after it (up to MAX_OPTIMIZED_LENGTH bytes from the site; a probe
 *    there keeps the site a breakpoint) and jumps back where one is;
 *  - control enters the region only at its start: no branch or jump of
 *    the function, no jump label once enabled, no fix-up lands inside
 *    it, and the function
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
 * after. A hart could only be between the AUIPC and the JALR, or inside
 * the region, while text changes if its task was preempted there,
 * which a kernel without preemption never does (an interrupt returns
 * first): HAVE_OPTPROBES is selected only without PREEMPTION, the rule
 * riscv's own ftrace patching of "auipc; jalr" call sites relies on in
 * 6.12. The optimizer's RCU-tasks grace period covers tasks that slept
 * there (none can: the region makes no call). Breakpoint hits of a site
 * the optimizer has claimed continue in the detour's copy
 * (KPROBE_FLAG_OPT_READY, breakpoint.c), not inside the region.
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
#include <asm/insn.h>
#include <asm/patch.h>

#include "decode-insn.h"

/* Word offsets into a detour. */
#define TMPL_AT(label)	((label) - kprobe_optprobe_tmpl)

/*
 * Where optprobe.S's loads expect the copy and the literals: nine
 * 4-byte instructions before the copy, the literals from word 34.
 */
#define TMPL_COPY_WORD	9
#define TMPL_LIT_WORD	34

/* The jump's bytes: AUIPC and JALR. */
#define JUMP_BYTES	8
#define C_NOP		0x0001U
/* The parcels of a probe's EBREAK, and its C.EBREAK. */
#define EBREAK_LO	0x0073U
#define EBREAK_HI	0x0010U
#define C_EBREAK	0x9002U

/*
 * Sites whose detour is written, so whose jump may be in the text, from
 * when the optimizer first claims them until they are freed (a batch
 * that takes a jump out writes the text at its end). While there are
 * none, text reads as it is without jumps. kprobe_mutex guards it.
 */
static unsigned int nr_written;

/*
 * A site's slot until the optimizer first claims it: non-NULL, so that
 * the core counts the site as one with a detour, and nothing to free.
 */
static kprobe_opcode_t slot_pending;

/*
 * Might a site start at @at, as the text there shows: is the parcel
 * there an EBREAK's first or a C.EBREAK, or with @jumps a written jump's
 * AUIPC? Text that cannot be read holds none.
 */
static bool may_start_site(unsigned long at, bool jumps)
{
	u16 parcel;

	if (get_kernel_nofault(parcel, (u16 *)at))
		return false;
	return parcel == EBREAK_LO || parcel == C_EBREAK ||
	       (jumps && (parcel & 0x7f) == 0x17);
}

/*
 * The parcel at @at as it is without probes: from the saved bytes of a
 * written detour whose region covers it, or the opcode of a probe whose
 * instruction does (its EBREAK), or the text. Only where the text shows
 * what a site writes is the table looked up. kprobe_mutex held.
 */
static u16 unprobed_parcel(unsigned long at)
{
	unsigned long k, span = nr_written ? KPROBE_JUMP_REGION_MAX : 4;
	u16 text = READ_ONCE(*(u16 *)at);
	struct optimized_kprobe *op;
	struct kprobe *p;

	/*
	 * With no jump written, only a probe's EBREAK differs from what it
	 * replaced: a parcel that is no part of one is the text's own.
	 */
	if (!nr_written && text != EBREAK_LO && text != EBREAK_HI && text != C_EBREAK)
		return text;
	for (k = 0; k < span; k += 2) {
		if (!may_start_site(at - k, nr_written))
			continue;
		p = get_kprobe((kprobe_opcode_t *)(at - k));
		if (!p || kprobe_gone(p) || kprobe_ftrace(p))
			continue;
		op = kprobe_detour_site(p);
		if (op && op->optinsn.written && k < op->optinsn.size)
			return get_unaligned((u16 *)(op->optinsn.orig + k));
		if (k < GET_INSN_LENGTH(p->opcode))
			return p->opcode >> (8 * k);
	}
	return text;
}

/**
 * kprobe_text_parcel() - a parcel of text as decoders must see it
 * @at: a 2-byte aligned address of kernel or module text
 * @ebreaks: read a probe's EBREAK as its instruction, for what decodes
 *	the effects of the text; a walk that needs only the lengths of
 *	instructions passes false
 *
 * Inside an optimized site's region the text is its jump, whose
 * instruction boundaries are not the region's: while any site's jump
 * may be in the text, the parcel comes from what the jump replaced.
 * kprobe_mutex held.
 *
 * Return: the parcel.
 */
u16 kprobe_text_parcel(unsigned long at, bool ebreaks)
{
	kprobe_assert_mutex_held();
	if (!nr_written && !ebreaks)
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

/* What the detour does with an instruction of the region. */
enum region_kind {
	REGION_COPY,	/* runs the same anywhere: copied */
	REGION_AUIPC,	/* its value is loaded as AUIPC at its address makes it */
	REGION_BRANCH,	/* a branch over a jump to its target, in the detour */
	REGION_JUMP,	/* a jump to its target; the path ends */
	REGION_RETURN,	/* a jump through a register, copied; the path ends */
};

struct region_insn {
	u32 insn;
	unsigned int len;
	enum region_kind kind;
	unsigned long target;	/* REGION_BRANCH, _JUMP; REGION_AUIPC: the value */
	u32 branch;		/* REGION_BRANCH: as a 4-byte branch, offset 0 */
};

/* A 4-byte branch of funct3 @f3 on @rs1 and @rs2, its offset 0. */
static u32 branch32(unsigned int f3, unsigned int rs1, unsigned int rs2)
{
	return rs2 << 20 | rs1 << 15 | f3 << 12 | 0x63;
}

/*
 * What the detour must do for @insn at @at (struct region_insn).
 * Return: 0, or -EOPNOTSUPP with the rule.
 */
static int region_insn_kind(u32 insn, unsigned long at, struct region_insn *ri)
{
	struct arch_probe_insn api = {};
	probe_opcode_t copy = insn;
	unsigned int rd = (insn >> 7) & 31, f3;

	ri->insn = insn;
	ri->len = GET_INSN_LENGTH(insn);
	ri->kind = REGION_COPY;
	if (is_lr_or_sc(insn))
		return kprobe_refuse(-EOPNOTSUPP, "an LR or SC in the region");
	if (search_exception_tables(at))
		return kprobe_refuse(-EOPNOTSUPP,
				     "an access with a fix-up in the region: found by its address");
	switch (riscv_probe_decode_insn(&copy, &api)) {
	case INSN_GOOD:
		return 0;
	case INSN_GOOD_NO_SLOT:
		break;
	default:
		return kprobe_refuse(-EOPNOTSUPP,
				     "an instruction kprobes cannot execute in the region");
	}
	if (ri->len == 2) {
		f3 = insn >> 13;
		if ((insn & 3) == 1 && f3 == 5) {		/* C.J */
			ri->kind = REGION_JUMP;
			ri->target = at + (s32)RVC_EXTRACT_JTYPE_IMM(insn);
			return 0;
		}
		if ((insn & 3) == 1 && (f3 == 6 || f3 == 7)) {	/* C.BEQZ, C.BNEZ */
			ri->kind = REGION_BRANCH;
			ri->target = at + (s32)RVC_EXTRACT_BTYPE_IMM(insn);
			ri->branch = branch32(f3 - 6, 8 + ((insn >> 7) & 7), 0);
			return 0;
		}
		if ((insn & 3) == 2 && f3 == 4 && !(insn & BIT(12))) {	/* C.JR */
			ri->kind = REGION_RETURN;
			return 0;
		}
		return kprobe_refuse(-EOPNOTSUPP,
				     "a call in the region: the callee would return into the detour");
	}
	switch (insn & 0x7f) {
	case 0x17:	/* AUIPC */
		ri->kind = REGION_AUIPC;
		ri->target = at + (s32)(insn & 0xfffff000);
		return 0;
	case 0x63:	/* BRANCH */
		ri->kind = REGION_BRANCH;
		ri->target = at + (s32)RV_EXTRACT_BTYPE_IMM(insn);
		ri->branch = insn & 0x01fff07f;
		return 0;
	case 0x6f:	/* JAL */
		if (rd)
			break;
		ri->kind = REGION_JUMP;
		ri->target = at + riscv_insn_extract_jtype_imm(insn);
		return 0;
	case 0x67:	/* JALR */
		if (rd)
			break;
		ri->kind = REGION_RETURN;
		return 0;
	}
	return kprobe_refuse(-EOPNOTSUPP,
			     "a call in the region: the callee would return into the detour");
}

/* The @i-th instruction of @oi's region, from @addr, at byte @at of it. */
static int region_insn_at(struct arch_optimized_insn *oi, unsigned long addr,
			  unsigned int at, struct region_insn *ri)
{
	u32 insn = get_unaligned((u16 *)(oi->orig + at));

	if (GET_INSN_LENGTH(insn) == 4)
		insn = get_unaligned((u32 *)(oi->orig + at));
	return region_insn_kind(insn, addr + at, ri);
}

/* Does the path through the region end at @ri (it jumps away for good)? */
static bool ends_path(const struct region_insn *ri)
{
	return ri->kind == REGION_JUMP || ri->kind == REGION_RETURN;
}

/*
 * Lay out @p's region in @oi: its size and original bytes. Whether the
 * detour can do what each instruction does is build_copy()'s to say.
 * Return: 0, or -EOPNOTSUPP with the rule.
 */
static int lay_out_region(struct kprobe *p, struct arch_optimized_insn *oi)
{
	unsigned long addr = (unsigned long)p->addr, func, fsize, at;
	unsigned int len;
	u32 insn = p->opcode;

	if (!kprobe_function_bounds(addr, &func, &fsize))
		return kprobe_refuse(-EOPNOTSUPP, "in no function: the region cannot be checked");
	for (at = addr; at < addr + JUMP_BYTES; at += len) {
		if (at != addr) {
			insn = unprobed_parcel(at);
			if (GET_INSN_LENGTH(insn) == 4)
				insn |= (u32)unprobed_parcel(at + 2) << 16;
		}
		len = GET_INSN_LENGTH(insn);
		if (at + len > func + fsize)
			return kprobe_refuse(-EOPNOTSUPP, "the jump would reach past the function");
		memcpy(oi->orig + (at - addr), &insn, len);
	}
	oi->size = at - addr;
	return 0;
}

/*
 * The detour's copy of a region, built at the address it will run at:
 * what each instruction does, a jump back after the region unless the
 * way ends in it, then a jump for each branch's taken way.
 */
#define COPY_BYTES	((TMPL_LIT_WORD - TMPL_COPY_WORD) * 4)

/*
 * A copy of a region alone, at most four instructions, each at most a
 * 4-byte branch with an 8-byte jump for its taken way or 8 bytes on the
 * way through (an AUIPC's value), and the jump back, always fits; what
 * the detour goes on with after the region fits or is not done.
 */
static_assert(COPY_BYTES >= 4 * 12 + 8);

struct copy_builder {
	u8 bytes[COPY_BYTES];
	unsigned int len;
	bool full;			/* something did not fit */
	unsigned long base;		/* where bytes[0] runs */
	unsigned long func, end;	/* the probed function */
	unsigned int span;		/* bytes of text the copy does */
};

static void copy_emit(struct copy_builder *c, u32 insn, unsigned int len)
{
	if (c->len + len > COPY_BYTES) {
		c->full = true;
		return;
	}
	memcpy(c->bytes + c->len, &insn, len);
	c->len += len;
}

/*
 * Append a jump from here to @to, through a register free there.
 * Return: 0, or -EOPNOTSUPP / -ERANGE with the rule.
 */
static int copy_jump(struct copy_builder *c, unsigned long to)
{
	unsigned long pc = c->base + c->len;
	unsigned int rx;
	u32 auipc, jalr;

	if (to < c->func || to >= c->end)
		return kprobe_refuse(-EOPNOTSUPP,
				     "a jump out of the function in the region (a tail call)");
	rx = kprobe_free_register(to, c->func, c->end);
	if (!rx)
		return kprobe_refuse(-EOPNOTSUPP,
				     "no register is free where the detour jumps back to");
	if (!in_reach(pc, to))
		return kprobe_refuse(-ERANGE,
				     "the detour is out of AUIPC's reach of the probed code");
	jump_pair(pc, to, rx, &auipc, &jalr);
	copy_emit(c, auipc, 4);
	copy_emit(c, jalr, 4);
	return 0;
}

/* A 4-byte branch's offset field holding @off. */
static u32 branch_offset(s32 off)
{
	return ((off >> 12) & 1) << 31 | ((off >> 5) & 0x3f) << 25 |
	       ((off >> 1) & 0xf) << 8 | ((off >> 11) & 1) << 7;
}

/* Load @value into @rd as AUIPC at its own address made it. */
static int copy_auipc(struct copy_builder *c, unsigned int rd, unsigned long value)
{
	unsigned long pc = c->base + c->len;
	s32 off, hi;

	if (!in_reach(pc, value))
		return kprobe_refuse(-ERANGE, "an AUIPC's value is out of reach of the detour");
	off = (s32)(value - pc);
	hi = (off + SZ_2K) & ~(SZ_4K - 1);
	copy_emit(c, (u32)hi | rd << 7 | 0x17, 4);			/* auipc rd, hi */
	copy_emit(c, (u32)(off - hi) << 20 | rd << 15 | rd << 7 | 0x13, 4); /* addi rd, rd, lo */
	return 0;
}

/* Where the jumps for the copy's branches go, filled in at the end. */
struct copy_branches {
	unsigned int n;
	unsigned int at[MAX_OPTIMIZED_LENGTH / 2];
	unsigned long to[MAX_OPTIMIZED_LENGTH / 2];
};

/* Append what @ri does. Return: 0, or -EOPNOTSUPP / -ERANGE with the rule. */
static int copy_insn(struct copy_builder *c, const struct region_insn *ri,
		     struct copy_branches *b)
{
	switch (ri->kind) {
	case REGION_COPY:
	case REGION_RETURN:
		copy_emit(c, ri->insn, ri->len);
		return 0;
	case REGION_AUIPC:
		return copy_auipc(c, (ri->insn >> 7) & 31, ri->target);
	case REGION_BRANCH:
		b->at[b->n] = c->len;
		b->to[b->n++] = ri->target;
		copy_emit(c, ri->branch, 4);
		return 0;
	case REGION_JUMP:
		return copy_jump(c, ri->target);
	}
	return 0;
}

/*
 * May the copy go on with the instruction at @at, after the region (no
 * register being free there for the jump back)? Only within
 * MAX_OPTIMIZED_LENGTH of the site, where a probe keeps the site from
 * being optimized, not at a probe now, and not at text that changes
 * (a jump label or ftrace site).
 */
static int copy_goes_on(struct copy_builder *c, unsigned long addr, unsigned long at,
			struct region_insn *ri)
{
	unsigned int len;
	u32 insn;

	if (at + 2 > addr + MAX_OPTIMIZED_LENGTH || at + 2 > c->end || get_kprobe((void *)at))
		return -EOPNOTSUPP;
	insn = kprobe_text_parcel(at, true);
	len = GET_INSN_LENGTH(insn);
	if (len == 4)
		insn |= (u32)kprobe_text_parcel(at + 2, true) << 16;
	if (at + len > addr + MAX_OPTIMIZED_LENGTH || at + len > c->end ||
	    (len == 4 && get_kprobe((void *)at + 2)) ||
	    jump_label_text_reserved((void *)at, (void *)at + len - 1) ||
	    ftrace_location_range(at, at + len - 1))
		return -EOPNOTSUPP;
	return region_insn_kind(insn, at, ri);
}

/*
 * Build @op's copy at @base, the region's instructions done as there,
 * then, while no register is free for the jump back, the instructions
 * after it (c->span: the bytes of text done).
 * Return: 0, or -EOPNOTSUPP / -ERANGE with the rule.
 */
static int build_copy(struct optimized_kprobe *op, unsigned long base, struct copy_builder *c)
{
	struct arch_optimized_insn *oi = &op->optinsn;
	unsigned long addr = (unsigned long)op->kp.addr, fsize;
	struct copy_branches b = { .n = 0 };
	struct region_insn ri;
	bool ended = false;
	unsigned int at, i;
	int ret = 0;

	if (!kprobe_function_bounds(addr, &c->func, &fsize))
		return kprobe_refuse(-EOPNOTSUPP, "in no function: the region cannot be checked");
	c->end = c->func + fsize;
	c->base = base;
	c->len = 0;
	c->full = false;
	for (at = 0; at < oi->size && !ended && !ret; at += ri.len) {
		ret = region_insn_at(oi, addr, at, &ri) ?: copy_insn(c, &ri, &b);
		ended = ends_path(&ri);
	}
	while (!ret && !ended && !kprobe_free_register(addr + at, c->func, c->end)) {
		if (copy_goes_on(c, addr, addr + at, &ri))
			return kprobe_refuse(-EOPNOTSUPP,
					     "no register is free where the detour jumps back to");
		ret = copy_insn(c, &ri, &b);
		ended = ends_path(&ri);
		at += ri.len;
	}
	c->span = at;
	if (!ret && !ended)
		ret = copy_jump(c, addr + at);
	for (i = 0; i < b.n && !ret; i++) {
		u32 *branch = (u32 *)(c->bytes + b.at[i]);

		put_unaligned(get_unaligned(branch) | branch_offset(c->len - b.at[i]), branch);
		ret = copy_jump(c, b.to[i]);
	}
	if (!ret && c->full)
		return kprobe_refuse(-EOPNOTSUPP, "the detour's copy would not fit its slot");
	return ret;
}

/*
 * The checks that read @op's function: control enters the region at
 * its start only, a register is free at the site for the jump (@rd),
 * and the copy can be built at @base (registers free where it jumps
 * back to, within reach). Return: 0, or -EOPNOTSUPP or -ERANGE with
 * the rule.
 */
static int check_function(struct optimized_kprobe *op, unsigned long base,
			  struct copy_builder *c, unsigned int *rd)
{
	unsigned long addr = (unsigned long)op->kp.addr, func, fsize;
	unsigned long end = addr + op->optinsn.size;
	const char *why;

	if (!kprobe_function_bounds(addr, &func, &fsize))
		return kprobe_refuse(-EOPNOTSUPP, "in no function: the region cannot be checked");
	if (jump_label_text_reserved((void *)addr, (void *)(end - 1)) ||
	    ftrace_location_range(addr, end - 1))
		return kprobe_refuse(-EOPNOTSUPP, "a jump label or ftrace site in the region");
	why = kprobe_region_entered(addr, end, func, func + fsize);
	if (why)
		return kprobe_refuse(-EOPNOTSUPP, why);
	*rd = kprobe_free_register(addr, func, func + fsize);
	if (!*rd)
		return kprobe_refuse(-EOPNOTSUPP, "no register is free at the probe for the jump");
	return build_copy(op, base, c);
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
 * Called with kprobe_mutex and text_mutex held. The region is laid out;
 * the slot and the checks that read the function wait for the optimizer
 * (arch_kprobe_ready_detour()), so that a probe that is never optimized
 * (a post_handler, a short life) costs neither. A query's site is
 * checked in full and answered as if a slot in reach could be had, as
 * one can for the kernel and its modules; nothing is taken.
 *
 * Return: 0 with op->optinsn filled in; -EOPNOTSUPP, with the rule,
 * when the site must stay a breakpoint; for a query, -ERANGE when what
 * the copy loads or jumps to is out of AUIPC's reach.
 */
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op, struct kprobe *orig)
{
	struct arch_optimized_insn *oi = &op->optinsn;
	struct copy_builder c;
	unsigned int rd;
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
		ret = check_function(op, (unsigned long)orig->addr, &c, &rd);
		if (ret)
			oi->size = 0;
		return ret;
	}
	oi->insn = &slot_pending;
	oi->span = oi->size;
	return 0;
}

/* Write @op's detour: the template, the copy @c built for it, the literals. */
static int write_detour(struct optimized_kprobe *op, const struct copy_builder *c)
{
	struct arch_optimized_insn *oi = &op->optinsn;
	unsigned int lit = TMPL_AT(kprobe_optprobe_tmpl_lit) / 2;
	union {
		u32 insn[KPROBE_OPTINSN_SLOT_SIZE];
		u64 dword[KPROBE_OPTINSN_SLOT_SIZE / 2];
	} image;

	memcpy(image.insn, kprobe_optprobe_tmpl, sizeof(image));
	memcpy(&image.insn[TMPL_AT(kprobe_optprobe_tmpl_copy)], c->bytes, c->len);
	image.dword[lit] = (u64)op;
	image.dword[lit + 1] = (u64)kprobe_optprobe_common;
	image.dword[lit + 2] = (u64)op->kp.addr;
	return patch_insn_write(oi->insn, &image, sizeof(image));
}

/**
 * arch_kprobe_ready_detour() - take @op's slot, check its function, write its detour
 * @op: a site the optimizer claims; kprobe_mutex held
 *
 * Before the optimizer marks the site KPROBE_FLAG_OPT_READY, from when
 * its breakpoint hits go on in the detour's copy. The detour's stores
 * are ordered before the flag's; a hart that reads the flag executes
 * FENCE.I before it fetches there (breakpoint.c), and the jump is
 * written in a stop_machine() after which every hart has.
 *
 * Return: true when the detour is written; false, with the detour
 * removed, when the site must stay a breakpoint (no slot within AUIPC's
 * reach, or a check failed).
 */
bool arch_kprobe_ready_detour(struct optimized_kprobe *op)
{
	struct copy_builder c;
	kprobe_opcode_t *slot;
	unsigned int rd;
	int ret;

	kprobe_assert_mutex_held();
	if (op->optinsn.written)
		return true;
	if (op->optinsn.insn == &slot_pending) {
		slot = slot_in_reach((unsigned long)op->kp.addr,
				     (unsigned long)op->kp.addr + op->optinsn.size);
		if (!slot) {
			arch_remove_optimized_kprobe(op);
			return false;
		}
		op->optinsn.insn = slot;
	}
	mutex_lock(&text_mutex);
	ret = check_function(op, copy_at(op->optinsn.insn), &c, &rd);
	if (!ret && write_detour(op, &c))
		ret = -EFAULT;
	mutex_unlock(&text_mutex);
	if (ret) {
		arch_remove_optimized_kprobe(op);
		return false;
	}
	op->optinsn.jump_reg = rd;
	op->optinsn.span = c.span;
	smp_wmb();	/* the detour, then KPROBE_FLAG_OPT_READY */
	op->optinsn.written = true;
	nr_written++;
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
	op->optinsn.span = 0;
	if (!op->optinsn.insn)
		return;
	if (op->optinsn.insn != &slot_pending)
		free_optinsn_slot(op->optinsn.insn, 1);
	op->optinsn.insn = NULL;
	if (op->optinsn.written)
		nr_written--;
	op->optinsn.written = false;
}

/**
 * arch_within_optimized_kprobe() - does @op's detour run @addr's instruction?
 * @op: the site
 * @addr: an address
 *
 * Return: non-zero when @addr is in the region @op's jump covers, or in
 * what its detour goes on with after it: a probe there would be passed
 * by.
 */
int arch_within_optimized_kprobe(struct optimized_kprobe *op, kprobe_opcode_t *addr)
{
	kprobe_assert_mutex_held();
	return (unsigned long)addr - (unsigned long)op->kp.addr <
	       max(op->optinsn.size, op->optinsn.span);
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
		len = GET_INSN_LENGTH(insn);
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
