/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of packet capture (src/net/capture.h,
 * src/ctl/capture_file.h, src/ctl/pcapng.h): a router stack
 * with two fake ports forwards and drops hand-built frames (broken ones
 * included) while a capture writes a pcapng file; the test reads the file
 * back with a parser of its own (block structure, interfaces, direction,
 * drop reason per packet, time stamps, bytes) and with tshark when it is
 * installed, and checks count, filter, snap length, port selection, lost
 * packets with a tiny buffer, the errors a user sees, and that capturing
 * changes nothing about forwarding.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "net/capture.h"
#include "ctl/capture_file.h"
#include "rxpath/csum.h"
#include "ctl/pcapng.h"
#include "rxpath/port.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "check.h"

#define ERR_LEN 512
#define FRAME_MAX 1536
#define TSHARK "/usr/bin/tshark"

static const uint8_t mac_in[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };	/* port 0 "in0" */
static const uint8_t mac_out[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };	/* port 1 "out1" */
static const uint8_t mac_peer[6] = { 0x02, 0xee, 0x00, 0x00, 0x00, 0x01 };	/* sender on in0 */
static const uint8_t mac_gw[6] = { 0x02, 0xee, 0x00, 0x00, 0x01, 0x02 };	/* next hop on out1 */
static const uint8_t mac_other[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 };
static const char *const port_names[2] = { "in0", "out1" };

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void tmp_path(char *path, size_t len, const char *what)
{
	snprintf(path, len, "/tmp/rxp_test_capture_%d_%s.pcapng", (int)getpid(), what);
}

/* ---- frames ---- */

struct frame {
	uint8_t b[FRAME_MAX];
	uint16_t len;
};

/* IPv4/UDP from the peer on in0 to @dst with @ttl, @payload bytes of UDP payload. */
static void udp4(struct frame *f, const uint8_t *dst_mac, const char *dst, uint8_t ttl,
		 uint16_t payload)
{
	uint8_t *ip = f->b + RXP_ETH_HLEN, *udp = ip + RXP_IP4_HLEN;
	uint16_t ip_len = (uint16_t)(RXP_IP4_HLEN + RXP_UDP_HLEN + payload), c;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, dst_mac, 6);
	memcpy(f->b + 6, mac_peer, 6);
	put16(f->b + 12, RXP_ETHERTYPE_IP4);
	ip[0] = 0x45;
	put16(ip + 2, ip_len);
	put16(ip + 4, 0x1234);
	ip[8] = ttl;
	ip[9] = RXP_IPPROTO_UDP;
	inet_pton(AF_INET, "198.18.0.1", ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	c = rxp_csum(ip, RXP_IP4_HLEN);
	memcpy(ip + 10, &c, 2);
	put16(udp, 1234);
	put16(udp + 2, 9);
	put16(udp + 4, (uint16_t)(RXP_UDP_HLEN + payload));
	for (uint16_t i = 0; i < payload; i++)
		udp[RXP_UDP_HLEN + i] = (uint8_t)(0xa0 + i);
	f->len = (uint16_t)RXP_MAX((unsigned)(RXP_ETH_HLEN + ip_len), (unsigned)RXP_ETH_ZLEN);
}

/* What each test frame is and what the router does with it. */
struct frame_case {
	const char *what;
	const char *drop;	/* drop reason name; NULL: forwarded */
	bool icmp_back;		/* the router answers with an ICMP error on in0 */
	struct frame f;
};

enum {
	C_FORWARD, C_BAD_CSUM, C_RUNT, C_NOT_FOR_US, C_ETHERTYPE, C_TTL, C_NO_ROUTE, C_IP6_VERSION,
	C_BAD_IHL, N_CASES
};

static void build_cases(struct frame_case *c)
{
	struct frame *f;

	c[C_FORWARD] = (struct frame_case){ .what = "UDP to a routed prefix" };
	udp4(&c[C_FORWARD].f, mac_in, "198.19.0.1", 64, 18);

	c[C_BAD_CSUM] = (struct frame_case){ .what = "IPv4 checksum off by one bit",
					     .drop = "ip4_bad_checksum" };
	f = &c[C_BAD_CSUM].f;
	udp4(f, mac_in, "198.19.0.2", 64, 18);
	f->b[RXP_ETH_HLEN + 11] ^= 1;

	c[C_RUNT] = (struct frame_case){ .what = "runt of 13 bytes", .drop = "eth_truncated" };
	f = &c[C_RUNT].f;
	udp4(f, mac_in, "198.19.0.3", 64, 18);
	f->len = 13;

	c[C_NOT_FOR_US] = (struct frame_case){ .what = "unicast to another MAC",
					       .drop = "eth_not_for_us" };
	udp4(&c[C_NOT_FOR_US].f, mac_other, "198.19.0.4", 64, 18);

	c[C_ETHERTYPE] = (struct frame_case){ .what = "EtherType 0x88b5", .drop = "eth_unknown_type" };
	f = &c[C_ETHERTYPE].f;
	udp4(f, mac_in, "198.19.0.5", 64, 18);
	put16(f->b + 12, 0x88b5);

	c[C_TTL] = (struct frame_case){ .what = "TTL 1", .drop = "ttl_exceeded", .icmp_back = true };
	udp4(&c[C_TTL].f, mac_in, "198.19.0.6", 1, 18);

	c[C_NO_ROUTE] = (struct frame_case){ .what = "no route", .drop = "no_route",
					     .icmp_back = true };
	udp4(&c[C_NO_ROUTE].f, mac_in, "203.0.113.7", 64, 18);

	c[C_IP6_VERSION] = (struct frame_case){ .what = "IPv6 EtherType, version 4",
						.drop = "ip6_bad_version" };
	f = &c[C_IP6_VERSION].f;
	udp4(f, mac_in, "198.19.0.8", 64, 40);
	put16(f->b + 12, RXP_ETHERTYPE_IP6);

	c[C_BAD_IHL] = (struct frame_case){ .what = "IHL 15 in a 60-byte frame", .drop = "ip4_bad_ihl" };
	f = &c[C_BAD_IHL].f;
	udp4(f, mac_in, "198.19.0.9", 64, 18);
	f->b[RXP_ETH_HLEN] = 0x4f;
}

/* ---- a router with two fake ports ---- */

/* What a fake port's TX side was given. */
struct fake_tx {
	uint16_t room;		/* packets it takes per tx_burst */
	uint64_t n_frames;
	uint64_t hash;		/* FNV-1a over every frame sent, in order */
	struct frame last;
};

static uint16_t fake_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct fake_tx *t = q->priv;
	uint16_t take = RXP_MIN(n, t->room);

	for (uint16_t i = 0; i < take; i++) {
		const uint8_t *d = rxp_pkt_cdata(pkts[i]);

		t->hash = (t->hash ^ pkts[i]->len) * 0x100000001b3ull;
		for (uint16_t k = 0; k < pkts[i]->len; k++)
			t->hash = (t->hash ^ d[k]) * 0x100000001b3ull;
		t->last.len = RXP_MIN(pkts[i]->len, (uint16_t)FRAME_MAX);
		memcpy(t->last.b, d, t->last.len);
	}
	t->n_frames += take;
	/* sent at once: the buffers go back to the pool */
	rxp_pool_free_bulk(q->cache, pkts, take);
	return take;
}

static const struct rxp_port_ops fake_ops = { .driver = "fake", .tx_burst = fake_tx_burst };

struct fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_router *router;
	struct rxp_port ports[2];
	struct fake_tx tx[2];
	struct rxp_stack st;
};

static struct fx fx;	/* large: ports and the stack's tables */

static int ip4(const char *s, uint8_t out[4])
{
	return inet_pton(AF_INET, s, out) == 1 ? 0 : -1;
}

static void fx_open(void)
{
	struct rxp_pool_config cfg = { .n_bufs = 2048, .max_frame = 1518, .rx_offset = 2 };
	struct rxp_rx_tuning t = rxp_rx_tuning_default();
	char err[ERR_LEN];
	uint8_t a[4], gw[4];
	int if0, if1;

	memset(&fx, 0, sizeof(fx));
	fx.pool = rxp_pool_create(&cfg, err, sizeof(err));
	CHECK(fx.pool != NULL);
	CHECK_EQ(rxp_pool_cache_init(&fx.cache, fx.pool, 256), 0);
	fx.router = calloc(1, sizeof(*fx.router));
	CHECK(fx.router != NULL);
	CHECK_EQ(rxp_router_init(fx.router, 1024, 1024), 0);
	if0 = rxp_router_add_if(fx.router, "in0", 0, 0, mac_in, 1500);
	if1 = rxp_router_add_if(fx.router, "out1", 1, 0, mac_out, 1500);
	CHECK(if0 == 0 && if1 == 1);
	ip4("10.0.0.1", a);
	CHECK_EQ(rxp_router_add_addr(fx.router, if0, 4, a, 24), 0);
	ip4("10.0.1.1", a);
	CHECK_EQ(rxp_router_add_addr(fx.router, if1, 4, a, 24), 0);
	ip4("10.0.1.2", gw);
	CHECK_EQ(rxp_router_add_neigh(fx.router, if1, 4, gw, mac_gw), 0);
	ip4("198.19.0.0", a);
	CHECK_EQ(rxp_router_add_route(fx.router, RXP_VRF_DEFAULT, 4, a, 16, gw, -1), 0);
	CHECK_EQ(rxp_stack_init(&fx.st, &t, &fx.cache), 0);
	fx.st.ip_id = 0;	/* identifications start at random: here, the same in every run */
	for (uint16_t p = 0; p < 2; p++) {
		snprintf(fx.ports[p].name, sizeof(fx.ports[p].name), "%s", port_names[p]);
		fx.ports[p].id = p;
		fx.ports[p].n_queues = 1;
		fx.ports[p].ops = &fake_ops;
		fx.ports[p].pool = fx.pool;
		fx.ports[p].queues[0].port = &fx.ports[p];
		fx.ports[p].queues[0].cache = &fx.cache;
		fx.ports[p].queues[0].priv = &fx.tx[p];
		fx.tx[p].room = UINT16_MAX;
		fx.tx[p].hash = 0xcbf29ce484222325ull;
		CHECK_EQ(rxp_stack_add_port(&fx.st, p, p ? mac_out : mac_in, &fx.ports[p].queues[0]),
			 0);
	}
	rxp_stack_set_router(&fx.st, fx.router);
}

static void fx_close(void)
{
	struct rxp_pool_cache *caches[] = { &fx.cache };

	CHECK(fx.st.capture == NULL);
	rxp_stack_close(&fx.st);
	rxp_router_free(fx.router);
	free(fx.router);
	CHECK_EQ(rxp_pool_audit(fx.pool, caches, 1), 0);
	rxp_pool_cache_close(&fx.cache);
	CHECK_EQ(rxp_pool_destroy(fx.pool), 0);
}

/* Copies @f into a fresh buffer as if port 0 had received it. */
static struct rxp_pkt *rx_frame(const struct frame *f)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(&fx.cache);

	CHECK(pkt != NULL);
	if (!pkt)
		return NULL;
	pkt->data_off = (uint16_t)fx.pool->data_off;
	memcpy(rxp_pkt_data(pkt), f->b, f->len);
	pkt->len = f->len;
	pkt->port = 0;
	pkt->queue = 0;
	return pkt;
}

/* Each case as a burst of its own, list handoff, then per-packet handoff. */
static void feed_each(const struct frame_case *cases, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct rxp_pkt *pkt = rx_frame(&cases[i].f);

		rxp_stack_input_list(&fx.st, &pkt, 1);
	}
	for (unsigned i = 0; i < n; i++)
		rxp_stack_input_one(&fx.st, rx_frame(&cases[i].f));
}

/* Every case @reps times in one vector. */
static void feed_vector(const struct frame_case *cases, unsigned n, unsigned reps)
{
	struct rxp_pkt *pkts[RXP_BURST_MAX];
	uint16_t k = 0;

	for (unsigned r = 0; r < reps; r++)
		for (unsigned i = 0; i < n && k < RXP_BURST_MAX; i++)
			pkts[k++] = rx_frame(&cases[i].f);
	rxp_stack_input_list(&fx.st, pkts, k);
}

/* ---- a pcapng reader of the test's own ---- */

#define MAX_IFS 8

struct epb {
	uint32_t if_id;
	uint64_t ts;
	uint32_t cap_len, orig_len;
	const uint8_t *data;
	bool has_flags;
	uint32_t flags;
	char comment[128];	/* "" when none */
};

struct pcapng_file {
	uint8_t *bytes;
	size_t len;
	unsigned n_idb;
	char if_name[MAX_IFS][32];
	uint16_t linktype[MAX_IFS];
	uint32_t snaplen[MAX_IFS];
	int tsresol[MAX_IFS];	/* -1: not given */
	unsigned n_epb;
	struct epb *epb;
	unsigned n_isb;
	uint64_t isb_ifdrop[MAX_IFS];
	char error[200];	/* "" when the file is well formed */
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

#define BAD(pf, ...) do { snprintf((pf)->error, sizeof((pf)->error), __VA_ARGS__); return -1; } while (0)

/*
 * Walks the options in [p, end) and calls back for each. Returns 0, or -1
 * with pf->error when they are malformed (overrun, no end marker).
 */
static int walk_options(struct pcapng_file *pf, const uint8_t *p, const uint8_t *end,
			void (*fn)(void *ctx, uint16_t code, const uint8_t *v, uint16_t len),
			void *ctx)
{
	if (p == end)
		return 0;	/* no options at all */
	while (end - p >= 4) {
		uint16_t code = rd16(p), len = rd16(p + 2);
		size_t padded = (len + 3u) & ~3u;

		p += 4;
		if (code == 0) {
			if (len || p != end)
				BAD(pf, "opt_endofopt not last or has a value");
			return 0;
		}
		if ((size_t)(end - p) < padded)
			BAD(pf, "option %u of %u bytes runs past its block", code, len);
		fn(ctx, code, p, len);
		p += padded;
	}
	BAD(pf, "options end without opt_endofopt");
}

static void idb_opt(void *ctx, uint16_t code, const uint8_t *v, uint16_t len)
{
	struct pcapng_file *pf = ctx;
	unsigned i = pf->n_idb;

	if (code == RXP_PCAPNG_IF_NAME)
		snprintf(pf->if_name[i], sizeof(pf->if_name[i]), "%.*s", (int)len, (const char *)v);
	else if (code == RXP_PCAPNG_IF_TSRESOL && len == 1)
		pf->tsresol[i] = v[0];
}

static void epb_opt(void *ctx, uint16_t code, const uint8_t *v, uint16_t len)
{
	struct epb *e = ctx;

	if (code == RXP_PCAPNG_EPB_FLAGS && len == 4) {
		e->has_flags = true;
		e->flags = rd32(v);
	} else if (code == RXP_PCAPNG_OPT_COMMENT) {
		snprintf(e->comment, sizeof(e->comment), "%.*s", (int)len, (const char *)v);
	}
}

static void isb_opt(void *ctx, uint16_t code, const uint8_t *v, uint16_t len)
{
	uint64_t *ifdrop = ctx;

	if (code == RXP_PCAPNG_ISB_IFDROP && len == 8)
		memcpy(ifdrop, v, 8);
}

static void shb_opt(void *ctx, uint16_t code, const uint8_t *v, uint16_t len)
{
	(void)ctx;
	(void)code;
	(void)v;
	(void)len;
}

static int parse_blocks(struct pcapng_file *pf)
{
	size_t off = 0;
	unsigned cap_epb = 0;

	while (off < pf->len) {
		const uint8_t *b = pf->bytes + off;
		uint32_t type, len;

		if (pf->len - off < 12)
			BAD(pf, "%zu stray bytes at the end", pf->len - off);
		type = rd32(b);
		len = rd32(b + 4);
		if (len < 12 || len % 4 || len > pf->len - off)
			BAD(pf, "block at %zu: bad total length %u", off, len);
		if (rd32(b + len - 4) != len)
			BAD(pf, "block at %zu: trailer length %u, header %u", off, rd32(b + len - 4), len);
		if (off == 0 && type != RXP_PCAPNG_BLOCK_SHB)
			BAD(pf, "first block is 0x%x, not a Section Header", type);
		if (type == RXP_PCAPNG_BLOCK_SHB) {
			if (off != 0)
				BAD(pf, "a second section at %zu", off);
			if (len < 28 || rd32(b + 8) != 0x1a2b3c4du || rd16(b + 12) != 1 || rd16(b + 14) != 0)
				BAD(pf, "Section Header: bad magic or version");
			if (walk_options(pf, b + 24, b + len - 4, shb_opt, NULL))
				return -1;
		} else if (type == RXP_PCAPNG_BLOCK_IDB) {
			if (pf->n_idb == MAX_IFS)
				BAD(pf, "more than %d interfaces", MAX_IFS);
			if (len < 20)
				BAD(pf, "IDB too short");
			pf->linktype[pf->n_idb] = rd16(b + 8);
			pf->snaplen[pf->n_idb] = rd32(b + 12);
			pf->tsresol[pf->n_idb] = -1;
			if (walk_options(pf, b + 16, b + len - 4, idb_opt, pf))
				return -1;
			pf->n_idb++;
		} else if (type == RXP_PCAPNG_BLOCK_EPB) {
			struct epb e = { 0 };
			size_t padded;

			if (len < 32)
				BAD(pf, "EPB at %zu too short", off);
			e.if_id = rd32(b + 8);
			e.ts = (uint64_t)rd32(b + 12) << 32 | rd32(b + 16);
			e.cap_len = rd32(b + 20);
			e.orig_len = rd32(b + 24);
			padded = ((size_t)e.cap_len + 3) & ~(size_t)3;
			if (e.cap_len > e.orig_len || padded > len - 32)
				BAD(pf, "EPB at %zu: captured %u of %u in a %u-byte block", off, e.cap_len,
				    e.orig_len, len);
			if (e.if_id >= pf->n_idb)
				BAD(pf, "EPB at %zu names interface %u of %u", off, e.if_id, pf->n_idb);
			e.data = b + 28;
			if (walk_options(pf, b + 28 + padded, b + len - 4, epb_opt, &e))
				return -1;
			if (pf->n_epb == cap_epb) {
				struct epb *more;

				cap_epb = cap_epb ? cap_epb * 2 : 64;
				more = realloc(pf->epb, cap_epb * sizeof(*more));
				if (!more)
					BAD(pf, "out of memory");
				pf->epb = more;
			}
			pf->epb[pf->n_epb++] = e;
		} else if (type == RXP_PCAPNG_BLOCK_ISB) {
			uint32_t if_id;

			if (len < 24)
				BAD(pf, "ISB too short");
			if_id = rd32(b + 8);
			if (if_id >= pf->n_idb)
				BAD(pf, "ISB names interface %u of %u", if_id, pf->n_idb);
			if (walk_options(pf, b + 20, b + len - 4, isb_opt, &pf->isb_ifdrop[if_id]))
				return -1;
			pf->n_isb++;
		} else {
			BAD(pf, "unexpected block type 0x%x at %zu", type, off);
		}
		off += len;
	}
	if (!pf->len)
		BAD(pf, "the file is empty");
	return 0;
}

/* Reads and parses @path; a malformed file is a failed check. */
static void pcapng_read(struct pcapng_file *pf, const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;

	memset(pf, 0, sizeof(*pf));
	CHECK(f != NULL);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	pf->bytes = malloc(size > 0 ? (size_t)size : 1);
	if (pf->bytes && size > 0 && fread(pf->bytes, 1, (size_t)size, f) == (size_t)size)
		pf->len = (size_t)size;
	fclose(f);
	if (parse_blocks(pf)) {
		printf("  %s: %s\n", path, pf->error);
		check_failures++;
	}
}

static void pcapng_free(struct pcapng_file *pf)
{
	free(pf->bytes);
	free(pf->epb);
}

static const char *epb_if(const struct pcapng_file *pf, const struct epb *e)
{
	return pf->if_name[e->if_id];
}

/* ---- tshark ---- */

static bool have_tshark(void)
{
	return access(TSHARK, X_OK) == 0;
}

/*
 * Runs tshark on @path printing @fields (tab-separated) per packet into
 * @out, one line each. Returns the number of lines, or -1.
 */
static int tshark_lines(const char *path, const char *fields, const char *filter, char out[][256],
			int max)
{
	char cmd[1024];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), TSHARK " -n -r '%s' %s%s%s -T fields %s 2>/dev/null", path,
		 filter ? "-Y '" : "", filter ? filter : "", filter ? "'" : "", fields);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n < max && fgets(out[n], 256, p)) {
		out[n][strcspn(out[n], "\n")] = '\0';
		n++;
	}
	if (pclose(p) != 0)
		return -1;
	return n;
}

/* ---- expectations ---- */

struct want {
	const char *ifname;
	uint32_t dir;		/* RXP_PCAPNG_DIR_* */
	const char *comment;	/* "" for none */
	const struct frame *frame;	/* bytes expected, NULL: not checked */
};

/* What the capture of one case fed alone (rx + drop + tx) must hold, in order. */
static unsigned want_case(const struct frame_case *c, struct want *w)
{
	unsigned n = 0;

	w[n++] = (struct want){ "in0", RXP_PCAPNG_DIR_INBOUND, "", &c->f };
	if (c->drop)
		w[n++] = (struct want){ "in0", RXP_PCAPNG_DIR_INBOUND, c->drop, &c->f };
	else
		w[n++] = (struct want){ "out1", RXP_PCAPNG_DIR_OUTBOUND, "", NULL };
	if (c->icmp_back)
		w[n++] = (struct want){ "in0", RXP_PCAPNG_DIR_OUTBOUND, "", NULL };
	return n;
}

static bool epb_matches(const struct pcapng_file *pf, const struct epb *e, const struct want *w)
{
	if (strcmp(epb_if(pf, e), w->ifname) || !e->has_flags ||
	    (e->flags & RXP_PCAPNG_DIR_MASK) != w->dir || strcmp(e->comment, w->comment))
		return false;
	if (w->frame && (e->orig_len != w->frame->len || e->cap_len != w->frame->len ||
			 memcmp(e->data, w->frame->b, w->frame->len)))
		return false;
	return true;
}

static const char *dir_name(uint32_t flags)
{
	switch (flags & RXP_PCAPNG_DIR_MASK) {
	case RXP_PCAPNG_DIR_INBOUND: return "in";
	case RXP_PCAPNG_DIR_OUTBOUND: return "out";
	default: return "?";
	}
}

static struct rxp_capture_file_spec spec_for(const char *path, unsigned points)
{
	return (struct rxp_capture_file_spec){
		.path = path,
		.points = points,
		.port = RXP_CAPTURE_FILE_ALL_PORTS,
		.port_names = port_names,
		.n_ports = 2,
	};
}

/* ---- tests ---- */

static void test_points_parse(void)
{
	unsigned p = 0;

	CHECK_EQ(rxp_capture_points_parse("rx", &p), 0);
	CHECK_EQ(p, RXP_CAPTURE_RX);
	CHECK_EQ(rxp_capture_points_parse("drop", &p), 0);
	CHECK_EQ(p, RXP_CAPTURE_DROP);
	CHECK_EQ(rxp_capture_points_parse("rx+drop", &p), 0);
	CHECK_EQ(p, RXP_CAPTURE_RX | RXP_CAPTURE_DROP);
	CHECK_EQ(rxp_capture_points_parse("all", &p), 0);
	CHECK_EQ(p, RXP_CAPTURE_POINTS_ALL);
	CHECK_EQ(rxp_capture_points_parse("tx+tx", &p), 0);
	CHECK_EQ(p, RXP_CAPTURE_TX);
	CHECK_EQ(rxp_capture_points_parse("", &p), -EINVAL);
	CHECK_EQ(rxp_capture_points_parse("rx+", &p), -EINVAL);
	CHECK_EQ(rxp_capture_points_parse("+rx", &p), -EINVAL);
	CHECK_EQ(rxp_capture_points_parse("rxx", &p), -EINVAL);
	CHECK_EQ(rxp_capture_points_parse("r", &p), -EINVAL);
	CHECK_EQ(rxp_capture_points_parse("drops", &p), -EINVAL);
}

/*
 * All points on all ports: each case alone (both handoffs), then all of
 * them in one vector. The file says, packet by packet, where and which way
 * it went and why it was dropped, with the bytes as they were.
 */
static void test_all_points_file(void)
{
	static struct frame_case cases[N_CASES];
	static struct want want[2 * 3 * N_CASES];	/* two rounds of up to three records */
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];
	unsigned n_want = 0, n_rx = 0, n_drop = 0, n_tx = 0, icmp_per_round = 0;
	uint64_t t0, t1;

	build_cases(cases);
	for (unsigned i = 0; i < N_CASES; i++)
		icmp_per_round += cases[i].icmp_back;
	fx_open();
	tmp_path(path, sizeof(path), "all");
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	t0 = realtime_ns();
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	CHECK(fx.st.capture == rxp_capture_file_capture(cf));
	/* one capture at a time: a second start is refused and changes nothing */
	{
		struct rxp_capture_file *second = NULL;
		char other[128];

		tmp_path(other, sizeof(other), "second");
		spec.path = other;
		CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &second, err, sizeof(err)), -EBUSY);
		CHECK(second == NULL);
		CHECK(strstr(err, "already running") != NULL);
		CHECK(access(other, F_OK) != 0);
		CHECK(fx.st.capture == rxp_capture_file_capture(cf));
		spec.path = path;
	}
	feed_each(cases, N_CASES);
	feed_vector(cases, N_CASES, 3);
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	t1 = realtime_ns();
	CHECK(fx.st.capture == NULL);

	/* the stack's own counts: every packet captured at each point it passed */
	CHECK_EQ(fx.st.stats.in_packets, 5 * N_CASES);
	CHECK_EQ(fx.st.stats.icmp_errors, 5 * icmp_per_round);
	CHECK_EQ(fs.captured, fx.st.stats.in_packets + fx.st.stats.dropped + fx.tx[0].n_frames +
				      fx.tx[1].n_frames);
	CHECK_EQ(fs.written, fs.captured);
	CHECK_EQ(fs.lost, 0);
	CHECK_EQ(fs.filtered, 0);
	CHECK(!fs.count_reached);
	CHECK_EQ(fs.write_errno, 0);

	pcapng_read(&pf, path);
	CHECK_EQ(fs.file_bytes, pf.len);
	CHECK_EQ(pf.n_idb, 2);
	CHECK(!strcmp(pf.if_name[0], "in0"));
	CHECK(!strcmp(pf.if_name[1], "out1"));
	for (unsigned i = 0; i < pf.n_idb; i++) {
		CHECK_EQ(pf.linktype[i], 1);	/* LINKTYPE_ETHERNET */
		CHECK_EQ(pf.tsresol[i], 9);
		CHECK_EQ(pf.snaplen[i], RXP_CAPTURE_SNAPLEN_DEFAULT);
	}
	CHECK_EQ(pf.n_epb, fs.captured);
	CHECK_EQ(pf.n_isb, 2);
	CHECK_EQ(pf.isb_ifdrop[0] + pf.isb_ifdrop[1], 0);

	/* each case alone, list handoff then per-packet: exactly these records, in this order */
	for (int round = 0; round < 2; round++)
		for (unsigned i = 0; i < N_CASES; i++)
			n_want += want_case(&cases[i], want + n_want);
	for (unsigned i = 0; i < n_want && i < pf.n_epb; i++) {
		const struct epb *e = &pf.epb[i];

		if (!epb_matches(&pf, e, &want[i])) {
			printf("  record %u: %s %s '%s' (%u bytes), want %s %s '%s'%s\n", i,
			       epb_if(&pf, e), dir_name(e->flags), e->comment, e->cap_len,
			       want[i].ifname, dir_name(want[i].dir), want[i].comment,
			       want[i].frame ? " with the frame as received" : "");
			check_failures++;
		}
	}
	/* the forwarded frame as it left: next hop's MAC, ours, TTL 63, checksum still good */
	for (unsigned i = 0; i < pf.n_epb; i++) {
		const struct epb *e = &pf.epb[i];

		if (e->if_id != 1)
			continue;
		CHECK_EQ(e->cap_len, cases[C_FORWARD].f.len);
		CHECK(!memcmp(e->data, mac_gw, 6));
		CHECK(!memcmp(e->data + 6, mac_out, 6));
		CHECK_EQ(e->data[RXP_ETH_HLEN + 8], 63);
		CHECK_EQ(rxp_ip4_csum_verify(e->data + RXP_ETH_HLEN, 5), 0);
		CHECK(!memcmp(e->data + RXP_ETH_HLEN + 12, cases[C_FORWARD].f.b + RXP_ETH_HLEN + 12, 8));
		break;
	}
	/* the whole file: counts per point, time stamps in order and within the run */
	for (unsigned i = 0; i < pf.n_epb; i++) {
		const struct epb *e = &pf.epb[i];
		bool out = (e->flags & RXP_PCAPNG_DIR_MASK) == RXP_PCAPNG_DIR_OUTBOUND;

		n_tx += out;
		n_drop += !out && e->comment[0];
		n_rx += !out && !e->comment[0];
		if (e->ts < t0 || e->ts > t1 || (i && e->ts < pf.epb[i - 1].ts)) {
			printf("  record %u: time stamp %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "] or before the one before\n",
			       i, e->ts, t0, t1);
			check_failures++;
			break;
		}
	}
	CHECK_EQ(n_rx, fx.st.stats.in_packets);
	CHECK_EQ(n_drop, fx.st.stats.dropped);
	CHECK_EQ(n_tx, fx.tx[0].n_frames + fx.tx[1].n_frames);
	/* each drop reason as often as the stack counted it */
	for (unsigned i = 0; i < N_CASES; i++) {
		unsigned seen = 0;

		if (!cases[i].drop)
			continue;
		for (unsigned k = 0; k < pf.n_epb; k++)
			seen += !strcmp(pf.epb[k].comment, cases[i].drop);
		if (seen != 5) {
			printf("  '%s': %u records with comment %s, want 5\n", cases[i].what, seen,
			       cases[i].drop);
			check_failures++;
		}
	}
	pcapng_free(&pf);
	fx_close();
	unlink(path);
}

/* Wireshark's reader agrees: interface names, direction and drop reason per packet. */
static void test_tshark_reads_reasons(void)
{
	static struct frame_case cases[N_CASES];
	static struct want want[3 * N_CASES];
	static char lines[64][256];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file *cf = NULL;
	char path[128], err[ERR_LEN];
	unsigned n_want = 0;
	int n;

	build_cases(cases);
	fx_open();
	tmp_path(path, sizeof(path), "tshark");
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	for (unsigned i = 0; i < N_CASES; i++) {
		struct rxp_pkt *pkt = rx_frame(&cases[i].f);

		rxp_stack_input_list(&fx.st, &pkt, 1);
		n_want += want_case(&cases[i], want + n_want);
	}
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, NULL, err, sizeof(err)), 0);

	n = tshark_lines(path, "-e frame.interface_name -e frame.packet_flags_direction -e frame.comment -e frame.len",
			 NULL, lines, 64);
	CHECK_EQ(n, n_want);
	for (int i = 0; i < n && i < (int)n_want; i++) {
		char expect[256];

		/* tshark prints the direction field as it decodes it: 0x1 inbound, 0x2 outbound */
		if (want[i].frame)
			snprintf(expect, sizeof(expect), "%s\t0x%08x\t%s\t%u", want[i].ifname,
				 want[i].dir, want[i].comment, want[i].frame->len);
		else
			snprintf(expect, sizeof(expect), "%s\t0x%08x\t%s\t", want[i].ifname,
				 want[i].dir, want[i].comment);
		if (want[i].frame ? strcmp(lines[i], expect) : strncmp(lines[i], expect, strlen(expect))) {
			printf("  tshark packet %d: '%s', want '%s...'\n", i + 1, lines[i], expect);
			check_failures++;
		}
	}
	/* and the display filter a user would type finds the drops by reason */
	n = tshark_lines(path, "-e frame.comment", "frame.comment == \"ip4_bad_checksum\"", lines, 64);
	CHECK_EQ(n, 1);
	n = tshark_lines(path, "-e frame.number", "frame.packet_flags_direction == 2", lines, 64);
	CHECK_EQ(n, fx.tx[0].n_frames + fx.tx[1].n_frames);
	fx_close();
	unlink(path);
}

/* count N: exactly N packets, then nothing more; the caller is told. */
static void test_count(void)
{
	static struct frame_case cases[N_CASES];
	static char lines[64][256];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs, live;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];

	build_cases(cases);
	fx_open();
	tmp_path(path, sizeof(path), "count");
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	spec.count = 5;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	rxp_capture_file_stats(cf, &live);
	CHECK(!live.count_reached);
	feed_each(cases, N_CASES);
	rxp_capture_file_stats(cf, &live);
	CHECK(live.count_reached);
	CHECK_EQ(live.captured, 5);
	feed_vector(cases, N_CASES, 2);
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	CHECK_EQ(fs.captured, 5);
	CHECK_EQ(fs.written, 5);
	CHECK(fs.count_reached);
	CHECK_EQ(fs.lost, 0);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_epb, 5);
	/* the first five records of the run: rx, tx of the forwarded frame, rx, drop, rx */
	if (pf.n_epb == 5) {
		CHECK(!strcmp(pf.epb[3].comment, "ip4_bad_checksum"));
		CHECK_EQ(pf.epb[1].if_id, 1);
	}
	pcapng_free(&pf);
	if (have_tshark())
		CHECK_EQ(tshark_lines(path, "-e frame.number", NULL, lines, 64), 5);
	fx_close();
	unlink(path);
}

/* filter EXPR: only what matches is captured; what does not is counted as filtered. */
static void test_filter(void)
{
	static struct frame_case cases[N_CASES];
	static char lines[64][256];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];
	uint64_t selected;

	build_cases(cases);
	fx_open();
	tmp_path(path, sizeof(path), "filter");
	/* the ICMP errors the router sends back, nothing else */
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	spec.filter = "icmp";
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	feed_each(cases, N_CASES);
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	selected = fx.st.stats.in_packets + fx.st.stats.dropped + fx.tx[0].n_frames +
		   fx.tx[1].n_frames;
	CHECK_EQ(fs.captured, fx.st.stats.icmp_errors);
	CHECK(fs.captured > 0);
	CHECK_EQ(fs.filtered, selected - fs.captured);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_epb, fs.captured);
	for (unsigned i = 0; i < pf.n_epb; i++) {
		CHECK_EQ(pf.epb[i].if_id, 0);
		CHECK_EQ(pf.epb[i].flags & RXP_PCAPNG_DIR_MASK, RXP_PCAPNG_DIR_OUTBOUND);
		CHECK_EQ(pf.epb[i].data[RXP_ETH_HLEN + 9], RXP_IPPROTO_ICMP);
	}
	pcapng_free(&pf);
	if (have_tshark()) {
		CHECK_EQ(tshark_lines(path, "-e frame.number", "icmp", lines, 64), fs.captured);
		CHECK_EQ(tshark_lines(path, "-e frame.number", "not icmp", lines, 64), 0);
	}
	unlink(path);

	/* drops only, IPv6 EtherType only: the one broken IPv6 frame, with its reason */
	spec = spec_for(path, RXP_CAPTURE_DROP);
	spec.filter = "ip6";
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (cf) {
		feed_each(cases, N_CASES);
		CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
		CHECK_EQ(fs.captured, 2);
		pcapng_read(&pf, path);
		CHECK_EQ(pf.n_epb, 2);
		for (unsigned i = 0; i < pf.n_epb; i++)
			CHECK(!strcmp(pf.epb[i].comment, "ip6_bad_version"));
		pcapng_free(&pf);
		if (have_tshark()) {
			CHECK_EQ(tshark_lines(path, "-e frame.comment", "frame.comment == \"ip6_bad_version\"",
					      lines, 64), 2);
		}
	}
	fx_close();
	unlink(path);
}

/* The mistakes a user makes are errors that say what is wrong, and leave files alone. */
static void test_errors(void)
{
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file *cf = NULL;
	char path[128], err[ERR_LEN], pcap_msg[PCAP_ERRBUF_SIZE + 64];
	struct bpf_program prog;
	pcap_t *pd;
	FILE *f;
	int ret;

	fx_open();
	tmp_path(path, sizeof(path), "errors");

	/* a bad filter quotes libpcap's own message, and leaves an existing file as it was */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("keep me", f);
		fclose(f);
	}
	pd = pcap_open_dead(DLT_EN10MB, 65535);
	CHECK(pd != NULL);
	CHECK(pcap_compile(pd, &prog, "udp port banana", 1, PCAP_NETMASK_UNKNOWN) < 0);
	snprintf(pcap_msg, sizeof(pcap_msg), "%s", pcap_geterr(pd));
	pcap_close(pd);
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.filter = "udp port banana";
	err[0] = '\0';
	ret = rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK(fx.st.capture == NULL);
	CHECK(strstr(err, "udp port banana") != NULL);
	CHECK(pcap_msg[0] && strstr(err, pcap_msg) != NULL);
	if (ret != -EINVAL || !strstr(err, pcap_msg))
		printf("  error: '%s'; libpcap says '%s'\n", err, pcap_msg);
	f = fopen(path, "r");
	if (f) {
		char got[16] = { 0 };

		CHECK(fgets(got, sizeof(got), f) != NULL);
		CHECK(!strcmp(got, "keep me"));
		fclose(f);
	}
	unlink(path);

	/* a file that cannot be created: the path and the reason */
	spec = spec_for("/nonexistent-rxpath-dir/x.pcapng", RXP_CAPTURE_RX);
	ret = rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err));
	CHECK_EQ(ret, -ENOENT);
	CHECK(strstr(err, "/nonexistent-rxpath-dir/x.pcapng") != NULL);
	CHECK(strstr(err, strerror(ENOENT)) != NULL);
	CHECK(fx.st.capture == NULL);

	/* no such port, no point, no path, a snap length too large */
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.port = 5;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -ENODEV);
	CHECK(strstr(err, "port 5") != NULL);
	spec.port = -7;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -ENODEV);
	spec = spec_for(path, 0);
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "rx, tx, drop or all") != NULL);
	spec = spec_for("", RXP_CAPTURE_RX);
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -EINVAL);
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.snaplen = RXP_CAPTURE_SNAPLEN_DEFAULT + 1;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -EINVAL);
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.ring_bytes = RXP_CAPTURE_RING_MAX + 1u;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), -EINVAL);
	CHECK(fx.st.capture == NULL);
	CHECK(access(path, F_OK) != 0);	/* none of those created the file */
	fx_close();
}

/*
 * A tiny buffer that cannot take a whole burst: what does not fit is lost
 * and counted (per port in the statistics block too), and forwarding does
 * not notice.
 */
static void test_lost_when_full(void)
{
	static struct frame big;
	struct rxp_pkt *pkts[64];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];

	udp4(&big, mac_in, "198.19.1.1", 64, 1000 - 42);	/* 1000-byte frames */
	fx_open();
	tmp_path(path, sizeof(path), "lost");
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.ring_bytes = RXP_CAPTURE_RING_MIN;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 64; i++)
			pkts[i] = rx_frame(&big);
		rxp_stack_input_list(&fx.st, pkts, 64);
	}
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	CHECK_EQ(fx.tx[1].n_frames, 256);	/* every frame forwarded all the same */
	CHECK_EQ(fs.captured + fs.lost, 256);
	/* 4 KiB holds three 1000-byte records (and their 32-byte headers): at most 3 of each 64-packet burst */
	CHECK(fs.captured >= 3 && fs.captured <= 12);
	CHECK(fs.lost >= 240);
	CHECK_EQ(fs.written, fs.captured);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_epb, fs.captured);
	CHECK_EQ(pf.n_isb, 2);
	CHECK_EQ(pf.isb_ifdrop[0], fs.lost);	/* in0 lost them */
	CHECK_EQ(pf.isb_ifdrop[1], 0);
	for (unsigned i = 0; i < pf.n_epb; i++)
		CHECK(pf.epb[i].cap_len == big.len && !memcmp(pf.epb[i].data, big.b, big.len));
	pcapng_free(&pf);
	fx_close();
	unlink(path);
}

/* A snap length keeps the first bytes and the original length. */
static void test_snaplen(void)
{
	static struct frame big;
	static char lines[8][256];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];
	struct rxp_pkt *pkt;

	udp4(&big, mac_in, "198.19.1.1", 64, 1000 - 42);
	fx_open();
	tmp_path(path, sizeof(path), "snaplen");
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.snaplen = 64;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	pkt = rx_frame(&big);
	rxp_stack_input_list(&fx.st, &pkt, 1);
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_epb, 1);
	CHECK_EQ(pf.snaplen[0], 64);
	if (pf.n_epb == 1) {
		CHECK_EQ(pf.epb[0].cap_len, 64);
		CHECK_EQ(pf.epb[0].orig_len, 1000);
		CHECK(!memcmp(pf.epb[0].data, big.b, 64));
	}
	pcapng_free(&pf);
	if (have_tshark()) {
		CHECK_EQ(tshark_lines(path, "-e frame.cap_len -e frame.len", NULL, lines, 8), 1);
		CHECK(!strcmp(lines[0], "64\t1000"));
	}
	fx_close();
	unlink(path);
}

/* One port: one interface in the file, and only that port's packets. */
static void test_one_port(void)
{
	static struct frame_case cases[N_CASES];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];

	build_cases(cases);
	fx_open();
	tmp_path(path, sizeof(path), "port");
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	spec.port = 1;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	feed_each(cases, N_CASES);
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	CHECK_EQ(fs.captured, fx.tx[1].n_frames);
	CHECK_EQ(fs.captured, 2);
	CHECK_EQ(fs.filtered, 0);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_idb, 1);
	CHECK(!strcmp(pf.if_name[0], "out1"));
	CHECK_EQ(pf.n_epb, 2);
	for (unsigned i = 0; i < pf.n_epb; i++) {
		CHECK_EQ(pf.epb[i].if_id, 0);
		CHECK_EQ(pf.epb[i].flags & RXP_PCAPNG_DIR_MASK, RXP_PCAPNG_DIR_OUTBOUND);
	}
	pcapng_free(&pf);
	fx_close();
	unlink(path);
}

/* Capturing changes nothing about forwarding: the same frames leave, the same counts. */
static void test_capture_changes_nothing(void)
{
	static struct frame_case cases[N_CASES];
	struct rxp_stack_stats off_stats;
	uint64_t off_hash[2], off_frames[2];
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file *cf = NULL;
	char path[128], err[ERR_LEN];

	build_cases(cases);
	fx_open();
	feed_each(cases, N_CASES);
	feed_vector(cases, N_CASES, 10);
	off_stats = fx.st.stats;
	for (int p = 0; p < 2; p++) {
		off_hash[p] = fx.tx[p].hash;
		off_frames[p] = fx.tx[p].n_frames;
	}
	fx_close();

	fx_open();
	tmp_path(path, sizeof(path), "same");
	spec = spec_for(path, RXP_CAPTURE_POINTS_ALL);
	spec.ring_bytes = RXP_CAPTURE_RING_MIN;	/* and losing most of it changes nothing either */
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	feed_each(cases, N_CASES);
	feed_vector(cases, N_CASES, 10);
	if (cf)
		CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, NULL, err, sizeof(err)), 0);
	CHECK(!memcmp(&off_stats, &fx.st.stats, sizeof(off_stats)));
	for (int p = 0; p < 2; p++) {
		CHECK_EQ(fx.tx[p].hash, off_hash[p]);
		CHECK_EQ(fx.tx[p].n_frames, off_frames[p]);
	}
	fx_close();
	unlink(path);
}

/*
 * The ring under a concurrent writer: many bursts through a small ring,
 * each frame numbered. The file holds the captured ones in order, intact,
 * none twice, and captured + lost is everything.
 */
static void test_ring_concurrent(void)
{
	static struct frame f;
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats fs;
	struct rxp_capture_file *cf = NULL;
	struct pcapng_file pf;
	char path[128], err[ERR_LEN];
	const uint32_t total = 50000;
	uint32_t seq = 0, last = 0, bad = 0;

	fx_open();
	tmp_path(path, sizeof(path), "ring");
	spec = spec_for(path, RXP_CAPTURE_RX);
	spec.ring_bytes = 64 * 1024;
	CHECK_EQ(rxp_capture_file_start(&fx.st, &spec, &cf, err, sizeof(err)), 0);
	if (!cf) {
		printf("  %s\n", err);
		fx_close();
		return;
	}
	while (seq < total) {
		struct rxp_pkt *pkts[32];
		uint16_t n = 0;

		for (; n < 32 && seq < total; n++, seq++) {
			uint16_t payload = (uint16_t)(18 + seq % 300);	/* sizes vary: records wrap anywhere */
			uint32_t be = htonl(seq + 1);

			udp4(&f, mac_in, "198.19.2.1", 64, payload);
			memcpy(f.b + RXP_ETH_HLEN + RXP_IP4_HLEN + RXP_UDP_HLEN, &be, 4);
			pkts[n] = rx_frame(&f);
		}
		rxp_stack_input_list(&fx.st, pkts, n);
	}
	CHECK_EQ(rxp_capture_file_stop(&fx.st, cf, &fs, err, sizeof(err)), 0);
	CHECK_EQ(fs.captured + fs.lost, total);
	CHECK_EQ(fs.written, fs.captured);
	CHECK(fs.captured > 0);
	pcapng_read(&pf, path);
	CHECK_EQ(pf.n_epb, fs.captured);
	for (unsigned i = 0; i < pf.n_epb; i++) {
		const struct epb *e = &pf.epb[i];
		uint32_t be, s;

		memcpy(&be, e->data + RXP_ETH_HLEN + RXP_IP4_HLEN + RXP_UDP_HLEN, 4);
		s = ntohl(be);
		udp4(&f, mac_in, "198.19.2.1", 64, (uint16_t)(18 + (s - 1) % 300));
		memcpy(f.b + RXP_ETH_HLEN + RXP_IP4_HLEN + RXP_UDP_HLEN, &be, 4);
		if (s <= last || s > total || e->cap_len != f.len || memcmp(e->data, f.b, f.len)) {
			if (bad++ < 3)
				printf("  record %u: frame %u after %u, %u bytes\n", i, s, last, e->cap_len);
		}
		last = s;
	}
	CHECK_EQ(bad, 0);
	pcapng_free(&pf);
	fx_close();
	unlink(path);
}

/*
 * The hooks trust no length: a frame said to run past its buffer is cut at
 * the buffer's end, a frame said to start outside it is captured empty; the
 * original length is kept either way. Read straight from the ring.
 */
static void test_hostile_lengths(void)
{
	struct rxp_capture_config cfg = { .points = RXP_CAPTURE_POINTS_ALL,
					   .port_mask = RXP_CAPTURE_ALL_PORTS };
	const struct rxp_capture_rec *rec;
	struct rxp_capture_stats s;
	struct rxp_capture *cap = NULL;
	struct rxp_pkt *pkt;
	char err[ERR_LEN];
	uint32_t room;

	fx_open();
	CHECK_EQ(rxp_capture_create(&cap, &cfg, err, sizeof(err)), 0);
	if (!cap) {
		fx_close();
		return;
	}
	pkt = rxp_pool_alloc(&fx.cache);
	pkt->data_off = (uint16_t)fx.pool->data_off;
	pkt->len = 60000;
	pkt->port = 0;
	room = fx.pool->buf_size - fx.pool->data_off;
	rxp_capture_rx(cap, &pkt, 1);
	pkt->data_off = (uint16_t)fx.pool->buf_size;	/* the frame starts past the buffer */
	rxp_capture_drop(cap, pkt, RXP_DROP_IP4_LEN);
	pkt->port = RXP_PORTS_MAX;			/* a port no capture can select */
	rxp_capture_tx(cap, 3, &pkt, 1);
	rxp_capture_drop(cap, pkt, RXP_DROP_IP4_LEN);
	rxp_capture_burst_end(cap);

	rec = rxp_capture_peek(cap);
	CHECK(rec != NULL);
	if (rec) {
		CHECK_EQ(rec->point, RXP_CAPTURE_RX);
		CHECK_EQ(rec->orig_len, 60000);
		CHECK_EQ(rec->cap_len, room);
	}
	rec = rxp_capture_peek(cap);
	CHECK(rec != NULL);
	if (rec) {
		CHECK_EQ(rec->point, RXP_CAPTURE_DROP);
		CHECK_EQ(rec->reason, RXP_DROP_IP4_LEN);
		CHECK_EQ(rec->cap_len, 0);
		CHECK_EQ(rec->orig_len, 60000);
	}
	rec = rxp_capture_peek(cap);
	CHECK(rec != NULL);
	if (rec) {
		CHECK_EQ(rec->point, RXP_CAPTURE_TX);
		CHECK_EQ(rec->port, 3);
	}
	CHECK(rxp_capture_peek(cap) == NULL);	/* the drop on port 64 was not selectable */
	rxp_capture_release(cap);
	rxp_capture_stats(cap, &s);
	CHECK_EQ(s.captured, 3);
	rxp_capture_destroy(cap);
	rxp_pool_free(&fx.cache, pkt);
	fx_close();
}

/* The encoder never writes past the room it is given and refuses impossible packets. */
static void test_pcapng_encoder_limits(void)
{
	static const uint8_t frame[60] = { 1, 2, 3 };
	struct rxp_pcapng_packet p = { .if_id = 0, .ts_ns = 1, .cap_len = 60, .orig_len = 60,
				       .data = frame, .flags = RXP_PCAPNG_DIR_INBOUND,
				       .comment = "ip4_bad_checksum" };
	uint8_t buf[256];
	size_t need = rxp_pcapng_epb_size(&p);
	int len;

	/* 28 + 60 + flags (8) + comment (4 + 16) + end (4) + trailer (4) */
	CHECK_EQ(need, 28 + 60 + 8 + 20 + 4 + 4);
	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ(rxp_pcapng_epb(buf, need - 1, &p), -ENOSPC);
	CHECK_EQ(buf[0], 0xee);		/* nothing written */
	len = rxp_pcapng_epb(buf, need, &p);
	CHECK_EQ(len, need);
	CHECK_EQ(rd32(buf + 4), need);
	CHECK_EQ(rd32(buf + need - 4), need);
	CHECK_EQ(buf[need], 0xee);	/* not a byte more */
	p.comment = NULL;
	p.flags = 0;
	CHECK_EQ(rxp_pcapng_epb_size(&p), 28 + 60 + 4);	/* no options, no end marker */
	p.cap_len = 61;
	CHECK_EQ(rxp_pcapng_epb(buf, sizeof(buf), &p), -EINVAL);	/* more captured than sent */
	for (size_t room = 0; room < 28; room += 4)
		CHECK_EQ(rxp_pcapng_shb(buf, room, "rxpath"), -ENOSPC);
	CHECK_EQ(rxp_pcapng_idb(buf, 20, 64, "in0"), -ENOSPC);
	CHECK(rxp_pcapng_idb(buf, sizeof(buf), 64, "in0") > 0);
	CHECK_EQ(rxp_pcapng_isb(buf, 30, 0, 1, 1, 2, 3), -ENOSPC);
}

int main(void)
{
	RUN(test_points_parse);
	RUN(test_all_points_file);
	if (have_tshark())
		RUN(test_tshark_reads_reasons);
	else
		printf("SKIP test_tshark_reads_reasons: " TSHARK " not found; install tshark to check the files with Wireshark's reader (the other cases check less without it)\n");
	RUN(test_count);
	RUN(test_filter);
	RUN(test_errors);
	RUN(test_lost_when_full);
	RUN(test_snaplen);
	RUN(test_one_port);
	RUN(test_capture_changes_nothing);
	RUN(test_ring_concurrent);
	RUN(test_hostile_lengths);
	RUN(test_pcapng_encoder_limits);
	return tests_done();
}
