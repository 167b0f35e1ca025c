/*
 * One side of efipt diff: a trace decoded through the call-stack model (as
 * efipt top and flame do, host/stack/analysis.h), its per-function counts
 * and folded stacks kept by name ("image", "function") and not by address,
 * so that two builds of one firmware, whose addresses differ, compare.
 */
#ifndef EFIPT_HOST_DIFF_DIFF_RUN_H
#define EFIPT_HOST_DIFF_DIFF_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/input/session.h"

/* A function's counts (efipt top's columns), or an image's (--by image:
 * name "", excl the instructions in the image, incl = excl, calls 0), in
 * the code's own flow or in interrupts (host/stack/profile.h): a function
 * that ran in both has two entries. Code: the counts less their interrupt
 * parts (inclusive: the code's instructions while it was on the stack);
 * interrupt: its instructions, calls and inclusive instructions in
 * interrupts' handlers (while a frame of it was in one). */
struct diff_count {
	char *image;		/* "" outside images */
	char *name;		/* "[unknown]" without symbols */
	uint64_t excl, incl, calls;
	uint64_t excl_ns, incl_ns;	/* the same in time, where the trace
					 * has it (ns; TSC ticks: !ns) */
	uint64_t hit;		/* with coverage: its distinct instructions
				 * executed (on the code's entry, else on the
				 * interrupt's: coverage is by address) */
	bool irq;		/* the interrupt entry */
};

/* Order of entries: image, name, the code's before the interrupt's. */
int diff_count_cmp(const struct diff_count *x, const struct diff_count *y);

/* A folded stack ("image`f;image`g", efipt flame's) and its instructions. */
struct diff_stack {
	char *path;
	uint64_t insns;
};

struct diff_run {
	struct diff_count *fn;	/* sorted by image, name; one per name */
	size_t nfn;
	struct diff_stack *stk;	/* sorted by path; one per path */
	size_t nstk;
	uint64_t insns, gaps, unmatched_rets;
	uint64_t irqs, irq_insns;	/* interrupts (async events); their
					 * instructions (of insns) */
	long errs;		/* decode errors */
	bool timed;		/* the trace has timing packets */
	bool ns;		/* times in ns (the TSC frequency is known),
				 * else in TSC ticks */
	uint64_t time_ns, irq_ns;	/* the time traced; in interrupts */
	bool cov;		/* coverage counted (hit) */
	uint64_t hit;		/* distinct instructions executed */
	size_t nimg, nimg_sym;	/* images; with a symbol file */
	size_t nimg_ran_nosym;	/* images that ran without a symbol file */
	size_t nimg_map;	/* named by a link map only (not checked
				 * against the code: symmap.h) */
};

/* What to take from a run besides the functions' counts. */
struct diff_want {
	bool stacks;		/* the folded stacks */
	bool cov;		/* each function's coverage (hit) */
	const char *from, *to;	/* a window (profile_window.h), NULL: none */
};

/*
 * Decode t's trace (session_open() done, with symbols) into r: functions by name, and what
 * w wants. 0, or -1 (message printed: the trace could not be decoded, out
 * of memory, the window's function never ran).
 */
int diff_run_decode(struct session *t, struct diff_run *r, const struct diff_want *w);

/* r's functions summed per image into *img (sorted by image). 0, or -1 out
 * of memory. */
int diff_run_by_image(const struct diff_run *r, struct diff_run *img);

/* The image named old is called new in r (its functions and stack
 * frames), so that a renamed image compares. 0, or -1 out of memory. */
int diff_run_rename(struct diff_run *r, const char *old, const char *new_name);

/* Whether an image of that name has a symbol file in t / ran in r. */
bool diff_run_image_has_symbols(const struct session *t, const char *image);

void diff_run_free(struct diff_run *r);

#endif
