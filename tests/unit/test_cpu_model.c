/*
 * The CPU model table (core/cpu_model.c): decode errata and configuration
 * quirks for real CPUs, read from their CPUID dumps in tests/data/cpu-profiles.
 * The errata themselves are checked against libipt in test_pt_flow_libipt.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/cpu_model.h"
#include "core/cpuid_set.h"
#include "core/flow_setup.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "core/pt_flow.h"
#include "core/pt_rtit.h"
#include "host/util/file_io.h"

#define DIRPATH "tests/data/cpu-profiles/"

static int load(const char *name, struct ptcaps *caps)
{
	static struct cpuid_set set;
	char path[256];
	snprintf(path, sizeof(path), DIRPATH "%s", name);
	if (read_cpuid_file("test", path, 0, &set))
		return -1;
	ptcaps_parse(caps, &set);
	return 0;
}

static int validate(const struct ptcaps *caps, const char *const *argv, struct ptcfg_settings *set,
		    char *msg, size_t n)
{
	struct ptcfg cfg;
	char err[256];
	struct strbuf es, ms;
	sb_init(&es, err, sizeof(err));
	ptcfg_init(&cfg);
	for (int i = 0; argv[i];) {
		int k = ptcfg_option(&cfg, argv[i], argv[i + 1], &es);
		if (k <= 0) {
			snprintf(msg, n, "option %s: %s", argv[i], err);
			return -2;
		}
		i += k;
	}
	sb_init(&ms, msg, n);
	return ptcfg_validate(&cfg, caps, set, &ms);
}

static const uint32_t hybrid = PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_APL11;

/* Raptor Lake (RPL-S 06_B7H and 06_BFH, RPL-P 06_BAH) is decoded with the
 * errata libipt applies to it, like Alder Lake. */
static void test_raptor_lake_errata(void)
{
	static const unsigned rpl[] = { 0xb7, 0xba, 0xbf };
	for (unsigned i = 0; i < 3; i++) {
		uint32_t e = ptflow_errata_for_cpu(6, rpl[i], -1);
		char name[80];
		snprintf(name, sizeof(name), "errata: Raptor Lake 06_%02XH has bdm70 skd022 apl11",
			 rpl[i]);
		CHECKF(e == hybrid, name, "got 0x%x", e);
	}
	struct ptcaps caps;
	if (!CHECK(load("raptor-lake-s-core-i9-13900k-p-core.txt", &caps) == 0,
		   "errata: Raptor Lake profile read"))
		return;
	uint32_t e = ptflow_errata_for_cpu(caps.family, caps.model, (int)caps.stepping);
	CHECKF(e == hybrid, "errata: Raptor Lake i9-13900K from its CPUID dump", "06_%02XH: 0x%x",
	       caps.model, e);
}

/* Alder Lake-N (06_BEH) shares Alder Lake's PT unit: single-range output
 * above 4 KiB is replaced by ToPA as for ADL037. */
static void test_alder_lake_n_single_range(void)
{
	struct ptcaps caps;
	if (!CHECK(load("alder-lake-n-core-i3-n305.txt", &caps) == 0, "quirks: ADL-N profile read"))
		return;
	CHECK(ptcfg_erratum_single_4k(&caps), "quirks: ADL-N has the single-range 4 KiB limit");
	char msg[1024];
	struct ptcfg_settings set;
	const char *big[] = { "--output", "single", "--mode=wrap", "--size=64K", NULL };
	int r = validate(&caps, big, &set, msg, sizeof(msg));
	CHECKF(r == 0 && set.output == PTCFG_OUT_TOPA && set.mode == PTCFG_MODE_WRAP &&
		       (set.notes & PTCFG_NOTE_SINGLE_ERRATUM) && strstr(msg, "ADL037"),
	       "quirks: ADL-N single-range 64K falls back to ToPA and says so", "%d %s", r, msg);
	const char *small[] = { "--output", "single", "--size=4K", NULL };
	r = validate(&caps, small, &set, msg, sizeof(msg));
	CHECKF(r == 0 && set.output == PTCFG_OUT_SINGLE, "quirks: ADL-N single-range 4K allowed",
	       "%d %s", r, msg);
}

/* The other quirks, each on a CPU that has it and one that does not. */
static void test_quirks(void)
{
	struct ptcaps bdw, apl, skl;
	if (!CHECK(!load("broadwell-h-core-i7-5775c.txt", &bdw) &&
			   !load("apollo-lake-celeron-n3450.txt", &apl) &&
			   !load("skylake-s-core-i7-6700k.txt", &skl),
		   "quirks: profiles read"))
		return;
	CHECK(ptcfg_erratum_bdm106(&bdw) && !ptcfg_erratum_bdm106(&skl),
	      "quirks: BDM106 on Broadwell only");
	char msg[1024];
	struct ptcfg_settings set;
	const char *none[] = { NULL };
	int r = validate(&apl, none, &set, msg, sizeof(msg));
	CHECKF(r == 0 && (set.notes & PTCFG_NOTE_CORE_SCOPED) && strstr(msg, "per core"),
	       "quirks: Goldmont RTIT MSRs are per core", "%d %s", r, msg);
	r = validate(&skl, none, &set, msg, sizeof(msg));
	CHECKF(r == 0 && !(set.notes & PTCFG_NOTE_CORE_SCOPED) && (set.notes & PTCFG_NOTE_LBR_EXCLUSIVE),
	       "quirks: Skylake-S: LBR exclusive, RTIT MSRs per thread", "%d 0x%x", r, set.notes);
}

/* Every row: one per CPU, erratum bits the decoder knows by name. */
static void test_table(void)
{
	unsigned rows = 0, dup = 0, unnamed = 0;
	for (unsigned fam = 0; fam < 32; fam++) {
		for (unsigned mod = 0; mod < 256; mod++) {
			const struct cpumodel *m = cpumodel_find(fam, mod);
			if (!m)
				continue;
			rows++;
			if (m->family != fam || m->model != mod || !m->name || !m->name[0])
				dup++;
			for (uint32_t b = 1; b; b <<= 1)
				if ((m->errata & b) && !ptflow_erratum_name(b))
					unnamed++;
			if (ptflow_errata_for_cpu(fam, mod, -1) != m->errata ||
			    cpumodel_quirks(fam, mod) != m->quirks)
				dup++;
		}
	}
	unsigned n;
	cpumodel_table(&n);
	CHECKF(rows >= 40 && rows == n && !dup && !unnamed,
	       "table: one row per CPU, rows consistent, every erratum named",
	       "%u rows found of %u, %u inconsistent, %u unnamed", rows, n, dup, unnamed);
	CHECK(!cpumodel_find(6, 0x2a) && ptflow_errata_for_cpu(6, 0x2a, -1) == 0 &&
		      cpumodel_quirks(6, 0x2a) == 0,
	      "table: Sandy Bridge: no row, no errata, no quirks");
}

/* flow_setup(): the one place a run's facts become decoder settings. */
static void test_flow_setup(void)
{
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	struct flow_facts f = { .have_cpu = true, .family = 6, .model = 0xba, .stepping = 2,
				.have_ctl = true, .rtit_ctl = RTIT_CTL_DISTNT | RTIT_CTL_BRANCHEN };
	flow_setup(&fc, &f);
	CHECKF(fc.errata == hybrid && fc.distnt && !fc.disretc,
	       "flow_setup: Raptor Lake-P errata, DisTNT from RTIT_CTL", "0x%x %d %d", fc.errata,
	       fc.distnt, fc.disretc);
	/* facts a manifest lacks leave the command line's settings alone */
	fc.errata = PTFLOW_ERRATUM_SKZ84;
	struct flow_facts none = { .stepping = -1 };
	flow_setup(&fc, &none);
	CHECK(fc.errata == PTFLOW_ERRATUM_SKZ84 && fc.distnt, "flow_setup: unknown facts change nothing");
	struct ptcaps caps;
	if (load("broadwell-h-core-i7-5775c.txt", &caps) == 0) {
		flow_facts_from_caps(&f, &caps, RTIT_CTL_DISRETC);
		flow_setup(&fc, &f);
		CHECKF(fc.errata == (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_BDM64) && !fc.distnt &&
			       fc.disretc,
		       "flow_setup: from live CPUID (Broadwell-H) and the trace options", "0x%x",
		       fc.errata);
	}
}

/* The timing facts: MTCFreq from RTIT_CTL, CPUID.15H and the nominal ratio
 * for the time estimate (SDM 33.8.3), and the TSC frequency by source. */
static void test_flow_timing(void)
{
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	struct flow_facts f;
	memset(&f, 0, sizeof(f));
	f.have_ctl = true;
	f.rtit_ctl = RTIT_CTL_TSCEN | RTIT_CTL_MTCEN | (3ull << RTIT_CTL_MTCFREQ_SHIFT);
	f.have_cpuid15 = true;
	f.cpuid15_eax = 2;
	f.cpuid15_ebx = 176;
	f.cpuid15_ecx = 38400000;
	f.nom_freq = 34;
	flow_setup(&fc, &f);
	CHECKF(fc.mtc_freq == 3 && fc.cpuid15_eax == 2 && fc.cpuid15_ebx == 176 && fc.nom_freq == 34,
	       "flow_setup: MTCFreq, CPUID.15H and nominal ratio", "%u %u %u %u", fc.mtc_freq,
	       fc.cpuid15_eax, fc.cpuid15_ebx, fc.nom_freq);
	enum flow_tsc_src src;
	uint64_t hz = flow_tsc_hz(&f, &src);
	CHECKF(hz == 3379200000ull && src == FLOW_TSC_CPUID15, "flow_tsc_hz: crystal * EBX / EAX",
	       "%llu %d", (unsigned long long)hz, src);
	f.tsc_hz = 2000000000;
	hz = flow_tsc_hz(&f, &src);
	CHECK(hz == 2000000000 && src == FLOW_TSC_GIVEN, "flow_tsc_hz: the run's tsc_hz first");
	f.tsc_hz = 0;
	f.cpuid15_ecx = 0; /* crystal frequency not enumerated */
	hz = flow_tsc_hz(&f, &src);
	CHECK(hz == 3400000000ull && src == FLOW_TSC_NOM_FREQ, "flow_tsc_hz: nominal ratio * 100 MHz");
	f.nom_freq = 0;
	hz = flow_tsc_hz(&f, &src);
	CHECK(hz == 0 && src == FLOW_TSC_NONE && !strcmp(flow_tsc_src_name(src), "unknown"),
	      "flow_tsc_hz: unknown");
	/* a command line's settings stay where the facts have none */
	memset(&f, 0, sizeof(f));
	fc.cpuid15_eax = 7;
	fc.nom_freq = 9;
	flow_setup(&fc, &f);
	CHECK(fc.cpuid15_eax == 7 && fc.nom_freq == 9 && fc.mtc_freq == 3,
	      "flow_setup: no timing facts change nothing");
}

int main(void)
{
	test_raptor_lake_errata();
	test_alder_lake_n_single_range();
	test_quirks();
	test_table();
	test_flow_setup();
	test_flow_timing();
	return check_exit();
}
