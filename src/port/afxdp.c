/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP port driver.
 *
 * The buffer pool's region is the UMEM, registered once per pool and shared
 * by every AF_XDP socket on it (XDP_SHARED_UMEM): a frame received on one
 * port is put on another port's TX ring as it lies. Each queue is one socket
 * with four rings, used like a NIC's:
 *   fill  (we produce)  free buffers for the kernel to receive into; refilled in batches
 *   rx    (we consume)  received frames
 *   tx    (we produce)  frames to send
 *   comp  (we consume)  sent frames whose buffers are ours again
 *
 * UMEM layout. The kernel wants chunks of 2 KiB or more; the pool's precise
 * stride (1664 B, or 1856 B with the XDP headroom) is neither. Unaligned chunk
 * mode would take it, but there the kernel may write up to chunk_size bytes
 * from a fill address, so every buffer would need 2 KiB after its metadata
 * anyway, with no bound the kernel enforces between neighbours. So the pool
 * uses a power-of-two stride (2048 B for 1518-byte frames) and the UMEM is in
 * aligned mode: the kernel rounds a fill address down to its chunk and writes
 * the frame at chunk + frame_headroom + XDP_PACKET_HEADROOM, never past the
 * chunk. frame_headroom covers our 64 bytes of metadata (and the rx offset),
 * so the kernel never touches struct rxp_pkt, and the frame lands exactly at
 * pool->data_off (the pool's headroom is XDP_PACKET_HEADROOM).
 *
 * Ring barriers. libxdp's inline ring calls do the loads and stores; their
 * partners are the kernel's, in net/xdp/xsk_queue.h ("barriers A-D"):
 * our producer submit (store-release of producer) pairs with the kernel
 * consumer's smp_rmb (C) before it reads the entries; our consumer peek
 * (load-acquire of producer) pairs with the kernel producer's smp_wmb (B)
 * after it wrote them; our consumer release (store-release of consumer)
 * pairs with the kernel producer's control dependency (A) before it reuses
 * the slots.
 *
 * Buffers the kernel holds are marked in a byte per buffer (set when posted
 * on the fill or TX ring, cleared when they come back on the RX or completion
 * ring). When the UMEM is torn down every marked buffer goes back to the
 * pool: frames the kernel dropped from its internal free lists, frames still
 * on a ring, all of them.
 *
 * A device that goes away (deleted, or moved to another namespace) unbinds
 * its sockets. The port check sees its ifindex vanish and the port goes
 * down: the bursts do nothing from then on, and what the dead sockets hold
 * comes back when the UMEM is torn down. A device of the same name showing
 * up again is reported, not reopened: that takes a restart.
 */
#include <errno.h>
#include <linux/capability.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#include "afxdp.h"
#include "netdev.h"
#include "xdp_features.h"
#include "rxpath/port.h"

#define AFXDP_RING_SIZE 1024u	/* fill, rx, tx, completion: 2 ring-fulls per port in the kernel */
#define AFXDP_FILL_BATCH 32u	/* post free buffers in batches, like a driver's RX refill */
#define AFXDP_COMP_BATCH 64u
#define AFXDP_BIND_TRIES 40	/* EBUSY: a previous socket on the queue is still going away */
#define AFXDP_BIND_WAIT_NS 50000000L
#define AFXDP_PROG_FILE "xsk_def_xdp_prog.o"
#define AFXDP_KEYS "dev, queues, mode, zerocopy, busypoll, coalesce, mac"
#define AFXDP_BUSYPOLL_MAX_US 10000u
#define AFXDP_BUSYPOLL_BUDGET 64	/* frames the kernel's NAPI takes per busy poll */
/*
 * Coalescing: after a NAPI poll that found work, the device's interrupts
 * (veth: the kick its peer gives per frame) stay off for
 * napi_defer_hard_irqs further polls, which the gro_flush_timeout timer
 * runs; the NAPI then takes a batch per poll instead of a frame.
 */
#define AFXDP_NAPI_DEFER_IRQS "2"
#define AFXDP_COALESCE_DEFAULT_US 200u	/* with busypoll=, unless coalesce= says otherwise */
#define AFXDP_COALESCE_MAX_US 1000u	/* a veth ring (256 frames) fills in ~0.6 ms at 400 kpps */

_Static_assert(RXP_AFXDP_HEADROOM == XDP_PACKET_HEADROOM,
	       "the pool's headroom must be the kernel's XDP headroom");

/* One UMEM: a pool registered with the kernel, shared by the AF_XDP ports on it. */
struct afxdp_umem {
	struct afxdp_umem *next;
	struct rxp_pool *pool;
	struct xsk_umem *umem;
	/* rings made with the UMEM; the first socket takes them over */
	struct xsk_ring_prod fq0;
	struct xsk_ring_cons cq0;
	unsigned n_ports;
	unsigned n_sockets;
	bool zerocopy;		/* the first socket's mode; sockets sharing the UMEM inherit it */
	uint8_t *in_kernel;	/* per buffer: 1 while on a fill/rx/tx/completion ring */
};

struct afxdp_queue {
	/* fast path first: the four rings and what rx/tx need */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	uint8_t *base;
	uint8_t *in_kernel;
	uint64_t chunk_mask;	/* clears the offset within a buffer */
	uint64_t umem_len;	/* bytes of the UMEM: descriptors must point inside */
	uint32_t buf_size;
	uint32_t tx_outstanding;	/* on the TX or completion ring, not yet reaped */
	int fd;
	uint64_t rx_wakeups;
	uint64_t rx_bad_descs;	/* RX descriptors from the kernel naming no buffer of ours: skipped */
	uint64_t tx_bad_descs;	/* completions naming no buffer we sent: skipped */
	uint64_t tx_kicks;
	uint64_t tx_kick_errors;
	uint64_t busy_polls;
	bool tx_blocked;	/* kicks fail, the device is down: retried by the port check */
	uint8_t down_checks;	/* port checks that found it blocked in a row */
	bool napi_checked;	/* busypoll: the socket's NAPI id was looked at */
	bool no_napi;		/* busypoll: the socket has no NAPI to poll (veth); no recvfrom */
	struct xsk_socket *xsk;
	bool in_map;
};

struct afxdp_port {
	struct afxdp_port *next;	/* every open AF_XDP port, under umems_lock */
	const char *name;
	struct afxdp_umem *um;
	bool gone;		/* the device went away: bursts do nothing */
	int noted_ifindex;	/* a device of our name that came back, reported */
	char dev[IF_NAMESIZE];
	char driver[32];
	int ifindex;
	struct xdp_program *prog;	/* ours, attached; NULL once detached */
	enum xdp_attach_mode mode;
	int map_fd;
	uint32_t busypoll_us;	/* 0: need_wakeup only */
	uint32_t coalesce_us;	/* 0: the device's NAPI settings are left alone */
	/* the device's NAPI settings before coalescing changed them, put back at close */
	char saved_defer_irqs[24];
	char saved_flush_timeout[24];
	struct afxdp_queue q[];
};

static pthread_mutex_t umems_lock = PTHREAD_MUTEX_INITIALIZER;
static struct afxdp_umem *umems;
static struct afxdp_port *ports;

/* The pool is the UMEM: XDP_PACKET_HEADROOM before each frame, power-of-two buffers. */
static void afxdp_pool_config(struct rxp_pool_config *cfg)
{
	cfg->headroom = RXP_AFXDP_HEADROOM;
	cfg->pow2_sized = true;
}

/*
 * At exit libxdp looks the attached program up by its id
 * (BPF_PROG_GET_FD_BY_ID: CAP_SYS_ADMIN, which also covers CAP_BPF for a
 * dispatcher it must reload) and detaches it over rtnetlink (CAP_NET_ADMIN).
 */
static const struct rxp_port_cap afxdp_keep_caps[] = {
	{ CAP_NET_ADMIN, "XDP program removal at exit" },
	{ CAP_SYS_ADMIN, "libxdp looks the XDP program up by id at exit" },
	{ 0, NULL },
};

/* ---- errors in context ---- */

/* Fills @err with "@step failed: errno text; hint" and returns @ret (a -errno). */
static int step_error(char *err, size_t errlen, int ret, const char *step, const char *fmt, ...)
{
	char hint[200] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(hint, sizeof(hint), fmt, ap);
		va_end(ap);
	}
	snprintf(err, errlen, "%s failed: %s%s%s", step, strerror(-ret), hint[0] ? "; " : "", hint);
	return ret;
}

static const char *perm_hint(int ret)
{
	if (ret == -EPERM || ret == -EACCES)
		return "needs CAP_NET_RAW, CAP_NET_ADMIN and CAP_BPF (CAP_SYS_ADMIN on kernels before 5.8): run as root";
	return NULL;
}

/* ---- the shared UMEM ---- */

static void umem_reclaim(struct afxdp_umem *um)
{
	struct rxp_pool *pool = um->pool;
	struct rxp_pkt *batch[64];
	uint32_t n = 0;

	for (uint32_t i = 0; i < pool->n_bufs; i++) {
		if (!um->in_kernel[i])
			continue;
		um->in_kernel[i] = 0;
		batch[n++] = rxp_pool_buf(pool, i);
		if (n == RXP_ARRAY_SIZE(batch)) {
			rxp_pool_put_ring(pool, batch, n);
			n = 0;
		}
	}
	rxp_pool_put_ring(pool, batch, n);
}

/* Registers the region with the kernel. Returns 0 or -errno with @err. */
static int umem_register(struct afxdp_umem *um, char *err, size_t errlen)
{
	struct rxp_pool *pool = um->pool;
	struct xsk_umem_config ucfg = {
		.fill_size = AFXDP_RING_SIZE,
		.comp_size = AFXDP_RING_SIZE,
		.frame_size = pool->buf_size,
		/* the metadata and the rx offset: the kernel starts after them */
		.frame_headroom = pool->data_off - RXP_AFXDP_HEADROOM,
		.flags = 0,
	};
	struct rlimit rl;
	int ret;

	if (!rxp_is_pow2(pool->buf_size) || pool->buf_size > 4096 ||
	    pool->headroom != RXP_AFXDP_HEADROOM) {
		snprintf(err, errlen,
			 "UMEM: buffers of %u bytes with %u bytes of headroom do not fit AF_XDP (2048 or 4096-byte buffers, %u headroom); lower --max-frame to at most %u",
			 pool->buf_size, pool->headroom, RXP_AFXDP_HEADROOM,
			 4096 - RXP_PKT_META_SIZE - RXP_AFXDP_HEADROOM - pool->rx_offset);
		return -EINVAL;
	}
	/* The kernel pins the UMEM against RLIMIT_MEMLOCK unless we have CAP_IPC_LOCK. */
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < pool->region_len * 2) {
		rl.rlim_cur = RXP_MIN(rl.rlim_max, (rlim_t)pool->region_len * 2);
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	ret = xsk_umem__create(&um->umem, pool->base, pool->region_len, &um->fq0, &um->cq0, &ucfg);
	if (ret) {
		um->umem = NULL;
		if (ret == -EAFNOSUPPORT)
			return step_error(err, errlen, ret, "UMEM create (AF_XDP socket)",
					  "the kernel has no AF_XDP (CONFIG_XDP_SOCKETS); use afpacket:dev=IFACE");
		if (ret == -ENOBUFS || ret == -ENOMEM)
			return step_error(err, errlen, ret, "UMEM register",
					  "memlock limit too low for %zu bytes: ulimit -l unlimited (or give CAP_IPC_LOCK)",
					  pool->region_len);
		return step_error(err, errlen, ret, "UMEM register", "%s",
				  perm_hint(ret) ?: "check the pool settings (--max-frame, --buffers)");
	}
	return 0;
}

/* Sets *@out to the UMEM of @pool, registering it on first use. Returns 0 or -errno with @err. */
static int umem_get(struct rxp_pool *pool, struct afxdp_umem **out, char *err, size_t errlen)
{
	struct afxdp_umem *um;
	int ret = 0;

	pthread_mutex_lock(&umems_lock);
	for (um = umems; um; um = um->next)
		if (um->pool == pool)
			break;
	if (!um) {
		um = calloc(1, sizeof(*um));
		if (!um || !(um->in_kernel = calloc(pool->n_bufs, 1))) {
			free(um);
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			goto out;
		}
		um->pool = pool;
		ret = umem_register(um, err, errlen);
		if (ret) {
			free(um->in_kernel);
			free(um);
			goto out;
		}
		um->next = umems;
		umems = um;
	}
	um->n_ports++;
	*out = um;
out:
	pthread_mutex_unlock(&umems_lock);
	return ret;
}

/* Drops a port's reference; the last one deletes the UMEM and takes every buffer back. */
static void umem_put(struct afxdp_umem *um)
{
	struct afxdp_umem **pp;

	pthread_mutex_lock(&umems_lock);
	if (--um->n_ports == 0) {
		for (pp = &umems; *pp != um; pp = &(*pp)->next)
			;
		*pp = um->next;
		/* every socket is gone, so the kernel holds no buffer any more */
		xsk_umem__delete(um->umem);
		umem_reclaim(um);
		free(um->in_kernel);
		free(um);
	}
	pthread_mutex_unlock(&umems_lock);
}

/* ---- fast path ---- */

static rxp_noinline void rx_wakeup(struct afxdp_queue *aq)
{
	/* the driver sleeps until told the fill ring has buffers again */
	recvfrom(aq->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	aq->rx_wakeups++;
}

/*
 * The first frame has come: the socket now has the NAPI id of the queue it
 * came from, or none when the driver registers its XDP queue without one
 * (veth does, Linux 6.18). Then busy polling has nothing to poll and the recvfrom per
 * poll would be a system call for nothing: it stops, and the user hears why.
 */
static rxp_noinline void busy_poll_check(const struct afxdp_port *ap, struct afxdp_queue *aq,
					 uint16_t qid)
{
	unsigned int napi_id = 0;
	socklen_t len = sizeof(napi_id);

	aq->napi_checked = true;
	if (getsockopt(aq->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi_id, &len) || napi_id)
		return;
	aq->no_napi = true;
	fprintf(stderr,
		"afxdp %s dev %s queue %u: busy polling has nothing to poll: the kernel gave the "
		"socket no NAPI id (driver %s registers its XDP queue without one, as veth does, or "
		"the kernel lacks CONFIG_NET_RX_BUSY_POLL), so the device's NAPI stays in softirq; "
		"coalescing still batches it (napi_defer_hard_irqs, gro_flush_timeout %u us). No "
		"recvfrom per poll from now on.\n",
		ap->name, ap->dev, qid, ap->driver[0] ? ap->driver : "unknown", ap->coalesce_us);
}

/*
 * Copy mode transmits only from sendto(); zero-copy drivers when woken. A
 * device that is down (ENETDOWN) or going away keeps the frames on the TX
 * ring: the port check retries then, ten times a second, not every poll.
 */
static rxp_noinline void tx_kick(struct afxdp_queue *aq)
{
	aq->tx_kicks++;
	if (sendto(aq->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 || errno == EAGAIN ||
	    errno == EBUSY || errno == ENOBUFS) {
		aq->tx_blocked = false;
		return;
	}
	aq->tx_kick_errors++;
	aq->tx_blocked = errno == ENETDOWN || errno == ENXIO || errno == ENODEV;
}

static uint32_t afxdp_refill(struct rxp_queue *q)
{
	struct afxdp_port *ap = q->port->priv;
	struct afxdp_queue *aq = &ap->q[q->id];
	const struct rxp_pool *pool = q->port->pool;
	uint32_t n_free = xsk_prod_nb_free(&aq->fq, AFXDP_FILL_BATCH);
	uint32_t posted = 0;

	if (n_free < AFXDP_FILL_BATCH || rxp_unlikely(ap->gone))
		return 0;
	while (posted < n_free) {
		struct rxp_pkt *bufs[64];
		uint32_t want = RXP_MIN(n_free - posted, (uint32_t)RXP_ARRAY_SIZE(bufs));
		uint32_t got = rxp_pool_alloc_burst(q->cache, bufs, want);
		uint32_t idx;

		if (!got || xsk_ring_prod__reserve(&aq->fq, got, &idx) != got) {
			rxp_pool_free_bulk(q->cache, bufs, got);
			q->stats.rx_no_buffer += !got;
			break;
		}
		for (uint32_t i = 0; i < got; i++) {
			uint64_t off = rxp_pool_buf_offset(pool, bufs[i]);

			/* the chunk start: the kernel skips frame_headroom (our metadata) itself */
			*xsk_ring_prod__fill_addr(&aq->fq, idx + i) = off;
			aq->in_kernel[off / pool->buf_size] = 1;
		}
		posted += got;
		if (got < want) {
			q->stats.rx_no_buffer++;
			break;
		}
	}
	/* Store-release of the producer: pairs with the kernel's (C) in xskq_cons_peek_addr. */
	if (posted)
		xsk_ring_prod__submit(&aq->fq, posted);
	return posted;
}

static uint16_t afxdp_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct afxdp_port *ap = q->port->priv;
	struct afxdp_queue *aq = &ap->q[q->id];
	const uint32_t shift = (uint32_t)__builtin_ctz(q->port->pool->buf_size);
	uint64_t bytes = 0;
	uint32_t idx = 0, got, taken = 0;

	if (rxp_unlikely(ap->gone))
		return 0;
	q->stats.rx_polls++;
	/*
	 * Busy polling: this call runs the device's NAPI here, on our CPU,
	 * instead of in a softirq wherever the device raised it. One system
	 * call per poll, whatever the batch.
	 */
	if (ap->busypoll_us && !aq->no_napi) {
		recvfrom(aq->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		aq->busy_polls++;
	}
	/* Load-acquire of the producer: pairs with the kernel's (B) in xskq_prod_submit. */
	got = xsk_ring_cons__peek(&aq->rx, n, &idx);
	if (!got) {
		/* need_wakeup: only a driver that stopped for want of buffers is poked */
		if (xsk_ring_prod__needs_wakeup(&aq->fq))
			rx_wakeup(aq);
		return 0;
	}
	if (rxp_unlikely(ap->busypoll_us && !aq->napi_checked))
		busy_poll_check(ap, aq, q->id);
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&aq->rx, idx + i);
		uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
		uint64_t chunk = addr & aq->chunk_mask;
		struct rxp_pkt *pkt = (struct rxp_pkt *)(aq->base + chunk);

		/* a buffer of ours that the kernel held, and the frame within it: else skipped */
		if (rxp_unlikely(chunk >= aq->umem_len || addr - chunk + d->len > aq->buf_size ||
				 aq->in_kernel[chunk >> shift] != 1 ||
				 addr - chunk < RXP_PKT_META_SIZE)) {
			aq->rx_bad_descs++;
			continue;
		}
		pkt->data_off = (uint16_t)(addr - chunk);
		pkt->len = (uint16_t)d->len;
		pkt->port = q->port->id;
		pkt->queue = q->id;
		aq->in_kernel[chunk >> shift] = 0;
		bytes += d->len;
		pkts[taken++] = pkt;
	}
	/* Store-release of the consumer: pairs with the kernel's (A) before it reuses the slots. */
	xsk_ring_cons__release(&aq->rx, got);
	q->stats.rx_nonempty++;
	q->stats.rx_packets += taken;
	q->stats.rx_bytes += bytes;
	return (uint16_t)taken;
}

/* Returns true when frames wait on the TX ring that the kernel has not taken yet. */
static inline bool tx_ring_pending(struct afxdp_queue *aq)
{
	/* refreshes cached_cons with a load-acquire of the consumer: pairs with the kernel's (D) */
	return xsk_prod_nb_free(&aq->tx, aq->tx.size) < aq->tx.size;
}

static uint16_t afxdp_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct afxdp_port *ap = q->port->priv;
	struct afxdp_queue *aq = &ap->q[q->id];
	const struct rxp_pool *pool = q->port->pool;
	uint32_t room = xsk_prod_nb_free(&aq->tx, n);
	uint64_t bytes = 0;
	uint32_t idx;

	if (rxp_unlikely(ap->gone))
		return 0;	/* nothing taken: the stack counts it as port_down */
	if (n > room) {
		q->stats.tx_ring_full += n - room;
		n = (uint16_t)room;
	}
	if (!n || xsk_ring_prod__reserve(&aq->tx, n, &idx) != n)
		return 0;
	for (uint16_t i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&aq->tx, idx + i);
		uint64_t off = rxp_pool_buf_offset(pool, pkts[i]);

		d->addr = off + pkts[i]->data_off;
		d->len = pkts[i]->len;
		d->options = 0;
		aq->in_kernel[off / pool->buf_size] = 1;
		bytes += pkts[i]->len;
	}
	/* Store-release of the producer: pairs with the kernel's (C) in xskq_cons_peek_desc. */
	xsk_ring_prod__submit(&aq->tx, n);
	aq->tx_outstanding += n;
	q->stats.tx_packets += n;
	q->stats.tx_bytes += bytes;
	/* one kick per burst, and only when the kernel asks for it */
	if (xsk_ring_prod__needs_wakeup(&aq->tx) && !aq->tx_blocked)
		tx_kick(aq);
	return n;
}

static uint32_t afxdp_complete(struct rxp_queue *q)
{
	struct afxdp_port *ap = q->port->priv;
	struct afxdp_queue *aq = &ap->q[q->id];
	const uint32_t shift = (uint32_t)__builtin_ctz(q->port->pool->buf_size);
	struct rxp_pkt *done[AFXDP_COMP_BATCH];
	uint32_t total = 0, got, idx, n = 0;

	if (!aq->tx_outstanding || rxp_unlikely(ap->gone))
		return 0;
	/* Load-acquire of the producer: pairs with the kernel's (B) in xskq_prod_submit_n. */
	while ((got = xsk_ring_cons__peek(&aq->cq, AFXDP_COMP_BATCH, &idx)) > 0) {
		for (uint32_t i = 0; i < got; i++) {
			uint64_t chunk = *xsk_ring_cons__comp_addr(&aq->cq, idx + i) & aq->chunk_mask;

			/* only a buffer we handed over comes back: never one freed twice */
			if (rxp_unlikely(chunk >= aq->umem_len || aq->in_kernel[chunk >> shift] != 1)) {
				aq->tx_bad_descs++;
				continue;
			}
			aq->in_kernel[chunk >> shift] = 0;
			done[n++] = (struct rxp_pkt *)(aq->base + chunk);
		}
		/* Store-release of the consumer: pairs with the kernel's (A) in xskq_prod_reserve. */
		xsk_ring_cons__release(&aq->cq, got);
		rxp_pool_free_bulk(q->cache, done, n);
		total += got;
		n = 0;
	}
	aq->tx_outstanding -= total;
	q->stats.tx_completed += total;
	/* Copy mode sends a bounded batch per sendto(): push the rest of a long burst on. */
	if (aq->tx_outstanding && tx_ring_pending(aq) && xsk_ring_prod__needs_wakeup(&aq->tx) &&
	    !aq->tx_blocked)
		tx_kick(aq);
	return total;
}

static bool afxdp_rx_finished(struct rxp_queue *q)
{
	(void)q;
	return false;	/* a real interface never runs dry for good */
}

static bool afxdp_tx_idle(struct rxp_queue *q)
{
	struct afxdp_port *ap = q->port->priv;

	return ap->gone || ap->q[q->id].tx_outstanding == 0;
}

/*
 * Sends what waits on the TX rings of a device that was down, once per
 * check. One still down after a whole check period is said once.
 */
static int link_check(struct rxp_port *port, char *msg, size_t msglen)
{
	struct afxdp_port *ap = port->priv;
	bool blocked = false, say = false;

	for (uint16_t q = 0; q < port->n_queues; q++) {
		struct afxdp_queue *aq = &ap->q[q];

		if (rxp_likely(!aq->tx_blocked)) {
			aq->down_checks = 0;
			continue;
		}
		tx_kick(aq);
		if (!aq->tx_blocked) {
			aq->down_checks = 0;
			continue;
		}
		blocked = true;
		if (aq->down_checks < 2 && ++aq->down_checks == 2)
			say = true;
	}
	if (!blocked || !say)
		return RXP_PORT_SAME;
	snprintf(msg, msglen, "interface %s is down: frames for it wait in its TX ring; bring it up (ip link set %s up)",
		 ap->dev, ap->dev);
	return RXP_PORT_NOTE;
}

/* The ifindex vanishes with the device; a name that comes back is a new device. */
static int afxdp_check(struct rxp_port *port, char *msg, size_t msglen)
{
	struct afxdp_port *ap = port->priv;
	char name[IF_NAMESIZE];
	int ifindex, ret;

	if (!ap->gone) {
		ret = rxp_netdev_ifname((unsigned)ap->ifindex, name);
		if (ret != -ENXIO && ret != -ENODEV)
			return link_check(port, msg, msglen);
		ap->gone = true;
		snprintf(msg, msglen, "interface %s is gone (deleted or moved to another namespace)",
			 ap->dev);
		return RXP_PORT_GONE;
	}
	ifindex = rxp_netdev_ifindex(ap->dev);
	if (ifindex <= 0 || ifindex == ap->noted_ifindex)
		return RXP_PORT_SAME;
	ap->noted_ifindex = ifindex;
	snprintf(msg, msglen, "interface %s is back (ifindex %d), but AF_XDP ports are not reopened while running; restart rxpath to use it",
		 ap->dev, ifindex);
	return RXP_PORT_NOTE;
}

/* ---- setup ---- */

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("RXPATH_AFXDP_DEBUG"))
		return 0;
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("RXPATH_AFXDP_DEBUG"))
		return 0;
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

/* Reads the interface's MAC, MTU, driver name and queue count. Returns 0 or -errno. */
static int read_iface(struct rxp_port *port, struct afxdp_port *ap, bool want_mac,
		      uint32_t *n_dev_queues)
{
	int fd = rxp_netdev_socket();
	int ret = 0;

	if (fd < 0)
		return fd;
	if (want_mac && (ret = rxp_netdev_hwaddr(fd, ap->dev, port->mac, NULL)))
		goto out;
	if ((ret = rxp_netdev_mtu(fd, ap->dev, &port->mtu)))
		goto out;
	if (rxp_netdev_driver(fd, ap->dev, ap->driver, sizeof(ap->driver)))
		snprintf(ap->driver, sizeof(ap->driver), "%s", "unknown driver");
	if (rxp_netdev_rx_channels(fd, ap->dev, n_dev_queues) || !*n_dev_queues)
		*n_dev_queues = 1;
out:
	close(fd);
	return ret;
}

/* Attaches the kernel's XSK redirect program in @mode. Returns 0 or -errno with @err. */
static int attach_prog(struct afxdp_port *ap, enum xdp_attach_mode mode, uint32_t map_size,
		       char *err, size_t errlen)
{
	struct bpf_map *map;
	int ret;

	ap->prog = xdp_program__find_file(AFXDP_PROG_FILE, NULL, NULL);
	ret = (int)libxdp_get_error(ap->prog);
	if (ret || !ap->prog) {
		ap->prog = NULL;
		return step_error(err, errlen, ret ?: -ENOENT, "XDP program load (" AFXDP_PROG_FILE ")",
				  "install libxdp1, which ships it in /usr/lib/<arch>/bpf, or point LIBXDP_OBJECT_PATH at it");
	}
	map = bpf_object__find_map_by_name(xdp_program__bpf_obj(ap->prog), "xsks_map");
	if (!map || bpf_map__set_max_entries(map, map_size)) {
		xdp_program__close(ap->prog);
		ap->prog = NULL;
		snprintf(err, errlen, "XDP program " AFXDP_PROG_FILE " has no xsks_map; reinstall libxdp1");
		return -ENOENT;
	}
	ret = xdp_program__attach(ap->prog, ap->ifindex, mode, 0);
	if (ret) {
		xdp_program__close(ap->prog);
		ap->prog = NULL;
		if (perm_hint(ret))
			return step_error(err, errlen, ret, "XDP attach", "%s", perm_hint(ret));
		if (mode == XDP_MODE_NATIVE)
			return step_error(err, errlen, ret, "XDP attach (native mode)",
					  "driver %s may have no native XDP, or the MTU is too large for it; use mode=skb (or mode=auto)",
					  ap->driver);
		return step_error(err, errlen, ret, "XDP attach (skb mode)",
				  "is bpffs mounted (mount -t bpf bpf /sys/fs/bpf)? RXPATH_AFXDP_DEBUG=1 shows libxdp's reasons");
	}
	ap->mode = mode;
	ap->map_fd = bpf_map__fd(map);
	return 0;
}

static void detach_prog(struct afxdp_port *ap)
{
	if (!ap->prog)
		return;
	xdp_program__detach(ap->prog, ap->ifindex, ap->mode, 0);
	xdp_program__close(ap->prog);
	ap->prog = NULL;
}

/* Creates and binds the socket of queue @qid. Returns 0 or -errno with @err. */
static int open_socket(struct rxp_port *port, struct afxdp_port *ap, uint16_t qid,
		       const char *zerocopy, uint32_t n_dev_queues, char *err, size_t errlen)
{
	struct afxdp_queue *aq = &ap->q[qid];
	struct afxdp_umem *um = ap->um;
	bool first = um->n_sockets == 0;
	struct xsk_socket_config xcfg = {
		.rx_size = AFXDP_RING_SIZE,
		.tx_size = AFXDP_RING_SIZE,
		/* we attach the program ourselves: the mode is ours to choose and undo */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xdp_options opts;
	socklen_t optlen = sizeof(opts);
	char step[64], coalesce[40] = "";
	int ret = 0;

	if (!strcmp(zerocopy, "on"))
		xcfg.bind_flags |= XDP_ZEROCOPY;
	else if (!strcmp(zerocopy, "off"))
		xcfg.bind_flags |= XDP_COPY;
	/* without either flag the kernel tries zero-copy and falls back to copy mode */
	snprintf(step, sizeof(step), "bind dev=%s queue %u", ap->dev, qid);
	for (int tries = 0; tries < AFXDP_BIND_TRIES; tries++) {
		/* the UMEM's own rings for the first socket: a failed try then leaves them mapped */
		ret = xsk_socket__create_shared(&aq->xsk, ap->dev, qid, um->umem, &aq->rx, &aq->tx,
						first ? &um->fq0 : &aq->fq,
						first ? &um->cq0 : &aq->cq, &xcfg);
		if (ret != -EBUSY)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = AFXDP_BIND_WAIT_NS }, NULL);
	}
	if (ret) {
		aq->xsk = NULL;
		if (ret == -EBUSY)
			return step_error(err, errlen, ret, step,
					  "another AF_XDP socket holds this queue (another rxpath, or two ports on one device?)");
		if (ret == -EOPNOTSUPP && (xcfg.bind_flags & XDP_ZEROCOPY))
			return step_error(err, errlen, ret, step,
					  "zero-copy not supported by driver %s; use zerocopy=auto",
					  ap->driver);
		if (!first && (ret == -EOPNOTSUPP || ret == -EINVAL) && um->zerocopy)
			return step_error(err, errlen, ret, step,
					  "ports sharing buffers share the first port's zero-copy mode, which driver %s lacks; use zerocopy=off on every afxdp port",
					  ap->driver);
		if (ret == -EINVAL && qid >= n_dev_queues)
			return step_error(err, errlen, ret, step,
					  "%s has %u queue(s); lower queues=", ap->dev, n_dev_queues);
		if (ret == -ENODEV || ret == -ENXIO)
			return step_error(err, errlen, ret, step, "dev=%s: no such interface",
					  ap->dev);
		if (ret == -ENETDOWN)
			return step_error(err, errlen, ret, step, "bring it up: ip link set dev %s up",
					  ap->dev);
		return step_error(err, errlen, ret, step, "%s",
				  perm_hint(ret) ?: "RXPATH_AFXDP_DEBUG=1 shows libxdp's reasons");
	}
	if (first) {
		/* take the UMEM's rings over as this queue's own */
		aq->fq = um->fq0;
		aq->cq = um->cq0;
	}
	um->n_sockets++;
	aq->fd = xsk_socket__fd(aq->xsk);
	if (ap->busypoll_us) {
		int one = 1, us = (int)ap->busypoll_us, budget = AFXDP_BUSYPOLL_BUDGET;

		snprintf(step, sizeof(step), "busy poll on dev=%s queue %u", ap->dev, qid);
		if (setsockopt(aq->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
		    setsockopt(aq->fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us)) ||
		    setsockopt(aq->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
			return step_error(err, errlen, -errno, step, "%s",
					  errno == EPERM ? "preferring busy polling needs CAP_NET_ADMIN" :
					  errno == ENOPROTOOPT ? "the kernel predates preferred busy polling (5.11); drop busypoll=" :
					  "drop busypoll= to use need_wakeup alone");
	}
	if (getsockopt(aq->fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen))
		opts.flags = 0;
	if (first)
		um->zerocopy = opts.flags & XDP_OPTIONS_ZEROCOPY;
	if (!strcmp(zerocopy, "on") && !(opts.flags & XDP_OPTIONS_ZEROCOPY)) {
		snprintf(err, errlen,
			 "%s: zero-copy not supported (the buffers are shared with a copy-mode port); use zerocopy=auto",
			 step);
		return -EOPNOTSUPP;
	}
	ret = xsk_socket__update_xskmap(aq->xsk, ap->map_fd);
	if (ret) {
		snprintf(step, sizeof(step), "XDP map update dev=%s queue %u", ap->dev, qid);
		return step_error(err, errlen, ret, step, "%s",
				  perm_hint(ret) ?: "the queue id is beyond the program's map");
	}
	aq->in_map = true;
	aq->base = um->pool->base;
	aq->in_kernel = um->in_kernel;
	aq->chunk_mask = ~(uint64_t)(um->pool->buf_size - 1);
	aq->buf_size = um->pool->buf_size;
	aq->umem_len = (uint64_t)um->pool->n_bufs * um->pool->buf_size;
	if (ap->coalesce_us)
		snprintf(coalesce, sizeof(coalesce), "coalescing %u us, ", ap->coalesce_us);
	fprintf(stderr, "afxdp %s dev %s queue %u: %s XDP, %s%s%s\n", port->name, ap->dev, qid,
		ap->mode == XDP_MODE_NATIVE ? "native" : "skb (generic)",
		ap->busypoll_us ? "busy polling, " : "", coalesce,
		(opts.flags & XDP_OPTIONS_ZEROCOPY) ? "zero-copy" :
		!strcmp(zerocopy, "off") ? "copy mode (zerocopy=off)" :
		!strcmp(ap->driver, "veth") ? "copy mode (veth has no zero-copy)" :
		"copy mode (no zero-copy in this driver or mode)");
	return 0;
}

/* Enters @ap in the list of open ports. Returns the port already on its device, or NULL. */
static const char *port_enter(struct afxdp_port *ap)
{
	const char *other = NULL;

	pthread_mutex_lock(&umems_lock);
	for (struct afxdp_port *p = ports; p; p = p->next)
		if (p->ifindex == ap->ifindex)
			other = p->name;
	if (!other) {
		ap->next = ports;
		ports = ap;
	}
	pthread_mutex_unlock(&umems_lock);
	return other;
}

static void port_leave(struct afxdp_port *ap)
{
	pthread_mutex_lock(&umems_lock);
	for (struct afxdp_port **pp = &ports; *pp; pp = &(*pp)->next) {
		if (*pp == ap) {
			*pp = ap->next;
			break;
		}
	}
	pthread_mutex_unlock(&umems_lock);
}

/*
 * Coalescing (coalesce=, and busypoll=, which needs it: preferred busy
 * polling keeps the device's NAPI with the polling socket only while its
 * interrupts are deferred under a timer; without them the kernel's softirq
 * takes the work back). Sets napi_defer_hard_irqs and gro_flush_timeout,
 * remembering what they were; a failure is said, with the command, and the
 * port goes on without.
 */
static void napi_defer_set(struct afxdp_port *ap)
{
	const char *failed = NULL;
	char timeout[24];
	int ret;

	snprintf(timeout, sizeof(timeout), "%u", ap->coalesce_us * 1000u);
	if ((ret = rxp_netdev_sysfs_read(ap->dev, "napi_defer_hard_irqs", ap->saved_defer_irqs,
					 sizeof(ap->saved_defer_irqs))) ||
	    (ret = rxp_netdev_sysfs_read(ap->dev, "gro_flush_timeout", ap->saved_flush_timeout,
					 sizeof(ap->saved_flush_timeout))))
		failed = "read";
	else if ((ret = rxp_netdev_sysfs_write(ap->dev, "napi_defer_hard_irqs",
					       AFXDP_NAPI_DEFER_IRQS)))
		failed = "set";
	else if ((ret = rxp_netdev_sysfs_write(ap->dev, "gro_flush_timeout", timeout)))
		failed = "set";
	if (!failed)
		return;
	/* nothing half-changed: the first setting goes back to what it was */
	if (ap->saved_defer_irqs[0])
		rxp_netdev_sysfs_write(ap->dev, "napi_defer_hard_irqs", ap->saved_defer_irqs);
	fprintf(stderr,
		"afxdp %s: cannot %s the device's NAPI settings for coalescing (%s); the kernel "
		"polls it in softirq a frame at a time. Fix: echo %s > /sys/class/net/%s/napi_defer_hard_irqs; "
		"echo %s > /sys/class/net/%s/gro_flush_timeout\n",
		ap->dev, failed, strerror(-ret), AFXDP_NAPI_DEFER_IRQS, ap->dev,
		timeout, ap->dev);
	ap->saved_defer_irqs[0] = ap->saved_flush_timeout[0] = '\0';
}

static void napi_defer_restore(struct afxdp_port *ap)
{
	if (ap->saved_defer_irqs[0])
		rxp_netdev_sysfs_write(ap->dev, "napi_defer_hard_irqs", ap->saved_defer_irqs);
	if (ap->saved_flush_timeout[0])
		rxp_netdev_sysfs_write(ap->dev, "gro_flush_timeout", ap->saved_flush_timeout);
	ap->saved_defer_irqs[0] = ap->saved_flush_timeout[0] = '\0';
}

static void afxdp_close(struct rxp_port *port)
{
	struct afxdp_port *ap = port->priv;

	if (!ap)
		return;
	port_leave(ap);
	for (uint16_t q = 0; q < port->n_queues; q++) {
		struct afxdp_queue *aq = &ap->q[q];
		uint32_t key = q;

		if (aq->in_map)
			bpf_map_delete_elem(ap->map_fd, &key);
		if (aq->xsk) {
			xsk_socket__delete(aq->xsk);
			ap->um->n_sockets--;
		}
	}
	/* the interface is left as we found it: no XDP program, its NAPI settings back */
	detach_prog(ap);
	napi_defer_restore(ap);
	/* the last port on the UMEM deletes it and takes back every buffer the kernel held */
	if (ap->um)
		umem_put(ap->um);
	free(ap);
	port->priv = NULL;
}

static int afxdp_open(struct rxp_port *port, struct rxp_args *args, char *err, size_t errlen)
{
	const char *dev, *mode, *zerocopy, *other;
	uint32_t n_queues = 1, n_dev_queues = 1, busypoll_us = 0, coalesce_us = 0;
	struct afxdp_port *ap;
	uint32_t prog_id = 0;
	uint8_t attach_mode;
	bool mac_given;
	int ret;

	dev = rxp_args_get(args, "dev");
	mode = rxp_args_get(args, "mode") ?: "auto";
	zerocopy = rxp_args_get(args, "zerocopy") ?: "auto";
	mac_given = rxp_args_get(args, "mac") != NULL;
	if ((ret = rxp_args_mac(args, "mac", port->mac, err, errlen)) ||
	    (ret = rxp_args_u32(args, "queues", 1, RXP_QUEUES_MAX, &n_queues, err, errlen)) ||
	    (ret = rxp_args_u32(args, "busypoll", 0, AFXDP_BUSYPOLL_MAX_US, &busypoll_us, err,
				errlen)) ||
	    (ret = rxp_args_u32(args, "coalesce", 0, AFXDP_COALESCE_MAX_US, &coalesce_us, err,
				errlen)) ||
	    (ret = rxp_args_check_unused(args, AFXDP_KEYS, err, errlen)))
		return ret;
	if (!dev || !dev[0] || strlen(dev) >= IF_NAMESIZE) {
		snprintf(err, errlen, "afxdp needs dev=IFACE (an interface name of at most %d characters)",
			 IF_NAMESIZE - 1);
		return -EINVAL;
	}
	if (strcmp(mode, "auto") && strcmp(mode, "native") && strcmp(mode, "skb")) {
		snprintf(err, errlen, "mode=%s: expected auto, native or skb", mode);
		return -EINVAL;
	}
	if (strcmp(zerocopy, "auto") && strcmp(zerocopy, "on") && strcmp(zerocopy, "off")) {
		snprintf(err, errlen, "zerocopy=%s: expected auto, on or off", zerocopy);
		return -EINVAL;
	}
	ap = calloc(1, sizeof(*ap) + n_queues * sizeof(ap->q[0]));
	if (!ap) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	port->priv = ap;
	port->n_queues = (uint16_t)n_queues;
	snprintf(ap->dev, sizeof(ap->dev), "%s", dev);
	snprintf(port->dev, sizeof(port->dev), "%s", dev);
	ap->map_fd = -1;
	ap->busypoll_us = busypoll_us;
	/* busy polling needs its interrupts deferred: coalescing comes with it */
	ap->coalesce_us = rxp_args_get(args, "coalesce") || !busypoll_us ? coalesce_us
									 : AFXDP_COALESCE_DEFAULT_US;
	ret = rxp_netdev_ifindex(dev);
	if (ret < 0) {
		snprintf(err, errlen, "dev=%s: no such interface (ip link shows the interfaces)", dev);
		ret = -ENODEV;
		goto err_close;
	}
	ap->ifindex = ret;
	ap->name = port->name;
	other = port_enter(ap);
	if (other) {
		snprintf(err, errlen,
			 "dev=%s is already port %s; one port per device (use queues=N for more queues)",
			 dev, other);
		ret = -EBUSY;
		goto err_close;
	}
	ret = read_iface(port, ap, !mac_given, &n_dev_queues);
	if (ret) {
		step_error(err, errlen, ret, "reading the interface's address", "dev=%s", dev);
		goto err_close;
	}
	if (n_queues > n_dev_queues) {
		snprintf(err, errlen, "queues=%u: %s has %u queue(s)", n_queues, dev, n_dev_queues);
		ret = -EINVAL;
		goto err_close;
	}
	if (port->mtu + 18 > port->pool->max_frame) {
		/* a frame is one UMEM buffer of 4096 bytes at most (no multi-buffer here) */
		unsigned most = 4096 - RXP_PKT_META_SIZE - RXP_AFXDP_HEADROOM - port->pool->rx_offset;

		if (port->mtu + 18 <= most)
			fprintf(stderr, "rxpath: port %s: afxdp dev=%s: MTU %u allows frames longer than the %u-byte maximum frame; the kernel drops those (kernel_rx_dropped; use --max-frame %u)\n",
				port->name, dev, port->mtu, port->pool->max_frame, port->mtu + 18);
		else
			fprintf(stderr, "rxpath: port %s: afxdp dev=%s: MTU %u allows frames longer than the %u bytes an AF_XDP buffer carries; the kernel drops those (kernel_rx_dropped; lower the MTU: ip link set dev %s mtu %u, and use --max-frame %u)\n",
				port->name, dev, port->mtu, most, dev, most - 18, most);
	}
	libxdp_set_print(libxdp_quiet);
	libbpf_set_print(libbpf_quiet);
	/* leave the interface as we found it: we do not replace someone else's program */
	if (!rxp_netdev_xdp_prog((unsigned)ap->ifindex, &prog_id, &attach_mode) && prog_id) {
		const char *off = rxp_xdp_detach_words(attach_mode);

		snprintf(err, errlen,
			 "dev=%s already has an XDP program (id %u); remove it first (ip link set dev %s %s, or xdp-loader unload %s --all)",
			 dev, prog_id, dev, off, dev);
		ret = -EEXIST;
		goto err_close;
	}
	ret = umem_get(port->pool, &ap->um, err, errlen);
	if (ret)
		goto err_close;
	if (!strcmp(mode, "skb")) {
		ret = attach_prog(ap, XDP_MODE_SKB, n_dev_queues, err, errlen);
	} else {
		ret = attach_prog(ap, XDP_MODE_NATIVE, n_dev_queues, err, errlen);
		if (ret && !strcmp(mode, "auto") && ret != -EPERM && ret != -EACCES)
			ret = attach_prog(ap, XDP_MODE_SKB, n_dev_queues, err, errlen);
	}
	if (ret)
		goto err_close;
	if (ap->coalesce_us)
		napi_defer_set(ap);
	for (uint16_t q = 0; q < n_queues; q++) {
		ret = open_socket(port, ap, q, zerocopy, n_dev_queues, err, errlen);
		if (ret)
			goto err_close;
	}
	return 0;

err_close:
	afxdp_close(port);
	port->n_queues = 1;
	return ret;
}

/* The sockets' counters and the kernel's view of them (XDP_STATISTICS), summed over the queues. */
static unsigned afxdp_xstats(struct rxp_port *port, struct rxp_xstat *out, unsigned max)
{
	struct afxdp_port *ap = port->priv;
	uint64_t wakeups = 0, kicks = 0, kick_errors = 0, busy_polls = 0, rx_bad = 0, tx_bad = 0;
	struct xdp_statistics sum = { 0 };
	unsigned n = 0;

	if (!ap)
		return 0;
	for (uint16_t q = 0; q < port->n_queues; q++) {
		struct afxdp_queue *aq = &ap->q[q];
		struct xdp_statistics xs;
		socklen_t len = sizeof(xs);

		wakeups += aq->rx_wakeups;
		kicks += aq->tx_kicks;
		kick_errors += aq->tx_kick_errors;
		rx_bad += aq->rx_bad_descs;
		tx_bad += aq->tx_bad_descs;
		busy_polls += aq->busy_polls;
		if (aq->fd >= 0 && !getsockopt(aq->fd, SOL_XDP, XDP_STATISTICS, &xs, &len)) {
			sum.rx_dropped += xs.rx_dropped;
			sum.rx_invalid_descs += xs.rx_invalid_descs;
			sum.tx_invalid_descs += xs.tx_invalid_descs;
			sum.rx_ring_full += xs.rx_ring_full;
			sum.rx_fill_ring_empty_descs += xs.rx_fill_ring_empty_descs;
			sum.tx_ring_empty_descs += xs.tx_ring_empty_descs;
		}
	}
	const struct rxp_xstat all[] = {
		{ "rx_wakeups", wakeups, false }, { "tx_kicks", kicks, false }, { "tx_kick_errors", kick_errors, false },
		{ "busy_polls", busy_polls, false }, { "rx_bad_descs", rx_bad, true },
		{ "tx_bad_descs", tx_bad, false },
		{ "kernel_rx_dropped", sum.rx_dropped, true },
		{ "kernel_rx_ring_full", sum.rx_ring_full, true },
		{ "kernel_fill_ring_empty", sum.rx_fill_ring_empty_descs, false },
		{ "kernel_tx_ring_empty", sum.tx_ring_empty_descs, false },
		{ "kernel_rx_invalid_descs", sum.rx_invalid_descs, true },
		{ "kernel_tx_invalid_descs", sum.tx_invalid_descs, false },
	};

	for (; n < RXP_ARRAY_SIZE(all) && n < max; n++)
		out[n] = all[n];
	return n;
}

/*
 * poll() on the socket says POLLIN once the RX ring holds frames, and wakes
 * the driver if it asked for it (need_wakeup). A port that busy polls
 * (busypoll=) wants its worker awake.
 */
static int afxdp_wait_fd(struct rxp_queue *q)
{
	struct afxdp_port *ap = q->port->priv;
	struct afxdp_queue *aq;

	if (ap->gone)
		return RXP_WAIT_NONE;
	aq = &ap->q[q->id];
	/* frames the kernel has yet to take from the TX ring keep the worker up to kick them */
	if (ap->busypoll_us || (aq->tx_outstanding && !aq->tx_blocked && tx_ring_pending(aq)))
		return -1;
	return aq->fd;
}

const struct rxp_port_ops rxp_afxdp_ops = {
	.driver = "afxdp",
	.kernel_dev = true,
	.args_help = AFXDP_KEYS,
	.pool_config = afxdp_pool_config,
	.keep_caps = afxdp_keep_caps,
	.open = afxdp_open,
	.rx_burst = afxdp_rx_burst,
	.tx_burst = afxdp_tx_burst,
	.refill = afxdp_refill,
	.complete = afxdp_complete,
	.rx_finished = afxdp_rx_finished,
	.tx_idle = afxdp_tx_idle,
	.close = afxdp_close,
	.check = afxdp_check,
	.xstats = afxdp_xstats,
	.wait_fd = afxdp_wait_fd,
};
