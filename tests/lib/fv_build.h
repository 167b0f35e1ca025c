/*
 * Firmware volumes built byte by byte for tests (PI spec vol. 3): sections
 * (UI names, TE and PE images), FFS files, volumes. Just enough for
 * host/qemu/fv.c to find modules; no checksums, no attributes.
 */
#ifndef EFIPT_TESTS_FV_BUILD_H
#define EFIPT_TESTS_FV_BUILD_H

#include <stddef.h>
#include <stdint.h>

struct fvb_buf {
	uint8_t b[65536];
	size_t n;
};

void fvb_w16(uint8_t *p, uint16_t v);
void fvb_w32(uint8_t *p, uint32_t v);
void fvb_w64(uint8_t *p, uint64_t v);

/* a section of TYPE holding data (4-byte aligned); returns its offset */
size_t fvb_section(struct fvb_buf *o, uint8_t type, const void *data, size_t len);
/* a UI section (UCS-2 name) */
void fvb_ui(struct fvb_buf *o, const char *name);
/* a TE image section: ImageBase base, one section at va of vsize bytes,
 * the entry point 16 bytes into it */
void fvb_te(struct fvb_buf *o, uint64_t base, uint32_t va, uint32_t vsize);
/* a PE32+ image section: ImageBase base, SizeOfImage size_of_image */
void fvb_pe(struct fvb_buf *o, uint64_t base, uint32_t size_of_image);
/* an FFS file (GUID guid0 0 0 ..., FFS type) holding the sections secs */
void fvb_file(struct fvb_buf *fv, uint8_t guid0, uint8_t type, const struct fvb_buf *secs);
/* an empty volume (fv is cleared), and its length once its files are in */
void fvb_begin(struct fvb_buf *fv);
void fvb_end(struct fvb_buf *fv);

#endif
