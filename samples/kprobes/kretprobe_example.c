// SPDX-License-Identifier: GPL-2.0-only
/*
 * kretprobe_example: time each call of a kernel function.
 *
 *   insmod kretprobe_example.ko func=kernel_clone
 *
 * The entry_handler stamps the time into the instance's private data
 * (data_size bytes that travel from entry to return); the return
 * handler prints the function's return value and how long the call took.
 */

#define pr_fmt(fmt) "%s: " fmt, KBUILD_MODNAME

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>

static char func[KSYM_NAME_LEN] = "kernel_clone";
module_param_string(func, func, sizeof(func), 0644);
MODULE_PARM_DESC(func, "function to time (default: kernel_clone)");

/*
 * Handlers may run in NMI context (riscv and arm64 take breakpoints as
 * NMIs): the clock must be one that can be read there.
 */
struct call_data {
	u64 entered;
};

static int on_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *data = (struct call_data *)ri->data;

	/* Calls from kernel threads are not interesting here: skip them. */
	if (!current->mm)
		return 1;
	data->entered = ktime_get_mono_fast_ns();
	return 0;
}
NOKPROBE_SYMBOL(on_entry);

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *data = (struct call_data *)ri->data;
	s64 ns = ktime_get_mono_fast_ns() - data->entered;

	pr_info("%s returned %lu and took %lld ns\n", func,
		regs_return_value(regs), ns);
	return 0;
}
NOKPROBE_SYMBOL(on_return);

static struct kretprobe timer = {
	.handler = on_return,
	.entry_handler = on_entry,
	.data_size = sizeof(struct call_data),
	/* Up to 20 calls of the function may be timed at once. */
	.maxactive = 20,
};

static int __init kretprobe_example_init(void)
{
	int ret;

	timer.kp.symbol_name = func;
	ret = register_kretprobe(&timer);
	if (ret < 0) {
		pr_err("register_kretprobe(%s) failed: %d\n", func, ret);
		return ret;
	}
	pr_info("timing %s at %pS\n", func, timer.kp.addr);
	return 0;
}

static void __exit kretprobe_example_exit(void)
{
	unregister_kretprobe(&timer);
	pr_info("stopped timing %s; %d calls were missed\n", func, timer.nmissed);
}

module_init(kretprobe_example_init);
module_exit(kretprobe_example_exit);
MODULE_DESCRIPTION("kretprobes example: time each call of a function");
MODULE_LICENSE("GPL");
