// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes_selftests' cases of x86-64's own, run after the others
 * (x86_selftests()) and last of a boot (t_ftrace_killed()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "selftests.h"

#ifdef __x86_64__
/*
 * ---- x86-64's own: its optimizer's target, livepatch, text poke records,
 * and the test modules built for x86-64 alone (modules/kprobe_target.c,
 * kprobe_twin_*, kprobe_notice, kprobe_pair, kprobe_ftrace_kill) ----
 */

#define LP "/sys/kernel/livepatch/livepatch_sample"
#define LP_MOD "/sys/module/livepatch_sample"

static int param_put(const char *mod, const char *param, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", mod, param);
	return put(path, val, 0);
}

static long param_get(const char *mod, const char *param)
{
	char path[160], *s;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", mod, param);
	s = slurp(path);
	return s ? strtol(s, NULL, 0) : -1;
}

/* "FUNC+0xOFF" where a probe on FUNC's symbol goes; a static buffer. */
static const char *entry_of(const char *func)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%s+0x%lx ", func, entry_off);
	return buf;
}

/* Wait up to 20 s for a line of the list with @a and @b. */
static int wait_listed(const char *a, const char *b)
{
	double end = now() + 20;

	do {
		if (lines_with(D "/list", a, b) > 0)
			return 1;
		usleep(100 * 1000);
	} while (now() < end);
	return 0;
}

static int wait_target_optimized(void)
{
	return wait_listed(entry_of("kprobe_target_opt"), "[OPTIMIZED]");
}

/* The hits stats shows for the probe on @what (its last field but one). */
static long stats_hits(const char *what)
{
	char *s = slurp(D "/stats"), *line, *save, *tok[8], *tsave;
	int n;

	for (line = s ? strtok_r(s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, what))
			continue;
		n = 0;
		for (tok[0] = strtok_r(line, " ", &tsave); tok[n] && n < 7;
		     tok[++n] = strtok_r(NULL, " ", &tsave))
			;
		return n >= 2 ? strtol(tok[n - 2], NULL, 10) : -1;
	}
	return -1;
}

/* The last line of the kernel log that contains @what, into @buf. */
static int last_log_line(const char *what, char *buf, size_t size)
{
	char *log = kernel_log(), *p, *found = NULL, *end;

	for (p = log; p && (p = strstr(p, what)); p++)
		found = p;
	if (!found)
		return 0;
	end = strchr(found, '\n');
	snprintf(buf, size, "%.*s", end ? (int)(end - found) : (int)strlen(found), found);
	note("%s", buf);
	return 1;
}

static void unload_all(void)
{
	rmmod("kprobe_example");
	rmmod("kprobe_target");
}

/* The query file's optimizer verdict on the optimizable target. */
static int t_query_optimize(void)
{
	char point[64];
	int ok;

	if (insmod("kprobe_target", ""))
		return 0;
	snprintf(point, sizeof(point), "kprobe_target_opt+0x%lx", entry_off);
	ok = query_says(point, "\noptimize: yes");
	rmmod("kprobe_target");
	return ok;
}

/*
 * A module probing its own __init code: the probe fires during init, is
 * [GONE] once the init text is freed, and unregisters at unload.
 */
static int t_module_init_gone(void)
{
	long hits;
	int gone;
	char *s;

	rmmod("kprobe_target");
	if (insmod("kprobe_target", "probe_init=1"))
		return 0;
	hits = param_get("kprobe_target", "init_hits");
	gone = lines_with(D "/list", "[GONE]", NULL);
	if (!step(!rmmod("kprobe_target"), "rmmod kprobe_target"))
		return 0;
	s = slurp(D "/list");
	note("init_hits=%ld gone=%d", hits, gone);
	return hits == 1 && gone == 1 && s && !*s;
}

/* Write "50" to opt_calls until killed; exit 1 when a call is wrong. */
static pid_t call_target_meanwhile(void)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	for (;;)
		if (param_put("kprobe_target", "opt_calls", "50"))
			_exit(1);
}

static int stop_caller(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return step(WIFSIGNALED(status), "the target returned the right value throughout");
}

static int optimized_body(void)
{
	long hits;
	pid_t pid;
	int i, ok = 1;

	if (!step(!insmod("kprobe_target", ""), "insmod kprobe_target") ||
	    !step(!insmod("kprobe_example", "symbol=kprobe_target_opt post=0"), "insmod sample") ||
	    !step(wait_target_optimized(), "optimized") ||
	    !step(!param_put("kprobe_target", "opt_calls", "3"), "3 calls") ||
	    !step(!put(OPT_SYSCTL, "0", 0), "sysctl 0") ||
	    !step(!lines_with(D "/list", "OPTIMIZED", NULL), "no longer optimized") ||
	    !step(!param_put("kprobe_target", "opt_calls", "4"), "4 calls") ||
	    !step(!put(OPT_SYSCTL, "1", 0), "sysctl 1") ||
	    !step(wait_target_optimized(), "optimized again") ||
	    !step(!param_put("kprobe_target", "opt_calls", "5"), "5 calls"))
		return 0;
	hits = stats_hits("kprobe_target_opt");
	note("hits=%ld", hits);
	/* The same switches while another CPU runs through the probe. */
	pid = call_target_meanwhile();
	if (pid < 0)
		return 0;
	for (i = 0; i < 3 && ok; i++)
		ok = step(!put(OPT_SYSCTL, "0", 0) && !put(OPT_SYSCTL, "1", 0), "sysctl under load") &&
		     step(wait_target_optimized(), "optimized under load");
	ok &= stop_caller(pid);
	/* The module goes while its probe is optimized: [GONE], then unregistered. */
	return ok && step(!rmmod("kprobe_target"), "rmmod kprobe_target") &&
	       step(lines_with(D "/list", "[GONE]", NULL) > 0, "gone") &&
	       step(!rmmod("kprobe_example"), "rmmod sample") && hits == 12;
}

/*
 * An optimized probe: [OPTIMIZED] in the list, fires, and the sysctl takes
 * the jump out (0) and lets it come back (1), the probe firing throughout.
 * (kprobe_events refuses functions without an ftrace site, hence the sample.)
 */
static int t_optimized_sysctl(void)
{
	int ok;

	unload_all();
	ok = optimized_body();
	put(OPT_SYSCTL, "1", 0);
	unload_all();
	return ok;
}

static int enabled_kinds_body(void)
{
	long bp, late;
	char where[64];

	snprintf(where, sizeof(where), "kernel_clone+%lu", entry_off + 5);
	if (!step(!insmod("kprobe_target", ""), "insmod kprobe_target") ||
	    !step(!event_on("bp", where), "breakpoint event") ||
	    !step(!insmod("kprobe_example", "symbol=kprobe_target_opt post=0"), "insmod sample") ||
	    !step(wait_target_optimized(), "optimized") ||
	    !step(!put(D "/enabled", "0", 0), "switched off") ||
	    !step(!lines_with(D "/list", "OPTIMIZED", NULL), "no longer optimized"))
		return 0;
	bp = event_hits("bp");
	fork_some(5);
	if (!step(!param_put("kprobe_target", "opt_calls", "2"), "2 calls") ||
	    !step(event_hits("bp") == bp, "no breakpoint hit while off") ||
	    !step(stats_hits("kprobe_target_opt") == 0, "no jump hit while off"))
		return 0;
	/* Registered while off: not armed. */
	if (!step(!event_on("late", "kernel_clone"), "late event"))
		return 0;
	fork_some(5);
	if (!step(event_hits("late") == 0, "no late probe hit while off") ||
	    !step(!put(D "/enabled", "1", 0), "switched on"))
		return 0;
	fork_some(5);
	late = event_hits("late");
	note("breakpoint hits %ld, late probe hits %ld", event_hits("bp") - bp, late);
	return step(!param_put("kprobe_target", "opt_calls", "3"), "3 calls") &&
	       step(event_hits("bp") - bp >= 5, "breakpoint hits") &&
	       step(late >= 5, "late probe hits") &&
	       step(stats_hits("kprobe_target_opt") == 3, "jump hits") &&
	       step(wait_target_optimized(), "optimized again");
}

/*
 * The enabled switch on a breakpoint probe and an optimized one, and a
 * probe registered while kprobes are switched off: it stays unarmed until
 * they are switched on.
 */
static int t_enabled_kinds(void)
{
	int ok;

	unload_all();
	ok = enabled_kinds_body();
	put(D "/enabled", "1", 0);
	event_off("bp");
	event_off("late");
	unload_all();
	return ok;
}

/* While debug.kprobes-optimization is 0, a new probe stays on its int3. */
static int t_sysctl_new_probe(void)
{
	int ok;

	unload_all();
	if (insmod("kprobe_target", ""))
		return 0;
	put(OPT_SYSCTL, "0", 0);
	ok = step(!insmod("kprobe_example", "symbol=kprobe_target_opt post=0"), "insmod sample");
	sleep(1);
	ok = ok && step(!lines_with(D "/list", "kprobe_target_opt", "OPTIMIZED"),
			"unoptimized while the sysctl is 0");
	put(OPT_SYSCTL, "1", 0);
	ok = ok && step(wait_target_optimized(), "optimized once it is 1");
	unload_all();
	return ok;
}

/*
 * A probe on text that went away (a module's init code): disabling it
 * works, enabling it is refused with -EINVAL. (kprobe_events hides this:
 * it does not enable a gone probe, and says nothing.)
 */
static int t_gone_enable(void)
{
	int ok;

	rmmod("kprobe_target");
	if (insmod("kprobe_target", "probe_init=1"))
		return 0;
	ok = step(lines_with(D "/list", "[GONE]", NULL) > 0, "gone") &&
	     step(!param_put("kprobe_target", "init_probe_enabled", "0"), "disabled") &&
	     step(param_put("kprobe_target", "init_probe_enabled", "1") == -EINVAL,
		  "enabling refused with -EINVAL");
	rmmod("kprobe_target");
	return ok;
}

/* Wait up to 60 s for the livepatch sample's transition to end. */
static int lp_settled(void)
{
	double end = now() + 60;

	do {
		if (contains(LP "/transition", "0\n"))
			return 1;
		sleep(1);
	} while (now() < end);
	return 0;
}

/* Read /proc/cmdline three times: was it the livepatched function's? */
static int cmdline_patched(void)
{
	int i, patched = 1;

	for (i = 0; i < 3; i++)
		patched &= !!contains("/proc/cmdline", "this has been live patched");
	return patched;
}

/*
 * Disable the livepatch sample and unload it: 1 when it is gone. The
 * transition's end is not the patch's: klp frees the patch from a work
 * item after it, its sysfs directory first, its module reference last,
 * so wait for both before rmmod, as the tree's livepatch selftests do.
 */
static int lp_remove(void)
{
	double end = now() + 60;

	if (!access(LP, F_OK))
		put(LP "/enabled", "0", 0);
	while (!access(LP, F_OK) ||
	       (!access(LP_MOD, F_OK) && !contains(LP_MOD "/refcnt", "0\n"))) {
		if (now() > end)
			return 0;
		usleep(100 * 1000);
	}
	return access(LP_MOD, F_OK) || !rmmod("livepatch_sample");
}

static int livepatch_body(void)
{
	int patched;

	if (!step(!event_on("cmd", "cmdline_proc_show"), "probe") ||
	    !step(!insmod("livepatch-sample", ""), "livepatch beside the probe") ||
	    !step(lp_settled(), "livepatch transition ended") ||
	    !step(cmdline_patched(), "patched") ||
	    !step(event_hits("cmd") == 3, "probe hits 3") ||
	    !step(!event_off("cmd"), "probe removed"))
		return 0;
	/*
	 * The other order: the livepatch is there first. A post_handler
	 * probe alone would arm the site in the ops that changes the IP.
	 */
	if (!insmod("kprobe_example", "symbol=cmdline_proc_show")) {
		rmmod("kprobe_example");
		return step(0, "a post_handler probe accepted beside the livepatch");
	}
	if (!step(count_log("register_kprobe(cmdline_proc_show) failed: -16") > 0,
		  "the post_handler probe refused with -EBUSY") ||
	    !step(!event_on("cmd2", "cmdline_proc_show"), "probe beside the livepatch") ||
	    !step(cmdline_patched(), "patched (2)") ||
	    !step(event_hits("cmd2") == 3, "probe hits 3 (2)"))
		return 0;
	/*
	 * Joining the armed site, it is accepted, as in the tree: the site
	 * stays where it is (moving it would miss calls).
	 */
	if (!step(!insmod("kprobe_example", "symbol=cmdline_proc_show"),
		  "a post_handler probe accepted at an armed site"))
		return 0;
	patched = cmdline_patched();
	rmmod("kprobe_example");
	return step(patched, "patched (3)") && step(event_hits("cmd2") == 6, "probe hits 6");
}

/*
 * A livepatch and a kprobe event at the entry of the function it
 * patches, in both orders: the livepatch is active and the probe counts
 * every call. A probe with a post_handler there may change the IP, as
 * the livepatch does: ftrace allows one such user per function, so it is
 * refused (-EBUSY) when it would arm the site, as in the tree.
 */
static int t_livepatch(void)
{
	int ok = livepatch_body();

	event_off("cmd");
	event_off("cmd2");
	return step(lp_remove(), "livepatch removed") && ok;
}

/* Times @what appears in @s. */
static int count_in(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

/* One record textpoke printed: "poke ADDR OLD_LEN NEW_LEN OLD NEW". */
struct poke {
	unsigned long addr;
	unsigned int old_len, new_len;
	char old[512], new[512];
};

/*
 * Run shell command @cmd under textpoke, whose output (the command's,
 * then a line per record) goes to @out; 1 if both succeeded.
 */
static int textpoke(const char *cmd, char *out, size_t size)
{
	char *full;
	size_t len = 0;
	FILE *f;

	if (asprintf(&full, "textpoke \"%s\"", cmd) < 0)
		return 0;
	f = popen(full, "r");
	free(full);
	if (!f)
		return 0;
	while (len < size - 1 && fgets(out + len, size - len, f))
		len += strlen(out + len);
	out[len] = 0;
	printf("%s", out);
	return pclose(f) == 0;
}

/* The next "poke" record from *@pos on, in textpoke()'s output; 0 at the end. */
static int next_poke(const char **pos, struct poke *p)
{
	const char *line = *pos;

	while (line && *line) {
		const char *next = strchr(line, '\n');

		*pos = next ? next + 1 : NULL;
		if (sscanf(line, "poke %lx %u %u %511s %511s", &p->addr, &p->old_len,
			   &p->new_len, p->old, p->new) == 5)
			return 1;
		line = *pos;
	}
	return 0;
}

static int textpoke_body(char *out, size_t size)
{
	unsigned long at = kallsyms_addr("kernel_clone") + entry_off + 5, opt_at;
	char cmd[512], orig[3] = "";
	const char *pos;
	struct poke p;
	int removed = 0, slot = 0, detour = 0, jump = 0;

	snprintf(cmd, sizeof(cmd),
		 "echo 'p:kptest/tp kernel_clone+%lu' >> " T "/kprobe_events && "
		 "echo 1 > " T "/events/kptest/tp/enable && "
		 "echo 0 > " T "/events/kptest/tp/enable && "
		 "echo '-:kptest/tp' >> " T "/kprobe_events", entry_off + 5);
	if (!step(textpoke(cmd, out, size), "textpoke"))
		return 0;
	for (pos = out; next_poke(&pos, &p);)
		if (p.addr == at && p.old_len == 1 && p.new_len == 1 && !strcmp(p.new, "cc"))
			snprintf(orig, sizeof(orig), "%.2s", p.old);
	if (!step(*orig, "a record of the int3 written"))
		return 0;
	for (pos = out; next_poke(&pos, &p);) {
		removed |= p.addr == at && p.old_len == 1 && p.new_len == 1 &&
			   !strcmp(p.old, "cc") && !strcmp(p.new, orig);
		slot |= !p.old_len && p.new_len && !strncmp(p.new, orig, 2);
	}
	if (!step(removed, "a record of the int3 taken out") || !step(slot, "a record of the slot"))
		return 0;
	/* An optimized probe, from the sample on the test module's function. */
	if (!step(!insmod("kprobe_target", ""), "insmod kprobe_target"))
		return 0;
	opt_at = kallsyms_addr("kprobe_target_opt") + entry_off;
	if (!step(textpoke("insmod " M "/kprobe_example.ko symbol=kprobe_target_opt post=0 && "
			   "sleep 1 && rmmod kprobe_example && sleep 1", out, size), "textpoke (2)"))
		return 0;
	for (pos = out; next_poke(&pos, &p);) {
		detour |= !p.old_len && p.new_len > 64;
		jump |= p.addr == opt_at && !strncmp(p.new, "e9", 2);
	}
	return step(detour, "a record of the detour") && step(jump, "a record of the jump");
}

/*
 * Perf sees every text change: the int3 written and taken out, the
 * instruction slot's contents, and for an optimized probe its detour
 * buffer and the jump (text_poke_bp's own record).
 */
static int t_textpoke(void)
{
	static char out[1 << 16];
	int ok;

	unload_all();
	ok = textpoke_body(out, sizeof(out));
	unload_all();
	return ok;
}

/*
 * Asking the query file about a point allocates nothing and writes no
 * text: no slot or detour filled (a text poke record into new memory, old
 * length 0), no page of slots announced to perf (ksymbol).
 */
static int t_query_quiet(void)
{
	static char out[1 << 16];
	char cmd[512], name[128];
	const char *pos;
	struct poke p;
	int ok, written = 0;
	char *line, *save;

	rmmod("kprobe_target");
	if (insmod("kprobe_target", ""))
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "{ echo kernel_clone+%lu >&3 && cat <&3; } 3<>" D "/query && "
		 "{ echo kprobe_target_opt >&3 && cat <&3; } 3<>" D "/query", entry_off + 5);
	ok = step(textpoke(cmd, out, sizeof(out)), "textpoke");
	rmmod("kprobe_target");
	if (!ok)
		return 0;
	for (pos = out; next_poke(&pos, &p);)
		written |= !p.old_len;
	ok = step(count_in(out, "probe: yes") == 2, "both accepted") &&
	     step(strstr(out, "\noptimize: yes") != NULL, "kprobe_target_opt optimizable") &&
	     step(!written, "no text written into new memory");
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "ksymbol %*x %*u %*s %127s", name) == 1 &&
		    !strncmp(name, "kprobe_", 7))
			ok = step(0, line);
	return ok;
}

/*
 * A probe of a module that went away is [GONE] but still registered;
 * another module is loaded over the same text, with other instructions
 * there, and probed at the same address: the new probe decodes, copies and
 * restores the new module's bytes, never the gone one's.
 */
static int twin_body(void)
{
	unsigned long a, b;

	if (!step(!insmod("kprobe_twin_a", ""), "insmod kprobe_twin_a"))
		return 0;
	a = kallsyms_addr("kprobe_twin_fn");
	if (!step(!insmod("kprobe_example", "symbol=kprobe_twin_fn"), "insmod sample") ||
	    !step(!param_put("kprobe_twin_a", "check", "3"), "a: right result") ||
	    !step(!rmmod("kprobe_twin_a"), "rmmod kprobe_twin_a") ||
	    !step(lines_with(D "/list", "[GONE]", NULL) > 0, "gone") ||
	    !step(!insmod("kprobe_twin_b", ""), "insmod kprobe_twin_b"))
		return 0;
	b = kallsyms_addr("kprobe_twin_fn");
	if (a != b) {
		note("b was loaded at %lx, not at a's %lx", b, a);
		return step(0, "b over a's text");
	}
	return step(!event_on("twin", "kprobe_twin_fn"), "event") &&
	       step(!param_put("kprobe_twin_b", "check", "5"), "b: right result while probed") &&
	       step(event_hits("twin") == 1, "one hit") &&
	       step(!event_off("twin"), "event removed") &&
	       step(!param_put("kprobe_twin_b", "check", "7"), "b: text restored") &&
	       step(!rmmod("kprobe_example"), "rmmod sample");
}

static int t_twin(void)
{
	int ok;

	rmmod("kprobe_example");
	rmmod("kprobe_twin_a");
	rmmod("kprobe_twin_b");
	ok = twin_body();
	event_off("twin");
	rmmod("kprobe_example");
	rmmod("kprobe_twin_b");
	return ok;
}

/*
 * Kprobes keeps nothing it learned of a module's text before it is told
 * the module is coming: a load may fail before that, and free the text
 * without a word to kprobes.
 */
static int t_notice(void)
{
	char line[256];
	int ok;

	rmmod("kprobe_target");
	if (insmod("kprobe_notice", ""))
		return 0;
	ok = step(!insmod("kprobe_target", ""), "insmod kprobe_target");
	rmmod("kprobe_target");
	rmmod("kprobe_notice");
	return ok && step(last_log_line("kprobe_notice: kprobe_target:", line, sizeof(line)),
			  "kprobe_notice's line") &&
	       step(strstr(line, "heard of before kprobes 0, after 1") != NULL,
		    "heard of only after kprobes");
}

/*
 * A module going away: a probe on its text, asked for from its exit
 * function, is refused with -ENOENT.
 */
static int t_probe_in_exit(void)
{
	char line[256];

	rmmod("kprobe_target");
	if (insmod("kprobe_target", "probe_exit=1") ||
	    !step(!rmmod("kprobe_target"), "rmmod kprobe_target"))
		return 0;
	return step(last_log_line("kprobe_target: probe in exit:", line, sizeof(line)),
		    "kprobe_target's line") &&
	       step(strstr(line, "probe in exit: -2") != NULL, "-ENOENT");
}

static int pair_body(void)
{
	if (!step(!insmod("kprobe_pair", ""), "insmod kprobe_pair") ||
	    !step(!put(D "/enabled", "0", 0), "switched off") ||
	    !step(!insmod("livepatch-sample", ""), "livepatch") ||
	    !step(lp_settled(), "livepatch transition ended") ||
	    !step(put(D "/enabled", "1", 0) < 0, "an error from the switch") ||
	    !step(contains(D "/enabled", "1\n"), "switched on") ||
	    !step(count_log("failed to arm kprobe-ftrace at cmdline_proc_show") > 0,
		  "the site not armed reported"))
		return 0;
	slurp("/proc/version");
	if (!step(cmdline_patched(), "patched") ||
	    !step(param_get("kprobe_pair", "hits2") == 1, "version_proc_show: 1 hit") ||
	    !step(param_get("kprobe_pair", "hits1") == 0, "cmdline_proc_show: no hit") ||
	    !step(!rmmod("kprobe_pair"), "unregistered"))
		return 0;
	if (!step(lp_remove(), "livepatch removed") ||
	    !step(!insmod("kprobe_pair", ""), "insmod kprobe_pair again"))
		return 0;
	slurp("/proc/version");
	cmdline_patched();
	note("hits %ld %ld", param_get("kprobe_pair", "hits1"), param_get("kprobe_pair", "hits2"));
	return step(param_get("kprobe_pair", "hits1") == 3 &&
		    param_get("kprobe_pair", "hits2") == 1, "hits 3 and 1") &&
	       step(!rmmod("kprobe_pair"), "rmmod kprobe_pair");
}

/*
 * Two probes with post_handlers at function entries, registered in one
 * call; kprobes switched off, the livepatch sample takes one of the two
 * functions, kprobes switched on: the other probe is armed and fires,
 * the switch fails with the error of the one that could not be armed,
 * reported by name. The probes are unregistered and the livepatch
 * removed cleanly, and both are armed when nothing is in the way.
 */
static int t_pair(void)
{
	int ok = pair_body();

	put(D "/enabled", "1", 0);
	rmmod("kprobe_pair");
	return step(lp_remove(), "livepatch removed") && ok;
}

/* x86-64's own cases, after the others. */
void x86_selftests(void)
{
	if (!have_modules || !have_events)
		return;
	report("query_says_optimize", t_query_optimize());
	report("module_init_probe_gone", t_module_init_gone());
	report("optimized_probe_and_sysctl", t_optimized_sysctl());
	report("enabled_switch_breakpoint_and_optimized", t_enabled_kinds());
	report("sysctl_0_keeps_new_probes_unoptimized", t_sysctl_new_probe());
	report("gone_probe_disable_but_not_enable", t_gone_enable());
	report("livepatch_beside_entry_probe", t_livepatch());
	report("perf_text_poke_records", t_textpoke());
	report("gone_site_revived_by_other_module", t_twin());
	report("query_allocates_and_writes_nothing", t_query_quiet());
	report("module_text_kept_only_once_announced", t_notice());
	report("probe_on_going_module_refused", t_probe_in_exit());
	report("livepatch_leaves_other_sites_armed", t_pair());
}

static int ftrace_killed_body(void)
{
	char where[64];
	long hits;

	if (!step(!insmod("kprobe_target", ""), "insmod kprobe_target") ||
	    !step(!event_on("fk1", "kernel_clone"), "fk1") ||
	    !step(!event_on("fk2", "kprobe_target_func"), "fk2") ||
	    !step(lines_with(D "/list", "kprobe_target_func", "[FTRACE]") == 1, "fk2 on ftrace") ||
	    !step(!insmod("kprobe_ftrace_kill", ""), "ftrace killed") ||
	    !step(!event_off("fk1"), "fk1 disabled and removed") ||
	    !step(!rmmod("kprobe_target"), "probed module removed") ||
	    !step(lines_with(D "/list", "[GONE][FTRACE]", NULL) == 1, "fk2 gone") ||
	    !step(!insmod("kprobe_target", ""), "probed module loaded again") ||
	    !step(!param_put("kprobe_target", "calls", "3"), "3 calls") ||
	    !step(!event_off("fk2"), "fk2 disabled and removed"))
		return 0;
	if (!insmod("kprobe_example", "symbol=kprobe_target_func")) {
		rmmod("kprobe_example");
		return step(0, "no entry probe armed with ftrace dead");
	}
	snprintf(where, sizeof(where), "kernel_clone+%lu", entry_off + 5);
	if (!step(count_log("register_kprobe(kprobe_target_func) failed: -19") > 0,
		  "the entry probe refused with -ENODEV") ||
	    !step(!event_on("fk3", where), "breakpoint probe"))
		return 0;
	fork_some(5);
	hits = event_hits("fk3");
	note("breakpoint probe: %ld hits", hits);
	return step(!event_off("fk3"), "fk3 removed") &&
	       step(!rmmod("kprobe_target"), "rmmod kprobe_target") && step(hits >= 5, "5 hits");
}

/*
 * Last of a boot: ftrace killed (as ftrace does when its text is not what
 * it expects; CVE-2026-43409 in the tree). Probes at entries (ftrace
 * sites) are unregistered, a module with one is removed (its probe goes
 * [GONE]) and loaded again, and new probes are asked for: no oops, a
 * clear error for a new entry probe (-ENODEV), breakpoint probes work,
 * nothing leaked. Nothing that needs ftrace may run after it.
 */
int t_ftrace_killed(void)
{
	int ok;

	rmmod("kprobe_target");
	ok = ftrace_killed_body();
	event_off("fk1");
	event_off("fk2");
	event_off("fk3");
	rmmod("kprobe_example");
	rmmod("kprobe_target");
	return ok && t_list_empty();
}
#endif
