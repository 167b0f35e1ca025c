/* One side of efipt diff: see diff_run.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cov/cov_blocks.h"
#include "host/diff/diff_run.h"
#include "host/stack/profile_window.h"
#include "host/util/file_io.h"
#include "host/stack/analysis.h"
#include "host/stack/folded.h"
#include "host/stack/profile.h"

int diff_count_cmp(const struct diff_count *x, const struct diff_count *y)
{
	int c = strcmp(x->image, y->image);
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : (int)x->irq - (int)y->irq;
}

static int by_name(const void *a, const void *b)
{
	return diff_count_cmp(a, b);
}

static int by_path(const void *a, const void *b)
{
	const struct diff_stack *x = a, *y = b;
	return strcmp(x->path, y->path);
}

/* Sort and sum entries of one name (two functions of one name in an
 * image: static functions of different files). */
static void fn_merge(struct diff_run *r)
{
	if (!r->nfn)
		return;
	qsort(r->fn, r->nfn, sizeof(*r->fn), by_name);
	size_t w = 0;
	for (size_t i = 1; i < r->nfn; i++) {
		struct diff_count *d = &r->fn[w], *s = &r->fn[i];
		if (!by_name(d, s)) {
			d->excl += s->excl;
			d->incl += s->incl;
			d->calls += s->calls;
			d->excl_ns += s->excl_ns;
			d->incl_ns += s->incl_ns;
			d->hit += s->hit;
			free(s->image);
			free(s->name);
		} else {
			r->fn[++w] = *s;
		}
	}
	r->nfn = w + 1;
}

static void stk_merge(struct diff_run *r)
{
	if (!r->nstk)
		return;
	qsort(r->stk, r->nstk, sizeof(*r->stk), by_path);
	size_t w = 0;
	for (size_t i = 1; i < r->nstk; i++) {
		if (!strcmp(r->stk[w].path, r->stk[i].path)) {
			r->stk[w].insns += r->stk[i].insns;
			free(r->stk[i].path);
		} else {
			r->stk[++w] = r->stk[i];
		}
	}
	r->nstk = w + 1;
}

/* The folded stack of every call tree node with instructions (as efipt
 * flame prints them). Names are made once per function. */
static int stacks(const struct callstack *cs, const struct symtab *st, struct diff_run *r)
{
	char **nm = calloc(st->nfn + 2, sizeof(*nm));
	uint32_t *path = malloc((cs->nnode + 1) * sizeof(*path));
	r->stk = calloc(cs->nnode + 1, sizeof(*r->stk));
	int rc = -1;
	if (!nm || !path || !r->stk)
		goto out;
	for (uint32_t n = 1; n < cs->nnode; n++) {
		if (!cs->node[n].insns)
			continue;
		uint32_t k = 0;
		size_t len = 1;
		for (uint32_t v = n; v && k < cs->nnode; v = cs->node[v].parent) {
			uint32_t fn = cs->node[v].fn;
			if (fn > st->nfn + 1)
				fn = SYMFN_UNKNOWN;
			if (!nm[fn]) {
				char name[1024];
				folded_frame_name(st, fn, name, sizeof(name));
				if (!(nm[fn] = strdup(name)))
					goto out;
			}
			len += strlen(nm[fn]) + 1;
			path[k++] = fn;
		}
		char *s = malloc(len), *p = s;
		if (!s)
			goto out;
		while (k--) {
			size_t l = strlen(nm[path[k]]);
			memcpy(p, nm[path[k]], l);
			p += l;
			if (k)
				*p++ = ';';
		}
		*p = 0;
		r->stk[r->nstk].path = s;
		r->stk[r->nstk++].insns = cs->node[n].insns;
	}
	stk_merge(r);
	rc = 0;
out:
	for (uint32_t i = 0; nm && i < st->nfn + 2; i++)
		free(nm[i]);
	free(nm);
	free(path);
	return rc;
}

/* Each function's distinct instructions executed (hits[fn]), from the
 * coverage bitmaps' instruction starts. */
static void count_hits(const struct cov_blocks *cb, struct symtab *st, uint64_t *hits,
		       uint64_t *total)
{
	for (unsigned k = 0; k < cb->n; k++) {
		const struct ptcov_image *m = &cb->img[k];
		for (uint64_t off = 0; m->bits && off < m->size; off++) {
			if ((off & 7) == 0 && off + 8 <= m->size && !m->bits[off >> 3]) {
				off += 7; /* a byte of the bitmap without starts */
				continue;
			}
			if (!ptcov_insn_at(m, off))
				continue;
			uint64_t hi;
			bool entry;
			uint32_t fn = symtab_lookup(st, m->base + off, &hi, &entry);
			if (fn < st->nfn)
				hits[fn]++;
			(*total)++;
		}
	}
}

int diff_run_decode(struct session *t, struct diff_run *r, const struct diff_want *w)
{
	struct callstack cs;
	struct profile p = { 0 };
	struct cov_blocks cb;
	struct profwin win;
	struct profile_fn *wfn = NULL;
	uint64_t *hits = NULL;
	bool want_stacks = w->stacks, cov = w->cov, windowed = w->from || w->to;
	int rc = -1;
	memset(&win, 0, sizeof(win));
	memset(r, 0, sizeof(*r));
	memset(&cs, 0, sizeof(cs));
	memset(&cb, 0, sizeof(cb));
	if (cov && cov_blocks_init(&cb, t))
		return -1;
	/* the model counts for the profile itself, as for efipt top */
	struct cs_listener ls = profile_listener(&p);
	if (windowed) {
		/* functions only (diff.c refuses an index) */
		struct fnwin_where from = { w->from != NULL, w->from != NULL, 0, w->from };
		struct fnwin_where to = { w->to != NULL, w->to != NULL, 0, w->to };
		ls = profwin_listener(&win, &from, &to, &p, &t->st, &ls);
	}
	if (cs_init(&cs, &t->st, &ls)) {
		fprintf(stderr, "efipt %s: out of memory\n", t->cmd);
		goto out;
	}
	cs.tree = want_stacks;
	struct flow_consumer more = cov ? cov_blocks_consumer(&cb) : (struct flow_consumer){ 0 };
	r->errs = analysis_decode_with(t, 0, &cs, 0, NULL, &more, cov);
	if (r->errs < 0)
		goto out;
	if (p.oom)
		goto oom;
	if (cov) {
		if (!(hits = calloc(t->st.nfn ? t->st.nfn : 1, sizeof(*hits))))
			goto oom;
		count_hits(&cb, &t->st, hits, &r->hit);
		r->cov = true;
	}
	r->insns = cs.insns;
	r->gaps = cs.gaps;
	r->unmatched_rets = cs.unmatched_rets;
	r->timed = cs.timed;
	r->irqs = p.irqs;
	r->irq_insns = p.irq_done;
	r->ns = t->tsc_hz != 0;
	uint64_t span = cs.now - cs.time_first, irq_t = p.irq_t_done;
	const struct profile_fn *pf = p.fn;
	uint32_t pn = p.n;
	if (windowed) {
		struct profwin_at at;
		/* diff's windows are functions: its own words, naming the run */
		int wr = profwin_counts(&win, &cs, &wfn, &pn, &at, NULL, 0);
		if (wr < 0)
			goto oom;
		if (wr) {
			fprintf(stderr, "efipt %s: %s %s never ran%s\n", t->cmd,
				wr == 1 ? "--from" : "--to", term_safe(wr == 1 ? w->from : w->to),
				wr == 1 ? "" : " after --from");
			goto out;
		}
		pf = wfn;
		r->insns = at.insns;
		r->irqs = at.irqs;
		r->irq_insns = at.irq_insns;
		span = at.now;
		irq_t = at.irq_ticks;
	}
	if (r->timed) {
		r->time_ns = session_ns(t, span);
		r->irq_ns = session_ns(t, irq_t);
	}
	r->fn = calloc(t->st.nfn ? 2 * (size_t)t->st.nfn : 1, sizeof(*r->fn));
	if (!r->fn)
		goto oom;
	for (uint32_t fn = 0; fn < t->st.nfn && fn < pn; fn++) {
		const struct profile_fn *e = &pf[fn];
		/* the code's part, then the interrupts' */
		uint64_t c[2][5] = {
			{ e->excl - e->excl_irq, e->incl - e->incl_irq, e->calls - e->calls_irq,
			  e->excl_t - e->excl_t_irq, e->incl_t - e->incl_t_irq },
			{ e->excl_irq, e->incl_in_irq, e->calls_irq, e->excl_t_irq,
			  e->incl_t_in_irq },
		};
		for (int k = 0; k < 2; k++) {
			if (!c[k][0] && !c[k][1])
				continue;
			struct diff_count *d = &r->fn[r->nfn];
			d->image = strdup(symtab_fn_image(&t->st, fn));
			d->name = strdup(t->st.fn[fn].name);
			if (!d->image || !d->name) {
				free(d->image);
				free(d->name);
				goto oom;
			}
			d->excl = c[k][0];
			d->incl = c[k][1];
			d->calls = c[k][2];
			d->excl_ns = session_ns(t, c[k][3]);
			d->incl_ns = session_ns(t, c[k][4]);
			d->irq = k;
			/* coverage is by address: on the code's entry, else
			 * on the interrupt's */
			if (hits && (k == 0 || (!c[0][0] && !c[0][1])))
				d->hit = hits[fn];
			r->nfn++;
		}
	}
	fn_merge(r);
	if (want_stacks && stacks(&cs, &t->st, r))
		goto oom;
	r->nimg = t->images.n;
	for (unsigned i = 0; i < t->images.n; i++) {
		bool sym = t->images.v[i].sf != NULL;
		r->nimg_sym += sym;
		r->nimg_map += sym && t->images.v[i].how == SYMHOW_MAP;
		if (sym)
			continue;
		for (size_t k = 0; k < r->nfn; k++)
			if (!strcmp(r->fn[k].image, t->images.v[i].name) && r->fn[k].excl) {
				r->nimg_ran_nosym++;
				break;
			}
	}
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "efipt %s: out of memory\n", t->cmd);
out:
	cs_free(&cs);
	profile_free(&p);
	if (cov)
		cov_blocks_free(&cb);
	free(hits);
	free(wfn);
	profwin_free(&win);
	return rc;
}

int diff_run_by_image(const struct diff_run *r, struct diff_run *img)
{
	memset(img, 0, sizeof(*img));
	img->insns = r->insns;
	img->gaps = r->gaps;
	img->errs = r->errs;
	img->irqs = r->irqs;
	img->irq_insns = r->irq_insns;
	img->timed = r->timed;
	img->ns = r->ns;
	img->time_ns = r->time_ns;
	img->irq_ns = r->irq_ns;
	img->cov = r->cov;
	img->hit = r->hit;
	img->fn = calloc(r->nfn ? r->nfn : 1, sizeof(*img->fn));
	if (!img->fn)
		return -1;
	/* r->fn is sorted by image: one row per image and context */
	for (size_t i = 0; i < r->nfn; i++) {
		struct diff_count *l = NULL;
		for (size_t k = img->nfn; k-- > 0 && !strcmp(img->fn[k].image, r->fn[i].image);)
			if (img->fn[k].irq == r->fn[i].irq)
				l = &img->fn[k];
		if (l) {
			l->excl += r->fn[i].excl;
			l->incl += r->fn[i].excl;
			l->excl_ns += r->fn[i].excl_ns;
			l->incl_ns += r->fn[i].excl_ns;
			l->hit += r->fn[i].hit;
			continue;
		}
		struct diff_count *d = &img->fn[img->nfn];
		d->image = strdup(r->fn[i].image);
		d->name = strdup("");
		if (!d->image || !d->name) {
			free(d->image);
			free(d->name);
			diff_run_free(img);
			return -1;
		}
		d->excl = d->incl = r->fn[i].excl;
		d->excl_ns = d->incl_ns = r->fn[i].excl_ns;
		d->hit = r->fn[i].hit;
		d->irq = r->fn[i].irq;
		img->nfn++;
	}
	fn_merge(img); /* an image's code and interrupt rows in order */
	return 0;
}

/* path with every frame "old`..." made "new`..." (malloc'd), or NULL. */
static char *rename_frames(const char *path, const char *old, const char *new_name)
{
	size_t lo = strlen(old), ln = strlen(new_name), n = 1;
	for (const char *p = path; *p; p++)
		n++;
	char *out = malloc(n + (n / (lo + 1) + 1) * ln), *w = out;
	if (!out)
		return NULL;
	for (const char *p = path; *p;) {
		/* p is at the start of a frame */
		if (!strncmp(p, old, lo) && p[lo] == '`') {
			memcpy(w, new_name, ln);
			w += ln;
			p += lo;
		}
		while (*p && *p != ';')
			*w++ = *p++;
		if (*p)
			*w++ = *p++;
	}
	*w = 0;
	return out;
}

int diff_run_rename(struct diff_run *r, const char *old, const char *new_name)
{
	for (size_t i = 0; i < r->nfn; i++) {
		if (strcmp(r->fn[i].image, old))
			continue;
		char *s = strdup(new_name);
		if (!s)
			return -1;
		free(r->fn[i].image);
		r->fn[i].image = s;
	}
	for (size_t i = 0; i < r->nstk; i++) {
		char *s = rename_frames(r->stk[i].path, old, new_name);
		if (!s)
			return -1;
		free(r->stk[i].path);
		r->stk[i].path = s;
	}
	fn_merge(r);
	stk_merge(r);
	return 0;
}

bool diff_run_image_has_symbols(const struct session *t, const char *image)
{
	for (unsigned i = 0; i < t->images.n; i++)
		if (!strcmp(t->images.v[i].name, image) && t->images.v[i].sf)
			return true;
	return false;
}

void diff_run_free(struct diff_run *r)
{
	for (size_t i = 0; i < r->nfn; i++) {
		free(r->fn[i].image);
		free(r->fn[i].name);
	}
	for (size_t i = 0; i < r->nstk; i++)
		free(r->stk[i].path);
	free(r->fn);
	free(r->stk);
	memset(r, 0, sizeof(*r));
}
