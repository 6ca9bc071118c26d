/* SPDX-License-Identifier: MIT */
/* The Toeplitz hash against the verification vectors of Microsoft's RSS specification. */
#include <arpa/inet.h>
#include <string.h>
#include "check.h"
#include "port/gen.h"
#include "core/rss.h"

struct vector4 {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip_only, with_ports;
};

static const struct vector4 v4[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

static const struct {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip_only, with_ports;
} v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024,
	  0x4b61e985, 0x02d1feef },
};

static void test_ipv4_vectors(void)
{
	for (unsigned i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		uint8_t in[12];
		uint16_t sp = htons(v4[i].sport), dp = htons(v4[i].dport);

		inet_pton(AF_INET, v4[i].src, in);
		inet_pton(AF_INET, v4[i].dst, in + 4);
		memcpy(in + 8, &sp, 2);
		memcpy(in + 10, &dp, 2);
		CHECK_EQ(rxp_rss_hash(rxp_rss_default_key, in, 8), v4[i].ip_only);
		CHECK_EQ(rxp_rss_hash(rxp_rss_default_key, in, 12), v4[i].with_ports);
	}
}

static void test_ipv6_vectors(void)
{
	for (unsigned i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		uint8_t in[36];
		uint16_t sp = htons(v6[i].sport), dp = htons(v6[i].dport);

		inet_pton(AF_INET6, v6[i].src, in);
		inet_pton(AF_INET6, v6[i].dst, in + 16);
		memcpy(in + 32, &sp, 2);
		memcpy(in + 34, &dp, 2);
		CHECK_EQ(rxp_rss_hash(rxp_rss_default_key, in, 32), v6[i].ip_only);
		CHECK_EQ(rxp_rss_hash(rxp_rss_default_key, in, 36), v6[i].with_ports);
	}
}

/* Builds an Ethernet + IPv4 + TCP frame of vector 0; returns its length. */
static size_t frame4(uint8_t *f, uint16_t frag, uint8_t proto)
{
	uint16_t sp = htons(v4[0].sport), dp = htons(v4[0].dport);

	memset(f, 0, 64);
	f[12] = 0x08;
	f[14] = 0x45;
	f[20] = (uint8_t)(frag >> 8);
	f[21] = (uint8_t)frag;
	f[23] = proto;
	inet_pton(AF_INET, v4[0].src, f + 26);
	inet_pton(AF_INET, v4[0].dst, f + 30);
	memcpy(f + 34, &sp, 2);
	memcpy(f + 36, &dp, 2);
	return 64;
}

static void test_frame_hash(void)
{
	uint8_t f[64];

	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, frame4(f, 0, 6)), v4[0].with_ports);
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, frame4(f, 0, 17)), v4[0].with_ports);
	/* other protocols and fragments: addresses only */
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, frame4(f, 0, 1)), v4[0].ip_only);
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, frame4(f, 0x2000, 6)), v4[0].ip_only);
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, frame4(f, 0x0010, 6)), v4[0].ip_only);
	/* too short, or not IP: queue 0 */
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, 30), 0);
	frame4(f, 0, 6);
	f[12] = 0x08, f[13] = 0x06;
	CHECK_EQ(rxp_rss_frame_hash(rxp_rss_default_key, f, 64), 0);
}

static void test_queue_spread(void)
{
	unsigned hits[4] = { 0 };

	for (uint32_t h = 0; h < 4096; h++)
		hits[rxp_rss_queue(h * 2654435761u, 4)]++;
	for (unsigned q = 0; q < 4; q++)
		CHECK(hits[q] > 900 && hits[q] < 1150);
	CHECK_EQ(rxp_rss_queue(0x51ccc178, 1), 0);
}

/* A sim NIC's queues: each generator keeps the flows RSS sends to it, and a share of the count. */
static void test_generator_per_queue(void)
{
	const uint16_t n_queues = 4;
	uint64_t total = 0;
	uint32_t steps = 0, full_len = 0;

	for (uint16_t q = 0; q < n_queues; q++) {
		struct rxp_gen_config cfg;
		struct rxp_gen gen;
		char err[256];
		const uint8_t *f;
		uint16_t len;
		uint64_t n = 0;

		rxp_gen_config_default(&cfg);
		cfg.flows = 1024;
		cfg.count = 100003;
		cfg.max_frame = 1518;
		cfg.protos = RXP_GEN_UDP4 | RXP_GEN_TCP6;
		CHECK_EQ(rxp_gen_init(&gen, &cfg, err, sizeof(err)), 0);
		full_len = gen.sched_len;
		steps += (uint32_t)rxp_gen_keep_queue(&gen, q, n_queues);
		while ((f = rxp_gen_next(&gen, &len))) {
			CHECK_EQ(rxp_rss_queue(rxp_rss_frame_hash(rxp_rss_default_key, f, len), n_queues), q);
			n++;
		}
		/* every queue gets some of 1024 flows, none gets nearly all */
		CHECK(n > 100003 / 8 && n < 100003 / 2);
		total += n;
		rxp_gen_free(&gen);
	}
	CHECK_EQ(steps, full_len);
	CHECK_EQ(total, 100003);
}

int main(void)
{
	RUN(test_ipv4_vectors);
	RUN(test_ipv6_vectors);
	RUN(test_frame_hash);
	RUN(test_queue_spread);
	RUN(test_generator_per_queue);
	return tests_done();
}
