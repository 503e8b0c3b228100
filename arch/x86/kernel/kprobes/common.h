/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __X86_KERNEL_KPROBES_COMMON_H
#define __X86_KERNEL_KPROBES_COMMON_H

#include <asm/frame.h>
#include <asm/asm.h>

/*
 * SAVE_REGS_STRING / RESTORE_REGS_STRING build and tear down a struct
 * pt_regs on the stack, for asm trampolines that call C with regs (the
 * rethook trampoline is one). The caller has already pushed ss, sp and
 * flags; SAVE_REGS_STRING reserves cs, ip and orig_ax and pushes the
 * general registers in pt_regs order, so that %rsp then points at a
 * pt_regs. RESTORE_REGS_STRING undoes it and leaves %rsp at flags.
 */
#ifdef CONFIG_X86_64
#define SAVE_REGS_STRING		\
	"	subq $24, %rsp\n"	\
	"	pushq %rdi\n"		\
	"	pushq %rsi\n"		\
	"	pushq %rdx\n"		\
	"	pushq %rcx\n"		\
	"	pushq %rax\n"		\
	"	pushq %r8\n"		\
	"	pushq %r9\n"		\
	"	pushq %r10\n"		\
	"	pushq %r11\n"		\
	"	pushq %rbx\n"		\
	"	pushq %rbp\n"		\
	"	pushq %r12\n"		\
	"	pushq %r13\n"		\
	"	pushq %r14\n"		\
	"	pushq %r15\n"		\
	ENCODE_FRAME_POINTER

#define RESTORE_REGS_STRING		\
	"	popq %r15\n"		\
	"	popq %r14\n"		\
	"	popq %r13\n"		\
	"	popq %r12\n"		\
	"	popq %rbp\n"		\
	"	popq %rbx\n"		\
	"	popq %r11\n"		\
	"	popq %r10\n"		\
	"	popq %r9\n"		\
	"	popq %r8\n"		\
	"	popq %rax\n"		\
	"	popq %rcx\n"		\
	"	popq %rdx\n"		\
	"	popq %rsi\n"		\
	"	popq %rdi\n"		\
	"	addq $24, %rsp\n"
#else
#error "kprobes: only x86-64 is supported"
#endif

#endif /* __X86_KERNEL_KPROBES_COMMON_H */
