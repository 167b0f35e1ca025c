/*
 * The firmware's boot-performance records (host/input/fpdt_run.h) as efipt
 * info lists them and as a timeline track beside the call stacks.
 */
#ifndef EFIPT_HOST_FPDT_OUT_H
#define EFIPT_HOST_FPDT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/input/fpdt_run.h"

struct tl_sink;
struct image_list;
struct fpdt_window;

/* efipt info's section: the tables, the basic boot record, S3, every span
 * (start, duration, what, module) and every damaged record. */
void fpdtout_info(FILE *out, const struct fpdt_run *f);

/*
 * "Does it agree with DP?": each measurement whose module is an image of l
 * beside that image's window in the trace (w, one per image of l): the
 * record's duration, the trace's first to last time in the image, and
 * whether the record's start..end brackets it. timed: w has times (else
 * only instructions are said).
 */
void fpdtout_vs_trace(FILE *out, const struct fpdt_run *f, const struct image_list *l,
		      const struct fpdt_window *w, bool timed);

/* Every damaged table or record on stderr, "CMD: PATH: offset ...:
 * skipped". */
void fpdtout_warn_damage(const char *cmd, const struct fpdt_run *f);

/*
 * The records as timeline tracks (tids from tid0 on, as many as the spans'
 * nesting needs; named "Firmware FPDT ..."): the spans as slices, the basic
 * boot record's times as instants. A record's time t (ns since reset) is
 * placed at t - shift_ns; records that end before shift_ns are left out
 * (*dropped counts them). Returns the number of tracks used.
 */
int fpdtout_track(struct tl_sink *s, const struct fpdt_run *f, int tid0, uint64_t shift_ns,
		  uint64_t *dropped);

#endif
