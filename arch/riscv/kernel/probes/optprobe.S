/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The code of riscv optimized kprobes (see optimize.c): the detour
 * template each optimized site gets a copy of, and the common part every
 * detour calls.
 */

#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/asm-offsets.h>
#include <asm/csr.h>

/*
 * The detour, copied into a slot within AUIPC's reach of the site and
 * reached by the site's "auipc rd; jalr x0, rd". It saves t0 and t1 in
 * a pt_regs below sp, loads kprobe_optprobe_common's address, which is
 * out of a JAL's reach, and calls it with t0 as the link; the common
 * part saves the rest. Back from it, with the registers as the handlers
 * left them, it restores t0 and t1, frees the pt_regs and does what the
 * instructions the jump replaced do (the copy, build_copy() in
 * optimize.c), ending in "auipc rb; jalr x0, rb" back to the probed
 * code. optimize.c fills in those and the literals; the template itself
 * is never executed. Every
 * instruction is 4 bytes (no compression, no relaxation), so that
 * optimize.c and the common part find the parts at fixed offsets.
 */
/*
 * Where the literals are: from the AUIPC, for the detour's load, and from
 * its resume point, which the common part gets in t0. Numbers: the
 * assembler takes no label difference as a constant in relaxable code.
 * optimize.c checks the layout they follow from (TMPL_COPY_WORD,
 * TMPL_LIT_WORD).
 */
#define COMMON_FROM_BASE	132
#define OP_FROM_RESUME		112
#define ADDR_FROM_RESUME	128

	.pushsection .rodata, "a"
	.option	push
	.option	norvc
	.option	norelax
	.balign	8
SYM_DATA_START(kprobe_optprobe_tmpl)
	addi	sp, sp, -PT_SIZE_ON_STACK
	REG_S	t0, PT_T0(sp)
	REG_S	t1, PT_T1(sp)
.Lbase:
	auipc	t0, 0
	REG_L	t1, COMMON_FROM_BASE(t0)
	jalr	t0, 0(t1)
.Lresume:
	REG_L	t1, PT_T1(sp)
	REG_L	t0, PT_T0(sp)
	addi	sp, sp, PT_SIZE_ON_STACK
SYM_INNER_LABEL(kprobe_optprobe_tmpl_copy, SYM_L_GLOBAL)
	.fill	25, 4, 0		/* the copy, the jumps back */
	.balign	8
SYM_INNER_LABEL(kprobe_optprobe_tmpl_lit, SYM_L_GLOBAL)
.Lop:
	.dword	0			/* the site's struct optimized_kprobe */
.Lcommon:
	.dword	0			/* kprobe_optprobe_common */
.Laddr:
	.dword	0			/* the probed instruction's address */
SYM_DATA_END_LABEL(kprobe_optprobe_tmpl, SYM_L_GLOBAL, kprobe_optprobe_tmpl_end)
	.option	pop
	.popsection

/* A frame record ({fp, ra}) below the pt_regs, naming the probed instruction. */
#define RECORD		(2 * SZREG)

/*
 * Reached by the detour's JALR with t0 its resume point and t0, t1 of
 * the probed code saved in the pt_regs at sp. Completes the pt_regs as a
 * trap's would be at the probed instruction: the other registers, sp,
 * epc (the probe's address) and status (SPP set, SPIE the interrupts
 * the probed code has, which are left as they are), and a frame record
 * naming the probed instruction, so that a stack trace from a handler
 * goes on into the probed function. kprobe_optprobe_hit() runs the
 * handlers. The detour resumes with the registers as they left them (but
 * sp and gp, tp, which nothing may change); unless a pre_handler
 * redirected the hit (non-zero return): then the EBREAK at
 * kprobe_optprobe_redirect_ebreak has its handler
 * (kprobe_optprobe_redirect()) load every register and epc from the
 * pt_regs at sp, which its trap return can.
 */
SYM_CODE_START(kprobe_optprobe_common)
	REG_S	ra, PT_RA(sp)
	REG_S	gp, PT_GP(sp)
	REG_S	tp, PT_TP(sp)
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
	REG_S	a0, PT_ORIG_A0(sp)
	addi	t1, sp, PT_SIZE_ON_STACK
	REG_S	t1, PT_SP(sp)
	REG_L	t1, ADDR_FROM_RESUME(t0)
	REG_S	t1, PT_EPC(sp)
	csrr	t2, CSR_STATUS
	andi	t3, t2, SR_SIE
	slli	t3, t3, 4			/* SIE -> SPIE */
	andi	t2, t2, ~(SR_SPIE | SR_SIE)
	ori	t2, t2, SR_SPP
	or	t2, t2, t3
	REG_S	t2, PT_STATUS(sp)
	REG_S	zero, PT_BADADDR(sp)
	REG_S	zero, PT_CAUSE(sp)

	addi	sp, sp, -RECORD
	REG_S	s0, 0(sp)
	REG_S	t1, SZREG(sp)
	addi	s0, sp, RECORD
	mv	s1, t0				/* the call keeps s1 */
	REG_L	a0, OP_FROM_RESUME(t0)
	addi	a1, sp, RECORD
	call	kprobe_optprobe_hit
	addi	sp, sp, RECORD
	mv	t0, s1
	bnez	a0, .Lredirect

	REG_L	ra, PT_RA(sp)
	REG_L	t2, PT_T2(sp)
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
	REG_L	t3, PT_T3(sp)
	REG_L	t4, PT_T4(sp)
	REG_L	t5, PT_T5(sp)
	REG_L	t6, PT_T6(sp)
	jr	t0				/* the detour loads t0, t1 and sp */
.Lredirect:
SYM_INNER_LABEL(kprobe_optprobe_redirect_ebreak, SYM_L_GLOBAL)
	ebreak
SYM_CODE_END(kprobe_optprobe_common)
ASM_NOKPROBE(kprobe_optprobe_common)
