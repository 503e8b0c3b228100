/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The targets of the riscv kprobes KUnit cases (kunit_cases.c): functions
 * written in assembly in kunit_targets.c, and pointers to the probed
 * instructions in them.
 */
#ifndef _RISCV_KPROBES_KUNIT_TARGETS_H
#define _RISCV_KPROBES_KUNIT_TARGETS_H

#include <linux/types.h>

u64 kptrv_addi(u64 x);
u64 kptrv_cmv(u64 x);
u64 kptrv_frame(u64 x);
u64 kptrv_tlive(u64 x, u64 sel);
u64 kptrv_tcall(u64 x);
u64 kptrv_backjump(u64 x);
u64 kptrv_loop(u64 x);
u64 kptrv_alu(u64 x, u64 y);
u64 kptrv_mem(u64 x, u64 *buf);
u32 kptrv_lrsc(u32 *word, u32 add);
u64 kptrv_nofree(u64 x);
u64 kptrv_fixup(u64 x, u64 *p);
u64 kptrv_beq(u64 x);
u64 kptrv_cbeqz(u64 x);
u64 kptrv_auipc(void);
u64 kptrv_jal(u64 x);
u64 kptrv_leaf(u64 x);
u64 kptrv_adds(u64 x);
u64 kptrv_refused(u64 x);
u64 kptrv_opt(u64 x);
u64 kptrv_opt10(u64 x);
u64 kptrv_entered(u64 x, u64 n);
u64 kptrv_rafree(u64 x);
u64 kptrv_s1free(u64 x);
u64 kptrv_optbr(u64 x);
u64 kptrv_optcbr(u64 x);
u64 kptrv_optauipc(void);
u64 kptrv_optj(u64 x);
u64 kptrv_optret(u64 x);
u64 kptrv_optext(u64 x);
u64 kptrv_retfree(u64 x);
u64 kptrv_callfree(u64 x);
u64 kptrv_jlinto(u64 x);

/* Traced functions, their ftrace call site at the symbol (ftrace entries). */
u64 kptrv_traced8(u64 a, u64 b, u64 c, u64 d, u64 e, u64 f, u64 g, u64 h);
u64 kptrv_traced1(u64 a);
/* fn(arg) with s0 and s1-s11 set to known values; returns s1 after it. */
u64 kptrv_call_saving(u64 (*fn)(u64), u64 arg);
/* A direct trampoline for a traced function, and how often it ran. */
void kptrv_direct_tramp(void);
extern u64 kptrv_direct_runs;

/* Where the probed instructions are, one pointer each (KPTRV_AT()). */
extern u16 *const kptrv_addi_probe, *const kptrv_cmv_probe, *const kptrv_caddi_probe,
	*const kptrv_frame_addi_probe, *const kptrv_frame_sd_probe,
	*const kptrv_frame_csdsp_probe, *const kptrv_frame_cldsp_probe,
	*const kptrv_tlive_probe, *const kptrv_nofree_probe, *const kptrv_beq_probe,
	*const kptrv_beq_to, *const kptrv_cbeqz_probe, *const kptrv_cj_probe,
	*const kptrv_auipc_probe, *const kptrv_jal_probe, *const kptrv_ret_probe,
	*const kptrv_adds_probes, *const kptrv_ebreak_probe, *const kptrv_cebreak_probe,
	*const kptrv_csr_probe, *const kptrv_fence_probe, *const kptrv_tcall_probe,
	*const kptrv_backjump_probe, *const kptrv_loop_probe, *const kptrv_lrsc_lr,
	*const kptrv_alu_first, *const kptrv_alu_ret, *const kptrv_mem_first,
	*const kptrv_mem_ret,
	*const kptrv_lrsc_add, *const kptrv_lrsc_sc, *const kptrv_lrsc_bnez,
	*const kptrv_fixup_probe,
	*const kptrv_opt_probe, *const kptrv_opt10_probe, *const kptrv_opt10_inside,
	*const kptrv_entered_probe, *const kptrv_rafree_probe, *const kptrv_s1free_probe,
	*const kptrv_optbr_probe, *const kptrv_optcbr_probe, *const kptrv_optauipc_probe,
	*const kptrv_optj_probe, *const kptrv_optret_probe, *const kptrv_optext_probe,
	*const kptrv_optext_after, *const kptrv_retfree_probe, *const kptrv_callfree_probe,
	*const kptrv_jlinto_probe;

#endif /* _RISCV_KPROBES_KUNIT_TARGETS_H */
