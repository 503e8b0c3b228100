/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trampoline of our ftrace_ops (see ftrace_entry.c). ftrace calls an
 * ops' own trampoline straight from a function's call site while that
 * ops is the only one tracing the function, so a probed entry comes here
 * without ftrace's generic code: this builds the pt_regs of the entry,
 * lets kprobe_ftrace_trampoline_hit() run the probe, and goes on past
 * the call site with the argument registers from regs, or, when a
 * pre_handler redirected, at regs->ip with every register from regs.
 *
 * On entry the stack holds the return address into the function (just
 * past its call site) and, above it, the function's own return address.
 */

#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/asm-offsets.h>
#include <asm/frame.h>
#include <asm/nospec-branch.h>
#include <asm/ptrace.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>

	.code64
	.section .text, "ax"

SYM_FUNC_START(kprobe_ftrace_trampoline)
	subq	$PTREGS_SIZE, %rsp
	movq	%rdi, RDI(%rsp)
	movq	%rsi, RSI(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rcx, RCX(%rsp)
	movq	%rax, RAX(%rsp)
	movq	%r8, R8(%rsp)
	movq	%r9, R9(%rsp)
	movq	%r10, R10(%rsp)
	movq	%r11, R11(%rsp)
	movq	%rbx, RBX(%rsp)
	movq	%rbp, RBP(%rsp)
	movq	%r12, R12(%rsp)
	movq	%r13, R13(%rsp)
	movq	%r14, R14(%rsp)
	movq	%r15, R15(%rsp)
	movq	$0, ORIG_RAX(%rsp)
	/* ip: where the function goes on, as ftrace's regs have it */
	movq	PTREGS_SIZE(%rsp), %rax
	movq	%rax, RIP(%rsp)
	movq	$__KERNEL_CS, CS(%rsp)
	pushfq
	popq	EFLAGS(%rsp)
	/* sp: the function's own, at its return address */
	leaq	PTREGS_SIZE+8(%rsp), %rax
	movq	%rax, RSP(%rsp)
	movq	$__KERNEL_DS, SS(%rsp)

	/*
	 * ftrace's call to us is a plain call: count it as a thunk would,
	 * once the flags are saved.
	 */
	CALL_DEPTH_ACCOUNT
	ENCODE_FRAME_POINTER
	movq	%rsp, %rdi
	call	kprobe_ftrace_trampoline_hit
	testb	%al, %al
	jnz	.Lredirected

	/*
	 * Past the call site, with the arguments as the handlers left them.
	 * The callee-saved registers are as they were (the C code saved
	 * them, but the frame pointer, which we pointed at the regs), and
	 * so are the flags, but for the arithmetic ones; r10 and r11 are
	 * dead at a function's entry, as ftrace's own trampolines assume.
	 */
#ifdef CONFIG_FRAME_POINTER
	movq	RBP(%rsp), %rbp
#endif
	movq	R9(%rsp), %r9
	movq	R8(%rsp), %r8
	movq	RAX(%rsp), %rax
	movq	RCX(%rsp), %rcx
	movq	RDX(%rsp), %rdx
	movq	RSI(%rsp), %rsi
	movq	RDI(%rsp), %rdi
	addq	$PTREGS_SIZE, %rsp
	/* objtool: the callee-saved registers stored above are intact. */
	UNWIND_HINT_FUNC
	RET

	/* A pre_handler chose where to go on: at regs->ip, with all of regs. */
.Lredirected:
	movq	RIP(%rsp), %rax
	movq	%rax, PTREGS_SIZE(%rsp)
	movq	R15(%rsp), %r15
	movq	R14(%rsp), %r14
	movq	R13(%rsp), %r13
	movq	R12(%rsp), %r12
	movq	RBP(%rsp), %rbp
	movq	RBX(%rsp), %rbx
	movq	R11(%rsp), %r11
	movq	R10(%rsp), %r10
	movq	R9(%rsp), %r9
	movq	R8(%rsp), %r8
	movq	RAX(%rsp), %rax
	movq	RCX(%rsp), %rcx
	movq	RDX(%rsp), %rdx
	movq	RSI(%rsp), %rsi
	movq	RDI(%rsp), %rdi
	addq	$PTREGS_SIZE, %rsp
	RET
SYM_FUNC_END(kprobe_ftrace_trampoline)
_ASM_NOKPROBE(kprobe_ftrace_trampoline)
/*
 * Its frame is a pt_regs, which ENCODE_FRAME_POINTER tells the frame
 * pointer unwinder, as ftrace's trampolines do: no frame of the usual
 * shape for objtool to find.
 */
STACK_FRAME_NON_STANDARD_FP(kprobe_ftrace_trampoline)
