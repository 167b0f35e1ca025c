/* efipt diff's FPDT section; see fpdt_diff.h. */
#include "host/diff/fpdt_diff.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/diff/diff_table.h"
#include "host/util/file_io.h"
#include "host/out/jsonl_out.h"

struct keyed {
	char record[FPDT_NAME_MAX + 48];
	uint64_t v;
};

static int by_record(const void *x, const void *y)
{
	return strcmp(((const struct keyed *)x)->record, ((const struct keyed *)y)->record);
}

/* One side's values by record name, sorted. NULL out of memory. */
static struct keyed *side_rows(const struct fpdt_run *f, size_t *n)
{
	*n = 0;
	struct keyed *k = malloc((f->nspan + FPDT_BOOT_FIELDS + 3) * sizeof(*k));
	if (!k)
		return NULL;
	for (int i = 0; f->have_boot && i < FPDT_BOOT_FIELDS; i++) {
		snprintf(k[*n].record, sizeof(k[*n].record), "basic boot %s",
			 fpdt_boot_field_name((enum fpdt_boot_field)i));
		k[(*n)++].v = f->boot[i];
	}
	/* the two durations the basic boot record gives */
	const uint64_t *t = f->boot;
	if (f->have_boot && t[FPDT_RESET_END] && t[FPDT_LOADER_LOAD] >= t[FPDT_RESET_END]) {
		snprintf(k[*n].record, sizeof(k[*n].record), "basic boot ResetEnd to "
			 "OsLoaderLoadImageStart (duration)");
		k[(*n)++].v = t[FPDT_LOADER_LOAD] - t[FPDT_RESET_END];
	}
	if (f->have_boot && t[FPDT_EBS_ENTRY] && t[FPDT_EBS_EXIT] >= t[FPDT_EBS_ENTRY]) {
		snprintf(k[*n].record, sizeof(k[*n].record), "basic boot ExitBootServices "
			 "(duration)");
		k[(*n)++].v = t[FPDT_EBS_EXIT] - t[FPDT_EBS_ENTRY];
	}
	for (size_t i = 0; i < f->nspan; i++) {
		const struct fpdt_span *s = &f->span[i];
		if (s->single)
			continue; /* an event has no duration */
		if (s->nth)
			snprintf(k[*n].record, sizeof(k[*n].record), "%s %s #%u", s->what, s->name,
				 s->nth + 1);
		else
			snprintf(k[*n].record, sizeof(k[*n].record), "%s %s", s->what, s->name);
		k[(*n)++].v = s->dur;
	}
	if (*n)
		qsort(k, *n, sizeof(*k), by_record);
	return k;
}

static uint64_t change(const struct fpdt_diff_row *r)
{
	return r->a > r->b ? r->a - r->b : r->b - r->a;
}

static int by_change(const void *x, const void *y)
{
	const struct fpdt_diff_row *a = x, *b = y;
	bool one_a = !(a->in_a && a->in_b), one_b = !(b->in_a && b->in_b);
	if (one_a != one_b)
		return one_a ? -1 : 1;
	uint64_t ca = change(a), cb = change(b);
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(a->record, b->record);
}

int fpdtdiff_rows(const struct fpdt_run *a, const struct fpdt_run *b, struct fpdt_diff_row **rows,
		  size_t *n)
{
	size_t na, nb;
	*rows = NULL;
	*n = 0;
	struct keyed *ka = side_rows(a, &na), *kb = side_rows(b, &nb);
	struct fpdt_diff_row *r = malloc((na + nb + 1) * sizeof(*r));
	if (!ka || !kb || !r) {
		free(ka);
		free(kb);
		free(r);
		return -1;
	}
	size_t i = 0, j = 0, m = 0;
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(ka[i].record, kb[j].record);
		struct fpdt_diff_row *w = &r[m++];
		memset(w, 0, sizeof(*w));
		snprintf(w->record, sizeof(w->record), "%s", c <= 0 ? ka[i].record : kb[j].record);
		if (c <= 0) {
			w->in_a = true;
			w->a = ka[i++].v;
		}
		if (c >= 0) {
			w->in_b = true;
			w->b = kb[j++].v;
		}
	}
	free(ka);
	free(kb);
	if (m)
		qsort(r, m, sizeof(*r), by_change);
	*rows = r;
	*n = m;
	return 0;
}

/* ns as us with three decimals, after sign */
static void us_text(char *buf, size_t cap, const char *sign, uint64_t ns)
{
	snprintf(buf, cap, "%s%" PRIu64 ".%03u", sign, ns / 1000, (unsigned)(ns % 1000));
}

static const char *status(const struct fpdt_diff_row *r)
{
	return !r->in_b ? "only A" : !r->in_a ? "only B" : r->a == r->b ? "same" : "changed";
}

static void side_line(const char *label, const struct fpdt_run *f)
{
	if (!f->present) {
		printf("  %s: no fpdt.bin (the firmware published no FPDT, or efipt.efi did not "
		       "save it)\n", label);
		return;
	}
	printf("  %s: %zu measurements%s", label, f->nspan, f->have_boot ? ", basic boot" : "");
	if (f->ndamage)
		printf(", %zu damaged records skipped", f->ndamage);
	printf("\n");
}

void fpdtdiff_print(int fmt, const struct fpdt_run *a, const struct fpdt_run *b,
		    const struct fpdt_diff_row *r, size_t n, bool all, unsigned long long limit)
{
	if (fmt == 1) {
		for (size_t i = 0; i < n && i < limit; i++) {
			const struct fpdt_diff_row *w = &r[i];
			json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:s}", "type", "fpdt", "record",
					      w->record, "a_ns", (json_int_t)w->a, "b_ns",
					      (json_int_t)w->b, "delta_ns",
					      (json_int_t)diff_delta(w->a, w->b), "status", status(w));
			jsonl_put(o);
		}
		return;
	}
	size_t changed = 0;
	for (size_t i = 0; i < n; i++)
		changed += strcmp(status(&r[i]), "same") != 0;
	printf("\nfirmware boot performance records (FPDT; durations, basic boot times since "
	       "reset; us):\n");
	side_line("A", a);
	side_line("B", b);
	if (!changed) {
		printf("  no change: %zu records the same\n", n);
		if (!all)
			return;
	} else {
		printf("  %zu of %zu records changed\n", changed, n);
	}
	printf("%14s %14s %14s %9s  %-7s record\n", "A us", "B us", "B-A us", "B/A", "");
	unsigned long long shown = 0;
	for (size_t i = 0; i < n && shown < limit; i++) {
		const struct fpdt_diff_row *w = &r[i];
		const char *st = status(w);
		if (!all && !strcmp(st, "same"))
			continue;
		shown++;
		char ratio[32];
		if (w->a && w->in_b)
			snprintf(ratio, sizeof(ratio), "%.4f", diff_ratio(w->a, w->b));
		else
			snprintf(ratio, sizeof(ratio), "-");
		int64_t d = diff_delta(w->a, w->b);
		char ta[32], tb[32], td[40];
		us_text(ta, sizeof(ta), "", w->a);
		us_text(tb, sizeof(tb), "", w->b);
		us_text(td, sizeof(td), d < 0 ? "-" : "+",
			d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
		printf("%14s %14s %14s %9s  %-7s %s\n", ta, tb, td, ratio,
		       strcmp(st, "changed") && strcmp(st, "same") ? st : "", term_safe(w->record));
	}
	size_t hidden = (all ? n : changed) - shown;
	if (hidden)
		printf("(%zu more rows: --limit)\n", hidden);
}
