/*
 * The run directory \efipt\<run-id>\ on the ESP: every file the run writes,
 * and manifest.json last, which says what was written and how the run ended
 * (docs/format.md).
 */
#ifndef EFIPT_EFI_RUN_H
#define EFIPT_EFI_RUN_H

#include <efi.h>

#include "core/pt_caps.h"
#include "core/run_result.h"
#include "core/strbuf.h"
#include "efi/fs.h"

#define RUN_MAX_FILES 512

struct run_file {
	char name[48];
	UINT64 size;
	EFI_STATUS status;
};

struct run {
	struct esp *esp;
	char id[32];
	CHAR16 dir[64];
	char started[32];       /* ISO 8601 from the RTC, or "unknown" */
	const char *command;
	const char *cmdline;
	const struct ptcaps *caps; /* NULL until the command detected the CPU */
	char extra[8192];       /* further manifest members, "key":value,... */
	struct strbuf extra_sb;
	unsigned nfiles;
	struct run_file files[RUN_MAX_FILES];
	enum run_result result;
	EFI_STATUS status;
	char message[512];
};

/* Pick a fresh, sortable run-id from the RTC and create the directory. */
EFI_STATUS run_create(struct run *run, struct esp *esp, const char *command,
		      const char *cmdline);

/* Write one file into the run directory (atomically) and record it. */
EFI_STATUS run_write_file(struct run *run, const char *name, const void *data, UINTN len);

/* The same for data written in pieces: begin, esp_file_append..., end. end
 * commits (or, given an error, discards) and records the file. */
EFI_STATUS run_file_begin(struct run *run, const char *name, UINT64 total, struct esp_file *w);
EFI_STATUS run_file_end(struct run *run, const char *name, struct esp_file *w, EFI_STATUS st);

/* A run that cannot be completed (the volume filled): delete every file it
 * wrote, so that only a manifest saying why is left (their entries say
 * EFI_ABORTED). Returns the number deleted. */
unsigned run_discard_files(struct run *run);

/* Record the outcome: result, status, one-line message. */
void run_set_result(struct run *run, enum run_result result, EFI_STATUS st,
		    const char *message);

/* Add one manifest member, "key": value (printf-style; value already JSON). */
void run_member(struct run *run, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Add manifest members already formatted ("key": value, ... without a
 * trailing separator). */
void run_members(struct run *run, const char *text);

/* Write manifest.json. Returns the write status. */
EFI_STATUS run_write_manifest(struct run *run);

#endif
