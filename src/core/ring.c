/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include "rxpath/ring.h"

struct rxp_ring *rxp_ring_create(uint32_t capacity)
{
	struct rxp_ring *r;
	uint32_t size;

	if (capacity == 0 || capacity > (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	size = rxp_pow2_roundup(capacity);
	r = aligned_alloc(RXP_CACHE_LINE,
			  RXP_ALIGN_UP(sizeof(*r) + (size_t)size * sizeof(void *), RXP_CACHE_LINE));
	if (!r)
		return NULL;
	atomic_init(&r->prod.head, 0);
	atomic_init(&r->prod.tail, 0);
	atomic_init(&r->cons.head, 0);
	atomic_init(&r->cons.tail, 0);
	r->size = size;
	r->mask = size - 1;
	r->capacity = size;
	return r;
}

void rxp_ring_destroy(struct rxp_ring *r)
{
	free(r);
}
