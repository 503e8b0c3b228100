// SPDX-License-Identifier: GPL-2.0
/*
 * The perf kprobe PMU and BPF kprobe programs against our kprobes, from
 * user space, the way perf and libbpf use them. Linked into
 * kprobes_selftests, whose perf and BPF selftests run it in a child
 * (on every architecture), and which runs it as a command too:
 *
 *   kprobes_selftests pmu count FUNC [ret]
 *        count this process's hits of FUNC's entry (or return) while it
 *        forks 5 times
 *   kprobes_selftests pmu bpf FUNC [ret]
 *        attach a BPF program that counts hits in an array map, fork 5
 *        times, read the map
 *   kprobes_selftests pmu churn FUNC ROUNDS
 *        two threads each open an event on FUNC (entry and return in
 *        turn, at an entry), attach the BPF program, and close it ROUNDS
 *        times, while two others call getppid() without pause: events
 *        closed while their handlers and programs run on other CPUs
 *
 * FUNC may be SYMBOL+OFFSET. Each exits 0 when at least 5 hits were seen.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define FORKS 5

static int read_int(const char *path, int *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int open_kprobe_event(char *func, int ret)
{
	struct perf_event_attr attr;
	char *plus = strchr(func, '+');
	unsigned long offset = 0;
	int type, fd;

	if (plus) {
		*plus = 0;
		offset = strtoul(plus + 1, NULL, 0);
	}
	if (read_int("/sys/bus/event_source/devices/kprobe/type", &type)) {
		perror("kprobe PMU type");
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = ret ? 1 : 0;	/* format/retprobe is config:0 */
	attr.config1 = (uint64_t)(uintptr_t)func;
	attr.config2 = offset;
	attr.sample_period = 1;
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		perror("perf_event_open(kprobe)");
	return fd;
}

static void fork_some(void)
{
	int i;

	for (i = 0; i < FORKS; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

static long bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* A BPF kprobe program that counts its runs in @map_fd's element 0. */
static int load_counter_prog(int map_fd)
{
	char log[4096] = "";
	union bpf_attr attr;
	int prog_fd;

	struct bpf_insn prog[] = {
		/* r1 = map */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		/* *(u32 *)(r10 - 4) = 0; r2 = r10 - 4 */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		/* if (r0) (*(u64 *)r0) += 1, atomically */
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = 0, .src_reg = 1,
		  .imm = BPF_ADD },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog_fd = bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0) {
		perror("BPF_PROG_LOAD");
		fprintf(stderr, "%s\n", log);
	}
	return prog_fd;
}

static int create_counter_map(void)
{
	union bpf_attr attr;
	int map_fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(uint32_t);
	attr.value_size = sizeof(uint64_t);
	attr.max_entries = 1;
	map_fd = bpf(BPF_MAP_CREATE, &attr);
	if (map_fd < 0)
		perror("BPF_MAP_CREATE");
	return map_fd;
}

static int read_counter(int map_fd, uint64_t *hits)
{
	union bpf_attr attr;
	uint32_t key = 0;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)hits;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		perror("BPF_MAP_LOOKUP_ELEM");
		return -1;
	}
	return 0;
}

static int count_with_bpf(int perf_fd, uint64_t *hits)
{
	int map_fd, prog_fd;

	map_fd = create_counter_map();
	if (map_fd < 0)
		return -1;
	prog_fd = load_counter_prog(map_fd);
	if (prog_fd < 0)
		return -1;
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		perror("PERF_EVENT_IOC_SET_BPF");
		return -1;
	}
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	fork_some();
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);

	if (read_counter(map_fd, hits))
		return -1;
	close(prog_fd);
	close(map_fd);
	return 0;
}

/* ---- churn ---------------------------------------------------------------- */

static volatile int churning;
static const char *churn_func;
static int churn_rounds, churn_prog;
static int churn_failed;

static void *call_getppid(void *arg __attribute__((unused)))
{
	while (churning)
		syscall(__NR_getppid);
	return NULL;
}

static void *open_and_close(void *arg __attribute__((unused)))
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	char func[128];
	int i, fd;

	for (i = 0; i < churn_rounds; i++) {
		snprintf(func, sizeof(func), "%s", churn_func);
		/* A return probe in every other round, at an entry only. */
		fd = open_kprobe_event(func, (i & 1) && !strchr(churn_func, '+'));
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, churn_prog) ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
			perror("churn: open, attach or enable");
			__atomic_store_n(&churn_failed, 1, __ATOMIC_RELAXED);
			if (fd >= 0)
				close(fd);
			break;
		}
		nanosleep(&pause, NULL);
		/* Closed enabled, its program running on the other CPUs. */
		close(fd);
	}
	return NULL;
}

static int churn(const char *func, int rounds, uint64_t *hits)
{
	pthread_t callers[2], closers[2];
	int map_fd, i;

	map_fd = create_counter_map();
	if (map_fd < 0)
		return -1;
	churn_prog = load_counter_prog(map_fd);
	if (churn_prog < 0)
		return -1;
	churn_func = func;
	churn_rounds = rounds;
	churning = 1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&callers[i], NULL, call_getppid, NULL))
			return -1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&closers[i], NULL, open_and_close, NULL))
			return -1;
	for (i = 0; i < 2; i++)
		pthread_join(closers[i], NULL);
	churning = 0;
	for (i = 0; i < 2; i++)
		pthread_join(callers[i], NULL);
	if (churn_failed || read_counter(map_fd, hits))
		return -1;
	close(churn_prog);
	close(map_fd);
	return 0;
}

/* The command above, argv[0] being "pmu": 0, 1 (too few hits, or an error) or 2. */
int kprobe_pmu_main(int argc, char **argv)
{
	uint64_t hits = 0;
	char func[128];
	int fd, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s count|bpf FUNC [ret] | churn FUNC ROUNDS\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "churn")) {
		int rounds = argc > 3 ? atoi(argv[3]) : 50;

		if (churn(argv[2], rounds, &hits))
			return 1;
		printf("churn %s: %d events opened and closed, %llu program runs\n",
		       argv[2], 2 * rounds, (unsigned long long)hits);
		return hits >= FORKS ? 0 : 1;
	}
	ret = argc > 3 && !strcmp(argv[3], "ret");
	snprintf(func, sizeof(func), "%s", argv[2]);
	fd = open_kprobe_event(func, ret);
	if (fd < 0)
		return 1;

	if (!strcmp(argv[1], "count")) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		fork_some();
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &hits, sizeof(hits)) != sizeof(hits)) {
			perror("read");
			return 1;
		}
	} else if (count_with_bpf(fd, &hits)) {
		return 1;
	}
	close(fd);
	printf("%s %s%s: %llu hits\n", argv[1], argv[2], ret ? " (return)" : "",
	       (unsigned long long)hits);
	return hits >= FORKS ? 0 : 1;
}
