/*
 * How a run of efipt.efi ended: manifest.json's status.result
 * (docs/format.md), written by the firmware and checked by the host.
 */
#ifndef EFIPT_CORE_RUN_RESULT_H
#define EFIPT_CORE_RUN_RESULT_H

enum run_result {
	RUN_OK,			/* the command did what was asked */
	RUN_UNSUPPORTED,	/* this machine cannot (no Intel PT, ...) */
	RUN_FAILED,		/* something went wrong; the message says what */
};

/* "ok", "unsupported", "failed". */
const char *run_result_name(enum run_result r);

/* The result named s. Returns 0, or -1 if s names none. */
int run_result_parse(const char *s, enum run_result *r);

#endif
