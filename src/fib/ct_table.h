/* SPDX-License-Identifier: MIT */
/*
 * The connection tracking table: a fixed array of 128-byte entries sized
 * at creation and a hash index in which both directions of an entry are
 * found. What an entry means (TCP's states, the timeouts) belongs to
 * src/net/conntrack.c; the table stores, finds, removes and reclaims.
 *
 * Index: 64-byte buckets of 10 slots, each a 16-bit signature (0: free)
 * and a reference (entry << 1 | direction). A key lives in its home bucket
 * or, when that is full, in one of the next few; a bucket's ovf counts the
 * keys stored past it, so a lookup reads one bucket nearly always. The
 * index is sized for at most half of its slots in use.
 *
 * Threads: lookups take no lock. Inserts and removals take the table's
 * spinlock when more than one worker tracks (with one worker only that
 * worker changes the table). Entries change under their own seqlock
 * (entry.seq odd while a writer is at it) when the change is structural
 * (insert, removal, a TCP state change), so that a reader outside the
 * workers (rxp_ct_walk) copies a consistent entry; packets of an
 * established connection update the timer, counters and windows with
 * relaxed atomics and no lock.
 *
 * Reuse: a removed entry may still be read by a worker that found it in
 * the index during its current poll. Each worker's counter is odd while it
 * is inside a poll (rxp_ct_table_enter/leave); a removed entry waits in a
 * limbo batch with a snapshot of the counters until every worker that was
 * inside then has left. With one worker it is reused at once. Entries in
 * limbo are not live: a spare of them beyond @max is allocated so that
 * early drop and expiry always find a free one.
 */
#ifndef RXPATH_FIB_CT_TABLE_H
#define RXPATH_FIB_CT_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "rxpath/common.h"
#include "seed.h"
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
#include <emmintrin.h>
#endif

#define RXP_CTT_NONE UINT32_MAX		/* no entry, no reference */
#define RXP_CTT_ABSENT (UINT32_MAX - 1)	/* a hint: the key's home bucket says it is not there */
#define RXP_CTT_SLOTS 10		/* per bucket */
#define RXP_CTT_PROBE 16		/* buckets a key may be stored past its home */
#define RXP_CTT_MAX_ENTRIES (1u << 27)	/* 16 GiB of entries: beyond any use */
#define RXP_CTT_WORKERS_MAX 64

/* Relaxed and acquire/release accessors for fields read while others write them. */
#define RXP_CT_LD(p)      __atomic_load_n((p), __ATOMIC_RELAXED)
#define RXP_CT_ST(p, v)   __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define RXP_CT_LDA(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RXP_CT_STR(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/*
 * Time: a tick is 2^20 ns (1.05 ms). Expiry times are 32-bit ticks compared
 * by their signed difference, so a timeout must stay below 2^31 ticks (26
 * days; conntrack.c caps them at 20) and an entry must be looked at by
 * expiry at least that often (it is, by a cursor that goes round the table).
 */
#define RXP_CT_TICK_SHIFT 20

static inline uint32_t rxp_ct_tick(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> RXP_CT_TICK_SHIFT);
}

static inline uint32_t rxp_ct_ticks_of_s(uint32_t s)
{
	return (uint32_t)(((uint64_t)s * 1000000000ull) >> RXP_CT_TICK_SHIFT);
}

static inline uint64_t rxp_ct_s_of_ticks(uint32_t t)
{
	return ((uint64_t)t << RXP_CT_TICK_SHIFT) / 1000000000ull;
}

/* True when @expires is at or before @now. */
static inline bool rxp_ct_tick_past(uint32_t expires, uint32_t now)
{
	return (int32_t)(expires - now) <= 0;
}

/*
 * A direction of a connection, as the table compares and hashes it: five
 * 64-bit words, built and read as words (a key written in small pieces and
 * read back whole stalls on store forwarding).
 */
struct rxp_ct_key {
	union {
		struct {
			uint8_t src[16], dst[16];	/* network order; IPv4 in the first 4 bytes, the rest 0 */
			uint16_t sport, dport;		/* host order; ICMP queries: the identifier in both */
			uint8_t proto, family;
			uint8_t icmp_type, icmp_code;	/* ICMP queries: the request's type (either direction), code */
		};
		uint64_t w[5];
	};
};

_Static_assert(sizeof(struct rxp_ct_key) == 40, "the key is five 64-bit words");

/* The last word of a key from its fields (the struct's layout in the host's byte order). */
static inline uint64_t rxp_ct_key_w4(uint16_t sport, uint16_t dport, uint8_t proto, uint8_t family,
				     uint8_t icmp_type, uint8_t icmp_code)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint64_t)sport | (uint64_t)dport << 16 | (uint64_t)proto << 32 | (uint64_t)family << 40 |
	       (uint64_t)icmp_type << 48 | (uint64_t)icmp_code << 56;
#else
	return (uint64_t)sport << 48 | (uint64_t)dport << 32 | (uint64_t)proto << 24 | (uint64_t)family << 16 |
	       (uint64_t)icmp_type << 8 | icmp_code;
#endif
}

/* The last word with its ports swapped: the other direction's. */
static inline uint64_t rxp_ct_w4_swap(uint64_t w4)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (w4 & ~0xffffffffull) | (w4 & 0xffff) << 16 | (w4 >> 16 & 0xffff);
#else
	return (w4 & 0xffffffffull) | (w4 >> 48) << 32 | (w4 >> 32 & 0xffff) << 48;
#endif
}

/* rxp_ct_entry.status */
#define RXP_CTE_LIVE       0x01u	/* in the index */
#define RXP_CTE_SEEN_REPLY 0x02u	/* a packet in the reply direction was seen */
#define RXP_CTE_ASSURED    0x04u	/* not to be dropped early */
#define RXP_CTE_NAT        0x08u	/* translated: the reply direction's key is its own (rxp_ct_nat) */

/*
 * One connection. Line 0 is what a lookup and the timer need (and the
 * little TCP state that fits); line 1 the byte counters and the protocol's
 * state. TCP's fields mirror Linux's ip_ct_tcp: td_end, td_maxend,
 * td_maxwin, td_maxack per direction, the last packet seen for
 * retransmissions and resynchronisation.
 */
struct rxp_ct_entry {
	struct rxp_ct_key key;		/* the original direction */
	uint32_t expires;		/* tick */
	uint32_t seq;			/* seqlock: odd while a writer changes the entry */
	uint32_t packets[2];		/* by direction (wrap after 2^32) */
	uint8_t status;			/* RXP_CTE_* */
	uint8_t l4state;		/* TCP: its state (RXP_CT_TCP_*); 0 for the others */
	uint8_t tcp_flags[2];		/* per direction: window scale, SACK, close, liberal, maxack */
	uint8_t tcp_scale[2];		/* per direction: window scale shift */
	uint8_t tcp_last;		/* last packet: index (low 3 bits), direction (bit 3) */
	uint8_t tcp_retrans;		/* retransmissions of that packet */
	/* line 1 */
	uint64_t bytes[2];
	union {
		struct {
			uint32_t end[2], maxend[2], maxwin[2], maxack[2];
			uint32_t last_seq, last_ack, last_end;
			uint16_t last_win;
			uint8_t last_opt;	/* an ignored SYN's options: scale (low 4 bits), flags */
			uint8_t unack;		/* bit per direction: data not acknowledged yet */
		} tcp;
		struct {
			uint32_t stream;	/* tick from which a replied flow is a stream */
		} udp;
	} l4;
};

_Static_assert(sizeof(struct rxp_ct_entry) == 128, "an entry is two cache lines");

/*
 * A translated connection's reply key, which is then no longer the
 * original's swapped, and the mapping it holds (src/fib/nat_map.h), in an
 * array beside the entries: untouched, it takes no memory, and only
 * translated connections read it.
 */
struct rxp_ct_nat {
	struct rxp_ct_key reply;
	uint32_t map;			/* the mapping the connection holds a reference on, or RXP_CTT_NONE */
	uint32_t rule;			/* the NAT rule's id that made it */
	uint32_t remote;		/* host order: the remote address it counts in the mapping's permits; 0: none */
	uint32_t map2;			/* a hairpinned connection's second mapping (its source's), or RXP_CTT_NONE */
};

struct rxp_ct_bucket {
	uint64_t sig4[2];		/* signatures of slots 0..7, 16 bits each (lane i at bit 16 * (i % 4)) */
	uint32_t sig2;			/* of slots 8 and 9 */
	uint32_t ovf;			/* keys stored past this bucket that passed through it */
	uint32_t ref[RXP_CTT_SLOTS];	/* entry << 1 | direction */
};

_Static_assert(sizeof(struct rxp_ct_bucket) == 64, "a bucket is a cache line");

/* Per worker counters (one writer each), summed on read. */
struct rxp_ct_wstats {
	uint64_t inserted, deleted, early_drop, table_full, invalid, searched;
} __attribute__((aligned(RXP_CACHE_LINE)));

struct rxp_ct_epoch {
	uint64_t v;			/* odd while the worker is inside a poll */
} __attribute__((aligned(RXP_CACHE_LINE)));

struct rxp_ct_limbo_batch {
	uint32_t end;			/* limbo position one past its last entry */
};

struct rxp_ct_table {
	/* read by every lookup */
	struct rxp_ct_entry *entries;
	struct rxp_ct_bucket *buckets;
	uint32_t bucket_mask;
	uint32_t max;			/* live entries allowed */
	uint32_t phys;			/* entries in the array: max and the spare for limbo */
	unsigned n_workers;
	bool locked;			/* more than one worker: writers take the lock */
	bool lock_ready;
	uint64_t seed[6];
	struct rxp_ct_nat *nat;		/* [phys], beside the entries */
	/* called (under the lock) for a translated entry leaving the index: its mapping's reference */
	void (*nat_release)(void *ctx, const struct rxp_ct_nat *n);
	void *nat_ctx;
	/* writers (under the lock) */
	rxp_cache_aligned pthread_spinlock_t lock;
	uint32_t used;			/* entries [0, used) have been handed out once (atomic: scans read it) */
	uint32_t live;			/* entries in the index (atomic: stats read it) */
	uint32_t free_top;
	uint32_t *free_stack;
	uint32_t *limbo;		/* ring of removed entries waiting for reuse */
	uint32_t limbo_head, limbo_tail, limbo_closed;	/* positions (modulo phys) */
	struct rxp_ct_limbo_batch *batches;
	uint64_t *snaps;		/* a snapshot of the workers' epochs per batch */
	uint32_t batch_head, batch_tail;
	uint32_t drop_cursor;		/* where early drop looks after the home buckets */
	/* expiry's cursor, shared by the workers */
	rxp_cache_aligned uint32_t cursor;
	struct rxp_ct_epoch *epoch;	/* [n_workers] */
	struct rxp_ct_wstats *ws;	/* [n_workers + 1]: the last for threads that are no worker */
	size_t entries_len, buckets_len, nat_len;
};

/* Returns a table of @max live entries for @n_workers workers, or NULL with errno. */
struct rxp_ct_table *rxp_ct_table_create(uint32_t max, unsigned n_workers);
void rxp_ct_table_destroy(struct rxp_ct_table *t);

/* Bytes the table maps (entries, index, lists). */
size_t rxp_ct_table_memory(const struct rxp_ct_table *t);

void rxp_ct_table_enter(struct rxp_ct_table *t, unsigned w);
void rxp_ct_table_leave(struct rxp_ct_table *t, unsigned w);

/* The writer's lock: a no-op with one worker. */
static inline void rxp_ct_table_lock(struct rxp_ct_table *t)
{
	if (t->locked)
		pthread_spin_lock(&t->lock);
}

void rxp_ct_table_unlock(struct rxp_ct_table *t);

static inline struct rxp_ct_entry *rxp_ct_table_entry(const struct rxp_ct_table *t, uint32_t idx)
{
	return &t->entries[idx];
}


/* The hash of a key's words under the table's secret seed (an attacker cannot aim at a bucket). */
static inline uint64_t rxp_ct_hash_w(const struct rxp_ct_table *t, uint64_t w0, uint64_t w1, uint64_t w2,
				     uint64_t w3, uint64_t w4)
{
	return rxp_mix64(rxp_mix64(w0 ^ t->seed[0], w1 ^ t->seed[1]) ^ rxp_mix64(w2 ^ t->seed[2], w3 ^ t->seed[3]),
			  w4 ^ t->seed[4]) ^ t->seed[5];
}

static inline uint64_t rxp_ct_hash(const struct rxp_ct_table *t, const struct rxp_ct_key *k)
{
	return rxp_ct_hash_w(t, k->w[0], k->w[1], k->w[2], k->w[3], k->w[4]);
}

static inline uint16_t rxp_ct_sig(uint64_t h)
{
	uint16_t s = (uint16_t)(h >> 48);

	return s ? s : 1;
}

static inline const struct rxp_ct_bucket *rxp_ct_bucket_of(const struct rxp_ct_table *t, uint64_t h)
{
	return &t->buckets[(uint32_t)h & t->bucket_mask];
}

static inline void rxp_ct_prefetch_bucket(const struct rxp_ct_table *t, uint64_t h)
{
	rxp_prefetch(rxp_ct_bucket_of(t, h));
}

static inline void rxp_ct_prefetch_entry(const struct rxp_ct_table *t, uint32_t idx)
{
	const struct rxp_ct_entry *e = &t->entries[idx];

	rxp_prefetchw(e);
	rxp_prefetchw((const uint8_t *)e + RXP_CACHE_LINE);
}

/* Bit 15 of each 16-bit lane of the result is set where @w's lane equals @sig. */
static inline uint64_t rxp_ct_lanes_eq(uint64_t w, uint16_t sig)
{
	const uint64_t low = 0x7fff7fff7fff7fffull;
	uint64_t x = w ^ (sig * 0x0001000100010001ull);

	return ~(((x & low) + low) | x | low);
}

/*
 * Bits 0..3 of the result are bit 15 of @m's four lanes: the multiply moves
 * bits 0, 16, 32, 48 to 48..51 and every other product to a bit of its own
 * elsewhere, so nothing carries into them.
 */
static inline uint32_t rxp_ct_lanes_gather(uint64_t m)
{
	uint64_t x = (m >> 15) & 0x0001000100010001ull;

	return (uint32_t)((x * (1ull << 48 | 1ull << 33 | 1ull << 18 | 1ull << 3)) >> 48) & 0xf;
}

/* A mask of the slots (bit i: slot i) of @b whose signature is @sig. */
static inline uint32_t rxp_ct_bucket_match(const struct rxp_ct_bucket *b, uint16_t sig)
{
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
	/* slots 0..7 in one compare; each lane is read whole, as the writers' 64-bit stores leave it */
	__m128i eq = _mm_cmpeq_epi16(_mm_load_si128((const __m128i *)b->sig4), _mm_set1_epi16((short)sig));
	uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(eq, _mm_setzero_si128()));
	uint32_t s2 = RXP_CT_LDA(&b->sig2);

	return m | (uint32_t)((s2 & 0xffff) == sig) << 8 | (uint32_t)((s2 >> 16) == sig) << 9;
#else
	uint64_t m0 = rxp_ct_lanes_eq(RXP_CT_LDA(&b->sig4[0]), sig);
	uint64_t m1 = rxp_ct_lanes_eq(RXP_CT_LDA(&b->sig4[1]), sig);
	uint64_t m2 = rxp_ct_lanes_eq(RXP_CT_LDA(&b->sig2), sig);

	return rxp_ct_lanes_gather(m0) | rxp_ct_lanes_gather(m1) << 4 |
	       (uint32_t)((m2 >> 15) & 1) << 8 | (uint32_t)((m2 >> 31) & 1) << 9;
#endif
}

/*
 * The bulk path's hint from the key's home bucket: the first slot whose
 * signature matches (its entry is to be prefetched), RXP_CTT_ABSENT when
 * none does and no key was pushed past the bucket, else RXP_CTT_NONE.
 */
static inline uint32_t rxp_ct_bucket_hint(const struct rxp_ct_table *t, uint64_t h)
{
	const struct rxp_ct_bucket *b = rxp_ct_bucket_of(t, h);
	uint32_t m = rxp_ct_bucket_match(b, rxp_ct_sig(h));

	if (m)
		return RXP_CT_LDA(&b->ref[__builtin_ctz(m)]);
	return RXP_CT_LD(&b->ovf) ? RXP_CTT_NONE : RXP_CTT_ABSENT;
}

/* @e's key seen in direction @dir equals @k. */
static inline bool rxp_ct_key_eq(const struct rxp_ct_key *e, const struct rxp_ct_key *k, unsigned dir)
{
	if (!dir)
		return !((e->w[0] ^ k->w[0]) | (e->w[1] ^ k->w[1]) | (e->w[2] ^ k->w[2]) | (e->w[3] ^ k->w[3]) |
			 (e->w[4] ^ k->w[4]));
	return !((e->w[0] ^ k->w[2]) | (e->w[1] ^ k->w[3]) | (e->w[2] ^ k->w[0]) | (e->w[3] ^ k->w[1]) |
		 (rxp_ct_w4_swap(e->w[4]) ^ k->w[4]));
}

/* Entry @idx (@e) has @k as its key in direction @dir: a translated one's reply key is its own. */
static inline bool rxp_ct_entry_has(const struct rxp_ct_table *t, uint32_t idx, const struct rxp_ct_entry *e,
				    uint8_t status, const struct rxp_ct_key *k, unsigned dir)
{
	if (rxp_unlikely(dir && (status & RXP_CTE_NAT)))
		return rxp_ct_key_eq(&t->nat[idx].reply, k, 0);
	return rxp_ct_key_eq(&e->key, k, dir);
}

/* Copies a key that a writer may be changing (read again under a seqlock or the table's lock). */
static inline void rxp_ct_key_load(struct rxp_ct_key *out, const struct rxp_ct_key *k)
{
	for (unsigned i = 0; i < 5; i++)
		out->w[i] = RXP_CT_LD(&k->w[i]);
}

/* Sets an entry's key while readers outside the index (expiry, walks) may copy it. */
static inline void rxp_ct_key_store(struct rxp_ct_key *out, const struct rxp_ct_key *k)
{
	for (unsigned i = 0; i < 5; i++)
		RXP_CT_ST(&out->w[i], k->w[i]);
}

/* @k with source and destination swapped: the other direction's key. */
static inline void rxp_ct_key_swap(struct rxp_ct_key *out, const struct rxp_ct_key *k)
{
	uint64_t w0 = k->w[0], w1 = k->w[1], w2 = k->w[2], w3 = k->w[3], w4 = k->w[4];

	out->w[0] = w2;
	out->w[1] = w3;
	out->w[2] = w0;
	out->w[3] = w1;
	out->w[4] = rxp_ct_w4_swap(w4);
}

/*
 * Finds the live entry one of whose directions is @k (hash @h): returns
 * entry << 1 | direction, or RXP_CTT_NONE. Takes no lock; the caller is
 * inside a poll (or holds the lock). Expiry is the caller's to judge.
 */
static inline uint32_t rxp_ct_table_find(const struct rxp_ct_table *t, const struct rxp_ct_key *k,
					 uint64_t h)
{
	uint16_t sig = rxp_ct_sig(h);
	uint32_t bi = (uint32_t)h & t->bucket_mask;

	for (unsigned probe = 0; probe < RXP_CTT_PROBE; probe++) {
		const struct rxp_ct_bucket *b = &t->buckets[bi];
		uint32_t m = rxp_ct_bucket_match(b, sig);

		while (m) {
			uint32_t ref = RXP_CT_LDA(&b->ref[__builtin_ctz(m)]);
			const struct rxp_ct_entry *e;

			m &= m - 1;
			if (rxp_unlikely((ref >> 1) >= t->phys))
				continue;
			uint8_t status;

			e = &t->entries[ref >> 1];
			status = RXP_CT_LDA(&e->status);
			if ((status & RXP_CTE_LIVE) && rxp_ct_entry_has(t, ref >> 1, e, status, k, ref & 1))
				return ref;
		}
		if (!RXP_CT_LD(&b->ovf))
			break;
		bi = (bi + 1) & t->bucket_mask;
	}
	return RXP_CTT_NONE;
}

/* rxp_ct_table_find() with the hint of rxp_ct_bucket_hint(), taken a little earlier. */
static inline uint32_t rxp_ct_table_find_hint(const struct rxp_ct_table *t, const struct rxp_ct_key *k,
					      uint64_t h, uint32_t hint)
{
	if (hint == RXP_CTT_ABSENT)
		return RXP_CTT_NONE;
	if (hint != RXP_CTT_NONE && (hint >> 1) < t->phys) {
		const struct rxp_ct_entry *e = &t->entries[hint >> 1];
		uint8_t status = RXP_CT_LDA(&e->status);

		if ((status & RXP_CTE_LIVE) && rxp_ct_entry_has(t, hint >> 1, e, status, k, hint & 1))
			return hint;
	}
	return rxp_ct_table_find(t, k, h);
}

/* The entry's seqlock, for writers: spins while another writer holds it. */
static inline uint32_t rxp_ct_entry_lock(struct rxp_ct_entry *e)
{
	for (;;) {
		uint32_t s = RXP_CT_LD(&e->seq);

		if (!(s & 1) && __atomic_compare_exchange_n(&e->seq, &s, s + 1, false,
							    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return s + 1;
		rxp_cpu_relax();
	}
}

static inline void rxp_ct_entry_unlock(struct rxp_ct_entry *e)
{
	RXP_CT_STR(&e->seq, RXP_CT_LD(&e->seq) + 1);
}

/*
 * Writers, under rxp_ct_table_lock(). rxp_ct_table_alloc() hands out a
 * free entry (its seqlock held, status 0), dropping an unassured entry
 * early when @max are live: returns its index, or RXP_CTT_NONE (counted
 * table_full). @h is the new key's hash: early drop looks near it first.
 * rxp_ct_table_link() puts the filled entry in the index under both
 * hashes, marks it live and releases its seqlock; it returns false (the
 * entry freed) when the buckets are full. rxp_ct_table_free_new() gives
 * back an allocated entry that is not linked.
 */
uint32_t rxp_ct_table_alloc(struct rxp_ct_table *t, unsigned w, uint64_t h, uint32_t now);
bool rxp_ct_table_link(struct rxp_ct_table *t, unsigned w, uint32_t idx, uint64_t h_orig,
		       uint64_t h_reply);
void rxp_ct_table_free_new(struct rxp_ct_table *t, uint32_t idx);

/* Removes entry @idx if live (under the lock). Returns whether it did. */
bool rxp_ct_table_delete_locked(struct rxp_ct_table *t, unsigned w, uint32_t idx);

/* The same, taking the lock. */
bool rxp_ct_table_delete(struct rxp_ct_table *t, unsigned w, uint32_t idx);

/*
 * Expiry: looks at @budget entries from the shared cursor and removes
 * those expired at @now. @limit[l4state], when not 0, is the longest an
 * entry in that state may have left (a lock-free update may have raced a
 * state change and left a longer one); longer is cut to it. Returns the
 * entries removed.
 */
unsigned rxp_ct_table_expire(struct rxp_ct_table *t, unsigned w, uint32_t now, unsigned budget,
			     const uint32_t limit[16]);

/* Removes every entry. */
void rxp_ct_table_flush(struct rxp_ct_table *t);

/* Entries [0, return) are the only ones ever handed out. */
static inline uint32_t rxp_ct_table_used(const struct rxp_ct_table *t)
{
	return RXP_CT_LDA(&t->used);
}

/* Adds @n to counter @field of worker @w (w == n_workers: any other thread). */
#define RXP_CT_STAT_ADD(t, w, field, n) do { \
	struct rxp_ct_table *_t = (t); \
	unsigned _w = (w); \
	if (rxp_likely(_w < _t->n_workers)) \
		RXP_CT_ST(&_t->ws[_w].field, RXP_CT_LD(&_t->ws[_w].field) + (n)); \
	else \
		__atomic_fetch_add(&_t->ws[_t->n_workers].field, (n), __ATOMIC_RELAXED); \
} while (0)

/* The counters summed over the workers. */
void rxp_ct_table_stats(const struct rxp_ct_table *t, struct rxp_ct_wstats *out, uint64_t *live);

#endif
