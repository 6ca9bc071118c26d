/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP port: "afxdp:dev=IFACE[,queues=N][,mode=auto|native|skb]
 * [,zerocopy=auto|on|off][,mac=MAC]". The buffer pool is the UMEM; every
 * AF_XDP port on one pool shares it, so a frame received on one port leaves
 * by another without a copy.
 */
#ifndef RXPATH_AFXDP_H
#define RXPATH_AFXDP_H

/* Bytes the kernel keeps free before every frame it writes (XDP_PACKET_HEADROOM). */
#define RXP_AFXDP_HEADROOM 256u

#endif
