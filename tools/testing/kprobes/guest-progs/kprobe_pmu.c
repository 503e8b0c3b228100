// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_pmu: check the perf kprobe PMU and BPF kprobe programs against
 * our kprobes, from user space, the way perf and libbpf use them.
 *
 * FUNC may be SYMBOL+OFFSET.
 *
 *   kprobe_pmu count FUNC [ret]  count this process's hits of FUNC's
 *                                entry (or return) while it forks 5 times
 *   kprobe_pmu bpf FUNC [ret]    attach a BPF program that counts hits in
 *                                an array map, fork 5 times, read the map
 *
 * Exits 0 when at least 5 hits were seen.
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

static int count_with_bpf(int perf_fd, uint64_t *hits)
{
	char log[4096] = "";
	union bpf_attr attr;
	uint32_t key = 0;
	int map_fd, prog_fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(uint32_t);
	attr.value_size = sizeof(uint64_t);
	attr.max_entries = 1;
	map_fd = bpf(BPF_MAP_CREATE, &attr);
	if (map_fd < 0) {
		perror("BPF_MAP_CREATE");
		return -1;
	}

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
		return -1;
	}
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		perror("PERF_EVENT_IOC_SET_BPF");
		return -1;
	}
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	fork_some();
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)hits;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		perror("BPF_MAP_LOOKUP_ELEM");
		return -1;
	}
	close(prog_fd);
	close(map_fd);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t hits = 0;
	int fd, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s count|bpf FUNC [ret]\n", argv[0]);
		return 2;
	}
	ret = argc > 3 && !strcmp(argv[3], "ret");
	fd = open_kprobe_event(argv[2], ret);
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
