/* PE header facts; see pe_info.h (PE/COFF specification layouts). */
#include "core/pe_info.h"
#include "core/mem.h"

const char *pe_errstr(int err)
{
	switch ((enum pe_err)err) {
	case PE_OK:
		return "no error";
	case PE_ERR_TRUNCATED:
		return "PE headers run past the end of the image";
	case PE_ERR_NOT_PE:
		return "not a PE image (no MZ/PE signature)";
	case PE_ERR_BAD:
		return "inconsistent PE headers";
	}
	return "unknown error";
}

static bool in_range(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* File offset of an RVA through the section table; -1 if unmapped. */
static int64_t rva_to_off(const uint8_t *d, size_t sect, unsigned nsect, uint32_t rva,
			  bool mapped)
{
	if (mapped)
		return rva;
	for (unsigned i = 0; i < nsect; i++) {
		const uint8_t *s = d + sect + 40 * (size_t)i;
		uint32_t vsize = efipt_le32(s + 8), va = efipt_le32(s + 12);
		uint32_t rawsize = efipt_le32(s + 16), raw = efipt_le32(s + 20);
		uint32_t span = vsize > rawsize ? vsize : rawsize;
		if (rva >= va && rva - va < span) {
			if (rva - va >= rawsize)
				return -1; /* zero-filled part: not in the file */
			return (int64_t)raw + (rva - va);
		}
	}
	return -1;
}

int pe_read_info(const uint8_t *d, size_t size, bool mapped, struct pe_info *out)
{
	efipt_memset(out, 0, sizeof(*out));
	if (!in_range(size, 0, 0x40))
		return PE_ERR_TRUNCATED;
	if (d[0] != 'M' || d[1] != 'Z')
		return PE_ERR_NOT_PE;
	uint32_t pe = efipt_le32(d + 0x3c);
	if (!in_range(size, pe, 24))
		return PE_ERR_TRUNCATED;
	if (efipt_memcmp(d + pe, "PE\0\0", 4))
		return PE_ERR_NOT_PE;
	const uint8_t *coff = d + pe + 4;
	out->machine = efipt_le16(coff);
	unsigned nsect = efipt_le16(coff + 2);
	unsigned optsize = efipt_le16(coff + 16);
	size_t opt = (size_t)pe + 24;
	if (!in_range(size, opt, optsize) || optsize < 2)
		return PE_ERR_TRUNCATED;
	uint16_t magic = efipt_le16(d + opt);
	size_t dd; /* data directories */
	unsigned ndd_off;
	if (magic == 0x20b) {
		out->pe32plus = true;
		if (optsize < 112)
			return PE_ERR_BAD;
		out->image_base = efipt_le64(d + opt + 24);
		ndd_off = 108;
		dd = opt + 112;
	} else if (magic == 0x10b) {
		if (optsize < 96)
			return PE_ERR_BAD;
		out->image_base = efipt_le32(d + opt + 28);
		ndd_off = 92;
		dd = opt + 96;
	} else {
		return PE_ERR_BAD;
	}
	out->entry_rva = efipt_le32(d + opt + 16);
	out->size_of_image = efipt_le32(d + opt + 56);
	out->subsystem = efipt_le16(d + opt + 68);
	uint32_t ndd = efipt_le32(d + opt + ndd_off);
	size_t sect = opt + optsize;
	if (!in_range(size, sect, 40ull * nsect))
		return PE_ERR_TRUNCATED;
	/* debug directory: data directory 6 */
	if (ndd <= 6 || dd + 8 * 7 > opt + optsize)
		return PE_OK;
	uint32_t drva = efipt_le32(d + dd + 6 * 8), dsize = efipt_le32(d + dd + 6 * 8 + 4);
	int64_t doff = rva_to_off(d, sect, nsect, drva, mapped);
	if (!dsize || doff < 0 || !in_range(size, (uint64_t)doff, dsize))
		return PE_OK;
	for (uint32_t i = 0; i + 28 <= dsize && i < 28 * 16; i += 28) {
		const uint8_t *e = d + doff + i;
		if (efipt_le32(e + 12) != 2) /* IMAGE_DEBUG_TYPE_CODEVIEW */
			continue;
		uint32_t len = efipt_le32(e + 16);
		uint32_t where = mapped ? efipt_le32(e + 20) : efipt_le32(e + 24);
		if (!in_range(size, where, len) || len < 8)
			continue;
		const uint8_t *cv = d + where;
		size_t skip;
		if (!efipt_memcmp(cv, "RSDS", 4))
			skip = 24; /* signature, GUID, age */
		else if (!efipt_memcmp(cv, "NB10", 4))
			skip = 16; /* signature, offset, time stamp, age */
		else
			continue;
		if (len <= skip)
			continue;
		size_t n = 0;
		for (size_t k = skip; k < len && cv[k] && n + 1 < sizeof(out->debug_path); k++) {
			uint8_t c = cv[k];
			out->debug_path[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		}
		out->debug_path[n] = 0;
		break;
	}
	return PE_OK;
}

void pe_debug_name(const char *path, char *out, size_t cap)
{
	if (!cap)
		return;
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/' || *p == '\\')
			base = p + 1;
	size_t n = 0;
	while (base[n] && base[n] != '.' && n + 1 < cap) {
		out[n] = base[n];
		n++;
	}
	out[n] = 0;
}

static bool read_all(const struct ptimg *img, uint64_t ip, uint8_t *buf, size_t n)
{
	while (n) {
		int got = img->read(img->ctx, ip, buf, n);
		if (got <= 0)
			return false;
		ip += (unsigned)got;
		buf += got;
		n -= (size_t)got;
	}
	return true;
}

/* The DOS header's e_lfanew at 0x3c; the COFF header after "PE\0\0"
 * (NumberOfSections at +6, SizeOfOptionalHeader at +20); the optional
 * header's AddressOfEntryPoint at +16; 40-byte section headers with
 * VirtualSize (+8), VirtualAddress (+12), SizeOfRawData (+16) and
 * Characteristics (+36: 0x20 code, 0x20000000 executable). */
int pe_code_read(const struct ptimg *img, uint64_t base, uint64_t size, struct pe_code *out)
{
	uint8_t h[64];
	efipt_memset(out, 0, sizeof(*out));
	if (!img->read || size < 64 || !read_all(img, base, h, 64) || h[0] != 'M' || h[1] != 'Z')
		return -1;
	uint32_t pe = efipt_le32(h + 0x3c);
	if (pe > size || size - pe < 24 + 20)
		return -1;
	if (!read_all(img, base + pe, h, 44) || efipt_memcmp(h, "PE\0\0", 4))
		return -1;
	unsigned nsec = efipt_le16(h + 6);
	unsigned opt = efipt_le16(h + 20);
	uint32_t entry = efipt_le32(h + 24 + 16);
	uint64_t sec = (uint64_t)pe + 24 + opt;
	for (unsigned i = 0; i < nsec && i < 96; i++, sec += 40) {
		uint8_t s[40];
		if (sec + 40 > size || !read_all(img, base + sec, s, 40))
			return out->n ? 0 : -1;
		uint64_t va = efipt_le32(s + 12), vs = efipt_le32(s + 8);
		if (!vs)
			vs = efipt_le32(s + 16);
		if (!(efipt_le32(s + 36) & 0x20000020u) || va >= size || !vs)
			continue;
		if (vs > size - va)
			vs = size - va;
		if (out->n == PE_CODE_MAX) { /* more than ever seen: the last takes the rest */
			struct pe_code_range *l = &out->r[PE_CODE_MAX - 1];
			uint64_t end = va + vs > (uint64_t)l->rva + l->size ? va + vs
									    : (uint64_t)l->rva + l->size;
			l->size = (uint32_t)(end - l->rva);
			continue;
		}
		out->r[out->n].rva = (uint32_t)va;
		out->r[out->n].size = (uint32_t)vs;
		out->n++;
	}
	if (entry && entry < size)
		out->entry_rva = entry;
	return 0;
}

uint64_t pe_code_bytes(const struct pe_code *c)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < c->n; i++)
		n += c->r[i].size;
	return n;
}
