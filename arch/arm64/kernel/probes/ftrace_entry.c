// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kprobes at ftrace sites. A traced function starts with
 * "mov x9, lr; bl ftrace_caller" (after a BTI C with BTI): the core puts
 * the BL's address in one of its ftrace_ops' filters, and ftrace calls
 * kprobe_ftrace_handler (ftrace_stub.S), then kprobe_ftrace_hit(), with
 * no exception taken. A probe at the function's symbol (+0) is placed on
 * the BL (arch_adjust_kprobe_addr()): it sees the registers of the entry,
 * since the MOV before it only copies lr into the scratch x9.
 *
 * ftrace saves x0-x8, fp, lr, sp and pc only (DYNAMIC_FTRACE_WITH_ARGS,
 * no pt_regs); the handlers get a pt_regs built from them, with
 *  - x0-x8, x29 (fp), x30 (lr): the function's, written back after the
 *    handlers (a kretprobe puts its trampoline in x30 this way);
 *  - x9: lr, as the MOV made it;
 *  - x10-x17: 0 (scratch registers hold nothing at a function's entry,
 *    and ftrace_caller used them);
 *  - x18-x28: the function's, x19-x28 written back, when kprobes is the
 *    function's only ftrace user; 0 when ftrace reaches us through its
 *    list function (the function tracer traces the function too, say);
 *  - sp: the function's, read-only (ftrace_caller restores it itself);
 *  - pc: the BL's address in the pre_handler, as a breakpoint hit shows
 *    its address, and the next instruction's in the post_handler; a
 *    pre_handler that returns non-zero resumes at the pc it set;
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

static __always_inline void fill_regs(struct pt_regs *regs, unsigned long ip,
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
	regs->pc = ip;
	regs->pstate = PSR_MODE_EL1h | read_sysreg(daif);
	/* As an EL1 exception's entry sets them: in_syscall(), interrupts_enabled(). */
	regs->syscallno = NO_SYSCALL;
	if (system_uses_irq_prio_masking())
		regs->pmr_save = read_sysreg_s(SYS_ICC_PMR_EL1);
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

/* The BL at @ip ran into our ops: play the probe's part. */
static __always_inline void ftrace_site_hit(struct kprobe *p, unsigned long ip,
					    struct ftrace_regs *fregs,
					    unsigned long *saved, bool exact)
{
	struct __arch_ftrace_regs *afregs = arch_ftrace_regs(fregs);
	kprobe_post_handler_t post;
	struct pt_regs regs;

	fill_regs(&regs, ip, afregs, saved, exact);
	__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
	__this_cpu_write(current_kprobe, p);
	kprobe_count_hit(p);
	if (p->pre_handler && p->pre_handler(p, &regs)) {
		/* The pre_handler chose where the function goes on. */
		afregs->pc = regs.pc;
	} else {
		/* "Execute" the BL: the post_handler sees the next pc. */
		post = READ_ONCE(p->post_handler);
		if (post) {
			regs.pc = ip + AARCH64_INSN_SIZE;
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
	p = get_kprobe((kprobe_opcode_t *)ip);
	if (p && !kprobe_disabled(p)) {
		if (!kprobe_running())
			ftrace_site_hit(p, ip, fregs, saved, exact);
		else
			kprobes_inc_nmissed_count(p);	/* inside another hit */
	}
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(kprobe_ftrace_hit);

int arch_prepare_kprobe_ftrace(struct kprobe *p)
{
	memset(&p->ainsn, 0, sizeof(p->ainsn));
	p->opcode = 0;
	return 0;
}

/*
 * The ftrace site of the function at @addr: the BL after "mov x9, lr",
 * and after "bti c" too with BTI; 0 when it has none. Read from the
 * text rather than found by ftrace_location(@addr), which looks the
 * symbol's size up in kallsyms.
 */
static unsigned long ftrace_site_of(unsigned long addr)
{
	unsigned long site = addr + AARCH64_INSN_SIZE;
	u32 insn;

	if (aarch64_insn_read((void *)addr, &insn))
		return 0;
	if (insn == aarch64_insn_gen_hint(AARCH64_INSN_HINT_BTIC))
		site += AARCH64_INSN_SIZE;
	return ftrace_location_range(site, site) == site ? site : 0;
}

/**
 * arch_adjust_kprobe_addr() - the instruction a symbol and offset name
 * @addr: the symbol's address
 * @offset: the offset asked for
 * @on_func_entry: set when that is the function's entry
 *
 * A traced function's entry (+0) is its ftrace site, one or two
 * instructions in: probes there take no exception. The site itself, at
 * its own offset, is the entry too.
 *
 * Return: the address to probe.
 */
kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr, unsigned long offset,
					 bool *on_func_entry)
{
	unsigned long site = offset <= 2 * AARCH64_INSN_SIZE ? ftrace_site_of(addr) : 0;

	if (site) {
		*on_func_entry = offset == 0 || addr + offset == site;
		if (!offset)
			return (kprobe_opcode_t *)site;
	} else {
		*on_func_entry = offset == 0;
	}
	return (kprobe_opcode_t *)(addr + offset);
}
