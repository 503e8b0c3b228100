// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 optimized kprobes: a five-byte jump instead of the int3.
 *
 * An optimizable site gets a detour buffer when it is registered:
 *
 *	save the registers as a struct pt_regs on the stack, and clear
 *		EFLAGS.AC (with SMAP)
 *	call optprobe_hit(op, regs), which runs the handlers
 *	if it returned 0: restore the registers, run a copy of the
 *		instructions the jump covers (the "region"), jump back
 *		to the first instruction after the region
 *	else (a pre_handler changed regs->ip and returned non-zero):
 *		restore the registers and iret to regs->ip with regs->sp
 *
 * The core arms the site with an int3 first and, once the site is
 * queued for optimization, makes int3 hits continue in the region's copy
 * (kprobe_int3_handler()) rather than in the original text after the
 * first instruction. After a grace period no task is left inside the
 * region, and the core asks us to write the jump over its first five
 * bytes with text_poke_queue(); unoptimizing writes back the int3 (or
 * the original bytes) the same way. text_poke_queue() batches, and CPUs
 * that hit the site while it is rewritten are sent to the detour.
 *
 * Pre_handlers see regs->ip just past the probe address, as on an int3
 * hit, and run with preemption disabled but interrupts as the probed
 * code had them. A redirecting pre_handler (non-zero return) is honoured
 * with its regs->ip, regs->sp and flags; a zero return resumes the
 * probed code with the saved registers and ignores changes to ip and sp.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/static_call.h>
#include <linux/preempt.h>
#include <linux/perf_event.h>
#include <linux/cpufeature.h>
#include <linux/unaligned.h>
#include <linux/lockdep.h>
#include <linux/memory.h>

#include <asm/text-patching.h>
#include <asm/insn.h>
#include <asm/segment.h>
#include <asm/ibt.h>

#include "common.h"

/*
 * The buffer's fixed parts, assembled here and copied per probe; they
 * live in .rodata and are never executed in place. Registers are pushed
 * in struct pt_regs order: ss, sp (off by the ss slot, fixed by the
 * callback), flags, cs/ip/orig_ax (left for the callback), then the
 * general registers.
 */
#define OPT_PUSH_GPRS							\
	"	pushq %rdi\n	pushq %rsi\n	pushq %rdx\n	pushq %rcx\n"	\
	"	pushq %rax\n	pushq %r8\n	pushq %r9\n	pushq %r10\n"	\
	"	pushq %r11\n	pushq %rbx\n	pushq %rbp\n	pushq %r12\n"	\
	"	pushq %r13\n	pushq %r14\n	pushq %r15\n"
#define OPT_POP_GPRS							\
	"	popq %r15\n	popq %r14\n	popq %r13\n	popq %r12\n"	\
	"	popq %rbp\n	popq %rbx\n	popq %r11\n	popq %r10\n"	\
	"	popq %r9\n	popq %r8\n	popq %rax\n	popq %rcx\n"	\
	"	popq %rdx\n	popq %rsi\n	popq %rdi\n"

asm(
	".pushsection .rodata\n"
	"optprobe_tmpl_save:\n"
	"	pushq $" __stringify(__KERNEL_DS) "\n"
	"	pushq %rsp\n"
	"	pushfq\n"
	"optprobe_tmpl_clac:\n"
	"	.byte 0x0f, 0x1f, 0x00\n"		/* nopl (%rax), or clac */
	"	leaq -24(%rsp), %rsp\n"
	OPT_PUSH_GPRS
	"	movq %rsp, %rsi\n"
	"optprobe_tmpl_op:\n"
	"	movabsq $0, %rdi\n"
	"optprobe_tmpl_call:\n"
	"	.byte 0xe8\n	.long 0\n"		/* call optprobe_hit */
	"	testl %eax, %eax\n"
	"optprobe_tmpl_jnz:\n"
	"	.byte 0x0f, 0x85\n	.long 0\n"	/* jnz to the redirect part */
	"optprobe_tmpl_restore:\n"
	OPT_POP_GPRS
	"	leaq 24(%rsp), %rsp\n"
	"	popfq\n"
	"	leaq 16(%rsp), %rsp\n"
	"optprobe_tmpl_redirect:\n"
	OPT_POP_GPRS
	"	leaq 8(%rsp), %rsp\n"
	"	iretq\n"
	"optprobe_tmpl_end:\n"
	".popsection\n"
);

/*
 * Sites whose text holds their jump (arch_optimized_insn::in_text): from
 * when the optimizer queues it until the batch that takes it out is
 * applied, or the text goes away. The jumps being taken out in the batch
 * at hand are counted in both until it is applied. Their text is the
 * only one optprobe_restore_original() must mend, on every decode of
 * original text: none, and it costs nothing. Under kprobe_mutex.
 */
static unsigned int nr_jumps, nr_jumps_leaving;

/*
 * Called from a detour buffer. Return non-zero to leave through iret
 * with @regs as a pre_handler left them.
 */
static int optprobe_hit(struct optimized_kprobe *op, struct pt_regs *regs)
{
	struct kprobe *p = &op->kp;
	int redirect = 0;

	regs->sp += sizeof(long);	/* ss was pushed before sp */
	regs->cs = __KERNEL_CS;
	regs->orig_ax = ~0UL;
	regs->ip = (unsigned long)p->addr + INT3_INSN_SIZE;

	/* A site being unoptimized may be disabled: its members say so. */
	preempt_disable();
	if (kprobe_running()) {
		kprobes_inc_nmissed_count(p);
	} else {
		__this_cpu_write(kprobe_ctlblk.kprobe_status, KPROBE_HIT_ACTIVE);
		/*
		 * The site is an aggregate: a direct call, which makes each
		 * member current_kprobe in turn.
		 */
		kprobe_count_hit(p);
		redirect = kprobe_aggr_run_pre_handlers(p, regs);
		__this_cpu_write(current_kprobe, NULL);
	}
	preempt_enable();
	return redirect;
}
NOKPROBE_SYMBOL(optprobe_hit);

/* ---- may this site be optimized? ------------------------------------------ */

/*
 * How an instruction of the region ends the copy's straight line: not,
 * or as the last instruction that runs from the copy (a jmp, a ret),
 * or as a call, which returns to the text after the region.
 */
enum region_flow { FLOW_ON, FLOW_LEAVES, FLOW_CALLS };

/*
 * May @ai be copied into the detour? Set @flow, and return NULL or the
 * rule that says no.
 */
static const char *region_insn_refusal(struct arch_specific_insn *ai,
				       enum region_flow *flow)
{
	*flow = FLOW_ON;
	switch (ai->kind) {
	case KPROBE_INSN_COPY:
	case KPROBE_INSN_CLI:
	case KPROBE_INSN_STI:
	case KPROBE_INSN_PUSHF:
	case KPROBE_INSN_POPF:
	case KPROBE_INSN_JCC:		/* rewritten as jcc rel32 */
		return NULL;
	case KPROBE_INSN_JMP:		/* rewritten as jmp rel32 */
	case KPROBE_INSN_JMP_IND:
	case KPROBE_INSN_RET:
		*flow = FLOW_LEAVES;
		return NULL;
	case KPROBE_INSN_CALL_IND:	/* push the return address, jmp */
		/* The push would move a stack operand. */
		if (ai->rm_base == 4)
			return "an indirect call through the stack pointer";
		fallthrough;
	case KPROBE_INSN_CALL:		/* push the return address, jmp */
		*flow = FLOW_CALLS;
		return NULL;
	default:
		return "loop or jrcxz in the region";
	}
}

/* A nop: 90 without REX.B (41 90 is xchg %eax,%r8d), or 0f 1f. */
static bool is_nop(struct insn *insn)
{
	u8 op = insn->opcode.bytes[0];

	if (op == 0x90)
		return !insn->rex_prefix.nbytes || !X86_REX_B(insn->rex_prefix.bytes[0]);
	return op == 0x0f && insn->opcode.bytes[1] == 0x1f;
}

/*
 * May @insn follow, in the region, the instruction that ended the copy's
 * straight line as @flow says? Only padding: after a call, nops, which
 * the callee's return skips (a call patched from a retpoline thunk is
 * padded so); after a jmp or ret, nops or int3s, which nothing reaches
 * (a ret patched from a return thunk is "ret; int3; int3; ..."). Whether
 * something jumps there is kprobe_region_check()'s question.
 */
static bool is_region_padding(struct insn *insn, enum region_flow flow)
{
	if (is_nop(insn))
		return true;
	return flow == FLOW_LEAVES && insn->opcode.bytes[0] == INT3_INSN_OPCODE &&
	       insn->length == 1;
}

/*
 * Decode the region starting at @addr into @buf (original bytes) and
 * return its length: whole instructions covering a jump, each of which
 * can run from the buffer, or is padding after the last one that runs.
 * Sets @maybe_site when one of them could be a site that others rewrite.
 */
static int decode_region(unsigned long addr, u8 *buf, bool *maybe_site)
{
	enum region_flow flow = FLOW_ON;
	struct arch_specific_insn ai;
	unsigned int len = 0;
	const char *refusal;
	struct insn insn;

	*maybe_site = false;
	while (len < JMP32_INSN_SIZE) {
		if (kprobe_read_original(buf + len, addr + len) ||
		    insn_decode_kernel(&insn, buf + len) < 0)
			return kprobe_refuse(-EILSEQ, "region does not decode");
		if (flow != FLOW_ON) {
			if (!is_region_padding(&insn, flow))
				return kprobe_refuse(-EOPNOTSUPP,
						     "code after a jmp, call or ret in the region");
			/* A nop may be a jump label's: region_reserved() looks. */
			*maybe_site |= kprobe_insn_may_be_listed_site(&insn);
			len += insn.length;
			continue;
		}
		if (kprobe_classify_insn(&insn, &ai))
			return kprobe_refuse(-EOPNOTSUPP,
					     "an instruction that cannot be copied in the region");
		/* An indirect branch must land on the ENDBR, not on a jump. */
		if (is_endbr(get_unaligned((u32 *)(buf + len))))
			return kprobe_refuse(-EOPNOTSUPP, "ENDBR in the region");
		refusal = region_insn_refusal(&ai, &flow);
		if (refusal)
			return kprobe_refuse(-EOPNOTSUPP, refusal);
		*maybe_site |= kprobe_insn_may_be_listed_site(&insn);
		len += insn.length;
	}
	return len;
}

/*
 * Text that others rewrite cannot be copied: it would go stale. Looking
 * for jump label, static call and ftrace sites walks all of them, so
 * that is done only when an instruction in the region could be one.
 */
static int region_reserved(unsigned long start, unsigned long end, bool maybe_site)
{
	void *s = (void *)start, *e = (void *)(end - 1);

	if (alternatives_text_reserved(s, (void *)end))	/* its end is exclusive */
		return kprobe_refuse(-EBUSY, "the region holds text alternatives rewrite");
	if (!maybe_site)
		return 0;
	if (jump_label_text_reserved(s, e))
		return kprobe_refuse(-EBUSY, "the region holds a jump label site");
	if (static_call_text_reserved(s, e))
		return kprobe_refuse(-EBUSY, "the region holds a static call site");
	if (ftrace_text_reserved(s, e))
		return kprobe_refuse(-EBUSY, "the region holds ftrace's site");
	return 0;
}

/* Write a rel32 branch (@opcode, one or two bytes) at @at to @target. */
static int emit_rel32(u8 *dst, const u8 *opcode, unsigned int nr,
		      unsigned long at, unsigned long target)
{
	s64 rel = (long)target - (long)(at + nr + sizeof(s32));
	s32 rel32 = rel;

	if (rel != rel32)
		return -ERANGE;
	memcpy(dst, opcode, nr);
	memcpy(dst + nr, &rel32, sizeof(rel32));
	return nr + sizeof(rel32);
}

/*
 * Longest copy of one instruction of the region: an indirect call made
 * of a push and the jmp through the same operand.
 */
#define PUSH_IMM32_SIZE		5
#define REGION_COPY_MAX		(PUSH_IMM32_SIZE + MAX_INSN_SIZE)

/* Push @resume, where a call returns to. */
static int emit_push_return(u8 *dst, unsigned long resume)
{
	/* push $imm32 is sign-extended: text is in the top 2 GiB. */
	if ((long)(s32)resume != (long)resume)
		return -ERANGE;
	dst[0] = 0x68;
	put_unaligned((s32)resume, (s32 *)(dst + 1));
	return PUSH_IMM32_SIZE;
}

/*
 * Write into @dst the copy of @insn (original bytes @buf, at @from in the
 * text, classified in @ai) that will run at @at in the detour, and return
 * its size. A
 * branch is rewritten with a rel32 to the same target; a call becomes a
 * push of @resume, the end of the region, and a jmp, so that the callee
 * returns to the text, not to the detour (a stack trace then shows the
 * text, and the detour may be freed while the callee sleeps).
 */
static int copy_region_insn(u8 *dst, struct insn *insn, struct arch_specific_insn *ai,
			    const u8 *buf, unsigned long from, unsigned long at,
			    unsigned long resume)
{
	unsigned long next = from + insn->length;
	u8 opcode[2];
	int ret;

	switch (ai->kind) {
	case KPROBE_INSN_JCC:
		opcode[0] = 0x0f;
		opcode[1] = 0x80 | ai->cond;
		return emit_rel32(dst, opcode, 2, at, next + ai->disp);
	case KPROBE_INSN_JMP:
		opcode[0] = JMP32_INSN_OPCODE;
		return emit_rel32(dst, opcode, 1, at, next + ai->disp);
	case KPROBE_INSN_CALL:
		ret = emit_push_return(dst, resume);
		if (ret < 0)
			return ret;
		opcode[0] = JMP32_INSN_OPCODE;
		ret = emit_rel32(dst + PUSH_IMM32_SIZE, opcode, 1, at + PUSH_IMM32_SIZE,
				 next + ai->disp);
		return ret < 0 ? ret : PUSH_IMM32_SIZE + ret;
	case KPROBE_INSN_CALL_IND:
		ret = emit_push_return(dst, resume);
		if (ret > 0)
			ret = kprobe_copy_insn(dst + PUSH_IMM32_SIZE, insn, buf, from,
					       at + PUSH_IMM32_SIZE);
		if (ret < 0)
			return ret;
		/* ff /2 (call) becomes ff /4 (jmp) through the same operand. */
		dst[PUSH_IMM32_SIZE + insn_offset_modrm(insn)] ^= (2 ^ 4) << 3;
		return PUSH_IMM32_SIZE + insn->length;
	default:
		ret = kprobe_copy_insn(dst, insn, buf, from, at);
		return ret < 0 ? ret : insn->length;
	}
}

/* Lay out the detour buffer for @op at @slot into @image; return its size. */
static int build_detour(struct optimized_kprobe *op, u8 *slot, u8 *image,
			const u8 *region, unsigned int len)
{
	const unsigned int save = optprobe_tmpl_restore - optprobe_tmpl_save;
	const unsigned int restore = optprobe_tmpl_redirect - optprobe_tmpl_restore;
	const unsigned int redirect = optprobe_tmpl_end - optprobe_tmpl_redirect;
	unsigned long addr = (unsigned long)op->kp.addr;
	unsigned int pos, jnz, call, redirect_at, at;
	struct arch_specific_insn ai;
	u8 copy[REGION_COPY_MAX];
	enum region_flow flow;
	struct insn insn;
	u64 op_imm = (u64)op;
	s32 rel;
	int ret;

	memcpy(image, optprobe_tmpl_save, save + restore);
	/*
	 * The probed code may be inside a user-access section (EFLAGS.AC
	 * set, as after stac): the handlers must not run with SMAP off. The
	 * flags saved just before hold AC for the way back. The int3 entry
	 * does the same for breakpoint hits.
	 */
	if (cpu_feature_enabled(X86_FEATURE_SMAP))
		memcpy(image + (optprobe_tmpl_clac - optprobe_tmpl_save), "\x0f\x01\xca", 3);
	memcpy(image + (optprobe_tmpl_op - optprobe_tmpl_save) + 2, &op_imm, sizeof(op_imm));
	call = optprobe_tmpl_call - optprobe_tmpl_save;
	__text_gen_insn(image + call, CALL_INSN_OPCODE, slot + call, optprobe_hit,
			CALL_INSN_SIZE);

	pos = save + restore;
	op->optinsn.copy_offset = pos;
	/* Up to the region's end, or its padding (see decode_region()). */
	for (at = 0, flow = FLOW_ON; at < len && flow == FLOW_ON; at += insn.length) {
		if (insn_decode_kernel(&insn, region + at) < 0 ||
		    kprobe_classify_insn(&insn, &ai))
			return -EILSEQ;
		region_insn_refusal(&ai, &flow);
		ret = copy_region_insn(copy, &insn, &ai, region + at, addr + at,
				       (unsigned long)slot + pos, addr + len);
		if (ret < 0)
			return kprobe_refuse(ret, "the region's copy cannot reach its targets");
		if (pos + ret + JMP32_INSN_SIZE + redirect > KPROBE_OPTINSN_SLOT_SIZE)
			return kprobe_refuse(-E2BIG, "the region's copy does not fit the detour");
		memcpy(image + pos, copy, ret);
		pos += ret;
	}
	/* Unneeded after a jmp, call or ret; but always in reach. */
	__text_gen_insn(image + pos, JMP32_INSN_OPCODE, slot + pos, (void *)(addr + len),
			JMP32_INSN_SIZE);
	pos += JMP32_INSN_SIZE;

	redirect_at = pos;
	memcpy(image + pos, optprobe_tmpl_redirect, redirect);
	pos += redirect;

	jnz = optprobe_tmpl_jnz - optprobe_tmpl_save;
	rel = redirect_at - (jnz + 6);
	memcpy(image + jnz + 2, &rel, sizeof(rel));
	return pos;
}

/**
 * arch_prepare_optimized_kprobe() - check a site and build its detour
 * @op: the aggregate that will hold the site; op->kp.addr is set
 * @orig: the probe the site is made for (unused on x86)
 *
 * Called with kprobe_mutex and text_mutex held.
 *
 * Return: 0 with op->optinsn filled in; -EBUSY, -ERANGE, -EOPNOTSUPP or
 * -EILSEQ when the site cannot be optimized; -ENOMEM.
 */
int arch_prepare_optimized_kprobe(struct optimized_kprobe *op, struct kprobe *orig)
{
	unsigned long addr = (unsigned long)op->kp.addr;
	u8 region[MAX_OPTIMIZED_LENGTH + MAX_INSN_SIZE];
	u8 image[KPROBE_OPTINSN_SLOT_SIZE];
	kprobe_opcode_t *slot;
	int len, size, ret;
	bool maybe_site;

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	len = decode_region(addr, region, &maybe_site);
	if (len < 0)
		return len;
	ret = region_reserved(addr, addr + len, maybe_site);
	if (ret)
		return ret;
	ret = kprobe_region_check(addr, addr + len);
	if (ret)
		return ret;
	/*
	 * The region's code, rel32 away from the buffer, must be reachable.
	 * A site the query file asks about is laid out for the first
	 * address a detour can have, in the same reach of the text: no
	 * buffer is taken, nothing written, nothing told to perf.
	 */
	memset(image, INT3_INSN_OPCODE, sizeof(image));
	if (op->kp.flags & KPROBE_FLAG_QUERY) {
		size = build_detour(op, (u8 *)MODULES_VADDR, image, region, len);
		if (size < 0)
			return size;
		op->optinsn.size = len;
		return 0;
	}
	slot = get_optinsn_slot();
	if (!slot)
		return kprobe_refuse(-ENOMEM, "no detour buffer");
	size = build_detour(op, slot, image, region, len);
	if (size < 0) {
		free_optinsn_slot(slot, 0);
		return size;
	}
	text_poke(slot, image, size);
	perf_event_text_poke(slot, NULL, 0, image, size);	/* see write_probe_byte() */
	op->optinsn.insn = slot;
	op->optinsn.size = len;
	memcpy(op->optinsn.orig, region, JMP32_INSN_SIZE);
	return 0;
}

/**
 * arch_remove_optimized_kprobe() - free a site's detour buffer
 * @op: the site; it is neither optimized nor queued
 *
 * A task may have been preempted inside the buffer (in the region's
 * copy, or in a handler called from it): the buffer is freed dirty.
 */
void arch_remove_optimized_kprobe(struct optimized_kprobe *op)
{
	kprobe_assert_mutex_held();
	op->optinsn.size = 0;
	if (!op->optinsn.insn)
		return;
	if (op->optinsn.in_text) {	/* the jump went with its text */
		op->optinsn.in_text = false;
		nr_jumps--;
	}
	free_optinsn_slot(op->optinsn.insn, 1);
	op->optinsn.insn = NULL;
}

/**
 * arch_within_optimized_kprobe() - is @addr in the region of @op?
 * @op: the site
 * @addr: an address
 *
 * Return: non-zero when the jump of @op covers @addr.
 */
int arch_within_optimized_kprobe(struct optimized_kprobe *op,
				 kprobe_opcode_t *addr)
{
	kprobe_assert_mutex_held();
	/* 0 unless a detour was built, or laid out for the query file. */
	return (unsigned long)addr - (unsigned long)op->kp.addr < op->optinsn.size;
}

/**
 * arch_kprobe_queue_optimize() - queue writing @op's jump
 * @op: an armed site with a detour; kprobe_mutex and text_mutex held
 *
 * Written by arch_kprobe_queue_apply(); CPUs that hit the site while it
 * changes are sent to the detour.
 */
void arch_kprobe_queue_optimize(struct optimized_kprobe *op)
{
	u8 jmp[JMP32_INSN_SIZE];

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	__text_gen_insn(jmp, JMP32_INSN_OPCODE, op->kp.addr, op->optinsn.insn,
			JMP32_INSN_SIZE);
	text_poke_queue(op->kp.addr, jmp, JMP32_INSN_SIZE, NULL);
	op->optinsn.in_text = true;
	nr_jumps++;
}

/**
 * arch_kprobe_queue_unoptimize() - queue taking @op's jump out
 * @op: an optimized site; kprobe_mutex and text_mutex held
 * @armed: leave the int3 (the site stays armed) rather than the
 *	original bytes
 */
void arch_kprobe_queue_unoptimize(struct optimized_kprobe *op, bool armed)
{
	u8 jmp[JMP32_INSN_SIZE], text[JMP32_INSN_SIZE];

	kprobe_assert_mutex_held();
	lockdep_assert_held(&text_mutex);
	memcpy(text, op->optinsn.orig, sizeof(text));
	if (armed)
		text[0] = INT3_INSN_OPCODE;
	/* A CPU that hits the site meanwhile still takes the detour. */
	__text_gen_insn(jmp, JMP32_INSN_OPCODE, op->kp.addr, op->optinsn.insn,
			JMP32_INSN_SIZE);
	text_poke_queue(op->kp.addr, text, JMP32_INSN_SIZE, jmp);
	if (op->optinsn.in_text) {
		op->optinsn.in_text = false;
		nr_jumps_leaving++;
	}
}

/* The batch's text is written: the jumps taken out in it are gone. */
void optprobe_text_applied(void)
{
	nr_jumps -= nr_jumps_leaving;
	nr_jumps_leaving = 0;
}

/*
 * Put back, in @buf (@len bytes read at @addr), the bytes that the jumps
 * of sites with a detour replace, or will, or did (see kprobe_detour_site()),
 * while any text holds a jump.
 */
void optprobe_restore_original(u8 *buf, unsigned long addr, int len)
{
	struct optimized_kprobe *op;
	unsigned long a;
	int i;

	if (!nr_jumps)
		return;
	for (a = addr - JMP32_INSN_SIZE + 1; a < addr + len; a++) {
		op = kprobe_detour_site(get_kprobe((void *)a));
		if (!op)
			continue;
		for (i = 0; i < JMP32_INSN_SIZE; i++)
			if (a + i >= addr && a + i < addr + len)
				buf[a + i - addr] = op->optinsn.orig[i];
	}
}
