/* SPDX-License-Identifier: MIT */
/* What a device's driver says it can do with XDP (the kernel's netdev family). */
#ifndef RXPATH_XDP_FEATURES_H
#define RXPATH_XDP_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

/* bits of the xdp-features (linux/netdev.h, NETDEV_XDP_ACT_*) */
#define RXP_XDP_ACT_BASIC	 (1ull << 0)	/* XDP_PASS, XDP_DROP, XDP_TX in native mode */
#define RXP_XDP_ACT_REDIRECT	 (1ull << 1)	/* XDP_REDIRECT, which AF_XDP needs */
#define RXP_XDP_ACT_NDO_XMIT	 (1ull << 2)
#define RXP_XDP_ACT_XSK_ZEROCOPY (1ull << 3)	/* AF_XDP without a copy */
#define RXP_XDP_ACT_HW_OFFLOAD	 (1ull << 4)
#define RXP_XDP_ACT_RX_SG	 (1ull << 5)	/* frames in several buffers */

/*
 * Fills *@features with the xdp-features of the device @ifindex (in this
 * network namespace). Returns 0, -ENOENT when the kernel cannot say (no
 * netdev family: before Linux 6.3), or -errno.
 */
int rxp_xdp_features(unsigned ifindex, uint64_t *features);

/*
 * The words of `ip link set dev IFACE ...` that remove a program attached in
 * @attach_mode (XDP_ATTACHED_*): `xdp off` removes a native one only.
 */
const char *rxp_xdp_detach_words(uint8_t attach_mode);

#endif
