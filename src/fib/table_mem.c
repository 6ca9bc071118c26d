/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <sys/mman.h>
#include "rxpath/common.h"
#include "table_mem.h"

void *rxp_table_map(size_t len)
{
	size_t span = len + RXP_TABLE_HUGE;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t start;
	size_t head;

	if (p == MAP_FAILED)
		return NULL;
	/* keep the 2 MiB-aligned part, give back what is before and after it */
	start = RXP_ALIGN_UP((uintptr_t)p, (uintptr_t)RXP_TABLE_HUGE);
	head = start - (uintptr_t)p;
	if (head)
		munmap(p, head);
	munmap((uint8_t *)start + len, span - head - len);
	(void)madvise((void *)start, len, MADV_HUGEPAGE);
	return (void *)start;
}

size_t rxp_table_resident(const void *p, size_t len)
{
	unsigned char vec[4096];
	size_t done = 0, n = 0;

	while (done < len) {
		size_t chunk = RXP_MIN(len - done, sizeof(vec) * (size_t)RXP_TABLE_PAGE);
		size_t pages = (chunk + RXP_TABLE_PAGE - 1) / RXP_TABLE_PAGE;

		if (mincore((uint8_t *)p + done, chunk, vec))
			return 0;
		for (size_t i = 0; i < pages; i++)
			n += vec[i] & 1;
		done += chunk;
	}
	return n * RXP_TABLE_PAGE;
}
