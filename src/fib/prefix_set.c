/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "prefix_set.h"

#define MEMBER 1u	/* the "next hop" every prefix of a set has */

struct rxp_pset *rxp_pset_create(void)
{
	struct rxp_pset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->v4 = rxp_lpm4_create(RXP_PSET_PREFIXES_MAX, 0);
	s->v6 = rxp_lpm6_create(RXP_PSET_PREFIXES_MAX, 0);
	if (!s->v4 || !s->v6) {
		rxp_pset_destroy(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void rxp_pset_destroy(struct rxp_pset *s)
{
	if (!s)
		return;
	if (s->v4)
		rxp_lpm4_destroy(s->v4);
	if (s->v6)
		rxp_lpm6_destroy(s->v6);
	free(s);
}

static uint32_t v4_of(const uint8_t prefix[16])
{
	return (uint32_t)prefix[0] << 24 | (uint32_t)prefix[1] << 16 | (uint32_t)prefix[2] << 8 | prefix[3];
}

bool rxp_pset_has_prefix(const struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len)
{
	return family == 4 ? rxp_lpm4_has(s->v4, v4_of(prefix), len) :
	       family == 6 && rxp_lpm6_has(s->v6, prefix, len);
}

int rxp_pset_add(struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len)
{
	if (family != 4 && family != 6)
		return -EINVAL;
	if (rxp_pset_has_prefix(s, family, prefix, len))
		return -EEXIST;
	return family == 4 ? rxp_lpm4_add(s->v4, v4_of(prefix), len, MEMBER) :
			     rxp_lpm6_add(s->v6, prefix, len, MEMBER);
}

int rxp_pset_del(struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len)
{
	if (family != 4 && family != 6)
		return -EINVAL;
	return family == 4 ? rxp_lpm4_del(s->v4, v4_of(prefix), len) : rxp_lpm6_del(s->v6, prefix, len);
}

uint32_t rxp_pset_count(const struct rxp_pset *s, uint8_t family)
{
	return family == 4 ? rxp_lpm4_count(s->v4) : rxp_lpm6_count(s->v6);
}

size_t rxp_pset_memory(const struct rxp_pset *s)
{
	return rxp_lpm4_memory(s->v4, NULL) + rxp_lpm6_memory(s->v6, NULL);
}

bool rxp_pset_has6(const struct rxp_pset *s, const uint8_t addr[16])
{
	uint32_t nh;

	return rxp_lpm6_lookup(s->v6, addr, &nh) == 0;
}
