/*
 * QEMU as a child process that never outlives efipt qemu: SIGTERM, SIGINT
 * and SIGHUP sent to efipt qemu are passed on to it, it gets SIGTERM when
 * efipt qemu dies (PR_SET_PDEATHSIG; SIGTERM lets QEMU exit and the plugin
 * write its files), and a --timeout ends it (SIGTERM, then SIGKILL). Its
 * standard error is passed through, the last line it wrote kept: QEMU's
 * own reason when it fails.
 */
#ifndef EFIPT_HOST_QEMU_RUN_H
#define EFIPT_HOST_QEMU_RUN_H

#include <stdbool.h>

struct qemu_run {
	int status;		/* exit status, or 128 + the signal that ended it */
	int signal;		/* the signal efipt qemu got and passed on (0: none) */
	bool timed_out;		/* --timeout struck */
	char last_err[512];	/* QEMU's last line on stderr (not the plugin's) */
};

/*
 * Run argv (argv[0] the QEMU binary, found on PATH) until it ends;
 * timeout_s 0: no limit. Returns 0 with r filled, or -1 when it could not
 * start (said on stderr).
 */
int qemu_run(char **argv, unsigned long long timeout_s, struct qemu_run *r);

#endif
