/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kprobes_selftests.c shares with the files that hold an arch's own
 * cases (kprobes_selftests_x86.c): the paths, the helpers and the
 * results' bookkeeping. kprobes_selftests.c defines them and says what
 * each does.
 */
#ifndef KPROBES_SELFTESTS_H
#define KPROBES_SELFTESTS_H

#include <stddef.h>

#define D "/sys/kernel/debug/kprobes"
#define T "/sys/kernel/tracing"
#define M "/lib/modules/kprobes"
#define OPT_SYSCTL "/proc/sys/debug/kprobes-optimization"

/* Where a probe on symbol+0 goes; what the kernel has. */
extern unsigned long entry_off;
extern int have_modules, have_events;

int contains(const char *path, const char *what);
int count_log(const char *what);
char *kernel_log(void);
long event_hits(const char *name);
int event_off(const char *name);
int event_on(const char *name, const char *where);
void fork_some(int n);
int insmod(const char *name, const char *params);
unsigned long kallsyms_addr(const char *sym);
int lines_with(const char *path, const char *a, const char *b);
void note(const char *fmt, ...);
double now(void);
int put(const char *path, const char *s, int append);
int query(const char *point, char *buf, size_t size);
int query_says(const char *point, const char *line);
void report(const char *name, int res);
int rmmod(const char *name);
char *slurp(const char *path);
int step(int ok, const char *what);
int t_list_empty(void);

/* x86-64's own cases (kprobes_selftests_x86.c). */
void x86_selftests(void);
int t_ftrace_killed(void);

#endif
