/*
 * efipt insn: reconstruct the executed instructions from a raw Intel PT
 * trace and the code images, ptxed-style: one line per instruction
 * ("%016llx  disassembly"), events in square brackets, errors as
 * "[offset, ip: error: message]" after which decoding resumes at the next
 * PSB. Exit status 1 if any error occurred.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "core/pt_flow.h"
#include "core/x86_insn.h"
#include "decode/commands.h"
#include "decode/file_io.h"
#include "decode/flow_notes.h"
#include "decode/progress.h"
#include "decode/pt_sections.h"
#include "decode/trace_end.h"
#include "decode/trace_input.h"

/* the most trace bytes read from a pipe (a file is mapped) */
#define PIPE_MAX (16ull << 30)

struct iopts {
	bool no_inst, stat, time, quiet_events;
	struct ptsec_image *im;
	uint64_t errors;
};

static void insn_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt insn --pt TRACE IMAGE... [OPTIONS]   (TRACE '-': standard input)\n"
		"       efipt insn --run DIR [OPTIONS]\n\n"
		"Show the instructions executed according to a raw Intel PT trace.\n\n"
		"images (any number, no overlaps):\n"
		"  --raw FILE[:from[-to]]:BASE  bytes from..to of FILE at address BASE\n"
		"  --elf FILE[:BASE]            executable segments of an ELF file; with BASE\n"
		"                               the lowest one is placed at BASE\n"
		"  --pe FILE[:BASE]             a PE32+ image (UEFI driver/application)\n"
		"                               relocated to BASE (default: its ImageBase)\n"
		"options:\n"
		"  --run DIR       an efipt run directory: its trace.pt, code snapshots,\n"
		"                  CPU (errata) and DisTNT/DisRETC settings\n"
		TRACE_INPUT_CPU_HELP
		"  --no-inst       print addresses only, no disassembly\n"
		"  --stat          print only counts: instructions, branches, events, errors\n"
		"  --time          show the time stamp (TSC) on event lines\n"
		"  --distnt        the trace was recorded with DisTNT=1\n"
		"  --disretc       the trace was recorded with DisRETC=1\n"
		"  --cpuid-0x15 EAX,EBX  TSC/core crystal clock ratio (MTC timing)\n"
		"  --mtc-freq N    IA32_RTIT_CTL.MTCFreq of the trace, 0..15\n"
		"  --nom-freq N    nominal frequency ratio (CPUID.16H / 100 MHz), 0..255\n"
		"  --max-steps N   most instructions between two packets (default 1M)\n"
		"  --cache N       block cache entries of 32 bytes: a power of two from 8 to\n"
		"                  16777216 (default 65536), or 0..7 for no cache (slow)\n\n"
		"A trace with no PSB, or whose last packet is cut by the end of the file,\n"
		"is reported as an error.\n\n"
		"Exit status: 0 if the trace decoded without errors, 1 if it had decode\n"
		"errors, 2 on usage errors, unreadable inputs or a write error on standard\n"
		"output.\n");
}

/* "%016" PRIx64 into p, without printf: address lines are most of the
 * output of a long trace */
static char *hex16(char *p, uint64_t v)
{
	static const char digit[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = digit[v & 15];
	return p + 16;
}

static void print_run(void *ctx, const struct ptflow_run *r)
{
	struct iopts *o = ctx;
	uint64_t ip = r->ip;
	if (o->no_inst) {
		char line[17 * PTFLOW_BLOCK_MAX], *p = line;
		for (uint32_t i = 0; i < r->ninsn; i++) {
			p = hex16(p, ip);
			*p++ = '\n';
			ip += r->lens[i];
			if (p == line + sizeof(line)) {
				fwrite(line, 1, (size_t)(p - line), stdout);
				p = line;
			}
		}
		fwrite(line, 1, (size_t)(p - line), stdout);
		return;
	}
	static const ZydisMachineMode zm[] = { ZYDIS_MACHINE_MODE_LEGACY_16,
					       ZYDIS_MACHINE_MODE_LEGACY_32,
					       ZYDIS_MACHINE_MODE_LONG_64 };
	for (uint32_t i = 0; i < r->ninsn; i++) {
		uint8_t b[16];
		int n = ptsec_read(o->im, ip, b, r->lens[i]);
		ZydisDisassembledInstruction zi;
		if (n == r->lens[i] && r->mode < 3 &&
		    ZYAN_SUCCESS(ZydisDisassembleIntel(zm[r->mode], ip, b, (ZyanUSize)n, &zi)))
			printf("%016" PRIx64 "  %s\n", ip, zi.text);
		else
			printf("%016" PRIx64 "  (bad)\n", ip);
		ip += r->lens[i];
	}
}

static void print_event(void *ctx, const struct ptflow_event *ev)
{
	struct iopts *o = ctx;
	if (ev->type == PTFLOW_EV_ERROR) {
		o->errors++;
		printf("[%" PRIx64 ", %016" PRIx64 ": error: ", ev->offset, ev->ip);
		/* errors about the code at an address name the address */
		if (ev->err == PTFLOW_ERR_NO_CODE)
			printf("no code at %016" PRIx64 " (not in any image)]\n", ev->ip);
		else if (ev->err == PTFLOW_ERR_BAD_INSN)
			printf("invalid instruction at %016" PRIx64 "]\n", ev->ip);
		else
			printf("%s]\n", ev->msg);
		return;
	}
	printf("[");
	if (o->time && ev->has_time)
		printf("%016" PRIx64 " ", ev->tsc);
	switch (ev->type) {
	case PTFLOW_EV_INTERRUPT:
		printf("interrupt, from: %016" PRIx64 ", to: %016" PRIx64 "]\n", ev->ip, ev->target);
		return;
	case PTFLOW_EV_EXEC_MODE: {
		static const char *m[] = { "16-bit", "32-bit", "64-bit" };
		printf("exec mode: %s]\n", ev->value < 3 ? m[ev->value] : "?");
		return;
	}
	case PTFLOW_EV_TSX:
		printf("%s]\n", ev->value & 2 ? "aborted" : ev->value & 1 ? "begin transaction"
									: "committed");
		return;
	case PTFLOW_EV_PAGING:
		printf("paging, cr3: %016" PRIx64 "%s]\n", ev->value, ev->flag ? ", nr" : "");
		return;
	case PTFLOW_EV_VMCS:
		printf("vmcs, base: %016" PRIx64 "]\n", ev->value);
		return;
	case PTFLOW_EV_PTWRITE:
		printf("ptwrite: %" PRIx64 "]\n", ev->value);
		return;
	case PTFLOW_EV_MWAIT: case PTFLOW_EV_PWRE: case PTFLOW_EV_PWRX:
	case PTFLOW_EV_CFE: case PTFLOW_EV_EVD:
		printf("%s: %" PRIx64 "]\n", ptflow_ev_name(ev->type), ev->value);
		return;
	default:
		break;
	}
	if (ev->has_ip)
		printf("%s, ip: %016" PRIx64 "]\n", ptflow_ev_name(ev->type), ev->ip);
	else
		printf("%s]\n", ptflow_ev_name(ev->type));
}

int cmd_insn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pt", required_argument, 0, 'p' },
		{ "run", required_argument, 0, 'X' },
		{ "raw", required_argument, 0, 'r' },
		{ "elf", required_argument, 0, 'e' },
		{ "pe", required_argument, 0, 'P' },
		{ "cpu", required_argument, 0, 'c' },
		{ "no-inst", no_argument, 0, 'n' },
		{ "stat", no_argument, 0, 's' },
		{ "time", no_argument, 0, 't' },
		{ "distnt", no_argument, 0, 'D' },
		{ "disretc", no_argument, 0, 'R' },
		{ "cpuid-0x15", required_argument, 0, '5' },
		{ "mtc-freq", required_argument, 0, 'm' },
		{ "nom-freq", required_argument, 0, 'N' },
		{ "max-steps", required_argument, 0, 'M' },
		{ "cache", required_argument, 0, 'C' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct ptsec_image im;
	struct iopts o;
	struct ptflow_config fc;
	const char *trace = NULL, *run = NULL;
	static char run_trace[4200];
	unsigned cpu = 0;
	bool set_errata = false;
	uint32_t errata = 0;
	struct flow_facts facts;
	unsigned long long v, cache_n = 1 << 16;
	int c, rc = 2;

	ptsec_init(&im);
	memset(&o, 0, sizeof(o));
	memset(&fc, 0, sizeof(fc));
	o.im = &im;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lr = 0;
		switch (c) {
		case 'p': trace = optarg; break;
		case 'X': run = optarg; break;
		case 'r': lr = ptsec_load_raw(&im, optarg); break;
		case 'e': lr = ptsec_load_elf(&im, optarg); break;
		case 'P': lr = ptsec_load_pe(&im, optarg); break;
		case 'c':
			if (trace_input_cpu_arg(optarg, &cpu, &errata)) {
				fprintf(stderr, "efipt insn: --cpu wants a CPU number N or "
					"FAMILY/MODEL[/STEPPING], got '%s'\n", term_safe(optarg));
				goto out;
			}
			set_errata |= strchr(optarg, '/') != NULL;
			break;
		case 'n': o.no_inst = true; break;
		case 's': o.stat = true; break;
		case 't': o.time = true; break;
		case 'D': fc.distnt = true; break;
		case 'R': fc.disretc = true; break;
		case '5': {
			unsigned long long a, b;
			char tmp[64], *comma;
			snprintf(tmp, sizeof(tmp), "%s", optarg);
			comma = strchr(tmp, ',');
			if (!comma || (*comma = 0, parse_u64(tmp, &a)) || parse_u64(comma + 1, &b) ||
			    a > UINT32_MAX || b > UINT32_MAX) {
				fprintf(stderr, "efipt insn: --cpuid-0x15 wants EAX,EBX\n");
				goto out;
			}
			fc.cpuid15_eax = (uint32_t)a;
			fc.cpuid15_ebx = (uint32_t)b;
			break;
		}
		case 'm': case 'N': case 'M': case 'C': {
			static const struct {
				char opt;
				const char *name, *range;
			} what[] = {
				{ 'm', "--mtc-freq", "a number from 0 to 15" },
				{ 'N', "--nom-freq", "a number from 0 to 255" },
				{ 'M', "--max-steps", "a count of instructions" },
				{ 'C', "--cache", "a power of two from 8 to 16777216, or 0..7 for "
						 "no cache" },
			};
			unsigned w = c == 'm' ? 0 : c == 'N' ? 1 : c == 'M' ? 2 : 3;
			if (parse_u64(optarg, &v) || (c == 'm' && v > 15) || (c == 'N' && v > 255) ||
			    (c == 'C' && v >= 8 && (v & (v - 1) || v > (1u << 24)))) {
				fprintf(stderr, "efipt insn: %s takes %s, not '%s'\n", what[w].name,
					what[w].range, optarg);
				goto out;
			}
			if (c == 'm') fc.mtc_freq = (uint8_t)v;
			if (c == 'N') fc.nom_freq = (uint8_t)v;
			if (c == 'M') fc.max_steps = v;
			if (c == 'C') cache_n = v < 8 ? 0 : v; /* the decoder's cache needs 8 */
			break;
		}
		case 'h':
			insn_usage(stdout);
			rc = 0;
			goto out;
		default:
			insn_usage(stderr);
			goto out;
		}
		if (lr) {
			fprintf(stderr, "efipt insn: %s\n", im.err);
			goto out;
		}
	}
	if (run) {
		/* after the options: --cpu N picks the trace; what the command
		 * line says wins over the manifest */
		bool distnt = fc.distnt, disretc = fc.disretc;
		if (trace && trace != run_trace) {
			fprintf(stderr, "efipt insn: --run brings its trace: no --pt with it\n");
			goto out;
		}
		if (trace_input_run("efipt insn", run, cpu, &im, &fc, run_trace, sizeof(run_trace),
				    NULL, &facts))
			goto out;
		trace = run_trace;
		fc.distnt |= distnt;
		fc.disretc |= disretc;
	} else if (cpu) {
		fprintf(stderr, "efipt insn: --cpu %u picks a trace of a run directory: give --run\n",
			cpu);
		goto out;
	}
	bool cpu_known = flownote_errata(&fc, run ? &facts : NULL, set_errata, errata);
	if (!trace || optind != argc) {
		insn_usage(stderr);
		goto out;
	}
	if (!im.n) {
		fprintf(stderr, "efipt insn: no code image (--raw, --elf or --pe)\n");
		goto out;
	}
	struct input_map in;
	char err[4400];
	if (input_map(&in, trace, PIPE_MAX, err, sizeof(err))) {
		fprintf(stderr, "efipt insn: %s\n", term_safe(err));
		goto out;
	}
	const uint8_t *buf = in.data;
	size_t len = in.size;
	fc.image = ptsec_ptimg(&im);
	fc.cache_size = (uint32_t)cache_n;
	fc.cache = cache_n ? calloc(cache_n, sizeof(*fc.cache)) : NULL;
	struct ptflow_sink sink = { &o, o.stat ? NULL : print_run, print_event };
	if (o.stat)
		sink.event = NULL;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct ptflow_decoder *d = malloc(sizeof(*d));
	if (!d || (cache_n && !fc.cache) || ptflow_init(d, &fc, &sink)) {
		fprintf(stderr, "efipt insn: out of memory\n");
		input_unmap(&in);
		free(fc.cache);
		free(d);
		goto out;
	}
	struct progress pg;
	progress_start(&pg, d, "insn", strcmp(trace, "-") ? trace : "<stdin>", len, !o.stat);
	long errs = ptflow_decode(d, buf, len, 0);
	progress_end(&pg);
	flush_stdout(); /* the listing before the message about its end */
	/* the listing names each error; --stat only counts them */
	flownote_report("efipt insn", strcmp(trace, "-") ? trace : "<stdin>", &d->stat,
			d->stat.errors, cpu_known, !o.stat);
	errs += trace_end_report("insn", strcmp(trace, "-") ? trace : "<stdin>", buf, len);
	if (o.stat)
		printf("insn: %" PRIu64 "\nbranches: %" PRIu64 "\nevents: %" PRIu64
		       "\nerrors: %ld\npackets: %" PRIu64 "\n",
		       d->stat.insns, d->stat.branches, d->stat.events, errs,
		       d->stat.packets);
	rc = errs ? 1 : 0;
	free(d);
	free(fc.cache);
	input_unmap(&in);
out:
	ptsec_free(&im);
	return rc;
}
