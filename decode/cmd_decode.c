/* efipt decode DIR: decode a run directory with its own snapshots and
 * sideband, and print the summary efipt.efi prints after --decode. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pt_flow.h"
#include "core/pt_rtit.h"
#include "core/pt_summary.h"
#include "decode/commands.h"
#include "decode/rundir.h"
#include "decode/rundir_code.h"

static void decode_usage(FILE *f)
{
	fprintf(f, "usage: efipt decode [--top N] DIR\n\n"
		   "Decode the trace of an efipt run directory (trace.pt) against the code\n"
		   "snapshots it holds, and print the same summary efipt.efi prints with\n"
		   "'trace --decode': instructions, branches, events, errors, top images.\n\n"
		   "  --top N   list the N images that executed most (default 10)\n\n"
		   "Exit status: 0 if the trace decoded without errors, 1 if it had decode\n"
		   "errors or the directory is damaged, 2 on usage errors.\n");
}

/* RTIT_CTL bits the decoder must know about, from the manifest's trace. */
static void trace_flags(json_t *m, bool *distnt, bool *disretc)
{
	*distnt = *disretc = false;
	const char *ctl = json_string_value(json_object_get(json_object_get(m, "trace"), "rtit_ctl"));
	if (!ctl)
		return;
	unsigned long long v = strtoull(ctl, NULL, 16);
	*distnt = v & RTIT_CTL_DISTNT;
	*disretc = v & RTIT_CTL_DISRETC;
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, 0, 't' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;
	long top = 10;
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
		fprintf(stderr, "efipt decode: %s\n", rd.err);
		rundir_close(&rd);
		return 1;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.pt", rd.path);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "efipt decode: %s: %s (this run recorded no trace)\n", path,
			strerror(errno));
		rundir_close(&rd);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	size_t size = (size_t)st.st_size;
	const uint8_t *trace = NULL;
	if (size) {
		void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		trace = p == MAP_FAILED ? NULL : p;
	}
	close(fd);
	if (size && !trace) {
		fprintf(stderr, "efipt decode: %s: mmap: %s\n", path, strerror(errno));
		rundir_close(&rd);
		return 1;
	}
	static struct rundir_code code;
	char err[1024];
	if (rundir_code_load(&code, &rd, err, sizeof(err))) {
		fprintf(stderr, "efipt decode: %s\n", err);
		rundir_code_free(&code);
		if (trace)
			munmap((void *)trace, size);
		rundir_close(&rd);
		return 1;
	}
	json_t *cpu = json_object_get(rd.manifest, "cpu");
	struct ptflow_config fc = { 0 };
	fc.image.read = memview_read;
	fc.image.ctx = &code.view;
	fc.cache_size = 1u << 16;
	fc.cache = calloc(fc.cache_size, sizeof(*fc.cache));
	fc.errata = ptflow_errata_for_cpu(
		(unsigned)json_integer_value(json_object_get(cpu, "family")),
		(unsigned)json_integer_value(json_object_get(cpu, "model")),
		(int)json_integer_value(json_object_get(cpu, "stepping")));
	trace_flags(rd.manifest, &fc.distnt, &fc.disretc);
	static struct ptsum sum;
	ptsum_init(&sum, code.images, code.nimages);
	/* blocks from the fast loops: no instruction decoded twice */
	struct ptflow_sink sink = { &sum, NULL, ptsum_on_event };
	static struct ptflow_decoder dec;
	int rc = 1;
	if (fc.cache && ptflow_init(&dec, &fc, &sink) == 0) {
		ptflow_on_blocks(&dec, ptsum_on_blocks);
		sum.dec = &dec;
		ptflow_decode(&dec, trace, size, 0);
		static char text[1 << 16];
		struct strbuf sb;
		sb_init(&sb, text, sizeof(text));
		ptsum_format(&sum, &dec.stat, (unsigned)top, &sb);
		fputs(text, stdout);
		rc = dec.stat.errors ? 1 : 0;
	} else {
		fprintf(stderr, "efipt decode: cannot set up the decoder\n");
	}
	free(fc.cache);
	rundir_code_free(&code);
	if (trace)
		munmap((void *)trace, size);
	rundir_close(&rd);
	return rc;
}
