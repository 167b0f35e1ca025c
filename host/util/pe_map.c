/* PE and TE files laid out as loaded; see pe_map.h. */
#include "host/util/pe_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

static bool in_buf(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

bool pe_map_section_is_code(const uint8_t *h)
{
	uint32_t ch = efipt_le32(h + 36);
	return (ch & 0x20000000u) || (ch & 0x20u);
}

/* The base relocation blocks {PageRVA, BlockSize, u16 entries} of img
 * (its [rva, rva + size)), each fixup moved by delta. */
static int relocate(uint8_t *img, uint32_t size_of_image, uint32_t rva, uint32_t size,
		    uint64_t delta, char *err, size_t errlen)
{
	if (!in_buf(size_of_image, rva, size)) {
		snprintf(err, errlen, "relocation table outside the image");
		return -1;
	}
	uint64_t p = rva, end = (uint64_t)rva + size;
	while (p + 8 <= end) {
		uint32_t page = efipt_le32(img + p), bsz = efipt_le32(img + p + 4);
		if (bsz < 8 || bsz > end - p) {
			snprintf(err, errlen, "bad relocation block at rva 0x%llx",
				 (unsigned long long)p);
			return -1;
		}
		for (uint64_t e = p + 8; e + 2 <= p + bsz; e += 2) {
			unsigned v = efipt_le16(img + e), type = v >> 12;
			uint64_t at = (uint64_t)page + (v & 0xfff);
			if (type == 0) /* ABSOLUTE: padding */
				continue;
			unsigned w = type == 10 ? 8 : type == 3 ? 4 : 0; /* DIR64, HIGHLOW */
			if (!w) {
				snprintf(err, errlen, "unsupported relocation type %u", type);
				return -1;
			}
			if (!in_buf(size_of_image, at, w)) {
				snprintf(err, errlen, "relocation outside the image");
				return -1;
			}
			efipt_store_le(img + at, efipt_load_le(img + at, w) + delta, w);
		}
		p += bsz;
	}
	return 0;
}

int pe_map(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	   char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len < 64 || f[0] != 'M' || f[1] != 'Z') {
		snprintf(err, errlen, "not a PE file (no MZ header)");
		return -1;
	}
	uint32_t pe = efipt_le32(f + 0x3c);
	if (!in_buf(len, pe, 24) || memcmp(f + pe, "PE\0\0", 4)) {
		snprintf(err, errlen, "no PE signature");
		return -1;
	}
	unsigned nsec = efipt_le16(f + pe + 6);
	unsigned optsz = efipt_le16(f + pe + 20);
	uint64_t opt = (uint64_t)pe + 24;
	if (!in_buf(len, opt, optsz) || optsz < 96) {
		snprintf(err, errlen, "optional header outside the file");
		return -1;
	}
	unsigned magic = efipt_le16(f + opt);
	bool plus = magic == 0x20b;
	if (!plus && magic != 0x10b) {
		snprintf(err, errlen, "unknown optional header magic 0x%x", magic);
		return -1;
	}
	if (optsz < (plus ? 112u : 96u)) {
		snprintf(err, errlen, "optional header too short (%u bytes)", optsz);
		return -1;
	}
	uint64_t image_base = plus ? efipt_le64(f + opt + 24) : efipt_le32(f + opt + 28);
	uint32_t size_of_image = efipt_le32(f + opt + 56);
	uint32_t size_of_headers = efipt_le32(f + opt + 60);
	uint64_t dd = opt + (plus ? 112 : 96);
	uint32_t ndd = efipt_le32(f + opt + (plus ? 108 : 92));
	uint32_t reloc_rva = 0, reloc_size = 0;
	if (ndd > 5 && dd + 6 * 8 <= opt + optsz) {
		reloc_rva = efipt_le32(f + dd + 5 * 8);
		reloc_size = efipt_le32(f + dd + 5 * 8 + 4);
	}
	if (!size_of_image || size_of_image > PE_MAP_MAX_IMAGE) {
		snprintf(err, errlen, "bad SizeOfImage 0x%x", size_of_image);
		return -1;
	}
	uint64_t sect = opt + optsz;
	if (!in_buf(len, sect, (uint64_t)nsec * 40)) {
		snprintf(err, errlen, "section table outside the file");
		return -1;
	}
	uint8_t *img = calloc(1, size_of_image);
	if (!img) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (size_of_headers > size_of_image)
		size_of_headers = size_of_image;
	memcpy(img, f, size_of_headers < len ? size_of_headers : len);
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = f + sect + (uint64_t)i * 40;
		uint32_t vsz = efipt_le32(h + 8), va = efipt_le32(h + 12);
		uint32_t rawsz = efipt_le32(h + 16), rawp = efipt_le32(h + 20);
		uint64_t n = rawsz < vsz || !vsz ? rawsz : vsz;
		if (!in_buf(len, rawp, n) || !in_buf(size_of_image, va, n)) {
			snprintf(err, errlen, "section %u outside the file or image", i);
			free(img);
			return -1;
		}
		memcpy(img + va, f + rawp, n);
	}
	if (!at_load)
		load = image_base;
	/* without relocations, a move is fine if the code is position independent */
	if (load != image_base && reloc_size &&
	    relocate(img, size_of_image, reloc_rva, reloc_size, load - image_base, err, errlen)) {
		free(img);
		return -1;
	}
	out->img = img;
	out->size_of_image = size_of_image;
	out->image_base = image_base;
	out->load = load;
	out->entry_rva = efipt_le32(f + opt + 16);
	out->sect = f + sect;
	out->nsec = nsec;
	return 0;
}

/* A TE file's sections in img (of size bytes): a section's raw data is
 * adj bytes before its PE file offset, adj the headers stripped less the
 * TE header's 40. */
static int te_sections(const uint8_t *f, size_t len, unsigned nsec, uint32_t adj, uint8_t *img,
		       uint32_t size, char *err, size_t errlen)
{
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = f + 40 + (size_t)i * 40;
		uint32_t vsz = efipt_le32(h + 8), va = efipt_le32(h + 12);
		uint32_t rawsz = efipt_le32(h + 16), rawp = efipt_le32(h + 20);
		uint64_t n = rawsz < vsz || !vsz ? rawsz : vsz;
		if (n && (rawp < adj || !in_buf(len, rawp - adj, n) || !in_buf(size, va, n))) {
			snprintf(err, errlen, "section %u outside the file or image", i);
			return -1;
		}
		if (n)
			memcpy(img + va, f + rawp - adj, n);
	}
	return 0;
}

int pe_map_te(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	      char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len < 40 || f[0] != 'V' || f[1] != 'Z') {
		snprintf(err, errlen, "not a TE file (no VZ header)");
		return -1;
	}
	unsigned nsec = f[4];
	uint32_t stripped = efipt_le16(f + 6);
	uint64_t hdrs = 40 + (uint64_t)nsec * 40;
	if (!in_buf(len, 0, hdrs)) {
		snprintf(err, errlen, "section table outside the file");
		return -1;
	}
	if (stripped < 40) {
		snprintf(err, errlen, "bad StrippedSize 0x%x", stripped);
		return -1;
	}
	uint64_t end = 0;
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = f + 40 + (size_t)i * 40;
		uint64_t e = (uint64_t)efipt_le32(h + 12) + efipt_le32(h + 8);
		end = e > end ? e : end;
	}
	if (!end || end > PE_MAP_MAX_IMAGE) {
		snprintf(err, errlen, "bad image size 0x%llx", (unsigned long long)end);
		return -1;
	}
	uint32_t size = (uint32_t)end, adj = stripped - 40;
	uint8_t *img = calloc(1, size);
	if (!img) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the headers, where the loader keeps them */
	if (in_buf(size, adj, hdrs))
		memcpy(img + adj, f, hdrs);
	uint64_t image_base = efipt_le64(f + 16);
	if (!at_load)
		load = image_base;
	if (te_sections(f, len, nsec, adj, img, size, err, errlen) ||
	    (load != image_base && efipt_le32(f + 28) &&
	     relocate(img, size, efipt_le32(f + 24), efipt_le32(f + 28), load - image_base, err,
		      errlen))) {
		free(img);
		return -1;
	}
	out->img = img;
	out->size_of_image = size;
	out->image_base = image_base;
	out->load = load;
	out->entry_rva = efipt_le32(f + 8);
	out->sect = f + 40;
	out->nsec = nsec;
	out->hdr_rva = adj;
	return 0;
}

int pe_map_any(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	       char *err, size_t errlen)
{
	if (len >= 2 && f[0] == 'V' && f[1] == 'Z')
		return pe_map_te(f, len, load, at_load, out, err, errlen);
	return pe_map(f, len, load, at_load, out, err, errlen);
}
