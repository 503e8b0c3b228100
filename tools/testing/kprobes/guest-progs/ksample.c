// SPDX-License-Identifier: GPL-2.0
/*
 * ksample: run a command and print where the kernel spent its time
 * meanwhile, by sampling the cpu-clock on every CPU with perf_event_open()
 * and resolving the sampled IPs with /proc/kallsyms (needs
 * kernel.kptr_restrict=0 and kernel.perf_event_paranoid=-1).
 *
 * A development aid for profiling under make bench; no test runs it:
 *   gcc -static -O2 -o ksample ksample.c, put it in a bench initramfs,
 *   ksample insmod kprobe_bench.ko exp=attach n=1000
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_PAGES	1024
#define MAX_CPUS	64
#define MAX_SYMS	400000
#define TOP		30

struct sym {
	uint64_t addr;
	char name[128];
	long samples;
};

static struct sym *syms;
static int nr_syms;

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct sym *)a)->addr, y = ((const struct sym *)b)->addr;

	return x < y ? -1 : x > y;
}

static void load_kallsyms(void)
{
	char line[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	syms = calloc(MAX_SYMS, sizeof(*syms));
	if (!f || !syms) {
		perror("kallsyms");
		exit(1);
	}
	while (nr_syms < MAX_SYMS && fgets(line, sizeof(line), f)) {
		struct sym *s = &syms[nr_syms];

		if (sscanf(line, "%lx %c %127s", &s->addr, &type, s->name) == 3 &&
		    (type == 't' || type == 'T'))
			nr_syms++;
	}
	fclose(f);
	qsort(syms, nr_syms, sizeof(*syms), cmp_addr);
}

static struct sym *sym_of(uint64_t ip)
{
	int lo = 0, hi = nr_syms - 1, best = -1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (syms[mid].addr <= ip) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best < 0 ? NULL : &syms[best];
}

/* Walk one CPU's ring buffer and count each sample against its symbol. */
static long drain(void *ring, long *unknown)
{
	struct perf_event_mmap_page *meta = ring;
	char *data = (char *)ring + getpagesize();
	uint64_t size = (uint64_t)RING_PAGES * getpagesize();
	uint64_t head = meta->data_head, tail = meta->data_tail;
	struct perf_event_header h;
	long total = 0;

	__sync_synchronize();
	while (tail < head) {
		uint64_t ip;
		unsigned int i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(tail + i) % size];
		if (h.type == PERF_RECORD_SAMPLE) {
			struct sym *s;

			for (i = 0; i < sizeof(ip); i++)
				((char *)&ip)[i] = data[(tail + sizeof(h) + i) % size];
			s = sym_of(ip);
			if (s)
				s->samples++;
			else
				(*unknown)++;
			total++;
		}
		tail += h.size;
	}
	return total;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 20000,		/* ns */
		.sample_type = PERF_SAMPLE_IP,
		.disabled = 1,
	};
	size_t len = (size_t)(RING_PAGES + 1) * getpagesize();
	int nr_cpus = sysconf(_SC_NPROCESSORS_ONLN), fds[MAX_CPUS], cpu, i;
	void *rings[MAX_CPUS];
	long total = 0, unknown = 0;
	pid_t child;

	if (argc < 2) {
		fprintf(stderr, "usage: %s command [args...]\n", argv[0]);
		return 2;
	}
	if (nr_cpus > MAX_CPUS)
		nr_cpus = MAX_CPUS;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fds[cpu] = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);
		if (fds[cpu] < 0) {
			perror("perf_event_open");
			return 1;
		}
		rings[cpu] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[cpu], 0);
		if (rings[cpu] == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		ioctl(fds[cpu], PERF_EVENT_IOC_ENABLE, 0);
	}

	child = fork();
	if (!child) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	waitpid(child, NULL, 0);

	load_kallsyms();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		ioctl(fds[cpu], PERF_EVENT_IOC_DISABLE, 0);
		total += drain(rings[cpu], &unknown);
	}

	for (i = 0; i < TOP; i++) {
		struct sym *best = NULL;
		int j;

		for (j = 0; j < nr_syms; j++)
			if (syms[j].samples > 0 && (!best || syms[j].samples > best->samples))
				best = &syms[j];
		if (!best)
			break;
		printf("PROF %6ld %5.1f%% %s\n", best->samples,
		       100.0 * best->samples / (total ? total : 1), best->name);
		best->samples = -best->samples;
	}
	printf("PROF total %ld, unresolved %ld\n", total, unknown);
	return 0;
}
