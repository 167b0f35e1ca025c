/* Trace options → validated IA32_RTIT_* settings; see pt_config.h. */
#include "core/pt_config.h"
#include "core/cpu_model.h"
#include "core/mem.h"
#include "core/opt_table.h"
#include "core/pt_rtit.h"

void ptcfg_init(struct ptcfg *cfg)
{
	efipt_memset(cfg, 0, sizeof(*cfg));
	cfg->os = true;
	cfg->user = true;
	cfg->branch = true;
	cfg->mtc_freq = -1;
	cfg->cyc_thresh = -1;
	cfg->psb_freq = -1;
	cfg->size = PTCFG_DEFAULT_SIZE;
}

/* ---- small parsing helpers (no libc) ------------------------------------ */

static int parse_num(const char *s, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10, digits = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, digits++) {
		unsigned d;
		char c = *s;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (x > (UINT64_MAX - d) / base)
			return -1;
		x = x * base + d;
	}
	if (!digits)
		return -1;
	*end = s;
	*v = x;
	return 0;
}

int ptcfg_parse_size(const char *s, uint64_t *v)
{
	const char *e;
	uint64_t x;
	if (!s || parse_num(s, &e, &x))
		return -1;
	unsigned shift = 0;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	default: break;
	}
	if (shift && (*e == 'i' || *e == 'B'))
		e += (*e == 'i' && e[1] == 'B') ? 2 : 1;
	if (*e || (shift && x > (UINT64_MAX >> shift)))
		return -1;
	*v = x << shift;
	return 0;
}

static int parse_addr(const char *s, const char **end, uint64_t *v)
{
	return parse_num(s, end, v);
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while (v >>= 1)
		n++;
	return n;
}

static bool canonical48(uint64_t a)
{
	uint64_t top = a >> 47;
	return top == 0 || top == 0x1ffff;
}

/* ---- the options: one row each ------------------------------------------ */

static const struct opt_row options[PTCFG_OPT_COUNT];

/* An option's name for messages ("--" is in the format string). */
static const char *on(enum ptcfg_opt id)
{
	return options[id].name;
}

const char *ptcfg_opt_name(enum ptcfg_opt id)
{
	return id < PTCFG_OPT_COUNT ? options[id].name : "?";
}

static int set_size(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	if (ptcfg_parse_size(v, &cfg->size) || !cfg->size) {
		sb_printf(err, "--%s needs a byte count such as 65536, 64K, 4M or 1G, got '%s'",
			  o->name, v);
		return -1;
	}
	return 0;
}

static int set_output(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	if (!efipt_strcmp(v, "single"))
		cfg->output = PTCFG_OUT_SINGLE;
	else if (!efipt_strcmp(v, "topa"))
		cfg->output = PTCFG_OUT_TOPA;
	else {
		sb_printf(err, "--%s must be single or topa, got '%s'", o->name, v);
		return -1;
	}
	return 0;
}

static int set_mode(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	if (!efipt_strcmp(v, "stop"))
		cfg->mode = PTCFG_MODE_STOP;
	else if (!efipt_strcmp(v, "wrap"))
		cfg->mode = PTCFG_MODE_WRAP;
	else {
		sb_printf(err, "--%s must be stop or wrap, got '%s'", o->name, v);
		return -1;
	}
	return 0;
}

/* An optional encoding 0..15 into the int at o->field; the flag is set too. */
static int small_encoding(const struct opt_row *o, const char *v, int *out, struct strbuf *err)
{
	const char *e;
	uint64_t x;
	if (!v)
		return 0;
	if (parse_num(v, &e, &x) || *e || x > 15) {
		sb_printf(err, "--%s needs an encoding 0..15, got '%s'", o->name, v);
		return -1;
	}
	*out = (int)x;
	return 0;
}

static int set_mtc(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	cfg->mtc = true;
	return small_encoding(o, v, &cfg->mtc_freq, err);
}

static int set_cyc(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	cfg->cyc = true;
	return small_encoding(o, v, &cfg->cyc_thresh, err);
}

/* An encoding 0..15, or a period in bytes: 2K << encoding. */
static int set_psb(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	uint64_t bytes, x;
	const char *e;
	if (!parse_num(v, &e, &x) && !*e && x <= 15) {
		cfg->psb_freq = (int)x;
		return 0;
	}
	if (!ptcfg_parse_size(v, &bytes) && is_pow2(bytes) && bytes >= 2048 &&
	    bytes <= (64ull << 20)) {
		cfg->psb_freq = (int)(log2u(bytes) - 11);
		return 0;
	}
	sb_printf(err, "--%s needs a PSBFreq encoding 0..15 or a period of 2K..64M bytes (power "
		       "of two), got '%s'", o->name, v);
	return -1;
}

static int set_ptwrite(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	if (v && efipt_strcmp(v, "fup")) {
		sb_printf(err, "--%s takes no value or =fup, got '%s'", o->name, v);
		return -1;
	}
	cfg->ptwrite = true;
	cfg->fuponptw = v != 0;
	return 0;
}

static int set_nobranch(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)o, (void)v, (void)err;
	((struct ptcfg *)ctx)->branch = false;
	return 0;
}

/* --kernel, --user: the first one clears the default (both), each adds its CPLs. */
static int set_cpl(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)v, (void)err;
	struct ptcfg *cfg = ctx;
	if (!cfg->cpl_set)
		cfg->os = cfg->user = false;
	cfg->cpl_set = true;
	return opt_set_true(ctx, o, v, err);
}

static int set_cr3(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ptcfg *cfg = ctx;
	const char *e;
	if (parse_num(v, &e, &cfg->cr3) || *e) {
		sb_printf(err, "--%s needs a CR3 value, got '%s'", o->name, v);
		return -1;
	}
	cfg->cr3_filter = true;
	return 0;
}

static int add_range(struct ptcfg *cfg, unsigned kind, const char *v, const char *opt,
		     struct strbuf *err)
{
	if (cfg->nranges >= PTCFG_MAX_RANGES) {
		sb_printf(err, "--%s: at most %u address ranges (--%s/--%s) in total", opt,
			  PTCFG_MAX_RANGES, on(PTCFG_OPT_FILTER), on(PTCFG_OPT_STOP));
		return -1;
	}
	struct ptcfg_range *r = &cfg->range[cfg->nranges];
	efipt_memset(r, 0, sizeof(*r));
	r->cfg = kind;
	if (kind == RTIT_ADDR_CFG_FILTER && v[0] == 'i' && v[1] == 'm' && v[2] == 'a' &&
	    v[3] == 'g' && v[4] == 'e' && v[5] == '=') {
		if (!v[6]) {
			sb_printf(err, "--%s: image= needs an image name", opt);
			return -1;
		}
		r->image = v + 6;
		cfg->nranges++;
		return 0;
	}
	const char *e;
	if (parse_addr(v, &e, &r->a))
		goto bad;
	r->b = r->a;
	if (*e == '-') {
		if (parse_addr(e + 1, &e, &r->b))
			goto bad;
	} else if (kind == RTIT_ADDR_CFG_FILTER) {
		goto bad;
	}
	if (*e)
		goto bad;
	if (r->b < r->a) {
		sb_printf(err, "--%s: range end 0x%llx is below its start 0x%llx", opt,
			  (unsigned long long)r->b, (unsigned long long)r->a);
		return -1;
	}
	if (!canonical48(r->a) || !canonical48(r->b)) {
		/* 33.2.8.5: a non-canonical ADDRn value makes WRMSR #GP. */
		sb_printf(err, "--%s: 0x%llx-0x%llx is not a canonical (48-bit) address range",
			  opt, (unsigned long long)r->a, (unsigned long long)r->b);
		return -1;
	}
	cfg->nranges++;
	return 0;
bad:
	sb_printf(err, "--%s needs %s, got '%s'", opt,
		  kind == RTIT_ADDR_CFG_FILTER ? "START-END (addresses, inclusive) or image=NAME"
					       : "ADDR or START-END",
		  v);
	return -1;
}

static int set_filter(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	return add_range(ctx, RTIT_ADDR_CFG_FILTER, v, o->name, err);
}

static int set_stop(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	return add_range(ctx, RTIT_ADDR_CFG_STOP, v, o->name, err);
}

#define FIELD(f) offsetof(struct ptcfg, f)
static const struct opt_row options[PTCFG_OPT_COUNT] = {
	[PTCFG_OPT_SIZE] = { "size", OPT_VALUE, set_size, 0, "N",
		       "trace buffer size (e.g. 64K, 4M, 1G; default 4M)" },
	[PTCFG_OPT_OUTPUT] = { "output", OPT_VALUE, set_output, 0, "single|topa",
			 "output scheme (default: ToPA if the CPU has it)" },
	[PTCFG_OPT_MODE] = { "mode", OPT_VALUE, set_mode, 0, "stop|wrap",
		       "stop when full (default for ToPA) or keep the newest\n"
		       "trace in a circular buffer (single-range always wraps)" },
	[PTCFG_OPT_TSC] = { "tsc", OPT_FLAG, opt_set_true, FIELD(tsc), 0, "TSC packets" },
	[PTCFG_OPT_MTC] = { "mtc", OPT_OPTIONAL, set_mtc, 0, "[=F]", "MTC packets, MTCFreq encoding F" },
	[PTCFG_OPT_CYC] = { "cyc", OPT_OPTIONAL, set_cyc, 0, "[=T]",
		      "cycle-accurate mode, CycThresh encoding T" },
	[PTCFG_OPT_PSB] = { "psb", OPT_VALUE, set_psb, 0, "=P",
		      "PSB period: PSBFreq encoding 0..15 or bytes (2K..64M)" },
	[PTCFG_OPT_PTWRITE] = { "ptwrite", OPT_OPTIONAL, set_ptwrite, 0, "[=fup]",
			  "PTWRITE packets (=fup: followed by FUPs)" },
	[PTCFG_OPT_PWR] = { "pwr", OPT_FLAG, opt_set_true, FIELD(pwr), 0, "power event packets" },
	[PTCFG_OPT_EVENT] = { "event", OPT_FLAG, opt_set_true, FIELD(event), 0, "event trace packets" },
	[PTCFG_OPT_NOTNT] = { "notnt", OPT_FLAG, opt_set_true, FIELD(distnt), 0,
			"no TNT packets (DisTNT)" },
	[PTCFG_OPT_NORETCOMP] = { "noretcomp", OPT_FLAG, opt_set_true, FIELD(disretc), 0,
			    "no RET compression (DisRETC)" },
	[PTCFG_OPT_NOBRANCH] = { "nobranch", OPT_FLAG, set_nobranch, 0, 0,
			   "no control-flow packets (BranchEn=0)" },
	[PTCFG_OPT_KERNEL] = { "kernel", OPT_FLAG, set_cpl, FIELD(os), 0,
			 "trace CPL 0; given alone, only CPL 0 (default: every CPL)" },
	[PTCFG_OPT_USER] = { "user", OPT_FLAG, set_cpl, FIELD(user), 0,
		       "trace CPL > 0; given alone, only CPL > 0" },
	[PTCFG_OPT_CR3] = { "cr3", OPT_VALUE, set_cr3, 0, "VALUE", "trace only while CR3 matches VALUE" },
	[PTCFG_OPT_FILTER] = { "filter", OPT_VALUE, set_filter, 0, "A-B",
			 "trace only IPs in [A,B] (also image=NAME)" },
	[PTCFG_OPT_STOP] = { "stop", OPT_VALUE, set_stop, 0, "A[-B]",
		       "stop tracing when a branch lands in [A,B]" },
	[PTCFG_OPT_FORCE] = { "force", OPT_FLAG, opt_set_true, FIELD(force), 0,
			"take over Intel PT even if firmware has it enabled" },
};
#undef FIELD

int ptcfg_option(struct ptcfg *cfg, const char *arg, const char *next, struct strbuf *err)
{
	return opt_parse(options, PTCFG_OPT_COUNT, cfg, arg, next, err);
}

void ptcfg_usage(struct strbuf *out)
{
	opt_usage(options, PTCFG_OPT_COUNT, out);
}

void ptcfg_resolve_range(struct ptcfg *cfg, unsigned i, uint64_t a, uint64_t b)
{
	if (i >= PTCFG_MAX_RANGES)
		return;
	cfg->range[i].a = a;
	cfg->range[i].b = b;
	cfg->range[i].image = 0;
}

/* ---- errata and quirks (which CPU has which: core/cpu_model.c) ---------- */

static bool has_quirk(const struct ptcaps *caps, uint32_t quirk)
{
	return cpumodel_quirks(caps->family, caps->model) & quirk;
}

/* BDM106: a WRMSR to IA32_RTIT_CTL with BranchEn=0 may #GP. */
bool ptcfg_erratum_bdm106(const struct ptcaps *caps)
{
	return has_quirk(caps, CPUMODEL_QUIRK_BDM106);
}

/*
 * TGL052, ADL037, RPL017 "Trace May Contain Incorrect Data When Configured
 * With Single Range Output Larger Than 4KB".
 */
bool ptcfg_erratum_single_4k(const struct ptcaps *caps)
{
	return has_quirk(caps, CPUMODEL_QUIRK_SINGLE_4K);
}

/* ---- validation --------------------------------------------------------- */

/* Pick an encoding for a field: the user's, else preferred, else the lowest. */
static int pick_encoding(int want, uint16_t bitmap, unsigned preferred)
{
	if (want >= 0)
		return want;
	if (bitmap & (1u << preferred))
		return (int)preferred;
	for (unsigned i = 0; i < 16; i++)
		if (bitmap & (1u << i))
			return (int)i;
	return -1;
}

/* "WHAT (--OPT[/--OPT2]) not supported by this CPU: CPUID...[n]=0" */
static int refuse_cap(struct strbuf *msg, const char *what, enum ptcfg_opt opt, int opt2,
		      const char *value, enum ptcap cap)
{
	sb_printf(msg, "%s (--%s%s%s", what, on(opt), value ? " " : "", value ? value : "");
	if (opt2 >= 0)
		sb_printf(msg, "/--%s", on((enum ptcfg_opt)opt2));
	sb_puts(msg, ") not supported by this CPU: ");
	ptcaps_bit_name(cap, msg);
	sb_puts(msg, "=0");
	return -1;
}

/*
 * What each option needs from CPUID leaf 14H (33.3.1) and the IA32_RTIT_CTL
 * bits it sets, checked in this order before anything else. Options whose
 * fields need more (encodings, ranges) are finished in ptcfg_validate().
 */
static const struct need {
	enum ptcfg_opt opt;
	int opt2;		/* a second option needing the same, or -1 */
	enum ptcap cap;
	const char *what;
	uint64_t ctl;
} needs[] = {
	{ PTCFG_OPT_MTC, -1, PTCAP_MTC, "MTC packets", RTIT_CTL_MTCEN },
	{ PTCFG_OPT_CYC, -1, PTCAP_PSB_CYC, "cycle-accurate mode", RTIT_CTL_CYCEN },
	{ PTCFG_OPT_PSB, -1, PTCAP_PSB_CYC, "configurable PSB period", 0 },
	{ PTCFG_OPT_PTWRITE, -1, PTCAP_PTWRITE, "PTWRITE", RTIT_CTL_PTWEN },
	{ PTCFG_OPT_PWR, -1, PTCAP_POWER_EVENT, "power event trace", RTIT_CTL_PWREVTEN },
	{ PTCFG_OPT_EVENT, -1, PTCAP_EVENT_TRACE, "event trace", RTIT_CTL_EVENTEN },
	{ PTCFG_OPT_NOTNT, -1, PTCAP_TNT_DISABLE, "TNT disable", RTIT_CTL_DISTNT },
	{ PTCFG_OPT_CR3, -1, PTCAP_CR3_FILTER, "CR3 filtering", RTIT_CTL_CR3FILTER },
	{ PTCFG_OPT_FILTER, PTCFG_OPT_STOP, PTCAP_IP_FILTER, "IP filtering and TraceStop", 0 },
};

/* Whether cfg asks for what option id enables. */
static bool wanted(const struct ptcfg *cfg, enum ptcfg_opt id)
{
	switch (id) {
	case PTCFG_OPT_MTC: return cfg->mtc;
	case PTCFG_OPT_CYC: return cfg->cyc;
	case PTCFG_OPT_PSB: return cfg->psb_freq >= 0;
	case PTCFG_OPT_PTWRITE: return cfg->ptwrite || cfg->fuponptw;
	case PTCFG_OPT_PWR: return cfg->pwr;
	case PTCFG_OPT_EVENT: return cfg->event;
	case PTCFG_OPT_NOTNT: return cfg->distnt;
	case PTCFG_OPT_CR3: return cfg->cr3_filter;
	case PTCFG_OPT_FILTER: return cfg->nranges != 0;
	default: return false;
	}
}

/* An encoding the CPU enumerates in bitmap, or the list of valid ones. */
static int check_encoding(int e, uint16_t bitmap, const char *what, enum ptcfg_opt opt,
			  const char *form, const char *where, struct strbuf *msg)
{
	if (e >= 0 && (bitmap & (1u << e)))
		return 0;
	sb_printf(msg, "%s encoding %d not supported; valid --%s%s values (%s): ", what, e, on(opt),
		  form, where);
	ptcaps_bitmap_list(bitmap, msg);
	return -1;
}

static int validate_output(const struct ptcfg *cfg, const struct ptcaps *caps,
			   struct ptcfg_settings *out, struct strbuf *msg)
{
	enum ptcfg_output o = cfg->output;
	enum ptcfg_mode m = cfg->mode;
	bool topa = ptcaps_has(caps, PTCAP_TOPA);

	if (o == PTCFG_OUT_AUTO && !caps->topa && !caps->single_range) {
		sb_puts(msg, "this CPU has no trace output scheme: neither ToPA "
			     "(CPUID.(EAX=14H,ECX=0):ECX[0]=0) nor single-range output "
			     "(CPUID.(EAX=14H,ECX=0):ECX[2]=0)");
		return -1;
	}
	if (o == PTCFG_OUT_AUTO)
		o = topa ? PTCFG_OUT_TOPA : PTCFG_OUT_SINGLE;
	if (o == PTCFG_OUT_TOPA && !topa)
		return refuse_cap(msg, "ToPA output", PTCFG_OPT_OUTPUT, -1, "topa", PTCAP_TOPA);
	if (o == PTCFG_OUT_SINGLE && !ptcaps_has(caps, PTCAP_SINGLE_RANGE))
		return refuse_cap(msg, "single-range output", PTCFG_OPT_OUTPUT, -1, "single",
				  PTCAP_SINGLE_RANGE);

	uint64_t size = cfg->size;
	if (caps->maxphyaddr < 64 && size > (1ull << caps->maxphyaddr) / 2) {
		sb_printf(msg, "--%s %llu cannot fit in this CPU's physical address space "
			       "(MAXPHYADDR %u bits)",
			  on(PTCFG_OPT_SIZE), (unsigned long long)size, caps->maxphyaddr);
		return -1;
	}
	if (o == PTCFG_OUT_SINGLE) {
		if (m == PTCFG_MODE_STOP) {
			/* 33.2.7.1: "This output range is circular". */
			sb_printf(msg, "single-range output always wraps (SDM 33.2.7.1): use --%s "
				       "wrap, or --%s topa for --%s stop",
				  on(PTCFG_OPT_MODE), on(PTCFG_OPT_OUTPUT), on(PTCFG_OPT_MODE));
			return -1;
		}
		if (!is_pow2(size) || size < SINGLE_MIN_SIZE || size > SINGLE_MAX_SIZE) {
			sb_printf(msg, "single-range output needs a power-of-two --%s from 128 "
				       "bytes to 4G (SDM 33.2.7.1), got %llu",
				  on(PTCFG_OPT_SIZE), (unsigned long long)size);
			return -1;
		}
		/*
		 * Errata TGL052, ADL037, RPL017: single-range output larger than
		 * 4 KiB may write incorrect trace data. Use ToPA instead where the
		 * CPU has it; otherwise there is no safe way to honour the request.
		 */
		if (size > 4096 && ptcfg_erratum_single_4k(caps)) {
			if (!topa) {
				sb_printf(msg, "single-range output above 4 KiB corrupts trace on this "
					       "CPU (errata TGL052/ADL037/RPL017) and it has no ToPA: "
					       "use --%s 4K", on(PTCFG_OPT_SIZE));
				return -1;
			}
			o = PTCFG_OUT_TOPA;
			out->notes |= PTCFG_NOTE_SINGLE_ERRATUM;
			sb_printf(msg, "note: using ToPA instead of single-range output: single-range "
				       "output above 4 KiB corrupts trace on family 6 model 0x%x "
				       "(errata TGL052/ADL037/RPL017)\n", caps->model);
			if (m == PTCFG_MODE_AUTO)
				m = PTCFG_MODE_WRAP; /* what single-range would have done */
		}
	}
	if (o == PTCFG_OUT_TOPA) {
		uint64_t r = (size + TOPA_MIN_REGION - 1) & ~(TOPA_MIN_REGION - 1);
		if (!ptcaps_has(caps, PTCAP_TOPA_MULTI)) {
			/*
			 * 33.2.7.2 "Single Output Region ToPA Implementation": one
			 * output entry, so one region of 4K..128M, a power of two.
			 */
			uint64_t p = TOPA_MIN_REGION;
			while (p < r && p < TOPA_MAX_REGION)
				p <<= 1;
			if (r > TOPA_MAX_REGION) {
				sb_printf(msg, "this CPU's ToPA holds one output region of at most "
					       "128M (");
				ptcaps_bit_name(PTCAP_TOPA_MULTI, msg);
				sb_printf(msg, "=0), --%s %llu is too large", on(PTCFG_OPT_SIZE),
					  (unsigned long long)size);
				return -1;
			}
			r = p;
		}
		if (r != size) {
			out->notes |= PTCFG_NOTE_SIZE_ROUNDED;
			sb_printf(msg, "note: buffer size rounded up from %llu to %llu bytes (ToPA "
				       "regions are 4K..128M powers of two%s)\n",
				  (unsigned long long)size, (unsigned long long)r,
				  caps->topa_multi ? "" : ", one region on this CPU");
		}
		size = r;
		if (m == PTCFG_MODE_AUTO)
			m = PTCFG_MODE_STOP;
	} else if (m == PTCFG_MODE_AUTO) {
		m = PTCFG_MODE_WRAP;
	}
	out->output = o;
	out->mode = m;
	out->size = size;
	return 0;
}

int ptcfg_validate(const struct ptcfg *cfg, const struct ptcaps *caps,
		   struct ptcfg_settings *out, struct strbuf *msg)
{
	efipt_memset(out, 0, sizeof(*out));
	if (caps->absent != PTCAPS_PRESENT) {
		ptcaps_absent_line(caps, msg);
		return -1;
	}
	uint64_t ctl = 0;
	out->maxphyaddr = caps->maxphyaddr;
	out->topa_multi = caps->topa_multi;
	out->force = cfg->force;

	if (!cfg->os && !cfg->user) {
		sb_printf(msg, "neither CPL 0 (--%s) nor CPL > 0 (--%s) is traced", on(PTCFG_OPT_KERNEL),
			  on(PTCFG_OPT_USER));
		return -1;
	}
	if (cfg->os)
		ctl |= RTIT_CTL_OS;
	if (cfg->user)
		ctl |= RTIT_CTL_USER;

	if (cfg->branch) {
		ctl |= RTIT_CTL_BRANCHEN;
	} else if (ptcfg_erratum_bdm106(caps)) {
		/* not setting BranchEn can #GP on Broadwell: erratum BDM106 */
		sb_printf(msg, "--%s cannot be used on Broadwell: IA32_RTIT_CTL.BranchEn=0 may #GP "
			       "(erratum BDM106)", on(PTCFG_OPT_NOBRANCH));
		return -1;
	}
	if (ptcfg_erratum_bdm106(caps))
		out->notes |= PTCFG_NOTE_BRANCH_FORCED;

	if (cfg->tsc)
		ctl |= RTIT_CTL_TSCEN; /* TSCEn has no CPUID bit (33.2.8.2) */
	if (cfg->disretc)
		ctl |= RTIT_CTL_DISRETC;

	for (unsigned i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const struct need *n = &needs[i];
		if (!wanted(cfg, n->opt))
			continue;
		if (!ptcaps_has(caps, n->cap))
			return refuse_cap(msg, n->what, n->opt, n->opt2, 0, n->cap);
		ctl |= n->ctl;
	}

	if (cfg->mtc) {
		int f = pick_encoding(cfg->mtc_freq, caps->mtc_periods, 3);
		if (check_encoding(f, caps->mtc_periods, "MTC period", PTCFG_OPT_MTC, "=F",
				   "CPUID.(EAX=14H,ECX=1):EAX[31:16]", msg))
			return -1;
		ctl |= (uint64_t)f << RTIT_CTL_MTCFREQ_SHIFT;
	}
	if (cfg->cyc) {
		int t = pick_encoding(cfg->cyc_thresh, caps->cyc_thresholds, 0);
		if (check_encoding(t, caps->cyc_thresholds, "cycle threshold", PTCFG_OPT_CYC, "=T",
				   "CPUID.(EAX=14H,ECX=1):EBX[15:0]", msg))
			return -1;
		ctl |= (uint64_t)t << RTIT_CTL_CYCTHRESH_SHIFT;
	}
	if (cfg->psb_freq >= 0) {
		if (check_encoding(cfg->psb_freq, caps->psb_periods, "PSB period", PTCFG_OPT_PSB, "=P",
				   "CPUID.(EAX=14H,ECX=1):EBX[31:16], period 2K<<P bytes", msg))
			return -1;
		ctl |= (uint64_t)cfg->psb_freq << RTIT_CTL_PSBFREQ_SHIFT;
	}
	if (cfg->fuponptw)
		ctl |= RTIT_CTL_FUPONPTW;
	if (cfg->cr3_filter) {
		if (cfg->cr3 & RTIT_CR3_RESERVED) {
			/* 33.2.8.6: IA32_RTIT_CR3_MATCH[4:0] are reserved (#GP). */
			sb_printf(msg, "--%s 0x%llx: bits 4:0 must be 0 (IA32_RTIT_CR3_MATCH[4:0] "
				       "are reserved)",
				  on(PTCFG_OPT_CR3), (unsigned long long)cfg->cr3);
			return -1;
		}
		out->cr3_filter = true;
		out->cr3_match = cfg->cr3;
	}
	if (cfg->nranges) {
		if (cfg->nranges > caps->addr_ranges) {
			sb_printf(msg, "%u address ranges requested (--%s/--%s) but this CPU has "
				       "%u (CPUID.(EAX=14H,ECX=1):EAX[2:0])",
				  cfg->nranges, on(PTCFG_OPT_FILTER), on(PTCFG_OPT_STOP), caps->addr_ranges);
			return -1;
		}
		for (unsigned i = 0; i < cfg->nranges; i++) {
			const struct ptcfg_range *r = &cfg->range[i];
			if (r->image) {
				sb_printf(msg, "--%s image=%s was not resolved to an address range",
					  on(PTCFG_OPT_FILTER), r->image);
				return -1;
			}
			if (r->b < r->a || !canonical48(r->a) || !canonical48(r->b) ||
			    (r->cfg != RTIT_ADDR_CFG_FILTER && r->cfg != RTIT_ADDR_CFG_STOP)) {
				sb_printf(msg, "address range %u (0x%llx-0x%llx) is not valid", i,
					  (unsigned long long)r->a, (unsigned long long)r->b);
				return -1;
			}
			ctl |= (uint64_t)r->cfg << RTIT_CTL_ADDR_CFG_SHIFT(i);
			out->addr_a[i] = r->a;
			out->addr_b[i] = r->b;
		}
		out->nranges = cfg->nranges;
	}

	if (validate_output(cfg, caps, out, msg))
		return -1;
	if (out->output == PTCFG_OUT_TOPA)
		ctl |= RTIT_CTL_TOPA;

	if (has_quirk(caps, CPUMODEL_QUIRK_CORE_SCOPED)) {
		out->notes |= PTCFG_NOTE_CORE_SCOPED;
		sb_puts(msg, "note: Goldmont: the RTIT MSRs are per core; program, stop and read "
			     "them on the one logical CPU that traces\n");
	}
	if (has_quirk(caps, CPUMODEL_QUIRK_LBR_EXCLUSIVE))
		out->notes |= PTCFG_NOTE_LBR_EXCLUSIVE;
	out->ctl = ctl;
	return 0;
}

void ptcfg_ranges_json(uint64_t ctl, unsigned n, const uint64_t *a, const uint64_t *b,
		       struct strbuf *sb)
{
	sb_putc(sb, '[');
	for (unsigned i = 0; i < n; i++) {
		unsigned cfg = (unsigned)((ctl & RTIT_CTL_ADDR_CFG_MASK(i)) >>
					  RTIT_CTL_ADDR_CFG_SHIFT(i));
		sb_printf(sb, "%s{\"cfg\":\"%s\",\"a\":\"0x%llx\",\"b\":\"0x%llx\"}", i ? "," : "",
			  cfg == RTIT_ADDR_CFG_STOP ? "stop" : "filter", (unsigned long long)a[i],
			  (unsigned long long)b[i]);
	}
	sb_putc(sb, ']');
}
