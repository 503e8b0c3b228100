// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_twin_a and kprobe_twin_b: two modules of the same layout whose
 * kprobe_twin_fn has other instructions at its entry. Unloading one and
 * loading the other puts new text where a probe of the first one is
 * still registered, [GONE]: a probe on the new text must see the new
 * bytes (review finding F3). Writing x to 'check' calls kprobe_twin_fn(x)
 * and fails with -EIO unless it returned x + TWIN.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <asm/ibt.h>
#include <asm/nospec-branch.h>

unsigned long kprobe_twin_fn(unsigned long x);
asm(".pushsection .text\n"
    ".globl kprobe_twin_fn\n"
    ".type kprobe_twin_fn, @function\n"
    "kprobe_twin_fn:\n"
    ASM_ENDBR
#if TWIN == 1
    "	movq %rdi, %rax\n"		/* 48 89 f8 */
    "	addq $1, %rax\n"		/* 48 83 c0 01 */
#else
    "	leal 2(%rdi), %eax\n"		/* 8d 47 02 */
    "	nopl 0(%rax)\n"			/* 0f 1f 40 00 */
#endif
    ANNOTATE_RETPOLINE_SAFE "ret\n"
    ".size kprobe_twin_fn, .-kprobe_twin_fn\n"
    ".popsection\n");

static unsigned long (*volatile twin_fn)(unsigned long) = kprobe_twin_fn;

static int check_set(const char *val, const struct kernel_param *kp)
{
	unsigned int x;
	int ret = kstrtouint(val, 0, &x);

	if (ret)
		return ret;
	return twin_fn(x) == x + TWIN ? 0 : -EIO;
}

static const struct kernel_param_ops check_ops = {
	.set = check_set,
};
module_param_cb(check, &check_ops, NULL, 0200);

MODULE_DESCRIPTION("a module whose text another one replaces, for the kprobes selftests");
MODULE_LICENSE("GPL");
