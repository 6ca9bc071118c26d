/* SPDX-License-Identifier: MIT */
/*
 * The filter's reports: show filter (each chain's rules with their
 * counters, the sets), show conntrack [src ADDR] [dst ADDR] [proto P]
 * [state S] (as `conntrack -L`), show conntrack stats, and their metrics.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "core/clock.h"
#include "engine/dp_filter.h"
#include "filter_verbs.h"
#include "rxpath/proto.h"
#include "show_filter.h"

/* A rule's text as JSON wants it: it holds no quote or backslash (the tokenizer's words), but be sure. */
static void put_json_text(struct rxp_sbuf *o, const char *s)
{
	for (; *s; s++)
		rxp_sbuf_printf(o, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
}

int show_filter_run(struct dp *dp, void *arg, struct rxp_sbuf *o)
{
	const bool *json = arg;
	struct dp_filter *f = dp->filter;
	uint64_t pk, by;

	if (*json)
		rxp_sbuf_printf(o, "{\"chains\":[");
	for (unsigned c = 0; c < DP_CHAINS; c++) {
		const char *policy = f->policy[c] == DP_VERDICT_DROP ? "drop" : "accept";

		dp_filter_counts(dp, c, f->n[c], &pk, &by);
		if (*json)
			rxp_sbuf_printf(o, "%s{\"chain\":\"%s\",\"policy\":\"%s\",\"policy_packets\":%" PRIu64
					",\"policy_bytes\":%" PRIu64 ",\"rules\":[", c ? "," : "",
					filter_chain_name(c), policy, pk, by);
		else
			rxp_sbuf_printf(o, "chain %s: policy %s (%" PRIu64 " packets, %" PRIu64 " bytes), %u rule%s\n",
					filter_chain_name(c), policy, pk, by, f->n[c], f->n[c] == 1 ? "" : "s");
		for (unsigned i = 0; i < f->n[c]; i++) {
			dp_filter_counts(dp, c, i, &pk, &by);
			if (*json) {
				rxp_sbuf_printf(o, "%s{\"number\":%u,\"rule\":\"", i ? "," : "", i + 1);
				put_json_text(o, f->rules[c][i].f.text);
				rxp_sbuf_printf(o, "\",\"verdict\":\"%s\",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
						filter_verdict_name(f->rules[c][i].f.verdict), pk, by);
			} else {
				rxp_sbuf_printf(o, "  %4u  %-60s %12" PRIu64 " packets %14" PRIu64 " bytes\n", i + 1,
						f->rules[c][i].f.text, pk, by);
			}
		}
		if (*json)
			rxp_sbuf_printf(o, "]}");
	}
	if (*json)
		rxp_sbuf_printf(o, "],\"sets\":[");
	for (unsigned i = 0, k = 0; i < RXP_ACL_SETS_MAX; i++) {
		const struct dp_fset *s = &f->sets[i];

		if (!s->name[0])
			continue;
		if (*json)
			rxp_sbuf_printf(o, "%s{\"name\":\"%s\",\"ipv4\":%u,\"ipv6\":%u,\"rules\":%u}", k ? "," : "",
					s->name, rxp_pset_count(s->ps, 4), rxp_pset_count(s->ps, 6), s->refs);
		else
			rxp_sbuf_printf(o, "set %s: %u IPv4 and %u IPv6 prefixes, named by %u rule%s\n", s->name,
					rxp_pset_count(s->ps, 4), rxp_pset_count(s->ps, 6), s->refs,
					s->refs == 1 ? "" : "s");
		k++;
	}
	if (*json)
		rxp_sbuf_printf(o, "],\"conntrack\":%s,\"build_ms\":%.3f}\n", f->ct ? "true" : "false",
				f->build_ms);
	else
		rxp_sbuf_printf(o, "conntrack: %s\n", f->ct ? "on" : "off (no rule asks for a connection's state)");
	return o->oom ? -ENOMEM : 0;
}

int show_conntrack_table(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct show_ct_request *req = arg;

	(void)out;
	req->ct = dp->filter ? dp->filter->ct : NULL;
	req->max = dp->filter ? dp->filter->ct_cfg.max : 0;
	return 0;
}

/* Does @t (one direction's tuple) have what the request asks? */
static bool ct_matches(const struct show_ct_request *q, const struct rxp_ct_view *v)
{
	const struct rxp_ct_tuple *t = &v->orig;
	unsigned alen = t->family == 4 ? 4 : 16;

	if (q->family && q->family != t->family)
		return false;
	if (q->has_src && memcmp(q->src, t->src, alen))
		return false;
	if (q->has_dst && memcmp(q->dst, t->dst, alen))
		return false;
	if (q->proto >= 0 && q->proto != t->proto)
		return false;
	if (q->state >= 0 && (t->proto != RXP_IPPROTO_TCP || q->state != v->tcp_state))
		return false;
	return true;
}

struct walk_ctx {
	const struct show_ct_request *q;
	struct rxp_sbuf *o;
	unsigned n;
};

static void put_addr(struct rxp_sbuf *o, uint8_t family, const uint8_t *a)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, a, s, sizeof(s));
	rxp_sbuf_printf(o, "%s", s);
}

static void put_tuple_json(struct rxp_sbuf *o, const struct rxp_ct_tuple *t)
{
	rxp_sbuf_printf(o, "{\"src\":\"");
	put_addr(o, t->family, t->src);
	rxp_sbuf_printf(o, "\",\"dst\":\"");
	put_addr(o, t->family, t->dst);
	rxp_sbuf_printf(o, "\",\"sport\":%u,\"dport\":%u}", t->sport, t->dport);
}

static int ct_one(const struct rxp_ct_view *v, void *arg)
{
	struct walk_ctx *w = arg;
	char line[512];

	if (!ct_matches(w->q, v))
		return 0;
	if (w->q->json) {
		rxp_sbuf_printf(w->o, "%s{\"family\":%u,\"proto\":%u,\"timeout\":%" PRIu64 ",\"orig\":",
				w->n ? "," : "", v->orig.family, v->orig.proto, v->expires_in_s);
		put_tuple_json(w->o, &v->orig);
		rxp_sbuf_printf(w->o, ",\"reply\":");
		put_tuple_json(w->o, &v->reply);
		rxp_sbuf_printf(w->o, ",\"tcp_state\":%u,\"seen_reply\":%s,\"assured\":%s,\"packets\":[%" PRIu64 ",%" PRIu64
				"],\"bytes\":[%" PRIu64 ",%" PRIu64 "],\"text\":\"", v->tcp_state,
				v->seen_reply ? "true" : "false", v->assured ? "true" : "false", v->packets[0],
				v->packets[1], v->bytes[0], v->bytes[1]);
		rxp_ct_view_format(v, line, sizeof(line));
		put_json_text(w->o, line);
		rxp_sbuf_printf(w->o, "\"}");
	} else {
		rxp_ct_view_format(v, line, sizeof(line));
		rxp_sbuf_printf(w->o, "%s\n", line);
	}
	w->n++;
	return w->o->oom ? -ENOMEM : 0;
}

int show_conntrack_list(const struct show_ct_request *q, struct rxp_sbuf *o)
{
	struct walk_ctx w = { .q = q, .o = o };

	if (q->json)
		rxp_sbuf_printf(o, "{\"entries\":[");
	if (q->ct)
		rxp_ct_walk(q->ct, rxp_clock_ns(), ct_one, &w);
	if (q->json)
		rxp_sbuf_printf(o, "],\"count\":%u}\n", w.n);
	else
		rxp_sbuf_printf(o, "%u flow entr%s shown%s\n", w.n, w.n == 1 ? "y" : "ies",
				q->ct ? "" : " (connection tracking is off: no rule asks for a state)");
	return o->oom ? -ENOMEM : 0;
}

int show_conntrack_stats(const struct show_ct_request *q, struct rxp_sbuf *o)
{
	struct rxp_ct_stats s = { 0 };

	if (q->ct)
		rxp_ct_stats(q->ct, &s);
	else
		s.max = q->max;
	if (q->json) {
		rxp_sbuf_printf(o, "{\"on\":%s,\"entries\":%" PRIu64 ",\"max\":%" PRIu64, q->ct ? "true" : "false",
				s.entries, s.max);
#define X(field, metric, help) rxp_sbuf_printf(o, ",\"" #field "\":%" PRIu64, s.field);
		RXP_CT_STATS(X)
#undef X
		rxp_sbuf_printf(o, "}\n");
	} else {
		rxp_sbuf_printf(o, "conntrack: %s, %" PRIu64 " entries of %" PRIu64 "\n",
				q->ct ? "on" : "off", s.entries, s.max);
#define X(field, metric, help) rxp_sbuf_printf(o, "  %-12s %" PRIu64 "\n", #field, s.field);
		RXP_CT_STATS(X)
#undef X
	}
	return o->oom ? -ENOMEM : 0;
}

static const char *const tcp_states[] = {
	"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK",
	"TIME_WAIT", "CLOSE", "SYN_SENT2",
};

int show_conntrack_parse(const struct cmd_line *l, struct show_ct_request *q, char *err, size_t errlen)
{
	q->proto = -1;
	q->state = -1;
	if (l->n == 3 && !strcmp(l->w[2], "stats")) {
		q->stats = true;
		return 0;
	}
	for (int i = 2; i < l->n; i += 2) {
		const char *k = l->w[i], *v = i + 1 < l->n ? l->w[i + 1] : NULL;
		uint8_t addr[16];
		int fam;

		if (!v) {
			snprintf(err, errlen, "show conntrack: nothing after '%s'", k);
			return -EINVAL;
		}
		if (!strcmp(k, "src") || !strcmp(k, "dst")) {
			fam = parse_ip_addr(v, addr);
			if (!fam || (q->family && q->family != fam)) {
				snprintf(err, errlen, "show conntrack: '%s': expected an IPv4 or IPv6 address%s", v,
					 fam ? " of the same family as the other" : "");
				return -EINVAL;
			}
			q->family = (uint8_t)fam;
			memcpy(k[0] == 's' ? q->src : q->dst, addr, 16);
			*(k[0] == 's' ? &q->has_src : &q->has_dst) = true;
		} else if (!strcmp(k, "proto")) {
			uint64_t p;

			q->proto = !strcmp(v, "tcp") ? 6 : !strcmp(v, "udp") ? 17 : !strcmp(v, "icmp") ? 1 :
				   !strcmp(v, "icmpv6") ? 58 : !rxp_parse_u64(v, 0, 255, &p) ? (int)p : -2;
			if (q->proto == -2) {
				snprintf(err, errlen, "show conntrack: '%s': expected tcp, udp, icmp, icmpv6 or a number", v);
				return -EINVAL;
			}
		} else if (!strcmp(k, "state")) {
			for (unsigned s = 0; s < RXP_ARRAY_SIZE(tcp_states); s++)
				if (!strcasecmp(v, tcp_states[s]))
					q->state = (int)s;
			if (q->state < 0) {
				snprintf(err, errlen, "show conntrack: '%s': expected a TCP state (SYN_SENT, ESTABLISHED, TIME_WAIT, ...)", v);
				return -EINVAL;
			}
		} else {
			snprintf(err, errlen, "show conntrack: '%s': expected src, dst, proto, state or stats", k);
			return -EINVAL;
		}
	}
	return 0;
}

void show_filter_metrics(struct dp *dp, struct rxp_sbuf *out)
{
	struct dp_filter *f = dp->filter;
	struct rxp_ct_stats s = { 0 };

	if (!f)
		return;
	rxp_sbuf_printf(out, "# HELP rxpath_filter_rule_packets_total Packets a filter rule decided (rule=\"policy\": the chain's policy).\n"
			"# TYPE rxpath_filter_rule_packets_total counter\n");
	for (unsigned pass = 0; pass < 2; pass++) {
		const char *name = pass ? "rxpath_filter_rule_bytes_total" : "rxpath_filter_rule_packets_total";

		if (pass)
			rxp_sbuf_printf(out, "# HELP %s Bytes (IP) of the packets a filter rule decided.\n# TYPE %s counter\n",
					name, name);
		for (unsigned c = 0; c < DP_CHAINS; c++)
			for (unsigned i = 0; i <= f->n[c]; i++) {
				uint64_t pk, by;
				char rule[16];

				dp_filter_counts(dp, c, i, &pk, &by);
				if (i < f->n[c])
					snprintf(rule, sizeof(rule), "%u", i + 1);
				else
					snprintf(rule, sizeof(rule), "policy");
				rxp_sbuf_printf(out, "%s{chain=\"%s\",rule=\"%s\"} %" PRIu64 "\n", name,
						filter_chain_name(c), rule, pass ? by : pk);
			}
	}
	if (f->ct)
		rxp_ct_stats(f->ct, &s);
	else
		s.max = f->ct_cfg.max;
	rxp_sbuf_printf(out, "# HELP rxpath_conntrack_entries Connections tracked now.\n# TYPE rxpath_conntrack_entries gauge\n"
			"rxpath_conntrack_entries %" PRIu64 "\n", s.entries);
	rxp_sbuf_printf(out, "# HELP rxpath_conntrack_max Connections the table holds at most (conntrack max).\n# TYPE rxpath_conntrack_max gauge\n"
			"rxpath_conntrack_max %" PRIu64 "\n", s.max);
#define X(field, metric, help) \
	rxp_sbuf_printf(out, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n", metric, help, metric, metric, s.field);
	RXP_CT_STATS(X)
#undef X
}
