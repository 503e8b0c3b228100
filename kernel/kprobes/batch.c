// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Batches, and every way a site leaves the table. A batch is what one
 * registration call changes, applied at once: it holds the text locks
 * from kprobe_batch_begin() on; arming.c and optimizer.c queue breakpoint
 * and jump writes and ftrace filter changes into it, and
 * kprobe_batch_finish() applies them, takes the sites that left out of
 * the table, waits for one RCU grace period for all of them with no lock
 * held, and frees them (kprobe_release_site()); a batch handed to a
 * deferred probe (kprobe_batch::defer_to) leaves the waiting and the
 * freeing to deferred.c. An optimized site whose last probe went retires
 * first: its jump is written back here, in chunks, and it is freed after
 * an RCU-tasks grace period. kprobe_sync_all_sites() is the batch that
 * brings every site in line with the global switches.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

#ifdef CONFIG_OPTPROBES
static bool start_retiring(struct kprobe *site);
static void retire_chunk(void);
static bool keep_retired(struct kprobe *site);
#else
/* Without the optimizer no site ever has a jump, so none retires. */
static bool start_retiring(struct kprobe *site)
{
	return false;
}

static void retire_chunk(void)
{
}

static bool keep_retired(struct kprobe *site)
{
	return false;
}
#endif

static void kprobes_lock_text(void)
{
	cpus_read_lock();
	jump_label_lock();
	mutex_lock(&text_mutex);
}

/*
 * Start a batch; the text locks are held until kprobe_batch_finish()
 * applies it. Paths that decode text, write text near a retiring site's
 * jump, or need it gone, call kprobe_retire_sites() first.
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

/**
 * kprobe_batch_remove_site() - a site leaves the table in this batch
 * @b: the batch
 * @site: the site, marked KPROBE_FLAG_DYING, its last probe gone
 *
 * An optimized site retires (its jump is written back later, see
 * retiring_sites); any other is disarmed now, leaves the table when @b
 * is published, and is freed after its grace period. kprobe_mutex held.
 */
void kprobe_batch_remove_site(struct kprobe_batch *b, struct kprobe *site)
{
	lockdep_assert_held(&kprobe_mutex);
	if (start_retiring(site))
		return;
	kprobe_site_sync_armed(b, site);
	if (kprobe_is_aggr(site))
		list_add_tail(&to_aggr(site)->dying, &b->free_aggregates);
	else
		list_add_tail(&site->list, &b->free_list);
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
		if (!keep_retired(aggr_site(agg)))
			kprobe_release_site(aggr_site(agg));
	}
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
	if (b->need_sync && !b->defer_to)
		batch_start_grace_period(b);

	list_for_each_entry(site, &b->free_list, list)
		kprobe_requeue_covering_sites(site->addr);
	list_for_each_entry(agg, &b->free_aggregates, dying)
		kprobe_requeue_covering_sites(aggr_site(agg)->addr);
	return ret;
}

/*
 * A batch handed to a deferred probe: instead of waiting for the grace
 * period, record in it the one to poll for, and hand it the sites to
 * free after that; deferred.c frees them, and gives the probe back, once
 * that grace period is over.
 */
static void batch_hand_over(struct kprobe_batch *b)
{
	struct kprobe_deferred *d = b->defer_to;

	list_splice_tail_init(&b->free_list, &d->dying_sites);
	list_splice_tail_init(&b->free_aggregates, &d->dying_aggregates);
	/* After the unhooking, so a grace period that ends covers it. */
	d->rcu_cookie = start_poll_synchronize_rcu();
}

/**
 * kprobe_batch_finish() - end a batch begun by kprobe_batch_begin()
 * @b: the batch
 *
 * Applies the batch's text and ftrace changes and drops the text locks.
 * A batch that took probes out of the table (b->need_sync) then waits
 * for an RCU grace period, after which no CPU runs their handlers, and
 * frees the sites that left: it drops kprobe_mutex while it waits, so
 * its caller must look up again anything it found before. A batch with
 * b->defer_to set waits for nothing: that deferred probe takes the sites
 * that left, and kprobe_mutex is held throughout. kprobe_mutex held on
 * entry and on return.
 *
 * Return: 0, or the error ftrace gave for a site it could not arm (that
 * site is left unarmed).
 */
int kprobe_batch_finish(struct kprobe_batch *b)
{
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	ret = batch_publish(b);
	if (b->defer_to) {
		batch_hand_over(b);
		return ret;
	}
	if (!b->need_sync)
		return ret;
	/* While the grace period runs: a chunk of the retiring sites' text. */
	retire_chunk();
	mutex_unlock(&kprobe_mutex);
	batch_wait_grace_period(b);
	mutex_lock(&kprobe_mutex);
	kprobe_release_dying_sites(&b->free_list, &b->free_aggregates);
	return ret;
}

/* Bring every site in line with the current switches; kprobe_mutex held. */
int kprobe_sync_all_sites(void)
{
	struct kprobe_batch b;
	struct kprobe *site;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&kprobe_mutex);
	kprobe_retire_sites();
	kprobe_batch_begin(&b);
	for (i = 0; i < KPROBE_TABLE_SIZE; i++)
		hlist_for_each_entry(site, &kprobe_table[i], hlist)
			ret = kprobe_site_sync_armed(&b, site) ?: ret;
	return kprobe_batch_finish(&b) ?: ret;
}

#ifdef CONFIG_OPTPROBES
/* ---- retiring: optimized sites whose last probe went ---------------------- */

/*
 * Optimized sites whose last probe was unregistered ("retiring"): their
 * jump is still in the text, and their detour runs no handler, for they
 * have no members. Linked by kprobe_aggregate::dying, under kprobe_mutex.
 *
 * They leave the table at once, as an unregistered site does. The
 * unregistering call writes back a chunk of them (RETIRE_CHUNK sites)
 * while its grace period runs; retire_work writes back the rest, a
 * chunk at a time, then frees them (see retired_sites).
 *
 * A retiring site is out of the index, so the arch's reader of original
 * text cannot see its jump. The rule: no text is decoded while a site
 * retires. Every path that decodes text (registering, the query file,
 * the optimizer, text going away, the global switches) starts with
 * kprobe_retire_sites(), and kprobe_text_hides_jumps() lets the arch
 * check it.
 */
static LIST_HEAD(retiring_sites);
static unsigned int nr_retiring;

/*
 * Retiring sites written back per batch: one text_poke batch (TP_VEC_MAX
 * with 4 KiB pages), three text syncs and a few hundred small writes.
 * retire_work drops kprobe_mutex between chunks.
 */
#define RETIRE_CHUNK	256

/**
 * kprobe_text_hides_jumps() - may text hold a jump the arch cannot see?
 *
 * For the arch's reader of original text (see kprobe_detour_site()):
 * true while a retiring site's jump is in the text, out of the index.
 * No path decodes text then (see retiring_sites); an arch that finds it
 * true has been called against that rule and must not trust, nor keep,
 * what it decodes. kprobe_mutex held.
 *
 * Return: true while any site retires.
 */
bool kprobe_text_hides_jumps(void)
{
	lockdep_assert_held(&kprobe_mutex);
	return nr_retiring;
}

static void retire_work_fn(struct work_struct *work);
static DECLARE_WORK(retire_work, retire_work_fn);

/*
 * The optimizer wrote the site's jump at some time. Never cleared: a
 * task may have taken the jump and been preempted in the detour before
 * it called the arch's handler, which reads the site, and only an
 * RCU-tasks grace period tells when none is left there. So such a site
 * is freed after one (retired_sites), whether it is still
 * optimized when its last probe goes or lost its jump before (disabled,
 * blocked, the sysctl, the enabled switch).
 */
static bool site_jumped(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_JUMPED;
}

/*
 * Retired sites: sites that once had a jump (KPROBE_FLAG_JUMPED), out of
 * the table, their text written back, and retire_work frees them once no
 * task can be in their detour. A task may have been preempted in the
 * detour before it called the arch's handler, which reads the site, so
 * that takes an RCU-tasks grace period, as the optimizer's does. Sites
 * come here from retiring_sites, or from a batch that took out a site
 * whose jump had been taken out before (kprobe_release_dying_sites(),
 * through keep_retired()). Under kprobe_mutex.
 */
static LIST_HEAD(retired_sites);

#if IS_ENABLED(CONFIG_KUNIT)
/* Set by the KUnit suite to keep sites retiring; see kprobes_test_pause_retiring(). */
static bool retire_work_paused;
#else
#define retire_work_paused	false
#endif

/*
 * Have retire_work write back what is retiring and free the retired
 * sites. Unbound: it may write thousands of sites' text, and should not
 * wait for the CPU that queued it, where the caller of unregister goes
 * on.
 */
static void queue_retire_work(void)
{
	if (nr_retiring || !list_empty(&retired_sites))
		queue_work(system_unbound_wq, &retire_work);
}

static bool site_retires_later(struct kprobe *site)
{
	return kprobe_is_aggr(site) && kprobe_optimized(site) && !kprobe_gone(site);
}

/*
 * The last probe of @site went: an optimized site retires, out of the
 * table now, its jump still in the text (see retiring_sites), and
 * retire_work is queued; it runs once the caller drops kprobe_mutex.
 * Return: true when it does; the batch then leaves it alone.
 */
static bool start_retiring(struct kprobe *site)
{
	if (!site_retires_later(site))
		return false;
	/* Its detour needs no lookup: out of the table now. */
	kprobe_site_unhash(site);
	list_add_tail(&to_aggr(site)->dying, &retiring_sites);
	nr_retiring++;
	queue_retire_work();
	return true;
}

/*
 * A site a batch took out, its grace period over: one that ever had a
 * jump joins retired_sites, for retire_work to free, and retire_work is
 * queued. Return: true when it does; the caller frees any other.
 */
static bool keep_retired(struct kprobe *site)
{
	if (!site_jumped(site))
		return false;
	list_add_tail(&to_aggr(site)->dying, &retired_sites);
	queue_retire_work();
	return true;
}

static unsigned long retiring_addr(const struct list_head *dying)
{
	return (unsigned long)aggr_site(list_entry(dying, struct kprobe_aggregate, dying))->addr;
}

static int cmp_retiring_addr(void *priv, const struct list_head *a,
			     const struct list_head *b)
{
	return order_ulong(retiring_addr(a), retiring_addr(b));
}

/*
 * Write back the text of the first @max retiring sites and move them to
 * retired_sites; the caller sees that retire_work runs. kprobe_mutex held.
 * The chunk goes in address order: text_poke_queue() starts a new batch
 * (three text syncs) at every address lower than the one before.
 */
static void retire_some_sites(unsigned int max)
{
	struct kprobe_aggregate *agg;
	struct kprobe_batch b;
	unsigned int nr = 0;
	LIST_HEAD(chunk);

	lockdep_assert_held(&kprobe_mutex);
	if (!nr_retiring)
		return;
	if (nr_retiring <= max) {
		list_splice_init(&retiring_sites, &chunk);
		nr = nr_retiring;
	} else {
		list_for_each_entry(agg, &retiring_sites, dying)
			if (++nr == max)
				break;
		list_cut_position(&chunk, &retiring_sites, &agg->dying);
	}
	nr_retiring -= nr;
	list_sort(NULL, &chunk, cmp_retiring_addr);

	kprobe_batch_begin(&b);
	list_for_each_entry(agg, &chunk, dying)
		kprobe_site_sync_armed(&b, aggr_site(agg));
	kprobe_batch_finish(&b);	/* no probe left the table: no wait */
	list_for_each_entry(agg, &chunk, dying)
		kprobe_requeue_covering_sites(aggr_site(agg)->addr);
	list_splice_tail(&chunk, &retired_sites);
}

/*
 * While a batch's grace period runs: the text of sites this batch (or an
 * earlier one) retired, a chunk of it, so that unregistering a few
 * optimized probes returns with their text written back.
 * retire_work writes the rest meanwhile. kprobe_mutex held.
 */
static void retire_chunk(void)
{
	lockdep_assert_held(&kprobe_mutex);
	if (!retire_work_paused)
		retire_some_sites(RETIRE_CHUNK);
	queue_retire_work();
}

/**
 * kprobe_retire_sites() - write back the text of every retiring site
 *
 * For the paths that decode text, write near a retiring site's jump or
 * need it gone (see retiring_sites), before they begin their batch:
 * registering, the query file, the optimizer, text going away, the
 * global switches. retire_work frees the sites. kprobe_mutex held.
 */
void kprobe_retire_sites(void)
{
	lockdep_assert_held(&kprobe_mutex);
	retire_some_sites(UINT_MAX);
	queue_retire_work();
}

static void retire_work_fn(struct work_struct *work)
{
	struct kprobe_aggregate *agg, *next;
	LIST_HEAD(done);

	mutex_lock(&kprobe_mutex);
	if (retire_work_paused) {
		mutex_unlock(&kprobe_mutex);
		return;
	}
	/* A chunk at a time, letting other callers in between. */
	while (nr_retiring) {
		retire_some_sites(RETIRE_CHUNK);
		mutex_unlock(&kprobe_mutex);
		cond_resched();
		mutex_lock(&kprobe_mutex);
	}
	list_splice_init(&retired_sites, &done);
	mutex_unlock(&kprobe_mutex);
	if (list_empty(&done))
		return;

	synchronize_rcu_tasks();

	mutex_lock(&kprobe_mutex);
	list_for_each_entry_safe(agg, next, &done, dying) {
		list_del_init(&agg->dying);
		kprobe_release_site(aggr_site(agg));
	}
	mutex_unlock(&kprobe_mutex);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kprobes_test_pause_retiring() - keep unregistered optimized sites retiring
 * @pause: true to stop retire_work from writing their text back; false
 *	to let it run again
 *
 * For the KUnit suite, which needs a site whose jump is still in the
 * text when a path that decodes text runs. The paths that must retire
 * sites first (kprobe_retire_sites()) still do.
 */
void kprobes_test_pause_retiring(bool pause)
{
	mutex_lock(&kprobe_mutex);
	retire_work_paused = pause;
	if (!pause)
		queue_retire_work();
	mutex_unlock(&kprobe_mutex);
	if (pause)
		flush_work(&retire_work);
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_pause_retiring);
#endif
#endif /* CONFIG_OPTPROBES */
