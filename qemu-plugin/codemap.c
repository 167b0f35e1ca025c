/* Code snapshots of the traced instructions; see codemap.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin/codemap.h"
#include "qemu-plugin/outfile.h"

#define PAGE 4096u
#define GAP_PAGES 16	/* pages this close share a file (fewer snapshots) */

struct codemap_page {
	uint64_t pn;			/* address >> 12 */
	uint8_t seen[PAGE / 8];
	uint8_t bytes[PAGE];		/* the first seen: the snapshot */
	uint8_t *cur;			/* the last seen, once they differ */
};

void codemap_init(struct codemap *m)
{
	memset(m, 0, sizeof(*m));
}

static size_t hash(uint64_t pn, size_t cap)
{
	return (size_t)((pn * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static bool grow(struct codemap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct codemap_page **s = calloc(cap, sizeof(*s));
	if (!s)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i])
			continue;
		size_t j = hash(m->slots[i]->pn, cap);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return true;
}

static struct codemap_page *page(struct codemap *m, uint64_t pn)
{
	if (m->cap) {
		for (size_t j = hash(pn, m->cap); m->slots[j]; j = (j + 1) & (m->cap - 1))
			if (m->slots[j]->pn == pn)
				return m->slots[j];
	}
	if ((m->used + 1) * 2 > m->cap && !grow(m))
		return NULL;
	struct codemap_page *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pn = pn;
	size_t j = hash(pn, m->cap);
	while (m->slots[j])
		j = (j + 1) & (m->cap - 1);
	m->slots[j] = p;
	m->used++;
	return p;
}

bool codemap_add(struct codemap *m, uint64_t addr, const uint8_t *bytes, unsigned len)
{
	struct codemap_page *p = NULL;
	bool changed = false;
	for (unsigned i = 0; i < len; i++) {
		uint64_t a = addr + i;
		if (!p || p->pn != a / PAGE)
			p = page(m, a / PAGE);
		if (!p) {
			m->failed = 1;
			return changed;
		}
		unsigned o = (unsigned)(a % PAGE);
		uint8_t bit = (uint8_t)(1u << (o % 8));
		if (!(p->seen[o / 8] & bit)) {
			p->seen[o / 8] |= bit;
			p->bytes[o] = bytes[i];
			if (p->cur)
				p->cur[o] = bytes[i];
			continue;
		}
		uint8_t *now = p->cur ? p->cur : p->bytes;
		if (now[o] == bytes[i])
			continue;
		if (!p->cur) {
			/* the first change in this page: the current bytes
			 * apart from the snapshot's from here on */
			p->cur = malloc(PAGE);
			if (!p->cur) {
				m->failed = 1;
				return changed;
			}
			memcpy(p->cur, p->bytes, PAGE);
		}
		p->cur[o] = bytes[i];
		if (!m->conflicts++)
			m->first_conflict = a;
		changed = true;
	}
	if (changed)
		m->changes++;
	return changed;
}

static int cmp_page(const void *a, const void *b)
{
	uint64_t x = (*(struct codemap_page *const *)a)->pn;
	uint64_t y = (*(struct codemap_page *const *)b)->pn;
	return x < y ? -1 : x > y;
}

/* One snapshot file: pages pg[0..n) (sorted, holes written as zeros). */
static int write_region(struct codemap_page **pg, size_t n, const char *dir, char *name,
			size_t namelen, uint64_t *size, char *err, size_t errlen)
{
	uint64_t first = pg[0]->pn, last = pg[n - 1]->pn;
	snprintf(name, namelen, "mem-%016" PRIx64 ".bin", first * PAGE);
	struct outfile o;
	if (outfile_open(&o, dir, name, err, errlen))
		return -1;
	static const uint8_t zero[PAGE];
	size_t k = 0;
	for (uint64_t pn = first; pn <= last; pn++) {
		const uint8_t *b = zero;
		if (pg[k]->pn == pn)
			b = pg[k++]->bytes;
		outfile_write(&o, b, PAGE);
	}
	*size = (last - first + 1) * PAGE;
	return outfile_commit(&o, err, errlen);
}

int codemap_write(struct codemap *m, const char *dir, const char *type,
		  void (*file_cb)(void *ctx, const char *name, uint64_t size), void *ctx,
		  char *err, size_t errlen)
{
	struct codemap_page **pg = calloc(m->used ? m->used : 1, sizeof(*pg));
	if (!pg) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i])
			pg[n++] = m->slots[i];
	qsort(pg, n, sizeof(*pg), cmp_page);

	struct outfile mm;
	if (outfile_open(&mm, dir, "memmap.json", err, errlen)) {
		free(pg);
		return -1;
	}
	outfile_printf(&mm, "{\"regions\": [");
	int rc = 0;
	for (size_t i = 0, r = 0; i < n && !rc; r++) {
		size_t j = i + 1;
		while (j < n && pg[j]->pn - pg[j - 1]->pn <= GAP_PAGES)
			j++;
		char name[64];
		uint64_t size;
		rc = write_region(pg + i, j - i, dir, name, sizeof(name), &size, err, errlen);
		if (rc)
			break;
		if (file_cb)
			file_cb(ctx, name, size);
		outfile_printf(&mm,
			       "%s\n  {\"type\": \"%s\", \"phys\": \"0x%" PRIx64 "\", \"pages\": %" PRIu64
			       ", \"attr\": \"0x0\", \"snapshot\": \"%s\"}",
			       r ? "," : "", type, pg[i]->pn * PAGE, size / PAGE, name);
		i = j;
	}
	free(pg);
	if (rc) {
		outfile_abort(&mm);
		return -1;
	}
	outfile_printf(&mm, "\n]}\n");
	uint64_t sz = mm.size;
	if (outfile_commit(&mm, err, errlen))
		return -1;
	if (file_cb)
		file_cb(ctx, "memmap.json", sz);
	return 0;
}

void codemap_free(struct codemap *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i])
			free(m->slots[i]->cur);
		free(m->slots[i]);
	}
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
