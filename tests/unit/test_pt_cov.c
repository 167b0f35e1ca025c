/* Block coverage: runs into per-image bitmaps, blocks cut at heads and at
 * 65535 bytes, the drcov layout, and ground truth over PE headers. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/pt_cov.h"

struct out {
	unsigned char buf[1 << 20];
	size_t len;
};

static void put(void *ctx, const void *p, size_t n)
{
	struct out *o = ctx;
	if (o->len + n <= sizeof(o->buf))
		memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/* Is [ip, ip + len) inside one block of image k of the drcov table? */
static int covered(const unsigned char *bb, unsigned long long n, unsigned k, uint64_t off,
		   unsigned len)
{
	for (unsigned long long i = 0; i < n; i++) {
		const unsigned char *e = bb + 8 * i;
		uint32_t s = e[0] | e[1] << 8 | e[2] << 16 | (uint32_t)e[3] << 24;
		unsigned sz = e[4] | e[5] << 8, id = e[6] | e[7] << 8;
		if (id == k && off >= s && off + len <= (uint64_t)s + sz)
			return 1;
	}
	return 0;
}

/* A nested image owns its range (core/pt_image.h): what runs there is
 * covered in it, not in the image around it. */
static void check_nested(void)
{
	static struct ptcov_image img[2];
	memset(img, 0, sizeof(img));
	img[0].base = 0x10000; img[0].size = 0x4000;
	img[1].base = 0x11000; img[1].size = 0x100;
	ptcov_set_name(&img[0], "Outer");
	ptcov_set_name(&img[1], "Inner");
	img[0].bits = malloc(ptcov_bits_size(img[0].size));
	img[1].bits = malloc(ptcov_bits_size(img[1].size));
	struct ptcov c;
	ptcov_init(&c, img, 2);
	uint8_t lens[64];
	memset(lens, 8, sizeof(lens));
	/* 0x10f80..0x11180: 16 in Outer, 32 in Inner, 16 in Outer */
	struct ptflow_run r = { .ip = 0x10f80, .lens = lens, .ninsn = 64 };
	ptcov_on_run(&c, &r);
	struct ptcov_stat so, si;
	ptcov_image_stat(&img[0], &so);
	ptcov_image_stat(&img[1], &si);
	CHECKF(c.overlap && si.insns == 32 && si.bytes == 0x100 && so.insns == 32 &&
		       so.bytes == 0x100 && img[0].execs == 32 && img[1].execs == 32 && !c.outside,
	       "nested image: its instructions covered in it, the rest in the outer image",
	       "inner %llu insns %llu bytes, outer %llu insns %llu bytes, outside %llu",
	       (unsigned long long)si.insns, (unsigned long long)si.bytes,
	       (unsigned long long)so.insns, (unsigned long long)so.bytes,
	       (unsigned long long)c.outside);
	free(img[0].bits);
	free(img[1].bits);
}

int main(void)
{
	static struct ptcov_image img[3];
	memset(img, 0, sizeof(img));
	img[0].base = 0x400000; img[0].size = 0x40000; /* 256 KiB */
	img[1].base = 0x100000; img[1].size = 0x1000;
	img[2].base = 0x800000; img[2].size = 0x1000;  /* no bitmaps */
	ptcov_set_name(&img[0], "Big");
	ptcov_set_name(&img[1], "Small.efi");
	ptcov_set_name(&img[2], "NoMem");
	CHECK(!strcmp(img[0].path, "Big.efi") && !strcmp(img[1].path, "Small.efi"),
	      "ptcov_set_name adds .efi only without an extension");
	img[0].bits = malloc(ptcov_bits_size(img[0].size));
	img[1].bits = malloc(ptcov_bits_size(img[1].size));
	struct ptcov c;
	ptcov_init(&c, img, 3);
	CHECK(img[0].base == 0x100000 && img[1].base == 0x400000, "images sorted by base");

	/* one straight run of 10000 15-byte instructions: 150000 bytes */
	static uint8_t lens[10000];
	memset(lens, 15, sizeof(lens));
	struct ptflow_run r = { .ip = 0x400010, .lens = lens, .ninsn = 10000 };
	ptcov_on_run(&c, &r);
	/* small image: a block of 3 instructions, entered again in its middle */
	uint8_t l3[3] = { 1, 2, 3 };
	r = (struct ptflow_run){ .ip = 0x100100, .lens = l3, .ninsn = 3 };
	ptcov_on_run(&c, &r);
	r = (struct ptflow_run){ .ip = 0x100101, .lens = l3 + 1, .ninsn = 2 };
	ptcov_on_run(&c, &r);
	/* a run that crosses from the small image into nothing, and one in the
	 * image without bitmaps */
	r = (struct ptflow_run){ .ip = 0x100ffe, .lens = l3 + 1, .ninsn = 2 };
	ptcov_on_run(&c, &r);
	r = (struct ptflow_run){ .ip = 0x800000, .lens = l3, .ninsn = 3 };
	ptcov_on_run(&c, &r);

	struct ptcov_stat st;
	ptcov_image_stat(&img[0], &st);
	CHECKF(st.insns == 4 && st.bytes == 8 && st.blocks == 3 && img[0].execs == 6,
	       "small image: distinct insns, bytes, blocks cut at the re-entry",
	       "insns=%llu bytes=%llu blocks=%llu execs=%llu", (unsigned long long)st.insns,
	       (unsigned long long)st.bytes, (unsigned long long)st.blocks,
	       (unsigned long long)img[0].execs);
	ptcov_image_stat(&img[1], &st);
	CHECKF(st.insns == 10000 && st.bytes == 150000 && st.blocks == 1,
	       "big image: one block of 150000 bytes", "insns=%llu bytes=%llu blocks=%llu",
	       (unsigned long long)st.insns, (unsigned long long)st.bytes,
	       (unsigned long long)st.blocks);
	CHECK(img[2].execs == 3 && img[2].lost == 3 && c.outside == 1 && c.insns == 10000 + 10,
	      "counts: an image without bitmaps, instructions outside every image");

	static struct out o;
	uint64_t total = ptcov_drcov_write(&c, "efipt", put, &o);
	const char *hdr = "DRCOV VERSION: 2\nDRCOV FLAVOR: efipt\n"
			  "Module Table: version 2, count 3\nColumns: id, base, end, entry, path\n"
			  "0, 0x0000000000100000, 0x0000000000101000, 0x0000000000000000, Small.efi\n"
			  "1, 0x0000000000400000, 0x0000000000440000, 0x0000000000000000, Big.efi\n"
			  "2, 0x0000000000800000, 0x0000000000801000, 0x0000000000000000, NoMem.efi\n"
			  "BB Table: 6 bbs\n";
	CHECKF(total == o.len && o.len == strlen(hdr) + 6 * 8 && !memcmp(o.buf, hdr, strlen(hdr)),
	       "drcov header and table size", "len=%zu\n%.*s", o.len, (int)o.len, o.buf);
	const unsigned char *bb = o.buf + strlen(hdr);
	unsigned sizes[6], maxsz = 0;
	for (int i = 0; i < 6; i++) {
		sizes[i] = bb[8 * i + 4] | bb[8 * i + 5] << 8;
		if (sizes[i] > maxsz)
			maxsz = sizes[i];
	}
	CHECKF(sizes[0] == 1 && sizes[1] == 5 && sizes[2] == 2 && sizes[3] == 65535 &&
		       sizes[4] == 65535 && sizes[5] == 150000 - 2 * 65535,
	       "blocks split at 65535 bytes", "%u %u %u %u %u %u", sizes[0], sizes[1], sizes[2],
	       sizes[3], sizes[4], sizes[5]);
	int all = covered(bb, 6, 0, 0x100, 1) && covered(bb, 6, 0, 0x101, 2) &&
		  covered(bb, 6, 0, 0x103, 3) && covered(bb, 6, 0, 0xffe, 2);
	for (unsigned i = 0; i < 10000; i++)
		all &= covered(bb, 6, 1, 0x10 + 15 * i, 15);
	CHECK(all, "every executed instruction lies inside one block");

	/* entry point and code size from PE headers read through the image */
	static uint8_t pe[0x400];
	memset(pe, 0, sizeof(pe));
	pe[0] = 'M'; pe[1] = 'Z'; pe[0x3c] = 0x80;
	memcpy(pe + 0x80, "PE\0\0", 4);
	pe[0x80 + 6] = 2;                          /* two sections */
	pe[0x80 + 20] = 0xf0;                      /* SizeOfOptionalHeader */
	pe[0x80 + 24 + 16] = 0x40; pe[0x80 + 24 + 17] = 0x02; /* entry 0x240 */
	uint8_t *s = pe + 0x80 + 24 + 0xf0;
	s[8] = 0x30; s[9] = 0x01; s[13] = 0x02; s[39] = 0x60;  /* .text 0x130 at 0x200, exec */
	s += 40;
	s[8] = 0x00; s[9] = 0x01; s[13] = 0x03; s[36] = 0x40;  /* .data: not code */
	struct ptimg_flat flat = { pe, 0x10000, sizeof(pe) };
	struct ptimg im = { ptimg_flat_read, &flat };
	struct ptcov_image m = { .base = 0x10000, .size = sizeof(pe) };
	ptcov_read_pe(&m, &im);
	CHECKF(m.entry == 0x10240 && m.code_size == 0x130, "PE entry and code size",
	       "entry=0x%llx code=0x%llx", (unsigned long long)m.entry,
	       (unsigned long long)m.code_size);
	pe[0x3c] = 0xff; pe[0x3d] = 0xff; /* e_lfanew past the image */
	struct ptcov_image m2 = { .base = 0x10000, .size = sizeof(pe) };
	ptcov_read_pe(&m2, &im);
	CHECK(m2.entry == 0 && m2.code_size == 0, "PE headers that make no sense are ignored");
	free(img[0].bits);
	free(img[1].bits);
	check_nested();
	return check_exit();
}
