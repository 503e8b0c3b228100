// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Arming: putting a site's breakpoint in the text (or its ip in our
 * ftrace filters) and taking it out. kprobe_site_sync_armed() queues the
 * change into the caller's batch (batch.c), which applies the breakpoint
 * writes, and the ftrace filter changes with kprobe_ftrace_changes_apply(),
 * once per registration call.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/bsearch.h>

#include "internal.h"

/* An armed ftrace site: in kprobe_ipmodify_ops rather than the plain ops. */
static bool site_ipmodify(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_IPMODIFY;
}

/* Leaving the table when this batch is published; no longer to be armed. */
static bool site_dying(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_DYING;
}

/* True while /sys/kernel/debug/kprobes/enabled is 0. Under kprobe_mutex. */
bool kprobes_all_disarmed;

/* Should the text at this site trap (or ftrace call us) right now? */
bool kprobe_site_wants_armed(struct kprobe *site)
{
	/*
	 * The probe an arch puts on its own kretprobe trampoline (powerpc,
	 * mips, sh, sparc, parisc, arc) stays armed when all are switched
	 * off, as in the tree: returns through it must still be caught.
	 */
	bool switched_off = kprobes_all_disarmed && !arch_trampoline_kprobe(site);

	return !switched_off && !kprobe_disabled(site) &&
	       !site_dying(site);
}

/*
 * The changes a batch makes to one of our ftrace filters: an ip is added
 * (+1) or removed (-1). A site may change more than once in a batch (it
 * is disarmed when its last enabled probe is disabled, then armed again
 * when another is enabled), so the changes are summed per ip when the
 * batch applies them.
 */
struct kprobe_ftrace_change {
	unsigned long ip;
	int delta;
};

struct kprobe_ftrace_changes {
	struct kprobe_ftrace_change *change;
	unsigned long *ips;	/* room for applying them, so that it cannot fail */
	unsigned int nr;
	unsigned int max;
};

/* The two ftrace_ops an armed ftrace site can be in; see KPROBE_FLAG_IPMODIFY. */
#define KPROBE_FTRACE_PLAIN	0
#define KPROBE_FTRACE_IPMODIFY	1
#define KPROBE_FTRACE_NR		2

/* How many sites are in each ops' filter. Under kprobe_mutex. */
static unsigned int kprobe_ftrace_users[KPROBE_FTRACE_NR];

/*
 * The changes the open batch makes to each filter, applied when it is
 * published (kprobe_ftrace_changes_apply()). Under kprobe_mutex, which
 * every batch holds from its start to its publication.
 *
 * Queuing a removal cannot fail: a site leaving (unregistered, or its
 * text gone) is freed whether or not its ip could be queued, and an ip
 * left in a filter uncounted would set kprobe_ftrace_users apart from
 * the filter for good. So each filter's list always has room for a
 * removal of every ip it holds, and for two changes (arming, then
 * disarming again) per change queued in this batch: an addition, which
 * may fail, makes that room first. Removals are then at most the sites
 * armed when the batch began (kprobe_ftrace_users) and those it armed.
 */
static struct kprobe_ftrace_changes ftrace_changes[KPROBE_FTRACE_NR];

static int ftrace_changes_grow(struct kprobe_ftrace_changes *l, unsigned int n)
{
	struct kprobe_ftrace_change *change;
	unsigned long *ips;

	if (n <= l->max)
		return 0;
	n = max3(16U, 2 * l->max, n);
	change = krealloc_array(l->change, n, sizeof(*change), GFP_KERNEL);
	if (!change)
		return -ENOMEM;
	l->change = change;
	ips = krealloc_array(l->ips, n, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	l->ips = ips;
	l->max = n;
	return 0;
}

/*
 * @ip: the call site's, which ftrace knows it by (arch_kprobe_ftrace_ip()).
 * Return: 0, or -ENOMEM for an addition there was no room for.
 */
static int ftrace_changes_add(int kind, unsigned long ip, int delta)
{
	struct kprobe_ftrace_changes *l = &ftrace_changes[kind];

	lockdep_assert_held(&kprobe_mutex);
	if (delta > 0 &&
	    ftrace_changes_grow(l, kprobe_ftrace_users[kind] + 2 * (l->nr + 1)))
		return -ENOMEM;
	if (WARN_ON_ONCE(l->nr >= l->max))
		return -ENOMEM;
	l->change[l->nr].ip = ip;
	l->change[l->nr].delta = delta;
	l->nr++;
	return 0;
}

/* After a batch: no memory is kept for a filter that holds nothing. */
static void ftrace_changes_done(int kind)
{
	struct kprobe_ftrace_changes *l = &ftrace_changes[kind];

	l->nr = 0;
	if (kprobe_ftrace_users[kind])
		return;
	kfree(l->change);
	kfree(l->ips);
	memset(l, 0, sizeof(*l));
}

/*
 * Queue arming or disarming an ftrace site. Its ops is chosen by its
 * handlers when it is armed and kept while it stays armed, as in the
 * tree: moving the site when a probe with a post_handler joins or leaves
 * would take it out of one filter and put it in the other by two ftrace
 * updates, and calls made between them would reach the handlers twice or
 * not at all.
 */
static int ftrace_site_sync(struct kprobe *site, bool want)
{
	bool ipmodify;
	int kind;

	if (want == kprobe_site_armed(site))
		return 0;
	ipmodify = want ? !!site->post_handler : site_ipmodify(site);
	kind = ipmodify ? KPROBE_FTRACE_IPMODIFY : KPROBE_FTRACE_PLAIN;
	if (ftrace_changes_add(kind, arch_kprobe_ftrace_ip((unsigned long)site->addr),
			       want ? 1 : -1))
		return -ENOMEM;
	site->flags &= ~(KPROBE_FLAG_ARMED | KPROBE_FLAG_IPMODIFY);
	if (want)
		site->flags |= KPROBE_FLAG_ARMED | (ipmodify ? KPROBE_FLAG_IPMODIFY : 0);
	return 0;
}

#ifdef CONFIG_KPROBES_ON_FTRACE
bool kprobe_ftrace_disabled __read_mostly;

/*
 * ftrace lets one ftrace_ops per function change the IP it returns to
 * (FTRACE_OPS_FL_IPMODIFY), and livepatch's does. A probe may need it
 * only for its post_handler (the handler sees the IP after the call and
 * may change it), so sites armed with a post_handler are in
 * kprobe_ipmodify_ops and the others in kprobe_ftrace_ops: a kprobe
 * event or a BPF program at a function's entry then lives beside a
 * livepatch of that function. A pre_handler that redirects does so
 * without the flag, as in the tree, and so does a probe with a
 * post_handler that joins a site already armed without one.
 */
/*
 * With DYNAMIC_FTRACE_WITH_REGS the arch's handler takes a full pt_regs
 * from ftrace; an arch with DYNAMIC_FTRACE_WITH_ARGS alone (arm64)
 * builds the handlers' pt_regs from the ftrace_regs itself.
 */
#define KPROBE_FTRACE_REGS \
	(IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_REGS) ? FTRACE_OPS_FL_SAVE_REGS : 0)

/*
 * With an arch trampoline, ftrace calls it directly at the functions
 * only one of these ops traces; an ops that sets its own trampoline
 * keeps it (no FTRACE_OPS_FL_ALLOC_TRAMP).
 */
static struct ftrace_ops kprobe_ftrace_ops __read_mostly = {
	.func = kprobe_ftrace_handler,
	.flags = KPROBE_FTRACE_REGS,
	.trampoline = arch_kprobe_ftrace_trampoline,
};

static struct ftrace_ops kprobe_ipmodify_ops __read_mostly = {
	.func = kprobe_ftrace_handler,
	.flags = KPROBE_FTRACE_REGS | FTRACE_OPS_FL_IPMODIFY,
	.trampoline = arch_kprobe_ftrace_trampoline,
};

static struct ftrace_ops *const kprobe_ftrace_ops_by_kind[KPROBE_FTRACE_NR] = {
	[KPROBE_FTRACE_PLAIN] = &kprobe_ftrace_ops,
	[KPROBE_FTRACE_IPMODIFY] = &kprobe_ipmodify_ops,
};

/*
 * Add @ips to, or remove them from, one of our ftrace filters. An ops is
 * registered only while its filter is not empty: an empty filter would
 * mean "every function".
 */
static int ftrace_filter_update(int kind, unsigned long *ips, unsigned int nr,
				bool remove)
{
	struct ftrace_ops *ops = kprobe_ftrace_ops_by_kind[kind];
	unsigned int *users = &kprobe_ftrace_users[kind];
	int ret;

	/*
	 * ftrace is dead (ftrace_kill()): it calls nobody any more, so a
	 * site leaves without a word, as in the tree, and none is armed.
	 */
	if (kprobe_ftrace_disabled)
		return remove ? 0 : -ENODEV;

	if (remove) {
		if (*users == nr)
			unregister_ftrace_function(ops);
		*users -= nr;
		ret = ftrace_set_filter_ips(ops, ips, nr, 1, 0);
		/*
		 * One ip that ftrace no longer knows (its text went) makes
		 * it refuse them all: take out the others one at a time.
		 */
		if (ret && nr > 1) {
			while (nr--)
				ftrace_set_filter_ips(ops, &ips[nr], 1, 1, 0);
		}
		return ret;
	}

	ret = ftrace_set_filter_ips(ops, ips, nr, 0, 0);
	if (ret)
		return ret;
	if (!*users) {
		ret = register_ftrace_function(ops);
		if (ret) {
			ftrace_set_filter_ips(ops, ips, nr, 1, 0);
			return ret;
		}
	}
	*users += nr;
	return 0;
}

/**
 * kprobe_ftrace_kill() - ftrace is dying; probes on its sites stop firing
 */
void kprobe_ftrace_kill(void)
{
	kprobe_ftrace_disabled = true;
}
#else
static int ftrace_filter_update(int kind, unsigned long *ips, unsigned int nr,
				bool remove)
{
	return -ENODEV;
}
#endif

/*
 * Ips that left the plain filter's sites but not yet the filter. Closing
 * perf or BPF events one at a time disables, then unregisters, one probe
 * at a function's entry per call: taking its ip out of the filter at
 * once would cost each call an ftrace update (text writes, and a wait
 * for every CPU), most of its time. Such an ip is not needed out at
 * once: no enabled probe is left there (see ftrace_removal_may_wait()),
 * so the calls ftrace still makes to kprobe_ftrace_handler() there find
 * none and return. stale_work takes all of them out in one update a
 * little later, and text about to go takes them out at once
 * (kprobe_ftrace_flush_stale()). An ip armed again in the meantime
 * just leaves this list; one armed in the other ops first has the list
 * flushed, so that no call reaches our handler twice. Only the plain
 * ops waits: the IPMODIFY one would keep a livepatch off the function.
 * Each ip here is still counted in kprobe_ftrace_users[PLAIN]. Sorted
 * by ip. Under kprobe_mutex. Without CONFIG_KPROBES_ON_FTRACE it stays
 * empty.
 */
static struct {
	unsigned long *ips;
	unsigned int nr;
	unsigned int max;
} ftrace_stale;

#define FTRACE_STALE_DELAY	(HZ / 10)

static void stale_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(stale_work, stale_work_fn);

/* No probe at @ip that ftrace must stop calling now: see ftrace_stale. */
static bool ftrace_removal_may_wait(unsigned long ip)
{
	struct kprobe *site = arch_kprobe_ftrace_site(ip);

	/* Probes switched off all at once are not disabled: they must go now. */
	return !site || kprobe_disabled(site) || site_dying(site);
}

static int cmp_ip(const void *a, const void *b)
{
	return order_ulong(*(const unsigned long *)a, *(const unsigned long *)b);
}

/*
 * The list is kept sorted: a batch of N entries registered again while
 * N wait here would otherwise cost N * N comparisons.
 */
static unsigned long *stale_find(unsigned long ip)
{
	return bsearch(&ip, ftrace_stale.ips, ftrace_stale.nr, sizeof(ip), cmp_ip);
}

/*
 * Keep in the filter those of the @nr ips to remove that may wait, and
 * return how many must go now, moved to the front of @ips.
 */
static unsigned int stale_keep(unsigned long *ips, unsigned int nr)
{
	unsigned int i, now = 0, n;
	unsigned long *grown;

	if (ftrace_stale.nr + nr > ftrace_stale.max) {
		n = max(ftrace_stale.nr + nr, 2 * ftrace_stale.max);
		grown = krealloc_array(ftrace_stale.ips, n, sizeof(*grown), GFP_KERNEL);
		if (!grown)
			return nr;
		ftrace_stale.ips = grown;
		ftrace_stale.max = n;
	}
	n = ftrace_stale.nr;
	for (i = 0; i < nr; i++) {
		if (ftrace_removal_may_wait(ips[i]))
			ftrace_stale.ips[ftrace_stale.nr++] = ips[i];
		else
			ips[now++] = ips[i];
	}
	if (ftrace_stale.nr != n)
		sort(ftrace_stale.ips, ftrace_stale.nr, sizeof(*ftrace_stale.ips), cmp_ip, NULL);
	if (ftrace_stale.nr)
		schedule_delayed_work(&stale_work, FTRACE_STALE_DELAY);
	return now;
}

/*
 * Of the @nr ips to add to the plain filter, those still in it drop off
 * the stale list and need no update; return how many others are left to
 * add, moved to the front of @ips.
 */
static unsigned int stale_reuse(unsigned long *ips, unsigned int nr)
{
	unsigned int i, j, left = 0;
	unsigned long *at;
	bool reused = false;

	for (i = 0; i < nr; i++) {
		at = stale_find(ips[i]);
		if (!at) {
			ips[left++] = ips[i];
			continue;
		}
		/*
		 * No text at 0; squeezed out below. Until then bsearch()
		 * still finds its way: @ips is ascending (from the sorted
		 * changes), so what a 0 replaced was below every ip still to
		 * be looked for, as 0 is.
		 */
		*at = 0;
		reused = true;
	}
	if (!reused)
		return left;
	for (i = 0, j = 0; i < ftrace_stale.nr; i++) {
		if (ftrace_stale.ips[i])
			ftrace_stale.ips[j++] = ftrace_stale.ips[i];
	}
	ftrace_stale.nr = j;
	return left;
}

/* Does any of these @nr ips, about to go into the IPMODIFY ops, wait here? */
static bool stale_holds_any(const unsigned long *ips, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr && ftrace_stale.nr; i++) {
		if (stale_find(ips[i]))
			return true;
	}
	return false;
}

/**
 * kprobe_ftrace_flush_stale() - take the stale ips out of the plain filter
 *
 * In one ftrace update; before text is freed, because ftrace forgets its
 * sites there, and from stale_work. kprobe_mutex held, no text lock.
 */
void kprobe_ftrace_flush_stale(void)
{
	lockdep_assert_held(&kprobe_mutex);
	if (!ftrace_stale.nr)
		return;
	ftrace_filter_update(KPROBE_FTRACE_PLAIN, ftrace_stale.ips, ftrace_stale.nr, true);
	ftrace_stale.nr = 0;
}

static void stale_work_fn(struct work_struct *work)
{
	mutex_lock(&kprobe_mutex);
	kprobe_ftrace_flush_stale();
	mutex_unlock(&kprobe_mutex);
}

static int cmp_filter_change(const void *a, const void *b)
{
	const struct kprobe_ftrace_change *x = a, *y = b;

	return order_ulong(x->ip, y->ip);
}

/*
 * ftrace would not take @nr ips at once: one of them, at least, is held
 * by another ftrace user that may change the IP (a livepatch), or ftrace
 * is dead. Add them one at a time, so that every site that can be armed
 * is, and mark the others unarmed, each reported as the tree does. A
 * later sync (the enabled switch, enable_kprobe()) tries them again.
 */
static int ftrace_add_each(int kind, unsigned long *ips, unsigned int nr)
{
	unsigned int i;
	int ret = 0, err;

	for (i = 0; i < nr; i++) {
		struct kprobe *site = arch_kprobe_ftrace_site(ips[i]);

		err = ftrace_filter_update(kind, &ips[i], 1, false);
		if (!err)
			continue;
		pr_warn("failed to arm kprobe-ftrace at %pS (error %d)\n",
			site ? (void *)site->addr : (void *)ips[i], err);
		if (site)
			site->flags &= ~(KPROBE_FLAG_ARMED | KPROBE_FLAG_IPMODIFY);
		ret = err;
	}
	return ret;
}

/*
 * Apply the open batch's changes to one filter: removals first, then
 * additions, all at once unless ftrace refuses some (see
 * ftrace_add_each()). The ips to add fill l->ips from the front, those
 * to remove from the back: together they are at most one per change.
 */
static int ftrace_changes_apply(int kind)
{
	struct kprobe_ftrace_changes *l = &ftrace_changes[kind];
	struct kprobe_ftrace_change *c = l->change;
	unsigned int i, j, nr_add = 0, nr_del = 0;
	unsigned long *add = l->ips, *del;
	int ret = 0, err, sum;

	if (!l->nr)
		goto out;
	sort(c, l->nr, sizeof(*c), cmp_filter_change, NULL);
	for (i = 0; i < l->nr; i = j) {
		for (sum = 0, j = i; j < l->nr && c[j].ip == c[i].ip; j++)
			sum += c[j].delta;
		if (sum > 0)
			add[nr_add++] = c[i].ip;
		else if (sum < 0)
			l->ips[l->nr - ++nr_del] = c[i].ip;
	}
	del = l->ips + l->nr - nr_del;
	if (kind == KPROBE_FTRACE_PLAIN) {
		nr_del = stale_keep(del, nr_del);
		nr_add = stale_reuse(add, nr_add);
	} else if (stale_holds_any(add, nr_add)) {
		kprobe_ftrace_flush_stale();
	}
	if (nr_del)
		ret = ftrace_filter_update(kind, del, nr_del, true);
	if (nr_add) {
		err = ftrace_filter_update(kind, add, nr_add, false);
		if (err)
			err = ftrace_add_each(kind, add, nr_add);
		ret = ret ?: err;
	}
out:
	ftrace_changes_done(kind);
	return ret;
}

/**
 * kprobe_ftrace_changes_apply() - apply the open batch's filter changes
 *
 * Called when a batch is published, with no text lock held (ftrace
 * takes them). kprobe_mutex held.
 *
 * Return: 0, or the error ftrace gave for a site it could not arm (that
 * site is left unarmed).
 */
int kprobe_ftrace_changes_apply(void)
{
	int ret, err;

	lockdep_assert_held(&kprobe_mutex);
	ret = ftrace_changes_apply(KPROBE_FTRACE_PLAIN);
	err = ftrace_changes_apply(KPROBE_FTRACE_IPMODIFY);
	return ret ?: err;
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kprobes_test_ftrace_users() - how many ips our ftrace filters count
 *
 * For the KUnit suite: once no probe is at a function entry and the
 * stale ips are flushed (kprobe_deferred_barrier()), none.
 *
 * Return: the sum over both filters.
 */
unsigned int kprobes_test_ftrace_users(void)
{
	unsigned int users;

	mutex_lock(&kprobe_mutex);
	users = kprobe_ftrace_users[KPROBE_FTRACE_PLAIN] +
		kprobe_ftrace_users[KPROBE_FTRACE_IPMODIFY];
	mutex_unlock(&kprobe_mutex);
	return users;
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_test_ftrace_users);
#endif

/*
 * Bring a site's armed state in line with kprobe_site_wants_armed(), and its
 * optimization with kprobe_site_check_optimizable(). Breakpoint writes go to
 * arch_kprobe_queue_arm(): an arch with HAVE_KPROBE_BATCH queues them until
 * the caller, which holds text_mutex, calls kprobe_batch_apply_text(); others
 * write them at once. ftrace sites are collected for kprobe_batch_finish().
 */
int kprobe_site_sync_armed(struct kprobe_batch *b, struct kprobe *site)
{
	bool want;

	lockdep_assert_held(&text_mutex);
	want = kprobe_site_wants_armed(site);
	kprobe_site_sync_optimized(b, site, want);
	if (kprobe_ftrace(site))
		return ftrace_site_sync(site, want);
	if (want == kprobe_site_armed(site))
		return 0;
	if (kprobe_gone(site)) {
		/* Its text is gone: there is no breakpoint to take out. */
		site->flags &= ~KPROBE_FLAG_ARMED;
		return 0;
	}
	arch_kprobe_queue_arm(site, want);
	b->poked = true;
	site->flags ^= KPROBE_FLAG_ARMED;
	return 0;
}
