// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes: writing breakpoints, and the optimizer's jumps, a batch
 * at a time.
 *
 * The architecture allows an instruction to change while another CPU
 * may be executing it only when both the old and the new instruction
 * are among B, BL, BRK, NOP, ISB, SVC, HVC and SMC (Arm ARM, "Concurrent
 * modification and execution of instructions"); otherwise what that CPU
 * executes is CONSTRAINED UNPREDICTABLE. So a BRK replaces, or gives
 * back, any other instruction only while every other CPU waits in
 * stop_machine(); the optimizer's B replaces a BRK, and a BRK the B,
 * under running CPUs.
 *
 * The core calls arch_kprobe_queue_arm() for each site of a registration
 * call and arch_kprobe_queue_apply() once at its end: the writes wait in
 * text_queue and the batch costs one stop_machine() (or, when every
 * instruction involved may change under a running CPU, one IPI round
 * that synchronises every CPU's instruction stream), where writing each
 * site on its own costs one per site. A full queue is applied early;
 * that is safe because the core relies only on the last apply of a
 * batch: a site is not taken out of the table before it, and a CPU that
 * took a breakpoint holds off both stop_machine() and the IPI until it
 * leaves the handler.
 */

#include <linux/kprobes.h>
#include <linux/memory.h>
#include <linux/smp.h>
#include <asm/cacheflush.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>

/* Writes per stop_machine() at most; a registration of more takes more. */
#define TEXT_QUEUE_LEN	256

/*
 * The queued writes, in order (the same address may be armed and
 * disarmed in one batch: the last write wins). text_mutex guards it.
 */
static struct {
	void *addr[TEXT_QUEUE_LEN];
	u32 insn[TEXT_QUEUE_LEN];
	unsigned int len;
	bool needs_stop;	/* some write is not safe under a running CPU */
	bool sync_first;	/* a B to a newly written detour is queued */
} text_queue;

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
unsigned long kprobe_text_syncs;
EXPORT_SYMBOL_GPL(kprobe_text_syncs);
#endif

/* May @insn be replaced by a BRK, and come back, under a running CPU? */
static bool may_change_while_running(u32 insn)
{
	return aarch64_insn_is_b(insn) || aarch64_insn_is_bl(insn) ||
	       insn == aarch64_insn_gen_nop() || aarch64_insn_is_isb(insn) ||
	       aarch64_insn_is_brk(insn);
}

/**
 * arch_kprobe_queue_arm() - queue the breakpoint write at @p->addr
 * @p: a prepared probe site
 * @arm: true to write the BRK, false to write @p->opcode back
 *
 * text_mutex held. Nothing changes in the text before
 * arch_kprobe_queue_apply(), unless the queue fills up.
 */
void arch_kprobe_queue_arm(struct kprobe *p, bool arm)
{
	kprobe_queue_text_write(p->addr, arm ? BRK64_OPCODE_KPROBES : p->opcode,
				arm ? p->opcode : BRK64_OPCODE_KPROBES);
}

/**
 * kprobe_queue_text_write() - queue writing @insn over @old at @addr
 * @addr: a probed instruction's address
 * @insn: what to write
 * @old: what is there now
 *
 * text_mutex held. For the breakpoints and the optimizer's jumps. A
 * write is safe under a running CPU when both @old and @insn are among
 * the instructions the architecture allows; a batch with any other is
 * applied under stop_machine().
 */
void kprobe_queue_text_write(kprobe_opcode_t *addr, u32 insn, u32 old)
{
	unsigned int i;

	lockdep_assert_held(&text_mutex);
	if (text_queue.len == TEXT_QUEUE_LEN)
		arch_kprobe_queue_apply();
	i = text_queue.len++;
	text_queue.addr[i] = addr;
	text_queue.insn[i] = insn;
	if (!may_change_while_running(insn) || !may_change_while_running(old))
		text_queue.needs_stop = true;
}

#ifdef CONFIG_OPTPROBES
/**
 * kprobe_queue_detour_jump() - queue writing a B to a detour at @addr
 * @addr: an armed probe's address
 * @b: the B
 *
 * text_mutex held. The detour was written and cleaned to the point of
 * unification when it was built, but a CPU may hold stale instructions
 * of its slot, used before, until it synchronises its context: the
 * batch makes every CPU do that before it writes the B (the Arm ARM's
 * order: the new code first, then the branch to it).
 */
void kprobe_queue_detour_jump(kprobe_opcode_t *addr, u32 b)
{
	kprobe_queue_text_write(addr, b, BRK64_OPCODE_KPROBES);
	text_queue.sync_first = true;
}
#endif

/**
 * arch_kprobe_queue_apply() - write the queued breakpoints
 *
 * text_mutex held, with cpus_read_lock() (stop_machine_cpuslocked()).
 * Every CPU executes the new text when this returns.
 */
void arch_kprobe_queue_apply(void)
{
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&text_mutex);
	if (!text_queue.len)
		return;
	if (text_queue.needs_stop) {
		ret = aarch64_insn_patch_text(text_queue.addr, text_queue.insn,
					      text_queue.len);
	} else {
		if (text_queue.sync_first)
			kick_all_cpus_sync();
		for (i = 0; i < text_queue.len && !ret; i++)
			ret = aarch64_insn_patch_text_nosync(text_queue.addr[i],
							     text_queue.insn[i]);
		/* The interrupt is a context synchronisation on every CPU. */
		kick_all_cpus_sync();
		isb();
	}
	WARN_ONCE(ret, "kprobes: breakpoint write failed: %d\n", ret);
#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
	kprobe_text_syncs++;
#endif
	text_queue.len = 0;
	text_queue.needs_stop = false;
	text_queue.sync_first = false;
}
