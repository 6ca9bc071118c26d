/* SPDX-License-Identifier: MIT */
/*
 * The TAP device: a kernel Ethernet interface whose other end is a file
 * descriptor. Each read() returns one frame the kernel sent on it and each
 * write() hands the kernel one frame, both behind a virtio_net_hdr
 * (IFF_VNET_HDR) that carries GSO and checksum offload: with TSO allowed
 * (TUNSETOFFLOAD) the kernel may send TCP super-packets of up to 64 KiB with
 * a partial checksum, and may be handed the same.
 *
 * This driver only moves frames and their headers, and sets the interface
 * up (name, MAC, MTU, addresses). What goes in the frames (GRO, GSO,
 * checksums) is the host path's business: src/net/host.c.
 *
 * The interface is never persistent: it goes away when the fd is closed.
 */
#ifndef RXPATH_TAP_H
#define RXPATH_TAP_H

#include <endian.h>
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>
#include "rxpath/common.h"

#define RXP_TAP_NAME_MAX 16	/* IFNAMSIZ, with the terminating NUL */
#define RXP_TAP_ADDRS_MAX 16

/* virtio_net_hdr flags and GSO types (include/uapi/linux/virtio_net.h) */
#define RXP_VNET_F_NEEDS_CSUM 0x01	/* checksum from csum_start, stored at +csum_offset */
#define RXP_VNET_F_DATA_VALID 0x02	/* checksum known good (the tun driver ignores it on write) */
#define RXP_VNET_GSO_NONE  0
#define RXP_VNET_GSO_TCPV4 1
#define RXP_VNET_GSO_UDP   3
#define RXP_VNET_GSO_TCPV6 4
#define RXP_VNET_GSO_UDP_L4 5
#define RXP_VNET_GSO_ECN   0x80		/* a flag on the type: the sender set CWR/ECE */

/*
 * struct virtio_net_hdr. The fields are little-endian: the TAP is set to
 * TUNSETVNETLE, so the layout means the same on every host.
 */
struct rxp_vnet_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;	/* GSO: bytes of headers, Ethernet to TCP (a hint) */
	uint16_t gso_size;	/* GSO: payload bytes per segment (the MSS) */
	uint16_t csum_start;	/* NEEDS_CSUM: where the checksummed bytes start */
	uint16_t csum_offset;	/* NEEDS_CSUM: where to store it, from csum_start */
} __attribute__((packed));

_Static_assert(sizeof(struct rxp_vnet_hdr) == 10, "virtio_net_hdr is 10 bytes (TUNSETVNETHDRSZ)");

struct rxp_tap_addr {
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;
	uint8_t addr[16];	/* network order; IPv4 in the first 4 bytes */
};

struct rxp_tap_config {
	char name[RXP_TAP_NAME_MAX];	/* must not name an existing interface */
	uint8_t mac[6];
	uint32_t mtu;
	bool offload;		/* TSO4/TSO6 + checksum offload: super-packets both ways */
	bool multi_queue;	/* IFF_MULTI_QUEUE: more queues may be opened (rxp_tap_open_queue) */
	unsigned n_addrs;
	struct rxp_tap_addr addrs[RXP_TAP_ADDRS_MAX];
};

struct rxp_tap {
	int fd;			/* non-blocking */
	unsigned ifindex;	/* 0: not an interface (a test's socket, see rxp_tap_attach_fd) */
	char name[RXP_TAP_NAME_MAX];
	uint32_t mtu;
	unsigned n_addrs;	/* its addresses, to take them off again (and IPv6's back on) */
	struct rxp_tap_addr addrs[RXP_TAP_ADDRS_MAX];
};

/*
 * Creates TAP interface cfg->name with the vnet header, sets its MAC and
 * MTU, turns IPv6 duplicate address detection off, brings it up and adds
 * the addresses. Returns 0 or -errno with @err saying what failed and how
 * to fix it; on error nothing is left behind.
 */
int rxp_tap_open(struct rxp_tap *tap, const struct rxp_tap_config *cfg, char *err, size_t errlen);

/*
 * Opens one more queue of @tap (made with multi_queue) into @q: its own fd,
 * to which the kernel hands a share of the frames it sends (by flow) and on
 * which frames may be written. @q does not own the interface: closing it
 * leaves the TAP to the others. Returns 0 or -errno with @err.
 */
int rxp_tap_open_queue(const struct rxp_tap *tap, struct rxp_tap *q, char *err, size_t errlen);

/*
 * Uses @fd (a SOCK_SEQPACKET socket, in tests) as if it were a TAP: frames
 * with their vnet header, one per message. The tap owns @fd from now on.
 */
void rxp_tap_attach_fd(struct rxp_tap *tap, int fd);

/* Closes the fd; the interface goes away with it. */
void rxp_tap_close(struct rxp_tap *tap);

/* Adds address @a to the TAP (replacing it if there). Returns 0 or -errno with @err. */
int rxp_tap_addr_add(struct rxp_tap *tap, const struct rxp_tap_addr *a, char *err, size_t errlen);

/*
 * Removes address @addr (family 4 or 6) that rxp_tap_open or rxp_tap_addr_add
 * put on the TAP. Returns 0 (also when it was not there) or -errno with @err.
 */
int rxp_tap_addr_del(struct rxp_tap *tap, uint8_t family, const uint8_t *addr, char *err,
		     size_t errlen);

/* Sets the TAP's MTU. Returns 0 or -errno with @err. */
int rxp_tap_set_mtu(struct rxp_tap *tap, uint32_t mtu, char *err, size_t errlen);

/* Returns true when an interface called @name exists in this network namespace. */
bool rxp_tap_name_taken(const char *name);

/*
 * Reads one frame into @buf and its header into @vh. Returns the frame's
 * length, -EAGAIN when there is none, or another -errno (-EFAULT: the frame
 * was longer than @len and is lost).
 */
static inline long rxp_tap_read(const struct rxp_tap *tap, struct rxp_vnet_hdr *vh, void *buf,
				size_t len)
{
	struct iovec iov[2] = { { vh, sizeof(*vh) }, { buf, len } };
	ssize_t n = readv(tap->fd, iov, 2);

	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(*vh))
		return -EBADMSG;
	return (long)((size_t)n - sizeof(*vh));
}

/*
 * Writes one frame: iov[0] is its vnet header, the rest its bytes in
 * order (a super-packet's headers, then each segment's payload). Returns 0
 * or -errno; the kernel takes the whole frame or none of it.
 */
static inline int rxp_tap_writev(const struct rxp_tap *tap, const struct iovec *iov, int n_iov)
{
	return writev(tap->fd, iov, n_iov) < 0 ? -errno : 0;
}

static inline uint16_t rxp_vnet16(uint16_t v)
{
	return htole16(v);
}

#endif
