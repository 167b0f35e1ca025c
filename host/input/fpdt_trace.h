/*
 * What the trace says of the images the firmware's boot-performance
 * records name ("does it agree with DP?"): per image, the first and last
 * time the trace ran its code and how many instructions, to set beside a
 * record's start and duration. Times are the trace's TSC estimate in ns
 * (the TSC counts from reset, as the records' ns since reset do), known to
 * the resolution of the trace's timing packets.
 */
#ifndef EFIPT_HOST_FPDT_TRACE_H
#define EFIPT_HOST_FPDT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "host/input/session.h"

struct fpdt_window {
	uint64_t first, last;	/* ns (session_ns of the TSC estimate) */
	uint64_t insns;
	bool timed;		/* first and last are known */
};

/* Decode trace i of t (session_open() done) into w, one per t->images.v.
 * The decoder's error count (>= 0), or -1 (said). */
long fpdttrace_windows(struct session *t, unsigned i, struct fpdt_window *w);

#endif
