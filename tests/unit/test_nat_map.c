/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NAT44 mapping table (src/fib/nat_map.h): port
 * preservation and endpoint-independent reuse, paired address pooling, the
 * default port ranges, a small explicit range running out, the caller's
 * exclusions, ICMP identifiers, freeing at the last put and a full table;
 * random operations against a brute-force model; two threads on a locked
 * table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fib/nat_map.h"
#include "rxpath/proto.h"

#define NONE RXP_NAT_MAP_NONE
#define UDP RXP_IPPROTO_UDP
#define TCP RXP_IPPROTO_TCP
#define ICMP RXP_IPPROTO_ICMP

static uint32_t ip(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

static struct rxp_nat_map *new_map(uint32_t max, bool locked)
{
	struct rxp_nat_map *m = rxp_nat_map_create(max, locked);

	if (!m) {
		perror("rxp_nat_map_create");
		exit(1);
	}
	return m;
}

static struct rxp_nat_pool pool_of(uint32_t lo, uint32_t hi, uint16_t plo, uint16_t phi, uint32_t id)
{
	return (struct rxp_nat_pool){ .addr_lo = lo, .addr_hi = hi, .port_lo = plo, .port_hi = phi,
				      .id = id };
}

/* The mapping of a get that must succeed (copied, with its index). */
static struct rxp_nat_mapping get_ok(struct rxp_nat_map *m, const struct rxp_nat_pool *p, uint8_t proto,
				     uint32_t addr, uint16_t port, uint32_t *idx)
{
	struct rxp_nat_mapping mp = { 0 };
	int err = 1;
	uint32_t i = rxp_nat_map_get(m, p, proto, addr, port, NULL, NULL, &err);

	CHECK(i != NONE);
	CHECK_EQ(err, 0);
	CHECK(i == NONE || rxp_nat_map_read(m, i, &mp));
	if (idx)
		*idx = i;
	return mp;
}

static void test_create(void)
{
	struct rxp_nat_map *m;

	errno = 0;
	CHECK(!rxp_nat_map_create(0, false));
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(!rxp_nat_map_create(RXP_NAT_MAP_MAX + 1, true));
	CHECK_EQ(errno, EINVAL);
	m = new_map(1000, true);
	CHECK_EQ(rxp_nat_map_max(m), 1000);
	CHECK_EQ(rxp_nat_map_count(m), 0);
	/* records and two indexes of 2048 slots */
	CHECK(rxp_nat_map_memory(m) >= 1000 * sizeof(struct rxp_nat_mapping) + 2 * 2048 * 4);
	rxp_nat_map_destroy(m);
	rxp_nat_map_destroy(NULL);
}

static void test_preservation(void)
{
	struct rxp_nat_map *m = new_map(64, false);
	struct rxp_nat_pool p = pool_of(ip(203, 0, 113, 1), ip(203, 0, 113, 1), 1024, 65535, 7);
	struct rxp_nat_mapping a, b, c;
	uint32_t ia, ib, ic;

	a = get_ok(m, &p, UDP, ip(10, 0, 0, 1), 5000, &ia);
	CHECK_EQ(a.out_addr, ip(203, 0, 113, 1));
	CHECK_EQ(a.out_port, 5000);
	CHECK_EQ(a.in_addr, ip(10, 0, 0, 1));
	CHECK_EQ(a.in_port, 5000);
	CHECK_EQ(a.proto, UDP);
	CHECK_EQ(a.pool_id, 7);
	CHECK_EQ(a.refs, 1);
	/* the same port from another host: another port of the same address */
	b = get_ok(m, &p, UDP, ip(10, 0, 0, 2), 5000, &ib);
	CHECK(ib != ia);
	CHECK_EQ(b.out_addr, ip(203, 0, 113, 1));
	CHECK(b.out_port != 5000);
	CHECK(b.out_port >= 1024);
	/* the same internal endpoint again (another destination): the same mapping */
	c = get_ok(m, &p, UDP, ip(10, 0, 0, 1), 5000, &ic);
	CHECK_EQ(ic, ia);
	CHECK_EQ(c.out_port, 5000);
	CHECK_EQ(c.refs, 2);
	CHECK_EQ(rxp_nat_map_count(m), 2);
	CHECK_EQ(rxp_nat_map_find_out(m, UDP, ip(203, 0, 113, 1), 5000), ia);
	CHECK_EQ(rxp_nat_map_find_out(m, UDP, ip(203, 0, 113, 1), b.out_port), ib);
	CHECK_EQ(rxp_nat_map_find_out(m, TCP, ip(203, 0, 113, 1), 5000), NONE);
	CHECK_EQ(rxp_nat_map_find_in(m, 7, UDP, ip(10, 0, 0, 2), 5000), ib);
	CHECK_EQ(rxp_nat_map_find_in(m, 8, UDP, ip(10, 0, 0, 2), 5000), NONE);
	/* another protocol has ports of its own */
	c = get_ok(m, &p, TCP, ip(10, 0, 0, 2), 5000, NULL);
	CHECK_EQ(c.out_port, 5000);
	/* another pool (rule) over the same addresses: another mapping, and the port is taken */
	p.id = 8;
	c = get_ok(m, &p, UDP, ip(10, 0, 0, 1), 5000, &ic);
	CHECK(ic != ia);
	CHECK(c.out_port != 5000 && c.out_port != b.out_port);
	rxp_nat_map_destroy(m);
}

static void test_paired(void)
{
	struct rxp_nat_map *m = new_map(4096, false);
	struct rxp_nat_pool p = pool_of(ip(198, 51, 100, 4), ip(198, 51, 100, 7), 1024, 65535, 1);
	unsigned used[4] = { 0 }, n_used = 0, bad = 0;
	uint32_t first = 0;

	for (unsigned port = 1000; port < 1200; port++) {
		uint8_t proto = port & 1 ? UDP : TCP;
		struct rxp_nat_mapping mp = get_ok(m, &p, proto, ip(10, 1, 0, 1), (uint16_t)port, NULL);

		if (port == 1000)
			first = mp.out_addr;
		bad += mp.out_addr != first;
	}
	CHECK_EQ(bad, 0);
	CHECK(first >= p.addr_lo && first <= p.addr_hi);
	for (unsigned h = 0; h < 64; h++) {
		struct rxp_nat_mapping mp = get_ok(m, &p, UDP, ip(10, 2, 0, h), 4000, NULL);
		struct rxp_nat_mapping mq = get_ok(m, &p, TCP, ip(10, 2, 0, h), 4001, NULL);

		bad += mp.out_addr < p.addr_lo || mp.out_addr > p.addr_hi || mq.out_addr != mp.out_addr;
		if (mp.out_addr >= p.addr_lo && mp.out_addr <= p.addr_hi)
			used[mp.out_addr - p.addr_lo]++;
	}
	CHECK_EQ(bad, 0);
	for (unsigned i = 0; i < 4; i++)
		n_used += used[i] != 0;
	CHECK(n_used >= 2);
	rxp_nat_map_destroy(m);
}

static void test_default_ports(void)
{
	struct rxp_nat_map *m = new_map(64, false);
	struct rxp_nat_pool p = pool_of(ip(192, 0, 2, 1), ip(192, 0, 2, 1), 0, 0, 1);
	struct rxp_nat_mapping mp;

	p.default_ports = true;
	CHECK_EQ(get_ok(m, &p, TCP, ip(10, 0, 0, 1), 80, NULL).out_port, 80);
	mp = get_ok(m, &p, TCP, ip(10, 0, 0, 2), 80, NULL);
	CHECK(mp.out_port >= 1 && mp.out_port <= 1023 && mp.out_port != 80);
	CHECK_EQ(get_ok(m, &p, TCP, ip(10, 0, 0, 1), 5000, NULL).out_port, 5000);
	mp = get_ok(m, &p, TCP, ip(10, 0, 0, 2), 5000, NULL);
	CHECK(mp.out_port >= 1024 && mp.out_port != 5000);
	/* port 0 is below 1024 but not a port to keep */
	mp = get_ok(m, &p, UDP, ip(10, 0, 0, 1), 0, NULL);
	CHECK(mp.out_port >= 1 && mp.out_port <= 1023);
	CHECK_EQ(get_ok(m, &p, UDP, ip(10, 0, 0, 1), 65535, NULL).out_port, 65535);
	rxp_nat_map_destroy(m);
}

static void test_small_range(void)
{
	struct rxp_nat_map *m = new_map(64, false);
	struct rxp_nat_pool p = pool_of(ip(192, 0, 2, 9), ip(192, 0, 2, 9), 1000, 1003, 3);
	unsigned seen = 0;
	uint32_t idx[5];
	int err = 0;

	for (unsigned i = 0; i < 4; i++) {
		struct rxp_nat_mapping mp = get_ok(m, &p, UDP, ip(10, 0, 0, 1 + i), (uint16_t)(40000 + i),
						   &idx[i]);

		CHECK(mp.out_port >= 1000 && mp.out_port <= 1003);
		if (mp.out_port >= 1000 && mp.out_port <= 1003)
			seen |= 1u << (mp.out_port - 1000);
	}
	CHECK_EQ(seen, 0xf);
	idx[4] = rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 5), 40004, NULL, NULL, &err);
	CHECK_EQ(idx[4], NONE);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK_EQ(rxp_nat_map_count(m), 4);
	/* a port in range is kept while free */
	CHECK_EQ(get_ok(m, &p, TCP, ip(10, 0, 0, 5), 1002, NULL).out_port, 1002);
	rxp_nat_map_put(m, idx[2]);
	CHECK_EQ(get_ok(m, &p, UDP, ip(10, 0, 0, 5), 40004, NULL).out_port >= 1000, 1);
	CHECK_EQ(rxp_nat_map_count(m), 5);
	/* a range that is empty */
	p.port_lo = 2000;
	p.port_hi = 1999;
	CHECK_EQ(rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 6), 1, NULL, NULL, &err), NONE);
	CHECK_EQ(err, -EINVAL);
	rxp_nat_map_destroy(m);
}

static unsigned excl_calls;

/* Ports 5000 and 1000..1001 of UDP are a port forward's. */
static bool excl_fn(void *ctx, uint8_t proto, uint32_t addr, uint16_t port)
{
	excl_calls++;
	return ctx == &excl_calls && proto == UDP && addr == ip(192, 0, 2, 1) &&
	       (port == 5000 || port == 1000 || port == 1001);
}

static void test_excluded(void)
{
	struct rxp_nat_map *m = new_map(64, false);
	struct rxp_nat_pool p = pool_of(ip(192, 0, 2, 1), ip(192, 0, 2, 1), 1000, 1003, 1);
	struct rxp_nat_mapping mp;
	uint32_t idx;
	int err = 0;

	p.default_ports = true;
	idx = rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 1), 5000, excl_fn, &excl_calls, &err);
	CHECK(idx != NONE && rxp_nat_map_read(m, idx, &mp));
	CHECK(mp.out_port != 5000 && mp.out_port >= 1024);
	CHECK(excl_calls >= 2);
	/* TCP's 5000 is not excluded */
	idx = rxp_nat_map_get(m, &p, TCP, ip(10, 0, 0, 1), 5000, excl_fn, &excl_calls, &err);
	CHECK(idx != NONE && rxp_nat_map_read(m, idx, &mp));
	CHECK_EQ(mp.out_port, 5000);
	/* two of four ports excluded: two mappings, then none */
	p.default_ports = false;
	p.id = 2;
	for (unsigned i = 0; i < 3; i++) {
		idx = rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 1 + i), (uint16_t)(1000 + i), excl_fn,
				      &excl_calls, &err);
		if (i < 2) {
			CHECK(idx != NONE && rxp_nat_map_read(m, idx, &mp));
			CHECK(mp.out_port == 1002 || mp.out_port == 1003);
		} else {
			CHECK_EQ(idx, NONE);
			CHECK_EQ(err, -EADDRNOTAVAIL);
		}
	}
	rxp_nat_map_destroy(m);
}

static void test_icmp(void)
{
	struct rxp_nat_map *m = new_map(64, false);
	/* a pool's ports do not apply to identifiers */
	struct rxp_nat_pool p = pool_of(ip(192, 0, 2, 1), ip(192, 0, 2, 1), 1000, 1003, 1);
	struct rxp_nat_mapping mp;

	CHECK_EQ(get_ok(m, &p, ICMP, ip(10, 0, 0, 1), 7, NULL).out_port, 7);
	CHECK_EQ(get_ok(m, &p, ICMP, ip(10, 0, 0, 1), 65535, NULL).out_port, 65535);
	mp = get_ok(m, &p, ICMP, ip(10, 0, 0, 2), 7, NULL);
	CHECK(mp.out_port >= 1 && mp.out_port != 7);
	/* identifier 0: kept while free, never handed out otherwise */
	CHECK_EQ(get_ok(m, &p, ICMP, ip(10, 0, 0, 1), 0, NULL).out_port, 0);
	mp = get_ok(m, &p, ICMP, ip(10, 0, 0, 2), 0, NULL);
	CHECK(mp.out_port >= 1);
	CHECK_EQ(rxp_nat_map_find_out(m, ICMP, ip(192, 0, 2, 1), 0),
		 rxp_nat_map_find_in(m, 1, ICMP, ip(10, 0, 0, 1), 0));
	rxp_nat_map_destroy(m);
}

static int count_cb(const struct rxp_nat_mapping *mp, void *ctx)
{
	*(uint32_t *)ctx += mp->refs;
	return 0;
}

static int stop_cb(const struct rxp_nat_mapping *mp, void *ctx)
{
	(void)mp;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

static void test_put_and_full(void)
{
	struct rxp_nat_map *m = new_map(4, false);
	struct rxp_nat_pool p = pool_of(ip(192, 0, 2, 1), ip(192, 0, 2, 1), 1024, 65535, 1);
	struct rxp_nat_mapping mp;
	uint32_t idx[4], refs = 0;
	int err = 0, n = 0;

	for (unsigned i = 0; i < 4; i++)
		get_ok(m, &p, UDP, ip(10, 0, 0, 1), (uint16_t)(2000 + i), &idx[i]);
	CHECK_EQ(rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 1), 3000, NULL, NULL, &err), NONE);
	CHECK_EQ(err, -ENOSPC);
	/* full, but a mapping that exists is still found */
	CHECK_EQ(rxp_nat_map_get(m, &p, UDP, ip(10, 0, 0, 1), 2001, NULL, NULL, &err), idx[1]);
	rxp_nat_map_hold(m, idx[1]);
	CHECK(rxp_nat_map_read(m, idx[1], &mp));
	CHECK_EQ(mp.refs, 3);
	rxp_nat_map_walk(m, count_cb, &refs);
	CHECK_EQ(refs, 6);
	CHECK_EQ(rxp_nat_map_walk(m, stop_cb, &n), 42);
	CHECK_EQ(n, 2);
	rxp_nat_map_put(m, idx[1]);
	rxp_nat_map_put(m, idx[1]);
	CHECK_EQ(rxp_nat_map_count(m), 4);
	rxp_nat_map_put(m, idx[1]);
	CHECK_EQ(rxp_nat_map_count(m), 3);
	CHECK(!rxp_nat_map_read(m, idx[1], &mp));
	CHECK_EQ(rxp_nat_map_find_in(m, 1, UDP, ip(10, 0, 0, 1), 2001), NONE);
	CHECK_EQ(rxp_nat_map_find_out(m, UDP, ip(192, 0, 2, 1), 2001), NONE);
	CHECK_EQ(rxp_nat_map_find_out(m, UDP, ip(192, 0, 2, 1), 2002), idx[2]);
	/* the room made is used */
	CHECK_EQ(get_ok(m, &p, UDP, ip(10, 0, 0, 1), 3000, NULL).out_port, 3000);
	CHECK_EQ(rxp_nat_map_count(m), 4);
	rxp_nat_map_flush(m);
	CHECK_EQ(rxp_nat_map_count(m), 0);
	CHECK_EQ(rxp_nat_map_find_out(m, UDP, ip(192, 0, 2, 1), 3000), NONE);
	CHECK_EQ(rxp_nat_map_find_in(m, 1, UDP, ip(10, 0, 0, 1), 2000), NONE);
	CHECK(!rxp_nat_map_read(m, idx[0], &mp));
	CHECK_EQ(get_ok(m, &p, UDP, ip(10, 0, 0, 1), 2001, NULL).out_port, 2001);
	rxp_nat_map_destroy(m);
}

/* ---- random operations against a model ---- */

static uint64_t rs = 88172645463325252ull;

static uint64_t xrand(void)
{
	return check_xorshift(&rs);
}

#define MP 3	/* pools */
#define MPROTO 3
#define MADDR 8
#define MPORT 16
#define MKEYS (MP * MPROTO * MADDR * MPORT)
#define MMAX 128

static const uint8_t m_proto[MPROTO] = { UDP, TCP, ICMP };
static const uint16_t m_port[MPORT] = { 0, 1, 80, 100, 101, 110, 120, 125, 130, 131, 140, 150, 1023, 1024,
					5000, 65535 };
static struct rxp_nat_pool m_pool[MP];

struct mrec {
	uint32_t refs, idx, out_addr;
	uint16_t out_port;
};

static struct mrec model[MKEYS];
static uint32_t live[MKEYS], n_live, live_pos[MKEYS];
static uint32_t paired[MP][MADDR];	/* learnt from the first success; 0: not yet */

static uint32_t key_pool(uint32_t k) { return k / (MPROTO * MADDR * MPORT); }
static uint8_t key_proto(uint32_t k) { return m_proto[k / (MADDR * MPORT) % MPROTO]; }
static uint32_t key_addr(uint32_t k) { return ip(10, 9, 0, k / MPORT % MADDR); }
static uint16_t key_port(uint32_t k) { return m_port[k % MPORT]; }

static bool m_excl(void *ctx, uint8_t proto, uint32_t addr, uint16_t port)
{
	(void)ctx;
	return ((port * 2654435761u) ^ addr ^ proto) % 23 == 0;
}

/* The range a mapping's port comes from. */
static void m_range(const struct rxp_nat_pool *p, uint8_t proto, uint16_t in_port, uint32_t *lo, uint32_t *hi)
{
	if (proto == ICMP) {
		*lo = 1;
		*hi = 65535;
	} else if (p->default_ports) {
		*lo = in_port < 1024 ? 1 : 1024;
		*hi = in_port < 1024 ? 1023 : 65535;
	} else {
		*lo = p->port_lo;
		*hi = p->port_hi;
	}
}

/* True when the model holds (proto, addr, port) or the caller excludes it. */
static bool m_taken(uint8_t proto, uint32_t addr, uint16_t port)
{
	for (uint32_t i = 0; i < n_live; i++) {
		const struct mrec *r = &model[live[i]];

		if (key_proto(live[i]) == proto && r->out_addr == addr && r->out_port == port)
			return true;
	}
	return m_excl(NULL, proto, addr, port);
}

static bool m_full(uint8_t proto, uint32_t addr, uint32_t lo, uint32_t hi)
{
	for (uint32_t p = lo; p <= hi; p++)
		if (!m_taken(proto, addr, (uint16_t)p))
			return false;
	return true;
}

static unsigned m_bad;

static void m_check(bool ok)
{
	if (!ok && m_bad++ < 10)
		CHECK(ok);
}

static void m_get(struct rxp_nat_map *m, uint32_t k)
{
	const struct rxp_nat_pool *p = &m_pool[key_pool(k)];
	uint8_t proto = key_proto(k);
	uint16_t in_port = key_port(k);
	struct mrec *r = &model[k];
	struct rxp_nat_mapping mp;
	uint32_t lo, hi, want_addr = paired[key_pool(k)][k / MPORT % MADDR];
	bool keep;
	int err = 1;
	uint32_t idx = rxp_nat_map_get(m, p, proto, key_addr(k), in_port, m_excl, NULL, &err);

	if (r->refs) {
		m_check(idx == r->idx && err == 0);
		r->refs++;
		return;
	}
	m_range(p, proto, in_port, &lo, &hi);
	if (n_live == MMAX) {
		m_check(idx == NONE && err == -ENOSPC);
		return;
	}
	if (idx == NONE) {
		m_check(err == -EADDRNOTAVAIL && proto != ICMP);
		if (want_addr) {
			m_check(m_full(proto, want_addr, lo, hi));
		} else {
			bool some = false;

			for (uint32_t a = p->addr_lo; a <= p->addr_hi && !some; a++)
				some = m_full(proto, a, lo, hi);
			m_check(some);
		}
		return;
	}
	m_check(err == 0 && rxp_nat_map_read(m, idx, &mp));
	m_check(mp.refs == 1 && mp.in_addr == key_addr(k) && mp.in_port == in_port && mp.proto == proto &&
		mp.pool_id == p->id);
	m_check(mp.out_addr >= p->addr_lo && mp.out_addr <= p->addr_hi);
	if (want_addr)
		m_check(mp.out_addr == want_addr);
	else
		paired[key_pool(k)][k / MPORT % MADDR] = mp.out_addr;
	m_check(!m_taken(proto, mp.out_addr, mp.out_port));
	keep = (in_port >= lo && in_port <= hi) || (proto == ICMP && !in_port);
	if (keep && !m_taken(proto, mp.out_addr, in_port))
		m_check(mp.out_port == in_port);
	else
		m_check(mp.out_port >= lo && mp.out_port <= hi);
	*r = (struct mrec){ .refs = 1, .idx = idx, .out_addr = mp.out_addr, .out_port = mp.out_port };
	live_pos[k] = n_live;
	live[n_live++] = k;
}

static void m_put(struct rxp_nat_map *m, uint32_t k)
{
	rxp_nat_map_put(m, model[k].idx);
	if (--model[k].refs)
		return;
	live[live_pos[k]] = live[--n_live];
	live_pos[live[live_pos[k]]] = live_pos[k];
}

static uint32_t m_find_in(struct rxp_nat_map *m, uint32_t k)
{
	return rxp_nat_map_find_in(m, m_pool[key_pool(k)].id, key_proto(k), key_addr(k), key_port(k));
}

/* Every mapping found both ways, and nothing else. */
static void m_verify(struct rxp_nat_map *m)
{
	uint32_t k = (uint32_t)(xrand() % MKEYS);

	m_check(rxp_nat_map_count(m) == n_live);
	for (uint32_t i = 0; i < n_live; i++) {
		uint32_t kk = live[i];
		const struct mrec *r = &model[kk];

		m_check(m_find_in(m, kk) == r->idx);
		m_check(rxp_nat_map_find_out(m, key_proto(kk), r->out_addr, r->out_port) == r->idx);
	}
	if (!model[k].refs)
		m_check(m_find_in(m, k) == NONE);
}

static int m_walk_cb(const struct rxp_nat_mapping *mp, void *ctx)
{
	(void)ctx;
	for (uint32_t i = 0; i < n_live; i++) {
		const struct mrec *r = &model[live[i]];

		if (key_proto(live[i]) == mp->proto && r->out_addr == mp->out_addr &&
		    r->out_port == mp->out_port)
			return r->refs == mp->refs ? 0 : 1;
	}
	return 1;
}

static void test_random(void)
{
	struct rxp_nat_map *m = new_map(MMAX, false);
	unsigned fails = 0, full = 0;

	/* overlapping pools: their external endpoints are one space */
	m_pool[0] = pool_of(ip(100, 64, 0, 1), ip(100, 64, 0, 2), 100, 111, 10);
	m_pool[1] = pool_of(ip(100, 64, 0, 2), ip(100, 64, 0, 3), 106, 121, 11);
	m_pool[2] = pool_of(ip(100, 64, 0, 4), ip(100, 64, 0, 4), 0, 0, 12);
	m_pool[2].default_ports = true;
	for (unsigned step = 0; step < 100000; step++) {
		uint64_t x = xrand();

		if (x % 20 < 9 && n_live) {
			m_put(m, live[(x >> 8) % n_live]);
		} else {
			uint32_t before = n_live, k = (uint32_t)((x >> 8) % MKEYS);
			bool existed = model[k].refs != 0;

			m_get(m, k);
			fails += !existed && n_live == before && before < MMAX;
			full += !existed && before == MMAX;
		}
		m_verify(m);
		if (step % 1000 == 0)
			m_check(rxp_nat_map_walk(m, m_walk_cb, NULL) == 0);
	}
	CHECK_EQ(m_bad, 0);
	/* the run went through both kinds of failure */
	CHECK(fails > 100);
	CHECK(full > 100);
	while (n_live)
		m_put(m, live[0]);
	CHECK_EQ(rxp_nat_map_count(m), 0);
	rxp_nat_map_destroy(m);
}

/* ---- two threads on a locked table ---- */

#define TKEYS 512
#define THELD 200
#define TOPS 100000

static struct rxp_nat_map *tmap;
static const struct rxp_nat_pool tpool = { .addr_lo = 0xc6120001, .addr_hi = 0xc6120001, .port_lo = 1024,
					   .port_hi = 1279, .id = 5 };

struct tstate {
	uint64_t rs;
	uint32_t held[THELD];
	unsigned n_held, bad, failed;
};

static void *t_worker(void *arg)
{
	struct tstate *t = arg;

	for (unsigned i = 0; i < TOPS; i++) {
		uint64_t x;

		x = check_xorshift(&t->rs);
		if (t->n_held == THELD || ((x & 1) && t->n_held)) {
			unsigned j = (unsigned)((x >> 8) % t->n_held);

			rxp_nat_map_put(tmap, t->held[j]);
			t->held[j] = t->held[--t->n_held];
		} else {
			/* both threads ask for the same internal endpoints */
			uint32_t k = (uint32_t)((x >> 8) % TKEYS);
			uint32_t idx = rxp_nat_map_get(tmap, &tpool, UDP, ip(10, 7, 0, k % 64),
						       (uint16_t)(1000 + k / 64), NULL, NULL, NULL);
			struct rxp_nat_mapping mp;

			if (idx == NONE) {
				t->failed++;
				continue;
			}
			/* held: it cannot change under us */
			t->bad += !rxp_nat_map_read(tmap, idx, &mp) || mp.in_addr != ip(10, 7, 0, k % 64) ||
				  mp.in_port != 1000 + k / 64 || mp.out_port < 1024 || mp.out_port > 1279;
			t->held[t->n_held++] = idx;
		}
	}
	return NULL;
}

static uint8_t t_seen[65536];
static uint32_t t_refs;

static int t_walk_cb(const struct rxp_nat_mapping *mp, void *ctx)
{
	(*(unsigned *)ctx) += t_seen[mp->out_port]++ != 0;
	t_refs += mp->refs;
	return 0;
}

static void test_threads(void)
{
	struct tstate ts[2] = { { .rs = 0x1234567 }, { .rs = 0x7654321 } };
	pthread_t th[2];
	unsigned dup = 0;

	tmap = new_map(1024, true);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, t_worker, &ts[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(ts[0].bad + ts[1].bad, 0);
	CHECK(rxp_nat_map_count(tmap) <= 2 * THELD);
	rxp_nat_map_walk(tmap, t_walk_cb, &dup);
	CHECK_EQ(dup, 0);
	CHECK_EQ(t_refs, ts[0].n_held + ts[1].n_held);
	for (int i = 0; i < 2; i++)
		while (ts[i].n_held)
			rxp_nat_map_put(tmap, ts[i].held[--ts[i].n_held]);
	CHECK_EQ(rxp_nat_map_count(tmap), 0);
	rxp_nat_map_destroy(tmap);
}

/* Address-dependent filtering's counts: per (mapping, remote), gone with the last connection. */
static void test_permits(void)
{
	struct rxp_nat_map *m = rxp_nat_map_create(64, false);
	enum { N = 60 };
	int count[N] = { 0 };

	CHECK(m != NULL);
	if (!m)
		return;
	rxp_nat_map_permit(m, 3, 0x0a000001, +1);
	rxp_nat_map_permit(m, 3, 0x0a000001, +1);
	CHECK(rxp_nat_map_permits(m, 3, 0x0a000001));
	CHECK(!rxp_nat_map_permits(m, 3, 0x0a000002));
	CHECK(!rxp_nat_map_permits(m, 4, 0x0a000001));
	rxp_nat_map_permit(m, 3, 0x0a000001, -1);
	CHECK(rxp_nat_map_permits(m, 3, 0x0a000001));
	rxp_nat_map_permit(m, 3, 0x0a000001, -1);
	CHECK(!rxp_nat_map_permits(m, 3, 0x0a000001));
	rxp_nat_map_permit(m, 3, 0x0a000001, -1);	/* one too many: nothing to take */
	CHECK(!rxp_nat_map_permits(m, 3, 0x0a000001));
	/* many keys in a small table: removals move the runs back, the others stay found */
	for (unsigned round = 0; round < 2000; round++) {
		unsigned k = (round * 2654435761u) % N;
		int delta = count[k] && (round % 3) ? -1 : +1;

		rxp_nat_map_permit(m, k % 8, 0x0a000000 + k, delta);
		count[k] += delta;
		for (unsigned j = 0; j < N; j++)
			if (rxp_nat_map_permits(m, j % 8, 0x0a000000 + j) != (count[j] > 0)) {
				CHECK(false);
				round = 2000;
				break;
			}
	}
	rxp_nat_map_destroy(m);
}

int main(void)
{
	RUN(test_create);
	RUN(test_preservation);
	RUN(test_paired);
	RUN(test_default_ports);
	RUN(test_small_range);
	RUN(test_excluded);
	RUN(test_icmp);
	RUN(test_put_and_full);
	RUN(test_random);
	RUN(test_threads);
	RUN(test_permits);
	return tests_done();
}
