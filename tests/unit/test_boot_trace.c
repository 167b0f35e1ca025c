/*
 * The firmware boot trace (arch/x86_64/boot_trace.c, core/fwtrace.c): the
 * steps EfiptPei, EfiptDxe and efipt.efi collect take, against the PT
 * model (tests/lib/pt_model.c) over every CPU profile:
 *   - a whole boot: PEI start, the record through a HOB copy, DXE checks
 *     and adopts it, the CPU writes, the stop, the table copy, collect
 *     checks, adopts and extracts: zero #GP, zero operational errors,
 *     TraceEn set after PEI and clear after the stop, the trace bytes found
 *     again, every allocation accounted for by the record's layout;
 *   - the same refusals and settings as efipt.efi trace (ptcfg_option +
 *     ptcfg_validate called directly), Goldmont's core-scoped note;
 *   - no PT: the CPUID bit named, no MSR touched; QEMU TCG markers;
 *   - bad input: options, the variable's bytes, forged and damaged records,
 *     a buffer outside reserved memory, stale engine state, halting PT;
 *   - the synthetic source's buffer filling, as a CPU would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/boot_trace.h"
#include "arch/x86_64/pt_msr.h"
#include "check.h"
#include "core/pt_rtit.h"
#include "host/util/sim_mem.h"
#include "lib/cpu_profiles.h"
#include "lib/pt_model.h"
#include "lib/span_copy.h"

static struct cpu_profile profiles[CPU_PROFILES_MAX];
static unsigned nprof;

static struct simmem mem;
static struct ptout_mem memops;
static struct boottrace_work work, work2;

static bool sim_reserved(void *ctx, uint64_t base, uint64_t size)
{
	return simmem_find(ctx, base, size) != NULL;
}

static uint8_t stream_byte(uint64_t i) { return (uint8_t)(i % 251 + 1); }

/* efipt.efi trace's own path: the words through ptcfg_option, then ptcfg_validate. */
static int trace_validate(const struct cpu_profile *p, const char *options,
			  struct ptcfg_settings *set, char *msg, size_t n)
{
	char words[512];
	snprintf(words, sizeof(words), "%s", options);
	char *argv[64];
	int argc = 0;
	for (char *t = strtok(words, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	struct strbuf sb;
	sb_init(&sb, msg, n);
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--stop-at", 9)) {
			i += !strchr(argv[i], '=');
			continue;
		}
		int k = ptcfg_option(&cfg, argv[i], argv[i + 1], &sb);
		if (k <= 0)
			return -2;
		i += k - 1;
	}
	return ptcfg_validate(&cfg, &p->caps, set, &sb);
}

struct boot {
	uint32_t status;
	char reason[400];
	char detail[600];
	unsigned gp, operr, hazards, leaked;
	unsigned pei_writes;
	bool traceen_after_pei, traceen_after_stop, data_ok;
	struct fwtrace_rec table;
};

/* One boot with these options on profile p; emit bytes written by the CPU. */
static void boot_once(const struct cpu_profile *p, const char *options, uint32_t flags,
		      size_t emit, struct boot *b)
{
	static uint8_t sbuf[1 << 17], got[1 << 17];
	static struct fwtrace_rec pei, hob, collected;
	memset(b, 0, sizeof(*b));
	simmem_reset(&mem);
	struct ptmodel m;
	ptmodel_init(&m, &p->caps, &p->set, &mem);
	fwtrace_init(&pei, 0);
	b->status = boottrace_start(&pei, &work, options, flags, &m.ops, &memops);
	snprintf(b->reason, sizeof(b->reason), "%s", pei.reason);
	b->traceen_after_pei = m.u.ctl & RTIT_CTL_TRACEEN;
	b->pei_writes = m.wrmsr_count;
	b->gp = m.gp;
	b->operr = m.operr;
	if (b->status != FWTRACE_RUNNING) {
		b->leaked = simmem_live(&mem);
		b->table = pei;
		return;
	}
	char why[400] = "";
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	/* the HOB: a sealed copy */
	fwtrace_seal(&pei);
	hob = pei;
	if (fwtrace_check(&hob, sizeof(hob), &ws) || boottrace_check_memory(&hob, sim_reserved, &mem, &ws) ||
	    boottrace_adopt(&hob, &work, &m.ops, &ws)) {
		snprintf(b->detail, sizeof(b->detail), "DXE refused the HOB: %s", why);
		return;
	}
	/* DXE and BDS run: the CPU writes its packets */
	if (emit > sizeof(sbuf))
		emit = sizeof(sbuf);
	for (size_t i = 0; i < emit; i++)
		sbuf[i] = stream_byte(i);
	size_t written = ptmodel_emit(&m, sbuf, emit);
	if (boottrace_stop(&hob, &work, FWTRACE_STOP_READY_TO_BOOT, &ws)) {
		snprintf(b->detail, sizeof(b->detail), "stop failed: %s", why);
		return;
	}
	b->traceen_after_stop = m.u.ctl & RTIT_CTL_TRACEEN;
	fwtrace_seal(&hob);
	b->table = hob;
	/* efipt.efi collect: the table as found in memory */
	collected = hob;
	struct ptout_extent ext;
	struct span_copy c = { .mem = &mem, .buf = got, .cap = sizeof(got) };
	if (fwtrace_check(&collected, sizeof(collected), &ws) ||
	    boottrace_check_memory(&collected, sim_reserved, &mem, &ws) ||
	    boottrace_adopt(&collected, &work2, &m.ops, &ws) ||
	    boottrace_extract(&collected, &work2, &memops, span_copy, &c, &ext)) {
		snprintf(b->detail, sizeof(b->detail), "collect refused the table: %s", why);
		return;
	}
	size_t keep = written < work2.out.size ? written : (size_t)work2.out.size;
	const uint8_t *want = work2.out.mode == PTCFG_MODE_WRAP ? sbuf + written - keep : sbuf;
	b->data_ok = c.len == keep && !memcmp(got, want, keep);
	if (!b->data_ok)
		snprintf(b->detail, sizeof(b->detail), "extracted %zu bytes, expected %zu of %zu",
			 c.len, keep, written);
	b->gp = m.gp;
	b->operr = m.operr;
	b->hazards = m.hazards + m.stale_status;
	if (m.gp)
		snprintf(b->detail, sizeof(b->detail), "#GP: %s", m.last_gp);
	else if (m.operr)
		snprintf(b->detail, sizeof(b->detail), "operational error: %s", m.last_operr);
	/* the record's layout names every allocation: freeing it leaves none */
	ptout_free(&work2.out, &memops);
	b->leaked = simmem_live(&mem);
}

static const char *const sweep_options[] = {
	"",
	"--size 64K",
	"--size 300K",
	"--size 8M --mode wrap",
	"--output topa --mode wrap --size 1M",
	"--output single --size 64K",
	"--output single --size 8K --mode wrap",
	"--tsc --mtc --cyc",
	"--mtc=0 --cyc=1 --tsc",
	"--psb 16K",
	"--ptwrite",
	"--ptwrite=fup",
	"--pwr",
	"--event",
	"--notnt",
	"--noretcomp",
	"--nobranch",
	"--kernel",
	"--cr3 0x1000",
	"--filter 0x100000-0x1fffff",
	"--filter 0x100000-0x1fffff --stop 0xffffffff80000000",
	"--stop-at end-of-dxe --size 16K",
};

static void test_sweep(void)
{
	unsigned runs = 0, started = 0, refused = 0;
	for (unsigned pi = 0; pi < nprof; pi++) {
		const struct cpu_profile *p = &profiles[pi];
		unsigned bad = 0;
		char first[1400] = "";
		for (unsigned oi = 0; oi < sizeof(sweep_options) / sizeof(sweep_options[0]); oi++) {
			const char *o = sweep_options[oi];
			struct boot b;
			boot_once(p, o, BOOTTRACE_MARKERS, 70000, &b);
			runs++;
			struct ptcfg_settings set;
			char msg[600];
			int vr = trace_validate(p, o, &set, msg, sizeof(msg));
			const char *err = NULL;
			if (vr == -2)
				err = "efipt.efi's parser refused the options";
			else if (p->caps.absent != PTCAPS_PRESENT)
				err = b.status != FWTRACE_UNSUPPORTED ? "not UNSUPPORTED without PT" : NULL;
			else if (vr && b.status != FWTRACE_REFUSED)
				err = "efipt.efi refuses, the package does not";
			else if (vr && strcmp(b.reason, msg))
				err = "refused with another reason than efipt.efi's";
			else if (!vr && b.status != FWTRACE_RUNNING)
				err = "efipt.efi accepts, the package does not start";
			else if (!vr && (b.table.rtit_ctl != set.ctl || b.table.output != set.output ||
					 b.table.mode != set.mode || b.table.buf_size != set.size))
				err = "settings differ from efipt.efi's";
			else if (!vr && (!b.traceen_after_pei || b.traceen_after_stop))
				err = "TraceEn not set after PEI or not clear after the stop";
			else if (!vr && !b.data_ok)
				err = "the trace was not found again";
			if (!err && (b.gp || b.operr || b.hazards))
				err = "#GP, operational error or hazard";
			if (!err && b.leaked)
				err = "memory the record does not account for";
			if (!err && vr && b.pei_writes)
				err = "a refusal wrote an MSR";
			started += b.status == FWTRACE_RUNNING;
			refused += b.status == FWTRACE_REFUSED;
			if (err && !bad++)
				snprintf(first, sizeof(first), "'%s': %s (status %s; %.300s; %.300s; efipt.efi: %.300s)",
					 o, err, fwtrace_status_name(b.status), b.reason, b.detail, msg);
		}
		char name[300];
		snprintf(name, sizeof(name), "boot trace over %s: as efipt.efi, zero #GP, trace found",
			 p->name);
		CHECKF(!bad, name, "%u failures, first: %s", bad, first);
	}
	printf("# boot trace sweep: %u boots, %u traced, %u refused\n", runs, started, refused);
	CHECKF(nprof >= 50 && started > 500 && refused > 100, "boot trace sweep: profiles and cases",
	       "%u profiles, %u traced, %u refused", nprof, started, refused);
}

static void test_goldmont(void)
{
	static const char *const goldmont[] = { "apollo-lake", "denverton" };
	for (unsigned i = 0; i < 2; i++) {
		const struct cpu_profile *p = cpu_profile_find(profiles, nprof, goldmont[i]);
		if (!CHECKF(p != NULL, "Goldmont profile present", "%s", goldmont[i]))
			continue;
		struct boot b;
		boot_once(p, "--size 64K", 0, 5000, &b);
		char name[200];
		snprintf(name, sizeof(name), "%s: traced on the one CPU, the core-scoped MSRs said",
			 p->name);
		CHECKF(b.status == FWTRACE_RUNNING && b.data_ok && !b.gp && !b.operr &&
			       strstr(b.reason, "RTIT MSRs are per core") &&
			       (b.table.notes & PTCFG_NOTE_CORE_SCOPED),
		       name, "status %s, reason '%s', %s", fwtrace_status_name(b.status), b.reason,
		       b.detail);
	}
}

/* A CPU without PT under QEMU's TCG: vendor, hypervisor bit, 40000000H. */
static void tcg_profile(struct cpu_profile *t, const struct cpu_profile *base)
{
	*t = *base;
	uint32_t r[4];
	cpuid_set_get(&t->set, 1, 0, r);
	r[CPUID_ECX] |= 1u << 31;
	cpuid_set_put(&t->set, 1, 0, r);
	uint32_t h[4] = { 0x40000001, 0x54474354, 0x43544743, 0x47435447 }; /* "TCGTCGTCGTCG" */
	cpuid_set_put(&t->set, 0x40000000, 0, h);
	cpuid_set_get(&t->set, 7, 0, r);
	r[CPUID_EBX] &= ~(1u << 25);
	cpuid_set_put(&t->set, 7, 0, r);
	ptcaps_parse(&t->caps, &t->set);
}

static void test_no_pt(void)
{
	const struct cpu_profile *skl = cpu_profile_find(profiles, nprof, "skylake-s-core-i7-6700k");
	if (!CHECK(skl != NULL, "no PT: Skylake profile present"))
		return;
	static struct cpu_profile tcg;
	tcg_profile(&tcg, skl);
	CHECK(!strcmp(tcg.caps.hypervisor, "TCGTCGTCGTCG") && tcg.caps.absent == PTCAPS_NO_PT_BIT,
	      "no PT: the TCG profile has no PT bit and names TCG");
	struct boot b;
	simmem_reset(&mem);
	struct ptmodel m;
	ptmodel_init(&m, &tcg.caps, &tcg.set, &mem);
	static struct fwtrace_rec r;
	fwtrace_init(&r, 0);
	uint32_t st = boottrace_start(&r, &work, "--size 8M", BOOTTRACE_MARKERS, &m.ops, &memops);
	CHECKF(st == FWTRACE_UNSUPPORTED && strstr(r.reason, "CPUID.(EAX=07H,ECX=0):EBX[25]=0") &&
		       (r.flags & FWTRACE_F_MARKERS) && m.rdmsr_count + m.wrmsr_count == 0 &&
		       !simmem_live(&mem),
	       "no PT under TCG: UNSUPPORTED naming the CPUID bit, markers ran, no MSR, no memory",
	       "status %s reason '%s' flags %x msrs %u", fwtrace_status_name(st), r.reason, r.flags,
	       m.rdmsr_count + m.wrmsr_count);
	CHECKF(strstr(r.reason, "EPT1/EPT0"), "no PT under TCG: the reason says the markers stand in",
	       "'%s'", r.reason);
	/* DXE: the stop marker, once */
	struct strbuf ms;
	char msg[200];
	sb_init(&ms, msg, sizeof(msg));
	boottrace_adopt(&r, &work, &m.ops, &ms);
	int s1 = boottrace_stop(&r, &work, FWTRACE_STOP_READY_TO_BOOT, &ms);
	uint32_t at = r.stopped_at;
	int s2 = boottrace_stop(&r, &work, FWTRACE_STOP_EXIT_BOOT_SERVICES, &ms);
	CHECKF(s1 == 0 && s2 == 1 && at == FWTRACE_STOP_READY_TO_BOOT && r.stopped_at == at &&
		       r.status == FWTRACE_UNSUPPORTED,
	       "no PT under TCG: the stop marker is due at the stop point, once",
	       "%d %d at %u/%u status %s", s1, s2, at, r.stopped_at, fwtrace_status_name(r.status));
	/* without the platform's leave, or not under TCG: no markers */
	fwtrace_init(&r, 0);
	boottrace_start(&r, &work, "", 0, &m.ops, &memops);
	CHECK(!(r.flags & FWTRACE_F_MARKERS), "no PT, markers not allowed: none");
	boot_once(skl, "", BOOTTRACE_MARKERS, 0, &b);
	CHECK(!(b.table.flags & FWTRACE_F_MARKERS), "PT present: no markers");
	const struct cpu_profile *vm = cpu_profile_find(profiles, nprof, "qemu-kvm-guest");
	if (vm) {
		boot_once(vm, "", BOOTTRACE_MARKERS, 0, &b);
		CHECKF(b.status == FWTRACE_UNSUPPORTED && !(b.table.flags & FWTRACE_F_MARKERS) &&
			       b.pei_writes == 0,
		       "no PT under KVM: UNSUPPORTED, no markers (not TCG)", "status %s reason %s",
		       fwtrace_status_name(b.status), b.reason);
	}
}

static void expect_status(const struct cpu_profile *p, const char *options, uint32_t flags,
			  uint32_t want, const char *needle, const char *name)
{
	struct boot b;
	boot_once(p, options, flags, 100, &b);
	CHECKF(b.status == want && strstr(b.reason, needle) && b.pei_writes == 0 && !b.leaked,
	       name, "status %s (want %s), reason '%s', %u MSR writes", fwtrace_status_name(b.status),
	       fwtrace_status_name(want), b.reason, b.pei_writes);
}

static void test_bad_options(void)
{
	const struct cpu_profile *skl = cpu_profile_find(profiles, nprof, "skylake-s-core-i7-6700k");
	if (!skl)
		return;
	expect_status(skl, "--bogus", 0, FWTRACE_BAD_OPTIONS, "'--bogus' is not an option",
		      "bad options: unknown word named");
	expect_status(skl, "--filter image=DxeCore", 0, FWTRACE_BAD_OPTIONS,
		      "no image is loaded when PEI starts", "bad options: image= refused with why");
	expect_status(skl, "--force", 0, FWTRACE_BAD_OPTIONS, "nothing traces before",
		      "bad options: --force refused");
	expect_status(skl, "--stop-at soon", 0, FWTRACE_BAD_OPTIONS,
		      "ready-to-boot, end-of-dxe, exit-boot-services or never",
		      "bad options: --stop-at lists its values");
	expect_status(skl, "--size 4M \"unclosed", 0, FWTRACE_BAD_OPTIONS, "unclosed quote",
		      "bad options: unclosed quote");
	expect_status(skl, "--fault forged-table", BOOTTRACE_SYNTHETIC, FWTRACE_BAD_OPTIONS,
		      "--fault needs --source synthetic", "bad options: --fault only synthetic");
	expect_status(skl, "--source synthetic", 0, FWTRACE_REFUSED, "PcdEfiptSynthetic",
		      "synthetic refused where the build has none");
	expect_status(skl, "--off", 0, FWTRACE_OFF, "--off", "--off: not traced, nothing touched");
	/* the variable asks for what this CPU lacks: refused at boot, naming the bit */
	expect_status(skl, "--ptwrite", BOOTTRACE_FROM_VARIABLE, FWTRACE_REFUSED,
		      "PTWRITE (--ptwrite) not supported by this CPU: CPUID.(EAX=14H,ECX=0):EBX[4]=0",
		      "variable asking for PTWRITE on Skylake: refused with the CPUID bit");
	struct boot b;
	boot_once(skl, "--ptwrite", BOOTTRACE_FROM_VARIABLE, 0, &b);
	CHECK(b.table.flags & FWTRACE_F_VARIABLE, "refused variable: the record says it came from it");
	expect_status(skl, "--size 4M --bogus", BOOTTRACE_FROM_VARIABLE, FWTRACE_BAD_OPTIONS,
		      "options from the EfiptNextBoot variable: '--bogus'",
		      "bad variable options: the reason names the variable");

	char out[FWTRACE_OPTIONS_MAX], why[200];
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	static const uint8_t ok_text[] = "--size 8M --tsc\0";
	CHECK(!fwtrace_options_text(ok_text, sizeof(ok_text), out, sizeof(out), &ws) &&
		      !strcmp(out, "--size 8M --tsc"),
	      "variable bytes: NUL-terminated text accepted");
	static const uint8_t bin[] = { '-', '-', 't', 's', 'c', 0xff };
	sb_reset(&ws);
	CHECKF(fwtrace_options_text(bin, sizeof(bin), out, sizeof(out), &ws) &&
		       strstr(why, "byte 0xff at offset 5"),
	       "variable bytes: a non-ASCII byte named with its offset", "'%s'", why);
	static uint8_t big[700];
	memset(big, 'a', sizeof(big));
	sb_reset(&ws);
	CHECKF(fwtrace_options_text(big, sizeof(big), out, sizeof(out), &ws) &&
		       strstr(why, "700 bytes of options (at most 511)"),
	       "variable bytes: too long, said how long", "'%s'", why);
}

/* A sealed record that traced (64K ToPA on Skylake), as a table. */
static void good_table(struct fwtrace_rec *r)
{
	const struct cpu_profile *skl = cpu_profile_find(profiles, nprof, "skylake-s-core-i7-6700k");
	struct boot b;
	boot_once(skl, "--size 192K", 0, 1000, &b);
	*r = b.table;
}

static void expect_refused(struct fwtrace_rec *r, size_t len, bool reseal, const char *needle,
			   const char *name)
{
	if (reseal)
		fwtrace_seal(r);
	char why[300] = "";
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	int rc = fwtrace_check(r, len, &ws);
	CHECKF(rc && strstr(why, needle), name, "rc %d, '%s'", rc, why);
}

static void test_check(void)
{
	static struct fwtrace_rec r0, r;
	good_table(&r0);
	char why[300] = "";
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	CHECKF(r0.status == FWTRACE_STOPPED && !fwtrace_check(&r0, sizeof(r0), &ws) && r0.nreg == 2,
	       "check: a real table passes", "status %s, %u regions, '%s'",
	       fwtrace_status_name(r0.status), r0.nreg, why);
	r = r0;
	expect_refused(&r, sizeof(r) - 1, false, "shorter than a record", "check: truncated");
	r = r0;
	r.magic[0] = 'X';
	expect_refused(&r, sizeof(r), true, "signature", "check: no signature");
	r = r0;
	r.version = 1;
	expect_refused(&r, sizeof(r), true, "record version 1", "check: other version");
	r = r0;
	r.reason[3] ^= 1;
	expect_refused(&r, sizeof(r), false, "damaged or forged", "check: a changed byte fails the CRC");
	r = r0;
	r.nimages = 1;
	expect_refused(&r, sizeof(r), false, "images", "check: images beyond max_images");
	r = r0;
	r.status = 0;
	expect_refused(&r, sizeof(r), true, "out of range", "check: status 0");
	r = r0;
	r.fault = 9;
	expect_refused(&r, sizeof(r), true, "out of range", "check: fault out of range");
	r = r0;
	memset(r.reason, 'x', sizeof(r.reason));
	expect_refused(&r, sizeof(r), true, "not terminated", "check: unterminated reason");
	r = r0;
	r.reg[1].base = r.reg[0].base + 4096;
	expect_refused(&r, sizeof(r), true, "", "check: overlapping regions");
	r = r0;
	r.reg[0].base += 4096;
	expect_refused(&r, sizeof(r), true, "aligned to its size", "check: misaligned region");
	r = r0;
	r.reg[1].size = 3 << 20;
	expect_refused(&r, sizeof(r), true, "power-of-two", "check: region not a power of two");
	r = r0;
	r.tab[0].nout = 1;
	expect_refused(&r, sizeof(r), true, "cover the regions", "check: table does not cover");
	r = r0;
	r.msr_base = r.reg[0].base;
	expect_refused(&r, sizeof(r), true, "OUTPUT_BASE", "check: OUTPUT_BASE not the first table");
	r = r0;
	r.buf_size *= 2;
	expect_refused(&r, sizeof(r), true, "the buffer is", "check: size disagrees with regions");
	r = r0;
	r.reg[0].base = 1ull << 50;
	expect_refused(&r, sizeof(r), true, "MAXPHYADDR", "check: region above MAXPHYADDR");
	r = r0;
	r.tab[0].phys = r.reg[0].base;
	expect_refused(&r, sizeof(r), true, "ToPA table 0", "check: table inside a region");
	/* stale engine state: values no stop may write back */
	r = r0;
	r.status = FWTRACE_RUNNING;
	r.rtit_ctl |= RTIT_CTL_TRACEEN;
	fwtrace_seal(&r);
	sb_reset(&ws);
	CHECKF(!fwtrace_check(&r, sizeof(r), &ws) && boottrace_adopt(&r, &work2, NULL, &ws) &&
		       strstr(why, "not one efipt programs"),
	       "adopt: IA32_RTIT_CTL with TraceEn in the record refused", "'%s'", why);
	r = r0;
	r.status = FWTRACE_RUNNING;
	r.rtit_ctl |= 1ull << 18;
	fwtrace_seal(&r);
	sb_reset(&ws);
	CHECK(boottrace_adopt(&r, &work2, NULL, &ws), "adopt: a reserved IA32_RTIT_CTL bit refused");
	/* the table of a PT boot found on a CPU without PT: the record's CPUID decides */
	r = r0;
	r.status = FWTRACE_RUNNING;
	uint32_t *eb = NULL;
	for (uint32_t i = 0; i < r.ncpuid; i++)
		if (r.cpuid[i].leaf == 7 && r.cpuid[i].subleaf == 0)
			eb = &r.cpuid[i].r[CPUID_EBX];
	if (eb)
		*eb &= ~(1u << 25);
	fwtrace_seal(&r);
	sb_reset(&ws);
	CHECKF(eb && boottrace_adopt(&r, &work2, NULL, &ws) && strstr(why, "not one efipt programs"),
	       "adopt: a running hardware trace on a CPU without PT refused", "'%s'", why);
}

static bool nothing_reserved(void *ctx, uint64_t base, uint64_t size)
{
	(void)ctx, (void)base, (void)size;
	return false;
}

static void test_memory_and_halt(void)
{
	static struct fwtrace_rec r;
	good_table(&r);
	char why[300] = "";
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	CHECKF(boottrace_check_memory(&r, nothing_reserved, NULL, &ws) &&
		       strstr(why, "trace output region 0 at 0x"),
	       "memory: a buffer outside reserved memory is named and refused", "'%s'", why);

	/* the test builds' hob-outside-ram damage: region 0 moved where no RAM is */
	const struct cpu_profile *skl = cpu_profile_find(profiles, nprof, "skylake-s-core-i7-6700k");
	struct boot b;
	boot_once(skl, "--source synthetic --size 64K --fault hob-outside-ram", BOOTTRACE_SYNTHETIC,
		  0, &b);
	CHECKF(strstr(b.detail, "DXE refused the HOB: trace output region 0 at 0x4000000000"),
	       "memory: --fault hob-outside-ram is refused by the DXE check", "%s / %s", b.detail,
	       b.reason);

	/* halting PT that a refused record left running */
	simmem_reset(&mem);
	struct ptmodel m;
	ptmodel_init(&m, &skl->caps, &skl->set, &mem);
	static struct fwtrace_rec pei;
	fwtrace_init(&pei, 0);
	boottrace_start(&pei, &work, "--size 64K", 0, &m.ops, &memops);
	bool was = m.u.ctl & RTIT_CTL_TRACEEN;
	int h1 = boottrace_halt(&work2, &m.ops);
	int h2 = boottrace_halt(&work2, &m.ops);
	CHECKF(was && h1 == 1 && h2 == 0 && !(m.u.ctl & RTIT_CTL_TRACEEN) && !m.gp,
	       "halt: TraceEn cleared once, then nothing to do", "was %d h1 %d h2 %d gp %u", was, h1,
	       h2, m.gp);
	static struct cpu_profile tcg;
	tcg_profile(&tcg, skl);
	ptmodel_init(&m, &tcg.caps, &tcg.set, &mem);
	CHECK(boottrace_halt(&work2, &m.ops) == 0 && m.rdmsr_count == 0,
	      "halt: no PT, no MSR access");

	/* the platform traces already (its own ProcTrace): left alone, said */
	simmem_reset(&mem);
	ptmodel_init(&m, &skl->caps, &skl->set, &mem);
	m.ops.wrmsr(m.ops.ctx, MSR_IA32_RTIT_CTL, RTIT_CTL_BRANCHEN | RTIT_CTL_OS | RTIT_CTL_TRACEEN);
	uint64_t before = m.u.ctl;
	unsigned writes = m.wrmsr_count;
	fwtrace_init(&pei, 0);
	uint32_t st = boottrace_start(&pei, &work, "--size 64K", 0, &m.ops, &memops);
	CHECKF(st == FWTRACE_FAILED && strstr(pei.reason, "Intel PT is already enabled") &&
		       m.u.ctl == before && m.wrmsr_count == writes && !simmem_live(&mem),
	       "PT already running in PEI: refused with why, not touched, nothing kept",
	       "status %s reason '%s' ctl 0x%llx writes %u", fwtrace_status_name(st), pei.reason,
	       (unsigned long long)m.u.ctl, m.wrmsr_count - writes);
}

/* The synthetic source: bytes stored as the CPU would, found by extract. */
static void synth_case(const char *options, uint64_t len, bool want_full, const char *name)
{
	const struct cpu_profile *skl = cpu_profile_find(profiles, nprof, "skylake-s-core-i7-6700k");
	static struct cpu_profile tcg;
	tcg_profile(&tcg, skl);
	simmem_reset(&mem);
	struct ptmodel m;
	ptmodel_init(&m, &tcg.caps, &tcg.set, &mem);
	static struct fwtrace_rec r;
	static uint8_t bytes[300 << 10], got[300 << 10];
	fwtrace_init(&r, 0);
	uint32_t st = boottrace_start(&r, &work, options, BOOTTRACE_SYNTHETIC, &m.ops, &memops);
	char why[300] = "";
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	fwtrace_seal(&r);
	int ad = boottrace_adopt(&r, &work, &m.ops, &ws);
	int sp = boottrace_stop(&r, &work, FWTRACE_STOP_READY_TO_BOOT, &ws);
	for (uint64_t i = 0; i < len; i++)
		bytes[i] = stream_byte(i);
	uint64_t stored = boottrace_synth_store(&r, &work, &memops, bytes, len);
	fwtrace_seal(&r);
	struct span_copy c = { .mem = &mem, .buf = got, .cap = sizeof(got) };
	struct ptout_extent ext;
	int ck = fwtrace_check(&r, sizeof(r), &ws);
	int ad2 = boottrace_adopt(&r, &work2, NULL, &ws);
	int ex = boottrace_extract(&r, &work2, &memops, span_copy, &c, &ext);
	uint64_t keep = len < r.buf_size ? len : r.buf_size;
	CHECKF(st == FWTRACE_RUNNING && !ad && !sp && !ck && !ad2 && !ex && stored == keep &&
		       c.len == keep && !memcmp(got, bytes, keep) && ext.full == want_full &&
		       m.rdmsr_count + m.wrmsr_count == 0,
	       name, "status %s ad %d stop %d check %d adopt %d extract %d stored %llu got %zu "
	       "full %d msrs %u: %s", fwtrace_status_name(st), ad, sp, ck, ad2, ex,
	       (unsigned long long)stored, c.len, ext.full, m.rdmsr_count + m.wrmsr_count, why);
	ptout_free(&work2.out, &memops);
}

static void test_synthetic(void)
{
	synth_case("--source synthetic --size 64K", 100, false, "synthetic: 100 bytes in 64K ToPA");
	synth_case("--source synthetic --size 64K", 4096, false,
		   "synthetic: a region boundary is not the end");
	synth_case("--source synthetic --size 64K", 65536, true,
		   "synthetic: a full stop-mode buffer reads as ToPA STOP left it");
	synth_case("--source synthetic --size 64K", 70000, true, "synthetic: cut at the buffer's end");
	synth_case("--source synthetic --size 192K", 150000, false,
		   "synthetic: across two ToPA regions");
	synth_case("--source synthetic --size 192K --mode wrap", 196608, false,
		   "synthetic: a full wrap buffer is read from its start");
	synth_case("--source synthetic --output single --size 64K", 5000, false,
		   "synthetic: single-range output");
	synth_case("--source synthetic --output single --size 64K", 65536, false,
		   "synthetic: single-range full, read from the start");
}

static void test_json(void)
{
	static struct fwtrace_rec r;
	good_table(&r);
	char out[4096];
	struct strbuf sb;
	sb_init(&sb, out, sizeof(out));
	fwtrace_json(&r, &sb);
	CHECKF(strstr(out, "\"status\": \"stopped\"") && strstr(out, "\"stop_at\": \"ready-to-boot\"") &&
		       strstr(out, "\"stopped_at\": \"ready-to-boot\"") &&
		       strstr(out, "\"options\": \"--size 192K\"") && !sb.truncated,
	       "json: the manifest's boot_trace object", "%s", out);
}

int main(void)
{
	int n = cpu_profiles_load(profiles, CPU_PROFILES_MAX);
	if (!CHECKF(n > 0, "CPU profiles loaded", "%d from %s", n, CPU_PROFILES_DIR))
		return check_exit();
	nprof = (unsigned)n;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	simmem_ops(&mem, &memops);
	test_sweep();
	test_goldmont();
	test_no_pt();
	test_bad_options();
	test_check();
	test_memory_and_halt();
	test_synthetic();
	test_json();
	simmem_release(&mem);
	return check_exit();
}
