/* SPDX-License-Identifier: MIT */
/*
 * The AF_PACKET port: "afpacket:dev=IFACE[,queues=N][,mac=MAC][,blocks=N]
 * [,blocksize=BYTES][,txring=N][,bypass=on|off]".
 *
 * One packet socket bound to IFACE carries a TPACKET_V3 receive ring and a
 * TX ring, both mmap'd (Documentation/networking/packet_mmap.rst). This is
 * the driver that works on every interface, XDP or not.
 *
 * Receive: the kernel fills whole blocks of frames and hands a block over
 * when it is full or its retire timer (1 ms) fires, so a busy port costs no
 * system call at all and an idle one at most 1 ms of latency. rx_burst walks
 * the blocks the kernel handed over with a cursor kept across calls, and
 * gives a block back as soon as its last frame is taken. AF_PACKET cannot
 * write into our pool (the ring is the kernel's memory), so each frame is
 * copied into a pool buffer: this driver is never zero-copy.
 *
 * Transmit: frames are copied into TX ring slots in ring order, their
 * buffers go straight back to the cache, and one sendto(MSG_DONTWAIT) per
 * burst tells the kernel to send every slot marked ready. A slot is ours
 * again once the kernel has sent its frame (status back to AVAILABLE).
 *
 * A device that goes away (deleted, or moved to another namespace) unbinds
 * the socket: the port check sees it, closes the socket and the port goes
 * down; when a device of the same name shows up again the socket is opened
 * on it afresh and the port keeps its MAC (the device is promiscuous).
 *
 * Queues: with queues=N the port opens N sockets on the device, joined in
 * one PACKET_FANOUT group that spreads frames by flow hash (the kernel's
 * RSS for AF_PACKET). The kernel's flow hash leaves the ports out of every
 * fragment, so the fragments of a datagram all land on one queue (where
 * the router reassembles what is addressed to it). No
 * PACKET_FANOUT_FLAG_DEFRAG: it would have the kernel reassemble what the
 * router only forwards, into frames larger than the link and the ring's
 * slots, which were lost. Each queue has its own rings; each worker polls
 * and transmits on its own.
 *
 * Context: one thread polls each queue.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "afpacket.h"
#include "netdev.h"

#define AFP_KEYS "dev, queues, mac, blocks, blocksize, txring, bypass"
#define AFP_BLOCKS_DEFAULT 32u
#define AFP_BLOCKSIZE_DEFAULT (128u << 10)	/* ~80 full-size frames, ~1000 small ones */
#define AFP_BLOCKSIZE_MAX (16u << 20)
#define AFP_RX_FRAME 2048u	/* V3 frames are variable; the kernel still checks a geometry */
#define AFP_RETIRE_MS 1u	/* a partly filled block is handed over after this */
#define AFP_TXRING_DEFAULT 1024u
#define AFP_TX_BLOCK (64u << 10)
#define AFP_WARN_MAX 4u
/* newer than some kernel headers */
#ifndef PACKET_FANOUT_FLAG_UNIQUEID
#define PACKET_FANOUT_FLAG_UNIQUEID 0x2000
#endif
#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif

/* Where frame data starts in a TX slot: the kernel's default for V3 (no PACKET_TX_HAS_OFF). */
#define AFP_TX_DATA_OFF (TPACKET3_HDRLEN - sizeof(struct sockaddr_ll))

_Static_assert(AFP_TX_DATA_OFF == TPACKET_ALIGN(sizeof(struct tpacket3_hdr)),
	       "TX frame data follows the aligned tpacket3_hdr");

/* One queue: a packet socket with its rings. */
struct afp_port {
	int fd;
	uint16_t queue;		/* its queue number: messages come from queue 0 only */
	bool fanout;		/* one of several queues: in the port's fanout group */
	bool gone;		/* the device went away: socket closed, bursts do nothing */
	uint8_t *map;
	size_t map_len;
	/* receive ring */
	uint8_t *rx_ring;
	uint32_t rx_block_size;
	uint32_t rx_blocks;
	uint32_t rx_block;	/* block the cursor is in */
	uint32_t rx_left;	/* frames of that block not yet taken */
	uint8_t *rx_next;	/* next tpacket3_hdr; NULL: no block open */
	const uint8_t *rx_end;	/* end of the open block: every frame header and frame within */
	bool skip_outgoing;	/* filter outgoing frames by packet type: no PACKET_IGNORE_OUTGOING, or a fanout group */
	/* transmit ring */
	uint8_t *tx_ring;
	uint32_t tx_frame_size;
	uint32_t tx_frames;	/* power of two */
	uint32_t tx_head;	/* next slot we fill */
	uint32_t tx_clean;	/* oldest slot not yet seen sent */
	uint32_t tx_max_len;
	bool tx_need_kick;	/* a kick failed: frames wait for another */
	bool tx_blocked;	/* kicks fail, the device is down or gone: retried by the check */
	uint8_t down_checks;	/* port checks that found tx_blocked in a row */
	bool qdisc_bypass;	/* PACKET_QDISC_BYPASS is on */
	bool want_bypass;	/* bypass= asked for it */
	unsigned ifindex;	/* the device the socket is bound to */
	unsigned failed_ifindex;	/* a device of our name that could not be opened */
	/* for messages and checks */
	uint32_t max_frame;
	uint16_t data_off;
	unsigned n_warned;
	char dev[IFNAMSIZ];
	char port_name[RXP_PORT_NAME_MAX];
	struct rxp_afpacket_stats st;
};

/* The port: its queues, one socket each. */
struct afp_dev {
	unsigned n_queues;
	rxp_cache_aligned struct afp_port q[];
};

/* ---- receive ---- */

static inline struct tpacket_block_desc *rx_block_desc(const struct afp_port *ap, uint32_t b)
{
	return (struct tpacket_block_desc *)(ap->rx_ring + (size_t)b * ap->rx_block_size);
}

/* Hands the current block back to the kernel and moves the cursor to the next one. */
static inline void rx_release_block(struct afp_port *ap)
{
	struct tpacket_block_desc *bd = rx_block_desc(ap, ap->rx_block);

	/* Our reads of the block are done. Pairs with the kernel's check of block_status. */
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	ap->st.rx_blocks++;
	ap->rx_next = NULL;
	ap->rx_left = 0;
	if (++ap->rx_block == ap->rx_blocks)
		ap->rx_block = 0;
}

/* Opens the next block the kernel has handed over. Returns false when there is none. */
static inline bool rx_open_block(struct afp_port *ap)
{
	for (uint32_t tries = 0; tries < ap->rx_blocks; tries++) {
		struct tpacket_block_desc *bd = rx_block_desc(ap, ap->rx_block);

		/* Pairs with the kernel's barrier before it sets TP_STATUS_USER. */
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			return false;
		ap->rx_left = bd->hdr.bh1.num_pkts;
		if (rxp_likely(ap->rx_left)) {
			ap->rx_next = (uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
			ap->rx_end = (const uint8_t *)bd + ap->rx_block_size;
			return true;
		}
		rx_release_block(ap);	/* an empty block: nothing to take */
	}
	return false;
}

/* Slow path: says once or a few times why frames are being dropped or damaged. */
static rxp_noinline void rx_warn(struct afp_port *ap, const struct tpacket3_hdr *h)
{
	if (ap->n_warned >= AFP_WARN_MAX)
		return;
	ap->n_warned++;
	if (h->tp_status & TP_STATUS_CSUMNOTREADY)
		fprintf(stderr, "rxpath: port %s: afpacket dev=%s: frames arrive with checksums left to offload and are forwarded unfinished; turn off TX checksum offload on the sender (ethtool -K PEER tx off)\n",
			ap->port_name, ap->dev);
	else if (h->tp_snaplen < h->tp_len)
		fprintf(stderr, "rxpath: port %s: afpacket dev=%s: a %u-byte frame did not fit a ring block; dropped (raise blocksize=)\n",
			ap->port_name, ap->dev, h->tp_len);
	else
		fprintf(stderr, "rxpath: port %s: afpacket dev=%s: a %u-byte frame is longer than the %u-byte maximum frame; dropped. A sender doing TSO/GSO/GRO (ethtool -K PEER tso off gso off gro off) or an MTU above --max-frame (raise it) causes this\n",
			ap->port_name, ap->dev, h->tp_snaplen, ap->max_frame);
}

/*
 * True when the frame header at @h and the frame it describes lie within
 * the open block: the ring is the kernel's, but nothing read from it is
 * used unchecked.
 */
static inline bool rx_frame_in_block(const struct afp_port *ap, const struct tpacket3_hdr *h)
{
	const uint8_t *p = (const uint8_t *)h;
	size_t room = (size_t)(ap->rx_end - p);

	return p >= (const uint8_t *)rx_block_desc(ap, ap->rx_block) + sizeof(struct tpacket_block_desc) &&
	       p < ap->rx_end && room >= TPACKET3_HDRLEN && h->tp_mac <= room &&
	       h->tp_snaplen <= room - h->tp_mac && h->tp_next_offset <= room;
}

/*
 * Copies one frame into @pkt at the pool's frame start and stores its length
 * in *@out_len. Returns false when the frame is dropped (counted): never
 * writes more than max_frame bytes into a buffer.
 */
static inline bool rx_copy_frame(struct afp_port *ap, const struct tpacket3_hdr *h,
				 struct rxp_pkt *pkt, uint16_t *out_len)
{
	const uint8_t *src = (const uint8_t *)h + h->tp_mac;
	uint32_t len = h->tp_snaplen;
	uint32_t status = h->tp_status;
	uint8_t *dst = rxp_pkt_buf(pkt) + ap->data_off;

	if (rxp_unlikely(ap->skip_outgoing)) {
		const struct sockaddr_ll *sll = (const void *)((const uint8_t *)h +
			TPACKET_ALIGN(sizeof(struct tpacket3_hdr)));

		if (sll->sll_pkttype == PACKET_OUTGOING) {
			ap->st.rx_outgoing++;
			return false;
		}
	}
	if (rxp_unlikely(len < h->tp_len)) {
		ap->st.rx_truncated++;
		rx_warn(ap, h);
		return false;
	}
	if (rxp_unlikely(status & TP_STATUS_CSUMNOTREADY)) {
		ap->st.rx_csum_partial++;
		rx_warn(ap, h);
	}
	if (rxp_unlikely(status & TP_STATUS_VLAN_VALID) && len >= 12) {
		/*
		 * The tag was taken off by the device (or never put on by a
		 * sender's VLAN device): put it back, the stack parses it in-band.
		 */
		uint16_t tpid = (status & TP_STATUS_VLAN_TPID_VALID) ? h->hv1.tp_vlan_tpid : ETH_P_8021Q;
		uint16_t tci = (uint16_t)h->hv1.tp_vlan_tci;

		if (rxp_unlikely(len + 4 > ap->max_frame))
			goto oversize;
		memcpy(dst, src, 12);
		dst[12] = (uint8_t)(tpid >> 8);
		dst[13] = (uint8_t)tpid;
		dst[14] = (uint8_t)(tci >> 8);
		dst[15] = (uint8_t)tci;
		memcpy(dst + 16, src + 12, len - 12);
		len += 4;
	} else {
		if (rxp_unlikely(len > ap->max_frame))
			goto oversize;
		memcpy(dst, src, len);
	}
	*out_len = (uint16_t)len;
	return true;

oversize:
	ap->st.rx_oversize++;
	rx_warn(ap, h);
	return false;
}

static uint16_t afp_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct afp_port *ap = q->priv;
	uint64_t rx_meta = rxp_pkt_rx_meta(ap->data_off, q->port->id, q->id);
	uint64_t bytes = 0;
	uint16_t i = 0;

	if (rxp_unlikely(ap->gone))
		return 0;
	while (i < n) {
		uint32_t want, got, used = 0;

		if (!ap->rx_next && !rx_open_block(ap))
			break;
		/* Buffers for the frames of this block we may take, in one go. */
		want = RXP_MIN(ap->rx_left, (uint32_t)(n - i));
		got = rxp_pool_alloc_burst(q->cache, &pkts[i], want);
		while (used < got && ap->rx_left) {
			const struct tpacket3_hdr *h = (const void *)ap->rx_next;
			struct rxp_pkt *pkt = pkts[i + used];
			uint16_t len;

			if (rxp_unlikely(!rx_frame_in_block(ap, h))) {
				ap->st.rx_bad_frames += ap->rx_left;
				ap->rx_left = 0;	/* given back below, the rest of it unread */
				break;
			}
			ap->rx_next += h->tp_next_offset;
			ap->rx_left--;
			if (rxp_unlikely(!rx_copy_frame(ap, h, pkt, &len)))
				continue;	/* dropped: the buffer serves the next frame */
			rxp_pkt_set_rx(pkt, rx_meta, len);
			bytes += len;
			used++;
		}
		if (rxp_unlikely(used < got))
			rxp_pool_free_bulk(q->cache, &pkts[i + used], got - used);
		i = (uint16_t)(i + used);
		if (!ap->rx_left)
			rx_release_block(ap);
		if (rxp_unlikely(got < want)) {
			/* The pool is empty: the frames wait in the ring. */
			q->stats.rx_no_buffer++;
			break;
		}
	}
	q->stats.rx_polls++;
	q->stats.rx_nonempty += i != 0;
	q->stats.rx_packets += i;
	q->stats.rx_bytes += bytes;
	return i;
}

/* Nothing to post: the kernel owns the ring; buffers are taken as frames are copied. */
static uint32_t afp_refill(struct rxp_queue *q)
{
	(void)q;
	return 0;
}

/* ---- transmit ---- */

static inline struct tpacket3_hdr *tx_slot(const struct afp_port *ap, uint32_t idx)
{
	/* Frames fill each block exactly, so slots sit at one stride across blocks. */
	return (struct tpacket3_hdr *)(ap->tx_ring + (size_t)(idx & (ap->tx_frames - 1)) *
				       ap->tx_frame_size);
}

/* Moves tx_clean past the slots the kernel has sent. Returns how many. */
static inline uint32_t tx_reclaim(struct afp_port *ap)
{
	uint32_t n = 0;

	while (ap->tx_clean != ap->tx_head) {
		/* Pairs with the kernel's status store after the frame left (skb destructor). */
		uint32_t s = __atomic_load_n(&tx_slot(ap, ap->tx_clean)->tp_status, __ATOMIC_ACQUIRE);

		if (s & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING))
			break;
		ap->tx_clean++;
		n++;
	}
	return n;
}

/* Slow path: a kick failed. The kernel keeps unsent frames marked; the next kick retries. */
static rxp_noinline void tx_kick_failed(struct afp_port *ap, int e)
{
	ap->tx_need_kick = true;
	ap->st.tx_kick_errors++;
	/* down or going away: the port check retries and says which, not every poll */
	if (e == ENETDOWN || e == ENXIO || e == ENODEV) {
		ap->tx_blocked = true;
		return;
	}
	if (e == EAGAIN || e == ENOBUFS || e == EINTR || ap->n_warned >= AFP_WARN_MAX)
		return;
	ap->n_warned++;
	fprintf(stderr, "rxpath: port %s: afpacket dev=%s: transmit failed: %s\n", ap->port_name,
		ap->dev, strerror(e));
}

/* One system call sends every slot marked ready. */
static inline void tx_kick(struct afp_port *ap)
{
	ap->st.tx_kicks++;
	ap->tx_need_kick = false;
	if (rxp_unlikely(sendto(ap->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0))
		tx_kick_failed(ap, errno);
	else if (rxp_unlikely(ap->tx_blocked))
		ap->tx_blocked = false;
}

static uint16_t afp_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct afp_port *ap = q->priv;
	uint32_t room = ap->tx_frames - (ap->tx_head - ap->tx_clean);
	uint32_t filled = 0;
	uint64_t bytes = 0;
	uint16_t i;

	if (rxp_unlikely(ap->gone))
		return 0;	/* nothing taken: the stack counts it as port_down */
	if (room < n) {
		tx_reclaim(ap);
		room = ap->tx_frames - (ap->tx_head - ap->tx_clean);
	}
	for (i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		struct tpacket3_hdr *h;

		if (rxp_unlikely(pkt->len > ap->tx_max_len)) {
			/* Taken, so that it does not block the burst, but not sent. */
			ap->st.tx_oversize++;
			continue;
		}
		if (filled == room)
			break;
		h = tx_slot(ap, ap->tx_head);
		memcpy((uint8_t *)h + AFP_TX_DATA_OFF, rxp_pkt_cdata(pkt), pkt->len);
		h->tp_len = pkt->len;
		h->tp_snaplen = pkt->len;
		h->tp_next_offset = 0;
		/* Hands the slot over: the frame is written. Pairs with the kernel's status read. */
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		ap->tx_head++;
		filled++;
		bytes += pkt->len;
	}
	/* Copied (or dropped): the buffers are free again. */
	rxp_pool_free_bulk(q->cache, pkts, i);
	/* while kicks fail (the device is down) the port check retries, not every burst */
	if (rxp_unlikely(ap->tx_blocked))
		ap->tx_need_kick |= filled != 0;
	else if (filled || ap->tx_need_kick)
		tx_kick(ap);
	q->stats.tx_packets += filled;
	q->stats.tx_bytes += bytes;
	q->stats.tx_completed += i;
	q->stats.tx_ring_full += n - i;
	return i;
}

/* Returns how many TX slots came back from the kernel; 0 when there was nothing to do. */
static uint32_t afp_complete(struct rxp_queue *q)
{
	struct afp_port *ap = q->priv;

	if (rxp_unlikely(ap->gone))
		return 0;
	if (rxp_unlikely(ap->tx_need_kick) && !ap->tx_blocked)
		tx_kick(ap);
	if (ap->tx_clean == ap->tx_head)
		return 0;
	return tx_reclaim(ap);
}

/* A live interface never runs out of frames. */
static bool afp_rx_finished(struct rxp_queue *q)
{
	(void)q;
	return false;
}

static bool afp_tx_idle(struct rxp_queue *q)
{
	struct afp_port *ap = q->priv;

	if (ap->gone)
		return true;
	tx_reclaim(ap);
	return ap->tx_clean == ap->tx_head;
}

/* ---- setup ---- */

/* Accumulates the kernel's counters; reading them resets them in the kernel. */
static void read_kernel_stats(struct afp_port *ap)
{
	struct tpacket_stats_v3 ks;
	socklen_t len = sizeof(ks);

	if (ap->fd < 0 || getsockopt(ap->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &len))
		return;
	ap->st.kernel_drops += ks.tp_drops;
	ap->st.kernel_freezes += ks.tp_freeze_q_cnt;
}

/* Unmaps the rings and closes the socket; the ring cursors start over. */
static void sock_close(struct afp_port *ap)
{
	read_kernel_stats(ap);
	if (ap->map)
		munmap(ap->map, ap->map_len);
	/* Closing the socket also drops its promiscuous-mode membership. */
	if (ap->fd >= 0)
		close(ap->fd);
	ap->fd = -1;
	ap->map = ap->rx_ring = ap->tx_ring = NULL;
	ap->rx_block = ap->rx_left = 0;
	ap->rx_next = NULL;
	ap->tx_head = ap->tx_clean = 0;
	ap->tx_need_kick = ap->tx_blocked = false;
	ap->down_checks = 0;
}

static void afp_close(struct rxp_port *port)
{
	struct afp_dev *dev = port->priv;

	if (!dev)
		return;
	for (unsigned i = 0; i < dev->n_queues; i++) {
		struct afp_port *ap = &dev->q[i];

		read_kernel_stats(ap);
		if (ap->st.kernel_drops || ap->st.rx_oversize || ap->st.rx_truncated ||
		    ap->st.tx_oversize)
			fprintf(stderr, "rxpath: port %s: afpacket dev=%s queue %u: dropped %llu frames with the ring full (kernel), %llu too long, %llu truncated on receive, %llu too long to send\n",
				ap->port_name, ap->dev, i, (unsigned long long)ap->st.kernel_drops,
				(unsigned long long)ap->st.rx_oversize,
				(unsigned long long)ap->st.rx_truncated,
				(unsigned long long)ap->st.tx_oversize);
		/* No pool buffer is held: frames live in the kernel's ring until copied. */
		sock_close(ap);
	}
	free(dev);
	port->priv = NULL;
}

/* Returns -errno after writing "afpacket: STEP: ERROR: CAUSE; FIX" into @err. */
static int step_err(int e, char *err, size_t errlen, const char *step, const char *hint)
{
	snprintf(err, errlen, "afpacket: %s: %s%s%s", step, strerror(e), hint ? ": " : "",
		 hint ? hint : "");
	return -e;
}

static const char *perm_hint(int e)
{
	if (e == EPERM || e == EACCES)
		return "needs CAP_NET_RAW; run as root or `setcap cap_net_raw,cap_net_admin+ep build/rxpath`";
	return NULL;
}

static int parse_onoff(struct rxp_args *args, const char *key, bool *out, char *err,
		       size_t errlen)
{
	const char *v = rxp_args_get(args, key);

	if (!v)
		return 0;
	if (!strcmp(v, "on") || !strcmp(v, "1")) {
		*out = true;
	} else if (!strcmp(v, "off") || !strcmp(v, "0")) {
		*out = false;
	} else {
		snprintf(err, errlen, "%s=%s: expected on or off", key, v);
		return -EINVAL;
	}
	return 0;
}

static int set_int(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val)) ? errno : 0;
}

/* Reads the interface's MAC, MTU and flags. Returns 0 or -errno with @err. */
static int read_iface(struct afp_port *ap, struct rxp_port *port, bool mac_given, char *err,
		      size_t errlen)
{
	uint8_t mac[6];
	uint16_t type;
	int ret;

	ret = rxp_netdev_hwaddr(ap->fd, ap->dev, mac, &type);
	if (ret)
		return step_err(-ret, err, errlen, "SIOCGIFHWADDR", "cannot read the interface's address");
	if (type != ARPHRD_ETHER) {
		snprintf(err, errlen, "afpacket: dev=%s is not an Ethernet interface (link type %u); rxpath routes Ethernet frames only",
			 ap->dev, type);
		return -EINVAL;
	}
	if (!mac_given)
		memcpy(port->mac, mac, 6);
	ret = rxp_netdev_mtu(ap->fd, ap->dev, &port->mtu);
	if (ret)
		return step_err(-ret, err, errlen, "SIOCGIFMTU", "cannot read the interface's MTU");
	if (port->mtu + 18 > ap->max_frame && ap->queue == 0)
		fprintf(stderr, "rxpath: port %s: afpacket dev=%s: MTU %u allows frames longer than the %u-byte maximum frame; those are dropped (use --max-frame %u)\n",
			port->name, ap->dev, port->mtu, ap->max_frame, port->mtu + 18);
	if (ap->queue == 0 && rxp_netdev_is_up(ap->fd, ap->dev) == 0)
		fprintf(stderr, "rxpath: port %s: afpacket dev=%s is down; nothing is received until `ip link set %s up`\n",
			port->name, ap->dev, ap->dev);
	return 0;
}

/* Sets up both rings and maps them. Returns 0 or -errno with @err. */
static int setup_rings(struct afp_port *ap, uint32_t blocks, uint32_t block_size, char *err,
		       size_t errlen)
{
	struct tpacket_req3 rx, tx;
	char what[96];
	int e;

	memset(&rx, 0, sizeof(rx));
	rx.tp_block_size = block_size;
	rx.tp_block_nr = blocks;
	rx.tp_frame_size = AFP_RX_FRAME;
	rx.tp_frame_nr = block_size / AFP_RX_FRAME * blocks;
	rx.tp_retire_blk_tov = AFP_RETIRE_MS;
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_RX_RING, &rx, sizeof(rx))) {
		e = errno;
		snprintf(what, sizeof(what), "setsockopt(PACKET_RX_RING, %u x %u KiB)", blocks,
			 block_size >> 10);
		return step_err(e, err, errlen, what, e == ENOMEM ?
				"not enough kernel memory for the ring; lower blocks= or blocksize=" :
				"the kernel refused the ring geometry; try the defaults");
	}
	/* A TX slot holds the V3 header and the largest frame; slots fill blocks exactly. */
	ap->tx_frame_size = rxp_pow2_roundup((uint32_t)AFP_TX_DATA_OFF + ap->max_frame);
	memset(&tx, 0, sizeof(tx));
	tx.tp_block_size = RXP_MAX(ap->tx_frame_size, AFP_TX_BLOCK);
	tx.tp_frame_size = ap->tx_frame_size;
	if (ap->tx_frames < tx.tp_block_size / tx.tp_frame_size)
		ap->tx_frames = tx.tp_block_size / tx.tp_frame_size;
	tx.tp_frame_nr = ap->tx_frames;
	tx.tp_block_nr = ap->tx_frames / (tx.tp_block_size / tx.tp_frame_size);
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_TX_RING, &tx, sizeof(tx))) {
		e = errno;
		snprintf(what, sizeof(what), "setsockopt(PACKET_TX_RING, %u frames)", ap->tx_frames);
		return step_err(e, err, errlen, what, e == ENOMEM ?
				"not enough kernel memory for the ring; lower txring=" :
				"this kernel lacks TPACKET_V3 TX rings (Linux 4.11 or later needed)");
	}
	ap->tx_max_len = ap->tx_frame_size - (uint32_t)AFP_TX_DATA_OFF;
	ap->rx_block_size = block_size;
	ap->rx_blocks = blocks;
	/* One mapping: the RX ring first, the TX ring right after it. */
	ap->map_len = (size_t)block_size * blocks + (size_t)tx.tp_block_size * tx.tp_block_nr;
	ap->map = mmap(NULL, ap->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       ap->fd, 0);
	if (ap->map == MAP_FAILED) {
		e = errno;
		ap->map = NULL;
		snprintf(what, sizeof(what), "mmap of the rings (%zu KiB)", ap->map_len >> 10);
		return step_err(e, err, errlen, what, e == ENOMEM ?
				"not enough memory; lower blocks=, blocksize= or txring=" :
				"the kernel refused to map the packet rings");
	}
	ap->rx_ring = ap->map;
	ap->tx_ring = ap->map + (size_t)block_size * blocks;
	return 0;
}

/*
 * Puts @ap in its port's fanout group, flows spread by hash. @group is the
 * PACKET_FANOUT argument of the port's group, 0 until its first queue
 * creates it: with an id the kernel picks (UNIQUEID, Linux 4.17), so that
 * no other process's group is ever joined, and leaving out the frames the
 * host sends (IGNORE_OUTGOING, Linux 6.9: in a group, the socket's own
 * PACKET_IGNORE_OUTGOING no longer applies). A kernel takes flags it does
 * not know without a word, so the queues of a group also filter outgoing
 * frames themselves (one compare in a line the copy reads anyway). A kernel
 * without UNIQUEID is given an id made of our pid and the port. Returns 0
 * or an errno.
 */
static int fanout_join(struct afp_port *ap, uint16_t port_id, uint32_t *group)
{
	uint32_t type = PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
	uint32_t arg = *group;
	socklen_t len = sizeof(arg);

	ap->skip_outgoing = true;
	if (arg)
		return setsockopt(ap->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) ? errno : 0;
	arg = (type | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) ||
	    getsockopt(ap->fd, SOL_PACKET, PACKET_FANOUT, &arg, &len)) {
		arg = type << 16 | ((uint32_t)(getpid() * 64 + port_id) & 0xffff);
		if (setsockopt(ap->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)))
			return errno;
	}
	/* the id the group has, for the other queues (which join without UNIQUEID) */
	*group = (arg & 0xffff) | type << 16;
	return 0;
}

/* A socket filter that takes nothing. */
static struct sock_filter drop_all_insn = BPF_STMT(BPF_RET | BPF_K, 0);
static const struct sock_fprog drop_all = { .len = 1, .filter = &drop_all_insn };

/*
 * Opens the packet socket on device @ifindex: rings, options, promiscuous
 * mode, bind. Reads the device's MAC (unless @keep_mac) and MTU.
 * Returns 0 or -errno with @err; the caller closes what is half open.
 */
static int sock_open(struct afp_port *ap, struct rxp_port *port, unsigned ifindex,
		     uint32_t blocks, uint32_t block_size, bool keep_mac, uint32_t *group,
		     char *err, size_t errlen)
{
	bool bypass = ap->want_bypass;
	struct packet_mreq mreq;
	struct sockaddr_ll sll;
	int ret, e;

	ap->skip_outgoing = false;
	/* Protocol 0: nothing is queued to the socket before bind() below, once the rings exist. */
	ap->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (ap->fd < 0) {
		e = errno;
		return step_err(e, err, errlen, "socket(AF_PACKET)", e == EAFNOSUPPORT ?
				"this kernel has no packet sockets (CONFIG_PACKET)" : perm_hint(e));
	}
	if ((e = set_int(ap->fd, SOL_PACKET, PACKET_VERSION, TPACKET_V3)))
		return step_err(e, err, errlen, "setsockopt(PACKET_VERSION, TPACKET_V3)",
				"Linux 3.2 or later is needed");
	/* A malformed TX frame is skipped instead of stopping the ring for good. */
	if ((e = set_int(ap->fd, SOL_PACKET, PACKET_LOSS, 1)))
		return step_err(e, err, errlen, "setsockopt(PACKET_LOSS)", NULL);
	/*
	 * Straight to the driver, past the qdisc: we already batch, and a
	 * datapath prefers a drop to a queue it does not see. Optional.
	 */
	if (bypass && set_int(ap->fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1))
		bypass = false;
	/* Our own transmissions are not received back. Older kernels: filter them in rx_burst. */
	if (set_int(ap->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1))
		ap->skip_outgoing = true;
	ret = setup_rings(ap, blocks, block_size, err, errlen);
	if (ret)
		return ret;
	ret = read_iface(ap, port, keep_mac, err, errlen);
	if (ret)
		return ret;
	/* Room in the socket's send budget for a full TX ring in flight (best effort). */
	if (set_int(ap->fd, SOL_SOCKET, SO_SNDBUFFORCE, (int)(ap->tx_frames * 4096u)))
		set_int(ap->fd, SOL_SOCKET, SO_SNDBUF, (int)(ap->tx_frames * 4096u));

	memset(&mreq, 0, sizeof(mreq));
	mreq.mr_ifindex = (int)ifindex;
	mreq.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq))) {
		e = errno;
		return step_err(e, err, errlen, "setsockopt(PACKET_ADD_MEMBERSHIP, promiscuous)",
				perm_hint(e));
	}
	/*
	 * A queue takes nothing on its own between bind() and joining the
	 * group, where the queues before it already take every frame: a filter
	 * that drops all until then, or those frames would be received twice.
	 */
	if (ap->fanout && setsockopt(ap->fd, SOL_SOCKET, SO_ATTACH_FILTER, &drop_all, sizeof(drop_all))) {
		e = errno;
		return step_err(e, err, errlen, "setsockopt(SO_ATTACH_FILTER)", NULL);
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(ap->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		e = errno;
		return step_err(e, err, errlen, "bind", e == ENODEV ?
				"the interface went away; check `ip link show`" : perm_hint(e));
	}
	/* several queues: one fanout group, frames spread by flow hash */
	if (ap->fanout && (e = fanout_join(ap, port->id, group)))
		return step_err(e, err, errlen, "setsockopt(PACKET_FANOUT, hash)", e == EINVAL ?
				"this kernel lacks PACKET_FANOUT (Linux 3.1 or later); use queues=1" :
				"cannot join the queues' fanout group");
	if (ap->fanout && (e = set_int(ap->fd, SOL_SOCKET, SO_DETACH_FILTER, 0)))
		return step_err(e, err, errlen, "setsockopt(SO_DETACH_FILTER)", NULL);
	ap->qdisc_bypass = bypass;
	ap->ifindex = ifindex;
	return 0;
}

static int afp_open(struct rxp_port *port, struct rxp_args *args, char *err, size_t errlen)
{
	uint32_t blocks = AFP_BLOCKS_DEFAULT, block_size = AFP_BLOCKSIZE_DEFAULT;
	uint32_t txring = AFP_TXRING_DEFAULT, n_queues = 1, group = 0;
	bool bypass = true, mac_given;
	struct afp_dev *adev;
	const char *dev;
	unsigned ifindex;
	int ret, e;

	if ((ret = rxp_args_u32(args, "blocks", 2, 4096, &blocks, err, errlen)) ||
	    (ret = rxp_args_u32(args, "blocksize", 4096, AFP_BLOCKSIZE_MAX, &block_size, err,
				errlen)) ||
	    (ret = rxp_args_u32(args, "txring", 64, 65536, &txring, err, errlen)) ||
	    (ret = rxp_args_u32(args, "queues", 1, RXP_QUEUES_MAX, &n_queues, err, errlen)) ||
	    (ret = parse_onoff(args, "bypass", &bypass, err, errlen)))
		return ret;
	mac_given = rxp_args_get(args, "mac") != NULL;
	if ((ret = rxp_args_mac(args, "mac", port->mac, err, errlen)))
		return ret;
	dev = rxp_args_get(args, "dev");
	if ((ret = rxp_args_check_unused(args, AFP_KEYS, err, errlen)))
		return ret;
	if (!dev || !dev[0]) {
		snprintf(err, errlen, "afpacket: give the interface: afpacket:dev=IFACE (ip link show lists them)");
		return -EINVAL;
	}
	if (strlen(dev) >= IFNAMSIZ) {
		snprintf(err, errlen, "afpacket: dev=%s: interface names have at most %d characters",
			 dev, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (!rxp_is_pow2(block_size) || !rxp_is_pow2(txring)) {
		snprintf(err, errlen, "afpacket: blocksize=%u, txring=%u: both must be powers of two",
			 block_size, txring);
		return -EINVAL;
	}
	if (block_size < RXP_ALIGN_UP(port->pool->max_frame + 256u, 4096u)) {
		snprintf(err, errlen, "afpacket: blocksize=%u cannot hold a %u-byte frame; give at least %u",
			 block_size, port->pool->max_frame,
			 rxp_pow2_roundup(port->pool->max_frame + 256u));
		return -EINVAL;
	}
	ret = rxp_netdev_ifindex(dev);
	if (ret < 0) {
		e = -ret;
		if (e == ENODEV || e == ENXIO)
			snprintf(err, errlen, "afpacket: dev=%s: no such interface in this network namespace (ip link show lists them)",
				 dev);
		else
			step_err(e, err, errlen, "if_nametoindex", NULL);
		return -e;
	}
	ifindex = (unsigned)ret;

	{
		size_t len = RXP_ALIGN_UP(sizeof(*adev) + n_queues * sizeof(adev->q[0]),
					  (size_t)RXP_CACHE_LINE);

		adev = aligned_alloc(RXP_CACHE_LINE, len);
		if (!adev) {
			snprintf(err, errlen, "afpacket: out of memory");
			return -ENOMEM;
		}
		memset(adev, 0, len);
	}
	adev->n_queues = n_queues;
	port->priv = adev;
	for (uint16_t i = 0; i < n_queues; i++) {
		struct afp_port *ap = &adev->q[i];

		ap->fd = -1;
		ap->queue = i;
		ap->fanout = n_queues > 1;
		ap->max_frame = port->pool->max_frame;
		ap->data_off = (uint16_t)port->pool->data_off;
		ap->tx_frames = txring;
		ap->want_bypass = bypass;
		snprintf(ap->dev, sizeof(ap->dev), "%s", dev);
		snprintf(port->dev, sizeof(port->dev), "%s", dev);
		snprintf(ap->port_name, sizeof(ap->port_name), "%s", port->name);
		port->queues[i].priv = ap;
		ret = sock_open(ap, port, ifindex, blocks, block_size, mac_given || i > 0, &group,
				err, errlen);
		if (ret) {
			afp_close(port);
			return ret;
		}
	}
	port->n_queues = (uint16_t)n_queues;
	return 0;
}

/*
 * Sends what waits while kicks fail (ten times a second, not every poll).
 * A device still down after a whole check period is said once; a deleted
 * one goes down before it goes away, and that is said as gone instead.
 */
static int link_check(struct afp_port *ap, char *msg, size_t msglen)
{
	if (rxp_likely(!ap->tx_blocked)) {
		ap->down_checks = 0;
		return RXP_PORT_SAME;
	}
	tx_kick(ap);
	if (!ap->tx_blocked) {
		ap->down_checks = 0;
		return RXP_PORT_SAME;
	}
	if (ap->down_checks >= 2 || ++ap->down_checks < 2)
		return RXP_PORT_SAME;
	snprintf(msg, msglen, "interface %s is down: frames for it wait in its ring; bring it up (ip link set %s up)",
		 ap->dev, ap->dev);
	return RXP_PORT_NOTE;
}

/*
 * A device being unregistered unbinds its packet sockets (their ifindex
 * becomes -1): then the sockets are closed and the port is down. While down,
 * a device of the same name is looked for and the sockets opened on it.
 */
static int afp_check(struct rxp_port *port, char *msg, size_t msglen)
{
	struct afp_dev *dev = port->priv;
	struct afp_port *ap = &dev->q[0];
	char err[RXP_ERR_LEN];
	uint32_t group = 0;	/* the fanout group went with the sockets: a new one */
	unsigned ifindex;
	int ret = 0;

	if (!ap->gone) {
		bool gone = false;

		for (unsigned i = 0; i < dev->n_queues && !gone; i++) {
			struct sockaddr_ll sll;
			socklen_t len = sizeof(sll);

			gone = !getsockname(dev->q[i].fd, (struct sockaddr *)&sll, &len) &&
			       sll.sll_ifindex <= 0;
		}
		if (!gone) {
			for (unsigned i = 0; i < dev->n_queues; i++) {
				ret = link_check(&dev->q[i], msg, msglen);
				if (ret != RXP_PORT_SAME)
					return ret;
			}
			return RXP_PORT_SAME;
		}
		for (unsigned i = 0; i < dev->n_queues; i++) {
			sock_close(&dev->q[i]);
			dev->q[i].gone = true;
		}
		snprintf(msg, msglen, "interface %s is gone (deleted or moved to another namespace)",
			 ap->dev);
		return RXP_PORT_GONE;
	}
	ret = rxp_netdev_ifindex(ap->dev);
	if (ret <= 0 || (unsigned)ret == ap->failed_ifindex)
		return RXP_PORT_SAME;
	ifindex = (unsigned)ret;
	ret = 0;
	/* the port keeps its MAC: the stack and the neighbours know it; promiscuous mode takes it */
	for (unsigned i = 0; i < dev->n_queues && !ret; i++)
		ret = sock_open(&dev->q[i], port, ifindex, dev->q[i].rx_blocks,
				dev->q[i].rx_block_size, true, &group, err, sizeof(err));
	if (ret) {
		for (unsigned i = 0; i < dev->n_queues; i++)
			sock_close(&dev->q[i]);
		ap->failed_ifindex = ifindex;	/* said once; a newer device of the name is tried */
		if (ret == -EPERM)
			snprintf(msg, msglen, "interface %s is back (ifindex %u) but cannot be opened: the process no longer holds CAP_NET_RAW; restart rxpath to use it",
				 ap->dev, ifindex);
		else
			snprintf(msg, msglen, "interface %s is back (ifindex %u) but cannot be opened: %s",
				 ap->dev, ifindex, err);
		return RXP_PORT_NOTE;
	}
	for (unsigned i = 0; i < dev->n_queues; i++)
		dev->q[i].gone = false;
	ap->failed_ifindex = 0;
	snprintf(msg, msglen, "interface %s is back (ifindex %u): reopened, port up with its MAC %02x:%02x:%02x:%02x:%02x:%02x",
		 ap->dev, ifindex, port->mac[0], port->mac[1], port->mac[2], port->mac[3],
		 port->mac[4], port->mac[5]);
	return RXP_PORT_BACK;
}

static unsigned afp_xstats(struct rxp_port *port, struct rxp_xstat *out, unsigned max)
{
	struct rxp_afpacket_stats st;
	unsigned n = 0;

	if (rxp_afpacket_port_stats(port, &st))
		return 0;
	const struct rxp_xstat all[] = {
		{ "kernel_drops", st.kernel_drops, true }, { "kernel_freezes", st.kernel_freezes, false },
		{ "rx_oversize", st.rx_oversize, true }, { "rx_truncated", st.rx_truncated, true },
		{ "rx_csum_partial", st.rx_csum_partial, false }, { "rx_blocks", st.rx_blocks, false },
		{ "rx_bad_frames", st.rx_bad_frames, true },
		{ "tx_oversize", st.tx_oversize, false }, { "tx_kicks", st.tx_kicks, false },
		{ "tx_kick_errors", st.tx_kick_errors, false },
	};

	for (; n < RXP_ARRAY_SIZE(all) && n < max; n++)
		out[n] = all[n];
	return n;
}

/*
 * TPACKET_V3: poll() says POLLIN once a block is the user's, at the latest
 * when its timer retires it. Frames waiting for a kick keep the worker up;
 * a socket whose link is down (kicks fail; the port check retries) would
 * only report its error to poll() again and again: not waited for.
 */
static int afp_wait_fd(struct rxp_queue *q)
{
	const struct afp_port *ap = q->priv;

	if (ap->gone || ap->tx_blocked)
		return RXP_WAIT_NONE;
	return ap->tx_need_kick ? -1 : ap->fd;
}

const struct rxp_port_ops rxp_afpacket_ops = {
	.driver = "afpacket",
	.kernel_dev = true,
	.args_help = AFP_KEYS,
	.open = afp_open,
	.rx_burst = afp_rx_burst,
	.tx_burst = afp_tx_burst,
	.refill = afp_refill,
	.complete = afp_complete,
	.rx_finished = afp_rx_finished,
	.tx_idle = afp_tx_idle,
	.start = NULL,
	.close = afp_close,
	.check = afp_check,
	.xstats = afp_xstats,
	.wait_fd = afp_wait_fd,
};

int rxp_afpacket_port_stats(const struct rxp_port *port, struct rxp_afpacket_stats *st)
{
	struct afp_dev *dev = port->priv;

	if (port->ops != &rxp_afpacket_ops || !dev)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < dev->n_queues; i++) {
		struct afp_port *ap = &dev->q[i];

		read_kernel_stats(ap);
		st->rx_oversize += ap->st.rx_oversize;
		st->rx_truncated += ap->st.rx_truncated;
		st->rx_csum_partial += ap->st.rx_csum_partial;
		st->rx_outgoing += ap->st.rx_outgoing;
		st->rx_blocks += ap->st.rx_blocks;
		st->rx_bad_frames += ap->st.rx_bad_frames;
		st->tx_oversize += ap->st.tx_oversize;
		st->tx_kicks += ap->st.tx_kicks;
		st->tx_kick_errors += ap->st.tx_kick_errors;
		st->kernel_drops += ap->st.kernel_drops;
		st->kernel_freezes += ap->st.kernel_freezes;
	}
	return 0;
}
