// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes at ftrace sites: the core puts the site's address in one
 * of its ftrace_ops' filters, so no breakpoint is needed. Handlers see
 * what a breakpoint hit would show them: regs->ip just past a one-byte
 * int3 in the pre_handler, and past the (five-byte) ftrace call in the
 * post_handler.
 *
 * ftrace reaches us two ways. While our ops is the only one tracing a
 * function, ftrace's call site calls our ops' own trampoline,
 * kprobe_ftrace_trampoline (ftrace_trampoline.S), which builds the
 * regs and calls kprobe_ftrace_trampoline_hit(): no generic ftrace code
 * runs. When other ftrace users trace it too, ftrace's own trampoline
 * saves the regs and calls them all, kprobe_ftrace_handler() among them.
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

/* ftrace's generic path: other ftrace users trace the function too. */
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

/* A post_handler at an entry, out of the common hit's way. */
static noinline void ftrace_trampoline_post(struct kprobe *p, struct pt_regs *regs,
					    kprobe_post_handler_t post)
{
	regs->ip = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_SSDONE);
	post(p, regs, 0);
}
NOKPROBE_SYMBOL(ftrace_trampoline_post);

/*
 * Our trampoline's part: @regs is the entry's, regs->ip just past the
 * call site. As ftrace_site_hit(), with what the trampoline makes known:
 * only our ops traces the function, so no other ftrace user moved the
 * ip to go on at, and the probe is the site at the call site, found
 * without a call. Preemption is on when the trampoline calls; handlers
 * run with it off. No recursion guard is needed beside the one every hit
 * path has, kprobe_running(): until current_kprobe is set this runs only
 * code ftrace does not trace, and a hit nested in the handlers finds it
 * set and is missed.
 *
 * Return: true when a pre_handler redirected: the trampoline then goes
 * on at regs->ip with every register from @regs; otherwise past the call
 * site with the argument registers from @regs (see ftrace_trampoline.S).
 */
__visible notrace bool kprobe_ftrace_trampoline_hit(struct pt_regs *regs)
{
	unsigned long ip = regs->ip - MCOUNT_INSN_SIZE;
	kprobe_post_handler_t post;
	bool redirected = false;
	struct kprobe *p;

	if (unlikely(kprobe_ftrace_disabled))
		return false;
	preempt_disable_notrace();
	/* &kprobe_index_empty, which is disabled, when there is no site. */
	p = get_kprobe_inline((void *)ip);
	if (kprobe_disabled(p))
		goto out;
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
		goto out;
	}

	__this_cpu_write(current_kprobe, p);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	regs->ip = ip + INT3_INSN_SIZE;
	kprobe_count_hit(p);
	if (p->pre_handler && p->pre_handler(p, regs)) {
		redirected = true;
	} else {
		/* As in ftrace_site_hit(): the post_handler is read once. */
		post = READ_ONCE(p->post_handler);
		if (unlikely(post))
			ftrace_trampoline_post(p, regs, post);
	}
	__this_cpu_write(current_kprobe, NULL);
out:
	preempt_enable_notrace();
	return redirected;
}
NOKPROBE_SYMBOL(kprobe_ftrace_trampoline_hit);

int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = 0;
	return 0;
}
