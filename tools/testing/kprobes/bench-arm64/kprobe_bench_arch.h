/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KPROBE_BENCH_ARCH_H
#define _KPROBE_BENCH_ARCH_H

/* Instructions of kpb_adds and of kpb_nops, before their ret. */
#define KPB_BIG		1000

#ifndef __ASSEMBLY__
#include <linux/types.h>

/*
 * kprobe_bench_ARCH_fns.S: the functions, and kpb_*_at, the probed
 * instruction of each (past the function's bti c on arm64).
 */
unsigned long kpb_sim_cbz(unsigned long x);	/* cbz, c.beqz: simulated */
unsigned long kpb_sim_bcond(unsigned long x);	/* b.eq, beq: simulated */
unsigned long kpb_step_add(unsigned long x);	/* add, addi: copied */
unsigned long kpb_copy_ldr(unsigned long x);	/* a load from the stack: copied */
unsigned long kpb_adds(unsigned long x);	/* KPB_BIG 4-byte x += 1 */
unsigned long kpb_nops(unsigned long x);	/* KPB_BIG 4-byte NOPs */
unsigned long kpb_loop(unsigned long n);	/* n x (subs, b.ne), n > 0 */
extern const u32 kpb_sim_cbz_at[], kpb_sim_bcond_at[], kpb_step_add_at[];
extern const u32 kpb_copy_ldr_at[];
extern const u32 kpb_adds_at[], kpb_nops_at[];
#ifdef CONFIG_RISCV
unsigned long kpb_step_amo(unsigned long x);	/* an AMO: copied, stepped */
extern const u32 kpb_step_amo_at[];
#endif
#endif

#endif /* _KPROBE_BENCH_ARCH_H */
