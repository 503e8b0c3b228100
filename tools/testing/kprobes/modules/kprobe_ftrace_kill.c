// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_ftrace_kill: kills ftrace, as ftrace does itself when it finds
 * its text in a state it did not expect (FTRACE_WARN_ON): it calls
 * ftrace_kill(), found through a kprobe on it since it is not exported.
 * From then on ftrace calls no one and takes no change; kprobes on
 * ftrace sites stop firing. For the last selftest of a boot: removing
 * and loading modules with such probes, unregistering and registering
 * them after that (CVE-2026-43409 in the tree).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/ibt.h>

static int __init kprobe_ftrace_kill_init(void)
{
	struct kprobe kp = { .symbol_name = "ftrace_kill" };
	unsigned long start;
	void (*kill)(void);
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("kprobe_ftrace_kill: no ftrace_kill(): %d\n", ret);
		return ret;
	}
	start = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/* The probe went past the ENDBR an indirect call must land on. */
	if (is_endbr(*(u32 *)(start - ENDBR_INSN_SIZE)))
		start -= ENDBR_INSN_SIZE;
	kill = (void (*)(void))start;
	kill();
	pr_info("kprobe_ftrace_kill: ftrace killed\n");
	return 0;
}
module_init(kprobe_ftrace_kill_init);

MODULE_DESCRIPTION("kills ftrace, for the last kprobes selftest of a boot");
MODULE_LICENSE("GPL");
