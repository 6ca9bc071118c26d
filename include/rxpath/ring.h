/* SPDX-License-Identifier: MIT */
/*
 * A bounded lock-free ring of pointers for many producers and many consumers.
 *
 * It is the buffer pool's shared (slow-path) store, so it moves buffers in
 * bulk. Each side reserves a range by moving its head with a compare-and-swap,
 * fills or drains the range, then publishes it by moving its tail once every
 * earlier reservation of the same side has been published.
 */
#ifndef RXPATH_RING_H
#define RXPATH_RING_H

#include <stdatomic.h>
#include "rxpath/common.h"

struct rxp_ring_headtail {
	_Atomic uint32_t head;	/* next index to reserve */
	_Atomic uint32_t tail;	/* everything before it is published */
};

struct rxp_ring {
	rxp_cache_aligned struct rxp_ring_headtail prod;
	rxp_cache_aligned struct rxp_ring_headtail cons;
	rxp_cache_aligned uint32_t size;	/* slots, a power of two */
	uint32_t mask;
	uint32_t capacity;		/* every slot is usable */
	void *slots[];
};

/* Returns a ring holding at least @capacity pointers, or NULL (errno set). */
struct rxp_ring *rxp_ring_create(uint32_t capacity);
void rxp_ring_destroy(struct rxp_ring *r);

/* Returns the number of pointers the ring holds now (exact when quiescent). */
static inline uint32_t rxp_ring_count(const struct rxp_ring *r)
{
	uint32_t prod_tail = atomic_load_explicit(&r->prod.tail, memory_order_acquire);
	uint32_t cons_tail = atomic_load_explicit(&r->cons.tail, memory_order_acquire);

	return prod_tail - cons_tail;
}

/* Wait until earlier reservations of this side are published, then publish ours. */
static inline void rxp_ring_publish(struct rxp_ring_headtail *ht, uint32_t old_head,
				    uint32_t new_head)
{
	/*
	 * Acquire: the slots published by the reservation before ours become
	 * ours to republish, so the other side, acquiring our tail, sees them too.
	 */
	while (atomic_load_explicit(&ht->tail, memory_order_acquire) != old_head)
		rxp_cpu_relax();
	/* Pairs with the acquire load of this tail by the other side's reserve. */
	atomic_store_explicit(&ht->tail, new_head, memory_order_release);
}

/*
 * Enqueue up to @n pointers; with @all, exactly @n or none.
 * Returns how many were enqueued.
 */
static inline uint32_t rxp_ring_enqueue(struct rxp_ring *r, void *const *objs, uint32_t n,
					bool all)
{
	uint32_t old_head, new_head, free_slots;

	old_head = atomic_load_explicit(&r->prod.head, memory_order_relaxed);
	do {
		/* Pairs with the release store of cons.tail in rxp_ring_dequeue(). */
		uint32_t cons_tail = atomic_load_explicit(&r->cons.tail, memory_order_acquire);

		free_slots = r->capacity - (old_head - cons_tail);
		if (n > free_slots) {
			if (all || free_slots == 0)
				return 0;
			n = free_slots;
		}
		new_head = old_head + n;
	} while (!atomic_compare_exchange_weak_explicit(&r->prod.head, &old_head, new_head,
							memory_order_relaxed,
							memory_order_relaxed));

	for (uint32_t i = 0; i < n; i++)
		r->slots[(old_head + i) & r->mask] = objs[i];
	rxp_ring_publish(&r->prod, old_head, new_head);
	return n;
}

/*
 * Dequeue up to @n pointers; with @all, exactly @n or none.
 * Returns how many were dequeued.
 */
static inline uint32_t rxp_ring_dequeue(struct rxp_ring *r, void **objs, uint32_t n, bool all)
{
	uint32_t old_head, new_head, avail;

	old_head = atomic_load_explicit(&r->cons.head, memory_order_relaxed);
	do {
		/* Pairs with the release store of prod.tail in rxp_ring_enqueue(). */
		uint32_t prod_tail = atomic_load_explicit(&r->prod.tail, memory_order_acquire);

		avail = prod_tail - old_head;
		if (n > avail) {
			if (all || avail == 0)
				return 0;
			n = avail;
		}
		new_head = old_head + n;
	} while (!atomic_compare_exchange_weak_explicit(&r->cons.head, &old_head, new_head,
							memory_order_relaxed,
							memory_order_relaxed));

	for (uint32_t i = 0; i < n; i++)
		objs[i] = r->slots[(old_head + i) & r->mask];
	rxp_ring_publish(&r->cons, old_head, new_head);
	return n;
}

#endif
