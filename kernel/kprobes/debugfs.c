// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The debugfs files under /sys/kernel/debug/kprobes/: list, enabled,
 * blacklist, stats and query.
 */

#define pr_fmt(fmt) "kprobes: " fmt

#include "internal.h"

/*
 * Addresses are printed in full, as %px would, but only to readers
 * kallsyms_show_value() allows; the others read zeroes.
 */
#define ADDR_DIGITS	((int)(2 * sizeof(unsigned long)))

static bool probe_is_kretprobe(struct kprobe *p)
{
	return IS_ENABLED(CONFIG_KRETPROBES) && p->pre_handler == kretprobe_on_entry;
}

/* The start of a line in list and stats: address, type, symbol+offset, module. */
static void show_probe_location(struct seq_file *m, struct kprobe *p)
{
	char namebuf[KSYM_NAME_LEN];
	unsigned long offset = 0;
	char *modname = NULL;
	const char *sym;
	void *addr = p->addr;
	char type = probe_is_kretprobe(p) ? 'r' : 'k';

	if (!kallsyms_show_value(m->file->f_cred))
		addr = NULL;
	sym = kallsyms_lookup((unsigned long)p->addr, NULL, &offset, &modname, namebuf);
	if (sym)
		seq_printf(m, "%0*lx  %c  %s+0x%lx  %s ", ADDR_DIGITS,
			   (unsigned long)addr, type, sym, offset,
			   modname ? modname : " ");
	else
		seq_printf(m, "%0*lx  %c  %0*lx ", ADDR_DIGITS,
			   (unsigned long)addr, type, ADDR_DIGITS,
			   (unsigned long)addr);
}

static void show_probe(struct seq_file *m, struct kprobe *site, struct kprobe *p)
{
	show_probe_location(m, p);
	seq_printf(m, "%s%s%s%s\n",
		   kprobe_gone(p) ? "[GONE]" : "",
		   (kprobe_disabled(p) && !kprobe_gone(p)) ? "[DISABLED]" : "",
		   kprobe_site_listed_optimized(site) ? "[OPTIMIZED]" : "",
		   kprobe_ftrace(site) ? "[FTRACE]" : "");
}

/* Hits that skipped @p's handlers; a kretprobe adds its pool misses. */
static unsigned long probe_missed(struct kprobe *p)
{
	unsigned long missed = p->nmissed;

	if (probe_is_kretprobe(p))
		missed += container_of(p, struct kretprobe, kp)->nmissed;
	return missed;
}

static void show_probe_stats(struct seq_file *m, struct kprobe *site, struct kprobe *p)
{
	show_probe_location(m, p);
	seq_printf(m, "%lu %lu\n", kprobe_hits_locked(p), probe_missed(p));
}

static void *list_seq_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&kprobe_mutex);
	return *pos < KPROBE_TABLE_SIZE ? pos : NULL;
}

static void *list_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	(*pos)++;
	return *pos < KPROBE_TABLE_SIZE ? pos : NULL;
}

static void list_seq_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&kprobe_mutex);
}

/*
 * list and stats walk the table the same way and differ in the line
 * they print per probe: the file's private data says which.
 */
struct probe_view {
	void (*show)(struct seq_file *m, struct kprobe *site, struct kprobe *p);
};

static struct probe_view list_view = { .show = show_probe };
static struct probe_view stats_view = { .show = show_probe_stats };

/* Show every probe in one hash bucket. */
static int probes_seq_show(struct seq_file *m, void *v)
{
	struct probe_view *view = m->private;
	struct kprobe *site, *p;

	hlist_for_each_entry(site, &kprobe_table[*(loff_t *)v], hlist) {
		if (!kprobe_is_aggr(site)) {
			view->show(m, site, site);
			continue;
		}
		list_for_each_entry(p, &site->list, list)
			view->show(m, site, p);
	}
	return 0;
}

static const struct seq_operations kprobes_probes_sops = {
	.start = list_seq_start,
	.next = list_seq_next,
	.stop = list_seq_stop,
	.show = probes_seq_show,
};
DEFINE_SEQ_ATTRIBUTE(kprobes_probes);

/**
 * kprobes_set_all_armed() - the enabled switch: arm or disarm every site
 * @arm: true to arm every site of an enabled probe, false to disarm all
 *
 * Each probe keeps its own disabled state. Arming goes on past a site
 * ftrace refuses (another user that may change the IP holds the
 * function): that site stays unarmed, is reported, and is tried again
 * when the switch is next turned on. Also for the KUnit suite.
 *
 * Context: process context, may sleep; takes kprobe_mutex.
 * Return: 0, or the error of a site that could not be armed.
 */
VISIBLE_IF_KUNIT int kprobes_set_all_armed(bool arm)
{
	int ret = 0;

	mutex_lock(&kprobe_mutex);
	if (kprobes_all_disarmed == !arm)
		goto out;
	kprobes_all_disarmed = !arm;
	ret = kprobe_sync_all_sites();
	pr_info("kprobes globally %s\n", arm ? "enabled" : "disabled");
out:
	mutex_unlock(&kprobe_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_set_all_armed);

static ssize_t enabled_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[3] = { kprobes_all_disarmed ? '0' : '1', '\n', 0 };

	return simple_read_from_buffer(ubuf, count, ppos, buf, 2);
}

static ssize_t enabled_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	bool enable;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &enable);
	if (ret)
		return ret;
	ret = kprobes_set_all_armed(enable);
	return ret ? ret : count;
}

static const struct file_operations kprobes_enabled_fops = {
	.read = enabled_read,
	.write = enabled_write,
	.llseek = default_llseek,
};

static void *blacklist_seq_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&kprobe_mutex);
	return seq_list_start(&kprobe_blacklist, *pos);
}

static void *blacklist_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &kprobe_blacklist, pos);
}

static int blacklist_seq_show(struct seq_file *m, void *v)
{
	struct kprobe_blacklist_entry *ent =
		list_entry(v, struct kprobe_blacklist_entry, list);
	bool show = kallsyms_show_value(m->file->f_cred);

	seq_printf(m, "0x%0*lx-0x%0*lx\t%ps\n",
		   ADDR_DIGITS, show ? ent->start_addr : 0UL,
		   ADDR_DIGITS, show ? ent->end_addr : 0UL,
		   (void *)ent->start_addr);
	return 0;
}

static const struct seq_operations kprobe_blacklist_sops = {
	.start = blacklist_seq_start,
	.next = blacklist_seq_next,
	.stop = list_seq_stop,
	.show = blacklist_seq_show,
};
DEFINE_SEQ_ATTRIBUTE(kprobe_blacklist);

/*
 * /sys/kernel/debug/kprobes/query: write a probe point ("SYMBOL",
 * "SYMBOL+OFFSET", "MODULE:SYMBOL+OFFSET" or a hexadecimal address) and
 * read back what registering a kprobe there would do, without
 * registering one: where the probe would go, and whether it would be
 * accepted, boosted, optimized, each "no" with the rule that said it.
 * The answer comes from the checks registering makes (kprobe_check_point(),
 * kprobe_prepare_site(), kprobe_prepare_detour()), run on a probe that is
 * prepared and released again, never listed nor armed, marked
 * KPROBE_FLAG_QUERY so that the arch allocates and writes nothing for
 * it. The file holds the answer to the last query written to it; see
 * Documentation/trace/kprobes.rst for the format.
 */
#define QUERY_ANSWER_SIZE	1024

/* The last answer; query_lock guards it. */
static DEFINE_MUTEX(query_lock);
static char query_text[QUERY_ANSWER_SIZE];
static struct seq_buf query_answer;

/* One line "@what: yes", or "@what: no: <rule> (<error>)" for a non-zero @err. */
static void query_say(struct seq_buf *s, const char *what, int err)
{
	if (!err)
		seq_buf_printf(s, "%s: yes\n", what);
	else
		seq_buf_printf(s, "%s: no: %s (%pe)\n", what,
			       kprobe_refusal_rule ?: "refused by the arch", ERR_PTR(err));
}

static void query_say_blacklist(struct seq_buf *s, unsigned long addr)
{
	struct kprobe_blacklist_entry *ent = kprobe_blacklist_entry_of(addr);

	if (ent)
		seq_buf_printf(s, "blacklisted: %ps, %lu bytes\n",
			       (void *)ent->start_addr, ent->end_addr - ent->start_addr);
	else if (arch_within_kprobe_blacklist(addr))
		seq_buf_puts(s, "blacklisted: by the arch\n");
}

#ifdef CONFIG_OPTPROBES
static void query_optimization(struct seq_buf *s, struct kprobe *p)
{
	struct optimized_kprobe *op;
	struct kprobe *inside;
	int ret;

	if (!kprobes_optimization) {
		seq_buf_puts(s, "optimize: no: debug.kprobes-optimization is 0\n");
		return;
	}
	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op) {
		query_say(s, "optimize", kprobe_refuse(-ENOMEM, "out of memory"));
		return;
	}
	op->kp.addr = p->addr;
	op->kp.flags = KPROBE_FLAG_QUERY;
	INIT_LIST_HEAD(&op->list);
	kprobe_refusal_rule = NULL;
	ret = kprobe_prepare_detour(op, p);
	query_say(s, "optimize", ret);
	if (!ret) {
		inside = kprobe_region_probe(op);
		if (inside)
			seq_buf_printf(s, "optimize: not while %pS is probed too\n",
				       inside->addr);
		arch_remove_optimized_kprobe(op);
	}
	kfree(op);
}
#else
static void query_optimization(struct seq_buf *s, struct kprobe *p)
{
	seq_buf_puts(s, "optimize: no: not built with CONFIG_OPTPROBES\n");
}
#endif

/**
 * kprobes_query_point() - what registering a kprobe at a point would do
 * @s: where the answer goes, a "what: verdict" line each
 * @addr: the probe point, or NULL with @sym
 * @sym: a symbol ("MODULE:SYMBOL" for a module's), or NULL with @addr
 * @offset: bytes after @sym or @addr
 *
 * The query file's answer (see Documentation/trace/kprobes.rst), made by
 * the checks registering makes, on a probe that is prepared and released
 * again: nothing is registered, armed or allocated, no text is written.
 * Also for the KUnit suite.
 *
 * Context: process context, may sleep; takes kprobe_mutex.
 */
VISIBLE_IF_KUNIT void kprobes_query_point(struct seq_buf *s, kprobe_opcode_t *addr,
					  const char *sym, unsigned long offset)
{
	struct module *mod = NULL;
	const char *why = NULL;
	struct kprobe *p, *site;
	bool boostable;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		seq_buf_puts(s, "probe: no: out of memory\n");
		return;
	}
	guard(mutex)(&kprobe_mutex);
	/* The checks decode text: no retiring site's jump may be in it. */
	kprobe_retire_sites();
	kprobes_lock_text();
	kprobe_refusal_rule = NULL;
	addr = kprobe_target_addr(addr, sym, offset);
	if (IS_ERR(addr)) {
		query_say(s, "probe", kprobe_refuse(PTR_ERR(addr), "no such symbol"));
		goto unlock;
	}
	seq_buf_printf(s, "asked: %pS\n", addr);
	p->addr = addr;
	p->flags = KPROBE_FLAG_QUERY;
	ret = kprobe_check_point(p, &site, &mod);
	if (p->addr != addr)
		seq_buf_printf(s, "placed: %pS\n", p->addr);
	if (!ret)
		ret = kprobe_prepare_site(p);
	query_say(s, "probe", ret);
	if (ret) {
		if (kprobe_refusal_rule == kprobe_rule_blacklisted)
			query_say_blacklist(s, (unsigned long)p->addr);
		goto unpin;
	}
	seq_buf_printf(s, "entry: %s\n", p->flags & KPROBE_FLAG_ON_FUNC_ENTRY ? "yes" : "no");
	seq_buf_printf(s, "ftrace: %s\n", kprobe_ftrace(p) ? "yes" : "no");
	if (site)
		seq_buf_printf(s, "registered: %s\n",
			       kprobe_is_aggr(site) ? "several probes" : "one probe");
	if (!kprobe_ftrace(p)) {
		boostable = arch_kprobe_boostable(p, &why);
		seq_buf_printf(s, "boost: %s%s%s\n", boostable ? "yes" : "no",
			       why ? ": " : "", why ?: "");
	}
	query_optimization(s, p);
	kprobe_release_site(p);
unpin:
	if (mod)
		module_put(mod);
	kprobe_forget_probed_function();
unlock:
	kprobes_unlock_text();
	kfree(p);
}
EXPORT_SYMBOL_IF_KUNIT(kprobes_query_point);

/* Parse "SYMBOL[+OFFSET]", "MODULE:SYMBOL[+OFFSET]" or an address. */
static int query_parse(char *in, kprobe_opcode_t **addr, const char **sym,
		       unsigned long *offset)
{
	unsigned long value;
	char *plus;

	*addr = NULL;
	*sym = NULL;
	*offset = 0;
	if (!kstrtoul(in, 16, &value)) {
		*addr = (kprobe_opcode_t *)value;
		return *addr ? 0 : -EINVAL;
	}
	plus = strchr(in, '+');
	if (plus) {
		*plus = '\0';
		if (kstrtoul(plus + 1, 0, offset))
			return -EINVAL;
	}
	if (!*in)
		return -EINVAL;
	*sym = in;
	return 0;
}

static ssize_t query_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	kprobe_opcode_t *addr;
	unsigned long offset;
	const char *sym;
	char *in;
	int ret;

	if (count >= KSYM_NAME_LEN + MODULE_NAME_LEN + 32)
		return -E2BIG;
	in = memdup_user_nul(ubuf, count);
	if (IS_ERR(in))
		return PTR_ERR(in);
	ret = query_parse(strim(in), &addr, &sym, &offset);
	if (!ret) {
		guard(mutex)(&query_lock);
		seq_buf_init(&query_answer, query_text, sizeof(query_text));
		kprobes_query_point(&query_answer, addr, sym, offset);
	}
	kfree(in);
	return ret ?: count;
}

static ssize_t query_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	guard(mutex)(&query_lock);
	return simple_read_from_buffer(ubuf, count, ppos, query_text,
				       seq_buf_used(&query_answer));
}

static const struct file_operations kprobes_query_fops = {
	.read		= query_read,
	.write		= query_write,
	.llseek		= default_llseek,
};

static int __init kprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, &list_view, &kprobes_probes_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &kprobes_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &kprobe_blacklist_fops);
	debugfs_create_file("stats", 0400, dir, &stats_view, &kprobes_probes_fops);
	debugfs_create_file("query", 0600, dir, NULL, &kprobes_query_fops);
	return 0;
}
late_initcall(kprobes_debugfs_init);
