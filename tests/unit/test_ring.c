/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the MPMC pointer ring (include/rxpath/ring.h): sizing,
 * bulk (all-or-nothing) against burst (partial) calls, FIFO order, index
 * wrap-around, count, and a multi-threaded stress that proves no pointer
 * is lost or delivered twice.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rxpath/ring.h"
#include "check.h"

/* Ring payloads are opaque pointers; tests use small integers as tags (never 0). */
static void *tag(uintptr_t v)
{
	return (void *)v;
}

static uintptr_t untag(void *p)
{
	return (uintptr_t)p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_capacity_rounding(void)
{
	static const struct { uint32_t ask, want; } cases[] = {
		{ 1, 1 }, { 2, 2 }, { 3, 4 }, { 64, 64 }, { 65, 128 }, { 100, 128 },
		{ 1000, 1024 }, { 1024, 1024 }, { 1025, 2048 },
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(cases); i++) {
		struct rxp_ring *r = rxp_ring_create(cases[i].ask);

		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK_EQ(r->capacity, cases[i].want);
		CHECK(r->capacity >= cases[i].ask);
		CHECK(rxp_is_pow2(r->size));
		CHECK_EQ(r->mask, r->size - 1);
		CHECK_EQ(rxp_ring_count(r), 0);
		rxp_ring_destroy(r);
	}

	/* "every slot is usable": a ring for 100 takes 128 pointers, not 127 */
	struct rxp_ring *r = rxp_ring_create(100);
	void *objs[128];

	for (uintptr_t i = 0; i < 128; i++)
		objs[i] = tag(i + 1);
	CHECK_EQ(rxp_ring_enqueue(r, objs, 128, true), 128);
	CHECK_EQ(rxp_ring_count(r), 128);
	CHECK_EQ(rxp_ring_enqueue(r, objs, 1, false), 0);
	rxp_ring_destroy(r);
}

static void test_create_invalid(void)
{
	errno = 0;
	CHECK(rxp_ring_create(0) == NULL);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(rxp_ring_create((1u << 30) + 1) == NULL);
	CHECK_EQ(errno, EINVAL);
	rxp_ring_destroy(NULL);	/* like free(NULL) */
}

static void test_bulk_all_or_nothing(void)
{
	struct rxp_ring *r = rxp_ring_create(8);
	void *in[16], *out[16];

	for (uintptr_t i = 0; i < 16; i++)
		in[i] = tag(100 + i);

	CHECK_EQ(rxp_ring_enqueue(r, in, 5, true), 5);
	/* 3 free slots: a bulk of 4 takes nothing */
	CHECK_EQ(rxp_ring_enqueue(r, in + 5, 4, true), 0);
	CHECK_EQ(rxp_ring_count(r), 5);
	/* exactly the free room works */
	CHECK_EQ(rxp_ring_enqueue(r, in + 5, 3, true), 3);
	CHECK_EQ(rxp_ring_count(r), 8);
	CHECK_EQ(rxp_ring_enqueue(r, in + 8, 1, true), 0);

	/* 8 held: a bulk dequeue of 9 takes nothing and leaves the ring alone */
	memset(out, 0, sizeof(out));
	CHECK_EQ(rxp_ring_dequeue(r, out, 9, true), 0);
	CHECK(out[0] == NULL);
	CHECK_EQ(rxp_ring_count(r), 8);
	CHECK_EQ(rxp_ring_dequeue(r, out, 8, true), 8);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(untag(out[i]), 100 + i);
	CHECK_EQ(rxp_ring_count(r), 0);
	CHECK_EQ(rxp_ring_dequeue(r, out, 1, true), 0);

	/* zero-sized requests are no-ops */
	CHECK_EQ(rxp_ring_enqueue(r, in, 0, true), 0);
	CHECK_EQ(rxp_ring_dequeue(r, out, 0, true), 0);
	CHECK_EQ(rxp_ring_count(r), 0);
	rxp_ring_destroy(r);
}

static void test_burst_partial(void)
{
	struct rxp_ring *r = rxp_ring_create(8);
	void *in[16], *out[16];

	for (uintptr_t i = 0; i < 16; i++)
		in[i] = tag(1 + i);

	CHECK_EQ(rxp_ring_enqueue(r, in, 5, false), 5);
	/* only 3 fit: a burst takes those 3, the first 3 of the array */
	CHECK_EQ(rxp_ring_enqueue(r, in + 5, 10, false), 3);
	CHECK_EQ(rxp_ring_count(r), 8);
	/* full: a burst takes none */
	CHECK_EQ(rxp_ring_enqueue(r, in + 8, 4, false), 0);

	CHECK_EQ(rxp_ring_dequeue(r, out, 6, false), 6);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(untag(out[i]), 1 + i);
	/* 2 left: asking for 10 gives 2 */
	CHECK_EQ(rxp_ring_dequeue(r, out, 10, false), 2);
	CHECK_EQ(untag(out[0]), 7);
	CHECK_EQ(untag(out[1]), 8);
	CHECK_EQ(rxp_ring_dequeue(r, out, 10, false), 0);
	CHECK_EQ(rxp_ring_count(r), 0);
	rxp_ring_destroy(r);
}

/* FIFO across many fill/drain cycles of odd sizes so the indices wrap the slots often. */
static void test_fifo_wraparound(void)
{
	struct rxp_ring *r = rxp_ring_create(16);
	void *buf[16];
	uintptr_t next_in = 1, next_out = 1;
	unsigned seed = 12345;
	bool order_ok = true;

	for (int cycle = 0; cycle < 100000; cycle++) {
		uint32_t want_in = (uint32_t)(rand_r(&seed) % 17);
		uint32_t want_out = (uint32_t)(rand_r(&seed) % 17);
		uint32_t before = rxp_ring_count(r);
		uint32_t n;

		for (uint32_t i = 0; i < want_in; i++)
			buf[i] = tag(next_in + i);
		n = rxp_ring_enqueue(r, buf, want_in, false);
		if (n != RXP_MIN(want_in, 16 - before))
			order_ok = false;
		next_in += n;
		before = rxp_ring_count(r);
		n = rxp_ring_dequeue(r, buf, want_out, cycle & 1);
		if (cycle & 1) {
			if (n != (want_out <= before ? want_out : 0))
				order_ok = false;
		} else if (n != RXP_MIN(want_out, before)) {
			order_ok = false;
		}
		for (uint32_t i = 0; i < n; i++)
			if (untag(buf[i]) != next_out++)
				order_ok = false;
		if (rxp_ring_count(r) != next_in - next_out)
			order_ok = false;
	}
	CHECK(order_ok);
	/* the indices went round the 16 slots thousands of times */
	CHECK(next_out > 100000);
	rxp_ring_destroy(r);
}

/*
 * The head and tail indices are free-running 32-bit counters; start them just
 * below 2^32 so they overflow during the test, as they do after ~4 billion
 * pointers in a long run.
 */
static void test_index_overflow(void)
{
	struct rxp_ring *r = rxp_ring_create(8);
	const uint32_t start = UINT32_MAX - 20;
	void *buf[8];
	uintptr_t next_in = 1, next_out = 1;
	bool ok = true;

	atomic_store(&r->prod.head, start);
	atomic_store(&r->prod.tail, start);
	atomic_store(&r->cons.head, start);
	atomic_store(&r->cons.tail, start);
	CHECK_EQ(rxp_ring_count(r), 0);
	for (int cycle = 0; cycle < 20; cycle++) {
		for (int i = 0; i < 7; i++)
			buf[i] = tag(next_in++);
		if (rxp_ring_enqueue(r, buf, 7, true) != 7)
			ok = false;
		if (rxp_ring_count(r) != 7)
			ok = false;
		/* one more fits, two do not */
		if (rxp_ring_enqueue(r, buf, 2, true) != 0)
			ok = false;
		if (rxp_ring_dequeue(r, buf, 7, true) != 7)
			ok = false;
		for (int i = 0; i < 7; i++)
			if (untag(buf[i]) != next_out++)
				ok = false;
		if (rxp_ring_count(r) != 0)
			ok = false;
	}
	CHECK(ok);
	/* the counters did wrap past zero */
	CHECK(atomic_load(&r->prod.tail) < start);
	rxp_ring_destroy(r);
}

static void test_count(void)
{
	struct rxp_ring *r = rxp_ring_create(32);
	void *buf[32];

	for (uintptr_t i = 0; i < 32; i++)
		buf[i] = tag(i + 1);
	for (uint32_t i = 1; i <= 32; i++) {
		CHECK_EQ(rxp_ring_enqueue(r, buf, 1, true), 1);
		CHECK_EQ(rxp_ring_count(r), i);
	}
	for (uint32_t i = 32; i > 0; i--) {
		CHECK_EQ(rxp_ring_dequeue(r, buf, 1, false), 1);
		CHECK_EQ(rxp_ring_count(r), i - 1);
	}
	rxp_ring_destroy(r);
}

/* ---- multi-threaded stress ---- */

#define STRESS_PRODUCERS 2
#define STRESS_CONSUMERS 2
#define STRESS_PER_PRODUCER 1000000u	/* 2M pointers: 2M enqueues + 2M dequeues */
#define STRESS_SEQ_BITS 24

struct stress {
	struct rxp_ring *r;
	_Atomic uint64_t consumed;
	_Atomic bool start;
	uint8_t *seen[STRESS_PRODUCERS];	/* times each (producer, seq) was dequeued */
	_Atomic uint64_t order_errors;
	_Atomic uint64_t bad_tags;
};

struct stress_arg {
	struct stress *s;
	unsigned id;
};

static void *producer(void *arg)
{
	struct stress_arg *a = arg;
	struct stress *s = a->s;
	unsigned seed = 7 + a->id;
	uint32_t seq = 0;
	void *buf[32];

	while (!atomic_load(&s->start))
		;
	while (seq < STRESS_PER_PRODUCER) {
		uint32_t n = 1 + (uint32_t)rand_r(&seed) % 32;
		bool all = rand_r(&seed) & 1;
		uint32_t done;

		n = RXP_MIN(n, STRESS_PER_PRODUCER - seq);
		for (uint32_t i = 0; i < n; i++)
			buf[i] = tag(((uintptr_t)(a->id + 1) << STRESS_SEQ_BITS) | (seq + i));
		done = rxp_ring_enqueue(s->r, buf, n, all);
		if (all && done != 0 && done != n)
			atomic_fetch_add(&s->bad_tags, 1);
		seq += done;
		if (!done)
			sched_yield();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress_arg *a = arg;
	struct stress *s = a->s;
	const uint64_t total = (uint64_t)STRESS_PRODUCERS * STRESS_PER_PRODUCER;
	unsigned seed = 99 + a->id;
	int64_t last[STRESS_PRODUCERS];
	void *buf[32];

	for (int p = 0; p < STRESS_PRODUCERS; p++)
		last[p] = -1;
	while (!atomic_load(&s->start))
		;
	while (atomic_load(&s->consumed) < total) {
		uint32_t n = 1 + (uint32_t)rand_r(&seed) % 32;
		bool all = rand_r(&seed) & 1;
		uint32_t got = rxp_ring_dequeue(s->r, buf, n, all);

		if (all && got != 0 && got != n)
			atomic_fetch_add(&s->bad_tags, 1);
		for (uint32_t i = 0; i < got; i++) {
			uintptr_t t = untag(buf[i]);
			uintptr_t p = (t >> STRESS_SEQ_BITS) - 1;
			uint32_t seq = (uint32_t)(t & ((1u << STRESS_SEQ_BITS) - 1));

			if (p >= STRESS_PRODUCERS || seq >= STRESS_PER_PRODUCER) {
				atomic_fetch_add(&s->bad_tags, 1);
				continue;
			}
			/* Each slot of seen[] is written by whoever dequeued it: a second
			 * writer would be a duplicate, which the final scan counts. */
			__atomic_fetch_add(&s->seen[p][seq], 1, __ATOMIC_RELAXED);
			/* One producer's pointers reach one consumer in the order sent. */
			if ((int64_t)seq <= last[p])
				atomic_fetch_add(&s->order_errors, 1);
			last[p] = seq;
		}
		if (got)
			atomic_fetch_add(&s->consumed, got);
		else
			sched_yield();
	}
	return NULL;
}

static void test_mpmc_stress(void)
{
	struct stress s;
	struct stress_arg pa[STRESS_PRODUCERS], ca[STRESS_CONSUMERS];
	pthread_t pt[STRESS_PRODUCERS], ct[STRESS_CONSUMERS];
	uint64_t missing = 0, duplicated = 0;
	double t0;

	memset(&s, 0, sizeof(s));
	s.r = rxp_ring_create(256);
	CHECK(s.r != NULL);
	if (!s.r)
		return;
	for (int p = 0; p < STRESS_PRODUCERS; p++)
		s.seen[p] = calloc(STRESS_PER_PRODUCER, 1);
	for (unsigned i = 0; i < STRESS_PRODUCERS; i++) {
		pa[i] = (struct stress_arg){ &s, i };
		CHECK_EQ(pthread_create(&pt[i], NULL, producer, &pa[i]), 0);
	}
	for (unsigned i = 0; i < STRESS_CONSUMERS; i++) {
		ca[i] = (struct stress_arg){ &s, i };
		CHECK_EQ(pthread_create(&ct[i], NULL, consumer, &ca[i]), 0);
	}
	t0 = now_s();
	atomic_store(&s.start, true);
	for (int i = 0; i < STRESS_PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	for (int i = 0; i < STRESS_CONSUMERS; i++)
		pthread_join(ct[i], NULL);
	printf("  mpmc stress: %u pointers through %d producers and %d consumers in %.3f s\n",
	       STRESS_PRODUCERS * STRESS_PER_PRODUCER, STRESS_PRODUCERS, STRESS_CONSUMERS,
	       now_s() - t0);

	for (int p = 0; p < STRESS_PRODUCERS; p++) {
		for (uint32_t i = 0; i < STRESS_PER_PRODUCER; i++) {
			missing += s.seen[p][i] == 0;
			duplicated += s.seen[p][i] > 1;
		}
		free(s.seen[p]);
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(duplicated, 0);
	CHECK_EQ(atomic_load(&s.bad_tags), 0);
	CHECK_EQ(atomic_load(&s.order_errors), 0);
	CHECK_EQ(atomic_load(&s.consumed), (uint64_t)STRESS_PRODUCERS * STRESS_PER_PRODUCER);
	CHECK_EQ(rxp_ring_count(s.r), 0);
	CHECK_EQ(atomic_load(&s.r->prod.head), atomic_load(&s.r->prod.tail));
	CHECK_EQ(atomic_load(&s.r->cons.head), atomic_load(&s.r->cons.tail));
	rxp_ring_destroy(s.r);
}

int main(void)
{
	RUN(test_capacity_rounding);
	RUN(test_create_invalid);
	RUN(test_bulk_all_or_nothing);
	RUN(test_burst_partial);
	RUN(test_fifo_wraparound);
	RUN(test_index_overflow);
	RUN(test_count);
	RUN(test_mpmc_stress);
	return tests_done();
}
