/* SPDX-License-Identifier: MIT */
/*
 * The nat verb:
 *   nat add masquerade out PORT [src PREFIX]
 *   nat add snat out PORT [src PREFIX] to ADDR[-ADDR] [ports N-M]
 *   nat add dnat in PORT [dst ADDR] proto tcp|udp dport N[-M] to ADDR[:PORT]
 *   nat add static INSIDE_ADDR OUTSIDE_ADDR
 *   nat del N | nat del RULE      nat flush
 *   nat filtering endpoint-independent|address-dependent|address-and-port-dependent
 *   nat timeout udp|tcp-established|tcp-transitory|icmp SECONDS
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "filter_verbs.h"
#include "nat_verbs.h"
#include "net/nat.h"
#include "rxpath/proto.h"
#include "verbs.h"

static const char *const kind_names[] = {
	[RXP_NAT_MASQUERADE] = "masquerade", [RXP_NAT_SNAT] = "snat", [RXP_NAT_DNAT] = "dnat",
	[RXP_NAT_STATIC] = "static",
};

static const char *const filtering_names[] = {
	[RXP_NAT_APDF] = "address-and-port-dependent", [RXP_NAT_ADF] = "address-dependent",
	[RXP_NAT_EIF] = "endpoint-independent",
};

/* The least each timeout may be: RFC 4787 REQ-5 (UDP), RFC 5382 REQ-5 (TCP), RFC 5508 REQ-1 (ICMP). */
static const uint32_t timeout_floor[RXP_CT_NAT_TO_MAX] = {
	[RXP_CT_NAT_TO_UDP] = 120, [RXP_CT_NAT_TO_TCP_ESTABLISHED] = 7440,
	[RXP_CT_NAT_TO_TCP_TRANSITORY] = 240, [RXP_CT_NAT_TO_ICMP] = 60,
};

const char *nat_filtering_name(unsigned f)
{
	return f < RXP_ARRAY_SIZE(filtering_names) ? filtering_names[f] : "?";
}

/* An IPv4 address, host order; false when @text is not one. */
static bool addr4(const char *text, uint32_t *out)
{
	uint8_t a[16];
	uint32_t v;

	if (parse_ip_addr(text, a) != 4)
		return false;
	memcpy(&v, a, 4);
	*out = ntohl(v);
	return true;
}

static void put_addr(char *buf, size_t len, size_t *at, const char *pre, uint32_t host)
{
	char s[INET_ADDRSTRLEN];
	uint32_t a = htonl(host);

	inet_ntop(AF_INET, &a, s, sizeof(s));
	if (*at < len)
		*at += (size_t)snprintf(buf + *at, len - *at, "%s%s", pre, s);
}

/* The rule as `show nat` prints it, and as `nat del RULE` finds it. */
static void rule_text(struct dp_nat_cmd *c)
{
	char *b = c->text;
	size_t len = sizeof(c->text), at = (size_t)snprintf(b, len, "%s", kind_names[c->kind]);

	if (c->kind == RXP_NAT_STATIC) {
		put_addr(b, len, &at, " ", c->src);
		put_addr(b, len, &at, " ", c->dst);
		return;
	}
	at += (size_t)snprintf(b + at, len - at, " %s %s", c->kind == RXP_NAT_DNAT ? "in" : "out", c->port);
	if (c->src_mask) {
		put_addr(b, len, &at, " src ", c->src);
		at += (size_t)snprintf(b + at, len - at, "/%d", __builtin_popcount(c->src_mask));
	}
	if (c->kind == RXP_NAT_DNAT) {
		if (c->dst)
			put_addr(b, len, &at, " dst ", c->dst);
		at += (size_t)snprintf(b + at, len - at, " proto %s dport %u", c->proto == RXP_IPPROTO_TCP ? "tcp" : "udp",
				       c->dport_lo);
		if (c->dport_hi != c->dport_lo)
			at += (size_t)snprintf(b + at, len - at, "-%u", c->dport_hi);
		put_addr(b, len, &at, " to ", c->to_lo);
		if (c->port_lo)
			at += (size_t)snprintf(b + at, len - at, ":%u", c->port_lo);
	} else if (c->kind == RXP_NAT_SNAT) {
		put_addr(b, len, &at, " to ", c->to_lo);
		if (c->to_hi != c->to_lo)
			put_addr(b, len, &at, "-", c->to_hi);
		if (c->port_lo)
			at += (size_t)snprintf(b + at, len - at, " ports %u-%u", c->port_lo, c->port_hi);
	}
}

/* "to ADDR[-ADDR]" of snat. */
static int parse_pool(const char *text, struct dp_nat_cmd *c)
{
	char a[64];
	const char *dash = strchr(text, '-');

	if (!dash)
		return addr4(text, &c->to_lo) ? (c->to_hi = c->to_lo, 0) : -1;
	if ((size_t)(dash - text) >= sizeof(a))
		return -1;
	memcpy(a, text, (size_t)(dash - text));
	a[dash - text] = '\0';
	if (!addr4(a, &c->to_lo) || !addr4(dash + 1, &c->to_hi) || c->to_lo > c->to_hi ||
	    c->to_hi - c->to_lo >= 65536)
		return -1;
	return 0;
}

/* "to ADDR[:PORT]" of dnat. */
static int parse_target(const char *text, struct dp_nat_cmd *c)
{
	char a[64];
	const char *colon = strchr(text, ':');
	uint64_t p;

	if (!colon)
		return addr4(text, &c->to_lo) ? 0 : -1;
	if ((size_t)(colon - text) >= sizeof(a))
		return -1;
	memcpy(a, text, (size_t)(colon - text));
	a[colon - text] = '\0';
	if (!addr4(a, &c->to_lo) || rxp_parse_u64(colon + 1, 1, 65535, &p))
		return -1;
	c->port_lo = (uint16_t)p;
	return 0;
}

/* The rule words from w[0] (its kind). Returns 0 or -1 with @e. */
static int rule_parse(char *const *w, int n, struct dp_nat_cmd *c, struct cmd_err *e)
{
	int i = 1;
	bool to = false, proto = false, dport = false;

	memset(c, 0, sizeof(*c));
	if (n < 1)
		return cmd_fail_shown(e, "nothing after 'add'", "expected masquerade, snat, dnat or static");
	for (c->kind = 0; c->kind < RXP_ARRAY_SIZE(kind_names) && strcmp(w[0], kind_names[c->kind]); c->kind++)
		;
	if (c->kind == RXP_ARRAY_SIZE(kind_names))
		return cmd_fail(e, w[0], "expected masquerade, snat, dnat or static");
	if (c->kind == RXP_NAT_STATIC) {
		if (n != 3)
			return cmd_fail(e, n > 3 ? w[3] : "", "expected 'static INSIDE_ADDR OUTSIDE_ADDR'");
		if (!addr4(w[1], &c->src))
			return cmd_fail(e, w[1], "expected the inside IPv4 address");
		if (!addr4(w[2], &c->dst))
			return cmd_fail(e, w[2], "expected the outside IPv4 address");
		rule_text(c);
		return 0;
	}
	if (n < 3 || strcmp(w[1], c->kind == RXP_NAT_DNAT ? "in" : "out"))
		return cmd_fail(e, n > 1 ? w[1] : "", "expected '%s PORT' after %s", c->kind == RXP_NAT_DNAT ? "in" : "out",
				w[0]);
	snprintf(c->port, sizeof(c->port), "%s", w[2]);
	for (i = 3; i < n; i += 2) {
		const char *k = w[i], *v = i + 1 < n ? w[i + 1] : NULL;

		if (!v)
			return cmd_fail(e, k, "expected a value after '%s'", k);
		if (!strcmp(k, "src") && c->kind != RXP_NAT_DNAT) {
			uint8_t a[16], plen;
			uint32_t x;

			if (parse_prefix(v, a, &plen) != 4)
				return cmd_fail(e, v, "expected an IPv4 prefix (NAT44)");
			memcpy(&x, a, 4);
			c->src_mask = plen ? ~0u << (32 - plen) : 0;
			c->src = ntohl(x) & c->src_mask;
			if (!plen)
				c->src_mask = 0;
		} else if (!strcmp(k, "dst") && c->kind == RXP_NAT_DNAT) {
			if (!addr4(v, &c->dst))
				return cmd_fail(e, v, "expected the outside IPv4 address");
		} else if (!strcmp(k, "proto") && c->kind == RXP_NAT_DNAT) {
			if (strcmp(v, "tcp") && strcmp(v, "udp"))
				return cmd_fail(e, v, "expected tcp or udp");
			c->proto = strcmp(v, "tcp") ? RXP_IPPROTO_UDP : RXP_IPPROTO_TCP;
			proto = true;
		} else if (!strcmp(k, "dport") && c->kind == RXP_NAT_DNAT) {
			if (filter_parse_range(v, &c->dport_lo, &c->dport_hi) || !c->dport_lo)
				return cmd_fail(e, v, "expected a port N or a range N-M from 1 to 65535");
			dport = true;
		} else if (!strcmp(k, "to") && c->kind == RXP_NAT_SNAT) {
			if (parse_pool(v, c))
				return cmd_fail(e, v, "expected an IPv4 address or a range ADDR-ADDR of at most 65536");
			to = true;
		} else if (!strcmp(k, "to") && c->kind == RXP_NAT_DNAT) {
			if (parse_target(v, c))
				return cmd_fail(e, v, "expected the inside server as ADDR or ADDR:PORT");
			to = true;
		} else if (!strcmp(k, "ports") && c->kind == RXP_NAT_SNAT) {
			if (filter_parse_range(v, &c->port_lo, &c->port_hi) || !c->port_lo)
				return cmd_fail(e, v, "expected a port range N-M from 1 to 65535");
		} else {
			return cmd_fail(e, k, c->kind == RXP_NAT_DNAT ? "expected dst, proto, dport or to" :
					c->kind == RXP_NAT_SNAT ? "expected src, to or ports" : "expected src");
		}
	}
	if (c->kind == RXP_NAT_SNAT && !to)
		return cmd_fail_shown(e, "the end of the line", "expected 'to ADDR[-ADDR]': snat needs its outside addresses");
	if (c->kind == RXP_NAT_DNAT && (!proto || !dport || !to))
		return cmd_fail_shown(e, "the end of the line", "expected %s: a port forward is 'dnat in PORT [dst ADDR] proto tcp|udp dport N[-M] to ADDR[:PORT]'",
				!proto ? "'proto tcp|udp'" : !dport ? "'dport N[-M]'" : "'to ADDR[:PORT]'");
	if (c->kind == RXP_NAT_DNAT && c->port_lo && (uint32_t)c->port_lo + (c->dport_hi - c->dport_lo) > 65535)
		return cmd_fail(e, w[n - 1], "the range mapped from port %u runs past 65535", c->port_lo);
	rule_text(c);
	return 0;
}

static int add_cmd(struct dp_config *cfg, struct dp_cmd *c, const char *where)
{
	cmd_set_where(c->where, sizeof(c->where), where);
	return dp_config_add_cmd(cfg, c);
}

int verb_nat(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_NAT_ADD };
	uint64_t x;

	if (n >= 2 && !strcmp(w[1], "add")) {
		if (rule_parse(w + 2, n - 2, &c.nat, e))
			return -1;
		return add_cmd(cfg, &c, where);
	}
	if (n >= 2 && !strcmp(w[1], "del")) {
		c.kind = DP_CMD_NAT_DEL;
		if (n == 3 && !rxp_parse_u64(w[2], 1, UINT32_MAX, &x)) {
			c.nat.index = (uint32_t)x;
			return add_cmd(cfg, &c, where);
		}
		if (n < 3)
			return cmd_fail_shown(e, "nothing after 'del'", "expected 'nat del N' (its number in show nat) or 'nat del RULE'");
		if (rule_parse(w + 2, n - 2, &c.nat, e))
			return -1;
		return add_cmd(cfg, &c, where);
	}
	if (n >= 2 && !strcmp(w[1], "flush")) {
		if (n != 2)
			return cmd_fail(e, w[2], "expected nothing after 'nat flush'");
		c.kind = DP_CMD_NAT_FLUSH;
		snprintf(c.nat.text, sizeof(c.nat.text), "flush");
		return add_cmd(cfg, &c, where);
	}
	if (n >= 2 && !strcmp(w[1], "filtering")) {
		c.kind = DP_CMD_NAT_FILTERING;
		for (c.nat.kind = 0; n == 3 && c.nat.kind < RXP_ARRAY_SIZE(filtering_names); c.nat.kind++)
			if (!strcmp(w[2], filtering_names[c.nat.kind]))
				return add_cmd(cfg, &c, where);
		return cmd_fail(e, n >= 3 ? w[2] : "",
				"expected endpoint-independent, address-dependent or address-and-port-dependent");
	}
	if (n >= 2 && !strcmp(w[1], "timeout")) {
		int t = n == 4 ? rxp_ct_nat_timeout_of(w[2]) : -1;

		c.kind = DP_CMD_NAT_TIMEOUT;
		if (n != 4 || t < 0)
			return cmd_fail(e, n >= 3 ? w[2] : "", "expected 'nat timeout udp|tcp-established|tcp-transitory|icmp SECONDS'");
		if (rxp_parse_u64(w[3], timeout_floor[t], 864000, &x))
			return cmd_fail(e, w[3], "expected seconds from %u (the least RFC %s allows) to 864000",
					timeout_floor[t], t == RXP_CT_NAT_TO_UDP ? "4787" : t == RXP_CT_NAT_TO_ICMP ? "5508" : "5382");
		c.nat.timeout = t;
		c.seconds = (uint32_t)x;
		return add_cmd(cfg, &c, where);
	}
	return cmd_fail(e, n < 2 ? "" : w[1], "expected add, del, flush, filtering or timeout after 'nat'");
}
