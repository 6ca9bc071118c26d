/* SPDX-License-Identifier: MIT */
/* The incremental checksum updates give what a full recomputation gives. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "rxpath/csum.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* A random IPv4 header with a correct checksum. */
static void random_header(uint8_t h[20])
{
	uint16_t c;

	for (int i = 0; i < 20; i++)
		h[i] = (uint8_t)next_rand();
	h[0] = 0x45;
	h[8] = (uint8_t)(2 + next_rand() % 254);	/* TTL of at least 2 */
	h[10] = h[11] = 0;
	c = rxp_csum(h, 20);
	memcpy(h + 10, &c, 2);
}

static void test_ttl_dec_matches_recompute(void)
{
	unsigned mismatches = 0;

	for (int i = 0; i < 200000; i++) {
		uint8_t h[20];
		uint16_t inc, full;

		random_header(h);
		memcpy(&inc, h + 10, 2);
		h[8]--;
		inc = rxp_csum_ttl_dec(inc);
		h[10] = h[11] = 0;
		full = rxp_csum(h, 20);
		mismatches += inc != full;
	}
	CHECK_EQ(mismatches, 0);
}

/* The corner of RFC 1624 section 3: a stored checksum that becomes zero. */
static void test_ttl_dec_corner(void)
{
	unsigned found = 0;

	for (int i = 0; i < 2000000 && found < 20; i++) {
		uint8_t h[20];
		uint16_t inc, full;

		random_header(h);
		if (h[10] != 0xfe || h[11] != 0xff)	/* stored 0xfeff: + 0x0100 reaches 0xffff */
			continue;
		found++;
		memcpy(&inc, h + 10, 2);
		h[8]--;
		inc = rxp_csum_ttl_dec(inc);
		h[10] = h[11] = 0;
		full = rxp_csum(h, 20);
		CHECK_EQ(inc, full);
	}
	CHECK(found > 0);
}

static void test_verify_after_update(void)
{
	for (int i = 0; i < 10000; i++) {
		uint8_t h[20];
		uint16_t c;

		random_header(h);
		memcpy(&c, h + 10, 2);
		h[8]--;
		c = rxp_csum_ttl_dec(c);
		memcpy(h + 10, &c, 2);
		CHECK_EQ(rxp_ip4_csum_verify(h, 5), 0);
	}
}

/* The modulo check agrees with the folded one on every stored checksum value. */
static void test_csum_ok_matches_verify(void)
{
	unsigned disagree = 0, valid = 0;

	for (int i = 0; i < 20000; i++) {
		uint8_t h[60];
		unsigned ihl = i % 4 ? 5 : 5 + next_rand() % 11;

		for (unsigned k = 0; k < sizeof(h); k++)
			h[k] = (uint8_t)next_rand();
		if (i % 8 == 0)
			memset(h, 0, sizeof(h));	/* an all-zero sum folds to 0, not 0xffff */
		for (uint32_t c = 0; c < 65536; c += 1 + next_rand() % 512) {
			bool ok;

			h[10] = (uint8_t)(c >> 8);
			h[11] = (uint8_t)c;
			ok = rxp_ip4_csum_ok(h, ihl);
			valid += ok;
			disagree += ok != (rxp_ip4_csum_verify(h, ihl) == 0);
		}
		/* and the one value that makes it right */
		h[10] = h[11] = 0;
		{
			uint16_t c = rxp_csum(h, ihl * 4);

			memcpy(h + 10, &c, 2);
		}
		valid += rxp_ip4_csum_ok(h, ihl);
		disagree += rxp_ip4_csum_ok(h, ihl) != (rxp_ip4_csum_verify(h, ihl) == 0);
	}
	CHECK_EQ(disagree, 0u);
	CHECK(valid > 15000);
}

int main(void)
{
	RUN(test_ttl_dec_matches_recompute);
	RUN(test_ttl_dec_corner);
	RUN(test_verify_after_update);
	RUN(test_csum_ok_matches_verify);
	return tests_done();
}
