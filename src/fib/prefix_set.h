/* SPDX-License-Identifier: MIT */
/*
 * A prefix set of the filter (`filter set add NAME PREFIX...`): IPv4 and
 * IPv6 prefixes, up to RXP_PSET_PREFIXES_MAX of each, held in two
 * longest-prefix-match tables like the FIB's, so that asking whether an
 * address is in the set costs a route lookup whatever its size. One writer
 * (the control path) changes it while the workers look up, as the FIB.
 */
#ifndef RXPATH_FIB_PREFIX_SET_H
#define RXPATH_FIB_PREFIX_SET_H

#include "rxpath/lpm4.h"
#include "rxpath/lpm6.h"

#define RXP_PSET_PREFIXES_MAX (1u << 20)	/* per family */

struct rxp_pset {
	struct rxp_lpm4 *v4;
	struct rxp_lpm6 *v6;
};

/* Returns an empty set, or NULL with errno ENOMEM. */
struct rxp_pset *rxp_pset_create(void);
void rxp_pset_destroy(struct rxp_pset *s);

/*
 * Adds or removes @prefix/@len of @family (network order). Returns 0,
 * -EEXIST (add: there already), -ENOENT (del: not there), -EINVAL or -ENOSPC.
 */
int rxp_pset_add(struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len);
int rxp_pset_del(struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len);
/* True when @prefix/@len itself is in the set (not an address it covers). */
bool rxp_pset_has_prefix(const struct rxp_pset *s, uint8_t family, const uint8_t prefix[16], uint8_t len);

/* Prefixes held, of one family. */
uint32_t rxp_pset_count(const struct rxp_pset *s, uint8_t family);
size_t rxp_pset_memory(const struct rxp_pset *s);

/* True when an IPv4 address (host order) is covered by one of the set's prefixes. */
static inline bool rxp_pset_has4(const struct rxp_pset *s, uint32_t addr)
{
	uint32_t nh;

	return rxp_lpm4_lookup(s->v4, addr, &nh) == 0;
}

/* The same for an IPv6 address (network order). */
bool rxp_pset_has6(const struct rxp_pset *s, const uint8_t addr[16]);

#endif
