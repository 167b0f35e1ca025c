/*
 * efipt qemu: run qemu-system-x86_64 with the efipt-qemu.so plugin and leave
 * a run directory holding the Intel PT a processor would have written for
 * what the guest executed (docs/qemu.md). QEMU's arguments pass through
 * untouched; the plugin is added as one more -plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "host/cmd/commands.h"
#include "host/input/rundir.h"
#include "host/util/file_io.h"
#include "host/qemu/qemu_esp.h"
#include "host/qemu/qemu_image_filter.h"
#include "host/qemu/qemu_merge.h"
#include "host/qemu/qemu_run.h"
#include "host/qemu/qemu_trace_opts.h"
#include "host/util/opts.h"

static const char qemu_usage[] =
	"usage: efipt qemu -o RUNDIR [OPTIONS] -- QEMU-ARGS...\n\n"
	"Run qemu-system-x86_64 QEMU-ARGS with the efipt-qemu.so plugin, which writes\n"
	"the Intel PT a processor would have written for what the guest executes\n"
	"(emulated: no CPU wrote it) into the new run directory RUNDIR.\n\n";

static const char qemu_tail[] =
	"trace options, as for 'trace' (docs/qemu.md):\n"
	"  --filter A-B       packets only for IPs in [A,B] (up to 4 ranges)\n"
	"  --filter image=NAME\n"
	"                     a SEC/PEI module that runs in place from the flash\n"
	"                     (e.g. PlatformPei): its range, from the firmware\n"
	"                     volumes before QEMU starts. DXE modules are loaded at\n"
	"                     run time: give their range (images.json, efipt info)\n"
	"  --size N           keep N bytes (4K..4G): --mode stop (default) ends the\n"
	"                     trace when full, --mode wrap keeps the last N bytes\n"
	"  --psb P            PSB period: PSBFreq 0..15 or bytes (2K..64M; default 4K)\n"
	"  --noretcomp        no RET compression (DisRETC)\n"
	"  --cr3 V            CR3 filtering: packets only while CR3 is V (QEMU 9.0 or\n"
	"                     newer: the plugin reads CR3)\n"
	"  --tsc, --mtc[=F], --cyc[=T]\n"
	"                     timing packets from the instruction count: with QEMU's\n"
	"                     -icount shift=N,sleep=off each instruction is 2^N ns;\n"
	"                     without -icount, 1 ns (emulated time either way)\n\n"
	"QEMU-ARGS must give the firmware (-drive if=pflash,... or -bios FILE).\n"
	"QEMU never outlives efipt qemu: SIGTERM, SIGINT and SIGHUP are passed on\n"
	"to it, and it is ended when efipt qemu dies.\n"
	"Markers: 0F 1F 84 00 45 50 54 31 (start), ... 54 30 (stop).\n\n"
	"Exit status: 0, the run directory complete (efipt.efi's run merged with\n"
	"--esp); 1 when QEMU or the trace failed, QEMU exited with an error status,\n"
	"--timeout stopped it or the merge failed; 128+N when signal N stopped it\n"
	"(Ctrl-C: 130); 2 on usage errors.\n";

/* What the options fill. */
struct qemu_opts {
	const char *out, *start, *stop, *qemu, *esp, *cpuid, *plugin;
	bool no_esp;
	unsigned long long limit, timeout;
};

/* the start/stop words the plugin takes, or an address */
static int where_ok(const char *v, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(v, *words))
			return 1;
	unsigned long long a;
	return !parse_u64(v, &a);
}

static int set_where(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	static const char *const starts[] = { "reset", "protected", "marker", "guest", NULL };
	static const char *const stops[] = { "exit", "marker", NULL };
	struct qemu_opts *o = ctx;
	bool start = !strcmp(r->name, "start");
	if (!where_ok(v, start ? starts : stops)) {
		sb_printf(err, "--%s %s: expected %s or an address", r->name, term_safe(v),
			  start ? "reset, protected, marker, guest" : "exit, marker");
		return -1;
	}
	*(start ? &o->start : &o->stop) = v;
	return 0;
}

static int set_limit(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	unsigned long long n;
	if (parse_u64(v, &n) || !n) {
		sb_printf(err, "--limit %s: expected a number above 0", term_safe(v));
		return -1;
	}
	((struct qemu_opts *)ctx)->limit = n;
	return 0;
}

static int set_timeout(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	(void)r;
	unsigned long long n;
	if (parse_u64(v, &n) || !n || n > 30 * 86400) {
		sb_printf(err, "--timeout %s: expected seconds, 1 to 2592000", term_safe(v));
		return -1;
	}
	((struct qemu_opts *)ctx)->timeout = n;
	return 0;
}

static const struct opt_row qemu_rows[] = {
	{ "output", OPT_VALUE, opts_set_str, offsetof(struct qemu_opts, out), "RUNDIR",
	  "the run directory to create (must not exist; also\n--out)" },
	{ "start", OPT_VALUE, set_where, 0, "WHERE",
	  "reset (default), protected (first instruction\noutside 16-bit code), marker (the "
	  "start marker),\nan address, or guest: the guest's own WRMSRs\nprogram an emulated "
	  "PT unit (QEMU 9.2 on; needs\n--cpuid)" },
	{ "cpuid", OPT_VALUE, opts_set_str, offsetof(struct qemu_opts, cpuid), "FILE",
	  "--start guest: the CPU profile whose Intel PT is\nemulated (cpuid -r text); "
	  "efipt.efi takes the same\nfile with trace --emulated-caps" },
	{ "stop", OPT_VALUE, set_where, 0, "WHERE",
	  "exit (default), marker (the stop marker) or an\naddress; QEMU ends when the trace "
	  "does" },
	{ "limit", OPT_VALUE, set_limit, 0, "N",
	  "at most N instructions traced (QEMU ends there too)" },
	{ "esp", OPT_VALUE, opts_set_str, offsetof(struct qemu_opts, esp), "IMAGE",
	  "the ESP image QEMU boots (-drive file=IMAGE): after\nQEMU exits, merge the run "
	  "efipt.efi 'trace --source\nqemu' (or --emulated-caps) wrote there (images.json,\n"
	  "memory map) into RUNDIR; QEMU runs on after the\nstop marker until the guest powers "
	  "off. Without\n--esp, the one raw FAT disk image of QEMU-ARGS\n(-drive file=IMAGE, "
	  "-hda IMAGE) is taken, and said so" },
	{ "no-esp", OPT_FLAG, opt_set_true, offsetof(struct qemu_opts, no_esp), NULL,
	  "no ESP: do not look for one in QEMU-ARGS" },
	{ "timeout", OPT_VALUE, set_timeout, 0, "SECONDS",
	  "stop QEMU (SIGTERM, then SIGKILL) when it runs\nlonger; the trace up to then is kept, "
	  "efipt qemu\nexits 1" },
	{ "plugin", OPT_VALUE, opts_set_str, offsetof(struct qemu_opts, plugin), "FILE",
	  "the plugin (default: efipt-qemu.so next to efipt,\nor $EFIPT_QEMU_PLUGIN)" },
	{ "qemu", OPT_VALUE, opts_set_str, offsetof(struct qemu_opts, qemu), "FILE",
	  "the QEMU binary (default: qemu-system-x86_64)" },
};

static int find_plugin(char *out, size_t cap)
{
	const char *env = getenv("EFIPT_QEMU_PLUGIN");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(out, cap, "%s/efipt-qemu.so", dirname(self));
	return 0;
}

/* append s to the plugin's option string, commas doubled for QEMU */
static void opt_append(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(buf);
	for (; *s && n + 2 < cap; s++) {
		buf[n++] = *s;
		if (*s == ',')
			buf[n++] = ',';
	}
	buf[n] = 0;
}

static int has_firmware(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-bios") || !strcmp(argv[i], "-pflash"))
			return 1;
		if (!strcmp(argv[i], "-drive") && i + 1 < argc && strstr(argv[i + 1], "if=pflash"))
			return 1;
	}
	return 0;
}

/* The flash image holding the firmware code: -bios FILE, -pflash FILE, or
 * the first -drive if=pflash's file= (",," is a comma in QEMU's option
 * syntax). */
static int flash_file(int argc, char **argv, char *out, size_t cap)
{
	for (int i = 0; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "-bios") || !strcmp(argv[i], "-pflash")) {
			snprintf(out, cap, "%s", argv[i + 1]);
			return 0;
		}
		const char *d = argv[i + 1];
		if (!strcmp(argv[i], "-drive") && strstr(d, "if=pflash") &&
		    !qemu_drive_opt(d, "file", out, cap))
			return 0;
	}
	return -1;
}

/* Record how QEMU ran in the plugin's manifest (through manifest.json.tmp). */
static int note_qemu(const char *dir, const char *cmdline, char **qargv, int status)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 200];
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	json_error_t je;
	json_t *m = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!m) {
		fprintf(stderr, "efipt qemu: %s: %s\n", path, je.text);
		return -1;
	}
	json_t *q = json_array();
	for (char **a = qargv; *a; a++)
		json_array_append_new(q, json_string(*a));
	json_t *tr = json_object_get(m, "trace");
	if (json_is_object(tr)) {
		json_object_set_new(tr, "qemu_command", q);
		json_object_set_new(tr, "qemu_exit_status", json_integer(status));
	} else {
		json_decref(q);
	}
	json_object_set_new(m, "command_line", json_string(cmdline));
	int rc = rundir_json_save(dir, "manifest.json", m, 2, err, sizeof(err));
	json_decref(m);
	if (rc)
		fprintf(stderr, "efipt qemu: %s\n", err);
	return rc;
}

int cmd_qemu(int argc, char **argv)
{
	struct qemu_opts o = { .qemu = "qemu-system-x86_64" };
	int no_esp, esp_auto = 0;
	static char auto_esp[PATH_MAX];
	unsigned long long limit, timeout;
	char plugin[PATH_MAX] = "";
	/* the whole efipt command line, as efipt.efi records its own: from the
	 * command on (argv[0] is "efipt qemu", the name getopt's messages use),
	 * taken before the option parsers below take their options out of argv */
	static char cmdline[8192];
	snprintf(cmdline, sizeof(cmdline), "qemu");
	for (int i = 1; i < argc; i++) {
		strncat(cmdline, " ", sizeof(cmdline) - strlen(cmdline) - 1);
		strncat(cmdline, argv[i], sizeof(cmdline) - strlen(cmdline) - 1);
	}
	/* the hardware trace options first: the shared table's rows */
	struct qemu_trace_opts topt;
	char terr[4096];
	if (qemu_trace_opts_take(&topt, &argc, argv, terr, sizeof(terr))) {
		fprintf(stderr, "efipt qemu: %s\n", terr);
		return 2;
	}
	/* efipt qemu's options, then "--" and QEMU's arguments */
	int dash = 1;
	while (dash < argc && strcmp(argv[dash], "--"))
		dash++;
	const struct opts_group g[] = { { NULL, qemu_rows, sizeof(qemu_rows) / sizeof(qemu_rows[0]),
					  &o } };
	const struct opts_cmd cmd = { "qemu", qemu_usage, qemu_tail, g, 1, 0 };
	unsigned nop = 0;
	int pr = opts_parse(&cmd, dash, argv, NULL, &nop);
	if (pr != OPTS_OK)
		return pr == OPTS_HELP ? 0 : 2;
	const char *out = o.out, *start = o.start, *stop = o.stop, *qemu = o.qemu;
	const char *esp = o.esp, *cpuid = o.cpuid;
	no_esp = o.no_esp;
	limit = o.limit;
	timeout = o.timeout;
	if (o.plugin)
		snprintf(plugin, sizeof(plugin), "%s", o.plugin);
	if (!out) {
		fprintf(stderr, "efipt qemu: -o RUNDIR is required\n");
		opts_help(&cmd, stderr);
		return 2;
	}
	if (dash + 1 >= argc) {
		fprintf(stderr, "efipt qemu: no QEMU arguments (give them after --)\n");
		return 2;
	}
	int first = dash + 1; /* QEMU's first argument */
	char **qa = argv + first;
	int qn = argc - first;
	int guest = start && !strcmp(start, "guest");
	static char cpuid_abs[PATH_MAX];
	if (guest && !cpuid) {
		fprintf(stderr, "efipt qemu: --start guest needs --cpuid FILE: the CPU profile whose "
				"Intel PT the guest programs (the file efipt.efi trace --emulated-caps "
				"takes)\n");
		return 2;
	}
	if (cpuid && !guest) {
		fprintf(stderr, "efipt qemu: --cpuid is for --start guest\n");
		return 2;
	}
	if (guest && (stop || limit || topt.seen)) {
		fprintf(stderr, "efipt qemu: --start guest: the guest's own programming says where "
				"tracing stops, where the output goes and which packets: no --stop, "
				"--limit or trace options\n");
		return 2;
	}
	if (cpuid && !realpath(cpuid, cpuid_abs)) {
		fprintf(stderr, "efipt qemu: --cpuid %s: %s\n", cpuid, strerror(errno));
		return 2;
	}
	char targs[1024];
	{ /* --filter image=NAME: a module running in place from the flash */
		char fw[PATH_MAX];
		if (!flash_file(qn, qa, fw, sizeof(fw)) &&
		    qemu_image_filters(&topt.cfg, fw, terr, sizeof(terr))) {
			fprintf(stderr, "efipt qemu: %s\n", terr);
			return 2;
		}
	}
	if (qemu_trace_opts_plugin_args(&topt, qn, qa, targs, sizeof(targs), terr, sizeof(terr))) {
		fprintf(stderr, "efipt qemu: %s\n", terr);
		return 2;
	}
	if (!has_firmware(qn, qa)) {
		fprintf(stderr, "efipt qemu: the QEMU arguments give no firmware: add OVMF with "
				"-drive if=pflash,format=raw,readonly=on,file=OVMF_CODE.fd "
				"(or -bios FILE)\n");
		return 2;
	}
	if (esp && no_esp) {
		fprintf(stderr, "efipt qemu: --esp and --no-esp: give one\n");
		return 2;
	}
	if (!esp && !no_esp) {
		char from[32], why[PATH_MAX + 200];
		if (qemu_find_esp(qn, qa, auto_esp, sizeof(auto_esp), from, sizeof(from), why,
				  sizeof(why))) {
			esp = auto_esp;
			esp_auto = 1;
			printf("efipt qemu: the ESP is %s (%s): efipt.efi's run there is merged "
			       "after QEMU ends (--no-esp: not)\n", esp, from);
		} else if (*why) {
			printf("efipt qemu: no ESP to merge efipt.efi's run from: %s\n", why);
		}
	}
	if (esp && access(esp, R_OK)) {
		fprintf(stderr, "efipt qemu: --esp %s: %s\n", esp, strerror(errno));
		return 2;
	}
	if (!plugin[0] && find_plugin(plugin, sizeof(plugin))) {
		fprintf(stderr, "efipt qemu: cannot locate efipt-qemu.so: give --plugin FILE\n");
		return 2;
	}
	if (access(plugin, R_OK)) {
		fprintf(stderr, "efipt qemu: %s: %s (build it with 'make qemu-plugin', or give "
				"--plugin FILE)\n", plugin, strerror(errno));
		return 2;
	}
	struct stat st;
	if (!stat(out, &st)) {
		fprintf(stderr, "efipt qemu: %s already exists: give a new run directory\n", out);
		return 2;
	}
	if (mkdir(out, 0777)) {
		fprintf(stderr, "efipt qemu: %s: %s\n", out, strerror(errno));
		return 2;
	}

	/* -plugin FILE,dir=RUNDIR,...: commas in the names doubled for QEMU */
	char popt[PATH_MAX * 4 + 256] = "";
	opt_append(popt, sizeof(popt), plugin);
	strncat(popt, ",dir=", sizeof(popt) - strlen(popt) - 1);
	opt_append(popt, sizeof(popt), out);
	char more[256];
	/* a trace that stops before QEMU would exit ends QEMU too, except at
	 * the stop marker when efipt.efi still has its run directory to write */
	int stop_ends = stop && strcmp(stop, "exit") && !(esp && !strcmp(stop, "marker"));
	/* a full trace in stop mode ends QEMU as a stop does (not with --esp:
	 * efipt.efi still has its run directory to write) */
	int full_ends = (topt.seen & (1u << PTCFG_OPT_SIZE | 1u << PTCFG_OPT_MODE)) &&
			topt.cfg.mode != PTCFG_MODE_WRAP && !esp;
	snprintf(more, sizeof(more), "%s%s%s%s%s", start ? ",start=" : "", start ? start : "",
		 stop ? ",stop=" : "", stop ? stop : "",
		 stop_ends || limit || full_ends ? ",exit=on" : "");
	strncat(popt, more, sizeof(popt) - strlen(popt) - 1);
	if (limit) {
		snprintf(more, sizeof(more), ",limit=%llu", limit);
		strncat(popt, more, sizeof(popt) - strlen(popt) - 1);
	}
	strncat(popt, targs, sizeof(popt) - strlen(popt) - 1);
	if (guest) {
		strncat(popt, ",cpuid=", sizeof(popt) - strlen(popt) - 1);
		opt_append(popt, sizeof(popt), cpuid_abs);
	}

	char **qargv = calloc((size_t)qn + 4, sizeof(*qargv));
	if (!qargv)
		return 2;
	qargv[0] = (char *)qemu;
	for (int i = 0; i < qn; i++)
		qargv[1 + i] = qa[i];
	qargv[1 + qn] = "-plugin";
	qargv[2 + qn] = popt;

	/* the runs already on the ESP: never merged as this one's */
	char *before = esp ? qemu_esp_runs(esp) : NULL;
	/* what QEMU is about to do, before the wait (a start may take long) */
	printf("efipt qemu: QEMU runs; %s%s%s\n",
	       !start || !strcmp(start, "reset") ? "tracing from the reset vector"
	       : !strcmp(start, "protected") ? "waiting for the first instruction outside 16-bit "
					      "code to start tracing"
	       : !strcmp(start, "marker") ? "waiting for the start marker (EPT1) to start tracing"
	       : guest ? "EMULATED Intel PT: tracing while the guest's own WRMSRs set "
			 "IA32_RTIT_CTL.TraceEn, with the capabilities of "
					   : "waiting for the first execution of ",
	       guest ? cpuid_abs
	       : start && strcmp(start, "reset") && strcmp(start, "protected") &&
			       strcmp(start, "marker") ? start : "",
	       timeout ? "" : " (Ctrl-C ends it; --timeout SECONDS limits it)");
	struct qemu_run qr;
	if (qemu_run(qargv, timeout, &qr)) {
		free(before);
		free(qargv);
		return 2;
	}
	int status = qr.status;
	if (qr.signal)
		fprintf(stderr, "efipt qemu: %s: passed on to QEMU, which ended (status %d)\n",
			strsignal(qr.signal), status);
	else if (qr.timed_out)
		fprintf(stderr, "efipt qemu: --timeout %llu: QEMU was stopped (status %d)\n", timeout,
			status);

	char man[PATH_MAX + 32];
	snprintf(man, sizeof(man), "%s/manifest.json", out);
	if (access(man, R_OK)) {
		char tmp[PATH_MAX + 32];
		snprintf(tmp, sizeof(tmp), "%s/trace.pt.tmp", out);
		if (!rmdir(out)) /* QEMU wrote nothing: leave nothing */
			fprintf(stderr, "efipt qemu: QEMU ended (status %d%s%s) before tracing began; "
					"no run directory (or efipt-qemu.so could write none of its "
					"files: see above)\n", status, *qr.last_err ? ": " : "",
				term_safe(qr.last_err));
		else if (!access(tmp, F_OK))
			fprintf(stderr, "efipt qemu: %s: no manifest.json: QEMU ended (status %d) "
					"before the plugin finished the trace; trace.pt.tmp is "
					"incomplete\n", out, status);
		else
			fprintf(stderr, "efipt qemu: %s: no manifest.json: efipt-qemu.so could not "
					"finish the run directory (QEMU status %d; see above): it "
					"is not a run\n", out, status);
		free(qargv);
		free(before);
		return qr.signal ? 128 + qr.signal : 1;
	}
	int rc = note_qemu(out, cmdline, qargv, status);
	free(qargv);
	if (rc) {
		free(before);
		return 1;
	}
	json_error_t je;
	json_t *m = json_load_file(man, 0, &je);
	json_t *tr = json_object_get(m, "trace");
	json_t *res = json_object_get(m, "status");
	if (strcmp(json_string_value(json_object_get(res, "result")) ?: "", "ok")) {
		if (status && !json_integer_value(json_object_get(tr, "executed")))
			/* QEMU failed before the guest ran: its reason, not the
			 * plugin's view of it ("never started") */
			fprintf(stderr, "efipt qemu: QEMU failed (exit status %d) before the guest "
					"ran%s%s; %s holds no trace\n", status,
				*qr.last_err ? ": " : "", term_safe(qr.last_err), out);
		else
			fprintf(stderr, "efipt qemu: %s: %s%s%s\n", out,
				json_string_value(json_object_get(res, "message")) ?: "failed",
				status ? "; QEMU's exit status: " : "", status ? "see above" : "");
		json_decref(m);
		free(before);
		return qr.signal ? 128 + qr.signal : 1;
	}
	printf("efipt qemu: %s: %" JSON_INTEGER_FORMAT " instructions traced, %" JSON_INTEGER_FORMAT
	       " bytes of trace (emulated by QEMU, stopped by %s)\n",
	       out, json_integer_value(json_object_get(tr, "insns")),
	       json_integer_value(json_object_get(tr, "bytes")),
	       json_string_value(json_object_get(tr, "stopped_by")) ?: "?");
	size_t k;
	json_t *e;
	json_array_foreach(json_object_get(tr, "traces"), k, e)
		if (json_integer_value(json_object_get(e, "cpu")))
			printf("efipt qemu: %s: CPU %" JSON_INTEGER_FORMAT ": %" JSON_INTEGER_FORMAT
			       " instructions traced, %" JSON_INTEGER_FORMAT " bytes (%s)\n", out,
			       json_integer_value(json_object_get(e, "cpu")),
			       json_integer_value(json_object_get(e, "insns")),
			       json_integer_value(json_object_get(e, "bytes")),
			       json_string_value(json_object_get(e, "file")) ?: "?");
	json_decref(m);
	if (qr.signal || qr.timed_out) {
		/* stopped from outside: the guest did not finish its run */
		fprintf(stderr, "efipt qemu: %s holds the trace up to then%s\n", out,
			esp ? "; efipt.efi's run was not merged" : "");
		free(before);
		return qr.signal ? 128 + qr.signal : 1;
	}
	if (esp) {
		struct qemu_merge_result mr;
		char err[PATH_MAX + 256];
		int mrc = qemu_merge_esp(out, esp, before, &mr, err, sizeof(err));
		free(before);
		if (mrc == 1 && esp_auto) {
			/* a disk without efipt.efi's run: the trace stands alone */
			printf("efipt qemu: nothing merged from %s: %s\n", esp, err);
		} else if (mrc) {
			fprintf(stderr, "efipt qemu: merging efipt.efi's run: %s\n", err);
			return 1;
		} else {
			printf("efipt qemu: %s: merged efipt.efi's run %s from %s (%u images, %u "
			       "code snapshots; %s is in %s)\n",
			       out, mr.guest_run, esp, mr.images, mr.snapshots,
			       guest ? "the WRMSR that set TraceEn" : "the start marker", mr.marker_image);
		}
	}
	/* module names from the firmware volumes: not needed for the trace,
	 * so a flash image that cannot be read is a note, not a failure */
	char flash[PATH_MAX];
	if (!flash_file(qn, qa, flash, sizeof(flash))) {
		struct qemu_fv_result fr;
		char err[PATH_MAX + 256];
		if (qemu_name_fv_modules(out, flash, &fr, err, sizeof(err)))
			fprintf(stderr, "efipt qemu: no module names from the firmware volumes: %s\n",
				err);
		else
			printf("efipt qemu: %s: firmware volumes of %s: %u modules (%u LZMA sections"
			       "%s), %u images named, %u SEC/PEI images added, %u images found "
			       "loaded in memory by their code\n",
			       out, flash, fr.modules, fr.lzma, fr.lzma_failed ? ", some unreadable" : "",
			       fr.renamed, fr.added, fr.found);
		if (fr.find_err[0])
			fprintf(stderr, "efipt qemu: modules not looked for in the code snapshots: %s\n",
				fr.find_err);
	}
	if (status) {
		fprintf(stderr, "efipt qemu: %s exited with status %d\n", qemu, status);
		return 1;
	}
	return 0;
}
