/* SPDX-License-Identifier: MIT */
/*
 * The classifier's block, shared by its builder (acl_build.c) and its
 * lookups (acl_scan.c, acl_avx512.c). Not for use outside src/fib, except
 * the test hooks at the end.
 *
 * Rules are boxes over 11 fields of 32 bits: the source and destination as
 * four words each (an IPv4 address is word 0, the others 0), the ports and
 * the protocol. A prefix is exactly a product of per-word ranges, so a rule
 * is one range per field plus the bit-mask tests ("extras": interfaces,
 * conntrack state, sets), which are checked apart and only for the few rules
 * that have them.
 *
 * Each family has up to ACL_TREES_MAX decision trees, the rules partitioned
 * by whether the source and the destination are wide (short prefixes) so
 * that cutting one field does not copy the rules that are wide on it. A
 * packet's answer is the smallest rule index any tree gives; the trees are
 * kept in the order of their first rule, so a tree whose first rule comes
 * after the best answer so far is skipped.
 *
 * A tree is an array of 32-bit slots. An inner node cuts one or two fields
 * into 2^k equal parts by bits of the key; a leaf holds at most
 * ACL_LEAF_RULES rules laid out for one SIMD comparison per four rules; a
 * chain is a list of leaves scanned in order, for rules no cut separates.
 * A tree of at most ACL_LINEAR_MAX rules is a linear list instead.
 */
#ifndef RXPATH_FIB_ACL_PRIV_H
#define RXPATH_FIB_ACL_PRIV_H

#include <stdbool.h>
#include "fib/acl.h"

#define ACL_FIELDS 11
enum {
	ACL_F_SRC0, ACL_F_SRC1, ACL_F_SRC2, ACL_F_SRC3,
	ACL_F_DST0, ACL_F_DST1, ACL_F_DST2, ACL_F_DST3,
	ACL_F_SPORT, ACL_F_DPORT, ACL_F_PROTO,
};

#define ACL_LEAF_RULES 8
#define ACL_TREES_MAX 4
#define ACL_BURST 64u		/* keys walked together by rxp_acl_classify */
_Static_assert(ACL_BURST == RXP_ACL_BURST, "a burst of rows is a burst of keys");
#define ACL_LANES4 8		/* IPv4 leaf: 16-bit lanes per rule */
#define ACL_LANES6 16		/* IPv6 leaf: 32-bit lanes per rule */

/*
 * Slots. Low two bits: the kind. A leaf: n rules (bits 2-5; 0 is the empty
 * leaf, slot 0), bit 6 set when one of its rules has extras, and its offset
 * in the leaf area in 16-byte units (bits 7-31). A node, a chain or a linear
 * list: an index (bits 2-31) into the nodes, or into the slots where the
 * chain's count and then its leaf slots are, or the list's program.
 *
 * A linear list is a tree's whole rule set when it is small: every key is
 * tested against every rule, which SIMD does for 16 keys at once (a field of
 * 16 keys in one vector). Its program: the rule count, then per rule its
 * index, its check count (bits 0-15; bits 16-31: how many of them are
 * ranges, which come first) and the checks, three words each (kind << 8 |
 * field, a, b): a range (field - a <= b, unsigned) or a bit-mask test.
 */
#define ACL_SLOT_LEAF 0u
#define ACL_SLOT_NODE 1u
#define ACL_SLOT_CHAIN 2u
#define ACL_SLOT_LINEAR 3u
#define ACL_SLOT_EXTRAS 0x40u
#define ACL_LEAF_UNIT 16u

static inline unsigned acl_slot_kind(uint32_t s)
{
	return s & 3u;
}

static inline unsigned acl_leaf_n(uint32_t s)
{
	return (s >> 2) & 15u;
}

/*
 * An inner node: child i = (i1 << sh | i2) with i1 = (key field f1 >> s1) &
 * m1 and i2 = (key field f2 >> s2) & m2 (a one-field cut has m2 = 0), of
 * 2^cell_bits children. Dense, the child is slots[base + i]. Sparse (most
 * children empty), slots[base..] holds per 32 children a bitmap of the ones
 * not empty and the count of those before, then those children's slots:
 * a big root then takes a fraction of the cache.
 */
struct acl_node {
	uint32_t base;
	uint16_t m1, m2;
	uint8_t f1, s1, f2, s2;
	uint8_t sh;
	uint8_t sparse;
	uint8_t cell_bits;
	uint8_t pad;
};

#define ACL_LINEAR_MAX 16	/* rules of a tree scanned as a linear list */

enum acl_check_kind {
	ACL_CHECK_RANGE,	/* tree field @field in [a, a + b] */
	ACL_CHECK_CT,		/* the key's state is in mask a */
	ACL_CHECK_IN_IF,	/* the ingress interface is a bit of mask b:a (high:low) */
	ACL_CHECK_OUT_IF,
	ACL_CHECK_SRC_SET,	/* the source is in set a */
	ACL_CHECK_DST_SET,
};

/* The bit-mask tests of a rule that has some. */
struct acl_extra {
	uint64_t in_ifs, out_ifs;
	uint8_t ct_states, src_set, dst_set;
	uint8_t pad[5];
};

struct acl_tree {
	uint32_t root;		/* slot */
	uint32_t min_rule;	/* its first rule's index */
};

/*
 * The key as the lookups see it: the fields as 32-bit words (also the IPv6
 * leaf's lanes, 11 used of 16) and the IPv4 leaf's 16-bit lanes (source
 * high, low, destination high, low, ports, protocol, 0).
 */
struct acl_kfields {
	_Alignas(64) uint32_t f[16];
};

/* The lookups of one instruction set. */
struct acl_impl {
	const char *name;
	/*
	 * Returns the first rule of leaf or chain @slot that @k matches, or
	 * RXP_ACL_NO_MATCH; @lanes is @k's IPv4 leaf lanes or its fields (IPv6).
	 */
	uint32_t (*scan4)(const struct rxp_acl *acl, uint32_t slot, const uint16_t *lanes,
			  const struct rxp_acl_key *k);
	uint32_t (*scan6)(const struct rxp_acl *acl, uint32_t slot, const uint32_t *lanes,
			  const struct rxp_acl_key *k);
	/* rxp_acl_classify() for up to ACL_BURST keys */
	void (*classify)(const struct rxp_acl *acl, const struct rxp_acl_key *keys, uint32_t *match,
			 unsigned n);
	/* rxp_acl_classify4() */
	void (*classify4)(const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows, uint32_t *match,
			  unsigned n);
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ACL_HAVE_AVX512 1
extern const struct acl_impl acl_impl_avx512;

/* Returns true when this CPU runs acl_impl_avx512. */
bool acl_cpu_avx512(void);
#endif

struct rxp_acl {
	size_t bytes;		/* the whole block */
	const struct acl_node *nodes;
	const uint32_t *slots;
	const uint8_t *leaves;
	const struct acl_extra *extras;
	const struct acl_impl *impl;
	uint32_t n_rules;	/* given to build */
	uint32_t n_nodes, n_slots, n_leaf_bytes, n_extras;
	uint8_t n_trees[2];	/* [0]: IPv4, [1]: IPv6 */
	bool linear_extras;	/* a linear list tests interfaces, states or sets */
	struct acl_tree trees[2][ACL_TREES_MAX];
};

static inline const uint8_t *acl_leaf_at(const struct rxp_acl *acl, uint32_t slot)
{
	return acl->leaves + (size_t)(slot >> 7) * ACL_LEAF_UNIT;
}

/* Returns child @i of node @nd. */
static inline uint32_t acl_child(const struct rxp_acl *acl, const struct acl_node *nd, uint32_t i)
{
	const uint32_t *s = acl->slots + nd->base;
	uint32_t bits, rank;

	if (!nd->sparse)
		return s[i];
	bits = s[2 * (i >> 5)];
	rank = s[2 * (i >> 5) + 1] + (uint32_t)__builtin_popcount(bits & ((1u << (i & 31)) - 1));
	/* one slot past the last is 0: the load needs no branch */
	return s[(1u << nd->cell_bits >> 4) + rank] & -(bits >> (i & 31) & 1);
}

/* Returns the slot that @kf leads to from inner node slot @s. */
static inline uint32_t acl_step(const struct rxp_acl *acl, uint32_t s, const uint32_t *kf)
{
	const struct acl_node *nd = &acl->nodes[s >> 2];
	uint32_t i1 = (kf[nd->f1] >> nd->s1) & nd->m1;
	uint32_t i2 = (kf[nd->f2] >> nd->s2) & nd->m2;

	return acl_child(acl, nd, i1 << nd->sh | i2);
}

/*
 * Leaf layouts, at acl_leaf_at(): IPv4: lo[n][8] and width[n][8] as uint16_t
 * (a lane matches when (key - lo) <= width, unsigned), then the rule indexes
 * uint32_t id[n], then when the slot says so uint32_t extra[n] (index into
 * acl->extras, or UINT32_MAX). IPv6: the same with lo[n][16] and
 * width[n][16] as uint32_t.
 */
static inline const uint32_t *acl_leaf4_ids(const uint8_t *leaf, unsigned n)
{
	return (const uint32_t *)(const void *)(leaf + (size_t)n * 2 * ACL_LANES4 * sizeof(uint16_t));
}

static inline const uint32_t *acl_leaf6_ids(const uint8_t *leaf, unsigned n)
{
	return (const uint32_t *)(const void *)(leaf + (size_t)n * 2 * ACL_LANES6 * sizeof(uint32_t));
}

/* Returns the first rule of linear list @slot that @k (fields @kf) matches, or RXP_ACL_NO_MATCH. */
uint32_t acl_linear_one(const struct rxp_acl *acl, uint32_t slot, const uint32_t *kf,
			const struct rxp_acl_key *k);

/* Returns true when @k passes the bit-mask tests of @x. */
bool acl_extra_ok(const struct acl_extra *x, const struct rxp_acl_key *k);

/*
 * Returns the first rule of @hits (bit r: rule r of the leaf matched its
 * ranges) that also passes its extras, or RXP_ACL_NO_MATCH.
 */
uint32_t acl_leaf_extras(const struct rxp_acl *acl, uint32_t hits, const uint32_t *ids,
			 unsigned n, const struct rxp_acl_key *k);

/* Fills @kf and @lanes4 from @k. */
void acl_key_fields(const struct rxp_acl_key *k, struct acl_kfields *kf, uint16_t lanes4[8]);

/* Returns the lookups for this CPU (or the scalar ones when forced, below). */
const struct acl_impl *acl_impl_pick(void);

/* ---- test hooks ---- */

enum acl_impl_choice { ACL_IMPL_AUTO, ACL_IMPL_SCALAR, ACL_IMPL_AVX512 };

/*
 * Makes the next builds use @c (AVX512 only where the CPU has it). Returns
 * false when @c is not available here. Not thread-safe: for tests.
 */
bool rxp_acl_force_impl(enum acl_impl_choice c);

/* Makes the next builds store nodes of @cells children or more sparse (0: the default). */
void rxp_acl_set_sparse_min(size_t cells);

/*
 * Makes the next builds cap the block at @bytes (0: the default, 64 MiB and
 * 1 KiB per rule), so that the cheaper builds they fall back to run.
 */
void rxp_acl_set_mem_cap(size_t bytes);

/* Returns the name of the lookups @acl uses ("scalar", "avx512"). */
const char *rxp_acl_impl_name(const struct rxp_acl *acl);

#endif
