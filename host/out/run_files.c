/* A run directory written file by file; see run_files.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pt_caps.h"
#include "core/run_manifest.h"
#include "host/out/run_files.h"
#include "host/util/file_io.h"

#define TEXT_CAP (4u << 20)

void runfiles_note(struct run_files *o, const char *name, uint64_t size, const char *status)
{
	if (o->n < RUNFILES_MAX) {
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
void runfiles_put(struct run_files *o, const char *name, const void *data, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	struct atomic_file af;
	if (atomic_open(&af, "recover", path)) {
		runfiles_note(o, name, len, strerror(errno));
		return;
	}
	atomic_write(&af, data, len);
	int err = af.err;
	if (atomic_commit(&af, "recover"))
		runfiles_note(o, name, len, strerror(err ? err : EIO));
	else
		runfiles_note(o, name, len, "written");
}

struct span_out {
	struct atomic_file af;
	struct recmem *m;
	uint8_t *buf;
	int rc;
};

static int copy_span(void *ctx, uint64_t off, uint64_t len)
{
	struct span_out *s = ctx;
	while (len) {
		size_t n = len < (1u << 20) ? (size_t)len : (1u << 20);
		if (recmem_read(s->m, off, s->buf, n)) {
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
void runfiles_put_region(struct run_files *o, const char *name, struct recmem *m,
			 struct ptrec *r, const struct ptrec_end *e, uint64_t off, uint64_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	static struct span_out s;
	if (!s.buf && !(s.buf = malloc(1u << 20))) {
		runfiles_note(o, name, 0, "out of memory");
		return;
	}
	s.m = m;
	s.rc = 0;
	if (atomic_open(&s.af, "recover", path)) {
		runfiles_note(o, name, 0, strerror(errno));
		return;
	}
	uint64_t total = e ? e->len : len;
	if (e)
		ptrec_trace_spans(r, e, copy_span, &s);
	else
		copy_span(&s, off, len);
	if (s.rc) {
		atomic_abort(&s.af);
		runfiles_note(o, name, total, "unreadable");
		return;
	}
	int err = s.af.err;
	if (atomic_commit(&s.af, "recover"))
		runfiles_note(o, name, total, strerror(err ? err : EIO));
	else
		runfiles_note(o, name, total, "written");
}

int runfiles_manifest(struct run_files *o, const char *run_id, const char *started,
		      const char *cmdline, struct ptrec *r, const char *members,
		      const char *result, const char *message)
{
	char *buf = malloc(TEXT_CAP);
	if (!buf) {
		snprintf(o->why, sizeof(o->why), "manifest.json: out of memory");
		return -1;
	}
	struct strbuf sb;
	sb_init(&sb, buf, TEXT_CAP);
	/* the members every run has, the files and the status: core's writer,
	 * as efipt.efi's and the QEMU plugin's manifests */
	struct runmf_head head = { run_id, started, "recover", cmdline };
	runmf_open(&sb, &head);
	if (r) {
		sb_puts(&sb, "  \"firmware\": {\"vendor\": ");
		sb_json_str(&sb, r->h.fw_vendor);
		sb_printf(&sb, ", \"revision\": \"0x%08x\", \"uefi\": \"%u.%u\"},\n",
			  r->h.fw_revision, r->h.uefi_revision >> 16,
			  (r->h.uefi_revision & 0xffff) / 10);
		static struct cpuid_set set;
		static struct ptcaps caps;
		ptrec_cpuid(r, &set);
		ptcaps_parse(&caps, &set);
		sb_puts(&sb, "  \"cpu\": ");
		ptcaps_json(&caps, &sb);
		sb_puts(&sb, ",\n");
	}
	if (members && *members)
		sb_printf(&sb, "  %s,\n", members);
	runmf_files_open(&sb);
	for (unsigned i = 0; i < o->n; i++)
		runmf_file(&sb, i, o->f[i].name, o->f[i].size, o->f[i].status);
	runmf_close(&sb, o->n, result, "none", message);
	char path[4200];
	snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
	int rc = -1;
	struct atomic_file af;
	if (sb.truncated)
		snprintf(o->why, sizeof(o->why), "manifest.json: more than %u bytes", TEXT_CAP);
	else if (atomic_open(&af, "recover", path))
		snprintf(o->why, sizeof(o->why), "manifest.json: %s", strerror(errno));
	else {
		atomic_write(&af, buf, sb.len);
		int err = af.err;
		if (atomic_commit(&af, "recover"))
			snprintf(o->why, sizeof(o->why), "manifest.json: %s", strerror(err ? err : EIO));
		else
			rc = 0;
	}
	free(buf);
	return rc;
}

void runfiles_remove_written(struct run_files *o)
{
	for (unsigned i = 0; i < o->n; i++) {
		char p[4200];
		snprintf(p, sizeof(p), "%s/%s", o->dir, o->f[i].name);
		if (!strcmp(o->f[i].status, "written") && !unlink(p))
			o->f[i].status = "removed";
	}
}
