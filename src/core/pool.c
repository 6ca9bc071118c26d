/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "rxpath/pool.h"

#define PAGE_SIZE_4K 4096u
#define HUGE_PAGE_2M (2u << 20)
#define POOL_BUFS_MAX (1u << 24)

uint32_t rxp_pool_buf_size(const struct rxp_pool_config *cfg)
{
	uint32_t need;

	if (cfg->max_frame < 60 || cfg->max_frame > RXP_FRAME_MAX ||
	    (cfg->rx_offset != 0 && cfg->rx_offset != 2))
		return 0;
	if (cfg->headroom > 4096)
		return 0;
	need = RXP_PKT_META_SIZE + (cfg->headroom ? cfg->headroom : RXP_PKT_HEADROOM) +
	       cfg->rx_offset + cfg->max_frame;
	if (cfg->page_sized)
		return RXP_ALIGN_UP(need, PAGE_SIZE_4K);
	/* AF_XDP's aligned chunk mode takes power-of-two chunks of 2 KiB or more */
	if (cfg->pow2_sized)
		return RXP_MAX(rxp_pow2_roundup(need), 2048u);
	/* precise max_len: only what the largest frame needs, whole cache lines */
	return RXP_ALIGN_UP(need, RXP_CACHE_LINE);
}

static void *map_region(size_t *len, bool want_huge, bool *got_huge)
{
	void *p = MAP_FAILED;

	*got_huge = false;
	if (want_huge) {
		size_t huge_len = RXP_ALIGN_UP(*len, (size_t)HUGE_PAGE_2M);

		p = mmap(NULL, huge_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED) {
			*len = huge_len;
			*got_huge = true;
			return p;
		}
	}
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct rxp_pool *rxp_pool_create(const struct rxp_pool_config *cfg, char *err, size_t errlen)
{
	struct rxp_pool *pool;
	uint32_t buf_size = rxp_pool_buf_size(cfg);
	char dummy[1];

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (!buf_size) {
		snprintf(err, errlen,
			 "invalid buffer pool settings: max frame %u (must be 60..%u), rx offset %u (must be 0 or 2)",
			 cfg->max_frame, RXP_FRAME_MAX, cfg->rx_offset);
		errno = EINVAL;
		return NULL;
	}
	if (cfg->n_bufs == 0 || cfg->n_bufs > POOL_BUFS_MAX) {
		snprintf(err, errlen, "invalid buffer count %u (must be 1..%u)", cfg->n_bufs,
			 POOL_BUFS_MAX);
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		goto err_nomem;
	pool->buf_size = buf_size;
	pool->n_bufs = cfg->n_bufs;
	pool->max_frame = cfg->max_frame;
	pool->rx_offset = cfg->rx_offset;
	pool->headroom = cfg->headroom ? cfg->headroom : RXP_PKT_HEADROOM;
	pool->data_off = RXP_PKT_META_SIZE + pool->headroom + cfg->rx_offset;
	pool->data_room = buf_size - pool->data_off;
	pool->region_len = (size_t)buf_size * cfg->n_bufs;
	pool->base = map_region(&pool->region_len, cfg->hugepages, &pool->hugepages);
	if (!pool->base) {
		int e = errno;

		snprintf(err, errlen,
			 "cannot map %zu bytes for %u buffers: %s; lower the buffer count or raise the memory limit",
			 pool->region_len, cfg->n_bufs, strerror(e));
		free(pool);
		errno = e;
		return NULL;
	}
	pool->ring = rxp_ring_create(cfg->n_bufs);
	if (!pool->ring)
		goto err_unmap;
	/* Every buffer starts free; metadata that never changes is written once here. */
	for (uint32_t i = 0; i < cfg->n_bufs; i++) {
		struct rxp_pkt *pkt = rxp_pool_buf(pool, i);

		pkt->pool = pool;
		pkt->buf_idx = i;
		pkt->data_off = (uint16_t)pool->data_off;
		rxp_ring_enqueue(pool->ring, (void **)&pkt, 1, true);
	}
	return pool;

err_unmap:
	munmap(pool->base, pool->region_len);
	free(pool);
err_nomem:
	snprintf(err, errlen, "out of memory creating the buffer pool");
	errno = ENOMEM;
	return NULL;
}

long rxp_pool_destroy(struct rxp_pool *pool)
{
	long missing;

	if (!pool)
		return 0;
	missing = (long)pool->n_bufs - (long)rxp_ring_count(pool->ring);
	rxp_ring_destroy(pool->ring);
	munmap(pool->base, pool->region_len);
	free(pool);
	return missing;
}

int rxp_pool_cache_init(struct rxp_pool_cache *cache, struct rxp_pool *pool, uint32_t capacity)
{
	if (!pool || capacity < RXP_POOL_CACHE_BATCH || capacity > RXP_POOL_CACHE_MAX)
		return -EINVAL;
	memset(&cache->stats, 0, sizeof(cache->stats));
	cache->pool = pool;
	cache->count = 0;
	cache->capacity = capacity;
	atomic_fetch_add(&pool->n_caches, 1);
	return 0;
}

void rxp_pool_cache_flush(struct rxp_pool_cache *cache)
{
	if (cache->count)
		rxp_ring_enqueue(cache->pool->ring, (void *const *)cache->objs, cache->count, true);
	cache->count = 0;
}

void rxp_pool_cache_close(struct rxp_pool_cache *cache)
{
	if (!cache->pool)
		return;
	rxp_pool_cache_flush(cache);
	atomic_fetch_sub(&cache->pool->n_caches, 1);
	cache->pool = NULL;
}

/* Slow path: the cache is empty; take a batch (or what @want needs) from the ring. */
rxp_noinline uint32_t rxp_pool_cache_refill(struct rxp_pool_cache *cache, uint32_t want)
{
	uint32_t batch = RXP_MAX(want, RXP_POOL_CACHE_BATCH);
	uint32_t got;

	batch = RXP_MIN(batch, cache->capacity - cache->count);
	got = rxp_ring_dequeue(cache->pool->ring, (void **)&cache->objs[cache->count], batch, false);
	if (got) {
		cache->count += got;
		cache->stats.alloc_slow++;
	} else {
		cache->stats.alloc_empty++;
	}
	return got;
}

/*
 * Slow path: the cache is full; move its oldest half to the ring so the
 * buffers just freed (hot in cache) stay on top for the next allocation.
 */
rxp_noinline void rxp_pool_cache_spill(struct rxp_pool_cache *cache)
{
	uint32_t n = cache->count / 2;
	uint32_t put = rxp_ring_enqueue(cache->pool->ring, (void *const *)cache->objs, n, false);

	/* The ring has room for every buffer of the pool, so put == n. */
	memmove(cache->objs, cache->objs + put, (cache->count - put) * sizeof(cache->objs[0]));
	cache->count -= put;
	cache->stats.recycle_ring += put;
}

void rxp_pool_put_ring(struct rxp_pool *pool, struct rxp_pkt *const *pkts, uint32_t n)
{
	if (n)
		rxp_ring_enqueue(pool->ring, (void *const *)pkts, n, true);
}

uint32_t rxp_pool_ring_count(const struct rxp_pool *pool)
{
	return rxp_ring_count(pool->ring);
}

static long mark(struct rxp_pool *pool, uint8_t *seen, struct rxp_pkt *pkt)
{
	uint64_t off = (uint64_t)((uint8_t *)pkt - pool->base);

	if ((uint8_t *)pkt < pool->base || off % pool->buf_size ||
	    off / pool->buf_size >= pool->n_bufs)
		return 1;	/* foreign pointer */
	if (seen[off / pool->buf_size]++)
		return 1;	/* duplicate: freed twice */
	return 0;
}

long rxp_pool_audit(struct rxp_pool *pool, struct rxp_pool_cache *const *caches, unsigned n_caches)
{
	struct rxp_ring *r = pool->ring;
	uint8_t *seen = calloc(pool->n_bufs, 1);
	uint32_t head, tail;
	long bad = 0;

	if (!seen)
		return -ENOMEM;
	head = atomic_load(&r->cons.tail);
	tail = atomic_load(&r->prod.tail);
	for (uint32_t i = head; i != tail; i++)
		bad += mark(pool, seen, r->slots[i & r->mask]);
	for (unsigned c = 0; c < n_caches; c++)
		for (uint32_t i = 0; i < caches[c]->count; i++)
			bad += mark(pool, seen, caches[c]->objs[i]);
	for (uint32_t i = 0; i < pool->n_bufs; i++)
		bad += !seen[i];
	free(seen);
	return bad;
}
