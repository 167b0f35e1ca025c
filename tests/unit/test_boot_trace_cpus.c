/*
 * The firmware boot trace on the application processors (EfiptDxe --cpus,
 * arch/x86_64/boot_trace_cpus.c) against one PT model per CPU: EfiptPei's
 * start on the boot processor, EfiptDxe's start of the APs through the
 * per-CPU engine, each CPU's stream found again by collect's path through
 * the table's per-CPU records; a CPU without PT, Goldmont's shared cores, a
 * list naming no CPU, a disabled AP and an AP that does not answer the stop
 * each reported in its record while the others trace; the table's AP
 * records refused when forged.
 */
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/boot_trace_cpus.h"
#include "check.h"
#include "core/pt_rtit.h"
#include "host/util/sim_mem.h"
#include "lib/cpu_profiles.h"
#include "lib/pt_model.h"
#include "lib/span_copy.h"

#define NCPU 4

static struct cpu_profile profiles[CPU_PROFILES_MAX];
static unsigned nprof;

static struct simmem mem;
static struct ptout_mem memops;
static struct ptmodel model[NCPU];
static struct boottrace_work work;
static struct boottrace_aps aps;
static struct {
	const struct cpu_profile *p[NCPU];
	unsigned core[NCPU];
	int disabled;		/* info says so */
	int deaf;		/* on_cpu fails for it ... */
	int deaf_after;		/* ... after this many calls to it */
	int calls[NCPU];
	int here;
	const struct cpuid_set *seen;	/* CPUID the CPUs report, if not their profile's */
	const struct cpuid_set *profile; /* EfiptPei's emulated caps (test builds) */
} mach;

static int info(void *ctx, unsigned n, uint32_t *apic, uint32_t *package, uint32_t *core,
		int *usable)
{
	(void)ctx;
	if (n >= NCPU)
		return -1;
	*apic = 0x10 + 2 * n;
	*package = 0;
	*core = mach.core[n];
	*usable = (int)n != mach.disabled;
	return 0;
}

static int on_cpu(void *ctx, unsigned n, void (*fn)(void *), void *arg)
{
	(void)ctx;
	if ((int)n == mach.deaf && mach.calls[n]++ >= mach.deaf_after)
		return -1;
	mach.here = (int)n;
	fn(arg);
	mach.here = 0;
	return 0;
}

static const struct cpu_ops *ops_of(void *ctx, unsigned n)
{
	(void)ctx;
	return &model[n].ops;
}

static const struct boottrace_mp mp = { NCPU, 0, info, on_cpu, ops_of, NULL };

static bool sim_reserved(void *ctx, uint64_t base, uint64_t size)
{
	return simmem_find(ctx, base, size) != NULL;
}

/* The table EfiptDxe publishes: the BSP's record, no images, the APs' records. */
static struct {
	struct fwtrace_rec rec;
	struct fwtrace_rec cpus[FWTRACE_MAX_CPUS];
} table;

static uint8_t pattern(unsigned cpu, size_t i) { return (uint8_t)((i * 7 + cpu * 31) % 251 + 1); }

struct run {
	uint32_t pei_status;
	unsigned started, stop_failed;
	unsigned traceen_after_start, traceen_after_stop, faults;
	int check_rc;
	bool streams_ok;	/* every STOPPED AP's trace read back exactly */
	char why[400];
};

/* A boot: PEI on CPU 0, DXE's APs, CPU-specific bytes, the stop, collect's checks. */
static void boot(const char *profile_names[NCPU], const char *options, struct run *r)
{
	memset(r, 0, sizeof(*r));
	simmem_reset(&mem);
	simmem_ops(&mem, &memops);
	mach.here = 0;
	memset(mach.calls, 0, sizeof(mach.calls));
	for (unsigned i = 0; i < NCPU; i++) {
		mach.p[i] = cpu_profile_find(profiles, nprof, profile_names[i]);
		if (!mach.p[i]) {
			snprintf(r->why, sizeof(r->why), "no profile %s", profile_names[i]);
			return;
		}
		ptmodel_init(&model[i], &mach.p[i]->caps, mach.seen ? mach.seen : &mach.p[i]->set,
			     &mem);
	}
	fwtrace_init(&table.rec, 0);
	r->pei_status = boottrace_start_emulated(&table.rec, &work, options, 0, mach.profile,
						 &model[0].ops, &memops);
	if (r->pei_status != FWTRACE_RUNNING)
		return;
	r->started = boottrace_aps_start(&aps, &table.rec, &mp, &memops);
	for (unsigned i = 0; i < NCPU; i++)
		r->traceen_after_start += (model[i].u.ctl & RTIT_CTL_TRACEEN) != 0;
	static uint8_t bytes[4096];
	for (unsigned i = 1; i < NCPU; i++) {
		for (size_t k = 0; k < sizeof(bytes); k++)
			bytes[k] = pattern(i, k);
		ptmodel_emit(&model[i], bytes, sizeof(bytes));
	}
	struct strbuf ws;
	sb_init(&ws, r->why, sizeof(r->why));
	boottrace_stop(&table.rec, &work, FWTRACE_STOP_READY_TO_BOOT, &ws);
	r->stop_failed = boottrace_aps_stop(&aps, FWTRACE_STOP_READY_TO_BOOT, &model[0].ops);
	for (unsigned i = 0; i < NCPU; i++) {
		r->traceen_after_stop += (model[i].u.ctl & RTIT_CTL_TRACEEN) != 0;
		r->faults += model[i].gp + model[i].operr;
	}
	boottrace_aps_put(&aps, &table.rec);
	fwtrace_seal(&table.rec);
	/* collect: the table as found in memory, each AP's trace from its record */
	r->check_rc = fwtrace_check(&table, sizeof(table), &ws);
	if (r->check_rc)
		return;
	r->streams_ok = true;
	static uint8_t buf[1 << 16];
	struct span_copy got = { .mem = &mem, .buf = buf, .cap = sizeof(buf) };
	for (unsigned k = 0; k < table.rec.ncpus; k++) {
		struct fwtrace_rec *c = &fwtrace_cpus(&table.rec)[k];
		if (c->status != FWTRACE_STOPPED)
			continue;
		struct ptout_extent ext;
		got.len = 0;
		if (boottrace_check_memory(c, sim_reserved, &mem, &ws) ||
		    boottrace_adopt(c, &work, NULL, &ws) ||
		    boottrace_extract(c, &work, &memops, span_copy, &got, &ext)) {
			r->streams_ok = false;
			return;
		}
		bool same = got.len == 4096;
		for (size_t i = 0; same && i < got.len; i++)
			same = got.buf[i] == pattern(c->cpu_number, i);
		if (!same) {
			sb_printf(&ws, "CPU %u: %zu bytes, not its own", c->cpu_number, got.len);
			r->streams_ok = false;
		}
	}
}

static const struct fwtrace_rec *ap(unsigned number)
{
	for (unsigned k = 0; k < table.rec.ncpus; k++)
		if (fwtrace_cpus(&table.rec)[k].cpu_number == number)
			return &fwtrace_cpus(&table.rec)[k];
	return NULL;
}

static const char *skl = "skylake-s-core-i7-6700k";

static void reset_mach(void)
{
	memset(&mach, 0, sizeof(mach));
	mach.disabled = mach.deaf = -1;
	for (unsigned i = 0; i < NCPU; i++)
		mach.core[i] = i;
}

static void test_all(void)
{
	reset_mach();
	const char *p[NCPU] = { skl, skl, skl, skl };
	struct run r;
	boot(p, "--size 64K --cpus all", &r);
	CHECKF(r.pei_status == FWTRACE_RUNNING && r.started == 3 && r.traceen_after_start == 4 &&
		       r.traceen_after_stop == 0 && !r.stop_failed && !r.faults && !r.why[0],
	       "--cpus all: the three APs traced on themselves, every TraceEn cleared at the stop",
	       "started %u, TraceEn %u then %u, %u faults: %s", r.started,
	       r.traceen_after_start, r.traceen_after_stop, r.faults, r.why);
	CHECKF(!r.check_rc && table.rec.ncpus == 3 && r.streams_ok,
	       "--cpus all: the table's AP records pass the check, each AP's stream read back",
	       "check %d, %u records: %s", r.check_rc, table.rec.ncpus, r.why);
	const struct fwtrace_rec *a1 = ap(1), *a3 = ap(3);
	CHECKF(a1 && a3 && a1->apic_id == 0x12 && a3->apic_id == 0x16 &&
		       table.rec.apic_id == 0x10 && a1->status == FWTRACE_STOPPED &&
		       a1->reg[0].base != a3->reg[0].base && a1->reg[0].base != table.rec.reg[0].base,
	       "--cpus all: each AP's APIC ID and a buffer of its own", "%p %p", (void *)a1,
	       (void *)a3);
	char out[4096];
	struct strbuf sb;
	sb_init(&sb, out, sizeof(out));
	fwtrace_json(&table.rec, &sb);
	CHECKF(strstr(out, "\"cpus\": [{\"cpu\": 1, \"apic_id\": \"0x12\", \"status\": \"stopped\"") &&
		       strstr(out, "\"apic_id\": \"0x10\""),
	       "json: boot_trace lists the APs", "%s", out);

	/* the table's AP records are untrusted too */
	static struct fwtrace_rec saved[4];
	memcpy(saved, &table, sizeof(saved));
	char why[300];
	struct strbuf ws;
	fwtrace_cpus(&table.rec)[2].apic_id = fwtrace_cpus(&table.rec)[0].apic_id;
	fwtrace_seal(&table.rec);
	sb_init(&ws, why, sizeof(why));
	CHECKF(fwtrace_check(&table, sizeof(table), &ws) && strstr(why, "twice"),
	       "check: an APIC ID twice among the APs refused", "%s", why);
	memcpy(&table, saved, sizeof(saved));
	fwtrace_cpus(&table.rec)[1].reg[0].base += 4096;
	fwtrace_seal(&table.rec);
	sb_init(&ws, why, sizeof(why));
	CHECKF(fwtrace_check(&table, sizeof(table), &ws) &&
		       strstr(why, "application processor record 1: output region 0"),
	       "check: an AP's misaligned buffer refused, the record named", "%s", why);
	memcpy(&table, saved, sizeof(saved));
	fwtrace_cpus(&table.rec)[0].nimages = 1;
	fwtrace_seal(&table.rec);
	sb_init(&ws, why, sizeof(why));
	CHECKF(fwtrace_check(&table, sizeof(table), &ws) && strstr(why, "not a record of one CPU"),
	       "check: an AP record with images refused", "%s", why);
	memcpy(&table, saved, sizeof(saved));
	table.rec.ncpus = FWTRACE_MAX_CPUS + 1; /* refused before the CRC: no seal past the table */
	sb_init(&ws, why, sizeof(why));
	CHECKF(fwtrace_check(&table, sizeof(table), &ws) && strstr(why, "CPUs"),
	       "check: more AP records than there can be refused", "%s", why);
	memcpy(&table, saved, sizeof(saved));
	fwtrace_cpus(&table.rec)[2].fault = 0;
	fwtrace_cpus(&table.rec)[2].status = FWTRACE_NO_HOB;
	fwtrace_seal(&table.rec);
	sb_init(&ws, why, sizeof(why));
	CHECKF(fwtrace_check(&table, sizeof(table), &ws) && strstr(why, "boot processor's record"),
	       "check: an AP record with a boot-processor-only status refused", "%s", why);
}

static void test_list_and_refusals(void)
{
	reset_mach();
	const char *p[NCPU] = { skl, skl, skl, skl };
	struct run r;
	boot(p, "--size 64K --cpus 0,2,7", &r);
	CHECKF(r.started == 1 && !r.check_rc && r.streams_ok && table.rec.ncpus == 1 && ap(2) &&
		       strstr(table.rec.reason, "--cpus: there is no CPU 7 (MP services counts 4: 0-3)") &&
		       (model[1].enables == 0) && r.traceen_after_stop == 0,
	       "--cpus 0,2,7: CPU 2 traced, CPU 7 named as absent, the boot goes on",
	       "started %u, %u records, reason '%s': %s", r.started, table.rec.ncpus,
	       table.rec.reason, r.why);

	/* CPU 2 has no PT (as under QEMU TCG): its record says why, the others trace */
	static struct cpu_profile nopt;
	nopt = *cpu_profile_find(profiles, nprof, skl);
	snprintf(nopt.name, sizeof(nopt.name), "test-no-pt");
	uint32_t reg[4];
	cpuid_set_get(&nopt.set, 7, 0, reg);
	reg[CPUID_EBX] &= ~(1u << 25);
	cpuid_set_put(&nopt.set, 7, 0, reg);
	ptcaps_parse(&nopt.caps, &nopt.set);
	profiles[nprof++] = nopt;
	reset_mach();
	const char *q[NCPU] = { skl, skl, "test-no-pt", skl };
	boot(q, "--size 64K --cpus all", &r);
	const struct fwtrace_rec *a2 = ap(2);
	CHECKF(r.started == 2 && !r.check_rc && r.streams_ok && a2 &&
		       a2->status == FWTRACE_UNSUPPORTED &&
		       strstr(a2->reason, "CPUID.(EAX=07H,ECX=0):EBX[25]=0") &&
		       ap(1)->status == FWTRACE_STOPPED && ap(3)->status == FWTRACE_STOPPED,
	       "a CPU without PT: skipped with the CPUID bit, the others traced",
	       "started %u, CPU 2 %s '%s': %s", r.started, a2 ? fwtrace_status_name(a2->status) : "-",
	       a2 ? a2->reason : "", r.why);

	/* an option CPU 3 lacks: refused with the reason, not fatal */
	reset_mach();
	const char *g[NCPU] = { "apollo-lake", "apollo-lake", "apollo-lake", "apollo-lake" };
	mach.core[1] = 0;
	mach.core[3] = 2;
	boot(g, "--size 64K --cpus all", &r);
	CHECKF(r.started == 1 && !r.check_rc && r.streams_ok && ap(1) &&
		       strstr(ap(1)->reason, "per core (Goldmont) and CPU 0 traces") &&
		       strstr(ap(3)->reason, "CPU 2 traces") && ap(2)->status == FWTRACE_STOPPED &&
		       r.traceen_after_stop == 0 && !r.faults,
	       "Goldmont: one thread per core, the siblings say which CPU traces their core",
	       "started %u, '%s' / '%s': %s", r.started, ap(1) ? ap(1)->reason : "",
	       ap(3) ? ap(3)->reason : "", r.why);

	reset_mach();
	mach.disabled = 1;
	boot(p, "--size 64K --cpus all", &r);
	CHECKF(r.started == 2 && !r.check_rc && ap(1) && ap(1)->status == FWTRACE_REFUSED &&
		       strstr(ap(1)->reason, "disabled"),
	       "a disabled AP: recorded as not traced, the others traced", "'%s'",
	       ap(1) ? ap(1)->reason : "");

	/* CPU 3 answers the start, not the stop: its record says TraceEn may be set */
	reset_mach();
	mach.deaf = 3;
	mach.deaf_after = 2; /* identify, start */
	boot(p, "--size 64K --cpus all", &r);
	CHECKF(r.started == 3 && r.stop_failed == 1 && !r.check_rc && ap(3) &&
		       ap(3)->status == FWTRACE_FAILED && strstr(ap(3)->reason, "may still be set") &&
		       ap(1)->status == FWTRACE_STOPPED,
	       "an AP that does not answer the stop: FAILED, said, the others stopped",
	       "started %u, failed %u, '%s'", r.started, r.stop_failed, ap(3) ? ap(3)->reason : "");

	/* without --cpus: nothing but the boot processor */
	reset_mach();
	boot(p, "--size 64K", &r);
	CHECKF(r.started == 0 && table.rec.ncpus == 0 && r.traceen_after_start == 1 &&
		       mach.calls[1] == 0 && model[1].rdmsr_count == 0,
	       "no --cpus: the APs are not touched", "started %u", r.started);
}

/* QEMU TCG: no PT in CPUID; a test build's profile gives the capabilities
 * to every CPU (efipt-qemu.so start=guest follows the WRMSRs) */
static void test_emulated(void)
{
	static struct cpu_profile tcg;
	const struct cpu_profile *base = cpu_profile_find(profiles, nprof, skl);
	tcg = *base;
	uint32_t r4[4];
	cpuid_set_get(&tcg.set, 1, 0, r4);
	r4[CPUID_ECX] |= 1u << 31;
	cpuid_set_put(&tcg.set, 1, 0, r4);
	uint32_t h[4] = { 0x40000001, 0x54474354, 0x43544743, 0x47435447 }; /* "TCGTCGTCGTCG" */
	cpuid_set_put(&tcg.set, 0x40000000, 0, h);
	cpuid_set_get(&tcg.set, 7, 0, r4);
	r4[CPUID_EBX] &= ~(1u << 25);
	cpuid_set_put(&tcg.set, 7, 0, r4);
	reset_mach();
	mach.seen = &tcg.set;
	mach.profile = &base->set;
	const char *p[NCPU] = { skl, skl, skl, skl };
	struct run r;
	boot(p, "--size 64K --cpus all", &r);
	CHECKF(r.pei_status == FWTRACE_RUNNING && (table.rec.flags & FWTRACE_F_EMULATED) &&
		       strstr(table.rec.reason, "EMULATED") && r.started == 3 && !r.check_rc &&
		       r.streams_ok && ap(2) && (ap(2)->flags & FWTRACE_F_EMULATED) &&
		       r.traceen_after_stop == 0 && !r.faults,
	       "TCG with a profile: every CPU EMULATED from it, the table adopted and read back",
	       "PEI %s '%s', started %u, check %d: %s", fwtrace_status_name(r.pei_status),
	       table.rec.reason, r.started, r.check_rc, r.why);
	/* not under TCG: the profile is ignored (no WRMSR reaches a real CPU unasked) */
	tcg.set.n = 0;
	cpuid_set_put(&tcg.set, 0, 0, (uint32_t[4]){ 0x16, 0x756e6547, 0x6c65746e, 0x49656e69 });
	cpuid_set_put(&tcg.set, 7, 0, r4);
	reset_mach();
	mach.seen = &tcg.set;
	mach.profile = &base->set;
	boot(p, "--size 64K --cpus all", &r);
	CHECKF(r.pei_status == FWTRACE_UNSUPPORTED && model[0].wrmsr_count == 0 &&
		       !(table.rec.flags & FWTRACE_F_EMULATED),
	       "a profile without TCG: ignored, PT not programmed", "PEI %s '%s'",
	       fwtrace_status_name(r.pei_status), table.rec.reason);
	mach.seen = mach.profile = NULL;
}

static void test_options(void)
{
	static struct fwtrace_opts o;
	char err[200];
	struct strbuf eb;
	sb_init(&eb, err, sizeof(err));
	CHECKF(fwtrace_parse_options(&o, "--cpus 1-x", &eb) && strstr(err, "--cpus"),
	       "options: a bad --cpus list refused, naming --cpus", "%s", err);
	sb_init(&eb, err, sizeof(err));
	CHECKF(fwtrace_parse_options(&o, "--source synthetic --cpus all", &eb) &&
		       strstr(err, "synthetic"),
	       "options: --cpus with the synthetic source refused", "%s", err);
	sb_init(&eb, err, sizeof(err));
	CHECKF(!fwtrace_parse_options(&o, "--cpus 1,3-5 --size 64K", &eb) && o.cpus_given &&
		       o.cpus.n == 4 && !o.cpus.all,
	       "options: --cpus 1,3-5 parsed as trace --cpus does", "%s", err);
}

int main(void)
{
	int n = cpu_profiles_load(profiles, CPU_PROFILES_MAX - 1);
	if (!CHECKF(n > 0, "CPU profiles loaded", "%d", n))
		return check_exit();
	nprof = (unsigned)n;
	test_all();
	test_list_and_refusals();
	test_emulated();
	test_options();
	simmem_release(&mem);
	return check_exit();
}
