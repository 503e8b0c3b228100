// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit cases for the arm64 kprobes code: the instructions it simulates
 * (one BRK trap a hit) and those it steps out of line (two: the probe's
 * and the one ending the step) or boosts (one), counted with
 * kprobe_brk_traps; the ones it refuses; optimized probes; probes at
 * function entries on ftrace; redirecting, the interrupt mask, nested
 * hits, a kretprobe on a function signing its return address (paciasp),
 * one batch of probes. The targets are kunit_targets.c's, in assembly.
 * The cases every architecture runs are lib/test_kprobes.c's.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/stacktrace.h>
#include <kunit/test.h>
#include <asm/asm-extable.h>
#include <linux/cpufeature.h>
#include <asm/ptrace.h>

#include "test_kprobes.h"	/* lib/ */
#include "kunit_targets.h"

/* ---- simulated, stepped and refused instructions -------------------------- */

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
/* ---- optimized probes ------------------------------------------------------ */

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
/*
 * The parts of test_arm64_optimized(), each a function of its own: as
 * one, its checks took more stack than a kernel with KASAN allows.
 */

/* The optimized @kp's first hits: the probed code's registers and mask. */
static noinline_for_stack void a64_check_optimized_hits(struct kunit *test,
							struct kprobe *kp)
{
	unsigned long traps;
	bool off_after;

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
	KUNIT_EXPECT_EQ(test, kprobe_hits(kp), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
}

/* A member with a post_handler joins: stepped while it stays. */
static noinline_for_stack void a64_check_post_member_steps(struct kunit *test)
{
	unsigned long traps;
	struct kprobe post;

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
}

/* Disabled, the optimized @kp loses its B; enabled again, it has it back. */
static noinline_for_stack void a64_check_optimized_disable(struct kunit *test,
							   struct kprobe *kp)
{
	unsigned long traps;

	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(kp));
	KUNIT_EXPECT_FALSE(test, a64_optimized(kpt64_add_probe));
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, a64_optimized(kpt64_add_probe));
	traps = brk_traps();
	KUNIT_EXPECT_EQ(test, kpt64_addsub(10), 13ULL);
	KUNIT_EXPECT_EQ(test, brk_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
}

static void test_arm64_optimized(struct kunit *test)
{
	u32 orig = READ_ONCE(*kpt64_add_probe);
	struct kprobe kp;

	a64_arm_optimized(test, &kp, kpt64_add_probe, a64_opt_pre);
	a64_check_optimized_hits(test, &kp);
	a64_check_post_member_steps(test);
	a64_check_optimized_disable(test, &kp);
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
	struct kprobe *kp, *kps[ARRAY_SIZE(at)];
	unsigned long traps;
	u64 v = 10;
	int i;

	kp = kunit_kcalloc(test, ARRAY_SIZE(at), sizeof(*kp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kp);
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
/* ---- probes at function entries, on ftrace ---------------------------------- */

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

/* In a stack trace from @p's pre_handler: the probed function's frame, the next. */
static unsigned long a64_entry_trace_fn, a64_entry_trace_caller;

static noinline void a64_entry_trace(struct kprobe *p)
{
	unsigned long entries[32];
	unsigned int n, i;

	n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i + 1 < n && entries[i] - (unsigned long)p->addr >= 16; i++)
		;
	a64_entry_trace_fn = i + 1 < n ? entries[i] : 0;
	a64_entry_trace_caller = i + 1 < n ? entries[i + 1] : 0;
}

static int a64_entry_pre(struct kprobe *p, struct pt_regs *regs)
{
	memcpy(a64_entry_regs, regs->regs, sizeof(a64_entry_regs));
	a64_entry_sp = regs->sp;
	a64_entry_pc = regs->pc;
	a64_entry_pstate = regs->pstate;
	a64_entry_trace(p);
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
 * Whether the BL at ftrace site @site calls our ops' own trampoline, as
 * it does while only kprobes traces the function: @ours, true or false.
 * Out of the BL's reach (this module loaded far from the kernel's text),
 * it calls ftrace_caller through the module's PLT.
 */
static void a64_expect_our_trampoline(struct kunit *test, unsigned long site, bool ours)
{
	u32 insn = le32_to_cpu(*(__le32 *)site);
	unsigned long to = site + sign_extend64((insn & 0x03ffffffUL) << 2, 27);
	char name[KSYM_SYMBOL_LEN];

	KUNIT_ASSERT_TRUE(test, aarch64_insn_is_bl(insn));
	sprint_symbol(name, to);
	if (within_module(to, THIS_MODULE))
		kunit_info(test, "%pS calls a PLT: out of reach", (void *)site);
	else
		KUNIT_EXPECT_EQ_MSG(test, !!str_has_prefix(name, "kprobe_ftrace_trampoline+0x0/"),
				    ours, "%pS calls %s", (void *)site, name);
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
/*
 * ftrace's BL of kpt64_traced8 (at @site, its entry at @entry), refused
 * by offset and by address, while the entry's probe keeps firing. Out of
 * test_arm64_ftrace_entry_regs(), whose checks take much stack under
 * KASAN.
 */
static noinline_for_stack void a64_check_ftrace_bl_refused(struct kunit *test,
							   unsigned long site,
							   unsigned long entry)
{
	struct kprobe at_site;

	init_probe(&at_site, NULL, "kpt64_traced8", site - entry, count_pre2, NULL);
	EXPECT_REFUSED(test, -EINVAL, &at_site);
	init_probe(&at_site, (void *)site, NULL, 0, count_pre2, NULL);
	EXPECT_REFUSED(test, -EINVAL, &at_site);
	KUNIT_EXPECT_EQ(test, kpt64_traced8(1, 1, 1, 1, 1, 1, 1, 1), 36ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
}

static void test_arm64_ftrace_entry_regs(struct kunit *test)
{
	unsigned long site = a64_ftrace_site(kpt64_traced8);
	unsigned long traps, sp_here = current_stack_pointer;
	unsigned long entry = (unsigned long)kpt64_traced8;
	struct kprobe kp;
	int i;

	init_probe(&kp, NULL, "kpt64_traced8", 0, a64_entry_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp.addr, (void *)entry);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
	KUNIT_EXPECT_PTR_EQ(test, (void *)probe_at((void *)entry), (void *)&kp);
	KUNIT_EXPECT_NULL(test, probe_at((void *)site));
	a64_expect_our_trampoline(test, site, true);
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
	/* A stack trace from the handler: the function, then its caller. */
	KUNIT_EXPECT_EQ(test, a64_entry_trace_fn, site + AARCH64_INSN_SIZE);
	KUNIT_EXPECT_LT(test, a64_entry_trace_caller - (unsigned long)test_arm64_ftrace_entry_regs,
			4096UL);
	a64_check_ftrace_bl_refused(test, site, entry);
	unregister_kprobe(&kp);
	/* The kernel's text is always within the BL's reach. */
	init_probe(&kp, NULL, "jiffies_to_msecs", 0, count_pre_quiet, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	a64_expect_our_trampoline(test, a64_ftrace_site(jiffies_to_msecs), true);
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

static struct ftrace_ops a64_other_ftrace_ops;

/* What kpt64_call_saving() puts in x19-x28. */
static const unsigned long a64_callee_saved[] = {
	0x1919, 0x2020, 0x2121, 0x2222, 0x2323, 0x2424, 0x2525, 0x2626, 0x2727, 0x2828,
};

static void test_arm64_ftrace_entry_callee_saved(struct kunit *test)
{
	struct kprobe kp;
	int i;

	a64_probe_entry(test, &kp, a64_entry_pre, NULL);
	a64_expect_our_trampoline(test, a64_ftrace_site(kpt64_traced1), true);
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 41), 0x1919ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[0], 41UL);
	for (i = 19; i <= 28; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], a64_callee_saved[i - 19]);

	WRITE_ONCE(a64_entry_set_x19, 0x5555);
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 41), 0x5555ULL);
	WRITE_ONCE(a64_entry_set_x19, 0);

	/* Another ftrace user of the same function. */
	KUNIT_ASSERT_EQ(test, 0, other_ftrace_start(&a64_other_ftrace_ops, a64_other_ftrace_func,
						    (unsigned long)kp.addr));
	a64_expect_our_trampoline(test, a64_ftrace_site(kpt64_traced1), false);
	a64_other_ftrace_calls = 0;
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 7), 0x1919ULL);
	KUNIT_EXPECT_EQ(test, a64_other_ftrace_calls, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[0], 7UL);
	for (i = 19; i <= 28; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], 0UL);
	other_ftrace_stop(&a64_other_ftrace_ops);
	/* Alone again: our trampoline, and the function's x19-x28. */
	a64_expect_our_trampoline(test, a64_ftrace_site(kpt64_traced1), true);
	KUNIT_EXPECT_EQ(test, kpt64_call_saving(kpt64_traced1, 9), 0x1919ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
	KUNIT_EXPECT_EQ(test, a64_entry_regs[0], 9UL);
	for (i = 19; i <= 28; i++)
		KUNIT_EXPECT_EQ(test, a64_entry_regs[i], a64_callee_saved[i - 19]);
	unregister_kprobe(&kp);
}

static u32 a64_traced1_u32(u32 x)
{
	return kpt64_traced1(x);
}

/*
 * Probes, and another ftrace user, come and go at an entry another CPU
 * calls through: every call returns what it should, and hits arrive.
 */
static void test_arm64_ftrace_entry_churn(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe kp;
	int i;

	hammer = start_hammer_on(test, a64_traced1_u32);
	for (i = 0; i < 60; i++) {
		init_probe(&kp, NULL, "kpt64_traced1", 0, count_pre_quiet, NULL);
		KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
		KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
		if (i % 3 == 1)
			KUNIT_ASSERT_EQ(test, 0, other_ftrace_start(&a64_other_ftrace_ops,
								    a64_other_ftrace_func,
								    (unsigned long)kp.addr));
		usleep_range(200, 400);
		if (i % 3 == 1)
			other_ftrace_stop(&a64_other_ftrace_ops);
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&hammer_calls), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&pre_hits), 0);
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
 * A pre_handler at an entry on ftrace that resumes
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
 * A pre_handler at an entry on ftrace that returns
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

/* ---- the suite ---------------------------------------------------------------------- */

static int kprobes_arm64_test_init(struct kunit *test)
{
	kprobes_test_start(test);
	return 0;
}

static void kprobes_arm64_test_exit(struct kunit *test)
{
	kprobes_test_end(test);
}

static struct kunit_case kprobes_arm64_testcases[] = {
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
	KUNIT_CASE(test_arm64_ftrace_entry_churn),
	KUNIT_CASE(test_arm64_ftrace_entry_redirect_and_post),
	KUNIT_CASE(test_arm64_ftrace_entry_skip_prologue),
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	KUNIT_CASE(test_arm64_ftrace_entry_return_beside_trampoline),
#endif
	KUNIT_CASE(test_arm64_ftrace_entry_kretprobe),
#endif
	KUNIT_CASE(test_arm64_batch),
	{}
};

static struct kunit_suite kprobes_arm64_test_suite = {
	.name = "kprobes_test_arm64",
	.init = kprobes_arm64_test_init,
	.exit = kprobes_arm64_test_exit,
	.test_cases = kprobes_arm64_testcases,
};

kunit_test_suites(&kprobes_arm64_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for the arm64 kprobes code");
MODULE_LICENSE("GPL");
