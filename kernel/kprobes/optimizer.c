// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The optimizer: which armed sites get a jump to a detour instead of a
 * breakpoint, and the delayed work that writes the jumps in batches. An
 * optimized site whose last probe went retires through batch.c, which
 * frees every site that leaves the table.
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

/* An aggregate site's: the core allocates aggregates with room for one. */
static struct optimized_kprobe *to_op(struct kprobe *site)
{
	return container_of(site, struct optimized_kprobe, kp);
}

/* Has the arch built the site a detour? Only an aggregate can have one. */
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

#ifndef KPROBE_INSN_ALIGN
#define KPROBE_INSN_ALIGN	sizeof(kprobe_opcode_t)
#endif

/* Places an instruction may start at in a jump's region, after the site's own. */
#define OPTIMIZED_SPAN	(MAX_OPTIMIZED_LENGTH / KPROBE_INSN_ALIGN)

/* The @k-th place an instruction may start at from @addr on (0: @addr). */
static kprobe_opcode_t *region_place(kprobe_opcode_t *addr, long k)
{
	return (kprobe_opcode_t *)((unsigned long)addr + k * KPROBE_INSN_ALIGN);
}

/* The first probe inside the region @op's jump would cover, or NULL. */
static struct kprobe *kprobe_region_probe(struct optimized_kprobe *op)
{
	struct kprobe *p;
	size_t i;

	for (i = 1; i < OPTIMIZED_SPAN; i++) {
		if (!arch_within_optimized_kprobe(op, region_place(op->kp.addr, i)))
			continue;
		p = get_kprobe(region_place(op->kp.addr, i));
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
 * written at once so that the new breakpoint does not land in a jump,
 * nor in the queued write that takes one out. A site whose jump was
 * never written (KPROBE_FLAG_JUMPED) has none in the text: the batch's
 * writes stay queued.
 */
void kprobe_sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN; k++) {
		site = get_kprobe(region_place(addr, -k));
		if (!site || !site_has_detour(site) ||
		    !arch_within_optimized_kprobe(to_op(site), addr))
			continue;
		kprobe_site_sync_optimized(b, site, kprobe_site_wants_armed(site));
		if (site->flags & KPROBE_FLAG_JUMPED)
			kprobe_batch_apply_text(b);
	}
}

/* The probe at @addr is gone from the table: covering sites may optimize. */
void kprobe_requeue_covering_sites(kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN && nr_blocked_sites; k++) {
		site = get_kprobe(region_place(addr, -k));
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
		if (kprobe_site_check_optimizable(&op->kp, kprobe_site_armed(&op->kp)) &&
		    arch_kprobe_ready_detour(op)) {
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
	kprobe_retire_sites();
	kprobe_batch_begin(&b);
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
