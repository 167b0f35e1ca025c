/*
 * A read-only view of code memory made of regions (base, size, bytes), for
 * the flow decoder's ptimg_read_fn: live firmware memory plus copies in
 * efipt.efi, snapshot files of a run directory on the host. Regions added
 * first win where they overlap. Addresses in no region read as nothing, so
 * a damaged trace cannot lead a decoder into MMIO or unmapped memory.
 */
#ifndef EFIPT_CORE_MEMVIEW_H
#define EFIPT_CORE_MEMVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memview_region {
	uint64_t base, size;
	const uint8_t *bytes;
};

struct memview {
	struct memview_region *r; /* caller's array */
	unsigned n, max;
	unsigned last;            /* region of the last read */
};

void memview_init(struct memview *v, struct memview_region *regions, unsigned max);
/* Returns false when the array is full or size is 0. */
bool memview_add(struct memview *v, uint64_t base, uint64_t size, const void *bytes);
/* ptimg_read_fn: ctx is the struct memview. */
int memview_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n);

#endif
