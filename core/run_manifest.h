/*
 * The one writer of a run directory's manifest.json (docs/format.md), for
 * efipt.efi (efi/run.c) and the QEMU plugin (qemu-plugin/manifest.c): the
 * members every run starts with, the "files" array and the "status" that
 * ends it. Each producer writes its own members in between, one per line:
 * "  \"key\": value,\n". Every string goes through sb_json_escape, so the
 * text is valid JSON whatever bytes the command line or names hold.
 */
#ifndef EFIPT_CORE_RUN_MANIFEST_H
#define EFIPT_CORE_RUN_MANIFEST_H

#include <stdint.h>

#include "core/strbuf.h"

struct runmf_head {
	const char *run_id;
	const char *started;	/* ISO 8601 local time, or "unknown" */
	const char *command;	/* "trace", "qemu", ... */
	const char *command_line;
};

/* "{", format, versions, run_id, started, command, command_line. */
void runmf_open(struct strbuf *sb, const struct runmf_head *h);

/* The "files" array: runmf_files_open, runmf_file for entry 0, 1, ...,
 * then runmf_close with their number. status: "written" or why not. */
void runmf_files_open(struct strbuf *sb);
void runmf_file(struct strbuf *sb, unsigned index, const char *name, uint64_t size,
		const char *status);

/* Ends the "files" array (nfiles entries written) and writes "status" and
 * the closing brace. efi_status: the EFI_STATUS name, or "none". */
void runmf_close(struct strbuf *sb, unsigned nfiles, const char *result,
		 const char *efi_status, const char *message);

#endif
