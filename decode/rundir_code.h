/*
 * The code and image list of a run directory, as the decoders need them:
 * every mem-<phys>.bin snapshot named in memmap.json mapped at its address,
 * and images.json as the list the decode summary attributes instructions to.
 */
#ifndef EFIPT_DECODE_RUNDIR_CODE_H
#define EFIPT_DECODE_RUNDIR_CODE_H

#include "core/memview.h"
#include "core/pt_summary.h"
#include "decode/rundir.h"

struct rundir_code {
	struct memview view;
	struct memview_region *regions;
	void **maps;              /* mmap'd snapshot files */
	size_t *map_sizes;
	unsigned nmaps;
	struct ptsum_image *images;
	unsigned nimages;
};

/* Returns 0, or -1 with a message naming the file and the problem in err. */
int rundir_code_load(struct rundir_code *c, const struct rundir *rd, char *err, size_t errlen);
void rundir_code_free(struct rundir_code *c);

/* Image i of an images.json "images" array (r): its name, base and size,
 * the range [base, base + size) within 2^64. Returns 0, or -1 with
 * "WHAT: image N ..." in err (what is wrong). */
int images_json_entry(json_t *r, size_t i, const char *what, const char **name,
		      uint64_t *base, uint64_t *size, char *err, size_t errlen);
/* The "images" array of an images.json document (what names the file in
 * messages) into out[0..max): base, size, name. Returns 0, or -1 with
 * "WHAT: image N is malformed" or the like in err. */
int images_json_parse(json_t *ij, const char *what, struct ptsum_image *out, unsigned max,
		      unsigned *n, char *err, size_t errlen);

#endif
