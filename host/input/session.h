/*
 * One input session for every command that decodes a trace (insn, decode,
 * symbols, top, flame, calls, coverage, timeline): the inputs the command
 * line names, each read once, and one decoder loop.
 *
 * Inputs: a run directory (its trace per CPU, code snapshots, images.json,
 * the CPU's errata, DisTNT/DisRETC and timing from manifest.json), or a raw
 * trace (--pt) with code images (--raw/--elf/--pe) and a list naming them
 * (--images, images.json format; each --pe or --elf file names itself).
 * Options given on the command line win over what a run directory says.
 *
 * session_open() reads them: the run directory parsed once into one
 * struct run_dir, the code the decoder reads (snapshots mapped, not
 * copied), one list of struct image, and with SESSION_SYMBOLS every
 * image's symbol file and the address -> function table.
 *
 * session_decode() is the decoder loop: one trace, with the block cache,
 * the progress line, the trace's end checked, decode errors and errata
 * said as every command says them; it hands each consumer batches of
 * blocks with everything it needs (struct ptflow_batch: time, CBR, the
 * code for lengths), runs (insn's listing) and events, and stops where
 * every consumer has had enough (a --to window).
 */
#ifndef EFIPT_HOST_SESSION_H
#define EFIPT_HOST_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/flow_setup.h"
#include "core/opt_table.h"
#include "core/pt_flow.h"
#include "host/input/consumer.h"
#include "host/input/image.h"
#include "host/input/pt_sections.h"
#include "host/input/rundir.h"
#include "host/symbols/symmap.h"
#include "host/symbols/symtab.h"

/* One trace of the session: a run's per CPU, or --pt's. */
struct session_trace {
	unsigned cpu;
	char path[4200];
};

struct session {
	const char *cmd;		/* "top": messages say "efipt top: ..." */
	char prefixed[32];		/* "efipt top" */
	/* set by the input options (session_input_rows) */
	char pt[4200];			/* --pt ("" none; "-" standard input) */
	char run_path[4096];		/* --run or the positional run directory */
	const char *images_file;	/* --images */
	unsigned cpu;			/* --cpu N: the run's trace of CPU N */
	bool model_given;		/* --cpu F/M[/S]: model_errata */
	uint32_t model_errata;
	struct ptflow_config fc;	/* --distnt, --disretc, timing, --max-steps */
	bool distnt, disretc;		/* given on the command line */
	uint8_t mtc_freq, nom_freq;	/* given (nom_freq 0: not) */
	bool mtc_given;
	uint32_t cpuid15_eax, cpuid15_ebx;	/* --cpuid-0x15 (0: not given) */
	uint32_t cache_entries;		/* --cache (default 65536; 0: none) */
	uint64_t tsc_hz;		/* --tsc-hz, else the run's (0: unknown) */
	const char *tsc_src;		/* where tsc_hz is from */
	struct symopts so;		/* --symbols, --path-map */
	const char *kernel_syms;	/* --kernel-symbols FILE[:SLIDE|:auto] */
	/* set by the command */
	bool streams;			/* it writes to stdout while decoding */
	bool errors_shown;		/* its output names each decode error */
	/* after session_open() */
	bool have_run;
	struct run_dir rd;
	struct ptsec_image code;	/* what the decoder reads */
	struct image_list images;	/* sorted by base */
	int overlap;			/* some images overlap */
	struct symtab st;		/* SESSION_SYMBOLS */
	struct flow_facts facts;	/* a run directory's (else none) */
	bool cpu_known;			/* the errata are the CPU's (flow_notes.h) */
	struct session_trace *trace;
	unsigned ntrace;
	/* during session_decode(): the code the decoder reads now (the
	 * code changes reached so far applied: code_changes.h), for a
	 * consumer that reads instructions as they are delivered */
	struct ptimg code_now;
	/* after session_decode() */
	struct ptflow_stat stat;	/* the decoder's counts of the last trace */
};

enum {
	SESSION_TRACE = 1,	/* the command decodes: a trace is needed */
	SESSION_SYMBOLS = 2,	/* every image's symbol file, st */
	SESSION_EVERY_CPU = 4,	/* every CPU's trace of a run (--cpu N > 0: N's) */
	SESSION_OWN_OVERLAPS = 8,	/* the command says where images overlap */
};

void session_init(struct session *s, const char *cmd);
void session_free(struct session *s);

/* Option rows (core/opt_table.h) whose ctx is the session: the inputs, the
 * decoder's settings, the symbols. */
extern const struct opt_row session_input_rows[];
extern const size_t session_input_nrows;
extern const struct opt_row session_decoder_rows[];
extern const size_t session_decoder_nrows;
extern const struct opt_row session_symbol_rows[];
extern const size_t session_symbol_nrows;

/* A decoding command's command line: the inputs, the symbols (if symbols),
 * the command's own rows (under title, filling ctx), the decoder's
 * settings, and at most one operand, a run directory. */
struct session_cmd {
	const char *name, *usage, *tail;	/* as struct opts_cmd */
	bool symbols;
	const char *title;
	const struct opt_row *rows;
	size_t nrows;
	void *ctx;
};

/* Parse argv (opts_parse()) into s and c->ctx; *run: the operand, or
 * NULL. OPTS_OK, OPTS_HELP or OPTS_USAGE (host/util/opts.h). */
int session_parse_args(struct session *s, const struct session_cmd *c, int argc, char **argv,
		       char **run);

/* After the options (positional: a run directory, or NULL): read the
 * inputs. 0; -1 when an input is unreadable or damaged, -2 when the
 * command line cannot work (a run directory and --pt, no trace, ...),
 * with the reason printed ("efipt CMD: ..."). */
int session_open(struct session *s, const char *positional, unsigned flags);

/* Decode trace i (s->trace[i]) into consumers c[0..n). Returns the number
 * of decode errors (the trace's end included: no PSB, a cut last packet),
 * or -1 when decoding cannot start (printed). */
long session_decode(struct session *s, unsigned i, const struct flow_consumer *c, unsigned n);

/* --cpu N (*cpu) or FAMILY/MODEL[/STEPPING] (*model set, that CPU's
 * errata in *errata). 0, or -1 if v is neither. */
int session_parse_cpu(const char *v, unsigned *cpu, bool *model, uint32_t *errata);

/* TSC ticks as ns at tsc_hz (ticks themselves when it is unknown). */
uint64_t session_ns(const struct session *s, uint64_t ticks);

/* The trace's name in messages ("<stdin>" for "-"). */
const char *session_trace_name(const struct session *s, unsigned i);

#endif
