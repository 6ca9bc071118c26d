/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "rss.h"

const uint8_t rxp_rss_default_key[RXP_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t rxp_rss_hash(const uint8_t key[RXP_RSS_KEY_LEN], const uint8_t *data, size_t len)
{
	/* the 32 key bits that line up with the input bit being looked at */
	uint32_t window = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
			  (uint32_t)key[2] << 8 | key[3];
	uint32_t hash = 0;

	if (len > RXP_RSS_KEY_LEN - 4)
		len = RXP_RSS_KEY_LEN - 4;
	for (size_t i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (int bit = 7; bit >= 0; bit--) {
			if (data[i] & (1u << bit))
				hash ^= window;
			window = window << 1 | ((next >> bit) & 1u);
		}
	}
	return hash;
}

uint32_t rxp_rss_frame_hash(const uint8_t key[RXP_RSS_KEY_LEN], const uint8_t *frame,
			    size_t len)
{
	uint8_t in[36];
	size_t off = 14, n;
	uint16_t type;
	uint8_t proto;
	bool ports;

	if (len < off)
		return 0;
	type = (uint16_t)(frame[12] << 8 | frame[13]);
	if (type == 0x8100 && len >= 18) {
		type = (uint16_t)(frame[16] << 8 | frame[17]);
		off = 18;
	}
	if (type == 0x0800 && len >= off + 20) {
		const uint8_t *ip = frame + off;
		size_t ihl = (size_t)(ip[0] & 0xf) * 4;

		memcpy(in, ip + 12, 8);
		n = 8;
		proto = ip[9];
		/* fragments hash on addresses only: later ones have no ports */
		ports = ihl >= 20 && !((ip[6] & 0x1f) << 8 | ip[7]) && !(ip[6] & 0x20);
		off += ihl;
	} else if (type == 0x86dd && len >= off + 40) {
		const uint8_t *ip6 = frame + off;

		memcpy(in, ip6 + 8, 32);
		n = 32;
		proto = ip6[6];
		ports = true;
		off += 40;
	} else {
		return 0;
	}
	if (ports && (proto == 6 || proto == 17) && len >= off + 4) {
		memcpy(in + n, frame + off, 4);
		n += 4;
	}
	return rxp_rss_hash(key, in, n);
}
