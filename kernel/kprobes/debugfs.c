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

/*
 * [OPTIMIZED] means optimized, or queued to be with nothing left to
 * decide, as in the tree: a user who enables a probe and reads the list
 * sees what it is going to be, not that the jump is still a few jiffies
 * and an RCU-tasks grace period away (wait_for_kprobe_optimizer() waits
 * for that).
 */
static bool site_listed_optimized(struct kprobe *site)
{
	return site->flags & (KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_OPT_QUEUED);
}

static void show_probe(struct seq_file *m, struct kprobe *site, struct kprobe *p)
{
	show_probe_location(m, p);
	seq_printf(m, "%s%s%s%s\n",
		   kprobe_gone(p) ? "[GONE]" : "",
		   (kprobe_disabled(p) && !kprobe_gone(p)) ? "[DISABLED]" : "",
		   site_listed_optimized(site) ? "[OPTIMIZED]" : "",
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
 * read back, through the same open file, what registering a kprobe
 * there would do: where the probe would go, and whether it would be
 * accepted, boosted, optimized, each "no" with the rule that said it.
 * The verdict is the core's (kprobe_query()); this file only words it,
 * in the format Documentation/trace/kprobes.rst shows. Each open of the
 * file has its own answer, so that two users never read each other's.
 */

/* One line "@what: yes", or "@what: no: <rule> (<error>)". */
static void query_say(struct seq_buf *s, const char *what,
		      const struct kprobe_query_check *check)
{
	if (!check->err)
		seq_buf_printf(s, "%s: yes\n", what);
	else
		seq_buf_printf(s, "%s: no: %s (%pe)\n", what,
			       check->rule ?: "refused by the arch", ERR_PTR(check->err));
}

static void query_say_blacklist(struct seq_buf *s, const struct kprobe_query_verdict *v)
{
	if (v->blacklist_size)
		seq_buf_printf(s, "blacklisted: %ps, %lu bytes\n",
			       (void *)v->blacklist_start, v->blacklist_size);
	else if (v->blacklist_arch)
		seq_buf_puts(s, "blacklisted: by the arch\n");
}

static void query_say_optimize(struct seq_buf *s, const struct kprobe_query_verdict *v)
{
	switch (v->optimizer) {
	case KPROBE_QUERY_OPT_SYSCTL_OFF:
		seq_buf_puts(s, "optimize: no: debug.kprobes-optimization is 0\n");
		return;
	case KPROBE_QUERY_OPT_NOT_BUILT:
		seq_buf_puts(s, "optimize: no: not built with CONFIG_OPTPROBES\n");
		return;
	case KPROBE_QUERY_OPT_ASKED:
		break;
	}
	query_say(s, "optimize", &v->optimize);
	if (v->optimize_blocker)
		seq_buf_printf(s, "optimize: not while %pS is probed too\n",
			       v->optimize_blocker);
}

static void query_say_verdict(struct seq_buf *s, const struct kprobe_query_verdict *v)
{
	if (v->asked)
		seq_buf_printf(s, "asked: %pS\n", v->asked);
	if (v->placed != v->asked)
		seq_buf_printf(s, "placed: %pS\n", v->placed);
	query_say(s, "probe", &v->probe);
	if (v->probe.err) {
		if (v->blacklisted)
			query_say_blacklist(s, v);
		return;
	}
	seq_buf_printf(s, "entry: %s\n", v->entry ? "yes" : "no");
	seq_buf_printf(s, "ftrace: %s\n", v->ftrace ? "yes" : "no");
	if (v->registered != KPROBE_QUERY_NONE)
		seq_buf_printf(s, "registered: %s\n",
			       v->registered == KPROBE_QUERY_SEVERAL ?
			       "several probes" : "one probe");
	if (!v->ftrace)
		seq_buf_printf(s, "boost: %s%s%s\n", v->boostable ? "yes" : "no",
			       v->boost_why ? ": " : "", v->boost_why ?: "");
	query_say_optimize(s, v);
}

/**
 * kprobes_query_point() - what registering a kprobe at a point would do
 * @buf: where the answer goes, a "what: verdict" line each
 * @size: room in @buf
 * @addr: the probe point, or NULL with @sym
 * @sym: a symbol ("MODULE:SYMBOL" for a module's), or NULL with @addr
 * @offset: bytes after @sym or @addr
 *
 * The query file's answer (see Documentation/trace/kprobes.rst), worded
 * from kprobe_query()'s verdict: nothing is registered or armed, the
 * arch allocates nothing, no text is written. @sym may lie in @buf: the
 * verdict is complete before @buf is written. An answer too long for
 * @buf is cut short. Also for the KUnit suite.
 *
 * Context: process context, may sleep; takes kprobe_mutex.
 * Return: the length of the answer in @buf.
 */
VISIBLE_IF_KUNIT size_t kprobes_query_point(char *buf, size_t size, kprobe_opcode_t *addr,
					    const char *sym, unsigned long offset)
{
	struct kprobe_query_verdict v;
	struct seq_buf s;

	kprobe_query(&v, addr, sym, offset);
	seq_buf_init(&s, buf, size);
	query_say_verdict(&s, &v);
	return seq_buf_used(&s);
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

/*
 * The point written and its answer share the page simple_transaction_get()
 * gives this open of the file: one write per open (another is -EBUSY),
 * and the answer is read back through the same file descriptor.
 */
static ssize_t query_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	kprobe_opcode_t *addr;
	unsigned long offset;
	const char *sym;
	size_t len;
	char *in;
	int ret;

	if (count >= KSYM_NAME_LEN + MODULE_NAME_LEN + 32)
		return -E2BIG;
	in = simple_transaction_get(file, ubuf, count);	/* NUL-terminated */
	if (IS_ERR(in))
		return PTR_ERR(in);
	ret = query_parse(strim(in), &addr, &sym, &offset);
	if (ret)
		return ret;
	len = kprobes_query_point(in, SIMPLE_TRANSACTION_LIMIT, addr, sym, offset);
	simple_transaction_set(file, len);
	/* *ppos is not advanced: a read on this descriptor starts at the answer. */
	return count;
}

static const struct file_operations kprobes_query_fops = {
	.read		= simple_transaction_read,
	.write		= query_write,
	.release	= simple_transaction_release,
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
