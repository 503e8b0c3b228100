// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hit counters: one per-CPU counter per registered probe and aggregate,
 * carved out of shared per-CPU chunks; how a member's hits are counted
 * by its site's counter; and kprobe_hits(), which sums them.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

/*
 * Every registered probe and every aggregate has a per-CPU hit counter.
 * An alloc_percpu() and a free_percpu() for each would cost more than the
 * rest of registering and unregistering a probe, so counters are handed
 * out from chunks of BITS_PER_LONG.
 *
 * Chunks stay on counter_chunks in the order they were made. Probes tend
 * to come and go in order, so the chunk wanted next is usually the one
 * used last (counter_cursor) or its neighbour: taking and giving back
 * search outward from the cursor, both ways round the list. A batch of
 * N probes then costs O(N), where a search from the head of the list
 * would cost O(N * N / BITS_PER_LONG). counters_free counts the unused
 * counters of all chunks, so that taking one when there is none makes a
 * chunk without a search.
 *
 * A counter is given back only when no CPU can count into it any more:
 * a probe's never published, or after the grace period of the batch
 * that took the probe out of the table (kprobe_release_counters(),
 * deferred.c).
 * So a counter given back may be handed out again at once, and a chunk
 * destroyed as soon as it is empty. All under kprobe_mutex.
 */
struct counter_chunk {
	struct list_head list;
	unsigned long used;		/* bit n: counters + n is handed out */
	unsigned long __percpu *counters;
};

#define COUNTER_CHUNK_BYTES	(BITS_PER_LONG * sizeof(unsigned long))

static LIST_HEAD(counter_chunks);
static struct counter_chunk *counter_cursor;
static unsigned int counter_chunks_nr;
static unsigned int counters_free;

/* The chunk after (@forward) or before @c, round the list. */
static struct counter_chunk *chunk_step(struct counter_chunk *c, bool forward)
{
	struct list_head *n = forward ? c->list.next : c->list.prev;

	if (n == &counter_chunks)
		n = forward ? n->next : n->prev;
	return list_entry(n, struct counter_chunk, list);
}

/* Does @c hold @counter or, for a NULL @counter, have a free one? */
static bool chunk_matches(struct counter_chunk *c, unsigned long __percpu *counter)
{
	unsigned long start = (__force unsigned long)c->counters;
	unsigned long addr = (__force unsigned long)counter;

	if (!counter)
		return ~c->used != 0;
	return addr >= start && addr < start + COUNTER_CHUNK_BYTES;
}

/* The chunk nearest the cursor that chunk_matches() @counter, or NULL. */
static struct counter_chunk *chunk_search(unsigned long __percpu *counter)
{
	struct counter_chunk *ahead = counter_cursor, *behind = counter_cursor;
	unsigned int i;

	if (!counter_cursor || chunk_matches(counter_cursor, counter))
		return counter_cursor;
	for (i = 0; i < counter_chunks_nr / 2; i++) {
		ahead = chunk_step(ahead, true);
		if (chunk_matches(ahead, counter))
			return ahead;
		behind = chunk_step(behind, false);
		if (chunk_matches(behind, counter))
			return behind;
	}
	return NULL;
}

static struct counter_chunk *chunk_create(void)
{
	struct counter_chunk *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->counters = __alloc_percpu(COUNTER_CHUNK_BYTES, sizeof(unsigned long));
	if (!c->counters) {
		kfree(c);
		return NULL;
	}
	list_add_tail(&c->list, &counter_chunks);
	counter_chunks_nr++;
	counters_free += BITS_PER_LONG;
	return c;
}

static void chunk_destroy(struct counter_chunk *c)
{
	if (counter_cursor == c)
		counter_cursor = counter_chunks_nr > 1 ? chunk_step(c, true) : NULL;
	list_del(&c->list);
	counter_chunks_nr--;
	counters_free -= BITS_PER_LONG;
	free_percpu(c->counters);
	kfree(c);
}

unsigned long __percpu *kprobe_counter_alloc(void)
{
	struct counter_chunk *c = NULL;
	unsigned long __percpu *counter;
	unsigned int n;
	int cpu;

	lockdep_assert_held(&kprobe_mutex);
	if (counters_free)
		c = chunk_search(NULL);
	if (!c) {
		WARN_ON_ONCE(counters_free);	/* the count is off */
		c = chunk_create();
		if (!c)
			return NULL;
	}
	n = ffz(c->used);
	c->used |= BIT(n);
	counters_free--;
	counter_cursor = c;
	counter = c->counters + n;
	for_each_possible_cpu(cpu)
		per_cpu(*counter, cpu) = 0;
	return counter;
}

/* @counter's bit in @c->used; @c holds it. */
static unsigned long chunk_bit(struct counter_chunk *c, unsigned long __percpu *counter)
{
	return BIT(counter - c->counters);
}

/* Is @counter one kprobe_counter_alloc() handed out and not given back yet? */
bool kprobe_counter_in_use(unsigned long __percpu *counter)
{
	struct counter_chunk *c;

	lockdep_assert_held(&kprobe_mutex);
	c = counter ? chunk_search(counter) : NULL;
	return c && (c->used & chunk_bit(c, counter));
}

/* Give back a counter from kprobe_counter_alloc(); see above for when. */
void kprobe_counter_free(unsigned long __percpu *counter)
{
	struct counter_chunk *c;

	lockdep_assert_held(&kprobe_mutex);
	if (!counter)
		return;
	c = chunk_search(counter);
	if (WARN_ON_ONCE(!c))
		return;
	/* Given back already: a probe listed twice in one unregister call. */
	if (!(c->used & chunk_bit(c, counter)))
		return;
	c->used &= ~chunk_bit(c, counter);
	counters_free++;
	counter_cursor = c;
	/*
	 * An empty chunk goes, unless it holds the last free counters: half
	 * a chunk's worth stays free besides, so that one probe coming and
	 * going at a chunk's edge does not make and destroy a chunk each time.
	 */
	if (!c->used && counters_free >= BITS_PER_LONG + BITS_PER_LONG / 2)
		chunk_destroy(c);
}

/* ---- counting a probe's hits --------------------------------------------- */

static unsigned long sum_hit_counter(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

/*
 * An enabled member of an aggregate, whose hits are its site's: its own
 * counter holds its hits minus the site's count so far, and
 * kprobe_hits() adds the two. Cleared without folding the count when the
 * probe is unregistered, since its count goes with it.
 */
static bool member_site_counted(const struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_SITE_COUNTED;
}

/*
 * Start or stop counting member @m's hits by its site's counter; see
 * KPROBE_FLAG_SITE_COUNTED. A hit racing with the switch may be counted
 * or not: these are statistics, and the hit path takes no lock.
 */
static void member_set_counted(struct kprobe *site, struct kprobe *m, bool counted)
{
	unsigned long site_hits;

	lockdep_assert_held(&kprobe_mutex);
	if (member_site_counted(m) == counted)
		return;
	site_hits = sum_hit_counter(site->nhit);
	if (counted) {
		this_cpu_sub(*m->nhit, site_hits);
		m->flags |= KPROBE_FLAG_SITE_COUNTED;
	} else {
		this_cpu_add(*m->nhit, site_hits);
		m->flags &= ~KPROBE_FLAG_SITE_COUNTED;
	}
}

/*
 * After members joined, left the running or came back: count the right
 * ones by the site's counter. kprobe_mutex held.
 */
void kprobe_sync_member_counting(struct kprobe *site)
{
	struct kprobe *m;

	lockdep_assert_held(&kprobe_mutex);
	list_for_each_entry(m, &site->list, list)
		member_set_counted(site, m, !kprobe_disabled(m));
}

/*
 * The hits that ran @p's handlers so far, summed over the CPUs; 0 when
 * @p is not registered. Under kprobe_mutex.
 */
unsigned long kprobe_hits_locked(struct kprobe *p)
{
	unsigned long hits;
	struct kprobe *site;

	lockdep_assert_held(&kprobe_mutex);
	if (!p->nhit)
		return 0;
	hits = sum_hit_counter(p->nhit);
	if (member_site_counted(p) && kprobe_find_registered(p, &site))
		hits += sum_hit_counter(site->nhit);
	return hits;
}

/**
 * kprobe_hits() - how often a probe's handlers ran
 * @kp: the probe
 *
 * Counts the hits that ran @kp's handlers (a probe with only a
 * post_handler counts too), not those skipped because @kp was disabled or
 * the hit was nested in another.
 *
 * Context: process context; takes kprobe_mutex.
 * Return: the count since @kp was registered; 0 if it is not registered
 * (a struct kprobe that was never registered must be zeroed, as for
 * registering it).
 */
unsigned long kprobe_hits(struct kprobe *kp)
{
	unsigned long hits;

	mutex_lock(&kprobe_mutex);
	hits = kprobe_hits_locked(kp);
	mutex_unlock(&kprobe_mutex);
	return hits;
}
EXPORT_SYMBOL_GPL(kprobe_hits);
