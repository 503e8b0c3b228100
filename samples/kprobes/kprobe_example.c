// SPDX-License-Identifier: GPL-2.0-only
/*
 * kprobe_example: print a line each time a kernel function is entered.
 *
 *   insmod kprobe_example.ko symbol=kernel_clone
 *
 * The pre_handler runs before the probed instruction, the post_handler
 * right after it; both print the instruction and stack pointers as they
 * see them (the same on every architecture). The output goes to the
 * kernel log.
 *
 * With post=0 the probe has no post_handler, and where the kernel can
 * reach the probed instruction with a jump instead of a breakpoint it is
 * optimized: /sys/kernel/debug/kprobes/list then shows [OPTIMIZED].
 */

#define pr_fmt(fmt) "%s: " fmt, KBUILD_MODNAME

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

static char symbol[KSYM_NAME_LEN] = "kernel_clone";
module_param_string(symbol, symbol, sizeof(symbol), 0644);
MODULE_PARM_DESC(symbol, "function to probe (default: kernel_clone)");

static bool post = true;
module_param(post, bool, 0444);
MODULE_PARM_DESC(post, "register a post_handler too (default: 1)");

static int before(struct kprobe *p, struct pt_regs *regs)
{
	pr_info("<%s> pre_handler: p->addr = %pS, ip = %lx, sp = %lx\n",
		p->symbol_name, p->addr, instruction_pointer(regs),
		kernel_stack_pointer(regs));
	return 0;
}

static void after(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	pr_info("<%s> post_handler: p->addr = %pS, ip = %lx, sp = %lx\n",
		p->symbol_name, p->addr, instruction_pointer(regs),
		kernel_stack_pointer(regs));
}

static struct kprobe probe = {
	.symbol_name = symbol,
	.pre_handler = before,
	.post_handler = after,
};

static int __init kprobe_example_init(void)
{
	int ret;

	if (!post)
		probe.post_handler = NULL;
	ret = register_kprobe(&probe);

	if (ret < 0) {
		pr_err("register_kprobe(%s) failed: %d\n", symbol, ret);
		return ret;
	}
	pr_info("planted kprobe at %pS\n", probe.addr);
	return 0;
}

static void __exit kprobe_example_exit(void)
{
	unregister_kprobe(&probe);
	pr_info("kprobe at %pS unregistered, missed %lu hits\n", probe.addr,
		probe.nmissed);
}

module_init(kprobe_example_init);
module_exit(kprobe_example_exit);
MODULE_DESCRIPTION("kprobes example: print on every entry of a function");
MODULE_LICENSE("GPL");
