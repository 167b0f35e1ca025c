/*
 * A window of the flow by function (--from F, --to G in calls, timeline
 * and diff): it opens at the first instruction executed in function F (or
 * the trace's start) and closes at the first executed in G after that (or
 * the trace's end; excluded), whether control came there by a call, a jump
 * or a return. A listener asks at each frame change (fnwin_at()); the
 * functions are found by name, so that two builds name the same part of
 * their flows.
 */
#ifndef EFIPT_HOST_FN_WINDOW_H
#define EFIPT_HOST_FN_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "host/stack/callstack.h"

/* Does spec ("f" or "image`f") name the function name of image? */
bool fnwin_names(const char *image, const char *name, const char *spec);

/* An option's WHERE: an instruction index (decimal, or hex with 0x) or a
 * function. */
struct fnwin_where {
	bool set;
	bool is_fn;
	uint64_t index;		/* !is_fn */
	const char *fn;		/* is_fn: NAME or IMAGE`NAME */
};

/* v as a WHERE: 0, or -1 (empty; a sign; digits that are no index: more
 * after them, past 2^64; a function's name never begins with a digit, an
 * image's may: 8254TimerDxe`Foo is a function). */
int fnwin_parse(const char *v, struct fnwin_where *w);

/* An option table's setter (core/opt_table.h) of the struct fnwin_where
 * at row->field. */
struct opt_row;
struct strbuf;
int fnwin_opt_where(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err);

/* The --from and --to rows of a command's option table: the struct
 * fnwin_where members from and to of type, counting what ("count only",
 * "only entries"). */
#define FNWIN_OPT_ROWS(type, what)                                                        \
	{ "from", OPT_VALUE, fnwin_opt_where, offsetof(type, from), "WHERE",               \
	  what " from WHERE on: an instruction index N,\nor the first instruction executed " \
	  "in a FUNCTION\n(NAME or IMAGE`NAME)" },                                          \
	{ "to", OPT_VALUE, fnwin_opt_where, offsetof(type, to), "WHERE",                    \
	  what " before WHERE: an instruction index N,\nor the first instruction executed "  \
	  "in a FUNCTION\nafter the window opened" }

/* Two indices that leave no instruction between them: said (cmd: "efipt
 * top") and true. */
bool fnwin_empty(const char *cmd, const struct fnwin_where *from, const struct fnwin_where *to);

/* the window's state (fnwin.state), and what fnwin_at() saw: NONE, no
 * change here */
enum { FNWIN_BEFORE, FNWIN_OPEN, FNWIN_CLOSED, FNWIN_NONE };

struct fnwin {
	const char *from, *to;	/* NULL: the trace's start, end */
	struct symtab *st;
	uint8_t *match;		/* per function id: 0 not known yet, else
				 * 1 | 2 (from) | 4 (to) */
	uint32_t nmatch;
	int state;		/* FNWIN_* */
	bool oom;
};

void fnwin_init(struct fnwin *w, const char *from, const char *to, struct symtab *st);

/* Control is in fn from here on: FNWIN_OPEN when the window opens here,
 * FNWIN_CLOSED when it closes here, else FNWIN_NONE. */
int fnwin_at(struct fnwin *w, uint32_t fn);

/* The function control comes to when f leaves (the listener's leave, f
 * still on the stack), or UINT32_MAX: a return goes to the frame below. */
uint32_t fnwin_leave_to(const struct callstack *cs, int why);

void fnwin_free(struct fnwin *w);

/*
 * A window as instruction indices [from, to) (calls, timeline), its ends
 * given as indices or found as the functions run: from is UINT64_MAX until
 * --from's function ran, to 0 (none) until --to's did (then done: nothing
 * more is needed, flow_consumer.done).
 */
struct fnwin_span {
	uint64_t from, to;
	struct fnwin_where from_w, to_w;
	struct fnwin win;
	bool by_fn;		/* a function gives an end */
	bool opened;		/* --from's function ran */
	bool done;
};

/* from..to (unset: the trace's start, end) over st's functions. */
void fnwin_span_init(struct fnwin_span *s, const struct fnwin_where *from,
		     const struct fnwin_where *to, struct symtab *st);

/* Control is in fn from here on, at instruction cs->insns (a listener's
 * enter with the frame's function, its leave with fnwin_leave_to()'s):
 * the index of a function's end is known now (--to's only after the
 * window opened). */
void fnwin_span_at(struct fnwin_span *s, const struct callstack *cs, uint32_t fn);

/* After the decoding of insns instructions, why the window from..to holds
 * nothing, into buf ("--from NAME: it never ran ...") and true; false: it
 * holds something. opened: --from's function ran, first at instruction
 * from_at; closed: --to's function ran after that. */
bool fnwin_why_empty(const struct fnwin_where *from, const struct fnwin_where *to, bool opened,
		     uint64_t from_at, bool closed, uint64_t insns, char *buf, size_t cap);

/* After the decoding of insns instructions: the window is empty or a
 * function's end never came, said into buf ("--from NAME: it never ran
 * ...") and true; false: the window is whole. */
bool fnwin_span_missing(const struct fnwin_span *s, uint64_t insns, char *buf, size_t cap);

#endif
