/* SPDX-License-Identifier: MIT */
/*
 * TAP interfaces (Documentation/networking/tuntap.rst): /dev/net/tun with
 * IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, set up with ioctls on the fd and
 * rtnetlink (libmnl) for the link and its addresses.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include "rxpath/proto.h"
#include "tap.h"
#include "netdev.h"
#include "nl.h"

#define TUN_DEV "/dev/net/tun"

bool rxp_tap_name_taken(const char *name)
{
	return rxp_netdev_ifindex(name) > 0;
}

void rxp_tap_attach_fd(struct rxp_tap *tap, int fd)
{
	memset(tap, 0, sizeof(*tap));
	tap->fd = fd;
	snprintf(tap->name, sizeof(tap->name), "fd%d", fd);
}

void rxp_tap_close(struct rxp_tap *tap)
{
	if (tap->fd >= 0)
		close(tap->fd);
	tap->fd = -1;
	tap->ifindex = 0;
}

/* Returns -errno after writing "tap NAME: STEP: ERROR[; HINT]" into @err. */
static int step_err(int e, const char *name, const char *step, const char *hint, char *err,
		    size_t errlen)
{
	snprintf(err, errlen, "tap %s: %s: %s%s%s", name, step, strerror(e), hint ? "; " : "",
		 hint ? hint : "");
	return -e;
}

/*
 * Before the link is up, or its link-local address would wait out DAD (no
 * IPv6: nothing to do); and the kernel there is the router's host part: it
 * asks no router for advertisements and takes none.
 */
static void ipv6_settings(const char *dev)
{
	rxp_netdev_conf_write("ipv6", dev, "accept_dad", "0");
	rxp_netdev_conf_write("ipv6", dev, "router_solicitations", "0");
	rxp_netdev_conf_write("ipv6", dev, "accept_ra", "0");
}

/* RTM_NEWLINK: MAC (NULL: unchanged), MTU and, with @up, the up flag in one request. Returns 0 or -errno. */
static int nl_link_set(struct mnl_socket *nl, unsigned ifindex, const uint8_t *mac, uint32_t mtu,
		       bool up, uint32_t seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)ifindex;
	ifi->ifi_flags = up ? IFF_UP : 0;
	ifi->ifi_change = up ? IFF_UP : 0;
	if (mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	return rxp_nl_request(nl, nlh, seq, NULL, NULL);
}

static bool is_link_local6(const struct rxp_tap_addr *a)
{
	return a->family == 6 && a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

/*
 * RTM_NEWADDR (replacing what the kernel made itself, like the link-local
 * address) or RTM_DELADDR for one address. Returns 0 or -errno.
 */
static int nl_addr(struct mnl_socket *nl, unsigned ifindex, const struct rxp_tap_addr *a, bool add,
		   uint32_t seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	bool v4 = a->family == 4;

	nlh->nlmsg_type = add ? RTM_NEWADDR : RTM_DELADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = v4 ? AF_INET : AF_INET6;
	ifa->ifa_prefixlen = a->plen;
	/* usable at once: no duplicate address detection for an address the router owns */
	ifa->ifa_flags = v4 ? 0 : IFA_F_NODAD;
	ifa->ifa_scope = is_link_local6(a) ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
	ifa->ifa_index = ifindex;
	if (v4) {
		uint32_t addr, mask = a->plen ? htonl(~0u << (32 - a->plen)) : 0, bcast;

		memcpy(&addr, a->addr, 4);
		mnl_attr_put(nlh, IFA_LOCAL, 4, &addr);
		mnl_attr_put(nlh, IFA_ADDRESS, 4, &addr);
		if (add && a->plen < 31) {
			bcast = addr | ~mask;
			mnl_attr_put(nlh, IFA_BROADCAST, 4, &bcast);
		}
	} else {
		mnl_attr_put(nlh, IFA_ADDRESS, 16, a->addr);
	}
	return rxp_nl_request(nl, nlh, seq, NULL, NULL);
}

static int addr_index(const struct rxp_tap *tap, uint8_t family, const uint8_t *addr)
{
	for (unsigned i = 0; i < tap->n_addrs; i++)
		if (tap->addrs[i].family == family &&
		    !memcmp(tap->addrs[i].addr, addr, family == 4 ? 4 : 16))
			return (int)i;
	return -1;
}

/*
 * Adds @a on an open rtnetlink socket and records it. Returns 0 or -errno
 * with @err. Below an MTU of 1280 the kernel keeps no IPv6 address on a
 * link (RFC 8200 5): one is recorded then, and put on when the MTU allows.
 */
static int addr_add(struct rxp_tap *tap, struct mnl_socket *nl, const struct rxp_tap_addr *a,
		    uint32_t seq, char *err, size_t errlen)
{
	char what[96], text[INET6_ADDRSTRLEN];
	int ret = a->family == 6 && tap->mtu < RXP_IP6_MIN_MTU ? 0 :
		  nl_addr(nl, tap->ifindex, a, true, seq), i;

	if (ret == -EEXIST)
		ret = 0;
	if (ret) {
		inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->addr, text, sizeof(text));
		snprintf(what, sizeof(what), "add address %s/%u", text, a->plen);
		return step_err(-ret, tap->name, what,
				a->family == 6 && (ret == -EACCES || ret == -EAFNOSUPPORT) ?
				"IPv6 is disabled here (sysctl net.ipv6.conf.default.disable_ipv6)" : NULL,
				err, errlen);
	}
	i = addr_index(tap, a->family, a->addr);
	if (i >= 0)
		tap->addrs[i] = *a;
	else if (tap->n_addrs < RXP_TAP_ADDRS_MAX)
		tap->addrs[tap->n_addrs++] = *a;
	return 0;
}

int rxp_tap_addr_add(struct rxp_tap *tap, const struct rxp_tap_addr *a, char *err, size_t errlen)
{
	struct mnl_socket *nl;
	int ret;

	if (!tap->ifindex)
		return 0;	/* a test's socket: no interface to put it on */
	nl = rxp_nl_open(NETLINK_ROUTE);
	if (!nl)
		return step_err(errno, tap->name, "rtnetlink socket", NULL, err, errlen);
	ret = addr_add(tap, nl, a, (uint32_t)time(NULL), err, errlen);
	mnl_socket_close(nl);
	return ret;
}

int rxp_tap_addr_del(struct rxp_tap *tap, uint8_t family, const uint8_t *addr, char *err,
		     size_t errlen)
{
	int i = addr_index(tap, family, addr), ret;
	struct mnl_socket *nl;

	if (i < 0 || !tap->ifindex)
		return 0;
	if (family == 6 && tap->mtu < RXP_IP6_MIN_MTU) {
		tap->addrs[i] = tap->addrs[--tap->n_addrs];	/* only recorded: not on the TAP */
		return 0;
	}
	nl = rxp_nl_open(NETLINK_ROUTE);
	if (!nl)
		return step_err(errno, tap->name, "rtnetlink socket", NULL, err, errlen);
	ret = nl_addr(nl, tap->ifindex, &tap->addrs[i], false, (uint32_t)time(NULL));
	mnl_socket_close(nl);
	if (ret && ret != -EADDRNOTAVAIL)	/* someone took it off already: fine */
		return step_err(-ret, tap->name, "delete address", NULL, err, errlen);
	tap->addrs[i] = tap->addrs[--tap->n_addrs];
	return 0;
}

int rxp_tap_set_mtu(struct rxp_tap *tap, uint32_t mtu, char *err, size_t errlen)
{
	struct mnl_socket *nl;
	int ret;

	if (!tap->ifindex)
		return 0;
	nl = rxp_nl_open(NETLINK_ROUTE);
	if (!nl)
		return step_err(errno, tap->name, "rtnetlink socket", NULL, err, errlen);
	ret = nl_link_set(nl, tap->ifindex, NULL, mtu, false, (uint32_t)time(NULL));
	if (ret) {
		mnl_socket_close(nl);
		return step_err(-ret, tap->name, "set MTU", NULL, err, errlen);
	}
	/*
	 * Below 1280 the kernel dropped the link's IPv6 state: its settings
	 * (from conf/default again) and addresses go back on now it carries IPv6.
	 */
	if (tap->mtu < RXP_IP6_MIN_MTU && mtu >= RXP_IP6_MIN_MTU) {
		tap->mtu = mtu;
		ipv6_settings(tap->name);
		for (unsigned i = 0; i < tap->n_addrs && !ret; i++)
			if (tap->addrs[i].family == 6)
				ret = addr_add(tap, nl, &tap->addrs[i], (uint32_t)time(NULL) + i, err,
					       errlen);
	}
	tap->mtu = mtu;
	mnl_socket_close(nl);
	return ret;
}

/*
 * Opens /dev/net/tun as TAP @name with the vnet header and offloads; a
 * queue of an existing multi-queue TAP with @queue. Returns the fd or -errno.
 */
static int tun_create(const struct rxp_tap_config *cfg, bool queue, char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd, hdr_size = (int)sizeof(struct rxp_vnet_hdr), le = 1, ret;
	unsigned offload = cfg->offload ? TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 : 0;
	short mq = cfg->multi_queue ? IFF_MULTI_QUEUE : 0;

	fd = open(TUN_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		return step_err(e, cfg->name, "open " TUN_DEV,
				e == ENOENT ? "no TUN/TAP support here (CONFIG_TUN; modprobe tun)" :
				e == EACCES || e == EPERM ? "needs CAP_NET_ADMIN; run as root" : NULL,
				err, errlen);
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", cfg->name);
	/* IFF_TUN_EXCL: fail rather than attach to someone's persistent device (a queue attaches to ours) */
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | mq | (queue ? 0 : IFF_TUN_EXCL));
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		ret = step_err(errno, cfg->name, "TUNSETIFF",
			       errno == EBUSY || errno == EEXIST ? "the name is taken; choose another" :
			       errno == EPERM ? "needs CAP_NET_ADMIN; run as root" : NULL, err, errlen);
		goto err;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr_size)) {
		ret = step_err(errno, cfg->name, "TUNSETVNETHDRSZ", NULL, err, errlen);
		goto err;
	}
	/* Little-endian header fields everywhere; a little-endian host needs no setting. */
	if (ioctl(fd, TUNSETVNETLE, &le) && __BYTE_ORDER != __LITTLE_ENDIAN) {
		ret = step_err(errno, cfg->name, "TUNSETVNETLE", "this kernel is too old (3.19+ needed)",
			       err, errlen);
		goto err;
	}
	if (ioctl(fd, TUNSETOFFLOAD, offload)) {
		ret = step_err(errno, cfg->name, "TUNSETOFFLOAD", NULL, err, errlen);
		goto err;
	}
	/* a new device is not persistent; say so, in case the defaults ever change */
	if (ioctl(fd, TUNSETPERSIST, 0)) {
		ret = step_err(errno, cfg->name, "TUNSETPERSIST", NULL, err, errlen);
		goto err;
	}
	return fd;

err:
	close(fd);
	return ret;
}

int rxp_tap_open_queue(const struct rxp_tap *tap, struct rxp_tap *q, char *err, size_t errlen)
{
	struct rxp_tap_config cfg = { .offload = true, .multi_queue = true };
	int fd;

	snprintf(cfg.name, sizeof(cfg.name), "%s", tap->name);
	fd = tun_create(&cfg, true, err, errlen);
	if (fd < 0)
		return fd;
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	snprintf(q->name, sizeof(q->name), "%s", tap->name);
	q->mtu = tap->mtu;
	return 0;
}

int rxp_tap_open(struct rxp_tap *tap, const struct rxp_tap_config *cfg, char *err, size_t errlen)
{
	struct mnl_socket *nl = NULL;
	uint32_t seq = (uint32_t)time(NULL);
	char what[64];
	int ret;

	memset(tap, 0, sizeof(*tap));
	tap->fd = -1;
	if (!cfg->name[0] || strlen(cfg->name) >= RXP_TAP_NAME_MAX) {
		snprintf(err, errlen, "tap '%s': an interface name has 1 to %d characters", cfg->name,
			 RXP_TAP_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(tap->name, sizeof(tap->name), "%s", cfg->name);
	if (rxp_tap_name_taken(cfg->name)) {
		snprintf(err, errlen, "tap %s: an interface of that name exists in this network namespace; choose another name",
			 cfg->name);
		return -EEXIST;
	}
	ret = tun_create(cfg, false, err, errlen);
	if (ret < 0)
		return ret;
	tap->fd = ret;
	ret = rxp_netdev_ifindex(cfg->name);
	if (ret < 0) {
		ret = step_err(-ret, cfg->name, "if_nametoindex", NULL, err, errlen);
		goto err;
	}
	tap->ifindex = (unsigned)ret;
	ipv6_settings(cfg->name);
	/* deleting an address must not take the others of its subnet along (rxpath keeps them) */
	rxp_netdev_conf_write("ipv4", cfg->name, "promote_secondaries", "1");
	nl = rxp_nl_open(NETLINK_ROUTE);
	if (!nl) {
		ret = step_err(errno, cfg->name, "rtnetlink socket", NULL, err, errlen);
		goto err;
	}
	tap->mtu = cfg->mtu;
	ret = nl_link_set(nl, tap->ifindex, cfg->mac, cfg->mtu, true, seq++);
	if (ret) {
		snprintf(what, sizeof(what), "set MAC, MTU %u and up", cfg->mtu);
		step_err(-ret, cfg->name, what, NULL, err, errlen);
		goto err;
	}
	for (unsigned i = 0; i < cfg->n_addrs && i < RXP_TAP_ADDRS_MAX; i++) {
		ret = addr_add(tap, nl, &cfg->addrs[i], seq++, err, errlen);
		if (ret)
			goto err;
	}
	mnl_socket_close(nl);
	return 0;

err:
	if (nl)
		mnl_socket_close(nl);
	rxp_tap_close(tap);
	return ret;
}
