/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"
#include "core/clock.h"

/*
 * An RX ring of 256 (as virtio-net's and e1000's default): the device
 * writes every posted buffer ahead of the driver, so the ring is how long a
 * frame waits between its write and its read; at 256 minimum-size frames
 * that stays near L1 and well inside L2 (1.13x the forwarding rate of 1024
 * here). TX completes as it is posted, so its size costs nothing.
 */
#define SIM_RX_RING_DEFAULT 256u
#define SIM_TX_RING_DEFAULT 1024u
#define SIM_RING_MIN 64u
#define SIM_RING_MAX 32768u
#define SIM_REFILL_BATCH 32u	/* post buffers in batches, like a driver's RX refill */
#define SIM_DESC_DONE 1u
#define SIM_META_PREFETCH 4u	/* buffers ahead whose metadata line is prefetched */

/*
 * One descriptor, as a device sees it: the driver writes addr (and len for TX).
 * On RX the device writes len and then status; status is the hand-over. On TX
 * the device reports progress by head write-back instead (see done_head).
 */
struct sim_desc {
	uint64_t addr;		/* buffer offset in the pool region, frame start included */
	uint16_t len;
	uint16_t pad;
	_Atomic uint32_t status;
};

struct sim_ring {
	struct sim_desc *desc;
	struct rxp_pkt **bufs;	/* driver's shadow: which buffer sits in each slot */
	uint32_t size, mask;
	/* driver side */
	rxp_cache_aligned uint32_t next_to_use;	/* next slot the driver fills */
	uint32_t next_to_clean;			/* next slot the driver reaps */
	/* doorbell: written by the driver, read by the device */
	rxp_cache_aligned _Atomic uint32_t tail;
	/* device side */
	rxp_cache_aligned uint32_t dev_head;	/* next slot the device works on */
	/*
	 * TX head write-back (as ixgbe's TDWBAL): the device publishes how far
	 * it has sent, so the driver reaps a whole run with one load instead
	 * of one descriptor status a packet.
	 */
	_Atomic uint32_t done_head;
	uint64_t dev_frames;
	uint64_t dev_bytes;
	uint64_t dev_oversize;	/* frames larger than a buffer, not written */
};

/* Cache-line aligned: each queue is driven by its own worker. */
struct sim_queue {
	rxp_cache_aligned struct sim_ring rx;
	struct sim_ring tx;
	struct rxp_gen gen;
	_Atomic bool gen_done;	/* device has handed out the last frame of a finite source */
};

struct sim_port {
	struct rxp_pool *pool;
	bool threaded;
	bool rx_off;		/* rx=off: receives nothing, so no buffers are posted for it */
	/* txstall=: a peer that does not drain; the first dev_tx() after the end clears it */
	_Atomic bool tx_stalled;
	uint64_t tx_stall_ns;	/* how long, from start */
	uint64_t tx_resume_ns;	/* monotonic time the TX side starts sending */
	pthread_t thread;
	bool thread_running;
	_Atomic bool stop;
	rxp_sim_tx_hook tx_hook;
	void *tx_hook_ctx;
	struct sim_queue q[];
};

static int ring_init(struct sim_ring *r, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	r->size = size;
	r->mask = size - 1;
	r->desc = aligned_alloc(RXP_CACHE_LINE, RXP_ALIGN_UP(size * sizeof(*r->desc), RXP_CACHE_LINE));
	/* past the end, room for the RX loop's look-ahead (a prefetch of NULL never faults) */
	r->bufs = calloc(size + SIM_META_PREFETCH, sizeof(*r->bufs));
	if (!r->desc || !r->bufs)
		return -ENOMEM;
	memset(r->desc, 0, size * sizeof(*r->desc));
	return 0;
}

static void ring_free(struct sim_ring *r)
{
	free(r->desc);
	free(r->bufs);
	r->desc = NULL;
	r->bufs = NULL;
}

/* ---- device side ---- */

/*
 * Copies a frame the way a NIC's DMA lands it. Frames up to 64 bytes (the
 * benchmarks' minimum-size frames) take two overlapping 32-byte moves
 * inline rather than a call.
 */
static inline void dev_copy(uint8_t *dst, const uint8_t *src, uint16_t len)
{
	if (len >= 32 && len <= 64) {
		memcpy(dst, src, 32);
		memcpy(dst + len - 32, src + len - 32, 32);
	} else {
		memcpy(dst, src, len);
	}
}

/* DMA: write frames into every posted RX descriptor, as long as the source has frames. */
static uint32_t dev_rx(struct sim_port *sp, struct sim_queue *sq)
{
	struct sim_ring *r = &sq->rx;
	/* Pairs with the release store of tail in sim_refill(): the descriptors are posted. */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t head = r->dev_head, mask = r->mask, room = sp->pool->data_room;
	uint32_t head0 = head;
	struct rxp_gen_walk walk;
	struct sim_desc *desc = r->desc;
	uint8_t *base = sp->pool->base;
	uint64_t bytes = 0;
	bool done = false;

	rxp_gen_walk_begin(&sq->gen, &walk);
	while (head != tail) {
		/*
		 * In runs that stop where the ring or the schedule wraps or the
		 * source ends, so a pointer walks the descriptors and the frames
		 * need no per-frame checks of the source.
		 */
		uint32_t first = head & mask;
		uint32_t run = rxp_gen_walk_run(&walk, RXP_MIN(tail - head, r->size - first));
		struct sim_desc *d = &desc[first];

		if (!run) {
			done = true;
			break;
		}
		for (uint32_t k = 0; k < run; k++) {
			uint16_t len;
			const uint8_t *frame = rxp_gen_walk_frame(&sq->gen, &walk, k, &len);

			/* Like a NIC's buffer size register: never write past the buffer. */
			if (rxp_unlikely(len > room)) {
				r->dev_oversize++;
				continue;
			}
			dev_copy(base + d->addr, frame, len);
			d->len = len;
			bytes += len;
			/* Pairs with the acquire load of status in sim_rx_burst(). */
			atomic_store_explicit(&d->status, SIM_DESC_DONE, memory_order_release);
			d++;
		}
		rxp_gen_walk_skip(&walk, run);
		head += (uint32_t)(d - &desc[first]);
	}
	rxp_gen_walk_end(&sq->gen, &walk);
	r->dev_head = head;
	r->dev_frames += head - head0;
	r->dev_bytes += bytes;
	/* last: whoever sees the source done sees the frames it wrote */
	if (done || rxp_gen_done(&sq->gen))
		atomic_store_explicit(&sq->gen_done, true, memory_order_release);
	return head - head0;
}

/* Slow path: the clock is read only while a stall lasts. Returns true while it does. */
static rxp_noinline bool tx_still_stalled(struct sim_port *sp)
{
	if (rxp_clock_ns() < sp->tx_resume_ns)
		return true;
	atomic_store_explicit(&sp->tx_stalled, false, memory_order_relaxed);
	return false;
}

/* Transmit every frame posted on the TX ring and mark its descriptor done. */
static uint32_t dev_tx(struct sim_port *sp, struct sim_queue *sq)
{
	struct sim_ring *r = &sq->tx;
	/* Pairs with the release store of tail in sim_tx_burst(). */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t head = r->dev_head, mask = r->mask;
	struct sim_desc *desc = r->desc;
	rxp_sim_tx_hook hook = sp->tx_hook;
	uint64_t bytes = 0;
	uint32_t done = tail - head;

	/* a stalled peer: frames stay on the ring, their buffers are not given back */
	if (rxp_unlikely(atomic_load_explicit(&sp->tx_stalled, memory_order_relaxed)) &&
	    tx_still_stalled(sp))
		return 0;
	if (rxp_unlikely(hook))
		for (uint32_t h = head; h != tail; h++)
			hook(sp->tx_hook_ctx, sp->pool->base + desc[h & mask].addr, desc[h & mask].len);
	while (head != tail) {
		uint32_t first = head & mask, run = RXP_MIN(tail - head, r->size - first);

		for (struct sim_desc *d = &desc[first]; d < &desc[first + run]; d++)
			bytes += d->len;
		head += run;
	}
	r->dev_head = head;
	/* Pairs with the acquire load of done_head in sim_complete(). */
	atomic_store_explicit(&r->done_head, head, memory_order_release);
	r->dev_frames += done;
	r->dev_bytes += bytes;
	return done;
}

static void *dev_thread(void *arg)
{
	struct rxp_port *port = arg;
	struct sim_port *sp = port->priv;

	while (!atomic_load_explicit(&sp->stop, memory_order_relaxed)) {
		uint32_t work = 0;

		for (uint16_t q = 0; q < port->n_queues; q++) {
			work += dev_rx(sp, &sp->q[q]);
			work += dev_tx(sp, &sp->q[q]);
		}
		if (!work)
			rxp_cpu_relax();
	}
	return NULL;
}

/* ---- driver side ---- */

static uint32_t sim_refill(struct rxp_queue *q)
{
	struct sim_port *sp = q->port->priv;
	struct sim_ring *r = &sp->q[q->id].rx;
	struct sim_desc *desc = r->desc;
	struct rxp_pkt **ring_bufs = r->bufs;
	const uint8_t *base = sp->pool->base;
	uint32_t data_off = sp->pool->data_off, mask = r->mask, ntu = r->next_to_use;
	uint32_t n_free = r->size - (ntu - r->next_to_clean);
	uint32_t posted = 0;

	if (n_free < SIM_REFILL_BATCH || sp->rx_off)
		return 0;
	while (posted < n_free) {
		uint32_t first = (ntu + posted) & mask;
		/* straight into the ring's shadow, up to where it wraps */
		uint32_t want = RXP_MIN(n_free - posted, r->size - first);
		uint32_t got = rxp_pool_alloc_burst(q->cache, &ring_bufs[first], want);

		for (uint32_t i = first; i < first + got; i++) {
			desc[i].addr = (uint64_t)((const uint8_t *)ring_bufs[i] - base) + data_off;
			atomic_store_explicit(&desc[i].status, 0, memory_order_relaxed);
		}
		posted += got;
		if (got < want) {
			q->stats.rx_no_buffer++;
			break;
		}
	}
	r->next_to_use = ntu + posted;
	/* Doorbell. Pairs with the acquire load of tail in dev_rx(). */
	atomic_store_explicit(&r->tail, r->next_to_use, memory_order_release);
	return posted;
}

static uint16_t sim_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct sim_port *sp = q->port->priv;
	struct sim_queue *sq = &sp->q[q->id];
	struct sim_ring *r = &sq->rx;
	const struct sim_desc *desc = r->desc;
	struct rxp_pkt *const *ring_bufs = r->bufs;
	uint32_t ntc = r->next_to_clean, mask = r->mask;
	uint64_t rx_meta = rxp_pkt_rx_meta((uint16_t)sp->pool->data_off, q->port->id, q->id);
	uint32_t posted;
	uint64_t bytes = 0;
	uint16_t i;

	if (!sp->threaded)
		dev_rx(sp, sq);
	posted = r->next_to_use - ntc;
	if (n > posted)
		n = (uint16_t)posted;
	/* in runs up to where the ring wraps, walked by pointer */
	for (i = 0; i < n;) {
		uint32_t first = (ntc + i) & mask, run = RXP_MIN((uint32_t)(n - i), r->size - first);
		const struct sim_desc *d = &desc[first];
		struct rxp_pkt *const *b = &ring_bufs[first];
		uint32_t k;

		for (k = 0; k < run; k++) {
			struct rxp_pkt *pkt;
			uint16_t len;

			/*
			 * The metadata of a buffer posted a ring ago is cold: ask
			 * for it early. Past the posted ones the slot holds a
			 * stale pointer or NULL, which a prefetch may be given.
			 */
			rxp_prefetchw(b[k + SIM_META_PREFETCH]);

			/* Pairs with the release store of status in dev_rx(). */
			if (!(atomic_load_explicit(&d[k].status, memory_order_acquire) & SIM_DESC_DONE))
				break;
			pkt = b[k];
			len = d[k].len;
			rxp_pkt_set_rx(pkt, rx_meta, len);
			bytes += len;
			pkts[i + k] = pkt;
		}
		i = (uint16_t)(i + k);
		if (k < run)
			break;
	}
	r->next_to_clean = ntc + i;
	q->stats.rx_polls++;
	q->stats.rx_nonempty += i != 0;
	q->stats.rx_packets += i;
	q->stats.rx_bytes += bytes;
	return i;
}

static uint16_t sim_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct sim_port *sp = q->port->priv;
	struct sim_queue *sq = &sp->q[q->id];
	struct sim_ring *r = &sq->tx;
	struct sim_desc *desc = r->desc;
	struct rxp_pkt **ring_bufs = r->bufs;
	const uint8_t *base = sp->pool->base;
	uint32_t ntu = r->next_to_use, mask = r->mask;
	uint32_t room = r->size - (ntu - r->next_to_clean);
	uint64_t bytes = 0;
	uint16_t i;

	if (n > room) {
		q->stats.tx_ring_full += n - room;
		n = (uint16_t)room;
	}
	/* in runs up to where the ring wraps, walked by pointer */
	for (i = 0; i < n;) {
		uint32_t first = (ntu + i) & mask, run = RXP_MIN((uint32_t)(n - i), r->size - first);
		struct sim_desc *d = &desc[first];
		struct rxp_pkt **b = &ring_bufs[first];

		for (uint32_t k = 0; k < run; k++) {
			struct rxp_pkt *pkt = pkts[i + k];
			uint16_t len = pkt->len;

			b[k] = pkt;
			d[k].addr = (uint64_t)((const uint8_t *)pkt - base) + pkt->data_off;
			d[k].len = len;
			bytes += len;
		}
		i = (uint16_t)(i + run);
	}
	r->next_to_use = ntu + n;
	/* Doorbell. Pairs with the acquire load of tail in dev_tx(). */
	atomic_store_explicit(&r->tail, r->next_to_use, memory_order_release);
	q->stats.tx_packets += n;
	q->stats.tx_bytes += bytes;
	if (!sp->threaded)
		dev_tx(sp, sq);
	return n;
}

static uint32_t sim_complete(struct rxp_queue *q)
{
	struct sim_port *sp = q->port->priv;
	struct sim_ring *r = &sp->q[q->id].tx;
	struct rxp_pkt *const *ring_bufs = r->bufs;
	uint32_t ntc = r->next_to_clean, mask = r->mask, n;

	/* inline: frames held back by a stall go once it ends, even with nothing new to send */
	if (!sp->threaded &&
	    rxp_unlikely(atomic_load_explicit(&sp->tx_stalled, memory_order_relaxed)))
		dev_tx(sp, &sp->q[q->id]);
	/* Pairs with the release store of done_head in dev_tx(). */
	n = atomic_load_explicit(&r->done_head, memory_order_acquire) - ntc;
	/* the buffers go back straight from the ring's shadow, in at most two runs */
	for (uint32_t left = n; left;) {
		uint32_t first = ntc & mask, run = RXP_MIN(left, r->size - first);

		rxp_pool_free_bulk(q->cache, &ring_bufs[first], run);
		ntc += run;
		left -= run;
	}
	r->next_to_clean = ntc;
	q->stats.tx_completed += n;
	return n;
}

static bool sim_rx_finished(struct rxp_queue *q)
{
	struct sim_port *sp = q->port->priv;
	struct sim_queue *sq = &sp->q[q->id];
	uint32_t filled;

	if (!atomic_load_explicit(&sq->gen_done, memory_order_acquire))
		return false;
	/* Everything the device wrote has been taken by the driver. */
	if (sp->threaded) {
		struct sim_desc *d = &sq->rx.desc[sq->rx.next_to_clean & sq->rx.mask];

		return sq->rx.next_to_clean == sq->rx.next_to_use ||
		       !(atomic_load_explicit(&d->status, memory_order_acquire) & SIM_DESC_DONE);
	}
	filled = sq->rx.dev_head - sq->rx.next_to_clean;
	return filled == 0;
}

static bool sim_tx_idle(struct rxp_queue *q)
{
	struct sim_port *sp = q->port->priv;
	struct sim_ring *r = &sp->q[q->id].tx;

	return r->next_to_clean == r->next_to_use;
}

static int sim_start(struct rxp_port *port, char *err, size_t errlen)
{
	struct sim_port *sp = port->priv;
	int ret;

	if (sp->tx_stall_ns) {
		/* before the device thread exists: it reads these from its start */
		sp->tx_resume_ns = rxp_clock_ns() + sp->tx_stall_ns;
		atomic_store(&sp->tx_stalled, true);
	}
	if (!sp->threaded)
		return 0;
	ret = pthread_create(&sp->thread, NULL, dev_thread, port);
	if (ret) {
		snprintf(err, errlen, "port %s: cannot start the device thread: %s", port->name,
			 strerror(ret));
		return -ret;
	}
	sp->thread_running = true;
	return 0;
}

static void return_ring(struct sim_port *sp, struct sim_ring *r)
{
	for (uint32_t i = r->next_to_clean; i != r->next_to_use; i++)
		rxp_pool_put_ring(sp->pool, &r->bufs[i & r->mask], 1);
	r->next_to_clean = r->next_to_use;
}

static void sim_close(struct rxp_port *port)
{
	struct sim_port *sp = port->priv;

	if (!sp)
		return;
	if (sp->thread_running) {
		atomic_store(&sp->stop, true);
		pthread_join(sp->thread, NULL);
	}
	for (uint16_t q = 0; q < port->n_queues; q++) {
		if (sp->q[q].rx.bufs)
			return_ring(sp, &sp->q[q].rx);
		if (sp->q[q].tx.bufs)
			return_ring(sp, &sp->q[q].tx);
		ring_free(&sp->q[q].rx);
		ring_free(&sp->q[q].tx);
		rxp_gen_free(&sp->q[q].gen);
	}
	free(sp);
	port->priv = NULL;
}

#define SIM_KEYS "proto, size, flows, src4, dst4, src6, dst6, bad, count, pcap, loop, " \
		 "rx, rxring, txring, txstall, queues, device, mac"

static int sim_open(struct rxp_port *port, struct rxp_args *args, char *err, size_t errlen)
{
	struct rxp_gen_config gcfg;
	uint32_t rx_size = SIM_RX_RING_DEFAULT, tx_size = SIM_TX_RING_DEFAULT, n_queues = 1;
	double tx_stall = 0;
	const char *device, *rx;
	struct sim_port *sp;
	int ret;

	rxp_gen_config_default(&gcfg);
	gcfg.max_frame = port->pool->max_frame;
	if ((ret = rxp_args_mac(args, "mac", port->mac, err, errlen)) ||
	    (ret = rxp_args_u32(args, "rxring", SIM_RING_MIN, SIM_RING_MAX, &rx_size, err, errlen)) ||
	    (ret = rxp_args_u32(args, "txring", SIM_RING_MIN, SIM_RING_MAX, &tx_size, err, errlen)) ||
	    (ret = rxp_args_double(args, "txstall", 0, 1e9, &tx_stall, err, errlen)) ||
	    (ret = rxp_args_u32(args, "queues", 1, RXP_QUEUES_MAX, &n_queues, err, errlen)) ||
	    (ret = rxp_gen_config_parse(&gcfg, args, err, errlen)))
		return ret;
	if (!rxp_is_pow2(rx_size) || !rxp_is_pow2(tx_size)) {
		snprintf(err, errlen, "rxring=%u, txring=%u: ring sizes must be powers of two",
			 rx_size, tx_size);
		return -EINVAL;
	}
	rx = rxp_args_get(args, "rx") ?: "on";
	if (strcmp(rx, "on") && strcmp(rx, "off")) {
		snprintf(err, errlen, "rx=%s: expected on, or off for a port that only transmits", rx);
		return -EINVAL;
	}
	device = rxp_args_get(args, "device") ?: "inline";
	if (strcmp(device, "inline") && strcmp(device, "thread")) {
		snprintf(err, errlen, "device=%s: expected inline or thread", device);
		return -EINVAL;
	}
	ret = rxp_args_check_unused(args, SIM_KEYS, err, errlen);
	if (ret)
		return ret;
	memcpy(gcfg.dst_mac, port->mac, 6);
	port->n_queues = (uint16_t)n_queues;

	{
		size_t len = RXP_ALIGN_UP(sizeof(*sp) + port->n_queues * sizeof(sp->q[0]),
					  (size_t)RXP_CACHE_LINE);

		sp = aligned_alloc(RXP_CACHE_LINE, len);	/* the queues' alignment holds */
		if (!sp) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		memset(sp, 0, len);
	}
	sp->pool = port->pool;
	sp->threaded = !strcmp(device, "thread");
	sp->rx_off = !strcmp(rx, "off");
	sp->tx_stall_ns = (uint64_t)(tx_stall * 1e9);
	port->priv = sp;
	for (uint16_t q = 0; q < port->n_queues; q++) {
		if (ring_init(&sp->q[q].rx, rx_size) || ring_init(&sp->q[q].tx, tx_size)) {
			snprintf(err, errlen, "out of memory for rings of %u and %u descriptors",
				 rx_size, tx_size);
			ret = -ENOMEM;
			goto err_close;
		}
		ret = rxp_gen_init(&sp->q[q].gen, &gcfg, err, errlen);
		if (ret)
			goto err_close;
		rxp_gen_keep_queue(&sp->q[q].gen, q, port->n_queues);
		if (!strcmp(rx, "off")) {
			/* a finite source with nothing in it */
			sp->q[q].gen.finite = true;
			sp->q[q].gen.remaining = 0;
			atomic_store(&sp->q[q].gen_done, true);
		}
	}
	return 0;

err_close:
	sim_close(port);
	return ret;
}

void rxp_sim_set_tx_hook(struct rxp_port *port, rxp_sim_tx_hook hook, void *ctx)
{
	struct sim_port *sp = port->priv;

	sp->tx_hook = hook;
	sp->tx_hook_ctx = ctx;
}

const struct rxp_gen *rxp_sim_gen(const struct rxp_port *port, uint16_t queue)
{
	const struct sim_port *sp = port->priv;

	return queue < port->n_queues ? &sp->q[queue].gen : NULL;
}

struct rxp_gen *rxp_sim_gen_rw(struct rxp_port *port, uint16_t queue)
{
	struct sim_port *sp = port->priv;

	return queue < port->n_queues ? &sp->q[queue].gen : NULL;
}

const struct rxp_port_ops rxp_sim_ops = {
	.driver = "sim",
	.args_help = SIM_KEYS,
	.open = sim_open,
	.rx_burst = sim_rx_burst,
	.tx_burst = sim_tx_burst,
	.refill = sim_refill,
	.complete = sim_complete,
	.rx_finished = sim_rx_finished,
	.tx_idle = sim_tx_idle,
	.start = sim_start,
	.close = sim_close,
};
