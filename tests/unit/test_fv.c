/* host/qemu/fv.c: firmware volumes built here byte by byte (a SEC TE image, a
 * DXE PE image, an LZMA-compressed volume inside a volume), then cut and
 * mutated: every module found with its UI name and in-place address, and
 * no bad input read outside its buffer (the sanitized build checks that). */
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "host/qemu/fv.h"
#include "lib/fv_build.h"

static struct fv_module found[16];
static unsigned nfound;
static void on_module(void *ctx, struct fv_module *m)
{
	(void)ctx;
	if (nfound < 16) {
		found[nfound] = *m;
		found[nfound++].pe = NULL; /* not kept: fv_scan() frees it */
	}
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
	static struct fvb_buf inner, outer, secs, lz;
	/* the inner volume: a PEIM (TE) */
	fvb_begin(&inner);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "Inner");
	fvb_te(&secs, 0x820000, 0x240, 0x1000);
	fvb_file(&inner, 0x33, 0x06, &secs);
	fvb_end(&inner);
	/* ... as an FV image section, LZMA-compressed ("alone" format) */
	static struct fvb_buf fvsec;
	memset(&fvsec, 0, sizeof(fvsec));
	fvb_section(&fvsec, 0x17, inner.b, inner.n);
	lzma_options_lzma lo;
	lzma_lzma_preset(&lo, 6);
	lzma_stream z = LZMA_STREAM_INIT;
	CHECK(lzma_alone_encoder(&z, &lo) == LZMA_OK, "lzma encoder");
	z.next_in = fvsec.b, z.avail_in = fvsec.n;
	z.next_out = lz.b, z.avail_out = sizeof(lz.b);
	CHECK(lzma_code(&z, LZMA_FINISH) == LZMA_STREAM_END, "lzma encoded");
	lz.n = sizeof(lz.b) - z.avail_out;
	lzma_end(&z);
	fvb_w64(lz.b + 5, fvsec.n); /* EDK2 writes the real size, not "unknown" */
	/* GUID-defined section: the LZMA GUID, DataOffset 24, PROCESSING_REQUIRED */
	static struct fvb_buf g;
	static const uint8_t lzma_guid[16] = { 0x98, 0x58, 0x4e, 0xee, 0x14, 0x39, 0x59, 0x42,
					       0x9d, 0x6e, 0xdc, 0x7b, 0xd7, 0x94, 0x03, 0xcf };
	memcpy(g.b, lzma_guid, 16);
	fvb_w16(g.b + 16, 24);
	fvb_w16(g.b + 18, 1);
	memcpy(g.b + 20, lz.b, lz.n);
	g.n = 20 + lz.n;

	fvb_begin(&outer);
	memset(&secs, 0, sizeof(secs));
	fvb_te(&secs, 0xfffcc000, 0x200, 0x2e00);
	fvb_ui(&secs, "SecMain");
	fvb_file(&outer, 0x11, 0x03, &secs);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "FooDxe");
	fvb_pe(&secs, 0, 0x5000);
	fvb_file(&outer, 0x22, 0x07, &secs);
	memset(&secs, 0, sizeof(secs));
	fvb_section(&secs, 0x02, g.b, g.n);
	fvb_file(&outer, 0x44, 0x0b, &secs);
	fvb_end(&outer);

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
