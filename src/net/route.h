/* SPDX-License-Identifier: MIT */
/* The router's stages, shared inside src/net. */
#ifndef RXPATH_NET_ROUTE_H
#define RXPATH_NET_ROUTE_H

#include "rxpath/router.h"
#include "stage.h"

#define RXP_PKT_F_LOCAL_OUT 0x08	/* made by the router (reply, error, request) */
#define RXP_PKT_F_L2_MCAST  0x10	/* arrived in a link-layer broadcast/multicast frame */

#define RXP_ICMP_QUOTE_MAX 548	/* RFC 1812 4.3.2.3: the error may be 576 bytes in all */

/* ---- tx.c ---- */

/*
 * Gathers @pkt (Ethernet frame complete, pkt->out_port set) for transmit.
 * @local: the router made it (not a received packet being forwarded).
 */
void rxp_tx_enqueue(struct rxp_stack *st, struct rxp_pkt *pkt, bool local);

/*
 * Writes an Ethernet header (with an 802.1Q tag for a VLAN interface) just
 * in front of the network header at pkt->l3_off, to @dst from @ifp, and
 * makes the frame start there; sets pkt->out_port. Returns false when the
 * headroom is too small.
 */
bool rxp_l2_prepend(struct rxp_pkt *pkt, const struct rxp_l3if *ifp, const uint8_t dst[6],
		    uint16_t ethertype);

/*
 * Returns a fresh buffer laid out for a packet the router makes (network
 * header at l3_off), or NULL, counted in local_out_dropped, when the pool
 * is empty or @l3_len does not fit.
 */
struct rxp_pkt *rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len);

/* ---- stack.c ---- */

/* The host sink for one packet: transport checks, counted by class, consumed. */
void rxp_sink_one(struct rxp_stack *st, struct rxp_pkt *pkt);

/* Counts @pkt, taken by the stack, as delivered under @cls (its frame's bytes too). */
static inline void rxp_count_delivered(struct rxp_stack *st, const struct rxp_pkt *pkt,
				       enum rxp_sink_class cls)
{
	st->stats.delivered[cls]++;
	st->stats.delivered_bytes += pkt->len;
}

/*
 * Splits the IPv4 datagram @pkt (TTL already decremented, DF clear) into
 * fragments that fit @ifidx's MTU (RFC 791 3.2, options copied as their
 * copy bit says) and sends each to @mac there. The original is consumed.
 */
void rxp_ip4_fragment(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx, const uint8_t mac[6]);

/*
 * Splits @pkt, an IPv6 packet the router made (an answer: its header, then
 * the upper layer or a Fragment header), into fragments that fit @ifidx's
 * MTU (RFC 8200 4.5: the source fragments, routers never) and sends each to
 * @mac there (src/net/reply.c). The original is consumed.
 */
void rxp_ip6_fragment_local(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx,
			    const uint8_t mac[6]);

/* ---- reply.c ---- */

/* The way an answer the router makes leaves: the interface, and the MAC when the table knows it. */
struct rxp_reply_way {
	int out;
	bool known;
	uint8_t mac[6];
};

/*
 * Finds the way an answer from @src (NULL: not chosen yet) to @dst goes,
 * for a packet that came in on @in_ifidx: by the route back to @dst when
 * that leaves by another interface whose next hop is known, else out
 * @in_ifidx to the neighbour the table holds for the next hop, if any.
 * Link-local addresses stay on their link. Never resolves or holds; may be
 * called with the neighbour lock held.
 */
void rxp_reply_way(struct rxp_stack *st, uint8_t family, const uint8_t *src, const uint8_t *dst,
		   int in_ifidx, struct rxp_reply_way *way);

/*
 * Sends @pkt, an answer the router made (network header ready, family
 * @family), the way @way says, to @prev_mac (the frame's sender) when the
 * way knows no MAC. Consumes @pkt.
 */
void rxp_reply_send(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family,
		    const struct rxp_reply_way *way, const uint8_t prev_mac[6]);

/* rxp_reply_way() for @pkt's own addresses, then rxp_reply_send(). */
void rxp_reply_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int in_ifidx,
		      const uint8_t prev_mac[6]);

/* ---- local_l4.c ---- */

/*
 * Transport addressed to the router itself (not ICMP): to the port's host
 * path or the sink where something takes it, else answered as a host with
 * nothing listening answers. Consumes @pkt.
 */
void rxp_local_l4(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * True when the UDP or TCP checksum of @pkt verifies: @data_sum is the
 * unfolded sum (rxp_csum_partial) of its @len transport bytes, which may
 * lie in several fragments.
 */
bool rxp_l4_sum_ok(const struct rxp_pkt *pkt, uint32_t len, uint64_t data_sum);

/*
 * Answers transport @pkt to the router (checks passed; its transport header
 * at l4_off, @len bytes of it in all) as a host with nothing listening:
 * Port Unreachable, a reset, or for another protocol Protocol Unreachable
 * (IPv4) or Parameter Problem pointing at offset @nh_at (IPv6). Returns the
 * drop reason the packet is counted under; @pkt is not consumed.
 */
enum rxp_drop_reason rxp_local_l4_answer(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t len,
					 uint32_t nh_at);

/*
 * The header chain of an IPv6 datagram reassembled from @first, its first
 * fragment, walked past the Fragment header as a whole packet's is: options
 * acted on, a routing header with segments left refused. Returns
 * RXP_DROP_MAX with @first's l4_off and l4_proto at the upper layer and
 * *@nh_at at the Next Header byte naming it; else the reason to drop the
 * datagram under (any Parameter Problem it calls for sent, about @first).
 */
enum rxp_drop_reason rxp_ip6_reasm_chain(struct rxp_stack *st, struct rxp_pkt *first,
					 uint32_t *nh_at);

/* ---- reasm.c ---- */

/*
 * Takes a fragment addressed to the router (not multicast, no host path
 * wanting it; IPv6 with l4_off at its Fragment header, after the fixed
 * header or behind the unfragmentable part's extension headers): held until
 * its datagram is complete, then answered as a whole. Consumes @pkt.
 */
void rxp_reasm_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Gives up on the datagrams past their deadline at st->now_ns, or on all of
 * them (@all); with @answer, Time Exceeded goes to the sender of those whose
 * first fragment came. The fragments are dropped under @why. Returns the
 * number of fragments dropped.
 */
unsigned rxp_reasm_expire(struct rxp_stack *st, bool all, bool answer, enum rxp_drop_reason why);

/* ---- arp.c ---- */

/* Handles one ARP packet (pkt->ifidx set): answer, learn, or drop. Consumes @pkt. */
void rxp_arp_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Sends an ARP request for @target (network order) on interface @ifidx:
 * broadcast, or to @mac alone when it is not NULL (a unicast poll of a
 * known neighbour, RFC 1122 2.3.2.1).
 */
void rxp_arp_request(struct rxp_stack *st, int ifidx, uint32_t target, const uint8_t *mac);

/* ---- icmp4.c ---- */

/*
 * Sends an ICMPv4 error about @orig (its IP header at l3_off, as received)
 * back out of the interface it came in on, unless RFC 1812 4.3.2.7 forbids
 * it or the rate limit says no. @rest is the word after the checksum: 0,
 * the next-hop MTU (Fragmentation Needed), the pointer in its top octet
 * (Parameter Problem) or the gateway (Redirect). @orig is not consumed.
 * Returns true when the error went out.
 */
bool rxp_icmp4_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t rest);

/*
 * The same about a packet addressed to the router itself, sent from the
 * address it was sent to, as a host answers (traceroute to the router
 * expects its last reply from there).
 */
void rxp_icmp4_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code);

/* Handles ICMP addressed to the router (echo). Consumes @pkt. */
void rxp_icmp4_local(struct rxp_stack *st, struct rxp_pkt *pkt);

/* ---- ip6 (nd.c, icmp6.c) ---- */

/*
 * Sends a Neighbor Solicitation for @target on interface @ifidx: to its
 * solicited-node group, or to @target itself at @mac when @mac is not NULL
 * (a unicast probe of a known neighbour, RFC 4861 7.3.3).
 */
void rxp_nd_solicit(struct rxp_stack *st, int ifidx, const uint8_t target[16], const uint8_t *mac);

/* ---- ra.c: Router Advertisements on the interfaces set `ra on` ---- */

/* Sends the unsolicited ones that are due. The timer owner calls it, with the neighbour lock held. */
void rxp_ra_tick(struct rxp_stack *st);

/* A valid Router Solicitation came in on @ifidx: an advertisement soon, if it sends them. */
void rxp_ra_solicited(struct rxp_stack *st, int ifidx);

/*
 * RFC 4861 8.2: @orig, a packet being forwarded out of the interface it
 * came in on toward next hop @next (its gateway, or its destination when
 * on-link), may earn its source a Redirect. Sends one when the rules allow:
 * see nd.c. @orig is not consumed nor changed.
 */
void rxp_nd_maybe_redirect(struct rxp_stack *st, struct rxp_pkt *orig, const uint8_t next[16]);

/* Sends an ICMPv6 error about @orig back where it came from (RFC 4443 2.4 rules). */
void rxp_icmp6_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t param);

/* The same about a packet to one of the router's unicast addresses, sent from it (RFC 4443 2.2). */
void rxp_icmp6_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
			   uint32_t param);

/* Routes one validated IPv6 packet: local delivery (echo, ND), forward, or drop. Consumes @pkt. */
void rxp_ip6_route(struct rxp_stack *st, struct rxp_pkt *pkt);

/* The same for a vector of validated IPv6 packets. */
void rxp_ip6_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n);

/* Handles ICMPv6 to the router (its header at l4_off). Consumes @pkt. */
void rxp_icmp6_local(struct rxp_stack *st, struct rxp_pkt *pkt);

/* Handles one Neighbor Discovery message (types 133-137, checksum verified). Consumes @pkt. */
void rxp_nd_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Answers an MLD query (@msg, @len bytes, checksum verified) that came in
 * on @pkt's interface with a report of the router's groups there
 * (src/net/mld.c). @pkt stays the caller's.
 */
void rxp_mld_query(struct rxp_stack *st, const struct rxp_pkt *pkt, const uint8_t *msg,
		   uint32_t len);

/*
 * Returns the ICMPv6 checksum of the @len-byte message at @icmp under the
 * IPv6 header at @ip: the value to store when the field is zero, 0 when a
 * received message verifies.
 */
uint16_t rxp_icmp6_csum(const uint8_t *ip, const uint8_t *icmp, uint32_t len);

/*
 * Picks the source of a message the router sends to @peer out of @ifp
 * (RFC 4443 2.2): the link-local address for a link-local peer; else a
 * global address of @ifp, one on the peer's prefix first; else, with
 * @other_ifs, any global address of the router; else the link-local one.
 */
void rxp_icmp6_source(const struct rxp_router *r, const struct rxp_l3if *ifp, const uint8_t *peer,
		      bool other_ifs, uint8_t out[16]);

/*
 * Writes an IPv6 header at @ip for the @len-byte ICMPv6 message that
 * follows it, and that message's checksum.
 */
void rxp_icmp6_finish(uint8_t *ip, const uint8_t src[16], const uint8_t dst[16], uint8_t hop_limit,
		      uint32_t len);

/* Returns true when @addr is the Subnet-Router anycast address of one of @ifp's prefixes. */
bool rxp_l3if_anycast6(const struct rxp_l3if *ifp, const uint8_t addr[16]);

/* The groups of rxp_l3if_groups6() at most: two all-routers, two per address */
#define RXP_IP6_GROUPS_MAX (2 + 2 * RXP_IF_ADDRS)

/*
 * Writes to @groups the IPv6 groups the router listens to on @ifp besides
 * all-nodes (RFC 4291 2.7.1, 2.8, RFC 4861 7.2.1): all-routers of link and
 * site scope, and the solicited-node group of each of its addresses and
 * Subnet-Router anycast addresses, each once. Returns how many.
 */
unsigned rxp_l3if_groups6(const struct rxp_l3if *ifp, uint8_t (*groups)[16]);

/* True when the router listens to @group on @ifp: all-nodes, or one of rxp_l3if_groups6(). */
bool rxp_l3if_listens6(const struct rxp_l3if *ifp, const uint8_t group[16]);

/* ff02::1:ffXX:XXXX, the solicited-node group of @addr (RFC 4291 2.7.1) */
static inline void rxp_ip6_solicited_node(uint8_t group[16], const uint8_t addr[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	memcpy(group, pfx, sizeof(pfx));
	memcpy(group + 13, addr + 13, 3);
}

/* RFC 2464 7: IPv6 multicast goes to Ethernet 33:33 and the group's low 32 bits. */
static inline void rxp_ip6_mcast_mac(uint8_t mac[6], const uint8_t group[16])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, group + 12, 4);
}

/* Returns true when @addr is one of @ifp's IPv6 addresses. */
static inline bool rxp_l3if_has_addr6(const struct rxp_l3if *ifp, const uint8_t addr[16])
{
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		if (!memcmp(ifp->addr6[i], addr, 16))
			return true;
	return false;
}

/* Returns true when @addr is one of the router's own IPv6 addresses (on any interface). */
static inline bool rxp_router_has_addr6(const struct rxp_router *r, const uint8_t addr[16])
{
	for (unsigned f = 0; f < r->n_ifs; f++)
		if (rxp_l3if_has_addr6(&r->ifs[f], addr))
			return true;
	return false;
}

/* ---- ip4_opt.c ---- */

/*
 * For a validated IPv4 packet with options (IHL > 5): true when they are
 * well formed. Else answers Parameter Problem pointing at the octet in
 * error, sets the drop reason and returns false; @pkt is not consumed.
 */
bool rxp_ip4_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Writes the options a non-first fragment carries (those with the copied
 * flag, RFC 791 3.1) of the @len bytes at @opt into @out, padded to 32
 * bits. Returns their length.
 */
unsigned rxp_ip4_copied_options(const uint8_t *opt, unsigned len, uint8_t *out);

/* True when the header @ip carries a Loose or Strict Source Route option. */
bool rxp_ip4_source_routed(const uint8_t *ip);

/*
 * Whether the options of @pkt, an echo request to the router (options
 * checked), can go back in its reply. False with the drop reason set (the
 * caller drops it) for a full Timestamp whose overflow count would wrap
 * (RFC 791 calls it in error; Parameter Problem sent), and for a completed
 * source route whose way back would start at one of the router's
 * addresses, a broadcast, 0/8, 127/8 or a class D or E address: the sender
 * wrote that address, and the reply is not sent to whatever it names.
 */
bool rxp_ip4_echo_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * The options of the router's echo reply @ip (rxp_ip4_echo_options_ok()
 * said yes, addresses already swapped), as RFC 1812 4.3.3.6 and RFC 1122 3.2.2.6 have them: its
 * source address and the time go into Record Route and Timestamp where they
 * have room (the recorded route is the round trip's), and a source route
 * the request came by is reversed for the way back, its last hop becoming
 * the reply's destination. The caller recomputes the header checksum.
 */
void rxp_ip4_echo_options(uint8_t *ip);

/*
 * A packet addressed to the router (options checked) whose Loose or Strict
 * Source Route option has addresses left goes on to the next of them (RFC
 * 791 3.1, as RFC 1812 has routers do): the router records its address on
 * the way out in the route, makes that next address the destination and
 * routes the packet again. Returns true when it took @pkt that way, or
 * dropped it: no route to the next address, or for a strict route one not
 * on a connected network (answered with Destination Unreachable 5), or `ip
 * source-route off` (quietly, the completed routes that end here included).
 * False when there is no such option or its route is complete: the packet
 * is the router's own.
 */
bool rxp_ip4_source_route(struct rxp_stack *st, struct rxp_pkt *pkt);

/* ---- ip4_fwd.c ---- */

/* Routes one validated IPv4 packet: local delivery, forward, or drop. Consumes @pkt. */
void rxp_ip4_route(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * The same for a vector, with one bulk FIB lookup for all of it; @dst holds
 * each packet's destination address in host order.
 */
void rxp_ip4_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, const uint32_t *dst,
			  uint16_t n);

/* Routes @pkt whose FIB lookup gave next hop @nh (RXP_LPM_NO_ROUTE: none). */
void rxp_ip4_route_nh(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh);

/* ---- resolve.c ---- */

/*
 * Several workers share the neighbour table: its slow paths take the
 * router's lock. A worker may take it again while it holds it (an error
 * about a held packet looks up where to send it): only the outermost
 * takes and gives it.
 */
static inline void rxp_neigh_lock(struct rxp_stack *st)
{
	if (st->router->shared && st->neigh_lock_depth++ == 0)
		pthread_spin_lock(&st->router->neigh_lock);
}

static inline void rxp_neigh_unlock(struct rxp_stack *st)
{
	if (st->router->shared && --st->neigh_lock_depth == 0)
		pthread_spin_unlock(&st->router->neigh_lock);
}

/*
 * Sends @pkt (network header at l3_off, ready to go) to the neighbour
 * @next (family 4 or 6, network order) on @ifidx: now if it is known, held
 * while it resolves (a request goes out), dropped if resolution failed.
 */
void rxp_neigh_output(struct rxp_stack *st, struct rxp_pkt *pkt, int ifidx, uint8_t family,
		      const uint8_t *next);

/*
 * Copies to @mac the MAC the neighbour table holds for @next on @ifidx when
 * it holds a usable one (the worker's cache first). Returns whether it did.
 */
bool rxp_neigh_known(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *next,
		     uint8_t mac[6]);

/*
 * The same for a packet going via gateway next hop @nh: its neighbour is
 * remembered per next hop, so the common case is one comparison.
 */
void rxp_neigh_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh);

/* Gathers a forwarded packet for transmit on pkt->out_port (fast path of rxp_tx_enqueue). */
static inline void rxp_tx_forward(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	unsigned port = pkt->out_port;
	struct rxp_txv *v = &st->txv[port];

	if (rxp_unlikely(v->n == RXP_TXV_MAX)) {
		rxp_tx_enqueue(st, pkt, false);
		return;
	}
	v->pkts[v->n++] = pkt;
	st->tx_pending |= 1ull << port;
	st->stats.forwarded++;
}

/*
 * Writes the cached Ethernet header in front of the network header and
 * gathers the packet for transmit. Received frames always have room: the
 * 18 bytes before the network header are in the buffer's headroom. Exactly
 * the header is written, so an untagged frame touches no line before it.
 */
static inline void rxp_adj_output(struct rxp_stack *st, struct rxp_pkt *pkt,
				  const struct rxp_adj *adj)
{
	unsigned l3 = pkt->data_off + pkt->l3_off;

	if (rxp_likely(adj->hlen == RXP_ETH_HLEN))
		memcpy(rxp_pkt_buf(pkt) + l3 - RXP_ETH_HLEN,
		       adj->hdr + sizeof(adj->hdr) - RXP_ETH_HLEN, RXP_ETH_HLEN);
	else
		memcpy(rxp_pkt_buf(pkt) + l3 - sizeof(adj->hdr), adj->hdr, sizeof(adj->hdr));
	pkt->data_off = (uint16_t)(l3 - adj->hlen);
	pkt->l3_off = adj->hlen;
	pkt->len = (uint16_t)(adj->hlen + pkt->l3_len);
	pkt->out_port = adj->port;
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_LOCAL_OUT))
		rxp_tx_enqueue(st, pkt, true);
	else
		rxp_tx_forward(st, pkt);
}

/*
 * For the vector fast paths: the TX vector of @adj's port, looked up only
 * when the port changes (*@v and *@v_port carry it from packet to packet),
 * or NULL when that vector is full and the packet must take the full path.
 */
static rxp_always_inline struct rxp_txv *rxp_fast_txv(struct rxp_stack *st,
						      const struct rxp_adj *adj,
						      struct rxp_txv **v, unsigned *v_port)
{
	if (adj->port != *v_port) {
		*v = &st->txv[adj->port];
		*v_port = adj->port;
	}
	return rxp_likely((*v)->n < RXP_TXV_MAX) ? *v : NULL;
}

/*
 * rxp_adj_output() then rxp_tx_forward() for a received packet and an
 * untagged adjacency, with the network header at @l3 and room on @v, the
 * adjacency port's vector. The caller counts it forwarded.
 */
static rxp_always_inline void rxp_fast_emit(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t *l3,
					    const struct rxp_adj *adj, struct rxp_txv *v)
{
	uint16_t l3_len = pkt->l3_len;

	memcpy(l3 - RXP_ETH_HLEN, adj->hdr + sizeof(adj->hdr) - RXP_ETH_HLEN, RXP_ETH_HLEN);
	pkt->data_off = (uint16_t)(l3 - RXP_ETH_HLEN - rxp_pkt_buf(pkt));
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->len = (uint16_t)(RXP_ETH_HLEN + l3_len);
	pkt->out_port = adj->port;
	v->pkts[v->n++] = pkt;
	st->tx_pending |= 1ull << adj->port;
}

/* The fast path of rxp_neigh_output_via, inline: a cached adjacency. */
static inline void rxp_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	const struct rxp_adj *adj = &st->adj[nh];

	if (rxp_likely(adj->neigh && adj->gen == rxp_neigh_gen(&st->router->neigh)))
		rxp_adj_output(st, pkt, adj);
	else
		rxp_neigh_output_via(st, pkt, nh);
}

/*
 * Records what a neighbour said (@mac for @addr on @ifidx); with @create, a
 * new entry is made when there is none. Releases packets held for it. Only
 * an answer to the router's own request (@confirmed: an ARP reply, a
 * solicited Neighbor Advertisement) renews a known entry's lifetime; what a
 * neighbour says unasked (a request, an unsolicited advertisement) updates
 * its MAC and leaves the lifetime as it was (RFC 4861 7.2.3, 7.2.5, 7.3.1).
 */
void rxp_neigh_learn(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     const uint8_t mac[6], bool create, bool confirmed);

/*
 * What a Neighbor Advertisement for @addr says (RFC 4861 7.2.5): learned for
 * an incomplete entry, with Override, or when the MAC is the same; a
 * @solicited one confirms the entry.
 */
void rxp_neigh_learn_advert(struct rxp_stack *st, int ifidx, const uint8_t *addr,
			    const uint8_t mac[6], bool override, bool solicited);

/*
 * A solicited Neighbor Advertisement for @addr without a link-layer address
 * (as Linux answers a unicast solicitation): it confirms a known entry, as
 * RFC 4861 7.2.5 says, and changes nothing else.
 */
void rxp_neigh_confirm(struct rxp_stack *st, int ifidx, const uint8_t *addr);

/*
 * Drops @pkt under @reason, counted against the port it came in on; a
 * packet the router made itself (a fragment, a reply) counts as lost output.
 */
static inline void rxp_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_LOCAL_OUT)) {
		st->stats.local_out_dropped++;
		rxp_pool_free(st->cache, pkt);
		return;
	}
	rxp_stack_drop(st, pkt, reason);
}

static inline uint32_t rxp_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* True when the first @plen bits of @a and @b are the same. */
static inline bool rxp_prefix_eq(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	return !memcmp(a, b, bytes) &&
	       (!bits || !((a[bytes] ^ b[bytes]) & (uint8_t)(0xff00u >> bits)));
}

/* True for an IPv6 link-local address, fe80::/10 (RFC 4291 2.5.6). */
static inline bool rxp_ip6_is_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

#endif
