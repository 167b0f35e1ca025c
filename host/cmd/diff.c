/*
 * efipt diff: what changed between two runs (two boots, two builds of one
 * firmware), per function or per image: instructions exclusive and
 * inclusive and calls of each, matched by name so that builds whose
 * addresses differ compare; the differential folded stacks; CI gates.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/diff/diff_gates.h"
#include "host/diff/diff_run.h"
#include "host/diff/diff_side.h"
#include "host/diff/diff_table.h"
#include "host/stack/profile_window.h"
#include "host/input/session.h"
#include "host/out/diff_out.h"
#include "host/util/file_io.h"
#include "host/util/gate_pct.h"
#include "host/util/opts.h"

#define CMD "efipt diff"

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
static int symbols_match(const struct diff_side *a, const struct diff_side *b, const struct renames *rn)
{
	int rc = 0;
	unsigned more = 0; /* past the first few: counted, not named */
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
		rc = -1;
		if (++more > 3)
			continue;
		fprintf(stderr, CMD ": image %s ran in both runs but has symbols in %s only: "
			"its functions cannot be matched (%s: 'efipt symbols %s' says why); give "
			"%s the symbols, or compare images with --by image\n", term_safe(im),
			sa ? "A" : "B", sa ? "B" : "A", term_safe(sa ? b->t.run_path : a->t.run_path),
			sa ? "--symbols-b" : "--symbols");
	}
	if (more > 3)
		fprintf(stderr, CMD ": and %u more images that ran in both runs with symbols in one "
			"only\n", more - 3);
	return rc;
}

/* What the command line says (the option rows' ctx). */
struct diff_opts {
	struct diff_side *a, *b;
	const char *sym_a[64], *sym_b[64];
	unsigned nsym_a, nsym_b;
	struct renames rn;
	struct diff_gates g;
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
	struct diff_gates *g = &O(ctx)->g;
	bool fn = !strcmp(r->name, "function");
	unsigned *n = fn ? &g->nfn : &g->nimg;
	if (*n == GATES_MAX) {
		sb_printf(err, "at most %d --%s", GATES_MAX, r->name);
		return -1;
	}
	(fn ? g->fn : g->img)[(*n)++] = v;
	return 0;
}

/* --from/--to: a function. The other commands also take an instruction
 * index; two runs' indices name different points of their flows. */
static int set_window(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct fnwin_where w;
	if (fnwin_parse(v, &w)) {
		sb_printf(err, "--%s needs a function (NAME or IMAGE`NAME)", r->name);
		return -1;
	}
	if (!w.is_fn) {
		sb_printf(err, "--%s %s: diff takes a function here, not an instruction index "
			  "(the same index is a different point in each run)", r->name,
			  term_safe(v));
		return -1;
	}
	return opts_set_str(ctx, r, v, err);
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
	{ "from", OPT_VALUE, set_window, offsetof(struct diff_opts, from), "FUNCTION",
	  "only from the first instruction executed in FUNCTION\n(NAME or IMAGE`NAME) on, "
	  "in each run" },
	{ "to", OPT_VALUE, set_window, offsetof(struct diff_opts, to), "FUNCTION",
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
	struct diff_side sa = { .label = "A" }, sb = { .label = "B" };
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
	const struct diff_gates *g = &o.g;
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
	struct diff_side *sides[2] = { &sa, &sb };
	for (int k = 0; k < 2; k++) {
		struct diff_side *s = sides[k];
		if (session_open(&s->t, run[k], SESSION_TRACE | SESSION_SYMBOLS))
			goto out;
		diff_side_facts(s);
	}
	diff_side_warn_machines(&sa, &sb);
	for (int k = 0; k < 2; k++) {
		struct diff_side *s = sides[k];
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
	else if (sa.fn.timed && !diff_side_both_timed(&sa, &sb))
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
			diff_out_text(&sa, &sb, r, n, by_image, all, limit, o.from, o.to);
		else
			diff_out_rows(fmt, &sa, &sb, r, n, by_image, limit, o.from, o.to);
	}

	/* the firmware's boot-performance records, after the table */
	if (!folded && diff_out_fpdt(&sa, &sb, fmt, all, have_limit ? limit : (unsigned long long)-1))
		goto out;
	rc = sa.fn.errs || sb.fn.errs ? 1 : 0;
	int gr = diff_gates_check(g, &sa, &sb, fr, nf, ir, ni);
	if (gr)
		rc = gr;
out:
	free(fr);
	free(ir);
	free(folds);
	for (int k = 0; k < 2; k++) {
		struct diff_side *s = k ? &sb : &sa;
		diff_run_free(&s->fn);
		diff_run_free(&s->img);
		session_free(&s->t);
	}
	return rc; /* main's finish_stdout() checks the writes */
}
