/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * riscv kprobes at ftrace sites: the trampoline ftrace calls while our
 * ftrace_ops alone traces a function, the callback it calls when others
 * trace it too, and the return stub (see ftrace_entry.c).
 */

#include <linux/cfi_types.h>
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/asm-offsets.h>

	.text

/*
 * The trampoline's frame: the entry's pt_regs, then two frame records
 * ({fp, ra}, each below the address it is the frame pointer of) so that
 * an unwinder inside a handler walks from the trampoline to the probed
 * function, then to its caller.
 */
#define FN_RECORD	PT_SIZE_ON_STACK
#define CALLER_RECORD	(PT_SIZE_ON_STACK + 2 * SZREG)
#define TRAMP_FRAME	(PT_SIZE_ON_STACK + 4 * SZREG)

/*
 * kprobe_ftrace_trampoline: ftrace_ops::trampoline of our ops. A traced
 * function's first eight bytes, "auipc t0; jalr t0", call it: t0 holds
 * the address after them, ra the function's return address, every other
 * register and sp are the entry's. It saves them all as a pt_regs, calls
 * kprobe_ftrace_trampoline_hit(regs, t0), which returns where the
 * function goes on, and loads back what a handler may change: ra (a
 * kretprobe's return hook), s0-s11 and a0-a7. gp and tp are never
 * written (the shadow call stack, current); t1-t6 hold nothing at an
 * entry, and t0 carries the resume address, as ftrace's call left it.
 */
SYM_CODE_START(kprobe_ftrace_trampoline)
	addi	sp, sp, -TRAMP_FRAME
	REG_S	ra, PT_RA(sp)
	REG_S	gp, PT_GP(sp)
	REG_S	tp, PT_TP(sp)
	REG_S	t0, PT_T0(sp)
	REG_S	t1, PT_T1(sp)
	REG_S	t2, PT_T2(sp)
	REG_S	s0, PT_S0(sp)
	REG_S	s1, PT_S1(sp)
	REG_S	a0, PT_A0(sp)
	REG_S	a1, PT_A1(sp)
	REG_S	a2, PT_A2(sp)
	REG_S	a3, PT_A3(sp)
	REG_S	a4, PT_A4(sp)
	REG_S	a5, PT_A5(sp)
	REG_S	a6, PT_A6(sp)
	REG_S	a7, PT_A7(sp)
	REG_S	s2, PT_S2(sp)
	REG_S	s3, PT_S3(sp)
	REG_S	s4, PT_S4(sp)
	REG_S	s5, PT_S5(sp)
	REG_S	s6, PT_S6(sp)
	REG_S	s7, PT_S7(sp)
	REG_S	s8, PT_S8(sp)
	REG_S	s9, PT_S9(sp)
	REG_S	s10, PT_S10(sp)
	REG_S	s11, PT_S11(sp)
	REG_S	t3, PT_T3(sp)
	REG_S	t4, PT_T4(sp)
	REG_S	t5, PT_T5(sp)
	REG_S	t6, PT_T6(sp)
	addi	t1, sp, TRAMP_FRAME
	REG_S	t1, PT_SP(sp)

	/*
	 * The caller's record holds its frame pointer (s0: the function
	 * has made no frame yet) and the return into it; the function's,
	 * the address after ftrace's call.
	 */
	REG_S	s0, CALLER_RECORD(sp)
	REG_S	ra, (CALLER_RECORD + SZREG)(sp)
	REG_S	t1, FN_RECORD(sp)
	REG_S	t0, (FN_RECORD + SZREG)(sp)
	addi	s0, sp, CALLER_RECORD

	mv	a0, sp
	mv	a1, t0
	call	kprobe_ftrace_trampoline_hit
	mv	t0, a0

	REG_L	ra, PT_RA(sp)
	REG_L	s0, PT_S0(sp)
	REG_L	s1, PT_S1(sp)
	REG_L	a0, PT_A0(sp)
	REG_L	a1, PT_A1(sp)
	REG_L	a2, PT_A2(sp)
	REG_L	a3, PT_A3(sp)
	REG_L	a4, PT_A4(sp)
	REG_L	a5, PT_A5(sp)
	REG_L	a6, PT_A6(sp)
	REG_L	a7, PT_A7(sp)
	REG_L	s2, PT_S2(sp)
	REG_L	s3, PT_S3(sp)
	REG_L	s4, PT_S4(sp)
	REG_L	s5, PT_S5(sp)
	REG_L	s6, PT_S6(sp)
	REG_L	s7, PT_S7(sp)
	REG_L	s8, PT_S8(sp)
	REG_L	s9, PT_S9(sp)
	REG_L	s10, PT_S10(sp)
	REG_L	s11, PT_S11(sp)
	addi	sp, sp, TRAMP_FRAME
	jr	t0
SYM_CODE_END(kprobe_ftrace_trampoline)
ASM_NOKPROBE(kprobe_ftrace_trampoline)

/*
 * The callback's frame: s0-s11 as an array kprobe_ftrace_hit() reads and
 * may rewrite, then a frame record, rounded up to the stack's alignment.
 */
#define SAVED_REGS	0
#define CB_RECORD	(12 * SZREG)
#define CB_FRAME	((14 * SZREG + 15) & ~15)

/*
 * void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
 *			      struct ftrace_ops *ops, struct ftrace_regs *fregs);
 *
 * ftrace_caller keeps a0-a7, ra, sp, the resume address and (with the
 * graph tracer's frame test) s0 in fregs; s1-s11 it need not keep, as
 * the C code it calls preserves them. They are still the probed
 * function's here when ftrace_caller called us itself, which is when
 * fregs is at our sp: save them where kprobe_ftrace_hit() can read and
 * change them, and tell it whether they are the function's. Through
 * ftrace's list function they are that function's.
 */
SYM_TYPED_FUNC_START(kprobe_ftrace_handler)
	addi	sp, sp, -CB_FRAME
	REG_S	s0, (SAVED_REGS + 0 * SZREG)(sp)
	REG_S	s1, (SAVED_REGS + 1 * SZREG)(sp)
	REG_S	s2, (SAVED_REGS + 2 * SZREG)(sp)
	REG_S	s3, (SAVED_REGS + 3 * SZREG)(sp)
	REG_S	s4, (SAVED_REGS + 4 * SZREG)(sp)
	REG_S	s5, (SAVED_REGS + 5 * SZREG)(sp)
	REG_S	s6, (SAVED_REGS + 6 * SZREG)(sp)
	REG_S	s7, (SAVED_REGS + 7 * SZREG)(sp)
	REG_S	s8, (SAVED_REGS + 8 * SZREG)(sp)
	REG_S	s9, (SAVED_REGS + 9 * SZREG)(sp)
	REG_S	s10, (SAVED_REGS + 10 * SZREG)(sp)
	REG_S	s11, (SAVED_REGS + 11 * SZREG)(sp)
	REG_S	s0, CB_RECORD(sp)
	REG_S	ra, (CB_RECORD + SZREG)(sp)
	addi	s0, sp, (CB_RECORD + 2 * SZREG)

	addi	a4, sp, SAVED_REGS
	addi	a5, sp, CB_FRAME
	sub	a5, a5, a3
	seqz	a5, a5				/* called by ftrace_caller itself */
	call	kprobe_ftrace_hit

	REG_L	s0, (SAVED_REGS + 0 * SZREG)(sp)
	REG_L	s1, (SAVED_REGS + 1 * SZREG)(sp)
	REG_L	s2, (SAVED_REGS + 2 * SZREG)(sp)
	REG_L	s3, (SAVED_REGS + 3 * SZREG)(sp)
	REG_L	s4, (SAVED_REGS + 4 * SZREG)(sp)
	REG_L	s5, (SAVED_REGS + 5 * SZREG)(sp)
	REG_L	s6, (SAVED_REGS + 6 * SZREG)(sp)
	REG_L	s7, (SAVED_REGS + 7 * SZREG)(sp)
	REG_L	s8, (SAVED_REGS + 8 * SZREG)(sp)
	REG_L	s9, (SAVED_REGS + 9 * SZREG)(sp)
	REG_L	s10, (SAVED_REGS + 10 * SZREG)(sp)
	REG_L	s11, (SAVED_REGS + 11 * SZREG)(sp)
	REG_L	ra, (CB_RECORD + SZREG)(sp)
	addi	sp, sp, CB_FRAME
	ret
SYM_FUNC_END(kprobe_ftrace_handler)
ASM_NOKPROBE(kprobe_ftrace_handler)

/*
 * Where a pre_handler's return to the caller goes on from an ftrace site
 * (resume_pc() in ftrace_entry.c): ra is the caller's return address or,
 * when a direct trampoline (BPF's) called this as the function's body,
 * the trampoline's.
 */
SYM_FUNC_START(kprobe_ftrace_return)
	ret
SYM_FUNC_END(kprobe_ftrace_return)
ASM_NOKPROBE(kprobe_ftrace_return)
