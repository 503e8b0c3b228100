// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Batches: what one registration call changes, applied at once. A batch
 * holds the text locks from kprobe_batch_begin() on; arming.c and
 * optimizer.c queue breakpoint and jump writes and ftrace filter changes
 * into it, and kprobe_batch_finish() applies them, takes the sites that
 * left out of the table, waits for one RCU grace period for all of them
 * with no lock held, and frees them (kprobe_release_site());
 * kprobe_batch_defer() leaves the waiting and the freeing to deferred.c.
 * kprobe_sync_all_sites() is the batch that brings every site in line
 * with the global switches.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

static void kprobes_lock_text(void)
{
	cpus_read_lock();
	jump_label_lock();
	mutex_lock(&text_mutex);
}

/*
 * Start a batch; the text locks are held until kprobe_batch_finish()
 * applies it. Paths that decode text, write text near a retiring site's
 * jump, or need it gone, start with kprobe_batch_begin_retired() instead.
 */
void kprobe_batch_begin(struct kprobe_batch *b)
{
	/* Held until the batch is published: arming.c's queues are its. */
	lockdep_assert_held(&kprobe_mutex);
	memset(b, 0, sizeof(*b));
	INIT_LIST_HEAD(&b->free_list);
	INIT_LIST_HEAD(&b->free_aggregates);
	kprobes_lock_text();
}

static void kprobes_unlock_text(void)
{
	mutex_unlock(&text_mutex);
	jump_label_unlock();
	cpus_read_unlock();
}

#ifndef arch_remove_kprobe
void __weak arch_remove_kprobe(struct kprobe *p)
{
}
#endif

/* Free @site's arch state and, for an aggregate, its detour and itself. */
void kprobe_release_site(struct kprobe *site)
{
	if (!kprobe_ftrace(site))
		arch_remove_kprobe(site);
	if (!kprobe_is_aggr(site))
		return;
	kprobe_site_remove_detour(site);
	kprobe_free_aggregate(site);
}

/* Apply the queued breakpoint and jump writes; text_mutex held. */
void kprobe_batch_apply_text(struct kprobe_batch *b)
{
	lockdep_assert_held(&text_mutex);
	if (b->poked)
		arch_kprobe_queue_apply();
	b->poked = false;
}

/*
 * Start a batch after writing back the retiring sites' text: for paths
 * that may write near their jumps, or decode text (registering, the
 * optimizer), or need them gone (text going away, the global switches).
 */
void kprobe_batch_begin_retired(struct kprobe_batch *b)
{
	kprobe_retire_sites();
	kprobe_batch_begin(b);
}

/*
 * Start the batch's grace period now, so that it runs while the caller
 * does what needs none; synchronize_rcu() would start it only when
 * called, and waits the same way: a callback that wakes it. While the
 * kernel boots, synchronize_rcu() is expedited (or has nothing to wait
 * for), so kprobe_batch_finish() leaves it to that.
 */
static void batch_start_grace_period(struct kprobe_batch *b)
{
	if (system_state < SYSTEM_RUNNING)
		return;
	init_rcu_head_on_stack(&b->grace.head);
	init_completion(&b->grace.completion);
	call_rcu_hurry(&b->grace.head, wakeme_after_rcu);
	b->grace_started = true;
}

/*
 * Wait for the batch's grace period with no lock held, so that other
 * callers (registering, enabling, other unregistering threads, whose
 * grace periods then overlap with this one) are not held up by it.
 */
static void batch_wait_grace_period(struct kprobe_batch *b)
{
	lockdep_assert_not_held(&kprobe_mutex);
	lockdep_assert_not_held(&text_mutex);
	if (!b->grace_started) {
		synchronize_rcu();
		return;
	}
	wait_for_completion(&b->grace.completion);
	destroy_rcu_head_on_stack(&b->grace.head);
	b->grace_started = false;
}

/**
 * kprobe_release_dying_sites() - free the sites a batch took out
 * @sites: lone sites, linked by their ->list (a batch's free_list)
 * @aggregates: aggregates, linked by their ->dying
 *
 * Once the batch's grace period is over: no CPU runs their handlers nor
 * their instruction copies. kprobe_mutex held.
 */
void kprobe_release_dying_sites(struct list_head *sites, struct list_head *aggregates)
{
	struct kprobe_aggregate *agg, *next_agg;
	struct kprobe *site, *next;

	lockdep_assert_held(&kprobe_mutex);
	list_for_each_entry_safe(site, next, sites, list) {
		list_del_init(&site->list);
		site->flags &= ~KPROBE_SITE_ARMING_FLAGS;
		kprobe_release_site(site);
	}
	list_for_each_entry_safe(agg, next_agg, aggregates, dying) {
		list_del_init(&agg->dying);
		if (!kprobe_site_keep_retired(aggr_site(agg)))
			kprobe_release_site(aggr_site(agg));
	}
	kprobe_counter_trim();
}

/*
 * Publish a batch: apply the text writes, drop text_mutex, update ftrace,
 * take the dying sites out of the table and start the grace period after
 * which no CPU is running a handler of the removed probes nor executing
 * the instruction copy of a removed site.
 */
static int batch_publish(struct kprobe_batch *b)
{
	struct kprobe_aggregate *agg;
	struct kprobe *site;
	int ret;

	kprobe_batch_apply_text(b);
	kprobes_unlock_text();
	ret = kprobe_ftrace_changes_apply();

	list_for_each_entry(site, &b->free_list, list)
		kprobe_site_unhash(site);
	list_for_each_entry(agg, &b->free_aggregates, dying)
		kprobe_site_unhash(aggr_site(agg));
	if (b->need_sync && !b->deferred)
		batch_start_grace_period(b);

	kprobe_table_shrink();
	list_for_each_entry(site, &b->free_list, list)
		kprobe_requeue_covering_sites(site->addr);
	list_for_each_entry(agg, &b->free_aggregates, dying)
		kprobe_requeue_covering_sites(aggr_site(agg)->addr);
	return ret;
}

/**
 * kprobe_batch_finish() - end a batch begun by kprobe_batch_begin()
 * @b: the batch
 *
 * Applies the batch's text and ftrace changes and drops the text locks.
 * A batch that took probes out of the table (b->need_sync) then waits
 * for an RCU grace period, after which no CPU runs their handlers, and
 * frees the sites that left: it drops kprobe_mutex while it waits, so
 * its caller must look up again anything it found before. kprobe_mutex
 * held on entry and on return.
 *
 * Return: 0, or the error ftrace gave for a site it could not arm (that
 * site is left unarmed).
 */
int kprobe_batch_finish(struct kprobe_batch *b)
{
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	ret = batch_publish(b);
	if (!b->need_sync)
		return ret;
	/* While the grace period runs: a chunk of the retiring sites' text. */
	kprobe_retire_chunk();
	mutex_unlock(&kprobe_mutex);
	batch_wait_grace_period(b);
	mutex_lock(&kprobe_mutex);
	kprobe_release_dying_sites(&b->free_list, &b->free_aggregates);
	return ret;
}

/**
 * kprobe_batch_defer() - end a batch begun by kprobe_batch_begin(), and
 * wait for nothing
 * @b: the batch
 * @d: the deferred probe that takes the batch's dying sites
 *
 * As kprobe_batch_finish(), but instead of waiting for the grace period
 * it records in @d the one to poll for, and hands @d the sites to free
 * after it: deferred.c frees them, and gives @d's probe back, once that
 * grace period is over. kprobe_mutex held throughout.
 */
void kprobe_batch_defer(struct kprobe_batch *b, struct kprobe_deferred *d)
{
	lockdep_assert_held(&kprobe_mutex);
	b->deferred = true;
	/* An ftrace error leaves a site unarmed: as good as gone here. */
	batch_publish(b);
	list_splice_tail_init(&b->free_list, &d->dying_sites);
	list_splice_tail_init(&b->free_aggregates, &d->dying_aggregates);
	/* After the unhooking, so a grace period that ends covers it. */
	d->rcu_cookie = start_poll_synchronize_rcu();
}

/* Bring every site in line with the current switches; kprobe_mutex held. */
int kprobe_sync_all_sites(void)
{
	struct kprobe_batch b;
	struct kprobe *site;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&kprobe_mutex);
	kprobe_batch_begin_retired(&b);
	for (i = 0; i < KPROBE_TABLE_SIZE; i++)
		hlist_for_each_entry(site, &kprobe_table[i], hlist)
			ret = kprobe_site_sync_armed(&b, site) ?: ret;
	return kprobe_batch_finish(&b) ?: ret;
}
