/*
 * Which symbol file belongs to a traced image, and the proof that it does.
 *
 * Candidates, in order (docs/symbols.md): the CodeView path the image
 * records (after --path-map), with EDK2's sibling NAME.debug of NAME.dll;
 * the same base name under each --symbols PATH (a directory searched
 * recursively for NAME.debug, NAME.so, NAME.dll, or one file); a candidate's
 * .gnu_debuglink, beside it and under --symbols; the FvFile GUID's name in
 * FV/Guid.xref; last, NAME.map (ldmap.h). A candidate is used only
 * when its code sections equal the image's code at the same RVAs, byte for
 * byte except at relocation sites; one that differs is rejected and named
 * (a map has no code: its sections are checked against the image's headers).
 */
#ifndef EFIPT_HOST_SYMMAP_H
#define EFIPT_HOST_SYMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/input/image.h"
#include "host/symbols/symfile.h"

struct symopts {
	const char *paths[64];		/* --symbols */
	size_t npaths;
	const char *map_old[16], *map_new[16];	/* --path-map OLD=NEW */
	size_t nmaps;
	const char *bind_img[64], *bind_file[64];	/* --symbols IMAGE=FILE */
	size_t nbinds;
	/* private: files found under the --symbols directories */
	char **found;
	size_t nfound;
	bool indexed;
};

/* --symbols PATH (or IMAGE=FILE: FILE is the symbol file of the image
 * named IMAGE, with or without .efi, any case; tried first, and checked as
 * any other) / --path-map OLD=NEW from the command line: 0, or -1 with the
 * reason in err. */
int symopts_add_path(struct symopts *o, const char *path, char *err, size_t errlen);
int symopts_add_map(struct symopts *o, const char *spec, char *err, size_t errlen);
void symopts_free(struct symopts *o);
/* Does IMAGE (of --symbols IMAGE=FILE) name the image called name: the
 * same with or without ".efi", in any case. */
bool symopts_names_image(const char *name, const char *image);

enum symhow {
	SYMHOW_NONE,
	SYMHOW_CODEVIEW,	/* the path the image records */
	SYMHOW_BASENAME,	/* its base name under --symbols */
	SYMHOW_DEBUGLINK,	/* .gnu_debuglink of a candidate */
	SYMHOW_IMAGE,		/* the traced ELF file itself (--elf) */
	SYMHOW_GUID,		/* its FvFile GUID through FV/Guid.xref */
	SYMHOW_MAP,		/* a GNU ld map file, the last resort */
	SYMHOW_GIVEN,		/* --symbols IMAGE=FILE */
};
const char *symhow_name(int how);

/* Reads the image's code: bytes at an address, as core/pt_image.h. */
typedef int (*symmap_read)(void *ctx, uint64_t addr, uint8_t *buf, size_t n);

/* A match on fewer known bytes (a QEMU record of executed bytes) is said. */
#define SYMMAP_FEW_BYTES 256

/* Find and check the symbol file of im (name, base, size, pdb set). An
 * image of size 0 gets none. */
void symmap_resolve(struct image *im, struct symopts *o, symmap_read read, void *ctx);
/* Close and free im's symbol file (im->sf), if any. */
void symmap_release(struct image *im);

#endif
