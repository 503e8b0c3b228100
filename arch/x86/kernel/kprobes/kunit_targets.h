/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The targets of the x86-64 kprobes KUnit cases (kunit_cases.c): functions
 * written in assembly in kunit_targets.c, so that the probed instruction
 * is known exactly, and the C functions and data they use. Each comment
 * gives what a function returns and where the instruction of interest
 * is, as an offset from the function's start.
 */
#ifndef _X86_KPROBES_KUNIT_TARGETS_H
#define _X86_KPROBES_KUNIT_TARGETS_H

#include <linux/jump_label.h>

/* Read by kpt_rip_load(); called through by kpt_callmem(). */
typedef unsigned long (*kpt_fn_t)(void);
extern unsigned long kpt_rip_data;
extern kpt_fn_t kpt_fnptr;

/* Called through a pointer, from kpt_opt_callmem() and kpt_opt_tailind(). */
unsigned long kpt_c_add1(unsigned long x);

/*
 * Sites the kernel lists in tables: a static call (kpt_static_call_fn:
 * 2 * (v + 1)), a static call to "return 0" (kpt_sc_ret0_fn: v), a
 * WARN's ud2 (kpt_warn_fn: v + 1).
 */
int kpt_static_call_fn(int v);
int kpt_sc_ret0_fn(int v);
u32 kpt_warn_fn(u32 v);

unsigned long kpt_rip_load(void);	/* movq kpt_rip_data(%rip), %rax at +0 */
unsigned long kpt_leaf(void);		/* returns 42 */
unsigned long kpt_call(void);		/* call kpt_leaf at +0; returns 43 */
unsigned long kpt_jmp(void);		/* jmp at +0; returns 2 */
unsigned long kpt_jcc(unsigned long x);	/* jz at +2; 20 for 0, else 10 */
unsigned long kpt_ret(void);		/* mov at +0, ret at +5; returns 7 */
unsigned long kpt_ret_alt(void);	/* returns 9 */
unsigned long kpt_pushpop(unsigned long x); /* push at +0, pop at +8; x + 1 */
unsigned long kpt_loop(unsigned long n);	/* loop at +7; returns n */
unsigned long kpt_callind(unsigned long (*fn)(void)); /* call *%rax at +3 */
unsigned long kpt_callmem(void);	/* call *kpt_fnptr(%rip) at +0 */
unsigned long kpt_pushf(void);		/* pushf at +0; returns the flags */
unsigned long kpt_fault_load(unsigned long addr); /* load at +7, fixup */
/*
 * Instructions no probe may be put on: int3 +0, ud2 +1, hlt +3, iretq +4,
 * syscall +6, sysretq +8, lret +11, int $0x80 +12. Never called; objtool
 * is told not to follow it.
 */
void kpt_unsupported(void);
unsigned long kpt_opt(unsigned long x);	/* x + 6; optimizable at +0, covers +3 */
/* x + 1; inc at +3 boostable, not optimizable (the region would run past the end) */
unsigned long kpt_inc(unsigned long x);
/*
 * Regions with a branch, which the detour rewrites (see arch/x86/kernel/kprobes/optimize.c):
 * kpt_opt_jcc: x ? x + 3 : 7; test at +0, jz at +2, lea at +4, ret at +8.
 * kpt_opt_call: 2 * x + 1; push, mov, then a call of kpt_add1 at +4.
 * kpt_opt_tail: x + 3; lea at +0, then a jump to kpt_add1 at +4, the end.
 * kpt_opt_ret: (u32)x + 1; mov at +0, inc at +2, ret at +4, the end.
 */
unsigned long kpt_add1(unsigned long x);
unsigned long kpt_opt_jcc(unsigned long x);
unsigned long kpt_opt_call(unsigned long x);
unsigned long kpt_opt_tail(unsigned long x);
unsigned long kpt_opt_ret(unsigned long x);
/*
 * kpt_opt_callmem: 2 * x + 1; push, mov, then call *kpt_add1_ptr(%rip)
 * at +4. kpt_opt_tailind: x + 3; mov at +0, add at +3, then
 * jmp *kpt_add1_ptr(%rip) at +7, the end.
 */
unsigned long kpt_opt_callmem(unsigned long x);
unsigned long kpt_opt_tailind(unsigned long x);
/*
 * Padding after the last instruction that runs, as alternatives leave
 * it: kpt_opt_retpad: (u32)x + 1; inc at +0, then "ret; int3; int3; int3"
 * at +2. kpt_opt_callpad: fn(x); push at +0, call *%rsi at +1, then a
 * three-byte nop that the call returns to.
 */
unsigned long kpt_opt_retpad(unsigned long x);
unsigned long kpt_opt_callpad(unsigned long x, unsigned long (*fn)(unsigned long));

/* What kpt_opt_many() is made of, and returns. */
#define OPT_BATCH 320
#define OPT_MANY_SUM (OPT_BATCH * 1000UL)

/*
 * OPT_BATCH five-byte adds from +2; returns OPT_MANY_SUM. More than the
 * one chunk (RETIRE_CHUNK, 256) unregistering surely retires itself:
 * built in, while the kernel boots, the rest is retire_work's; later,
 * unregistering goes on while its grace period lasts.
 */
unsigned long kpt_opt_many(void);
unsigned long kpt_forbidden(void);	/* NOKPROBE; kpt_forbidden.cold etc. beside it */
unsigned long kpt_allowed(void);	/* kpt_allowed.cold beside it */
unsigned long kpt_cpuid(void);		/* cpuid at +5 (0f a2): never boosted */
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
/* x ? kpt_static_call(x) : 0, the call a Jcc tail call at +2 (6 bytes) */
int kpt_sc_jcc(int x);
#endif
unsigned long kpt_ex_in(unsigned long *p);	/* *p + 1; load at +0 has a fixup */
/* load_unaligned_zeropad(p): the load at +0 has an EX_TYPE_ZEROPAD fixup */
unsigned long kpt_zeropad(const void *p);
/* x + 5; optimizable at +0; a load at +7 whose fixup is past the region */
unsigned long kpt_ex_out(unsigned long x, unsigned long *p);
/* x + 6 (x < 0: far jump); optimizable at +5, but for the far jump */
unsigned long kpt_farjmp(long x);
/* x + 5 inside stac/clac (with SMAP): the mov at +3 is optimizable */
unsigned long kpt_uaccess(unsigned long x);
/* 1: vmxoff at +5 raises #UD outside VMX operation; its fixup skips a xor */
unsigned long kpt_vmxoff(void);
/* *p: the load at +0 has an EX_TYPE_DEFAULT_MCE_SAFE fixup, as copy_mc's */
unsigned long kpt_mcsafe(unsigned long *p);
/* 6: mov at +0, an int3 at +5 that a die notifier of the tests owns, add */
unsigned long kpt_foreign_int3(void);
/* ++*p with a lock prefix at +0 (listed in .smp_locks), then *p */
unsigned long kpt_lock_inc(unsigned long *p);
#ifdef CONFIG_JUMP_LABEL
/*
 * x (x + 1 while kpt_jl_key is on): mov at +0, then a jump label site
 * (a nop5, or a jmp to the add) at +3 that a jump at +0 would cover.
 */
unsigned long kpt_jl(unsigned long x);
/*
 * x (x + 1 while kpt_jl_into_key is on): mov at +0, a jump label site
 * at +3 whose jump lands at +12, inside the region of a jump at +8 (sub,
 * add).
 */
unsigned long kpt_jl_into(unsigned long x);
/*
 * fn(x) (fn(x) + 1 while kpt_jl_call_key is on): push at +0, call *%rsi
 * at +1, then a jump label site, a nop5 that must not pass for padding.
 */
unsigned long kpt_jl_call(unsigned long x, unsigned long (*fn)(unsigned long));
#endif

#ifdef CONFIG_JUMP_LABEL
DECLARE_STATIC_KEY_FALSE(kpt_jl_key);
DECLARE_STATIC_KEY_FALSE(kpt_jl_into_key);
DECLARE_STATIC_KEY_FALSE(kpt_jl_call_key);
#endif

#endif /* _X86_KPROBES_KUNIT_TARGETS_H */
