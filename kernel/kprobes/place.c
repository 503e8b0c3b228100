// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a probe may go: resolving a probe point (a symbol and offset, or
 * an address) to the instruction the probe is placed on, and every check
 * of that point that needs no arch state, in the order of the tree's,
 * which decides the error code for a point that fails several. The
 * registering path and the query file both ask kprobe_check_point(), so
 * that they cannot disagree; a query has each refusal's rule recorded
 * (kprobe_refuse()). The checks and the remembered function are under
 * kprobe_mutex; resolving a name or an address takes no lock.
 */

#define pr_fmt(fmt) "kprobes: " fmt

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

/* The blacklist refuses: a query's verdict names the entry too. */
static int refuse_blacklisted(void)
{
	lockdep_assert_held(&kprobe_mutex);
	if (kprobe_querying)
		kprobe_querying->blacklisted = true;
	return kprobe_refuse(-EINVAL, "blacklisted");
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
} probed_function;

/*
 * Forget the remembered function: its text is going (gone.c), or the
 * query file looked at one only. kprobe_mutex held.
 */
void kprobe_forget_probed_function(void)
{
	lockdep_assert_held(&kprobe_mutex);
	probed_function.size = 0;
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

/* ---- checking the point -------------------------------------------------- */

#ifdef CONFIG_MODULES
/* Keep the module that holds @addr from going away while we place a probe. */
static int pin_probed_module(unsigned long addr, struct module **probed_mod)
{
	struct module *mod;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod && !try_module_get(mod)) {
		/* Its refcount is dead: the module is being unloaded. */
		preempt_enable();
		return kprobe_refuse(-ENOENT, "the module is going");
	}
	preempt_enable();
	if (!mod)
		return 0;

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
	return 0;
}
#endif

/*
 * Is @addr kernel or module text? On success a module that holds it is
 * pinned in *@probed_mod until the caller is done registering.
 */
static int pin_probed_text(unsigned long addr, struct module **probed_mod)
{
	*probed_mod = NULL;
	if (!core_kernel_text(addr) && !is_module_text_address(addr))
		return kprobe_refuse(-EINVAL, "not kernel or module text");
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
	return addr && ftrace_location_range(addr, addr) == addr;
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
	switch (kprobe_blacklisted(addr, probed_function.name,
				   probed_function.modname[0] ? probed_function.modname : NULL)) {
	case KPROBE_BLACKLISTED:
		return refuse_blacklisted();
	case KPROBE_BLACKLISTED_PIECE:
		return kprobe_refuse(-EINVAL,
				     "a piece (.cold, .part, ...) of a blacklisted function");
	case KPROBE_NOT_BLACKLISTED:
		break;
	}
	if (is_preamble_symbol(probed_function.name))
		return kprobe_refuse(-EINVAL, "a function's preamble (__pfx_, __cfi_)");
	/* ftrace's own site is in none of the kernel's other tables. */
	if (kprobe_ftrace(p))
		return 0;
	return kprobe_refuse_listed_site(addr);
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
