// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for kprobes and kretprobes.
 *
 * The probe targets are small functions in this file. The x86-64 and
 * arm64 ones are written in assembly so that the probed instruction is
 * known exactly (a RIP-relative load, a call, a b.cond, ...); they have
 * no ftrace site, so they take the breakpoint path. The C targets start with an ftrace site
 * when the kernel has one, so probes at their entry take the ftrace path.
 * Built as a module, every target is module text.
 *
 * Every case runs on every architecture but those about an
 * architecture's own code, which need hand-written instructions:
 *
 * - x86-64's (CONFIG_X86_64 below): instruction kinds, boosting, the
 *   optimizer, ENDBR and __pfx_ preambles, the sites the kernel lists
 *   (static calls, jump labels).
 * - arm64's (CONFIG_ARM64 below), for our own arm64 code: the
 *   instructions it simulates (one BRK trap a hit) and those it steps out
 *   of line (two: the probe's and the one ending the step), counted with
 *   kprobe_brk_traps; the ones it refuses; redirecting, the interrupt
 *   mask, nested hits, a kretprobe on a function signing its return
 *   address (paciasp), one batch of probes.
 *
 * The other architectures run the tree's arch code, which the tree's own
 * tests cover.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#include <linux/ftrace.h>
#include <linux/vmalloc.h>
#include <linux/time.h>
#include <linux/time64.h>
#include <linux/timer.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/bug.h>
#include <linux/kallsyms.h>
#include <linux/objtool.h>
#include <linux/hw_breakpoint.h>
#include <linux/kdebug.h>
#include <kunit/test.h>

#ifdef CONFIG_X86_64
#include <asm/asm.h>
#include <asm/nospec-branch.h>
#include <asm/text-patching.h>
#include <asm/ibt.h>
#include <asm/smap.h>
#include <asm/orc_types.h>
#include <asm/irqflags.h>
#include <asm/alternative.h>

#include "test_kprobes.h"
#endif

#ifdef CONFIG_ARM64
#include <asm/asm-extable.h>
#include <linux/cpufeature.h>
#include <asm/ptrace.h>
#endif

#define DIV_FACTOR 3

static struct kunit *cur_test;
static u32 rand1;
static atomic_t pre_hits, post_hits, pre2_hits, post2_hits;

/*
 * Handlers run with interrupts off, where a failing KUNIT_EXPECT (which
 * allocates) is not allowed: they count failed checks here instead, and
 * each test case checks the count when it ends.
 */
static atomic_t handler_errors;
static int handler_error_line;

#define HANDLER_CHECK(cond)					\
	do {							\
		if (!(cond)) {					\
			atomic_inc(&handler_errors);		\
			WRITE_ONCE(handler_error_line, __LINE__); \
		}						\
	} while (0)

static void reset_counts(void)
{
	atomic_set(&pre_hits, 0);
	atomic_set(&post_hits, 0);
	atomic_set(&pre2_hits, 0);
	atomic_set(&post2_hits, 0);
}

/* ---- C targets (entry is the ftrace site where there is one) ------------- */

static noinline u32 kprobe_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 kprobe_target2(u32 value)
{
	return value / DIV_FACTOR + 1;
}

static noinline u32 kprobe_recursed_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 kprobe_redirect_alt(u32 value)
{
	return value + 1000;
}

/* Called through pointers set at run time, so the calls stay real calls. */
static u32 (*target)(u32);
static u32 (*target2)(u32);
static u32 (*recursed_target)(u32);

/* Same name as a static function of vmlinux: an ambiguous symbol. */
static noinline int __used kernel_init(void)
{
	return 0;
}

/* A module's own NOKPROBE_SYMBOL must be honoured. */
static noinline u32 kprobe_forbidden_target(u32 value)
{
	return value;
}
NOKPROBE_SYMBOL(kprobe_forbidden_target);

#ifdef CONFIG_X86_64
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

static noinline notrace int kpt_static_call_fn(int v)
{
	return static_call(kpt_static_call)(v) * 2;	/* not a tail call */
}

/*
 * A static call whose target is "return 0": its inline site is written
 * as xor %eax,%eax with three cs prefixes, which static_call_update()
 * must find again (review finding F2).
 */
static int kpt_sc_ret0_target(int v)
{
	return v + 1;
}

DEFINE_STATIC_CALL_RET0(kpt_sc_ret0, kpt_sc_ret0_target);

static noinline notrace int kpt_sc_ret0_fn(int v)
{
	return static_call(kpt_sc_ret0)(v) * 2 + v;	/* not a tail call */
}

static noinline notrace u32 kpt_warn_fn(u32 v)
{
	WARN_ON_ONCE(v == 0xdead);
	return v + 1;
}
#endif /* CONFIG_X86_64 */

/* ---- assembly targets: one probed instruction kind each ------------------- */

#ifdef CONFIG_X86_64
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
static unsigned long kpt_rip_data __used = 0x1234567890abcdefUL;
static unsigned long (*kpt_fnptr)(void) __used;

/* The assembly targets are declared in test_kprobes.h. */
STACK_FRAME_NON_STANDARD(kpt_unsupported);
/* Its int3 is a trap objtool takes for a dead end. */
STACK_FRAME_NON_STANDARD(kpt_foreign_int3);
NOKPROBE_SYMBOL(kpt_forbidden);

/* Called through a pointer: a C function, with its ENDBR under IBT. */
static noinline unsigned long kpt_c_add1(unsigned long x)
{
	return x + 1;
}

static unsigned long (*kpt_add1_ptr)(unsigned long) __used = kpt_c_add1;

/* What kpt_opt_many() is made of, and returns. */
#define OPT_BATCH 320
#define OPT_MANY_SUM (OPT_BATCH * 1000UL)

#ifdef CONFIG_JUMP_LABEL
static __used DEFINE_STATIC_KEY_FALSE(kpt_jl_key);
static __used DEFINE_STATIC_KEY_FALSE(kpt_jl_into_key);
static __used DEFINE_STATIC_KEY_FALSE(kpt_jl_call_key);
#endif

asm(
	".pushsection .text\n"
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
	KPT_FUNC(kpt_nop_sled)
	".rept 256\n	nop\n.endr\n"
	KPT_RET
	KPT_END(kpt_nop_sled)

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
	".popsection\n"
);
#endif /* CONFIG_X86_64 */

#ifdef CONFIG_ARM64
/*
 * The arm64 targets. Each probed instruction has a global label,
 * kpt64_*_probe, whose address the tests take: no offsets are counted.
 * The functions are called directly, so none starts with a BTI landing
 * pad; the targets of br and blr have one (bti is hint #34/#36, as are
 * paciasp #25 and autiasp #29: the assembler takes hints whatever its
 * -march). Internal branches go to local labels, resolved when
 * assembling: no relocation for the module loader to apply.
 *
 * Functions are 16-byte aligned: an adrp at +0 or +4 is then never at a
 * page offset of 0xff8 or 0xffc, where the module loader may rewrite it
 * (Cortex-A53 erratum 843419).
 */
#define KPT64_FUNC(name) ".globl " #name "\n.type " #name ", %function\n" \
	".balign 16\n" #name ":\n"
#define KPT64_END(name) ".size " #name ", .-" #name "\n"
#define KPT64_AT(name) ".globl " #name "\n" #name ":\n"

/* Read by the adrp of kpt64_adrp, by name. */
static u64 kpt64_adrp_data __used;

#ifdef CONFIG_JUMP_LABEL
/* The key of kpt64_jl's site, named by its __jump_table entry. */
static __used DEFINE_STATIC_KEY_FALSE(kpt64_jl_key);
#endif

asm(".pushsection .text, \"ax\"\n"

	/* b, simulated: returns 2 if the branch was taken */
	KPT64_FUNC(kpt64_b)
	KPT64_AT(kpt64_b_probe)
	"	b	1f\n"
	"	mov	x0, #1\n"
	"	ret\n"
	KPT64_AT(kpt64_b_to)
	"1:	mov	x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_b)

	/* Never called: 256 instructions for the index tests. */
	KPT64_FUNC(kpt_nop_sled)
	".rept 256\n	nop\n.endr\n"
	"	ret\n"
	KPT64_END(kpt_nop_sled)

	/* The callee of kpt64_bl: x + 1 */
	KPT64_FUNC(kpt64_leaf)
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_leaf)

	/* bl, simulated: x30 must be the bl's address + 4 for the callee to return */
	KPT64_FUNC(kpt64_bl)
	"	stp	x29, x30, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	KPT64_AT(kpt64_bl_probe)
	"	bl	kpt64_leaf\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	ret\n"
	KPT64_END(kpt64_bl)

	/*
	 * b.cond, simulated: kpt64_bcond(nzcv, cc) sets the flags from nzcv
	 * (bits 31:28), runs the b.<cc> at kpt64_bcond_probes + 8 * cc (the
	 * conditions in their encoding's order, eq to le) and returns 1 if it
	 * branched. The way there is a chain of cbz: no indirect branch, and
	 * nothing between that touches the flags.
	 */
	KPT64_FUNC(kpt64_bcond)
	"	mov	x2, x1\n"
	"	msr	nzcv, x0\n"
	"	mov	x0, #0\n"
	"	.irp	i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13\n"
	"	cbz	x2, 2f + 8 * \\i\n"
	"	sub	x2, x2, #1\n"
	"	.endr\n"
	"	ret\n"
	KPT64_AT(kpt64_bcond_probes)
	"2:\n"
	"	.irp	cond, eq, ne, hs, lo, mi, pl, vs, vc, hi, ls, ge, lt, gt, le\n"
	"	b.\\cond	1f\n"
	"	ret\n"
	"	.endr\n"
	KPT64_AT(kpt64_bcond_taken)
	"1:	mov	x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_bcond)

	/*
	 * cbz/cbnz on x1 and w1, simulated: each jumps over one orr, which
	 * sets bit n of the result when branch n is not taken.
	 */
	KPT64_FUNC(kpt64_cb)
	"	mov	x1, x0\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_cbz_x_probe)
	"	cbz	x1, 1f\n"
	"	orr	x0, x0, #1\n"
	KPT64_AT(kpt64_cbz_w_probe)
	"1:	cbz	w1, 2f\n"
	"	orr	x0, x0, #2\n"
	KPT64_AT(kpt64_cbnz_x_probe)
	"2:	cbnz	x1, 3f\n"
	"	orr	x0, x0, #4\n"
	KPT64_AT(kpt64_cbnz_w_probe)
	"3:	cbnz	w1, 4f\n"
	"	orr	x0, x0, #8\n"
	"4:	ret\n"
	KPT64_END(kpt64_cb)

	/* tbz/tbnz on bits 3 and 40, simulated: as kpt64_cb, one orr each */
	KPT64_FUNC(kpt64_tb)
	"	mov	x1, x0\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_tbz_lo_probe)
	"	tbz	x1, #3, 1f\n"
	"	orr	x0, x0, #1\n"
	KPT64_AT(kpt64_tbz_hi_probe)
	"1:	tbz	x1, #40, 2f\n"
	"	orr	x0, x0, #2\n"
	KPT64_AT(kpt64_tbnz_lo_probe)
	"2:	tbnz	x1, #3, 3f\n"
	"	orr	x0, x0, #4\n"
	KPT64_AT(kpt64_tbnz_hi_probe)
	"3:	tbnz	x1, #40, 4f\n"
	"	orr	x0, x0, #8\n"
	"4:	ret\n"
	KPT64_END(kpt64_tb)

	/* adr, simulated: a negative offset; returns the address of kpt64_adr */
	KPT64_FUNC(kpt64_adr)
	"	nop\n"
	KPT64_AT(kpt64_adr_probe)
	"	adr	x0, . - 4\n"
	"	ret\n"
	KPT64_END(kpt64_adr)

	/* adrp, simulated: returns the 4K page of kpt64_adrp_data */
	KPT64_FUNC(kpt64_adrp)
	KPT64_AT(kpt64_adrp_probe)
	"	adrp	x0, kpt64_adrp_data\n"
	"	ret\n"
	KPT64_END(kpt64_adrp)

	/* ldr x, literal, simulated: returns the doubleword after the ret */
	KPT64_FUNC(kpt64_ldr_x)
	KPT64_AT(kpt64_ldr_x_probe)
	"	ldr	x0, 1f\n"
	"	ret\n"
	"	.balign	8\n"
	"1:	.quad	0x0123456789abcdef\n"
	KPT64_END(kpt64_ldr_x)

	/* ldr w, literal, simulated: x0 was all ones, the load zero-extends */
	KPT64_FUNC(kpt64_ldr_w)
	"	mov	x0, #-1\n"
	KPT64_AT(kpt64_ldr_w_probe)
	"	ldr	w0, 1f\n"
	"	ret\n"
	"1:	.word	0x87654321\n"
	KPT64_END(kpt64_ldr_w)

	/* ldrsw literal, simulated: a negative word, sign-extended */
	KPT64_FUNC(kpt64_ldrsw)
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_ldrsw_probe)
	"	ldrsw	x0, 1f\n"
	"	ret\n"
	"1:	.word	0x89abcdef\n"
	KPT64_END(kpt64_ldrsw)

	/* br x16, simulated: returns 5 from its target, a bti j (hint #36) */
	KPT64_FUNC(kpt64_br)
	"	adr	x16, 1f\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_br_probe)
	"	br	x16\n"
	"	ret\n"
	KPT64_AT(kpt64_br_to)
	"1:	hint	#36\n"
	"	mov	x0, #5\n"
	"	ret\n"
	KPT64_END(kpt64_br)

	/*
	 * blr x9, simulated: its target, a bti c (hint #34), adds 1 and
	 * returns through x30, which must be the blr's address + 4.
	 */
	KPT64_FUNC(kpt64_blr)
	"	stp	x29, x30, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	"	adr	x9, 1f\n"
	KPT64_AT(kpt64_blr_probe)
	"	blr	x9\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	ret\n"
	KPT64_AT(kpt64_blr_to)
	"1:	hint	#34\n"
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_blr)

	/* ret, simulated: returns 7 */
	KPT64_FUNC(kpt64_ret)
	"	mov	x0, #7\n"
	KPT64_AT(kpt64_ret_probe)
	"	ret\n"
	KPT64_END(kpt64_ret)

	/*
	 * ret x9, simulated: returns 8 through x9; x30 points at a decoy that
	 * returns 0, should the return go through x30 instead.
	 */
	KPT64_FUNC(kpt64_ret_x9)
	"	mov	x0, #8\n"
	"	mov	x9, x30\n"
	"	adr	x30, 1f\n"
	KPT64_AT(kpt64_ret_x9_probe)
	"	ret	x9\n"
	"1:	mov	x0, #0\n"
	"	ret	x9\n"
	KPT64_END(kpt64_ret_x9)

	/* add and sub, stepped: x + 3 */
	KPT64_FUNC(kpt64_addsub)
	KPT64_AT(kpt64_add_probe)
	"	add	x0, x0, #5\n"
	KPT64_AT(kpt64_sub_probe)
	"	sub	x0, x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_addsub)

	/*
	 * Stack accesses, stepped: str and ldr at [sp, #8], stp pre-index and
	 * ldp post-index on sp. Returns 2 * x + 1, plus how far sp moved
	 * (nothing, when all is well).
	 */
	KPT64_FUNC(kpt64_stack)
	"	mov	x3, sp\n"
	"	sub	sp, sp, #16\n"
	KPT64_AT(kpt64_str_probe)
	"	str	x0, [sp, #8]\n"
	KPT64_AT(kpt64_ldr_sp_probe)
	"	ldr	x1, [sp, #8]\n"
	"	add	sp, sp, #16\n"
	"	add	x2, x1, #1\n"
	KPT64_AT(kpt64_stp_probe)
	"	stp	x1, x2, [sp, #-16]!\n"
	"	mov	x1, #0\n"
	"	mov	x2, #0\n"
	KPT64_AT(kpt64_ldp_probe)
	"	ldp	x1, x2, [sp], #16\n"
	"	add	x0, x1, x2\n"
	"	mov	x4, sp\n"
	"	sub	x4, x4, x3\n"
	"	add	x0, x0, x4\n"
	"	ret\n"
	KPT64_END(kpt64_stack)

	/* mrs nzcv, stepped: returns the flags it was given (bits 31:28 of x) */
	KPT64_FUNC(kpt64_mrs_nzcv)
	"	msr	nzcv, x0\n"
	KPT64_AT(kpt64_mrs_probe)
	"	mrs	x0, nzcv\n"
	"	ret\n"
	KPT64_END(kpt64_mrs_nzcv)

	/* dmb, dsb, isb, nop, stepped: x + 1 */
	KPT64_FUNC(kpt64_barriers)
	KPT64_AT(kpt64_dmb_probe)
	"	dmb	ish\n"
	KPT64_AT(kpt64_dsb_probe)
	"	dsb	sy\n"
	KPT64_AT(kpt64_isb_probe)
	"	isb\n"
	KPT64_AT(kpt64_nop_probe)
	"	nop\n"
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_barriers)

	/* LSE atomics, stepped; only called where the CPUs have them */
	"	.arch_extension lse\n"
	/* ldadd: *p += 5, returns the old *p */
	KPT64_FUNC(kpt64_ldadd)
	"	mov	x1, #5\n"
	KPT64_AT(kpt64_ldadd_probe)
	"	ldadd	x1, x2, [x0]\n"
	"	mov	x0, x2\n"
	"	ret\n"
	KPT64_END(kpt64_ldadd)

	/* cas: *p = new if *p == old; returns the old *p */
	KPT64_FUNC(kpt64_cas)
	KPT64_AT(kpt64_cas_probe)
	"	cas	x1, x2, [x0]\n"
	"	mov	x0, x1\n"
	"	ret\n"
	KPT64_END(kpt64_cas)

	/*
	 * paciasp at +0, stepped, and autiasp before the ret: x + 1. With
	 * pointer authentication on, autiasp fails unless x30 and sp are what
	 * paciasp saw (a kretprobe's entry probe sits on the paciasp too).
	 */
	KPT64_FUNC(kpt64_pac)
	KPT64_AT(kpt64_paciasp_probe)
	"	hint	#25\n"
	"	add	x0, x0, #1\n"
	"	hint	#29\n"
	"	ret\n"
	KPT64_END(kpt64_pac)

	/* bti c, stepped (a nop when not a branch's target): x + 2 */
	KPT64_FUNC(kpt64_bti)
	KPT64_AT(kpt64_bti_probe)
	"	hint	#34\n"
	"	add	x0, x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_bti)

	/* 32 adds of 1, one probe on each: x + 32 */
	KPT64_FUNC(kpt64_adds)
	KPT64_AT(kpt64_adds_probes)
	"	.rept	32\n"
	"	add	x0, x0, #1\n"
	"	.endr\n"
	"	ret\n"
	KPT64_END(kpt64_adds)

	/*
	 * Instructions no probe may go on, one after another from
	 * kpt64_refused_insns to kpt64_refused_end. Never called, and behind
	 * a ret besides: none of them ever runs.
	 */
	KPT64_FUNC(kpt64_refused)
	"0:	ret\n"
	KPT64_AT(kpt64_refused_insns)
	"	brk	#0x123\n"
	"	svc	#0\n"
	"	hvc	#0\n"
	"	eret\n"
	"	msr	daifset, #2\n"
	"	msr	tpidr_el0, x0\n"
	"	mrs	x0, daif\n"
	"	wfi\n"
	"	wfe\n"
	"	yield\n"
	"	hint	#29\n"			/* autiasp */
	"	.inst	0xd65f0bff\n"		/* retaa */
	"	prfm	pldl1keep, 1f\n"
	/*
	 * Literal loads into SIMD&FP registers: the tree's kprobes.c takes
	 * them for steppable and runs them out of line, where the literal's
	 * pc-relative address is the slot's: they load from the wrong place.
	 */
	"	ldr	q0, 1f\n"
	"	ldr	d0, 1f\n"
	"	ldr	s0, 1f\n"
	/* A load with an exception-table entry (its fixup is never used) */
	"2:	ldr	x1, [x0]\n"
	_ASM_EXTABLE_KACCESS(2b, 0b)
	KPT64_AT(kpt64_refused_end)
	"	.balign	16\n"
	"1:	.quad	0, 0\n"
	KPT64_END(kpt64_refused)

	/*
	 * An exclusive load/store pair and an add between: a breakpoint in
	 * the window clears the monitor, and the store would fail for ever.
	 * Never called: every instruction up to kpt64_excl_end is refused.
	 */
	KPT64_FUNC(kpt64_excl)
	"	ldxr	x1, [x0]\n"
	"	add	x1, x1, #1\n"
	"	stxr	w2, x1, [x0]\n"
	KPT64_AT(kpt64_excl_end)
	"	ret\n"
	KPT64_END(kpt64_excl)

#ifdef CONFIG_JUMP_LABEL
	/*
	 * A jump label site, listed in __jump_table as arm64's
	 * arch_static_branch() lists one, after a plain nop: x while
	 * kpt64_jl_key is off, x + 1 once it is on and the site a b.
	 */
	KPT64_FUNC(kpt64_jl)
	"	mov	x1, x0\n"
	KPT64_AT(kpt64_jl_nop_probe)
	"	nop\n"
	KPT64_AT(kpt64_jl_site)
	"1:	nop\n"
	"	mov	x0, x1\n"
	"	ret\n"
	"2:	add	x0, x1, #1\n"
	"	ret\n"
	KPT64_END(kpt64_jl)
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 2b - .\n"
	".quad kpt64_jl_key - .\n"
	".popsection\n"
#endif

	".popsection\n"
);

/* The labels of the asm above: the address of an instruction each. */
#define KPT64_INSN(name) extern u32 name[]

KPT64_INSN(kpt64_b_probe);
KPT64_INSN(kpt64_b_to);
KPT64_INSN(kpt64_bl_probe);
KPT64_INSN(kpt64_bcond_probes);
KPT64_INSN(kpt64_bcond_taken);
KPT64_INSN(kpt64_cbz_x_probe);
KPT64_INSN(kpt64_cbz_w_probe);
KPT64_INSN(kpt64_cbnz_x_probe);
KPT64_INSN(kpt64_cbnz_w_probe);
KPT64_INSN(kpt64_tbz_lo_probe);
KPT64_INSN(kpt64_tbz_hi_probe);
KPT64_INSN(kpt64_tbnz_lo_probe);
KPT64_INSN(kpt64_tbnz_hi_probe);
KPT64_INSN(kpt64_adr_probe);
KPT64_INSN(kpt64_adrp_probe);
KPT64_INSN(kpt64_ldr_x_probe);
KPT64_INSN(kpt64_ldr_w_probe);
KPT64_INSN(kpt64_ldrsw_probe);
KPT64_INSN(kpt64_br_probe);
KPT64_INSN(kpt64_br_to);
KPT64_INSN(kpt64_blr_probe);
KPT64_INSN(kpt64_blr_to);
KPT64_INSN(kpt64_ret_probe);
KPT64_INSN(kpt64_ret_x9_probe);
KPT64_INSN(kpt64_add_probe);
KPT64_INSN(kpt64_sub_probe);
KPT64_INSN(kpt64_str_probe);
KPT64_INSN(kpt64_ldr_sp_probe);
KPT64_INSN(kpt64_stp_probe);
KPT64_INSN(kpt64_ldp_probe);
KPT64_INSN(kpt64_mrs_probe);
KPT64_INSN(kpt64_dmb_probe);
KPT64_INSN(kpt64_dsb_probe);
KPT64_INSN(kpt64_isb_probe);
KPT64_INSN(kpt64_nop_probe);
KPT64_INSN(kpt64_ldadd_probe);
KPT64_INSN(kpt64_cas_probe);
KPT64_INSN(kpt64_paciasp_probe);
KPT64_INSN(kpt64_bti_probe);
KPT64_INSN(kpt64_adds_probes);
KPT64_INSN(kpt64_refused_insns);
KPT64_INSN(kpt64_refused_end);
KPT64_INSN(kpt64_excl);
KPT64_INSN(kpt64_excl_end);
KPT64_INSN(kpt64_jl_nop_probe);
KPT64_INSN(kpt64_jl_site);

asmlinkage u64 kpt64_b(void);
asmlinkage u64 kpt64_leaf(u64 x);
asmlinkage u64 kpt64_bl(u64 x);
asmlinkage u64 kpt64_bcond(u64 nzcv, u64 cc);
asmlinkage u64 kpt64_cb(u64 x);
asmlinkage u64 kpt64_tb(u64 x);
asmlinkage u64 kpt64_adr(void);
asmlinkage u64 kpt64_adrp(void);
asmlinkage u64 kpt64_ldr_x(void);
asmlinkage u64 kpt64_ldr_w(void);
asmlinkage u64 kpt64_ldrsw(void);
asmlinkage u64 kpt64_br(void);
asmlinkage u64 kpt64_blr(u64 x);
asmlinkage u64 kpt64_ret(void);
asmlinkage u64 kpt64_ret_x9(void);
asmlinkage u64 kpt64_addsub(u64 x);
asmlinkage u64 kpt64_stack(u64 x);
asmlinkage u64 kpt64_mrs_nzcv(u64 x);
asmlinkage u64 kpt64_barriers(u64 x);
asmlinkage u64 kpt64_ldadd(u64 *p);
asmlinkage u64 kpt64_cas(u64 *p, u64 old, u64 new);
asmlinkage u64 kpt64_pac(u64 x);
asmlinkage u64 kpt64_bti(u64 x);
asmlinkage u64 kpt64_adds(u64 x);
asmlinkage u64 kpt64_jl(u64 x);
#endif /* CONFIG_ARM64 */

/* ---- handlers -------------------------------------------------------------- */

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(!preemptible());
	atomic_inc(&pre_hits);
	return 0;
}

static void count_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	HANDLER_CHECK(!preemptible());
	atomic_inc(&post_hits);
}

static int count_pre2(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre2_hits);
	return 0;
}

static void count_post2(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic_inc(&post2_hits);
}

/* The hit-path counter the stress tests use; no KUnit calls from other threads. */
static int count_pre_quiet(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	return 0;
}

static int count_pre2_quiet(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre2_hits);
	return 0;
}

/*
 * @fn + @off, computed at run time: objtool takes a constant address in
 * a function's body for an indirect branch target, which under IBT
 * needs an ENDBR. (Used by x86-64's cases and entry_of() only.)
 */
static __maybe_unused void *insn_at(void *fn, unsigned long off)
{
	OPTIMIZER_HIDE_VAR(fn);
	return fn + off;
}

/* Where a probe on @fn+0 goes: past the ENDBR64 landing pad under IBT. */
static void *entry_of(void *fn)
{
#ifdef CONFIG_X86_KERNEL_IBT
	if (is_endbr(*(u32 *)fn))
		return insn_at(fn, ENDBR_INSN_SIZE);
#endif
	return fn;
}

/* The site registered at @addr; get_kprobe() wants preemption off. */
static struct kprobe *probe_at(void *addr)
{
	struct kprobe *p;

	preempt_disable();
	p = get_kprobe(addr);
	preempt_enable();
	return p;
}

/* Wait until @counter moves past @before; false after about two seconds. */
static bool wait_for_hit(atomic_t *counter, int before)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (atomic_read(counter) != before)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

static bool site_holds(struct kprobe *site, struct kprobe *p)
{
	struct kprobe *m;

	if (site == p)
		return true;
	if (!site || site->addr != p->addr)
		return false;
	list_for_each_entry(m, &site->list, list)
		if (m == p)
			return true;
	return false;
}

static void init_probe(struct kprobe *p, void *addr, const char *sym,
		       unsigned int offset, kprobe_pre_handler_t pre,
		       kprobe_post_handler_t post)
{
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->symbol_name = sym;
	p->offset = offset;
	p->pre_handler = pre;
	p->post_handler = post;
}

/*
 * Register @kp expecting the error @err. Should it be accepted anyway,
 * it is unregistered again, so that a probe on the stack does not stay
 * registered past the test.
 */
#define EXPECT_REFUSED(test, err, kp)					\
	do {								\
		struct kprobe *__kp = (kp);				\
		int __ret = register_kprobe(__kp);			\
									\
		KUNIT_EXPECT_EQ(test, err, __ret);			\
		if (!__ret)						\
			unregister_kprobe(__kp);			\
	} while (0)

/* ---- basic registration ------------------------------------------------------ */

static void test_kprobe_by_symbol(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, NULL, "kprobe_target", 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, entry_of(kprobe_target));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
	unregister_kprobe(&kp);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
}

static void test_kprobe_by_addr(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_target2, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, target2(rand1), rand1 / DIV_FACTOR + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	/* The site is the probe, or an aggregate (made to be optimized) holding it. */
	KUNIT_EXPECT_TRUE(test, site_holds(probe_at(kp.addr), &kp));
	unregister_kprobe(&kp);
	KUNIT_EXPECT_NULL(test, probe_at(kp.addr));
}

static void test_kprobes_batch(struct kunit *test)
{
	struct kprobe a, b;
	struct kprobe *kps[2] = { &a, &b };

	init_probe(&a, NULL, "kprobe_target", 0, count_pre, count_post);
	init_probe(&b, NULL, "kprobe_target2", 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, 2));
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobes(kps, 2);
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
}

/* A batch with one bad probe registers none of them. */
static void test_kprobes_batch_rollback(struct kunit *test)
{
	struct kprobe a, bad, c;
	struct kprobe *kps[3] = { &a, &bad, &c };

	init_probe(&a, NULL, "kprobe_target", 0, count_pre, NULL);
	init_probe(&bad, NULL, "no_such_symbol_for_kprobes", 0, count_pre, NULL);
	init_probe(&c, NULL, "kprobe_target2", 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, -ENOENT, register_kprobes(kps, 3));
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	/* The ones after the failing one are left as the caller wrote them. */
	KUNIT_EXPECT_NULL(test, c.addr);

	/*
	 * A failure while adding the second probe, after the first is in:
	 * the first is taken out again (a blacklisted function by name).
	 */
	init_probe(&a, NULL, "kprobe_target", 0, count_pre, NULL);
	init_probe(&bad, NULL, "get_kprobe", 0, count_pre, NULL);
	init_probe(&c, NULL, "kprobe_target2", 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobes(kps, 3));
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	KUNIT_EXPECT_NULL(test, c.addr);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	/* Corrected, the rest goes in as written. */
	init_probe(&bad, NULL, "kprobe_target", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobes(&kps[1], 2));
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	unregister_kprobes(&kps[1], 2);
	reset_counts();

	/* The good ones can be registered afterwards. */
	init_probe(&a, NULL, "kprobe_target", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&a));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&a);
}

/*
 * A kernel function whose entry is an ftrace site. Only calls from the
 * test's own thread count: other tasks may call it too.
 */
#define FTRACE_TARGET "ns_to_timespec64"
static struct task_struct *test_task;
static unsigned long ftrace_pre_ip, ftrace_post_ip;

static int ftrace_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current != test_task)
		return 0;
	HANDLER_CHECK(!preemptible());
	ftrace_pre_ip = instruction_pointer(regs);
	atomic_inc(&pre_hits);
	return 0;
}

static void ftrace_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	if (current != test_task)
		return;
	ftrace_post_ip = instruction_pointer(regs);
	atomic_inc(&post_hits);
}

/* At an ftrace site the probe rides ftrace; handlers see breakpoint-like regs. */
static void test_kprobe_ftrace_site(struct kunit *test)
{
	struct timespec64 ts;
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, ftrace_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kprobe_ftrace(&kp), IS_ENABLED(CONFIG_KPROBES_ON_FTRACE));
	ts = ns_to_timespec64(3 * (s64)NSEC_PER_SEC + 5);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, 3);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 5);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	/*
	 * pre_handler: on x86 just past a one-byte int3 at the probe, on
	 * the ftrace path too; elsewhere at the probe.
	 */
	KUNIT_EXPECT_EQ(test, ftrace_pre_ip,
			(unsigned long)kp.addr + (IS_ENABLED(CONFIG_X86) ? 1 : 0));
	/* post_handler: just past the probed instruction. */
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_EXPECT_EQ(test, ftrace_post_ip, (unsigned long)kp.addr + MCOUNT_INSN_SIZE);
#else
	KUNIT_EXPECT_GT(test, ftrace_post_ip, (unsigned long)kp.addr);
#endif
}

#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
static int skip_ftrace_call_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current != test_task || !kprobe_ftrace(p) || atomic_inc_return(&pre_hits) > 3)
		return 0;
	regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
	return 1;
}

/*
 * Third review, P4, on x86-64 for comparison with arm64: a pre_handler
 * at an entry on ftrace that resumes past the probed call goes on in the
 * function, once, as after the tree's.
 */
static void test_ftrace_entry_skip_call(struct kunit *test)
{
	struct timespec64 ts;
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, skip_ftrace_call_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	ts = ns_to_timespec64(3 * (s64)NSEC_PER_SEC + 5);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, 3);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
}
#endif

/*
 * A probe at a function's entry that is disabled or unregistered leaves
 * its ip in our plain ftrace filter for a while (one ftrace update for
 * many closing events): a probe armed there meanwhile must be reached
 * once per call, whichever of our two ftrace_ops it goes into, and one
 * disabled and enabled again must fire again.
 */
static void test_ftrace_removal_waits(struct kunit *test)
{
#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
	static const u8 nop5[] = { BYTES_NOP5 };
	kprobe_opcode_t *site;
#endif
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	/* Out of the plain ops, into the IPMODIFY one (a post_handler). */
	unregister_kprobe(&kp);
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, ftrace_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	unregister_kprobe(&kp);

	/* Disabled, then enabled again while its ip waits to leave. */
	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	/* Unregistered, and a new probe there while its ip waits to leave. */
	unregister_kprobe(&kp);
	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ns_to_timespec64(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
	site = kp.addr;
#endif
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
	/* After the barrier ftrace has put its nop back: nobody else traces it. */
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, 0, memcmp(site, nop5, sizeof(nop5)));
#endif
}

/*
 * Four entries leave together, so their ips all wait to leave the
 * filter; two of them, then the other two, are armed again from that
 * list: each fires once per call of its own function and no other does.
 */
static struct kprobe stale_kps[4];
static atomic_t stale_hits[ARRAY_SIZE(stale_kps)];
static unsigned long stale_sink;

static int stale_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current == test_task)
		atomic_inc(&stale_hits[p - stale_kps]);
	return 0;
}

/* Each target once; none of them calls another. */
static void call_stale_targets(void)
{
	struct timespec64 ts = ns_to_timespec64(1);

	WRITE_ONCE(stale_sink, ts.tv_nsec + jiffies_to_clock_t(1) + jiffies_to_msecs(1) +
		   jiffies_to_usecs(1));
}

/* Register @from..@to - 1 of stale_kps, call each target once, count. */
static void stale_round(struct kunit *test, unsigned int from, unsigned int to)
{
	static const char *const syms[ARRAY_SIZE(stale_kps)] = {
		"ns_to_timespec64", "jiffies_to_clock_t",
		"jiffies_to_msecs", "jiffies_to_usecs",
	};
	struct kprobe *kps[ARRAY_SIZE(stale_kps)];
	unsigned int i;

	for (i = from; i < to; i++) {
		init_probe(&stale_kps[i], NULL, syms[i], 0, stale_pre, NULL);
		kps[i - from] = &stale_kps[i];
		atomic_set(&stale_hits[i], 0);
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, to - from));
	call_stale_targets();
	for (i = 0; i < ARRAY_SIZE(stale_kps); i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&stale_hits[i]),
				    i >= from && i < to ? 1 : 0, "%s", syms[i]);
	if (IS_ENABLED(CONFIG_KPROBES_ON_FTRACE))
		for (i = from; i < to; i++)
			KUNIT_EXPECT_TRUE_MSG(test, stale_kps[i].flags & KPROBE_FLAG_FTRACE,
					      "%s", syms[i]);
	unregister_kprobes(kps, to - from);
	memset(stale_hits, 0, sizeof(stale_hits));
	call_stale_targets();
	for (i = 0; i < ARRAY_SIZE(stale_kps); i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&stale_hits[i]), 0, "%s", syms[i]);
}

static void test_ftrace_removal_waits_many(struct kunit *test)
{
	stale_round(test, 0, 4);
	stale_round(test, 1, 3);
	stale_round(test, 0, 4);
	kprobe_deferred_barrier();
	stale_round(test, 2, 4);
	stale_round(test, 0, 2);
}

static int ftrace_recurse_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current == test_task)
		ns_to_timespec64(1);
	return 0;
}

static void ftrace_recurse_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	if (current == test_task)
		ns_to_timespec64(1);
}

static void test_recursion_missed_ftrace(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_recurse_pre, ftrace_recurse_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ns_to_timespec64(2);
	/* Other tasks' calls can only add to it. */
	KUNIT_EXPECT_GE(test, kp.nmissed, 2UL);
	unregister_kprobe(&kp);
}

/* ---- refusals ------------------------------------------------------------------ */

static void test_refuse_bad_arguments(struct kunit *test)
{
	struct kprobe kp;

	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobes(NULL, 1));
	init_probe(&kp, NULL, "kprobe_target", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobes((struct kprobe *[]){ &kp }, 0));
	/* Neither an address nor a symbol. */
	init_probe(&kp, NULL, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	/* Both an address and a symbol. */
	init_probe(&kp, (void *)kprobe_target, "kprobe_target", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	/* An unknown symbol. */
	init_probe(&kp, NULL, "no_such_symbol_for_kprobes", 0, count_pre, NULL);
	EXPECT_REFUSED(test, -ENOENT, &kp);
	/*
	 * A name two functions share means the first kallsyms finds, as in
	 * the tree (kprobe_events refuses such names itself): vmlinux's
	 * kernel_init before this module's.
	 */
	init_probe(&kp, NULL, "kernel_init", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	if (IS_MODULE(CONFIG_KPROBES_SANITY_TEST))
		KUNIT_EXPECT_PTR_NE(test, (void *)kp.addr, entry_of(kernel_init));
	unregister_kprobe(&kp);
}

/*
 * The tree's codes: an address in no symbol kallsyms knows is -ENOENT,
 * one in a symbol that is not text -EINVAL.
 */
static void test_refuse_not_text(struct kunit *test)
{
	struct kprobe kp;

	/* Kernel data: a symbol that is not text, or none without KALLSYMS_ALL. */
	init_probe(&kp, (void *)&init_task, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, IS_ENABLED(CONFIG_KALLSYMS_ALL) ? -EINVAL : -ENOENT, &kp);
	/* A user address, a non-canonical one. */
	init_probe(&kp, (void *)0x10, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -ENOENT, &kp);
	if (IS_ENABLED(CONFIG_64BIT)) {
		init_probe(&kp, (void *)(~0UL << (BITS_PER_LONG - 1)), NULL, 0,
			   count_pre, NULL);
		EXPECT_REFUSED(test, -ENOENT, &kp);
	}
	/* A symbol plus an offset that lands in no symbol (wraps below it). */
	init_probe(&kp, NULL, "kprobe_target", 0, count_pre, NULL);
	kp.offset = -(unsigned long)kprobe_target + 0x1000;
	EXPECT_REFUSED(test, -ENOENT, &kp);
}

static void test_refuse_blacklisted(struct kunit *test)
{
	struct kprobe kp;

	/* Our own hit path. */
	init_probe(&kp, NULL, "get_kprobe", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	/* A NOKPROBE_SYMBOL of this module. */
	init_probe(&kp, (void *)kprobe_forbidden_target, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
#ifdef CONFIG_X86_64
	/* noinstr and entry text. */
	init_probe(&kp, NULL, "exc_int3", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	init_probe(&kp, NULL, "entry_SYSCALL_64", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	init_probe(&kp, NULL, "kprobe_int3_handler", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
#endif
	KUNIT_EXPECT_TRUE(test, within_kprobe_blacklist((unsigned long)get_kprobe));
	KUNIT_EXPECT_FALSE(test, within_kprobe_blacklist((unsigned long)kprobe_target));
	/* Softirq entry text is not blacklisted, as in the tree. */
	init_probe(&kp, NULL, "__do_softirq", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	unregister_kprobe(&kp);
}

static void test_refuse_registered_twice(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&kp));
	/* Still registered once, and fires once per hit. */
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
	/* A second unregister is harmless. */
	unregister_kprobe(&kp);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
}

/* ---- instruction kinds ----------------------------------------------------------- */

#ifdef CONFIG_X86_64
/* Probe @addr, call @fn twice, expect @want and two hits of both handlers. */
static void check_insn(struct kunit *test, void *addr,
		       unsigned long (*fn)(void), unsigned long want)
{
	struct kprobe kp;

	reset_counts();
	init_probe(&kp, addr, NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_EQ(test, fn(), want);
	KUNIT_EXPECT_EQ(test, fn(), want);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
	KUNIT_EXPECT_EQ(test, fn(), want);
}

static unsigned long call_pushpop(void)
{
	return kpt_pushpop(41);
}

static unsigned long call_callind(void)
{
	return kpt_callind(kpt_leaf);
}
#endif

/* ---- handlers' powers and limits ------------------------------------------------ */

static int redirect_c_pre(struct kprobe *p, struct pt_regs *regs)
{
	instruction_pointer_set(regs, (unsigned long)kprobe_redirect_alt);
	return 1;
}

static void test_redirect_pre_handler(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_target, NULL, 0, redirect_c_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 + 1000);
	unregister_kprobe(&kp);
	/* The post_handler does not run when the instruction was skipped. */
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
}

#ifdef CONFIG_X86_64
static int redirect_asm_pre(struct kprobe *p, struct pt_regs *regs)
{
	instruction_pointer_set(regs, (unsigned long)kpt_ret_alt);
	return 1;
}
#endif

static u32 recursion_seen;

static int recurse_pre(struct kprobe *p, struct pt_regs *regs)
{
	recursion_seen = recursed_target(rand1);
	return 0;
}

static void recurse_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	recursed_target(rand1);
}

/* A probe hit from its own handlers is skipped and counted in nmissed. */
static void test_recursion_missed(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_recursed_target, NULL, 0, recurse_pre, recurse_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	recursed_target(rand1);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, recursion_seen, rand1 / DIV_FACTOR);
	unregister_kprobe(&kp);
}

/*
 * kprobe_busy_begin() and kprobe_busy_end() may run inside a handler:
 * an interrupt's softirqs free a task (kprobe_flush_task()) while a
 * handler at an ftrace site, which runs with interrupts on, is running.
 * The hit must still be this CPU's afterwards, so that the handler's
 * own probes still count as missed. They are not exported: only a
 * built-in suite can call them.
 */
#if IS_BUILTIN(CONFIG_KPROBES_SANITY_TEST)
static int busy_inside_pre(struct kprobe *p, struct pt_regs *regs)
{
	kprobe_busy_begin();
	kprobe_busy_end();
	HANDLER_CHECK(kprobe_running() == p);
	/* Only then: with the hit lost, this would recurse without end. */
	if (kprobe_running() == p)
		recursion_seen = recursed_target(rand1);
	return 0;
}
#endif

static void test_busy_inside_handler(struct kunit *test)
{
#if IS_BUILTIN(CONFIG_KPROBES_SANITY_TEST)
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_recursed_target, NULL, 0, busy_inside_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	recursed_target(rand1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, recursion_seen, rand1 / DIV_FACTOR);
#else
	kunit_skip(test, "kprobe_busy_begin() is not exported to a module");
#endif
}

#ifdef CONFIG_X86_64
static int recurse_asm_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* The nested hit runs the copied mov without handlers. */
	HANDLER_CHECK(kpt_rip_load() == kpt_rip_data);
	return 0;
}

static void recurse_asm_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	HANDLER_CHECK(kpt_rip_load() == kpt_rip_data);
}
#endif

/* An address in the kernel half that is not mapped: a vmalloc guard page. */
static void *unmapped;

static void *make_unmapped(struct kunit *test)
{
	u8 *area = vmalloc(PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, area);
	unmapped = area + PAGE_SIZE;
	return area;
}

static int faulting_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long v;

	/* A handler's own fault is fixed up by the exception table. */
	HANDLER_CHECK(copy_from_kernel_nofault(&v, unmapped, sizeof(v)) == -EFAULT);
	atomic_inc(&pre_hits);
	return 0;
}

static void test_fault_in_handler(struct kunit *test)
{
	void *area;
	struct kprobe kp;

	/*
	 * riscv enters a kernel breakpoint as an NMI, and without
	 * TRACE_IRQFLAGS_NMI lockdep keeps the interrupted context's irq
	 * state there: a page fault's irqentry_exit() inside the handler
	 * then warns. The arch's entry code does that, whatever the core.
	 */
	if (IS_ENABLED(CONFIG_RISCV) && IS_ENABLED(CONFIG_PROVE_LOCKING) &&
	    !IS_ENABLED(CONFIG_TRACE_IRQFLAGS_NMI))
		kunit_skip(test, "a fault in a breakpoint handler trips lockdep on riscv");
	area = make_unmapped(test);

	init_probe(&kp, (void *)kprobe_target, NULL, 0, faulting_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	unregister_kprobe(&kp);
	vfree(area);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
}

/* ---- aggregates -------------------------------------------------------------------- */

static void test_aggregate(struct kunit *test)
{
	struct kprobe a, b, c;

	init_probe(&a, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	init_probe(&b, (void *)kprobe_target, NULL, 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&b));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);

	/* A third one joins, with a post_handler. */
	init_probe(&c, NULL, "kprobe_target", 0, NULL, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&c));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);

	/* The first one leaves; the others keep working. */
	unregister_kprobe(&a);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);

	unregister_kprobe(&c);
	unregister_kprobe(&b);
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 3);
}

static bool hammer_stop;
static atomic_t hammer_calls, hammer_wrong;

/* Call kprobe_target2 until told to stop, checking every result. */
static u32 hammer_expect;

static int hammer_fn(void *data)
{
	u32 (*fn)(u32) = data;

	while (!READ_ONCE(hammer_stop)) {
		if (fn(rand1) != hammer_expect)
			atomic_inc(&hammer_wrong);
		/*
		 * Mostly preempted, not sleeping: but an RCU-tasks grace
		 * period (reclaiming boosted slots) needs a voluntary switch.
		 */
		if (atomic_inc_return(&hammer_calls) % 512 == 0)
			usleep_range(10, 20);
		else
			cond_resched();
	}
	return 0;
}

/* Start hammer_fn() on kprobe_target2 in a thread of its own. */
/* A thread calling @fn(rand1) in a loop; @fn's probes must not change its result. */
static struct task_struct *start_hammer_on(struct kunit *test, u32 (*fn)(u32))
{
	struct task_struct *hammer;

	atomic_set(&hammer_wrong, 0);
	atomic_set(&hammer_calls, 0);
	WRITE_ONCE(hammer_stop, false);
	hammer_expect = fn(rand1);
	hammer = kthread_run(hammer_fn, fn, "kprobes-hammer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(hammer));
	return hammer;
}

static struct task_struct *start_hammer(struct kunit *test)
{
	return start_hammer_on(test, kprobe_target2);
}

static void stop_hammer(struct task_struct *hammer)
{
	WRITE_ONCE(hammer_stop, true);
	kthread_stop(hammer);
}

/* Members join and leave while another CPU keeps hitting the site. */
static void test_aggregate_under_hits(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe base, extra;
	int i, before;

	init_probe(&base, (void *)kprobe_target2, NULL, 0, count_pre_quiet, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&base));
	hammer = start_hammer(test);

	for (i = 0; i < 20; i++) {
		init_probe(&extra, (void *)kprobe_target2, NULL, 0, count_pre2_quiet,
			   (i & 1) ? count_post2 : NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&extra));
		before = atomic_read(&pre2_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre2_hits, before));
		unregister_kprobe(&extra);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
	}

	stop_hammer(hammer);
	unregister_kprobe(&base);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&pre_hits), 20);
	KUNIT_EXPECT_GT(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target2)));
}

/* ---- enable / disable ------------------------------------------------------------- */

static void test_disable_enable(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(&kp));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(&kp));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	unregister_kprobe(&kp);
	/* Not registered any more. */
	KUNIT_EXPECT_EQ(test, -EINVAL, enable_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, -EINVAL, disable_kprobe(&kp));
}

/* ---- kretprobes --------------------------------------------------------------------- */

#ifdef CONFIG_KRETPROBES
static atomic_t ret_hits, entry_hits;
static unsigned long last_retval;

struct stamp {
	u32 magic;
	u32 arg;
};

/*
 * The probed call's first argument. Arches without the argument access
 * API (arm, mips, sh, sparc, parisc, arc), and s390, whose version calls
 * regs_get_register(), which modules cannot, get the one the test says
 * it passes next: the data area still has to carry it to the handler.
 */
static u32 kpt_passed_arg;

static u32 first_arg(struct pt_regs *regs)
{
#if defined(CONFIG_HAVE_FUNCTION_ARG_ACCESS_API) && !defined(CONFIG_S390)
	return regs_get_kernel_argument(regs, 0);
#else
	return READ_ONCE(kpt_passed_arg);
#endif
}

static u32 call_target(u32 arg)
{
	WRITE_ONCE(kpt_passed_arg, arg);
	return target(arg);
}

static int entry_stamp(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stamp *s = (struct stamp *)ri->data;

	HANDLER_CHECK(!preemptible());
	s->magic = 0xfeedf00d;
	s->arg = first_arg(regs);
	atomic_inc(&entry_hits);
	return 0;
}

static int return_check(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stamp *s = (struct stamp *)ri->data;

	HANDLER_CHECK(!preemptible());
	HANDLER_CHECK(s->magic == 0xfeedf00d);
	HANDLER_CHECK(regs_return_value(regs) == (unsigned long)s->arg / DIV_FACTOR);
	last_retval = regs_return_value(regs);
	atomic_inc(&ret_hits);
	return 0;
}

static int return_count(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	last_retval = regs_return_value(regs);
	atomic_inc(&ret_hits);
	return 0;
}

/* EXPECT_REFUSED() for kretprobes. */
#define EXPECT_RP_REFUSED(test, err, rp)				\
	do {								\
		struct kretprobe *__rp = (rp);				\
		int __ret = register_kretprobe(__rp);			\
									\
		KUNIT_EXPECT_EQ(test, err, __ret);			\
		if (!__ret)						\
			unregister_kretprobe(__rp);			\
	} while (0)

static void init_rp(struct kretprobe *rp, const char *sym, kretprobe_handler_t entry,
		    kretprobe_handler_t handler, size_t data_size, int maxactive)
{
	memset(rp, 0, sizeof(*rp));
	rp->kp.symbol_name = sym;
	rp->entry_handler = entry;
	rp->handler = handler;
	rp->data_size = data_size;
	rp->maxactive = maxactive;
}

/* The instance pool a registered kretprobe owns, whoever keeps it. */
static void *instance_pool(struct kretprobe *rp)
{
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	return rp->rh;
#else
	return rp->rph;
#endif
}
#endif

#ifdef CONFIG_KRETPROBES
static int entry_refuse(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&entry_hits);
	return 1;
}
#endif

#ifdef CONFIG_KRETPROBES
static u32 (*nest_target)(u32);

/* Recurses through a pointer so that the calls stay real calls. */
static noinline u32 kretprobe_nest_target(u32 depth)
{
	if (depth)
		return nest_target(depth - 1) + 1;
	return 100;
}
#endif

#ifdef CONFIG_KRETPROBES
static DECLARE_COMPLETION(sleeper_entered);
static DECLARE_COMPLETION(sleeper_go);
static atomic_t sleeper_result;

static noinline int kretprobe_sleeper(int x)
{
	complete(&sleeper_entered);
	wait_for_completion(&sleeper_go);
	return x * 2;
}

static int (*sleeper_fn)(int);

static int sleeper_thread(void *data)
{
	atomic_set(&sleeper_result, sleeper_fn(21));
	while (!kthread_should_stop())
		usleep_range(1000, 2000);
	return 0;
}
#endif

/* ---- x86-64: the breakpoint path on known instructions ------------------ */

#ifdef CONFIG_X86_64
/* Many probes at once: each fires, one batch, one removal. */
static void test_kprobes_many(struct kunit *test)
{
	void *addrs[] = { kpt_rip_load, kpt_call, kpt_jmp, kpt_ret, kpt_pushpop,
			  kpt_pushf, kprobe_target, kprobe_target2 };
	struct kprobe *probes, *kps[ARRAY_SIZE(addrs)];
	int i;

	probes = kunit_kcalloc(test, ARRAY_SIZE(addrs), sizeof(*probes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, probes);
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		init_probe(&probes[i], addrs[i], NULL, 0, count_pre, NULL);
		kps[i] = &probes[i];
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(addrs)));
	kpt_rip_load();
	kpt_call();
	kpt_jmp();
	kpt_ret();
	kpt_pushpop(1);
	kpt_pushf();
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), (int)ARRAY_SIZE(addrs));
	unregister_kprobes(kps, ARRAY_SIZE(addrs));
	for (i = 0; i < ARRAY_SIZE(addrs); i++)
		KUNIT_EXPECT_NULL(test, probe_at(addrs[i]));
}

/* OPT_BATCH probes, one on each add of kpt_opt_many, and @kps to register them. */
static struct kprobe *opt_many_probes(struct kunit *test, struct kprobe ***kps)
{
	struct kprobe *probes;
	int i;

	probes = kunit_kcalloc(test, OPT_BATCH, sizeof(*probes), GFP_KERNEL);
	*kps = kunit_kcalloc(test, OPT_BATCH, sizeof(**kps), GFP_KERNEL);
	if (!probes || !*kps)
		return NULL;
	for (i = 0; i < OPT_BATCH; i++) {
		init_probe(&probes[i], insn_at(kpt_opt_many, 2 + 5 * i), NULL, 0,
			   count_pre_quiet, NULL);
		(*kps)[i] = &probes[i];
	}
	return probes;
}

/*
 * The hit path's index of sites grows, leaves tombstones and shrinks:
 * OPT_BATCH probes, every other one taken out and put back, each found (and
 * hit, and counted) exactly while it is registered.
 */
static void test_index_churn(struct kunit *test)
{
	struct kprobe *probes, **kps, **odd;
	int i, found = 0;

	probes = opt_many_probes(test, &kps);
	odd = kunit_kcalloc(test, OPT_BATCH / 2, sizeof(*odd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, probes);
	KUNIT_ASSERT_NOT_NULL(test, odd);
	for (i = 0; i < OPT_BATCH / 2; i++)
		odd[i] = &probes[2 * i + 1];
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, OPT_BATCH));
	unregister_kprobes(odd, OPT_BATCH / 2);
	for (i = 0; i < OPT_BATCH; i++)
		found += i & 1 ? !probe_at(probes[i].addr) :
			 site_holds(probe_at(probes[i].addr), &probes[i]);
	KUNIT_EXPECT_EQ(test, found, OPT_BATCH);
	KUNIT_EXPECT_EQ(test, kpt_opt_many(), OPT_MANY_SUM);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), OPT_BATCH / 2);

	/* Their ->addr is still set: the same probes go back in. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(odd, OPT_BATCH / 2));
	found = 0;
	for (i = 0; i < OPT_BATCH; i++)
		found += site_holds(probe_at(probes[i].addr), &probes[i]);
	KUNIT_EXPECT_EQ(test, found, OPT_BATCH);
	KUNIT_EXPECT_EQ(test, kpt_opt_many(), OPT_MANY_SUM);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), OPT_BATCH / 2 + OPT_BATCH);
	/*
	 * The odd ones' counters went back and came out again, from the
	 * same chunks: they start from zero.
	 */
	found = 0;
	for (i = 0; i < OPT_BATCH; i++)
		found += kprobe_hits(&probes[i]) == (i & 1 ? 1 : 2);
	KUNIT_EXPECT_EQ(test, found, OPT_BATCH);

	unregister_kprobes(kps, OPT_BATCH);
	for (i = 0; i < OPT_BATCH; i++)
		KUNIT_EXPECT_NULL(test, probe_at(probes[i].addr));
	KUNIT_EXPECT_EQ(test, kpt_opt_many(), OPT_MANY_SUM);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), OPT_BATCH / 2 + OPT_BATCH);
}

static void test_refuse_mid_instruction(struct kunit *test)
{
	struct kprobe kp;

	/* Inside "movq kpt_rip_data(%rip), %rax" (7 bytes). */
	init_probe(&kp, insn_at(kpt_rip_load, 1), NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EILSEQ, register_kprobe(&kp));
	init_probe(&kp, NULL, "kpt_rip_load", 3, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EILSEQ, register_kprobe(&kp));
	/* Inside the five-byte ftrace site of a kernel function. */
	if (IS_ENABLED(CONFIG_KPROBES_ON_FTRACE)) {
		init_probe(&kp, NULL, "ns_to_timespec64", 1, count_pre, NULL);
		KUNIT_EXPECT_EQ(test, -EILSEQ, register_kprobe(&kp));
	}
	/* No breakpoint was left behind. */
	KUNIT_EXPECT_EQ(test, kpt_rip_load(), kpt_rip_data);
}

static void test_refuse_unsupported_insn(struct kunit *test)
{
	struct kprobe kp;

	static const int offsets[] = { 0, 1, 3, 4, 6, 8, 11, 12 };
	int i;

	for (i = 0; i < ARRAY_SIZE(offsets); i++) {
		init_probe(&kp, insn_at(kpt_unsupported, offsets[i]), NULL, 0, count_pre, NULL);
		EXPECT_REFUSED(test, -EOPNOTSUPP, &kp);
	}
}

/*
 * Try a probe at every byte of @fn; return how many were refused with
 * -EINVAL, and in @at where the first of them was placed (@fn + 0 goes
 * past a landing pad).
 */
static int probes_refused(struct kunit *test, void *fn, u8 **at)
{
	char sym[KSYM_SYMBOL_LEN], *slash;
	unsigned long size, off;
	struct kprobe kp;
	int refused = 0, ret;

	sprint_symbol(sym, (unsigned long)fn);
	slash = strchr(sym, '/');
	if (!slash || sscanf(slash + 1, "%lx", &size) != 1 || !size) {
		KUNIT_FAIL(test, "no size for %s", sym);
		return -1;
	}
	*at = NULL;
	for (off = 0; off < size; off++) {
		init_probe(&kp, insn_at(fn, off), NULL, 0, count_pre, NULL);
		ret = register_kprobe(&kp);
		if (!ret)
			unregister_kprobe(&kp);
		else if (ret == -EINVAL && !refused++)
			*at = (u8 *)kp.addr;
	}
	return refused;
}

/*
 * @fn holds one site the kernel lists, of @len bytes at @at: probes at
 * each of its bytes are refused with -EINVAL, as in the tree, and so is
 * one at @fn + 0 when that is placed on it.
 */
static void expect_one_listed_site(struct kunit *test, void *fn, int len, u8 **at)
{
	int refused = probes_refused(test, fn, at);

	KUNIT_ASSERT_NOT_NULL(test, *at);
	KUNIT_EXPECT_EQ(test, refused, len + (*at == entry_of(fn) && *at != fn));
}

/* A static call site is rewritten by static_call_update(): never probed. */
static void test_refuse_static_call_site(struct kunit *test)
{
	u8 *at;

	if (!IS_ENABLED(CONFIG_HAVE_STATIC_CALL_INLINE))
		kunit_skip(test, "static calls are not patched inline");
	expect_one_listed_site(test, kpt_static_call_fn, CALL_INSN_SIZE, &at);
	KUNIT_EXPECT_EQ(test, at[0], (u8)CALL_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, kpt_static_call_fn(2), 6);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
}

/* A WARN's ud2 is in the bug table: its trap is not ours. */
static void test_refuse_bug_site(struct kunit *test)
{
	u8 *at;

	if (!IS_ENABLED(CONFIG_GENERIC_BUG))
		kunit_skip(test, "no bug table");
	/* find_bug() knows the ud2's first byte only, in the tree too. */
	KUNIT_ASSERT_EQ(test, probes_refused(test, kpt_warn_fn, &at), 1);
	KUNIT_EXPECT_EQ(test, at[0], 0x0f);
	KUNIT_EXPECT_EQ(test, at[1], 0x0b);
	KUNIT_EXPECT_EQ(test, kpt_warn_fn(1), 2U);
}

static void test_insn_rip_relative(struct kunit *test)
{
	check_insn(test, kpt_rip_load, kpt_rip_load, kpt_rip_data);
}

static void test_insn_call(struct kunit *test)
{
	check_insn(test, kpt_call, kpt_call, 43);
}

static void test_insn_jmp(struct kunit *test)
{
	check_insn(test, kpt_jmp, kpt_jmp, 2);
}

static void test_insn_ret(struct kunit *test)
{
	check_insn(test, insn_at(kpt_ret, 5), kpt_ret, 7);
}

static void test_insn_push_pop(struct kunit *test)
{
	check_insn(test, kpt_pushpop, call_pushpop, 42);
	check_insn(test, insn_at(kpt_pushpop, 8), call_pushpop, 42);
}

static void test_insn_indirect_call(struct kunit *test)
{
	check_insn(test, insn_at(kpt_callind, 3), call_callind, 43);
	kpt_fnptr = kpt_leaf;
	check_insn(test, kpt_callmem, kpt_callmem, 44);
}

static void test_insn_pushf(struct kunit *test)
{
	/* The pushed flags must show interrupts as the caller had them. */
	unsigned long want = kpt_pushf() & X86_EFLAGS_IF;
	struct kprobe kp;

	init_probe(&kp, kpt_pushf, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_pushf() & X86_EFLAGS_IF, want);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
}

static void test_insn_jcc(struct kunit *test)
{
	struct kprobe kp;

	/* By symbol + offset: the jz after a two-byte test. */
	init_probe(&kp, NULL, "kpt_jcc", 2, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, insn_at(kpt_jcc, 2));
	KUNIT_EXPECT_FALSE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
	KUNIT_EXPECT_EQ(test, kpt_jcc(0), 20UL);	/* taken */
	KUNIT_EXPECT_EQ(test, kpt_jcc(5), 10UL);	/* not taken */
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
}

static void test_insn_loop(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, insn_at(kpt_loop, 7), NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_loop(5), 5UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 5);
}

static void test_redirect_breakpoint(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, kpt_ret, NULL, 0, redirect_asm_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_ret(), 9UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
	KUNIT_EXPECT_EQ(test, kpt_ret(), 7UL);
}

static void test_recursion_missed_breakpoint(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, kpt_rip_load, NULL, 0, recurse_asm_pre, recurse_asm_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_rip_load(), kpt_rip_data);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 2UL);
	/* The two nested hits skipped the handlers: they are not hits. */
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 1UL);
	unregister_kprobe(&kp);
}

/*
 * Per-probe hit counters: each member of an aggregate counts the hits
 * that ran its handlers (a disabled member none), on the breakpoint and
 * the ftrace path alike, and the counter is gone after unregistering.
 */
static void test_hit_counters(struct kunit *test)
{
	struct kprobe a, b, c, f;
	int i;

	init_probe(&a, kpt_jmp, NULL, 0, count_pre, NULL);
	init_probe(&b, kpt_jmp, NULL, 0, NULL, count_post2);
	init_probe(&c, kpt_call, NULL, 0, count_pre, NULL);
	init_probe(&f, target, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0,
			register_kprobes((struct kprobe *[]){ &a, &b, &c, &f }, 4));
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 0UL);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpt_jmp(), 2UL);
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&b));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, kpt_jmp(), 2UL);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, kpt_call(), 43UL);
	for (i = 0; i < 6; i++)
		target(rand1);

	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 5UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 3UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&c), 4UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&f), 6UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 6);

	unregister_kprobes((struct kprobe *[]){ &a, &b, &c, &f }, 4);
	/* Their counters are freed. */
	KUNIT_EXPECT_TRUE(test, !a.nhit && !b.nhit && !c.nhit && !f.nhit);
}

static void call_kpt_ret(struct kunit *test, int times, unsigned long expect)
{
	while (times--)
		KUNIT_EXPECT_EQ(test, kpt_ret(), expect);
}

/*
 * An aggregate's members are counted by their site's counter: one that
 * joins counts from then on, one that is disabled for a while misses
 * those hits, one that stays after another left keeps counting, and a
 * member after one that redirects is not counted for that hit.
 */
static void test_member_hit_counters(struct kunit *test)
{
	struct kprobe a, b, r;

	init_probe(&a, kpt_ret, NULL, 0, count_pre, NULL);
	init_probe(&b, kpt_ret, NULL, 0, count_pre2, NULL);
	init_probe(&r, kpt_ret, NULL, 0, redirect_asm_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	call_kpt_ret(test, 2, 7);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&b));
	call_kpt_ret(test, 3, 7);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 5UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 3UL);

	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&a));
	call_kpt_ret(test, 2, 7);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&a));
	call_kpt_ret(test, 1, 7);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 6UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 6UL);

	/* r runs last and redirects: everyone ran. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&r));
	call_kpt_ret(test, 1, 9);
	unregister_kprobe(&a);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 0UL);
	call_kpt_ret(test, 2, 9);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 9UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&r), 3UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 7);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 9);
	unregister_kprobe(&b);

	/* Now b comes after r: r's redirect skips it. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&b));
	call_kpt_ret(test, 2, 9);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&r), 5UL);
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&r));
	call_kpt_ret(test, 1, 7);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 1UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&r), 5UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 10);
	unregister_kprobes((struct kprobe *[]){ &r, &b }, 2);
	call_kpt_ret(test, 1, 7);
}

/* int3 traps kprobes handled, on all CPUs. */
static unsigned long int3_traps(void)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kprobe_int3_traps, cpu);
	return sum;
}

/* Call @fn @n times; return the int3 traps that took. */
static unsigned long traps_for_calls(unsigned long (*fn)(void), int n,
				     unsigned long expect, struct kunit *test)
{
	unsigned long before = int3_traps();
	int i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, fn(), expect);
	return int3_traps() - before;
}

/*
 * Boosting: the first hit traps twice (breakpoint, then after the copy);
 * from then on one trap per hit. A post_handler joining the site brings
 * the second trap back, and its leaving removes it again.
 */
static unsigned long kpt_inc_5(void)
{
	return kpt_inc(5);
}

static void test_boost(struct kunit *test)
{
	void *addr = insn_at(kpt_inc, 3);
	struct kprobe kp, post;

	init_probe(&kp, addr, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_inc_5, 1, 6, test), 2UL);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_inc_5, 10, 6, test), 10UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 11);

	init_probe(&post, addr, NULL, 0, NULL, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_inc_5, 3, 6, test), 6UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 3);
	unregister_kprobe(&post);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_inc_5, 3, 6, test), 3UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 17);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_inc_5, 1, 6, test), 0UL);
}

static unsigned long kpt_fault_load_good(void)
{
	static unsigned long good = 77;

	return kpt_fault_load((unsigned long)&good);
}

/*
 * An instruction with an exception-table entry is never boosted: a fault
 * in its copy must still be rewound to the original address.
 */
static void test_boost_refused_extable(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, insn_at(kpt_fault_load, 7), NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_fault_load_good, 3, 77, test), 6UL);
	KUNIT_EXPECT_EQ(test, kpt_fault_load(0x8000000000000000UL), -1UL);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_fault_load_good, 1, 77, test), 2UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 5);
}

/*
 * A boosted probe registered and unregistered over and over while another
 * thread runs through it: a task interrupted (or, with CONFIG_PREEMPT,
 * preempted) in the boosted copy must not find its slot reused.
 */
static u32 call_kpt_inc(u32 v)
{
	return kpt_inc(v);
}

static void test_boost_under_hits(struct kunit *test)
{
	struct task_struct *hammer;
	bool boosted = false;
	struct kprobe kp;
	int i, before;

	hammer = start_hammer_on(test, call_kpt_inc);
	for (i = 0; i < 20; i++) {
		init_probe(&kp, insn_at(kpt_inc, 3), NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		/* The first hit readies the boost, the second may use it. */
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
		boosted |= READ_ONCE(kp.ainsn.boost) == KPROBE_BOOST_READY;
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_TRUE(test, boosted);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_NULL(test, probe_at(insn_at(kpt_inc, 3)));
}

#ifdef CONFIG_OPTPROBES
static bool site_optimized(void *addr)
{
	struct kprobe *p = probe_at(addr);

	return p && kprobe_optimized(p);
}

static unsigned long kpt_opt_10(void)
{
	return kpt_opt(10);
}

/* Handlers of an optimized probe see what a breakpoint hit shows them. */
static int opt_regs_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(regs->ip == (unsigned long)kpt_opt + 1);
	HANDLER_CHECK(regs->di == 10);
	HANDLER_CHECK(regs->flags & X86_EFLAGS_IF);
	HANDLER_CHECK(regs->cs == __KERNEL_CS);
	HANDLER_CHECK(kprobe_running() == p);
	HANDLER_CHECK(!preemptible());
	/* The probed code goes on with the registers as left here. */
	regs->di = 20;
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * An optimized probe takes no trap; each reason not to be optimized
 * takes its jump out at once, and the jump comes back (after the
 * optimizer's delay) when the reason goes.
 */
static void test_optimized(struct kunit *test)
{
	struct kprobe kp, post, inner;

	init_probe(&kp, kpt_opt, NULL, 0, opt_regs_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 5, 26, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 5);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 5UL);

	/* A post_handler needs the trap after the instruction. */
	init_probe(&post, kpt_opt, NULL, 0, NULL, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 3, 26, test), 6UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 3);
	unregister_kprobe(&post);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));

	/* A probe inside the region the jump covers. */
	init_probe(&inner, insn_at(kpt_opt, 3), NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 26UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	unregister_kprobe(&inner);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));

	/* The probe inside goes while the site is disabled: enabling optimizes. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	unregister_kprobe(&inner);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));

	/* Disabled: no jump, no trap, no handler. */
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 2, 16, test), 0UL);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 1, 26, test), 0UL);

	unregister_kprobe(&kp);
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 1, 16, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3 + 5 + 1 + 1);
}

/*
 * A probe with a post_handler is a lone site, never optimized while it
 * stays; the first probe without one to join it gives the site its
 * detour, and the jump goes in when the post_handler leaves.
 */
static void test_optimized_after_post_handler(struct kunit *test)
{
	struct kprobe post, kp;

	reset_counts();
	init_probe(&post, kpt_opt, NULL, 0, NULL, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 2, 16, test), 4UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);

	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	unregister_kprobe(&post);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 3, 16, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
	unregister_kprobe(&kp);
}

/*
 * Unregistering an optimized probe: the probe leaves the table at once
 * and its handler no longer runs; for one site the text is written back
 * before unregister returns; a probe registered at once at the same
 * address or inside the region works, and after
 * wait_for_kprobe_optimizer() the text is the original.
 */
static void test_optimized_retire(struct kunit *test)
{
	u8 orig[JMP32_INSN_SIZE];
	struct kprobe kp, inner;

	wait_for_kprobe_optimizer();
	memcpy(orig, kpt_opt, sizeof(orig));
	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	unregister_kprobe(&kp);
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
	/* One site: unregistering wrote its text back itself. */
	KUNIT_EXPECT_EQ(test, memcmp(kpt_opt, orig, sizeof(orig)), 0);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);

	/* Back at once, at the same address. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_10, 2, 16, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);

	/* Gone again, and at once a probe inside the region it covered. */
	unregister_kprobe(&kp);
	init_probe(&inner, insn_at(kpt_opt, 3), NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	unregister_kprobe(&inner);

	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_EQ(test, memcmp(kpt_opt, orig, sizeof(orig)), 0);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
}

/*
 * One batch: a probe inside an optimized site's region (which takes the
 * jump out) and then one just after the region. The second one's
 * address is checked by decoding the function from its entry, over the
 * site, in the same batch: the decoder must read the region's original
 * instructions, not the jump that is still in the text until the batch
 * writes its changes.
 */
static void test_optimized_batch_in_region(struct kunit *test)
{
	struct kprobe kp, inner, after;
	struct kprobe *kps[] = { &inner, &after };

	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	init_probe(&inner, insn_at(kpt_opt, 3), NULL, 0, count_pre2, NULL);
	init_probe(&after, insn_at(kpt_opt, 7), NULL, 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(kps)));
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 2);
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
}

/*
 * One batch: a probe with a post_handler joins an optimized site (which
 * queues taking the jump out, written when the batch ends), then probes
 * inside the region and after it. Their addresses are checked by
 * decoding over the site while its jump is still in the text though the
 * site is no longer optimized: the decoder must still read the original
 * instructions. The storm found this as a random -EILSEQ.
 */
static void test_optimized_batch_unoptimize(struct kunit *test)
{
	struct kprobe kp, post, inner, after;
	struct kprobe *kps[] = { &post, &inner, &after };
	const u8 *text = insn_at(kpt_opt, 0);
	u8 orig[12];

	memcpy(orig, text, sizeof(orig));
	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	init_probe(&post, kpt_opt, NULL, 0, NULL, count_post2);
	init_probe(&inner, insn_at(kpt_opt, 3), NULL, 0, count_pre2, NULL);
	init_probe(&after, insn_at(kpt_opt, 7), NULL, 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(kps)));
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	unregister_kprobe(&kp);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_EQ(test, memcmp(text, orig, sizeof(orig)), 0);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
}

/* A redirecting pre_handler is honoured on an optimized probe. */
static void test_optimized_redirect(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, kpt_ret, NULL, 0, redirect_asm_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_ret));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_ret, 3, 9, test), 0UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt_ret(), 7UL);
}

static u32 call_kpt_opt(u32 v)
{
	return kpt_opt(v);
}

/*
 * Every transition while another thread runs through the site: optimize,
 * unoptimize for a post_handler, for a probe in the region, for disable,
 * and unregister.
 */
static void test_optimized_under_hits(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe kp, post, inner;
	int i, before, optimized = 0;

	hammer = start_hammer_on(test, call_kpt_opt);
	for (i = 0; i < 5; i++) {
		init_probe(&kp, kpt_opt, NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += site_optimized(kpt_opt);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));

		init_probe(&post, kpt_opt, NULL, 0, NULL, count_post2);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
		before = atomic_read(&post2_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&post2_hits, before));
		unregister_kprobe(&post);
		wait_for_kprobe_optimizer();
		optimized += site_optimized(kpt_opt);

		init_probe(&inner, insn_at(kpt_opt, 3), NULL, 0, count_pre2_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
		before = atomic_read(&pre2_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre2_hits, before));
		unregister_kprobe(&inner);

		KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
		KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += site_optimized(kpt_opt);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, optimized, 15);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
}

/*
 * OPT_BATCH probes optimized in one batch and removed in one: all get a
 * jump, none traps, and the text is back after the optimizer is done.
 * The times are printed, not judged (see make bench).
 */
static void test_optimized_batch(struct kunit *test)
{
	const size_t len = 2 + 5 * OPT_BATCH;
	struct kprobe *probes, **kps;
	u64 t0, t1, t2, t3, t4;
	int i, optimized = 0;
	u8 *orig;

	probes = opt_many_probes(test, &kps);
	orig = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, probes);
	KUNIT_ASSERT_NOT_NULL(test, orig);
	wait_for_kprobe_optimizer();
	memcpy(orig, kpt_opt_many, len);

	t0 = ktime_get_ns();
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, OPT_BATCH));
	t1 = ktime_get_ns();
	wait_for_kprobe_optimizer();
	t2 = ktime_get_ns();
	for (i = 0; i < OPT_BATCH; i++)
		optimized += site_optimized(probes[i].addr);
	KUNIT_EXPECT_EQ(test, optimized, OPT_BATCH);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_many, 1, OPT_MANY_SUM, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), OPT_BATCH);
	t3 = ktime_get_ns();
	unregister_kprobes(kps, OPT_BATCH);
	t4 = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_opt_many, 1, OPT_MANY_SUM, test), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), OPT_BATCH);
	/* Unregistering wrote back at least the first chunk (256) itself. */
	KUNIT_EXPECT_EQ(test, memcmp(kpt_opt_many, orig, 2 + 5 * 256), 0);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_EQ(test, memcmp(kpt_opt_many, orig, len), 0);
	kunit_info(test, "%d probes: registered in %llu us, optimized %llu us later, unregistered in %llu us\n",
		   OPT_BATCH, (t1 - t0) / 1000, (t2 - t1) / 1000, (t4 - t3) / 1000);
}
#endif /* CONFIG_OPTPROBES */

/*
 * A jump label site is refused whichever way its key points, and a jump
 * that would cover it is never written: the copy would go stale.
 */
static void test_jump_label_site(struct kunit *test)
{
#if defined(CONFIG_JUMP_LABEL)
	struct kprobe kp, site;

	init_probe(&site, insn_at(kpt_jl, 3), NULL, 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&site));
	init_probe(&kp, kpt_jl, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
#ifdef CONFIG_OPTPROBES
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_jl));
#endif
	KUNIT_EXPECT_EQ(test, kpt_jl(5), 5UL);

	static_branch_enable(&kpt_jl_key);
	KUNIT_EXPECT_EQ(test, kpt_jl(5), 6UL);
	init_probe(&site, insn_at(kpt_jl, 3), NULL, 0, count_pre2, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kprobe(&site));
	static_branch_disable(&kpt_jl_key);
	KUNIT_EXPECT_EQ(test, kpt_jl(5), 5UL);

	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
#else
	kunit_skip(test, "no jump labels");
#endif
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/* A probe at an ftrace site is served by ftrace: no trap at all. */
static void test_ftrace_site_no_trap(struct kunit *test)
{
	unsigned long before;
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	before = int3_traps();
	ns_to_timespec64(7);
	ns_to_timespec64(8);
	KUNIT_EXPECT_EQ(test, int3_traps() - before, 0UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
}
#endif

/* A fault in a nested hit's copy: the fixup applies as without the probe. */
static int nested_fault_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(kpt_fault_load((unsigned long)unmapped) == -1UL);
	HANDLER_CHECK(kpt_fault_load(0x8000000000000000UL) == -1UL);
	return 0;
}

static void test_fault_in_nested_hit(struct kunit *test)
{
	void *area = make_unmapped(test);
	struct kprobe outer, inner;

	init_probe(&outer, kpt_leaf, NULL, 0, nested_fault_pre, NULL);
	init_probe(&inner, insn_at(kpt_fault_load, 7), NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&outer));
	KUNIT_EXPECT_EQ(test, kpt_leaf(), 42UL);
	KUNIT_EXPECT_EQ(test, inner.nmissed, 2UL);
	KUNIT_EXPECT_NULL(test, kprobe_running());
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)unmapped), -1UL);
	unregister_kprobe(&outer);
	unregister_kprobe(&inner);
	vfree(area);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
}

/*
 * load_unaligned_zeropad()'s fixup decodes the instruction at the fault:
 * rewound from a copy, it would find the int3 and oops. Refused.
 */
static void test_refuse_zeropad_load(struct kunit *test)
{
	u8 *area = make_unmapped(test);
	struct kprobe kp;

	init_probe(&kp, kpt_zeropad, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &kp);
	/* Unprobed, the fixup reads the aligned word before the hole. */
	memset(area + PAGE_SIZE - 8, 0x11, 8);
	KUNIT_EXPECT_EQ(test, kpt_zeropad(area + PAGE_SIZE - 3), 0x111111UL);
	vfree(area);
}

#ifdef CONFIG_HAVE_HW_BREAKPOINT
/*
 * A data breakpoint on kpt_rip_data traps after a copy of kpt_rip_load's
 * load ran, and its handler (in the #DB, like an NMI handler) calls
 * watch_calls: a probe hit one level further down.
 */
static unsigned long (*watch_calls)(void);
static atomic_t watch_hits;
static unsigned long watch_result, rip_data_seen;

static void watch_handler(struct perf_event *bp, struct perf_sample_data *data,
			  struct pt_regs *regs)
{
	atomic_inc(&watch_hits);
	WRITE_ONCE(watch_result, watch_calls());
}

static struct perf_event * __percpu *watch_rip_data(struct kunit *test)
{
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&kpt_rip_data;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_RW;
	atomic_set(&watch_hits, 0);
	WRITE_ONCE(watch_result, 0);
	WRITE_ONCE(rip_data_seen, 0);
	bp = register_wide_hw_breakpoint(&attr, watch_handler, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR((void __force *)bp));
	return bp;
}

static int nested_load_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(rip_data_seen, kpt_rip_load());
	return 0;
}

/*
 * Three levels: the outer probe's handler calls kpt_rip_load(), whose
 * probe is hit nested; the #DB from its copy calls kpt_cpuid(), whose
 * probe (never boosted) is hit inside that. Nested hits count a miss.
 */
static void test_hit_inside_nested_hit(struct kunit *test)
{
	unsigned long expect = kpt_rip_load();
	struct perf_event * __percpu *bp;
	struct kprobe outer, inner, deepest;

	init_probe(&outer, kpt_leaf, NULL, 0, nested_load_pre, NULL);
	init_probe(&inner, kpt_rip_load, NULL, 0, count_pre, count_post);
	init_probe(&deepest, insn_at(kpt_cpuid, 5), NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&deepest));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&outer));
	watch_calls = kpt_cpuid;
	bp = watch_rip_data(test);
	KUNIT_EXPECT_EQ(test, kpt_leaf(), 42UL);
	unregister_wide_hw_breakpoint(bp);
	KUNIT_EXPECT_EQ(test, atomic_read(&watch_hits), 1);
	KUNIT_EXPECT_EQ(test, watch_result, 3UL);
	KUNIT_EXPECT_EQ(test, rip_data_seen, expect);
	KUNIT_EXPECT_EQ(test, inner.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, deepest.nmissed, 1UL);
	KUNIT_EXPECT_NULL(test, kprobe_running());
	KUNIT_EXPECT_EQ(test, kpt_rip_load(), expect);
	KUNIT_EXPECT_EQ(test, kpt_cpuid(), 3UL);
	unregister_kprobe(&outer);
	unregister_kprobe(&inner);
	unregister_kprobe(&deepest);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
}

/*
 * The probe is hit again from the #DB while its own copy runs: that
 * nested hit must not be taken for the end of the outer one.
 */
static void test_hit_inside_own_copy(struct kunit *test)
{
	unsigned long expect = kpt_rip_load();
	struct perf_event * __percpu *bp;
	struct kprobe kp;

	init_probe(&kp, kpt_rip_load, NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	watch_calls = kpt_rip_load;
	bp = watch_rip_data(test);
	KUNIT_EXPECT_EQ(test, kpt_rip_load(), expect);
	unregister_wide_hw_breakpoint(bp);
	KUNIT_EXPECT_EQ(test, atomic_read(&watch_hits), 1);
	KUNIT_EXPECT_EQ(test, watch_result, expect);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 1UL);
	KUNIT_EXPECT_NULL(test, kprobe_running());
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
}
#endif

/* The copied instruction faults; its exception-table fixup must still apply. */
static void test_fault_in_copy(struct kunit *test)
{
	void *area = make_unmapped(test);
	unsigned long good = 77;
	struct kprobe kp;

	init_probe(&kp, insn_at(kpt_fault_load, 7), NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)&good), 77UL);
	/* Page fault (unmapped), then general protection (non-canonical). */
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)unmapped), -1UL);
	KUNIT_EXPECT_EQ(test, kpt_fault_load(0x8000000000000000UL), -1UL);
	/* The probe state was reset: later hits work normally. */
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)&good), 77UL);
	KUNIT_EXPECT_NULL(test, kprobe_running());
	unregister_kprobe(&kp);
	/* The faulting runs saw the pre_handler but not the post_handler. */
	vfree(area);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
}

static void test_aggregate_breakpoint(struct kunit *test)
{
	struct kprobe a, b;

	init_probe(&a, kpt_call, NULL, 0, count_pre, count_post);
	init_probe(&b, kpt_call, NULL, 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &a, &b }, 2));
	KUNIT_EXPECT_EQ(test, kpt_call(), 43UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobe(&b);
	KUNIT_EXPECT_EQ(test, kpt_call(), 43UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	unregister_kprobe(&a);
}

static void test_register_disabled(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, kpt_ret, NULL, 0, count_pre, NULL);
	kp.flags = KPROBE_FLAG_DISABLED;
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_ret(), 7UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_ret(), 7UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
}

static void test_disable_aggregate_member(struct kunit *test)
{
	struct kprobe a, b;

	init_probe(&a, kpt_jmp, NULL, 0, count_pre, NULL);
	init_probe(&b, kpt_jmp, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &a, &b }, 2));
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&a));
	KUNIT_EXPECT_EQ(test, kpt_jmp(), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&b));
	KUNIT_EXPECT_EQ(test, kpt_jmp(), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&a));
	KUNIT_EXPECT_EQ(test, kpt_jmp(), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	unregister_kprobes((struct kprobe *[]){ &a, &b }, 2);
}
#endif /* CONFIG_X86_64 */

/*
 * A probe listed twice in one unregister_kprobes() call is taken out
 * once and drops its counter: a member that leaves an aggregate, and
 * the only probe of an optimized site.
 */
static void test_unregister_listed_twice(struct kunit *test)
{
	struct kprobe a, b;
	struct kprobe *twice[] = { &a, &a };

	init_probe(&a, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	init_probe(&b, (void *)kprobe_target, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&b));
	unregister_kprobes(twice, ARRAY_SIZE(twice));
	KUNIT_EXPECT_NULL(test, a.nhit);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 0UL);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&b), 1UL);
	/* It goes back in as any unregistered probe does. */
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	target(rand1);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&a), 1UL);
	twice[1] = &b;
	unregister_kprobes(twice, ARRAY_SIZE(twice));
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	KUNIT_EXPECT_NULL(test, b.nhit);
#if defined(CONFIG_X86_64) && defined(CONFIG_OPTPROBES)

	/* The x86 functions the optimizer is tested on. */
	init_probe(&a, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	twice[1] = &a;
	unregister_kprobes(twice, ARRAY_SIZE(twice));
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
	KUNIT_EXPECT_NULL(test, a.nhit);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
#endif
}

/* ---- kretprobes, continued ------------------------------------------------ */

#ifdef CONFIG_KRETPROBES
static void test_kretprobe_basic(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&entry_hits, 0);
	init_rp(&rp, "kprobe_target", entry_stamp, return_check, sizeof(struct stamp), 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_GT(test, rp.maxactive, 0);
	KUNIT_EXPECT_EQ(test, call_target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, call_target(rand1 + 3), (rand1 + 3) / DIV_FACTOR);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
	KUNIT_EXPECT_EQ(test, last_retval, (unsigned long)(rand1 + 3) / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
}

static void test_kretprobe_entry_skip(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&entry_hits, 0);
	init_rp(&rp, "kprobe_target2", entry_refuse, return_count, 0, 2);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	/* More calls than instances: a skipped call gives its instance back. */
	target2(rand1);
	target2(rand1);
	target2(rand1);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
}

static void test_kretprobes_batch(struct kunit *test)
{
	struct kretprobe a, b;

	atomic_set(&ret_hits, 0);
	init_rp(&a, "kprobe_target", NULL, return_count, 0, 0);
	init_rp(&b, "kprobe_target2", NULL, return_count, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobes((struct kretprobe *[]){ &a, &b }, 2));
	target(rand1);
	KUNIT_EXPECT_EQ(test, last_retval, (unsigned long)rand1 / DIV_FACTOR);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, last_retval, (unsigned long)rand1 / DIV_FACTOR + 1);
	unregister_kretprobes((struct kretprobe *[]){ &a, &b }, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
}

/*
 * Where a return handler is: its regs' pc is the address the function
 * returns to in its caller, never the trampoline, for each of two
 * kretprobes on one function. So is get_kretprobe_retaddr(), as in the
 * tree: for both with the core's instances, for the one that hooked the
 * call first with rethook (whose other node saved the trampoline).
 */
static unsigned long retpc_seen[2], retaddr_seen[2];

static int return_where(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	int i = !!rp->data_size;	/* the second has some data */

	if (current == test_task) {
		retpc_seen[i] = instruction_pointer(regs);
		retaddr_seen[i] = (unsigned long)get_kretprobe_retaddr(ri);
	}
	return 0;
}

static noinline u32 kret_where_caller(u32 v)
{
	return target(v) + 1;	/* not a tail call */
}

static void test_kretprobe_return_address(struct kunit *test)
{
	char sym[KSYM_SYMBOL_LEN];
	struct kretprobe a, b;
	int i, real = 0;

	init_rp(&a, "kprobe_target", NULL, return_where, 0, 0);
	init_rp(&b, "kprobe_target", NULL, return_where, sizeof(long), 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobes((struct kretprobe *[]){ &a, &b }, 2));
	memset(retpc_seen, 0, sizeof(retpc_seen));
	memset(retaddr_seen, 0, sizeof(retaddr_seen));
	KUNIT_EXPECT_EQ(test, kret_where_caller(rand1), rand1 / DIV_FACTOR + 1);
	unregister_kretprobes((struct kretprobe *[]){ &a, &b }, 2);
	for (i = 0; i < 2; i++) {
		real += retaddr_seen[i] == retpc_seen[i];
		sprint_symbol(sym, retpc_seen[i]);
		KUNIT_EXPECT_TRUE_MSG(test, str_has_prefix(sym, "kret_where_caller+"),
				      "kretprobe %d returns to %s", i, sym);
	}
	KUNIT_EXPECT_EQ(test, real, IS_ENABLED(CONFIG_KRETPROBE_ON_RETHOOK) ? 1 : 2);
}

/* Recursive calls each get their own instance while the pool lasts. */
static void test_kretprobe_maxactive(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "kretprobe_nest_target", NULL, return_count, 0, 2);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	/* Five nested calls, two instances: three calls go untracked. */
	KUNIT_EXPECT_EQ(test, nest_target(4), 104U);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
	/* The outermost tracked call returns last. */
	KUNIT_EXPECT_EQ(test, last_retval, 104UL);
	unregister_kretprobe(&rp);
}

static void test_kretprobe_refusals(struct kunit *test)
{
	struct kretprobe rp;

	/* Not a function entry (past the entry, wherever a landing pad puts it). */
	init_rp(&rp, NULL, NULL, return_count, 0, 0);
#ifdef CONFIG_X86_64
	rp.kp.addr = insn_at(kpt_inc, 3);
#else
	rp.kp.symbol_name = "kprobe_target";
	rp.kp.offset = 4;
#endif
	EXPECT_RP_REFUSED(test, -EINVAL, &rp);
	/* Too much private data. */
	init_rp(&rp, "kprobe_target", NULL, return_count, KRETPROBE_MAX_DATA_SIZE + 1, 0);
	KUNIT_EXPECT_EQ(test, -E2BIG, register_kretprobe(&rp));
	/* Unknown symbol. */
	init_rp(&rp, "no_such_symbol_for_kprobes", NULL, return_count, 0, 0);
	KUNIT_EXPECT_EQ(test, -ENOENT, register_kretprobe(&rp));
	/* Registered twice: refused, and the first registration keeps working. */
	atomic_set(&ret_hits, 0);
	init_rp(&rp, NULL, NULL, return_count, 0, 0);
	rp.kp.addr = (void *)kprobe_target;
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kretprobe(&rp));
	target(rand1);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 1);
#ifdef CONFIG_X86
	/*
	 * A function that returns in another task, also where its entry is
	 * past an ENDBR (review finding F9). x86's kretprobe_blacklist names
	 * it; other arches leave their __switch_to to NOKPROBE_SYMBOL().
	 */
	init_rp(&rp, "__switch_to", NULL, return_count, 0, 0);
	EXPECT_RP_REFUSED(test, -EINVAL, &rp);
#endif
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kretprobes(NULL, 1));
}

/* A kprobe and a kretprobe on the same entry share the site. */
static void test_kretprobe_with_kprobe(struct kunit *test)
{
	struct kretprobe rp;
	struct kprobe kp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "kprobe_target", NULL, return_count, 0, 0);
	init_probe(&kp, NULL, "kprobe_target", 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 1);
	unregister_kprobe(&kp);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
	unregister_kretprobe(&rp);
}

/* Unregistering while a call is in flight: the call still returns home. */
static void test_kretprobe_unregister_in_flight(struct kunit *test)
{
	struct task_struct *t;
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&sleeper_result, 0);
	reinit_completion(&sleeper_entered);
	reinit_completion(&sleeper_go);
	init_rp(&rp, "kretprobe_sleeper", NULL, return_count, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	t = kthread_run(sleeper_thread, NULL, "kprobes-sleeper");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&sleeper_entered);
	unregister_kretprobe(&rp);
	complete(&sleeper_go);
	while (!atomic_read(&sleeper_result))
		usleep_range(1000, 2000);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, atomic_read(&sleeper_result), 42);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
}

static atomic_t rp_released;

static void free_released_rp(struct kretprobe *rp)
{
	atomic_inc(&rp_released);
	kfree(rp);
}

/*
 * A return probe unregistered without waiting while a call is in
 * flight, and freed by its release callback before that call returns:
 * the call returns its own value, no handler runs, and nothing touches
 * the freed probe (KASAN would say).
 */
static void test_kretprobe_deferred_in_flight(struct kunit *test)
{
	struct task_struct *t;
	struct kretprobe *rp;

	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	atomic_set(&ret_hits, 0);
	atomic_set(&rp_released, 0);
	atomic_set(&sleeper_result, 0);
	reinit_completion(&sleeper_entered);
	reinit_completion(&sleeper_go);
	init_rp(rp, "kretprobe_sleeper", NULL, return_count, 0, 0);
	if (register_kretprobe(rp)) {
		kfree(rp);
		KUNIT_FAIL(test, "register_kretprobe() failed");
		return;
	}
	t = kthread_run(sleeper_thread, NULL, "kprobes-sleeper");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&sleeper_entered);
	KUNIT_EXPECT_EQ(test, 0, kretprobe_unregister_deferred(rp, free_released_rp));
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&rp_released), 1);
	complete(&sleeper_go);
	while (!atomic_read(&sleeper_result))
		usleep_range(1000, 2000);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, atomic_read(&sleeper_result), 42);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
}

/*
 * Register and unregister a kretprobe over and over while another CPU
 * keeps calling the function: every call must return its own value to
 * its own caller, whether or not its return was hooked.
 */
static void test_kretprobe_unregister_racing(struct kunit *test)
{
	struct task_struct *hammer;
	struct kretprobe rp;
	int i, before;

	atomic_set(&ret_hits, 0);
	hammer = start_hammer(test);

	for (i = 0; i < 20; i++) {
		init_rp(&rp, "kprobe_target2", NULL, return_count, 0, 4);
		KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
		before = atomic_read(&ret_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&ret_hits, before));
		unregister_kretprobe(&rp);
	}
	before = atomic_read(&hammer_calls);
	KUNIT_EXPECT_TRUE(test, wait_for_hit(&hammer_calls, before));

	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GE(test, atomic_read(&ret_hits), 20);
}
#endif /* CONFIG_KRETPROBES */

#if defined(CONFIG_KRETPROBES) && defined(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE)
static unsigned long driver_ret_addr, expected_ret_addr;
static unsigned long trace_buf[32];
static unsigned int trace_len;
static bool trace_inside_ok;

static void take_trace(void)
{
	trace_len = stack_trace_save(trace_buf, ARRAY_SIZE(trace_buf), 0);
}

static bool trace_has(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < trace_len; i++)
		if (trace_buf[i] == addr)
			return true;
	return false;
}

static bool trace_has(unsigned long addr);

/*
 * Called from trace_driver(). While return-probed, its return address on
 * the stack is the trampoline: the unwinder must still find the caller.
 */
static noinline unsigned long kretprobe_trace_target(void)
{
	driver_ret_addr = (unsigned long)__builtin_return_address(0);
	take_trace();
	trace_inside_ok = trace_has(expected_ret_addr);
	return driver_ret_addr;
}

static unsigned long (*trace_target)(void);

/*
 * The one call site of the target, so its return address is the same
 * with and without the probe; called through a pointer so that it stays
 * one call site.
 */
static noinline unsigned long kretprobe_trace_driver(void)
{
	return trace_target() + 1;
}

static unsigned long (*trace_driver)(void);

static int trace_on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	HANDLER_CHECK(get_kretprobe_retaddr(ri) == expected_ret_addr);
	take_trace();
	return 0;
}
#endif

/* Stack traces in a return handler show the real caller. */
static void test_kretprobe_stacktrace(struct kunit *test)
{
#if defined(CONFIG_KRETPROBES) && defined(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE)
	struct kretprobe rp;

	/* Unprobed, the target sees its real return address. */
	trace_driver();
	expected_ret_addr = driver_ret_addr;

	init_rp(&rp, "kretprobe_trace_target", NULL, trace_on_return, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	trace_len = 0;
	trace_inside_ok = false;
	trace_driver();
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_NE(test, driver_ret_addr, expected_ret_addr);
	KUNIT_EXPECT_TRUE(test, trace_inside_ok);
	KUNIT_EXPECT_GT(test, trace_len, 0U);
	KUNIT_EXPECT_TRUE(test, trace_has(expected_ret_addr));
#else
	kunit_skip(test, "needs kretprobes with correct stack traces");
#endif
}

/* ---- the suite ---------------------------------------------------------------------- */

static int kprobes_test_init(struct kunit *test)
{
	cur_test = test;
	test_task = current;
	atomic_set(&handler_errors, 0);
	reset_counts();
	rand1 = get_random_u32_above(DIV_FACTOR);
	target = kprobe_target;
	target2 = kprobe_target2;
	recursed_target = kprobe_recursed_target;
#ifdef CONFIG_KRETPROBES
	nest_target = kretprobe_nest_target;
	sleeper_fn = kretprobe_sleeper;
#endif
#if defined(CONFIG_KRETPROBES) && defined(CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE)
	trace_target = kretprobe_trace_target;
	trace_driver = kretprobe_trace_driver;
#endif
	return 0;
}

static void kprobes_test_exit(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&handler_errors), 0,
			    "a handler check failed at line %d", handler_error_line);
}

/* ---- review findings and the tree's error codes ---------------------------- */

/*
 * unregister_kprobes() clears ->addr of a probe that is not registered,
 * as the tree does, and still unregisters the others.
 */
static void test_unregister_clears_addr(struct kunit *test)
{
	struct kprobe a, never;

	init_probe(&a, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	init_probe(&never, (void *)kprobe_target2, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	unregister_kprobes((struct kprobe *[]){ &never, &a }, 2);
	KUNIT_EXPECT_NULL(test, never.addr);
	KUNIT_EXPECT_PTR_EQ(test, (void *)a.addr, entry_of(kprobe_target));
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	target(rand1);
	target2(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
}

static int check_counter_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(p->nhit);
	return 0;
}

/*
 * A probe listed twice in one register_kprobes() call is refused, and
 * its hit counter is not given back while the first listing has it
 * armed (review finding F8): another CPU hits it meanwhile.
 */
static void test_register_listed_twice(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe p;
	int i;

	hammer = start_hammer(test);
	for (i = 0; i < 20; i++) {
		init_probe(&p, (void *)kprobe_target2, NULL, 0, check_counter_pre, NULL);
		KUNIT_EXPECT_EQ(test, -EINVAL,
				register_kprobes((struct kprobe *[]){ &p, &p }, 2));
		KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target2)));
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
}

#ifdef CONFIG_KRETPROBES
/*
 * Kretprobes listed twice: refused before either gets an instance pool
 * (the first pool leaked before; kmemleak shows it).
 */
static void test_kretprobes_listed_twice(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "kprobe_target", NULL, return_count, 0, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			register_kretprobes((struct kretprobe *[]){ &rp, &rp }, 2));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	target(rand1);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 1);
}

/* A batch of kretprobes that fails while its probes are being added. */
static void test_kretprobes_batch_rollback(struct kunit *test)
{
	struct kretprobe a, bad;

	atomic_set(&ret_hits, 0);
	init_rp(&a, "kprobe_target", NULL, return_count, 0, 0);
	/* A function entry kretprobes accept, in the kprobe blacklist. */
	init_rp(&bad, "get_kprobe", NULL, return_count, 0, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			register_kretprobes((struct kretprobe *[]){ &a, &bad }, 2));
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(kprobe_target)));
	KUNIT_EXPECT_NULL(test, instance_pool(&a));
	KUNIT_EXPECT_NULL(test, instance_pool(&bad));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
}
#endif

#ifdef CONFIG_X86_64
/*
 * Offsets 1 to 3 into an ENDBR64 are not instruction boundaries: -EILSEQ,
 * as in the tree. +0 and +4 both mean the entry.
 */
static void test_refuse_inside_endbr(struct kunit *test)
{
	struct kprobe kp;
	int off;

	if (entry_of(kprobe_target) == (void *)kprobe_target)
		kunit_skip(test, "functions start without ENDBR64 (no IBT)");
	for (off = 1; off < 4; off++) {
		init_probe(&kp, NULL, "kprobe_target", off, count_pre, NULL);
		EXPECT_REFUSED(test, -EILSEQ, &kp);
		init_probe(&kp, insn_at(kprobe_target, off), NULL, 0, count_pre, NULL);
		EXPECT_REFUSED(test, -EILSEQ, &kp);
	}
	for (off = 0; off <= 4; off += 4) {
		init_probe(&kp, NULL, "kprobe_target", off, count_pre, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, entry_of(kprobe_target));
		KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
		unregister_kprobe(&kp);
	}
}

/*
 * Pieces the compiler splits off a blacklisted function, or specializes
 * it into, are blacklisted with it (review finding F5); a piece of a
 * function that may be probed may be probed.
 */
static void test_refuse_function_pieces(struct kunit *test)
{
	static const char *const pieces[] = {
		"kpt_forbidden.cold", "kpt_forbidden.isra.0",
		"kpt_forbidden.constprop.0", "kpt_forbidden.part.0",
	};
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(pieces); i++) {
		init_probe(&kp, NULL, pieces[i], 0, count_pre, NULL);
		EXPECT_REFUSED(test, -EINVAL, &kp);
	}
	init_probe(&kp, NULL, "kpt_forbidden", 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, NULL, "kpt_allowed.cold", 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	unregister_kprobe(&kp);
}

/*
 * The padding in front of a function (__pfx_) and a CFI preamble
 * (__cfi_) are refused by their names, everywhere in them (review
 * finding F6).
 */
static void test_refuse_preamble(struct kunit *test)
{
	char sym[KSYM_SYMBOL_LEN], *plus;
	unsigned long size, off;
	struct kprobe kp;
	int fields;
	u8 *pad;

	/* "__pfx_kprobe_target+0xf/0x10 [test_kprobes]" */
	pad = insn_at(kprobe_target, -1UL);
	sprint_symbol(sym, (unsigned long)pad);
	if (!str_has_prefix(sym, "__pfx_") && !str_has_prefix(sym, "__cfi_"))
		kunit_skip(test, "functions have no preamble symbol (%s)", sym);
	plus = strchr(sym, '+');
	KUNIT_ASSERT_NOT_NULL(test, plus);
	fields = sscanf(plus, "+%lx/%lx", &off, &size);
	KUNIT_ASSERT_EQ(test, fields, 2);
	*plus = '\0';
	for (pad -= off; size; size--, pad++) {
		init_probe(&kp, pad, NULL, 0, count_pre, NULL);
		EXPECT_REFUSED(test, -EINVAL, &kp);
	}
	init_probe(&kp, NULL, sym, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
}

/*
 * A static call whose target is "return 0" is written as a five-byte
 * xor, and a conditional tail call as a six-byte jcc: each is refused as
 * the static call site it is (review finding F2).
 */
static void test_refuse_static_call_ret0(struct kunit *test)
{
	static const u8 xor5rax[] = { 0x2e, 0x2e, 0x2e, 0x31, 0xc0 };
	u8 *at;

	if (!IS_ENABLED(CONFIG_HAVE_STATIC_CALL_INLINE))
		kunit_skip(test, "static calls are not patched inline");
	expect_one_listed_site(test, kpt_sc_ret0_fn, sizeof(xor5rax), &at);
	KUNIT_EXPECT_EQ(test, memcmp(at, xor5rax, sizeof(xor5rax)), 0);
	KUNIT_EXPECT_EQ(test, kpt_sc_ret0_fn(3), 3);
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	/*
	 * A conditional tail call, written as a six-byte jcc; the static
	 * call table reserves five bytes of any site (the tree's too), so
	 * the sixth is a mere non-boundary, -EILSEQ.
	 */
	expect_one_listed_site(test, kpt_sc_jcc, CALL_INSN_SIZE, &at);
	KUNIT_EXPECT_EQ(test, at[0], 0x0f);
	KUNIT_EXPECT_EQ(test, at[1] & 0xf0, 0x80);
	KUNIT_EXPECT_EQ(test, kpt_sc_jcc(4), 5);
	KUNIT_EXPECT_EQ(test, kpt_sc_jcc(0), 0);
#endif
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
}

/*
 * cpuid is never boosted (nor rdmsr, wrmsr and the other two-byte
 * opcodes the tree leaves out): every hit traps twice.
 */
static unsigned long kpt_cpuid_call(void)
{
	return kpt_cpuid();
}

static void test_boost_refused_twobyte(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, insn_at(kpt_cpuid, 5), NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_cpuid_call, 1, 3, test), 2UL);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_cpuid_call, 5, 3, test), 10UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 6);
}

#ifdef CONFIG_OPTPROBES
/* Register a probe at @addr, let the optimizer run: was it optimized? */
static bool optimizes(struct kunit *test, void *addr)
{
	struct kprobe kp;
	bool optimized;

	init_probe(&kp, addr, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	optimized = site_optimized(addr);
	unregister_kprobe(&kp);
	return optimized;
}

static unsigned long kpt_ex_value = 41;

/*
 * The optimizer's checks of the function around a region, each shown by
 * a function that passes all the others: an instruction with an
 * exception-table entry in the region refuses, one elsewhere whose fixup
 * lands outside the region does not (the tree refuses any in the
 * function; see Documentation/trace/kprobes.rst); a far indirect jump
 * anywhere in the function refuses, as a near one does.
 */
static void test_optimizer_function_checks(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, optimizes(test, kpt_ex_in));
	KUNIT_EXPECT_EQ(test, kpt_ex_in(&kpt_ex_value), 42UL);
	KUNIT_EXPECT_TRUE(test, optimizes(test, kpt_ex_out));
	KUNIT_EXPECT_EQ(test, kpt_ex_out(1, &kpt_ex_value), 6UL);
	KUNIT_EXPECT_FALSE(test, optimizes(test, insn_at(kpt_farjmp, 5)));
	KUNIT_EXPECT_EQ(test, kpt_farjmp(1), 7UL);
}

/*
 * A jump label's nop that becomes a jump into a region after the
 * function was decoded (and its decoding kept, see funcmap.c) keeps the
 * region from being optimized, as when it is a jump at decoding time.
 */
static void test_jump_label_into_region(struct kunit *test)
{
#ifdef CONFIG_JUMP_LABEL
	void *region = insn_at(kpt_jl_into, 8);

	KUNIT_EXPECT_TRUE(test, optimizes(test, region));
	static_branch_enable(&kpt_jl_into_key);
	KUNIT_EXPECT_FALSE(test, optimizes(test, region));
	KUNIT_EXPECT_EQ(test, kpt_jl_into(5), 6UL);
	static_branch_disable(&kpt_jl_into_key);
	KUNIT_EXPECT_EQ(test, kpt_jl_into(5), 5UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
#else
	kunit_skip(test, "no jump labels");
#endif
}

/*
 * Optimize the site at @addr, take the jump out and put it back, three
 * times, while a thread calls @fn on another CPU and this one calls it
 * too: every hit counted, every result right.
 */
static void optimize_under_hits(struct kunit *test, void *addr, u32 (*fn)(u32))
{
	struct task_struct *hammer;
	int i, before, optimized = 0;
	struct kprobe kp;

	hammer = start_hammer_on(test, fn);
	for (i = 0; i < 3; i++) {
		init_probe(&kp, addr, NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += site_optimized(addr);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_EQ(test, fn(rand1), hammer_expect);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before + 1));

		KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
		KUNIT_EXPECT_EQ(test, fn(rand1), hammer_expect);
		KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += site_optimized(addr);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_EQ(test, fn(rand1), hammer_expect);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before + 1));
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, optimized, 6);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_NULL(test, probe_at(addr));
}

static u32 call_kpt_opt_jcc(u32 v)
{
	return kpt_opt_jcc(v) + kpt_opt_jcc(0);
}

/* A jcc in the region, in the middle (probe at +0) and first (at +2). */
static void test_optimized_region_jcc(struct kunit *test)
{
	optimize_under_hits(test, kpt_opt_jcc, call_kpt_opt_jcc);
	optimize_under_hits(test, insn_at(kpt_opt_jcc, 2), call_kpt_opt_jcc);
}

static u32 call_kpt_opt_call(u32 v)
{
	return kpt_opt_call(v);
}

/* Where the callee of a region's call must find its return address. */
static void *callee_return_to;

static int callee_return_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* The callee returns to the text after the call, not to the detour. */
	HANDLER_CHECK(*(unsigned long *)regs->sp == (unsigned long)callee_return_to);
	atomic_inc(&pre2_hits);
	return 0;
}

/*
 * optimize_under_hits() on the region at @site, which ends with a call
 * of @callee: a probe there checks that it returns to @return_to.
 */
static void call_region_under_hits(struct kunit *test, void *site, void *callee,
				   void *return_to, u32 (*fn)(u32))
{
	struct kprobe probe;

	callee_return_to = return_to;
	init_probe(&probe, callee, NULL, 0, callee_return_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&probe));
	optimize_under_hits(test, site, fn);
	unregister_kprobe(&probe);
	KUNIT_EXPECT_GT(test, atomic_read(&pre2_hits), 0);
}

/* A call as the region's last instruction: a push and a jump in the detour. */
static void test_optimized_region_call(struct kunit *test)
{
	call_region_under_hits(test, kpt_opt_call, kpt_add1, insn_at(kpt_opt_call, 9),
			       call_kpt_opt_call);
}

static u32 call_kpt_opt_callmem(u32 v)
{
	return kpt_opt_callmem(v);
}

/*
 * An indirect call, RIP-relative, as the last instruction: a push and a
 * jmp through the same operand, displacement fixed up.
 */
static void test_optimized_region_indirect_call(struct kunit *test)
{
	call_region_under_hits(test, kpt_opt_callmem, kpt_c_add1,
			       insn_at(kpt_opt_callmem, 10), call_kpt_opt_callmem);
}

static u32 call_kpt_opt_tailind(u32 v)
{
	return kpt_opt_tailind(v);
}

/*
 * A function with an indirect jmp (a tail call): with IBT it may only
 * land on an ENDBR, and the kernel has no jump tables, so the function's
 * regions stay optimizable, the jmp itself copied as the last
 * instruction of one; without IBT it could be a jump table, and nothing
 * in the function is optimized.
 */
static void test_optimized_indirect_tail_call(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT)) {
		KUNIT_EXPECT_FALSE(test, optimizes(test, kpt_opt_tailind));
		KUNIT_EXPECT_EQ(test, kpt_opt_tailind(4), 7UL);
		return;
	}
	optimize_under_hits(test, kpt_opt_tailind, call_kpt_opt_tailind);
	optimize_under_hits(test, insn_at(kpt_opt_tailind, 3), call_kpt_opt_tailind);
}

static u32 call_kpt_opt_retpad(u32 v)
{
	return kpt_opt_retpad(v) + kpt_opt_callpad(v, kpt_c_add1);
}

/*
 * Padding after the last instruction that runs fills the region: int3s
 * after a ret (nothing reaches them), a nop after a call (the call
 * returns past it, to the end of the region).
 */
static void test_optimized_region_padding(struct kunit *test)
{
	optimize_under_hits(test, kpt_opt_retpad, call_kpt_opt_retpad);
	optimize_under_hits(test, kpt_opt_callpad, call_kpt_opt_retpad);
}

static u32 call_kpt_opt_tail(u32 v)
{
	return kpt_opt_tail(v);
}

/* A jmp as the last instruction, at the function's end (a tail call). */
static void test_optimized_region_tail_jmp(struct kunit *test)
{
	optimize_under_hits(test, kpt_opt_tail, call_kpt_opt_tail);
}

static u32 call_kpt_opt_ret(u32 v)
{
	return kpt_opt_ret(v);
}

/* A ret as the last instruction, at the function's end. */
static void test_optimized_region_ret(struct kunit *test)
{
	optimize_under_hits(test, kpt_opt_ret, call_kpt_opt_ret);
}

/*
 * A nop after a call is padding the call's return may skip, unless it is
 * a jump label's site: then the region is refused, as any region that
 * holds one.
 */
static void test_jump_label_after_call(struct kunit *test)
{
#ifdef CONFIG_JUMP_LABEL
	KUNIT_EXPECT_FALSE(test, optimizes(test, kpt_jl_call));
	static_branch_enable(&kpt_jl_call_key);
	KUNIT_EXPECT_EQ(test, kpt_jl_call(5, kpt_c_add1), 7UL);
	static_branch_disable(&kpt_jl_call_key);
	KUNIT_EXPECT_EQ(test, kpt_jl_call(5, kpt_c_add1), 6UL);
#else
	kunit_skip(test, "no jump labels");
#endif
}

static int check_ac_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(regs->flags & X86_EFLAGS_AC);
	HANDLER_CHECK(!(native_save_fl() & X86_EFLAGS_AC));
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * Handlers of an optimized probe inside a user-access section run with
 * EFLAGS.AC clear, as on the int3 path; the probed code keeps it (review
 * finding F7).
 */
static void test_optimized_clac(struct kunit *test)
{
	struct kprobe kp;

	if (!cpu_feature_enabled(X86_FEATURE_SMAP))
		kunit_skip(test, "no SMAP");
	init_probe(&kp, insn_at(kpt_uaccess, 3), NULL, 0, check_ac_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_uaccess(1), 6UL);	/* int3 path */
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kp.addr));
	KUNIT_EXPECT_EQ(test, kpt_uaccess(2), 7UL);	/* the detour */
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
}

/* Keeps RCU-tasks grace periods from ending while it runs. */
static int tasks_gp_blocker(void *started)
{
	complete(started);
	while (!kthread_should_stop())
		cpu_relax();
	return 0;
}

/*
 * A site whose jump was taken out (here by disable_kprobe()) and which
 * is then unregistered is freed only after an RCU-tasks grace period: a
 * task preempted in its detour before the handler call resumes and reads
 * it (review finding F1). Such a task is played by calling the detour
 * after unregistering, while a thread keeps the grace period from
 * ending; under KASAN, a site freed too early is reported.
 */
static void test_optimized_freed_after_tasks_gp(struct kunit *test)
{
	DECLARE_COMPLETION_ONSTACK(started);
	unsigned long (*detour)(unsigned long x);
	struct task_struct *blocker;
	struct kprobe kp, *site;

	/*
	 * The blocker spins: only a kernel that preempts it lets this test
	 * go on (with preempt=none, a one-CPU kernel would hang here).
	 */
	if (!preempt_model_preemptible())
		kunit_skip(test, "a task is preempted in a detour only on a preemptible kernel");
	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	site = probe_at(kpt_opt);
	KUNIT_ASSERT_TRUE(test, site && kprobe_optimized(site));
	detour = (void *)container_of(site, struct optimized_kprobe, kp)->optinsn.insn;

	blocker = kthread_run(tasks_gp_blocker, &started, "kprobes-tasks-gp");
	KUNIT_ASSERT_FALSE(test, IS_ERR(blocker));
	wait_for_completion(&started);
	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, site_optimized(kpt_opt));
	unregister_kprobe(&kp);
	/* The task that was on its way: no handler runs, the code goes on. */
	KUNIT_EXPECT_EQ(test, detour(10), 16UL);
	kthread_stop(blocker);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, kpt_opt(10), 16UL);
}
#endif /* CONFIG_OPTPROBES */
#endif /* CONFIG_X86_64 */

/* ---- behaviours the seeds document, each asserted ------------------------------ */

static int ctx_pre(struct kprobe *p, struct pt_regs *regs)
{
	/*
	 * Breakpoint path: interrupts off; elsewhere as the probed code had
	 * them. irqs_disabled() is a mask on some arches (arm: 0x80).
	 */
	HANDLER_CHECK(!!irqs_disabled() == !kprobe_ftrace(p));
	atomic_inc(&pre_hits);
	return 0;
}

static void ctx_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	HANDLER_CHECK(flags == 0);
	HANDLER_CHECK(!!irqs_disabled() == !kprobe_ftrace(p));
	atomic_inc(&post_hits);
}

/*
 * A post_handler's flags are 0; handlers on the breakpoint path run with
 * interrupts off, on the ftrace path as the probed code had them.
 */
static void test_handler_context(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, NULL, "kprobe_target", 0, ctx_pre, ctx_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	target(rand1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
}

/* A probe named "module:symbol" is that module's symbol. */
static void test_module_symbol_form(struct kunit *test)
{
	struct kprobe kp;

	if (!IS_MODULE(CONFIG_KPROBES_SANITY_TEST))
		kunit_skip(test, "the suite is built in");
	init_probe(&kp, NULL, KBUILD_MODNAME ":kprobe_target", 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, entry_of(kprobe_target));
	target(rand1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
}

#ifdef CONFIG_KRETPROBES
static int return_nonzero(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&ret_hits);
	return 1;
}

/* A kretprobe handler's return value is ignored. */
static void test_kretprobe_return_ignored(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "kprobe_target", NULL, return_nonzero, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 2);
}

/* Calls itself through a pointer, so that each call is a real one. */
static noinline u32 kprobe_recurse(u32 n)
{
	u32 (*self)(u32 n) = kprobe_recurse;

	OPTIMIZER_HIDE_VAR(self);
	return n ? self(n - 1) + 1 : 0;
}

static int entry_count(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&entry_hits);
	return 0;
}

/*
 * With every instance in use, a call is not tracked: nmissed counts it
 * and its entry_handler does not run either.
 */
static void test_kretprobe_missed_skips_entry(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&entry_hits, 0);
	init_rp(&rp, "kprobe_recurse", entry_count, return_count, 0, 1);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_EQ(test, kprobe_recurse(4), 4U);	/* 5 calls, 4 nested */
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 1);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 4);
}

static int calls_target2(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	target2(rand1);
	atomic_inc(&ret_hits);
	return 0;
}

/* A probe hit inside a kretprobe's handler is counted as missed. */
static void test_kretprobe_nested_hit(struct kunit *test)
{
	struct kretprobe rp;
	struct kprobe kp;

	atomic_set(&ret_hits, 0);
	init_probe(&kp, (void *)kprobe_target2, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	init_rp(&rp, "kprobe_target", NULL, calls_target2, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	target(rand1);
	unregister_kretprobe(&rp);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 1UL);
}

static DECLARE_COMPLETION(exit_target_done);

static noinline void kprobe_exit_target(void)
{
	kthread_complete_and_exit(&exit_target_done, 0);
}

static int exiting_thread(void *unused)
{
	kprobe_exit_target();
	return 0;
}

/*
 * A task exits inside a function whose return is hooked: its instance
 * is recycled, no handler runs, and unregistering finds nothing amiss
 * (KASAN and kmemleak watch).
 */
static void test_kretprobe_task_exits_in_flight(struct kunit *test)
{
	struct task_struct *t;
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&entry_hits, 0);
	reinit_completion(&exit_target_done);
	init_rp(&rp, "kprobe_exit_target", entry_count, return_count, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	t = kthread_run(exiting_thread, NULL, "kprobes-exit");
	if (IS_ERR(t)) {
		unregister_kretprobe(&rp);
		KUNIT_FAIL(test, "no thread: %ld", PTR_ERR(t));
		return;
	}
	wait_for_completion(&exit_target_done);
	/* Most likely the task is reaped, and its instance recycled, by now. */
	msleep(20);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
}
#endif /* CONFIG_KRETPROBES */

#if defined(CONFIG_X86_64) && defined(CONFIG_OPTPROBES)
static int opt_calls_target2(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(!irqs_disabled());	/* as kpt_opt's caller had them */
	target2(rand1);
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * A probe hit inside the handler of an optimized probe is counted as
 * missed; the optimized probe's handler runs with interrupts as the
 * probed code had them.
 */
static void test_optimized_nested_hit(struct kunit *test)
{
	struct kprobe opt, inner;

	init_probe(&inner, (void *)kprobe_target2, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inner));
	init_probe(&opt, kpt_opt, NULL, 0, opt_calls_target2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&opt));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt(1), 7UL);
	unregister_kprobes((struct kprobe *[]){ &opt, &inner }, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_EQ(test, inner.nmissed, 1UL);
}
#endif

/* ---- the 2026-11-25 review's findings, and what was left untested ------------ */

static int rcu_reader_blocker(void *started)
{
	rcu_read_lock();
	complete(started);
	while (!kthread_should_stop())
		cpu_relax();
	rcu_read_unlock();
	return 0;
}

struct unregister_job {
	struct kprobe *kp;
	struct completion done;
};

static int unregister_in_thread(void *arg)
{
	struct unregister_job *job = arg;

	unregister_kprobe(job->kp);
	complete(&job->done);
	return 0;
}

static int toggle_in_thread(void *arg)
{
	struct unregister_job *job = arg;

	if (!disable_kprobe(job->kp))
		enable_kprobe(job->kp);
	complete(&job->done);
	return 0;
}

/* Wait up to two seconds for @addr to have no probe site any more. */
static bool wait_unpublished(void *addr)
{
	int i;

	for (i = 0; i < 2000 && probe_at(addr); i++)
		usleep_range(1000, 2000);
	return !probe_at(addr);
}

/*
 * Unregistering waits for a grace period with no lock held: while an RCU
 * reader holds the grace period off, a second thread's unregister goes
 * through to its own wait (both probes leave the table), and a third
 * thread disables and enables another probe. The unregistering threads
 * return only once the reader is gone. (Review of 2026-11-25: the mutex
 * was held across the wait, and everybody queued behind it.)
 */
static void test_unregister_holds_no_lock(struct kunit *test)
{
	struct unregister_job one, two, toggle;
	DECLARE_COMPLETION_ONSTACK(started);
	struct kprobe a, b, c;
	struct task_struct *reader, *t1, *t2, *t3;
	unsigned long toggled;

	/* The reader spins: only a kernel that preempts it lets the others run. */
	if (!preempt_model_preemptible() || num_online_cpus() < 2)
		kunit_skip(test, "needs a preemptible kernel and two CPUs");
	init_probe(&a, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	init_probe(&b, (void *)kprobe_target2, NULL, 0, count_pre2, NULL);
	init_probe(&c, (void *)kprobe_recursed_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &a, &b, &c }, 3));
	one.kp = &a;
	two.kp = &b;
	toggle.kp = &c;
	init_completion(&one.done);
	init_completion(&two.done);
	init_completion(&toggle.done);

	reader = kthread_run(rcu_reader_blocker, &started, "kprobes-rcu-reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(reader));
	wait_for_completion(&started);
	t1 = kthread_run(unregister_in_thread, &one, "kprobes-unreg1");
	if (IS_ERR(t1))
		complete(&one.done);
	KUNIT_EXPECT_TRUE(test, wait_unpublished(a.addr));
	t2 = kthread_run(unregister_in_thread, &two, "kprobes-unreg2");
	if (IS_ERR(t2))
		complete(&two.done);
	t3 = kthread_run(toggle_in_thread, &toggle, "kprobes-toggle");
	if (IS_ERR(t3))
		complete(&toggle.done);
	KUNIT_EXPECT_FALSE(test, IS_ERR(t1) || IS_ERR(t2) || IS_ERR(t3));
	KUNIT_EXPECT_TRUE(test, wait_unpublished(b.addr));
	toggled = wait_for_completion_timeout(&toggle.done, 2 * HZ);
	KUNIT_EXPECT_TRUE(test, toggled);
	/* The grace period is really held off: both still wait for it. */
	KUNIT_EXPECT_FALSE(test, completion_done(&one.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&two.done));
	kthread_stop(reader);
	wait_for_completion(&one.done);
	wait_for_completion(&two.done);
	if (!toggled)
		wait_for_completion(&toggle.done);
	/* A thread that did not start left its probe registered. */
	if (IS_ERR(t1))
		unregister_kprobe(&a);
	if (IS_ERR(t2))
		unregister_kprobe(&b);
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_EQ(test, recursed_target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&c);
}

/* ---- unregistering without waiting ------------------------------------------ */

#if defined(CONFIG_X86_64) || defined(CONFIG_ARM64)
/* kpt_nop_sled's instructions: any of them may be probed, none is run. */
asmlinkage void kpt_nop_sled(void);
#define SLED_INSNS	256
#define SLED_INSN_SIZE	(IS_ENABLED(CONFIG_X86_64) ? 1 : 4)

static void *sled_insn(int i)
{
	return (u8 *)kpt_nop_sled + i * SLED_INSN_SIZE;
}

/* What the other CPU does while a lookup is paused: see below. */
static struct {
	struct kprobe *gone, *arrives;
	struct completion go;
	atomic_t done;
	int registered;
} index_race;

static int index_race_writer(void *unused)
{
	wait_for_completion(&index_race.go);
	/* Does not wait for the reader's grace period, which it cannot get. */
	kprobe_unregister_deferred(index_race.gone, NULL);
	index_race.registered = register_kprobe(index_race.arrives);
	atomic_set(&index_race.done, 1);
	return 0;
}

/* Between the lookup's load of an entry and its read of the site's address. */
static void index_race_between(void *unused)
{
	unsigned long timeout = jiffies + 30 * HZ;

	complete(&index_race.go);
	while (!atomic_read(&index_race.done) && time_before(jiffies, timeout))
		cpu_relax();
}

/*
 * A lookup that has read the first index entry on its way is paused
 * while another CPU unregisters that entry's probe without waiting and
 * registers one at another address whose search starts at the same
 * entry, which takes the entry over. The lookup must not return the
 * newcomer for the address asked for: it returns the probe asked for
 * (still alive until a grace period is over) or NULL. Both probes have
 * a post_handler, so that neither site is optimized (the optimizer
 * waits for every task to schedule).
 */
static void test_lookup_entry_reused(struct kunit *test)
{
	struct kprobe *gone, *arrives, *found;
	struct task_struct *writer;
	void *asked = NULL;
	int i, j, cpu;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	gone = kunit_kzalloc(test, sizeof(*gone), GFP_KERNEL);
	arrives = kunit_kzalloc(test, sizeof(*arrives), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gone);
	KUNIT_ASSERT_NOT_NULL(test, arrives);

	/* A pair of the sled's instructions whose searches start together. */
	for (i = 0, j = SLED_INSNS; i < SLED_INSNS && j == SLED_INSNS; i++) {
		init_probe(gone, sled_insn(i), NULL, 0, count_pre, count_post);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(gone));
		for (j = 0; j < SLED_INSNS; j++) {
			if (j != i && kprobes_test_index_slot(sled_insn(j)) ==
				      kprobes_test_index_slot(sled_insn(i)))
				break;
		}
		if (j == SLED_INSNS)
			unregister_kprobe(gone);
		else
			asked = gone->addr;
	}
	KUNIT_ASSERT_LT_MSG(test, j, SLED_INSNS, "no two instructions share an index entry");
	init_probe(arrives, sled_insn(j), NULL, 0, count_pre, count_post);

	index_race.gone = gone;
	index_race.arrives = arrives;
	index_race.registered = -1;
	init_completion(&index_race.go);
	atomic_set(&index_race.done, 0);
	migrate_disable();
	cpu = smp_processor_id();
	writer = kthread_create(index_race_writer, NULL, "kprobes-index-writer");
	if (IS_ERR(writer)) {
		migrate_enable();
		unregister_kprobe(gone);
		KUNIT_FAIL(test, "no writer thread: %ld", PTR_ERR(writer));
		return;
	}
	kthread_bind(writer, cpumask_any_but(cpu_online_mask, cpu));
	wake_up_process(writer);
	found = kprobes_test_lookup_between(asked, index_race_between, NULL);
	migrate_enable();

	KUNIT_EXPECT_EQ(test, atomic_read(&index_race.done), 1);
	/* A writer late past the pause still uses the probes: wait for it. */
	for (i = 0; i < 3000 && !atomic_read(&index_race.done); i++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, index_race.registered, 0);
	KUNIT_EXPECT_TRUE_MSG(test, !found || found == gone, "found the site at %pS for %pS",
			      found ? found->addr : NULL, asked);
	/* And once over, the newcomer is found for its own address only. */
	KUNIT_EXPECT_PTR_EQ(test, probe_at(arrives->addr), arrives);
	KUNIT_EXPECT_NULL(test, probe_at(asked));
	if (!index_race.registered)
		unregister_kprobe(arrives);
	kprobe_deferred_barrier();
}
#endif

static atomic_t released;
static struct kprobe *released_probe;

static void count_release(struct kprobe *p)
{
	released_probe = p;
	atomic_inc(&released);
}

#ifdef CONFIG_TREE_RCU
/* Exported for rcutorture, declared in kernel/rcu/rcu.h only. */
unsigned long rcu_get_gp_seq(void);

/* Grace periods completed so far: rcu_get_gp_seq()'s counter part. */
static unsigned long rcu_gps_completed(void)
{
	return rcu_get_gp_seq() >> 2;
}
#else
static unsigned long rcu_gps_completed(void)
{
	return 0;
}
#endif

static DECLARE_COMPLETION(release_entered);
static DECLARE_COMPLETION(release_go);
static DECLARE_COMPLETION(barrier_returned);
static atomic_t barrier_done;

/* A release callback that waits for the test's word. */
static void held_release(struct kprobe *p)
{
	complete(&release_entered);
	wait_for_completion(&release_go);
	atomic_inc(&released);
}

static int barrier_in_thread(void *unused)
{
	kprobe_deferred_barrier();
	atomic_set(&barrier_done, 1);
	complete(&barrier_returned);
	return 0;
}

/*
 * kprobe_deferred_barrier() waits for a release callback that is running:
 * its probe is off the pending list by then, and the barrier once took
 * an empty list for "nothing to wait for".
 */
static void test_deferred_barrier_waits_for_callback(struct kunit *test)
{
	struct task_struct *t;
	struct kprobe kp;

	atomic_set(&released, 0);
	atomic_set(&barrier_done, 0);
	reinit_completion(&release_entered);
	reinit_completion(&release_go);
	reinit_completion(&barrier_returned);
	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_ASSERT_EQ(test, 0, kprobe_unregister_deferred(&kp, held_release));
	if (!wait_for_completion_timeout(&release_entered, 30 * HZ)) {
		complete(&release_go);
		KUNIT_FAIL(test, "not released in 30 s");
		return;
	}
	t = kthread_run(barrier_in_thread, NULL, "kprobes-barrier");
	if (IS_ERR(t)) {
		complete(&release_go);
		kprobe_deferred_barrier();
		KUNIT_FAIL(test, "no thread: %ld", PTR_ERR(t));
		return;
	}
	/* Long enough for a barrier that does not wait to have returned. */
	msleep(200);
	KUNIT_EXPECT_EQ(test, atomic_read(&barrier_done), 0);
	complete(&release_go);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&barrier_returned, 30 * HZ));
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
}

/*
 * kprobe_unregister_deferred(): no hit after it returns, the probe back
 * through its callback, once, then registrable again; a probe not
 * registered, or deferred twice, is refused with -EINVAL and never
 * released.
 */
static void test_deferred_unregister(struct kunit *test)
{
	struct kprobe kp, never;

	atomic_set(&released, 0);
	released_probe = NULL;
	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);

	KUNIT_EXPECT_EQ(test, 0, kprobe_unregister_deferred(&kp, count_release));
	KUNIT_EXPECT_NULL(test, probe_at(kp.addr));
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, -EINVAL, kprobe_unregister_deferred(&kp, count_release));
	/* Pending or released by now: either way, nothing to unregister. */
	unregister_kprobe(&kp);

	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
	KUNIT_EXPECT_PTR_EQ(test, released_probe, &kp);

	init_probe(&never, (void *)kprobe_target2, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, -EINVAL, kprobe_unregister_deferred(&never, count_release));
	KUNIT_EXPECT_NULL(test, never.addr);
	KUNIT_EXPECT_EQ(test, -EINVAL, kprobe_unregister_deferred(NULL, count_release));

	/* Released: registrable again, and unregistered with no callback. */
	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, 0, kprobe_unregister_deferred(&kp, NULL));
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
	KUNIT_EXPECT_NULL(test, probe_at(kp.addr));
}

/*
 * The release waits for the grace period, and only it: while an RCU
 * reader holds the grace period off, the unregister call returns, the
 * probe is out, register_kprobe() refuses it (-EBUSY) and it is not
 * released; once the reader is gone it is.
 */
static void test_deferred_waits_for_readers(struct kunit *test)
{
	DECLARE_COMPLETION_ONSTACK(started);
	struct task_struct *reader;
	struct kprobe kp;

	if (!preempt_model_preemptible() || num_online_cpus() < 2)
		kunit_skip(test, "needs a preemptible kernel and two CPUs");
	atomic_set(&released, 0);
	init_probe(&kp, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	reader = kthread_run(rcu_reader_blocker, &started, "kprobes-rcu-reader");
	if (IS_ERR(reader)) {
		unregister_kprobe(&kp);
		KUNIT_FAIL(test, "no reader thread");
		return;
	}
	wait_for_completion(&started);

	KUNIT_EXPECT_EQ(test, 0, kprobe_unregister_deferred(&kp, count_release));
	KUNIT_EXPECT_NULL(test, probe_at(kp.addr));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	msleep(100);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 0);
	KUNIT_EXPECT_EQ(test, -EBUSY, register_kprobe(&kp));
	/* Refused, and its counter kept (register's error path gives back the failed probe's). */
	KUNIT_EXPECT_NOT_NULL(test, kp.nhit);
	/*
	 * The synchronous unregister leaves a pending probe alone: its hit
	 * counter, which a handler still running may count into, stays
	 * until its release. (Only here is the release surely pending.)
	 */
	unregister_kprobe(&kp);
	KUNIT_EXPECT_NOT_NULL(test, kp.nhit);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 0);

	kthread_stop(reader);
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
}

#ifdef CONFIG_KRETPROBES
/*
 * Third review, P2: a return probe waiting for its deferred release is
 * the core's until then. register_kretprobe() refuses it with -EBUSY,
 * unregister_kretprobe() and a second kretprobe_unregister_deferred()
 * leave it be; none of them touches its instance pool, which a call in
 * flight may still take from, and which its release alone frees (once).
 */
static void test_kretprobe_pending_release_kept(struct kunit *test)
{
	DECLARE_COMPLETION_ONSTACK(started);
	struct task_struct *reader;
	struct kretprobe *rp;
	void *pool;

	if (!preempt_model_preemptible() || num_online_cpus() < 2)
		kunit_skip(test, "needs a preemptible kernel and two CPUs");
	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rp);
	atomic_set(&rp_released, 0);
	init_rp(rp, NULL, NULL, return_count, 0, 0);
	rp->kp.addr = (kprobe_opcode_t *)kprobe_target;
	if (register_kretprobe(rp)) {
		kfree(rp);
		KUNIT_FAIL(test, "register_kretprobe() failed");
		return;
	}
	reader = kthread_run(rcu_reader_blocker, &started, "kprobes-rcu-reader");
	if (IS_ERR(reader)) {
		unregister_kretprobe(rp);
		kfree(rp);
		KUNIT_FAIL(test, "no reader thread");
		return;
	}
	wait_for_completion(&started);

	KUNIT_EXPECT_EQ(test, 0, kretprobe_unregister_deferred(rp, free_released_rp));
	pool = instance_pool(rp);
	KUNIT_EXPECT_NOT_NULL(test, pool);
	KUNIT_EXPECT_EQ(test, -EBUSY, register_kretprobe(rp));
	KUNIT_EXPECT_PTR_EQ(test, instance_pool(rp), pool);
	unregister_kretprobe(rp);
	KUNIT_EXPECT_PTR_EQ(test, instance_pool(rp), pool);
	KUNIT_EXPECT_EQ(test, -EINVAL, kretprobe_unregister_deferred(rp, free_released_rp));
	KUNIT_EXPECT_PTR_EQ(test, instance_pool(rp), pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&rp_released), 0);

	kthread_stop(reader);
	kprobe_deferred_barrier();
	/* Its callback freed it. */
	KUNIT_EXPECT_EQ(test, atomic_read(&rp_released), 1);
}
#endif

/*
 * The release runs that called run_release(): a run is one pass of the
 * release work, which waits for one grace period and then calls its
 * probes' callbacks one after the other without sleeping, so a callback
 * called by another task, or by the same one after it slept, starts a
 * new run. The callbacks never run two at once (one work item).
 */
static struct task_struct *releasing_task;
static unsigned long releasing_nvcsw;
static int release_runs;

static void run_release(struct kprobe *p)
{
	if (current != releasing_task || current->nvcsw != releasing_nvcsw) {
		releasing_task = current;
		releasing_nvcsw = current->nvcsw;
		release_runs++;
	}
	atomic_inc(&released);
}

/*
 * Probes unregistered while the release work waits share its next grace
 * period. The first probe's release callback holds the work until the
 * others are all unregistered, so the work's next run finds them all
 * pending at once, whatever the speed of the machine: they must all be
 * released by that one run (one grace period), not one run each. (The
 * system's grace period count, printed, is no measure: other RCU users
 * complete theirs meanwhile, from 1 to 8 of them in that window on the
 * guests; and without the hold, the count over the whole unregister loop
 * depends on how fast each call is against a grace period: under TCG it
 * was seen from 2 to 34 of 64.)
 */
#define DEFERRED_MANY	64

static void test_deferred_shares_grace_periods(struct kunit *test)
{
	struct kprobe *kps;
	unsigned long gps;
	int i, ok = 0;

	kps = kunit_kcalloc(test, DEFERRED_MANY, sizeof(*kps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	atomic_set(&released, 0);
	releasing_task = NULL;
	release_runs = 0;
	reinit_completion(&release_entered);
	reinit_completion(&release_go);
	/* One site, many members: each unregister is a batch of its own. */
	for (i = 0; i < DEFERRED_MANY; i++) {
		init_probe(&kps[i], (void *)kprobe_target, NULL, 0, count_pre, NULL);
		if (register_kprobe(&kps[i]))
			break;
	}
	KUNIT_ASSERT_EQ(test, i, DEFERRED_MANY);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), DEFERRED_MANY);

	ok += !kprobe_unregister_deferred(&kps[0], held_release);
	if (!wait_for_completion_timeout(&release_entered, 30 * HZ))
		KUNIT_FAIL(test, "first probe not released in 30 s");
	for (i = 1; i < DEFERRED_MANY; i++)
		ok += !kprobe_unregister_deferred(&kps[i], run_release);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 0);
	gps = rcu_gps_completed();
	complete(&release_go);
	kprobe_deferred_barrier();
	gps = rcu_gps_completed() - gps;
	kunit_info(test, "%d probes released by %d run(s), %lu grace periods meanwhile",
		   DEFERRED_MANY - 1, release_runs, gps);
	KUNIT_EXPECT_EQ(test, ok, DEFERRED_MANY);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), DEFERRED_MANY);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), DEFERRED_MANY);
	KUNIT_EXPECT_EQ(test, release_runs, 1);
	KUNIT_EXPECT_NULL(test, probe_at((void *)kprobe_target));
}

/*
 * A deferred and a synchronous unregister on one aggregate site: the
 * member left keeps firing until it goes too, and both go.
 */
static void test_deferred_mixed_on_aggregate(struct kunit *test)
{
	struct kprobe a, b;

	atomic_set(&released, 0);
	init_probe(&a, (void *)kprobe_target, NULL, 0, count_pre, NULL);
	init_probe(&b, (void *)kprobe_target, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &a, &b }, 2));
	KUNIT_EXPECT_EQ(test, 0, kprobe_unregister_deferred(&a, count_release));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_TRUE(test, site_holds(probe_at(b.addr), &b));
	KUNIT_EXPECT_FALSE(test, site_holds(probe_at(b.addr), &a));
	unregister_kprobe(&b);
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	KUNIT_EXPECT_NULL(test, probe_at(b.addr));
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
}

#if defined(CONFIG_X86_64) && defined(CONFIG_OPTPROBES)
#define DEFERRED_OPT_ROUNDS	20

/*
 * Probes unregistered without waiting at a site the optimizer works on,
 * while another CPU calls through it: in odd rounds once the jump is in
 * (the site then retires, its text written back by the optimizer's
 * work), in even rounds right after registering, the site queued for
 * the optimizer. Every release runs, the calls keep their result, and
 * the site ends unprobed; KASAN (main configuration) watches the
 * optimizer for a site freed under it.
 */
static void test_deferred_optimized_sites(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe *kps;
	int i, ok = 0;

	kps = kunit_kcalloc(test, DEFERRED_OPT_ROUNDS, sizeof(*kps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	atomic_set(&released, 0);
	hammer = start_hammer_on(test, call_kpt_opt);
	for (i = 0; i < DEFERRED_OPT_ROUNDS; i++) {
		init_probe(&kps[i], kpt_opt, NULL, 0, count_pre, NULL);
		if (register_kprobe(&kps[i]))
			break;
		if (i & 1) {
			wait_for_kprobe_optimizer();
			KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
		}
		ok += !kprobe_unregister_deferred(&kps[i], count_release);
	}
	KUNIT_EXPECT_EQ(test, i, DEFERRED_OPT_ROUNDS);
	kprobe_deferred_barrier();
	wait_for_kprobe_optimizer();
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, ok, i);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), i);
	KUNIT_EXPECT_GT(test, atomic_read(&hammer_calls), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt(10), 16UL);
}
#endif

#ifdef CONFIG_KPROBES_ON_FTRACE
static void ipmodify_holder(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

/* Another user that may change the IP, as a livepatch does. */
static struct ftrace_ops ipmodify_holder_ops = {
	.func = ipmodify_holder,
	.flags = FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED | FTRACE_OPS_FL_IPMODIFY,
};

/* Calls of the test's own thread, at each of two kernel functions' entry. */
static atomic_t entry_f_hits, entry_g_hits;

static int entry_f_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current == test_task)
		atomic_inc(&entry_f_hits);
	return 0;
}

static int entry_g_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current == test_task)
		atomic_inc(&entry_g_hits);
	return 0;
}

static void entry_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

/*
 * Two probes with a post_handler at kernel function entries (ftrace
 * sites, in the ftrace_ops that may change the IP), switched off with
 * the enabled switch while another user that may change the IP takes
 * one of the functions: switched on again, the other one is armed and
 * fires, and the switch reports the one that could not be (-EBUSY), as
 * the tree does. Once that user is gone, switching off and on arms both,
 * and unregistering works. (Review of 2026-11-25, N2: neither was armed.)
 */
static void test_ftrace_arming_each_site(struct kunit *test)
{
	struct kprobe f, g;
	int ret;

	atomic_set(&entry_f_hits, 0);
	atomic_set(&entry_g_hits, 0);
	init_probe(&f, NULL, "ns_to_timespec64", 0, entry_f_pre, entry_post);
	init_probe(&g, NULL, "ns_to_kernel_old_timeval", 0, entry_g_pre, entry_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &f, &g }, 2));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&f) && kprobe_ftrace(&g));
	KUNIT_EXPECT_EQ(test, 0, kprobes_set_all_armed(false));
	ret = ftrace_set_filter_ip(&ipmodify_holder_ops, (unsigned long)f.addr, 0, 0);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, 0, register_ftrace_function(&ipmodify_holder_ops));
	ret = kprobes_set_all_armed(true);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	ns_to_kernel_old_timeval(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_g_hits), 1);
	ns_to_timespec64(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 0);

	unregister_ftrace_function(&ipmodify_holder_ops);
	ftrace_free_filter(&ipmodify_holder_ops);
	KUNIT_EXPECT_EQ(test, 0, kprobes_set_all_armed(false));
	KUNIT_EXPECT_EQ(test, 0, kprobes_set_all_armed(true));
	ns_to_timespec64(5);
	ns_to_kernel_old_timeval(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_g_hits), 2);
	unregister_kprobes((struct kprobe *[]){ &f, &g }, 2);
	ns_to_timespec64(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 1);
}

/* A plain ftrace user beside ours, as the function tracer is. */
static atomic_t plain_user_hits;

static void plain_user(unsigned long ip, unsigned long parent_ip,
		       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	if (current == test_task)
		atomic_inc(&plain_user_hits);
}

static struct ftrace_ops plain_user_ops = {
	.func = plain_user,
};

/* ipmodify_holder_ops' twin: an ops is not used again after ftrace_free_filter(). */
static struct ftrace_ops ipmodify_holder2_ops = {
	.func = ipmodify_holder,
	.flags = FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED | FTRACE_OPS_FL_IPMODIFY,
};

/*
 * Function entries joining and leaving kprobes' ftrace filters while
 * those are in use (so that ftrace updates only the changed functions'
 * records): one shared with a plain ftrace user, which must keep being
 * called through our arrival and departure (on x86-64 its own
 * trampoline is left and taken back); one held by a user that may
 * change the IP, which must refuse our probe with a post_handler (the
 * IPMODIFY ops) and leave every other site as it was, then take it once
 * that user is gone.
 */
static int entry_nop_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static void test_ftrace_entry_joins_busy_filter(struct kunit *test)
{
	struct kprobe f, g, h;
	int ret;

	atomic_set(&entry_f_hits, 0);
	atomic_set(&entry_g_hits, 0);
	atomic_set(&plain_user_hits, 0);
	/* Our filters in use: a probe with and one without a post_handler. */
	init_probe(&g, NULL, "ns_to_kernel_old_timeval", 0, entry_g_pre, entry_post);
	init_probe(&h, NULL, "jiffies_to_usecs", 0, entry_nop_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes((struct kprobe *[]){ &g, &h }, 2));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&g) && kprobe_ftrace(&h));

	/* Shared with a plain user: both called, and the user after we go. */
	ret = ftrace_set_filter_ip(&plain_user_ops, (unsigned long)ns_to_timespec64, 0, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, 0, register_ftrace_function(&plain_user_ops));
	ns_to_timespec64(5);
	init_probe(&f, NULL, "ns_to_timespec64", 0, entry_f_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&f));
	ns_to_timespec64(5);
	unregister_kprobe(&f);
	kprobe_deferred_barrier();
	ns_to_timespec64(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&plain_user_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 1);
	unregister_ftrace_function(&plain_user_ops);
	ftrace_free_filter(&plain_user_ops);

	/* Held by a user that may change the IP: refused, nothing changed. */
	ret = ftrace_set_filter_ip(&ipmodify_holder2_ops, (unsigned long)ns_to_timespec64, 0, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, 0, register_ftrace_function(&ipmodify_holder2_ops));
	init_probe(&f, NULL, "ns_to_timespec64", 0, entry_f_pre, entry_post);
	KUNIT_EXPECT_EQ(test, -EBUSY, register_kprobe(&f));
	ns_to_timespec64(5);
	ns_to_kernel_old_timeval(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_g_hits), 1);
	unregister_ftrace_function(&ipmodify_holder2_ops);
	ftrace_free_filter(&ipmodify_holder2_ops);

	/* The holder gone: ours, and the site beside it still works. */
	init_probe(&f, NULL, "ns_to_timespec64", 0, entry_f_pre, entry_post);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&f));
	ns_to_timespec64(5);
	ns_to_kernel_old_timeval(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_g_hits), 2);
	unregister_kprobes((struct kprobe *[]){ &f, &g, &h }, 3);
	kprobe_deferred_barrier();
	ns_to_timespec64(5);
	ns_to_kernel_old_timeval(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_f_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&entry_g_hits), 2);
}

/*
 * Kernel functions with an ftrace site each (this file has none: lib/ is
 * built without the function tracer's flags), safe to call from a test,
 * for the case below; call_filter_fns() calls each once.
 */
static void *const filter_fns[] = {
	jiffies_to_msecs, jiffies_to_usecs, mktime64, ns_to_kernel_old_timeval,
	set_normalized_timespec64, ns_to_timespec64, __msecs_to_jiffies,
	__usecs_to_jiffies, timespec64_to_jiffies, jiffies_to_timespec64,
	jiffies_to_clock_t, clock_t_to_jiffies, time64_to_tm,
	jiffies64_to_nsecs, jiffies64_to_msecs, nsecs_to_jiffies64, nsecs_to_jiffies,
	__round_jiffies, __round_jiffies_relative, round_jiffies,
	round_jiffies_relative, __round_jiffies_up, __round_jiffies_up_relative,
	round_jiffies_up, round_jiffies_up_relative,
};

#define NR_FILTER_FNS	ARRAY_SIZE(filter_fns)

/* Set while call_filter_fns() runs: the kernel calls them from the test's task too. */
static bool filter_calling;

static void call_filter_fns(void)
{
	struct timespec64 ts = { .tv_sec = 1 };
	unsigned long j = READ_ONCE(jiffies);
	struct tm tm;

	WRITE_ONCE(filter_calling, true);

	jiffies_to_msecs(j);
	jiffies_to_usecs(j);
	mktime64(2026, 11, 28, 0, 0, 0);
	ns_to_kernel_old_timeval(j);
	set_normalized_timespec64(&ts, 1, j);
	ns_to_timespec64(j);
	__msecs_to_jiffies(j);
	__usecs_to_jiffies(j);
	timespec64_to_jiffies(&ts);
	jiffies_to_timespec64(j, &ts);
	jiffies_to_clock_t(j);
	clock_t_to_jiffies(j);
	time64_to_tm(j, 0, &tm);
	jiffies64_to_nsecs(j);
	jiffies64_to_msecs(j);
	nsecs_to_jiffies64(j);
	nsecs_to_jiffies(j);
	__round_jiffies(j, 0);
	__round_jiffies_relative(j, 0);
	round_jiffies(j);
	round_jiffies_relative(j);
	__round_jiffies_up(j, 0);
	__round_jiffies_up_relative(j, 0);
	round_jiffies_up(j);
	round_jiffies_up_relative(j);
	WRITE_ONCE(filter_calling, false);
}

static struct kprobe *filter_probes;
static atomic_t filter_fn_hits[NR_FILTER_FNS];

/* call_filter_fns()' calls only: an interrupt may call these functions too. */
static int filter_fn_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (READ_ONCE(filter_calling) && current == test_task && in_task())
		atomic_inc(&filter_fn_hits[p - filter_probes]);
	return 0;
}

static atomic_t plain_user2_hits;

static void plain_user2(unsigned long ip, unsigned long parent_ip,
			struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	if (READ_ONCE(filter_calling) && current == test_task && in_task())
		atomic_inc(&plain_user2_hits);
}

static struct ftrace_ops plain_user2_ops = {
	.func = plain_user2,
};

/*
 * Our plain filter growing one function at a time past the sizes where
 * ftrace gives it more buckets (5 and 17 functions), then losing every
 * other one in one update: ftrace changes it in place between those
 * sizes and copies it at them. A plain user on every function makes
 * each call look the function up in our filter (two ops on a record
 * call the list function, which asks each ops' filter), so a function
 * missing from it, or one left in it, shows as a hit missing or extra.
 */
static void test_ftrace_filter_grows_in_place(struct kunit *test)
{
	unsigned long ips[NR_FILTER_FNS];
	int i, ret, calls = 0;

	filter_probes = kunit_kcalloc(test, NR_FILTER_FNS, sizeof(*filter_probes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, filter_probes);
	for (i = 0; i < NR_FILTER_FNS; i++) {
		atomic_set(&filter_fn_hits[i], 0);
		ips[i] = (unsigned long)filter_fns[i];
	}
	atomic_set(&plain_user2_hits, 0);
	ret = ftrace_set_filter_ips(&plain_user2_ops, ips, NR_FILTER_FNS, 0, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, 0, register_ftrace_function(&plain_user2_ops));

	for (i = 0; i < NR_FILTER_FNS; i++) {
		init_probe(&filter_probes[i], filter_fns[i], NULL, 0, filter_fn_pre, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&filter_probes[i]));
		KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&filter_probes[i]));
		call_filter_fns();
		calls++;
	}
	for (i = 0; i < NR_FILTER_FNS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&filter_fn_hits[i]), NR_FILTER_FNS - i,
				    "filter_fn %d", i);

	/* Every other one leaves, in one update at the barrier. */
	for (i = 0; i < NR_FILTER_FNS; i += 2)
		unregister_kprobe(&filter_probes[i]);
	kprobe_deferred_barrier();
	call_filter_fns();
	calls++;
	for (i = 0; i < NR_FILTER_FNS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&filter_fn_hits[i]),
				    NR_FILTER_FNS - i + (i & 1), "filter_fn %d", i);

	/* And come back, one at a time, among those that stayed. */
	for (i = 0; i < NR_FILTER_FNS; i += 2) {
		init_probe(&filter_probes[i], filter_fns[i], NULL, 0, filter_fn_pre, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&filter_probes[i]));
	}
	call_filter_fns();
	calls++;
	for (i = 0; i < NR_FILTER_FNS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&filter_fn_hits[i]),
				    NR_FILTER_FNS - i + 1 + (i & 1), "filter_fn %d", i);

	for (i = 0; i < NR_FILTER_FNS; i++)
		unregister_kprobe(&filter_probes[i]);
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, kprobes_test_ftrace_users(), 0);
	call_filter_fns();
	calls++;
	KUNIT_EXPECT_EQ(test, atomic_read(&filter_fn_hits[1]), NR_FILTER_FNS - 1 + 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&plain_user2_hits), calls * NR_FILTER_FNS);
	unregister_ftrace_function(&plain_user2_ops);
	ftrace_free_filter(&plain_user2_ops);
}

/*
 * Threads attaching and detaching probes at the entries of the same few
 * functions at once, so that each one's filter change meets the others':
 * a probe fires on its thread's call as soon as it is registered, and no
 * longer once it is unregistered; every other round has a post_handler,
 * so the functions move between our two ftrace_ops too. Once all are
 * gone, no ip is left in our filters and (x86-64) every site is its nop
 * again.
 */
#define NR_RACERS	3
#define RACE_ROUNDS	40

static void *const race_fns[] = {
	jiffies_to_msecs, jiffies_to_usecs, jiffies64_to_nsecs, nsecs_to_jiffies,
};

struct entry_racer {
	struct kprobe kp;
	struct task_struct *task;
	struct completion done;
	bool calling;		/* the racer's own call only */
	atomic_t hits;
	int id, failed, wrong;
};

static kprobe_opcode_t *race_sites[ARRAY_SIZE(race_fns)];
static unsigned long race_sink;

static int racer_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct entry_racer *r = container_of(p, struct entry_racer, kp);

	if (current == r->task && READ_ONCE(r->calling) && in_task())
		atomic_inc(&r->hits);
	return 0;
}

static void racer_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static void racer_call(struct entry_racer *r, int fn)
{
	unsigned long j = READ_ONCE(jiffies);

	WRITE_ONCE(r->calling, true);
	switch (fn) {
	case 0:
		j = jiffies_to_msecs(j);
		break;
	case 1:
		j = jiffies_to_usecs(j);
		break;
	case 2:
		j = jiffies64_to_nsecs(j);
		break;
	default:
		j = nsecs_to_jiffies(j);
		break;
	}
	WRITE_ONCE(r->calling, false);
	WRITE_ONCE(race_sink, j);
}

static int entry_racer_fn(void *data)
{
	struct entry_racer *r = data;
	int i, fn;

	for (i = 0; i < RACE_ROUNDS; i++) {
		fn = (r->id + i) % ARRAY_SIZE(race_fns);
		init_probe(&r->kp, race_fns[fn], NULL, 0, racer_pre, (i & 1) ? racer_post : NULL);
		atomic_set(&r->hits, 0);
		if (register_kprobe(&r->kp)) {
			r->failed++;
			continue;
		}
		WRITE_ONCE(race_sites[fn], r->kp.addr);
		racer_call(r, fn);
		if (atomic_read(&r->hits) != 1)
			r->wrong++;
		unregister_kprobe(&r->kp);
		racer_call(r, fn);
		if (atomic_read(&r->hits) != 1)
			r->wrong++;
		cond_resched();
	}
	complete(&r->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void test_ftrace_entry_attach_race(struct kunit *test)
{
#ifdef CONFIG_X86_64
	static const u8 nop5[] = { BYTES_NOP5 };
#endif
	struct entry_racer *racers;
	int i;

	racers = kunit_kcalloc(test, NR_RACERS, sizeof(*racers), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, racers);
	for (i = 0; i < NR_RACERS; i++) {
		racers[i].id = i;
		init_completion(&racers[i].done);
		racers[i].task = kthread_create(entry_racer_fn, &racers[i], "kprobes-race%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(racers[i].task));
	}
	for (i = 0; i < NR_RACERS; i++)
		wake_up_process(racers[i].task);
	for (i = 0; i < NR_RACERS; i++) {
		wait_for_completion(&racers[i].done);
		kthread_stop(racers[i].task);
		KUNIT_EXPECT_EQ_MSG(test, racers[i].failed, 0, "racer %d", i);
		KUNIT_EXPECT_EQ_MSG(test, racers[i].wrong, 0, "racer %d", i);
	}
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, kprobes_test_ftrace_users(), 0);
	for (i = 0; i < ARRAY_SIZE(race_fns); i++)
		KUNIT_EXPECT_NOT_NULL_MSG(test, race_sites[i], "%ps", race_fns[i]);
#ifdef CONFIG_X86_64
	for (i = 0; i < ARRAY_SIZE(race_fns); i++)
		if (race_sites[i])
			KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(race_sites[i], nop5, sizeof(nop5)),
					    "%ps", race_fns[i]);
#endif
}
#endif

#ifdef CONFIG_FAILSLAB
/*
 * The probes test_enomem_each_allocation() registers, one kind each,
 * and how many of their allocations to fail in turn. A kretprobe's: the
 * core's list of its probes, and rethook's; the next ones are objpool's,
 * which falls back to kmalloc when vmalloc fails, but warns first.
 */
static const struct {
	void *addr;
	bool kret;
	int nth_max;
} enomem_cases[] = {
	{ kprobe_target, false, 400 },	/* an entry: an ftrace site where there is one */
#ifdef CONFIG_X86_64
	{ kpt_opt, false, 400 },	/* a breakpoint site that may be optimized */
#endif
#ifdef CONFIG_KRETPROBES
	{ kprobe_target, true, 2 },
#endif
};

/*
 * Register case @i with the @n-th slab allocation of this task failing
 * (fault injection's fail-nth), into *@ret. Return true when the call
 * made fewer than @n allocations: none failed.
 */
static bool register_failing_nth(struct kunit *test, int i, int n, int *ret)
{
	struct kretprobe rp = { .handler = return_count };
	struct kprobe kp;
	void *addr;
	int left;

	init_probe(&kp, enomem_cases[i].addr, NULL, 0, count_pre, NULL);
	rp.kp.addr = enomem_cases[i].addr;
	current->fail_nth = n;
	*ret = enomem_cases[i].kret ? register_kretprobe(&rp) : register_kprobe(&kp);
	left = current->fail_nth;
	current->fail_nth = 0;
	addr = enomem_cases[i].kret ? rp.kp.addr : kp.addr;
	if (*ret) {
		KUNIT_EXPECT_EQ_MSG(test, *ret, -ENOMEM, "allocation %d of case %d", n, i);
		KUNIT_EXPECT_NULL_MSG(test, probe_at(addr), "case %d after failing", i);
		return false;
	}
	KUNIT_EXPECT_NOT_NULL(test, probe_at(addr));
	if (enomem_cases[i].kret)
		unregister_kretprobe(&rp);
	else
		unregister_kprobe(&kp);
	return left > 0;
}

/*
 * Each allocation registering makes fails in turn: every failure is
 * -ENOMEM and leaves nothing registered, nor leaked (kmemleak, at the
 * end of make test's guest run); once none fails, the probe registers.
 * The guest lets failslab fail GFP_KERNEL allocations (ignore-gfp-wait).
 */
static void test_enomem_each_allocation(struct kunit *test)
{
	int i, n, ret, failed = 0;

	for (i = 0; i < ARRAY_SIZE(enomem_cases); i++) {
		for (n = 1; n <= enomem_cases[i].nth_max; n++) {
			if (register_failing_nth(test, i, n, &ret))
				break;
			failed += !!ret;
		}
		if (enomem_cases[i].nth_max == 400)
			KUNIT_EXPECT_LT_MSG(test, n, 400, "case %d never registered", i);
	}
	KUNIT_EXPECT_EQ(test, target(rand1), rand1 / DIV_FACTOR);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	if (!failed)
		kunit_skip(test, "no allocation failed: failslab ignores GFP_KERNEL here");
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Third review, P5: a function entry's probe unregistered while each of
 * its allocations fails in turn (none, once it needs none). Its site
 * goes whatever fails, so its ip
 * must leave our ftrace filters too: had it stayed counted, a later
 * probe there would count it twice and its removal would leave our ops
 * registered with an empty filter, which traces every function.
 */
static void test_enomem_ftrace_site_leaves(struct kunit *test)
{
	struct timespec64 ts;
	struct kprobe kp;
	void *control;
	int n, left;

	current->fail_nth = 1;
	control = kmalloc(16, GFP_KERNEL);
	current->fail_nth = 0;
	kfree(control);
	if (control)
		kunit_skip(test, "failslab ignores GFP_KERNEL here");
	kprobe_deferred_barrier();
	if (kprobes_test_ftrace_users())
		kunit_skip(test, "other probes are at function entries");
	/* Until unregistering makes fewer allocations than @n. */
	for (n = 1; n <= 64; n++) {
		init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		KUNIT_ASSERT_TRUE(test, kprobe_ftrace(&kp));
		current->fail_nth = n;
		unregister_kprobe(&kp);
		left = current->fail_nth;
		current->fail_nth = 0;
		kprobe_deferred_barrier();
		/* Not on: a count off by one ends with our ops tracing everything. */
		KUNIT_ASSERT_EQ_MSG(test, kprobes_test_ftrace_users(), 0,
				    "allocation %d failed", n);
		KUNIT_EXPECT_NULL(test, probe_at(kp.addr));
		if (left)
			break;
	}
	/* Once more, whole: in and out of the filter. */
	init_probe(&kp, NULL, FTRACE_TARGET, 0, ftrace_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ts = ns_to_timespec64(5);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
	kprobe_deferred_barrier();
	KUNIT_EXPECT_EQ(test, kprobes_test_ftrace_users(), 0);
}
#endif
#endif

#ifdef CONFIG_X86_64
#ifdef CONFIG_OPTPROBES
/*
 * Review of 2026-11-25, N1: a site whose last probe went is "retiring",
 * out of the index with its jump still in the text. The query file
 * decoded the function without writing such jumps back first, read the
 * jump as an instruction and kept the wrong decode: a probe could then
 * go inside an instruction (kpt_opt+5, in the add at +3), and one on the
 * add itself was refused. kpt_opt's jump covers the mov at +0 and the
 * add at +3.
 */
static void test_query_while_retiring(struct kunit *test)
{
	struct kprobe kp, later;
	char *answer;

	answer = kunit_kzalloc(test, 1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, answer);
	init_probe(&kp, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_ASSERT_TRUE(test, site_optimized(kpt_opt));
	kprobes_test_pause_retiring(true);
	unregister_kprobe(&kp);
	/* Still retiring: the jump is there. Its function decoded afresh: */
	KUNIT_EXPECT_EQ(test, *(u8 *)kpt_opt, JMP32_INSN_OPCODE);
	kprobes_test_forget_text((unsigned long)kpt_opt, (unsigned long)kpt_opt + 1);
	kprobes_query_point(answer, 1024, insn_at(kpt_opt, 7), NULL, 0);
	kprobes_test_pause_retiring(false);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_NE(test, *(u8 *)kpt_opt, JMP32_INSN_OPCODE);
	KUNIT_EXPECT_NOT_NULL(test, strstr(answer, "probe: yes"));

	init_probe(&later, insn_at(kpt_opt, 5), NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &later);
	init_probe(&later, insn_at(kpt_opt, 3), NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&later));
	KUNIT_EXPECT_EQ(test, kpt_opt(10), 16UL);
	unregister_kprobe(&later);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, kpt_opt(10), 16UL);
}
#endif

/*
 * Review of 2026-11-25, N3: which trapping copy settles whether a probe
 * is boosted. A fault in the copy turns "after a clean run" into
 * "never", a clean run into "boost"; once boosted, a fault (in a hit
 * with a post_handler, which always takes the trapping copy) leaves it
 * boosted: a CPU may already be in the boosted copy, and a slot that was
 * ever boosted must be freed dirty. The state is set by hand on a load
 * with a fixup (which is never boosted by itself).
 */
static void test_boost_verdict_settles_once(struct kunit *test)
{
	void *area = make_unmapped(test), *load = insn_at(kpt_fault_load, 7);
	unsigned long good = 5;
	struct kprobe kp, *site;

	init_probe(&kp, load, NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	site = probe_at(load);
	KUNIT_ASSERT_NOT_NULL(test, site);
	KUNIT_EXPECT_EQ(test, site->ainsn.boost, KPROBE_BOOST_NEVER);

	WRITE_ONCE(site->ainsn.boost, KPROBE_BOOST_AFTER_RUN);
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)unmapped), -1UL);
	KUNIT_EXPECT_EQ(test, site->ainsn.boost, KPROBE_BOOST_NEVER);

	WRITE_ONCE(site->ainsn.boost, KPROBE_BOOST_AFTER_RUN);
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)&good), 5UL);
	KUNIT_EXPECT_EQ(test, site->ainsn.boost, KPROBE_BOOST_READY);
	KUNIT_EXPECT_EQ(test, kpt_fault_load((unsigned long)unmapped), -1UL);
	KUNIT_EXPECT_EQ(test, site->ainsn.boost, KPROBE_BOOST_READY);

	/* Never boosted for real: back to what registering decided. */
	WRITE_ONCE(site->ainsn.boost, KPROBE_BOOST_NEVER);
	unregister_kprobe(&kp);
	vfree(area);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
}

/*
 * A trap other than #PF and #GP in an instruction's copy, with the
 * original instruction's fixup: vmxoff outside VMX operation raises #UD,
 * and kpt_vmxoff() returns 1 from its fixup. The trap reaches kprobes
 * through the die chain (DIE_TRAP) and is rewound to the original, whose
 * fixup applies, as without the probe. (It oopsed in the slot before,
 * as in the tree.)
 */
static void test_fault_ud_in_copy(struct kunit *test)
{
	struct kprobe kp;

	KUNIT_ASSERT_EQ(test, kpt_vmxoff(), 1UL);
	init_probe(&kp, insn_at(kpt_vmxoff, 5), NULL, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_vmxoff(), 1UL);
	KUNIT_EXPECT_EQ(test, kpt_vmxoff(), 1UL);
	KUNIT_EXPECT_NULL(test, kprobe_running());
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
	KUNIT_EXPECT_EQ(test, kpt_vmxoff(), 1UL);
}

/*
 * An access whose machine check is recovered (copy_mc_*()) is found by
 * its address in the exception table before any handler runs: in a copy
 * it would not be, and the machine would panic. Refused.
 */
static void test_refuse_mce_safe_access(struct kunit *test)
{
	unsigned long v = 9;
	struct kprobe kp;

	init_probe(&kp, kpt_mcsafe, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &kp);
	KUNIT_EXPECT_EQ(test, kpt_mcsafe(&v), 9UL);
}

static atomic_t foreign_int3s;

/* The owner of the int3 in kpt_foreign_int3: a debugger, say. */
static int foreign_int3_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;

	if (val != DIE_INT3 ||
	    args->regs->ip != (unsigned long)insn_at(kpt_foreign_int3, 5 + INT3_INSN_SIZE))
		return NOTIFY_DONE;
	atomic_inc(&foreign_int3s);
	return NOTIFY_STOP;	/* ip is past the int3 already */
}

static struct notifier_block foreign_int3_nb = {
	.notifier_call = foreign_int3_notify,
};

/*
 * An int3 that is not ours goes on to its owner on the die chain, with
 * a probe right before it in the same function.
 */
static void test_foreign_int3_passed_on(struct kunit *test)
{
	struct kprobe kp, at_int3;

	atomic_set(&foreign_int3s, 0);
	KUNIT_ASSERT_EQ(test, 0, register_die_notifier(&foreign_int3_nb));
	init_probe(&kp, kpt_foreign_int3, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt_foreign_int3(), 6UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&foreign_int3s), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	/* The int3 itself cannot be probed: it is someone else's. */
	init_probe(&at_int3, insn_at(kpt_foreign_int3, 5), NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EOPNOTSUPP, &at_int3);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt_foreign_int3(), 6UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&foreign_int3s), 2);
	unregister_die_notifier(&foreign_int3_nb);
}

/*
 * A CPU that trapped on a probe's int3 while another CPU took the probe
 * out and wrote the original byte back finds no probe and no int3 at the
 * address: it runs the instruction again. The trap handler is called
 * here as that CPU would call it; it is not exported, so only a built-in
 * suite can.
 */
static void test_int3_for_restored_byte(struct kunit *test)
{
#if IS_BUILTIN(CONFIG_KPROBES_SANITY_TEST)
	struct pt_regs regs = {
		.ip = (unsigned long)insn_at(kpt_inc, INT3_INSN_SIZE),
		.cs = __KERNEL_CS,
		.flags = X86_EFLAGS_FIXED,
	};
	unsigned long flags;
	int ret;

	KUNIT_ASSERT_NULL(test, probe_at(kpt_inc));
	local_irq_save(flags);
	ret = kprobe_int3_handler(&regs);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ(test, regs.ip, (unsigned long)kpt_inc);
	/* An int3 that is really there and not ours is left to its owner. */
	regs.ip = (unsigned long)insn_at(kpt_foreign_int3, 5 + INT3_INSN_SIZE);
	local_irq_save(flags);
	ret = kprobe_int3_handler(&regs);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, ret, 0);
#else
	kunit_skip(test, "the trap handler is not exported to a module");
#endif
}

/*
 * On a kernel booted with one CPU of several possible, the lock prefixes
 * are patched out (a ds prefix in their place) and patched back in when
 * a second CPU comes up: such an instruction is refused (-EINVAL), as
 * text alternatives rewrite. Booted with several CPUs, it is an
 * instruction as any. make test boots the built-in suite both ways.
 */
static void test_smp_lock_prefix(struct kunit *test)
{
	u8 prefix = *(u8 *)kpt_lock_inc;
	unsigned long v = 1;
	struct kprobe kp;
	int ret;

	init_probe(&kp, kpt_lock_inc, NULL, 0, count_pre, NULL);
	ret = register_kprobe(&kp);
	if (prefix == 0x3e) {		/* ds: patched for one CPU */
		KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	} else {
		KUNIT_EXPECT_EQ(test, prefix, 0xf0);	/* lock */
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	KUNIT_EXPECT_EQ(test, kpt_lock_inc(&v), 2UL);
	if (!ret)
		unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), ret ? 0 : 1);
}
#endif /* CONFIG_X86_64 */

#ifdef CONFIG_ARM64
/* ---- arm64: simulated, stepped and refused instructions -------------------- */

/*
 * BRK traps per hit: a simulated instruction's; a step's two (with a
 * post_handler); a boosted copy's one (without).
 */
#define A64_SIMULATED 1
#define A64_STEPPED 2
#define A64_BOOSTED 1

/* BRK exceptions kprobes handled (probes' and ends of steps), on all CPUs. */
static unsigned long brk_traps(void)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kprobe_brk_traps, cpu);
	return sum;
}

/* What the handlers of the last hit saw. */
static unsigned long a64_pre_lr, a64_pre_x9, a64_post_pc, a64_post_lr;
static unsigned long a64_traps_before;

static int a64_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(regs->pc == (unsigned long)p->addr);
	WRITE_ONCE(a64_pre_lr, regs->regs[30]);
	WRITE_ONCE(a64_pre_x9, regs->regs[9]);
	atomic_inc(&pre_hits);
	return 0;
}

static void a64_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	WRITE_ONCE(a64_post_pc, regs->pc);
	WRITE_ONCE(a64_post_lr, regs->regs[30]);
	atomic_inc(&post_hits);
}

/* Register @kp at @at with a64_pre() and a64_post(); count traps from now. */
static void a64_arm(struct kunit *test, struct kprobe *kp, void *at)
{
	reset_counts();
	a64_post_pc = 0;
	init_probe(kp, at, NULL, 0, a64_pre, a64_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(kp));
	a64_traps_before = brk_traps();
}

/*
 * After @hits hits on @kp: each ran both handlers, was counted once and
 * took @traps BRK traps; the last post_handler saw pc at @next (when
 * not NULL). Unregisters @kp.
 */
static void a64_check(struct kunit *test, struct kprobe *kp, int hits,
		      int traps, void *next)
{
	KUNIT_EXPECT_EQ(test, brk_traps() - a64_traps_before,
			(unsigned long)hits * traps);
	KUNIT_EXPECT_EQ(test, kprobe_hits(kp), (unsigned long)hits);
	unregister_kprobe(kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), hits);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), hits);
	if (next)
		KUNIT_EXPECT_EQ(test, a64_post_pc, (unsigned long)next);
}

/* b: simulated, the post_handler sees pc at the target. */
static void test_arm64_b(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_b_probe);
	KUNIT_EXPECT_EQ(test, kpt64_b(), 2ULL);
	KUNIT_EXPECT_EQ(test, kpt64_b(), 2ULL);
	a64_check(test, &kp, 2, A64_SIMULATED, kpt64_b_to);
	KUNIT_EXPECT_EQ(test, kpt64_b(), 2ULL);
}

/* bl: simulated, pc at the callee and x30 at the instruction after the bl. */
static void test_arm64_bl(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_bl_probe);
	KUNIT_EXPECT_EQ(test, kpt64_bl(41), 42ULL);
	KUNIT_EXPECT_EQ(test, a64_post_lr, (unsigned long)(kpt64_bl_probe + 1));
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_leaf);
}

/* Whether b.<@cc> branches with the flags @nzcv (N is bit 3, V bit 0). */
static bool a64_cond_holds(unsigned int cc, unsigned int nzcv)
{
	bool n = nzcv & 8, z = nzcv & 4, c = nzcv & 2, v = nzcv & 1;
	bool holds;

	switch (cc >> 1) {
	case 0:
		holds = z;			/* eq */
		break;
	case 1:
		holds = c;			/* hs */
		break;
	case 2:
		holds = n;			/* mi */
		break;
	case 3:
		holds = v;			/* vs */
		break;
	case 4:
		holds = c && !z;		/* hi */
		break;
	case 5:
		holds = n == v;			/* ge */
		break;
	case 6:
		holds = !z && n == v;		/* gt */
		break;
	default:
		holds = true;			/* al */
		break;
	}
	/* An odd condition is the even one's negation (but nv, not used). */
	return cc & 1 ? !holds : holds;
}

/* b.cond: simulated, each of eq..le taken or not under all 16 flag values. */
static void test_arm64_bcond(struct kunit *test)
{
	unsigned int cc, nzcv, wrong;
	struct kprobe kp;

	for (cc = 0; cc < 14; cc++) {
		u32 *at = kpt64_bcond_probes + 2 * cc;

		/* A b.cond (0x54, bit 4 clear) with the condition cc. */
		KUNIT_ASSERT_EQ(test, *at & 0xff00001f, 0x54000000 | cc);
		a64_arm(test, &kp, at);
		wrong = 0;
		for (nzcv = 0; nzcv < 16; nzcv++) {
			bool taken = a64_cond_holds(cc, nzcv);

			if (kpt64_bcond((u64)nzcv << 28, cc) != taken ||
			    a64_post_pc != (unsigned long)(taken ? kpt64_bcond_taken : at + 1))
				wrong++;
		}
		KUNIT_EXPECT_EQ_MSG(test, wrong, 0, "condition %u", cc);
		a64_check(test, &kp, 16, A64_SIMULATED, NULL);
	}
}

/*
 * Run @call over @vals with a probe on each of the four branches of
 * kpt64_cb() or kpt64_tb() in turn. Branch n, at @at[n], jumps over one
 * orr that sets bit n of the result; @taken tells whether it branches.
 * The asm targets are called only directly (they have no BTI landing
 * pad): @call is a C function calling one.
 */
static void a64_branches_over(struct kunit *test, u32 *const at[4],
			      u64 (*call)(u64), bool (*taken)(int n, u64 x),
			      const u64 *vals, int nvals)
{
	struct kprobe kp;
	int n, b, i;

	for (n = 0; n < 4; n++) {
		a64_arm(test, &kp, at[n]);
		for (i = 0; i < nvals; i++) {
			u64 want = 0;

			for (b = 0; b < 4; b++)
				want |= (u64)!taken(b, vals[i]) << b;
			KUNIT_EXPECT_EQ_MSG(test, call(vals[i]), want,
					    "branch %d, x %#llx", n, vals[i]);
			KUNIT_EXPECT_EQ_MSG(test, a64_post_pc,
					    (unsigned long)(at[n] + (taken(n, vals[i]) ? 2 : 1)),
					    "branch %d, x %#llx", n, vals[i]);
		}
		a64_check(test, &kp, nvals, A64_SIMULATED, NULL);
	}
}

/* kpt64_cb's branches: cbz x1, cbz w1, cbnz x1, cbnz w1. */
static bool a64_cb_taken(int n, u64 x)
{
	bool zero = n & 1 ? !(u32)x : !x;

	return n < 2 ? zero : !zero;
}

static u64 call_kpt64_cb(u64 x)
{
	return kpt64_cb(x);
}

/* cbz/cbnz: simulated, W and X forms (1 << 32 is zero as W only). */
static void test_arm64_cbz(struct kunit *test)
{
	static const u64 vals[] = { 0, 1, BIT_ULL(32), 0xffffffffULL, ~0ULL };
	u32 *const at[4] = { kpt64_cbz_x_probe, kpt64_cbz_w_probe,
			     kpt64_cbnz_x_probe, kpt64_cbnz_w_probe };

	a64_branches_over(test, at, call_kpt64_cb, a64_cb_taken, vals, ARRAY_SIZE(vals));
}

/* kpt64_tb's branches: tbz #3, tbz #40, tbnz #3, tbnz #40. */
static bool a64_tb_taken(int n, u64 x)
{
	bool set = x & BIT_ULL(n & 1 ? 40 : 3);

	return n < 2 ? !set : set;
}

static u64 call_kpt64_tb(u64 x)
{
	return kpt64_tb(x);
}

/* tbz/tbnz: simulated, bits 3 and 40 (bits 35 and 8 are their aliases mod 32). */
static void test_arm64_tbz(struct kunit *test)
{
	static const u64 vals[] = { 0, BIT_ULL(3), BIT_ULL(40), BIT_ULL(40) | BIT_ULL(3),
				    BIT_ULL(35), BIT_ULL(8), ~0ULL };
	u32 *const at[4] = { kpt64_tbz_lo_probe, kpt64_tbz_hi_probe,
			     kpt64_tbnz_lo_probe, kpt64_tbnz_hi_probe };

	a64_branches_over(test, at, call_kpt64_tb, a64_tb_taken, vals, ARRAY_SIZE(vals));
}

/* adr and adrp: simulated; adrp gives the right 4K page, page-aligned. */
static void test_arm64_adr(struct kunit *test)
{
	unsigned long page = (unsigned long)&kpt64_adrp_data & ~(SZ_4K - 1UL);
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_adr_probe);
	KUNIT_EXPECT_EQ(test, kpt64_adr(), (u64)(unsigned long)kpt64_adr);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_adr_probe + 1);

	/* Still an adrp: the module loader left it as written. */
	KUNIT_ASSERT_EQ(test, *kpt64_adrp_probe & 0x9f000000, 0x90000000);
	a64_arm(test, &kp, kpt64_adrp_probe);
	KUNIT_EXPECT_EQ(test, kpt64_adrp(), (u64)page);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_adrp_probe + 1);
	KUNIT_EXPECT_EQ(test, kpt64_adrp(), (u64)page);
}

/* ldr literal, W and X, and ldrsw literal of a negative word: simulated. */
static void test_arm64_ldr_literal(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_ldr_x_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ldr_x(), 0x0123456789abcdefULL);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_ldr_x_probe + 1);

	a64_arm(test, &kp, kpt64_ldr_w_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ldr_w(), 0x87654321ULL);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_ldr_w_probe + 1);

	a64_arm(test, &kp, kpt64_ldrsw_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ldrsw(), 0xffffffff89abcdefULL);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_ldrsw_probe + 1);
}

/* br and blr: simulated; blr sets x30 to the instruction after it. */
static void test_arm64_br_blr(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_br_probe);
	KUNIT_EXPECT_EQ(test, kpt64_br(), 5ULL);
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_br_to);

	a64_arm(test, &kp, kpt64_blr_probe);
	KUNIT_EXPECT_EQ(test, kpt64_blr(41), 42ULL);
	KUNIT_EXPECT_EQ(test, a64_post_lr, (unsigned long)(kpt64_blr_probe + 1));
	a64_check(test, &kp, 1, A64_SIMULATED, kpt64_blr_to);
}

/* ret and ret x9: simulated, pc at the return address in x30 or x9. */
static void test_arm64_ret(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_ret_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ret(), 7ULL);
	a64_check(test, &kp, 1, A64_SIMULATED, (void *)a64_pre_lr);

	a64_arm(test, &kp, kpt64_ret_x9_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ret_x9(), 8ULL);
	a64_check(test, &kp, 1, A64_SIMULATED, (void *)a64_pre_x9);
}

/* add, sub, mrs nzcv: stepped, the post_handler at the next instruction. */
static void test_arm64_stepped_alu(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_add_probe);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(~0ULL), 2ULL);
	a64_check(test, &kp, 2, A64_STEPPED, kpt64_add_probe + 1);

	a64_arm(test, &kp, kpt64_sub_probe);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	a64_check(test, &kp, 1, A64_STEPPED, kpt64_sub_probe + 1);

	/* The flags survive the trap and the step. */
	a64_arm(test, &kp, kpt64_mrs_probe);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0xa0000000), 0xa0000000ULL);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0x50000000), 0x50000000ULL);
	a64_check(test, &kp, 2, A64_STEPPED, kpt64_mrs_probe + 1);
}

/* str/ldr [sp, #8], stp pre-index, ldp post-index on sp: stepped. */
static void test_arm64_stepped_stack(struct kunit *test)
{
	u32 *const at[] = { kpt64_str_probe, kpt64_ldr_sp_probe,
			    kpt64_stp_probe, kpt64_ldp_probe };
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		a64_arm(test, &kp, at[i]);
		/* 2 * x + 1, and sp back where it was. */
		KUNIT_EXPECT_EQ_MSG(test, kpt64_stack(20), 41ULL, "%pS", at[i]);
		a64_check(test, &kp, 1, A64_STEPPED, at[i] + 1);
	}
}

/* dmb, dsb, isb, nop: stepped. */
static void test_arm64_stepped_barriers(struct kunit *test)
{
	u32 *const at[] = { kpt64_dmb_probe, kpt64_dsb_probe,
			    kpt64_isb_probe, kpt64_nop_probe };
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		a64_arm(test, &kp, at[i]);
		KUNIT_EXPECT_EQ_MSG(test, kpt64_barriers(1), 2ULL, "%pS", at[i]);
		a64_check(test, &kp, 1, A64_STEPPED, at[i] + 1);
	}
}

/* ldadd and cas (LSE atomics): stepped, memory and registers right. */
static void test_arm64_stepped_lse(struct kunit *test)
{
	struct kprobe kp;
	u64 v = 10;

	if (!cpu_have_named_feature(ATOMICS))
		kunit_skip(test, "the CPUs have no LSE atomics");

	a64_arm(test, &kp, kpt64_ldadd_probe);
	KUNIT_EXPECT_EQ(test, kpt64_ldadd(&v), 10ULL);
	KUNIT_EXPECT_EQ(test, v, 15ULL);
	a64_check(test, &kp, 1, A64_STEPPED, kpt64_ldadd_probe + 1);

	a64_arm(test, &kp, kpt64_cas_probe);
	KUNIT_EXPECT_EQ(test, kpt64_cas(&v, 15, 20), 15ULL);	/* swaps */
	KUNIT_EXPECT_EQ(test, v, 20ULL);
	KUNIT_EXPECT_EQ(test, kpt64_cas(&v, 15, 30), 20ULL);	/* does not */
	KUNIT_EXPECT_EQ(test, v, 20ULL);
	a64_check(test, &kp, 2, A64_STEPPED, kpt64_cas_probe + 1);
}

/*
 * paciasp and bti c: stepped. With pointer authentication on, the
 * autiasp of kpt64_pac only passes if the stepped paciasp signed x30
 * with the function's own sp.
 */
static void test_arm64_stepped_hints(struct kunit *test)
{
	struct kprobe kp;

	if (!system_supports_address_auth())
		kunit_info(test, "no pointer authentication: paciasp is a nop here");
	a64_arm(test, &kp, kpt64_paciasp_probe);
	KUNIT_EXPECT_EQ(test, kpt64_pac(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kpt64_pac(2), 3ULL);
	a64_check(test, &kp, 2, A64_STEPPED, kpt64_paciasp_probe + 1);

	a64_arm(test, &kp, kpt64_bti_probe);
	KUNIT_EXPECT_EQ(test, kpt64_bti(1), 3ULL);
	a64_check(test, &kp, 1, A64_STEPPED, kpt64_bti_probe + 1);
}

/* Register @kp at @at with count_pre() only: its hits may be boosted. */
static void a64_arm_pre_only(struct kunit *test, struct kprobe *kp, void *at)
{
	reset_counts();
	init_probe(kp, at, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(kp));
	a64_traps_before = brk_traps();
}

/* After @hits hits on @kp, each with @traps traps; unregisters @kp. */
static void a64_check_pre_only(struct kunit *test, struct kprobe *kp, int hits, int traps)
{
	KUNIT_EXPECT_EQ_MSG(test, brk_traps() - a64_traps_before,
			    (unsigned long)hits * traps, "%pS", kp->addr);
	KUNIT_EXPECT_EQ(test, kprobe_hits(kp), (unsigned long)hits);
	unregister_kprobe(kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), hits);
}

/*
 * Copied instructions hit with no post_handler: boosted, one trap a
 * hit, results as unprobed (add, the flags read by mrs, stack accesses,
 * paciasp signing with the function's sp, an LSE atomic), and the
 * interrupt mask as the caller had it. A member with a post_handler
 * joining the site brings the step back; leaving, the boost.
 */
static void test_arm64_boosted(struct kunit *test)
{
	u32 *const stack[] = { kpt64_str_probe, kpt64_ldr_sp_probe,
			       kpt64_stp_probe, kpt64_ldp_probe };
	struct kprobe kp, with_post;
	bool off_after;
	u64 v = 10;
	int i;

	a64_arm_pre_only(test, &kp, kpt64_add_probe);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(~0ULL), 2ULL);
	local_irq_disable();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);
	off_after = irqs_disabled();
	local_irq_enable();
	KUNIT_EXPECT_TRUE(test, off_after);
	a64_check_pre_only(test, &kp, 3, A64_BOOSTED);

	a64_arm_pre_only(test, &kp, kpt64_mrs_probe);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0xa0000000), 0xa0000000ULL);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0x50000000), 0x50000000ULL);
	a64_check_pre_only(test, &kp, 2, A64_BOOSTED);

	for (i = 0; i < ARRAY_SIZE(stack); i++) {
		a64_arm_pre_only(test, &kp, stack[i]);
		KUNIT_EXPECT_EQ_MSG(test, kpt64_stack(20), 41ULL, "%pS", stack[i]);
		a64_check_pre_only(test, &kp, 1, A64_BOOSTED);
	}

	a64_arm_pre_only(test, &kp, kpt64_paciasp_probe);
	KUNIT_EXPECT_EQ(test, kpt64_pac(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kpt64_pac(2), 3ULL);
	a64_check_pre_only(test, &kp, 2, A64_BOOSTED);

	if (cpu_have_named_feature(ATOMICS)) {
		a64_arm_pre_only(test, &kp, kpt64_ldadd_probe);
		KUNIT_EXPECT_EQ(test, kpt64_ldadd(&v), 10ULL);
		KUNIT_EXPECT_EQ(test, v, 15ULL);
		a64_check_pre_only(test, &kp, 1, A64_BOOSTED);
	}

	/* A post_handler joins: stepped; it leaves: boosted again. */
	a64_arm_pre_only(test, &kp, kpt64_add_probe);
	init_probe(&with_post, kpt64_add_probe, NULL, 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&with_post));
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - a64_traps_before, (unsigned long)A64_STEPPED);
	unregister_kprobe(&with_post);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	a64_traps_before = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - a64_traps_before, (unsigned long)A64_BOOSTED);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
}

static u32 a64_addsub32(u32 x)
{
	return kpt64_addsub(x);
}

/*
 * A boosted probe registered and unregistered 30 times while another
 * CPU keeps calling through it (so slots are freed while a task may be
 * preempted inside one), every other round beside a member with a
 * post_handler (so hits switch between boosted and stepped): every
 * call returns right, and the probe is hit.
 */
static void test_arm64_boosted_under_hits(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe kp, with_post;
	int i, before;

	reset_counts();
	hammer = start_hammer_on(test, a64_addsub32);
	for (i = 0; i < 30; i++) {
		init_probe(&kp, kpt64_add_probe, NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		if (i & 1) {
			init_probe(&with_post, kpt64_add_probe, NULL, 0,
				   count_pre2_quiet, count_post2);
			KUNIT_ASSERT_EQ(test, 0, register_kprobe(&with_post));
		}
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
		if (i & 1)
			unregister_kprobe(&with_post);
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&hammer_calls), 30);
	KUNIT_EXPECT_GT(test, atomic_read(&post2_hits), 0);
	KUNIT_EXPECT_NULL(test, probe_at(kpt64_add_probe));
}

/* Registering at @at fails with -EINVAL and leaves the text as it was. */
static void a64_expect_refused(struct kunit *test, void *at)
{
	u32 *word = PTR_ALIGN_DOWN((u32 *)at, 4);
	u32 before = READ_ONCE(*word);
	struct kprobe kp;
	int ret;

	init_probe(&kp, at, NULL, 0, count_pre, NULL);
	ret = register_kprobe(&kp);
	KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "%pS: %08x", at, before);
	if (!ret)
		unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*word), before);
}

/*
 * Refused: every instruction of kpt64_refused_insns (exception
 * generating, system register and DAIF writes, wait hints, autiasp,
 * retaa, prfm and SIMD&FP literal loads, one with an exception-table
 * entry), the exclusive pair and an add between them, and addresses
 * that are not 4-byte aligned. None of them runs.
 */
static void test_arm64_refused(struct kunit *test)
{
	u32 *at;

	/* The 17 instructions listed in the asm, no fewer. */
	KUNIT_EXPECT_EQ(test, kpt64_refused_end - kpt64_refused_insns, 17);
	for (at = kpt64_refused_insns; at < kpt64_refused_end; at++)
		a64_expect_refused(test, at);
	KUNIT_EXPECT_EQ(test, kpt64_excl_end - kpt64_excl, 3);
	for (at = kpt64_excl; at < kpt64_excl_end; at++)
		a64_expect_refused(test, at);
	a64_expect_refused(test, (u8 *)kpt64_add_probe + 1);
	a64_expect_refused(test, (u8 *)kpt64_add_probe + 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);
}

/*
 * A jump label site is refused as the nop it is while its key is off
 * and as the b it becomes; the plain nop before it is probed. Both are
 * looked up in the jump label table only (the arch tells the core that a
 * nop or a b can be in no other): this module's, or vmlinux's index when
 * the suite is built in.
 */
static void test_arm64_jump_label_site(struct kunit *test)
{
#ifdef CONFIG_JUMP_LABEL
	struct kprobe kp;

	a64_expect_refused(test, kpt64_jl_site);
	init_probe(&kp, kpt64_jl_nop_probe, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt64_jl(5), 5ULL);

	static_branch_enable(&kpt64_jl_key);
	KUNIT_EXPECT_TRUE(test, aarch64_insn_is_b(READ_ONCE(*kpt64_jl_site)));
	KUNIT_EXPECT_EQ(test, kpt64_jl(5), 6ULL);
	a64_expect_refused(test, kpt64_jl_site);
	static_branch_disable(&kpt64_jl_key);
	KUNIT_EXPECT_EQ(test, kpt64_jl(5), 5ULL);

	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
#else
	kunit_skip(test, "no jump labels");
#endif
}

/*
 * Kprobes' own assembly is on the blacklist: the kretprobe trampoline
 * runs with the returning call's instances half handled, and the ftrace
 * stub inside ftrace's callback.
 */
static void test_arm64_own_asm_refused(struct kunit *test)
{
	static const char *const syms[] = {
		"__kretprobe_trampoline",
#ifdef CONFIG_KPROBES_ON_FTRACE
		"kprobe_ftrace_handler",
#endif
	};
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		init_probe(&kp, NULL, syms[i], 2 * AARCH64_INSN_SIZE, count_pre, NULL);
		EXPECT_REFUSED(test, -EINVAL, &kp);
	}
}

/* Return 77 to the caller at once: the instruction and post_handler are skipped. */
static int a64_redirect_pre(struct kprobe *p, struct pt_regs *regs)
{
	regs->regs[0] = 77;
	instruction_pointer_set(regs, regs->regs[30]);
	atomic_inc(&pre_hits);
	return 1;
}

/* A pre_handler that redirects, on a stepped and on a simulated instruction. */
static void test_arm64_redirect(struct kunit *test)
{
	unsigned long traps;
	struct kprobe kp;

	init_probe(&kp, kpt64_add_probe, NULL, 0, a64_redirect_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 77ULL);
	/* No step: the probe's own trap only. */
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 1UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 1UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);

	init_probe(&kp, kpt64_b_probe, NULL, 0, a64_redirect_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_b(), 77ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 1UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 1UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_b(), 2ULL);

	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
}

/*
 * A probe on a landing pad that a blr reaches: the BRK runs with the
 * blr's BTYPE (a BRK is compatible with any), and on a BTI kernel the
 * module's text is guarded, so the CPU raises a Branch Target exception
 * if that BTYPE is still in pstate where the hit resumes: the slot, the
 * instruction after the pad, or where a pre_handler sent it (here the
 * caller's ldp, which is no landing pad). Stepped, boosted, redirected.
 */
static void test_arm64_landing_pad_after_blr(struct kunit *test)
{
	struct kprobe kp;

	a64_arm(test, &kp, kpt64_blr_to);
	KUNIT_EXPECT_EQ(test, kpt64_blr(41), 42ULL);
	a64_check(test, &kp, 1, A64_STEPPED, kpt64_blr_to + 1);

	a64_arm_pre_only(test, &kp, kpt64_blr_to);
	KUNIT_EXPECT_EQ(test, kpt64_blr(41), 42ULL);
	a64_check_pre_only(test, &kp, 1, A64_BOOSTED);

	reset_counts();
	init_probe(&kp, kpt64_blr_to, NULL, 0, a64_redirect_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kpt64_blr(41), 77ULL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
}

#ifdef CONFIG_OPTPROBES
/* ---- arm64: optimized probes ------------------------------------------------ */

/* Is the probe at @addr optimized, with its B in the text? */
static bool a64_optimized(void *addr)
{
	struct kprobe *p = probe_at(addr);

	return p && kprobe_optimized(p) &&
	       aarch64_insn_is_b(le32_to_cpu(READ_ONCE(*(__le32 *)addr)));
}

/* What the pre_handler of an optimized hit saw, and whether it ran with IRQs on. */
static unsigned long a64_opt_x0, a64_opt_pstate;
static bool a64_opt_irqs_on;

static int a64_opt_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(regs->pc == (unsigned long)p->addr);
	HANDLER_CHECK(kprobe_running() == p);
	HANDLER_CHECK(!preemptible());
	HANDLER_CHECK(regs->sp % 16 == 0);
	WRITE_ONCE(a64_opt_x0, regs->regs[0]);
	WRITE_ONCE(a64_opt_pstate, regs->pstate);
	WRITE_ONCE(a64_opt_irqs_on, !irqs_disabled());
	atomic_inc(&pre_hits);
	return 0;
}

/* Register @kp at @at with @pre and wait until the optimizer is done. */
static void a64_arm_optimized(struct kunit *test, struct kprobe *kp, void *at,
			      kprobe_pre_handler_t pre)
{
	reset_counts();
	init_probe(kp, at, NULL, 0, pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE_MSG(test, a64_optimized(at), "%pS", at);
}

/*
 * An optimized probe takes no exception; the handler sees pc at the
 * probe, the arguments, EL1h and the interrupt mask of the probed code.
 * A post_handler joining takes the B out at once (the hit is stepped
 * again), and the B comes back when it leaves; so after disabling and
 * enabling. Unregistering writes the instruction back.
 */
static void test_arm64_optimized(struct kunit *test)
{
	u32 orig = READ_ONCE(*kpt64_add_probe);
	unsigned long traps;
	struct kprobe kp, post;
	bool off_after;

	a64_arm_optimized(test, &kp, kpt64_add_probe, a64_opt_pre);
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, a64_opt_x0, 10UL);
	KUNIT_EXPECT_EQ(test, a64_opt_pstate & PSR_MODE_MASK, (unsigned long)PSR_MODE_EL1h);
	/* Interrupts as the probed code has them, unlike in a BRK handler. */
	KUNIT_EXPECT_TRUE(test, a64_opt_irqs_on);
	KUNIT_EXPECT_FALSE(test, a64_opt_pstate & PSR_I_BIT);
	local_irq_disable();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);
	off_after = irqs_disabled();
	local_irq_enable();
	KUNIT_EXPECT_TRUE(test, off_after);
	KUNIT_EXPECT_FALSE(test, a64_opt_irqs_on);
	KUNIT_EXPECT_EQ(test, a64_opt_x0, 1UL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);

	init_probe(&post, kpt64_add_probe, NULL, 0, NULL, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	KUNIT_EXPECT_FALSE(test, a64_optimized(kpt64_add_probe));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, (unsigned long)A64_STEPPED);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobe(&post);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, a64_optimized(kpt64_add_probe));

	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, a64_optimized(kpt64_add_probe));
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, a64_optimized(kpt64_add_probe));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);

	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*kpt64_add_probe), orig);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
}

/*
 * A probe with a post_handler is a lone site, stepped and never
 * optimized while it stays; the first probe without one to join it
 * gives the site its detour, and the B goes in when the post_handler
 * leaves. Between the two, the one member's pre_handler runs on the
 * BRK path as current_kprobe (a64_opt_pre checks it).
 */
static void test_arm64_optimized_after_post_handler(struct kunit *test)
{
	struct kprobe post, kp;
	unsigned long traps;

	reset_counts();
	init_probe(&post, kpt64_add_probe, NULL, 0, NULL, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, a64_optimized(kpt64_add_probe));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, (unsigned long)A64_STEPPED);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);

	init_probe(&kp, kpt64_add_probe, NULL, 0, a64_opt_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_FALSE(test, a64_optimized(kpt64_add_probe));
	unregister_kprobe(&post);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, a64_optimized(kpt64_add_probe));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobe(&kp);
}

/*
 * Every copied kind, registered in one batch and optimized by one
 * optimizer run: no exception, results as unprobed. The flags that mrs
 * reads went through the detour's C call; the stack accesses run with
 * sp as the probed code has it, the pt_regs gone from below it.
 */
static void test_arm64_optimized_kinds(struct kunit *test)
{
	u32 *const at[] = { kpt64_add_probe, kpt64_mrs_probe, kpt64_str_probe,
			    kpt64_ldr_sp_probe, kpt64_stp_probe, kpt64_ldp_probe,
			    kpt64_ldadd_probe };
	int n = ARRAY_SIZE(at) - !cpu_have_named_feature(ATOMICS);
	struct kprobe kp[ARRAY_SIZE(at)], *kps[ARRAY_SIZE(at)];
	unsigned long traps;
	u64 v = 10;
	int i;

	reset_counts();
	for (i = 0; i < n; i++) {
		init_probe(&kp[i], at[i], NULL, 0, count_pre, NULL);
		kps[i] = &kp[i];
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, n));
	wait_for_kprobe_optimizer();
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE_MSG(test, a64_optimized(at[i]), "%pS", at[i]);
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0xa0000000), 0xa0000000ULL);
	KUNIT_EXPECT_EQ(test, kpt64_mrs_nzcv(0x50000000), 0x50000000ULL);
	KUNIT_EXPECT_EQ(test, kpt64_stack(20), 41ULL);
	if (n == ARRAY_SIZE(at)) {
		KUNIT_EXPECT_EQ(test, kpt64_ldadd(&v), 10ULL);
		KUNIT_EXPECT_EQ(test, v, 15ULL);
	}
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, kprobe_hits(&kp[i]), i == 1 ? 2UL : 1UL,
				    "%pS", at[i]);
	unregister_kprobes(kps, n);
	KUNIT_EXPECT_EQ(test, kpt64_stack(20), 41ULL);
}

/*
 * The simulated kinds, optimized: the detour does what each does at the
 * probe (a value loaded, a load from the literal's address, a branch to
 * the target, the opposite test over it, x30 set first for bl), every
 * b.cond condition under every NZCV and both ways of every cbz, cbnz,
 * tbz, tbnz, with no exception. One batch, one optimizer run.
 */
static void test_arm64_optimized_relocated(struct kunit *test)
{
	static const u64 cb_vals[] = { 0, 1, BIT_ULL(32), 0xffffffffULL, ~0ULL };
	static const u64 tb_vals[] = { 0, BIT_ULL(3), BIT_ULL(40), BIT_ULL(8), ~0ULL };
	u32 *const at[] = { kpt64_b_probe, kpt64_bl_probe, kpt64_adr_probe, kpt64_adrp_probe,
			    kpt64_ldr_x_probe, kpt64_ldr_w_probe, kpt64_ldrsw_probe,
			    kpt64_br_probe, kpt64_ret_probe, kpt64_ret_x9_probe,
			    kpt64_cbz_x_probe, kpt64_cbz_w_probe, kpt64_cbnz_x_probe,
			    kpt64_cbnz_w_probe, kpt64_tbz_lo_probe, kpt64_tbz_hi_probe,
			    kpt64_tbnz_lo_probe, kpt64_tbnz_hi_probe };
	enum { NB = 14, N = ARRAY_SIZE(at) + NB };
	unsigned long page = (unsigned long)&kpt64_adrp_data & ~(SZ_4K - 1UL);
	unsigned int cc, nzcv, wrong = 0, i, b;
	struct kprobe *kp, **kps;
	unsigned long traps;

	kp = kunit_kcalloc(test, N, sizeof(*kp), GFP_KERNEL);
	kps = kunit_kcalloc(test, N, sizeof(*kps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kp);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	reset_counts();
	for (i = 0; i < N; i++) {
		init_probe(&kp[i], i < ARRAY_SIZE(at) ? at[i] :
			   kpt64_bcond_probes + 2 * (i - ARRAY_SIZE(at)), NULL, 0, count_pre, NULL);
		kps[i] = &kp[i];
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, N));
	wait_for_kprobe_optimizer();
	for (i = 0; i < N; i++)
		KUNIT_EXPECT_TRUE_MSG(test, a64_optimized(kp[i].addr), "%pS", kp[i].addr);

	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_b(), 2ULL);
	KUNIT_EXPECT_EQ(test, kpt64_bl(41), 42ULL);
	KUNIT_EXPECT_EQ(test, kpt64_adr(), (u64)(unsigned long)kpt64_adr);
	KUNIT_EXPECT_EQ(test, kpt64_adrp(), (u64)page);
	KUNIT_EXPECT_EQ(test, kpt64_ldr_x(), 0x0123456789abcdefULL);
	KUNIT_EXPECT_EQ(test, kpt64_ldr_w(), 0x87654321ULL);
	KUNIT_EXPECT_EQ(test, kpt64_ldrsw(), 0xffffffff89abcdefULL);
	KUNIT_EXPECT_EQ(test, kpt64_br(), 5ULL);
	KUNIT_EXPECT_EQ(test, kpt64_ret(), 7ULL);
	KUNIT_EXPECT_EQ(test, kpt64_ret_x9(), 8ULL);
	for (i = 0; i < ARRAY_SIZE(cb_vals); i++) {
		u64 want = 0;

		for (b = 0; b < 4; b++)
			want |= (u64)!a64_cb_taken(b, cb_vals[i]) << b;
		KUNIT_EXPECT_EQ_MSG(test, call_kpt64_cb(cb_vals[i]), want, "x %#llx", cb_vals[i]);
	}
	for (i = 0; i < ARRAY_SIZE(tb_vals); i++) {
		u64 want = 0;

		for (b = 0; b < 4; b++)
			want |= (u64)!a64_tb_taken(b, tb_vals[i]) << b;
		KUNIT_EXPECT_EQ_MSG(test, call_kpt64_tb(tb_vals[i]), want, "x %#llx", tb_vals[i]);
	}
	for (cc = 0; cc < NB; cc++)
		for (nzcv = 0; nzcv < 16; nzcv++)
			wrong += kpt64_bcond((u64)nzcv << 28, cc) != a64_cond_holds(cc, nzcv);
	KUNIT_EXPECT_EQ(test, wrong, 0U);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits),
			10 + 4 * (int)ARRAY_SIZE(cb_vals) + 4 * (int)ARRAY_SIZE(tb_vals) + NB * 16);
	unregister_kprobes(kps, N);
	KUNIT_EXPECT_EQ(test, kpt64_bl(41), 42ULL);
	KUNIT_EXPECT_EQ(test, kpt64_adrp(), (u64)page);
}

/*
 * Not optimized: landing pads (bti c, reached by a blr or not; paciasp),
 * where an indirect branch arriving at a B would fault under BTI, and
 * blr, whose callee would return into the detour; they stay on their
 * breakpoint paths, results right (the paciasp of kpt64_pac signs x30
 * with the function's sp).
 */
static void test_arm64_optimized_not(struct kunit *test)
{
	u32 *const at[] = { kpt64_bti_probe, kpt64_blr_to, kpt64_paciasp_probe, kpt64_blr_probe };
	struct kprobe kp[ARRAY_SIZE(at)], *kps[ARRAY_SIZE(at)];
	int i;

	reset_counts();
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		init_probe(&kp[i], at[i], NULL, 0, count_pre, NULL);
		kps[i] = &kp[i];
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(at)));
	wait_for_kprobe_optimizer();
	for (i = 0; i < ARRAY_SIZE(at); i++)
		KUNIT_EXPECT_FALSE_MSG(test, a64_optimized(at[i]), "%pS", at[i]);
	KUNIT_EXPECT_EQ(test, kpt64_bti(1), 3ULL);
	KUNIT_EXPECT_EQ(test, kpt64_blr(41), 42ULL);
	KUNIT_EXPECT_EQ(test, kpt64_pac(1), 2ULL);
	/* kpt64_blr passes two of them. */
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
	unregister_kprobes(kps, ARRAY_SIZE(at));
}

/* A pre_handler that faults in a kernel access with a fixup. */
static int a64_faulting_pre(struct kprobe *p, struct pt_regs *regs)
{
	u64 v;

	HANDLER_CHECK(copy_from_kernel_nofault(&v, (void *)8, sizeof(v)) == -EFAULT);
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * In a detour: a redirecting pre_handler (the probed function returns
 * 77 to its caller at once, leaving through the BRK that restores
 * PSTATE), and a pre_handler whose access faults and is fixed up.
 */
static void test_arm64_optimized_redirect_and_fault(struct kunit *test)
{
	struct kprobe kp;

	a64_arm_optimized(test, &kp, kpt64_add_probe, a64_redirect_pre);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 77ULL);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 77ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 2UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);

	a64_arm_optimized(test, &kp, kpt64_add_probe, a64_faulting_pre);
	KUNIT_EXPECT_EQ(test, kpt64_addsub(1), 4ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
}

/*
 * Five rounds while another CPU keeps calling through the site:
 * optimized; a post_handler joins (the B out) and leaves (back in);
 * disabled and enabled; unregistered. Every call returns right.
 */
static void test_arm64_optimized_under_hits(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe kp, post;
	int i, before, optimized = 0;

	reset_counts();
	hammer = start_hammer_on(test, a64_addsub32);
	for (i = 0; i < 5; i++) {
		init_probe(&kp, kpt64_add_probe, NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += a64_optimized(kpt64_add_probe);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));

		init_probe(&post, kpt64_add_probe, NULL, 0, NULL, count_post2);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
		before = atomic_read(&post2_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&post2_hits, before));
		unregister_kprobe(&post);
		wait_for_kprobe_optimizer();
		optimized += a64_optimized(kpt64_add_probe);

		KUNIT_EXPECT_EQ(test, 0, disable_kprobe(&kp));
		KUNIT_EXPECT_EQ(test, 0, enable_kprobe(&kp));
		wait_for_kprobe_optimizer();
		optimized += a64_optimized(kpt64_add_probe);
		before = atomic_read(&pre_hits);
		KUNIT_EXPECT_TRUE(test, wait_for_hit(&pre_hits, before));
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, optimized, 15);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_NULL(test, probe_at(kpt64_add_probe));
}
#endif /* CONFIG_OPTPROBES */

/* The interrupted context's pstate and irq state, as the pre (0) and post (1) handlers saw them. */
static unsigned long a64_irq_pstate[2];
static bool a64_irq_on[2];

static int a64_irq_pre(struct kprobe *p, struct pt_regs *regs)
{
	a64_irq_pstate[0] = regs->pstate;
	a64_irq_on[0] = interrupts_enabled(regs);
	atomic_inc(&pre_hits);
	return 0;
}

static void a64_irq_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	a64_irq_pstate[1] = regs->pstate;
	a64_irq_on[1] = interrupts_enabled(regs);
	atomic_inc(&post_hits);
}

/*
 * One call of the probed kpt64_addsub() (@stepped) or kpt64_b() with
 * interrupts off if @off: the handlers see them as the caller had them,
 * and so does the caller afterwards. With GIC priority masking (pseudo
 * NMIs) local_irq_disable() leaves PSTATE.I clear: interrupts_enabled()
 * reads the saved PMR then.
 */
static void a64_irq_round(struct kunit *test, bool stepped, bool off)
{
	bool off_after;
	u64 ret;
	int i;

	if (off)
		local_irq_disable();
	ret = stepped ? kpt64_addsub(1) : kpt64_b();
	off_after = irqs_disabled();
	if (off)
		local_irq_enable();

	KUNIT_EXPECT_EQ(test, ret, stepped ? 4ULL : 2ULL);
	KUNIT_EXPECT_EQ(test, off_after, off);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ_MSG(test, a64_irq_on[i], !off, "%s handler", i ? "post" : "pre");
		if (!off || !system_uses_irq_prio_masking())
			KUNIT_EXPECT_EQ_MSG(test, !!(a64_irq_pstate[i] & PSR_I_BIT), off,
					    "%s handler", i ? "post" : "pre");
	}
}

/* The interrupt mask around a hit: as the probed code had it, before and after. */
static void test_arm64_irq_state(struct kunit *test)
{
	struct kprobe kp;
	int stepped;

	for (stepped = 0; stepped < 2; stepped++) {
		init_probe(&kp, stepped ? kpt64_add_probe : kpt64_b_probe, NULL, 0,
			   a64_irq_pre, a64_irq_post);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		a64_irq_round(test, stepped, false);
		a64_irq_round(test, stepped, true);
		a64_irq_round(test, stepped, false);
		unregister_kprobe(&kp);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 6);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 6);
}

/* From a handler: the functions of the inner probes, a simulated one and a stepped one. */
static void a64_call_inner(void)
{
	HANDLER_CHECK(kpt64_b() == 2);
	HANDLER_CHECK(kpt64_addsub(1) == 4);
}

static int a64_nest_pre(struct kprobe *p, struct pt_regs *regs)
{
	a64_call_inner();
	atomic_inc(&pre_hits);
	return 0;
}

static void a64_nest_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	a64_call_inner();
	atomic_inc(&post_hits);
}

/*
 * Hits inside an outer probe's handlers, the outer one simulated (ldr
 * literal), then stepped (nop): the inner probes (b, add) count a miss
 * each time and run no handler; every function returns right.
 */
static void test_arm64_nested_hit(struct kunit *test)
{
	struct kprobe outer, sim, stepped;
	struct kprobe *kps[] = { &outer, &sim, &stepped };
	int i;

	for (i = 0; i < 2; i++) {
		reset_counts();
		init_probe(&outer, i ? kpt64_nop_probe : kpt64_ldr_x_probe, NULL, 0,
			   a64_nest_pre, a64_nest_post);
		init_probe(&sim, kpt64_b_probe, NULL, 0, count_pre2, count_post2);
		init_probe(&stepped, kpt64_add_probe, NULL, 0, count_pre2, count_post2);
		KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(kps)));
		if (i)
			KUNIT_EXPECT_EQ(test, kpt64_barriers(1), 2ULL);
		else
			KUNIT_EXPECT_EQ(test, kpt64_ldr_x(), 0x0123456789abcdefULL);
		KUNIT_EXPECT_EQ(test, kprobe_hits(&outer), 1UL);
		KUNIT_EXPECT_EQ(test, kprobe_hits(&sim), 0UL);
		KUNIT_EXPECT_EQ(test, kprobe_hits(&stepped), 0UL);
		unregister_kprobes(kps, ARRAY_SIZE(kps));
		KUNIT_EXPECT_EQ(test, sim.nmissed, 2UL);
		KUNIT_EXPECT_EQ(test, stepped.nmissed, 2UL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 0);
	}
}

/*
 * A kretprobe on kpt64_pac, whose entry probe is on its paciasp: the
 * return address it swaps in is what gets signed and authenticated.
 * The handler runs once a call, and each call returns right.
 */
static void test_arm64_kretprobe_pac(struct kunit *test)
{
#ifdef CONFIG_KRETPROBES
	struct kretprobe rp;
	int i;

	if (!system_supports_address_auth())
		kunit_info(test, "no pointer authentication: paciasp is a nop here");
	atomic_set(&ret_hits, 0);
	init_rp(&rp, "kpt64_pac", NULL, return_count, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)rp.kp.addr, (void *)kpt64_paciasp_probe);
	for (i = 1; i <= 3; i++)
		KUNIT_EXPECT_EQ(test, kpt64_pac(10 * i), 10ULL * i + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
	KUNIT_EXPECT_EQ(test, last_retval, 31UL);
	unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, kpt64_pac(1), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
#else
	kunit_skip(test, "no kretprobes");
#endif
}

#define A64_BATCH 32

/* One register_kprobes() of 32 probes on kpt64_adds' adds: each hit once. */
static void test_arm64_batch(struct kunit *test)
{
	struct kprobe *probes, **kps;
	unsigned long traps, syncs;
	int i, found = 0;

	probes = kunit_kcalloc(test, A64_BATCH, sizeof(*probes), GFP_KERNEL);
	kps = kunit_kcalloc(test, A64_BATCH, sizeof(*kps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, probes);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	for (i = 0; i < A64_BATCH; i++) {
		/* add x0, x0, #1 */
		KUNIT_ASSERT_EQ(test, kpt64_adds_probes[i], 0x91000400);
		init_probe(&probes[i], kpt64_adds_probes + i, NULL, 0, count_pre, count_post);
		kps[i] = &probes[i];
	}
	syncs = kprobe_text_syncs;
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, A64_BATCH));
	/* One stop_machine() for the whole batch, not one per probe. */
	KUNIT_EXPECT_EQ(test, kprobe_text_syncs - syncs, 1UL);
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_adds(1), 1ULL + A64_BATCH);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 2UL * A64_BATCH);
	for (i = 0; i < A64_BATCH; i++)
		found += kprobe_hits(&probes[i]) == 1;
	KUNIT_EXPECT_EQ(test, found, A64_BATCH);
	syncs = kprobe_text_syncs;
	unregister_kprobes(kps, A64_BATCH);
	KUNIT_EXPECT_EQ(test, kprobe_text_syncs - syncs, 1UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), A64_BATCH);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), A64_BATCH);

	found = 0;
	for (i = 0; i < A64_BATCH; i++)
		found += !probe_at(probes[i].addr);
	KUNIT_EXPECT_EQ(test, found, A64_BATCH);
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_adds(1), 1ULL + A64_BATCH);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/* ---- arm64: probes at function entries, on ftrace --------------------------- */

/*
 * Traced functions: each has an ftrace patch site laid out as the
 * compiler lays one out under CC_FLAGS_FTRACE (which lib/ is built
 * without): with DYNAMIC_FTRACE_WITH_CALL_OPS, two NOPs for the ops
 * pointer before the symbol, 8-byte aligned; "bti c" at the symbol on
 * BTI kernels (kpt64_call_saving() calls them with BLR); then the two
 * NOPs ftrace makes "mov x9, lr" and the BL. The __patchable_function_entries
 * entry is what the compiler records: the first of the four NOPs with
 * CALL_OPS, the first after "bti c" without. Written in asm, not with
 * the patchable_function_entry attribute, because the compiler need not
 * keep a function's alignment: clang 14 built one of them 4-byte
 * aligned despite __aligned(8), and the module loader BUG()ed patching
 * the site ftrace_call_adjust() refused as misaligned. Called directly:
 * the compiler sees no body to copy with constant arguments. The entry's
 * section is linked to the function's ("o", as the compiler makes it):
 * the linker refuses to merge such sections with unlinked ones, which
 * a kernel with this suite built in would otherwise have.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
#define KPT64_OPS_NOPS		"	nop\n	nop\n"
#define KPT64_PFE_ENTRY		"8881b"
#else
#define KPT64_OPS_NOPS		""
#define KPT64_PFE_ENTRY		"8882b"
#endif
#ifdef CONFIG_ARM64_BTI_KERNEL
#define KPT64_BTI_C		"	bti	c\n"
#else
#define KPT64_BTI_C		""
#endif
#define KPT64_TRACED_FUNC(name) ".globl " #name "\n.type " #name ", %function\n" \
	".balign 8\n8881:\n" KPT64_OPS_NOPS #name ":\n" KPT64_BTI_C		\
	"8882:	nop\n	nop\n"							\
	".pushsection __patchable_function_entries, \"awo\", %progbits, " #name "\n" \
	".balign 8\n.quad " KPT64_PFE_ENTRY "\n.popsection\n"

/* u64 kpt64_traced8(a, b, c, d, e, f, g, h): a + 2b + 3c + ... + 8h */
asm(".pushsection .text, \"ax\"\n"
	KPT64_TRACED_FUNC(kpt64_traced8)
	"	add	x0, x0, x1, lsl #1\n"
	"	add	x0, x0, x3, lsl #2\n"
	"	add	x0, x0, x7, lsl #3\n"
	"	add	x2, x2, x2, lsl #1\n"
	"	add	x0, x0, x2\n"
	"	add	x4, x4, x4, lsl #2\n"
	"	add	x0, x0, x4\n"
	"	add	x5, x5, x5, lsl #1\n"
	"	add	x0, x0, x5, lsl #1\n"
	"	lsl	x9, x6, #3\n"
	"	sub	x9, x9, x6\n"
	"	add	x0, x0, x9\n"
	"	ret\n"
	KPT64_END(kpt64_traced8)
	/* u64 kpt64_traced1(u64 a): a + 1 */
	KPT64_TRACED_FUNC(kpt64_traced1)
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_traced1)
	".popsection\n");
asmlinkage u64 kpt64_traced8(u64 a, u64 b, u64 c, u64 d, u64 e, u64 f, u64 g, u64 h);
asmlinkage u64 kpt64_traced1(u64 a);

/*
 * u64 kpt64_call_saving(u64 (*fn)(u64), u64 arg): call fn(arg) with
 * x19-x28 set to 0x1919, 0x2020, ... 0x2828 and return x19 as it is after
 * the call, restoring the caller's x19-x28.
 */
asm(".pushsection .text, \"ax\"\n"
	KPT64_FUNC(kpt64_call_saving)
	"	stp	x29, x30, [sp, #-96]!\n"
	"	mov	x29, sp\n"
	"	stp	x19, x20, [sp, #16]\n"
	"	stp	x21, x22, [sp, #32]\n"
	"	stp	x23, x24, [sp, #48]\n"
	"	stp	x25, x26, [sp, #64]\n"
	"	stp	x27, x28, [sp, #80]\n"
	"	mov	x9, x0\n"
	"	mov	x0, x1\n"
	"	mov	x19, #0x1919\n"
	"	mov	x20, #0x2020\n"
	"	mov	x21, #0x2121\n"
	"	mov	x22, #0x2222\n"
	"	mov	x23, #0x2323\n"
	"	mov	x24, #0x2424\n"
	"	mov	x25, #0x2525\n"
	"	mov	x26, #0x2626\n"
	"	mov	x27, #0x2727\n"
	"	mov	x28, #0x2828\n"
	"	blr	x9\n"
	"	mov	x0, x19\n"
	"	ldp	x19, x20, [sp, #16]\n"
	"	ldp	x21, x22, [sp, #32]\n"
	"	ldp	x23, x24, [sp, #48]\n"
	"	ldp	x25, x26, [sp, #64]\n"
	"	ldp	x27, x28, [sp, #80]\n"
	"	ldp	x29, x30, [sp], #96\n"
	"	ret\n"
	KPT64_END(kpt64_call_saving)
	".popsection\n");
asmlinkage u64 kpt64_call_saving(u64 (*fn)(u64), u64 arg);

/* What the pre_handler at an entry saw, and what it is to change. */
static unsigned long a64_entry_regs[31], a64_entry_sp, a64_entry_pc;
static unsigned long a64_entry_pstate;
static unsigned long a64_entry_set_x19;	/* non-zero: write it to x19 */

static int a64_entry_pre(struct kprobe *p, struct pt_regs *regs)
{
	memcpy(a64_entry_regs, regs->regs, sizeof(a64_entry_regs));
	a64_entry_sp = regs->sp;
	a64_entry_pc = regs->pc;
	a64_entry_pstate = regs->pstate;
	/* As an exception's regs: no syscall, interrupts as the function has them. */
	HANDLER_CHECK(!in_syscall(regs));
	HANDLER_CHECK(interrupts_enabled(regs) == !irqs_disabled());
	if (a64_entry_set_x19)
		regs->regs[19] = a64_entry_set_x19;
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * The ftrace site of a traced function: the BL after "mov x9, lr", and
 * after "bti c" when the kernel is built with BTI.
 */
static unsigned long a64_ftrace_site(void *fn)
{
	bool bti = *(u32 *)fn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_BTIC);

	return (unsigned long)fn + (bti ? 2 : 1) * AARCH64_INSN_SIZE;
}

/*
 * Probe kpt64_traced1 at its symbol; assert it rides the ftrace site and
 * stays at the symbol, where the tree's arm64 puts its breakpoint.
 */
static void a64_probe_entry(struct kunit *test, struct kprobe *kp,
			    kprobe_pre_handler_t pre, kprobe_post_handler_t post)
{
	init_probe(kp, NULL, "kpt64_traced1", 0, pre, post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp->addr, (void *)kpt64_traced1);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(kp));
}

/*
 * At an entry on ftrace: no exception; the probe's address is the
 * symbol's (the list, trace lines and bpf_get_func_ip() show +0, as with
 * the tree's breakpoint there); the pre_handler sees the eight
 * arguments, the return address in x30 (and x9), the function's own sp
 * and the probe's address as pc. ftrace's BL itself is refused, as the
 * tree's arm64 refuses it; the instructions before it are the entry's.
 */
static void test_arm64_ftrace_entry_regs(struct kunit *test)
{
	unsigned long site = a64_ftrace_site(kpt64_traced8);
	unsigned long traps, sp_here = current_stack_pointer;
	unsigned long entry = (unsigned long)kpt64_traced8;
	struct kprobe kp, at_site;
	int i;

	init_probe(&kp, NULL, "kpt64_traced8", 0, a64_entry_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, (void *)entry);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
	KUNIT_EXPECT_PTR_EQ(test, (void *)probe_at((void *)entry), (void *)&kp);
	KUNIT_EXPECT_NULL(test, probe_at((void *)site));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_traced8(1, 2, 3, 4, 5, 6, 7, 8), 204ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], i + 1UL);
	KUNIT_EXPECT_EQ(test, a64_entry_pc, entry);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[9], a64_entry_regs[30]);
	/* The return address is in this function. */
	KUNIT_EXPECT_LT(test, a64_entry_regs[30] - (unsigned long)test_arm64_ftrace_entry_regs,
			4096UL);
	/*
	 * This function's sp at the call (the callee is a leaf without a
	 * frame: the same), on the same stack, 16-byte aligned.
	 */
	KUNIT_EXPECT_LE(test, a64_entry_sp, sp_here);
	KUNIT_EXPECT_GT(test, a64_entry_sp, sp_here - THREAD_SIZE);
	KUNIT_EXPECT_EQ(test, a64_entry_sp % 16, 0UL);
	KUNIT_EXPECT_EQ(test, a64_entry_pstate & PSR_MODE_MASK, (unsigned long)PSR_MODE_EL1h);
	KUNIT_EXPECT_EQ(test, !!(a64_entry_pstate & PSR_I_BIT), !!irqs_disabled());

	/* ftrace's BL, by offset and by address. */
	init_probe(&at_site, NULL, "kpt64_traced8", site - entry, count_pre2, NULL);
	EXPECT_REFUSED(test, -EINVAL, &at_site);
	init_probe(&at_site, (void *)site, NULL, 0, count_pre2, NULL);
	EXPECT_REFUSED(test, -EINVAL, &at_site);
	KUNIT_EXPECT_EQ(test, kpt64_traced8(1, 1, 1, 1, 1, 1, 1, 1), 36ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	unregister_kprobe(&kp);
}

/*
 * x19-x28 at an entry on ftrace are the function's when kprobes is its
 * only ftrace user, and a pre_handler's write to x19 reaches it; with
 * another ftrace user of the function, ftrace reaches us through its list
 * function and they read 0 (kprobes.rst), the arguments still right.
 */
static int a64_other_ftrace_calls;

static void a64_other_ftrace_func(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	a64_other_ftrace_calls++;
}

static struct ftrace_ops a64_other_ftrace_ops = {
	.func = a64_other_ftrace_func,
};

/* What kpt64_call_saving() puts in x19-x28. */
static const unsigned long a64_callee_saved[] = {
	0x1919, 0x2020, 0x2121, 0x2222, 0x2323, 0x2424, 0x2525, 0x2626, 0x2727, 0x2828,
};

static void test_arm64_ftrace_entry_callee_saved(struct kunit *test)
{
	struct kprobe kp;
	int i;

	a64_probe_entry(test, &kp, a64_entry_pre, NULL);
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 41), 0x1919ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[0], 41UL);
	for (i = 19; i <= 28; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], a64_callee_saved[i - 19]);

	WRITE_ONCE(a64_entry_set_x19, 0x5555);
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 41), 0x5555ULL);
	WRITE_ONCE(a64_entry_set_x19, 0);

	/* Another ftrace user of the same function. */
	KUNIT_ASSERT_EQ(test, 0, ftrace_set_filter_ip(&a64_other_ftrace_ops,
						      (unsigned long)kp.addr, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, register_ftrace_function(&a64_other_ftrace_ops));
	a64_other_ftrace_calls = 0;
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 7), 0x1919ULL);
	KUNIT_EXPECT_EQ(test, a64_other_ftrace_calls, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[0], 7UL);
	for (i = 19; i <= 28; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], 0UL);
	unregister_ftrace_function(&a64_other_ftrace_ops);
	ftrace_free_filter(&a64_other_ftrace_ops);
	unregister_kprobe(&kp);
}

/* A pre_handler at an entry on ftrace returns for the function. */
static int a64_entry_return_77(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	regs->regs[0] = 77;
	regs->pc = regs->regs[30];
	return 1;
}

/* A post_handler at an entry sees the next pc and may change an argument. */
static void a64_entry_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	WRITE_ONCE(a64_post_pc, regs->pc);
	regs->regs[0] = 5;
	atomic_inc(&post_hits);
}

static void test_arm64_ftrace_entry_redirect_and_post(struct kunit *test)
{
	struct kprobe kp;

	a64_probe_entry(test, &kp, a64_entry_return_77, NULL);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 77ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 2ULL);

	a64_probe_entry(test, &kp, count_pre, a64_entry_post);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 6ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, a64_post_pc, (unsigned long)kp.addr + AARCH64_INSN_SIZE);
	unregister_kprobe(&kp);
}

/* Where a64_entry_skip_pre() sends the function, for its first three hits. */
static unsigned long a64_skip_to;

static int a64_entry_skip_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (atomic_inc_return(&pre_hits) > 3)
		return 0;
	regs->pc = a64_skip_to;
	return 1;
}

/*
 * Third review, P4: a pre_handler at an entry on ftrace that resumes
 * past the probed instruction (pc = p->addr + 4), or at ftrace's BL
 * itself, goes on in the function, once, as after the tree's breakpoint
 * there; going through the BL again would hit the probe again, for ever.
 */
static void test_arm64_ftrace_entry_skip_prologue(struct kunit *test)
{
	unsigned long to[] = {
		(unsigned long)kpt64_traced1 + AARCH64_INSN_SIZE,
		a64_ftrace_site(kpt64_traced1),
	};
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(to); i++) {
		a64_skip_to = to[i];
		atomic_set(&pre_hits, 0);
		a64_probe_entry(test, &kp, a64_entry_skip_pre, NULL);
		KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 2ULL);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&pre_hits), 1, "resuming at %pS",
				    (void *)to[i]);
		unregister_kprobe(&kp);
	}
}

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
/*
 * A direct trampoline as BPF's for fexit: entered with the caller's
 * return address in x9 and the function's body in x30, it calls the body,
 * keeps what it returned in kpt64_direct_ret and returns to the caller.
 * As BPF's, it calls the body with a RET, which no landing pad need
 * take under BTI.
 */
static u64 kpt64_direct_ret __used;

asm(".pushsection .text, \"ax\"\n"
	KPT64_FUNC(kpt64_direct_tramp)
	KPT64_BTI_C
	"	stp	x29, x9, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	"	mov	x10, x30\n"
	"	adr	x30, 1f\n"
	"	ret	x10\n"
	"1:	adrp	x10, kpt64_direct_ret\n"
	"	str	x0, [x10, :lo12:kpt64_direct_ret]\n"
	"	ldp	x29, x9, [sp], #16\n"
	"	ret	x9\n"
	KPT64_END(kpt64_direct_tramp)
	".popsection\n");
asmlinkage void kpt64_direct_tramp(void);

static struct ftrace_ops a64_direct_ops;

/*
 * Third review, P3: a pre_handler at an entry on ftrace that returns
 * for the function (fail_function, bpf_override_return: pc = lr), on a
 * function that also has a direct trampoline which calls its body (BPF
 * fexit, fmod_ret). The caller gets the handler's value, as from the
 * tree, where the breakpoint skips the trampoline too; the trampoline
 * must not call the caller's code as the body.
 */
static void test_arm64_ftrace_entry_return_beside_trampoline(struct kunit *test)
{
	unsigned long tramp = (unsigned long)kpt64_direct_tramp;
	unsigned long fn = (unsigned long)kpt64_traced1;
	struct kprobe kp;

	KUNIT_ASSERT_EQ(test, 0, ftrace_set_filter_ip(&a64_direct_ops, fn, 0, 0));
	if (register_ftrace_direct(&a64_direct_ops, tramp)) {
		ftrace_free_filter(&a64_direct_ops);
		KUNIT_FAIL(test, "register_ftrace_direct() failed");
		return;
	}
	kpt64_direct_ret = 0;
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kpt64_direct_ret, 2ULL);

	a64_probe_entry(test, &kp, a64_entry_return_77, NULL);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 77ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(3), 4ULL);
	KUNIT_EXPECT_EQ(test, kpt64_direct_ret, 4ULL);
	KUNIT_EXPECT_EQ(test, 0, unregister_ftrace_direct(&a64_direct_ops, tramp, true));
}
#endif

/* A kretprobe beside a kprobe at an entry on ftrace: both, once a call. */
static void test_arm64_ftrace_entry_kretprobe(struct kunit *test)
{
#ifdef CONFIG_KRETPROBES
	struct kretprobe rp;
	struct kprobe kp;
	unsigned long traps;
	int i;

	atomic_set(&ret_hits, 0);
	a64_probe_entry(test, &kp, count_pre, NULL);
	init_rp(&rp, "kpt64_traced1", NULL, return_count, 0, 0);
	KUNIT_ASSERT_EQ(test, 0, register_kretprobe(&rp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)rp.kp.addr, (void *)kp.addr);
	traps = brk_traps();
	for (i = 1; i <= 3; i++)
		KUNIT_EXPECT_EQ(test, kpt64_traced1(10 * i), 10ULL * i + 1);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
	KUNIT_EXPECT_EQ(test, last_retval, 31UL);
	unregister_kretprobe(&rp);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kpt64_traced1(1), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
#else
	kunit_skip(test, "no kretprobes");
#endif
}
#endif /* CONFIG_KPROBES_ON_FTRACE */
#endif /* CONFIG_ARM64 */

static struct kunit_case kprobes_testcases[] = {
	KUNIT_CASE(test_kprobe_by_symbol),
	KUNIT_CASE(test_kprobe_by_addr),
	KUNIT_CASE(test_kprobes_batch),
	KUNIT_CASE(test_kprobes_batch_rollback),
	KUNIT_CASE(test_kprobe_ftrace_site),
#if defined(CONFIG_X86_64) && defined(CONFIG_KPROBES_ON_FTRACE)
	KUNIT_CASE(test_ftrace_entry_skip_call),
#endif
	KUNIT_CASE(test_recursion_missed_ftrace),
	KUNIT_CASE(test_ftrace_removal_waits),
	KUNIT_CASE(test_ftrace_removal_waits_many),
	KUNIT_CASE(test_refuse_bad_arguments),
	KUNIT_CASE(test_refuse_not_text),
	KUNIT_CASE(test_refuse_blacklisted),
	KUNIT_CASE(test_refuse_registered_twice),
	KUNIT_CASE(test_redirect_pre_handler),
	KUNIT_CASE(test_recursion_missed),
	KUNIT_CASE(test_busy_inside_handler),
	KUNIT_CASE(test_fault_in_handler),
	KUNIT_CASE(test_aggregate),
	KUNIT_CASE(test_unregister_listed_twice),
	KUNIT_CASE(test_aggregate_under_hits),
	KUNIT_CASE(test_disable_enable),
	KUNIT_CASE(test_unregister_clears_addr),
	KUNIT_CASE(test_handler_context),
	KUNIT_CASE(test_module_symbol_form),
	KUNIT_CASE(test_register_listed_twice),
	KUNIT_CASE(test_unregister_holds_no_lock),
	KUNIT_CASE(test_deferred_unregister),
#if defined(CONFIG_X86_64) || defined(CONFIG_ARM64)
	KUNIT_CASE(test_lookup_entry_reused),
#endif
	KUNIT_CASE(test_deferred_barrier_waits_for_callback),
	KUNIT_CASE(test_deferred_waits_for_readers),
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(test_kretprobe_pending_release_kept),
#endif
	KUNIT_CASE(test_deferred_shares_grace_periods),
	KUNIT_CASE(test_deferred_mixed_on_aggregate),
#if defined(CONFIG_X86_64) && defined(CONFIG_OPTPROBES)
	KUNIT_CASE(test_deferred_optimized_sites),
#endif
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_ftrace_arming_each_site),
	KUNIT_CASE(test_ftrace_entry_joins_busy_filter),
	KUNIT_CASE(test_ftrace_filter_grows_in_place),
	KUNIT_CASE(test_ftrace_entry_attach_race),
#endif
#ifdef CONFIG_FAILSLAB
	KUNIT_CASE(test_enomem_each_allocation),
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_enomem_ftrace_site_leaves),
#endif
#endif
#ifdef CONFIG_X86_64
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_query_while_retiring),
#endif
	KUNIT_CASE(test_boost_verdict_settles_once),
	KUNIT_CASE(test_fault_ud_in_copy),
	KUNIT_CASE(test_refuse_mce_safe_access),
	KUNIT_CASE(test_foreign_int3_passed_on),
	KUNIT_CASE(test_int3_for_restored_byte),
	KUNIT_CASE(test_smp_lock_prefix),
	KUNIT_CASE(test_refuse_inside_endbr),
	KUNIT_CASE(test_refuse_function_pieces),
	KUNIT_CASE(test_refuse_preamble),
	KUNIT_CASE(test_refuse_static_call_ret0),
	KUNIT_CASE(test_boost_refused_twobyte),
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_optimizer_function_checks),
	KUNIT_CASE(test_jump_label_into_region),
	KUNIT_CASE(test_optimized_region_jcc),
	KUNIT_CASE(test_optimized_region_call),
	KUNIT_CASE(test_optimized_region_tail_jmp),
	KUNIT_CASE(test_optimized_region_ret),
	KUNIT_CASE(test_optimized_region_padding),
	KUNIT_CASE(test_jump_label_after_call),
	KUNIT_CASE(test_optimized_region_indirect_call),
	KUNIT_CASE(test_optimized_indirect_tail_call),
	KUNIT_CASE(test_optimized_clac),
	KUNIT_CASE(test_optimized_freed_after_tasks_gp),
	KUNIT_CASE(test_optimized_nested_hit),
#endif
	KUNIT_CASE(test_kprobes_many),
	KUNIT_CASE(test_index_churn),
	KUNIT_CASE(test_refuse_mid_instruction),
	KUNIT_CASE(test_refuse_unsupported_insn),
	KUNIT_CASE(test_refuse_static_call_site),
	KUNIT_CASE(test_refuse_bug_site),
	KUNIT_CASE(test_jump_label_site),
	KUNIT_CASE(test_insn_rip_relative),
	KUNIT_CASE(test_insn_call),
	KUNIT_CASE(test_insn_jmp),
	KUNIT_CASE(test_insn_ret),
	KUNIT_CASE(test_insn_push_pop),
	KUNIT_CASE(test_insn_indirect_call),
	KUNIT_CASE(test_insn_pushf),
	KUNIT_CASE(test_insn_jcc),
	KUNIT_CASE(test_insn_loop),
	KUNIT_CASE(test_redirect_breakpoint),
	KUNIT_CASE(test_recursion_missed_breakpoint),
	KUNIT_CASE(test_hit_counters),
	KUNIT_CASE(test_member_hit_counters),
	KUNIT_CASE(test_boost),
	KUNIT_CASE(test_boost_refused_extable),
	KUNIT_CASE(test_boost_under_hits),
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_optimized),
	KUNIT_CASE(test_optimized_after_post_handler),
	KUNIT_CASE(test_optimized_retire),
	KUNIT_CASE(test_optimized_batch_in_region),
	KUNIT_CASE(test_optimized_batch_unoptimize),
	KUNIT_CASE(test_optimized_redirect),
	KUNIT_CASE_SLOW(test_optimized_under_hits),
	KUNIT_CASE_SLOW(test_optimized_batch),
#endif
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_ftrace_site_no_trap),
#endif
	KUNIT_CASE(test_fault_in_copy),
	KUNIT_CASE(test_fault_in_nested_hit),
	KUNIT_CASE(test_refuse_zeropad_load),
#ifdef CONFIG_HAVE_HW_BREAKPOINT
	KUNIT_CASE(test_hit_inside_nested_hit),
	KUNIT_CASE(test_hit_inside_own_copy),
#endif
	KUNIT_CASE(test_aggregate_breakpoint),
	KUNIT_CASE(test_register_disabled),
	KUNIT_CASE(test_disable_aggregate_member),
#endif
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(test_kretprobe_basic),
	KUNIT_CASE(test_kretprobe_entry_skip),
	KUNIT_CASE(test_kretprobes_batch),
	KUNIT_CASE(test_kretprobe_return_address),
	KUNIT_CASE(test_kretprobe_maxactive),
	KUNIT_CASE(test_kretprobe_refusals),
	KUNIT_CASE(test_kretprobes_listed_twice),
	KUNIT_CASE(test_kretprobes_batch_rollback),
	KUNIT_CASE(test_kretprobe_return_ignored),
	KUNIT_CASE(test_kretprobe_missed_skips_entry),
	KUNIT_CASE(test_kretprobe_nested_hit),
	KUNIT_CASE(test_kretprobe_task_exits_in_flight),
	KUNIT_CASE(test_kretprobe_with_kprobe),
	KUNIT_CASE(test_kretprobe_unregister_in_flight),
	KUNIT_CASE(test_kretprobe_unregister_racing),
	KUNIT_CASE(test_kretprobe_deferred_in_flight),
#endif
#ifdef CONFIG_ARM64
	KUNIT_CASE(test_arm64_b),
	KUNIT_CASE(test_arm64_bl),
	KUNIT_CASE(test_arm64_bcond),
	KUNIT_CASE(test_arm64_cbz),
	KUNIT_CASE(test_arm64_tbz),
	KUNIT_CASE(test_arm64_adr),
	KUNIT_CASE(test_arm64_ldr_literal),
	KUNIT_CASE(test_arm64_br_blr),
	KUNIT_CASE(test_arm64_ret),
	KUNIT_CASE(test_arm64_stepped_alu),
	KUNIT_CASE(test_arm64_stepped_stack),
	KUNIT_CASE(test_arm64_stepped_barriers),
	KUNIT_CASE(test_arm64_stepped_lse),
	KUNIT_CASE(test_arm64_stepped_hints),
	KUNIT_CASE(test_arm64_boosted),
	KUNIT_CASE(test_arm64_boosted_under_hits),
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_arm64_optimized),
	KUNIT_CASE(test_arm64_optimized_after_post_handler),
	KUNIT_CASE(test_arm64_optimized_kinds),
	KUNIT_CASE(test_arm64_optimized_relocated),
	KUNIT_CASE(test_arm64_optimized_not),
	KUNIT_CASE(test_arm64_optimized_redirect_and_fault),
	KUNIT_CASE_SLOW(test_arm64_optimized_under_hits),
#endif
	KUNIT_CASE(test_arm64_refused),
	KUNIT_CASE(test_arm64_jump_label_site),
	KUNIT_CASE(test_arm64_own_asm_refused),
	KUNIT_CASE(test_arm64_redirect),
	KUNIT_CASE(test_arm64_landing_pad_after_blr),
	KUNIT_CASE(test_arm64_irq_state),
	KUNIT_CASE(test_arm64_nested_hit),
	KUNIT_CASE(test_arm64_kretprobe_pac),
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_arm64_ftrace_entry_regs),
	KUNIT_CASE(test_arm64_ftrace_entry_callee_saved),
	KUNIT_CASE(test_arm64_ftrace_entry_redirect_and_post),
	KUNIT_CASE(test_arm64_ftrace_entry_skip_prologue),
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	KUNIT_CASE(test_arm64_ftrace_entry_return_beside_trampoline),
#endif
	KUNIT_CASE(test_arm64_ftrace_entry_kretprobe),
#endif
	KUNIT_CASE(test_arm64_batch),
#endif
	KUNIT_CASE(test_kretprobe_stacktrace),
	{}
};

static struct kunit_suite kprobes_test_suite = {
	.name = "kprobes_test",
	.init = kprobes_test_init,
	.exit = kprobes_test_exit,
	.test_cases = kprobes_testcases,
};

kunit_test_suites(&kprobes_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for kprobes and kretprobes");
MODULE_LICENSE("GPL");
