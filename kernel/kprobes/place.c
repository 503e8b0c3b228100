// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a probe may go: resolving a probe point (a symbol and offset, or
 * an address) to the instruction the probe is placed on, and every check
 * of that point that needs no arch state, in the order of the tree's,
 * which decides the error code for a point that fails several. The
 * registering path and the query file both ask kprobe_check_point(), so
 * that they cannot disagree; a query has each refusal's rule recorded
 * (kprobe_refuse()), and the blacklist entry that refused it.
 *
 * Two of the checks keep data of their own here. The blacklist: the
 * functions and ranges no probe may be placed in, from
 * NOKPROBE_SYMBOL(), the arch, and each module's own list, kept up as
 * modules come and go. And the text the kernel lists in tables of its
 * own, which no probe may go on: jump label sites and inline static
 * call sites (rewritten when their key flips or their call is updated:
 * a probe's copy would go stale, its breakpoint be overwritten) and
 * BUG() and WARN() sites (they trap on purpose, and the trap is not
 * ours).
 *
 * The checks and the remembered function are under kprobe_mutex;
 * resolving a name or an address takes no lock; the blacklist is read
 * under RCU as well.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/bsearch.h>

#include "internal.h"

/* ---- refusals ------------------------------------------------------------ */

/*
 * The verdict kprobe_query() is filling, where kprobe_refuse() records
 * the rule that said no. Valid only while the query holds kprobe_mutex:
 * kprobe_query() sets it (kprobe_record_refusals()) after taking the
 * mutex and clears it before dropping it, so it is NULL whenever anyone else holds the mutex, and
 * a refusal while registering records nothing. Its readers assert the
 * mutex with lockdep. A pointer here rather than an argument, because
 * the refusals are deep in the arch's checks, whose signatures are the
 * tree's.
 */
static struct kprobe_query_verdict *kprobe_querying;

/**
 * kprobe_record_refusals() - have the checks' refusals recorded in a verdict
 * @v: the query's verdict, or NULL to stop recording
 *
 * Context: kprobe_mutex held, from before the checks until after @v is
 * set back to NULL.
 */
void kprobe_record_refusals(struct kprobe_query_verdict *v)
{
	lockdep_assert_held(&kprobe_mutex);
	kprobe_querying = v;
}

int kprobe_refuse(int err, const char *rule)
{
	lockdep_assert_held(&kprobe_mutex);
	if (kprobe_querying)
		kprobe_querying->asking->rule = rule;
	return err;
}

/* ---- resolving the probe address --------------------------------------- */

kprobe_opcode_t * __weak kprobe_lookup_name(const char *name, unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

kprobe_opcode_t * __weak arch_adjust_kprobe_addr(unsigned long addr,
						 unsigned long offset,
						 bool *on_func_entry)
{
	*on_func_entry = !offset;
	return (kprobe_opcode_t *)(addr + offset);
}

/* The address a probe asks for: .addr, or .symbol_name's, plus .offset. */
kprobe_opcode_t *kprobe_target_addr(kprobe_opcode_t *addr, const char *symbol_name,
				    unsigned long offset)
{
	if (!!addr == !!symbol_name)
		return ERR_PTR(-EINVAL);

	if (symbol_name) {
		/*
		 * A name several functions share means the first of them, as
		 * kallsyms_lookup_name() finds it; kprobe_events refuses such
		 * names before it gets here.
		 */
		addr = kprobe_lookup_name(symbol_name, offset);
		if (!addr)
			return ERR_PTR(-ENOENT);
	}
	return (kprobe_opcode_t *)((unsigned long)addr + offset);
}

/*
 * Where the arch wants a probe on @addr, in the function starting at
 * @func: past a landing pad at a function's entry. Sets @on_func_entry
 * when it is a function's first instruction.
 */
static kprobe_opcode_t *place_in_function(unsigned long addr, unsigned long func,
					  bool *on_func_entry)
{
	kprobe_opcode_t *where;

	*on_func_entry = false;
	where = arch_adjust_kprobe_addr(func, addr - func, on_func_entry);
	return where ? where : ERR_PTR(-EINVAL);
}

/*
 * kprobe_target_addr() and place_in_function(), for callers outside a batch;
 * the function's start goes to @func. An address in no symbol kallsyms
 * knows is -ENOENT, as a name it does not know is.
 */
kprobe_opcode_t *kprobe_resolve_addr(kprobe_opcode_t *addr, const char *symbol_name,
				     unsigned long offset, bool *on_func_entry,
				     unsigned long *func)
{
	unsigned long func_offset;

	addr = kprobe_target_addr(addr, symbol_name, offset);
	if (IS_ERR(addr))
		return addr;
	if (!kallsyms_lookup_size_offset((unsigned long)addr, NULL, &func_offset))
		return ERR_PTR(-ENOENT);
	*func = (unsigned long)addr - func_offset;
	return place_in_function((unsigned long)addr, *func, on_func_entry);
}

/*
 * The function around the probe add_probe() is placing, looked up once
 * for the core's checks and the arch's: a module's symbols are searched
 * one by one. Filled by place_probe() and kept for the next probes in the
 * same function (every line of a function probed, say), but only after a
 * probe in it registered, and only for text whose going kprobes hears of
 * (kprobe_hears_text_gone()): gone.c then empties it. Emptied on any
 * failure. kprobe_mutex. @modname is empty for vmlinux.
 */
static struct {
	unsigned long start;
	unsigned long size;
	char modname[MODULE_NAME_LEN];
	char name[KSYM_NAME_LEN];
	/*
	 * Of its ftrace call sites: none lies in [site_from, site), and
	 * site is the next one, or 0 for none up to the function's end.
	 * Not known while site_from is 0.
	 */
	unsigned long site_from;
	unsigned long site;
	/*
	 * No blacklisted range meets it, nor is it a piece of a blacklisted
	 * function: known while clear_gen is blacklist_gen + 1.
	 */
	unsigned long clear_gen;
	bool clear;
} probed_function;

/* Counts the blacklist's changes, for probed_function.clear_gen. */
static unsigned long blacklist_gen;

/*
 * Forget the remembered function: its text is going (gone.c), or the
 * query file looked at one only. kprobe_mutex held.
 */
void kprobe_forget_probed_function(void)
{
	lockdep_assert_held(&kprobe_mutex);
	probed_function.size = 0;
	probed_function.site_from = 0;
	probed_function.clear_gen = 0;
}

/**
 * kprobe_function_bounds() - the function around a probed address
 * @addr: a kernel text address
 * @start: set to the function's first byte
 * @size: set to its size in bytes
 *
 * For the arch's checks of a probe point, with kprobe_mutex held; the
 * function of the probe being registered is remembered.
 *
 * Return: false when @addr is in no function kallsyms knows.
 */
bool kprobe_function_bounds(unsigned long addr, unsigned long *start,
			    unsigned long *size)
{
	unsigned long offset;

	lockdep_assert_held(&kprobe_mutex);
	if (addr - probed_function.start < probed_function.size) {
		*start = probed_function.start;
		*size = probed_function.size;
		return true;
	}
	if (!kallsyms_lookup_size_offset(addr, size, &offset))
		return false;
	*start = addr - offset;
	return true;
}

/*
 * Look up @p's function for the checks that follow and move @p->addr
 * where the arch wants it: -ENOENT when it is in no function.
 */
static int place_probe(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr, size, offset;
	kprobe_opcode_t *where;
	char *modname = NULL;
	bool on_func_entry;

	if (addr - probed_function.start >= probed_function.size) {
		probed_function.size = 0;
		if (!kallsyms_lookup(addr, &size, &offset, &modname, probed_function.name))
			return kprobe_refuse(-ENOENT, "in no function kallsyms knows");
		strscpy(probed_function.modname, modname ?: "",
			sizeof(probed_function.modname));
		probed_function.start = addr - offset;
		probed_function.size = size;
		probed_function.site_from = 0;
		probed_function.clear_gen = 0;
	}
	where = place_in_function(addr, probed_function.start, &on_func_entry);
	if (IS_ERR(where))
		return kprobe_refuse(PTR_ERR(where), "the arch places no probe there");
	p->addr = where;
	if (on_func_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	return 0;
}

/**
 * kprobe_on_func_entry() - is this probe point a function's entry?
 * @addr: address, or NULL when @sym is given
 * @sym: symbol name, or NULL
 * @offset: offset into @sym (or added to @addr)
 *
 * Return: 0 when it is, -EINVAL when it is not, or the error that
 * resolving the address gave (-ENOENT, -EADDRNOTAVAIL).
 */
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym, unsigned long offset)
{
	bool on_func_entry;
	unsigned long func;
	kprobe_opcode_t *where = kprobe_resolve_addr(addr, sym, offset, &on_func_entry, &func);

	if (IS_ERR(where))
		return PTR_ERR(where);
	return on_func_entry ? 0 : -EINVAL;
}

/* ---- the blacklist ------------------------------------------------------ */

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
static struct kprobe_blacklist_entry *blacklist_entry_of(unsigned long addr)
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
		return blacklist_entry_of(addr);
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

/*
 * A query's verdict names what refused @addr: the blacklist entry that
 * holds it, copied (a module's entry goes with the module once
 * kprobe_mutex is dropped), or the arch's own blacklist.
 */
static void record_blacklist_entry(unsigned long addr)
{
	struct kprobe_query_verdict *v = kprobe_querying;
	struct kprobe_blacklist_entry *ent;

	lockdep_assert_held(&kprobe_mutex);
	if (!v)
		return;
	v->blacklisted = true;
	ent = blacklist_entry_of(addr);
	if (ent) {
		v->blacklist_start = ent->start_addr;
		v->blacklist_size = ent->end_addr - ent->start_addr;
	} else {
		v->blacklist_arch = arch_within_kprobe_blacklist(addr);
	}
}

/* Does a blacklisted range meet [@start, @end)? The arch's own aside. */
static bool blacklist_meets(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *ent;
	unsigned int lo = 0, hi = nr_boot_ranges, mid;

	guard(rcu)();
	if (!boot_last) {
		list_for_each_entry_rcu(ent, &kprobe_blacklist, list)
			if (ent->start_addr < end && ent->end_addr > start)
				return true;
		return false;
	}
	/* The boot ranges are disjoint and sorted: their ends are too. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (boot_ranges[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr_boot_ranges && boot_ranges[lo].start < end)
		return true;
	ent = boot_last;
	list_for_each_entry_continue_rcu(ent, &kprobe_blacklist, list)
		if (ent->start_addr < end && ent->end_addr > start)
			return true;
	return false;
}

/*
 * Is the probed function, which holds the address being checked, clear
 * of the blacklist? Worked out once for all its probes, again after
 * the blacklist changes. kprobe_mutex held.
 */
static bool probed_function_clear(void)
{
	unsigned long start = probed_function.start, gen = READ_ONCE(blacklist_gen);
	const char *modname = probed_function.modname;

	if (probed_function.clear_gen != gen + 1) {
		probed_function.clear =
			!blacklist_meets(start, start + probed_function.size) &&
			!blacklisted_piece(start, probed_function.name,
					   modname[0] ? modname : NULL);
		probed_function.clear_gen = gen + 1;
	}
	return probed_function.clear;
}

/*
 * Refuse @addr, in the symbol @name of @modname (NULL for vmlinux),
 * when a blacklisted range holds it, or when @name is a piece the
 * compiler split off a blacklisted function (foo.cold, foo.isra.0, ...).
 * @addr lies in the probed function, whose verdict may be known.
 */
static int refuse_blacklisted(unsigned long addr, const char *name, const char *modname)
{
	if (!arch_within_kprobe_blacklist(addr) && probed_function_clear())
		return 0;
	if (in_blacklisted_range(addr)) {
		record_blacklist_entry(addr);
		return kprobe_refuse(-EINVAL, "blacklisted");
	}
	if (blacklisted_piece(addr, name, modname))
		return kprobe_refuse(-EINVAL,
				     "a piece (.cold, .part, ...) of a blacklisted function");
	return 0;
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
	WRITE_ONCE(blacklist_gen, blacklist_gen + 1);
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
		WRITE_ONCE(blacklist_gen, blacklist_gen + 1);
	}
}

/* A coming module's '_kprobe_blacklist' entries and __kprobes text. */
static void blacklist_module_coming(struct module *mod)
{
	unsigned long start = (unsigned long)mod->kprobes_text_start;

	if (mod->num_kprobe_blacklist)
		kprobe_blacklist_symbols(mod->kprobe_blacklist,
					 mod->kprobe_blacklist + mod->num_kprobe_blacklist);
	kprobe_add_area_blacklist(start, start + mod->kprobes_text_size);
}

/* A going module: drop every entry in its memory. */
static void blacklist_module_going(struct module *mod)
{
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];

		if (mem->size)
			blacklist_drop_entries_in((unsigned long)mem->base,
						  (unsigned long)mem->base + mem->size);
	}
}

/*
 * A module's entries come with it and go with it, under kprobe_mutex,
 * which the checks hold. A probe in a coming module's text may be
 * registered before this runs, as in the tree: the module's notifiers
 * run after it is in the module tree.
 */
static int blacklist_module_callback(struct notifier_block *nb, unsigned long val,
				     void *data)
{
	if (val != MODULE_STATE_COMING && val != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	guard(mutex)(&kprobe_mutex);
	if (val == MODULE_STATE_COMING)
		blacklist_module_coming(data);
	else
		blacklist_module_going(data);
	return NOTIFY_DONE;
}

static struct notifier_block blacklist_module_nb = {
	.notifier_call = blacklist_module_callback,
};

static int __init kprobe_blacklist_module_init(void)
{
	return register_module_notifier(&blacklist_module_nb);
}
early_initcall(kprobe_blacklist_module_init);
#endif /* CONFIG_MODULES */

/* ---- sites the kernel lists ---------------------------------------------- */

/*
 * None of the kernel's tables is sorted by address, so its lookups walk
 * all of each; for vmlinux's jump entries, thousands on a distribution
 * kernel, that walk cost more than the rest of registering a probe on a
 * NOP. So vmlinux's jump label sites get an index here, sorted by
 * address, and the arch says (arch_kprobe_listed_tables()) which tables
 * the instruction at an address could be in at all.
 */

/**
 * arch_kprobe_listed_tables() - which tables could list @addr?
 * @addr: a probe address, kprobe_mutex and text_mutex held
 *
 * Default: all of them, the kernel's own lookups then decide.
 *
 * Return: KPROBE_LISTED_* bits.
 */
unsigned int __weak arch_kprobe_listed_tables(unsigned long addr)
{
	return KPROBE_LISTED_ANY;
}

#ifdef CONFIG_JUMP_LABEL
/*
 * vmlinux's jump entries ordered by the address of their code, as
 * positions in __start___jump_table[]. jump_label_init() has put that
 * table in its final order before kprobes come up, and only flags in it
 * change afterwards, so the index is built once, the first time a probe
 * needs it, and never changes. kprobe_mutex guards the building.
 * jump_index stays NULL when it could not be allocated: the kernel's own
 * walk then answers.
 */
static u32 *jump_index;
static unsigned int jump_index_len;
static bool jump_index_tried;

static struct jump_entry *jump_index_entry(unsigned int pos)
{
	return &__start___jump_table[jump_index[pos]];
}

static int jump_index_cmp(const void *a, const void *b)
{
	return order_ulong(jump_entry_code(&__start___jump_table[*(const u32 *)a]),
			   jump_entry_code(&__start___jump_table[*(const u32 *)b]));
}

static void jump_index_build(void)
{
	unsigned int n = __stop___jump_table - __start___jump_table;
	unsigned int i;
	u32 *idx;

	lockdep_assert_held(&kprobe_mutex);
	jump_index_tried = true;
	idx = kvmalloc_array(max(n, 1U), sizeof(*idx), GFP_KERNEL);
	if (!idx)
		return;
	for (i = 0; i < n; i++)
		idx[i] = i;
	sort(idx, n, sizeof(*idx), jump_index_cmp, NULL);
	jump_index_len = n;
	jump_index = idx;
}

/*
 * Is the jump entry @e's instruction over @addr? An init entry only
 * counts while its text is there (@init), as for
 * jump_label_text_reserved().
 */
static bool jump_entry_covers(struct jump_entry *e, unsigned long addr, bool init)
{
	unsigned long code = jump_entry_code(e);

	if (jump_entry_is_init(e) && !init)
		return false;
	return code <= addr && code + jump_entry_size(e) > addr;
}

/*
 * A binary search for the last site at or below @addr. Sites are whole
 * instructions and do not overlap, so a site before that one ends where
 * or before it starts: only it (or another entry for the same
 * instruction) can cover @addr.
 */
static bool vmlinux_jump_site_at(unsigned long addr)
{
	bool init = system_state < SYSTEM_RUNNING;
	unsigned int lo = 0, hi = jump_index_len;
	unsigned long code;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (jump_entry_code(jump_index_entry(mid)) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	code = jump_entry_code(jump_index_entry(lo - 1));
	while (lo && jump_entry_code(jump_index_entry(lo - 1)) == code) {
		if (jump_entry_covers(jump_index_entry(lo - 1), addr, init))
			return true;
		lo--;
	}
	return false;
}

#ifdef CONFIG_MODULES
/* A module's own table is short: walked, as the kernel does. */
static bool module_jump_site_at(unsigned long addr)
{
	struct jump_entry *e;
	struct module *mod;
	bool init;

	guard(preempt)();
	mod = __module_text_address(addr);
	if (!mod)
		return false;
	init = mod->state == MODULE_STATE_COMING;
	for (e = mod->jump_entries; e < mod->jump_entries + mod->num_jump_entries; e++)
		if (jump_entry_covers(e, addr, init))
			return true;
	return false;
}
#else
static bool module_jump_site_at(unsigned long addr)
{
	return false;
}
#endif

/*
 * Is @addr in a jump label site? The answer of
 * jump_label_text_reserved(@addr, @addr), without walking vmlinux's
 * table. kprobe_mutex held, the text pinned.
 */
static bool jump_label_site_at(unsigned long addr)
{
	if (!jump_index_tried)
		jump_index_build();
	if (!jump_index)
		return jump_label_text_reserved((void *)addr, (void *)addr);
	/* vmlinux's table lists vmlinux's sites, a module's its own. */
	if (is_kernel_text(addr) || is_kernel_inittext(addr))
		return vmlinux_jump_site_at(addr);
	return module_jump_site_at(addr);
}

/* The target of the entry of @n at @e whose site starts at @addr, or 0. */
static unsigned long jump_entries_target(struct jump_entry *e, unsigned int n,
					 unsigned long addr)
{
	for (; n--; e++)
		if (jump_entry_code(e) == addr)
			return jump_entry_target(e);
	return 0;
}

unsigned long kprobe_jump_label_target(unsigned long addr)
{
	struct module *mod __maybe_unused;
	unsigned int lo = 0, hi;

	lockdep_assert_held(&kprobe_mutex);
	if (!jump_index_tried)
		jump_index_build();
	if (!jump_index)
		return jump_entries_target(__start___jump_table,
					   __stop___jump_table - __start___jump_table, addr);
	hi = jump_index_len;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (jump_entry_code(jump_index_entry(mid)) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < jump_index_len && jump_entry_code(jump_index_entry(lo)) == addr)
		return jump_entry_target(jump_index_entry(lo));
#ifdef CONFIG_MODULES
	guard(preempt)();
	mod = __module_text_address(addr);
	if (mod)
		return jump_entries_target(mod->jump_entries, mod->num_jump_entries, addr);
#endif
	return 0;
}
#else
static bool jump_label_site_at(unsigned long addr)
{
	return false;
}

unsigned long kprobe_jump_label_target(unsigned long addr)
{
	return 0;
}
#endif /* CONFIG_JUMP_LABEL */

#ifdef CONFIG_GENERIC_BUG
static bool is_bug_site(unsigned long addr)
{
	return find_bug(addr);
}
#else
static bool is_bug_site(unsigned long addr)
{
	return false;
}
#endif

/*
 * Refuse a probe on a listed site: 0 when no table lists @addr, else
 * -EINVAL (the tree's code for each), the reason recorded. kprobe_mutex
 * and text_mutex held, the text pinned.
 */
static int refuse_listed_site(unsigned long addr)
{
	unsigned int tables = arch_kprobe_listed_tables(addr);

	lockdep_assert_held(&kprobe_mutex);
	if ((tables & KPROBE_LISTED_JUMP_LABEL) && jump_label_site_at(addr))
		return kprobe_refuse(-EINVAL, "a jump label site");
	if ((tables & KPROBE_LISTED_STATIC_CALL) &&
	    static_call_text_reserved((void *)addr, (void *)addr))
		return kprobe_refuse(-EINVAL, "a static call site");
	if ((tables & KPROBE_LISTED_BUG) && is_bug_site(addr))
		return kprobe_refuse(-EINVAL, "a BUG() or WARN() site");
	return 0;
}

/* ---- checking the point -------------------------------------------------- */

#ifdef CONFIG_MODULES
/*
 * Keep the module whose text holds @addr, not the kernel's, from going
 * away while we place a probe.
 */
static int pin_probed_module(unsigned long addr, struct module **probed_mod)
{
	struct module *mod;

	preempt_disable();
	mod = __module_text_address(addr);
	if (!mod) {
		preempt_enable();
		return kprobe_refuse(-EINVAL, "not kernel or module text");
	}
	if (!try_module_get(mod)) {
		/* Its refcount is dead: the module is being unloaded. */
		preempt_enable();
		return kprobe_refuse(-ENOENT, "the module is going");
	}
	preempt_enable();

	/* A module's init text is freed once it is live. */
	if (mod->state == MODULE_STATE_GOING ||
	    (within_module_init(addr, mod) && mod->state != MODULE_STATE_COMING)) {
		module_put(mod);
		return kprobe_refuse(-ENOENT,
				     "the module is going, or this is its freed init text");
	}
	*probed_mod = mod;
	return 0;
}
#else
static int pin_probed_module(unsigned long addr, struct module **probed_mod)
{
	return kprobe_refuse(-EINVAL, "not kernel or module text");
}
#endif

/*
 * Is @addr kernel or module text? On success a module that holds it is
 * pinned in *@probed_mod until the caller is done registering.
 */
static int pin_probed_text(unsigned long addr, struct module **probed_mod)
{
	*probed_mod = NULL;
	if (core_kernel_text(addr))
		return 0;
	return pin_probed_module(addr, probed_mod);
}

/*
 * Code in front of a function that is not part of it: the padding that
 * call depth tracking rewrites (__pfx_foo), and the kCFI or FineIBT
 * preamble (__cfi_foo), whose bytes are the type hash that indirect
 * callers check. By name: nothing else marks them.
 */
static bool is_preamble_symbol(const char *name)
{
	return str_has_prefix(name, "__pfx_") || str_has_prefix(name, "__cfi_");
}

/*
 * Is @addr one of ftrace's call sites? (ftrace_location() would also map
 * a symbol to the site in it, through kallsyms: not wanted here.)
 */
static bool is_ftrace_call_site(unsigned long addr)
{
#ifdef CONFIG_DYNAMIC_FTRACE
	unsigned long end = probed_function.start + probed_function.size;

	if (!addr)
		return false;
	if (addr - probed_function.start >= probed_function.size)
		return ftrace_location_range(addr, addr) == addr;
	/*
	 * In the probed function, whose probes tend to come in address
	 * order: one search finds the next site for all of them up to it.
	 */
	if (!probed_function.site_from || addr < probed_function.site_from ||
	    (probed_function.site && addr > probed_function.site)) {
		probed_function.site_from = addr;
		probed_function.site = ftrace_location_range(addr, end - 1);
	}
	return addr == probed_function.site;
#else
	return false;
#endif
}

/*
 * Does a probe at @addr ride an ftrace call site? @at_call_site: whether
 * @addr itself is one, the answer on arches whose probe sits on the call
 * site. kprobe_mutex, text pinned.
 */
static bool on_ftrace_site(unsigned long addr, bool at_call_site)
{
	unsigned long ip;

	if (!IS_ENABLED(CONFIG_KPROBES_ON_FTRACE))
		return false;
	ip = arch_kprobe_ftrace_ip(addr);
	return ip == addr ? at_call_site : is_ftrace_call_site(ip);
}

/*
 * Everything else that makes an address unprobeable, whatever the arch.
 * Called with kprobe_mutex and the text locks held, the text pinned.
 * The order of the checks decides the error for an address that fails
 * several, and follows the tree's.
 */
static int check_probe_address(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr;
	bool at_call_site = is_ftrace_call_site(addr);
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	lockdep_assert_held(&text_mutex);
	/*
	 * A probe that rides ftrace's call site is the one at the address
	 * arch_kprobe_ftrace_ip() maps to it; the call site's own address,
	 * when that is another (arm64's BL), is refused as the tree's arm64
	 * refuses it. Elsewhere in the ftrace call, the arch's boundary
	 * check refuses.
	 */
	if (on_ftrace_site(addr, at_call_site))
		p->flags |= KPROBE_FLAG_FTRACE;
	else if (at_call_site)
		return kprobe_refuse(-EINVAL, IS_ENABLED(CONFIG_KPROBES_ON_FTRACE) ?
				     "ftrace's call site: the entry's probe rides it" :
				     "ftrace's call site, without KPROBES_ON_FTRACE");

	/* The symbol place_probe() found: @addr is in it. */
	ret = refuse_blacklisted(addr, probed_function.name,
				 probed_function.modname[0] ? probed_function.modname : NULL);
	if (ret)
		return ret;
	if (is_preamble_symbol(probed_function.name))
		return kprobe_refuse(-EINVAL, "a function's preamble (__pfx_, __cfi_)");
	/* ftrace's own site is in none of the kernel's other tables. */
	if (kprobe_ftrace(p))
		return 0;
	return refuse_listed_site(addr);
}

/*
 * Every check of the probe point @p->addr (resolved) that needs no arch
 * state, in the order of the tree's, which decides the error code for an
 * address that fails several. Moves @p->addr as the arch wants it, sets
 * @site to the site already there, if any, and pins the text's module in
 * @mod. The one decision function for registering and for the query
 * file, so that they cannot disagree. kprobe_mutex and the text locks.
 */
int kprobe_check_point(struct kprobe *p, struct kprobe **site,
		       struct module **mod)
{
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	lockdep_assert_held(&text_mutex);
	*mod = NULL;
	ret = place_probe(p);
	if (ret)
		return ret;
	if (kprobe_find_registered(p, site))
		return kprobe_refuse(-EINVAL, "this probe is registered already");
	ret = pin_probed_text((unsigned long)p->addr, mod);
	if (ret)
		return ret;
	return check_probe_address(p);
}
