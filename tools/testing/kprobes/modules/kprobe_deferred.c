// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_deferred: kprobes and kretprobes on kernel_clone() unregistered
 * without waiting (kprobe_unregister_deferred()), released into this
 * module's own code, which frees them; the guest selftests unload the
 * module at once, and its exit waits for the releases with
 * kprobe_deferred_barrier(). It logs how many were released by then.
 * Loaded with barrier=0, its exit does not wait: the core must, before
 * the module's code goes. Its first release then sleeps for two
 * seconds, so that the module is unloaded while the releases are still
 * to come or running, however fast the grace period. The last release
 * logs whether it came before or after the exit.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/slab.h>

#define NR_EACH	16

static atomic_t released;
static int deferred;
static bool exited;

static bool barrier = true;
module_param(barrier, bool, 0444);
MODULE_PARM_DESC(barrier, "call kprobe_deferred_barrier() in the exit (default: yes)");

static void count_release(void)
{
	static bool slept;

	if (!barrier && !slept) {
		slept = true;
		msleep(2000);
	}
	if (atomic_inc_return(&released) == 2 * NR_EACH)
		pr_info("kprobe_deferred: the last released %s the exit\n",
			READ_ONCE(exited) ? "after" : "before");
}

static int deferred_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static int deferred_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

static void release_kprobe(struct kprobe *p)
{
	kfree(p);
	count_release();
}

static void release_kretprobe(struct kretprobe *rp)
{
	kfree(rp);
	count_release();
}

static void defer_kprobe(void)
{
	struct kprobe *p = kzalloc(sizeof(*p), GFP_KERNEL);

	if (!p)
		return;
	p->symbol_name = "kernel_clone";
	p->pre_handler = deferred_pre;
	if (register_kprobe(p)) {
		kfree(p);
		return;
	}
	if (kprobe_unregister_deferred(p, release_kprobe)) {
		unregister_kprobe(p);
		kfree(p);
		return;
	}
	deferred++;
}

static void defer_kretprobe(void)
{
	struct kretprobe *rp = kzalloc(sizeof(*rp), GFP_KERNEL);

	if (!rp)
		return;
	rp->kp.symbol_name = "kernel_clone";
	rp->handler = deferred_ret;
	if (register_kretprobe(rp)) {
		kfree(rp);
		return;
	}
	if (kretprobe_unregister_deferred(rp, release_kretprobe)) {
		unregister_kretprobe(rp);
		kfree(rp);
		return;
	}
	deferred++;
}

static int __init kprobe_deferred_init(void)
{
	int i;

	for (i = 0; i < NR_EACH; i++) {
		defer_kprobe();
		defer_kretprobe();
	}
	pr_info("kprobe_deferred: %d of %d deferred\n", deferred, 2 * NR_EACH);
	return 0;
}

static void __exit kprobe_deferred_exit(void)
{
	if (barrier)
		kprobe_deferred_barrier();
	pr_info("kprobe_deferred: %d of %d released at exit\n",
		atomic_read(&released), deferred);
	WRITE_ONCE(exited, true);
}

module_init(kprobe_deferred_init);
module_exit(kprobe_deferred_exit);
MODULE_DESCRIPTION("kprobes unregistered without waiting, released into a module that goes at once");
MODULE_LICENSE("GPL");
