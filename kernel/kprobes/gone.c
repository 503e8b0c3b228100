// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Text that goes away: a module's, when it is unloaded or its init
 * text freed, and the kernel's init text. Sites there go GONE before
 * the text is freed, and stop being armed; their probes stay registered
 * until their owners unregister them. The arch may keep what it learned
 * of text (a decoded function) only while kprobe_hears_text_gone() says
 * it will hear of the text going.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

void __weak arch_kprobe_text_gone(unsigned long start, unsigned long end)
{
}

/*
 * The text in [start, end) is about to be freed: its sites go GONE and
 * stop being armed (an ftrace site leaves our filter, at once).
 * kprobe_mutex held.
 */
static void mark_range_gone(unsigned long start, unsigned long end)
{
	struct kprobe_batch b;
	struct kprobe *site, *m;
	unsigned int i;

	lockdep_assert_held(&kprobe_mutex);
	arch_kprobe_text_gone(start, end);
	kprobe_forget_probed_function();
	kprobe_retire_sites();
	kprobe_batch_begin(&b);
	for (i = 0; i < KPROBE_TABLE_SIZE; i++) {
		hlist_for_each_entry(site, &kprobe_table[i], hlist) {
			unsigned long a = (unsigned long)site->addr;

			if (a < start || a >= end)
				continue;
			site->flags |= KPROBE_FLAG_GONE;
			if (kprobe_is_aggr(site)) {
				list_for_each_entry(m, &site->list, list)
					m->flags |= KPROBE_FLAG_GONE;
				kprobe_sync_member_counting(site);
			}
			kprobe_site_sync_armed(&b, site);
		}
	}
	kprobe_batch_finish(&b);
	/* ftrace forgets the sites there: none of ours may stay in a filter. */
	kprobe_ftrace_flush_stale();
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kprobes_test_forget_text() - forget what is known of a stretch of text
 * @start: its first byte
 * @end: the byte after it
 *
 * For the KUnit suite: as when the text is freed and loaded again, the
 * arch's decoded functions there are dropped and decoded afresh next
 * time; the probes stay as they are.
 */
void kprobes_test_forget_text(unsigned long start, unsigned long end)
{
	mutex_lock(&kprobe_mutex);
	arch_kprobe_text_gone(start, end);
	kprobe_forget_probed_function();
	mutex_unlock(&kprobe_mutex);
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_forget_text);
#endif

#ifdef CONFIG_MODULES
/*
 * Modules kprobes was told are coming (MODULE_STATE_COMING), and not yet
 * that they are live or going. A module's load can fail after it is in
 * the module tree and before the notifier chain reaches us (a notifier
 * of higher priority refuses it): it is then freed without a word to
 * kprobes, and so is its text. Under kprobe_mutex.
 */
struct kprobe_coming_module {
	struct list_head list;
	struct module *mod;
};

static LIST_HEAD(coming_modules);

static void module_set_coming(struct module *mod, bool coming)
{
	struct kprobe_coming_module *c, *next;

	if (!coming) {
		list_for_each_entry_safe(c, next, &coming_modules, list) {
			if (c->mod != mod)
				continue;
			list_del(&c->list);
			kfree(c);
		}
		return;
	}
	/* Without the entry, the arch keeps nothing of its text until it is live. */
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return;
	c->mod = mod;
	list_add(&c->list, &coming_modules);
}

/* Will kprobes be told when @mod's text is freed? */
static bool module_heard_of(struct module *mod)
{
	struct kprobe_coming_module *c;

	if (READ_ONCE(mod->state) == MODULE_STATE_LIVE)
		return true;
	list_for_each_entry(c, &coming_modules, list)
		if (c->mod == mod)
			return true;
	return false;
}

/*
 * The text of a module last found heard of, [lo, hi): the probes of a
 * batch mostly share a module. Forgotten at every module notification,
 * which is when the answer may change. kprobe_mutex guards it.
 */
static struct {
	unsigned long lo, hi;
} heard_text;

static bool module_text_heard_of(unsigned long addr)
{
	struct module *mod;

	if (addr - heard_text.lo < heard_text.hi - heard_text.lo)
		return true;
	/* __module_text_address() wants preemption off. */
	guard(preempt)();
	mod = __module_text_address(addr);
	if (!mod || !module_heard_of(mod))
		return false;
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];
		unsigned long base = (unsigned long)mem->base;

		if (addr - base < mem->size) {
			heard_text.lo = base;
			heard_text.hi = base + mem->size;
		}
	}
	return true;
}

static void module_mem_gone(struct module *mod, bool init_only)
{
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];

		if (!mem->size || (init_only && !mod_mem_type_is_init(type)))
			continue;
		mark_range_gone((unsigned long)mem->base,
				(unsigned long)mem->base + mem->size);
	}
}

static int kprobes_module_callback(struct notifier_block *nb,
				   unsigned long val, void *data)
{
	struct module *mod = data;

	if (val != MODULE_STATE_COMING && val != MODULE_STATE_LIVE &&
	    val != MODULE_STATE_GOING)
		return NOTIFY_DONE;

	mutex_lock(&kprobe_mutex);
	heard_text.lo = 0;
	heard_text.hi = 0;
	switch (val) {
	case MODULE_STATE_COMING:
		module_set_coming(mod, true);
		break;
	case MODULE_STATE_LIVE:
		/* The init text is freed right after this. */
		module_set_coming(mod, false);
		module_mem_gone(mod, true);
		break;
	case MODULE_STATE_GOING:
		module_set_coming(mod, false);
		module_mem_gone(mod, false);
		break;
	}
	mutex_unlock(&kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kprobes_module_nb = {
	.notifier_call = kprobes_module_callback,
	.priority = 0,
};

/* Before init_kprobes() opens registration (core.o links after us). */
static int __init kprobe_module_notifier_init(void)
{
	return register_module_notifier(&kprobes_module_nb);
}
early_initcall(kprobe_module_notifier_init);
#else
static bool module_text_heard_of(unsigned long addr)
{
	return false;
}
#endif /* CONFIG_MODULES */

/**
 * kprobe_hears_text_gone() - will kprobes be told when this text is freed?
 * @addr: a kernel text address
 *
 * For the arch, which may keep what it learned of text (a decoded
 * function) only while it will hear that the text is freed
 * (arch_kprobe_text_gone()): the kernel's own text, and a module's once
 * kprobes was told it is coming.
 *
 * Context: kprobe_mutex held.
 * Return: true when the freeing of the text at @addr will be announced.
 */
bool kprobe_hears_text_gone(unsigned long addr)
{
	lockdep_assert_held(&kprobe_mutex);
	return core_kernel_text(addr) || module_text_heard_of(addr);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kprobes_test_hears_text_gone() - kprobe_hears_text_gone(), for tests
 * @addr: a kernel text address
 *
 * For the selftests' module that watches another module coming.
 *
 * Return: what kprobe_hears_text_gone() says of @addr now.
 */
bool kprobes_test_hears_text_gone(unsigned long addr)
{
	guard(mutex)(&kprobe_mutex);
	return kprobe_hears_text_gone(addr);
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_hears_text_gone);
#endif

/**
 * kprobe_free_init_mem() - the kernel's init text is about to be freed
 */
void kprobe_free_init_mem(void)
{
	mutex_lock(&kprobe_mutex);
	mark_range_gone((unsigned long)_sinittext, (unsigned long)_einittext);
	mutex_unlock(&kprobe_mutex);
}
