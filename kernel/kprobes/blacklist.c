// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The blacklist: the functions and ranges no probe may be placed in,
 * from NOKPROBE_SYMBOL(), the arch, and each module's own list, kept up
 * as modules come and go.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/bsearch.h>

#include "internal.h"

/* Ranges no probe may be placed in. Written under kprobe_mutex, read under RCU. */
LIST_HEAD(kprobe_blacklist);

bool __weak arch_within_kprobe_blacklist(unsigned long addr)
{
	return false;
}

/*
 * The blacklist entry holding @addr, or NULL. The entries are freed only
 * with their module's text, under kprobe_mutex: hold it, or RCU.
 */
struct kprobe_blacklist_entry *kprobe_blacklist_entry_of(unsigned long addr)
{
	struct kprobe_blacklist_entry *ent;

	RCU_LOCKDEP_WARN(!lockdep_is_held(&kprobe_mutex) && !rcu_read_lock_any_held(),
			 "kprobe blacklist read without kprobe_mutex or RCU");
	list_for_each_entry_rcu(ent, &kprobe_blacklist, list,
				lockdep_is_held(&kprobe_mutex))
		if (addr - ent->start_addr < ent->end_addr - ent->start_addr)
			return ent;
	return NULL;
}

/*
 * The entries on the list when kprobes came up (vmlinux's
 * NOKPROBE_SYMBOL()s, its no-probe sections, the arch's ranges, a
 * thousand or more on a distribution kernel) merged into disjoint ranges
 * sorted by start, so that each probe's check is a binary search, not a
 * walk of them all. Those entries are never removed; the entries added
 * later, modules', follow boot_last on the list. Written once at boot;
 * boot_last stays NULL when the index could not be allocated, and the
 * whole list is walked.
 */
struct blacklist_range {
	unsigned long start;
	unsigned long end;
};

static struct blacklist_range *boot_ranges __ro_after_init;
static unsigned int nr_boot_ranges __ro_after_init;
static struct kprobe_blacklist_entry *boot_last __ro_after_init;

static int range_cmp(const void *a, const void *b)
{
	return order_ulong(((const struct blacklist_range *)a)->start,
			   ((const struct blacklist_range *)b)->start);
}

static void __init index_boot_entries(void)
{
	struct kprobe_blacklist_entry *ent;
	struct blacklist_range *r;
	unsigned int n = 0, i, merged;

	list_for_each_entry(ent, &kprobe_blacklist, list)
		n++;
	if (!n)
		return;
	r = kvmalloc_array(n, sizeof(*r), GFP_KERNEL);
	if (!r)
		return;
	i = 0;
	list_for_each_entry(ent, &kprobe_blacklist, list)
		r[i++] = (struct blacklist_range){ ent->start_addr, ent->end_addr };
	sort(r, n, sizeof(*r), range_cmp, NULL);
	/* NOKPROBE_SYMBOL()s inside .kprobes.text overlap it: merge. */
	merged = 0;
	for (i = 1; i < n; i++) {
		if (r[i].start <= r[merged].end)
			r[merged].end = max(r[merged].end, r[i].end);
		else
			r[++merged] = r[i];
	}
	boot_ranges = r;
	nr_boot_ranges = merged + 1;
	boot_last = list_last_entry(&kprobe_blacklist, struct kprobe_blacklist_entry, list);
}

/* The ranges are disjoint: at most one holds @key. */
static int range_holds_cmp(const void *key, const void *elt)
{
	unsigned long addr = *(const unsigned long *)key;
	const struct blacklist_range *r = elt;

	if (addr < r->start)
		return -1;
	return addr >= r->end;
}

static bool in_boot_ranges(unsigned long addr)
{
	return bsearch(&addr, boot_ranges, nr_boot_ranges, sizeof(*boot_ranges),
		       range_holds_cmp);
}

/* Is @addr in one of the blacklisted ranges? */
static bool in_blacklisted_range(unsigned long addr)
{
	struct kprobe_blacklist_entry *ent;

	if (arch_within_kprobe_blacklist(addr))
		return true;
	guard(rcu)();
	if (!boot_last)
		return kprobe_blacklist_entry_of(addr);
	if (in_boot_ranges(addr))
		return true;
	ent = boot_last;
	list_for_each_entry_continue_rcu(ent, &kprobe_blacklist, list)
		if (addr - ent->start_addr < ent->end_addr - ent->start_addr)
			return true;
	return false;
}

/*
 * The compiler splits functions and makes specialized copies of them,
 * named after the function with a suffix: foo.cold, foo.isra.0,
 * foo.constprop.0, foo.part.0. NOKPROBE_SYMBOL(foo) names only foo, yet
 * the pieces run on the same paths. Return the address of the function
 * the symbol @name (of module @modname, or of vmlinux for NULL) is a
 * piece of, looked up in the same module; 0 when it is none.
 */
static unsigned long piece_origin(const char *name, const char *modname)
{
	char whole[MODULE_NAME_LEN + 1 + KSYM_NAME_LEN];
	const char *suffix = strchr(name, '.');
	int len;

	if (!suffix || suffix == name)
		return 0;
	len = suffix - name;
	if (modname)
		snprintf(whole, sizeof(whole), "%s:%.*s", modname, len, name);
	else
		snprintf(whole, sizeof(whole), "%.*s", len, name);
	return (unsigned long)kprobe_lookup_name(whole, 0);
}

/* Is @addr, in the symbol @name of @modname, a piece of a blacklisted function? */
static bool blacklisted_piece(unsigned long addr, const char *name,
			      const char *modname)
{
	unsigned long whole = piece_origin(name, modname);

	return whole && whole != addr && in_blacklisted_range(whole);
}

/**
 * kprobe_blacklisted() - does the blacklist refuse @addr, and why?
 * @addr: a kernel text address
 * @name: the symbol that holds @addr
 * @modname: its module's name, or NULL for vmlinux
 *
 * Return: KPROBE_BLACKLISTED when a blacklisted range holds @addr,
 * KPROBE_BLACKLISTED_PIECE when @name is a piece the compiler split
 * off a blacklisted function (foo.cold, foo.isra.0, ...), else
 * KPROBE_NOT_BLACKLISTED.
 */
enum kprobe_blacklisted kprobe_blacklisted(unsigned long addr, const char *name,
					   const char *modname)
{
	if (in_blacklisted_range(addr))
		return KPROBE_BLACKLISTED;
	if (blacklisted_piece(addr, name, modname))
		return KPROBE_BLACKLISTED_PIECE;
	return KPROBE_NOT_BLACKLISTED;
}

/**
 * within_kprobe_blacklist() - may no probe be placed at @addr?
 * @addr: a kernel text address
 *
 * Return: true when @addr is in a blacklisted range, or in a piece the
 * compiler split off a blacklisted function (foo.cold, foo.isra.0, ...).
 */
bool within_kprobe_blacklist(unsigned long addr)
{
	char name[KSYM_NAME_LEN];
	char *modname = NULL;

	if (in_blacklisted_range(addr))
		return true;
	if (!kallsyms_lookup(addr, NULL, NULL, &modname, name))
		return false;
	return blacklisted_piece(addr, name, modname);
}
EXPORT_SYMBOL_GPL(within_kprobe_blacklist);

/**
 * kprobe_add_area_blacklist() - blacklist a range of text
 * @start: first address
 * @end: one past the last address
 *
 * Return: 0, or -ENOMEM.
 */
int kprobe_add_area_blacklist(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *ent;

	if (start >= end)
		return 0;
	ent = kmalloc(sizeof(*ent), GFP_KERNEL);
	if (!ent)
		return -ENOMEM;
	ent->start_addr = start;
	ent->end_addr = end;
	list_add_tail_rcu(&ent->list, &kprobe_blacklist);
	return 0;
}

/**
 * kprobe_add_ksym_blacklist() - blacklist the whole symbol around @entry
 * @entry: an address inside a symbol
 *
 * Return: the symbol's size on success, -EINVAL when @entry is in no
 * symbol, or -ENOMEM.
 */
int kprobe_add_ksym_blacklist(unsigned long entry)
{
	unsigned long size, offset;
	int ret;

	if (!kallsyms_lookup_size_offset(entry, &size, &offset))
		return -EINVAL;
	ret = kprobe_add_area_blacklist(entry - offset, entry - offset + size);
	return ret ? ret : size;
}

int __weak arch_populate_kprobe_blacklist(void)
{
	return 0;
}

/* Blacklist each symbol named in a '_kprobe_blacklist' array. */
static void kprobe_blacklist_symbols(unsigned long *start, unsigned long *end)
{
	unsigned long *iter;

	for (iter = start; iter < end; iter++) {
		unsigned long addr = (unsigned long)dereference_symbol_descriptor((void *)*iter);

		if (kprobe_add_ksym_blacklist(addr) < 0)
			pr_warn("cannot blacklist %pS\n", (void *)addr);
	}
}

static int __init kprobe_populate_blacklist(void)
{
	int ret;

	kprobe_blacklist_symbols(__start_kprobe_blacklist, __stop_kprobe_blacklist);

	/* Sections whose code runs where a breakpoint cannot be taken. */
	kprobe_add_area_blacklist((unsigned long)__kprobes_text_start,
				  (unsigned long)__kprobes_text_end);
	kprobe_add_area_blacklist((unsigned long)__noinstr_text_start,
				  (unsigned long)__noinstr_text_end);

	ret = arch_populate_kprobe_blacklist();
	if (ret)
		pr_err("blacklist incomplete: %d\n", ret);
	index_boot_entries();
	return ret;
}
/* Before init_kprobes() opens registration (core.o links after us). */
early_initcall(kprobe_populate_blacklist);

#ifdef CONFIG_MODULES
/* A going module's memory: drop the entries that start in [start, end). */
static void blacklist_drop_entries_in(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *ent, *tmp;

	list_for_each_entry_safe(ent, tmp, &kprobe_blacklist, list) {
		if (ent->start_addr - start >= end - start)
			continue;
		/* in_blacklisted_range() reads it under RCU. */
		list_del_rcu(&ent->list);
		kfree_rcu(ent, rcu);
	}
}

/*
 * A module is coming (@add): blacklist its '_kprobe_blacklist' entries
 * and its __kprobes text. Or it is going: drop every entry in its
 * memory. kprobe_mutex held.
 */
void kprobe_module_blacklist_update(struct module *mod, bool add)
{
	unsigned long start, end;

	lockdep_assert_held(&kprobe_mutex);
	start = (unsigned long)mod->kprobes_text_start;
	end = start + mod->kprobes_text_size;
	if (add) {
		if (mod->num_kprobe_blacklist)
			kprobe_blacklist_symbols(mod->kprobe_blacklist,
						 mod->kprobe_blacklist + mod->num_kprobe_blacklist);
		kprobe_add_area_blacklist(start, end);
		return;
	}
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];

		if (mem->size)
			blacklist_drop_entries_in((unsigned long)mem->base,
						  (unsigned long)mem->base + mem->size);
	}
}
#endif /* CONFIG_MODULES */
