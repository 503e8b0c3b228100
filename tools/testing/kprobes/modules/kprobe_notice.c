// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_notice: watches another module come in (watch=, by default
 * kprobe_target) and asks kprobes, from a module notifier called before
 * kprobes' own and from one called after it, whether kprobes will hear
 * that the module's text is freed (kprobes_test_hears_text_gone()). A
 * load can fail between the two (a notifier of higher priority refuses
 * the module), and the module is then freed without a word to kprobes:
 * before kprobes' notifier the answer must be no, after it yes, so that
 * the arch keeps nothing it learned of that text too early (review of
 * 2026-11-25, N4). Prints one line when the watched module is live:
 * "kprobe_notice: <name>: heard of before kprobes 0, after 1".
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>

static char *watch = "kprobe_target";
module_param(watch, charp, 0444);

static int heard_before = -1, heard_after = -1;

static int watched_text(unsigned long val, struct module *mod, unsigned long *text)
{
	if (strcmp(mod->name, watch))
		return 0;
	*text = (unsigned long)mod->mem[MOD_TEXT].base;
	return val;
}

static int before_kprobes(struct notifier_block *nb, unsigned long val, void *data)
{
	unsigned long text;

	if (watched_text(val, data, &text) == MODULE_STATE_COMING)
		heard_before = kprobes_test_hears_text_gone(text);
	return NOTIFY_DONE;
}

static int after_kprobes(struct notifier_block *nb, unsigned long val, void *data)
{
	unsigned long text;

	switch (watched_text(val, data, &text)) {
	case MODULE_STATE_COMING:
		heard_after = kprobes_test_hears_text_gone(text);
		break;
	case MODULE_STATE_LIVE:
		pr_info("kprobe_notice: %s: heard of before kprobes %d, after %d\n",
			watch, heard_before, heard_after);
		break;
	}
	return NOTIFY_DONE;
}

/* kprobes' own module notifier has priority 0. */
static struct notifier_block before_nb = {
	.notifier_call = before_kprobes,
	.priority = INT_MAX,
};

static struct notifier_block after_nb = {
	.notifier_call = after_kprobes,
	.priority = INT_MIN,
};

static int __init kprobe_notice_init(void)
{
	int ret = register_module_notifier(&before_nb);

	if (ret)
		return ret;
	ret = register_module_notifier(&after_nb);
	if (ret)
		unregister_module_notifier(&before_nb);
	return ret;
}
module_init(kprobe_notice_init);

static void __exit kprobe_notice_exit(void)
{
	unregister_module_notifier(&after_nb);
	unregister_module_notifier(&before_nb);
}
module_exit(kprobe_notice_exit);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("asks kprobes whether it hears of a module's text going, for the selftests");
MODULE_LICENSE("GPL");
