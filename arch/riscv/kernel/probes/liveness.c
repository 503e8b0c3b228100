// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv kprobes: finding a register that is free at an instruction.
 *
 * A copy that jumps back from its slot needs AUIPC and JALR, and a
 * register to carry the address between them (JAL reaches 1 MiB, and
 * slots lie farther). That register must be dead where the jump lands:
 * on every path from there, written before it is read. The text proves
 * that, or nothing does: a register is dead at an instruction that
 * writes it without reading it, and at one that does not read it when
 * it is dead after it on every way on:
 *
 *  - both ways at a conditional branch; a JAL to x0 may be a jump label
 *    site (it may become a NOP), so its target and the next instruction;
 *  - nothing is dead past anything the analysis does not follow: the
 *    function's end, an indirect jump, a trap, a 4-byte NOP (a jump
 *    label site, which may become a jump anywhere), an instruction with
 *    an exception table entry (its fix-up code may read anything), and
 *    past a query's budget of instructions;
 *  - a call or a return is followed no further either: the calling
 *    convention would say that the callee may change t0-t6, and that
 *    the caller expects nothing of them after a return, but GCC's IPA
 *    register allocation (-fipa-ra, on at -O2) keeps values in
 *    caller-saved registers across calls of functions it knows leave
 *    them alone. A function that writes such a register anywhere does
 *    not leave it alone, so at its returns t0-t6 and a2-a7 (no return
 *    value) that it writes on any path are dead, and at a direct call
 *    the t0-t6 that the callee writes on any path.
 *
 * Loops make that a fixed point: dead_at() solves it for the
 * instructions a query reaches before those ends, from "all dead" down,
 * and keeps the answers with the function's decoded text, so that the
 * probes of one function, registered one after another, find most of
 * their answers solved.
 *
 * Registers are read before written within one instruction. Reads are
 * over-approximated (an instruction this file does not know reads every
 * register its fields could name) and writes under-approximated (only
 * the integer writes of the formats below count), so an unknown
 * instruction can only make the answer "not free". The candidates are
 * t0-t6, a0-a7, s1-s11 and ra: a callee-saved register or ra is dead
 * where the function has saved it and writes it before reading it again
 * (its body's first assignment, a call's link, the epilogue's load), and
 * a function that leaves it alone reaches a return with it undecided,
 * "not free". Never sp, gp, tp (the shadow call stack, current) and s0,
 * the frame pointer an unwinder may read at any instruction.
 */

#include <linux/bits.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <asm/insn.h>

#define REGS_T		(BIT(5) | BIT(6) | BIT(7) | GENMASK(31, 28))
#define REGS_A		GENMASK(17, 10)
#define REGS_S		(BIT(9) | GENMASK(27, 18))	/* s1, s2-s11 */
#define REG_RA		BIT(1)
/* Caller-saved registers that return no value: t0-t6, a2-a7. */
#define REGS_CLOBBERED	(REGS_T | GENMASK(17, 12))
#define CANDIDATES	(REGS_T | REGS_A | REGS_S | REG_RA)

/*
 * Instructions one query follows on to others at most: the returns and
 * calls it reaches cost the decoding of a function each.
 */
#define REACH_BUDGET	512

/* What an instruction does to the flow of control. */
enum flow {
	FLOW_NEXT,	/* goes on to the next instruction */
	FLOW_JUMP,	/* to .target only */
	FLOW_BRANCH,	/* to .target or the next instruction */
	FLOW_STOP,	/* anything the scan does not follow: calls, traps */
	FLOW_INDIRECT,	/* a jump through a register (a jump table), not a return */
	FLOW_RETURN,	/* a jump through ra with no link: the function returns */
	FLOW_CALL,	/* a JAL linking ra: a call of .target */
};

struct insn_effect {
	u32 reads;
	u32 writes;
	enum flow flow;
	long target;	/* offset of a jump's or branch's target */
	unsigned int len;
	bool access;	/* may access memory, so fault */
	bool fixup;	/* has an exception table entry */
};

/* x8-x15, named by a 3-bit field of a compressed instruction. */
static u32 creg(u32 insn, unsigned int shift)
{
	return BIT(8 + ((insn >> shift) & 7));
}

static u32 reg(u32 insn, unsigned int shift)
{
	return BIT((insn >> shift) & 31);
}

static void decode32(u32 insn, struct insn_effect *e)
{
	u32 rd = reg(insn, 7), rs1 = reg(insn, 15), rs2 = reg(insn, 20);
	unsigned int funct3 = (insn >> 12) & 7;

	/* Fields an unknown format may use: rs1, rs2 and rs3 (R4). */
	e->reads = rs1 | rs2 | reg(insn, 27);
	switch (insn & 0x7f) {
	case 0x37:	/* LUI */
	case 0x17:	/* AUIPC */
		e->reads = 0;
		e->writes = rd;
		break;
	case 0x6f:	/* JAL */
		e->reads = 0;
		e->writes = rd;
		e->target = riscv_insn_extract_jtype_imm(insn);
		/* A JAL x0 may be a jump label site; a call ends the search. */
		if (rd == BIT(0))
			e->flow = FLOW_BRANCH;
		else
			e->flow = rd == BIT(1) ? FLOW_CALL : FLOW_STOP;
		break;
	case 0x67:	/* JALR: calls, returns, indirect jumps */
		e->reads = rs1;
		e->writes = rd;
		if (rd != BIT(0))
			e->flow = FLOW_STOP;
		else
			/* "ret"; with an offset, a far jump through ra */
			e->flow = rs1 == BIT(1) && !(insn >> 20) ? FLOW_RETURN : FLOW_INDIRECT;
		break;
	case 0x63:	/* BRANCH */
		e->reads = rs1 | rs2;
		e->target = (s32)RV_EXTRACT_BTYPE_IMM(insn);
		e->flow = FLOW_BRANCH;
		break;
	case 0x03:	/* LOAD */
		e->access = true;
		fallthrough;
	case 0x13:	/* OP-IMM */
	case 0x1b:	/* OP-IMM-32 */
		e->reads = rs1;
		e->writes = rd;
		/* ADDI x0, x0, 0: the NOP of a jump label site. */
		if (insn == 0x00000013)
			e->flow = FLOW_STOP;
		break;
	case 0x33:	/* OP */
	case 0x3b:	/* OP-32 */
		e->reads = rs1 | rs2;
		e->writes = rd;
		break;
	case 0x2f:	/* AMO, LR, SC; AMOCAS reads rd too */
		e->reads = rs1 | rs2 | rd;
		e->writes = rd;
		e->access = true;
		break;
	case 0x23:	/* STORE */
		e->reads = rs1 | rs2;
		e->access = true;
		break;
	case 0x73:	/* SYSTEM: CSR accesses go on, the rest trap */
		if (funct3 == 0 || funct3 == 4)
			e->flow = FLOW_STOP;
		else
			e->writes = rd;
		break;
	default:	/* fences, FP, vector, custom: no jump, maybe an access */
		e->access = true;
		break;
	}
}

static void decode16(u32 insn, struct insn_effect *e)
{
	u32 rd = reg(insn, 7), rs2 = reg(insn, 2);
	unsigned int funct3 = insn >> 13;

	/* Every register field a compressed format has. */
	e->reads = rd | rs2 | creg(insn, 7) | creg(insn, 2);
	/* Quadrants 0 and 2 hold the loads and stores; quadrant 1 none. */
	e->access = (insn & 3) != 1;
	switch ((insn & 3) << 3 | funct3) {
	case 0 << 3 | 0:	/* C.ADDI4SPN */
		e->reads = BIT(2);
		e->writes = creg(insn, 2);
		break;
	case 0 << 3 | 2:	/* C.LW */
	case 0 << 3 | 3:	/* C.LD; C.FLW on RV32 */
		e->reads = creg(insn, 7);
		if (IS_ENABLED(CONFIG_64BIT) || funct3 == 2)
			e->writes = creg(insn, 2);
		break;
	case 1 << 3 | 0:	/* C.ADDI, C.NOP */
	case 1 << 3 | 1:	/* C.ADDIW */
		if (!IS_ENABLED(CONFIG_64BIT) && funct3 == 1) {
			e->flow = FLOW_STOP;	/* C.JAL */
			break;
		}
		e->reads = rd;
		e->writes = rd;
		break;
	case 1 << 3 | 2:	/* C.LI */
		e->reads = 0;
		e->writes = rd;
		break;
	case 1 << 3 | 3:	/* C.LUI, C.ADDI16SP; a zero immediate is reserved */
		if (!(insn & 0x107c))
			break;
		e->reads = rd == BIT(2) ? rd : 0;
		e->writes = rd;
		break;
	case 1 << 3 | 4:	/* shifts, ANDI and the register ALU ops on x8-x15 */
		e->writes = creg(insn, 7);
		break;
	case 1 << 3 | 5:	/* C.J */
		e->reads = 0;
		e->target = (s32)RVC_EXTRACT_JTYPE_IMM(insn);
		e->flow = FLOW_JUMP;
		break;
	case 1 << 3 | 6:	/* C.BEQZ */
	case 1 << 3 | 7:	/* C.BNEZ */
		e->reads = creg(insn, 7);
		e->target = (s32)RVC_EXTRACT_BTYPE_IMM(insn);
		e->flow = FLOW_BRANCH;
		break;
	case 2 << 3 | 0:	/* C.SLLI */
		e->reads = rd;
		e->writes = rd;
		break;
	case 2 << 3 | 2:	/* C.LWSP */
	case 2 << 3 | 3:	/* C.LDSP; C.FLWSP on RV32 */
		e->reads = BIT(2);
		if (IS_ENABLED(CONFIG_64BIT) || funct3 == 2)
			e->writes = rd;
		break;
	case 2 << 3 | 4:
		if (rs2 != BIT(0)) {
			/* C.MV (bit 12 clear) or C.ADD */
			e->reads = insn & BIT(12) ? rd | rs2 : rs2;
			e->writes = rd;
		} else {
			/* C.JR, C.JALR, C.EBREAK */
			e->reads = rd;
			if (insn & BIT(12))
				e->flow = FLOW_STOP;
			else
				e->flow = rd == BIT(1) ? FLOW_RETURN : FLOW_INDIRECT;
		}
		break;
	case 2 << 3 | 6:	/* C.SWSP */
	case 2 << 3 | 7:	/* C.SDSP */
		e->reads = BIT(2) | rs2;
		break;
	default:		/* FP loads and stores: no jump */
		break;
	}
	/* The all-zero parcel is defined illegal. */
	if (!insn)
		e->flow = FLOW_STOP;
}

/*
 * Decode the instruction at @pc, inside the function being scanned,
 * whose text is mapped while kprobes holds kprobe_mutex and text_mutex.
 * @listed: whether the exception table has an entry for @pc, or NULL to
 * search it when the instruction accesses memory.
 */
static void decode_at(unsigned long pc, struct insn_effect *e, const bool *listed)
{
	u16 lo = kprobe_text_parcel(pc, true), hi;

	memset(e, 0, sizeof(*e));
	if ((lo & 3) != 3) {
		e->len = 2;
		decode16(lo, e);
	} else if ((lo & 0x1f) == 0x1f) {
		/* 48 bits or longer: no kernel has them */
		e->len = 2;
		e->flow = FLOW_STOP;
	} else {
		hi = kprobe_text_parcel(pc + 2, true);
		e->len = 4;
		decode32(lo | (u32)hi << 16, e);
	}
	/*
	 * The fix-up code of a faulting access may read any register, and
	 * the access's own write does not happen then.
	 */
	if (e->access && (listed ? *listed : !!search_exception_tables(pc))) {
		e->writes = 0;
		e->flow = FLOW_STOP;
		e->fixup = true;
	}
	/* Nothing is read from, or dies in, x0. */
	e->reads &= ~BIT(0);
	e->writes &= ~BIT(0);
}

/*
 * The effects of the last function scanned, decoded once: the probes of
 * a batch, or of a tool walking a function, mostly share a function, and
 * their scans go over much of the same text. An entry per 2-byte
 * position (len 0: not decoded yet), for functions up to DECODED_MAX.
 * kprobe_mutex guards it; kprobe_forget_decoded() drops it when its text
 * goes, and only text whose going the core hears of is kept.
 *
 * An entry, and the dead registers solved at it, outlive later changes
 * to the text: kprobes' own EBREAKs
 * (the instruction still runs, simulated or from a slot, and a boosted
 * copy's jump writes only a register proven dead there), a jump label
 * site (decoded as a NOP it ends a scan; as a JAL x0 both ways are
 * followed, which covers either state) and ftrace's call site (its AUIPC
 * writes t0, which is dead at a function's entry; the JALR and the NOPs
 * end a scan).
 */
#define DECODED_MAX	SZ_8K

/* How far dead_at() has come with an entry. */
enum solving {
	UNSOLVED,	/* no query has reached it */
	REACHED,	/* the query being solved reaches it */
	OPEN,		/* and where it goes on to is reached too */
	SOLVED,		/* .dead is final */
};

struct decoded {
	u32 reads;
	u32 writes;
	s32 target;
	u32 dead;	/* OPEN: an upper bound; SOLVED: the candidates dead here */
	u8 len;
	u8 flow;
	bool fixup;	/* listed in the exception table: set before decoding */
	u8 solving;
};

static struct {
	unsigned long start, end;
	struct decoded *at;	/* (pc - start) / 2 */
	u32 writes;		/* every register an instruction of it writes */
	bool writes_known;
} decoded;

/*
 * The write sets of the functions calls were last followed into, each
 * decoded once while its text is known to stay. kprobe_mutex guards it.
 */
#define CALLEES_KEPT	16
/* Callees decoded at most: a scan meets calls, and one decode each is paid. */
#define CALLEE_MAX	SZ_1K

static struct {
	unsigned long start, end;
	u32 writes;
} callees[CALLEES_KEPT];
static unsigned int callees_next;

struct scan {
	unsigned long start, end;
	struct decoded *decoded;	/* this function's, or NULL */
	u32 clobbered;			/* dead at its returns (see dead_at()) */
	bool clobbered_known;
};

/* The entry of the instruction at @pc of the scanned function, decoded when first asked for. */
static struct decoded *entry_at(struct scan *s, unsigned long pc)
{
	struct decoded *d = &s->decoded[(pc - s->start) / 2];
	struct insn_effect e;

	if (!d->len) {
		decode_at(pc, &e, &d->fixup);
		d->reads = e.reads;
		d->writes = e.writes;
		d->target = e.target;
		d->flow = e.flow;
		d->len = e.len;
		d->fixup = e.fixup;
	}
	return d;
}

/* decode_at(), through the function's decoded entries when it has them. */
static void effect_at(struct scan *s, unsigned long pc, struct insn_effect *e)
{
	struct decoded *d;

	if (!s->decoded) {
		decode_at(pc, e, NULL);
		return;
	}
	d = entry_at(s, pc);
	e->reads = d->reads;
	e->writes = d->writes;
	e->target = d->target;
	e->flow = d->flow;
	e->len = d->len;
	e->fixup = d->fixup;
}

/* The address of the instruction an exception table entry is for. */
static unsigned long listed_insn(const struct exception_table_entry *ex)
{
	return (unsigned long)&ex->insn + ex->insn;
}

/*
 * The exception table of the text at @addr, vmlinux's or its module's,
 * sorted by address (as search_exception_tables() relies on too), in
 * *@table and *@num; false for other text.
 */
static bool extable_of(unsigned long addr, const struct exception_table_entry **table,
		       size_t *num)
{
	struct module *mod;

	if (is_kernel_text(addr) || is_kernel_inittext(addr)) {
		*table = __start___ex_table;
		*num = __stop___ex_table - __start___ex_table;
		return true;
	}
	if (!IS_ENABLED(CONFIG_MODULES))
		return false;
	preempt_disable();
	mod = __module_address(addr);
	if (mod) {
		*table = mod->extable;
		*num = mod->num_exentries;
	}
	preempt_enable();
	return mod;
}

/*
 * Mark the entries of [@start, @end) that the exception table lists:
 * one search for the function, not one per access decoded. False for
 * text no table covers.
 */
static bool mark_listed(struct decoded *at, unsigned long start, unsigned long end)
{
	const struct exception_table_entry *table = NULL;
	size_t num = 0, lo = 0, hi, mid;
	unsigned long insn;

	if (!extable_of(start, &table, &num))
		return false;
	hi = num;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (listed_insn(&table[mid]) < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < num && (insn = listed_insn(&table[lo])) < end; lo++)
		at[(insn - start) / 2].fixup = true;
	return true;
}

/*
 * The decoded entries of [@start, @end), kept from the last scan of the
 * same function or new; NULL for a function too large, text no
 * exception table covers, or no memory.
 */
static struct decoded *decoded_for(unsigned long start, unsigned long end)
{
	if (decoded.at && decoded.start == start && decoded.end == end)
		return decoded.at;
	if (end - start > DECODED_MAX || !kprobe_hears_text_gone(start))
		return NULL;
	kvfree(decoded.at);
	decoded.at = kvcalloc((end - start) / 2, sizeof(*decoded.at), GFP_KERNEL);
	if (decoded.at && !mark_listed(decoded.at, start, end)) {
		kvfree(decoded.at);
		decoded.at = NULL;
	}
	decoded.start = start;
	decoded.end = end;
	decoded.writes_known = false;
	return decoded.at;
}

/**
 * kprobe_forget_decoded() - drop the decoded text of a function going away
 * @start: first byte of the text going away
 * @end: the byte after its last
 *
 * kprobe_mutex held. Other text may be loaded there.
 */
void kprobe_forget_decoded(unsigned long start, unsigned long end)
{
	bool callee_gone = false;
	unsigned int i;

	kprobe_assert_mutex_held();
	for (i = 0; i < CALLEES_KEPT; i++)
		if (callees[i].start < end && callees[i].end > start) {
			callees[i].start = 0;
			callees[i].end = 0;
			callee_gone = true;
		}
	/* Its dead registers were solved with what its callees write. */
	if (decoded.at && (callee_gone || (decoded.start < end && decoded.end > start))) {
		kvfree(decoded.at);
		decoded.at = NULL;
	}
}

/*
 * Might the "ret" at @pc be a far jump, "auipc ra; jalr x0, 0(ra)"? The
 * parcels before it are read whether or not an instruction starts there:
 * a wrong yes only keeps a register from being found free.
 */
static bool after_auipc_ra(struct scan *s, unsigned long pc)
{
	return pc >= s->start + 4 && (kprobe_text_parcel(pc - 4, true) & 0xfff) == 0x097;
}

/*
 * The writes of [@start, @end), skipping ftrace's call site at a traced
 * function's entry: "auipc t0; jalr t0" there writes t0 only while
 * ftrace calls, and the compiler saw NOPs.
 */
static bool in_ftrace_site(unsigned long start, unsigned long pc)
{
	return pc < start + 8 && ftrace_location(start) == start;
}

/*
 * Every register an instruction of the scanned function writes, on any
 * path: decoded once, with the function's entries.
 */
static u32 function_writes(struct scan *s)
{
	struct insn_effect e;
	unsigned long pc;
	u32 writes = 0;

	if (decoded.writes_known)
		return decoded.writes;
	for (pc = s->start; pc + 2 <= s->end; pc += e.len) {
		effect_at(s, pc, &e);
		if (!in_ftrace_site(s->start, pc))
			writes |= e.writes;
	}
	decoded.writes = writes;
	decoded.writes_known = true;
	return writes;
}

/* The registers dead at the scanned function's returns, decoded when first met. */
static u32 scan_clobbered(struct scan *s)
{
	if (!s->clobbered_known) {
		s->clobbered = s->decoded ? function_writes(s) & REGS_CLOBBERED : 0;
		s->clobbered_known = true;
	}
	return s->clobbered;
}

/*
 * Every register the function starting at @fn writes; 0 when unknown.
 * An access with an exception table entry counts: it writes whenever it
 * does not fault, and so its register is not left alone.
 */
static u32 callee_writes(unsigned long fn)
{
	static const bool unlisted;
	unsigned long start, size, pc;
	struct insn_effect e;
	unsigned int i;
	u32 writes = 0;

	for (i = 0; i < CALLEES_KEPT; i++)
		if (callees[i].start == fn)
			return callees[i].writes;
	if (!kprobe_function_bounds(fn, &start, &size) || start != fn ||
	    size > CALLEE_MAX || !kprobe_hears_text_gone(fn))
		return 0;
	for (pc = start; pc + 2 <= start + size; pc += e.len) {
		decode_at(pc, &e, &unlisted);
		if (!in_ftrace_site(start, pc))
			writes |= e.writes;
	}
	i = callees_next++ % CALLEES_KEPT;
	callees[i].start = start;
	callees[i].end = start + size;
	callees[i].writes = writes;
	return writes;
}

/* The entry at @pc when an instruction there lies inside the function; else NULL. */
static struct decoded *inside_at(struct scan *s, unsigned long pc)
{
	struct decoded *d;

	if (pc < s->start || pc + 2 > s->end)
		return NULL;
	d = entry_at(s, pc);
	return pc + d->len <= s->end ? d : NULL;
}

/*
 * The candidates dead after the instruction @d at @pc where the analysis
 * follows it no further: at a return those the caller cannot keep a
 * value in (see the top of the file), at a direct call those the callee
 * writes, nothing at anything else.
 */
static u32 dead_at_end(struct scan *s, struct decoded *d, unsigned long pc)
{
	if (d->flow == FLOW_RETURN && !after_auipc_ra(s, pc))
		return scan_clobbered(s);
	if (d->flow == FLOW_CALL)
		return REGS_T & callee_writes(pc + d->target);
	return 0;
}

/* Does the analysis follow the instruction @d on to others? */
static bool goes_on(struct decoded *d)
{
	return d->flow == FLOW_NEXT || d->flow == FLOW_JUMP || d->flow == FLOW_BRANCH;
}

/* The instructions @d at @pc goes on to: up to two, NULL for one outside. */
static unsigned int next_of(struct scan *s, struct decoded *d, unsigned long pc,
			    struct decoded **to, unsigned long *at)
{
	unsigned int n = 0;

	if (d->flow == FLOW_JUMP || d->flow == FLOW_BRANCH) {
		at[n] = pc + d->target;
		to[n] = inside_at(s, at[n]);
		n++;
	}
	if (d->flow == FLOW_NEXT || d->flow == FLOW_BRANCH) {
		at[n] = pc + d->len;
		to[n] = inside_at(s, at[n]);
		n++;
	}
	return n;
}

/*
 * The entries one query reaches, as offsets into the function's decoded
 * entries: those that go on to others (OPEN) first, in the order
 * reached. A query expands at most REACH_BUDGET of them, each adding
 * at most two. kprobe_mutex guards it.
 */
static u16 reached[2 * REACH_BUDGET + 1];

/*
 * Mark what the query at @pc reaches, up to where the analysis stops:
 * those entries OPEN, with every candidate as the upper bound of their
 * dead set, and the stops SOLVED at once. Past REACH_BUDGET instructions
 * an instruction is taken for a stop too: the answer only proves less
 * there, for this query and the later ones that reach it. Returns how
 * many are OPEN, at the start of reached[].
 */
static unsigned int reach(struct scan *s, unsigned long pc)
{
	unsigned int head = 0, tail = 0, open = 0, i, n;
	struct decoded *d, *to[2];
	unsigned long q, at[2];

	reached[tail++] = (pc - s->start) / 2;
	s->decoded[reached[0]].solving = REACHED;
	for (; head < tail; head++) {
		q = s->start + 2 * reached[head];
		d = &s->decoded[reached[head]];
		if (!goes_on(d) || open == REACH_BUDGET) {
			d->dead = (d->writes | (goes_on(d) ? 0 : dead_at_end(s, d, q))) &
				  ~d->reads & CANDIDATES;
			d->solving = SOLVED;
			continue;
		}
		d->dead = CANDIDATES;
		d->solving = OPEN;
		/* Behind the head: that slot was read already. */
		reached[open++] = reached[head];
		n = next_of(s, d, q, to, at);
		for (i = 0; i < n; i++) {
			if (!to[i] || to[i]->solving != UNSOLVED)
				continue;
			to[i]->solving = REACHED;
			reached[tail++] = (at[i] - s->start) / 2;
		}
	}
	return open;
}

/*
 * The candidates dead at @pc: solved once for everything the query
 * reaches, then kept. Each OPEN entry's dead set starts at every
 * candidate and only shrinks, sweep by sweep (latest reached first:
 * mostly those after it), to what its instruction and those it goes on
 * to allow; no change in a sweep is the fixed point.
 */
static u32 dead_at(struct scan *s, unsigned long pc)
{
	struct decoded *d = inside_at(s, pc), *to[2];
	unsigned int i, k, n, open;
	unsigned long q, at[2];
	bool changed;
	u32 after;

	if (!d)
		return 0;
	if (d->solving == SOLVED)
		return d->dead;
	open = reach(s, pc);
	do {
		changed = false;
		for (k = open; k-- > 0;) {
			q = s->start + 2 * reached[k];
			d = &s->decoded[reached[k]];
			after = CANDIDATES;
			n = next_of(s, d, q, to, at);
			for (i = 0; i < n; i++)
				after &= to[i] ? to[i]->dead : 0;
			after = (d->writes | after) & ~d->reads & CANDIDATES;
			if (after != d->dead) {
				d->dead = after;
				changed = true;
			}
		}
	} while (changed);
	for (k = 0; k < open; k++)
		s->decoded[reached[k]].solving = SOLVED;
	return inside_at(s, pc)->dead;
}

/**
 * kprobe_free_register() - a register free at @addr
 * @addr: where a jump of ours will land, inside its function
 * @start: the function's first byte
 * @end: the byte after its last
 *
 * kprobe_mutex held. A function larger than DECODED_MAX has none.
 *
 * Return: the number of a register (t0-t6 first, then a7 down to a0,
 * s11 down to s1, ra) that every path from @addr writes before reading
 * it, or 0 when none could be proven so.
 */
unsigned int kprobe_free_register(unsigned long addr, unsigned long start,
				  unsigned long end)
{
	struct scan s = { .start = start, .end = end };
	u32 dead;

	kprobe_assert_mutex_held();
	s.decoded = decoded_for(start, end);
	if (!s.decoded)
		return 0;
	dead = dead_at(&s, addr);

	if (dead & REGS_T)
		return __ffs(dead & REGS_T);
	if (dead & REGS_A)
		return __fls(dead & REGS_A);
	if (dead & REGS_S)
		return __fls(dead & REGS_S);
	return dead ? 1 : 0;
}

#ifdef CONFIG_OPTPROBES
/* Where the fix-up of the access at @pc, which has one, goes on. */
static unsigned long fixup_at(unsigned long pc)
{
	const struct exception_table_entry *ex = search_exception_tables(pc);

	return ex ? (unsigned long)&ex->fixup + ex->fixup : 0;
}

/*
 * Is the JALR at @pc, after the instruction at @prev, a far tail call,
 * "auipc rX; jalr x0, rX", not a jump table's?
 */
static bool is_far_tail(unsigned long pc, unsigned long prev)
{
	u32 jalr, auipc;

	if (prev != pc - 4)
		return false;
	jalr = kprobe_text_parcel(pc, true) | (u32)kprobe_text_parcel(pc + 2, true) << 16;
	auipc = kprobe_text_parcel(pc - 4, true) | (u32)kprobe_text_parcel(pc - 2, true) << 16;
	return (jalr & 0x7f) == 0x67 && (auipc & 0x7f) == 0x17 &&
	       ((auipc >> 7) & 31) == ((jalr >> 15) & 31);
}

/**
 * kprobe_region_entered() - may control arrive inside [@lo, @hi) but at @lo?
 * @lo: first byte of a jump's region
 * @hi: the byte after its last
 * @start: its function's first byte
 * @end: the byte after the function's last
 *
 * kprobe_mutex held. The function's instructions are walked from its
 * start: a branch or jump to inside the region, an exception fix-up
 * there, or a jump through a register other than a far tail call's (a
 * jump table's: where it goes is data) say yes. Calls into the middle
 * of a function, and jumps from other functions, do not happen in C.
 *
 * Return: NULL when the region is entered at @lo only, or the rule that
 * says it may not be.
 */
const char *kprobe_region_entered(unsigned long lo, unsigned long hi,
				  unsigned long start, unsigned long end)
{
	struct scan s = { .start = start, .end = end };
	unsigned long pc, to, prev = 0;
	struct insn_effect e;

	kprobe_assert_mutex_held();
	s.decoded = decoded_for(start, end);
	for (pc = start; pc + 2 <= end; prev = pc, pc += e.len) {
		effect_at(&s, pc, &e);
		if ((e.flow == FLOW_INDIRECT && !is_far_tail(pc, prev)) ||
		    (e.flow == FLOW_RETURN && is_far_tail(pc, prev)))
			return "the function jumps through a register (a jump table)";
		to = e.fixup ? fixup_at(pc) : pc + e.target;
		/* A jump label site's NOP: where it jumps once enabled. */
		if (e.len == 4 && e.flow == FLOW_STOP && !e.reads && !e.writes)
			to = kprobe_jump_label_target(pc) ?: pc;
		if (to != pc && to > lo && to < hi)
			return "a jump, a jump label or a fault's fix-up lands inside the region";
	}
	return NULL;
}
#endif
