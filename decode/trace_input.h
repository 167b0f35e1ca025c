/*
 * The inputs every command that decodes a trace takes: a run directory
 * (trace.pt, its code snapshots, images.json, the CPU's errata and the
 * trace's DisTNT/DisRETC from manifest.json), or a raw trace with code
 * images (--raw/--elf/--pe) and a list naming them (--images, images.json
 * format; each --pe file names itself).
 */
#ifndef EFIPT_DECODE_TRACE_INPUT_H
#define EFIPT_DECODE_TRACE_INPUT_H

#include <stddef.h>

#include "core/flow_setup.h"
#include "core/pt_flow.h"
#include "core/pt_summary.h"
#include "decode/pt_sections.h"

#define TRACE_IMAGES_MAX 4096

/* Named images (base, size, name), as the summary and coverage use them. */
struct trace_images {
	struct ptsum_image *img;	/* malloc'd, TRACE_IMAGES_MAX */
	struct pe_code *code;		/* per image: its executable sections and
					 * entry, from a --pe file or images.json
					 * (n 0: not known) */
	unsigned n;
};

/*
 * Load run directory dir: its snapshots as sections of im, what its
 * manifest says into fc (flow_setup) and facts (may be NULL), the path of
 * CPU cpu's trace into trace, and its images.json into imgs (may be NULL).
 * Errors are printed as "CMD: reason"; returns 0 or -1.
 */
int trace_input_run(const char *cmd, const char *dir, unsigned cpu, struct ptsec_image *im,
		    struct ptflow_config *fc, char *trace, size_t cap, struct trace_images *imgs,
		    struct flow_facts *facts);

/* Add the images of an images.json file (--images FILE). */
int trace_input_images(const char *cmd, const char *path, struct trace_images *imgs);

/* --pe FILE[:BASE]: its executable sections into im, and the image, named
 * after the file ("dir/Foo.efi" -> "Foo.efi"), into imgs. */
int trace_input_pe(const char *cmd, const char *spec, struct ptsec_image *im,
		   struct trace_images *imgs);

/* --images names the images (as for the analyses): its images replace
 * those of --pe files or a run directory (*imgs), each taking the
 * executable sections of an image there at the same base and size when
 * the file gives none. named is emptied into imgs. */
void trace_images_rename(struct trace_images *imgs, struct trace_images *named);

void trace_images_free(struct trace_images *imgs);

/* --cpu F/M[/S]: the errata of that CPU into *errata. 0, or -1 if s is not
 * of that form. */
int trace_input_parse_cpu(const char *s, uint32_t *errata);

/* --cpu N (the trace of CPU N of a run with several: *cpu) or --cpu F/M[/S]
 * (errata, as trace_input_parse_cpu()). 0, or -1 if s is neither. */
int trace_input_cpu_arg(const char *s, unsigned *cpu, uint32_t *errata);
#define TRACE_INPUT_CPU_HELP \
	"  --cpu N         the trace of CPU N (a run with several, e.g. efipt qemu\n" \
	"                  -smp; default 0)\n" \
	"  --cpu F/M[/S]   apply the errata of that CPU (family/model/stepping);\n" \
	"                  without it and a run's CPU: only the workarounds that\n" \
	"                  cannot change a trace that follows the SDM (BDM70,\n" \
	"                  APL12, SKD010, APL11), named when they act\n"

/*
 * The analyses (efipt symbols, top, flame, calls): their options, images and
 * symbol files in one struct.
 */
#include <getopt.h>
#include <stdbool.h>

#include "core/flow_setup.h"
#include "core/pt_flow.h"
#include "decode/pt_sections.h"
#include "decode/symbols/symmap.h"
#include "decode/symbols/symtab.h"

struct trace_input {
	const char *cmd;		/* "top": for messages */
	char prefixed[32];		/* "efipt top" */
	struct ptsec_image im;
	struct ptflow_config fc;
	char trace[4200];		/* "" until --pt or a run directory */
	char run[4096];			/* the run directory, if any */
	unsigned cpu;			/* --cpu N: the run's trace of CPU N */
	bool cpu_errata_given;		/* --cpu F/M[/S]: its errata, cpu_errata */
	uint32_t cpu_errata;
	bool cpu_known;			/* the errata are the CPU's (flow_notes.h) */
	const char *images_file;	/* --images */
	const char *kernel_syms;	/* --kernel-symbols FILE[:SLIDE|:auto] */
	struct symimage *img;		/* the traced images */
	size_t nimg, img_cap;
	struct symopts so;
	struct symtab st;
	ptflow_blocks_fn on_blocks;	/* set: trace_input_decode() delivers
					 * blocks too (ptflow_on_blocks()) */
	uint64_t (*blk_region)(void *ctx, uint64_t ip);	/* and merges them
					 * inside these (ptflow_blk_regions()) */
	void *blk_region_ctx;
	const struct ptflow_decoder *dec;	/* while trace_input_decode() runs */
	bool streams;			/* the command writes while it decodes
					 * (progress.h) */
	struct flow_facts facts;	/* a run directory's (timing: flow_tsc_hz()) */
	uint64_t tsc_hz;		/* --tsc-hz, else flow_tsc_hz(); 0: unknown */
	const char *tsc_src;		/* where tsc_hz is from */
};

/* getopt_long options trace_input_option() takes (values 0x100..). */
#define TRACE_INPUT_OPTS                                                      \
	{ "pt", required_argument, 0, 0x100 }, { "run", required_argument, 0, 0x101 }, \
	{ "raw", required_argument, 0, 0x102 }, { "elf", required_argument, 0, 0x103 }, \
	{ "pe", required_argument, 0, 0x104 }, { "images", required_argument, 0, 0x105 }, \
	{ "symbols", required_argument, 0, 0x106 },                               \
	{ "path-map", required_argument, 0, 0x107 },                              \
	{ "distnt", no_argument, 0, 0x108 }, { "disretc", no_argument, 0, 0x109 }, \
	{ "tsc-hz", required_argument, 0, 0x10a },                              \
	{ "nom-freq", required_argument, 0, 0x10b },                            \
	{ "cpu", required_argument, 0, 0x10c },                                 \
	{ "kernel-symbols", required_argument, 0, 0x10d }

#define TRACE_INPUT_USAGE                                                      \
	"inputs:  RUNDIR (or --run RUNDIR), or --pt TRACE with code images:\n"    \
	"  --raw FILE[:from[-to]]:BASE, --elf FILE[:BASE], --pe FILE[:BASE]  as efipt insn\n" \
	"  --images FILE   images.json naming the images the code belongs to\n"    \
	"                  (default: one image per --pe/--elf file)\n"              \
	"  --distnt, --disretc  the trace was recorded with DisTNT / DisRETC\n"     \
	"  --tsc-hz HZ     the TSC frequency, for times in ns (a run directory's\n"  \
	"                  manifest or CPUID.15H gives it otherwise)\n"            \
	"  --nom-freq N    the nominal ratio (CPUID.16H / 100 MHz), for CYC timing\n" \
	"  --cpu N         the run's trace of CPU N (default 0); --cpu F/M[/S]:\n"    \
	"                  that CPU's errata (without: as for 'efipt insn')\n"      \
	"symbols:\n"                                                               \
	"  --symbols PATH  a build directory (searched recursively for NAME.debug,\n" \
	"                  NAME.so, NAME.dll) or one ELF file; repeatable\n"        \
	"  --symbols IMAGE=FILE  FILE is the symbol file of the image named IMAGE\n" \
	"                  (efipt.efi booted as BOOTX64.EFI: BOOTX64=build/efipt.so)\n" \
	"  --path-map OLD=NEW  rewrite the build path an image records\n"       \
	"  --kernel-symbols FILE[:SLIDE|:auto]  Linux kernel functions from a\n" \
	"                  System.map or /proc/kallsyms, moved by the KASLR slide\n" \
	"                  (given, or auto: found from the trace; default 0)\n"

void trace_input_init(struct trace_input *t, const char *cmd);
void trace_input_free(struct trace_input *t);
/* An option of TRACE_INPUT_OPTS: 0, or -1 (message printed). */
int trace_input_option(struct trace_input *t, int c, const char *arg);
/* After the options (positional: a run directory or NULL): the image list
 * and, with want_trace, the trace; then every image's symbol file. 0 or -1
 * (message printed). */
int trace_input_finish(struct trace_input *t, const char *positional, bool want_trace);
/* TSC ticks as ns at tsc_hz (ticks themselves when tsc_hz is unknown). */
uint64_t trace_input_ns(const struct trace_input *t, uint64_t ticks);

/* Decode the trace into sink. Returns the number of decode errors, or -1
 * when it cannot start (message printed). */
long trace_input_decode(struct trace_input *t, const struct ptflow_sink *sink,
			struct ptflow_stat *stat);

#endif
