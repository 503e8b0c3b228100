/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The return trampoline of arm64 kretprobes (see kretprobe.c).
 */

#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>
#include <asm/ptrace.h>

	.text

/*
 * Reached by the hooked function's RET, on the caller's stack, with the
 * function's return value in x0-x7 (and x8). Its registers are saved as
 * a pt_regs for the handlers, with a frame record that unwinds to the
 * caller: the unwinder maps this address to the real return address.
 * The handlers may change the saved x0-x29; x30 and the PC are where the
 * call returns.
 */
SYM_CODE_START(__kretprobe_trampoline)
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]
	stp	x10, x11, [sp, #S_X10]
	stp	x12, x13, [sp, #S_X12]
	stp	x14, x15, [sp, #S_X14]
	stp	x16, x17, [sp, #S_X16]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	stp	x28, x29, [sp, #S_X28]
	add	x0, sp, #PT_REGS_SIZE
	stp	lr, x0, [sp, #S_LR]		/* x30, then sp */
	adr	x1, __kretprobe_trampoline
	/* A pt_regs of EL1h with the current flags and masks. */
	mrs	x2, nzcv
	mrs	x3, daif
	mov	x4, #PSR_MODE_EL1h
	orr	x2, x2, x3
	orr	x2, x2, x4
	stp	x1, x2, [sp, #S_PC]		/* pc, then pstate */
	stp	x29, x1, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME

	mov	x0, sp
	bl	kretprobe_return_handler
	mov	lr, x0

	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldp	x8, x9, [sp, #S_X8]
	ldp	x10, x11, [sp, #S_X10]
	ldp	x12, x13, [sp, #S_X12]
	ldp	x14, x15, [sp, #S_X14]
	ldp	x16, x17, [sp, #S_X16]
	ldp	x18, x19, [sp, #S_X18]
	ldp	x20, x21, [sp, #S_X20]
	ldp	x22, x23, [sp, #S_X22]
	ldp	x24, x25, [sp, #S_X24]
	ldp	x26, x27, [sp, #S_X26]
	ldp	x28, x29, [sp, #S_X28]
	add	sp, sp, #PT_REGS_SIZE
	ret
SYM_CODE_END(__kretprobe_trampoline)
NOKPROBE(__kretprobe_trampoline)
