/* The input session and the decoder loop; see session.h. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pt_image.h"
#include "host/input/flow_notes.h"
#include "host/input/progress.h"
#include "host/input/code_changes.h"
#include "host/input/image_loaded.h"
#include "host/input/session.h"
#include "host/input/trace_end.h"
#include "host/symbols/kernsyms.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"
#include "host/util/stats.h"

/* The most trace bytes read from a pipe (a file is mapped). */
#define PIPE_MAX (16ull << 30)

void session_init(struct session *s, const char *cmd)
{
	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	snprintf(s->prefixed, sizeof(s->prefixed), "efipt %s", cmd);
	s->cache_entries = 1u << 16;
	ptsec_init(&s->code);
}

void session_free(struct session *s)
{
	symtab_free(&s->st);
	image_list_free(&s->images);
	symopts_free(&s->so);
	ptsec_free(&s->code);
	rundir_close(&s->rd);
	free(s->trace);
	s->trace = NULL;
}

/* ---- the option rows ---------------------------------------------------- */

#define S(ctx) ((struct session *)(ctx))

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* FILE[:BASE] of --pe/--elf: the file name into file, whether a base was
 * given. */
static bool split_spec(const char *spec, char *file, size_t cap)
{
	unsigned long long base;
	snprintf(file, cap, "%s", spec);
	char *c = strrchr(file, ':');
	if (c && !parse_u64(c + 1, &base)) {
		*c = 0;
		return true;
	}
	return false;
}

/* The end of the highest PT_LOAD segment of an ELF file (0: none). */
static uint64_t elf_end_vaddr(const char *path)
{
	uint64_t hi = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n;
	if (e && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr + ph.p_memsz > hi && ph.p_vaddr + ph.p_memsz >= ph.p_vaddr)
				hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return hi;
}

static int set_pt(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r, (void)err;
	snprintf(S(ctx)->pt, sizeof(S(ctx)->pt), "%s", v);
	return 0;
}

static int set_run(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r, (void)err;
	snprintf(S(ctx)->run_path, sizeof(S(ctx)->run_path), "%s", v);
	return 0;
}

static int set_raw(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	if (ptsec_load_raw(&S(ctx)->code, v)) {
		sb_puts(err, S(ctx)->code.err);
		return -1;
	}
	return 0;
}

/* --pe FILE[:BASE]: its executable sections, and the image it is, named
 * after the file ("dir/Foo.efi" -> "Foo.efi"). */
static int set_pe(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	struct session *s = ctx;
	if (ptsec_load_pe(&s->code, v)) {
		sb_puts(err, s->code.err);
		return -1;
	}
	char file[4096];
	split_spec(v, file, sizeof(file));
	struct image *m = image_list_add(&s->images);
	if (!m) {
		sb_printf(err, "more than %d images", IMAGES_MAX);
		return -1;
	}
	snprintf(m->name, sizeof(m->name), "%.63s", base_name(file));
	m->base = s->code.pe_base;
	m->size = s->code.pe_size;
	m->code = s->code.pe_code;
	snprintf(m->pdb, sizeof(m->pdb), "%s", s->code.pe_pdb);
	return 0;
}

/* --elf FILE[:BASE]: its executable segments; not moved, it is an image
 * named by its own symbols (its addresses are its own). */
static int set_elf(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	struct session *s = ctx;
	if (ptsec_load_elf(&s->code, v)) {
		sb_puts(err, s->code.err);
		return -1;
	}
	char file[4096];
	if (split_spec(v, file, sizeof(file)))
		return 0; /* moved: code only (--images names it) */
	uint64_t hi = elf_end_vaddr(file);
	struct image *m = hi ? image_list_add(&s->images) : NULL;
	if (!m)
		return 0;
	snprintf(m->name, sizeof(m->name), "%.63s", base_name(file));
	m->size = hi;
	m->pdb_is_image = true;
	snprintf(m->pdb, sizeof(m->pdb), "%.1000s", file);
	return 0;
}

static int set_images(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r, (void)err;
	S(ctx)->images_file = v;
	return 0;
}

int session_parse_cpu(const char *v, unsigned *cpu, bool *model, uint32_t *errata)
{
	unsigned long long n;
	if (!strchr(v, '/')) {
		if (parse_u64(v, &n) || n > 65535)
			return -1;
		*cpu = (unsigned)n;
		return 0;
	}
	unsigned long long fam, mod, step = 0;
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", v);
	char *a = strchr(buf, '/');
	*a++ = 0;
	char *b = strchr(a, '/');
	if (b)
		*b++ = 0;
	if (parse_u64(buf, &fam) || parse_u64(a, &mod) || (b && parse_u64(b, &step)))
		return -1;
	*errata = ptflow_errata_for_cpu((unsigned)fam, (unsigned)mod, b ? (int)step : -1);
	*model = true;
	return 0;
}

static int set_cpu(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	struct session *s = ctx;
	if (session_parse_cpu(v, &s->cpu, &s->model_given, &s->model_errata)) {
		sb_printf(err, "--cpu wants a CPU number N or FAMILY/MODEL[/STEPPING], got '%s'",
			  term_safe(v));
		return -1;
	}
	return 0;
}

static int set_flag(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)v, (void)err;
	if (!strcmp(r->name, "distnt"))
		S(ctx)->distnt = true;
	else
		S(ctx)->disretc = true;
	return 0;
}

/* A number of option r from lo to hi: 0, or -1 with why (range says
 * what it takes). */
static int number(const struct opt_row *r, const char *v, unsigned long long lo,
		  unsigned long long hi, const char *range, unsigned long long *out,
		  struct strbuf *err)
{
	if (parse_u64(v, out) || *out < lo || *out > hi) {
		sb_printf(err, "--%s takes %s, not '%s'", r->name, range, term_safe(v));
		return -1;
	}
	return 0;
}

static int set_tsc_hz(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long hz;
	if (number(r, v, 1, ~0ull, "a frequency in Hz above 0", &hz, err))
		return -1;
	S(ctx)->tsc_hz = hz;
	S(ctx)->tsc_src = "--tsc-hz";
	return 0;
}

static int set_nom_freq(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (number(r, v, 1, 255, "a ratio from 1 to 255", &n, err))
		return -1;
	S(ctx)->nom_freq = (uint8_t)n;
	return 0;
}

static int set_mtc_freq(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (number(r, v, 0, 15, "a number from 0 to 15", &n, err))
		return -1;
	S(ctx)->mtc_freq = (uint8_t)n;
	S(ctx)->mtc_given = true;
	return 0;
}

static int set_cpuid15(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long a, b;
	char tmp[64], *comma;
	snprintf(tmp, sizeof(tmp), "%s", v);
	comma = strchr(tmp, ',');
	if (!comma || (*comma = 0, parse_u64(tmp, &a)) || parse_u64(comma + 1, &b) ||
	    a > UINT32_MAX || b > UINT32_MAX || !a || !b) {
		sb_printf(err, "--%s wants EAX,EBX (both above 0)", r->name);
		return -1;
	}
	S(ctx)->cpuid15_eax = (uint32_t)a;
	S(ctx)->cpuid15_ebx = (uint32_t)b;
	return 0;
}

static int set_max_steps(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (number(r, v, 0, ~0ull, "a count of instructions", &n, err))
		return -1;
	S(ctx)->fc.max_steps = n;
	return 0;
}

static int set_cache(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (parse_u64(v, &n) || (n >= 8 && (n & (n - 1) || n > (1u << 24)))) {
		sb_printf(err, "--%s takes a power of two from 8 to 16777216, or 0..7 for no "
			  "cache, not '%s'", r->name, term_safe(v));
		return -1;
	}
	S(ctx)->cache_entries = n < 8 ? 0 : (uint32_t)n; /* the decoder's cache needs 8 */
	return 0;
}

static int set_symbols(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	char e[4400];
	if ((!strcmp(r->name, "symbols") ? symopts_add_path : symopts_add_map)(&S(ctx)->so, v, e,
										  sizeof(e))) {
		sb_puts(err, term_safe(e));
		return -1;
	}
	return 0;
}

const struct opt_row session_input_rows[] = {
	{ "run", OPT_VALUE, set_run, 0, "DIR", "an efipt run directory (or give it as the\n"
	  "operand): its trace, code snapshots, images.json,\nCPU (errata), DisTNT/DisRETC and timing" },
	{ "pt", OPT_VALUE, set_pt, 0, "TRACE", "a raw Intel PT trace ('-': standard input),\n"
	  "with the code images below" },
	{ "raw", OPT_VALUE, set_raw, 0, "FILE[:from[-to]]:BASE", "bytes from..to of FILE at "
	  "address BASE" },
	{ "elf", OPT_VALUE, set_elf, 0, "FILE[:BASE]", "executable segments of an ELF file "
	  "(with BASE\nthe lowest one is placed at BASE); not moved,\nan image named by its "
	  "own symbols" },
	{ "pe", OPT_VALUE, set_pe, 0, "FILE[:BASE]", "a PE32+ image (UEFI driver/application) "
	  "relocated\nto BASE (default: its ImageBase), an image named\nafter the file" },
	{ "images", OPT_VALUE, set_images, 0, "FILE", "images.json naming the images the code "
	  "belongs to\n(base, size, name, \"code\" sections), instead of\nthe --pe/--elf "
	  "files' or the run directory's.\nWhere images overlap, an address counts for the\n"
	  "one that starts last (a nested image)" },
	{ "cpu", OPT_VALUE, set_cpu, 0, "N|F/M[/S]", "the CPU: N, the run's trace of CPU N (a "
	  "run with\nseveral, e.g. efipt qemu -smp; default 0);\nFAMILY/MODEL[/STEPPING], the "
	  "model that recorded\nthe trace: its errata. Without a CPU (a raw trace,\nno --cpu "
	  "F/M), only the workarounds that cannot\nchange a trace that follows the SDM (BDM70, "
	  "APL12,\nSKD010, APL11), named when they act" },
	{ "distnt", OPT_FLAG, set_flag, 0, NULL, "the trace was recorded with DisTNT=1" },
	{ "disretc", OPT_FLAG, set_flag, 0, NULL, "the trace was recorded with DisRETC=1" },
	{ "tsc-hz", OPT_VALUE, set_tsc_hz, 0, "HZ", "the TSC frequency, for times in ns (a run "
	  "directory's\nmanifest or CPUID.15H gives it otherwise)" },
};
const size_t session_input_nrows = sizeof(session_input_rows) / sizeof(session_input_rows[0]);

const struct opt_row session_decoder_rows[] = {
	{ "nom-freq", OPT_VALUE, set_nom_freq, 0, "N", "the nominal frequency ratio (CPUID.16H / "
	  "100 MHz),\n1..255, for CYC timing" },
	{ "mtc-freq", OPT_VALUE, set_mtc_freq, 0, "N", "IA32_RTIT_CTL.MTCFreq of the trace, 0..15" },
	{ "cpuid-0x15", OPT_VALUE, set_cpuid15, 0, "EAX,EBX", "TSC/core crystal clock ratio "
	  "(MTC timing)" },
	{ "max-steps", OPT_VALUE, set_max_steps, 0, "N", "most instructions between two packets "
	  "(default 1M)" },
	{ "cache", OPT_VALUE, set_cache, 0, "N", "block cache entries of 32 bytes: a power of "
	  "two\nfrom 8 to 16777216 (default 65536), or 0..7 for\nno cache (slow)" },
};
const size_t session_decoder_nrows =
	sizeof(session_decoder_rows) / sizeof(session_decoder_rows[0]);

const struct opt_row session_symbol_rows[] = {
	{ "symbols", OPT_VALUE, set_symbols, 0, "PATH", "a build directory (searched recursively "
	  "for\nNAME.debug, NAME.so, NAME.dll) or one ELF file;\nrepeatable. IMAGE=FILE: FILE is "
	  "the symbol file\nof the image named IMAGE (efipt.efi booted as\nBOOTX64.EFI: "
	  "BOOTX64=build/efipt.so)" },
	{ "path-map", OPT_VALUE, set_symbols, 0, "OLD=NEW", "rewrite the build path an image "
	  "records" },
	{ "kernel-symbols", OPT_VALUE, opts_set_str, offsetof(struct session, kernel_syms),
	  "FILE[:SLIDE|:auto]", "Linux kernel functions from a System.map\nor "
	  "/proc/kallsyms, moved by the KASLR slide\n(given, or auto: found from the trace; "
	  "default 0)" },
};
const size_t session_symbol_nrows = sizeof(session_symbol_rows) / sizeof(session_symbol_rows[0]);

int session_parse_args(struct session *s, const struct session_cmd *c, int argc, char **argv,
		       char **run)
{
	struct opts_group g[4];
	size_t n = 0;
	g[n++] = (struct opts_group){ "inputs", session_input_rows, session_input_nrows, s };
	if (c->symbols)
		g[n++] = (struct opts_group){ "symbols", session_symbol_rows, session_symbol_nrows,
					      s };
	g[n++] = (struct opts_group){ c->title, c->rows, c->nrows, c->ctx };
	g[n++] = (struct opts_group){ "decoder", session_decoder_rows, session_decoder_nrows, s };
	const struct opts_cmd cmd = { c->name, c->usage, c->tail, g, n, 1 };
	char *operand[1];
	unsigned nop = 0;
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	*run = nop ? operand[0] : NULL;
	return pr;
}

/* ---- session_open() -------------------------------------------------------- */

static int say(const struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(const struct session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", s->prefixed);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

/* Images efipt.efi saw loaded while it traced whose place in the trace is
 * not known (manifest "loaded_while_traced" without a position,
 * efi/load_watch.h): said, never guessed. */
static void say_unplaced_loads(const struct session *s)
{
	json_t *list = json_object_get(s->rd.manifest, "loaded_while_traced");
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		if (json_is_integer(json_object_get(e, "position")))
			continue;
		json_t *img = json_object_get(e, "image");
		const char *name = json_string_value(json_object_get(img, "name"));
		const char *base = json_string_value(json_object_get(img, "base"));
		const char *why = json_string_value(json_object_get(e, "why"));
		fprintf(stderr, "%s: note: image %s at %s was loaded while traced, at a place in the "
				"trace that is not known (%s): the trace after it is decoded with the "
				"code the snapshots hold there\n",
			s->prefixed, term_safe(name ? name : "?"), term_safe(base ? base : "?"),
			term_safe(why ? why : "no position recorded"));
	}
}

/* --symbols given, and no image got its symbols from them: said
 * once (every function would be [unknown] without a word), with the first
 * image's reason; 'efipt symbols' gives every image's. */
static void say_no_symbols(const struct session *s)
{
	if (!s->so.npaths && !s->so.nbinds)
		return;
	const struct image *first = NULL;
	for (unsigned i = 0; i < s->images.n; i++) {
		if (s->images.v[i].sf)
			return;
		if (!first && s->images.v[i].size)
			first = &s->images.v[i];
	}
	if (!first)
		return;
	char why[sizeof(first->notes)];
	snprintf(why, sizeof(why), "%s", *first->notes ? first->notes : "no candidate file");
	why[strcspn(why, "\n")] = 0;
	fprintf(stderr, "%s: note: --symbols gave no image its symbols (%s: %s); every "
			"function counts as [unknown] ('efipt symbols' says why for each image)\n",
		s->prefixed, term_safe(first->name), term_safe(why));
}

/* say() for a command line that cannot work: -2. */
#define usage(...) (say(__VA_ARGS__), -2)

/* --images FILE: its images, replacing the others (image_list_rename()). */
static int read_images_file(struct session *s)
{
	size_t len;
	char *text = read_small_file(s->cmd, s->images_file, 64u << 20, &len);
	if (!text)
		return -1;
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	stats.images++;
	if (!j)
		return say(s, "%s:%d:%d: %s", term_safe(s->images_file), je.line, je.column,
			   term_safe(je.text));
	struct image_list named = { 0 };
	char err[4400];
	int rc = images_json_read(j, s->images_file, &named, err, sizeof(err));
	json_decref(j);
	if (rc) {
		image_list_free(&named);
		return say(s, "%s", term_safe(err));
	}
	image_list_rename(&s->images, &named);
	return 0;
}

/* The run directory: its manifest, code, images, facts and traces. */
static int open_run(struct session *s, unsigned flags)
{
	char err[4400];
	if (*s->pt || s->code.n)
		return usage(s, "a run directory brings its trace and code: no --pt, --raw, --elf "
			     "or --pe with it");
	if (rundir_open(&s->rd, s->run_path))
		return say(s, "%s", term_safe(s->rd.err));
	s->have_run = true;
	/* the traces: CPU N's, or every CPU's (CPU 0 first) */
	static struct rundir_cpu_trace t[RUNDIR_TRACES_MAX];
	int n = 1;
	t[0].cpu = s->cpu;
	if ((flags & SESSION_EVERY_CPU) && !s->cpu) {
		n = rundir_traces(&s->rd, t, RUNDIR_TRACES_MAX, err, sizeof(err));
		if (n < 0)
			return say(s, "%s", term_safe(err));
		for (int a = 1; a < n; a++)
			for (int b = a; b > 0 && t[b].cpu < t[b - 1].cpu; b--) {
				struct rundir_cpu_trace tmp = t[b];
				t[b] = t[b - 1];
				t[b - 1] = tmp;
			}
	}
	s->trace = calloc((size_t)n, sizeof(*s->trace));
	if (!s->trace)
		return say(s, "out of memory");
	for (int i = 0; i < n; i++) {
		s->trace[i].cpu = t[i].cpu;
		if (rundir_trace_cpu(&s->rd, t[i].cpu, s->trace[i].path, sizeof(s->trace[i].path),
				     err, sizeof(err)))
			return say(s, "%s", term_safe(err));
	}
	s->ntrace = (unsigned)n;
	if (rundir_load_code(&s->rd, err, sizeof(err)))
		return say(s, "%s", term_safe(err));
	say_unplaced_loads(s);
	for (unsigned i = 0; i < s->rd.nsnap; i++) {
		const struct rundir_snapshot *m = &s->rd.snap[i];
		if (ptsec_add_ref(&s->code, m->phys, m->bytes, m->size, "snapshot"))
			return say(s, "%s", s->code.err);
	}
	/* the run's images (the list is the session's now) */
	image_list_free(&s->images);
	s->images = s->rd.images;
	memset(&s->rd.images, 0, sizeof(s->rd.images));
	rundir_flow_facts(&s->rd, &s->facts);
	flow_setup(&s->fc, &s->facts);
	return 0;
}

static int read_code(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	return ptsec_read(ctx, addr, buf, n);
}

/* --kernel-symbols FILE[:SLIDE|:auto]: the kernel as one more image, with
 * its functions (host/symbols/kernsyms.h); auto: the slide from the trace. */
static int kernel_image(struct session *s)
{
	char file[4096], err[4400];
	snprintf(file, sizeof(file), "%s", s->kernel_syms);
	char *c = strrchr(file, ':');
	unsigned long long slide = 0;
	bool find = c && !strcmp(c + 1, "auto");
	if (c && (find || !parse_u64(c + 1, &slide)))
		*c = 0;
	static struct kernsyms k;
	if (kernsyms_read(&k, file, err, sizeof(err)))
		return say(s, "--kernel-symbols %s", term_safe(err));
	int rc = -1;
	if (find) {
		struct input_map in;
		uint64_t v;
		unsigned hits;
		if (!s->ntrace) {
			say(s, "--kernel-symbols %s:auto finds the slide from a trace: give one",
			    term_safe(file));
			goto out;
		}
		if (input_map(&in, s->trace[0].path, PIPE_MAX, err, sizeof(err))) {
			say(s, "%s", term_safe(err));
			goto out;
		}
		int fr = kernsyms_find_slide(&k, in.data, in.size, &v, &hits, err, sizeof(err));
		input_unmap(&in);
		say(s, "%s", err);
		if (fr)
			goto out;
		slide = v;
	}
	struct image *m = image_list_add(&s->images);
	if (!m || kernsyms_image(&k, slide, m)) {
		say(s, "out of memory");
		if (m)
			s->images.n--;
		goto out;
	}
	rc = 0;
out:
	kernsyms_free(&k);
	return rc;
}

int session_open(struct session *s, const char *positional, unsigned flags)
{
	if (positional) {
		if (*s->run_path)
			return usage(s, "give the run directory once");
		snprintf(s->run_path, sizeof(s->run_path), "%s", positional);
	}
	if (*s->run_path) {
		int rc = open_run(s, flags);
		if (rc)
			return rc;
	} else if (s->cpu) {
		return usage(s, "--cpu %u picks a trace of a run directory: give --run DIR or the "
			     "directory itself; --pt names one trace (--cpu picks a CPU's trace "
			     "of a run directory)", s->cpu);
	} else if (*s->pt) {
		s->trace = calloc(1, sizeof(*s->trace));
		if (!s->trace)
			return say(s, "out of memory");
		snprintf(s->trace[0].path, sizeof(s->trace[0].path), "%s", s->pt);
		s->ntrace = 1;
	} else if (flags & SESSION_TRACE) {
		return usage(s, "no trace: give a run directory or --pt TRACE");
	}
	/* what the command line says wins over the run's manifest */
	if (s->distnt)
		s->fc.distnt = true;
	if (s->disretc)
		s->fc.disretc = true;
	if (s->nom_freq)
		s->fc.nom_freq = s->nom_freq;
	if (s->mtc_given)
		s->fc.mtc_freq = s->mtc_freq;
	if (s->cpuid15_eax) {
		s->fc.cpuid15_eax = s->cpuid15_eax;
		s->fc.cpuid15_ebx = s->cpuid15_ebx;
	}
	if (s->images_file && read_images_file(s))
		return -1;
	if (s->have_run)
		rundir_mark_executed_only(&s->rd, &s->images); /* --images' too */
	if (!s->images.n && !s->code.n)
		return usage(s, "no code image (a run directory, --pe, --elf or --raw)");
	/* --cpu F/M wins over the run's CPU; no CPU: the safe workarounds */
	s->cpu_known = flownote_errata(&s->fc, s->have_run ? &s->facts : NULL, s->model_given,
				       s->model_errata);
	if (!s->tsc_hz) {
		enum flow_tsc_src src;
		s->tsc_hz = flow_tsc_hz(&s->facts, &src);
		s->tsc_src = flow_tsc_src_name(src);
	}
	s->overlap = ptimg_list_sort(s->images.v, s->images.n, sizeof(*s->images.v));
	if (s->overlap && !(flags & SESSION_OWN_OVERLAPS))
		images_note_overlaps(s->prefixed, s->images.v, s->images.n, sizeof(*s->images.v),
				     image_name);
	if (!(flags & SESSION_SYMBOLS))
		return 0;
	for (unsigned i = 0; i < s->images.n; i++) {
		struct image *im = &s->images.v[i];
		if (!im->loaded_known) {
			symmap_resolve(im, &s->so, read_code, &s->code);
			continue;
		}
		struct image_loaded_code lc;
		image_loaded_code(&lc, im, &s->code, s->rd.chg, s->rd.nchg, s->cpu);
		symmap_resolve(im, &s->so, image_loaded_read, &lc);
		image_loaded_free(&lc);
	}
	if (flags & SESSION_TRACE) /* efipt symbols lists every image's */
		say_no_symbols(s);
	for (size_t b = 0; b < s->so.nbinds; b++) {
		unsigned i = 0;
		while (i < s->images.n && !symopts_names_image(s->images.v[i].name, s->so.bind_img[b]))
			i++;
		if (i == s->images.n)
			say(s, "--symbols %s=%s: no traced image is named %s ('efipt symbols' lists "
			    "them)", term_safe(s->so.bind_img[b]), term_safe(s->so.bind_file[b]),
			    term_safe(s->so.bind_img[b]));
	}
	if (s->kernel_syms && kernel_image(s))
		return -1;
	if (symtab_init(&s->st, s->images.v, s->images.n))
		return say(s, "out of memory");
	return 0;
}

uint64_t session_ns(const struct session *s, uint64_t ticks)
{
	if (!s->tsc_hz)
		return ticks;
	/* the same quotient; 64-bit division while the product fits (a
	 * timeline asks for every slice's time) */
	if (ticks <= UINT64_MAX / 1000000000u)
		return ticks * 1000000000u / s->tsc_hz;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / s->tsc_hz);
}

const char *session_trace_name(const struct session *s, unsigned i)
{
	return strcmp(s->trace[i].path, "-") ? s->trace[i].path : "<stdin>";
}

/* ---- session_decode() ------------------------------------------------------ */

/* The consumers behind one sink. */
struct fanout {
	const struct flow_consumer *c;
	unsigned n;
	struct ptflow_decoder *d;
	uint64_t until;			/* stop after this many instructions (0: never) */
	uint64_t in_blocks, in_runs;	/* with until: the instructions handed over
					 * in blocks and in runs (the decoder's own
					 * count lags while it walks) */
	bool some_done;			/* a consumer may say it is done */
	struct progress pg;
	struct input_map *in;
};

static void fan_batch(void *ctx, const struct ptflow_batch *b)
{
	struct fanout *f = ctx;
	for (unsigned i = 0; i < f->n; i++)
		if (f->c[i].batch)
			f->c[i].batch(f->c[i].ctx, b);
	if (f->until) {
		for (size_t k = 0; k < b->n; k++)
			f->in_blocks += b->b[k].ninsn;
		if (f->in_blocks >= f->until)
			ptflow_stop(f->d);
	}
	for (unsigned i = 0; f->some_done && i < f->n; i++)
		if (f->c[i].done && *f->c[i].done)
			ptflow_stop(f->d);
}

static void fan_run(void *ctx, const struct ptflow_run *r)
{
	struct fanout *f = ctx;
	for (unsigned i = 0; i < f->n; i++)
		if (f->c[i].run)
			f->c[i].run(f->c[i].ctx, r);
	if (f->until && (f->in_runs += r->ninsn) >= f->until)
		ptflow_stop(f->d);
}

static void fan_event(void *ctx, const struct ptflow_event *ev)
{
	struct fanout *f = ctx;
	for (unsigned i = 0; i < f->n; i++)
		if (f->c[i].event)
			f->c[i].event(f->c[i].ctx, ev);
}

/* The smallest region of every consumer's (regions are intervals from ip
 * on, so the smallest end is their intersection). */
static uint64_t fan_region(void *ctx, uint64_t ip)
{
	struct fanout *f = ctx;
	uint64_t end = UINT64_MAX;
	for (unsigned i = 0; i < f->n; i++) {
		if (!f->c[i].batch)
			continue;
		uint64_t e = f->c[i].region(f->c[i].ctx, ip);
		if (e < end)
			end = e;
	}
	return end == UINT64_MAX ? 0 : end;
}

/* At each PSB: the progress line, and the trace behind the decoder
 * returned to the kernel (it never goes back), so that memory does not
 * grow with the trace. */
static void at_psb(void *ctx, uint64_t offset)
{
	struct fanout *f = ctx;
	progress_at(&f->pg, offset);
	input_release(f->in, offset);
}

long session_decode(struct session *s, unsigned i, const struct flow_consumer *c, unsigned n)
{
	struct input_map in;
	char err[4400];
	const char *name = session_trace_name(s, i);
	if (input_map(&in, s->trace[i].path, PIPE_MAX, err, sizeof(err)))
		return say(s, "%s", term_safe(err));
	if (!in.size) {
		/* nothing to decode: an empty output would look like a result */
		input_unmap(&in);
		return say(s, "%s: the trace is empty (0 bytes): nothing to decode",
			   term_safe(name));
	}
	stats.decodes++;
	struct ptflow_config fc = s->fc;
	/* code that changed while traced: applied where the trace reaches it */
	struct codechanges chg;
	codechanges_start(&chg, s->rd.chg, s->rd.nchg, s->trace[i].cpu, ptsec_ptimg(&s->code));
	fc.image = codechanges_image(&chg);
	fc.cache_size = s->cache_entries;
	fc.cache = fc.cache_size ? calloc(fc.cache_size, sizeof(*fc.cache)) : NULL;
	struct fanout f;
	memset(&f, 0, sizeof(f));
	f.c = c;
	f.n = n;
	f.d = malloc(sizeof(*f.d));
	f.in = &in;
	bool blocks = false, runs = false, events = false, regions = true;
	unsigned timed = PTFLOW_TIME_NONE;
	bool counted = true;
	uint64_t until = 0;
	for (unsigned k = 0; k < n; k++) {
		blocks |= c[k].batch != NULL;
		runs |= c[k].run != NULL;
		events |= c[k].event != NULL;
		if (c[k].batch && c[k].timed > timed)
			timed = c[k].timed;
		if (c[k].batch && !c[k].region)
			regions = false;
		if (c[k].batch && !c[k].counted)
			counted = false;
		f.some_done |= c[k].done != NULL;
		if (!c[k].until)
			until = UINT64_MAX;
		else if (c[k].until > until)
			until = c[k].until;
	}
	f.until = until == UINT64_MAX ? 0 : until;
	struct ptflow_sink sink = { &f, runs ? fan_run : NULL, events ? fan_event : NULL };
	ptflow_blocks_fn batch = fan_batch;
	if (n == 1 && !f.until && !f.some_done) {
		/* one consumer with nothing to stop at: the decoder calls it
		 * directly */
		sink = (struct ptflow_sink){ c[0].ctx, c[0].run, c[0].event };
		batch = c[0].batch;
	}
	long errs = -1;
	/* counts per way of each cache entry's last branch: blocks counted
	 * when nothing needs them in order (or stops after a count) */
	bool count = blocks && counted && !f.until && !f.some_done && fc.cache_size;
	uint64_t *counts = count ? calloc(2 * (size_t)fc.cache_size, sizeof(*counts)) : NULL;
	if (!f.d || (fc.cache_size && !fc.cache) || (count && !counts) ||
	    ptflow_init(f.d, &fc, &sink)) {
		say(s, "out of memory");
	} else {
		if (blocks) {
			ptflow_on_blocks(f.d, batch);
			if (regions)
				ptflow_blk_regions(f.d, fan_region, &f);
			ptflow_blocks_timed(f.d, (enum ptflow_timing)timed);
			ptflow_blocks_counted(f.d, counts);
		}
		codechanges_attach(&chg, f.d);
		s->code_now = fc.image;
		progress_start(&f.pg, s->cmd, name, in.size, s->streams);
		ptflow_on_progress(f.d, at_psb, &f);
		errs = ptflow_decode(f.d, in.data, in.size, 0);
		progress_end(&f.pg);
		flush_stdout(); /* the output before the messages about its end */
		flownote_report(s->prefixed, name, &f.d->stat, f.d->stat.errors, s->cpu_known,
				s->errors_shown);
		/* no PSB at all, or a last packet cut short */
		errs += trace_end_report(s->cmd, name, in.data, in.size,
					 rundir_stopped_full(&s->rd, s->trace[i].cpu));
		s->stat = f.d->stat;
	}
	if (chg.failed && errs >= 0) {
		say(s, "out of memory: %s: some code changes were not applied", name);
		errs++;
	}
	codechanges_free(&chg);
	s->code_now = ptsec_ptimg(&s->code);
	free(f.d);
	free(fc.cache);
	free(counts);
	input_unmap(&in);
	return errs;
}
