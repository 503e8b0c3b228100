// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Instruction slots: the executable pages that hold copies of probed
 * instructions (and, with CONFIG_OPTPROBES, detour buffers), handed out
 * a slot at a time and reused only when no task can be inside one.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

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

/* Does @page lie wholly inside [@lo, @hi)? */
static bool page_within(struct kprobe_insn_page *page, unsigned long lo,
			unsigned long hi)
{
	unsigned long base = (unsigned long)page->base;

	return base >= lo && base < hi && hi - base >= PAGE_SIZE;
}

/*
 * A free slot of @c; with @near, in a page inside [@lo, @hi), a new one
 * from arch_kprobe_alloc_insn_page_within(); otherwise anywhere, a new
 * page from the cache's own allocator.
 */
static kprobe_opcode_t *take_slot(struct kprobe_insn_cache *c, bool near,
				  unsigned long lo, unsigned long hi)
{
	unsigned int n = slots_per_page(c), bit;
	struct kprobe_insn_page *page;
	kprobe_opcode_t *slot = NULL;

	mutex_lock(&c->mutex);
	list_for_each_entry(page, &c->pages, list) {
		if (page->nr_used == n || (near && !page_within(page, lo, hi)))
			continue;
		bit = find_first_zero_bit(page_bitmap(c, page, SLOTS_USED), n);
		goto found;
	}

	page = kzalloc(struct_size(page, bits, 3 * BITS_TO_LONGS(n)), GFP_KERNEL);
	if (!page)
		goto out;
	page->base = near ? arch_kprobe_alloc_insn_page_within(lo, hi) : c->alloc();
	if (!page->base || (near && !page_within(page, lo, hi))) {
		if (page->base)
			c->free(page->base);
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

/**
 * __get_insn_slot() - allocate one instruction slot
 * @c: the cache to allocate from
 *
 * Return: the slot, or NULL when no executable memory can be had.
 */
kprobe_opcode_t *__get_insn_slot(struct kprobe_insn_cache *c)
{
	return take_slot(c, false, 0, 0);
}

/* Where the arch has no way to place a page: nowhere. */
void __weak *arch_kprobe_alloc_insn_page_within(unsigned long lo, unsigned long hi)
{
	return NULL;
}

/**
 * kprobe_get_insn_slot_within() - an instruction slot inside an address range
 * @lo: lowest address the slot's page may start at
 * @hi: the address its page must end at or before
 *
 * For a copy that branches back to its probe with an instruction of
 * short reach (arm64's B: 128 MiB). Pages of kprobe_insn_slots in the
 * range are used first; a new one comes from
 * arch_kprobe_alloc_insn_page_within(). Freed with free_insn_slot().
 *
 * Return: the slot, or NULL when no page in the range can be had.
 */
kprobe_opcode_t *kprobe_get_insn_slot_within(unsigned long lo, unsigned long hi)
{
	return take_slot(&kprobe_insn_slots, true, lo, hi);
}

/* Give slot @bit of @page back; the cache's mutex held. */
static void release_slot(struct kprobe_insn_cache *c,
			 struct kprobe_insn_page *page, unsigned int bit)
{
	lockdep_assert_held(&c->mutex);
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
 * Used by the unwinder, kernel_text_address() and the x86 fault path;
 * takes no lock.
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
NOKPROBE_SYMBOL(__is_insn_slot_addr);

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

/**
 * kprobe_get_optinsn_slot_within() - a detour slot inside an address range
 * @lo: lowest address the slot's page may start at
 * @hi: the address its page must end at or before
 *
 * For a detour reached from its probe, and leaving back to it, by jumps
 * of short reach (arm64's B: 128 MiB). As kprobe_get_insn_slot_within(),
 * from kprobe_optinsn_slots. Freed with free_optinsn_slot().
 *
 * Return: the slot, or NULL when no page in the range can be had.
 */
kprobe_opcode_t *kprobe_get_optinsn_slot_within(unsigned long lo, unsigned long hi)
{
	return take_slot(&kprobe_optinsn_slots, true, lo, hi);
}

/* Before init_kprobes() opens registration (core.o links after us). */
static int __init kprobe_optinsn_slots_init(void)
{
	kprobe_optinsn_slots.insn_size = KPROBE_OPTINSN_SLOT_SIZE;
	return 0;
}
early_initcall(kprobe_optinsn_slots_init);
#endif
#endif /* __ARCH_WANT_KPROBES_INSN_SLOT */

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
