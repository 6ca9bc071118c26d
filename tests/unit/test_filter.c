/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the filter's commands and their application
 * (src/ctl/filter_verbs.c, src/engine/dp_filter.c, src/net/filter.c):
 * lines that parse and lines refused with the word and the reason; rules
 * counted as sim traffic goes through them, first match winning; the
 * policy; take-backs (del, flush, policy, set prefixes) putting the state
 * back; a reload's diff of the ordered rules; show filter's JSON; and the
 * buffer audit with tracking on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/sbuf.h"
#include "ctl/words.h"
#include "ctl/config.h"
#include "ctl/reload.h"
#include "ctl/show_filter.h"
#include "engine/dataplane.h"
#include "engine/dp_filter.h"
#include "engine/loop.h"
#include "check.h"

#define ERR_LEN 512

static const char *const base_lines[] = {
	"port add p0 sim:proto=udp4,size=64,flows=64,dst4=16.0.0.0/7,count=2000",
	"port add p1 sim:rx=off",
	"addr add 198.18.1.1/16 dev p0",
	"addr add 10.0.1.1/24 dev p1",
	"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1",
	"route add 16.0.0.0/7 via 10.0.1.2",
};

/* A config of the base lines and @extra (NULL-ended). Returns 0 or the first error. */
static int config_of(struct dp_config *cfg, const char *const *extra, char *err)
{
	dp_config_default(cfg);
	for (size_t i = 0; i < RXP_ARRAY_SIZE(base_lines); i++)
		if (config_apply_line(cfg, base_lines[i], "base", err, ERR_LEN))
			return -EINVAL;
	for (size_t i = 0; extra && extra[i]; i++) {
		char where[32];

		snprintf(where, sizeof(where), "t:%zu", i + 1);
		if (config_apply_line(cfg, extra[i], where, err, ERR_LEN))
			return -EINVAL;
	}
	return 0;
}

/* Runs @dp until its finite input is done. */
static void run_all(struct dp *dp)
{
	struct dp_loop loop = { .until_finished = true, .duration = 10 };

	dp_loop_run(dp, 0, &loop);
}

static uint64_t packets_of(struct dp *dp, unsigned chain, unsigned rule)
{
	uint64_t pk, by;

	dp_filter_counts(dp, chain, rule, &pk, &by);
	return pk;
}

static void test_lines_good(void)
{
	static const char *const good[] = {
		"filter add forward accept",
		"filter add input in p0 proto tcp dport 22 accept",
		"filter add forward in p0 out p1 src 10.0.0.0/8 dst 16.0.0.0/8 proto udp sport 1-1024 dport 9 drop",
		"filter add forward proto icmp icmp-type echo-request accept",
		"filter add forward proto icmpv6 icmp-type 128 reject",
		"filter add forward ct-state established,related accept",
		"filter add output dst 2001:db8::/32 proto 47 drop",
		"filter set add blocked 192.0.2.0/24 2001:db8:bad::/48 198.51.100.7",
		"filter set add empty",
		"filter add forward src @blocked drop",
		"filter set del blocked 198.51.100.7",
		"filter policy forward drop",
		"filter del forward 1",
		"filter flush forward",
		"filter flush",
		"conntrack max 4096",
		"conntrack timeout tcp_established 3600",
		"conntrack tcp liberal on",
		NULL,
	};
	struct dp_config cfg;
	char err[ERR_LEN] = "";

	CHECK_EQ(config_of(&cfg, good, err), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK_EQ(cfg.ct_max, 4096);
	dp_config_free(&cfg);
}

static void test_lines_bad(void)
{
	static const struct { const char *line, *has; } bad[] = {
		{ "filter add forward src 10.0.0.0/8 dst 2001:db8::/32 accept", "could never match" },
		{ "filter add forward proto icmpv6 src 10.0.0.0/8 accept", "could never match" },
		{ "filter add forward sport 22 accept", "'proto tcp' or 'proto udp' before it" },
		{ "filter add forward proto udp icmp-type 8 accept", "'proto icmp' or 'proto icmpv6'" },
		{ "filter add forward proto tcp dport 80", "expected a verdict last" },
		{ "filter add forward proto tcp dport 80 permit", "accept, drop or reject last" },
		{ "filter add forward proto tcp dport 90-80 accept", "N <= M" },
		{ "filter add forward ct-state fresh accept", "new, established, related, invalid" },
		{ "filter add forward src 10.0.0.0/33 accept", "prefix" },
		{ "filter add forward src @9x drop", "set's name" },
		{ "filter add sideways accept", "input, forward or output" },
		{ "filter add input out p1 accept", "no out port" },
		{ "filter add output in p0 accept", "no in port" },
		{ "filter add output proto icmpv6 icmp-type nd-router-advert drop", "never act" },
		{ "filter add forward proto tcp proto udp accept", "given twice" },
		{ "filter policy forward reject", "accept|drop" },
		{ "filter del forward 0", "rule's number" },
		{ "filter set add", "set's name" },
		{ "filter set del blocked", "the prefixes" },
		{ "filter set add s 10.0.0.0/8 nonsense", "prefix" },
		{ "conntrack max 10", "1024" },
		{ "conntrack timeout tcp_forever 10", "tcp_established" },
		{ "conntrack tcp liberal maybe", "on|off" },
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		struct dp_config cfg;
		const char *one[] = { bad[i].line, NULL };
		char err[ERR_LEN] = "";
		unsigned before;

		config_of(&cfg, NULL, err);
		before = cfg.n_cmds;
		CHECK_EQ(config_apply_line(&cfg, one[0], "bad.conf:7", err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].has) || !strstr(err, "bad.conf:7")) {
			printf("  '%s': got \"%s\", expected it to name the line and say \"%s\"\n", bad[i].line,
			       err, bad[i].has);
			check_failures++;
		}
		CHECK_EQ(cfg.n_cmds, before);	/* nothing of the line stays */
		dp_config_free(&cfg);
	}
}

/* The rules count what they decide; the first that matches wins; the policy counts the rest. */
static void test_counts_first_match(void)
{
	static const char *const rules[] = {
		"filter add forward dst 16.0.0.0/8 accept",	/* about half the flows */
		"filter add forward dst 16.0.0.0/7 accept",	/* the rest: 17/8 */
		"filter add forward accept",			/* never reached */
		"filter policy forward drop",
		NULL,
	};
	struct dp_config cfg;
	struct dp dp;
	char err[ERR_LEN] = "";
	uint64_t a, b;

	CHECK_EQ(config_of(&cfg, rules, err), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	run_all(&dp);
	a = packets_of(&dp, DP_CHAIN_FORWARD, 0);
	b = packets_of(&dp, DP_CHAIN_FORWARD, 1);
	CHECK(a > 0 && b > 0);
	CHECK_EQ(a + b, 2000);
	CHECK_EQ(packets_of(&dp, DP_CHAIN_FORWARD, 2), 0);
	CHECK_EQ(packets_of(&dp, DP_CHAIN_FORWARD, 3), 0);	/* the policy */
	CHECK_EQ(dp_close(&dp), 0);
}

/* A drop policy drops what no rule takes, under filter_drop; tracking on, the buffers all come back. */
static void test_policy_and_tracking(void)
{
	static const char *const rules[] = {
		"filter add forward ct-state established accept",
		"filter add forward dst 17.0.0.0/8 ct-state new accept",
		"filter policy forward drop",
		NULL,
	};
	struct dp_config cfg;
	struct dp dp;
	struct rxp_stack_stats s;
	char err[ERR_LEN] = "";

	CHECK_EQ(config_of(&cfg, rules, err), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	CHECK(dp.filter->ct != NULL);
	run_all(&dp);
	dp_stack_stats(&dp, &s);
	CHECK(s.drops[RXP_DROP_FILTER_DROP] > 0);
	CHECK(s.forwarded > 0);
	CHECK_EQ(s.forwarded + s.drops[RXP_DROP_FILTER_DROP], 2000);
	CHECK_EQ(packets_of(&dp, DP_CHAIN_FORWARD, 2), s.drops[RXP_DROP_FILTER_DROP]);
	CHECK_EQ(dp_close(&dp), 0);
}

static int apply(struct dp *dp, const char *line)
{
	struct dp_config scratch;
	char err[ERR_LEN];
	int ret;

	dp_config_default(&scratch);
	for (size_t i = 0; i < 2; i++)
		config_apply_line(&scratch, base_lines[i], "base", err, sizeof(err));
	scratch.n_cmds = 0;
	ret = config_apply_line(&scratch, line, "t", err, sizeof(err));
	for (unsigned i = 0; !ret && i < scratch.n_cmds; i++)
		ret = dp_apply_cmd(dp, &scratch.cmds[i], err, sizeof(err));
	if (ret)
		printf("  %s: %s\n", line, err);
	dp_config_free(&scratch);
	if (!ret)
		ret = dp_filter_commit(dp, err, sizeof(err));
	return ret;
}

/* The filter's state as show filter's JSON says it (without the compile's time, which varies). */
static char *show_json(struct dp *dp)
{
	struct rxp_sbuf o = { 0 };
	bool json = true;
	char *t;

	show_filter_run(dp, &json, &o);
	t = o.data ? strstr(o.data, ",\"build_ms\"") : NULL;
	if (t)
		*t = '\0';
	return o.data;
}

/* Each kind's inverse, taken before it, puts the state back (ctl's all or nothing, a reload's take-back). */
static void test_inverse_roundtrip(void)
{
	static const char *const setup[] = {
		"filter set add s 10.0.0.0/8",
		"filter add forward src @s drop",
		"filter add forward proto udp dport 9 accept",
		"filter add input proto icmp accept",
		"filter policy forward drop",
		NULL,
	};
	static const char *const changes[] = {
		"filter del forward 1", "filter flush forward", "filter flush", "filter policy forward accept",
		"filter add forward proto tcp reject", "filter set add s 192.0.2.0/24", "filter set del s 10.0.0.0/8",
		"conntrack timeout udp 5", "conntrack tcp liberal on",
	};
	struct dp_config cfg;
	struct dp dp;
	char err[ERR_LEN] = "";

	CHECK_EQ(config_of(&cfg, setup, err), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	for (size_t i = 0; i < RXP_ARRAY_SIZE(changes); i++) {
		struct dp_config scratch;
		char *before = show_json(&dp), *after;
		struct dp_cmd inv[8];
		bool has[8];
		uint32_t s4 = rxp_pset_count(dp.filter->sets[0].ps, 4);
		uint32_t t_udp = dp.filter->ct_cfg.timeout[RXP_CT_TO_UDP];
		bool liberal = dp.filter->ct_cfg.tcp_liberal;

		dp_config_default(&scratch);
		config_apply_line(&scratch, base_lines[0], "b", err, sizeof(err));
		config_apply_line(&scratch, base_lines[1], "b", err, sizeof(err));
		scratch.n_cmds = 0;
		CHECK_EQ(config_apply_line(&scratch, changes[i], "t", err, sizeof(err)), 0);
		for (unsigned k = 0; k < scratch.n_cmds && k < 8; k++) {
			has[k] = dp_cmd_inverse(&dp, &scratch.cmds[k], &inv[k]);
			CHECK_EQ(dp_apply_cmd(&dp, &scratch.cmds[k], err, sizeof(err)), 0);
		}
		CHECK_EQ(dp_filter_commit(&dp, err, sizeof(err)), 0);
		for (unsigned k = scratch.n_cmds; k-- > 0;)
			if (k < 8 && has[k])
				CHECK_EQ(dp_apply_cmd(&dp, &inv[k], err, sizeof(err)), 0);
		CHECK_EQ(dp_filter_commit(&dp, err, sizeof(err)), 0);
		after = show_json(&dp);
		if (strcmp(before, after)) {
			printf("  after '%s' and its take-back:\n  %s\n  was\n  %s\n", changes[i], after, before);
			check_failures++;
		}
		CHECK_EQ(rxp_pset_count(dp.filter->sets[0].ps, 4), s4);
		CHECK_EQ(dp.filter->ct_cfg.timeout[RXP_CT_TO_UDP], t_udp);
		CHECK_EQ(dp.filter->ct_cfg.tcp_liberal, liberal);
		free(before);
		free(after);
		dp_config_free(&scratch);
	}
	CHECK_EQ(dp_close(&dp), 0);
}

/* Rules that refer to what is not there are refused, and change nothing. */
static void test_apply_errors(void)
{
	struct dp_config cfg;
	struct dp dp;
	char err[ERR_LEN] = "";

	CHECK_EQ(config_of(&cfg, NULL, err), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	CHECK(apply(&dp, "filter add forward src @nothere drop") != 0);
	CHECK(apply(&dp, "filter add forward in p9 drop") != 0);
	CHECK(apply(&dp, "filter del forward 1") != 0);
	CHECK(apply(&dp, "filter set del nothere 10.0.0.0/8") != 0);
	CHECK_EQ(dp.filter->n[DP_CHAIN_FORWARD], 0);
	CHECK(dp_stack(&dp, 0)->filter == NULL);	/* nothing filters yet: no cost */
	CHECK_EQ(apply(&dp, "filter add forward proto tcp drop"), 0);
	CHECK(dp_stack(&dp, 0)->filter != NULL);
	CHECK(dp.filter->ct == NULL);	/* no state asked: no tracking */
	CHECK_EQ(apply(&dp, "filter flush"), 0);
	CHECK(dp_stack(&dp, 0)->filter == NULL);
	CHECK_EQ(dp_close(&dp), 0);
}

/* A reload compares each chain's rules as a list: the same list changes nothing, another replaces it. */
static void test_reload_rules(void)
{
	static const char *const a[] = {
		"filter add forward proto tcp dport 22 accept", "filter add forward proto udp drop",
		"filter policy forward drop", "filter set add s 10.0.0.0/8", NULL,
	};
	static const char *const same[] = {	/* the same end state, said otherwise */
		"filter add forward proto udp drop", "filter add forward proto tcp dport 22 accept",
		"filter del forward 1", "filter add forward proto udp drop",
		"filter policy forward drop", "filter set add s 10.0.0.0/8", NULL,
	};
	static const char *const other[] = {
		"filter add forward proto udp drop", "filter add forward proto tcp dport 22 accept",
		"filter set add s 10.0.0.0/8 192.0.2.0/24", NULL,
	};
	struct dp_config ca, cs, co;
	struct dp_cmd *diff = NULL;
	char err[ERR_LEN] = "";
	long n;
	unsigned flush = 0, add = 0, policy = 0, set = 0;

	CHECK_EQ(config_of(&ca, a, err), 0);
	CHECK_EQ(config_of(&cs, same, err), 0);
	CHECK_EQ(config_of(&co, other, err), 0);
	n = reload_diff(&ca, &cs, &diff);
	CHECK_EQ(n, 0);
	free(diff);
	diff = NULL;
	n = reload_diff(&ca, &co, &diff);
	for (long i = 0; i < n; i++) {
		flush += diff[i].kind == DP_CMD_FILTER_FLUSH;
		add += diff[i].kind == DP_CMD_FILTER_ADD;
		policy += diff[i].kind == DP_CMD_FILTER_POLICY && diff[i].filter.verdict == DP_VERDICT_ACCEPT;
		set += diff[i].kind == DP_CMD_SET_ADD;
		/* the set's prefix before the rules, the flush before the adds */
		if (diff[i].kind == DP_CMD_FILTER_ADD)
			CHECK(flush == 1 && set == 1);
	}
	CHECK_EQ(flush, 1);
	CHECK_EQ(add, 2);
	CHECK_EQ(policy, 1);	/* the policy gone from the file: back to accept */
	CHECK_EQ(set, 1);	/* only the new prefix */
	free(diff);
	diff = NULL;
	/* back from other to a: the new prefix goes, in one del; nothing else of the set changes */
	n = reload_diff(&co, &ca, &diff);
	set = 0;
	for (long i = 0; i < n; i++)
		if (diff[i].kind == DP_CMD_SET_DEL) {
			set++;
			CHECK_EQ(diff[i].filter.n_prefixes, 1);
			CHECK_EQ(diff[i].filter.prefixes[0].addr[0], 192);
		} else {
			CHECK(diff[i].kind != DP_CMD_SET_ADD);
		}
	CHECK_EQ(set, 1);
	free(diff);
	dp_config_free(&ca);
	dp_config_free(&cs);
	dp_config_free(&co);
}

/* A line of many prefixes is a few commands of many each, and a failed one takes its own back. */
static void test_set_commands(void)
{
	struct dp_config cfg;
	struct dp dp;
	char line[CMD_LINE_MAX], err[ERR_LEN] = "";
	size_t at;

	CHECK_EQ(config_of(&cfg, NULL, err), 0);
	at = (size_t)snprintf(line, sizeof(line), "filter set add big");
	for (unsigned i = 0; i < 50; i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, " 10.%u.0.0/16", i);
	CHECK_EQ(config_apply_line(&cfg, line, "t", err, sizeof(err)), 0);
	CHECK_EQ(cfg.n_cmds, RXP_ARRAY_SIZE(base_lines) - 2 + 3);	/* 22 + 22 + 6 */
	CHECK_EQ(cfg.cmds[cfg.n_cmds - 1].filter.n_prefixes, 50 - 2 * DP_SET_PREFIXES_PER_CMD);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	CHECK_EQ(rxp_pset_count(dp.filter->sets[0].ps, 4), 50);
	/* a del naming one that is not there changes nothing, the others included */
	CHECK(apply(&dp, "filter set del big 10.1.0.0/16 10.99.0.0/16") != 0);
	CHECK_EQ(rxp_pset_count(dp.filter->sets[0].ps, 4), 50);
	CHECK_EQ(apply(&dp, "filter set del big 10.1.0.0/16 10.2.0.0/16"), 0);
	CHECK_EQ(rxp_pset_count(dp.filter->sets[0].ps, 4), 48);
	CHECK_EQ(dp_close(&dp), 0);
}

/* show filter --json: every chain, the rules with their text and counters, the sets. */
static void test_show_json(void)
{
	static const char *const rules[] = {
		"filter set add s 10.0.0.0/8 2001:db8::/32",
		"filter add forward src @s drop",
		"filter add forward proto udp dport 9 accept",
		NULL,
	};
	struct dp_config cfg;
	struct dp dp;
	char err[ERR_LEN] = "", *j;

	CHECK_EQ(config_of(&cfg, rules, err), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), 0);
	dp_config_free(&cfg);
	run_all(&dp);
	j = show_json(&dp);
	CHECK(j && strstr(j, "{\"chain\":\"input\",\"policy\":\"accept\""));
	CHECK(j && strstr(j, "{\"number\":1,\"rule\":\"src @s drop\",\"verdict\":\"drop\",\"packets\":0"));
	CHECK(j && strstr(j, "{\"number\":2,\"rule\":\"proto udp dport 9 accept\",\"verdict\":\"accept\",\"packets\":2000,"));
	CHECK(j && strstr(j, "{\"name\":\"s\",\"ipv4\":1,\"ipv6\":1,\"rules\":1}"));
	free(j);
	CHECK_EQ(dp_close(&dp), 0);
}

int main(void)
{
	RUN(test_lines_good);
	RUN(test_lines_bad);
	RUN(test_counts_first_match);
	RUN(test_policy_and_tracking);
	RUN(test_inverse_roundtrip);
	RUN(test_apply_errors);
	RUN(test_reload_rules);
	RUN(test_show_json);
	RUN(test_set_commands);
	return tests_done();
}
