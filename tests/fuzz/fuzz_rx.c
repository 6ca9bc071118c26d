/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the whole receive path: frames come in through a
 * NAPI poll (rxp_napi_poll) of a receive device of our own, go through the
 * router, and leave through the TX rings of real sim ports. The datapath is
 * opened once the way `rxpath run` opens it (config lines through the
 * command-language parser, then dp_open); after each input it is brought
 * back to the same state, so an input always does the same thing.
 *
 * Input: byte 0 picks the receive mode (bit 0 per-packet handoff, bit 1 copy
 * mode, bits 2-3 the poll budget, bit 4 a copybreak of 128, bit 5 no router:
 * the stack as a receive sink, as with no addresses configured, bit 6 packet
 * capture on, bit 7 a capture of 3 packets of p0 only), then records of
 *   ctl (1 byte) | length (2 bytes, big endian) | frame
 * ctl bits 0-1: the port (p0, p1, p2; 3 is p0), bit 2: the poll ends after
 * this frame, bits 3-5: the clock moves on before it (clock_steps[]) and the
 * timers run, bits 6-7: a neighbour change before it (neigh_op()). The
 * length is cut to the bytes left and to the largest frame.
 *
 * After every poll and at the end it checks, and aborts on a violation:
 *  - packets: in = delivered + dropped + forwarded + held for a neighbour
 *    or for reassembly;
 *  - transmit: frames the ports sent = forwarded (fragmented ones as their
 *    fragments) + made by the router;
 *  - buffers: each is free, posted on an RX ring or held (by a neighbour or
 *    for reassembly), exactly once;
 *  - every frame sent is well formed (lengths, IPv4 header checksum, TTL,
 *    MTU, checksums of the ICMP messages the router made, source MAC);
 *  - every capture record is well formed, and as many as were counted.
 * The bytes after a received frame are poisoned for AddressSanitizer, so a
 * read past the frame, though still inside its buffer, is reported.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/config.h"
#include "engine/dataplane.h"
#include "net/icmp.h"
#include "net/ip6_addr.h"
#include "net/capture.h"
#include "rxpath/csum.h"
#include "port/sim.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#endif
#endif
#ifndef FUZZ_POISON
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's own bookkeeping is no coverage to chase, and costs time when traced. */
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

#define N_PORTS 3
#define N_BUFS 2048u
#define NEIGH_MAX 16		/* a small table: full tables and probe clusters are reachable */
#define PENDING_MAX 1024u
#define T0_NS 1000000000000ull	/* the clock at the start of every input */

/* The router every input meets: three ports, a VLAN, gateways known and unknown. */
static const char *const config_lines[] = {
	"port add p0 sim:rx=off,rxring=64",
	"port add p1 sim:rx=off,rxring=64",
	"port add p2 sim:rx=off,rxring=64,txring=64",	/* a small ring: tx_full is reachable */
	"port add v100 vlan:parent=p1,id=100",
	"addr add 10.0.1.1/24 dev p0",
	"addr add 2001:db8:1::1/64 dev p0",
	"addr add 10.0.2.1/24 dev p1",
	"addr add 2001:db8:2::1/64 dev p1",
	"addr add 10.0.3.1/24 dev v100",
	"addr add 2001:db8:3::1/64 dev v100",
	"addr add 10.0.4.1/24 dev p2",
	"addr add 2001:db8:4::1/64 dev p2",
	"port set p2 mtu 576",		/* fragmentation and Fragmentation Needed */
	"port set v100 mtu 1280",
	"neigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev p1",
	"neigh add 2001:db8:2::2 lladdr 02:00:00:00:00:22 dev p1",
	"neigh add 10.0.4.3 lladdr 02:00:00:00:00:43 dev p2",
	"route add 10.9.0.0/16 via 10.0.2.2",		/* gateway, known */
	"route add 2001:db8:9::/48 via 2001:db8:2::2",
	"route add 10.8.0.0/16 via 10.0.4.2",		/* gateway, unresolved, small MTU */
	"route add 2001:db8:8::/48 via 2001:db8:4::2",
	"route add 10.7.0.0/16 via 10.0.3.2",		/* gateway behind the VLAN */
	"route add 2001:db8:7::/48 via fe80::2 dev p0",	/* link-local gateway */
	"route add 10.6.0.0/16 dev p0",			/* on-link */
	"route add 10.5.0.0/16 via 10.0.4.3",		/* known, small MTU: fragments leave */
	"icmp ratelimit 1000 burst 8",
	"port set p0 ra on",		/* advertisements: periodic, and to solicitations */
	"neigh ageing 5",		/* the clock's steps reach renewals and ageing both */
};

/* Neighbour changes an input can make, as the control socket would. */
static const char *const gw_add_lines[] = {
	"neigh add 10.0.4.2 lladdr 02:00:00:00:00:42 dev p2",
	"neigh add 2001:db8:4::2 lladdr 02:00:00:00:00:42 dev p2",
};
static const char *const gw_del_lines[] = {
	"neigh del 10.0.4.2 dev p2",
	"neigh del 2001:db8:4::2 dev p2",
};
static const char *const known_del_lines[] = {
	"neigh del 10.0.2.2 dev p1",
	"neigh del 2001:db8:2::2 dev p1",
};

static const uint64_t clock_steps[8] = {
	0, 1000000ull, 50000000ull, 100000000ull, 1000000000ull, 3000000000ull,
	10000000000ull, 301000000000ull,
};
static const uint16_t budgets[4] = { 64, 1, 3, RXP_BURST_MAX };

struct pending {
	const uint8_t *frame;
	uint16_t len;
	uint16_t port;
};

static struct {
	struct dp_config cfg;
	struct dp dp;
	struct rxp_port rx_dev;		/* the device frames arrive from */
	struct dp_cmd statics[8], gw_add[2], gw_del[2], known_del[2];
	unsigned n_statics;
	uint8_t *rx_posted;		/* per buffer: sitting on a sim port's RX ring */
	uint8_t *seen;
	uint64_t tx_local, tx_forwarded;	/* frames the sim ports sent: made here, or received */
	bool poison;
	struct pending pend[PENDING_MAX];
	unsigned n_pend, next_pend;
	struct rxp_pkt *poisoned[RXP_BURST_MAX];
	unsigned n_poisoned;
	struct rxp_capture *cap;	/* NULL: capture off */
	uint64_t cap_records, cap_count;	/* records read; the capture's packet limit */
	uint64_t cap_port_mask;
} F;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_rx: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- poisoning the bytes past a received frame ---- */

static uint8_t *buf_end(const struct rxp_pkt *pkt)
{
	return (uint8_t *)pkt + F.dp.pool->buf_size;
}

/*
 * Buffers the router makes for itself may be ones just freed with a
 * poisoned tail: open the whole buffer before the router writes to it.
 * (Linked with -Wl,--wrap=rxp_local_alloc.)
 */
struct rxp_pkt *__real_rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len);
struct rxp_pkt *__wrap_rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len);

struct rxp_pkt *__wrap_rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len)
{
	struct rxp_pkt *pkt = __real_rxp_local_alloc(st, l3_len);

	if (pkt)
		FUZZ_UNPOISON(pkt, F.dp.pool->buf_size);
	return pkt;
}

static void unpoison_all(void)
{
	for (unsigned i = 0; i < F.n_poisoned; i++)
		FUZZ_UNPOISON(F.poisoned[i], F.dp.pool->buf_size);
	F.n_poisoned = 0;
}

/* ---- the receive device: hands over the pending frames, a poll at a time ---- */

static uint16_t dev_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	const struct rxp_pool *pool = F.dp.pool;
	uint16_t i = 0;

	while (i < n && F.next_pend < F.n_pend) {
		const struct pending *p = &F.pend[F.next_pend++];
		struct rxp_pkt *pkt = rxp_pool_alloc(q->cache);
		uint8_t *data;

		if (!pkt) {
			q->stats.rx_no_buffer++;	/* a NIC drops what it has no buffer for */
			continue;
		}
		FUZZ_UNPOISON(pkt, pool->buf_size);
		/* stale metadata, as a recycled buffer has: the stack must set what it reads */
		memset((uint8_t *)pkt + offsetof(struct rxp_pkt, l3_off), 0xa5,
		       sizeof(*pkt) - offsetof(struct rxp_pkt, l3_off));
		pkt->data_off = (uint16_t)pool->data_off;
		pkt->len = p->len;
		pkt->port = p->port;
		pkt->queue = q->id;
		data = rxp_pkt_data(pkt);
		memcpy(data, p->frame, p->len);
		if (F.poison) {
			FUZZ_POISON(data + p->len, (size_t)(buf_end(pkt) - (data + p->len)));
			F.poisoned[F.n_poisoned++] = pkt;
		}
		pkts[i++] = pkt;
	}
	q->stats.rx_packets += i;
	return i;
}

static uint32_t dev_nothing(struct rxp_queue *q)
{
	(void)q;
	return 0;
}

static const struct rxp_port_ops dev_ops = {
	.driver = "fuzz",
	.rx_burst = dev_rx_burst,
	.refill = dev_nothing,
	.complete = dev_nothing,
};

/* ---- what the ports send ---- */

static bool router_has_addr4(const struct rxp_router *r, const uint8_t *a)
{
	uint32_t v;

	memcpy(&v, a, 4);
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (rxp_l3if_has_addr4(&r->ifs[i], v))
			return true;
	return false;
}

static bool router_has_addr6(const struct rxp_router *r, const uint8_t *a)
{
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (rxp_l3if_has_addr6(&r->ifs[i], a) || rxp_l3if_anycast6(&r->ifs[i], a))
			return true;
	return false;
}

static void check_ip4(unsigned port, const struct rxp_l3if *ifp, const uint8_t *ip,
		      uint32_t l3_len, bool local)
{
	unsigned ihl;
	uint16_t frag;

	if (l3_len < RXP_IP4_HLEN || ip[0] >> 4 != 4)
		die("port %u sent IPv4 of %u bytes, version %u", port, l3_len, ip[0] >> 4);
	ihl = (ip[0] & 15u) * 4u;
	if (ihl < RXP_IP4_HLEN || ihl > l3_len)
		die("port %u sent IPv4 with a header of %u bytes in %u", port, ihl, l3_len);
	if (rxp_csum(ip, ihl) != 0)
		die("port %u sent IPv4 with a bad header checksum (local %d)", port, local);
	if (be16(ip + 2) != l3_len)
		die("port %u sent IPv4 total length %u in %u bytes", port, be16(ip + 2), l3_len);
	if (ip[8] == 0)
		die("port %u sent IPv4 with TTL 0", port);
	frag = be16(ip + 6);
	if ((!local || (frag & (RXP_IP4_MF | RXP_IP4_OFFMASK))) && l3_len > ifp->mtu)
		die("port %u sent %u bytes of IPv4 over an MTU of %u", port, l3_len, ifp->mtu);
	if (!local || (frag & (RXP_IP4_MF | RXP_IP4_OFFMASK)))
		return;
	/* made here, whole: from one of our addresses; ICMP with a good checksum */
	if (!router_has_addr4(F.dp.router, ip + 12))
		die("port %u sent IPv4 the router made from an address not its own", port);
	if (ip[9] == RXP_IPPROTO_ICMP && rxp_csum(ip + ihl, l3_len - ihl) != 0)
		die("port %u sent ICMP with a bad checksum (type %u)", port,
		    l3_len > ihl ? ip[ihl] : 256u);
}

static void check_ip6(unsigned port, const struct rxp_l3if *ifp, const uint8_t *ip,
		      uint32_t l3_len, bool local)
{
	if (l3_len < RXP_IP6_HLEN || ip[0] >> 4 != 6)
		die("port %u sent IPv6 of %u bytes, version %u", port, l3_len, ip[0] >> 4);
	if (RXP_IP6_HLEN + (uint32_t)be16(ip + 4) != l3_len)
		die("port %u sent IPv6 payload length %u in %u bytes", port, be16(ip + 4), l3_len);
	if (ip[7] == 0)
		die("port %u sent IPv6 with hop limit 0", port);
	if (!local) {
		if (l3_len > ifp->mtu)
			die("port %u forwarded %u bytes of IPv6 over an MTU of %u", port, l3_len,
			    ifp->mtu);
		return;
	}
	if (!router_has_addr6(F.dp.router, ip + 8))
		die("port %u sent IPv6 the router made from an address not its own", port);
	if (ip[6] == RXP_IPPROTO_ICMP6 &&
	    rxp_icmp6_csum(ip, ip + RXP_IP6_HLEN, l3_len - RXP_IP6_HLEN) != 0)
		die("port %u sent ICMPv6 with a bad checksum (type %u)", port,
		    l3_len > RXP_IP6_HLEN ? ip[RXP_IP6_HLEN] : 256u);
}

/* Called by the sim device for every frame a port transmits. */
static void tx_hook(void *ctx, const uint8_t *frame, uint16_t len)
{
	unsigned port = (unsigned)(uintptr_t)ctx;
	const struct rxp_pool *pool = F.dp.pool;
	const struct rxp_router *r = F.dp.router;
	const struct rxp_pkt *pkt =
		rxp_pool_buf(pool, (uint32_t)((size_t)(frame - pool->base) / pool->buf_size));
	bool local = pkt->flags & RXP_PKT_F_LOCAL_OUT;
	unsigned hlen = RXP_ETH_HLEN;
	uint16_t type, vid = 0;
	int ifidx;

	if (local)
		F.tx_local++;
	else
		F.tx_forwarded++;
	if (len < RXP_ETH_HLEN || len > pool->max_frame)
		die("port %u sent a frame of %u bytes", port, len);
	if (pkt->out_port != port)
		die("port %u sent a packet meant for port %u", port, pkt->out_port);
	if (memcmp(frame + 6, F.dp.ports[port].mac, 6))
		die("port %u sent a frame from a MAC not its own", port);
	type = be16(frame + 12);
	if (type == RXP_ETHERTYPE_VLAN) {
		if (len < RXP_ETH_HLEN + RXP_VLAN_HLEN)
			die("port %u sent a truncated VLAN tag", port);
		vid = be16(frame + 14) & 0x0fff;
		type = be16(frame + 16);
		hlen += RXP_VLAN_HLEN;
		if (!vid)
			die("port %u sent a priority tag", port);
	}
	ifidx = rxp_router_if_of(r, (uint16_t)port, vid);
	if (ifidx < 0)
		die("port %u sent on VLAN %u, which it does not have", port, vid);
	switch (type) {
	case RXP_ETHERTYPE_ARP:
		if (len - hlen != 28 || !local)
			die("port %u sent %u bytes of ARP (local %d)", port, len - hlen, local);
		break;
	case RXP_ETHERTYPE_IP4:
		check_ip4(port, &r->ifs[ifidx], frame + hlen, len - hlen, local);
		break;
	case RXP_ETHERTYPE_IP6:
		check_ip6(port, &r->ifs[ifidx], frame + hlen, len - hlen, local);
		break;
	default:
		die("port %u sent EtherType 0x%04x", port, type);
	}
}

/* ---- accounting ---- */

struct held_count {
	uint64_t rx, local, incomplete_due, renew_due;
	uint64_t now;
};

NO_COVERAGE static void count_held(void *arg, struct rxp_neigh *n)
{
	struct held_count *c = arg;

	if (n->n_held > RXP_NEIGH_HOLD)
		die("neighbour holds %u packets", n->n_held);
	if (n->n_held && n->state != RXP_NEIGH_INCOMPLETE)
		die("neighbour in state %u holds %u packets", n->state, n->n_held);
	if (n->state == RXP_NEIGH_INCOMPLETE && c->now >= n->deadline_ns &&
	    n->probes < RXP_NEIGH_PROBES)
		c->incomplete_due++;
	/* a used entry in its last seconds, asked again at its MAC (resolve.c) */
	if (n->state == RXP_NEIGH_REACHABLE && n->used && n->probes < RXP_NEIGH_PROBES &&
	    c->now < n->deadline_ns &&
	    c->now + (RXP_NEIGH_PROBES - n->probes) * RXP_NEIGH_RETRY_NS >= n->deadline_ns)
		c->renew_due++;
	for (unsigned i = 0; i < n->n_held; i++) {
		if (n->held[i]->flags & RXP_PKT_F_LOCAL_OUT)
			c->local++;
		else
			c->rx++;
	}
}

NO_COVERAGE static struct held_count held(void)
{
	struct held_count c = { .now = F.dp.stack.now_ns };

	rxp_neigh_walk(&F.dp.router->neigh, count_held, &c);
	return c;
}

NO_COVERAGE static void mark(const struct rxp_pkt *pkt, const char *where)
{
	const struct rxp_pool *pool = F.dp.pool;
	size_t off = (size_t)((const uint8_t *)pkt - pool->base);

	if ((const uint8_t *)pkt < pool->base || off % pool->buf_size ||
	    off / pool->buf_size >= pool->n_bufs)
		die("%s: a pointer that is no buffer of the pool", where);
	if (F.seen[off / pool->buf_size]++)
		die("%s: buffer %zu is in two places at once", where, off / pool->buf_size);
}

NO_COVERAGE static void mark_held(void *arg, struct rxp_neigh *n)
{
	(void)arg;
	for (unsigned i = 0; i < n->n_held; i++)
		mark(n->held[i], "held");
}

/* The fragments held for reassembly: as many as the stack counts, each where it belongs. */
NO_COVERAGE static uint64_t reasm_held(void)
{
	const struct rxp_stack *st = &F.dp.stack;
	uint64_t n = 0;

	for (unsigned i = 0; i < RXP_REASM_DATAGRAMS; i++) {
		const struct rxp_reasm *r = &st->reasm[i];

		if (!r->deadline_ns && r->n)
			die("a free reassembly slot holds %u fragments", r->n);
		for (unsigned k = 0; k + 1 < r->n; k++)
			if ((uint32_t)r->frags[k]->user[0] + (uint32_t)(r->frags[k]->user[0] >> 32) >
			    (uint32_t)r->frags[k + 1]->user[0])
				die("reassembly: fragments out of order or overlapping");
		n += r->n;
	}
	if (n != st->reasm_held)
		die("reassembly holds %lu fragments but counts %u", (unsigned long)n, st->reasm_held);
	return n;
}

/* Every buffer must be free, posted for receive, or held (neighbour, reassembly): exactly once. */
NO_COVERAGE static void audit_buffers(const char *when)
{
	struct rxp_pool *pool = F.dp.pool;
	const struct rxp_ring *ring = pool->ring;
	uint32_t head = atomic_load(&ring->cons.tail), tail = atomic_load(&ring->prod.tail);

	memcpy(F.seen, F.rx_posted, pool->n_bufs);
	for (uint32_t i = head; i != tail; i++)
		mark(ring->slots[i & ring->mask], "pool ring");
	for (uint32_t i = 0; i < F.dp.cache.count; i++)
		mark(F.dp.cache.objs[i], "cache");
	rxp_neigh_walk(&F.dp.router->neigh, mark_held, NULL);
	for (unsigned i = 0; i < RXP_REASM_DATAGRAMS; i++)
		for (unsigned k = 0; k < F.dp.stack.reasm[i].n; k++)
			mark(F.dp.stack.reasm[i].frags[k], "reassembly");
	for (uint32_t i = 0; i < pool->n_bufs; i++)
		if (!F.seen[i])
			die("%s: buffer %u is lost", when, i);
}

/* Counters must add up; call with every transmit completed. @audit: buffers too. */
NO_COVERAGE static void check_counters(const char *when, bool audit)
{
	const struct rxp_stack *st = &F.dp.stack;
	const struct rxp_stack_stats *s = &st->stats;
	struct held_count h = held();
	uint64_t in = s->in_packets + s->drops[RXP_DROP_NO_BUFFER];
	uint64_t frags = reasm_held();
	uint64_t out = rxp_stack_delivered_total(s) + s->dropped + s->forwarded + h.rx + frags;

	if (s->dropped != rxp_stack_drops_total(s))
		die("%s: dropped %lu but the reasons add up to %lu", when, (unsigned long)s->dropped,
		    (unsigned long)rxp_stack_drops_total(s));
	for (unsigned r = 0; r < RXP_DROP_MAX; r++) {
		uint64_t sum = 0;

		for (unsigned p = 0; p < RXP_STACK_PORTS_MAX; p++)
			sum += st->port_drops[p][r];
		if (sum != s->drops[r])
			die("%s: %s: %lu by port, %lu in all", when, rxp_drop_name(r),
			    (unsigned long)sum, (unsigned long)s->drops[r]);
	}
	if (in != out)
		die("%s: %lu packets in, but delivered %lu + dropped %lu + forwarded %lu + held %lu"
		    " + reassembling %lu", when, (unsigned long)in,
		    (unsigned long)rxp_stack_delivered_total(s), (unsigned long)s->dropped,
		    (unsigned long)s->forwarded, (unsigned long)h.rx, (unsigned long)frags);
	/*
	 * What the router made (replies, errors, requests, fragments) all left;
	 * a forwarded packet left as itself, or as two fragments or more.
	 */
	if (F.tx_local != s->local_out)
		die("%s: ports sent %lu frames the router made, but it counted %lu", when,
		    (unsigned long)F.tx_local, (unsigned long)s->local_out);
	if (F.tx_forwarded > s->forwarded ||
	    (s->forwarded - F.tx_forwarded) * 2 > s->fragments)
		die("%s: ports sent %lu forwarded frames, but forwarded %lu with %lu fragments",
		    when, (unsigned long)F.tx_forwarded, (unsigned long)s->forwarded,
		    (unsigned long)s->fragments);
	if (st->tx_pending)
		die("%s: packets left gathered for transmit", when);
	if (audit)
		audit_buffers(when);
}

/* ---- packet capture ---- */

/* Reads every record the capture holds, as its writer thread would, and checks it. */
NO_COVERAGE static void capture_read(void)
{
	const struct rxp_capture_rec *rec;

	if (!F.cap)
		return;
	while ((rec = rxp_capture_peek(F.cap))) {
		if (rec->size % 8 || rec->size < sizeof(*rec) + rec->cap_len)
			die("capture record of %u bytes holds %u", rec->size, rec->cap_len);
		if (rec->point != RXP_CAPTURE_RX && rec->point != RXP_CAPTURE_TX &&
		    rec->point != RXP_CAPTURE_DROP)
			die("capture record at point %u", rec->point);
		if (rec->cap_len > rec->orig_len || rec->cap_len > rxp_capture_snaplen(F.cap) ||
		    rec->orig_len > F.dp.pool->max_frame)
			die("capture record of %u bytes of %u (snap length %u)", rec->cap_len,
			    rec->orig_len, rxp_capture_snaplen(F.cap));
		if (rec->port >= N_PORTS || !(F.cap_port_mask >> rec->port & 1))
			die("capture record of port %u", rec->port);
		if (rec->point == RXP_CAPTURE_DROP && rec->reason >= RXP_DROP_MAX)
			die("capture record of drop reason %u", rec->reason);
		F.cap_records++;
		rxp_capture_release(F.cap);
	}
	if (F.cap_count && F.cap_records > F.cap_count)
		die("a capture of %lu packets wrote %lu", (unsigned long)F.cap_count,
		    (unsigned long)F.cap_records);
}

static void capture_start(uint8_t mode)
{
	struct rxp_capture_config cc = {
		.points = RXP_CAPTURE_POINTS_ALL,
		.port_mask = RXP_CAPTURE_ALL_PORTS,
		.snaplen = 200,
		.filter = "not icmp6",
		.ring_bytes = RXP_CAPTURE_RING_MIN,	/* fills up: lost packets */
	};
	char err[RXP_ERR_LEN];

	if (mode & 128) {
		cc.points = RXP_CAPTURE_RX | RXP_CAPTURE_DROP;
		cc.port_mask = 1;
		cc.count = 3;
		cc.snaplen = 64;
		cc.filter = NULL;
	}
	if (rxp_capture_create(&F.cap, &cc, err, sizeof(err)))
		die("rxp_capture_create: %s", err);
	F.cap_records = 0;
	F.cap_count = cc.count;
	F.cap_port_mask = cc.port_mask;
	rxp_stack_set_capture(&F.dp.stack, F.cap);
}

static void capture_stop(void)
{
	struct rxp_capture_stats cs;

	if (!F.cap)
		return;
	capture_read();
	rxp_capture_stats(F.cap, &cs);
	if (cs.captured != F.cap_records)
		die("capture counted %lu packets, the ring held %lu", (unsigned long)cs.captured,
		    (unsigned long)F.cap_records);
	rxp_stack_set_capture(&F.dp.stack, NULL);
	rxp_capture_destroy(F.cap);
	F.cap = NULL;
}

/* ---- driving the datapath ---- */

/* Polls every sim port once: their transmits complete (they receive nothing). */
static void complete_tx(void)
{
	if (dp_poll(&F.dp))
		die("a sim port with rx=off received something");
}

static void run_polls(void)
{
	while (F.next_pend < F.n_pend) {
		rxp_napi_poll(&F.rx_dev.queues[0], &F.dp.stack);
		unpoison_all();
		complete_tx();
		capture_read();
		check_counters("after a poll", false);
	}
	F.n_pend = F.next_pend = 0;
}

static void apply(const struct dp_cmd *cmds, unsigned n)
{
	char err[RXP_ERR_LEN];

	for (unsigned i = 0; i < n; i++)
		dp_apply_cmd(&F.dp, &cmds[i], err, sizeof(err));	/* -ENOENT is fine */
	complete_tx();
}

static void neigh_op(unsigned op)
{
	if (op == 1)
		apply(F.gw_add, 2);
	else if (op == 2)
		apply(F.gw_del, 2);
	else if (op == 3)
		apply(F.known_del, 2);	/* back at the next input */
}

static void clock_step(uint64_t ns)
{
	struct rxp_stack *st = &F.dp.stack;
	uint64_t now = st->now_ns + ns;
	uint64_t requests = st->stats.neigh_requests;
	struct held_count due;

	st->now_ns = now;
	due = held();		/* entries whose next request is due now */
	dp_tick(&F.dp, now);
	complete_tx();
	capture_read();
	/* each resolving or renewing neighbour is asked at most once a tick */
	if (st->stats.neigh_requests - requests > due.incomplete_due + due.renew_due)
		die("a tick sent %lu requests for %lu neighbours due",
		    (unsigned long)(st->stats.neigh_requests - requests),
		    (unsigned long)(due.incomplete_due + due.renew_due));
	check_counters("after a tick", false);
}

/* Back to the state every input starts from. */
static void reset(void)
{
	struct rxp_stack *st = &F.dp.stack;
	struct rxp_ratelimit *rl = &st->shared->icmp_limit;

	rxp_stack_close(st);	/* every neighbour goes, with what it holds */
	complete_tx();
	st->now_ns = T0_NS;
	st->next_tick_ns = 0;
	st->ip_id = 0;
	rl->tokens = rl->burst;
	rl->last_ns = T0_NS;
	apply(F.statics, F.n_statics);	/* the configured neighbours come back */
	memset(&st->stats, 0, sizeof(st->stats));
	memset(st->port_drops, 0, sizeof(st->port_drops));
	F.tx_local = F.tx_forwarded = 0;
}

/* Parses @lines into commands with the real parser, over a config naming the ports. */
static void parse_cmds(const char *const *lines, unsigned n, struct dp_cmd *out)
{
	struct dp_config c;
	char err[RXP_ERR_LEN];

	dp_config_default(&c);
	for (unsigned i = 0; i < 4; i++)
		if (config_apply_line(&c, config_lines[i], "ports", err, sizeof(err)))
			die("%s", err);
	for (unsigned i = 0; i < n; i++)
		if (config_apply_line(&c, lines[i], "cmds", err, sizeof(err)))
			die("%s", err);
	memcpy(out, c.cmds, n * sizeof(*out));
	dp_config_free(&c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rxp_router *r;
	char err[RXP_ERR_LEN], where[32];
	uint32_t gen;

	(void)argc;
	(void)argv;
	dp_config_default(&F.cfg);
	F.cfg.pool.n_bufs = N_BUFS;
	for (unsigned i = 0; i < RXP_ARRAY_SIZE(config_lines); i++) {
		snprintf(where, sizeof(where), "config %u", i + 1);
		if (config_apply_line(&F.cfg, config_lines[i], where, err, sizeof(err)))
			die("%s", err);
	}
	if (dp_open(&F.dp, &F.cfg, err, sizeof(err)))
		die("dp_open: %s", err);
	if (F.dp.n_ports != N_PORTS || !F.dp.router)
		die("expected %u ports and a router", N_PORTS);
	for (unsigned p = 0; p < N_PORTS; p++)
		rxp_sim_set_tx_hook(&F.dp.ports[p], tx_hook, (void *)(uintptr_t)p);

	for (unsigned i = 0; i < F.cfg.n_cmds; i++)
		if (F.cfg.cmds[i].kind == DP_CMD_NEIGH_ADD && F.n_statics < RXP_ARRAY_SIZE(F.statics))
			F.statics[F.n_statics++] = F.cfg.cmds[i];
	parse_cmds(gw_add_lines, 2, F.gw_add);
	parse_cmds(gw_del_lines, 2, F.gw_del);
	parse_cmds(known_del_lines, 2, F.known_del);

	/*
	 * A small neighbour table instead of the default 4096 entries; its
	 * generation goes on from the old one's, so nothing cached survives.
	 */
	r = F.dp.router;
	rxp_stack_close(&F.dp.stack);
	gen = r->neigh.gen;
	rxp_neigh_free(&r->neigh);
	if (rxp_neigh_init(&r->neigh, NEIGH_MAX))
		die("rxp_neigh_init");
	r->neigh.gen = gen + 1;

	/* the receive device, polled like any port's queue */
	snprintf(F.rx_dev.name, sizeof(F.rx_dev.name), "fuzz");
	F.rx_dev.id = N_PORTS;
	F.rx_dev.n_queues = 1;
	F.rx_dev.ops = &dev_ops;
	F.rx_dev.pool = F.dp.pool;
	F.rx_dev.queues[0].port = &F.rx_dev;
	F.rx_dev.queues[0].cache = &F.dp.cache;

	reset();
	/* what is neither free nor held now sits on the sim ports' RX rings, for good */
	F.rx_posted = calloc(F.dp.pool->n_bufs, 1);
	F.seen = calloc(F.dp.pool->n_bufs, 1);
	if (!F.rx_posted || !F.seen)
		die("out of memory");
	{
		const struct rxp_ring *ring = F.dp.pool->ring;
		uint32_t head = atomic_load(&ring->cons.tail), tail = atomic_load(&ring->prod.tail);

		for (uint32_t i = head; i != tail; i++)
			mark(ring->slots[i & ring->mask], "pool ring");
		for (uint32_t i = 0; i < F.dp.cache.count; i++)
			mark(F.dp.cache.objs[i], "cache");
		rxp_neigh_walk(&r->neigh, mark_held, NULL);
	}
	for (uint32_t i = 0; i < F.dp.pool->n_bufs; i++)
		F.rx_posted[i] = !F.seen[i];
	check_counters("at start", true);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rxp_rx_tuning *t = &F.dp.stack.tuning;
	size_t pos = 1;
	uint8_t mode;

	if (size < 1)
		return 0;
	mode = data[0];
	t->handoff = mode & 1 ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
	t->copy = mode & 2;
	t->budget = budgets[(mode >> 2) & 3];
	t->copybreak = mode & 16 ? 128 : UINT16_MAX;
	/* a copy lands in a buffer just freed, maybe with a poisoned tail */
	F.poison = !t->copy;
	if (mode & 32)
		rxp_stack_set_router(&F.dp.stack, NULL);
	if (mode & 64)
		capture_start(mode);

	while (pos + 3 <= size) {
		uint8_t ctl = data[pos];
		uint16_t port = (ctl & 3) == 3 ? 0 : ctl & 3;
		size_t len = be16(data + pos + 1);
		struct pending *p;

		pos += 3;
		len = RXP_MIN(len, size - pos);
		len = RXP_MIN(len, (size_t)F.dp.pool->max_frame);
		if ((ctl >> 3) & 7 || ctl >> 6) {
			run_polls();
			if ((ctl >> 3) & 7)
				clock_step(clock_steps[(ctl >> 3) & 7]);
			neigh_op(ctl >> 6);
		}
		/* a poll is one port's: a new port starts a new poll */
		if (F.n_pend == PENDING_MAX || (F.n_pend && F.pend[0].port != port))
			run_polls();
		p = &F.pend[F.n_pend++];
		p->frame = data + pos;
		p->len = (uint16_t)len;
		p->port = port;
		pos += len;
		if (ctl & 4)
			run_polls();
	}
	run_polls();
	rxp_stack_set_router(&F.dp.stack, F.dp.router);
	clock_step(0);
	check_counters("at the end", true);
	/* the end of the input, as at the end of a finite source: nobody answers any more */
	rxp_stack_drain(&F.dp.stack);
	complete_tx();
	check_counters("after the drain", true);
	capture_stop();
	if (held().rx || held().local || reasm_held())
		die("packets still held after the drain");
	reset();
	return 0;
}
