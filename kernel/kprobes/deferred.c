// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unregistering that does not wait.
 *
 * unregister_kprobe() returns only after an RCU grace period, so that
 * its caller may free the probe: a CPU may still be running its
 * handlers when it leaves the table. A client that takes probes down
 * one at a time (a perf event closed, a kprobe_events line removed)
 * then waits for one grace period per probe. kprobe_unregister_deferred()
 * takes the probe out as unregister_kprobe() does and returns at once;
 * the probe goes back to its owner through a callback after that grace
 * period, and probes unregistered meanwhile share it.
 *
 * A deferred probe (struct kprobe_deferred) is on deferred_pending from
 * the unregister call to its release, oldest first; it counts as
 * registered to register_kprobe(), which refuses it with -EBUSY, and as
 * unregistered to everything else, which leaves it alone. reap_work
 * takes the pending ones, waits for the newest one's grace period (the
 * older ones' are over by then), frees what the core kept of them (their
 * sites, hit counters, a kretprobe's instances) in the same kprobe_mutex
 * section that ends their pending state, and calls their owners'
 * callbacks with no lock held. A module that goes waits for those that
 * call into it or give back its own probes.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/workqueue.h>
#include "internal.h"

/* Deferred probes not released yet, oldest first; kprobe_mutex. */
static LIST_HEAD(deferred_pending);

/*
 * The same, by probe, for kprobe_deferred_pending(), which every
 * registration asks; kprobe_mutex. Only probes flagged
 * KPROBE_FLAG_DEFERRED are looked up, so the common case, a probe never
 * deferred, costs a flag test.
 */
#define DEFERRED_HASH_BITS	8
static DEFINE_HASHTABLE(deferred_by_probe, DEFERRED_HASH_BITS);

static void reap_work_fn(struct work_struct *work);
static DECLARE_WORK(reap_work, reap_work_fn);

/* Is @p unregistered but not released yet? kprobe_mutex held. */
bool kprobe_deferred_pending(struct kprobe *p)
{
	struct kprobe_deferred *d;

	lockdep_assert_held(&kprobe_mutex);
	if (!(p->flags & KPROBE_FLAG_DEFERRED))
		return false;
	hash_for_each_possible(deferred_by_probe, d, by_probe, (unsigned long)p)
		if (d->p == p)
			return true;
	return false;
}

/*
 * The hit counters of those of @kps that a batch took out of the table,
 * given back once its grace period is over: no CPU counts into them
 * any more, so they may be handed out again at once. A probe waiting
 * for its deferred release keeps its own until then (deferred_let_go()),
 * also when it is handed to unregister or register meanwhile.
 * kprobe_mutex held.
 */
void kprobe_release_counters(struct kprobe **kps, int num)
{
	int i;

	for (i = 0; i < num; i++) {
		if (!kps[i] || !(kps[i]->flags & KPROBE_FLAG_UNHOOKED) ||
		    kprobe_deferred_pending(kps[i]))
			continue;
		kprobe_counter_free(kps[i]->nhit);
		kps[i]->nhit = NULL;
		kps[i]->flags &= ~KPROBE_FLAG_UNHOOKED;
	}
}

static void deferred_add(struct kprobe_deferred *d)
{
	list_add_tail(&d->list, &deferred_pending);
	hash_add(deferred_by_probe, &d->by_probe, (unsigned long)d->p);
	d->p->flags |= KPROBE_FLAG_DEFERRED;
}

/* @d's probe is no longer pending: what the core kept of it is freed. */
static void deferred_let_go(struct kprobe_deferred *d)
{
	hash_del(&d->by_probe);
	d->p->flags &= ~KPROBE_FLAG_DEFERRED;
	kprobe_release_dying_sites(&d->dying_sites, &d->dying_aggregates);
	kprobe_release_counters(&d->p, 1);
	if (d->let_go)
		d->let_go(d);
}

/* A deferred probe for @p, whose interface finishes it with @done. */
struct kprobe_deferred *kprobe_deferred_alloc(struct kprobe *p,
					      void (*done)(struct kprobe_deferred *d))
{
	struct kprobe_deferred *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	INIT_LIST_HEAD(&d->list);
	INIT_HLIST_NODE(&d->by_probe);
	INIT_LIST_HEAD(&d->dying_sites);
	INIT_LIST_HEAD(&d->dying_aggregates);
	d->p = p;
	d->done = done;
	return d;
}

/*
 * Take d->p out of the table and queue @d for its release. Return: 0, or
 * -EINVAL when d->p was not registered (the caller still owns @d).
 */
int kprobe_defer_unregister(struct kprobe_deferred *d)
{
	struct kprobe_batch b;
	bool unhooked;

	mutex_lock(&kprobe_mutex);
	kprobe_batch_begin(&b);
	b.defer_to = d;
	unhooked = kprobe_unhook(&b, d->p);
	/* An ftrace error leaves a site unarmed: as good as gone here. */
	kprobe_batch_finish(&b);
	if (unhooked) {
		deferred_add(d);
		/* Under the mutex: see kprobe_deferred_barrier(). */
		queue_work(system_unbound_wq, &reap_work);
	}
	mutex_unlock(&kprobe_mutex);
	return unhooked ? 0 : -EINVAL;
}

/*
 * Release the probes pending when it starts, after one grace period.
 * Those that arrive while it waits are left for its next run, which
 * their unregister call queued. A work item never runs twice at once,
 * so only the first entries, up to @last, are this run's.
 */
static void reap_work_fn(struct work_struct *work)
{
	struct kprobe_deferred *d, *next, *last;
	unsigned long cookie;
	LIST_HEAD(reaped);

	mutex_lock(&kprobe_mutex);
	if (list_empty(&deferred_pending)) {
		mutex_unlock(&kprobe_mutex);
		return;
	}
	last = list_last_entry(&deferred_pending, struct kprobe_deferred, list);
	cookie = last->rcu_cookie;
	mutex_unlock(&kprobe_mutex);

	/* Cookies grow down the list: the newest covers every older one. */
	cond_synchronize_rcu(cookie);

	mutex_lock(&kprobe_mutex);
	list_cut_position(&reaped, &deferred_pending, &last->list);
	list_for_each_entry(d, &reaped, list)
		deferred_let_go(d);
	mutex_unlock(&kprobe_mutex);

	list_for_each_entry_safe(d, next, &reaped, list) {
		list_del(&d->list);
		d->done(d);
		kfree(d);
	}
}

static void kprobe_deferred_done(struct kprobe_deferred *d)
{
	if (d->kp_release)
		d->kp_release(d->p);
}

/**
 * kprobe_unregister_deferred() - unregister a probe without waiting
 * @p: the probe
 * @release: called once no CPU runs @p's handlers and the core holds no
 *	pointer into @p (so it may free @p); may be NULL
 *
 * Takes @p out of its site as unregister_kprobe() does, so that no
 * handler of it starts after this returns, but does not wait for the
 * handlers that started before: @release is called later, from a
 * workqueue, in process context, with no kprobes lock held, after an RCU
 * grace period that began once @p was out. Probes unregistered while it
 * runs share one grace period. Until then @p must not be touched, and
 * register_kprobe(@p) fails with -EBUSY. When a module whose @release is
 * its own code, or whose probes are its own data, goes, its releases are
 * waited for before its memory is freed; kprobe_deferred_barrier() waits
 * for them at once.
 *
 * Context: process context, may sleep (it takes kprobe_mutex and the text
 * locks, as unregister_kprobe() does), but waits for no grace period.
 *
 * Return: 0, and @release will be called; -EINVAL if @p is not registered
 * (its ->addr is cleared, as unregister_kprobe() does) or already
 * unregistered; -ENOMEM, and nothing was done. @release is not called
 * after an error.
 */
int kprobe_unregister_deferred(struct kprobe *p, void (*release)(struct kprobe *p))
{
	struct kprobe_deferred *d;
	int ret;

	if (!p)
		return -EINVAL;
	d = kprobe_deferred_alloc(p, kprobe_deferred_done);
	if (!d)
		return -ENOMEM;
	d->kp_release = release;
	ret = kprobe_defer_unregister(d);
	if (ret)
		kfree(d);
	return ret;
}
EXPORT_SYMBOL_GPL(kprobe_unregister_deferred);

/**
 * kprobe_deferred_barrier() - wait for every deferred release asked for
 *
 * Returns once the release callback of every probe unregistered by
 * kprobe_unregister_deferred() or kretprobe_unregister_deferred() before
 * this call has returned, and the function entries (ftrace sites) left
 * without an enabled probe before it are out of kprobes' ftrace filter,
 * which they otherwise leave a little later. For module exit and for
 * tests.
 *
 * Context: process context, may sleep; not from a release callback.
 */
void kprobe_deferred_barrier(void)
{
	mutex_lock(&kprobe_mutex);
	kprobe_ftrace_flush_stale();
	mutex_unlock(&kprobe_mutex);
	/*
	 * Each unregister queued reap_work as it added its probe, under the
	 * mutex, and a run takes every probe there when it starts: so the
	 * run that takes the newest one has been queued by now, and one
	 * flush waits it out. Even with nothing pending: a run that has
	 * taken its probes off the list may still be calling their release
	 * callbacks.
	 */
	flush_work(&reap_work);
}
EXPORT_SYMBOL_GPL(kprobe_deferred_barrier);

#ifdef CONFIG_MODULES
/* Does a pending release call into @mod, or give back a probe in it? */
static bool pending_in_module(struct module *mod)
{
	struct kprobe_deferred *d;
	bool found = false;

	mutex_lock(&kprobe_mutex);
	list_for_each_entry(d, &deferred_pending, list) {
		/* kp_release and rp_release share their place. */
		if (within_module((unsigned long)d->kp_release, mod) ||
		    within_module((unsigned long)d->p, mod)) {
			found = true;
			break;
		}
	}
	mutex_unlock(&kprobe_mutex);
	return found;
}

/*
 * A module whose probes wait for their release, into its own code or
 * in its own data, is going: after its exit, before its memory is
 * freed, wait for those releases, should its exit not have called
 * kprobe_deferred_barrier(). Also while the release work runs: a
 * release it is calling is off the list already.
 */
static int deferred_module_callback(struct notifier_block *nb, unsigned long val,
				    void *data)
{
	if (val == MODULE_STATE_GOING && (pending_in_module(data) || work_busy(&reap_work)))
		kprobe_deferred_barrier();
	return NOTIFY_DONE;
}

static struct notifier_block deferred_module_nb = {
	.notifier_call = deferred_module_callback,
};

static int __init kprobe_deferred_init(void)
{
	return register_module_notifier(&deferred_module_nb);
}
early_initcall(kprobe_deferred_init);
#endif
