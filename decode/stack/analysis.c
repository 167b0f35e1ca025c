/* Decode through the call-stack model: see analysis.h. */
#include <stdio.h>

#include "decode/stack/analysis.h"

long analysis_decode(struct trace_input *t, struct callstack *cs)
{
	struct ptflow_sink sink = { cs, cs_on_run, cs_on_event };
	long errs = trace_input_decode(t, &sink, NULL);
	if (errs < 0)
		return -1;
	cs_finish(cs);
	if (cs->oom) {
		fprintf(stderr, "efipt %s: out of memory for the call tree\n", t->cmd);
		return -1;
	}
	return errs;
}
