/* SPDX-License-Identifier: MIT */
/*
 * Questions to the kernel about one network interface (netdev.h): the
 * ioctls of netdevice(7) and ethtool, the files of /sys/class/net
 * (Documentation/ABI/testing/sysfs-class-net) and the per-device sysctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "netdev.h"

#define SYSFS_NET "/sys/class/net"

/* ---- ioctls ---- */

int rxp_netdev_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

int rxp_netdev_ifindex(const char *name)
{
	unsigned ifindex = if_nametoindex(name);

	if (!ifindex)
		return -(errno ? errno : ENODEV);
	return (int)ifindex;
}

int rxp_netdev_ifname(unsigned ifindex, char *name)
{
	if (!if_indextoname(ifindex, name))
		return -(errno ? errno : ENXIO);
	return 0;
}

/* Asks @cmd about @dev with @ifr (its name set here). Returns 0 or -errno. */
static int dev_ioctl(int fd, const char *dev, unsigned long cmd, struct ifreq *ifr)
{
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", dev);
	return ioctl(fd, cmd, ifr) ? -errno : 0;
}

int rxp_netdev_mtu(int fd, const char *dev, uint32_t *mtu)
{
	struct ifreq ifr;
	int ret;

	memset(&ifr, 0, sizeof(ifr));
	ret = dev_ioctl(fd, dev, SIOCGIFMTU, &ifr);
	if (ret)
		return ret;
	if (ifr.ifr_mtu < 0)
		return -EINVAL;
	*mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

int rxp_netdev_hwaddr(int fd, const char *dev, uint8_t mac[6], uint16_t *type)
{
	struct ifreq ifr;
	int ret;

	memset(&ifr, 0, sizeof(ifr));
	ret = dev_ioctl(fd, dev, SIOCGIFHWADDR, &ifr);
	if (ret)
		return ret;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (type)
		*type = ifr.ifr_hwaddr.sa_family;
	return 0;
}

/* Returns 1 when @dev has every flag of @flags, 0 when not, or -errno. */
static int has_flags(int fd, const char *dev, short flags)
{
	struct ifreq ifr;
	int ret;

	memset(&ifr, 0, sizeof(ifr));
	ret = dev_ioctl(fd, dev, SIOCGIFFLAGS, &ifr);
	if (ret)
		return ret;
	return (ifr.ifr_flags & flags) == flags;
}

int rxp_netdev_is_up(int fd, const char *dev)
{
	return has_flags(fd, dev, IFF_UP);
}

int rxp_netdev_is_running(int fd, const char *dev)
{
	return has_flags(fd, dev, IFF_UP | IFF_RUNNING);
}

/* Runs the ethtool command whose struct is @data (its cmd set). Returns 0 or -errno. */
static int ethtool(int fd, const char *dev, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = data;
	return dev_ioctl(fd, dev, SIOCETHTOOL, &ifr);
}

int rxp_netdev_driver(int fd, const char *dev, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	int ret = ethtool(fd, dev, &info);

	if (ret)
		return ret;
	snprintf(buf, len, "%.*s", (int)sizeof(info.driver), info.driver);
	return 0;
}

int rxp_netdev_rx_channels(int fd, const char *dev, uint32_t *n)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int ret = ethtool(fd, dev, &ch);

	if (ret)
		return ret;
	*n = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
	return 0;
}

int rxp_netdev_ethtool_value(int fd, const char *dev, uint32_t cmd, uint32_t *out)
{
	struct ethtool_value ev = { .cmd = cmd };
	int ret = ethtool(fd, dev, &ev);

	if (ret)
		return ret;
	*out = ev.data;
	return 0;
}

/* ---- files ---- */

/* Writes @value to @path (a sysfs or procfs file: one write). Returns 0 or -errno. */
static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* Puts /sys/class/net/@dev/@attr into @path. Returns 0 or -ENAMETOOLONG. */
static int sysfs_path(char *path, size_t len, const char *dev, const char *attr)
{
	int n = snprintf(path, len, SYSFS_NET "/%s/%s", dev, attr);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

unsigned rxp_netdev_sysfs_queues(const char *dev, const char *kind)
{
	char path[256];
	unsigned n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), SYSFS_NET "/%s/queues/%s-%u", dev, kind, n);
		if (access(path, F_OK))
			return n;
	}
}

int rxp_netdev_sysfs_read(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;
	int ret = sysfs_path(path, sizeof(path), dev, attr);

	if (ret)
		return ret;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		ret = ferror(f) ? -errno : -ENODATA;
		fclose(f);
		return ret;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int rxp_netdev_sysfs_u32(const char *dev, const char *attr, uint32_t *val)
{
	char buf[32], *end;
	unsigned long v;
	int ret = rxp_netdev_sysfs_read(dev, attr, buf, sizeof(buf));

	if (ret)
		return ret;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (end == buf || errno || v > UINT32_MAX)
		return -EINVAL;
	*val = (uint32_t)v;
	return 0;
}

int rxp_netdev_sysfs_write(const char *dev, const char *attr, const char *value)
{
	char path[256];
	int ret = sysfs_path(path, sizeof(path), dev, attr);

	return ret ? ret : write_file(path, value);
}

int rxp_netdev_conf_write(const char *proto, const char *dev, const char *key, const char *value)
{
	char path[256];
	int n = snprintf(path, sizeof(path), "/proc/sys/net/%s/conf/%s/%s", proto, dev, key);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return write_file(path, value);
}

/* ---- XDP ---- */

int rxp_netdev_xdp_prog(unsigned ifindex, uint32_t *prog_id, uint8_t *attach_mode)
{
	struct bpf_xdp_query_opts opts = { .sz = sizeof(opts) };
	int ret = bpf_xdp_query((int)ifindex, 0, &opts);

	if (ret)
		return ret;
	*prog_id = opts.prog_id;
	*attach_mode = opts.attach_mode;
	return 0;
}
