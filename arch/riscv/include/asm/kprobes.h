/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _ASM_RISCV_KPROBES_H
#define _ASM_RISCV_KPROBES_H
/*
 * riscv side of kprobes: how a probed instruction is kept and the per-CPU
 * state of a probe hit. The code is in arch/riscv/kernel/probes/; the
 * instruction decoder and the simulators there are shared with uprobes,
 * and kretprobes run on rethook.
 */

#include <asm-generic/kprobes.h>

#ifdef CONFIG_KPROBES
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <asm/extable.h>
#include <asm/probes.h>	/* kprobe_opcode_t, struct arch_specific_insn */

struct kprobe;

/* The core keeps out-of-line copies in slots it allocates for us. */
#define __ARCH_WANT_KPROBES_INSN_SLOT

/*
 * An instruction is 2 or 4 bytes; kprobe_opcode_t is 32 bits, so one
 * unit holds either (a compressed one in its low half).
 */
#define MAX_INSN_SIZE			1

/*
 * A slot holds two runs of the copied instruction, 4-byte aligned: the
 * step's, [copy, EBREAK], in its first 8 bytes, and the boosted one,
 * [copy, AUIPC rX, JALR x0 to the next instruction], in the 12 after,
 * written when a register rX is free there (breakpoint.c). A probe's
 * p->ainsn.api.insn is its slot and p->ainsn.api.restore the boosted
 * part's address, or 0 when its copy is only stepped.
 */
#define KPROBE_SLOT_STEP_BYTES		8
#define KPROBE_SLOT_SIZE		5

/* No function is barred from return probes here. */
#define kretprobe_blacklist_size	0

/* Our hit paths call kprobe_count_hit() for the site they hit. */
#define arch_kprobe_counts_hits		true

/*
 * Breakpoint writes are queued (arming.c) and made visible together,
 * with one stop_machine(), when the core applies its batch.
 */
#define HAVE_KPROBE_BATCH

/**
 * struct kprobe_ctlblk - what a CPU remembers of the hit it is handling
 * @kprobe_status: KPROBE_HIT_ACTIVE, _SS, _SSDONE or KPROBE_REENTER
 * @saved_status: the interrupted context's sstatus, whose SPIE is
 *	cleared while the copy in the slot runs
 * @outer: the hit a KPROBE_REENTER step interrupted: its probe (NULL
 *	for the step of a disabled probe's hit, which runs no handler)
 * @outer_status: its kprobe_status
 * @outer_saved_status: its saved_status
 */
struct kprobe_ctlblk {
	unsigned int kprobe_status;
	unsigned long saved_status;
	struct kprobe *outer;
	unsigned int outer_status;
	unsigned long outer_saved_status;
};

int kprobe_fault_handler(struct pt_regs *regs, unsigned int trapnr);
bool kprobe_breakpoint_handler(struct pt_regs *regs);
bool kprobe_single_step_handler(struct pt_regs *regs);

/*
 * A register no path from @addr reads before writing it, within its
 * function [@start, @end) (liveness.c): 0 when none is found.
 */
unsigned int kprobe_free_register(unsigned long addr, unsigned long start,
				  unsigned long end);
/*
 * Why control may enter [@lo, @hi) elsewhere than at @lo, within its
 * function [@start, @end) (liveness.c); NULL when it may not.
 */
const char *kprobe_region_entered(unsigned long lo, unsigned long hi,
				  unsigned long start, unsigned long end);
/* Drop what liveness.c decoded of text in [@start, @end), going away. */
void kprobe_forget_decoded(unsigned long start, unsigned long end);
/*
 * The handler that carries out @insn at @addr on the trap's registers
 * (emulate.c), or NULL; and the two there are.
 */
probes_handler_t *kprobe_emulation(u32 insn, unsigned long addr);
bool kprobe_emulate_int(u32 opcode, unsigned long addr, struct pt_regs *regs);
bool kprobe_emulate_access(u32 opcode, unsigned long addr, struct pt_regs *regs);
/*
 * vmlinux's exception table, as kernel/extable.c declares it (and sorts
 * it at boot): liveness.c looks up the entries of a function's range.
 */
extern struct exception_table_entry __start___ex_table[];
extern struct exception_table_entry __stop___ex_table[];

/* Queue writing @len bytes of @insn at @addr (arming.c); text_mutex held. */
void kprobe_queue_text_write(void *addr, u32 insn, unsigned int len);

#ifdef CONFIG_KPROBES_ON_FTRACE
struct ftrace_ops;
struct ftrace_regs;
/* Called by kprobe_ftrace_handler (ftrace_stub.S). */
void kprobe_ftrace_hit(unsigned long ip, unsigned long parent_ip,
		       struct ftrace_ops *ops, struct ftrace_regs *fregs,
		       unsigned long *saved, bool exact);

/*
 * Our ftrace_ops' own trampoline (ftrace_stub.S), which ftrace calls from
 * the call sites only our ops traces, and its C part (ftrace_entry.c).
 */
void kprobe_ftrace_trampoline(void);
unsigned long kprobe_ftrace_trampoline_hit(struct pt_regs *regs, unsigned long ret);
#define arch_kprobe_ftrace_trampoline	((unsigned long)kprobe_ftrace_trampoline)
#endif

#ifdef CONFIG_OPTPROBES
/*
 * An optimized site's jump, AUIPC and JALR, covers the whole instructions
 * of its first 8 bytes: 8 bytes, or 10 when a 4-byte instruction straddles
 * the end (a C.NOP follows the jump then; KPROBE_JUMP_REGION_MAX). Its
 * detour may run copies of a few instructions after those, up to
 * MAX_OPTIMIZED_LENGTH bytes from the site, where a probe keeps the site
 * from being optimized as one inside the jump does. Instructions start
 * on any 2-byte boundary. A detour (optimize.c, optprobe.S) is
 * KPROBE_OPTINSN_SLOT_SIZE words.
 */
#define KPROBE_JUMP_REGION_MAX		10
#define MAX_OPTIMIZED_LENGTH		16
#define KPROBE_INSN_ALIGN		2
#define KPROBE_OPTINSN_SLOT_SIZE	40

/**
 * struct arch_optimized_insn - an optimized site's detour
 * @insn: the detour's slot (a placeholder until the optimizer first
 *	claims the site), or NULL
 * @size: bytes the jump covers, 8 or 10, once the region is laid out
 *	(for a site, or the query file); 0 otherwise
 * @span: bytes from the site whose instructions the detour runs copies
 *	of: @size, and those it goes on with (when the detour is written)
 * @orig: the bytes the jump replaces, as they are without probes
 * @jump_reg: the register the jump goes through, free at the site
 * @written: the slot is taken and the detour written (when the optimizer
 *	first claims the site)
 */
struct arch_optimized_insn {
	kprobe_opcode_t *insn;
	unsigned int size;
	unsigned int span;
	u8 orig[KPROBE_JUMP_REGION_MAX];
	u8 jump_reg;
	bool written;
};

struct optimized_kprobe;
bool arch_kprobe_ready_detour(struct optimized_kprobe *op);
#define arch_kprobe_ready_detour arch_kprobe_ready_detour

/* The detour (optprobe.S), its parts, and what it calls (optimize.c). */
extern const u32 kprobe_optprobe_tmpl[];
extern const u32 kprobe_optprobe_tmpl_copy[];
extern const u32 kprobe_optprobe_tmpl_lit[];
extern const u32 kprobe_optprobe_tmpl_end[];
void kprobe_optprobe_common(void);
extern const u32 kprobe_optprobe_redirect_ebreak[];
int kprobe_optprobe_hit(struct optimized_kprobe *op, struct pt_regs *regs);
bool kprobe_optprobe_redirect(struct pt_regs *regs);
/* Where a breakpoint hit of an optimized or optimizing site goes on. */
unsigned long kprobe_optprobe_copy(struct kprobe *p);
/* The instruction parcel at @at as it is without probes (kprobe_mutex held). */
u16 kprobe_text_parcel(unsigned long at, bool ebreaks);
#else
/* No jumps: the text, each probe's EBREAK in it (which a decoder stops at). */
static inline u16 kprobe_text_parcel(unsigned long at, bool ebreaks)
{
	return READ_ONCE(*(u16 *)at);
}
#endif

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
/* kprobes EBREAK exceptions handled on a CPU (a probe's, a step's end). */
DECLARE_PER_CPU(unsigned long, kprobe_ebreak_traps);
/* stop_machine() calls that wrote breakpoints. */
extern unsigned long kprobe_text_syncs;
#endif

#else /* !CONFIG_KPROBES */
/* handle_break() asks in every configuration: no EBREAK is a probe's. */
static inline bool kprobe_single_step_handler(struct pt_regs *regs)
{
	return false;
}

static inline bool kprobe_breakpoint_handler(struct pt_regs *regs)
{
	return kprobe_single_step_handler(regs);
}
#endif /* CONFIG_KPROBES */
#endif /* _ASM_RISCV_KPROBES_H */
