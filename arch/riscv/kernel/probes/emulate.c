// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv kprobes: instructions carried out on the trap's registers.
 *
 * A copied instruction that is not boosted (a post_handler waits for
 * it, or no register is free for the jump back from its slot) would be
 * stepped: its copy run, then a second EBREAK. These kinds are carried
 * out in the EBREAK handler instead, on the pt_regs of the trap, as
 * branches are simulated: one exception per hit.
 *
 *  - integer arithmetic: OP, OP-IMM, their 32-bit forms, MUL and MULW,
 *    LUI, and the compressed forms of those;
 *  - loads and stores of integer registers that no exception table
 *    entry is for: one access of the same width at the same address,
 *    through __get_kernel_nofault() and __put_kernel_nofault(). One that
 *    faults is a bug of the probed code: the registers are left alone,
 *    and the hit goes to its step, where the copy faults as the
 *    instruction would have.
 *
 * Anything else (atomics, floating point, CSR accesses, the multiply
 * high and divide instructions, the B extensions) is left to the copy,
 * as is a write to gp or tp, which no C code makes. RV64 only: RV32's
 * shifts and compressed forms differ.
 *
 * The handlers run in the EBREAK handler, as an NMI: notrace and
 * NOKPROBE_SYMBOL(), their helpers inlined.
 */

#include <linux/array_size.h>
#include <linux/extable.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>
#include <asm/bug.h>

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

/*
 * The base integer operation of funct3 @f3 on @a and @b, SUB and SRA for
 * @alt, the 32-bit form for @word (of ADD, SUB and the shifts only): the
 * value, or false for an operation that has no such form.
 */
static __always_inline bool alu(unsigned int f3, bool alt, bool word, unsigned long a,
				unsigned long b, unsigned long *val)
{
	unsigned int sh = b & (word ? 31 : 63);
	unsigned long r;

	switch (f3) {
	case 0:
		r = alt ? a - b : a + b;
		break;
	case 1:
		r = a << sh;
		break;
	case 5:
		if (alt)
			r = word ? (unsigned long)((s32)a >> sh) : (unsigned long)((long)a >> sh);
		else
			r = word ? (u32)a >> sh : a >> sh;
		break;
	case 2:
		r = (long)a < (long)b;
		break;
	case 3:
		r = a < b;
		break;
	case 4:
		r = a ^ b;
		break;
	case 6:
		r = a | b;
		break;
	default:
		r = a & b;
		break;
	}
	if (!word) {
		*val = r;
		return true;
	}
	*val = (long)(s32)r;
	return f3 == 0 || f3 == 1 || f3 == 5;
}

/*
 * OP-IMM and OP-IMM-32 (@word): the value, or false for an unknown one.
 * A shift's immediate holds its amount, and SRAI's bit 30 (hi 0x10).
 */
static __always_inline bool op_imm(u32 insn, unsigned long a, bool word, unsigned long *val)
{
	unsigned int f3 = insn >> 12 & 7, hi = insn >> 26;

	if ((f3 == 1 || f3 == 5) &&
	    ((hi & ~(f3 == 5 ? 0x10 : 0)) || (word && (insn & BIT(25)))))
		return false;
	return alu(f3, f3 == 5 && hi, word, a, (long)((s32)insn >> 20), val);
}

/* OP and OP-32 (@word), base and MUL[W]: the value, or false. */
static __always_inline bool op_reg(u32 insn, unsigned long a, unsigned long b, bool word,
				   unsigned long *val)
{
	unsigned int f3 = insn >> 12 & 7, f7 = insn >> 25;

	if (f7 == 1 && f3 == 0) {
		*val = word ? (long)(s32)(a * b) : a * b;
		return true;
	}
	if (f7 & ~0x20 || (f7 && f3 != 0 && f3 != 5))
		return false;
	return alu(f3, f7, word, a, b, val);
}

/*
 * The compressed ALU instructions of quadrant 1 (funct3 4) on x8-x15:
 * C.SRLI, C.SRAI, C.ANDI, then by bits 12 and 6:5 C.SUB, C.XOR, C.OR,
 * C.AND, C.SUBW and C.ADDW, as the funct3 of alu() each is.
 */
static __always_inline bool c_alu(u32 insn, struct pt_regs *regs, unsigned int *rd,
				  unsigned long *val)
{
	static const u8 reg_f3[] = { 0, 4, 6, 7, 0, 0 };
	unsigned int sh = (insn >> 2 & 31) | (insn >> 7 & 32), op;
	unsigned long a, b;

	*rd = 8 + (insn >> 7 & 7);
	a = xreg(regs, *rd);
	b = xreg(regs, 8 + (insn >> 2 & 7));
	switch (insn >> 10 & 3) {
	case 0:
		return alu(5, false, false, a, sh, val);
	case 1:
		return alu(5, true, false, a, sh, val);
	case 2:
		return alu(7, false, false, a, cimm6(insn), val);
	}
	op = (insn >> 10 & 4) | (insn >> 5 & 3);
	if (op >= ARRAY_SIZE(reg_f3))
		return false;
	return alu(reg_f3[op], op == 0 || op == 4, op >= 4, a, b, val);
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

/**
 * kprobe_emulate_int() - carry out integer arithmetic on the trap's registers
 * @opcode: the probed instruction, one kprobe_emulation() named this for
 * @addr: its address
 * @regs: the trap's registers, the instruction's result written there
 *
 * A probe's handler (arch_probe_insn::handler), as a simulator is.
 *
 * Return: true, with regs->epc at the next instruction.
 */
notrace bool kprobe_emulate_int(u32 opcode, unsigned long addr, struct pt_regs *regs)
{
	unsigned long val;
	unsigned int rd;

	if (int_result(opcode, regs, &rd, &val) && rd)
		((unsigned long *)regs)[rd] = val;
	regs->epc = addr + GET_INSN_LENGTH(opcode);
	return true;
}
NOKPROBE_SYMBOL(kprobe_emulate_int);

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

/**
 * kprobe_emulate_access() - carry out a load or store on the trap's registers
 * @opcode: the probed instruction, one kprobe_emulation() named this for
 * @addr: its address
 * @regs: the trap's registers, a load's value written there
 *
 * One access of the same width at the same address, as the instruction
 * would make it.
 *
 * Return: true, with regs->epc at the next instruction; false, @regs
 * untouched, when the access faults: a bug of the probed code (no
 * exception table entry is for it), left to the hit's step, where the
 * copy faults as the instruction would have.
 */
notrace bool kprobe_emulate_access(u32 opcode, unsigned long addr, struct pt_regs *regs)
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
	regs->epc = addr + GET_INSN_LENGTH(opcode);
	return true;
}
NOKPROBE_SYMBOL(kprobe_emulate_access);

/**
 * kprobe_emulation() - the handler that carries out an instruction here
 * @insn: the instruction (a compressed one in the low half)
 * @addr: its address
 *
 * Return: kprobe_emulate_int() or kprobe_emulate_access() for the kinds
 * above, NULL for any other instruction.
 */
probes_handler_t *kprobe_emulation(u32 insn, unsigned long addr)
{
	struct int_access access;
	unsigned long val;
	unsigned int rd;

	if (int_result(insn, NULL, &rd, &val))
		return kprobe_emulate_int;
	if (int_access(insn, NULL, &access) && !search_exception_tables(addr))
		return kprobe_emulate_access;
	return NULL;
}
