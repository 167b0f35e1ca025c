/*
 * Host code images for the flow decoder: a list of non-overlapping sections
 * (address, bytes) loaded from raw files, ELF files (PT_LOAD segments) and
 * PE32+ images (sections placed at a load base, base relocations applied).
 * ptsec_read() is the core/pt_image.h read callback over them.
 *
 * Input files are untrusted: every offset and size is checked before use.
 */
#ifndef EFIPT_HOST_PT_SECTIONS_H
#define EFIPT_HOST_PT_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pe_info.h"
#include "core/pt_image.h"

struct ptsec {
	uint64_t vaddr;
	uint64_t size;
	uint8_t *data;
	bool owned;		/* data is freed with the image (else the caller's) */
	char name[64];
};

struct ptsec_image {
	struct ptsec *sec;	/* sorted by vaddr */
	size_t n, cap;
	size_t last;		/* index of the last hit */
	uint64_t bytes;		/* in all sections (bounded) */
	uint64_t entry;		/* entry point of the last ELF/PE loaded */
	uint64_t pe_base, pe_size;	/* the last PE loaded: where, SizeOfImage */
	struct pe_code pe_code;		/* and its executable sections */
	char pe_pdb[256];		/* and the CodeView path it records ("") */
	char err[256];		/* why the last call failed */
};

void ptsec_init(struct ptsec_image *im);
void ptsec_free(struct ptsec_image *im);
/* Copy size bytes as a section at vaddr. Fails (-1, im->err) on overlap,
 * past 16384 sections or past 2 GiB of code in all. */
int ptsec_add(struct ptsec_image *im, uint64_t vaddr, const uint8_t *data, uint64_t size,
	      const char *name);
/* The same without a copy: data stays the caller's (a mapped snapshot) and
 * must outlive im; it does not count toward the 2 GiB. */
int ptsec_add_ref(struct ptsec_image *im, uint64_t vaddr, const uint8_t *data, uint64_t size,
		  const char *name);
/* FILE[:from[-to]]:BASE (as in ptxed --raw). */
int ptsec_load_raw(struct ptsec_image *im, const char *spec);
/* FILE[:BASE]: executable PT_LOAD segments (or SHF_EXECINSTR sections when
 * there are none); with BASE the lowest one is moved to BASE. */
int ptsec_load_elf(struct ptsec_image *im, const char *spec);
/* FILE[:BASE]: a PE32+ (or PE32) image at BASE (default: its ImageBase),
 * relocated with its base relocations; executable sections are added. */
int ptsec_load_pe(struct ptsec_image *im, const char *spec);
/* Entry point of the last ELF/PE loaded (0 if none). */
uint64_t ptsec_last_entry(const struct ptsec_image *im);

int ptsec_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n);

static inline struct ptimg ptsec_ptimg(struct ptsec_image *im)
{
	struct ptimg i = { ptsec_read, im };
	return i;
}

#endif
