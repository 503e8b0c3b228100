// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_target: a module whose functions the guest selftests probe, to
 * check that probes on module text work and become [GONE] when the
 * module is unloaded. Writing to the 'calls' parameter calls the target.
 */
#include <linux/module.h>
#include <linux/kernel.h>

static unsigned int hits;

/* Called through a pointer so that the compiler keeps it whole. */
static noinline int kprobe_target_func(int x)
{
	hits++;
	return x * 3 + 1;
}

static int (*volatile target_fn)(int) = kprobe_target_func;

static int calls_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		target_fn(i);
	return 0;
}

static const struct kernel_param_ops calls_ops = {
	.set = calls_set,
};
module_param_cb(calls, &calls_ops, NULL, 0200);
module_param(hits, uint, 0444);

MODULE_DESCRIPTION("target functions for the kprobes selftests");
MODULE_LICENSE("GPL");
