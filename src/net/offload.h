/* SPDX-License-Identifier: MIT */
/* What GRO (gro.c) and GSO (gso.c) share: the host path's internals and TCP header helpers. */
#ifndef RXPATH_NET_OFFLOAD_H
#define RXPATH_NET_OFFLOAD_H

#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "stage.h"

#define RXP_TCP_F_FIN 0x01
#define RXP_TCP_F_SYN 0x02
#define RXP_TCP_F_RST 0x04
#define RXP_TCP_F_PSH 0x08
#define RXP_TCP_F_ACK 0x10
#define RXP_TCP_F_URG 0x20
#define RXP_TCP_F_ECE 0x40
#define RXP_TCP_F_CWR 0x80
#define RXP_TCP_CSUM_OFF 16	/* the checksum field, from the TCP header */

/* Writes @h's held packets to its TAP, coalescing TCP segments when GRO is on; frees them. */
void rxp_gro_flush(struct rxp_stack *st, struct rxp_host *h);

/*
 * Gathers one frame the host sent (@len bytes at @frame, header @vh) for
 * transmit on @h's port: a TSO super-packet cut into segments, a partial
 * checksum completed. Counts what it drops.
 */
void rxp_gso_output(struct rxp_stack *st, struct rxp_host *h, const struct rxp_vnet_hdr *vh,
		    uint8_t *frame, uint32_t len);


/* Recomputes the checksum of the IPv4 header at @ip (@ihl bytes). */
static inline void rxp_ip4_set_csum(uint8_t *ip, unsigned ihl)
{
	uint16_t c;

	ip[10] = 0;
	ip[11] = 0;
	c = rxp_csum(ip, ihl);
	memcpy(ip + 10, &c, 2);
}

#endif
