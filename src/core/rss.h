/* SPDX-License-Identifier: MIT */
/*
 * Receive-side scaling: the Toeplitz hash NICs use to spread flows over
 * their queues, with the 40-byte key most drivers ship, and the
 * indirection table that turns a hash into a queue. The input is the
 * addresses then the ports, in network order (source first), as in
 * Microsoft's RSS specification.
 */
#ifndef RXPATH_RSS_H
#define RXPATH_RSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RXP_RSS_KEY_LEN 40
#define RXP_RSS_RETA_SIZE 128	/* indirection table entries, as on most NICs */

/* The default key of the RSS specification (and of most NIC drivers). */
extern const uint8_t rxp_rss_default_key[RXP_RSS_KEY_LEN];

/* Returns the Toeplitz hash of @len bytes of @data under @key (@len <= key length - 4). */
uint32_t rxp_rss_hash(const uint8_t key[RXP_RSS_KEY_LEN], const uint8_t *data, size_t len);

/*
 * Returns the hash of an Ethernet frame's flow: IPv4/IPv6 addresses, and
 * the ports for TCP and UDP (not for fragments); 0 for anything else.
 */
uint32_t rxp_rss_frame_hash(const uint8_t key[RXP_RSS_KEY_LEN], const uint8_t *frame,
			    size_t len);

/* Returns the queue @hash goes to over @n_queues: a round-robin indirection table. */
static inline uint16_t rxp_rss_queue(uint32_t hash, uint16_t n_queues)
{
	return (uint16_t)((hash & (RXP_RSS_RETA_SIZE - 1)) % n_queues);
}

#endif
