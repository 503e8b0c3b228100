// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_bench_fns: BENCH_ENTRY_FNS small C functions, each with an
 * ftrace site at its entry where the kernel has them, for kprobe_bench's
 * layouts of probes at many function entries. A module of their own:
 * module kallsyms lookups walk a module's symbols one by one, and ten
 * thousand more in kprobe_bench would weigh on its other layouts.
 */

#include <linux/module.h>
#include "kprobe_bench_fns.h"

/*
 * Each adds its own constant: functions with identical bodies could be
 * folded into one by the compiler.
 */
#define BENCH_ENTRY_FN(n)						\
	static noinline unsigned long bench_entry##n(unsigned long x)	\
	{								\
		asm volatile("" : "+r" (x));				\
		return x + __COUNTER__;					\
	}
#define BENCH_ENTRY_PTR(n)	bench_entry##n,

#define REP10(M, p)	M(p##0) M(p##1) M(p##2) M(p##3) M(p##4)	\
			M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define REP100(M, p)	REP10(M, p##0) REP10(M, p##1) REP10(M, p##2)	\
			REP10(M, p##3) REP10(M, p##4) REP10(M, p##5)	\
			REP10(M, p##6) REP10(M, p##7) REP10(M, p##8)	\
			REP10(M, p##9)
#define REP1000(M, p)	REP100(M, p##0) REP100(M, p##1) REP100(M, p##2) \
			REP100(M, p##3) REP100(M, p##4) REP100(M, p##5) \
			REP100(M, p##6) REP100(M, p##7) REP100(M, p##8) \
			REP100(M, p##9)
#define REP10000(M, p)	REP1000(M, p##0) REP1000(M, p##1) REP1000(M, p##2) \
			REP1000(M, p##3) REP1000(M, p##4) REP1000(M, p##5) \
			REP1000(M, p##6) REP1000(M, p##7) REP1000(M, p##8) \
			REP1000(M, p##9)

REP10000(BENCH_ENTRY_FN, _)

bench_fn_t bench_entry_fns[BENCH_ENTRY_FNS] = {
	REP10000(BENCH_ENTRY_PTR, _)
};
EXPORT_SYMBOL_GPL(bench_entry_fns);

MODULE_DESCRIPTION("kprobes benchmark: functions to probe at their entries");
MODULE_LICENSE("GPL");
