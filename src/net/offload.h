/* SPDX-License-Identifier: MIT */
/* What GRO (gro.c) and GSO (gso.c) share: the host path's internals and TCP header helpers. */
#ifndef RXPATH_NET_OFFLOAD_H
#define RXPATH_NET_OFFLOAD_H

#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "stage.h"

/* Writes @h's held packets to its TAP, coalescing TCP segments when GRO is on; frees them. */
void rxp_gro_flush(struct rxp_stack *st, struct rxp_host *h);

/*
 * Gathers one frame the host sent (@len bytes at @frame, header @vh) for
 * transmit on @h's port: a TSO super-packet cut into segments, a partial
 * checksum completed. Counts what it drops.
 */
void rxp_gso_output(struct rxp_stack *st, struct rxp_host *h, const struct rxp_vnet_hdr *vh,
		    uint8_t *frame, uint32_t len);

/* Recomputes the checksum of the IPv4 header at @ip (@ihl bytes, options included). */
static inline void rxp_ip4_set_csum(struct rxp_ip4_hdr *ip, unsigned ihl)
{
	ip->csum = 0;
	ip->csum = rxp_csum(ip, ihl);
}

#endif
