// SPDX-License-Identifier: GPL-2.0
/*
 * ksample: run a command and print where the kernel spent its time meanwhile,
 * by sampling the cpu-clock on every CPU with perf_event_open() and
 * resolving the IPs with /proc/kallsyms (kptr_restrict=0, paranoid=-1).
 * A development aid for make bench profiling (not run by the tests):
 *   gcc -static -O2 -o ksample ksample.c; put it in a bench initramfs;
 *   ksample insmod kprobe_bench.ko exp=attach n=1000
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define PAGES 1024
struct ent { uint64_t ip; long n; };
static struct ent tab[65536];
static int ntab;
static void add(uint64_t ip) {
	for (int i = 0; i < ntab; i++) if (tab[i].ip == ip) { tab[i].n++; return; }
	if (ntab < 65536) { tab[ntab].ip = ip; tab[ntab++].n = 1; }
}
struct sym { uint64_t a; char n[128]; };
static struct sym *syms; static int nsyms;
static int cmps(const void *a, const void *b) { uint64_t x=((struct sym*)a)->a, y=((struct sym*)b)->a; return x<y?-1:x>y; }
static const char *name(uint64_t ip) {
	int lo = 0, hi = nsyms - 1, best = -1;
	while (lo <= hi) { int m = (lo+hi)/2; if (syms[m].a <= ip) { best = m; lo = m+1; } else hi = m-1; }
	return best < 0 ? "?" : syms[best].n;
}
int main(int argc, char **argv) {
	struct perf_event_attr a = {0};
	a.size = sizeof(a); a.type = PERF_TYPE_SOFTWARE; a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 20000; a.sample_type = PERF_SAMPLE_IP; a.disabled = 1;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), fds[8]; void *bufs[8];
	size_t len = (PAGES + 1) * 4096;
	for (int c = 0; c < ncpu; c++) {
		fds[c] = syscall(SYS_perf_event_open, &a, -1, c, -1, 0);
		if (fds[c] < 0) { perror("perf_event_open"); return 1; }
		bufs[c] = mmap(NULL, len, PROT_READ|PROT_WRITE, MAP_SHARED, fds[c], 0);
		ioctl(fds[c], PERF_EVENT_IOC_ENABLE, 0);
	}
	pid_t p = fork();
	if (!p) { execvp(argv[1], argv + 1); _exit(127); }
	waitpid(p, NULL, 0);
	for (int c = 0; c < ncpu; c++) {
		ioctl(fds[c], PERF_EVENT_IOC_DISABLE, 0);
		struct perf_event_mmap_page *mp = bufs[c];
		uint64_t head = mp->data_head, tail = mp->data_tail; __sync_synchronize();
		char *data = (char *)bufs[c] + 4096; uint64_t sz = PAGES * 4096;
		while (tail < head) {
			struct perf_event_header h; memcpy(&h, data + tail % sz, sizeof(h));
			if (h.type == PERF_RECORD_SAMPLE) { uint64_t ip; 
				for (int i=0;i<8;i++) ((char*)&ip)[i] = data[(tail + sizeof(h) + i) % sz];
				add(ip); }
			tail += h.size;
		}
	}
	FILE *f = fopen("/proc/kallsyms", "r"); char line[256];
	syms = malloc(sizeof(*syms) * 400000);
	while (fgets(line, sizeof(line), f) && nsyms < 400000) {
		char t; if (sscanf(line, "%lx %c %127s", &syms[nsyms].a, &t, syms[nsyms].n) == 3 && (t=='t'||t=='T')) nsyms++;
	}
	qsort(syms, nsyms, sizeof(*syms), cmps);
	/* aggregate by symbol */
	struct { const char *n; long c; } agg[4096]; int na = 0; long total = 0;
	for (int i = 0; i < ntab; i++) { const char *n = name(tab[i].ip); total += tab[i].n; int j;
		for (j = 0; j < na; j++) if (agg[j].n == n) break;
		if (j == na && na < 4096) { agg[na].n = n; agg[na++].c = 0; }
		if (j < 4096) agg[j].c += tab[i].n; }
	for (int k = 0; k < 30; k++) { int b = -1; for (int j = 0; j < na; j++) if (agg[j].c > 0 && (b < 0 || agg[j].c > agg[b].c)) b = j;
		if (b < 0) break; printf("PROF %6ld %5.1f%% %s\n", agg[b].c, 100.0*agg[b].c/total, agg[b].n); agg[b].c = -agg[b].c; }
	printf("PROF total %ld\n", total);
	return 0;
}
