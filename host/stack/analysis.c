/* Decode through the call-stack model: see analysis.h. */
#include <stdio.h>

#include "host/stack/analysis.h"

long analysis_decode(struct session *s, unsigned i, struct callstack *cs, uint64_t until)
{
	struct flow_consumer c = cs_consumer(cs);
	c.until = until;
	long errs = session_decode(s, i, &c, 1);
	if (errs < 0)
		return -1;
	cs_finish(cs);
	if (cs->oom) {
		fprintf(stderr, "%s: out of memory for the call tree\n", s->prefixed);
		return -1;
	}
	return errs;
}
