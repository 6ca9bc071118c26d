/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the buffer pool (include/rxpath/pool.h): precise buffer
 * sizing, NET_IP_ALIGN placement, the cache fast path and the shared-ring
 * slow path with their counters, exhaustion, LIFO recycling, conservation
 * (audit and destroy) and two caches sharing one pool.
 */
#include <errno.h>
#include <string.h>
#include "rxpath/pool.h"
#include "check.h"

#define RXP_ERR_LEN_TEST 256

static struct rxp_pool *make_pool(uint32_t n_bufs, uint32_t max_frame, uint8_t rx_offset)
{
	struct rxp_pool_config cfg = {
		.n_bufs = n_bufs, .max_frame = max_frame, .rx_offset = rx_offset,
	};
	char err[RXP_ERR_LEN_TEST];
	struct rxp_pool *pool = rxp_pool_create(&cfg, err, sizeof(err));

	if (!pool)
		printf("  rxp_pool_create: %s\n", err);
	return pool;
}

static uint32_t buf_size(uint32_t max_frame, uint8_t rx_offset, bool page_sized)
{
	struct rxp_pool_config cfg = {
		.n_bufs = 1, .max_frame = max_frame, .rx_offset = rx_offset,
		.page_sized = page_sized,
	};

	return rxp_pool_buf_size(&cfg);
}

static void test_buf_size_precise(void)
{
	/* 64 metadata + 64 headroom + 2 + 1518 = 1648 -> 1664 (26 cache lines) */
	CHECK_EQ(buf_size(1518, 2, false), 1664);
	CHECK_EQ(buf_size(1518, 0, false), 1664);
	/* 64 + 64 + 0 + 1536 = 1664 exactly: no rounding */
	CHECK_EQ(buf_size(1536, 0, false), 1664);
	/* ... and 2 bytes more need one more line */
	CHECK_EQ(buf_size(1536, 2, false), 1728);
	CHECK_EQ(buf_size(60, 0, false), 192);
	CHECK_EQ(buf_size(9216, 0, false), 9344);
	/* every precise size is a whole number of cache lines and fits the frame */
	for (uint32_t f = 60; f <= RXP_FRAME_MAX; f += 37) {
		for (uint8_t off = 0; off <= 2; off += 2) {
			uint32_t s = buf_size(f, off, false);

			CHECK_EQ(s % RXP_CACHE_LINE, 0);
			CHECK(s >= RXP_PKT_META_SIZE + RXP_PKT_HEADROOM + off + f);
			CHECK(s < RXP_PKT_META_SIZE + RXP_PKT_HEADROOM + off + f + RXP_CACHE_LINE);
		}
	}
}

static void test_buf_size_page(void)
{
	CHECK_EQ(buf_size(1518, 2, true), 4096);
	CHECK_EQ(buf_size(60, 0, true), 4096);
	CHECK_EQ(buf_size(3900, 2, true), 4096);
	/* a jumbo frame takes whole pages */
	CHECK_EQ(buf_size(9216, 2, true), 12288);
}

static void test_buf_size_invalid(void)
{
	CHECK_EQ(buf_size(1518, 1, false), 0);
	CHECK_EQ(buf_size(1518, 4, false), 0);
	CHECK_EQ(buf_size(59, 0, false), 0);
	CHECK_EQ(buf_size(0, 0, false), 0);
	CHECK_EQ(buf_size(RXP_FRAME_MAX + 1, 0, false), 0);
	CHECK_EQ(buf_size(1518, 1, true), 0);
}

static void test_create_invalid(void)
{
	static const struct rxp_pool_config bad[] = {
		{ .n_bufs = 64, .max_frame = 1518, .rx_offset = 1 },
		{ .n_bufs = 64, .max_frame = 59, .rx_offset = 0 },
		{ .n_bufs = 64, .max_frame = RXP_FRAME_MAX + 1, .rx_offset = 2 },
		{ .n_bufs = 0, .max_frame = 1518, .rx_offset = 2 },
		{ .n_bufs = (1u << 24) + 1, .max_frame = 1518, .rx_offset = 2 },
	};
	static const char *const must_say[] = {
		"rx offset", "max frame", "max frame", "buffer count", "buffer count",
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		char err[RXP_ERR_LEN_TEST] = "";

		errno = 0;
		CHECK(rxp_pool_create(&bad[i], err, sizeof(err)) == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(err[0] != '\0');
		if (!strstr(err, must_say[i])) {
			printf("  message '%s' does not mention '%s'\n", err, must_say[i]);
			CHECK(0);
		}
	}
	/* err may be NULL */
	CHECK(rxp_pool_create(&bad[0], NULL, 0) == NULL);
}

static void test_layout(void)
{
	struct rxp_pool *pool = make_pool(256, 1518, 2);

	CHECK(pool != NULL);
	if (!pool)
		return;
	CHECK_EQ(pool->buf_size, 1664);
	CHECK_EQ(pool->n_bufs, 256);
	CHECK_EQ(pool->data_off, RXP_PKT_META_SIZE + RXP_PKT_HEADROOM + 2);
	CHECK(pool->data_room >= 1518);
	CHECK_EQ(pool->data_off + pool->data_room, pool->buf_size);
	CHECK(pool->region_len >= (size_t)pool->buf_size * pool->n_bufs);
	CHECK_EQ(rxp_pool_ring_count(pool), 256);
	for (uint32_t i = 0; i < pool->n_bufs; i++) {
		struct rxp_pkt *pkt = rxp_pool_buf(pool, i);

		CHECK(pkt->pool == pool);
		CHECK_EQ(pkt->buf_idx, i);
		CHECK_EQ(pkt->data_off, pool->data_off);
		/* metadata sits on a cache line of its own at the buffer start */
		CHECK_EQ((uintptr_t)pkt % RXP_CACHE_LINE, 0);
		CHECK_EQ(rxp_pool_buf_offset(pool, pkt), (uint64_t)i * pool->buf_size);
	}
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

/* NET_IP_ALIGN: with an rx offset of 2 the IP header after 14 bytes of Ethernet is 4-byte aligned. */
static void test_ip_align(void)
{
	struct rxp_pool *p2 = make_pool(64, 1518, 2);
	struct rxp_pool *p0 = make_pool(64, 1518, 0);

	CHECK(p2 && p0);
	if (!p2 || !p0)
		return;
	for (uint32_t i = 0; i < 64; i++) {
		uint8_t *d2 = rxp_pkt_data(rxp_pool_buf(p2, i));
		uint8_t *d0 = rxp_pkt_data(rxp_pool_buf(p0, i));

		CHECK_EQ((uintptr_t)(d2 + 14) % 4, 0);
		CHECK((uintptr_t)(d0 + 14) % 4 != 0);
		/* with 0 the frame itself starts on a cache line */
		CHECK_EQ((uintptr_t)d0 % RXP_CACHE_LINE, 0);
	}
	CHECK_EQ(rxp_pool_destroy(p2), 0);
	CHECK_EQ(rxp_pool_destroy(p0), 0);
}

static void test_page_sized_and_huge(void)
{
	struct rxp_pool_config cfg = {
		.n_bufs = 64, .max_frame = 1518, .rx_offset = 2, .page_sized = true,
		.hugepages = true,	/* falls back to 4 KiB pages when none are reserved */
	};
	char err[RXP_ERR_LEN_TEST];
	struct rxp_pool *pool = rxp_pool_create(&cfg, err, sizeof(err));

	CHECK(pool != NULL);
	if (!pool)
		return;
	CHECK_EQ(pool->buf_size, 4096);
	CHECK_EQ((uintptr_t)pool->base % 4096, 0);
	CHECK(pool->region_len >= 64u * 4096u);
	CHECK_EQ(pool->data_room, 4096 - pool->data_off);
	/* every buffer is writable end to end */
	for (uint32_t i = 0; i < 64; i++)
		memset(rxp_pkt_data(rxp_pool_buf(pool, i)), 0xa5, pool->data_room);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_cache_init_invalid(void)
{
	struct rxp_pool *pool = make_pool(128, 1518, 2);
	struct rxp_pool_cache cache;

	CHECK_EQ(rxp_pool_cache_init(&cache, NULL, 256), -EINVAL);
	CHECK_EQ(rxp_pool_cache_init(&cache, pool, RXP_POOL_CACHE_BATCH - 1), -EINVAL);
	CHECK_EQ(rxp_pool_cache_init(&cache, pool, RXP_POOL_CACHE_MAX + 1), -EINVAL);
	CHECK_EQ(rxp_pool_cache_init(&cache, pool, RXP_POOL_CACHE_BATCH), 0);
	CHECK_EQ(atomic_load(&pool->n_caches), 1);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(atomic_load(&pool->n_caches), 0);
	rxp_pool_cache_close(&cache);	/* closing twice is harmless */
	CHECK_EQ(atomic_load(&pool->n_caches), 0);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_alloc_fast_slow_counters(void)
{
	struct rxp_pool *pool = make_pool(1024, 1518, 2);
	struct rxp_pool_cache cache;
	struct rxp_pkt *pkts[200];

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 256), 0);
	/* the first allocation finds the cache empty: one refill of a whole batch */
	pkts[0] = rxp_pool_alloc(&cache);
	CHECK(pkts[0] != NULL);
	CHECK_EQ(cache.stats.alloc_slow, 1);
	CHECK_EQ(cache.stats.alloc_fast, 1);
	CHECK_EQ(cache.count, RXP_POOL_CACHE_BATCH - 1);
	CHECK_EQ(rxp_pool_ring_count(pool), 1024 - RXP_POOL_CACHE_BATCH);
	/* the rest of the batch comes from the cache without touching the ring */
	for (uint32_t i = 1; i < RXP_POOL_CACHE_BATCH; i++)
		pkts[i] = rxp_pool_alloc(&cache);
	CHECK_EQ(cache.stats.alloc_slow, 1);
	CHECK_EQ(cache.stats.alloc_fast, RXP_POOL_CACHE_BATCH);
	CHECK_EQ(cache.count, 0);
	/* the next one needs a second refill */
	pkts[RXP_POOL_CACHE_BATCH] = rxp_pool_alloc(&cache);
	CHECK(pkts[RXP_POOL_CACHE_BATCH] != NULL);
	CHECK_EQ(cache.stats.alloc_slow, 2);
	CHECK_EQ(cache.stats.alloc_empty, 0);
	rxp_pool_free_bulk(&cache, pkts, RXP_POOL_CACHE_BATCH + 1);
	CHECK_EQ(cache.stats.recycle_cached, RXP_POOL_CACHE_BATCH + 1);
	CHECK_EQ(cache.stats.recycle_ring, 0);

	/* a burst larger than a batch refills once with what it needs */
	rxp_pool_cache_flush(&cache);
	CHECK_EQ(cache.count, 0);
	CHECK_EQ(rxp_pool_ring_count(pool), 1024);
	memset(&cache.stats, 0, sizeof(cache.stats));
	CHECK_EQ(rxp_pool_alloc_burst(&cache, pkts, 200), 200);
	CHECK_EQ(cache.stats.alloc_slow, 1);
	CHECK_EQ(cache.stats.alloc_fast, 200);
	/* the buffers are distinct */
	uint8_t seen[1024] = { 0 };
	int dups = 0;

	for (int i = 0; i < 200; i++)
		dups += seen[pkts[i]->buf_idx]++ != 0;
	CHECK_EQ(dups, 0);
	rxp_pool_free_bulk(&cache, pkts, 200);

	struct rxp_pool_cache *caches[] = { &cache };

	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_alloc_burst_bigger_than_cache(void)
{
	struct rxp_pool *pool = make_pool(2048, 1518, 2);
	struct rxp_pool_cache cache;
	static struct rxp_pkt *pkts[1500];

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 128), 0);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, pkts, 1500), 1500);
	CHECK_EQ(cache.stats.alloc_fast, 1500);
	CHECK(cache.count <= cache.capacity);
	CHECK_EQ(rxp_pool_ring_count(pool) + cache.count, 2048 - 1500);
	rxp_pool_free_bulk(&cache, pkts, 1500);
	CHECK(cache.count <= cache.capacity);
	CHECK(cache.stats.recycle_ring > 0);

	struct rxp_pool_cache *caches[] = { &cache };

	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_recycle_spill(void)
{
	struct rxp_pool *pool = make_pool(1024, 1518, 2);
	struct rxp_pool_cache cache;
	struct rxp_pkt *pkts[300];
	struct rxp_pool_cache *caches[] = { &cache };

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 128), 0);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, pkts, 300), 300);
	rxp_pool_cache_flush(&cache);	/* start with an empty cache */
	CHECK_EQ(cache.count, 0);
	CHECK_EQ(rxp_pool_ring_count(pool), 1024 - 300);
	/* 128 fit in the cache: no spill yet */
	rxp_pool_free_bulk(&cache, pkts, 128);
	CHECK_EQ(cache.count, 128);
	CHECK_EQ(cache.stats.recycle_ring, 0);
	CHECK_EQ(cache.stats.recycle_cached, 128);
	/* the 129th finds the cache full: half of it (the oldest) spills to the ring */
	uint32_t ring_before = rxp_pool_ring_count(pool);

	rxp_pool_free(&cache, pkts[128]);
	CHECK_EQ(cache.stats.recycle_ring, 64);
	CHECK_EQ(cache.count, 65);
	CHECK_EQ(rxp_pool_ring_count(pool), ring_before + 64);
	/* the spilled ones are the oldest; the newest stay hot on top */
	CHECK(cache.objs[cache.count - 1] == pkts[128]);
	CHECK(cache.objs[cache.count - 2] == pkts[127]);
	CHECK(cache.objs[0] == pkts[64]);
	rxp_pool_free_bulk(&cache, pkts + 129, 171);
	CHECK_EQ(cache.stats.recycle_cached, 300);
	CHECK(cache.count <= 128);
	CHECK_EQ(cache.count + rxp_pool_ring_count(pool), 1024);
	/* recycle_ring counts every buffer that went to the ring */
	CHECK_EQ(rxp_pool_ring_count(pool), 1024 - 300 + cache.stats.recycle_ring);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_exhaustion(void)
{
	struct rxp_pool *pool = make_pool(200, 1518, 2);
	struct rxp_pool_cache cache;
	struct rxp_pkt *pkts[200], *extra[4];
	struct rxp_pool_cache *caches[] = { &cache };

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 64), 0);
	for (int i = 0; i < 200; i++) {
		pkts[i] = rxp_pool_alloc(&cache);
		CHECK(pkts[i] != NULL);
	}
	CHECK_EQ(cache.stats.alloc_empty, 0);
	CHECK_EQ(rxp_pool_ring_count(pool), 0);
	CHECK_EQ(cache.count, 0);
	/* all 200 are out: the next allocation fails and says why */
	CHECK(rxp_pool_alloc(&cache) == NULL);
	CHECK_EQ(cache.stats.alloc_empty, 1);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, extra, 4), 0);
	CHECK_EQ(cache.stats.alloc_empty, 2);
	/* a partial burst gets what there is */
	rxp_pool_free_bulk(&cache, pkts + 197, 3);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, extra, 4), 3);
	CHECK_EQ(cache.stats.alloc_empty, 3);
	/* freeing one makes allocation work again */
	rxp_pool_free(&cache, extra[0]);
	CHECK(rxp_pool_alloc(&cache) == extra[0]);
	/* while buffers are out, the audit reports them missing */
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 200);
	rxp_pool_free_bulk(&cache, pkts, 197);
	rxp_pool_free_bulk(&cache, extra, 3);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

/* page_pool-style recycling: the buffer freed last is allocated next (still hot in cache). */
static void test_lifo_recycling(void)
{
	struct rxp_pool *pool = make_pool(256, 1518, 2);
	struct rxp_pool_cache cache;
	struct rxp_pkt *a, *b, *c;

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 128), 0);
	a = rxp_pool_alloc(&cache);
	b = rxp_pool_alloc(&cache);
	c = rxp_pool_alloc(&cache);
	CHECK(a && b && c && a != b && b != c && a != c);
	rxp_pool_free(&cache, b);
	CHECK(rxp_pool_alloc(&cache) == b);
	rxp_pool_free(&cache, a);
	rxp_pool_free(&cache, c);
	CHECK(rxp_pool_alloc(&cache) == c);
	CHECK(rxp_pool_alloc(&cache) == a);
	/* a burst takes the block freed last (the hot one), as it was freed */
	struct rxp_pkt *in[3] = { a, b, c }, *out[3];

	rxp_pool_free_bulk(&cache, in, 3);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, out, 2), 2);
	CHECK(out[0] == b && out[1] == c);
	rxp_pool_free_bulk(&cache, out, 2);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, out, 3), 3);
	CHECK(out[0] == a && out[1] == b && out[2] == c);
	rxp_pool_free_bulk(&cache, out, 3);
	rxp_pool_cache_close(&cache);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

static void test_audit(void)
{
	struct rxp_pool *pool = make_pool(300, 1518, 2);
	struct rxp_pool_cache cache;
	struct rxp_pool_cache *caches[] = { &cache };
	struct rxp_pkt *pkts[10], *dup;
	rxp_cache_aligned uint8_t foreign[256];

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 128), 0);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	CHECK_EQ(rxp_pool_audit(pool, NULL, 0), 0);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, pkts, 10), 10);
	/* ten out: ten missing (buffers in the cache count as present) */
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 10);
	rxp_pool_free_bulk(&cache, pkts, 9);
	/* one still missing */
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 1);
	rxp_pool_free(&cache, pkts[9]);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	/* forgetting the cache makes its buffers look missing */
	CHECK_EQ(rxp_pool_audit(pool, NULL, 0), cache.count);

	/* double free: the same buffer twice */
	dup = rxp_pool_alloc(&cache);
	rxp_pool_free(&cache, dup);
	rxp_pool_free(&cache, dup);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 1);
	/* the duplicate is on top of the cache: take it away again */
	CHECK(rxp_pool_alloc(&cache) == dup);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);

	/* a buffer that is not the pool's */
	CHECK(rxp_pool_alloc(&cache) == dup);
	rxp_pool_free(&cache, (struct rxp_pkt *)foreign);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 2);	/* one foreign, one missing */
	CHECK(rxp_pool_alloc(&cache) == (struct rxp_pkt *)foreign);
	/* a pointer into the middle of a pool buffer */
	rxp_pool_free(&cache, (struct rxp_pkt *)((uint8_t *)dup + 64));
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 2);
	CHECK(rxp_pool_alloc(&cache) == (struct rxp_pkt *)((uint8_t *)dup + 64));
	rxp_pool_free(&cache, dup);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);

	/* the same holds with the buffers in the ring instead of the cache */
	rxp_pool_cache_flush(&cache);
	CHECK_EQ(rxp_pool_ring_count(pool), 300);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 0);
	rxp_pool_put_ring(pool, &dup, 1);
	CHECK_EQ(rxp_pool_audit(pool, caches, 1), 1);
	rxp_pool_cache_close(&cache);
	rxp_pool_destroy(pool);
}

static void test_destroy_counts_missing(void)
{
	struct rxp_pool *pool = make_pool(128, 1518, 0);
	struct rxp_pool_cache cache;
	struct rxp_pkt *pkts[3];

	CHECK_EQ(rxp_pool_cache_init(&cache, pool, 64), 0);
	CHECK_EQ(rxp_pool_alloc_burst(&cache, pkts, 3), 3);
	/* the cache goes first; its buffers return to the ring */
	rxp_pool_cache_close(&cache);
	CHECK(cache.pool == NULL);
	CHECK_EQ(rxp_pool_ring_count(pool), 125);
	CHECK_EQ(rxp_pool_destroy(pool), 3);
	CHECK_EQ(rxp_pool_destroy(NULL), 0);
}

/* Two workers: one allocates, the other frees; buffers travel through the shared ring. */
static void test_two_caches(void)
{
	struct rxp_pool *pool = make_pool(512, 1518, 2);
	struct rxp_pool_cache a, b;
	struct rxp_pool_cache *caches[] = { &a, &b };
	struct rxp_pkt *pkts[256];
	uint32_t total_allocated = 0;

	CHECK_EQ(rxp_pool_cache_init(&a, pool, 128), 0);
	CHECK_EQ(rxp_pool_cache_init(&b, pool, 128), 0);
	CHECK_EQ(atomic_load(&pool->n_caches), 2);
	for (int round = 0; round < 50; round++) {
		uint32_t got = rxp_pool_alloc_burst(&a, pkts, 256);

		CHECK_EQ(got, 256);
		total_allocated += got;
		/* A worker other than the allocator frees them (as on TX completion). */
		rxp_pool_free_bulk(&b, pkts, got);
		CHECK(b.count <= b.capacity);
		CHECK_EQ(rxp_pool_audit(pool, caches, 2), 0);
	}
	CHECK_EQ(total_allocated, 50u * 256u);
	/* 512 buffers served 12800 allocations: they came back through the ring */
	CHECK(a.stats.alloc_slow >= 50);
	CHECK(b.stats.recycle_ring > 0);
	CHECK_EQ(a.stats.recycle_cached, 0);
	CHECK_EQ(b.stats.alloc_fast, 0);
	/* a's buffers cannot be found by b alone, but by both together */
	rxp_pool_cache_flush(&b);
	CHECK_EQ(b.count, 0);
	CHECK_EQ(rxp_pool_audit(pool, caches, 2), 0);
	rxp_pool_cache_close(&a);
	rxp_pool_cache_close(&b);
	CHECK_EQ(atomic_load(&pool->n_caches), 0);
	CHECK_EQ(rxp_pool_ring_count(pool), 512);
	CHECK_EQ(rxp_pool_destroy(pool), 0);
}

int main(void)
{
	RUN(test_buf_size_precise);
	RUN(test_buf_size_page);
	RUN(test_buf_size_invalid);
	RUN(test_create_invalid);
	RUN(test_layout);
	RUN(test_ip_align);
	RUN(test_page_sized_and_huge);
	RUN(test_cache_init_invalid);
	RUN(test_alloc_fast_slow_counters);
	RUN(test_alloc_burst_bigger_than_cache);
	RUN(test_recycle_spill);
	RUN(test_exhaustion);
	RUN(test_lifo_recycling);
	RUN(test_audit);
	RUN(test_destroy_counts_missing);
	RUN(test_two_caches);
	return tests_done();
}
