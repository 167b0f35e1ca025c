/*
 * One loaded image as images.json lists it (docs/format.md), as a record of
 * fixed size: efipt.efi fills it from EFI_LOADED_IMAGE_PROTOCOL and its PE
 * headers (efi/sideband.c), the recorder region stores it as is
 * (core/recorder.h, where it is part of the format: 616 bytes, little
 * endian, no padding), and both turn it into images.json text here.
 */
#ifndef EFIPT_CORE_IMGREC_H
#define EFIPT_CORE_IMGREC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/strbuf.h"

struct imgrec {
	uint64_t base;
	uint64_t size;		/* 0 when ImageSize runs past 2^64 (bad_size) */
	uint64_t bad_size;	/* that ImageSize, else 0 */
	uint64_t entry;		/* entry point, when pe_err is 0 */
	uint32_t code_type;	/* EFI_MEMORY_TYPE of its code */
	int32_t pe_err;		/* enum pe_err of reading its headers */
	char name[64];		/* images.json "name" */
	char path[256];		/* device path as text */
	char pdb[256];		/* CodeView path, "" if none */
};

/* Append the images.json object of r ("{...}"), its strings escaped. */
void imgrec_json(const struct imgrec *r, struct strbuf *sb);

/* Make every string field of r NUL-terminated printable ASCII (other
 * bytes become '?'): records read back from memory are untrusted. */
void imgrec_sanitize(struct imgrec *r);
/* The same for one text field of cap bytes. */
void imgrec_clean_text(char *s, unsigned cap);

/* "BootServicesCode" etc. for an EFI_MEMORY_TYPE (UEFI 2.10 7.2),
 * "Other" beyond the known ones. */
const char *uefi_memtype_name(uint32_t type);

#endif
