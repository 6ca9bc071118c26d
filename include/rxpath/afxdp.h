/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP port: "afxdp:dev=IFACE[,queues=N][,mode=auto|native|skb]
 * [,zerocopy=auto|on|off][,mac=MAC]". The buffer pool is the UMEM; every
 * AF_XDP port on one pool shares it, so a frame received on one port leaves
 * by another without a copy.
 */
#ifndef RXPATH_AFXDP_H
#define RXPATH_AFXDP_H

#include "rxpath/pool.h"

/* Bytes the kernel keeps free before every frame it writes (XDP_PACKET_HEADROOM). */
#define RXP_AFXDP_HEADROOM 256u

/*
 * Adjusts a pool configuration so the pool can be an AF_XDP UMEM: headroom
 * of XDP_PACKET_HEADROOM before each frame and power-of-two buffers.
 */
void rxp_afxdp_pool_config(struct rxp_pool_config *cfg);

/* Returns true when @spec ("driver:args") names the afxdp driver. */
bool rxp_afxdp_spec(const char *spec);

#endif
