/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the simulated NIC through the port API (include/rxpath/port.h,
 * src/port/sim.h): RX burst bounds, finite sources, zero-copy frame
 * placement, batched refill and buffer shortage, TX with completion, a
 * full ring and a stalled peer, the device thread, pcap replay, and
 * argument errors. Every test closes its port and then audits the pool:
 * each buffer must be back.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "rxpath/csum.h"
#include "rxpath/port.h"
#include "rxpath/proto.h"
#include "port/sim.h"
#include "check.h"

#define ERR_LEN 256
#define BURST 256

struct fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_port port;
	char err[ERR_LEN];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct rxp_pool *pool_new(uint32_t n_bufs, uint32_t max_frame)
{
	struct rxp_pool_config cfg = { .n_bufs = n_bufs, .max_frame = max_frame, .rx_offset = 2 };
	char err[ERR_LEN];
	struct rxp_pool *pool = rxp_pool_create(&cfg, err, sizeof(err));

	if (!pool)
		printf("  rxp_pool_create: %s\n", err);
	return pool;
}

/*
 * Opens port @spec (id @id) on a fresh pool; does not start it. Returns 0 or
 * -errno with f->err filled in.
 */
static int fx_try_open(struct fx *f, uint16_t id, const char *spec, uint32_t n_bufs,
		       uint32_t max_frame)
{
	memset(f, 0, sizeof(*f));
	f->pool = pool_new(n_bufs, max_frame);
	if (!f->pool)
		return -ENOMEM;
	CHECK_EQ(rxp_pool_cache_init(&f->cache, f->pool, 256), 0);
	return rxp_port_open(&f->port, id, "sim0", spec, f->pool, f->err, sizeof(f->err));
}

/* Same, for opens that must work: says why when one does not. */
static int fx_open_id(struct fx *f, uint16_t id, const char *spec, uint32_t n_bufs,
		      uint32_t max_frame)
{
	int ret = fx_try_open(f, id, spec, n_bufs, max_frame);

	if (ret)
		printf("  rxp_port_open(%s): %d %s\n", spec, ret, f->err);
	return ret;
}

static int fx_open(struct fx *f, const char *spec, uint32_t n_bufs)
{
	return fx_open_id(f, 0, spec, n_bufs, RXP_FRAME_DEFAULT);
}

static int fx_start(struct fx *f)
{
	int ret = rxp_port_start(&f->port, &f->cache, f->err, sizeof(f->err));

	if (ret)
		printf("  rxp_port_start: %d %s\n", ret, f->err);
	return ret;
}

/* Closes the port and checks that every buffer is back in the pool. */
static void fx_close(struct fx *f)
{
	struct rxp_pool_cache *caches[] = { &f->cache };

	rxp_port_close(&f->port);
	if (!f->pool)
		return;
	CHECK_EQ(rxp_pool_audit(f->pool, caches, 1), 0);
	rxp_pool_cache_close(&f->cache);
	CHECK_EQ(rxp_pool_destroy(f->pool), 0);
	f->pool = NULL;
}

static struct rxp_queue *q0(struct fx *f)
{
	return &f->port.queues[0];
}

/*
 * Receives until the source is finished (or @limit frames, or @timeout_s),
 * freeing every frame and refilling as a poll loop does. Returns the frames.
 */
static uint64_t drain(struct fx *f, uint16_t burst, uint64_t limit, double timeout_s)
{
	struct rxp_queue *q = q0(f);
	const struct rxp_port_ops *ops = f->port.ops;
	struct rxp_pkt *pkts[BURST];
	uint64_t total = 0;
	double t_end = now_s() + timeout_s;

	while (total < limit && now_s() < t_end) {
		uint16_t ask = (uint16_t)RXP_MIN((uint64_t)burst, limit - total);
		uint16_t n = ops->rx_burst(q, pkts, ask);

		if (n > ask)
			CHECK(n <= ask);
		total += n;
		rxp_pool_free_bulk(&f->cache, pkts, n);
		ops->refill(q);
		if (!n && ops->rx_finished(q))
			break;
	}
	return total;
}

static void test_drivers(void)
{
	CHECK(rxp_port_driver("sim") != NULL);
	CHECK(rxp_port_driver("nic") == NULL);
	CHECK(rxp_port_driver("") == NULL);
	CHECK(strstr(rxp_port_drivers(), "sim") != NULL);
	CHECK(!strcmp(rxp_port_driver("sim")->driver, "sim"));
	CHECK(rxp_port_driver("sim")->args_help != NULL);
}

static void test_open_defaults(void)
{
	struct fx f;

	CHECK_EQ(fx_open_id(&f, 3, "sim", 2048, RXP_FRAME_DEFAULT), 0);
	CHECK(!strcmp(f.port.name, "sim0"));
	CHECK_EQ(f.port.id, 3);
	CHECK_EQ(f.port.n_queues, 1);
	CHECK(f.port.pool == f.pool);
	CHECK_EQ(f.port.mtu, 0);	/* no device: the router's default applies */
	/* a locally administered unicast MAC derived from the id */
	CHECK_EQ(f.port.mac[0], 0x02);
	CHECK_EQ(f.port.mac[5], 4);
	CHECK_EQ(f.port.queues[0].id, 0);
	CHECK(f.port.queues[0].port == &f.port);
	CHECK(rxp_sim_gen(&f.port, 0) != NULL);
	CHECK(rxp_sim_gen(&f.port, 1) == NULL);
	CHECK_EQ(fx_start(&f), 0);
	CHECK(q0(&f)->cache == &f.cache);
	/* start posted a full ring of buffers (256 by default) */
	CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 2048 - 256);
	fx_close(&f);
}

static void test_rx_burst_bounded(void)
{
	struct fx f;
	struct rxp_pkt *pkts[BURST];
	static const uint16_t asks[] = { 1, 2, 7, 32, 64, 100, 255, 256, 0 };

	CHECK_EQ(fx_open(&f, "sim:", 4096), 0);	/* endless source */
	CHECK_EQ(fx_start(&f), 0);
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < RXP_ARRAY_SIZE(asks); i++) {
			uint16_t n;

			/* poison the slot just past the request: it must stay untouched */
			if (asks[i] < BURST)
				pkts[asks[i]] = (struct rxp_pkt *)&f;
			n = f.port.ops->rx_burst(q0(&f), pkts, asks[i]);
			CHECK(n <= asks[i]);
			/* an endless source with a full ring fills every request */
			CHECK_EQ(n, asks[i]);
			if (asks[i] < BURST)
				CHECK(pkts[asks[i]] == (struct rxp_pkt *)&f);
			rxp_pool_free_bulk(&f.cache, pkts, n);
			f.port.ops->refill(q0(&f));
		}
		CHECK(!f.port.ops->rx_finished(q0(&f)));
	}
	fx_close(&f);
}

static void test_finite_count(void)
{
	static const uint32_t counts[] = { 1, 10, 1000, 1024, 5000 };

	for (size_t i = 0; i < RXP_ARRAY_SIZE(counts); i++) {
		struct fx f;
		char spec[64];
		struct rxp_queue_stats st;

		snprintf(spec, sizeof(spec), "sim:count=%u", counts[i]);
		CHECK_EQ(fx_open(&f, spec, 4096), 0);
		CHECK(!f.port.ops->rx_finished(q0(&f)));
		CHECK_EQ(fx_start(&f), 0);
		CHECK_EQ(drain(&f, 64, UINT64_MAX, 2.0), counts[i]);
		CHECK(f.port.ops->rx_finished(q0(&f)));
		/* nothing more, ever */
		CHECK_EQ(drain(&f, 64, UINT64_MAX, 0.1), 0);
		rxp_port_stats(&f.port, &st);
		CHECK_EQ(st.rx_packets, counts[i]);
		CHECK_EQ(st.rx_bytes, (uint64_t)counts[i] * 60);
		CHECK(st.rx_nonempty <= st.rx_polls);
		CHECK(st.rx_nonempty >= (counts[i] + 63) / 64);
		fx_close(&f);
	}
}

/* Frames are written in place into pool buffers, at data_off, without the FCS. */
static void check_frames_in_place(struct fx *f, uint32_t frame_size, const uint8_t *mac)
{
	struct rxp_pkt *pkts[BURST];
	uint32_t seen = 0;

	for (int round = 0; round < 8; round++) {
		uint16_t n = f->port.ops->rx_burst(q0(f), pkts, 64);

		CHECK_EQ(n, 64);
		for (uint16_t i = 0; i < n; i++) {
			struct rxp_pkt *pkt = pkts[i];
			const uint8_t *d = rxp_pkt_cdata(pkt);
			bool ok = pkt->pool == f->pool &&
				  pkt->buf_idx < f->pool->n_bufs &&
				  rxp_pool_buf(f->pool, pkt->buf_idx) == pkt &&
				  pkt->data_off == f->pool->data_off &&
				  d == (const uint8_t *)pkt + f->pool->data_off &&
				  pkt->len == frame_size - RXP_ETH_FCS_LEN &&
				  pkt->port == f->port.id && pkt->queue == 0 &&
				  !memcmp(d, mac, 6) &&
				  be16(d + 12) == RXP_ETHERTYPE_IP4 &&
				  rxp_ip4_csum_verify(d + RXP_ETH_HLEN, 5) == 0 &&
				  be16(d + RXP_ETH_HLEN + 2) ==
					  frame_size - RXP_ETH_FCS_LEN - RXP_ETH_HLEN;

			if (!ok && seen++ < 3) {
				printf("  frame %u (size %u): len %u data_off %u idx %u dst %02x:%02x\n",
				       i, frame_size, pkt->len, pkt->data_off, pkt->buf_idx, d[0], d[5]);
				CHECK(ok);
			}
		}
		rxp_pool_free_bulk(&f->cache, pkts, n);
		f->port.ops->refill(q0(f));
	}
}

static void test_frame_placement(void)
{
	static const uint32_t sizes[] = { 64, 65, 128, 1024, 1518, 1522 };

	for (size_t i = 0; i < RXP_ARRAY_SIZE(sizes); i++) {
		struct fx f;
		char spec[64];

		snprintf(spec, sizeof(spec), "sim:size=%u", sizes[i]);
		CHECK_EQ(fx_open(&f, spec, 2048), 0);
		CHECK_EQ(fx_start(&f), 0);
		check_frames_in_place(&f, sizes[i], f.port.mac);
		fx_close(&f);
	}

	/* with mac= the port takes that MAC and frames are addressed to it */
	struct fx f;
	static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

	CHECK_EQ(fx_open_id(&f, 7, "sim:mac=02:11:22:33:44:55", 2048, RXP_FRAME_DEFAULT), 0);
	CHECK(!memcmp(f.port.mac, mac, 6));
	CHECK_EQ(fx_start(&f), 0);
	check_frames_in_place(&f, 64, mac);
	fx_close(&f);
}

/* Returns 0 when the UDP/TCP checksum of the IPv4 or IPv6 packet at @ip verifies. */
static uint16_t l4_csum_check(const uint8_t *ip, bool v6)
{
	if (v6) {
		uint16_t l4_len = be16(ip + 4);

		return rxp_csum_fold(rxp_csum_partial(ip + 40, l4_len,
						      rxp_csum_pseudo6(ip + 8, ip + 24, ip[6], l4_len)));
	}
	uint16_t ihl = (ip[0] & 15) * 4, l4_len = (uint16_t)(be16(ip + 2) - ihl);
	uint32_t src, dst;

	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	return rxp_csum_fold(rxp_csum_partial(ip + ihl, l4_len,
					      rxp_csum_pseudo4(src, dst, ip[9], l4_len)));
}

/* Every protocol the generator knows, each to its own header layout, with valid checksums. */
static void test_protocols(void)
{
	static const struct { const char *proto; uint16_t type; uint8_t l4; } cases[] = {
		{ "udp4", RXP_ETHERTYPE_IP4, RXP_IPPROTO_UDP },
		{ "tcp4", RXP_ETHERTYPE_IP4, RXP_IPPROTO_TCP },
		{ "udp6", RXP_ETHERTYPE_IP6, RXP_IPPROTO_UDP },
		{ "tcp6", RXP_ETHERTYPE_IP6, RXP_IPPROTO_TCP },
	};

	for (size_t c = 0; c < RXP_ARRAY_SIZE(cases); c++) {
		struct fx f;
		char spec[64];
		struct rxp_pkt *pkts[64];
		uint16_t n;
		int bad = 0;

		snprintf(spec, sizeof(spec), "sim:proto=%s,size=128,count=64", cases[c].proto);
		CHECK_EQ(fx_open(&f, spec, 2048), 0);
		CHECK_EQ(fx_start(&f), 0);
		n = f.port.ops->rx_burst(q0(&f), pkts, 64);
		CHECK_EQ(n, 64);
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *d = rxp_pkt_cdata(pkts[i]);
			bool v6 = cases[c].type == RXP_ETHERTYPE_IP6;

			bad += pkts[i]->len != 124;
			bad += be16(d + 12) != cases[c].type;
			bad += d[RXP_ETH_HLEN + (v6 ? 6 : 9)] != cases[c].l4;
			if (!v6)
				bad += rxp_ip4_csum_verify(d + RXP_ETH_HLEN, 5) != 0;
			bad += be16(d + RXP_ETH_HLEN + (v6 ? 4 : 2)) != (v6 ? 124 - 54 : 124 - 14);
			bad += l4_csum_check(d + RXP_ETH_HLEN, v6) != 0;
			if (cases[c].l4 == RXP_IPPROTO_UDP)	/* UDP: 0 would mean "no checksum" */
				bad += be16(d + RXP_ETH_HLEN + (v6 ? 40 : 20) + 6) == 0;
		}
		CHECK_EQ(bad, 0);
		rxp_pool_free_bulk(&f.cache, pkts, n);
		fx_close(&f);
	}
}

/* flows= distinct flows; src4=/dst4= and src6=/dst6= prefixes hold every address. */
static void test_flows_and_prefixes(void)
{
	struct fx f;
	struct rxp_pkt *pkts[256];
	uint16_t n;
	uint32_t sports[256], n_sports = 0;
	int outside = 0;

	CHECK_EQ(fx_open(&f, "sim:flows=16,src4=10.1.2.0/24,dst4=10.9.0.0/16,count=256", 2048), 0);
	CHECK_EQ(fx_start(&f), 0);
	n = f.port.ops->rx_burst(q0(&f), pkts, 256);
	CHECK_EQ(n, 256);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *ip = rxp_pkt_cdata(pkts[i]) + RXP_ETH_HLEN;
		uint32_t key = (uint32_t)ip[15] << 16 | be16(ip + 20);	/* src host, sport */
		bool known = false;

		outside += ip[12] != 10 || ip[13] != 1 || ip[14] != 2;
		outside += ip[16] != 10 || ip[17] != 9;
		for (uint32_t k = 0; k < n_sports; k++)
			known |= sports[k] == key;
		if (!known)
			sports[n_sports++] = key;
	}
	CHECK_EQ(outside, 0);
	CHECK_EQ(n_sports, 16);
	rxp_pool_free_bulk(&f.cache, pkts, n);
	fx_close(&f);

	CHECK_EQ(fx_open(&f, "sim:proto=udp6,flows=4,src6=2001:db8:aa::/48,dst6=2001:db8:bb::/64,count=64", 2048), 0);
	CHECK_EQ(fx_start(&f), 0);
	n = f.port.ops->rx_burst(q0(&f), pkts, 64);
	CHECK_EQ(n, 64);
	outside = 0;
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *ip = rxp_pkt_cdata(pkts[i]) + RXP_ETH_HLEN;
		static const uint8_t src_pfx[6] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0xaa };
		static const uint8_t dst_pfx[8] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0xbb, 0, 0 };

		outside += memcmp(ip + 8, src_pfx, 6) != 0;
		outside += memcmp(ip + 24, dst_pfx, 8) != 0;
	}
	CHECK_EQ(outside, 0);
	rxp_pool_free_bulk(&f.cache, pkts, n);
	fx_close(&f);
}

/*
 * The device may only write max_frame bytes into a buffer. A pool for
 * 60-byte frames is legal and size=64 (60 bytes) is in range, but TCP over
 * IPv6 needs 74 bytes and the malformed frames of bad= are 124-128 bytes:
 * the port must refuse to open, or every frame must fit its buffer. Here
 * we also check that no buffer's metadata (pool, buf_idx) got overwritten
 * by a frame written into the buffer before it.
 */
static void test_frames_fit_small_buffers(void)
{
	static const char *const specs[] = {
		"sim:proto=tcp6,count=2000",
		"sim:bad=50,count=2000",
	};
	static const char *const must_say[] = { "tcp6", "bad" };	/* when refusing */

	for (size_t s = 0; s < RXP_ARRAY_SIZE(specs); s++) {
		struct fx f;
		struct rxp_pkt *pkts[BURST];
		uint32_t too_long = 0, max_len = 0, corrupt = 0;
		int ret;

		memset(&f, 0, sizeof(f));
		/* 2000 buffers of 192 bytes end mid-page: an overrun of the last one stays mapped */
		f.pool = pool_new(2000, 60);
		CHECK(f.pool != NULL);
		if (!f.pool)
			continue;
		CHECK_EQ(rxp_pool_cache_init(&f.cache, f.pool, 256), 0);
		ret = rxp_port_open(&f.port, 0, "sim0", specs[s], f.pool, f.err, sizeof(f.err));
		if (ret) {
			/* refusing is fine, with a reason that names the setting */
			if (!strstr(f.err, must_say[s])) {
				printf("  %s refused with '%s' (must name '%s')\n", specs[s], f.err,
				       must_say[s]);
				check_failures++;
			}
			fx_close(&f);
			continue;
		}
		CHECK_EQ(fx_start(&f), 0);
		for (int round = 0; round < 40; round++) {
			uint16_t n = f.port.ops->rx_burst(q0(&f), pkts, 64);

			for (uint16_t i = 0; i < n; i++) {
				too_long += pkts[i]->len > f.pool->max_frame;
				max_len = RXP_MAX(max_len, pkts[i]->len);
			}
			rxp_pool_free_bulk(&f.cache, pkts, n);
			f.port.ops->refill(q0(&f));
		}
		for (uint32_t i = 0; i < f.pool->n_bufs; i++) {
			struct rxp_pkt *b = rxp_pool_buf(f.pool, i);

			corrupt += b->pool != f.pool || b->buf_idx != i;
		}
		if (too_long || corrupt)
			printf("  %s on a pool for 60-byte frames (%u bytes of room): %u frames longer than 60 (up to %u bytes), %u buffer headers overwritten\n",
			       specs[s], f.pool->data_room, too_long, max_len, corrupt);
		CHECK_EQ(too_long, 0);
		CHECK_EQ(corrupt, 0);
		/* repair what the overflow broke so close and audit can run */
		for (uint32_t i = 0; i < f.pool->n_bufs; i++) {
			rxp_pool_buf(f.pool, i)->pool = f.pool;
			rxp_pool_buf(f.pool, i)->buf_idx = i;
			rxp_pool_buf(f.pool, i)->data_off = (uint16_t)f.pool->data_off;
		}
		fx_close(&f);
	}
}

static void test_refill_batches(void)
{
	struct fx f;
	struct rxp_pkt *pkts[BURST];
	uint32_t ring_free;

	CHECK_EQ(fx_open(&f, "sim:", 4096), 0);
	CHECK_EQ(fx_start(&f), 0);
	ring_free = rxp_pool_ring_count(f.pool) + f.cache.count;
	CHECK_EQ(ring_free, 4096 - 256);
	/* ring full: nothing to post */
	CHECK_EQ(f.port.ops->refill(q0(&f)), 0);
	/* fewer than a batch of empty slots: refill waits */
	CHECK_EQ(f.port.ops->rx_burst(q0(&f), pkts, 10), 10);
	rxp_pool_free_bulk(&f.cache, pkts, 10);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 0);
	CHECK_EQ(f.port.ops->rx_burst(q0(&f), pkts, 21), 21);
	rxp_pool_free_bulk(&f.cache, pkts, 21);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 0);
	/* the 32nd empty slot makes a batch: all 32 are posted at once */
	CHECK_EQ(f.port.ops->rx_burst(q0(&f), pkts, 1), 1);
	rxp_pool_free_bulk(&f.cache, pkts, 1);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 32);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 0);
	/* a big gap is filled completely */
	CHECK_EQ(f.port.ops->rx_burst(q0(&f), pkts, 200), 200);
	rxp_pool_free_bulk(&f.cache, pkts, 200);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 200);
	CHECK_EQ(q0(&f)->stats.rx_no_buffer, 0);
	fx_close(&f);
}

/* A pool smaller than the RX ring: the port still works and says it is short of buffers. */
static void test_rx_no_buffer(void)
{
	struct fx f;
	static struct rxp_pkt *held[128];
	struct rxp_pkt *pkts[BURST];
	uint32_t n_held = 0;
	uint64_t nb;

	CHECK_EQ(fx_open(&f, "sim:", 100), 0);	/* 1024-descriptor ring, 100 buffers */
	CHECK_EQ(fx_start(&f), 0);
	CHECK(q0(&f)->stats.rx_no_buffer >= 1);
	CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 0);
	/* every buffer is on the ring: exactly 100 frames can arrive */
	for (int i = 0; i < 10; i++) {
		uint16_t n = f.port.ops->rx_burst(q0(&f), held + n_held, 64);

		n_held += n;
		if (n_held > 100)
			break;
		f.port.ops->refill(q0(&f));
	}
	CHECK_EQ(n_held, 100);
	nb = q0(&f)->stats.rx_no_buffer;
	CHECK_EQ(f.port.ops->refill(q0(&f)), 0);
	CHECK_EQ(q0(&f)->stats.rx_no_buffer, nb + 1);
	CHECK_EQ(f.port.ops->rx_burst(q0(&f), pkts, 64), 0);
	/* buffers come back: the port recovers */
	rxp_pool_free_bulk(&f.cache, held, n_held);
	CHECK_EQ(f.port.ops->refill(q0(&f)), 100);
	CHECK_EQ(drain(&f, 64, 10000, 2.0), 10000);
	fx_close(&f);
}

/* ---- TX ---- */

#define HOOK_MAX 512

struct tx_log {
	_Atomic uint32_t n;
	uint16_t len[HOOK_MAX];
	uint8_t first[HOOK_MAX];	/* first byte: the frame's tag */
	uint8_t last[HOOK_MAX];		/* last byte */
	_Atomic uint32_t bad_bytes;
};

static void tx_hook(void *ctx, const uint8_t *frame, uint16_t len)
{
	struct tx_log *log = ctx;
	uint32_t i = atomic_load(&log->n);

	if (i < HOOK_MAX) {
		log->len[i] = len;
		log->first[i] = frame[0];
		log->last[i] = frame[len - 1];
		/* the body is the tag's pattern, all the way */
		for (uint16_t b = 1; b < len; b++)
			if (frame[b] != (uint8_t)(frame[0] + b))
				atomic_fetch_add(&log->bad_bytes, 1);
	}
	atomic_store(&log->n, i + 1);
}

/* Allocates @n buffers and writes frame @tag0 + i of a length that varies into each. */
static uint32_t make_tx_frames(struct fx *f, struct rxp_pkt **pkts, uint32_t n, uint32_t tag0)
{
	uint32_t got = rxp_pool_alloc_burst(&f->cache, pkts, n);

	for (uint32_t i = 0; i < got; i++) {
		uint8_t *d = rxp_pkt_data(pkts[i]);
		uint8_t tag = (uint8_t)(tag0 + i);

		pkts[i]->len = (uint16_t)(60 + (tag0 + i) % 1400);
		for (uint16_t b = 0; b < pkts[i]->len; b++)
			d[b] = (uint8_t)(tag + b);
	}
	return got;
}

static bool wait_tx_idle(struct fx *f, uint32_t *completed)
{
	double t_end = now_s() + 2.0;

	while (now_s() < t_end) {
		*completed += f->port.ops->complete(q0(f));
		if (f->port.ops->tx_idle(q0(f)))
			return true;
	}
	return false;
}

static void tx_roundtrip(const char *spec)
{
	struct fx f;
	static struct tx_log log;
	struct rxp_pkt *pkts[100];
	uint64_t bytes = 0;
	uint32_t completed = 0, free_before;

	memset(&log, 0, sizeof(log));
	CHECK_EQ(fx_open(&f, spec, 2048), 0);
	rxp_sim_set_tx_hook(&f.port, tx_hook, &log);
	CHECK_EQ(fx_start(&f), 0);
	CHECK(f.port.ops->tx_idle(q0(&f)));
	free_before = rxp_pool_ring_count(f.pool) + f.cache.count;
	CHECK_EQ(make_tx_frames(&f, pkts, 100, 0), 100);
	for (int i = 0; i < 100; i++)
		bytes += pkts[i]->len;
	CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts, 60), 60);
	CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts + 60, 40), 40);
	CHECK(wait_tx_idle(&f, &completed));
	CHECK_EQ(completed, 100);
	/* completion gave every buffer back */
	CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, free_before);
	CHECK_EQ(atomic_load(&log.n), 100);
	CHECK_EQ(atomic_load(&log.bad_bytes), 0);
	for (uint32_t i = 0; i < 100 && i < atomic_load(&log.n); i++) {
		if (log.len[i] != 60 + i % 1400 || log.first[i] != (uint8_t)i ||
		    log.last[i] != (uint8_t)(i + log.len[i] - 1)) {
			printf("  frame %u: len %u first %u\n", i, log.len[i], log.first[i]);
			CHECK(0);
			break;
		}
	}
	CHECK_EQ(q0(&f)->stats.tx_packets, 100);
	CHECK_EQ(q0(&f)->stats.tx_bytes, bytes);
	CHECK_EQ(q0(&f)->stats.tx_completed, 100);
	CHECK_EQ(q0(&f)->stats.tx_ring_full, 0);
	/* nothing left to reap */
	CHECK_EQ(f.port.ops->complete(q0(&f)), 0);
	fx_close(&f);
}

static void test_tx_inline(void)
{
	tx_roundtrip("sim:");
}

static void test_tx_thread(void)
{
	tx_roundtrip("sim:device=thread,count=10");
}

static void test_tx_ring_full(void)
{
	struct fx f;
	struct rxp_pkt *pkts[100];
	static struct tx_log log;
	uint32_t completed = 0;

	memset(&log, 0, sizeof(log));
	CHECK_EQ(fx_open(&f, "sim:txring=64", 2048), 0);
	rxp_sim_set_tx_hook(&f.port, tx_hook, &log);
	CHECK_EQ(fx_start(&f), 0);
	CHECK_EQ(make_tx_frames(&f, pkts, 100, 0), 100);
	/* 64 descriptors: the first 64 go, the rest stay the caller's */
	CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts, 100), 64);
	CHECK_EQ(q0(&f)->stats.tx_ring_full, 36);
	CHECK_EQ(q0(&f)->stats.tx_packets, 64);
	/* sent but not reaped: the ring is still full */
	CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts + 64, 36), 0);
	CHECK_EQ(q0(&f)->stats.tx_ring_full, 72);
	CHECK(!f.port.ops->tx_idle(q0(&f)));
	completed = f.port.ops->complete(q0(&f));
	CHECK_EQ(completed, 64);
	CHECK(f.port.ops->tx_idle(q0(&f)));
	CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts + 64, 36), 36);
	CHECK_EQ(f.port.ops->complete(q0(&f)), 36);
	CHECK_EQ(q0(&f)->stats.tx_packets, 100);
	CHECK_EQ(q0(&f)->stats.tx_completed, 100);
	/* frames went out in order, none twice */
	CHECK_EQ(atomic_load(&log.n), 100);
	for (uint32_t i = 0; i < 100; i++)
		if (log.first[i] != (uint8_t)i) {
			CHECK_EQ(log.first[i], i);
			break;
		}
	fx_close(&f);
}

/* Frames still on the TX ring at close go back to the pool. */
static void test_tx_pending_at_close(void)
{
	static const char *const specs[] = { "sim:txring=64", "sim:device=thread,txring=64" };

	for (size_t s = 0; s < RXP_ARRAY_SIZE(specs); s++) {
		struct fx f;
		struct rxp_pkt *pkts[50];

		CHECK_EQ(fx_open(&f, specs[s], 2048), 0);
		CHECK_EQ(fx_start(&f), 0);
		CHECK_EQ(make_tx_frames(&f, pkts, 50, 0), 50);
		CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts, 50), 50);
		fx_close(&f);	/* audits */
	}
}

/*
 * txstall=S: a peer that does not drain. Frames stay on the TX ring and
 * their buffers out of the pool until the stall ends; then completion
 * reaps them without anything new being sent. rx=off posts no buffers.
 */
static void test_tx_stall(void)
{
	static const char *const specs[] = { "sim:rx=off,txring=64,txstall=0.2",
					     "sim:rx=off,txring=64,txstall=0.2,device=thread" };

	for (size_t s = 0; s < RXP_ARRAY_SIZE(specs); s++) {
		struct fx f;
		struct rxp_pkt *pkts[80];
		uint32_t completed = 0;
		double t_end;

		CHECK_EQ(fx_open(&f, specs[s], 512), 0);
		CHECK_EQ(fx_start(&f), 0);
		CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 512);
		CHECK_EQ(make_tx_frames(&f, pkts, 80, 0), 80);
		CHECK_EQ(f.port.ops->tx_burst(q0(&f), pkts, 80), 64);
		rxp_pool_free_bulk(&f.cache, pkts + 64, 16);
		CHECK_EQ(f.port.ops->complete(q0(&f)), 0);
		CHECK(!f.port.ops->tx_idle(q0(&f)));
		CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 512 - 64);
		t_end = now_s() + 2.0;
		while (completed < 64 && now_s() < t_end)
			completed += f.port.ops->complete(q0(&f));
		CHECK_EQ(completed, 64);
		CHECK(f.port.ops->tx_idle(q0(&f)));
		CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 512);
		fx_close(&f);
	}
}

/* ---- device thread ---- */

static void test_thread_mode_count(void)
{
	static const uint32_t counts[] = { 1, 777, 20000 };

	for (size_t i = 0; i < RXP_ARRAY_SIZE(counts); i++) {
		struct fx fi, ft;
		char spec[80];
		uint64_t n_inline, n_thread;

		snprintf(spec, sizeof(spec), "sim:count=%u", counts[i]);
		CHECK_EQ(fx_open(&fi, spec, 4096), 0);
		CHECK_EQ(fx_start(&fi), 0);
		n_inline = drain(&fi, 64, UINT64_MAX, 2.0);
		fx_close(&fi);

		snprintf(spec, sizeof(spec), "sim:device=thread,count=%u", counts[i]);
		CHECK_EQ(fx_open(&ft, spec, 4096), 0);
		CHECK_EQ(fx_start(&ft), 0);
		n_thread = drain(&ft, 64, UINT64_MAX, 2.0);
		CHECK(ft.port.ops->rx_finished(q0(&ft)));
		CHECK_EQ(q0(&ft)->stats.rx_packets, counts[i]);
		fx_close(&ft);

		CHECK_EQ(n_inline, counts[i]);
		CHECK_EQ(n_thread, counts[i]);
	}
}

/* With the device on its own thread, frames arrive whole and addressed to the port. */
static void test_thread_mode_frames(void)
{
	struct fx f;
	struct rxp_pkt *pkts[BURST];
	uint64_t total = 0, bad = 0;
	double t_end = now_s() + 20.0;	/* ends at 50000 frames; the bound is for a loaded machine */

	CHECK_EQ(fx_open(&f, "sim:device=thread,size=128,rxring=256", 1024), 0);
	CHECK_EQ(fx_start(&f), 0);
	while (total < 50000 && now_s() < t_end) {
		uint16_t n = f.port.ops->rx_burst(q0(&f), pkts, 64);

		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *d = rxp_pkt_cdata(pkts[i]);

			bad += pkts[i]->len != 124 || memcmp(d, f.port.mac, 6) ||
			       rxp_ip4_csum_verify(d + RXP_ETH_HLEN, 5) != 0;
		}
		total += n;
		rxp_pool_free_bulk(&f.cache, pkts, n);
		f.port.ops->refill(q0(&f));
	}
	CHECK(total >= 50000);
	CHECK_EQ(bad, 0);
	fx_close(&f);
}

/* ---- pcap replay ---- */

#define PCAP_FRAMES 6
static const uint16_t pcap_lens[PCAP_FRAMES] = { 60, 61, 100, 333, 1514, 64 };

static uint8_t pcap_byte(unsigned frame, unsigned i)
{
	return (uint8_t)(frame * 31 + i * 7 + (i >> 8));
}

static void pcap_path(char *path, size_t len, const char *what)
{
	snprintf(path, len, "/tmp/rxp_test_sim_%d_%s.pcap", (int)getpid(), what);
}

/* Writes the test frames to @path with libpcap. Returns 0 or -1. */
static int write_pcap(const char *path, int linktype, unsigned n_frames,
		      const uint16_t *lens)
{
	pcap_t *pd = pcap_open_dead(linktype, 65535);
	pcap_dumper_t *dump;
	uint8_t frame[2048];

	if (!pd)
		return -1;
	dump = pcap_dump_open(pd, path);
	if (!dump) {
		printf("  pcap_dump_open(%s): %s\n", path, pcap_geterr(pd));
		pcap_close(pd);
		return -1;
	}
	for (unsigned f = 0; f < n_frames; f++) {
		struct pcap_pkthdr hdr = { .caplen = lens[f], .len = lens[f] };

		hdr.ts.tv_sec = 1700000000 + f;
		for (unsigned i = 0; i < lens[f]; i++)
			frame[i] = pcap_byte(f, i);
		pcap_dump((u_char *)dump, &hdr, frame);
	}
	pcap_dump_close(dump);
	pcap_close(pd);
	return 0;
}

/* Receives everything and checks it is the file's frames, in order, @loops times. */
static void check_replay(const char *spec, unsigned expect_frames)
{
	struct fx f;
	struct rxp_pkt *pkts[BURST];
	unsigned got = 0, wrong = 0;
	double t_end = now_s() + 2.0;

	CHECK_EQ(fx_open(&f, spec, 2048), 0);
	CHECK_EQ(fx_start(&f), 0);
	while (now_s() < t_end) {
		uint16_t n = f.port.ops->rx_burst(q0(&f), pkts, 4);	/* small bursts on purpose */

		for (uint16_t i = 0; i < n; i++, got++) {
			unsigned fi = got % PCAP_FRAMES;
			const uint8_t *d = rxp_pkt_cdata(pkts[i]);
			bool ok = pkts[i]->len == pcap_lens[fi];

			for (unsigned b = 0; ok && b < pcap_lens[fi]; b++)
				ok = d[b] == pcap_byte(fi, b);
			if (!ok && wrong++ < 3)
				printf("  %s: frame %u (len %u) differs from file frame %u (len %u)\n",
				       spec, got, pkts[i]->len, fi, pcap_lens[fi]);
		}
		rxp_pool_free_bulk(&f.cache, pkts, n);
		f.port.ops->refill(q0(&f));
		if (!n && f.port.ops->rx_finished(q0(&f)))
			break;
	}
	CHECK_EQ(got, expect_frames);
	CHECK_EQ(wrong, 0);
	CHECK(f.port.ops->rx_finished(q0(&f)));
	fx_close(&f);
}

static void test_pcap_replay(void)
{
	char path[128], spec[200];

	pcap_path(path, sizeof(path), "replay");
	CHECK_EQ(write_pcap(path, DLT_EN10MB, PCAP_FRAMES, pcap_lens), 0);

	snprintf(spec, sizeof(spec), "sim:pcap=%s", path);
	check_replay(spec, PCAP_FRAMES);
	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=2", path);
	check_replay(spec, 2 * PCAP_FRAMES);
	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=3,device=thread", path);
	check_replay(spec, 3 * PCAP_FRAMES);
	/* count= stops a replay early */
	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=2,count=8", path);
	check_replay(spec, 8);

	/* loop=0 replays without end */
	struct fx f;

	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=0", path);
	CHECK_EQ(fx_open(&f, spec, 2048), 0);
	CHECK_EQ(fx_start(&f), 0);
	CHECK_EQ(drain(&f, 64, 1000, 2.0), 1000);
	CHECK(!f.port.ops->rx_finished(q0(&f)));
	fx_close(&f);
	unlink(path);
}

static void test_pcap_errors(void)
{
	char path[128], spec[200];
	struct fx f;
	static const uint16_t big[1] = { 1600 };

	/* a file that is not there: the message names it */
	pcap_path(path, sizeof(path), "missing");
	snprintf(spec, sizeof(spec), "sim:pcap=%s", path);
	CHECK(fx_try_open(&f, 0, spec, 256, RXP_FRAME_DEFAULT) < 0);
	CHECK(strstr(f.err, path) != NULL);
	fx_close(&f);

	/* not Ethernet */
	pcap_path(path, sizeof(path), "raw");
	CHECK_EQ(write_pcap(path, DLT_RAW, PCAP_FRAMES, pcap_lens), 0);
	snprintf(spec, sizeof(spec), "sim:pcap=%s", path);
	CHECK_EQ(fx_try_open(&f, 0, spec, 256, RXP_FRAME_DEFAULT), -EINVAL);
	CHECK(strstr(f.err, "EN10MB") != NULL || strstr(f.err, "Ethernet") != NULL);
	fx_close(&f);
	unlink(path);

	/* a frame larger than the pool's buffers take */
	pcap_path(path, sizeof(path), "big");
	CHECK_EQ(write_pcap(path, DLT_EN10MB, 1, big), 0);
	snprintf(spec, sizeof(spec), "sim:pcap=%s", path);
	CHECK_EQ(fx_try_open(&f, 0, spec, 256, RXP_FRAME_DEFAULT), -EINVAL);
	CHECK(strstr(f.err, "1600") != NULL);
	fx_close(&f);
	unlink(path);

	/* an empty file */
	pcap_path(path, sizeof(path), "empty");
	CHECK_EQ(write_pcap(path, DLT_EN10MB, 0, pcap_lens), 0);
	snprintf(spec, sizeof(spec), "sim:pcap=%s", path);
	CHECK_EQ(fx_try_open(&f, 0, spec, 256, RXP_FRAME_DEFAULT), -EINVAL);
	CHECK(strstr(f.err, "no frames") != NULL);
	fx_close(&f);
	unlink(path);
}

/* ---- arguments ---- */

static void test_bad_args(void)
{
	static const struct { const char *spec, *must_say; int ret; } cases[] = {
		{ "sim:size=10", "size=10", -EINVAL },
		{ "sim:size=1523", "size=1523", -EINVAL },	/* past max_frame + FCS */
		{ "sim:size=big", "size", -EINVAL },
		{ "sim:rxring=1000", "rxring=1000", -EINVAL },	/* not a power of two */
		{ "sim:txring=100", "txring=100", -EINVAL },
		{ "sim:rxring=32", "rxring=32", -EINVAL },	/* below the minimum */
		{ "sim:txring=65536", "txring=65536", -EINVAL },
		{ "sim:device=foo", "device=foo", -EINVAL },
		{ "sim:colour=red", "colour", -EINVAL },
		{ "sim:size=64,colour=red", "colour", -EINVAL },
		{ "sim:proto=udp5", "proto=udp5", -EINVAL },
		{ "sim:proto=", "proto", -EINVAL },
		{ "sim:flows=0", "flows=0", -EINVAL },
		{ "sim:bad=101", "bad=101", -EINVAL },
		{ "sim:count=abc", "count=abc", -EINVAL },
		{ "sim:count=-5", "count=-5", -EINVAL },
		{ "sim:loop=x", "loop=x", -EINVAL },
		{ "sim:mac=02:00:00:00:00", "mac=", -EINVAL },
		{ "sim:src4=198.18.0.0", "src4", -EINVAL },	/* no prefix length */
		{ "sim:dst4=198.19.0.0/33", "dst4", -EINVAL },
		{ "sim:src6=2001:db8::/129", "src6", -EINVAL },
		{ "sim:dst6=nothing/64", "dst6", -EINVAL },
		{ "sim:size", "size", -EINVAL },		/* not key=value */
		{ "sim:size=64,size=128", "size", -EINVAL },	/* twice */
		{ "nic:", "nic", -ENOENT },			/* unknown driver */
		{ "nic:size=64", "nic", -ENOENT },
		{ ":size=64", "driver", -EINVAL },		/* no driver */
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(cases); i++) {
		struct fx f;
		int ret;

		memset(&f, 0, sizeof(f));
		f.pool = pool_new(256, RXP_FRAME_DEFAULT);
		CHECK_EQ(rxp_pool_cache_init(&f.cache, f.pool, 256), 0);
		ret = rxp_port_open(&f.port, 0, "sim0", cases[i].spec, f.pool, f.err, sizeof(f.err));
		if (ret != cases[i].ret || !strstr(f.err, cases[i].must_say)) {
			printf("  '%s': returned %d (want %d), message '%s' (must name '%s')\n",
			       cases[i].spec, ret, cases[i].ret, f.err, cases[i].must_say);
			check_failures++;
		}
		fx_close(&f);	/* harmless after a failed open; nothing may leak */
	}
}

static void test_bad_port_name(void)
{
	struct fx f;

	memset(&f, 0, sizeof(f));
	f.pool = pool_new(64, RXP_FRAME_DEFAULT);
	CHECK_EQ(rxp_pool_cache_init(&f.cache, f.pool, 64), 0);
	CHECK_EQ(rxp_port_open(&f.port, 0, "", "sim:", f.pool, f.err, sizeof(f.err)), -EINVAL);
	CHECK(strstr(f.err, "name") != NULL);
	CHECK_EQ(rxp_port_open(&f.port, 0, "a_name_far_too_long", "sim:", f.pool, f.err,
			       sizeof(f.err)), -EINVAL);
	CHECK(strstr(f.err, "a_name_far_too_long") != NULL);
	fx_close(&f);
}

/* Ports open, run and close many times on one pool without losing a buffer. */
static void test_reopen(void)
{
	struct rxp_pool *pool = pool_new(2048, RXP_FRAME_DEFAULT);
	struct rxp_pool_cache cache;
	struct rxp_pool_cache *caches[] = { &cache };
	static struct rxp_port port;
	char err[ERR_LEN];

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 256), 0);
	for (int i = 0; i < 30; i++) {
		struct rxp_pkt *pkts[64];
		const char *spec = i % 2 ? "sim:device=thread,rxring=512" : "sim:rxring=512";
		uint16_t n = 0;
		double t_end = now_s() + 1.0;

		CHECK_EQ(rxp_port_open(&port, 0, "p0", spec, pool, err, sizeof(err)), 0);
		CHECK_EQ(rxp_port_start(&port, &cache, err, sizeof(err)), 0);
		while (!n && now_s() < t_end)
			n = port.ops->rx_burst(&port.queues[0], pkts, 64);
		CHECK(n > 0);
		/* hold the frames across close, as a stack still working on them would */
		rxp_port_close(&port);
		rxp_pool_free_bulk(&cache, pkts, n);
		CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	}
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

int main(void)
{
	RUN(test_drivers);
	RUN(test_open_defaults);
	RUN(test_rx_burst_bounded);
	RUN(test_finite_count);
	RUN(test_frame_placement);
	RUN(test_protocols);
	RUN(test_flows_and_prefixes);
	RUN(test_frames_fit_small_buffers);
	RUN(test_refill_batches);
	RUN(test_rx_no_buffer);
	RUN(test_tx_inline);
	RUN(test_tx_thread);
	RUN(test_tx_ring_full);
	RUN(test_tx_pending_at_close);
	RUN(test_tx_stall);
	RUN(test_thread_mode_count);
	RUN(test_thread_mode_frames);
	RUN(test_pcap_replay);
	RUN(test_pcap_errors);
	RUN(test_bad_args);
	RUN(test_bad_port_name);
	RUN(test_reopen);
	return tests_done();
}
