/*
 * efipt qemu's hardware trace options: the rows of the trace option table
 * (core/pt_config.c, the same names and parsers as efipt.efi `trace`) that
 * make sense for a trace emulated by QEMU, turned into efipt-qemu.so's
 * arguments (docs/qemu.md). The others are refused with the reason.
 */
#ifndef EFIPT_HOST_QEMU_TRACE_OPTS_H
#define EFIPT_HOST_QEMU_TRACE_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/pt_config.h"

struct qemu_trace_opts {
	struct ptcfg cfg;
	unsigned seen;		/* 1 << enum ptcfg_opt of each option given */
};

/*
 * Take the trace options out of argv[1..argc) (up to a "--"), leaving the
 * others in order; *argc shrinks accordingly. --stop stays: efipt qemu's
 * own (where the trace stops), not the TraceStop range. Returns 0, or -1
 * with "--OPTION ...: why" in err.
 */
int qemu_trace_opts_take(struct qemu_trace_opts *o, int *argc, char **argv, char *err,
			 size_t errlen);

/*
 * The plugin arguments for them (",size=N,mode=stop,tsc=on,..."), taking
 * the emulated clock from QEMU's -icount in qargv[0..qargc). Returns 0, or
 * -1 with the reason in err.
 */
int qemu_trace_opts_plugin_args(const struct qemu_trace_opts *o, int qargc, char **qargv,
				char *buf, size_t cap, char *err, size_t errlen);

#endif
