/* SPDX-License-Identifier: MIT */
/* The connection tracking table: see ct_table.h for the layout and the rules of its threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ct_table.h"
#include "table_mem.h"

#define LIMBO_BATCHES 64u	/* snapshots kept; more removals merge into the newest */
#define EXPIRE_BATCH 64u	/* expired entries unlinked under one hold of the lock */
#define DROP_CURSOR_LOOK 16u	/* entries early drop looks at past the home buckets */

static void *zalloc_aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, RXP_CACHE_LINE, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

struct rxp_ct_table *rxp_ct_table_create(uint32_t max, unsigned n_workers)
{
	struct rxp_ct_table *t;
	uint64_t spare;

	if (!max || max > RXP_CTT_MAX_ENTRIES || !n_workers || n_workers > RXP_CTT_WORKERS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	t = zalloc_aligned(sizeof(*t));
	if (!t)
		goto nomem;
	t->max = max;
	t->n_workers = n_workers;
	t->locked = n_workers > 1;
	/* removed entries wait out a poll of every worker: room for what a round of polls frees */
	spare = t->locked ? max / 16 + 1024ull * n_workers : 0;
	t->phys = (uint32_t)(max + spare);
	t->bucket_mask = RXP_MAX(rxp_pow2_roundup((uint32_t)(((uint64_t)max * 2 + 4) / 5)), 2u) - 1;
	t->entries_len = (size_t)t->phys * sizeof(struct rxp_ct_entry);
	t->buckets_len = ((size_t)t->bucket_mask + 1) * sizeof(struct rxp_ct_bucket);
	t->entries = rxp_table_map(t->entries_len);
	t->buckets = rxp_table_map(t->buckets_len);
	t->nat_len = (size_t)t->phys * sizeof(struct rxp_ct_nat);
	t->nat = rxp_table_map(t->nat_len);
	t->free_stack = calloc(t->phys, sizeof(uint32_t));
	t->epoch = zalloc_aligned(n_workers * sizeof(*t->epoch));
	t->ws = zalloc_aligned((n_workers + 1) * sizeof(*t->ws));
	if (!t->entries || !t->buckets || !t->nat || !t->free_stack || !t->epoch || !t->ws)
		goto nomem;
	if (t->locked) {
		t->limbo = calloc(t->phys, sizeof(uint32_t));
		t->batches = calloc(LIMBO_BATCHES, sizeof(*t->batches));
		t->snaps = calloc((size_t)LIMBO_BATCHES * n_workers, sizeof(uint64_t));
		if (!t->limbo || !t->batches || !t->snaps)
			goto nomem;
	}
	if (pthread_spin_init(&t->lock, PTHREAD_PROCESS_PRIVATE))
		goto nomem;
	t->lock_ready = true;
	rxp_seed_fill(t->seed, RXP_ARRAY_SIZE(t->seed), t);
	return t;
nomem:
	rxp_ct_table_destroy(t);
	errno = ENOMEM;
	return NULL;
}

void rxp_ct_table_destroy(struct rxp_ct_table *t)
{
	if (!t)
		return;
	if (t->entries)
		munmap(t->entries, t->entries_len);
	if (t->buckets)
		munmap(t->buckets, t->buckets_len);
	if (t->nat)
		munmap(t->nat, t->nat_len);
	free(t->free_stack);
	free(t->limbo);
	free(t->batches);
	free(t->snaps);
	free(t->epoch);
	free(t->ws);
	if (t->lock_ready)
		pthread_spin_destroy(&t->lock);
	free(t);
}

size_t rxp_ct_table_memory(const struct rxp_ct_table *t)
{
	size_t lists = (size_t)t->phys * sizeof(uint32_t) * (t->locked ? 2 : 1);

	return t->entries_len + t->buckets_len + lists + rxp_table_resident(t->nat, t->nat_len);
}

void rxp_ct_table_enter(struct rxp_ct_table *t, unsigned w)
{
	if (!t->locked || w >= t->n_workers)
		return;
	RXP_CT_ST(&t->epoch[w].v, RXP_CT_LD(&t->epoch[w].v) + 1);
	/* odd before any read of the index: a writer's snapshot must not miss this poll */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void rxp_ct_table_leave(struct rxp_ct_table *t, unsigned w)
{
	if (!t->locked || w >= t->n_workers)
		return;
	RXP_CT_STR(&t->epoch[w].v, RXP_CT_LD(&t->epoch[w].v) + 1);
}

/* ---- slots ---- */

static void set_sig(struct rxp_ct_bucket *b, unsigned i, uint16_t sig)
{
	/* writers are serialised: a read-modify-write of the word is enough, readers see old or new */
	if (i < 8) {
		uint64_t *wp = &b->sig4[i / 4];
		unsigned sh = 16 * (i % 4);
		uint64_t w = (RXP_CT_LD(wp) & ~(0xffffull << sh)) | (uint64_t)sig << sh;

		RXP_CT_STR(wp, w);
	} else {
		unsigned sh = 16 * (i - 8);
		uint32_t w = (RXP_CT_LD(&b->sig2) & ~(0xffffu << sh)) | (uint32_t)sig << sh;

		RXP_CT_STR(&b->sig2, w);
	}
}

static bool slot_insert(struct rxp_ct_table *t, uint64_t h, uint32_t ref)
{
	uint32_t home = (uint32_t)h & t->bucket_mask, bi = home;

	for (unsigned probe = 0; probe < RXP_CTT_PROBE && probe <= t->bucket_mask; probe++) {
		struct rxp_ct_bucket *b = &t->buckets[bi];
		uint32_t free_mask = rxp_ct_bucket_match(b, 0);

		if (free_mask) {
			unsigned i = (unsigned)__builtin_ctz(free_mask);

			/* the buckets passed say so before the key can be found past them */
			for (uint32_t p = home; p != bi; p = (p + 1) & t->bucket_mask)
				RXP_CT_ST(&t->buckets[p].ovf, t->buckets[p].ovf + 1);
			RXP_CT_ST(&b->ref[i], ref);
			set_sig(b, i, rxp_ct_sig(h));
			return true;
		}
		bi = (bi + 1) & t->bucket_mask;
	}
	return false;
}

static bool slot_remove(struct rxp_ct_table *t, uint64_t h, uint32_t ref)
{
	uint32_t home = (uint32_t)h & t->bucket_mask, bi = home;
	uint16_t sig = rxp_ct_sig(h);

	for (unsigned probe = 0; probe < RXP_CTT_PROBE && probe <= t->bucket_mask; probe++) {
		struct rxp_ct_bucket *b = &t->buckets[bi];
		uint32_t m = rxp_ct_bucket_match(b, sig);

		while (m) {
			unsigned i = (unsigned)__builtin_ctz(m);

			m &= m - 1;
			if (RXP_CT_LD(&b->ref[i]) != ref)
				continue;
			set_sig(b, i, 0);
			for (uint32_t p = home; p != bi; p = (p + 1) & t->bucket_mask)
				RXP_CT_ST(&t->buckets[p].ovf, t->buckets[p].ovf - 1);
			return true;
		}
		if (!b->ovf)
			break;
		bi = (bi + 1) & t->bucket_mask;
	}
	return false;
}

/* ---- free entries and limbo ---- */

static void push_free(struct rxp_ct_table *t, uint32_t idx)
{
	t->free_stack[t->free_top++] = idx;
}

static void limbo_close(struct rxp_ct_table *t)
{
	uint32_t b;
	uint64_t *snap;

	/* the unlinks above are visible before the workers' counters are read */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (t->batch_tail - t->batch_head == LIMBO_BATCHES)
		b = t->batch_tail - 1;	/* merge: a later snapshot is only stricter */
	else
		b = t->batch_tail++;
	t->batches[b % LIMBO_BATCHES].end = t->limbo_tail;
	snap = &t->snaps[(size_t)(b % LIMBO_BATCHES) * t->n_workers];
	for (unsigned w = 0; w < t->n_workers; w++)
		snap[w] = RXP_CT_LDA(&t->epoch[w].v);
	t->limbo_closed = t->limbo_tail;
}

/* Moves the batches that no worker can still be reading to the free stack. */
static void limbo_reclaim(struct rxp_ct_table *t)
{
	while (t->batch_head != t->batch_tail) {
		uint32_t b = t->batch_head % LIMBO_BATCHES;
		const uint64_t *snap = &t->snaps[(size_t)b * t->n_workers];
		uint32_t end = t->batches[b].end;

		for (unsigned w = 0; w < t->n_workers; w++)
			if ((snap[w] & 1) && RXP_CT_LDA(&t->epoch[w].v) == snap[w])
				return;
		for (; t->limbo_head != end; t->limbo_head++)
			push_free(t, t->limbo[t->limbo_head % t->phys]);
		t->batch_head++;
	}
}

static void release_entry(struct rxp_ct_table *t, uint32_t idx)
{
	if (!t->locked) {
		push_free(t, idx);
		return;
	}
	t->limbo[t->limbo_tail % t->phys] = idx;
	t->limbo_tail++;
}

void rxp_ct_table_unlock(struct rxp_ct_table *t)
{
	if (!t->locked)
		return;
	if (t->limbo_tail != t->limbo_closed)
		limbo_close(t);
	pthread_spin_unlock(&t->lock);
}

/* ---- removal ---- */

static void unlink_entry(struct rxp_ct_table *t, unsigned w, uint32_t idx, uint64_t h0, uint64_t h1)
{
	struct rxp_ct_entry *e = &t->entries[idx];

	uint8_t status;

	rxp_ct_entry_lock(e);
	status = RXP_CT_LD(&e->status);
	RXP_CT_STR(&e->status, (uint8_t)(status & ~RXP_CTE_LIVE));
	rxp_ct_entry_unlock(e);
	if ((status & RXP_CTE_NAT) && t->nat_release)
		t->nat_release(t->nat_ctx, &t->nat[idx]);
	slot_remove(t, h0, idx << 1);
	slot_remove(t, h1, idx << 1 | 1);
	RXP_CT_ST(&t->live, t->live - 1);
	RXP_CT_STAT_ADD(t, w, deleted, 1);
	release_entry(t, idx);
}

/* The hashes of entry @idx's two keys, its original key being @k (a translated entry's reply key is its own). */
static void key_hashes(const struct rxp_ct_table *t, uint32_t idx, const struct rxp_ct_key *k, uint64_t *h0,
		       uint64_t *h1)
{
	struct rxp_ct_key r;

	if (RXP_CT_LD(&t->entries[idx].status) & RXP_CTE_NAT)
		rxp_ct_key_load(&r, &t->nat[idx].reply);
	else
		rxp_ct_key_swap(&r, k);
	*h0 = rxp_ct_hash(t, k);
	*h1 = rxp_ct_hash(t, &r);
}

bool rxp_ct_table_delete_locked(struct rxp_ct_table *t, unsigned w, uint32_t idx)
{
	struct rxp_ct_entry *e = &t->entries[idx];
	uint64_t h0, h1;

	if (idx >= t->phys || !(RXP_CT_LD(&e->status) & RXP_CTE_LIVE))
		return false;
	key_hashes(t, idx, &e->key, &h0, &h1);
	unlink_entry(t, w, idx, h0, h1);
	return true;
}

bool rxp_ct_table_delete(struct rxp_ct_table *t, unsigned w, uint32_t idx)
{
	bool done;

	rxp_ct_table_lock(t);
	done = rxp_ct_table_delete_locked(t, w, idx);
	rxp_ct_table_unlock(t);
	return done;
}

/* ---- insertion ---- */

/*
 * How readily @e goes to make room: 0 at once (expired, or never answered:
 * Linux's early_drop takes those first), 1 when nothing better is found
 * (answered but not assured yet), 2 never.
 */
static unsigned drop_rank(const struct rxp_ct_entry *e, uint32_t now)
{
	uint8_t st = RXP_CT_LDA(&e->status);

	if (!(st & RXP_CTE_LIVE))
		return 2;
	if (rxp_ct_tick_past(RXP_CT_LD(&e->expires), now) || !(st & RXP_CTE_SEEN_REPLY))
		return 0;
	return (st & RXP_CTE_ASSURED) ? 2 : 1;
}

static bool early_drop(struct rxp_ct_table *t, unsigned w, uint64_t h, uint32_t now)
{
	uint32_t bi = (uint32_t)h & t->bucket_mask, best = RXP_CTT_NONE, used = t->used;
	unsigned best_rank = 2;

	/* the entries whose keys share the new key's home bucket and the next one */
	for (unsigned probe = 0; probe < 2 && best_rank; probe++) {
		const struct rxp_ct_bucket *b = &t->buckets[bi];
		uint32_t m = ~rxp_ct_bucket_match(b, 0) & ((1u << RXP_CTT_SLOTS) - 1);

		for (; m && best_rank; m &= m - 1) {
			uint32_t idx = b->ref[__builtin_ctz(m)] >> 1;
			unsigned r = drop_rank(&t->entries[idx], now);

			if (r < best_rank) {
				best_rank = r;
				best = idx;
			}
		}
		bi = (bi + 1) & t->bucket_mask;
	}
	/* then a few from a cursor that goes round the table */
	for (unsigned k = 0; k < DROP_CURSOR_LOOK && best_rank && used; k++) {
		uint32_t idx = t->drop_cursor++ % used;
		unsigned r = drop_rank(&t->entries[idx], now);

		if (r < best_rank) {
			best_rank = r;
			best = idx;
		}
	}
	if (best == RXP_CTT_NONE)
		return false;
	if (!rxp_ct_tick_past(RXP_CT_LD(&t->entries[best].expires), now))
		RXP_CT_STAT_ADD(t, w, early_drop, 1);
	rxp_ct_table_delete_locked(t, w, best);
	return true;
}

/* A reused entry first (its lines are likely cached), a fresh one last (its pages are not touched yet). */
static uint32_t take_free(struct rxp_ct_table *t)
{
	if (!t->free_top && t->locked)
		limbo_reclaim(t);
	if (t->free_top)
		return t->free_stack[--t->free_top];
	if (t->used < t->phys) {
		RXP_CT_STR(&t->used, t->used + 1);
		return t->used - 1;
	}
	return RXP_CTT_NONE;
}

uint32_t rxp_ct_table_alloc(struct rxp_ct_table *t, unsigned w, uint64_t h, uint32_t now)
{
	uint32_t idx;

	if (t->live >= t->max && !early_drop(t, w, h, now)) {
		RXP_CT_STAT_ADD(t, w, table_full, 1);
		return RXP_CTT_NONE;
	}
	idx = take_free(t);
	if (idx == RXP_CTT_NONE) {
		/* every spare entry waits for a worker to finish its poll: full for now */
		RXP_CT_STAT_ADD(t, w, table_full, 1);
		return RXP_CTT_NONE;
	}
	rxp_ct_entry_lock(&t->entries[idx]);
	RXP_CT_ST(&t->entries[idx].status, 0);
	return idx;
}

void rxp_ct_table_free_new(struct rxp_ct_table *t, uint32_t idx)
{
	/* never in the index: no reader can have it */
	rxp_ct_entry_unlock(&t->entries[idx]);
	push_free(t, idx);
}

bool rxp_ct_table_link(struct rxp_ct_table *t, unsigned w, uint32_t idx, uint64_t h_orig,
		       uint64_t h_reply)
{
	struct rxp_ct_entry *e = &t->entries[idx];

	bool seen = false;

	RXP_CT_STR(&e->status, (uint8_t)(RXP_CT_LD(&e->status) | RXP_CTE_LIVE));
	rxp_ct_entry_unlock(e);
	if (!slot_insert(t, h_orig, idx << 1))
		goto full;
	if (!slot_insert(t, h_reply, idx << 1 | 1)) {
		slot_remove(t, h_orig, idx << 1);
		seen = true;
		goto full;
	}
	RXP_CT_ST(&t->live, t->live + 1);
	RXP_CT_STAT_ADD(t, w, inserted, 1);
	return true;
full:
	rxp_ct_entry_lock(e);
	RXP_CT_STR(&e->status, 0);
	rxp_ct_entry_unlock(e);
	/* a reader may have found it by the slot that was in the index a moment */
	if (seen)
		release_entry(t, idx);
	else
		push_free(t, idx);
	RXP_CT_STAT_ADD(t, w, table_full, 1);
	return false;
}

/* ---- expiry ---- */

struct expired {
	uint32_t idx, seq;
	uint64_t h0, h1;
};

static unsigned unlink_expired(struct rxp_ct_table *t, unsigned w, struct expired *x, unsigned n,
			       uint32_t now)
{
	unsigned done = 0;

	/* the buckets first, all at once, outside the lock */
	for (unsigned i = 0; i < n; i++) {
		struct rxp_ct_key k;

		rxp_ct_key_load(&k, &t->entries[x[i].idx].key);
		key_hashes(t, x[i].idx, &k, &x[i].h0, &x[i].h1);
		rxp_prefetchw(rxp_ct_bucket_of(t, x[i].h0));
		rxp_prefetchw(rxp_ct_bucket_of(t, x[i].h1));
	}
	rxp_ct_table_lock(t);
	for (unsigned i = 0; i < n; i++) {
		struct rxp_ct_entry *e = &t->entries[x[i].idx];

		/* refreshed, changed or reused since it was read: leave it to the next round */
		if (RXP_CT_LD(&e->seq) != x[i].seq || !(RXP_CT_LD(&e->status) & RXP_CTE_LIVE) ||
		    !rxp_ct_tick_past(RXP_CT_LD(&e->expires), now))
			continue;
		unlink_entry(t, w, x[i].idx, x[i].h0, x[i].h1);
		done++;
	}
	if (t->locked)
		limbo_reclaim(t);
	rxp_ct_table_unlock(t);
	return done;
}

unsigned rxp_ct_table_expire(struct rxp_ct_table *t, unsigned w, uint32_t now, unsigned budget,
			     const uint32_t limit[16])
{
	struct expired x[EXPIRE_BATCH];
	uint32_t used = rxp_ct_table_used(t), idx;
	unsigned n = 0, done = 0;

	if (!used || !budget)
		return 0;
	if (budget > used)
		budget = used;
	idx = __atomic_fetch_add(&t->cursor, budget, __ATOMIC_RELAXED) % used;
	for (unsigned k = 0; k < budget; k++, idx = idx + 1 == used ? 0 : idx + 1) {
		struct rxp_ct_entry *e = &t->entries[idx];
		uint32_t seq = RXP_CT_LDA(&e->seq), exp;

		if ((seq & 1) || !(RXP_CT_LDA(&e->status) & RXP_CTE_LIVE))
			continue;
		exp = RXP_CT_LD(&e->expires);
		if (rxp_ct_tick_past(exp, now)) {
			x[n].idx = idx;
			x[n].seq = seq;
			if (++n == EXPIRE_BATCH) {
				done += unlink_expired(t, w, x, n, now);
				n = 0;
			}
		} else if (limit && !(RXP_CT_LD(&e->status) & RXP_CTE_NAT)) {
			/* (a translated connection's timers are NAT's, not the lowered conntrack ones) */
			uint32_t lim = RXP_CT_LD(&limit[RXP_CT_LD(&e->l4state) & 15]);

			/* only if the entry is still the one read (not reused since): its timer unchanged */
			if (lim && (int32_t)(exp - now) > (int32_t)lim && RXP_CT_LDA(&e->seq) == seq)
				__atomic_compare_exchange_n(&e->expires, &exp, now + lim, false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
		}
	}
	if (n || t->locked)
		done += unlink_expired(t, w, x, n, now);
	return done;
}

void rxp_ct_table_flush(struct rxp_ct_table *t)
{
	uint32_t used = rxp_ct_table_used(t);

	/* in slices, so that workers' inserts do not wait for the whole table */
	for (uint32_t base = 0; base < used; base += 4096) {
		rxp_ct_table_lock(t);
		for (uint32_t idx = base; idx < used && idx < base + 4096; idx++)
			rxp_ct_table_delete_locked(t, t->n_workers, idx);
		rxp_ct_table_unlock(t);
	}
}

void rxp_ct_table_stats(const struct rxp_ct_table *t, struct rxp_ct_wstats *out, uint64_t *live)
{
	memset(out, 0, sizeof(*out));
	for (unsigned w = 0; w <= t->n_workers; w++) {
		const struct rxp_ct_wstats *s = &t->ws[w];

		out->inserted += RXP_CT_LD(&s->inserted);
		out->deleted += RXP_CT_LD(&s->deleted);
		out->early_drop += RXP_CT_LD(&s->early_drop);
		out->table_full += RXP_CT_LD(&s->table_full);
		out->invalid += RXP_CT_LD(&s->invalid);
		out->searched += RXP_CT_LD(&s->searched);
	}
	*live = RXP_CT_LD(&t->live);
}
