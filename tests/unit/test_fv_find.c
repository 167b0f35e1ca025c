/*
 * host/qemu/qemu_fvfind: firmware-volume modules found loaded in code
 * snapshots by their code. The module is a real PE32+ image, efipt.efi;
 * the "snapshot" is that image laid out at a page-aligned base as the
 * UEFI loader does (host/util/pe_map.h), with only some
 * runs of its code kept, the rest 0, as QEMU records executed bytes. It
 * must be found at that base, still with a few bytes patched, and not
 * where too many bytes differ, where too few are there or off a page
 * boundary. (gnu-efi images relocate themselves: efipt.efi's PE holds no
 * base relocations, so the relocated layout is pe_map's, as --pe uses it.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/pe_info.h"
#include "core/pt_image.h"
#include "host/qemu/qemu_fvfind.h"
#include "host/util/file_io.h"
#include "host/util/pe_map.h"
#include "lib/fv_build.h"

#define BASE 0x1e7cf000ull

static struct fv_modules ms;
static struct fv_module mods[2];
static struct pe_mapped at_base;

/* A snapshot of the module at base: every stride bytes of its code, run
 * bytes kept (executed), the rest 0. */
static uint8_t *snapshot(const struct pe_mapped *m, const struct pe_code *code, unsigned stride,
			 unsigned run)
{
	uint8_t *s = calloc(1, m->size_of_image);
	for (unsigned r = 0; s && r < code->n; r++)
		for (uint64_t o = code->r[r].rva; o < (uint64_t)code->r[r].rva + code->r[r].size;
		     o += stride)
			for (unsigned i = 0; i < run && o + i < m->size_of_image; i++)
				s[o + i] = m->img[o + i];
	return s;
}

/* fv_scan's module, its file kept */
static void take_module(void *ctx, struct fv_module *m)
{
	struct fv_module *to = ctx;
	*to = *m;
	m->pe = NULL;
}

static int find(const uint8_t *bytes, uint64_t phys, uint64_t size, struct fv_found *f)
{
	struct rundir_snapshot snap = { phys, size, bytes };
	return fvfind_loaded(&ms, &snap, 1, f, 8);
}

/* A PE32+ driver of 0x3000 bytes: .text (RVA 0x1000, 0x100 bytes of
 * nonzero code, raw at 0x200) holding a pointer at RVA 0x1010 that a DIR64
 * base relocation (.reloc at 0x2000) moves; ImageBase 0. Built by
 * tests/fuzz/fv_seeds.py only, whose fuzz seeds hold it too: kind "pe",
 * or "te", the same as a TE image. Its length, or 0. */
static size_t seed_image(const char *kind, uint8_t *f, size_t cap)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "python3 tests/fuzz/fv_seeds.py --%s", kind);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(f, 1, cap, p) : 0;
	if (p && pclose(p))
		n = 0;
	return n;
}

/* The TE image as a firmware volume holds it, in a PEIM (host/qemu/fv.c
 * keeps its file for the search). */
static void te_module(const uint8_t *f, size_t len, struct fv_module *m)
{
	static struct fvb_buf fv, secs;
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "TePeim");
	fvb_section(&secs, 0x12, f, len);
	fvb_begin(&fv);
	fvb_file(&fv, 0x55, 0x06, &secs);
	fvb_end(&fv);
	struct fv_stats st;
	memset(m, 0, sizeof(*m));
	fv_scan(fv.b, fv.n, take_module, m, &st);
}

/* A snapshot of 0x3000 bytes at phys: the TE image laid out and relocated
 * for RVA 0 at base, every 50th of its bytes changed when spoil. */
static uint8_t *te_snapshot(const uint8_t *f, size_t len, uint64_t base, uint64_t phys,
			    bool spoil)
{
	struct pe_mapped pm;
	char err[200];
	uint8_t *s = calloc(1, 0x3000);
	if (!s || pe_map_te(f, len, base, true, &pm, err, sizeof(err)))
		return s;
	for (uint32_t i = 0; i < pm.size_of_image && base - phys + i < 0x3000; i++)
		s[base - phys + i] = pm.img[i] ^ (spoil && i % 50 == 0 && pm.img[i] ? 0x5a : 0);
	free(pm.img);
	return s;
}

/* The driver as a TE image is loaded with its TE header at a page's start,
 * its sections StrippedSize - 40 bytes before their RVAs from there. */
static void check_te(void)
{
	static uint8_t f[0x600];
	size_t len = seed_image("te", f, sizeof(f));
	uint32_t hdr = len > 8 ? (uint32_t)(f[6] | f[7] << 8) - 40 : 0;
	struct pe_mapped pm;
	char err[200] = "no TE file";
	uint64_t page = 0x2020202000ull;
	int rc = hdr ? pe_map_te(f, len, page - hdr, true, &pm, err, sizeof(err)) : -1;
	CHECKF(rc == 0 && pm.hdr_rva == hdr && !memcmp(pm.img + hdr, "VZ", 2) &&
	       pm.img[0x1000] == f[0x200 - hdr] && pm.img[0x1010] != f[0x210 - hdr],
	       "fv_find: a TE image laid out, its TE header kept, code at its RVA, relocated",
	       "%s, %zu bytes, header at 0x%x", rc ? err : "laid out", len, hdr);
	if (rc)
		return;
	free(pm.img);
	struct fv_module m;
	te_module(f, len, &m);
	struct fv_modules one = { &m, 1, { 0 } };
	struct fv_found got[4];
	uint8_t *s = te_snapshot(f, len, page - hdr, page - 0x1000, false);
	struct rundir_snapshot snap = { page - 0x1000, 0x3000, s };
	int n = fvfind_loaded(&one, &snap, 1, got, 4);
	CHECKF(n == 1 && got[0].base == page - hdr,
	       "fv_find: a TE image found where its TE header starts a page", "n %d base 0x%llx",
	       n, n > 0 ? (unsigned long long)got[0].base : 0ull);
	free(s);
	/* laid out as a PE would be, its RVA 0 at the page */
	s = te_snapshot(f, len, page, page - 0x1000, false);
	snap.bytes = s;
	n = fvfind_loaded(&one, &snap, 1, got, 4);
	CHECKF(n == 0, "fv_find: a TE image not found with its RVA 0 at a page's start", "n %d", n);
	free(s);
	s = te_snapshot(f, len, page - hdr, page - 0x1000, true);
	snap.bytes = s;
	n = fvfind_loaded(&one, &snap, 1, got, 4);
	CHECKF(n == 0, "fv_find: a TE image not found where one byte in 50 differs", "n %d", n);
	free(s);
	free(m.pe);
}

/* The driver loaded at COPIES bases, one after another: found at each
 * (the bases tried are told apart however many there are). */
#define COPIES 100
static void check_many(const struct fv_modules *one, const uint8_t *f, size_t len)
{
	uint64_t at = 0x40000000ull, step = 0x3000;
	uint8_t *s = calloc(COPIES, step);
	struct fv_found *got = calloc(COPIES + 1, sizeof(*got));
	for (unsigned i = 0; s && got && i < COPIES; i++) {
		struct pe_mapped pm;
		char err[200];
		if (pe_map(f, len, at + i * step, true, &pm, err, sizeof(err)))
			break;
		memcpy(s + i * step, pm.img, step);
		free(pm.img);
	}
	struct rundir_snapshot snap = { at, COPIES * step, s };
	int n = s && got ? fvfind_loaded(one, &snap, 1, got, COPIES + 1) : -2;
	int same = 0;
	for (int i = 0; i < n; i++)
		same += got[i].base == at + (uint64_t)i * step;
	CHECKF(n == COPIES && same == COPIES, "fv_find: a driver found at each of 100 bases",
	       "n %d, %d at their bases", n, same);
	free(got);
	free(s);
}

/* The driver is found only laid out with its relocation applied. */
static void check_relocated(void)
{
	static uint8_t f[0x600];
	size_t len = seed_image("pe", f, sizeof(f));
	CHECKF(len == sizeof(f), "fv_find: fv_seeds.py --pe writes the driver", "%zu bytes", len);
	if (len != sizeof(f))
		return;
	static struct fv_module d;
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "Drv");
	d.type = 7;
	d.image_size = 0x3000;
	d.pe = f;
	d.pe_len = len;
	d.code.n = 1;
	d.code.entry_rva = 0x1000;
	d.code.r[0].rva = 0x1000;
	d.code.r[0].size = 0x100;
	struct fv_modules one = { &d, 1, { 0 } };
	struct pe_mapped pm;
	char err[200];
	uint64_t base = 0x2020202000ull; /* moves bytes 1 to 4 of the pointer */
	int rc = pe_map(f, len, base, true, &pm, err, sizeof(err));
	uint64_t moved = 0;
	for (unsigned i = 0; !rc && i < 8; i++)
		moved |= (uint64_t)pm.img[0x1010 + i] << (8 * i);
	CHECKF(rc == 0 && moved == 0x1122334455661040ull + base,
	       "fv_find: pe_map applies a DIR64 relocation", "%s 0x%llx", rc ? err : "value",
	       (unsigned long long)moved);
	if (rc)
		return;
	struct fv_found f2[4];
	struct rundir_snapshot snap = { base, pm.size_of_image, pm.img };
	int n = fvfind_loaded(&one, &snap, 1, f2, 4);
	CHECKF(n == 1 && f2[0].base == base, "fv_find: a relocated driver found at its base",
	       "n %d", n);
	/* the same code, its pointer not moved: 4 of 256 bytes differ */
	memcpy(pm.img + 0x1010, f + 0x210, 8);
	n = fvfind_loaded(&one, &snap, 1, f2, 4);
	CHECKF(n == 0, "fv_find: not found where the relocation was not applied", "n %d", n);
	free(pm.img);
	check_many(&one, f, len);
}

int main(void)
{
	check_relocated();
	check_te();
	/* the plain build's, also under make SANITIZE=1 test (Makefile) */
	size_t len;
	uint8_t *pe = (uint8_t *)read_small_file(NULL, "build/efipt.efi", 64u << 20, &len);
	if (!pe) {
		CHECK(0, "fv_find: efipt.efi to read (make all first)");
		return 1;
	}
	char err[200];
	struct pe_info pi;
	if (pe_map(pe, len, BASE, true, &at_base, err, sizeof(err)) ||
	    pe_read_info(pe, len, false, &pi)) {
		CHECKF(0, "fv_find: efipt.efi maps", "%s", err);
		return 1;
	}
	/* the module as the volume holds it: its file, size and code */
	struct fv_module *m = &mods[0];
	snprintf(m->name, sizeof(m->name), "Efipt");
	m->type = 9; /* an application: loaded where memory is allocated */
	m->image_base = pi.image_base;
	m->image_size = at_base.size_of_image;
	m->pe = pe;
	m->pe_len = len;
	struct ptimg_flat flat = { at_base.img, BASE, at_base.size_of_image };
	struct ptimg img = { ptimg_flat_read, &flat };
	pe_code_read(&img, BASE, at_base.size_of_image, &m->code);
	CHECK(m->code.n > 0 && pe_code_bytes(&m->code) > 8192 && BASE != pi.image_base,
	      "fv_find: efipt.efi has code, and is loaded away from its ImageBase");
	ms.m = mods;
	ms.n = 1;

	struct fv_found f[8];
	uint8_t *s = snapshot(&at_base, &m->code, 97, 24);
	int n = find(s, BASE, at_base.size_of_image, f);
	CHECKF(n == 1 && f[0].module == 0 && f[0].base == BASE && f[0].matched > 1000,
	       "fv_find: found at its page-aligned base from runs of executed bytes",
	       "n %d base 0x%llx matched %llu", n, n > 0 ? (unsigned long long)f[0].base : 0ull,
	       n > 0 ? (unsigned long long)f[0].matched : 0ull);

	/* a few bytes the firmware patched: still found */
	uint8_t *p = malloc(at_base.size_of_image);
	memcpy(p, s, at_base.size_of_image);
	uint64_t kept = 0;
	for (uint64_t i = 0; i < at_base.size_of_image; i++)
		kept += p[i] != 0;
	for (uint64_t i = 0, changed = 0; i < at_base.size_of_image && changed < kept / 1000; i++)
		if (p[i] && i % 331 == 0) {
			p[i] ^= 0x5a;
			changed++;
		}
	n = find(p, BASE, at_base.size_of_image, f);
	CHECK(n == 1 && f[0].base == BASE, "fv_find: found with one byte in a thousand patched");

	/* two pages where another module ran first: the rest agrees, found */
	memcpy(p, s, at_base.size_of_image);
	uint64_t pg0 = (m->code.r[0].rva + 0x3000) & ~0xfffull;
	for (uint64_t i = pg0; i < pg0 + 0x2000 && i < at_base.size_of_image; i++)
		if (p[i])
			p[i] = (uint8_t)(p[i] * 7 + 1) ? (uint8_t)(p[i] * 7 + 1) : 1;
	n = find(p, BASE, at_base.size_of_image, f);
	CHECK(n == 1 && f[0].base == BASE,
	      "fv_find: found where two of its pages hold another module's code");

	/* one in a hundred differing: another module's code, not found */
	memcpy(p, s, at_base.size_of_image);
	for (uint64_t i = 0, c = 0; i < at_base.size_of_image; i++)
		if (p[i] && ++c % 100 == 0)
			p[i] ^= 0x5a;
	n = find(p, BASE, at_base.size_of_image, f);
	CHECKF(n == 0, "fv_find: not found where one byte in a hundred differs", "n %d", n);

	/* the same bytes 16 bytes off a page boundary: no page-aligned base */
	uint8_t *sh = calloc(1, at_base.size_of_image + 16);
	memcpy(sh + 16, s, at_base.size_of_image);
	n = find(sh, BASE, at_base.size_of_image + 16, f);
	CHECKF(n == 0, "fv_find: not found at a base off a page boundary", "n %d", n);

	/* too few executed bytes: one short run */
	memset(p, 0, at_base.size_of_image);
	uint32_t e = pi.entry_rva;
	memcpy(p + e, at_base.img + e, 20);
	n = find(p, BASE, at_base.size_of_image, f);
	CHECKF(n == 0, "fv_find: not found from 20 executed bytes", "n %d", n);

	/* an empty or garbage snapshot, and no module: nothing, no crash */
	memset(p, 0xcc, at_base.size_of_image);
	CHECK(find(p, BASE, at_base.size_of_image, f) == 0, "fv_find: nothing in int3 filler");
	ms.n = 0;
	CHECK(find(s, BASE, at_base.size_of_image, f) == 0, "fv_find: no module, nothing found");

	free(sh);
	free(p);
	free(s);
	free(at_base.img);
	free(pe);
	return check_failures ? 1 : 0;
}
