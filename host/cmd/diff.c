/*
 * efipt diff: what changed between two runs (two boots, two builds of one
 * firmware), per function or per image: instructions exclusive and
 * inclusive and calls of each, matched by name so that builds whose
 * addresses differ compare; the differential folded stacks; CI gates.
 */
#include <inttypes.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/out/csv_out.h"
#include "host/out/top_table.h"
#include "host/diff/diff_run.h"
#include "host/diff/diff_table.h"
#include "host/diff/diff_window.h"
#include "host/util/file_io.h"
#include "host/util/gate_pct.h"
#include "host/diff/fpdt_diff.h"
#include "host/out/fpdt_out.h"
#include "host/input/session.h"
#include "host/util/opts.h"

#define CMD "efipt diff"
#define GATES_MAX 64

static const char diff_usage[] =
	"usage: efipt diff A B [--symbols PATH]... [--symbols-b PATH]... [OPTIONS]\n\n"
	"Compare two run directories A (before) and B (after): per function, the\n"
	"instructions executed in it (exclusive), while it was on the call stack\n"
	"(inclusive) and its calls, in A and B, with B - A and B / A, sorted by\n"
	"the size of the change in exclusive instructions. Functions are matched\n"
	"by image and function name, so two builds whose addresses differ\n"
	"compare; each run is decoded with its own code snapshots and symbols.\n"
	"A function that ran in one run only is marked (\"only A\", \"only B\").\n"
	"What interrupts ran (the handlers of asynchronous events, FUP+TIP, and\n"
	"what they called) is counted apart from the code's own instructions, in\n"
	"rows marked [interrupt]; the totals and the gates are the code's own.\n\n"
	"inputs:\n"
	"  A B                 run directories (efipt.efi, efipt qemu)\n";

static const char diff_tail[] =
	"Runs of different CPUs or firmware are compared with a warning. An image\n"
	"that ran in both runs with symbols in one only cannot be compared by\n"
	"function (its functions would all be [unknown] on one side): name its\n"
	"symbols, or compare with --by image. Code without symbols in both runs\n"
	"counts as IMAGE`[unknown]. Time is compared where both traces have\n"
	"timing packets (one without: instructions only, said once).\n\n"
	"Exit status: 0 compared (\"no change\" when the runs executed the same);\n"
	"1 a trace had decode errors (counted as gaps, named on standard error);\n"
	"2 on usage errors, unreadable runs, a window whose function never ran\n"
	"or a write error; 3 a gate crossed, or a --function/--image that ran in\n"
	"neither run.\n";

/* One run as the header describes it. */
struct side {
	const char *label;	/* "A", "B" */
	struct session t;
	struct diff_run fn, img;
	char firmware[200], cpu[64], command[64];
};

/* What the manifest says of the firmware and the CPU (for the header and
 * the different-machines warning). */
static void side_facts(struct side *s)
{
	const struct run_dir *rd = &s->t.rd;
	snprintf(s->firmware, sizeof(s->firmware), "unknown firmware");
	snprintf(s->cpu, sizeof(s->cpu), "unknown CPU");
	snprintf(s->command, sizeof(s->command), "efipt");
	if (!s->t.have_run)
		return;
	json_t *fw = json_object_get(rd->manifest, "firmware");
	const char *v = json_string_value(json_object_get(fw, "vendor"));
	const char *r = json_string_value(json_object_get(fw, "revision"));
	if (v)
		snprintf(s->firmware, sizeof(s->firmware), "%.120s%s%.60s", v, r ? " " : "",
			 r ? r : "");
	json_t *cpu = json_object_get(rd->manifest, "cpu");
	const char *sig = json_string_value(json_object_get(cpu, "signature"));
	if (cpu)
		snprintf(s->cpu, sizeof(s->cpu), "CPU %lld/%lld/%lld%s%.20s",
			 (long long)json_integer_value(json_object_get(cpu, "family")),
			 (long long)json_integer_value(json_object_get(cpu, "model")),
			 (long long)json_integer_value(json_object_get(cpu, "stepping")),
			 sig ? " " : "", sig ? sig : "");
	const char *c = rundir_str(rd, "command");
	if (c)
		snprintf(s->command, sizeof(s->command), "efipt %.40s", c);
}

/* "run B: DIR (efipt qemu; EDK II 0x10000; CPU 6/94/3): 1234 instructions,
 * 0 gaps, 0 decode errors; symbols for 3 of 5 images" */
static void side_text(FILE *f, const struct side *s)
{
	fprintf(f, "%s: %s (%s; %s; %s): %" PRIu64 " instructions (%" PRIu64 " in interrupts), %"
		PRIu64 " gap%s, %ld decode error%s; symbols for %zu of %zu images", s->label,
		term_safe(s->t.run_path), term_safe(s->command), term_safe(s->firmware),
		term_safe(s->cpu), s->fn.insns, s->fn.irq_insns, s->fn.gaps, s->fn.gaps == 1 ? "" : "s",
		s->fn.errs, s->fn.errs == 1 ? "" : "s", s->fn.nimg_sym, s->fn.nimg);
	if (s->fn.nimg_map)
		fprintf(f, ", %zu of them by a link map only (not checked against the code)",
			s->fn.nimg_map);
	if (s->t.so.npaths || s->t.so.nbinds) {
		fprintf(f, " (--symbols");
		for (size_t i = 0; i < s->t.so.npaths; i++)
			fprintf(f, " %s", term_safe(s->t.so.paths[i]));
		for (size_t i = 0; i < s->t.so.nbinds; i++)
			fprintf(f, " %s=%s", term_safe(s->t.so.bind_img[i]),
				term_safe(s->t.so.bind_file[i]));
		fputc(')', f);
	}
	fputc('\n', f);
}

static json_t *side_json(const struct side *s)
{
	json_t *paths = json_array();
	for (size_t i = 0; i < s->t.so.npaths; i++)
		json_array_append_new(paths, json_string(s->t.so.paths[i]));
	for (size_t i = 0; i < s->t.so.nbinds; i++) {
		char b[2200];
		snprintf(b, sizeof(b), "%s=%s", s->t.so.bind_img[i], s->t.so.bind_file[i]);
		json_array_append_new(paths, json_string(b));
	}
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "run",
			 s->t.run_path, "command", s->command, "firmware", s->firmware, "cpu", s->cpu,
			 "insns", (json_int_t)s->fn.insns, "interrupts", (json_int_t)s->fn.irqs,
			 "interrupt_insns", (json_int_t)s->fn.irq_insns, "gaps",
			 (json_int_t)s->fn.gaps, "decode_errors",
			 (json_int_t)s->fn.errs, "images", (json_int_t)s->fn.nimg,
			 "images_with_symbols", (json_int_t)s->fn.nimg_sym, "images_by_map_only",
			 (json_int_t)s->fn.nimg_map, "symbols", paths);
	if (o && s->fn.cov)
		json_object_set_new(o, "hit", json_integer((json_int_t)s->fn.hit));
	if (o && s->fn.timed) {
		/* its time (ns; TSC ticks where the TSC frequency is unknown) */
		json_object_set_new(o, s->fn.ns ? "time_ns" : "time_ticks",
				    json_integer((json_int_t)s->fn.time_ns));
		json_object_set_new(o, s->fn.ns ? "interrupt_ns" : "interrupt_ticks",
				    json_integer((json_int_t)s->fn.irq_ns));
	}
	return o;
}

/* "+12.3%" of B over A ("new" where A is 0). */
static void change_text(char *buf, size_t cap, uint64_t a, uint64_t b)
{
	if (!a)
		snprintf(buf, cap, b ? "new" : "0%%");
	else
		snprintf(buf, cap, "%+.2f%%", 100.0 * ((double)b - (double)a) / (double)a);
}

static const char *row_status(const struct diff_row *r)
{
	if (!r->in_a)
		return "only B";
	if (!r->in_b)
		return "only A";
	return r->a_excl != r->b_excl || r->a_incl != r->b_incl || r->a_calls != r->b_calls
		? "changed" : "same";
}

static bool row_changed(const struct diff_row *r)
{
	return strcmp(row_status(r), "same") != 0;
}

/* The code's own instructions of a run (its interrupts' apart). */
static uint64_t own_insns(const struct diff_run *r)
{
	return r->insns - r->irq_insns;
}

static const char *row_context(const struct diff_row *r)
{
	return r->irq ? "interrupt" : "code";
}

/* "image`function" (or the image alone, by image); " [interrupt]" after
 * what ran in interrupts. */
static void row_name(char *buf, size_t cap, const struct diff_row *r, bool by_image)
{
	const char *irq = r->irq ? " [interrupt]" : "";
	if (by_image)
		snprintf(buf, cap, "%s%s", *r->image ? r->image : "[unknown]", irq);
	else
		snprintf(buf, cap, "%s%s%s%s", r->image, *r->image ? "`" : "", r->name, irq);
}

/* Does NAME ("f" or "image`f") name row r (the code's rows only)? */
static bool names_function(const struct diff_row *r, const char *name)
{
	return !r->irq && diffwin_names(r->image, r->name, name);
}

#define RENAMES_MAX 64
struct renames {
	const char *old[RENAMES_MAX], *new_name[RENAMES_MAX];
	unsigned n;
};

/* B's name of the image A calls name. */
static const char *b_name(const struct renames *rn, const char *name)
{
	for (unsigned i = 0; i < rn->n; i++)
		if (!strcmp(rn->old[i], name))
			return rn->new_name[i];
	return name;
}

/* The symbols check: an image that ran in both runs, with symbols in one
 * only. 0, or -1 (named). */
static int symbols_match(const struct side *a, const struct side *b, const struct renames *rn)
{
	int rc = 0;
	for (size_t i = 0; i < a->img.nfn; i++) {
		const char *im = a->img.fn[i].image;
		if (i && !strcmp(a->img.fn[i - 1].image, im))
			continue; /* its interrupt row */
		bool in_b = false;
		for (size_t k = 0; k < b->img.nfn && !in_b; k++)
			in_b = !strcmp(b->img.fn[k].image, im);
		if (!*im || !in_b)
			continue;
		bool sa = diff_run_image_has_symbols(&a->t, im);
		bool sb = diff_run_image_has_symbols(&b->t, b_name(rn, im));
		if (sa == sb)
			continue;
		fprintf(stderr, CMD ": image %s ran in both runs but has symbols in %s only: "
			"its functions cannot be matched (%s: 'efipt symbols %s' says why); give "
			"%s the symbols, or compare images with --by image\n", term_safe(im),
			sa ? "A" : "B", sa ? "B" : "A", term_safe(sa ? b->t.run_path : a->t.run_path),
			sa ? "--symbols-b" : "--symbols");
		rc = -1;
	}
	return rc;
}

static void warn_machines(const struct side *a, const struct side *b)
{
	if (strcmp(a->cpu, b->cpu))
		fprintf(stderr, CMD ": warning: the runs are of different CPUs (A: %s, B: %s); "
			"compared by name all the same\n", term_safe(a->cpu), term_safe(b->cpu));
	if (strcmp(a->firmware, b->firmware))
		fprintf(stderr, CMD ": warning: the runs are of different firmware (A: %s, B: "
			"%s); compared by name all the same\n", term_safe(a->firmware),
			term_safe(b->firmware));
}

struct gates {
	long grows;		/* tenths of a percent; -1: no gate */
	bool fail_new;
	bool cov_lost;		/* --fail-if-coverage-lost */
	const char *fn[GATES_MAX], *img[GATES_MAX];
	unsigned nfn, nimg;
};

/* The gates: 0 when none crossed, else 3 (each crossing on stderr). */
static int gates_check(const struct gates *g, const struct side *a, const struct side *b,
		       const struct diff_row *fr, size_t nf, const struct diff_row *ir,
		       size_t ni)
{
	int rc = 0;
	char name[1400];
	uint64_t ia = own_insns(&a->fn), ib = own_insns(&b->fn);
	if (g->grows >= 0 && !g->nfn && !g->nimg && diff_grows(ia, ib, g->grows)) {
		char ch[40];
		change_text(ch, sizeof(ch), ia, ib);
		fprintf(stderr, CMD ": the run grew by %s (%" PRIu64 " -> %" PRIu64
			" instructions, interrupts apart), more than --fail-if-grows %s%%\n", ch,
			ia, ib, gate_pct_text(g->grows));
		rc = 3;
	}
	for (unsigned i = 0; i < g->nfn; i++) {
		const struct diff_row *m = NULL;
		unsigned hits = 0;
		for (size_t k = 0; k < nf; k++)
			if (names_function(&fr[k], g->fn[i])) {
				m = &fr[k];
				hits++;
			}
		if (hits > 1) {
			fprintf(stderr, CMD ": --function %s: %u images have a function of that "
				"name; say which: IMAGE`%s\n", term_safe(g->fn[i]), hits,
				term_safe(g->fn[i]));
			rc = 3;
			continue;
		}
		if (!m) {
			fprintf(stderr, CMD ": --function %s: ran in neither run\n",
				term_safe(g->fn[i]));
			rc = 3;
			continue;
		}
		if (diff_grows(m->a_incl, m->b_incl, g->grows)) {
			char ch[40];
			change_text(ch, sizeof(ch), m->a_incl, m->b_incl);
			row_name(name, sizeof(name), m, false);
			fprintf(stderr, CMD ": %s grew by %s (%" PRIu64 " -> %" PRIu64 " inclusive "
				"instructions), more than --fail-if-grows %s%%\n", term_safe(name), ch,
				m->a_incl, m->b_incl, gate_pct_text(g->grows));
			rc = 3;
		}
	}
	for (unsigned i = 0; i < g->nimg; i++) {
		const struct diff_row *m = NULL;
		for (size_t k = 0; k < ni && !m; k++)
			if (*ir[k].image && !ir[k].irq &&
			    symopts_names_image(ir[k].image, g->img[i]))
				m = &ir[k];
		if (!m) {
			fprintf(stderr, CMD ": --image %s: ran in neither run\n", term_safe(g->img[i]));
			rc = 3;
			continue;
		}
		if (diff_grows(m->a_excl, m->b_excl, g->grows)) {
			char ch[40];
			change_text(ch, sizeof(ch), m->a_excl, m->b_excl);
			fprintf(stderr, CMD ": image %s grew by %s (%" PRIu64 " -> %" PRIu64
				" instructions), more than --fail-if-grows %s%%\n", term_safe(m->image),
				ch, m->a_excl, m->b_excl, gate_pct_text(g->grows));
			rc = 3;
		}
	}
	if (g->fail_new) {
		size_t n = 0;
		for (size_t k = 0; k < nf; k++) {
			if (fr[k].in_a || !fr[k].in_b || fr[k].irq)
				continue;
			if (n++ < 20) {
				row_name(name, sizeof(name), &fr[k], false);
				fprintf(stderr, CMD ": %s ran in B only (%" PRIu64 " instructions) "
					"(--fail-if-new)\n", term_safe(name), fr[k].b_incl);
			}
		}
		if (n > 20)
			fprintf(stderr, CMD ": and %zu more functions ran in B only\n", n - 20);
		if (n)
			rc = 3;
	}
	if (g->cov_lost) {
		size_t n = 0;
		for (size_t k = 0; k < nf; k++) {
			if (fr[k].b_hit >= fr[k].a_hit)
				continue;
			if (n++ < 20) {
				row_name(name, sizeof(name), &fr[k], false);
				fprintf(stderr, CMD ": %s lost coverage: %" PRIu64 " -> %" PRIu64
					" distinct instructions executed (--fail-if-coverage-lost)\n",
					term_safe(name), fr[k].a_hit, fr[k].b_hit);
			}
		}
		if (n > 20)
			fprintf(stderr, CMD ": and %zu more functions lost coverage\n", n - 20);
		if (n)
			rc = 3;
	}
	return rc;
}

/* Whether both runs have time, in one unit: then times are compared. */
static bool both_timed(const struct side *a, const struct side *b)
{
	return a->fn.timed && b->fn.timed && a->fn.ns == b->fn.ns;
}

/* " %14s %14s %14s" of A's, B's and B - A's time. */
static void times_text(uint64_t a, uint64_t b, bool ns)
{
	char x[40], y[40], d[40];
	top_time_text(x, sizeof(x), (int64_t)a, ns, false);
	top_time_text(y, sizeof(y), (int64_t)b, ns, false);
	top_time_text(d, sizeof(d), diff_delta(a, b), ns, true);
	printf(" %14s %14s %14s", x, y, d);
}

static void print_text(const struct side *a, const struct side *b, const struct diff_row *r,
		       size_t n, bool by_image, bool all, unsigned long long limit,
		       const char *win_from, const char *win_to)
{
	bool timed = both_timed(a, b), ns = a->fn.ns;
	const char *tu = ns ? "us" : "ticks";
	char ch[40];
	side_text(stdout, a);
	side_text(stdout, b);
	if (win_from || win_to)
		printf("window: from %s%s to %s%s, in each run\n",
		       win_from ? "the first instruction in " : "",
		       win_from ? term_safe(win_from) : "the trace's start",
		       win_to ? "the first instruction in " : "",
		       win_to ? term_safe(win_to) : "the trace's end");
	size_t changed = 0, only_a = 0, only_b = 0;
	for (size_t i = 0; i < n; i++) {
		changed += row_changed(&r[i]);
		only_a += !r[i].in_b;
		only_b += !r[i].in_a;
	}
	uint64_t ia = own_insns(&a->fn), ib = own_insns(&b->fn);
	change_text(ch, sizeof(ch), ia, ib);
	printf("instructions (the code's own): A %" PRIu64 ", B %" PRIu64 ", B - A %+" PRId64
	       " (%s)\n", ia, ib, diff_delta(ia, ib), ch);
	change_text(ch, sizeof(ch), a->fn.irq_insns, b->fn.irq_insns);
	printf("in interrupts: A %" PRIu64 " (%" PRIu64 " interrupts), B %" PRIu64 " (%" PRIu64
	       "), B - A %+" PRId64 " (%s); counted apart, rows marked [interrupt]\n", a->fn.irq_insns,
	       a->fn.irqs, b->fn.irq_insns, b->fn.irqs,
	       diff_delta(a->fn.irq_insns, b->fn.irq_insns), ch);
	if (a->fn.cov) {
		change_text(ch, sizeof(ch), a->fn.hit, b->fn.hit);
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
		if (!all && !row_changed(w))
			continue;
		shown++;
		char name[1400], ratio[32];
		const char *st = row_status(w);
		st = !strcmp(st, "changed") || !strcmp(st, "same") ? "" : st;
		row_name(name, sizeof(name), w, by_image);
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

static void print_rows(int fmt, const struct side *a, const struct side *b,
		       const struct diff_row *r, size_t n, bool by_image, unsigned long long limit,
		       const char *win_from, const char *win_to)
{
	bool timed = both_timed(a, b);
	if (fmt == 1) {
		json_t *o = json_pack("{s:s,s:s,s:o,s:o,s:I,s:I}", "type", "summary", "by",
				      by_image ? "image" : "function", "a", side_json(a), "b",
				      side_json(b), "delta",
				      (json_int_t)diff_delta(own_insns(&a->fn), own_insns(&b->fn)),
				      "interrupt_delta",
				      (json_int_t)diff_delta(a->fn.irq_insns, b->fn.irq_insns));
		if (o && (win_from || win_to))
			json_object_set_new(o, "window", json_pack("{s:s?,s:s?}", "from", win_from,
								   "to", win_to));
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		if (s)
			puts(s);
		free(s);
		json_decref(o);
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
		const char *st = row_status(w);
		if (fmt == 1) {
			json_t *o = by_image
				? json_pack("{s:s,s:s,s:I,s:I,s:I,s:s,s:s}", "type", "image", "image",
					    *w->image ? w->image : "[unknown]", "a_insns",
					    (json_int_t)w->a_excl, "b_insns", (json_int_t)w->b_excl,
					    "delta", (json_int_t)diff_delta(w->a_excl, w->b_excl),
					    "status", st, "context", row_context(w))
				: json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s}", "type",
					    "function", "image", w->image, "function", w->name,
					    "a_excl", (json_int_t)w->a_excl, "b_excl",
					    (json_int_t)w->b_excl, "delta_excl",
					    (json_int_t)diff_delta(w->a_excl, w->b_excl), "a_incl",
					    (json_int_t)w->a_incl, "b_incl", (json_int_t)w->b_incl,
					    "delta_incl",
					    (json_int_t)diff_delta(w->a_incl, w->b_incl), "a_calls",
					    (json_int_t)w->a_calls, "b_calls", (json_int_t)w->b_calls,
					    "status", st, "context", row_context(w));
			if (o && timed)
				row_times(o, w, by_image);
			if (o && a->fn.cov) {
				json_object_set_new(o, "a_hit", json_integer((json_int_t)w->a_hit));
				json_object_set_new(o, "b_hit", json_integer((json_int_t)w->b_hit));
				json_object_set_new(o, "delta_hit", json_integer((json_int_t)
						    diff_delta(w->a_hit, w->b_hit)));
			}
			char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
			if (s)
				puts(s);
			free(s);
			json_decref(o);
			continue;
		}
		csv_field(by_image && !*w->image ? "[unknown]" : w->image);
		if (by_image) {
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%s,%s", w->a_excl, w->b_excl,
			       diff_delta(w->a_excl, w->b_excl), st, row_context(w));
		} else {
			putchar(',');
			csv_field(w->name);
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%s,%s", w->a_excl, w->b_excl,
			       diff_delta(w->a_excl, w->b_excl), w->a_incl, w->b_incl,
			       diff_delta(w->a_incl, w->b_incl), w->a_calls, w->b_calls, st,
			       row_context(w));
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
static int print_fpdt(const struct side *a, const struct side *b, int fmt, bool all,
		      unsigned long long limit)
{
	struct fpdt_run f[2];
	const struct side *s[2] = { a, b };
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

/* What the command line says (the option rows' ctx). */
struct diff_opts {
	struct side *a, *b;
	const char *sym_a[64], *sym_b[64];
	unsigned nsym_a, nsym_b;
	struct renames rn;
	struct gates g;
	int fmt;		/* 0 text, 1 jsonl, 2 csv */
	bool by_image, all, folded, have_limit, coverage;
	unsigned long long limit;
	const char *from, *to;	/* the window's functions */
};

#define O(ctx) ((struct diff_opts *)(ctx))

static int set_symbols(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	bool b = !strcmp(r->name, "symbols-b");
	unsigned *n = b ? &O(ctx)->nsym_b : &O(ctx)->nsym_a;
	if (*n == 64) {
		sb_printf(err, "at most 64 --%s", r->name);
		return -1;
	}
	(b ? O(ctx)->sym_b : O(ctx)->sym_a)[(*n)++] = v;
	return 0;
}

/* --path-map: both runs'. */
static int set_path_map(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	char e[4400];
	if (symopts_add_map(&O(ctx)->a->t.so, v, e, sizeof(e)) ||
	    symopts_add_map(&O(ctx)->b->t.so, v, e, sizeof(e))) {
		sb_puts(err, term_safe(e));
		return -1;
	}
	return 0;
}

/* --cpu: both runs'. */
static int set_cpu(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	for (int k = 0; k < 2; k++) {
		struct session *t = k ? &O(ctx)->b->t : &O(ctx)->a->t;
		if (session_parse_cpu(v, &t->cpu, &t->model_given, &t->model_errata)) {
			sb_printf(err, "--cpu wants a CPU number N or FAMILY/MODEL[/STEPPING], got "
				  "'%s'", term_safe(v));
			return -1;
		}
	}
	return 0;
}

static int set_rename(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	struct renames *rn = &O(ctx)->rn;
	const char *eq = strchr(v, '=');
	if (!eq || eq == v || !eq[1] || rn->n == RENAMES_MAX) {
		sb_printf(err, "--rename takes OLD=NEW (the image's name in A, its name in B; at "
			  "most %d), not '%s'", RENAMES_MAX, term_safe(v));
		return -1;
	}
	/* v is argv's: cut it at '=' */
	((char *)v)[eq - v] = 0;
	rn->old[rn->n] = v;
	rn->new_name[rn->n++] = eq + 1;
	return 0;
}

static int set_limit(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	if (opts_set_u64(ctx, r, v, err))
		return -1;
	O(ctx)->have_limit = true;
	return 0;
}

static int set_grows(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	if (gate_pct_parse(v, 10000000, &O(ctx)->g.grows)) {
		sb_printf(err, "--%s takes a percentage (at most one decimal: 2.5), not '%s'",
			  r->name, term_safe(v));
		return -1;
	}
	return 0;
}

static int set_gate_name(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct gates *g = &O(ctx)->g;
	bool fn = !strcmp(r->name, "function");
	unsigned *n = fn ? &g->nfn : &g->nimg;
	if (*n == GATES_MAX) {
		sb_printf(err, "at most %d --%s", GATES_MAX, r->name);
		return -1;
	}
	(fn ? g->fn : g->img)[(*n)++] = v;
	return 0;
}

static const struct opt_row diff_input_rows[] = {
	{ "symbols", OPT_VALUE, set_symbols, 0, "PATH", "symbols of A, and of B unless "
	  "--symbols-b is given;\nas for 'efipt top' (a build directory, one ELF file,\n"
	  "IMAGE=FILE); repeatable" },
	{ "symbols-b", OPT_VALUE, set_symbols, 0, "PATH", "symbols of B (its build differs "
	  "from A's); repeatable" },
	{ "path-map", OPT_VALUE, set_path_map, 0, "OLD=NEW", "rewrite the build path the "
	  "images record (both runs)" },
	{ "rename", OPT_VALUE, set_rename, 0, "OLD=NEW", "the image called OLD in A is called "
	  "NEW in B: compared\nas one (shown as OLD); repeatable" },
	{ "cpu", OPT_VALUE, set_cpu, 0, "N", "the trace of CPU N of both runs (default 0)" },
	{ "from", OPT_VALUE, opts_set_str, offsetof(struct diff_opts, from), "FUNCTION",
	  "only from the first instruction executed in FUNCTION\n(NAME or IMAGE`NAME) on, "
	  "in each run" },
	{ "to", OPT_VALUE, opts_set_str, offsetof(struct diff_opts, to), "FUNCTION",
	  "only up to the first instruction executed in\nFUNCTION after the window opened "
	  "(excluded), in\neach run" },
};

static const struct opt_row diff_output_rows[] = {
	{ "by", OPT_VALUE, opts_set_by, offsetof(struct diff_opts, by_image), "function|image",
	  "what to compare (default function); "
	  "by image:\ninstructions in each image" },
	{ "format", OPT_VALUE, opts_set_table_format, offsetof(struct diff_opts, fmt),
	  "text|jsonl|csv", "text: a header naming both "
	  "runs, then the rows\nthat changed (--all: every row); jsonl: a summary object\n"
	  "(\"type\":\"summary\"), then one object per row; csv: one\nline per row with a "
	  "header line" },
	{ "limit", OPT_VALUE, set_limit, offsetof(struct diff_opts, limit), "N",
	  "at most N rows (default: 50 in text, all otherwise)" },
	{ "all", OPT_FLAG, opt_set_true, offsetof(struct diff_opts, all), NULL,
	  "text: unchanged rows too" },
	{ "coverage", OPT_FLAG, opt_set_true, offsetof(struct diff_opts, coverage), NULL,
	  "coverage too: each function's and image's distinct\ninstructions executed (\"hit\"), "
	  "A, B and B - A" },
	{ "folded", OPT_FLAG, opt_set_true, offsetof(struct diff_opts, folded), NULL,
	  "differential folded stacks instead: \"stack countA countB\"\nper line "
	  "(flamegraph.pl's difffolded format), each count\nwhat 'efipt flame' gives that "
	  "stack in that run" },
};

static const struct opt_row diff_gate_rows[] = {
	{ "fail-if-grows", OPT_VALUE, set_grows, 0, "PCT", "B executed more than PCT percent "
	  "more instructions\nthan A (PCT: at most one decimal, 2.5): the whole run,\nor "
	  "with" },
	{ "function", OPT_VALUE, set_gate_name, 0, "NAME", "that function's inclusive "
	  "instructions (NAME or\nIMAGE`NAME; repeatable)" },
	{ "image", OPT_VALUE, set_gate_name, 0, "NAME", "that image's instructions (with or "
	  "without .efi, any\ncase; repeatable)" },
	{ "fail-if-new", OPT_FLAG, opt_set_true, offsetof(struct diff_opts, g.fail_new), NULL,
	  "a function ran in B that did not run in A" },
	{ "fail-if-coverage-lost", OPT_FLAG, opt_set_true,
	  offsetof(struct diff_opts, g.cov_lost), NULL, "a function executed fewer distinct "
	  "instructions in B\nthan in A (one that ran in A only: all of them);\nimplies "
	  "--coverage" },
};

#define NROWS(r) (sizeof(r) / sizeof((r)[0]))

int cmd_diff(int argc, char **argv)
{
	struct side sa = { .label = "A" }, sb = { .label = "B" };
	struct diff_opts o = { .a = &sa, .b = &sb, .g = { .grows = -1 } };
	struct diff_row *fr = NULL, *ir = NULL;
	struct diff_fold *folds = NULL;
	size_t nf = 0, ni = 0, nfold = 0;
	int rc = 2;
	/* the run is named in every message: "efipt diff: A: ..." */
	session_init(&sa.t, "diff: A");
	session_init(&sb.t, "diff: B");
	const struct opts_group groups[] = {
		{ NULL, diff_input_rows, NROWS(diff_input_rows), &o },
		{ "output", diff_output_rows, NROWS(diff_output_rows), &o },
		{ "CI gates (exit 3 when crossed; each crossing named on standard error)",
		  diff_gate_rows, NROWS(diff_gate_rows), &o },
	};
	const struct opts_cmd cmd = { "diff", diff_usage, diff_tail, groups, NROWS(groups), 2 };
	char *run[2];
	unsigned nrun = 0;
	int pr = opts_parse(&cmd, argc, argv, run, &nrun);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	const struct renames *rn = &o.rn;
	const struct gates *g = &o.g;
	int fmt = o.fmt;
	bool by_image = o.by_image, all = o.all, folded = o.folded, have_limit = o.have_limit;
	unsigned long long limit = o.limit;
	if (nrun != 2) {
		fprintf(stderr, CMD ": too few runs: give two run directories, A (before) and B "
			"(after)\n");
		opts_help(&cmd, stderr);
		goto out;
	}
	if ((g->nfn || g->nimg) && g->grows < 0) {
		fprintf(stderr, CMD ": --function and --image select what --fail-if-grows "
			"checks: give both\n");
		goto out;
	}
	if (folded && (by_image || fmt || all || have_limit || o.coverage)) {
		fprintf(stderr, CMD ": --folded prints stacks: no --by, --format, --all, "
			"--limit or --coverage with it\n");
		goto out;
	}
	if ((o.from || o.to) && (folded || o.coverage || g->cov_lost)) {
		fprintf(stderr, CMD ": --from/--to count a window of each run; the folded "
			"stacks and coverage are the whole run's: not with --folded, --coverage or "
			"--fail-if-coverage-lost\n");
		goto out;
	}
	/* B takes A's symbols unless it has its own */
	char e[4400];
	for (unsigned i = 0; i < o.nsym_a; i++)
		if (symopts_add_path(&sa.t.so, o.sym_a[i], e, sizeof(e)) ||
		    (!o.nsym_b && symopts_add_path(&sb.t.so, o.sym_a[i], e, sizeof(e)))) {
			fprintf(stderr, CMD ": %s\n", term_safe(e));
			goto out;
		}
	for (unsigned i = 0; i < o.nsym_b; i++)
		if (symopts_add_path(&sb.t.so, o.sym_b[i], e, sizeof(e))) {
			fprintf(stderr, CMD ": %s\n", term_safe(e));
			goto out;
		}
	struct side *sides[2] = { &sa, &sb };
	for (int k = 0; k < 2; k++) {
		struct side *s = sides[k];
		if (session_open(&s->t, run[k], SESSION_TRACE | SESSION_SYMBOLS))
			goto out;
		side_facts(s);
	}
	warn_machines(&sa, &sb);
	for (int k = 0; k < 2; k++) {
		struct side *s = sides[k];
		const struct diff_want want = { folded, o.coverage || g->cov_lost, o.from, o.to };
		if (diff_run_decode(&s->t, &s->fn, &want))
			goto out;
		for (unsigned i = 0; k && i < rn->n; i++)
			if (diff_run_rename(&s->fn, rn->new_name[i], rn->old[i])) {
				fprintf(stderr, CMD ": out of memory\n");
				goto out;
			}
		if (diff_run_by_image(&s->fn, &s->img)) {
			fprintf(stderr, CMD ": out of memory\n");
			goto out;
		}
	}
	/* time is compared where both runs have it in one unit; else said once */
	if (sa.fn.timed != sb.fn.timed)
		fprintf(stderr, CMD ": note: trace %s has timing packets, %s has none: "
			"instructions compared, not time\n", sa.fn.timed ? "A" : "B",
			sa.fn.timed ? "B" : "A");
	else if (sa.fn.timed && !both_timed(&sa, &sb))
		fprintf(stderr, CMD ": note: the TSC frequency of %s is known, of %s not "
			"(times in ns against TSC ticks): instructions compared, not time\n",
			sa.fn.ns ? "A" : "B", sa.fn.ns ? "B" : "A");
	if (!by_image && !folded && symbols_match(&sa, &sb, rn))
		goto out;
	if (diff_table(&sa.fn, &sb.fn, &fr, &nf) || diff_table(&sa.img, &sb.img, &ir, &ni) ||
	    (folded && diff_folds(&sa.fn, &sb.fn, &folds, &nfold))) {
		fprintf(stderr, CMD ": out of memory\n");
		goto out;
	}
	if (folded) {
		for (size_t i = 0; i < nfold; i++)
			printf("%s %" PRIu64 " %" PRIu64 "\n", folds[i].path, folds[i].a, folds[i].b);
	} else {
		const struct diff_row *r = by_image ? ir : fr;
		size_t n = by_image ? ni : nf;
		if (!have_limit)
			limit = fmt == 0 ? 50 : n;
		if (fmt == 0)
			print_text(&sa, &sb, r, n, by_image, all, limit, o.from, o.to);
		else
			print_rows(fmt, &sa, &sb, r, n, by_image, limit, o.from, o.to);
	}

	/* the firmware's boot-performance records, after the table */
	if (!folded && print_fpdt(&sa, &sb, fmt, all, have_limit ? limit : (unsigned long long)-1))
		goto out;
	rc = sa.fn.errs || sb.fn.errs ? 1 : 0;
	int gr = gates_check(g, &sa, &sb, fr, nf, ir, ni);
	if (gr)
		rc = gr;
out:
	free(fr);
	free(ir);
	free(folds);
	for (int k = 0; k < 2; k++) {
		struct side *s = k ? &sb : &sa;
		diff_run_free(&s->fn);
		diff_run_free(&s->img);
		session_free(&s->t);
	}
	return rc; /* main's finish_stdout() checks the writes */
}
