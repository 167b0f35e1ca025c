/*
 * Code images from files. See pt_sections.h.
 * ELF: System V gABI (ELF header, program and section headers).
 * PE32+: Microsoft PE/COFF specification (optional header, section table,
 * base relocation table with IMAGE_REL_BASED_DIR64 entries).
 */
#include "host/input/pt_sections.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "host/util/file_io.h"
#include "host/util/pe_map.h"

#define MAX_FILE (1ull << 30)
#define MAX_IMAGE (512ull << 20)
#define MAX_SECTIONS 16384
#define MAX_BYTES (2ull << 30)

static int fail(struct ptsec_image *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ptsec_image *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(im->err, sizeof(im->err), fmt, ap);
	va_end(ap);
	return -1;
}



void ptsec_init(struct ptsec_image *im)
{
	memset(im, 0, sizeof(*im));
}

void ptsec_free(struct ptsec_image *im)
{
	for (size_t i = 0; i < im->n; i++)
		if (im->sec[i].owned)
			free(im->sec[i].data);
	free(im->sec);
	memset(im, 0, sizeof(*im));
}

uint64_t ptsec_last_entry(const struct ptsec_image *im)
{

	return im->entry;
}

/* ptsec_add() (copy: the bytes are copied) or ptsec_add_ref(). */
static int add(struct ptsec_image *im, uint64_t vaddr, const uint8_t *data, uint64_t size,
	       const char *name, bool copy)
{
	if (!size)
		return 0;
	if (vaddr + size < vaddr)
		return fail(im, "%s: section at 0x%llx wraps around", name, (unsigned long long)vaddr);
	if (im->n >= MAX_SECTIONS)
		return fail(im, "%s: more than %d code sections in all", name, MAX_SECTIONS);
	if (copy && size > MAX_BYTES - im->bytes)
		return fail(im, "%s: more than %llu MiB of code in all", name, MAX_BYTES >> 20);
	size_t pos = 0, hi = im->n; /* the first section at or above vaddr */
	while (pos < hi) {
		size_t mid = (pos + hi) / 2;
		if (im->sec[mid].vaddr < vaddr)
			pos = mid + 1;
		else
			hi = mid;
	}
	if (pos > 0 && im->sec[pos - 1].vaddr + im->sec[pos - 1].size > vaddr)
		return fail(im, "%s: section 0x%llx-0x%llx overlaps %s", name,
			    (unsigned long long)vaddr, (unsigned long long)(vaddr + size),
			    im->sec[pos - 1].name);
	if (pos < im->n && vaddr + size > im->sec[pos].vaddr)
		return fail(im, "%s: section 0x%llx-0x%llx overlaps %s", name,
			    (unsigned long long)vaddr, (unsigned long long)(vaddr + size),
			    im->sec[pos].name);
	if (im->n == im->cap) {
		size_t nc = im->cap ? im->cap * 2 : 16;
		struct ptsec *ns = realloc(im->sec, nc * sizeof(*ns));
		if (!ns)
			return fail(im, "out of memory");
		im->sec = ns;
		im->cap = nc;
	}
	uint8_t *bytes = (uint8_t *)data;
	if (copy) {
		bytes = malloc(size);
		if (!bytes)
			return fail(im, "out of memory");
		memcpy(bytes, data, size);
		im->bytes += size;
	}
	memmove(&im->sec[pos + 1], &im->sec[pos], (im->n - pos) * sizeof(*im->sec));
	struct ptsec *s = &im->sec[pos];
	s->vaddr = vaddr;
	s->size = size;
	s->data = bytes;
	s->owned = copy;
	snprintf(s->name, sizeof(s->name), "%s", name);
	im->n++;
	im->last = 0;
	return 0;
}

int ptsec_add(struct ptsec_image *im, uint64_t vaddr, const uint8_t *data, uint64_t size,
	      const char *name)
{
	return add(im, vaddr, data, size, name, true);
}

int ptsec_add_ref(struct ptsec_image *im, uint64_t vaddr, const uint8_t *data, uint64_t size,
		  const char *name)
{
	return add(im, vaddr, data, size, name, false);
}

int ptsec_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct ptsec_image *im = ctx;
	const struct ptsec *s = NULL;
	if (im->last < im->n && ip - im->sec[im->last].vaddr < im->sec[im->last].size) {
		s = &im->sec[im->last];
	} else {
		size_t lo = 0, hi = im->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (im->sec[mid].vaddr <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return 0;
		s = &im->sec[lo - 1];
		if (ip - s->vaddr >= s->size)
			return 0;
		im->last = lo - 1;
	}
	uint64_t off = ip - s->vaddr;
	if (n > s->size - off)
		n = (size_t)(s->size - off);
	memcpy(buf, s->data + off, n);
	return (int)n;
}

/* Read a whole file (bounded). */
static uint8_t *slurp(struct ptsec_image *im, const char *path, size_t *len)
{
	int fd = open_regular(path, im->err, sizeof(im->err));
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
	if (!f) {
		if (fd >= 0) {
			fail(im, "%s: %s", path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	size_t cap = 1 << 16, have = 0;
	int err = 0;
	uint8_t *b = malloc(cap);
	while (b) {
		if (have == cap) {
			if (cap >= MAX_FILE) {
				fclose(f);
				free(b);
				fail(im, "%s: file too large", path);
				return NULL;
			}
			uint8_t *nb = realloc(b, cap * 2);
			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
		size_t r = fread(b + have, 1, cap - have, f);
		have += r;
		if (r == 0) {
			err = ferror(f) ? errno : 0;
			break;
		}
	}
	fclose(f);
	if (!b || err) {
		free(b);
		fail(im, "%s: %s", path, b ? strerror(err) : "out of memory");
		return NULL;
	}
	*len = have;
	return b;
}

/* Split "FILE:NUM" at the last colon if NUM parses. */
static char *split_num(char *s, unsigned long long *v, int *have)
{
	*have = 0;
	char *c = strrchr(s, ':');
	if (c && !parse_u64(c + 1, v)) {
		*c = 0;
		*have = 1;
	}
	return s;
}

int ptsec_load_raw(struct ptsec_image *im, const char *spec)
{
	char *s = strdup(spec);
	if (!s)
		return fail(im, "out of memory");
	unsigned long long base, from = 0, to = 0;
	int have_base, have_range = 0, rc = -1;
	split_num(s, &base, &have_base);
	if (!have_base) {
		fail(im, "%s: expected FILE[:from[-to]]:BASE", spec);
		goto out;
	}
	char *c = strrchr(s, ':');
	if (c) {
		char *dash = strchr(c + 1, '-');
		if (dash)
			*dash = 0;
		if (!parse_u64(c + 1, &from) && (!dash || !parse_u64(dash + 1, &to))) {
			*c = 0;
			have_range = dash ? 2 : 1;
		} else if (dash) {
			*dash = '-';
		}
	}
	size_t len;
	uint8_t *data = slurp(im, s, &len);
	if (!data)
		goto out;
	if (have_range == 0)
		to = len;
	else if (have_range == 1)
		to = len;
	if (from > len || to > len || from > to) {
		fail(im, "%s: range 0x%llx-0x%llx outside the file (%zu bytes)", spec, from, to, len);
	} else if (to == from) {
		fail(im, "%s: empty", spec);
	} else {
		rc = ptsec_add(im, base, data + from, to - from, s);
	}
	free(data);
out:
	free(s);
	return rc;
}

/* ---- ELF ------------------------------------------------------------------ */

static bool in_file(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

int ptsec_load_elf(struct ptsec_image *im, const char *spec)
{
	char *s = strdup(spec);
	if (!s)
		return fail(im, "out of memory");
	unsigned long long base;
	int have_base, rc = -1;
	split_num(s, &base, &have_base);
	size_t len;
	uint8_t *f = slurp(im, s, &len);
	if (!f)
		goto out;
	if (len < 52 || memcmp(f, "\177ELF", 4) || f[5] != 1 || (f[4] != 1 && f[4] != 2)) {
		fail(im, "%s: not a little-endian ELF file", s);
		goto out_f;
	}
	bool is64 = f[4] == 2;
	if (is64 && len < 64) {
		fail(im, "%s: truncated ELF header", s);
		goto out_f;
	}
	uint64_t entry = is64 ? efipt_le64(f + 24) : efipt_le32(f + 24);
	uint64_t phoff = is64 ? efipt_le64(f + 32) : efipt_le32(f + 28);
	uint64_t shoff = is64 ? efipt_le64(f + 40) : efipt_le32(f + 32);
	unsigned phentsize = efipt_le16(f + (is64 ? 54 : 42));
	unsigned phnum = efipt_le16(f + (is64 ? 56 : 44));
	unsigned shentsize = efipt_le16(f + (is64 ? 58 : 46));
	unsigned shnum = efipt_le16(f + (is64 ? 60 : 48));
	unsigned need_ph = is64 ? 56 : 32, need_sh = is64 ? 64 : 40;
	if (phnum && (phentsize < need_ph || !in_file(len, phoff, (uint64_t)phnum * phentsize))) {
		fail(im, "%s: program headers outside the file", s);
		goto out_f;
	}
	/* pass 0: lowest address; pass 1: add */
	uint64_t lowest = UINT64_MAX, total = 0;
	int added = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t bias = have_base && lowest != UINT64_MAX ? base - lowest : 0;
		for (unsigned i = 0; i < phnum; i++) {
			const uint8_t *ph = f + phoff + (uint64_t)i * phentsize;
			uint32_t type = efipt_le32(ph);
			uint32_t flags = efipt_le32(ph + (is64 ? 4 : 24));
			uint64_t off = is64 ? efipt_le64(ph + 8) : efipt_le32(ph + 4);
			uint64_t va = is64 ? efipt_le64(ph + 16) : efipt_le32(ph + 8);
			uint64_t fsz = is64 ? efipt_le64(ph + 32) : efipt_le32(ph + 16);
			if (type != 1 /* PT_LOAD */ || !(flags & 1 /* PF_X */) || !fsz)
				continue;
			if (!in_file(len, off, fsz)) {
				fail(im, "%s: segment %u outside the file", s, i);
				goto out_f;
			}
			if (pass == 0) {
				if (va < lowest)
					lowest = va;
				/* segments may all point at the same file bytes: bound
				 * the copies, as for a PE image */
				total += fsz;
				if (total > len + 4096ull * (i + 1)) {
					/* real segments share at most a page with a neighbour */
					fail(im, "%s: executable segments overlap in the file (%llu "
						 "bytes by segment %u of a %zu-byte file)", s,
						 (unsigned long long)total, i, len);
					goto out_f;
				}
				if (total > MAX_IMAGE) {
					fail(im, "%s: executable segments of more than %llu MiB in all "
						 "(segment %u); not a code image efipt reads", s,
						 MAX_IMAGE >> 20, i);
					goto out_f;
				}
				continue;
			}
			char name[64];
			snprintf(name, sizeof(name), "%.40s#%u", strrchr(s, '/') ? strrchr(s, '/') + 1 : s, i);
			if (ptsec_add(im, va + bias, f + off, fsz, name))
				goto out_f;
			added++;
		}
		if (pass == 1 && !added && shnum) {
			if (shentsize < need_sh || !in_file(len, shoff, (uint64_t)shnum * shentsize)) {
				fail(im, "%s: section headers outside the file", s);
				goto out_f;
			}
			for (unsigned i = 0; i < shnum; i++) {
				const uint8_t *sh = f + shoff + (uint64_t)i * shentsize;
				uint32_t type = efipt_le32(sh + 4);
				uint64_t flags = is64 ? efipt_le64(sh + 8) : efipt_le32(sh + 8);
				uint64_t va = is64 ? efipt_le64(sh + 16) : efipt_le32(sh + 12);
				uint64_t off = is64 ? efipt_le64(sh + 24) : efipt_le32(sh + 16);
				uint64_t sz = is64 ? efipt_le64(sh + 32) : efipt_le32(sh + 20);
				if (type != 1 /* PROGBITS */ || !(flags & 4 /* EXECINSTR */) || !sz)
					continue;
				if (!in_file(len, off, sz)) {
					fail(im, "%s: section %u outside the file", s, i);
					goto out_f;
				}
				total += sz;
				if (total > MAX_IMAGE) {
					fail(im, "%s: executable sections of more than %llu MiB in all "
						 "(section %u); not a code image efipt reads", s,
						 MAX_IMAGE >> 20, i);
					goto out_f;
				}
				char name[64];
				snprintf(name, sizeof(name), "%.40s#s%u", s, i);
				if (ptsec_add(im, va + (have_base ? base : 0), f + off, sz, name))
					goto out_f;
				added++;
			}
		}
	}
	if (!added) {
		fail(im, "%s: no executable segments", s);
		goto out_f;
	}
	im->entry = entry + (have_base && lowest != UINT64_MAX ? base - lowest : 0);
	rc = 0;
out_f:
	free(f);
out:
	free(s);
	return rc;
}

/* ---- PE/COFF --------------------------------------------------------------- */

int ptsec_load_pe(struct ptsec_image *im, const char *spec)
{
	char *s = strdup(spec);
	if (!s)
		return fail(im, "out of memory");
	unsigned long long base;
	int have_base, rc = -1;
	split_num(s, &base, &have_base);
	size_t len;
	uint8_t *f = slurp(im, s, &len);
	if (!f)
		goto out;
	struct pe_mapped pm;
	char why[200];
	if (pe_map(f, len, base, have_base, &pm, why, sizeof(why))) {
		fail(im, "%s: %s", s, why);
		goto out_f;
	}
	uint8_t *img = pm.img;
	uint64_t load = pm.load;
	uint32_t size_of_image = pm.size_of_image, entry_rva = pm.entry_rva;
	unsigned nsec = pm.nsec;
	int added = 0;
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = pe_map_section(&pm, i);
		uint32_t vsz = efipt_le32(h + 8), va = efipt_le32(h + 12);
		uint32_t rawsz = efipt_le32(h + 16);
		if (!pe_map_section_is_code(h))
			continue;
		uint64_t n = vsz ? vsz : rawsz;
		if (va >= size_of_image) {
			fail(im, "%s: section %u outside the image", s, i);
			goto out_img;
		}
		if (!in_file(size_of_image, va, n))
			n = size_of_image - va;
		char name[64];
		snprintf(name, sizeof(name), "%.40s:%.8s", strrchr(s, '/') ? strrchr(s, '/') + 1 : s, (const char *)h);
		for (char *c = name; *c; c++)
			if (*c < 32 || *c > 126)
				*c = '?';
		if (ptsec_add(im, load + va, img + va, n, name))
			goto out_img;
		added++;
	}
	if (!added) {
		fail(im, "%s: no executable sections", s);
		goto out_img;
	}
	im->entry = load + entry_rva;
	im->pe_base = load;
	im->pe_size = size_of_image;
	struct pe_info pi;
	im->pe_pdb[0] = 0;
	if (!pe_read_info(f, len, false, &pi))
		snprintf(im->pe_pdb, sizeof(im->pe_pdb), "%s", pi.debug_path);
	struct ptimg_flat laid = { img, load, size_of_image };
	struct ptimg hdr = { ptimg_flat_read, &laid };
	pe_code_read(&hdr, load, size_of_image, &im->pe_code);
	rc = 0;
out_img:
	free(img);
out_f:
	free(f);
out:
	free(s);
	return rc;
}
