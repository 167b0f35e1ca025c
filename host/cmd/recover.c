/*
 * efipt recover --linux: the flight recorder's trace from the OS that the
 * traced loader booted, on the traced machine (docs/recorder.md). The UEFI
 * variable through efivarfs says where the region is; the region is read
 * through /dev/mem (EfiReservedMemoryType memory is E820 "reserved", which
 * CONFIG_STRICT_DEVMEM lets root read); the one parser of core/recorder.c
 * checks it and finds the end of the trace; the run directory is the one
 * efipt.efi recover writes. Tracing may still be running while it reads
 * (the recorder goes on into the OS): a snapshot, said so in the manifest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/pt_caps.h"
#include "core/recorder.h"
#include "core/version.h"
#include "host/cmd/commands.h"
#include "host/input/recorder_mem.h"
#include "host/out/run_files.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

#define TEXT_CAP (4u << 20)

static const char recover_usage[] =
	"usage: efipt recover --linux -o RUNDIR [--efivars DIR] [--mem FILE[:BASE]]\n\n"
	"Write the flight recorder's trace (efipt.efi trace --recorder) to RUNDIR,\n"
	"from Linux on the traced machine, as efipt.efi recover writes it after a\n"
	"reset. Needs root: the UEFI variable " PTREC_VAR_NAME "-" PTREC_VENDOR_GUID_TEXT "\n"
	"is read through efivarfs, the recorder region through /dev/mem (reserved\n"
	"memory, which CONFIG_STRICT_DEVMEM allows). Intel PT may still be writing\n"
	"the trace (the recorder goes on into the OS): what is read is a snapshot,\n"
	"and its end is found from the trace (the newest PSB+ by its TSC).\n\n";

static const char recover_tail[] =
	"Exit status: 0 recovered; 1 no recorder, or none that can be recovered\n"
	"(the reason is printed); 2 usage errors, unreadable inputs, a run\n"
	"directory that cannot be written.\n";

struct recover_opts {
	bool linux_src;		/* --linux */
	const char *out;	/* -o, --output */
	const char *efivars;	/* --efivars */
	const char *mem;	/* --mem FILE[:BASE] */
};

static const struct opt_row recover_rows[] = {
	{ "linux", OPT_FLAG, opt_set_true, offsetof(struct recover_opts, linux_src), NULL,
	  "read the machine this runs on (the only source yet)" },
	{ "output", OPT_VALUE, opts_set_str, offsetof(struct recover_opts, out), "RUNDIR",
	  "the run directory to create (must not exist)" },
	{ "efivars", OPT_VALUE, opts_set_str, offsetof(struct recover_opts, efivars), "DIR",
	  "efivarfs (default /sys/firmware/efi/efivars)" },
	{ "mem", OPT_VALUE, opts_set_str, offsetof(struct recover_opts, mem), "FILE[:BASE]",
	  "physical memory (default /dev/mem); BASE: the\nphysical address of FILE's first "
	  "byte (default 0)" },
};

int cmd_recover(int argc, char **argv)
{
	struct recover_opts ro = { false, NULL, "/sys/firmware/efi/efivars", "/dev/mem" };
	const struct opts_group g[] = {
		{ NULL, recover_rows, sizeof(recover_rows) / sizeof(recover_rows[0]), &ro },
	};
	const struct opts_cmd cmd = { "recover", recover_usage, recover_tail, g, 1, 0 };
	unsigned nop = 0;
	int pr = opts_parse(&cmd, argc, argv, NULL, &nop);
	if (pr != OPTS_OK)
		return pr == OPTS_HELP ? 0 : 2;
	if (!ro.linux_src || !ro.out) {
		fprintf(stderr, "efipt recover: %s\n",
			!ro.linux_src ? "give --linux (efipt.efi recover reads the recorder in "
					"firmware)"
				      : "-o RUNDIR is required");
		opts_help(&cmd, stderr);
		return 2;
	}
	const char *out = ro.out, *efivars = ro.efivars;
	char memspec[4096];
	snprintf(memspec, sizeof(memspec), "%s", ro.mem);
	struct recmem m = { .fd = -1, .path = memspec };
	char *colon = strrchr(memspec, ':');
	unsigned long long base = 0;
	if (colon && !parse_u64(colon + 1, &base)) {
		*colon = 0;
		m.base = base;
	}
	char why[4400];
	static struct ptrec_var var;
	int vr = recmem_read_var(efivars, &var, why, sizeof(why));
	if (vr) {
		fprintf(stderr, "efipt recover: %s\n", term_safe(why));
		return vr;
	}
	if (var.state == PTREC_VAR_RECOVERED)
		fprintf(stderr, "efipt recover: efipt.efi recovered this recorder before; reading it "
				"again\n");
	m.phys = var.region_phys;
	m.fd = open(m.path, O_RDONLY | O_CLOEXEC);
	if (m.fd < 0) {
		fprintf(stderr, "efipt recover: %s: %s%s\n", m.path, strerror(errno),
			errno == EACCES || errno == EPERM ? " (reading physical memory needs root)" : "");
		return 2;
	}
	static struct ptrec r;
	struct ptrec_reader rd = { recmem_read, &m };
	struct strbuf wb;
	sb_init(&wb, why, sizeof(why));
	int st = ptrec_open(&r, &var, &rd, &wb);
	if (st) {
		if (st == PTREC_UNREADABLE && m.err)
			fprintf(stderr, "efipt recover: %s at 0x%llx: %s%s\n", m.path,
				(unsigned long long)var.region_phys, strerror(m.err),
				m.err == EPERM ? " (CONFIG_STRICT_DEVMEM allows reserved memory only: "
						 "is the region reserved in /proc/iomem?)"
					       : "");
		else
			fprintf(stderr, "efipt recover: no trace recovered: %s\n", term_safe(why));
		close(m.fd);
		return st == PTREC_UNREADABLE ? 2 : 1;
	}
	if (wb.len)
		fprintf(stderr, "efipt recover: note%s\n", term_safe(why));
	char notes[1024];
	struct strbuf nb;
	sb_init(&nb, notes, sizeof(notes));
	sb_puts(&nb, "output MSRs not read: from Linux they are live registers of a trace that may "
		     "still run\n");
	struct ptrec_end e;
	memset(&e, 0, sizeof(e));
	bool have_trace = r.nreg && ptrec_find_end(&r, NULL, &e, &nb) == 0;
	if (r.nreg && !have_trace) {
		fprintf(stderr, "efipt recover: no trace recovered: %s", term_safe(notes));
		close(m.fd);
		return 1;
	}
	if (mkdir(out, 0777)) {
		fprintf(stderr, "efipt recover: %s: %s\n", out, strerror(errno));
		close(m.fd);
		return 2;
	}
	static struct run_files o;
	snprintf(o.dir, sizeof(o.dir), "%s", out);
	char *text = malloc(TEXT_CAP);
	if (!text) {
		fprintf(stderr, "efipt recover: out of memory\n");
		close(m.fd);
		return 2;
	}
	if (have_trace)
		runfiles_put_region(&o, "trace.pt", &m, &r, &e, 0, 0);
	struct strbuf sb;
	sb_init(&sb, text, TEXT_CAP);
	ptrec_images_json(&r, &sb);
	runfiles_put(&o, "images.json", text, sb.len);
	sb_init(&sb, text, TEXT_CAP);
	ptrec_memmap_json(&r, &sb);
	runfiles_put(&o, "memmap.json", text, sb.len);
	struct ptrec_code code;
	for (unsigned i = 0; ptrec_code(&r, i, &code); i++) {
		char name[48];
		snprintf(name, sizeof(name), "mem-%016llx.bin", (unsigned long long)code.phys);
		runfiles_put_region(&o, name, &m, &r, NULL, code.off, code.size);
	}
	static struct cpuid_set set;
	ptrec_cpuid(&r, &set);
	sb_init(&sb, text, TEXT_CAP);
	cpuidtxt_write(&set, &sb);
	runfiles_put(&o, "cpuid.txt", text, sb.len);
	close(m.fd);

	/* the manifest: as efipt.efi recover's, from the host's point of view */
	const struct ptrec_header *h = &r.h;
	struct ptrec_here here = { 0, false, "efipt recover --linux",
				   h->source == PTREC_SRC_HW && !(h->flags & PTREC_F_STOPPED) };
	sb_init(&sb, text, TEXT_CAP);
	ptrec_manifest_members(&r, &e, &here, notes, &sb);
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char run_id[32], started[32];
	strftime(run_id, sizeof(run_id), "%Y%m%d-%H%M%S-000", &tm);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%S", &tm);
	char cmdline[4096] = "";
	struct strbuf cb;
	sb_init(&cb, cmdline, sizeof(cmdline));
	for (int i = 0; i < argc; i++)
		sb_printf(&cb, "%s%s", i ? " " : "", i ? argv[i] : "efipt recover");
	char msg[600];
	int rc = 0;
	if (o.failed) {
		/* an incomplete run is no result: leave only the manifest that says why */
		runfiles_remove_written(&o);
		snprintf(msg, sizeof(msg), "writing the run directory failed: %s (what was written "
					   "was removed)", o.why);
		rc = 2;
	} else if (have_trace) {
		snprintf(msg, sizeof(msg), "recovered %s%llu bytes of trace of boot %u from Linux (end: "
					   "%s%s%s)",
			 h->source == PTREC_SRC_SYNTHETIC ? "SYNTHETIC " : "",
			 (unsigned long long)e.len, h->boot, ptrec_end_how_name(e.how),
			 e.wrapped ? ", wrapped" : "", here.live ? ", a snapshot of a running trace" : "");
	} else {
		snprintf(msg, sizeof(msg), "recovered the images of boot %u from Linux; no trace in the "
					   "region (--source qemu: the host's efipt-qemu.so recorded it)",
			 h->boot);
	}
	if (runfiles_manifest(&o, run_id, started, cmdline, &r, text, rc ? "failed" : "ok", msg)) {
		/* no manifest, no run: what was written goes too */
		runfiles_remove_written(&o);
		rmdir(out);
		fprintf(stderr, "efipt recover: %s: no run directory written\n", o.why);
		free(text);
		return 2;
	}
	free(text);
	fprintf(rc ? stderr : stdout, "efipt recover: %s\n", msg);
	if (notes[0] && !rc)
		fputs_safe_text(notes, stderr);
	return rc;
}
