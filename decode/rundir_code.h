/*
 * The code and image list of a run directory, as the decoders need them:
 * every mem-<phys>.bin snapshot named in memmap.json mapped at its address,
 * and images.json as the list the decode summary attributes instructions to.
 */
#ifndef EFIPT_DECODE_RUNDIR_CODE_H
#define EFIPT_DECODE_RUNDIR_CODE_H

#include "core/memview.h"
#include "core/pe_info.h"
#include "core/pt_summary.h"
#include "decode/rundir.h"

struct rundir_code {
	struct memview view;
	struct memview_region *regions;
	void **maps;              /* mmap'd snapshot files */
	size_t *map_sizes;
	unsigned nmaps;
	struct ptsum_image *images;
	struct pe_code *code;     /* per image: images.json's "code" (n 0: none) */
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
 * messages) into out[0..max): base, size, name; and, when code is not
 * NULL, each image's executable sections ("code": [{"rva", "size"}...],
 * docs/format.md) and entry point into code[0..max). Returns 0, or -1 with
 * "WHAT: image N is malformed" or the like in err. */
int images_json_parse(json_t *ij, const char *what, struct ptsum_image *out,
		      struct pe_code *code, unsigned max, unsigned *n, char *err, size_t errlen);

/*
 * Say on stderr where images of a list sorted by ptimg_list_sort() overlap
 * (it returned 1), and which image owns the shared addresses by the rule
 * every command applies (core/pt_image.h: the one that starts last; a
 * nested image owns its whole range). name(img) gives an element's name.
 * At most a few lines, then how many more. "CMD: ..." as the commands say.
 */
/* The name of a struct ptsum_image (for images_note_overlaps()). */
const char *ptsum_image_name(const void *img);
void images_note_overlaps(const char *cmd, const void *list, unsigned n, size_t stride,
			  const char *(*name)(const void *img));

#endif
