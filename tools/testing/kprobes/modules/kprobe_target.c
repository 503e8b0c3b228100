// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_target: a module whose functions the guest selftests probe, to
 * check that probes on module text work and become [GONE] when the
 * module is unloaded. Writing to the 'calls' parameter calls the target.
 *
 * With probe_init=1 it also probes one of its own __init functions while
 * it initializes; that probe must become [GONE] when the init text is
 * freed, and unregistering it at unload must still work.
 *
 * With probe_exit=1 it tries to probe kprobe_target_func() while it is
 * being unloaded, from its exit function: the module is going, and the
 * registration must fail with -ENOENT (printed, "probe in exit: %d").
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/ibt.h>
#include <asm/nospec-branch.h>

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

/*
 * x + 6, in two instructions that a jump can replace: a probe at +0 is
 * optimized. Writing N to 'opt_calls' calls it N times.
 */
unsigned long kprobe_target_opt(unsigned long x);
asm(".pushsection .text\n"
    ".globl kprobe_target_opt\n"
    ".type kprobe_target_opt, @function\n"
    "kprobe_target_opt:\n"
    ASM_ENDBR		/* called through a pointer */
    "	movq %rdi, %rax\n"
    "	addq $5, %rax\n"
    "	addq $1, %rax\n"
    ANNOTATE_RETPOLINE_SAFE "ret\n"
    ".size kprobe_target_opt, .-kprobe_target_opt\n"
    ".popsection\n");

static unsigned long (*volatile opt_fn)(unsigned long) = kprobe_target_opt;

static int opt_calls_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (opt_fn(i) != i + 6)
			return -EIO;
	return 0;
}

static const struct kernel_param_ops opt_calls_ops = {
	.set = opt_calls_set,
};
module_param_cb(opt_calls, &opt_calls_ops, NULL, 0200);

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

/*
 * Writing 0 or 1 to 'init_probe_enabled' disables or enables the probe
 * on the init function, which is gone once the module is live; the
 * write fails with what disable_kprobe() or enable_kprobe() returned.
 */
static int init_probe_enabled_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (!probe_init)
		return -ENOENT;
	return on ? enable_kprobe(&init_probe) : disable_kprobe(&init_probe);
}

static const struct kernel_param_ops init_probe_enabled_ops = {
	.set = init_probe_enabled_set,
};
module_param_cb(init_probe_enabled, &init_probe_enabled_ops, NULL, 0200);

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

static bool probe_exit;
module_param(probe_exit, bool, 0444);

static void __exit kprobe_target_exit(void)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)kprobe_target_func };
	int ret;

	if (probe_init)
		unregister_kprobe(&init_probe);
	if (!probe_exit)
		return;
	ret = register_kprobe(&kp);
	pr_info("kprobe_target: probe in exit: %d\n", ret);
	if (!ret)
		unregister_kprobe(&kp);
}
module_exit(kprobe_target_exit);

MODULE_DESCRIPTION("target functions for the kprobes selftests");
MODULE_LICENSE("GPL");
