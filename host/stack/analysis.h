/*
 * Decode a trace through the call-stack model (what efipt top, flame and
 * calls share): trace i of the session through cs (its consumer,
 * cs_consumer(), with until: enough after that many instructions, 0 the
 * whole trace; done: flow_consumer.done), then every frame closed. Decode errors and gaps are
 * counted, not fatal. Returns the number of decode errors, or -1 when
 * decoding could not start or the model ran out of memory (printed).
 */
#ifndef EFIPT_HOST_ANALYSIS_H
#define EFIPT_HOST_ANALYSIS_H

#include "host/input/session.h"
#include "host/stack/callstack.h"

long analysis_decode(struct session *s, unsigned i, struct callstack *cs, uint64_t until,
		     const bool *done);

/* The same with more consumers beside the model (more[0..nmore)). */
long analysis_decode_with(struct session *s, unsigned i, struct callstack *cs, uint64_t until,
			  const bool *done, const struct flow_consumer *more, unsigned nmore);

#endif
