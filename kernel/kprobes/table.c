// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The probe table: the registered sites by address, kept twice. The
 * hash table serves the registration side (walks under kprobe_mutex,
 * and the hlist node that users such as trace_kprobe test to tell a
 * registered probe); the index serves the hit path, get_kprobe(), with
 * no lock. core.c adds, replaces and removes sites only through the
 * kprobe_table_*() functions below, which keep the two in step.
 */

#include "internal.h"

/*
 * Sites by address, for the registration side. Changed under
 * kprobe_mutex; walked under it, or with the _rcu iterators.
 */
struct hlist_head kprobe_table[KPROBE_TABLE_SIZE];

static struct hlist_head *kprobe_bucket(const void *addr)
{
	return &kprobe_table[hash_ptr(addr, KPROBE_HASH_BITS)];
}

/*
 * The hit path's index of sites by address, so that a hit costs the same
 * with one site or 100,000: an open-addressing table (linear probing) of
 * site pointers that grows and shrinks with the number of sites, each
 * time rebuilt and published whole.
 *
 * Writers hold kprobe_mutex and keep at least half of the entries empty,
 * so every search ends at an empty entry. A site is initialized before
 * its pointer is stored, with release; readers load the pointer once and
 * read the site's address through it, which the dependency orders. An
 * entry holds a site, or one of two sentinels that look like sites at
 * addresses no probe can have (their own, in data): kprobe_index_empty,
 * where a search ends, and index_removed, which it goes past. A removed entry
 * may be filled again for another address at once (unregistering need
 * not wait for a grace period): a reader still holding the old pointer
 * reads the old site, which lives until a grace period is over, and
 * compares its address as it would have anyway. A replaced index is
 * freed after a grace period too.
 */
#define INDEX_MIN_BITS		6

/* struct kprobe_index, and the search, are in <linux/kprobes_arch.h>. */
struct kprobe kprobe_index_empty = {
	.addr = (kprobe_opcode_t *)&kprobe_index_empty,
	.flags = KPROBE_FLAG_DISABLED,
};

static struct kprobe index_removed = {
	.addr = (kprobe_opcode_t *)&index_removed,
};

/* Until the first site arrives: two empty entries, never freed. */
static struct kprobe *boot_index_entries[2] = {
	&kprobe_index_empty, &kprobe_index_empty
};

static struct kprobe_index boot_index = {
	.entry = boot_index_entries,
	.mask = 1,
	.shift = 31,
};

struct kprobe_index __rcu *kprobe_index = RCU_INITIALIZER(&boot_index);

/* The lookup get_kprobe() makes; @between as in kprobe_index_search(). */
static __always_inline struct kprobe *index_lookup(void *addr, void (*between)(void *arg),
						   void *arg)
{
	struct kprobe_index *idx;

	idx = rcu_dereference_check(kprobe_index, lockdep_is_held(&kprobe_mutex) ||
				    rcu_read_lock_any_held());
	return kprobe_index_search(idx, addr, NULL, between, arg);
}

/**
 * get_kprobe() - find the probe site at an address
 * @addr: the probed instruction's address
 *
 * Called on the hit path with preemption or interrupts disabled, or with
 * kprobe_mutex held. Not traced: every breakpoint hit calls it, and
 * would run its function tracer NOPs.
 *
 * Return: the site (a lone probe or an aggregate) at @addr, or NULL.
 */
notrace struct kprobe *get_kprobe(void *addr)
{
	return index_lookup(addr, NULL, NULL);
}
EXPORT_SYMBOL_GPL(get_kprobe);
NOKPROBE_SYMBOL(get_kprobe);

static struct kprobe_index *index_locked(void)
{
	return rcu_dereference_protected(kprobe_index, lockdep_is_held(&kprobe_mutex));
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kprobes_test_lookup_between() - get_kprobe(), with a pause
 * @addr: the address to look up
 * @between: called between the load of the first index entry and the
 *	read of its site's address, in an RCU read-side critical section
 * @arg: its argument
 *
 * For the KUnit suite: the interleaving get_kprobe() must survive, made
 * at will (@between has another task remove the site at @addr and
 * register one for another address in the same entry).
 *
 * Return: as get_kprobe().
 */
struct kprobe *kprobes_test_lookup_between(void *addr, void (*between)(void *arg),
					   void *arg)
{
	struct kprobe *site;

	rcu_read_lock();
	site = index_lookup(addr, between, arg);
	rcu_read_unlock();
	return site;
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_lookup_between);

/**
 * kprobes_test_index_slot() - where the index starts looking for an address
 * @addr: the address
 *
 * For the KUnit suite, which needs two addresses whose searches start
 * at the same entry of the index as it is now.
 *
 * Return: the entry's number.
 */
unsigned long kprobes_test_index_slot(void *addr)
{
	unsigned long slot;

	mutex_lock(&kprobe_mutex);
	slot = kprobe_index_start(index_locked(), (unsigned long)addr);
	mutex_unlock(&kprobe_mutex);
	return slot;
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_index_slot);
#endif

/* The entry holding @addr's site, or the first free one on its way. */
static struct kprobe **index_find(struct kprobe_index *idx, void *addr, bool want_free)
{
	unsigned long i;

	lockdep_assert_held(&kprobe_mutex);
	for (i = kprobe_index_start(idx, (unsigned long)addr);; i = (i + 1) & idx->mask) {
		struct kprobe *site = idx->entry[i];

		if (site->addr == addr ? !want_free :
		    site == &kprobe_index_empty || (want_free && site == &index_removed))
			return &idx->entry[i];
	}
}

static void index_store(struct kprobe **entry, struct kprobe *site)
{
	/* Pairs with index_lookup()'s dependent read: @site is initialized. */
	smp_store_release(entry, site);
}

static void index_fill(struct kprobe_index *idx, struct kprobe *site)
{
	struct kprobe **e = index_find(idx, site->addr, true);

	if (*e == &kprobe_index_empty)
		idx->used++;
	idx->live++;
	index_store(e, site);
}

/*
 * Publish a new index with room for @nr sites (20 to 40 percent full,
 * so that it is not rebuilt again soon) holding the live entries of the
 * current one; the old one is freed after a grace period.
 */
static int index_rebuild(unsigned int nr)
{
	struct kprobe_index *old = index_locked(), *idx;
	unsigned int bits = max(INDEX_MIN_BITS, order_base_2(nr * 5 / 2 + 1));
	unsigned long i;

	idx = kvmalloc(sizeof(*idx) + (sizeof(idx->entry[0]) << bits), GFP_KERNEL);
	if (!idx)
		return -ENOMEM;
	idx->entry = (struct kprobe **)(idx + 1);
	idx->mask = BIT(bits) - 1;
	idx->shift = 32 - bits;
	idx->used = 0;
	idx->live = 0;
	for (i = 0; i <= idx->mask; i++)
		idx->entry[i] = &kprobe_index_empty;
	for (i = 0; i <= old->mask; i++)
		if (old->entry[i] != &kprobe_index_empty && old->entry[i] != &index_removed)
			index_fill(idx, old->entry[i]);
	rcu_assign_pointer(kprobe_index, idx);
	if (old != &boot_index)
		kvfree_rcu(old, rcu);
	return 0;
}

/* Make room for one more site, so that index_insert() cannot fail. */
static int index_reserve(void)
{
	struct kprobe_index *idx = index_locked();

	if (2 * (idx->used + 1) <= idx->mask + 1)
		return 0;
	return index_rebuild(idx->live + 1);
}

static void index_insert(struct kprobe *site)
{
	index_fill(index_locked(), site);
}

/*
 * @site takes over @old's entry (an aggregate replacing a lone probe, at
 * the same address): a reader gets one or the other, both alive.
 */
static void index_replace(struct kprobe *old, struct kprobe *site)
{
	struct kprobe **e = index_find(index_locked(), old->addr, false);

	if (WARN_ON_ONCE(*e != old))
		return;
	index_store(e, site);
}

static void index_remove(struct kprobe *site)
{
	struct kprobe_index *idx = index_locked();
	struct kprobe **e = index_find(idx, site->addr, false);

	if (WARN_ON_ONCE(*e != site))
		return;
	/* No release: the sentinel was initialized at build time. */
	WRITE_ONCE(*e, &index_removed);
	idx->live--;
}

/*
 * Give memory back when the index is mostly empty: under a sixteenth of
 * its entries live. The new one is 20 to 40 percent full, so that sites
 * removed one after another rebuild it only once a third or less of
 * those it was rebuilt with are left: the work stays in proportion to
 * the sites removed.
 */
static void index_shrink(void)
{
	struct kprobe_index *idx = index_locked();

	if (idx->mask + 1 > BIT(INDEX_MIN_BITS) && 16 * idx->live < idx->mask + 1)
		index_rebuild(idx->live);	/* on failure, the old one serves */
}

/**
 * kprobe_table_reserve() - make room for one more site
 *
 * So that kprobe_table_add() cannot fail once a probe is prepared.
 *
 * Context: kprobe_mutex held.
 * Return: 0, or -ENOMEM.
 */
int kprobe_table_reserve(void)
{
	lockdep_assert_held(&kprobe_mutex);
	return index_reserve();
}

/* Publish @site (prepared) to both tables; kprobe_mutex held. */
void kprobe_table_add(struct kprobe *site)
{
	lockdep_assert_held(&kprobe_mutex);
	hlist_add_head_rcu(&site->hlist, kprobe_bucket(site->addr));
	index_insert(site);
}

/* @site takes @old's place in both tables; kprobe_mutex held. */
void kprobe_table_replace(struct kprobe *old, struct kprobe *site)
{
	lockdep_assert_held(&kprobe_mutex);
	hlist_replace_rcu(&old->hlist, &site->hlist);
	index_replace(old, site);
}

/*
 * Take a site out of both tables, if it is still in them. Readers may
 * still see it until a grace period is over.
 */
void kprobe_site_unhash(struct kprobe *site)
{
	lockdep_assert_held(&kprobe_mutex);
	if (hlist_unhashed(&site->hlist))
		return;
	hlist_del_init_rcu(&site->hlist);
	index_remove(site);
	index_shrink();
}

/* Is @p registered, as a site or as an aggregate's member? */
bool kprobe_find_registered(struct kprobe *p, struct kprobe **site_out)
{
	struct kprobe *site = get_kprobe(p->addr), *m;

	*site_out = site;
	if (!site)
		return false;
	if (site == p)
		return true;
	if (kprobe_is_aggr(site))
		list_for_each_entry(m, &site->list, list)
			if (m == p)
				return true;
	return false;
}
