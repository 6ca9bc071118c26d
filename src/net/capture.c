/* SPDX-License-Identifier: MIT */
/*
 * Packet capture on the datapath (capture.h): the hooks the
 * stack calls, the selection of points, ports and filter, and the record
 * ring the datapath fills and a writer thread drains.
 *
 * The ring is a byte ring of variable-size records with free-running 64-bit
 * positions. The producer keeps its position private while it fills a
 * vector's records and publishes it once per hook call; the consumer
 * publishes its own position once per batch it has finished with. Each side
 * caches the other's position and only rereads it when the cache says full
 * (producer) or empty (consumer).
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "capture.h"
#include "rxpath/stack.h"

#define REC_ALIGN 8u
#define REC_HDR ((uint32_t)sizeof(struct rxp_capture_rec))

/* Where the producer stands with its one clock read per burst. */
enum ts_state {
	TS_OUTSIDE,	/* between bursts: every hook call reads the clock for itself */
	TS_BURST,	/* a burst started; nothing has read the clock yet */
	TS_CACHED,	/* a burst started and ts_ns holds its time */
};

struct rxp_capture {
	/* set by rxp_capture_create(), read-only afterwards */
	uint8_t *ring;
	uint64_t ring_size;	/* a power of two */
	uint64_t ring_mask;
	uint32_t snaplen;	/* cut so that a record takes at most half the ring */
	unsigned points;
	uint64_t port_mask;
	uint64_t count;		/* 0: no limit */
	_Atomic uint64_t *shared_count;	/* the count's claims of every ring of the capture; NULL: this ring's */
	bool has_filter;
	struct bpf_program filter;

	/* the producer (datapath thread) alone */
	rxp_cache_aligned uint64_t prod;	/* end of the records written, published or not */
	uint64_t cons_seen;	/* the consumer's position when last read */
	uint64_t n_captured, n_lost, n_filtered;
	uint64_t ts_ns;
	enum ts_state ts_state;
	bool done;		/* count reached */
	uint64_t lost_port[RXP_PORTS_MAX];

	/* written by the producer, read by the consumer and by readers of the counters */
	rxp_cache_aligned _Atomic uint64_t prod_pub;
	_Atomic uint64_t captured, lost, filtered;
	_Atomic bool count_reached;

	/* the consumer (writer thread) */
	rxp_cache_aligned _Atomic uint64_t cons;	/* everything before it may be overwritten */
	uint64_t peek;		/* end of the records handed out by rxp_capture_peek() */
	uint64_t prod_seen;	/* the producer's published position when last read */
};

/* What one hook call did, published once at its end. */
struct hook_call {
	uint64_t captured, lost, filtered;
	uint64_t ts_ns;		/* 0: the clock not read yet in this call */
	bool cons_read;		/* the consumer's position was reread in this call */
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The time stamp of this call's packets: one clock read per burst, or per call between bursts. */
static uint64_t hook_time(struct rxp_capture *cap, struct hook_call *c)
{
	if (c->ts_ns)
		return c->ts_ns;
	if (cap->ts_state == TS_CACHED) {
		c->ts_ns = cap->ts_ns;
		return c->ts_ns;
	}
	c->ts_ns = realtime_ns();
	if (cap->ts_state == TS_BURST) {
		cap->ts_ns = c->ts_ns;
		cap->ts_state = TS_CACHED;
	}
	return c->ts_ns;
}

/*
 * Reserves @size bytes (a multiple of REC_ALIGN, at most half the ring) for
 * one record, padding to the end of the ring first when it would not fit
 * there. Returns the record's place, or NULL when the ring is full.
 * The consumer's position is reread once per hook call at most: when the
 * ring is full, the rest of the vector is lost without touching its line.
 */
static rxp_always_inline struct rxp_capture_rec *ring_reserve(struct rxp_capture *cap,
								struct hook_call *c, uint32_t size)
{
	uint64_t off = cap->prod & cap->ring_mask;
	uint64_t to_end = cap->ring_size - off;
	uint64_t need = size <= to_end ? size : to_end + size;

	if (cap->prod + need - cap->cons_seen > cap->ring_size) {
		if (c->cons_read)
			return NULL;
		c->cons_read = true;
		/* Pairs with the release store of cons in rxp_capture_release(): its reads are done. */
		cap->cons_seen = atomic_load_explicit(&cap->cons, memory_order_acquire);
		if (cap->prod + need - cap->cons_seen > cap->ring_size)
			return NULL;
	}
	if (size > to_end) {
		/* a tail too short for a header is skipped by the consumer without one */
		if (to_end >= REC_HDR) {
			struct rxp_capture_rec *pad = (struct rxp_capture_rec *)(cap->ring + off);

			pad->size = (uint32_t)to_end;
			pad->point = 0;
		}
		cap->prod += to_end;
		off = 0;
	}
	cap->prod += size;
	return (struct rxp_capture_rec *)(cap->ring + off);
}

/* Returns how many bytes of @pkt's frame lie inside its buffer: lengths are trusted no further. */
static uint32_t frame_room(const struct rxp_pkt *pkt)
{
	uint32_t end = pkt->pool ? pkt->pool->buf_size : 0;

	if (pkt->data_off < RXP_PKT_META_SIZE || pkt->data_off >= end)
		return 0;
	return RXP_MIN((uint32_t)pkt->len, end - pkt->data_off);
}

/* Captures one packet if it is selected. Returns false once the count is reached. */
static rxp_always_inline bool capture_one(struct rxp_capture *cap, struct hook_call *c,
					     const struct rxp_pkt *pkt, uint16_t port,
					     uint8_t point, uint8_t reason)
{
	const uint8_t *frame = rxp_pkt_cdata(pkt);
	uint32_t room, cap_len;
	struct rxp_capture_rec *rec;
	uint64_t claim = 0;

	if (port >= RXP_PORTS_MAX || !(cap->port_mask >> port & 1))
		return true;
	room = frame_room(pkt);
	if (cap->has_filter) {
		struct pcap_pkthdr hdr = { .caplen = room, .len = pkt->len };

		if (!pcap_offline_filter(&cap->filter, &hdr, frame)) {
			c->filtered++;
			return true;
		}
	}
	cap_len = RXP_MIN(room, cap->snaplen);
	/* several rings: the packet claims its place in the count first (the others count too) */
	if (cap->shared_count && cap->count) {
		claim = atomic_fetch_add_explicit(cap->shared_count, 1, memory_order_relaxed);
		if (claim >= cap->count) {
			cap->done = true;
			return false;
		}
	}
	rec = ring_reserve(cap, c, RXP_ALIGN_UP(REC_HDR + cap_len, REC_ALIGN));
	if (!rec) {
		if (cap->shared_count && cap->count)
			atomic_fetch_sub_explicit(cap->shared_count, 1, memory_order_relaxed);
		c->lost++;
		cap->lost_port[port]++;
		return true;
	}
	rec->size = RXP_ALIGN_UP(REC_HDR + cap_len, REC_ALIGN);
	rec->orig_len = pkt->len;
	rec->cap_len = cap_len;
	rec->port = port;
	rec->point = point;
	rec->reason = reason;
	rec->ts_ns = hook_time(cap, c);
	/* the filter's drops say which rule (net/filter.c leaves it in user[1]) */
	rec->rule = point == RXP_CAPTURE_DROP && (reason == RXP_DROP_FILTER_DROP ||
						  reason == RXP_DROP_FILTER_REJECT ||
						  reason == RXP_DROP_CT_INVALID) ?
		    (uint32_t)pkt->user[1] : 0;
	rec->pad = 0;
	memcpy(rec->data, frame, cap_len);
	c->captured++;
	if (cap->count && (cap->shared_count ? claim + 1 : cap->n_captured + c->captured) >= cap->count) {
		cap->done = true;
		return false;
	}
	return true;
}

/* Publishes what a hook call did: its records to the consumer, its counts to readers. */
static void hook_end(struct rxp_capture *cap, const struct hook_call *c)
{
	if (c->captured) {
		cap->n_captured += c->captured;
		/* Pairs with the acquire load of prod_pub in rxp_capture_peek(): the records are written. */
		atomic_store_explicit(&cap->prod_pub, cap->prod, memory_order_release);
		atomic_store_explicit(&cap->captured, cap->n_captured, memory_order_relaxed);
		if (cap->done)
			atomic_store_explicit(&cap->count_reached, true, memory_order_relaxed);
	}
	if (c->lost) {
		cap->n_lost += c->lost;
		atomic_store_explicit(&cap->lost, cap->n_lost, memory_order_relaxed);
	}
	if (c->filtered) {
		cap->n_filtered += c->filtered;
		atomic_store_explicit(&cap->filtered, cap->n_filtered, memory_order_relaxed);
	}
}

void rxp_capture_rx(struct rxp_capture *cap, struct rxp_pkt *const *pkts, uint16_t n)
{
	struct hook_call c = { 0 };

	cap->ts_state = TS_BURST;
	if (!(cap->points & RXP_CAPTURE_RX) || cap->done)
		return;
	for (uint16_t i = 0; i < n; i++)
		if (!capture_one(cap, &c, pkts[i], pkts[i]->port, RXP_CAPTURE_RX, 0))
			break;
	hook_end(cap, &c);
}

void rxp_capture_tx(struct rxp_capture *cap, uint16_t port, struct rxp_pkt *const *pkts,
		    uint16_t n)
{
	struct hook_call c = { 0 };

	if (!(cap->points & RXP_CAPTURE_TX) || cap->done)
		return;
	for (uint16_t i = 0; i < n; i++)
		if (!capture_one(cap, &c, pkts[i], port, RXP_CAPTURE_TX, 0))
			break;
	hook_end(cap, &c);
}

void rxp_capture_drop_vector(struct rxp_capture *cap, struct rxp_pkt *const *pkts, uint16_t n)
{
	struct hook_call c = { 0 };

	if (!(cap->points & RXP_CAPTURE_DROP) || cap->done)
		return;
	for (uint16_t i = 0; i < n; i++)
		if (!capture_one(cap, &c, pkts[i], pkts[i]->port, RXP_CAPTURE_DROP,
				 pkts[i]->drop_reason))
			break;
	hook_end(cap, &c);
}

void rxp_capture_drop(struct rxp_capture *cap, const struct rxp_pkt *pkt, unsigned reason)
{
	struct hook_call c = { 0 };

	if (!(cap->points & RXP_CAPTURE_DROP) || cap->done)
		return;
	capture_one(cap, &c, pkt, pkt->port, RXP_CAPTURE_DROP, (uint8_t)reason);
	hook_end(cap, &c);
}

void rxp_capture_burst_end(struct rxp_capture *cap)
{
	cap->ts_state = TS_OUTSIDE;
}

const struct rxp_capture_rec *rxp_capture_peek(struct rxp_capture *cap)
{
	for (;;) {
		uint64_t off, to_end;
		const struct rxp_capture_rec *rec;

		if (cap->peek == cap->prod_seen) {
			/* Pairs with the release store of prod_pub in hook_end(). */
			cap->prod_seen = atomic_load_explicit(&cap->prod_pub, memory_order_acquire);
			if (cap->peek == cap->prod_seen)
				return NULL;
		}
		off = cap->peek & cap->ring_mask;
		to_end = cap->ring_size - off;
		if (to_end < REC_HDR) {
			cap->peek += to_end;
			continue;
		}
		rec = (const struct rxp_capture_rec *)(cap->ring + off);
		if (rec->size < REC_HDR || rec->size % REC_ALIGN || rec->size > to_end ||
		    rec->size > cap->prod_seen - cap->peek ||
		    (rec->point && rec->cap_len > rec->size - REC_HDR)) {
			/* cannot happen with this producer; never read past what it published */
			cap->peek = cap->prod_seen;
			return NULL;
		}
		cap->peek += rec->size;
		if (rec->point)
			return rec;
	}
}

void rxp_capture_release(struct rxp_capture *cap)
{
	/* Pairs with the acquire load of cons in ring_reserve(): our reads are done. */
	atomic_store_explicit(&cap->cons, cap->peek, memory_order_release);
}

void rxp_capture_stats(const struct rxp_capture *cap, struct rxp_capture_stats *out)
{
	out->captured = atomic_load_explicit(&cap->captured, memory_order_relaxed);
	out->lost = atomic_load_explicit(&cap->lost, memory_order_relaxed);
	out->filtered = atomic_load_explicit(&cap->filtered, memory_order_relaxed);
	out->count_reached = atomic_load_explicit(&cap->count_reached, memory_order_relaxed);
}

uint64_t rxp_capture_lost_on_port(const struct rxp_capture *cap, uint16_t port)
{
	return port < RXP_PORTS_MAX ? cap->lost_port[port] : 0;
}

uint32_t rxp_capture_snaplen(const struct rxp_capture *cap)
{
	return cap->snaplen;
}

int rxp_capture_points_parse(const char *text, unsigned *points)
{
	static const struct { const char *name; unsigned mask; } names[] = {
		{ "rx", RXP_CAPTURE_RX }, { "tx", RXP_CAPTURE_TX },
		{ "drop", RXP_CAPTURE_DROP }, { "all", RXP_CAPTURE_POINTS_ALL },
	};
	unsigned mask = 0;
	const char *p = text;

	if (!text || !*text)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(p, "+");
		bool known = false;

		for (size_t i = 0; i < RXP_ARRAY_SIZE(names); i++) {
			if (len == strlen(names[i].name) && !strncmp(p, names[i].name, len)) {
				mask |= names[i].mask;
				known = true;
			}
		}
		if (!known)
			return -EINVAL;
		if (!p[len])
			break;
		p += len + 1;
	}
	*points = mask;
	return 0;
}

static int compile_filter(struct rxp_capture *cap, const char *expr, char *err, size_t errlen)
{
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, (int)RXP_CAPTURE_SNAPLEN_DEFAULT);
	int ret = 0;

	if (!pd) {
		snprintf(err, errlen, "capture filter '%s': libpcap could not start (out of memory)",
			 expr);
		return -ENOMEM;
	}
	if (pcap_compile(pd, &cap->filter, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "capture filter '%s': %s; write it in tcpdump syntax (man pcap-filter)",
			 expr, pcap_geterr(pd));
		ret = -EINVAL;
	} else {
		cap->has_filter = true;
	}
	pcap_close(pd);
	return ret;
}

int rxp_capture_create(struct rxp_capture **out, const struct rxp_capture_config *cfg,
		       char *err, size_t errlen)
{
	uint32_t ring_bytes = cfg->ring_bytes ? cfg->ring_bytes : RXP_CAPTURE_RING_DEFAULT;
	uint32_t snaplen = cfg->snaplen ? cfg->snaplen : RXP_CAPTURE_SNAPLEN_DEFAULT;
	struct rxp_capture *cap;
	int ret;

	if (!cfg->points || cfg->points & ~RXP_CAPTURE_POINTS_ALL) {
		snprintf(err, errlen, "capture points 0x%x: choose rx, tx, drop or all", cfg->points);
		return -EINVAL;
	}
	if (!cfg->port_mask) {
		snprintf(err, errlen, "no port to capture on: give a port, or all ports");
		return -EINVAL;
	}
	if (snaplen > RXP_CAPTURE_SNAPLEN_DEFAULT) {
		snprintf(err, errlen, "snap length %u is too large: at most %u bytes", snaplen,
			 RXP_CAPTURE_SNAPLEN_DEFAULT);
		return -EINVAL;
	}
	if (ring_bytes > RXP_CAPTURE_RING_MAX) {
		snprintf(err, errlen, "capture buffer of %u bytes is too large: at most %u bytes",
			 ring_bytes, RXP_CAPTURE_RING_MAX);
		return -EINVAL;
	}
	ring_bytes = rxp_pow2_roundup(RXP_MAX(ring_bytes, RXP_CAPTURE_RING_MIN));

	cap = aligned_alloc(RXP_CACHE_LINE, RXP_ALIGN_UP(sizeof(*cap), (size_t)RXP_CACHE_LINE));
	if (!cap) {
		snprintf(err, errlen, "capture: out of memory");
		return -ENOMEM;
	}
	memset(cap, 0, sizeof(*cap));
	/* populated now, so the datapath takes no page fault when it first writes */
	cap->ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (cap->ring == MAP_FAILED) {
		ret = -errno;
		snprintf(err, errlen, "cannot allocate a capture buffer of %u bytes: %s; ask for a smaller one",
			 ring_bytes, strerror(errno));
		goto err_free;
	}
	cap->ring_size = ring_bytes;
	cap->ring_mask = ring_bytes - 1;
	/* a record takes at most half the ring, so one always fits once the ring drains */
	cap->snaplen = RXP_MIN(snaplen, ring_bytes / 2 - REC_HDR);
	cap->points = cfg->points;
	cap->port_mask = cfg->port_mask;
	cap->count = cfg->count;
	cap->shared_count = cfg->shared_count;
	if (cfg->filter && cfg->filter[0]) {
		ret = compile_filter(cap, cfg->filter, err, errlen);
		if (ret)
			goto err_unmap;
	}
	*out = cap;
	return 0;

err_unmap:
	munmap(cap->ring, cap->ring_size);
err_free:
	free(cap);
	return ret;
}

void rxp_capture_destroy(struct rxp_capture *cap)
{
	if (!cap)
		return;
	if (cap->has_filter)
		pcap_freecode(&cap->filter);
	munmap(cap->ring, cap->ring_size);
	free(cap);
}
