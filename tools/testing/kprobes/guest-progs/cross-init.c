// SPDX-License-Identifier: GPL-2.0
/*
 * init for the guests of the other architectures (arm64, riscv64), which
 * have no busybox here: the selftests of run-tests that are not x86's,
 * in C, printed as KTAP ("kprobes_selftests"), after our KUnit suite and
 * the tree's, loaded as modules; then power off.
 * With "kpdemo" on the kernel command line (make demo ARCH=...), it shows
 * the samples at work instead.
 *
 * The initramfs holds this program as /init, and in /modules the kprobes
 * sample modules and both KUnit suites.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define D "/sys/kernel/debug/kprobes"
#define T "/sys/kernel/tracing"

static int nr_tests;

/* Read a whole (small) file into a static buffer; NULL on error. */
static char *slurp(const char *path)
{
	static char buf[1 << 20];
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return NULL;
	buf[len] = 0;
	return buf;
}

/* Write @s to @path (O_APPEND with @append); 0 or -errno. */
static int put(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int contains(const char *path, const char *what)
{
	char *s = slurp(path);

	return s && strstr(s, what);
}

static void fork_some(int n)
{
	while (n--) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

/* Times @what appears in the kernel log. */
static int count_log(const char *what)
{
	static char buf[1 << 20];
	int len = klogctl(3, buf, sizeof(buf) - 1), n = 0;
	char *p = buf;

	if (len < 0)
		return -1;
	buf[len] = 0;
	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	return n;
}

/* Hits and misses of kprobe event @name (kprobe_profile); -1 if absent. */
static long event_count(const char *name, int missed_ones)
{
	char *s = slurp(T "/kprobe_profile"), *line;
	char ev[128];
	long hits, missed;

	for (line = s ? strtok(s, "\n") : NULL; line; line = strtok(NULL, "\n"))
		if (sscanf(line, " %127s %ld %ld", ev, &hits, &missed) == 3 &&
		    !strcmp(ev, name))
			return missed_ones ? missed : hits;
	return -1;
}

static long event_hits(const char *name)
{
	return event_count(name, 0);
}

static int insmod(const char *name, const char *params)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), "/modules/%s.ko", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	return ret ? -errno : 0;
}

static int rmmod(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static void check(const char *name, int ok)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr_tests, name);
	fflush(stdout);
}

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int t_sample(void)
{
	int before, after;

	if (insmod("kprobe_example", "symbol=kernel_clone"))
		return 0;
	before = count_log("<kernel_clone> pre_handler");
	fork_some(5);
	after = count_log("<kernel_clone> pre_handler");
	rmmod("kprobe_example");
	note("pre_handler lines %d -> %d", before, after);
	return after - before >= 5;
}

static int t_sample_ret(void)
{
	int before, after;

	if (insmod("kretprobe_example", "func=kernel_clone"))
		return 0;
	before = count_log("kernel_clone returned");
	fork_some(5);
	after = count_log("kernel_clone returned");
	rmmod("kretprobe_example");
	note("return lines %d -> %d", before, after);
	return after - before >= 5;
}

static int t_events(void)
{
	long k0, r0, k1, r1;

	if (put(T "/kprobe_events", "p:kptest/clone kernel_clone\n", 1) ||
	    put(T "/kprobe_events", "r:kptest/cloneret kernel_clone ret=$retval\n", 1) ||
	    put(T "/events/kptest/enable", "1", 0))
		return 0;
	k0 = event_hits("clone");
	r0 = event_hits("cloneret");
	fork_some(5);
	k1 = event_hits("clone");
	r1 = event_hits("cloneret");
	note("hits k %ld -> %ld, r %ld -> %ld", k0, k1, r0, r1);
	return k0 >= 0 && r0 >= 0 && k1 - k0 >= 5 && r1 - r0 >= 5 &&
	       contains(T "/trace", "cloneret:") && contains(D "/list", "kernel_clone");
}

/* With the events above enabled: 0 disarms everything, 1 re-arms. */
static int t_enabled(void)
{
	long before, mid, after;

	before = event_hits("clone");
	if (put(D "/enabled", "0", 0) || !contains(D "/enabled", "0"))
		return 0;
	fork_some(5);
	mid = event_hits("clone");
	put(D "/enabled", "1", 0);
	fork_some(5);
	after = event_hits("clone");
	note("hits %ld, %ld while off, %ld back on", before, mid, after);
	return before == mid && after - mid >= 5 && contains(D "/enabled", "1");
}

static int t_events_off(void)
{
	return !put(T "/events/kptest/enable", "0", 0) &&
	       !put(T "/kprobe_events", "-:kptest/clone\n", 1) &&
	       !put(T "/kprobe_events", "-:kptest/cloneret\n", 1) &&
	       !contains(D "/list", "kernel_clone");
}

/*
 * A probe on a module's function goes [GONE] when the module does. The
 * function is the sample's post_handler: hit inside the sample's probe,
 * it counts as missed.
 */
static int t_module_gone(void)
{
	int gone, ok;

	if (insmod("kprobe_example", "symbol=kernel_clone") ||
	    put(T "/kprobe_events", "p:kptest/modfn kprobe_example:after\n", 1) ||
	    put(T "/events/kptest/modfn/enable", "1", 0)) {
		rmmod("kprobe_example");
		return 0;
	}
	fork_some(2);
	ok = event_count("modfn", 1) >= 2 && event_hits("modfn") == 0;
	put(T "/events/kptest/modfn/enable", "0", 0);
	rmmod("kprobe_example");
	gone = contains(D "/list", "[GONE]") != 0;
	note("module function missed in the handler: %d, [GONE] after unload: %d",
	     ok, gone);
	return !put(T "/kprobe_events", "-:kptest/modfn\n", 1) && ok && gone &&
	       !contains(D "/list", "GONE");
}

/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait up to @secs seconds for @path to contain @what, or not (@want 0). */
static int wait_for(const char *path, const char *what, int want, int secs)
{
	double end = now() + secs;

	do {
		if (!!contains(path, what) == want)
			return 1;
		usleep(100 * 1000);
	} while (now() < end);
	return 0;
}

#define OPT_SYSCTL "/proc/sys/debug/kprobes-optimization"
#define CALLS "/sys/module/kprobe_callee/parameters/calls"

/* Run kprobe_callee_fn() @n times: 1 when every result was right. */
static int callee_calls(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return !put(CALLS, buf, 0);
}

/* Its address in kallsyms, 0 when not found. */
static unsigned long callee_addr(void)
{
	char *s = slurp("/proc/kallsyms"), *line;
	unsigned long a;
	char type, name[128];

	for (line = s ? strtok(s, "\n") : NULL; line; line = strtok(NULL, "\n"))
		if (sscanf(line, "%lx %c %127s", &a, &type, name) == 3 &&
		    !strcmp(name, "kprobe_callee_fn"))
			return a;
	return 0;
}

/* kprobe_callee_fn's first instruction word now; 0 when unreadable. */
static unsigned long callee_text(void)
{
	char *s = slurp("/sys/module/kprobe_callee/parameters/text");

	return s ? strtoul(s, NULL, 16) : 0;
}

/*
 * Wait up to @secs seconds until the function's first word is no longer
 * @from; return it.
 */
static unsigned long text_after(unsigned long from, int secs)
{
	double end = now() + secs;

	while (callee_text() == from && now() < end)
		usleep(10 * 1000);
	return callee_text();
}

/*
 * Where there is an optimizer, wait until the list shows the probes
 * [OPTIMIZED] (which it does from when they are queued), or no longer,
 * and then until the function's first word has changed from @from: the
 * optimizer writes the jump a little later.
 */
static int wait_optimized(int want, unsigned long from)
{
	double start = now();
	unsigned long w;

	if (!wait_for(D "/list", "[OPTIMIZED]", want, 10))
		return 0;
	w = text_after(from, 20);
	note("%s after %.1f s", want ? "optimized" : "unoptimized", now() - start);
	return w != from;
}

#define PRE_LINE "<kprobe_callee_fn> pre_handler"

/* @ok, noting @what when it is not: for tests of many steps. */
static int step(int ok, const char *what)
{
	if (!ok)
		note("failed: %s", what);
	return ok;
}

/*
 * Where the arch optimizes with the tree's optprobe code (arm here): the
 * sample's probe (no post_handler) on kprobe_callee_fn(), put there with
 * the sysctl at 0, is a breakpoint; at 1 it is optimized (its first word
 * is neither the original nor the breakpoint), at 0 a breakpoint again,
 * at 1 optimized again, and every call runs the handler and gives the
 * right result. Unloading the sample while its probe is optimized takes
 * the jump out (the retiring path), leaving the original word and the
 * function working. Returns -1 where there is no optimizer.
 */
static int t_optimized(void)
{
	unsigned long w_orig, w_bp, w_opt, w_bp2, w_opt2, w_end;
	int ok, h[5], i;

	if (access(OPT_SYSCTL, F_OK))
		return -1;
	if (insmod("kprobe_callee", ""))
		return 0;
	w_orig = callee_text();
	ok = !put(OPT_SYSCTL, "0", 0);
	if (insmod("kprobe_example", "symbol=kprobe_callee_fn post=0")) {
		put(OPT_SYSCTL, "1", 0);
		rmmod("kprobe_callee");
		return 0;
	}
	w_bp = text_after(w_orig, 5);
	h[0] = count_log(PRE_LINE);
	ok &= callee_calls(10);
	h[1] = count_log(PRE_LINE);
	ok &= !put(OPT_SYSCTL, "1", 0) && step(wait_optimized(1, w_bp), "optimized");
	w_opt = callee_text();
	ok &= step(callee_calls(10), "calls optimized");
	h[2] = count_log(PRE_LINE);
	ok &= !put(OPT_SYSCTL, "0", 0) && step(wait_optimized(0, w_opt), "unoptimized");
	w_bp2 = callee_text();
	ok &= step(callee_calls(10), "calls unoptimized");
	h[3] = count_log(PRE_LINE);
	ok &= !put(OPT_SYSCTL, "1", 0) && step(wait_optimized(1, w_bp2), "optimized again");
	w_opt2 = callee_text();
	ok &= callee_calls(10);
	h[4] = count_log(PRE_LINE);
	ok &= !rmmod("kprobe_example");
	w_end = text_after(w_opt2, 5);
	ok &= callee_calls(10) && wait_for(D "/list", "kprobe_callee_fn", 0, 10);
	note("first word: %08lx, breakpoint %08lx, optimized %08lx, %08lx, %08lx, after %08lx",
	     w_orig, w_bp, w_opt, w_bp2, w_opt2, w_end);
	note("hits of 10 each: breakpoint %d, optimized %d, %d, %d", h[1] - h[0],
	     h[2] - h[1], h[3] - h[2], h[4] - h[3]);
	ok &= w_bp != w_orig && w_opt != w_orig && w_opt != w_bp && w_bp2 == w_bp &&
	      w_opt2 == w_opt && w_end == w_orig;
	for (i = 1; i < 5; i++)
		ok &= h[i] - h[i - 1] == 10;
	return !rmmod("kprobe_callee") && ok;
}

/*
 * A probe on a module function stays registered, [GONE], when the module
 * goes; the module comes back at the same address and a probe event is
 * put there: the site is revived with the new text and, where there is
 * an optimizer, optimized again (its first word is neither the original
 * nor the breakpoint). The function must give its right result through
 * every hit.
 */
static int t_revive(void)
{
	int opt = !access(OPT_SYSCTL, F_OK), ok;
	unsigned long a, b, w_orig, w_bp, w_opt;
	long h;

	if (insmod("kprobe_callee", ""))
		return 0;
	a = callee_addr();
	if (insmod("kprobe_example", "symbol=kprobe_callee_fn post=0")) {
		rmmod("kprobe_callee");
		return 0;
	}
	ok = step(callee_calls(5), "calls before unloading") &&
	     step(!rmmod("kprobe_callee"), "rmmod") &&
	     step(contains(D "/list", "[GONE]"), "[GONE]") &&
	     step(!insmod("kprobe_callee", ""), "insmod again");
	b = callee_addr();
	w_orig = callee_text();
	if (a != b)
		note("kprobe_callee came back at %lx, not %lx: nothing to revive", b, a);
	if (opt)
		ok &= step(!put(OPT_SYSCTL, "0", 0), "sysctl 0");
	ok &= a == b &&
	      step(!put(T "/kprobe_events", "p:kptest/callee kprobe_callee:kprobe_callee_fn\n",
			1), "event") &&
	      step(!put(T "/events/kptest/callee/enable", "1", 0), "enable");
	w_bp = text_after(w_orig, 5);
	w_opt = w_bp;
	if (opt) {
		ok &= step(!put(OPT_SYSCTL, "1", 0), "sysctl 1") &&
		      step(wait_optimized(1, w_bp), "optimized");
		w_opt = callee_text();
		ok &= w_opt != w_orig;
	}
	note("revived site's first word: %08lx, breakpoint %08lx, now %08lx", w_orig, w_bp,
	     w_opt);
	ok &= step(w_bp != w_orig, "breakpoint") && step(callee_calls(5), "calls");
	h = event_hits("callee");
	note("revived site: %ld hits of 5, results %s", h, ok ? "right" : "wrong");
	put(T "/events/kptest/callee/enable", "0", 0);
	put(T "/kprobe_events", "-:kptest/callee\n", 1);
	ok &= h == 5 && callee_calls(5);
	ok &= !rmmod("kprobe_example") && !rmmod("kprobe_callee");
	return ok && !contains(D "/list", "kprobe_callee");
}

/* Print the kernel log's lines since the last call, and clear it. */
static void show_new_log(void)
{
	static char buf[1 << 20];
	int len = klogctl(4, buf, sizeof(buf) - 1);

	if (len > 0) {
		buf[len] = 0;
		fputs(buf, stdout);
	}
}

static void show_file(const char *title, const char *path)
{
	char *s = slurp(path);

	printf("### %s\n%s", title, s ? s : "(unreadable)\n");
}

/* make demo ARCH=...: what guest/demo shows on x86-64, for this arch. */
static void demo(void)
{
	klogctl(8, NULL, 1);	/* handlers' lines to the log, not the console */
	klogctl(5, NULL, 0);
	printf("### insmod kprobe_example.ko symbol=kernel_clone\n");
	if (insmod("kprobe_example", "symbol=kernel_clone"))
		printf("insmod failed: %s\n", strerror(errno));
	show_file("/sys/kernel/debug/kprobes/list", D "/list");
	printf("### forking three processes\n");
	fork_some(3);
	show_new_log();
	rmmod("kprobe_example");
	printf("### insmod kretprobe_example.ko func=kernel_clone\n");
	if (insmod("kretprobe_example", "func=kernel_clone"))
		printf("insmod failed: %s\n", strerror(errno));
	show_file("/sys/kernel/debug/kprobes/list", D "/list");
	printf("### forking three processes\n");
	fork_some(3);
	show_new_log();
	show_file("/sys/kernel/debug/kprobes/stats (hits, missed)", D "/stats");
	rmmod("kretprobe_example");
	show_new_log();
	printf("### done\n");
}

static void kunit_module(const char *name)
{
	if (insmod(name, ""))
		printf("# insmod %s.ko failed: %s\n", name, strerror(errno));
	rmmod(name);
}

static void mounts(void)
{
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
}

int main(void)
{
	char *s;
	int ret;

	mounts();
	setvbuf(stdout, NULL, _IOLBF, 0);
	s = slurp("/proc/cmdline");
	if (s && strstr(s, "kpdemo")) {
		demo();
		goto out;
	}
	/*
	 * Our suite, then the tree's: each prints its KTAP while it loads.
	 * Never both loaded: they name their targets alike.
	 */
	kunit_module("test_kprobes");
	kunit_module("test_kprobes_upstream");
	printf("# Subtest: kprobes_selftests\n");
	check("debugfs_files_exist", slurp(D "/list") && slurp(D "/enabled") &&
	      slurp(D "/blacklist"));
	s = slurp(D "/enabled");
	check("enabled_reads_1", s && !strcmp(s, "1\n"));
	s = slurp(D "/blacklist");
	check("blacklist_lists_entries", s && strchr(s, '\n'));
	check("sample_kprobe_fires", t_sample());
	check("sample_kretprobe_fires", t_sample_ret());
	check("kprobe_events_trace", t_events());
	check("enabled_knob_disarms_and_rearms", t_enabled());
	check("events_removed", t_events_off());
	check("enabled_rejects_garbage", put(D "/enabled", "banana", 0) < 0);
	check("events_refuse_unknown_symbol",
	      put(T "/kprobe_events", "p:kptest/bad no_such_symbol_for_kprobes\n", 1) < 0);
	check("module_probe_gone_on_unload", t_module_gone());
	check("gone_site_revived", t_revive());
	ret = t_optimized();
	if (ret < 0)
		printf("ok %d optimized_probe_event # SKIP no optimized probes on this arch\n",
		       ++nr_tests);
	else
		check("optimized_probe_event", ret);
	s = slurp(D "/list");
	check("list_empty_at_end", s && !*s);
out:
	printf("KPROBES-GUEST-DONE\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
