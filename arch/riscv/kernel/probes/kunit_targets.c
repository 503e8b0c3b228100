// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The targets of the riscv kprobes KUnit cases (kunit_cases.c): functions
 * written in assembly, each probed instruction at a local label whose
 * address a global pointer, kptrv_*_probe, holds for the cases. Not a
 * global label: kallsyms would take it for the start of a function, and
 * the scan for a free register stops at a function's end. Compression is
 * chosen per instruction (.option rvc or norvc), and relaxation is off,
 * so every instruction is the one written; internal jumps go to local
 * labels.
 */

#include <linux/linkage.h>
#include <asm/asm-extable.h>

#include "kunit_targets.h"

#define KPTRV_FUNC(name) ".globl " #name "\n.type " #name ", @function\n" \
	".balign 4\n" #name ":\n"
#define KPTRV_END(name) ".size " #name ", .-" #name "\n"
#define KPTRV_AT(name) ".pushsection .rodata\n.balign 8\n.globl " #name "\n" \
	#name ":\n.quad .L" #name "\n.popsection\n.L" #name ":\n"

asm(".pushsection .text, \"ax\"\n"
	".option push\n"
	".option norelax\n"
	".option norvc\n"

	/* addi (4 bytes), copied: x + 4; t1 is written after it, so free */
	KPTRV_FUNC(kptrv_addi)
	KPTRV_AT(kptrv_addi_probe)
	"	addi	a0, a0, 3\n"
	"	li	t1, 1\n"
	"	add	a0, a0, t1\n"
	"	ret\n"
	KPTRV_END(kptrv_addi)

	/* c.mv, c.addi (2 bytes each), copied: x + 1 */
	KPTRV_FUNC(kptrv_cmv)
	".option rvc\n"
	KPTRV_AT(kptrv_cmv_probe)
	"	c.mv	a1, a0\n"
	KPTRV_AT(kptrv_caddi_probe)
	"	c.addi	a1, 1\n"
	"	c.mv	a0, a1\n"
	".option norvc\n"
	"	ret\n"
	KPTRV_END(kptrv_cmv)

	/*
	 * A frame, stores and a load through sp (compressed and not),
	 * copied: returns x + 5 with t0 live across the probes (set
	 * before, read after), so the jump back must take another register.
	 */
	KPTRV_FUNC(kptrv_frame)
	"	li	t0, 5\n"
	KPTRV_AT(kptrv_frame_addi_probe)
	"	addi	sp, sp, -16\n"
	KPTRV_AT(kptrv_frame_sd_probe)
	"	sd	a0, 8(sp)\n"
	".option rvc\n"
	KPTRV_AT(kptrv_frame_csdsp_probe)
	"	c.sdsp	t0, 0(sp)\n"
	KPTRV_AT(kptrv_frame_cldsp_probe)
	"	c.ldsp	a1, 8(sp)\n"
	".option norvc\n"
	"	ld	a2, 0(sp)\n"
	"	addi	sp, sp, 16\n"
	"	add	a0, a1, t0\n"
	"	bne	a2, t0, 1f\n"
	"	ret\n"
	"1:	li	a0, 0\n"
	"	ret\n"
	KPTRV_END(kptrv_frame)

	/*
	 * Every t register live after the probe on one path or the other
	 * (sel = 0 or not), a5 written on both: the jump back must take a5.
	 * Returns x + 50 for sel == 0, x + 32 otherwise, only if no t
	 * register was changed.
	 */
	KPTRV_FUNC(kptrv_tlive)
	"	li	t0, 1\n"
	"	li	t1, 2\n"
	"	li	t2, 3\n"
	"	li	t3, 4\n"
	"	li	t4, 5\n"
	"	li	t5, 6\n"
	"	li	t6, 7\n"
	KPTRV_AT(kptrv_tlive_probe)
	"	addi	a0, a0, 1\n"
	"	beqz	a1, 1f\n"
	"	add	a0, a0, t0\n"
	"	add	a0, a0, t1\n"
	"	add	a0, a0, t2\n"
	"	add	a0, a0, t3\n"
	"	j	2f\n"
	"1:	add	a0, a0, t4\n"
	"	add	a0, a0, t5\n"
	"	add	a0, a0, t6\n"
	"	addi	a0, a0, 10\n"
	"2:	add	a0, a0, t6\n"
	"	addi	a0, a0, -7\n"
	"	li	a5, 21\n"
	"	add	a0, a0, a5\n"
	"	ret\n"
	KPTRV_END(kptrv_tlive)

	/*
	 * t0 live across a call: GCC's IPA register allocation keeps values
	 * in caller-saved registers across calls of functions it knows leave
	 * them alone, so a call says nothing of them. x + 9
	 */
	KPTRV_FUNC(kptrv_tcall)
	"	mv	t2, ra\n"
	"	li	t0, 7\n"
	KPTRV_AT(kptrv_tcall_probe)
	"	addi	a0, a0, 1\n"
	"	jal	kptrv_leaf\n"
	"	add	a0, a0, t0\n"
	"	mv	ra, t2\n"
	"	ret\n"
	KPTRV_END(kptrv_tcall)

	/*
	 * t0 written on both ways from the probe, one of them through a
	 * backward c.j: free. x + 6
	 */
	KPTRV_FUNC(kptrv_backjump)
	KPTRV_AT(kptrv_backjump_probe)
	"	addi	a0, a0, 1\n"
	"	j	2f\n"
	"1:	li	t0, 5\n"
	"	add	a0, a0, t0\n"
	"	ret\n"
	".option rvc\n"
	"2:	c.j	1b\n"
	".option norvc\n"
	KPTRV_END(kptrv_backjump)

	/*
	 * Integer arithmetic of each kind emulate_int() carries out, on x
	 * (a0) and y (a1), the results summed into a0. Every instruction
	 * from kptrv_alu_first up to kptrv_alu_ret is probed.
	 */
	KPTRV_FUNC(kptrv_alu)
	KPTRV_AT(kptrv_alu_first)
	"	addi	a2, a0, -7\n"
	"	slti	a3, a2, 5\n"
	"	sltiu	a4, a2, 5\n"
	"	xori	a5, a1, 0x5a5\n"
	"	ori	t0, a0, 0x30\n"
	"	andi	t1, a1, -16\n"
	"	slli	t2, a0, 37\n"
	"	srli	a6, a1, 7\n"
	"	srai	a7, a1, 61\n"
	"	add	a2, a2, a3\n"
	"	sub	a2, a2, a4\n"
	"	xor	a2, a2, a5\n"
	"	or	a2, a2, t0\n"
	"	and	t1, t1, a2\n"
	"	sll	a3, a0, a1\n"
	"	slt	a4, a0, a1\n"
	"	sltu	a5, a0, a1\n"
	"	srl	t0, a1, a0\n"
	"	sra	t2, t2, a1\n"
	"	mul	a6, a6, a0\n"
	"	addiw	a7, a7, 2047\n"
	"	slliw	a3, a3, 31\n"
	"	srliw	a4, a1, 3\n"
	"	sraiw	a5, a1, 3\n"
	"	addw	t0, t0, a1\n"
	"	subw	t1, t1, a0\n"
	"	sllw	t2, t2, a0\n"
	"	srlw	a6, a6, a1\n"
	"	sraw	a7, a7, a0\n"
	"	mulw	a2, a2, a1\n"
	"	lui	a0, 0x80001\n"
	"	add	a0, a0, a2\n"
	"	add	a0, a0, a3\n"
	"	add	a0, a0, a4\n"
	"	add	a0, a0, a5\n"
	"	add	a0, a0, t0\n"
	"	add	a0, a0, t1\n"
	"	add	a0, a0, t2\n"
	"	add	a0, a0, a6\n"
	"	add	a0, a0, a7\n"
	".option rvc\n"
	"	c.addi16sp	sp, -32\n"
	"	c.addi4spn	a2, sp, 24\n"
	"	c.sub	a2, a0\n"
	"	c.li	a3, -9\n"
	"	c.lui	a4, 0x1f\n"
	"	c.addi	a3, 13\n"
	"	c.addiw	a4, -1\n"
	"	c.srli	a2, 3\n"
	"	c.srai	a4, 2\n"
	"	c.andi	a3, -6\n"
	"	c.xor	a2, a3\n"
	"	c.or	a3, a4\n"
	"	c.and	a4, a2\n"
	"	c.subw	a2, a3\n"
	"	c.addw	a3, a4\n"
	"	c.slli	a4, 9\n"
	"	c.mv	a5, a2\n"
	"	c.add	a5, a3\n"
	"	c.add	a0, a4\n"
	"	c.add	a0, a5\n"
	"	c.addi16sp	sp, 32\n"
	"	c.sub	a0, a1\n"
	"	c.nop\n"
	".option norvc\n"
	KPTRV_AT(kptrv_alu_ret)
	"	ret\n"
	KPTRV_END(kptrv_alu)

	/*
	 * Loads and stores of each width, signed and not, compressed and
	 * not, on the stack and on buf (a1, four words read and written),
	 * that emulate_access() carries out; the values loaded summed into
	 * a0. Every instruction from kptrv_mem_first up to kptrv_mem_ret is
	 * probed.
	 */
	KPTRV_FUNC(kptrv_mem)
	KPTRV_AT(kptrv_mem_first)
	"	addi	sp, sp, -32\n"
	"	sd	a0, 0(sp)\n"
	"	sw	a0, 8(sp)\n"
	"	sh	a0, 12(sp)\n"
	"	sb	a0, 14(sp)\n"
	"	ld	a2, 0(sp)\n"
	"	lw	a3, 8(sp)\n"
	"	lwu	a4, 8(sp)\n"
	"	lh	a5, 12(sp)\n"
	"	lhu	t0, 12(sp)\n"
	"	lb	t1, 14(sp)\n"
	"	lbu	t2, 14(sp)\n"
	"	ld	a6, 24(a1)\n"
	"	sd	a2, 24(a1)\n"
	"	add	a0, a2, a3\n"
	"	add	a0, a0, a4\n"
	"	add	a0, a0, a5\n"
	"	add	a0, a0, t0\n"
	"	add	a0, a0, t1\n"
	"	add	a0, a0, t2\n"
	"	add	a0, a0, a6\n"
	".option rvc\n"
	"	c.sdsp	a3, 16(sp)\n"
	"	c.swsp	a4, 24(sp)\n"
	"	c.ldsp	a5, 16(sp)\n"
	"	c.lwsp	a2, 24(sp)\n"
	"	c.sd	a5, 8(a1)\n"
	"	c.sw	a2, 16(a1)\n"
	"	c.ld	a3, 0(a1)\n"
	"	c.lw	a4, 20(a1)\n"
	"	c.add	a0, a5\n"
	"	c.add	a0, a2\n"
	"	c.add	a0, a3\n"
	"	c.add	a0, a4\n"
	"	c.addi16sp	sp, 32\n"
	/* The largest offsets each compressed form encodes, and negative ones */
	"	c.addi16sp	sp, -512\n"
	"	c.sdsp	a0, 504(sp)\n"
	"	c.swsp	a0, 252(sp)\n"
	"	c.ldsp	a2, 504(sp)\n"
	"	c.lwsp	a3, 252(sp)\n"
	"	c.mv	a4, sp\n"
	"	c.sd	a2, 248(a4)\n"
	"	c.sw	a3, 124(a4)\n"
	"	c.ld	a5, 248(a4)\n"
	"	c.lw	a2, 124(a4)\n"
	"	c.lui	a3, 0xfffe1\n"
	"	c.add	a0, a5\n"
	"	c.add	a0, a2\n"
	"	c.add	a0, a3\n"
	".option norvc\n"
	"	addi	a5, sp, 256\n"
	"	sd	a0, -16(a5)\n"
	"	sw	a0, -4(a5)\n"
	"	lwu	a2, -4(a5)\n"
	"	ld	a3, 240(sp)\n"
	"	add	a0, a0, a2\n"
	"	xor	a0, a0, a3\n"
	".option rvc\n"
	"	c.addi16sp	sp, 496\n"
	"	c.addi16sp	sp, 16\n"
	".option norvc\n"
	KPTRV_AT(kptrv_mem_ret)
	"	ret\n"
	KPTRV_END(kptrv_mem)

	/*
	 * t0 first written past a loop that reads a0 only, and dead at the
	 * return as the function writes it: free. 7 for an odd x
	 */
	KPTRV_FUNC(kptrv_loop)
	KPTRV_AT(kptrv_loop_probe)
	"	addi	a0, a0, 1\n"
	"1:	addi	a0, a0, -2\n"
	"	bgtz	a0, 1b\n"
	"	li	t0, 7\n"
	"	add	a0, a0, t0\n"
	"	ret\n"
	KPTRV_END(kptrv_loop)

	/*
	 * An LR/SC loop adding a1 to the word at a0, returning the old
	 * value: a trap between LR and SC fails the SC every time.
	 */
	KPTRV_FUNC(kptrv_lrsc)
	KPTRV_AT(kptrv_lrsc_lr)
	"1:	lr.w	a2, (a0)\n"
	KPTRV_AT(kptrv_lrsc_add)
	"	add	a3, a2, a1\n"
	KPTRV_AT(kptrv_lrsc_sc)
	"	sc.w	a4, a3, (a0)\n"
	KPTRV_AT(kptrv_lrsc_bnez)
	"	bnez	a4, 1b\n"
	"	mv	a0, a2\n"
	"	ret\n"
	KPTRV_END(kptrv_lrsc)

	/*
	 * A load whose fault the exception table fixes up, after the
	 * probe (an AMO adding 0, which is copied, never emulated): its
	 * write of t0 does not happen when it faults, and the fix-up reads
	 * t0. x + 8 when the load from p faults (p NULL).
	 */
	KPTRV_FUNC(kptrv_fixup)
	"	li	t0, 7\n"
	KPTRV_AT(kptrv_fixup_probe)
	"	amoadd.w	zero, zero, (sp)\n"
	"	addi	a0, a0, 1\n"
	"1:	ld	t0, 0(a1)\n"
	"	add	a0, a0, t0\n"
	"	ret\n"
	"2:	add	a0, a0, t0\n"
	"	ret\n"
	_ASM_EXTABLE(1b, 2b)
	KPTRV_END(kptrv_fixup)

	/*
	 * No register provably free after the probed AMO (adding 0: copied,
	 * never emulated): an indirect jump follows. x + 1
	 */
	KPTRV_FUNC(kptrv_nofree)
	"	lla	t0, 1f\n"
	KPTRV_AT(kptrv_nofree_probe)
	"	amoadd.w	zero, zero, (sp)\n"
	"	addi	a0, a0, 1\n"
	"	jr	t0\n"
	"1:	ret\n"
	KPTRV_END(kptrv_nofree)

	/* Simulated kinds. beq, taken when x == 0: returns 2, else 1 */
	KPTRV_FUNC(kptrv_beq)
	KPTRV_AT(kptrv_beq_probe)
	"	beq	a0, zero, 1f\n"
	"	li	a0, 1\n"
	"	ret\n"
	KPTRV_AT(kptrv_beq_to)
	"1:	li	a0, 2\n"
	"	ret\n"
	KPTRV_END(kptrv_beq)

	/* c.beqz and c.j, the same */
	KPTRV_FUNC(kptrv_cbeqz)
	".option rvc\n"
	KPTRV_AT(kptrv_cbeqz_probe)
	"	c.beqz	a0, 1f\n"
	"	c.li	a0, 1\n"
	KPTRV_AT(kptrv_cj_probe)
	"	c.j	2f\n"
	"1:	c.li	a0, 2\n"
	"2:\n"
	".option norvc\n"
	"	ret\n"
	KPTRV_END(kptrv_cbeqz)

	/* auipc: returns the address of the auipc itself */
	KPTRV_FUNC(kptrv_auipc)
	KPTRV_AT(kptrv_auipc_probe)
	"	auipc	a0, 0\n"
	"	ret\n"
	KPTRV_END(kptrv_auipc)

	/* jal to a leaf and back (ra saved in t1): x + 1 */
	KPTRV_FUNC(kptrv_leaf)
	"	addi	a0, a0, 1\n"
	"	ret\n"
	KPTRV_END(kptrv_leaf)
	KPTRV_FUNC(kptrv_jal)
	"	mv	t1, ra\n"
	KPTRV_AT(kptrv_jal_probe)
	"	jal	kptrv_leaf\n"
	"	mv	ra, t1\n"
	KPTRV_AT(kptrv_ret_probe)
	"	ret\n"
	KPTRV_END(kptrv_jal)

	/* 32 probe points for one batch: x + 32 */
	KPTRV_FUNC(kptrv_adds)
	KPTRV_AT(kptrv_adds_probes)
	"	.rept	32\n"
	"	addi	a0, a0, 1\n"
	"	.endr\n"
	"	li	t0, 0\n"
	"	ret\n"
	KPTRV_END(kptrv_adds)

	/*
	 * Optimizable: the region is addi and slli (8 bytes), t1 is
	 * written after it before anything reads it, so it is free for
	 * the jump in and the jump back. (x + 3) * 2 + 4
	 */
	KPTRV_FUNC(kptrv_opt)
	"	addi	sp, sp, -16\n"
	KPTRV_AT(kptrv_opt_probe)
	"	addi	a0, a0, 3\n"
	"	slli	a0, a0, 1\n"
	"	li	t1, 4\n"
	"	add	a0, a0, t1\n"
	"	addi	sp, sp, 16\n"
	"	ret\n"
	KPTRV_END(kptrv_opt)

	/*
	 * A 10-byte region: addi, c.addi, and an addi that straddles the
	 * jump's end; t2 is free. x + 15
	 */
	KPTRV_FUNC(kptrv_opt10)
	KPTRV_AT(kptrv_opt10_probe)
	"	addi	a0, a0, 1\n"
	".option rvc\n"
	"	c.addi	a0, 2\n"
	".option norvc\n"
	KPTRV_AT(kptrv_opt10_inside)
	"	addi	a0, a0, 4\n"
	"	li	t2, 8\n"
	"	add	a0, a0, t2\n"
	"	ret\n"
	KPTRV_END(kptrv_opt10)

	/*
	 * No t or a register free after the probe (the call may keep
	 * them, see kptrv_tcall), but ra: saved before, written by the
	 * call. x + 4
	 */
	KPTRV_FUNC(kptrv_rafree)
	"	addi	sp, sp, -16\n"
	"	sd	ra, 8(sp)\n"
	KPTRV_AT(kptrv_rafree_probe)
	"	addi	a0, a0, 1\n"
	"	addi	a0, a0, 2\n"
	"	jal	kptrv_leaf\n"
	"	ld	ra, 8(sp)\n"
	"	addi	sp, sp, 16\n"
	"	ret\n"
	KPTRV_END(kptrv_rafree)

	/* s1 saved before the probe and written after the region. x + 6 */
	KPTRV_FUNC(kptrv_s1free)
	"	addi	sp, sp, -16\n"
	"	sd	s1, 8(sp)\n"
	KPTRV_AT(kptrv_s1free_probe)
	"	addi	a0, a0, 1\n"
	"	addi	a0, a0, 2\n"
	"	mv	s1, a0\n"
	"	addi	a0, s1, 3\n"
	"	ld	s1, 8(sp)\n"
	"	addi	sp, sp, 16\n"
	"	ret\n"
	KPTRV_END(kptrv_s1free)

	/* A beqz in the region: x ? x + 5 : 100. t1 free at both ends. */
	KPTRV_FUNC(kptrv_optbr)
	KPTRV_AT(kptrv_optbr_probe)
	"	beqz	a0, 1f\n"
	"	addi	a0, a0, 5\n"
	"	li	t1, 0\n"
	"	ret\n"
	"1:	li	t1, 1\n"
	"	li	a0, 100\n"
	"	ret\n"
	KPTRV_END(kptrv_optbr)

	/* A c.beqz, a c.addi and an addi: x ? x + 7 : 200. */
	KPTRV_FUNC(kptrv_optcbr)
	".option rvc\n"
	KPTRV_AT(kptrv_optcbr_probe)
	"	c.beqz	a0, 1f\n"
	"	c.addi	a0, 3\n"
	".option norvc\n"
	"	addi	a0, a0, 4\n"
	"	li	t1, 0\n"
	"	ret\n"
	"1:	li	t1, 1\n"
	"	li	a0, 200\n"
	"	ret\n"
	KPTRV_END(kptrv_optcbr)

	/* An auipc in the region: returns the probe's address. */
	KPTRV_FUNC(kptrv_optauipc)
	KPTRV_AT(kptrv_optauipc_probe)
	"	auipc	a0, 0\n"
	"	addi	a0, a0, 0\n"
	"	li	t1, 0\n"
	"	ret\n"
	KPTRV_END(kptrv_optauipc)

	/* A c.j over a c.addi, in the region: x + 3. */
	KPTRV_FUNC(kptrv_optj)
	KPTRV_AT(kptrv_optj_probe)
	"	addi	a0, a0, 1\n"
	".option rvc\n"
	"	c.j	1f\n"
	"	c.addi	a0, 1\n"
	".option norvc\n"
	"1:	li	t1, 0\n"
	"	addi	a0, a0, 2\n"
	"	ret\n"
	KPTRV_END(kptrv_optj)

	/* The return in the region: x + 2. */
	KPTRV_FUNC(kptrv_optret)
	".option rvc\n"
	KPTRV_AT(kptrv_optret_probe)
	"	c.addi	a0, 2\n"
	"	c.li	t1, 0\n"
	"	c.jr	ra\n"
	"	c.nop\n"
	".option norvc\n"
	KPTRV_END(kptrv_optret)

	/*
	 * No register is free right after the region (t1 and t2 are read
	 * later, nothing else is written), t2 is after the next
	 * instruction: the detour runs that one too. x + 17
	 */
	KPTRV_FUNC(kptrv_optext)
	"	li	t2, 7\n"
	KPTRV_AT(kptrv_optext_probe)
	"	li	t1, 5\n"
	"	add	a0, a0, t1\n"
	KPTRV_AT(kptrv_optext_after)
	"	add	a0, a0, t2\n"
	"	li	t2, 0\n"
	"	add	a0, a0, t1\n"
	"	ret\n"
	KPTRV_END(kptrv_optext)

	/*
	 * t3, written on another path, is dead at the return after the
	 * probe: the function's caller cannot keep a value in it. x + 3
	 */
	KPTRV_FUNC(kptrv_retfree)
	"	bnez	a0, 1f\n"
	"	li	t3, 0\n"
	"1:\n"
	KPTRV_AT(kptrv_retfree_probe)
	"	addi	a0, a0, 1\n"
	"	addi	a0, a0, 2\n"
	"	ret\n"
	KPTRV_END(kptrv_retfree)

	/* Writes t4. x + 10 */
	KPTRV_FUNC(kptrv_clobber_t4)
	"	li	t4, 0\n"
	"	addi	a0, a0, 10\n"
	"	ret\n"
	KPTRV_END(kptrv_clobber_t4)

	/*
	 * t4 is dead at the call after the probe: its callee writes it,
	 * so the caller cannot keep a value in it. x + 13
	 */
	KPTRV_FUNC(kptrv_callfree)
	"	addi	sp, sp, -16\n"
	"	sd	ra, 8(sp)\n"
	KPTRV_AT(kptrv_callfree_probe)
	"	addi	a0, a0, 1\n"
	"	addi	a0, a0, 2\n"
	"	jal	kptrv_clobber_t4\n"
	"	ld	ra, 8(sp)\n"
	"	addi	sp, sp, 16\n"
	"	ret\n"
	KPTRV_END(kptrv_callfree)

	/*
	 * A jump label site (kptrv_jl_key) whose jump, once enabled, lands
	 * inside the region of the probe after it: not optimizable.
	 * x + 3, x + 2 with the key enabled
	 */
	KPTRV_FUNC(kptrv_jlinto)
	"1:	nop\n"
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 3f - .\n"
	".dword kptrv_jl_key - .\n"
	".popsection\n"
	KPTRV_AT(kptrv_jlinto_probe)
	"	addi	a0, a0, 1\n"
	"3:	addi	a0, a0, 2\n"
	"	li	t1, 0\n"
	"	ret\n"
	KPTRV_END(kptrv_jlinto)

	/*
	 * A branch lands inside the region after the probe: not
	 * optimizable, though t1 is free. x + 1 + 2 * n, n >= 1
	 */
	KPTRV_FUNC(kptrv_entered)
	KPTRV_AT(kptrv_entered_probe)
	"	addi	a0, a0, 1\n"
	"1:	addi	a0, a0, 2\n"
	"	addi	a1, a1, -1\n"
	"	li	t1, 0\n"
	"	blt	t1, a1, 1b\n"
	"	ret\n"
	KPTRV_END(kptrv_entered)

	/* Refused: ebreak, c.ebreak, a CSR access, fence; then x + 1 */
	KPTRV_FUNC(kptrv_refused)
	"	j	1f\n"
	KPTRV_AT(kptrv_ebreak_probe)
	"	ebreak\n"
	".option rvc\n"
	KPTRV_AT(kptrv_cebreak_probe)
	"	c.ebreak\n"
	".option norvc\n"
	"1:\n"
	KPTRV_AT(kptrv_csr_probe)
	"	csrr	a1, sscratch\n"
	KPTRV_AT(kptrv_fence_probe)
	"	fence	rw, rw\n"
	"	addi	a0, a0, 1\n"
	"	ret\n"
	KPTRV_END(kptrv_refused)

	".option pop\n"
	".popsection\n");

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * Traced functions: ftrace's call site at the symbol, two 4-byte NOPs
 * that ftrace makes "auipc t0; jalr t0", recorded in
 * __patchable_function_entries as the compiler records one under
 * CC_FLAGS_FTRACE. The record's section is linked to the function's
 * ("o"), as the compiler makes it.
 */
#define KPTRV_TRACED_FUNC(name) KPTRV_FUNC(name)			\
	"8881:	nop\n	nop\n"						\
	".pushsection __patchable_function_entries, \"awo\", @progbits, " #name "\n" \
	".balign 8\n.quad 8881b\n.popsection\n"

asm(".pushsection .text, \"ax\"\n"
	".option push\n"
	".option norelax\n"
	".option norvc\n"

	/* a + 2b + 3c + 4d + 5e + 6f + 7g + 8h */
	KPTRV_TRACED_FUNC(kptrv_traced8)
	"	slli	t1, a1, 1\n"
	"	add	a0, a0, t1\n"
	"	li	t2, 3\n"
	"	mul	t1, a2, t2\n"
	"	add	a0, a0, t1\n"
	"	slli	t1, a3, 2\n"
	"	add	a0, a0, t1\n"
	"	li	t2, 5\n"
	"	mul	t1, a4, t2\n"
	"	add	a0, a0, t1\n"
	"	li	t2, 6\n"
	"	mul	t1, a5, t2\n"
	"	add	a0, a0, t1\n"
	"	li	t2, 7\n"
	"	mul	t1, a6, t2\n"
	"	add	a0, a0, t1\n"
	"	slli	t1, a7, 3\n"
	"	add	a0, a0, t1\n"
	"	ret\n"
	KPTRV_END(kptrv_traced8)

	/* a + 1 */
	KPTRV_TRACED_FUNC(kptrv_traced1)
	"	addi	a0, a0, 1\n"
	"	ret\n"
	KPTRV_END(kptrv_traced1)

	/*
	 * fn(arg) with s0 = 0x800 and s1-s11 = 0x101, 0x202, ... 0xb0b;
	 * returns s1 as the call left it, the caller's s0-s11 kept.
	 */
	KPTRV_FUNC(kptrv_call_saving)
	"	addi	sp, sp, -112\n"
	"	sd	ra, 104(sp)\n"
	"	sd	s0, 96(sp)\n"
	"	sd	s1, 88(sp)\n"
	"	sd	s2, 80(sp)\n"
	"	sd	s3, 72(sp)\n"
	"	sd	s4, 64(sp)\n"
	"	sd	s5, 56(sp)\n"
	"	sd	s6, 48(sp)\n"
	"	sd	s7, 40(sp)\n"
	"	sd	s8, 32(sp)\n"
	"	sd	s9, 24(sp)\n"
	"	sd	s10, 16(sp)\n"
	"	sd	s11, 8(sp)\n"
	"	mv	t3, a0\n"
	"	mv	a0, a1\n"
	"	li	s0, 0x800\n"
	"	li	s1, 0x101\n"
	"	li	s2, 0x202\n"
	"	li	s3, 0x303\n"
	"	li	s4, 0x404\n"
	"	li	s5, 0x505\n"
	"	li	s6, 0x606\n"
	"	li	s7, 0x707\n"
	"	li	s8, 0x808\n"
	"	li	s9, 0x909\n"
	"	li	s10, 0xa0a\n"
	"	li	s11, 0xb0b\n"
	"	jalr	t3\n"
	"	mv	a0, s1\n"
	"	ld	ra, 104(sp)\n"
	"	ld	s0, 96(sp)\n"
	"	ld	s1, 88(sp)\n"
	"	ld	s2, 80(sp)\n"
	"	ld	s3, 72(sp)\n"
	"	ld	s4, 64(sp)\n"
	"	ld	s5, 56(sp)\n"
	"	ld	s6, 48(sp)\n"
	"	ld	s7, 40(sp)\n"
	"	ld	s8, 32(sp)\n"
	"	ld	s9, 24(sp)\n"
	"	ld	s10, 16(sp)\n"
	"	ld	s11, 8(sp)\n"
	"	addi	sp, sp, 112\n"
	"	ret\n"
	KPTRV_END(kptrv_call_saving)

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	/*
	 * A direct trampoline as BPF's for fentry programs: entered with
	 * the address after the call site in t0 and the function's return
	 * address in ra, it counts its runs in kptrv_direct_runs and goes
	 * on at t0. t1 and t2 hold nothing at an entry.
	 */
	KPTRV_FUNC(kptrv_direct_tramp)
	"	lla	t1, kptrv_direct_runs\n"
	"	ld	t2, 0(t1)\n"
	"	addi	t2, t2, 1\n"
	"	sd	t2, 0(t1)\n"
	"	jr	t0\n"
	KPTRV_END(kptrv_direct_tramp)
#endif

	".option pop\n"
	".popsection\n");

u64 kptrv_direct_runs;
#endif /* CONFIG_KPROBES_ON_FTRACE */
