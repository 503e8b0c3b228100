// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_clients: what attaching and detaching kprobes costs when it is
 * done the way real clients (bpftrace and libbpf, perf, pwru, Tetragon)
 * do it: one event at a time, each on a function of its own, opened one
 * after the other and then closed one after the other. guest/bench runs
 * it on both make bench kernels (x86-64), bench-arm64/init.c on both
 * make bench-arm64 kernels; bench-report.py and bench-arm64-report.py
 * compare them (the tables are bench_clients.py's). One source for both
 * architectures: the cycle counter and the size of the ftrace site are
 * each's (#if __x86_64__ / __aarch64__ below).
 *
 * Usage: kprobe_clients [--avoid SYM+COUNT[,...]] [--only EXP[,...]] [--from K]
 *        SIZES [REPS [BUDGET]]
 *   SIZES   comma-separated numbers N of events (distinct functions)
 *   REPS    repetitions of every measurement (default 3)
 *   BUDGET  seconds (virtual): a repetition after the first starts only
 *           if it should end within this time from the start, judging by
 *           the last one (default 1500); the first always runs whole
 *   --avoid functions probed earlier in the boot, left out: the COUNT
 *           text symbols from SYM on, in kallsyms' address order (what
 *           make bench-arm64's module walks before the clients run; the
 *           functions of guest/bench's coverage run, SYM+1 each)
 *   --only  the experiments to run (names below); the others print
 *           BENCH-SKIP and take no functions
 *   --from  start at the K-th candidate of the list (below), as if the
 *           ones before were used: another layout of the same
 *           experiments (K = the number of cold functions puts them on
 *           the others)
 * kprobe_clients [--avoid ...] --list N prints the first N functions it
 * would try, with their body offsets, and probes nothing.
 * kprobe_clients --hit FUNC FILE measures a hit instead, on CPU 0: FILE
 * (kprobe_bench_gp's) reads as a call of FUNC costs; it is read unprobed,
 * with a perf kprobe event at FUNC's entry, and with the BPF program on
 * that event, and printed as "BENCH hit_perf_entry_base/_event/_bpf N".
 *
 * Experiments, each repeated as: attach N events, then detach them.
 *   perf_entry              the perf kprobe PMU (perf_event_open() with
 *                           the PMU's type, config1 = the function's
 *                           name, config2 = the offset) at the entries
 *                           of N functions (ftrace sites), no BPF
 *   perf_entry_bpf          each with a BPF program ("r0 = 0; exit"),
 *                           attached with PERF_EVENT_IOC_SET_BPF
 *   perf_entry_link         the program attached through a BPF link
 *                           (BPF_LINK_CREATE, BPF_PERF_EVENT), as libbpf
 *                           does; the link closed, then the event
 *   perf_entry_bpf_threads  perf_entry_bpf, the events closed by four
 *                           threads at once, N/4 each
 *   perf_kret, perf_kret_bpf  kretprobes (the PMU's retprobe bit) there
 *   perf_body, perf_body_bpf, perf_body_bpf_threads
 *                           N functions at the instruction after their
 *                           ftrace site (a breakpoint, optimized or not:
 *                           the kernel decides)
 *   events_remove           tracefs kprobe_events: N "p:kpbench/fK FUNC"
 *                           lines written one at a time, then N
 *                           "-:kpbench/fK" lines, one at a time
 *   events_clear            N such lines, then one truncating open
 *                           (echo > kprobe_events)
 *   events_enable           N such lines, each enabled (its
 *                           events/kpbench/fK/enable written 1) right
 *                           after it is written, as perf probe and
 *                           trace-cmd users do; then each disabled and
 *                           removed, one at a time
 *   perf_floor              no kprobe: N perf events on one tracepoint
 *                           (sched/sched_process_exec, which the run
 *                           never hits), opened, enabled, disabled and
 *                           closed as the PMU ones are: what perf itself
 *                           costs per event at that N (perf_event_open,
 *                           installing the event in CPU 0's context,
 *                           which reschedules the events already there),
 *                           the same on both kernels; takes no function
 *   multi_entry             not one at a time: one BPF kprobe_multi link
 *                           (BPF_LINK_CREATE, BPF_TRACE_KPROBE_MULTI, by
 *                           name) over N functions, then the link
 *                           closed: what the batched interface costs per
 *                           function, for comparison (needs fprobe,
 *                           which arm64 6.12 lacks: BENCH-SKIP there)
 * Every repetition runs every experiment for every N before the next
 * one starts, so that slow drifts spread over all of them alike.
 *
 * Fresh functions: every measurement (experiment x N x repetition) takes
 * its functions from one cursor into the list of candidates, which only
 * moves forward: no function is attached by two measurements, as a
 * client attaching new functions would find them. (A detached entry's
 * ip may stay in our kprobes' ftrace filter for a while, so attaching it
 * again would be nearly free.) The functions the kernel refuses, and
 * those a body experiment skips for want of a body offset, are used up
 * too. The list's order is fixed (the cold subsystems' functions first,
 * then the others, each in available_filter_functions' order), so both
 * kernels take the same functions in the same sequence, but for the few
 * functions only one of them has and the refusals each makes. A
 * measurement that finds fewer than N candidates left takes none, and
 * one that runs out on the way (refusals) fails: either prints
 * BENCH-SKIP with the reason "no fresh functions left"; the list is
 * never started again. At the start a "clients:" line says how many
 * functions the planned measurements need against how many there are
 * (and how many measurements those will serve when they are too few),
 * at the end how many were used.
 *
 * As libbpf does: a perf event is opened for all tasks on CPU 0, enabled
 * (PERF_EVENT_IOC_ENABLE) after its program is attached, and disabled
 * (PERF_EVENT_IOC_DISABLE) before it is closed. One program serves all
 * events. Attach time is the sum over the events that opened (the
 * attempts the kernel refused are counted, not timed); detach time is
 * the wall time of the whole detach phase.
 *
 * Output: one line per figure, for the reports, after the guest's
 * "BENCH-RUN clients":
 *   BENCH cl_<exp>_<N>_r<rep>_<metric> <value>
 * metrics: events (opened; N), refused (functions the kernel refused on
 * the way), attach_ns, detach_ns (CLOCK_MONOTONIC), the cycle counter's
 * attach_tsc, detach_tsc (x86: TSC cycles) or attach_cntvct,
 * detach_cntvct (arm64: CNTVCT_EL0 ticks), and gp_<flavour>: grace
 * periods completed during the detach phase, from kprobe_bench_gp.ko's
 * debugfs file (rcu, rcu_exp, srcu_tp, tasks_trace, tasks_rude). A
 * measurement that failed prints no figure, but
 *   BENCH-SKIP <exp> <N|all> <rep|all> <reason>
 * and so does an experiment this kernel cannot run (no kprobe PMU, no
 * BPF, no kprobe_multi, no tracefs). Progress lines start with
 * "clients:".
 *
 * Under QEMU -icount shift=0 the guest's time is virtual: an instruction
 * is 1 ns, and idle time (most of a grace period) passes at real speed.
 * The x86 bench kernels' clocksource is the TSC ("Switched to clocksource
 * tsc" on their consoles), the arm64 ones' the generic timer's counter
 * (arch_sys_counter, CNTVCT_EL0), so CLOCK_MONOTONIC is computed from the
 * same counter as the cycle figures: they should agree, and show it if
 * the clocksource ever changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define TRACING		"/sys/kernel/tracing"
#define KPROBE_EVENTS	TRACING "/kprobe_events"
#define PMU		"/sys/bus/event_source/devices/kprobe"
#define GP_FILE		"/sys/kernel/debug/kprobe_bench_gp"
#define KPROBE_LIST	"/sys/kernel/debug/kprobes/list"

#define MAX_SIZES	8
#define MAX_N		10000
#define CLOSERS		4
#if defined(__x86_64__)
/* x86's ftrace site is one 5-byte nop (MCOUNT_INSN_SIZE). */
#define FTRACE_INSN	5
/* The cycle counter's metric name: attach_tsc, detach_tsc. */
#define COUNTER		"tsc"
#elif defined(__aarch64__)
/*
 * arm64's ftrace site, as ftrace records it (ftrace_call_adjust()), is
 * one 4-byte instruction: the NOP that becomes "bl ftrace_caller", after
 * the one that becomes "mov x9, x30" (and a BTI before that, if any).
 */
#define FTRACE_INSN	4
/* The generic timer's virtual count: attach_cntvct, detach_cntvct. */
#define COUNTER		"cntvct"
#elif defined(__riscv) && __riscv_xlen == 64
/* riscv's ftrace site: AUIPC and JALR (make bench-riscv64 has no ftrace). */
#define FTRACE_INSN	8
/* The time CSR: attach_time, detach_time. */
#define COUNTER		"time"
#else
#error "kprobe_clients: x86-64, arm64 and riscv64 only (the counter, the ftrace site's size)"
#endif
/* An ftrace site further in than this is not right after an ENDBR. */
#define MAX_FTRACE_OFF	16
/* Give up on an experiment when this many functions in a row are refused. */
#define MAX_REFUSED_RUN	200
/* ENOTSUPP, the kernel's own, which the uapi headers do not define. */
#define ENOTSUPP_KERNEL	524

enum site { ENTRY, BODY };
enum bpf_how { NO_BPF, BPF_IOCTL, BPF_LINK };
enum kind { PERF, PERF_FLOOR, EVENTS_REMOVE, EVENTS_CLEAR, EVENTS_ENABLE, MULTI };

struct experiment {
	const char *name;
	enum kind kind;
	enum site site;
	int ret;		/* kretprobe */
	enum bpf_how bpf;
	int closers;		/* threads closing at once */
	const char *skip;	/* why this kernel cannot run it, or NULL */
};

static struct experiment exps[] = {
	{ "perf_entry", PERF, ENTRY, 0, NO_BPF, 1, NULL },
	{ "perf_entry_bpf", PERF, ENTRY, 0, BPF_IOCTL, 1, NULL },
	{ "perf_entry_link", PERF, ENTRY, 0, BPF_LINK, 1, NULL },
	{ "perf_entry_bpf_threads", PERF, ENTRY, 0, BPF_IOCTL, CLOSERS, NULL },
	{ "perf_kret", PERF, ENTRY, 1, NO_BPF, 1, NULL },
	{ "perf_kret_bpf", PERF, ENTRY, 1, BPF_IOCTL, 1, NULL },
	{ "perf_body", PERF, BODY, 0, NO_BPF, 1, NULL },
	{ "perf_body_bpf", PERF, BODY, 0, BPF_IOCTL, 1, NULL },
	{ "perf_body_bpf_threads", PERF, BODY, 0, BPF_IOCTL, CLOSERS, NULL },
	{ "events_remove", EVENTS_REMOVE, ENTRY, 0, NO_BPF, 1, NULL },
	{ "events_clear", EVENTS_CLEAR, ENTRY, 0, NO_BPF, 1, NULL },
	{ "events_enable", EVENTS_ENABLE, ENTRY, 0, NO_BPF, 1, NULL },
	{ "multi_entry", MULTI, ENTRY, 0, BPF_LINK, 1, NULL },
	{ "perf_floor", PERF_FLOOR, ENTRY, 0, NO_BPF, 1, NULL },
};
#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
#define NR_EXPS	ARRAY_SIZE(exps)

/* Grace-period counters, in the order kprobe_bench_gp.ko prints them. */
static const char *const gp_names[] = {
	"rcu", "rcu_exp", "srcu_tp", "tasks_trace", "tasks_rude",
};
#define NR_GP	ARRAY_SIZE(gp_names)

struct gp {
	unsigned long v[NR_GP];
	unsigned int have;	/* bit i: v[i] was read */
};

/*
 * Grace periods completed between two readings. The module prints RCU's
 * sequence counters without their two state bits, so they wrap at 2^62;
 * and RCU starts them just below the wrap (to catch wrap bugs early),
 * so that a boot that measures soon after starting sees it wrap.
 */
static unsigned long gp_delta(const struct gp *g0, const struct gp *g1, int i)
{
	return (g1->v[i] - g0->v[i]) & ((1UL << 62) - 1);
}

/*
 * A function to probe. The candidates are the functions of
 * available_filter_functions (so each has an ftrace site at its entry:
 * on x86 with CONFIG_KPROBES_ON_FTRACE an entry probe goes there).
 */
struct cand {
	char *name;
	unsigned long ftrace_ip;	/* the site's address; 0: unknown */
	unsigned long addr;		/* from kallsyms; 0: unknown */
	int sites, syms;		/* how many times the name occurs */
	long body;			/* body offset, or -1 */
};

static struct cand *cands;
static int nr_cands;
static int *order;		/* the candidates to use, in that order */
static int nr_order;
/*
 * The next entry of order[] no measurement has taken. Every measurement
 * takes its functions from here on, refused ones and ones it skips
 * included, and it only ever moves forward: no function is attached by
 * two measurements (our kprobes keep a detached entry's ip in ftrace's
 * filter for a while, so attaching it again would be nearly free).
 */
static int cursor;

/* The next fresh candidate, or -1 when none is left. */
static int next_fresh(void)
{
	return cursor < nr_order ? order[cursor++] : -1;
}

#define NO_FRESH	"no fresh functions left"

/* The name of order[@i], for the progress lines; "-" for none. */
static const char *cand_name(int i)
{
	return i >= 0 && i < nr_order ? cands[order[i]].name : "-";
}

/* What this kernel has. */
static int pmu_type = -1;
/* perf_floor's tracepoint (its tracefs id), or -1. */
#define FLOOR_TP	TRACING "/events/sched/sched_process_exec/id"
static int floor_tp = -1;
static uint64_t retprobe_bit;
static int prog_fd = -1;
static int multi_prog_fd = -1;	/* the same program, for kprobe_multi */
static int have_gp;

static uint64_t start_ns;

struct result {
	int events, refused;
	uint64_t attach_ns, attach_cnt, detach_ns, detach_cnt;
	struct gp gp0, gp1;
	char why[200];
};

/* A perf event and its BPF link, -1 where there is none. */
struct ev {
	int fd, link;
};

static struct ev *evs;

static int fail(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record why a measurement failed (the first reason only); returns -1. */
static int fail(struct result *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts)) {
		printf("BENCH-SKIP all all all clock_gettime(CLOCK_MONOTONIC): %s\n",
		       strerror(errno));
		exit(1);
	}
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The cycle counter, read after every earlier instruction: the TSC on
 * x86 (lfence; rdtsc), CNTVCT_EL0 on arm64 (isb; mrs; Linux lets EL0
 * read it, for the vDSO).
 */
static uint64_t counter_read(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc" : "=a" (lo), "=d" (hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
	uint64_t v;

	asm volatile("isb; mrs %0, cntvct_el0" : "=r" (v) :: "memory");
	return v;
#else
	uint64_t v;

	asm volatile("rdtime %0" : "=r" (v) :: "memory");
	return v;
#endif
}

static double secs(uint64_t ns)
{
	return ns / 1e9;
}

/* Read a small file; the number of bytes, or -1 with errno set. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t len, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1) {
		len = read(fd, buf + got, size - 1 - got);
		if (len < 0) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		if (!len)
			break;
		got += len;
	}
	buf[got] = 0;
	close(fd);
	return got;
}

static void gp_read(struct gp *g)
{
	char buf[512], *line, *save = NULL;
	unsigned long v;
	char name[32];
	int i;

	g->have = 0;
	if (!have_gp || read_small(GP_FILE, buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%31s %lu", name, &v) != 2)
			continue;
		for (i = 0; i < NR_GP; i++)
			if (!strcmp(name, gp_names[i])) {
				g->v[i] = v;
				g->have |= 1U << i;
			}
	}
}

/* Errors for which the kernel refuses this function, not the request. */
static int refusal(int err)
{
	return err == EINVAL || err == ENOENT || err == EILSEQ || err == EADDRNOTAVAIL ||
	       err == EOPNOTSUPP || err == EBUSY || err == ENOTSUPP_KERNEL;
}

/* Lines in @path, or -1. */
static int count_lines(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC), lines = 0;
	ssize_t len, i;

	if (fd < 0)
		return -1;
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < len; i++)
			lines += buf[i] == '\n';
	close(fd);
	return len < 0 ? -1 : lines;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int base_probes = -1;	/* kprobes/list's lines before we start */

/*
 * Before each measurement: let the last one's deferred work end, so that
 * none of it runs in the next, nor do its grace periods count there.
 * The tree's optimizer unoptimizes and frees an optimized probe some 5
 * jiffies and a grace period after unregister_kprobe() returns, out of
 * kprobes/list's sight; ours leaves a detached entry's ip in its ftrace
 * filter for a tenth of a second. So: at least 500 ms, and until
 * kprobes/list is as long as before the first measurement, at most 10 s;
 * 1 s without kprobes/list.
 */
static void settle(void)
{
	int waited = 0, lines;

	if (base_probes < 0) {
		sleep_ms(1000);
		return;
	}
	do {
		sleep_ms(100);
		waited += 100;
		lines = count_lines(KPROBE_LIST);
	} while (waited < 500 || (waited < 10000 && lines > base_probes));
	if (lines > base_probes)
		printf("clients: %d probes still listed after 10 s\n", lines - base_probes);
	else if (waited > 1000)
		printf("clients: %.1f s until the last probes were gone\n", waited / 1e3);
}

/* --- what the kernel has ------------------------------------------------ */

static const char *find_pmu(void)
{
	static char why[160];
	char buf[64];
	int bit;

	if (read_small(PMU "/type", buf, sizeof(buf)) < 0) {
		snprintf(why, sizeof(why), "no kprobe PMU (%s/type: %s)", PMU, strerror(errno));
		return why;
	}
	if (sscanf(buf, "%d", &pmu_type) != 1) {
		snprintf(why, sizeof(why), "no kprobe PMU (%s/type reads \"%s\")", PMU, buf);
		return why;
	}
	/* "config:0" on 6.12; perf and libbpf read it from here. */
	if (read_small(PMU "/format/retprobe", buf, sizeof(buf)) >= 0 &&
	    sscanf(buf, "config:%d", &bit) == 1 && bit >= 0 && bit < 64)
		retprobe_bit = 1ULL << bit;
	return NULL;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/*
 * One BPF_PROG_TYPE_KPROBE program, "r0 = 0; exit", for every event.
 * kern_version: Linux 5.0 stopped checking it (6.12's uapi header says
 * "not used"); set from uname anyway, as loaders for older kernels did.
 */
static int load_prog(uint32_t expected_attach_type)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned int a = 0, b = 0, c = 0;
	union bpf_attr attr;
	struct utsname u;

	if (!uname(&u))
		sscanf(u.release, "%u.%u.%u", &a, &b, &c);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.kern_version = a << 16 | b << 8 | (c > 255 ? 255 : c);
	attr.expected_attach_type = expected_attach_type;
	strncpy(attr.prog_name, "kpbench", sizeof(attr.prog_name) - 1);
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static const char *load_bpf(void)
{
	static char why[160];

	prog_fd = load_prog(0);
	if (prog_fd < 0) {
		snprintf(why, sizeof(why), "BPF_PROG_LOAD(BPF_PROG_TYPE_KPROBE): %s",
			 strerror(errno));
		return why;
	}
	return NULL;
}

/*
 * kprobe_multi needs CONFIG_FPROBE, and a program loaded for it. Without
 * fprobe, BPF_LINK_CREATE of a kprobe_multi link fails with EOPNOTSUPP
 * before it looks at the functions; with it, a link over none is EINVAL.
 * So it is asked for one over none: no function is used up finding out.
 */
static const char *load_multi_bpf(void)
{
	static char why[200];
	const char *none = NULL;
	union bpf_attr attr;
	int link;

	multi_prog_fd = load_prog(BPF_TRACE_KPROBE_MULTI);
	if (multi_prog_fd < 0) {
		snprintf(why, sizeof(why), "BPF_PROG_LOAD(BPF_PROG_TYPE_KPROBE,"
			 " BPF_TRACE_KPROBE_MULTI): %s", strerror(errno));
		return why;
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = multi_prog_fd;
	attr.link_create.attach_type = BPF_TRACE_KPROBE_MULTI;
	attr.link_create.kprobe_multi.syms = (uint64_t)(uintptr_t)&none;
	attr.link_create.kprobe_multi.cnt = 0;
	link = sys_bpf(BPF_LINK_CREATE, &attr);
	if (link >= 0) {
		close(link);
	} else if (errno == EOPNOTSUPP || errno == ENOTSUPP_KERNEL) {
		snprintf(why, sizeof(why), "no kprobe_multi links: BPF_LINK_CREATE("
			 "BPF_TRACE_KPROBE_MULTI) of no function: %s (a kernel without"
			 " CONFIG_FPROBE)", strerror(errno));
		return why;
	}
	return NULL;
}

/* kprobe_events: there, and empty (we remove all of it in events_clear). */
static const char *check_events(void)
{
	static char why[160];
	char buf[256];

	if (read_small(KPROBE_EVENTS, buf, sizeof(buf)) < 0) {
		snprintf(why, sizeof(why), "no %s: %s", KPROBE_EVENTS, strerror(errno));
		return why;
	}
	if (buf[0]) {
		snprintf(why, sizeof(why), "%s is not empty: not ours to clear", KPROBE_EVENTS);
		return why;
	}
	return NULL;
}

/* Make room for a perf event and a link per event, at the largest N. */
static void raise_nofile(int maxn)
{
	struct rlimit rl;
	rlim_t want = 2 * (rlim_t)maxn + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		printf("clients: getrlimit(RLIMIT_NOFILE): %s\n", strerror(errno));
		return;
	}
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		printf("clients: setrlimit(RLIMIT_NOFILE, %lu): %s; larger N will fail\n",
		       (unsigned long)want, strerror(errno));
}

/* --- the functions -------------------------------------------------------- */

#define HASH_BITS	17
#define HASH_SIZE	(1 << HASH_BITS)
static int *hash;	/* candidate index + 1, 0: empty */

static unsigned int hash_name(const char *s)
{
	unsigned int h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h & (HASH_SIZE - 1);
}

/* The candidate named @name, or -1; added when @add and there is room. */
static int lookup(const char *name, int add)
{
	unsigned int h = hash_name(name), i;
	static int cap;

	for (i = 0; i < HASH_SIZE; i++, h = (h + 1) & (HASH_SIZE - 1)) {
		int k = hash[h] - 1;

		if (k < 0)
			break;
		if (!strcmp(cands[k].name, name))
			return k;
	}
	if (!add || i == HASH_SIZE || nr_cands >= HASH_SIZE / 2)
		return -1;
	if (nr_cands == cap) {
		struct cand *n;

		cap = cap ? 2 * cap : 4096;
		n = realloc(cands, cap * sizeof(*cands));
		if (!n)
			return -1;
		cands = n;
	}
	cands[nr_cands] = (struct cand){ .name = strdup(name), .body = -1 };
	if (!cands[nr_cands].name)
		return -1;
	hash[h] = nr_cands + 1;
	return nr_cands++;
}

/*
 * Functions the guest would hit while it measures, by their names: the
 * paths of the syscalls it makes, of perf, BPF, tracing, kprobes and
 * ftrace themselves, of RCU, scheduling, timers, memory, locking, the
 * console. A probe on one would run on every pass through it and slow
 * what is measured, differently on each kernel.
 */
static const char *const hot[] = {
	"lock", "rcu", "sched", "irq", "timer", "tick", "clock", "time", "idle",
	"trace", "probe", "perf", "bpf", "btf", "event", "ftrace", "text_poke",
	"alloc", "free", "kmem", "slab", "page", "folio", "mutex", "sem", "wake",
	"wait", "task", "work", "queue", "fd", "file", "sys_", "copy", "mem",
	"str", "printk", "console", "tty", "serial", "uart", "8250", "kallsyms",
	"module", "apic", "ipi", "smp", "cpu", "read", "write", "open", "close",
	"poll", "signal", "exit", "fork", "clone", "mm", "vm", "pte", "pmd",
	"tlb", "fault", "insn", "jump_label", "static_call", "static_key",
	"stack", "unwind", "orc", "kthread", "ref", "get", "put", "seq", "dput",
	"inode", "dentry", "path", "vfs", "kernfs", "sysfs", "debugfs", "tracefs",
	"hrtimer", "nmi", "int3", "entry", "ret_from", "switch", "notif", "hash",
	"list", "rb_", "xa_", "idr", "ida", "kobject", "cgroup", "cred", "audit",
	"security", "lsm", "rw", "atomic", "barrier", "flush", "sync",
#ifdef __aarch64__
	/* arm64's: interrupts, exceptions, syscalls, FP state, the PL011. */
	"gic", "el0", "el1", "syscall", "svc", "fpsimd", "sve", "sme", "psci",
	"pl011", "amba", "counter",
#endif
};

/*
 * Subsystems the guest does not run while it measures (ACPI's
 * interpreter and tables, PCI, PnP, block, io_uring, input, crypto):
 * their functions go first, but for the few of them that can run at any
 * time (locking, interrupts, idle, timers, waiting, allocation, work).
 */
static const char *const cold[] = {
	"acpi_", "pci", "pnp", "quirk_", "blk_", "bio_", "bdev_", "disk_", "elv",
	"io_", "input_", "serio", "i8042", "crypto_", "rtc_", "dmi_", "efi",
};
static const char *const cold_hot[] = {
	"lock", "irq", "idle", "timer", "time", "clock", "wait", "sem", "mutex",
	"sched", "alloc", "free", "work", "queue",
};

/*
 * @prefix: does @name start with one of @words? Otherwise: does it start
 * with one (past leading underscores), or hold one as a whole word
 * between underscores ("sys_" and the like, ending in one, anywhere)?
 * Not any substring: "str" would take "destroy", "get" "target".
 */
static int matches(const char *name, const char *const *words, int n, int prefix)
{
	const char *bare = name, *p;
	size_t len;
	int i;

	while (*bare == '_')
		bare++;
	for (i = 0; i < n; i++) {
		len = strlen(words[i]);
		if (!strncmp(prefix ? name : bare, words[i], len))
			return 1;
		if (prefix)
			continue;
		for (p = bare; (p = strstr(p, words[i])); p += len)
			if (p[-1] == '_' && (words[i][len - 1] == '_' || !p[len] || p[len] == '_'))
				return 1;
	}
	return 0;
}

/*
 * --avoid SYM+COUNT[,SYM+COUNT...]: functions something else probed in
 * this boot before the clients run, which no measurement may take: the
 * COUNT text symbols from SYM on (SYM's included), in kallsyms' address
 * order, which is how make bench-arm64's module walks kallsyms; SYM+1 is
 * SYM alone.
 */
#define MAX_AVOID	32
static const char *avoid_spec;
static struct avoid {
	char name[128];
	long count;
	unsigned long from, to;		/* [from, to); from 0: not found */
} avoids[MAX_AVOID];
static int nr_avoids;

static const char *parse_avoid(void)
{
	static char why[200];
	const char *p = avoid_spec;
	int len;

	while (p && *p) {
		struct avoid *a = &avoids[nr_avoids];

		if (nr_avoids == MAX_AVOID || sscanf(p, "%127[^+,]+%ld%n", a->name, &a->count,
						     &len) != 2 || a->count < 1 ||
		    (p[len] && p[len] != ',')) {
			snprintf(why, sizeof(why), "--avoid %s: at most %d SYM+COUNT,"
				 " comma-separated", avoid_spec, MAX_AVOID);
			return why;
		}
		nr_avoids++;
		p += len + !!p[len];
	}
	return NULL;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The ranges of avoids[], from the text symbols' sorted addresses. */
static void avoid_ranges(unsigned long *text, int nr_text)
{
	int i, lo, hi, mid;

	qsort(text, nr_text, sizeof(*text), cmp_ulong);
	for (i = 0; i < nr_avoids; i++) {
		struct avoid *a = &avoids[i];

		if (!a->from) {
			printf("clients: --avoid: no %s in /proc/kallsyms\n", a->name);
			continue;
		}
		for (lo = 0, hi = nr_text; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (text[mid] < a->from)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Past @lo, COUNT distinct addresses further. */
		for (hi = lo; hi < nr_text && a->count; hi++)
			if (hi == lo || text[hi] != text[hi - 1])
				a->count--;
		while (hi < nr_text && text[hi] == text[hi - 1])
			hi++;
		a->to = hi < nr_text ? text[hi] : ~0UL;
	}
}

static int avoided(const struct cand *c)
{
	int i;

	for (i = 0; i < nr_avoids; i++)
		if (c->addr && c->addr >= avoids[i].from && c->addr < avoids[i].to)
			return 1;
	return 0;
}

/*
 * Body offsets: the instruction right after the ftrace site, at
 * (rec->ip from available_filter_functions_addrs) - (the symbol's
 * address from /proc/kallsyms) + 5. That is an instruction boundary by
 * construction (the site is one 5-byte nop), past whatever IBT put
 * before the site, and the kernel decides whether a probe there traps or
 * is optimized. The other ways were worse: trying offsets 1..15 until
 * one is accepted lands on the ftrace site itself at +4 with IBT (an
 * entry probe again) and pays a close, with its grace periods, per
 * accepted try; kprobe_bench_fns.ko's functions would put module
 * kallsyms lookups (a linear walk) into what is measured.
 */
static const char *read_functions(int *bodies)
{
	static char why[200];
	char *line = NULL, name[256], type;
	size_t cap = 0;
	unsigned long addr, *text = NULL;
	int k, i, pass, nr_cold = 0, with_addrs = 1, nr_text = 0, text_cap = 0;
	int nr_avoided = 0;
	FILE *f;

	if (avoid_spec) {
		const char *bad = parse_avoid();

		if (bad)
			return bad;
	}
	hash = calloc(HASH_SIZE, sizeof(*hash));
	if (!hash)
		return "out of memory";
	f = fopen(TRACING "/available_filter_functions_addrs", "re");
	if (!f) {
		with_addrs = 0;
		f = fopen(TRACING "/available_filter_functions", "re");
	}
	if (!f) {
		snprintf(why, sizeof(why), "no %s/available_filter_functions: %s",
			 TRACING, strerror(errno));
		return why;
	}
	while (getline(&line, &cap, f) > 0) {
		/* Module functions end in " [module]": not ours to probe. */
		if (strchr(line, '['))
			continue;
		if (with_addrs ? sscanf(line, "%lx %255s", &addr, name) != 2 :
				 sscanf(line, "%255s", name) != 1)
			continue;
		k = lookup(name, 1);
		if (k < 0)
			continue;
		cands[k].sites++;
		if (with_addrs)
			cands[k].ftrace_ip = addr;
	}
	fclose(f);
	if (!nr_cands) {
		free(line);
		return "available_filter_functions lists no function";
	}

	*bodies = 0;
	f = with_addrs || nr_avoids ? fopen("/proc/kallsyms", "re") : NULL;
	if (!f && nr_avoids)
		printf("clients: --avoid: no /proc/kallsyms (%s): nothing avoided\n",
		       strerror(errno));
	while (f && getline(&line, &cap, f) > 0) {
		if (strchr(line, '['))
			continue;
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		if (nr_avoids && addr && strchr("tTwW", type)) {
			if (nr_text == text_cap) {
				unsigned long *t;

				text_cap = text_cap ? 2 * text_cap : 65536;
				t = realloc(text, text_cap * sizeof(*text));
				if (!t) {
					fclose(f);
					free(line);
					return "out of memory";
				}
				text = t;
			}
			text[nr_text++] = addr;
			for (i = 0; i < nr_avoids; i++)
				if (!avoids[i].from && !strcmp(name, avoids[i].name))
					avoids[i].from = addr;
		}
		k = lookup(name, 0);
		if (k < 0)
			continue;
		/* The kernel refuses a name kallsyms has twice, of any type. */
		cands[k].syms++;
		if (type == 't' || type == 'T')
			cands[k].addr = addr;
	}
	if (f)
		fclose(f);
	free(line);
	if (nr_avoids)
		avoid_ranges(text, nr_text);
	free(text);
	for (k = 0; k < nr_cands; k++) {
		struct cand *c = &cands[k];

		if (c->sites == 1 && c->syms == 1 && c->addr && c->ftrace_ip >= c->addr &&
		    c->ftrace_ip - c->addr <= MAX_FTRACE_OFF) {
			c->body = c->ftrace_ip - c->addr + FTRACE_INSN;
			(*bodies)++;
		}
	}

	order = malloc(nr_cands * sizeof(*order));
	if (!order)
		return "out of memory";
	/* The cold subsystems' functions first, then the others. */
	for (pass = 0; pass < 2; pass++) {
		for (k = 0; k < nr_cands; k++) {
			const char *n = cands[k].name;
			int is_cold = matches(n, cold, ARRAY_SIZE(cold), 1);

			if (cands[k].sites != 1 || cands[k].syms > 1 || strchr(n, '.') ||
			    is_cold == pass)
				continue;
			if (is_cold ? matches(n, cold_hot, ARRAY_SIZE(cold_hot), 0) :
				      matches(n, hot, ARRAY_SIZE(hot), 0))
				continue;
			if (avoided(&cands[k])) {
				nr_avoided++;
				continue;
			}
			order[nr_order++] = k;
		}
		if (!pass)
			nr_cold = nr_order;
	}
	printf("clients: %d functions in available_filter_functions, %d to try (%d of"
	       " cold subsystems first), %d with a body offset%s\n", nr_cands, nr_order, nr_cold,
	       *bodies, with_addrs ? "" : " (no available_filter_functions_addrs)");
	if (nr_avoids)
		printf("clients: --avoid %s: %d functions left out\n", avoid_spec, nr_avoided);
	return nr_order ? NULL : "no function left to probe";
}

/* --- the perf kprobe PMU ---------------------------------------------------- */

static int perf_open(const char *func, long offset, int ret)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu_type;
	attr.config = ret ? retprobe_bit : 0;
	attr.config1 = (uint64_t)(uintptr_t)func;	/* kprobe_func */
	attr.config2 = offset;				/* probe_offset */
	/* As libbpf: every task, CPU 0. */
	return syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/* perf_floor's event: the tracepoint, every task, CPU 0, as perf_open(). */
static int perf_open_floor(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = floor_tp;
	return syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *find_floor_tp(void)
{
	static char why[160];
	char buf[32];

	if (read_small(FLOOR_TP, buf, sizeof(buf)) < 0 || sscanf(buf, "%d", &floor_tp) != 1) {
		floor_tp = -1;
		snprintf(why, sizeof(why), "no tracepoint id in %s", FLOOR_TP);
		return why;
	}
	return NULL;
}

static int link_create(int perf_fd)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.target_fd = perf_fd;
	attr.link_create.attach_type = BPF_PERF_EVENT;
	return sys_bpf(BPF_LINK_CREATE, &attr);
}

/* Close @ev's link and event, as libbpf's bpf_link__destroy() does. */
static int detach_one(struct ev *ev, const char **what)
{
	int err = 0;

	if (ioctl(ev->fd, PERF_EVENT_IOC_DISABLE, 0) && !err) {
		err = errno;
		*what = "PERF_EVENT_IOC_DISABLE";
	}
	if (ev->link >= 0 && close(ev->link) && !err) {
		err = errno;
		*what = "close(link)";
	}
	if (close(ev->fd) && !err) {
		err = errno;
		*what = "close(perf event)";
	}
	ev->fd = ev->link = -1;
	return err;
}

/* Close what an attach that failed left open, untimed. */
static void close_all(int count)
{
	int i;

	for (i = 0; i < count; i++) {
		if (evs[i].link >= 0)
			close(evs[i].link);
		if (evs[i].fd >= 0)
			close(evs[i].fd);
		evs[i].fd = evs[i].link = -1;
	}
}

static int perf_attach(const struct experiment *e, int n, struct result *r)
{
	int i = 0, c, fd, err, run = 0;
	uint64_t t0, t1, c0, c1;
	const char *func;
	long off;

	while (i < n) {
		if (e->kind == PERF_FLOOR) {
			func = "the floor's tracepoint";
			off = 0;
		} else {
			c = next_fresh();
			if (c < 0)
				return fail(r, NO_FRESH " (%d of %d attached, %d refused)", i, n,
					    r->refused);
			func = cands[c].name;
			off = e->site == BODY ? cands[c].body : 0;
			if (off < 0)
				continue;
		}
		evs[i].fd = evs[i].link = -1;
		t0 = now_ns();
		c0 = counter_read();
		fd = e->kind == PERF_FLOOR ? perf_open_floor() : perf_open(func, off, e->ret);
		if (fd < 0) {
			err = errno;
			if (!refusal(err))
				return fail(r, "perf_event_open(%s+%ld): %s", func, off,
					    strerror(err));
			r->refused++;
			if (++run == MAX_REFUSED_RUN)
				return fail(r, "%d functions refused in a row, the last"
					    " (%s+%ld): %s", run, func, off, strerror(err));
			continue;
		}
		run = 0;
		evs[i].fd = fd;
		r->events = i + 1;	/* to close, whatever happens next */
		if (e->bpf == BPF_IOCTL && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd))
			return fail(r, "PERF_EVENT_IOC_SET_BPF(%s+%ld): %s", func, off,
				    strerror(errno));
		if (e->bpf == BPF_LINK) {
			evs[i].link = link_create(fd);
			if (evs[i].link < 0)
				return fail(r, "BPF_LINK_CREATE(BPF_PERF_EVENT, %s+%ld): %s",
					    func, off, strerror(errno));
		}
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
			return fail(r, "PERF_EVENT_IOC_ENABLE(%s+%ld): %s", func, off,
				    strerror(errno));
		c1 = counter_read();
		t1 = now_ns();
		r->attach_ns += t1 - t0;
		r->attach_cnt += c1 - c0;
		i++;
	}
	return 0;
}

/* Four threads closing at once: each one its share of the events. */
struct closer {
	pthread_t thread;
	int lo, hi, err;
	const char *what;
};

static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go;		/* 1: close; -1: give up */

static void *closer_fn(void *arg)
{
	struct closer *c = arg;
	int i, err, g;

	pthread_mutex_lock(&go_lock);
	while (!go)
		pthread_cond_wait(&go_cond, &go_lock);
	g = go;
	pthread_mutex_unlock(&go_lock);
	if (g < 0)
		return NULL;
	for (i = c->lo; i < c->hi; i++) {
		err = detach_one(&evs[i], &c->what);
		if (err && !c->err)
			c->err = err;
	}
	return NULL;
}

static void set_go(int value)
{
	pthread_mutex_lock(&go_lock);
	go = value;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&go_lock);
}

static int perf_detach(const struct experiment *e, int n, struct result *r)
{
	struct closer cl[CLOSERS];
	const char *what = NULL;
	int i, err = 0, started = 0;
	uint64_t t0, c0;

	if (e->closers == 1) {
		gp_read(&r->gp0);
		t0 = now_ns();
		c0 = counter_read();
		for (i = 0; i < n; i++) {
			int e1 = detach_one(&evs[i], &what);

			if (e1 && !err)
				err = e1;
		}
		r->detach_cnt = counter_read() - c0;
		r->detach_ns = now_ns() - t0;
		gp_read(&r->gp1);
		if (err)
			return fail(r, "%s: %s", what, strerror(err));
		return 0;
	}

	go = 0;
	for (i = 0; i < e->closers; i++) {
		cl[i] = (struct closer){ .lo = n * i / e->closers,
					 .hi = n * (i + 1) / e->closers };
		err = pthread_create(&cl[i].thread, NULL, closer_fn, &cl[i]);
		if (err)
			break;
		started++;
	}
	if (started < e->closers) {
		set_go(-1);
		for (i = 0; i < started; i++)
			pthread_join(cl[i].thread, NULL);
		close_all(n);
		return fail(r, "pthread_create: %s", strerror(err));
	}
	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = counter_read();
	set_go(1);
	for (i = 0; i < e->closers; i++)
		pthread_join(cl[i].thread, NULL);
	r->detach_cnt = counter_read() - c0;
	r->detach_ns = now_ns() - t0;
	gp_read(&r->gp1);
	for (i = 0; i < e->closers; i++)
		if (cl[i].err)
			return fail(r, "%s: %s", cl[i].what, strerror(cl[i].err));
	return 0;
}

static int run_perf(const struct experiment *e, int n, struct result *r)
{
	if (perf_attach(e, n, r)) {
		close_all(r->events);
		return -1;
	}
	return perf_detach(e, n, r);
}

/* --- kprobe_events ------------------------------------------------------------ */

/* Remove every kprobe event (ours: check_events() found none before). */
static int events_truncate(void)
{
	int fd = open(KPROBE_EVENTS, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return close(fd);
}

static int write_line(int fd, const char *line)
{
	size_t len = strlen(line);
	ssize_t w = write(fd, line, len);

	if (w == (ssize_t)len)
		return 0;
	if (w >= 0)
		errno = EIO;
	return -1;
}

/* Write "1" or "0" to kpbench/fK's enable file. */
static int event_enable(int k, int on)
{
	char path[96];
	int fd, err = 0;

	snprintf(path, sizeof(path), TRACING "/events/kpbench/f%d/enable", k);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, on ? "1\n" : "0\n", 2) != 2)
		err = errno ? errno : EIO;
	close(fd);
	errno = err;
	return err ? -1 : 0;
}

static int events_add(int n, struct result *r, int enable)
{
	int fd, i = 0, c, err, run = 0;
	uint64_t t0, c0, c1, t1;
	char line[320];

	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "open(%s): %s", KPROBE_EVENTS, strerror(errno));
	while (i < n) {
		c = next_fresh();
		if (c < 0) {
			close(fd);
			return fail(r, NO_FRESH " (%d of %d attached, %d refused)", i, n,
				    r->refused);
		}
		snprintf(line, sizeof(line), "p:kpbench/f%d %s\n", i, cands[c].name);
		t0 = now_ns();
		c0 = counter_read();
		if (write_line(fd, line)) {
			err = errno;
			if (!refusal(err)) {
				close(fd);
				return fail(r, "write(%s, \"p:kpbench/f%d %s\"): %s",
					    KPROBE_EVENTS, i, cands[c].name, strerror(err));
			}
			r->refused++;
			if (++run == MAX_REFUSED_RUN) {
				close(fd);
				return fail(r, "%d functions refused in a row, the last (%s): %s",
					    run, cands[c].name, strerror(err));
			}
			continue;
		}
		if (enable && event_enable(i, 1)) {
			close(fd);
			r->events = i + 1;
			return fail(r, "enabling kpbench/f%d (%s): %s", i, cands[c].name,
				    strerror(errno));
		}
		c1 = counter_read();
		t1 = now_ns();
		run = 0;
		r->attach_ns += t1 - t0;
		r->attach_cnt += c1 - c0;
		r->events = ++i;
	}
	if (close(fd))
		return fail(r, "close(%s): %s", KPROBE_EVENTS, strerror(errno));
	return 0;
}

static int events_remove(int n, struct result *r, int enabled)
{
	int fd, i, err = 0;
	uint64_t t0, c0;
	char line[64];

	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "open(%s): %s", KPROBE_EVENTS, strerror(errno));
	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = counter_read();
	for (i = 0; i < n; i++) {
		if (enabled && event_enable(i, 0) && !err) {
			err = errno;
			fail(r, "disabling kpbench/f%d: %s", i, strerror(err));
		}
		snprintf(line, sizeof(line), "-:kpbench/f%d\n", i);
		if (write_line(fd, line) && !err) {
			err = errno;
			fail(r, "write(%s, \"-:kpbench/f%d\"): %s", KPROBE_EVENTS, i,
			     strerror(err));
		}
	}
	r->detach_cnt = counter_read() - c0;
	r->detach_ns = now_ns() - t0;
	gp_read(&r->gp1);
	if (close(fd) && !err) {
		err = errno;
		fail(r, "close(%s): %s", KPROBE_EVENTS, strerror(err));
	}
	return err ? -1 : 0;
}

static int events_clear(struct result *r)
{
	uint64_t t0, c0;
	int fd, err;

	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = counter_read();
	fd = open(KPROBE_EVENTS, O_WRONLY | O_TRUNC | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0 && close(fd))
		err = errno;
	r->detach_cnt = counter_read() - c0;
	r->detach_ns = now_ns() - t0;
	gp_read(&r->gp1);
	if (err)
		return fail(r, "truncating %s: %s", KPROBE_EVENTS, strerror(err));
	return 0;
}

static int run_events(const struct experiment *e, int n, struct result *r)
{
	char buf[64];
	int ret;

	ret = events_add(n, r, e->kind == EVENTS_ENABLE);
	if (!ret)
		ret = e->kind == EVENTS_CLEAR ? events_clear(r) :
			events_remove(n, r, e->kind == EVENTS_ENABLE);
	/* Nothing of ours may stay behind, whatever happened. */
	if (read_small(KPROBE_EVENTS, buf, sizeof(buf)) < 0)
		return fail(r, "reading %s: %s", KPROBE_EVENTS, strerror(errno));
	if (buf[0]) {
		/* Enabled events cannot be removed: the group switched off first. */
		int fd = open(TRACING "/events/kpbench/enable", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "0\n", 2) != 2)
				printf("clients: disabling kpbench: %s\n", strerror(errno));
			close(fd);
		}
		if (events_truncate())
			return fail(r, "clearing %s: %s", KPROBE_EVENTS, strerror(errno));
		return fail(r, "events left in %s after the run", KPROBE_EVENTS);
	}
	return ret;
}

/* --- kprobe_multi ---------------------------------------------------------------- */

/*
 * One link over the next @n fresh candidates; the kernel refuses the
 * whole link if it refuses one of them.
 */
static int run_multi(int n, struct result *r)
{
	const char **syms = calloc(n, sizeof(*syms));
	union bpf_attr attr;
	uint64_t t0, c0;
	int i, c, link;

	if (!syms)
		return fail(r, "out of memory");
	for (i = 0; i < n && (c = next_fresh()) >= 0; i++)
		syms[i] = cands[c].name;
	if (i < n) {
		free(syms);
		return fail(r, NO_FRESH " (%d of %d)", i, n);
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = multi_prog_fd;
	attr.link_create.attach_type = BPF_TRACE_KPROBE_MULTI;
	attr.link_create.kprobe_multi.syms = (uint64_t)(uintptr_t)syms;
	attr.link_create.kprobe_multi.cnt = n;
	t0 = now_ns();
	c0 = counter_read();
	link = sys_bpf(BPF_LINK_CREATE, &attr);
	r->attach_cnt = counter_read() - c0;
	r->attach_ns = now_ns() - t0;
	free(syms);
	if (link < 0)
		return fail(r, "BPF_LINK_CREATE(BPF_TRACE_KPROBE_MULTI, %d functions): %s", n,
			    strerror(errno));
	r->events = n;
	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = counter_read();
	i = close(link);
	r->detach_cnt = counter_read() - c0;
	r->detach_ns = now_ns() - t0;
	gp_read(&r->gp1);
	if (i)
		return fail(r, "close(kprobe_multi link): %s", strerror(errno));
	return 0;
}

/* --- the runs ------------------------------------------------------------------- */

static void report(const char *exp, int n, int rep, const char *metric, uint64_t value)
{
	printf("BENCH cl_%s_%d_r%d_%s %llu\n", exp, n, rep, metric,
	       (unsigned long long)value);
}

static void measure(const struct experiment *e, int n, int rep, int reps)
{
	struct result r;
	char gps[160] = "";
	int i, ret, len = 0, first = cursor;

	/* Not even N fresh functions left: none taken, none tried. */
	if (e->kind != PERF_FLOOR && nr_order - cursor < n) {
		printf("BENCH-SKIP %s %d %d " NO_FRESH " (%d of %d used)\n", e->name, n, rep,
		       cursor, nr_order);
		printf("clients: rep %d/%d N=%d %s not run: " NO_FRESH " (%d of %d used)\n",
		       rep + 1, reps, n, e->name, cursor, nr_order);
		return;
	}
	settle();
	memset(&r, 0, sizeof(r));
	if (e->kind == PERF || e->kind == PERF_FLOOR)
		ret = run_perf(e, n, &r);
	else if (e->kind == MULTI)
		ret = run_multi(n, &r);
	else
		ret = run_events(e, n, &r);
	if (ret) {
		printf("BENCH-SKIP %s %d %d %s\n", e->name, n, rep, r.why);
		printf("clients: rep %d/%d N=%d %s failed: %s (functions %d-%d of %d, %s to"
		       " %s)\n", rep + 1, reps, n, e->name, r.why, first, cursor - 1, nr_order,
		       cand_name(first), cand_name(cursor - 1));
		return;
	}
	report(e->name, n, rep, "events", r.events);
	report(e->name, n, rep, "refused", r.refused);
	report(e->name, n, rep, "attach_ns", r.attach_ns);
	report(e->name, n, rep, "attach_" COUNTER, r.attach_cnt);
	report(e->name, n, rep, "detach_ns", r.detach_ns);
	report(e->name, n, rep, "detach_" COUNTER, r.detach_cnt);
	for (i = 0; i < NR_GP; i++) {
		char metric[32];

		if (!(r.gp0.have & r.gp1.have & (1U << i)))
			continue;
		snprintf(metric, sizeof(metric), "gp_%s", gp_names[i]);
		report(e->name, n, rep, metric, gp_delta(&r.gp0, &r.gp1, i));
		if (len < (int)sizeof(gps))
			len += snprintf(gps + len, sizeof(gps) - len, " %s %lu", gp_names[i],
					gp_delta(&r.gp0, &r.gp1, i));
	}
	printf("clients: rep %d/%d N=%d %s: %d events (%d refused), attach %.3f s,"
	       " detach %.3f s;%s; functions %d-%d of %d, %s to %s; %.0f s in\n", rep + 1,
	       reps, n, e->name, r.events, r.refused, secs(r.attach_ns), secs(r.detach_ns),
	       gps[0] ? gps : " no GP counts", first, cursor - 1, nr_order, cand_name(first),
	       cand_name(cursor - 1), secs(now_ns() - start_ns));
}

/* --only EXP[,EXP...]: run these experiments only (all without it). */
static const char *only_spec;

static int selected(const char *name)
{
	size_t len = strlen(name);
	const char *p;

	if (!only_spec)
		return 1;
	for (p = only_spec; (p = strstr(p, name)); p += len)
		if ((p == only_spec || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

/* A call's cost as @path (kprobe_bench_gp's) reads it, or -1. */
static long hit_cost(const char *path)
{
	char buf[32];
	long v;

	if (read_small(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%ld", &v) != 1)
		return -1;
	return v;
}

/*
 * --hit: what a perf kprobe event at @func's entry adds to a call, alone
 * and with the BPF program, as @path measures it on CPU 0, where the
 * event counts.
 */
static int hit_main(char *func, const char *path)
{
	long base, event, bpf;
	const char *why;
	cpu_set_t cpus;
	int fd;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	why = find_pmu();
	if (!why && sched_setaffinity(0, sizeof(cpus), &cpus))
		why = "sched_setaffinity(CPU 0) failed";
	if (!why)
		why = load_bpf();
	if (why) {
		printf("BENCH-SKIP hit_perf_entry all all %s\n", why);
		return 1;
	}
	base = hit_cost(path);
	fd = perf_open(func, 0, 0);
	if (base < 0 || fd < 0) {
		printf("BENCH-SKIP hit_perf_entry all all %s: %s\n",
		       base < 0 ? path : "perf_event_open", strerror(errno));
		return 1;
	}
	event = hit_cost(path);
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		printf("BENCH-SKIP hit_perf_entry_bpf all all PERF_EVENT_IOC_SET_BPF: %s\n",
		       strerror(errno));
		close(fd);
		return 1;
	}
	bpf = hit_cost(path);
	close(fd);
	if (event < 0 || bpf < 0) {
		printf("BENCH-SKIP hit_perf_entry all all %s unreadable with the event\n", path);
		return 1;
	}
	printf("BENCH hit_perf_entry_base %ld\n", base);
	printf("BENCH hit_perf_entry_event %ld\n", event - base);
	printf("BENCH hit_perf_entry_bpf %ld\n", bpf - base);
	return 0;
}

int main(int argc, char **argv)
{
	int sizes[MAX_SIZES], nr_sizes = 0, reps = 3, budget = 1500, maxn = 0;
	int i, j, rep, bodies = 0, from = 0;
	uint64_t rep_start = 0;
	const char *why, *no_pmu, *no_bpf, *no_multi, *no_events, *no_floor;
	int planned = 0, fit = 0, nr_exps = 0;
	long need = 0, taken = 0;
	char *s, *end, *prog = argv[0];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "--hit"))
		return hit_main(argv[2], argv[3]);
	if (argc > 2 && !strcmp(argv[1], "--avoid")) {
		avoid_spec = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "--only")) {
		only_spec = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "--from")) {
		from = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s [--avoid SYM+COUNT[,...]] [--only EXP[,...]] [--from K]"
			" N[,N...] [REPS"
			" [BUDGET_SECONDS]]\n"
			"       %s [--avoid SYM+COUNT[,...]] --list N\n", prog, prog);
		return 2;
	}
	if (!strcmp(argv[1], "--list")) {
		int n = argc > 2 ? atoi(argv[2]) : 0;

		why = read_functions(&bodies);
		if (why) {
			printf("%s\n", why);
			return 1;
		}
		for (i = 0; i < n && i < nr_order; i++)
			printf("%s %ld\n", cands[order[i]].name, cands[order[i]].body);
		return 0;
	}
	for (s = argv[1]; *s && nr_sizes < MAX_SIZES; s = *end ? end + 1 : end) {
		long v = strtol(s, &end, 10);

		if (end == s || (*end && *end != ',') || v < 1 || v > MAX_N) {
			fprintf(stderr, "%s: sizes: 1 to %d, comma-separated\n", prog, MAX_N);
			return 2;
		}
		sizes[nr_sizes++] = v;
		if (v > maxn)
			maxn = v;
	}
	if (argc > 2 && argv[2][0])
		reps = atoi(argv[2]);
	if (argc > 3 && argv[3][0])
		budget = atoi(argv[3]);
	if (reps < 1 || budget < 0) {
		fprintf(stderr, "%s: REPS at least 1, BUDGET not negative\n", prog);
		return 2;
	}
	start_ns = now_ns();
	printf("clients: sizes %s, %d repetitions, budget %d s\n", argv[1], reps, budget);

	evs = calloc(maxn, sizeof(*evs));
	if (!evs) {
		printf("BENCH-SKIP all all all out of memory\n");
		return 1;
	}
	raise_nofile(maxn);
	have_gp = !access(GP_FILE, R_OK);
	if (!have_gp)
		printf("BENCH-SKIP gp all all no %s (kprobe_bench_gp.ko): %s\n", GP_FILE,
		       strerror(errno));
	why = read_functions(&bodies);
	if (why) {
		printf("BENCH-SKIP all all all %s\n", why);
		return 1;
	}
	/* --from K: the first K candidates left alone, as if used before. */
	if (from > 0) {
		cursor = from < nr_order ? from : nr_order;
		printf("clients: --from %d: the measurements start at candidate %d, %s\n", from,
		       cursor, cand_name(cursor));
	}
	base_probes = count_lines(KPROBE_LIST);
	if (base_probes < 0)
		printf("clients: no %s (%s): 1 s between measurements\n", KPROBE_LIST,
		       strerror(errno));
	no_pmu = find_pmu();
	no_bpf = no_pmu ? NULL : load_bpf();
	no_multi = load_multi_bpf();
	no_events = check_events();
	no_floor = find_floor_tp();
	for (i = 0; i < NR_EXPS; i++) {
		struct experiment *e = &exps[i];

		if (e->kind == PERF && no_pmu)
			e->skip = no_pmu;
		else if (e->kind == PERF && e->bpf != NO_BPF && no_bpf)
			e->skip = no_bpf;
		else if (e->kind == PERF && e->ret && !retprobe_bit)
			e->skip = "no " PMU "/format/retprobe";
		else if (e->kind == PERF && e->site == BODY && !bodies)
			e->skip = "no body offsets (needs available_filter_functions_addrs"
				  " and kallsyms addresses)";
		else if (e->kind == MULTI && no_multi)
			e->skip = no_multi;
		else if (e->kind == PERF_FLOOR && no_floor)
			e->skip = no_floor;
		else if (e->kind != PERF && e->kind != MULTI && e->kind != PERF_FLOOR &&
			 no_events)
			e->skip = no_events;
		else if (!selected(e->name))
			e->skip = "not selected (--only)";
		if (e->skip)
			printf("BENCH-SKIP %s all all %s\n", e->name, e->skip);
		else
			nr_exps++;
	}
	/*
	 * Fresh functions the planned measurements need (refused ones come on
	 * top), and how many of the measurements the functions there are will
	 * serve, in the order they run (one that finds fewer than N left takes
	 * none and is skipped).
	 */
	for (rep = 0; rep < reps; rep++)
		for (j = 0; j < nr_sizes; j++)
			for (i = 0; i < NR_EXPS; i++) {
				if (exps[i].skip || exps[i].kind == PERF_FLOOR)
					continue;
				planned++;
				need += sizes[j];
				if (nr_order - taken >= sizes[j]) {
					taken += sizes[j];
					fit++;
				}
			}
	printf("clients: fresh functions: %d measurements (%d repetition(s) x %d"
	       " experiment(s) x %d size(s)) need %ld, and those refused on the way;"
	       " %d available\n", planned, reps, nr_exps, nr_sizes, need, nr_order);
	if (fit < planned)
		printf("clients: not enough fresh functions: about %d of the %d measurements"
		       " will run, the others are skipped (" NO_FRESH ")\n", fit, planned);

	for (rep = 0; rep < reps; rep++) {
		uint64_t t = now_ns();

		if (rep && t - start_ns + (t - rep_start) > (uint64_t)budget * 1000000000ULL) {
			printf("clients: %.0f s in, the last repetition took %.0f s: another"
			       " would end past the budget of %d s; stopping after %d"
			       " repetition(s)\n", secs(t - start_ns), secs(t - rep_start),
			       budget, rep);
			break;
		}
		rep_start = t;
		for (j = 0; j < nr_sizes; j++)
			for (i = 0; i < NR_EXPS; i++)
				if (!exps[i].skip)
					measure(&exps[i], sizes[j], rep, reps);
	}
	if (prog_fd >= 0)
		close(prog_fd);
	if (multi_prog_fd >= 0)
		close(multi_prog_fd);
	printf("clients: %d of %d fresh functions used (refused and skipped ones"
	       " included), %d left\n", cursor, nr_order, nr_order - cursor);
	printf("clients: done, %.0f s\n", secs(now_ns() - start_ns));
	return 0;
}
