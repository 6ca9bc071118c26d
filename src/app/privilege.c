/* SPDX-License-Identifier: MIT */
/*
 * Capabilities are per thread on Linux: capset() and PR_CAPBSET_DROP change
 * the calling thread only, and a thread keeps what it had when it was
 * created. So the drop runs in the calling thread, then in every other
 * thread through a real-time signal whose handler makes the same raw system
 * calls, and finally every thread's /proc status is read back to check.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "privilege.h"

#define PRIV_SIGNAL (SIGRTMIN + 6)	/* no other part of rxpath uses real-time signals */
#define PRIV_WAIT_MS 2000		/* for the other threads to answer */
#define PRIV_THREADS_MAX 1024u
#define PRIV_NAMES_LISTED 6		/* more dropped than this: a count, not the names */

static const char *const cap_names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
	"setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
	"net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
	"sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
	"audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
	"block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
};

/* The state every thread drops to; written before any thread is signalled. */
static struct {
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uint64_t bnd_drop;	/* capabilities to take out of the bounding set */
	int last_cap;
	atomic_uint answered, failed;
} target;

static uint64_t dropped_caps;

uint64_t priv_caps_dropped(void)
{
	return dropped_caps;
}

static const char *cap_name(int cap, char *buf, size_t len)
{
	if (cap >= 0 && (size_t)cap < RXP_ARRAY_SIZE(cap_names))
		snprintf(buf, len, "cap_%s", cap_names[cap]);
	else
		snprintf(buf, len, "cap_%d", cap);
	return buf;
}

/* The highest capability this kernel knows. */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	if (n < 0)
		return CAP_LAST_CAP;
	return RXP_MIN(n, PRIV_CAPS_MAX - 1);
}

int priv_parse_caps(const char *list, uint64_t *mask, char *err, size_t errlen)
{
	char buf[512], *word, *save = NULL;

	*mask = 0;
	if (!strcmp(list, "all")) {
		*mask = PRIV_KEEP_ALL;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (word = strtok_r(buf, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		const char *name = word;
		size_t i;

		for (char *p = word; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (!strncmp(name, "cap_", 4))
			name += 4;
		for (i = 0; i < RXP_ARRAY_SIZE(cap_names); i++)
			if (!strcmp(name, cap_names[i]))
				break;
		if (i == RXP_ARRAY_SIZE(cap_names)) {
			snprintf(err, errlen, "--keep-caps %s: '%s' is not a capability; expected names like net_admin,sys_admin, or 'all'",
				 list, word);
			return -EINVAL;
		}
		*mask |= 1ull << i;
	}
	if (!*mask) {
		snprintf(err, errlen, "--keep-caps: expected capability names like net_admin, or 'all'");
		return -EINVAL;
	}
	return 0;
}

static void add_why(struct priv_plan *plan, int cap, const char *why)
{
	char *w = plan->why[cap];
	size_t n = strlen(w);

	plan->keep |= 1ull << cap;
	if (strstr(w, why))
		return;
	snprintf(w + n, PRIV_WHY_LEN - n, "%s%s", n ? ", " : "", why);
}

void priv_plan(const struct dp_config *cfg, uint64_t extra, struct priv_plan *plan)
{
	bool host[DP_PORTS_MAX] = { false };
	char hosts[PRIV_WHY_LEN] = "";
	unsigned n_hosts = 0;

	memset(plan, 0, sizeof(*plan));
	if (extra == PRIV_KEEP_ALL) {
		plan->keep_all = true;
		plan->keep = PRIV_KEEP_ALL;
		return;
	}
	/* what each driver needs while its ports run (AF_XDP: removing its program at exit) */
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		const struct rxp_port_ops *ops = rxp_port_driver_of_spec(cfg->ports[i].spec);

		for (const struct rxp_port_cap *k = ops ? ops->keep_caps : NULL; k && k->why; k++)
			add_why(plan, k->cap, k->why);
	}
	/* a TAP's addresses and MTU follow its port's while running: rtnetlink, CAP_NET_ADMIN */
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		const struct dp_cmd *c = &cfg->cmds[i];

		if (c->kind != DP_CMD_HOST)
			continue;
		for (unsigned p = 0; p < cfg->n_ports; p++)
			if (!strcmp(cfg->ports[p].name, c->dev))
				host[p] = c->host_on;	/* the last word on a port counts */
	}
	for (unsigned p = 0; p < cfg->n_ports; p++) {
		size_t n = strlen(hosts);

		if (!host[p])
			continue;
		snprintf(hosts + n, sizeof(hosts) - n, "%s%s", n ? " " : "", cfg->ports[p].name);
		n_hosts++;
	}
	if (n_hosts) {
		char why[PRIV_WHY_LEN + 64];

		snprintf(why, sizeof(why), "the TAP%s of host path%s %s follow%s addresses and MTU",
			 n_hosts > 1 ? "s" : "", n_hosts > 1 ? "s" : "", hosts, n_hosts > 1 ? "" : "s");
		why[PRIV_WHY_LEN - 1] = '\0';
		add_why(plan, CAP_NET_ADMIN, why);
	}
	for (int c = 0; c < PRIV_CAPS_MAX; c++)
		if (extra >> c & 1)
			add_why(plan, c, "--keep-caps");
}

static int caps_get(uint64_t *prm, uint64_t *eff)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, d))
		return -errno;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	return 0;
}

/* Drops the calling thread to the target. Raw system calls only: it also runs as a signal handler. */
static int drop_here(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	int ret = 0;

	/* first, while CAP_SETPCAP is still effective */
	for (int c = 0; c <= target.last_cap; c++)
		if ((target.bnd_drop >> c & 1) && syscall(SYS_prctl, PR_CAPBSET_DROP, c, 0, 0, 0))
			ret = -1;
	/* ambient capabilities only matter across execve; EINVAL before Linux 4.3 is fine */
	syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, target.data))
		ret = -1;
	if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		ret = -1;
	return ret;
}

static void on_drop_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (drop_here())
		atomic_fetch_add(&target.failed, 1);
	atomic_fetch_add(&target.answered, 1);
	errno = saved;
}

/*
 * Signals every thread but the caller that @tids does not list yet, and
 * adds it there. Returns how many were signalled, or -errno.
 */
static int signal_new_threads(pid_t *tids, unsigned *n_tids)
{
	pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int sent = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		bool seen = tid <= 0 || tid == self;

		for (unsigned i = 0; i < *n_tids && !seen; i++)
			seen = tids[i] == tid;
		if (seen)
			continue;
		if (*n_tids == PRIV_THREADS_MAX) {
			closedir(d);
			return -E2BIG;
		}
		tids[(*n_tids)++] = tid;
		/* ESRCH: the thread has ended, with nothing left to drop */
		if (!syscall(SYS_tgkill, pid, tid, PRIV_SIGNAL))
			sent++;
	}
	closedir(d);
	return sent;
}

/* Runs drop_here() in every other thread, also in threads they start meanwhile. Returns 0 or -errno. */
static int drop_other_threads(char *line, size_t len)
{
	static pid_t tids[PRIV_THREADS_MAX];
	struct sigaction sa = { .sa_handler = on_drop_signal, .sa_flags = SA_RESTART };
	unsigned n_tids = 0, expected = 0;
	int sent, ret = 0;

	sigemptyset(&sa.sa_mask);
	if (sigaction(PRIV_SIGNAL, &sa, NULL)) {
		ret = -errno;
		snprintf(line, len, "cannot install the signal handler: %s", strerror(errno));
		return ret;
	}
	while ((sent = signal_new_threads(tids, &n_tids)) > 0) {
		expected += (unsigned)sent;
		for (int ms = 0; atomic_load(&target.answered) < expected; ms++) {
			if (ms == PRIV_WAIT_MS)
				break;	/* a thread that ended before answering: the check below decides */
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		}
		if (atomic_load(&target.answered) < expected)
			break;
	}
	if (sent < 0) {
		ret = sent;
		snprintf(line, len, "cannot list the threads: %s", strerror(-sent));
	} else if (atomic_load(&target.failed)) {
		ret = -EPERM;
		snprintf(line, len, "%u thread(s) could not drop their capabilities",
			 atomic_load(&target.failed));
	}
	/* a late signal must not kill the process (the default action of a real-time signal) */
	signal(PRIV_SIGNAL, SIG_IGN);
	return ret;
}

/* Reads one thread's status. Returns 0 or -errno. */
static int thread_status(int tid, char name[32], uint64_t *prm, uint64_t *eff,
			 uint64_t *bnd, int *nnp)
{
	char path[64], buf[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	name[0] = '\0';
	*nnp = -1;
	while (fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "Name: %31s", name) == 1)
			continue;
		if (sscanf(buf, "CapPrm: %llx", &v) == 1)
			*prm = v;
		else if (sscanf(buf, "CapEff: %llx", &v) == 1)
			*eff = v;
		else if (sscanf(buf, "CapBnd: %llx", &v) == 1)
			*bnd = v;
		else
			sscanf(buf, "NoNewPrivs: %d", nnp);
	}
	fclose(f);
	return 0;
}

/* Checks every thread against what it should hold now. Returns 0, or -EPERM naming the first that differs. */
static int check_threads(uint64_t want_prm, uint64_t want_bnd, char *line, size_t len)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int ret = 0;

	if (!d) {
		ret = -errno;
		snprintf(line, len, "cannot read /proc/self/task to check: %s", strerror(-ret));
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		uint64_t prm = 0, eff = 0, bnd = 0;
		char name[32];
		int nnp;

		if (atoi(e->d_name) <= 0 ||
		    thread_status(atoi(e->d_name), name, &prm, &eff, &bnd, &nnp))
			continue;	/* a thread that just ended */
		if (prm != want_prm || eff != want_prm || bnd != want_bnd || nnp != 1) {
			snprintf(line, len,
				 "thread %s (%s) holds permitted %#llx, effective %#llx, bounding %#llx, no_new_privs %d; expected %#llx, %#llx, %#llx, 1",
				 e->d_name, name, (unsigned long long)prm, (unsigned long long)eff,
				 (unsigned long long)bnd, nnp, (unsigned long long)want_prm,
				 (unsigned long long)want_prm, (unsigned long long)want_bnd);
			ret = -EPERM;
		}
	}
	closedir(d);
	return ret;
}

/* Writes the ", "-separated names of the capabilities in @mask, each with its reason from @plan. */
static size_t list_caps(char *out, size_t len, uint64_t mask, const struct priv_plan *plan)
{
	size_t n = 0;
	char name[32];

	out[0] = '\0';
	for (int c = 0; c < PRIV_CAPS_MAX && n < len; c++) {
		if (!(mask >> c & 1))
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "",
				      cap_name(c, name, sizeof(name)));
		if (plan && plan->why[c][0] && n < len)
			n += (size_t)snprintf(out + n, len - n, " (%s)", plan->why[c]);
	}
	return n;
}

int priv_drop(const struct priv_plan *plan, char *line, size_t len)
{
	uint64_t prm = 0, eff = 0, keep, drop, missing, bnd = 0, all;
	char kept[512], gone[512], lacking[512] = "";
	bool bnd_dropped;
	int ret = 0;

	line[0] = '\0';
	if (caps_get(&prm, &eff) || !prm)
		return 0;	/* nothing to give up */
	if (plan->keep_all) {
		snprintf(line, len, "capabilities kept: all (--keep-caps all)");
		return 0;
	}
	target.last_cap = last_cap();
	all = target.last_cap == 63 ? UINT64_MAX : (1ull << (target.last_cap + 1)) - 1;
	keep = plan->keep & prm;
	drop = prm & ~keep;
	missing = plan->keep & ~prm & all;
	for (int c = 0; c <= target.last_cap; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			bnd |= 1ull << c;
	/* only a thread with CAP_SETPCAP may shrink its bounding set */
	bnd_dropped = (eff >> CAP_SETPCAP & 1) && (bnd & ~keep);
	target.bnd_drop = bnd_dropped ? bnd & ~keep : 0;
	memset(target.data, 0, sizeof(target.data));
	target.data[0].permitted = target.data[0].effective = (uint32_t)keep;
	target.data[1].permitted = target.data[1].effective = (uint32_t)(keep >> 32);
	atomic_store(&target.answered, 0);
	atomic_store(&target.failed, 0);

	if (drop_here()) {
		ret = -errno;
		snprintf(line, len, "cannot drop capabilities: %s", strerror(errno));
	}
	/* the other threads too, whatever happened here: the check below says what holds */
	if (!ret)
		ret = drop_other_threads(line, len);
	else
		drop_other_threads(gone, sizeof(gone));
	if (!ret)
		ret = check_threads(keep, bnd & ~target.bnd_drop, line, len);
	if (ret)
		return ret;
	dropped_caps = drop;
	if (missing) {
		/* a service manager that did not grant them: what they are for will fail */
		size_t n = (size_t)snprintf(lacking, sizeof(lacking), "; wanted but not held: ");

		list_caps(lacking + n, sizeof(lacking) - n, missing, plan);
	}

	list_caps(kept, sizeof(kept), keep, plan);
	if (__builtin_popcountll(drop) > PRIV_NAMES_LISTED)
		snprintf(gone, sizeof(gone), "%s %d%s", drop == (prm & all) ? "all" : "",
			 __builtin_popcountll(drop), keep ? " others" : "");
	else
		list_caps(gone, sizeof(gone), drop, NULL);
	snprintf(line, len, "capabilities kept: %s; dropped: %s%s%s; no_new_privs set%s",
		 keep ? kept : "none", drop ? gone + (gone[0] == ' ') : "none",
		 bnd_dropped ? ", from the bounding set too" : "",
		 !bnd_dropped && (bnd & ~keep) ? " (bounding set unchanged: no cap_setpcap)" : "",
		 lacking);
	return 0;
}
