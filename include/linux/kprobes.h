/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H
/*
 * Kernel probes: run a handler when the CPU reaches (almost) any kernel
 * instruction, and optionally when the function it belongs to returns.
 *
 * The arch-agnostic core lives in kernel/kprobes/; the state a probe
 * goes through and the locking rules are documented at the top of
 * kernel/kprobes/core.c.
 * The interface between the core and the arch's kprobes code is
 * <linux/kprobes_arch.h>, included below.
 */
#include <linux/compiler.h>
#include <linux/linkage.h>
#include <linux/list.h>
#include <linux/notifier.h>
#include <linux/smp.h>
#include <linux/bug.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/ftrace.h>
#include <linux/objpool.h>
#include <linux/rethook.h>
#include <asm/kprobes.h>

#ifdef CONFIG_KPROBES

/*
 * Values of the per-CPU probe status (kprobe_ctlblk::kprobe_status), set
 * by the arch's hit path as a hit goes through its stages. KPROBE_REENTER
 * is for arch code that saves the outer hit's state when a probe is hit
 * inside it (the tree's arch code that the other architectures run);
 * x86-64 keeps no state for such a nested hit and never sets it: the
 * status stays the outer hit's (see nested_hit() in
 * arch/x86/kernel/kprobes/breakpoint.c).
 */
#define KPROBE_HIT_ACTIVE	0x00000001	/* running the pre_handler */
#define KPROBE_HIT_SS		0x00000002	/* running the copied insn */
#define KPROBE_REENTER		0x00000004	/* nested hit, outer hit saved */
#define KPROBE_HIT_SSDONE	0x00000008	/* running the post_handler */

#else /* !CONFIG_KPROBES */
#include <asm-generic/kprobes.h>
typedef int kprobe_opcode_t;
struct arch_specific_insn {
	int dummy;
};
#endif /* CONFIG_KPROBES */

struct kprobe;
struct pt_regs;
struct task_struct;
struct kretprobe;
struct kretprobe_instance;
typedef int (*kprobe_pre_handler_t) (struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t) (struct kprobe *, struct pt_regs *,
				       unsigned long flags);
typedef int (*kretprobe_handler_t) (struct kretprobe_instance *,
				    struct pt_regs *);

/**
 * struct kprobe - a probe on one kernel instruction
 * @list: link in an aggregate probe's member list (owned by the core).
 *	First, so that the aggregate's hit loop needs no offset to get from
 *	one member to the next.
 * @hlist: link in the core's address hash table (owned by the core)
 * @nmissed: hits on which the handlers were skipped (nested hits)
 * @nhit: per-CPU hit counter, allocated by the core while the probe is
 *	registered, NULL otherwise (owned by the core). Read it with
 *	kprobe_hits(): an aggregate's members share their site's count.
 * @addr: the probed instruction; set by the caller or resolved from
 *	@symbol_name + @offset at registration
 * @symbol_name: symbol to probe, with @offset; exclusive with @addr
 * @offset: offset into @symbol_name
 * @pre_handler: runs before the probed instruction. A non-zero return
 *	means the handler changed regs->ip and the instruction is skipped.
 * @post_handler: runs after the probed instruction. Both handlers are set
 *	before registering and left alone while the probe is registered.
 * @opcode: the original byte the breakpoint replaced
 * @ainsn: the arch's copy of the probed instruction
 * @flags: KPROBE_FLAG_*; changed only under the core's kprobe_mutex
 */
struct kprobe {
	struct list_head list;
	struct hlist_node hlist;
	unsigned long nmissed;
	unsigned long __percpu *nhit;
	kprobe_opcode_t *addr;
	const char *symbol_name;
	unsigned int offset;
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_opcode_t opcode;
	struct arch_specific_insn ainsn;
	u32 flags;
};

/* Probe flags (struct kprobe::flags). */
#define KPROBE_FLAG_GONE	1	/* the probed text went away */
#define KPROBE_FLAG_DISABLED	2	/* registered but not armed */
#define KPROBE_FLAG_OPTIMIZED	4	/* a jump, not a breakpoint, is armed */
#define KPROBE_FLAG_FTRACE	8	/* served by ftrace at the fentry site */
#define KPROBE_FLAG_ON_FUNC_ENTRY	16	/* probe is at a function entry */
/*
 * Set by the core on an optimizable site from when the optimizer takes
 * it up (before its grace period) until it is optimized or gives up:
 * breakpoint hits then continue in the detour buffer's copy of the
 * region instead of the original text after the first instruction, so
 * that no task enters the region's interior.
 */
#define KPROBE_FLAG_OPT_READY	32

static inline bool kprobe_gone(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_GONE;
}

static inline bool kprobe_disabled(struct kprobe *p)
{
	return p->flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE);
}

static inline bool kprobe_optimized(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_OPTIMIZED;
}

static inline bool kprobe_ftrace(struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_FTRACE;
}

/*
 * Used only by architectures that have no rethook; kept so that the
 * structures below have the same shape on every architecture.
 */
struct kretprobe_holder {
	struct kretprobe __rcu *rp;
	struct objpool_head	pool;
};

/**
 * struct kretprobe - a probe on a function's return
 * @kp: the entry probe that plants the return hook
 * @handler: runs when the function returns
 * @entry_handler: runs at function entry; non-zero skips @handler for
 *	this call
 * @maxactive: how many calls may be tracked at once (0: a default)
 * @nmissed: calls not tracked because every instance was in use
 * @data_size: bytes of per-call data in kretprobe_instance::data
 * @rh: the rethook that owns the instance pool
 * @rph: unused with rethook
 */
struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	int maxactive;
	int nmissed;
	size_t data_size;
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct rethook *rh;
#else
	struct kretprobe_holder *rph;
#endif
};

#define KRETPROBE_MAX_DATA_SIZE	4096

/**
 * struct kretprobe_instance - one tracked call of a return-probed function
 * @node: the rethook node that carries the real return address
 * @rcu: frees it once its kretprobe is gone (without rethook)
 * @llist: link in the task's list of pending returns (without rethook)
 * @rph: the holder of the pool the instance belongs to (without rethook)
 * @ret_addr: the real return address (without rethook)
 * @fp: the frame the call returns from, for the unwinders (without rethook)
 * @data: @data_size bytes shared by entry_handler and handler
 */
struct kretprobe_instance {
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	struct rethook_node node;
#else
	struct rcu_head rcu;
	struct llist_node llist;
	struct kretprobe_holder *rph;
	kprobe_opcode_t *ret_addr;
	void *fp;
#endif
	char data[];
};

/* A function that must never get a return probe. */
struct kretprobe_blackpoint {
	const char *name;
	void *addr;
};

/* One range of text that must never be probed. */
struct kprobe_blacklist_entry {
	struct list_head list;
	unsigned long start_addr;
	unsigned long end_addr;
	struct rcu_head rcu;
};

#ifdef CONFIG_KPROBES
#include <linux/kprobes_arch.h>

#ifdef CONFIG_KRETPROBES
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
static nokprobe_inline struct kretprobe *get_kretprobe(struct kretprobe_instance *ri)
{
	/* The rethook's data is set once at allocation and never changes. */
	return (struct kretprobe *)ri->node.rethook->data;
}

static nokprobe_inline unsigned long get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return ri->node.ret_addr;
}
#else
/* NULL once unregistering started; called with preemption off. */
static nokprobe_inline struct kretprobe *get_kretprobe(struct kretprobe_instance *ri)
{
	return rcu_dereference_check(ri->rph->rp, rcu_read_lock_any_held());
}

static nokprobe_inline unsigned long get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return (unsigned long)ri->ret_addr;
}
#endif /* CONFIG_KRETPROBE_ON_RETHOOK */
#endif /* CONFIG_KRETPROBES */

int kprobe_on_func_entry(kprobe_opcode_t *addr, const char *sym, unsigned long offset);
bool within_kprobe_blacklist(unsigned long addr);

#ifdef CONFIG_OPTPROBES
void wait_for_kprobe_optimizer(void);
#else
static inline void wait_for_kprobe_optimizer(void) { }
#endif

#ifdef CONFIG_KPROBES_ON_FTRACE
void kprobe_ftrace_kill(void);
#else
static inline void kprobe_ftrace_kill(void) {}
#endif

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);

int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);

int kprobe_unregister_deferred(struct kprobe *p,
			       void (*release)(struct kprobe *p));
int kretprobe_unregister_deferred(struct kretprobe *rp,
				  void (*release)(struct kretprobe *rp));
void kprobe_deferred_barrier(void);

#if defined(CONFIG_KRETPROBES) && !defined(CONFIG_KRETPROBE_ON_RETHOOK)
void kprobe_flush_task(struct task_struct *tk);
#else
/* With rethook, the rethook core reclaims a dying task's instances. */
static inline void kprobe_flush_task(struct task_struct *tk)
{
}
#endif

void kprobe_free_init_mem(void);

int disable_kprobe(struct kprobe *kp);
int enable_kprobe(struct kprobe *kp);
unsigned long kprobe_hits(struct kprobe *kp);

void dump_kprobe(struct kprobe *kp);

int kprobe_get_kallsym(unsigned int symnum, unsigned long *value, char *type,
		       char *sym);

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * For lib/test_kprobes.c only (namespace EXPORTED_FOR_KUNIT_TESTING): the
 * query file's answer and the enabled switch, and ways to make the states
 * the tests need.
 */
size_t kprobes_query_point(char *buf, size_t size, kprobe_opcode_t *addr,
			   const char *sym, unsigned long offset);
int kprobes_set_all_armed(bool arm);
void kprobes_test_pause_retiring(bool pause);
void kprobes_test_forget_text(unsigned long start, unsigned long end);
bool kprobes_test_hears_text_gone(unsigned long addr);
struct kprobe *kprobes_test_lookup_between(void *addr, void (*between)(void *arg),
					   void *arg);
unsigned long kprobes_test_index_slot(void *addr);
unsigned int kprobes_test_ftrace_users(void);
#endif

#else /* !CONFIG_KPROBES: */

static inline int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	return 0;
}

static inline struct kprobe *get_kprobe(void *addr)
{
	return NULL;
}

static inline struct kprobe *kprobe_running(void)
{
	return NULL;
}

#define kprobe_busy_begin()	do {} while (0)
#define kprobe_busy_end()	do {} while (0)

static inline int register_kprobe(struct kprobe *p)
{
	return -EOPNOTSUPP;
}

static inline int register_kprobes(struct kprobe **kps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kprobe(struct kprobe *p)
{
}

static inline void unregister_kprobes(struct kprobe **kps, int num)
{
}

static inline int register_kretprobe(struct kretprobe *rp)
{
	return -EOPNOTSUPP;
}

static inline int register_kretprobes(struct kretprobe **rps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_kretprobe(struct kretprobe *rp)
{
}

static inline void unregister_kretprobes(struct kretprobe **rps, int num)
{
}

static inline int kprobe_unregister_deferred(struct kprobe *p,
					     void (*release)(struct kprobe *p))
{
	return -EOPNOTSUPP;
}

static inline int kretprobe_unregister_deferred(struct kretprobe *rp,
						void (*release)(struct kretprobe *rp))
{
	return -EOPNOTSUPP;
}

static inline void kprobe_deferred_barrier(void)
{
}

static inline void kprobe_flush_task(struct task_struct *tk)
{
}

static inline void kprobe_free_init_mem(void)
{
}

static inline void kprobe_ftrace_kill(void)
{
}

static inline int disable_kprobe(struct kprobe *kp)
{
	return -EOPNOTSUPP;
}

static inline int enable_kprobe(struct kprobe *kp)
{
	return -EOPNOTSUPP;
}

static inline unsigned long kprobe_hits(struct kprobe *kp)
{
	return 0;
}

static inline bool within_kprobe_blacklist(unsigned long addr)
{
	return true;
}

static inline int kprobe_get_kallsym(unsigned int symnum, unsigned long *value,
				     char *type, char *sym)
{
	return -ERANGE;
}

static inline bool is_kprobe_insn_slot(unsigned long addr)
{
	return false;
}
#endif /* CONFIG_KPROBES */

static inline int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

static inline int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}

#ifndef CONFIG_OPTPROBES
static inline bool is_kprobe_optinsn_slot(unsigned long addr)
{
	return false;
}
#endif

#ifdef CONFIG_KRETPROBE_ON_RETHOOK
static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return is_rethook_trampoline(addr);
}

static nokprobe_inline
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	return rethook_find_ret_addr(tsk, (unsigned long)fp, cur);
}
#elif defined(CONFIG_KRETPROBES)
static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return (void *)addr == kretprobe_trampoline_addr();
}

unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur);
#else
static nokprobe_inline bool is_kretprobe_trampoline(unsigned long addr)
{
	return false;
}

static nokprobe_inline
unsigned long kretprobe_find_ret_addr(struct task_struct *tsk, void *fp,
				      struct llist_node **cur)
{
	return 0;
}
#endif

/*
 * Called by the arch's page-fault handler: true when kprobes consumed the
 * fault. Only a CPU that is inside a probe (hence not preemptible) can
 * have a fault that kprobes cares about.
 */
static nokprobe_inline bool kprobe_page_fault(struct pt_regs *regs,
					      unsigned int trap)
{
	if (!IS_ENABLED(CONFIG_KPROBES) || user_mode(regs))
		return false;
	if (preemptible() || !kprobe_running())
		return false;
	return kprobe_fault_handler(regs, trap);
}

#endif /* _LINUX_KPROBES_H */
