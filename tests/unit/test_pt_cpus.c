/*
 * Intel PT on several CPUs (arch/x86_64/pt_cpus.c, efipt.efi trace --cpus)
 * against one PT model per CPU (tests/lib/pt_model) over the real CPU
 * profiles: each CPU programmed on itself with its own buffer and found
 * again after the stop; a hybrid part validated per core type; Goldmont's
 * per-core MSRs traced from one thread per core; and every failure on one
 * AP (refused, unreachable, #GP) leaving no CPU with TraceEn set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pt_cpus.h"
#include "arch/x86_64/pt_msr.h"
#include "check.h"
#include "core/pt_rtit.h"
#include "host/util/sim_mem.h"
#include "lib/cpu_profiles.h"
#include "lib/pt_model.h"
#include "lib/span_copy.h"

#define NCPU 4
#define MAXREG 64
#define MAXTAB 4

static struct cpu_profile profiles[CPU_PROFILES_MAX];
static unsigned nprofiles;

/* The machine: a model per CPU, one memory, and what goes wrong where. */
static struct machine {
	struct simmem mem;
	struct ptout_mem memops;
	struct ptmodel m[NCPU];
	struct cpu_ops ops[NCPU];	/* the model's, through the fault injector */
	int here;			/* the CPU running a procedure, or -1 */
	int unreachable;		/* on_cpu fails for this CPU ... */
	int unreachable_after;		/* ... from this call on */
	int calls;
	int gp_ctl_cpu;			/* WRMSR IA32_RTIT_CTL with TraceEn #GPs here */
	bool wrong_cpu;			/* a model was touched from another CPU */
} mach;

static struct ptcpu cpu[NCPU];
static struct ptout_region reg[NCPU][MAXREG];
static struct ptout_table tab[NCPU][MAXTAB];

static int inj_rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
	struct ptmodel *m = ctx;
	mach.wrong_cpu |= &mach.m[mach.here] != m;
	return m->ops.rdmsr(m->ops.ctx, msr, v);
}

static int inj_wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
	struct ptmodel *m = ctx;
	mach.wrong_cpu |= &mach.m[mach.here] != m;
	if (mach.gp_ctl_cpu >= 0 && m == &mach.m[mach.gp_ctl_cpu] && msr == MSR_IA32_RTIT_CTL &&
	    (v & RTIT_CTL_TRACEEN))
		return CPU_FAULT_GP;
	return m->ops.wrmsr(m->ops.ctx, msr, v);
}

static void inj_cpuid(void *ctx, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	struct ptmodel *m = ctx;
	mach.wrong_cpu |= &mach.m[mach.here] != m;
	m->ops.cpuid(m->ops.ctx, leaf, sub, r);
}

static uint64_t inj_rdtsc(void *ctx)
{
	struct ptmodel *m = ctx;
	return m->ops.rdtsc(m->ops.ctx);
}

static int on_cpu(void *ctx, unsigned i, void (*fn)(void *), void *arg)
{
	(void)ctx;
	int call = mach.calls++;
	if ((int)i == mach.unreachable && call >= mach.unreachable_after)
		return -1;
	mach.here = (int)i;
	fn(arg);
	mach.here = -1;
	return 0;
}

static const struct cpu_ops *ops_of(void *ctx, unsigned i)
{
	(void)ctx;
	return &mach.ops[i];
}

static const struct ptcpus_env env = { on_cpu, ops_of, &mach.memops, NULL };

/* Four CPUs, CPU i of profile p[i]; package 0, core i / 2 when shared. */
static void machine(const struct cpu_profile *const p[NCPU], bool two_threads_per_core)
{
	simmem_reset(&mach.mem);
	simmem_ops(&mach.mem, &mach.memops);
	mach.here = -1;
	mach.unreachable = -1;
	mach.unreachable_after = 0;
	mach.calls = 0;
	mach.gp_ctl_cpu = -1;
	mach.wrong_cpu = false;
	for (unsigned i = 0; i < NCPU; i++) {
		ptmodel_init(&mach.m[i], &p[i]->caps, &p[i]->set, &mach.mem);
		mach.ops[i] = (struct cpu_ops){ inj_cpuid, inj_rdmsr, inj_wrmsr, inj_rdtsc,
						&mach.m[i] };
		memset(&cpu[i], 0, sizeof(cpu[i]));
		cpu[i].number = i;
		cpu[i].apic_id = 2 * i;
		cpu[i].core = two_threads_per_core ? i / 2 : i;
		cpu[i].reg = reg[i];
		cpu[i].max_reg = MAXREG;
		cpu[i].tab = tab[i];
		cpu[i].max_tab = MAXTAB;
	}
}

static unsigned trace_en_set(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < NCPU; i++)
		n += (mach.m[i].u.ctl & RTIT_CTL_TRACEEN) != 0;
	return n;
}

static unsigned faults(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < NCPU; i++)
		n += mach.m[i].gp + mach.m[i].operr;
	return n;
}

static void options(struct ptcfg *cfg, const char *const *argv)
{
	char err[200];
	struct strbuf eb;
	sb_init(&eb, err, sizeof(err));
	ptcfg_init(cfg);
	for (; *argv; argv++)
		if (ptcfg_option(cfg, *argv, NULL, &eb) != 1)
			printf("# option %s: %s\n", *argv, err);
}

/* A fresh machine of these profiles, identified and prepared for opts. */
static int bring_up(struct ptcpus *c, const struct cpu_profile *const ps[NCPU], bool shared_cores,
		    const char *const *opts, struct strbuf *msg)
{
	machine(ps, shared_cores);
	struct ptcfg cfg;
	options(&cfg, opts);
	ptcpus_init(c, cpu, NCPU, &env);
	int rc = ptcpus_identify(c, NULL, msg);
	return rc ? rc : ptcpus_prepare(c, &cfg, msg);
}

/* Every CPU traced: its own bytes, in its own buffer, found again. */
static void test_all_cpus(const struct cpu_profile *p)
{
	const struct cpu_profile *ps[NCPU] = { p, p, p, p };
	struct ptcpus c;
	char m[2048];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	int rc = bring_up(&c, ps, false, (const char *const[]){ "--size=16K", NULL }, &msg);
	rc = rc ? rc : ptcpus_start(&c, &msg);
	CHECKF(rc == 0 && trace_en_set() == NCPU && ptcpus_running(&c) == NCPU,
	       "all: every CPU started on itself", "rc %d, %u with TraceEn: %s", rc,
	       trace_en_set(), m);
	/* each CPU writes bytes that name it */
	static uint8_t bytes[NCPU][3000];
	for (unsigned i = 0; i < NCPU; i++) {
		for (unsigned k = 0; k < sizeof(bytes[i]); k++)
			bytes[i][k] = (uint8_t)(0x10 * (i + 1) + k % 13);
		ptmodel_emit(&mach.m[i], bytes[i], sizeof(bytes[i]) - 100 * i);
	}
	rc = ptcpus_stop(&c, &msg);
	CHECKF(rc == 0 && trace_en_set() == 0 && ptcpus_running(&c) == 0,
	       "all: every CPU stopped", "rc %d, %u with TraceEn", rc, trace_en_set());
	bool same = true;
	for (unsigned i = 0; i < NCPU; i++) {
		static uint8_t buf[1 << 16];
		struct span_copy col = { .mem = &mach.mem, .buf = buf, .cap = sizeof(buf) };
		struct ptout_extent ext;
		ptcpus_extract(&c, i, span_copy, &col, &ext);
		size_t want = sizeof(bytes[i]) - 100 * i;
		if (col.len != want || memcmp(col.buf, bytes[i], want)) {
			printf("# CPU %u: %zu bytes, want %zu\n", i, col.len, want);
			same = false;
		}
	}
	CHECK(same, "all: each CPU's trace is its own bytes");
	CHECKF(!faults() && !mach.wrong_cpu, "all: no #GP, no operational error, each CPU "
	       "programmed only on itself", "%u faults, wrong cpu %d", faults(), mach.wrong_cpu);
	ptcpus_free(&c);
	CHECK(simmem_live(&mach.mem) == 0, "all: every buffer freed");
	/* distinct buffers */
	CHECK(cpu[1].out.tab[0].phys != cpu[2].out.tab[0].phys, "all: a ToPA per CPU");
}

/* A hybrid part: the E-core takes CycThresh 8, the P-core does not. */
static void test_hybrid(void)
{
	const struct cpu_profile *pc = cpu_profile_find(profiles, nprofiles,
							"alder-lake-s-core-i9-12900k-p-core");
	const struct cpu_profile *ec = cpu_profile_find(profiles, nprofiles,
							"alder-lake-s-core-i9-12900k-e-core");
	if (!CHECK(pc && ec, "hybrid: Alder Lake P- and E-core profiles"))
		return;
	const struct cpu_profile *ps[NCPU] = { ec, ec, pc, ec };
	struct ptcpus c;
	char m[2048];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	int rc = bring_up(&c, ps, false, (const char *const[]){ "--cyc=8", NULL }, &msg);
	CHECKF(rc && strstr(m, "CPU 2 (APIC ID 0x4)") && strstr(m, "cycle threshold") &&
	       !strstr(m, "CPU 1 ("), "hybrid: refused on the P-core, by name", "rc %d: %s", rc, m);
	unsigned writes = 0;
	for (unsigned i = 0; i < NCPU; i++)
		writes += mach.m[i].wrmsr_count;
	CHECKF(writes == 0 && simmem_live(&mach.mem) == 0,
	       "hybrid: no WRMSR anywhere, nothing allocated", "%u writes, %u blocks", writes,
	       simmem_live(&mach.mem));
	/* what every core type takes goes on each with its own settings */
	sb_reset(&msg);
	rc = bring_up(&c, ps, false, (const char *const[]){ "--cyc=3", NULL }, &msg);
	rc = rc ? rc : ptcpus_start(&c, &msg);
	ptcpus_stop(&c, &msg);
	CHECKF(rc == 0 && !faults() && trace_en_set() == 0, "hybrid: --cyc=3 on every core type",
	       "rc %d, %u faults: %s", rc, faults(), m);
	ptcpus_free(&c);
}

/* A failure on one AP while starting: every CPU started before is stopped. */
static void test_start_failure(const struct cpu_profile *p, bool unreachable)
{
	const char *what = unreachable ? "unreachable AP" : "#GP on an AP";
	const struct cpu_profile *ps[NCPU] = { p, p, p, p };
	struct ptcpus c;
	char m[4096];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	int rc = bring_up(&c, ps, false, (const char *const[]){ "--size=8K", NULL }, &msg);
	if (unreachable) {
		mach.unreachable = 3; /* answers CPUID, then not the start */
		mach.unreachable_after = mach.calls;
	} else {
		mach.gp_ctl_cpu = 3;
	}
	rc = rc ? rc : ptcpus_start(&c, &msg);
	char name[80];
	snprintf(name, sizeof(name), "%s: the start fails, naming CPU 3", what);
	CHECKF(rc != 0 && strstr(m, "CPU 3 (APIC ID 0x6)"), name, "rc %d: %s", rc, m);
	snprintf(name, sizeof(name), "%s: no CPU left with TraceEn set", what);
	CHECKF(trace_en_set() == 0 && ptcpus_running(&c) == 0 && mach.m[1].enables == 1, name,
	       "%u with TraceEn, CPU 1 enabled %u times: %s", trace_en_set(), mach.m[1].enables,
	       m);
	snprintf(name, sizeof(name), "%s: the BSP was never started", what);
	CHECK(mach.m[0].enables == 0, name);
	ptcpus_free(&c);
	snprintf(name, sizeof(name), "%s: every buffer freed", what);
	CHECK(simmem_live(&mach.mem) == 0, name);
}

/* An AP that does not answer the stop: said, not hidden. */
static void test_stop_unreachable(const struct cpu_profile *p)
{
	const struct cpu_profile *ps[NCPU] = { p, p, p, p };
	struct ptcpus c;
	char m[4096];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	int rc = bring_up(&c, ps, false, (const char *const[]){ "--size=8K", NULL }, &msg);
	rc = rc ? rc : ptcpus_start(&c, &msg);
	mach.unreachable = 2;
	mach.unreachable_after = mach.calls;
	int src = ptcpus_stop(&c, &msg);
	CHECKF(rc == 0 && src != 0 && strstr(m, "CPU 2 (APIC ID 0x4)") &&
	       strstr(m, "may still be set") && trace_en_set() == 1 &&
	       !(mach.m[3].u.ctl & RTIT_CTL_TRACEEN),
	       "stop: an AP that does not answer is named; the others are stopped",
	       "rc %d/%d, %u with TraceEn: %s", rc, src, trace_en_set(), m);
	mach.unreachable = -1;
	ptcpus_stop(&c, &msg);
	ptcpus_free(&c);
}

/* Goldmont: one thread per core. */
static void test_goldmont(void)
{
	const struct cpu_profile *p = cpu_profile_find(profiles, nprofiles, "apollo-lake");
	if (!CHECK(p != NULL, "goldmont: Apollo Lake profile"))
		return;
	const struct cpu_profile *ps[NCPU] = { p, p, p, p };
	struct ptcpus c;
	char m[4096];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	int rc = bring_up(&c, ps, true, (const char *const[]){ "--size=8K", NULL }, &msg);
	rc = rc ? rc : ptcpus_start(&c, &msg);
	CHECKF(rc == 0 && cpu[1].state == PTCPU_SHARED && cpu[1].shared_with == 0 &&
	       cpu[3].state == PTCPU_SHARED && cpu[3].shared_with == 2 &&
	       mach.m[1].wrmsr_count == 0 && mach.m[3].wrmsr_count == 0 &&
	       mach.m[0].enables == 1 && mach.m[2].enables == 1,
	       "goldmont: one thread per core programmed", "rc %d: %s", rc, m);
	CHECKF(strstr(m, "CPU 1 (APIC ID 0x2): not traced") && strstr(m, "per core"),
	       "goldmont: says so", "%s", m);
	ptcpus_stop(&c, &msg);
	CHECK(trace_en_set() == 0, "goldmont: stopped");
	ptcpus_free(&c);
}

/* A CPU without PT (the emulation profile lacks it, or CPUID says no). */
static void test_no_pt(void)
{
	const struct cpu_profile *p = cpu_profile_find(profiles, nprofiles, "skylake-u-core-i7-6500u");
	const struct cpu_profile *q = cpu_profile_find(profiles, nprofiles, "qemu-kvm-guest");
	if (!CHECK(p && q && q->caps.absent != PTCAPS_PRESENT, "no PT: profiles"))
		return;
	const struct cpu_profile *ps[NCPU] = { p, p, p, q };
	machine(ps, false);
	struct ptcpus c;
	char m[1024];
	struct strbuf msg;
	sb_init(&msg, m, sizeof(m));
	ptcpus_init(&c, cpu, NCPU, &env);
	int rc = ptcpus_identify(&c, NULL, &msg);
	CHECKF(rc && strstr(m, "CPU 3 (APIC ID 0x6): Intel PT not supported"),
	       "no PT: the CPU is named", "%s", m);
	/* emulated: every CPU takes the profile's PT */
	sb_reset(&msg);
	rc = ptcpus_identify(&c, &p->set, &msg);
	CHECKF(!rc && cpu[3].caps.absent == PTCAPS_PRESENT && cpu[3].caps.topa,
	       "emulated: every CPU takes the profile's capabilities", "%s", m);
}

int main(void)
{
	int n = cpu_profiles_load(profiles, CPU_PROFILES_MAX);
	if (!CHECK(n > 0, "profiles loaded"))
		return check_exit();
	nprofiles = (unsigned)n;
	simmem_init(&mach.mem, SIMMEM_DEFAULT_BASE);
	const struct cpu_profile *sky = cpu_profile_find(profiles, nprofiles, "skylake-u-core-i7-6500u");
	const struct cpu_profile *tgl = cpu_profile_find(profiles, nprofiles, "tiger-lake-h");
	if (!CHECK(sky && tgl, "Skylake and Tiger Lake profiles"))
		return check_exit();
	test_all_cpus(sky);
	test_all_cpus(tgl);
	test_hybrid();
	test_start_failure(sky, true);
	test_start_failure(sky, false);
	test_stop_unreachable(sky);
	test_goldmont();
	test_no_pt();
	simmem_release(&mach.mem);
	return check_exit();
}
