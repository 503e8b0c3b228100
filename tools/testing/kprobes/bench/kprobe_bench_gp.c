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
 */

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
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

static int __init kprobe_bench_gp_init(void)
{
	kpb_gp_file = debugfs_create_file("kprobe_bench_gp", 0444, NULL, NULL,
					  &kpb_gp_fops);
	return IS_ERR(kpb_gp_file) ? PTR_ERR(kpb_gp_file) : 0;
}
module_init(kprobe_bench_gp_init);

static void __exit kprobe_bench_gp_exit(void)
{
	debugfs_remove(kpb_gp_file);
}
module_exit(kprobe_bench_gp_exit);

MODULE_DESCRIPTION("kprobes benchmark: grace periods completed, per RCU flavour");
MODULE_LICENSE("GPL");
