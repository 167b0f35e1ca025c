/*
 * A window of a run for efipt diff (--from F, --to G): from the first
 * instruction executed in function F (or the trace's start) to the first
 * executed in G after it (or the trace's end; excluded), whether control
 * came there by a call, a jump or a return, found in each run by name, so
 * that two builds compare the same part of their flows. The counts of the window are the
 * profile at its close less the profile at its open (profile_snapshot()):
 * a function on the stack when the window opens counts from there on.
 */
#ifndef EFIPT_HOST_DIFF_DIFF_WINDOW_H
#define EFIPT_HOST_DIFF_DIFF_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "host/stack/callstack.h"
#include "host/stack/fn_window.h"
#include "host/stack/profile.h"

/* The profile at a moment: its functions and its clocks. */
struct diffwin_at {
	struct profile_fn *fn;	/* profile_snapshot()'s, n of them */
	uint32_t n;
	uint64_t insns, irqs, irq_insns, now, irq_ticks;
	bool timed;
};

struct diffwin {
	struct fnwin win;	/* where it opens and closes */
	struct cs_listener inner;	/* the profile's listener */
	struct profile *p;
	struct diffwin_at open, close;
	bool oom;
};

/* w around the profile p (its listener ls): the listener to give cs_init. */
struct cs_listener diffwin_listener(struct diffwin *w, const char *from, const char *to,
				    struct profile *p, struct symtab *st,
				    const struct cs_listener *ls);

/* After the decoding (cs finished): close the window at the trace's end if
 * --to did not, then out[0..*n) = the window's counts (malloc'd) and *at
 * its clocks (close less open). 0; -1 out of memory; 1 the window never
 * opened (--from never ran), 2 it never closed (--to never ran after it). */
int diffwin_counts(struct diffwin *w, const struct callstack *cs, struct profile_fn **out,
		   uint32_t *n, struct diffwin_at *at);

void diffwin_free(struct diffwin *w);

#endif
