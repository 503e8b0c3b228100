// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Text the kernel lists in tables of its own, which no probe may go on:
 * jump label sites and inline static call sites (rewritten when their
 * key flips or their call is updated: a probe's copy would go stale, its
 * breakpoint be overwritten) and BUG() and WARN() sites (they trap on
 * purpose, and the trap is not ours).
 *
 * None of the tables is sorted by address, so the kernel's lookups walk
 * all of each; for vmlinux's jump entries, thousands on a distribution
 * kernel, that walk cost more than the rest of registering a probe on a
 * NOP. So vmlinux's jump label sites get an index here, sorted by
 * address, and the arch says (arch_kprobe_listed_tables()) which tables
 * the instruction at an address could be in at all.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

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
	return vmlinux_jump_site_at(addr) || module_jump_site_at(addr);
}
#else
static bool jump_label_site_at(unsigned long addr)
{
	return false;
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

/**
 * kprobe_refuse_listed_site() - refuse a probe on a listed site
 * @addr: the probe address, kprobe_mutex and text_mutex held, its text
 *	  pinned
 *
 * Return: 0 when no table lists @addr, else -EINVAL (the tree's code for
 * each), the reason recorded.
 */
int kprobe_refuse_listed_site(unsigned long addr)
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
