/* efipt info DIR: validate a run directory and show what it holds. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/input/fpdt_run.h"
#include "host/input/fpdt_trace.h"
#include "host/input/session.h"
#include "host/input/rundir.h"
#include "host/out/fpdt_out.h"
#include "host/util/opts.h"
#include "core/pt_image.h"

static const char info_usage[] =
	"usage: efipt info [--caps] [--vs-trace] DIR\n\n"
	"Validate an efipt run directory (\\efipt\\<run-id>\\ from the ESP) and\n"
	"print its manifest: the run, the CPU, the outcome and the files, and the\n"
	"firmware's boot-performance records (fpdt.bin: ACPI FPDT, EDK2's DP\n"
	"records) with their modules.\n\n";

static const char info_tail[] =
	"Strings from the directory are printed with control characters escaped\n"
	"(\\n, \\xNN). A NAME.tmp file means the machine stopped while writing NAME:\n"
	"it is reported and makes the directory damaged. A damaged FPDT record is\n"
	"the firmware's: it is named (offset in fpdt.bin, type, length) and skipped.\n\n"
	"The code snapshots, images.json and codechanges.bin (code that changed\n"
	"while traced: \"Code changes N\") are checked as the decoding commands\n"
	"read them: what they refuse, info refuses with the same message.\n\n"
	"--vs-trace needs fpdt.bin and a trace; times need the TSC's frequency\n"
	"(the manifest's timing.tsc_hz, or CPUID): without it only instructions.\n\n"
	"Exit status: 0 if the directory is valid, 1 if it is damaged (or\n"
	"--vs-trace could not decode the trace, or found no fpdt.bin), 2 on usage\n"
	"errors or a write error on standard output.\n";

struct info_opts {
	bool caps, vs_trace;
};

static const struct opt_row info_rows[] = {
	{ "caps", OPT_FLAG, opt_set_true, offsetof(struct info_opts, caps), NULL,
	  "also print the full capability report from its cpuid.txt" },
	{ "vs-trace", OPT_FLAG, opt_set_true, offsetof(struct info_opts, vs_trace), NULL,
	  "decode the trace (CPU 0) and set each FPDT measurement of an\nimage beside that "
	  "image's first and last time in it" },
};

/* A string member as it may be printed: control characters escaped. */
static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? term_safe(s) : "?";
}

static int show_caps(const struct run_dir *rd, int full)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/cpuid.txt", rd->path);
	struct stat st;
	if (lstat(path, &st) && errno == ENOENT)
		return 0; /* cpuid.txt is optional (a run that failed early) */
	static struct cpuid_set set;
	if (read_cpuid_file("info", path, 0, &set))
		return -1;
	struct ptcaps caps;
	ptcaps_parse(&caps, &set);
	static char buf[16384];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	if (full) {
		ptcaps_report(&caps, &sb);
	} else if (caps.absent != PTCAPS_PRESENT) {
		ptcaps_absent_line(&caps, &sb);
		sb_putc(&sb, '\n');
	} else {
		sb_printf(&sb, "Intel PT     supported (ToPA %s, single-range %s, %u address "
			       "ranges); 'efipt info --caps' for details\n",
			  caps.topa ? (caps.topa_multi ? "multi-entry" : "single-entry") : "no",
			  caps.single_range ? "yes" : "no", caps.addr_ranges);
	}
	fputs(buf, stdout);
	return 0;
}

/*
 * The code snapshots and the image list, loaded as every decoding command
 * loads them (rundir_load_code(): memmap.json, plain snapshot names of the
 * listed size, no overlaps, images.json), so that info refuses what they
 * refuse, with their message; overlapping images are said as they say it.
 * A run without memmap.json and images.json (caps, selftest) has none.
 * Returns -1 when they are damaged.
 */
static int show_code(struct run_dir *rd)
{
	char p[4200], err[4400];
	struct stat st;
	snprintf(p, sizeof(p), "%s/memmap.json", rd->path);
	bool mm = !lstat(p, &st);
	snprintf(p, sizeof(p), "%s/images.json", rd->path);
	if (!mm && lstat(p, &st))
		return 0;
	if (rundir_load_code(rd, err, sizeof(err))) {
		fprintf(stderr, "efipt info: %s\n", term_safe(err));
		return -1;
	}
	uint64_t bytes = 0;
	for (unsigned i = 0; i < rd->nsnap; i++)
		bytes += rd->snap[i].size;
	printf("Code         %u snapshots (%llu KiB), %u images\n", rd->nsnap,
	       (unsigned long long)(bytes >> 10), rd->images.n);
	/* how efipt qemu named them from the flash image (docs/qemu.md) */
	json_t *fv = json_object_get(rd->manifest, "firmware_volumes");
	if (json_is_object(fv))
		printf("Modules      %lld in the firmware volumes: %lld images renamed, %lld SEC/PEI "
		       "added in place, %lld found loaded in memory by their code\n",
		       (long long)json_integer_value(json_object_get(fv, "modules")),
		       (long long)json_integer_value(json_object_get(fv, "renamed")),
		       (long long)json_integer_value(json_object_get(fv, "added")),
		       (long long)json_integer_value(json_object_get(fv, "found")));
	/* code that changed while traced (codechanges.bin): a QEMU run says
	 * how many, even none */
	json_t *tc = json_object_get(json_object_get(rd->manifest, "trace"), "code_changes");
	if (rd->nchg || tc)
		printf("Code changes %zu (codechanges.bin: code that changed while traced, "
		       "decoded from its place in the trace on)\n", rd->nchg);
	if (ptimg_list_sort(rd->images.v, rd->images.n, sizeof(*rd->images.v)))
		images_note_overlaps("efipt info", rd->images.v, rd->images.n,
				     sizeof(*rd->images.v), image_name);
	return 0;
}

/* The firmware's boot-performance records (fpdt.bin), their modules named
 * by the images' GUIDs. Damaged records are the firmware's, not the run
 * directory's: named and skipped. -1 when fpdt.bin cannot be read. */
static int show_fpdt(const struct run_dir *rd)
{
	struct fpdt_run f;
	char err[4400];
	if (fpdtrun_load(&f, rd->path, &rd->images, err, sizeof(err))) {
		fprintf(stderr, "efipt info: %s\n", term_safe(err));
		fpdtrun_free(&f);
		return -1;
	}
	fpdtout_info(stdout, &f);
	fpdtout_warn_damage("efipt info", &f);
	fpdtrun_free(&f);
	return 0;
}

/* --vs-trace: the run's trace decoded (CPU 0) beside the FPDT records.
 * -1 when it cannot be decoded (said). */
static int show_vs_trace(const char *dir)
{
	struct session t;
	struct fpdt_run f;
	struct fpdt_window *w = NULL;
	int rc = -1;
	memset(&f, 0, sizeof(f));
	session_init(&t, "info");
	char err[4400];
	if (session_open(&t, dir, SESSION_TRACE))
		goto out;
	if (fpdtrun_load(&f, t.rd.path, &t.images, err, sizeof(err))) {
		fprintf(stderr, "efipt info: %s\n", term_safe(err));
		goto out;
	}
	if (!f.present) {
		fprintf(stderr, "efipt info: --vs-trace: the run has no fpdt.bin (the firmware "
			"published no FPDT, or efipt.efi did not save it)\n");
		goto out;
	}
	w = calloc(t.images.n + 1, sizeof(*w));
	if (!w) {
		fprintf(stderr, "efipt info: out of memory\n");
		goto out;
	}
	long e = fpdttrace_windows(&t, 0, w);
	if (e < 0)
		goto out;
	bool timed = t.tsc_hz != 0;
	if (!timed)
		fprintf(stderr, "efipt info: --vs-trace: the trace's TSC frequency is not known "
			"(--tsc-hz): instructions only\n");
	fpdtout_vs_trace(stdout, &f, &t.images, w, timed);
	rc = e ? -1 : 0;
out:
	free(w);
	fpdtrun_free(&f);
	session_free(&t);
	return rc;
}

/* The same decode with libipt's ptxed, for users who want its output. */
static void show_ptxed(const struct run_dir *rd)
{
	json_t *files = json_object_get(rd->manifest, "files");
	size_t i;
	json_t *f;
	bool have_trace = false;
	json_array_foreach(files, i, f) {
		const char *n = json_string_value(json_object_get(f, "name"));
		const char *st = json_string_value(json_object_get(f, "status"));
		if (n && st && !strcmp(n, "trace.pt") && !strcmp(st, "written"))
			have_trace = true;
	}
	if (!have_trace)
		return;
	printf("ptxed        ptxed --pt %s/trace.pt", term_safe(rd->path));
	json_t *cpu = json_object_get(rd->manifest, "cpu");
	if (cpu && !strcmp(json_string_value(json_object_get(cpu, "vendor")) ?: "", "GenuineIntel"))
		printf(" --cpu %lld/%lld/%lld",
		       (long long)json_integer_value(json_object_get(cpu, "family")),
		       (long long)json_integer_value(json_object_get(cpu, "model")),
		       (long long)json_integer_value(json_object_get(cpu, "stepping")));
	char err[4200];
	json_t *mm = rundir_json(rd, "memmap.json", err, sizeof(err));
	json_array_foreach(json_object_get(mm, "regions"), i, f) {
		const char *snap = json_string_value(json_object_get(f, "snapshot"));
		const char *phys = json_string_value(json_object_get(f, "phys"));
		if (snap && phys && !strchr(snap, '/'))
			printf(" \\\n               --raw %s/%s:%s", term_safe(rd->path),
			       term_safe(snap), term_safe(phys));
	}
	json_decref(mm);
	printf("\n");
}

/* docs/format.md: a NAME.tmp left behind means the machine stopped while
 * writing NAME. Returns how many there are. */
static int stray_tmp_files(const struct run_dir *rd)
{
	DIR *d = opendir(rd->path);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".tmp"))
			continue;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(len - 4), e->d_name);
		fprintf(stderr, "efipt info: %s/%s: left by an interrupted write (the machine "
				"stopped while writing %s)\n", term_safe(rd->path),
			term_safe(e->d_name), term_safe(name));
		n++;
	}
	closedir(d);
	return n;
}

int cmd_info(int argc, char **argv)
{
	struct info_opts o = { 0 };
	const struct opts_group g[] = { { NULL, info_rows, sizeof(info_rows) / sizeof(info_rows[0]),
					  &o } };
	const struct opts_cmd cmd = { "info", info_usage, info_tail, g, 1, 2 };
	char *operand[2];
	unsigned nop;
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	if (pr != OPTS_OK)
		return pr == OPTS_HELP ? 0 : 2;
	if (nop != 1) {
		fprintf(stderr, "efipt info: %s\n",
			!nop ? "a run directory is required" : "one run directory at a time");
		opts_help(&cmd, stderr);
		return 2;
	}
	bool caps = o.caps;
	struct run_dir rd;
	if (rundir_open(&rd, operand[0])) {
		fprintf(stderr, "efipt info: %s\n", term_safe(rd.err));
		rundir_close(&rd);
		return 1;
	}
	json_t *m = rd.manifest;
	json_t *st = json_object_get(m, "status");
	json_t *fw = json_object_get(m, "firmware");
	printf("Run          %s (%s)\n", jstr(m, "run_id"), term_safe(rd.path));
	printf("efipt.efi    %s (%s)\n", jstr(m, "efipt_version"), jstr(m, "efipt_gitrev"));
	printf("Started      %s\n", jstr(m, "started"));
	printf("Command      %s\n", jstr(m, "command_line"));
	if (fw)
		printf("Firmware     %s rev %s, UEFI %s\n", jstr(fw, "vendor"), jstr(fw, "revision"),
		       jstr(fw, "uefi"));
	json_t *cpu = json_object_get(m, "cpu");
	if (cpu)
		printf("CPU          %s signature %s (family 0x%llx model 0x%llx stepping 0x%llx)\n",
		       jstr(cpu, "vendor"), jstr(cpu, "signature"),
		       (long long)json_integer_value(json_object_get(cpu, "family")),
		       (long long)json_integer_value(json_object_get(cpu, "model")),
		       (long long)json_integer_value(json_object_get(cpu, "stepping")));
	int rc = show_caps(&rd, caps) ? 1 : 0;
	printf("Result       %s (%s): %s\n", jstr(st, "result"), jstr(st, "efi_status"),
	       jstr(st, "message"));
	json_t *files = json_object_get(m, "files");
	size_t i;
	json_t *f;
	printf("Files        %zu\n", json_array_size(files));
	json_array_foreach(files, i, f) {
		printf("  %-24s %12lld  %s\n", jstr(f, "name"),
		       (long long)json_integer_value(json_object_get(f, "size")), jstr(f, "status"));
	}
	json_t *tr = json_object_get(m, "trace");
	if (tr)
		printf("Trace        %s, %lld bytes\n",
		       json_object_get(tr, "source") ? jstr(tr, "source") : "Intel PT",
		       (long long)json_integer_value(json_object_get(tr, "bytes")));
	if (json_object_get(tr, "traces")) {
		/* one per CPU (efipt qemu -smp): --cpu N picks one */
		static struct rundir_cpu_trace t[RUNDIR_TRACES_MAX];
		char err[1200];
		int n = rundir_traces(&rd, t, RUNDIR_TRACES_MAX, err, sizeof(err));
		if (n < 0) {
			printf("Traces       %s\n", term_safe(err));
			rc = 1;
		}
		for (int k = 0; k < n; k++)
			printf("%s CPU %-3u %-16s %12llu bytes %14llu instructions\n",
			       k ? "            " : "Traces      ", t[k].cpu, t[k].file,
			       (unsigned long long)t[k].bytes, (unsigned long long)t[k].insns);
	}
	if (show_code(&rd))
		rc = 1;
	if (show_fpdt(&rd))
		rc = 1;
	if (o.vs_trace && show_vs_trace(operand[0]))
		rc = 1;
	char tp[4200], terr[4400];
	if (rundir_trace(&rd, tp, sizeof(tp), terr, sizeof(terr)) && strstr(terr, " is empty: "))
		fprintf(stderr, "efipt info: %s: the decoding commands refuse this run\n",
			term_safe(terr));
	show_ptxed(&rd);
	if (stray_tmp_files(&rd))
		rc = 1;
	rundir_close(&rd);
	return rc;
}
