/* Decode through the call-stack model: see analysis.h. */
#include <stdio.h>

#include "host/stack/analysis.h"

long analysis_decode(struct session *s, unsigned i, struct callstack *cs, uint64_t until,
		     const bool *done)
{
	return analysis_decode_with(s, i, cs, until, done, NULL, 0);
}

long analysis_decode_with(struct session *s, unsigned i, struct callstack *cs, uint64_t until,
			  const bool *done, const struct flow_consumer *more, unsigned nmore)
{
	struct flow_consumer c[4];
	if (nmore > 3)
		nmore = 3;
	c[0] = cs_consumer(cs);
	c[0].until = until;
	c[0].done = done;
	for (unsigned k = 0; k < nmore; k++)
		c[k + 1] = more[k];
	long errs = session_decode(s, i, c, nmore + 1);
	if (errs < 0)
		return -1;
	cs_finish(cs);
	if (cs->oom) {
		fprintf(stderr, "%s: out of memory for the call tree\n", s->prefixed);
		return -1;
	}
	return errs;
}
