/*
 * The comparison of efipt diff (host/diff/diff_table.c, diff_run.c) on
 * hand-made runs: matching by name, the order of the rows, the gates'
 * arithmetic at its edges, renamed images in rows and stack frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "host/diff/diff_run.h"
#include "host/diff/diff_table.h"

/* A run of n functions "image`name" with excl/incl/calls, sorted by name
 * as diff_run_decode() leaves them. */
static void run_of(struct diff_run *r, const char *const *spec, const uint64_t *v, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->fn = calloc(n ? n : 1, sizeof(*r->fn));
	for (size_t i = 0; i < n; i++) {
		const char *tick = strchr(spec[i], '`');
		r->fn[i].image = strndup(spec[i], (size_t)(tick - spec[i]));
		r->fn[i].name = strdup(tick + 1);
		r->fn[i].excl = v[3 * i];
		r->fn[i].incl = v[3 * i + 1];
		r->fn[i].calls = v[3 * i + 2];
		r->insns += v[3 * i];
	}
	r->nfn = n;
}

static const struct diff_row *find(const struct diff_row *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

static void matching(void)
{
	/* the same names in both, one gone, one new, one unchanged */
	static const char *const a_names[] = { "App`Fib", "App`Gone", "App`Run", "Dxe`Tick" };
	static const uint64_t a_v[] = { 100, 100, 10, 7, 7, 1, 50, 300, 1, 20, 20, 5 };
	static const char *const b_names[] = { "App`Fib", "App`New", "App`Run", "Dxe`Tick" };
	static const uint64_t b_v[] = { 100, 100, 10, 3, 3, 1, 80, 340, 1, 15, 15, 4 };
	struct diff_run a, b;
	struct diff_row *r = NULL;
	size_t n = 0;
	run_of(&a, a_names, a_v, 4);
	run_of(&b, b_names, b_v, 4);
	CHECK(!diff_table(&a, &b, &r, &n) && n == 5, "diff_table: 5 rows of 4 + 4 names");
	const struct diff_row *fib = find(r, n, "Fib"), *gone = find(r, n, "Gone"),
			      *nw = find(r, n, "New"), *run = find(r, n, "Run");
	CHECK(fib && fib->in_a && fib->in_b && fib->a_excl == 100 && fib->b_excl == 100,
	      "diff_table: one name, one row with both sides");
	CHECK(gone && gone->in_a && !gone->in_b && gone->a_excl == 7 && !gone->b_excl,
	      "diff_table: a function of A only");
	CHECK(nw && !nw->in_a && nw->in_b && nw->b_incl == 3, "diff_table: a function of B only");
	CHECK(run && run->a_incl == 300 && run->b_incl == 340 && run->a_calls == 1,
	      "diff_table: inclusive and calls of each side");
	/* order: |B - A| of exclusive (Run 30, Gone 7, Tick 5, New 3, Fib 0) */
	CHECK(n == 5 && !strcmp(r[0].name, "Run") && !strcmp(r[1].name, "Gone") &&
	      !strcmp(r[2].name, "Tick") && !strcmp(r[3].name, "New") && !strcmp(r[4].name, "Fib"),
	      "diff_table: sorted by the size of the change, growing or shrinking");
	free(r);
	/* by image: App 157 -> 183, Dxe 20 -> 15 */
	struct diff_run ia, ib;
	CHECK(!diff_run_by_image(&a, &ia) && !diff_run_by_image(&b, &ib) && ia.nfn == 2 &&
	      ia.fn[0].excl == 157 && ib.fn[0].excl == 183 && ia.fn[1].excl == 20 &&
	      !strcmp(ia.fn[1].image, "Dxe"), "diff_run_by_image: instructions per image");
	diff_run_free(&ia);
	diff_run_free(&ib);
	/* a renamed image: "App" is "BOOTX64" in B */
	free(b.fn[0].image);
	b.fn[0].image = strdup("BOOTX64");
	free(b.fn[2].image);
	b.fn[2].image = strdup("BOOTX64");
	b.stk = calloc(2, sizeof(*b.stk));
	b.stk[0].path = strdup("BOOTX64`Run;BOOTX64`Fib");
	b.stk[0].insns = 5;
	b.stk[1].path = strdup("Dxe`Tick;BOOTX64`Run;BOOTX64x`F");
	b.stk[1].insns = 6;
	b.nstk = 2;
	CHECK(!diff_run_rename(&b, "BOOTX64", "App") && !strcmp(b.fn[0].image, "App") &&
	      !strcmp(b.fn[0].name, "Fib") && !strcmp(b.fn[3].image, "Dxe"),
	      "diff_run_rename: the image's functions renamed, sorted again");
	CHECK(b.nstk == 2 && !strcmp(b.stk[0].path, "App`Run;App`Fib") &&
	      !strcmp(b.stk[1].path, "Dxe`Tick;App`Run;BOOTX64x`F"),
	      "diff_run_rename: its stack frames renamed (only frames of that image)");
	diff_run_free(&a);
	diff_run_free(&b);
}

static void folds(void)
{
	struct diff_run a = { 0 }, b = { 0 };
	struct diff_stack sa[] = { { "x`main", 5 }, { "x`main;x`f", 10 } };
	struct diff_stack sb[] = { { "x`main", 5 }, { "x`main;x`g", 7 } };
	a.stk = sa;
	a.nstk = 2;
	b.stk = sb;
	b.nstk = 2;
	struct diff_fold *f = NULL;
	size_t n = 0;
	CHECK(!diff_folds(&a, &b, &f, &n) && n == 3 && !strcmp(f[0].path, "x`main") &&
	      f[0].a == 5 && f[0].b == 5 && !strcmp(f[1].path, "x`main;x`f") && f[1].a == 10 &&
	      !f[1].b && !strcmp(f[2].path, "x`main;x`g") && !f[2].a && f[2].b == 7,
	      "diff_folds: stacks of either run, 0 where one did not run it");
	free(f);
}

static void arithmetic(void)
{
	/* 1000 -> 1050 is +5.0%: crosses 4.9, not 5.0 */
	CHECK(diff_grows(1000, 1050, 49) && !diff_grows(1000, 1050, 50),
	      "diff_grows: exactly at the percentage is not more");
	CHECK(!diff_grows(1000, 1000, 0) && diff_grows(1000, 1001, 0) && !diff_grows(1000, 999, 0),
	      "diff_grows: 0%: any growth, shrinking never");
	CHECK(diff_grows(0, 1, 1000000) && !diff_grows(0, 0, 0), "diff_grows: from nothing");
	CHECK(!diff_grows(UINT64_MAX / 2, UINT64_MAX / 2 + UINT64_MAX / 20, 1000) &&
	      diff_grows(UINT64_MAX / 2, UINT64_MAX, 999), "diff_grows: no overflow near 2^64");
	CHECK(diff_delta(5, 3) == -2 && diff_delta(3, 5) == 2 && diff_delta(0, UINT64_MAX) == INT64_MAX &&
	      diff_delta(UINT64_MAX, 0) == -INT64_MAX, "diff_delta: signed, saturated");
	CHECK(diff_ratio(4, 6) == 1.5 && diff_ratio(0, 6) == 0.0, "diff_ratio");
}

/* What interrupts ran: a row of its own per function and image, matched
 * with the other run's interrupt row, never with a code row. */
static void interrupts(void)
{
	static const char *const a_names[] = { "App`Run", "Dxe`Tick", "Dxe`Tick" };
	static const uint64_t a_v[] = { 50, 50, 1, 5, 5, 1, 20, 20, 2 };
	static const char *const b_names[] = { "App`Run", "Dxe`Tick" };
	static const uint64_t b_v[] = { 50, 50, 1, 35, 35, 3 };
	struct diff_run a, b, ia, ib;
	struct diff_row *r = NULL;
	size_t n = 0;
	run_of(&a, a_names, a_v, 3);
	run_of(&b, b_names, b_v, 2);
	a.fn[2].irq = true;	/* A: Tick in code and in interrupts */
	b.fn[1].irq = true;	/* B: in interrupts only */
	CHECK(!diff_table(&a, &b, &r, &n) && n == 3, "diff_table: code and interrupt rows apart");
	CHECK(n == 3 && r[0].irq && r[0].in_a && r[0].in_b && r[0].a_excl == 20 &&
	      r[0].b_excl == 35 && r[0].b_calls == 3 && !r[1].irq && r[1].in_a && !r[1].in_b &&
	      !strcmp(r[1].name, "Tick") && r[1].a_excl == 5 && !r[2].irq &&
	      !strcmp(r[2].name, "Run") && r[2].b_excl == 50,
	      "diff_table: an interrupt row matches the other's interrupt row only");
	free(r);
	CHECK(!diff_run_by_image(&a, &ia) && !diff_run_by_image(&b, &ib) && ia.nfn == 3 &&
	      ib.nfn == 2 && !strcmp(ia.fn[1].image, "Dxe") && !ia.fn[1].irq &&
	      ia.fn[1].excl == 5 && ia.fn[2].irq && ia.fn[2].excl == 20 && ib.fn[1].irq &&
	      ib.fn[1].excl == 35, "diff_run_by_image: an image's code and interrupt rows");
	CHECK(!diff_table(&ia, &ib, &r, &n) && n == 3 && r[0].irq && r[0].a_excl == 20 &&
	      r[0].b_excl == 35, "diff_table by image: interrupt rows matched");
	free(r);
	diff_run_free(&ia);
	diff_run_free(&ib);
	diff_run_free(&a);
	diff_run_free(&b);
}

int main(void)
{
	matching();
	interrupts();
	folds();
	arithmetic();
	return check_exit();
}
