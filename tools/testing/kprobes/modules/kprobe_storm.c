// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_storm: many kprobes clients at once while the probed functions
 * run hot on every CPU. Writing 1 to 'prepare' finds the targets and copies
 * their text; writing N to 'run' then storms for N seconds:
 *
 * - callers (callers_per_cpu per CPU, unbound) call this module's target
 *   functions in a loop, check what they return and sleep briefly now and
 *   then (an RCU-tasks grace period waits for that);
 * - preempters (one per CPU, SCHED_FIFO) wake every millisecond or two and
 *   spin a little, so that callers are preempted at any instruction,
 *   inside breakpoint hits and detour buffers too, and stay off the CPU
 *   while the text and the probes change under them;
 * - registrars register and unregister kprobes and kretprobes, in batches
 *   and one at a time, at every probe-able offset of the targets and of a
 *   few hot kernel functions, and enable and disable them while they are
 *   registered; one of them keeps optimizing probes and then disabling
 *   and unregistering them while callers run through their detours;
 * - a switcher flips /sys/kernel/debug/kprobes/enabled and
 *   debug.kprobes-optimization.
 *
 * Sentinel probes stay registered and enabled throughout, on the targets'
 * entry (an ftrace site), on an optimizable instruction, on one that can
 * only trap (with a post_handler) and as a kretprobe: each must see every
 * call made while kprobes were switched on, and none made while they
 * were off. The switcher flips the enabled file only while every caller
 * is between calls (phase_sem), so that each call is counted in one
 * phase. The guest script runs more clients beside (kprobe_events, a
 * module loaded and unloaded with a probe on it, debugfs readers).
 *
 * Writing 1 to 'check' afterwards unregisters the sentinels, waits for
 * the optimizer and compares every target's text with a copy taken
 * before the storm. The results are in the read-only parameters
 * (reg_errors, count_errors, text_errors) and in the kernel log.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/random.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/umh.h>
#include <linux/string.h>
#ifdef CONFIG_X86
#include <asm/ibt.h>
#include <asm/nospec-branch.h>
#endif

/* ---- the targets ---------------------------------------------------------- */

/* An ftrace site at its entry. */
static noinline int storm_entry_fn(int x)
{
	barrier();
	return x * 7 + 3;
}

#ifdef CONFIG_X86
/*
 * Small instructions a jump can cover: most offsets are optimizable, the
 * last ones (whose region would cross the ret) only trap.
 */
unsigned long storm_body_fn(unsigned long x);
asm(".pushsection .text\n"
    ".globl storm_body_fn\n"
    ".type storm_body_fn, @function\n"
    "storm_body_fn:\n"
    ASM_ENDBR
    "	movq %rdi, %rax\n"
    "	addq $1, %rax\n"
    "	leaq 2(%rax), %rax\n"
    "	addq $3, %rax\n"
    "	xorl %edx, %edx\n"
    "	addq %rdx, %rax\n"
    "	addq $4, %rax\n"
    "	subq $1, %rax\n"
    "	addq $5, %rax\n"
    ANNOTATE_RETPOLINE_SAFE "ret\n"
    ".size storm_body_fn, .-storm_body_fn\n"
    ".popsection\n");
#define BODY_RESULT(x)	((x) + 14)

/*
 * cpuid cannot be boosted, and the pops and the ret after it are too
 * short for a jump: probes there trap on every hit.
 */
unsigned long storm_trap_fn(unsigned long x);
asm(".pushsection .text\n"
    ".globl storm_trap_fn\n"
    ".type storm_trap_fn, @function\n"
    "storm_trap_fn:\n"
    ASM_ENDBR
    "	pushq %rbx\n"
    "	leaq 1(%rdi), %r8\n"
    "	pushq %r8\n"
    "	xorl %eax, %eax\n"
    "	xorl %ecx, %ecx\n"
    "	cpuid\n"
    "	popq %rax\n"
    "	popq %rbx\n"
    ANNOTATE_RETPOLINE_SAFE "ret\n"
    ".size storm_trap_fn, .-storm_trap_fn\n"
    ".popsection\n");
/* cpuid: where the trap sentinel goes. */
#define TRAP_INSN	"\x0f\xa2"

/*
 * Eight functions for the optimize-disable-unregister cycle: each site
 * goes away with its last probe, while callers may sit in its detour.
 */
#define JUMP_FN(n)							\
	".globl storm_jump_fn" #n "\n"					\
	"storm_jump_fn" #n ":\n"					\
	ASM_ENDBR							\
	"	movq %rdi, %rax\n"					\
	"	addq $" #n ", %rax\n"					\
	"	addq $1, %rax\n"					\
	ANNOTATE_RETPOLINE_SAFE "ret\n"					\
	".size storm_jump_fn" #n ", .-storm_jump_fn" #n "\n"		\
	".type storm_jump_fn" #n ", @function\n"
asm(".pushsection .text\n"
    JUMP_FN(0) JUMP_FN(1) JUMP_FN(2) JUMP_FN(3)
    JUMP_FN(4) JUMP_FN(5) JUMP_FN(6) JUMP_FN(7)
    ".popsection\n");
#elif defined(CONFIG_ARM64)
/*
 * arm64: the same targets in A64. Each starts with a BTI C landing pad
 * (a hint, a NOP where BTI is off): they are called through pointers,
 * and module text is guarded under BTI. Every instruction after it can
 * be optimized; the trap sentinel, with its post_handler, steps its ADD.
 */
unsigned long storm_body_fn(unsigned long x);
asm(".pushsection .text\n"
    ".globl storm_body_fn\n"
    ".type storm_body_fn, %function\n"
    "storm_body_fn:\n"
    "	hint 34\n"
    "	add x0, x0, #1\n"
    "	add x0, x0, #2\n"
    "	add x0, x0, #3\n"
    "	mov x1, #0\n"
    "	add x0, x0, x1\n"
    "	add x0, x0, #4\n"
    "	sub x0, x0, #1\n"
    "	add x0, x0, #5\n"
    "	ret\n"
    ".size storm_body_fn, .-storm_body_fn\n"
    ".popsection\n");
#define BODY_RESULT(x)	((x) + 14)

unsigned long storm_trap_fn(unsigned long x);
asm(".pushsection .text\n"
    ".globl storm_trap_fn\n"
    ".type storm_trap_fn, %function\n"
    "storm_trap_fn:\n"
    "	hint 34\n"
    "	mov x8, x0\n"
    "	add x0, x8, #1\n"
    "	ret\n"
    ".size storm_trap_fn, .-storm_trap_fn\n"
    ".popsection\n");
/* add x0, x8, #1, little-endian: where the trap sentinel goes. */
#define TRAP_INSN	"\x00\x05\x00\x91"

#define JUMP_FN(n)							\
	".globl storm_jump_fn" #n "\n"					\
	"storm_jump_fn" #n ":\n"					\
	"	hint 34\n"						\
	"	add x0, x0, #" #n "\n"					\
	"	add x0, x0, #1\n"					\
	"	ret\n"							\
	".size storm_jump_fn" #n ", .-storm_jump_fn" #n "\n"		\
	".type storm_jump_fn" #n ", %function\n"
asm(".pushsection .text\n"
    JUMP_FN(0) JUMP_FN(1) JUMP_FN(2) JUMP_FN(3)
    JUMP_FN(4) JUMP_FN(5) JUMP_FN(6) JUMP_FN(7)
    ".popsection\n");
#elif defined(CONFIG_RISCV) && defined(CONFIG_64BIT)
/*
 * riscv64: the same targets, 4-byte instructions only. a1, written
 * after the body's first instructions, is free for a boosted copy's
 * jump back; the trap sentinel, with its post_handler, steps its ADDI.
 */
unsigned long storm_body_fn(unsigned long x);
asm(".pushsection .text\n"
    ".option push\n.option norvc\n.option norelax\n"
    ".globl storm_body_fn\n"
    ".type storm_body_fn, @function\n"
    "storm_body_fn:\n"
    "	addi a0, a0, 1\n"
    "	addi a0, a0, 2\n"
    "	addi a0, a0, 3\n"
    "	li a1, 0\n"
    "	add a0, a0, a1\n"
    "	addi a0, a0, 4\n"
    "	addi a0, a0, -1\n"
    "	addi a0, a0, 5\n"
    "	li a1, 0\n"
    "	ret\n"
    ".size storm_body_fn, .-storm_body_fn\n"
    ".option pop\n"
    ".popsection\n");
#define BODY_RESULT(x)	((x) + 14)

unsigned long storm_trap_fn(unsigned long x);
asm(".pushsection .text\n"
    ".option push\n.option norvc\n.option norelax\n"
    ".globl storm_trap_fn\n"
    ".type storm_trap_fn, @function\n"
    "storm_trap_fn:\n"
    "	mv a7, a0\n"
    "	addi a0, a7, 1\n"
    "	ret\n"
    ".size storm_trap_fn, .-storm_trap_fn\n"
    ".option pop\n"
    ".popsection\n");
/* addi a0, a7, 1, little-endian: where the trap sentinel goes. */
#define TRAP_INSN	"\x13\x85\x18\x00"

#define JUMP_FN(n)							\
	".globl storm_jump_fn" #n "\n"					\
	"storm_jump_fn" #n ":\n"					\
	"	addi a0, a0, " #n "\n"					\
	"	addi a0, a0, 1\n"					\
	"	ret\n"							\
	".size storm_jump_fn" #n ", .-storm_jump_fn" #n "\n"		\
	".type storm_jump_fn" #n ", @function\n"
asm(".pushsection .text\n"
    ".option push\n.option norvc\n.option norelax\n"
    JUMP_FN(0) JUMP_FN(1) JUMP_FN(2) JUMP_FN(3)
    JUMP_FN(4) JUMP_FN(5) JUMP_FN(6) JUMP_FN(7)
    ".option pop\n"
    ".popsection\n");
#else
#error "kprobe_storm: no targets for this architecture"
#endif
#define NR_JUMP_FNS	8
/*
 * Two registrars of any probes, then four of optimized ones, two jump
 * functions each: the four share each optimizer pass.
 */
#define NR_REGISTRARS		2
#define NR_JUMP_REGISTRARS	4
#define JUMP_FNS_EACH		(NR_JUMP_FNS / NR_JUMP_REGISTRARS)
unsigned long storm_jump_fn0(unsigned long x), storm_jump_fn1(unsigned long x),
	storm_jump_fn2(unsigned long x), storm_jump_fn3(unsigned long x),
	storm_jump_fn4(unsigned long x), storm_jump_fn5(unsigned long x),
	storm_jump_fn6(unsigned long x), storm_jump_fn7(unsigned long x);

/* Called through pointers, so that each call is a real call. */
static int (*volatile entry_ptr)(int) = storm_entry_fn;
static unsigned long (*volatile body_ptr)(unsigned long) = storm_body_fn;
static unsigned long (*volatile trap_ptr)(unsigned long) = storm_trap_fn;
static unsigned long (*volatile jump_ptr[NR_JUMP_FNS])(unsigned long) = {
	storm_jump_fn0, storm_jump_fn1, storm_jump_fn2, storm_jump_fn3,
	storm_jump_fn4, storm_jump_fn5, storm_jump_fn6, storm_jump_fn7,
};

/*
 * Every function the storm probes: this module's targets, and hot kernel
 * functions the guest script's readers and forks keep running. Their
 * probe-able offsets below MAX_OFFSET are found by registering there.
 */
#define MAX_OFFSET	64
struct storm_target {
	const char *name;
	unsigned long start;
	unsigned int size;		/* bytes compared, up to MAX_OFFSET */
	unsigned int nr_offsets;
	u8 offsets[MAX_OFFSET];
	u8 text[MAX_OFFSET];		/* before the storm */
};

static struct storm_target targets[] = {
	{ .name = "storm_entry_fn" }, { .name = "storm_body_fn" },
	{ .name = "storm_trap_fn" },
	{ .name = "storm_jump_fn0" }, { .name = "storm_jump_fn1" },
	{ .name = "storm_jump_fn2" }, { .name = "storm_jump_fn3" },
	{ .name = "storm_jump_fn4" }, { .name = "storm_jump_fn5" },
	{ .name = "storm_jump_fn6" }, { .name = "storm_jump_fn7" },
	{ .name = "vfs_read" }, { .name = "vfs_write" },
	{ .name = "kernel_clone" }, { .name = "seq_read_iter" },
	{ .name = "do_sys_openat2" },
};

/* ---- results ----------------------------------------------------------- */

static unsigned int reg_errors, count_errors, text_errors;
module_param(reg_errors, uint, 0444);
module_param(count_errors, uint, 0444);
module_param(text_errors, uint, 0444);

/* Operations done, for the report. */
static atomic64_t nr_calls, nr_registered, nr_unregistered, nr_toggled,
	nr_kretprobes, nr_jumps_removed, nr_switches, nr_sysctl_flips;

static void reg_error(const char *what, int ret)
{
	reg_errors++;
	pr_err("kprobe_storm: %s: %d\n", what, ret);
}

/* ---- sentinels ----------------------------------------------------------- */

/* Calls counted per phase: [0] kprobes on, [1] switched off. */
enum { CALL_ENTRY, CALL_BODY, CALL_TRAP, NR_CALL_KINDS };
static atomic64_t calls[2][NR_CALL_KINDS];

static atomic64_t entry_hits, body_hits, trap_hits, trap_posts, ret_hits;

static int count_entry(struct kprobe *p, struct pt_regs *regs)
{
	atomic64_inc(&entry_hits);
	return 0;
}

static int count_body(struct kprobe *p, struct pt_regs *regs)
{
	atomic64_inc(&body_hits);
	return 0;
}

static int count_trap(struct kprobe *p, struct pt_regs *regs)
{
	atomic64_inc(&trap_hits);
	return 0;
}

static void count_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic64_inc(&trap_posts);
}

static int count_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic64_inc(&ret_hits);
	return 0;
}

static struct kprobe sentinel_entry = {
	.symbol_name = "storm_entry_fn", .pre_handler = count_entry,
};
static struct kprobe sentinel_body = { .pre_handler = count_body };
static struct kprobe sentinel_trap = {
	.pre_handler = count_trap, .post_handler = count_post,
};
static struct kretprobe sentinel_ret = {
	.kp.symbol_name = "storm_body_fn", .handler = count_ret,
};

/* The sentinels' counts when kprobes were last switched off. */
static long off_counts[5];

static void sentinel_counts(long *c)
{
	c[0] = atomic64_read(&entry_hits);
	c[1] = atomic64_read(&body_hits);
	c[2] = atomic64_read(&trap_hits);
	c[3] = atomic64_read(&trap_posts);
	c[4] = atomic64_read(&ret_hits);
}

#ifdef CONFIG_X86
/*
 * Our kernel exports wait_for_kprobe_optimizer(); the tree's does not, so
 * the module links to it weakly and, run on the tree for comparison,
 * sleeps for longer than an optimizer pass takes instead.
 */
extern void wait_for_kprobe_optimizer(void) __weak;

static void wait_optimizer(void)
{
	if (wait_for_kprobe_optimizer)
		wait_for_kprobe_optimizer();
	else
		msleep(1000);
}
#else
/*
 * arm64's and riscv64's storms run on our kernel only; arm64's module
 * loader refuses the GOT relocation a weak reference needs.
 */
static void wait_optimizer(void)
{
	wait_for_kprobe_optimizer();
}
#endif

/* ---- callers ----------------------------------------------------------- */

/*
 * Held for reading around each round of calls, for writing by the
 * switcher while it flips the enabled file and 'switched_off'.
 */
static DECLARE_RWSEM(phase_sem);
static bool switched_off;
/* No /bin/sh to write the enabled file with: the switcher flips the sysctl only. */
static bool no_shell;

static void call_error(const char *fn, unsigned long x, long got)
{
	count_errors++;
	pr_err("kprobe_storm: %s(%lu) returned %ld\n", fn, x, got);
}

static unsigned int callers_per_cpu = 2;
module_param(callers_per_cpu, uint, 0444);

/*
 * Every other caller runs at victim_nice: preempted in a detour, it
 * stays off the CPU for long while the others run, so that a site has
 * time to be disabled, unregistered and freed under it (the review's F1).
 */
static int victim_nice = 10;
module_param(victim_nice, int, 0444);

static int caller(void *nth)
{
	unsigned long x = get_random_u32();
	unsigned long r;
	unsigned int rounds = 0;
	int i, j, off;

	if ((unsigned long)nth & 1)
		set_user_nice(current, clamp(victim_nice, MIN_NICE, MAX_NICE));
	while (!kthread_should_stop()) {
		down_read(&phase_sem);
		off = READ_ONCE(switched_off);
		for (i = 0; i < 16; i++, x++) {
			r = entry_ptr(x);
			if ((int)r != (int)x * 7 + 3)
				call_error("storm_entry_fn", x, r);
			r = body_ptr(x);
			if (r != BODY_RESULT(x))
				call_error("storm_body_fn", x, r);
			r = trap_ptr(x);
			if (r != x + 1)
				call_error("storm_trap_fn", x, r);
			for (j = 0; j < NR_JUMP_FNS; j++) {
				r = jump_ptr[j](x);
				if (r != x + j + 1)
					call_error("storm_jump_fn", x, r);
			}
		}
		atomic64_add(16, &calls[off][CALL_ENTRY]);
		atomic64_add(16, &calls[off][CALL_BODY]);
		atomic64_add(16, &calls[off][CALL_TRAP]);
		up_read(&phase_sem);
		atomic64_add(16 * (3 + NR_JUMP_FNS), &nr_calls);
		/*
		 * Sleep now and then: with full preemption cond_resched()
		 * does nothing, and an RCU-tasks grace period (which the
		 * optimizer waits for) needs each task to switch voluntarily.
		 */
		if (!(++rounds & 3))
			usleep_range(200, 400);
		else
			cond_resched();
	}
	return 0;
}

/* Wakes often and spins a little: callers are preempted anywhere. */
static unsigned int preempt_spin_us = 300;
module_param(preempt_spin_us, uint, 0644);

/*
 * Every eighth wake spins for longer: a caller preempted in a detour
 * then stays off the CPU while an RCU grace period ends elsewhere, the
 * window a site freed too early (the review's F1) needs.
 */
static unsigned int preempt_long_us = 5000;
module_param(preempt_long_us, uint, 0644);

static int preempter(void *unused)
{
	unsigned int wakes = 0;

	sched_set_fifo_low(current);
	while (!kthread_should_stop()) {
		usleep_range(1000, 2000);
		if (++wakes & 7)
			udelay(READ_ONCE(preempt_spin_us));
		else
			mdelay(READ_ONCE(preempt_long_us) / 1000);
	}
	return 0;
}

/* ---- registrars ---------------------------------------------------------- */

#define BATCH		16
#define RP_BATCH	4

struct registrar {
	unsigned int first_jump;	/* a jump registrar's first function */
	struct kprobe kp[BATCH];
	struct kprobe *kps[BATCH];
	struct kretprobe rp[RP_BATCH];
	struct kretprobe *rps[RP_BATCH];
};

/*
 * Hits whose pc is not their probe's: a handler run for another address's
 * call (a lookup that took a site for the wrong address, as an index
 * entry is reused). A hit shows the pc past a one-byte int3 on x86, and
 * the probe's address elsewhere, whatever path it took.
 */
static atomic_t misplaced_hits;

static int nop_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long want = (unsigned long)p->addr + (IS_ENABLED(CONFIG_X86) ? 1 : 0);

	if (unlikely(instruction_pointer(regs) != want) &&
	    atomic_inc_return(&misplaced_hits) == 1)
		pr_err("kprobe_storm: a hit of %pS at %pS\n", p->addr,
		       (void *)instruction_pointer(regs));
	return 0;
}

static void nop_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static int nop_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

static int nop_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

/* A probe at a random probe-able place, with random handlers and state. */
static void random_probe(struct kprobe *p)
{
	struct storm_target *t;

	do {
		t = &targets[get_random_u32_below(ARRAY_SIZE(targets))];
	} while (!t->nr_offsets);
	memset(p, 0, sizeof(*p));
	p->addr = (kprobe_opcode_t *)(t->start +
		  t->offsets[get_random_u32_below(t->nr_offsets)]);
	p->pre_handler = nop_pre;
	if (!get_random_u32_below(4))
		p->post_handler = nop_post;
	if (!get_random_u32_below(4))
		p->flags = KPROBE_FLAG_DISABLED;
}

static void random_kretprobe(struct kretprobe *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->kp.symbol_name = targets[get_random_u32_below(ARRAY_SIZE(targets))].name;
	rp->handler = nop_ret;
	if (get_random_u32_below(2))
		rp->entry_handler = nop_entry;
	rp->maxactive = 1 + get_random_u32_below(8);
}

/* Enable and disable some of the registered probes, a few times. */
static void toggle_some(struct kprobe **kps, int n)
{
	int round, i, ret;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < n; i++) {
			if (get_random_u32_below(2))
				continue;
			ret = kprobe_disabled(kps[i]) ? enable_kprobe(kps[i]) :
							 disable_kprobe(kps[i]);
			if (ret)
				reg_error("enable/disable", ret);
			atomic64_inc(&nr_toggled);
		}
		usleep_range(100, 1000);
	}
}

static void churn_kprobes(struct registrar *r)
{
	int n = 1 + get_random_u32_below(BATCH);
	bool one_by_one = get_random_u32_below(3) == 0;
	int i, ret;

	for (i = 0; i < n; i++) {
		random_probe(&r->kp[i]);
		r->kps[i] = &r->kp[i];
	}
	if (one_by_one) {
		for (i = 0; i < n; i++) {
			ret = register_kprobe(r->kps[i]);
			if (ret) {
				reg_error("register_kprobe", ret);
				pr_err("kprobe_storm:   at %pS\n", r->kps[i]->addr);
				break;
			}
		}
		n = i;
	} else {
		ret = register_kprobes(r->kps, n);
		if (ret) {
			reg_error("register_kprobes", ret);
			for (i = 0; i < n; i++)
				pr_err("kprobe_storm:   %d: %pS%s%s\n", i, r->kp[i].addr,
				       r->kp[i].post_handler ? " post" : "",
				       kprobe_disabled(&r->kp[i]) ? " disabled" : "");
			return;
		}
	}
	atomic64_add(n, &nr_registered);
	toggle_some(r->kps, n);
	if (one_by_one)
		for (i = n - 1; i >= 0; i--)
			unregister_kprobe(r->kps[i]);
	else
		unregister_kprobes(r->kps, n);
	atomic64_add(n, &nr_unregistered);
}

static void churn_kretprobes(struct registrar *r)
{
	int n = 1 + get_random_u32_below(RP_BATCH);
	int i, ret;

	for (i = 0; i < n; i++) {
		random_kretprobe(&r->rp[i]);
		r->rps[i] = &r->rp[i];
	}
	ret = n == 1 ? register_kretprobe(r->rps[0]) : register_kretprobes(r->rps, n);
	if (ret) {
		reg_error("register_kretprobes", ret);
		return;
	}
	atomic64_add(n, &nr_kretprobes);
	usleep_range(1000, 5000);
	if (n == 1)
		unregister_kretprobe(r->rps[0]);
	else
		unregister_kretprobes(r->rps, n);
}

/*
 * Optimize a probe on each jump function, then take the jumps out by
 * disabling the probes and unregister them: the sites go away while
 * callers may be preempted in their detours (the case the review's F1
 * was about).
 */
static void churn_jumps(struct registrar *r)
{
	int i, ret;

	for (i = 0; i < JUMP_FNS_EACH; i++) {
		memset(&r->kp[i], 0, sizeof(r->kp[i]));
		r->kp[i].addr = (kprobe_opcode_t *)jump_ptr[r->first_jump + i];
		r->kp[i].pre_handler = nop_pre;
		r->kps[i] = &r->kp[i];
	}
	ret = register_kprobes(r->kps, JUMP_FNS_EACH);
	if (ret) {
		reg_error("register_kprobes (jumps)", ret);
		return;
	}
	wait_optimizer();
	/* Long enough for many callers to be in the detours, some preempted. */
	msleep(20 + get_random_u32_below(180));
	for (i = 0; i < JUMP_FNS_EACH; i++) {
		ret = disable_kprobe(r->kps[i]);
		if (ret)
			reg_error("disable_kprobe (jumps)", ret);
	}
	unregister_kprobes(r->kps, JUMP_FNS_EACH);
	atomic64_add(JUMP_FNS_EACH, &nr_registered);
	atomic64_add(JUMP_FNS_EACH, &nr_unregistered);
	atomic64_add(JUMP_FNS_EACH, &nr_jumps_removed);
}

static int registrar(void *data)
{
	struct registrar *r = data;

	while (!kthread_should_stop()) {
		switch (get_random_u32_below(4)) {
		case 0:
			churn_kretprobes(r);
			break;
		default:
			churn_kprobes(r);
			break;
		}
	}
	return 0;
}

static int jump_registrar(void *data)
{
	while (!kthread_should_stop())
		churn_jumps(data);
	return 0;
}

/* ---- the switcher -------------------------------------------------------- */

static int write_file(const char *path, const char *val)
{
	struct file *f = filp_open(path, O_WRONLY, 0);
	loff_t pos = 0;
	ssize_t ret;

	if (IS_ERR(f))
		return PTR_ERR(f);
	ret = kernel_write(f, val, strlen(val), &pos);
	filp_close(f, NULL);
	return ret < 0 ? ret : 0;
}

/*
 * The debugfs 'enabled' file has no write_iter, so kernel_write() cannot
 * reach it; a shell writes it for us, as a user would.
 */
static int write_enabled(const char *val)
{
	char cmd[64];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	char *envp[] = { "PATH=/bin:/sbin:/usr/bin:/usr/sbin", NULL };
	int ret;

	snprintf(cmd, sizeof(cmd), "echo %s > /sys/kernel/debug/kprobes/enabled", val);
	ret = call_usermodehelper(argv[0], argv, envp, UMH_WAIT_PROC);
	return ret > 0 ? -EIO : ret;
}

static void switch_kprobes(bool off)
{
	long now[5];
	int ret, i;

	down_write(&phase_sem);
	if (!off) {
		/* Nothing may have hit while kprobes were off. */
		sentinel_counts(now);
		/*
		 * A kretprobe's return handler may still run for a call
		 * that entered before the switch, so it is left out.
		 */
		for (i = 0; i < 4; i++) {
			if (now[i] == off_counts[i])
				continue;
			count_errors++;
			pr_err("kprobe_storm: sentinel %d hit while kprobes were off\n", i);
		}
	}
	ret = write_enabled(off ? "0" : "1");
	if (ret == -ENOENT) {
		/* No shell (the arm64 and riscv64 guests'): the file stays. */
		pr_info("kprobe_storm: no /bin/sh, the enabled file is not switched\n");
		WRITE_ONCE(no_shell, true);
		up_write(&phase_sem);
		return;
	}
	if (ret)
		reg_error("write enabled", ret);
	if (off)
		sentinel_counts(off_counts);
	WRITE_ONCE(switched_off, off);
	up_write(&phase_sem);
	atomic64_inc(&nr_switches);
}

static int switcher(void *unused)
{
	unsigned int i = 0;
	int ret;

	while (!kthread_should_stop()) {
		msleep(50 + get_random_u32_below(100));
		/* No sysctl without CONFIG_OPTPROBES (riscv64's kernel). */
		if (IS_ENABLED(CONFIG_OPTPROBES)) {
			ret = write_file("/proc/sys/debug/kprobes-optimization",
					 i & 1 ? "1\n" : "0\n");
			if (ret)
				reg_error("write kprobes-optimization", ret);
			atomic64_inc(&nr_sysctl_flips);
		}
		if (++i % 4)
			continue;
		if (READ_ONCE(no_shell))
			continue;
		switch_kprobes(true);
		if (READ_ONCE(no_shell))
			continue;
		msleep(5 + get_random_u32_below(20));
		switch_kprobes(false);
	}
	if (IS_ENABLED(CONFIG_OPTPROBES))
		write_file("/proc/sys/debug/kprobes-optimization", "1\n");
	return 0;
}

/* ---- setup, run and check -------------------------------------------------- */

/* Find a target's start and size from a probe at its entry. */
static int locate_target(struct storm_target *t)
{
	struct kprobe p = { .symbol_name = t->name };
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	char *plus;
	int ret;

	ret = register_kprobe(&p);
	if (ret)
		return ret;
	unregister_kprobe(&p);
	sprint_symbol(buf, (unsigned long)p.addr);
	plus = strchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2)
		return -EINVAL;
	t->start = (unsigned long)p.addr - off;
	t->size = min_t(unsigned long, size, MAX_OFFSET);
	return 0;
}

/*
 * Every offset a probe may be registered at, and the text there (taken
 * before any probe is there).
 */
static int prepare_target(struct storm_target *t, struct kprobe *kp,
			  struct kprobe **kps)
{
	unsigned int off;
	int ret = locate_target(t);

	if (ret)
		return ret;
	/* The tree takes an unregistered probe's breakpoint out later. */
	wait_optimizer();
	/*
	 * Ours takes an entry's ip out of ftrace's filter later: the probe
	 * that found the target, and earlier tests' probes.
	 */
	kprobe_deferred_barrier();
	memcpy(t->text, (void *)t->start, t->size);
	t->nr_offsets = 0;
	for (off = 0; off < t->size; off++) {
		struct kprobe *p = &kp[t->nr_offsets];

		memset(p, 0, sizeof(*p));
		p->addr = (kprobe_opcode_t *)(t->start + off);
		p->pre_handler = nop_pre;
		if (register_kprobe(p))
			continue;
		kps[t->nr_offsets] = p;
		t->offsets[t->nr_offsets++] = off;
	}
	unregister_kprobes(kps, t->nr_offsets);
	pr_info("kprobe_storm: %s: %u probe-able offsets in the first %u bytes\n",
		t->name, t->nr_offsets, t->size);
	return t->nr_offsets ? 0 : -ENOENT;
}

static struct task_struct **threads;
static unsigned int nr_threads;
static struct registrar *registrars;

/* A thread, unbound (@cpu < 0) or bound to @cpu. */
static void start_storm_thread(int (*fn)(void *), void *data, const char *name,
			       int cpu)
{
	struct task_struct *t;

	if (cpu < 0)
		t = kthread_create(fn, data, "storm_%s", name);
	else
		t = kthread_create_on_cpu(fn, data, cpu, "storm_preempt/%u");
	if (IS_ERR(t)) {
		reg_error("kthread_create", PTR_ERR(t));
		return;
	}
	get_task_struct(t);
	threads[nr_threads++] = t;
	wake_up_process(t);
}

static void stop_threads(void)
{
	while (nr_threads) {
		kthread_stop(threads[--nr_threads]);
		put_task_struct(threads[nr_threads]);
	}
}

/* TRAP_INSN in storm_trap_fn, at an instruction boundary. */
static void *trap_insn(void)
{
	struct storm_target *t = &targets[2];
	unsigned int i;

	for (i = 0; i < t->nr_offsets; i++)
		if (!memcmp((u8 *)t->start + t->offsets[i], TRAP_INSN, sizeof(TRAP_INSN) - 1))
			return (u8 *)t->start + t->offsets[i];
	return NULL;
}

static int register_sentinels(void)
{
	struct storm_target *body = &targets[1];
	int ret;

	/*
	 * The third probe-able offset of the body: its second instruction
	 * (offset 0 is the entry, moved past the ENDBR with IBT; on arm64
	 * the BTI C).
	 */
	sentinel_body.addr = (kprobe_opcode_t *)(body->start + body->offsets[2]);
	sentinel_trap.addr = trap_insn();
	if (!sentinel_trap.addr)
		return -ENOENT;
	sentinel_ret.maxactive = 4 * num_online_cpus() + 8;
	ret = register_kprobe(&sentinel_entry);
	if (ret)
		return ret;
	ret = register_kprobe(&sentinel_body);
	if (ret)
		goto out_entry;
	ret = register_kprobe(&sentinel_trap);
	if (ret)
		goto out_body;
	ret = register_kretprobe(&sentinel_ret);
	if (!ret)
		return 0;
	unregister_kprobe(&sentinel_trap);
out_body:
	unregister_kprobe(&sentinel_body);
out_entry:
	unregister_kprobe(&sentinel_entry);
	return ret;
}

static void unregister_sentinels(void)
{
	unregister_kretprobe(&sentinel_ret);
	unregister_kprobe(&sentinel_trap);
	unregister_kprobe(&sentinel_body);
	unregister_kprobe(&sentinel_entry);
}

static void report(unsigned int secs)
{
	pr_info("kprobe_storm: in %u s: %lld calls, %lld kprobes registered, %lld unregistered, %lld enables/disables, %lld kretprobes registered, %lld of the kprobes optimized then disabled and unregistered, %lld enabled-file switches, %lld sysctl flips\n",
		secs, atomic64_read(&nr_calls),
		atomic64_read(&nr_registered),
		atomic64_read(&nr_unregistered),
		atomic64_read(&nr_toggled),
		atomic64_read(&nr_kretprobes),
		atomic64_read(&nr_jumps_removed),
		atomic64_read(&nr_switches),
		atomic64_read(&nr_sysctl_flips));
}

/* Every call made while kprobes were on, seen by each sentinel once. */
static void check_counts(void)
{
	long c[5], want_entry = atomic64_read(&calls[0][CALL_ENTRY]);
	long want_body = atomic64_read(&calls[0][CALL_BODY]);
	long want_trap = atomic64_read(&calls[0][CALL_TRAP]);
	long missed[4] = {
		sentinel_entry.nmissed, sentinel_body.nmissed,
		sentinel_trap.nmissed, sentinel_ret.nmissed + sentinel_ret.kp.nmissed,
	};

	sentinel_counts(c);
	pr_info("kprobe_storm: calls on/off: entry %ld/%lld body %ld/%lld trap %ld/%lld\n",
		want_entry, atomic64_read(&calls[1][CALL_ENTRY]),
		want_body, atomic64_read(&calls[1][CALL_BODY]),
		want_trap, atomic64_read(&calls[1][CALL_TRAP]));
	pr_info("kprobe_storm: sentinels hits+missed: entry %ld+%ld body %ld+%ld trap %ld+%ld (post %ld) kretprobe %ld+%ld\n",
		c[0], missed[0], c[1], missed[1], c[2], missed[2], c[3],
		c[4], missed[3]);
	if (c[0] + missed[0] != want_entry || c[1] + missed[1] != want_body ||
	    c[2] + missed[2] != want_trap || c[3] != c[2] ||
	    c[4] + missed[3] != want_body) {
		count_errors++;
		pr_err("kprobe_storm: sentinel counts differ from the calls made\n");
	}
}

static unsigned int storm_secs;

static int prepare_targets(void)
{
	struct kprobe *kp = kcalloc(MAX_OFFSET, sizeof(*kp), GFP_KERNEL);
	struct kprobe **kps = kcalloc(MAX_OFFSET, sizeof(*kps), GFP_KERNEL);
	unsigned int i;
	int ret = -ENOMEM;

	for (i = 0; kp && kps && i < ARRAY_SIZE(targets); i++) {
		ret = prepare_target(&targets[i], kp, kps);
		if (ret) {
			pr_err("kprobe_storm: %s: %d\n", targets[i].name, ret);
			break;
		}
	}
	kfree(kp);
	kfree(kps);
	return ret;
}

/*
 * Writing 1 to 'prepare' finds the targets' offsets and copies their
 * text, before the guest script starts its own clients (a kprobe event
 * on a target would be in the copy).
 */
static bool prepared;

static int prepare_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	if (prepared)
		return -EINVAL;
	ret = prepare_targets();
	prepared = !ret;
	return ret;
}

static const struct kernel_param_ops prepare_ops = { .set = prepare_set };
module_param_cb(prepare, &prepare_ops, NULL, 0200);

static int run_set(const char *val, const struct kernel_param *kp)
{
	unsigned int secs, cpus = num_online_cpus(), i;
	int ret = kstrtouint(val, 0, &secs);

	if (ret)
		return ret;
	if (!secs || storm_secs || !prepared)
		return -EINVAL;
	threads = kcalloc((callers_per_cpu + 1) * cpus + NR_REGISTRARS + NR_JUMP_REGISTRARS + 1,
			  sizeof(*threads), GFP_KERNEL);
	registrars = kcalloc(NR_REGISTRARS + NR_JUMP_REGISTRARS, sizeof(*registrars),
			     GFP_KERNEL);
	if (!threads || !registrars)
		return -ENOMEM;
	ret = register_sentinels();
	if (ret)
		return ret;
	storm_secs = secs;
	for (i = 0; i < callers_per_cpu * cpus; i++)
		start_storm_thread(caller, (void *)(unsigned long)i, "caller", -1);
	for_each_online_cpu(i)
		start_storm_thread(preempter, NULL, "preempt", i);
	for (i = 0; i < NR_REGISTRARS; i++)
		start_storm_thread(registrar, &registrars[i], "register", -1);
	for (; i < NR_REGISTRARS + NR_JUMP_REGISTRARS; i++) {
		registrars[i].first_jump = (i - NR_REGISTRARS) * JUMP_FNS_EACH;
		start_storm_thread(jump_registrar, &registrars[i], "jumps", -1);
	}
	start_storm_thread(switcher, NULL, "switch", -1);
	msleep(secs * 1000);
	stop_threads();
	report(secs);
	check_counts();
	return 0;
}

static const struct kernel_param_ops run_ops = { .set = run_set };
module_param_cb(run, &run_ops, NULL, 0200);

/* After the storm and the guest's own clients: the text must be as before. */
static int check_set(const char *val, const struct kernel_param *kp)
{
	unsigned int i, j;

	if (!storm_secs || !registrars)
		return -EINVAL;
	unregister_sentinels();
	storm_secs = 0;
	if (atomic_read(&misplaced_hits)) {
		count_errors++;
		pr_err("kprobe_storm: %d hits at another pc than their probe's\n",
		       atomic_read(&misplaced_hits));
	}
	wait_optimizer();
	/* The clients' deferred releases, and their entries out of ftrace. */
	kprobe_deferred_barrier();
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		struct storm_target *t = &targets[i];

		for (j = 0; j < t->size; j++) {
			u8 now = ((u8 *)t->start)[j];

			if (now == t->text[j])
				continue;
			text_errors++;
			pr_err("kprobe_storm: %s+%#x is %02x, was %02x\n",
			       t->name, j, now, t->text[j]);
		}
	}
	return reg_errors || count_errors || text_errors ? -EIO : 0;
}

static const struct kernel_param_ops check_ops = { .set = check_set };
module_param_cb(check, &check_ops, NULL, 0200);

static void __exit kprobe_storm_exit(void)
{
	if (storm_secs)
		unregister_sentinels();
	kfree(threads);
	kfree(registrars);
}
module_exit(kprobe_storm_exit);

MODULE_DESCRIPTION("many kprobes clients at once, for the guest selftests");
MODULE_LICENSE("GPL");
