/* SPDX-License-Identifier: MIT */
/*
 * rxpath doctor: checks what AF_XDP and AF_PACKET need here, and says for
 * each problem the command that fixes it. Exit status 1 when something
 * needed is missing, 0 otherwise (warnings included).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "doctor.h"
#include "port/netdev.h"
#include "port/xdp_features.h"

#define BPF_FS_MAGIC_NUMBER 0xcafe4a11
#define CAP_NET_ADMIN_BIT 12
#define CAP_NET_RAW_BIT 13
#define CAP_IPC_LOCK_BIT 14
#define CAP_SYS_ADMIN_BIT 21
#define CAP_BPF_BIT 39

struct verdicts {
	unsigned ok, warn, fail;
};

static void say(struct verdicts *v, const char *level, const char *what, const char *fix)
{
	if (!strcmp(level, "ok"))
		v->ok++;
	else if (!strcmp(level, "warn"))
		v->warn++;
	else
		v->fail++;
	printf("%-5s %s\n", level, what);
	if (fix && *fix)
		printf("      fix: %s\n", fix);
}

/* Kernel releases that brought what the AF_XDP driver uses. */
static void check_kernel(struct verdicts *v)
{
	static const struct { int major, minor; const char *feature; } need[] = {
		{ 4, 18, "AF_XDP sockets" },
		{ 5, 4, "need_wakeup (idle queues cost no system calls)" },
		{ 5, 10, "one UMEM shared by the sockets of several devices (XDP_SHARED_UMEM)" },
		{ 5, 11, "preferred busy polling (SO_PREFER_BUSY_POLL)" },
		{ 6, 6, "multi-buffer AF_XDP (frames larger than a buffer; not needed: a buffer holds a whole --max-frame)" },
	};
	struct utsname u;
	int major = 0, minor = 0;
	char line[256];

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2) {
		say(v, "warn", "kernel version: unknown", NULL);
		return;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		bool has = major > need[i].major || (major == need[i].major && minor >= need[i].minor);

		snprintf(line, sizeof(line), "kernel %s: %s (since %d.%d)", u.release,
			 need[i].feature, need[i].major, need[i].minor);
		say(v, has ? "ok" : (i == 0 ? "fail" : "warn"), line,
		    has ? NULL : "a newer kernel; AF_PACKET (afpacket:dev=IFACE) works on any");
	}
}

static uint64_t effective_caps(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t caps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %lx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static void check_caps(struct verdicts *v)
{
	uint64_t caps = effective_caps();
	bool bpf = caps & (1ull << CAP_BPF_BIT) || caps & (1ull << CAP_SYS_ADMIN_BIT);
	const char *fix = "run as root, or: sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep build/rxpath";

	say(v, caps & (1ull << CAP_NET_RAW_BIT) ? "ok" : "fail",
	    "CAP_NET_RAW (AF_PACKET and AF_XDP sockets)", caps & (1ull << CAP_NET_RAW_BIT) ? NULL : fix);
	say(v, caps & (1ull << CAP_NET_ADMIN_BIT) ? "ok" : "fail",
	    "CAP_NET_ADMIN (attach XDP, promiscuous mode)",
	    caps & (1ull << CAP_NET_ADMIN_BIT) ? NULL : fix);
	say(v, bpf ? "ok" : "fail", "CAP_BPF or CAP_SYS_ADMIN (load the XSK redirect program)",
	    bpf ? NULL : fix);
	say(v, caps & (1ull << CAP_IPC_LOCK_BIT) ? "ok" : "warn",
	    "CAP_IPC_LOCK (lock the UMEM whatever the memlock limit)",
	    caps & (1ull << CAP_IPC_LOCK_BIT) ? NULL : fix);
}

static void check_memlock(struct verdicts *v)
{
	struct rlimit rl;
	char line[160];

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		say(v, "warn", "memlock limit: unknown", NULL);
		return;
	}
	if (rl.rlim_cur == RLIM_INFINITY) {
		say(v, "ok", "memlock limit: unlimited", NULL);
		return;
	}
	snprintf(line, sizeof(line), "memlock limit: %llu KiB (the UMEM is locked memory)",
		 (unsigned long long)rl.rlim_cur / 1024);
	/* kernels since 5.11 charge BPF and UMEM to the cgroup, not this limit */
	say(v, rl.rlim_cur >= (64ull << 20) ? "ok" : "warn", line,
	    rl.rlim_cur >= (64ull << 20) ? NULL : "ulimit -l unlimited (or LimitMEMLOCK=infinity in a systemd unit)");
}

static void check_bpffs(struct verdicts *v)
{
	struct statfs s;
	bool ok = !statfs("/sys/fs/bpf", &s) && (unsigned long)s.f_type == BPF_FS_MAGIC_NUMBER;

	say(v, ok ? "ok" : "warn", ok ? "bpffs mounted at /sys/fs/bpf (libxdp pins its dispatcher there)" :
	    "bpffs not mounted at /sys/fs/bpf (libxdp pins its dispatcher there; without it, one XDP program per interface)",
	    ok ? NULL : "mount -t bpf bpf /sys/fs/bpf");
}

/* Drivers known to take native XDP, and those with AF_XDP zero-copy, for kernels that cannot say. */
static const char *const native_xdp[] = { "veth", "virtio_net", "ixgbe", "i40e", "ice", "igb", "igc",
					  "mlx4_en", "mlx5_core", "bnxt_en", "ena", "stmmac", "tun",
					  "nfp", "qede", "thunderx", "sfc", "gve", "idpf", NULL };
static const char *const zerocopy[] = { "ixgbe", "i40e", "ice", "igc", "igb", "mlx5_core",
					"stmmac", "gve", "idpf", "virtio_net", NULL };

static bool listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

/*
 * The name of veth @ifname's peer into @peer, when it is in this network
 * namespace: the interface its iflink names, if that one's iflink names
 * @ifname back (an index in another namespace can belong to anything here).
 */
static bool veth_peer_here(const char *ifname, unsigned ifindex, char peer[IF_NAMESIZE])
{
	uint32_t link = 0, back = 0;

	return !rxp_netdev_sysfs_u32(ifname, "iflink", &link) && link && link != ifindex &&
	       !rxp_netdev_ifname(link, peer) && !rxp_netdev_sysfs_u32(peer, "iflink", &back) &&
	       back == ifindex;
}

/*
 * veth hands its peer's GSO super-packets and partial checksums to the
 * receiving end, which XDP cannot take: what matters is the peer's
 * transmit offloads, read here when the peer is in this namespace.
 */
static void check_veth_peer(struct verdicts *v, int fd, const char *ifname, unsigned ifindex)
{
	static const struct { uint32_t cmd; const char *name, *flag; } offl[] = {
		{ ETHTOOL_GTXCSUM, "TX checksum offload", "tx" },
		{ ETHTOOL_GTSO, "TSO", "tso" },
		{ ETHTOOL_GGSO, "GSO", "gso" },
	};
	char peer[IF_NAMESIZE], line[256], fix[256];
	uint32_t val = 0;
	bool on = false;

	if (!veth_peer_here(ifname, ifindex, peer)) {
		snprintf(line, sizeof(line), "interface %s: its veth peer is in another network namespace; "
			 "its TX checksum offload, TSO and GSO must be off for XDP to take what it sends", ifname);
		say(v, "warn", line, "in the peer's namespace: ethtool -K PEER tx off tso off gso off");
		return;
	}
	for (size_t i = 0; i < sizeof(offl) / sizeof(offl[0]); i++) {
		if (rxp_netdev_ethtool_value(fd, peer, offl[i].cmd, &val) || !val)
			continue;
		on = true;
		snprintf(line, sizeof(line), "interface %s: its veth peer %s has %s on; it then sends packets XDP cannot take",
			 ifname, peer, offl[i].name);
		snprintf(fix, sizeof(fix), "ethtool -K %s %s off", peer, offl[i].flag);
		say(v, "warn", line, fix);
	}
	if (!on) {
		snprintf(line, sizeof(line), "interface %s: its veth peer %s sends no GSO packets or partial checksums",
			 ifname, peer);
		say(v, "ok", line, NULL);
	}
}

static void check_iface(struct verdicts *v, const char *ifname)
{
	char line[256], fix[256], driver[32];
	int ret = rxp_netdev_ifindex(ifname);
	unsigned ifindex = ret > 0 ? (unsigned)ret : 0;
	uint32_t prog_id = 0, flags = 0;
	uint8_t attach_mode = 0;
	uint64_t features = 0;
	bool native, zc;
	const char *source;
	int fd;

	if (!ifindex) {
		snprintf(line, sizeof(line), "interface %s: does not exist", ifname);
		say(v, "fail", line, "ip link show lists the interfaces (in this network namespace)");
		return;
	}
	fd = rxp_netdev_socket();
	if (fd < 0) {
		say(v, "warn", "cannot ask the interface (socket failed)", NULL);
		return;
	}
	if (rxp_netdev_driver(fd, ifname, driver, sizeof(driver)))
		snprintf(driver, sizeof(driver), "unknown");
	snprintf(line, sizeof(line), "interface %s: driver %s, %u RX and %u TX queues", ifname,
		 driver, rxp_netdev_sysfs_queues(ifname, "rx"), rxp_netdev_sysfs_queues(ifname, "tx"));
	say(v, "ok", line, NULL);

	/* what the driver declares (Linux 6.3), else what drivers are known to do */
	if (!rxp_xdp_features(ifindex, &features)) {
		native = (features & RXP_XDP_ACT_BASIC) && (features & RXP_XDP_ACT_REDIRECT);
		zc = features & RXP_XDP_ACT_XSK_ZEROCOPY;
		source = "as the driver declares it";
	} else {
		native = listed(native_xdp, driver);
		zc = listed(zerocopy, driver);
		source = "known of the driver (this kernel cannot say)";
	}
	if (native) {
		snprintf(line, sizeof(line), "interface %s: native XDP with redirect to AF_XDP (driver %s, %s)",
			 ifname, driver, source);
		say(v, "ok", line, NULL);
	} else {
		snprintf(line, sizeof(line), "interface %s: driver %s takes no native XDP redirect (%s); generic (skb) mode works everywhere, slower",
			 ifname, driver, source);
		say(v, "warn", line, "port add p0 afxdp:dev=IFACE,mode=skb (or afpacket:dev=IFACE)");
	}
	snprintf(line, sizeof(line), "interface %s: AF_XDP zero-copy %s (%s)", ifname,
		 zc ? "supported" : "not supported: copy mode", source);
	say(v, zc ? "ok" : "warn", line,
	    zc ? NULL : "nothing to fix: rxpath uses copy mode (zerocopy=auto)");

	/* a NIC that strips VLAN tags does so before XDP runs: the frames reach AF_XDP untagged */
	if (strcmp(driver, "veth") && !rxp_netdev_ethtool_value(fd, ifname, ETHTOOL_GFLAGS, &flags) &&
	    (flags & ETH_FLAG_RXVLAN)) {
		snprintf(line, sizeof(line), "interface %s: receive VLAN offload is on: the device takes VLAN tags off before XDP, so VLAN sub-ports on an afxdp port see no tagged frames",
			 ifname);
		snprintf(fix, sizeof(fix), "for VLAN sub-ports over afxdp: ethtool -K %s rxvlan off (afpacket puts the tags back itself)",
			 ifname);
		say(v, "warn", line, fix);
	}
	if (!strcmp(driver, "veth")) {
		check_veth_peer(v, fd, ifname, ifindex);
		/* measured on the veth lab: docs/performance.md */
		snprintf(line, sizeof(line),
			 "interface %s: veth runs its XDP receive on the sending CPU, one frame per NAPI poll, "
			 "and its AF_XDP sockets may get no NAPI id to busy poll", ifname);
		snprintf(fix, sizeof(fix), "port add p0 afxdp:dev=%s,coalesce=200 (frames in batches of up to 64)",
			 ifname);
		say(v, "warn", line, fix);
	}
	close(fd);

	if (!rxp_netdev_xdp_prog(ifindex, &prog_id, &attach_mode) && prog_id) {
		const char *off = rxp_xdp_detach_words(attach_mode);
		struct bpf_prog_info pinfo;
		uint32_t len = sizeof(pinfo);
		int pfd = bpf_prog_get_fd_by_id(prog_id);

		memset(&pinfo, 0, sizeof(pinfo));
		if (pfd >= 0 && !bpf_obj_get_info_by_fd(pfd, &pinfo, &len))
			snprintf(line, sizeof(line), "interface %s: an XDP program is attached: id %u, name %s",
				 ifname, prog_id, pinfo.name);
		else
			snprintf(line, sizeof(line), "interface %s: an XDP program is attached: id %u",
				 ifname, prog_id);
		if (pfd >= 0)
			close(pfd);
		snprintf(fix, sizeof(fix), "if nothing else needs it: ip link set dev %s %s (libxdp programs: xdp-loader unload %s --all)",
			 ifname, off, ifname);
		say(v, "warn", line, fix);
	} else {
		snprintf(line, sizeof(line), "interface %s: no XDP program attached", ifname);
		say(v, "ok", line, NULL);
	}
}

int cmd_doctor(int argc, char **argv)
{
	struct verdicts v = { 0 };

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		/* asked for: on stdout; a wrong call: on stderr */
		fprintf(argc > 2 ? stderr : stdout, "usage: rxpath doctor [IFACE]\n\n"
		       "Checks the kernel, capabilities, memlock limit and bpffs that AF_XDP and\n"
		       "AF_PACKET ports need, and with IFACE the interface: driver, queues, native\n"
		       "XDP and zero-copy, offloads that break XDP on veth, an XDP program already\n"
		       "attached. Every problem comes with the command that fixes it.\n");
		return argc > 2 ? 2 : 0;
	}
	check_kernel(&v);
	check_caps(&v);
	check_memlock(&v);
	check_bpffs(&v);
	if (argc == 2)
		check_iface(&v, argv[1]);
	printf("\nok: %u, warnings: %u, problems: %u\n", v.ok, v.warn, v.fail);
	return v.fail ? 1 : 0;
}
