// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv kprobes: writing breakpoints a batch at a time.
 *
 * An EBREAK replaces, and gives back, an instruction of any kind, which
 * may be a 4-byte one on a 2-byte boundary: a store the ISA does not
 * make atomic for another hart's instruction fetch. So every write is
 * made while the other harts wait in stop_machine(), each of which then
 * executes FENCE.I before it runs on, as riscv's patch_text() does for a
 * single write (Zifencei: a hart sees stores to instruction memory once
 * it has executed FENCE.I after them).
 *
 * The core calls arch_kprobe_queue_arm() for each site of a registration
 * call and arch_kprobe_queue_apply() once at its end: the writes wait in
 * text_queue and the batch costs one stop_machine(), where writing each
 * site on its own costs one per site. A full queue is applied early;
 * that is safe because the core relies only on the last apply of a
 * batch: a site is not taken out of the table before it, and a CPU that
 * took a breakpoint holds off stop_machine() until it leaves the handler.
 */

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cacheflush.h>
#include <linux/cpumask.h>
#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/stop_machine.h>
#include <asm/patch.h>

/* Writes per stop_machine() at most; a registration of more takes more. */
#define TEXT_QUEUE_LEN	256

/*
 * The queued writes, in order (the same address may be armed and
 * disarmed in one batch: the last write wins). text_mutex guards it;
 * @arrived counts the CPUs in the stop_machine() that applies it.
 */
static struct {
	void *addr[TEXT_QUEUE_LEN];
	u32 insn[TEXT_QUEUE_LEN];
	u8 size[TEXT_QUEUE_LEN];
	unsigned int len;
	atomic_t arrived;
} text_queue;

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
unsigned long kprobe_text_syncs;
EXPORT_SYMBOL_GPL(kprobe_text_syncs);
#endif

/**
 * arch_kprobe_queue_arm() - queue the breakpoint write at @p->addr
 * @p: a prepared probe site
 * @arm: true to write the EBREAK, false to write @p->opcode back
 *
 * text_mutex held. Nothing changes in the text before
 * arch_kprobe_queue_apply(), unless the queue fills up.
 */
void arch_kprobe_queue_arm(struct kprobe *p, bool arm)
{
	unsigned int len = (p->opcode & 3) == 3 ? 4 : 2;
	u32 ebreak = len == 4 ? __BUG_INSN_32 : __BUG_INSN_16;

	kprobe_queue_text_write(p->addr, arm ? ebreak : p->opcode, len);
}

/**
 * kprobe_queue_text_write() - queue writing an instruction at @addr
 * @addr: a probed instruction's address
 * @insn: what to write, in its low @len bytes
 * @len: 2 or 4
 *
 * text_mutex held.
 */
void kprobe_queue_text_write(void *addr, u32 insn, unsigned int len)
{
	unsigned int i;

	lockdep_assert_held(&text_mutex);
	if (text_queue.len == TEXT_QUEUE_LEN)
		arch_kprobe_queue_apply();
	i = text_queue.len++;
	text_queue.addr[i] = addr;
	text_queue.insn[i] = insn;
	text_queue.size[i] = len;
}

/*
 * On every online CPU, inside stop_machine(): the last to arrive writes
 * the queue while the others spin, then lets them go; each executes
 * FENCE.I on its way out (the writer's own through patch_insn_write()).
 */
static int write_queue(void *unused)
{
	unsigned int i, n = num_online_cpus();
	int ret = 0;

	if (atomic_inc_return(&text_queue.arrived) == n) {
		for (i = 0; i < text_queue.len && !ret; i++)
			ret = patch_insn_write(text_queue.addr[i], &text_queue.insn[i],
					       text_queue.size[i]);
		/* The writes before the release that frees the others. */
		atomic_inc_return_release(&text_queue.arrived);
	} else {
		while (atomic_read(&text_queue.arrived) <= n)
			cpu_relax();
		local_flush_icache_all();
	}
	return ret;
}

/**
 * arch_kprobe_queue_apply() - write the queued breakpoints
 *
 * text_mutex held, with cpus_read_lock() (stop_machine_cpuslocked()).
 * Every CPU executes the new text when this returns.
 */
void arch_kprobe_queue_apply(void)
{
	int ret;

	lockdep_assert_held(&text_mutex);
	if (!text_queue.len)
		return;
	atomic_set(&text_queue.arrived, 0);
	/*
	 * patch_insn_write() asserts text_mutex, which this task holds,
	 * not the stopper thread that writes: riscv's flag for that.
	 */
	riscv_patch_in_stop_machine = true;
	ret = stop_machine_cpuslocked(write_queue, NULL, cpu_online_mask);
	riscv_patch_in_stop_machine = false;
	WARN_ONCE(ret, "kprobes: breakpoint write failed: %d\n", ret);
#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
	kprobe_text_syncs++;
#endif
	text_queue.len = 0;
}
