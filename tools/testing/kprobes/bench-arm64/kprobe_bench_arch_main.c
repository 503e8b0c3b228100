// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_bench_arch: what arm64 or riscv64 kprobes cost (make bench-arm64,
 * make bench-riscv64), measured with the public kprobes API only, so that
 * the same source builds against our kprobes and against the tree's
 * (KPB_OURS: ours, whose probes' arch state it reads; KPB_COUNTERS: the
 * counters ours has with KPROBES_SANITY_TEST). The probed functions are
 * each arch's kprobe_bench_ARCH_fns.S.
 *
 * Meant for QEMU -icount shift=0, where the virtual clock advances 1 ns
 * per guest instruction: a ktime_get_ns() difference is a count of
 * instructions (of both vCPUs; the other one idles). The clock ticks
 * every 16 instructions or more there, so every time is taken over a
 * loop of many calls, with interrupts off.
 *
 * Loading the module runs everything and prints "KPB-..." lines of
 * key=value words, which bench-arm64-report.py reads:
 *   KPB-CHECK	a loop of known length against the clock
 *   KPB-HIT	per repetition: @calls unprobed calls, then as many probed
 *   KPB-EXC	one more pass of @calls: handler runs, breakpoint
 *		exceptions counted by an ftrace callback on the function
 *		every one goes through (both kernels, when the kernel has a
 *		function tracer: arm64's), and by ours' own counter
 *   KPB-REG	register_kprobes() / unregister_kprobes() of n probes in
 *		one call (how=batch), or register_kprobe() /
 *		unregister_kprobe() n times (how=single)
 *   KPB-COVER	per function: body offsets, how many take a probe, and
 *		how many of those the optimizer turned into a B
 *   KPB-NOOPT	(with OPTPROBES) a probe-able body offset left a BRK
 */

#include <linux/ftrace.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#ifdef CONFIG_ARM64
#include <asm/sysreg.h>
#endif
#ifdef CONFIG_RISCV
#include <asm/asm-extable.h>
#endif

#include "kprobe_bench_arch.h"

#ifdef KPB_OURS
#define KPB_KERNEL	"ours"
#else
#define KPB_KERNEL	"upstream"
#endif

#define KPB_MAX_REPS	31
#define KPB_MAX_PROBES	1000
/* Kernel text symbols looked at, at most, for the entries layout. */
#define KPB_MAX_TRIES	3000

static unsigned int reps = 7;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "repetitions of each hit measurement (at most 31)");
static unsigned int calls = 1000;
module_param(calls, uint, 0444);
MODULE_PARM_DESC(calls, "calls per timed loop");
static unsigned int reg_reps = 3;
module_param(reg_reps, uint, 0444);
MODULE_PARM_DESC(reg_reps, "repetitions of each registration measurement");
static char *sizes = "1,100,1000";
module_param(sizes, charp, 0444);
MODULE_PARM_DESC(sizes, "probes per register_kprobes() call (at most 1000)");
static unsigned int single = 100;
module_param(single, uint, 0444);
MODULE_PARM_DESC(single, "probes registered one register_kprobe() at a time");

static unsigned long kpb_sink;
static unsigned long kpb_hits;
static unsigned long kpb_posts;

/* A C function of the module: its first instruction is ftrace's. */
static noinline unsigned long kpb_c_entry(unsigned long x)
{
	return x + 1;
}

/* Calls jiffies_to_msecs(), probed at its entry in kernel text. */
static noinline unsigned long kpb_kernel_entry(unsigned long x)
{
	return jiffies_to_msecs(x);
}

/*
 * Calls jiffies_to_usecs(), probed in its body in kernel text at
 * KPB_BODY_OFF: on arm64 +8, past its ftrace site, a "mov w1, #1000"
 * with this configuration; on riscv64 +2, a stack store, and 8 bytes
 * further where the function starts with an ftrace call site (ours'
 * kernel has the function tracer, the tree's not): the same instruction
 * in both (the report prints the word).
 */
static noinline unsigned long kpb_kernel_body(unsigned long x)
{
	return jiffies_to_usecs(x);
}

#ifdef CONFIG_RISCV
/*
 * Where a hit's instructions go, on riscv: instret (with -icount, the
 * instructions retired) read before the call, in the pre_handler, in the
 * post_handler and after the call, by kpb_segments(). Where S-mode may
 * not read it, the read faults and is skipped (0).
 */
static unsigned long kpb_seg[4];
static bool kpb_seg_on;

static __always_inline unsigned long kpb_instret(void)
{
	unsigned long v = 0;

	asm volatile("1:	csrr	%0, instret\n2:\n" _ASM_EXTABLE(1b, 2b) : "+r" (v));
	return v;
}

#define KPB_STAMP(i)	do { if (kpb_seg_on) kpb_seg[i] = kpb_instret(); } while (0)
#else
#define KPB_STAMP(i)	do { } while (0)
#endif

static int kpb_pre(struct kprobe *p, struct pt_regs *regs)
{
	KPB_STAMP(1);
	kpb_hits++;
	return 0;
}

static void kpb_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	KPB_STAMP(2);
	kpb_posts++;
}

static int kpb_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	kpb_hits++;
	return 0;
}

/* ---- counting BRK exceptions ----------------------------------------- */

/*
 * Every breakpoint exception goes through one function of the tree's in
 * both kernels (arm64: do_el1_brk64() for every EL1 BRK; riscv:
 * handle_break()): a function tracer callback there counts them without
 * a probe of its own, where the kernel has a function tracer.
 */
static DEFINE_PER_CPU(unsigned long, kpb_el1_brks);
static bool kpb_ftrace_ok;
#ifdef CONFIG_ARM64
static unsigned char kpb_brk_fn[] = "do_el1_brk64";
#define KPB_TRAPS	kprobe_brk_traps
#define KPB_BODY_OFF	8
#else
static unsigned char kpb_brk_fn[] = "handle_break";
#define KPB_TRAPS	kprobe_ebreak_traps
#define KPB_BODY_OFF	2
#endif

#ifdef CONFIG_DYNAMIC_FTRACE
static void notrace kpb_count_brk(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op,
				  struct ftrace_regs *fregs)
{
	this_cpu_inc(kpb_el1_brks);
}

static struct ftrace_ops kpb_brk_ops = {
	.func = kpb_count_brk,
};

static bool kpb_ftrace_filter(void)
{
	return !ftrace_set_filter(&kpb_brk_ops, kpb_brk_fn, strlen(kpb_brk_fn), 1);
}

static bool kpb_ftrace_start(void)
{
	return !register_ftrace_function(&kpb_brk_ops);
}

static void kpb_ftrace_stop(void)
{
	unregister_ftrace_function(&kpb_brk_ops);
}

static void kpb_ftrace_free(void)
{
	ftrace_free_filter(&kpb_brk_ops);
}
#else
/* No function tracer (riscv64's guests): the exceptions are not counted. */
static bool kpb_ftrace_filter(void)
{
	return false;
}

static bool kpb_ftrace_start(void)
{
	return false;
}

static void kpb_ftrace_stop(void)
{
}

static void kpb_ftrace_free(void)
{
}
#endif

static long kpb_brks_ftrace(void)
{
	unsigned long sum = 0;
	int cpu;

	if (!kpb_ftrace_ok)
		return -1;
	for_each_possible_cpu(cpu)
		sum += per_cpu(kpb_el1_brks, cpu);
	return sum;
}

static long kpb_brks_ours(void)
{
#ifdef KPB_COUNTERS
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(KPB_TRAPS, cpu);
	return sum;
#else
	return -1;
#endif
}

static long kpb_text_syncs(void)
{
#ifdef KPB_COUNTERS
	return READ_ONCE(kprobe_text_syncs);
#else
	return -1;
#endif
}

/* ---- hits ---------------------------------------------------------------- */

/* Virtual ns (instructions) of @n calls of @fn, interrupts off. */
static u64 kpb_time(unsigned long (*fn)(unsigned long x), unsigned int n)
{
	unsigned long flags, acc = 0;
	unsigned int i;
	u64 t0, t1;

	local_irq_save(flags);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		acc += fn(i | 1);
	t1 = ktime_get_ns();
	local_irq_restore(flags);
	WRITE_ONCE(kpb_sink, acc);
	return t1 - t0;
}

/*
 * KPB_PRE_OPT: as KPB_PRE, timed after wait_for_kprobe_optimizer() (a
 * no-op on a kernel without optimized probes, as the tree's arm64 is).
 */
enum kpb_kind { KPB_PRE, KPB_PRE_OPT, KPB_PRE_POST, KPB_KRETPROBE };

struct kpb_hit {
	const char *item;
	unsigned long (*fn)(unsigned long x);	/* called */
	const void *at;				/* probed */
	enum kpb_kind kind;
};

static const struct kpb_hit kpb_hit_items[] = {
	{ "entry_mod", kpb_c_entry, kpb_c_entry, KPB_PRE },
	{ "entry_kernel", kpb_kernel_entry, jiffies_to_msecs, KPB_PRE },
	{ "sim_cbz", kpb_sim_cbz, kpb_sim_cbz_at, KPB_PRE },
	{ "sim_bcond", kpb_sim_bcond, kpb_sim_bcond_at, KPB_PRE },
	{ "step_add", kpb_step_add, kpb_step_add_at, KPB_PRE },
	{ "step_add_post", kpb_step_add, kpb_step_add_at, KPB_PRE_POST },
	{ "copy_ldr", kpb_copy_ldr, kpb_copy_ldr_at, KPB_PRE },
	{ "step_ldr_post", kpb_copy_ldr, kpb_copy_ldr_at, KPB_PRE_POST },
#ifdef CONFIG_RISCV
	{ "step_amo_post", kpb_step_amo, kpb_step_amo_at, KPB_PRE_POST },
#endif
	{ "body_kernel", kpb_kernel_body, (const char *)jiffies_to_usecs + KPB_BODY_OFF, KPB_PRE },
	{ "opt_add", kpb_step_add, kpb_step_add_at, KPB_PRE_OPT },
	{ "opt_ldr", kpb_copy_ldr, kpb_copy_ldr_at, KPB_PRE_OPT },
	{ "opt_kernel", kpb_kernel_body, (const char *)jiffies_to_usecs + KPB_BODY_OFF,
	  KPB_PRE_OPT },
	{ "kret_mod", kpb_c_entry, kpb_c_entry, KPB_KRETPROBE },
	{ "kret_kernel", kpb_kernel_entry, jiffies_to_msecs, KPB_KRETPROBE },
};

#ifdef CONFIG_RISCV
/*
 * One hit of @h, cut at its handlers: instructions from the call to the
 * pre_handler, from there to the post_handler (when there is one) and
 * to the call's return. The last of three calls, interrupts off.
 */
static void kpb_segments(const struct kpb_hit *h)
{
	unsigned long flags;
	int i;

	WRITE_ONCE(kpb_seg_on, true);
	for (i = 0; i < 3; i++) {
		local_irq_save(flags);
		kpb_seg[1] = 0;
		kpb_seg[2] = 0;
		kpb_seg[0] = kpb_instret();
		WRITE_ONCE(kpb_sink, h->fn(1));
		kpb_seg[3] = kpb_instret();
		local_irq_restore(flags);
	}
	WRITE_ONCE(kpb_seg_on, false);
	if (!kpb_seg[0] || !kpb_seg[1])
		return;
	pr_info("KPB-SEG item=%s to_pre=%lu pre_to_post=%lu to_return=%lu total=%lu\n",
		h->item, kpb_seg[1] - kpb_seg[0],
		kpb_seg[2] ? kpb_seg[2] - kpb_seg[1] : 0,
		kpb_seg[3] - (kpb_seg[2] ? kpb_seg[2] : kpb_seg[1]),
		kpb_seg[3] - kpb_seg[0]);
}
#else
static void kpb_segments(const struct kpb_hit *h)
{
}
#endif

static void kpb_hit_one(const struct kpb_hit *h)
{
	static u64 base[KPB_MAX_REPS], probed[KPB_MAX_REPS];
	struct kretprobe rp = { };
	struct kprobe kp = { };
	long brk_f, brk_o;
	unsigned long hits, posts;
	unsigned int r;
	void *addr;
	int ret;

	addr = (void *)h->at;
#ifdef CONFIG_RISCV
	/* ftrace's call site: a 4-byte NOP, or AUIPC t0 while in use. */
	if (addr == (const char *)jiffies_to_usecs + KPB_BODY_OFF &&
	    (get_unaligned_le32(jiffies_to_usecs) == 0x00000013 ||
	     (get_unaligned_le32(jiffies_to_usecs) & 0xfff) == 0x297))
		addr += 8;
#endif
	for (r = 0; r < reps; r++)
		base[r] = kpb_time(h->fn, calls);

	if (h->kind == KPB_KRETPROBE) {
		rp.kp.addr = addr;
		rp.handler = kpb_ret;
		rp.maxactive = 4;
		ret = register_kretprobe(&rp);
	} else {
		kp.addr = addr;
		kp.pre_handler = kpb_pre;
		if (h->kind == KPB_PRE_POST)
			kp.post_handler = kpb_post;
		ret = register_kprobe(&kp);
	}
	if (ret) {
		pr_info("KPB-HIT-FAIL item=%s err=%d\n", h->item, ret);
		return;
	}
	if (h->kind == KPB_PRE_OPT)
		wait_for_kprobe_optimizer();
	for (r = 0; r < reps; r++)
		probed[r] = kpb_time(h->fn, calls);
	/* Before the exception pass, whose ftrace changes take long: no optimizer run between. */
	kpb_segments(h);

	if (kpb_ftrace_ok && !kpb_ftrace_start())
		kpb_ftrace_ok = false;
	brk_f = kpb_brks_ftrace();
	brk_o = kpb_brks_ours();
	hits = kpb_hits;
	posts = kpb_posts;
	kpb_time(h->fn, calls);
	hits = kpb_hits - hits;
	posts = kpb_posts - posts;
	if (kpb_ftrace_ok) {
		brk_f = kpb_brks_ftrace() - brk_f;
		kpb_ftrace_stop();
	}
	if (brk_o >= 0)
		brk_o = kpb_brks_ours() - brk_o;

	if (h->kind == KPB_KRETPROBE)
		unregister_kretprobe(&rp);
	else
		unregister_kprobe(&kp);

	for (r = 0; r < reps; r++)
		pr_info("KPB-HIT item=%s insn=%08x rep=%u base=%llu probed=%llu calls=%u\n",
			h->item, get_unaligned_le32(addr), r, base[r],
			probed[r], calls);
	pr_info("KPB-EXC item=%s calls=%u hits=%lu posts=%lu brk_ftrace=%ld brk_ours=%ld\n",
		h->item, calls, hits, posts, brk_f, brk_o);
}

/* ---- registration ---------------------------------------------------- */

static struct kprobe *kpb_kps;
static struct kprobe **kpb_ptrs;
static unsigned long *kpb_addrs;

static void kpb_fill(unsigned int n)
{
	unsigned int i;

	memset(kpb_kps, 0, n * sizeof(*kpb_kps));
	for (i = 0; i < n; i++) {
		kpb_kps[i].addr = (kprobe_opcode_t *)kpb_addrs[i];
		kpb_kps[i].pre_handler = kpb_pre;
		kpb_ptrs[i] = &kpb_kps[i];
	}
}

static void kpb_reg_batch(const char *layout, unsigned int n, unsigned int r)
{
	long s0, s1, s2;
	u64 t0, t1, t2;
	int ret;

	kpb_fill(n);
	s0 = kpb_text_syncs();
	t0 = ktime_get_ns();
	ret = register_kprobes(kpb_ptrs, n);
	t1 = ktime_get_ns();
	s1 = kpb_text_syncs();
	if (ret) {
		pr_info("KPB-REG-FAIL layout=%s n=%u how=batch rep=%u err=%d\n",
			layout, n, r, ret);
		return;
	}
	unregister_kprobes(kpb_ptrs, n);
	t2 = ktime_get_ns();
	s2 = kpb_text_syncs();
	pr_info("KPB-REG layout=%s n=%u how=batch rep=%u ok=%u reg_ns=%llu unreg_ns=%llu syncs_reg=%ld syncs_unreg=%ld\n",
		layout, n, r, n, t1 - t0, t2 - t1, s0 < 0 ? -1 : s1 - s0, s0 < 0 ? -1 : s2 - s1);
}

static void kpb_reg_single(const char *layout, unsigned int n, unsigned int r)
{
	unsigned int i, ok = 0;
	long s0, s1, s2;
	u64 t0, t1, t2;

	kpb_fill(n);
	s0 = kpb_text_syncs();
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		if (register_kprobe(kpb_ptrs[i]))
			kpb_ptrs[i] = NULL;
		else
			ok++;
	}
	t1 = ktime_get_ns();
	s1 = kpb_text_syncs();
	for (i = 0; i < n; i++) {
		if (kpb_ptrs[i])
			unregister_kprobe(kpb_ptrs[i]);
	}
	t2 = ktime_get_ns();
	s2 = kpb_text_syncs();
	pr_info("KPB-REG layout=%s n=%u how=single rep=%u ok=%u reg_ns=%llu unreg_ns=%llu syncs_reg=%ld syncs_unreg=%ld\n",
		layout, n, r, ok, t1 - t0, t2 - t1, s0 < 0 ? -1 : s1 - s0, s0 < 0 ? -1 : s2 - s1);
}

static void kpb_reg_layout(const char *layout, unsigned int avail)
{
	char *list, *cur, *tok;
	unsigned int n, r;

	list = kstrdup(sizes, GFP_KERNEL);
	if (!list)
		return;
	cur = list;
	while ((tok = strsep(&cur, ","))) {
		if (kstrtouint(tok, 0, &n) || !n || n > avail)
			continue;
		for (r = 0; r < reg_reps; r++)
			kpb_reg_batch(layout, n, r);
	}
	kfree(list);
	if (single && single <= avail)
		for (r = 0; r < reg_reps; r++)
			kpb_reg_single(layout, single, r);
}

/*
 * Entries of kernel text functions, walking kallsyms from kernel_read()
 * on (fs/, the same code in both kernels): the first @want whose entry
 * takes a (disabled, so never armed) probe. Fills kpb_addrs[].
 */
static unsigned int kpb_find_entries(unsigned int want)
{
	unsigned long addr = (unsigned long)kernel_read;
	unsigned long off, size;
	unsigned int tries = 0, found = 0, refused = 0;
	char *buf, *plus;
	int ret;

	buf = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!buf)
		return 0;
	memset(kpb_kps, 0, KPB_MAX_PROBES * sizeof(*kpb_kps));
	while (found < want && tries < KPB_MAX_TRIES) {
		sprint_symbol(buf, addr);
		plus = strrchr(buf, '+');
		if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 || !size)
			break;
		*plus = '\0';
		addr -= off;
		tries++;
		if (!strchr(buf, '.')) {
			kpb_kps[found].addr = (kprobe_opcode_t *)addr;
			kpb_kps[found].flags = KPROBE_FLAG_DISABLED;
			ret = register_kprobe(&kpb_kps[found]);
			if (ret) {
				memset(&kpb_kps[found], 0, sizeof(*kpb_kps));
				pr_info("KPB-REFUSED sym=%s err=%d\n", buf, ret);
				refused++;
			} else {
				kpb_ptrs[found] = &kpb_kps[found];
				kpb_addrs[found++] = addr;
				if (found == 1 || found == want)
					pr_info("KPB-ENTRY index=%u sym=%s\n",
						found - 1, buf);
			}
		}
		addr += size;
	}
	if (found)
		unregister_kprobes(kpb_ptrs, found);
	pr_info("KPB-ENTRIES found=%u refused=%u symbols=%u\n", found, refused,
		tries);
	kfree(buf);
	return found;
}

/* ---- how much of ordinary functions' bodies the optimizer takes -------- */

/* Functions walked from each anchor on, and body offsets at most. */
#define KPB_COVER_PER_ANCHOR	8
#define KPB_COVER_MAX		4096
/* Not-optimized offsets printed one per line, at most (ours only). */
#define KPB_COVER_SHOWN		400

/*
 * Rounds the offsets are probed in, each offset in one: on riscv64 a
 * jump covers up to 10 bytes, so probes 5 instructions apart (10 bytes
 * at least) never hold one inside another's region, which would keep
 * it a breakpoint. arm64's B covers the probed word only.
 */
#ifdef CONFIG_RISCV
#define KPB_COVER_ROUNDS	5
#else
#define KPB_COVER_ROUNDS	1
#endif

#ifdef CONFIG_ARM64
/* Is @insn an optimized site's jump: a B? */
static bool kpb_is_jump(u32 insn)
{
	return (insn & 0xfc000000) == 0x14000000;
}

/* The body offsets: every word from +4 on. */
static unsigned long kpb_next_off(unsigned long func, unsigned long off)
{
	return off + 4;
}

/* One exception per hit is not counted on arm64: optimized is. */
static int kpb_boosted(struct kprobe *p)
{
	return -1;
}
#else
/* Is @insn an optimized site's jump: ours' AUIPC (the tree's has none)? */
static bool kpb_is_jump(u32 insn)
{
	return (insn & 0x7f) == 0x17;
}

/*
 * Ours only: a copied instruction of @p is boosted (its slot has the part
 * that jumps back); a simulated one takes one exception too. -1 for the
 * tree's, and with @p NULL: whether it is counted.
 */
static int kpb_boosted(struct kprobe *p)
{
#ifdef KPB_OURS
	return p && (p->ainsn.api.restore || p->ainsn.api.handler);
#else
	return -1;
#endif
}

/* The body offsets: every instruction after the first, 2 or 4 bytes. */
static unsigned long kpb_next_off(unsigned long func, unsigned long off)
{
	return off + ((*(u16 *)(func + off) & 3) == 3 ? 4 : 2);
}
#endif

/*
 * A probe at every body offset (+4 on) of the @want functions walked
 * from @anchor on, each registered alone (those refused are not
 * probe-able: ftrace's BL, exclusive sequences and the like), in
 * KPB_COVER_ROUNDS rounds; then, after the optimizer ran, an offset is
 * optimized when its word became a jump it was not. Prints KPB-COVER per
 * function, and (with OPTPROBES, which the tree's arm64 and riscv64
 * lack) KPB-NOOPT per probe-able offset left a breakpoint, with its
 * instruction.
 */
static void kpb_cover_from(unsigned long addr, unsigned int want,
			   struct kprobe *kps, struct kprobe **ptrs, u32 *orig,
			   unsigned int *shown)
{
	static u8 took[KPB_COVER_MAX], opt[KPB_COVER_MAX], boost[KPB_COVER_MAX];
	unsigned int round, k;
	unsigned long off, size, func[KPB_COVER_PER_ANCHOR], fsize[KPB_COVER_PER_ANCHOR];
	unsigned int nf = 0, n = 0, i, f, tries = 0;
	static char name[KPB_COVER_PER_ANCHOR][KSYM_NAME_LEN];
	static char buf[KSYM_SYMBOL_LEN];
	char *plus;
	unsigned int probed, optimized, offsets, boosted;
	u32 now;

	while (nf < want && nf < KPB_COVER_PER_ANCHOR && tries++ < 100) {
		sprint_symbol(buf, addr);
		plus = strrchr(buf, '+');
		if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 || !size)
			break;
		*plus = '\0';
		addr -= off;
		if (!strchr(buf, '.') && size >= 16) {
			strscpy(name[nf], buf, KSYM_NAME_LEN);
			func[nf] = addr;
			fsize[nf++] = size;
		}
		addr += size;
	}
	memset(kps, 0, KPB_COVER_MAX * sizeof(*kps));
	for (f = 0; f < nf; f++) {
		for (off = kpb_next_off(func[f], 0); off < fsize[f] && n < KPB_COVER_MAX;
		     off = kpb_next_off(func[f], off)) {
			kps[n].addr = (kprobe_opcode_t *)(func[f] + off);
			orig[n] = get_unaligned_le32(kps[n].addr);
			n++;
		}
	}
	for (round = 0; round < KPB_COVER_ROUNDS; round++) {
		for (i = round; i < n; i += KPB_COVER_ROUNDS) {
			kps[i].pre_handler = kpb_pre;
			took[i] = !register_kprobe(&kps[i]);
		}
		wait_for_kprobe_optimizer();
		for (i = round, k = 0; i < n; i += KPB_COVER_ROUNDS) {
			if (!took[i])
				continue;
			now = get_unaligned_le32(kps[i].addr);
			opt[i] = kpb_is_jump(now) && now != orig[i];
			boost[i] = kpb_boosted(&kps[i]) > 0;
			ptrs[k++] = &kps[i];
		}
		if (k)
			unregister_kprobes(ptrs, k);
	}
	for (f = 0, i = 0; f < nf; f++) {
		probed = optimized = offsets = boosted = 0;
		for (; i < n && (unsigned long)kps[i].addr < func[f] + fsize[f]; i++) {
			offsets++;
			if (!took[i])
				continue;
			probed++;
			boosted += boost[i];
			if (opt[i]) {
				optimized++;
				continue;
			}
#ifdef CONFIG_OPTPROBES
			if ((*shown)++ < KPB_COVER_SHOWN)
				pr_info("KPB-NOOPT sym=%s off=%lx insn=%08x\n", name[f],
					(unsigned long)kps[i].addr - func[f], orig[i]);
#endif
		}
		pr_info("KPB-COVER sym=%s size=%lu offsets=%u probed=%u optimized=%u boosted=%d\n",
			name[f], fsize[f], offsets, probed, optimized,
			kpb_boosted(NULL) < 0 ? -1 : (int)boosted);
	}
}

/*
 * Ordinary C functions of three corners of the kernel (fs, lib, time),
 * the same code in both kernels: from each anchor, the next functions
 * of at least four instructions.
 */
static void kpb_cover(void)
{
	static const unsigned long anchors[] = {
		(unsigned long)kernel_read,
		(unsigned long)kstrtoull,
		(unsigned long)jiffies_to_msecs,
	};
	struct kprobe *kps, **ptrs;
	unsigned int i, shown = 0;
	u32 *orig;

	kps = kvcalloc(KPB_COVER_MAX, sizeof(*kps), GFP_KERNEL);
	ptrs = kvcalloc(KPB_COVER_MAX, sizeof(*ptrs), GFP_KERNEL);
	orig = kvcalloc(KPB_COVER_MAX, sizeof(*orig), GFP_KERNEL);
	if (kps && ptrs && orig)
		for (i = 0; i < ARRAY_SIZE(anchors); i++)
			kpb_cover_from(anchors[i], KPB_COVER_PER_ANCHOR, kps, ptrs, orig,
				       &shown);
	else
		pr_info("KPB-NOTE out of memory\n");
	kvfree(kps);
	kvfree(ptrs);
	kvfree(orig);
}

/* ---- the clock -------------------------------------------------------- */

static void kpb_check(unsigned long n)
{
	unsigned long flags;
	u64 t0, t1, t2;

	local_irq_save(flags);
	t0 = ktime_get_ns();
	t1 = ktime_get_ns();
	kpb_loop(n);
	t2 = ktime_get_ns();
	local_irq_restore(flags);
	/* The loop, its call and its ret: 2n + 2 instructions. */
	pr_info("KPB-CHECK iters=%lu expect=%lu ktime_ns=%llu loop_ns=%llu\n",
		n, 2 * n + 2, t1 - t0, t2 - t1);
}

static int __init kpb_init(void)
{
	unsigned int i, n;

	reps = clamp(reps, 1U, (unsigned int)KPB_MAX_REPS);
	calls = max(calls, 1U);
#ifdef CONFIG_ARM64
	pr_info("KPB-BEGIN kernel=%s cntfrq=%llu reps=%u calls=%u reg_reps=%u\n",
		KPB_KERNEL, read_sysreg(cntfrq_el0), reps, calls, reg_reps);
#else
	pr_info("KPB-BEGIN kernel=%s reps=%u calls=%u reg_reps=%u\n",
		KPB_KERNEL, reps, calls, reg_reps);
#endif

	kpb_ftrace_ok = kpb_ftrace_filter();
	if (!kpb_ftrace_ok)
		pr_info("KPB-NOTE no ftrace filter on %s: BRKs not counted\n",
			kpb_brk_fn);

	kpb_check(100000);
	kpb_check(1000000);
	kpb_check(1000000);

	for (i = 0; i < ARRAY_SIZE(kpb_hit_items); i++)
		kpb_hit_one(&kpb_hit_items[i]);

	kpb_kps = kvcalloc(KPB_MAX_PROBES, sizeof(*kpb_kps), GFP_KERNEL);
	kpb_ptrs = kvcalloc(KPB_MAX_PROBES, sizeof(*kpb_ptrs), GFP_KERNEL);
	kpb_addrs = kvcalloc(KPB_MAX_PROBES, sizeof(*kpb_addrs), GFP_KERNEL);
	if (!kpb_kps || !kpb_ptrs || !kpb_addrs) {
		pr_info("KPB-NOTE out of memory\n");
		goto out;
	}
	for (i = 0; i < KPB_BIG; i++)
		kpb_addrs[i] = (unsigned long)&kpb_adds_at[i];
	kpb_reg_layout("adds", KPB_BIG);
	for (i = 0; i < KPB_BIG; i++)
		kpb_addrs[i] = (unsigned long)&kpb_nops_at[i];
	kpb_reg_layout("nops", KPB_BIG);
	n = kpb_find_entries(KPB_MAX_PROBES);
	kpb_reg_layout("entries", n);
	kpb_cover();
out:
	kvfree(kpb_kps);
	kvfree(kpb_ptrs);
	kvfree(kpb_addrs);
	pr_info("KPB-END\n");
	return 0;
}

static void __exit kpb_exit(void)
{
	kpb_ftrace_free();
}

module_init(kpb_init);
module_exit(kpb_exit);
MODULE_DESCRIPTION("make bench-arm64, bench-riscv64: kprobes costs under QEMU -icount");
MODULE_LICENSE("GPL");
