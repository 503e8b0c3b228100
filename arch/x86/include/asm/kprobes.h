/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _ASM_X86_KPROBES_H
#define _ASM_X86_KPROBES_H
/*
 * x86 side of kprobes: how a probed instruction is kept and the per-CPU
 * state of a probe hit. The code is in arch/x86/kernel/kprobes/.
 */

#include <asm-generic/kprobes.h>

#ifdef CONFIG_KPROBES
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

struct kprobe;
struct pt_regs;

/* A breakpoint replaces one byte: the probe keeps that byte. */
typedef u8 kprobe_opcode_t;

/* The core keeps out-of-line copies in slots it allocates for us. */
#define __ARCH_WANT_KPROBES_INSN_SLOT

/*
 * A slot holds two copies of the instruction. The trapping copy, at its
 * start, is followed by an int3 that brings the CPU back to us after it
 * ran. The boosted copy, at KPROBE_BOOST_OFFSET, is followed by a jump
 * back to the instruction after the original: no second trap. The last
 * four bytes, at KPROBE_ORIGIN_OFFSET, hold the original's address
 * relative to the slot (an s32: slots and text are within 2 GiB), for
 * rewinding a fault in the boosted copy.
 */
#define KPROBE_BOOST_OFFSET	16
#define KPROBE_ORIGIN_OFFSET	(KPROBE_BOOST_OFFSET + MAX_INSN_SIZE + JMP32_INSN_SIZE)
#define KPROBE_SLOT_SIZE	(KPROBE_ORIGIN_OFFSET + 4)

/* kretprobe_blacklist[] names __switch_to (breakpoint.c). */
extern const int kretprobe_blacklist_size;

/* Our hit paths call kprobe_count_hit() for the site they hit. */
#define arch_kprobe_counts_hits	true

/*
 * Our breakpoint and jump writes are queued (breakpoint.c, optimize.c)
 * and made visible together when the core applies its batch.
 */
#define HAVE_KPROBE_BATCH

/* A detour buffer of an optimized probe (see optimize.c). */
#define KPROBE_OPTINSN_SLOT_SIZE	160

/*
 * The most bytes an optimized probe's jump can cover: its region is
 * whole instructions, the last of which starts within the jump.
 */
#define MAX_OPTIMIZED_LENGTH	(JMP32_INSN_SIZE - 1 + MAX_INSN_SIZE)

/* How a hit executes the probed instruction (arch_specific_insn::kind). */
enum kprobe_insn_kind {
	KPROBE_INSN_COPY,	/* run the copy in the slot */
	KPROBE_INSN_JMP,	/* jmp rel8/rel32 */
	KPROBE_INSN_CALL,	/* call rel32 */
	KPROBE_INSN_JCC,	/* jcc rel8/rel32 */
	KPROBE_INSN_LOOP,	/* loop, loope, loopne, jrcxz */
	KPROBE_INSN_RET,	/* ret, ret imm16 */
	KPROBE_INSN_JMP_IND,	/* jmp r/m64 */
	KPROBE_INSN_CALL_IND,	/* call r/m64 */
	KPROBE_INSN_CLI,
	KPROBE_INSN_STI,
	KPROBE_INSN_POPF,
	KPROBE_INSN_PUSHF,
};

/* Whether hits may use the boosted copy (arch_specific_insn::boost). */
enum kprobe_boost {
	KPROBE_BOOST_NEVER,	/* always trap after the copy */
	KPROBE_BOOST_AFTER_RUN,	/* boost once the trapping copy ran cleanly */
	KPROBE_BOOST_READY,	/* hits without a post_handler jump back */
};

/**
 * struct arch_specific_insn - the probed instruction, ready to execute
 * @insn: slot with the copy (NULL for probes that never run a copy)
 * @size: length of the original instruction
 * @kind: enum kprobe_insn_kind
 * @cond: condition code of a jcc, or which loop variant
 * @rm_base: indirect branch operand: register number, or base register
 *	of a memory operand (-1: none)
 * @rm_index: index register of a memory operand (-1: none)
 * @rm_scale: log2 of the index scale
 * @rm_mem: 0: register operand, 1: memory operand, 2: RIP-relative
 * @disp: branch displacement, ret's stack adjustment, or the memory
 *	operand's displacement
 * @boost: enum kprobe_boost; moves from AFTER_RUN to READY on the hit
 *	path, read there with READ_ONCE()
 */
struct arch_specific_insn {
	kprobe_opcode_t *insn;
	u8 size;
	u8 kind;
	u8 cond;
	s8 rm_base;
	s8 rm_index;
	u8 rm_scale;
	u8 rm_mem;
	u8 boost;
	s32 disp;
};

/**
 * struct arch_optimized_insn - the detour of an optimized probe
 * @insn: the detour buffer (NULL when the site cannot be optimized)
 * @size: length of the region the jump replaces: whole instructions,
 *	at least JMP32_INSN_SIZE bytes
 * @copy_offset: where in @insn the region's copy starts; an int3 hit
 *	may continue there once the site is being optimized
 * @orig: the first JMP32_INSN_SIZE bytes of the region, as they were
 * @in_text: the jump is queued or written, and not yet taken out
 */
struct arch_optimized_insn {
	kprobe_opcode_t *insn;
	size_t size;
	u16 copy_offset;
	u8 orig[JMP32_INSN_SIZE];
	bool in_text;
};

/*
 * Per-CPU state of the hit this CPU is handling. A probe hit inside it
 * (nested) keeps no state: see nested_hit() in breakpoint.c.
 */
struct kprobe_ctlblk {
	unsigned long kprobe_status;
	unsigned long saved_if;		/* X86_EFLAGS_IF as the probe found it */
};

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Our ftrace_ops' own trampoline (ftrace_trampoline.S), which ftrace
 * calls from the sites only our ops traces, and its C part.
 */
void kprobe_ftrace_trampoline(void);
bool kprobe_ftrace_trampoline_hit(struct pt_regs *regs);
#define arch_kprobe_ftrace_trampoline	((unsigned long)kprobe_ftrace_trampoline)
#endif

int kprobe_fault_handler(struct pt_regs *regs, int trapnr);
int kprobe_int3_handler(struct pt_regs *regs);

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
/* int3 traps kprobes handled, per CPU: lets the tests see which path ran. */
DECLARE_PER_CPU(unsigned long, kprobe_int3_traps);
#endif

#endif /* CONFIG_KPROBES */
#endif /* _ASM_X86_KPROBES_H */
