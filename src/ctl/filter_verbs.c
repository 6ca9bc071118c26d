/* SPDX-License-Identifier: MIT */
/*
 * The filter's and connection tracking's lines:
 *   filter add input|forward|output [in PORT] [out PORT] [src PREFIX|@SET] [dst PREFIX|@SET]
 *              [proto tcp|udp|icmp|icmpv6|N] [sport N[-M]] [dport N[-M]] [icmp-type T]
 *              [ct-state new,established,related,invalid] accept|drop|reject
 *   filter policy input|forward|output accept|drop
 *   filter del CHAIN N  |  filter flush [CHAIN]
 *   filter set add NAME [PREFIX...]  |  filter set del NAME PREFIX [PREFIX...]
 *   conntrack max N  |  conntrack timeout NAME SECONDS  |  conntrack tcp liberal|loose on|off
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "filter_verbs.h"
#include "net/conntrack.h"
#include "rxpath/proto.h"
#include "verbs.h"

static const char *const chain_names[DP_CHAINS] = { "input", "forward", "output" };
static const char *const verdict_names[] = { "accept", "drop", "reject" };

const char *filter_chain_name(unsigned chain)
{
	return chain < DP_CHAINS ? chain_names[chain] : "all";
}

const char *filter_verdict_name(unsigned verdict)
{
	return verdict < RXP_ARRAY_SIZE(verdict_names) ? verdict_names[verdict] : "?";
}

static int chain_of(const char *word)
{
	for (unsigned i = 0; i < DP_CHAINS; i++)
		if (!strcmp(word, chain_names[i]))
			return (int)i;
	return -1;
}

static int verdict_of(const char *word)
{
	for (unsigned i = 0; i < RXP_ARRAY_SIZE(verdict_names); i++)
		if (!strcmp(word, verdict_names[i]))
			return (int)i;
	return -1;
}

/* "N" or "N-M" (inclusive, N <= M). Returns 0 or -1. */
int filter_parse_range(const char *text, uint16_t *lo, uint16_t *hi)
{
	const char *dash = strchr(text, '-');
	char a[8];
	uint64_t x, y;

	if (!dash)
		return rxp_parse_u64(text, 0, 65535, &x) ? -1 : (*lo = *hi = (uint16_t)x, 0);
	if ((size_t)(dash - text) >= sizeof(a) || dash == text)
		return -1;
	memcpy(a, text, (size_t)(dash - text));
	a[dash - text] = '\0';
	if (rxp_parse_u64(a, 0, 65535, &x) || rxp_parse_u64(dash + 1, 0, 65535, &y) || x > y)
		return -1;
	*lo = (uint16_t)x;
	*hi = (uint16_t)y;
	return 0;
}

struct icmp_name {
	const char *name;
	uint8_t type;
};

static const struct icmp_name icmp4_types[] = {
	{ "echo-reply", 0 }, { "destination-unreachable", 3 }, { "source-quench", 4 },
	{ "redirect", 5 }, { "echo-request", 8 }, { "router-advertisement", 9 },
	{ "router-solicitation", 10 }, { "time-exceeded", 11 }, { "parameter-problem", 12 },
	{ "timestamp-request", 13 }, { "timestamp-reply", 14 },
};

static const struct icmp_name icmp6_types[] = {
	{ "destination-unreachable", 1 }, { "packet-too-big", 2 }, { "time-exceeded", 3 },
	{ "parameter-problem", 4 }, { "echo-request", 128 }, { "echo-reply", 129 },
	{ "mld-listener-query", 130 }, { "mld-listener-report", 131 }, { "mld-listener-done", 132 },
	{ "nd-router-solicit", 133 }, { "nd-router-advert", 134 }, { "nd-neighbor-solicit", 135 },
	{ "nd-neighbor-advert", 136 }, { "nd-redirect", 137 }, { "mld2-listener-report", 143 },
};

/* An ICMP type by number or nftables' name. Returns it, or -1. */
static int icmp_type_of(const char *word, bool v6)
{
	const struct icmp_name *t = v6 ? icmp6_types : icmp4_types;
	size_t n = v6 ? RXP_ARRAY_SIZE(icmp6_types) : RXP_ARRAY_SIZE(icmp4_types);
	uint64_t x;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(word, t[i].name))
			return t[i].type;
	return rxp_parse_u64(word, 0, 255, &x) ? -1 : (int)x;
}

/* "new,established,..." as RXP_ACL_CT_* bits. Returns 0 or -1. */
static int parse_ct_states(const char *text, uint8_t *bits)
{
	static const struct { const char *name; uint8_t bit; } states[] = {
		{ "new", RXP_ACL_CT_NEW }, { "established", RXP_ACL_CT_ESTABLISHED },
		{ "related", RXP_ACL_CT_RELATED }, { "invalid", RXP_ACL_CT_INVALID },
	};
	const char *p = text;

	*bits = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; i < RXP_ARRAY_SIZE(states); i++)
			if (strlen(states[i].name) == len && !strncmp(p, states[i].name, len)) {
				*bits |= states[i].bit;
				found = true;
			}
		if (!found)
			return -1;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* A set's name: a letter, then letters, digits, '-' and '_'. */
static bool set_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= DP_SET_NAME_MAX ||
	    !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == len;
}

/* An address match: "PREFIX" or "@SET" into @f's @which ("src" or "dst"). */
static int parse_addr_match(struct dp_filter_cmd *f, bool src, const char *word, struct cmd_err *e)
{
	struct rxp_acl_rule *r = &f->rule;
	uint8_t *addr = src ? r->src : r->dst, *len = src ? &r->src_len : &r->dst_len;
	char *set = src ? f->src_set : f->dst_set;
	int family;

	if (word[0] == '@') {
		if (!set_name_ok(word + 1))
			return cmd_fail(e, word, "expected @SET, a set's name (a letter, then letters, digits, '-' or '_', at most %d)",
					DP_SET_NAME_MAX - 1);
		snprintf(set, DP_SET_NAME_MAX, "%s", word + 1);
		return 0;
	}
	family = parse_prefix(word, addr, len);
	if (!family)
		return cmd_fail(e, word, "expected an IPv4 or IPv6 prefix (10.0.0.0/8, 2001:db8::/32, an address) or @SET");
	/* the bits past the length are not part of the match */
	for (unsigned b = *len; b < 128; b++)
		addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	if (r->family && r->family != family)
		return cmd_fail(e, word, "an IPv%u %s with an IPv%u one: the rule could never match",
				(unsigned)family, src ? "source" : "destination", (unsigned)r->family);
	r->family = (uint8_t)family;
	return 0;
}

int filter_rule_parse(char *const *w, int n, struct dp_filter_cmd *f, struct cmd_err *e)
{
	struct rxp_acl_rule *r = &f->rule;
	bool have[8] = { false };	/* in, out, src, dst, proto, sport, dport, icmp-type/ct-state */
	bool have_ct = false, have_type = false;
	int v;
	size_t at = 0;

	memset(r, 0, sizeof(*r));
	r->src_set = r->dst_set = RXP_ACL_NO_SET;
	r->proto = RXP_ACL_ANY_PROTO;
	r->sport_hi = r->dport_hi = 65535;
	r->in_ifs = r->out_ifs = ~0ull;
	r->ct_states = RXP_ACL_CT_ANY;
	if (n < 1)
		return cmd_fail_shown(e, "nothing", "expected matches, then accept, drop or reject");
	for (int i = 0; i < n - 1; i += 2) {
		static const char *const keys[] = { "in", "out", "src", "dst", "proto", "sport", "dport" };
		const char *k = w[i], *val = w[i + 1];
		int slot = -1;

		for (int s = 0; s < (int)RXP_ARRAY_SIZE(keys); s++)
			if (!strcmp(k, keys[s]))
				slot = s;
		if (!strcmp(k, "icmp-type")) {
			if (have_type)
				return cmd_fail(e, k, "given twice");
			have_type = true;
			if (r->proto != RXP_IPPROTO_ICMP && r->proto != RXP_IPPROTO_ICMP6)
				return cmd_fail(e, k, "expected 'proto icmp' or 'proto icmpv6' before it");
			v = icmp_type_of(val, r->proto == RXP_IPPROTO_ICMP6);
			if (v < 0)
				return cmd_fail(e, val, "expected an ICMP%s type: a number from 0 to 255 or a name like echo-request",
						r->proto == RXP_IPPROTO_ICMP6 ? "v6" : "");
			r->sport_lo = r->sport_hi = (uint16_t)v;
		} else if (!strcmp(k, "ct-state")) {
			if (have_ct)
				return cmd_fail(e, k, "given twice");
			have_ct = true;
			if (parse_ct_states(val, &r->ct_states))
				return cmd_fail(e, val, "expected states separated by commas: new, established, related, invalid");
		} else if (slot < 0) {
			return cmd_fail(e, k, "expected in, out, src, dst, proto, sport, dport, icmp-type or ct-state, or a verdict (accept, drop, reject) last");
		} else if (have[slot]) {
			return cmd_fail(e, k, "given twice");
		} else if (slot <= 1) {
			if (f->chain == (slot == 0 ? DP_CHAIN_OUTPUT : DP_CHAIN_INPUT))
				return cmd_fail(e, k, "the %s chain has no %s port: its packets %s", chain_names[f->chain],
						k, slot == 0 ? "come from the router" : "are for the router");
			snprintf(slot == 0 ? f->in_if : f->out_if, RXP_PORT_NAME_MAX, "%s", val);
		} else if (slot <= 3) {
			if (parse_addr_match(f, slot == 2, val, e))
				return -EINVAL;
		} else if (slot == 4) {
			uint64_t p;

			if (!strcmp(val, "tcp"))
				r->proto = RXP_IPPROTO_TCP;
			else if (!strcmp(val, "udp"))
				r->proto = RXP_IPPROTO_UDP;
			else if (!strcmp(val, "icmp"))
				r->proto = RXP_IPPROTO_ICMP;
			else if (!strcmp(val, "icmpv6"))
				r->proto = RXP_IPPROTO_ICMP6;
			else if (!rxp_parse_u64(val, 0, 255, &p))
				r->proto = (uint16_t)p;
			else
				return cmd_fail(e, val, "expected tcp, udp, icmp, icmpv6 or a protocol number from 0 to 255");
		} else {
			uint16_t *lo = slot == 5 ? &r->sport_lo : &r->dport_lo, *hi = slot == 5 ? &r->sport_hi : &r->dport_hi;

			if (r->proto != RXP_IPPROTO_TCP && r->proto != RXP_IPPROTO_UDP)
				return cmd_fail(e, k, "expected 'proto tcp' or 'proto udp' before it");
			if (filter_parse_range(val, lo, hi))
				return cmd_fail(e, val, "expected a port or a range N-M (0 to 65535, N <= M)");
		}
		if (slot >= 0)
			have[slot] = true;
		at += (size_t)snprintf(f->text + at, at < sizeof(f->text) ? sizeof(f->text) - at : 0,
				       "%s%s %s", at ? " " : "", k, val);
		if (at >= sizeof(f->text))
			return cmd_fail(e, k, "the rule is longer than %zu characters", sizeof(f->text) - 1);
	}
	if (n % 2 == 0) {
		char shown[CMD_LINE_MAX + 32];

		snprintf(shown, sizeof(shown), "nothing after '%s %s'", w[n - 2], w[n - 1]);
		return cmd_fail_shown(e, shown, "expected a verdict last: accept, drop or reject");
	}
	v = verdict_of(w[n - 1]);
	if (v < 0)
		return cmd_fail(e, w[n - 1], "expected accept, drop or reject last");
	f->verdict = (uint8_t)v;
	snprintf(f->text + at, sizeof(f->text) - at, "%s%s", at ? " " : "", w[n - 1]);
	/* a protocol of one family with an address of the other, or a port range of a protocol without ports */
	if ((r->proto == RXP_IPPROTO_ICMP && r->family == 6) || (r->proto == RXP_IPPROTO_ICMP6 && r->family == 4))
		return cmd_fail(e, r->proto == RXP_IPPROTO_ICMP ? "icmp" : "icmpv6",
				"an IPv%u protocol with IPv%u addresses: the rule could never match",
				r->proto == RXP_IPPROTO_ICMP ? 4u : 6u, (unsigned)r->family);
	if (r->proto == RXP_IPPROTO_ICMP)
		r->family = 4;
	else if (r->proto == RXP_IPPROTO_ICMP6)
		r->family = 6;
	/* what the router sends of Neighbor Discovery and MLD is its own business, as ARP */
	if (f->chain == DP_CHAIN_OUTPUT && r->proto == RXP_IPPROTO_ICMP6 && r->sport_lo == r->sport_hi &&
	    ((r->sport_lo >= 130 && r->sport_lo <= 137) || r->sport_lo == 143))
		return cmd_fail(e, "icmp-type", "output does not filter the router's own Neighbor Discovery and MLD (as ARP); the rule would never act");
	return 0;
}

/* "filter CHAIN" word: its chain, or fails naming it. */
static int chain_word(const struct cmd_line *l, int i, bool all_ok, struct cmd_err *e)
{
	int c = i < l->n ? chain_of(l->w[i]) : -1;

	if (c < 0)
		return cmd_fail(e, i < l->n ? l->w[i] : "", "expected a chain: input, forward or output%s",
				all_ok ? " (or nothing: every chain)" : "");
	return c;
}

static int add_cmd(struct dp_config *cfg, struct dp_cmd *c, const char *where)
{
	cmd_set_where(c->where, sizeof(c->where), where);
	return dp_config_add_cmd(cfg, c);
}

/* "filter set add|del NAME PREFIX..." */
static int verb_filter_set(struct dp_config *cfg, const struct cmd_line *l, const char *where,
			   struct cmd_err *e)
{
	char *const *w = l->w;
	bool add = l->n >= 3 && !strcmp(w[2], "add");
	struct dp_cmd c = { .kind = add ? DP_CMD_SET_ADD : DP_CMD_SET_DEL };
	unsigned was = cfg->n_cmds;

	if (l->n < 3 || (!add && strcmp(w[2], "del")))
		return cmd_fail(e, l->n < 3 ? "" : w[2], "expected 'filter set add NAME [PREFIX...]' or 'filter set del NAME PREFIX...'");
	if (l->n < 4 || !set_name_ok(w[3]))
		return cmd_fail(e, l->n < 4 ? "" : w[3], "expected a set's name (a letter, then letters, digits, '-' or '_', at most %d)",
				DP_SET_NAME_MAX - 1);
	snprintf(c.filter.set, sizeof(c.filter.set), "%s", w[3]);
	if (!add && l->n < 5)
		return cmd_fail_shown(e, "nothing after the name", "expected the prefixes to take out of the set");
	/* an add without prefixes makes the set, empty; the prefixes go a few to a command */
	if (l->n == 4)
		return add_cmd(cfg, &c, where);
	for (int i = 4; i < l->n; i++) {
		struct dp_set_prefix *p = &c.filter.prefixes[c.filter.n_prefixes];

		p->family = (uint8_t)parse_prefix(w[i], p->addr, &p->plen);
		if (!p->family) {
			cfg->n_cmds = was;	/* nothing of the line stays */
			return cmd_fail(e, w[i], "expected an IPv4 or IPv6 prefix (10.0.0.0/8, 2001:db8::/32, an address)");
		}
		for (unsigned b = p->plen; b < 128; b++)
			p->addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
		if (++c.filter.n_prefixes < DP_SET_PREFIXES_PER_CMD && i + 1 < l->n)
			continue;
		if (add_cmd(cfg, &c, where)) {
			cfg->n_cmds = was;
			return cmd_fail(e, NULL, "out of memory");
		}
		c.filter.n_prefixes = 0;
	}
	return 0;
}

int verb_filter(struct dp_config *cfg, const struct cmd_line *l, const char *where,
		struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n, chain;
	struct dp_cmd c = { .kind = DP_CMD_FILTER_ADD };

	if (n >= 2 && !strcmp(w[1], "set"))
		return verb_filter_set(cfg, l, where, e);
	if (n < 2)
		return cmd_fail(e, "", "expected add, del, flush, policy or set after 'filter'");
	if (!strcmp(w[1], "add")) {
		chain = chain_word(l, 2, false, e);
		if (chain < 0)
			return chain;
		c.filter.chain = (uint8_t)chain;
		if (filter_rule_parse(w + 3, n - 3, &c.filter, e))
			return -EINVAL;
		return add_cmd(cfg, &c, where);
	}
	if (!strcmp(w[1], "del")) {
		uint64_t k;

		chain = chain_word(l, 2, false, e);
		if (chain < 0)
			return chain;
		if (n != 4 || rxp_parse_u64(w[3], 1, RXP_ACL_RULES_MAX, &k))
			return cmd_fail_shown(e, n == 4 ? cmd_misfit(l, "filter del CHAIN x").text : cmd_misfit(l, "filter del CHAIN N").text,
					      "expected 'filter del CHAIN N', N a rule's number from 1 (show filter lists them)");
		c.kind = DP_CMD_FILTER_DEL;
		c.filter.chain = (uint8_t)chain;
		c.filter.index = (uint32_t)k;
		return add_cmd(cfg, &c, where);
	}
	if (!strcmp(w[1], "flush")) {
		c.kind = DP_CMD_FILTER_FLUSH;
		c.filter.chain = DP_CHAIN_ALL;
		if (n > 3)
			return cmd_fail(e, w[3], "expected 'filter flush [CHAIN]'");
		if (n == 3) {
			chain = chain_word(l, 2, true, e);
			if (chain < 0)
				return chain;
			c.filter.chain = (uint8_t)chain;
		}
		return add_cmd(cfg, &c, where);
	}
	if (!strcmp(w[1], "policy")) {
		chain = chain_word(l, 2, false, e);
		if (chain < 0)
			return chain;
		if (n != 4 || (strcmp(w[3], "accept") && strcmp(w[3], "drop")))
			return cmd_fail_shown(e, cmd_misfit(l, "filter policy CHAIN accept|drop").text,
					      "expected 'filter policy CHAIN accept|drop'");
		c.kind = DP_CMD_FILTER_POLICY;
		c.filter.chain = (uint8_t)chain;
		c.filter.verdict = !strcmp(w[3], "drop") ? DP_VERDICT_DROP : DP_VERDICT_ACCEPT;
		return add_cmd(cfg, &c, where);
	}
	return cmd_fail(e, w[1], "expected add, del, flush, policy or set after 'filter'");
}

int verb_conntrack(struct dp_config *cfg, const struct cmd_line *l, const char *where,
		   struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_CT_TIMEOUT };
	uint64_t x;

	if (n >= 2 && !strcmp(w[1], "max")) {
		if (n != 3 || rxp_parse_u64(w[2], 1024, 1u << 26, &x))
			return cmd_fail_shown(e, n == 3 ? cmd_misfit(l, "conntrack max x").text : cmd_misfit(l, "conntrack max N").text,
					      "expected 'conntrack max N', N entries from 1024 to %u", 1u << 26);
		cfg->ct_max = (uint32_t)x;
		return 0;
	}
	if (n >= 2 && !strcmp(w[1], "timeout")) {
		int t = n == 4 ? rxp_ct_timeout_of(w[2]) : -1;

		if (n != 4)
			return cmd_fail_shown(e, cmd_misfit(l, "conntrack timeout NAME SECONDS").text,
					      "expected 'conntrack timeout NAME SECONDS'");
		if (t < 0) {
			char names[512] = "";

			for (int k = 0, at = 0; k < RXP_CT_TO_MAX && at < (int)sizeof(names); k++)
				at += snprintf(names + at, sizeof(names) - (size_t)at, "%s%s", k ? ", " : "",
					       rxp_ct_timeout_name((enum rxp_ct_timeout)k));
			return cmd_fail(e, w[2], "expected a timeout's name: %s", names);
		}
		if (rxp_parse_u64(w[3], 1, 864000, &x))
			return cmd_fail(e, w[3], "expected seconds from 1 to 864000");
		c.filter.timeout = t;
		c.seconds = (uint32_t)x;
		return add_cmd(cfg, &c, where);
	}
	if (n >= 2 && !strcmp(w[1], "tcp")) {
		if (n != 4 || (strcmp(w[2], "liberal") && strcmp(w[2], "loose")) ||
		    (strcmp(w[3], "on") && strcmp(w[3], "off")))
			return cmd_fail_shown(e, cmd_misfit(l, n >= 3 && !strcmp(w[2], "loose") ?
							    "conntrack tcp loose on|off" :
							    "conntrack tcp liberal on|off").text,
					      "expected 'conntrack tcp liberal on|off' or 'conntrack tcp loose on|off'");
		c.kind = !strcmp(w[2], "loose") ? DP_CMD_CT_LOOSE : DP_CMD_CT_LIBERAL;
		c.filter.on = !strcmp(w[3], "on");
		return add_cmd(cfg, &c, where);
	}
	return cmd_fail(e, n < 2 ? "" : w[1], "expected max, timeout or tcp after 'conntrack'");
}
