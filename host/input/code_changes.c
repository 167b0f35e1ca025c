/* Code changes applied at their trace positions; see code_changes.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/input/code_changes.h"
#include "host/util/file_io.h"
#include "host/util/grow.h"

#define PAGE 4096u
#define MAX_FILE (64u << 20)	/* 1.6 million changes */

struct codechanges_page {
	uint64_t pn;
	uint8_t set[PAGE / 8];	/* which bytes a change laid over */
	uint8_t bytes[PAGE];
};

/* qsort_r: record indices by CPU, then position, then index (stable) */
static int by_cpu_pos(const void *a, const void *b, void *ctx)
{
	const struct codechg *r = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (r[i].cpu != r[j].cpu)
		return r[i].cpu < r[j].cpu ? -1 : 1;
	if (r[i].pos != r[j].pos)
		return r[i].pos < r[j].pos ? -1 : 1;
	return i < j ? -1 : i > j;
}

int codechanges_load(const char *dir, long long expect, struct codechg **r, size_t *n, char *err,
		     size_t errlen)
{
	*r = NULL;
	*n = 0;
	char path[4200];
	snprintf(path, sizeof(path), "%s/codechanges.bin", dir);
	struct stat st;
	if (lstat(path, &st)) {
		if (expect > 0) {
			snprintf(err, errlen, "%s: missing; manifest.json says %lld code changes",
				 path, expect);
			return -1;
		}
		return 0;
	}
	struct input_map m;
	if (input_map(&m, path, MAX_FILE, err, errlen))
		return -1;
	const char *why = NULL;
	uint64_t at = 0;
	long cnt = codechg_check(m.data, m.size, &why, &at);
	int rc = 0;
	if (cnt < 0) {
		snprintf(err, errlen, "%s: offset %llu: %s", path, (unsigned long long)at, why);
		rc = -1;
	} else if (expect >= 0 && cnt != expect) {
		snprintf(err, errlen, "%s: %ld code changes, manifest.json says %lld", path, cnt,
			 expect);
		rc = -1;
	} else if (cnt && !(*r = calloc((size_t)cnt, sizeof(**r)))) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (long i = 0; !rc && i < cnt; i++) {
		if (codechg_get(m.data, m.size, (size_t)i, &(*r)[i], &why)) {
			snprintf(err, errlen, "%s: offset %llu (record %ld): %s", path,
				 (unsigned long long)(CODECHG_HEADER + (uint64_t)i * CODECHG_RECORD), i,
				 why);
			rc = -1;
		}
	}
	input_unmap(&m);
	struct codechg *sorted = NULL;
	size_t *idx = NULL;
	if (!rc && cnt > 1) {
		idx = malloc((size_t)cnt * sizeof(*idx));
		sorted = malloc((size_t)cnt * sizeof(*sorted));
		if (!idx || !sorted) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
	}
	if (rc) {
		free(idx);
		free(sorted);
		free(*r);
		*r = NULL;
		return -1;
	}
	if (cnt > 1) {
		for (long i = 0; i < cnt; i++)
			idx[i] = (size_t)i;
		qsort_r(idx, (size_t)cnt, sizeof(*idx), by_cpu_pos, *r);
		for (long i = 0; i < cnt; i++)
			sorted[i] = (*r)[idx[i]];
		free(*r);
		free(idx);
		*r = sorted;
	}
	*n = (size_t)cnt;
	return 0;
}

/* The overlay page pn (made if make), kept sorted by pn. */
static struct codechanges_page *page(struct codechanges *c, uint64_t pn, int make)
{
	size_t lo = 0, hi = c->npg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->pg[mid]->pn < pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->npg && c->pg[lo]->pn == pn)
		return c->pg[lo];
	if (!make)
		return NULL;
	struct codechanges_page *p = calloc(1, sizeof(*p));
	if (!p || !grow_array((void **)&c->pg, &c->cap, c->npg, sizeof(*c->pg), 16)) {
		free(p);
		return NULL;
	}
	memmove(c->pg + lo + 1, c->pg + lo, (c->npg - lo) * sizeof(*c->pg));
	c->pg[lo] = p;
	c->npg++;
	p->pn = pn;
	return p;
}

/* The overlay's bytes from a on, as far as they go without a gap (up to n). */
static size_t overlay_run(struct codechanges *c, uint64_t a, uint8_t *buf, size_t n)
{
	size_t k = 0;
	while (k < n) {
		struct codechanges_page *p = page(c, (a + k) / PAGE, 0);
		unsigned o = (unsigned)((a + k) % PAGE);
		if (!p || !(p->set[o / 8] & (1u << (o % 8))) || a + k < a)
			break;
		buf[k++] = p->bytes[o];
	}
	return k;
}

/* ptimg_read_fn: the code, with the changes applied so far laid over it;
 * where the snapshots have none (an image loaded while traced,
 * efi/load_watch.h), the changes' bytes alone, as far as they go. */
static int read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct codechanges *c = ctx;
	int got = c->base.read(c->base.ctx, ip, buf, n);
	if (!c->npg)
		return got;
	if (got <= 0)
		return (int)overlay_run(c, ip, buf, n);
	if ((size_t)got < n)
		got += (int)overlay_run(c, ip + (uint64_t)got, buf + got, n - (size_t)got);
	for (uint64_t a = ip; a - ip < (uint64_t)got;) {
		struct codechanges_page *p = page(c, a / PAGE, 0);
		uint64_t stop = (a / PAGE + 1) * PAGE;
		if (stop - ip > (uint64_t)got || stop < a)
			stop = ip + (uint64_t)got;
		for (; p && a < stop; a++) {
			unsigned o = (unsigned)(a % PAGE);
			if (p->set[o / 8] & (1u << (o % 8)))
				buf[a - ip] = p->bytes[o];
		}
		a = stop;
	}
	return got;
}

/* ptflow_on_position's: every change due at off, then the next position. */
static uint64_t apply(void *ctx, uint64_t off)
{
	struct codechanges *c = ctx;
	for (; c->next < c->end && c->r[c->next].pos <= off; c->next++) {
		const struct codechg *g = &c->r[c->next];
		for (unsigned i = 0; i < g->len; i++) {
			uint64_t a = g->addr + i;
			struct codechanges_page *p = page(c, a / PAGE, 1);
			if (!p) {
				c->failed = 1;
				continue;
			}
			unsigned o = (unsigned)(a % PAGE);
			p->set[o / 8] |= (uint8_t)(1u << (o % 8));
			p->bytes[o] = g->bytes[i];
		}
		c->applied++;
	}
	return c->next < c->end ? c->r[c->next].pos : UINT64_MAX;
}

void codechanges_start(struct codechanges *c, const struct codechg *r, size_t n, unsigned cpu,
		       struct ptimg base)
{
	memset(c, 0, sizeof(*c));
	c->r = r;
	c->n = n;
	c->base = base;
	while (c->next < n && r[c->next].cpu < cpu)
		c->next++;
	c->end = c->next;
	while (c->end < n && r[c->end].cpu == cpu)
		c->end++;
}

struct ptimg codechanges_image(struct codechanges *c)
{
	if (c->next == c->end)
		return c->base;
	return (struct ptimg){ read_code, c };
}

size_t codechanges_attach(struct codechanges *c, struct ptflow_decoder *d)
{
	if (c->next < c->end)
		ptflow_on_position(d, c->r[c->next].pos, apply, c);
	return c->end - c->next;
}

void codechanges_free(struct codechanges *c)
{
	for (size_t i = 0; i < c->npg; i++)
		free(c->pg[i]);
	free(c->pg);
	c->pg = NULL;
	c->npg = c->cap = 0;
}
