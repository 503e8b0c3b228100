/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The targets of the arm64 kprobes KUnit cases (kunit_cases.c):
 * functions written in assembly in kunit_targets.c, each probed
 * instruction at a global label whose address the cases take.
 */
#ifndef _ARM64_KPROBES_KUNIT_TARGETS_H
#define _ARM64_KPROBES_KUNIT_TARGETS_H

#include <linux/jump_label.h>

/* For the targets written in assembly, here and in the cases. */
#define KPT64_FUNC(name) ".globl " #name "\n.type " #name ", %function\n" \
	".balign 16\n" #name ":\n"
#define KPT64_END(name) ".size " #name ", .-" #name "\n"
#define KPT64_AT(name) ".globl " #name "\n" #name ":\n"

/* Read by the adrp of kpt64_adrp, by name. */
extern u64 kpt64_adrp_data;

#ifdef CONFIG_JUMP_LABEL
/* The key of kpt64_jl's site. */
DECLARE_STATIC_KEY_FALSE(kpt64_jl_key);
#endif

/* The labels of the asm above: the address of an instruction each. */
#define KPT64_INSN(name) extern u32 name[]

KPT64_INSN(kpt64_b_probe);
KPT64_INSN(kpt64_b_to);
KPT64_INSN(kpt64_bl_probe);
KPT64_INSN(kpt64_bcond_probes);
KPT64_INSN(kpt64_bcond_taken);
KPT64_INSN(kpt64_cbz_x_probe);
KPT64_INSN(kpt64_cbz_w_probe);
KPT64_INSN(kpt64_cbnz_x_probe);
KPT64_INSN(kpt64_cbnz_w_probe);
KPT64_INSN(kpt64_tbz_lo_probe);
KPT64_INSN(kpt64_tbz_hi_probe);
KPT64_INSN(kpt64_tbnz_lo_probe);
KPT64_INSN(kpt64_tbnz_hi_probe);
KPT64_INSN(kpt64_adr_probe);
KPT64_INSN(kpt64_adrp_probe);
KPT64_INSN(kpt64_ldr_x_probe);
KPT64_INSN(kpt64_ldr_w_probe);
KPT64_INSN(kpt64_ldrsw_probe);
KPT64_INSN(kpt64_br_probe);
KPT64_INSN(kpt64_br_to);
KPT64_INSN(kpt64_blr_probe);
KPT64_INSN(kpt64_blr_to);
KPT64_INSN(kpt64_ret_probe);
KPT64_INSN(kpt64_ret_x9_probe);
KPT64_INSN(kpt64_add_probe);
KPT64_INSN(kpt64_sub_probe);
KPT64_INSN(kpt64_str_probe);
KPT64_INSN(kpt64_ldr_sp_probe);
KPT64_INSN(kpt64_stp_probe);
KPT64_INSN(kpt64_ldp_probe);
KPT64_INSN(kpt64_mrs_probe);
KPT64_INSN(kpt64_dmb_probe);
KPT64_INSN(kpt64_dsb_probe);
KPT64_INSN(kpt64_isb_probe);
KPT64_INSN(kpt64_nop_probe);
KPT64_INSN(kpt64_ldadd_probe);
KPT64_INSN(kpt64_cas_probe);
KPT64_INSN(kpt64_paciasp_probe);
KPT64_INSN(kpt64_bti_probe);
KPT64_INSN(kpt64_adds_probes);
KPT64_INSN(kpt64_refused_insns);
KPT64_INSN(kpt64_refused_end);
KPT64_INSN(kpt64_excl);
KPT64_INSN(kpt64_excl_end);
KPT64_INSN(kpt64_jl_nop_probe);
KPT64_INSN(kpt64_jl_site);

asmlinkage u64 kpt64_b(void);
asmlinkage u64 kpt64_leaf(u64 x);
asmlinkage u64 kpt64_bl(u64 x);
asmlinkage u64 kpt64_bcond(u64 nzcv, u64 cc);
asmlinkage u64 kpt64_cb(u64 x);
asmlinkage u64 kpt64_tb(u64 x);
asmlinkage u64 kpt64_adr(void);
asmlinkage u64 kpt64_adrp(void);
asmlinkage u64 kpt64_ldr_x(void);
asmlinkage u64 kpt64_ldr_w(void);
asmlinkage u64 kpt64_ldrsw(void);
asmlinkage u64 kpt64_br(void);
asmlinkage u64 kpt64_blr(u64 x);
asmlinkage u64 kpt64_ret(void);
asmlinkage u64 kpt64_ret_x9(void);
asmlinkage u64 kpt64_addsub(u64 x);
asmlinkage u64 kpt64_stack(u64 x);
asmlinkage u64 kpt64_mrs_nzcv(u64 x);
asmlinkage u64 kpt64_barriers(u64 x);
asmlinkage u64 kpt64_ldadd(u64 *p);
asmlinkage u64 kpt64_cas(u64 *p, u64 old, u64 new);
asmlinkage u64 kpt64_pac(u64 x);
asmlinkage u64 kpt64_bti(u64 x);
asmlinkage u64 kpt64_adds(u64 x);
asmlinkage u64 kpt64_jl(u64 x);

#endif /* _ARM64_KPROBES_KUNIT_TARGETS_H */
