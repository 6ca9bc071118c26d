/* SPDX-License-Identifier: MIT */
/*
 * The simulated NIC. Its "device" side owns the buffers posted on its RX
 * descriptor ring, writes frames into them (as DMA would), sets length and
 * status and hands the descriptors back; its TX side takes frames from the TX
 * ring, "sends" them and marks the descriptors done so the driver can reap
 * the buffers. The device runs inline, just before each rx_burst and after
 * each tx_burst (deterministic), or on a thread of its own (real cross-core
 * cache traffic, as with DMA).
 */
#ifndef RXPATH_SIM_H
#define RXPATH_SIM_H

#include "rxpath/port.h"
#include "gen.h"

/* Called by the device for every frame it transmits (from the device thread in thread mode). */
typedef void (*rxp_sim_tx_hook)(void *ctx, const uint8_t *frame, uint16_t len);

/* Routes frames the port transmits to @hook. Set it before the port starts. */
void rxp_sim_set_tx_hook(struct rxp_port *port, rxp_sim_tx_hook hook, void *ctx);

/* Returns the port's generator (for its counters of malformed frames). */
const struct rxp_gen *rxp_sim_gen(const struct rxp_port *port, uint16_t queue);

/*
 * The same, to change: a benchmark that must send what only the router's
 * state says (the answers to translated connections) rewrites templates.
 * Only while the port is not polled.
 */
struct rxp_gen *rxp_sim_gen_rw(struct rxp_port *port, uint16_t queue);

#endif
