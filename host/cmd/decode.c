/* efipt decode DIR: decode a run directory with its own snapshots and
 * sideband, and print the summary efipt.efi prints after --decode; with
 * --symbols, efipt top's functions from the same decode. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_image.h"
#include "core/pt_summary.h"
#include "host/cmd/commands.h"
#include "host/input/session.h"
#include "host/out/top_table.h"
#include "host/stack/callstack.h"
#include "host/stack/profile.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

static const char decode_usage[] =
	"usage: efipt decode [--top N] [--cpu N] [--symbols PATH]... [--path-map OLD=NEW]... DIR\n\n"
	"Decode the trace of an efipt run directory (trace.pt) against the code\n"
	"snapshots it holds, and print the same summary efipt.efi prints with\n"
	"'trace --decode': instructions, branches, events, errors, top images.\n"
	"With --symbols, also the N functions that executed most, as 'efipt top'\n"
	"prints them, from the same decode.\n\n";

static const char decode_tail[] =
	"A trace with no PSB, or whose last packet is cut by the end of the file,\n"
	"is reported as an error. Image names from the directory are printed\n"
	"with control characters escaped (\\xNN).\n\n"
	"Exit status: 0 if the trace decoded without errors, 1 if it had decode\n"
	"errors or the directory is damaged, 2 on usage errors or a write error\n"
	"on standard output.\n";

struct decode_opts {
	unsigned long long top;
};

static int set_top(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (parse_u64(v, &n) || n > 100000) {
		sb_printf(err, "--%s needs a count, got '%s'", r->name, term_safe(v));
		return -1;
	}
	((struct decode_opts *)ctx)->top = n;
	return 0;
}

static const struct opt_row decode_rows[] = {
	{ "top", OPT_VALUE, set_top, 0, "N", "list the N images (and functions) that executed "
	  "most\n(default 10)" },
};

static const char *ptsum_image_name(const void *img)
{
	return ((const struct ptsum_image *)img)->name;
}

/*
 * The summary and the call-stack model from one decode. With symbols the
 * model alone takes the blocks: every instruction counts for the function
 * at its address (callstack.h), and each function lies in one image (or
 * none), so the summary's counts per image are its functions' exclusive
 * counts (summary_from_profile()); the summary takes only the events.
 */
struct both {
	struct ptsum *sum;
	struct callstack *cs;
};

static void both_batch(void *ctx, const struct ptflow_batch *b)
{
	cs_on_blocks(((struct both *)ctx)->cs, b);
}

static void both_event(void *ctx, const struct ptflow_event *ev)
{
	struct both *x = ctx;
	ptsum_on_event(x->sum, ev);
	cs_on_event(x->cs, ev);
}

/* The summary's instruction counts from the finished model's profile: its
 * images are the symbol table's, in the same (sorted) order. */
static void summary_from_profile(struct ptsum *sum, const struct symtab *st,
				 const struct profile *p)
{
	sum->insns = 0;
	sum->outside = 0;
	for (unsigned i = 0; i < sum->nimg; i++)
		sum->img[i].insns = 0;
	for (uint32_t fn = 0; fn < p->n && fn < st->nfn; fn++) {
		uint64_t n = p->fn[fn].excl;
		int32_t k = st->fn[fn].image;
		sum->insns += n;
		if (k >= 0 && (unsigned)k < sum->nimg)
			sum->img[k].insns += n;
		else
			sum->outside += n;
	}
}

/* The summary's images are the symbol table's, one for one (ptsum_init()
 * kept the order and every range). */
static uint64_t both_region(void *ctx, uint64_t ip)
{
	return cs_region(((struct both *)ctx)->cs, ip);
}

static bool same_images(const struct ptsum *sum, const struct symtab *st)
{
	if (sum->nimg != st->nimg)
		return false;
	for (unsigned i = 0; i < sum->nimg; i++)
		if (sum->img[i].base != st->img[i].base || sum->img[i].size != st->img[i].size)
			return false;
	return true;
}

int cmd_decode(int argc, char **argv)
{
	struct session s;
	struct decode_opts o = { 10 };
	struct callstack cs;
	struct profile p = { 0 };
	static struct ptsum_image img[IMAGES_MAX];
	int rc = 2;
	session_init(&s, "decode");
	memset(&cs, 0, sizeof(cs));
	const struct opts_group g[] = {
		{ NULL, decode_rows, sizeof(decode_rows) / sizeof(decode_rows[0]), &o },
		{ "inputs", session_input_rows, session_input_nrows, &s },
		{ "symbols", session_symbol_rows, session_symbol_nrows, &s },
		{ "decoder", session_decoder_rows, session_decoder_nrows, &s },
	};
	const struct opts_cmd cmd = { "decode", decode_usage, decode_tail, g, 4, 1 };
	char *operand[1];
	unsigned nop;
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	if (!nop && !*s.run_path && !*s.pt) {
		fprintf(stderr, "efipt decode: a run directory is required\n");
		goto out;
	}
	bool symbols = s.so.npaths || s.so.nbinds;
	/* the summary names the first error: here, what it may be */
	s.errors_shown = true;
	int r = session_open(&s, nop ? operand[0] : NULL,
			     SESSION_TRACE | (symbols ? SESSION_SYMBOLS : 0) | SESSION_OWN_OVERLAPS);
	if (r) {
		rc = r == -1 ? 1 : 2;
		goto out;
	}
	/* the summary's images: the session's (sorted, the rule's order) */
	for (unsigned i = 0; i < s.images.n; i++) {
		memset(&img[i], 0, sizeof(img[i]));
		img[i].base = s.images.v[i].base;
		img[i].size = s.images.v[i].size;
		snprintf(img[i].name, sizeof(img[i].name), "%s", s.images.v[i].name);
	}
	static struct ptsum sum;
	ptsum_init(&sum, img, s.images.n);
	if (sum.overlap)
		images_note_overlaps("efipt decode", img, s.images.n, sizeof(*img), ptsum_image_name);
	if (symbols) {
		struct cs_listener ls = profile_listener(&p);
		if (cs_init(&cs, &s.st, &ls)) {
			fprintf(stderr, "efipt decode: out of memory\n");
			goto out;
		}
		cs.tree = false;
	}
	if (symbols && !same_images(&sum, &s.st)) {
		fprintf(stderr, "efipt decode: internal error: the summary's images are not the "
				"symbol table's\n");
		goto out;
	}
	/* blocks from the fast loops: no instruction decoded twice; the
	 * summary alone needs no order, so they come counted */
	struct both x = { &sum, &cs };
	struct flow_consumer c = { &sum, ptsum_on_blocks, ptsum_on_event, NULL, NULL, PTFLOW_TIME_NONE, 0,
				   true, NULL };
	if (symbols) {
		/* the model's consumer, with the summary's events */
		struct flow_consumer m = cs_consumer(&cs);
		c = (struct flow_consumer){ &x, both_batch, both_event, NULL, both_region,
					    m.timed, 0, false, NULL };
	}
	long errs = session_decode(&s, 0, &c, 1);
	if (errs < 0) {
		rc = 1;
		goto out;
	}
	static char text[1 << 16];
	struct strbuf sb;
	sb_init(&sb, text, sizeof(text));
	if (symbols) {
		cs_finish(&cs);
		summary_from_profile(&sum, &s.st, &p);
	}
	ptsum_format(&sum, &s.stat, (unsigned)o.top, &sb);
	fputs_safe_text(text, stdout); /* image names come from images.json */
	rc = errs ? 1 : 0;
	if (symbols) {
		if (cs.oom || p.oom) {
			fprintf(stderr, "efipt decode: out of memory for the call tree\n");
			rc = 2;
			goto out;
		}
		printf("\ntop functions:\n");
		if (top_table_write(&s, &cs, &p, NULL, errs, false, TOP_TEXT, o.top))
			rc = 2;
	}
out:
	cs_free(&cs);
	profile_free(&p);
	session_free(&s);
	return rc;
}
