/* SPDX-License-Identifier: MIT */
/*
 * The host path of a port ("port set p0 host on"): a TAP interface in
 * rxpath's network namespace that is the port's twin for the kernel (same
 * MAC, MTU and addresses), so that ssh, BGP or DNS servers run on the
 * router's own addresses while the datapath keeps forwarding.
 *
 * Toward the host: what is addressed to rxpath and the datapath does not
 * answer itself (TCP, UDP, fragments, ICMP other than echo requests, and
 * copies of ARP replies and Neighbor Advertisements so the kernel can
 * resolve its peers) is held during a poll and written to the TAP when the
 * poll ends. With GRO on, in-order TCP segments of a flow are coalesced
 * first into super-packets of up to 64 KiB, each segment's checksum
 * verified in software, and written with one writev() as a GSO frame; the
 * seeds' trade-off made explicit: GRO helps delivery to a host and hurts
 * routing, so it is on this path only.
 *
 * From the host: frames the kernel sends on the TAP go out of the port as
 * they are (the kernel did its own routing and neighbour resolution), after
 * TSO super-packets are cut into MSS-sized segments and partial checksums
 * are completed, all in software. They go through the stack's transmit
 * vectors as the router's own output.
 *
 * Several workers: the TAP has a queue per worker (IFF_MULTI_QUEUE), each
 * worker its own struct rxp_host on its queue. What a worker receives for
 * the host it writes to its queue; what the kernel sends it spreads over
 * the queues by flow, and each worker reads and sends what its queue got.
 *
 * Context: a host path belongs to the thread that polls its stack.
 */
#ifndef RXPATH_HOST_H
#define RXPATH_HOST_H

#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "port/tap.h"

#define RXP_HOST_HOLD RXP_BURST_MAX	/* packets held for the host between two flushes */
#define RXP_HOST_SEGS_MAX 64u		/* segments coalesced into one super-packet at most */
#define RXP_HOST_GSO_MAX 65535u		/* largest IP packet a super-packet may make */

/* A host path's counters, one entry each: field, help (show, metrics and the run summary read them). */
#define RXP_HOST_COUNTERS(X) \
	X(to_host_packets, "packets handed to the host (segments before GRO)") \
	X(to_host_bytes, "bytes handed to the host") \
	X(writes, "frames written to the TAP (a super-packet once)") \
	X(gro_super, "super-packets written: two segments or more") \
	X(gro_merged, "segments coalesced behind the first of a super-packet") \
	X(csum_bad, "TCP segments failing the checksum: written alone, unverified") \
	X(write_errors, "frames the TAP refused: lost") \
	X(from_host_frames, "frames read from the TAP") \
	X(from_host_packets, "packets sent on the port for them") \
	X(gso_frames, "TSO super-packets read") \
	X(gso_segments, "segments cut from them") \
	X(csum_completed, "partial checksums completed in software") \
	X(read_errors, "reads that failed (other than nothing to read)") \
	X(bad_frames, "frames from the host dropped: malformed, unsupported, too long") \
	X(no_buffer, "packets from the host lost to an empty pool")

struct rxp_host_stats {
#define RXP_X(field, help) uint64_t field;
	RXP_HOST_COUNTERS(RXP_X)
#undef RXP_X
};

struct rxp_host_config {
	/*
	 * TAP name. Empty: the port's name, or "rxp-" + the port's name when an
	 * interface of that name already exists (e.g. the afpacket device).
	 */
	char name[RXP_TAP_NAME_MAX];
	bool gro;
	bool multi_queue;	/* other workers' queues will be opened (rxp_host_open_queue) */
};

/* One port's host path. The fields are read-only outside src/net/host.c. */
struct rxp_host {
	struct rxp_tap tap;
	uint16_t port;
	bool gro;
	uint16_t n_held;
	struct rxp_host_stats stats;
	struct rxp_pkt *held[RXP_HOST_HOLD];
	uint32_t rx_buf_len;
	uint8_t *rx_buf;		/* one frame from the host, up to a 64 KiB super-packet */
};

/*
 * Creates the host path of interface @ifidx of @r (a port, not a VLAN
 * sub-port): a TAP with its MAC, IP MTU and addresses. Returns 0 with *@out
 * set, or -errno with @err saying what failed and how to fix it.
 */
int rxp_host_open(struct rxp_host **out, const struct rxp_router *r, int ifidx,
		  const struct rxp_host_config *cfg, char *err, size_t errlen);

/*
 * Opens the host path of another worker on one more queue of @first's TAP
 * (opened with multi_queue). Returns 0 with *@out set, or -errno with @err.
 */
int rxp_host_open_queue(struct rxp_host **out, const struct rxp_host *first, char *err,
			size_t errlen);

/*
 * Creates a host path for @port on an fd that stands in for the TAP (a
 * SOCK_SEQPACKET socket: one frame with its vnet header per message), for
 * tests. Takes @fd. Returns 0 with *@out set, or -ENOMEM.
 */
int rxp_host_open_fd(struct rxp_host **out, uint16_t port, int fd, bool gro);

/* Hands @h to @st: what is addressed to us on its port goes to it. Returns 0 or -EINVAL. */
int rxp_host_attach(struct rxp_stack *st, struct rxp_host *h);

/*
 * Detaches @h from @st, frees the packets it still holds into @st's cache,
 * removes the TAP and frees @h. @h may be NULL.
 */
void rxp_host_close(struct rxp_stack *st, struct rxp_host *h);

/* Turns GRO on or off; takes effect at the next flush. */
void rxp_host_set_gro(struct rxp_host *h, bool on);

/*
 * Holds @pkt (a frame addressed to us, counted as delivered) for the host,
 * to be written at the next flush. Consumes @pkt.
 */
void rxp_host_hold(struct rxp_stack *st, struct rxp_host *h, struct rxp_pkt *pkt);

/* Writes what the host paths of @st hold, GRO first where it is on. Called by rxp_stack_flush(). */
void rxp_host_flush(struct rxp_stack *st);

/*
 * Reads up to @budget frames the kernel sent on @h's TAP and gathers them
 * for transmit on the port (segmented and checksummed as needed). The
 * caller sends them with rxp_stack_flush(). Returns the frames read.
 */
unsigned rxp_host_poll(struct rxp_stack *st, struct rxp_host *h, unsigned budget);

/*
 * Polls every host path attached to @st and sends what they gave. For the
 * poll loop's slow tick (every 64 rounds; see src/net/host.c for why not
 * more often). Returns the frames read.
 */
unsigned rxp_host_poll_all(struct rxp_stack *st, unsigned budget);

/* Returns true when @pkt's port has a host path and the frame is untagged (the TAP's kind). */
/* pkt->flags: to an address of another interface than the one it came in on, not the TAP's */
#define RXP_PKT_F_OTHER_IF 0x20

static inline bool rxp_host_wants(const struct rxp_stack *st, const struct rxp_pkt *pkt)
{
	return st->host[pkt->port] && pkt->l3_off == RXP_ETH_HLEN &&
	       !(pkt->flags & RXP_PKT_F_OTHER_IF);
}

/*
 * Hands @pkt (addressed to us and taken by the stack) to its port's host
 * path when rxp_host_wants() it; else frees it. Consumes @pkt.
 */
static inline void rxp_host_take(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	if (rxp_host_wants(st, pkt))
		rxp_host_hold(st, st->host[pkt->port], pkt);
	else
		rxp_pool_free(st->cache, pkt);
}

/*
 * The host kernel's side follows its port's interface: an address added
 * (@addr network order, 16 bytes, IPv4 in the first 4) or removed, the MTU
 * set, on the TAP. Each returns 0 or -errno with @err.
 */
int rxp_host_addr_add(struct rxp_host *h, uint8_t family, const uint8_t *addr, uint8_t plen,
		      char *err, size_t errlen);
int rxp_host_addr_del(struct rxp_host *h, uint8_t family, const uint8_t *addr, char *err,
		      size_t errlen);
int rxp_host_set_mtu(struct rxp_host *h, uint32_t mtu, char *err, size_t errlen);

#endif
