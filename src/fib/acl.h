/* SPDX-License-Identifier: MIT */
/*
 * The packet classifier of the filter: an ordered list of rules compiled
 * into one immutable block, asked for the first rule a packet matches.
 *
 * A rule is a conjunction of ranges on the packet's fields (addresses as
 * prefixes, ports as ranges, protocol as one value or any) and of bit-mask
 * tests (ingress and egress interface, conntrack state, prefix-set
 * membership). The block is built once from the whole list (off the path of
 * packets) and only read afterwards, by any number of threads at once: a new
 * list is a new block, swapped in whole.
 */
#ifndef RXPATH_FIB_ACL_H
#define RXPATH_FIB_ACL_H

#include <stddef.h>
#include <stdint.h>
#include "core/simd.h"

#define RXP_ACL_NO_MATCH UINT32_MAX	/* what classify writes when no rule matches */
#define RXP_ACL_RULES_MAX (1u << 20)
#define RXP_ACL_ANY_PROTO 256		/* rxp_acl_rule.proto: any protocol */
#define RXP_ACL_SETS_MAX 64		/* prefix sets: bits of rxp_acl_key.src_sets/dst_sets */
#define RXP_ACL_NO_SET 0xff

/* Conntrack states as rule and key bits (a key has exactly one, or none when untracked). */
#define RXP_ACL_CT_NEW         0x01u
#define RXP_ACL_CT_ESTABLISHED 0x02u
#define RXP_ACL_CT_RELATED     0x04u
#define RXP_ACL_CT_INVALID     0x08u
#define RXP_ACL_CT_UNTRACKED   0x10u	/* the key's state when tracking is off */
#define RXP_ACL_CT_ANY         0xffu

struct rxp_acl_rule {
	uint8_t family;		/* 4 or 6: only packets of that family; 0: both (no address given) */
	uint8_t src_len, dst_len;	/* prefix lengths (0: any) */
	uint8_t src_set, dst_set;	/* RXP_ACL_NO_SET, or a set id below RXP_ACL_SETS_MAX */
	uint8_t src[16], dst[16];	/* network order; IPv4 in the first 4 bytes; bits past the length are 0 */
	uint16_t proto;		/* IPPROTO_*, or RXP_ACL_ANY_PROTO */
	/*
	 * Inclusive ranges, host order; 0..65535 is any. For ICMP and ICMPv6
	 * the key's sport is the type and its dport the code, so `icmp-type T`
	 * is sport T..T.
	 */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint64_t in_ifs, out_ifs;	/* bit per interface index; ~0: any */
	uint8_t ct_states;	/* RXP_ACL_CT_* bits; RXP_ACL_CT_ANY: any */
};

/* What a packet presents to the classifier. */
struct rxp_acl_key {
	uint8_t src[16], dst[16];	/* network order; IPv4 in the first 4 bytes, the rest 0 */
	uint16_t sport, dport;	/* host order; ICMP: type and code; 0 when the protocol has none */
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;
	uint8_t ct_state;	/* one RXP_ACL_CT_* bit */
	uint8_t in_if, out_if;	/* interface indexes (below 64) */
	uint64_t src_sets, dst_sets;	/* bit per set holding the source, the destination */
};

/*
 * IPv4 keys as rows, for rxp_acl_classify4(): what struct rxp_acl_key holds
 * of up to RXP_ACL_BURST IPv4 packets, one field a row (addresses in host
 * order), which the lookups that take a field of many keys at once read as
 * it is, with no transposing. Entries past the burst's length are not read
 * for any answer.
 */
#define RXP_ACL_BURST 64
struct rxp_acl_rows4 {
	_Alignas(64) uint32_t src[RXP_ACL_BURST];
	_Alignas(64) uint32_t dst[RXP_ACL_BURST];
	_Alignas(64) uint32_t sport[RXP_ACL_BURST];	/* ICMP: the type */
	_Alignas(64) uint32_t dport[RXP_ACL_BURST];	/* ICMP: the code */
	_Alignas(64) uint32_t proto[RXP_ACL_BURST];
	uint8_t ct_state[RXP_ACL_BURST], in_if[RXP_ACL_BURST], out_if[RXP_ACL_BURST];
	uint64_t src_sets[RXP_ACL_BURST], dst_sets[RXP_ACL_BURST];
};

struct rxp_acl;

/*
 * Compiles @rules[0..@n) (in order: the first that matches wins) into a new
 * block. Returns it, or NULL with a message in @err (out of memory, a rule
 * past the limits).
 */
struct rxp_acl *rxp_acl_build(const struct rxp_acl_rule *rules, uint32_t n, char *err, size_t errlen);

void rxp_acl_free(struct rxp_acl *acl);

/* Writes to @match[i] the index of the first rule @keys[i] matches, or RXP_ACL_NO_MATCH. */
void rxp_acl_classify(const struct rxp_acl *acl, const struct rxp_acl_key *keys, uint32_t *match,
		      unsigned n);

/* The same for @n (at most RXP_ACL_BURST) IPv4 keys given as rows. */
void rxp_acl_classify4(const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows, uint32_t *match,
		       unsigned n);

/* Key @i of @rows as a struct rxp_acl_key. */
void rxp_acl_rows4_key(const struct rxp_acl_rows4 *rows, unsigned i, struct rxp_acl_key *k);

/* The same for one key. */
uint32_t rxp_acl_classify_one(const struct rxp_acl *acl, const struct rxp_acl_key *key);

/* The widest lookups this CPU runs (what RXPATH_SIMD may ask for; core/simd.h). */
enum rxp_simd rxp_acl_simd_have(void);

/* Bytes the block takes. */
size_t rxp_acl_memory(const struct rxp_acl *acl);

/*
 * Returns true when @r can match no packet: an empty port range, no
 * conntrack state, no interface, a prefix longer than its family's
 * addresses, or an address length on a rule of family 0. Build skips such
 * rules.
 */
_Bool rxp_acl_rule_void(const struct rxp_acl_rule *r);

/*
 * Returns true when @r matches @k: the reference the classifier answers as
 * (slow: for checks and tools). Keys of a family other than 4 and 6 match
 * nothing. A mask of ~0 (interfaces) or RXP_ACL_CT_ANY (states) matches
 * every key, even an interface index past 63 or a key with no state;
 * otherwise the key's bit must be in the rule's mask.
 */
_Bool rxp_acl_rule_matches(const struct rxp_acl_rule *r, const struct rxp_acl_key *k);

#endif
