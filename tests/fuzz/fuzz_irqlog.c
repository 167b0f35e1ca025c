/*
 * libFuzzer target for a run directory's interrupts.jsonl (efipt qemu's
 * interrupt vectors): host/input/irqlog.c's parser over an exact-size heap
 * copy (any read outside it is caught); what it accepts must be sorted,
 * every vector in 0-255 or unknown, every record found again and named.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/input/irqlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct irqlog l;
	char err[256];
	if (!irqlog_parse(&l, copy, size, err, sizeof(err))) {
		for (size_t i = 0; i < l.n; i++) {
			const struct irqlog_rec *r = &l.v[i];
			if (r->vector < -1 || r->vector > 255 || (r->timer && r->vector < 0))
				abort();
			if (i && (r->cpu < l.v[i - 1].cpu ||
				  (r->cpu == l.v[i - 1].cpu && r->insn < l.v[i - 1].insn)))
				abort(); /* not sorted */
			const struct irqlog_rec *f = irqlog_find(&l, r->cpu, r->insn);
			if (!f || f->cpu != r->cpu || f->insn != r->insn)
				abort();
			const char *name = irqlog_name(r);
			if ((r->vector >= 0) != (name != NULL) || (name && !name[0]))
				abort();
		}
	}
	irqlog_free(&l);
	free(copy);
	return 0;
}
