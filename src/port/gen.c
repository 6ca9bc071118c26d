/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rxpath/csum.h"
#include "gen.h"
#include "rxpath/port.h"
#include "core/rss.h"
#include "rxpath/proto.h"

#define SCHED_MIN 4096u
#define SCHED_MAX FLOWS_MAX	/* every flow gets its turn: a million-flow bench is a million flows */
#define FLOWS_MAX (1u << 20)
#define PCAP_FRAMES_MAX 1000000u
#define BAD_FRAME_SIZE 128u	/* malformed frames: 124 bytes, 128 with the VLAN tag */

static const char *const bad_names[RXP_GEN_BAD_KINDS] = {
	[RXP_GEN_BAD_ETH_TRUNCATED] = "eth_truncated",
	[RXP_GEN_BAD_NOT_FOR_US] = "eth_not_for_us",
	[RXP_GEN_BAD_ETHERTYPE] = "eth_unknown_type",
	[RXP_GEN_BAD_VLAN] = "vlan_unknown",
	[RXP_GEN_BAD_IP4_TRUNCATED] = "ip4_truncated",
	[RXP_GEN_BAD_IP4_VERSION] = "ip4_bad_version",
	[RXP_GEN_BAD_IP4_IHL] = "ip4_bad_ihl",
	[RXP_GEN_BAD_IP4_CSUM] = "ip4_bad_checksum",
	[RXP_GEN_BAD_IP4_LEN] = "ip4_bad_length",
	[RXP_GEN_BAD_IP6_TRUNCATED] = "ip6_truncated",
	[RXP_GEN_BAD_IP6_VERSION] = "ip6_bad_version",
	[RXP_GEN_BAD_IP6_LEN] = "ip6_bad_length",
	[RXP_GEN_BAD_L4_TRUNCATED] = "l4_truncated",
	[RXP_GEN_BAD_UDP_LEN] = "udp_bad_length",
	[RXP_GEN_BAD_TCP_OFFSET] = "tcp_bad_offset",
};

const char *rxp_gen_bad_name(enum rxp_gen_bad kind)
{
	return (unsigned)kind < RXP_GEN_BAD_KINDS ? bad_names[kind] : "?";
}

void rxp_gen_config_default(struct rxp_gen_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->protos = RXP_GEN_UDP4;
	cfg->frame_size = 64;
	cfg->flows = 256;
	/* RFC 2544 benchmarking ranges and the RFC 3849 documentation prefix */
	cfg->src4 = 0xc6120000;	/* 198.18.0.0/16 */
	cfg->src4_len = 16;
	cfg->dst4 = 0xc6130000;	/* 198.19.0.0/16 */
	cfg->dst4_len = 16;
	inet_pton(AF_INET6, "2001:db8:1::", cfg->src6);
	cfg->src6_len = 64;
	inet_pton(AF_INET6, "2001:db8:2::", cfg->dst6);
	cfg->dst6_len = 64;
	cfg->loops = 1;
	cfg->src_mac[0] = 0x02;
	cfg->src_mac[1] = 0xee;
	cfg->src_mac[5] = 0x01;
	cfg->max_frame = 1518;
}

static int parse_prefix(struct rxp_args *args, const char *key, int af, void *addr,
			uint8_t *plen, char *err, size_t errlen)
{
	const char *v = rxp_args_get(args, key);
	char buf[64];
	const char *slash;
	uint64_t len;
	unsigned max = af == AF_INET ? 32 : 128;

	if (!v)
		return 0;
	slash = strchr(v, '/');
	if (!slash || (size_t)(slash - v) >= sizeof(buf))
		goto bad;
	memcpy(buf, v, (size_t)(slash - v));
	buf[slash - v] = '\0';
	if (inet_pton(af, buf, addr) != 1 || rxp_parse_u64(slash + 1, 0, max, &len))
		goto bad;
	*plen = (uint8_t)len;
	if (af == AF_INET)
		*(uint32_t *)addr = ntohl(*(uint32_t *)addr);
	return 0;
bad:
	snprintf(err, errlen, "%s=%s: expected an %s prefix like %s", key, v,
		 af == AF_INET ? "IPv4" : "IPv6", af == AF_INET ? "198.18.0.0/16" : "2001:db8::/64");
	return -EINVAL;
}

static int parse_protos(const char *v, uint32_t *out)
{
	static const struct { const char *name; uint32_t bit; } names[] = {
		{ "udp4", RXP_GEN_UDP4 }, { "tcp4", RXP_GEN_TCP4 },
		{ "udp6", RXP_GEN_UDP6 }, { "tcp6", RXP_GEN_TCP6 },
	};
	uint32_t bits = 0;

	while (*v) {
		size_t len = strcspn(v, "+");
		bool found = false;

		for (size_t i = 0; i < RXP_ARRAY_SIZE(names); i++) {
			if (strlen(names[i].name) == len && !strncmp(v, names[i].name, len)) {
				bits |= names[i].bit;
				found = true;
			}
		}
		if (!found)
			return -EINVAL;
		v += len;
		if (*v == '+')
			v++;
	}
	if (!bits)
		return -EINVAL;
	*out = bits;
	return 0;
}

int rxp_gen_config_parse(struct rxp_gen_config *cfg, struct rxp_args *args, char *err,
			 size_t errlen)
{
	const char *v;
	uint64_t count;

	if ((v = rxp_args_get(args, "proto")) && parse_protos(v, &cfg->protos)) {
		snprintf(err, errlen, "proto=%s: expected udp4, tcp4, udp6, tcp6 or a mix like udp4+tcp6", v);
		return -EINVAL;
	}
	if (rxp_args_u32(args, "size", 64, cfg->max_frame + RXP_ETH_FCS_LEN, &cfg->frame_size, err, errlen) ||
	    rxp_args_u32(args, "flows", 1, FLOWS_MAX, &cfg->flows, err, errlen) ||
	    rxp_args_double(args, "bad", 0, 100, &cfg->bad_pct, err, errlen) ||
	    rxp_args_u32(args, "loop", 0, UINT32_MAX, &cfg->loops, err, errlen) ||
	    parse_prefix(args, "src4", AF_INET, &cfg->src4, &cfg->src4_len, err, errlen) ||
	    parse_prefix(args, "dst4", AF_INET, &cfg->dst4, &cfg->dst4_len, err, errlen) ||
	    parse_prefix(args, "src6", AF_INET6, cfg->src6, &cfg->src6_len, err, errlen) ||
	    parse_prefix(args, "dst6", AF_INET6, cfg->dst6, &cfg->dst6_len, err, errlen))
		return -EINVAL;
	if ((v = rxp_args_get(args, "count"))) {
		if (rxp_parse_u64(v, 0, UINT64_MAX, &count)) {
			snprintf(err, errlen, "count=%s: expected a whole number of frames (0 = no end)", v);
			return -EINVAL;
		}
		cfg->count = count;
	}
	if ((v = rxp_args_get(args, "pcap")))
		snprintf(cfg->pcap, sizeof(cfg->pcap), "%s", v);
	return 0;
}

/* Host address number @i within prefix @base/@len (wraps inside the prefix). */
/*
 * Host number @i within prefix @base/@len. The numbers are scattered over
 * the prefix (multiplying by an odd constant permutes them) so that the
 * flows of a wide prefix reach many different routes, not one /24; the
 * all-zeros and all-ones host parts are avoided.
 */
static uint32_t host4(uint32_t base, uint8_t len, uint32_t i)
{
	uint32_t span_mask = len >= 32 ? 0 : (uint32_t)(0xffffffffu >> len);
	uint32_t h = ((i + 1) * 2654435761u) & span_mask;

	if (span_mask > 2 && (h == 0 || h == span_mask))
		h ^= 1;
	return (base & ~span_mask) | h;
}

static void host6(uint8_t out[16], const uint8_t base[16], uint8_t len, uint32_t i)
{
	uint32_t v = i + 1;

	memcpy(out, base, 16);
	/* vary the low 32 bits, inside the prefix */
	for (int b = 0; b < 4; b++) {
		int byte = 15 - b;

		if (byte * 8 >= len) {
			out[byte] = (uint8_t)v;
		}
		v >>= 8;
	}
}

static uint16_t l4_csum4(const struct rxp_ip4_hdr *ip, const void *l4, uint16_t l4_len)
{
	uint64_t sum = rxp_csum_pseudo4(ip->src, ip->dst, ip->proto, l4_len);

	return rxp_csum_fold(rxp_csum_partial(l4, l4_len, sum));
}

static uint16_t l4_csum6(const struct rxp_ip6_hdr *ip6, const void *l4, uint16_t l4_len)
{
	uint64_t sum = rxp_csum_pseudo6(ip6->src, ip6->dst, ip6->next_hdr, l4_len);

	return rxp_csum_fold(rxp_csum_partial(l4, l4_len, sum));
}

/* Writes the transport header and payload; returns its length. */
static void build_l4(uint8_t *l4, uint16_t l4_len, bool tcp, uint32_t flow)
{
	for (uint16_t i = 0; i < l4_len; i++)
		l4[i] = (uint8_t)(i * 7 + flow);
	if (tcp) {
		struct rxp_tcp_hdr *th = (struct rxp_tcp_hdr *)l4;

		th->sport = htons((uint16_t)(1024 + flow % 60000));
		th->dport = htons(5201);
		th->seq = htonl(flow * 1000u);
		th->ack = 0;
		th->doff_rsvd = (RXP_TCP_HLEN / 4) << 4;
		th->flags = 0x18;	/* PSH|ACK */
		th->window = htons(65535);
		th->csum = 0;
		th->urg = 0;
	} else {
		struct rxp_udp_hdr *uh = (struct rxp_udp_hdr *)l4;

		uh->sport = htons((uint16_t)(1024 + flow % 60000));
		uh->dport = htons(9);	/* discard */
		uh->len = htons(l4_len);
		uh->csum = 0;
	}
}

/* Returns the length of a good @proto frame: the frame size, or more when its headers need it. */
static uint32_t frame_len(const struct rxp_gen_config *cfg, uint32_t proto)
{
	bool tcp = proto == RXP_GEN_TCP4 || proto == RXP_GEN_TCP6;
	bool v6 = proto == RXP_GEN_UDP6 || proto == RXP_GEN_TCP6;
	uint32_t headers = RXP_ETH_HLEN + (v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN) +
			   (tcp ? RXP_TCP_HLEN : RXP_UDP_HLEN);

	return RXP_MAX(cfg->frame_size - RXP_ETH_FCS_LEN, headers);
}

/* Builds one good frame for @flow. Returns its length. */
static uint16_t build_frame(uint8_t *f, const struct rxp_gen_config *cfg, uint32_t proto,
			    uint32_t flow)
{
	struct rxp_eth_hdr *eth = (struct rxp_eth_hdr *)f;
	bool tcp = proto == RXP_GEN_TCP4 || proto == RXP_GEN_TCP6;
	bool v6 = proto == RXP_GEN_UDP6 || proto == RXP_GEN_TCP6;
	uint16_t l3_hlen = v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN;
	uint32_t len = frame_len(cfg, proto);
	uint16_t l4_len;

	l4_len = (uint16_t)(len - RXP_ETH_HLEN - l3_hlen);
	memcpy(eth->dst, cfg->dst_mac, 6);
	memcpy(eth->src, cfg->src_mac, 6);
	if (v6) {
		struct rxp_ip6_hdr *ip6 = (struct rxp_ip6_hdr *)(f + RXP_ETH_HLEN);
		uint8_t *l4 = (uint8_t *)(ip6 + 1);

		eth->type = htons(RXP_ETHERTYPE_IP6);
		ip6->ver_tc_flow = htonl(6u << 28 | (flow & 0xfffff));
		ip6->payload_len = htons(l4_len);
		ip6->next_hdr = tcp ? RXP_IPPROTO_TCP : RXP_IPPROTO_UDP;
		ip6->hop_limit = 64;
		host6(ip6->src, cfg->src6, cfg->src6_len, flow);
		host6(ip6->dst, cfg->dst6, cfg->dst6_len, flow + 0x5bd1e995u);
		build_l4(l4, l4_len, tcp, flow);
		if (tcp)
			((struct rxp_tcp_hdr *)l4)->csum = l4_csum6(ip6, l4, l4_len);
		else
			((struct rxp_udp_hdr *)l4)->csum = l4_csum6(ip6, l4, l4_len);
	} else {
		struct rxp_ip4_hdr *ip = (struct rxp_ip4_hdr *)(f + RXP_ETH_HLEN);
		uint8_t *l4 = (uint8_t *)(ip + 1);

		eth->type = htons(RXP_ETHERTYPE_IP4);
		ip->ver_ihl = 0x45;
		ip->tos = 0;
		ip->tot_len = htons((uint16_t)(RXP_IP4_HLEN + l4_len));
		ip->id = htons((uint16_t)flow);
		ip->frag_off = htons(RXP_IP4_DF);
		ip->ttl = 64;
		ip->proto = tcp ? RXP_IPPROTO_TCP : RXP_IPPROTO_UDP;
		ip->src = htonl(host4(cfg->src4, cfg->src4_len, flow));
		ip->dst = htonl(host4(cfg->dst4, cfg->dst4_len, flow + 0x5bd1e995u));
		ip->csum = 0;
		ip->csum = rxp_csum(ip, RXP_IP4_HLEN);
		build_l4(l4, l4_len, tcp, flow);
		if (tcp)
			((struct rxp_tcp_hdr *)l4)->csum = l4_csum4(ip, l4, l4_len);
		else
			((struct rxp_udp_hdr *)l4)->csum = l4_csum4(ip, l4, l4_len);
	}
	return (uint16_t)len;
}

static void fix_ip4_csum(uint8_t *f)
{
	struct rxp_ip4_hdr *ip = (struct rxp_ip4_hdr *)(f + RXP_ETH_HLEN);

	ip->csum = 0;
	ip->csum = rxp_csum(ip, RXP_IP4_HLEN);
}

/* Builds a malformed frame of @kind. Returns its length. */
static uint16_t build_bad(uint8_t *f, const struct rxp_gen_config *cfg, enum rxp_gen_bad kind)
{
	struct rxp_gen_config c = *cfg;
	struct rxp_eth_hdr *eth = (struct rxp_eth_hdr *)f;
	struct rxp_ip4_hdr *ip = (struct rxp_ip4_hdr *)(f + RXP_ETH_HLEN);
	struct rxp_ip6_hdr *ip6 = (struct rxp_ip6_hdr *)(f + RXP_ETH_HLEN);
	uint16_t len;

	c.frame_size = BAD_FRAME_SIZE;	/* room for every header below */
	switch (kind) {
	case RXP_GEN_BAD_ETH_TRUNCATED:
		build_frame(f, &c, RXP_GEN_UDP4, 0);
		return 10;
	case RXP_GEN_BAD_NOT_FOR_US:
		len = build_frame(f, &c, RXP_GEN_UDP4, 1);
		eth->dst[0] = 0x02;
		eth->dst[5] ^= 0x5a;
		return len;
	case RXP_GEN_BAD_ETHERTYPE:
		len = build_frame(f, &c, RXP_GEN_UDP4, 2);
		eth->type = htons(0x88b5);	/* IEEE local experimental */
		return len;
	case RXP_GEN_BAD_VLAN: {
		len = build_frame(f + RXP_VLAN_HLEN, &c, RXP_GEN_UDP4, 3);
		memmove(f, f + RXP_VLAN_HLEN, 12);
		struct rxp_vlan_hdr *vh = (struct rxp_vlan_hdr *)(f + 12 + 2);

		eth->type = htons(RXP_ETHERTYPE_VLAN);
		vh->tci = htons(3999);
		return (uint16_t)(len + RXP_VLAN_HLEN);
	}
	case RXP_GEN_BAD_IP4_TRUNCATED:
		build_frame(f, &c, RXP_GEN_UDP4, 4);
		return RXP_ETH_HLEN + 12;
	case RXP_GEN_BAD_IP4_VERSION:
		len = build_frame(f, &c, RXP_GEN_UDP4, 5);
		ip->ver_ihl = 0x55;
		fix_ip4_csum(f);
		return len;
	case RXP_GEN_BAD_IP4_IHL:
		len = build_frame(f, &c, RXP_GEN_UDP4, 6);
		ip->ver_ihl = 0x44;
		fix_ip4_csum(f);
		return len;
	case RXP_GEN_BAD_IP4_CSUM:
		len = build_frame(f, &c, RXP_GEN_UDP4, 7);
		ip->csum ^= htons(0x1234);
		return len;
	case RXP_GEN_BAD_IP4_LEN:
		len = build_frame(f, &c, RXP_GEN_UDP4, 8);
		ip->tot_len = htons((uint16_t)(ntohs(ip->tot_len) + 100));
		fix_ip4_csum(f);
		return len;
	case RXP_GEN_BAD_IP6_TRUNCATED:
		build_frame(f, &c, RXP_GEN_UDP6, 9);
		return RXP_ETH_HLEN + 30;
	case RXP_GEN_BAD_IP6_VERSION:
		len = build_frame(f, &c, RXP_GEN_UDP6, 10);
		ip6->ver_tc_flow = htonl(4u << 28);
		return len;
	case RXP_GEN_BAD_IP6_LEN:
		len = build_frame(f, &c, RXP_GEN_UDP6, 11);
		ip6->payload_len = htons((uint16_t)(ntohs(ip6->payload_len) + 100));
		return len;
	case RXP_GEN_BAD_L4_TRUNCATED:
		/* an IPv4 packet that says TCP but ends before the TCP header does */
		build_frame(f, &c, RXP_GEN_TCP4, 12);
		ip->tot_len = htons(RXP_IP4_HLEN + 10);
		fix_ip4_csum(f);
		return RXP_ETH_HLEN + RXP_IP4_HLEN + 10;
	case RXP_GEN_BAD_UDP_LEN:
		len = build_frame(f, &c, RXP_GEN_UDP4, 13);
		((struct rxp_udp_hdr *)(ip + 1))->len = htons(4);
		return len;
	case RXP_GEN_BAD_TCP_OFFSET:
		len = build_frame(f, &c, RXP_GEN_TCP6, 14);
		((struct rxp_tcp_hdr *)(ip6 + 1))->doff_rsvd = 3 << 4;
		return len;
	case RXP_GEN_BAD_KINDS:
		break;
	}
	return 0;
}

static int load_pcap(struct rxp_gen *gen, const struct rxp_gen_config *cfg, char *err,
		     size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint32_t cap = 1024, n = 0;
	pcap_t *pc;
	int ret;

	pc = pcap_open_offline(cfg->pcap, perr);
	if (!pc) {
		snprintf(err, errlen, "cannot read pcap file '%s': %s", cfg->pcap, perr);
		return -ENOENT;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		snprintf(err, errlen, "pcap file '%s' has link type %s; only Ethernet (EN10MB) frames can be replayed",
			 cfg->pcap, pcap_datalink_val_to_name(pcap_datalink(pc)) ?: "unknown");
		pcap_close(pc);
		return -EINVAL;
	}
	gen->stride = RXP_ALIGN_UP(cfg->max_frame, RXP_CACHE_LINE);
	gen->frames = malloc((size_t)cap * gen->stride);
	gen->lens = malloc(cap * sizeof(*gen->lens));
	while (gen->frames && gen->lens && (ret = pcap_next_ex(pc, &hdr, &data)) == 1) {
		if (n == PCAP_FRAMES_MAX) {
			snprintf(err, errlen, "pcap file '%s' has more than %u frames; split it",
				 cfg->pcap, PCAP_FRAMES_MAX);
			pcap_close(pc);
			return -E2BIG;
		}
		if (hdr->caplen < hdr->len) {
			snprintf(err, errlen, "pcap file '%s': frame %u was captured truncated (%u of %u bytes); capture with a larger snap length",
				 cfg->pcap, n + 1, hdr->caplen, hdr->len);
			pcap_close(pc);
			return -EINVAL;
		}
		if (hdr->caplen > cfg->max_frame) {
			snprintf(err, errlen, "pcap file '%s': frame %u is %u bytes, larger than the %u-byte maximum frame",
				 cfg->pcap, n + 1, hdr->caplen, cfg->max_frame);
			pcap_close(pc);
			return -EINVAL;
		}
		if (n == cap) {
			uint8_t *f = realloc(gen->frames, (size_t)cap * 2 * gen->stride);
			uint16_t *l = f ? realloc(gen->lens, cap * 2 * sizeof(*l)) : NULL;

			if (f)
				gen->frames = f;
			if (!l)
				break;
			gen->lens = l;
			cap *= 2;
		}
		memcpy(gen->frames + (size_t)n * gen->stride, data, hdr->caplen);
		gen->lens[n++] = (uint16_t)hdr->caplen;
	}
	pcap_close(pc);
	if (!gen->frames || !gen->lens || n == cap) {
		snprintf(err, errlen, "out of memory reading pcap file '%s'", cfg->pcap);
		return -ENOMEM;
	}
	if (n == 0) {
		snprintf(err, errlen, "pcap file '%s' holds no frames", cfg->pcap);
		return -EINVAL;
	}
	gen->n_frames = n;
	gen->sched_len = n;
	gen->sched = malloc(n * sizeof(*gen->sched));
	gen->is_bad = calloc(n, 1);
	if (!gen->sched || !gen->is_bad) {
		snprintf(err, errlen, "out of memory reading pcap file '%s'", cfg->pcap);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		gen->sched[i] = i;
	gen->finite = cfg->loops != 0;
	gen->remaining = gen->finite ? (uint64_t)n * cfg->loops : UINT64_MAX;
	if (cfg->count && (!gen->finite || cfg->count < gen->remaining)) {
		gen->finite = true;
		gen->remaining = cfg->count;
	}
	return 0;
}

static int build_templates(struct rxp_gen *gen, const struct rxp_gen_config *cfg, char *err,
			   size_t errlen)
{
	uint32_t protos[4], n_protos = 0;
	uint32_t n_good = cfg->flows;
	uint32_t n_bad = cfg->bad_pct > 0 ? RXP_GEN_BAD_KINDS : 0;
	uint32_t good_i = 0;
	double bad_share = cfg->bad_pct / 100.0;

	for (uint32_t bit = 1; bit <= RXP_GEN_TCP6; bit <<= 1)
		if (cfg->protos & bit)
			protos[n_protos++] = bit;
	/*
	 * Templates as tight as their frames and cache-line aligned, so that
	 * the device reads one line for a minimum-size frame: the longest of
	 * the protocols' frames (a frame grows to fit its headers), or the
	 * malformed frames' size.
	 */
	gen->stride = 0;
	for (uint32_t i = 0; i < n_protos; i++)
		gen->stride = RXP_MAX(gen->stride, frame_len(cfg, protos[i]));
	if (n_bad)
		gen->stride = RXP_MAX(gen->stride, BAD_FRAME_SIZE + RXP_VLAN_HLEN);
	gen->stride = RXP_ALIGN_UP(gen->stride, RXP_CACHE_LINE);
	gen->n_good = n_good;
	gen->n_frames = n_good + n_bad;
	gen->frames = aligned_alloc(RXP_CACHE_LINE, (size_t)gen->n_frames * gen->stride);
	if (gen->frames)
		memset(gen->frames, 0, (size_t)gen->n_frames * gen->stride);
	gen->lens = calloc(gen->n_frames, sizeof(*gen->lens));
	gen->is_bad = calloc(gen->n_frames, 1);
	gen->sched_len = RXP_MIN(RXP_MAX(rxp_pow2_roundup(n_good), SCHED_MIN), SCHED_MAX);
	gen->sched = calloc(gen->sched_len, sizeof(*gen->sched));
	if (!gen->frames || !gen->lens || !gen->is_bad || !gen->sched) {
		snprintf(err, errlen, "out of memory building %u generator templates", gen->n_frames);
		return -ENOMEM;
	}
	for (uint32_t f = 0; f < n_good; f++)
		gen->lens[f] = build_frame(gen->frames + (size_t)f * gen->stride, cfg,
					   protos[f % n_protos], f);
	for (uint32_t k = 0; k < n_bad; k++) {
		gen->lens[n_good + k] = build_bad(gen->frames + (size_t)(n_good + k) * gen->stride,
						  cfg, (enum rxp_gen_bad)k);
		gen->is_bad[n_good + k] = (uint8_t)(1 + k);
	}
	/* Spread malformed frames evenly: step i is bad when floor((i+1)p) > floor(ip). */
	for (uint32_t i = 0; i < gen->sched_len; i++) {
		bool bad = n_bad && (uint64_t)((i + 1) * bad_share) > (uint64_t)(i * bad_share);

		gen->sched[i] = bad ? n_good : good_i++ % n_good;
	}
	gen->finite = cfg->count != 0;
	gen->remaining = gen->finite ? cfg->count : UINT64_MAX;
	return 0;
}

int rxp_gen_init(struct rxp_gen *gen, const struct rxp_gen_config *cfg, char *err, size_t errlen)
{
	int ret;

	memset(gen, 0, sizeof(*gen));
	if (cfg->frame_size < 64 || cfg->frame_size - RXP_ETH_FCS_LEN > cfg->max_frame) {
		snprintf(err, errlen, "frame size %u is out of range 64..%u", cfg->frame_size,
			 cfg->max_frame + RXP_ETH_FCS_LEN);
		return -EINVAL;
	}
	if (!cfg->pcap[0]) {
		static const struct { uint32_t bit; const char *name; uint32_t len; } need[] = {
			{ RXP_GEN_UDP4, "udp4", RXP_ETH_HLEN + RXP_IP4_HLEN + RXP_UDP_HLEN },
			{ RXP_GEN_TCP4, "tcp4", RXP_ETH_HLEN + RXP_IP4_HLEN + RXP_TCP_HLEN },
			{ RXP_GEN_UDP6, "udp6", RXP_ETH_HLEN + RXP_IP6_HLEN + RXP_UDP_HLEN },
			{ RXP_GEN_TCP6, "tcp6", RXP_ETH_HLEN + RXP_IP6_HLEN + RXP_TCP_HLEN },
		};

		/* Every frame must fit the receive buffers: a device never writes past them. */
		for (size_t i = 0; i < RXP_ARRAY_SIZE(need); i++) {
			if ((cfg->protos & need[i].bit) && need[i].len > cfg->max_frame) {
				snprintf(err, errlen, "proto %s needs %u-byte frames but the maximum frame is %u bytes; raise --max-frame",
					 need[i].name, need[i].len, cfg->max_frame);
				return -EINVAL;
			}
		}
		if (cfg->bad_pct > 0 && BAD_FRAME_SIZE > cfg->max_frame) {
			snprintf(err, errlen, "bad=%g needs a maximum frame of at least %u bytes (it is %u); raise --max-frame",
				 cfg->bad_pct, BAD_FRAME_SIZE, cfg->max_frame);
			return -EINVAL;
		}
	}
	ret = cfg->pcap[0] ? load_pcap(gen, cfg, err, errlen) : build_templates(gen, cfg, err, errlen);
	if (ret)
		rxp_gen_free(gen);
	return ret;
}

void rxp_gen_free(struct rxp_gen *gen)
{
	free(gen->frames);
	free(gen->lens);
	free(gen->sched);
	free(gen->is_bad);
	memset(gen, 0, sizeof(*gen));
}

int rxp_gen_keep_queue(struct rxp_gen *gen, uint16_t queue, uint16_t n_queues)
{
	uint32_t per_queue[RXP_QUEUES_MAX] = { 0 }, kept = 0, before = 0, len = gen->sched_len;

	if (n_queues <= 1 || n_queues > RXP_QUEUES_MAX)
		return (int)len;
	for (uint32_t i = 0; i < len; i++) {
		uint32_t t = gen->sched[i];
		/* malformed steps stand for rotating kinds: spread them by position */
		uint16_t q = gen->is_bad[t] ? (uint16_t)(i % n_queues) :
			     rxp_rss_queue(rxp_rss_frame_hash(rxp_rss_default_key,
							      gen->frames + (size_t)t * gen->stride,
							      gen->lens[t]), n_queues);

		per_queue[q]++;
		if (q == queue)
			gen->sched[kept++] = t;
	}
	for (uint16_t q = 0; q < queue; q++)
		before += per_queue[q];
	gen->sched_len = kept;
	gen->pos = 0;
	if (!kept) {	/* no flow of this source hashes here: the queue stays quiet */
		gen->finite = true;
		gen->remaining = 0;
	} else if (gen->finite) {
		/* a finite count is shared in proportion to the steps each queue got */
		uint64_t total = gen->remaining;

		gen->remaining = total * (before + kept) / len - total * before / len;
	}
	return (int)kept;
}
