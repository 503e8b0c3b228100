// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_clients: what attaching and detaching kprobes costs when it is
 * done the way real clients (bpftrace and libbpf, perf, pwru, Tetragon)
 * do it: one event at a time, each on a function of its own, opened one
 * after the other and then closed one after the other. guest/bench runs
 * it on both make bench kernels; bench-report.py compares them.
 *
 * Usage: kprobe_clients SIZES [REPS [BUDGET]]
 *   SIZES   comma-separated numbers N of events (distinct functions)
 *   REPS    repetitions of every measurement (default 3)
 *   BUDGET  seconds (virtual): a repetition after the first starts only
 *           if it should end within this time from the start, judging by
 *           the last one (default 1500); the first always runs whole
 * kprobe_clients --list N prints the first N functions it would try,
 * with their body offsets, and probes nothing.
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
 *                           the same functions at the instruction after
 *                           their ftrace site (a breakpoint, optimized or
 *                           not: the kernel decides)
 *   events_remove           tracefs kprobe_events: N "p:kpbench/fK FUNC"
 *                           lines written one at a time, then N
 *                           "-:kpbench/fK" lines, one at a time
 *   events_clear            the same N lines, then one truncating open
 *                           (echo > kprobe_events)
 *   multi_entry             not one at a time: one BPF kprobe_multi link
 *                           (BPF_LINK_CREATE, BPF_TRACE_KPROBE_MULTI, by
 *                           name) over the same N functions, then the
 *                           link closed: what the batched interface
 *                           costs per function, for comparison
 * Every repetition runs every experiment for every N before the next
 * one starts, so that slow drifts spread over all of them alike.
 *
 * As libbpf does: a perf event is opened for all tasks on CPU 0, enabled
 * (PERF_EVENT_IOC_ENABLE) after its program is attached, and disabled
 * (PERF_EVENT_IOC_DISABLE) before it is closed. One program serves all
 * events. Attach time is the sum over the events that opened (the
 * attempts the kernel refused are counted, not timed); detach time is
 * the wall time of the whole detach phase.
 *
 * Output: one line per figure, for bench-report.py, after guest/bench's
 * "BENCH-RUN clients":
 *   BENCH cl_<exp>_<N>_r<rep>_<metric> <value>
 * metrics: events (opened; N), refused (functions the kernel refused on
 * the way), attach_ns, detach_ns (CLOCK_MONOTONIC), attach_tsc,
 * detach_tsc (TSC cycles), and gp_<flavour>: grace periods completed
 * during the detach phase, from kprobe_bench_gp.ko's debugfs file (rcu,
 * rcu_exp, srcu_tp, tasks_trace, tasks_rude). A measurement that failed
 * prints no figure, but
 *   BENCH-SKIP <exp> <N|all> <rep|all> <reason>
 * and so does an experiment this kernel cannot run (no kprobe PMU, no
 * BPF, no tracefs). Progress lines start with "clients:".
 *
 * Under QEMU -icount shift=0 the guest's time is virtual: an instruction
 * is 1 ns, and idle time (most of a grace period) passes at real speed.
 * The bench kernels' clocksource is the TSC ("Switched to clocksource
 * tsc" on their consoles), so CLOCK_MONOTONIC is computed from the same
 * counter as the TSC figures: they should agree, and show it if the
 * clocksource ever changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
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
/* x86's ftrace site is one 5-byte nop (MCOUNT_INSN_SIZE). */
#define FTRACE_INSN	5
/* An ftrace site further in than this is not right after an ENDBR. */
#define MAX_FTRACE_OFF	16
/* Give up on an experiment when this many functions in a row are refused. */
#define MAX_REFUSED_RUN	200
/* ENOTSUPP, the kernel's own, which the uapi headers do not define. */
#define ENOTSUPP_KERNEL	524

enum site { ENTRY, BODY };
enum bpf_how { NO_BPF, BPF_IOCTL, BPF_LINK };
enum kind { PERF, EVENTS_REMOVE, EVENTS_CLEAR, MULTI };

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
	{ "multi_entry", MULTI, ENTRY, 0, BPF_LINK, 1, NULL },
};
#define ARRAY_SIZE(a)	(int)(sizeof(a) / sizeof((a)[0]))
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

/* What this kernel has. */
static int pmu_type = -1;
static uint64_t retprobe_bit;
static int prog_fd = -1;
static int multi_prog_fd = -1;	/* the same program, for kprobe_multi */
static int have_gp;

static uint64_t start_ns;

struct result {
	int events, refused;
	uint64_t attach_ns, attach_tsc, detach_ns, detach_tsc;
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

static uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc" : "=a" (lo), "=d" (hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
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
 * jiffies and a grace period after unregister_kprobe() returns (and a
 * probe registered again at the address before that takes another path;
 * the body experiments probe the same addresses), out of kprobes/list's
 * sight. So: at least 500 ms, and until kprobes/list is as long as
 * before the first measurement, at most 10 s; 1 s without kprobes/list.
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

/* kprobe_multi needs CONFIG_FPROBE, and a program loaded for it. */
static const char *load_multi_bpf(void)
{
	static char why[160];

	multi_prog_fd = load_prog(BPF_TRACE_KPROBE_MULTI);
	if (multi_prog_fd < 0) {
		snprintf(why, sizeof(why), "BPF_PROG_LOAD(BPF_PROG_TYPE_KPROBE,"
			 " BPF_TRACE_KPROBE_MULTI): %s", strerror(errno));
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

static int matches(const char *name, const char *const *words, int n, int prefix)
{
	int i;

	for (i = 0; i < n; i++)
		if (prefix ? !strncmp(name, words[i], strlen(words[i])) :
			     !!strstr(name, words[i]))
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
	unsigned long addr;
	int k, pass, nr_cold = 0, with_addrs = 1;
	FILE *f;

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
	f = with_addrs ? fopen("/proc/kallsyms", "re") : NULL;
	while (f && getline(&line, &cap, f) > 0) {
		if (strchr(line, '['))
			continue;
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
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
			order[nr_order++] = k;
		}
		if (!pass)
			nr_cold = nr_order;
	}
	printf("clients: %d functions in available_filter_functions, %d to try (%d of"
	       " cold subsystems first), %d with a body offset%s\n", nr_cands, nr_order, nr_cold,
	       *bodies, with_addrs ? "" : " (no available_filter_functions_addrs)");
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

	for (c = 0; i < n && c < nr_order; c++) {
		func = cands[order[c]].name;
		off = e->site == BODY ? cands[order[c]].body : 0;
		if (off < 0)
			continue;
		evs[i].fd = evs[i].link = -1;
		t0 = now_ns();
		c0 = rdtsc_ordered();
		fd = perf_open(func, off, e->ret);
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
		c1 = rdtsc_ordered();
		t1 = now_ns();
		r->attach_ns += t1 - t0;
		r->attach_tsc += c1 - c0;
		i++;
	}
	if (i < n)
		return fail(r, "only %d of %d functions accepted (%d refused)", i, n,
			    r->refused);
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
		c0 = rdtsc_ordered();
		for (i = 0; i < n; i++) {
			int e1 = detach_one(&evs[i], &what);

			if (e1 && !err)
				err = e1;
		}
		r->detach_tsc = rdtsc_ordered() - c0;
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
	c0 = rdtsc_ordered();
	set_go(1);
	for (i = 0; i < e->closers; i++)
		pthread_join(cl[i].thread, NULL);
	r->detach_tsc = rdtsc_ordered() - c0;
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

static int events_add(int n, struct result *r)
{
	int fd, i = 0, c, err, run = 0;
	uint64_t t0, c0, c1, t1;
	char line[320];

	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "open(%s): %s", KPROBE_EVENTS, strerror(errno));
	for (c = 0; i < n && c < nr_order; c++) {
		snprintf(line, sizeof(line), "p:kpbench/f%d %s\n", i, cands[order[c]].name);
		t0 = now_ns();
		c0 = rdtsc_ordered();
		if (write_line(fd, line)) {
			err = errno;
			if (!refusal(err)) {
				close(fd);
				return fail(r, "write(%s, \"p:kpbench/f%d %s\"): %s",
					    KPROBE_EVENTS, i, cands[order[c]].name, strerror(err));
			}
			r->refused++;
			if (++run == MAX_REFUSED_RUN) {
				close(fd);
				return fail(r, "%d functions refused in a row, the last (%s): %s",
					    run, cands[order[c]].name, strerror(err));
			}
			continue;
		}
		c1 = rdtsc_ordered();
		t1 = now_ns();
		run = 0;
		r->attach_ns += t1 - t0;
		r->attach_tsc += c1 - c0;
		r->events = ++i;
	}
	if (close(fd))
		return fail(r, "close(%s): %s", KPROBE_EVENTS, strerror(errno));
	if (i < n)
		return fail(r, "only %d of %d functions accepted (%d refused)", i, n,
			    r->refused);
	return 0;
}

static int events_remove(int n, struct result *r)
{
	int fd, i, err = 0;
	uint64_t t0, c0;
	char line[64];

	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "open(%s): %s", KPROBE_EVENTS, strerror(errno));
	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = rdtsc_ordered();
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "-:kpbench/f%d\n", i);
		if (write_line(fd, line) && !err) {
			err = errno;
			fail(r, "write(%s, \"-:kpbench/f%d\"): %s", KPROBE_EVENTS, i,
			     strerror(err));
		}
	}
	r->detach_tsc = rdtsc_ordered() - c0;
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
	c0 = rdtsc_ordered();
	fd = open(KPROBE_EVENTS, O_WRONLY | O_TRUNC | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0 && close(fd))
		err = errno;
	r->detach_tsc = rdtsc_ordered() - c0;
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

	ret = events_add(n, r);
	if (!ret)
		ret = e->kind == EVENTS_REMOVE ? events_remove(n, r) : events_clear(r);
	/* Nothing of ours may stay behind, whatever happened. */
	if (read_small(KPROBE_EVENTS, buf, sizeof(buf)) < 0)
		return fail(r, "reading %s: %s", KPROBE_EVENTS, strerror(errno));
	if (buf[0]) {
		if (events_truncate())
			return fail(r, "clearing %s: %s", KPROBE_EVENTS, strerror(errno));
		return fail(r, "events left in %s after the run", KPROBE_EVENTS);
	}
	return ret;
}

/* --- kprobe_multi ---------------------------------------------------------------- */

/*
 * One link over the first @n candidates (the functions perf_entry
 * probes); the kernel refuses the whole link if it refuses one of them.
 */
static int run_multi(int n, struct result *r)
{
	const char **syms = calloc(n, sizeof(*syms));
	union bpf_attr attr;
	uint64_t t0, c0;
	int i, link;

	if (!syms)
		return fail(r, "out of memory");
	for (i = 0; i < n && i < nr_order; i++)
		syms[i] = cands[order[i]].name;
	if (i < n) {
		free(syms);
		return fail(r, "only %d functions to probe", i);
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = multi_prog_fd;
	attr.link_create.attach_type = BPF_TRACE_KPROBE_MULTI;
	attr.link_create.kprobe_multi.syms = (uint64_t)(uintptr_t)syms;
	attr.link_create.kprobe_multi.cnt = n;
	t0 = now_ns();
	c0 = rdtsc_ordered();
	link = sys_bpf(BPF_LINK_CREATE, &attr);
	r->attach_tsc = rdtsc_ordered() - c0;
	r->attach_ns = now_ns() - t0;
	free(syms);
	if (link < 0)
		return fail(r, "BPF_LINK_CREATE(BPF_TRACE_KPROBE_MULTI, %d functions): %s", n,
			    strerror(errno));
	r->events = n;
	gp_read(&r->gp0);
	t0 = now_ns();
	c0 = rdtsc_ordered();
	i = close(link);
	r->detach_tsc = rdtsc_ordered() - c0;
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
	int i, ret, len = 0;

	settle();
	memset(&r, 0, sizeof(r));
	if (e->kind == PERF)
		ret = run_perf(e, n, &r);
	else if (e->kind == MULTI)
		ret = run_multi(n, &r);
	else
		ret = run_events(e, n, &r);
	if (ret) {
		printf("BENCH-SKIP %s %d %d %s\n", e->name, n, rep, r.why);
		printf("clients: rep %d/%d N=%d %s failed: %s\n", rep + 1, reps, n, e->name,
		       r.why);
		return;
	}
	report(e->name, n, rep, "events", r.events);
	report(e->name, n, rep, "refused", r.refused);
	report(e->name, n, rep, "attach_ns", r.attach_ns);
	report(e->name, n, rep, "attach_tsc", r.attach_tsc);
	report(e->name, n, rep, "detach_ns", r.detach_ns);
	report(e->name, n, rep, "detach_tsc", r.detach_tsc);
	for (i = 0; i < NR_GP; i++) {
		char metric[32];

		if (!(r.gp0.have & r.gp1.have & (1U << i)))
			continue;
		snprintf(metric, sizeof(metric), "gp_%s", gp_names[i]);
		report(e->name, n, rep, metric, r.gp1.v[i] - r.gp0.v[i]);
		if (len < (int)sizeof(gps))
			len += snprintf(gps + len, sizeof(gps) - len, " %s %lu", gp_names[i],
					r.gp1.v[i] - r.gp0.v[i]);
	}
	printf("clients: rep %d/%d N=%d %s: %d events (%d refused), attach %.3f s,"
	       " detach %.3f s;%s; %.0f s in\n", rep + 1, reps, n, e->name, r.events,
	       r.refused, secs(r.attach_ns), secs(r.detach_ns), gps[0] ? gps : " no GP counts",
	       secs(now_ns() - start_ns));
}

int main(int argc, char **argv)
{
	int sizes[MAX_SIZES], nr_sizes = 0, reps = 3, budget = 1500, maxn = 0;
	int i, j, rep, bodies = 0;
	uint64_t rep_start = 0;
	const char *why, *no_pmu, *no_bpf, *no_multi, *no_events;
	char *s, *end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s N[,N...] [REPS [BUDGET_SECONDS]]\n"
			"       %s --list N\n", argv[0], argv[0]);
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
			fprintf(stderr, "%s: sizes: 1 to %d, comma-separated\n", argv[0], MAX_N);
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
		fprintf(stderr, "%s: REPS at least 1, BUDGET not negative\n", argv[0]);
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
	base_probes = count_lines(KPROBE_LIST);
	if (base_probes < 0)
		printf("clients: no %s (%s): 1 s between measurements\n", KPROBE_LIST,
		       strerror(errno));
	no_pmu = find_pmu();
	no_bpf = no_pmu ? NULL : load_bpf();
	no_multi = load_multi_bpf();
	no_events = check_events();
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
		else if (e->kind != PERF && e->kind != MULTI && no_events)
			e->skip = no_events;
		if (e->skip)
			printf("BENCH-SKIP %s all all %s\n", e->name, e->skip);
	}

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
	printf("clients: done, %.0f s\n", secs(now_ns() - start_ns));
	return 0;
}
