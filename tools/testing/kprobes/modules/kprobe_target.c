// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_target: a module whose functions the guest selftests probe, to
 * check that probes on module text work and become [GONE] when the
 * module is unloaded. Writing to the 'calls' parameter calls the target.
 *
 * With probe_init=1 it also probes one of its own __init functions while
 * it initializes; that probe must become [GONE] when the init text is
 * freed, and unregistering it at unload must still work.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>

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

static bool probe_init;
module_param(probe_init, bool, 0444);
static unsigned int init_hits;
module_param(init_hits, uint, 0444);

static int init_pre(struct kprobe *p, struct pt_regs *regs)
{
	init_hits++;
	return 0;
}

static struct kprobe init_probe = { .pre_handler = init_pre };

static noinline int __init kprobe_target_init_func(int x)
{
	return x + 1;
}

static int (*volatile init_fn)(int) __initdata = kprobe_target_init_func;

static int __init kprobe_target_init(void)
{
	int ret;

	if (!probe_init)
		return 0;
	init_probe.addr = (kprobe_opcode_t *)kprobe_target_init_func;
	ret = register_kprobe(&init_probe);
	if (ret)
		return ret;
	init_fn(1);
	return 0;
}
module_init(kprobe_target_init);

static void __exit kprobe_target_exit(void)
{
	if (probe_init)
		unregister_kprobe(&init_probe);
}
module_exit(kprobe_target_exit);

MODULE_DESCRIPTION("target functions for the kprobes selftests");
MODULE_LICENSE("GPL");
