/*
 * The flight recorder region (core/recorder*.c, arch/x86_64/pt_carve.c):
 *   - the variable and header: round trips, and every corruption refused
 *     with its own status (magic, version, checksum, stale generation,
 *     moved, sections out of place, damaged sections);
 *   - a region laid out as efipt.efi lays it out, its output buffer
 *     programmed through the engine into the PT model (tests/lib/pt_model,
 *     SDM-faithful MSRs and ToPA/single-range output), a stream of PSB+ with
 *     rising TSCs written by the model, then a warm reset of the model:
 *     the end of the trace from the MSRs where CPUID.(14H,0):EBX[2] keeps
 *     them (33.3.4), from the newest PSB+ by TSC where it does not, from
 *     the zero fill of a buffer that never wrapped, from the stop state
 *     efipt recorded; each compared with the bytes the stream put there;
 *   - MSRs that are not the recorder's, or disagree with the trace, are not
 *     used;
 *   - what a recovered run directory gets: code snapshots (those taken at
 *     ExitBootServices win), images.json, memmap.json, manifest members.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pt_carve.h"
#include "arch/x86_64/pt_engine.h"
#include "check.h"
#include "core/crc32.h"
#include "core/recorder.h"
#include "core/recorder_write.h"
#include "host/util/file_io.h"
#include "host/util/sim_mem.h"
#include "lib/pt_model.h"

#define PROFILES "tests/data/cpu-profiles/"

static int load_caps(const char *file, struct cpuid_set *set, struct ptcaps *caps)
{
	char path[512];
	snprintf(path, sizeof(path), PROFILES "%s", file);
	size_t len;
	char *text = read_small_file(NULL, path, 1 << 20, &len);
	unsigned line;
	int rc = text && cpuidtxt_parse(set, text, len, 0, &line) == 0 ? 0 : -1;
	free(text);
	if (!rc)
		ptcaps_parse(caps, set);
	return rc;
}

/* ---- a stream: PSB+ (PSB, TSC, PSBEND) every period bytes, TNT between -- */

#define PSBP_BYTES 26
struct stream {
	uint8_t *b;
	size_t len;
	size_t psb[65536];	/* offsets of the PSB+ */
	unsigned npsb;
};

static void gen_stream(struct stream *s, size_t len, size_t period, bool tsc)
{
	s->b = malloc(len);
	s->len = len;
	s->npsb = 0;
	size_t o = 0, next = 0;
	while (o < len) {
		if (o >= next && o + PSBP_BYTES <= len && s->npsb < 65536) {
			s->psb[s->npsb++] = o;
			for (int i = 0; i < 8; i++) {
				s->b[o++] = 0x02;
				s->b[o++] = 0x82;
			}
			if (tsc) {
				uint64_t t = 1000 + 3 * (uint64_t)o;
				s->b[o++] = 0x19;
				for (int i = 0; i < 7; i++)
					s->b[o++] = (uint8_t)(t >> (8 * i));
			} else {
				for (int i = 0; i < 8; i++)
					s->b[o++] = 0x04;
			}
			s->b[o++] = 0x02;
			s->b[o++] = 0x23;
			next += period;
			continue;
		}
		s->b[o] = 0x04 | (uint8_t)((o & 7) << 4); /* TNT.8, never 00 or 02 */
		o++;
	}
}

/* ---- a region as efipt.efi arms it, over the model ---------------------- */

struct tr {
	struct simmem mem;
	struct ptout_mem ops;
	struct ptout_carve carve;
	struct ptcfg_settings set;
	struct ptout out;
	struct ptout_region reg[1024];
	struct ptout_table tab[16];
	struct ptrec_plan plan;
	struct ptrec_header h;
	uint64_t phys;
	uint8_t *m;		/* the region's bytes */
	struct ptmodel model;
	struct rtit_engine eng;
	struct ptrec_var var;
};

static struct tr T;
static struct ptrec R;
static const struct cpuid_set *arm_cpuid; /* the arming CPU's leaves, for the header */
static uint8_t code_a[3 * 4096], code_b[4096], code_b2[4096], code_c[2 * 4096];

static int rd_sim(void *ctx, uint64_t off, void *dst, size_t len)
{
	struct tr *t = ctx;
	if (off + len > t->plan.total)
		return -1;
	memcpy(dst, t->m + off, len);
	return 0;
}

static struct imgrec image(const char *name, uint64_t base, uint64_t size)
{
	struct imgrec r;
	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "%s", name);
	snprintf(r.path, sizeof(r.path), "\\EFI\\%s.efi", name);
	r.base = base;
	r.size = size;
	r.entry = base + 0x400;
	r.code_type = 1; /* LoaderCode */
	return r;
}

/* Reseal the header into the region and refresh the variable. */
static void seal(struct tr *t)
{
	ptrec_header_seal(&t->h);
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
	memset(&t->var, 0, sizeof(t->var));
	t->var.state = PTREC_VAR_ARMED;
	t->var.region_phys = t->phys;
	t->var.region_size = t->plan.total;
	t->var.header_off = t->plan.header_off;
	t->var.generation = t->h.generation;
	t->var.boot = t->h.boot;
	ptrec_var_seal(&t->var);
}

/* Arm: validate, plan, place, build the buffer, header and sections, start. */
static int arm(struct tr *t, const struct ptcaps *caps, enum ptcfg_output output, uint64_t size,
	       bool start)
{
	char msg[512];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	simmem_init(&t->mem, SIMMEM_DEFAULT_BASE);
	simmem_ops(&t->mem, &t->ops);
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	cfg.size = size;
	cfg.output = output;
	cfg.mode = PTCFG_MODE_WRAP;
	cfg.tsc = true;
	if (ptcfg_validate(&cfg, caps, &t->set, &sb)) {
		printf("# validate: %s\n", msg);
		return -1;
	}
	memset(&t->plan, 0, sizeof(t->plan));
	t->plan.trace_area = ptout_carve_need(&t->set);
	t->plan.ntab = 16;
	t->plan.nreg = 64;
	t->plan.cmdline_len = 40;
	t->plan.arm_images = 3;
	t->plan.arm_code = sizeof(code_a) + sizeof(code_b) + sizeof(code_c);
	t->plan.exit_images = 4;
	t->plan.exit_code = 4 * 4096;
	ptrec_plan(&t->plan);
	if (t->ops.alloc(t->ops.ctx, t->plan.total, ptout_carve_align(&t->set), &t->phys))
		return -1;
	uint8_t zero = 0;
	simmem_write(&t->mem, t->phys, &zero, 1);
	t->m = simmem_find(&t->mem, t->phys, t->plan.total)->data;
	ptout_carve_init(&t->carve, &t->ops, t->phys, t->plan.trace_area);
	ptout_init(&t->out, t->reg, 1024, t->tab, 16);
	if (ptout_build(&t->out, &t->set, &t->carve.mem, &sb)) {
		printf("# build: %s\n", msg);
		return -1;
	}
	struct ptrec_header *h = &t->h;
	memset(h, 0, sizeof(*h));
	h->flags = PTREC_F_STARTED;
	h->generation = 7;
	h->region_phys = t->phys;
	h->region_size = t->plan.total;
	h->header_off = t->plan.header_off;
	h->boot = 3;
	h->source = PTREC_SRC_HW;
	/* the stream's clock (as the synthesizer's): its first TSC is 1000 + 3 * 16 */
	h->tsc_arm = 1000;
	h->tsc_started = 1048;
	h->rtit_ctl = t->set.ctl | 1;
	snprintf(h->run_id, sizeof(h->run_id), "20260101-000000-000");
	snprintf(h->armed_at, sizeof(h->armed_at), "2026-01-01T00:00:00");
	snprintf(h->traced_path, sizeof(h->traced_path), "\\EFI\\debian\\grubx64.efi");
	for (unsigned i = 0; arm_cpuid && i < arm_cpuid->n && h->ncpuid < PTREC_MAX_CPUID; i++) {
		const struct cpuid_leaf *l = &arm_cpuid->e[i];
		if (l->leaf == 0 || l->leaf == 1 || l->leaf == 7 || l->leaf == 0x14 || l->leaf == 0x15)
			h->cpuid[h->ncpuid++] = (struct ptrec_cpuid){ l->leaf, l->subleaf,
								       { l->r[0], l->r[1], l->r[2],
									 l->r[3] } };
	}
	ptrec_plan_sections(&t->plan, h);
	uint64_t lay = ptout_record(&t->out, h, t->m + t->plan.off[PTREC_SEC_LAYOUT]);
	ptrec_section_done(h, PTREC_SEC_LAYOUT, t->m, lay);
	/* images a, b, c at arming; at exit b changed, d is new */
	struct ptrec_images_writer iw;
	ptrec_images_begin(&iw, t->m + t->plan.off[PTREC_SEC_IMAGES_ARM],
			   t->plan.cap[PTREC_SEC_IMAGES_ARM]);
	struct imgrec ia = image("a", 0x100000, sizeof(code_a)),
		      ib = image("b", 0x200000, sizeof(code_b)),
		      ic = image("c", 0x300000, sizeof(code_c) - 100);
	ptrec_images_add(&iw, &ia);
	ptrec_images_add(&iw, &ib);
	ptrec_images_add(&iw, &ic);
	ptrec_section_done(h, PTREC_SEC_IMAGES_ARM, t->m, ptrec_images_used(&iw));
	struct ptrec_code_writer cw;
	ptrec_code_begin(&cw, t->m + t->plan.off[PTREC_SEC_CODE_ARM],
			 t->plan.cap[PTREC_SEC_CODE_ARM], 3);
	ptrec_code_add(&cw, ia.base, ia.size, 1, 0, code_a);
	ptrec_code_add(&cw, ib.base, ib.size, 1, 1, code_b);
	ptrec_code_add(&cw, ic.base, ic.size, 3, 2, code_c);
	ptrec_section_done(h, PTREC_SEC_CODE_ARM, t->m, ptrec_code_used(&cw));
	ptrec_images_begin(&iw, t->m + t->plan.off[PTREC_SEC_IMAGES_EXIT],
			   t->plan.cap[PTREC_SEC_IMAGES_EXIT]);
	struct imgrec id = image("d", 0x400000, 4096), ib2 = image("b", 0x200000, 4096);
	ptrec_images_add(&iw, &ib2);
	ptrec_images_add(&iw, &id);
	ptrec_section_done(h, PTREC_SEC_IMAGES_EXIT, t->m, ptrec_images_used(&iw));
	ptrec_code_begin(&cw, t->m + t->plan.off[PTREC_SEC_CODE_EXIT],
			 t->plan.cap[PTREC_SEC_CODE_EXIT], 4);
	ptrec_code_add(&cw, ib2.base, ib2.size, 1, 0, code_b2);
	ptrec_section_done(h, PTREC_SEC_CODE_EXIT, t->m, ptrec_code_used(&cw));
	memcpy(t->m + t->plan.off[PTREC_SEC_CMDLINE], "trace --recorder -- grubx64.efi", 31);
	ptrec_section_done(h, PTREC_SEC_CMDLINE, t->m, 31);
	h->flags |= PTREC_F_EXIT;
	seal(t);
	if (!start)
		return 0;
	ptmodel_init(&t->model, caps, NULL, &t->mem);
	rtit_engine_init(&t->eng, &t->model.ops, caps, &t->set, &t->out, NULL);
	sb_reset(&sb);
	if (rtit_start(&t->eng, &sb) != RTIT_OK) {
		printf("# start: %s\n", msg);
		return -1;
	}
	return 0;
}

static void emit(struct tr *t, const struct stream *s)
{
	for (size_t o = 0; o < s->len; o += 1000)
		ptmodel_emit(&t->model, s->b + o, s->len - o < 1000 ? s->len - o : 1000);
}

struct collect {
	uint8_t *buf;
	size_t len, cap;
};

static int collect(void *ctx, uint64_t off, uint64_t len)
{
	struct collect *c = ctx;
	if (c->len + len > c->cap)
		return 1;
	memcpy(c->buf + c->len, T.m + off, len);
	c->len += len;
	return 0;
}

/* Open, find the end, extract: the trace bytes in *out (malloc'd). */
static int recover(struct tr *t, const struct ptrec_msrs *msrs, struct ptrec_end *e,
		   uint8_t **out, size_t *len, char *notes, size_t ncap)
{
	char why[512];
	struct strbuf sb, nb;
	sb_init(&sb, why, sizeof(why));
	sb_init(&nb, notes, ncap);
	struct ptrec_reader rd = { rd_sim, t };
	int st = ptrec_open(&R, &t->var, &rd, &sb);
	if (st) {
		printf("# open: %s\n", why);
		return st;
	}
	if (ptrec_find_end(&R, msrs, e, &nb))
		return 1;
	struct collect c = { malloc(e->len + 1), 0, e->len + 1 };
	ptrec_trace_spans(&R, e, collect, &c);
	*out = c.buf;
	*len = c.len;
	return 0;
}

static struct ptrec_msrs model_msrs(const struct tr *t)
{
	struct ptrec_msrs m = { true, t->model.u.ctl, t->model.u.status, t->model.u.base, t->model.u.mask };
	return m;
}

/* The last complete PSB+ of the stream, and the first one that begins in
 * (and is complete within) the ring's last lap: what the TSC method keeps. */
static void tsc_expect(const struct stream *s, uint64_t ring, size_t *from, size_t *to)
{
	size_t lap = s->len > ring ? s->len - ring : 0;
	*from = *to = 0;
	for (unsigned i = 0; i < s->npsb; i++) {
		size_t p = s->psb[i];
		if (p >= lap && !*from)
			*from = p ? p : 0;
		if (p + PSBP_BYTES <= s->len)
			*to = p + PSBP_BYTES;
	}
}

static void test_var(void)
{
	struct ptrec_var v = { .state = PTREC_VAR_ARMED, .region_phys = 0x1000000,
			       .region_size = 0x200000, .header_off = 0x100000, .generation = 5 };
	ptrec_var_seal(&v);
	struct ptrec_var d;
	char why[256];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	CHECK(ptrec_var_decode(&v, sizeof(v), &d, &sb) == 0 && d.generation == 5,
	      "var: round trip");
	struct ptrec_var bad = v;
	bad.generation++;
	sb_reset(&sb);
	CHECKF(ptrec_var_decode(&bad, sizeof(bad), &d, &sb) && strstr(why, "damaged"),
	       "var: a changed byte fails the CRC", "%s", why);
	sb_reset(&sb);
	CHECK(ptrec_var_decode(&v, sizeof(v) - 1, &d, &sb) && strstr(why, "bytes"),
	      "var: wrong size refused");
	bad = v;
	bad.header_off = bad.region_size;
	ptrec_var_seal(&bad);
	sb_reset(&sb);
	CHECKF(ptrec_var_decode(&bad, sizeof(bad), &d, &sb) && strstr(why, "no usable region"),
	       "var: a header outside the region refused", "%s", why);
	bad = v;
	bad.region_phys = ~0ull & ~0xfffull;
	ptrec_var_seal(&bad);
	sb_reset(&sb);
	CHECK(ptrec_var_decode(&bad, sizeof(bad), &d, &sb), "var: a region past 2^64 refused");
	memcpy(bad.magic, "NOTEFIPT", 8);
	sb_reset(&sb);
	CHECK(ptrec_var_decode(&bad, sizeof(bad), &d, &sb) && strstr(why, "not efipt's"),
	      "var: another program's variable refused");
}

/* CRC-32 one bit at a time, straight from the polynomial: the reference. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void test_crc(void)
{
	CHECK(crc32_update(0, "123456789", 9) == 0xcbf43926, "crc32: IEEE check value");
	static uint8_t buf[4096];
	srand(3);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	bool same = true;
	for (size_t n = 0; n <= sizeof(buf); n += 97)
		same &= crc32_update(0, buf, n) == crc_bitwise(buf, n);
	CHECK(same, "crc32: equals the bitwise computation over random data");
	uint32_t c = crc32_update(0, "1234", 4);
	CHECK(crc32_update(c, "56789", 5) == 0xcbf43926, "crc32: in pieces");
}

/* Open a copy of the region after f changed it; the status it gives. */
static int open_after(void (*f)(struct tr *), char *why, size_t cap)
{
	uint8_t *save = malloc(T.plan.total);
	memcpy(save, T.m, T.plan.total);
	struct ptrec_header h = T.h;
	struct ptrec_var v = T.var;
	f(&T);
	struct strbuf sb;
	sb_init(&sb, why, cap);
	struct ptrec_reader rd = { rd_sim, &T };
	int st = ptrec_open(&R, &T.var, &rd, &sb);
	memcpy(T.m, save, T.plan.total);
	T.h = h;
	T.var = v;
	free(save);
	return st;
}

static void c_magic(struct tr *t) { t->m[t->plan.header_off] ^= 1; }
static void c_crc(struct tr *t) { t->m[t->plan.header_off + 0x500] ^= 0x80; }
static void c_stale(struct tr *t)
{
	t->var.generation++;
	ptrec_var_seal(&t->var);
}
static void c_moved(struct tr *t)
{
	t->h.region_size += 4096;
	ptrec_header_seal(&t->h);
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
}
static void c_version(struct tr *t)
{
	t->h.version = 2;
	ptrec_header_seal(&t->h);
	t->h.version = 2;
	t->h.crc = 0;
	t->h.crc = crc32_update(0, &t->h, sizeof(t->h));
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
}
static void c_overlap(struct tr *t)
{
	struct ptrec_section *a = ptrec_section_get(&t->h, PTREC_SEC_CMDLINE);
	a->off = ptrec_section_get(&t->h, PTREC_SEC_CODE_EXIT)->off;
	ptrec_header_seal(&t->h);
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
}
static void c_outside(struct tr *t)
{
	ptrec_section_get(&t->h, PTREC_SEC_CMDLINE)->cap = t->plan.total;
	ptrec_header_seal(&t->h);
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
}
static void c_layout(struct tr *t) { t->m[t->plan.off[PTREC_SEC_LAYOUT] + 9] ^= 4; }
static void c_region_in_header(struct tr *t)
{
	/* a layout (resealed) whose region is the header page */
	struct ptrec_region g;
	uint8_t *lay = t->m + t->plan.off[PTREC_SEC_LAYOUT];
	struct ptrec_layout_hdr lh;
	memcpy(&lh, lay, sizeof(lh));
	memcpy(&g, lay + sizeof(lh) + 8 * lh.ntab, sizeof(g));
	g.base = t->phys + t->plan.header_off;
	g.size = 4096;
	memcpy(lay + sizeof(lh) + 8 * lh.ntab, &g, sizeof(g));
	ptrec_section_done(&t->h, PTREC_SEC_LAYOUT, t->m,
			   ptrec_section_get(&t->h, PTREC_SEC_LAYOUT)->used);
	ptrec_header_seal(&t->h);
	memcpy(t->m + t->plan.header_off, &t->h, sizeof(t->h));
}
static void c_code_exit(struct tr *t) { t->m[t->plan.off[PTREC_SEC_CODE_EXIT] + 4096] ^= 1; }
static void c_garbage(struct tr *t)
{
	srand(5);
	for (uint64_t i = 0; i < t->plan.total; i++)
		t->m[i] = (uint8_t)rand();
}

static void test_checks(const struct ptcaps *caps)
{
	if (!CHECK(arm(&T, caps, PTCFG_OUT_TOPA, 64 << 10, false) == 0, "region: armed"))
		return;
	char why[512];
	CHECKF(open_after(c_magic, why, sizeof(why)) == PTREC_NO_HEADER && strstr(why, "cold boot"),
	       "open: no magic (cold boot) says so", "%s", why);
	CHECKF(open_after(c_garbage, why, sizeof(why)) == PTREC_NO_HEADER,
	       "open: garbage RAM is no recorder", "%s", why);
	CHECKF(open_after(c_crc, why, sizeof(why)) == PTREC_BAD_CHECKSUM && strstr(why, "damaged"),
	       "open: a changed header byte fails the checksum", "%s", why);
	CHECKF(open_after(c_stale, why, sizeof(why)) == PTREC_STALE && strstr(why, "stale"),
	       "open: a stale generation is refused", "%s", why);
	CHECKF(open_after(c_moved, why, sizeof(why)) == PTREC_MOVED, "open: another region refused",
	       "%s", why);
	CHECKF(open_after(c_version, why, sizeof(why)) == PTREC_BAD_VERSION,
	       "open: an unknown version refused", "%s", why);
	CHECKF(open_after(c_overlap, why, sizeof(why)) == PTREC_BAD_LAYOUT && strstr(why, "overlaps"),
	       "open: overlapping sections refused", "%s", why);
	CHECKF(open_after(c_outside, why, sizeof(why)) == PTREC_BAD_LAYOUT,
	       "open: a section past the region refused", "%s", why);
	CHECKF(open_after(c_layout, why, sizeof(why)) == PTREC_BAD_SECTION,
	       "open: a damaged layout section refused", "%s", why);
	CHECKF(open_after(c_region_in_header, why, sizeof(why)) == PTREC_BAD_LAYOUT,
	       "open: an output region on the header refused", "%s", why);
	int st = open_after(c_code_exit, why, sizeof(why));
	CHECKF(st == PTREC_OK && strstr(why, "code at ExitBootServices section is damaged"),
	       "open: a damaged code section is left out, the rest is used", "%d %s", st, why);
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	struct ptrec_reader rd = { rd_sim, &T };
	CHECKF(ptrec_open(&R, &T.var, &rd, &sb) == PTREC_OK, "open: the intact region opens", "%s",
	       why);

	/* what the run directory gets */
	struct ptrec_code c;
	unsigned n = 0, at_exit = 0;
	bool b_from_exit = false, bytes_ok = true;
	for (; ptrec_code(&R, n, &c); n++) {
		at_exit += c.at_exit;
		if (c.phys == 0x200000)
			b_from_exit = c.at_exit && !memcmp(T.m + c.off, code_b2, 4096);
		if (c.phys == 0x300000)
			bytes_ok = c.size == sizeof(code_c) && !memcmp(T.m + c.off, code_c, c.size);
	}
	CHECKF(n == 3 && at_exit == 1 && b_from_exit && bytes_ok,
	       "run: snapshots a, c from arming, b from ExitBootServices (page rounded)",
	       "%u snapshots, %u at exit, b %d, c %d", n, at_exit, b_from_exit, bytes_ok);
	static char text[65536];
	sb_init(&sb, text, sizeof(text));
	unsigned listed = ptrec_images_json(&R, &sb);
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	json_t *imgs = json_object_get(j, "images");
	CHECKF(listed == 4 && json_array_size(imgs) == 4 &&
		       !strcmp(json_string_value(json_object_get(json_array_get(imgs, 1), "name")),
			       "d"),
	       "run: images.json lists b, d (exit) then a, c (arming)", "%u %s", listed, je.text);
	json_decref(j);
	sb_init(&sb, text, sizeof(text));
	ptrec_memmap_json(&R, &sb);
	j = json_loads(text, 0, &je);
	CHECKF(json_array_size(json_object_get(j, "regions")) == 3 &&
		       !strcmp(json_string_value(json_object_get(
				       json_array_get(json_object_get(j, "regions"), 0), "snapshot")),
			       "mem-0000000000200000.bin"),
	       "run: memmap.json names each snapshot", "%s", je.text);
	json_decref(j);
	simmem_release(&T.mem);
}

static void test_ends(const char *what, const struct ptcaps *caps, enum ptcfg_output output,
		      uint64_t ring, size_t len, bool keep_msrs_expected)
{
	char name[200], notes[1024];
	static struct stream s;
	gen_stream(&s, len, 512, true);
	if (!CHECK(arm(&T, caps, output, ring, true) == 0, what))
		return;
	uint64_t size = T.h.trace_size;
	emit(&T, &s);
	CHECK(T.model.gp == 0 && T.model.operr == 0, "model: no #GP, no operational error");
	ptmodel_warm_reset(&T.model);
	struct ptrec_msrs m = model_msrs(&T);
	struct ptrec_end e;
	uint8_t *out = NULL;
	size_t got = 0;
	int rc = recover(&T, &m, &e, &out, &got, notes, sizeof(notes));
	bool wrapped = len > size;
	const uint8_t *want = s.b + (wrapped ? len - size : 0);
	size_t wlen = wrapped ? size : len;
	if (keep_msrs_expected) {
		snprintf(name, sizeof(name), "%s: EBX[2]=1 keeps the MSRs: the exact end from them",
			 what);
		CHECKF(rc == 0 && e.how == PTREC_END_MSRS && e.wrapped == wrapped && got == wlen &&
			       !memcmp(out, want, wlen),
		       name, "rc %d how %s wrapped %d got %zu want %zu notes %s", rc,
		       ptrec_end_how_name(e.how), e.wrapped, got, wlen, notes);
	} else if (wrapped) {
		size_t from, to;
		tsc_expect(&s, size, &from, &to);
		snprintf(name, sizeof(name),
			 "%s: MSRs cleared by the reset: from the newest PSB+ by TSC", what);
		CHECKF(rc == 0 && e.how == PTREC_END_PSB_TSC && got == to - from &&
			       !memcmp(out, s.b + from, to - from),
		       name, "rc %d how %s got %zu want %zu (from %zu to %zu) notes %s", rc,
		       ptrec_end_how_name(e.how), got, to - from, from, to, notes);
		/* where the CPU really stopped writing lies in the window reported */
		uint64_t p = len % size;
		bool in = e.lo <= e.hi ? p >= e.lo && p < e.hi : p >= e.lo || p < e.hi;
		snprintf(name, sizeof(name), "%s: the real write position lies in the window", what);
		CHECKF(in, name, "pos 0x%llx window [0x%llx, 0x%llx)", (unsigned long long)p,
		       (unsigned long long)e.lo, (unsigned long long)e.hi);
	} else {
		snprintf(name, sizeof(name), "%s: never wrapped: the end from the zero fill", what);
		CHECKF(rc == 0 && e.how == PTREC_END_UNWRAPPED && got == len && !memcmp(out, s.b, len),
		       name, "rc %d how %s got %zu want %zu notes %s", rc, ptrec_end_how_name(e.how),
		       got, len, notes);
	}
	free(out);

	if (keep_msrs_expected && wrapped) {
		/* MSRs that point into the layout but not where the trace ends */
		struct ptrec_msrs lie = m;
		lie.mask = (lie.mask & 0xffffffffull) |
			   ((((lie.mask >> 32) + 300) % T.reg[0].size) << 32);
		if (T.out.output == PTCFG_OUT_SINGLE)
			lie.mask = (lie.mask & 0xffffffffull) | (((m.mask >> 32) + 300) % size) << 32;
		rc = recover(&T, &lie, &e, &out, &got, notes, sizeof(notes));
		snprintf(name, sizeof(name), "%s: MSRs off the trace's end are not used", what);
		CHECKF(rc == 0 && e.how == PTREC_END_PSB_TSC && strstr(notes, "not between"), name,
		       "rc %d how %s notes %s", rc, ptrec_end_how_name(e.how), notes);
		free(out);
		lie = m;
		lie.ctl ^= 1ull << 11;
		rc = recover(&T, &lie, &e, &out, &got, notes, sizeof(notes));
		snprintf(name, sizeof(name), "%s: another IA32_RTIT_CTL: MSRs not used", what);
		CHECKF(rc == 0 && e.how == PTREC_END_PSB_TSC && strstr(notes, "programmed"), name,
		       "rc %d how %s notes %s", rc, ptrec_end_how_name(e.how), notes);
		free(out);
		lie = m;
		lie.base ^= 0x1000000;
		rc = recover(&T, &lie, &e, &out, &got, notes, sizeof(notes));
		snprintf(name, sizeof(name), "%s: OUTPUT_BASE outside the layout: not used", what);
		CHECKF(rc == 0 && e.how == PTREC_END_PSB_TSC, name, "rc %d how %s notes %s", rc,
		       ptrec_end_how_name(e.how), notes);
		free(out);
	}
	simmem_release(&T.mem);
	free(s.b);
}

/* The traced image returned: efipt stops tracing and records where it
 * ended, as efi/recorder_arm.c does. */
static void stop_recorded(struct tr *t)
{
	char msg[256];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	rtit_stop(&t->eng, &sb);
	t->h.flags |= PTREC_F_STOPPED | PTREC_F_RETURNED;
	t->h.stop_base = t->eng.stop_base;
	t->h.stop_mask = t->eng.stop_mask;
	t->h.stop_status = t->eng.stop_status;
	seal(t);
}

/* The stop state efipt records when the traced image returns. */
static void test_stopped(const struct ptcaps *caps)
{
	static struct stream s;
	gen_stream(&s, 100000, 512, true);
	if (!CHECK(arm(&T, caps, PTCFG_OUT_TOPA, 64 << 10, true) == 0, "stopped: armed"))
		return;
	emit(&T, &s);
	char notes[512];
	struct strbuf sb;
	stop_recorded(&T);
	/* a cold reset clears every MSR */
	struct ptrec_msrs none = { true, 0, 0, 0, 0 };
	struct ptrec_end e;
	uint8_t *out = NULL;
	size_t got = 0;
	int rc = recover(&T, &none, &e, &out, &got, notes, sizeof(notes));
	uint64_t size = T.h.trace_size;
	CHECKF(rc == 0 && e.how == PTREC_END_STOPPED && e.wrapped && got == size &&
		       !memcmp(out, s.b + s.len - size, size),
	       "stopped: the end efipt read back at stop (33.3.3)", "rc %d how %s got %zu notes %s",
	       rc, ptrec_end_how_name(e.how), got, notes);
	free(out);
	/* the manifest members parse as JSON */
	static char text[16384];
	sb_init(&sb, text, sizeof(text));
	sb_putc(&sb, '{');
	struct ptrec_here here = { 4, true, "test", false };
	ptrec_manifest_members(&R, &e, &here, notes, &sb);
	sb_putc(&sb, '}');
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	json_t *rec = json_object_get(j, "recovered");
	CHECKF(j && json_integer_value(json_object_get(rec, "from_boot")) == 3 &&
		       json_integer_value(json_object_get(rec, "this_boot")) == 4 &&
		       !strcmp(json_string_value(json_object_get(rec, "end")), "stopped") &&
		       json_is_true(json_object_get(json_object_get(j, "trace"), "recovered")),
	       "run: manifest members: recovered, from which boot, how the end was found",
	       "%s: %.300s", je.text, text);
	json_decref(j);
	simmem_release(&T.mem);
	free(s.b);
}

/* A wrapped trace without TSC packets has no end to find. */
static void test_no_tsc(const struct ptcaps *caps)
{
	static struct stream s;
	gen_stream(&s, 300000, 512, false);
	if (!CHECK(arm(&T, caps, PTCFG_OUT_TOPA, 64 << 10, true) == 0, "no TSC: armed"))
		return;
	emit(&T, &s);
	ptmodel_warm_reset(&T.model);
	struct ptrec_msrs m = model_msrs(&T);
	char notes[512];
	struct ptrec_end e;
	uint8_t *out = NULL;
	size_t got;
	int rc = recover(&T, &m, &e, &out, &got, notes, sizeof(notes));
	CHECKF(rc == 1 && strstr(notes, "cannot be told"),
	       "no TSC, MSRs cleared, wrapped: refused, nothing decoded from guesswork", "rc %d %s",
	       rc, notes);
	simmem_release(&T.mem);
	free(s.b);
}

/* Seeds for tests/fuzz/fuzz_recorder.c: an 8-byte header offset, the
 * switches byte, the region. */
static int write_seeds(const char *dir, const struct ptcaps *caps)
{
	static struct stream s;
	gen_stream(&s, 40000, 512, true);
	if (arm(&T, caps, PTCFG_OUT_TOPA, 16 << 10, true))
		return 1;
	emit(&T, &s);
	ptmodel_warm_reset(&T.model);
	for (int fix = 0; fix < 8; fix += 7) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/seed-region-%d", dir, fix);
		FILE *f = fopen(path, "wb");
		uint64_t hoff = T.plan.header_off / 4096;
		uint8_t sw = (uint8_t)fix;
		struct ptrec_msrs m = model_msrs(&T);
		if (!f || fwrite(&hoff, 8, 1, f) != 1 || fwrite(&sw, 1, 1, f) != 1 ||
		    fwrite(T.m, T.plan.total, 1, f) != 1 || fwrite(&m.ctl, 8, 1, f) != 1 ||
		    fwrite(&m.status, 8, 1, f) != 1 || fwrite(&m.base, 8, 1, f) != 1 ||
		    fwrite(&m.mask, 8, 1, f) != 1 || fclose(f))
			return 1;
	}
	simmem_release(&T.mem);
	free(s.b);
	return 0;
}

/* One fixture for tests/cli/t_recover_linux.sh: DIR/NAME/efivars/ (the
 * variable as efivarfs shows it: 4 bytes of attributes, then the data),
 * DIR/NAME/mem.bin (the region; physical address in DIR/NAME/phys) and
 * DIR/NAME/expected.pt (the trace the Linux reader must find: from the
 * newest PSB+ by TSC, or all of it when the stream stopped or never
 * wrapped). */
static int write_fixture(const char *dir, const char *name, const struct ptcaps *caps,
			 size_t len, bool stop)
{
	static struct stream s;
	gen_stream(&s, len, 512, true);
	if (arm(&T, caps, PTCFG_OUT_TOPA, 16 << 10, true))
		return 1;
	emit(&T, &s);
	if (stop)
		stop_recorded(&T);
	uint64_t size = T.h.trace_size;
	size_t from = len > size ? len - size : 0, to = len;
	if (!stop && len > size)
		tsc_expect(&s, size, &from, &to);
	char p[4096];
	snprintf(p, sizeof(p), "mkdir -p '%s/%s/efivars'", dir, name);
	if (system(p))
		return 1;
	snprintf(p, sizeof(p), "%s/%s/efivars/%s-%s", dir, name, PTREC_VAR_NAME,
		 PTREC_VENDOR_GUID_TEXT);
	FILE *f = fopen(p, "wb");
	uint32_t attr = 7;
	int bad = !f || fwrite(&attr, 4, 1, f) != 1 || fwrite(&T.var, sizeof(T.var), 1, f) != 1;
	bad |= f && fclose(f);
	snprintf(p, sizeof(p), "%s/%s/mem.bin", dir, name);
	f = fopen(p, "wb");
	bad |= !f || fwrite(T.m, T.plan.total, 1, f) != 1;
	bad |= f && fclose(f);
	snprintf(p, sizeof(p), "%s/%s/phys", dir, name);
	f = fopen(p, "w");
	bad |= !f || fprintf(f, "0x%llx\n", (unsigned long long)T.phys) < 0;
	bad |= f && fclose(f);
	snprintf(p, sizeof(p), "%s/%s/expected.pt", dir, name);
	f = fopen(p, "wb");
	bad |= !f || fwrite(s.b + from, to - from, 1, f) != 1;
	bad |= f && fclose(f);
	simmem_release(&T.mem);
	free(s.b);
	return bad;
}

int main(int argc, char **argv)
{
	static struct cpuid_set skl_set, bdw_set;
	static struct ptcaps skl, bdw;
	if (load_caps("skylake-s-core-i7-6700k.txt", &skl_set, &skl) ||
	    load_caps("broadwell-h-core-i7-5775c.txt", &bdw_set, &bdw)) {
		CHECK(0, "CPU profiles load");
		return check_exit();
	}
	for (unsigned i = 0; i < sizeof(code_a); i++)
		code_a[i] = (uint8_t)i;
	memset(code_b, 0xb1, sizeof(code_b));
	memset(code_b2, 0xb2, sizeof(code_b2));
	memset(code_c, 0xc3, sizeof(code_c));
	arm_cpuid = &skl_set;
	if (argc == 3 && !strcmp(argv[1], "--fuzz-seeds"))
		return write_seeds(argv[2], &skl);
	if (argc == 3 && !strcmp(argv[1], "--linux-fixtures"))
		return write_fixture(argv[2], "wrapped", &skl, 100000, false) ||
		       write_fixture(argv[2], "unwrapped", &skl, 9000, false) ||
		       write_fixture(argv[2], "stopped", &skl, 100000, true);
	CHECK(skl.ip_filter && !bdw.ip_filter, "profiles: Skylake keeps PT MSRs on warm reset, "
					       "Broadwell does not (CPUID.(14H,0):EBX[2])");
	test_crc();
	test_var();
	test_checks(&skl);
	test_ends("skylake topa", &skl, PTCFG_OUT_TOPA, 64 << 10, 300000, true);
	test_ends("skylake topa, 3 regions", &skl, PTCFG_OUT_TOPA, (64 << 10) + (16 << 10) + 4096,
		  300000, true);
	test_ends("skylake single", &skl, PTCFG_OUT_SINGLE, 64 << 10, 300000, true);
	test_ends("skylake topa, not wrapped", &skl, PTCFG_OUT_TOPA, 64 << 10, 40000, true);
	test_ends("broadwell topa", &bdw, PTCFG_OUT_TOPA, 64 << 10, 300000, false);
	test_ends("broadwell topa, 2 regions", &bdw, PTCFG_OUT_TOPA, (64 << 10) + 8192, 200001,
		  false);
	test_ends("broadwell topa, not wrapped", &bdw, PTCFG_OUT_TOPA, 64 << 10, 50000, false);
	test_stopped(&skl);
	test_no_tsc(&bdw);
	return check_exit();
}
