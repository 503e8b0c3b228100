/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes at ftrace sites: our ftrace_ops' own trampoline, and the
 * callback ftrace calls when it calls others too (see ftrace_entry.c).
 */

#include <linux/cfi_types.h>
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/assembler.h>

	.text

/* The trampoline's frame: a pt_regs, then the caller's frame record. */
#define TRAMP_FRAME_SIZE	(PT_REGS_SIZE + 16)

/*
 * kprobe_ftrace_trampoline: ftrace_ops::trampoline of our ops, which a
 * function's "bl" calls at its entry while our ops alone traces it
 * ("mov x9, lr" before it: x9 is the function's lr, x30 the address
 * after the BL, every other register and sp the entry's). It builds the
 * entry's pt_regs, with two frame records for the unwinder, the
 * function's (as if it had made one) and its caller's; calls
 * kprobe_ftrace_trampoline_hit(regs, x30), which returns where the
 * function goes on; then puts back what a handler may change: x0-x8,
 * x19-x28, fp and lr (a kretprobe's return address). x18 is left alone
 * (the shadow call stack's pointer); x9-x17 hold nothing at an entry.
 * A RET to the resume address, as ftrace_caller's, needs no landing pad.
 */
SYM_CODE_START(kprobe_ftrace_trampoline)
	sub	sp, sp, #TRAMP_FRAME_SIZE
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]
	stp	xzr, xzr, [sp, #S_X10]			// x10-x17: 0, as
	stp	xzr, xzr, [sp, #S_X12]			// ftrace_entry.c says
	stp	xzr, xzr, [sp, #S_X14]
	stp	xzr, xzr, [sp, #S_X16]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	str	x28, [sp, #S_X28]
	stp	x29, x9, [sp, #S_FP]
	add	x10, sp, #TRAMP_FRAME_SIZE
	str	x10, [sp, #S_SP]
	stp	xzr, xzr, [sp, #S_SDEI_TTBR1]		// and pmr_save
	stp	xzr, xzr, [sp, #S_STACKFRAME + 16]	// lockdep_hardirqs, exit_rcu

	stp	x29, x9, [sp, #PT_REGS_SIZE]		// the caller's frame
	add	x29, sp, #PT_REGS_SIZE
	stp	x29, x30, [sp, #S_STACKFRAME]		// the function's
	add	x29, sp, #S_STACKFRAME

	mov	x0, sp
	mov	x1, x30
	bl	kprobe_ftrace_trampoline_hit
	mov	x9, x0

	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldr	x8, [sp, #S_X8]
	ldr	x19, [sp, #S_X18 + 8]
	ldp	x20, x21, [sp, #S_X20]
	ldp	x22, x23, [sp, #S_X22]
	ldp	x24, x25, [sp, #S_X24]
	ldp	x26, x27, [sp, #S_X26]
	ldp	x28, x29, [sp, #S_X28]
	ldr	x30, [sp, #S_LR]
	add	sp, sp, #TRAMP_FRAME_SIZE
	ret	x9
SYM_CODE_END(kprobe_ftrace_trampoline)
NOKPROBE(kprobe_ftrace_trampoline)

/*
 * void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
 *			      struct ftrace_ops *ops, struct ftrace_regs *fregs);
 *
 * ftrace_caller saves x0-x8, fp, lr, sp and pc in fregs, not x18-x28:
 * it need not, since C code keeps them. Save them here, where they are
 * still the probed function's when ftrace_caller called us itself (we
 * are the function's only ftrace user: fregs is then at our sp), so that
 * the handlers see them and may change x19-x28 as after a breakpoint.
 * Called through ftrace's list function instead, they are that
 * function's: kprobe_ftrace_hit() is told so.
 */
SYM_TYPED_FUNC_START(kprobe_ftrace_handler)
	stp	x29, x30, [sp, #-112]!
	mov	x29, sp
	stp	x18, x19, [sp, #16]
	stp	x20, x21, [sp, #32]
	stp	x22, x23, [sp, #48]
	stp	x24, x25, [sp, #64]
	stp	x26, x27, [sp, #80]
	str	x28, [sp, #96]

	add	x4, sp, #16			// x18-x28 as saved here
	add	x5, sp, #112
	cmp	x5, x3
	cset	w5, eq				// called by ftrace_caller itself
	bl	kprobe_ftrace_hit

	ldp	x18, x19, [sp, #16]
	ldp	x20, x21, [sp, #32]
	ldp	x22, x23, [sp, #48]
	ldp	x24, x25, [sp, #64]
	ldp	x26, x27, [sp, #80]
	ldr	x28, [sp, #96]
	ldp	x29, x30, [sp], #112
	ret
SYM_FUNC_END(kprobe_ftrace_handler)
NOKPROBE(kprobe_ftrace_handler)

/*
 * Where a pre_handler's return to the caller goes on from an ftrace site
 * (resume_pc() in ftrace_entry.c): x30 is the caller's return address,
 * or, when a direct trampoline called this as the function's body, the
 * trampoline's. BPF's calls the body with a RET; one that calls it with
 * a BLR finds the landing pad SYM_FUNC_START puts first under BTI.
 */
SYM_FUNC_START(kprobe_ftrace_return)
	ret
SYM_FUNC_END(kprobe_ftrace_return)
NOKPROBE(kprobe_ftrace_return)
