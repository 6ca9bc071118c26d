/* SPDX-License-Identifier: MIT */
/*
 * A Linux network interface, asked by name: its index, MTU, address, flags
 * and driver (ioctls on a control socket), its ethtool settings, its files
 * in /sys/class/net and /proc/sys/net, and the XDP program attached to it.
 * Every call asks the kernel afresh: nothing is cached. The drivers and
 * `rxpath doctor` share these; none of them prints or exits.
 *
 * The ioctl calls take @fd: rxp_netdev_socket(), or any socket the caller
 * already has (AF_PACKET's port asks on its packet socket). A socket answers
 * for the network namespace it was made in.
 */
#ifndef RXPATH_PORT_NETDEV_H
#define RXPATH_PORT_NETDEV_H

#include <stddef.h>
#include <stdint.h>

/* Returns a datagram socket (close-on-exec) for the ioctl calls below, or -errno. */
int rxp_netdev_socket(void);

/* Returns the index of interface @name in this network namespace, or -errno (-ENODEV: none). */
int rxp_netdev_ifindex(const char *name);

/* Returns 0 with interface @ifindex's name in @name (IF_NAMESIZE bytes), or -errno (-ENXIO: none). */
int rxp_netdev_ifname(unsigned ifindex, char *name);

/* Returns 0 with @dev's MTU in *@mtu (untouched on failure), or -errno (SIOCGIFMTU). */
int rxp_netdev_mtu(int fd, const char *dev, uint32_t *mtu);

/*
 * Returns 0 with @dev's hardware address in @mac (6 bytes) and its link
 * type (ARPHRD_*) in *@type, which may be NULL; or -errno (SIOCGIFHWADDR),
 * @mac untouched.
 */
int rxp_netdev_hwaddr(int fd, const char *dev, uint8_t mac[6], uint16_t *type);

/* Returns 1 when @dev is up (IFF_UP), 0 when it is down, or -errno (SIOCGIFFLAGS). */
int rxp_netdev_is_up(int fd, const char *dev);

/* Returns 1 when @dev is up and has its carrier (IFF_RUNNING), 0 when not, or -errno. */
int rxp_netdev_is_running(int fd, const char *dev);

/* Returns 0 with the name of @dev's driver in @buf (untouched on failure), or -errno (ETHTOOL_GDRVINFO). */
int rxp_netdev_driver(int fd, const char *dev, char *buf, size_t len);

/* Returns 0 with the larger of @dev's RX and combined channel counts in *@n, or -errno (ETHTOOL_GCHANNELS). */
int rxp_netdev_rx_channels(int fd, const char *dev, uint32_t *n);

/* Returns 0 with the answer to ethtool get command @cmd (ETHTOOL_GTSO, ETHTOOL_GFLAGS, ...) in *@out, or -errno. */
int rxp_netdev_ethtool_value(int fd, const char *dev, uint32_t cmd, uint32_t *out);

/* Returns how many @kind ("rx" or "tx") queues /sys/class/net/@dev/queues lists (0: none, or no such device). */
unsigned rxp_netdev_sysfs_queues(const char *dev, const char *kind);

/*
 * Returns 0 with the first line of /sys/class/net/@dev/@attr in @buf (no
 * newline), or -errno (-ENODATA: the file is empty).
 */
int rxp_netdev_sysfs_read(const char *dev, const char *attr, char *buf, size_t len);

/* Returns 0 with the number in /sys/class/net/@dev/@attr in *@val (untouched on failure), or -errno. */
int rxp_netdev_sysfs_u32(const char *dev, const char *attr, uint32_t *val);

/* Returns 0 once @value is written to /sys/class/net/@dev/@attr, or -errno. */
int rxp_netdev_sysfs_write(const char *dev, const char *attr, const char *value);

/* Returns 0 once @value is written to /proc/sys/net/@proto/conf/@dev/@key (@proto: "ipv4", "ipv6"), or -errno. */
int rxp_netdev_conf_write(const char *proto, const char *dev, const char *key, const char *value);

/*
 * Returns 0 with the id of the XDP program attached to @ifindex in
 * *@prog_id (0: none) and how it is attached (XDP_ATTACHED_*) in
 * *@attach_mode, or -errno.
 */
int rxp_netdev_xdp_prog(unsigned ifindex, uint32_t *prog_id, uint8_t *attach_mode);

#endif
