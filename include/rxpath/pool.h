/* SPDX-License-Identifier: MIT */
/*
 * The buffer pool: rxpath's page_pool.
 *
 * All buffers are carved from one mmap'd region at a fixed stride. A buffer
 * is sized precisely (metadata + headroom + rx offset + largest frame,
 * rounded to a cache line) unless page-sized buffers are asked for.
 *
 * Two levels, as in the kernel's page_pool:
 *  - rxp_pool_cache: a per-worker stack of free buffers. Fast path, no atomics.
 *    Context: the caller owns the cache (one thread at a time).
 *  - the pool's shared ring: a lock-free ring all caches refill from and
 *    spill to in batches. Slow path.
 */
#ifndef RXPATH_POOL_H
#define RXPATH_POOL_H

#include <string.h>
#include "rxpath/common.h"
#include "rxpath/pkt.h"
#include "rxpath/ring.h"

#define RXP_FRAME_DEFAULT 1518u		/* Ethernet frame without FCS, 1500 MTU + VLAN */
#define RXP_FRAME_MAX     9216u		/* jumbo */
#define RXP_POOL_CACHE_MAX 512u		/* buffers a cache holds at most */
#define RXP_POOL_CACHE_BATCH 64u	/* buffers moved per cache refill or flush */

struct rxp_pool_config {
	uint32_t n_bufs;	/* total buffers */
	uint32_t max_frame;	/* largest frame, without FCS */
	uint8_t rx_offset;	/* 0, or 2 for NET_IP_ALIGN */
	bool page_sized;	/* one 4 KiB page per buffer instead of the precise size */
	bool hugepages;		/* try 2 MiB pages; fall back to 4 KiB pages */
	uint32_t headroom;	/* bytes between metadata and frame; 0 = RXP_PKT_HEADROOM */
	bool pow2_sized;	/* stride a power of two, at least 2 KiB (AF_XDP aligned chunks) */
};

struct rxp_pool {
	struct rxp_ring *ring;	/* free buffers not held by any cache */
	uint8_t *base;		/* start of the mmap'd region */
	size_t region_len;
	uint32_t buf_size;	/* stride between buffers */
	uint32_t n_bufs;
	uint32_t headroom;	/* bytes between the metadata and the rx offset */
	uint32_t data_off;	/* where a received frame starts in a buffer */
	uint32_t data_room;	/* bytes from data_off to the end of the buffer */
	uint32_t max_frame;
	uint8_t rx_offset;
	bool hugepages;		/* the region really is on huge pages */
	_Atomic uint32_t n_caches;
};

/*
 * Counters in the spirit of the kernel's page_pool stats; one entry each:
 * field, Prometheus name, help. The struct, `show stats`, the metrics and
 * the run's JSON summary read them.
 */
#define RXP_POOL_COUNTERS(X) \
	X(alloc_fast, "rxpath_pool_alloc_fast_total", "Buffers allocated from the worker's cache.") \
	X(alloc_slow, "rxpath_pool_alloc_slow_total", "Cache refills from the pool's shared ring.") \
	X(alloc_empty, "rxpath_pool_alloc_empty_total", \
	  "Allocations that found the cache and the ring empty.") \
	X(recycle_cached, "rxpath_pool_recycle_cached_total", "Buffers freed into the worker's cache.") \
	X(recycle_ring, "rxpath_pool_recycle_ring_total", "Freed buffers spilled to the shared ring.")

struct rxp_pool_stats {
#define RXP_X(field, metric, help) uint64_t field;
	RXP_POOL_COUNTERS(RXP_X)
#undef RXP_X
};

struct rxp_pool_cache {
	struct rxp_pool *pool;
	uint32_t count;
	uint32_t capacity;
	struct rxp_pool_stats stats;
	struct rxp_pkt *objs[RXP_POOL_CACHE_MAX];
};

/* Returns the stride of a buffer for this configuration (0 if invalid). */
uint32_t rxp_pool_buf_size(const struct rxp_pool_config *cfg);

/*
 * Returns a pool with all buffers free, or NULL with *err filled in
 * (err may be NULL). Explains what to change when it fails.
 */
struct rxp_pool *rxp_pool_create(const struct rxp_pool_config *cfg, char *err, size_t errlen);

/*
 * Unmaps the pool. Returns the number of buffers that were not back in the
 * pool (0 when every buffer is accounted for). Caches must be closed first.
 */
long rxp_pool_destroy(struct rxp_pool *pool);

/* Binds @cache to @pool with room for @capacity buffers. Returns 0 or -EINVAL. */
int rxp_pool_cache_init(struct rxp_pool_cache *cache, struct rxp_pool *pool, uint32_t capacity);

/* Returns every buffer in the cache to the shared ring; the cache can be re-used. */
void rxp_pool_cache_flush(struct rxp_pool_cache *cache);

/* Returns the cache's buffers and unbinds it. */
void rxp_pool_cache_close(struct rxp_pool_cache *cache);

/* Slow paths, out of line. Return how many buffers they got/put. */
uint32_t rxp_pool_cache_refill(struct rxp_pool_cache *cache, uint32_t want);
void rxp_pool_cache_spill(struct rxp_pool_cache *cache);

/* Frees buffers straight to the shared ring (used where no cache is owned, e.g. at close). */
void rxp_pool_put_ring(struct rxp_pool *pool, struct rxp_pkt *const *pkts, uint32_t n);

/* Returns the number of buffers in the shared ring (exact when quiescent). */
uint32_t rxp_pool_ring_count(const struct rxp_pool *pool);

/*
 * Checks that every buffer is in the ring or one of @caches exactly once.
 * Returns 0, or the number of buffers missing plus duplicated / foreign.
 */
long rxp_pool_audit(struct rxp_pool *pool, struct rxp_pool_cache *const *caches, unsigned n_caches);

/* Returns the buffer with index @idx. */
static inline struct rxp_pkt *rxp_pool_buf(const struct rxp_pool *pool, uint32_t idx)
{
	return (struct rxp_pkt *)(pool->base + (size_t)idx * pool->buf_size);
}

/* Returns the offset of a buffer in the region (what a device is given as a DMA address). */
static inline uint64_t rxp_pool_buf_offset(const struct rxp_pool *pool, const struct rxp_pkt *pkt)
{
	return (uint64_t)((const uint8_t *)pkt - pool->base);
}

/*
 * Allocates up to @n buffers. Fast path: take from the cache; the cache is
 * refilled from the shared ring in batches when it runs dry.
 * Returns how many were allocated (fewer than @n only if the pool is empty).
 */
static inline uint32_t rxp_pool_alloc_burst(struct rxp_pool_cache *cache, struct rxp_pkt **pkts,
					    uint32_t n)
{
	uint32_t done = 0;

	while (done < n) {
		if (rxp_unlikely(cache->count == 0) &&
		    rxp_pool_cache_refill(cache, n - done) == 0)
			break;
		/*
		 * The top of the stack as one block: the buffers freed last are
		 * the hot ones. A block copy, not a loop the compiler must keep
		 * scalar because @pkts might alias the cache.
		 */
		uint32_t count = cache->count, take = RXP_MIN(n - done, count);

		memcpy(&pkts[done], &cache->objs[count - take], take * sizeof(*pkts));
		cache->count = count - take;
		cache->stats.alloc_fast += take;
		done += take;
	}
	return done;
}

/* Returns one buffer, or NULL when the pool is empty. */
static inline struct rxp_pkt *rxp_pool_alloc(struct rxp_pool_cache *cache)
{
	struct rxp_pkt *pkt;

	return rxp_pool_alloc_burst(cache, &pkt, 1) ? pkt : NULL;
}

/*
 * Frees @n buffers into the cache (recycling); when the cache is full a
 * batch spills to the shared ring first.
 */
static inline void rxp_pool_free_bulk(struct rxp_pool_cache *cache, struct rxp_pkt *const *pkts,
				      uint32_t n)
{
	uint32_t count = cache->count;

	/* (n past the array is caught by the first test; the second says so to the compiler) */
	if (rxp_unlikely(n > cache->capacity - count || n > RXP_POOL_CACHE_MAX)) {
		for (uint32_t i = 0; i < n; i++) {
			if (cache->count == cache->capacity)
				rxp_pool_cache_spill(cache);
			cache->objs[cache->count++] = pkts[i];
		}
	} else {
		memcpy(&cache->objs[count], pkts, n * sizeof(*pkts));
		cache->count = count + n;
	}
	cache->stats.recycle_cached += n;
}

static inline void rxp_pool_free(struct rxp_pool_cache *cache, struct rxp_pkt *pkt)
{
	rxp_pool_free_bulk(cache, &pkt, 1);
}

#endif
