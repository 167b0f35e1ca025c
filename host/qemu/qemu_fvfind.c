/* Firmware-volume modules found in code snapshots; see qemu_fvfind.h. */
#include "host/qemu/qemu_fvfind.h"

#include <stdlib.h>
#include <string.h>

#include "host/util/pe_map.h"

#define PAGE 4096u
#define ANCHOR 16u	/* executed bytes a snapshot page is searched by */
#define ANCHORS 4u	/* per page at most */

/* The snapshot holding addr, or NULL. */
static const struct rundir_snapshot *snap_at(const struct rundir_snapshot *snap, unsigned n,
					     uint64_t addr)
{
	for (unsigned i = 0; i < n; i++)
		if (addr - snap[i].phys < snap[i].size)
			return &snap[i];
	return NULL;
}

/*
 * Module m laid out at base against the snapshots: how many of its code
 * bytes the snapshots hold (QEMU's record of executed bytes: the others
 * are 0 there, so a 0 is not compared), or 0 when too few are there or
 * more than one in FVFIND_MAX_DIFF of them differ. A few may: code the
 * firmware patches as it runs (EDK2's PatchInstructionX86 sets immediates
 * of MpInitLib's AP startup code).
 */
static uint64_t match_at(const struct fv_module *m, uint64_t base,
			 const struct rundir_snapshot *snap, unsigned nsnap)
{
	struct pe_mapped pm;
	char err[200];
	if (pe_map(m->pe, m->pe_len, base, true, &pm, err, sizeof(err)))
		return 0;
	uint64_t same = 0, differ = 0;
	for (unsigned r = 0; r < m->code.n; r++) {
		uint64_t rva = m->code.r[r].rva, end = rva + m->code.r[r].size;
		if (end > pm.size_of_image)
			end = pm.size_of_image;
		while (rva < end) {
			uint64_t a = base + rva;
			const struct rundir_snapshot *s = snap_at(snap, nsnap, a);
			if (!s) {
				rva++;
				continue;
			}
			uint64_t off = a - s->phys, n = end - rva;
			if (n > s->size - off)
				n = s->size - off;
			for (uint64_t i = 0; i < n; i++) {
				uint8_t b = s->bytes[off + i];
				if (b)
					b == pm.img[rva + i] ? same++ : differ++;
			}
			rva += n;
		}
	}
	free(pm.img);
	return same < FVFIND_MIN_MATCH || differ * FVFIND_MAX_DIFF > same ? 0 : same;
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
		if (run == ANCHOR && i + 1 >= ANCHOR) {
			at[n++] = (uint32_t)(i + 1 - ANCHOR);
			run = 0;
		}
	}
	return n;
}

/* (module, base) tried already? */
struct tried {
	unsigned module;
	uint64_t base;
};

int fvfind_loaded(const struct fv_modules *ms, const struct rundir_snapshot *snap, unsigned nsnap,
		  struct fv_found *out, unsigned max)
{
	/* each module laid out at its own ImageBase: anchors are compared
	 * there, where few relocations touch code (x64 code is RIP-relative) */
	struct pe_mapped *img = calloc(ms->n ? ms->n : 1, sizeof(*img));
	size_t tcap = 1024, nt = 0;
	struct tried *t = malloc(tcap * sizeof(*t));
	if (!img || !t) {
		free(img);
		free(t);
		return -1;
	}
	for (unsigned i = 0; i < ms->n; i++) {
		char err[200];
		if (ms->m[i].pe && ms->m[i].code.n &&
		    pe_map(ms->m[i].pe, ms->m[i].pe_len, 0, false, &img[i], err, sizeof(err)))
			img[i].img = NULL;
	}
	int n = 0;
	for (unsigned si = 0; si < nsnap && n >= 0; si++) {
		const struct rundir_snapshot *s = &snap[si];
		for (uint64_t off = 0; off < s->size && n >= 0; off += PAGE) {
			uint32_t at[ANCHORS];
			unsigned na = anchors(s, off, at);
			uint64_t pg = s->phys + off;
			for (unsigned ai = 0; ai < na && n >= 0; ai++) {
				const uint8_t *want = s->bytes + off + at[ai];
				for (unsigned k = 0; k < ms->n && n >= 0; k++) {
					const struct fv_module *m = &ms->m[k];
					if (!img[k].img)
						continue;
					/* the module's code bytes at this page offset */
					for (unsigned r = 0; r < m->code.n; r++) {
						uint64_t lo = m->code.r[r].rva, hi = lo + m->code.r[r].size;
						if (hi > img[k].size_of_image)
							hi = img[k].size_of_image;
						uint64_t rva = (lo & ~(uint64_t)(PAGE - 1)) + at[ai];
						for (; rva + ANCHOR <= hi; rva += PAGE) {
							if (rva < lo || memcmp(img[k].img + rva, want, ANCHOR))
								continue;
							uint64_t base = pg + at[ai] - rva;
							if (fv_module_xip(m) && base == m->image_base)
								continue; /* in place: listed so */
							size_t j = 0;
							while (j < nt && !(t[j].module == k && t[j].base == base))
								j++;
							if (j < nt)
								continue;
							if (nt == tcap) {
								struct tried *g = realloc(t, 2 * tcap * sizeof(*t));
								if (!g) {
									n = -1;
									break;
								}
								t = g;
								tcap *= 2;
							}
							t[nt++] = (struct tried){ k, base };
							uint64_t got = match_at(m, base, snap, nsnap);
							if (!got)
								continue;
							int f = 0;
							while (f < n && out[f].base != base)
								f++;
							if (f < n) { /* two at one base: the better match */
								if (got > out[f].matched)
									out[f] = (struct fv_found){ k, base, got };
							} else if ((unsigned)n < max) {
								out[n++] = (struct fv_found){ k, base, got };
							}
						}
					}
				}
			}
		}
	}
	for (unsigned i = 0; i < ms->n; i++)
		free(img[i].img);
	free(img);
	free(t);
	if (n > 0)
		qsort(out, (size_t)n, sizeof(*out), by_base);
	return n;
}
