// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * riscv kprobes at ftrace sites. A traced function starts with ftrace's
 * call site, "auipc t0; jalr t0" (two NOPs while nothing traces it), at
 * its symbol: a probe there is served by ftrace, with no EBREAK. The
 * core puts the site in one of its ftrace_ops' filters. While our ops
 * alone traces the function, ftrace points the call at our ops' own
 * trampoline, kprobe_ftrace_trampoline (ftrace_stub.S), which saves the
 * entry's registers and calls kprobe_ftrace_trampoline_hit(): no generic
 * ftrace code runs. When other ftrace users trace it too, ftrace_caller
 * calls them all, kprobe_ftrace_handler (ftrace_stub.S) among them, which
 * calls kprobe_ftrace_hit(). The call's second word is refused as a
 * probe point (breakpoint.c).
 *
 * The handlers' pt_regs, on the trampoline, are the entry's registers;
 * t0 is the address after the call site, as the call left it, and ra,
 * s0-s11 and a0-a7 go back to the function after the handlers (a
 * kretprobe puts its trampoline in ra). Through ftrace_caller, which
 * keeps a0-a7, ra, sp and s0 only (DYNAMIC_FTRACE_WITH_ARGS, no pt_regs):
 *  - a0-a7, ra, s0: the function's, written back;
 *  - s1-s11: the function's, written back, when ftrace_caller called us
 *    itself (our ops is ftrace's only one); 0 when ftrace reaches us
 *    through its list function;
 *  - sp: the function's, read-only; tp: current, as in the kernel; gp
 *    and t1-t6: 0 (t0 as above), since nothing is in them at an entry
 *    that a handler could want and ftrace_caller used some.
 * On both paths:
 *  - epc: the probe's address (the symbol) in the pre_handler, as an
 *    EBREAK there would show it, and the address after the call site in
 *    the post_handler; a pre_handler that returns non-zero resumes where
 *    it set epc (see resume_pc());
 *  - status: a trap from S-mode (SPP set), SPIE telling whether the
 *    function runs with interrupts on.
 *
 * s0 through ftrace_caller needs the graph tracer's frame test, which
 * makes ftrace_caller keep it (HAVE_FUNCTION_GRAPH_FP_TEST): riscv's
 * KPROBES_ON_FTRACE depends on it, since a kretprobe's rethook records
 * s0 at the entry and checks it at the return.
 */

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <asm/csr.h>

#ifndef HAVE_FUNCTION_GRAPH_FP_TEST
#error "kprobes on ftrace need ftrace_caller to keep s0: see arch/riscv/Kconfig"
#endif

/* The sstatus of a trap from S-mode taken where we are. */
static __always_inline unsigned long entry_status(void)
{
	unsigned long status = csr_read(CSR_STATUS);
	unsigned long pie = status & SR_IE ? SR_PIE : 0;

	return (status & ~(SR_IE | SR_PIE)) | SR_PP | pie;
}

/* The fields of a pt_regs an exception's entry sets beyond the registers. */
static __always_inline void fill_trap_fields(struct pt_regs *regs, unsigned long pc)
{
	regs->epc = pc;
	regs->status = entry_status();
	regs->badaddr = 0;
	regs->cause = 0;
	regs->orig_a0 = regs->a0;
}

/*
 * s0-s11 as kprobe_ftrace_handler saved them: saved[i] is si. s0 is
 * taken from fregs, where ftrace_caller keeps it on every path and
 * restores it from; pt_regs keeps s1 apart from s2-s11.
 */
#define SAVED_REGS	12

static __always_inline void fill_regs(struct pt_regs *regs, unsigned long ip,
				      const struct __arch_ftrace_regs *afregs,
				      const unsigned long *saved, bool exact)
{
	memset(regs, 0, sizeof(*regs));
	regs->ra = afregs->ra;
	regs->sp = afregs->sp;
	regs->tp = (unsigned long)current;
	regs->t0 = afregs->epc;
	memcpy(&regs->a0, afregs->args, sizeof(afregs->args));
	regs->s0 = afregs->s0;
	if (exact) {
		regs->s1 = saved[1];
		memcpy(&regs->s2, &saved[2], (SAVED_REGS - 2) * sizeof(*saved));
	}
	fill_trap_fields(regs, ip);
}

/* What a handler may change goes back to the function. */
static __always_inline void write_back(const struct pt_regs *regs,
				       struct __arch_ftrace_regs *afregs,
				       unsigned long *saved, bool exact)
{
	memcpy(afregs->args, &regs->a0, sizeof(afregs->args));
	afregs->ra = regs->ra;
	afregs->s0 = regs->s0;
	if (exact) {
		saved[1] = regs->s1;
		memcpy(&saved[2], &regs->s2, (SAVED_REGS - 2) * sizeof(*saved));
	}
}

/* ftrace_stub.S: a lone "ret", where a return to the caller goes on. */
void kprobe_ftrace_return(void);

/*
 * Where a pre_handler that returned non-zero sends the function on, from
 * the call site at @ip (the probe's address), as it would from an EBREAK
 * there:
 *  - into the call site (its JALR) or just past it: past it. The call
 *    site only calls ftrace, and going through it again would hit the
 *    probe again, for ever, where a step of the probed instruction goes
 *    on after it;
 *  - to ra, back to the caller (fail_function, bpf_override_return):
 *    through a "ret". With a direct trampoline on the function,
 *    ftrace_caller jumps to it with the pc it would resume at in t0:
 *    one that goes on at t0 (BPF's for fentry programs) would run the
 *    caller's code as the function's rest; the "ret" returns to the
 *    caller instead, with the handler's a0. BPF's trampoline for fexit
 *    and fmod_ret programs calls the function's body itself (at the
 *    symbol + 8), and the caller gets the body's return value then, not
 *    the handler's;
 *  - anywhere else: there. @ip itself goes through the probe again, as
 *    an EBREAK's would.
 */
static __always_inline unsigned long resume_pc(unsigned long ip, const struct pt_regs *regs)
{
	if (regs->epc > ip && regs->epc <= ip + MCOUNT_INSN_SIZE)
		return ip + MCOUNT_INSN_SIZE;
	if (regs->epc == regs->ra)
		return (unsigned long)kprobe_ftrace_return;
	return regs->epc;
}

/* A post_handler at an entry: it sees the pc after the call site. */
static noinline notrace void run_post_handler(struct kprobe *p, struct pt_regs *regs,
					      kprobe_post_handler_t post)
{
	regs->epc = (unsigned long)p->addr + MCOUNT_INSN_SIZE;
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_SSDONE);
	post(p, regs, 0);
}
NOKPROBE_SYMBOL(run_post_handler);

/*
 * The probe @p at the call site @ip was reached, with no other hit
 * running on this CPU (@running, its current_kprobe, is NULL): run its
 * handlers on @regs. The caller addresses current_kprobe once: each
 * per-CPU access would load the CPU's offset again.
 *
 * Return: non-zero when a pre_handler chose where the function goes on
 * (regs->epc).
 */
static __always_inline int site_hit(struct kprobe *p, struct kprobe **running,
				    struct pt_regs *regs)
{
	unsigned int flags = READ_ONCE(p->flags);
	kprobe_post_handler_t post;

	*running = p;
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	kprobe_count_hit(p);
	if (kprobe_site_pre_handler(p, flags, regs)) {
		*running = NULL;
		return 1;
	}
	/* The post_handler is read once: it may be cleared meanwhile. */
	post = READ_ONCE(p->post_handler);
	if (unlikely(post))
		run_post_handler(p, regs, post);
	*running = NULL;
	return 0;
}

/**
 * kprobe_ftrace_hit() - a probed ftrace site was reached through ftrace_caller
 * @ip: the call site, the function's entry
 * @parent_ip: the function's caller
 * @ops: our ftrace_ops
 * @fregs: what ftrace_caller saved
 * @saved: s0-s11, as kprobe_ftrace_handler saved them (and will restore)
 * @exact: they are the function's (ftrace_caller called us itself)
 *
 * Called only by kprobe_ftrace_handler (ftrace_stub.S). notrace, as
 * ftrace's own callbacks are: tracing it would only recurse. @exact is
 * for an ftrace_caller that calls our ops alone: ftrace sends the sites
 * only our ops traces to our trampoline instead, so with ftrace as it is
 * this runs through the list function.
 */
notrace void kprobe_ftrace_hit(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops, struct ftrace_regs *fregs,
			       unsigned long *saved, bool exact)
{
	struct __arch_ftrace_regs *afregs = arch_ftrace_regs(fregs);
	struct kprobe *p, **running;
	struct pt_regs regs;
	int bit = -1;

	/* Ftrace's recursion guard: a nested call of ours is dropped. */
	if (likely(!kprobe_ftrace_disabled))
		bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	p = get_kprobe((kprobe_opcode_t *)ip);
	if (p && !kprobe_disabled(p)) {
		running = this_cpu_ptr(&current_kprobe);
		if (*running) {
			kprobes_inc_nmissed_count(p);	/* inside another hit */
		} else {
			fill_regs(&regs, ip, afregs, saved, exact);
			if (site_hit(p, running, &regs))
				afregs->epc = resume_pc(ip, &regs);
			write_back(&regs, afregs, saved, exact);
		}
	}
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(kprobe_ftrace_hit);

/**
 * kprobe_ftrace_trampoline_hit() - our trampoline's part
 * @regs: the entry's registers, as kprobe_ftrace_trampoline saved them
 * @ret: the address after the call site, which called the trampoline
 *
 * As kprobe_ftrace_hit(), with what the trampoline makes known: only our
 * ops traces the function, so every register is the function's, and no
 * direct trampoline is there. No recursion guard is needed beside the
 * one every hit path has, current_kprobe: until it is set
 * this runs only code ftrace does not trace, and a hit nested in the
 * handlers finds it set and is missed. Called only by the trampoline
 * (ftrace_stub.S); notrace, as ftrace's callbacks are.
 *
 * Return: where the function goes on: @ret, unless a pre_handler chose.
 */
notrace unsigned long kprobe_ftrace_trampoline_hit(struct pt_regs *regs, unsigned long ret)
{
	unsigned long ip = ret - MCOUNT_INSN_SIZE;
	struct kprobe *p, **running;
	unsigned long pc = ret;

	if (unlikely(kprobe_ftrace_disabled))
		return ret;
	preempt_disable_notrace();
	p = get_kprobe_inline((void *)ip);
	if (kprobe_disabled(p))
		goto out;
	running = this_cpu_ptr(&current_kprobe);
	if (*running) {
		kprobes_inc_nmissed_count(p);
		goto out;
	}
	fill_trap_fields(regs, ip);
	if (site_hit(p, running, regs))
		pc = resume_pc(ip, regs);
out:
	preempt_enable_notrace();
	return pc;
}
NOKPROBE_SYMBOL(kprobe_ftrace_trampoline_hit);

int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = 0;
	return 0;
}
