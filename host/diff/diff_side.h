/*
 * One run of efipt diff: its session and counts (by function and by image),
 * and what its manifest says of the machine, for the header, the
 * different-machines warning and the jsonl summary.
 */
#ifndef EFIPT_HOST_DIFF_DIFF_SIDE_H
#define EFIPT_HOST_DIFF_DIFF_SIDE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "host/diff/diff_run.h"
#include "host/input/session.h"

/* One run as the header describes it. */
struct diff_side {
	const char *label;	/* "A", "B" */
	struct session t;
	struct diff_run fn, img;
	char firmware[200], cpu[64], command[64];
};

/* What the manifest says of the firmware and the CPU. */
void diff_side_facts(struct diff_side *s);
/* "A: DIR (efipt qemu; firmware; CPU): N instructions, ... symbols for ..." */
void diff_side_text(FILE *f, const struct diff_side *s);
/* The jsonl summary's object of the run (new reference). */
json_t *diff_side_json(const struct diff_side *s);
/* Warn (stderr) when the runs are of different CPUs or firmware. */
void diff_side_warn_machines(const struct diff_side *a, const struct diff_side *b);
/* Whether both runs have time, in one unit: then times are compared. */
bool diff_side_both_timed(const struct diff_side *a, const struct diff_side *b);

#endif
