/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __X86_KERNEL_KPROBES_COMMON_H
#define __X86_KERNEL_KPROBES_COMMON_H

#include <asm/frame.h>
#include <asm/asm.h>

/*
 * For asm trampolines that call C with a struct pt_regs: the tree's
 * rethook trampoline (arch/x86/kernel/rethook.c) is one, and it is built
 * on 32-bit kernels too, where kprobes themselves are not (see
 * arch/x86/Kconfig). The caller has pushed ss, sp and flags: those are
 * the top three words of the pt_regs. SAVE_REGS_STRING makes room for
 * the rest in one step and stores the general registers at their
 * pt_regs offsets, leaving cs, ip and orig_ax for the caller to fill in;
 * the stack pointer then points at the pt_regs. RESTORE_REGS_STRING
 * reloads the general registers and leaves the stack pointer at the
 * saved flags.
 */
#ifdef CONFIG_X86_64
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
#else
/*
 * 7 registers, ds, es, fs, gs, orig_ax, ip, cs. Segment registers are
 * 16 bits in pt_regs; gs is left for the caller (rethook zeroes it),
 * and none of them is reloaded: kernel code does not change them.
 */
#define KPROBE_PT_REGS_SPACE	"56"

#define SAVE_REGS_STRING				\
	"	subl $" KPROBE_PT_REGS_SPACE ", %esp\n"	\
	"	movl %ebx, 0x00(%esp)\n"			\
	"	movl %ecx, 0x04(%esp)\n"			\
	"	movl %edx, 0x08(%esp)\n"			\
	"	movl %esi, 0x0c(%esp)\n"			\
	"	movl %edi, 0x10(%esp)\n"			\
	"	movl %ebp, 0x14(%esp)\n"			\
	"	movl %eax, 0x18(%esp)\n"			\
	"	movw %ds,  0x1c(%esp)\n"			\
	"	movw %es,  0x20(%esp)\n"			\
	"	movw %fs,  0x24(%esp)\n"			\
	ENCODE_FRAME_POINTER

#define RESTORE_REGS_STRING				\
	"	movl 0x00(%esp), %ebx\n"			\
	"	movl 0x04(%esp), %ecx\n"			\
	"	movl 0x08(%esp), %edx\n"			\
	"	movl 0x0c(%esp), %esi\n"			\
	"	movl 0x10(%esp), %edi\n"			\
	"	movl 0x14(%esp), %ebp\n"			\
	"	movl 0x18(%esp), %eax\n"			\
	"	addl $" KPROBE_PT_REGS_SPACE ", %esp\n"
#endif

struct insn;
struct arch_specific_insn;

/*
 * Shared by breakpoint.c and optimize.c. kprobe_read_original() reads
 * the text under kprobe_mutex, kprobe_insn_may_be_listed_site()'s answer
 * holds while text_mutex is held; the others use their arguments only.
 */
int kprobe_read_original(u8 *buf, unsigned long addr);
bool kprobe_insn_may_be_listed_site(struct insn *insn);
int kprobe_classify_insn(struct insn *insn, struct arch_specific_insn *ai);
int kprobe_copy_insn(u8 *dst, struct insn *insn, const u8 *buf,
		     unsigned long from, unsigned long at);

/* funcmap.c: what decoding the whole function says; see there. */
int kprobe_insn_boundary(unsigned long addr);
int kprobe_region_check(unsigned long start, unsigned long end);

#ifdef CONFIG_OPTPROBES
/* The labels of the detour template (optimize.c), to copy it from. */
extern const u8 optprobe_tmpl_save[], optprobe_tmpl_clac[], optprobe_tmpl_op[],
	optprobe_tmpl_call[], optprobe_tmpl_jnz[], optprobe_tmpl_restore[],
	optprobe_tmpl_redirect[], optprobe_tmpl_end[];

void optprobe_restore_original(u8 *buf, unsigned long addr, int len);
void optprobe_text_applied(void);
#else
static inline void optprobe_restore_original(u8 *buf, unsigned long addr, int len)
{
}

static inline void optprobe_text_applied(void)
{
}
#endif

#endif /* __X86_KERNEL_KPROBES_COMMON_H */
