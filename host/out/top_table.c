/* efipt top's table; see top_table.h. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/out/csv_out.h"
#include "host/out/top_table.h"
#include "host/util/file_io.h"
#include "host/out/jsonl_out.h"

struct row {
	const char *image;
	char function[512];
	uint64_t excl, incl, calls;
	uint64_t excl_ns, incl_ns;
};

static bool timed; /* rows sort by time */

static int by_excl(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (timed && x->excl_ns != y->excl_ns)
		return x->excl_ns > y->excl_ns ? -1 : 1;
	if (x->excl != y->excl)
		return x->excl > y->excl ? -1 : 1;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	int c = strcmp(x->image, y->image);
	return c ? c : strcmp(x->function, y->function);
}

void top_time_text(char *buf, size_t cap, int64_t v, bool ns, bool sign)
{
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
	const char *sg = v < 0 ? "-" : sign ? "+" : "";
	if (ns)
		snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64, sg, m / 1000, m % 1000);
	else
		snprintf(buf, cap, "%s%" PRIu64, sg, m);
}

/* " %16s" of a time */
static void time_text(char *buf, size_t cap, uint64_t v, bool ns)
{
	char num[32];
	top_time_text(num, sizeof(num), (int64_t)v, ns, false);
	snprintf(buf, cap, " %16s", num);
}

/* A window's edge as text: "instruction 1200", "efipt.efi`efi_main",
 * what (the trace's start or end) when not given; buf: its room. */
static const char *where_text(char *buf, size_t cap, const struct fnwin_where *w,
			      const char *what)
{
	if (!w->set)
		snprintf(buf, cap, "%s", what);
	else if (w->is_fn)
		snprintf(buf, cap, "%s", term_safe(w->fn));
	else
		snprintf(buf, cap, "instruction %" PRIu64, w->index);
	return buf;
}

int top_table_write(const struct session *t, const struct callstack *cs, const struct profile *p,
		    const struct top_window *win, long errs, bool by_image, int fmt,
		    unsigned long long limit)
{
	const struct profile_fn *pf = win ? win->fn : p->fn;
	uint32_t pn = win ? win->n : p->n;
	uint64_t insns = win ? win->insns : cs->insns;
	uint64_t ticks = win ? win->ticks : cs->now - cs->time_first;
	/* rows: functions, or images (exclusive counts summed) */
	uint32_t nfn = t->st.nfn;
	struct row *rows = calloc(nfn ? nfn : 1, sizeof(*rows));
	if (!rows) {
		fprintf(stderr, "%s: out of memory\n", t->prefixed);
		return -1;
	}
	size_t nrows = 0;
	for (uint32_t fn = 0; fn < nfn; fn++) {
		const struct profile_fn *e = fn < pn ? &pf[fn] : NULL;
		if (!e || (!e->excl && !e->incl))
			continue;
		const char *image = symtab_fn_image(&t->st, fn);
		if (by_image) {
			size_t r = 0;
			while (r < nrows && strcmp(rows[r].image, image))
				r++;
			if (r == nrows) {
				rows[nrows].image = image;
				snprintf(rows[nrows].function, sizeof(rows[nrows].function), "%s",
					 *image ? image : "[unknown]");
				nrows++;
			}
			rows[r].excl += e->excl;
			rows[r].incl += e->excl;
			rows[r].excl_ns += session_ns(t, e->excl_t);
			continue;
		}
		struct row *w = &rows[nrows++];
		w->image = image;
		snprintf(w->function, sizeof(w->function), "%s%s", t->st.fn[fn].name,
			 t->st.fn[fn].inlined ? " [inlined]" : "");
		w->excl = e->excl;
		w->incl = e->incl;
		w->calls = e->calls;
		w->excl_ns = session_ns(t, e->excl_t);
		w->incl_ns = session_ns(t, e->incl_t);
	}
	timed = cs->timed;
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), by_excl);
	if (limit == ~0ull)
		limit = fmt == 0 ? 30 : nrows;
	if (limit > nrows)
		limit = nrows;
	uint64_t total = insns ? insns : 1;
	if (fmt == 0) {
		if (win) {
			char a[600], b[600];
			printf("window: from %s to %s (excluded): %" PRIu64 " instructions (the "
			       "shares below are of these)\n", where_text(a, sizeof(a), win->from, "the trace's start"),
			       where_text(b, sizeof(b), win->to, "the trace's end"), insns);
		}
		printf("%" PRIu64 " instructions, %" PRIu64 " gaps (%ld decode error%s), %" PRIu64
		       " returns without a matching call", cs->insns, cs->gaps, errs,
		       errs == 1 ? "" : "s", cs->unmatched_rets);
		if (cs->too_deep)
			printf(", %" PRIu64 " stacks cut at %u frames", cs->too_deep, CS_MAX_DEPTH);
		putchar('\n');
		if (timed) {
			uint64_t span = session_ns(t, ticks);
			if (t->tsc_hz)
				printf("%" PRIu64 ".%03" PRIu64 " us traced (TSC %" PRIu64 " Hz from %s)",
				       span / 1000, span % 1000, t->tsc_hz, t->tsc_src);
			else
				printf("%" PRIu64 " TSC ticks traced (TSC frequency unknown: times in "
				       "ticks; --tsc-hz)", span);
			if (cs->time_back)
				printf(", %" PRIu64 " time estimates went back (held)", cs->time_back);
			putchar('\n');
		}
		const char *tu = t->tsc_hz ? "us" : "ticks";
		if (by_image && timed)
			printf("%14s %7s %14s%s  image\n", "insns", "share", "time_", tu);
		else if (by_image)
			printf("%14s %7s  image\n", "insns", "share");
		else if (timed)
			printf("%14s %7s %14s %7s %10s %14s%s %14s%s  function\n", "excl", "share",
			       "incl", "share", "calls", "excl_", tu, "incl_", tu);
		else
			printf("%14s %7s %14s %7s %10s  function\n", "excl", "share", "incl",
			       "share", "calls");
		for (size_t r = 0; r < limit; r++) {
			const struct row *w = &rows[r];
			char te[40] = "", ti[40] = "";
			if (timed) {
				time_text(te, sizeof(te), w->excl_ns, t->tsc_hz != 0);
				time_text(ti, sizeof(ti), w->incl_ns, t->tsc_hz != 0);
			}
			if (by_image) {
				printf("%14" PRIu64 " %6.2f%%%s  %s\n", w->excl,
				       100.0 * (double)w->excl / (double)total, te,
				       term_safe(w->function));
				continue;
			}
			char name[700];
			snprintf(name, sizeof(name), "%s%s%s", w->image, *w->image ? "`" : "",
				 w->function);
			printf("%14" PRIu64 " %6.2f%% %14" PRIu64 " %6.2f%% %10" PRIu64 "%s%s  %s\n",
			       w->excl, 100.0 * (double)w->excl / (double)total, w->incl,
			       100.0 * (double)w->incl / (double)total, w->calls, te, ti,
			       term_safe(name));
		}
	} else if (fmt == 2) {
		printf(by_image ? "image,insns" : "image,function,excl,incl,calls");
		printf(!timed ? "\n" : by_image ? ",time_ns\n" : ",excl_ns,incl_ns\n");
	}
	for (size_t r = 0; fmt && r < limit; r++) {
		const struct row *w = &rows[r];
		if (fmt == 1) {
			json_t *o = by_image
				? json_pack("{s:s,s:I}", "image", w->function, "insns", (json_int_t)w->excl)
				: json_pack("{s:s,s:s,s:I,s:I,s:I}", "image", w->image, "function",
					    w->function, "excl", (json_int_t)w->excl, "incl",
					    (json_int_t)w->incl, "calls", (json_int_t)w->calls);
			if (o && timed && by_image) {
				json_object_set_new(o, "time_ns", json_integer((json_int_t)w->excl_ns));
			} else if (o && timed) {
				json_object_set_new(o, "excl_ns", json_integer((json_int_t)w->excl_ns));
				json_object_set_new(o, "incl_ns", json_integer((json_int_t)w->incl_ns));
			}
			jsonl_put(o);
		} else {
			csv_field(by_image ? w->function : w->image);
			if (by_image) {
				printf(",%" PRIu64, w->excl);
				if (timed)
					printf(",%" PRIu64, w->excl_ns);
				putchar('\n');
				continue;
			}
			putchar(',');
			csv_field(w->function);
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64, w->excl, w->incl, w->calls);
			if (timed)
				printf(",%" PRIu64 ",%" PRIu64, w->excl_ns, w->incl_ns);
			putchar('\n');
		}
	}
	free(rows);
	return 0;
}
