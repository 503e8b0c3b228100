// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit cases for the riscv kprobes code: the instructions it simulates
 * (one EBREAK trap a hit), those it boosts (one) or steps out of line
 * (two: the probe's and the one ending the step), counted with
 * kprobe_ebreak_traps; the register a boosted copy jumps back through,
 * which must be one the code after the probe does not read; the
 * instructions and addresses it refuses; redirecting, nested hits, one
 * batch of probes. The targets are kunit_targets.c's, in assembly. The
 * cases every architecture runs are lib/test_kprobes.c's.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/kprobes.h>
#include <kunit/test.h>
#include <asm/ptrace.h>

#include "test_kprobes.h"	/* lib/ */
#include "kunit_targets.h"

/* EBREAK traps per hit. */
#define RV_SIMULATED	1
#define RV_BOOSTED	1
#define RV_STEPPED	2

/* EBREAK exceptions kprobes handled (probes' and ends of steps), all CPUs. */
static unsigned long ebreak_traps(void)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kprobe_ebreak_traps, cpu);
	return sum;
}

/* What the handlers of the last hit saw. */
static unsigned long rv_post_pc, rv_post_ra, rv_traps_before;

static int rv_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(regs->epc == (unsigned long)p->addr);
	HANDLER_CHECK(!preemptible());
	atomic_inc(&pre_hits);
	return 0;
}

static void rv_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	WRITE_ONCE(rv_post_pc, regs->epc);
	WRITE_ONCE(rv_post_ra, regs->ra);
	atomic_inc(&post_hits);
}

/*
 * Register @kp at @at with rv_pre() and, when @post, rv_post(); count
 * traps from now.
 */
static void rv_arm(struct kunit *test, struct kprobe *kp, void *at, bool post)
{
	reset_counts();
	rv_post_pc = 0;
	init_probe(kp, at, NULL, 0, rv_pre, post ? rv_post : NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(kp));
	rv_traps_before = ebreak_traps();
}

/*
 * After @hits hits on @kp: each ran the pre_handler (and the
 * post_handler, if any), was counted once and took @traps EBREAK traps;
 * the last post_handler saw epc at @next (when not NULL). Unregisters
 * @kp.
 */
static void rv_check(struct kunit *test, struct kprobe *kp, int hits, int traps,
		     void *next)
{
	bool post = kp->post_handler;

	KUNIT_EXPECT_EQ(test, ebreak_traps() - rv_traps_before,
			(unsigned long)hits * traps);
	KUNIT_EXPECT_EQ(test, kprobe_hits(kp), (unsigned long)hits);
	unregister_kprobe(kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), hits);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), post ? hits : 0);
	if (next && post)
		KUNIT_EXPECT_EQ(test, rv_post_pc, (unsigned long)next);
}

/* Probe @at in @fn(@x) == @want, boosted without a post_handler, stepped with. */
static void rv_copied(struct kunit *test, void *at, u64 (*fn)(u64), u64 x, u64 want,
		      unsigned int len)
{
	struct kprobe kp;

	rv_arm(test, &kp, at, false);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	rv_check(test, &kp, 2, RV_BOOSTED, NULL);

	rv_arm(test, &kp, at, true);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	rv_check(test, &kp, 1, RV_STEPPED, at + len);
	KUNIT_EXPECT_EQ(test, fn(x), want);
}

/* addi, 4 bytes: boosted alone, stepped with a post_handler. */
static void test_riscv_addi(struct kunit *test)
{
	rv_copied(test, kptrv_addi_probe, kptrv_addi, 4, 8, 4);
}

/* c.mv and c.addi, compressed: decoded, copied, boosted and stepped. */
static void test_riscv_compressed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, *kptrv_cmv_probe & 3, 2);
	rv_copied(test, kptrv_cmv_probe, kptrv_cmv, 40, 41, 2);
	rv_copied(test, kptrv_caddi_probe, kptrv_cmv, 40, 41, 2);
}

/*
 * Stack stores and loads, compressed and not, with t0 live across them:
 * the boosted copies jump back through another register (t0's value
 * reaches the result).
 */
static void test_riscv_frame(struct kunit *test)
{
	rv_copied(test, kptrv_frame_addi_probe, kptrv_frame, 10, 15, 4);
	rv_copied(test, kptrv_frame_sd_probe, kptrv_frame, 10, 15, 4);
	rv_copied(test, kptrv_frame_csdsp_probe, kptrv_frame, 10, 15, 2);
	rv_copied(test, kptrv_frame_cldsp_probe, kptrv_frame, 10, 15, 2);
}

/*
 * Every t register live on one of two paths after the probe: boosted
 * through an a register, and both paths see every t register intact.
 */
static void test_riscv_branch_liveness(struct kunit *test)
{
	struct kprobe kp;

	KUNIT_EXPECT_EQ(test, kptrv_tlive(1, 0), 51ULL);
	KUNIT_EXPECT_EQ(test, kptrv_tlive(1, 1), 33ULL);
	rv_arm(test, &kp, kptrv_tlive_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_tlive(1, 0), 51ULL);
	KUNIT_EXPECT_EQ(test, kptrv_tlive(1, 1), 33ULL);
	rv_check(test, &kp, 2, RV_BOOSTED, NULL);
}

/*
 * t0 live across a call after the probe: nothing proves a register
 * free, so the copy is stepped, and t0 reaches the result.
 */
static void test_riscv_live_across_call(struct kunit *test)
{
	struct kprobe kp;

	KUNIT_EXPECT_EQ(test, kptrv_tcall(1), 10ULL);
	rv_arm(test, &kp, kptrv_tcall_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_tcall(1), 10ULL);
	KUNIT_EXPECT_EQ(test, kptrv_tcall(2), 11ULL);
	rv_check(test, &kp, 2, RV_STEPPED, NULL);
}

/* A register written on both ways, one through a backward jump: boosted. */
static void test_riscv_backward_jump(struct kunit *test)
{
	rv_copied(test, kptrv_backjump_probe, kptrv_backjump, 1, 7, 4);
}

/*
 * Between LR and SC (both included) a breakpoint's trap clears the
 * reservation, and the SC would fail for ever: refused. The branch
 * after the SC is probed, and the loop still adds.
 */
static void test_riscv_lrsc_refused(struct kunit *test)
{
	struct kprobe kp;
	u32 word = 40;

	init_probe(&kp, kptrv_lrsc_lr, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, kptrv_lrsc_add, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, kptrv_lrsc_sc, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	rv_arm(test, &kp, kptrv_lrsc_bnez, false);
	KUNIT_EXPECT_EQ(test, kptrv_lrsc(&word, 2), 40U);
	KUNIT_EXPECT_EQ(test, word, 42U);
	rv_check(test, &kp, 1, RV_SIMULATED, NULL);
}

/*
 * Kernel text lies in the top 2 GiB, and a boosted copy's slot must come
 * from module space below it. Large kernel functions whose first
 * instructions write a register before reading it: at least one is
 * boosted, its slot within AUIPC's reach. None is called.
 */
static void test_riscv_kernel_text(struct kunit *test)
{
	static const char * const syms[] = { "kernel_clone", "vfs_read", "vfs_write" };
	unsigned int i, boosted = 0;
	struct kprobe kp, *site;
	long off;

	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		init_probe(&kp, NULL, syms[i], 0, count_pre, NULL);
		if (register_kprobe(&kp)) {
			kunit_info(test, "%s: not probed at +0 (an ftrace site?)", syms[i]);
			continue;
		}
		site = probe_at(kp.addr);
		KUNIT_ASSERT_NOT_NULL(test, site);
		if (site->ainsn.api.restore) {
			off = (long)kp.addr - (long)site->ainsn.api.restore;
			KUNIT_EXPECT_LT(test, abs(off), (long)SZ_2G);
			boosted++;
		}
		unregister_kprobe(&kp);
	}
	KUNIT_EXPECT_GT(test, boosted, 0U);
}

/*
 * A load with an exception table entry after the probe: when it faults,
 * it writes nothing and its fix-up reads t0, so t0 is not free; the
 * copy is stepped and the fix-up's sum right.
 */
static void test_riscv_fixup_after_probe(struct kunit *test)
{
	u64 word = 5;
	struct kprobe kp;

	KUNIT_EXPECT_EQ(test, kptrv_fixup(1, &word), 7ULL);
	KUNIT_EXPECT_EQ(test, kptrv_fixup(1, NULL), 9ULL);
	rv_arm(test, &kp, kptrv_fixup_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_fixup(1, NULL), 9ULL);
	KUNIT_EXPECT_EQ(test, kptrv_fixup(1, &word), 7ULL);
	rv_check(test, &kp, 2, RV_STEPPED, NULL);
}

/* An indirect jump after the probe: no register is known free, so stepped. */
static void test_riscv_no_free_register(struct kunit *test)
{
	struct kprobe kp;

	rv_arm(test, &kp, kptrv_nofree_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_nofree(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kptrv_nofree(2), 3ULL);
	rv_check(test, &kp, 2, RV_STEPPED, NULL);
}

/* Branches, jumps and auipc: simulated, one trap, the post_handler at the target. */
static void test_riscv_simulated(struct kunit *test)
{
	struct kprobe kp;

	rv_arm(test, &kp, kptrv_beq_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_beq(0), 2ULL);
	rv_check(test, &kp, 1, RV_SIMULATED, kptrv_beq_to);
	rv_arm(test, &kp, kptrv_beq_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_beq(5), 1ULL);
	rv_check(test, &kp, 1, RV_SIMULATED, (u8 *)kptrv_beq_probe + 4);

	rv_arm(test, &kp, kptrv_cbeqz_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_cbeqz(0), 2ULL);
	KUNIT_EXPECT_EQ(test, kptrv_cbeqz(3), 1ULL);
	rv_check(test, &kp, 2, RV_SIMULATED, (u8 *)kptrv_cbeqz_probe + 2);
	rv_arm(test, &kp, kptrv_cj_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_cbeqz(3), 1ULL);
	rv_check(test, &kp, 1, RV_SIMULATED, (u8 *)kptrv_cj_probe + 4);

	rv_arm(test, &kp, kptrv_auipc_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_auipc(), (u64)(unsigned long)kptrv_auipc_probe);
	rv_check(test, &kp, 1, RV_SIMULATED, (u8 *)kptrv_auipc_probe + 4);

	rv_arm(test, &kp, kptrv_jal_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_jal(6), 7ULL);
	KUNIT_EXPECT_EQ(test, rv_post_ra, (unsigned long)kptrv_jal_probe + 4);
	rv_check(test, &kp, 1, RV_SIMULATED, kptrv_leaf);

	rv_arm(test, &kp, kptrv_ret_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_jal(6), 7ULL);
	rv_check(test, &kp, 1, RV_SIMULATED, NULL);
}

/* Refused instructions and addresses, their text untouched. */
static void test_riscv_refused(struct kunit *test)
{
	struct kprobe kp;

	init_probe(&kp, kptrv_ebreak_probe, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, kptrv_cebreak_probe, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, kptrv_csr_probe, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	init_probe(&kp, kptrv_fence_probe, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EINVAL, &kp);
	/* Inside the 4-byte addi, and an odd address. */
	init_probe(&kp, (u8 *)kptrv_addi_probe + 2, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &kp);
	init_probe(&kp, (u8 *)kptrv_addi_probe + 1, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &kp);
	/* The compressed ones before are 2 bytes: +2 of c.mv is c.addi. */
	init_probe(&kp, (u8 *)kptrv_cmv_probe + 2, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&kp));
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 0);
	KUNIT_EXPECT_EQ(test, kptrv_refused(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kptrv_addi(1), 5ULL);
}

/* A pre_handler that sends the CPU to the beq's target and skips the beq. */
static int rv_redirect_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	regs->epc = (unsigned long)kptrv_beq_to;
	return 1;
}

static void test_riscv_redirect(struct kunit *test)
{
	struct kprobe kp;

	reset_counts();
	init_probe(&kp, kptrv_beq_probe, NULL, 0, rv_redirect_pre, count_post);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, kptrv_beq(5), 2ULL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 0);
}

/* The outer probe's handlers call probed code: those hits count as missed. */
static int rv_nest_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	HANDLER_CHECK(kptrv_beq(0) == 2);
	HANDLER_CHECK(kptrv_addi(1) == 5);
	return 0;
}

static void rv_nest_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic_inc(&post_hits);
	HANDLER_CHECK(kptrv_beq(0) == 2);
	HANDLER_CHECK(kptrv_addi(1) == 5);
}

static void test_riscv_nested_hit(struct kunit *test)
{
	struct kprobe outer, sim, copied;
	struct kprobe *kps[] = { &outer, &sim, &copied };

	reset_counts();
	init_probe(&outer, kptrv_cmv_probe, NULL, 0, rv_nest_pre, rv_nest_post);
	init_probe(&sim, kptrv_beq_probe, NULL, 0, count_pre2, count_post2);
	init_probe(&copied, kptrv_addi_probe, NULL, 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(kps)));
	KUNIT_EXPECT_EQ(test, kptrv_cmv(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&outer), 1UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&sim), 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&copied), 0UL);
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	KUNIT_EXPECT_EQ(test, sim.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, copied.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 0);
}

/* One register_kprobes() of 32: one stop_machine() each way. */
#define RV_BATCH 32

static void test_riscv_batch(struct kunit *test)
{
	struct kprobe *probes, **kps;
	unsigned long traps, syncs;
	int i, found = 0;

	probes = kunit_kcalloc(test, RV_BATCH, sizeof(*probes), GFP_KERNEL);
	kps = kunit_kcalloc(test, RV_BATCH, sizeof(*kps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, probes);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	reset_counts();
	for (i = 0; i < RV_BATCH; i++) {
		init_probe(&probes[i], (u8 *)kptrv_adds_probes + 4 * i, NULL, 0,
			   count_pre, NULL);
		kps[i] = &probes[i];
	}
	syncs = kprobe_text_syncs;
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, RV_BATCH));
	KUNIT_EXPECT_EQ(test, kprobe_text_syncs - syncs, 1UL);
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_adds(1), 1ULL + RV_BATCH);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, (unsigned long)RV_BATCH * RV_BOOSTED);
	for (i = 0; i < RV_BATCH; i++)
		found += kprobe_hits(&probes[i]) == 1;
	KUNIT_EXPECT_EQ(test, found, RV_BATCH);
	syncs = kprobe_text_syncs;
	unregister_kprobes(kps, RV_BATCH);
	KUNIT_EXPECT_EQ(test, kprobe_text_syncs - syncs, 1UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), RV_BATCH);
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_adds(1), 1ULL + RV_BATCH);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
}

static int kprobes_riscv_test_init(struct kunit *test)
{
	kprobes_test_start(test);
	return 0;
}

static void kprobes_riscv_test_exit(struct kunit *test)
{
	kprobes_test_end(test);
}

static struct kunit_case kprobes_riscv_testcases[] = {
	KUNIT_CASE(test_riscv_addi),
	KUNIT_CASE(test_riscv_compressed),
	KUNIT_CASE(test_riscv_frame),
	KUNIT_CASE(test_riscv_branch_liveness),
	KUNIT_CASE(test_riscv_live_across_call),
	KUNIT_CASE(test_riscv_backward_jump),
	KUNIT_CASE(test_riscv_lrsc_refused),
	KUNIT_CASE(test_riscv_kernel_text),
	KUNIT_CASE(test_riscv_fixup_after_probe),
	KUNIT_CASE(test_riscv_no_free_register),
	KUNIT_CASE(test_riscv_simulated),
	KUNIT_CASE(test_riscv_refused),
	KUNIT_CASE(test_riscv_redirect),
	KUNIT_CASE(test_riscv_nested_hit),
	KUNIT_CASE(test_riscv_batch),
	{}
};

static struct kunit_suite kprobes_riscv_test_suite = {
	.name = "kprobes_test_riscv",
	.init = kprobes_riscv_test_init,
	.exit = kprobes_riscv_test_exit,
	.test_cases = kprobes_riscv_testcases,
};

kunit_test_suites(&kprobes_riscv_test_suite);

MODULE_DESCRIPTION("KUnit tests for the riscv kprobes code");
MODULE_LICENSE("GPL");
