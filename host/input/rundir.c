/* Run directory loading and validation; see rundir.h. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cpuid_set.h"
#include "core/run_result.h"
#include "host/util/file_io.h"
#include "host/input/rundir.h"
#include "host/util/stats.h"

#define MANIFEST_MAX (4u << 20)
#define JSON_MAX (64u << 20) /* memmap.json, images.json: thousands of entries */

static int fail(struct run_dir *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct run_dir *rd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rd->err, sizeof(rd->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* key must exist with the given JSON type; name it in the error otherwise. */
static json_t *need(struct run_dir *rd, json_t *obj, const char *where, const char *key,
		    json_type type, int *bad)
{
	static const char *const tname[] = { "an object", "an array", "a string", "an integer",
					     "a number", "true", "false", "null" };
	json_t *v = json_object_get(obj, key);
	if (*bad)
		return v;
	if (!v) {
		*bad = fail(rd, "manifest.json: missing \"%s%s\"", where, key);
		return NULL;
	}
	int ok = json_typeof(v) == type ||
		 (type == JSON_TRUE && json_typeof(v) == JSON_FALSE);
	if (!ok) {
		*bad = fail(rd, "manifest.json: \"%s%s\" must be %s", where, key,
			    type == JSON_TRUE ? "a boolean" : tname[type]);
		return NULL;
	}
	return v;
}

/* Optional members: absent is fine, present means the type docs/format.md
 * gives them. */
struct member {
	const char *where, *key;
	json_type type;
};

static int check_optional(struct run_dir *rd, json_t *m)
{
	static const struct member top[] = {
		{ "", "efipt_gitrev", JSON_STRING }, { "", "started", JSON_STRING },
		{ "", "firmware", JSON_OBJECT }, { "", "cpu", JSON_OBJECT },
		{ "", "rtit_ctl_at_start", JSON_STRING }, { "", "traced_image", JSON_OBJECT },
		{ "", "trace", JSON_OBJECT }, { "", "traced_exit_status", JSON_STRING },
		{ "", "timing", JSON_OBJECT },
	};
	static const struct member sub[] = {
		{ "firmware", "vendor", JSON_STRING }, { "firmware", "revision", JSON_STRING },
		{ "firmware", "uefi", JSON_STRING },
		{ "cpu", "vendor", JSON_STRING }, { "cpu", "hypervisor", JSON_STRING },
		{ "cpu", "signature", JSON_STRING }, { "cpu", "family", JSON_INTEGER },
		{ "cpu", "model", JSON_INTEGER }, { "cpu", "stepping", JSON_INTEGER },
		{ "cpu", "maxphyaddr", JSON_INTEGER }, { "cpu", "pt", JSON_TRUE },
		{ "traced_image", "path", JSON_STRING }, { "traced_image", "base", JSON_STRING },
		{ "traced_image", "size", JSON_INTEGER },
		{ "trace", "rtit_ctl", JSON_STRING }, { "trace", "source", JSON_STRING },
		{ "trace", "output", JSON_STRING }, { "trace", "mode", JSON_STRING },
		{ "trace", "size", JSON_INTEGER }, { "trace", "bytes", JSON_INTEGER },
		{ "trace", "cpus", JSON_INTEGER }, { "trace", "traces", JSON_ARRAY },
		{ "timing", "tsc_start", JSON_STRING }, { "timing", "tsc_stop", JSON_STRING },
		{ "timing", "nom_freq", JSON_INTEGER }, { "timing", "tsc_hz", JSON_INTEGER },
		{ "timing", "cpuid15_eax", JSON_INTEGER }, { "timing", "cpuid15_ebx", JSON_INTEGER },
		{ "timing", "cpuid15_ecx", JSON_INTEGER }, { "timing", "emulated", JSON_TRUE },
		{ "timing", "clock", JSON_STRING },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]) && !bad; i++)
		if (json_object_get(m, top[i].key))
			need(rd, m, "", top[i].key, top[i].type, &bad);
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]) && !bad; i++) {
		json_t *o = json_object_get(m, sub[i].where);
		char where[32];
		snprintf(where, sizeof(where), "%s.", sub[i].where);
		if (json_object_get(o, sub[i].key))
			need(rd, o, where, sub[i].key, sub[i].type, &bad);
	}
	return bad ? -1 : 0;
}

static int check_files(struct run_dir *rd, json_t *files)
{
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f) {
		int bad = 0;
		char where[48];
		snprintf(where, sizeof(where), "files[%zu].", i);
		if (!json_is_object(f))
			return fail(rd, "manifest.json: \"files[%zu]\" must be an object", i);
		json_t *name = need(rd, f, where, "name", JSON_STRING, &bad);
		json_t *size = need(rd, f, where, "size", JSON_INTEGER, &bad);
		json_t *status = need(rd, f, where, "status", JSON_STRING, &bad);
		if (bad)
			return -1;
		const char *n = json_string_value(name);
		if (!*n || strchr(n, '/') || strchr(n, '\\') || !strcmp(n, "..") || !strcmp(n, "."))
			return fail(rd, "manifest.json: files[%zu].name '%s' is not a plain file name",
				    i, n);
		if (strcmp(json_string_value(status), "written"))
			continue; /* the manifest says it is missing: nothing to check */
		char p[4200];
		snprintf(p, sizeof(p), "%s/%s", rd->path, n);
		struct stat st;
		if (stat(p, &st))
			return fail(rd, "%s: listed in manifest.json as written, but %s", p,
				    strerror(errno));
		if (!S_ISREG(st.st_mode))
			return fail(rd, "%s: listed in manifest.json as written, but %s", p,
				    S_ISDIR(st.st_mode) ? "a directory, not a file" :
							  "not a regular file");
		if ((long long)st.st_size != json_integer_value(size))
			return fail(rd, "%s: %lld bytes, manifest.json says %lld (truncated copy?)",
				    p, (long long)st.st_size, (long long)json_integer_value(size));
	}
	return 0;
}

int rundir_open(struct run_dir *rd, const char *path)
{
	memset(rd, 0, sizeof(*rd));
	struct stat st;
	if (stat(path, &st))
		return fail(rd, "%s: %s", path, strerror(errno));
	snprintf(rd->path, sizeof(rd->path), "%s", path);
	for (size_t n = strlen(rd->path); n > 1 && rd->path[n - 1] == '/';)
		rd->path[--n] = 0;
	if (!S_ISDIR(st.st_mode)) {
		/* a path to manifest.json names its directory */
		char *slash = strrchr(rd->path, '/');
		if (!slash || strcmp(slash + 1, "manifest.json"))
			return fail(rd, "%s: not a run directory (expected a directory holding "
					"manifest.json)", path);
		*slash = 0;
		if (!rd->path[0])
			strcpy(rd->path, "/");
	}
	char mpath[4200];
	snprintf(mpath, sizeof(mpath), "%s/manifest.json", rd->path);
	if (stat(mpath, &st))
		return fail(rd, "%s: %s (not a run directory, or the run stopped before writing "
				"its manifest)", mpath, strerror(errno));
	if (st.st_size > MANIFEST_MAX)
		return fail(rd, "%s: %lld bytes, larger than any manifest efipt writes", mpath,
			    (long long)st.st_size);
	int fd = open_regular(mpath, rd->err, sizeof(rd->err));
	if (fd < 0)
		return -1;
	json_error_t je;
	rd->manifest = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	stats.manifest++;
	close(fd);
	if (!rd->manifest)
		return fail(rd, "%s:%d:%d: invalid JSON: %s%s", mpath, je.line, je.column, je.text,
			    st.st_size == 0 ? " (empty file)" : "");
	json_t *m = rd->manifest;
	if (!json_is_object(m))
		return fail(rd, "%s: the manifest must be a JSON object", mpath);
	int bad = 0;
	json_t *fmt = need(rd, m, "", "format", JSON_STRING, &bad);
	if (bad)
		return -1;
	if (strcmp(json_string_value(fmt), "efipt-run"))
		return fail(rd, "manifest.json: format is \"%s\", expected \"efipt-run\"",
			    json_string_value(fmt));
	json_t *ver = need(rd, m, "", "format_version", JSON_INTEGER, &bad);
	if (!bad && json_integer_value(ver) != 1)
		return fail(rd, "manifest.json: format_version %lld is not supported by this efipt "
				"(it reads version 1)", (long long)json_integer_value(ver));
	need(rd, m, "", "efipt_version", JSON_STRING, &bad);
	need(rd, m, "", "run_id", JSON_STRING, &bad);
	need(rd, m, "", "command", JSON_STRING, &bad);
	need(rd, m, "", "command_line", JSON_STRING, &bad);
	json_t *files = need(rd, m, "", "files", JSON_ARRAY, &bad);
	json_t *status = need(rd, m, "", "status", JSON_OBJECT, &bad);
	if (bad)
		return -1;
	json_t *res = need(rd, status, "status.", "result", JSON_STRING, &bad);
	need(rd, status, "status.", "efi_status", JSON_STRING, &bad);
	need(rd, status, "status.", "message", JSON_STRING, &bad);
	if (bad)
		return -1;
	const char *r = json_string_value(res);
	enum run_result result;
	if (run_result_parse(r, &result))
		return fail(rd, "manifest.json: status.result \"%s\" is not ok, unsupported or "
				"failed", r);
	if (check_optional(rd, m))
		return -1;
	return check_files(rd, files);
}

void rundir_close(struct run_dir *rd)
{
	if (rd->manifest)
		json_decref(rd->manifest);
	rd->manifest = NULL;
	rundir_free_code(rd);
}

const char *rundir_str(const struct run_dir *rd, const char *key)
{
	return json_string_value(json_object_get(rd->manifest, key));
}

bool rundir_stopped_full(const struct run_dir *rd, unsigned cpu)
{
	json_t *t = json_object_get(rd->manifest, "trace");
	if (!cpu && json_is_true(json_object_get(t, "full")))
		return true;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(t, "guest"), "cpus"), i, c)
		if (json_integer_value(json_object_get(c, "cpu")) == (json_int_t)cpu &&
		    json_is_true(json_object_get(c, "stopped")))
			return true;
	return false;
}

void rundir_flow_facts(const struct run_dir *rd, struct flow_facts *f)
{
	memset(f, 0, sizeof(*f));
	json_t *cpu = json_object_get(rd->manifest, "cpu");
	if (cpu) {
		f->have_cpu = true;
		f->family = (unsigned)json_integer_value(json_object_get(cpu, "family"));
		f->model = (unsigned)json_integer_value(json_object_get(cpu, "model"));
		f->stepping = (int)json_integer_value(json_object_get(cpu, "stepping"));
	}
	const char *ctl = json_string_value(
		json_object_get(json_object_get(rd->manifest, "trace"), "rtit_ctl"));
	if (ctl) {
		f->have_ctl = true;
		f->rtit_ctl = strtoull(ctl, NULL, 16);
	}
	/* timing: the manifest's CPUID.15H (the clock that made the trace,
	 * which for an emulated trace is not the CPU's), else cpuid.txt's */
	json_t *tm = json_object_get(rd->manifest, "timing");
	json_t *a = json_object_get(tm, "cpuid15_eax"), *b = json_object_get(tm, "cpuid15_ebx"),
	       *c = json_object_get(tm, "cpuid15_ecx");
	json_int_t nom = json_integer_value(json_object_get(tm, "nom_freq"));
	json_int_t hz = json_integer_value(json_object_get(tm, "tsc_hz"));
	f->nom_freq = nom > 0 && nom < 256 ? (uint8_t)nom : 0;
	f->tsc_hz = hz > 0 ? (uint64_t)hz : 0;
	f->emulated = json_is_true(json_object_get(tm, "emulated"));
	f->emulated_trace = json_is_true(json_object_get(json_object_get(rd->manifest, "trace"),
							 "emulated"));
	if (a && b) {
		f->have_cpuid15 = true;
		f->cpuid15_eax = (uint32_t)json_integer_value(a);
		f->cpuid15_ebx = (uint32_t)json_integer_value(b);
		f->cpuid15_ecx = (uint32_t)json_integer_value(c);
		return;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/cpuid.txt", rd->path);
	char err[256];
	int fd = open_regular(path, err, sizeof(err));
	if (fd < 0)
		return; /* optional: a run that failed early has none */
	static char text[64 << 10];
	ssize_t n = read(fd, text, sizeof(text));
	close(fd);
	static struct cpuid_set set;
	unsigned line;
	uint32_t r[4];
	if (n > 0 && cpuidtxt_parse(&set, text, (size_t)n, 0, &line) == CPUIDTXT_OK &&
	    cpuid_set_get(&set, 0, 0, r) && r[CPUID_EAX] >= 0x15 &&
	    cpuid_set_get(&set, 0x15, 0, r)) {
		f->have_cpuid15 = true;
		f->cpuid15_eax = r[CPUID_EAX];
		f->cpuid15_ebx = r[CPUID_EBX];
		f->cpuid15_ecx = r[CPUID_ECX];
	}
}

json_t *rundir_json(const struct run_dir *rd, const char *name, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", rd->path, name);
	int fd = open_regular(path, err, errlen);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > JSON_MAX) {
		snprintf(err, errlen, "%s: %lld bytes, larger than any file efipt writes", path,
			 (long long)st.st_size);
		close(fd);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
	if (!j)
		snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	return j;
}

int rundir_json_save(const char *dir, const char *name, json_t *j, int indent, char *err,
		     size_t errlen)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 72];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_dump_file(j, tmp, JSON_INDENT(indent) | JSON_PRESERVE_ORDER) || rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* DIR/name into path if the manifest lists it as written. */
static int written_trace(const struct run_dir *rd, const char *name, char *path, size_t cap,
			 char *err, size_t errlen)
{
	const char *status = NULL;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(rd->manifest, "files"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")) ?: "", name))
			status = json_string_value(json_object_get(f, "status"));
	if (!status) {
		snprintf(err, errlen, "%s: this run recorded no trace (manifest.json lists no "
				      "%s)", rd->path, name);
		return -1;
	}
	if (strcmp(status, "written")) {
		snprintf(err, errlen, "%s: the run could not write its trace: manifest.json says "
				      "%s for %s", rd->path, status, name);
		return -1;
	}
	snprintf(path, cap, "%s/%s", rd->path, name);
	/* an empty trace: nothing was traced (efipt qemu's QEMU failed, or
	 * its start was never reached); decoding it would report zeros */
	struct stat st;
	if (!stat(path, &st) && st.st_size == 0) {
		json_t *s = json_object_get(rd->manifest, "status");
		const char *res = json_string_value(json_object_get(s, "result"));
		const char *msg = json_string_value(json_object_get(s, "message"));
		snprintf(err, errlen, "%s: %s is empty: nothing was traced%s%s%s%s", rd->path, name,
			 res ? " (the run " : "", res ? res : "", msg ? ": " : "",
			 msg ? msg : "");
		if (res)
			strncat(err, ")", errlen - strlen(err) - 1);
		return -1;
	}
	return 0;
}

int rundir_hex(json_t *v, unsigned long long *out)
{
	const char *s = json_string_value(v);
	if (!s || strncmp(s, "0x", 2) || !s[2])
		return -1;
	for (const char *p = s + 2; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return -1;
	errno = 0;
	*out = strtoull(s + 2, NULL, 16);
	return errno ? -1 : 0;
}

int rundir_trace(const struct run_dir *rd, char *path, size_t cap, char *err, size_t errlen)
{
	return written_trace(rd, "trace.pt", path, cap, err, errlen);
}

int rundir_traces(const struct run_dir *rd, struct rundir_cpu_trace *t, unsigned max,
		  char *err, size_t errlen)
{
	json_t *arr = json_object_get(json_object_get(rd->manifest, "trace"), "traces");
	if (!arr) { /* one CPU: trace.pt */
		t[0].cpu = 0;
		snprintf(t[0].file, sizeof(t[0].file), "trace.pt");
		json_t *b = json_object_get(json_object_get(rd->manifest, "trace"), "bytes");
		t[0].bytes = json_is_integer(b) ? (uint64_t)json_integer_value(b) : 0;
		t[0].insns = 0;
		return 1;
	}
	size_t i;
	json_t *e;
	unsigned n = 0;
	json_array_foreach(arr, i, e) {
		json_t *cpu = json_object_get(e, "cpu"), *file = json_object_get(e, "file");
		json_t *bytes = json_object_get(e, "bytes"), *insns = json_object_get(e, "insns");
		char want[32];
		if (!json_is_integer(cpu) || json_integer_value(cpu) < 0 ||
		    json_integer_value(cpu) > 65535 || !json_is_string(file)) {
			snprintf(err, errlen, "%s: manifest.json: trace.traces[%zu] needs \"cpu\" "
					      "(0..65535) and \"file\"", rd->path, i);
			return -1;
		}
		unsigned c = (unsigned)json_integer_value(cpu);
		if (c)
			snprintf(want, sizeof(want), "trace.cpu%u.pt", c);
		else
			snprintf(want, sizeof(want), "trace.pt");
		/* the file's name follows from the CPU (docs/format.md): never a
		 * path the manifest chose */
		if (strcmp(json_string_value(file), want)) {
			snprintf(err, errlen, "%s: manifest.json: trace.traces[%zu]: CPU %u's trace is "
					      "%s, not '%s'", rd->path, i, c, want,
				 json_string_value(file));
			return -1;
		}
		for (unsigned k = 0; k < n; k++)
			if (t[k].cpu == c) {
				snprintf(err, errlen, "%s: manifest.json: trace.traces lists CPU %u "
						      "twice", rd->path, c);
				return -1;
			}
		if (n == max) {
			snprintf(err, errlen, "%s: manifest.json: more than %u traces", rd->path, max);
			return -1;
		}
		t[n].cpu = c;
		snprintf(t[n].file, sizeof(t[n].file), "%s", want);
		t[n].bytes = json_is_integer(bytes) ? (uint64_t)json_integer_value(bytes) : 0;
		t[n].insns = json_is_integer(insns) ? (uint64_t)json_integer_value(insns) : 0;
		n++;
	}
	return (int)n;
}

int rundir_trace_cpu(const struct run_dir *rd, unsigned cpu, char *path, size_t cap, char *err,
		     size_t errlen)
{
	static struct rundir_cpu_trace t[RUNDIR_TRACES_MAX];
	if (!cpu)
		return rundir_trace(rd, path, cap, err, errlen);
	int n = rundir_traces(rd, t, RUNDIR_TRACES_MAX, err, errlen);
	if (n < 0)
		return -1;
	char name[32];
	snprintf(name, sizeof(name), "trace.cpu%u.pt", cpu);
	size_t k;
	json_t *f;
	json_array_foreach(json_object_get(rd->manifest, "files"), k, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")) ?: "", name))
			return written_trace(rd, name, path, cap, err, errlen); /* why not, if so */
	char have[256] = "";
	size_t hl = 0;
	for (int i = 0; i < n; i++) {
		if (t[i].cpu == cpu)
			return written_trace(rd, t[i].file, path, cap, err, errlen);
		if (hl + 16 < sizeof(have))
			hl += (size_t)snprintf(have + hl, sizeof(have) - hl, "%s%u", i ? ", " : "",
					       t[i].cpu);
	}
	snprintf(err, errlen, "%s: no trace of CPU %u: the run has %d (CPU%s %s)", rd->path, cpu, n,
		 n == 1 ? "" : "s", have);
	return -1;
}
