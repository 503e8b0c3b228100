// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel probes: the arch-agnostic core.
 *
 * A kprobe makes the CPU call a handler when it reaches one kernel
 * instruction. The arch plants a breakpoint there (or, at a function's
 * ftrace site, asks ftrace to call us), finds the probe on a hit with
 * get_kprobe(), runs the handlers and then executes the original
 * instruction out of line.
 *
 * Sites and members
 * -----------------
 * The hash table holds one struct kprobe per probed address: the "site".
 * A lone probe is its own site. When a second probe arrives at the same
 * address, an aggregate kprobe is allocated, takes over the first probe's
 * arch state (its instruction copy) and replaces it in the table; the
 * user probes become "members" on the aggregate's ->list, and the
 * aggregate's handlers call theirs. An aggregate lives until its last
 * member leaves.
 *
 * States of a user probe, and where each transition happens
 * ---------------------------------------------------------
 *
 *   (unregistered) --register_kprobes()--> ENABLED, or DISABLED if asked
 *   ENABLED --disable_kprobe()--> DISABLED --enable_kprobe()--> ENABLED
 *   (any registered state) --unregister_kprobes()--> (unregistered)
 *   (any registered state) --kprobe_unregister_deferred()--> RELEASING
 *     --its grace period, reap_work--> (unregistered), release() called
 *   ENABLED/DISABLED --its text is freed--> GONE (gone.c)
 *
 * A probe's flags say which (KPROBE_FLAG_DISABLED, KPROBE_FLAG_GONE); a
 * RELEASING probe is out of the table and on deferred.c's pending list. A
 * site is *armed* (breakpoint in the text, or its ip in our ftrace
 * filter) exactly when kprobe_site_wants_armed() says so: it is not gone, at
 * least one member is enabled, and kprobes are not globally disarmed.
 * Every path that may change that answer ends in kprobe_site_sync_armed(),
 * which is the one place that arms or disarms (arming.c). Arming is
 * batched: sites are queued and the text is patched and serialized once
 * per batch (see struct kprobe_batch, batch.c), and a batch of removals
 * waits for one RCU grace period, not one per probe. An ftrace site
 * disarmed because its probes are disabled or leaving counts as
 * disarmed at once, but its ip may stay in ftrace's filter a little
 * longer (ftrace_stale in arming.c): the handler finds nothing enabled
 * there.
 *
 * Optimization (CONFIG_OPTPROBES)
 * -------------------------------
 * An armed site may instead be reached by a jump into a detour buffer
 * the arch built for it at registration (such sites are aggregates, so
 * the core owns the memory). Its states, on top of "armed":
 *
 *   armed --queued--> QUEUED --optimizer claims it--> QUEUED + OPT_READY
 *     --grace period, jump written--> OPTIMIZED
 *   any of these --kprobe_site_check_optimizable() turns false--> armed (or
 *     disarmed), jump taken out in the caller's batch
 *   OPTIMIZED --its last probe unregistered--> retiring
 *     --retire_some_sites()--> jump taken out, site freed
 *
 * A retiring site has no members, so its detour runs no handler; it is
 * out of the table, but its jump stays until unregistering (while its
 * grace period runs), retire_work or the next path that must not meet it
 * writes the text back (see retiring_sites in batch.c); it is freed
 * after an RCU-tasks grace period (see retired_sites). So is every site
 * whose jump was ever written, however it lost it before its last probe
 * went (KPROBE_FLAG_JUMPED): a task may still be on its way through the
 * detour to the handler call, which reads the site.
 *
 * kprobe_site_check_optimizable() is kprobe_site_wants_armed() plus: the sysctl is 1,
 * the site has a detour, no post_handler, and no other probe inside the
 * region the jump covers; a site kept back only by such a probe is
 * marked OPT_BLOCKED, and requeued when a probe near it goes
 * (kprobe_requeue_covering_sites()). kprobe_site_sync_armed() calls kprobe_site_sync_optimized(),
 * so the same single place queues, dequeues and unoptimizes; only the
 * optimizer (kprobe_optimizer()) writes jumps. OPT_READY tells the arch
 * that breakpoint hits must continue in the detour's copy of the region,
 * so that after the optimizer's grace period no task is inside it.
 *
 * Locking
 * -------
 * kprobe_mutex serializes every change: the hash table and the hit
 * path's index of sites, the members lists, every probe's flags, the
 * blacklist and the global switch. The hit path takes no lock: it runs
 * with interrupts or preemption disabled, which makes it an RCU reader,
 * searches the index (table.c) and walks the members list with the
 * _rcu list primitives. Writers publish with release
 * stores and the _rcu list primitives and wait for a grace period
 * (kprobe_batch_finish(), batch.c) before they free a site, an
 * aggregate, a hit counter or an instruction slot.
 *
 * Lock order: kprobe_mutex -> cpus_read_lock -> jump_label_lock ->
 * text_mutex. ftrace takes text_mutex itself, so ftrace filters are
 * changed with text_mutex released. No grace period is waited for with
 * kprobe_mutex or text_mutex held: unregistering drops kprobe_mutex
 * while it waits, so that threads closing probes at once share grace
 * periods and nobody else waits behind them; the optimizer and
 * retire_work wait with no lock held.
 *
 * A function that relies on a lock asserts it with lockdep; the arch's
 * hooks check kprobe_mutex with kprobe_assert_mutex_held().
 *
 * Instruction slots and detour buffers that a preempted task may still
 * be inside are freed "dirty" and reused after an RCU-tasks grace period
 * (reap_dirty_slots()), without making unregister wait for it.
 *
 * Files
 * -----
 * This file holds aggregates and the life cycle above (registering,
 * unregistering, enable/disable, the query file's verdict, init). The
 * rest of kernel/kprobes/ each own one concept and its data, reached
 * through internal.h: table.c (the sites by address: the hash table,
 * and the hit path's index behind get_kprobe()), place.c (resolving a
 * probe point and the checks of where a probe may go, with the
 * blacklist and the jump label, static call and bug sites the kernel
 * lists), batch.c (a registration call's batch: the text locks,
 * publishing it, its grace period, and every way a site leaves: freed
 * after it, or retired first when optimized), arming.c (breakpoints,
 * ftrace filters and the global switch), optimizer.c (jumps), slots.c
 * (instruction slots), counters.c (per-CPU hit counters, and a member's
 * hits counted by its site), gone.c (text going away: modules, init
 * memory), kretprobe.c (return instances), deferred.c (unregistering
 * that does not wait) and debugfs.c (the files under
 * /sys/kernel/debug/kprobes/).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

/* Every registration-side change; see "Locking" above. */
DEFINE_MUTEX(kprobe_mutex);

/* Set by init_kprobes(): until then registration is refused. */
static bool kprobes_initialized;

#ifdef CONFIG_LOCKDEP
/**
 * kprobe_assert_mutex_held() - warn unless the caller holds kprobe_mutex
 *
 * For the arch's hooks that rely on the core holding it: kprobe_mutex is
 * the core's own, out of the arch code's sight.
 */
void kprobe_assert_mutex_held(void)
{
	lockdep_assert_held(&kprobe_mutex);
}
#endif

/*
 * current_kprobe and kprobe_ctlblk are the arch's (each arch defines
 * them, as in the tree: the control block is its own type). Exported,
 * with get_kprobe(), so that modules can use kprobe_running().
 */
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/* ---- aggregate sites ---------------------------------------------------- */

/*
 * A member redirected: the site counted this hit for every member, but
 * those after @p did not run. Rare; the common path pays nothing for it.
 */
static noinline void uncount_members_after(struct kprobe *site, struct kprobe *p)
{
	list_for_each_entry_continue_rcu(p, &site->list, list)
		if (p->flags & KPROBE_FLAG_SITE_COUNTED)
			this_cpu_dec(*p->nhit);
}
NOKPROBE_SYMBOL(uncount_members_after);

/*
 * Inlined in both of its callers: a call more on every hit of an
 * aggregate costs about as much as the loop itself for one member.
 */
static __always_inline int run_member_pre_handlers(struct kprobe *site,
						   struct pt_regs *regs)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &site->list, list) {
		if (p->flags & KPROBE_MEMBER_SKIP)
			continue;
		__this_cpu_write(current_kprobe, p);
		if (p->pre_handler(p, regs)) {
			uncount_members_after(site, p);
			return 1;
		}
	}
	return 0;
}

/**
 * kprobe_aggr_run_pre_handlers() - run an aggregate's pre_handlers for one hit
 * @site: the aggregate that was hit; its hit was counted by the caller
 * @regs: the hit's registers
 *
 * Runs every enabled member's pre_handler in order, each as
 * current_kprobe, and stops at one that redirects.
 *
 * Return: 1 when a pre_handler returned non-zero, else 0.
 */
int kprobe_aggr_run_pre_handlers(struct kprobe *site, struct pt_regs *regs)
{
	return run_member_pre_handlers(site, regs);
}
NOKPROBE_SYMBOL(kprobe_aggr_run_pre_handlers);

/* An aggregate's pre_handler on the breakpoint and ftrace paths; not traced. */
notrace int kprobe_aggr_pre_handler(struct kprobe *site, struct pt_regs *regs)
{
	if (!arch_kprobe_counts_hits)
		kprobe_count_hit(site);
	if (run_member_pre_handlers(site, regs))
		return 1;
	__this_cpu_write(current_kprobe, site);
	return 0;
}
NOKPROBE_SYMBOL(kprobe_aggr_pre_handler);

static void kprobe_aggr_post_handler(struct kprobe *site, struct pt_regs *regs,
				     unsigned long flags)
{
	struct kprobe *p;

	list_for_each_entry_rcu(p, &site->list, list) {
		if (kprobe_disabled(p) || !p->post_handler)
			continue;
		__this_cpu_write(current_kprobe, p);
		p->post_handler(p, regs, flags);
	}
	__this_cpu_write(current_kprobe, site);
}
NOKPROBE_SYMBOL(kprobe_aggr_post_handler);

/**
 * kprobes_inc_nmissed_count() - count a hit whose handlers were skipped
 * @p: the site that was hit
 *
 * A hit on an aggregate counts against every member.
 */
void kprobes_inc_nmissed_count(struct kprobe *p)
{
	struct kprobe *member;

	if (!kprobe_is_aggr(p)) {
		p->nmissed++;
		return;
	}
	list_for_each_entry_rcu(member, &p->list, list)
		member->nmissed++;
}
NOKPROBE_SYMBOL(kprobes_inc_nmissed_count);

/* ---- kprobe_busy: make probes hit in a region count as missed ---------- */

/*
 * The current_kprobe of a busy CPU. Nothing runs it; code that looks at
 * a running probe's address (the arches' fault paths) finds one in
 * kprobes' own text.
 */
static struct kprobe kprobe_busy = {
	.addr = (void *)kprobe_busy_begin,
};

/*
 * Busy regions entered while this CPU already ran a hit or a busy region:
 * an interrupt's softirqs free a task (kprobe_flush_task()) while a
 * handler that runs with interrupts on (at an ftrace site, a return
 * handler) is running. Such a region leaves current_kprobe alone, which
 * already makes probes count as missed, and its end must not clear it
 * under the interrupted handler. Regions nest as interrupts do, and a
 * region keeps preemption off: a count per CPU tells them apart.
 */
static DEFINE_PER_CPU(unsigned int, kprobe_busy_nested);

/**
 * kprobe_busy_begin() - treat this CPU as if it were running a handler
 *
 * Probes hit until kprobe_busy_end() skip their handlers and count a
 * miss. rethook and fprobe use this around their own handlers. May be
 * called inside a handler, or inside another such region.
 */
void kprobe_busy_begin(void)
{
	preempt_disable();
	if (__this_cpu_read(current_kprobe)) {
		__this_cpu_inc(kprobe_busy_nested);
		return;
	}
	__this_cpu_write(current_kprobe, &kprobe_busy);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
}

/**
 * kprobe_busy_end() - end a kprobe_busy_begin() region
 *
 * What was running on this CPU when the region began runs again.
 */
void kprobe_busy_end(void)
{
	if (__this_cpu_read(kprobe_busy_nested))
		__this_cpu_dec(kprobe_busy_nested);
	else
		__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
}

/* ---- preparing and releasing a site's arch state ------------------------ */

bool __weak arch_kprobe_boostable(struct kprobe *p, const char **why)
{
	*why = "not on this architecture";
	return false;
}

static int kprobe_prepare_site(struct kprobe *p)
{
	if (kprobe_ftrace(p))
		return arch_prepare_kprobe_ftrace(p);
	return arch_prepare_kprobe(p);
}

/* ---- what registering would do: the query file -------------------------- */

/* @p passed the checks: what else registering it would decide. */
static void query_accepted(struct kprobe_query_verdict *v, struct kprobe *p,
			   struct kprobe *site)
{
	v->entry = p->flags & KPROBE_FLAG_ON_FUNC_ENTRY;
	v->ftrace = kprobe_ftrace(p);
	if (site)
		v->registered = kprobe_is_aggr(site) ? KPROBE_QUERY_SEVERAL : KPROBE_QUERY_ONE;
	/* An ftrace site takes no trap, so there is no second one to skip. */
	if (!v->ftrace)
		v->boostable = arch_kprobe_boostable(p, &v->boost_why);
	v->asking = &v->optimize;
	kprobe_query_optimize(v, p);
}

/**
 * kprobe_query() - what registering a kprobe at a point would do
 * @v: filled with the verdict
 * @addr: the probe point, or NULL with @sym
 * @sym: a symbol ("MODULE:SYMBOL" for a module's), or NULL with @addr
 * @offset: bytes after @sym or @addr
 *
 * The query file's verdict, from the checks registering makes
 * (kprobe_check_point(), kprobe_prepare_site(), the optimizer's), run on
 * a probe that is prepared and released again, marked KPROBE_FLAG_QUERY
 * so that the arch allocates and writes nothing for it: nothing is
 * registered, armed or written.
 *
 * Context: process context, may sleep; takes kprobe_mutex and the text
 * locks.
 */
void kprobe_query(struct kprobe_query_verdict *v, kprobe_opcode_t *addr,
		  const char *sym, unsigned long offset)
{
	struct kprobe *p, *site = NULL;
	struct module *mod = NULL;
	struct kprobe_batch b;

	memset(v, 0, sizeof(*v));
	v->asking = &v->probe;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		v->probe.err = -ENOMEM;
		v->probe.rule = "out of memory";
		return;
	}
	guard(mutex)(&kprobe_mutex);
	/*
	 * The checks decode text, with the text locks held: an empty batch,
	 * begun once no retiring site's jump is left in the text.
	 */
	kprobe_retire_sites();
	kprobe_batch_begin(&b);
	kprobe_record_refusals(v);
	addr = kprobe_target_addr(addr, sym, offset);
	if (IS_ERR(addr)) {
		v->probe.err = kprobe_refuse(PTR_ERR(addr), "no such symbol");
		goto unlock;
	}
	v->asked = addr;
	p->addr = addr;
	p->flags = KPROBE_FLAG_QUERY;
	v->probe.err = kprobe_check_point(p, &site, &mod);
	v->placed = p->addr;
	if (!v->probe.err)
		v->probe.err = kprobe_prepare_site(p);
	if (v->probe.err)
		goto unpin;
	query_accepted(v, p, site);
	kprobe_release_site(p);
unpin:
	if (mod)
		module_put(mod);
	kprobe_forget_probed_function();
unlock:
	kprobe_record_refusals(NULL);
	kprobe_batch_finish(&b);
	kfree(p);
}

/* ---- registering -------------------------------------------------------- */

/*
 * Taken out of the table in this batch: its hit counter is given back
 * once the batch's grace period is over (kprobe_release_counters()),
 * since the hit path may be counting until then.
 */
static bool probe_unhooked(const struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_UNHOOKED;
}

static void remove_probe(struct kprobe_batch *b, struct kprobe *p, struct kprobe *site);

static struct kprobe *alloc_aggregate(void)
{
	struct kprobe_aggregate *agg = kzalloc(sizeof(*agg), GFP_KERNEL);

	if (!agg)
		return NULL;
	aggr_site(agg)->nhit = kprobe_counter_alloc();
	if (!aggr_site(agg)->nhit) {
		kfree(agg);
		return NULL;
	}
	INIT_LIST_HEAD(&agg->dying);
#ifdef CONFIG_OPTPROBES
	INIT_LIST_HEAD(&agg->op.list);
#endif
	return aggr_site(agg);
}

/*
 * Turn a lone site into an aggregate holding it; returns the aggregate.
 * @ag is a fresh one from alloc_aggregate(), or NULL to allocate it here.
 */
static struct kprobe *make_aggregate(struct kprobe *lone, struct kprobe *ag)
{
	if (!ag)
		ag = alloc_aggregate();
	if (!ag)
		return NULL;
	ag->addr = lone->addr;
	ag->opcode = lone->opcode;
	ag->ainsn = lone->ainsn;
	ag->flags = lone->flags | KPROBE_FLAG_AGGREGATE;
	ag->pre_handler = kprobe_aggr_pre_handler;
	ag->post_handler = lone->post_handler ? kprobe_aggr_post_handler : NULL;
	INIT_LIST_HEAD(&ag->list);
	list_add(&lone->list, &ag->list);
	kprobe_sync_member_counting(ag);
	kprobe_table_replace(lone, ag);
	return ag;
}

/*
 * Bring an aggregate in line with its members: it is disabled when all
 * of them are, and has a post_handler only when one of them does, so
 * that the arch may skip the post-instruction stage (and boost) when
 * none needs it.
 */
static void update_aggregate(struct kprobe *site)
{
	bool enabled = false, post = false;
	struct kprobe *m;

	if (!kprobe_is_aggr(site))
		return;
	list_for_each_entry(m, &site->list, list) {
		enabled |= !kprobe_disabled(m);
		post |= !!m->post_handler;
	}
	if (enabled)
		site->flags &= ~KPROBE_FLAG_DISABLED;
	else
		site->flags |= KPROBE_FLAG_DISABLED;
	WRITE_ONCE(site->post_handler, post ? kprobe_aggr_post_handler : NULL);
	kprobe_sync_member_counting(site);
}

/*
 * May a jump to a detour reach @p's site? Not ftrace's site, which makes
 * a call already, nor that of a probe with a post_handler: it needs the
 * trap after the probed instruction, so the site could not be optimized
 * while it stays, and as a lone site its breakpoint hits skip the
 * aggregate's handler loop. The first probe without one to join such a
 * site gives it its detour (aggregate_lone_site()).
 */
static bool site_may_jump(struct kprobe *p)
{
	return IS_ENABLED(CONFIG_OPTPROBES) && !kprobe_ftrace(p) && !p->post_handler;
}

/*
 * Put a new site (@p, prepared) into the table. Where the arch can reach
 * it with a jump, it goes in as an aggregate holding @p, with its detour
 * ready; and always where the arch does not count hits, so that the
 * aggregate's pre_handler does. Otherwise as itself. Returns the site,
 * or an ERR_PTR() when the aggregate it needs cannot be had.
 */
static struct kprobe *insert_new_site(struct kprobe *p)
{
	bool may_jump = site_may_jump(p);
	struct kprobe *ag = NULL;

	if (may_jump || !arch_kprobe_counts_hits) {
		ag = alloc_aggregate();
		if (!ag && !arch_kprobe_counts_hits)
			return ERR_PTR(-ENOMEM);
	}
	if (ag) {
		ag->addr = p->addr;
		if ((!may_jump || !kprobe_site_prepare_detour(ag, p)) && arch_kprobe_counts_hits) {
			kprobe_free_aggregate(ag);
			ag = NULL;
		}
	}
	kprobe_table_add(p);
	return ag ? make_aggregate(p, ag) : p;
}

/*
 * @p joins the lone site @lone, which becomes an aggregate; with a detour
 * when only @lone's post_handler kept it from one (see site_may_jump()).
 * Returns the aggregate, or NULL when it cannot be had.
 */
static struct kprobe *aggregate_lone_site(struct kprobe *lone, struct kprobe *p)
{
	struct kprobe *ag;

	if (p->post_handler || !lone->post_handler || kprobe_ftrace(lone) ||
	    !IS_ENABLED(CONFIG_OPTPROBES))
		return make_aggregate(lone, NULL);
	ag = alloc_aggregate();
	if (!ag)
		return NULL;
	ag->addr = lone->addr;
	/* Built from @lone, prepared: @p is not yet. No detour is no error. */
	kprobe_site_prepare_detour(ag, lone);
	return make_aggregate(lone, ag);
}

/*
 * A gone site is still in the table (its probes are still registered)
 * but its text was freed, and now new text at the same address is being
 * probed. Keep the old probes as gone members and give the site a fresh
 * copy of the new instruction.
 */
static struct kprobe *revive_gone_site(struct kprobe *site, struct kprobe *p)
{
	int ret;

	if (!kprobe_is_aggr(site)) {
		site = make_aggregate(site, NULL);
		if (!site)
			return ERR_PTR(-ENOMEM);
	}
	if (!kprobe_ftrace(site))
		arch_remove_kprobe(site);
	kprobe_site_remove_detour(site);
	/*
	 * Still GONE while the arch reads the new text: its saved bytes are
	 * the old text's, and must not be taken for the new one's.
	 */
	site->flags &= ~(KPROBE_FLAG_FTRACE | KPROBE_SITE_ARMING_FLAGS);
	site->flags |= p->flags & KPROBE_FLAG_FTRACE;
	ret = kprobe_prepare_site(site);
	if (ret)
		return ERR_PTR(ret);
	site->flags &= ~KPROBE_FLAG_GONE;
	/*
	 * Not being able to optimize the new text is no error. The detour
	 * is built from the site, which holds the new instruction; @p is
	 * not prepared (arm copies the opcode and sets how to run it).
	 */
	kprobe_site_prepare_detour(site, site);
	return site;
}

/*
 * Find the address @p asks for and reset its core-owned fields. A
 * lookup by name takes no lock, so this runs inside the batch, probe by
 * probe: a failed batch leaves the probes after the one that failed as
 * the caller wrote them.
 */
static int resolve_new_probe(struct kprobe *p)
{
	struct kprobe *site;
	kprobe_opcode_t *addr;

	if (p->addr && kprobe_find_registered(p, &site))
		return -EINVAL;
	/* Unregistered, but the core still holds it until its release. */
	if (kprobe_deferred_pending(p))
		return -EBUSY;
	addr = kprobe_target_addr(p->addr, p->symbol_name, p->offset);
	if (IS_ERR(addr))
		return PTR_ERR(addr);

	p->addr = addr;
	p->flags &= KPROBE_FLAG_DISABLED;
	p->nmissed = 0;
	p->nhit = NULL;
	INIT_LIST_HEAD(&p->list);
	return 0;
}

/* Add a resolved probe to the table; kprobe_mutex and the text locks held. */
static int add_probe(struct kprobe_batch *b, struct kprobe *p)
{
	struct module *mod = NULL;
	struct kprobe *site;
	int ret;

	lockdep_assert_held(&kprobe_mutex);
	lockdep_assert_held(&text_mutex);
	ret = kprobe_check_point(p, &site, &mod);
	if (ret)
		goto unpin;	/* p->nhit may be a registered probe's: keep it */

	p->nhit = kprobe_counter_alloc();
	if (!p->nhit) {
		ret = -ENOMEM;
		goto out;
	}
	if (!p->pre_handler)
		p->flags |= KPROBE_FLAG_NO_PRE;

	if (site && kprobe_gone(site)) {
		site = revive_gone_site(site, p);
		if (IS_ERR(site)) {
			ret = PTR_ERR(site);
			goto out;
		}
	}

	if (site) {
		if (kprobe_ftrace(site) != kprobe_ftrace(p)) {
			ret = -EINVAL;
			goto out;
		}
		if (!kprobe_is_aggr(site)) {
			site = aggregate_lone_site(site, p);
			if (!site) {
				ret = -ENOMEM;
				goto out;
			}
		}
		p->opcode = site->opcode;
		list_add_tail_rcu(&p->list, &site->list);
		update_aggregate(site);
	} else {
		ret = kprobe_table_reserve();
		if (!ret)
			ret = kprobe_prepare_site(p);
		if (ret)
			goto out;
		site = insert_new_site(p);
		if (IS_ERR(site)) {
			ret = PTR_ERR(site);
			kprobe_release_site(p);	/* prepared, never in the table */
			goto out;
		}
		kprobe_sync_covering_sites(b, p->addr);
	}

	ret = kprobe_site_sync_armed(b, site);
	if (ret)
		remove_probe(b, p, site);
out:
	if (ret && !probe_unhooked(p)) {
		/* Never published: no CPU can be counting into it. */
		kprobe_counter_free(p->nhit);
		p->nhit = NULL;
	}
unpin:
	/* Its function is remembered only while its text's end will be heard of. */
	if (ret || !kprobe_hears_text_gone((unsigned long)p->addr))
		kprobe_forget_probed_function();
	if (mod)
		module_put(mod);
	return ret;
}

/*
 * Take @p out of its site. A site left without members is disarmed now
 * and leaves the table when the batch is published (batch.c), once the
 * disarming reached every CPU, or, if it is optimized, retires
 * (batch.c too). Either way the batch waits for a grace period before
 * it returns, since a CPU may still be running @p's handlers.
 */
static void remove_probe(struct kprobe_batch *b, struct kprobe *p, struct kprobe *site)
{
	b->need_sync = true;
	p->flags |= KPROBE_FLAG_UNHOOKED;
	if (site != p) {
		/* Its count is dropped with it: no need to fold the site's in. */
		p->flags &= ~KPROBE_FLAG_SITE_COUNTED;
		list_del_rcu(&p->list);
		if (!list_empty(&site->list)) {
			update_aggregate(site);
			kprobe_site_sync_armed(b, site);
			return;
		}
	}
	site->flags |= KPROBE_FLAG_DYING;
	kprobe_batch_remove_site(b, site);
}

static void unregister_locked(struct kprobe **kps, int num);

/**
 * register_kprobes() - register several probes at once
 * @kps: the probes
 * @num: how many
 *
 * All are armed by one batched text patch. On failure none stays
 * registered: the ones before the failing one are unregistered again,
 * the ones after it are left as the caller wrote them.
 *
 * Return: 0; -EINVAL for a bad argument, an address that may not be
 * probed or a probe already registered (or listed twice); -EILSEQ for an
 * address that is not an instruction boundary; -ENOENT for an unknown
 * symbol, an address in no symbol or a module going away; -EOPNOTSUPP
 * for an instruction the arch cannot execute out of line; -EAGAIN before
 * kprobes are initialized; -EBUSY for a probe unregistered by
 * kprobe_unregister_deferred() and not released yet; -EBUSY or -ENODEV
 * when ftrace cannot take a probe on its site (another ftrace user that
 * may change the IP, such as a livepatch, holds the function; ftrace is
 * dead); -ENOMEM.
 */
int register_kprobes(struct kprobe **kps, int num)
{
	struct kprobe_batch b;
	int i, ret = 0, err;

	if (num <= 0 || !kps)
		return -EINVAL;
	if (!kprobes_initialized)
		return -EAGAIN;

	mutex_lock(&kprobe_mutex);
	kprobe_retire_sites();
	kprobe_batch_begin(&b);
	for (i = 0; i < num; i++) {
		ret = kps[i] ? resolve_new_probe(kps[i]) : -EINVAL;
		if (!ret)
			ret = add_probe(&b, kps[i]);
		if (ret)
			break;
	}
	err = kprobe_batch_finish(&b);
	if (ret)
		kprobe_release_counters(&kps[i], 1);
	/* Roll back the ones this call added: kps[0] .. kps[i - 1]. */
	if (ret || err)
		unregister_locked(kps, ret ? i : num);
	mutex_unlock(&kprobe_mutex);
	return ret ?: err;
}
EXPORT_SYMBOL_GPL(register_kprobes);

/**
 * register_kprobe() - register one probe
 * @p: the probe; exactly one of ->addr and ->symbol_name must be set
 *
 * Return: as for register_kprobes().
 */
int register_kprobe(struct kprobe *p)
{
	return register_kprobes(&p, 1);
}
EXPORT_SYMBOL_GPL(register_kprobe);

/**
 * kprobe_unhook() - take a probe out in a batch, if it is registered
 * @b: the batch
 * @p: the probe
 *
 * A probe not registered, nor taken out earlier in this batch (listed
 * twice) nor waiting for its release (deferred.c), gets ->addr cleared,
 * as the tree does, to tell the caller; a stale flag must not make us
 * give back what its ->nhit points at. kprobe_mutex and the text locks
 * held.
 *
 * Return: true when @p was registered and is taken out now.
 */
bool kprobe_unhook(struct kprobe_batch *b, struct kprobe *p)
{
	struct kprobe *site;

	lockdep_assert_held(&kprobe_mutex);
	if (p->addr && kprobe_find_registered(p, &site)) {
		if (probe_unhooked(p))
			return false;
		remove_probe(b, p, site);
		return true;
	}
	if (!probe_unhooked(p) || !kprobe_counter_in_use(p->nhit)) {
		p->flags &= ~KPROBE_FLAG_UNHOOKED;
		p->addr = NULL;
	}
	return false;
}

/*
 * Unregister those of @kps that are registered; kprobe_mutex held, and
 * dropped while the grace period runs (see kprobe_batch_finish()).
 */
static void unregister_locked(struct kprobe **kps, int num)
{
	struct kprobe_batch b;
	int i;

	lockdep_assert_held(&kprobe_mutex);
	kprobe_batch_begin(&b);
	for (i = 0; i < num; i++)
		if (kps[i])
			kprobe_unhook(&b, kps[i]);
	kprobe_batch_finish(&b);
	kprobe_release_counters(kps, num);
}

/**
 * unregister_kprobes() - unregister several probes at once
 * @kps: the probes; for one that is not registered, ->addr is set to
 *	NULL, and the others are unregistered all the same
 * @num: how many
 *
 * Waits for one RCU grace period, whatever @num, so that no CPU is still
 * running a handler of these probes when it returns. The wait holds no
 * lock: other threads register, enable, disable and unregister
 * meanwhile, and unregistering threads share grace periods.
 *
 * Context: process context, may sleep.
 */
void unregister_kprobes(struct kprobe **kps, int num)
{
	if (num <= 0 || !kps)
		return;
	mutex_lock(&kprobe_mutex);
	unregister_locked(kps, num);
	mutex_unlock(&kprobe_mutex);
}
EXPORT_SYMBOL_GPL(unregister_kprobes);

/**
 * unregister_kprobe() - unregister one probe
 * @p: the probe
 *
 * Context: as unregister_kprobes().
 */
void unregister_kprobe(struct kprobe *p)
{
	unregister_kprobes(&p, 1);
}
EXPORT_SYMBOL_GPL(unregister_kprobe);

/* Enable or disable one registered probe. */
static int set_probe_disabled(struct kprobe *p, bool disable)
{
	struct kprobe_batch b;
	struct kprobe *site;
	int ret;

	mutex_lock(&kprobe_mutex);
	if (!p || !p->addr || !kprobe_find_registered(p, &site)) {
		mutex_unlock(&kprobe_mutex);
		return -EINVAL;
	}
	if (kprobe_gone(p)) {
		mutex_unlock(&kprobe_mutex);
		return disable ? 0 : -EINVAL;
	}
	kprobe_batch_begin(&b);
	if (disable)
		p->flags |= KPROBE_FLAG_DISABLED;
	else
		p->flags &= ~KPROBE_FLAG_DISABLED;
	update_aggregate(site);
	ret = kprobe_site_sync_armed(&b, site);
	ret = kprobe_batch_finish(&b) ?: ret;
	if (ret && !disable) {
		p->flags |= KPROBE_FLAG_DISABLED;
		update_aggregate(site);
	}
	mutex_unlock(&kprobe_mutex);
	return ret;
}

/**
 * disable_kprobe() - stop a probe's handlers from running, keep it registered
 * @kp: a registered probe
 *
 * Return: 0, or -EINVAL when @kp is not registered.
 */
int disable_kprobe(struct kprobe *kp)
{
	return set_probe_disabled(kp, true);
}
EXPORT_SYMBOL_GPL(disable_kprobe);

/**
 * enable_kprobe() - re-enable a probe that disable_kprobe() stopped
 * @kp: a registered probe
 *
 * Return: 0, or -EINVAL when @kp is not registered or its text is gone.
 */
int enable_kprobe(struct kprobe *kp)
{
	return set_probe_disabled(kp, false);
}
EXPORT_SYMBOL_GPL(enable_kprobe);

/**
 * dump_kprobe() - print a probe for a bug report
 * @kp: the probe
 */
void dump_kprobe(struct kprobe *kp)
{
	pr_err("Dump kprobe:\n.symbol_name = %s, .offset = %x, .addr = %pS\n",
	       kp->symbol_name, kp->offset, kp->addr);
}
NOKPROBE_SYMBOL(dump_kprobe);

/* ---- init ----------------------------------------------------------------- */

int __init __weak arch_init_kprobes(void)
{
	return 0;
}

/*
 * Arches whose traps reach kprobes through the die chain (s390, mips,
 * sh, sparc, arc) define this; the others call their handlers from the
 * trap code, and the default lets every event pass.
 */
int __weak kprobe_exceptions_notify(struct notifier_block *self,
				    unsigned long val, void *data)
{
	return NOTIFY_DONE;
}
NOKPROBE_SYMBOL(kprobe_exceptions_notify);

/* First on the die chain: a trap in kernel text may be one of ours. */
static struct notifier_block kprobe_die_nb = {
	.priority = INT_MAX,
	.notifier_call = kprobe_exceptions_notify,
};

/*
 * Registration opens here. The other files' early initcalls (the
 * blacklist, the instruction slots, the module notifiers) ran before
 * this one: core.o comes after them in the Makefile.
 */
static int __init init_kprobes(void)
{
	int ret;

	/* arch_init_kprobes() may register probes (a trampoline's). */
	kprobes_initialized = true;
	ret = arch_init_kprobes();
	if (!ret)
		ret = register_die_notifier(&kprobe_die_nb);
	kprobes_initialized = !ret;
	return ret;
}
early_initcall(init_kprobes);
