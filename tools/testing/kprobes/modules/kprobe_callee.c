// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_callee: a function to probe, in plain C for every architecture's
 * guest (the selftests of guest-progs/kprobes_selftests.c), called on
 * demand: writing N to 'calls' runs kprobe_callee_fn() N times and fails
 * with -EIO if it ever returns a wrong result; 'text' shows the
 * instruction word 'at' bytes into it (0 by default; where symbol+0 is
 * probed past a landing pad, x86-64's ENDBR64, the selftests set it to
 * where the probe goes). Loaded, probed, unloaded and loaded again, its
 * text comes back where a [GONE] probe of the first load is still
 * registered.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kallsyms.h>
#include <linux/uaccess.h>
#include <linux/sysfs.h>

u32 kprobe_callee_fn(u32 x);

noinline u32 kprobe_callee_fn(u32 x)
{
	return x * 3 + 1;
}

static u32 (*volatile callee)(u32) = kprobe_callee_fn;

static int calls_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (callee(i) != i * 3 + 1)
			return -EIO;
	return 0;
}

static const struct kernel_param_ops calls_ops = {
	.set = calls_set,
};
module_param_cb(calls, &calls_ops, NULL, 0200);

/* Where 'text' reads, in bytes from the function's start. */
static unsigned int at;
module_param(at, uint, 0600);

/*
 * 'text' reads four bytes 'at' bytes into the function as they are now:
 * the original instruction, a breakpoint, an optimized probe's jump or
 * an armed ftrace call.
 */
static int text_get(char *buf, const struct kernel_param *kp)
{
	void *fn = dereference_symbol_descriptor((void *)kprobe_callee_fn);
	u32 word;

	if (at > 64)
		return -EINVAL;
	if (copy_from_kernel_nofault(&word, fn + at, sizeof(word)))
		return -EFAULT;
	return sysfs_emit(buf, "%08x\n", word);
}

static const struct kernel_param_ops text_ops = {
	.get = text_get,
};
module_param_cb(text, &text_ops, NULL, 0400);

MODULE_DESCRIPTION("a function to probe, for the kprobes selftests of every architecture");
MODULE_LICENSE("GPL");
