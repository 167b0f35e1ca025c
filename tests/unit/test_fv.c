/* decode/fv.c: firmware volumes built here byte by byte (a SEC TE image, a
 * DXE PE image, an LZMA-compressed volume inside a volume), then cut and
 * mutated: every module found with its UI name and in-place address, and
 * no bad input read outside its buffer (the sanitized build checks that). */
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode/fv.h"

static void w16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void w32(uint8_t *p, uint32_t v) { w16(p, (uint16_t)v); w16(p + 2, (uint16_t)(v >> 16)); }
static void w64(uint8_t *p, uint64_t v) { w32(p, (uint32_t)v); w32(p + 4, (uint32_t)(v >> 32)); }

struct buf { uint8_t b[65536]; size_t n; };

static size_t section(struct buf *o, uint8_t type, const void *data, size_t len)
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

static void ui(struct buf *o, const char *name)
{
	uint8_t u[128] = { 0 };
	size_t n = strlen(name);
	for (size_t i = 0; i < n; i++)
		u[2 * i] = (uint8_t)name[i];
	section(o, 0x15, u, 2 * n + 2);
}

static void te(struct buf *o, uint64_t base, uint32_t va, uint32_t vsize)
{
	uint8_t t[80] = { 'V', 'Z' };
	t[4] = 1; /* one section */
	w64(t + 16, base);
	w32(t + 40 + 8, vsize);
	w32(t + 40 + 12, va);
	section(o, 0x12, t, sizeof(t));
}

static void pe(struct buf *o, uint64_t base, uint32_t size_of_image)
{
	uint8_t p[0x100] = { 'M', 'Z' };
	w32(p + 0x3c, 0x40);
	memcpy(p + 0x40, "PE\0\0", 4);
	w16(p + 0x40 + 24, 0x20b);
	w64(p + 0x40 + 24 + 24, base);
	w32(p + 0x40 + 24 + 56, size_of_image);
	section(o, 0x10, p, sizeof(p));
}

static void file(struct buf *fv, uint8_t guid0, uint8_t type, const struct buf *secs)
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

static void fv_begin(struct buf *fv)
{
	memset(fv, 0, sizeof(*fv));
	memcpy(fv->b + 40, "_FVH", 4);
	w16(fv->b + 48, 72);
	fv->n = 72;
}

static void fv_end(struct buf *fv)
{
	while (fv->n & 7)
		fv->b[fv->n++] = 0xff;
	w64(fv->b + 32, fv->n);
}

static struct fv_module found[16];
static unsigned nfound;
static void on_module(void *ctx, const struct fv_module *m)
{
	(void)ctx;
	if (nfound < 16)
		found[nfound++] = *m;
}

static const struct fv_module *by_name(const char *n)
{
	for (unsigned i = 0; i < nfound; i++)
		if (!strcmp(found[i].name, n))
			return &found[i];
	return NULL;
}

int main(void)
{
	static struct buf inner, outer, secs, lz;
	/* the inner volume: a PEIM (TE) */
	fv_begin(&inner);
	memset(&secs, 0, sizeof(secs));
	ui(&secs, "Inner");
	te(&secs, 0x820000, 0x240, 0x1000);
	file(&inner, 0x33, 0x06, &secs);
	fv_end(&inner);
	/* ... as an FV image section, LZMA-compressed ("alone" format) */
	static struct buf fvsec;
	memset(&fvsec, 0, sizeof(fvsec));
	section(&fvsec, 0x17, inner.b, inner.n);
	lzma_options_lzma lo;
	lzma_lzma_preset(&lo, 6);
	lzma_stream z = LZMA_STREAM_INIT;
	CHECK(lzma_alone_encoder(&z, &lo) == LZMA_OK, "lzma encoder");
	z.next_in = fvsec.b, z.avail_in = fvsec.n;
	z.next_out = lz.b, z.avail_out = sizeof(lz.b);
	CHECK(lzma_code(&z, LZMA_FINISH) == LZMA_STREAM_END, "lzma encoded");
	lz.n = sizeof(lz.b) - z.avail_out;
	lzma_end(&z);
	w64(lz.b + 5, fvsec.n); /* EDK2 writes the real size, not "unknown" */
	/* GUID-defined section: the LZMA GUID, DataOffset 24, PROCESSING_REQUIRED */
	static struct buf g;
	static const uint8_t lzma_guid[16] = { 0x98, 0x58, 0x4e, 0xee, 0x14, 0x39, 0x59, 0x42,
					       0x9d, 0x6e, 0xdc, 0x7b, 0xd7, 0x94, 0x03, 0xcf };
	memcpy(g.b, lzma_guid, 16);
	w16(g.b + 16, 24);
	w16(g.b + 18, 1);
	memcpy(g.b + 20, lz.b, lz.n);
	g.n = 20 + lz.n;

	fv_begin(&outer);
	memset(&secs, 0, sizeof(secs));
	te(&secs, 0xfffcc000, 0x200, 0x2e00);
	ui(&secs, "SecMain");
	file(&outer, 0x11, 0x03, &secs);
	memset(&secs, 0, sizeof(secs));
	ui(&secs, "FooDxe");
	pe(&secs, 0, 0x5000);
	file(&outer, 0x22, 0x07, &secs);
	memset(&secs, 0, sizeof(secs));
	section(&secs, 0x02, g.b, g.n);
	file(&outer, 0x44, 0x0b, &secs);
	fv_end(&outer);

	/* the flash: some bytes before the volume, free space after */
	static uint8_t flash[65536 + 4096];
	memset(flash, 0xff, sizeof(flash));
	memcpy(flash + 4096, outer.b, outer.n);
	size_t flen = 4096 + outer.n + 512;
	struct fv_stats st;
	fv_scan(flash, flen, on_module, NULL, &st);
	CHECKF(nfound == 3 && st.volumes == 2 && st.lzma == 1 && !st.lzma_failed, "three modules, two volumes, one LZMA section",
	       "%u modules, %u volumes, %u lzma (%u failed)", nfound, st.volumes, st.lzma, st.lzma_failed);
	const struct fv_module *sec = by_name("SecMain"), *dxe = by_name("FooDxe"), *in = by_name("Inner");
	CHECK(sec && sec->type == 3 && sec->image_base == 0xfffcc000 && sec->image_size == 0x3000 &&
	      fv_module_xip(sec), "SEC: TE base and the end of its last section, runs in place");
	CHECK(sec && !strcmp(sec->guid_text, "00000011-0000-0000-0000-000000000000"), "GUID as EDK2 prints it");
	CHECK(dxe && dxe->image_size == 0x5000 && !fv_module_xip(dxe), "DXE driver: PE size, not in place");
	CHECK(in && in->type == 6 && in->image_base == 0x820000 && fv_module_xip(in),
	      "PEIM inside the LZMA-compressed volume found");

	/* every cut of the flash: no crash, never more than the whole */
	int ok = 1;
	for (size_t cut = 0; cut < flen; cut += 7) {
		nfound = 0;
		fv_scan(flash, cut, on_module, NULL, &st);
		ok &= nfound <= 3;
	}
	CHECK(ok, "cut flash images scanned safely");
	/* mutated headers and lengths: no crash (sanitizers watch the reads) */
	srand(1);
	static uint8_t mut[sizeof(flash)];
	for (int i = 0; i < 3000; i++) {
		memcpy(mut, flash, flen);
		for (int k = 0; k < 4; k++)
			mut[4096 + (size_t)rand() % outer.n] = (uint8_t)rand();
		nfound = 0;
		fv_scan(mut, flen, on_module, NULL, &st);
	}
	CHECK(1, "3000 mutated volumes scanned");
	return check_failures != 0;
}
