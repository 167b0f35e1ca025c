/*
 * The inputs every command that decodes a trace takes: a run directory
 * (trace.pt, its code snapshots, images.json, the CPU's errata and the
 * trace's DisTNT/DisRETC from manifest.json), or a raw trace with code
 * images (--raw/--elf/--pe) and a list naming them (--images, images.json
 * format; each --pe file names itself).
 */
#ifndef EFIPT_DECODE_TRACE_INPUT_H
#define EFIPT_DECODE_TRACE_INPUT_H

#include <stddef.h>

#include "core/pt_flow.h"
#include "core/pt_summary.h"
#include "decode/pt_sections.h"

#define TRACE_IMAGES_MAX 4096

/* Named images (base, size, name), as the summary and coverage use them. */
struct trace_images {
	struct ptsum_image *img;	/* malloc'd, TRACE_IMAGES_MAX */
	uint64_t *code_size, *entry;	/* per image, from --pe files (else 0) */
	unsigned n;
};

/*
 * Load run directory dir: its snapshots as sections of im, what its
 * manifest says into fc (flow_setup), the path of its trace into trace,
 * and its images.json into imgs (may be NULL). Errors are printed as
 * "CMD: reason"; returns 0 or -1.
 */
int trace_input_run(const char *cmd, const char *dir, struct ptsec_image *im,
		    struct ptflow_config *fc, char *trace, size_t cap, struct trace_images *imgs);

/* Add the images of an images.json file (--images FILE). */
int trace_input_images(const char *cmd, const char *path, struct trace_images *imgs);

/* --pe FILE[:BASE]: its executable sections into im, and the image, named
 * after the file ("dir/Foo.efi" -> "Foo.efi"), into imgs. */
int trace_input_pe(const char *cmd, const char *spec, struct ptsec_image *im,
		   struct trace_images *imgs);

void trace_images_free(struct trace_images *imgs);

#endif
