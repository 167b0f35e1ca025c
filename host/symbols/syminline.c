/*
 * Inline frames from DWARF: every DW_TAG_inlined_subroutine below a
 * subprogram (through lexical blocks and other inlined subroutines), named
 * by its abstract origin, then flattened into sorted segments, each with the
 * innermost inlined subroutine there, so that an address is one binary
 * search. See symfile.h and docs/symbols.md ("Inline frames").
 */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "host/symbols/symfile.h"

/* A range of one inlined subroutine, while reading. */
struct inl_range {
	uint64_t lo, hi;
	uint32_t inl;		/* index in sf->inl */
	uint32_t depth;
};

struct inl_read {
	struct symfile *sf;
	struct inl_range *r;
	size_t n, cap;
	const char *comp_dir;	/* the CU's, owned by sf */
	const char *decl_src;	/* libdw's string of the last decl file... */
	const char *decl_own;	/* ... and sf's copy of it */
};

/* Deeper nesting than this is not followed (a malformed file could nest
 * without end; real inline chains are far shallower). */
#define INL_MAX_DEPTH 64

static int add_inline(struct inl_read *rd, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		      uint32_t *id)
{
	struct symfile *sf = rd->sf;
	Dwarf_Attribute a;
	const char *n = dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
	if (sf->ninl == sf->inl_cap) {
		size_t cap = sf->inl_cap ? sf->inl_cap * 2 : 256;
		struct syminline *v = realloc(sf->inl, cap * sizeof(*v));
		if (!v)
			return -1;
		sf->inl = v;
		sf->inl_cap = cap;
	}
	const char *name = symfile_own(sf, n ? n : "[unknown]");
	if (!name)
		return -1;
	/* the declaration (through DW_AT_abstract_origin); libdw's string
	 * stays the same for a CU's file, so one copy serves its copies */
	const char *src = dwarf_decl_file(die);
	if (src && src != rd->decl_src) {
		rd->decl_own = symfile_own(sf, src);
		if (!rd->decl_own)
			return -1;
		rd->decl_src = src;
	}
	int line = 0;
	if (!src || dwarf_decl_line(die, &line) || line < 0)
		line = 0;
	Dwarf_Addr entry = 0;
	bool has_entry = dwarf_entrypc(die, &entry) == 0;
	*id = (uint32_t)sf->ninl;
	sf->inl[sf->ninl++] = (struct syminline){ name, parent, depth, entry,
						  src ? rd->decl_own : NULL, rd->comp_dir, line };
	Dwarf_Addr base, lo, hi, lowest = UINT64_MAX;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (lo < lowest)
			lowest = lo;
		if (rd->n == rd->cap) {
			size_t cap = rd->cap ? rd->cap * 2 : 1024;
			struct inl_range *v = realloc(rd->r, cap * sizeof(*v));
			if (!v)
				return -1;
			rd->r = v;
			rd->cap = cap;
		}
		rd->r[rd->n++] = (struct inl_range){ lo, hi, *id, depth };
	}
	if (!has_entry)
		sf->inl[*id].entry = lowest == UINT64_MAX ? 0 : lowest;
	return 0;
}

/* Inlined subroutines below die; parent: the enclosing one (index + 1). */
static int walk(struct inl_read *rd, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	Dwarf_Die c;
	if (depth >= INL_MAX_DEPTH || dwarf_child(die, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_inlined_subroutine) {
			uint32_t id;
			if (add_inline(rd, &c, parent, depth + 1, &id) ||
			    walk(rd, &c, id + 1, depth + 1))
				return -1;
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			   tag == DW_TAG_catch_block) {
			if (walk(rd, &c, parent, depth))
				return -1;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* Subprograms anywhere below die (namespaces and classes nest them). */
static int walk_cu(struct inl_read *rd, Dwarf_Die *die, int level)
{
	Dwarf_Die c;
	if (level > 16 || dwarf_child(die, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_subprogram) {
			if (walk(rd, &c, 0, 0))
				return -1;
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type) {
			if (walk_cu(rd, &c, level + 1))
				return -1;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* Outer ranges first where they start together. */
static int by_lo_depth(const void *a, const void *b)
{
	const struct inl_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static int add_seg(struct symfile *sf, size_t *cap, uint64_t lo, uint64_t hi, uint32_t inl)
{
	if (hi <= lo)
		return 0;
	if (sf->nsegs && sf->segs[sf->nsegs - 1].hi == lo && sf->segs[sf->nsegs - 1].inl == inl) {
		sf->segs[sf->nsegs - 1].hi = hi;
		return 0;
	}
	if (sf->nsegs == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		struct syminl_seg *v = realloc(sf->segs, c * sizeof(*v));
		if (!v)
			return -1;
		sf->segs = v;
		*cap = c;
	}
	sf->segs[sf->nsegs++] = (struct syminl_seg){ lo, hi, inl };
	return 0;
}

/* Ranges sorted by start nest (DWARF's inline ranges do): a sweep with a
 * stack of the open ones gives the innermost at every address. Ranges that
 * do not nest (a malformed file) still give sorted, disjoint segments. */
static int flatten(struct symfile *sf, struct inl_range *r, size_t n)
{
	struct inl_range st[INL_MAX_DEPTH + 1];
	size_t depth = 0, cap = 0;
	uint64_t at = 0;
	qsort(r, n, sizeof(*r), by_lo_depth);
	for (size_t i = 0; i <= n; i++) {
		/* close what ends before the next range starts */
		while (depth && (i == n || st[depth - 1].hi <= r[i].lo)) {
			const struct inl_range *t = &st[--depth];
			if (at < t->hi && add_seg(sf, &cap, at, t->hi, t->inl))
				return -1;
			if (at < t->hi)
				at = t->hi;
		}
		if (i == n)
			break;
		if (depth && at < r[i].lo && add_seg(sf, &cap, at, r[i].lo, st[depth - 1].inl))
			return -1;
		if (at < r[i].lo)
			at = r[i].lo;
		if (depth == INL_MAX_DEPTH + 1)
			continue;
		st[depth++] = r[i];
	}
	return 0;
}

int symfile_read_inline(struct symfile *sf)
{
	struct inl_read rd = { sf, NULL, 0, 0, NULL, NULL, NULL };
	Dwarf *dw = sf->dwarf;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int rc = 0;
	while (!rc && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			Dwarf_Attribute a;
			const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
			rd.comp_dir = dir ? symfile_own(sf, dir) : NULL;
			rd.decl_src = rd.decl_own = NULL;
			rc = dir && !rd.comp_dir ? -1 : walk_cu(&rd, &cu, 0);
		}
		off = next;
	}
	if (!rc && rd.n)
		rc = flatten(sf, rd.r, rd.n);
	free(rd.r);
	return rc;
}

void symfile_free_inline(struct symfile *sf)
{
	free(sf->inl);
	free(sf->segs);
	sf->inl = NULL;
	sf->segs = NULL;
	sf->ninl = sf->inl_cap = sf->nsegs = 0;
}

const struct syminl_seg *symfile_inline(const struct symfile *sf, uint64_t addr, uint64_t *next)
{
	size_t lo = 0, hi = sf->nsegs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sf->segs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*next = lo < sf->nsegs ? sf->segs[lo].lo : UINT64_MAX;
	if (lo && addr < sf->segs[lo - 1].hi)
		return &sf->segs[lo - 1];
	return NULL;
}
