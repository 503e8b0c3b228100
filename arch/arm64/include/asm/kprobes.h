/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _ASM_ARM64_KPROBES_H
#define _ASM_ARM64_KPROBES_H
/*
 * arm64 side of kprobes: how a probed instruction is kept and the per-CPU
 * state of a probe hit. The code is in arch/arm64/kernel/probes/; the
 * instruction decoder and the simulators there are shared with uprobes.
 */

#include <asm-generic/kprobes.h>

#ifdef CONFIG_KPROBES
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <asm/probes.h>	/* kprobe_opcode_t, struct arch_specific_insn */

struct kprobe;

/* The core keeps out-of-line copies in slots it allocates for us. */
#define __ARCH_WANT_KPROBES_INSN_SLOT

/*
 * A slot holds two runs of the copied instruction: the step's, ended by
 * the BRK that brings the CPU back (KPROBES_BRK_SS_IMM), and the boosted
 * one, ended by a B to the instruction after the probe (written when the
 * slot is within the B's reach). MAX_INSN_SIZE words each.
 */
#define MAX_INSN_SIZE			2
#define KPROBE_SLOT_SIZE		(2 * MAX_INSN_SIZE)

/* No function is barred from return probes here. */
#define kretprobe_blacklist_size	0

/* Our hit paths call kprobe_count_hit() for the site they hit. */
#define arch_kprobe_counts_hits		true

/*
 * Breakpoint writes are queued (arming.c) and made visible together,
 * with one stop_machine() or one IPI round, when the core applies its
 * batch.
 */
#define HAVE_KPROBE_BATCH

/**
 * struct kprobe_ctlblk - what a CPU remembers of the hit it is handling
 * @kprobe_status: KPROBE_HIT_ACTIVE, _SS, _SSDONE or KPROBE_REENTER
 * @saved_daif: the interrupted context's DAIF bits, masked while the
 *	copy in the slot runs
 * @outer: the hit a KPROBE_REENTER step interrupted: its probe (NULL
 *	for the step of a disabled probe's hit, which runs no handler)
 * @outer_status: its kprobe_status
 * @outer_daif: its saved_daif
 */
struct kprobe_ctlblk {
	unsigned int kprobe_status;
	unsigned long saved_daif;
	struct kprobe *outer;
	unsigned int outer_status;
	unsigned long outer_daif;
};

int kprobe_fault_handler(struct pt_regs *regs, unsigned int esr);

/*
 * Does a B at @from reach @to? Its offset is a signed 26-bit count of
 * words: 128 MiB back, 128 MiB - 4 forward.
 */
static __always_inline bool kprobe_b_reaches(unsigned long from, unsigned long to)
{
	return to - from + SZ_128M < 2 * SZ_128M;
}

/* Queue a write of the probed text (arming.c); text_mutex held. */
void kprobe_queue_text_write(kprobe_opcode_t *addr, u32 insn, u32 old);

/*
 * For the pt_regs kprobes builds without an exception (an entry on
 * ftrace, a return through the trampoline): the fields an EL1
 * exception's entry sets beyond the registers, which in_syscall() and
 * interrupts_enabled() read.
 */
static __always_inline void kprobe_regs_as_el1_entry(struct pt_regs *regs)
{
	regs->orig_x0 = 0;
	regs->syscallno = NO_SYSCALL;
	if (system_uses_irq_prio_masking())
		regs->pmr_save = read_sysreg_s(SYS_ICC_PMR_EL1);
}

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
/* kprobes BRK exceptions handled on a CPU (a probe's, a step's end). */
DECLARE_PER_CPU(unsigned long, kprobe_brk_traps);
/* Text synchronisations (stop_machine() or IPI rounds) of breakpoint writes. */
extern unsigned long kprobe_text_syncs;
#endif

#ifdef CONFIG_KPROBES_ON_FTRACE
struct ftrace_ops;
struct ftrace_regs;
/* Called by kprobe_ftrace_handler (ftrace_stub.S). */
void kprobe_ftrace_hit(unsigned long ip, unsigned long parent_ip,
		       struct ftrace_ops *ops, struct ftrace_regs *fregs,
		       unsigned long *saved, bool exact);

/*
 * Our ftrace_ops' own trampoline (ftrace_stub.S), which ftrace calls from
 * the sites only our ops traces, and its C part.
 */
void kprobe_ftrace_trampoline(void);
unsigned long kprobe_ftrace_trampoline_hit(struct pt_regs *regs, unsigned long ret);
#define arch_kprobe_ftrace_trampoline	((unsigned long)kprobe_ftrace_trampoline)

/* A probe at a function's symbol rides its BL to ftrace (ftrace_entry.c). */
unsigned long arch_kprobe_ftrace_ip(unsigned long addr);
struct kprobe *arch_kprobe_ftrace_site(unsigned long ip);
#define arch_kprobe_ftrace_ip arch_kprobe_ftrace_ip
#endif

#ifdef CONFIG_OPTPROBES
/*
 * An optimized site's B covers the probed instruction only. Its detour
 * (optimize.c, optprobe.S) is a slot of KPROBE_OPTINSN_SLOT_SIZE words
 * within the B's reach of the site.
 */
#define MAX_OPTIMIZED_LENGTH		AARCH64_INSN_SIZE
#define KPROBE_OPTINSN_SLOT_SIZE	20

/**
 * struct arch_optimized_insn - an optimized site's detour
 * @insn: the detour's slot, or NULL
 * @size: bytes the B covers (MAX_OPTIMIZED_LENGTH) once a detour is
 *	taken, or laid out for the query file; 0 otherwise
 * @written: the detour is written (when the site is first optimized)
 */
struct arch_optimized_insn {
	kprobe_opcode_t *insn;
	unsigned int size;
	bool written;
};

/* optprobe.S: the detour template's start, labels inside it, its end. */
extern const __le32 kprobe_optprobe_tmpl[], kprobe_optprobe_tmpl_copy[],
	kprobe_optprobe_tmpl_op[], kprobe_optprobe_tmpl_val[], kprobe_optprobe_tmpl_end[];
/* optprobe.S: the common part, its redirect BRK, the redirect's ERET. */
extern const u32 kprobe_optprobe_common[], kprobe_optprobe_redirect_brk[],
	kprobe_optprobe_redirect_eret[];

struct optimized_kprobe;
/* Queue the B to a detour over an armed probe's BRK (arming.c). */
void kprobe_queue_detour_jump(kprobe_opcode_t *addr, u32 b);
/* Called by kprobe_optprobe_common (optprobe.S). */
int kprobe_optprobe_hit(struct optimized_kprobe *op, struct pt_regs *regs);
/* A redirecting hit's BRK in kprobe_optprobe_common (breakpoint.c). */
bool kprobe_optprobe_redirect(struct pt_regs *regs);
#else
/* No optimized probes: no BRK of theirs to finish. */
static inline bool kprobe_optprobe_redirect(struct pt_regs *regs)
{
	return false;
}
#endif

#ifdef CONFIG_KRETPROBES
/* Called by __kretprobe_trampoline (kretprobe_trampoline.S). */
unsigned long kretprobe_return_handler(struct pt_regs *regs);
#endif

#endif /* CONFIG_KPROBES */

/* Called by debug-monitors.c for the BRK immediates kprobes own. */
int kprobe_brk_handler(struct pt_regs *regs, unsigned long esr);
int kprobe_ss_brk_handler(struct pt_regs *regs, unsigned long esr);
int kretprobe_brk_handler(struct pt_regs *regs, unsigned long esr);

#endif /* _ASM_ARM64_KPROBES_H */
