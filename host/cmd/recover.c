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
#include "host/util/file_io.h"
#include "host/util/opts.h"

#define TEXT_CAP (4u << 20)
#define MAX_FILES 1024

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

struct mem {
	int fd;
	uint64_t base;		/* physical address of the file's offset 0 */
	uint64_t phys;		/* the region */
	const char *path;
	int err;		/* errno of the first failed read */
};

static int mem_read(void *ctx, uint64_t off, void *dst, size_t len)
{
	struct mem *m = ctx;
	uint64_t at = m->phys + off;
	if (at < m->base)
		return -1;
	uint8_t *d = dst;
	while (len) {
		ssize_t n = pread(m->fd, d, len, (off_t)(at - m->base));
		if (n <= 0) {
			if (!m->err)
				m->err = n < 0 ? errno : EIO;
			return -1;
		}
		d += n;
		len -= (size_t)n;
		at += (uint64_t)n;
	}
	return 0;
}

/* The run directory: files written so far (for the manifest). */
struct rundir_out {
	char dir[4096];
	struct {
		char name[64];
		uint64_t size;
		const char *status;
	} f[MAX_FILES];
	unsigned n;
	bool failed;
	char why[512];
};

static void note_file(struct rundir_out *o, const char *name, uint64_t size, const char *status)
{
	if (o->n < MAX_FILES) {
		snprintf(o->f[o->n].name, sizeof(o->f[0].name), "%s", name);
		o->f[o->n].size = size;
		o->f[o->n].status = status;
		o->n++;
	}
	if (strcmp(status, "written") && !o->failed) {
		o->failed = true;
		snprintf(o->why, sizeof(o->why), "%s: %s", name, status);
	}
}

/* One file from memory. */
static void put_file(struct rundir_out *o, const char *name, const void *data, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	struct atomic_file af;
	if (atomic_open(&af, "recover", path)) {
		note_file(o, name, len, strerror(errno));
		return;
	}
	atomic_write(&af, data, len);
	int err = af.err;
	if (atomic_commit(&af, "recover"))
		note_file(o, name, len, strerror(err ? err : EIO));
	else
		note_file(o, name, len, "written");
}

struct span_out {
	struct atomic_file af;
	struct mem *m;
	uint8_t *buf;
	int rc;
};

static int copy_span(void *ctx, uint64_t off, uint64_t len)
{
	struct span_out *s = ctx;
	while (len) {
		size_t n = len < (1u << 20) ? (size_t)len : (1u << 20);
		if (mem_read(s->m, off, s->buf, n)) {
			s->rc = -1;
			return 1;
		}
		atomic_write(&s->af, s->buf, n);
		off += n;
		len -= n;
	}
	return 0;
}

/* A file straight from the region: spans (trace.pt) or one range (code). */
static void put_region(struct rundir_out *o, const char *name, struct mem *m, struct ptrec *r,
		       const struct ptrec_end *e, uint64_t off, uint64_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	static struct span_out s;
	if (!s.buf && !(s.buf = malloc(1u << 20))) {
		note_file(o, name, 0, "out of memory");
		return;
	}
	s.m = m;
	s.rc = 0;
	if (atomic_open(&s.af, "recover", path)) {
		note_file(o, name, 0, strerror(errno));
		return;
	}
	uint64_t total = e ? e->len : len;
	if (e)
		ptrec_trace_spans(r, e, copy_span, &s);
	else
		copy_span(&s, off, len);
	if (s.rc) {
		atomic_abort(&s.af);
		note_file(o, name, total, "unreadable");
		return;
	}
	int err = s.af.err;
	if (atomic_commit(&s.af, "recover"))
		note_file(o, name, total, strerror(err ? err : EIO));
	else
		note_file(o, name, total, "written");
}

/* The variable through efivarfs: 4 bytes of attributes, then its data. */
static int read_var(const char *dir, struct ptrec_var *v, char *why, size_t cap)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s-%s", dir, PTREC_VAR_NAME, PTREC_VENDOR_GUID_TEXT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (no recorder: efipt.efi trace --recorder arms one; is "
					   "efivarfs mounted?)"
					 : "");
		return errno == ENOENT ? 1 : 2;
	}
	uint8_t buf[4 + sizeof(*v) + 1];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	struct strbuf sb;
	sb_init(&sb, why, cap);
	if (n < 4) {
		snprintf(why, cap, "%s: %s", path, n < 0 ? strerror(errno) : "too short");
		return 2;
	}
	return ptrec_var_decode(buf + 4, (size_t)n - 4, v, &sb) ? 1 : 0;
}

static void json_str(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	sb_json_escape(sb, s);
	sb_putc(sb, '"');
}

static void write_manifest(struct rundir_out *o, const char *run_id, const char *started,
			   const char *cmdline, struct ptrec *r, const char *members,
			   const char *result, const char *message)
{
	char *buf = malloc(TEXT_CAP);
	if (!buf)
		return;
	struct strbuf sb;
	sb_init(&sb, buf, TEXT_CAP);
	sb_printf(&sb, "{\n  \"format\": \"efipt-run\",\n  \"format_version\": 1,\n"
		       "  \"efipt_version\": \"%s\",\n  \"efipt_gitrev\": \"%s\",\n",
		  efipt_version, efipt_gitrev);
	sb_printf(&sb, "  \"run_id\": \"%s\",\n  \"started\": \"%s\",\n  \"command\": \"recover\","
		       "\n  \"command_line\": ",
		  run_id, started);
	json_str(&sb, cmdline);
	if (r) {
		sb_puts(&sb, ",\n  \"firmware\": {\"vendor\": ");
		json_str(&sb, r->h.fw_vendor);
		sb_printf(&sb, ", \"revision\": \"0x%08x\", \"uefi\": \"%u.%u\"}", r->h.fw_revision,
			  r->h.uefi_revision >> 16, (r->h.uefi_revision & 0xffff) / 10);
		static struct cpuid_set set;
		static struct ptcaps caps;
		ptrec_cpuid(r, &set);
		ptcaps_parse(&caps, &set);
		sb_puts(&sb, ",\n  \"cpu\": ");
		ptcaps_json(&caps, &sb);
	}
	if (members && *members)
		sb_printf(&sb, ",\n  %s", members);
	sb_puts(&sb, ",\n  \"files\": [");
	for (unsigned i = 0; i < o->n; i++) {
		sb_printf(&sb, "%s\n    {\"name\": ", i ? "," : "");
		json_str(&sb, o->f[i].name);
		sb_printf(&sb, ", \"size\": %llu, \"status\": ", (unsigned long long)o->f[i].size);
		json_str(&sb, o->f[i].status);
		sb_putc(&sb, '}');
	}
	sb_printf(&sb, "%s],\n  \"status\": {\"result\": \"%s\", \"efi_status\": \"none\", "
		       "\"message\": ",
		  o->n ? "\n  " : "", result);
	json_str(&sb, message);
	sb_puts(&sb, "}\n}\n");
	char path[4200];
	snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
	struct atomic_file af;
	if (!sb.truncated && !atomic_open(&af, "recover", path)) {
		atomic_write(&af, buf, sb.len);
		atomic_commit(&af, "recover");
	}
	free(buf);
}

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
	struct mem m = { .fd = -1, .path = memspec };
	char *colon = strrchr(memspec, ':');
	unsigned long long base = 0;
	if (colon && !parse_u64(colon + 1, &base)) {
		*colon = 0;
		m.base = base;
	}
	char why[4400];
	static struct ptrec_var var;
	int vr = read_var(efivars, &var, why, sizeof(why));
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
	struct ptrec_reader rd = { mem_read, &m };
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
	static struct rundir_out o;
	snprintf(o.dir, sizeof(o.dir), "%s", out);
	char *text = malloc(TEXT_CAP);
	if (!text) {
		fprintf(stderr, "efipt recover: out of memory\n");
		close(m.fd);
		return 2;
	}
	if (have_trace)
		put_region(&o, "trace.pt", &m, &r, &e, 0, 0);
	struct strbuf sb;
	sb_init(&sb, text, TEXT_CAP);
	ptrec_images_json(&r, &sb);
	put_file(&o, "images.json", text, sb.len);
	sb_init(&sb, text, TEXT_CAP);
	ptrec_memmap_json(&r, &sb);
	put_file(&o, "memmap.json", text, sb.len);
	struct ptrec_code code;
	for (unsigned i = 0; ptrec_code(&r, i, &code); i++) {
		char name[48];
		snprintf(name, sizeof(name), "mem-%016llx.bin", (unsigned long long)code.phys);
		put_region(&o, name, &m, &r, NULL, code.off, code.size);
	}
	static struct cpuid_set set;
	ptrec_cpuid(&r, &set);
	sb_init(&sb, text, TEXT_CAP);
	cpuidtxt_write(&set, &sb);
	put_file(&o, "cpuid.txt", text, sb.len);
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
		for (unsigned i = 0; i < o.n; i++) {
			char p[4200];
			snprintf(p, sizeof(p), "%s/%s", o.dir, o.f[i].name);
			if (!strcmp(o.f[i].status, "written") && !unlink(p))
				o.f[i].status = "removed";
		}
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
	write_manifest(&o, run_id, started, cmdline, &r, text, rc ? "failed" : "ok", msg);
	free(text);
	fprintf(rc ? stderr : stdout, "efipt recover: %s\n", msg);
	if (notes[0] && !rc)
		fputs_safe_text(notes, stderr);
	return rc;
}
