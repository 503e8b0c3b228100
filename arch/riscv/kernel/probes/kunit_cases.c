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

#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/stacktrace.h>
#include <linux/unaligned.h>
#include <kunit/test.h>
#include <asm/ptrace.h>

#include "test_kprobes.h"	/* lib/ */
#include "kunit_targets.h"

/* The key of kptrv_jlinto's jump label site. */
DEFINE_STATIC_KEY_FALSE(kptrv_jl_key);

/* EBREAK traps per hit. */
#define RV_SIMULATED	1
#define RV_EMULATED	1
#define RV_BOOSTED	1
#define RV_STEPPED	2

/* ftrace's call site at a traced function's symbol: "auipc t0; jalr t0". */
#define RV_FTRACE_SITE	8

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

/*
 * Probe @at in @fn(@x) == @want: boosted without a post_handler; with
 * one, taken with @post_traps EBREAKs a hit (RV_EMULATED for integer
 * arithmetic, RV_STEPPED for the rest).
 */
static void rv_copied(struct kunit *test, void *at, u64 (*fn)(u64), u64 x, u64 want,
		      unsigned int len, int post_traps)
{
	struct kprobe kp;

	rv_arm(test, &kp, at, false);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	rv_check(test, &kp, 2, RV_BOOSTED, NULL);

	rv_arm(test, &kp, at, true);
	KUNIT_EXPECT_EQ(test, fn(x), want);
	rv_check(test, &kp, 1, post_traps, at + len);
	KUNIT_EXPECT_EQ(test, fn(x), want);
}

/* addi, 4 bytes: boosted alone, emulated with a post_handler. */
static void test_riscv_addi(struct kunit *test)
{
	rv_copied(test, kptrv_addi_probe, kptrv_addi, 4, 8, 4, RV_EMULATED);
}

/* c.mv and c.addi, compressed: decoded, copied, boosted and emulated. */
static void test_riscv_compressed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, *kptrv_cmv_probe & 3, 2);
	rv_copied(test, kptrv_cmv_probe, kptrv_cmv, 40, 41, 2, RV_EMULATED);
	rv_copied(test, kptrv_caddi_probe, kptrv_cmv, 40, 41, 2, RV_EMULATED);
}

/*
 * Stack stores and loads, compressed and not, with t0 live across them:
 * the boosted copies jump back through another register (t0's value
 * reaches the result); with a post_handler, emulated.
 */
static void test_riscv_frame(struct kunit *test)
{
	rv_copied(test, kptrv_frame_addi_probe, kptrv_frame, 10, 15, 4, RV_EMULATED);
	rv_copied(test, kptrv_frame_sd_probe, kptrv_frame, 10, 15, 4, RV_EMULATED);
	rv_copied(test, kptrv_frame_csdsp_probe, kptrv_frame, 10, 15, 2, RV_EMULATED);
	rv_copied(test, kptrv_frame_cldsp_probe, kptrv_frame, 10, 15, 2, RV_EMULATED);
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
 * t0 live across a call after the probe: no t or a register is proven
 * free, but ra, which the call writes: the copy is boosted through it,
 * and t0 reaches the result.
 */
static void test_riscv_live_across_call(struct kunit *test)
{
	struct kprobe kp;

	KUNIT_EXPECT_EQ(test, kptrv_tcall(1), 10ULL);
	rv_arm(test, &kp, kptrv_tcall_probe, false);
	KUNIT_EXPECT_EQ(test, kptrv_tcall(1), 10ULL);
	KUNIT_EXPECT_EQ(test, kptrv_tcall(2), 11ULL);
	rv_check(test, &kp, 2, RV_BOOSTED, NULL);
}

/* A register written on both ways, one through a backward jump: boosted. */
static void test_riscv_backward_jump(struct kunit *test)
{
	rv_copied(test, kptrv_backjump_probe, kptrv_backjump, 1, 7, 4, RV_EMULATED);
}

/* The post_handler of an emulated instruction sees the next one's address. */
static void rv_alu_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	HANDLER_CHECK(regs->epc == (unsigned long)p->addr + ((p->opcode & 3) == 3 ? 4 : 2));
	atomic_inc(&post_hits);
}

/* Room for a probe on each instruction of a function of kptrv_alu's size. */
#define RV_EMULATED_MAX	80

/*
 * Probe every instruction in [@first, @ret), each with a post_handler,
 * so that none is boosted; count traps from now. Returns how many.
 */
static int rv_arm_all(struct kunit *test, struct kprobe ***list, void *first, void *ret)
{
	struct kprobe *kps;
	unsigned long at;
	int n = 0;

	kps = kunit_kcalloc(test, RV_EMULATED_MAX, sizeof(*kps), GFP_KERNEL);
	*list = kunit_kcalloc(test, RV_EMULATED_MAX, sizeof(**list), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	KUNIT_ASSERT_NOT_NULL(test, *list);
	reset_counts();
	for (at = (unsigned long)first; at < (unsigned long)ret;
	     at += (*(u16 *)at & 3) == 3 ? 4 : 2) {
		KUNIT_ASSERT_LT(test, n, RV_EMULATED_MAX);
		init_probe(&kps[n], (void *)at, NULL, 0, rv_pre, rv_alu_post);
		(*list)[n] = &kps[n];
		n++;
	}
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(*list, n));
	rv_traps_before = ebreak_traps();
	return n;
}

/* @n probes of @list hit @calls times each, one EBREAK a hit; unregisters them. */
static void rv_check_all(struct kunit *test, struct kprobe **list, int n, int calls,
			 int errors)
{
	KUNIT_EXPECT_EQ(test, ebreak_traps() - rv_traps_before,
			(unsigned long)n * calls * RV_EMULATED);
	unregister_kprobes(list, n);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), n * calls);
	KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), n * calls);
	KUNIT_EXPECT_EQ(test, atomic_read(&handler_errors), errors);
}

/*
 * Every integer instruction of kptrv_alu probed: each hit is one EBREAK
 * (the instruction carried out on the trap's registers), and the
 * function returns what it returns unprobed.
 */
static void test_riscv_emulated(struct kunit *test)
{
	static const u64 xs[] = { 5, 0x8000000123456789ULL, -3ULL };
	static const u64 ys[] = { -3ULL, 7, 0x40 };
	int i, n, errors = atomic_read(&handler_errors);
	u64 want[ARRAY_SIZE(xs)];
	struct kprobe **list;

	for (i = 0; i < ARRAY_SIZE(xs); i++)
		want[i] = kptrv_alu(xs[i], ys[i]);
	n = rv_arm_all(test, &list, kptrv_alu_first, kptrv_alu_ret);
	for (i = 0; i < ARRAY_SIZE(xs); i++)
		KUNIT_EXPECT_EQ(test, kptrv_alu(xs[i], ys[i]), want[i]);
	rv_check_all(test, list, n, ARRAY_SIZE(xs), errors);
}

/*
 * Every load and store of kptrv_mem probed: one EBREAK a hit, and what
 * the function returns and leaves in its buffer are as unprobed.
 */
static void test_riscv_emulated_access(struct kunit *test)
{
	static const u64 xs[] = { 0x8081828384858687ULL, 0x7f7e7d7c7b7a7978ULL };
	u64 buf[ARRAY_SIZE(xs)][4], want_buf[ARRAY_SIZE(xs)][4], want[ARRAY_SIZE(xs)];
	int i, n, errors = atomic_read(&handler_errors);
	struct kprobe **list;

	for (i = 0; i < ARRAY_SIZE(xs); i++) {
		want_buf[i][0] = 0x1111222233334444ULL * (i + 1);
		want_buf[i][1] = 0;
		want_buf[i][2] = 0xfedcba9876543210ULL;
		want_buf[i][3] = ~0ULL;
		memcpy(buf[i], want_buf[i], sizeof(buf[i]));
		want[i] = kptrv_mem(xs[i], want_buf[i]);
	}
	n = rv_arm_all(test, &list, kptrv_mem_first, kptrv_mem_ret);
	for (i = 0; i < ARRAY_SIZE(xs); i++) {
		KUNIT_EXPECT_EQ(test, kptrv_mem(xs[i], buf[i]), want[i]);
		KUNIT_EXPECT_EQ(test, memcmp(buf[i], want_buf[i], sizeof(buf[i])), 0);
	}
	rv_check_all(test, list, n, ARRAY_SIZE(xs), errors);
}

/* A register first written past a loop after the probe: boosted. */
static void test_riscv_free_past_loop(struct kunit *test)
{
	rv_copied(test, kptrv_loop_probe, kptrv_loop, 3, 7, 4, RV_EMULATED);
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
 * boosted, its slot within AUIPC's reach. None is called. Where the
 * symbol is ftrace's call site, the instruction after it is probed.
 */
static void test_riscv_kernel_text(struct kunit *test)
{
	static const char * const syms[] = { "kernel_clone", "vfs_read", "vfs_write" };
	unsigned int i, boosted = 0;
	struct kprobe kp, *site;
	long off;
	int ret;

	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		init_probe(&kp, NULL, syms[i], 0, count_pre, NULL);
		ret = register_kprobe(&kp);
		if (!ret && kprobe_ftrace(&kp)) {
			unregister_kprobe(&kp);
			ret = -EEXIST;
		}
		if (ret) {
			/*
			 * ftrace's call site at the symbol (ridden, or refused
			 * without KPROBES_ON_FTRACE): the instruction after it.
			 */
			init_probe(&kp, NULL, syms[i], RV_FTRACE_SITE, count_pre, NULL);
			KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
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
	/* With a post_handler: stepped, which sees the next instruction. */
	rv_arm(test, &kp, kptrv_fixup_probe, true);
	KUNIT_EXPECT_EQ(test, kptrv_fixup(1, &word), 7ULL);
	rv_check(test, &kp, 1, RV_STEPPED, (u8 *)kptrv_fixup_probe + 4);
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

/*
 * The outer probe's handlers call probed code: those hits count as
 * missed, a simulated, an emulated and a stepped one.
 */
static int rv_nest_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	HANDLER_CHECK(kptrv_beq(0) == 2);
	HANDLER_CHECK(kptrv_addi(1) == 5);
	HANDLER_CHECK(kptrv_nofree(1) == 2);
	return 0;
}

static void rv_nest_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic_inc(&post_hits);
	HANDLER_CHECK(kptrv_beq(0) == 2);
	HANDLER_CHECK(kptrv_addi(1) == 5);
	HANDLER_CHECK(kptrv_nofree(1) == 2);
}

static void test_riscv_nested_hit(struct kunit *test)
{
	struct kprobe outer, sim, copied, stepped;
	struct kprobe *kps[] = { &outer, &sim, &copied, &stepped };

	reset_counts();
	init_probe(&outer, kptrv_cmv_probe, NULL, 0, rv_nest_pre, rv_nest_post);
	init_probe(&sim, kptrv_beq_probe, NULL, 0, count_pre2, count_post2);
	init_probe(&copied, kptrv_addi_probe, NULL, 0, count_pre2, count_post2);
	init_probe(&stepped, kptrv_nofree_probe, NULL, 0, count_pre2, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobes(kps, ARRAY_SIZE(kps)));
	KUNIT_EXPECT_EQ(test, kptrv_cmv(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&outer), 1UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&sim), 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&copied), 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&stepped), 0UL);
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	KUNIT_EXPECT_EQ(test, sim.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, copied.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, stepped.nmissed, 2UL);
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

#ifdef CONFIG_OPTPROBES
/* ---- optimized probes ------------------------------------------------------ */

/* Is the probe at @addr optimized, with "auipc; jalr x0" in the text? */
static bool rv_optimized(void *addr)
{
	struct kprobe *p = probe_at(addr);
	u32 auipc = get_unaligned((u32 *)addr), jalr = get_unaligned((u32 *)(addr + 4));

	return p && kprobe_optimized(p) && (auipc & 0x7f) == 0x17 &&
	       (jalr & 0x707f) == 0x67 && !((jalr >> 7) & 31) &&
	       ((jalr >> 15) & 31) == ((auipc >> 7) & 31);
}

/* What the pre_handler of an optimized hit saw. */
static unsigned long rv_opt_a0, rv_opt_sp, rv_opt_status, rv_opt_trace_pc;
static bool rv_opt_irqs_on;
/* Non-zero: the pre_handler returns it for the function, redirecting. */
static unsigned long rv_opt_return;

static int rv_opt_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long trace[8];
	unsigned int n;

	HANDLER_CHECK(regs->epc == (unsigned long)p->addr);
	HANDLER_CHECK(kprobe_running() == p);
	HANDLER_CHECK(!preemptible());
	WRITE_ONCE(rv_opt_a0, regs->a0);
	WRITE_ONCE(rv_opt_sp, regs->sp);
	WRITE_ONCE(rv_opt_status, regs->status);
	WRITE_ONCE(rv_opt_irqs_on, !irqs_disabled());
	/* The probed function, as a stack trace from here goes on. */
	n = stack_trace_save(trace, ARRAY_SIZE(trace), 0);
	WRITE_ONCE(rv_opt_trace_pc, 0);
	while (n--)
		if (trace[n] - (unsigned long)p->addr < 16)
			WRITE_ONCE(rv_opt_trace_pc, trace[n]);
	atomic_inc(&pre_hits);
	if (!rv_opt_return)
		return 0;
	/* kptrv_opt's frame goes too: the redirect sets sp. */
	regs->a0 = rv_opt_return;
	regs->sp += 16;
	regs->epc = regs->ra;
	return 1;
}

/* Register @kp at @at with rv_opt_pre() and wait until the optimizer is done. */
static int rv_arm_optimized(struct kunit *test, struct kprobe *kp, void *at)
{
	int ret;

	reset_counts();
	rv_opt_return = 0;
	init_probe(kp, at, NULL, 0, rv_opt_pre, NULL);
	ret = register_kprobe(kp);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (ret)
		return ret;
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE_MSG(test, rv_optimized(at), "%pS", at);
	return 0;
}

/* The optimized @kp's hits: no exception, the probed code's registers. */
static noinline_for_stack void rv_check_optimized_hits(struct kunit *test, struct kprobe *kp)
{
	unsigned long traps = ebreak_traps(), sp = current_stack_pointer;
	bool off_after;

	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, rv_opt_a0, 10UL);
	/* kptrv_opt took 16 bytes below this frame's sp, or a little lower. */
	KUNIT_EXPECT_LT(test, rv_opt_sp, sp);
	KUNIT_EXPECT_GT(test, rv_opt_sp + 256, sp);
	KUNIT_EXPECT_TRUE(test, rv_opt_status & SR_SPP);
	KUNIT_EXPECT_TRUE(test, rv_opt_status & SR_SPIE);
	KUNIT_EXPECT_TRUE(test, rv_opt_irqs_on);
	KUNIT_EXPECT_NE(test, rv_opt_trace_pc, 0UL);
	local_irq_disable();
	KUNIT_EXPECT_EQ(test, kptrv_opt(1), 12ULL);
	off_after = irqs_disabled();
	local_irq_enable();
	KUNIT_EXPECT_TRUE(test, off_after);
	KUNIT_EXPECT_FALSE(test, rv_opt_irqs_on);
	KUNIT_EXPECT_FALSE(test, rv_opt_status & SR_SPIE);
	KUNIT_EXPECT_EQ(test, rv_opt_a0, 1UL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(kp), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
}

/* A member with a post_handler joins: one EBREAK (addi: emulated) while it stays. */
static noinline_for_stack void rv_check_post_member_steps(struct kunit *test)
{
	unsigned long traps;
	struct kprobe post;

	init_probe(&post, kptrv_opt_probe, NULL, 0, NULL, count_post2);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&post));
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_opt_probe));
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, (unsigned long)RV_EMULATED);
	KUNIT_EXPECT_EQ(test, atomic_read(&post2_hits), 1);
	unregister_kprobe(&post);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, rv_optimized(kptrv_opt_probe));
}

/* Disabled, the optimized @kp loses its jump; enabled again, it has it back. */
static noinline_for_stack void rv_check_optimized_disable(struct kunit *test, struct kprobe *kp)
{
	unsigned long traps;

	KUNIT_EXPECT_EQ(test, 0, disable_kprobe(kp));
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_opt_probe));
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, 0, enable_kprobe(kp));
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, rv_optimized(kptrv_opt_probe));
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
}

/*
 * An optimized probe takes no exception; the handler sees epc at the
 * probe, the arguments, a stack pointer in the probed function's frame,
 * the interrupts of the probed code (SPIE) and a stack trace through the
 * probed function. A post_handler joining takes the jump out at once,
 * and it comes back when it leaves; so after disabling and enabling.
 * Unregistering writes the region back.
 */
static void test_riscv_optimized(struct kunit *test)
{
	u64 orig = get_unaligned((u64 *)kptrv_opt_probe);
	struct kprobe kp;

	if (rv_arm_optimized(test, &kp, kptrv_opt_probe))
		return;
	rv_check_optimized_hits(test, &kp);
	rv_check_post_member_steps(test);
	rv_check_optimized_disable(test, &kp);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, get_unaligned((u64 *)kptrv_opt_probe), orig);
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
}

/*
 * A pre_handler that returns for the function from an optimized hit,
 * its frame popped: the function's caller gets its value, sp as before
 * the call, every other register as the handler left it.
 */
static void test_riscv_optimized_redirect(struct kunit *test)
{
	struct kprobe kp;
	int hits = 1;

	if (rv_arm_optimized(test, &kp, kptrv_opt_probe))
		return;
	rv_opt_return = 1234;
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 1234ULL);
#ifdef CONFIG_KPROBES_ON_FTRACE
	/* s1-s11 the caller set, through the redirect. */
	KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_opt, 10), 0x101ULL);
	hits++;
#endif
	rv_opt_return = 0;
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), hits + 1);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kptrv_opt(10), 30ULL);
}

/*
 * A 10-byte region: its last 2 bytes a C.NOP behind the jump. A probe on
 * an instruction inside it, whose boundary the jump's text does not
 * have, is taken (read from what the jump replaced) and the jump taken
 * out; one inside that instruction is refused. When the inner probe
 * leaves, the jump comes back.
 */
static void test_riscv_optimized_region(struct kunit *test)
{
	u8 orig[10];
	unsigned long traps;
	struct kprobe kp, inner;

	memcpy(orig, kptrv_opt10_probe, sizeof(orig));
	if (rv_arm_optimized(test, &kp, kptrv_opt10_probe))
		return;
	KUNIT_EXPECT_EQ(test, get_unaligned((u16 *)((u8 *)kptrv_opt10_probe + 8)), 0x0001);
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_opt10(5), 20ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);

	init_probe(&inner, (u8 *)kptrv_opt10_inside + 2, NULL, 0, count_pre, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &inner);
	KUNIT_EXPECT_TRUE(test, rv_optimized(kptrv_opt10_probe));
	init_probe(&inner, kptrv_opt10_inside, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&inner));
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_opt10_probe));
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_opt10(5), 20ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 2UL * RV_BOOSTED);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	unregister_kprobe(&inner);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, rv_optimized(kptrv_opt10_probe));
	KUNIT_EXPECT_EQ(test, kptrv_opt10(5), 20ULL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, memcmp(orig, kptrv_opt10_probe, sizeof(orig)), 0);
	KUNIT_EXPECT_EQ(test, kptrv_opt10(5), 20ULL);
}

/*
 * Registers a function saved and writes before it reads them again are
 * free too: ra before a call, s1 before its first use. Optimized through
 * them, the function's result is right (ra and s1 reach it).
 */
static void test_riscv_optimized_saved_registers(struct kunit *test)
{
	unsigned long traps;
	struct kprobe kp;

	if (!rv_arm_optimized(test, &kp, kptrv_rafree_probe)) {
		traps = ebreak_traps();
		KUNIT_EXPECT_EQ(test, kptrv_rafree(10), 14ULL);
		KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
		unregister_kprobe(&kp);
	}
	if (!rv_arm_optimized(test, &kp, kptrv_s1free_probe)) {
		traps = ebreak_traps();
		KUNIT_EXPECT_EQ(test, kptrv_s1free(10), 16ULL);
		KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
		unregister_kprobe(&kp);
	}
	KUNIT_EXPECT_EQ(test, kptrv_rafree(10), 14ULL);
	KUNIT_EXPECT_EQ(test, kptrv_s1free(10), 16ULL);
}

/*
 * A caller-saved register the function writes on some path, but not
 * before its return from the probe, is dead at that return (its callers
 * cannot keep a value in it): the jump goes through it. So is a t
 * register that a function called after the probe writes.
 */
static void test_riscv_optimized_clobbered_at_return(struct kunit *test)
{
	unsigned long traps;
	struct kprobe kp;

	if (rv_arm_optimized(test, &kp, kptrv_retfree_probe))
		return;
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_retfree(10), 13ULL);
	KUNIT_EXPECT_EQ(test, kptrv_retfree(0), 3ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	unregister_kprobe(&kp);

	/* t4, which the callee after the probe writes, before ra. */
	if (rv_arm_optimized(test, &kp, kptrv_callfree_probe))
		return;
	KUNIT_EXPECT_EQ(test, (get_unaligned((u32 *)kptrv_callfree_probe) >> 7) & 31, 29U);
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_callfree(10), 23ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kptrv_callfree(10), 23ULL);
}

/* Probe @at of @fn, optimized: @fn(@x) is @want, taking no exception. */
static void rv_relocated(struct kunit *test, void *at, u64 (*fn)(u64), u64 x, u64 want)
{
	unsigned long traps;
	struct kprobe kp;

	if (rv_arm_optimized(test, &kp, at))
		return;
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ_MSG(test, fn(x), want, "%pS", at);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, kprobe_hits(&kp), 1UL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, fn(x), want);
}

static u64 rv_optauipc(u64 x)
{
	return kptrv_optauipc();
}

/*
 * What the decoder simulates, in the region: a branch taken and not
 * (4-byte, and compressed beside compressed copies), an AUIPC's value at
 * the probe's address, a c.j over an instruction, a return: the detour
 * does each as the text would.
 */
static void test_riscv_optimized_relocated(struct kunit *test)
{
	rv_relocated(test, kptrv_optbr_probe, kptrv_optbr, 10, 15);
	rv_relocated(test, kptrv_optbr_probe, kptrv_optbr, 0, 100);
	rv_relocated(test, kptrv_optcbr_probe, kptrv_optcbr, 10, 17);
	rv_relocated(test, kptrv_optcbr_probe, kptrv_optcbr, 0, 200);
	rv_relocated(test, kptrv_optauipc_probe, rv_optauipc, 0,
		     (unsigned long)kptrv_optauipc_probe);
	rv_relocated(test, kptrv_optj_probe, kptrv_optj, 10, 13);
	rv_relocated(test, kptrv_optret_probe, kptrv_optret, 10, 12);
}

/*
 * No register is free right after the region: the detour goes on with
 * the next instruction and jumps back after it. A probe on that
 * instruction takes the jump out while it stays.
 */
static void test_riscv_optimized_copy_goes_on(struct kunit *test)
{
	unsigned long traps;
	struct kprobe kp, after;

	if (rv_arm_optimized(test, &kp, kptrv_optext_probe))
		return;
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_optext(10), 27ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	init_probe(&after, kptrv_optext_after, NULL, 0, count_pre, NULL);
	KUNIT_EXPECT_EQ(test, 0, register_kprobe(&after));
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_optext_probe));
	KUNIT_EXPECT_EQ(test, kptrv_optext(10), 27ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	unregister_kprobe(&after);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_TRUE(test, rv_optimized(kptrv_optext_probe));
	KUNIT_EXPECT_EQ(test, kptrv_optext(10), 27ULL);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kptrv_optext(10), 27ULL);
}

/*
 * Left on the EBREAK path: a branch landing inside the region, a call
 * in it, no free register; each still works.
 */
static void test_riscv_optimized_refused(struct kunit *test)
{
	struct kprobe kp;

	rv_arm(test, &kp, kptrv_entered_probe, false);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_entered_probe));
	KUNIT_EXPECT_EQ(test, kptrv_entered(10, 3), 17ULL);
	rv_check(test, &kp, 1, RV_BOOSTED, NULL);

	rv_arm(test, &kp, kptrv_tcall_probe, false);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_tcall_probe));
	KUNIT_EXPECT_EQ(test, kptrv_tcall(1), 10ULL);
	unregister_kprobe(&kp);

	/* A disabled jump label's target inside the region. */
	rv_arm(test, &kp, kptrv_jlinto_probe, false);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_jlinto_probe));
	KUNIT_EXPECT_EQ(test, kptrv_jlinto(10), 13ULL);
	/* Enabled over a jump, it would land inside the AUIPC. */
	if (!rv_optimized(kptrv_jlinto_probe)) {
		static_branch_enable(&kptrv_jl_key);
		KUNIT_EXPECT_EQ(test, kptrv_jlinto(10), 12ULL);
		static_branch_disable(&kptrv_jl_key);
	}
	KUNIT_EXPECT_EQ(test, kptrv_jlinto(10), 13ULL);
	unregister_kprobe(&kp);

	rv_arm(test, &kp, kptrv_nofree_probe, false);
	wait_for_kprobe_optimizer();
	KUNIT_EXPECT_FALSE(test, rv_optimized(kptrv_nofree_probe));
	unregister_kprobe(&kp);
}
#endif /* CONFIG_OPTPROBES */

/* ---- probes at function entries, on ftrace ---------------------------------- */

#ifdef CONFIG_KPROBES_ON_FTRACE
/* What the pre_handler at an entry saw, and what it is to change. */
static struct pt_regs rv_entry_regs;
static unsigned long rv_entry_set_s1;	/* non-zero: write it to s1 */
static unsigned long rv_entry_trace_fn, rv_entry_trace_caller;

/* In a stack trace from @p's pre_handler: the probed function's entry, the next. */
static noinline void rv_entry_trace(struct kprobe *p)
{
	unsigned long entries[32];
	unsigned int n, i;

	n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i + 1 < n && entries[i] - (unsigned long)p->addr >= 16; i++)
		;
	rv_entry_trace_fn = i + 1 < n ? entries[i] : 0;
	rv_entry_trace_caller = i + 1 < n ? entries[i + 1] : 0;
}

static int rv_entry_pre(struct kprobe *p, struct pt_regs *regs)
{
	rv_entry_regs = *regs;
	rv_entry_trace(p);
	/* As an exception's regs: from S-mode, interrupts as the function has them. */
	HANDLER_CHECK(!user_mode(regs));
	HANDLER_CHECK(regs_irqs_disabled(regs) == !!irqs_disabled());
	if (rv_entry_set_s1)
		regs->s1 = rv_entry_set_s1;
	atomic_inc(&pre_hits);
	return 0;
}

/* Where ftrace's call at traced function @fn goes: decoded from its AUIPC and JALR. */
static unsigned long rv_ftrace_call_target(void *fn)
{
	u32 auipc = *(u32 *)fn, jalr = *((u32 *)fn + 1);
	long hi = (long)(s32)(auipc & 0xfffff000);
	long lo = (long)(s32)jalr >> 20;

	if ((auipc & 0x7f) != 0x17 || (jalr & 0x7f) != 0x67)
		return 0;
	return (unsigned long)fn + hi + lo;
}

/* Whether @fn's call site calls our ops' own trampoline: @ours. */
static void rv_expect_our_trampoline(struct kunit *test, void *fn, bool ours)
{
	unsigned long to = rv_ftrace_call_target(fn);
	char name[KSYM_SYMBOL_LEN];

	KUNIT_ASSERT_NE_MSG(test, to, 0UL, "%pS: no call at its ftrace site", fn);
	sprint_symbol(name, to);
	KUNIT_EXPECT_EQ_MSG(test, !!str_has_prefix(name, "kprobe_ftrace_trampoline+0x0/"), ours,
			    "%pS calls %s", fn, name);
}

/*
 * Probe kptrv_traced1 at its symbol; it rides ftrace's call site there.
 * No assertion: a case that fails here has more to undo first.
 *
 * Return: whether @kp is registered.
 */
static bool rv_probe_entry(struct kunit *test, struct kprobe *kp,
			   kprobe_pre_handler_t pre, kprobe_post_handler_t post)
{
	int ret;

	init_probe(kp, NULL, "kptrv_traced1", 0, pre, post);
	ret = register_kprobe(kp);
	KUNIT_EXPECT_EQ(test, 0, ret);
	if (ret)
		return false;
	KUNIT_EXPECT_PTR_EQ(test, (void *)kp->addr, (void *)kptrv_traced1);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(kp));
	return true;
}

/*
 * At an entry on ftrace: no exception; the probe's address is the
 * symbol's; the pre_handler sees the eight arguments, the return address
 * in ra, the function's own sp, the probe's address as epc, and a stack
 * trace through the function to its caller. The call site's JALR is
 * refused, by offset and by address, while the entry's probe fires.
 */
static noinline_for_stack void rv_check_jalr_refused(struct kunit *test)
{
	struct kprobe at_jalr;

	init_probe(&at_jalr, NULL, "kptrv_traced8", 4, count_pre2, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &at_jalr);
	init_probe(&at_jalr, (u8 *)kptrv_traced8 + 4, NULL, 0, count_pre2, NULL);
	EXPECT_REFUSED(test, -EILSEQ, &at_jalr);
	KUNIT_EXPECT_EQ(test, kptrv_traced8(1, 1, 1, 1, 1, 1, 1, 1), 36ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre2_hits), 0);
}

static void test_riscv_ftrace_entry_regs(struct kunit *test)
{
	unsigned long traps, sp_here = current_stack_pointer;
	unsigned long entry = (unsigned long)kptrv_traced8;
	const unsigned long *a = &rv_entry_regs.a0;
	struct kprobe kp;
	int i;

	init_probe(&kp, NULL, "kptrv_traced8", 0, rv_entry_pre, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_EQ(test, (unsigned long)kp.addr, entry);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_TRUE(test, kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY);
	rv_expect_our_trampoline(test, kptrv_traced8, true);
	traps = ebreak_traps();
	KUNIT_EXPECT_EQ(test, kptrv_traced8(1, 2, 3, 4, 5, 6, 7, 8), 204ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, a[i], i + 1UL);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.epc, entry);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.t0, entry + RV_FTRACE_SITE);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.tp, (unsigned long)current);
	/* The return address is in this function. */
	KUNIT_EXPECT_LT(test, rv_entry_regs.ra - (unsigned long)test_riscv_ftrace_entry_regs,
			4096UL);
	/* This function's sp at the call, on the same stack, 16-byte aligned. */
	KUNIT_EXPECT_LE(test, rv_entry_regs.sp, sp_here);
	KUNIT_EXPECT_GT(test, rv_entry_regs.sp, sp_here - THREAD_SIZE);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.sp % 16, 0UL);
	KUNIT_EXPECT_TRUE(test, rv_entry_regs.status & SR_PP);
	/* A stack trace from the handler: the function, then its caller. */
	KUNIT_EXPECT_EQ(test, rv_entry_trace_fn, entry + RV_FTRACE_SITE);
	KUNIT_EXPECT_LT(test, rv_entry_trace_caller - (unsigned long)test_riscv_ftrace_entry_regs,
			4096UL);
	rv_check_jalr_refused(test);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
	unregister_kprobe(&kp);
	/* The kernel's text is within the call's reach. */
	init_probe(&kp, NULL, "jiffies_to_msecs", 0, count_pre_quiet, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	rv_expect_our_trampoline(test, jiffies_to_msecs, true);
	unregister_kprobe(&kp);
}

/*
 * s0-s11 at an entry on ftrace are the function's when kprobes is its
 * only ftrace user, and a pre_handler's write to s1 reaches it; with
 * another ftrace user of the function, ftrace reaches us through its list
 * function: s0 and the arguments are still the function's (ftrace_caller
 * keeps them), s1-s11 read 0.
 */
static int rv_other_ftrace_calls;

static void rv_other_ftrace_func(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	rv_other_ftrace_calls++;
}

static struct ftrace_ops rv_other_ftrace_ops;

/* s1-s11 as kptrv_call_saving() sets them: 0x101 * i; s0 0x800. */
static void rv_expect_callee_saved(struct kunit *test, bool exact)
{
	const unsigned long *s2 = &rv_entry_regs.s2;
	int i;

	KUNIT_EXPECT_EQ(test, rv_entry_regs.s0, 0x800UL);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.s1, exact ? 0x101UL : 0UL);
	for (i = 2; i <= 11; i++)
		KUNIT_EXPECT_EQ(test, s2[i - 2], exact ? 0x101UL * i : 0UL);
}

static void test_riscv_ftrace_entry_callee_saved(struct kunit *test)
{
	struct kprobe kp;

	if (!rv_probe_entry(test, &kp, rv_entry_pre, NULL))
		return;
	rv_expect_our_trampoline(test, kptrv_traced1, true);
	KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_traced1, 41), 0x101ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.a0, 41UL);
	rv_expect_callee_saved(test, true);

	WRITE_ONCE(rv_entry_set_s1, 0x5555);
	KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_traced1, 41), 0x5555ULL);
	WRITE_ONCE(rv_entry_set_s1, 0);

	/* Another ftrace user of the same function. */
	if (other_ftrace_start(&rv_other_ftrace_ops, rv_other_ftrace_func,
			       (unsigned long)kp.addr)) {
		KUNIT_FAIL(test, "another ftrace user refused");
		unregister_kprobe(&kp);
		return;
	}
	rv_expect_our_trampoline(test, kptrv_traced1, false);
	rv_other_ftrace_calls = 0;
	KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_traced1, 7), 0x101ULL);
	KUNIT_EXPECT_EQ(test, rv_other_ftrace_calls, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.a0, 7UL);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.epc, (unsigned long)kp.addr);
	rv_expect_callee_saved(test, false);
	other_ftrace_stop(&rv_other_ftrace_ops);

	/* Alone again: our trampoline, and the function's s0-s11. */
	rv_expect_our_trampoline(test, kptrv_traced1, true);
	KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_traced1, 9), 0x101ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 4);
	KUNIT_EXPECT_EQ(test, rv_entry_regs.a0, 9UL);
	rv_expect_callee_saved(test, true);
	unregister_kprobe(&kp);
}

/* A pre_handler at an entry on ftrace returns for the function. */
static int rv_entry_return_77(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	regs->a0 = 77;
	regs->epc = regs->ra;
	return 1;
}

/* A post_handler at an entry sees the pc after the call site and may change a0. */
static void rv_entry_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	WRITE_ONCE(rv_post_pc, regs->epc);
	regs->a0 = 5;
	atomic_inc(&post_hits);
}

/* Both, on our trampoline and through ftrace's list (@other: another user). */
static void rv_entry_redirect_and_post(struct kunit *test, bool other)
{
	struct kprobe kp;

	reset_counts();
	if (other)
		KUNIT_ASSERT_EQ(test, 0, other_ftrace_start(&rv_other_ftrace_ops,
							    rv_other_ftrace_func,
							    (unsigned long)kptrv_traced1));
	if (rv_probe_entry(test, &kp, rv_entry_return_77, NULL)) {
		rv_expect_our_trampoline(test, kptrv_traced1, !other);
		KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 77ULL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
		unregister_kprobe(&kp);
		KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 2ULL);
	}
	if (rv_probe_entry(test, &kp, count_pre, rv_entry_post)) {
		KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 6ULL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 2);
		KUNIT_EXPECT_EQ(test, atomic_read(&post_hits), 1);
		KUNIT_EXPECT_EQ(test, rv_post_pc, (unsigned long)kp.addr + RV_FTRACE_SITE);
		unregister_kprobe(&kp);
	}
	if (other)
		other_ftrace_stop(&rv_other_ftrace_ops);
}

static void test_riscv_ftrace_entry_redirect_and_post(struct kunit *test)
{
	rv_entry_redirect_and_post(test, false);
	rv_entry_redirect_and_post(test, true);
}

/* Where rv_entry_skip_pre() sends the function, for its first three hits. */
static unsigned long rv_skip_to;

static int rv_entry_skip_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (atomic_inc_return(&pre_hits) > 3)
		return 0;
	regs->epc = rv_skip_to;
	return 1;
}

/*
 * A pre_handler at an entry on ftrace that resumes at the call site's
 * JALR or just after the site goes on in the function, once: through
 * the site again it would hit the probe again, for ever.
 */
static void test_riscv_ftrace_entry_skip_site(struct kunit *test)
{
	unsigned long to[] = {
		(unsigned long)kptrv_traced1 + 4,
		(unsigned long)kptrv_traced1 + RV_FTRACE_SITE,
	};
	struct kprobe kp;
	int i;

	for (i = 0; i < ARRAY_SIZE(to); i++) {
		rv_skip_to = to[i];
		reset_counts();
		if (!rv_probe_entry(test, &kp, rv_entry_skip_pre, NULL))
			return;
		KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 2ULL);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&pre_hits), 1, "resuming at %pS",
				    (void *)to[i]);
		unregister_kprobe(&kp);
	}
}

static u32 rv_traced1_u32(u32 x)
{
	return kptrv_traced1(x);
}

/*
 * Probes, and another ftrace user, come and go at an entry another CPU
 * calls through: every call returns what it should, and hits arrive.
 */
static void test_riscv_ftrace_entry_churn(struct kunit *test)
{
	struct task_struct *hammer;
	struct kprobe kp;
	bool other;
	int i;

	reset_counts();
	hammer = start_hammer_on(test, rv_traced1_u32);
	for (i = 0; i < 30; i++) {
		init_probe(&kp, NULL, "kptrv_traced1", 0, count_pre_quiet, NULL);
		if (register_kprobe(&kp)) {
			KUNIT_FAIL(test, "register_kprobe() failed");
			break;
		}
		other = i % 3 == 1;
		if (other && other_ftrace_start(&rv_other_ftrace_ops, rv_other_ftrace_func,
						(unsigned long)kp.addr)) {
			KUNIT_FAIL(test, "another ftrace user refused");
			other = false;
		}
		usleep_range(200, 400);
		if (other)
			other_ftrace_stop(&rv_other_ftrace_ops);
		unregister_kprobe(&kp);
	}
	stop_hammer(hammer);
	KUNIT_EXPECT_EQ(test, atomic_read(&hammer_wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&hammer_calls), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&pre_hits), 0);
}

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
static struct ftrace_ops rv_direct_ops;

/*
 * A pre_handler at an entry on ftrace that returns for the function
 * (fail_function, bpf_override_return: epc = ra), on a function that
 * also has a direct trampoline which goes on where ftrace's call would
 * (BPF's for fentry programs, which jumps to t0). The caller gets the
 * handler's value: the trampoline must not run the caller's code as the
 * function's body.
 */
static void test_riscv_ftrace_entry_return_beside_trampoline(struct kunit *test)
{
	unsigned long tramp = (unsigned long)kptrv_direct_tramp;
	unsigned long fn = (unsigned long)kptrv_traced1;
	struct kprobe kp;

	memset(&rv_direct_ops, 0, sizeof(rv_direct_ops));
	KUNIT_ASSERT_EQ(test, 0, ftrace_set_filter_ip(&rv_direct_ops, fn, 0, 0));
	if (register_ftrace_direct(&rv_direct_ops, tramp)) {
		ftrace_free_filter(&rv_direct_ops);
		KUNIT_FAIL(test, "register_ftrace_direct() failed");
		return;
	}
	kptrv_direct_runs = 0;
	KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 2ULL);
	KUNIT_EXPECT_EQ(test, kptrv_direct_runs, 1ULL);

	reset_counts();
	if (rv_probe_entry(test, &kp, rv_entry_return_77, NULL)) {
		KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 77ULL);
		KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 1);
		KUNIT_EXPECT_EQ(test, kptrv_direct_runs, 2ULL);
		unregister_kprobe(&kp);
	}
	KUNIT_EXPECT_EQ(test, kptrv_traced1(3), 4ULL);
	KUNIT_EXPECT_EQ(test, 0, unregister_ftrace_direct(&rv_direct_ops, tramp, true));
}
#endif

/*
 * A kretprobe beside a kprobe at an entry on ftrace: both, once a call,
 * no exception; also through ftrace's list (rethook checks s0 at the
 * return against the entry's).
 */
static void rv_entry_kretprobe(struct kunit *test, bool other)
{
#ifdef CONFIG_KRETPROBES
	struct kretprobe rp;
	unsigned long traps;
	struct kprobe kp;
	int i, ret;

	reset_counts();
	atomic_set(&ret_hits, 0);
	if (other)
		KUNIT_ASSERT_EQ(test, 0, other_ftrace_start(&rv_other_ftrace_ops,
							    rv_other_ftrace_func,
							    (unsigned long)kptrv_traced1));
	if (!rv_probe_entry(test, &kp, count_pre, NULL))
		goto out;
	init_rp(&rp, "kptrv_traced1", NULL, return_count, 0, 0);
	ret = register_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, 0, ret);
	if (ret) {
		unregister_kprobe(&kp);
		goto out;
	}
	KUNIT_EXPECT_PTR_EQ(test, (void *)rp.kp.addr, (void *)kp.addr);
	traps = ebreak_traps();
	for (i = 1; i <= 3; i++)
		KUNIT_EXPECT_EQ(test, kptrv_call_saving(kptrv_traced1, 10 * i), 0x101ULL);
	KUNIT_EXPECT_EQ(test, ebreak_traps() - traps, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pre_hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
	KUNIT_EXPECT_EQ(test, last_retval, 31UL);
	unregister_kretprobe(&rp);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, kptrv_traced1(1), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 3);
out:
	if (other)
		other_ftrace_stop(&rv_other_ftrace_ops);
#else
	kunit_skip(test, "no kretprobes");
#endif
}

static void test_riscv_ftrace_entry_kretprobe(struct kunit *test)
{
	rv_entry_kretprobe(test, false);
	rv_entry_kretprobe(test, true);
}
#endif /* CONFIG_KPROBES_ON_FTRACE */

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
	KUNIT_CASE(test_riscv_free_past_loop),
	KUNIT_CASE(test_riscv_emulated),
	KUNIT_CASE(test_riscv_emulated_access),
	KUNIT_CASE(test_riscv_lrsc_refused),
	KUNIT_CASE(test_riscv_kernel_text),
	KUNIT_CASE(test_riscv_fixup_after_probe),
	KUNIT_CASE(test_riscv_no_free_register),
	KUNIT_CASE(test_riscv_simulated),
	KUNIT_CASE(test_riscv_refused),
	KUNIT_CASE(test_riscv_redirect),
	KUNIT_CASE(test_riscv_nested_hit),
	KUNIT_CASE(test_riscv_batch),
#ifdef CONFIG_OPTPROBES
	KUNIT_CASE(test_riscv_optimized),
	KUNIT_CASE(test_riscv_optimized_redirect),
	KUNIT_CASE(test_riscv_optimized_region),
	KUNIT_CASE(test_riscv_optimized_saved_registers),
	KUNIT_CASE(test_riscv_optimized_clobbered_at_return),
	KUNIT_CASE(test_riscv_optimized_relocated),
	KUNIT_CASE(test_riscv_optimized_copy_goes_on),
	KUNIT_CASE(test_riscv_optimized_refused),
#endif
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(test_riscv_ftrace_entry_regs),
	KUNIT_CASE(test_riscv_ftrace_entry_callee_saved),
	KUNIT_CASE(test_riscv_ftrace_entry_redirect_and_post),
	KUNIT_CASE(test_riscv_ftrace_entry_skip_site),
	KUNIT_CASE(test_riscv_ftrace_entry_churn),
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	KUNIT_CASE(test_riscv_ftrace_entry_return_beside_trampoline),
#endif
	KUNIT_CASE(test_riscv_ftrace_entry_kretprobe),
#endif
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
