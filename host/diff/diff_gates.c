/* efipt diff's CI gates; see diff_gates.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/diff/diff_gates.h"
#include "host/diff/diff_table.h"
#include "host/symbols/symmap.h"
#include "host/util/file_io.h"
#include "host/util/gate_pct.h"

#define CMD "efipt diff"

/* The gates: 0 when none crossed, else 3 (each crossing on stderr). */
int diff_gates_check(const struct diff_gates *g, const struct diff_side *a, const struct diff_side *b,
		       const struct diff_row *fr, size_t nf, const struct diff_row *ir,
		       size_t ni)
{
	int rc = 0;
	char name[1400];
	uint64_t ia = diff_own_insns(&a->fn), ib = diff_own_insns(&b->fn);
	if (g->grows >= 0 && !g->nfn && !g->nimg && diff_grows(ia, ib, g->grows)) {
		char ch[40];
		diff_change_text(ch, sizeof(ch), ia, ib);
		fprintf(stderr, CMD ": the run grew by %s (%" PRIu64 " -> %" PRIu64
			" instructions, interrupts apart), more than --fail-if-grows %s%%\n", ch,
			ia, ib, gate_pct_text(g->grows));
		rc = 3;
	}
	for (unsigned i = 0; i < g->nfn; i++) {
		const struct diff_row *m = NULL;
		unsigned hits = 0;
		for (size_t k = 0; k < nf; k++)
			if (diff_row_names_function(&fr[k], g->fn[i])) {
				m = &fr[k];
				hits++;
			}
		if (hits > 1) {
			fprintf(stderr, CMD ": --function %s: %u images have a function of that "
				"name; say which: IMAGE`%s\n", term_safe(g->fn[i]), hits,
				term_safe(g->fn[i]));
			rc = 3;
			continue;
		}
		if (!m) {
			fprintf(stderr, CMD ": --function %s: ran in neither run\n",
				term_safe(g->fn[i]));
			rc = 3;
			continue;
		}
		if (diff_grows(m->a_incl, m->b_incl, g->grows)) {
			char ch[40];
			diff_change_text(ch, sizeof(ch), m->a_incl, m->b_incl);
			diff_row_name(name, sizeof(name), m, false);
			fprintf(stderr, CMD ": %s grew by %s (%" PRIu64 " -> %" PRIu64 " inclusive "
				"instructions), more than --fail-if-grows %s%%\n", term_safe(name), ch,
				m->a_incl, m->b_incl, gate_pct_text(g->grows));
			rc = 3;
		}
	}
	for (unsigned i = 0; i < g->nimg; i++) {
		const struct diff_row *m = NULL;
		for (size_t k = 0; k < ni && !m; k++)
			if (*ir[k].image && !ir[k].irq &&
			    symopts_names_image(ir[k].image, g->img[i]))
				m = &ir[k];
		if (!m) {
			fprintf(stderr, CMD ": --image %s: ran in neither run\n", term_safe(g->img[i]));
			rc = 3;
			continue;
		}
		if (diff_grows(m->a_excl, m->b_excl, g->grows)) {
			char ch[40];
			diff_change_text(ch, sizeof(ch), m->a_excl, m->b_excl);
			fprintf(stderr, CMD ": image %s grew by %s (%" PRIu64 " -> %" PRIu64
				" instructions), more than --fail-if-grows %s%%\n", term_safe(m->image),
				ch, m->a_excl, m->b_excl, gate_pct_text(g->grows));
			rc = 3;
		}
	}
	if (g->fail_new) {
		size_t n = 0;
		for (size_t k = 0; k < nf; k++) {
			if (fr[k].in_a || !fr[k].in_b || fr[k].irq)
				continue;
			if (n++ < 20) {
				diff_row_name(name, sizeof(name), &fr[k], false);
				fprintf(stderr, CMD ": %s ran in B only (%" PRIu64 " instructions) "
					"(--fail-if-new)\n", term_safe(name), fr[k].b_incl);
			}
		}
		if (n > 20)
			fprintf(stderr, CMD ": and %zu more functions ran in B only\n", n - 20);
		if (n)
			rc = 3;
	}
	if (g->cov_lost) {
		size_t n = 0;
		for (size_t k = 0; k < nf; k++) {
			if (fr[k].b_hit >= fr[k].a_hit)
				continue;
			if (n++ < 20) {
				diff_row_name(name, sizeof(name), &fr[k], false);
				fprintf(stderr, CMD ": %s lost coverage: %" PRIu64 " -> %" PRIu64
					" distinct instructions executed (--fail-if-coverage-lost)\n",
					term_safe(name), fr[k].a_hit, fr[k].b_hit);
			}
		}
		if (n > 20)
			fprintf(stderr, CMD ": and %zu more functions lost coverage\n", n - 20);
		if (n)
			rc = 3;
	}
	return rc;
}
