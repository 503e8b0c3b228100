// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit cases for kprobes and kretprobes that every architecture runs:
 * registration by symbol and address and in batches, each refusal with
 * the tree's error code, aggregates, enable and disable, handlers'
 * powers and limits, kretprobes, unregistering without waiting, probes
 * at ftrace sites, and allocations failing in turn.
 *
 * The probe targets are small C functions in this file, whose entry is
 * an ftrace site where the kernel has one, so probes at their entry
 * take the ftrace path; built as a module, every target is module text.
 * Where a case needs instructions it knows, a few lines of assembly
 * below give them. The cases of each architecture's own code, on
 * targets written in assembly, are a suite of their own beside that
 * code (arch/x86/kernel/kprobes/kunit_cases.c,
 * arch/arm64/kernel/probes/kunit_cases.c); lib/test_kprobes.h holds what
 * the suites share.
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
#include <asm/nops.h>
#include <asm/nospec-branch.h>
#endif

#include "test_kprobes.h"

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

/*
 * Instructions a case needs to know, on the arches whose own code has a
 * suite: kpt_nop_sled, 256 instructions never run, any of which may be
 * probed; on x86-64, kpt_add6, x + 6: a movq at +0 that a jump may
 * cover, an addq at +3.
 */
#if defined(CONFIG_X86_64)
asm(".pushsection .text\n"
	".globl kpt_nop_sled\n.type kpt_nop_sled, @function\nkpt_nop_sled:\n"
	ANNOTATE_NOENDBR
	".rept 256\n	nop\n.endr\n"
	ANNOTATE_RETPOLINE_SAFE "ret\n"
	".size kpt_nop_sled, .-kpt_nop_sled\n"
	".globl kpt_add6\n.type kpt_add6, @function\nkpt_add6:\n"
	ANNOTATE_NOENDBR
	"	movq %rdi, %rax\n"
	"	addq $5, %rax\n"
	"	addq $1, %rax\n"
	ANNOTATE_RETPOLINE_SAFE "ret\n"
	".size kpt_add6, .-kpt_add6\n"
	".popsection\n");
asmlinkage unsigned long kpt_add6(unsigned long x);
#elif defined(CONFIG_ARM64)
asm(".pushsection .text, \"ax\"\n"
	".globl kpt_nop_sled\n.type kpt_nop_sled, %function\n.balign 16\nkpt_nop_sled:\n"
	".rept 256\n	nop\n.endr\n"
	"	ret\n"
	".size kpt_nop_sled, .-kpt_nop_sled\n"
	".popsection\n");
#endif
#if defined(CONFIG_X86_64) || defined(CONFIG_ARM64)
asmlinkage void kpt_nop_sled(void);
#endif

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

#ifdef CONFIG_KRETPROBES
static void test_kretprobe_refusals(struct kunit *test)
{
	struct kretprobe rp;

	/* Not a function entry (past the entry, wherever a landing pad puts it). */
	init_rp(&rp, NULL, NULL, return_count, 0, 0);
#ifdef CONFIG_X86_64
	rp.kp.addr = insn_at(kpt_add6, 3);
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
	 * past an ENDBR. x86's kretprobe_blacklist names
	 * it; other arches leave their __switch_to to NOKPROBE_SYMBOL().
	 */
	init_rp(&rp, "__switch_to", NULL, return_count, 0, 0);
	EXPECT_RP_REFUSED(test, -EINVAL, &rp);
#endif
	KUNIT_EXPECT_EQ(test, -EINVAL, register_kretprobes(NULL, 1));
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

/* Start the hammer on kprobe_target2. */
static struct task_struct *start_hammer(struct kunit *test)
{
	return start_hammer_on(test, kprobe_target2);
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

/* ---- probes listed twice in one call, ->addr after unregistering ----------------- */

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
}

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
 * armed: another CPU hits it meanwhile.
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

/* ---- handler context, and the MODULE:SYMBOL form --------------------------------- */

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

/* ---- unregistering holds no lock while it waits ---------------------------------- */

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
 * return only once the reader is gone.
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

#ifdef CONFIG_KPROBES_ON_FTRACE
static void ipmodify_holder(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

#ifdef CONFIG_DEBUG_FS
/* Another user that may change the IP, as a livepatch does. */
static struct ftrace_ops ipmodify_holder_ops = {
	.func = ipmodify_holder,
	.flags = FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED | FTRACE_OPS_FL_IPMODIFY,
};
#endif

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
 * and unregistering works.
 */
static void test_ftrace_arming_each_site(struct kunit *test)
{
#ifdef CONFIG_DEBUG_FS
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
#else
	kunit_skip(test, "the enabled switch is a debugfs file");
#endif
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
	{ kpt_add6, false, 400 },	/* a breakpoint site that may be optimized */
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
 * A function entry's probe unregistered while each of
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

/* ---- the suite ---------------------------------------------------------------------- */

static int kprobes_test_init(struct kunit *test)
{
	kprobes_test_start(test);
	target = kprobe_target;
	target2 = kprobe_target2;
	recursed_target = kprobe_recursed_target;
	return 0;
}

static void kprobes_test_exit(struct kunit *test)
{
	kprobes_test_end(test);
}

static struct kunit_case kprobes_testcases[] = {
	KUNIT_CASE(test_kprobe_by_symbol),
	KUNIT_CASE(test_kprobe_by_addr),
	KUNIT_CASE(test_kprobes_batch),
	KUNIT_CASE(test_kprobes_batch_rollback),
	KUNIT_CASE(test_kprobe_ftrace_site),
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
	KUNIT_CASE(test_deferred_shares_grace_periods),
	KUNIT_CASE(test_deferred_mixed_on_aggregate),
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
#ifdef CONFIG_KRETPROBES
	KUNIT_CASE(test_kretprobe_refusals),
#endif
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
MODULE_DESCRIPTION("KUnit tests for kprobes on every architecture");
MODULE_LICENSE("GPL");
