/*
 * A traced image, the one description every command uses: where it lies,
 * its name, where its symbols may be (the CodeView path it records, its
 * FvFile GUID), its executable sections, and, once matched
 * (host/symbols/symmap.h), its symbol file. A list of images follows
 * core/pt_image.h's rule: where two overlap, the one that starts last owns
 * the addresses they share (a nested image owns its whole range).
 *
 * Images come from a run directory's images.json, from --images FILE (the
 * same format, docs/format.md), and from --pe and --elf files.
 */
#ifndef EFIPT_HOST_IMAGE_H
#define EFIPT_HOST_IMAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pe_info.h"

struct symfile;

struct image {
	uint64_t base, size;	/* first: an image list (core/pt_image.h) */
	char name[64];
	char pdb[1024];		/* CodeView path ("" if none) */
	bool pdb_is_image;	/* pdb is the traced ELF file itself (--elf) */
	char guid[40];		/* FvFile GUID ("" if none) */
	struct pe_code code;	/* executable sections and entry (n 0: not known) */
	/* loaded while efipt.efi traced (images.json "loaded_at"): its code
	 * is the run's code changes from trace byte loaded_at on */
	bool loaded;		/* "loaded_at" given */
	bool loaded_known;	/* ... and not null */
	uint64_t loaded_at;
	bool executed_only;	/* its code is known only where it ran (a QEMU
				 * plugin's record): zero bytes are unknown */
	/* its symbol file, as symmap_resolve() found it */
	struct symfile *sf;	/* owned; NULL: no symbols */
	int how;		/* enum symhow */
	uint64_t compared;	/* code bytes found equal */
	uint64_t reloc_diffs;	/* bytes that differ at relocation sites */
	bool verified;		/* compared > 0 */
	bool map_checked;	/* a map's sections agree with the image's headers */
	unsigned tried;		/* candidate files opened */
	unsigned code_rejects;	/* candidates whose code is not the image's */
	char notes[2048];	/* what was tried and rejected, what is missing */
};

#define IMAGES_MAX 4096

struct image_list {
	struct image *v;
	unsigned n, cap;
};

/* A new zeroed image at the end of l: NULL past IMAGES_MAX or out of memory. */
struct image *image_list_add(struct image_list *l);
/* Empty l (its images' symbol files freed). */
void image_list_clear(struct image_list *l);
void image_list_free(struct image_list *l);

/*
 * The "images" array of an images.json document (what names the file in
 * messages) appended to l: name, base, size, pdb, the FvFile GUID of its
 * path or name, and its executable sections ("code": [{"rva", "size"}...])
 * and entry. Returns 0, or -1 with "WHAT: image N is malformed" or the like
 * in err.
 */
int images_json_read(json_t *ij, const char *what, struct image_list *l, char *err,
		     size_t errlen);

/* Image i of an images.json "images" array (r): its name, base and size,
 * the range [base, base + size) within 2^64. Returns 0, or -1 with
 * "WHAT: image N ..." in err (what is wrong). */
int images_json_entry(json_t *r, size_t i, const char *what, const char **name,
		      uint64_t *base, uint64_t *size, char *err, size_t errlen);

/*
 * --images FILE over the images of --pe files or a run directory: named's
 * images replace l's, each taking the executable sections of an image of l
 * at the same base and size where the file gives none. named is emptied.
 */
void image_list_rename(struct image_list *l, struct image_list *named);

/*
 * Say on stderr where images of a list sorted by ptimg_list_sort() overlap
 * (it returned 1), and which image owns the shared addresses by the rule
 * every command applies. name(img) gives an element's name (stride: the
 * size of an element). At most a few lines, then how many more. "CMD: ..."
 * as the commands say.
 */
void images_note_overlaps(const char *cmd, const void *list, unsigned n, size_t stride,
			  const char *(*name)(const void *img));
/* The name of a struct image, for images_note_overlaps(). */
const char *image_name(const void *img);

#endif
