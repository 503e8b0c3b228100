// SPDX-License-Identifier: GPL-2.0
/*
 * /init of make bench-arm64's and make bench-riscv64's guests (static): load
 * /kprobe_bench_arch.ko, whose init prints the results on the console,
 * with the parameters of the kpb_args= boot option (which the kernel
 * hands to init in its environment), and unload it. Then, with the
 * kpb_clients= boot option (sizes, as make bench's kpbench_clients=;
 * kpb_clients_reps=, kpb_clients_budget=) and /bin/kprobe_clients
 * there, the clients run, as guest/bench runs it on x86-64: proc, sysfs,
 * debugfs and tracefs mounted, kprobe_bench_gp.ko loaded for its
 * grace-period counts, the console at warnings and worse (the kernel's
 * lines among the BENCH ones), "BENCH-RUN hits_perf" and kprobe_clients
 * --hit (a perf kprobe event at an entry of that module's, with and
 * without BPF), "BENCH-RUN clients", kprobe_clients, then "BENCH-RUN
 * end". Then power off. kpb_clients_only= selects the
 * clients' experiments (kprobe_clients --only), kpb_clients_from= where
 * in the list of functions they start (--from); with kpb_clients_alone=1
 * the module is not loaded, and only the clients run (a further sample
 * of them on a fresh boot).
 */
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define CLIENTS		"/bin/kprobe_clients"
#define GP_MODULE	"/kprobe_bench_gp.ko"

/*
 * What kprobe_bench_arch.ko probed in the kernel's text before the
 * clients run, which the clients leave out (kprobe_clients --avoid):
 * the entries layout walks the symbols from kernel_read() on, as many as
 * its "KPB-ENTRIES ... symbols=N" line says (at most KPB_MAX_TRIES,
 * 3000, when the line cannot be read); the coverage at most 100 from
 * each of its anchors (kernel_read, within the first, kstrtoull and
 * jiffies_to_msecs), and the hits are on jiffies_to_msecs() and
 * jiffies_to_usecs(), right after it.
 */
#define ENTRIES_MAX_WALK	3000
#define CLIENTS_AVOID		"kernel_read+%ld,kstrtoull+100,jiffies_to_msecs+100"

static void say(const char *msg)
{
	int fd = open("/dev/kmsg", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, msg, strlen(msg)) < 0)
			perror("kmsg");
		close(fd);
	}
}

/* A line on the console, where the clients' own lines go. */
static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		line("clients: cannot write %s", path);
	if (fd >= 0)
		close(fd);
}

static int load(const char *path, const char *args)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, args, 0);
	close(fd);
	return ret;
}

static void unload(const char *name)
{
	char msg[160];

	if (syscall(SYS_delete_module, name, O_NONBLOCK)) {
		snprintf(msg, sizeof(msg), "KPB-INIT %s not unloaded: %s\n", name,
			 strerror(errno));
		say(msg);
	}
}

static void mount_fs(const char *type, const char *dir)
{
	mkdir(dir, 0755);
	if (mount(type, dir, type, 0, NULL) && errno != EBUSY)
		line("clients: mount %s on %s: %s", type, dir, strerror(errno));
}

/* The symbols the module's entries layout walked, from the kernel's log. */
static long entries_walked(void)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *p, *last = NULL;
	long n = -1;

	buf = size > 0 ? malloc(size + 1) : NULL;
	if (!buf)
		return -1;
	size = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (size >= 0) {
		buf[size] = 0;
		for (p = buf; (p = strstr(p, "KPB-ENTRIES ")); p++)
			last = p;
		p = last ? strstr(last, " symbols=") : NULL;
		if (p)
			n = strtol(p + strlen(" symbols="), NULL, 10);
	}
	free(buf);
	return n;
}

/* Run kprobe_clients with @argv, and say how it ended if not well. */
static void run_clients(char **argv)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		execv(CLIENTS, argv);
		line("clients: exec " CLIENTS ": %s", strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		line("clients: fork: %s", strerror(errno));
	} else if (waitpid(pid, &status, 0) != pid) {
		line("clients: waitpid: %s", strerror(errno));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		line("clients: kprobe_clients ended with %s %d",
		     WIFEXITED(status) ? "status" : "signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
}

/* A perf kprobe event at an entry, with and without BPF (kprobe_clients --hit). */
static char *hit_argv[] = {
	"kprobe_clients", "--hit", "kpb_gp_entry", "/sys/kernel/debug/kprobe_bench_gp_hit", NULL
};

static void clients(const char *sizes, int alone)
{
	const char *reps = getenv("kpb_clients_reps");
	const char *budget = getenv("kpb_clients_budget");
	const char *only = getenv("kpb_clients_only");
	const char *from = getenv("kpb_clients_from");
	char avoid[128];
	char *argv[12];
	int gp, argc = 0;
	long walked;

	argv[argc++] = "kprobe_clients";
	/* Nothing probed the kernel's text before in a boot of the clients alone. */
	if (!alone) {
		walked = entries_walked();
		if (walked <= 0) {
			line("clients: no KPB-ENTRIES line in the kernel's log: avoiding %d"
			     " symbols from kernel_read on", ENTRIES_MAX_WALK);
			walked = ENTRIES_MAX_WALK;
		}
		snprintf(avoid, sizeof(avoid), CLIENTS_AVOID, walked);
		argv[argc++] = "--avoid";
		argv[argc++] = avoid;
	}
	if (only && *only) {
		argv[argc++] = "--only";
		argv[argc++] = (char *)only;
	}
	if (from && *from) {
		argv[argc++] = "--from";
		argv[argc++] = (char *)from;
	}
	argv[argc++] = (char *)sizes;
	argv[argc++] = (char *)(reps ? reps : "");
	argv[argc++] = (char *)(budget ? budget : "");
	argv[argc] = NULL;

	mount_fs("sysfs", "/sys");
	mount_fs("debugfs", "/sys/kernel/debug");
	mount_fs("tracefs", "/sys/kernel/tracing");
	gp = !load(GP_MODULE, "");
	if (!gp)
		line("clients: %s not loaded: %s", GP_MODULE, strerror(errno));
	/* Warnings and worse only: the kernel's lines among the BENCH ones. */
	write_file("/proc/sys/kernel/printk", "5");
	if (gp && !alone) {
		line("%s", "BENCH-RUN hits_perf");
		run_clients(hit_argv);
	}
	line("%s", "BENCH-RUN clients");
	run_clients(argv);
	write_file("/proc/sys/kernel/printk", "7");
	if (gp)
		unload("kprobe_bench_gp");
	line("%s", "BENCH-RUN end");
}

int main(void)
{
	const char *args = getenv("kpb_args");
	const char *sizes = getenv("kpb_clients");
	const char *alone_opt = getenv("kpb_clients_alone");
	int alone = alone_opt && *alone_opt == '1';
	char msg[256];
	int fd;

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	/* The kernel found no /dev/console in the initramfs: open it now. */
	fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	mount_fs("proc", "/proc");
	/* All of the kernel's lines, the module's KPB ones among them. */
	write_file("/proc/sys/kernel/printk", "7");
	if (alone) {
		say("KPB-INIT clients alone: module not loaded\n");
	} else if (load("/kprobe_bench_arch.ko", args ? args : "")) {
		snprintf(msg, sizeof(msg), "KPB-INIT module not loaded: %s\n",
			 strerror(errno));
		say(msg);
	} else {
		say("KPB-INIT module loaded\n");
		unload("kprobe_bench_arch");
	}
	if (sizes && *sizes && !access(CLIENTS, X_OK))
		clients(sizes, alone);
	else if (sizes && *sizes)
		line("clients: no " CLIENTS ": %s", strerror(errno));
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
