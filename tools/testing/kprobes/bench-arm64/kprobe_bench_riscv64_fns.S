/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions kprobe_bench_arch probes on riscv64, in assembly so that
 * the kind and size of each probed instruction is exact: compression
 * is chosen per instruction, and relaxation is off. kpb_*_at is the
 * probed instruction of each.
 */
#include <linux/linkage.h>
#include "kprobe_bench_arch.h"

	.text
	.option	push
	.option	norelax
	.option	norvc

/* x ? x + 1 : x; the c.beqz is simulated. */
SYM_FUNC_START(kpb_sim_cbz)
	mv	a1, a0
	.option	rvc
SYM_INNER_LABEL(kpb_sim_cbz_at, SYM_L_GLOBAL)
	c.beqz	a1, 1f
	.option	norvc
	addi	a0, a0, 1
1:	ret
SYM_FUNC_END(kpb_sim_cbz)

/* x ? x + 1 : x; the beq is simulated. */
SYM_FUNC_START(kpb_sim_bcond)
SYM_INNER_LABEL(kpb_sim_bcond_at, SYM_L_GLOBAL)
	beq	a0, zero, 1f
	addi	a0, a0, 1
1:	ret
SYM_FUNC_END(kpb_sim_bcond)

/*
 * x + 1; the addi runs out of line (stepped, or boosted by ours: a1,
 * written after it before any read, is free for the jump back), or in
 * ours' detour: t0 is free at it and after the li for the jumps.
 */
SYM_FUNC_START(kpb_step_add)
	mv	a1, a0
SYM_INNER_LABEL(kpb_step_add_at, SYM_L_GLOBAL)
	addi	a0, a1, 1
	li	a1, 0
	li	t0, 0
	ret
SYM_FUNC_END(kpb_step_add)

/*
 * x, through the stack; the ld runs out of line (a1 free after it), or
 * in ours' detour (t0 free at it and after the li).
 */
SYM_FUNC_START(kpb_copy_ldr)
	addi	sp, sp, -16
	sd	a0, 8(sp)
SYM_INNER_LABEL(kpb_copy_ldr_at, SYM_L_GLOBAL)
	ld	a0, 8(sp)
	li	a1, 0
	li	t0, 0
	addi	sp, sp, 16
	ret
SYM_FUNC_END(kpb_copy_ldr)

/*
 * x: an AMO adding 0 to a stack word, copied and never carried out in
 * the handler: stepped when a post_handler runs.
 */
SYM_FUNC_START(kpb_step_amo)
	addi	sp, sp, -16
SYM_INNER_LABEL(kpb_step_amo_at, SYM_L_GLOBAL)
	amoadd.w	zero, zero, (sp)
	li	t0, 0
	addi	sp, sp, 16
	ret
SYM_FUNC_END(kpb_step_amo)

/* x + KPB_BIG: KPB_BIG probe sites of a copied kind, 4 bytes each. */
SYM_FUNC_START(kpb_adds)
SYM_INNER_LABEL(kpb_adds_at, SYM_L_GLOBAL)
	.rept	KPB_BIG
	addi	a0, a0, 1
	.endr
	ret
SYM_FUNC_END(kpb_adds)

/* x: KPB_BIG 4-byte NOPs. */
SYM_FUNC_START(kpb_nops)
SYM_INNER_LABEL(kpb_nops_at, SYM_L_GLOBAL)
	.rept	KPB_BIG
	nop
	.endr
	ret
SYM_FUNC_END(kpb_nops)

/* 2n + 1 instructions, for the check of the virtual clock. */
SYM_FUNC_START(kpb_loop)
1:	addi	a0, a0, -1
	bnez	a0, 1b
	ret
SYM_FUNC_END(kpb_loop)

	.option	pop
