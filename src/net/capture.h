/* SPDX-License-Identifier: MIT */
/*
 * Packet capture on the datapath: the points the stack calls (receive,
 * transmit, drop), the choice of points, ports and filter, and the record
 * ring between the datapath and whoever writes the records to a file.
 *
 * The stack holds a pointer to a capture (NULL: off) and tests it once per
 * vector or per drop, so an idle capture costs one predicted branch. When
 * on, each selected packet is copied, up to the snap length, into a
 * single-producer/single-consumer ring allocated when the capture starts;
 * when the ring is full the packet is not captured and counted as lost.
 * Forwarding never waits: no malloc, lock or system call per packet, and at
 * most one clock read per burst (CLOCK_REALTIME, for the file's timestamps).
 *
 * Context: the hooks and rxp_capture_stats() run on the datapath thread
 * that owns the stack (the producer). rxp_capture_peek/release run on one
 * consumer thread. Counters can be read from any thread.
 */
#ifndef RXPATH_CAPTURE_H
#define RXPATH_CAPTURE_H

#include "rxpath/common.h"
#include "rxpath/pkt.h"
#include "rxpath/port.h"

/* Capture points, combined as a mask. */
#define RXP_CAPTURE_RX   0x1u	/* the received vector, before the stack looks at it */
#define RXP_CAPTURE_TX   0x2u	/* what is handed to tx_burst */
#define RXP_CAPTURE_DROP 0x4u	/* packets the stack drops, with the reason */
#define RXP_CAPTURE_POINTS_ALL (RXP_CAPTURE_RX | RXP_CAPTURE_TX | RXP_CAPTURE_DROP)

#define RXP_CAPTURE_ALL_PORTS UINT64_MAX	/* port_mask: every port */
#define RXP_CAPTURE_SNAPLEN_DEFAULT 262144u
#define RXP_CAPTURE_RING_DEFAULT (8u << 20)
#define RXP_CAPTURE_RING_MIN 4096u
#define RXP_CAPTURE_RING_MAX (1u << 30)

struct rxp_capture;

struct rxp_capture_config {
	unsigned points;	/* RXP_CAPTURE_* mask, not 0 */
	uint64_t port_mask;	/* bit per port id; RXP_CAPTURE_ALL_PORTS */
	uint64_t count;		/* stop capturing after this many packets; 0: no limit */
	uint32_t snaplen;	/* bytes kept of each packet; 0: RXP_CAPTURE_SNAPLEN_DEFAULT */
	const char *filter;	/* BPF filter in tcpdump syntax; NULL or "": every packet */
	uint32_t ring_bytes;	/* record ring, rounded up to a power of two; 0: the default */
	/*
	 * NULL: @count is this ring's own. Else the rings of one capture (one
	 * per worker) count against it together: each packet claims one.
	 */
	_Atomic uint64_t *shared_count;
};

struct rxp_capture_stats {
	uint64_t captured;	/* copied into the ring */
	uint64_t lost;		/* selected and matched, but the ring was full */
	uint64_t filtered;	/* selected, but the filter said no */
	bool count_reached;	/* the count is reached: nothing more is captured */
};

/*
 * One captured packet in the ring. Records are 8-byte aligned and never
 * wrap; a record with point 0 is padding up to the end of the ring.
 */
struct rxp_capture_rec {
	uint32_t size;		/* bytes of the record, header and padding included */
	uint32_t orig_len;	/* the frame's length */
	uint32_t cap_len;	/* bytes of it in data[] */
	uint16_t port;		/* input port (rx, drop) or output port (tx) */
	uint8_t point;		/* RXP_CAPTURE_RX, _TX or _DROP; 0: padding */
	uint8_t reason;		/* enum rxp_drop_reason, for point DROP */
	uint64_t ts_ns;		/* CLOCK_REALTIME, nanoseconds since the epoch */
	uint32_t rule;		/* a filter drop: RXP_CAPTURE_RULE(chain, rule number from 1; 0: the policy) */
	uint32_t pad;
	uint8_t data[];
};

/* Which rule a filter drop was, as the record and the packet's user[1] carry it. */
#define RXP_CAPTURE_RULE(chain, number) (1u << 31 | (uint32_t)(chain) << 24 | (uint32_t)(number))
#define RXP_CAPTURE_RULE_CHAIN(v) ((v) >> 24 & 0x7f)
#define RXP_CAPTURE_RULE_NUMBER(v) ((v) & 0xffffff)

_Static_assert(sizeof(struct rxp_capture_rec) == 32, "capture record header is 32 bytes");
_Static_assert(offsetof(struct rxp_capture_rec, ts_ns) == 16, "timestamp is 8-byte aligned");

/*
 * Makes a capture: allocates its ring and compiles its filter. Returns 0
 * with *@out set, or -errno with @err saying what is wrong and how to fix it
 * (a bad filter quotes libpcap's message).
 */
int rxp_capture_create(struct rxp_capture **out, const struct rxp_capture_config *cfg,
		       char *err, size_t errlen);

/* Frees the capture. Nothing may use it any more (the stack's pointer is cleared). */
void rxp_capture_destroy(struct rxp_capture *cap);

/* Returns the snap length in use (the configured one, cut to what the ring can hold). */
uint32_t rxp_capture_snaplen(const struct rxp_capture *cap);

/* Reads the counters; any thread. */
void rxp_capture_stats(const struct rxp_capture *cap, struct rxp_capture_stats *out);

/* Returns the packets lost to a full ring on @port. Producer thread, or once it is quiet. */
uint64_t rxp_capture_lost_on_port(const struct rxp_capture *cap, uint16_t port);

/*
 * Parses a point list: "rx", "tx", "drop", "all", or several joined with
 * '+' ("rx+drop"). Returns 0 with *@points set, or -EINVAL.
 */
int rxp_capture_points_parse(const char *text, unsigned *points);

/* ---- the hooks the stack calls (producer) ---- */

/* The received vector: each packet's pkt->port is its port. Starts a burst. */
void rxp_capture_rx(struct rxp_capture *cap, struct rxp_pkt *const *pkts, uint16_t n);

/* The vector about to be handed to tx_burst on @port. */
void rxp_capture_tx(struct rxp_capture *cap, uint16_t port, struct rxp_pkt *const *pkts,
		    uint16_t n);

/* Dropped packets, each under its pkt->drop_reason, counted against pkt->port. */
void rxp_capture_drop_vector(struct rxp_capture *cap, struct rxp_pkt *const *pkts, uint16_t n);

/* One dropped packet under @reason. */
void rxp_capture_drop(struct rxp_capture *cap, const struct rxp_pkt *pkt, unsigned reason);

/*
 * Ends a burst: the next packet captured reads the clock again. The stack
 * calls it when a burst has been sent (rxp_stack_flush).
 */
void rxp_capture_burst_end(struct rxp_capture *cap);

/* ---- the consumer side (one writer thread) ---- */

/*
 * Returns the next record, or NULL when none is ready. It stays valid until
 * rxp_capture_release().
 */
const struct rxp_capture_rec *rxp_capture_peek(struct rxp_capture *cap);

/* Gives the space of every record peeked so far back to the producer. */
void rxp_capture_release(struct rxp_capture *cap);

#endif
