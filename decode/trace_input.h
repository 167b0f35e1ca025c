/*
 * The inputs every analysis takes (efipt symbols, top, flame): a run
 * directory, or a raw trace (--pt) with code images (--raw/--pe/--elf, as
 * efipt insn) and --images FILE (images.json format) naming the images that
 * code belongs to; --symbols and --path-map for the symbol files.
 */
#ifndef EFIPT_DECODE_TRACE_INPUT_H
#define EFIPT_DECODE_TRACE_INPUT_H

#include <getopt.h>
#include <stdbool.h>

#include "core/pt_flow.h"
#include "decode/pt_sections.h"
#include "decode/symbols/symmap.h"
#include "decode/symbols/symtab.h"

/* A run directory's trace.pt, its code snapshots as sections of im, and
 * what its manifest says about the CPU and the trace in fc. Messages go to
 * stderr prefixed "efipt CMD: ". 0 or -1. Shared with efipt insn --run. */
int trace_input_load_run(struct ptsec_image *im, struct ptflow_config *fc, const char *dir,
			 char *trace, size_t cap, const char *cmd);

struct trace_input {
	const char *cmd;		/* "top": for messages */
	struct ptsec_image im;
	struct ptflow_config fc;
	char trace[4200];		/* "" until --pt or a run directory */
	char run[4096];			/* the run directory, if any */
	const char *images_file;	/* --images */
	struct symimage *img;		/* the traced images */
	size_t nimg, img_cap;
	struct symopts so;
	struct symtab st;
};

/* getopt_long options trace_input_option() takes (values 0x100..). */
#define TRACE_INPUT_OPTS                                                      \
	{ "pt", required_argument, 0, 0x100 }, { "run", required_argument, 0, 0x101 }, \
	{ "raw", required_argument, 0, 0x102 }, { "elf", required_argument, 0, 0x103 }, \
	{ "pe", required_argument, 0, 0x104 }, { "images", required_argument, 0, 0x105 }, \
	{ "symbols", required_argument, 0, 0x106 },                               \
	{ "path-map", required_argument, 0, 0x107 },                              \
	{ "distnt", no_argument, 0, 0x108 }, { "disretc", no_argument, 0, 0x109 }

#define TRACE_INPUT_USAGE                                                      \
	"inputs:  RUNDIR (or --run RUNDIR), or --pt TRACE with code images:\n"    \
	"  --raw FILE[:from[-to]]:BASE, --elf FILE[:BASE], --pe FILE[:BASE]  as efipt insn\n" \
	"  --images FILE   images.json naming the images the code belongs to\n"    \
	"                  (default: one image per --pe/--elf file)\n"              \
	"  --distnt, --disretc  the trace was recorded with DisTNT / DisRETC\n"     \
	"symbols:\n"                                                               \
	"  --symbols PATH  a build directory (searched recursively for NAME.debug,\n" \
	"                  NAME.so, NAME.dll) or one ELF file; repeatable\n"        \
	"  --path-map OLD=NEW  rewrite the build path an image records\n"

void trace_input_init(struct trace_input *t, const char *cmd);
void trace_input_free(struct trace_input *t);
/* An option of TRACE_INPUT_OPTS: 0, or -1 (message printed). */
int trace_input_option(struct trace_input *t, int c, const char *arg);
/* After the options (positional: a run directory or NULL): the image list
 * and, with want_trace, the trace; then every image's symbol file. 0 or -1
 * (message printed). */
int trace_input_finish(struct trace_input *t, const char *positional, bool want_trace);
/* Decode the trace into sink. Returns the number of decode errors, or -1
 * when it cannot start (message printed). */
long trace_input_decode(struct trace_input *t, const struct ptflow_sink *sink,
			struct ptflow_stat *stat);

#endif
