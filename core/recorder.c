/* The recorder region's variable, header and checks; see recorder.h. */
#include "core/crc32.h"
#include "core/mem.h"
#include "core/recorder.h"

/* The format is these structs' bytes: fixed sizes, no padding. */
_Static_assert(sizeof(struct ptrec_header) == PTREC_HEADER_BYTES, "header is one page");
_Static_assert(__builtin_offsetof(struct ptrec_header, sect) == 0x110, "header layout");
_Static_assert(__builtin_offsetof(struct ptrec_header, run_id) == 0x450, "header layout");
_Static_assert(__builtin_offsetof(struct ptrec_header, reserved) == 0x768, "header layout");
_Static_assert(sizeof(struct ptrec_section) == 32, "section entry");
_Static_assert(sizeof(struct ptrec_region) == 24, "layout region");
_Static_assert(sizeof(struct ptrec_snap) == 32, "snapshot entry");
_Static_assert(sizeof(struct ptrec_var) == 56, "variable");

#define PAGE 4096ull

const char *ptrec_status_name(int st)
{
	switch ((enum ptrec_status)st) {
	case PTREC_OK: return "ok";
	case PTREC_NO_HEADER: return "no recorder header";
	case PTREC_BAD_VERSION: return "unknown format version";
	case PTREC_BAD_CHECKSUM: return "header checksum mismatch";
	case PTREC_STALE: return "stale generation";
	case PTREC_MOVED: return "header describes another region";
	case PTREC_BAD_LAYOUT: return "inconsistent layout";
	case PTREC_BAD_SECTION: return "layout section damaged";
	case PTREC_UNREADABLE: return "region unreadable";
	}
	return "unknown status";
}

/* ---- the variable ------------------------------------------------------- */

void ptrec_var_seal(struct ptrec_var *v)
{
	efipt_memcpy(v->magic, PTREC_VAR_MAGIC, 8);
	v->version = PTREC_VERSION;
	v->crc = 0;
	v->crc = crc32_update(0, v, sizeof(*v));
}

int ptrec_var_decode(const void *data, size_t len, struct ptrec_var *v, struct strbuf *why)
{
	if (len != sizeof(*v)) {
		sb_printf(why, "the variable %s holds %llu bytes, not %u", PTREC_VAR_NAME,
			  (unsigned long long)len, (unsigned)sizeof(*v));
		return -1;
	}
	efipt_memcpy(v, data, sizeof(*v));
	uint32_t crc = v->crc;
	v->crc = 0;
	uint32_t want = crc32_update(0, v, sizeof(*v));
	v->crc = crc;
	if (efipt_memcmp(v->magic, PTREC_VAR_MAGIC, 8) || v->version != PTREC_VERSION) {
		sb_printf(why, "the variable %s is not efipt's (format version %u)", PTREC_VAR_NAME,
			  v->version);
		return -1;
	}
	if (crc != want) {
		sb_printf(why, "the variable %s is damaged (CRC-32 0x%08x, computed 0x%08x)",
			  PTREC_VAR_NAME, crc, want);
		return -1;
	}
	if (v->state != PTREC_VAR_ARMED && v->state != PTREC_VAR_RECOVERED) {
		sb_printf(why, "the variable %s has an unknown state %u", PTREC_VAR_NAME, v->state);
		return -1;
	}
	if (!v->region_size || (v->region_phys & (PAGE - 1)) || (v->region_size & (PAGE - 1)) ||
	    v->region_phys + v->region_size < v->region_phys ||
	    v->header_off > v->region_size - PTREC_HEADER_BYTES || (v->header_off & (PAGE - 1)) ||
	    v->region_size < PTREC_HEADER_BYTES) {
		sb_printf(why, "the variable %s names no usable region (0x%llx, %llu bytes, header "
			       "at +0x%llx)",
			  PTREC_VAR_NAME, (unsigned long long)v->region_phys,
			  (unsigned long long)v->region_size, (unsigned long long)v->header_off);
		return -1;
	}
	return 0;
}

/* ---- the header ---------------------------------------------------------- */

void ptrec_header_seal(struct ptrec_header *h)
{
	efipt_memcpy(h->magic, PTREC_MAGIC, 8);
	h->version = PTREC_VERSION;
	h->header_bytes = PTREC_HEADER_BYTES;
	h->crc = 0;
	h->crc = crc32_update(0, h, sizeof(*h));
}

struct ptrec_section *ptrec_section_get(struct ptrec_header *h, uint32_t kind)
{
	for (uint32_t i = 0; i < h->nsect && i < PTREC_MAX_SECTIONS; i++)
		if (h->sect[i].kind == kind)
			return &h->sect[i];
	return 0;
}

int ptrec_read(const struct ptrec *r, uint64_t off, void *dst, size_t len)
{
	if (len > r->size || off > r->size - len)
		return -1;
	return r->rd.read(r->rd.ctx, off, dst, len);
}

/* CRC-32 of len bytes at off, read through the scratch buffer. */
static int crc_of(struct ptrec *r, uint64_t off, uint64_t len, uint32_t *crc)
{
	uint32_t c = 0;
	while (len) {
		size_t n = len < sizeof(r->scratch) ? (size_t)len : sizeof(r->scratch);
		if (ptrec_read(r, off, r->scratch, n))
			return -1;
		c = crc32_update(c, r->scratch, n);
		off += n;
		len -= n;
	}
	*crc = c;
	return 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* [a, a+al) and [b, b+bl) share a byte (both inside the region: no overflow). */
static bool overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl)
{
	return a < b + bl && b < a + al;
}

/* Is [off, off+len) inside the region, page aligned? */
static bool in_region(const struct ptrec_header *h, uint64_t off, uint64_t len)
{
	return !(off & (PAGE - 1)) && len <= h->region_size && off <= h->region_size - len;
}

static const char *section_name(uint32_t kind)
{
	switch (kind) {
	case PTREC_SEC_LAYOUT: return "layout";
	case PTREC_SEC_IMAGES_ARM: return "images at arming";
	case PTREC_SEC_CODE_ARM: return "code at arming";
	case PTREC_SEC_IMAGES_EXIT: return "images at ExitBootServices";
	case PTREC_SEC_CODE_EXIT: return "code at ExitBootServices";
	case PTREC_SEC_CMDLINE: return "command line";
	}
	return "unknown";
}

/* The header's own fields: enumerations and counts in range. */
static int check_fields(const struct ptrec_header *h, struct strbuf *why)
{
	if (h->source < PTREC_SRC_HW || h->source > PTREC_SRC_QEMU || h->output < PTREC_OUT_SINGLE ||
	    h->output > PTREC_OUT_TOPA || h->mode < PTREC_MODE_STOP || h->mode > PTREC_MODE_WRAP ||
	    h->nsect > PTREC_MAX_SECTIONS || h->ncpuid > PTREC_MAX_CPUID || h->nranges > 4) {
		sb_printf(why, "header fields out of range (source %u, output %u, mode %u, %u "
			       "sections, %u CPUID leaves, %u ranges)",
			  h->source, h->output, h->mode, h->nsect, h->ncpuid, h->nranges);
		return -1;
	}
	return 0;
}

/* Sections: known kinds, once each, inside the region, apart from each other
 * and from the header page. */
static int check_sections(const struct ptrec_header *h, struct strbuf *why)
{
	for (uint32_t i = 0; i < h->nsect; i++) {
		const struct ptrec_section *s = &h->sect[i];
		if (s->kind < PTREC_SEC_LAYOUT || s->kind > PTREC_SEC_CMDLINE) {
			sb_printf(why, "section %u has an unknown kind %u", i, s->kind);
			return -1;
		}
		if (!s->cap || !in_region(h, s->off, s->cap) || s->used > s->cap) {
			sb_printf(why, "the %s section (+0x%llx, %llu of %llu bytes) does not lie in "
				       "the region",
				  section_name(s->kind), (unsigned long long)s->off,
				  (unsigned long long)s->used, (unsigned long long)s->cap);
			return -1;
		}
		if (overlap(s->off, s->cap, h->header_off, PTREC_HEADER_BYTES)) {
			sb_printf(why, "the %s section overlaps the header", section_name(s->kind));
			return -1;
		}
		for (uint32_t j = 0; j < i; j++) {
			const struct ptrec_section *t = &h->sect[j];
			if (t->kind == s->kind || overlap(s->off, s->cap, t->off, t->cap)) {
				sb_printf(why, "the %s section %s the %s section",
					  section_name(s->kind),
					  t->kind == s->kind ? "repeats" : "overlaps",
					  section_name(t->kind));
				return -1;
			}
		}
	}
	return 0;
}

/* Does [off, off+len) collide with the header or a section? */
static const char *meta_overlap(const struct ptrec_header *h, uint64_t off, uint64_t len)
{
	if (overlap(off, len, h->header_off, PTREC_HEADER_BYTES))
		return "the header";
	for (uint32_t i = 0; i < h->nsect; i++)
		if (overlap(off, len, h->sect[i].off, h->sect[i].cap))
			return section_name(h->sect[i].kind);
	return 0;
}

/* The output layout: tables and regions as the CPU needs them (33.2.7). */
static int load_layout(struct ptrec *r, struct strbuf *why)
{
	const struct ptrec_header *h = &r->h;
	const struct ptrec_section *s = ptrec_section_get(&r->h, PTREC_SEC_LAYOUT);
	r->ntab = r->nreg = 0;
	if (h->source == PTREC_SRC_QEMU && !h->trace_size)
		return 0; /* no trace here: the host's QEMU plugin has it */
	if (!s) {
		sb_puts(why, "no layout section");
		return PTREC_BAD_LAYOUT;
	}
	uint32_t crc;
	if (crc_of(r, s->off, s->used, &crc))
		return PTREC_UNREADABLE;
	if (crc != s->crc) {
		sb_printf(why, "the layout section is damaged (CRC-32 0x%08x, recorded 0x%08x)", crc,
			  s->crc);
		return PTREC_BAD_SECTION;
	}
	struct ptrec_layout_hdr lh;
	if (s->used < sizeof(lh) || ptrec_read(r, s->off, &lh, sizeof(lh)))
		return PTREC_UNREADABLE;
	if (lh.ntab > PTREC_MAX_TABLES || lh.nreg > PTREC_MAX_REGIONS || !lh.nreg ||
	    s->used != sizeof(lh) + 8ull * lh.ntab + sizeof(struct ptrec_region) * lh.nreg ||
	    (h->output == PTREC_OUT_SINGLE ? lh.ntab != 0 || lh.nreg != 1 : !lh.ntab)) {
		sb_printf(why, "the layout lists %u ToPA tables and %u regions in %llu bytes, not "
			       "a %s layout",
			  lh.ntab, lh.nreg, (unsigned long long)s->used,
			  h->output == PTREC_OUT_SINGLE ? "single-range" : "ToPA");
		return PTREC_BAD_LAYOUT;
	}
	if (ptrec_read(r, s->off + sizeof(lh), r->tab, 8ull * lh.ntab) ||
	    ptrec_read(r, s->off + sizeof(lh) + 8ull * lh.ntab, r->reg,
	       sizeof(struct ptrec_region) * lh.nreg))
		return PTREC_UNREADABLE;
	r->ntab = lh.ntab;
	r->nreg = lh.nreg;
	uint64_t total = 0;
	for (uint32_t t = 0; t < r->ntab; t++) {
		uint64_t off = r->tab[t] - h->region_phys;
		const char *m;
		if (r->tab[t] < h->region_phys || !in_region(h, off, PAGE) ||
		    (m = meta_overlap(h, off, PAGE))) {
			sb_printf(why, "ToPA table %u at 0x%llx is not in the region's trace area", t,
				  (unsigned long long)r->tab[t]);
			return PTREC_BAD_LAYOUT;
		}
		for (uint32_t u = 0; u < t; u++)
			if (r->tab[u] == r->tab[t]) {
				sb_printf(why, "ToPA table %u repeats table %u", t, u);
				return PTREC_BAD_LAYOUT;
			}
	}
	for (uint32_t i = 0; i < r->nreg; i++) {
		const struct ptrec_region *g = &r->reg[i];
		uint64_t off = g->base - h->region_phys;
		bool ok = g->base >= h->region_phys && is_pow2(g->size) &&
			  !(g->base & (g->size - 1)) && g->size <= h->region_size &&
			  off <= h->region_size - g->size && !meta_overlap(h, off, g->size);
		/* 33.2.7.2: 4 KiB..128 MiB regions; 33.2.7.1: single range of 128 B..4 GiB */
		if (h->output == PTREC_OUT_TOPA)
			ok = ok && g->size >= PAGE && g->size <= (128ull << 20) && g->table < r->ntab &&
			     (i == 0 ? g->table == 0 && g->entry == 0
				     : (g->table == r->reg[i - 1].table &&
					g->entry == r->reg[i - 1].entry + 1) ||
					       (g->table == r->reg[i - 1].table + 1 && g->entry == 0)) &&
			     g->entry < 511;
		else
			ok = ok && g->size >= 128 && g->size <= (4ull << 30) && !g->table && !g->entry;
		for (uint32_t t = 0; ok && t < r->ntab; t++)
			ok = !overlap(off, g->size, r->tab[t] - h->region_phys, PAGE);
		for (uint32_t j = 0; ok && j < i; j++)
			ok = !overlap(g->base, g->size, r->reg[j].base, r->reg[j].size);
		if (!ok) {
			sb_printf(why, "output region %u (0x%llx, %llu bytes, table %u entry %u) is not "
				       "a valid region of the trace area",
				  i, (unsigned long long)g->base, (unsigned long long)g->size, g->table,
				  g->entry);
			return PTREC_BAD_LAYOUT;
		}
		r->reg_off[i] = total;
		total += g->size;
	}
	if (h->output == PTREC_OUT_TOPA && r->reg[r->nreg - 1].table != r->ntab - 1) {
		sb_printf(why, "the layout has %u ToPA tables but its regions use %u", r->ntab,
			  r->reg[r->nreg - 1].table + 1);
		return PTREC_BAD_LAYOUT;
	}
	if (total != h->trace_size) {
		sb_printf(why, "the output regions hold %llu bytes, the header says %llu",
			  (unsigned long long)total, (unsigned long long)h->trace_size);
		return PTREC_BAD_LAYOUT;
	}
	return 0;
}

/* A code section's directory (which = 0 arming, 1 exit): entries inside
 * it, apart from each other, kept in r->snap. */
static int load_code(struct ptrec *r, const struct ptrec_section *s, unsigned which,
		     struct strbuf *why)
{
	uint32_t hdr[2];
	struct ptrec_snap *d = r->snap[which];
	r->nsnap[which] = 0;
	if (!s->used)
		return 0; /* never written (no ExitBootServices) */
	if (s->used < 8 || ptrec_read(r, s->off, hdr, 8))
		goto bad;
	uint32_t n = hdr[0];
	if (n > PTREC_MAX_SNAPSHOTS || 8ull + sizeof(*d) * n > s->used ||
	    ptrec_read(r, s->off + 8, d, sizeof(*d) * n))
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		const struct ptrec_snap *a = &d[i];
		if (!a->size || (a->size & (PAGE - 1)) || (a->phys & (PAGE - 1)) ||
		    (a->off & (PAGE - 1)) || a->phys + a->size < a->phys ||
		    a->off < 8 + sizeof(*d) * n || a->size > s->used || a->off > s->used - a->size)
			goto bad;
		for (uint32_t j = 0; j < i; j++)
			if (overlap(a->phys, a->size, d[j].phys, d[j].size) ||
			    overlap(a->off, a->size, d[j].off, d[j].size))
				goto bad;
	}
	r->nsnap[which] = n;
	return 0;
bad:
	sb_printf(why, "; the %s section's directory is not valid: not used",
		  section_name(s->kind));
	return -1;
}

static int check_images(struct ptrec *r, const struct ptrec_section *s, struct strbuf *why)
{
	uint32_t hdr[2];
	if (!s->used)
		return 0; /* never written (no ExitBootServices) */
	if (s->used >= 8 && !ptrec_read(r, s->off, hdr, 8) && hdr[0] <= PTREC_MAX_IMAGES &&
	    s->used == 8 + (uint64_t)sizeof(struct imgrec) * hdr[0])
		return 0;
	sb_printf(why, "; the %s section is not a list of image records: not used",
		  section_name(s->kind));
	return -1;
}

int ptrec_peek(const struct ptrec_var *var, const struct ptrec_reader *reader,
	       struct ptrec_header *h, struct strbuf *why)
{
	if (var->header_off > var->region_size ||
	    var->region_size - var->header_off < sizeof(*h) ||
	    reader->read(reader->ctx, var->header_off, h, sizeof(*h))) {
		sb_printf(why, "cannot read the header at 0x%llx",
			  (unsigned long long)(var->region_phys + var->header_off));
		return PTREC_UNREADABLE;
	}
	if (efipt_memcmp(h->magic, PTREC_MAGIC, 8)) {
		sb_printf(why, "no recorder header at 0x%llx (the memory was not kept: a cold boot, "
			       "a power cycle or a memory test clears it; or another boot used it)",
			  (unsigned long long)(var->region_phys + var->header_off));
		return PTREC_NO_HEADER;
	}
	if (h->version != PTREC_VERSION || h->header_bytes != PTREC_HEADER_BYTES) {
		sb_printf(why, "the recorder header is format version %u (%u bytes); this efipt reads "
			       "version %u",
			  h->version, h->header_bytes, PTREC_VERSION);
		return PTREC_BAD_VERSION;
	}
	uint32_t crc = h->crc;
	h->crc = 0;
	uint32_t want = crc32_update(0, h, sizeof(*h));
	h->crc = crc;
	if (crc != want) {
		sb_printf(why, "the recorder header at 0x%llx is damaged (CRC-32 0x%08x, computed "
			       "0x%08x)",
			  (unsigned long long)(var->region_phys + var->header_off), crc, want);
		return PTREC_BAD_CHECKSUM;
	}
	if (h->generation != var->generation) {
		sb_printf(why, "the header at 0x%llx is generation %llu, the variable names "
			       "generation %llu: it is an older arming's (stale), not the last one",
			  (unsigned long long)(var->region_phys + var->header_off),
			  (unsigned long long)h->generation, (unsigned long long)var->generation);
		return PTREC_STALE;
	}
	if (h->region_phys != var->region_phys || h->region_size != var->region_size ||
	    h->header_off != var->header_off) {
		sb_printf(why, "the header describes the region 0x%llx (%llu bytes, header at +0x%llx), "
			       "the variable 0x%llx (%llu bytes, +0x%llx)",
			  (unsigned long long)h->region_phys, (unsigned long long)h->region_size,
			  (unsigned long long)h->header_off, (unsigned long long)var->region_phys,
			  (unsigned long long)var->region_size, (unsigned long long)var->header_off);
		return PTREC_MOVED;
	}
	if (check_fields(h, why) || check_sections(h, why))
		return PTREC_BAD_LAYOUT;
	imgrec_clean_text(h->run_id, sizeof(h->run_id));
	imgrec_clean_text(h->armed_at, sizeof(h->armed_at));
	imgrec_clean_text(h->fw_vendor, sizeof(h->fw_vendor));
	imgrec_clean_text(h->traced_path, sizeof(h->traced_path));
	imgrec_clean_text(h->placement, sizeof(h->placement));
	imgrec_clean_text(h->exit_note, sizeof(h->exit_note));
	return PTREC_OK;
}

int ptrec_open(struct ptrec *r, const struct ptrec_var *var, const struct ptrec_reader *reader,
	       struct strbuf *why)
{
	efipt_memset(r->sec_ok, 0, sizeof(r->sec_ok));
	r->nsnap[0] = r->nsnap[1] = 0;
	r->rd = *reader;
	r->size = var->region_size;
	r->ntab = r->nreg = 0;
	struct ptrec_header *h = &r->h;
	int st = ptrec_peek(var, reader, h, why);
	if (st)
		return st;
	st = load_layout(r, why);
	if (st)
		return st;
	uint32_t crc;
	for (uint32_t i = 0; i < h->nsect; i++) {
		const struct ptrec_section *s = &h->sect[i];
		if (s->kind == PTREC_SEC_LAYOUT) {
			r->sec_ok[i] = true;
			continue;
		}
		if (crc_of(r, s->off, s->used, &crc))
			return PTREC_UNREADABLE;
		if (crc != s->crc) {
			sb_printf(why, "; the %s section is damaged (CRC-32 0x%08x, recorded 0x%08x): "
				       "not used",
				  section_name(s->kind), crc, s->crc);
			continue;
		}
		if (s->kind == PTREC_SEC_CODE_ARM || s->kind == PTREC_SEC_CODE_EXIT)
			r->sec_ok[i] = !load_code(r, s, s->kind == PTREC_SEC_CODE_EXIT, why);
		else if (s->kind == PTREC_SEC_IMAGES_ARM || s->kind == PTREC_SEC_IMAGES_EXIT)
			r->sec_ok[i] = !check_images(r, s, why);
		else
			r->sec_ok[i] = true;
	}
	return PTREC_OK;
}
