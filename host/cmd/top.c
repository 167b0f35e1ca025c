/*
 * efipt top: functions by exclusive and inclusive instructions, with call
 * counts and their share of the trace (or, --by image, images by
 * instructions), from the call-stack model over the decoded trace.
 */
#include <inttypes.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/out/top_table.h"
#include "host/stack/analysis.h"
#include "host/stack/inline_frames.h"
#include "host/stack/profile.h"
#include "host/stack/profile_window.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

static const char top_usage[] =
	"usage: efipt top RUNDIR [--symbols PATH]... [OPTIONS]\n"
	"       efipt top --pt TRACE --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
	"Functions by instructions executed: exclusive (in the function itself),\n"
	"inclusive (while it is on the call stack), calls, share of the trace.\n\n";

static const char top_tail[] =
	"A trace with timing packets (TSC, MTC, CYC) also gets exclusive and\n"
	"inclusive time, in us (ns when the TSC frequency is unknown: see\n"
	"--tsc-hz), sorted by exclusive time.\n"
	"With --from/--to, the counts are those of the window: a function already\n"
	"on the stack when it opens counts its inclusive instructions from there;\n"
	"decoding stops where it closes.\n"
	"Code in no listed image, or in an image without symbols, counts as\n"
	"[unknown] (see 'efipt symbols').\n\n"
	"Exit status: 0, 1 if the trace had decode errors (counted as gaps), 2 on\n"
	"usage errors, unreadable inputs or a write error.\n";

struct top_opts {
	bool by_image, inline_frames, have_limit;
	int fmt;		/* 0 text, 1 jsonl, 2 csv */
	unsigned long long limit;
	struct fnwin_where from, to;
};

static int set_limit(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct top_opts *o = ctx;
	if (opts_set_u64(ctx, r, v, err))
		return -1;
	o->have_limit = true;
	return 0;
}

static const struct opt_row top_rows[] = {
	{ "by", OPT_VALUE, opts_set_by, offsetof(struct top_opts, by_image), "function|image",
	  "what to count by (default function)" },
	{ "format", OPT_VALUE, opts_set_table_format, offsetof(struct top_opts, fmt),
	  "text|jsonl|csv", "jsonl: one object per row: "
	  "image, function,\nexcl, incl, calls; csv: the same columns with a\nheader; a trace "
	  "with timing packets adds excl_ns,\nincl_ns" },
	{ "limit", OPT_VALUE, set_limit, offsetof(struct top_opts, limit), "N",
	  "at most N rows (default: 30 in text, all otherwise)" },
	FNWIN_OPT_ROWS(struct top_opts, "count only"),
	{ "inline", OPT_FLAG, opt_set_true, offsetof(struct top_opts, inline_frames), NULL,
	  "inline frames from DWARF as functions of their own\n(\"name [inlined]\"): "
	  "instructions count for the\ninnermost inline frame (without it, for the\nconcrete "
	  "function)" },
};

int cmd_top(int argc, char **argv)
{
	struct session t;
	struct top_opts o = { 0 };
	struct callstack cs;
	struct profile p = { 0 };
	struct inl_frames x = { 0 };
	struct profwin win;
	struct profile_fn *wfn = NULL;
	int rc = 2;
	memset(&win, 0, sizeof(win));
	session_init(&t, "top");
	memset(&cs, 0, sizeof(cs));
	const struct session_cmd sc = { "top", top_usage, top_tail, true,
					"output", top_rows,
					sizeof(top_rows) / sizeof(top_rows[0]), &o };
	char *run;
	int pr = session_parse_args(&t, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	bool by_image = o.by_image, have_limit = o.have_limit;
	int fmt = o.fmt;
	unsigned long long limit = o.limit;
	bool windowed = o.from.set || o.to.set;
	if (fnwin_empty("efipt top", &o.from, &o.to))
		goto out;
	if (session_open(&t, run, SESSION_TRACE | SESSION_SYMBOLS))
		goto out;
	struct cs_listener ls = profile_listener(&p);
	if (windowed)
		ls = profwin_listener(&win, &o.from, &o.to, &p, &t.st, &ls);
	if (o.inline_frames) {
		if (symtab_use_inline(&t.st) || inl_frames_init(&x, &ls)) {
			fprintf(stderr, "efipt top: out of memory\n");
			goto out;
		}
		ls = inl_frames_listener(&x);
	}
	if (cs_init(&cs, &t.st, &ls)) {
		fprintf(stderr, "efipt top: out of memory\n");
		goto out;
	}
	cs.tree = false;
	/* a window stops decoding where it closes */
	long errs = analysis_decode(&t, 0, &cs, o.to.set && !o.to.is_fn ? o.to.index : 0,
				    windowed ? &win.done : NULL);
	if (errs < 0)
		goto out;
	if (p.oom || x.oom || win.oom || win.win.oom) {
		fprintf(stderr, "efipt top: out of memory\n");
		goto out;
	}
	struct top_window tw = { 0 }, *twp = NULL;
	if (windowed) {
		struct profwin_at at;
		char why[600];
		int wr = profwin_counts(&win, &cs, &wfn, &tw.n, &at, why, sizeof(why));
		if (wr) {
			fprintf(stderr, "efipt top: %s\n", wr < 0 ? "out of memory" : why);
			goto out;
		}
		tw.fn = wfn;
		tw.insns = at.insns;
		tw.ticks = at.now;
		tw.from = &o.from;
		tw.to = &o.to;
		twp = &tw;
	}
	if (top_table_write(&t, &cs, &p, twp, errs, by_image, fmt, have_limit ? limit : ~0ull))
		goto out;
	rc = errs ? 1 : 0;
out:
	profwin_free(&win);
	free(wfn);
	cs_free(&cs);
	inl_frames_free(&x);
	profile_free(&p);
	session_free(&t);
	return rc; /* main's finish_stdout() checks the writes */
}
