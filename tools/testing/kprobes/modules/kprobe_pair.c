// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_pair: registers two kprobes with a post_handler, at sym1= and
 * sym2= (function entries: ftrace sites, in the ftrace_ops that may
 * change the IP), in one register_kprobes() call, and counts their hits
 * in the read-only parameters hits1 and hits2. For the selftest of a
 * livepatch taking one of the two functions while kprobes are switched
 * off (review of 2026-11-25, N2).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>

static char *sym1 = "cmdline_proc_show", *sym2 = "version_proc_show";
module_param(sym1, charp, 0444);
module_param(sym2, charp, 0444);
static unsigned int hits1, hits2;
module_param(hits1, uint, 0444);
module_param(hits2, uint, 0444);

static int pre1(struct kprobe *p, struct pt_regs *regs)
{
	hits1++;
	return 0;
}

static int pre2(struct kprobe *p, struct pt_regs *regs)
{
	hits2++;
	return 0;
}

static void post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static struct kprobe probe1 = { .pre_handler = pre1, .post_handler = post };
static struct kprobe probe2 = { .pre_handler = pre2, .post_handler = post };
static struct kprobe *probes[] = { &probe1, &probe2 };

static int __init kprobe_pair_init(void)
{
	int ret;

	probe1.symbol_name = sym1;
	probe2.symbol_name = sym2;
	ret = register_kprobes(probes, ARRAY_SIZE(probes));
	if (ret)
		pr_err("kprobe_pair: register_kprobes(%s, %s) failed: %d\n", sym1, sym2, ret);
	return ret;
}
module_init(kprobe_pair_init);

static void __exit kprobe_pair_exit(void)
{
	unregister_kprobes(probes, ARRAY_SIZE(probes));
}
module_exit(kprobe_pair_exit);

MODULE_DESCRIPTION("two entry probes with post_handlers in one call, for the kprobes selftests");
MODULE_LICENSE("GPL");
