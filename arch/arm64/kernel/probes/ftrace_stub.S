/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 kprobes at ftrace sites: the callback ftrace calls (see
 * ftrace_entry.c).
 */

#include <linux/cfi_types.h>
#include <linux/linkage.h>
#include <asm/assembler.h>

	.text

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
