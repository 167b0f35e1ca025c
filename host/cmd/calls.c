/*
 * efipt calls: the call trace, one line per function entered (call, tail
 * call, interrupt, a new bottom after a gap), indented by stack depth, as
 * `perf script --call-trace` shows it: the time at entry (us since the
 * trace's first timing packet) where the trace has timing packets, else the
 * instruction index; the function (or Image+0xRVA without symbols), with
 * --lines its source line.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/input/debuglog.h"
#include "host/input/irqlog.h"
#include "host/stack/analysis.h"
#include "host/stack/fn_window.h"
#include "host/stack/inline_frames.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

static const char calls_usage[] =
	"usage: efipt calls RUNDIR [--symbols PATH]... [OPTIONS]\n"
	"       efipt calls --pt TRACE --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
	"The call trace: per function entered, the time (us since the trace's first\n"
	"timing packet, ns precision; TSC ticks when the TSC frequency is unknown)\n"
	"where the trace has timing packets, else the instruction index, the function\n"
	"indented by its stack depth, and how it was entered when not by a call\n"
	"(tail call, jump, interrupt, root, unknown caller). '-- gap --' marks where\n"
	"the trace lost the flow (every frame ends there). The firmware's DEBUG lines\n"
	"that efipt qemu recorded (debugport.jsonl; efipt log) are shown where they\n"
	"were written: '# TEXT', one level inside the function that wrote them.\n"
	"An interrupt whose vector efipt qemu recorded (interrupts.jsonl, QEMU 9.2 on)\n"
	"is named by it: '(timer interrupt, vector 0x20)' for the local APIC timer's,\n"
	"'(#PF page fault, vector 0x0e)' for an exception, '(interrupt vector 0x30)'.\n\n";

static const char calls_tail[] =
	"Decoding stops at --to: the rest of the trace is not read.\n\n"
	"Exit status: 0, 1 if the trace had decode errors, 2 on usage errors,\n"
	"unreadable inputs or a write error.\n";

struct copts {
	struct symtab *st;
	const struct session *t;
	bool index;			/* --index */
	bool inline_frames;		/* --inline */
	unsigned long long depth;
	struct fnwin_where from, to;	/* --from/--to as given */
	struct fnwin_span w;		/* the window they make */
	const char *function, *image;
	bool lines, filter;
	bool no_log;			/* --no-log */
	/* the DEBUG lines of the decoded CPU, by instruction index; next: the
	 * first not yet shown */
	const struct dbglog_line **dbg;
	size_t ndbg, next_dbg;
	struct irqlog irq;		/* the vectors of the interrupts */
	unsigned cpu;			/* the decoded CPU */
	/* per stack depth: the depth of the outermost matching frame (with
	 * --inline the stack is deeper than the model's, so it grows) */
	uint32_t *top;
	uint32_t top_cap;
	bool oom;
	bool shown;			/* a matching frame was entered */
};

/* Does --function (IMAGE`NAME or NAME, among inline functions too with
 * --inline) or --image name something of the traced images? Says so when
 * not: an empty call trace would look like one that never called it. */
static bool names_something(const struct session *t, const struct copts *o, bool inl)
{
	if (!o->function && !o->image)
		return true;
	const char *want = o->function ? o->function : o->image;
	const char *tick = o->function ? strchr(o->function, '`') : NULL;
	const char *fname = tick ? tick + 1 : want;
	bool image_named = false;
	for (unsigned i = 0; i < t->images.n; i++) {
		const struct image *im = &t->images.v[i];
		if (o->image || tick) {
			size_t n = o->image ? strlen(want) : (size_t)(tick - want);
			if (strlen(im->name) != n || strncmp(im->name, want, n))
				continue;
			image_named = true;
			if (o->image)
				return true;
		}
		for (size_t k = 0; im->sf && k < im->sf->nfuncs; k++)
			if (!strcmp(im->sf->funcs[k].name, fname))
				return true;
		for (size_t k = 0; inl && im->sf && k < im->sf->ninl; k++)
			if (!strcmp(im->sf->inl[k].name, fname))
				return true;
	}
	if (o->image)
		fprintf(stderr, "efipt calls: --image %s: no traced image has that name ('efipt "
			"symbols' lists them)\n", term_safe(want));
	else if (tick && !image_named)
		fprintf(stderr, "efipt calls: --function %s: no traced image is named %.*s\n",
			term_safe(want), (int)(tick - want), want);
	else
		fprintf(stderr, "efipt calls: --function %s: no function of that name in the "
			"symbols of the traced images%s ('efipt symbols' says what each has)\n",
			term_safe(want), inl ? " (inline functions included)" : "");
	return false;
}

static int set_function(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)err;
	struct copts *o = ctx;
	o->function = !strcmp(r->name, "function") ? v : NULL;
	o->image = !strcmp(r->name, "image") ? v : NULL;
	return 0;
}

static const struct opt_row calls_rows[] = {
	{ "depth", OPT_VALUE, opts_set_u64, offsetof(struct copts, depth), "N",
	  "only N levels (below the --function/--image frame)" },
	{ "function", OPT_VALUE, set_function, 0, "NAME", "only calls under a function NAME "
	  "(or IMAGE`NAME)" },
	{ "image", OPT_VALUE, set_function, 0, "NAME", "only calls under a function of image "
	  "NAME" },
	FNWIN_OPT_ROWS(struct copts, "only entries"),
	{ "lines", OPT_FLAG, opt_set_true, offsetof(struct copts, lines), NULL,
	  "the source line (DWARF) of each function entered" },
	{ "inline", OPT_FLAG, opt_set_true, offsetof(struct copts, inline_frames), NULL,
	  "inline frames from DWARF as calls of their own\n(\"name [inlined]\", entered where "
	  "the inline\nchain changes)" },
	{ "index", OPT_FLAG, opt_set_true, offsetof(struct copts, index), NULL,
	  "the instruction index even where the trace has time" },
	{ "no-log", OPT_FLAG, opt_set_true, offsetof(struct copts, no_log), NULL,
	  "leave out the firmware's DEBUG lines" },
};

static bool matches(const struct copts *o, uint32_t fn)
{
	const struct symfn *f = &o->st->fn[fn];
	const char *image = f->image >= 0 ? o->st->img[f->image].name : "";
	if (o->image)
		return !strcmp(image, o->image);
	const char *tick = strchr(o->function, '`');
	if (tick)
		return !strncmp(o->function, image, (size_t)(tick - o->function)) &&
		       !image[tick - o->function] && !strcmp(tick + 1, f->name);
	return !strcmp(o->function, f->name);
}

/* The first column: the time since the first timing packet, or the
 * instruction index (--index, or no time yet). */
static void stamp_at(const struct copts *o, const struct callstack *cs, uint64_t insn)
{
	if (o->index || !cs->timed) {
		printf("%12" PRIu64, insn);
		return;
	}
	uint64_t v = session_ns(o->t, cs->now - cs->time_first);
	char b[32];
	if (o->t->tsc_hz)
		snprintf(b, sizeof(b), "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
	else
		snprintf(b, sizeof(b), "%" PRIu64, v);
	printf("%12s", b);
}

static void stamp(const struct copts *o, const struct callstack *cs)
{
	stamp_at(o, cs, cs->insns);
}

/* The DEBUG lines written before instruction cs->insns, in the function
 * at depth d (the time: the model's now, the latest it knows). */
static void show_debug_lines(struct copts *o, const struct callstack *cs, uint32_t d)
{
	while (o->next_dbg < o->ndbg && (uint64_t)o->dbg[o->next_dbg]->insn < cs->insns) {
		const struct dbglog_line *l = o->dbg[o->next_dbg++];
		uint64_t at = (uint64_t)l->insn;
		uint32_t base = o->filter ? (d && d < o->top_cap ? o->top[d] : 0) : 1;
		if ((o->filter && !base) || at < o->w.from || (o->w.to && at >= o->w.to))
			continue;
		uint32_t rel = d + 1 - base;
		if (o->depth && rel > o->depth)
			continue;
		stamp_at(o, cs, at);
		printf("  %*s# %s\n", (int)(2 * rel), "", term_safe(l->text));
	}
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct copts *o = ctx;
	uint32_t d = cs->depth;
	fnwin_span_at(&o->w, cs, f->fn);
	show_debug_lines(o, cs, d - 1); /* before the call: in its caller */
	if (d >= o->top_cap) {
		uint32_t cap = o->top_cap ? o->top_cap * 2 : CS_MAX_DEPTH + 1;
		while (cap <= d)
			cap *= 2;
		uint32_t *a = realloc(o->top, (size_t)cap * sizeof(*a));
		if (!a) {
			o->oom = true;
			return;
		}
		o->top = a;
		o->top_cap = cap;
	}
	uint32_t base = d > 1 ? o->top[d - 1] : 0;
	if (o->filter && !base && matches(o, f->fn))
		base = d;
	o->top[d] = base;
	if (o->filter && !base)
		return;
	o->shown = true;
	uint32_t rel = d - (o->filter ? base : 1);
	if ((o->depth && rel >= o->depth) || cs->insns < o->w.from || (o->w.to && cs->insns >= o->w.to))
		return;
	char name[700];
	const struct symfn *fn = &o->st->fn[f->fn];
	if (fn->image >= 0 && !strcmp(fn->name, "[unknown]"))
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, o->st->img[fn->image].name,
			 f->ip - o->st->img[fn->image].base);
	else if (fn->image < 0)
		snprintf(name, sizeof(name), "[unknown] 0x%" PRIx64, f->ip);
	else
		symtab_fn_name(o->st, f->fn, name, sizeof(name));
	static const char *how[] = { " (root)", "", " (tail call)", " (jump)", " (interrupt)",
				     " (unknown caller)" };
	const char *kind = f->enter < 6 ? how[f->enter] : "";
	const char *vec = f->enter == CS_ENTER_INTERRUPT
				  ? irqlog_name(irqlog_find(&o->irq, o->cpu, cs->insns)) : NULL;
	char vbuf[80];
	if (vec) {
		snprintf(vbuf, sizeof(vbuf), " (%s)", vec);
		kind = vbuf;
	}
	stamp(o, cs);
	printf("  %*s%s%s", (int)(2 * rel), "", term_safe(name), kind);
	if (o->lines && fn->image >= 0 && o->st->img[fn->image].sf) {
		const char *file;
		int line;
		if (!symfile_line(o->st->img[fn->image].sf, f->ip - o->st->img[fn->image].base,
				  &file, &line))
			printf("  %s:%d", term_safe(file), line);
	}
	putchar('\n');
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct copts *o = ctx;
	(void)f;
	show_debug_lines(o, cs, cs->depth);
	uint32_t back = fnwin_leave_to(cs, why);
	if (back != UINT32_MAX)
		fnwin_span_at(&o->w, cs, back);
	if (why == CS_LEAVE_UNKNOWN_END && cs->depth == 1 && !o->filter &&
	    cs->insns >= o->w.from && (!o->w.to || cs->insns < o->w.to)) {
		stamp(o, cs);
		printf("  -- gap --\n");
	}
}

int cmd_calls(int argc, char **argv)
{
	struct session t;
	struct callstack cs;
	struct inl_frames x;
	struct dbglog dl = { 0 };
	struct copts *o = calloc(1, sizeof(*o));
	int rc = 2;
	session_init(&t, "calls");
	memset(&cs, 0, sizeof(cs));
	memset(&x, 0, sizeof(x));
	if (!o) {
		fprintf(stderr, "efipt calls: out of memory\n");
		goto out;
	}
	const struct session_cmd sc = { "calls", calls_usage, calls_tail, true,
					"output", calls_rows,
					sizeof(calls_rows) / sizeof(calls_rows[0]), o };
	char *run;
	int pr = session_parse_args(&t, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	bool inline_frames = o->inline_frames;
	if (fnwin_empty("efipt calls", &o->from, &o->to))
		goto out;
	o->filter = o->function || o->image;
	t.streams = true;
	if (session_open(&t, run, SESSION_TRACE | SESSION_SYMBOLS))
		goto out;
	o->st = &t.st;
	o->t = &t;
	fnwin_span_init(&o->w, &o->from, &o->to, &t.st);
	if (!names_something(&t, o, inline_frames))
		goto out;
	if (t.have_run && !o->no_log) {
		bool oom = false;
		if (dbglog_read(&dl, t.rd.path, (long)t.trace[0].cpu, "calls") < 0)
			goto out;
		o->dbg = dbglog_traced(&dl, t.trace[0].cpu, &o->ndbg, &oom);
		if (oom) {
			fprintf(stderr, "efipt calls: out of memory\n");
			goto out;
		}
	}
	o->cpu = t.trace[0].cpu;
	if (t.have_run && irqlog_read(&o->irq, t.rd.path, "calls") < 0)
		goto out;
	/* the time is read where a frame changes only (a DEBUG line too is
	 * shown at the next change, with the time there): a window's ends
	 * show no time */
	struct cs_listener ls = { o, on_enter, on_leave, NULL, NULL, false };
	if (inline_frames) {
		if (symtab_use_inline(&t.st) || inl_frames_init(&x, &ls)) {
			fprintf(stderr, "efipt calls: out of memory\n");
			goto out;
		}
		ls = inl_frames_listener(&x);
	}
	if (cs_init(&cs, &t.st, &ls)) {
		fprintf(stderr, "efipt calls: out of memory\n");
		goto out;
	}
	cs.tree = false;
	long errs = analysis_decode(&t, 0, &cs, o->w.to, o->w.by_fn ? &o->w.done : NULL);
	show_debug_lines(o, &cs, 0); /* after the last frame ended */
	if (errs < 0)
		goto out;
	if (o->oom || x.oom || o->w.win.oom) {
		fprintf(stderr, "efipt calls: out of memory\n");
		goto out;
	}
	char why[700];
	if (fnwin_span_missing(&o->w, cs.insns, why, sizeof(why))) {
		fprintf(stderr, "efipt calls: %s\n", why);
		goto out;
	}
	if (o->filter && !o->shown)
		fprintf(stderr, "efipt calls: --%s %s: it never ran in the trace (no call to "
			"show)\n", o->function ? "function" : "image",
			term_safe(o->function ? o->function : o->image));
	if (cs.timed && !o->index && !t.tsc_hz)
		fprintf(stderr, "efipt calls: the TSC frequency is unknown: times are TSC ticks "
			"(--tsc-hz)\n");
	rc = errs ? 1 : 0;
out:
	if (o)
		fnwin_free(&o->w.win);
	cs_free(&cs);
	inl_frames_free(&x);
	dbglog_free(&dl);
	session_free(&t);
	if (o) {
		free(o->top);
		free(o->dbg);
		irqlog_free(&o->irq);
	}
	free(o);
	return rc; /* main's finish_stdout() checks the writes */
}
