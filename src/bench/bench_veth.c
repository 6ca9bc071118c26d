/* SPDX-License-Identifier: MIT */
/*
 * rxpath bench veth: forwarding through a real lab of network namespaces,
 *
 *   h1 (10.0.1.2) eth0 --- veth --- r0 [ r ] r1 --- veth --- eth0 (10.0.2.2) h2
 *
 * A sender in h1 blasts 64-byte UDP frames at h2 through r, and what h2's
 * eth0 receives per second is the figure. The forwarders take turns in r,
 * repetition after repetition in a rotating order, in the same lab: the
 * kernel (addresses on r0/r1, ip_forward=1), and this same binary running
 * `rxpath run` on afxdp ports, then on afpacket ports; and each of the
 * three again with masquerade to r's outside address 10.0.2.1 (the kernel:
 * nftables and its conntrack; rxpath: `nat add masquerade out p1`). The
 * NAT paths' ratios are taken against the kernel's NAT, not its plain
 * forwarding.
 *
 * The sender is our own (veth_sender.c): a PACKET_TX_RING with the qdisc
 * bypassed, one system call per ring's worth of frames, that waits out a
 * full send buffer where trafgen gives up.
 *
 * --forwarder NAME='COMMAND' adds a path of the user's: COMMAND runs under
 * sh in r (testpmd, VPP, an XDP program, ...) with the lab's names put in
 * for {r0}, {h2mac}, ..., takes its turns with the others, and is measured
 * against the kernel the same way.
 *
 * Set-up shells out to ip, ethtool and sysctl; nothing is spawned inside a
 * measurement window except the two counter reads that bound it. The lab is
 * always torn down: on success, on error, and on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rxpath/args.h>
#include <rxpath/csum.h>
#include "bench_veth.h"
#include "core/clock.h"
#include "core/fmt.h"
#include "core/sbuf.h"
#include "veth_sender.h"
#include "xdp_sink.h"

#define REPS_MAX 101
#define FRAME_SIZE 64		/* on the wire, with FCS */
#define WARMUP_S 0.5		/* sender running before the window opens */
#define START_TIMEOUT_S 10.0
#define STOP_TIMEOUT_S 10.0
#define FWD_MAX 8		/* --forwarder, at most */
#define FWD_NAME_MAX 32
#define FWD_TIMEOUT_S 30.0	/* default --forwarder-timeout: DPDK takes seconds to start */
/*
 * The flows h1 sends: build_frame writes one frame, every byte fixed, so one
 * (source port 1024 to h2's discard port). On the NAT paths every flow is a
 * connection and a mapping: they must stay far below the connection table
 * (rxpath's `conntrack max` and the kernel's nf_conntrack_max: 65,536 by
 * default here) and the 64,512 ports (1024-65535) the masquerade address has.
 */
#define FLOWS 1
_Static_assert(FLOWS <= 1024, "the NAT paths need far fewer flows than 65,536 connections / 64,512 ports");

enum veth_path {
	PATH_KERNEL, PATH_AFXDP, PATH_AFXDP_COALESCE, PATH_AFPACKET,
	PATH_KERNEL_NAT, PATH_AFXDP_NAT, PATH_AFPACKET_NAT, N_PATHS,
	MAX_PATHS = N_PATHS + FWD_MAX	/* the forwarders follow the built-in paths */
};

/*
 * afpacket ports get MACs of their own: frames to rxpath are then not the
 * kernel's (PACKET_OTHERHOST), which drops them at the door instead of
 * routing each one too. NULL: the port takes the interface's MAC.
 */
#define AFPACKET_MACS { "02:72:78:00:00:01", "02:72:78:00:00:02" }

static struct veth_path_def {
	const char *name;
	const char *driver;	/* rxpath's port driver; NULL: the kernel forwards */
	const char *options;	/* the port spec's options, after "dev=rN" */
	const char *mac[2];
	bool nat;		/* masquerade out of r1 (p1) to 10.0.2.1 */
	enum veth_path ref;	/* ratios are to this path */
	enum veth_path plain;	/* the same forwarder without NAT */
	const char *command;	/* a --forwarder's, as given; NULL: a built-in path */
} paths[MAX_PATHS] = {
	[PATH_KERNEL] = { "kernel", NULL, NULL, { NULL, NULL }, false, PATH_KERNEL, PATH_KERNEL, NULL },
	[PATH_AFXDP] = { "afxdp", "afxdp", "", { NULL, NULL }, false, PATH_KERNEL, PATH_AFXDP, NULL },
	[PATH_AFXDP_COALESCE] = { "afxdp-coalesce", "afxdp", ",coalesce=200", { NULL, NULL }, false,
				  PATH_KERNEL, PATH_AFXDP_COALESCE, NULL },
	[PATH_AFPACKET] = { "afpacket", "afpacket", "", AFPACKET_MACS, false, PATH_KERNEL, PATH_AFPACKET, NULL },
	[PATH_KERNEL_NAT] = { "kernel-nat", NULL, NULL, { NULL, NULL }, true, PATH_KERNEL_NAT, PATH_KERNEL, NULL },
	[PATH_AFXDP_NAT] = { "afxdp-nat", "afxdp", "", { NULL, NULL }, true, PATH_KERNEL_NAT, PATH_AFXDP, NULL },
	[PATH_AFPACKET_NAT] = { "afpacket-nat", "afpacket", "", AFPACKET_MACS, true, PATH_KERNEL_NAT,
				PATH_AFPACKET, NULL },
};
/* the built-in paths, then the forwarders (add_forwarder) */
static int n_paths = N_PATHS;
static char fwd_names[FWD_MAX][FWD_NAME_MAX + 1];

/* The kernel's masquerade in r, as nftables writes it (nft -f). */
static const char kernel_nat_ruleset[] =
	"table ip nat {\n"
	"\tchain postrouting {\n"
	"\t\ttype nat hook postrouting priority 100; policy accept;\n"
	"\t\toifname \"r1\" masquerade\n"
	"\t}\n"
	"}\n";

enum { NS_H1, NS_R, NS_H2, NS_MAX };
enum { MAC_R0, MAC_R1, MAC_H1, MAC_H2, MAC_MAX };

struct veth_lab {
	char ns[NS_MAX][40];
	bool ns_made[NS_MAX];
	char dir[64];		/* config files and logs */
	char exe[PATH_MAX];	/* this binary, for `rxpath run` in r */
	int rxpath_cpu;		/* -1: not pinned */
	int sender_cpu;
	bool kernel_on;		/* addresses and forwarding on in r */
	bool h2_no_route;	/* h2's default route is off (a NAT path's turn) */
	bool static_neigh;	/* h1's and h2's gateways pinned to r0's and r1's MACs */
	char mac[MAC_MAX][18];	/* r0, r1 and the hosts' eth0, for {r0mac} ... */
	pid_t sender;
	pid_t rxpath;
	pid_t forwarder;	/* also its process group */
	enum veth_path forwarder_path;
};

struct veth_opts {
	double duration;
	unsigned reps;
	bool json;
	bool sink_stack;	/* h2's IP stack takes the flood (no XDP sink) */
	bool path_on[MAX_PATHS];	/* --paths, with the ratios' references */
	double fwd_timeout;	/* --forwarder-timeout */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath bench veth [OPTIONS]     (root)\n"
		"\n"
		"Builds h1 -- r -- h2 over veth pairs in network namespaces, blasts 64-byte UDP\n"
		"frames (one flow) from h1 to h2 and reports the packets/s that reach h2 with\n"
		"each forwarder in r. Paths take turns, repetition by repetition:\n"
		"\n"
		"  kernel           the kernel in r (ip_forward)\n"
		"  afxdp            rxpath on afxdp ports (need_wakeup alone)\n"
		"  afxdp-coalesce   the same with coalesce=200: the NAPI takes frames in batches\n"
		"  afpacket         rxpath on afpacket ports\n"
		"  kernel-nat       the kernel with nftables masquerade out of r1 (conntrack);\n"
		"                   needs nft (apt-get install nftables)\n"
		"  afxdp-nat        afxdp with 'nat add masquerade out p1'\n"
		"  afpacket-nat     afpacket with 'nat add masquerade out p1'\n"
		"\n"
		"Ratios are to kernel, and for the NAT paths to kernel-nat (the JSON's\n"
		"ratio_to says which); the last lines compare afxdp/kernel with\n"
		"afxdp-nat/kernel-nat (and afpacket's), measured in the same run. On the NAT\n"
		"paths h2 has no route back to h1: the warm-up ping is answered only if r\n"
		"masquerades to 10.0.2.1. The lab is removed at the end, also on error and\n"
		"on Ctrl-C.\n"
		"\n"
		"  --paths LIST     the paths to measure, by name, separated by commas (default\n"
		"                   all seven; with the defaults that is about 2.5 minutes);\n"
		"                   the path a ratio is to comes along (kernel, kernel-nat)\n"
		"  --duration S     seconds per measurement window (default 3)\n"
		"  --reps N         repetitions of every path (default 5)\n"
		"  --sink xdp|stack what h2 does with the flood: drop it at XDP (default;\n"
		"                   its rx_packets still counts every frame), or take it\n"
		"                   up its IP stack, which answers port unreachable\n"
		"  --json           one JSON array on stdout\n"
		"  --forwarder NAME='COMMAND'\n"
		"                   one more path, of your own (up to %d; repeatable): COMMAND\n"
		"                   runs under /bin/sh in r, stdin closed, in its own process\n"
		"                   group, and takes its turns with the others, its ratio to\n"
		"                   kernel (which comes along). In its turn r0/r1 have no\n"
		"                   addresses and r's kernel does not forward; h1's route to\n"
		"                   10.0.1.1 and h2's to 10.0.2.1 are pinned to r0's and r1's\n"
		"                   MACs (static neighbours), so COMMAND must forward between\n"
		"                   r0 and r1 and rewrite the MACs. It is ready when h1's ping\n"
		"                   reaches h2 through it; at the end of its turn its group gets\n"
		"                   SIGTERM, then SIGKILL after %.0f s. NAME: letters, digits, '-'\n"
		"                   and '_', not a path's; --paths may name it too\n"
		"  --forwarder-timeout S\n"
		"                   seconds a forwarder has to pass the ping (default %.0f)\n"
		"\n"
		"In COMMAND these are replaced ('{{' is a literal '{'):\n"
		"  {r0} {r1}        r's interfaces, toward h1 and toward h2\n"
		"  {r0mac} {r1mac}  their MACs\n"
		"  {h1mac} {h2mac}  h1's and h2's eth0 MACs (the next hops to write)\n"
		"  {h1ip} {h2ip}    10.0.1.2, 10.0.2.2\n"
		"  {r0ip} {r1ip}    10.0.1.1, 10.0.2.1 (the hosts' gateways)\n"
		"  {ns}             r's network namespace\n"
		"  {cpu}            the CPU rxpath is pinned to (the sender has another)\n"
		"  {dir}            the lab's scratch directory, removed at the end\n"
		"\n"
		"DPDK's testpmd on AF_XDP (apt-get install dpdk-dev librte-net-af-xdp23; no\n"
		"hugepages needed):\n"
		"\n"
		"  rxpath bench veth --paths kernel,afxdp --forwarder testpmd='dpdk-testpmd\n"
		"    --lcores 0@{cpu},1@{cpu} --no-pci --no-huge --no-shconf -m 512\n"
		"    --vdev net_af_xdp0,iface={r0} --vdev net_af_xdp1,iface={r1} --\n"
		"    --forward-mode=mac --eth-peer=0,{h1mac} --eth-peer=1,{h2mac}\n"
		"    --total-num-mbufs 16384 --auto-start --stats-period 3600'\n"
		"\n"
		"(--stats-period keeps testpmd off its stdin, which is closed.)\n",
		FWD_MAX, STOP_TIMEOUT_S, FWD_TIMEOUT_S);
}

/* Sleeps @s seconds in short steps; -1 as soon as a stop signal came. */
static int nap(double s)
{
	double end = rxp_clock_seconds() + s;

	while (!stop_signal) {
		double left = end - rxp_clock_seconds();
		struct timespec ts;

		if (left <= 0)
			return 0;
		if (left > 0.05)
			left = 0.05;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	return -1;
}

/*
 * Runs a shell command with its output captured (popen, not system(): system
 * ignores SIGINT while it waits, and Ctrl-C must reach our handler). The
 * first line of output goes to @out when given. On failure @err names the
 * command and what it said.
 */
static int sh(char *out, size_t outlen, char *err, size_t errlen, const char *fmt, ...)
{
	char cmd[1024], buf[512] = "";
	size_t n = 0;
	va_list ap;
	FILE *f;
	int st, c;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	f = popen(cmd, "r");
	if (!f) {
		snprintf(err, errlen, "cannot run '%s': %s", cmd, strerror(errno));
		return -1;
	}
	while ((c = fgetc(f)) != EOF)
		if (n < sizeof(buf) - 1)
			buf[n++] = (char)c;
	buf[n] = '\0';
	st = pclose(f);
	if (out) {
		snprintf(out, outlen, "%s", buf);
		out[strcspn(out, "\n")] = '\0';
	}
	if (st != 0) {
		cmd[strlen(cmd) - 5] = '\0';
		while (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		snprintf(err, errlen, "'%s' failed (%s%d)%s%s", cmd,
			 WIFEXITED(st) ? "status " : "signal ",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? WTERMSIG(st) : st,
			 n ? ": " : "", buf);
		return -1;
	}
	return 0;
}

static bool in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char dirs[4096], file[PATH_MAX], *save, *d;

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", p ? p : "/usr/bin:/bin");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/%s", d, prog);
		if (access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/* One interface counter in a namespace; @t is when it was read (mid-way through the read). */
static int read_counter(const struct veth_lab *lab, int ns, const char *dev, const char *name,
			uint64_t *v, double *t, char *err, size_t errlen)
{
	char out[64];
	double t0 = rxp_clock_seconds();

	if (sh(out, sizeof(out), err, errlen, "ip netns exec %s cat /sys/class/net/%s/statistics/%s",
	       lab->ns[ns], dev, name))
		return -1;
	*t = (t0 + rxp_clock_seconds()) / 2;
	if (rxp_parse_u64(out, 0, UINT64_MAX, v)) {
		snprintf(err, errlen, "%s %s %s: not a counter: '%s'", lab->ns[ns], dev, name, out);
		return -1;
	}
	return 0;
}

static int parse_mac(const char *text, uint8_t mac[6])
{
	unsigned b[6];

	if (sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* What a forwarder's COMMAND may name, in braces; the values are subst_value's. */
static const char *const subst_names[] = {
	"r0", "r1", "r0mac", "r1mac", "h1mac", "h2mac", "h1ip", "h2ip", "r0ip", "r1ip", "ns", "cpu",
	"dir",
};

/* The value of subst_names[@k] in @lab; NULL for {cpu} when rxpath is not pinned. */
static const char *subst_value(const struct veth_lab *lab, unsigned k, char cpu[16])
{
	const char *const val[] = {
		"r0", "r1", lab->mac[MAC_R0], lab->mac[MAC_R1], lab->mac[MAC_H1], lab->mac[MAC_H2],
		"10.0.1.2", "10.0.2.2", "10.0.1.1", "10.0.2.1", lab->ns[NS_R],
		lab->rxpath_cpu >= 0 ? cpu : NULL, lab->dir,
	};

	_Static_assert(sizeof(val) / sizeof(val[0]) == sizeof(subst_names) / sizeof(subst_names[0]),
		       "a value for every name");
	snprintf(cpu, 16, "%d", lab->rxpath_cpu);
	return val[k];
}

/*
 * @cmd with the lab's names put in for {r0}, {h2mac}, ... and '{' for
 * '{{', to @out; any other '{' stays. With @lab NULL it only checks the
 * names. -1 with @err saying what is wrong.
 */
static int expand(const char *name, const char *cmd, const struct veth_lab *lab, char *out,
		  size_t outlen, char *err, size_t errlen)
{
	static const char word[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
	size_t n = 0;

	for (const char *c = cmd; *c;) {
		const char *val = c;
		size_t vlen = 1, w;
		char cpu[16];

		if (c[0] == '{' && c[1] == '{') {
			c += 2;
		} else if (c[0] == '{' && (w = strspn(c + 1, word)) && c[1 + w] == '}') {
			unsigned k = 0, nk = sizeof(subst_names) / sizeof(subst_names[0]);
			size_t used = 0;

			while (k < nk && (strlen(subst_names[k]) != w || strncmp(c + 1, subst_names[k], w)))
				k++;
			if (k == nk) {
				used = (size_t)snprintf(err, errlen, "--forwarder %s: '%.*s': not a name the "
							"bench substitutes (it knows", name, (int)w + 2, c);
				for (k = 0; k < nk && used < errlen; k++)
					used += (size_t)snprintf(err + used, errlen - used, " {%s}",
								 subst_names[k]);
				if (used < errlen)
					snprintf(err + used, errlen - used, "; write '{{' for a literal '{')");
				return -1;
			}
			c += w + 2;
			if (!lab)
				continue;
			val = subst_value(lab, k, cpu);
			if (!val) {
				snprintf(err, errlen, "--forwarder %s: {cpu}: rxpath is not pinned on this "
					 "machine (one CPU we may use, or no taskset: apt-get install "
					 "util-linux), so there is no CPU to give; leave {cpu} out", name);
				return -1;
			}
			vlen = strlen(val);
		} else {
			c++;
		}
		if (n + vlen >= outlen) {
			snprintf(err, errlen, "--forwarder %s: the command is longer than %zu bytes with "
				 "the names put in", name, outlen - 1);
			return -1;
		}
		memcpy(out + n, val, vlen);
		n += vlen;
	}
	out[n] = '\0';
	return 0;
}

/* Offloads a userspace datapath cannot take from a veth peer (see README, "Real interfaces"). */
static void offloads_off(const struct veth_lab *lab, int ns, const char *dev)
{
	char err[256];

	if (sh(NULL, 0, err, sizeof(err), "ip netns exec %s ethtool -K %s tx off tso off gso off gro off",
	       lab->ns[ns], dev))
		sh(NULL, 0, err, sizeof(err), "ip netns exec %s ethtool -K %s tx off", lab->ns[ns], dev);
}

/* The kernel's masquerade in r on or off: table ip nat loaded from a file, or deleted. */
static int kernel_nat(struct veth_lab *lab, bool on, char *err, size_t errlen)
{
	char file[128];
	bool written = false;
	FILE *f;

	if (!on)
		return sh(NULL, 0, err, errlen, "ip netns exec %s nft delete table ip nat", lab->ns[NS_R]);
	snprintf(file, sizeof(file), "%s/kernel-nat.nft", lab->dir);
	f = fopen(file, "w");
	if (f) {
		written = fputs(kernel_nat_ruleset, f) >= 0;
		if (fclose(f))
			written = false;
	}
	if (!written) {
		snprintf(err, errlen, "cannot write %s: %s", file, strerror(errno));
		return -1;
	}
	return sh(NULL, 0, err, errlen, "ip netns exec %s nft -f %s", lab->ns[NS_R], file);
}

static int lab_up(struct veth_lab *lab, const struct veth_opts *o, char *err, size_t errlen)
{
	static const char *const host_addr[2] = { "10.0.1.2/24", "10.0.2.2/24" };
	static const char *const host_gw[2] = { "10.0.1.1", "10.0.2.1" };
	static const int hosts[2] = { NS_H1, NS_H2 };

	for (int i = 0; i < NS_MAX; i++) {
		if (sh(NULL, 0, err, errlen, "ip netns add %s", lab->ns[i]))
			return -1;
		lab->ns_made[i] = true;
	}
	/* created straight in their namespaces: nothing ever sits in ours */
	if (sh(NULL, 0, err, errlen, "ip link add name r0 netns %s type veth peer name eth0 netns %s",
	       lab->ns[NS_R], lab->ns[NS_H1]) ||
	    sh(NULL, 0, err, errlen, "ip link add name r1 netns %s type veth peer name eth0 netns %s",
	       lab->ns[NS_R], lab->ns[NS_H2]))
		return -1;
	offloads_off(lab, NS_H1, "eth0");
	offloads_off(lab, NS_H2, "eth0");
	offloads_off(lab, NS_R, "r0");
	offloads_off(lab, NS_R, "r1");
	for (int i = 0; i < 2; i++) {
		const char *ns = lab->ns[hosts[i]];

		/* IPv4 only: no router solicitations or ND in the windows */
		if (sh(NULL, 0, err, errlen, "ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
		       "net.ipv6.conf.default.disable_ipv6=1", ns) ||
		    sh(NULL, 0, err, errlen, "ip -n %s link set lo up", ns) ||
		    sh(NULL, 0, err, errlen, "ip -n %s link set eth0 up", ns) ||
		    sh(NULL, 0, err, errlen, "ip -n %s addr add %s dev eth0", ns, host_addr[i]) ||
		    sh(NULL, 0, err, errlen, "ip -n %s route add default via %s", ns, host_gw[i]))
			return -1;
	}
	/*
	 * h2 is the receiving host, not the forwarder under test: its IP stack
	 * (a route lookup, a port-unreachable attempt per frame) would cost
	 * more than forwarding, and on two CPUs it runs on the forwarder's.
	 * It drops the flood at XDP instead; rx_packets counts before that.
	 */
	if (!o->sink_stack && xdp_sink_attach(lab->ns[NS_H2], "eth0", err, errlen))
		return -1;
	/* r0/r1 start without addresses and forwarding: each path sets up its own */
	if (sh(NULL, 0, err, errlen, "ip netns exec %s sysctl -qw net.ipv4.ip_forward=0 "
	       "net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 "
	       "net.ipv6.conf.r0.disable_ipv6=1 net.ipv6.conf.r1.disable_ipv6=1", lab->ns[NS_R]) ||
	    sh(NULL, 0, err, errlen, "ip -n %s link set lo up", lab->ns[NS_R]) ||
	    sh(NULL, 0, err, errlen, "ip -n %s link set r0 up", lab->ns[NS_R]) ||
	    sh(NULL, 0, err, errlen, "ip -n %s link set r1 up", lab->ns[NS_R]))
		return -1;
	/* a kernel without nf_tables or its NAT fails here, not minutes into the run */
	if (o->path_on[PATH_KERNEL_NAT] &&
	    (kernel_nat(lab, true, err, errlen) || kernel_nat(lab, false, err, errlen))) {
		char why[512];

		snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 1, err);
		snprintf(err, errlen, "kernel-nat: the kernel's masquerade does not load in r (nf_tables "
			 "and nft_masq needed; or leave the NAT paths out with --paths): %s", why);
		return -1;
	}
	/* for the forwarders' {r0mac} ... */
	for (int m = 0; m < MAC_MAX; m++)
		if (sh(lab->mac[m], sizeof(lab->mac[m]), err, errlen, "ip netns exec %s cat "
		       "/sys/class/net/%s/address", lab->ns[m < MAC_H1 ? NS_R : m == MAC_H1 ? NS_H1 : NS_H2],
		       m == MAC_R0 ? "r0" : m == MAC_R1 ? "r1" : "eth0"))
			return -1;
	return 0;
}

/*
 * The frame h1 sends: 60 bytes (64 with FCS) to h2, UDP to the discard
 * port, every byte fixed so that the sender only hands it to the kernel.
 * The UDP checksum is 0 (none, allowed in IPv4). It goes to @dst_mac, or to
 * r0's MAC when NULL.
 */
static int build_frame(const struct veth_lab *lab, const char *dst_mac, uint8_t f[FRAME_SIZE - 4],
		       char *err, size_t errlen)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	char mac[32];
	uint16_t csum;

	memset(f, 0, FRAME_SIZE - 4);
	if ((dst_mac ? parse_mac(dst_mac, f) :
	     sh(mac, sizeof(mac), err, errlen, "ip netns exec %s cat /sys/class/net/r0/address",
		lab->ns[NS_R]) || parse_mac(mac, f)) ||
	    sh(mac, sizeof(mac), err, errlen, "ip netns exec %s cat /sys/class/net/eth0/address",
	       lab->ns[NS_H1]) || parse_mac(mac, f + 6)) {
		if (!err[0])
			snprintf(err, errlen, "cannot read the MAC addresses of r0 and h1's eth0");
		return -1;
	}
	f[12] = 0x08;				/* IPv4 */
	ip[0] = 0x45;
	ip[3] = FRAME_SIZE - 4 - 14;		/* total length */
	ip[6] = 0x40;				/* DF */
	ip[8] = 64;				/* TTL */
	ip[9] = 17;				/* UDP */
	memcpy(ip + 12, (const uint8_t[]){ 10, 0, 1, 2, 10, 0, 2, 2 }, 8);
	csum = rxp_csum(ip, 20);		/* in memory order: stored as is */
	memcpy(ip + 10, &csum, 2);
	udp[0] = 0x04;				/* source port 1024 */
	udp[3] = 9;				/* discard */
	udp[5] = FRAME_SIZE - 4 - 34;		/* UDP length */
	return 0;
}

static int write_rxpath_conf(const char *path, const struct veth_path_def *d, char *err, size_t errlen)
{
	const char *driver = d->driver, *options = d->options, *const *mac = d->mac;
	FILE *out = fopen(path, "w");

	if (!out) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(out,
		"port add p0 %s:dev=r0%s%s%s\n"
		"port add p1 %s:dev=r1%s%s%s\n"
		"addr add 10.0.1.1/24 dev p0\n"
		"addr add 10.0.2.1/24 dev p1\n", driver, options, mac[0] ? ",mac=" : "",
		mac[0] ? mac[0] : "", driver, options, mac[1] ? ",mac=" : "", mac[1] ? mac[1] : "");
	/* p1 is r1, toward h2: its address 10.0.2.1 is what h2 sees */
	if (d->nat)
		fprintf(out, "nat add masquerade out p1\n");
	if (fclose(out)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Starts @argv with stdin from /dev/null, stdout to @out and stderr to
 * @errlog (to @out as well when NULL); in a process group of its own when
 * @own_group, so that it and all it starts can be signalled at once.
 */
static pid_t spawn(char *const argv[], const char *out, const char *errlog, bool own_group,
		   char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	extern char **environ;
	pid_t pid = -1;
	int ret;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (errlog)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errlog,
						 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	else
		posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	if (own_group) {
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
		posix_spawnattr_setpgroup(&attr, 0);
	}
	ret = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(ret));
		return -1;
	}
	return pid;
}

/* Waits up to @timeout s for @pid; its wait status, or -1 if it is still running. */
static int wait_for(pid_t pid, double timeout)
{
	double end = rxp_clock_seconds() + timeout;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (rxp_clock_seconds() > end)
			return -1;
		usleep(10000);
	}
}

/* The last line of a log file, for error messages. */
static void log_tail(const char *path, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strnlen(line, len - 1);

		if (line[0] == '\n')
			continue;
		memcpy(out, line, n);
		out[n] = '\0';
	}
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* The last @n (up to 8) lines of a log file, each on a line of its own after "  | ". */
static void log_tail_lines(const char *path, unsigned n, char *out, size_t len)
{
	char ring[8][200];
	unsigned got = 0;
	size_t used = 0;
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (n > 8)
		n = 8;
	while (fgets(ring[got % n], sizeof(ring[0]), f)) {
		char *line = ring[got % n];

		/* the rest of a long line is dropped */
		if (!strchr(line, '\n')) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0])
			got++;
	}
	fclose(f);
	for (unsigned i = got > n ? got - n : 0; i < got && used < len; i++) {
		int w = snprintf(out + used, len - used, "\n  | %s", ring[i % n]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* SIGKILL to every process in namespace @ns; how many there were. */
static int ns_kill_all(const struct veth_lab *lab, int ns)
{
	char cmd[128], pids[4096], *save, *tok;
	size_t n;
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns pids %s 2>/dev/null", lab->ns[ns]);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	n = fread(pids, 1, sizeof(pids) - 1, f);
	pids[n] = '\0';
	pclose(f);
	for (tok = strtok_r(pids, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		long pid = strtol(tok, NULL, 10);

		if (pid > 1) {
			kill((pid_t)pid, SIGKILL);
			found++;
		}
	}
	return found;
}

/* How a child ended, from its wait status: "status N" or "signal N", in @buf. */
static const char *exit_how(int st, char buf[24])
{
	snprintf(buf, 24, "%s %d", WIFEXITED(st) ? "status" : "signal",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return buf;
}

static void sender_stop(struct veth_lab *lab)
{
	if (lab->sender <= 0)
		return;
	kill(lab->sender, SIGTERM);
	if (wait_for(lab->sender, 5) == -1) {
		kill(lab->sender, SIGKILL);
		waitpid(lab->sender, NULL, 0);
	}
	lab->sender = 0;
}

static int sender_start(struct veth_lab *lab, enum veth_path p, char *err, size_t errlen)
{
	uint8_t frame[FRAME_SIZE - 4];
	char log[128];

	if (build_frame(lab, paths[p].mac[0], frame, err, errlen))
		return -1;
	snprintf(log, sizeof(log), "%s/sender.log", lab->dir);
	lab->sender = veth_sender_start(lab->ns[NS_H1], "eth0", frame, sizeof(frame),
					lab->sender_cpu, log, err, errlen);
	return lab->sender > 0 ? 0 : -1;
}

/* Still sending? If the sender died, say why. */
static int sender_alive(struct veth_lab *lab, char *err, size_t errlen)
{
	char log[128], tail[256], how[24];
	int st;

	if (waitpid(lab->sender, &st, WNOHANG) != lab->sender)
		return 0;
	lab->sender = 0;
	snprintf(log, sizeof(log), "%s/sender.log", lab->dir);
	log_tail(log, tail, sizeof(tail));
	snprintf(err, errlen, "the sender in %s exited (%s)%s%s", lab->ns[NS_H1], exit_how(st, how),
		 tail[0] ? ": " : "", tail);
	return -1;
}

/* SIGTERM; 0 when rxpath exited 0 in time. */
static int rxpath_stop(struct veth_lab *lab, char *err, size_t errlen)
{
	char log[128], tail[256], how[24];
	int st;

	if (lab->rxpath <= 0)
		return 0;
	kill(lab->rxpath, SIGTERM);
	st = wait_for(lab->rxpath, STOP_TIMEOUT_S);
	if (st == -1) {
		kill(lab->rxpath, SIGKILL);
		waitpid(lab->rxpath, NULL, 0);
	}
	lab->rxpath = 0;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	snprintf(log, sizeof(log), "%s/rxpath.err", lab->dir);
	log_tail(log, tail, sizeof(tail));
	if (st == -1)
		snprintf(err, errlen, "rxpath did not exit within %.0f s of SIGTERM", STOP_TIMEOUT_S);
	else
		snprintf(err, errlen, "rxpath exited with %s after SIGTERM%s%s", exit_how(st, how),
			 tail[0] ? ": " : "", tail);
	return -1;
}

/*
 * `rxpath run` on @driver ports in r. It is ready when h1 reaches h2 through
 * it (warmup_ping): its JSON start line is not flushed to a file or pipe
 * until later, so it cannot tell us.
 */
static int rxpath_start(struct veth_lab *lab, enum veth_path p, char *err, size_t errlen)
{
	char conf[128], out[128], log[128], cpu[16];
	char *argv[16];
	int n = 0;

	snprintf(conf, sizeof(conf), "%s/rxpath-%s.conf", lab->dir, paths[p].name);
	snprintf(out, sizeof(out), "%s/rxpath.out", lab->dir);
	snprintf(log, sizeof(log), "%s/rxpath.err", lab->dir);
	if (write_rxpath_conf(conf, &paths[p], err, errlen))
		return -1;
	argv[n++] = "ip";
	argv[n++] = "netns";
	argv[n++] = "exec";
	argv[n++] = lab->ns[NS_R];
	if (lab->rxpath_cpu >= 0) {
		snprintf(cpu, sizeof(cpu), "%d", lab->rxpath_cpu);
		argv[n++] = "taskset";
		argv[n++] = "-c";
		argv[n++] = cpu;
	}
	argv[n++] = lab->exe;
	argv[n++] = "run";
	argv[n++] = "-c";
	argv[n++] = conf;
	argv[n++] = "--json";
	argv[n++] = "-i";	/* no live lines: nothing written while it forwards */
	argv[n++] = "0";
	argv[n] = NULL;
	/* `ip netns exec` and taskset exec in place: the pid is rxpath's */
	lab->rxpath = spawn(argv, out, log, false, err, errlen);
	return lab->rxpath > 0 ? 0 : -1;
}

/* Did rxpath exit (at start)? Then say why. */
static int rxpath_alive(struct veth_lab *lab, char *err, size_t errlen)
{
	char log[128], tail[256], how[24];
	int st;

	if (lab->rxpath <= 0 || waitpid(lab->rxpath, &st, WNOHANG) != lab->rxpath)
		return 0;
	lab->rxpath = 0;
	snprintf(log, sizeof(log), "%s/rxpath.err", lab->dir);
	log_tail(log, tail, sizeof(tail));
	snprintf(err, errlen, "rxpath exited at start (%s)%s%s", exit_how(st, how), tail[0] ? ": " : "", tail);
	return -1;
}

static void forwarder_log(const struct veth_lab *lab, enum veth_path p, char *path, size_t len)
{
	snprintf(path, len, "%s/forwarder-%s.log", lab->dir, paths[p].name);
}

/* A forwarder's COMMAND under sh in r, its output (both streams) to its log. */
static int forwarder_start(struct veth_lab *lab, enum veth_path p, char *err, size_t errlen)
{
	char cmd[4096], log[160];
	char *argv[] = { "ip", "netns", "exec", lab->ns[NS_R], "/bin/sh", "-c", cmd, NULL };

	if (expand(paths[p].name, paths[p].command, lab, cmd, sizeof(cmd), err, errlen))
		return -1;
	/* as for rxpath's turns, whatever the paths before did to them */
	offloads_off(lab, NS_R, "r0");
	offloads_off(lab, NS_R, "r1");
	forwarder_log(lab, p, log, sizeof(log));
	lab->forwarder = spawn(argv, log, NULL, true, err, errlen);
	lab->forwarder_path = p;
	return lab->forwarder > 0 ? 0 : -1;
}

/* Did the forwarder exit (at start)? Then say how, with its log's last lines. */
static int forwarder_alive(struct veth_lab *lab, char *err, size_t errlen)
{
	char log[160], tail[1200], how[24];
	int st;

	if (lab->forwarder <= 0 || waitpid(lab->forwarder, &st, WNOHANG) != lab->forwarder)
		return 0;
	/* what it started, if anything, goes with it */
	kill(-lab->forwarder, SIGKILL);
	lab->forwarder = 0;
	forwarder_log(lab, lab->forwarder_path, log, sizeof(log));
	log_tail_lines(log, 5, tail, sizeof(tail));
	snprintf(err, errlen, "forwarder %s exited at start (%s); %s%s", paths[lab->forwarder_path].name,
		 exit_how(st, how), tail[0] ? "the last lines of its output:" : "it wrote nothing", tail);
	return -1;
}

/*
 * SIGTERM to the forwarder's process group, SIGKILL after STOP_TIMEOUT_S,
 * and then to whatever it left in r (a daemon that left the group). A
 * forwarder may exit as it likes on SIGTERM: only what is left running is
 * an error.
 */
static int forwarder_stop(struct veth_lab *lab, char *err, size_t errlen)
{
	double end;
	int st, left;

	if (lab->forwarder <= 0)
		return 0;
	end = rxp_clock_seconds() + STOP_TIMEOUT_S;
	kill(-lab->forwarder, SIGTERM);
	st = wait_for(lab->forwarder, STOP_TIMEOUT_S);
	/* sh may have forked COMMAND: the rest of the group gets the same time to finish */
	while (kill(-lab->forwarder, 0) == 0 && rxp_clock_seconds() < end)
		usleep(10000);
	if (st == -1 || kill(-lab->forwarder, 0) == 0)
		fprintf(stderr, "%srxpath bench veth: forwarder %s did not exit within %.0f s of "
			"SIGTERM; killed\n", isatty(STDERR_FILENO) ? "\n" : "",
			paths[lab->forwarder_path].name, STOP_TIMEOUT_S);
	/* the group's stragglers, or the forwarder itself */
	kill(-lab->forwarder, SIGKILL);
	if (st == -1)
		waitpid(lab->forwarder, NULL, 0);
	lab->forwarder = 0;
	end = rxp_clock_seconds() + 2;
	while ((left = ns_kill_all(lab, NS_R)) && rxp_clock_seconds() < end)
		usleep(20000);
	if (left) {
		if (err)
			snprintf(err, errlen, "forwarder %s: %d process%s still in %s after SIGKILL",
				 paths[lab->forwarder_path].name, left, left == 1 ? "" : "es",
				 lab->ns[NS_R]);
		return -1;
	}
	return 0;
}

/*
 * For a forwarder's turn, h1's and h2's gateways pinned to r0's and r1's
 * MACs: a forwarder need not answer ARP. A plain `neigh flush` leaves
 * permanent entries: they are flushed by name after.
 */
static int static_neighbours(struct veth_lab *lab, bool on, char *err, size_t errlen)
{
	const char *h1 = lab->ns[NS_H1], *h2 = lab->ns[NS_H2];
	int bad = 0;

	if (on) {
		lab->static_neigh = true;
		return sh(NULL, 0, err, errlen, "ip -n %s neigh replace 10.0.1.1 lladdr %s dev eth0 "
			  "nud permanent", h1, lab->mac[MAC_R0]) ||
		       sh(NULL, 0, err, errlen, "ip -n %s neigh replace 10.0.2.1 lladdr %s dev eth0 "
			  "nud permanent", h2, lab->mac[MAC_R1]) ? -1 : 0;
	}
	if (!lab->static_neigh)
		return 0;
	lab->static_neigh = false;
	bad |= sh(NULL, 0, err, errlen, "ip -n %s neigh flush dev eth0 nud permanent", h1);
	bad |= sh(NULL, 0, err, errlen, "ip -n %s neigh flush dev eth0 nud permanent", h2);
	return bad ? -1 : 0;
}

static int kernel_forwarding(struct veth_lab *lab, bool on, bool nat, char *err, size_t errlen)
{
	const char *r = lab->ns[NS_R];
	int bad = 0;

	if (on) {
		lab->kernel_on = true;
		return sh(NULL, 0, err, errlen, "ip -n %s addr add 10.0.1.1/24 dev r0", r) ||
		       sh(NULL, 0, err, errlen, "ip -n %s addr add 10.0.2.1/24 dev r1", r) ||
		       (nat && kernel_nat(lab, true, err, errlen)) ||
		       sh(NULL, 0, err, errlen, "ip netns exec %s sysctl -qw net.ipv4.ip_forward=1", r) ?
		       -1 : 0;
	}
	/*
	 * r0/r1 go back to rxpath: the kernel in r must not answer ARP on them.
	 * Without its table the kernel's NAT and conntrack hooks in r are gone
	 * (the connection left in the table times out unseen).
	 */
	lab->kernel_on = false;
	/* every step, whichever failed: a half-made turn is undone too */
	bad |= sh(NULL, 0, err, errlen, "ip netns exec %s sysctl -qw net.ipv4.ip_forward=0", r);
	if (nat)
		bad |= kernel_nat(lab, false, err, errlen);
	bad |= sh(NULL, 0, err, errlen, "ip -n %s addr flush dev r0", r);
	bad |= sh(NULL, 0, err, errlen, "ip -n %s addr flush dev r1", r);
	bad |= sh(NULL, 0, err, errlen, "ip -n %s neigh flush all", r);
	return bad ? -1 : 0;
}

/*
 * r as the next path expects it after a forwarder's turn, whatever the
 * forwarder did: no addresses, no forwarding, no XDP program, no promiscuous
 * mode, r0/r1 up.
 */
static int router_reset(struct veth_lab *lab, char *err, size_t errlen)
{
	const char *r = lab->ns[NS_R];
	int bad = kernel_forwarding(lab, false, false, err, errlen);

	for (int i = 0; i < 2; i++) {
		const char *dev = i ? "r1" : "r0";

		bad |= sh(NULL, 0, err, errlen, "ip -n %s link set %s xdp off", r, dev);
		bad |= sh(NULL, 0, err, errlen, "ip -n %s link set %s promisc off up", r, dev);
	}
	return bad ? -1 : 0;
}

/*
 * h2's default route (via r, 10.0.2.1) off for a NAT path's turn, and back
 * on after it. Without it h2 answers only its own subnet: h1's warm-up ping
 * comes back only if r masquerades it to 10.0.2.1.
 */
static int h2_route(struct veth_lab *lab, bool on, char *err, size_t errlen)
{
	if (on == !lab->h2_no_route)
		return 0;
	if (sh(NULL, 0, err, errlen, "ip -n %s route %s default via 10.0.2.1", lab->ns[NS_H2],
	       on ? "add" : "del"))
		return -1;
	lab->h2_no_route = !on;
	return 0;
}

/*
 * h1 -> h2 answered once: the forwarder is up and ARP is resolved on every
 * hop, both ways, before the blast.
 */
static int warmup_ping(struct veth_lab *lab, enum veth_path p, const struct veth_opts *o, char *err,
		       size_t errlen)
{
	double timeout = paths[p].command ? o->fwd_timeout : START_TIMEOUT_S;
	double end = rxp_clock_seconds() + timeout;
	char log[160], tail[1200];

	while (!stop_signal && rxp_clock_seconds() < end) {
		if (rxpath_alive(lab, err, errlen) || forwarder_alive(lab, err, errlen))
			return -1;
		if (!sh(NULL, 0, err, errlen, "ip netns exec %s ping -n -q -c 1 -W 1 10.0.2.2",
			lab->ns[NS_H1]))
			return 0;
	}
	if (stop_signal)
		return -1;
	if (!paths[p].command) {
		snprintf(err, errlen, "%s: h1 cannot ping h2 (10.0.2.2) through r within %.0f s%s",
			 paths[p].name, timeout,
			 paths[p].nat ? " (h2 has no route back to h1: it answers only if r "
					"masquerades to 10.0.2.1)" : "");
		return -1;
	}
	forwarder_log(lab, p, log, sizeof(log));
	log_tail_lines(log, 5, tail, sizeof(tail));
	snprintf(err, errlen, "forwarder %s did not pass h1's ping to h2 (10.0.2.2) within %.0f s: "
		 "h1 sends to r0's MAC and h2 to r1's, so it must forward between r0 and r1 and "
		 "write h1's and h2's MACs ({h1mac} {h2mac}; testpmd: --forward-mode=mac "
		 "--eth-peer); give a slow start more time with --forwarder-timeout; %s%s",
		 paths[p].name, timeout, tail[0] ? "the last lines of its output:" : "it wrote nothing",
		 tail);
	return -1;
}

/* One window: packets/s delivered to h2 and sent by h1, with the sender running throughout. */
static int measure(struct veth_lab *lab, enum veth_path p, const struct veth_opts *o, double *pps,
		   double *sent, char *err, size_t errlen)
{
	uint64_t rx0, rx1, tx0, tx1;
	double trx0, trx1, ttx0, ttx1;
	int ret = -1;

	if (h2_route(lab, !paths[p].nat, err, errlen))
		goto out;
	if (paths[p].command) {
		if (forwarder_start(lab, p, err, errlen))
			goto out;
	} else if (!paths[p].driver) {
		if (kernel_forwarding(lab, true, paths[p].nat, err, errlen))
			goto out;
	} else if (rxpath_start(lab, p, err, errlen)) {
		goto out;
	}
	/* the hosts learn the forwarder afresh: the paths' MACs differ */
	if (sh(NULL, 0, err, errlen, "ip -n %s neigh flush all", lab->ns[NS_H1]) ||
	    sh(NULL, 0, err, errlen, "ip -n %s neigh flush all", lab->ns[NS_H2]) ||
	    (paths[p].command && static_neighbours(lab, true, err, errlen)) ||
	    warmup_ping(lab, p, o, err, errlen) ||
	    sender_start(lab, p, err, errlen) ||
	    nap(WARMUP_S) || sender_alive(lab, err, errlen) ||
	    read_counter(lab, NS_H1, "eth0", "tx_packets", &tx0, &ttx0, err, errlen) ||
	    read_counter(lab, NS_H2, "eth0", "rx_packets", &rx0, &trx0, err, errlen) ||
	    nap(o->duration) ||
	    read_counter(lab, NS_H2, "eth0", "rx_packets", &rx1, &trx1, err, errlen) ||
	    read_counter(lab, NS_H1, "eth0", "tx_packets", &tx1, &ttx1, err, errlen) ||
	    sender_alive(lab, err, errlen))
		goto out;
	*pps = (double)(rx1 - rx0) / (trx1 - trx0);
	*sent = (double)(tx1 - tx0) / (ttx1 - ttx0);
	ret = 0;
out:
	sender_stop(lab);
	if (paths[p].command) {
		/* every step, whichever failed */
		if (forwarder_stop(lab, ret ? NULL : err, ret ? 0 : errlen))
			ret = -1;
		if (static_neighbours(lab, false, ret ? NULL : err, ret ? 0 : errlen))
			ret = -1;
		if (router_reset(lab, ret ? NULL : err, ret ? 0 : errlen))
			ret = -1;
	} else if (!paths[p].driver) {
		if (kernel_forwarding(lab, false, paths[p].nat, ret ? NULL : err, ret ? 0 : errlen))
			ret = -1;
	} else if (rxpath_stop(lab, ret ? NULL : err, ret ? 0 : errlen)) {
		ret = -1;
	}
	if (h2_route(lab, true, ret ? NULL : err, ret ? 0 : errlen))
		ret = -1;
	return ret;
}

/* Stops whatever the lab started and deletes the namespaces, which deletes the veths. */
static void lab_down(struct veth_lab *lab)
{
	char scratch[256], path[160];

	sender_stop(lab);
	rxpath_stop(lab, scratch, sizeof(scratch));
	forwarder_stop(lab, scratch, sizeof(scratch));
	for (int i = 0; i < NS_MAX; i++) {
		if (!lab->ns_made[i])
			continue;
		/* anything we started and missed would keep the namespace alive */
		ns_kill_all(lab, i);
		sh(NULL, 0, scratch, sizeof(scratch), "ip netns del %s", lab->ns[i]);
		lab->ns_made[i] = false;
	}
	if (lab->dir[0]) {
		static const char *const files[] = { "sender.log", "rxpath.out", "rxpath.err",
						     "kernel-nat.nft" };

		for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", lab->dir, files[i]);
			unlink(path);
		}
		for (int p = 0; p < N_PATHS; p++) {
			snprintf(path, sizeof(path), "%s/rxpath-%s.conf", lab->dir, paths[p].name);
			unlink(path);
		}
		for (int p = N_PATHS; p < n_paths; p++) {
			forwarder_log(lab, (enum veth_path)p, path, sizeof(path));
			unlink(path);
		}
		rmdir(lab->dir);
		lab->dir[0] = '\0';
	}
}

/*
 * The sender takes the first CPU we may use and rxpath the next one; the
 * kernel path does its forwarding in softirq on the sending CPU, since veth
 * delivers there.
 */
static void pick_cpus(struct veth_lab *lab)
{
	cpu_set_t set;

	lab->sender_cpu = -1;
	lab->rxpath_cpu = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (lab->sender_cpu < 0) {
			lab->sender_cpu = c;
		} else if (in_path("taskset")) {
			lab->rxpath_cpu = c;
			return;
		}
	}
}

/* @p's median over its reference's, 0 when that is 0. */
static double ratio_of(const double med[MAX_PATHS], enum veth_path p, enum veth_path ref)
{
	return med[ref] > 0 ? med[p] / med[ref] : 0;
}

/*
 * The NAT paths against their plain ones, measured in the same run: does
 * rxpath keep, with NAT, the ratio it has to the kernel without? To @out.
 */
static void print_nat_comparison(FILE *out, const struct veth_opts *o, const double med[MAX_PATHS],
				 const double spread[MAX_PATHS])
{
	static const enum veth_path nat_paths[] = { PATH_AFXDP_NAT, PATH_AFPACKET_NAT };
	bool header = false;

	for (unsigned i = 0; i < sizeof(nat_paths) / sizeof(nat_paths[0]); i++) {
		enum veth_path n = nat_paths[i], plain = paths[n].plain;
		double rn = ratio_of(med, n, paths[n].ref), rp = ratio_of(med, plain, paths[plain].ref);

		if (!o->path_on[n] || !o->path_on[plain])
			continue;
		if (!header)
			fprintf(out, "\nNAT against no NAT, this run's medians:\n");
		header = true;
		fprintf(out, "%s/%s %.2fx vs %s/%s %.2fx: %s the ratio without NAT (%.2f of it; "
			"spreads %s +-%.0f%%, %s +-%.0f%%)\n",
			paths[n].name, paths[paths[n].ref].name, rn, paths[plain].name,
			paths[paths[plain].ref].name, rp, rp > 0 && rn >= rp ? "keeps" : "falls short of",
			rp > 0 ? rn / rp : 0, paths[n].name, spread[n], paths[plain].name, spread[plain]);
	}
	if (header && o->path_on[PATH_KERNEL])
		fprintf(out, "kernel-nat/kernel %.2fx: what masquerade and conntrack leave of the kernel's forwarding\n",
			ratio_of(med, PATH_KERNEL_NAT, PATH_KERNEL));
}

static void print_results(const struct veth_lab *lab, const struct veth_opts *o,
			  double samples[MAX_PATHS][REPS_MAX], double sent[MAX_PATHS][REPS_MAX])
{
	double med[MAX_PATHS] = { 0 }, lo[MAX_PATHS] = { 0 }, hi[MAX_PATHS] = { 0 };
	double smed[MAX_PATHS] = { 0 }, spread[MAX_PATHS] = { 0 }, slo, shi;
	bool any_nat = false, first = true;

	for (int p = 0; p < n_paths; p++) {
		if (!o->path_on[p])
			continue;
		summarize_samples(samples[p], o->reps, &med[p], &lo[p], &hi[p]);
		summarize_samples(sent[p], o->reps, &smed[p], &slo, &shi);
		/* (max - min) / 2 as a percentage of the median, as the other benches */
		spread[p] = med[p] > 0 ? (hi[p] - lo[p]) / 2 / med[p] * 100 : 0;
		any_nat |= paths[p].nat;
	}
	if (!o->json) {
		printf("rxpath bench veth: h1 -> r -> h2 over veth, %u-byte UDP frames (%d flow%s) from "
		       "h1\n"
		       "pps = frames delivered to h2's eth0 per second (rx_packets); sent = frames h1's "
		       "eth0 handed to r\n"
		       "%u repetitions x %.2f s per path, interleaved; medians with min..max\n"
		       "h2 %s\n",
		       FRAME_SIZE, FLOWS, FLOWS == 1 ? "" : "s", o->reps, o->duration,
		       o->sink_stack ? "takes the flood up its IP stack (--sink stack)"
				     : "drops the flood at XDP (--sink xdp): its stack is not the forwarder's cost");
		if (any_nat)
			printf("NAT paths: r masquerades out of r1 to 10.0.2.1 (kernel-nat: nftables and "
			       "its conntrack;\n"
			       "rxpath: nat add masquerade out p1); %d flow%s, so %d connection%s; h2 has "
			       "no route back to h1\n"
			       "in their turns; their ratios are to kernel-nat\n", FLOWS,
			       FLOWS == 1 ? "" : "s", FLOWS, FLOWS == 1 ? "" : "s");
		if (lab->rxpath_cpu >= 0)
			printf("CPUs: sender on CPU %d, rxpath on CPU %d; the kernel forwards "
			       "in softirq on the sender's CPU\n\n", lab->sender_cpu, lab->rxpath_cpu);
		else if (lab->sender_cpu >= 0)
			printf("CPUs: sender on CPU %d; rxpath not pinned (one CPU, or no taskset)\n\n",
			       lab->sender_cpu);
		else
			printf("CPUs: not pinned: sender and forwarder share the machine\n\n");
		for (int p = N_PATHS; p < n_paths; p++)
			printf("forwarder %s, under sh in r: %s\n%s", paths[p].name, paths[p].command,
			       p == n_paths - 1 ? "\n" : "");
		printf("%-15s %12s %12s %12s %8s %-11s %12s\n", "path", "pps", "min", "max", "ratio",
		       "to", "sent pps");
		for (int p = 0; p < n_paths; p++)
			if (o->path_on[p])
				printf("%-15s %12.0f %12.0f %12.0f %7.2fx %-11s %12.0f\n", paths[p].name,
				       med[p], lo[p], hi[p], ratio_of(med, (enum veth_path)p, paths[p].ref),
				       paths[paths[p].ref].name, smed[p]);
		print_nat_comparison(stdout, o, med, spread);
		return;
	}
	printf("[");
	for (int p = 0; p < n_paths; p++) {
		enum veth_path plain = paths[p].plain;

		if (!o->path_on[p])
			continue;
		printf("%s\n  {\"path\":\"%s\",\"frame_size\":%u,\"pps\":%.0f,\"pps_min\":%.0f,"
		       "\"pps_max\":%.0f,\"spread_pct\":%.2f,\"ratio_to_kernel\":%.4f,\"ratio_to\":\"%s\","
		       "\"nat\":%s,\"flows\":%d,"
		       "\"sent_pps\":%.0f,\"reps\":%u,\"duration\":%.2f,\"sender_cpu\":%d,"
		       "\"rxpath_cpu\":%d,\"sink\":\"%s\"",
		       first ? "" : ",", paths[p].name, FRAME_SIZE, med[p], lo[p], hi[p],
		       spread[p], ratio_of(med, (enum veth_path)p, paths[p].ref), paths[paths[p].ref].name,
		       paths[p].nat ? "true" : "false", FLOWS, smed[p], o->reps,
		       o->duration, lab->sender_cpu, lab->rxpath_cpu,
		       o->sink_stack ? "stack" : "xdp");
		/* a NAT path's ratio against its plain path's, both measured here */
		if (paths[p].nat && o->path_on[plain])
			printf(",\"plain_path\":\"%s\",\"plain_ratio_to_kernel\":%.4f", paths[plain].name,
			       ratio_of(med, plain, paths[plain].ref));
		printf(",\"forwarder\":%s", paths[p].command ? "true" : "false");
		if (paths[p].command) {
			struct rxp_sbuf cmd = { 0 };

			rxp_sbuf_json_str(&cmd, paths[p].command);
			printf(",\"command\":%s", cmd.data ? cmd.data : "null");
			rxp_sbuf_free(&cmd);
		}
		printf("}");
		first = false;
	}
	printf("\n]\n");
	/* stdout is the JSON alone */
	print_nat_comparison(stderr, o, med, spread);
}

/*
 * --paths: the named paths (all when @list is NULL), and the path each
 * one's ratio is to; the forwarders always, and the kernel with them. Says
 * what is wrong and returns -1 on a name it does not know.
 */
static int parse_paths(const char *list, bool on[MAX_PATHS])
{
	char buf[512], *save, *tok;

	for (int p = 0; p < n_paths; p++)
		on[p] = !list || paths[p].command;
	if (n_paths > N_PATHS)
		on[PATH_KERNEL] = true;
	if (!list)
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int p = 0;

		while (p < n_paths && strcmp(tok, paths[p].name))
			p++;
		if (p == n_paths) {
			fprintf(stderr, "rxpath bench veth: --paths: '%s': no such path (", tok);
			for (p = 0; p < n_paths; p++)
				fprintf(stderr, "%s%s", p ? ", " : "", paths[p].name);
			fprintf(stderr, ")\n");
			return -1;
		}
		on[p] = true;
		on[paths[p].ref] = true;
	}
	for (int p = 0; p < n_paths; p++)
		if (on[p])
			return 0;
	fprintf(stderr, "rxpath bench veth: --paths: expected path names separated by commas\n");
	return -1;
}

/*
 * --forwarder NAME=COMMAND: one more path, after the built-in ones. Says
 * what is wrong and returns -1 on a name that is not new or not a name, or
 * on a {word} in COMMAND the bench does not substitute.
 */
static int add_forwarder(const char *arg)
{
	const char *eq = strchr(arg, '='), *cmd = eq ? eq + 1 : NULL;
	size_t len = eq ? (size_t)(eq - arg) : 0;
	char scratch[4096], err[1024];
	int f = n_paths - N_PATHS;

	if (!len || !*cmd) {
		fprintf(stderr, "rxpath bench veth: --forwarder %s: expected NAME='COMMAND' (e.g. "
			"--forwarder testpmd='dpdk-testpmd ...'; see 'rxpath bench veth --help')\n", arg);
		return -1;
	}
	if (len > FWD_NAME_MAX || strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789-_") < len) {
		fprintf(stderr, "rxpath bench veth: --forwarder %.*s: a forwarder's name is 1 to %d "
			"letters, digits, '-' and '_'\n", (int)len, arg, FWD_NAME_MAX);
		return -1;
	}
	for (int p = 0; p < n_paths; p++) {
		if (strlen(paths[p].name) != len || strncmp(paths[p].name, arg, len))
			continue;
		if (p < N_PATHS)
			fprintf(stderr, "rxpath bench veth: --forwarder %s: '%s' is a built-in path; give "
				"the forwarder a name of its own\n", paths[p].name, paths[p].name);
		else
			fprintf(stderr, "rxpath bench veth: --forwarder %s: the name is given twice; give "
				"each forwarder a name of its own\n", paths[p].name);
		return -1;
	}
	if (f == FWD_MAX) {
		fprintf(stderr, "rxpath bench veth: --forwarder %.*s: more than %d forwarders; leave "
			"some out\n", (int)len, arg, FWD_MAX);
		return -1;
	}
	memcpy(fwd_names[f], arg, len);
	fwd_names[f][len] = '\0';
	if (expand(fwd_names[f], cmd, NULL, scratch, sizeof(scratch), err, sizeof(err))) {
		fprintf(stderr, "rxpath bench veth: %s\n", err);
		return -1;
	}
	paths[n_paths] = (struct veth_path_def){
		.name = fwd_names[f], .mac = { NULL, NULL }, .ref = PATH_KERNEL,
		.plain = (enum veth_path)n_paths, .command = cmd,
	};
	n_paths++;
	return 0;
}

int cmd_bench_veth(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "reps", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "sink", required_argument, NULL, 's' },
		{ "paths", required_argument, NULL, 'p' },
		{ "forwarder", required_argument, NULL, 'f' },
		{ "forwarder-timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static double samples[MAX_PATHS][REPS_MAX], sent[MAX_PATHS][REPS_MAX];
	struct veth_opts o = { .duration = 3, .reps = 5, .fwd_timeout = FWD_TIMEOUT_S };
	struct veth_lab lab = { 0 };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	bool tty = isatty(STDERR_FILENO);
	enum veth_path order[MAX_PATHS];
	unsigned done = 0, n_order = 0;
	const char *only = NULL;	/* --paths */
	char err[2048] = "";
	ssize_t len;
	uint64_t v;
	int opt, ret = 1;

	n_paths = N_PATHS;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (parse_seconds(optarg, 0.1, 60, &o.duration)) {
				fprintf(stderr, "rxpath bench veth: --duration %s: expected seconds from 0.1 to 60\n", optarg);
				return 2;
			}
			break;
		case 'r':
			if (rxp_parse_u64(optarg, 1, REPS_MAX, &v)) {
				fprintf(stderr, "rxpath bench veth: --reps %s: expected 1 to %d\n", optarg, REPS_MAX);
				return 2;
			}
			o.reps = (unsigned)v;
			break;
		case 'j':
			o.json = true;
			break;
		case 's':
			if (strcmp(optarg, "xdp") && strcmp(optarg, "stack")) {
				fprintf(stderr, "rxpath bench veth: --sink %s: expected xdp or stack\n", optarg);
				return 2;
			}
			o.sink_stack = !strcmp(optarg, "stack");
			break;
		case 'p':
			only = optarg;
			break;
		case 'f':
			if (add_forwarder(optarg))
				return 2;
			break;
		case 't':
			if (parse_seconds(optarg, 1, 600, &o.fwd_timeout)) {
				fprintf(stderr, "rxpath bench veth: --forwarder-timeout %s: expected seconds "
					"from 1 to 600\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "rxpath bench veth: see 'rxpath bench veth --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath bench veth: unexpected argument '%s'; see 'rxpath bench veth --help'\n",
			argv[optind]);
		return 2;
	}
	if (parse_paths(only, o.path_on))
		return 2;
	for (int p = 0; p < n_paths; p++)
		if (o.path_on[p])
			order[n_order++] = (enum veth_path)p;
	if (geteuid() != 0) {
		fprintf(stderr, "rxpath bench veth: needs root (network namespaces and veth); run with sudo\n");
		return 1;
	}
	if (!in_path("ip") || !in_path("ethtool")) {
		fprintf(stderr, "rxpath bench veth: needs 'ip' and 'ethtool' to build the lab; install "
			"iproute2 and ethtool (apt-get install iproute2 ethtool)\n");
		return 1;
	}
	if (o.path_on[PATH_KERNEL_NAT] && !in_path("nft")) {
		fprintf(stderr, "rxpath bench veth: the kernel-nat path (the reference of the NAT paths) "
			"needs nft to load the kernel's masquerade; install nftables (apt-get install "
			"nftables), or leave the NAT paths out: --paths kernel,afxdp,afxdp-coalesce,afpacket\n");
		return 1;
	}
	len = readlink("/proc/self/exe", lab.exe, sizeof(lab.exe) - 1);
	if (len <= 0) {
		fprintf(stderr, "rxpath bench veth: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	lab.exe[len] = '\0';
	for (int i = 0; i < NS_MAX; i++)
		snprintf(lab.ns[i], sizeof(lab.ns[i]), "rxp-%d-%s", (int)getpid(),
			 i == NS_H1 ? "h1" : i == NS_R ? "r" : "h2");
	pick_cpus(&lab);
	/* {cpu} with nothing to give fails here, not after the lab is built */
	for (int p = N_PATHS; p < n_paths; p++) {
		char scratch[4096];

		if (expand(paths[p].name, paths[p].command, &lab, scratch, sizeof(scratch), err,
			   sizeof(err))) {
			fprintf(stderr, "rxpath bench veth: %s\n", err);
			return 1;
		}
	}

	/* no SA_RESTART: a signal cuts sleeps and waits short, then the lab comes down */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	snprintf(lab.dir, sizeof(lab.dir), "/tmp/rxp-%d-veth.XXXXXX", (int)getpid());
	if (!mkdtemp(lab.dir)) {
		snprintf(err, sizeof(err), "cannot make a directory in /tmp: %s", strerror(errno));
		lab.dir[0] = '\0';
		goto out;
	}
	fprintf(stderr, "%sbench veth: building the lab (%s, %s, %s)%s", tty ? "\r" : "",
		lab.ns[NS_H1], lab.ns[NS_R], lab.ns[NS_H2], tty ? "" : "\n");
	if (lab_up(&lab, &o, err, sizeof(err))) {
		if (!stop_signal)
			fprintf(stderr, "%srxpath bench veth: cannot build the lab: %s\n", tty ? "\n" : "", err);
		err[0] = '\0';
		goto out;
	}
	for (unsigned rep = 0; rep < o.reps; rep++) {
		for (unsigned k = 0; k < n_order; k++) {
			/* rotate the order: no path always runs first or last */
			enum veth_path p = order[(k + rep) % n_order];

			if (tty)
				fprintf(stderr, "\r%-76s\rbench veth: %3u/%u  %-14s repetition %u/%u ", "",
					++done, n_order * o.reps, paths[p].name, rep + 1, o.reps);
			if (measure(&lab, p, &o, &samples[p][rep], &sent[p][rep], err, sizeof(err)))
				goto out;
		}
		if (!tty) {
			fprintf(stderr, "bench veth: repetition %u/%u done:", rep + 1, o.reps);
			for (unsigned k = 0; k < n_order; k++)
				fprintf(stderr, "%s %s %.0f", k ? "," : "", paths[order[k]].name,
					samples[order[k]][rep]);
			fprintf(stderr, " pps\n");
		}
	}
	if (tty)
		fprintf(stderr, "\r%-76s\r", "");
	ret = 0;
out:
	lab_down(&lab);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (stop_signal) {
		fprintf(stderr, "%srxpath bench veth: stopped by signal %d; lab removed\n",
			tty ? "\n" : "", (int)stop_signal);
		return 128 + stop_signal;
	}
	if (ret) {
		if (err[0])
			fprintf(stderr, "%srxpath bench veth: %s\n", tty ? "\n" : "", err);
		return 1;
	}
	print_results(&lab, &o, samples, sent);
	return 0;
}
