/*
 * A run directory's fpdt.bin (the firmware's boot-performance tables,
 * core/fpdt.h) as efipt info, timeline and diff show it: the basic boot
 * record's times, EDK2's start and end records paired into spans (what,
 * which module, start, duration), and every damaged table or record named
 * (offset, type, length, why) and skipped.
 */
#ifndef EFIPT_HOST_FPDT_RUN_H
#define EFIPT_HOST_FPDT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fpdt.h"

struct image_list;

/* One measurement: a start record and its end, or a single event (ID 0,
 * dur 0, single set). */
struct fpdt_span {
	char what[24];		/* "StartImage", "DB:Start", ... (fpdt_progress_name) */
	char name[FPDT_NAME_MAX];	/* the record's string, else the image of its GUID */
	char guid[37];		/* the (first) GUID */
	char image[64];		/* the image of images.json with that FvFile GUID ("" none) */
	uint64_t start, dur;	/* ns since reset */
	uint64_t off;		/* the start record's offset in fpdt.bin */
	unsigned nth;		/* 0 for the first span of this what/name/guid, 1 next... */
	bool single;
};

struct fpdt_run {
	bool present;		/* the run has fpdt.bin */
	char path[4200];
	unsigned tables;
	char table_names[32];	/* "FPDT FBPT S3PT" */
	bool have_boot;
	uint64_t boot[FPDT_BOOT_FIELDS];
	struct fpdt_rec s3[2];	/* resume, suspend */
	bool have_s3[2];
	struct fpdt_span *span;	/* sorted by start */
	size_t nspan;
	size_t records;		/* records read (not damaged) */
	size_t unpaired;	/* starts without an end, ends without a start */
	char (*damage)[192];	/* "offset N: type 0xT, length L: why" */
	size_t ndamage;
	bool oom;
};

/* Parse buf (fpdt.bin's bytes) into f; images (may be NULL) name GUIDs.
 * 0, or -1 out of memory. */
int fpdtrun_parse(struct fpdt_run *f, const uint8_t *buf, size_t len,
		  const struct image_list *images);

/* DIR/fpdt.bin when it exists (f->present false when not: no error). 0, or
 * -1 with "PATH: reason" in err (unreadable, out of memory). */
int fpdtrun_load(struct fpdt_run *f, const char *dir, const struct image_list *images,
		 char *err, size_t errlen);

void fpdtrun_free(struct fpdt_run *f);

/* The span's label: "StartImage PcdDxe" (what, then name or GUID). */
void fpdtrun_label(const struct fpdt_span *s, char *buf, size_t cap);

#endif
