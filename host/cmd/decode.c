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

/* The summary and the call-stack model from one decode. */
struct both {
	struct ptsum *sum;
	struct callstack *cs;	/* NULL: no --symbols */
	const struct image *img;	/* the session's, sorted */
	unsigned nimg;
	int overlap;
	unsigned last;
};

static void both_batch(void *ctx, const struct ptflow_batch *b)
{
	struct both *x = ctx;
	ptsum_on_blocks(x->sum, b);
	if (x->cs)
		cs_on_blocks(x->cs, b);
}

static void both_event(void *ctx, const struct ptflow_event *ev)
{
	struct both *x = ctx;
	ptsum_on_event(x->sum, ev);
	if (x->cs)
		cs_on_event(x->cs, ev);
}

/* Regions where blocks may merge: inside one image's stretch (the summary
 * counts per image), and inside one symbol range (the model's). */
static uint64_t both_region(void *ctx, uint64_t ip)
{
	struct both *x = ctx;
	uint64_t lo, hi, end;
	ptimg_list_span(x->img, x->nimg, sizeof(*x->img), ip, &x->last, x->overlap, &lo, &hi);
	end = hi + 1 ? hi + 1 : hi; /* hi is the stretch's last address */
	if (x->cs) {
		uint64_t shi;
		bool entry;
		symtab_lookup(x->cs->st, ip, &shi, &entry);
		if (shi < end)
			end = shi;
	}
	return end;
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
	struct both x = { &sum, symbols ? &cs : NULL, s.images.v, s.images.n, s.overlap, 0 };
	/* blocks from the fast loops: no instruction decoded twice; the
	 * summary alone needs no order, so they come counted */
	struct flow_consumer c = { &x, both_batch, both_event, NULL,
				   symbols ? both_region : NULL, symbols, 0, !symbols };
	long errs = session_decode(&s, 0, &c, 1);
	if (errs < 0) {
		rc = 1;
		goto out;
	}
	static char text[1 << 16];
	struct strbuf sb;
	sb_init(&sb, text, sizeof(text));
	ptsum_format(&sum, &s.stat, (unsigned)o.top, &sb);
	fputs_safe_text(text, stdout); /* image names come from images.json */
	rc = errs ? 1 : 0;
	if (symbols) {
		cs_finish(&cs);
		if (cs.oom || p.oom) {
			fprintf(stderr, "efipt decode: out of memory for the call tree\n");
			rc = 2;
			goto out;
		}
		printf("\ntop functions:\n");
		if (top_table_write(&s, &cs, &p, errs, false, TOP_TEXT, o.top))
			rc = 2;
	}
out:
	cs_free(&cs);
	profile_free(&p);
	session_free(&s);
	return rc;
}
