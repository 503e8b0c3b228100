// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes at ftrace sites: the core puts the site's address in one
 * of its ftrace_ops' filters and ftrace calls us with full registers, so
 * no breakpoint is needed. Handlers see what a breakpoint hit would show
 * them: regs->ip just past a one-byte int3 in the pre_handler, and past
 * the (five-byte) ftrace call in the post_handler.
 *
 * Other ftrace users of the same function may have set the IP ftrace
 * returns to (a livepatch sends the call to the new function): unless a
 * pre_handler redirected, it is put back as it was when we were called.
 * So a change a post_handler makes to regs->ip is not honoured, as in
 * the tree.
 */

#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/preempt.h>

/* The ftrace call at @ip ran into our ops: play the probe's part. */
static __always_inline void ftrace_site_hit(unsigned long ip, struct pt_regs *regs)
{
	struct kprobe *p = get_kprobe((kprobe_opcode_t *)ip);
	kprobe_post_handler_t post;
	unsigned long resume_ip;

	if (unlikely(!p) || kprobe_disabled(p))
		return;
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
		return;
	}

	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	__this_cpu_write(current_kprobe, p);
	resume_ip = regs->ip;
	regs->ip = ip + INT3_INSN_SIZE;
	kprobe_count_hit(p);
	if (p->pre_handler && p->pre_handler(p, regs))
		goto done;	/* the pre_handler chose where ftrace returns to */

	/*
	 * "Execute" the ftrace call: the function goes on after it. The
	 * post_handler is read once, as in finish_hit() (breakpoint.c).
	 */
	post = READ_ONCE(p->post_handler);
	if (post) {
		regs->ip = ip + MCOUNT_INSN_SIZE;
		__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_SSDONE);
		post(p, regs, 0);
	}
	regs->ip = resume_ip;
done:
	__this_cpu_write(current_kprobe, NULL);
}

void kprobe_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			   struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	int bit = -1;

	/* Ftrace's recursion guard: a nested call of ours is dropped. */
	if (likely(!kprobe_ftrace_disabled))
		bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit >= 0) {
		ftrace_site_hit(ip, ftrace_get_regs(fregs));
		ftrace_test_recursion_unlock(bit);
	}
}
NOKPROBE_SYMBOL(kprobe_ftrace_handler);

int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = 0;
	return 0;
}
