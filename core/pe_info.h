/*
 * Facts about a PE32/PE32+ image (UEFI drivers and applications) read from
 * its headers: size, entry point, and the CodeView debug path (the PDB or
 * .debug file the build recorded), which names firmware drivers whose file
 * path is only a firmware-volume GUID. Works on a loaded (mapped) image, where
 * an RVA is an offset, and on a file, where sections must be mapped through
 * the section table. Every read is bounds-checked: images are untrusted.
 */
#ifndef EFIPT_CORE_PE_INFO_H
#define EFIPT_CORE_PE_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_image.h"

struct pe_info {
	uint16_t machine;
	bool pe32plus;
	uint16_t subsystem;
	uint32_t entry_rva;
	uint32_t size_of_image;
	uint64_t image_base;
	char debug_path[256]; /* "" if none */
};

enum pe_err {
	PE_OK = 0,
	PE_ERR_TRUNCATED = -1, /* a header or directory runs past the data */
	PE_ERR_NOT_PE = -2,    /* no MZ / PE signature */
	PE_ERR_BAD = -3,       /* inconsistent headers */
};
const char *pe_errstr(int err);

/* mapped: data is the image as loaded (RVA == offset); else a file. */
int pe_read_info(const uint8_t *data, size_t size, bool mapped, struct pe_info *out);

/*
 * The executable sections of a PE image (the code a coverage percentage is
 * of): up to PE_CODE_MAX ranges [rva, rva + size) with
 * IMAGE_SCN_CNT_CODE or IMAGE_SCN_MEM_EXECUTE, cut to SizeOfImage, and the
 * entry point. pe_code_read() reads only the headers, through img at base
 * (a loaded image, or a file's bytes placed at base: headers are at RVA 0
 * in both); size is the image's size. 0, or -1 when there are no PE
 * headers to read (out->n = 0).
 */
#define PE_CODE_MAX 16
struct pe_code {
	uint32_t entry_rva;	/* 0: none */
	unsigned n;
	struct pe_code_range {
		uint32_t rva, size;
	} r[PE_CODE_MAX];
};
int pe_code_read(const struct ptimg *img, uint64_t base, uint64_t size, struct pe_code *out);
/* Bytes in the ranges. */
uint64_t pe_code_bytes(const struct pe_code *c);

/* Last path component of a debug path without its extension ("DxeCore"). */
void pe_debug_name(const char *debug_path, char *out, size_t cap);

#endif
