// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The targets of the arm64 kprobes KUnit cases: functions written in
 * assembly, one probed instruction kind each (kunit_targets.h names
 * them).
 */

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/jump_label.h>
#include <asm/asm-extable.h>
#include <linux/cpufeature.h>
#include <asm/ptrace.h>

#include "kunit_targets.h"

/*
 * The arm64 targets. Each probed instruction has a global label,
 * kpt64_*_probe, whose address the tests take: no offsets are counted.
 * The functions are called directly, so none starts with a BTI landing
 * pad; the targets of br and blr have one (bti is hint #34/#36, as are
 * paciasp #25 and autiasp #29: the assembler takes hints whatever its
 * -march). Internal branches go to local labels, resolved when
 * assembling: no relocation for the module loader to apply.
 *
 * Functions are 16-byte aligned: an adrp at +0 or +4 is then never at a
 * page offset of 0xff8 or 0xffc, where the module loader may rewrite it
 * (Cortex-A53 erratum 843419).
 */

/* Read by the adrp of kpt64_adrp, by name. */
u64 kpt64_adrp_data;

#ifdef CONFIG_JUMP_LABEL
/* The key of kpt64_jl's site, named by its __jump_table entry. */
DEFINE_STATIC_KEY_FALSE(kpt64_jl_key);
#endif

asm(".pushsection .text, \"ax\"\n"

	/* b, simulated: returns 2 if the branch was taken */
	KPT64_FUNC(kpt64_b)
	KPT64_AT(kpt64_b_probe)
	"	b	1f\n"
	"	mov	x0, #1\n"
	"	ret\n"
	KPT64_AT(kpt64_b_to)
	"1:	mov	x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_b)

	/* The callee of kpt64_bl: x + 1 */
	KPT64_FUNC(kpt64_leaf)
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_leaf)

	/* bl, simulated: x30 must be the bl's address + 4 for the callee to return */
	KPT64_FUNC(kpt64_bl)
	"	stp	x29, x30, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	KPT64_AT(kpt64_bl_probe)
	"	bl	kpt64_leaf\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	ret\n"
	KPT64_END(kpt64_bl)

	/*
	 * b.cond, simulated: kpt64_bcond(nzcv, cc) sets the flags from nzcv
	 * (bits 31:28), runs the b.<cc> at kpt64_bcond_probes + 8 * cc (the
	 * conditions in their encoding's order, eq to le) and returns 1 if it
	 * branched. The way there is a chain of cbz: no indirect branch, and
	 * nothing between that touches the flags.
	 */
	KPT64_FUNC(kpt64_bcond)
	"	mov	x2, x1\n"
	"	msr	nzcv, x0\n"
	"	mov	x0, #0\n"
	"	.irp	i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13\n"
	"	cbz	x2, 2f + 8 * \\i\n"
	"	sub	x2, x2, #1\n"
	"	.endr\n"
	"	ret\n"
	KPT64_AT(kpt64_bcond_probes)
	"2:\n"
	"	.irp	cond, eq, ne, hs, lo, mi, pl, vs, vc, hi, ls, ge, lt, gt, le\n"
	"	b.\\cond	1f\n"
	"	ret\n"
	"	.endr\n"
	KPT64_AT(kpt64_bcond_taken)
	"1:	mov	x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_bcond)

	/*
	 * cbz/cbnz on x1 and w1, simulated: each jumps over one orr, which
	 * sets bit n of the result when branch n is not taken.
	 */
	KPT64_FUNC(kpt64_cb)
	"	mov	x1, x0\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_cbz_x_probe)
	"	cbz	x1, 1f\n"
	"	orr	x0, x0, #1\n"
	KPT64_AT(kpt64_cbz_w_probe)
	"1:	cbz	w1, 2f\n"
	"	orr	x0, x0, #2\n"
	KPT64_AT(kpt64_cbnz_x_probe)
	"2:	cbnz	x1, 3f\n"
	"	orr	x0, x0, #4\n"
	KPT64_AT(kpt64_cbnz_w_probe)
	"3:	cbnz	w1, 4f\n"
	"	orr	x0, x0, #8\n"
	"4:	ret\n"
	KPT64_END(kpt64_cb)

	/* tbz/tbnz on bits 3 and 40, simulated: as kpt64_cb, one orr each */
	KPT64_FUNC(kpt64_tb)
	"	mov	x1, x0\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_tbz_lo_probe)
	"	tbz	x1, #3, 1f\n"
	"	orr	x0, x0, #1\n"
	KPT64_AT(kpt64_tbz_hi_probe)
	"1:	tbz	x1, #40, 2f\n"
	"	orr	x0, x0, #2\n"
	KPT64_AT(kpt64_tbnz_lo_probe)
	"2:	tbnz	x1, #3, 3f\n"
	"	orr	x0, x0, #4\n"
	KPT64_AT(kpt64_tbnz_hi_probe)
	"3:	tbnz	x1, #40, 4f\n"
	"	orr	x0, x0, #8\n"
	"4:	ret\n"
	KPT64_END(kpt64_tb)

	/* adr, simulated: a negative offset; returns the address of kpt64_adr */
	KPT64_FUNC(kpt64_adr)
	"	nop\n"
	KPT64_AT(kpt64_adr_probe)
	"	adr	x0, . - 4\n"
	"	ret\n"
	KPT64_END(kpt64_adr)

	/* adrp, simulated: returns the 4K page of kpt64_adrp_data */
	KPT64_FUNC(kpt64_adrp)
	KPT64_AT(kpt64_adrp_probe)
	"	adrp	x0, kpt64_adrp_data\n"
	"	ret\n"
	KPT64_END(kpt64_adrp)

	/* ldr x, literal, simulated: returns the doubleword after the ret */
	KPT64_FUNC(kpt64_ldr_x)
	KPT64_AT(kpt64_ldr_x_probe)
	"	ldr	x0, 1f\n"
	"	ret\n"
	"	.balign	8\n"
	"1:	.quad	0x0123456789abcdef\n"
	KPT64_END(kpt64_ldr_x)

	/* ldr w, literal, simulated: x0 was all ones, the load zero-extends */
	KPT64_FUNC(kpt64_ldr_w)
	"	mov	x0, #-1\n"
	KPT64_AT(kpt64_ldr_w_probe)
	"	ldr	w0, 1f\n"
	"	ret\n"
	"1:	.word	0x87654321\n"
	KPT64_END(kpt64_ldr_w)

	/* ldrsw literal, simulated: a negative word, sign-extended */
	KPT64_FUNC(kpt64_ldrsw)
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_ldrsw_probe)
	"	ldrsw	x0, 1f\n"
	"	ret\n"
	"1:	.word	0x89abcdef\n"
	KPT64_END(kpt64_ldrsw)

	/* br x16, simulated: returns 5 from its target, a bti j (hint #36) */
	KPT64_FUNC(kpt64_br)
	"	adr	x16, 1f\n"
	"	mov	x0, #0\n"
	KPT64_AT(kpt64_br_probe)
	"	br	x16\n"
	"	ret\n"
	KPT64_AT(kpt64_br_to)
	"1:	hint	#36\n"
	"	mov	x0, #5\n"
	"	ret\n"
	KPT64_END(kpt64_br)

	/*
	 * blr x9, simulated: its target, a bti c (hint #34), adds 1 and
	 * returns through x30, which must be the blr's address + 4.
	 */
	KPT64_FUNC(kpt64_blr)
	"	stp	x29, x30, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	"	adr	x9, 1f\n"
	KPT64_AT(kpt64_blr_probe)
	"	blr	x9\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	ret\n"
	KPT64_AT(kpt64_blr_to)
	"1:	hint	#34\n"
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_blr)

	/* ret, simulated: returns 7 */
	KPT64_FUNC(kpt64_ret)
	"	mov	x0, #7\n"
	KPT64_AT(kpt64_ret_probe)
	"	ret\n"
	KPT64_END(kpt64_ret)

	/*
	 * ret x9, simulated: returns 8 through x9; x30 points at a decoy that
	 * returns 0, should the return go through x30 instead.
	 */
	KPT64_FUNC(kpt64_ret_x9)
	"	mov	x0, #8\n"
	"	mov	x9, x30\n"
	"	adr	x30, 1f\n"
	KPT64_AT(kpt64_ret_x9_probe)
	"	ret	x9\n"
	"1:	mov	x0, #0\n"
	"	ret	x9\n"
	KPT64_END(kpt64_ret_x9)

	/* add and sub, stepped: x + 3 */
	KPT64_FUNC(kpt64_addsub)
	KPT64_AT(kpt64_add_probe)
	"	add	x0, x0, #5\n"
	KPT64_AT(kpt64_sub_probe)
	"	sub	x0, x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_addsub)

	/*
	 * Stack accesses, stepped: str and ldr at [sp, #8], stp pre-index and
	 * ldp post-index on sp. Returns 2 * x + 1, plus how far sp moved
	 * (nothing, when all is well).
	 */
	KPT64_FUNC(kpt64_stack)
	"	mov	x3, sp\n"
	"	sub	sp, sp, #16\n"
	KPT64_AT(kpt64_str_probe)
	"	str	x0, [sp, #8]\n"
	KPT64_AT(kpt64_ldr_sp_probe)
	"	ldr	x1, [sp, #8]\n"
	"	add	sp, sp, #16\n"
	"	add	x2, x1, #1\n"
	KPT64_AT(kpt64_stp_probe)
	"	stp	x1, x2, [sp, #-16]!\n"
	"	mov	x1, #0\n"
	"	mov	x2, #0\n"
	KPT64_AT(kpt64_ldp_probe)
	"	ldp	x1, x2, [sp], #16\n"
	"	add	x0, x1, x2\n"
	"	mov	x4, sp\n"
	"	sub	x4, x4, x3\n"
	"	add	x0, x0, x4\n"
	"	ret\n"
	KPT64_END(kpt64_stack)

	/* mrs nzcv, stepped: returns the flags it was given (bits 31:28 of x) */
	KPT64_FUNC(kpt64_mrs_nzcv)
	"	msr	nzcv, x0\n"
	KPT64_AT(kpt64_mrs_probe)
	"	mrs	x0, nzcv\n"
	"	ret\n"
	KPT64_END(kpt64_mrs_nzcv)

	/* dmb, dsb, isb, nop, stepped: x + 1 */
	KPT64_FUNC(kpt64_barriers)
	KPT64_AT(kpt64_dmb_probe)
	"	dmb	ish\n"
	KPT64_AT(kpt64_dsb_probe)
	"	dsb	sy\n"
	KPT64_AT(kpt64_isb_probe)
	"	isb\n"
	KPT64_AT(kpt64_nop_probe)
	"	nop\n"
	"	add	x0, x0, #1\n"
	"	ret\n"
	KPT64_END(kpt64_barriers)

	/* LSE atomics, stepped; only called where the CPUs have them */
	"	.arch_extension lse\n"
	/* ldadd: *p += 5, returns the old *p */
	KPT64_FUNC(kpt64_ldadd)
	"	mov	x1, #5\n"
	KPT64_AT(kpt64_ldadd_probe)
	"	ldadd	x1, x2, [x0]\n"
	"	mov	x0, x2\n"
	"	ret\n"
	KPT64_END(kpt64_ldadd)

	/* cas: *p = new if *p == old; returns the old *p */
	KPT64_FUNC(kpt64_cas)
	KPT64_AT(kpt64_cas_probe)
	"	cas	x1, x2, [x0]\n"
	"	mov	x0, x1\n"
	"	ret\n"
	KPT64_END(kpt64_cas)

	/*
	 * paciasp at +0, stepped, and autiasp before the ret: x + 1. With
	 * pointer authentication on, autiasp fails unless x30 and sp are what
	 * paciasp saw (a kretprobe's entry probe sits on the paciasp too).
	 */
	KPT64_FUNC(kpt64_pac)
	KPT64_AT(kpt64_paciasp_probe)
	"	hint	#25\n"
	"	add	x0, x0, #1\n"
	"	hint	#29\n"
	"	ret\n"
	KPT64_END(kpt64_pac)

	/* bti c, stepped (a nop when not a branch's target): x + 2 */
	KPT64_FUNC(kpt64_bti)
	KPT64_AT(kpt64_bti_probe)
	"	hint	#34\n"
	"	add	x0, x0, #2\n"
	"	ret\n"
	KPT64_END(kpt64_bti)

	/* 32 adds of 1, one probe on each: x + 32 */
	KPT64_FUNC(kpt64_adds)
	KPT64_AT(kpt64_adds_probes)
	"	.rept	32\n"
	"	add	x0, x0, #1\n"
	"	.endr\n"
	"	ret\n"
	KPT64_END(kpt64_adds)

	/*
	 * Instructions no probe may go on, one after another from
	 * kpt64_refused_insns to kpt64_refused_end. Never called, and behind
	 * a ret besides: none of them ever runs.
	 */
	KPT64_FUNC(kpt64_refused)
	"0:	ret\n"
	KPT64_AT(kpt64_refused_insns)
	"	brk	#0x123\n"
	"	svc	#0\n"
	"	hvc	#0\n"
	"	eret\n"
	"	msr	daifset, #2\n"
	"	msr	tpidr_el0, x0\n"
	"	mrs	x0, daif\n"
	"	wfi\n"
	"	wfe\n"
	"	yield\n"
	"	hint	#29\n"			/* autiasp */
	"	.inst	0xd65f0bff\n"		/* retaa */
	"	prfm	pldl1keep, 1f\n"
	/*
	 * Literal loads into SIMD&FP registers: the tree's kprobes.c takes
	 * them for steppable and runs them out of line, where the literal's
	 * pc-relative address is the slot's: they load from the wrong place.
	 */
	"	ldr	q0, 1f\n"
	"	ldr	d0, 1f\n"
	"	ldr	s0, 1f\n"
	/* A load with an exception-table entry (its fixup is never used) */
	"2:	ldr	x1, [x0]\n"
	_ASM_EXTABLE_KACCESS(2b, 0b)
	KPT64_AT(kpt64_refused_end)
	"	.balign	16\n"
	"1:	.quad	0, 0\n"
	KPT64_END(kpt64_refused)

	/*
	 * An exclusive load/store pair and an add between: a breakpoint in
	 * the window clears the monitor, and the store would fail for ever.
	 * Never called: every instruction up to kpt64_excl_end is refused.
	 */
	KPT64_FUNC(kpt64_excl)
	"	ldxr	x1, [x0]\n"
	"	add	x1, x1, #1\n"
	"	stxr	w2, x1, [x0]\n"
	KPT64_AT(kpt64_excl_end)
	"	ret\n"
	KPT64_END(kpt64_excl)

#ifdef CONFIG_JUMP_LABEL
	/*
	 * A jump label site, listed in __jump_table as arm64's
	 * arch_static_branch() lists one, after a plain nop: x while
	 * kpt64_jl_key is off, x + 1 once it is on and the site a b.
	 */
	KPT64_FUNC(kpt64_jl)
	"	mov	x1, x0\n"
	KPT64_AT(kpt64_jl_nop_probe)
	"	nop\n"
	KPT64_AT(kpt64_jl_site)
	"1:	nop\n"
	"	mov	x0, x1\n"
	"	ret\n"
	"2:	add	x0, x1, #1\n"
	"	ret\n"
	KPT64_END(kpt64_jl)
	".pushsection __jump_table, \"aw\"\n"
	".balign 8\n"
	".long 1b - ., 2b - .\n"
	".quad kpt64_jl_key - .\n"
	".popsection\n"
#endif

	".popsection\n"
);
