/*
 * efipt plan --cpuid FILE [trace options] [--format text|jsonl]: the MSR
 * writes and ToPA tables efipt.efi would use on that CPU, without booting.
 * The decisions are the firmware's own code (ptcfg_validate, ptout_build,
 * rtit_start, rtit_stop); only the CPU (a recorder: RTIT MSRs read as at reset)
 * and the physical memory (host/util/sim_mem) are simulated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_msr.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/util/sim_mem.h"

/*
 * The largest buffer a plan simulates: 2^20 ToPA regions of 128M in 2053
 * tables (about 40 MB of bookkeeping and a million lines of output). Larger
 * sizes are refused rather than rounded, overflowed or swapped to death.
 */
#define PLAN_MAX_SIZE (128ull << 40)

static void plan_usage(FILE *f)
{
	char buf[4096];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	ptcfg_usage(&sb);
	fprintf(f,
		"usage: efipt plan --cpuid FILE [--cpu N] [--format text|jsonl] [trace options]\n\n"
		"Print the Intel PT programming efipt.efi would do on that CPU: the ToPA\n"
		"tables, every RDMSR/WRMSR of the start and stop sequences, or why the CPU\n"
		"cannot do the requested configuration. FILE is a raw CPUID dump in the\n"
		"format of 'cpuid -r -1' (or cpuid.txt from an efipt run directory).\n"
		"Physical addresses come from a simulated allocator.\n\n"
		"  --cpuid FILE        the CPUID dump to read\n"
		"  --cpu N             the Nth 'CPU' block of a multi-CPU dump (default 0)\n"
		"  --format text|jsonl output format (default text)\n\n"
		"trace options:\n%s\n"
		"jsonl: one object a line, in order: {\"op\":\"topa\",\"table\":HEX,\"entries\":\n"
		"[{\"base\":HEX,\"size\":N,\"end\":B,\"stop\":B,\"int\":B},...]},\n"
		"{\"op\":\"rdmsr\",\"msr\":HEX}, {\"op\":\"wrmsr\",\"msr\":HEX,\"value\":HEX}; or one\n"
		"{\"op\":\"refuse\",\"reason\":TEXT}. HEX is a \"0x...\" string; notes go to stderr.\n"
		"Sizes are at most 128T (what a plan simulates).\n\n"
		"Exit status: 0 plan printed, 1 configuration refused, 2 bad input or a\n"
		"write error on standard output.\n",
		buf);
}

/* The CPU for a dry run: RTIT MSRs hold their reset values, writes are kept. */
struct plan_cpu {
	uint64_t msr[0x20];
};

static int plan_slot(uint32_t msr)
{
	if (msr >= 0x560 && msr <= 0x561)
		return (int)(msr - 0x560);
	if (msr >= 0x570 && msr <= 0x572)
		return (int)(msr - 0x570 + 2);
	if (msr >= 0x580 && msr <= 0x587)
		return (int)(msr - 0x580 + 5);
	return -1;
}

static int plan_rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
	struct plan_cpu *c = ctx;
	int i = plan_slot(msr);
	*v = i < 0 ? 0 : c->msr[i];
	if (msr == MSR_IA32_RTIT_OUTPUT_MASK_PTRS)
		*v |= RTIT_MASK_LOWER;
	return 0;
}

static int plan_wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
	struct plan_cpu *c = ctx;
	int i = plan_slot(msr);
	if (i >= 0)
		c->msr[i] = v;
	return 0;
}

static uint64_t plan_rdtsc(void *ctx)
{
	(void)ctx;
	return 0;
}

static void plan_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	(void)ctx;
	(void)leaf;
	(void)subleaf;
	r[0] = r[1] = r[2] = r[3] = 0;
}

static void json_str(FILE *f, const char *s)
{
	static char buf[8192];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	sb_json_escape(&sb, s);
	fputs(buf, f);
}

static void print_notes(const char *msg, bool jsonl)
{
	/* Notes are lines starting with "note: "; in JSON Lines they go to stderr. */
	const char *p = msg;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n)
			fprintf(jsonl ? stderr : stdout, "%s%.*s\n", jsonl ? "efipt plan: " : "",
				(int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

static int refuse(const char *reason, bool jsonl)
{
	/* drop a trailing newline and earlier notes' line breaks */
	static char clean[4096];
	size_t j = 0;
	for (size_t i = 0; reason[i] && j + 2 < sizeof(clean); i++)
		clean[j++] = reason[i] == '\n' ? (reason[i + 1] ? ' ' : '\0') : reason[i];
	clean[j] = 0;
	if (jsonl) {
		fputs("{\"op\":\"refuse\",\"reason\":\"", stdout);
		json_str(stdout, clean);
		fputs("\"}\n", stdout);
	} else {
		printf("refused: %s\n", clean);
	}
	return 1;
}

static void print_ctl_text(uint64_t ctl)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
		{ RTIT_CTL_TRACEEN, "TraceEn" },   { RTIT_CTL_CYCEN, "CYCEn" },
		{ RTIT_CTL_OS, "OS" },             { RTIT_CTL_USER, "User" },
		{ RTIT_CTL_PWREVTEN, "PwrEvtEn" }, { RTIT_CTL_FUPONPTW, "FUPonPTW" },
		{ RTIT_CTL_FABRICEN, "FabricEn" }, { RTIT_CTL_CR3FILTER, "CR3Filter" },
		{ RTIT_CTL_TOPA, "ToPA" },         { RTIT_CTL_MTCEN, "MTCEn" },
		{ RTIT_CTL_TSCEN, "TSCEn" },       { RTIT_CTL_DISRETC, "DisRETC" },
		{ RTIT_CTL_PTWEN, "PTWEn" },       { RTIT_CTL_BRANCHEN, "BranchEn" },
		{ RTIT_CTL_EVENTEN, "EventEn" },   { RTIT_CTL_DISTNT, "DisTNT" },
	};
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (ctl & bits[i].bit)
			printf(" %s", bits[i].name);
	if (ctl & RTIT_CTL_MTCFREQ_MASK)
		printf(" MTCFreq=%u", (unsigned)((ctl & RTIT_CTL_MTCFREQ_MASK) >> RTIT_CTL_MTCFREQ_SHIFT));
	if (ctl & RTIT_CTL_CYCTHRESH_MASK)
		printf(" CycThresh=%u",
		       (unsigned)((ctl & RTIT_CTL_CYCTHRESH_MASK) >> RTIT_CTL_CYCTHRESH_SHIFT));
	if (ctl & RTIT_CTL_PSBFREQ_MASK)
		printf(" PSBFreq=%u", (unsigned)((ctl & RTIT_CTL_PSBFREQ_MASK) >> RTIT_CTL_PSBFREQ_SHIFT));
	for (unsigned n = 0; n < 4; n++)
		if (ctl & RTIT_CTL_ADDR_CFG_MASK(n))
			printf(" ADDR%u_CFG=%u", n,
			       (unsigned)((ctl & RTIT_CTL_ADDR_CFG_MASK(n)) >> RTIT_CTL_ADDR_CFG_SHIFT(n)));
}

static void print_topa_text(const struct ptout *out, struct simmem *mem, unsigned t)
{
	const struct ptout_table *tb = &out->tab[t];
	printf("topa   table 0x%llx, %u entries\n", (unsigned long long)tb->phys, tb->nout + 1);
	for (unsigned i = 0; i <= tb->nout; i++) {
		/* what is in memory, not what was meant to be written */
		uint64_t e = simmem_read64(mem, tb->phys + 8ull * i);
		uint64_t base = e & ~0xfffull;
		if (e & TOPA_END)
			printf("         [%u] END -> table 0x%llx\n", i, (unsigned long long)base);
		else
			printf("         [%u] base 0x%llx size %llu%s%s\n", i, (unsigned long long)base,
			       4096ull << ((e & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT),
			       (e & TOPA_STOP) ? " STOP" : "", (e & TOPA_INT) ? " INT" : "");
	}
}

static void print_steps(const struct rtit_log *log, const struct ptout *out, struct simmem *mem,
			bool jsonl)
{
	static char line[1 << 16];
	for (unsigned i = 0; i < log->n; i++) {
		const struct rtit_step *s = &log->steps[i];
		if (jsonl) {
			/* the firmware's own printer: the app can log the same lines */
			struct strbuf sb;
			sb_init(&sb, line, sizeof(line));
			rtit_step_jsonl(s, out, &sb);
			if (sb.truncated) {
				fprintf(stderr, "efipt plan: step %u too long to print\n", i);
				continue;
			}
			puts(line);
			continue;
		}
		const char *name = rtit_msr_name(s->msr);
		switch (s->op) {
		case RTIT_OP_TOPA:
			print_topa_text(out, mem, s->table);
			break;
		case RTIT_OP_RDMSR:
			printf("rdmsr  0x%x %s\n", s->msr, name ? name : "");
			break;
		case RTIT_OP_WRMSR:
			printf("wrmsr  0x%x %-28s 0x%llx", s->msr, name ? name : "",
			       (unsigned long long)s->value);
			if (s->msr == MSR_IA32_RTIT_CTL) {
				printf("  ");
				print_ctl_text(s->value);
			}
			putchar('\n');
			break;
		}
	}
}

int cmd_plan(int argc, char **argv)
{
	const char *file = NULL;
	unsigned long long cpu = 0;
	bool jsonl = false;
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	static char errbuf[1024];
	struct strbuf err;
	sb_init(&err, errbuf, sizeof(errbuf));

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			plan_usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--cpuid") || !strncmp(a, "--cpuid=", 8)) {
			file = a[7] ? a + 8 : next;
			i += a[7] ? 0 : 1;
			if (!file) {
				fprintf(stderr, "efipt plan: --cpuid needs a file\n");
				return 2;
			}
			continue;
		}
		if (!strcmp(a, "--cpu") || !strncmp(a, "--cpu=", 6)) {
			const char *v = a[5] ? a + 6 : next;
			i += a[5] ? 0 : 1;
			if (!v || parse_u64(v, &cpu) || cpu > 4096) {
				fprintf(stderr, "efipt plan: --cpu needs a CPU block index\n");
				return 2;
			}
			continue;
		}
		if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			const char *v = a[8] ? a + 9 : next;
			i += a[8] ? 0 : 1;
			if (v && !strcmp(v, "jsonl"))
				jsonl = true;
			else if (v && !strcmp(v, "text"))
				jsonl = false;
			else {
				fprintf(stderr, "efipt plan: --format must be text or jsonl\n");
				return 2;
			}
			continue;
		}
		int n = ptcfg_option(&cfg, a, next, &err);
		if (n < 0) {
			fprintf(stderr, "efipt plan: %s\n", errbuf);
			return 2;
		}
		if (n == 0) {
			fprintf(stderr, "efipt plan: unknown option '%s'\n", a);
			plan_usage(stderr);
			return 2;
		}
		i += n - 1;
	}
	if (!file) {
		fprintf(stderr, "efipt plan: --cpuid FILE is required\n");
		plan_usage(stderr);
		return 2;
	}
	for (unsigned i = 0; i < cfg.nranges; i++)
		if (cfg.range[i].image) {
			fprintf(stderr, "efipt plan: --filter image=%s needs the firmware's image list; "
					"give the range as START-END\n",
				cfg.range[i].image);
			return 2;
		}

	static struct cpuid_set set;
	if (read_cpuid_file("plan", file, (unsigned)cpu, &set))
		return 2;
	struct ptcaps caps;
	ptcaps_parse(&caps, &set);

	static char msgbuf[4096];
	struct strbuf msg;
	sb_init(&msg, msgbuf, sizeof(msgbuf));
	struct ptcfg_settings st;
	if (ptcfg_validate(&cfg, &caps, &st, &msg))
		return refuse(msgbuf, jsonl);
	/* st.size < cfg.size: rounding up to whole regions wrapped past 2^64 */
	if (cfg.size > PLAN_MAX_SIZE || st.size > PLAN_MAX_SIZE || st.size < cfg.size) {
		fprintf(stderr, "efipt plan: --size %llu is more than efipt plan simulates: at most "
				"%lluT (%llu ToPA regions of 128M)\n", (unsigned long long)cfg.size,
			PLAN_MAX_SIZE >> 40, PLAN_MAX_SIZE >> 27);
		return 2;
	}

	struct simmem mem;
	simmem_init(&mem, SIMMEM_DEFAULT_BASE);
	struct ptout_mem mops;
	simmem_ops(&mem, &mops);
	unsigned max_reg = PTOUT_REGIONS_FOR(st.size) + 64;
	struct ptout_region *reg = calloc(max_reg, sizeof(*reg));
	unsigned max_tab = PTOUT_TABLES_FOR(max_reg);
	struct ptout_table *tab = calloc(max_tab, sizeof(*tab));
	/* one step per ToPA table, and the MSR accesses of start and stop */
	unsigned max_steps = max_tab + 256;
	struct rtit_step *steps = calloc(max_steps, sizeof(*steps));
	if (!reg || !tab || !steps) {
		fprintf(stderr, "efipt plan: out of memory\n");
		return 2;
	}
	struct ptout out;
	ptout_init(&out, reg, max_reg, tab, max_tab);
	size_t notes_end = msg.len;
	int rc = 0;
	if (ptout_build(&out, &st, &mops, &msg)) {
		rc = refuse(msgbuf + notes_end, jsonl);
		goto done;
	}
	print_notes(msgbuf, jsonl);
	if (!jsonl) {
		printf("# %s family 0x%x model 0x%x stepping 0x%x, MAXPHYADDR %u\n", caps.vendor,
		       caps.family, caps.model, caps.stepping, caps.maxphyaddr);
		printf("# output: %s, %s mode, %llu bytes in %u region%s", 
		       st.output == PTCFG_OUT_TOPA ? "ToPA" : "single-range",
		       st.mode == PTCFG_MODE_WRAP ? "wrap" : "stop", (unsigned long long)st.size,
		       out.nreg, out.nreg == 1 ? "" : "s");
		if (st.output == PTCFG_OUT_TOPA)
			printf(", %u table%s%s", out.ntab, out.ntab == 1 ? "" : "s",
			       st.topa_multi ? "" : " (single-entry ToPA)");
		printf("\n# start\n");
	}

	struct plan_cpu pc;
	memset(&pc, 0, sizeof(pc));
	struct cpu_ops ops = {
		.cpuid = plan_cpuid, .rdmsr = plan_rdmsr, .wrmsr = plan_wrmsr, .rdtsc = plan_rdtsc,
		.ctx = &pc,
	};
	struct rtit_log log;
	rtit_log_init(&log, steps, max_steps);
	struct rtit_engine eng;
	rtit_engine_init(&eng, &ops, &caps, &st, &out, &log);
	sb_reset(&msg);
	if (rtit_start(&eng, &msg) != RTIT_OK) {
		rc = refuse(msgbuf, jsonl);
		goto done;
	}
	unsigned started = log.n;
	rtit_stop(&eng, &msg);
	if (log.truncated) {
		/* never a plan with steps missing */
		fprintf(stderr, "efipt plan: more than %u steps to print; none printed\n", max_steps);
		rc = 2;
		goto done;
	}
	struct rtit_log first = log;
	first.n = started;
	print_steps(&first, &out, &mem, jsonl);
	if (!jsonl)
		printf("# ... the traced code runs ...\n# stop\n");
	struct rtit_log rest = log;
	rest.steps = log.steps + started;
	rest.n = log.n - started;
	print_steps(&rest, &out, &mem, jsonl);
done:
	ptout_free(&out, &mops);
	simmem_release(&mem);
	free(reg);
	free(tab);
	free(steps);
	return rc;
}
