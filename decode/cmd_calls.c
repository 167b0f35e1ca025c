/*
 * efipt calls: the call trace, one line per function entered (call, tail
 * call, interrupt, a new bottom after a gap), indented by stack depth, as
 * `perf script --call-trace` shows it: the time at entry (us since the
 * trace's first timing packet) where the trace has timing packets, else the
 * instruction index; the function (or Image+0xRVA without symbols), with
 * --lines its source line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/commands.h"
#include "decode/file_io.h"
#include "decode/stack/analysis.h"
#include "decode/stack/inline_frames.h"

static void calls_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt calls RUNDIR [--symbols PATH]... [OPTIONS]\n"
		"       efipt calls --pt TRACE --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
		"The call trace: per function entered, the time (us since the trace's first\n"
		"timing packet, ns precision; TSC ticks when the TSC frequency is unknown)\n"
		"where the trace has timing packets, else the instruction index, the function\n"
		"indented by its stack depth, and how it was entered when not by a call\n"
		"(tail call, jump, interrupt, root, unknown caller). '-- gap --' marks where\n"
		"the trace lost the flow (every frame ends there).\n\n"
		TRACE_INPUT_USAGE
		"output:\n"
		"  --depth N       only N levels (below the --function/--image frame)\n"
		"  --function NAME only calls under a function NAME (or IMAGE`NAME)\n"
		"  --image NAME    only calls under a function of image NAME\n"
		"  --from N, --to N  only entries at instruction index N.. (..N, excluded)\n"
		"  --lines         the source line (DWARF) of each function entered\n"
		"  --inline        inline frames from DWARF as calls of their own\n"
		"                  (\"name [inlined]\", entered where the inline chain changes)\n"
		"  --index         the instruction index even where the trace has time\n\n"
		"Exit status: 0, 1 if the trace had decode errors, 2 on usage errors,\n"
		"unreadable inputs or a write error.\n");
}

struct copts {
	struct symtab *st;
	const struct trace_input *t;
	bool index;			/* --index */
	unsigned long long depth, from, to;
	const char *function, *image;
	bool lines, filter;
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
static bool names_something(const struct trace_input *t, const struct copts *o, bool inl)
{
	if (!o->function && !o->image)
		return true;
	const char *want = o->function ? o->function : o->image;
	const char *tick = o->function ? strchr(o->function, '`') : NULL;
	const char *fname = tick ? tick + 1 : want;
	bool image_named = false;
	for (size_t i = 0; i < t->nimg; i++) {
		const struct symimage *im = &t->img[i];
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
static void stamp(const struct copts *o, const struct callstack *cs)
{
	if (o->index || !cs->timed) {
		printf("%12" PRIu64, cs->insns);
		return;
	}
	uint64_t v = trace_input_ns(o->t, cs->now - cs->time_first);
	char b[32];
	if (o->t->tsc_hz)
		snprintf(b, sizeof(b), "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
	else
		snprintf(b, sizeof(b), "%" PRIu64, v);
	printf("%12s", b);
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct copts *o = ctx;
	uint32_t d = cs->depth;
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
	if ((o->depth && rel >= o->depth) || cs->insns < o->from || (o->to && cs->insns >= o->to))
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
	stamp(o, cs);
	printf("  %*s%s%s", (int)(2 * rel), "", term_safe(name),
	       f->enter < 6 ? how[f->enter] : "");
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
	if (why == CS_LEAVE_UNKNOWN_END && cs->depth == 1 && !o->filter &&
	    cs->insns >= o->from && (!o->to || cs->insns < o->to)) {
		stamp(o, cs);
		printf("  -- gap --\n");
	}
}

int cmd_calls(int argc, char **argv)
{
	static const struct option opts[] = {
		TRACE_INPUT_OPTS,
		{ "depth", required_argument, 0, 'd' },
		{ "function", required_argument, 0, 'f' },
		{ "image", required_argument, 0, 'i' },
		{ "from", required_argument, 0, 'F' },
		{ "to", required_argument, 0, 'T' },
		{ "lines", no_argument, 0, 'l' },
		{ "inline", no_argument, 0, 'n' },
		{ "index", no_argument, 0, 'x' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct trace_input t;
	struct callstack cs;
	struct inl_frames x;
	struct copts *o = calloc(1, sizeof(*o));
	int c, rc = 2;
	bool inline_frames = false;
	trace_input_init(&t, "calls");
	memset(&cs, 0, sizeof(cs));
	memset(&x, 0, sizeof(x));
	if (!o) {
		fprintf(stderr, "efipt calls: out of memory\n");
		goto out;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			calls_usage(stdout);
			rc = 0;
			goto out;
		case 'd': case 'F': case 'T': {
			unsigned long long v;
			if (parse_u64(optarg, &v)) {
				fprintf(stderr, "efipt calls: --%s takes a number, not '%s'\n",
					c == 'd' ? "depth" : c == 'F' ? "from" : "to", optarg);
				goto out;
			}
			*(c == 'd' ? &o->depth : c == 'F' ? &o->from : &o->to) = v;
			break;
		}
		case 'f': o->function = optarg; o->image = NULL; break;
		case 'i': o->image = optarg; o->function = NULL; break;
		case 'l': o->lines = true; break;
		case 'n': inline_frames = true; break;
		case 'x': o->index = true; break;
		case '?':
			calls_usage(stderr);
			goto out;
		default:
			if (trace_input_option(&t, c, optarg))
				goto out;
		}
	}
	if (optind + 1 < argc) {
		calls_usage(stderr);
		goto out;
	}
	if (o->to && o->from >= o->to) {
		fprintf(stderr, "efipt calls: --from %llu --to %llu: no instruction index is in "
			"[from, to)\n", o->from, o->to);
		goto out;
	}
	o->filter = o->function || o->image;
	t.streams = true;
	if (trace_input_finish(&t, optind < argc ? argv[optind] : NULL, true))
		goto out;
	o->st = &t.st;
	o->t = &t;
	if (!names_something(&t, o, inline_frames))
		goto out;
	struct cs_listener ls = { o, on_enter, on_leave, NULL, NULL };
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
	long errs = analysis_decode(&t, &cs);
	if (errs < 0)
		goto out;
	if (o->oom || x.oom) {
		fprintf(stderr, "efipt calls: out of memory\n");
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
	cs_free(&cs);
	inl_frames_free(&x);
	trace_input_free(&t);
	if (o)
		free(o->top);
	free(o);
	return rc; /* main's finish_stdout() checks the writes */
}
