/* Trace options → validated IA32_RTIT_* settings; see pt_config.h. */
#include "core/pt_config.h"
#include "core/mem.h"
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

/* "--name" or "--name=value": match name, return the value part (or NULL). */
static bool opt_is(const char *arg, const char *name, const char **val)
{
	size_t n = efipt_strlen(name);
	for (size_t i = 0; i < n; i++)
		if (arg[i] != name[i])
			return false;
	if (arg[n] == 0) {
		*val = 0;
		return true;
	}
	if (arg[n] == '=') {
		*val = arg + n + 1;
		return true;
	}
	return false;
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

static int add_range(struct ptcfg *cfg, unsigned kind, const char *v, const char *opt,
		     struct strbuf *err)
{
	if (cfg->nranges >= PTCFG_MAX_RANGES) {
		sb_printf(err, "%s: at most %u address ranges (--filter/--stop) in total", opt,
			  PTCFG_MAX_RANGES);
		return -1;
	}
	struct ptcfg_range *r = &cfg->range[cfg->nranges];
	efipt_memset(r, 0, sizeof(*r));
	r->cfg = kind;
	if (kind == RTIT_ADDR_CFG_FILTER && v[0] == 'i' && v[1] == 'm' && v[2] == 'a' &&
	    v[3] == 'g' && v[4] == 'e' && v[5] == '=') {
		if (!v[6]) {
			sb_printf(err, "%s: image= needs an image name", opt);
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
		sb_printf(err, "%s: range end 0x%llx is below its start 0x%llx", opt,
			  (unsigned long long)r->b, (unsigned long long)r->a);
		return -1;
	}
	if (!canonical48(r->a) || !canonical48(r->b)) {
		/* 33.2.8.5: a non-canonical ADDRn value makes WRMSR #GP. */
		sb_printf(err, "%s: 0x%llx-0x%llx is not a canonical (48-bit) address range",
			  opt, (unsigned long long)r->a, (unsigned long long)r->b);
		return -1;
	}
	cfg->nranges++;
	return 0;
bad:
	sb_printf(err, "%s needs %s, got '%s'", opt,
		  kind == RTIT_ADDR_CFG_FILTER ? "START-END (addresses, inclusive) or image=NAME"
					       : "ADDR or START-END",
		  v);
	return -1;
}

static int small_encoding(const char *v, const char *opt, int *out, struct strbuf *err)
{
	const char *e;
	uint64_t x;
	if (parse_num(v, &e, &x) || *e || x > 15) {
		sb_printf(err, "%s needs an encoding 0..15, got '%s'", opt, v);
		return -1;
	}
	*out = (int)x;
	return 0;
}

int ptcfg_option(struct ptcfg *cfg, const char *arg, const char *next, struct strbuf *err)
{
	const char *v;
	int used = 1;
	if (!arg || arg[0] != '-' || arg[1] != '-')
		return 0;

	/* Options that need a value take it from "=value" or the next argument. */
	static const char *const valued[] = { "--size", "--output", "--mode", "--psb",
					      "--filter", "--stop", "--cr3" };
	for (unsigned i = 0; i < sizeof(valued) / sizeof(valued[0]); i++) {
		if (!opt_is(arg, valued[i], &v))
			continue;
		if (!v) {
			if (!next) {
				sb_printf(err, "%s needs a value", valued[i]);
				return -1;
			}
			v = next;
			used = 2;
		}
		switch (i) {
		case 0:
			if (ptcfg_parse_size(v, &cfg->size) || !cfg->size) {
				sb_printf(err, "--size needs a byte count such as 65536, 64K, 4M "
					       "or 1G, got '%s'", v);
				return -1;
			}
			return used;
		case 1:
			if (!efipt_strcmp(v, "single"))
				cfg->output = PTCFG_OUT_SINGLE;
			else if (!efipt_strcmp(v, "topa"))
				cfg->output = PTCFG_OUT_TOPA;
			else {
				sb_printf(err, "--output must be single or topa, got '%s'", v);
				return -1;
			}
			return used;
		case 2:
			if (!efipt_strcmp(v, "stop"))
				cfg->mode = PTCFG_MODE_STOP;
			else if (!efipt_strcmp(v, "wrap"))
				cfg->mode = PTCFG_MODE_WRAP;
			else {
				sb_printf(err, "--mode must be stop or wrap, got '%s'", v);
				return -1;
			}
			return used;
		case 3: {
			/* An encoding 0..15, or a period in bytes: 2K << encoding. */
			uint64_t bytes;
			const char *e;
			uint64_t x;
			if (!parse_num(v, &e, &x) && !*e && x <= 15) {
				cfg->psb_freq = (int)x;
				return used;
			}
			if (!ptcfg_parse_size(v, &bytes) && is_pow2(bytes) && bytes >= 2048 &&
			    bytes <= (64ull << 20)) {
				cfg->psb_freq = (int)(log2u(bytes) - 11);
				return used;
			}
			sb_printf(err, "--psb needs a PSBFreq encoding 0..15 or a period of 2K..64M "
				       "bytes (power of two), got '%s'", v);
			return -1;
		}
		case 4:
			return add_range(cfg, RTIT_ADDR_CFG_FILTER, v, "--filter", err) ? -1 : used;
		case 5:
			return add_range(cfg, RTIT_ADDR_CFG_STOP, v, "--stop", err) ? -1 : used;
		case 6: {
			const char *e;
			if (parse_num(v, &e, &cfg->cr3) || *e) {
				sb_printf(err, "--cr3 needs a CR3 value, got '%s'", v);
				return -1;
			}
			cfg->cr3_filter = true;
			return used;
		}
		}
	}

	if (opt_is(arg, "--mtc", &v)) {
		cfg->mtc = true;
		return v && small_encoding(v, "--mtc", &cfg->mtc_freq, err) ? -1 : 1;
	}
	if (opt_is(arg, "--cyc", &v)) {
		cfg->cyc = true;
		return v && small_encoding(v, "--cyc", &cfg->cyc_thresh, err) ? -1 : 1;
	}
	if (opt_is(arg, "--ptwrite", &v)) {
		cfg->ptwrite = true;
		if (v && efipt_strcmp(v, "fup")) {
			sb_printf(err, "--ptwrite takes no value or =fup, got '%s'", v);
			return -1;
		}
		cfg->fuponptw = v != 0;
		return 1;
	}

	static const char *const flags[] = { "--tsc", "--pwr", "--event", "--notnt",
					     "--noretcomp", "--nobranch", "--kernel", "--user",
					     "--force" };
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!opt_is(arg, flags[i], &v))
			continue;
		if (v) {
			sb_printf(err, "%s takes no value", flags[i]);
			return -1;
		}
		switch (i) {
		case 0: cfg->tsc = true; break;
		case 1: cfg->pwr = true; break;
		case 2: cfg->event = true; break;
		case 3: cfg->distnt = true; break;
		case 4: cfg->disretc = true; break;
		case 5: cfg->branch = false; break;
		case 6:
		case 7:
			if (!cfg->cpl_set)
				cfg->os = cfg->user = false;
			cfg->cpl_set = true;
			if (i == 6)
				cfg->os = true;
			else
				cfg->user = true;
			break;
		case 8: cfg->force = true; break;
		}
		return 1;
	}
	return 0;
}

void ptcfg_usage(struct strbuf *out)
{
	sb_puts(out,
		"  --size N            trace buffer size (e.g. 64K, 4M, 1G; default 4M)\n"
		"  --output single|topa  output scheme (default: ToPA if the CPU has it)\n"
		"  --mode stop|wrap    stop when full (default for ToPA) or keep the newest\n"
		"                      trace in a circular buffer (single-range always wraps)\n"
		"  --tsc               TSC packets\n"
		"  --mtc[=F]           MTC packets, MTCFreq encoding F\n"
		"  --cyc[=T]           cycle-accurate mode, CycThresh encoding T\n"
		"  --psb=P             PSB period: PSBFreq encoding 0..15 or bytes (2K..64M)\n"
		"  --ptwrite[=fup]     PTWRITE packets (=fup: followed by FUPs)\n"
		"  --pwr               power event packets\n"
		"  --event             event trace packets\n"
		"  --notnt             no TNT packets (DisTNT)\n"
		"  --noretcomp         no RET compression (DisRETC)\n"
		"  --nobranch          no control-flow packets (BranchEn=0)\n"
		"  --kernel, --user    trace only CPL 0 / CPL > 0 (default both)\n"
		"  --cr3 VALUE         trace only while CR3 matches VALUE\n"
		"  --filter A-B        trace only IPs in [A,B] (also image=NAME)\n"
		"  --stop A[-B]        stop tracing when a branch lands in [A,B]\n"
		"  --force             take over Intel PT even if firmware has it enabled\n");
}

void ptcfg_resolve_range(struct ptcfg *cfg, unsigned i, uint64_t a, uint64_t b)
{
	if (i >= PTCFG_MAX_RANGES)
		return;
	cfg->range[i].a = a;
	cfg->range[i].b = b;
	cfg->range[i].image = 0;
}

/* ---- errata ------------------------------------------------------------- */

static bool model_in(const struct ptcaps *caps, const uint8_t *models, unsigned n)
{
	if (caps->family != 6)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (caps->model == models[i])
			return true;
	return false;
}

/*
 * BDM106 (Broadwell spec updates; also BDD/BDF/BDH): a WRMSR to IA32_RTIT_CTL
 * with BranchEn=0 may #GP, so BranchEn must stay set. Models 06_3DH (U/Y),
 * 06_47H (H/C), 06_4FH (EP/EX), 06_56H (DE).
 */
bool ptcfg_erratum_bdm106(const struct ptcaps *caps)
{
	static const uint8_t m[] = { 0x3d, 0x47, 0x4f, 0x56 };
	return model_in(caps, m, sizeof(m));
}

/*
 * TGL052, ADL037, RPL017 "Trace May Contain Incorrect Data When Configured
 * With Single Range Output Larger Than 4KB": Tiger Lake 06_8CH/06_8DH,
 * Alder Lake 06_97H/06_9AH, Raptor Lake 06_B7H/06_BAH/06_BFH.
 */
bool ptcfg_erratum_single_4k(const struct ptcaps *caps)
{
	static const uint8_t m[] = { 0x8c, 0x8d, 0x97, 0x9a, 0xb7, 0xba, 0xbf };
	return model_in(caps, m, sizeof(m));
}

/* Goldmont (06_5CH Apollo Lake, 06_5FH Denverton): RTIT MSRs scoped per core. */
static bool core_scoped_msrs(const struct ptcaps *caps)
{
	static const uint8_t m[] = { 0x5c, 0x5f };
	return model_in(caps, m, sizeof(m));
}

/* 33.3.1.2: Intel PT and LBRs are mutually exclusive on these models. */
static bool lbr_exclusive(const struct ptcaps *caps)
{
	static const uint8_t m[] = { 0x3d, 0x47, 0x4e, 0x4f, 0x56, 0x5e };
	return model_in(caps, m, sizeof(m));
}

/* ---- validation --------------------------------------------------------- */

static void list_bitmap(struct strbuf *msg, uint16_t bm)
{
	ptcaps_bitmap_list(bm, msg);
}

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

static int refuse_bit(struct strbuf *msg, const char *what, const char *bit)
{
	sb_printf(msg, "%s not supported by this CPU: %s=0", what, bit);
	return -1;
}

static int validate_output(const struct ptcfg *cfg, const struct ptcaps *caps,
			   struct ptcfg_settings *out, struct strbuf *msg)
{
	enum ptcfg_output o = cfg->output;
	enum ptcfg_mode m = cfg->mode;

	if (o == PTCFG_OUT_AUTO && !caps->topa && !caps->single_range) {
		sb_puts(msg, "this CPU has no trace output scheme: neither ToPA "
			     "(CPUID.(EAX=14H,ECX=0):ECX[0]=0) nor single-range output "
			     "(CPUID.(EAX=14H,ECX=0):ECX[2]=0)");
		return -1;
	}
	if (o == PTCFG_OUT_AUTO)
		o = caps->topa ? PTCFG_OUT_TOPA : PTCFG_OUT_SINGLE;
	if (o == PTCFG_OUT_TOPA && !caps->topa)
		return refuse_bit(msg, "ToPA output (--output topa)", "CPUID.(EAX=14H,ECX=0):ECX[0]");
	if (o == PTCFG_OUT_SINGLE && !caps->single_range)
		return refuse_bit(msg, "single-range output (--output single)",
				  "CPUID.(EAX=14H,ECX=0):ECX[2]");

	uint64_t size = cfg->size;
	if (caps->maxphyaddr < 64 && size > (1ull << caps->maxphyaddr) / 2) {
		sb_printf(msg, "--size %llu cannot fit in this CPU's physical address space "
			       "(MAXPHYADDR %u bits)",
			  (unsigned long long)size, caps->maxphyaddr);
		return -1;
	}
	if (o == PTCFG_OUT_SINGLE) {
		if (m == PTCFG_MODE_STOP) {
			/* 33.2.7.1: "This output range is circular". */
			sb_puts(msg, "single-range output always wraps (SDM 33.2.7.1): use --mode "
				     "wrap, or --output topa for --mode stop");
			return -1;
		}
		if (!is_pow2(size) || size < SINGLE_MIN_SIZE || size > SINGLE_MAX_SIZE) {
			sb_printf(msg, "single-range output needs a power-of-two --size from 128 "
				       "bytes to 4G (SDM 33.2.7.1), got %llu",
				  (unsigned long long)size);
			return -1;
		}
		/*
		 * Errata TGL052, ADL037, RPL017: single-range output larger than
		 * 4 KiB may write incorrect trace data. Use ToPA instead where the
		 * CPU has it; otherwise there is no safe way to honour the request.
		 */
		if (size > 4096 && ptcfg_erratum_single_4k(caps)) {
			if (!caps->topa) {
				sb_printf(msg, "single-range output above 4 KiB corrupts trace on this "
					       "CPU (errata TGL052/ADL037/RPL017) and it has no ToPA: "
					       "use --size 4K");
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
		if (!caps->topa_multi) {
			/*
			 * 33.2.7.2 "Single Output Region ToPA Implementation": one
			 * output entry, so one region of 4K..128M, a power of two.
			 */
			uint64_t p = TOPA_MIN_REGION;
			while (p < r && p < TOPA_MAX_REGION)
				p <<= 1;
			if (r > TOPA_MAX_REGION) {
				sb_printf(msg, "this CPU's ToPA holds one output region of at most "
					       "128M (CPUID.(EAX=14H,ECX=0):ECX[1]=0), --size %llu is "
					       "too large",
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
		sb_puts(msg, "neither CPL 0 (--kernel) nor CPL > 0 (--user) is traced");
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
		sb_puts(msg, "--nobranch cannot be used on Broadwell: IA32_RTIT_CTL.BranchEn=0 "
			     "may #GP (erratum BDM106)");
		return -1;
	}
	if (ptcfg_erratum_bdm106(caps))
		out->notes |= PTCFG_NOTE_BRANCH_FORCED;

	if (cfg->tsc)
		ctl |= RTIT_CTL_TSCEN; /* TSCEn has no CPUID bit (33.2.8.2) */
	if (cfg->disretc)
		ctl |= RTIT_CTL_DISRETC;

	if (cfg->mtc) {
		if (!caps->mtc)
			return refuse_bit(msg, "MTC packets (--mtc)", "CPUID.(EAX=14H,ECX=0):EBX[3]");
		int f = pick_encoding(cfg->mtc_freq, caps->mtc_periods, 3);
		if (f < 0 || !(caps->mtc_periods & (1u << f))) {
			sb_printf(msg, "MTC period encoding %d not supported; valid --mtc=F values "
				       "(CPUID.(EAX=14H,ECX=1):EAX[31:16]): ",
				  f);
			list_bitmap(msg, caps->mtc_periods);
			return -1;
		}
		ctl |= RTIT_CTL_MTCEN | ((uint64_t)f << RTIT_CTL_MTCFREQ_SHIFT);
	}
	if (cfg->cyc) {
		if (!caps->psb_cyc)
			return refuse_bit(msg, "cycle-accurate mode (--cyc)",
					  "CPUID.(EAX=14H,ECX=0):EBX[1]");
		int t = pick_encoding(cfg->cyc_thresh, caps->cyc_thresholds, 0);
		if (t < 0 || !(caps->cyc_thresholds & (1u << t))) {
			sb_printf(msg, "cycle threshold encoding %d not supported; valid --cyc=T "
				       "values (CPUID.(EAX=14H,ECX=1):EBX[15:0]): ",
				  t);
			list_bitmap(msg, caps->cyc_thresholds);
			return -1;
		}
		ctl |= RTIT_CTL_CYCEN | ((uint64_t)t << RTIT_CTL_CYCTHRESH_SHIFT);
	}
	if (cfg->psb_freq >= 0) {
		if (!caps->psb_cyc)
			return refuse_bit(msg, "configurable PSB period (--psb)",
					  "CPUID.(EAX=14H,ECX=0):EBX[1]");
		if (!(caps->psb_periods & (1u << cfg->psb_freq))) {
			sb_printf(msg, "PSB period encoding %d not supported; valid --psb=P values "
				       "(CPUID.(EAX=14H,ECX=1):EBX[31:16], period 2K<<P bytes): ",
				  cfg->psb_freq);
			list_bitmap(msg, caps->psb_periods);
			return -1;
		}
		ctl |= (uint64_t)cfg->psb_freq << RTIT_CTL_PSBFREQ_SHIFT;
	}
	if (cfg->ptwrite || cfg->fuponptw) {
		if (!caps->ptwrite)
			return refuse_bit(msg, "PTWRITE (--ptwrite)", "CPUID.(EAX=14H,ECX=0):EBX[4]");
		ctl |= RTIT_CTL_PTWEN;
		if (cfg->fuponptw)
			ctl |= RTIT_CTL_FUPONPTW;
	}
	if (cfg->pwr) {
		if (!caps->power_event)
			return refuse_bit(msg, "power event trace (--pwr)",
					  "CPUID.(EAX=14H,ECX=0):EBX[5]");
		ctl |= RTIT_CTL_PWREVTEN;
	}
	if (cfg->event) {
		if (!caps->event_trace)
			return refuse_bit(msg, "event trace (--event)", "CPUID.(EAX=14H,ECX=0):EBX[7]");
		ctl |= RTIT_CTL_EVENTEN;
	}
	if (cfg->distnt) {
		if (!caps->tnt_disable)
			return refuse_bit(msg, "TNT disable (--notnt)", "CPUID.(EAX=14H,ECX=0):EBX[8]");
		ctl |= RTIT_CTL_DISTNT;
	}
	if (cfg->cr3_filter) {
		if (!caps->cr3_filter)
			return refuse_bit(msg, "CR3 filtering (--cr3)", "CPUID.(EAX=14H,ECX=0):EBX[0]");
		if (cfg->cr3 & RTIT_CR3_RESERVED) {
			/* 33.2.8.6: IA32_RTIT_CR3_MATCH[4:0] are reserved (#GP). */
			sb_printf(msg, "--cr3 0x%llx: bits 4:0 must be 0 (IA32_RTIT_CR3_MATCH[4:0] "
				       "are reserved)",
				  (unsigned long long)cfg->cr3);
			return -1;
		}
		ctl |= RTIT_CTL_CR3FILTER;
		out->cr3_filter = true;
		out->cr3_match = cfg->cr3;
	}
	if (cfg->nranges) {
		if (!caps->ip_filter)
			return refuse_bit(msg, "IP filtering and TraceStop (--filter/--stop)",
					  "CPUID.(EAX=14H,ECX=0):EBX[2]");
		if (cfg->nranges > caps->addr_ranges) {
			sb_printf(msg, "%u address ranges requested (--filter/--stop) but this CPU has "
				       "%u (CPUID.(EAX=14H,ECX=1):EAX[2:0])",
				  cfg->nranges, caps->addr_ranges);
			return -1;
		}
		for (unsigned i = 0; i < cfg->nranges; i++) {
			const struct ptcfg_range *r = &cfg->range[i];
			if (r->image) {
				sb_printf(msg, "--filter image=%s was not resolved to an address range",
					  r->image);
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

	if (core_scoped_msrs(caps)) {
		out->notes |= PTCFG_NOTE_CORE_SCOPED;
		sb_puts(msg, "note: Goldmont: the RTIT MSRs are per core; program, stop and read "
			     "them on the one logical CPU that traces\n");
	}
	if (lbr_exclusive(caps))
		out->notes |= PTCFG_NOTE_LBR_EXCLUSIVE;
	out->ctl = ctl;
	return 0;
}
