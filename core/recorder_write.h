/*
 * Writing a recorder region (core/recorder.h): what efipt.efi does when it
 * arms a recorder and again at ExitBootServices, and what the host tests
 * do to build regions. Offsets are from the region's start; mem (or dst)
 * maps the region (or the section) in the writer's address space.
 */
#ifndef EFIPT_CORE_RECORDER_WRITE_H
#define EFIPT_CORE_RECORDER_WRITE_H

#include <stdint.h>

#include "core/recorder.h"

/* Bytes of a layout section, an images section of n records, and the
 * directory (page-rounded) of a code section with room for n snapshots. */
uint64_t ptrec_layout_bytes(uint32_t ntab, uint32_t nreg);
uint64_t ptrec_images_bytes(uint32_t n);
uint64_t ptrec_code_dir_bytes(uint32_t n);

/* List a section (cap rounded up to pages) in h. 0, or -1 (full, unaligned). */
int ptrec_add_section(struct ptrec_header *h, uint32_t kind, uint64_t off, uint64_t cap);
/* Its first used bytes are written: record used and their CRC-32. */
void ptrec_section_done(struct ptrec_header *h, uint32_t kind, const uint8_t *mem,
			uint64_t used);

/* The layout section's bytes at dst; returns the bytes written. */
uint64_t ptrec_layout_write(uint8_t *dst, const uint64_t *tab, uint32_t ntab,
			    const struct ptrec_region *reg, uint32_t nreg);

/* An images section at dst (cap bytes): records added one by one. */
struct ptrec_images_writer {
	uint8_t *dst;
	uint64_t cap;
	uint32_t n, dropped;
};
void ptrec_images_begin(struct ptrec_images_writer *w, uint8_t *dst, uint64_t cap);
int ptrec_images_add(struct ptrec_images_writer *w, const struct imgrec *rec);
uint64_t ptrec_images_used(const struct ptrec_images_writer *w);

/* A code section at dst (cap bytes) with room for max snapshots. */
struct ptrec_code_writer {
	uint8_t *dst;
	uint64_t cap, next;
	uint32_t n, max;
	uint32_t dropped;	/* did not fit */
	uint64_t dropped_bytes;
};
void ptrec_code_begin(struct ptrec_code_writer *w, uint8_t *dst, uint64_t cap, uint32_t max);
/*
 * Copy the pages [floor(phys), ceil(phys + size)) from src (which maps
 * floor(phys)) as a snapshot. -1 if there is no room (counted in dropped)
 * or it overlaps one already added.
 */
int ptrec_code_add(struct ptrec_code_writer *w, uint64_t phys, uint64_t size, uint32_t code_type,
		   uint32_t image, const void *src);
uint64_t ptrec_code_used(const struct ptrec_code_writer *w);

#endif

/*
 * Where everything goes in a region: the trace area first (the output
 * regions and ToPA tables, trace_area bytes), the header, then the
 * sections, each page aligned. The caller fills the counts and sizes;
 * ptrec_plan() computes the offsets and the total.
 */
struct ptrec_plan {
	/* in */
	uint64_t trace_area;	/* 0: no trace (--source qemu) */
	uint32_t ntab, nreg;	/* at most, for the layout */
	uint64_t cmdline_len;
	uint32_t arm_images, exit_images;	/* image records */
	uint64_t arm_code;	/* bytes of code at arming (page rounded, summed) */
	uint64_t exit_code;	/* room for code at ExitBootServices */
	/* out */
	uint64_t header_off;
	uint64_t off[PTREC_SEC_CMDLINE + 1], cap[PTREC_SEC_CMDLINE + 1]; /* by kind */
	uint64_t total;
};
void ptrec_plan(struct ptrec_plan *p);
/* List the plan's sections in h (h->nsect becomes 6). */
void ptrec_plan_sections(const struct ptrec_plan *p, struct ptrec_header *h);
