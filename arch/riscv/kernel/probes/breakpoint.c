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
 *		EBREAK handler: one exception per hit; so is integer
 *		arithmetic (OP, OP-IMM, their 32-bit forms, MUL, LUI and
 *		the compressed forms of those: emulate_int()) when it is
 *		not boosted;
 *  boosted	anything else that may run elsewhere, hit with no
 *		post_handler to run, runs from the second part of its
 *		slot, [copy, AUIPC rX, JALR x0 back to the next
 *		instruction], with interrupts as the probed code had them:
 *		one exception per hit. rX is a register the text after the
 *		probe writes before it reads (liveness.c); the slot lies
 *		within AUIPC's 2 GiB of the probe, which module space is of
 *		the kernel and of modules. The hit ends when the CPU leaves
 *		for the slot;
 *  stepped	the other copied instructions (accesses, fences, FP),
 *		when a post_handler must run after the copy, the hit is
 *		nested, the instruction has an exception table entry (its
 *		fault must be fixed up at the probe's address), or no
 *		register is free, run from the first part, [copy, EBREAK],
 *		with interrupts masked (SPIE cleared), and the second
 *		EBREAK brings the CPU back: two exceptions per hit.
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
 * missed: a simulated one is simulated on the spot; a copied one is
 * stepped as KPROBE_REENTER, with the interrupted hit's state kept in the
 * control block's outer_* fields and put back when its step ends.
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
#include <asm/cacheflush.h>
#include <asm/insn.h>
#include <asm/patch.h>
#include <asm/sections.h>

#include "decode-insn.h"

#define EBREAK		0x00100073U
#define C_EBREAK	0x9002U

/* Bytes of the instruction whose first parcel is @insn. */
static __always_inline unsigned int insn_len(u32 insn)
{
	return (insn & 3) == 3 ? 4 : 2;
}

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
	for (; at < addr; at += insn_len(lo)) {
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

/* ---- integer arithmetic, carried out on the trap's registers ---------------- */

/* Register @n of @regs (x1-x31 follow epc in struct pt_regs); x0 reads 0. */
static __always_inline unsigned long xreg(struct pt_regs *regs, unsigned int n)
{
	return n && regs ? ((unsigned long *)regs)[n] : 0;
}

/* The sign-extended 6-bit immediate of a compressed instruction, bits 12, 6:2. */
static __always_inline long cimm6(u32 insn)
{
	return (long)((insn >> 2 & 31) | (insn & BIT(12) ? ~31UL : 0));
}

/* OP-IMM and OP-IMM-32 (@word): the value, or false for an unknown one. */
static __always_inline bool op_imm(u32 insn, unsigned long a, bool word, unsigned long *val)
{
	long imm = (s32)insn >> 20;
	unsigned int sh = insn >> 20 & (word ? 31 : 63), hi = insn >> 26;

	switch (insn >> 12 & 7) {
	case 0:
		*val = word ? (long)(s32)(a + imm) : a + imm;
		return true;
	case 1:
		if (hi || (word && (insn & BIT(25))))
			return false;
		*val = word ? (long)(s32)(a << sh) : a << sh;
		return true;
	case 5:
		if ((hi & ~0x10) || (word && (insn & BIT(25))))
			return false;
		if (word)
			*val = hi ? (long)((s32)a >> sh) : (long)(s32)((u32)a >> sh);
		else
			*val = hi ? (unsigned long)((long)a >> sh) : a >> sh;
		return true;
	}
	if (word)
		return false;
	switch (insn >> 12 & 7) {
	case 2:
		*val = (long)a < imm;
		return true;
	case 3:
		*val = a < (unsigned long)imm;
		return true;
	case 4:
		*val = a ^ imm;
		return true;
	case 6:
		*val = a | imm;
		return true;
	default:
		*val = a & imm;
		return true;
	}
}

/* OP and OP-32 (@word), base and MUL[W]: the value, or false. */
static __always_inline bool op_reg(u32 insn, unsigned long a, unsigned long b, bool word,
				   unsigned long *val)
{
	unsigned int f3 = insn >> 12 & 7, f7 = insn >> 25;
	unsigned int sh = b & (word ? 31 : 63);

	if (f7 == 1 && f3 == 0) {
		*val = word ? (long)(s32)(a * b) : a * b;
		return true;
	}
	if (f7 == 0x20 && f3 == 0) {
		*val = word ? (long)(s32)(a - b) : a - b;
		return true;
	}
	if (f7 == 0x20 && f3 == 5) {
		*val = word ? (long)((s32)a >> sh) : (unsigned long)((long)a >> sh);
		return true;
	}
	if (f7)
		return false;
	switch (f3) {
	case 0:
		*val = word ? (long)(s32)(a + b) : a + b;
		return true;
	case 1:
		*val = word ? (long)(s32)(a << sh) : a << sh;
		return true;
	case 5:
		*val = word ? (long)(s32)((u32)a >> sh) : a >> sh;
		return true;
	}
	if (word)
		return false;
	switch (f3) {
	case 2:
		*val = (long)a < (long)b;
		return true;
	case 3:
		*val = a < b;
		return true;
	case 4:
		*val = a ^ b;
		return true;
	case 6:
		*val = a | b;
		return true;
	default:
		*val = a & b;
		return true;
	}
}

/* The compressed ALU instructions of quadrant 1 (funct3 4) on x8-x15. */
static __always_inline bool c_alu(u32 insn, struct pt_regs *regs, unsigned int *rd,
				  unsigned long *val)
{
	unsigned int sh = (insn >> 2 & 31) | (insn >> 7 & 32);
	unsigned long a, b;

	*rd = 8 + (insn >> 7 & 7);
	a = xreg(regs, *rd);
	b = xreg(regs, 8 + (insn >> 2 & 7));
	switch (insn >> 10 & 3) {
	case 0:		/* C.SRLI */
		*val = a >> sh;
		return true;
	case 1:		/* C.SRAI */
		*val = (unsigned long)((long)a >> sh);
		return true;
	case 2:		/* C.ANDI */
		*val = a & cimm6(insn);
		return true;
	}
	switch ((insn >> 10 & 4) | (insn >> 5 & 3)) {
	case 0:		/* C.SUB */
		*val = a - b;
		return true;
	case 1:		/* C.XOR */
		*val = a ^ b;
		return true;
	case 2:		/* C.OR */
		*val = a | b;
		return true;
	case 3:		/* C.AND */
		*val = a & b;
		return true;
	case 4:		/* C.SUBW */
		*val = (long)(s32)(a - b);
		return true;
	case 5:		/* C.ADDW */
		*val = (long)(s32)(a + b);
		return true;
	}
	return false;
}

/* A compressed integer instruction: its value and destination, or false. */
static __always_inline bool c_result(u32 insn, struct pt_regs *regs, unsigned int *rd,
				     unsigned long *val)
{
	unsigned long a;

	*rd = insn >> 7 & 31;
	a = xreg(regs, *rd);
	switch ((insn & 3) << 3 | insn >> 13) {
	case 0 << 3 | 0:	/* C.ADDI4SPN: nzuimm[5:4|9:6|2|3] */
		*rd = 8 + (insn >> 2 & 7);
		a = (insn >> 7 & 0x30) | (insn >> 1 & 0x3c0) | (insn >> 4 & 4) | (insn >> 2 & 8);
		*val = xreg(regs, 2) + a;
		return a;
	case 1 << 3 | 0:	/* C.ADDI, C.NOP */
		*val = a + cimm6(insn);
		return true;
	case 1 << 3 | 1:	/* C.ADDIW */
		*val = (long)(s32)(a + cimm6(insn));
		return *rd;
	case 1 << 3 | 2:	/* C.LI */
		*val = cimm6(insn);
		return true;
	case 1 << 3 | 3:
		if (*rd == 2) {	/* C.ADDI16SP: nzimm[9|4|6|8:7|5] */
			a = (insn >> 2 & 0x10) | (insn << 3 & 0x20) | (insn << 1 & 0x40) |
			    (insn << 4 & 0x180) | (insn & BIT(12) ? ~0x1ffUL : 0);
			*val = xreg(regs, 2) + a;
		} else {	/* C.LUI */
			*val = (unsigned long)cimm6(insn) << 12;
		}
		return insn & 0x107c;
	case 1 << 3 | 4:
		return c_alu(insn, regs, rd, val);
	case 2 << 3 | 0:	/* C.SLLI */
		*val = a << ((insn >> 2 & 31) | (insn >> 7 & 32));
		return true;
	case 2 << 3 | 4:
		if (!(insn >> 2 & 31))
			return false;	/* C.JR, C.JALR, C.EBREAK */
		/* C.MV, C.ADD */
		*val = (insn & BIT(12) ? a : 0) + xreg(regs, insn >> 2 & 31);
		return true;
	}
	return false;
}

/*
 * The value the integer instruction @insn writes, computed from @regs
 * (NULL: from zeros, to ask whether it is one), and its destination in
 * *@rd. False for any other instruction, and for one writing gp or tp,
 * which no C code does.
 */
static __always_inline bool int_result(u32 insn, struct pt_regs *regs, unsigned int *rd,
				       unsigned long *val)
{
	unsigned long a = xreg(regs, insn >> 15 & 31), b = xreg(regs, insn >> 20 & 31);
	bool ok;

	/* RV32's shifts and compressed forms differ: RV64 only. */
	if (!IS_ENABLED(CONFIG_64BIT))
		return false;
	if ((insn & 3) != 3) {
		ok = c_result(insn & 0xffff, regs, rd, val);
	} else {
		*rd = insn >> 7 & 31;
		switch (insn & 0x7f) {
		case 0x37:	/* LUI */
			*val = (long)(s32)(insn & 0xfffff000);
			ok = true;
			break;
		case 0x13:	/* OP-IMM */
		case 0x1b:	/* OP-IMM-32 */
			ok = op_imm(insn, a, insn & 8, val);
			break;
		case 0x33:	/* OP */
		case 0x3b:	/* OP-32 */
			ok = op_reg(insn, a, b, insn & 8, val);
			break;
		default:
			ok = false;
		}
	}
	return ok && *rd != 3 && *rd != 4;
}

/*
 * Carry out @p's integer instruction on the trap's registers, as a
 * simulated one is: the hit takes one exception, also when a
 * post_handler runs or no register is free for a boosted copy.
 */
static notrace bool emulate_int(u32 opcode, unsigned long addr, struct pt_regs *regs)
{
	unsigned long val;
	unsigned int rd;

	if (int_result(opcode, regs, &rd, &val) && rd)
		((unsigned long *)regs)[rd] = val;
	regs->epc = addr + insn_len(opcode);
	return true;
}
NOKPROBE_SYMBOL(emulate_int);

/* A load or store of an integer register: where, how wide, which register. */
struct int_access {
	unsigned long addr;
	unsigned int size;	/* bytes */
	unsigned int reg;	/* a load's rd, a store's rs2 */
	bool store;
	bool zero_extend;	/* LBU, LHU, LWU */
};

/* The compressed loads and stores of integer registers (not C.FLD and the like). */
static __always_inline bool c_access(u32 insn, struct pt_regs *regs, struct int_access *a)
{
	unsigned int rs1 = 8 + (insn >> 7 & 7), rdp = 8 + (insn >> 2 & 7), off;

	switch ((insn & 3) << 3 | insn >> 13) {
	case 0 << 3 | 2:	/* C.LW, C.SW: uimm[5:3|2|6] */
	case 0 << 3 | 6:
		off = (insn >> 7 & 0x38) | (insn >> 4 & 4) | (insn << 1 & 0x40);
		a->size = 4;
		break;
	case 0 << 3 | 3:	/* C.LD, C.SD: uimm[5:3|7:6] */
	case 0 << 3 | 7:
		off = (insn >> 7 & 0x38) | (insn << 1 & 0xc0);
		a->size = 8;
		break;
	case 2 << 3 | 2:	/* C.LWSP: uimm[5|4:2|7:6] */
		off = (insn >> 7 & 0x20) | (insn >> 2 & 0x1c) | (insn << 4 & 0xc0);
		a->size = 4;
		rs1 = 2;
		rdp = insn >> 7 & 31;
		break;
	case 2 << 3 | 3:	/* C.LDSP: uimm[5|4:3|8:6] */
		off = (insn >> 7 & 0x20) | (insn >> 2 & 0x18) | (insn << 4 & 0x1c0);
		a->size = 8;
		rs1 = 2;
		rdp = insn >> 7 & 31;
		break;
	case 2 << 3 | 6:	/* C.SWSP: uimm[5:2|7:6] */
		off = (insn >> 7 & 0x3c) | (insn >> 1 & 0xc0);
		a->size = 4;
		rs1 = 2;
		rdp = insn >> 2 & 31;
		break;
	case 2 << 3 | 7:	/* C.SDSP: uimm[5:3|8:6] */
		off = (insn >> 7 & 0x38) | (insn >> 1 & 0x1c0);
		a->size = 8;
		rs1 = 2;
		rdp = insn >> 2 & 31;
		break;
	default:
		return false;
	}
	a->store = insn & BIT(15);
	a->zero_extend = false;
	a->reg = rdp;
	a->addr = xreg(regs, rs1) + off;
	/* C.LWSP and C.LDSP to x0 are reserved. */
	return a->store || a->reg;
}

/*
 * The access the integer load or store @insn makes with @regs (NULL:
 * from zeros, to ask whether it is one). False for any other
 * instruction, and for a load into gp or tp.
 */
static __always_inline bool int_access(u32 insn, struct pt_regs *regs, struct int_access *a)
{
	unsigned int f3 = insn >> 12 & 7;
	long off;

	/* RV32 has other compressed forms, and no single 8-byte access. */
	if (!IS_ENABLED(CONFIG_64BIT))
		return false;
	if ((insn & 3) != 3)
		return c_access(insn & 0xffff, regs, a) &&
		       (a->store || (a->reg != 3 && a->reg != 4));
	switch (insn & 0x7f) {
	case 0x03:	/* LB, LH, LW, LD, LBU, LHU, LWU */
		if (f3 == 7)
			return false;
		off = (s32)insn >> 20;
		a->store = false;
		a->reg = insn >> 7 & 31;
		if (a->reg == 3 || a->reg == 4)
			return false;
		break;
	case 0x23:	/* SB, SH, SW, SD */
		if (f3 > 3)
			return false;
		/* imm[11:5] in bits 31:25, imm[4:0] in 11:7: sign-extended from 11 */
		off = (s32)((insn & 0xfe000000) | (insn & 0xf80) << 13) >> 20;
		a->store = true;
		a->reg = insn >> 20 & 31;
		break;
	default:
		return false;
	}
	a->size = 1 << (f3 & 3);
	a->zero_extend = f3 & 4;
	a->addr = xreg(regs, insn >> 15 & 31) + off;
	return true;
}

/* Load @a's value: false when the access faults. */
static __always_inline bool access_load(struct int_access *a, unsigned long *val)
{
	u8 b;
	u16 h;
	u32 w;
	u64 d;

	switch (a->size) {
	case 1:
		__get_kernel_nofault(&b, a->addr, u8, fault);
		*val = a->zero_extend ? b : (long)(s8)b;
		return true;
	case 2:
		__get_kernel_nofault(&h, a->addr, u16, fault);
		*val = a->zero_extend ? h : (long)(s16)h;
		return true;
	case 4:
		__get_kernel_nofault(&w, a->addr, u32, fault);
		*val = a->zero_extend ? w : (long)(s32)w;
		return true;
	default:
		__get_kernel_nofault(&d, a->addr, u64, fault);
		*val = d;
		return true;
	}
fault:
	return false;
}

/* Store @val as @a does: false when the access faults. */
static __always_inline bool access_store(struct int_access *a, unsigned long val)
{
	u8 b = val;
	u16 h = val;
	u32 w = val;
	u64 d = val;

	switch (a->size) {
	case 1:
		__put_kernel_nofault(a->addr, &b, u8, fault);
		return true;
	case 2:
		__put_kernel_nofault(a->addr, &h, u16, fault);
		return true;
	case 4:
		__put_kernel_nofault(a->addr, &w, u32, fault);
		return true;
	default:
		__put_kernel_nofault(a->addr, &d, u64, fault);
		return true;
	}
fault:
	return false;
}

/*
 * Carry out @p's load or store on the trap's registers, one access of
 * the same width at the same address, as the instruction would make
 * it. Only for an access no exception table entry is for: one that
 * faults is a bug of the probed code, and false sends the hit to its
 * step, where the copy faults as the instruction would have.
 */
static notrace bool emulate_access(u32 opcode, unsigned long addr, struct pt_regs *regs)
{
	struct int_access a;
	unsigned long val;

	if (!int_access(opcode, regs, &a))
		return false;
	if (a.store) {
		if (!access_store(&a, xreg(regs, a.reg)))
			return false;
	} else {
		if (!access_load(&a, &val))
			return false;
		if (a.reg)
			((unsigned long *)regs)[a.reg] = val;
	}
	regs->epc = addr + insn_len(opcode);
	return true;
}
NOKPROBE_SYMBOL(emulate_access);

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
 * Can @insn not touch memory, so have no exception table entry? Integer
 * arithmetic, LUI and AUIPC, and the compressed forms of those (all of
 * quadrant 1, C.SLLI, C.MV and C.ADD of quadrant 2). Anything else is
 * looked up.
 */
static bool never_faults(u32 insn)
{
	switch (insn & 3) {
	case 1:
		return true;
	case 2:
		return (insn >> 13 & 7) == 0 || ((insn >> 13 & 7) == 4 && (insn >> 2 & 31));
	case 3:
		switch (insn & 0x7f) {
		case 0x13:	/* OP-IMM */
		case 0x1b:	/* OP-IMM-32 */
		case 0x33:	/* OP */
		case 0x3b:	/* OP-32 */
		case 0x37:	/* LUI */
		case 0x17:	/* AUIPC */
			return true;
		}
	}
	return false;
}

/*
 * The register a boosted copy of @p may use, 0 for none: one the text
 * after the probe writes before reading, and no boost for an access
 * whose fault the exception table fixes up, since the fix-up is found
 * by the faulting address.
 */
static unsigned int boost_register(struct kprobe *p, unsigned long func,
				   unsigned long size)
{
	unsigned long next = (unsigned long)p->addr + insn_len(p->opcode);

	if (!never_faults(p->opcode) && search_exception_tables((unsigned long)p->addr))
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
	unsigned int len = insn_len(p->opcode);
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
	unsigned long addr = (unsigned long)p->addr, func, size, val;
	struct int_access access;
	unsigned int rd;
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
	if (insn_len(insn) == 4)
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
		if (int_result(insn, NULL, &rd, &val))
			p->ainsn.api.handler = emulate_int;
		else if (int_access(insn, NULL, &access) && !search_exception_tables(addr))
			p->ainsn.api.handler = emulate_access;
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
	if (p->ainsn.api.handler == emulate_int) {
		*why = "integer arithmetic: carried out on the trap's registers";
		return true;
	}
	if (p->ainsn.api.handler == emulate_access) {
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
	       pc == (unsigned long)cur->ainsn.api.insn + insn_len(cur->opcode);
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
	regs->epc = (unsigned long)cur->addr + insn_len(cur->opcode);
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
