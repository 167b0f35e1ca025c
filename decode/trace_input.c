/* Inputs of the decoding commands and the analyses; see trace_input.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <jansson.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/flow_setup.h"
#include "core/pe_info.h"
#include "decode/file_io.h"
#include "decode/flow_notes.h"
#include "decode/rundir.h"
#include "decode/rundir_code.h"
#include "decode/trace_end.h"
#include "decode/progress.h"
#include "decode/symbols/kernsyms.h"
#include "decode/trace_input.h"
#include "decode/symbols/symguid.h"


static int images_room(const char *cmd, struct trace_images *imgs)
{
	if (!imgs->img) {
		imgs->img = calloc(TRACE_IMAGES_MAX, sizeof(*imgs->img));
		imgs->code = calloc(TRACE_IMAGES_MAX, sizeof(*imgs->code));
	}
	if (!imgs->img || !imgs->code) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return -1;
	}
	return 0;
}

/* trace_input_run(), and the run's facts into *facts if not NULL. */
static int run_load(const char *cmd, const char *dir, unsigned cpu, struct ptsec_image *im,
		    struct ptflow_config *fc, char *trace, size_t cap, struct trace_images *imgs,
		    struct flow_facts *facts_out)
{
	struct rundir rd;
	static struct rundir_code code;
	char err[4400];
	int rc = -1;
	if (rundir_open(&rd, dir)) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(rd.err));
		goto done;
	}
	if (rundir_trace_cpu(&rd, cpu, trace, cap, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		goto done;
	}
	if (rundir_code_load(&code, &rd, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		goto done;
	}
	for (unsigned i = 0; i < code.view.n; i++) {
		const struct memview_region *r = &code.view.r[i];
		if (ptsec_add(im, r->base, r->bytes, r->size, "snapshot")) {
			fprintf(stderr, "%s: %s\n", cmd, im->err);
			goto done;
		}
	}
	if (imgs) {
		if (images_room(cmd, imgs))
			goto done;
		for (unsigned i = 0; i < code.nimages && imgs->n < TRACE_IMAGES_MAX; i++) {
			imgs->code[imgs->n] = code.code[i];
			imgs->img[imgs->n++] = code.images[i];
		}
	}
	struct flow_facts facts;
	rundir_flow_facts(&rd, &facts);
	flow_setup(fc, &facts);
	if (facts_out)
		*facts_out = facts;
	rc = 0;
done:
	rundir_code_free(&code);
	rundir_close(&rd);
	return rc;
}

int trace_input_run(const char *cmd, const char *dir, unsigned cpu, struct ptsec_image *im,
		    struct ptflow_config *fc, char *trace, size_t cap, struct trace_images *imgs,
		    struct flow_facts *facts)
{
	return run_load(cmd, dir, cpu, im, fc, trace, cap, imgs, facts);
}

int trace_input_images(const char *cmd, const char *path, struct trace_images *imgs)
{
	if (images_room(cmd, imgs))
		return -1;
	size_t len;
	char *text = read_small_file(path, 64u << 20, &len);
	if (!text)
		return -1;
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	char err[4400];
	if (!j) {
		fprintf(stderr, "%s: %s:%d:%d: %s\n", cmd, term_safe(path), je.line, je.column,
			term_safe(je.text));
		return -1;
	}
	unsigned n = 0;
	int rc = images_json_parse(j, path, imgs->img + imgs->n, imgs->code + imgs->n,
				   TRACE_IMAGES_MAX - imgs->n, &n, err, sizeof(err));
	json_decref(j);
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		return -1;
	}
	imgs->n += n;
	return 0;
}

int trace_input_pe(const char *cmd, const char *spec, struct ptsec_image *im,
		   struct trace_images *imgs)
{
	if (ptsec_load_pe(im, spec)) {
		fprintf(stderr, "%s: %s\n", cmd, im->err);
		return -1;
	}
	if (images_room(cmd, imgs))
		return -1;
	if (imgs->n >= TRACE_IMAGES_MAX) {
		fprintf(stderr, "%s: more than %d images\n", cmd, TRACE_IMAGES_MAX);
		return -1;
	}
	/* the file name without a :BASE suffix and without its directory */
	char file[4096];
	snprintf(file, sizeof(file), "%s", spec);
	char *colon = strrchr(file, ':');
	unsigned long long v;
	if (colon && !parse_u64(colon + 1, &v))
		*colon = 0;
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	imgs->code[imgs->n] = im->pe_code;
	struct ptsum_image *m = &imgs->img[imgs->n++];
	memset(m, 0, sizeof(*m));
	m->base = im->pe_base;
	m->size = im->pe_size;
	snprintf(m->name, sizeof(m->name), "%.63s", base);
	return 0;
}

void trace_images_rename(struct trace_images *imgs, struct trace_images *named)
{
	for (unsigned i = 0; i < named->n; i++)
		for (unsigned k = 0; k < imgs->n && !named->code[i].n; k++)
			if (imgs->img[k].base == named->img[i].base &&
			    imgs->img[k].size == named->img[i].size)
				named->code[i] = imgs->code[k];
	trace_images_free(imgs);
	*imgs = *named;
	memset(named, 0, sizeof(*named));
}

void trace_images_free(struct trace_images *imgs)
{
	free(imgs->img);
	free(imgs->code);
	imgs->img = NULL;
	imgs->code = NULL;
	imgs->n = 0;
}

int trace_input_parse_cpu(const char *s, uint32_t *errata)
{
	unsigned long long fam, mod, step = 0;
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", s);
	char *a = strchr(buf, '/');
	if (!a)
		return -1;
	*a++ = 0;
	char *b = strchr(a, '/');
	if (b)
		*b++ = 0;
	if (parse_u64(buf, &fam) || parse_u64(a, &mod) || (b && parse_u64(b, &step)))
		return -1;
	*errata = ptflow_errata_for_cpu((unsigned)fam, (unsigned)mod, b ? (int)step : -1);
	return 0;
}

int trace_input_cpu_arg(const char *s, unsigned *cpu, uint32_t *errata)
{
	unsigned long long n;
	if (strchr(s, '/'))
		return trace_input_parse_cpu(s, errata);
	if (parse_u64(s, &n) || n > 65535)
		return -1;
	*cpu = (unsigned)n;
	return 0;
}

/* ---- the analyses ---- */
#define PIPE_MAX (16ull << 30)
#define MAX_IMAGES 4096

void trace_input_init(struct trace_input *t, const char *cmd)
{
	memset(t, 0, sizeof(*t));
	t->cmd = cmd;
	snprintf(t->prefixed, sizeof(t->prefixed), "efipt %s", cmd);
	ptsec_init(&t->im);
}

void trace_input_free(struct trace_input *t)
{
	symtab_free(&t->st);
	for (size_t i = 0; i < t->nimg; i++)
		symimage_free(&t->img[i]);
	free(t->img);
	symopts_free(&t->so);
	ptsec_free(&t->im);
}

static struct symimage *new_image(struct trace_input *t)
{
	if (t->nimg == MAX_IMAGES)
		return NULL;
	if (t->nimg == t->img_cap) {
		size_t cap = t->img_cap ? t->img_cap * 2 : 16;
		struct symimage *n = realloc(t->img, cap * sizeof(*n));
		if (!n)
			return NULL;
		t->img = n;
		t->img_cap = cap;
	}
	struct symimage *m = &t->img[t->nimg++];
	memset(m, 0, sizeof(*m));
	return m;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* FILE[:BASE] of --pe/--elf: the file name into file, the base (if any). */
static bool split_spec(const char *spec, char *file, size_t cap, unsigned long long *base)
{
	snprintf(file, cap, "%s", spec);
	char *c = strrchr(file, ':');
	if (c && !parse_u64(c + 1, base)) {
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

/* The image a --pe FILE[:BASE] or --elf FILE (not moved) makes. */
static int add_file_image(struct trace_input *t, const char *spec, bool pe)
{
	char file[4096];
	unsigned long long base = 0;
	bool have_base = split_spec(spec, file, sizeof(file), &base);
	struct symimage *m = new_image(t);
	if (!m) {
		fprintf(stderr, "efipt %s: too many images\n", t->cmd);
		return -1;
	}
	snprintf(m->name, sizeof(m->name), "%.63s", base_name(file));
	if (pe) {
		size_t len;
		uint8_t *data = (uint8_t *)read_small_file(file, 1u << 30, &len);
		struct pe_info pi;
		if (!data || pe_read_info(data, len, false, &pi)) {
			free(data);
			fprintf(stderr, "efipt %s: %s: cannot read its PE headers\n", t->cmd, file);
			return -1;
		}
		free(data);
		m->base = have_base ? base : pi.image_base;
		m->size = pi.size_of_image;
		snprintf(m->pdb, sizeof(m->pdb), "%s", pi.debug_path);
	} else {
		/* an ELF where it was linked: its addresses are its own */
		if (have_base) {
			fprintf(stderr, "efipt %s: --elf %s: a moved ELF cannot be named by its "
				"symbols; use --elf FILE or --images\n", t->cmd, spec);
			return -1;
		}
		uint64_t hi = elf_end_vaddr(file);
		if (!hi) {
			fprintf(stderr, "efipt %s: %s: no loadable segment\n", t->cmd, file);
			return -1;
		}
		m->base = 0;
		m->size = hi;
		m->pdb_is_image = true;
		snprintf(m->pdb, sizeof(m->pdb), "%.1000s", file);
	}
	return 0;
}

/* images.json (run directory format): name, base, size, pdb of each. */
static int load_images_json(struct trace_input *t, const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j) {
		fprintf(stderr, "efipt %s: %s:%d:%d: %s\n", t->cmd, term_safe(path), je.line,
			je.column, term_safe(je.text));
		return -1;
	}
	json_t *imgs = json_object_get(j, "images"), *r;
	size_t i;
	int rc = 0;
	if (!json_is_array(imgs)) {
		fprintf(stderr, "efipt %s: %s: \"images\" must be an array\n", t->cmd,
			term_safe(path));
		rc = -1;
	}
	json_array_foreach(imgs, i, r) {
		if (rc)
			break;
		const char *name;
		uint64_t base, size;
		char err[4400];
		if (images_json_entry(r, i, path, &name, &base, &size, err, sizeof(err))) {
			fprintf(stderr, "efipt %s: %s\n", t->cmd, term_safe(err));
			rc = -1;
			break;
		}
		const char *pdb = json_string_value(json_object_get(r, "pdb"));
		struct symimage *m = new_image(t);
		if (!m) {
			fprintf(stderr, "efipt %s: %s: too many images\n", t->cmd, term_safe(path));
			rc = -1;
			break;
		}
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->base = base;
		m->size = size;
		snprintf(m->pdb, sizeof(m->pdb), "%s", pdb ? pdb : "");
		/* an image loaded from a firmware volume: its FvFile GUID */
		const char *fvpath = json_string_value(json_object_get(r, "path"));
		if (!fvpath || !symguid_from_path(fvpath, m->guid))
			symguid_from_path(name, m->guid);
	}
	json_decref(j);
	return rc;
}

/*
 * Images in code a QEMU plugin recorded (memmap.json regions of type
 * QemuCode, docs/qemu.md): only the bytes of executed instructions are
 * known there, the rest reads as zero. The symbol file check must not take
 * those zeros for the image's code.
 */
static void mark_executed_only(struct trace_input *t, const char *run)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/memmap.json", run);
	json_t *j = json_load_file(p, 0, NULL), *r;
	size_t i;
	json_array_foreach(json_object_get(j, "regions"), i, r) {
		unsigned long long lo;
		json_t *pages = json_object_get(r, "pages");
		const char *type = json_string_value(json_object_get(r, "type"));
		if (!type || strcmp(type, "QemuCode") || rundir_hex(json_object_get(r, "phys"), &lo) ||
		    !json_is_integer(pages) || json_integer_value(pages) <= 0 ||
		    json_integer_value(pages) > (1ll << 36))
			continue;
		uint64_t hi = lo + (uint64_t)json_integer_value(pages) * 4096;
		for (size_t k = 0; k < t->nimg; k++) {
			struct symimage *m = &t->img[k];
			if (m->base < hi && lo < m->base + m->size)
				m->executed_only = true;
		}
	}
	json_decref(j);
}

int trace_input_option(struct trace_input *t, int c, const char *arg)
{
	char err[4400];
	int lr = 0;
	switch (c) {
	case 0x100:
		snprintf(t->trace, sizeof(t->trace), "%s", arg);
		return 0;
	case 0x101:
		snprintf(t->run, sizeof(t->run), "%s", arg);
		return 0;
	case 0x102: lr = ptsec_load_raw(&t->im, arg); break;
	case 0x103:
		lr = ptsec_load_elf(&t->im, arg);
		if (!lr && !t->images_file)
			return add_file_image(t, arg, false);
		break;
	case 0x104:
		lr = ptsec_load_pe(&t->im, arg);
		if (!lr)
			return add_file_image(t, arg, true);
		break;
	case 0x105: t->images_file = arg; return 0;
	case 0x106:
		if (symopts_add_path(&t->so, arg, err, sizeof(err)))
			goto bad;
		return 0;
	case 0x107:
		if (symopts_add_map(&t->so, arg, err, sizeof(err)))
			goto bad;
		return 0;
	case 0x108: t->fc.distnt = true; return 0;
	case 0x109: t->fc.disretc = true; return 0;
	case 0x10a: {
		unsigned long long hz;
		if (parse_u64(arg, &hz) || !hz) {
			fprintf(stderr, "efipt %s: --tsc-hz takes a frequency in Hz above 0, not "
				"'%s'\n", t->cmd, arg);
			return -1;
		}
		t->tsc_hz = hz;
		t->tsc_src = "--tsc-hz";
		return 0;
	}
	case 0x10b: {
		unsigned long long v;
		if (parse_u64(arg, &v) || !v || v > 255) {
			fprintf(stderr, "efipt %s: --nom-freq takes a ratio from 1 to 255, not '%s'\n",
				t->cmd, arg);
			return -1;
		}
		t->fc.nom_freq = (uint8_t)v;
		return 0;
	}
	case 0x10d:
		t->kernel_syms = arg;
		return 0;
	case 0x10c:
		if (strchr(arg, '/'))
			t->cpu_errata_given = true;
		if (trace_input_cpu_arg(arg, &t->cpu, &t->cpu_errata)) {
			fprintf(stderr, "%s: --cpu wants a CPU number N or FAMILY/MODEL[/STEPPING], "
				"got '%s'\n", t->prefixed, term_safe(arg));
			return -1;
		}
		return 0;
	default:
		return -1;
	}
	if (lr) {
		fprintf(stderr, "efipt %s: %s\n", t->cmd, t->im.err);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "efipt %s: %s\n", t->cmd, term_safe(err));
	return -1;
}

static const char *symimage_name(const void *img)
{
	return ((const struct symimage *)img)->name;
}

static int read_code(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	return ptsec_read(ctx, addr, buf, n);
}

/* --kernel-symbols FILE[:SLIDE|:auto]: the kernel as one more image
 * (decode/symbols/kernsyms.h). */
static int kernel_image(struct trace_input *t)
{
	char file[4096], err[4400];
	snprintf(file, sizeof(file), "%s", t->kernel_syms);
	char *c = strrchr(file, ':');
	unsigned long long slide = 0;
	bool find = c && !strcmp(c + 1, "auto");
	if (c && (find || !parse_u64(c + 1, &slide)))
		*c = 0;
	static struct kernsyms k;
	if (kernsyms_read(&k, file, err, sizeof(err))) {
		fprintf(stderr, "efipt %s: --kernel-symbols %s\n", t->cmd, term_safe(err));
		return -1;
	}
	int rc = -1;
	if (find) {
		struct input_map in;
		uint64_t s;
		unsigned hits;
		if (input_map(&in, t->trace, PIPE_MAX, err, sizeof(err))) {
			fprintf(stderr, "efipt %s: %s\n", t->cmd, term_safe(err));
			goto out;
		}
		int fr = kernsyms_find_slide(&k, in.data, in.size, &s, &hits, err, sizeof(err));
		input_unmap(&in);
		fprintf(stderr, "efipt %s: %s\n", t->cmd, err);
		if (fr)
			goto out;
		slide = s;
	}
	struct symimage *m = new_image(t);
	if (!m || kernsyms_image(&k, slide, m)) {
		fprintf(stderr, "efipt %s: out of memory\n", t->cmd);
		if (m)
			t->nimg--;
		goto out;
	}
	rc = 0;
out:
	kernsyms_free(&k);
	return rc;
}

int trace_input_finish(struct trace_input *t, const char *positional, bool want_trace)
{
	if (positional) {
		if (*t->run) {
			fprintf(stderr, "efipt %s: give the run directory once\n", t->cmd);
			return -1;
		}
		snprintf(t->run, sizeof(t->run), "%s", positional);
	}
	if (*t->run) {
		if (*t->trace || t->im.n) {
			fprintf(stderr, "efipt %s: a run directory brings its trace and code: no "
				"--pt, --raw, --elf or --pe with it\n", t->cmd);
			return -1;
		}
		if (run_load(t->prefixed, t->run, t->cpu, &t->im, &t->fc, t->trace,
			     sizeof(t->trace), NULL, &t->facts))
			return -1;
		char p[4200];
		snprintf(p, sizeof(p), "%s/images.json", t->run);
		if (!t->images_file) {
			/* images from the run; --images may override them */
			for (size_t i = 0; i < t->nimg; i++)
				symimage_free(&t->img[i]);
			t->nimg = 0;
			if (load_images_json(t, p))
				return -1;
		}
	} else if (t->cpu) {
		fprintf(stderr, "efipt %s: --cpu picks a CPU's trace of a run directory; --pt "
			"names the trace itself\n", t->cmd);
		return -1;
	} else if (want_trace && !*t->trace) {
		fprintf(stderr, "efipt %s: no trace: give a run directory or --pt TRACE\n", t->cmd);
		return -1;
	}
	if (t->images_file) {
		for (size_t i = 0; i < t->nimg; i++)
			symimage_free(&t->img[i]);
		t->nimg = 0;
		if (load_images_json(t, t->images_file))
			return -1;
	}
	/* after --images too: its images may lie in QEMU's code record */
	if (*t->run)
		mark_executed_only(t, t->run);
	if (!t->nimg && !t->im.n) {
		fprintf(stderr, "efipt %s: no code image (a run directory, --pe, --elf or --raw)\n",
			t->cmd);
		return -1;
	}
	/* --cpu F/M wins over the run's CPU; no CPU: the safe workarounds */
	t->cpu_known = flownote_errata(&t->fc, *t->run ? &t->facts : NULL, t->cpu_errata_given,
				       t->cpu_errata);
	if (!t->tsc_hz) {
		enum flow_tsc_src src;
		t->tsc_hz = flow_tsc_hz(&t->facts, &src);
		t->tsc_src = flow_tsc_src_name(src);
	}
	for (size_t i = 0; i < t->nimg; i++)
		symmap_resolve(&t->img[i], &t->so, read_code, &t->im);
	for (size_t b = 0; b < t->so.nbinds; b++) {
		size_t i = 0;
		while (i < t->nimg && !symopts_names_image(t->img[i].name, t->so.bind_img[b]))
			i++;
		if (i == t->nimg)
			fprintf(stderr, "efipt %s: --symbols %s=%s: no traced image is named %s "
				"('efipt symbols' lists them)\n", t->cmd, term_safe(t->so.bind_img[b]),
				term_safe(t->so.bind_file[b]), term_safe(t->so.bind_img[b]));
	}
	if (t->kernel_syms && kernel_image(t))
		return -1;
	if (symtab_init(&t->st, t->img, t->nimg)) {
		fprintf(stderr, "efipt %s: out of memory\n", t->cmd);
		return -1;
	}
	if (t->st.overlap)
		images_note_overlaps(t->prefixed, t->img, (unsigned)t->nimg, sizeof(*t->img),
				     symimage_name);
	return 0;
}

uint64_t trace_input_ns(const struct trace_input *t, uint64_t ticks)
{
	if (!t->tsc_hz)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / t->tsc_hz);
}

long trace_input_decode(struct trace_input *t, const struct ptflow_sink *sink,
			struct ptflow_stat *stat)
{
	struct input_map in;
	char err[4400];
	if (input_map(&in, t->trace, PIPE_MAX, err, sizeof(err))) {
		fprintf(stderr, "efipt %s: %s\n", t->cmd, term_safe(err));
		return -1;
	}
	uint32_t cache_n = 1u << 16;
	t->fc.image = ptsec_ptimg(&t->im);
	t->fc.cache_size = cache_n;
	t->fc.cache = calloc(cache_n, sizeof(*t->fc.cache));
	struct ptflow_decoder *d = malloc(sizeof(*d));
	long errs = -1;
	if (!d || !t->fc.cache || ptflow_init(d, &t->fc, sink)) {
		fprintf(stderr, "efipt %s: out of memory\n", t->cmd);
	} else {
		ptflow_on_blocks(d, t->on_blocks);
		if (t->on_blocks && t->blk_region)
			ptflow_blk_regions(d, t->blk_region, t->blk_region_ctx);
		ptflow_blocks_timed(d, t->on_blocks != NULL);
		struct progress pg;
		progress_start(&pg, d, t->cmd, strcmp(t->trace, "-") ? t->trace : "<stdin>", in.size,
			       t->streams);
		t->dec = d;
		errs = ptflow_decode(d, in.data, in.size, 0);
		t->dec = NULL;
		progress_end(&pg);
		const char *name = strcmp(t->trace, "-") ? t->trace : "<stdin>";
		flownote_report(t->prefixed, name, &d->stat, d->stat.errors, t->cpu_known, false);
		/* no PSB at all, or a last packet cut short: as efipt insn says */
		errs += trace_end_report(t->cmd, name, in.data, in.size);
		if (stat)
			*stat = d->stat;
	}
	free(d);
	free(t->fc.cache);
	t->fc.cache = NULL;
	input_unmap(&in);
	return errs;
}
