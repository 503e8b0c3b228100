/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions kprobe_bench_arm64 probes, in assembly so that the kind
 * of each probed instruction is exact. In 6.12 SYM_FUNC_START() puts a
 * BTI landing pad (bti c) first whatever the configuration, so each
 * probed instruction has a label of its own: kpb_*_at.
 */
#include <linux/linkage.h>
#include "kprobe_bench_arch.h"

	.text

/* x ? x + 1 : x; the cbz is simulated. */
SYM_FUNC_START(kpb_sim_cbz)
	mov	x1, x0
SYM_INNER_LABEL(kpb_sim_cbz_at, SYM_L_GLOBAL)
	cbz	x1, 1f
	add	x0, x0, #1
1:	ret
SYM_FUNC_END(kpb_sim_cbz)

/* x ? x + 1 : x; the b.eq is simulated. */
SYM_FUNC_START(kpb_sim_bcond)
	cmp	x0, #0
SYM_INNER_LABEL(kpb_sim_bcond_at, SYM_L_GLOBAL)
	b.eq	1f
	add	x0, x0, #1
1:	ret
SYM_FUNC_END(kpb_sim_bcond)

/* x + 1; the add runs out of line (stepped, or boosted by ours). */
SYM_FUNC_START(kpb_step_add)
	mov	x1, x0
SYM_INNER_LABEL(kpb_step_add_at, SYM_L_GLOBAL)
	add	x0, x1, #1
	ret
SYM_FUNC_END(kpb_step_add)

/* x, through the stack; the ldr runs out of line. */
SYM_FUNC_START(kpb_copy_ldr)
	stp	x0, x0, [sp, #-16]!
SYM_INNER_LABEL(kpb_copy_ldr_at, SYM_L_GLOBAL)
	ldr	x0, [sp, #8]
	add	sp, sp, #16
	ret
SYM_FUNC_END(kpb_copy_ldr)

/* x + KPB_BIG: KPB_BIG probe sites of a stepped kind. */
SYM_FUNC_START(kpb_adds)
SYM_INNER_LABEL(kpb_adds_at, SYM_L_GLOBAL)
	.rept	KPB_BIG
	add	x0, x0, #1
	.endr
	ret
SYM_FUNC_END(kpb_adds)

/* x: KPB_BIG NOPs, which may become a BRK under a running CPU. */
SYM_FUNC_START(kpb_nops)
SYM_INNER_LABEL(kpb_nops_at, SYM_L_GLOBAL)
	.rept	KPB_BIG
	nop
	.endr
	ret
SYM_FUNC_END(kpb_nops)

/* 2n + 1 instructions, for the check of the virtual clock. */
SYM_FUNC_START(kpb_loop)
1:	subs	x0, x0, #1
	b.ne	1b
	ret
SYM_FUNC_END(kpb_loop)
