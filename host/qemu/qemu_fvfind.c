/* Firmware-volume modules found in code snapshots; see qemu_fvfind.h. */
#include "host/qemu/qemu_fvfind.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host/util/pe_map.h"

#define PAGE 4096u
#define ANCHOR 16u	/* executed bytes a snapshot page is searched by */
#define ANCHORS 4u	/* per page at most */
/* a firmware module is far smaller: a bigger SizeOfImage is not laid out
 * (each candidate base would allocate it) */
#define FVFIND_MAX_IMAGE (64u << 20)

/* The snapshot holding addr, or NULL. */
static const struct rundir_snapshot *snap_at(const struct rundir_snapshot *snap, unsigned n,
					     uint64_t addr)
{
	for (unsigned i = 0; i < n; i++)
		if (addr - snap[i].phys < snap[i].size)
			return &snap[i];
	return NULL;
}

/* One page of a module's code against the snapshots: bytes equal, and
 * whether the page agrees (all but one in FVFIND_MAX_DIFF equal). */
static void page_add(uint64_t same, uint64_t differ, uint64_t *agree, uint64_t *disagree)
{
	if (differ * FVFIND_MAX_DIFF <= same)
		*agree += same;
	else
		*disagree += same + differ;
}

/*
 * Module m laid out at base against the snapshots, page by page: the
 * executed bytes (QEMU's record: the others are 0 there, so a 0 is not
 * compared) of the pages that agree, or 0 when they are too few, or not
 * FVFIND_AGREE times the bytes of the pages that do not. A page may
 * differ in a few bytes (code the firmware patches as it runs: EDK2's
 * PatchInstructionX86 sets immediates of MpInitLib's AP startup code) or
 * whole: another module ran there first and left (a driver that unloads
 * itself when not needed, its pages then the next driver's), and the
 * snapshot keeps the code first executed there.
 */
static uint64_t match_at(const struct fv_module *m, uint64_t base,
			 const struct rundir_snapshot *snap, unsigned nsnap)
{
	struct pe_mapped pm;
	char err[200];
	if (pe_map_any(m->pe, m->pe_len, base, true, &pm, err, sizeof(err)))
		return 0;
	uint64_t agree = 0, disagree = 0;
	for (unsigned r = 0; r < m->code.n; r++) {
		uint64_t rva = m->code.r[r].rva, end = rva + m->code.r[r].size;
		if (end > pm.size_of_image)
			end = pm.size_of_image;
		while (rva < end) {
			uint64_t a = base + rva;
			/* to the end of this page of the module */
			uint64_t n = PAGE - (rva & (PAGE - 1));
			if (n > end - rva)
				n = end - rva;
			/* snapshots hold whole pages: none has this one, or it
			 * holds all of it */
			const struct rundir_snapshot *s = snap_at(snap, nsnap, a);
			if (s) {
				uint64_t off = a - s->phys, same = 0, differ = 0;
				if (n > s->size - off)
					n = s->size - off;
				for (uint64_t i = 0; i < n; i++) {
					uint8_t b = s->bytes[off + i];
					if (b)
						b == pm.img[rva + i] ? same++ : differ++;
				}
				page_add(same, differ, &agree, &disagree);
			}
			rva += n;
		}
	}
	free(pm.img);
	return agree < FVFIND_MIN_MATCH || agree < FVFIND_AGREE * disagree ? 0 : agree;
}

static int by_base(const void *a, const void *b)
{
	const struct fv_found *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Up to ANCHORS page offsets in s's page at off where ANCHOR executed
 * bytes (none 0) follow, apart from each other. */
static unsigned anchors(const struct rundir_snapshot *s, uint64_t off, uint32_t *at)
{
	uint64_t end = s->size - off < PAGE ? s->size - off : PAGE;
	unsigned n = 0, run = 0;
	for (uint64_t i = 0; i < end && n < ANCHORS; i++) {
		run = s->bytes[off + i] ? run + 1 : 0;
		if (run == ANCHOR) {
			at[n++] = (uint32_t)(i + 1 - ANCHOR);
			run = 0;
		}
	}
	return n;
}

/* An anchor: ANCHOR executed bytes at addr (bytes: in its snapshot). */
struct anchor {
	uint64_t addr;
	const uint8_t *bytes;
};

/* Anchors by page offset and first 8 bytes, so that each module's code is
 * read once, not once per page (open addressing, a power of two). */
struct anchors {
	struct anchor *slot;	/* bytes NULL: empty */
	size_t mask;
};

static uint64_t key_of(const uint8_t *b, uint64_t page_off)
{
	uint64_t k;
	memcpy(&k, b, 8);
	return (k ^ page_off * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
}

static int anchors_build(struct anchors *t, const struct rundir_snapshot *snap, unsigned nsnap)
{
	size_t n = 0;
	for (unsigned i = 0; i < nsnap; i++)
		n += (snap[i].size / PAGE + 1) * ANCHORS;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	t->slot = calloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	if (!t->slot)
		return -1;
	for (unsigned i = 0; i < nsnap; i++) {
		const struct rundir_snapshot *s = &snap[i];
		for (uint64_t off = 0; off < s->size; off += PAGE) {
			uint32_t at[ANCHORS];
			unsigned na = anchors(s, off, at);
			for (unsigned a = 0; a < na; a++) {
				uint64_t addr = s->phys + off + at[a];
				const uint8_t *b = s->bytes + off + at[a];
				size_t h = key_of(b, addr & (PAGE - 1)) & t->mask;
				while (t->slot[h].bytes)
					h = (h + 1) & t->mask;
				t->slot[h] = (struct anchor){ addr, b };
			}
		}
	}
	return 0;
}

/* (module, base) pairs tried already: a set by open addressing (a power
 * of two, at most half full), as a module's code may put it at one base
 * from many anchors and a list searched each time grows quadratically. */
struct tried {
	uint64_t base;
	unsigned module;
	bool used;
};

struct search {
	const struct fv_modules *ms;
	const struct rundir_snapshot *snap;
	unsigned nsnap;
	struct tried *t;
	size_t nt, tmask;
	struct fv_found *out;
	unsigned n, max;
};

/* The slot of (k, base): where it is, or the empty one it goes in. */
static size_t tried_slot(const struct tried *t, size_t mask, unsigned k, uint64_t base)
{
	uint64_t key = (base ^ (uint64_t)k * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	size_t h = key >> 17 & mask;
	while (t[h].used && !(t[h].module == k && t[h].base == base))
		h = (h + 1) & mask;
	return h;
}

/* Twice the slots, every pair placed again. */
static int tried_grow(struct search *x)
{
	size_t mask = 2 * x->tmask + 1;
	struct tried *g = calloc(mask + 1, sizeof(*g));
	if (!g)
		return -1;
	for (size_t i = 0; i <= x->tmask; i++)
		if (x->t[i].used)
			g[tried_slot(g, mask, x->t[i].module, x->t[i].base)] = x->t[i];
	free(x->t);
	x->t = g;
	x->tmask = mask;
	return 0;
}

/* Module k may be loaded at base: tried once; found when its code matches. */
static int try_base(struct search *x, unsigned k, uint64_t base)
{
	size_t h = tried_slot(x->t, x->tmask, k, base);
	if (x->t[h].used)
		return 0;
	x->t[h] = (struct tried){ base, k, true };
	if (++x->nt * 2 > x->tmask && tried_grow(x))
		return -1;
	uint64_t got = match_at(&x->ms->m[k], base, x->snap, x->nsnap);
	if (!got)
		return 0;
	unsigned f = 0;
	while (f < x->n && x->out[f].base != base)
		f++;
	if (f < x->n) { /* two at one base: the better match */
		if (got > x->out[f].matched)
			x->out[f] = (struct fv_found){ k, base, got };
	} else if (x->n < x->max) {
		x->out[x->n++] = (struct fv_found){ k, base, got };
	}
	return 0;
}

int fvfind_loaded(const struct fv_modules *ms, const struct rundir_snapshot *snap, unsigned nsnap,
		  struct fv_found *out, unsigned max)
{
	struct anchors t;
	struct search x = { ms, snap, nsnap, calloc(64, sizeof(struct tried)), 0, 63, out, 0, max };
	if (!x.t || anchors_build(&t, snap, nsnap)) {
		free(x.t);
		return -1;
	}
	int rc = 0;
	/* each module's code laid out at its own ImageBase, every byte of it
	 * looked up: where few relocations touch code (x64 code is
	 * RIP-relative), the bytes are the loaded module's */
	for (unsigned k = 0; k < ms->n && !rc; k++) {
		const struct fv_module *m = &ms->m[k];
		struct pe_mapped pm;
		char err[200];
		if (!m->pe || !m->code.n || m->image_size > FVFIND_MAX_IMAGE ||
		    pe_map_any(m->pe, m->pe_len, 0, false, &pm, err, sizeof(err)))
			continue;
		for (unsigned r = 0; r < m->code.n && !rc; r++) {
			uint64_t lo = m->code.r[r].rva, hi = lo + m->code.r[r].size;
			if (hi > pm.size_of_image)
				hi = pm.size_of_image;
			for (uint64_t rva = lo; rva + ANCHOR <= hi && !rc; rva++) {
				const uint8_t *b = pm.img + rva;
				/* the loader puts the image's first byte (PE
				 * headers, a TE header) at a page's start */
				uint64_t po = (rva - pm.hdr_rva) & (PAGE - 1);
				for (size_t h = key_of(b, po) & t.mask; t.slot[h].bytes;
				     h = (h + 1) & t.mask) {
					const struct anchor *a = &t.slot[h];
					if ((a->addr & (PAGE - 1)) != po ||
					    memcmp(a->bytes, b, ANCHOR))
						continue;
					uint64_t base = a->addr - rva;
					/* in place: listed so */
					if (!(fv_module_xip(m) && base == m->image_base) &&
					    try_base(&x, k, base)) {
						rc = -1;
						break;
					}
				}
			}
		}
		free(pm.img);
	}
	free(t.slot);
	free(x.t);
	if (rc)
		return -1;
	qsort(out, x.n, sizeof(*out), by_base);
	return (int)x.n;
}
