// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes: breakpoints and out-of-line execution.
 *
 * A probe point gets an int3 in place of its first byte. On a hit,
 * kprobe_int3_handler() runs the handlers and then executes the probed
 * instruction in one of two ways, chosen once at registration
 * (arch_prepare_kprobe()):
 *
 *  - Emulated: control transfers (jmp, call, jcc, loop, ret, indirect
 *    jmp and call) and the instructions that change or expose IF (cli,
 *    sti, pushf, popf) are carried out on the saved registers. Nothing
 *    runs out of line.
 *
 *  - Copied: everything else is copied into an instruction slot,
 *    followed by an int3. The CPU returns from the trap into the slot
 *    with interrupts off, runs the copy and traps again on the int3;
 *    we then point it at the next original instruction. RIP-relative
 *    operands are fixed up in the copy so they still reach the same data
 *    (slots are in the module area, within +-2 GiB of all kernel text).
 *
 * Running the copy with interrupts off means a task can never be
 * preempted or migrated inside the trapping copy.
 *
 * Boosting: the slot holds a second copy, followed by a jump back to
 * the instruction after the original. For an instruction that can run
 * anywhere (boost_refusal()), once the trapping copy has run cleanly
 * once, hits of a site without a post_handler leave the probe as soon as
 * the handlers are done and send the CPU to the boosted copy with its
 * own interrupt flag: one trap per hit instead of two. A task may then
 * be interrupted, and on a preemptible kernel preempted, inside the
 * boosted copy: such a slot is freed "dirty", and the core reuses it
 * only after an RCU-tasks grace period (see arch_remove_kprobe()).
 *
 * Per-CPU state: kprobe_running() is the probe being handled; the
 * kprobe_ctlblk says at which stage (KPROBE_HIT_*), and holds the
 * interrupted IF flag while the copy runs.
 *
 * Nested hits: a probe hit while another is being handled on the same
 * CPU (a handler calls probed code, or an NMI or #DB arrives in the
 * middle of a hit) runs no handlers and is counted in nmissed. It keeps
 * no per-CPU state, so hits nest to any depth: its instruction is
 * emulated, or its boosted copy runs, whatever the boosting rules say
 * for the hits that run handlers (nested_hit()). A fault in that copy is
 * rewound to the original instruction with the address the slot keeps.
 *
 * Faults in a copy: a page fault or #GP (kprobe_fault_handler()), or a
 * trap that tells the die chain (#UD, #SS, #DE, FPU traps:
 * kprobe_exceptions_notify()), is rewound to the original instruction,
 * whose exception-table fixup then applies. A machine check is not: an
 * instruction whose machine check the kernel expects (copy_mc) is
 * refused instead (is_mce_safe_access()).
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/hardirq.h>
#include <linux/preempt.h>
#include <linux/sched/debug.h>
#include <linux/perf_event.h>
#include <linux/extable.h>
#include <linux/kdebug.h>
#include <linux/kallsyms.h>
#include <linux/ftrace.h>
#include <linux/kasan.h>
#include <linux/moduleloader.h>
#include <linux/objtool.h>
#include <linux/vmalloc.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/execmem.h>
#include <linux/cfi.h>
#include <linux/cacheflush.h>
#include <linux/uaccess.h>
#include <linux/bitfield.h>
#include <linux/lockdep.h>
#include <linux/memory.h>

#include <asm/text-patching.h>
#include <asm/desc.h>
#include <asm/alternative.h>
#include <asm/insn.h>
#include <asm/debugreg.h>
#include <asm/ibt.h>
#include <asm/sections.h>
#include <asm/extable.h>
#include <asm/trapnr.h>

#include "common.h"

/* Functions whose return must not be hooked: they return in another task. */
struct kretprobe_blackpoint kretprobe_blacklist[] = {
	{ "__switch_to", NULL },
	{ NULL, NULL },
};

const int kretprobe_blacklist_size = ARRAY_SIZE(kretprobe_blacklist);

/* ---- where a probe may go ------------------------------------------------ */

kprobe_opcode_t *arch_adjust_kprobe_addr(unsigned long addr, unsigned long offset,
					 bool *on_func_entry)
{
	bool landing_pad = false;
	u32 first;

	/*
	 * With IBT a function starts with ENDBR64, which must stay where it
	 * is: symbol+0 means the instruction after it, as users expect, and
	 * symbol+4 is the same place. symbol+1 to +3 are inside the ENDBR,
	 * not an instruction boundary (-EILSEQ), as in the tree.
	 */
	if (offset <= ENDBR_INSN_SIZE &&
	    !copy_from_kernel_nofault(&first, (void *)addr, sizeof(first)))
		landing_pad = is_endbr(first);
	if (landing_pad) {
		*on_func_entry = offset == 0 || offset == ENDBR_INSN_SIZE;
		if (!offset)
			offset = ENDBR_INSN_SIZE;
	} else {
		*on_func_entry = offset == 0;
	}
	return (kprobe_opcode_t *)(addr + offset);
}

/*
 * Read the instruction at @addr as it was before any probe was put
 * there: a probed byte reads back as the probe's saved opcode, and the
 * jump of an optimized probe as the bytes it replaced. Called with
 * kprobe_mutex held. Return: 0; -EFAULT when no byte can be read; -EBUSY
 * when the text may hold a jump of ours that cannot be mended.
 */
int kprobe_read_original(u8 *buf, unsigned long addr)
{
	struct kprobe *p;
	int len;

	kprobe_assert_mutex_held();
	/*
	 * A retiring site's jump is out of the index, where the mending
	 * below looks: the core writes such jumps back before any path
	 * decodes text (see kprobe_text_hides_jumps()).
	 */
	if (WARN_ON_ONCE(kprobe_text_hides_jumps()))
		return -EBUSY;

	for (len = MAX_INSN_SIZE; len > 0; len--)
		if (!copy_from_kernel_nofault(buf, (void *)addr, len))
			break;
	if (!len)
		return -EFAULT;
	memset(buf + len, 0, MAX_INSN_SIZE - len);

	/*
	 * A gone site's saved byte belongs to text that was freed: new text
	 * may be there now.
	 */
	p = get_kprobe((void *)addr);
	if (p && !kprobe_ftrace(p) && !kprobe_gone(p))
		buf[0] = p->opcode;
	optprobe_restore_original(buf, addr, len);
	return 0;
}

/*
 * Could @insn be a site the kernel keeps in a table: one that jump
 * labels, static calls or ftrace write, or a BUG()? The writers put
 * a call, a jmp, a jcc rel32, a nop of any size, a ret, or for a static
 * call's "return 0" an xor %eax,%eax behind three cs prefixes (five
 * bytes); a BUG() or WARN() is a ud2. They write under text_mutex, which
 * the callers hold. Anything else cannot be one, and needs no walk of
 * the tables.
 */
bool kprobe_insn_may_be_listed_site(struct insn *insn)
{
	lockdep_assert_held(&text_mutex);
	switch (insn->opcode.bytes[0]) {
	case 0x31:			/* xor %eax,%eax: listed with three cs */
		return insn->length == 5;
	case 0x90:			/* nop (with any prefix) */
	case CALL_INSN_OPCODE:
	case JMP32_INSN_OPCODE:
	case JMP8_INSN_OPCODE:
	case RET_INSN_OPCODE:
	case 0xc2:			/* ret imm16 */
	case INT3_INSN_OPCODE:		/* someone else's breakpoint */
		return true;
	case 0x0f:
		switch (insn->opcode.bytes[1]) {
		case 0x1f:		/* nopl, nopw */
		case 0x0b:		/* ud2 */
		case 0x80 ... 0x8f:	/* jcc rel32: a conditional tail call */
			return true;
		}
	}
	return false;
}

/**
 * arch_kprobe_listed_tables() - which tables of sites could list @addr?
 * @addr: a probe address, with kprobe_mutex and text_mutex held
 *
 * Lets the core skip the tables of jump label, static call and BUG()
 * sites when the instruction at @addr is of a kind none holds.
 *
 * Return: KPROBE_LISTED_ANY, or 0 when it cannot be in any of them.
 */
unsigned int arch_kprobe_listed_tables(unsigned long addr)
{
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	/*
	 * Inside an instruction, the tables say whether it is a listed one:
	 * an address inside a listed site is refused with -EINVAL, before
	 * the boundary check would say -EILSEQ, as in the tree.
	 */
	if (kprobe_insn_boundary(addr))
		return KPROBE_LISTED_ANY;
	if (kprobe_read_original(buf, addr) || insn_decode_kernel(&insn, buf) < 0)
		return KPROBE_LISTED_ANY;
	return kprobe_insn_may_be_listed_site(&insn) ? KPROBE_LISTED_ANY : 0;
}

/* ---- deciding how to execute the probed instruction ----------------------- */

#define RM_REG	0
#define RM_MEM	1
#define RM_RIP	2

/* Describe an indirect jmp/call operand (ModRM r/m, SIB) for emulation. */
static int decode_branch_operand(struct insn *insn, struct arch_specific_insn *ai)
{
	u8 modrm = insn->modrm.bytes[0];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	u8 mod = X86_MODRM_MOD(modrm), rm = X86_MODRM_RM(modrm);

	ai->rm_base = -1;
	ai->rm_index = -1;
	ai->rm_scale = 0;
	ai->disp = insn->displacement.nbytes ? insn->displacement.value : 0;

	if (mod == 3) {
		ai->rm_mem = RM_REG;
		ai->rm_base = rm + (X86_REX_B(rex) ? 8 : 0);
		return 0;
	}
	if (insn_rip_relative(insn)) {
		ai->rm_mem = RM_RIP;
		return 0;
	}
	ai->rm_mem = RM_MEM;
	if (rm == 4) {
		u8 sib = insn->sib.bytes[0];
		u8 base = X86_SIB_BASE(sib), index = X86_SIB_INDEX(sib);

		if (!(mod == 0 && base == 5))
			ai->rm_base = base + (X86_REX_B(rex) ? 8 : 0);
		if (index != 4 || X86_REX_X(rex))
			ai->rm_index = index + (X86_REX_X(rex) ? 8 : 0);
		ai->rm_scale = X86_SIB_SCALE(sib);
	} else {
		ai->rm_base = rm + (X86_REX_B(rex) ? 8 : 0);
	}
	return 0;
}

/* Prefixes that change what a branch does, which we do not emulate. */
static bool has_unsupported_branch_prefix(struct insn *insn)
{
	insn_byte_t prefix;
	int i;

	for_each_insn_prefix(insn, i, prefix) {
		switch (prefix) {
		case 0x66:	/* 16-bit operand: truncates RIP */
		case 0x67:	/* 32-bit address: loop uses ECX */
		case 0x64:	/* fs: */
		case 0x65:	/* gs: */
			return true;
		}
	}
	return false;
}

/*
 * Pick the way a hit executes @insn. Return -EOPNOTSUPP for instructions
 * that can neither run from a slot nor be emulated safely.
 */
int kprobe_classify_insn(struct insn *insn, struct arch_specific_insn *ai)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 reg = X86_MODRM_REG(insn->modrm.bytes[0]);
	bool branch = true;

	ai->kind = KPROBE_INSN_COPY;
	ai->disp = insn->immediate.nbytes ? insn->immediate.value : 0;

	switch (op) {
	case 0x70 ... 0x7f:
		ai->kind = KPROBE_INSN_JCC;
		ai->cond = op & 0xf;
		break;
	case 0xe0 ... 0xe3:
		ai->kind = KPROBE_INSN_LOOP;
		ai->cond = op - 0xe0;
		break;
	case 0xe8:
		ai->kind = KPROBE_INSN_CALL;
		break;
	case 0xe9:
	case 0xeb:
		ai->kind = KPROBE_INSN_JMP;
		break;
	case 0xc2:
	case 0xc3:
		ai->kind = KPROBE_INSN_RET;
		ai->disp = op == 0xc2 ? (u16)insn->immediate.value : 0;
		break;
	case 0xff:
		if (reg == 2 || reg == 4) {
			ai->kind = reg == 2 ? KPROBE_INSN_CALL_IND : KPROBE_INSN_JMP_IND;
			decode_branch_operand(insn, ai);
			break;
		}
		if (reg == 3 || reg == 5)	/* far call, far jmp */
			return -EOPNOTSUPP;
		branch = false;
		break;
	case 0x0f:
		if (op2 >= 0x80 && op2 <= 0x8f) {
			ai->kind = KPROBE_INSN_JCC;
			ai->cond = op2 & 0xf;
			break;
		}
		switch (op2) {
		case 0x05:	/* syscall */
		case 0x07:	/* sysret */
		case 0x0b:	/* ud2 */
		case 0x34:	/* sysenter */
		case 0x35:	/* sysexit */
		case 0xb9:	/* ud1 */
		case 0xff:	/* ud0 */
			return -EOPNOTSUPP;
		}
		branch = false;
		break;
	case 0xfa:
		ai->kind = KPROBE_INSN_CLI;
		branch = false;
		break;
	case 0xfb:
		ai->kind = KPROBE_INSN_STI;
		branch = false;
		break;
	case 0x9c:
		ai->kind = KPROBE_INSN_PUSHF;
		break;
	case 0x9d:
		ai->kind = KPROBE_INSN_POPF;
		break;
	case 0xca:	/* far ret */
	case 0xcb:
	case 0xcc:	/* int3: someone else's breakpoint */
	case 0xcd:	/* int n */
	case 0xce:	/* into */
	case 0xcf:	/* iret: switches context */
	case 0xf1:	/* int1 */
	case 0xf4:	/* hlt: would never wake with interrupts off */
		return -EOPNOTSUPP;
	case 0xc7:
		if (insn->modrm.bytes[0] == 0xf8)	/* xbegin: RIP-relative abort */
			return -EOPNOTSUPP;
		branch = false;
		break;
	case 0x8e:
		if (reg == 2)	/* mov to %ss: shadows the trap after it */
			return -EOPNOTSUPP;
		branch = false;
		break;
	default:
		branch = false;
		break;
	}

	if (branch && has_unsupported_branch_prefix(insn))
		return -EOPNOTSUPP;
	return 0;
}

/* ---- instruction slots ---------------------------------------------------- */

void *alloc_insn_page(void)
{
	void *page = execmem_alloc(EXECMEM_KPROBES, PAGE_SIZE);

	if (!page)
		return NULL;
	/* Slots are only ever written with text_poke(). */
	set_memory_rox((unsigned long)page, 1);
	return page;
}

/*
 * The two-byte opcodes (0f xx) whose copy may run without a trap after
 * it. The set is the tree's (twobyte_is_boostable[] in its x86 kprobes
 * core.c decides, and we keep to it): it leaves out system instructions
 * and those with effects beyond the registers and memory operands, such
 * as cpuid (0f a2), rdmsr and wrmsr (0f 32, 0f 30), sysenter and the
 * 0f 38 and 0f 3a escapes, besides the jcc, which we emulate anyway.
 */
static bool twobyte_boostable(u8 op2)
{
	switch (op2) {
	case 0x02: case 0x03: case 0x06: case 0x08: case 0x09:
	case 0x1f:
	case 0x20 ... 0x23:
	case 0x31:
	case 0x40 ... 0x4f:
	case 0x60 ... 0x6b: case 0x6e: case 0x6f:
	case 0x74 ... 0x77: case 0x7e: case 0x7f:
	case 0x90 ... 0x9f:
	case 0xa0: case 0xa1: case 0xa3 ... 0xa5: case 0xa8: case 0xa9:
	case 0xab ... 0xad: case 0xaf:
	case 0xb0 ... 0xb7: case 0xbb ... 0xbf:
	case 0xc0: case 0xc1: case 0xc8 ... 0xcf:
	case 0xd1 ... 0xd3: case 0xd5: case 0xd8: case 0xd9: case 0xdb ... 0xdd:
	case 0xdf:
	case 0xe1: case 0xe2: case 0xe5: case 0xe8: case 0xe9: case 0xeb ... 0xed:
	case 0xef:
	case 0xf1 ... 0xf3: case 0xf5: case 0xf8 ... 0xfa: case 0xfc ... 0xfe:
		return true;
	}
	return false;
}

/*
 * May hits run the copy of @insn (at @addr) without trapping after it?
 * Return NULL when they may, or the rule that says no. Only instructions
 * the core copies get here: every control transfer is emulated instead,
 * so the copy's effect depends on where it runs only through a
 * RIP-relative operand, which the copy has fixed up.
 */
static const char *boost_refusal(struct insn *insn, unsigned long addr)
{
	/*
	 * A task interrupted in a boosted copy is not in a probe hit. On a
	 * preemptible kernel it may be preempted there, and only tasks RCU
	 * can tell when no task is left inside the slot.
	 */
	if (IS_ENABLED(CONFIG_PREEMPTION) && !IS_ENABLED(CONFIG_TASKS_RCU))
		return "a preemptible kernel without TASKS_RCU";
	/* 0f xx as the tree decides; 0f 38 xx and 0f 3a xx never. */
	if (insn->opcode.nbytes == 3 ||
	    (insn->opcode.nbytes == 2 && !twobyte_boostable(insn->opcode.bytes[1])))
		return "a two- or three-byte opcode with effects beyond its operands";
	/*
	 * An instruction with an exception-table entry is expected to
	 * fault. A fault in the boosted copy happens outside the probe hit
	 * at an address the exception table does not know: the trapping
	 * copy rewinds such a fault to the original address instead.
	 */
	if (search_exception_tables(addr))
		return "the instruction has an exception-table entry";
	return NULL;
}

/*
 * Write the copy of @insn (from @buf) that will run at @at into @dst;
 * a RIP-relative operand is adjusted to reach the same target from there.
 */
int kprobe_copy_insn(u8 *dst, struct insn *insn, const u8 *buf,
		     unsigned long from, unsigned long at)
{
	s64 disp;
	s32 disp32;

	memcpy(dst, buf, insn->length);
	if (!insn_rip_relative(insn))
		return 0;
	disp = (s64)insn->displacement.value + (long)from - (long)at;
	disp32 = disp;
	if (disp != disp32)
		return -ERANGE;
	memcpy(dst + insn_offset_displacement(insn), &disp32, sizeof(disp32));
	return 0;
}

/*
 * Fill a new slot (see KPROBE_SLOT_SIZE): the trapping copy of @insn,
 * the boosted copy with its jump back, and where the original is.
 * Every slot has a boosted copy, for nested hits; whether the hits that
 * run handlers may use it is boost_refusal()'s to say. A probe the
 * query file asks about gets no slot: slots are in reach of all text
 * (see alloc_insn_page()), so its copy could not fail to fit one.
 */
static int fill_slot(struct kprobe *p, struct insn *insn, const u8 *buf)
{
	unsigned long addr = (unsigned long)p->addr;
	unsigned int len = insn->length;
	u8 image[KPROBE_SLOT_SIZE];
	unsigned long boosted;
	kprobe_opcode_t *slot;
	long origin, jump;
	s32 origin32;
	int ret;

	if (p->flags & KPROBE_FLAG_QUERY) {
		/* Only asked about: no slot, no text written, nothing for perf. */
		if (!boost_refusal(insn, addr))
			p->ainsn.boost = KPROBE_BOOST_AFTER_RUN;
		return 0;
	}
	slot = get_insn_slot();
	if (!slot)
		return kprobe_refuse(-ENOMEM, "no instruction slot");

	memset(image, INT3_INSN_OPCODE, sizeof(image));
	boosted = (unsigned long)slot + KPROBE_BOOST_OFFSET;
	origin = addr - (unsigned long)slot;
	origin32 = origin;
	/* The jump back's rel32: from boosted + len + 5 to addr + len. */
	jump = origin - KPROBE_BOOST_OFFSET - JMP32_INSN_SIZE;
	ret = kprobe_copy_insn(image, insn, buf, addr, (unsigned long)slot);
	if (!ret)
		ret = kprobe_copy_insn(image + KPROBE_BOOST_OFFSET, insn, buf, addr, boosted);
	if (!ret && (origin != origin32 || jump != (s32)jump))
		ret = -ERANGE;
	if (ret) {
		free_insn_slot(slot, 0);
		return ret;
	}
	__text_gen_insn(image + KPROBE_BOOST_OFFSET + len, JMP32_INSN_OPCODE,
			(void *)(boosted + len), (void *)(addr + len), JMP32_INSN_SIZE);
	memcpy(image + KPROBE_ORIGIN_OFFSET, &origin32, sizeof(origin32));
	if (!boost_refusal(insn, addr))
		p->ainsn.boost = KPROBE_BOOST_AFTER_RUN;
	text_poke(slot, image, sizeof(image));
	perf_event_text_poke(slot, NULL, 0, image, sizeof(image));
	p->ainsn.insn = slot;
	return 0;
}

/*
 * kCFI checks an indirect call with
 *
 *	movl $-type, %r10d	(41 ba imm32)
 *	addl -4(%target), %r10d	(a 4-byte add, opcode 03)
 *	je 1f
 *	ud2			<- the CFI trap, 12 bytes after the movl
 * 1:
 *
 * and the trap handler reads the movl and the addl to report the types:
 * a breakpoint must not replace their first byte. Refused as the tree
 * does, as if they were not instruction boundaries.
 */
static bool is_kcfi_check(struct insn *insn, unsigned long addr)
{
	if (!IS_ENABLED(CONFIG_CFI_CLANG))
		return false;
	switch (insn->opcode.bytes[0]) {
	case 0xba:	/* movl $imm32, %r10d */
		return is_cfi_trap(addr + 12);
	case 0x03:	/* addl -4(%reg), %r10d */
		return is_cfi_trap(addr + 6);
	}
	return false;
}

/*
 * load_unaligned_zeropad()'s fault fixup (ex_handler_zeropad()) decodes
 * the instruction at the faulting address. A fault in the copy is
 * rewound to the original address, where it would find the int3 and
 * fail: such loads are refused, as if they were not instructions.
 */
static bool is_zeropad_load(unsigned long addr)
{
	const struct exception_table_entry *e = search_exception_tables(addr);

	return e && FIELD_GET(EX_DATA_TYPE_MASK, e->data) == EX_TYPE_ZEROPAD;
}

/*
 * A machine check in an instruction that copy_mc_*() and friends expect
 * to take one is recovered only when the exception table knows the
 * faulting address (mce_severity() looks it up before any handler
 * runs), which a copy's is not: the machine would panic. Such
 * instructions are refused, as if they were not instructions.
 */
static bool is_mce_safe_access(unsigned long addr)
{
	const struct exception_table_entry *e = search_exception_tables(addr);
	int type = e ? FIELD_GET(EX_DATA_TYPE_MASK, e->data) : EX_TYPE_NONE;

	return type == EX_TYPE_DEFAULT_MCE_SAFE || type == EX_TYPE_FAULT_MCE_SAFE;
}

/**
 * arch_prepare_kprobe() - check a probe point and set up its execution
 * @p: the probe (p->addr set); called with text_mutex held
 *
 * Return: 0; -EINVAL for text that alternatives may rewrite; -EILSEQ for
 * an address that is not an instruction boundary, or an instruction that
 * a trap handler or fixup reads (kCFI, zeropad) or whose machine check
 * is recovered (copy_mc); -EOPNOTSUPP for an
 * instruction we cannot execute for the probe; -ENOMEM or -ERANGE when
 * no usable slot can be had.
 */
int arch_prepare_kprobe(struct kprobe *p)
{
	unsigned long addr = (unsigned long)p->addr;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int ret;

	lockdep_assert_held(&text_mutex);
	/*
	 * The range's end is exclusive: (addr, addr), as the tree asks,
	 * matches nothing. A lock prefix patched out on a kernel booted
	 * with one CPU (a ds prefix in its place) is patched back when a
	 * second CPU comes up, over the int3, and unregistering would then
	 * write the ds back over the lock.
	 */
	if (alternatives_text_reserved(p->addr, p->addr + 1))
		return kprobe_refuse(-EINVAL, "text that alternatives rewrite");
	ret = kprobe_insn_boundary(addr);
	if (ret)
		return kprobe_refuse(ret, ret == -ENOMEM ? "out of memory" :
				     "not an instruction boundary");
	if (kprobe_read_original(buf, addr) || insn_decode_kernel(&insn, buf) < 0)
		return kprobe_refuse(-EILSEQ, "the instruction does not decode");
	if (is_kcfi_check(&insn, addr))
		return kprobe_refuse(-EILSEQ, "a kCFI check, which its trap handler reads");
	if (is_zeropad_load(addr))
		return kprobe_refuse(-EILSEQ, "a load whose fault fixup decodes it");
	if (is_mce_safe_access(addr))
		return kprobe_refuse(-EILSEQ, "an access whose machine check is recovered");

	memset(&p->ainsn, 0, sizeof(p->ainsn));
	ret = kprobe_classify_insn(&insn, &p->ainsn);
	if (ret)
		return kprobe_refuse(ret, "an instruction kprobes cannot execute");
	p->opcode = buf[0];
	p->ainsn.size = insn.length;

	if (p->ainsn.kind == KPROBE_INSN_COPY)
		return fill_slot(p, &insn, buf);
	return 0;
}

/**
 * arch_kprobe_boostable() - may hits of @p skip the trap after the copy?
 * @p: a prepared probe; kprobe_mutex held
 * @why: set to the rule that decided, or NULL
 *
 * For the query file: the same decision fill_slot() made.
 *
 * Return: true when hits without a post_handler need no second trap.
 */
bool arch_kprobe_boostable(struct kprobe *p, const char **why)
{
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;

	kprobe_assert_mutex_held();
	*why = NULL;
	if (p->ainsn.kind != KPROBE_INSN_COPY) {
		*why = "emulated";
		return true;
	}
	if (kprobe_read_original(buf, (unsigned long)p->addr) ||
	    insn_decode_kernel(&insn, buf) < 0) {
		*why = "the instruction does not decode";
		return false;
	}
	*why = boost_refusal(&insn, (unsigned long)p->addr);
	return !*why;
}

/**
 * arch_remove_kprobe() - free what arch_prepare_kprobe() allocated
 * @p: the probe; no CPU may still be executing its slot
 */
void arch_remove_kprobe(struct kprobe *p)
{
	/* Only a preempted task can outlive the core's synchronize_rcu(). */
	bool dirty = IS_ENABLED(CONFIG_PREEMPTION) &&
		     p->ainsn.boost != KPROBE_BOOST_NEVER;

	kprobe_assert_mutex_held();
	if (p->ainsn.insn) {
		free_insn_slot(p->ainsn.insn, dirty);
		p->ainsn.insn = NULL;
	}
}

/* ---- arming --------------------------------------------------------------- */

/*
 * Text changes are told to perf (PERF_RECORD_TEXT_POKE), so that tools
 * that decode a trace of the executed code (Intel PT, perf --kcore) see
 * the bytes that ran. text_poke_bp_batch() tells of the jumps itself.
 */
static void write_probe_byte(struct kprobe *p, bool arm)
{
	static const u8 int3 = INT3_INSN_OPCODE;
	const u8 *old = arm ? &p->opcode : &int3, *new = arm ? &int3 : &p->opcode;

	text_poke(p->addr, new, 1);
	perf_event_text_poke(p->addr, old, 1, new, 1);
}

/*
 * One byte changes, at an instruction boundary: a CPU sees either the
 * old byte or the int3, and both are handled. The batch ends with one
 * text_poke_sync() so every CPU sees the new text before the core goes
 * on (and, when disarming, before it drops the probe from its table).
 */
void arch_kprobe_queue_arm(struct kprobe *p, bool arm)
{
	write_probe_byte(p, arm);
}

void arch_kprobe_queue_apply(void)
{
	text_poke_finish();	/* the jumps of optimized probes (optimize.c) */
	optprobe_text_applied();
	text_poke_sync();
}

/* ---- the hit path --------------------------------------------------------- */

/* The probe this CPU is handling, and its state: the core reads them. */
DEFINE_PER_CPU(struct kprobe *, current_kprobe);
DEFINE_PER_CPU(struct kprobe_ctlblk, kprobe_ctlblk);

static unsigned long *gpr(struct pt_regs *regs, int reg)
{
	static const u8 offsets[16] = {
		offsetof(struct pt_regs, ax), offsetof(struct pt_regs, cx),
		offsetof(struct pt_regs, dx), offsetof(struct pt_regs, bx),
		offsetof(struct pt_regs, sp), offsetof(struct pt_regs, bp),
		offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
		offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
		offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
		offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
		offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
	};

	return (unsigned long *)((u8 *)regs + offsets[reg]);
}
NOKPROBE_SYMBOL(gpr);

static unsigned long indirect_target(struct kprobe *p, struct pt_regs *regs)
{
	struct arch_specific_insn *ai = &p->ainsn;
	unsigned long ea;

	if (ai->rm_mem == RM_REG)
		return *gpr(regs, ai->rm_base);
	if (ai->rm_mem == RM_RIP) {
		ea = (unsigned long)p->addr + ai->size + ai->disp;
	} else {
		ea = (long)ai->disp;
		if (ai->rm_base >= 0)
			ea += *gpr(regs, ai->rm_base);
		if (ai->rm_index >= 0)
			ea += *gpr(regs, ai->rm_index) << ai->rm_scale;
	}
	return *(unsigned long *)ea;
}
NOKPROBE_SYMBOL(indirect_target);

#define POPF_MASK (X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | X86_EFLAGS_ZF | \
		   X86_EFLAGS_SF | X86_EFLAGS_TF | X86_EFLAGS_IF | X86_EFLAGS_DF | \
		   X86_EFLAGS_OF | X86_EFLAGS_NT | X86_EFLAGS_AC | X86_EFLAGS_ID)

/*
 * Carry out an emulated instruction on @regs (ip still points past the
 * int3). Inlined in the int3 handler (and in nested_hit(), which is
 * rare); the conditional jumps and the calls, most of what is emulated,
 * are tested for first, before the switch's chain of comparisons.
 */
static __always_inline void emulate_insn(struct kprobe *p, struct pt_regs *regs)
{
	struct arch_specific_insn *ai = &p->ainsn;
	unsigned long next = (unsigned long)p->addr + ai->size;
	unsigned long val;
	bool taken;

	if (ai->kind == KPROBE_INSN_JCC) {
		int3_emulate_jcc(regs, ai->cond, next, ai->disp);
		return;
	}
	if (ai->kind == KPROBE_INSN_CALL) {
		int3_emulate_push(regs, next);
		int3_emulate_jmp(regs, next + ai->disp);
		return;
	}
	switch (ai->kind) {
	case KPROBE_INSN_JMP:
		int3_emulate_jmp(regs, next + ai->disp);
		break;
	case KPROBE_INSN_LOOP:
		if (ai->cond == 3) {		/* jrcxz */
			taken = !regs->cx;
		} else {
			taken = --regs->cx != 0;
			if (ai->cond == 0)	/* loopne */
				taken &= !(regs->flags & X86_EFLAGS_ZF);
			else if (ai->cond == 1)	/* loope */
				taken &= !!(regs->flags & X86_EFLAGS_ZF);
		}
		int3_emulate_jmp(regs, taken ? next + ai->disp : next);
		break;
	case KPROBE_INSN_RET:
		val = int3_emulate_pop(regs);
		regs->sp += ai->disp;
		int3_emulate_jmp(regs, val);
		break;
	case KPROBE_INSN_JMP_IND:
		int3_emulate_jmp(regs, indirect_target(p, regs));
		break;
	case KPROBE_INSN_CALL_IND:
		val = indirect_target(p, regs);
		int3_emulate_push(regs, next);
		int3_emulate_jmp(regs, val);
		break;
	case KPROBE_INSN_CLI:
		regs->flags &= ~X86_EFLAGS_IF;
		int3_emulate_jmp(regs, next);
		break;
	case KPROBE_INSN_STI:
		regs->flags |= X86_EFLAGS_IF;
		int3_emulate_jmp(regs, next);
		break;
	case KPROBE_INSN_PUSHF:
		int3_emulate_push(regs, regs->flags & ~(X86_EFLAGS_RF | X86_EFLAGS_VM));
		int3_emulate_jmp(regs, next);
		break;
	case KPROBE_INSN_POPF:
		val = int3_emulate_pop(regs);
		regs->flags = (regs->flags & ~POPF_MASK) | (val & POPF_MASK);
		int3_emulate_jmp(regs, next);
		break;
	}
}

/* The probed instruction has run: post_handler, then leave the probe. */
static void finish_hit(struct kprobe *p, struct pt_regs *regs,
		       struct kprobe_ctlblk *kcb)
{
	kprobe_post_handler_t post;

	/*
	 * Read once: an aggregate's post_handler is cleared when its last
	 * member with one leaves, while other CPUs hit the site.
	 */
	post = READ_ONCE(p->post_handler);
	if (post && !kprobe_disabled(p)) {
		kcb->kprobe_status = KPROBE_HIT_SSDONE;
		post(p, regs, 0);
	}
	reset_current_kprobe();
}
NOKPROBE_SYMBOL(finish_hit);

/*
 * Send a hit with no post stage to a copy that jumps back by itself:
 * the region's copy in the detour buffer of a site being optimized (so
 * that no task enters the region's interior once the optimizer's grace
 * period has begun), or the boosted copy: when boosting allows, or for
 * any copied instruction when the hit is @nested.
 */
static bool continue_without_trap(struct kprobe *p, struct pt_regs *regs,
				  bool nested)
{
#ifdef CONFIG_OPTPROBES
	if (READ_ONCE(p->flags) & KPROBE_FLAG_OPT_READY) {
		struct optimized_kprobe *op = container_of(p, struct optimized_kprobe, kp);

		regs->ip = (unsigned long)op->optinsn.insn + op->optinsn.copy_offset;
		return true;
	}
#endif
	if (READ_ONCE(p->ainsn.boost) == KPROBE_BOOST_READY ||
	    (nested && p->ainsn.kind == KPROBE_INSN_COPY)) {
		regs->ip = (unsigned long)p->ainsn.insn + KPROBE_BOOST_OFFSET;
		return true;
	}
	return false;
}
NOKPROBE_SYMBOL(continue_without_trap);

/*
 * Execute the probed instruction: emulate it (the hit ends here, no
 * second trap), or send the CPU to its copy. Inlined, with
 * emulate_insn(), in the int3 handler: with call depth tracking each
 * call and return more costs an emulated hit about fifteen instructions
 * (jz: 338 to 295 in make bench), and the boosted hit stays as it was.
 */
static __always_inline void run_probed_insn(struct kprobe *p, struct pt_regs *regs,
					    struct kprobe_ctlblk *kcb)
{
	if (!p->post_handler && continue_without_trap(p, regs, false)) {
		reset_current_kprobe();
		return;
	}
	if (p->ainsn.kind != KPROBE_INSN_COPY) {
		emulate_insn(p, regs);
		finish_hit(p, regs, kcb);
		return;
	}
	kcb->kprobe_status = KPROBE_HIT_SS;
	kcb->saved_if = regs->flags & X86_EFLAGS_IF;
	regs->flags &= ~X86_EFLAGS_IF;
	regs->ip = (unsigned long)p->ainsn.insn;
}

/*
 * @p was hit while this CPU was already handling a probe: count a miss
 * and run the instruction without touching the outer hit's state. The
 * CPU takes no trap after it (no state would say what the trap is), so
 * a copied instruction runs from its boosted copy even where boosting
 * is refused for the hits that run handlers. Those reasons do not hold
 * here: a nested hit happens inside another hit, where the CPU cannot
 * be preempted; a fault in the copy is rewound by kprobe_fault_handler(),
 * which is called because kprobe_running() is set; what the instruction
 * does is the same whether the CPU comes back by int3 or by jump.
 */
static void nested_hit(struct kprobe *p, struct pt_regs *regs)
{
	lockdep_assert_preemption_disabled();
	kprobes_inc_nmissed_count(p);
	if (!continue_without_trap(p, regs, true))
		emulate_insn(p, regs);
}
NOKPROBE_SYMBOL(nested_hit);

/*
 * The first trapping copy of @p to end, cleanly or by a fault, decides
 * whether @p is boosted: AFTER_RUN becomes @verdict (READY or NEVER)
 * once, whichever CPU gets there first. A plain read-then-write could
 * let a fault on one CPU turn READY into NEVER after another CPU took
 * the boosted copy, and arch_remove_kprobe() would then free the slot
 * clean under a task preempted in it. The read first keeps the locked
 * instruction off the hits that follow.
 */
static __always_inline void boost_settle(struct kprobe *p, u8 verdict)
{
	if (READ_ONCE(p->ainsn.boost) == KPROBE_BOOST_AFTER_RUN)
		cmpxchg(&p->ainsn.boost, KPROBE_BOOST_AFTER_RUN, verdict);
}

/* Is @addr the int3 behind the copy that @cur is running? */
static bool is_copy_return(struct kprobe *cur, struct kprobe_ctlblk *kcb,
			   kprobe_opcode_t *addr)
{
	return cur && kcb->kprobe_status == KPROBE_HIT_SS &&
	       cur->ainsn.insn && addr == cur->ainsn.insn + cur->ainsn.size;
}
NOKPROBE_SYMBOL(is_copy_return);

#if IS_ENABLED(CONFIG_KPROBES_SANITY_TEST)
DEFINE_PER_CPU(unsigned long, kprobe_int3_traps);
EXPORT_PER_CPU_SYMBOL_GPL(kprobe_int3_traps);

static __always_inline void count_int3_trap(void)
{
	__this_cpu_inc(kprobe_int3_traps);
}
#else
static __always_inline void count_int3_trap(void)
{
}
#endif

static __always_inline int handle_int3(struct pt_regs *regs)
{
	kprobe_opcode_t *addr;
	struct kprobe_ctlblk *kcb;
	struct kprobe *p, *cur;

	if (user_mode(regs))
		return 0;

	addr = (kprobe_opcode_t *)(regs->ip - INT3_INSN_SIZE);
	kcb = get_kprobe_ctlblk();
	cur = kprobe_running();

	/*
	 * Slots are not kernel text, so no probe sits at the trap behind a
	 * copy: check for it before searching the index.
	 */
	if (is_copy_return(cur, kcb, addr)) {
		boost_settle(cur, KPROBE_BOOST_READY);
		regs->ip = (unsigned long)cur->addr + cur->ainsn.size;
		regs->flags |= kcb->saved_if;
		finish_hit(cur, regs, kcb);
		return 1;
	}

	p = get_kprobe(addr);
	if (p) {
		if (cur) {
			nested_hit(p, regs);
			return 1;
		}
		__this_cpu_write(current_kprobe, p);
		kcb->kprobe_status = KPROBE_HIT_ACTIVE;
		if (!kprobe_disabled(p)) {
			kprobe_count_hit(p);
			if (p->pre_handler && p->pre_handler(p, regs)) {
				/* The handler moved regs->ip: skip the instruction. */
				reset_current_kprobe();
				return 1;
			}
		}
		run_probed_insn(p, regs, kcb);
		return 1;
	}

	if (*addr != INT3_INSN_OPCODE) {
		/*
		 * The probe was removed after this CPU trapped, and the text
		 * is restored: run the original instruction.
		 */
		regs->ip = (unsigned long)addr;
		return 1;
	}
	return 0;
}

/**
 * kprobe_int3_handler() - handle an int3 that may be ours
 * @regs: the trapped context; regs->ip is just past the int3
 *
 * Called by exc_int3() with interrupts off.
 *
 * Return: 1 when the trap was ours and is handled, 0 otherwise.
 */
int kprobe_int3_handler(struct pt_regs *regs)
{
	lockdep_assert_irqs_disabled();
	if (!handle_int3(regs))
		return 0;
	count_int3_trap();
	return 1;
}
NOKPROBE_SYMBOL(kprobe_int3_handler);

/*
 * A fault in the trapping copy that @cur, the current hit, runs: rewind
 * it to the original instruction and end the hit there.
 */
static bool rewind_trapping_copy(struct kprobe *cur, struct pt_regs *regs)
{
	struct kprobe_ctlblk *kcb = get_kprobe_ctlblk();

	if (kcb->kprobe_status != KPROBE_HIT_SS || !cur->ainsn.insn ||
	    regs->ip - (unsigned long)cur->ainsn.insn >= cur->ainsn.size)
		return false;

	regs->ip = (unsigned long)cur->addr;
	regs->flags |= kcb->saved_if;
	/* Its first run did not end cleanly: never boost it. */
	boost_settle(cur, KPROBE_BOOST_NEVER);
	reset_current_kprobe();
	return true;
}
NOKPROBE_SYMBOL(rewind_trapping_copy);

/*
 * A fault in a boosted copy run by a nested hit, which left no state:
 * the slot says where the original is. Slot pages are page aligned
 * (alloc_insn_page()), so the slot is found from the address alone.
 * Only the copied instruction can fault, at the copy's first byte.
 */
static bool rewind_boosted_copy(struct pt_regs *regs)
{
	unsigned long ip = regs->ip, slot;
	s32 origin;

	/* The cheap test first: faults in handlers come here too. */
	if (offset_in_page(ip) % KPROBE_SLOT_SIZE != KPROBE_BOOST_OFFSET ||
	    !is_kprobe_insn_slot(ip))
		return false;
	slot = ip - KPROBE_BOOST_OFFSET;
	memcpy(&origin, (void *)slot + KPROBE_ORIGIN_OFFSET, sizeof(origin));
	regs->ip = slot + origin;
	return true;
}
NOKPROBE_SYMBOL(rewind_boosted_copy);

/**
 * kprobe_fault_handler() - a fault happened while this CPU handles a probe
 * @regs: the faulting context
 * @trapnr: the trap number
 *
 * The page-fault and general-protection paths call this (other traps
 * reach kprobe_exceptions_notify()). A fault in an instruction's copy
 * is rewound so that it looks like the original instruction faulted:
 * in the trapping copy of the current hit, which then ends, or in the
 * boosted copy of a nested hit. A page fault then goes on through the
 * normal page-fault path, which applies the original instruction's
 * exception-table fixup. A #GP has already looked for a fixup (at the
 * slot's address, where there is none), so we apply it here. A fault in
 * a handler is left to the normal handling.
 *
 * Return: 1 when the fault was fixed up here, 0 otherwise.
 */
int kprobe_fault_handler(struct pt_regs *regs, int trapnr)
{
	struct kprobe *cur = kprobe_running();

	if (!cur || (!rewind_trapping_copy(cur, regs) && !rewind_boosted_copy(regs)))
		return 0;

	if (trapnr != X86_TRAP_PF && fixup_exception(regs, trapnr, 0, 0))
		return 1;
	return 0;
}
NOKPROBE_SYMBOL(kprobe_fault_handler);

/**
 * kprobe_exceptions_notify() - a trap other than #PF or #GP, on the die chain
 * @self: the core's notifier block
 * @val: the die event
 * @data: its struct die_args
 *
 * #UD, #SS, #DE and the FPU traps look for an exception-table fixup at
 * the trapping address and tell the die chain (DIE_TRAP), where the core
 * has us first. In an instruction's copy there is no fixup to find:
 * rewind the trap to the original instruction, as kprobe_fault_handler()
 * does for #PF and #GP, and apply the original's fixup (vmxoff's #UD
 * when VMX is off, say). Without one, the trap goes on to the oops,
 * which then names the original instruction.
 *
 * Return: NOTIFY_STOP when a fixup was applied, NOTIFY_DONE otherwise.
 */
int kprobe_exceptions_notify(struct notifier_block *self, unsigned long val,
			     void *data)
{
	struct die_args *args = data;
	struct kprobe *cur = kprobe_running();

	if (val != DIE_TRAP || !cur || user_mode(args->regs))
		return NOTIFY_DONE;
	if (!rewind_trapping_copy(cur, args->regs) && !rewind_boosted_copy(args->regs))
		return NOTIFY_DONE;
	if (fixup_exception(args->regs, args->trapnr, args->err, 0))
		return NOTIFY_STOP;
	return NOTIFY_DONE;
}
NOKPROBE_SYMBOL(kprobe_exceptions_notify);

/* ---- init ----------------------------------------------------------------- */

/* The entry code runs before the kernel can take a breakpoint safely. */
int __init arch_populate_kprobe_blacklist(void)
{
	unsigned long start = (unsigned long)__entry_text_start;

	return kprobe_add_area_blacklist(start, (unsigned long)__entry_text_end);
}

/* Nothing to set up: slots come from the core's cache on demand. */
int __init arch_init_kprobes(void)
{
	return 0;
}
