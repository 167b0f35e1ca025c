/*
 * A struct ptout_mem that carves an output buffer (ptout_build) out of one
 * block of memory the caller already holds: the recorder region of
 * trace --recorder, whose trace must lie in it. Every region ptout_build
 * asks for is aligned to its size (33.2.7.1, 33.2.7.2); the block's start
 * must be aligned to the largest. Regions larger than 4 KiB come from the
 * start, in the decreasing sizes ptout_build asks for them (so no gaps);
 * ToPA tables and 4 KiB regions from the end. Nothing is freed singly: the
 * block goes as a whole.
 */
#ifndef EFIPT_ARCH_PT_CARVE_H
#define EFIPT_ARCH_PT_CARVE_H

#include <stdint.h>

#include "arch/x86_64/pt_output.h"
#include "core/recorder.h"

struct ptout_carve {
	const struct ptout_mem *parent;	/* write64, fill, read go there */
	uint64_t base, size;
	uint64_t low, high;		/* next free byte from the start; end of free space */
	struct ptout_mem mem;		/* give this to ptout_build */
};

/* Bytes ptout_build needs for s: output regions and ToPA tables. */
uint64_t ptout_carve_need(const struct ptcfg_settings *s);
/* The alignment the block's start needs for s. */
uint64_t ptout_carve_align(const struct ptcfg_settings *s);

void ptout_carve_init(struct ptout_carve *c, const struct ptout_mem *parent, uint64_t base,
		      uint64_t size);

#endif

/* A built buffer as the recorder region records it: the header's output
 * fields (output, mode, trace_size, msr_base, msr_mask) and the layout
 * section's bytes at dst. Returns the section's bytes. */
uint64_t ptout_record(const struct ptout *o, struct ptrec_header *h, uint8_t *dst);
