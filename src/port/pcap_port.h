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

/*
 * Returns true when the in= file of @port (a pcap port; others: false) ended
 * in a read error (cut short, damaged) instead of at its end: frames after
 * it were not received (said on stderr when it happened).
 */
bool rxp_pcap_port_read_failed(const struct rxp_port *port);

/*
 * Flushes the out= file of @port (a pcap port; others are left alone) and
 * returns false if a write to it ever failed (said on stderr when it did).
 */
bool rxp_pcap_port_flush(struct rxp_port *port);

#endif
