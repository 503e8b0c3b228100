// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arm64 kretprobes: a hooked call returns into __kretprobe_trampoline
 * (kretprobe_trampoline.S), which saves the registers as a pt_regs and
 * calls kretprobe_return_handler(); no exception is taken on the return.
 */

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <asm/debug-monitors.h>

/**
 * arch_prepare_kretprobe() - hook the return of the call being entered
 * @ri: the instance that remembers it
 * @regs: the context at the function's first instruction
 *
 * At the entry, x30 holds the return address and x29 the caller's frame
 * pointer, which the function gives back before it returns: it tells
 * the trampoline which instance of this task's is returning.
 */
void arch_prepare_kretprobe(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	ri->ret_addr = (kprobe_opcode_t *)regs->regs[30];
	ri->fp = (void *)regs->regs[29];
	regs->regs[30] = (unsigned long)__kretprobe_trampoline;
}
NOKPROBE_SYMBOL(arch_prepare_kretprobe);

/**
 * kretprobe_return_handler() - run the handlers of a hooked return
 * @regs: the registers at the return, saved by the trampoline
 *
 * Return: the address the call really returns to.
 */
notrace unsigned long kretprobe_return_handler(struct pt_regs *regs)
{
	kprobe_regs_as_el1_entry(regs);	/* the trampoline leaves them unset */
	return kretprobe_trampoline_handler(regs, (void *)regs->regs[29]);
}
NOKPROBE_SYMBOL(kretprobe_return_handler);

/**
 * kretprobe_brk_handler() - BRK #KRETPROBES_BRK_IMM, which debug-monitors.c
 * sends here
 * @regs: the trapped context
 * @esr: the exception syndrome
 *
 * Our trampoline takes no exception, so no such BRK is ours.
 *
 * Return: DBG_HOOK_ERROR.
 */
int kretprobe_brk_handler(struct pt_regs *regs, unsigned long esr)
{
	return DBG_HOOK_ERROR;
}
NOKPROBE_SYMBOL(kretprobe_brk_handler);
