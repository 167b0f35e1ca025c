/* The coverage report, its gate and the drcov file; see cov_report.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strbuf.h"
#include "host/out/cov_report.h"
#include "host/util/gate_pct.h"
#include "host/util/file_io.h"

#define CMD "efipt coverage"

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


void cov_report(FILE *f, int fmt, const struct ptcov *c, const bool *whole,
		   const struct ptflow_stat *st, const struct jcc_count *jc,
		   const struct jcc_count *jt, struct cov_totals *t)
{
	memset(t, 0, sizeof(*t));
	if (!f)
		;
	else if (fmt == COV_TEXT)
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
		} else if (fmt == COV_TEXT) {
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
	} else if (fmt == COV_TEXT) {
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
int cov_gates(const struct ptcov *c, const struct cov_totals *t, long gate, char **img,
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
