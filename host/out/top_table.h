/*
 * What efipt top prints (efipt decode --symbols prints the same): the
 * functions of the call-stack model's profile (or, by_image, the images)
 * sorted by exclusive instructions (by exclusive time where the trace has
 * timing packets), as text (a header of counts, then a table), jsonl or
 * csv, on standard output.
 */
#ifndef EFIPT_HOST_TOP_TABLE_H
#define EFIPT_HOST_TOP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/input/session.h"
#include "host/stack/callstack.h"
#include "host/stack/fn_window.h"
#include "host/stack/profile.h"

enum { TOP_TEXT, TOP_JSONL, TOP_CSV };

/* A window's counts (profile_window.h) instead of the whole profile's. */
struct top_window {
	const struct profile_fn *fn;	/* n of them */
	uint32_t n;
	uint64_t insns, ticks;		/* its instructions, its time */
	const struct fnwin_where *from, *to;	/* as given */
};

/* The rows of p (functions of t's symbols, counted over cs; or the
 * window's, win not NULL) in format fmt (TOP_*), at most limit (~0: 30 in
 * text, all otherwise); errs: the decode errors. 0, or -1 out of memory
 * (printed). */
int top_table_write(const struct session *t, const struct callstack *cs, const struct profile *p,
		    const struct top_window *win, long errs, bool by_image, int fmt,
		    unsigned long long limit);

/* A time as text: ns as us with ns precision ("12.345"), or TSC ticks
 * (!ns); sign: "+" before one not negative (a difference). */
void top_time_text(char *buf, size_t cap, int64_t v, bool ns, bool sign);

#endif
