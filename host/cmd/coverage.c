/*
 * efipt coverage: which code of each image a trace executed, as a drcov
 * file for disassemblers, a text/JSON report with a CI gate (--fail-under)
 * or an lcov tracefile of source lines (--symbols), and the union of
 * several drcov files or lcov tracefiles (--merge). docs/coverage.md
 * describes the formats.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/cov/cov_blocks.h"
#include "host/cov/cov_lcov.h"
#include "host/input/session.h"
#include "host/out/cov_merge.h"
#include "host/out/cov_report.h"
#include "host/util/file_io.h"
#include "host/util/gate_pct.h"
#include "host/util/opts.h"

#define CMD "efipt coverage"
#define MAX_GATES 64

static const char coverage_usage[] =
	"usage: efipt coverage RUN-DIR [OPTIONS]\n"
	"       efipt coverage --pt TRACE IMAGE... [--images FILE] [OPTIONS]\n"
	"       efipt coverage RUN-DIR --symbols PATH... --format lcov -o FILE.info\n"
	"       efipt coverage --merge A.drcov B.drcov ... -o OUT.drcov\n"
	"       efipt coverage --merge A.info B.info ... -o OUT.info\n\n"
	"The code a trace executed, per image: blocks (executed byte ranges, cut\n"
	"where the flow entered them), instructions, bytes of code covered, and\n"
	"conditional branches (executed, taken, not taken, both ways). As lcov: an\n"
	"lcov tracefile (genhtml renders it): per source file of the images'\n"
	"DWARF line tables, functions (FN, FNDA: executions of the entry) and lines\n"
	"(DA: executions of the line's first instruction) and conditional branches\n"
	"(BRDA: times taken and not taken), with their totals.\n\n";

static const char coverage_tail[] =
	"Exit status: 0 written; 1 the trace had decode errors (the coverage of what\n"
	"decoded is still written) or an input is damaged; 2 on usage errors,\n"
	"unreadable inputs or a write error (nothing is written), or lcov with no\n"
	"image with source lines (nothing to write); 3 coverage below --fail-under,\n"
	"or an --image that names no image.\n";

enum fmt { FMT_DEFAULT, FMT_DRCOV, FMT_TEXT, FMT_JSON, FMT_LCOV };

struct copts {
	enum fmt fmt;
	const char *out;
	long fail_under;	/* tenths of a percent; -1: none */
	char *gate_img[MAX_GATES];
	unsigned ngate;
	bool merge;
	struct srcmap sm;
};

static int set_format(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct copts *o = ctx;
	o->fmt = !strcmp(v, "drcov") ? FMT_DRCOV : !strcmp(v, "text") ? FMT_TEXT
	       : !strcmp(v, "json") ? FMT_JSON : !strcmp(v, "lcov") ? FMT_LCOV : FMT_DEFAULT;
	if (o->fmt == FMT_DEFAULT) {
		sb_printf(err, "--%s takes drcov, text, json or lcov, not '%s'", r->name,
			  term_safe(v));
		return -1;
	}
	return 0;
}

static int set_fail_under(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	if (gate_pct_parse(v, 1000, &((struct copts *)ctx)->fail_under)) {
		sb_printf(err, "--%s takes a percentage from 0 to 100 with at most one decimal "
			  "(as printed), not '%s'", r->name, term_safe(v));
		return -1;
	}
	return 0;
}

static int set_image(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct copts *o = ctx;
	if (o->ngate >= MAX_GATES) {
		sb_printf(err, "more than %d --%s options", MAX_GATES, r->name);
		return -1;
	}
	o->gate_img[o->ngate++] = (char *)v;
	return 0;
}

static int set_source_map(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct srcmap *sm = &((struct copts *)ctx)->sm;
	const char *eq = strchr(v, '=');
	if (!eq || eq == v || sm->n == 16) {
		sb_printf(err, "--%s wants OLD=NEW (16 at most), not '%s'", r->name, term_safe(v));
		return -1;
	}
	char *old = strndup(v, (size_t)(eq - v));
	if (!old) {
		sb_puts(err, "out of memory");
		return -1;
	}
	sm->old[sm->n] = old;
	sm->new_[sm->n++] = eq + 1;
	return 0;
}

static const struct opt_row coverage_rows[] = {
	{ "format", OPT_VALUE, set_format, 0, "drcov|text|json|lcov", "drcov version 2 "
	  "(Lighthouse, bncov, Lightkeeper,\nCartographer), a table, JSON, or an lcov "
	  "tracefile\n(--symbols PATH...) (default: drcov when -o ends\nin .drcov, lcov when "
	  "it ends in .info, else text)" },
	{ "output", OPT_VALUE, opts_set_str, offsetof(struct copts, out), "FILE", "write there "
	  "(written under a temporary name and\nrenamed when complete); text and json default "
	  "to\nstandard output, drcov and lcov need -o" },
	{ "fail-under", OPT_VALUE, set_fail_under, 0, "PERCENT", "exit 3 when fewer than "
	  "PERCENT of the code bytes\nwere executed, compared as printed (one decimal:\n40.2): "
	  "of every image that executed (total), or\nof each --image NAME" },
	{ "image", OPT_VALUE, set_image, 0, "NAME", "--fail-under checks image NAME (repeatable; "
	  "NAME\nwith or without .efi, case-insensitive)" },
	{ "source-map", OPT_VALUE, set_source_map, 0, "OLD=NEW", "lcov: rewrite source paths "
	  "starting with OLD\n(repeatable)" },
	{ "merge", OPT_FLAG, opt_set_true, offsetof(struct copts, merge), NULL,
	  "union of drcov files (modules matched by path,\nblocks united) or of lcov tracefiles "
	  "(OUT.info or\n--format lcov: counts added as 'lcov -a' does);\nneeds -o" },
};

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !strcmp(s + n - m, tail);
}

static void put_file(void *ctx, const void *p, size_t n)
{
	atomic_write(ctx, p, n);
}

/* drcov, text, json: decode, collect, write. Returns the exit status. */
static int collect(struct session *s, const struct copts *o)
{
	if (!s->images.n) {
		fprintf(stderr, CMD ": no images to attribute coverage to: a run directory, "
				"--pe FILE or --images FILE names them\n");
		return 2;
	}
	static struct cov_blocks cb;
	struct jcc_count *jc = NULL, jt;
	int rc = 2;
	if (cov_blocks_init(&cb, s))
		goto out;
	struct flow_consumer c = cov_blocks_consumer(&cb);
	long errs = session_decode(s, 0, &c, 1);
	if (errs < 0)
		goto out;
	jc = calloc(cb.n + 1, sizeof(*jc));
	if (!jc || cb.jcc.oom) {
		fprintf(stderr, CMD ": out of memory\n");
		goto out;
	}
	cov_blocks_branches(&cb, jc, &jt);
	struct atomic_file af;
	struct cov_totals t;
	FILE *f = stdout;
	if (o->out) {
		if (atomic_open(&af, CMD, o->out))
			goto out;
		f = af.f;
	}
	if (o->fmt == FMT_DRCOV) {
		ptcov_drcov_write(&cb.cov, "efipt", put_file, &af);
		cov_report(NULL, COV_TEXT, &cb.cov, cb.whole, &s->stat, jc, &jt, &t); /* totals */
	} else {
		cov_report(f, o->fmt == FMT_TEXT ? COV_TEXT : COV_JSON, &cb.cov, cb.whole, &s->stat,
			   jc, &jt, &t);
	}
	for (unsigned k = 0; k < cb.n; k++)
		if (cb.whole[k] && cb.img[k].execs && o->fmt != FMT_DRCOV)
			fprintf(stderr, CMD ": %s: its executable sections are not known (no PE "
					"headers in its code, no \"code\" in images.json): its whole "
					"range counts as code\n", term_safe(cb.img[k].path));
	if (o->out && atomic_commit(&af, CMD))
		goto out;
	rc = errs ? 1 : 0;
	if (o->fail_under >= 0) {
		int g = cov_gates(&cb.cov, &t, o->fail_under, (char **)o->gate_img, o->ngate);
		if (g)
			rc = g;
	}
out:
	cov_blocks_free(&cb);
	free(jc);
	return rc;
}

int cmd_coverage(int argc, char **argv)
{
	struct session s;
	struct copts o = { .fail_under = -1 };
	char *operand[4096];
	unsigned nop;
	int rc = 2;
	session_init(&s, "coverage");
	const struct opts_group g[] = {
		{ "inputs", session_input_rows, session_input_nrows, &s },
		{ "output", coverage_rows, sizeof(coverage_rows) / sizeof(coverage_rows[0]), &o },
		{ "lcov", session_symbol_rows, session_symbol_nrows, &s },
		{ "decoder", session_decoder_rows, session_decoder_nrows, &s },
	};
	const struct opts_cmd cmd = { "coverage", coverage_usage, coverage_tail, g, 4,
				      sizeof(operand) / sizeof(operand[0]) };
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	/* lcov's options, as given: the first one, for the message below */
	const char *lcov_opt = s.so.npaths || s.so.nbinds ? "--symbols"
			     : s.so.nmaps ? "--path-map" : o.sm.n ? "--source-map" : NULL;
	bool inputs = *s.pt || s.code.n || s.images.n || s.images_file || *s.run_path;
	if (o.fmt == FMT_DEFAULT && o.out && ends_with(o.out, ".info"))
		o.fmt = FMT_LCOV; /* an lcov tracefile by its name, as --merge takes it */
	if (o.fmt == FMT_DEFAULT) /* --merge writes drcov whatever the name */
		o.fmt = o.merge || (o.out && ends_with(o.out, ".drcov")) ? FMT_DRCOV : FMT_TEXT;
	if (o.merge) {
		bool lcov = o.fmt == FMT_LCOV;
		if (inputs || o.fail_under >= 0 || lcov_opt || (o.fmt != FMT_DRCOV && !lcov)) {
			fprintf(stderr, lcov ? CMD ": --merge takes tracefiles and -o OUT only (no "
					       "trace inputs, --symbols or --source-map)\n"
					     : CMD ": --merge takes drcov files and -o OUT (drcov) only\n");
			goto out;
		}
		if (!o.out || !nop) {
			fprintf(stderr, CMD ": --merge needs %s\n",
				!o.out ? (lcov ? "-o OUT.info" : "-o OUT.drcov")
				       : lcov ? "the tracefiles to merge" : "the drcov files to merge");
			goto out;
		}
		rc = (lcov ? cov_lcov_merge : cov_merge)(CMD, (const char *const *)operand, nop,
							 o.out);
		goto out;
	}
	if (o.fmt != FMT_LCOV && lcov_opt) {
		fprintf(stderr, CMD ": %s is for the source lines and functions of --format lcov "
				"(or -o FILE.info); drcov, text and json count per image and need "
				"no symbols\n", lcov_opt);
		goto out;
	}
	if (o.ngate && o.fail_under < 0) {
		fprintf(stderr, CMD ": --image selects what --fail-under checks: give both\n");
		goto out;
	}
	if (o.fmt == FMT_DRCOV && !o.out) {
		fprintf(stderr, CMD ": drcov is binary: give -o FILE\n");
		goto out;
	}
	if (o.fmt == FMT_LCOV && !o.out) {
		fprintf(stderr, CMD ": --format lcov needs -o FILE.info\n");
		goto out;
	}
	if (o.fmt == FMT_LCOV && o.fail_under >= 0) {
		fprintf(stderr, CMD ": --fail-under gates the code bytes of drcov, text and json, "
				"not lcov's lines\n");
		goto out;
	}
	if (nop > 1) {
		fprintf(stderr, CMD ": one run directory at a time\n");
		goto out;
	}
	/* drcov, text and json say overlaps by their modules' names */
	int r = session_open(&s, nop ? operand[0] : NULL,
			     SESSION_TRACE | (o.fmt == FMT_LCOV ? SESSION_SYMBOLS
								 : SESSION_OWN_OVERLAPS));
	if (r) {
		rc = r == -1 ? 1 : 2;
		goto out;
	}
	rc = o.fmt == FMT_LCOV ? cov_lcov_run(&s, o.out, &o.sm) : collect(&s, &o);
out:
	for (size_t i = 0; i < o.sm.n; i++)
		free((char *)o.sm.old[i]);
	session_free(&s);
	return rc;
}
