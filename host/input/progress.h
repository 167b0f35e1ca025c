/*
 * Progress of a long decode on stderr (the brief: progress on long work).
 * On a terminal, after the first second, one line rewritten in place
 * ("efipt top: boot.pt  37% (380 of 1024 MB)") and cleared at the end; not
 * for traces under 8 MB, nor when the command's own output goes to the
 * same terminal as it runs. EFIPT_PROGRESS=1 writes a line at each tenth
 * instead, terminal or not (logs, tests); EFIPT_PROGRESS=0 writes nothing.
 * The decoder reports its offset at each PSB (ptflow_on_progress()), the
 * session hands it on (progress_at()).
 */
#ifndef EFIPT_HOST_PROGRESS_H
#define EFIPT_HOST_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_flow.h"

struct progress {
	char what[160];		/* "efipt top: boot.pt" */
	uint64_t total;		/* trace bytes */
	int mode;		/* 0 off, 1 terminal, 2 a line per tenth */
	int last;		/* percent last written */
	double next;		/* monotonic time of the next terminal update */
	bool shown;		/* a terminal line is up */
};

/* For the trace file (total bytes) that command cmd decodes; streams: the
 * command writes to stdout while it decodes. */
void progress_start(struct progress *p, const char *cmd, const char *file, uint64_t total,
		    bool streams);
/* The decoder reached offset (at a PSB: ptflow_on_progress()). */
void progress_at(struct progress *p, uint64_t offset);
/* The decode has ended: the terminal line goes, a last line says 100%. */
void progress_end(struct progress *p);

#endif
