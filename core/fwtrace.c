/* The firmware boot trace record; see fwtrace.h and docs/edk2.md. */
#include "core/fwtrace.h"
#include "core/cmdline.h"
#include "core/mem.h"
#include "core/opt_table.h"
#include "core/pt_rtit.h"

/* The layout is a format: no padding the compiler could place differently. */
_Static_assert(sizeof(struct fwtrace_region) == 24, "fwtrace_region layout");
_Static_assert(sizeof(struct fwtrace_table) == 16, "fwtrace_table layout");
_Static_assert(sizeof(struct fwtrace_leaf) == 24, "fwtrace_leaf layout");
_Static_assert(sizeof(struct fwtrace_image) == 368, "fwtrace_image layout");
_Static_assert(sizeof(struct fwtrace_rec) ==
		       48 + 384 + FWTRACE_OPTIONS_MAX + 3 * 8 + 16 * PTCFG_MAX_RANGES + 8 * 4 +
			       4 * 4 + 2 * 8 + 24 * FWTRACE_MAX_REGIONS + 16 * FWTRACE_MAX_TABLES +
			       5 * 8 + 2 * 4 + 5 * 8 + 2 * 4 + 4 * 4 + 24 * FWTRACE_MAX_CPUID,
	       "fwtrace_rec layout");
_Static_assert(FWTRACE_MAX_CPUID == CPUID_SET_MAX, "one CPUID set fits a record");

void fwtrace_init(struct fwtrace_rec *r, uint32_t max_images)
{
	efipt_memset(r, 0, sizeof(*r));
	efipt_memcpy(r->magic, FWTRACE_MAGIC, 8);
	r->version = FWTRACE_VERSION;
	r->size = sizeof(*r);
	r->status = FWTRACE_NO_HOB;
	r->stop_at = FWTRACE_STOP_READY_TO_BOOT;
	r->max_images = max_images;
}

/* CRC-32 as IEEE 802.3 and UEFI's CalculateCrc32 (reflected 0xEDB88320),
 * continued from c (0 to start). */
static uint32_t crc_update(uint32_t c, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	c = ~c;
	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

uint32_t fwtrace_crc32(const void *buf, size_t len)
{
	return crc_update(0, buf, len);
}

void fwtrace_init_cpu(struct fwtrace_rec *cpu, const struct fwtrace_rec *main,
		      uint32_t number, uint32_t apic_id)
{
	fwtrace_init(cpu, 0);
	cpu->source = main->source;
	cpu->stop_at = main->stop_at;
	cpu->flags = main->flags;
	efipt_memcpy(cpu->options, main->options, sizeof(cpu->options));
	cpu->cpu_number = number;
	cpu->apic_id = apic_id;
}

void fwtrace_seal(struct fwtrace_rec *r)
{
	r->size = (uint32_t)fwtrace_size_for(r->nimages, r->ncpus);
	r->crc32 = 0;
	r->crc32 = fwtrace_crc32(r, r->size);
}

void fwtrace_put_str(char *field, size_t cap, const char *s)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < cap; i++)
		field[i] = s[i];
	for (; i < cap; i++)
		field[i] = 0;
}

static int terminated(const char *s, size_t cap)
{
	for (size_t i = 0; i < cap; i++)
		if (!s[i])
			return 1;
	return 0;
}

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* The buffer layout: what ptout_build makes, nothing a CPU would fault on. */
static int check_layout(const struct fwtrace_rec *r, struct strbuf *why)
{
	if (r->output != PTCFG_OUT_SINGLE && r->output != PTCFG_OUT_TOPA) {
		sb_printf(why, "output scheme %u is neither single-range nor ToPA", r->output);
		return -1;
	}
	if (r->mode != PTCFG_MODE_STOP && r->mode != PTCFG_MODE_WRAP) {
		sb_printf(why, "mode %u is neither stop nor wrap", r->mode);
		return -1;
	}
	if (r->maxphyaddr < 32 || r->maxphyaddr > 52) {
		sb_printf(why, "MAXPHYADDR %u is not 32..52", r->maxphyaddr);
		return -1;
	}
	uint64_t limit = 1ull << r->maxphyaddr;
	if (!r->nreg || r->nreg > FWTRACE_MAX_REGIONS || r->ntab > FWTRACE_MAX_TABLES) {
		sb_printf(why, "%u output regions and %u ToPA tables (1..%u and 0..%u)", r->nreg,
			  r->ntab, FWTRACE_MAX_REGIONS, FWTRACE_MAX_TABLES);
		return -1;
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < r->nreg; i++) {
		const struct fwtrace_region *g = &r->reg[i];
		uint64_t span = g->size < 4096 ? 4096 : g->size;
		bool ok = r->output == PTCFG_OUT_SINGLE
				  ? is_pow2(g->size) && g->size >= 128 && g->size <= (4ull << 30)
				  : is_pow2(g->size) && g->size >= TOPA_MIN_REGION &&
					    g->size <= TOPA_MAX_REGION;
		if (!ok || (g->base & (span - 1)) || g->base >= limit || span > limit - g->base) {
			sb_printf(why, "output region %u (0x%llx, %llu bytes) is not a power-of-two "
				       "region aligned to its size below MAXPHYADDR",
				  i, (unsigned long long)g->base, (unsigned long long)g->size);
			return -1;
		}
		for (uint32_t k = 0; k < i; k++) {
			const struct fwtrace_region *h = &r->reg[k];
			uint64_t hs = h->size < 4096 ? 4096 : h->size;
			if (g->base < h->base + hs && h->base < g->base + span) {
				sb_printf(why, "output regions %u and %u overlap", k, i);
				return -1;
			}
		}
		total += g->size;
	}
	if (total != r->buf_size) {
		sb_printf(why, "the regions hold %llu bytes, the buffer is %llu",
			  (unsigned long long)total, (unsigned long long)r->buf_size);
		return -1;
	}
	if (r->output == PTCFG_OUT_SINGLE) {
		if (r->nreg != 1 || r->ntab || r->msr_base != r->reg[0].base) {
			sb_puts(why, "single-range output with other than one region at OUTPUT_BASE");
			return -1;
		}
		return 0;
	}
	if (!r->ntab || r->per_table < 2 || r->per_table > 512) {
		sb_printf(why, "ToPA output with %u tables of %u entries", r->ntab, r->per_table);
		return -1;
	}
	uint32_t next = 0;
	for (uint32_t t = 0; t < r->ntab; t++) {
		const struct fwtrace_table *tb = &r->tab[t];
		if ((tb->phys & 4095) || tb->phys >= limit || limit - tb->phys < 4096 ||
		    tb->first != next || !tb->nout || tb->nout >= r->per_table ||
		    tb->nout > r->nreg - next) {
			sb_printf(why, "ToPA table %u (0x%llx, regions %u+%u) does not follow the "
				       "regions before it", t, (unsigned long long)tb->phys, tb->first,
				  tb->nout);
			return -1;
		}
		for (uint32_t i = 0; i < tb->nout; i++) {
			const struct fwtrace_region *g = &r->reg[next + i];
			if (g->table != t || g->entry != i) {
				sb_printf(why, "output region %u is not entry %u of table %u", next + i,
					  i, t);
				return -1;
			}
		}
		for (uint32_t i = 0; i < r->nreg; i++)
			if (tb->phys < r->reg[i].base + r->reg[i].size && r->reg[i].base < tb->phys + 4096) {
				sb_printf(why, "ToPA table %u lies in output region %u", t, i);
				return -1;
			}
		next += tb->nout;
	}
	if (next != r->nreg || r->msr_base != r->tab[0].phys) {
		sb_puts(why, "the ToPA tables do not cover the regions, or OUTPUT_BASE is not "
			     "the first table");
		return -1;
	}
	return 0;
}

/* What every record holds in range: enums, texts, counts, the layout. */
static int check_fields(const struct fwtrace_rec *r, struct strbuf *why)
{
	if (!r->status || r->status >= FWTRACE_STATUS_END || r->source >= FWTRACE_SRC_END ||
	    !r->stop_at || r->stop_at > FWTRACE_STOP_NEVER || r->stopped_at >= FWTRACE_STOP_END ||
	    (r->flags & ~FWTRACE_F_ALL)) {
		sb_printf(why, "status %u, source %u, stop %u/%u or flags 0x%x out of range",
			  r->status, r->source, r->stop_at, r->stopped_at, r->flags);
		return -1;
	}
	if (!terminated(r->reason, sizeof(r->reason)) || !terminated(r->options, sizeof(r->options))) {
		sb_puts(why, "a text field is not terminated");
		return -1;
	}
	if (r->ncpuid > FWTRACE_MAX_CPUID || r->nranges > PTCFG_MAX_RANGES ||
	    r->fault >= FWTRACE_FAULT_END) {
		sb_printf(why, "%u CPUID leaves, %u address ranges or fault %u: out of range",
			  r->ncpuid, r->nranges, r->fault);
		return -1;
	}
	/* a buffer exists only once tracing started */
	if (r->status == FWTRACE_RUNNING || r->status == FWTRACE_STOPPED)
		return check_layout(r, why);
	return 0;
}

/* An application processor's record: a record of its own, no images, no CPUs. */
static int check_cpu(const struct fwtrace_rec *main, uint32_t k, struct strbuf *why)
{
	const struct fwtrace_rec *c = fwtrace_cpus((struct fwtrace_rec *)main);
	const struct fwtrace_rec *r = &c[k];
	sb_printf(why, "application processor record %u: ", k);
	if (efipt_memcmp(r->magic, FWTRACE_MAGIC, 8) || r->version != FWTRACE_VERSION ||
	    r->size != sizeof(*r) || r->nimages || r->max_images || r->ncpus) {
		sb_puts(why, "not a record of one CPU (signature, version, size, images or CPUs)");
		return -1;
	}
	for (uint32_t j = 0; j < k; j++)
		if (c[j].cpu_number == r->cpu_number || c[j].apic_id == r->apic_id) {
			sb_printf(why, "CPU %u (APIC ID 0x%x) twice", r->cpu_number, r->apic_id);
			return -1;
		}
	if (r->cpu_number == main->cpu_number || r->apic_id == main->apic_id) {
		sb_printf(why, "CPU %u (APIC ID 0x%x) is the boot processor's", r->cpu_number,
			  r->apic_id);
		return -1;
	}
	if (r->stopped_at == FWTRACE_STOP_BAD_HOB || r->status == FWTRACE_NO_HOB ||
	    r->status == FWTRACE_BAD_HOB) {
		sb_puts(why, "a status only the boot processor's record has");
		return -1;
	}
	return check_fields(r, why);
}

int fwtrace_check(const void *buf, size_t len, struct strbuf *why)
{
	const struct fwtrace_rec *r = buf;
	if (!buf || len < sizeof(*r)) {
		sb_printf(why, "%llu bytes: shorter than a record (%llu)", (unsigned long long)len,
			  (unsigned long long)sizeof(*r));
		return -1;
	}
	if (efipt_memcmp(r->magic, FWTRACE_MAGIC, 8)) {
		sb_puts(why, "no \"" FWTRACE_MAGIC "\" signature");
		return -1;
	}
	if (r->version != FWTRACE_VERSION) {
		sb_printf(why, "record version %u (this efipt reads %u)", r->version,
			  FWTRACE_VERSION);
		return -1;
	}
	if (r->nimages > r->max_images || r->max_images > FWTRACE_MAX_IMAGES ||
	    r->ncpus > FWTRACE_MAX_CPUS || r->size != fwtrace_size_for(r->nimages, r->ncpus) ||
	    r->size > len) {
		sb_printf(why, "size %u for %u of %u images and %u CPUs (%llu bytes at hand)",
			  r->size, r->nimages, r->max_images, r->ncpus, (unsigned long long)len);
		return -1;
	}
	/* the CRC of the record with its crc32 field taken as 0 */
	static const uint8_t zero[4];
	size_t at = offsetof(struct fwtrace_rec, crc32);
	uint32_t c = crc_update(0, buf, at);
	c = crc_update(c, zero, 4);
	c = crc_update(c, (const uint8_t *)buf + at + 4, r->size - at - 4);
	if (c != r->crc32) {
		sb_printf(why, "CRC-32 0x%08x, the record says 0x%08x: damaged or forged", c,
			  r->crc32);
		return -1;
	}
	const struct fwtrace_image *im = (const struct fwtrace_image *)(r + 1);
	for (uint32_t i = 0; i < r->nimages; i++)
		if (!terminated(im[i].name, sizeof(im[i].name)) ||
		    !terminated(im[i].pdb, sizeof(im[i].pdb)) || im[i].base + im[i].size < im[i].base) {
			sb_printf(why, "image %u: unterminated name or a range past 2^64", i);
			return -1;
		}
	if (check_fields(r, why))
		return -1;
	for (uint32_t k = 0; k < r->ncpus; k++) {
		size_t mark = why->len;
		if (check_cpu(r, k, why))
			return -1;
		/* passed: no prefix left behind */
		why->len = mark;
		if (why->cap)
			why->buf[mark] = 0;
	}
	return 0;
}

void fwtrace_put_settings(struct fwtrace_rec *r, const struct ptcfg_settings *s)
{
	r->rtit_ctl = s->ctl;
	r->buf_size = s->size;
	r->cr3_match = s->cr3_match;
	for (unsigned i = 0; i < PTCFG_MAX_RANGES; i++) {
		r->addr_a[i] = s->addr_a[i];
		r->addr_b[i] = s->addr_b[i];
	}
	r->output = s->output;
	r->mode = s->mode;
	r->topa_multi = s->topa_multi;
	r->maxphyaddr = s->maxphyaddr;
	r->cr3_filter = s->cr3_filter;
	r->nranges = s->nranges;
	r->notes = s->notes;
	r->force = s->force;
}

void fwtrace_get_settings(const struct fwtrace_rec *r, struct ptcfg_settings *s)
{
	efipt_memset(s, 0, sizeof(*s));
	s->ctl = r->rtit_ctl;
	s->size = r->buf_size;
	s->cr3_match = r->cr3_match;
	for (unsigned i = 0; i < PTCFG_MAX_RANGES; i++) {
		s->addr_a[i] = r->addr_a[i];
		s->addr_b[i] = r->addr_b[i];
	}
	s->output = (enum ptcfg_output)r->output;
	s->mode = (enum ptcfg_mode)r->mode;
	s->topa_multi = r->topa_multi != 0;
	s->maxphyaddr = r->maxphyaddr;
	s->cr3_filter = r->cr3_filter != 0;
	s->nranges = r->nranges <= PTCFG_MAX_RANGES ? r->nranges : PTCFG_MAX_RANGES;
	s->notes = r->notes;
	s->force = r->force != 0;
}

void fwtrace_put_cpuid(struct fwtrace_rec *r, const struct cpuid_set *s)
{
	r->ncpuid = s->n <= FWTRACE_MAX_CPUID ? s->n : FWTRACE_MAX_CPUID;
	for (uint32_t i = 0; i < r->ncpuid; i++) {
		r->cpuid[i].leaf = s->e[i].leaf;
		r->cpuid[i].subleaf = s->e[i].subleaf;
		for (unsigned k = 0; k < 4; k++)
			r->cpuid[i].r[k] = s->e[i].r[k];
	}
}

void fwtrace_get_cpuid(const struct fwtrace_rec *r, struct cpuid_set *s)
{
	cpuid_set_init(s);
	uint32_t n = r->ncpuid <= FWTRACE_MAX_CPUID ? r->ncpuid : FWTRACE_MAX_CPUID;
	for (uint32_t i = 0; i < n; i++)
		cpuid_set_put(s, r->cpuid[i].leaf, r->cpuid[i].subleaf, r->cpuid[i].r);
}

const char *fwtrace_status_name(uint32_t status)
{
	switch ((enum fwtrace_status)status) {
	case FWTRACE_NO_HOB: return "no-hob";
	case FWTRACE_OFF: return "off";
	case FWTRACE_BAD_OPTIONS: return "bad-options";
	case FWTRACE_UNSUPPORTED: return "unsupported";
	case FWTRACE_REFUSED: return "refused";
	case FWTRACE_NO_MEMORY: return "no-memory";
	case FWTRACE_FAILED: return "failed";
	case FWTRACE_BAD_HOB: return "bad-hob";
	case FWTRACE_RUNNING: return "running";
	case FWTRACE_STOPPED: return "stopped";
	case FWTRACE_STATUS_END: break;
	}
	return "?";
}

static const char *const stop_names[FWTRACE_STOP_END] = {
	[FWTRACE_STOP_NONE] = "",
	[FWTRACE_STOP_READY_TO_BOOT] = "ready-to-boot",
	[FWTRACE_STOP_END_OF_DXE] = "end-of-dxe",
	[FWTRACE_STOP_EXIT_BOOT_SERVICES] = "exit-boot-services",
	[FWTRACE_STOP_NEVER] = "never",
	[FWTRACE_STOP_COLLECT] = "collect",
	[FWTRACE_STOP_BAD_HOB] = "bad-hob",
};

const char *fwtrace_stop_name(uint32_t stop)
{
	return stop < FWTRACE_STOP_END ? stop_names[stop] : "?";
}

/* ---- the package's options ---------------------------------------------- */

static int set_stop_at(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct fwtrace_opts *f = ctx;
	for (uint32_t i = FWTRACE_STOP_READY_TO_BOOT; i <= FWTRACE_STOP_NEVER; i++)
		if (!efipt_strcmp(v, stop_names[i])) {
			f->stop_at = i;
			return 0;
		}
	sb_printf(err, "--%s is ready-to-boot, end-of-dxe, exit-boot-services or never, not '%s'",
		  o->name, v);
	return -1;
}

static int set_source(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct fwtrace_opts *f = ctx;
	if (!efipt_strcmp(v, "hw"))
		f->source = FWTRACE_SRC_HW;
	else if (!efipt_strcmp(v, "synthetic"))
		f->source = FWTRACE_SRC_SYNTHETIC;
	else {
		sb_printf(err, "--%s is hw or synthetic, not '%s'", o->name, v);
		return -1;
	}
	return 0;
}

static int set_flag(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)v, (void)err;
	*(int *)((char *)ctx + o->field) = 1;
	return 0;
}

static int set_count(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	uint64_t n;
	if (ptcfg_parse_size(v, &n) || !n) {
		sb_printf(err, "--%s needs a number above 0, got '%s'", o->name, v);
		return -1;
	}
	*(uint64_t *)((char *)ctx + o->field) = n;
	return 0;
}

static const char *const fault_names[FWTRACE_FAULT_END] = {
	[FWTRACE_FAULT_HOB_OUTSIDE_RAM] = "hob-outside-ram",
	[FWTRACE_FAULT_FORGED_TABLE] = "forged-table",
	[FWTRACE_FAULT_STALE_TABLE] = "stale-table",
};

static int set_fault(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct fwtrace_opts *f = ctx;
	for (uint32_t i = 1; i < FWTRACE_FAULT_END; i++)
		if (!efipt_strcmp(v, fault_names[i])) {
			f->fault = i;
			return 0;
		}
	sb_printf(err, "--%s is hob-outside-ram, forged-table or stale-table, not '%s'", o->name,
		  v);
	return -1;
}

static int set_cpus(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct fwtrace_opts *f = ctx;
	(void)o;
	if (cpu_list_parse(&f->cpus, v, err))
		return -1;
	f->cpus_given = 1;
	return 0;
}

enum { P_STOP_AT, P_SOURCE, P_OFF, P_INTO_OS, P_CPUS, P_SEED, P_INSNS, P_FAULT, NPKG };
#define FIELD(f) offsetof(struct fwtrace_opts, f)
static const struct opt_row pkg_options[NPKG] = {
	[P_STOP_AT] = { "stop-at", OPT_VALUE, set_stop_at, 0,
			"ready-to-boot|end-of-dxe|exit-boot-services|never",
			"where EfiptDxe stops the trace (default ready-to-boot;\n"
			"never: efipt.efi collect stops it)" },
	[P_SOURCE] = { "source", OPT_VALUE, set_source, 0, "hw|synthetic",
		       "Intel PT (default), or a SYNTHETIC trace written by\n"
		       "the firmware itself (test builds with PcdEfiptSynthetic)" },
	[P_OFF] = { "off", OPT_FLAG, set_flag, FIELD(off), 0, "do not trace this boot" },
	[P_INTO_OS] = { "into-os", OPT_FLAG, set_flag, FIELD(into_os), 0,
			"leave PT running at ExitBootServices (the OS must know)" },
	[P_CPUS] = { "cpus", OPT_VALUE, set_cpus, 0, "all|LIST",
		     "the application processors too (MP services' numbers,\n"
		     "'1,3-5'): EfiptDxe starts them once MP services is there;\n"
		     "the boot processor is traced from PEI on whatever the list" },
	[P_SEED] = { "seed", OPT_VALUE, set_count, FIELD(seed), "N",
		     "synthetic: branch choices (default 1)" },
	[P_INSNS] = { "insns", OPT_VALUE, set_count, FIELD(insns), "N",
		      "synthetic: instructions to walk (default 200000)" },
	[P_FAULT] = { "fault", OPT_VALUE, set_fault, 0, "NAME",
		      "synthetic: damage the record on purpose (tests):\n"
		      "hob-outside-ram, forged-table, stale-table" },
};
#undef FIELD

void fwtrace_usage(struct strbuf *out)
{
	opt_usage(pkg_options, NPKG, out);
}

int fwtrace_parse_options(struct fwtrace_opts *o, const char *text, struct strbuf *err)
{
	efipt_memset(o, 0, sizeof(*o));
	ptcfg_init(&o->cfg);
	o->stop_at = FWTRACE_STOP_READY_TO_BOOT;
	o->seed = 1;
	o->insns = 200000;
	size_t n = efipt_strlen(text);
	if (n >= sizeof(o->words)) {
		sb_printf(err, "the options are %llu bytes (at most %u)", (unsigned long long)n,
			  (unsigned)sizeof(o->words) - 1);
		return -1;
	}
	efipt_memcpy(o->words, text, n + 1);
	int argc = cmdline_split(o->words, o->argv, 63);
	if (argc < 0) {
		sb_puts(err, argc == CMDLINE_TOO_MANY ? "more than 63 words" : "an unclosed quote");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = o->argv[i], *next = i + 1 < argc ? o->argv[i + 1] : 0;
		int used = opt_parse(pkg_options, NPKG, o, a, next, err);
		if (!used)
			used = ptcfg_option(&o->cfg, a, next, err);
		if (used < 0)
			return -1;
		if (!used) {
			sb_printf(err, "'%s' is not an option of the firmware trace", a);
			return -1;
		}
		i += used - 1;
	}
	if (o->fault && o->source != FWTRACE_SRC_SYNTHETIC) {
		sb_printf(err, "--%s needs --%s synthetic (a test build's own damage)",
			  pkg_options[P_FAULT].name, pkg_options[P_SOURCE].name);
		return -1;
	}
	if (o->source == FWTRACE_SRC_SYNTHETIC && o->stop_at != FWTRACE_STOP_READY_TO_BOOT &&
	    o->stop_at != FWTRACE_STOP_END_OF_DXE) {
		sb_printf(err, "--%s synthetic writes the trace at ready-to-boot or end-of-dxe, "
			       "not at --%s %s", pkg_options[P_SOURCE].name,
			  pkg_options[P_STOP_AT].name, stop_names[o->stop_at]);
		return -1;
	}
	if (o->cpus_given && o->source == FWTRACE_SRC_SYNTHETIC) {
		sb_printf(err, "--%s: the synthetic source writes one trace, the boot processor's",
			  pkg_options[P_CPUS].name);
		return -1;
	}
	if (o->cfg.force) {
		sb_printf(err, "--%s: nothing traces before the firmware's PEI phase",
			  ptcfg_opt_name(PTCFG_OPT_FORCE));
		return -1;
	}
	for (unsigned i = 0; i < o->cfg.nranges; i++)
		if (o->cfg.range[i].image) {
			sb_printf(err, "--%s image=%s: no image is loaded when PEI starts the trace; "
				       "give its addresses (A-B)",
				  ptcfg_opt_name(PTCFG_OPT_FILTER), o->cfg.range[i].image);
			return -1;
		}
	return 0;
}

int fwtrace_options_text(const uint8_t *bytes, size_t n, char *out, size_t cap,
			 struct strbuf *why)
{
	while (n && !bytes[n - 1])
		n--; /* a C string's terminator (or several) */
	if (n >= cap) {
		sb_printf(why, "%llu bytes of options (at most %llu)", (unsigned long long)n,
			  (unsigned long long)(cap - 1));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((bytes[i] < 0x20 && bytes[i] != '\t') || bytes[i] > 0x7e) {
			sb_printf(why, "byte 0x%02x at offset %llu is not ASCII text", bytes[i],
				  (unsigned long long)i);
			return -1;
		}
	efipt_memcpy(out, bytes, n);
	out[n] = 0;
	return 0;
}

static const char *tf(uint32_t v) { return v ? "true" : "false"; }

void fwtrace_json(const struct fwtrace_rec *r, struct strbuf *sb)
{
	sb_printf(sb, "{\"status\": \"%s\", \"reason\": ", fwtrace_status_name(r->status));
	sb_json_str(sb, r->reason);
	sb_puts(sb, ", \"options\": ");
	sb_json_str(sb, r->options);
	sb_printf(sb, ", \"source\": \"%s\", \"stop_at\": \"%s\", \"stopped_at\": \"%s\", "
		      "\"markers\": %s, \"from_variable\": %s, \"into_os\": %s, \"emulated\": %s, "
		      "\"images\": %u",
		  r->source == FWTRACE_SRC_SYNTHETIC ? "synthetic" : "hw",
		  fwtrace_stop_name(r->stop_at),
		  fwtrace_stop_name(r->stopped_at),
		  tf(r->flags & FWTRACE_F_MARKERS), tf(r->flags & FWTRACE_F_VARIABLE),
		  tf(r->flags & FWTRACE_F_INTO_OS), tf(r->flags & FWTRACE_F_EMULATED), r->nimages);
	sb_printf(sb, ", \"cpu\": %u, \"apic_id\": \"0x%x\"", r->cpu_number, r->apic_id);
	if (r->ncpus) {
		const struct fwtrace_rec *c = fwtrace_cpus((struct fwtrace_rec *)r);
		sb_puts(sb, ", \"cpus\": [");
		for (uint32_t k = 0; k < r->ncpus; k++) {
			sb_printf(sb, "%s{\"cpu\": %u, \"apic_id\": \"0x%x\", \"status\": \"%s\", "
				      "\"reason\": ", k ? ", " : "", c[k].cpu_number, c[k].apic_id,
				  fwtrace_status_name(c[k].status));
			sb_json_str(sb, c[k].reason);
			sb_putc(sb, '}');
		}
		sb_putc(sb, ']');
	}
	if (r->source == FWTRACE_SRC_SYNTHETIC)
		sb_printf(sb, ", \"synthetic\": {\"seed\": %llu, \"insns\": %llu, \"start\": "
			      "\"0x%llx\", \"ip_hash\": \"0x%llx\", \"bytes\": %llu}",
			  (unsigned long long)r->synth_seed, (unsigned long long)r->synth_insns,
			  (unsigned long long)r->synth_start, (unsigned long long)r->synth_ip_hash,
			  (unsigned long long)r->synth_bytes);
	sb_putc(sb, '}');
}
