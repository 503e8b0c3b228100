// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_bench: what probes cost, measured with the public kprobes API
 * only, so that the same source builds and runs against our kprobes and
 * against the tree's.
 *
 * Meant for QEMU with -icount shift=0, where the guest's TSC advances
 * with the instructions executed: a cost is printed in instructions
 * (TSC cycles converted with tsc_khz), deterministic from run to run.
 * A trap costs one instruction there; real hardware adds its own price.
 *
 * Loading the module runs one experiment, chosen with exp=, and prints
 * "BENCH <key> <value>" lines:
 *   exp=hits	hit cost of each kind of probe, median over REPS calls,
 *		minus the cost of calling the same target unprobed
 *   exp=attach	register n= probes at distinct addresses (batch=1: one
 *		register_kprobes() call; 0: one register_kprobe() each),
 *		wait until they are optimized, unregister them and wait
 *		until their text runs as it did before (times from the
 *		register and the unregister call)
 *   exp=scale	hit cost of one boosted probe while each of sizes= (a
 *		list) other probes are registered (after it)
 *   exp=big	for each of sizes=: register that many probes on
 *		consecutive instructions of one large function, in batches
 *		of up to LAYOUT_STEP (register_kprobes()) and then one at a
 *		time (register_kprobe()), each on instructions of its own;
 *		wait until the last one is optimized and unregister them
 *		the same way
 *   exp=entries	the same with probes at the entries of distinct functions
 *		(kprobe_bench_fns.ko: ftrace sites where the kernel has
 *		them); with kret=1, kretprobes there
 *   exp=kinds	hit cost of a probe on each of several instruction kinds
 *		(lea, load, add, push, RIP-relative load, jcc, call): with a
 *		post_handler and without (boosted where the instruction can
 *		be); with opt=1, once optimized instead. Run opt=0 with
 *		debug.kprobes-optimization off, so that nothing is optimized
 *		while it measures the traps
 *   exp=hold	register n= probes at load, unregister them at unload
 *		(no figures: for profiling either with ksample)
 *   exp=concurrent	threads= threads (4) each register n= probes (25)
 *		one at a time, at instructions in function bodies (where=0,
 *		breakpoints) or at function entries (where=1, ftrace sites
 *		where the kernel has them), then all unregister theirs one
 *		at a time at once, as tools that close one event each do,
 *		while another thread disables and enables one more probe
 *		over and over; then one thread unregisters as many probes
 *		one at a time alone. Three rounds, medians printed: the
 *		wall time (virtual) of each phase, the toggles done during
 *		the concurrent unregistering, and the longest one.
 */

#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <asm/tsc.h>
#include <asm/msr.h>
#include <asm/nospec-branch.h>
#include <linux/objtool.h>

#include "kprobe_bench_fns.h"

#define REPS		1001
/*
 * Probe targets for attach and scale: NR_FNS functions of FN_INSNS
 * five-byte instructions each, every one of which can be probed and
 * optimized on its own: 115,000, enough for the disjoint targets of all
 * the runs make bench does (up to 100,000 probes in one). Few symbols
 * keep module kallsyms lookups (a linear walk) from dominating what is
 * measured.
 */
#define NR_FNS		2300
#define FN_INSNS	50
#define NR_TARGETS	(NR_FNS * FN_INSNS)

static char *experiment = "hits";
module_param_named(exp, experiment, charp, 0444);
static int n = 100;
module_param(n, int, 0444);
static bool batch = true;
module_param(batch, bool, 0444);
/*
 * First target to use: runs use disjoint targets, because the tree's
 * kprobes trip over an address probed (and optimized) by the module's
 * previous load (a WARN in reuse_unused_kprobe() and -EINVAL).
 */
static int first;
module_param(first, int, 0444);

/*
 * bench_opt(x) = x + 6: two instructions (7 bytes) at +0 that a jump can
 * replace. bench_boost(x) = x + 1: the add at +3 is followed by ret; a
 * probe there can be boosted, and is measured right after registering,
 * before any optimizer's delay is over (after it, ours optimizes it: a
 * ret may end a region). bench_scale_fn(x) = (u32)(x + 1): the add at +3 and
 * the ret are four bytes, too few for a jump, so a probe there stays
 * boosted however long it is registered. bench_fns[] lists the NR_FNS
 * functions of FN_INSNS "addl $1000, %eax" and a ret.
 */
#define BENCH_RET ANNOTATE_RETPOLINE_SAFE "ret\n"
/* Called through pointers, but without ENDBR: their offsets stay as written. */
#define BENCH_FUNC(name) ".type " #name ", @function\n" #name ":\n" ANNOTATE_NOENDBR
#define BENCH_END(name) ".size " #name ", .-" #name "\n"

unsigned long bench_opt(unsigned long x);
unsigned long bench_boost(unsigned long x);
unsigned long bench_scale_fn(unsigned long x);
extern const unsigned long bench_fns[NR_FNS];
unsigned long bench_big(unsigned long x);

/*
 * bench_big: BIG_INSNS one-byte instructions and a ret. Every byte is an
 * instruction that can be probed and boosted, and optimized where no
 * other probe is within the jump's five bytes.
 */
#define BIG_INSNS	24000

asm(".pushsection .text\n"
    BENCH_FUNC(bench_opt)
    "	movq %rdi, %rax\n"
    "	addq $5, %rax\n"
    "	addq $1, %rax\n"
    BENCH_RET
    BENCH_END(bench_opt)
    BENCH_FUNC(bench_boost)
    "	movq %rdi, %rax\n"
    "	addq $1, %rax\n"
    BENCH_RET
    BENCH_END(bench_boost)
    BENCH_FUNC(bench_big)
    "	.rept " __stringify(BIG_INSNS) "\n"
    "	clc\n"
    "	.endr\n"
    BENCH_RET
    BENCH_END(bench_big)
    BENCH_FUNC(bench_scale_fn)
    "	movq %rdi, %rax\n"
    "	addl $1, %eax\n"
    BENCH_RET
    BENCH_END(bench_scale_fn)
    ".altmacro\n"
    ".macro bench_fn i\n"
    "	.pushsection .text\n"
    "	.type bench_fn_\\i, @function\n"
    "bench_fn_\\i:\n"
    ANNOTATE_NOENDBR
    "	.rept " __stringify(FN_INSNS) "\n"
    "	addl $1000, %eax\n"
    "	.endr\n"
    "	" BENCH_RET
    "	.size bench_fn_\\i, .-bench_fn_\\i\n"
    "	.popsection\n"
    "	.quad bench_fn_\\i\n"
    ".endm\n"
    ".popsection\n"
    ".pushsection .rodata\n"
    ".balign 8\n"
    "bench_fns:\n"
    ".set bench_i, 0\n"
    ".rept " __stringify(NR_FNS) "\n"
    "	bench_fn %bench_i\n"
    "	.set bench_i, bench_i + 1\n"
    ".endr\n"
    ".noaltmacro\n"
    ".popsection\n");

/*
 * One function per instruction kind measured by exp=kinds, the probed
 * instruction at the offset given in bench_kinds[], followed by enough
 * bytes for a jump where the kind can be optimized.
 */
unsigned long bench_k_lea(unsigned long x);
unsigned long bench_k_load(unsigned long x);
unsigned long bench_k_add(unsigned long x);
unsigned long bench_k_push(unsigned long x);
unsigned long bench_k_rip(unsigned long x);
unsigned long bench_k_jcc(unsigned long x);
unsigned long bench_k_call(unsigned long x);
static unsigned long bench_rip_data __used = 42;

asm(".pushsection .text\n"
    BENCH_FUNC(bench_k_lea)
    "	leaq 8(%rdi), %rax\n"		/* +0 */
    "	addq $1, %rax\n"
    BENCH_RET
    BENCH_END(bench_k_lea)
    BENCH_FUNC(bench_k_load)
    "	movq (%rsp), %rax\n"		/* +0 */
    "	movq %rdi, %rax\n"
    "	addq $1, %rax\n"
    BENCH_RET
    BENCH_END(bench_k_load)
    BENCH_FUNC(bench_k_add)
    "	movq %rdi, %rax\n"
    "	addq $1, %rax\n"		/* +3 */
    "	addq $2, %rax\n"
    BENCH_RET
    BENCH_END(bench_k_add)
    BENCH_FUNC(bench_k_push)
    "	pushq %rdi\n"			/* +0 */
    "	popq %rax\n"
    "	addq $1, %rax\n"
    BENCH_RET
    BENCH_END(bench_k_push)
    BENCH_FUNC(bench_k_rip)
    "	movq bench_rip_data(%rip), %rax\n"	/* +0 */
    BENCH_RET
    BENCH_END(bench_k_rip)
    BENCH_FUNC(bench_k_jcc)
    "	testq %rdi, %rdi\n"
    "	jz 1f\n"			/* +3 */
    "	movq %rdi, %rax\n"
    BENCH_RET
    "1:	xorl %eax, %eax\n"
    BENCH_RET
    BENCH_END(bench_k_jcc)
    BENCH_FUNC(bench_k_call)
    "	call bench_opt\n"		/* +0 */
    BENCH_RET
    BENCH_END(bench_k_call)
    ".popsection\n");

/* A C function: its entry is an ftrace site where the kernel has them. */
static noinline unsigned long bench_ftrace(unsigned long x)
{
	asm volatile("" : "+r" (x));
	return x + 2;
}

static u64 samples[REPS];

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median cost of a call of @fn, in instructions (see the top comment). */
static u64 call_cost_of(unsigned long (*fn)(unsigned long), int reps)
{
	unsigned long (*volatile call)(unsigned long) = fn;
	u64 t0, t1;
	int i;

	for (i = 0; i < reps; i++) {
		t0 = rdtsc_ordered();
		call(i);
		t1 = rdtsc_ordered();
		samples[i] = t1 - t0;
	}
	sort(samples, reps, sizeof(u64), cmp_u64, NULL);
	return div_u64(samples[reps / 2] * 1000000ULL, tsc_khz);
}

static u64 call_cost(unsigned long (*fn)(unsigned long))
{
	return call_cost_of(fn, REPS);
}

static int nop_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static void nop_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static int nop_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

static int stamp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(u64 *)ri->data = regs->di;
	return 0;
}

/*
 * Wait (up to 20 s) until a hit on @fn costs at most @limit instructions.
 * Polls about every 150 microseconds, sleeping in between so that workers
 * queued on this CPU run (a coarser sleep would round every time measured
 * with it up to a jiffy). A poll is the median of POLL_REPS calls, which
 * tells a probed call from an unprobed one as well as REPS calls do
 * (each call's cost is exact here) and keeps this CPU mostly idle: a
 * busy vCPU takes a text sync's IPI only when QEMU switches to it, so a
 * poller that kept its CPU busy would make a kprobes that rewrites text
 * from a worker meanwhile pay for the polling, where on hardware the IPI
 * interrupts it at once.
 */
#define POLL_REPS	21

static bool wait_cheaper(unsigned long (*fn)(unsigned long), u64 base, u64 limit)
{
	int i;

	for (i = 0; i < 100000; i++) {
		if (call_cost_of(fn, POLL_REPS) <= base + limit)
			return true;
		usleep_range(100, 200);
	}
	return false;
}

/*
 * An optimized hit costs well under this (about 100 instructions, 150
 * for an aggregate of 4); a trapping one well over (245 and more).
 */
#define OPTIMIZED_LIMIT	180
/* A call that runs no probe code costs what it did before any probe. */
#define UNPROBED_LIMIT	2

static void report(const char *key, u64 value)
{
	pr_info("BENCH %s %llu\n", key, value);
}

static void bench_hits(void)
{
	u64 base_opt = call_cost(bench_opt), base_boost = call_cost(bench_boost);
	u64 base_ftrace = call_cost(bench_ftrace);
	struct kprobe kp = {}, agg[4] = {};
	struct kretprobe rp = {};
	struct kprobe *aggs[4];
	int i;

	report("base_call", base_opt);

	kp.addr = (kprobe_opcode_t *)bench_boost + 3;
	kp.pre_handler = nop_pre;
	kp.post_handler = nop_post;
	if (!register_kprobe(&kp)) {
		report("hit_breakpoint_post", call_cost(bench_boost) - base_boost);
		unregister_kprobe(&kp);
	}

	memset(&kp, 0, sizeof(kp));
	kp.addr = (kprobe_opcode_t *)bench_boost + 3;
	kp.pre_handler = nop_pre;
	if (!register_kprobe(&kp)) {
		call_cost(bench_boost);		/* the first hits ready the boost */
		report("hit_boosted", call_cost(bench_boost) - base_boost);
		unregister_kprobe(&kp);
	}

	memset(&kp, 0, sizeof(kp));
	kp.addr = (kprobe_opcode_t *)bench_opt;
	kp.pre_handler = nop_pre;
	if (!register_kprobe(&kp)) {
		wait_cheaper(bench_opt, base_opt, OPTIMIZED_LIMIT);
		report("hit_optimized", call_cost(bench_opt) - base_opt);
		unregister_kprobe(&kp);
	}

	memset(&kp, 0, sizeof(kp));
	kp.addr = (kprobe_opcode_t *)bench_ftrace;
	kp.pre_handler = nop_pre;
	if (!register_kprobe(&kp)) {
		report("hit_ftrace", call_cost(bench_ftrace) - base_ftrace);
		unregister_kprobe(&kp);
	}

	rp.kp.addr = (kprobe_opcode_t *)bench_ftrace;
	rp.handler = nop_ret;
	if (!register_kretprobe(&rp)) {
		report("hit_kretprobe", call_cost(bench_ftrace) - base_ftrace);
		unregister_kretprobe(&rp);
	}

	memset(&rp, 0, sizeof(rp));
	rp.kp.addr = (kprobe_opcode_t *)bench_ftrace;
	rp.handler = nop_ret;
	rp.entry_handler = stamp_entry;
	rp.data_size = sizeof(u64);
	if (!register_kretprobe(&rp)) {
		report("hit_kretprobe_entry", call_cost(bench_ftrace) - base_ftrace);
		unregister_kretprobe(&rp);
	}

	for (i = 0; i < 4; i++) {
		agg[i].addr = (kprobe_opcode_t *)bench_opt;
		agg[i].pre_handler = nop_pre;
		aggs[i] = &agg[i];
	}
	if (!register_kprobes(aggs, 4)) {
		wait_cheaper(bench_opt, base_opt, OPTIMIZED_LIMIT);
		report("hit_aggregate4", call_cost(bench_opt) - base_opt);
		unregister_kprobes(aggs, 4);
	}
}

static struct kprobe *alloc_fn_probes(int count, struct kprobe ***kps)
{
	struct kprobe *probes;
	int i, t;

	if (first < 0 || count > NR_TARGETS - first)
		return NULL;
	probes = vzalloc(array_size(count, sizeof(*probes)));

	*kps = vzalloc(array_size(count, sizeof(**kps)));
	if (!probes || !*kps) {
		vfree(probes);
		vfree(*kps);
		return NULL;
	}
	for (i = 0; i < count; i++) {
		t = first + i;
		probes[i].addr = (kprobe_opcode_t *)bench_fns[t % NR_FNS] +
				 5 * (t / NR_FNS);
		probes[i].pre_handler = nop_pre;
		(*kps)[i] = &probes[i];
	}
	return probes;
}

static void bench_attach(void)
{
	unsigned long (*last)(unsigned long), (*first_fn)(unsigned long);
	struct kprobe *probes, **kps;
	u64 t0, t1, t2, t3, base, first_base;
	int i, ret = 0;

	if (n < 1 || n > NR_TARGETS)
		return;
	probes = alloc_fn_probes(n, &kps);
	if (!probes)
		return;
	/*
	 * Called at its own address, the last probe's code runs only that
	 * probe: the highest one in its function.
	 */
	last = (void *)probes[n - 1].addr;
	base = call_cost(last);
	first_fn = (void *)probes[0].addr;
	first_base = call_cost(first_fn);

	t0 = ktime_get_ns();
	if (batch)
		ret = register_kprobes(kps, n);
	else
		for (i = 0; i < n && !ret; i++)
			ret = register_kprobe(kps[i]);
	t1 = ktime_get_ns();
	if (ret) {
		pr_err("BENCH register failed: %d\n", ret);
		if (!batch)
			unregister_kprobes(kps, i - 1);
		goto out;
	}
	/*
	 * An optimizer may work through its queue in either order: wait for
	 * the first and the last probe registered. Called at its address,
	 * the first one's code also runs the probes after it in its
	 * function, one per NR_FNS probes.
	 */
	if (wait_cheaper(last, base, OPTIMIZED_LIMIT) &&
	    wait_cheaper(first_fn, first_base, OPTIMIZED_LIMIT * DIV_ROUND_UP(n, NR_FNS)))
		report("optimized_ns", ktime_get_ns() - t0);
	t2 = ktime_get_ns();
	if (batch)
		unregister_kprobes(kps, n);
	else
		for (i = 0; i < n; i++)
			unregister_kprobe(kps[i]);
	t3 = ktime_get_ns();
	report("register_ns", t1 - t0);
	report("unregister_ns", t3 - t2);
	/* A kprobes that returns before it restored the text is not done. */
	if (wait_cheaper(last, base, UNPROBED_LIMIT) &&
	    wait_cheaper(first_fn, first_base, UNPROBED_LIMIT))
		report("unprobed_ns", ktime_get_ns() - t2);
out:
	vfree(probes);
	vfree(kps);
}

/*
 * One load for every size: the tree's kprobes trip over a probe address
 * that the module's previous load used (see first=), and the measured
 * probe is the same each time. It goes in first: where sites share a
 * hash chain, new ones go in front, and the oldest is the one a lookup
 * reaches last. Then others are added, SCALE_STEP at a time, up to each
 * of sizes=, until registering has taken budget= seconds (virtual): the
 * tree's kprobes take about 5 ms per probe, 100,000 would be most of an
 * hour under TCG.
 */
#define SCALE_STEP	1000
static int sizes[8];
static int nr_sizes;
module_param_array(sizes, int, &nr_sizes, 0444);
static int budget = 60;
module_param(budget, int, 0444);

static void bench_scale(void)
{
	struct kprobe *probes, **kps, kp = {};
	u64 base = call_cost(bench_scale_fn), t0, spent = 0, first_base, last_bases[8];
	unsigned long (*first_fn)(unsigned long), (*last)(unsigned long);
	int i, done = 0, ret, max = 0, step;
	char key[32];

	for (i = 0; i < nr_sizes; i++)
		if (sizes[i] < max || sizes[i] < 1 || sizes[i] > NR_TARGETS)
			return;	/* ascending, and within the targets */
		else
			max = sizes[i];
	if (!max)
		return;
	n = max;
	probes = alloc_fn_probes(max, &kps);
	if (!probes)
		return;
	for (i = 0; i < nr_sizes; i++)
		last_bases[i] = call_cost((void *)probes[sizes[i] - 1].addr);
	first_fn = (void *)probes[0].addr;
	first_base = call_cost(first_fn);
	kp.addr = (kprobe_opcode_t *)bench_scale_fn + 3;
	kp.pre_handler = nop_pre;
	ret = register_kprobe(&kp);
	for (i = 0; !ret && i < nr_sizes; i++) {
		while (!ret && done < sizes[i]) {
			if (spent > budget * NSEC_PER_SEC) {
				report("scale_stopped_at", done);
				goto stop;
			}
			step = min(SCALE_STEP, sizes[i] - done);
			t0 = ktime_get_ns();
			ret = register_kprobes(kps + done, step);
			spent += ktime_get_ns() - t0;
			if (!ret)
				done += step;
		}
		if (ret)
			break;
		/*
		 * While an optimizer rewrites text, every int3 on the system
		 * also goes through text_poke's handler: measure after it is
		 * done with the first and the last probe.
		 */
		last = (void *)probes[done - 1].addr;
		wait_cheaper(last, last_bases[i], OPTIMIZED_LIMIT);
		wait_cheaper(first_fn, first_base,
			     OPTIMIZED_LIMIT * DIV_ROUND_UP(done, NR_FNS));
		/*
		 * And after the probes between them: with 10,000 probes ours
		 * measured 371 right away, 240 three seconds later (the
		 * optimizer's last batches still going through text_poke).
		 */
		msleep(3000);
		call_cost(bench_scale_fn);
		snprintf(key, sizeof(key), "hit_boosted_among_%d", done);
		report(key, call_cost(bench_scale_fn) - base);
	}
stop:
	if (ret)
		pr_err("BENCH register failed: %d\n", ret);
	if (done)
		unregister_kprobes(kps, done);
	unregister_kprobe(&kp);
	vfree(probes);
	vfree(kps);
}

/*
 * exp=big and exp=entries: probes (or kretprobes, @kret) registered in
 * steps, one register_kprobes() call per step when @batched (10 probes,
 * then twice as many each time up to LAYOUT_STEP) or one
 * register_kprobe() each, until all @n are or layout_budget= seconds
 * (virtual) have gone: the tree's kprobes take half a second per probe
 * in the large function (each instruction it decodes looks up the
 * module's symbols one by one). Reports <key>_done (probes registered),
 * <key>_register_ns and, for the same probes, <key>_unregister_ns.
 */
#define LAYOUT_STEP	1000
static int layout_budget = 5;
module_param(layout_budget, int, 0444);

static int layout_register(void **probes, int count, bool kret)
{
	if (kret)
		return count == 1 ? register_kretprobe(probes[0]) :
			register_kretprobes((struct kretprobe **)probes, count);
	return count == 1 ? register_kprobe(probes[0]) :
		register_kprobes((struct kprobe **)probes, count);
}

static void layout_unregister(void **probes, int count, bool kret)
{
	if (kret)
		unregister_kretprobes((struct kretprobe **)probes, count);
	else
		unregister_kprobes((struct kprobe **)probes, count);
}

static void run_layout(const char *key, void **probes, int n, bool batched,
		       bool kret, unsigned long (*wait_fn)(unsigned long))
{
	int done = 0, step = batched ? 10 : 1, count, ret = 0;
	u64 spent = 0, t0, base = wait_fn ? call_cost(wait_fn) : 0;
	char name[48];

	while (done < n && spent <= layout_budget * NSEC_PER_SEC) {
		count = min(step, n - done);
		t0 = ktime_get_ns();
		ret = layout_register(probes + done, count, kret);
		spent += ktime_get_ns() - t0;
		if (ret) {
			pr_err("BENCH %s: register failed: %d\n", key, ret);
			break;
		}
		done += count;
		if (batched)
			step = min(2 * step, LAYOUT_STEP);
	}
	/* The optimizer is done when the last probe runs optimized. */
	if (wait_fn && done)
		wait_cheaper(wait_fn, base, OPTIMIZED_LIMIT);
	snprintf(name, sizeof(name), "%s_done", key);
	report(name, done);
	snprintf(name, sizeof(name), "%s_register_ns", key);
	report(name, spent);
	spent = 0;
	while (done) {
		count = min(batched ? LAYOUT_STEP : 1, done);
		t0 = ktime_get_ns();
		layout_unregister(probes + done - count, count, kret);
		spent += ktime_get_ns() - t0;
		done -= count;
	}
	snprintf(name, sizeof(name), "%s_unregister_ns", key);
	report(name, spent);
}

/* Sizes from sizes=, ascending and positive; false if none or wrong. */
static bool layout_sizes_ok(int limit)
{
	int i, total = 0;

	for (i = 0; i < nr_sizes; i++) {
		if (sizes[i] < 1 || sizes[i] > limit)
			return false;
		total += sizes[i];
	}
	return nr_sizes && total <= limit;
}

static void bench_big_layout(void)
{
	struct kprobe *probes, **kps;
	int i, j, off = 0, mode;
	char key[32];

	/* Runs use disjoint instructions (see first=); 2 runs per size. */
	if (!layout_sizes_ok((BIG_INSNS - JMP32_INSN_SIZE) / 2))
		return;
	probes = vzalloc(array_size(BIG_INSNS, sizeof(*probes)));
	kps = vzalloc(array_size(BIG_INSNS, sizeof(*kps)));
	if (!probes || !kps)
		goto out;
	for (i = 0; i < BIG_INSNS; i++) {
		probes[i].addr = (kprobe_opcode_t *)bench_big + i;
		probes[i].pre_handler = nop_pre;
		kps[i] = &probes[i];
	}
	for (i = 0; i < nr_sizes; i++) {
		for (mode = 1; mode >= 0; mode--) {
			j = sizes[i];
			snprintf(key, sizeof(key), "big_%s_%d", mode ? "batch" : "single", j);
			run_layout(key, (void **)(kps + off), j, mode, false,
				   (void *)probes[off + j - 1].addr);
			off += j;
		}
	}
out:
	vfree(probes);
	vfree(kps);
}

static bool kret;
module_param(kret, bool, 0444);

/* Fresh probes (or kretprobes) at the entries of the first @count functions. */
static void fill_entry_probes(void **ptrs, void *array, int count)
{
	struct kretprobe *rps = array;
	struct kprobe *probes = array;
	int i;

	memset(array, 0, array_size(count, kret ? sizeof(*rps) : sizeof(*probes)));
	for (i = 0; i < count; i++) {
		if (kret) {
			rps[i].kp.addr = (kprobe_opcode_t *)bench_entry_fns[i];
			rps[i].handler = nop_ret;
			ptrs[i] = &rps[i];
		} else {
			probes[i].addr = (kprobe_opcode_t *)bench_entry_fns[i];
			probes[i].pre_handler = nop_pre;
			ptrs[i] = &probes[i];
		}
	}
}

static void bench_entries_layout(void)
{
	int i, mode, max = 0;
	void **ptrs, *array;
	char key[32];

	for (i = 0; i < nr_sizes; i++)
		max = max(max, sizes[i]);
	if (!nr_sizes || max > BENCH_ENTRY_FNS)
		return;
	ptrs = vzalloc(array_size(max, sizeof(*ptrs)));
	array = vzalloc(array_size(max, max(sizeof(struct kretprobe),
					     sizeof(struct kprobe))));
	if (!ptrs || !array)
		goto out;
	/*
	 * Every run uses the same functions: these probes are never
	 * optimized, and so leave nothing behind in either kprobes.
	 */
	for (i = 0; i < nr_sizes; i++) {
		for (mode = 1; mode >= 0; mode--) {
			snprintf(key, sizeof(key), "%s_%s_%d", kret ? "kret" : "entry",
				 mode ? "batch" : "single", sizes[i]);
			fill_entry_probes(ptrs, array, sizes[i]);
			run_layout(key, ptrs, sizes[i], mode, kret, NULL);
		}
	}
out:
	vfree(ptrs);
	vfree(array);
}

static bool opt;
module_param(opt, bool, 0444);

static const struct {
	const char *name;
	unsigned long (*fn)(unsigned long);
	unsigned int offset;
} bench_kinds[] = {
	{ "lea", bench_k_lea, 0 },
	{ "load", bench_k_load, 0 },
	{ "add", bench_k_add, 3 },
	{ "push", bench_k_push, 0 },
	{ "rip", bench_k_rip, 0 },
	{ "jcc", bench_k_jcc, 3 },
	{ "call", bench_k_call, 0 },
};

static void bench_kind(int i)
{
	unsigned long (*fn)(unsigned long) = bench_kinds[i].fn;
	u64 base = call_cost(fn), cost;
	struct kprobe kp = {};
	char key[40];

	kp.addr = (kprobe_opcode_t *)fn + bench_kinds[i].offset;
	kp.pre_handler = nop_pre;
	if (opt) {
		if (register_kprobe(&kp))
			return;
		/*
		 * Reported only once it runs optimized in this kprobes: the
		 * tree's copies no branch into a detour, so its jz and call
		 * time out here (about 15 s of virtual time each).
		 */
		if (wait_cheaper(fn, base, OPTIMIZED_LIMIT)) {
			snprintf(key, sizeof(key), "kind_%s_optimized", bench_kinds[i].name);
			report(key, call_cost(fn) - base);
		}
		unregister_kprobe(&kp);
		return;
	}
	kp.post_handler = nop_post;
	if (!register_kprobe(&kp)) {
		cost = call_cost(fn) - base;
		snprintf(key, sizeof(key), "kind_%s_post", bench_kinds[i].name);
		report(key, cost);
		unregister_kprobe(&kp);
	}
	memset(&kp, 0, sizeof(kp));
	kp.addr = (kprobe_opcode_t *)fn + bench_kinds[i].offset;
	kp.pre_handler = nop_pre;
	if (!register_kprobe(&kp)) {
		call_cost(fn);		/* the first hits ready a boost */
		cost = call_cost(fn) - base;
		snprintf(key, sizeof(key), "kind_%s_trap", bench_kinds[i].name);
		report(key, cost);
		unregister_kprobe(&kp);
	}
}

static void bench_kinds_run(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(bench_kinds); i++)
		bench_kind(i);
}

/* exp=hold: probes registered at load and unregistered at unload. */
static struct kprobe *held_probes, **held_kps;

static void bench_hold(void)
{
	int ret;

	if (n < 1 || n > NR_TARGETS)
		return;
	held_probes = alloc_fn_probes(n, &held_kps);
	if (!held_probes)
		return;
	ret = register_kprobes(held_kps, n);
	if (ret) {
		pr_err("BENCH register failed: %d\n", ret);
		vfree(held_probes);
		vfree(held_kps);
		held_probes = NULL;
	}
}

static int threads = 4;
module_param(threads, int, 0444);
static int where;
module_param(where, int, 0444);

#define CONC_ROUNDS	3
#define CONC_MAX_THREADS	16

/*
 * One thread of exp=concurrent: registers its probes one at a time when
 * told to, then unregisters them one at a time when told to.
 */
struct conc_worker {
	struct kprobe **kps;
	int count;
	struct completion go_register, registered, go_unregister, unregistered;
	int error;
};

static int conc_worker_fn(void *arg)
{
	struct conc_worker *w = arg;
	int i;

	wait_for_completion(&w->go_register);
	for (i = 0; i < w->count && !w->error; i++)
		w->error = register_kprobe(w->kps[i]);
	if (w->error)
		w->count = i - 1;
	complete(&w->registered);
	wait_for_completion(&w->go_unregister);
	for (i = 0; i < w->count; i++)
		unregister_kprobe(w->kps[i]);
	complete(&w->unregistered);
	return 0;
}

/* Disables and enables its probe until told to stop; counts, times each. */
struct conc_toggler {
	struct kprobe *kp;
	bool stop;
	u64 count, max_ns;
	struct completion done;
};

static int conc_toggler_fn(void *arg)
{
	struct conc_toggler *t = arg;
	u64 t0, dt;

	while (!READ_ONCE(t->stop)) {
		t0 = ktime_get_ns();
		if (disable_kprobe(t->kp) || enable_kprobe(t->kp))
			break;
		dt = ktime_get_ns() - t0;
		t->count++;
		t->max_ns = max(t->max_ns, dt);
		usleep_range(50, 100);
	}
	complete(&t->done);
	return 0;
}

/* Fresh probes at the concurrent experiment's targets, @first_target on. */
static void conc_fill(struct kprobe *probes, struct kprobe **kps, int count,
		      int first_target)
{
	int i, t;

	memset(probes, 0, array_size(count, sizeof(*probes)));
	for (i = 0; i < count; i++) {
		t = first_target + i;
		if (where)
			probes[i].addr = (kprobe_opcode_t *)bench_entry_fns[t];
		else
			probes[i].addr = (kprobe_opcode_t *)bench_fns[t % NR_FNS] +
					 5 * (t / NR_FNS);
		probes[i].pre_handler = nop_pre;
		kps[i] = &probes[i];
	}
}

static struct conc_worker conc_workers[CONC_MAX_THREADS];
static struct conc_toggler conc_tog;

static u64 conc_median(u64 *v)
{
	sort(v, CONC_ROUNDS, sizeof(u64), cmp_u64, NULL);
	return v[CONC_ROUNDS / 2];
}

static void bench_concurrent(void)
{
	u64 reg[CONC_ROUNDS], unreg[CONC_ROUNDS], alone[CONC_ROUNDS];
	u64 toggles[CONC_ROUNDS], toggle_max[CONC_ROUNDS], t0;
	struct conc_worker *workers = conc_workers;
	struct kprobe *probes, **kps, toggled = { .pre_handler = nop_pre };
	struct conc_toggler *tog = &conc_tog;
	int total = threads * n, i, r, base;
	const char *w = where ? "entry" : "body";
	char key[48];

	/* Each round: total + 1 targets at once, then total alone. */
	if (threads < 1 || threads > CONC_MAX_THREADS || n < 1 || first < 0 ||
	    first + CONC_ROUNDS * (2 * total + 1) > (where ? BENCH_ENTRY_FNS : NR_TARGETS))
		return;
	probes = vzalloc(array_size(total + 1, sizeof(*probes)));
	kps = vzalloc(array_size(total + 1, sizeof(*kps)));
	if (!probes || !kps)
		goto out;

	for (r = 0; r < CONC_ROUNDS; r++) {
		/* Every round on targets of its own (see first=). */
		base = first + r * (2 * total + 1);
		conc_fill(probes, kps, total + 1, base);
		toggled.addr = probes[total].addr;
		if (register_kprobe(&toggled)) {
			pr_err("BENCH concurrent: register failed\n");
			goto out;
		}
		for (i = 0; i < threads; i++) {
			workers[i] = (struct conc_worker){ .kps = kps + i * n, .count = n };
			init_completion(&workers[i].go_register);
			init_completion(&workers[i].registered);
			init_completion(&workers[i].go_unregister);
			init_completion(&workers[i].unregistered);
			kthread_run(conc_worker_fn, &workers[i], "kpbench-conc%d", i);
		}
		t0 = ktime_get_ns();
		for (i = 0; i < threads; i++)
			complete(&workers[i].go_register);
		for (i = 0; i < threads; i++)
			wait_for_completion(&workers[i].registered);
		reg[r] = ktime_get_ns() - t0;

		*tog = (struct conc_toggler){ .kp = &toggled };
		init_completion(&tog->done);
		kthread_run(conc_toggler_fn, tog, "kpbench-toggle");
		t0 = ktime_get_ns();
		for (i = 0; i < threads; i++)
			complete(&workers[i].go_unregister);
		for (i = 0; i < threads; i++)
			wait_for_completion(&workers[i].unregistered);
		unreg[r] = ktime_get_ns() - t0;
		WRITE_ONCE(tog->stop, true);
		wait_for_completion(&tog->done);
		toggles[r] = tog->count;
		toggle_max[r] = tog->max_ns;
		unregister_kprobe(&toggled);
		for (i = 0; i < threads; i++)
			if (workers[i].error)
				pr_err("BENCH concurrent: register failed: %d\n", workers[i].error);

		/* The same number unregistered one at a time by one thread. */
		conc_fill(probes, kps, total, base + total + 1);
		for (i = 0; i < total; i++)
			if (register_kprobe(kps[i]))
				break;
		t0 = ktime_get_ns();
		while (i-- > 0)
			unregister_kprobe(kps[i]);
		alone[r] = ktime_get_ns() - t0;
	}
	snprintf(key, sizeof(key), "conc_%s_register_ns", w);
	report(key, conc_median(reg));
	snprintf(key, sizeof(key), "conc_%s_unregister_ns", w);
	report(key, conc_median(unreg));
	snprintf(key, sizeof(key), "conc_%s_alone_unregister_ns", w);
	report(key, conc_median(alone));
	snprintf(key, sizeof(key), "conc_%s_toggles", w);
	report(key, conc_median(toggles));
	snprintf(key, sizeof(key), "conc_%s_toggle_max_ns", w);
	report(key, conc_median(toggle_max));
out:
	vfree(probes);
	vfree(kps);
}

#ifdef KPROBE_BENCH_DEFERRED
/*
 * Ours only (kprobe_unregister_deferred() is not the tree's): what
 * register_kprobe() costs while releases are pending. For each of
 * sizes= (M), M probes wait for their release behind one whose release
 * callback blocks the release work, and n= probes are then registered
 * one at a time; all of them disabled, so that no text is written and
 * what is measured is the registration's own work. Reports the mean
 * per registration: it should not grow with M.
 */
static DECLARE_COMPLETION(blocker_entered);
static DECLARE_COMPLETION(blocker_go);

static void blocker_release(struct kprobe *p)
{
	complete(&blocker_entered);
	wait_for_completion(&blocker_go);
}

static void pending_round(struct kprobe *probes, struct kprobe **kps, int m)
{
	struct kprobe *measured = probes, *blocker = probes + n, *pending = blocker + 1;
	char key[48];
	u64 t0, t1;
	int i, ret = 0;

	for (i = 0; i < n + 1 + m; i++) {
		kprobe_opcode_t *addr = probes[i].addr;

		memset(&probes[i], 0, sizeof(probes[i]));
		probes[i].addr = addr;
		probes[i].pre_handler = nop_pre;
		probes[i].flags = KPROBE_FLAG_DISABLED;
	}
	reinit_completion(&blocker_entered);
	reinit_completion(&blocker_go);
	ret = register_kprobes(kps + n, m + 1);
	if (ret) {
		pr_err("BENCH register failed: %d\n", ret);
		return;
	}
	ret = kprobe_unregister_deferred(blocker, blocker_release);
	if (ret) {
		pr_err("BENCH deferred unregister failed: %d\n", ret);
		unregister_kprobes(kps + n + 1, m);
		return;
	}
	wait_for_completion(&blocker_entered);
	for (i = 0; i < m; i++)
		kprobe_unregister_deferred(&pending[i], NULL);

	t0 = ktime_get_ns();
	for (i = 0; i < n && !ret; i++)
		ret = register_kprobe(&measured[i]);
	t1 = ktime_get_ns();
	if (ret)
		pr_err("BENCH register failed: %d\n", ret);
	else {
		snprintf(key, sizeof(key), "pending_%d_register_ns", m);
		report(key, div_u64(t1 - t0, n));
	}
	unregister_kprobes(kps, ret ? i - 1 : n);
	complete(&blocker_go);
	kprobe_deferred_barrier();
}

static void bench_pending(void)
{
	struct kprobe *probes, **kps;
	int i, most = 0;

	for (i = 0; i < nr_sizes; i++)
		most = max(most, sizes[i]);
	if (n < 1 || most < 0)
		return;
	probes = alloc_fn_probes(n + 1 + most, &kps);
	if (!probes)
		return;
	for (i = 0; i < nr_sizes; i++)
		pending_round(probes, kps, sizes[i]);
	vfree(probes);
	vfree(kps);
}
#endif

static int __init kprobe_bench_init(void)
{
	if (!strcmp(experiment, "hits"))
		bench_hits();
	else if (!strcmp(experiment, "attach"))
		bench_attach();
	else if (!strcmp(experiment, "scale"))
		bench_scale();
	else if (!strcmp(experiment, "big"))
		bench_big_layout();
	else if (!strcmp(experiment, "entries"))
		bench_entries_layout();
	else if (!strcmp(experiment, "kinds"))
		bench_kinds_run();
	else if (!strcmp(experiment, "hold"))
		bench_hold();
	else if (!strcmp(experiment, "concurrent"))
		bench_concurrent();
#ifdef KPROBE_BENCH_DEFERRED
	else if (!strcmp(experiment, "pending"))
		bench_pending();
#endif
	else
		return -EINVAL;
	pr_info("BENCH done\n");
	return 0;
}
module_init(kprobe_bench_init);

static void __exit kprobe_bench_exit(void)
{
	if (!held_probes)
		return;
	unregister_kprobes(held_kps, n);
	vfree(held_probes);
	vfree(held_kps);
}
module_exit(kprobe_bench_exit);

MODULE_DESCRIPTION("kprobes benchmark (public API only)");
MODULE_LICENSE("GPL");
