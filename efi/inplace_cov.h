/*
 * Block coverage of an in-place decode, written as coverage.drcov into the
 * run directory (docs/format.md, docs/coverage.md). Bitmaps come from the
 * pool, at most INPLACE_COV_MAX bytes in all; images beyond that are listed
 * in the file without blocks.
 */
#ifndef EFIPT_EFI_INPLACE_COV_H
#define EFIPT_EFI_INPLACE_COV_H

#include <efi.h>

#include "core/pt_cov.h"
#include "core/pt_summary.h"
#include "efi/run.h"

#define INPLACE_COV_MAX (32u << 20)
#define INPLACE_COV_SEEN 65536u	/* blocks remembered as marked (1 MiB) */

struct inplace_cov {
	struct ptcov cov;
	struct ptcov_image *img;	/* pool */
	unsigned n;
	unsigned skipped;		/* images left without bitmaps */
	struct ptcov_seen *seen;	/* pool (NULL: none), for ptcov_use_blocks() */
	uint32_t nseen;
};

/* Set up over the images of the summary, code read through code (for PE
 * headers: entry points and code sizes). EFI_OUT_OF_RESOURCES if not even
 * the image list fits in the pool. */
EFI_STATUS inplace_cov_init(struct inplace_cov *ic, const struct ptsum_image *images,
			    unsigned n, const struct ptimg *code);

/* Write coverage.drcov (recorded in the manifest's files list). */
EFI_STATUS inplace_cov_write(struct inplace_cov *ic, struct run *run);

void inplace_cov_free(struct inplace_cov *ic);

#endif
