// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit cases for the x86-64 kprobes code: the breakpoint path on each
 * instruction kind the int3 handler emulates or copies, boosting, jump
 * optimization, ENDBR entries and __pfx_ preambles, the sites the
 * kernel lists (static calls, jump labels, BUG()), faults and nested
 * hits. The targets are kunit_targets.c's, in assembly: they have no
 * ftrace site, so their probes take the breakpoint path. The cases
 * every architecture runs are lib/test_kprobes.c's.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/uaccess.h>
#include <linux/ftrace.h>
#include <linux/time.h>
#include <linux/time64.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/bug.h>
#include <linux/kallsyms.h>
#include <linux/hw_breakpoint.h>
#include <linux/kdebug.h>
#include <kunit/test.h>
#include <asm/asm.h>
#include <asm/nospec-branch.h>
#include <asm/text-patching.h>
#include <asm/ibt.h>
#include <asm/smap.h>
#include <asm/orc_types.h>
#include <asm/irqflags.h>
#include <asm/alternative.h>

#include "test_kprobes.h"	/* lib/ */
#include "kunit_targets.h"

/* ---- helpers ----------------------------------------------------------------- */

#define FTRACE_TARGET "ns_to_timespec64"

/*
 * C targets: an ENDBR under IBT, then an ftrace site where the kernel
 * has one. Called through pointers set at run time, so the calls stay
 * real calls.
 */
static noinline u32 kpt_c_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 kpt_c_target2(u32 value)
{
	return value / DIV_FACTOR + 1;
}

static u32 (*target)(u32);
static u32 (*target2)(u32);

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

static int redirect_asm_pre(struct kprobe *p, struct pt_regs *regs)
{
	instruction_pointer_set(regs, (unsigned long)kpt_ret_alt);
	return 1;
}

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

/* ---- an entry on ftrace resumed past its call ---------------------------- */

#ifdef CONFIG_KPROBES_ON_FTRACE
static int skip_ftrace_call_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current != test_task || !kprobe_ftrace(p) || atomic_inc_return(&pre_hits) > 3)
		return 0;
	regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
	return 1;
}

/*
 * As on arm64: a pre_handler
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

/* ---- many probes at once, and the index behind get_kprobe() -------------- */

/* Many probes at once: each fires, one batch, one removal. */
static void test_kprobes_many(struct kunit *test)
{
	void *addrs[] = { kpt_rip_load, kpt_call, kpt_jmp, kpt_ret, kpt_pushpop,
			  kpt_pushf, kpt_c_target, kpt_c_target2 };
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

/* ---- refusals: inside an instruction, unsupported kinds, listed sites ---- */

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

/* ---- instruction kinds on the breakpoint path ---------------------------- */

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

/* ---- handlers' powers, hit counters -------------------------------------- */

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

/* ---- boosting ------------------------------------------------------------ */

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
/* ---- optimized probes ---------------------------------------------------- */

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
/*
 * The only probe of an optimized site, listed twice in one
 * unregister_kprobes() call: taken out once, its counter dropped, and
 * the site retires.
 */
static void test_optimized_unregister_listed_twice(struct kunit *test)
{
	struct kprobe a;
	struct kprobe *twice[] = { &a, &a };

	init_probe(&a, kpt_opt, NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&a));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, site_optimized(kpt_opt));
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	unregister_kprobes(twice, ARRAY_SIZE(twice));
	KUNIT_EXPECT_NULL(test, probe_at(kpt_opt));
	KUNIT_EXPECT_TRUE(test, !a.nhit);
	KUNIT_EXPECT_EQ(test, kpt_opt_10(), 16UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
}

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

/* ---- listed sites, ftrace sites, faults and nested hits ------------------ */

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

#ifdef CONFIG_KPROBES_ON_FTRACE
/* ---- entries called straight from their ftrace site ------------------------ */

/* A real call of FTRACE_TARGET (not a tail call), from a function of ours. */
static noinline struct timespec64 to_timespec(s64 nsec)
{
	struct timespec64 (*fn)(const s64 nsec) = ns_to_timespec64;
	struct timespec64 ts;

	OPTIMIZER_HIDE_VAR(fn);
	ts = fn(nsec);
	OPTIMIZER_HIDE_VAR(ts.tv_sec);
	return ts;
}

/* Where the call at an ftrace site goes, or 0 if the site holds no call. */
static unsigned long ftrace_site_callee(const void *site)
{
	u8 insn[MCOUNT_INSN_SIZE];
	s32 rel;

	if (copy_from_kernel_nofault(insn, site, sizeof(insn)) ||
	    insn[0] != CALL_INSN_OPCODE)
		return 0;
	memcpy(&rel, &insn[1], sizeof(rel));
	return (unsigned long)site + MCOUNT_INSN_SIZE + rel;
}

static bool calls_our_trampoline(const void *site)
{
	unsigned long callee = ftrace_site_callee(site);
	char name[KSYM_SYMBOL_LEN];

	if (!callee)
		return false;
	sprint_symbol(name, callee);
	return str_has_prefix(name, "kprobe_ftrace_trampoline+0x0/");
}

static struct {
	unsigned long di, ip, ret, flags, cs, ss;
} entry_seen;

static int entry_regs_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current != test_task)
		return 0;
	HANDLER_CHECK(!preemptible());
	HANDLER_CHECK(kprobe_running() == p);
	entry_seen.di = regs->di;
	entry_seen.ip = regs->ip;
	entry_seen.ret = *(unsigned long *)regs->sp;
	entry_seen.flags = regs->flags;
	entry_seen.cs = regs->cs;
	entry_seen.ss = regs->ss;
	atomic_inc(&pre_hits);
	return 0;
}

/*
 * Only our ops traces the function: its call site calls our trampoline,
 * whose regs describe the entry as ftrace's would: the argument, the
 * ip past an int3, the caller's return address at sp, the flags and
 * kernel segments.
 */
static void test_ftrace_entry_own_trampoline(struct kunit *test)
{
	char name[KSYM_SYMBOL_LEN];
	struct timespec64 ts;
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, entry_regs_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_ASSERT_TRUE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_TRUE(test, calls_our_trampoline(kp.addr));
	ts = to_timespec(3 * (s64)NSEC_PER_SEC + 7);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, 3);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 7);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, entry_seen.di, 3 * NSEC_PER_SEC + 7);
	KUNIT_EXPECT_EQ(test, entry_seen.ip, (unsigned long)kp.addr + INT3_INSN_SIZE);
	KUNIT_EXPECT_EQ(test, entry_seen.cs, (unsigned long)__KERNEL_CS);
	KUNIT_EXPECT_EQ(test, entry_seen.ss, (unsigned long)__KERNEL_DS);
	KUNIT_EXPECT_TRUE(test, entry_seen.flags & X86_EFLAGS_IF);
	sprint_symbol_no_offset(name, entry_seen.ret);
	KUNIT_EXPECT_TRUE(test, str_has_prefix(name, "to_timespec"));
}

static int entry_arg_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (current == test_task)
		regs->di = 5 * NSEC_PER_SEC + 9;
	return 0;
}

/* An argument a pre_handler changes is the one the function gets. */
static void test_ftrace_entry_changes_arg(struct kunit *test)
{
	struct timespec64 ts;
	struct kprobe kp;

	init_probe(&kp, NULL, FTRACE_TARGET, 0, entry_arg_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	ts = to_timespec(1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, 5);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 9);
}

static atomic_t other_ops_hits;

static void other_ops_func(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	if (current == test_task)
		atomic_inc(&other_ops_hits);
}

static struct ftrace_ops other_ops;

/*
 * Another ftrace user on the function: ftrace calls both through its
 * own trampoline, and ours is back once the other leaves. A site whose
 * probe is gone may stay in our filter a while: its calls find none.
 */
static void test_ftrace_entry_shared(struct kunit *test)
{
	struct kprobe kp;

	atomic_set(&other_ops_hits, 0);
	init_probe(&kp, NULL, FTRACE_TARGET, 0, count_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_TRUE(test, calls_our_trampoline(kp.addr));
	KUNIT_ASSERT_EQ(test, 0, other_ftrace_start(&other_ops, other_ops_func,
						    (unsigned long)kp.addr));
	KUNIT_EXPECT_FALSE(test, calls_our_trampoline(kp.addr));
	to_timespec(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&other_ops_hits), 1);
	other_ftrace_stop(&other_ops);
	KUNIT_EXPECT_TRUE(test, calls_our_trampoline(kp.addr));
	to_timespec(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 2);
	unregister_kprobe(&kp);
	to_timespec(1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&other_ops_hits), 1);
}

/*
 * Probes come and go at an entry while another CPU calls through it,
 * and another ftrace user comes and goes there too, moving the site
 * between our trampoline and ftrace's: every call returns what it
 * should, and the probe's hits arrive.
 */
static void test_ftrace_entry_churn(struct kunit *test)
{
	struct task_struct *hammer;
	unsigned long site = (unsigned long)entry_of(kpt_c_target);
	struct kprobe kp;
	int i;

	hammer = start_hammer_on(test, kpt_c_target);
	for (i = 0; i < 60; i++) {
		init_probe(&kp, (void *)site, NULL, 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
		if (i % 3 == 1)
			KUNIT_ASSERT_EQ(test, 0,
					other_ftrace_start(&other_ops, other_ops_func, site));
		usleep_range(200, 400);
		if (i % 3 == 1)
			other_ftrace_stop(&other_ops);
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&hammer_calls), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&pre_hits), 0);
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

/* ---- aggregates and disabled probes on the breakpoint path --------------- */

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

/* ---- ENDBR, preambles, pieces and listed sites --------------------------- */

/*
 * Offsets 1 to 3 into an ENDBR64 are not instruction boundaries: -EILSEQ,
 * as in the tree. +0 and +4 both mean the entry.
 */
static void test_refuse_inside_endbr(struct kunit *test)
{
	struct kprobe kp;
	int off;

	if (entry_of(kpt_c_target) == (void *)kpt_c_target)
		kunit_skip(test, "functions start without ENDBR64 (no IBT)");
	for (off = 1; off < 4; off++) {
		init_probe(&kp, NULL, "kpt_c_target", off, count_pre, NULL);
		EXPECT_REFUSED(test, -EILSEQ, &kp);
		init_probe(&kp, insn_at(kpt_c_target, off), NULL, 0, count_pre, NULL);
		EXPECT_REFUSED(test, -EILSEQ, &kp);
	}
	for (off = 0; off <= 4; off += 4) {
		init_probe(&kp, NULL, "kpt_c_target", off, count_pre, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, entry_of(kpt_c_target));
		KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
		unregister_kprobe(&kp);
	}
}

/*
 * Pieces the compiler splits off a blacklisted function, or specializes
 * it into, are blacklisted with it; a piece of a
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
 * (__cfi_) are refused by their names, everywhere in them.
 */
static void test_refuse_preamble(struct kunit *test)
{
	char sym[KSYM_SYMBOL_LEN], *plus;
	unsigned long size, off;
	struct kprobe kp;
	int fields;
	u8 *pad;

	/* "__pfx_kprobe_target+0xf/0x10 [test_kprobes]" */
	pad = insn_at(kpt_c_target, -1UL);
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
 * the static call site it is.
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
 * opcodes the tree leaves out): every hit traps twice. A disabled probe
 * inside the region a jump at the site would cover keeps the optimizer
 * away, which would otherwise take the site off the breakpoint path a
 * few jiffies after it is registered.
 */
static unsigned long kpt_cpuid_call(void)
{
	return kpt_cpuid();
}

static void test_boost_refused_twobyte(struct kunit *test)
{
	struct kprobe kp, inside;

	init_probe(&inside, insn_at(kpt_cpuid, 7), NULL, 0, count_pre, NULL);
	inside.flags = KPROBE_FLAG_DISABLED;
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&inside));
	init_probe(&kp, insn_at(kpt_cpuid, 5), NULL, 0, count_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_cpuid_call, 1, 3, test), 2UL);
	KUNIT_EXPECT_EQ(test, traps_for_calls(kpt_cpuid_call, 5, 3, test), 10UL);
	unregister_kprobe(&kp);
	unregister_kprobe(&inside);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 6);
}

#ifdef CONFIG_OPTPROBES
/* ---- the optimizer's regions --------------------------------------------- */

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
 * EFLAGS.AC clear, as on the int3 path; the probed code keeps it.
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
 * it. Such a task is played by calling the detour
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

#ifdef CONFIG_OPTPROBES
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

	init_probe(&inner, (void *)kpt_c_target2, NULL, 0, count_pre2, NULL);
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

#ifdef CONFIG_OPTPROBES
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

/* ---- retiring sites, boosting settled, traps that are not ours ----------- */

#ifdef CONFIG_OPTPROBES
/*
 * A site whose last probe went is "retiring",
 * out of the index with its jump still in the text. The query file
 * decoded the function without writing such jumps back first, read the
 * jump as an instruction and kept the wrong decode: a probe could then
 * go inside an instruction (kpt_opt+5, in the add at +3), and one on the
 * add itself was refused. kpt_opt's jump covers the mov at +0 and the
 * add at +3.
 */
static void test_query_while_retiring(struct kunit *test)
{
#ifdef CONFIG_DEBUG_FS
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
#else
	kunit_skip(test, "the query file is a debugfs file");
#endif
}
#endif

/*
 * Which trapping copy settles whether a probe
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
 * instruction as any; so it is without CONFIG_SMP, which writes no lock
 * prefix at all. make test boots the built-in suite both ways.
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
		if (IS_ENABLED(CONFIG_SMP))
			KUNIT_EXPECT_EQ(test, prefix, 0xf0);	/* lock */
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	KUNIT_EXPECT_EQ(test, kpt_lock_inc(&v), 2UL);
	if (!ret)
		unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), ret ? 0 : 1);
}

/* ---- the suite ---------------------------------------------------------------------- */

static int kprobes_x86_test_init(struct kunit *test)
{
	kprobes_test_start(test);
	target = kpt_c_target;
	target2 = kpt_c_target2;
	return 0;
}

static void kprobes_x86_test_exit(struct kunit *test)
{
	kprobes_test_end(test);
}

static struct kunit_case kprobes_x86_testcases[] = {
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_ftrace_entry_skip_call),
#endif
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_deferred_optimized_sites),
#endif
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
	KUNIT_CASE(test_optimized_unregister_listed_twice),
	KUNIT_CASE(test_optimized_retire),
	KUNIT_CASE(test_optimized_batch_in_region),
	KUNIT_CASE(test_optimized_batch_unoptimize),
	KUNIT_CASE(test_optimized_redirect),
	KUNIT_CASE_SLOW(test_optimized_under_hits),
	KUNIT_CASE_SLOW(test_optimized_batch),
#endif
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_ftrace_site_no_trap),
	KUNIT_CASE(test_ftrace_entry_own_trampoline),
	KUNIT_CASE(test_ftrace_entry_changes_arg),
	KUNIT_CASE(test_ftrace_entry_shared),
	KUNIT_CASE(test_ftrace_entry_churn),
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
	{}
};

static struct kunit_suite kprobes_x86_test_suite = {
	.name = "kprobes_test_x86",
	.init = kprobes_x86_test_init,
	.exit = kprobes_x86_test_exit,
	.test_cases = kprobes_x86_testcases,
};

kunit_test_suites(&kprobes_x86_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for the x86-64 kprobes code");
MODULE_LICENSE("GPL");
