/* efipt diff's output; see diff_out.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "host/diff/fpdt_diff.h"
#include "host/out/csv_out.h"
#include "host/out/diff_out.h"
#include "host/out/fpdt_out.h"
#include "host/out/top_table.h"
#include "host/util/file_io.h"
#include "host/out/jsonl_out.h"

#define CMD "efipt diff"

/* " %14s %14s %14s" of A's, B's and B - A's time. */
static void times_text(uint64_t a, uint64_t b, bool ns)
{
	char x[40], y[40], d[40];
	top_time_text(x, sizeof(x), (int64_t)a, ns, false);
	top_time_text(y, sizeof(y), (int64_t)b, ns, false);
	top_time_text(d, sizeof(d), diff_delta(a, b), ns, true);
	printf(" %14s %14s %14s", x, y, d);
}

void diff_out_text(const struct diff_side *a, const struct diff_side *b, const struct diff_row *r,
		       size_t n, bool by_image, bool all, unsigned long long limit,
		       const char *win_from, const char *win_to)
{
	bool timed = diff_side_both_timed(a, b), ns = a->fn.ns;
	const char *tu = ns ? "us" : "ticks";
	char ch[40];
	diff_side_text(stdout, a);
	diff_side_text(stdout, b);
	if (win_from || win_to)
		printf("window: from %s%s to %s%s, in each run\n",
		       win_from ? "the first instruction in " : "",
		       win_from ? term_safe(win_from) : "the trace's start",
		       win_to ? "the first instruction in " : "",
		       win_to ? term_safe(win_to) : "the trace's end");
	size_t changed = 0, only_a = 0, only_b = 0;
	for (size_t i = 0; i < n; i++) {
		changed += diff_row_changed(&r[i]);
		only_a += !r[i].in_b;
		only_b += !r[i].in_a;
	}
	uint64_t ia = diff_own_insns(&a->fn), ib = diff_own_insns(&b->fn);
	diff_change_text(ch, sizeof(ch), ia, ib);
	printf("instructions (the code's own): A %" PRIu64 ", B %" PRIu64 ", B - A %+" PRId64
	       " (%s)\n", ia, ib, diff_delta(ia, ib), ch);
	diff_change_text(ch, sizeof(ch), a->fn.irq_insns, b->fn.irq_insns);
	printf("in interrupts: A %" PRIu64 " (%" PRIu64 " interrupts), B %" PRIu64 " (%" PRIu64
	       "), B - A %+" PRId64 " (%s); counted apart, rows marked [interrupt]\n", a->fn.irq_insns,
	       a->fn.irqs, b->fn.irq_insns, b->fn.irqs,
	       diff_delta(a->fn.irq_insns, b->fn.irq_insns), ch);
	if (a->fn.cov) {
		diff_change_text(ch, sizeof(ch), a->fn.hit, b->fn.hit);
		printf("coverage (distinct instructions executed): A %" PRIu64 ", B %" PRIu64
		       ", B - A %+" PRId64 " (%s)\n", a->fn.hit, b->fn.hit,
		       diff_delta(a->fn.hit, b->fn.hit), ch);
	}
	if (timed) {
		printf("time (%s; the code's own):", tu);
		times_text(a->fn.time_ns - a->fn.irq_ns, b->fn.time_ns - b->fn.irq_ns, ns);
		printf("\ntime in interrupts (%s):", tu);
		times_text(a->fn.irq_ns, b->fn.irq_ns, ns);
		printf("\n");
	}
	const char *what = by_image ? "image" : "function";
	if (!changed && a->fn.insns == b->fn.insns) {
		printf("no change: the same instructions in each of %zu %ss\n", n, what);
		if (!all)
			return;
	} else {
		printf("%zu of %zu %ss changed (%zu ran in A only, %zu in B only)\n", changed, n,
		       what, only_a, only_b);
	}
	char ta[32], tb[32], td[32];
	snprintf(ta, sizeof(ta), "A %s%s", by_image ? "" : "excl ", tu);
	snprintf(tb, sizeof(tb), "B %s%s", by_image ? "" : "excl ", tu);
	snprintf(td, sizeof(td), "B-A %s", tu);
	if (by_image)
		printf("%14s %14s %14s %9s", "A insns", "B insns", "B-A", "B/A");
	else
		printf("%14s %14s %14s %9s %14s %14s %14s %10s %10s", "A excl", "B excl",
		       "B-A excl", "B/A", "A incl", "B incl", "B-A incl", "A calls", "B calls");
	if (timed)
		printf(" %14s %14s %14s", ta, tb, td);
	if (a->fn.cov)
		printf(" %10s %10s %10s", "A hit", "B hit", "B-A hit");
	printf("  %-7s %s\n", "", by_image ? "image" : "function");
	unsigned long long shown = 0;
	for (size_t i = 0; i < n && shown < limit; i++) {
		const struct diff_row *w = &r[i];
		if (!all && !diff_row_changed(w))
			continue;
		shown++;
		char name[1400], ratio[32];
		const char *st = diff_row_status(w);
		st = !strcmp(st, "changed") || !strcmp(st, "same") ? "" : st;
		diff_row_name(name, sizeof(name), w, by_image);
		if (w->a_excl)
			snprintf(ratio, sizeof(ratio), "%.4f", diff_ratio(w->a_excl, w->b_excl));
		else
			snprintf(ratio, sizeof(ratio), "-");
		if (by_image)
			printf("%14" PRIu64 " %14" PRIu64 " %+14" PRId64 " %9s", w->a_excl, w->b_excl,
			       diff_delta(w->a_excl, w->b_excl), ratio);
		else
			printf("%14" PRIu64 " %14" PRIu64 " %+14" PRId64 " %9s %14" PRIu64
			       " %14" PRIu64 " %+14" PRId64 " %10" PRIu64 " %10" PRIu64, w->a_excl,
			       w->b_excl, diff_delta(w->a_excl, w->b_excl), ratio, w->a_incl,
			       w->b_incl, diff_delta(w->a_incl, w->b_incl), w->a_calls,
			       w->b_calls);
		if (timed)
			times_text(w->a_excl_ns, w->b_excl_ns, ns);
		if (a->fn.cov)
			printf(" %10" PRIu64 " %10" PRIu64 " %+10" PRId64, w->a_hit, w->b_hit,
			       diff_delta(w->a_hit, w->b_hit));
		printf("  %-7s %s\n", st, term_safe(name));
	}
	size_t hidden = (all ? n : changed) - shown;
	if (hidden)
		printf("(%zu more rows: --limit)\n", hidden);
}

/* The time fields of a jsonl row (o) or csv line (o NULL) when both runs
 * have time: exclusive (by image: the image's), and by function inclusive
 * too, of A and B and B - A. */
static void row_times(json_t *o, const struct diff_row *w, bool by_image)
{
	static const char *const key[] = { "a_excl_ns", "b_excl_ns", "delta_excl_ns",
					   "a_incl_ns", "b_incl_ns", "delta_incl_ns" };
	int64_t v[6] = { (int64_t)w->a_excl_ns, (int64_t)w->b_excl_ns,
			 diff_delta(w->a_excl_ns, w->b_excl_ns), (int64_t)w->a_incl_ns,
			 (int64_t)w->b_incl_ns, diff_delta(w->a_incl_ns, w->b_incl_ns) };
	for (int i = 0; i < (by_image ? 3 : 6); i++) {
		if (o)
			json_object_set_new(o, key[i], json_integer((json_int_t)v[i]));
		else
			printf(",%" PRId64, v[i]);
	}
}

void diff_out_rows(int fmt, const struct diff_side *a, const struct diff_side *b,
		       const struct diff_row *r, size_t n, bool by_image, unsigned long long limit,
		       const char *win_from, const char *win_to)
{
	bool timed = diff_side_both_timed(a, b);
	if (fmt == 1) {
		json_t *o = json_pack("{s:s,s:s,s:o,s:o,s:I,s:I}", "type", "summary", "by",
				      by_image ? "image" : "function", "a", diff_side_json(a), "b",
				      diff_side_json(b), "delta",
				      (json_int_t)diff_delta(diff_own_insns(&a->fn), diff_own_insns(&b->fn)),
				      "interrupt_delta",
				      (json_int_t)diff_delta(a->fn.irq_insns, b->fn.irq_insns));
		if (o && (win_from || win_to))
			json_object_set_new(o, "window", json_pack("{s:s?,s:s?}", "from", win_from,
								   "to", win_to));
		jsonl_put(o);
	} else {
		printf(by_image ? "image,a_insns,b_insns,delta,status,context"
				: "image,function,a_excl,b_excl,delta_excl,a_incl,b_incl,"
				  "delta_incl,a_calls,b_calls,status,context");
		printf(!timed ? "" : by_image ? ",a_excl_ns,b_excl_ns,delta_excl_ns"
		       : ",a_excl_ns,b_excl_ns,delta_excl_ns,a_incl_ns,b_incl_ns,delta_incl_ns");
		printf(a->fn.cov ? ",a_hit,b_hit,delta_hit\n" : "\n");
	}
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct diff_row *w = &r[i];
		const char *st = diff_row_status(w);
		if (fmt == 1) {
			json_t *o = by_image
				? json_pack("{s:s,s:s,s:I,s:I,s:I,s:s,s:s}", "type", "image", "image",
					    *w->image ? w->image : "[unknown]", "a_insns",
					    (json_int_t)w->a_excl, "b_insns", (json_int_t)w->b_excl,
					    "delta", (json_int_t)diff_delta(w->a_excl, w->b_excl),
					    "status", st, "context", diff_row_context(w))
				: json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s}", "type",
					    "function", "image", w->image, "function", w->name,
					    "a_excl", (json_int_t)w->a_excl, "b_excl",
					    (json_int_t)w->b_excl, "delta_excl",
					    (json_int_t)diff_delta(w->a_excl, w->b_excl), "a_incl",
					    (json_int_t)w->a_incl, "b_incl", (json_int_t)w->b_incl,
					    "delta_incl",
					    (json_int_t)diff_delta(w->a_incl, w->b_incl), "a_calls",
					    (json_int_t)w->a_calls, "b_calls", (json_int_t)w->b_calls,
					    "status", st, "context", diff_row_context(w));
			if (o && timed)
				row_times(o, w, by_image);
			if (o && a->fn.cov) {
				json_object_set_new(o, "a_hit", json_integer((json_int_t)w->a_hit));
				json_object_set_new(o, "b_hit", json_integer((json_int_t)w->b_hit));
				json_object_set_new(o, "delta_hit", json_integer((json_int_t)
						    diff_delta(w->a_hit, w->b_hit)));
			}
			jsonl_put(o);
			continue;
		}
		csv_field(by_image && !*w->image ? "[unknown]" : w->image);
		if (by_image) {
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%s,%s", w->a_excl, w->b_excl,
			       diff_delta(w->a_excl, w->b_excl), st, diff_row_context(w));
		} else {
			putchar(',');
			csv_field(w->name);
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%s,%s", w->a_excl, w->b_excl,
			       diff_delta(w->a_excl, w->b_excl), w->a_incl, w->b_incl,
			       diff_delta(w->a_incl, w->b_incl), w->a_calls, w->b_calls, st,
			       diff_row_context(w));
		}
		if (timed)
			row_times(NULL, w, by_image);
		if (a->fn.cov)
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64, w->a_hit, w->b_hit,
			       diff_delta(w->a_hit, w->b_hit));
		putchar('\n');
	}
}

/* The firmware's boot-performance records of both runs, when either has
 * them: text and jsonl only (CSV keeps one table). 0, or -1 (said). */
int diff_out_fpdt(const struct diff_side *a, const struct diff_side *b, int fmt, bool all,
		      unsigned long long limit)
{
	struct fpdt_run f[2];
	const struct diff_side *s[2] = { a, b };
	struct fpdt_diff_row *r = NULL;
	size_t n = 0;
	int rc = -1;
	memset(f, 0, sizeof(f));
	for (int k = 0; k < 2; k++) {
		char err[4400];
		if (s[k]->t.rd.manifest &&
		    fpdtrun_load(&f[k], s[k]->t.rd.path, &s[k]->t.images, err, sizeof(err))) {
			fprintf(stderr, CMD ": %s: %s\n", s[k]->label, term_safe(err));
			goto out;
		}
		fpdtout_warn_damage(k ? CMD ": B" : CMD ": A", &f[k]);
	}
	rc = 0;
	if (!f[0].present && !f[1].present)
		goto out;
	if (fmt == 2) {
		fprintf(stderr, CMD ": note: the firmware's FPDT records are compared in --format "
			"text and jsonl, not csv\n");
		goto out;
	}
	if (fpdtdiff_rows(&f[0], &f[1], &r, &n)) {
		fprintf(stderr, CMD ": out of memory\n");
		rc = -1;
		goto out;
	}
	fpdtdiff_print(fmt, &f[0], &f[1], r, n, all, fmt == 0 && limit == (unsigned long long)-1
							    ? 50 : limit);
out:
	free(r);
	fpdtrun_free(&f[0]);
	fpdtrun_free(&f[1]);
	return rc;
}
