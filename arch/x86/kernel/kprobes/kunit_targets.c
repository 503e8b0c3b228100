// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The targets of the x86-64 kprobes KUnit cases: functions written in
 * assembly, one probed instruction kind each, and the C functions and
 * data around them (kunit_targets.h says what each is).
 */

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/bug.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/nospec-branch.h>
#include <asm/text-patching.h>
#include <asm/ibt.h>
#include <asm/smap.h>
#include <asm/orc_types.h>
#include <asm/irqflags.h>
#include <asm/alternative.h>

#include "kunit_targets.h"

/*
 * The tests of listed sites and of the instruction decoder are x86's:
 * they name the bytes each site is made of.
 *
 * Sites the kernel lists in tables (a static call, a WARN's ud2): notrace,
 * so that the only refusal in each is that site.
 */
static int kpt_static_call_target(int v)
{
	return v + 1;
}

DEFINE_STATIC_CALL(kpt_static_call, kpt_static_call_target);

noinline notrace int kpt_static_call_fn(int v)
{
	return static_call(kpt_static_call)(v) * 2;	/* not a tail call */
}

/*
 * A static call whose target is "return 0": its inline site is written
 * as xor %eax,%eax with three cs prefixes, which static_call_update()
 * must find again.
 */
static int kpt_sc_ret0_target(int v)
{
	return v + 1;
}

DEFINE_STATIC_CALL_RET0(kpt_sc_ret0, kpt_sc_ret0_target);

noinline notrace int kpt_sc_ret0_fn(int v)
{
	return static_call(kpt_sc_ret0)(v) * 2 + v;	/* not a tail call */
}

noinline notrace u32 kpt_warn_fn(u32 v)
{
	WARN_ON_ONCE(v == 0xdead);
	return v + 1;
}

#define KPT_RET ANNOTATE_RETPOLINE_SAFE "ret\n"
/*
 * The assembly targets are only ever called directly: they have no ENDBR,
 * and objtool is told that taking their address (as a probe address) is
 * not an indirect call target.
 */
#define KPT_FUNC(name) ".globl " #name "\n.type " #name ", @function\n" #name ":\n" \
	ANNOTATE_NOENDBR
#define KPT_END(name) ".size " #name ", .-" #name "\n"

/* Referred to by name from the asm below. */
unsigned long kpt_rip_data = 0x1234567890abcdefUL;
kpt_fn_t kpt_fnptr;

/* The assembly targets are declared in kunit_targets.h. */
STACK_FRAME_NON_STANDARD(kpt_unsupported);
/* Its int3 is a trap objtool takes for a dead end. */
STACK_FRAME_NON_STANDARD(kpt_foreign_int3);
NOKPROBE_SYMBOL(kpt_forbidden);

/* Called through a pointer: a C function, with its ENDBR under IBT. */
noinline unsigned long kpt_c_add1(unsigned long x)
{
	return x + 1;
}

static unsigned long (*kpt_add1_ptr)(unsigned long) __used = kpt_c_add1;

#ifdef CONFIG_JUMP_LABEL
DEFINE_STATIC_KEY_FALSE(kpt_jl_key);
DEFINE_STATIC_KEY_FALSE(kpt_jl_into_key);
DEFINE_STATIC_KEY_FALSE(kpt_jl_call_key);
#endif

/* The breakpoint path's instruction kinds, and those no probe may go on. */
asm(".pushsection .text\n"
	KPT_FUNC(kpt_rip_load)
	"	movq kpt_rip_data(%rip), %rax\n"
	KPT_RET
	KPT_END(kpt_rip_load)

	KPT_FUNC(kpt_leaf)
	"	movl $42, %eax\n"
	KPT_RET
	KPT_END(kpt_leaf)

	KPT_FUNC(kpt_call)
	"	call kpt_leaf\n"
	"	addq $1, %rax\n"
	KPT_RET
	KPT_END(kpt_call)

	KPT_FUNC(kpt_jmp)
	"	jmp 1f\n"
	"2:	" KPT_RET
	"1:	movl $2, %eax\n"
	"	jmp 2b\n"
	KPT_END(kpt_jmp)

	KPT_FUNC(kpt_jcc)
	"	testl %edi, %edi\n"
	"	jz 1f\n"
	"	movl $10, %eax\n"
	KPT_RET
	"1:	movl $20, %eax\n"
	KPT_RET
	KPT_END(kpt_jcc)

	/* Never called: 256 one-byte instructions for the index tests. */
	KPT_FUNC(kpt_ret)
	"	movl $7, %eax\n"
	KPT_RET
	KPT_END(kpt_ret)

	KPT_FUNC(kpt_ret_alt)
	"	movl $9, %eax\n"
	KPT_RET
	KPT_END(kpt_ret_alt)

	KPT_FUNC(kpt_pushpop)
	"	pushq %rbx\n"
	"	movq %rdi, %rbx\n"
	"	leaq 1(%rbx), %rax\n"
	"	popq %rbx\n"
	KPT_RET
	KPT_END(kpt_pushpop)

	KPT_FUNC(kpt_loop)
	"	movq %rdi, %rcx\n"
	"	xorl %eax, %eax\n"
	"1:	incl %eax\n"
	"	loop 1b\n"
	KPT_RET
	KPT_END(kpt_loop)

	KPT_FUNC(kpt_callind)
	"	movq %rdi, %rax\n"
	ANNOTATE_RETPOLINE_SAFE
	"	call *%rax\n"
	"	addq $1, %rax\n"
	KPT_RET
	KPT_END(kpt_callind)

	KPT_FUNC(kpt_callmem)
	ANNOTATE_RETPOLINE_SAFE
	"	call *kpt_fnptr(%rip)\n"
	"	addq $2, %rax\n"
	KPT_RET
	KPT_END(kpt_callmem)

	KPT_FUNC(kpt_pushf)
	"	pushfq\n"
	"	popq %rax\n"
	KPT_RET
	KPT_END(kpt_pushf)

	KPT_FUNC(kpt_fault_load)
	"	movq $-1, %rax\n"
	"1:	movq (%rdi), %rax\n"
	"2:	" KPT_RET
	_ASM_EXTABLE(1b, 2b)
	KPT_END(kpt_fault_load)

	KPT_FUNC(kpt_unsupported)
	"	int3\n"
	"	ud2\n"
	"	hlt\n"
	"	iretq\n"
	"	syscall\n"
	"	sysretq\n"
	"	lretl\n"
	"	int $0x80\n"
	KPT_END(kpt_unsupported)
	".popsection\n");

/*
 * Boosting and the optimizer's regions. Separate asm() statements keep
 * each string short enough for sparse.
 */
asm(".pushsection .text\n"
	KPT_FUNC(kpt_inc)
	"	movq %rdi, %rax\n"
	"	incq %rax\n"
	KPT_RET
	KPT_END(kpt_inc)

	KPT_FUNC(kpt_add1)
	"	leaq 1(%rdi), %rax\n"
	KPT_RET
	KPT_END(kpt_add1)

	KPT_FUNC(kpt_opt_jcc)
	"	testl %edi, %edi\n"
	"	jz 1f\n"
	"	leaq 3(%rdi), %rax\n"
	KPT_RET
	"1:	movl $7, %eax\n"
	KPT_RET
	KPT_END(kpt_opt_jcc)

	KPT_FUNC(kpt_opt_call)
	"	pushq %rbx\n"
	"	movq %rdi, %rbx\n"
	"	call kpt_add1\n"
	"	addq %rbx, %rax\n"
	"	popq %rbx\n"
	KPT_RET
	KPT_END(kpt_opt_call)

	KPT_FUNC(kpt_opt_tail)
	"	leaq 2(%rdi), %rdi\n"
	"	jmp kpt_add1\n"
	KPT_END(kpt_opt_tail)

	KPT_FUNC(kpt_opt_callmem)
	"	pushq %rbx\n"
	"	movq %rdi, %rbx\n"
	ANNOTATE_RETPOLINE_SAFE
	"	call *kpt_add1_ptr(%rip)\n"
	"	addq %rbx, %rax\n"
	"	popq %rbx\n"
	KPT_RET
	KPT_END(kpt_opt_callmem)

	KPT_FUNC(kpt_opt_tailind)
	"	movq %rdi, %rax\n"
	"	addq $2, %rdi\n"
	ANNOTATE_RETPOLINE_SAFE
	"	jmp *kpt_add1_ptr(%rip)\n"
	KPT_END(kpt_opt_tailind)

	KPT_FUNC(kpt_opt_retpad)
	"	movl %edi, %eax\n"
	"	incl %eax\n"
	KPT_RET
	"	int3\n	int3\n	int3\n"
	KPT_END(kpt_opt_retpad)

	KPT_FUNC(kpt_opt_callpad)
	"	pushq %rbx\n"
	ANNOTATE_RETPOLINE_SAFE
	"	call *%rsi\n"
	"	nopl (%rax)\n"
	"	popq %rbx\n"
	KPT_RET
	KPT_END(kpt_opt_callpad)

	KPT_FUNC(kpt_opt_ret)
	"	movl %edi, %eax\n"
	"	incl %eax\n"
	KPT_RET
	KPT_END(kpt_opt_ret)

	KPT_FUNC(kpt_opt)
	"	movq %rdi, %rax\n"
	"	addq $5, %rax\n"
	"	addq $1, %rax\n"
	KPT_RET
	KPT_END(kpt_opt)

	KPT_FUNC(kpt_opt_many)
	"	xorl %eax, %eax\n"
	"	.rept " __stringify(OPT_BATCH) "\n"
	"	addl $1000, %eax\n"
	"	.endr\n"
	KPT_RET
	KPT_END(kpt_opt_many)
	".popsection\n");

/* Blacklisted pieces, exception table entries, listed sites. */
asm(".pushsection .text\n"
	/*
	 * kpt_forbidden (NOKPROBE) and the pieces a compiler would split
	 * off it or specialize it into; kpt_allowed.cold, a piece of a
	 * function that may be probed.
	 */
	KPT_FUNC(kpt_forbidden)
	"	testl %edi, %edi\n"
	"	jz kpt_forbidden.cold\n"
	"	movl $1, %eax\n"
	KPT_RET
	KPT_END(kpt_forbidden)
	KPT_FUNC(kpt_forbidden.cold)
	"	movl $2, %eax\n"
	KPT_RET
	KPT_END(kpt_forbidden.cold)
	KPT_FUNC(kpt_forbidden.isra.0)
	"	movl $3, %eax\n"
	KPT_RET
	KPT_END(kpt_forbidden.isra.0)
	KPT_FUNC(kpt_forbidden.constprop.0)
	"	movl $4, %eax\n"
	KPT_RET
	KPT_END(kpt_forbidden.constprop.0)
	KPT_FUNC(kpt_forbidden.part.0)
	"	movl $5, %eax\n"
	KPT_RET
	KPT_END(kpt_forbidden.part.0)
	KPT_FUNC(kpt_allowed)
	"	testl %edi, %edi\n"
	"	jz kpt_allowed.cold\n"
	"	movl $6, %eax\n"
	KPT_RET
	KPT_END(kpt_allowed)
	KPT_FUNC(kpt_allowed.cold)
	"	movl $7, %eax\n"
	KPT_RET
	KPT_END(kpt_allowed.cold)

#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	/* objtool lists the jnz as a static call site (a conditional tail call). */
	KPT_FUNC(kpt_sc_jcc)
	"	testl %edi, %edi\n"
	"	jnz " STATIC_CALL_TRAMP_STR(kpt_static_call) "\n"
	"	xorl %eax, %eax\n"
	KPT_RET
	KPT_END(kpt_sc_jcc)
#endif

	KPT_FUNC(kpt_cpuid)
	"	pushq %rbx\n"
	"	xorl %eax, %eax\n"
	"	xorl %ecx, %ecx\n"
	"	cpuid\n"
	"	popq %rbx\n"
	"	movl $3, %eax\n"
	KPT_RET
	KPT_END(kpt_cpuid)

	KPT_FUNC(kpt_ex_in)
	"1:	movq (%rdi), %rax\n"
	"	addq $1, %rax\n"
	"2:	" KPT_RET
	_ASM_EXTABLE(1b, 2b)
	KPT_END(kpt_ex_in)

	KPT_FUNC(kpt_zeropad)
	"1:	movq (%rdi), %rax\n"
	"2:	" KPT_RET
	_ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_ZEROPAD)
	KPT_END(kpt_zeropad)

	KPT_FUNC(kpt_ex_out)
	"	movq %rdi, %rax\n"
	"	addq $5, %rax\n"
	"1:	movq (%rsi), %rdx\n"
	"2:	" KPT_RET
	_ASM_EXTABLE(1b, 2b)
	KPT_END(kpt_ex_out)

	KPT_FUNC(kpt_farjmp)
	"	testq %rdi, %rdi\n"
	"	js 1f\n"
	"	movq %rdi, %rax\n"
	"	addq $5, %rax\n"
	"	addq $1, %rax\n"
	KPT_RET
	"1:	ljmp *(%rdi)\n"
	UNWIND_HINT(UNWIND_HINT_TYPE_FUNC, ORC_REG_SP, 8, 0)
	"	ud2\n"
	KPT_END(kpt_farjmp)

	KPT_FUNC(kpt_uaccess)
	ASM_STAC "\n"
	"	movq %rdi, %rax\n"
	"	addq $5, %rax\n"
	ASM_CLAC "\n"
	KPT_RET
	KPT_END(kpt_uaccess)

	KPT_FUNC(kpt_vmxoff)
	"	movl $1, %eax\n"
	"1:	vmxoff\n"
	"	xorl %eax, %eax\n"
	"2:	" KPT_RET
	_ASM_EXTABLE(1b, 2b)
	KPT_END(kpt_vmxoff)

	KPT_FUNC(kpt_mcsafe)
	"1:	movq (%rdi), %rax\n"
	"2:	" KPT_RET
	_ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_DEFAULT_MCE_SAFE)
	KPT_END(kpt_mcsafe)

	KPT_FUNC(kpt_foreign_int3)
	"	movl $5, %eax\n"
	"	int3\n"
	"	addl $1, %eax\n"
	KPT_RET
	KPT_END(kpt_foreign_int3)

	KPT_FUNC(kpt_lock_inc)
	"	" LOCK_PREFIX "incq (%rdi)\n"
	"	movq (%rdi), %rax\n"
	KPT_RET
	KPT_END(kpt_lock_inc)

#ifdef CONFIG_JUMP_LABEL
	KPT_FUNC(kpt_jl)
	"	movq %rdi, %rax\n"
	"1:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	KPT_RET
	"2:	addq $1, %rax\n"
	KPT_RET
	KPT_END(kpt_jl)
	/* struct jump_entry: code, target, key (bit 0 clear: off by default) */
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 2b - .\n"
	".quad kpt_jl_key - .\n"
	".popsection\n"

	KPT_FUNC(kpt_jl_into)
	"	movq %rdi, %rax\n"
	"1:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	subq $1, %rax\n"
	"2:	addq $1, %rax\n"
	KPT_RET
	KPT_END(kpt_jl_into)
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 2b - .\n"
	".quad kpt_jl_into_key - .\n"
	".popsection\n"

	KPT_FUNC(kpt_jl_call)
	"	pushq %rbx\n"
	ANNOTATE_RETPOLINE_SAFE
	"	call *%rsi\n"
	"1:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	popq %rbx\n"
	KPT_RET
	"2:	addq $1, %rax\n"
	"	popq %rbx\n"
	KPT_RET
	KPT_END(kpt_jl_call)
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 2b - .\n"
	".quad kpt_jl_call_key - .\n"
	".popsection\n"
#endif
	".popsection\n");
