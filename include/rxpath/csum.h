/* SPDX-License-Identifier: MIT */
/*
 * Internet checksum (RFC 1071) in software, and its incremental update
 * (RFC 1624), for NICs that offload neither.
 */
#ifndef RXPATH_CSUM_H
#define RXPATH_CSUM_H

#include <arpa/inet.h>
#include <string.h>
#include "rxpath/common.h"

/*
 * Returns the 32-bit one's-complement partial sum of @len bytes at @data
 * added to @sum (not folded). Bytes are summed in memory order, so the
 * folded result can be stored as is.
 */
static inline uint64_t rxp_csum_partial(const void *data, size_t len, uint64_t sum)
{
	const uint8_t *p = data;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		sum += w >> 32;
		sum += w & 0xffffffffu;
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		sum += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		sum += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint16_t w = 0;

		memcpy(&w, p, 1);	/* pad the odd byte with zero, in memory order */
		sum += w;
	}
	return sum;
}

/* Returns the 16-bit one's-complement of the folded @sum: the checksum to store. */
static inline uint16_t rxp_csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Returns the checksum over @len bytes; 0 means a header carrying its checksum verifies. */
static inline uint16_t rxp_csum(const void *data, size_t len)
{
	return rxp_csum_fold(rxp_csum_partial(data, len, 0));
}

/*
 * The unfolded one's complement sum of the IPv4 header at @hdr (@ihl 32-bit
 * words, at least 5). Unrolled for the common 20-byte header.
 */
static inline uint64_t rxp_ip4_hdr_sum(const void *hdr, unsigned ihl)
{
	const uint8_t *p = hdr;
	uint32_t w0, w1, w2, w3, w4;
	uint64_t sum;

	/* five plain loads: a single 20-byte memcpy makes compilers bounce it through the stack */
	memcpy(&w0, p, 4);
	memcpy(&w1, p + 4, 4);
	memcpy(&w2, p + 8, 4);
	memcpy(&w3, p + 12, 4);
	memcpy(&w4, p + 16, 4);
	sum = (uint64_t)w0 + w1 + w2 + w3 + w4;
	if (rxp_unlikely(ihl > 5))
		sum = rxp_csum_partial(p + 20, (ihl - 5) * 4u, sum);
	return sum;
}

/* Returns 0 when the IPv4 header at @hdr (@ihl 32-bit words) carries a correct checksum. */
static inline uint16_t rxp_ip4_csum_verify(const void *hdr, unsigned ihl)
{
	return rxp_csum_fold(rxp_ip4_hdr_sum(hdr, ihl));
}

/*
 * True when the IPv4 header at @hdr (@ihl 32-bit words) has a correct
 * checksum: what rxp_ip4_csum_verify() == 0 says, in fewer instructions.
 * Every end-around carry keeps a sum's value modulo 0xffff (2^16 = 1 there),
 * so the folded sum is 0xffff exactly when the unfolded one is a nonzero
 * multiple of 0xffff; the compiler turns the modulo into a multiplication.
 */
static inline bool rxp_ip4_csum_ok(const void *hdr, unsigned ihl)
{
	uint64_t sum = rxp_ip4_hdr_sum(hdr, ihl);

	return sum != 0 && sum % 0xffff == 0;
}

/*
 * RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit field that
 * changed from @old_field to @new_field. All values as stored in the packet.
 */
static inline uint16_t rxp_csum_update16(uint16_t csum, uint16_t old_field, uint16_t new_field)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t)~old_field;
	sum += new_field;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The checksum after the TTL (high byte of the TTL|protocol word) drops by
 * one: RFC 1624 specialised, HC' = HC + 0x0100 with the end-around carry.
 * Gives what a full recomputation gives, 0x0000 rather than 0xffff.
 * One's complement sums do not depend on byte order, so the field is
 * updated as stored, with 0x0100 in network order added.
 */
static inline uint16_t rxp_csum_ttl_dec(uint16_t csum_stored)
{
	uint32_t sum = (uint32_t)csum_stored + htons(0x0100);

	return (uint16_t)(sum + (sum >= 0xffff));
}

/* Same for a 32-bit field (an IPv4 address). */
static inline uint16_t rxp_csum_update32(uint16_t csum, uint32_t old_field, uint32_t new_field)
{
	csum = rxp_csum_update16(csum, (uint16_t)old_field, (uint16_t)new_field);
	return rxp_csum_update16(csum, (uint16_t)(old_field >> 16), (uint16_t)(new_field >> 16));
}

/* Returns the unfolded sum of the IPv4 pseudo-header for a transport checksum. */
static inline uint64_t rxp_csum_pseudo4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	uint8_t tail[4] = { 0, proto, (uint8_t)(len >> 8), (uint8_t)len };
	uint32_t t;

	memcpy(&t, tail, 4);
	return (uint64_t)src + dst + t;
}

/* Returns the unfolded sum of the IPv6 pseudo-header (RFC 8200 8.1). */
static inline uint64_t rxp_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16],
					uint8_t next_hdr, uint32_t len)
{
	uint8_t tail[8] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			    (uint8_t)len, 0, 0, 0, next_hdr };
	uint64_t sum = rxp_csum_partial(src, 16, 0);

	sum = rxp_csum_partial(dst, 16, sum);
	return rxp_csum_partial(tail, 8, sum);
}

/*
 * The unfolded pseudo-header sum for @len bytes of transport @proto under
 * the IPv4 or IPv6 (@v6) header at @ip, its addresses as they stand.
 */
static inline uint64_t rxp_csum_pseudo_ip(const uint8_t *ip, bool v6, uint8_t proto, uint32_t len)
{
	uint32_t src, dst;

	if (v6)
		return rxp_csum_pseudo6(ip + 8, ip + 24, proto, len);
	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	return rxp_csum_pseudo4(src, dst, proto, (uint16_t)len);
}

#endif
