/* efipt qemu's trace options; see qemu_trace_opts.h. */
#include "host/qemu/qemu_trace_opts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_rtit.h"

/* Why an option has no meaning for a trace QEMU's TCG plugin emulates
 * (QEMU 7.2's plugin API: no registers, no CPL, no interrupts as such). */
static const char *refused(enum ptcfg_opt id)
{
	switch (id) {
	case PTCFG_OPT_OUTPUT: return "the emulated trace goes to a file: there is no ToPA or "
				      "single-range output to choose";
	case PTCFG_OPT_PTWRITE: return "QEMU 7.2's plugins cannot read PTWRITE's operand";
	case PTCFG_OPT_PWR: return "the emulated CPU has no C-states or frequency changes to report";
	case PTCFG_OPT_EVENT: return "QEMU 7.2's plugins see no interrupts or exceptions as such "
				     "(they are inferred, without vectors)";
	case PTCFG_OPT_NOTNT: return "not emulated (conditional branches are always traced)";
	case PTCFG_OPT_NOBRANCH: return "the emulated trace is the control flow: nothing is left "
					"without branches";
	case PTCFG_OPT_KERNEL:
	case PTCFG_OPT_USER: return "QEMU 7.2's plugins cannot read the CPL: every CPL is traced";
	case PTCFG_OPT_FORCE: return "no firmware owns the emulated Intel PT";
	default: return NULL;
	}
}

/* The row naming arg ("--name" or "--name=..."), or -1. */
static int option_of(const char *arg)
{
	if (strncmp(arg, "--", 2))
		return -1;
	for (int id = 0; id < PTCFG_OPT_COUNT; id++) {
		const char *n = ptcfg_opt_name((enum ptcfg_opt)id);
		size_t l = strlen(n);
		if (!strncmp(arg + 2, n, l) && (!arg[2 + l] || arg[2 + l] == '='))
			return id;
	}
	return -1;
}

int qemu_trace_opts_take(struct qemu_trace_opts *o, int *argc, char **argv, char *err,
			 size_t errlen)
{
	ptcfg_init(&o->cfg);
	o->seen = 0;
	int out = 1, i = 1;
	while (i < *argc) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		int id = option_of(a);
		if (id < 0 || id == PTCFG_OPT_STOP) {
			argv[out++] = argv[i++];
			/* an option of efipt qemu's own with its value: skip both */
			if (a[0] == '-' && !strchr(a, '=') && i < *argc &&
			    (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--start") ||
			     !strcmp(a, "--stop") || !strcmp(a, "--limit") || !strcmp(a, "--plugin") ||
			     !strcmp(a, "--qemu") || !strcmp(a, "--esp")))
				argv[out++] = argv[i++];
			continue;
		}
		const char *why = refused((enum ptcfg_opt)id);
		if (why) {
			snprintf(err, errlen, "--%s: not for a trace QEMU emulates: %s",
				 ptcfg_opt_name((enum ptcfg_opt)id), why);
			return -1;
		}
		char mb[512];
		struct strbuf sb;
		sb_init(&sb, mb, sizeof(mb));
		int n = ptcfg_option(&o->cfg, a, i + 1 < *argc ? argv[i + 1] : NULL, &sb);
		if (n <= 0) {
			snprintf(err, errlen, "%s", n < 0 ? mb : "unknown option");
			return -1;
		}
		o->seen |= 1u << id;
		i += n;
	}
	while (i < *argc)
		argv[out++] = argv[i++];
	argv[out] = NULL;
	*argc = out;
	return 0;
}

/*
 * The emulated clock's shift from QEMU's "-icount [shift=]N[,...]": 1 and
 * N, 0 without -icount (1 ns per instruction, assumed), -1 for shift=auto
 * (adaptive: not a fixed rate) or a value not understood.
 */
static int icount_shift(int qargc, char **qargv, unsigned *shift)
{
	for (int i = 0; i + 1 < qargc; i++) {
		if (strcmp(qargv[i], "-icount") && strcmp(qargv[i], "--icount"))
			continue;
		const char *v = qargv[i + 1], *s = strstr(v, "shift=");
		s = s ? s + 6 : (v[0] >= '0' && v[0] <= '9' ? v : NULL);
		if (!s)
			return -1; /* -icount without a shift: QEMU's default is auto */
		char *end;
		unsigned long n = strtoul(s, &end, 10);
		if (end == s || (*end && *end != ',') || n > 10)
			return -1;
		*shift = (unsigned)n;
		return 1;
	}
	*shift = 0;
	return 0;
}

#define ADD(...) (n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__))

int qemu_trace_opts_plugin_args(const struct qemu_trace_opts *o, int qargc, char **qargv,
				char *buf, size_t cap, char *err, size_t errlen)
{
	const struct ptcfg *c = &o->cfg;
	size_t n = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < c->nranges; i++) {
		const struct ptcfg_range *r = &c->range[i];
		if (r->image) {
			snprintf(err, errlen, "--%s image=%s: no flash image to find it in: give "
				 "QEMU the firmware with -drive if=pflash,file=FILE or -bios FILE",
				 ptcfg_opt_name(PTCFG_OPT_FILTER), r->image);
			return -1;
		}
		ADD(",filter=0x%" PRIx64 "-0x%" PRIx64, r->a, r->b);
	}
	if (o->seen & (1u << PTCFG_OPT_SIZE | 1u << PTCFG_OPT_MODE)) {
		if (c->size < 4096 || c->size > (1ull << 32)) {
			snprintf(err, errlen, "--%s %" PRIu64 ": efipt qemu keeps 4096 bytes to 4 GiB",
				 ptcfg_opt_name(PTCFG_OPT_SIZE), c->size);
			return -1;
		}
		ADD(",size=%" PRIu64 ",mode=%s", c->size,
		    c->mode == PTCFG_MODE_WRAP ? "wrap" : "stop");
	}
	if (c->psb_freq >= 0) {
		uint64_t bytes = 2048ull << c->psb_freq; /* PSBFreq (33.2.8.2) */
		if (bytes > (1ull << 30)) {
			snprintf(err, errlen, "--%s: a PSB period above 1 GiB", ptcfg_opt_name(PTCFG_OPT_PSB));
			return -1;
		}
		if (c->mode == PTCFG_MODE_WRAP && c->size < 2 * bytes) {
			snprintf(err, errlen, "--%s wrap --%s %" PRIu64 ": the size must be at least "
				 "twice the PSB period (%" PRIu64 " bytes) so that a PSB+ survives",
				 ptcfg_opt_name(PTCFG_OPT_MODE), ptcfg_opt_name(PTCFG_OPT_SIZE), c->size,
				 bytes);
			return -1;
		}
		ADD(",psb=%" PRIu64, bytes);
	} else if (c->mode == PTCFG_MODE_WRAP && c->size < 2 * 4096) {
		snprintf(err, errlen, "--%s wrap --%s %" PRIu64 ": the size must be at least twice the "
			 "PSB period (4096 bytes by default, --%s) so that a PSB+ survives",
			 ptcfg_opt_name(PTCFG_OPT_MODE), ptcfg_opt_name(PTCFG_OPT_SIZE), c->size,
			 ptcfg_opt_name(PTCFG_OPT_PSB));
		return -1;
	}
	if (c->disretc)
		ADD(",retcomp=off");
	/* the plugin compares CR3 (registers: QEMU 9.0 on; it refuses on an
	 * older QEMU, which then does not start) */
	if (c->cr3_filter && (c->cr3 & RTIT_CR3_RESERVED)) {
		snprintf(err, errlen, "--%s 0x%" PRIx64 ": bits 4:0 are reserved in "
			 "IA32_RTIT_CR3_MATCH (SDM 33.2.8): give the CR3 without them",
			 ptcfg_opt_name(PTCFG_OPT_CR3), c->cr3);
		return -1;
	}
	if (c->cr3_filter)
		ADD(",cr3=0x%" PRIx64, c->cr3);
	if (c->tsc || c->mtc || c->cyc) {
		unsigned shift;
		int have = icount_shift(qargc, qargv, &shift);
		if (have < 0) {
			snprintf(err, errlen, "--%s/--%s/--%s need a fixed instruction rate: give QEMU "
				 "-icount shift=N,sleep=off (2^N ns per instruction), not shift=auto",
				 ptcfg_opt_name(PTCFG_OPT_TSC), ptcfg_opt_name(PTCFG_OPT_MTC),
				 ptcfg_opt_name(PTCFG_OPT_CYC));
			return -1;
		}
		if (have)
			ADD(",shift=%u", shift);
		if (c->tsc)
			ADD(",tsc=on");
		/* the encodings efipt.efi would pick where the CPU has them */
		if (c->mtc)
			ADD(",mtc=%d", c->mtc_freq >= 0 ? c->mtc_freq : 3);
		if (c->cyc)
			ADD(",cyc=%d", c->cyc_thresh >= 0 ? c->cyc_thresh : 0);
	}
	if (n >= cap) {
		snprintf(err, errlen, "too many trace options");
		return -1;
	}
	return 0;
}
