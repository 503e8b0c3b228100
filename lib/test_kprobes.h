/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kprobes KUnit suites share: the hit counters, the handlers
 * that count, and the checks a handler makes. lib/test_kprobes.c holds
 * the cases every architecture runs; kernel/kprobes/kretprobe_kunit.c
 * the kretprobe cases; arch/x86/kernel/kprobes/kprobes_kunit.c and
 * arch/arm64/kernel/probes/kprobes_kunit.c the cases of each arch's own
 * code, on targets written in assembly. Each suite is a module of its
 * own, with its own copy of what is here.
 */
#ifndef _LIB_TEST_KPROBES_H
#define _LIB_TEST_KPROBES_H

#include <linux/kprobes.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/random.h>
#include <linux/kthread.h>
#include <linux/vmalloc.h>
#include <linux/completion.h>
#include <linux/ftrace.h>
#include <kunit/test.h>
#ifdef CONFIG_X86_KERNEL_IBT
#include <asm/ibt.h>
#endif

#define DIV_FACTOR 3

static struct kunit *cur_test __maybe_unused;
static u32 rand1 __maybe_unused;
static atomic_t pre_hits, post_hits, pre2_hits, post2_hits;

/*
 * Handlers run with interrupts off, where a failing KUNIT_EXPECT (which
 * allocates) is not allowed: they count failed checks here instead, and
 * each test case checks the count when it ends.
 */
static atomic_t handler_errors;
static int handler_error_line;

/* The task running the test case: handlers tell its hits from others. */
static struct task_struct *test_task __maybe_unused;

#define HANDLER_CHECK(cond)					\
	do {							\
		if (!(cond)) {					\
			atomic_inc(&handler_errors);		\
			WRITE_ONCE(handler_error_line, __LINE__); \
		}						\
	} while (0)

static inline void reset_counts(void)
{
	atomic_set(&pre_hits, 0);
	atomic_set(&post_hits, 0);
	atomic_set(&pre2_hits, 0);
	atomic_set(&post2_hits, 0);
}

static inline int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	HANDLER_CHECK(!preemptible());
	atomic_inc(&pre_hits);
	return 0;
}

static inline void count_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	HANDLER_CHECK(!preemptible());
	atomic_inc(&post_hits);
}

static inline int count_pre2(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre2_hits);
	return 0;
}

static inline void count_post2(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic_inc(&post2_hits);
}

/* The hit-path counter the stress tests use; no KUnit calls from other threads. */
static inline int count_pre_quiet(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre_hits);
	return 0;
}

static inline int count_pre2_quiet(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&pre2_hits);
	return 0;
}

/*
 * @fn + @off, computed at run time: objtool takes a constant address in
 * a function's body for an indirect branch target, which under IBT
 * needs an ENDBR.
 */
static inline void *insn_at(void *fn, unsigned long off)
{
	OPTIMIZER_HIDE_VAR(fn);
	return fn + off;
}

/* Where a probe on @fn+0 goes: past the ENDBR64 landing pad under IBT. */
static inline void *entry_of(void *fn)
{
#ifdef CONFIG_X86_KERNEL_IBT
	if (is_endbr(*(u32 *)fn))
		return insn_at(fn, ENDBR_INSN_SIZE);
#endif
	return fn;
}

/* The site registered at @addr; get_kprobe() wants preemption off. */
static inline struct kprobe *probe_at(void *addr)
{
	struct kprobe *p;

	preempt_disable();
	p = get_kprobe(addr);
	preempt_enable();
	return p;
}

/* Wait until @counter moves past @before; false after about two seconds. */
static inline bool wait_for_hit(atomic_t *counter, int before)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (atomic_read(counter) != before)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

static inline bool site_holds(struct kprobe *site, struct kprobe *p)
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

static inline void init_probe(struct kprobe *p, void *addr, const char *sym,
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

/* An address in the kernel half that is not mapped: a vmalloc guard page. */
static void *unmapped;

static inline void *make_unmapped(struct kunit *test)
{
	u8 *area = vmalloc(PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, area);
	unmapped = area + PAGE_SIZE;
	return area;
}

/* A thread that calls a probed function while probes change around it. */
static atomic_t hammer_calls, hammer_wrong;

/* What @fn returns for rand1, unprobed: every call of the hammer checks it. */
static u32 hammer_expect;

static inline int hammer_fn(void *data)
{
	u32 (*fn)(u32) = data;

	/*
	 * Until kthread_stop(): a thread that returned first could be gone
	 * by then.
	 */
	while (!kthread_should_stop()) {
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

/* The running hammer, one at a time. */
static struct task_struct *hammer_running;

static inline void hammer_end(void *unused)
{
	if (!hammer_running)
		return;
	kthread_stop(hammer_running);
	hammer_running = NULL;
}

/*
 * Start the hammer on @fn. It is stopped at the end of @test even when a
 * failed assertion ends the test before stop_hammer(): left running, it
 * would call into the test's module after the module is gone.
 */
static inline struct task_struct *start_hammer_on(struct kunit *test, u32 (*fn)(u32))
{
	struct task_struct *hammer;

	atomic_set(&hammer_wrong, 0);
	atomic_set(&hammer_calls, 0);
	hammer_expect = fn(rand1);
	hammer = kthread_run(hammer_fn, fn, "kprobes-hammer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(hammer));
	hammer_running = hammer;
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, hammer_end, NULL));
	return hammer;
}

static inline void stop_hammer(struct task_struct *hammer)
{
	WARN_ON(hammer != hammer_running);
	hammer_end(NULL);
}

/* A deferred release: counted, and the probe remembered. */
static atomic_t released;
static struct kprobe *released_probe __maybe_unused;

static inline void count_release(struct kprobe *p)
{
	released_probe = p;
	atomic_inc(&released);
}

/* A thread that holds an RCU grace period off until it is stopped. */
static inline int rcu_reader_blocker(void *started)
{
	rcu_read_lock();
	complete(started);
	while (!kthread_should_stop())
		cpu_relax();
	rcu_read_unlock();
	return 0;
}

/* Return probes: what their handlers saw. */
static atomic_t ret_hits;
static unsigned long last_retval;

static inline int return_count(struct kretprobe_instance *ri, struct pt_regs *regs)
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

static inline void init_rp(struct kretprobe *rp, const char *sym,
			   kretprobe_handler_t entry, kretprobe_handler_t handler,
			   size_t data_size, int maxactive)
{
	memset(rp, 0, sizeof(*rp));
	rp->kp.symbol_name = sym;
	rp->entry_handler = entry;
	rp->handler = handler;
	rp->data_size = data_size;
	rp->maxactive = maxactive;
}

/* What every suite's init does before its own. */
static inline void kprobes_test_start(struct kunit *test)
{
	cur_test = test;
	test_task = current;
	atomic_set(&handler_errors, 0);
	reset_counts();
	rand1 = get_random_u32_above(DIV_FACTOR);
}

/* Every suite's exit: a check that failed in a handler fails the case. */
static inline void kprobes_test_end(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&handler_errors), 0,
			    "a handler check failed at line %d", handler_error_line);
}

#ifdef CONFIG_DYNAMIC_FTRACE
/*
 * @ops, calling @func, on @ip: another ftrace user of a probed function.
 * ftrace_free_filter() leaves an ops' filter pointing at freed memory,
 * so each use starts from a clean ops.
 */
static inline int other_ftrace_start(struct ftrace_ops *ops, ftrace_func_t func,
				     unsigned long ip)
{
	int ret;

	memset(ops, 0, sizeof(*ops));
	ops->func = func;
	ret = ftrace_set_filter_ip(ops, ip, 0, 0);
	if (ret)
		return ret;
	ret = register_ftrace_function(ops);
	if (ret)
		ftrace_free_filter(ops);
	return ret;
}

static inline void other_ftrace_stop(struct ftrace_ops *ops)
{
	unregister_ftrace_function(ops);
	ftrace_free_filter(ops);
}
#endif

#endif /* _LIB_TEST_KPROBES_H */
