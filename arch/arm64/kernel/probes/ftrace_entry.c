// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes at ftrace sites. A traced function starts with
 * "mov x9, lr; bl ftrace_caller" (after a BTI C with BTI): the core puts
 * the BL's address in one of its ftrace_ops' filters, and no exception
 * is taken. While our ops alone traces the function, ftrace points the
 * BL at our ops' own trampoline, kprobe_ftrace_trampoline (ftrace_stub.S),
 * which builds the pt_regs and calls kprobe_ftrace_trampoline_hit(): no
 * generic ftrace code runs. When other ftrace users trace it too (or our
 * trampoline is out of the BL's reach, from a far module), ftrace_caller
 * calls them all, kprobe_ftrace_handler (ftrace_stub.S) among them,
 * which calls kprobe_ftrace_hit(). A probe at the function's symbol
 * (+0) rides the BL and stays at +0, where the tree's arm64 puts its
 * breakpoint, so that the list, trace lines and bpf_get_func_ip() show
 * the symbol: ftrace's ip and the probe's address are mapped by
 * arch_kprobe_ftrace_ip() and arch_kprobe_ftrace_site(). Its handlers
 * see the registers of the entry, since the MOV (and BTI) before the BL
 * only copy lr into the scratch x9. The BL itself is refused, as in the
 * tree.
 *
 * ftrace_caller saves x0-x8, fp, lr, sp and pc only
 * (DYNAMIC_FTRACE_WITH_ARGS, no pt_regs); the handlers get a pt_regs
 * built from them, the same on our trampoline, with
 *  - x0-x8, x29 (fp), x30 (lr): the function's, written back after the
 *    handlers (a kretprobe puts its trampoline in x30 this way);
 *  - x9: lr, as the MOV made it;
 *  - x10-x17: 0 (scratch registers hold nothing at a function's entry,
 *    and ftrace_caller used them);
 *  - x18-x28: the function's, x19-x28 written back, when kprobes is the
 *    function's only ftrace user; 0 when ftrace reaches us through its
 *    list function (the function tracer traces the function too, say);
 *  - sp: the function's, read-only (ftrace_caller and our trampoline
 *    restore it themselves);
 *  - pc: the probe's address (the symbol) in the pre_handler, as a
 *    breakpoint hit shows its address, and the next instruction's in the
 *    post_handler, as after the tree's step there; a pre_handler that
 *    returns non-zero resumes at the pc it set (see resume_pc());
 *  - pstate: EL1h with the interrupt masks the function runs with; the
 *    condition flags, dead at an entry, are 0.
 */

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <asm/cpufeature.h>
#include <asm/daifflags.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/sysreg.h>

/* Where the pt_regs' x18 sits in the save area of ftrace_stub.S. */
#define SAVED_FIRST	18
#define SAVED_LAST	28

static __always_inline void fill_regs(struct pt_regs *regs, unsigned long pc,
				      struct __arch_ftrace_regs *afregs,
				      const unsigned long *saved, bool exact)
{
	int i;

	memset(regs, 0, sizeof(*regs));
	for (i = 0; i < ARRAY_SIZE(afregs->regs); i++)
		regs->regs[i] = afregs->regs[i];
	regs->regs[9] = afregs->lr;
	if (exact)
		for (i = SAVED_FIRST; i <= SAVED_LAST; i++)
			regs->regs[i] = saved[i - SAVED_FIRST];
	regs->regs[29] = afregs->fp;
	regs->regs[30] = afregs->lr;
	regs->sp = afregs->sp;
	regs->pc = pc;
	regs->pstate = PSR_MODE_EL1h | read_sysreg(daif);
	kprobe_regs_as_el1_entry(regs);
}

/*
 * The entry a call site's BL at @ip belongs to: "mov x9, lr" before it,
 * and with BTI "bti c" before that in a function that may be called
 * indirectly. Found through the table rather than the text: the word
 * before "mov x9, lr" may lie outside the function's section (no
 * pre-function NOPs without CALL_OPS), and a probe at that MOV in a BTI
 * function is a breakpoint of its own, not the entry's.
 */
static __always_inline struct kprobe *ftrace_site_at(unsigned long ip)
{
	struct kprobe *p = get_kprobe((kprobe_opcode_t *)(ip - AARCH64_INSN_SIZE));

	/*
	 * Without BTI the MOV is the entry, and a probe there always rides
	 * the call (check_probe_address()): nothing else can be found.
	 */
	if (!IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) || (p && kprobe_ftrace(p)))
		return p;
	p = get_kprobe((kprobe_opcode_t *)(ip - 2 * AARCH64_INSN_SIZE));
	return p && kprobe_ftrace(p) ? p : NULL;
}

/*
 * ftrace_site_at() on a hit path: the index searched inline, and
 * &kprobe_index_empty, which is disabled, for no site.
 */
static __always_inline struct kprobe *ftrace_site_inline(unsigned long ip)
{
	struct kprobe *p = get_kprobe_inline((void *)(ip - AARCH64_INSN_SIZE));

	if (!IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) || kprobe_ftrace(p))
		return p;
	p = get_kprobe_inline((void *)(ip - 2 * AARCH64_INSN_SIZE));
	return kprobe_ftrace(p) ? p : &kprobe_index_empty;
}

/* What a handler may change goes back to the function. */
static __always_inline void write_back(const struct pt_regs *regs,
				       struct __arch_ftrace_regs *afregs,
				       unsigned long *saved, bool exact)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(afregs->regs); i++)
		afregs->regs[i] = regs->regs[i];
	if (exact)
		for (i = SAVED_FIRST + 1; i <= SAVED_LAST; i++)
			saved[i - SAVED_FIRST] = regs->regs[i];
	afregs->fp = regs->regs[29];
	afregs->lr = regs->regs[30];
}

/* ftrace_stub.S: a lone "ret", where a return to the caller goes on. */
void kprobe_ftrace_return(void);

/*
 * Where a pre_handler that returned non-zero sends the function on, from
 * the BL at @ip, as it would from the tree's breakpoint at p->addr:
 *  - into the entry after the probe (the MOV, with BTI, or the BL):
 *    past the BL. The instructions before it only copy lr to x9, which
 *    ftrace_caller does on its way back, and going through the BL again
 *    would hit the probe again, for ever, where the tree's step of it
 *    goes on (pc = p->addr + 4, "skip the probed instruction");
 *  - to x30, back to the caller (fail_function, bpf_override_return):
 *    through a "ret". With a direct trampoline on the function (BPF
 *    fexit, fmod_ret), ftrace_caller gives it the pc it would return
 *    to, and the trampoline calls that as the function's body: the
 *    caller's code would run as a callee. The "ret" returns from the
 *    body instead, to the trampoline, which returns to the caller, as
 *    without one;
 *  - anywhere else: there. p->addr itself goes through the probe again,
 *    as the tree's breakpoint does.
 */
static __always_inline unsigned long resume_pc(struct kprobe *p, unsigned long ip,
					       const struct pt_regs *regs)
{
	if (regs->pc > (unsigned long)p->addr && regs->pc <= ip)
		return ip + AARCH64_INSN_SIZE;
	if (regs->pc == regs->regs[30])
		return (unsigned long)kprobe_ftrace_return;
	return regs->pc;
}

/* The BL at @ip that @p rides ran into our ops: play the probe's part. */
static __always_inline void ftrace_site_hit(struct kprobe *p, unsigned long ip,
					    struct ftrace_regs *fregs,
					    unsigned long *saved, bool exact)
{
	struct __arch_ftrace_regs *afregs = arch_ftrace_regs(fregs);
	kprobe_post_handler_t post;
	struct pt_regs regs;

	fill_regs(&regs, (unsigned long)p->addr, afregs, saved, exact);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	__this_cpu_write(current_kprobe, p);
	kprobe_count_hit(p);
	if (p->pre_handler && p->pre_handler(p, &regs)) {
		/* The pre_handler chose where the function goes on. */
		afregs->pc = resume_pc(p, ip, &regs);
	} else {
		/*
		 * The post_handler sees the pc after the probed instruction,
		 * as after the tree's step of it; changes to it are ignored.
		 */
		post = READ_ONCE(p->post_handler);
		if (post) {
			regs.pc = (unsigned long)p->addr + AARCH64_INSN_SIZE;
			__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_SSDONE);
			post(p, &regs, 0);
		}
	}
	write_back(&regs, afregs, saved, exact);
	__this_cpu_write(current_kprobe, NULL);
}

/**
 * kprobe_ftrace_hit() - a probed ftrace site was reached
 * @ip: the site's BL
 * @parent_ip: the function's caller
 * @ops: our ftrace_ops
 * @fregs: what ftrace_caller saved
 * @saved: x18-x28, as kprobe_ftrace_handler saved them (and will restore)
 * @exact: they are the function's (ftrace_caller called us itself)
 *
 * Called only by kprobe_ftrace_handler (ftrace_stub.S). notrace, as
 * ftrace's own callbacks are: tracing it would only recurse.
 */
notrace void kprobe_ftrace_hit(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops, struct ftrace_regs *fregs,
			       unsigned long *saved, bool exact)
{
	struct kprobe *p;
	int bit = -1;

	/* Ftrace's recursion guard: a nested call of ours is dropped. */
	if (likely(!kprobe_ftrace_disabled))
		bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	p = ftrace_site_at(ip);
	if (p && !kprobe_disabled(p)) {
		if (!kprobe_running())
			ftrace_site_hit(p, ip, fregs, saved, exact);
		else
			kprobes_inc_nmissed_count(p);	/* inside another hit */
	}
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(kprobe_ftrace_hit);

/* A post_handler at an entry, out of the common hit's way. */
static noinline void ftrace_trampoline_post(struct kprobe *p, struct pt_regs *regs,
					    kprobe_post_handler_t post)
{
	regs->pc = (unsigned long)p->addr + AARCH64_INSN_SIZE;
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_SSDONE);
	post(p, regs, 0);
}
NOKPROBE_SYMBOL(ftrace_trampoline_post);

/**
 * kprobe_ftrace_trampoline_hit() - our trampoline's part
 * @regs: the entry's registers, as kprobe_ftrace_trampoline saved them
 * @ret: the address after the site's BL, which called the trampoline
 *
 * As ftrace_site_hit(), with what the trampoline makes known: only our
 * ops traces the function, so x19-x28 are the function's, and no direct
 * trampoline is there. Preemption is on when the trampoline calls;
 * handlers run with it off. No recursion guard is needed beside the one
 * every hit path has, kprobe_running(): until current_kprobe is set this
 * runs only code ftrace does not trace, and a hit nested in the handlers
 * finds it set and is missed. Called only by the trampoline
 * (ftrace_stub.S); notrace, as ftrace's callbacks are.
 *
 * Return: where the function goes on: @ret, unless a pre_handler chose.
 */
notrace unsigned long kprobe_ftrace_trampoline_hit(struct pt_regs *regs, unsigned long ret)
{
	unsigned long ip = ret - AARCH64_INSN_SIZE;
	kprobe_post_handler_t post;
	unsigned long pc = ret;
	struct kprobe *p;

	if (unlikely(kprobe_ftrace_disabled))
		return ret;
	preempt_disable_notrace();
	p = ftrace_site_inline(ip);
	if (kprobe_disabled(p))
		goto out;
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
		goto out;
	}

	regs->pc = (unsigned long)p->addr;
	regs->pstate = PSR_MODE_EL1h | read_sysreg(daif);
	kprobe_regs_as_el1_entry(regs);
	__this_cpu_write(current_kprobe, p);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	kprobe_count_hit(p);
	if (p->pre_handler && p->pre_handler(p, regs)) {
		pc = resume_pc(p, ip, regs);
	} else {
		/* As in ftrace_site_hit(): the post_handler is read once. */
		post = READ_ONCE(p->post_handler);
		if (unlikely(post))
			ftrace_trampoline_post(p, regs, post);
	}
	__this_cpu_write(current_kprobe, NULL);
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

/**
 * arch_kprobe_ftrace_site() - the site that rides ftrace's call at @ip
 * @ip: a call site's BL
 *
 * Preemption off or kprobe_mutex held, as for get_kprobe().
 *
 * Return: the site at the BL's function entry, or NULL.
 */
struct kprobe *arch_kprobe_ftrace_site(unsigned long ip)
{
	return ftrace_site_at(ip);
}

/**
 * arch_kprobe_ftrace_ip() - the ftrace call a probe at @addr would ride
 * @addr: a probe's address
 *
 * A traced function's entry is "mov x9, lr; bl <ftrace>", after "bti c"
 * when it may be called indirectly under BTI. The MOV of a BTI function
 * is not its entry: probed, it takes a breakpoint.
 *
 * Return: the BL's address when @addr may be such an entry (the core
 * asks ftrace whether a call site is there), else 0.
 */
unsigned long arch_kprobe_ftrace_ip(unsigned long addr)
{
	u32 bti_c = aarch64_insn_gen_hint(AARCH64_INSN_HINT_BTIC);
	u32 insn, before;

	if (aarch64_insn_read((void *)addr, &insn))
		return 0;
	if (insn == bti_c)
		return addr + 2 * AARCH64_INSN_SIZE;
	if (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) &&
	    !aarch64_insn_read((void *)(addr - AARCH64_INSN_SIZE), &before) &&
	    before == bti_c)
		return 0;
	return addr + AARCH64_INSN_SIZE;
}
