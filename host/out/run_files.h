/*
 * A run directory written file by file (efipt recover --linux): each file
 * atomically (host/util/file_io.h), noted with its size and status for the
 * manifest, the first failure remembered; files straight from the recorder
 * region (the trace's spans, a code range) copied 1 MiB at a time; and
 * manifest.json, the format efipt.efi recover writes (docs/format.md).
 */
#ifndef EFIPT_HOST_RUN_FILES_H
#define EFIPT_HOST_RUN_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/recorder.h"
#include "host/input/recorder_mem.h"

#define RUNFILES_MAX 1024

struct run_files {
	char dir[4096];
	struct {
		char name[64];
		uint64_t size;
		const char *status;	/* "written", "removed", or why not */
	} f[RUNFILES_MAX];
	unsigned n;
	bool failed;		/* some file was not written */
	char why[512];		/* the first one: "NAME: reason" */
};

/* name of size bytes in dir with status (why it failed, or "written"). */
void runfiles_note(struct run_files *o, const char *name, uint64_t size, const char *status);

/* name from memory. */
void runfiles_put(struct run_files *o, const char *name, const void *data, size_t len);

/* name from the region m: the trace's spans up to its end e, or (e NULL)
 * len bytes at offset off. */
void runfiles_put_region(struct run_files *o, const char *name, struct recmem *m,
			 struct ptrec *r, const struct ptrec_end *e, uint64_t off, uint64_t len);

/* manifest.json: the run, the recorder's firmware and CPU (r may be NULL),
 * members (JSON members, or ""), the files, the result and its message.
 * 0, or -1 when it could not be written (o->why says why). */
int runfiles_manifest(struct run_files *o, const char *run_id, const char *started,
		      const char *cmdline, struct ptrec *r, const char *members,
		      const char *result, const char *message);

/* An incomplete run is no result: remove the files written ("removed"). */
void runfiles_remove_written(struct run_files *o);

#endif
