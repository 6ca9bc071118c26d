/* SPDX-License-Identifier: MIT */
/*
 * The pcap port: "pcap:in=FILE,out=FILE,mac=MAC". Every frame of `in` is
 * received in file order; every frame transmitted is written to `out`.
 */
#ifndef RXPATH_PCAP_PORT_H
#define RXPATH_PCAP_PORT_H

#include "rxpath/port.h"

/*
 * Returns 0 and the number of input frames skipped as larger than the
 * pool's maximum frame (@oversize) and as captured truncated (@truncated),
 * or -EINVAL if @port is not an open pcap port.
 */
int rxp_pcap_port_skipped(const struct rxp_port *port, uint64_t *oversize, uint64_t *truncated);

#endif
