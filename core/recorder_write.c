/*
 * Writing a recorder region (efipt.efi when it arms one and at
 * ExitBootServices; the host tests that build regions): sections, the
 * layout, image records and code snapshots, in the format recorder.h
 * describes. The caller maps the region at mem (its first byte).
 */
#include "core/crc32.h"
#include "core/mem.h"
#include "core/recorder_write.h"

#define PAGE 4096ull

static uint64_t round_page(uint64_t v)
{
	return (v + PAGE - 1) & ~(PAGE - 1);
}

uint64_t ptrec_layout_bytes(uint32_t ntab, uint32_t nreg)
{
	return sizeof(struct ptrec_layout_hdr) + 8ull * ntab + sizeof(struct ptrec_region) * nreg;
}

uint64_t ptrec_images_bytes(uint32_t n)
{
	return 8 + (uint64_t)sizeof(struct imgrec) * n;
}

uint64_t ptrec_code_dir_bytes(uint32_t n)
{
	return round_page(8 + (uint64_t)sizeof(struct ptrec_snap) * n);
}

int ptrec_add_section(struct ptrec_header *h, uint32_t kind, uint64_t off, uint64_t cap)
{
	if (h->nsect >= PTREC_MAX_SECTIONS || (off & (PAGE - 1)) || !cap)
		return -1;
	struct ptrec_section *s = &h->sect[h->nsect++];
	efipt_memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->off = off;
	s->cap = round_page(cap);
	return 0;
}

void ptrec_section_done(struct ptrec_header *h, uint32_t kind, const uint8_t *mem, uint64_t used)
{
	struct ptrec_section *s = ptrec_section_get(h, kind);
	if (!s)
		return;
	s->used = used < s->cap ? used : s->cap;
	s->crc = crc32_update(0, mem + s->off, (size_t)s->used);
}

uint64_t ptrec_layout_write(uint8_t *dst, const uint64_t *tab, uint32_t ntab,
			    const struct ptrec_region *reg, uint32_t nreg)
{
	struct ptrec_layout_hdr lh = { ntab, nreg };
	efipt_memcpy(dst, &lh, sizeof(lh));
	efipt_memcpy(dst + sizeof(lh), tab, 8ull * ntab);
	efipt_memcpy(dst + sizeof(lh) + 8ull * ntab, reg, sizeof(*reg) * nreg);
	return ptrec_layout_bytes(ntab, nreg);
}

void ptrec_images_begin(struct ptrec_images_writer *w, uint8_t *dst, uint64_t cap)
{
	w->dst = dst;
	w->cap = cap;
	w->n = 0;
	w->dropped = 0;
	uint32_t hdr[2] = { 0, 0 };
	if (cap >= 8)
		efipt_memcpy(dst, hdr, 8);
}

int ptrec_images_add(struct ptrec_images_writer *w, const struct imgrec *rec)
{
	if (w->n >= PTREC_MAX_IMAGES || ptrec_images_bytes(w->n + 1) > w->cap) {
		w->dropped++;
		return -1;
	}
	efipt_memcpy(w->dst + ptrec_images_bytes(w->n), rec, sizeof(*rec));
	w->n++;
	efipt_memcpy(w->dst, &w->n, 4);
	return 0;
}

uint64_t ptrec_images_used(const struct ptrec_images_writer *w)
{
	return ptrec_images_bytes(w->n);
}

void ptrec_code_begin(struct ptrec_code_writer *w, uint8_t *dst, uint64_t cap, uint32_t max)
{
	if (max > PTREC_MAX_SNAPSHOTS)
		max = PTREC_MAX_SNAPSHOTS;
	w->dst = dst;
	w->cap = cap;
	w->max = max;
	w->n = 0;
	w->next = ptrec_code_dir_bytes(max);
	w->dropped = 0;
	w->dropped_bytes = 0;
	uint32_t hdr[2] = { 0, 0 };
	if (cap >= 8)
		efipt_memcpy(dst, hdr, 8);
}

int ptrec_code_add(struct ptrec_code_writer *w, uint64_t phys, uint64_t size, uint32_t code_type,
		   uint32_t image, const void *src)
{
	uint64_t lo = phys & ~(PAGE - 1);
	uint64_t hi = round_page(phys + size);
	if (!size || hi <= lo)
		return -1;
	struct ptrec_snap s = { lo, hi - lo, w->next, code_type, image };
	if (w->n >= w->max || s.size > w->cap || w->next > w->cap - s.size) {
		w->dropped++;
		w->dropped_bytes += s.size;
		return -1;
	}
	/* snapshots of one section never overlap (ptrec_open refuses those) */
	for (uint32_t i = 0; i < w->n; i++) {
		struct ptrec_snap o;
		efipt_memcpy(&o, w->dst + 8 + sizeof(o) * i, sizeof(o));
		if (s.phys < o.phys + o.size && o.phys < s.phys + s.size)
			return -1;
	}
	efipt_memcpy(w->dst + s.off, src, (size_t)s.size);
	efipt_memcpy(w->dst + 8 + sizeof(s) * w->n, &s, sizeof(s));
	w->n++;
	w->next += s.size;
	efipt_memcpy(w->dst, &w->n, 4);
	return 0;
}

uint64_t ptrec_code_used(const struct ptrec_code_writer *w)
{
	return w->n ? w->next : 8;
}

void ptrec_plan(struct ptrec_plan *p)
{
	uint64_t at = round_page(p->trace_area);
	p->header_off = at;
	at += PTREC_HEADER_BYTES;
	uint64_t want[PTREC_SEC_CMDLINE + 1] = { 0 };
	want[PTREC_SEC_LAYOUT] = ptrec_layout_bytes(p->ntab, p->nreg);
	want[PTREC_SEC_IMAGES_ARM] = ptrec_images_bytes(p->arm_images);
	want[PTREC_SEC_CODE_ARM] = ptrec_code_dir_bytes(p->arm_images) + p->arm_code;
	want[PTREC_SEC_IMAGES_EXIT] = ptrec_images_bytes(p->exit_images);
	want[PTREC_SEC_CODE_EXIT] = ptrec_code_dir_bytes(p->exit_images) + p->exit_code;
	want[PTREC_SEC_CMDLINE] = p->cmdline_len + 1;
	for (uint32_t k = PTREC_SEC_LAYOUT; k <= PTREC_SEC_CMDLINE; k++) {
		p->off[k] = at;
		p->cap[k] = round_page(want[k]);
		at += p->cap[k];
	}
	p->total = at;
}

void ptrec_plan_sections(const struct ptrec_plan *p, struct ptrec_header *h)
{
	h->nsect = 0;
	for (uint32_t k = PTREC_SEC_LAYOUT; k <= PTREC_SEC_CMDLINE; k++)
		ptrec_add_section(h, k, p->off[k], p->cap[k]);
}
