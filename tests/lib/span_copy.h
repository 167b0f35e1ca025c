/*
 * The trace spans an extraction reports (ptout_span_fn: rtit_extract,
 * ptcpus_extract, boottrace_extract), copied out of the simulated memory
 * into one buffer, for the tests that read a trace back.
 */
#ifndef EFIPT_TESTS_SPAN_COPY_H
#define EFIPT_TESTS_SPAN_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "host/util/sim_mem.h"

struct span_copy {
	struct simmem *mem;
	uint8_t *buf;
	size_t len, cap;
};

/* Appends [phys, phys+len) of c->mem (ctx: a struct span_copy); 1, stopping
 * the extraction, when the buffer is full. */
int span_copy(void *ctx, uint64_t phys, uint64_t len);

#endif
