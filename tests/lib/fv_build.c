/* Firmware volumes built for tests; see fv_build.h. */
#include "fv_build.h"

#include <string.h>

void fvb_w16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
void fvb_w32(uint8_t *p, uint32_t v) { fvb_w16(p, (uint16_t)v); fvb_w16(p + 2, (uint16_t)(v >> 16)); }
void fvb_w64(uint8_t *p, uint64_t v) { fvb_w32(p, (uint32_t)v); fvb_w32(p + 4, (uint32_t)(v >> 32)); }

size_t fvb_section(struct fvb_buf *o, uint8_t type, const void *data, size_t len)
{
	while (o->n & 3)
		o->b[o->n++] = 0;
	size_t at = o->n, size = 4 + len;
	o->b[at] = (uint8_t)size, o->b[at + 1] = (uint8_t)(size >> 8), o->b[at + 2] = (uint8_t)(size >> 16);
	o->b[at + 3] = type;
	memcpy(o->b + at + 4, data, len);
	o->n += size;
	return at;
}

void fvb_ui(struct fvb_buf *o, const char *name)
{
	uint8_t u[128] = { 0 };
	size_t n = strlen(name);
	for (size_t i = 0; i < n; i++)
		u[2 * i] = (uint8_t)name[i];
	fvb_section(o, 0x15, u, 2 * n + 2);
}

void fvb_te(struct fvb_buf *o, uint64_t base, uint32_t va, uint32_t vsize)
{
	uint8_t t[80] = { 'V', 'Z' };
	t[4] = 1; /* one section */
	fvb_w32(t + 8, va + 0x10); /* AddressOfEntryPoint: in the section */
	fvb_w64(t + 16, base);
	fvb_w32(t + 40 + 8, vsize);
	fvb_w32(t + 40 + 12, va);
	fvb_section(o, 0x12, t, sizeof(t));
}

void fvb_pe(struct fvb_buf *o, uint64_t base, uint32_t size_of_image)
{
	uint8_t p[0x100] = { 'M', 'Z' };
	fvb_w32(p + 0x3c, 0x40);
	memcpy(p + 0x40, "PE\0\0", 4);
	fvb_w16(p + 0x40 + 24, 0x20b);
	fvb_w64(p + 0x40 + 24 + 24, base);
	fvb_w32(p + 0x40 + 24 + 56, size_of_image);
	fvb_section(o, 0x10, p, sizeof(p));
}

void fvb_file(struct fvb_buf *fv, uint8_t guid0, uint8_t type, const struct fvb_buf *secs)
{
	while (fv->n & 7)
		fv->b[fv->n++] = 0xff;
	uint8_t *h = fv->b + fv->n;
	memset(h, 0, 24);
	h[0] = guid0;
	h[18] = type;
	size_t size = 24 + secs->n;
	h[20] = (uint8_t)size, h[21] = (uint8_t)(size >> 8), h[22] = (uint8_t)(size >> 16);
	memcpy(h + 24, secs->b, secs->n);
	fv->n += size;
}

void fvb_begin(struct fvb_buf *fv)
{
	memset(fv, 0, sizeof(*fv));
	memcpy(fv->b + 40, "_FVH", 4);
	fvb_w16(fv->b + 48, 72);
	fv->n = 72;
}

void fvb_end(struct fvb_buf *fv)
{
	while (fv->n & 7)
		fv->b[fv->n++] = 0xff;
	fvb_w64(fv->b + 32, fv->n);
}
