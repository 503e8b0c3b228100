// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit cases for kretprobes, on every architecture: the entry_handler
 * and its data, maxactive and nmissed, batches and their rollback, the
 * return address the probed function and its caller see, nested and
 * recursing hits, tasks that exit inside a probed call, unregistering
 * while calls are in flight (and without waiting), and stack traces
 * taken in a return handler. The targets are C functions in this file;
 * lib/test_kprobes.h holds what the kprobes suites share.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/stacktrace.h>
#include <kunit/test.h>

#include "test_kprobes.h"	/* lib/ */

/* ---- targets ------------------------------------------------------------------ */

static noinline u32 krp_target(u32 value)
{
	return value / DIV_FACTOR;
}

static noinline u32 krp_target2(u32 value)
{
	return value / DIV_FACTOR + 1;
}

/* Called through pointers set at run time, so the calls stay real calls. */
static u32 (*target)(u32);
static u32 (*target2)(u32);

/* ---- handlers and helpers ----------------------------------------------------- */

/* A thread calling krp_target2 in a loop. */
static struct task_struct *start_hammer(struct kunit *test)
{
	return start_hammer_on(test, krp_target2);
}

static atomic_t entry_hits;

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

/* The instance pool a registered kretprobe owns, whoever keeps it. */
static void *instance_pool(struct kretprobe *rp)
{
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	return rp->rh;
#else
	return rp->rph;
#endif
}

static int entry_refuse(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_inc(&entry_hits);
	return 1;
}

static u32 (*nest_target)(u32);

/* Recurses through a pointer so that the calls stay real calls. */
static noinline u32 kretprobe_nest_target(u32 depth)
{
	if (depth)
		return nest_target(depth - 1) + 1;
	return 100;
}

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

static void test_kretprobe_basic(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	atomic_set(&entry_hits, 0);
	init_rp(&rp, "krp_target", entry_stamp, return_check, sizeof(struct stamp), 0);
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
	init_rp(&rp, "krp_target2", entry_refuse, return_count, 0, 2);
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
	init_rp(&a, "krp_target", NULL, return_count, 0, 0);
	init_rp(&b, "krp_target2", NULL, return_count, 0, 0);
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

	init_rp(&a, "krp_target", NULL, return_where, 0, 0);
	init_rp(&b, "krp_target", NULL, return_where, sizeof(long), 0);
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

/* A kprobe and a kretprobe on the same entry share the site. */
static void test_kretprobe_with_kprobe(struct kunit *test)
{
	struct kretprobe rp;
	struct kprobe kp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "krp_target", NULL, return_count, 0, 0);
	init_probe(&kp, NULL, "krp_target", 0, count_pre, count_post);
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
		init_rp(&rp, "krp_target2", NULL, return_count, 0, 4);
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

/*
 * Kretprobes listed twice: refused before either gets an instance pool
 * (the first pool leaked before; kmemleak shows it).
 */
static void test_kretprobes_listed_twice(struct kunit *test)
{
	struct kretprobe rp;

	atomic_set(&ret_hits, 0);
	init_rp(&rp, "krp_target", NULL, return_count, 0, 0);
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
	init_rp(&a, "krp_target", NULL, return_count, 0, 0);
	/* A function entry kretprobes accept, in the kprobe blacklist. */
	init_rp(&bad, "get_kprobe", NULL, return_count, 0, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL,
			register_kretprobes((struct kretprobe *[]){ &a, &bad }, 2));
	KUNIT_EXPECT_NULL(test, probe_at(entry_of(krp_target)));
	KUNIT_EXPECT_NULL(test, instance_pool(&a));
	KUNIT_EXPECT_NULL(test, instance_pool(&bad));
	target(rand1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ret_hits), 0);
}

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
	init_rp(&rp, "krp_target", NULL, return_nonzero, 0, 0);
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
	init_probe(&kp, (void *)krp_target2, NULL, 0, count_pre2, NULL);
	KUNIT_ASSERT_EQ(test, 0, register_kprobe(&kp));
	init_rp(&rp, "krp_target", NULL, calls_target2, 0, 0);
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

/*
 * A return probe waiting for its deferred release is
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
	rp->kp.addr = (kprobe_opcode_t *)krp_target;
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

/* ---- the suite ---------------------------------------------------------------------- */

static int kretprobe_test_init(struct kunit *test)
{
	kprobes_test_start(test);
	target = krp_target;
	target2 = krp_target2;
	nest_target = kretprobe_nest_target;
	sleeper_fn = kretprobe_sleeper;
#ifdef CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE
	trace_target = kretprobe_trace_target;
	trace_driver = kretprobe_trace_driver;
#endif
	return 0;
}

static void kretprobe_test_exit(struct kunit *test)
{
	kprobes_test_end(test);
}

static struct kunit_case kretprobe_testcases[] = {
	KUNIT_CASE(test_kretprobe_basic),
	KUNIT_CASE(test_kretprobe_entry_skip),
	KUNIT_CASE(test_kretprobes_batch),
	KUNIT_CASE(test_kretprobe_return_address),
	KUNIT_CASE(test_kretprobe_maxactive),
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
	KUNIT_CASE(test_kretprobe_pending_release_kept),
	KUNIT_CASE(test_kretprobe_stacktrace),
	{}
};

static struct kunit_suite kretprobe_test_suite = {
	.name = "kprobes_test_kretprobe",
	.init = kretprobe_test_init,
	.exit = kretprobe_test_exit,
	.test_cases = kretprobe_testcases,
};

kunit_test_suites(&kretprobe_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for kretprobes");
MODULE_LICENSE("GPL");
