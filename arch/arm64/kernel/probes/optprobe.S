/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The code of arm64 optimized kprobes (see optimize.c): the detour
 * template each optimized site gets a copy of, and the common part every
 * detour calls.
 */

#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/brk-imm.h>
#include <asm/ptrace.h>

/*
 * The detour, copied into a slot within a B's reach of the site and
 * reached by the B that replaces the probed instruction. It saves the
 * two registers it needs to call kprobe_optprobe_common, which may be
 * out of a BL's reach, and the frame pointer and link register its call
 * overwrites, into a pt_regs below the stack pointer; the rest are
 * saved by the common part. Back from it, it restores them, frees the
 * pt_regs and runs the copy of the probed instruction, or the
 * instructions that do what it does at its address, and branches to
 * where the probed code goes on. optimize.c fills in those and the
 * literals; the template itself is never executed.
 */
	.pushsection .rodata, "a"
	.balign	8
SYM_DATA_START(kprobe_optprobe_tmpl)
	sub	sp, sp, #PT_REGS_SIZE
	stp	x16, x17, [sp, #S_X16]
	stp	x29, x30, [sp, #S_FP]
	ldr	x16, .Lop
	ldr	x17, .Lcommon
	blr	x17
.Lresume:
	ldp	x16, x17, [sp, #S_X16]
	ldp	x29, x30, [sp, #S_FP]
	add	sp, sp, #PT_REGS_SIZE
SYM_INNER_LABEL(kprobe_optprobe_tmpl_copy, SYM_L_GLOBAL)
	nop				/* the probed instruction, or what */
	nop				/* does the same here, and the B */
	nop				/* to where it goes on */
.Lop:
SYM_INNER_LABEL(kprobe_optprobe_tmpl_op, SYM_L_GLOBAL)
	.quad	0			/* the site's struct optimized_kprobe */
.Lcommon:
	.quad	0			/* kprobe_optprobe_common */
.Laddr:
	.quad	0			/* the probed instruction's address */
SYM_INNER_LABEL(kprobe_optprobe_tmpl_val, SYM_L_GLOBAL)
	.quad	0			/* a value the copy loads */
SYM_DATA_END_LABEL(kprobe_optprobe_tmpl, SYM_L_GLOBAL, kprobe_optprobe_tmpl_end)
	.popsection

/*
 * From the return address of the detour's call, where the probe's
 * address is: a number, since an assembler may not take a label
 * difference as a scaled load offset.
 */
#define ADDR_FROM_RESUME	40
	.if	.Laddr - .Lresume != ADDR_FROM_RESUME
	.error	"ADDR_FROM_RESUME is not where the template keeps the address"
	.endif

/*
 * Reached by the detour's BLR with x16 the site's struct optimized_kprobe,
 * x30 the detour's resume point, and x16, x17, x29 and x30 of the probed
 * code saved in the pt_regs at sp. Completes the pt_regs as an EL1
 * exception's would be at the probed instruction: the other registers,
 * sp, pc (the probe's address) and pstate (NZCV and DAIF as they are
 * now, EL1h), and a frame record naming the probed instruction. Then
 * kprobe_optprobe_hit() runs the handlers. The detour resumes with the
 * registers as the handlers left them (but for sp and pc) and NZCV from
 * the saved pstate; unless a pre_handler redirected the hit (non-zero
 * return): then every register and NZCV are loaded from the pt_regs,
 * and the BRK at kprobe_optprobe_redirect_brk has its handler
 * (kprobe_optprobe_redirect()) store the exact PSTATE the exception
 * saw in the pt_regs and return, with DAIF masked, to
 * kprobe_optprobe_redirect_eret.
 */
SYM_FUNC_START(kprobe_optprobe_common)
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]
	stp	x10, x11, [sp, #S_X10]
	stp	x12, x13, [sp, #S_X12]
	stp	x14, x15, [sp, #S_X14]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	str	x28, [sp, #S_X28]
	add	x0, sp, #PT_REGS_SIZE
	str	x0, [sp, #S_SP]
	ldr	x1, [x30, #ADDR_FROM_RESUME]
	mrs	x2, nzcv
	mrs	x3, daif
	mov	x4, #PSR_MODE_EL1h
	orr	x2, x2, x3
	orr	x2, x2, x4
	stp	x1, x2, [sp, #S_PC]		/* pc, then pstate */
	stp	x29, x1, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	mov	x0, x16
	mov	x1, sp
	mov	x19, x30			/* the call keeps x19 */
	bl	kprobe_optprobe_hit
	mov	x16, x0				/* non-zero: redirected */
	mov	x17, x19
	ldr	x0, [sp, #S_PSTATE]
	msr	nzcv, x0
	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldp	x8, x9, [sp, #S_X8]
	ldp	x10, x11, [sp, #S_X10]
	ldp	x12, x13, [sp, #S_X12]
	ldp	x14, x15, [sp, #S_X14]
	ldp	x18, x19, [sp, #S_X18]
	ldp	x20, x21, [sp, #S_X20]
	ldp	x22, x23, [sp, #S_X22]
	ldp	x24, x25, [sp, #S_X24]
	ldp	x26, x27, [sp, #S_X26]
	ldr	x28, [sp, #S_X28]
	cbnz	x16, .Lredirect
	/* The detour restores the other four. Its page is not guarded. */
	br	x17
.Lredirect:
	ldp	x16, x17, [sp, #S_X16]
	ldp	x29, x30, [sp, #S_FP]
SYM_INNER_LABEL(kprobe_optprobe_redirect_brk, SYM_L_GLOBAL)
	brk	#KPROBES_BRK_IMM
SYM_FUNC_END(kprobe_optprobe_common)
NOKPROBE(kprobe_optprobe_common)

/*
 * The end of a redirected hit, reached by the BRK's exception return
 * with DAIF masked, every register the handlers' and sp at the pt_regs
 * they wrote, whose pstate is the PSTATE the BRK saw (NZCV the
 * handlers'). An exception return at EL1 leaves sp as it is, so the
 * pt_regs is popped here, and the ERET goes to the handlers' pc with
 * that PSTATE. ELR and SPSR stay ours: nothing can be taken meanwhile.
 */
SYM_CODE_START(kprobe_optprobe_redirect_eret)
	stp	x0, x1, [sp, #-16]!
	ldp	x0, x1, [sp, #16 + S_PC]	/* pc, then pstate */
	msr	elr_el1, x0
	msr	spsr_el1, x1
	ldp	x0, x1, [sp], #16
	add	sp, sp, #PT_REGS_SIZE
	eret
	sb
SYM_CODE_END(kprobe_optprobe_redirect_eret)
NOKPROBE(kprobe_optprobe_redirect_eret)
