/* SPDX-License-Identifier: MIT */
/*
 * The host path of a port: the TAP twin, the packets held for it during a
 * poll, and reading what the kernel sends on it.
 *
 * When to read the TAP. A read() on an idle TAP is a system call that
 * returns EAGAIN, far too dear for every poll round, and there is no shared
 * ring to peek at. So the TAP is read in the poll loop's slow tick, every
 * 64 rounds when the loop also reads the clock (rxp_host_poll_all), up to a
 * budget of frames per path so that a chatty kernel cannot starve the
 * ports. What the kernel sends waits 64 poll rounds at most: microseconds
 * on an idle datapath, under a millisecond on one that forwards full polls
 * (about what a frame may wait in the afpacket driver's receive ring: its
 * block timer is 1 ms).
 *
 * Reading right after each write to the TAP was tried too: the tun driver
 * runs the kernel's receive path inside write(), so an ACK is often queued
 * by the time write() returns. It answers sooner, but costs a read per
 * poll and sends the kernel's ACKs and TSO output in small bursts; on the
 * e2e lab (2 cores) iperf3 through the TAP was 25% slower with it
 * (1470 vs 1970 Mbit/s toward the host, 1090 vs 1320 from it, medians of 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include "offload.h"

/* A 64 KiB TSO super-packet with its Ethernet header and a VLAN tag, and room to spare. */
#define HOST_RX_BUF (65536u + 256u)

_Static_assert(2 * RXP_IF_ADDRS <= RXP_TAP_ADDRS_MAX, "a TAP can take every address of an interface");

static struct rxp_host *host_alloc(uint16_t port, bool gro)
{
	struct rxp_host *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->rx_buf = malloc(HOST_RX_BUF);
	if (!h->rx_buf) {
		free(h);
		return NULL;
	}
	h->rx_buf_len = HOST_RX_BUF;
	h->port = port;
	h->gro = gro;
	h->tap.fd = -1;
	return h;
}

static void host_free(struct rxp_host *h)
{
	rxp_tap_close(&h->tap);
	free(h->rx_buf);
	free(h);
}

int rxp_host_open(struct rxp_host **out, const struct rxp_router *r, int ifidx,
		  const struct rxp_host_config *cfg, char *err, size_t errlen)
{
	struct rxp_tap_config tc;
	const struct rxp_l3if *ifp;
	struct rxp_host *h;
	int ret;

	*out = NULL;
	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs) {
		snprintf(err, errlen, "host path: no such interface");
		return -EINVAL;
	}
	ifp = &r->ifs[ifidx];
	if (ifp->vlan) {
		snprintf(err, errlen, "host path: %s is a VLAN sub-port; a host path belongs to a port",
			 ifp->name);
		return -EINVAL;
	}
	memset(&tc, 0, sizeof(tc));
	if (cfg->name[0])
		snprintf(tc.name, sizeof(tc.name), "%s", cfg->name);
	else if (!rxp_tap_name_taken(ifp->name))
		snprintf(tc.name, sizeof(tc.name), "%s", ifp->name);
	else	/* e.g. the port's own afpacket device has the port's name */
		snprintf(tc.name, sizeof(tc.name), "rxp-%.11s", ifp->name);
	memcpy(tc.mac, ifp->mac, 6);
	tc.mtu = ifp->mtu;
	tc.offload = true;
	tc.multi_queue = cfg->multi_queue;
	for (unsigned i = 0; i < ifp->n_addr4; i++) {
		struct rxp_tap_addr *a = &tc.addrs[tc.n_addrs++];

		a->family = 4;
		a->plen = ifp->plen4[i];
		memcpy(a->addr, &ifp->addr4[i], 4);
	}
	for (unsigned i = 0; i < ifp->n_addr6; i++) {
		struct rxp_tap_addr *a = &tc.addrs[tc.n_addrs++];

		a->family = 6;
		a->plen = ifp->plen6[i];
		memcpy(a->addr, ifp->addr6[i], 16);
	}
	h = host_alloc(ifp->port, cfg->gro);
	if (!h) {
		snprintf(err, errlen, "host path for %s: out of memory", ifp->name);
		return -ENOMEM;
	}
	ret = rxp_tap_open(&h->tap, &tc, err, errlen);
	if (ret) {
		host_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

int rxp_host_open_queue(struct rxp_host **out, const struct rxp_host *first, char *err,
			size_t errlen)
{
	struct rxp_host *h = host_alloc(first->port, first->gro);
	int ret;

	*out = NULL;
	if (!h) {
		snprintf(err, errlen, "host path %s: out of memory", first->tap.name);
		return -ENOMEM;
	}
	ret = rxp_tap_open_queue(&first->tap, &h->tap, err, errlen);
	if (ret) {
		host_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

int rxp_host_open_fd(struct rxp_host **out, uint16_t port, int fd, bool gro)
{
	struct rxp_host *h = host_alloc(port, gro);

	*out = NULL;
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	rxp_tap_attach_fd(&h->tap, fd);
	*out = h;
	return 0;
}

int rxp_host_attach(struct rxp_stack *st, struct rxp_host *h)
{
	if (h->port >= RXP_STACK_PORTS_MAX || st->host[h->port])
		return -EINVAL;
	st->host[h->port] = h;
	st->host_ports |= 1ull << h->port;
	return 0;
}

void rxp_host_close(struct rxp_stack *st, struct rxp_host *h)
{
	if (!h)
		return;
	if (st && h->port < RXP_STACK_PORTS_MAX && st->host[h->port] == h) {
		st->host[h->port] = NULL;
		st->host_ports &= ~(1ull << h->port);
		st->host_pending &= ~(1ull << h->port);
	}
	/* only an attached host path holds packets, and then @st has the cache they go back to */
	if (st && h->n_held)
		rxp_pool_free_bulk(st->cache, h->held, h->n_held);
	h->n_held = 0;
	host_free(h);
}

void rxp_host_set_gro(struct rxp_host *h, bool on)
{
	h->gro = on;
}

void rxp_host_hold(struct rxp_stack *st, struct rxp_host *h, struct rxp_pkt *pkt)
{
	if (rxp_unlikely(h->n_held == RXP_HOST_HOLD))
		rxp_gro_flush(st, h);
	h->held[h->n_held++] = pkt;
	h->stats.to_host_packets++;
	h->stats.to_host_bytes += pkt->len;
	st->host_pending |= 1ull << h->port;
}

void rxp_host_flush(struct rxp_stack *st)
{
	while (st->host_pending) {
		unsigned port = (unsigned)__builtin_ctzll(st->host_pending);
		struct rxp_host *h = st->host[port];

		st->host_pending &= ~(1ull << port);
		rxp_gro_flush(st, h);
	}
}

unsigned rxp_host_poll(struct rxp_stack *st, struct rxp_host *h, unsigned budget)
{
	unsigned n_frames = 0;

	for (unsigned i = 0; i < budget; i++) {
		struct rxp_vnet_hdr vh;
		long len = rxp_tap_read(&h->tap, &vh, h->rx_buf, h->rx_buf_len);

		if (len < 0) {
			if (len == -EAGAIN || len == -EWOULDBLOCK)
				break;
			h->stats.read_errors++;
			/* one frame lost (too long, cut short); anything else: try again next time */
			if (len == -EFAULT || len == -EBADMSG || len == -EINTR)
				continue;
			break;
		}
		n_frames++;
		h->stats.from_host_frames++;
		rxp_gso_output(st, h, &vh, h->rx_buf, (uint32_t)len);
	}
	return n_frames;
}

unsigned rxp_host_poll_all(struct rxp_stack *st, unsigned budget)
{
	uint64_t ports = st->host_ports;
	unsigned n = 0;

	while (ports) {
		unsigned port = (unsigned)__builtin_ctzll(ports);

		ports &= ports - 1;
		n += rxp_host_poll(st, st->host[port], budget);
	}
	if (n)
		rxp_stack_flush(st);
	return n;
}

int rxp_host_addr_add(struct rxp_host *h, uint8_t family, const uint8_t *addr, uint8_t plen,
		      char *err, size_t errlen)
{
	struct rxp_tap_addr a = { .family = family, .plen = plen };

	memcpy(a.addr, addr, 16);
	return rxp_tap_addr_add(&h->tap, &a, err, errlen);
}

int rxp_host_addr_del(struct rxp_host *h, uint8_t family, const uint8_t *addr, char *err,
		      size_t errlen)
{
	return rxp_tap_addr_del(&h->tap, family, addr, err, errlen);
}

int rxp_host_set_mtu(struct rxp_host *h, uint32_t mtu, char *err, size_t errlen)
{
	return rxp_tap_set_mtu(&h->tap, mtu, err, errlen);
}
