/* SPDX-License-Identifier: MIT */
/*
 * The AF_PACKET port: "afpacket:dev=IFACE[,mac=MAC][,blocks=N][,blocksize=BYTES]
 * [,txring=N][,bypass=on|off]". A TPACKET_V3 receive ring and a TX ring on
 * one packet socket bound to IFACE. Works on any Linux interface; frames are
 * copied (AF_PACKET cannot receive into our pool).
 */
#ifndef RXPATH_AFPACKET_H
#define RXPATH_AFPACKET_H

#include "rxpath/port.h"

/* Driver counters beyond the queue's: what never reached the stack, and the kernel's view. */
struct rxp_afpacket_stats {
	uint64_t rx_oversize;	  /* frames longer than the pool's max frame: dropped */
	uint64_t rx_truncated;	  /* frames the kernel cut short to fit a block: dropped */
	uint64_t rx_csum_partial; /* frames whose sender left the checksum to offload */
	uint64_t rx_outgoing;	  /* our own transmissions seen on receive (old kernels): skipped */
	uint64_t rx_blocks;	  /* ring blocks consumed and handed back */
	uint64_t rx_bad_frames;	  /* frames of blocks whose headers point outside them: given back unread */
	uint64_t tx_oversize;	  /* frames too long for a TX slot: dropped */
	uint64_t tx_kicks;	  /* sendto() calls that started transmission */
	uint64_t tx_kick_errors;  /* kicks that failed; the frames are retried */
	uint64_t kernel_drops;	  /* frames the kernel dropped because the ring was full */
	uint64_t kernel_freezes;  /* times the ring filled up */
};

/*
 * Fills @st with the driver counters of @port (the kernel's are read, and
 * accumulated, at each call). Returns 0, or -EINVAL if @port is not an open
 * afpacket port.
 */
int rxp_afpacket_port_stats(const struct rxp_port *port, struct rxp_afpacket_stats *st);

#endif
