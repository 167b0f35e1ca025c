/*
 * Trace options and their validation against the CPU (SDM 33.2.8.2, 33.3.1).
 *
 * One option parser for efipt.efi and the host (`efipt plan`), so both
 * accept the same command line, and one validator that turns the options
 * into the IA32_RTIT_CTL value, the output scheme and the filter MSR values
 * the engine (arch/x86_64/pt_engine.h) programs. Nothing reaches a WRMSR
 * that this validator did not check against CPUID leaf 14H first.
 *
 * Usage:
 *	struct ptcfg cfg;
 *	ptcfg_init(&cfg);
 *	for (i = 1; i < argc; i += n)
 *		if ((n = ptcfg_option(&cfg, argv[i], argv[i + 1], &err)) <= 0) ...
 *	if (ptcfg_validate(&cfg, &caps, &settings, &msg) != 0) refuse(msg);
 */
#ifndef EFIPT_CORE_PT_CONFIG_H
#define EFIPT_CORE_PT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_caps.h"
#include "core/strbuf.h"

#define PTCFG_MAX_RANGES 4

enum ptcfg_output {
	PTCFG_OUT_AUTO = 0, /* ToPA where the CPU has it, else single-range */
	PTCFG_OUT_SINGLE,
	PTCFG_OUT_TOPA,
};

enum ptcfg_mode {
	PTCFG_MODE_AUTO = 0, /* stop for ToPA, wrap for single-range */
	PTCFG_MODE_STOP,     /* fill the buffer once, then stop (ToPA STOP) */
	PTCFG_MODE_WRAP,     /* circular flight recorder: keep the newest trace */
};

/* One ADDRn range (33.2.5.3); cfg is RTIT_ADDR_CFG_FILTER or _STOP. */
struct ptcfg_range {
	unsigned cfg;
	uint64_t a, b;      /* inclusive bounds */
	const char *image;  /* image=NAME not yet resolved (caller's string) */
};

/* The user's request. Defaults: OS+User, BranchEn, ToPA, stop, 4 MiB. */
struct ptcfg {
	bool os, user;
	bool branch;
	bool tsc;
	bool mtc;
	int mtc_freq;       /* MTCFreq encoding, -1: pick one */
	bool cyc;
	int cyc_thresh;     /* CycThresh encoding, -1: pick one */
	int psb_freq;       /* PSBFreq encoding, -1: leave at 0 */
	bool disretc;
	bool ptwrite, fuponptw;
	bool pwr;
	bool event;
	bool distnt;
	bool cr3_filter;
	uint64_t cr3;
	unsigned nranges;
	struct ptcfg_range range[PTCFG_MAX_RANGES];
	enum ptcfg_output output;
	enum ptcfg_mode mode;
	uint64_t size;      /* requested buffer bytes */
	bool force;         /* take over PT even if firmware has TraceEn set */
	bool cpl_set;       /* a CPL option seen (the first one clears the default) */
};

/* What the validator derived; everything the engine needs. */
struct ptcfg_settings {
	uint64_t ctl;               /* IA32_RTIT_CTL, TraceEn clear */
	enum ptcfg_output output;   /* SINGLE or TOPA */
	enum ptcfg_mode mode;       /* STOP or WRAP */
	uint64_t size;              /* bytes; single: power of two */
	bool topa_multi;            /* CPUID.(14H,0):ECX[1] */
	unsigned maxphyaddr;
	bool cr3_filter;
	uint64_t cr3_match;
	unsigned nranges;           /* ADDRn pairs to program (0..addr_ranges) */
	uint64_t addr_a[PTCFG_MAX_RANGES], addr_b[PTCFG_MAX_RANGES];
	bool force;
	unsigned notes;             /* PTCFG_NOTE_* */
};

/* Things the validator changed or wants the user to know (also as text). */
#define PTCFG_NOTE_SINGLE_ERRATUM  (1u << 0) /* TGL052/ADL037/RPL017: used ToPA */
#define PTCFG_NOTE_SIZE_ROUNDED    (1u << 1)
#define PTCFG_NOTE_CORE_SCOPED     (1u << 2) /* Goldmont: RTIT MSRs per core */
#define PTCFG_NOTE_BRANCH_FORCED   (1u << 3) /* BDM106 */
#define PTCFG_NOTE_LBR_EXCLUSIVE   (1u << 4) /* 33.3.1.2: no LBRs while tracing */

#define PTCFG_DEFAULT_SIZE (4ull << 20)

void ptcfg_init(struct ptcfg *cfg);

/*
 * Parse one trace option. arg is "--name" or "--name=value"; next is the
 * following argument (or NULL) for options that need a value and were
 * given without '='. Returns the number of arguments used (1 or 2), 0 if
 * arg is not a trace option (the caller may own it), or -1 with a message
 * in err. The options are the rows of one table in pt_config.c, which
 * ptcfg_usage() prints.
 */
int ptcfg_option(struct ptcfg *cfg, const char *arg, const char *next, struct strbuf *err);

/* The trace options, for naming one in a message: "--%s", ptcfg_opt_name(id). */
enum ptcfg_opt {
	PTCFG_OPT_SIZE, PTCFG_OPT_OUTPUT, PTCFG_OPT_MODE, PTCFG_OPT_TSC, PTCFG_OPT_MTC,
	PTCFG_OPT_CYC, PTCFG_OPT_PSB, PTCFG_OPT_PTWRITE, PTCFG_OPT_PWR, PTCFG_OPT_EVENT,
	PTCFG_OPT_NOTNT, PTCFG_OPT_NORETCOMP, PTCFG_OPT_NOBRANCH, PTCFG_OPT_KERNEL,
	PTCFG_OPT_USER, PTCFG_OPT_CR3, PTCFG_OPT_FILTER, PTCFG_OPT_STOP, PTCFG_OPT_FORCE,
	PTCFG_OPT_COUNT
};
const char *ptcfg_opt_name(enum ptcfg_opt id);

/* One line per option, for usage messages. */
void ptcfg_usage(struct strbuf *out);

/* Fill range i (from a filter image=NAME) with resolved bounds. */
void ptcfg_resolve_range(struct ptcfg *cfg, unsigned i, uint64_t a, uint64_t b);

/*
 * Check cfg against caps. Returns 0 and fills *out (msg gets one line per
 * note, possibly none), or -1 with the reason in msg: the CPUID bit that
 * is missing or the list of valid values.
 */
int ptcfg_validate(const struct ptcfg *cfg, const struct ptcaps *caps,
		   struct ptcfg_settings *out, struct strbuf *msg);

/* Known errata, by CPUID display family/model (core/cpu_model.c). */
bool ptcfg_erratum_bdm106(const struct ptcaps *caps);
bool ptcfg_erratum_single_4k(const struct ptcaps *caps);

/* The manifest's "ranges" array of n ADDRn pairs under IA32_RTIT_CTL ctl:
 * [{"cfg":"filter"|"stop","a":"0x...","b":"0x..."},...]. */
void ptcfg_ranges_json(uint64_t ctl, unsigned n, const uint64_t *a, const uint64_t *b,
		       struct strbuf *sb);

/* Parse "123", "0x1f", "4K", "16M", "1G". Returns 0 on success. */
int ptcfg_parse_size(const char *s, uint64_t *v);

#endif
