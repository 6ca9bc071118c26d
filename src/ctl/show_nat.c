/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "engine/dp_filter.h"
#include "nat_verbs.h"
#include "rxpath/proto.h"
#include "show_nat.h"

#define USE_MAX 64	/* outside addresses and protocols listed */

struct use {
	uint32_t addr;
	uint8_t proto;
	uint32_t pool_id;
	uint32_t n;
};

struct uses {
	struct use u[USE_MAX];
	unsigned n;
	uint64_t more;		/* mappings past the list's room */
};

static int count_use(const struct rxp_nat_mapping *mp, void *ctx)
{
	struct uses *us = ctx;

	for (unsigned i = 0; i < us->n; i++) {
		if (us->u[i].addr == mp->out_addr && us->u[i].proto == mp->proto && us->u[i].pool_id == mp->pool_id) {
			us->u[i].n++;
			return 0;
		}
	}
	if (us->n == USE_MAX) {
		us->more++;
		return 0;
	}
	us->u[us->n++] = (struct use){ mp->out_addr, mp->proto, mp->pool_id, 1 };
	return 0;
}

/* The ports (ICMP: identifiers) a pool's address has for @proto: its range, or all 65,535. */
static uint32_t room_of(const struct dp_nat *nat, const struct use *u)
{
	for (unsigned i = 0; i < nat->n; i++) {
		const struct dp_nat_cmd *c = &nat->rules[i].c;

		if ((uint32_t)nat->rules[i].id == u->pool_id && c->kind == RXP_NAT_SNAT && c->port_lo &&
		    u->proto != RXP_IPPROTO_ICMP)
			return (uint32_t)(c->port_hi - c->port_lo) + 1;
	}
	return 65535;
}

static const char *proto_name(uint8_t p)
{
	return p == RXP_IPPROTO_TCP ? "tcp" : p == RXP_IPPROTO_UDP ? "udp" : p == RXP_IPPROTO_ICMP ? "icmp" : "?";
}

int show_nat_run(struct dp *dp, void *arg, struct rxp_sbuf *o)
{
	const bool *json = arg;
	const struct dp_nat *nat = &dp->filter->nat;
	struct uses *us = calloc(1, sizeof(*us));

	if (!us)
		return -ENOMEM;
	if (nat->map)
		rxp_nat_map_walk(nat->map, count_use, us);
	if (*json)
		rxp_sbuf_printf(o, "{\"filtering\":\"%s\",\"rules\":[", nat_filtering_name(nat->filtering));
	else
		rxp_sbuf_printf(o, "nat: %u rule%s, filtering %s\n", nat->n, nat->n == 1 ? "" : "s",
				nat_filtering_name(nat->filtering));
	for (unsigned i = 0; i < nat->n; i++) {
		uint64_t hits = __atomic_load_n(nat->rules[i].hits, __ATOMIC_RELAXED);

		if (*json)
			rxp_sbuf_printf(o, "%s{\"number\":%u,\"rule\":\"%s\",\"connections\":%" PRIu64 "}", i ? "," : "",
					i + 1, nat->rules[i].c.text, hits);
		else
			rxp_sbuf_printf(o, "  %4u  %-64s %12" PRIu64 " connections\n", i + 1, nat->rules[i].c.text, hits);
	}
	if (*json)
		rxp_sbuf_printf(o, "],\"mappings\":%u,\"mappings_max\":%u,\"in_use\":[", nat->map ? rxp_nat_map_count(nat->map) : 0,
				nat->map ? rxp_nat_map_max(nat->map) : 0);
	else
		rxp_sbuf_printf(o, "mappings: %u of %u\n", nat->map ? rxp_nat_map_count(nat->map) : 0,
				nat->map ? rxp_nat_map_max(nat->map) : 0);
	for (unsigned i = 0; i < us->n; i++) {
		char s[INET_ADDRSTRLEN];
		uint32_t a = htonl(us->u[i].addr);
		uint32_t room = room_of(nat, &us->u[i]);

		inet_ntop(AF_INET, &a, s, sizeof(s));
		if (*json)
			rxp_sbuf_printf(o, "%s{\"address\":\"%s\",\"proto\":\"%s\",\"mappings\":%u,\"ports_free\":%u}",
					i ? "," : "", s, proto_name(us->u[i].proto), us->u[i].n,
					room > us->u[i].n ? room - us->u[i].n : 0);
		else
			rxp_sbuf_printf(o, "  %-15s %-4s %8u mappings %8u ports free\n", s, proto_name(us->u[i].proto),
					us->u[i].n, room > us->u[i].n ? room - us->u[i].n : 0);
	}
	if (*json)
		rxp_sbuf_printf(o, "]}\n");
	free(us);
	return o->oom ? -ENOMEM : 0;
}

void show_nat_metrics(struct dp *dp, struct rxp_sbuf *out)
{
	const struct dp_nat *nat;
	struct uses *us;

	if (!dp->filter)
		return;
	nat = &dp->filter->nat;
	us = calloc(1, sizeof(*us));
	if (!us)
		return;
	if (nat->map)
		rxp_nat_map_walk(nat->map, count_use, us);
	rxp_sbuf_printf(out, "# HELP rxpath_nat_rule_connections_total Connections a NAT rule translated.\n"
			"# TYPE rxpath_nat_rule_connections_total counter\n");
	for (unsigned i = 0; i < nat->n; i++)
		rxp_sbuf_printf(out, "rxpath_nat_rule_connections_total{rule=\"%u\"} %" PRIu64 "\n", i + 1,
				__atomic_load_n(nat->rules[i].hits, __ATOMIC_RELAXED));
	rxp_sbuf_printf(out, "# HELP rxpath_nat_mappings NAT mappings in use.\n# TYPE rxpath_nat_mappings gauge\n"
			"rxpath_nat_mappings %u\n", nat->map ? rxp_nat_map_count(nat->map) : 0);
	rxp_sbuf_printf(out, "# HELP rxpath_nat_mappings_max NAT mappings the table holds at most.\n"
			"# TYPE rxpath_nat_mappings_max gauge\nrxpath_nat_mappings_max %u\n",
			nat->map ? rxp_nat_map_max(nat->map) : 0);
	rxp_sbuf_printf(out, "# HELP rxpath_nat_address_mappings NAT mappings in use by outside address and protocol.\n"
			"# TYPE rxpath_nat_address_mappings gauge\n");
	for (unsigned i = 0; i < us->n; i++) {
		char s[INET_ADDRSTRLEN];
		uint32_t a = htonl(us->u[i].addr);

		inet_ntop(AF_INET, &a, s, sizeof(s));
		rxp_sbuf_printf(out, "rxpath_nat_address_mappings{address=\"%s\",proto=\"%s\"} %u\n", s,
				proto_name(us->u[i].proto), us->u[i].n);
	}
	free(us);
}
