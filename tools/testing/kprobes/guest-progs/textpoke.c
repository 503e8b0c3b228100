// SPDX-License-Identifier: GPL-2.0
/*
 * textpoke: record the kernel's PERF_RECORD_TEXT_POKE and
 * PERF_RECORD_KSYMBOL events, on every CPU, while a shell command runs,
 * and print one line per record:
 *
 *   poke ADDR OLD_LEN NEW_LEN OLD_BYTES NEW_BYTES
 *   ksymbol ADDR LEN register|unregister NAME
 *
 * (addresses and bytes in hex, at most 16 bytes of each). This is what
 * perf record --kcore and Intel PT decoders read to follow code that
 * changes. Usage: textpoke 'COMMAND'
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CPUS	64
#define DATA_PAGES	64

struct text_poke_record {
	struct perf_event_header header;
	uint64_t addr;
	uint16_t old_len;
	uint16_t new_len;
	uint8_t bytes[];
};

struct ksymbol_record {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	char name[];
};

static void print_bytes(const uint8_t *b, unsigned int n)
{
	unsigned int i;

	if (!n)
		printf(" -");
	else
		printf(" ");
	for (i = 0; i < n && i < 16; i++)
		printf("%02x", b[i]);
}

/* Print the text poke records in one CPU's ring buffer. */
static void drain(struct perf_event_mmap_page *meta, long page)
{
	uint8_t *data = (uint8_t *)meta + page;
	uint64_t size = (uint64_t)DATA_PAGES * page, tail = meta->data_tail;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint8_t rec[4096];

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		unsigned int len = h->size, i;

		if (len > sizeof(rec) || !len)
			break;
		for (i = 0; i < len; i++)	/* may wrap around the buffer */
			rec[i] = data[(tail + i) % size];
		h = (struct perf_event_header *)rec;
		if (h->type == PERF_RECORD_TEXT_POKE) {
			struct text_poke_record *r = (void *)rec;

			printf("poke %llx %u %u", (unsigned long long)r->addr,
			       r->old_len, r->new_len);
			print_bytes(r->bytes, r->old_len);
			print_bytes(r->bytes + r->old_len, r->new_len);
			printf("\n");
		} else if (h->type == PERF_RECORD_KSYMBOL) {
			struct ksymbol_record *k = (void *)rec;

			printf("ksymbol %llx %u %s %.*s\n", (unsigned long long)k->addr,
			       k->len,
			       k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER ?
			       "unregister" : "register",
			       (int)(len - sizeof(*k)), k->name);
		} else if (h->type == PERF_RECORD_LOST) {
			printf("lost\n");
		}
		tail += len;
	}
	meta->data_tail = tail;
}

int main(int argc, char **argv)
{
	struct perf_event_mmap_page *meta[MAX_CPUS];
	long page = sysconf(_SC_PAGESIZE);
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), cpu, ret;
	struct perf_event_attr attr;

	if (argc != 2) {
		fprintf(stderr, "usage: textpoke 'COMMAND'\n");
		return 2;
	}
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.text_poke = 1;
	attr.ksymbol = 1;
	for (cpu = 0; cpu < ncpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);

		if (fd < 0) {
			perror("perf_event_open");
			return 1;
		}
		meta[cpu] = mmap(NULL, (DATA_PAGES + 1) * page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
		if (meta[cpu] == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	ret = system(argv[1]);
	for (cpu = 0; cpu < ncpus; cpu++)
		drain(meta[cpu], page);
	fflush(stdout);
	return ret ? 1 : 0;
}
