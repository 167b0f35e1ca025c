/*
 * efipt synth: write a synthetic Intel PT trace of code images (the trace
 * the CPU would write while executing them with random branch outcomes) and
 * optionally the ground truth, one executed instruction address per line.
 * For tests, benchmarks and demos without PT hardware.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pt_config.h"
#include "core/pt_synth.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/input/pt_sections.h"
#include "host/util/opts.h"

static const char synth_usage[] =
	"usage: efipt synth --out TRACE IMAGE... [OPTIONS]\n\n"
	"A synthetic Intel PT trace of code images: the trace the CPU would write\n"
	"while executing them with random branch outcomes, and with --truth the\n"
	"executed instruction addresses, one per line. For tests, benchmarks and\n"
	"demos without PT hardware.\n\n";

static const char synth_tail[] =
	"TRACE and FILE are written under a temporary name and renamed when\n"
	"complete: on any failure neither is left behind.\n\n"
	"Exit status: 0 written, 1 the start address holds no code, 2 on usage\n"
	"errors, unreadable images or a write error.\n";

/* What the options fill. */
struct synth_opts {
	struct ptsec_image im;
	struct ptsynth_config sc;
	const char *out, *truth;
	unsigned long long size, start;
};

static int load_image(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct synth_opts *o = ctx;
	int lr = !strcmp(r->name, "raw") ? ptsec_load_raw(&o->im, v)
		 : !strcmp(r->name, "elf") ? ptsec_load_elf(&o->im, v) : ptsec_load_pe(&o->im, v);
	if (lr)
		sb_printf(err, "%s", o->im.err);
	return lr ? -1 : 0;
}

/* A number into the uint64_t or uint32_t member at r->field (probabilities
 * per 65536 are capped there). */
static int set_num(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err,
		   unsigned long long *n)
{
	(void)ctx;
	if (parse_u64(v, n)) {
		sb_printf(err, "--%s takes a number, not '%s'", r->name, term_safe(v));
		return -1;
	}
	return 0;
}

static int set_u64(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (set_num(ctx, r, v, err, &n))
		return -1;
	*(uint64_t *)((char *)ctx + r->field) = n;
	return 0;
}

static int set_chance(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (set_num(ctx, r, v, err, &n))
		return -1;
	*(uint32_t *)((char *)ctx + r->field) = (uint32_t)(n > 65536 ? 65536 : n);
	return 0;
}

static int set_size(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	uint64_t z;
	(void)r;
	if (ptcfg_parse_size(v, &z) || z < 4096 || z > (1ull << 40)) {
		sb_printf(err, "--size takes a byte count from 4K to 1024G (K, M, G suffixes), not "
			  "'%s'", term_safe(v));
		return -1;
	}
	((struct synth_opts *)ctx)->size = z;
	return 0;
}

static int set_bits(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	if (strcmp(v, "16") && strcmp(v, "32") && strcmp(v, "64")) {
		sb_printf(err, "--bits is 16, 32 or 64, not '%s'", term_safe(v));
		return -1;
	}
	((struct synth_opts *)ctx)->sc.bits = (uint8_t)atoi(v);
	return 0;
}

static int set_psb_period(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	unsigned long long n;
	if (set_num(ctx, r, v, err, &n))
		return -1;
	if (n < 64 || n > (1u << 30)) {
		sb_printf(err, "--psb-period takes 64 to 2^30 bytes, not '%s'", term_safe(v));
		return -1;
	}
	((struct synth_opts *)ctx)->sc.psb_period = (uint32_t)n;
	return 0;
}

/* --tsc, --cyc, --mtc: the timing packets (--cyc and --mtc need TSC) */
static int set_timing(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)v;
	(void)err;
	struct ptsynth_config *sc = &((struct synth_opts *)ctx)->sc;
	sc->tsc = true;
	sc->cyc |= !strcmp(r->name, "cyc");
	sc->mtc |= !strcmp(r->name, "mtc");
	return 0;
}

#define SC(m) (offsetof(struct synth_opts, sc) + offsetof(struct ptsynth_config, m))
static const struct opt_row synth_rows[] = {
	{ "out", OPT_VALUE, opts_set_str, offsetof(struct synth_opts, out), "TRACE",
	  "the trace file (required)" },
	{ "raw", OPT_VALUE, load_image, 0, "FILE[:from[-to]]:BASE",
	  "code images, any number, as for 'efipt insn'" },
	{ "elf", OPT_VALUE, load_image, 0, "FILE[:BASE]", "an ELF file's executable segments" },
	{ "pe", OPT_VALUE, load_image, 0, "FILE[:BASE]", "a PE32+ image, relocated to BASE" },
	{ "start", OPT_VALUE, opts_set_u64, offsetof(struct synth_opts, start), "ADDR",
	  "first instruction (default: entry of the last ELF/PE)" },
	{ "seed", OPT_VALUE, set_u64, SC(seed), "N", "PRNG seed (default 1)" },
	{ "insns", OPT_VALUE, set_u64, SC(max_insns), "N",
	  "instruction budget (default 100000; 0: no budget,\nuntil the trace fills --size)" },
	{ "size", OPT_VALUE, set_size, 0, "N", "most trace bytes, 4K or more (e.g. 65536, 64K, "
	  "4M,\n1G; default 64M)" },
	{ "interrupts", OPT_VALUE, set_chance, SC(p_interrupt), "N",
	  "interrupt chance per instruction, per 65536" },
	{ "ovf", OPT_VALUE, set_chance, SC(p_ovf), "N",
	  "overflow chance per packet-producing branch, per\n65536" },
	{ "disable", OPT_VALUE, set_chance, SC(p_disable), "N",
	  "TIP.PGD chance per indirect branch, per 65536" },
	{ "disretc", OPT_FLAG, opt_set_true, SC(disretc), NULL, "never compress RETs" },
	{ "distnt", OPT_FLAG, opt_set_true, SC(distnt), NULL,
	  "DisTNT: no TNT for Jcc and compressed RETs (decode\nwith 'efipt insn --distnt'; best "
	  "with --disretc)" },
	{ "tsx", OPT_VALUE, set_chance, SC(p_tsx), "N",
	  "TSX transaction begin chance per instruction, per\n65536 (MODE.TSX+FUP; half of them "
	  "abort: +TIP)" },
	{ "power", OPT_VALUE, set_chance, SC(p_power), "N",
	  "power event (hardware duty cycling: PWRE, EXSTOP,\nFUP, CBR, PWRX) chance per "
	  "instruction, per 65536;\nMWAIT instructions then enter C-states (MWAIT\npackets)" },
	{ "event-trace", OPT_FLAG, opt_set_true, SC(event_trace), NULL,
	  "Event Trace: CFE (and EVD for #PF) at interrupts,\nfaults" },
	{ "ptwrite", OPT_FLAG, opt_set_true, SC(ptw), NULL,
	  "PTWEn: a PTW packet at each PTWRITE instruction" },
	{ "fup-on-ptw", OPT_FLAG, opt_set_true, SC(fup_on_ptw), NULL,
	  "FUPonPTW: a FUP with the PTWRITE's address after it" },
	{ "mode", OPT_VALUE, set_chance, SC(p_mode), "N",
	  "chance per 65536 that tracing re-enabled in a new\ncontext runs in the other code size "
	  "(64 <-> 32 bit)" },
	{ "bits", OPT_VALUE, set_bits, 0, "16|32|64", "code size at the start (default 64)" },
	{ "tsc", OPT_FLAG, set_timing, 0, NULL,
	  "a TSC packet in each PSB+ (TSC = 3 * trace offset +\n1000)" },
	{ "psb-period", OPT_VALUE, set_psb_period, 0, "N",
	  "trace bytes between PSB+, 64 or more (default 4096)" },
	{ "cyc", OPT_FLAG, set_timing, 0, NULL,
	  "--tsc and cycle-accurate mode: a CBR (ratio 32) in\neach PSB+, a CYC before each TNT, "
	  "TIP and FUP\ncounting the cycles to 3 * offset + 1000 (decode\nwith nominal ratio 32)" },
	{ "mtc", OPT_FLAG, set_timing, 0, NULL,
	  "--tsc and MTC timing: a TMA after each TSC, MTCs of\na crystal clock at TSC / 6 (decode "
	  "with CPUID.15H\nEAX 2, EBX 12, MTCFreq 1)" },
	{ "truth", OPT_VALUE, opts_set_str, offsetof(struct synth_opts, truth), "FILE",
	  "write the executed instruction addresses to FILE" },
};

static void w_insn(void *ctx, uint64_t ip)
{
	char line[24];
	snprintf(line, sizeof(line), "%016" PRIx64 "\n", ip);
	atomic_write(ctx, line, 17);
}

int cmd_synth(int argc, char **argv)
{
	static struct synth_opts o;
	int rc = 2;

	memset(&o, 0, sizeof(o));
	ptsec_init(&o.im);
	o.sc.seed = 1;
	o.sc.max_insns = 100000;
	o.size = 64ull << 20;
	const struct opts_group g[] = { { NULL, synth_rows, sizeof(synth_rows) / sizeof(synth_rows[0]),
					  &o } };
	const struct opts_cmd cmd = { "synth", synth_usage, synth_tail, g, 1, 0 };
	unsigned nop = 0;
	int pr = opts_parse(&cmd, argc, argv, NULL, &nop);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	if (!o.out || !o.im.n) {
		fprintf(stderr, "efipt synth: %s\n", !o.out ? "--out TRACE is required"
			: "a code image is required (--raw, --elf or --pe)");
		opts_help(&cmd, stderr);
		goto out;
	}
	o.sc.image = ptsec_ptimg(&o.im);
	o.sc.start = o.start ? o.start : ptsec_last_entry(&o.im);
	if (!o.sc.start)
		o.sc.start = o.im.sec[0].vaddr;
	static struct atomic_file tf, of;
	if (o.truth && atomic_open(&tf, "synth", o.truth))
		goto out;
	uint8_t *buf = malloc(o.size);
	struct ptsynth *syn = malloc(sizeof(*syn));
	struct ptsynth_sink sink = { &tf, o.truth ? w_insn : NULL, NULL };
	struct ptsynth_result res;
	if (!buf || !syn) {
		fprintf(stderr, "efipt synth: out of memory for a %llu-byte trace\n", o.size);
	} else if (ptsynth_run(syn, &o.sc, &sink, buf, o.size, &res)) {
		fprintf(stderr, "efipt synth: the synthesizer failed\n");
	} else if (!atomic_open(&of, "synth", o.out)) {
		atomic_write(&of, buf, res.size);
		if (atomic_commit(&of, "synth") == 0) {
			if (o.truth && atomic_commit(&tf, "synth")) {
				unlink(o.out); /* the trace without its truth is no result */
			} else {
				fprintf(stderr, "efipt synth: %zu bytes, %" PRIu64 " instructions, %" PRIu64
						" packets, stopped: %s\n", res.size, res.insns, res.packets,
					res.stop == PTSYNTH_STOP_BUDGET ? "budget" :
					res.stop == PTSYNTH_STOP_SPACE ? "buffer full" : "no code");
				rc = res.stop == PTSYNTH_STOP_NOCODE ? 1 : 0;
			}
		}
	}
	atomic_abort(&tf);
	free(buf);
	free(syn);
out:
	ptsec_free(&o.im);
	return rc;
}
