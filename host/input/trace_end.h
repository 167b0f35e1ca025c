/*
 * What the flow decoder does not report about a trace as a whole: a trace
 * without any PSB (nothing can be decoded), or one whose last packet is cut
 * by the end of the file. `efipt packets` reports both as errors; `insn`
 * and `decode` ask here so that they say the same.
 */
#ifndef EFIPT_HOST_TRACE_END_H
#define EFIPT_HOST_TRACE_END_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum trace_end {
	TRACE_END_OK = 0,	/* empty, or ends on a packet boundary (or after an error) */
	TRACE_END_NO_PSB,	/* bytes, but no PSB anywhere */
	TRACE_END_CUT,		/* the last packet is cut: *off is where it starts */
};

enum trace_end trace_end_check(const uint8_t *buf, size_t len, uint64_t *off);

/* Print the finding as "efipt CMD: PATH: ..." on stderr; returns 1 if there
 * was one (an error for the exit status), else 0. stop_full: the output
 * ended where a ToPA STOP region filled, which cuts the packet at its end
 * (SDM 33.2.7.2): a cut last packet is then said as a note, no error. */
int trace_end_report(const char *cmd, const char *path, const uint8_t *buf, size_t len,
		     bool stop_full);

#endif
