/* efipt decode DIR: decode a run directory with its own snapshots and
 * sideband, and print the summary efipt.efi prints after --decode. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_flow.h"
#include "core/pt_summary.h"
#include "decode/commands.h"
#include "decode/file_io.h"
#include "decode/flow_notes.h"
#include "decode/progress.h"
#include "decode/rundir.h"
#include "decode/rundir_code.h"
#include "decode/trace_end.h"
#include "decode/trace_input.h"

static void decode_usage(FILE *f)
{
	fprintf(f, "usage: efipt decode [--top N] [--cpu N] [--symbols PATH]... [--path-map OLD=NEW]... DIR\n\n"
		   "Decode the trace of an efipt run directory (trace.pt) against the code\n"
		   "snapshots it holds, and print the same summary efipt.efi prints with\n"
		   "'trace --decode': instructions, branches, events, errors, top images.\n\n"
		   "  --top N   list the N images that executed most (default 10)\n"
		   "  --cpu N   the trace of CPU N (a run with several, e.g. efipt qemu\n"
		   "            -smp; default 0)\n"
		   "  --symbols PATH, --path-map OLD=NEW  also list the N functions that\n"
		   "            executed most, as 'efipt top' (see efipt symbols --help)\n\n"
		   "A trace with no PSB, or whose last packet is cut by the end of the file,\n"
		   "is reported as an error. Image names from the directory are printed\n"
		   "with control characters escaped (\\xNN).\n\n"
		   "Exit status: 0 if the trace decoded without errors, 1 if it had decode\n"
		   "errors or the directory is damaged, 2 on usage errors or a write error\n"
		   "on standard output.\n");
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, 0, 't' },
		{ "symbols", required_argument, 0, 's' },
		{ "path-map", required_argument, 0, 'm' },
		{ "cpu", required_argument, 0, 'c' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;
	long top = 10;
	unsigned cpu = 0;
	char cpu_arg[16] = "0";
	/* --symbols/--path-map: handed to efipt top after the summary */
	char *top_argv[2 * 80 + 8];
	int top_argc = 1, nsym = 0;
	top_argv[0] = "efipt top";
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': {
			char *end;
			top = strtol(optarg, &end, 10);
			if (*end || top < 0 || top > 100000) {
				fprintf(stderr, "efipt decode: --top needs a count, got '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 's':
		case 'm':
			if (top_argc + 2 > 2 * 80) {
				fprintf(stderr, "efipt decode: too many --symbols/--path-map\n");
				return 2;
			}
			top_argv[top_argc++] = c == 's' ? "--symbols" : "--path-map";
			top_argv[top_argc++] = optarg;
			nsym += c == 's';
			break;
		case 'c': {
			uint32_t errata_unused = 0;
			if (strchr(optarg, '/') || trace_input_cpu_arg(optarg, &cpu, &errata_unused)) {
				fprintf(stderr, "efipt decode: --cpu wants a CPU number, got '%s'\n",
					term_safe(optarg));
				return 2;
			}
			snprintf(cpu_arg, sizeof(cpu_arg), "%u", cpu);
			break;
		}
		case 'h':
			decode_usage(stdout);
			return 0;
		default:
			decode_usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "efipt decode: %s\n",
			optind == argc ? "a run directory is required" : "one run directory at a time");
		return 2;
	}
	struct rundir rd;
	if (rundir_open(&rd, argv[optind])) {
		fprintf(stderr, "efipt decode: %s\n", term_safe(rd.err));
		rundir_close(&rd);
		return 1;
	}
	char path[4200], err[4400];
	if (rundir_trace_cpu(&rd, cpu, path, sizeof(path), err, sizeof(err))) {
		fprintf(stderr, "efipt decode: %s\n", term_safe(err));
		rundir_close(&rd);
		return 1;
	}
	struct input_map in;
	if (input_map(&in, path, SIZE_MAX, err, sizeof(err))) {
		fprintf(stderr, "efipt decode: %s\n", term_safe(err));
		rundir_close(&rd);
		return 1;
	}
	const uint8_t *trace = in.data;
	size_t size = in.size;
	static struct rundir_code code;
	if (rundir_code_load(&code, &rd, err, sizeof(err))) {
		fprintf(stderr, "efipt decode: %s\n", term_safe(err));
		rundir_code_free(&code);
		input_unmap(&in);
		rundir_close(&rd);
		return 1;
	}
	struct ptflow_config fc = { 0 };
	fc.image.read = memview_read;
	fc.image.ctx = &code.view;
	fc.cache_size = 1u << 16;
	fc.cache = calloc(fc.cache_size, sizeof(*fc.cache));
	struct flow_facts facts;
	rundir_flow_facts(&rd, &facts);
	flow_setup(&fc, &facts);
	bool cpu_known = flownote_errata(&fc, &facts, false, 0);
	static struct ptsum sum;
	ptsum_init(&sum, code.images, code.nimages);
	if (sum.overlap)
		images_note_overlaps("efipt decode", code.images, code.nimages, sizeof(*code.images),
				     ptsum_image_name);
	/* blocks from the fast loops: no instruction decoded twice */
	struct ptflow_sink sink = { &sum, NULL, ptsum_on_event };
	static struct ptflow_decoder dec;
	int rc = 1;
	if (fc.cache && ptflow_init(&dec, &fc, &sink) == 0) {
		ptflow_on_blocks(&dec, ptsum_on_blocks);
		sum.dec = &dec;
		struct progress pg;
		progress_start(&pg, &dec, "decode", path, size, false);
		ptflow_decode(&dec, trace, size, 0);
		progress_end(&pg);
		/* the summary names the first error: here, what it may be */
		flownote_report("efipt decode", path, &dec.stat, dec.stat.errors, cpu_known, true);
		int end_err = trace_end_report("decode", path, trace, size);
		static char text[1 << 16];
		struct strbuf sb;
		sb_init(&sb, text, sizeof(text));
		ptsum_format(&sum, &dec.stat, (unsigned)top, &sb);
		fputs_safe_text(text, stdout); /* image names come from images.json */
		rc = dec.stat.errors || end_err ? 1 : 0;
		if (nsym) {
			char limit[32];
			snprintf(limit, sizeof(limit), "%ld", top);
			top_argv[top_argc++] = "--limit";
			top_argv[top_argc++] = limit;
			top_argv[top_argc++] = "--cpu";
			top_argv[top_argc++] = cpu_arg;
			top_argv[top_argc++] = argv[optind];
			top_argv[top_argc] = NULL;
			printf("\ntop functions:\n");
			flush_stdout();
			int trc = cmd_top(top_argc, top_argv);
			if (trc > rc)
				rc = trc;
		}
	} else {
		fprintf(stderr, "efipt decode: cannot set up the decoder\n");
	}
	free(fc.cache);
	rundir_code_free(&code);
	input_unmap(&in);
	rundir_close(&rd);
	return rc;
}
