/* The comparison of efipt diff: see diff_table.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/diff/diff_table.h"
#include "host/stack/profile_window.h"

int64_t diff_delta(uint64_t a, uint64_t b)
{
	if (b >= a)
		return b - a > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(b - a);
	return a - b > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(a - b);
}

double diff_ratio(uint64_t a, uint64_t b)
{
	return a ? (double)b / (double)a : 0.0;
}

bool diff_grows(uint64_t a, uint64_t b, long pct_tenths)
{
	if (b <= a)
		return false;
	if (!a)
		return true;
	/* (b - a) / a > pct / 1000, exactly */
	return (unsigned __int128)(b - a) * 1000 > (unsigned __int128)a * (uint64_t)pct_tenths;
}

static uint64_t mag(int64_t d)
{
	return d < 0 ? (uint64_t)-d : (uint64_t)d;
}

static int by_change(const void *x, const void *y)
{
	const struct diff_row *p = x, *q = y;
	uint64_t dp = mag(diff_delta(p->a_excl, p->b_excl));
	uint64_t dq = mag(diff_delta(q->a_excl, q->b_excl));
	if (dp != dq)
		return dp > dq ? -1 : 1;
	dp = mag(diff_delta(p->a_incl, p->b_incl));
	dq = mag(diff_delta(q->a_incl, q->b_incl));
	if (dp != dq)
		return dp > dq ? -1 : 1;
	int c = strcmp(p->image, q->image);
	if (!c)
		c = strcmp(p->name, q->name);
	return c ? c : (int)p->irq - (int)q->irq;
}

int diff_table(const struct diff_run *a, const struct diff_run *b, struct diff_row **rows,
	       size_t *n)
{
	size_t cap = a->nfn + b->nfn;
	struct diff_row *r = calloc(cap ? cap : 1, sizeof(*r));
	if (!r)
		return -1;
	size_t i = 0, k = 0, m = 0;
	while (i < a->nfn || k < b->nfn) {
		int c = i == a->nfn ? 1 : k == b->nfn ? -1 : diff_count_cmp(&a->fn[i], &b->fn[k]);
		struct diff_row *w = &r[m++];
		if (c <= 0) {
			const struct diff_count *x = &a->fn[i++];
			w->image = x->image;
			w->name = x->name;
			w->irq = x->irq;
			w->a_excl = x->excl;
			w->a_incl = x->incl;
			w->a_calls = x->calls;
			w->a_excl_ns = x->excl_ns;
			w->a_incl_ns = x->incl_ns;
			w->a_hit = x->hit;
			w->in_a = true;
		}
		if (c >= 0) {
			const struct diff_count *y = &b->fn[k++];
			w->image = y->image;
			w->name = y->name;
			w->irq = y->irq;
			w->b_excl = y->excl;
			w->b_incl = y->incl;
			w->b_calls = y->calls;
			w->b_excl_ns = y->excl_ns;
			w->b_incl_ns = y->incl_ns;
			w->b_hit = y->hit;
			w->in_b = true;
		}
	}
	if (m)
		qsort(r, m, sizeof(*r), by_change);
	*rows = r;
	*n = m;
	return 0;
}

int diff_folds(const struct diff_run *a, const struct diff_run *b, struct diff_fold **out,
	       size_t *n)
{
	size_t cap = a->nstk + b->nstk;
	struct diff_fold *f = calloc(cap ? cap : 1, sizeof(*f));
	if (!f)
		return -1;
	size_t i = 0, k = 0, m = 0;
	while (i < a->nstk || k < b->nstk) {
		int c = i == a->nstk ? 1 : k == b->nstk ? -1
		      : strcmp(a->stk[i].path, b->stk[k].path);
		struct diff_fold *w = &f[m++];
		if (c <= 0) {
			w->path = a->stk[i].path;
			w->a = a->stk[i++].insns;
		}
		if (c >= 0) {
			w->path = b->stk[k].path;
			w->b = b->stk[k++].insns;
		}
	}
	*out = f;
	*n = m;
	return 0;
}

/* "+12.3%" of B over A ("new" where A is 0). */
void diff_change_text(char *buf, size_t cap, uint64_t a, uint64_t b)
{
	if (!a)
		snprintf(buf, cap, b ? "new" : "0%%");
	else
		snprintf(buf, cap, "%+.2f%%", 100.0 * ((double)b - (double)a) / (double)a);
}

const char *diff_row_status(const struct diff_row *r)
{
	if (!r->in_a)
		return "only B";
	if (!r->in_b)
		return "only A";
	return r->a_excl != r->b_excl || r->a_incl != r->b_incl || r->a_calls != r->b_calls
		? "changed" : "same";
}

bool diff_row_changed(const struct diff_row *r)
{
	return strcmp(diff_row_status(r), "same") != 0;
}

/* The code's own instructions of a run (its interrupts' apart). */
uint64_t diff_own_insns(const struct diff_run *r)
{
	return r->insns - r->irq_insns;
}

const char *diff_row_context(const struct diff_row *r)
{
	return r->irq ? "interrupt" : "code";
}

/* "image`function" (or the image alone, by image); " [interrupt]" after
 * what ran in interrupts. */
void diff_row_name(char *buf, size_t cap, const struct diff_row *r, bool by_image)
{
	const char *irq = r->irq ? " [interrupt]" : "";
	if (by_image)
		snprintf(buf, cap, "%s%s", *r->image ? r->image : "[unknown]", irq);
	else
		snprintf(buf, cap, "%s%s%s%s", r->image, *r->image ? "`" : "", r->name, irq);
}

/* Does NAME ("f" or "image`f") name row r (the code's rows only)? */
bool diff_row_names_function(const struct diff_row *r, const char *name)
{
	return !r->irq && fnwin_names(r->image, r->name, name);
}
