/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_GENERIC_KPROBES_H
#define _ASM_GENERIC_KPROBES_H

#if defined(__KERNEL__) && !defined(__ASSEMBLY__)

#ifndef CONFIG_KPROBES
# define NOKPROBE_SYMBOL(fname)
# define __kprobes
# define nokprobe_inline	inline
#else
/*
 * NOKPROBE_SYMBOL(fn) stores fn's address in the '_kprobe_blacklist'
 * section. At boot, or when a module loads, kprobes blacklists the whole
 * symbol that address is in.
 */
# define __NOKPROBE_SYMBOL(fname)				\
static unsigned long __used					\
	__section("_kprobe_blacklist")				\
	_kbl_addr_##fname = (unsigned long)fname;
# define NOKPROBE_SYMBOL(fname)	__NOKPROBE_SYMBOL(fname)
/* Functions in .kprobes.text are neither probed nor traced. */
# define __kprobes	notrace __section(".kprobes.text")
/* A helper that must never be a separate, probeable function. */
# define nokprobe_inline	__always_inline
#endif

#endif /* __KERNEL__ && !__ASSEMBLY__ */

#endif /* _ASM_GENERIC_KPROBES_H */
