/*
 * The tracing engine (core/pt_config, arch/x86_64/pt_output, rtit_engine)
 * against the PT model (tests/lib/pt_model) over every CPU profile in
 * tests/data/cpu-profiles:
 *   - every subset of the feature options x every output/mode choice:
 *     refused exactly where the CPU lacks the feature (an oracle written from
 *     Table 33-11 here, independently of the validator), and otherwise zero
 *     #GP, zero operational errors, the trace bytes found again after stop;
 *   - ToPA layouts (multi-entry, chained tables, single-entry, fragmented
 *     memory, GiB buffers), the model's own error detection;
 *   - wrap reconstruction for single-range and ToPA;
 *   - the start/stop sequence order, TraceEn already set, --force restore.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_msr.h"
#include "check.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "host/util/file_io.h"
#include "host/util/sim_mem.h"
#include "lib/cpu_profiles.h"
#include "lib/pt_model.h"
#include "lib/span_copy.h"

#define MAXREG 4096
#define MAXTAB 64

static struct ptout_region regions[MAXREG];
static struct ptout_table tables[MAXTAB];
static struct rtit_step steps[256];

static struct cpu_profile profiles[CPU_PROFILES_MAX];
static unsigned nprofiles;

static const struct cpu_profile *find_profile(const char *prefix)
{
	return cpu_profile_find(profiles, nprofiles, prefix);
}

/* A stream of non-zero bytes that says where it is: byte i = (i % 251) + 1. */
static uint8_t stream_byte(uint64_t i) { return (uint8_t)(i % 251 + 1); }

static void make_stream(uint8_t *b, uint64_t start, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = stream_byte(start + i);
}

/* Collect extracted spans into one host buffer. */
/* ---- one full run: validate, build, start, emit, stop, extract ---------- */

struct run {
	int refused;
	char msg[1024];
	unsigned gp, operr, stale, leaked;
	int start_rc, stop_rc, extract_rc;
	bool data_ok;
	struct ptout_extent ext;
	char detail[400];
};

static void run_engine(const struct cpu_profile *p, const struct ptcfg *cfg, size_t emit_bytes,
		       struct run *r)
{
	static struct simmem mem;
	static bool mem_init;
	static uint8_t sbuf[1 << 16], got[1 << 16];
	if (!mem_init) {
		simmem_init(&mem, SIMMEM_DEFAULT_BASE);
		mem_init = true;
	}
	simmem_reset(&mem);
	memset(r, 0, sizeof(*r));
	struct strbuf msg;
	sb_init(&msg, r->msg, sizeof(r->msg));
	struct ptcfg_settings set;
	if (ptcfg_validate(cfg, &p->caps, &set, &msg)) {
		r->refused = 1;
		return;
	}
	struct ptout_mem ops;
	simmem_ops(&mem, &ops);
	struct ptout out;
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	if (ptout_build(&out, &set, &ops, &msg)) {
		r->refused = 2;
		return;
	}
	struct ptmodel m;
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	struct rtit_engine e;
	rtit_engine_init(&e, &m.ops, &p->caps, &set, &out, NULL);
	r->start_rc = rtit_start(&e, &msg);
	if (emit_bytes > sizeof(sbuf))
		emit_bytes = sizeof(sbuf);
	make_stream(sbuf, 0, emit_bytes);
	size_t written = ptmodel_emit(&m, sbuf, emit_bytes);
	r->stop_rc = rtit_stop(&e, &msg);
	struct span_copy c = { .mem = &mem, .buf = got, .cap = sizeof(got) };
	r->extract_rc = rtit_extract(&e, &ops, span_copy, &c, &r->ext);
	/* What the CPU kept: stop mode the first bytes, wrap the last ones. */
	size_t keep = written < out.size ? written : (size_t)out.size;
	const uint8_t *want = out.mode == PTCFG_MODE_WRAP ? sbuf + written - keep : sbuf;
	r->data_ok = c.len == keep && !memcmp(got, want, keep);
	if (!r->data_ok)
		snprintf(r->detail, sizeof(r->detail),
			 "extracted %zu bytes, expected %zu (emitted %zu, size %llu, mode %d)", c.len,
			 keep, written, (unsigned long long)out.size, out.mode);
	r->gp = m.gp;
	r->operr = m.operr;
	r->stale = m.stale_status + m.hazards;
	if (m.hazards)
		snprintf(r->detail, sizeof(r->detail), "hazard: %s", m.last_hazard);
	if (m.gp)
		snprintf(r->detail, sizeof(r->detail), "#GP: %s", m.last_gp);
	else if (m.operr)
		snprintf(r->detail, sizeof(r->detail), "operational error: %s", m.last_operr);
	ptout_free(&out, &ops);
	r->leaked = simmem_live(&mem);
}

/* ---- the oracle: should this CPU refuse this request? (Table 33-11) ----- */

enum {
	F_TSC, F_MTC, F_CYC, F_PSB, F_PTW, F_PWR, F_EVENT, F_NOTNT, F_CR3, F_FILTER, F_STOP,
	F_NORETC, F_NOBRANCH, NFEAT
};

static int psb_choice(const struct ptcaps *c)
{
	for (int i = 15; i >= 0; i--)
		if (c->psb_periods & (1u << i))
			return i;
	return 5;
}

static bool is_broadwell(const struct ptcaps *c)
{
	return c->family == 6 &&
	       (c->model == 0x3d || c->model == 0x47 || c->model == 0x4f || c->model == 0x56);
}

static bool single_erratum(const struct ptcaps *c)
{
	static const unsigned m[] = { 0x8c, 0x8d, 0x97, 0x9a, 0xb7, 0xba, 0xbf };
	for (unsigned i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (c->family == 6 && c->model == m[i])
			return true;
	return false;
}

static bool expect_refusal(const struct ptcaps *c, unsigned feat, enum ptcfg_output o,
			   enum ptcfg_mode mode, uint64_t size)
{
	if (c->absent != PTCAPS_PRESENT)
		return true;
	if ((feat & 1u << F_MTC) && (!c->mtc || !c->mtc_periods))
		return true;
	if ((feat & 1u << F_CYC) && (!c->psb_cyc || !c->cyc_thresholds))
		return true;
	if ((feat & 1u << F_PSB) && (!c->psb_cyc || !(c->psb_periods & 1u << psb_choice(c))))
		return true;
	if ((feat & 1u << F_PTW) && !c->ptwrite)
		return true;
	if ((feat & 1u << F_PWR) && !c->power_event)
		return true;
	if ((feat & 1u << F_EVENT) && !c->event_trace)
		return true;
	if ((feat & 1u << F_NOTNT) && !c->tnt_disable)
		return true;
	if ((feat & 1u << F_CR3) && !c->cr3_filter)
		return true;
	unsigned ranges = !!(feat & 1u << F_FILTER) + !!(feat & 1u << F_STOP);
	if (ranges && (!c->ip_filter || ranges > c->addr_ranges))
		return true;
	if ((feat & 1u << F_NOBRANCH) && is_broadwell(c))
		return true;
	bool single = o == PTCFG_OUT_SINGLE || (o == PTCFG_OUT_AUTO && !c->topa);
	if (o == PTCFG_OUT_TOPA && !c->topa)
		return true;
	if (single && !c->single_range)
		return true;
	if (single) {
		if (mode == PTCFG_MODE_STOP)
			return true;
		if (size & (size - 1))
			return true;
		if (size > 4096 && single_erratum(c) && !c->topa)
			return true;
	}
	return false;
}

static void make_cfg(struct ptcfg *cfg, const struct ptcaps *c, unsigned feat,
		     enum ptcfg_output o, enum ptcfg_mode mode, uint64_t size)
{
	ptcfg_init(cfg);
	cfg->tsc = feat & 1u << F_TSC;
	cfg->mtc = feat & 1u << F_MTC;
	cfg->cyc = feat & 1u << F_CYC;
	if (feat & 1u << F_PSB)
		cfg->psb_freq = psb_choice(c);
	cfg->ptwrite = cfg->fuponptw = feat & 1u << F_PTW;
	cfg->pwr = feat & 1u << F_PWR;
	cfg->event = feat & 1u << F_EVENT;
	cfg->distnt = feat & 1u << F_NOTNT;
	if (feat & 1u << F_CR3) {
		cfg->cr3_filter = true;
		cfg->cr3 = 0x7ffff000;
	}
	if (feat & 1u << F_FILTER)
		cfg->range[cfg->nranges++] =
			(struct ptcfg_range){ .cfg = RTIT_ADDR_CFG_FILTER, .a = 0x100000, .b = 0x1fffff };
	if (feat & 1u << F_STOP)
		cfg->range[cfg->nranges++] = (struct ptcfg_range){
			.cfg = RTIT_ADDR_CFG_STOP, .a = 0xffffffff80000000ull, .b = 0xffffffff80000fffull
		};
	cfg->disretc = feat & 1u << F_NORETC;
	cfg->branch = !(feat & 1u << F_NOBRANCH);
	cfg->output = o;
	cfg->mode = mode;
	cfg->size = size;
}

static void test_sweep(void)
{
	static const uint64_t sizes[] = { 4096, 64 << 10, 3 * (64 << 10) };
	unsigned long runs = 0, refusals = 0;
	for (unsigned pi = 0; pi < nprofiles; pi++) {
		const struct cpu_profile *p = &profiles[pi];
		unsigned bad = 0;
		char first[1600] = "";
		_Static_assert(sizeof(first) > 1400, "room for the first failure");
		for (unsigned feat = 0; feat < 1u << NFEAT; feat++) {
			for (unsigned oi = 0; oi < 3; oi++) {
				/* every output with every feature set; mode and size rotate
				 * (all 27 output/mode/size triples appear for each output) */
				enum ptcfg_output o = (enum ptcfg_output)oi;
				enum ptcfg_mode mode = (enum ptcfg_mode)((feat + oi) % 3);
				uint64_t size = sizes[(feat / 3 + oi) % 3];
				struct ptcfg cfg;
				make_cfg(&cfg, &p->caps, feat, o, mode, size);
				struct run r;
				run_engine(p, &cfg, 6000, &r);
				runs++;
				bool want = expect_refusal(&p->caps, feat, o, mode, size);
				const char *err = NULL;
				if (r.refused == 2)
					err = "layout failed";
				else if (!!r.refused != want)
					err = want ? "accepted, expected a refusal" : "refused unexpectedly";
				else if (r.refused && !r.msg[0])
					err = "refusal without a reason";
				else if (!r.refused && (r.gp || r.operr || r.stale))
					err = "#GP or operational error";
				else if (!r.refused && (r.start_rc || r.stop_rc || r.extract_rc))
					err = "engine call failed";
				else if (!r.refused && !r.data_ok)
					err = "extracted trace differs";
				else if (r.leaked)
					err = "memory not freed";
				refusals += !!r.refused;
				if (err && !bad++)
					snprintf(first, sizeof(first),
						 "feat 0x%x output %u mode %u size %llu: %s (%.400s) [%.900s]", feat,
						 oi, mode, (unsigned long long)size, err, r.detail, r.msg);
			}
		}
		char name[300];
		snprintf(name, sizeof(name), "sweep %.128s: %u configurations", p->name,
			 (1u << NFEAT) * 3);
		CHECKF(!bad, name, "%u failures, first: %s", bad, first);
	}
	printf("# sweep: %lu runs over %u profiles, %lu refused\n", runs, nprofiles, refusals);

	/* --force on every CPU: firmware's configuration read and written back
	 * using only the MSRs that CPU enumerates. */
	unsigned forced = 0, bad = 0;
	char first[400] = "";
	for (unsigned pi = 0; pi < nprofiles; pi++) {
		const struct cpu_profile *p = &profiles[pi];
		if (p->caps.absent != PTCAPS_PRESENT)
			continue;
		struct simmem mem;
		simmem_init(&mem, SIMMEM_DEFAULT_BASE);
		struct ptout_mem ops;
		simmem_ops(&mem, &ops);
		struct ptcfg cfg;
		ptcfg_init(&cfg);
		cfg.force = true;
		cfg.output = p->caps.topa ? PTCFG_OUT_TOPA : PTCFG_OUT_SINGLE;
		cfg.mode = PTCFG_MODE_WRAP;
		cfg.size = 1u << 20;
		char msg[1024];
		struct strbuf ms;
		sb_init(&ms, msg, sizeof(msg));
		struct ptcfg_settings set;
		struct ptout out;
		ptout_init(&out, regions, MAXREG, tables, MAXTAB);
		if (ptcfg_validate(&cfg, &p->caps, &set, &ms) || ptout_build(&out, &set, &ops, &ms)) {
			if (!bad++)
				snprintf(first, sizeof(first), "%.100s: %.250s", p->name, msg);
			simmem_release(&mem);
			continue;
		}
		/* firmware traces into a copy of the same layout */
		struct ptmodel m;
		ptmodel_init(&m, &p->caps, &p->set, &mem);
		uint64_t fw_ctl = (set.ctl | RTIT_CTL_TRACEEN);
		m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_BASE, out.msr_base);
		m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, out.msr_mask);
		m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_CTL, fw_ctl);
		struct rtit_engine e;
		rtit_engine_init(&e, &m.ops, &p->caps, &set, &out, NULL);
		int r1 = rtit_start(&e, &ms);
		int r2 = rtit_stop(&e, &ms);
		forced++;
		if ((r1 || r2 || !e.took_over || m.gp || m.operr || m.u.ctl != fw_ctl) && !bad++)
			snprintf(first, sizeof(first), "%.100s: rc %d/%d gp %u operr %u %.100s %.100s",
				 p->name, r1, r2, m.gp, m.operr, m.last_gp, m.last_operr);
		ptout_free(&out, &ops);
		simmem_release(&mem);
	}
	CHECKF(!bad && forced > 40, "sweep: --force take-over and restore on every CPU with PT",
	       "%u failures of %u, first: %s", bad, forced, first);
	CHECK(nprofiles >= 50, "sweep covers at least 50 CPU profiles");
}

/* ---- validation messages ----------------------------------------------- */

static int validate_str(const struct cpu_profile *p, const char *const *argv, char *msg, size_t n,
			struct ptcfg_settings *set)
{
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	char err[256];
	struct strbuf es;
	sb_init(&es, err, sizeof(err));
	for (int i = 0; argv[i]; i++) {
		int k = ptcfg_option(&cfg, argv[i], argv[i + 1], &es);
		if (k <= 0) {
			snprintf(msg, n, "option error: %s", err);
			return -2;
		}
		i += k - 1;
	}
	struct strbuf ms;
	sb_init(&ms, msg, n);
	return ptcfg_validate(&cfg, &p->caps, set, &ms);
}

static void test_validation(void)
{
	const struct cpu_profile *skl = find_profile("skylake-s-core-i7-6700k.txt") ?
		find_profile("skylake-s-core-i7-6700k.txt") : find_profile("skylake-s-core-i7-6700k");
	const struct cpu_profile *bdw = find_profile("broadwell-u-core-i7-5500u");
	const struct cpu_profile *adl = find_profile("alder-lake-s-core-i9-12900k-p-core");
	const struct cpu_profile *tgl = find_profile("tiger-lake-up3");
	const struct cpu_profile *hv = find_profile("comet-lake-xeon-w-1290p-as-seen");
	if (!CHECK(skl && bdw && adl && tgl && hv, "validation: profiles present"))
		return;
	char msg[1024];
	struct ptcfg_settings set;

	{
		const char *a[] = { "--mtc=15", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "valid --mtc=F values") && strstr(msg, "EAX[31:16]"),
		       "validation: unsupported MTC period lists the valid ones", "%d %s", r, msg);
	}
	{
		const char *a[] = { "--pwr", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "EBX[5]"), "validation: --pwr names CPUID EBX[5]",
		       "%d %s", r, msg);
	}
	{
		const char *a[] = { "--nobranch", NULL };
		int r = validate_str(bdw, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "BDM106"), "validation: BDM106 refuses BranchEn=0",
		       "%d %s", r, msg);
		r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == 0 && !(set.ctl & RTIT_CTL_BRANCHEN), "validation: --nobranch on Skylake",
		       "%d %s", r, msg);
	}
	{
		const char *a[] = { "--output", "single", "--mode=wrap", "--size=64K", NULL };
		int r = validate_str(adl, a, msg, sizeof(msg), &set);
		CHECKF(r == 0 && set.output == PTCFG_OUT_TOPA && set.mode == PTCFG_MODE_WRAP &&
			       (set.notes & PTCFG_NOTE_SINGLE_ERRATUM) && strstr(msg, "ADL037"),
		       "validation: ADL037 single-range >4K falls back to ToPA and says so", "%d %s",
		       r, msg);
		r = validate_str(tgl, a, msg, sizeof(msg), &set);
		CHECKF(r == 0 && set.output == PTCFG_OUT_TOPA, "validation: TGL052 fallback",
		       "%d %s", r, msg);
		r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == 0 && set.output == PTCFG_OUT_SINGLE && !(set.ctl & RTIT_CTL_TOPA),
		       "validation: single-range 64K on Skylake", "%d %s", r, msg);
		const char *b[] = { "--output", "single", "--size=4K", NULL };
		r = validate_str(adl, b, msg, sizeof(msg), &set);
		CHECKF(r == 0 && set.output == PTCFG_OUT_SINGLE && set.mode == PTCFG_MODE_WRAP,
		       "validation: single-range 4K allowed on Alder Lake", "%d %s", r, msg);
	}
	{
		const char *a[] = { "--size=256M", NULL };
		int r = validate_str(bdw, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "ECX[1]=0"),
		       "validation: single-entry ToPA refuses more than 128M", "%d %s", r, msg);
		const char *b[] = { "--size=3M", NULL };
		r = validate_str(bdw, b, msg, sizeof(msg), &set);
		CHECKF(r == 0 && set.size == (4u << 20) && (set.notes & PTCFG_NOTE_SIZE_ROUNDED),
		       "validation: single-entry ToPA rounds 3M up to 4M", "%d %s", r, msg);
	}
	{
		const char *a[] = { "--tsc", NULL };
		int r = validate_str(hv, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "EBX[25]"), "validation: no PT under the hypervisor",
		       "%d %s", r, msg);
	}
	{
		const char *a[] = { "--cr3", "0x1234", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "4:0"), "validation: CR3 bits 4:0 refused", "%d %s",
		       r, msg);
	}
	{
		const char *a[] = { "--filter", "0x1000-0x1fff", "--stop", "0x5000", "--filter",
				    "0x2000-0x2fff", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "EAX[2:0]"),
		       "validation: more ranges than CPUID.(14H,1):EAX[2:0]", "%d %s", r, msg);
	}
	{
		const char *a[] = { "--filter", "0x1000-0x1fff", "--stop=0x5000", "--tsc", "--mtc=3",
				    "--cyc=1", "--psb=4K", "--noretcomp", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		uint64_t want = RTIT_CTL_OS | RTIT_CTL_USER | RTIT_CTL_BRANCHEN | RTIT_CTL_TSCEN |
				RTIT_CTL_MTCEN | (3ull << RTIT_CTL_MTCFREQ_SHIFT) | RTIT_CTL_CYCEN |
				(1ull << RTIT_CTL_CYCTHRESH_SHIFT) | (1ull << RTIT_CTL_PSBFREQ_SHIFT) |
				RTIT_CTL_DISRETC | RTIT_CTL_TOPA | (1ull << 32) | (2ull << 36);
		CHECKF(r == 0 && set.ctl == want && set.nranges == 2 && set.addr_a[1] == 0x5000 &&
			       set.addr_b[1] == 0x5000,
		       "validation: RTIT_CTL value for a full option set", "%d ctl 0x%llx want 0x%llx %s",
		       r, (unsigned long long)set.ctl, (unsigned long long)want, msg);
	}
	{
		const char *a[] = { "--output=single", "--mode", "stop", NULL };
		int r = validate_str(skl, a, msg, sizeof(msg), &set);
		CHECKF(r == -1 && strstr(msg, "33.2.7.1"), "validation: single-range cannot stop",
		       "%d %s", r, msg);
	}
	{
		struct ptcfg cfg;
		ptcfg_init(&cfg);
		char e[200];
		struct strbuf es;
		sb_init(&es, e, sizeof(e));
		CHECK(ptcfg_option(&cfg, "--size", NULL, &es) == -1, "options: --size needs a value");
		CHECK(ptcfg_option(&cfg, "--output=ring", NULL, &es) == -1, "options: bad --output");
		CHECK(ptcfg_option(&cfg, "--decode", NULL, &es) == 0, "options: foreign option left");
		CHECK(ptcfg_option(&cfg, "--size", "1G", &es) == 2 && cfg.size == 1ull << 30,
		      "options: --size 1G");
		CHECK(ptcfg_option(&cfg, "--kernel", NULL, &es) == 1 && cfg.os && !cfg.user,
		      "options: --kernel traces CPL 0 only");
		CHECK(ptcfg_option(&cfg, "--filter=image=Shell.efi", NULL, &es) == 1 &&
			      cfg.range[0].image && !strcmp(cfg.range[0].image, "Shell.efi"),
		      "options: --filter image=NAME kept for the app");
		struct ptcfg_settings s;
		struct strbuf ms;
		sb_init(&ms, msg, sizeof(msg));
		CHECK(ptcfg_validate(&cfg, &skl->caps, &s, &ms) == -1 && strstr(msg, "not resolved"),
		      "validation: unresolved image filter refused");
		ptcfg_resolve_range(&cfg, 0, 0x7000000, 0x70fffff);
		sb_init(&ms, msg, sizeof(msg));
		CHECK(ptcfg_validate(&cfg, &skl->caps, &s, &ms) == 0 && s.addr_a[0] == 0x7000000,
		      "validation: resolved image filter");
		/* every option in the usage text parses */
		static const char *const all[][2] = {
			{ "--size", "64K" }, { "--size=1M", 0 }, { "--output", "single" },
			{ "--output=topa", 0 }, { "--mode", "wrap" }, { "--mode=stop", 0 },
			{ "--tsc", 0 }, { "--mtc", 0 }, { "--mtc=3", 0 }, { "--cyc", 0 },
			{ "--cyc=2", 0 }, { "--psb=5", 0 }, { "--psb", "64K" }, { "--ptwrite", 0 },
			{ "--ptwrite=fup", 0 }, { "--pwr", 0 }, { "--event", 0 }, { "--notnt", 0 },
			{ "--noretcomp", 0 }, { "--nobranch", 0 }, { "--kernel", 0 }, { "--user", 0 },
			{ "--cr3", "0x1000" }, { "--filter", "0x1000-0x2000" }, { "--stop", "0x3000" },
			{ "--force", 0 },
		};
		unsigned parsed = 0;
		char usage[4096];
		struct strbuf us;
		sb_init(&us, usage, sizeof(usage));
		ptcfg_usage(&us);
		for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			struct ptcfg c2;
			ptcfg_init(&c2);
			int k = ptcfg_option(&c2, all[i][0], all[i][1], &es);
			char name[32];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(all[i][0], "="), all[i][0]);
			parsed += k == (all[i][1] ? 2 : 1) && strstr(usage, name);
		}
		CHECKF(parsed == sizeof(all) / sizeof(all[0]), "options: every documented option parses",
		       "%u of %zu", parsed, sizeof(all) / sizeof(all[0]));
		{
			struct ptcfg c2;
			ptcfg_init(&c2);
			ptcfg_option(&c2, "--psb", "64K", &es);
			CHECK(c2.psb_freq == 5, "options: --psb 64K is PSBFreq 5 (2K << 5)");
		}
		CHECK(ptcfg_option(&cfg, "--stop", "0x9000-0x8000", &es) == -1,
		      "options: inverted range refused");
		CHECK(ptcfg_option(&cfg, "--filter", "0x800000000000-0x800000000fff", &es) == -1,
		      "options: non-canonical range refused");
	}
}

/* ---- ToPA layouts ------------------------------------------------------- */

static struct ptcfg_settings topa_settings(uint64_t size, enum ptcfg_mode mode, bool multi)
{
	struct ptcfg_settings s;
	memset(&s, 0, sizeof(s));
	s.output = PTCFG_OUT_TOPA;
	s.mode = mode;
	s.size = size;
	s.topa_multi = multi;
	s.maxphyaddr = 39;
	s.ctl = RTIT_CTL_TOPA | RTIT_CTL_BRANCHEN | RTIT_CTL_OS;
	return s;
}

/* Enable through the model and report its verdict. */
static unsigned model_enable(const struct cpu_profile *p, struct simmem *mem, struct ptout *out,
			     const struct ptcfg_settings *s, char *why, size_t n)
{
	struct ptmodel m;
	ptmodel_init(&m, &p->caps, &p->set, mem);
	struct rtit_engine e;
	rtit_engine_init(&e, &m.ops, &p->caps, s, out, NULL);
	char b[512];
	struct strbuf sb;
	sb_init(&sb, b, sizeof(b));
	rtit_start(&e, &sb);
	rtit_stop(&e, &sb);
	snprintf(why, n, "%.80s%.80s%.80s", m.last_gp, m.last_operr, m.last_hazard);
	return m.gp + m.operr + m.stale_status + m.hazards;
}

static void test_topa_layout(void)
{
	const struct cpu_profile *skl = find_profile("skylake-s-core-i7-6700k");
	const struct cpu_profile *bdw = find_profile("broadwell-u-core-i7-5500u");
	if (!CHECK(skl && bdw, "layout: profiles present"))
		return;
	struct simmem mem;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	struct ptout_mem ops;
	simmem_ops(&mem, &ops);
	struct ptout out;
	char err[512], why[256];
	struct strbuf es;

	/* 4M + 12K: greedy powers of two, END back to the table, STOP on the last. */
	struct ptcfg_settings s = topa_settings((4u << 20) + (12u << 10), PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	int r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == 0 && out.nreg == 3 && out.ntab == 1 && out.reg[0].size == 4u << 20 &&
		       out.reg[1].size == 8192 && out.reg[2].size == 4096,
	       "layout: 4M+12K is 4M, 8K, 4K regions", "%d %s nreg %u", r, err, out.nreg);
	uint64_t e0 = simmem_read64(&mem, out.tab[0].phys);
	uint64_t e2 = simmem_read64(&mem, out.tab[0].phys + 16);
	uint64_t e3 = simmem_read64(&mem, out.tab[0].phys + 24);
	CHECKF(((e0 & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT) == 10 && !(e0 & (TOPA_STOP | TOPA_END)) &&
		       (e0 & ((4u << 20) - 1) & ~0xfffull) == 0,
	       "layout: entry 0 is a 4M region aligned to 4M", "0x%llx", (unsigned long long)e0);
	CHECKF((e2 & TOPA_STOP) && !(e2 & TOPA_END), "layout: STOP on the last region", "0x%llx",
	       (unsigned long long)e2);
	CHECKF(e3 == (out.tab[0].phys | TOPA_END), "layout: END points back to the table",
	       "0x%llx", (unsigned long long)e3);
	CHECKF(out.msr_base == out.tab[0].phys && out.msr_mask == 0x7f,
	       "layout: OUTPUT_BASE is the table, MASK_PTRS entry 0 offset 0", "0x%llx 0x%llx",
	       (unsigned long long)out.msr_base, (unsigned long long)out.msr_mask);
	CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) == 0,
	       "layout: model accepts it", "%s", why);
	ptout_free(&out, &ops);
	CHECK(simmem_live(&mem) == 0, "layout: everything freed");

	/* Chained tables: 3 entries per table, 10 regions, wrap (no STOP). */
	s = topa_settings(10 * 4096 * 0 + (128ull << 20) * 9 + 4096, PTCFG_MODE_WRAP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	out.per_table = 4;
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	bool chain = r == 0 && out.nreg == 10 && out.ntab == 4;
	for (unsigned t = 0; chain && t < out.ntab; t++) {
		uint64_t end = simmem_read64(&mem, out.tab[t].phys + 8ull * out.tab[t].nout);
		chain = end == (out.tab[(t + 1) % out.ntab].phys | TOPA_END);
		for (unsigned i = 0; chain && i < out.tab[t].nout; i++)
			chain = !(simmem_read64(&mem, out.tab[t].phys + 8ull * i) & TOPA_STOP);
	}
	CHECKF(chain, "layout: 9x128M+4K over 4 chained tables, END to next, last to first",
	       "%d %s nreg %u ntab %u", r, err, out.nreg, out.ntab);
	CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) == 0,
	       "layout: model accepts the chain", "%s", why);
	ptout_free(&out, &ops);

	/* GiB buffers: 6G = 48 regions of 128M, in one table. */
	s = topa_settings(6ull << 30, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == 0 && out.nreg == 48 && out.ntab == 1, "layout: 6 GiB is 48 regions of 128M",
	       "%d %s %u", r, err, out.nreg);
	CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) == 0,
	       "layout: model accepts 6 GiB", "%s", why);
	ptout_free(&out, &ops);

	/* 200 GiB: 1600 regions, more than one 512-entry table. */
	s = topa_settings(200ull << 30, PTCFG_MODE_WRAP, true);
	s.maxphyaddr = 46;
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == 0 && out.nreg == 1600 && out.ntab == 4, "layout: 200 GiB over 4 tables",
	       "%d %s %u %u", r, err, out.nreg, out.ntab);
	ptout_free(&out, &ops);

	/* Fragmented memory: no block above 1M, so 4M comes as 4 x 1M. */
	mem.max_block = 1u << 20;
	s = topa_settings(4u << 20, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == 0 && out.nreg == 4 && out.reg[3].size == 1u << 20,
	       "layout: fragmented memory gives smaller regions", "%d %s %u", r, err, out.nreg);
	ptout_free(&out, &ops);

	/* Out of memory half way: error, nothing left allocated. */
	mem.max_block = 0;
	mem.limit = mem.next + (8u << 20);
	s = topa_settings(64u << 20, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == -1 && err[0] && simmem_live(&mem) == 0,
	       "layout: allocation failure frees everything", "%d %s live %u", r, err,
	       simmem_live(&mem));
	mem.limit = 0;

	/* Region list too small. */
	s = topa_settings(1ull << 30, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, 4, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	CHECKF(r == -1 && strstr(err, "regions") && simmem_live(&mem) == 0,
	       "layout: too many regions for the caller's list", "%d %s", r, err);

	/* Addresses above MAXPHYADDR are refused. */
	struct simmem high;
	simmem_init(&high, 1ull << 39);
	struct ptout_mem hops;
	simmem_ops(&high, &hops);
	s = topa_settings(8192, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &hops, &es);
	CHECKF(r == -1 && strstr(err, "MAXPHYADDR") && simmem_live(&high) == 0,
	       "layout: memory above MAXPHYADDR refused", "%d %s", r, err);
	simmem_release(&high);

	/* Single-entry ToPA (MENTRY=0, Broadwell): one region + END to the table. */
	s = topa_settings(1u << 20, PTCFG_MODE_STOP, false);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	r = ptout_build(&out, &s, &ops, &es);
	e0 = simmem_read64(&mem, out.tab[0].phys);
	uint64_t e1 = simmem_read64(&mem, out.tab[0].phys + 8);
	CHECKF(r == 0 && out.nreg == 1 && (e0 & TOPA_STOP) && e1 == (out.tab[0].phys | TOPA_END),
	       "layout: single-entry ToPA is one region and END back to the table", "%d %s",
	       r, err);
	CHECKF(model_enable(bdw, &mem, &out, &s, why, sizeof(why)) == 0,
	       "layout: model accepts single-entry ToPA on Broadwell", "%s", why);
	ptout_free(&out, &ops);
	/* ...and the model rejects a multi-entry table there. */
	s = topa_settings(8192 + 4096, PTCFG_MODE_STOP, true);
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	sb_init(&es, err, sizeof(err));
	ptout_build(&out, &s, &ops, &es);
	CHECKF(model_enable(bdw, &mem, &out, &s, why, sizeof(why)) > 0 &&
		       strstr(why, "one output region only"),
	       "model: multi-entry table on a MENTRY=0 CPU is an operational error", "%s", why);
	ptout_free(&out, &ops);

	/* The model catches broken tables (so the zero counts above mean something). */
	struct {
		const char *name;
		unsigned entry;
		uint64_t set, clear;
	} breaks[] = {
		{ "model: reserved bit 1 in an entry", 0, 1ull << 1, 0 },
		{ "model: reserved bit above MAXPHYADDR", 1, 1ull << 45, 0 },
		{ "model: region not aligned to its size", 0, 1ull << 12, 0 },
		{ "model: STOP on an END entry", 3, TOPA_STOP, 0 },
		{ "model: INT on an END entry", 3, TOPA_INT, 0 },
		{ "model: END in entry 0", 0, TOPA_END, 0 },
	};
	for (unsigned i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
		/* wrap mode: with STOP on entry 2 the CPU would never reach the END */
		s = topa_settings((4u << 20) + (12u << 10), PTCFG_MODE_WRAP, true);
		ptout_init(&out, regions, MAXREG, tables, MAXTAB);
		sb_init(&es, err, sizeof(err));
		ptout_build(&out, &s, &ops, &es);
		uint64_t a = out.tab[0].phys + 8ull * breaks[i].entry;
		uint64_t v = simmem_read64(&mem, a);
		ops.write64(ops.ctx, a, (v | breaks[i].set) & ~breaks[i].clear);
		CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) > 0, breaks[i].name,
		       "no error for entry 0x%llx", (unsigned long long)((v | breaks[i].set)));
		ptout_free(&out, &ops);
	}
	/* A region placed over the table: the model flags the overlap. */
	{
		s = topa_settings((4u << 20) + (12u << 10), PTCFG_MODE_WRAP, true);
		ptout_init(&out, regions, MAXREG, tables, MAXTAB);
		sb_init(&es, err, sizeof(err));
		ptout_build(&out, &s, &ops, &es);
		/* entry 2 is a 4K region: move it onto the table page */
		ops.write64(ops.ctx, out.tab[0].phys + 16, out.tab[0].phys);
		CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) > 0 &&
			       strstr(why, "overlaps"),
		       "model: output region over a ToPA table is flagged", "%s", why);
		ptout_free(&out, &ops);
	}
	/* Misaligned table base and bad single-range settings. */
	{
		s = topa_settings(8192, PTCFG_MODE_STOP, true);
		ptout_init(&out, regions, MAXREG, tables, MAXTAB);
		sb_init(&es, err, sizeof(err));
		ptout_build(&out, &s, &ops, &es);
		out.msr_base += 0x80;
		CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) > 0 &&
			       strstr(why, "4K aligned"),
		       "model: ToPA table base not 4K aligned", "%s", why);
		out.msr_base -= 0x80;
		out.msr_mask = (9000ull << 32) | 0x7f;
		CHECKF(model_enable(skl, &mem, &out, &s, why, sizeof(why)) > 0 &&
			       strstr(why, "OutputOffset"),
		       "model: ToPA OutputOffset beyond the region", "%s", why);
		ptout_free(&out, &ops);

		struct ptcfg_settings ss = s;
		ss.output = PTCFG_OUT_SINGLE;
		ss.mode = PTCFG_MODE_WRAP;
		ss.ctl = RTIT_CTL_BRANCHEN | RTIT_CTL_OS;
		ptout_init(&out, regions, MAXREG, tables, MAXTAB);
		sb_init(&es, err, sizeof(err));
		ptout_build(&out, &ss, &ops, &es);
		CHECKF(model_enable(skl, &mem, &out, &ss, why, sizeof(why)) == 0,
		       "model: single-range 8K accepted", "%s", why);
		out.msr_mask = 0x00000f7f;
		CHECKF(model_enable(skl, &mem, &out, &ss, why, sizeof(why)) > 0 &&
			       strstr(why, "contiguous"),
		       "model: non-contiguous single-range mask", "%s", why);
		out.msr_mask = 0x1fff;
		out.msr_base += 4096;
		CHECKF(model_enable(skl, &mem, &out, &ss, why, sizeof(why)) > 0 &&
			       strstr(why, "bits of the mask"),
		       "model: single-range base not aligned to the size", "%s", why);
		out.msr_base -= 4096;
		out.msr_mask = (0x2000ull << 32) | 0x1fff;
		CHECKF(model_enable(skl, &mem, &out, &ss, why, sizeof(why)) > 0 &&
			       strstr(why, "OutputOffset"),
		       "model: single-range OutputOffset beyond the mask", "%s", why);
		ptout_free(&out, &ops);
	}
	simmem_release(&mem);
}

/* ---- wrap reconstruction ------------------------------------------------ */

struct wrap_case {
	const char *profile;
	enum ptcfg_output output;
	enum ptcfg_mode mode;
	uint64_t size;
	unsigned per_table;
};

static void test_wrap(void)
{
	static const struct wrap_case cases[] = {
		{ "skylake-s-core-i7-6700k", PTCFG_OUT_SINGLE, PTCFG_MODE_WRAP, 4096, 0 },
		{ "skylake-s-core-i7-6700k", PTCFG_OUT_SINGLE, PTCFG_MODE_WRAP, 128, 0 },
		{ "skylake-s-core-i7-6700k", PTCFG_OUT_TOPA, PTCFG_MODE_WRAP, 7 * 4096, 3 },
		{ "skylake-s-core-i7-6700k", PTCFG_OUT_TOPA, PTCFG_MODE_STOP, 7 * 4096, 3 },
		{ "skylake-s-core-i7-6700k", PTCFG_OUT_TOPA, PTCFG_MODE_WRAP, 3 * 4096, 0 },
		{ "broadwell-u-core-i7-5500u", PTCFG_OUT_TOPA, PTCFG_MODE_WRAP, 8192, 0 },
		{ "broadwell-u-core-i7-5500u", PTCFG_OUT_TOPA, PTCFG_MODE_STOP, 8192, 0 },
	};
	static uint8_t sbuf[1 << 18], got[1 << 18];
	for (unsigned ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct wrap_case *wc = &cases[ci];
		const struct cpu_profile *p = find_profile(wc->profile);
		if (!CHECK(p, "wrap: profile present"))
			continue;
		uint64_t sz = wc->size;
		uint64_t amounts[] = { 0, 1, sz / 2, sz - 1, sz, sz + 1, 2 * sz + 17, 5 * sz + 4095 };
		unsigned bad = 0;
		char first[400] = "";
		for (unsigned ai = 0; ai < sizeof(amounts) / sizeof(amounts[0]); ai++) {
			/* emit in several pieces to cross region and table boundaries */
			for (unsigned pieces = 1; pieces <= 3; pieces++) {
				struct simmem mem;
				simmem_init(&mem, SIMMEM_DEFAULT_BASE);
				struct ptout_mem ops;
				simmem_ops(&mem, &ops);
				struct ptcfg_settings s = topa_settings(sz, wc->mode, p->caps.topa_multi);
				s.maxphyaddr = p->caps.maxphyaddr;
				if (wc->output == PTCFG_OUT_SINGLE) {
					s.output = PTCFG_OUT_SINGLE;
					s.ctl &= ~RTIT_CTL_TOPA;
				}
				struct ptout out;
				ptout_init(&out, regions, MAXREG, tables, MAXTAB);
				if (wc->per_table)
					out.per_table = wc->per_table;
				char err[256];
				struct strbuf es;
				sb_init(&es, err, sizeof(err));
				if (ptout_build(&out, &s, &ops, &es)) {
					bad++;
					snprintf(first, sizeof(first), "build: %s", err);
					simmem_release(&mem);
					continue;
				}
				struct ptmodel m;
				ptmodel_init(&m, &p->caps, &p->set, &mem);
				struct rtit_engine e;
				rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, NULL);
				rtit_start(&e, &es);
				uint64_t n = amounts[ai];
				make_stream(sbuf, 0, (size_t)n);
				uint64_t done = 0;
				for (unsigned k = 0; k < pieces; k++) {
					uint64_t part = k + 1 == pieces ? n - done : n / pieces;
					done += ptmodel_emit(&m, sbuf + done, (size_t)part);
				}
				rtit_stop(&e, &es);
				struct span_copy c = { .mem = &mem, .buf = got, .cap = sizeof(got) };
				struct ptout_extent ext;
				int rc = rtit_extract(&e, &ops, span_copy, &c, &ext);
				uint64_t keep = n < sz ? n : sz;
				const uint8_t *want = wc->mode == PTCFG_MODE_WRAP ? sbuf + n - keep : sbuf;
				bool wrapped_ok = wc->mode == PTCFG_MODE_STOP ? !ext.wrapped
					: (n > sz ? ext.wrapped : n < sz ? !ext.wrapped : true);
				bool full_ok = wc->mode == PTCFG_MODE_WRAP || ((n >= sz) == ext.full &&
									   (n >= sz) == ext.stopped);
				if (rc || c.len != keep || memcmp(got, want, (size_t)keep) || !wrapped_ok ||
				    !full_ok || m.gp || m.operr || ext.bytes != keep) {
					if (!bad++)
						snprintf(first, sizeof(first),
							 "n=%llu pieces=%u: rc %d got %zu want %llu wrapped %d "
							 "full %d stopped %d gp %u operr %u %.100s%.100s",
							 (unsigned long long)n, pieces, rc, c.len,
							 (unsigned long long)keep, ext.wrapped, ext.full,
							 ext.stopped, m.gp, m.operr, m.last_gp, m.last_operr);
				}
				ptout_free(&out, &ops);
				simmem_release(&mem);
			}
		}
		char name[200];
		snprintf(name, sizeof(name), "wrap: %s %s %s %llu bytes%s", wc->profile,
			 wc->output == PTCFG_OUT_SINGLE ? "single" : "topa",
			 wc->mode == PTCFG_MODE_WRAP ? "wrap" : "stop", (unsigned long long)sz,
			 wc->per_table ? " (3-entry tables)" : "");
		CHECKF(!bad, name, "%u failures, first: %s", bad, first);
	}

	/* MSRs that point outside the layout. */
	struct simmem mem;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	struct ptout_mem ops;
	simmem_ops(&mem, &ops);
	struct ptcfg_settings s = topa_settings(12288, PTCFG_MODE_WRAP, true); /* 8K + 4K */
	struct ptout out;
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	char err[128];
	struct strbuf es;
	sb_init(&es, err, sizeof(err));
	ptout_build(&out, &s, &ops, &es);
	struct ptout_extent ext;
	CHECK(ptout_extract(&out, 0x1000, 0x7f, 0, &ops, NULL, NULL, &ext) == -1 && ext.bad_pointer,
	      "extract: unknown table base is reported");
	CHECK(ptout_extract(&out, out.tab[0].phys, (9000ull << 32) | 0x7f, 0, &ops, NULL, NULL,
			    &ext) == -1,
	      "extract: offset beyond the region is reported");
	CHECK(ptout_extract(&out, out.tab[0].phys, (1ull << 7) | 0x7f, 0, &ops, NULL, NULL, &ext) ==
			      0 && ext.bytes == 8192 && !ext.wrapped,
	      "extract: pointer at entry 1 offset 0 means region 0 is full");
	{
		/* single-range: an offset past the mask means it went round */
		struct ptcfg_settings ss = s;
		ss.output = PTCFG_OUT_SINGLE;
		ss.size = 4096;
		struct ptout so;
		static struct ptout_region sreg[1];
		ptout_init(&so, sreg, 1, NULL, 0);
		sb_init(&es, err, sizeof(err));
		ptout_build(&so, &ss, &ops, &es);
		CHECK(ptout_extract(&so, so.reg[0].base, (0x1010ull << 32) | 0xfff, 0, &ops, NULL,
				    NULL, &ext) == 0 && ext.wrapped && ext.bytes == 4096 && ext.spans == 2,
		      "extract: single-range offset beyond the mask counts as a wrap");
		ptout_free(&so, &ops);
	}
	CHECK(ptout_extract(&out, out.tab[0].phys, (2ull << 7) | 0x7f, 0, &ops, NULL, NULL, &ext) ==
			      0 && ext.bytes == 0,
	      "extract: pointer on the END entry continues at the next table");
	ptout_free(&out, &ops);
	simmem_release(&mem);
}

/* ---- sequence ----------------------------------------------------------- */

/* cpu_ops that fail the fail_at-th WRMSR with #GP, else pass to the model. */
struct faulty {
	const struct cpu_ops *inner;
	unsigned fail_at, writes;
};

static int faulty_rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
	struct faulty *f = ctx;
	return f->inner->rdmsr(f->inner->ctx, msr, v);
}

static int faulty_wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
	struct faulty *f = ctx;
	if (++f->writes == f->fail_at)
		return CPU_FAULT_GP;
	return f->inner->wrmsr(f->inner->ctx, msr, v);
}

static void test_sequence(void)
{
	const struct cpu_profile *p = find_profile("ice-lake-sp-xeon-gold-6330");
	if (!p)
		p = find_profile("skylake-s-core-i7-6700k");
	if (!CHECK(p, "sequence: profile present"))
		return;
	struct simmem mem;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	struct ptout_mem ops;
	simmem_ops(&mem, &ops);
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	cfg.cr3_filter = true;
	cfg.cr3 = 0x1000;
	cfg.range[cfg.nranges++] = (struct ptcfg_range){ .cfg = 1, .a = 0x1000, .b = 0x2000 };
	char msg[1024];
	struct strbuf ms;
	sb_init(&ms, msg, sizeof(msg));
	struct ptcfg_settings s;
	int r = ptcfg_validate(&cfg, &p->caps, &s, &ms);
	struct ptout out;
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	r |= ptout_build(&out, &s, &ops, &ms);
	if (!CHECKF(r == 0, "sequence: config valid", "%s", msg))
		return;

	struct ptmodel m;
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	struct rtit_log log;
	rtit_log_init(&log, steps, 256);
	struct rtit_engine e;
	rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, &log);
	r = rtit_start(&e, &ms);
	static const struct {
		enum rtit_op op;
		uint32_t msr;
	} want[] = {
		{ RTIT_OP_TOPA, 0 },
		{ RTIT_OP_RDMSR, MSR_IA32_RTIT_CTL },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_STATUS },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_OUTPUT_BASE },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_OUTPUT_MASK_PTRS },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_CR3_MATCH },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_ADDR0_A },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_ADDR0_B },
		{ RTIT_OP_WRMSR, MSR_IA32_RTIT_CTL },
	};
	bool order = r == RTIT_OK && log.n == sizeof(want) / sizeof(want[0]);
	for (unsigned i = 0; order && i < log.n; i++)
		order = log.steps[i].op == want[i].op && log.steps[i].msr == want[i].msr;
	CHECKF(order, "sequence: 33.3.2 order, STATUS cleared first, RTIT_CTL last",
	       "rc %d, %u steps %s", r, log.n, msg);
	CHECK(log.steps[2].value == 0, "sequence: STATUS written as 0");
	CHECK(log.steps[log.n - 1].value == (s.ctl | RTIT_CTL_TRACEEN),
	      "sequence: RTIT_CTL = validated value | TraceEn");
	unsigned before = log.n;
	r = rtit_stop(&e, &ms);
	CHECKF(r == RTIT_OK && log.n == before + 4 && log.steps[before].op == RTIT_OP_WRMSR &&
		       log.steps[before].msr == MSR_IA32_RTIT_CTL &&
		       !(log.steps[before].value & RTIT_CTL_TRACEEN) &&
		       log.steps[before + 1].msr == MSR_IA32_RTIT_OUTPUT_BASE &&
		       log.steps[before + 2].msr == MSR_IA32_RTIT_OUTPUT_MASK_PTRS &&
		       log.steps[before + 3].msr == MSR_IA32_RTIT_STATUS,
	       "sequence: stop clears TraceEn, then reads OUTPUT_BASE, MASK_PTRS, STATUS", "%d %s",
	       r, msg);
	CHECK(m.gp == 0 && m.operr == 0, "sequence: no #GP, no operational error");
	CHECK(rtit_stop(&e, &ms) == RTIT_STATE, "sequence: stop twice is refused");

	/* The shared JSON Lines printer and the manifest object. */
	{
		static char line[8192];
		struct strbuf sb;
		sb_init(&sb, line, sizeof(line));
		rtit_step_jsonl(&log.steps[0], &out, &sb);
		json_error_t jerr;
		json_t *j = json_loads(line, 0, &jerr);
		json_t *ents = j ? json_object_get(j, "entries") : NULL;
		json_t *e0 = ents ? json_array_get(ents, 0) : NULL;
		json_t *last = ents ? json_array_get(ents, json_array_size(ents) - 1) : NULL;
		char want_base[32];
		snprintf(want_base, sizeof(want_base), "0x%llx",
			 (unsigned long long)(simmem_read64(&mem, out.tab[0].phys) & ~0xfffull));
		CHECKF(e0 && last && !strcmp(json_string_value(json_object_get(j, "op")), "topa") &&
			       !strcmp(json_string_value(json_object_get(e0, "base")), want_base) &&
			       json_integer_value(json_object_get(e0, "size")) == 4 << 20 &&
			       json_is_true(json_object_get(e0, "stop")) &&
			       json_is_true(json_object_get(last, "end")),
		       "jsonl: topa step matches the table in memory", "%s", line);
		json_decref(j);
		sb_init(&sb, line, sizeof(line));
		rtit_step_jsonl(&log.steps[log.n - 1], &out, &sb);
		CHECKF(!strcmp(line, "{\"op\":\"rdmsr\",\"msr\":\"0x571\"}"),
		       "jsonl: rdmsr step", "%s", line);
		struct ptout_extent ext;
		rtit_extract(&e, &ops, NULL, NULL, &ext);
		sb_init(&sb, line, sizeof(line));
		rtit_trace_json(&e, &ext, &sb);
		j = json_loads(line, 0, &jerr);
		CHECKF(j && !strcmp(json_string_value(json_object_get(j, "output")), "topa") &&
			       json_integer_value(json_object_get(j, "size")) == 4 << 20 &&
			       json_is_false(json_object_get(j, "wrapped")) &&
			       json_integer_value(json_object_get(j, "bytes")) == 0 &&
			       json_string_value(json_object_get(j, "cr3_match")) &&
			       json_array_size(json_object_get(j, "ranges")) == 1,
		       "manifest: trace object parses and says what happened", "%s", line);
		json_decref(j);
	}

	/* Firmware already tracing (its own single-range buffer). */
	uint64_t fw_base;
	ops.alloc(ops.ctx, 8192, 8192, &fw_base);
	uint64_t fw_ctl = RTIT_CTL_TRACEEN | RTIT_CTL_BRANCHEN | RTIT_CTL_OS | RTIT_CTL_TSCEN;
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_BASE, fw_base);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, (0x100ull << 32) | 0x1fff);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_CR3_MATCH, 0xabc000);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_ADDR_A(1), 0x4000);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_CTL, fw_ctl);
	ptmodel_clear_counts(&m);
	rtit_log_init(&log, steps, 256);
	rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, &log);
	sb_init(&ms, msg, sizeof(msg));
	r = rtit_start(&e, &ms);
	CHECKF(r == RTIT_BUSY && m.wrmsr_count == 0 && strstr(msg, "--force") && m.u.ctl == fw_ctl,
	       "sequence: TraceEn already set is reported and left alone", "%d %u %s", r,
	       m.wrmsr_count, msg);

	s.force = true;
	rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, &log);
	sb_init(&ms, msg, sizeof(msg));
	r = rtit_start(&e, &ms);
	CHECKF(r == RTIT_OK && e.took_over && m.gp == 0 && m.operr == 0 && m.u.ctl != fw_ctl,
	       "sequence: --force takes over", "%d %s %s %s", r, msg, m.last_gp, m.last_operr);
	r = rtit_stop(&e, &ms);
	CHECKF(r == RTIT_OK && m.gp == 0 && m.u.ctl == fw_ctl && m.u.base == fw_base &&
		       (m.u.mask | 0x7f) == ((0x100ull << 32) | 0x1fff) && m.u.cr3 == 0xabc000 &&
		       m.u.addr_a[1] == 0x4000 && m.u.addr_a[0] == 0,
	       "sequence: --force restores firmware's configuration at stop", "%d %s %s", r, msg,
	       m.last_gp);

	/* A WRMSR that faults half way: PT stays off, firmware's settings come back. */
	{
		unsigned bad = 0;
		char first[300] = "";
		for (unsigned k = 1; k <= 12; k++) {
			ptmodel_init(&m, &p->caps, &p->set, &mem);
			m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_BASE, fw_base);
			m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, 0x1fff);
			m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_CTL, fw_ctl);
			ptmodel_clear_counts(&m);
			struct faulty f = { .inner = &m.ops, .fail_at = k };
			struct cpu_ops fops = { .cpuid = m.ops.cpuid, .rdmsr = faulty_rdmsr,
						.wrmsr = faulty_wrmsr, .rdtsc = m.ops.rdtsc, .ctx = &f };
			rtit_engine_init(&e, &fops, &p->caps, &s, &out, NULL);
			sb_init(&ms, msg, sizeof(msg));
			r = rtit_start(&e, &ms);
			bool ok_run = f.writes < k && r == RTIT_OK;     /* fewer writes than k */
			bool fault_run = r == RTIT_FAULT && m.u.ctl == fw_ctl && m.gp == 0 &&
					 strstr(msg, "faulted");
			if (!(ok_run || fault_run) && !bad++)
				snprintf(first, sizeof(first), "k=%u rc %d ctl 0x%llx %.200s", k, r,
					 (unsigned long long)m.u.ctl, msg);
		}
		CHECKF(!bad, "sequence: a faulting WRMSR leaves firmware's tracing as it was",
		       "%u failures, first %s", bad, first);
	}
	ptout_free(&out, &ops);
	simmem_release(&mem);

	/* No PT: the engine does not touch an MSR. */
	const struct cpu_profile *hv = find_profile("comet-lake-xeon-w-1290p-as-seen");
	if (hv) {
		ptmodel_init(&m, &hv->caps, &hv->set, &mem);
		rtit_engine_init(&e, &m.ops, &hv->caps, &s, &out, NULL);
		sb_init(&ms, msg, sizeof(msg));
		CHECK(rtit_start(&e, &ms) == RTIT_STATE && m.rdmsr_count == 0 && m.wrmsr_count == 0,
		      "sequence: no MSR access without Intel PT");
	}
}

/*
 * rtit_position: the exact trace position while tracing, over a ToPA of
 * 16K, 8K and 4K regions, with the model holding the last 64 bytes in the
 * CPU as 33.2.8.2 allows: the output MSRs read with TraceEn=1 lag behind,
 * the pause (TraceEn cleared, read, set again) gives the offset of the
 * next byte in the trace, and tracing goes on after it.
 */
static void test_position(void)
{
	const struct cpu_profile *p = find_profile("skylake-s-core-i7-6700k");
	if (!CHECK(p, "position: profile present"))
		return;
	static struct simmem mem;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	struct ptout_mem ops;
	simmem_ops(&mem, &ops);
	struct ptcfg_settings s = topa_settings(28u << 10, PTCFG_MODE_STOP, true);
	struct ptout out;
	ptout_init(&out, regions, MAXREG, tables, MAXTAB);
	char msg[512];
	struct strbuf ms;
	sb_init(&ms, msg, sizeof(msg));
	if (!CHECKF(!ptout_build(&out, &s, &ops, &ms) && out.nreg == 3, "position: 3 regions",
		    "%s", msg))
		return;
	struct ptmodel m;
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	m.hold = 64;
	struct rtit_engine e;
	rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, NULL);
	uint64_t pos = 0;
	CHECK(rtit_position(&e, &pos, &ms) == RTIT_STATE, "position: refused before start");
	CHECKF(rtit_start(&e, &ms) == RTIT_OK, "position: started", "%s", msg);
	static uint8_t sbuf[32u << 10], got[32u << 10];
	make_stream(sbuf, 0, sizeof(sbuf));
	ptmodel_emit(&m, sbuf, 20000);
	uint64_t base = 0, mask = 0, lag = 0;
	m.ops.rdmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_BASE, &base);
	m.ops.rdmsr(m.ops.ctx, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, &mask);
	CHECKF(!ptout_position(&out, base, mask, 0, &lag) && lag == 20000 - 64,
	       "position: read with TraceEn=1 the MSRs lag by what the CPU holds", "%llu",
	       (unsigned long long)lag);
	int r = rtit_position(&e, &pos, &ms);
	CHECKF(r == RTIT_OK && pos == 20000, "position: paused, it is exact (in the second region)",
	       "rc %d pos %llu %s", r, (unsigned long long)pos, msg);
	CHECK(e.running && (m.u.ctl & RTIT_CTL_TRACEEN) && m.u.ctl == e.ctl,
	      "position: tracing resumed with the same IA32_RTIT_CTL");
	ptmodel_emit(&m, sbuf + 20000, 3000);
	CHECKF(rtit_stop(&e, &ms) == RTIT_OK, "position: stopped", "%s", msg);
	struct span_copy c = { .mem = &mem, .buf = got, .cap = sizeof(got) };
	struct ptout_extent ext;
	CHECK(!rtit_extract(&e, &ops, span_copy, &c, &ext) && c.len == 23000 &&
		      !memcmp(got, sbuf, 23000),
	      "position: the trace is whole across the pause");
	CHECKF(m.gp == 0 && m.operr == 0 && m.stale_status == 0, "position: no #GP, no error",
	       "%s %s", m.last_gp, m.last_operr);

	/* the buffer filled (ToPA STOP): its end, and tracing not resumed */
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	rtit_engine_init(&e, &m.ops, &p->caps, &s, &out, NULL);
	rtit_start(&e, &ms);
	ptmodel_emit(&m, sbuf, sizeof(sbuf));
	sb_init(&ms, msg, sizeof(msg));
	r = rtit_position(&e, &pos, &ms);
	CHECKF(r == RTIT_STATE && pos == out.size && strstr(msg, "Stopped") &&
		       !(m.u.ctl & RTIT_CTL_TRACEEN) && m.stale_status == 0,
	       "position: a full buffer gives its end and is not enabled again", "rc %d pos %llu %s",
	       r, (unsigned long long)pos, msg);
	CHECK(rtit_stop(&e, &ms) == RTIT_OK, "position: stop after a full buffer");
	ptout_free(&out, &ops);
}

int main(void)
{
	int n = cpu_profiles_load(profiles, CPU_PROFILES_MAX);
	if (n <= 0) {
		CHECK(0, "load CPU profiles from " CPU_PROFILES_DIR);
		return check_exit();
	}
	nprofiles = (unsigned)n;
	test_validation();
	test_topa_layout();
	test_wrap();
	test_sequence();
	test_position();
	test_sweep();
	return check_exit();
}
