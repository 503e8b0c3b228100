// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kretprobes: a probe at a function's entry that also catches its
 * return, on rethook or on the core's own return instances.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

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
	/*
	 * Handlers see the return where it goes, as with rethook: their pc
	 * (where a stack trace starts, what perf and BPF report) and
	 * get_kretprobe_retaddr() are the caller's, not the trampoline.
	 * Giving every instance of the call the real address is safe now
	 * that its end is known.
	 */
	instruction_pointer_set(regs, (unsigned long)ret_addr);

	/*
	 * The handlers run with the instances still on the list: an unwinder
	 * called from one finds the real return address there.
	 */
	for (node = current->kretprobe_instances.first; ; node = node->next) {
		ri = llist_entry(node, struct kretprobe_instance, llist);
		/* Not this call's: a return was lost. No more handlers. */
		if (WARN_ON_ONCE(ri->fp != frame_pointer))
			break;
		ri->ret_addr = ret_addr;
		rp = get_kretprobe(ri);
		if (rp && rp->handler)
			kretprobe_run_handler(rp, ri, regs, prev);
		if (node == end)
			break;
	}
	/* What the arch still has to set up for the return itself. */
	arch_kretprobe_fixup_return(regs, ret_addr);

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

	/* Before init_kprobes() the list is empty, and this is harmless. */
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

int kretprobe_on_entry(struct kprobe *p, struct pt_regs *regs)
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

/*
 * -EINVAL if @rp is registered, -EBUSY if it waits for its deferred
 * release (deferred.c): either way its pool is in use.
 */
static int kretprobe_in_use(struct kretprobe *rp)
{
	struct kprobe *site;
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	if (rp->kp.addr && kprobe_find_registered(&rp->kp, &site))
		ret = -EINVAL;
	else if (kprobe_deferred_pending(&rp->kp))
		ret = -EBUSY;
	mutex_unlock(&kprobe_mutex);
	return ret;
}

static int kretprobe_default_maxactive(void)
{
	return max_t(int, 10, 2 * num_possible_cpus());
}

/* Validate @rp and give it its instance pool; no locks held. */
static int kretprobe_prepare(struct kretprobe *rp)
{
	kprobe_opcode_t *addr;
	unsigned long func;
	bool on_func_entry;
	int ret;

	/* It takes kprobe_mutex, which comes before text_mutex. */
	lockdep_assert_not_held(&kprobe_mutex);
	lockdep_assert_not_held(&text_mutex);
	/* A registered one, or one pending release, keeps its pool. */
	if (!rp)
		return -EINVAL;
	ret = kretprobe_in_use(rp);
	if (ret)
		return ret;
	addr = kprobe_resolve_addr(rp->kp.addr, rp->kp.symbol_name, rp->kp.offset,
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

/* Before init_kprobes() opens registration (core.o links after us). */
static int __init kretprobe_populate_blacklist(void)
{
	struct kretprobe_blackpoint *bp;

	for_each_kretprobe_blackpoint(bp)
		bp->addr = kprobe_lookup_name(bp->name, 0);
	return 0;
}
early_initcall(kretprobe_populate_blacklist);

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

/*
 * Unregister those of @rps that are not pending release; @kps has room
 * for @num. A probe pending release (deferred.c) is left alone: its pool
 * stays until its release frees it (kretprobe_deferred_let_go()), which
 * runs under kprobe_mutex, as the check does.
 */
static void unregister_kretprobes_with(struct kretprobe **rps, int num,
				       struct kprobe **kps)
{
	int i;

	mutex_lock(&kprobe_mutex);
	for (i = 0; i < num; i++)
		kps[i] = rps[i] && !kprobe_deferred_pending(&rps[i]->kp) ? &rps[i]->kp : NULL;
	mutex_unlock(&kprobe_mutex);
	for (i = 0; i < num; i++)
		if (kps[i])
			kretprobe_stop(rps[i]);
	unregister_kprobes(kps, num);
	for (i = 0; i < num; i++)
		if (kps[i])
			kretprobe_release(rps[i]);
}

/**
 * unregister_kretprobes() - unregister several return probes
 * @rps: the probes
 * @num: how many
 *
 * Calls in flight still return to their callers; their return handlers
 * do not run once this has returned. A probe waiting for its release
 * after kretprobe_unregister_deferred() is left to it.
 */
void unregister_kretprobes(struct kretprobe **rps, int num)
{
	struct kprobe *one, **kps;
	int i;

	if (num <= 0 || !rps)
		return;
	if (num == 1) {
		unregister_kretprobes_with(rps, 1, &one);
		return;
	}
	kps = kcalloc(num, sizeof(*kps), GFP_KERNEL);
	if (kps) {
		unregister_kretprobes_with(rps, num, kps);
		kfree(kps);
		return;
	}
	for (i = 0; i < num; i++)
		unregister_kretprobes_with(&rps[i], 1, &one);
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

/* A deferred return probe, after its grace period: free its instances. */
static void kretprobe_deferred_let_go(struct kprobe_deferred *d)
{
	lockdep_assert_held(&kprobe_mutex);
	kretprobe_release(container_of(d->p, struct kretprobe, kp));
}

static void kretprobe_deferred_done(struct kprobe_deferred *d)
{
	if (d->rp_release)
		d->rp_release(container_of(d->p, struct kretprobe, kp));
}

/**
 * kretprobe_unregister_deferred() - unregister a return probe without
 * waiting
 * @rp: the probe
 * @release: called once no CPU runs @rp's handlers and neither the core
 *	nor a call in flight holds a pointer into @rp; may be NULL
 *
 * As kprobe_unregister_deferred(), for a return probe: no entry or return
 * handler of @rp starts after this returns; calls in flight still return
 * to their callers. Their instances are freed, as with
 * unregister_kretprobe(), before @release is called.
 *
 * Context: as kprobe_unregister_deferred().
 *
 * Return: as kprobe_unregister_deferred().
 */
int kretprobe_unregister_deferred(struct kretprobe *rp,
				  void (*release)(struct kretprobe *rp))
{
	struct kprobe_deferred *d;
	int ret;

	if (!rp)
		return -EINVAL;
	d = kprobe_deferred_alloc(&rp->kp, kretprobe_deferred_done);
	if (!d)
		return -ENOMEM;
	d->rp_release = release;
	d->let_go = kretprobe_deferred_let_go;
	/* Not one pending already: its pool may be freed at any time. */
	mutex_lock(&kprobe_mutex);
	ret = kprobe_deferred_pending(&rp->kp) ? -EINVAL : 0;
	if (!ret)
		kretprobe_stop(rp);
	mutex_unlock(&kprobe_mutex);
	if (!ret)
		ret = kprobe_defer_unregister(d);
	if (ret)
		kfree(d);
	return ret;
}
EXPORT_SYMBOL_GPL(kretprobe_unregister_deferred);
