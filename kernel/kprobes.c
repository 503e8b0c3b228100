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
 *   ENABLED/DISABLED --its text is freed--> GONE
 *	(kprobes_module_callback(), kprobe_free_init_mem())
 *
 * A probe's flags say which (KPROBE_FLAG_DISABLED, KPROBE_FLAG_GONE). A
 * site is *armed* (breakpoint in the text, or its ip in our ftrace
 * filter) exactly when site_wants_armed() says so: it is not gone, at
 * least one member is enabled, and kprobes are not globally disarmed.
 * Every path that may change that answer ends in site_sync_armed(),
 * which is the one place that arms or disarms. Arming is batched: sites
 * are queued and the text is patched and serialized once per batch
 * (see struct kprobe_batch), and a batch of removals waits for one RCU
 * grace period, not one per probe.
 *
 * Optimization (CONFIG_OPTPROBES)
 * -------------------------------
 * An armed site may instead be reached by a jump into a detour buffer
 * the arch built for it at registration (such sites are aggregates, so
 * the core owns the memory). Its states, on top of "armed":
 *
 *   armed --queued--> QUEUED --optimizer claims it--> QUEUED + OPT_READY
 *     --grace period, jump written--> OPTIMIZED
 *   any of these --site_check_optimizable() turns false--> armed (or
 *     disarmed), jump taken out in the caller's batch
 *   OPTIMIZED --its last probe unregistered--> retiring
 *     --retire_some_sites()--> jump taken out, site freed
 *
 * A retiring site has no members, so its detour runs no handler; it is
 * out of the table, but its jump stays until unregistering (while its
 * grace period lasts), retire_work or the next path that must not meet
 * it writes the text back (see retiring_sites); it is freed after an
 * RCU-tasks grace period (see retired_sites). So is every site whose
 * jump was ever written, however it lost it before its last probe went
 * (KPROBE_FLAG_JUMPED): a task may still be on its way through the
 * detour to the handler call, which reads the site.
 *
 * site_check_optimizable() is site_wants_armed() plus: the sysctl is 1,
 * the site has a detour, no post_handler, and no other probe inside the
 * region the jump covers; a site kept back only by such a probe is
 * marked OPT_BLOCKED, and requeued when a probe near it goes
 * (requeue_covering_sites()). site_sync_armed() calls site_sync_optimized(),
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
 * searches the index (see struct kprobe_index) and walks the members
 * list with the _rcu list primitives. Writers publish with release
 * stores and the _rcu list primitives and wait for a grace period
 * (batch_publish() starts it, batch_release() waits) before they free
 * a site, an aggregate or an instruction slot.
 *
 * Lock order: kprobe_mutex -> cpus_read_lock -> jump_label_lock ->
 * text_mutex. ftrace takes text_mutex itself, so ftrace filters are
 * changed with text_mutex released. The optimizer waits for its grace
 * period with no lock held.
 *
 * Instruction slots and detour buffers that a preempted task may still
 * be inside are freed "dirty" and reused after an RCU-tasks grace period
 * (reap_dirty_slots()), without making unregister wait for it.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/export.h>
#include <linux/kallsyms.h>
#include <linux/seq_file.h>
#include <linux/seq_buf.h>
#include <linux/debugfs.h>
#include <linux/sysctl.h>
#include <linux/memory.h>
#include <linux/ftrace.h>
#include <linux/cpu.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/perf_event.h>
#include <linux/execmem.h>
#include <linux/module.h>
#include <linux/bug.h>
#include <linux/uaccess.h>
#include <linux/rcupdate_wait.h>
#include <linux/sort.h>
#include <linux/list_sort.h>
#include <linux/kdebug.h>
#include <linux/objpool.h>

#include <asm/sections.h>

#define KPROBE_HASH_BITS 12
#define KPROBE_TABLE_SIZE BIT(KPROBE_HASH_BITS)

/* Every registration-side change; see "Locking" above. */
static DEFINE_MUTEX(kprobe_mutex);

/* Sites by address, for the registration side; kprobe_mutex. */
static struct hlist_head kprobe_table[KPROBE_TABLE_SIZE];

/* True while /sys/kernel/debug/kprobes/enabled is 0. Under kprobe_mutex. */
static bool kprobes_all_disarmed;

/* Set by init_kprobes(); until then registration is refused. */
static bool kprobes_initialized;

/*
 * The rule that refused the last probe point or optimization looked at:
 * a string constant, for the query file. Under kprobe_mutex.
 */
static const char *refusal_rule;

/* A rule the query file adds to: it names the blacklist entry. */
static const char rule_blacklisted[] = "blacklisted";

int kprobe_refuse(int err, const char *rule)
{
	lockdep_assert_held(&kprobe_mutex);
	refusal_rule = rule;
	return err;
}

/*
 * current_kprobe and kprobe_ctlblk are the arch's (each arch defines
 * them, as in the tree: the control block is its own type). Exported,
 * with get_kprobe(), so that modules can use kprobe_running().
 */
EXPORT_PER_CPU_SYMBOL_GPL(current_kprobe);

/* Ranges no probe may be placed in. Written under kprobe_mutex, read under RCU. */
static LIST_HEAD(kprobe_blacklist);

static struct hlist_head *kprobe_bucket(const void *addr)
{
	return &kprobe_table[hash_ptr(addr, KPROBE_HASH_BITS)];
}

/*
 * The hit path's index of sites by address, so that a hit costs the same
 * with one site or 100,000: an open-addressing table (linear probing)
 * that grows and shrinks with the number of sites, each time rebuilt and
 * published whole. The hash table above stays for the registration side:
 * its walks, and the hlist node that users such as trace_kprobe look at
 * to tell a registered probe.
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
	unsigned int shift;		/* 64 - log2(number of entries) */
	unsigned int used;		/* entries not empty: live and tombstones */
	unsigned int live;
	struct rcu_head rcu;
};

/* Until the first site arrives: two empty entries, never freed. */
static struct kprobe_index_entry boot_index_entries[2];
static struct kprobe_index boot_index = {
	.entry = boot_index_entries,
	.mask = 1,
	.shift = 63,
};
static struct kprobe_index __rcu *kprobe_index = RCU_INITIALIZER(&boot_index);

static nokprobe_inline unsigned long index_start(const struct kprobe_index *idx,
						 unsigned long addr)
{
	return (addr * GOLDEN_RATIO_64) >> idx->shift;
}

/**
 * get_kprobe() - find the probe site at an address
 * @addr: the probed instruction's address
 *
 * Called on the hit path with preemption or interrupts disabled, or with
 * kprobe_mutex held.
 *
 * Return: the site (a lone probe or an aggregate), or NULL.
 */
struct kprobe *get_kprobe(void *addr)
{
	struct kprobe_index_entry *entry;
	struct kprobe_index *idx;
	unsigned long i, a, mask;

	idx = rcu_dereference_check(kprobe_index, lockdep_is_held(&kprobe_mutex) ||
				    rcu_read_lock_any_held());
	/* In locals: each acquire below is a compiler barrier. */
	entry = idx->entry;
	mask = idx->mask;
	for (i = index_start(idx, (unsigned long)addr);; i = (i + 1) & mask) {
		/* Pairs with index_fill(): the site is read after its address. */
		a = smp_load_acquire(&entry[i].addr);
		if (a == (unsigned long)addr)
			return READ_ONCE(entry[i].site);
		if (a == INDEX_EMPTY)
			return NULL;
	}
}
EXPORT_SYMBOL_GPL(get_kprobe);
NOKPROBE_SYMBOL(get_kprobe);

static struct kprobe_index *index_locked(void)
{
	return rcu_dereference_protected(kprobe_index, lockdep_is_held(&kprobe_mutex));
}

/* The entry holding @addr, or the first free one on its way; kprobe_mutex. */
static struct kprobe_index_entry *index_find(struct kprobe_index *idx,
					     unsigned long addr, bool want_free)
{
	unsigned long i;

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
	idx->shift = 64 - bits;
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
static void index_shrink(void)
{
	struct kprobe_index *idx = index_locked();

	if (idx->mask + 1 > BIT(INDEX_MIN_BITS) && 16 * idx->live < idx->mask + 1)
		index_rebuild(idx->live);	/* on failure, the old one serves */
}

/* ---- aggregate sites ---------------------------------------------------- */

static int aggr_pre_handler(struct kprobe *site, struct pt_regs *regs);
static void aggr_post_handler(struct kprobe *site, struct pt_regs *regs,
			      unsigned long flags);

static nokprobe_inline bool kprobe_is_aggr(struct kprobe *p)
{
	return p->pre_handler == aggr_pre_handler;
}

/*
 * An aggregate site as the core allocates it: with room for the
 * optimizer, and its own link for the batch that frees it, since the
 * hit path may walk its ->list (the members) until it is unhashed.
 */
struct kprobe_aggregate {
#ifdef CONFIG_OPTPROBES
	struct optimized_kprobe op;
#else
	struct kprobe kp;
#endif
	struct list_head dying;
};

static struct kprobe_aggregate *to_aggr(struct kprobe *site)
{
#ifdef CONFIG_OPTPROBES
	return container_of(site, struct kprobe_aggregate, op.kp);
#else
	return container_of(site, struct kprobe_aggregate, kp);
#endif
}

static struct kprobe *aggr_site(struct kprobe_aggregate *agg)
{
#ifdef CONFIG_OPTPROBES
	return &agg->op.kp;
#else
	return &agg->kp;
#endif
}

/*
 * Private site flags, above the KPROBE_FLAG_* users see: the site is
 * armed; the site is leaving the table in this batch.
 */
#define KPROBE_FLAG_ARMED	BIT(31)
/* Private flag of an armed ftrace site: it is in kprobe_ipmodify_ops. */
#define KPROBE_FLAG_IPMODIFY	BIT(23)
#define KPROBE_FLAG_DYING	BIT(30)
#define KPROBE_FLAGS_PRIVATE	(KPROBE_FLAG_ARMED | KPROBE_FLAG_IPMODIFY | KPROBE_FLAG_DYING)

/*
 * Private flag of a user probe: it was taken out of the table in this
 * batch, and its hit counter is dropped once the batch's grace period
 * is over (drop_counters()). The hit path may still be counting
 * until then.
 */
#define KPROBE_FLAG_UNHOOKED	BIT(29)

/*
 * More private flags of a user probe.
 *
 * KPROBE_FLAG_NO_PRE: it has no pre_handler (handlers are fixed at
 * registration), so that the aggregate's hit loop tests one word per
 * member.
 *
 * KPROBE_FLAG_SITE_COUNTED: it is an enabled member of an aggregate, and
 * its hits are the site's. Its own counter then holds its hits minus the
 * site's count so far; kprobe_hits() adds the two. Set and cleared by
 * member_set_counted(), under kprobe_mutex; cleared without folding the
 * count when the probe is unregistered, since its count goes with it.
 */
/* (BITs 28 and 25 are the optimizer's OPT_QUEUED and OPT_BLOCKED, site flags.) */
#define KPROBE_FLAG_NO_PRE		BIT(27)
#define KPROBE_FLAG_SITE_COUNTED	BIT(26)
#define KPROBE_MEMBER_SKIP	(KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE | KPROBE_FLAG_NO_PRE)

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
 * aggr_run_pre_handlers() - run an aggregate's pre_handlers for one hit
 * @site: the aggregate that was hit; its hit was counted by the caller
 * @regs: the hit's registers
 *
 * Runs every enabled member's pre_handler in order, each as
 * current_kprobe, and stops at one that redirects.
 *
 * Return: 1 when a pre_handler returned non-zero, else 0.
 */
int aggr_run_pre_handlers(struct kprobe *site, struct pt_regs *regs)
{
	return run_member_pre_handlers(site, regs);
}
NOKPROBE_SYMBOL(aggr_run_pre_handlers);

/* An aggregate's pre_handler on the breakpoint and ftrace paths. */
static int aggr_pre_handler(struct kprobe *site, struct pt_regs *regs)
{
	if (!arch_kprobe_counts_hits)
		kprobe_count_hit(site);
	if (run_member_pre_handlers(site, regs))
		return 1;
	__this_cpu_write(current_kprobe, site);
	return 0;
}
NOKPROBE_SYMBOL(aggr_pre_handler);

static void aggr_post_handler(struct kprobe *site, struct pt_regs *regs,
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
NOKPROBE_SYMBOL(aggr_post_handler);

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

/**
 * kprobe_busy_begin() - treat this CPU as if it were running a handler
 *
 * Probes hit until kprobe_busy_end() skip their handlers and count a
 * miss. rethook and fprobe use this around their own handlers.
 */
void kprobe_busy_begin(void)
{
	preempt_disable();
	__this_cpu_write(current_kprobe, &kprobe_busy);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
}

/**
 * kprobe_busy_end() - end a kprobe_busy_begin() region
 */
void kprobe_busy_end(void)
{
	__this_cpu_write(current_kprobe, NULL);
	preempt_enable();
}

/* ---- instruction slots -------------------------------------------------- */

#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
/*
 * A page of equally sized slots. Pages are on their cache's RCU list so
 * that __is_insn_slot_addr() can run in any context; the bitmaps and the
 * count are under the cache's mutex.
 *
 * bits[] holds three bitmaps of slots_per_page() bits each: the slots in
 * use; the "dirty" ones, freed but possibly still executed by a task
 * that was preempted inside them; and those the reaper is waiting a
 * grace period for. Dirty and reaped slots still count as used.
 */
struct kprobe_insn_page {
	struct list_head list;
	struct rcu_work free_work;
	struct kprobe_insn_cache *cache;
	kprobe_opcode_t *base;
	unsigned int nr_used;
	unsigned long bits[];
};

/* c->insn_size counts kprobe_opcode_t units, as the arch code sets it. */
static unsigned int slots_per_page(struct kprobe_insn_cache *c)
{
	return PAGE_SIZE / (c->insn_size * sizeof(kprobe_opcode_t));
}

/* Is @slot in @page? Pages are PAGE_SIZE bytes, whatever the opcode size. */
static bool slot_in_page(struct kprobe_insn_page *page, kprobe_opcode_t *slot)
{
	return (unsigned long)slot - (unsigned long)page->base < PAGE_SIZE;
}

static unsigned long *page_bitmap(struct kprobe_insn_cache *c,
				  struct kprobe_insn_page *page, int which)
{
	return page->bits + which * BITS_TO_LONGS(slots_per_page(c));
}

#define SLOTS_USED	0
#define SLOTS_DIRTY	1
#define SLOTS_REAPING	2

/* Weak so that an arch can place the page where its copies can reach. */
void __weak *alloc_insn_page(void)
{
	return execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);
}

static void free_insn_page(void *page)
{
	execmem_free(page);
}

#define DEFINE_SLOT_CACHE(cache, name, size, alloc_page, free_page)	\
	struct kprobe_insn_cache cache = {				\
		.mutex = __MUTEX_INITIALIZER(cache.mutex),		\
		.pages = LIST_HEAD_INIT(cache.pages),			\
		.insn_size = size,					\
		.alloc = alloc_page,					\
		.free = free_page,					\
		.sym = name,						\
	}

/*
 * Slot sizes in kprobe_opcode_t units. An arch that copies one
 * instruction (and maybe a breakpoint after it, within MAX_INSN_SIZE)
 * needs no KPROBE_SLOT_SIZE; x86 adds a jump back and sets its own.
 */
#ifndef KPROBE_SLOT_SIZE
#define KPROBE_SLOT_SIZE	MAX_INSN_SIZE
#endif

DEFINE_SLOT_CACHE(kprobe_insn_slots, KPROBE_INSN_PAGE_SYM, KPROBE_SLOT_SIZE,
		  alloc_insn_page, free_insn_page);

/*
 * A page leaves its cache's list at once, but __is_insn_slot_addr() and
 * kprobe_cache_get_kallsym() may still be looking at it: the memory goes
 * after a grace period, from a worker, since freeing executable memory
 * may sleep.
 */
static void insn_page_free_work(struct work_struct *work)
{
	struct kprobe_insn_page *page =
		container_of(to_rcu_work(work), struct kprobe_insn_page, free_work);

	page->cache->free(page->base);
	kfree(page);
}

/**
 * __get_insn_slot() - allocate one instruction slot
 * @c: the cache to allocate from
 *
 * Return: the slot, or NULL when no executable memory can be had.
 */
kprobe_opcode_t *__get_insn_slot(struct kprobe_insn_cache *c)
{
	unsigned int n = slots_per_page(c), bit;
	struct kprobe_insn_page *page;
	kprobe_opcode_t *slot = NULL;

	mutex_lock(&c->mutex);
	list_for_each_entry(page, &c->pages, list) {
		if (page->nr_used == n)
			continue;
		bit = find_first_zero_bit(page_bitmap(c, page, SLOTS_USED), n);
		goto found;
	}

	page = kzalloc(struct_size(page, bits, 3 * BITS_TO_LONGS(n)), GFP_KERNEL);
	if (!page)
		goto out;
	page->base = c->alloc();
	if (!page->base) {
		kfree(page);
		goto out;
	}
	page->cache = c;
	INIT_RCU_WORK(&page->free_work, insn_page_free_work);
	list_add_rcu(&page->list, &c->pages);
	perf_event_ksymbol(PERF_RECORD_KSYMBOL_TYPE_OOL, (unsigned long)page->base,
			   PAGE_SIZE, false, c->sym);
	bit = 0;
found:
	__set_bit(bit, page_bitmap(c, page, SLOTS_USED));
	page->nr_used++;
	slot = page->base + bit * c->insn_size;
out:
	mutex_unlock(&c->mutex);
	return slot;
}

/* Give slot @bit of @page back; the cache's mutex held. */
static void release_slot(struct kprobe_insn_cache *c,
			 struct kprobe_insn_page *page, unsigned int bit)
{
	__clear_bit(bit, page_bitmap(c, page, SLOTS_USED));
	/*
	 * A cache keeps its last page: probes tend to come back, and
	 * powerpc hands out a single static page for detours, which is
	 * not there again until the freeing below has run.
	 */
	if (--page->nr_used || list_is_singular(&c->pages))
		return;
	if (c->last_freed == page)
		c->last_freed = NULL;
	list_del_rcu(&page->list);
	perf_event_ksymbol(PERF_RECORD_KSYMBOL_TYPE_OOL, (unsigned long)page->base,
			   PAGE_SIZE, true, c->sym);
	queue_rcu_work(system_wq, &page->free_work);
}

static void reap_dirty_slots(struct work_struct *work);
static DECLARE_WORK(slot_reaper, reap_dirty_slots);

/**
 * __free_insn_slot() - give back a slot from __get_insn_slot()
 * @c: the cache it came from
 * @slot: the slot
 * @dirty: a task may still be inside the slot, preempted or interrupted
 *	while running it outside of a probe hit. The slot is then reused
 *	only after an RCU-tasks grace period, waited for by a worker so
 *	that the caller does not wait. Otherwise the caller guarantees that
 *	no CPU can be running it (a synchronize_rcu() has passed).
 */
void __free_insn_slot(struct kprobe_insn_cache *c, kprobe_opcode_t *slot,
		      int dirty)
{
	struct kprobe_insn_page *page;
	unsigned int bit;

	mutex_lock(&c->mutex);
	page = c->last_freed;
	if (!page || !slot_in_page(page, slot)) {
		list_for_each_entry(page, &c->pages, list)
			if (slot_in_page(page, slot))
				goto found;
		WARN(1, "slot %p is not from the %s cache\n", slot, c->sym);
		goto out;
	}
found:
	bit = (slot - page->base) / c->insn_size;
	c->last_freed = page;
	if (dirty) {
		__set_bit(bit, page_bitmap(c, page, SLOTS_DIRTY));
		c->nr_garbage++;
		schedule_work(&slot_reaper);
	} else {
		release_slot(c, page, bit);
	}
out:
	mutex_unlock(&c->mutex);
}

/*
 * Move a cache's dirty slots to the reaping state (@claim), or release
 * the reaping ones after their grace period.
 */
static void reap_cache(struct kprobe_insn_cache *c, bool claim)
{
	struct kprobe_insn_page *page, *next;
	unsigned int n = slots_per_page(c), bit;

	mutex_lock(&c->mutex);
	list_for_each_entry_safe(page, next, &c->pages, list) {
		unsigned long *dirty = page_bitmap(c, page, SLOTS_DIRTY);
		unsigned long *reaping = page_bitmap(c, page, SLOTS_REAPING);

		if (claim) {
			bitmap_or(reaping, reaping, dirty, n);
			bitmap_zero(dirty, n);
			continue;
		}
		for_each_set_bit(bit, reaping, n) {
			__clear_bit(bit, reaping);
			c->nr_garbage--;
			release_slot(c, page, bit);	/* may free @page */
		}
	}
	mutex_unlock(&c->mutex);
}

/*
 * Slots freed dirty wait here for every task to have passed a voluntary
 * context switch, user mode or idle: then none is inside one. Slots
 * freed while the grace period runs wait for the next round.
 */
static void reap_dirty_slots(struct work_struct *work)
{
	reap_cache(&kprobe_insn_slots, true);
#ifdef CONFIG_OPTPROBES
	reap_cache(&kprobe_optinsn_slots, true);
#endif
	synchronize_rcu_tasks();
	reap_cache(&kprobe_insn_slots, false);
#ifdef CONFIG_OPTPROBES
	reap_cache(&kprobe_optinsn_slots, false);
#endif
}

/**
 * __is_insn_slot_addr() - is an address inside one of a cache's pages?
 * @c: the cache
 * @addr: the address
 *
 * Used by the unwinder and kernel_text_address(); takes no lock.
 *
 * Return: true when @addr is in a page of @c.
 */
bool __is_insn_slot_addr(struct kprobe_insn_cache *c, unsigned long addr)
{
	struct kprobe_insn_page *page;

	guard(rcu)();
	list_for_each_entry_rcu(page, &c->pages, list)
		if (addr - (unsigned long)page->base < PAGE_SIZE)
			return true;
	return false;
}

/**
 * kprobe_cache_get_kallsym() - name the @symnum'th page of a cache
 * @c: the cache
 * @symnum: in: index; out: decreased by the number of pages skipped
 * @value: out: the page's address
 * @type: out: 't'
 * @sym: out: the cache's symbol name
 *
 * Return: 0 when found, -ERANGE when @symnum is past the last page.
 */
int kprobe_cache_get_kallsym(struct kprobe_insn_cache *c, unsigned int *symnum,
			     unsigned long *value, char *type, char *sym)
{
	struct kprobe_insn_page *page;

	guard(rcu)();
	list_for_each_entry_rcu(page, &c->pages, list) {
		if (*symnum) {
			--*symnum;
			continue;
		}
		*value = (unsigned long)page->base;
		*type = 't';
		strscpy(sym, c->sym, KSYM_NAME_LEN);
		return 0;
	}
	return -ERANGE;
}

#ifdef CONFIG_OPTPROBES
void __weak *alloc_optinsn_page(void)
{
	return alloc_insn_page();
}

void __weak free_optinsn_page(void *page)
{
	free_insn_page(page);
}

/*
 * Detour buffers for optimized probes. arm and powerpc give their size
 * as MAX_OPTINSN_SIZE, a difference of two symbols and so no constant:
 * it is set at init, whichever way the arch gives it.
 */
#ifndef KPROBE_OPTINSN_SLOT_SIZE
#define KPROBE_OPTINSN_SLOT_SIZE	MAX_OPTINSN_SIZE
#endif

DEFINE_SLOT_CACHE(kprobe_optinsn_slots, KPROBE_OPTINSN_PAGE_SYM,
		  0, alloc_optinsn_page, free_optinsn_page);

static void __init optinsn_slots_init(void)
{
	kprobe_optinsn_slots.insn_size = KPROBE_OPTINSN_SLOT_SIZE;
}
#endif
#endif /* __ARCH_WANT_KPROBES_INSN_SLOT */

#if !defined(__ARCH_WANT_KPROBES_INSN_SLOT) || !defined(CONFIG_OPTPROBES)
static void __init optinsn_slots_init(void)
{
}
#endif

/**
 * kprobe_get_kallsym() - name the kprobes-owned executable pages
 * @symnum: index among those pages
 * @value: out: address
 * @type: out: symbol type
 * @sym: out: symbol name
 *
 * Return: 0 when found, -ERANGE past the last one.
 */
int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym)
{
#ifdef __ARCH_WANT_KPROBES_INSN_SLOT
	static struct kprobe_insn_cache *const caches[] = {
		&kprobe_insn_slots,
#ifdef CONFIG_OPTPROBES
		&kprobe_optinsn_slots,
#endif
	};
	unsigned int i;

	/* Each cache takes the indexes of its pages, then the next one. */
	for (i = 0; i < ARRAY_SIZE(caches); i++)
		if (!kprobe_cache_get_kallsym(caches[i], &symnum, value, type, sym))
			return 0;
#endif
	return arch_kprobe_get_kallsym(&symnum, value, type, sym);
}

/* Most arches own no executable pages besides the caches above. */
int __weak arch_kprobe_get_kallsym(unsigned int *symnum, unsigned long *value,
				   char *type, char *sym)
{
	return -ERANGE;
}

/* ---- the blacklist ------------------------------------------------------ */

bool __weak arch_within_kprobe_blacklist(unsigned long addr)
{
	return false;
}

/* -1, 0 or 1 as @x is below, equal to or above @y: for the sorts below. */
static int order_ulong(unsigned long x, unsigned long y)
{
	return x < y ? -1 : x > y;
}

/*
 * The blacklist entry holding @addr, or NULL. The entries are freed only
 * with their module's text, under kprobe_mutex: hold it, or RCU.
 */
static struct kprobe_blacklist_entry *blacklist_entry_of(unsigned long addr)
{
	struct kprobe_blacklist_entry *ent;

	list_for_each_entry_rcu(ent, &kprobe_blacklist, list,
				lockdep_is_held(&kprobe_mutex))
		if (addr - ent->start_addr < ent->end_addr - ent->start_addr)
			return ent;
	return NULL;
}

/* Is @addr in one of the blacklisted ranges? */
static bool in_blacklisted_range(unsigned long addr)
{
	if (arch_within_kprobe_blacklist(addr))
		return true;
	guard(rcu)();
	return blacklist_entry_of(addr);
}

/*
 * The compiler splits functions and makes specialized copies of them,
 * named after the function with a suffix: foo.cold, foo.isra.0,
 * foo.constprop.0, foo.part.0. NOKPROBE_SYMBOL(foo) names only foo, yet
 * the pieces run on the same paths. Return the address of the function
 * the symbol @name (of module @modname, or of vmlinux for NULL) is a
 * piece of, looked up in the same module; 0 when it is none.
 */
static unsigned long piece_origin(const char *name, const char *modname)
{
	char whole[MODULE_NAME_LEN + 1 + KSYM_NAME_LEN];
	const char *suffix = strchr(name, '.');
	int len;

	if (!suffix || suffix == name)
		return 0;
	len = suffix - name;
	if (modname)
		snprintf(whole, sizeof(whole), "%s:%.*s", modname, len, name);
	else
		snprintf(whole, sizeof(whole), "%.*s", len, name);
	return (unsigned long)kprobe_lookup_name(whole, 0);
}

/* Is @addr, in the symbol @name of @modname, a piece of a blacklisted function? */
static bool blacklisted_piece(unsigned long addr, const char *name,
			      const char *modname)
{
	unsigned long whole = piece_origin(name, modname);

	return whole && whole != addr && in_blacklisted_range(whole);
}

/**
 * within_kprobe_blacklist() - may no probe be placed at @addr?
 * @addr: a kernel text address
 *
 * Return: true when @addr is in a blacklisted range, or in a piece the
 * compiler split off a blacklisted function (foo.cold, foo.isra.0, ...).
 */
bool within_kprobe_blacklist(unsigned long addr)
{
	char name[KSYM_NAME_LEN];
	char *modname = NULL;

	if (in_blacklisted_range(addr))
		return true;
	if (!kallsyms_lookup(addr, NULL, NULL, &modname, name))
		return false;
	return blacklisted_piece(addr, name, modname);
}
EXPORT_SYMBOL_GPL(within_kprobe_blacklist);

/**
 * kprobe_add_area_blacklist() - blacklist a range of text
 * @start: first address
 * @end: one past the last address
 *
 * Return: 0, or -ENOMEM.
 */
int kprobe_add_area_blacklist(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *ent;

	if (start >= end)
		return 0;
	ent = kmalloc(sizeof(*ent), GFP_KERNEL);
	if (!ent)
		return -ENOMEM;
	ent->start_addr = start;
	ent->end_addr = end;
	list_add_tail_rcu(&ent->list, &kprobe_blacklist);
	return 0;
}

/**
 * kprobe_add_ksym_blacklist() - blacklist the whole symbol around @entry
 * @entry: an address inside a symbol
 *
 * Return: the symbol's size on success, -EINVAL when @entry is in no
 * symbol, or -ENOMEM.
 */
int kprobe_add_ksym_blacklist(unsigned long entry)
{
	unsigned long size, offset;
	int ret;

	if (!kallsyms_lookup_size_offset(entry, &size, &offset))
		return -EINVAL;
	ret = kprobe_add_area_blacklist(entry - offset, entry - offset + size);
	return ret ? ret : size;
}

int __weak arch_populate_kprobe_blacklist(void)
{
	return 0;
}

/* Blacklist each symbol named in a '_kprobe_blacklist' array. */
static void blacklist_symbols(unsigned long *start, unsigned long *end)
{
	unsigned long *iter;

	for (iter = start; iter < end; iter++) {
		unsigned long addr = (unsigned long)dereference_symbol_descriptor((void *)*iter);

		if (kprobe_add_ksym_blacklist(addr) < 0)
			pr_warn("cannot blacklist %pS\n", (void *)addr);
	}
}

static int __init populate_kprobe_blacklist(void)
{
	blacklist_symbols(__start_kprobe_blacklist, __stop_kprobe_blacklist);

	/* Sections whose code runs where a breakpoint cannot be taken. */
	kprobe_add_area_blacklist((unsigned long)__kprobes_text_start,
				  (unsigned long)__kprobes_text_end);
	kprobe_add_area_blacklist((unsigned long)__noinstr_text_start,
				  (unsigned long)__noinstr_text_end);

	return arch_populate_kprobe_blacklist();
}

/* ---- resolving the probe address --------------------------------------- */

kprobe_opcode_t * __weak kprobe_lookup_name(const char *name, unsigned int offset)
{
	return (kprobe_opcode_t *)kallsyms_lookup_name(name);
}

kprobe_opcode_t * __weak arch_adjust_kprobe_addr(unsigned long addr,
						 unsigned long offset,
						 bool *on_func_entry)
{
	*on_func_entry = !offset;
	return (kprobe_opcode_t *)(addr + offset);
}

/* The address a probe asks for: .addr, or .symbol_name's, plus .offset. */
static kprobe_opcode_t *probe_target(kprobe_opcode_t *addr, const char *symbol_name,
				     unsigned long offset)
{
	if (!!addr == !!symbol_name)
		return ERR_PTR(-EINVAL);

	if (symbol_name) {
		/*
		 * A name several functions share means the first of them, as
		 * kallsyms_lookup_name() finds it; kprobe_events refuses such
		 * names before it gets here.
		 */
		addr = kprobe_lookup_name(symbol_name, offset);
		if (!addr)
			return ERR_PTR(-ENOENT);
	}
	return (kprobe_opcode_t *)((unsigned long)addr + offset);
}

/*
 * Where the arch wants a probe on @addr, in the function starting at
 * @func: past a landing pad at a function's entry. Sets @on_func_entry
 * when it is a function's first instruction.
 */
static kprobe_opcode_t *place_in_function(unsigned long addr, unsigned long func,
					  bool *on_func_entry)
{
	kprobe_opcode_t *where;

	*on_func_entry = false;
	where = arch_adjust_kprobe_addr(func, addr - func, on_func_entry);
	return where ? where : ERR_PTR(-EINVAL);
}

/*
 * probe_target() and place_in_function(), for callers outside a batch;
 * the function's start goes to @func. An address in no symbol kallsyms
 * knows is -ENOENT, as a name it does not know is.
 */
static kprobe_opcode_t *resolve_probe_addr(kprobe_opcode_t *addr,
					   const char *symbol_name,
					   unsigned long offset,
					   bool *on_func_entry, unsigned long *func)
{
	unsigned long func_offset;

	addr = probe_target(addr, symbol_name, offset);
	if (IS_ERR(addr))
		return addr;
	if (!kallsyms_lookup_size_offset((unsigned long)addr, NULL, &func_offset))
		return ERR_PTR(-ENOENT);
	*func = (unsigned long)addr - func_offset;
	return place_in_function((unsigned long)addr, *func, on_func_entry);
}

/*
 * The function around the probe add_probe() is placing, looked up once
 * for the core's checks and the arch's: a module's symbols are searched
 * one by one. Filled by place_probe() and kept for the next probes in the
 * same function (every line of a function probed, say), but only after a
 * probe in it registered: its text is then the kernel's or a module's,
 * whose going mark_range_gone() hears of and empties it. Emptied on any
 * failure (the text may be a BPF program, which goes unannounced).
 * kprobe_mutex. @modname is empty for vmlinux.
 */
static struct {
	unsigned long start;
	unsigned long size;
	char modname[MODULE_NAME_LEN];
	char name[KSYM_NAME_LEN];
} probed_function;

/**
 * kprobe_function_bounds() - the function around a probed address
 * @addr: a kernel text address
 * @start: set to the function's first byte
 * @size: set to its size in bytes
 *
 * For the arch's checks of a probe point, with kprobe_mutex held; the
 * function of the probe being registered is remembered.
 *
 * Return: false when @addr is in no function kallsyms knows.
 */
bool kprobe_function_bounds(unsigned long addr, unsigned long *start,
			    unsigned long *size)
{
	unsigned long offset;

	lockdep_assert_held(&kprobe_mutex);
	if (addr - probed_function.start < probed_function.size) {
		*start = probed_function.start;
		*size = probed_function.size;
		return true;
	}
	if (!kallsyms_lookup_size_offset(addr, size, &offset))
		return false;
	*start = addr - offset;
	return true;
}

/*
 * Look up @p's function for the checks that follow and move @p->addr
 * where the arch wants it: -ENOENT when it is in no function.
 */
static int place_probe(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr, size, offset;
	kprobe_opcode_t *where;
	char *modname = NULL;
	bool on_func_entry;

	if (addr - probed_function.start >= probed_function.size) {
		probed_function.size = 0;
		if (!kallsyms_lookup(addr, &size, &offset, &modname, probed_function.name))
			return kprobe_refuse(-ENOENT, "in no function kallsyms knows");
		strscpy(probed_function.modname, modname ?: "",
			sizeof(probed_function.modname));
		probed_function.start = addr - offset;
		probed_function.size = size;
	}
	where = place_in_function(addr, probed_function.start, &on_func_entry);
	if (IS_ERR(where))
		return kprobe_refuse(PTR_ERR(where), "the arch places no probe there");
	p->addr = where;
	if (on_func_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	return 0;
}

/**
 * kprobe_on_func_entry() - is this probe point a function's entry?
 * @addr: address, or NULL when @sym is given
 * @sym: symbol name, or NULL
 * @offset: offset into @sym (or added to @addr)
 *
 * Return: 0 when it is, -EINVAL when it is not, or the error that
 * resolving the address gave (-ENOENT, -EADDRNOTAVAIL).
 */
int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym, unsigned long offset)
{
	bool on_func_entry;
	unsigned long func;
	kprobe_opcode_t *where = resolve_probe_addr(addr, sym, offset, &on_func_entry, &func);

	if (IS_ERR(where))
		return PTR_ERR(where);
	return on_func_entry ? 0 : -EINVAL;
}

/* ---- arming ------------------------------------------------------------- */

/*
 * The arch batches breakpoint writes: it queues each one and serializes
 * all CPUs once when the batch is applied. An arch without batching
 * arms each site at once; the default does that.
 */
void __weak arch_kprobe_queue_arm(struct kprobe *p, bool arm)
{
	if (arm)
		arch_arm_kprobe(p);
	else
		arch_disarm_kprobe(p);
}

void __weak arch_kprobe_queue_apply(void)
{
}

/*
 * The changes a batch makes to one of our ftrace filters: an ip is added
 * (+1) or removed (-1). A site may change more than once in a batch (it
 * is disarmed when its last enabled probe is disabled, then armed again
 * when another is enabled), so the changes are summed per ip when the
 * batch applies them.
 */
struct ftrace_filter_change {
	unsigned long ip;
	int delta;
};

struct ftrace_filter_changes {
	struct ftrace_filter_change *change;
	unsigned long *ips;	/* room for applying them, so that it cannot fail */
	unsigned int nr;
	unsigned int max;
};

/* The two ftrace_ops an armed ftrace site can be in; see KPROBE_FLAG_IPMODIFY. */
#define FTRACE_OPS_PLAIN	0
#define FTRACE_OPS_IPMODIFY	1
#define FTRACE_OPS_NR		2

/*
 * struct kprobe_batch - the sites one registration call changes
 * @free_list: lone sites leaving the table, freed after one grace period
 *	(linked by their ->list, which only an aggregate's readers walk)
 * @free_aggregates: the same for aggregates (by kprobe_aggregate::dying)
 * @ftrace: changes to each of our ftrace filters, applied after
 *	text_mutex is dropped
 * @poked: breakpoint writes were queued and must be applied
 * @need_sync: wait for a grace period before returning, because a probe
 *	left the table or an aggregate
 * @grace_started, @grace: that grace period, from batch_publish() to
 *	batch_release()
 */
struct kprobe_batch {
	struct list_head free_list;
	struct list_head free_aggregates;
	struct ftrace_filter_changes ftrace[FTRACE_OPS_NR];
	bool poked;
	bool need_sync;
	bool grace_started;
	struct rcu_synchronize grace;
};

/* Should the text at this site trap (or ftrace call us) right now? */
static bool site_wants_armed(struct kprobe *site)
{
	/*
	 * The probe an arch puts on its own kretprobe trampoline (powerpc,
	 * mips, sh, sparc, parisc, arc) stays armed when all are switched
	 * off, as in the tree: returns through it must still be caught.
	 */
	bool switched_off = kprobes_all_disarmed && !arch_trampoline_kprobe(site);

	return !switched_off && !kprobe_disabled(site) &&
	       !(site->flags & KPROBE_FLAG_DYING);
}

static bool site_is_armed(struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_ARMED;
}

/* Room for one more change in @l, and for applying it. */
static int ftrace_changes_reserve(struct ftrace_filter_changes *l)
{
	struct ftrace_filter_change *change;
	unsigned long *ips;
	unsigned int n;

	if (l->nr < l->max)
		return 0;
	n = max(16U, 2 * l->max);
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

static void ftrace_changes_add(struct ftrace_filter_changes *l, void *addr, int delta)
{
	l->change[l->nr].ip = (unsigned long)addr;
	l->change[l->nr].delta = delta;
	l->nr++;
}

/*
 * Queue arming or disarming an ftrace site. Its ops is chosen by its
 * handlers when it is armed and kept while it stays armed, as in the
 * tree: moving the site when a probe with a post_handler joins or leaves
 * would take it out of one filter and put it in the other by two ftrace
 * updates, and calls made between them would reach the handlers twice or
 * not at all.
 */
static int ftrace_site_sync(struct kprobe_batch *b, struct kprobe *site, bool want)
{
	bool ipmodify;
	int kind;

	if (want == site_is_armed(site))
		return 0;
	ipmodify = want ? !!site->post_handler : site->flags & KPROBE_FLAG_IPMODIFY;
	kind = ipmodify ? FTRACE_OPS_IPMODIFY : FTRACE_OPS_PLAIN;
	if (ftrace_changes_reserve(&b->ftrace[kind]))
		return -ENOMEM;
	ftrace_changes_add(&b->ftrace[kind], site->addr, want ? 1 : -1);
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
static struct ftrace_ops kprobe_ftrace_ops __read_mostly = {
	.func = kprobe_ftrace_handler,
	.flags = FTRACE_OPS_FL_SAVE_REGS,
};

static struct ftrace_ops kprobe_ipmodify_ops __read_mostly = {
	.func = kprobe_ftrace_handler,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

static struct ftrace_ops *const kprobe_ftrace_ops_by_kind[FTRACE_OPS_NR] = {
	[FTRACE_OPS_PLAIN] = &kprobe_ftrace_ops,
	[FTRACE_OPS_IPMODIFY] = &kprobe_ipmodify_ops,
};

/* How many sites are in each ops' filter. Under kprobe_mutex. */
static unsigned int kprobe_ftrace_users[FTRACE_OPS_NR];

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

	if (kprobe_ftrace_disabled)
		return -ENODEV;

	if (remove) {
		if (*users == nr)
			unregister_ftrace_function(ops);
		*users -= nr;
		return ftrace_set_filter_ips(ops, ips, nr, 1, 0);
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

static int cmp_filter_change(const void *a, const void *b)
{
	const struct ftrace_filter_change *x = a, *y = b;

	return order_ulong(x->ip, y->ip);
}

/*
 * Apply a batch's changes to one filter and free them: removals first,
 * then additions. Sites that could not be added are marked unarmed.
 * The ips to add fill l->ips from the front, those to remove from the
 * back: together they are at most one per change.
 */
static int ftrace_changes_apply(struct ftrace_filter_changes *l, int kind)
{
	struct ftrace_filter_change *c = l->change;
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
	if (nr_del)
		ret = ftrace_filter_update(kind, del, nr_del, true);
	if (nr_add) {
		err = ftrace_filter_update(kind, add, nr_add, false);
		if (err) {
			pr_warn("could not arm %u ftrace sites: %d\n", nr_add, err);
			for (i = 0; i < nr_add; i++) {
				struct kprobe *site = get_kprobe((void *)add[i]);

				if (site)
					site->flags &= ~(KPROBE_FLAG_ARMED | KPROBE_FLAG_IPMODIFY);
			}
		}
		ret = ret ?: err;
	}
out:
	kfree(l->change);
	kfree(l->ips);
	return ret;
}

static void kprobes_lock_text(void)
{
	cpus_read_lock();
	jump_label_lock();
	mutex_lock(&text_mutex);
}

/*
 * Start a batch; text_mutex is held until batch_publish(). Paths that may
 * write text near a retiring site's jump, or need it gone, start with
 * batch_begin_retired() instead.
 */
static void batch_begin(struct kprobe_batch *b)
{
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

/* Apply the queued breakpoint writes; text_mutex held. */
static void batch_apply_text(struct kprobe_batch *b)
{
	if (b->poked)
		arch_kprobe_queue_apply();
	b->poked = false;
}

/* ---- the optimizer: which sites get a jump ------------------------------ */

#ifdef CONFIG_OPTPROBES
/*
 * Private site flag: on the optimizer's queue (optimizing_list, or the
 * list the optimizer claimed from it). Under kprobe_mutex.
 */
#define KPROBE_FLAG_OPT_QUEUED	BIT(28)

/*
 * Private site flag: the optimizer wrote the site's jump at some time.
 * Never cleared: a task may have taken the jump and been preempted in
 * the detour before it called the arch's handler, which reads the site,
 * and only an RCU-tasks grace period tells when none is left there. So
 * such a site is freed after one (see retired_sites), whether it is
 * still optimized when its last probe goes or had its jump taken out
 * before (disabled, blocked, the sysctl, the enabled switch).
 */
#define KPROBE_FLAG_JUMPED	BIT(24)

/*
 * Private site flag: armed and optimizable but for a probe inside its
 * region. requeue_covering_sites() looks for such sites when a probe
 * goes, and only while there are any (nr_blocked_sites), so that
 * removing thousands of probes costs no region lookups when none waits.
 * Both under kprobe_mutex; set and cleared by site_check_optimizable().
 */
#define KPROBE_FLAG_OPT_BLOCKED	BIT(25)
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
static struct kprobe *region_probe(struct optimized_kprobe *op)
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
	return region_probe(to_op(site));
}

#ifndef arch_kprobe_queue_optimize
/*
 * Arches with the tree's optprobe interface (arm, powerpc) write each
 * jump, and each breakpoint that replaces one, at once: the queue is
 * theirs to batch, and arch_kprobe_queue_apply() has nothing left to do.
 */
void arch_kprobe_queue_optimize(struct optimized_kprobe *op)
{
	LIST_HEAD(one);

	list_add(&op->list, &one);
	arch_optimize_kprobes(&one);	/* takes @op off the list */
}

void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op, bool armed)
{
	/*
	 * A site to be disarmed gets its original instruction over the
	 * jump in one write: it may be out of the table already (retiring),
	 * and a breakpoint there, even for a moment, would be one that no
	 * probe owns.
	 */
	if (armed)
		arch_unoptimize_kprobe(op);	/* the breakpoint is back */
	else
		arch_disarm_kprobe(&op->kp);
}
#endif

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
	aggr_run_pre_handlers(p, regs);
	__this_cpu_write(current_kprobe, p);
}
NOKPROBE_SYMBOL(opt_pre_handler);

static void site_set_blocked(struct kprobe *site, bool blocked)
{
	if (!!(site->flags & KPROBE_FLAG_OPT_BLOCKED) == blocked)
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
static bool site_check_optimizable(struct kprobe *site, bool armed)
{
	bool may = armed && kprobes_optimization && site_wants_armed(site) &&
		   site_has_detour(site) && !site->post_handler;
	bool blocked = may && region_has_probe(site);

	site_set_blocked(site, blocked);
	return may && !blocked;
}

/*
 * Build @op's detour buffer, if the arch can reach @p's site by a jump:
 * the decision for registering and for the query file.
 */
static int prepare_detour(struct optimized_kprobe *op, struct kprobe *p)
{
	if (kprobe_ftrace(p))
		return kprobe_refuse(-EINVAL, "ftrace's site: it makes a call already");
	return arch_prepare_optimized_kprobe(op, p);
}

/* Give an aggregate site a detour buffer, if the arch can reach it by a jump. */
static bool site_prepare_detour(struct kprobe *site, struct kprobe *p)
{
	return !prepare_detour(to_op(site), p);
}

static void site_remove_detour(struct kprobe *site)
{
	site_set_blocked(site, false);
	arch_remove_optimized_kprobe(to_op(site));
}

/* Must the site outlive an RCU-tasks grace period? See KPROBE_FLAG_JUMPED. */
static bool site_had_jump(struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_JUMPED;
}

/*
 * Is the site optimized, or queued to be with nothing left to decide?
 * This is what [OPTIMIZED] in the list means, as in the tree: a user who
 * enables a probe and reads the list sees what it is going to be, not
 * that the jump is still a few jiffies and an RCU-tasks grace period
 * away (wait_for_kprobe_optimizer() waits for that). Under kprobe_mutex.
 */
static bool site_listed_optimized(struct kprobe *site)
{
	return site->flags & (KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_OPT_QUEUED);
}

static void optimizer_queue(struct kprobe *site)
{
	if (site->flags & (KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_OPT_QUEUED))
		return;
	site->flags |= KPROBE_FLAG_OPT_QUEUED;
	list_add_tail(&to_op(site)->list, &optimizing_list);
	schedule_delayed_work(&optimizer_work, OPTIMIZE_DELAY);
}

/*
 * Bring the site's optimization in line with site_check_optimizable(),
 * given whether the site is to stay armed: queue it for the optimizer,
 * or take it off the queue and take its jump out. The jump is replaced
 * by the int3 when the site stays armed, by the original bytes when not
 * (the site is then disarmed here).
 */
static void site_sync_optimized(struct kprobe_batch *b, struct kprobe *site,
				bool armed)
{
	if (!kprobe_is_aggr(site))
		return;
	if (site_check_optimizable(site, armed)) {
		optimizer_queue(site);
		return;
	}
	if (site->flags & KPROBE_FLAG_OPT_QUEUED)
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
static void sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN; k++) {
		site = get_kprobe(addr - k);
		if (!site || !site_has_detour(site) ||
		    !arch_within_optimized_kprobe(to_op(site), addr))
			continue;
		site_sync_optimized(b, site, site_wants_armed(site));
		batch_apply_text(b);
	}
}

/* The probe at @addr is gone from the table: covering sites may optimize. */
static void requeue_covering_sites(kprobe_opcode_t *addr)
{
	struct kprobe *site;
	int k;

	for (k = 1; k < OPTIMIZED_SPAN && nr_blocked_sites; k++) {
		site = get_kprobe(addr - k);
		if (site && kprobe_is_aggr(site) &&
		    (site->flags & KPROBE_FLAG_OPT_BLOCKED) &&
		    site_check_optimizable(site, site_is_armed(site)))
			optimizer_queue(site);
	}
}
#else
static bool site_prepare_detour(struct kprobe *site, struct kprobe *p)
{
	return false;
}

static void site_remove_detour(struct kprobe *site)
{
}

static bool site_had_jump(struct kprobe *site)
{
	return false;
}

static bool site_listed_optimized(struct kprobe *site)
{
	return false;
}

static void site_sync_optimized(struct kprobe_batch *b, struct kprobe *site,
				bool armed)
{
}

static void sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr)
{
}

static void requeue_covering_sites(kprobe_opcode_t *addr)
{
}
#endif /* CONFIG_OPTPROBES */

/*
 * Bring a site's armed state in line with site_wants_armed(), and its
 * optimization with site_check_optimizable(). Breakpoint writes are queued
 * in the arch (the caller holds text_mutex and calls batch_apply_text());
 * ftrace sites are collected for batch_publish().
 */
static int site_sync_armed(struct kprobe_batch *b, struct kprobe *site)
{
	bool want = site_wants_armed(site);

	site_sync_optimized(b, site, want);
	if (kprobe_ftrace(site))
		return ftrace_site_sync(b, site, want);
	if (want == site_is_armed(site))
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

/* ---- preparing and releasing a site's arch state ------------------------ */

#ifndef arch_remove_kprobe
void __weak arch_remove_kprobe(struct kprobe *p)
{
}
#endif

#ifdef CONFIG_GENERIC_BUG
static bool is_bug_site(unsigned long addr)
{
	return find_bug(addr);
}
#else
static bool is_bug_site(unsigned long addr)
{
	return false;
}
#endif

#ifdef CONFIG_MODULES
/* Keep the module that holds @addr from going away while we place a probe. */
static int pin_probed_module(unsigned long addr, struct module **probed_mod)
{
	struct module *mod;

	preempt_disable();
	mod = __module_text_address(addr);
	if (mod && !try_module_get(mod)) {
		/* Its refcount is dead: the module is being unloaded. */
		preempt_enable();
		return kprobe_refuse(-ENOENT, "the module is going");
	}
	preempt_enable();
	if (!mod)
		return 0;

	/* A module's init text is freed once it is live. */
	if (mod->state == MODULE_STATE_GOING ||
	    (within_module_init(addr, mod) && mod->state != MODULE_STATE_COMING)) {
		module_put(mod);
		return kprobe_refuse(-ENOENT,
				     "the module is going, or this is its freed init text");
	}
	*probed_mod = mod;
	return 0;
}
#else
static int pin_probed_module(unsigned long addr, struct module **probed_mod)
{
	return 0;
}
#endif

/*
 * Is @addr kernel or module text? On success a module that holds it is
 * pinned in *@probed_mod until the caller is done registering.
 */
static int pin_probed_text(unsigned long addr, struct module **probed_mod)
{
	*probed_mod = NULL;
	if (!core_kernel_text(addr) && !is_module_text_address(addr))
		return kprobe_refuse(-EINVAL, "not kernel or module text");
	return pin_probed_module(addr, probed_mod);
}

/*
 * Jump labels and static calls rewrite their sites, and BUG() sites trap
 * on purpose; the kernel lists each kind in a table, and finding out
 * whether an address is in one walks the whole table. An arch that can
 * tell from the instruction that it is in none says so here.
 */
bool __weak arch_kprobe_may_be_listed_site(unsigned long addr)
{
	return true;
}

bool __weak arch_kprobe_boostable(struct kprobe *p, const char **why)
{
	*why = "not on this architecture";
	return false;
}

/*
 * Code in front of a function that is not part of it: the padding that
 * call depth tracking rewrites (__pfx_foo), and the kCFI or FineIBT
 * preamble (__cfi_foo), whose bytes are the type hash that indirect
 * callers check. By name: nothing else marks them.
 */
static bool is_preamble_symbol(const char *name)
{
	return str_has_prefix(name, "__pfx_") || str_has_prefix(name, "__cfi_");
}

/*
 * Everything else that makes an address unprobeable, whatever the arch.
 * Called with kprobe_mutex and the text locks held, the text pinned.
 * The order of the checks decides the error for an address that fails
 * several, and follows the tree's.
 */
static int check_probe_address(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr;
	unsigned long ftrace_addr;

	/*
	 * Only the site itself is ftrace's. Elsewhere in the ftrace call, the
	 * arch's boundary check refuses; and a symbol's first instruction
	 * before the site (arm64's patchable entry) is an instruction as any.
	 */
	ftrace_addr = ftrace_location(addr);
	if (ftrace_addr == addr) {
		if (!IS_ENABLED(CONFIG_KPROBES_ON_FTRACE))
			return kprobe_refuse(-EINVAL,
					     "ftrace's call site, without KPROBES_ON_FTRACE");
		p->flags |= KPROBE_FLAG_FTRACE;
	}

	/* The symbol place_probe() found: @addr is in it. */
	if (in_blacklisted_range(addr))
		return kprobe_refuse(-EINVAL, rule_blacklisted);
	if (blacklisted_piece(addr, probed_function.name,
			      probed_function.modname[0] ? probed_function.modname : NULL))
		return kprobe_refuse(-EINVAL,
				     "a piece (.cold, .part, ...) of a blacklisted function");
	if (is_preamble_symbol(probed_function.name))
		return kprobe_refuse(-EINVAL, "a function's preamble (__pfx_, __cfi_)");
	/*
	 * ftrace's own site is in none of those tables, and looking walks
	 * all of each: the bug table costs as much as the rest of
	 * registering a probe at a function's entry.
	 */
	if (ftrace_addr == addr || !arch_kprobe_may_be_listed_site(addr))
		return 0;
	if (jump_label_text_reserved(p->addr, p->addr))
		return kprobe_refuse(-EINVAL, "a jump label site");
	if (static_call_text_reserved(p->addr, p->addr))
		return kprobe_refuse(-EINVAL, "a static call site");
	if (is_bug_site(addr))
		return kprobe_refuse(-EINVAL, "a BUG() or WARN() site");
	return 0;
}

/*
 * Every check of the probe point @p->addr (resolved) that needs no arch
 * state, in the order of the tree's, which decides the error code for an
 * address that fails several. Moves @p->addr as the arch wants it, sets
 * @site to the site already there, if any, and pins the text's module in
 * @mod. The one decision function for registering and for the query
 * file, so that they cannot disagree. kprobe_mutex and the text locks.
 */
static bool is_registered(struct kprobe *p, struct kprobe **site_out);

static int check_probe_point(struct kprobe *p, struct kprobe **site,
			     struct module **mod)
{
	int ret;

	*mod = NULL;
	ret = place_probe(p);
	if (ret)
		return ret;
	if (is_registered(p, site))
		return kprobe_refuse(-EINVAL, "this probe is registered already");
	ret = pin_probed_text((unsigned long)p->addr, mod);
	if (ret)
		return ret;
	return check_probe_address(p);
}

static int prepare_site(struct kprobe *p)
{
	if (kprobe_ftrace(p))
		return arch_prepare_kprobe_ftrace(p);
	return arch_prepare_kprobe(p);
}

/* ---- hit counters -------------------------------------------------------- */

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
 * A counter given back may still be counted into until the next grace
 * period: it is not handed out again before that, since kprobe_mutex is
 * held from giving it back until the grace period ends, and empty chunks
 * are destroyed only after one, by counter_trim(). All under
 * kprobe_mutex.
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
static unsigned int counter_chunks_empty;
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
	counter_chunks_empty++;
	counters_free += BITS_PER_LONG;
	return c;
}

static void chunk_destroy(struct counter_chunk *c)
{
	if (counter_cursor == c)
		counter_cursor = counter_chunks_nr > 1 ? chunk_step(c, true) : NULL;
	list_del(&c->list);
	counter_chunks_nr--;
	counter_chunks_empty--;
	counters_free -= BITS_PER_LONG;
	free_percpu(c->counters);
	kfree(c);
}

static unsigned long __percpu *counter_alloc(void)
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
	if (!c->used)
		counter_chunks_empty--;
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

/* Is @counter one counter_alloc() handed out and not given back yet? */
static bool counter_in_use(unsigned long __percpu *counter)
{
	struct counter_chunk *c = counter ? chunk_search(counter) : NULL;

	return c && (c->used & chunk_bit(c, counter));
}

/* Give back a counter from counter_alloc(); see above for when. */
static void counter_free(unsigned long __percpu *counter)
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
	if (!c->used)
		counter_chunks_empty++;
}

/*
 * Destroy empty chunks, once no CPU can be counting into the counters
 * given back so far (after the grace period of the batch that gave them
 * back). Half a chunk's worth of free counters stays, so that one probe
 * coming and going at a chunk's edge does not make and destroy a chunk
 * each time.
 */
static void counter_trim(void)
{
	struct counter_chunk *c, *next;

	lockdep_assert_held(&kprobe_mutex);
	list_for_each_entry_safe(c, next, &counter_chunks, list) {
		if (!counter_chunks_empty ||
		    counters_free < BITS_PER_LONG + BITS_PER_LONG / 2)
			return;
		if (!c->used)
			chunk_destroy(c);
	}
}

static void free_aggregate(struct kprobe *site)
{
	counter_free(site->nhit);
	kfree(to_aggr(site));
}

static void release_site(struct kprobe *site)
{
	if (!kprobe_ftrace(site))
		arch_remove_kprobe(site);
	if (!kprobe_is_aggr(site))
		return;
	site_remove_detour(site);
	free_aggregate(site);
}

/* ---- registering -------------------------------------------------------- */

static void remove_probe(struct kprobe_batch *b, struct kprobe *p, struct kprobe *site);

/* Is @p registered, as a site or as an aggregate's member? */
static bool is_registered(struct kprobe *p, struct kprobe **site_out)
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

static struct kprobe *alloc_aggregate(void)
{
	struct kprobe_aggregate *agg = kzalloc(sizeof(*agg), GFP_KERNEL);

	if (!agg)
		return NULL;
	aggr_site(agg)->nhit = counter_alloc();
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

static unsigned long sum_hit_counter(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

/*
 * Start or stop counting member @m's hits by its site's counter; see
 * KPROBE_FLAG_SITE_COUNTED. A hit racing with the switch may be counted
 * or not: these are statistics, and the hit path takes no lock.
 */
static void member_set_counted(struct kprobe *site, struct kprobe *m, bool counted)
{
	unsigned long site_hits;

	if (!!(m->flags & KPROBE_FLAG_SITE_COUNTED) == counted)
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

/* After members joined, left the running or came back: count the right ones. */
static void sync_member_counting(struct kprobe *site)
{
	struct kprobe *m;

	list_for_each_entry(m, &site->list, list)
		member_set_counted(site, m, !kprobe_disabled(m));
}

/*
 * The hits that ran @p's handlers so far, summed over the CPUs; 0 when
 * @p is not registered. Under kprobe_mutex.
 */
static unsigned long probe_hits(struct kprobe *p)
{
	unsigned long hits;
	struct kprobe *site;

	if (!p->nhit)
		return 0;
	hits = sum_hit_counter(p->nhit);
	if ((p->flags & KPROBE_FLAG_SITE_COUNTED) && is_registered(p, &site))
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
	hits = probe_hits(kp);
	mutex_unlock(&kprobe_mutex);
	return hits;
}
EXPORT_SYMBOL_GPL(kprobe_hits);

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
	ag->flags = lone->flags;
	ag->pre_handler = aggr_pre_handler;
	ag->post_handler = lone->post_handler ? aggr_post_handler : NULL;
	INIT_LIST_HEAD(&ag->list);
	list_add(&lone->list, &ag->list);
	member_set_counted(ag, lone, !kprobe_disabled(lone));
	hlist_replace_rcu(&lone->hlist, &ag->hlist);
	index_replace(lone, ag);
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
	WRITE_ONCE(site->post_handler, post ? aggr_post_handler : NULL);
	sync_member_counting(site);
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
	bool may_jump = IS_ENABLED(CONFIG_OPTPROBES) && !kprobe_ftrace(p);
	struct kprobe *ag = NULL;

	if (may_jump || !arch_kprobe_counts_hits) {
		ag = alloc_aggregate();
		if (!ag && !arch_kprobe_counts_hits)
			return ERR_PTR(-ENOMEM);
	}
	if (ag) {
		ag->addr = p->addr;
		if ((!may_jump || !site_prepare_detour(ag, p)) && arch_kprobe_counts_hits) {
			free_aggregate(ag);
			ag = NULL;
		}
	}
	hlist_add_head_rcu(&p->hlist, kprobe_bucket(p->addr));
	index_insert(p);
	return ag ? make_aggregate(p, ag) : p;
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
	site_remove_detour(site);
	/*
	 * Still GONE while the arch reads the new text: its saved bytes are
	 * the old text's, and must not be taken for the new one's.
	 */
	site->flags &= ~(KPROBE_FLAG_FTRACE | KPROBE_FLAGS_PRIVATE);
	site->flags |= p->flags & KPROBE_FLAG_FTRACE;
	ret = prepare_site(site);
	if (ret)
		return ERR_PTR(ret);
	site->flags &= ~KPROBE_FLAG_GONE;
	/*
	 * Not being able to optimize the new text is no error. The detour
	 * is built from the site, which holds the new instruction; @p is
	 * not prepared (arm copies the opcode and sets how to run it).
	 */
	site_prepare_detour(site, site);
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

	if (p->addr && is_registered(p, &site))
		return -EINVAL;
	addr = probe_target(p->addr, p->symbol_name, p->offset);
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

	ret = check_probe_point(p, &site, &mod);
	if (ret)
		goto unpin;	/* p->nhit may be a registered probe's: keep it */

	p->nhit = counter_alloc();
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
			site = make_aggregate(site, NULL);
			if (!site) {
				ret = -ENOMEM;
				goto out;
			}
		}
		p->opcode = site->opcode;
		list_add_tail_rcu(&p->list, &site->list);
		update_aggregate(site);
	} else {
		ret = index_reserve();
		if (!ret)
			ret = prepare_site(p);
		if (ret)
			goto out;
		site = insert_new_site(p);
		if (IS_ERR(site)) {
			ret = PTR_ERR(site);
			release_site(p);	/* prepared, never in the table */
			goto out;
		}
		sync_covering_sites(b, p->addr);
	}

	ret = site_sync_armed(b, site);
	if (ret)
		remove_probe(b, p, site);
out:
	if (ret && !(p->flags & KPROBE_FLAG_UNHOOKED)) {
		/* Never published: no CPU can be counting into it. */
		counter_free(p->nhit);
		p->nhit = NULL;
	}
unpin:
	if (ret)
		probed_function.size = 0;
	if (mod)
		module_put(mod);
	return ret;
}

/*
 * The hit counters of those of @kps that the batch took out of the table:
 * given back between batch_publish() and batch_release(), dropped from
 * the probes after the grace period, when no CPU reads them any more.
 */
static void give_back_counters(struct kprobe **kps, int num)
{
	int i;

	for (i = 0; i < num; i++)
		if (kps[i] && (kps[i]->flags & KPROBE_FLAG_UNHOOKED))
			counter_free(kps[i]->nhit);
}

static void drop_counters(struct kprobe **kps, int num)
{
	int i;

	for (i = 0; i < num; i++) {
		if (!kps[i] || !(kps[i]->flags & KPROBE_FLAG_UNHOOKED))
			continue;
		kps[i]->nhit = NULL;
		kps[i]->flags &= ~KPROBE_FLAG_UNHOOKED;
	}
}

/*
 * Optimized sites whose last probe was unregistered ("retiring"): their
 * jump is still in the text, and their detour runs no handler, for they
 * have no members. Linked by kprobe_aggregate::dying, under kprobe_mutex.
 *
 * They leave the table at once, as an unregistered site does.
 * Unregistering writes back their text, RETIRE_CHUNK sites at a time,
 * while its grace period runs (retire_while_waiting()); retire_work
 * writes back the rest, then frees them (see retired_sites).
 *
 * Since their jump is still in the text, every path that could write
 * near it, or needs it gone, retires them first: registering (a new
 * probe at or inside a retiring site), the optimizer before it writes
 * jumps (a covering site may optimize now), text going away and the
 * global switches start their batch with batch_begin_retired(); the
 * optimizer's first phase and waiting for the optimizer call
 * retire_sites() themselves.
 */
static LIST_HEAD(retiring_sites);
static unsigned int nr_retiring;

/*
 * Retiring sites written back per batch: one text_poke batch (TP_VEC_MAX
 * with 4 KiB pages), three text syncs and a few hundred small writes,
 * a small part of a grace period.
 */
#define RETIRE_CHUNK	256

/* Take a site out of the table and the index, if it is still in them. */
static void site_unhash(struct kprobe *site)
{
	if (hlist_unhashed(&site->hlist))
		return;
	hlist_del_init_rcu(&site->hlist);
	index_remove(site);
}

static bool site_retires_later(struct kprobe *site)
{
	return kprobe_is_aggr(site) && kprobe_optimized(site) && !kprobe_gone(site);
}

/*
 * Take @p out of its site. A site left without members is disarmed now
 * and leaves the table in batch_publish(), once the disarming reached
 * every CPU, or, if it is optimized, retires. Either way the batch waits
 * for a grace period before it returns, since a CPU may still be running
 * @p's handlers.
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
			site_sync_armed(b, site);
			return;
		}
	}
	site->flags |= KPROBE_FLAG_DYING;
	if (site_retires_later(site)) {
		/* Its detour needs no lookup: out of the table now. */
		site_unhash(site);
		list_add_tail(&to_aggr(site)->dying, &retiring_sites);
		nr_retiring++;
		return;
	}
	site_sync_armed(b, site);
	if (kprobe_is_aggr(site))
		list_add_tail(&to_aggr(site)->dying, &b->free_aggregates);
	else
		list_add_tail(&site->list, &b->free_list);
}

/*
 * Start the batch's grace period now, so that it runs while the caller
 * does what needs none; synchronize_rcu() would start it only when
 * called, and waits the same way: a callback that wakes it. While the
 * kernel boots, synchronize_rcu() is expedited (or has nothing to wait
 * for), so batch_release() leaves it to that.
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

static bool batch_grace_period_over(struct kprobe_batch *b)
{
	return !b->grace_started || completion_done(&b->grace.completion);
}

static void batch_wait_grace_period(struct kprobe_batch *b)
{
	if (!b->grace_started) {
		synchronize_rcu();
		return;
	}
	wait_for_completion(&b->grace.completion);
	destroy_rcu_head_on_stack(&b->grace.head);
	b->grace_started = false;
}

/*
 * Publish a batch: apply the text writes, drop text_mutex, update ftrace,
 * take the dying sites out of the table and start the grace period after
 * which no CPU is running a handler of the removed probes nor executing
 * the instruction copy of a removed site. batch_release() waits for it;
 * kprobe_mutex is held from one to the other.
 */
static int batch_publish(struct kprobe_batch *b)
{
	struct kprobe_aggregate *agg;
	struct kprobe *site;
	int ret, err;

	batch_apply_text(b);
	kprobes_unlock_text();

	ret = ftrace_changes_apply(&b->ftrace[FTRACE_OPS_PLAIN], FTRACE_OPS_PLAIN);
	err = ftrace_changes_apply(&b->ftrace[FTRACE_OPS_IPMODIFY], FTRACE_OPS_IPMODIFY);
	ret = ret ?: err;

	list_for_each_entry(site, &b->free_list, list)
		site_unhash(site);
	list_for_each_entry(agg, &b->free_aggregates, dying)
		site_unhash(aggr_site(agg));
	if (b->need_sync)
		batch_start_grace_period(b);

	index_shrink();
	list_for_each_entry(site, &b->free_list, list)
		requeue_covering_sites(site->addr);
	list_for_each_entry(agg, &b->free_aggregates, dying)
		requeue_covering_sites(aggr_site(agg)->addr);
	return ret;
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
 * whose jump had been taken out before (batch_release()). Under
 * kprobe_mutex.
 */
static LIST_HEAD(retired_sites);

/*
 * Have retire_work free the retired sites, and write back what is still
 * retiring. Unbound: it may write thousands of sites' text, and should
 * not wait for the CPU that queued it, where the caller of unregister
 * goes on.
 */
static void queue_retire_work(void)
{
	if (!list_empty(&retired_sites))
		queue_work(system_unbound_wq, &retire_work);
}

/* Wait for the grace period batch_publish() started; free the dying sites. */
static void batch_release(struct kprobe_batch *b)
{
	struct kprobe_aggregate *agg, *next_agg;
	struct kprobe *site, *next;

	if (!b->need_sync)
		return;
	batch_wait_grace_period(b);
	list_for_each_entry_safe(site, next, &b->free_list, list) {
		list_del_init(&site->list);
		site->flags &= ~KPROBE_FLAGS_PRIVATE;
		release_site(site);
	}
	list_for_each_entry_safe(agg, next_agg, &b->free_aggregates, dying) {
		list_del_init(&agg->dying);
		if (site_had_jump(aggr_site(agg)))
			list_add_tail(&agg->dying, &retired_sites);
		else
			release_site(aggr_site(agg));
	}
	counter_trim();
	queue_retire_work();
}

static int batch_finish(struct kprobe_batch *b)
{
	int ret = batch_publish(b);

	batch_release(b);
	return ret;
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

	batch_begin(&b);
	list_for_each_entry(agg, &chunk, dying)
		site_sync_armed(&b, aggr_site(agg));
	batch_finish(&b);
	list_for_each_entry(agg, &chunk, dying)
		requeue_covering_sites(aggr_site(agg)->addr);
	list_splice_tail(&chunk, &retired_sites);
}

/* Retire every retiring site; retire_work frees them. kprobe_mutex held. */
static void retire_sites(void)
{
	retire_some_sites(UINT_MAX);
	queue_retire_work();
}

static void retire_work_fn(struct work_struct *work)
{
	struct kprobe_aggregate *agg, *next;
	LIST_HEAD(done);

	mutex_lock(&kprobe_mutex);
	retire_some_sites(UINT_MAX);
	list_splice_init(&retired_sites, &done);
	mutex_unlock(&kprobe_mutex);
	if (list_empty(&done))
		return;

	synchronize_rcu_tasks();

	mutex_lock(&kprobe_mutex);
	list_for_each_entry_safe(agg, next, &done, dying) {
		list_del_init(&agg->dying);
		release_site(aggr_site(agg));
	}
	counter_trim();
	mutex_unlock(&kprobe_mutex);
}

/*
 * Start a batch after writing back the retiring sites' text: for paths
 * that may write near their jumps (registering, the optimizer) or need
 * them gone (text going away, the global switches).
 */
static void batch_begin_retired(struct kprobe_batch *b)
{
	retire_sites();
	batch_begin(b);
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
 * kprobes are initialized; -EBUSY or -ENODEV when ftrace cannot take a
 * probe on its site (another ftrace user that may change the IP, such
 * as a livepatch, holds the function); -ENOMEM.
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
	batch_begin_retired(&b);
	for (i = 0; i < num; i++) {
		ret = kps[i] ? resolve_new_probe(kps[i]) : -EINVAL;
		if (!ret)
			ret = add_probe(&b, kps[i]);
		if (ret)
			break;
	}
	err = batch_finish(&b);
	if (ret) {
		give_back_counters(&kps[i], 1);
		drop_counters(&kps[i], 1);
	}
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

/*
 * While @b's grace period runs, write back retiring sites' text: a
 * chunk at a time, at least one, until the grace period is over, so
 * that unregistering takes hardly longer than it would anyway. The
 * rest is retire_work's, as is freeing them.
 */
static void retire_while_waiting(struct kprobe_batch *b)
{
	do
		retire_some_sites(RETIRE_CHUNK);
	while (nr_retiring && !batch_grace_period_over(b));
	queue_retire_work();
}

/* Unregister those of @kps that are registered; kprobe_mutex held. */
static void unregister_locked(struct kprobe **kps, int num)
{
	struct kprobe_batch b;
	struct kprobe *site;
	int i;

	batch_begin(&b);
	for (i = 0; i < num; i++) {
		if (!kps[i])
			continue;
		if (kps[i]->addr && is_registered(kps[i], &site)) {
			if (!(kps[i]->flags & KPROBE_FLAG_UNHOOKED))
				remove_probe(&b, kps[i], site);
		} else if (!(kps[i]->flags & KPROBE_FLAG_UNHOOKED) ||
			   !counter_in_use(kps[i]->nhit)) {
			/*
			 * Not registered (nor taken out earlier in this call,
			 * listed twice): a stale flag must not make us give
			 * back what ->nhit points at; and, as the tree does,
			 * ->addr is cleared to tell the caller.
			 */
			kps[i]->flags &= ~KPROBE_FLAG_UNHOOKED;
			kps[i]->addr = NULL;
		}
	}
	batch_publish(&b);
	give_back_counters(kps, num);
	retire_while_waiting(&b);
	batch_release(&b);
	drop_counters(kps, num);
}

/**
 * unregister_kprobes() - unregister several probes at once
 * @kps: the probes; for one that is not registered, ->addr is set to
 *	NULL, and the others are unregistered all the same
 * @num: how many
 *
 * Waits for one RCU grace period, whatever @num, so that no CPU is still
 * running a handler of these probes when it returns.
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
	if (!p || !p->addr || !is_registered(p, &site)) {
		mutex_unlock(&kprobe_mutex);
		return -EINVAL;
	}
	if (kprobe_gone(p)) {
		mutex_unlock(&kprobe_mutex);
		return disable ? 0 : -EINVAL;
	}
	batch_begin(&b);
	if (disable)
		p->flags |= KPROBE_FLAG_DISABLED;
	else
		p->flags &= ~KPROBE_FLAG_DISABLED;
	update_aggregate(site);
	ret = site_sync_armed(&b, site);
	ret = batch_finish(&b) ?: ret;
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

/* ---- text that goes away: module unload, init memory -------------------- */

void __weak arch_kprobe_text_gone(unsigned long start, unsigned long end)
{
}

/*
 * The text in [start, end) is about to be freed: its sites go GONE and
 * stop being armed (an ftrace site leaves our filter). kprobe_mutex held.
 */
static void mark_range_gone(unsigned long start, unsigned long end)
{
	struct kprobe_batch b;
	struct kprobe *site, *m;
	unsigned int i;

	arch_kprobe_text_gone(start, end);
	probed_function.size = 0;
	batch_begin_retired(&b);
	for (i = 0; i < KPROBE_TABLE_SIZE; i++) {
		hlist_for_each_entry(site, &kprobe_table[i], hlist) {
			unsigned long a = (unsigned long)site->addr;

			if (a < start || a >= end)
				continue;
			site->flags |= KPROBE_FLAG_GONE;
			if (kprobe_is_aggr(site)) {
				list_for_each_entry(m, &site->list, list)
					m->flags |= KPROBE_FLAG_GONE;
				sync_member_counting(site);
			}
			site_sync_armed(&b, site);
		}
	}
	batch_finish(&b);
}

#ifdef CONFIG_MODULES
static void module_mem_gone(struct module *mod, bool init_only)
{
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];

		if (!mem->size || (init_only && !mod_mem_type_is_init(type)))
			continue;
		mark_range_gone((unsigned long)mem->base,
				(unsigned long)mem->base + mem->size);
	}
}

static void blacklist_remove_range(unsigned long start, unsigned long end)
{
	struct kprobe_blacklist_entry *ent, *next;

	list_for_each_entry_safe(ent, next, &kprobe_blacklist, list) {
		if (ent->start_addr < start || ent->start_addr >= end)
			continue;
		list_del_rcu(&ent->list);
		kfree_rcu(ent, rcu);
	}
}

static void module_blacklist_update(struct module *mod, bool add)
{
	unsigned long start, end;

	start = (unsigned long)mod->kprobes_text_start;
	end = start + mod->kprobes_text_size;
	if (add) {
		if (mod->num_kprobe_blacklist)
			blacklist_symbols(mod->kprobe_blacklist,
					  mod->kprobe_blacklist + mod->num_kprobe_blacklist);
		kprobe_add_area_blacklist(start, end);
		return;
	}
	for_each_mod_mem_type(type) {
		struct module_memory *mem = &mod->mem[type];

		if (mem->size)
			blacklist_remove_range((unsigned long)mem->base,
					       (unsigned long)mem->base + mem->size);
	}
}

static int kprobes_module_callback(struct notifier_block *nb,
				   unsigned long val, void *data)
{
	struct module *mod = data;

	if (val != MODULE_STATE_COMING && val != MODULE_STATE_LIVE &&
	    val != MODULE_STATE_GOING)
		return NOTIFY_DONE;

	mutex_lock(&kprobe_mutex);
	switch (val) {
	case MODULE_STATE_COMING:
		module_blacklist_update(mod, true);
		break;
	case MODULE_STATE_LIVE:
		/* The init text is freed right after this. */
		module_mem_gone(mod, true);
		break;
	case MODULE_STATE_GOING:
		module_mem_gone(mod, false);
		module_blacklist_update(mod, false);
		break;
	}
	mutex_unlock(&kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kprobes_module_nb = {
	.notifier_call = kprobes_module_callback,
	.priority = 0,
};

static int __init register_kprobes_module_notifier(void)
{
	return register_module_notifier(&kprobes_module_nb);
}
#else
static int __init register_kprobes_module_notifier(void)
{
	return 0;
}
#endif /* CONFIG_MODULES */

/**
 * kprobe_free_init_mem() - the kernel's init text is about to be freed
 */
void kprobe_free_init_mem(void)
{
	mutex_lock(&kprobe_mutex);
	mark_range_gone((unsigned long)_sinittext, (unsigned long)_einittext);
	mutex_unlock(&kprobe_mutex);
}

/* ---- kretprobes --------------------------------------------------------- */

#ifdef CONFIG_KRETPROBES

struct kretprobe_blackpoint __weak kretprobe_blacklist[] = {
	{ NULL, NULL },
};

/*
 * The arch's list; one that lists nothing says so with a size of 0, and
 * s390's array is then empty, without even the entry that ends a list.
 */
#define for_each_kretprobe_blackpoint(bp)				\
	for (bp = kretprobe_blacklist; kretprobe_blacklist_size && bp->name; bp++)

int __weak arch_trampoline_kprobe(struct kprobe *p)
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

/*
 * Kretprobe instances
 * -------------------
 * Each kretprobe owns a pool of rp->maxactive instances, allocated at
 * registration. Its entry probe (kretprobe_on_entry()) takes one for
 * the call, runs entry_handler, and hooks the return: the arch saves
 * the return address in the instance and puts its trampoline's address
 * in its place. When the function returns through the trampoline, the
 * return handler runs and the instance goes back to the pool. With no
 * instance free, the call is not hooked and rp->nmissed counts it.
 *
 * Where the arch has rethook, a rethook owns the pool and the per-task
 * list of pending returns, and calls kretprobe_on_return(). Elsewhere
 * the core keeps both itself (!CONFIG_KRETPROBE_ON_RETHOOK below). Each
 * gives kretprobe_on_entry() the same three steps: take an instance,
 * give back one that was not used, hook the return; and the rest of the
 * core the same three: allocate the pool, stop it, release it.
 */

/*
 * Run @rp's return handler for @ri as if @rp's probe had been hit, then
 * make @prev the CPU's current_kprobe again: the caller knows it, and
 * rethook's path, the hot one, knows it is NULL without reading it.
 */
static nokprobe_inline void kretprobe_run_handler(struct kretprobe *rp,
						  struct kretprobe_instance *ri,
						  struct pt_regs *regs,
						  struct kprobe *prev)
{
	/* Probes hit inside the handler are counted as missed. */
	__this_cpu_write(current_kprobe, &rp->kp);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	rp->handler(ri, regs);
	__this_cpu_write(current_kprobe, prev);
}

#ifdef CONFIG_KRETPROBE_ON_RETHOOK
/*
 * No probe is running here: a function entered while one ran was not
 * hooked (its entry hit counted as missed), so its return does not come
 * through the trampoline.
 */
static void kretprobe_on_return(struct rethook_node *node, void *data,
				unsigned long ret_addr, struct pt_regs *regs)
{
	struct kretprobe *rp = data;

	if (rp->handler)
		kretprobe_run_handler(rp, container_of(node, struct kretprobe_instance,
						       node), regs, NULL);
}
NOKPROBE_SYMBOL(kretprobe_on_return);

static nokprobe_inline struct kretprobe_instance *
kretprobe_take_instance(struct kretprobe *rp)
{
	struct rethook_node *node = rethook_try_get(rp->rh);

	return node ? container_of(node, struct kretprobe_instance, node) : NULL;
}

static nokprobe_inline void kretprobe_unused_instance(struct kretprobe *rp,
						      struct kretprobe_instance *ri)
{
	rethook_recycle(&ri->node);
}

static nokprobe_inline void kretprobe_hook_return(struct kprobe *p,
						  struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	rethook_hook(&ri->node, regs, kprobe_ftrace(p));
}

static int kretprobe_pool_alloc(struct kretprobe *rp)
{
	struct rethook *rh;

	rh = rethook_alloc(rp, kretprobe_on_return,
			   sizeof(struct kretprobe_instance) + rp->data_size,
			   rp->maxactive);
	if (IS_ERR(rh))
		return PTR_ERR(rh);
	rp->rh = rh;
	return 0;
}

/* After rp's probe is unregistered: instances in flight free it later. */
static void kretprobe_release(struct kretprobe *rp)
{
	if (rp->rh) {
		rethook_free(rp->rh);
		rp->rh = NULL;
	}
}

/* No new calls get an instance, and no handler starts, after this. */
static void kretprobe_stop(struct kretprobe *rp)
{
	if (rp->rh)
		rethook_stop(rp->rh);
}
#else /* !CONFIG_KRETPROBE_ON_RETHOOK */
/*
 * The core's own instances. rp->rph, the holder, owns the pool and
 * points back at rp until unregistering starts; each instance points at
 * the holder, which outlives rp until the last instance in flight comes
 * back (objpool_fini(), then objpool_drop() of the last one, frees it).
 *
 * A hooked instance sits on its task's list, current->kretprobe_instances,
 * newest first, until the function returns through the trampoline
 * (__kretprobe_trampoline_handler()) or the task is freed
 * (kprobe_flush_task()). Only the task itself changes its list, from a
 * probe handler or the trampoline, with kprobes busy on its CPU; an
 * unwinder may read the list of a task that is not running
 * (kretprobe_find_ret_addr()).
 *
 * rph->rp is RCU-protected: the handlers that give instances back run
 * with preemption off, and unregistering waits for a grace period
 * between clearing rph->rp and objpool_fini(). So an instance is pushed
 * back into a pool that is still live, or dropped once rph->rp is NULL.
 */
static int kretprobe_instance_init(void *obj, void *holder)
{
	((struct kretprobe_instance *)obj)->rph = holder;
	return 0;
}

static int kretprobe_holder_free(struct objpool_head *pool, void *holder)
{
	kfree(holder);
	return 0;
}

static nokprobe_inline struct kretprobe_instance *
kretprobe_take_instance(struct kretprobe *rp)
{
	return objpool_pop(&rp->rph->pool);
}

static nokprobe_inline void kretprobe_unused_instance(struct kretprobe *rp,
						      struct kretprobe_instance *ri)
{
	objpool_push(ri, &rp->rph->pool);
}

static nokprobe_inline void kretprobe_hook_return(struct kprobe *p,
						  struct kretprobe_instance *ri,
						  struct pt_regs *regs)
{
	arch_prepare_kretprobe(ri, regs);
	__llist_add(&ri->llist, &current->kretprobe_instances);
}

static void kretprobe_instance_drop(struct rcu_head *head)
{
	struct kretprobe_instance *ri = container_of(head, struct kretprobe_instance, rcu);

	objpool_drop(ri, &ri->rph->pool);
}

/* An instance whose call is over: back to its pool, or freed with it. */
static void kretprobe_instance_done(struct kretprobe_instance *ri)
{
	struct kretprobe_holder *rph = ri->rph;

	if (rcu_access_pointer(rph->rp))
		objpool_push(ri, &rph->pool);
	else
		/*
		 * The last one frees the pool, with vfree(): not here, where
		 * interrupts may be off, but from an RCU callback.
		 */
		call_rcu(&ri->rcu, kretprobe_instance_drop);
}
NOKPROBE_SYMBOL(kretprobe_instance_done);

static int kretprobe_pool_alloc(struct kretprobe *rp)
{
	struct kretprobe_holder *rph;
	int ret;

	rph = kzalloc(sizeof(*rph), GFP_KERNEL);
	if (!rph)
		return -ENOMEM;
	ret = objpool_init(&rph->pool, rp->maxactive,
			   sizeof(struct kretprobe_instance) + rp->data_size,
			   GFP_KERNEL, rph, kretprobe_instance_init,
			   kretprobe_holder_free);
	if (ret) {
		kfree(rph);
		return ret;
	}
	rcu_assign_pointer(rph->rp, rp);
	rp->rph = rph;
	return 0;
}

/* After rp's probe is unregistered: instances in flight free it later. */
static void kretprobe_release(struct kretprobe *rp)
{
	if (rp->rph) {
		objpool_fini(&rp->rph->pool);
		rp->rph = NULL;
	}
}

/* No handler starts after this, nor after the grace period one that has. */
static void kretprobe_stop(struct kretprobe *rp)
{
	if (rp->rph)
		RCU_INIT_POINTER(rp->rph->rp, NULL);
}

void __weak arch_kretprobe_fixup_return(struct pt_regs *regs,
					kprobe_opcode_t *correct_ret_addr)
{
}

static bool kretprobe_saved_real_address(struct kretprobe_instance *ri)
{
	return ri->ret_addr != kretprobe_trampoline_addr();
}
NOKPROBE_SYMBOL(kretprobe_saved_real_address);

/*
 * The last instance of the call that returns now. The instances of one
 * call (several kretprobes on one function) are together at the head
 * of the list, and only the oldest of them, which hooked first, saved
 * the real return address; the others saved the trampoline's.
 */
static struct llist_node *kretprobe_call_end(struct task_struct *tsk)
{
	struct llist_node *node;

	for (node = tsk->kretprobe_instances.first; node; node = node->next)
		if (kretprobe_saved_real_address(llist_entry(node,
				struct kretprobe_instance, llist)))
			return node;
	return NULL;
}
NOKPROBE_SYMBOL(kretprobe_call_end);

/**
 * __kretprobe_trampoline_handler() - a hooked function returned
 * @regs: registers at the trampoline
 * @frame_pointer: what the arch saved as ri->fp when it hooked the call
 *
 * Called by the arch's trampoline code with kprobes busy on this CPU:
 * from a kprobe on the trampoline, or through
 * kretprobe_trampoline_handler(). Runs the return handlers of the
 * call's instances and gives the instances back.
 *
 * Return: the address the function was to return to.
 */
unsigned long __kretprobe_trampoline_handler(struct pt_regs *regs,
					     void *frame_pointer)
{
	struct kprobe *prev = kprobe_running();	/* busy, or the arch's probe */
	struct llist_node *node, *end, *next;
	struct kretprobe_instance *ri;
	kprobe_opcode_t *ret_addr;
	struct kretprobe *rp;

	end = kretprobe_call_end(current);
	if (!end) {
		/* Nowhere to return to: the task cannot go on. */
		pr_emerg("kretprobe: %s/%d returned to the trampoline with no hooked call\n",
			 current->comm, task_pid_nr(current));
		BUG();
	}
	ret_addr = llist_entry(end, struct kretprobe_instance, llist)->ret_addr;
	/* A handler's stack trace starts where the function returns to. */
	arch_kretprobe_fixup_return(regs, ret_addr);

	/*
	 * The handlers run with the instances still on the list: an unwinder
	 * called from one finds the real return address there.
	 */
	for (node = current->kretprobe_instances.first; ; node = node->next) {
		ri = llist_entry(node, struct kretprobe_instance, llist);
		/* Not this call's: a return was lost. No more handlers. */
		if (WARN_ON_ONCE(ri->fp != frame_pointer))
			break;
		rp = get_kretprobe(ri);
		if (rp && rp->handler)
			kretprobe_run_handler(rp, ri, regs, prev);
		if (node == end)
			break;
	}

	node = current->kretprobe_instances.first;
	current->kretprobe_instances.first = end->next;
	end->next = NULL;
	for (; node; node = next) {
		next = node->next;
		kretprobe_instance_done(llist_entry(node, struct kretprobe_instance, llist));
	}
	return (unsigned long)ret_addr;
}
NOKPROBE_SYMBOL(__kretprobe_trampoline_handler);

/**
 * kretprobe_find_ret_addr() - the real return address of a hooked call
 * @tsk: the task whose stack is being unwound
 * @fp: the frame pointer of the call that returns to the trampoline
 * @cur: where the previous lookup stopped; points at NULL for the first
 *
 * For unwinders that find the trampoline's address on a stack. Walks
 * @tsk's pending returns from *@cur on and leaves *@cur at the instance
 * it used, so that a walk up the stack finds each call's in turn.
 *
 * Return: the return address, or 0 when no instance has @fp.
 */
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	struct kretprobe_instance *ri;
	struct llist_node *node;

	if (WARN_ON_ONCE(!cur))
		return 0;
	node = *cur ? (*cur)->next : tsk->kretprobe_instances.first;
	for (; node; node = node->next) {
		ri = llist_entry(node, struct kretprobe_instance, llist);
		if (!kretprobe_saved_real_address(ri))
			continue;
		*cur = node;
		if (ri->fp == fp)
			return (unsigned long)ri->ret_addr;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kretprobe_find_ret_addr);
NOKPROBE_SYMBOL(kretprobe_find_ret_addr);

/**
 * kprobe_flush_task() - give back the instances of a task being freed
 * @tk: the task; it will never run again
 *
 * Its hooked calls never returned: it exited from inside them.
 */
void kprobe_flush_task(struct task_struct *tk)
{
	struct llist_node *node, *next;

	if (!kprobes_initialized)
		return;
	kprobe_busy_begin();
	node = __llist_del_all(&tk->kretprobe_instances);
	for (; node; node = next) {
		next = node->next;
		kretprobe_instance_done(llist_entry(node, struct kretprobe_instance, llist));
	}
	kprobe_busy_end();
}
NOKPROBE_SYMBOL(kprobe_flush_task);
#endif /* CONFIG_KRETPROBE_ON_RETHOOK */

static int kretprobe_on_entry(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = container_of(p, struct kretprobe, kp);
	struct kretprobe_instance *ri;

	ri = kretprobe_take_instance(rp);
	if (!ri) {
		rp->nmissed++;
		return 0;
	}
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		kretprobe_unused_instance(rp, ri);
		return 0;
	}
	kretprobe_hook_return(p, ri, regs);
	return 0;
}
NOKPROBE_SYMBOL(kretprobe_on_entry);

/*
 * May the function starting at @func not be return-probed? Its start,
 * not the probe's address: that may be past a landing pad (ENDBR), where
 * the blacklist has the symbol's address.
 */
static bool kretprobe_blacklisted(unsigned long func)
{
	struct kretprobe_blackpoint *bp;

	for_each_kretprobe_blackpoint(bp)
		if ((unsigned long)bp->addr == func)
			return true;
	return false;
}

static int kretprobe_default_maxactive(void)
{
	return max_t(int, 10, 2 * num_possible_cpus());
}

static bool kprobe_is_registered(struct kprobe *p)
{
	struct kprobe *site;
	bool ret;

	mutex_lock(&kprobe_mutex);
	ret = p->addr && is_registered(p, &site);
	mutex_unlock(&kprobe_mutex);
	return ret;
}

/* Validate @rp and give it its instance pool; no locks held. */
static int kretprobe_prepare(struct kretprobe *rp)
{
	kprobe_opcode_t *addr;
	unsigned long func;
	bool on_func_entry;
	int ret;

	/* A registered one must keep its pool: refuse before touching it. */
	if (!rp || kprobe_is_registered(&rp->kp))
		return -EINVAL;
	addr = resolve_probe_addr(rp->kp.addr, rp->kp.symbol_name, rp->kp.offset,
				  &on_func_entry, &func);
	if (IS_ERR(addr))
		return PTR_ERR(addr);
	if (!on_func_entry || kretprobe_blacklisted(func))
		return -EINVAL;
	if (rp->data_size > KRETPROBE_MAX_DATA_SIZE)
		return -E2BIG;
	if (rp->maxactive <= 0)
		rp->maxactive = kretprobe_default_maxactive();

	ret = kretprobe_pool_alloc(rp);
	if (ret)
		return ret;
	rp->nmissed = 0;
	rp->kp.pre_handler = kretprobe_on_entry;
	rp->kp.post_handler = NULL;
	return 0;
}

static void __init populate_kretprobe_blacklist(void)
{
	struct kretprobe_blackpoint *bp;

	for_each_kretprobe_blackpoint(bp)
		bp->addr = kprobe_lookup_name(bp->name, 0);
}

#else /* !CONFIG_KRETPROBES: the API below reports it is not there. */

static int kretprobe_prepare(struct kretprobe *rp)
{
	return -EOPNOTSUPP;
}

static void kretprobe_release(struct kretprobe *rp)
{
}

static void kretprobe_stop(struct kretprobe *rp)
{
}

static void __init populate_kretprobe_blacklist(void)
{
}
#endif /* CONFIG_KRETPROBES */

static int cmp_pointers(const void *a, const void *b)
{
	return order_ulong(*(unsigned long *)a, *(unsigned long *)b);
}

/*
 * Is any pointer of @ptrs there twice? @scratch has room for @num; it is
 * left zeroed.
 */
static bool has_duplicates(void **ptrs, int num, void **scratch)
{
	bool dup = false;
	int i;

	memcpy(scratch, ptrs, num * sizeof(*ptrs));
	sort(scratch, num, sizeof(*scratch), cmp_pointers, NULL);
	for (i = 1; i < num && !dup; i++)
		dup = scratch[i] && scratch[i] == scratch[i - 1];
	memset(scratch, 0, num * sizeof(*scratch));
	return dup;
}

/**
 * register_kretprobes() - register several return probes at once
 * @rps: the probes
 * @num: how many
 *
 * Return: 0; -EINVAL when one is listed twice; or as register_kretprobe()
 * for the first that failed, in which case none stays registered.
 */
int register_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	int i, ret;

	if (num <= 0 || !rps)
		return -EINVAL;
	kps = kcalloc(num, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return -ENOMEM;
	/* One listed twice would get two instance pools, and leak one. */
	if (has_duplicates((void **)rps, num, (void **)kps)) {
		kfree(kps);
		return -EINVAL;
	}
	for (i = 0; i < num; i++) {
		ret = rps[i] ? kretprobe_prepare(rps[i]) : -EINVAL;
		if (ret)
			break;
		kps[i] = &rps[i]->kp;
	}
	if (!ret) {
		ret = register_kprobes(kps, num);
		if (ret)
			i = num;
	}
	/* On failure, undo kretprobe_prepare() of rps[0] .. rps[i - 1]. */
	while (ret && i-- > 0)
		kretprobe_release(rps[i]);
	kfree(kps);
	return ret;
}
EXPORT_SYMBOL_GPL(register_kretprobes);

/**
 * register_kretprobe() - register a return probe
 * @rp: the probe; rp->kp names a function entry by address or symbol
 *
 * Return: 0; -EINVAL when the point is not a function's entry or the
 * function may not be return-probed; -E2BIG when data_size is too
 * large; -EOPNOTSUPP without CONFIG_KRETPROBES; otherwise as
 * register_kprobe().
 */
int register_kretprobe(struct kretprobe *rp)
{
	return register_kretprobes(&rp, 1);
}
EXPORT_SYMBOL_GPL(register_kretprobe);

/**
 * unregister_kretprobes() - unregister several return probes
 * @rps: the probes
 * @num: how many
 *
 * Calls in flight still return to their callers; their return handlers
 * do not run once this has returned.
 */
void unregister_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe **kps;
	int i;

	if (num <= 0 || !rps)
		return;
	for (i = 0; i < num; i++)
		if (rps[i])
			kretprobe_stop(rps[i]);

	kps = kcalloc(num, sizeof(*kps), GFP_KERNEL);
	if (kps) {
		for (i = 0; i < num; i++)
			kps[i] = rps[i] ? &rps[i]->kp : NULL;
		unregister_kprobes(kps, num);
		kfree(kps);
	} else {
		for (i = 0; i < num; i++)
			if (rps[i])
				unregister_kprobe(&rps[i]->kp);
	}
	for (i = 0; i < num; i++)
		if (rps[i])
			kretprobe_release(rps[i]);
}
EXPORT_SYMBOL_GPL(unregister_kretprobes);

/**
 * unregister_kretprobe() - unregister a return probe
 * @rp: the probe
 */
void unregister_kretprobe(struct kretprobe *rp)
{
	unregister_kretprobes(&rp, 1);
}
EXPORT_SYMBOL_GPL(unregister_kretprobe);

/* Bring every site in line with the current switches; kprobe_mutex held. */
static int __maybe_unused sync_all_sites(void)
{
	struct kprobe_batch b;
	struct kprobe *site;
	unsigned int i;
	int ret = 0;

	batch_begin_retired(&b);
	for (i = 0; i < KPROBE_TABLE_SIZE; i++)
		hlist_for_each_entry(site, &kprobe_table[i], hlist)
			ret = site_sync_armed(&b, site) ?: ret;
	return batch_finish(&b) ?: ret;
}

/* ---- debugfs ------------------------------------------------------------ */

#ifdef CONFIG_DEBUG_FS

static bool probe_is_kretprobe(struct kprobe *p)
{
#ifdef CONFIG_KRETPROBES
	return p->pre_handler == kretprobe_on_entry;
#else
	return false;
#endif
}

/* The start of a line in list and stats: address, type, symbol+offset, module. */
static void show_probe_location(struct seq_file *m, struct kprobe *p)
{
	char namebuf[KSYM_NAME_LEN];
	unsigned long offset = 0;
	char *modname = NULL;
	const char *sym;
	void *addr = p->addr;
	char type = probe_is_kretprobe(p) ? 'r' : 'k';

	if (!kallsyms_show_value(m->file->f_cred))
		addr = NULL;
	sym = kallsyms_lookup((unsigned long)p->addr, NULL, &offset, &modname, namebuf);
	if (sym)
		seq_printf(m, "%px  %c  %s+0x%lx  %s ", addr, type, sym, offset,
			   modname ? modname : " ");
	else
		seq_printf(m, "%px  %c  %px ", addr, type, addr);
}

static void show_probe(struct seq_file *m, struct kprobe *site, struct kprobe *p)
{
	show_probe_location(m, p);
	seq_printf(m, "%s%s%s%s\n",
		   kprobe_gone(p) ? "[GONE]" : "",
		   (kprobe_disabled(p) && !kprobe_gone(p)) ? "[DISABLED]" : "",
		   site_listed_optimized(site) ? "[OPTIMIZED]" : "",
		   kprobe_ftrace(site) ? "[FTRACE]" : "");
}

/* Hits that skipped @p's handlers; a kretprobe adds its pool misses. */
static unsigned long probe_missed(struct kprobe *p)
{
	unsigned long missed = p->nmissed;

#ifdef CONFIG_KRETPROBES
	if (probe_is_kretprobe(p))
		missed += container_of(p, struct kretprobe, kp)->nmissed;
#endif
	return missed;
}

static void show_probe_stats(struct seq_file *m, struct kprobe *site, struct kprobe *p)
{
	show_probe_location(m, p);
	seq_printf(m, "%lu %lu\n", probe_hits(p), probe_missed(p));
}

static void *list_seq_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&kprobe_mutex);
	return *pos < KPROBE_TABLE_SIZE ? pos : NULL;
}

static void *list_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	(*pos)++;
	return *pos < KPROBE_TABLE_SIZE ? pos : NULL;
}

static void list_seq_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&kprobe_mutex);
}

/*
 * list and stats walk the table the same way and differ in the line
 * they print per probe: the file's private data says which.
 */
struct probe_view {
	void (*show)(struct seq_file *m, struct kprobe *site, struct kprobe *p);
};

static struct probe_view list_view = { .show = show_probe };
static struct probe_view stats_view = { .show = show_probe_stats };

/* Show every probe in one hash bucket. */
static int probes_seq_show(struct seq_file *m, void *v)
{
	struct probe_view *view = m->private;
	struct kprobe *site, *p;

	hlist_for_each_entry(site, &kprobe_table[*(loff_t *)v], hlist) {
		if (!kprobe_is_aggr(site)) {
			view->show(m, site, site);
			continue;
		}
		list_for_each_entry(p, &site->list, list)
			view->show(m, site, p);
	}
	return 0;
}

static const struct seq_operations kprobes_probes_sops = {
	.start = list_seq_start,
	.next = list_seq_next,
	.stop = list_seq_stop,
	.show = probes_seq_show,
};
DEFINE_SEQ_ATTRIBUTE(kprobes_probes);

/* Arm or disarm every site, keeping each probe's own disabled state. */
static int set_all_armed(bool arm)
{
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	if (kprobes_all_disarmed == !arm)
		goto out;
	kprobes_all_disarmed = !arm;
	ret = sync_all_sites();
	pr_info("kprobes globally %s\n", arm ? "enabled" : "disabled");
out:
	mutex_unlock(&kprobe_mutex);
	return ret;
}

static ssize_t enabled_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[3] = { kprobes_all_disarmed ? '0' : '1', '\n', 0 };

	return simple_read_from_buffer(ubuf, count, ppos, buf, 2);
}

static ssize_t enabled_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	bool enable;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &enable);
	if (ret)
		return ret;
	ret = set_all_armed(enable);
	return ret ? ret : count;
}

static const struct file_operations kprobes_enabled_fops = {
	.read = enabled_read,
	.write = enabled_write,
	.llseek = default_llseek,
};

static void *blacklist_seq_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&kprobe_mutex);
	return seq_list_start(&kprobe_blacklist, *pos);
}

static void *blacklist_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &kprobe_blacklist, pos);
}

static int blacklist_seq_show(struct seq_file *m, void *v)
{
	struct kprobe_blacklist_entry *ent =
		list_entry(v, struct kprobe_blacklist_entry, list);
	bool show = kallsyms_show_value(m->file->f_cred);

	seq_printf(m, "0x%px-0x%px\t%ps\n",
		   show ? (void *)ent->start_addr : NULL,
		   show ? (void *)ent->end_addr : NULL,
		   (void *)ent->start_addr);
	return 0;
}

static const struct seq_operations kprobe_blacklist_sops = {
	.start = blacklist_seq_start,
	.next = blacklist_seq_next,
	.stop = list_seq_stop,
	.show = blacklist_seq_show,
};
DEFINE_SEQ_ATTRIBUTE(kprobe_blacklist);

/*
 * /sys/kernel/debug/kprobes/query: write a probe point ("SYMBOL",
 * "SYMBOL+OFFSET", "MODULE:SYMBOL+OFFSET" or a hexadecimal address) and
 * read back what registering a kprobe there would do, without
 * registering one: where the probe would go, and whether it would be
 * accepted, boosted, optimized, each "no" with the rule that said it.
 * The answer comes from the checks registering makes (check_probe_point(),
 * prepare_site(), prepare_detour()), run on a probe that is prepared and
 * released again, never listed nor armed. The file holds the answer to
 * the last query written to it; see Documentation/trace/kprobes.rst for
 * the format.
 */
#define QUERY_ANSWER_SIZE	1024

/* The last answer; query_lock guards it. */
static DEFINE_MUTEX(query_lock);
static char query_text[QUERY_ANSWER_SIZE];
static struct seq_buf query_answer;

/* One line "@what: yes", or "@what: no: <rule> (<error>)" for a non-zero @err. */
static void query_say(struct seq_buf *s, const char *what, int err)
{
	if (!err)
		seq_buf_printf(s, "%s: yes\n", what);
	else
		seq_buf_printf(s, "%s: no: %s (%pe)\n", what,
			       refusal_rule ?: "refused by the arch", ERR_PTR(err));
}

static void query_say_blacklist(struct seq_buf *s, unsigned long addr)
{
	struct kprobe_blacklist_entry *ent = blacklist_entry_of(addr);

	if (ent)
		seq_buf_printf(s, "blacklisted: %ps, %lu bytes\n",
			       (void *)ent->start_addr, ent->end_addr - ent->start_addr);
	else if (arch_within_kprobe_blacklist(addr))
		seq_buf_puts(s, "blacklisted: by the arch\n");
}

#ifdef CONFIG_OPTPROBES
static void query_optimization(struct seq_buf *s, struct kprobe *p)
{
	struct optimized_kprobe *op;
	struct kprobe *inside;
	int ret;

	if (!kprobes_optimization) {
		seq_buf_puts(s, "optimize: no: debug.kprobes-optimization is 0\n");
		return;
	}
	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op) {
		query_say(s, "optimize", kprobe_refuse(-ENOMEM, "out of memory"));
		return;
	}
	op->kp.addr = p->addr;
	INIT_LIST_HEAD(&op->list);
	refusal_rule = NULL;
	ret = prepare_detour(op, p);
	query_say(s, "optimize", ret);
	if (!ret) {
		inside = region_probe(op);
		if (inside)
			seq_buf_printf(s, "optimize: not while %pS is probed too\n",
				       inside->addr);
		arch_remove_optimized_kprobe(op);
	}
	kfree(op);
}
#else
static void query_optimization(struct seq_buf *s, struct kprobe *p)
{
	seq_buf_puts(s, "optimize: no: not built with CONFIG_OPTPROBES\n");
}
#endif

/* The verdicts for the probe point @addr, or @sym + @offset, into @s. */
static void query_probe_point(struct seq_buf *s, kprobe_opcode_t *addr,
			      const char *sym, unsigned long offset)
{
	struct module *mod = NULL;
	const char *why = NULL;
	struct kprobe *p, *site;
	bool boostable;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		seq_buf_puts(s, "probe: no: out of memory\n");
		return;
	}
	guard(mutex)(&kprobe_mutex);
	kprobes_lock_text();
	refusal_rule = NULL;
	addr = probe_target(addr, sym, offset);
	if (IS_ERR(addr)) {
		query_say(s, "probe", kprobe_refuse(PTR_ERR(addr), "no such symbol"));
		goto unlock;
	}
	seq_buf_printf(s, "asked: %pS\n", addr);
	p->addr = addr;
	ret = check_probe_point(p, &site, &mod);
	if (p->addr != addr)
		seq_buf_printf(s, "placed: %pS\n", p->addr);
	if (!ret)
		ret = prepare_site(p);
	query_say(s, "probe", ret);
	if (ret) {
		if (refusal_rule == rule_blacklisted)
			query_say_blacklist(s, (unsigned long)p->addr);
		goto unpin;
	}
	seq_buf_printf(s, "entry: %s\n", p->flags & KPROBE_FLAG_ON_FUNC_ENTRY ? "yes" : "no");
	seq_buf_printf(s, "ftrace: %s\n", kprobe_ftrace(p) ? "yes" : "no");
	if (site)
		seq_buf_printf(s, "registered: %s\n",
			       kprobe_is_aggr(site) ? "several probes" : "one probe");
	if (!kprobe_ftrace(p)) {
		boostable = arch_kprobe_boostable(p, &why);
		seq_buf_printf(s, "boost: %s%s%s\n", boostable ? "yes" : "no",
			       why ? ": " : "", why ?: "");
	}
	query_optimization(s, p);
	release_site(p);
unpin:
	if (mod)
		module_put(mod);
	probed_function.size = 0;
unlock:
	kprobes_unlock_text();
	kfree(p);
}

/* Parse "SYMBOL[+OFFSET]", "MODULE:SYMBOL[+OFFSET]" or an address. */
static int query_parse(char *in, kprobe_opcode_t **addr, const char **sym,
		       unsigned long *offset)
{
	unsigned long value;
	char *plus;

	*addr = NULL;
	*sym = NULL;
	*offset = 0;
	if (!kstrtoul(in, 16, &value)) {
		*addr = (kprobe_opcode_t *)value;
		return *addr ? 0 : -EINVAL;
	}
	plus = strchr(in, '+');
	if (plus) {
		*plus = '\0';
		if (kstrtoul(plus + 1, 0, offset))
			return -EINVAL;
	}
	if (!*in)
		return -EINVAL;
	*sym = in;
	return 0;
}

static ssize_t query_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	kprobe_opcode_t *addr;
	unsigned long offset;
	const char *sym;
	char *in;
	int ret;

	if (count >= KSYM_NAME_LEN + MODULE_NAME_LEN + 32)
		return -E2BIG;
	in = memdup_user_nul(ubuf, count);
	if (IS_ERR(in))
		return PTR_ERR(in);
	ret = query_parse(strim(in), &addr, &sym, &offset);
	if (!ret) {
		guard(mutex)(&query_lock);
		seq_buf_init(&query_answer, query_text, sizeof(query_text));
		query_probe_point(&query_answer, addr, sym, offset);
	}
	kfree(in);
	return ret ?: count;
}

static ssize_t query_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	guard(mutex)(&query_lock);
	return simple_read_from_buffer(ubuf, count, ppos, query_text,
				       seq_buf_used(&query_answer));
}

static const struct file_operations kprobes_query_fops = {
	.read		= query_read,
	.write		= query_write,
	.llseek		= default_llseek,
};

static int __init kprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, &list_view, &kprobes_probes_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &kprobes_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &kprobe_blacklist_fops);
	debugfs_create_file("stats", 0400, dir, &stats_view, &kprobes_probes_fops);
	debugfs_create_file("query", 0600, dir, NULL, &kprobes_query_fops);
	return 0;
}
late_initcall(kprobes_debugfs_init);
#endif /* CONFIG_DEBUG_FS */

/* ---- the optimizer: writing the jumps, and its sysctl --------------------- */

#ifdef CONFIG_OPTPROBES
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
 * off the list by site_sync_optimized(); the rest are checked again.
 */
static void kprobe_optimizer(struct work_struct *work)
{
	struct optimized_kprobe *op, *next;
	struct kprobe_batch b;
	LIST_HEAD(claimed);
	bool empty;

	mutex_lock(&kprobe_mutex);
	retire_sites();
	list_splice_init(&optimizing_list, &claimed);
	list_for_each_entry_safe(op, next, &claimed, list) {
		if (site_check_optimizable(&op->kp, site_is_armed(&op->kp))) {
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
	batch_begin_retired(&b);
	list_sort(NULL, &claimed, cmp_claimed_addr);
	list_for_each_entry_safe(op, next, &claimed, list) {
		list_del_init(&op->list);
		op->kp.flags &= ~KPROBE_FLAG_OPT_QUEUED;
		if (site_check_optimizable(&op->kp, site_is_armed(&op->kp)) &&
		    (op->kp.flags & KPROBE_FLAG_OPT_READY)) {
			arch_kprobe_queue_optimize(op);
			op->kp.flags |= KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_JUMPED;
			b.poked = true;
		} else {
			site_sync_armed(&b, &op->kp);
		}
	}
	batch_finish(&b);
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
	retire_sites();
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
		ret = sync_all_sites();
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
#endif /* CONFIG_OPTPROBES */

/* ---- init ----------------------------------------------------------------- */

int __init __weak arch_init_kprobes(void)
{
	return 0;
}

/* First on the die chain: a trap in kernel text may be one of ours. */
static struct notifier_block kprobe_die_nb = {
	.priority = INT_MAX,
	.notifier_call = kprobe_exceptions_notify,
};

static int __init init_kprobes(void)
{
	int ret;

	ret = populate_kprobe_blacklist();
	if (ret)
		pr_err("blacklist incomplete: %d\n", ret);
	populate_kretprobe_blacklist();
	optinsn_slots_init();

	/* arch_init_kprobes() may register probes (a trampoline's). */
	kprobes_initialized = true;
	ret = arch_init_kprobes();
	if (!ret)
		ret = register_die_notifier(&kprobe_die_nb);
	if (!ret)
		ret = register_kprobes_module_notifier();
	kprobes_initialized = !ret;
	return ret;
}
early_initcall(init_kprobes);
