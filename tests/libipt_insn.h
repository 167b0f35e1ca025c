/*
 * libipt's instruction flow decoder over a whole trace, for the programs
 * that hold efipt's decoding next to it: events go to on_event (if set),
 * each instruction goes to on_insn, and after a decode error decoding
 * resumes at the next PSB (or stops: stop_at_error). Header-only, so each
 * test program stays one source file.
 */
#ifndef EFIPT_TESTS_LIBIPT_INSN_H
#define EFIPT_TESTS_LIBIPT_INSN_H

#include <stdbool.h>
#include <stdint.h>

#include <intel-pt.h>

struct libipt_insn_walk {
	void (*on_insn)(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn);
	void *ctx;
	bool stop_at_error;
	unsigned long errors;		/* decode errors (the end of the trace is none) */
	int first_error;		/* libipt's status at the first, negative */
	uint64_t first_error_offset;	/* and where in the trace it was */
	void (*on_event)(void *ctx, const struct pt_event *ev);	/* may be NULL */
};

static inline void libipt_insn_walk(struct pt_insn_decoder *d, struct libipt_insn_walk *w)
{
	int st;
	while ((st = pt_insn_sync_forward(d)) >= 0) {
		for (;;) {
			while (st >= 0 && (st & pts_event_pending)) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
				if (st >= 0 && w->on_event)
					w->on_event(w->ctx, &ev);
			}
			if (st < 0)
				break;
			struct pt_insn insn;
			st = pt_insn_next(d, &insn, sizeof(insn));
			if (st < 0)
				break;
			w->on_insn(w->ctx, d, &insn);
		}
		if (st == -pte_eos)
			break;
		if (!w->errors++) {
			w->first_error = st;
			w->first_error_offset = 0;
			pt_insn_get_offset(d, &w->first_error_offset);
		}
		if (w->stop_at_error)
			break;
	}
}

#endif
