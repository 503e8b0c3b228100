/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KPROBE_BENCH_FNS_H
#define KPROBE_BENCH_FNS_H

#define BENCH_ENTRY_FNS	10000

typedef unsigned long (*bench_fn_t)(unsigned long);
extern bench_fn_t bench_entry_fns[BENCH_ENTRY_FNS];

#endif
