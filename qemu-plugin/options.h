/*
 * The plugin's arguments (-plugin efipt-qemu.so,dir=RUNDIR,...; the table is
 * in docs/qemu.md). No QEMU here: plain parsing, testable alone.
 */
#ifndef EFIPT_PLUGIN_OPTIONS_H
#define EFIPT_PLUGIN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin/infer.h"
#include "qemu-plugin/ptgen.h"

struct plugin_options {
	char dir[4096];		/* the run directory */
	char args[4096];	/* every argument, comma-separated (manifest) */
	uint32_t psb;		/* bytes between PSB+ */
	bool retcomp;		/* RET compression (DisRETC=0) */
	bool exit_at_stop;	/* exit=on: end QEMU when the trace stops */
	uint32_t debugport;	/* debugport=PORT (default 0x402), off: 0 */
	bool regs;		/* regs=on (default): read registers where QEMU
				 * lets plugins (API 2 on); off: infer as with 7.2 */
	uint64_t size;		/* size=N: most bytes kept (0: no limit) */
	bool wrap;		/* mode=wrap: the last size bytes, else the first */
	struct ptgen_timing timing;	/* tsc=, mtc=, cyc=, shift= */
	bool shift_given;	/* shift= came from QEMU's -icount */
	struct infer_config cfg;
};

/* Parse argv (key=value each). Returns 0, or -1 after printing
 * "efipt-qemu: plugin argument 'ARG': why" on stderr. */
int options_parse(struct plugin_options *o, int argc, char **argv);
/* "reset", "protected", "marker", or the address; buf holds the latter. */
const char *options_start_name(const struct plugin_options *o, char *buf, unsigned len);
/* "exit", "marker", or the address */
const char *options_stop_name(const struct plugin_options *o, char *buf, unsigned len);

#endif
