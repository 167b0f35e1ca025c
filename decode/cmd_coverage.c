/*
 * efipt coverage: which code of each image a trace executed, as a drcov
 * file for disassemblers or a text/JSON report with a CI gate
 * (--fail-under), and the union of several drcov files (--merge).
 * docs/coverage.md describes the formats.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/pt_cov.h"
#include "core/pt_flow.h"
#include "core/x86_insn.h"
#include "decode/commands.h"
#include "decode/cov_lcov.h"
#include "decode/cov_merge.h"
#include "decode/file_io.h"
#include "decode/gate_pct.h"
#include "decode/flow_notes.h"
#include "decode/progress.h"
#include "decode/rundir_code.h"
#include "decode/trace_end.h"
#include "decode/trace_input.h"

#define CMD "efipt coverage"
#define MAX_GATES 64
/* larger images (a hostile images.json) get no bitmaps: 3/8 of this each */
#define MAX_IMAGE_BITS (1ull << 30)

static void coverage_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt coverage RUN-DIR [OPTIONS]\n"
		"       efipt coverage --pt TRACE IMAGE... [--images FILE] [OPTIONS]\n"
		"       efipt coverage --merge A.drcov B.drcov ... -o OUT.drcov\n\n"
		"The code a trace executed, per image: blocks (executed byte ranges, cut\n"
		"where the flow entered them), instructions, bytes of code covered, and\n"
		"conditional branches (executed, taken, not taken, both ways).\n\n"
		"inputs:\n"
		"  RUN-DIR              an efipt run directory (trace, snapshots, images.json)\n"
		"  --pt TRACE           a raw trace, with code images as for 'efipt insn':\n"
		"  --raw FILE[:from[-to]]:BASE, --elf FILE[:BASE], --pe FILE[:BASE]\n"
		"                       (each --pe file is an image, named after the file)\n"
		"  --images FILE        images.json naming the images (base, size, name; its\n"
		"                       \"code\" sections), instead of the --pe files' or the\n"
		"                       run directory's. Where images overlap, an address\n"
		"                       counts for the one that starts last (a nested image)\n"
		"  --cpu N, --cpu F/M[/S], --distnt, --disretc  as for 'efipt insn'\n"
		"output:\n"
		"  --format drcov|text|json|lcov  drcov version 2 (Lighthouse, bncov, Lightkeeper,\n"
		"                       Cartographer), a table, or JSON (default: drcov when\n"
		"                       -o ends in .drcov, lcov when it ends in .info, else\n"
		"                       text); lcov (--symbols PATH...): see\n"
		"                       'efipt coverage --format lcov --help'\n"
		"  -o FILE              write there (written under a temporary name and\n"
		"                       renamed when complete); text and json default to\n"
		"                       standard output, drcov needs -o\n"
		"  --fail-under PERCENT exit 3 when fewer than PERCENT of the code bytes were\n"
		"                       executed, compared as printed (one decimal: 40.2):\n"
		"                       of every image that executed (total), or of\n"
		"                       each --image NAME (repeatable; NAME with or without\n"
		"                       .efi, case-insensitive)\n"
		"  --merge FILE...      union of drcov files: modules matched by path, blocks\n"
		"                       united; needs -o (OUT.info or --format lcov: lcov\n"
		"                       tracefiles, counts added as 'lcov -a' does)\n\n"
		"Exit status: 0 written; 1 the trace had decode errors (the coverage of what\n"
		"decoded is still written) or an input is damaged; 2 on usage errors,\n"
		"unreadable inputs or a write error (nothing is written); 3 coverage below\n"
		"--fail-under, or an --image that names no image.\n");
}

enum fmt { FMT_DEFAULT, FMT_DRCOV, FMT_TEXT, FMT_JSON };

/*
 * Conditional branches (Jcc, J*CXZ, LOOP*) the trace executed, each once,
 * and which ways it went: the flow decoder ends a block at each, and the
 * next block's ip is the target or the fall-through (0: an event came
 * first, the way is not known). A branch is known by its block's end, the
 * address after it, so no block is decoded again for it.
 */
enum { JCC_RAN = 1, JCC_TAKEN = 2, JCC_FELL = 4 };
struct jcc {
	uint64_t end;
	uint8_t ways;		/* JCC_*; 0: an empty slot */
};
struct jcc_set {
	struct jcc *slot;
	size_t mask, n;		/* mask + 1 slots, a power of two */
	bool oom;
};

static struct jcc *jcc_slot(struct jcc_set *js, uint64_t end)
{
	size_t i = (size_t)((end ^ end >> 17) * 0x9e3779b97f4a7c15ull) & js->mask;
	while (js->slot[i].ways && js->slot[i].end != end)
		i = (i + 1) & js->mask;
	return &js->slot[i];
}

static void jcc_add(struct jcc_set *js, uint64_t end, uint8_t ways)
{
	if (js->oom)
		return;
	if ((js->n + 1) * 2 > js->mask + 1) { /* half full: twice the slots */
		struct jcc_set big = { calloc(2 * (js->mask + 1), sizeof(struct jcc)),
				       2 * (js->mask + 1) - 1, js->n, false };
		if (!big.slot) {
			js->oom = true;
			return;
		}
		for (size_t i = 0; i <= js->mask; i++)
			if (js->slot[i].ways)
				*jcc_slot(&big, js->slot[i].end) = js->slot[i];
		free(js->slot);
		*js = big;
	}
	struct jcc *e = jcc_slot(js, end);
	if (!e->ways) {
		e->end = end;
		js->n++;
	}
	e->ways |= ways;
}

struct cov_ctx {
	struct ptcov *cov;
	struct jcc_set jcc;
};

static void on_blocks(void *ctx, const struct ptflow_blk *b, size_t n)
{
	struct cov_ctx *cc = ctx;
	ptcov_on_blocks(cc->cov, b, n);
	for (size_t i = 0; i < n; i++) {
		if (b[i].iclass != X86_IC_JCC || b[i].end != PTFLOW_BEND_BRANCH)
			continue;
		uint64_t end = b[i].ip + b[i].size;
		jcc_add(&cc->jcc, end, JCC_RAN | (!b[i].next ? 0
						  : b[i].next == end ? JCC_FELL : JCC_TAKEN));
	}
}

struct jcc_count {
	uint64_t ran, taken, fell, both;
};

/* Per image (c->img order) and in total: the branches of js. */
static void jcc_counts(const struct ptcov *c, const struct jcc_set *js, struct jcc_count *per,
		       struct jcc_count *total)
{
	unsigned last = 0;
	memset(total, 0, sizeof(*total));
	for (size_t i = 0; js->slot && i <= js->mask; i++) {
		const struct jcc *e = &js->slot[i];
		if (!e->ways)
			continue;
		int k = ptimg_list_find(c->img, c->nimg, sizeof(*c->img), e->end - 1, &last, c->overlap);
		if (k < 0)
			continue;
		struct jcc_count *p = &per[k];
		bool t = e->ways & JCC_TAKEN, f = e->ways & JCC_FELL;
		p->ran++, p->taken += t, p->fell += f, p->both += t && f;
		total->ran++, total->taken += t, total->fell += f, total->both += t && f;
	}
}

static void put_file(void *ctx, const void *p, size_t n)
{
	atomic_write(ctx, p, n);
}

/* tenths of a percent of part in total (0 when total is 0) */
static unsigned long long tenths(uint64_t part, uint64_t total)
{
	return total ? (unsigned long long)((part * 1000 + total / 2) / total) : 0;
}

/* The image's code: the bytes of its executable sections it owns (or of
 * its whole range where they are not known: collect()). */
static uint64_t code_bytes(const struct ptcov_image *m)
{
	return m->code_size;
}

/* Does NAME name image m: its path or the path without ".efi", any case. */
static int names(const struct ptcov_image *m, const char *name)
{
	if (!strcasecmp(m->path, name))
		return 1;
	size_t n = strlen(name);
	return strlen(m->path) == n + 4 && !strncasecmp(m->path, name, n) &&
	       !strcasecmp(m->path + n, ".efi");
}

/* {"executed": N, "taken": N, "not_taken": N, "both": N} (static buffer) */
static const char *jcc_json(const struct jcc_count *j)
{
	static char buf[160];
	snprintf(buf, sizeof(buf),
		 "{\"executed\": %llu, \"taken\": %llu, \"not_taken\": %llu, \"both\": %llu}",
		 (unsigned long long)j->ran, (unsigned long long)j->taken,
		 (unsigned long long)j->fell, (unsigned long long)j->both);
	return buf;
}

struct totals {
	uint64_t execs, insns, blocks, bytes, code;
	unsigned images;
};

static void report(FILE *f, enum fmt fmt, const struct ptcov *c, const bool *whole,
		   const struct ptflow_stat *st, const struct jcc_count *jc,
		   const struct jcc_count *jt, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	if (!f)
		;
	else if (fmt == FMT_TEXT)
		fprintf(f, "%-32s %-18s %12s %10s %8s %10s %10s %7s %9s %9s\n", "image", "base",
			"executed", "insns", "blocks", "bytes", "code", "covered", "branches",
			"both");
	else
		fprintf(f, "{\"format\": \"efipt-coverage\", \"version\": 1, \"images\": [");
	for (unsigned k = 0; k < c->nimg; k++) {
		const struct ptcov_image *m = &c->img[k];
		if (!m->execs)
			continue;
		struct ptcov_stat s;
		ptcov_image_stat(m, &s);
		unsigned long long pc = tenths(s.bytes, code_bytes(m));
		if (!f) {
		} else if (fmt == FMT_TEXT) {
			fprintf(f, "%-32s 0x%016llx %12llu %10llu %8llu %10llu %10llu %5llu.%llu%% "
				   "%9llu %9llu\n",
				term_safe(m->path), (unsigned long long)m->base,
				(unsigned long long)m->execs, (unsigned long long)s.insns,
				(unsigned long long)s.blocks, (unsigned long long)s.bytes,
				(unsigned long long)code_bytes(m), pc / 10, pc % 10,
				(unsigned long long)jc[k].ran, (unsigned long long)jc[k].both);
		} else {
			char esc[PTCOV_PATH_MAX * 6 + 8];
			struct strbuf sb;
			sb_init(&sb, esc, sizeof(esc));
			sb_json_str(&sb, m->path);
			fprintf(f, "%s\n  {\"path\": %s, \"base\": \"0x%llx\", \"size\": %llu, "
				   "\"entry\": \"0x%llx\", \"code_size\": %llu, \"code_from\": \"%s\", "
				   "\"executed\": %llu, "
				   "\"insns\": %llu, \"blocks\": %llu, \"bytes\": %llu, "
				   "\"percent\": %llu.%llu, \"branches\": %s}",
				t->images ? "," : "", esc, (unsigned long long)m->base,
				(unsigned long long)m->size, (unsigned long long)m->entry,
				(unsigned long long)code_bytes(m), whole[k] ? "image" : "sections",
				(unsigned long long)m->execs,
				(unsigned long long)s.insns, (unsigned long long)s.blocks,
				(unsigned long long)s.bytes, pc / 10, pc % 10, jcc_json(&jc[k]));
		}
		t->images++;
		t->execs += m->execs;
		t->insns += s.insns;
		t->blocks += s.blocks;
		t->bytes += s.bytes;
		t->code += code_bytes(m);
	}
	unsigned long long pc = tenths(t->bytes, t->code);
	if (!f) {
	} else if (fmt == FMT_TEXT) {
		fprintf(f, "%-32s %-18s %12llu %10llu %8llu %10llu %10llu %5llu.%llu%% %9llu %9llu\n",
			"total", "", (unsigned long long)t->execs, (unsigned long long)t->insns,
			(unsigned long long)t->blocks, (unsigned long long)t->bytes,
			(unsigned long long)t->code, pc / 10, pc % 10, (unsigned long long)jt->ran,
			(unsigned long long)jt->both);
		fprintf(f, "outside every image: %llu instructions; decode errors: %llu\n",
			(unsigned long long)c->outside, (unsigned long long)st->errors);
	} else {
		fprintf(f, "\n], \"total\": {\"images\": %u, \"executed\": %llu, \"insns\": %llu, "
			   "\"blocks\": %llu, \"bytes\": %llu, \"code_size\": %llu, "
			   "\"percent\": %llu.%llu, \"branches\": %s}, \"outside\": %llu, "
			   "\"decode_errors\": %llu}\n",
			t->images, (unsigned long long)t->execs, (unsigned long long)t->insns,
			(unsigned long long)t->blocks, (unsigned long long)t->bytes,
			(unsigned long long)t->code, pc / 10, pc % 10, jcc_json(jt),
			(unsigned long long)c->outside, (unsigned long long)st->errors);
	}
}

/* Is the coverage of code bytes, as printed (tenths of a percent), below
 * the gate (tenths)? What is printed is what is compared. */
static bool below(uint64_t bytes, uint64_t code, long gate)
{
	return !code || tenths(bytes, code) < (unsigned long long)gate;
}

/* --fail-under (in tenths of a percent): 0 if every gate passes, else 3
 * (messages on stderr). */
static int gates(const struct ptcov *c, const struct totals *t, long gate, char **img,
		 unsigned nimg)
{
	int rc = 0;
	if (!nimg) {
		if (below(t->bytes, t->code, gate)) {
			unsigned long long p = tenths(t->bytes, t->code);
			fprintf(stderr, CMD ": coverage %llu.%llu%% is below --fail-under %s%%\n",
				p / 10, p % 10, gate_pct_text(gate));
			rc = 3;
		}
		return rc;
	}
	for (unsigned i = 0; i < nimg; i++) {
		const struct ptcov_image *m = NULL;
		for (unsigned k = 0; k < c->nimg && !m; k++)
			if (names(&c->img[k], img[i]))
				m = &c->img[k];
		if (!m) {
			fprintf(stderr, CMD ": --image %s: no such image\n", term_safe(img[i]));
			rc = 3;
			continue;
		}
		struct ptcov_stat s;
		ptcov_image_stat(m, &s);
		if (below(s.bytes, code_bytes(m), gate)) {
			unsigned long long p = tenths(s.bytes, code_bytes(m));
			fprintf(stderr, CMD ": %s: coverage %llu.%llu%% is below --fail-under "
					"%s%%\n", term_safe(m->path), p / 10, p % 10, gate_pct_text(gate));
			rc = 3;
		}
	}
	return rc;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !strcmp(s + n - m, tail);
}

/* An image list entry as ptimg_list_*() take it, with its place in
 * trace_images. */
struct cov_src {
	uint64_t base, size;
	unsigned i;
};

/* Bytes of [a, a + len) that image k of the sorted list src owns. */
static uint64_t owned(const struct cov_src *src, unsigned n, int overlap, unsigned k, uint64_t a,
		      uint64_t len)
{
	uint64_t got = 0;
	unsigned last = k;
	while (len) {
		uint64_t lo, hi;
		int o = ptimg_list_span(src, n, sizeof(*src), a, &last, overlap, &lo, &hi);
		uint64_t chunk = hi - a >= len - 1 ? len : hi - a + 1;
		if (o == (int)k)
			got += chunk;
		a += chunk;
		len -= chunk;
	}
	return got;
}

static const char *cov_image_name(const void *img)
{
	return ((const struct ptcov_image *)img)->path;
}

/* Decode, collect, write. Returns the exit status. */
static int collect(const char *trace, struct ptsec_image *im, struct ptflow_config *fc,
		   bool cpu_known, struct trace_images *ti, enum fmt fmt, const char *out,
		   long fail_under, char **gate_img, unsigned ngate)
{
	if (!ti->n) {
		fprintf(stderr, CMD ": no images to attribute coverage to: a run directory, "
				"--pe FILE or --images FILE names them\n");
		return 2;
	}
	static struct cov_ctx cc;
	struct jcc_count *jc = NULL, jt;
	bool *whole = NULL;	/* per image: its sections are not known */
	struct ptcov_image *img = calloc(ti->n, sizeof(*img));
	if (!img) {
		fprintf(stderr, CMD ": out of memory\n");
		return 2;
	}
	struct ptimg code = ptsec_ptimg(im);
	int rc = 2;
	unsigned n = 0;
	/* the images in the order ptcov_init() sorts them (the rule's order),
	 * so that what is known per image stays beside it */
	struct cov_src *src = calloc(ti->n, sizeof(*src));
	whole = calloc(ti->n, sizeof(*whole));
	if (!src || !whole) {
		fprintf(stderr, CMD ": out of memory\n");
		free(src);
		goto out;
	}
	for (unsigned i = 0; i < ti->n; i++)
		src[i] = (struct cov_src){ ti->img[i].base,
					   ptimg_range_ok(ti->img[i].base, ti->img[i].size)
						   ? ti->img[i].size : 0, i };
	int overlap = ptimg_list_sort(src, ti->n, sizeof(*src));
	for (unsigned k = 0; k < ti->n; k++) {
		unsigned i = src[k].i;
		struct ptcov_image *m = &img[n];
		m->base = src[k].base;
		m->size = src[k].size;
		if (!m->size)
			continue;
		ptcov_set_name(m, ti->img[i].name);
		/* its executable sections: images.json or a --pe file, else the
		 * headers in the code (a run directory's snapshot) */
		struct pe_code pc = ti->code[i];
		if (!pc.n)
			pe_code_read(&code, m->base, m->size, &pc);
		m->entry = pc.entry_rva ? m->base + pc.entry_rva : 0;
		for (unsigned r = 0; r < pc.n; r++)
			m->code_size += owned(src, ti->n, overlap, k, m->base + pc.r[r].rva,
					      pc.r[r].size);
		if (!pc.n) {
			m->code_size = owned(src, ti->n, overlap, k, m->base, m->size);
			whole[n] = true;
		}
		n++;
		if (m->size > MAX_IMAGE_BITS) {
			fprintf(stderr, CMD ": %s: %llu bytes, more than coverage is kept for (%llu): "
					"listed without blocks\n",
				term_safe(m->path), (unsigned long long)m->size, MAX_IMAGE_BITS);
			continue;
		}
		m->bits = malloc((size_t)ptcov_bits_size(m->size));
		if (!m->bits) {
			fprintf(stderr, CMD ": out of memory for the coverage of %s (%llu bytes)\n",
				term_safe(m->path), (unsigned long long)m->size);
			free(src);
			goto out;
		}
	}
	free(src);
	static struct ptcov cov;
	ptcov_init(&cov, img, n);
	if (cov.overlap)
		images_note_overlaps(CMD, img, n, sizeof(*img), cov_image_name);
	struct input_map in;
	char err[4400];
	if (input_map(&in, trace, SIZE_MAX, err, sizeof(err))) {
		fprintf(stderr, CMD ": %s\n", term_safe(err));
		goto out;
	}
	fc->image = code;
	fc->cache_size = 1u << 16;
	fc->cache = calloc(fc->cache_size, sizeof(*fc->cache));
	/* blocks from the fast loops; a block marked once costs no decoding */
	cc.cov = &cov;
	cc.jcc = (struct jcc_set){ calloc(1024, sizeof(struct jcc)), 1023, 0, false };
	struct ptflow_sink sink = { &cc, NULL, NULL };
	static struct ptflow_decoder dec;
	static struct ptcov_seen seen[1 << 16];
	if (!fc->cache || !cc.jcc.slot || ptflow_init(&dec, fc, &sink)) {
		fprintf(stderr, CMD ": cannot set up the decoder\n");
		free(fc->cache);
		input_unmap(&in);
		goto out;
	}
	ptflow_on_blocks(&dec, on_blocks);
	ptcov_use_blocks(&cov, &dec, seen, sizeof(seen) / sizeof(seen[0]));
	struct progress pg;
	progress_start(&pg, &dec, "coverage", strcmp(trace, "-") ? trace : "<stdin>", in.size, false);
	ptflow_decode(&dec, in.data, in.size, 0);
	progress_end(&pg);
	/* the errors before the end: the coverage is of what decoded */
	flownote_report(CMD, strcmp(trace, "-") ? trace : "<stdin>", &dec.stat, dec.stat.errors,
			cpu_known, false);
	int end_err = trace_end_report("coverage", strcmp(trace, "-") ? trace : "<stdin>", in.data,
				       in.size);
	free(fc->cache);
	fc->cache = NULL;
	input_unmap(&in);

	jc = calloc(n + 1, sizeof(*jc));
	if (!jc || cc.jcc.oom) {
		fprintf(stderr, CMD ": out of memory\n");
		goto out;
	}
	jcc_counts(&cov, &cc.jcc, jc, &jt);
	struct atomic_file af;
	struct totals t;
	FILE *f = stdout;
	if (out) {
		if (atomic_open(&af, CMD, out))
			goto out;
		f = af.f;
	}
	if (fmt == FMT_DRCOV) {
		ptcov_drcov_write(&cov, "efipt", put_file, &af);
		report(NULL, fmt, &cov, whole, &dec.stat, jc, &jt, &t); /* the totals only */
	} else {
		report(f, fmt, &cov, whole, &dec.stat, jc, &jt, &t);
	}
	for (unsigned k = 0; k < n; k++)
		if (whole[k] && img[k].execs && fmt != FMT_DRCOV)
			fprintf(stderr, CMD ": %s: its executable sections are not known (no PE "
					"headers in its code, no \"code\" in images.json): its whole "
					"range counts as code\n", term_safe(img[k].path));
	if (out && atomic_commit(&af, CMD))
		goto out;
	rc = dec.stat.errors || end_err ? 1 : 0;
	if (fail_under >= 0) {
		int g = gates(&cov, &t, fail_under, gate_img, ngate);
		if (g)
			rc = g;
	}
out:
	for (unsigned k = 0; k < ti->n && k < n; k++)
		free(img[k].bits);
	free(img);
	free(whole);
	free(jc);
	free(cc.jcc.slot);
	cc.jcc.slot = NULL;
	return rc;
}

int cmd_coverage(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pt", required_argument, 0, 'p' },
		{ "raw", required_argument, 0, 'r' },
		{ "elf", required_argument, 0, 'e' },
		{ "pe", required_argument, 0, 'P' },
		{ "images", required_argument, 0, 'I' },
		{ "cpu", required_argument, 0, 'c' },
		{ "distnt", no_argument, 0, 'D' },
		{ "disretc", no_argument, 0, 'R' },
		{ "format", required_argument, 0, 'f' },
		{ "output", required_argument, 0, 'o' },
		{ "fail-under", required_argument, 0, 'F' },
		{ "image", required_argument, 0, 'i' },
		{ "merge", no_argument, 0, 'M' },
		{ "help", no_argument, 0, 'h' },
		/* lcov's: taken to hand over, or to say what they are for */
		{ "symbols", required_argument, 0, 'S' },
		{ "path-map", required_argument, 0, 'Y' },
		{ "source-map", required_argument, 0, 'Z' },
		{ 0, 0, 0, 0 },
	};
	const char *lcov_opt = NULL;	/* one of lcov's options, as given */
	struct ptsec_image im;
	struct trace_images ti = { 0 }, named = { 0 };
	unsigned cpu = 0;	/* --cpu N: the run's trace of CPU N */
	bool cpu_given = false;	/* --cpu F/M: cpu_errata */
	uint32_t cpu_errata = 0;
	struct flow_facts facts;
	struct ptflow_config fc;
	const char *trace = NULL, *out = NULL;
	static char run_trace[4200];
	static char *gate_img[MAX_GATES];
	unsigned ngate = 0;
	enum fmt fmt = FMT_DEFAULT;
	long fail_under = -1;
	bool merge = false;
	int c, rc = 2;

	for (int i = 1; i < argc; i++) /* lcov needs symbols: its own inputs */
		if ((!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "lcov")) ||
		    !strcmp(argv[i], "--format=lcov"))
			return coverage_lcov(argc, argv);
	ptsec_init(&im);
	memset(&fc, 0, sizeof(fc));
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': trace = optarg; break;
		case 'r':
		case 'e':
			if ((c == 'r' ? ptsec_load_raw : ptsec_load_elf)(&im, optarg)) {
				fprintf(stderr, CMD ": %s\n", im.err);
				goto out;
			}
			break;
		case 'P':
			if (trace_input_pe(CMD, optarg, &im, &ti))
				goto out;
			break;
		case 'I':
			if (trace_input_images(CMD, optarg, &named))
				goto out;
			break;
		case 'c':
			cpu_given |= strchr(optarg, '/') != NULL;
			if (trace_input_cpu_arg(optarg, &cpu, &cpu_errata)) {
				fprintf(stderr, CMD ": --cpu wants a CPU number N or "
					"FAMILY/MODEL[/STEPPING], got '%s'\n", term_safe(optarg));
				goto out;
			}
			break;
		case 'D': fc.distnt = true; break;
		case 'R': fc.disretc = true; break;
		case 'f':
			fmt = !strcmp(optarg, "drcov") ? FMT_DRCOV
			      : !strcmp(optarg, "text") ? FMT_TEXT
			      : !strcmp(optarg, "json") ? FMT_JSON : FMT_DEFAULT;
			if (fmt == FMT_DEFAULT) {
				fprintf(stderr, CMD ": --format takes drcov, text or json, not '%s'\n",
					term_safe(optarg));
				goto out;
			}
			break;
		case 'o': out = optarg; break;
		case 'F':
			if (gate_pct_parse(optarg, 1000, &fail_under)) {
				fprintf(stderr, CMD ": --fail-under takes a percentage from 0 to 100 "
						"with at most one decimal (as printed), not '%s'\n",
					term_safe(optarg));
				goto out;
			}
			break;
		case 'i':
			if (ngate >= MAX_GATES) {
				fprintf(stderr, CMD ": more than %d --image options\n", MAX_GATES);
				goto out;
			}
			gate_img[ngate++] = optarg;
			break;
		case 'M': merge = true; break;
		case 'S': lcov_opt = "--symbols"; break;
		case 'Y': lcov_opt = "--path-map"; break;
		case 'Z': lcov_opt = "--source-map"; break;
		case 'h':
			coverage_usage(stdout);
			rc = 0;
			goto out;
		default:
			coverage_usage(stderr);
			goto out;
		}
	}
	if (fmt == FMT_DEFAULT && !merge && out && ends_with(out, ".info")) {
		/* an lcov tracefile by its name, as --merge takes it */
		trace_images_free(&ti);
		trace_images_free(&named);
		ptsec_free(&im);
		return coverage_lcov(argc, argv);
	}
	if (lcov_opt) {
		fprintf(stderr, CMD ": %s is for the source lines and functions of --format lcov "
				"(or -o FILE.info); drcov, text and json count per image and need "
				"no symbols\n", lcov_opt);
		goto out;
	}
	if (ngate && fail_under < 0) {
		fprintf(stderr, CMD ": --image selects what --fail-under checks: give both\n");
		goto out;
	}
	if (fmt == FMT_DEFAULT) /* --merge writes drcov whatever the name */
		fmt = merge || (out && ends_with(out, ".drcov")) ? FMT_DRCOV : FMT_TEXT;
	if (merge) {
		if (trace || im.n || ti.n || named.n || fail_under >= 0 || (fmt != FMT_DRCOV)) {
			fprintf(stderr, CMD ": --merge takes drcov files and -o OUT (drcov) only\n");
			goto out;
		}
		if (!out || optind == argc) {
			fprintf(stderr, CMD ": --merge needs %s\n",
				!out ? "-o OUT.drcov" : "the drcov files to merge");
			goto out;
		}
		/* OUT.info: lcov tracefiles, as with --format lcov */
		rc = (ends_with(out, ".info") ? cov_lcov_merge : cov_merge)(
			CMD, (const char *const *)argv + optind, (unsigned)(argc - optind), out);
		goto out;
	}
	if (fmt == FMT_DRCOV && !out) {
		fprintf(stderr, CMD ": drcov is binary: give -o FILE\n");
		goto out;
	}
	if (!trace) {
		if (optind + 1 != argc) {
			fprintf(stderr, CMD ": %s\n", optind == argc
				? "a run directory or --pt TRACE is required"
				: "one run directory at a time");
			goto out;
		}
		if (im.n) {
			fprintf(stderr, CMD ": a run directory brings its own code: no --raw/--elf/--pe\n");
			goto out;
		}
		if (trace_input_run(CMD, argv[optind], cpu, &im, &fc, run_trace, sizeof(run_trace),
				    &ti, &facts)) {
			rc = 1;
			goto out;
		}
		trace = run_trace;
	} else {
		if (optind != argc) {
			fprintf(stderr, CMD ": unexpected argument '%s'\n", term_safe(argv[optind]));
			goto out;
		}
		if (!im.n) {
			fprintf(stderr, CMD ": no code image (--raw, --elf or --pe)\n");
			goto out;
		}
	}
	if (named.n)
		trace_images_rename(&ti, &named);
	bool cpu_known = flownote_errata(&fc, trace == run_trace ? &facts : NULL, cpu_given,
					 cpu_errata);
	rc = collect(trace, &im, &fc, cpu_known, &ti, fmt, out, fail_under, gate_img, ngate);
out:
	trace_images_free(&ti);
	trace_images_free(&named);
	ptsec_free(&im);
	return rc;
}
