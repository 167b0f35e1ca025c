/*
 * A window of a run's profile (--from, --to of top and diff): from WHERE
 * to WHERE (fn_window.h: an instruction index, or the first instruction
 * executed in a function, however control came there; the second
 * excluded); without --from from the trace's start, without --to to its
 * end. Functions are found by name in each run, so that two builds compare
 * the same part of their flows. The counts of the window are the profile
 * at its close less the profile at its open (profile_snapshot_at()): a
 * function on the stack when the window opens counts from there on. An
 * index falls between two frame changes, where the stack is the one of the
 * last: the snapshot is taken at the next change (or time step), before
 * the profile sees it, with the instructions counted up to the index and
 * the time before the step. The listener needs each block's time
 * (cs_listener.time_at_insn): the next step comes at the block after the
 * index, not only where a frame changes.
 */
#ifndef EFIPT_HOST_PROFILE_WINDOW_H
#define EFIPT_HOST_PROFILE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/stack/callstack.h"
#include "host/stack/fn_window.h"
#include "host/stack/profile.h"

/* The profile at a moment: its functions and its clocks. */
struct profwin_at {
	struct profile_fn *fn;	/* profile_snapshot()'s, n of them */
	uint32_t n;
	uint64_t insns, irqs, irq_insns, now, irq_ticks;
	bool timed;
};

struct profwin {
	struct fnwin win;	/* the functions that open and close it */
	struct fnwin_where from, to;
	struct cs_listener inner;	/* the profile's listener */
	struct profile *p;
	struct profwin_at open, close;
	bool opened, closed;
	bool done;		/* closed: nothing more is needed
				 * (flow_consumer.done) */
	bool oom;
};

/* w around the profile p (its listener ls), the window from..to (unset:
 * the trace's start, end): the listener to give cs_init. */
struct cs_listener profwin_listener(struct profwin *w, const struct fnwin_where *from,
				    const struct fnwin_where *to, struct profile *p,
				    struct symtab *st, const struct cs_listener *ls);

/* After the decoding (cs finished): close the window at the trace's end if
 * --to did not, then out[0..*n) = the window's counts (malloc'd) and *at
 * its clocks (close less open). 0; -1 out of memory; 1 the window never
 * opened (--from never ran), 2 it never closed (--to never ran after it),
 * 3 it closed before it opened (--to an index before --from's function):
 * for 1-3 why (unless NULL) says it as calls and timeline do
 * (fnwin_why_empty()). */
int profwin_counts(struct profwin *w, const struct callstack *cs, struct profile_fn **out,
		   uint32_t *n, struct profwin_at *at, char *why, size_t whycap);

void profwin_free(struct profwin *w);

#endif
