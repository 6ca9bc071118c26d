/* SPDX-License-Identifier: MIT */
/*
 * Ports and queues. Every driver (sim, pcap, afxdp, afpacket, tap) sits
 * behind one ops table with burst calls in the DPDK manner: they take an
 * array and a count and return how many they handled. Whatever tx_burst did
 * not take still belongs to the caller.
 */
#ifndef RXPATH_PORT_H
#define RXPATH_PORT_H

#include "rxpath/common.h"
#include "rxpath/args.h"
#include "rxpath/pool.h"

#define RXP_QUEUES_MAX 64

struct rxp_port;
struct rxp_queue;

/*
 * Per-queue driver counters, touched only by the thread that polls the
 * queue; one entry each: field, Prometheus name, help. The struct, `show
 * stats` and the metrics read them.
 */
#define RXP_QUEUE_COUNTERS(X) \
	X(rx_packets, "rxpath_rx_packets_total", "Frames received.") \
	X(rx_bytes, "rxpath_rx_bytes_total", "Bytes received, without FCS.") \
	X(rx_polls, "rxpath_rx_polls_total", "Receive polls (rx_burst calls).") \
	X(rx_nonempty, "rxpath_rx_nonempty_polls_total", "Receive polls that returned frames.") \
	X(rx_no_buffer, "rxpath_rx_no_buffer_total", \
	  "RX ring refills cut short because the pool was empty.") \
	X(rx_dropped, "rxpath_rx_dropped_total", \
	  "Frames received, then dropped by the stack (any reason).") \
	X(tx_packets, "rxpath_tx_packets_total", "Frames queued for transmit.") \
	X(tx_bytes, "rxpath_tx_bytes_total", "Bytes queued for transmit, without FCS.") \
	X(tx_ring_full, "rxpath_tx_ring_full_total", "Frames the transmit ring could not take.") \
	X(tx_completed, "rxpath_tx_completed_total", "Transmitted buffers returned to the pool.")

struct rxp_queue_stats {
#define RXP_X(field, metric, help) uint64_t field;
	RXP_QUEUE_COUNTERS(RXP_X)
#undef RXP_X
};

/*
 * Frames a driver received but could not hand over in a buffer, by what was
 * wrong: counted in rx_packets, and as drops by the poller after the burst
 * (rxp_stack_take_refused()), so that every frame in has a reason.
 */
enum rxp_rx_refused {
	RXP_RX_REFUSED_TOO_LONG,	/* longer than a buffer takes */
	RXP_RX_REFUSED_CUT,		/* a capture record shorter than its frame */
	RXP_RX_REFUSED_MAX
};

/* Cache-line aligned: each queue's counters are written by its own worker only. */
struct rxp_queue {
	rxp_cache_aligned struct rxp_port *port;
	uint16_t id;
	struct rxp_pool_cache *cache;	/* the polling worker's cache */
	void *priv;			/* driver state */
	struct rxp_queue_stats stats;
	uint32_t rx_refused[RXP_RX_REFUSED_MAX];	/* not yet taken by the poller */
};

/* A driver's own counter, beyond the queue's: a stable name and its value. */
struct rxp_xstat {
	const char *name;
	uint64_t value;
	bool lost;		/* frames that never reached the stack: the kernel or the driver dropped them */
};

#define RXP_XSTATS_MAX 16

/* A capability a driver needs after set-up (the rest may be dropped), and why. */
struct rxp_port_cap {
	int cap;		/* CAP_* number; a list ends with why == NULL */
	const char *why;
};

struct rxp_port_ops {
	const char *driver;
	const char *args_help;	/* one line: the keys the driver takes */
	/* Optional: adjusts the shared pool's layout to what the device needs (AF_XDP's UMEM). */
	void (*pool_config)(struct rxp_pool_config *cfg);
	/* Optional: the capabilities a running port still needs, ended by { 0, NULL }. */
	const struct rxp_port_cap *keep_caps;
	bool kernel_dev;	/* its ports are the kernel interface their dev= names (kernel sync mirrors it) */

	/* Sets up port->priv and queues. Returns 0 or -errno with @err explained. */
	int (*open)(struct rxp_port *port, struct rxp_args *args, char *err, size_t errlen);
	/* Returns up to @n received frames; never more than @n. */
	uint16_t (*rx_burst)(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n);
	/* Queues up to @n frames for transmit; returns how many it took. */
	uint16_t (*tx_burst)(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n);
	/* Posts free buffers to the device in batches. Returns how many it posted. */
	uint32_t (*refill)(struct rxp_queue *q);
	/* Reaps transmit completions; their buffers go back to the pool. Returns how many. */
	uint32_t (*complete)(struct rxp_queue *q);
	/* Returns true once a finite source has delivered everything and holds nothing more. */
	bool (*rx_finished)(struct rxp_queue *q);
	/* Returns true when transmitted frames are all completed. */
	bool (*tx_idle)(struct rxp_queue *q);
	/* Starts the device side (threads) once queues are bound to caches. Returns 0 or -errno. */
	int (*start)(struct rxp_port *port, char *err, size_t errlen);
	/* Stops the device and returns every buffer the port holds to the pool. */
	void (*close)(struct rxp_port *port);
	/*
	 * Looks whether the device went away or came back: slow path, a few times
	 * a second, from the polling thread; NULL for devices that cannot go away.
	 * While gone, the burst calls do nothing and tx_burst takes nothing.
	 * Returns an enum rxp_port_event, with @msg filled in unless RXP_PORT_SAME.
	 */
	int (*check)(struct rxp_port *port, char *msg, size_t msglen);
	/*
	 * Optional: fills @out with up to @max driver counters, summed over the
	 * queues (the kernel's are read: not for the fast path). Returns how many.
	 */
	unsigned (*xstats)(struct rxp_port *port, struct rxp_xstat *out, unsigned max);
	/*
	 * Optional: a file descriptor that poll() finds readable once frames
	 * wait on @q, for a worker that sleeps while its queues are idle;
	 * RXP_WAIT_NONE for a queue with nothing to wait for (its device went
	 * away). Without it, or with -1, the queue is never waited for and its
	 * worker never sleeps (sim, pcap, busy polling).
	 */
	int (*wait_fd)(struct rxp_queue *q);
	/*
	 * Optional: the capture time of the next frame to be received (ns), for
	 * a port that drives the stack's clock (pcap's clock=packets). Returns
	 * 0, -ENOENT when no frame is left, -ENOTSUP when the port does not
	 * drive the clock.
	 */
	int (*next_time_ns)(struct rxp_port *port, uint64_t *ns);
};

#define RXP_WAIT_NONE (-2)

/* What rxp_port_check() found. */
enum rxp_port_event {
	RXP_PORT_SAME,		/* nothing new */
	RXP_PORT_GONE,		/* the device went away (deleted, moved): the port is down */
	RXP_PORT_BACK,		/* a device of that name is back and the port reopened on it */
	RXP_PORT_NOTE,		/* worth telling, no change (e.g. back, but not reopened) */
};

struct rxp_port {
	char name[RXP_PORT_NAME_MAX];
	uint16_t id;
	uint16_t n_queues;
	uint32_t mtu;		/* its device's MTU; 0: no device (sim, pcap, tap) */
	char dev[16];		/* its device's name (IFNAMSIZ); empty: none */
	uint8_t mac[6];
	const struct rxp_port_ops *ops;
	bool down;		/* its device went away: nothing received, nothing sent */
	struct rxp_pool *pool;
	struct rxp_queue queues[RXP_QUEUES_MAX];
	void *priv;
};

/* Returns the ops of driver @name, or NULL. */
const struct rxp_port_ops *rxp_port_driver(const char *name);

/* Returns a comma-separated list of the drivers built in. */
const char *rxp_port_drivers(void);

/* Returns the driver a port spec ("afxdp:dev=eth0") names, or NULL. */
const struct rxp_port_ops *rxp_port_driver_of_spec(const char *spec);

/*
 * Writes to @ifname the kernel interface behind a port spec: its dev= for a
 * driver whose ports are kernel interfaces. Returns false for other specs.
 */
bool rxp_port_spec_kernel_if(const char *spec, char *ifname, size_t len);

/*
 * Opens port @name from @spec ("driver:key=value,...") on @pool.
 * Returns 0 or -errno with @err saying what is wrong and how to fix it.
 */
int rxp_port_open(struct rxp_port *port, uint16_t id, const char *name, const char *spec,
		  struct rxp_pool *pool, char *err, size_t errlen);

/* Binds every queue of @port to @cache and starts the device. Returns 0 or -errno. */
int rxp_port_start(struct rxp_port *port, struct rxp_pool_cache *cache, char *err, size_t errlen);

/*
 * The same with one cache per polling worker: queue q is polled by the
 * worker of caches[q % n_caches] and refilled from its cache. Returns 0 or -errno.
 */
int rxp_port_start_caches(struct rxp_port *port, struct rxp_pool_cache *const *caches,
			  unsigned n_caches, char *err, size_t errlen);

/* Stops the port and returns its buffers to the pool. */
void rxp_port_close(struct rxp_port *port);

/*
 * Asks the driver whether the device went away or came back and marks the
 * port down or up. Returns an enum rxp_port_event; @msg says what happened
 * unless RXP_PORT_SAME.
 */
enum rxp_port_event rxp_port_check(struct rxp_port *port, char *msg, size_t msglen);

/* Sums the queue counters of @port. */
void rxp_port_stats(const struct rxp_port *port, struct rxp_queue_stats *sum);

/* Fills @out with up to @max of the driver's own counters. Returns how many (0: it has none). */
unsigned rxp_port_xstats(struct rxp_port *port, struct rxp_xstat *out, unsigned max);
/*
 * Reads the MTU of @port's device as it is now into *@mtu (slow path: a
 * system call). Returns 0, -EOPNOTSUPP for a port without a device, or -errno.
 */
int rxp_port_device_mtu(const struct rxp_port *port, uint32_t *mtu);
/* The same into port->mtu, the MTU the port last saw its device have. */
int rxp_port_refresh_mtu(struct rxp_port *port);
/* The driver's wait_fd for @q, or -1 when it has none. */
int rxp_queue_wait_fd(struct rxp_queue *q);

static inline uint16_t rxp_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	return q->port->ops->rx_burst(q, pkts, n);
}

static inline uint16_t rxp_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	return q->port->ops->tx_burst(q, pkts, n);
}

#endif
