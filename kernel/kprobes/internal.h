/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the kprobes core share. core.c owns the life cycle
 * of probes and sites (its opening comment is the map); the other files
 * each own one concept and the data that goes with it: table.c the
 * sites by address, place.c where a probe may go (the blacklist and the
 * sites the kernel's own tables list too), batch.c a registration
 * call's batch and every way a site leaves the table (the retiring of
 * optimized sites too), arming.c the breakpoints, ftrace filters and
 * the global switch, optimizer.c the jumps, slots.c the instruction
 * slots, counters.c the hit counters, gone.c text going away,
 * kretprobe.c the return instances, deferred.c unregistering that does
 * not wait, debugfs.c the files under /sys/kernel/debug/kprobes/.
 * Only what two files or more use is declared here; nothing here is for
 * use outside kernel/kprobes/.
 */
#ifndef _KERNEL_KPROBES_INTERNAL_H
#define _KERNEL_KPROBES_INTERNAL_H

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
#include <kunit/visibility.h>

#include <asm/sections.h>

#define KPROBE_HASH_BITS 12
#define KPROBE_TABLE_SIZE BIT(KPROBE_HASH_BITS)

/* -1, 0 or 1 as @x is below, equal to or above @y: for sort() callbacks. */
static inline int order_ulong(unsigned long x, unsigned long y)
{
	return x < y ? -1 : x > y;
}

/* ---- core.c: the lock and the switches --------------------------------- */

extern struct mutex kprobe_mutex;
extern bool kprobes_all_disarmed;		/* arming.c */
extern struct list_head kprobe_blacklist;	/* place.c */

/* ---- core.c: aggregate sites -------------------------------------------- */

/* kprobe_aggr_pre_handler() is declared in <linux/kprobes_arch.h>. */
static nokprobe_inline bool kprobe_is_aggr(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_AGGREGATE;
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

static inline struct kprobe_aggregate *to_aggr(struct kprobe *site)
{
#ifdef CONFIG_OPTPROBES
	return container_of(site, struct kprobe_aggregate, op.kp);
#else
	return container_of(site, struct kprobe_aggregate, kp);
#endif
}

static inline struct kprobe *aggr_site(struct kprobe_aggregate *agg)
{
#ifdef CONFIG_OPTPROBES
	return &agg->op.kp;
#else
	return &agg->kp;
#endif
}

/* ---- batch.c: one registration call's batch ----------------------------- */

/*
 * struct kprobe_batch - the sites one registration call changes
 * @free_list: lone sites leaving the table, freed after one grace period
 *	(linked by their ->list, which only an aggregate's readers walk)
 * @free_aggregates: the same for aggregates (by kprobe_aggregate::dying)
 * @poked: breakpoint writes were queued and must be applied
 * @need_sync: wait for a grace period before returning, because a probe
 *	left the table or an aggregate
 * @defer_to: when set, nobody waits: kprobe_batch_finish() hands the
 *	dying sites to this deferred probe, which polls for the grace
 *	period (deferred.c)
 * @grace_started, @grace: that grace period, started when the batch is
 *	published and waited for by kprobe_batch_finish() with no lock held
 */
struct kprobe_deferred;

struct kprobe_batch {
	struct list_head free_list;
	struct list_head free_aggregates;
	struct kprobe_deferred *defer_to;
	bool poked;
	bool need_sync;
	bool grace_started;
	struct rcu_synchronize grace;
};

/* ---- deferred.c: unregistering that does not wait ----------------------- */

/*
 * struct kprobe_deferred - a probe unregistered without waiting, until
 * it goes back to its owner
 * @list: on deferred.c's pending list, oldest first (kprobe_mutex)
 * @p: the probe; out of the table, its handlers maybe still running
 * @rcu_cookie: the grace period after which no CPU runs them
 *	(start_poll_synchronize_rcu(), taken once @p was unhooked)
 * @dying_sites, @dying_aggregates: sites its batch took out, freed
 *	after that grace period (as struct kprobe_batch's free lists)
 * @by_probe: in deferred.c's hash of pending probes, by @p (kprobe_mutex)
 * @let_go: frees what the interface keeps for @p besides its sites (a
 *	return probe's instances), with kprobe_mutex held, in the step that
 *	ends @p's pending state: a call on @p that sees it pending leaves
 *	that alone, and one that does not finds it freed; may be NULL
 * @done: what its owner's interface does once the core let go of @p:
 *	called with no lock held, in process context
 * @kp_release, @rp_release: the owner's callback, for @done to call
 */
struct kprobe_deferred {
	struct list_head list;
	struct hlist_node by_probe;
	struct kprobe *p;
	unsigned long rcu_cookie;
	struct list_head dying_sites;
	struct list_head dying_aggregates;
	void (*let_go)(struct kprobe_deferred *d);
	void (*done)(struct kprobe_deferred *d);
	union {
		void (*kp_release)(struct kprobe *p);
		void (*rp_release)(struct kretprobe *rp);
	};
};

/* ---- struct kprobe::flags ------------------------------------------------ */

/*
 * Every flag, in bit order. A "site" flag is the table's entry's (a lone
 * probe or an aggregate), a "probe" flag a user probe's (a lone probe is
 * both). Each is set by the file named, under kprobe_mutex; those marked
 * "hit" are read by the hit path too, with no lock.
 *
 * bit flag          of     set by, and meaning
 *  0  GONE          both   gone.c: the text was freed (core.c clears it
 *                          when new text there is probed)
 *  1  DISABLED      both   disable_kprobe(); a site's when all its members'
 *  2  OPTIMIZED     site   optimizer.c: the jump is written
 *  3  FTRACE        both   place.c: reached through ftrace at the fentry site
 *  4  ON_FUNC_ENTRY both   place.c: at a function's entry
 *  5  OPT_READY     site   optimizer.c: hits continue in the detour (hit)
 * 16  ARMED         site   arming.c: breakpoint written, or ip in a filter
 * 17  IPMODIFY      site   arming.c: in kprobe_ipmodify_ops, not the plain ops
 * 18  DYING         site   core.c: leaves the table in this batch
 * 19  OPT_QUEUED    site   optimizer.c: on the optimizer's queue
 * 20  OPT_BLOCKED   site   optimizer.c: blocked by a probe in its region
 * 21  JUMPED        site   optimizer.c: the jump was written at some time
 * 22  QUERY         probe  debugfs: only asked about (<linux/kprobes_arch.h>)
 * 23  DEFERRED      probe  deferred.c: unregistered without waiting, not
 *                          released yet (a hint: a caller's garbage may
 *                          set it, so deferred.c's hash decides)
 * 24  NO_PRE        probe  core.c: no pre_handler (hit)
 * 25  SITE_COUNTED  probe  counters.c: its hits are its site's (hit)
 * 26  UNHOOKED      probe  core.c: left the table in this batch (cleared
 *                          by deferred.c when its counter is given back)
 *
 * Bits 0-5 are <linux/kprobes.h>'s, which arch code and users read.
 */
#define KPROBE_FLAG_ARMED		BIT(16)
#define KPROBE_FLAG_IPMODIFY		BIT(17)
#define KPROBE_FLAG_DYING		BIT(18)
#define KPROBE_FLAG_OPT_QUEUED		BIT(19)
#define KPROBE_FLAG_OPT_BLOCKED		BIT(20)
#define KPROBE_FLAG_JUMPED		BIT(21)
/*	KPROBE_FLAG_QUERY		BIT(22), <linux/kprobes_arch.h> */
#define KPROBE_FLAG_DEFERRED		BIT(23)
/*	KPROBE_FLAG_NO_PRE		BIT(24), <linux/kprobes_arch.h> */
#define KPROBE_FLAG_SITE_COUNTED	BIT(25)
#define KPROBE_FLAG_UNHOOKED		BIT(26)
/*	KPROBE_FLAG_AGGREGATE		BIT(27), <linux/kprobes_arch.h> */

/* What arming.c and a batch know of a site: cleared when it starts afresh. */
#define KPROBE_SITE_ARMING_FLAGS	(KPROBE_FLAG_ARMED | KPROBE_FLAG_IPMODIFY | \
					 KPROBE_FLAG_DYING)

/* Breakpoint written, or ip in one of our ftrace filters. */
static inline bool kprobe_site_armed(const struct kprobe *site)
{
	return site->flags & KPROBE_FLAG_ARMED;
}

/* ---- core.c ------------------------------------------------------------- */

bool kprobe_unhook(struct kprobe_batch *b, struct kprobe *p);

/* ---- table.c: the sites by address -------------------------------------- */

extern struct hlist_head kprobe_table[KPROBE_TABLE_SIZE];

int kprobe_table_reserve(void);
void kprobe_table_add(struct kprobe *site);
void kprobe_table_replace(struct kprobe *old, struct kprobe *site);
void kprobe_site_unhash(struct kprobe *site);
bool kprobe_find_registered(struct kprobe *p, struct kprobe **site_out);

/* ---- core.c: what registering would do, for the query file ------------- */

/**
 * struct kprobe_query_check - the answer to one question of a query
 * @err: 0 for yes, or the error registering would return
 * @rule: for a no, the rule that said it: a string constant that
 *	kprobe_refuse() recorded, or NULL when the refusal named none
 */
struct kprobe_query_check {
	int err;
	const char *rule;
};

/**
 * enum kprobe_query_registered - the probes at a point already
 * @KPROBE_QUERY_NONE: none
 * @KPROBE_QUERY_ONE: one, its own site
 * @KPROBE_QUERY_SEVERAL: an aggregate site
 */
enum kprobe_query_registered {
	KPROBE_QUERY_NONE,
	KPROBE_QUERY_ONE,
	KPROBE_QUERY_SEVERAL,
};

/**
 * enum kprobe_query_optimizer - whether the optimizer was asked
 * @KPROBE_QUERY_OPT_ASKED: it was: kprobe_query_verdict::optimize says
 * @KPROBE_QUERY_OPT_SYSCTL_OFF: debug.kprobes-optimization is 0
 * @KPROBE_QUERY_OPT_NOT_BUILT: the kernel has no CONFIG_OPTPROBES
 */
enum kprobe_query_optimizer {
	KPROBE_QUERY_OPT_ASKED,
	KPROBE_QUERY_OPT_SYSCTL_OFF,
	KPROBE_QUERY_OPT_NOT_BUILT,
};

/**
 * struct kprobe_query_verdict - what registering a kprobe at a point would do
 * @asked: the address the point names; NULL when it names none
 * @placed: where the probe would go: @asked, or where the arch moves it
 * @probe: would register_kprobe() accept it: the four members after it
 *	are filled only when it would not, and the others only when it would
 * @blacklisted: @probe was refused by the blacklist
 * @blacklist_start: then, the start of the entry that holds @placed
 * @blacklist_size: and its size; 0 when no entry holds it
 * @blacklist_arch: the arch's own blacklist holds it, when no entry does
 * @entry: @placed is a function's entry
 * @ftrace: @placed is ftrace's call site
 * @registered: the probes there already
 * @boostable: hits without a post_handler would skip the second trap;
 *	false at ftrace's site, which takes none
 * @boost_why: why, or why not, as the arch says; may be NULL
 * @optimizer: whether the optimizer was asked
 * @optimize: if it was, would it give the site a jump
 * @optimize_blocker: the address of a probe inside the region the jump
 *	would cover, which keeps the site a breakpoint meanwhile; or NULL
 * @asking: the question kprobe_refuse() records its rule in while
 *	kprobe_query() runs: @probe, then @optimize
 */
struct kprobe_query_verdict {
	kprobe_opcode_t *asked;
	kprobe_opcode_t *placed;
	struct kprobe_query_check probe;
	bool blacklisted;
	unsigned long blacklist_start;
	unsigned long blacklist_size;
	bool blacklist_arch;
	bool entry;
	bool ftrace;
	enum kprobe_query_registered registered;
	bool boostable;
	const char *boost_why;
	enum kprobe_query_optimizer optimizer;
	struct kprobe_query_check optimize;
	kprobe_opcode_t *optimize_blocker;
	struct kprobe_query_check *asking;
};

void kprobe_query(struct kprobe_query_verdict *v, kprobe_opcode_t *addr,
		  const char *sym, unsigned long offset);

/* ---- place.c: where a probe may go ----------------------------------------- */

void kprobe_record_refusals(struct kprobe_query_verdict *v);
kprobe_opcode_t *kprobe_target_addr(kprobe_opcode_t *addr, const char *symbol_name,
				    unsigned long offset);
kprobe_opcode_t *kprobe_resolve_addr(kprobe_opcode_t *addr,
				     const char *symbol_name,
				     unsigned long offset,
				     bool *on_func_entry, unsigned long *func);
void kprobe_forget_probed_function(void);
int kprobe_check_point(struct kprobe *p, struct kprobe **site,
		       struct module **mod);

/* ---- batch.c ------------------------------------------------------------ */

void kprobe_release_site(struct kprobe *site);
void kprobe_batch_begin(struct kprobe_batch *b);
void kprobe_batch_apply_text(struct kprobe_batch *b);
int kprobe_batch_finish(struct kprobe_batch *b);
int kprobe_sync_all_sites(void);
void kprobe_release_dying_sites(struct list_head *sites,
				struct list_head *aggregates);
void kprobe_batch_remove_site(struct kprobe_batch *b, struct kprobe *site);

/* Write back every retiring site's jump; without the optimizer, none retires. */
#ifdef CONFIG_OPTPROBES
void kprobe_retire_sites(void);
#else
static inline void kprobe_retire_sites(void)
{
}
#endif

/* ---- deferred.c --------------------------------------------------------- */

struct kprobe_deferred *kprobe_deferred_alloc(struct kprobe *p,
					      void (*done)(struct kprobe_deferred *d));
int kprobe_defer_unregister(struct kprobe_deferred *d);
bool kprobe_deferred_pending(struct kprobe *p);
void kprobe_release_counters(struct kprobe **kps, int num);

/* ---- arming.c ----------------------------------------------------------- */

bool kprobe_site_wants_armed(struct kprobe *site);
int kprobe_ftrace_changes_apply(void);
int kprobe_site_sync_armed(struct kprobe_batch *b, struct kprobe *site);
void kprobe_ftrace_flush_stale(void);

/* ---- counters.c --------------------------------------------------------- */

unsigned long __percpu *kprobe_counter_alloc(void);
bool kprobe_counter_in_use(unsigned long __percpu *counter);
void kprobe_counter_free(unsigned long __percpu *counter);
void kprobe_sync_member_counting(struct kprobe *site);
unsigned long kprobe_hits_locked(struct kprobe *p);

/* Free an aggregate whose arch state and detour are gone (or never were). */
static inline void kprobe_free_aggregate(struct kprobe *site)
{
	kprobe_counter_free(site->nhit);
	kfree(to_aggr(site));
}

/* ---- kretprobe.c -------------------------------------------------------- */

int kretprobe_on_entry(struct kprobe *p, struct pt_regs *regs);

/* ---- optimizer.c -------------------------------------------------------- */

#ifdef CONFIG_OPTPROBES
void kprobe_query_optimize(struct kprobe_query_verdict *v, struct kprobe *p);
bool kprobe_site_prepare_detour(struct kprobe *site, struct kprobe *p);
void kprobe_site_remove_detour(struct kprobe *site);
void kprobe_site_sync_optimized(struct kprobe_batch *b, struct kprobe *site,
				bool armed);
void kprobe_sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr);
void kprobe_requeue_covering_sites(kprobe_opcode_t *addr);
#else
static inline void kprobe_query_optimize(struct kprobe_query_verdict *v, struct kprobe *p)
{
	v->optimizer = KPROBE_QUERY_OPT_NOT_BUILT;
}

static inline bool kprobe_site_prepare_detour(struct kprobe *site, struct kprobe *p)
{
	return false;
}

static inline void kprobe_site_remove_detour(struct kprobe *site)
{
}

static inline void kprobe_site_sync_optimized(struct kprobe_batch *b, struct kprobe *site,
					      bool armed)
{
}

static inline void kprobe_sync_covering_sites(struct kprobe_batch *b, kprobe_opcode_t *addr)
{
}

static inline void kprobe_requeue_covering_sites(kprobe_opcode_t *addr)
{
}
#endif /* CONFIG_OPTPROBES */

#endif /* _KERNEL_KPROBES_INTERNAL_H */
