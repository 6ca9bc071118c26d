/* SPDX-License-Identifier: MIT */
/* IPv6 routing: not in place yet; IPv6 to a router is dropped and counted. */
#include "route.h"

void rxp_ip6_route(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	rxp_drop(st, pkt, RXP_DROP_LOCAL_UNHANDLED);
}

void rxp_nd_solicit(struct rxp_stack *st, int ifidx, const uint8_t target[16])
{
	(void)st;
	(void)ifidx;
	(void)target;
}

void rxp_icmp6_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t param)
{
	(void)st;
	(void)orig;
	(void)type;
	(void)code;
	(void)param;
}
