/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __X86_KERNEL_KPROBES_COMMON_H
#define __X86_KERNEL_KPROBES_COMMON_H

#include <asm/frame.h>
#include <asm/asm.h>

#ifndef CONFIG_X86_64
#error "kprobes: only x86-64 is supported"
#endif

/*
 * For asm trampolines that call C with a struct pt_regs (the rethook
 * trampoline is one). The caller has pushed ss, sp and flags: those are
 * the top three words of the pt_regs. SAVE_REGS_STRING makes room for
 * the rest in one step and stores the general registers at their
 * pt_regs offsets, leaving cs, ip and orig_ax for the caller to fill in;
 * %rsp then points at the pt_regs. RESTORE_REGS_STRING reloads them and
 * leaves %rsp pointing at the saved flags.
 */
#define KPROBE_PT_REGS_SPACE	"144"	/* 15 registers, orig_ax, ip, cs */

#define SAVE_REGS_STRING				\
	"	subq $" KPROBE_PT_REGS_SPACE ", %rsp\n"	\
	"	movq %r15, 0x00(%rsp)\n"			\
	"	movq %r14, 0x08(%rsp)\n"			\
	"	movq %r13, 0x10(%rsp)\n"			\
	"	movq %r12, 0x18(%rsp)\n"			\
	"	movq %rbp, 0x20(%rsp)\n"			\
	"	movq %rbx, 0x28(%rsp)\n"			\
	"	movq %r11, 0x30(%rsp)\n"			\
	"	movq %r10, 0x38(%rsp)\n"			\
	"	movq %r9,  0x40(%rsp)\n"			\
	"	movq %r8,  0x48(%rsp)\n"			\
	"	movq %rax, 0x50(%rsp)\n"			\
	"	movq %rcx, 0x58(%rsp)\n"			\
	"	movq %rdx, 0x60(%rsp)\n"			\
	"	movq %rsi, 0x68(%rsp)\n"			\
	"	movq %rdi, 0x70(%rsp)\n"			\
	ENCODE_FRAME_POINTER

#define RESTORE_REGS_STRING				\
	"	movq 0x00(%rsp), %r15\n"			\
	"	movq 0x08(%rsp), %r14\n"			\
	"	movq 0x10(%rsp), %r13\n"			\
	"	movq 0x18(%rsp), %r12\n"			\
	"	movq 0x20(%rsp), %rbp\n"			\
	"	movq 0x28(%rsp), %rbx\n"			\
	"	movq 0x30(%rsp), %r11\n"			\
	"	movq 0x38(%rsp), %r10\n"			\
	"	movq 0x40(%rsp), %r9\n"			\
	"	movq 0x48(%rsp), %r8\n"			\
	"	movq 0x50(%rsp), %rax\n"			\
	"	movq 0x58(%rsp), %rcx\n"			\
	"	movq 0x60(%rsp), %rdx\n"			\
	"	movq 0x68(%rsp), %rsi\n"			\
	"	movq 0x70(%rsp), %rdi\n"			\
	"	addq $" KPROBE_PT_REGS_SPACE ", %rsp\n"

struct insn;
struct arch_specific_insn;

/* Shared by core.c and opt.c; all called with kprobe_mutex held. */
int kprobe_read_original(u8 *buf, unsigned long addr);
bool kprobe_insn_boundary(unsigned long addr);
bool kprobe_insn_may_be_listed_site(struct insn *insn);
int kprobe_classify_insn(struct insn *insn, struct arch_specific_insn *ai);
int kprobe_copy_insn(u8 *dst, struct insn *insn, const u8 *buf,
		     unsigned long from, unsigned long at);

#ifdef CONFIG_OPTPROBES
void optprobe_restore_original(u8 *buf, unsigned long addr, int len);
#else
static inline void optprobe_restore_original(u8 *buf, unsigned long addr, int len)
{
}
#endif

#endif /* __X86_KERNEL_KPROBES_COMMON_H */
