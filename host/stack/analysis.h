/*
 * Decode a trace through the call-stack model (what efipt top and flame
 * share): the trace of t through cs, then every frame closed. Decode errors
 * and gaps are counted, not fatal. Returns the number of decode errors, or
 * -1 when decoding could not start (message printed).
 */
#ifndef EFIPT_HOST_ANALYSIS_H
#define EFIPT_HOST_ANALYSIS_H

#include "host/stack/callstack.h"
#include "host/input/trace_input.h"

long analysis_decode(struct trace_input *t, struct callstack *cs);

#endif
