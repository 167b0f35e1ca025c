/* Firmware volumes; see fv.h. Layouts from the PI specification vol. 3
 * (EFI_FIRMWARE_VOLUME_HEADER, EFI_FFS_FILE_HEADER(2), EFI_COMMON_SECTION_HEADER(2)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "core/pe_info.h"
#include "host/util/file_io.h"
#include "host/qemu/fv.h"

#define MAX_DEPTH 6
#define MAX_LZMA_OUT (64u << 20) /* OVMF's DXEFV is ~15 MiB */
/* the decoder's memory, its dictionary mostly: the header's dictionary
 * size is untrusted (up to 4 GiB); EDK2's LzmaCompress uses 4 MiB */
#define MAX_LZMA_MEM (128u << 20)

/* EDK2's LZMA custom decompress GUID EE4E5898-3914-4259-9D6E-DC7BD79403CF */
static const uint8_t lzma_guid[16] = { 0x98, 0x58, 0x4e, 0xee, 0x14, 0x39, 0x59, 0x42,
				       0x9d, 0x6e, 0xdc, 0x7b, 0xd7, 0x94, 0x03, 0xcf };

struct scan {
	fv_module_fn fn;
	void *ctx;
	struct fv_stats *st;
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd24(const uint8_t *p) { return p[0] | p[1] << 8 | (uint32_t)p[2] << 16; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void parse_fv(struct scan *s, const uint8_t *p, size_t len, int depth);

/* PE32/PE32+ headers: ImageBase, SizeOfImage */
static void read_pe(const uint8_t *p, size_t len, struct fv_module *m)
{
	if (len < 0x40 || p[0] != 'M' || p[1] != 'Z')
		return;
	uint32_t pe = rd32(p + 0x3c);
	if (pe > len || len - pe < 24 + 64 || memcmp(p + pe, "PE\0\0", 4))
		return;
	const uint8_t *opt = p + pe + 24;
	uint16_t magic = rd16(opt);
	if (magic == 0x20b)
		m->image_base = rd64(opt + 24);
	else if (magic == 0x10b)
		m->image_base = rd32(opt + 28);
	else
		return;
	m->image_size = rd32(opt + 56);
	struct ptimg_flat flat = { p, m->image_base, len }; /* headers are at RVA 0 */
	struct ptimg img = { ptimg_flat_read, &flat };
	pe_code_read(&img, m->image_base, m->image_size, &m->code);
}

/* TE headers (core/pe_info.c): the image's RVA 0 is at ImageBase; no
 * SizeOfImage, so the end of the last section */
static void read_te(const uint8_t *p, size_t len, struct fv_module *m)
{
	struct pe_info te;
	if (pe_read_te(p, len, &te) != PE_OK)
		return;
	m->image_base = te.image_base;
	m->image_size = te.size_of_image;
	/* the section table fits: pe_read_te checked it */
	memset(&m->code, 0, sizeof(m->code));
	for (unsigned i = 0; i < p[4]; i++) {
		const uint8_t *sh = p + 40 + 40 * i;
		/* IMAGE_SCN_CNT_CODE or IMAGE_SCN_MEM_EXECUTE, as for PE */
		if ((rd32(sh + 36) & 0x20000020u) && rd32(sh + 8) && m->code.n < PE_CODE_MAX) {
			m->code.r[m->code.n].rva = rd32(sh + 12);
			m->code.r[m->code.n].size = rd32(sh + 8);
			m->code.n++;
		}
	}
}

/* An .lzma ("alone") stream: 5 bytes of properties, the 8-byte size, data */
static uint8_t *unlzma(const uint8_t *p, size_t len, size_t *out_len)
{
	if (len < 13)
		return NULL;
	uint64_t size = rd64(p + 5);
	if (size == 0 || size > MAX_LZMA_OUT)
		return NULL;
	uint8_t *out = malloc(size);
	if (!out)
		return NULL;
	lzma_stream z = LZMA_STREAM_INIT;
	if (lzma_alone_decoder(&z, MAX_LZMA_MEM) != LZMA_OK) {
		free(out);
		return NULL;
	}
	z.next_in = p;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = size;
	lzma_ret r = lzma_code(&z, LZMA_FINISH);
	size_t got = size - z.avail_out;
	lzma_end(&z);
	if ((r != LZMA_STREAM_END && r != LZMA_OK) || got != size) {
		free(out);
		return NULL;
	}
	*out_len = got;
	return out;
}

static void parse_sections(struct scan *s, const uint8_t *p, size_t len, struct fv_module *m,
			   int depth)
{
	if (depth > MAX_DEPTH)
		return;
	size_t off = 0;
	while (len - off >= 4) {
		const uint8_t *h = p + off;
		size_t size = rd24(h), hdr = 4;
		uint8_t type = h[3];
		if (size == 0xffffff) {
			if (len - off < 8)
				return;
			size = rd32(h + 4);
			hdr = 8;
		}
		if (size < hdr || size > len - off)
			return;
		const uint8_t *d = h + hdr;
		size_t dlen = size - hdr;
		switch (type) {
		case 0x15: { /* USER_INTERFACE: UCS-2, ASCII kept */
			size_t n = 0;
			for (size_t i = 0; i + 1 < dlen && rd16(d + i) && n + 1 < sizeof(m->name); i += 2) {
				uint16_t c = rd16(d + i);
				m->name[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
			}
			m->name[n] = 0;
			break;
		}
		case 0x10: /* PE32 */
		case 0x12: /* TE */
			if (!m->image_size) {
				(type == 0x10 ? read_pe : read_te)(d, dlen, m);
				/* kept: the volume's bytes may be an LZMA
				 * section's, gone before the callback */
				if (m->image_size && (m->pe = malloc(dlen))) {
					memcpy(m->pe, d, dlen);
					m->pe_len = dlen;
				}
			}
			break;
		case 0x17: /* FIRMWARE_VOLUME_IMAGE */
			parse_fv(s, d, dlen, depth + 1);
			break;
		case 0x01: /* COMPRESSION (EFI/Tiano): not opened */
			s->st->other_compressed++;
			break;
		case 0x02: { /* GUID_DEFINED: GUID, DataOffset, Attributes */
			if (dlen < 20)
				break;
			size_t doff = rd16(d + 16);
			uint16_t attr = rd16(d + 18);
			if (doff < hdr + 20 || doff > size)
				break;
			const uint8_t *in = h + doff;
			size_t inlen = size - doff;
			if (!memcmp(d, lzma_guid, 16)) {
				size_t olen;
				uint8_t *o = unlzma(in, inlen, &olen);
				s->st->lzma++;
				if (!o) {
					s->st->lzma_failed++;
					break;
				}
				parse_sections(s, o, olen, m, depth + 1);
				free(o);
			} else if (!(attr & 0x01)) { /* no processing required */
				parse_sections(s, in, inlen, m, depth + 1);
			} else {
				s->st->other_compressed++;
			}
			break;
		}
		default:
			break;
		}
		off += (size + 3) & ~(size_t)3;
		if (off > len)
			return;
	}
}

static void guid_text(const uint8_t *g, char *out, size_t cap)
{
	snprintf(out, cap, "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X", rd32(g), rd16(g + 4),
		 rd16(g + 6), g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static void parse_fv(struct scan *s, const uint8_t *p, size_t len, int depth)
{
	if (depth > MAX_DEPTH || len < 56 || memcmp(p + 40, "_FVH", 4))
		return;
	uint64_t fvlen = rd64(p + 32);
	size_t hlen = rd16(p + 48), ext = rd16(p + 52);
	if (fvlen < 56 || fvlen > len || hlen < 56 || hlen > fvlen)
		return;
	s->st->volumes++;
	size_t off = hlen;
	if (ext && ext + 20 <= fvlen) {
		uint32_t esz = rd32(p + ext + 16);
		if (esz <= fvlen - ext && ext + esz > off)
			off = ext + esz;
	}
	while (1) {
		off = (off + 7) & ~(size_t)7;
		if (off > fvlen || fvlen - off < 24)
			return;
		const uint8_t *f = p + off;
		static const uint8_t ff[24] = { [0 ... 23] = 0xff };
		if (!memcmp(f, ff, 24))
			return; /* free space */
		size_t size = rd24(f + 20), hdr = 24;
		if (f[19] & 0x01) { /* FFS_ATTRIB_LARGE_FILE: EFI_FFS_FILE_HEADER2 */
			if (fvlen - off < 32)
				return;
			uint64_t big = rd64(f + 24);
			size = big > fvlen ? 0 : (size_t)big;
			hdr = 32;
		}
		if (size < hdr || size > fvlen - off)
			return;
		s->st->files++;
		uint8_t type = f[18];
		if (type != 0xf0) { /* not a pad file */
			struct fv_module m;
			memset(&m, 0, sizeof(m));
			memcpy(m.guid, f, 16);
			guid_text(f, m.guid_text, sizeof(m.guid_text));
			m.type = type;
			parse_sections(s, f + hdr, size - hdr, &m, depth);
			if (m.name[0] || m.image_size) {
				s->st->modules++;
				s->fn(s->ctx, &m);
			}
			free(m.pe);
		}
		off += size;
	}
}

void fv_scan(const uint8_t *buf, size_t len, fv_module_fn fn, void *ctx, struct fv_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct scan s = { fn, ctx, st };
	/* volumes start 8-byte aligned; a found one is skipped whole */
	for (size_t off = 0; off + 56 <= len;) {
		const uint8_t *p = buf + off;
		uint64_t fvlen = rd64(p + 32);
		if (!memcmp(p + 40, "_FVH", 4) && fvlen >= 56 && fvlen <= len - off) {
			parse_fv(&s, p, len - off, 0);
			off += (fvlen + 7) & ~(uint64_t)7;
		} else {
			off += 8;
		}
	}
}

int fv_module_xip(const struct fv_module *m)
{
	return (m->type == 0x03 || m->type == 0x04 || m->type == 0x06) && m->image_base &&
	       m->image_size;
}

static void collect(void *ctx, struct fv_module *m)
{
	struct fv_modules *ms = ctx;
	if (ms->n < FV_MODULES_MAX) {
		ms->m[ms->n++] = *m;
		m->pe = NULL; /* the list's now */
	}
}

int fv_modules_load(const char *path, struct fv_modules *ms)
{
	memset(ms, 0, sizeof(*ms));
	size_t len;
	uint8_t *buf = (uint8_t *)read_small_file("qemu", path, 64u << 20, &len);
	if (!buf)
		return -1;
	ms->m = calloc(FV_MODULES_MAX, sizeof(*ms->m));
	if (!ms->m) {
		free(buf);
		return -2;
	}
	fv_scan(buf, len, collect, ms, &ms->st);
	free(buf);
	return 0;
}

void fv_modules_free(struct fv_modules *ms)
{
	for (unsigned i = 0; ms->m && i < ms->n; i++)
		free(ms->m[i].pe);
	free(ms->m);
	memset(ms, 0, sizeof(*ms));
}
