// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The optimizer: which armed sites get a jump to a detour instead of a
 * breakpoint, the delayed work that writes the jumps in batches, and the
 * retiring of optimized sites whose last probe went: their jumps written
 * back, and the sites freed after an RCU-tasks grace period.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

/* Hits continue in the detour's copy: the optimizer is about to jump. */
static bool site_opt_ready(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_OPT_READY;
}

/* On the optimizer's queue (optimizing_list, or the list it claimed). */
static bool site_opt_queued(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_OPT_QUEUED;
}

/*
 * Armed and optimizable but for a probe inside its region.
 * kprobe_requeue_covering_sites() looks for such sites when a probe
 * goes, and only while there are any, so that removing thousands of
 * probes costs no region lookups when none waits.
 */
static bool site_opt_blocked(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_OPT_BLOCKED;
}

/*
 * The optimizer wrote the site's jump at some time. Never cleared: a
 * task may have taken the jump and been preempted in the detour before
 * it called the arch's handler, which reads the site, and only an
 * RCU-tasks grace period tells when none is left there. So such a site
 * is freed after one (retired_sites in optimizer.c), whether it is still
 * optimized when its last probe goes or lost its jump before (disabled,
 * blocked, the sysctl, the enabled switch).
 */
static bool site_jumped(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_JUMPED;
}

/* How many sites are site_opt_blocked(). Under kprobe_mutex. */
static unsigned int nr_blocked_sites;

/* debug.kprobes-optimization. Under kprobe_mutex. */
static int kprobes_optimization = 1;

/* Sites waiting for the optimizer, by optimized_kprobe::list. Under kprobe_mutex. */
static LIST_HEAD(optimizing_list);

static void kprobe_optimizer(struct work_struct *work);
static DECLARE_DELAYED_WORK(optimizer_work, kprobe_optimizer);

/* Registrations arriving together share one optimizer run. */
#define OPTIMIZE_DELAY	5

static struct optimized_kprobe *to_op(struct kprobe *site)
{
	return &to_aggr(site)->op;
}

/* Only aggregates can be optimized: the core allocated them with room. */
static bool site_has_detour(struct kprobe *site)
{
	return kprobe_is_aggr(site) && to_op(site)->optinsn.insn;
}

/**
 * kprobe_detour_site() - the site @p as the arch's optimizer built it
 * @p: what get_kprobe() returned, or NULL; kprobe_mutex held
 *
 * For the arch's reader of original text: a site with a detour buffer
 * is the only kind whose jump can be in the text, and its buffer holds
 * the bytes the jump replaces. The arch must use them whether or not
 * the site is optimized now: a batch that takes the jump out writes the
 * text only when it ends, and the probes registered in it before then
 * read the text with the jump still there.
 *
 * Return: @p's optimized_kprobe, or NULL when @p has no detour or its
 * text went away.
 */
struct optimized_kprobe *kprobe_detour_site(struct kprobe *p)
{
	lockdep_assert_held(&kprobe_mutex);
	return p && !kprobe_gone(p) && site_has_detour(p) ? to_op(p) : NULL;
}

/* Instructions after a site that a jump there may cover, in opcode units. */
#define OPTIMIZED_SPAN	(MAX_OPTIMIZED_LENGTH / sizeof(kprobe_opcode_t))

/* The first probe inside the region @op's jump would cover, or NULL. */
static struct kprobe *kprobe_region_probe(struct optimized_kprobe *op)
{
	struct kprobe *p;
	size_t i;

	for (i = 1; i < OPTIMIZED_SPAN; i++) {
		if (!arch_within_optimized_kprobe(op, op->kp.addr + i))
			continue;
		p = get_kprobe(op->kp.addr + i);
		if (p)
			return p;
	}
	return NULL;
}

static bool region_has_probe(struct kprobe *site)
{
	return kprobe_region_probe(to_op(site));
}

/**
 * opt_pre_handler() - run the handlers of an optimized site's hit
 * @p: the site whose jump was taken
 * @regs: registers as the arch's detour saved them
 *
 * For the arches with the tree's optprobe interface, whose detour calls
 * it with @p as current_kprobe.
 */
void opt_pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	if (!arch_kprobe_counts_hits)
		kprobe_count_hit(p);
	kprobe_aggr_run_pre_handlers(p, regs);
	__this_cpu_write(current_kprobe, p);
}
NOKPROBE_SYMBOL(opt_pre_handler);

static void site_set_blocked(struct kprobe *site, bool blocked)
{
	if (site_opt_blocked(site) == blocked)
		return;
	WRITE_ONCE(site->flags, site->flags ^ KPROBE_FLAG_OPT_BLOCKED);
	if (blocked)
		nr_blocked_sites++;
	else
		nr_blocked_sites--;
}

/*
 * May the site, @armed or about to be, be reached by a jump instead of
 * a trap? A post_handler needs the trap after the probed instruction,
 * and a probe inside the region needs its own breakpoint; when that is
 * the only reason, the site is marked OPT_BLOCKED.
 */
static bool kprobe_site_check_optimizable(struct kprobe *site, bool armed)
{
	bool may = armed && kprobes_optimization && kprobe_site_wants_armed(site) &&
		   site_has_detour(site) && !site->post_handler;
	bool blocked = may && region_has_probe(site);

	site_set_blocked(site, blocked);
	return may && !blocked;
}

/*
 * Build @op's detour buffer, if the arch can reach @p's site by a jump:
 * the decision for registering and for the query file.
 */
static int kprobe_prepare_detour(struct optimized_kprobe *op, struct kprobe *p)
{
	if (kprobe_ftrace(p))
		return kprobe_refuse(-EINVAL, "ftrace's site: it makes a call already");
	return arch_prepare_optimized_kprobe(op, p);
}

/* Give an aggregate site a detour buffer, if the arch can reach it by a jump. */
bool kprobe_site_prepare_detour(struct kprobe *site, struct kprobe *p)
{
	return !kprobe_prepare_detour(to_op(site), p);
}

void kprobe_site_remove_detour(struct kprobe *site)
{
	site_set_blocked(site, false);
	arch_remove_optimized_kprobe(to_op(site));
}

/**
 * kprobe_query_optimize() - would the optimizer give a query's probe a jump?
 * @v: the verdict kprobe_query() is filling, asking about @v->optimize
 * @p: the query's probe, prepared as a site would be
 *
 * The decision registering makes (kprobe_prepare_detour()), on an
 * optimized_kprobe marked KPROBE_FLAG_QUERY, so that the arch builds no
 * detour, and released again; and the probe inside the region, which
 * would keep the site a breakpoint for now.
 *
 * Context: kprobe_mutex and the text locks held, as kprobe_query() has
 * them; may sleep.
 */
void kprobe_query_optimize(struct kprobe_query_verdict *v, struct kprobe *p)
{
	struct optimized_kprobe *op;
	struct kprobe *inside;

	lockdep_assert_held(&kprobe_mutex);
	if (!kprobes_optimization) {
		v->optimizer = KPROBE_QUERY_OPT_SYSCTL_OFF;
		return;
	}
	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op) {
		v->optimize.err = kprobe_refuse(-ENOMEM, "out of memory");
		return;
	}
	op->kp.addr = p->addr;
	op->kp.flags = KPROBE_FLAG_QUERY;
	INIT_LIST_HEAD(&op->list);
	v->optimize.err = kprobe_prepare_detour(op, p);
	if (!v->optimize.err) {
		inside = kprobe_region_probe(op);
		if (inside)
			v->optimize_blocker = inside->addr;
		arch_remove_optimized_kprobe(op);
	}
	kfree(op);
}

/*
 * Is the site optimized, or queued to be with nothing left to decide?
 * This is what [OPTIMIZED] in the list means, as in the tree: a user who
 * enables a probe and reads the list sees what it is going to be, not
 * that the jump is still a few jiffies and an RCU-tasks grace period
 * away (wait_for_kprobe_optimizer() waits for that). Under kprobe_mutex.
 */
bool kprobe_site_listed_optimized(struct kprobe *site)
{
	lockdep_assert_held(&kprobe_mutex);
	return kprobe_optimized(site) || site_opt_queued(site);
}

static void optimizer_queue(struct kprobe *site)
{
	if (kprobe_optimized(site) || site_opt_queued(site))
		return;
	site->flags |= KPROBE_FLAG_OPT_QUEUED;
	list_add_tail(&to_op(site)->list, &optimizing_list);
	schedule_delayed_work(&optimizer_work, OPTIMIZE_DELAY);
}

/*
 * Bring the site's optimization in line with kprobe_site_check_optimizable(),
 * given whether the site is to stay armed: queue it for the optimizer,
 * or take it off the queue and take its jump out. The jump is replaced
 * by the int3 when the site stays armed, by the original bytes when not
 * (the site is then disarmed here).
 */
void kprobe_site_sync_optimized(struct kprobe_batch *b, struct kprobe *site,
				bool armed)
{
	if (!kprobe_is_aggr(site))
		return;
	if (kprobe_site_check_optimizable(site, armed)) {
		optimizer_queue(site);
		return;
	}
	if (site_opt_queued(site))
		list_del_init(&to_op(site)->list);
	WRITE_ONCE(site->flags, site->flags &
		   ~(KPROBE_FLAG_OPT_QUEUED | KPROBE_FLAG_OPT_READY));
	if (!kprobe_optimized(site))
		return;
	site->flags &= ~KPROBE_FLAG_OPTIMIZED;
	if (kprobe_gone(site))
		return;		/* the jump went with the text */
	arch_kprobe_queue_unoptimize(to_op(site), armed);
	b->poked = true;
	if (!armed)
		site->flags &= ~KPROBE_FLAG_ARMED;
}

/*
 * A new probe at @addr: sites whose region covers it lose their jump,
 * written at once so that the new breakpoint does not land in a jump.
 */
void kprobe_sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN; k++) {
		site = get_kprobe(addr - k);
		if (!site || !site_has_detour(site) ||
		    !arch_within_optimized_kprobe(to_op(site), addr))
			continue;
		kprobe_site_sync_optimized(b, site, kprobe_site_wants_armed(site));
		kprobe_batch_apply_text(b);
	}
}

/* The probe at @addr is gone from the table: covering sites may optimize. */
void kprobe_requeue_covering_sites(kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN && nr_blocked_sites; k++) {
		site = get_kprobe(addr - k);
		if (site && kprobe_is_aggr(site) &&
		    site_opt_blocked(site) &&
		    kprobe_site_check_optimizable(site, kprobe_site_armed(site)))
			optimizer_queue(site);
	}
}

/* ---- the optimizer: writing the jumps, and its sysctl --------------------- */

static unsigned long claimed_addr(const struct list_head *node)
{
	return (unsigned long)list_entry(node, struct optimized_kprobe, list)->kp.addr;
}

/* Jumps are queued in address order, which text_poke_queue() batches best. */
static int cmp_claimed_addr(void *priv, const struct list_head *a,
			    const struct list_head *b)
{
	return order_ulong(claimed_addr(a), claimed_addr(b));
}

/*
 * Optimize the queued sites. They are marked OPT_READY first, so that
 * breakpoint hits no longer return into the region after its first
 * instruction; after a grace period no task is inside a region (RCU
 * tasks: a preempted task may have been in one), and all the jumps are
 * written in one batch. Sites whose state changed meanwhile were taken
 * off the list by kprobe_site_sync_optimized(); the rest are checked again.
 */
static void kprobe_optimizer(struct work_struct *work)
{
	struct optimized_kprobe *op, *next;
	struct kprobe_batch b;
	LIST_HEAD(claimed);
	bool empty;

	mutex_lock(&kprobe_mutex);
	kprobe_retire_sites();
	list_splice_init(&optimizing_list, &claimed);
	list_for_each_entry_safe(op, next, &claimed, list) {
		if (kprobe_site_check_optimizable(&op->kp, kprobe_site_armed(&op->kp))) {
			WRITE_ONCE(op->kp.flags, op->kp.flags | KPROBE_FLAG_OPT_READY);
			continue;
		}
		list_del_init(&op->list);
		op->kp.flags &= ~KPROBE_FLAG_OPT_QUEUED;
	}
	empty = list_empty(&claimed);
	mutex_unlock(&kprobe_mutex);
	if (empty)
		return;

	synchronize_rcu_tasks();

	mutex_lock(&kprobe_mutex);
	/* Sites that retired meanwhile may be inside a claimed one's region. */
	kprobe_batch_begin_retired(&b);
	list_sort(NULL, &claimed, cmp_claimed_addr);
	list_for_each_entry_safe(op, next, &claimed, list) {
		list_del_init(&op->list);
		op->kp.flags &= ~KPROBE_FLAG_OPT_QUEUED;
		if (kprobe_site_check_optimizable(&op->kp, kprobe_site_armed(&op->kp)) &&
		    site_opt_ready(&op->kp)) {
			arch_kprobe_queue_optimize(op);
			op->kp.flags |= KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_JUMPED;
			b.poked = true;
		} else {
			kprobe_site_sync_armed(&b, &op->kp);
		}
	}
	kprobe_batch_finish(&b);
	mutex_unlock(&kprobe_mutex);
}

/**
 * wait_for_kprobe_optimizer() - wait until every queued site is optimized
 *
 * Sites that may be optimized are queued at registration and optimized
 * by a worker a little later, and the jumps of unregistered ones are
 * taken out after unregistering returns; tests and tracers that want to
 * see the result call this first.
 */
void wait_for_kprobe_optimizer(void)
{
	mutex_lock(&kprobe_mutex);
	kprobe_retire_sites();
	while (!list_empty(&optimizing_list)) {
		mutex_unlock(&kprobe_mutex);
		flush_delayed_work(&optimizer_work);
		mutex_lock(&kprobe_mutex);
	}
	mutex_unlock(&kprobe_mutex);
	/* A run that claimed its list before we looked. */
	flush_delayed_work(&optimizer_work);
}
EXPORT_SYMBOL_GPL(wait_for_kprobe_optimizer);

/*
 * debug.kprobes-optimization: 1 (the default) lets sites be optimized,
 * 0 takes every jump out (in one batch) and keeps new sites on int3.
 * Only 0 and 1 are accepted.
 */
static int proc_kprobes_optimization(const struct ctl_table *table, int write,
				     void *buffer, size_t *length, loff_t *ppos)
{
	int ret;

	mutex_lock(&kprobe_mutex);
	ret = proc_dointvec_minmax(table, write, buffer, length, ppos);
	if (!ret && write)
		ret = kprobe_sync_all_sites();
	mutex_unlock(&kprobe_mutex);
	return ret;
}

static struct ctl_table kprobe_sysctls[] = {
	{
		.procname	= "kprobes-optimization",
		.data		= &kprobes_optimization,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_kprobes_optimization,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static int __init kprobes_sysctl_init(void)
{
	return register_sysctl("debug", kprobe_sysctls) ? 0 : -ENOMEM;
}
late_initcall(kprobes_sysctl_init);

/* ---- retiring sites: optimized sites whose last probe went -------------- */

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
 * kprobe_batch_begin_retired() or kprobe_retire_sites(), and
 * kprobe_text_hides_jumps() lets the arch check it.
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
 * Retired sites: sites that once had a jump (KPROBE_FLAG_JUMPED), out of
 * the table, their text written back, and retire_work frees them once no
 * task can be in their detour. A task may have been preempted in the
 * detour before it called the arch's handler, which reads the site, so
 * that takes an RCU-tasks grace period, as the optimizer's does. Sites
 * come here from retiring_sites, or from a batch that took out a site
 * whose jump had been taken out before (kprobe_release_dying_sites() in
 * batch.c, through kprobe_site_keep_retired()). Under kprobe_mutex.
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
 * The last probe of @site went (remove_probe()): an optimized site
 * retires, out of the table now, its jump still in the text (see
 * retiring_sites), and retire_work is queued; it runs once the caller
 * drops kprobe_mutex. Return: true when it does; the caller's batch
 * then leaves it alone.
 */
bool kprobe_site_start_retiring(struct kprobe *site)
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
bool kprobe_site_keep_retired(struct kprobe *site)
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
void kprobe_retire_chunk(void)
{
	lockdep_assert_held(&kprobe_mutex);
	if (!retire_work_paused)
		retire_some_sites(RETIRE_CHUNK);
	queue_retire_work();
}

/**
 * kprobe_retire_sites() - write back the text of every retiring site
 *
 * For the paths that decode text, or write near a retiring site's jump
 * (see retiring_sites); retire_work frees the sites. kprobe_mutex held.
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
	kprobe_counter_trim();
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
