/*
 * The decode summary that efipt.efi prints after an in-place decode and
 * `efipt decode` prints on the host from the same run directory: counts of
 * instructions, branches, events and errors, and the images that executed
 * most. One implementation, so both sides print the same text for the same
 * trace and code.
 */
#ifndef EFIPT_CORE_PT_SUMMARY_H
#define EFIPT_CORE_PT_SUMMARY_H

#include <stdint.h>

#include "core/pt_flow.h"
#include "core/strbuf.h"

struct ptsum_image {
	uint64_t base, size;
	char name[64];
	uint64_t insns;      /* filled by the summary */
};

struct ptsum {
	struct ptsum_image *img; /* caller's array, sorted by ptsum_init */
	unsigned nimg;
	unsigned last;           /* index of the last image hit (runs cluster) */
	int overlap;             /* some images overlap (ptimg_list_sort()) */
	uint64_t insns, outside; /* all instructions; those in no listed image */
	uint64_t ev[PTFLOW_EV_COUNT];
	uint64_t first_error_off;
	const char *first_error;
};

/* img[0..n) need base, size and name; insns are reset; an image whose range
 * runs past 2^64 gets size 0 (it holds nothing). Sorts img by base; where
 * images overlap, an address counts for the one that starts last (a nested
 * image: core/pt_image.h). */
void ptsum_init(struct ptsum *s, struct ptsum_image *img, unsigned n);

/* ptflow_sink callbacks: pass s as ctx. */
void ptsum_on_run(void *s, const struct ptflow_run *run);
/* The same count from blocks (ptflow_on_blocks(dec, ptsum_on_blocks)): the
 * fast way. */
void ptsum_on_blocks(void *s, const struct ptflow_batch *batch);
void ptsum_on_event(void *s, const struct ptflow_event *ev);

/* The summary text (stat: the decoder's counters; top: images to list). */
void ptsum_format(const struct ptsum *s, const struct ptflow_stat *stat, unsigned top,
		  struct strbuf *out);

#endif
