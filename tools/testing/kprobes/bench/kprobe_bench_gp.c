// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_bench_gp: the grace periods each RCU flavour has completed so
 * far, for guest-progs/kprobe_clients.c, which reads them before and
 * after each detach phase and reports the difference. It uses RCU and
 * SRCU interfaces only, so the same source builds against our kprobes
 * and against the tree's.
 *
 * /sys/kernel/debug/kprobe_bench_gp reads as "<flavour> <count>" lines,
 * for the flavours this kernel has:
 *   rcu          normal RCU grace periods completed: the counter part of
 *                rcu_get_gp_seq()
 *   rcu_exp      expedited RCU grace periods completed: the counter part
 *                of rcu_exp_batches_completed()
 *   srcu_tp      srcu_batches_completed(&tracepoint_srcu): the SRCU that
 *                tracepoint_synchronize_unregister() waits for; its
 *                ->srcu_idx, which moves once per grace period
 *   tasks_trace  Tasks Trace RCU grace periods completed (what
 *                synchronize_rcu_tasks_trace() waits for: BPF detach)
 *   tasks_rude   Tasks Rude RCU grace periods completed (ftrace_shutdown())
 * The counts include grace periods anyone else caused meanwhile.
 *
 * It also holds a function for kprobe_clients --hit to probe from user
 * space: /sys/kernel/debug/kprobe_bench_gp_hit reads as the cost of a
 * call of kpb_gp_entry() (a C function: an ftrace site at its entry), in
 * instructions under QEMU -icount shift=0 (virtual ns): the median of
 * KPB_GP_REPS loops of KPB_GP_CALLS calls, interrupts off, per call.
 * Read with nothing attached, then with an event there: the difference
 * is what the event costs a call.
 */

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/sort.h>
#include <linux/srcu.h>
#include <linux/tracepoint.h>

/*
 * Exported with EXPORT_SYMBOL_GPL by kernel/rcu, but declared only in
 * kernel/rcu/rcu.h, which a module built outside the tree cannot
 * include: declared here as 6.12 defines them (tree.c, srcutree.c,
 * tasks.h).
 */
#ifndef CONFIG_TINY_RCU
unsigned long rcu_get_gp_seq(void);
unsigned long rcu_exp_batches_completed(void);
#endif
#ifdef CONFIG_TREE_SRCU
unsigned long srcu_batches_completed(struct srcu_struct *sp);
#endif
#ifdef CONFIG_TASKS_TRACE_RCU
void rcu_tasks_trace_get_gp_data(int *flags, unsigned long *gp_seq);
#endif
#ifdef CONFIG_TASKS_RUDE_RCU
void rcu_tasks_rude_get_gp_data(int *flags, unsigned long *gp_seq);
#endif

/*
 * rcu_seq_ctr() of kernel/rcu/rcu.h: the low RCU_SEQ_CTR_SHIFT (2) bits
 * of a grace-period sequence are its state, the rest counts the grace
 * periods completed.
 */
#define KPB_SEQ_CTR(s)	((s) >> 2)

static struct dentry *kpb_gp_file;

static int kpb_gp_show(struct seq_file *m, void *v)
{
	unsigned long seq __maybe_unused;
	int flags __maybe_unused;

#ifndef CONFIG_TINY_RCU
	seq_printf(m, "rcu %lu\n", KPB_SEQ_CTR(rcu_get_gp_seq()));
	seq_printf(m, "rcu_exp %lu\n", KPB_SEQ_CTR(rcu_exp_batches_completed()));
#endif
#if defined(CONFIG_TREE_SRCU) && defined(CONFIG_TRACEPOINTS)
	seq_printf(m, "srcu_tp %lu\n", srcu_batches_completed(&tracepoint_srcu));
#endif
#ifdef CONFIG_TASKS_TRACE_RCU
	rcu_tasks_trace_get_gp_data(&flags, &seq);
	seq_printf(m, "tasks_trace %lu\n", KPB_SEQ_CTR(seq));
#endif
#ifdef CONFIG_TASKS_RUDE_RCU
	rcu_tasks_rude_get_gp_data(&flags, &seq);
	seq_printf(m, "tasks_rude %lu\n", KPB_SEQ_CTR(seq));
#endif
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpb_gp);

#define KPB_GP_REPS	21
#define KPB_GP_CALLS	1000

static struct dentry *kpb_gp_hit_file;
static unsigned long kpb_gp_sink;

static noinline unsigned long kpb_gp_entry(unsigned long x)
{
	return x * 3 + 1;
}

/* Called through a pointer the compiler cannot see through. */
static unsigned long (*volatile kpb_gp_fn)(unsigned long) = kpb_gp_entry;

static int kpb_gp_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int kpb_gp_hit_show(struct seq_file *m, void *v)
{
	u64 ns[KPB_GP_REPS], t0;
	unsigned long flags, acc = 0;
	int r, i;

	for (r = 0; r < KPB_GP_REPS; r++) {
		local_irq_save(flags);
		t0 = ktime_get_ns();
		for (i = 0; i < KPB_GP_CALLS; i++)
			acc += kpb_gp_fn(i);
		ns[r] = ktime_get_ns() - t0;
		local_irq_restore(flags);
	}
	WRITE_ONCE(kpb_gp_sink, acc);
	sort(ns, KPB_GP_REPS, sizeof(ns[0]), kpb_gp_cmp, NULL);
	seq_printf(m, "%llu\n", div_u64(ns[KPB_GP_REPS / 2] + KPB_GP_CALLS / 2, KPB_GP_CALLS));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpb_gp_hit);

static int __init kprobe_bench_gp_init(void)
{
	kpb_gp_file = debugfs_create_file("kprobe_bench_gp", 0444, NULL, NULL,
					  &kpb_gp_fops);
	if (IS_ERR(kpb_gp_file))
		return PTR_ERR(kpb_gp_file);
	kpb_gp_hit_file = debugfs_create_file("kprobe_bench_gp_hit", 0444, NULL, NULL,
					      &kpb_gp_hit_fops);
	if (IS_ERR(kpb_gp_hit_file)) {
		debugfs_remove(kpb_gp_file);
		return PTR_ERR(kpb_gp_hit_file);
	}
	return 0;
}
module_init(kprobe_bench_gp_init);

static void __exit kprobe_bench_gp_exit(void)
{
	debugfs_remove(kpb_gp_hit_file);
	debugfs_remove(kpb_gp_file);
}
module_exit(kprobe_bench_gp_exit);

MODULE_DESCRIPTION("kprobes benchmark: grace periods completed, per RCU flavour; a probed call's cost");
MODULE_LICENSE("GPL");
