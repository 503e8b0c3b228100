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
 * with one site or 100,000: an open-addressing table (linear probing)
 * that grows and shrinks with the number of sites, each time rebuilt and
 * published whole.
 *
 * Writers hold kprobe_mutex and keep at least half of the entries empty,
 * so every search ends at an empty entry. An entry's site is written
 * before its address, with release; readers load the address with
 * acquire. A removed entry becomes a tombstone, which searches go past.
 * A removed site, and a replaced index, are freed after a grace period.
 */
#define INDEX_EMPTY		0UL
#define INDEX_TOMBSTONE		1UL
#define INDEX_MIN_BITS		6

struct kprobe_index_entry {
	unsigned long addr;
	struct kprobe *site;
};

struct kprobe_index {
	struct kprobe_index_entry *entry;
	unsigned long mask;
	unsigned int shift;		/* 32 - log2(number of entries) */
	unsigned int used;		/* entries not empty: live and tombstones */
	unsigned int live;
	struct rcu_head rcu;
};

/* Until the first site arrives: two empty entries, never freed. */
static struct kprobe_index_entry boot_index_entries[2];
static struct kprobe_index boot_index = {
	.entry = boot_index_entries,
	.mask = 1,
	.shift = 31,
};

static struct kprobe_index __rcu *kprobe_index = RCU_INITIALIZER(&boot_index);

static nokprobe_inline unsigned long index_start(const struct kprobe_index *idx,
						 unsigned long addr)
{
	/*
	 * The low 32 bits tell apart the text of one kernel and its
	 * modules, which lie within a few GiB of each other; a 32-bit
	 * multiplier costs arm64 two instructions fewer to build.
	 */
	return ((u32)addr * GOLDEN_RATIO_32) >> idx->shift;
}

/*
 * The lookup get_kprobe() makes. An entry may be removed and filled again
 * for another address between the load of its address and that of its
 * site (a removed entry is reused at once: unregistering need not wait
 * for a grace period), so the site found is the answer only if it is at
 * @addr; otherwise @addr's site left while we looked, and there is none.
 * @between, constant NULL but in the KUnit suite's copy, runs between the
 * two loads.
 */
static __always_inline struct kprobe *index_lookup(void *addr, void (*between)(void *arg),
						   void *arg)
{
	struct kprobe_index_entry *entry;
	struct kprobe_index *idx;
	struct kprobe *site;
	unsigned long i, a;

	idx = rcu_dereference_check(kprobe_index, lockdep_is_held(&kprobe_mutex) ||
				    rcu_read_lock_any_held());
	/* In a local: each acquire below is a compiler barrier. */
	entry = idx->entry;
	i = index_start(idx, (unsigned long)addr);
	for (;;) {
		/* Pairs with index_fill(): the site is read after its address. */
		a = smp_load_acquire(&entry[i].addr);
		/* Most hits find their site first: no more work for them. */
		if (likely(a == (unsigned long)addr))
			break;
		if (a == INDEX_EMPTY)
			return NULL;
		i = (i + 1) & idx->mask;
	}
	if (between)
		between(arg);
	/* A site is freed after a grace period: ours holds it. */
	site = READ_ONCE(entry[i].site);
	return likely(site->addr == addr) ? site : NULL;
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
 * @between: called between the load of the index entry's address and
 *	that of its site, in an RCU read-side critical section
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
	slot = index_start(index_locked(), (unsigned long)addr);
	mutex_unlock(&kprobe_mutex);
	return slot;
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_index_slot);
#endif

/* The entry holding @addr, or the first free one on its way; kprobe_mutex. */
static struct kprobe_index_entry *index_find(struct kprobe_index *idx,
					     unsigned long addr, bool want_free)
{
	unsigned long i;

	lockdep_assert_held(&kprobe_mutex);
	for (i = index_start(idx, addr);; i = (i + 1) & idx->mask) {
		struct kprobe_index_entry *e = &idx->entry[i];

		if (e->addr == addr ? !want_free :
		    e->addr == INDEX_EMPTY || (want_free && e->addr == INDEX_TOMBSTONE))
			return e;
	}
}

static void index_fill(struct kprobe_index *idx, struct kprobe *site)
{
	struct kprobe_index_entry *e = index_find(idx, (unsigned long)site->addr, true);

	if (e->addr == INDEX_EMPTY)
		idx->used++;
	idx->live++;
	WRITE_ONCE(e->site, site);
	/* Pairs with get_kprobe(): the address is published last. */
	smp_store_release(&e->addr, (unsigned long)site->addr);
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

	idx = kvzalloc(sizeof(*idx) + (sizeof(idx->entry[0]) << bits), GFP_KERNEL);
	if (!idx)
		return -ENOMEM;
	idx->entry = (struct kprobe_index_entry *)(idx + 1);
	idx->mask = BIT(bits) - 1;
	idx->shift = 32 - bits;
	for (i = 0; i <= old->mask; i++)
		if (old->entry[i].addr > INDEX_TOMBSTONE)
			index_fill(idx, old->entry[i].site);
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

/* @site takes over @old's entry (an aggregate replacing a lone probe). */
static void index_replace(struct kprobe *old, struct kprobe *site)
{
	struct kprobe_index_entry *e = index_find(index_locked(), (unsigned long)old->addr,
						  false);

	if (WARN_ON_ONCE(e->addr != (unsigned long)old->addr))
		return;
	/*
	 * Release: a reader that finds the new site through this pointer
	 * sees it initialized (the read is ordered by its dependency on
	 * the pointer).
	 */
	smp_store_release(&e->site, site);
}

static void index_remove(struct kprobe *site)
{
	struct kprobe_index *idx = index_locked();
	struct kprobe_index_entry *e = index_find(idx, (unsigned long)site->addr, false);

	if (WARN_ON_ONCE(e->addr != (unsigned long)site->addr))
		return;
	WRITE_ONCE(e->addr, INDEX_TOMBSTONE);
	idx->live--;
}

/* After removals: give memory back when the index is mostly empty. */
void kprobe_table_shrink(void)
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
}
