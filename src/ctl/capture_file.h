/* SPDX-License-Identifier: MIT */
/*
 * Capture to a pcapng file: what `capture start POINT FILE [count N]
 * [filter EXPR]` and `capture stop` do. Starting makes a capture
 * (net/capture.h), creates the file with one Interface
 * Description Block per captured port (named as rxpath names the port) and
 * starts a writer thread that drains the capture's ring into Enhanced
 * Packet Blocks: time stamp, direction in epb_flags (inbound for rx and
 * drop, outbound for tx) and, for a dropped packet, the drop reason's name
 * as the packet comment. Stopping drains the ring, writes everything and
 * an Interface Statistics Block per port (packets lost to a full ring),
 * and closes the file.
 *
 * Context: start and stop run on the thread that runs the stack; the
 * writer thread only reads the ring and writes the file.
 */
#ifndef RXPATH_CAPTURE_FILE_H
#define RXPATH_CAPTURE_FILE_H

#include "net/capture.h"
#include "rxpath/stack.h"

#define RXP_CAPTURE_FILE_ALL_PORTS (-1)

struct rxp_capture_file;

struct rxp_capture_file_spec {
	const char *path;		/* the pcapng file, created or truncated */
	unsigned points;		/* RXP_CAPTURE_RX | _TX | _DROP (rxp_capture_points_parse) */
	int port;			/* a port id, or RXP_CAPTURE_FILE_ALL_PORTS */
	uint64_t count;			/* stop capturing after this many packets; 0: no limit */
	uint32_t snaplen;		/* 0: RXP_CAPTURE_SNAPLEN_DEFAULT */
	const char *filter;		/* tcpdump syntax; NULL or "": none */
	uint32_t ring_bytes;		/* capture buffer; 0: RXP_CAPTURE_RING_DEFAULT */
	const char *const *port_names;	/* by port id; NULL or "": no such port */
	unsigned n_ports;		/* entries in port_names, at most RXP_PORTS_MAX */
	unsigned rings;			/* one per worker that captures (0: one), at most RXP_CAPTURE_FILE_RINGS_MAX */
};

#define RXP_CAPTURE_FILE_RINGS_MAX 64

struct rxp_capture_file_stats {
	uint64_t captured;	/* copied off the datapath */
	uint64_t lost;		/* not captured: the buffer was full */
	uint64_t filtered;	/* not captured: the filter said no */
	bool count_reached;	/* the count is reached: time to stop */
	uint64_t written;	/* packets in the file so far */
	uint64_t file_bytes;	/* bytes in the file so far */
	int write_errno;	/* 0, or why writing the file failed (packets are then discarded) */
};

/*
 * Opens a capture to @spec->path and starts its writer thread; the capture
 * is not attached to any stack. Returns 0 with *@out set, or -errno with
 * @err naming the problem and the fix. On error no file is created or
 * truncated unless the problem is writing to it.
 */
int rxp_capture_file_open(struct rxp_capture_file **out, const struct rxp_capture_file_spec *spec,
			  char *err, size_t errlen);

/* Returns ring @ring's capture, to hand to its worker's rxp_stack_set_capture(); NULL past the rings. */
struct rxp_capture *rxp_capture_file_ring(struct rxp_capture_file *cf, unsigned ring);
/* The first ring's: the capture of a one-stack file. */
struct rxp_capture *rxp_capture_file_capture(struct rxp_capture_file *cf);

/* Returns the path being written. */
const char *rxp_capture_file_path(const struct rxp_capture_file *cf);

/* Reads the counters so far; any thread. */
void rxp_capture_file_stats(const struct rxp_capture_file *cf, struct rxp_capture_file_stats *out);

/*
 * Drains the ring into the file, joins the writer, writes the statistics
 * blocks and closes the file; frees @cf. Detach the capture from the stack
 * first. Fills @final (may be NULL). Returns 0, or -errno with @err when
 * writing the file failed (it is closed all the same).
 */
int rxp_capture_file_close(struct rxp_capture_file *cf, struct rxp_capture_file_stats *final,
			   char *err, size_t errlen);

/*
 * Opens a capture of one ring per stack of @st[0..@n) (the workers': each
 * ring has one producer, the writer drains them all into the one file,
 * each ring's packets in their order, the count shared) and attaches
 * them, the workers waiting between polls. Returns 0 with *@out set, or
 * -errno with @err (-EBUSY when a stack already has a capture).
 */
int rxp_capture_file_start_stacks(struct rxp_stack *const *st, unsigned n,
				  const struct rxp_capture_file_spec *spec, struct rxp_capture_file **out,
				  char *err, size_t errlen);

/* Detaches @cf from the stacks and closes it. Returns as rxp_capture_file_close(). */
int rxp_capture_file_stop_stacks(struct rxp_stack *const *st, unsigned n, struct rxp_capture_file *cf,
				 struct rxp_capture_file_stats *final, char *err, size_t errlen);

/* The same for one stack. */
int rxp_capture_file_start(struct rxp_stack *st, const struct rxp_capture_file_spec *spec,
			   struct rxp_capture_file **out, char *err, size_t errlen);
int rxp_capture_file_stop(struct rxp_stack *st, struct rxp_capture_file *cf,
			  struct rxp_capture_file_stats *final, char *err, size_t errlen);

#endif
