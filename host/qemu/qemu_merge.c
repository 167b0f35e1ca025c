/* The guest's efipt.efi run merged into efipt-qemu.so's; see qemu_merge.h. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "core/pe_info.h"
#include "host/input/rundir.h"
#include "host/qemu/qemu_merge.h"
#include "host/util/file_io.h"

/* the mtools image name: a GPT disk has its ESP at 1 MiB (ovmf/mkesp.sh) */
static int mtools_image(const char *esp, char *img, size_t cap, char *err, size_t errlen)
{
	char sig[8] = "";
	FILE *f = fopen(esp, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", esp, strerror(errno));
		return -1;
	}
	if (fseek(f, 512, SEEK_SET) || fread(sig, 1, 8, f) != 8)
		memset(sig, 0, sizeof(sig));
	fclose(f);
	snprintf(img, cap, "%s%s", esp, memcmp(sig, "EFI PART", 8) ? "" : "@@1M");
	return 0;
}

char *qemu_esp_runs(const char *esp)
{
	char img[PATH_MAX + 8], err[PATH_MAX + 64];
	size_t cap = 4096, n = 0;
	char *out = calloc(1, cap);
	int fd[2];
	if (!out || mtools_image(esp, img, sizeof(img), err, sizeof(err)) || pipe(fd))
		return out;
	pid_t pid = fork();
	if (!pid) {
		int nul = open("/dev/null", O_WRONLY);
		dup2(fd[1], 1);
		if (nul >= 0)
			dup2(nul, 2);
		close(fd[0]);
		setenv("MTOOLS_SKIP_CHECK", "1", 1);
		execlp("mdir", "mdir", "-b", "-i", img, "::/efipt", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t got;
	while (pid > 0 && (got = read(fd[0], out + n, cap - n - 1)) > 0) {
		n += (size_t)got;
		if (cap - n < 2) {
			char *more = realloc(out, cap * 2);
			if (!more)
				break;
			out = more;
			cap *= 2;
		}
	}
	out[n] = 0;
	close(fd[0]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	return out;
}

/* mcopy -s -n -i ESP ::/efipt DEST/: 0, 1 when mcopy ran and found no
 * \efipt to copy, -1 on other failures (err says which) */
static int copy_out(const char *esp, const char *dest, char *err, size_t errlen)
{
	char img[PATH_MAX + 8];
	if (mtools_image(esp, img, sizeof(img), err, errlen))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0) {
			dup2(nul, 1);
			dup2(nul, 2);
		}
		setenv("MTOOLS_SKIP_CHECK", "1", 1);
		execlp("mcopy", "mcopy", "-s", "-n", "-i", img, "::/efipt", dest, (char *)NULL);
		_exit(127);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws)) {
		int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		snprintf(err, errlen, "%s: no \\efipt directory could be read from it (mcopy "
				      "status %d%s)", esp, st, st == 127 ? ": is mtools installed?" : "");
		return st == 1 ? 1 : -1;
	}
	return 0;
}

static int by_name_desc(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*b)->d_name, (*a)->d_name);
}

/* is run-id name in mdir's listing? */
static int listed(const char *before, const char *name)
{
	char key[300];
	snprintf(key, sizeof(key), "/%s/", name);
	return before && strstr(before, key);
}

/* The newest run of `trace --source qemu`, of `trace --emulated-caps`, or of
 * `collect` where the firmware's boot trace ran the markers (edk2/EfiptPkg)
 * under dir (run-ids sort by time) that was not there before QEMU ran. */
static int pick_run(const char *dir, const char *before, char *out, size_t cap,
		    json_t **manifest)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name_desc);
	int found = -1;
	for (int i = 0; i < n; i++) {
		if (found < 0 && names[i]->d_name[0] != '.' && !listed(before, names[i]->d_name)) {
			char p[PATH_MAX + 300];
			snprintf(p, sizeof(p), "%s/%s/manifest.json", dir, names[i]->d_name);
			json_t *m = json_load_file(p, 0, NULL);
			json_t *src = json_object_get(json_object_get(m, "trace"), "source");
			const char *cmd = json_string_value(json_object_get(m, "command")) ?: "";
			/* trace --source qemu or the hardware path on emulated PT, or
			 * collect of a firmware that ran the markers */
			if (m && (!strcmp(cmd, "trace") || !strcmp(cmd, "collect")) &&
			    (!strcmp(json_string_value(src) ?: "", "qemu") ||
			     json_object_get(m, "emulated_pt"))) {
				snprintf(out, cap, "%.*s", (int)cap - 1, names[i]->d_name);
				*manifest = m;
				found = 0;
			} else {
				json_decref(m);
			}
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return found;
}

static int hex(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;
	if (!s || strncmp(s, "0x", 2))
		return -1;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return errno || *end || end == s + 2 ? -1 : 0;
}

/* [a, a+len) of a memmap.json region, or -1 */
static int region_span(json_t *r, uint64_t *a, uint64_t *len)
{
	json_t *p = json_object_get(r, "pages");
	if (hex(json_object_get(r, "phys"), a) || !json_is_integer(p) || json_integer_value(p) <= 0 ||
	    json_integer_value(p) > (1ll << 36))
		return -1;
	*len = (uint64_t)json_integer_value(p) * 4096;
	return 0;
}

static int overlaps_any(json_t *regions, uint64_t a, uint64_t len)
{
	size_t i;
	json_t *r;
	json_array_foreach(regions, i, r) {
		uint64_t b, blen;
		if (!region_span(r, &b, &blen) && a < b + blen && b < a + len)
			return 1;
	}
	return 0;
}

/* the files list entry for name: its size now (added when missing) */
static void note_file(json_t *files, const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	json_int_t size = stat(path, &st) ? 0 : (json_int_t)st.st_size;
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f) {
		if (!strcmp(json_string_value(json_object_get(f, "name")) ?: "", name)) {
			json_object_set_new(f, "size", json_integer(size));
			return;
		}
	}
	json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "name", name, "size",
					       (json_int_t)size, "status", "written"));
}

static int move_in(const char *from_dir, const char *to_dir, const char *name, char *err,
		   size_t errlen)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64];
	snprintf(a, sizeof(a), "%s/%s", from_dir, name);
	snprintf(b, sizeof(b), "%s/%s", to_dir, name);
	if (rename(a, b)) {
		snprintf(err, errlen, "%s -> %s: %s", a, b, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The executable sections of each image, from the PE headers in the
 * guest's snapshots, as images.json's "code" (docs/format.md): the
 * plugin's snapshots hold only the bytes that executed, headers never, so
 * without this a coverage percentage would count the whole image as code.
 */
static void add_code_sections(json_t *imgs, json_t *gregs, const char *guest)
{
	size_t i, k;
	json_t *im, *r;
	json_array_foreach(imgs, i, im) {
		uint64_t base, a, len;
		json_t *sz = json_object_get(im, "size");
		if (hex(json_object_get(im, "base"), &base) || !json_is_integer(sz) ||
		    json_integer_value(sz) <= 0 || json_object_get(im, "code"))
			continue;
		uint64_t size = (uint64_t)json_integer_value(sz);
		json_array_foreach(gregs, k, r) {
			const char *sn = json_string_value(json_object_get(r, "snapshot"));
			if (!sn || strchr(sn, '/') || region_span(r, &a, &len) || base - a >= len)
				continue;
			/* the headers: the first 64 KiB of the image at most */
			static uint8_t hdr[64 << 10];
			char path[PATH_MAX + 128];
			snprintf(path, sizeof(path), "%s/%s", guest, sn);
			FILE *f = fopen(path, "rb");
			size_t got = 0;
			if (f && !fseek(f, (long)(base - a), SEEK_SET))
				got = fread(hdr, 1, sizeof(hdr), f);
			if (f)
				fclose(f);
			struct ptimg_flat flat = { hdr, base, got };
			struct ptimg img = { ptimg_flat_read, &flat };
			struct pe_code pc;
			if (pe_code_read(&img, base, size, &pc) || !pc.n)
				break;
			json_t *code = json_array();
			for (unsigned c = 0; c < pc.n; c++) {
				char rva[24];
				snprintf(rva, sizeof(rva), "0x%" PRIx32, pc.r[c].rva);
				json_array_append_new(code, json_pack("{s:s, s:I}", "rva", rva, "size",
								      (json_int_t)pc.r[c].size));
			}
			json_object_set_new(im, "code", code);
			break;
		}
	}
}

/* An image efipt.efi saw loaded while it traced has its position in
 * efipt.efi's own trace ("loaded_at"), which is not the plugin's: the
 * plugin's codechanges.bin places its code in this run. */
static void unplace_loads(json_t *imgs)
{
	size_t i;
	json_t *im;
	json_array_foreach(imgs, i, im) {
		if (!json_is_integer(json_object_get(im, "loaded_at")))
			continue;
		json_object_set_new(im, "loaded_at", json_null());
		json_object_set_new(im, "loaded_why",
				    json_string("a position in efipt.efi's own trace, not the "
						"plugin's (its codechanges.bin places the code)"));
	}
}

/* efipt.efi trace --cpus: each CPU's APIC ID, as the guest's MP services
 * named it, onto the plugin's trace of the same CPU (trace.traces[].cpu:
 * the vCPU index, which is MP services' number under OVMF). */
static void merge_cpu_ids(json_t *ptrace, json_t *gtrace)
{
	json_t *gt = json_object_get(gtrace, "traces"), *pt = json_object_get(ptrace, "traces");
	size_t i, k;
	json_t *e, *f;
	json_array_foreach(gt, i, e) {
		json_t *id = json_object_get(e, "apic_id");
		json_array_foreach(pt, k, f) {
			if (json_is_string(id) && json_equal(json_object_get(f, "cpu"),
							      json_object_get(e, "cpu")))
				json_object_set(f, "apic_id", id);
		}
	}
}

/* start=guest: where the guest's first WRMSR that set IA32_RTIT_CTL.TraceEn
 * is (trace.guest.log, rtit.jsonl: one line per write). That is the run's
 * mark, not first_ip: an interrupt may come at the boundary right after
 * the WRMSR, and then the first traced instruction is its handler's, in
 * another image. Returns 0 with *ip, or 1 when no write set TraceEn. */
static int traceen_wrmsr_ip(const char *rundir, json_t *ptrace, uint64_t *ip)
{
	const char *log = json_string_value(json_object_get(json_object_get(ptrace, "guest"), "log"));
	if (!log || strchr(log, '/'))
		return 1;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", rundir, log);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char *line = NULL;
	size_t cap = 0;
	int rc = 1;
	while (rc && getline(&line, &cap, f) > 0) {
		json_t *w = json_loads(line, 0, NULL);
		const char *msr = json_string_value(json_object_get(w, "msr"));
		const char *res = json_string_value(json_object_get(w, "result"));
		uint64_t v;
		if (msr && res && !strcmp(msr, "IA32_RTIT_CTL") && !strcmp(res, "ok") &&
		    !hex(json_object_get(w, "value"), &v) && (v & 1) &&
		    !hex(json_object_get(w, "ip"), ip))
			rc = 0;
		json_decref(w);
	}
	free(line);
	fclose(f);
	return rc;
}

int qemu_merge_esp(const char *rundir, const char *esp, const char *before,
		   struct qemu_merge_result *res, char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	char tmp[PATH_MAX], runs[PATH_MAX + 16], guest[PATH_MAX + 96];
	snprintf(tmp, sizeof(tmp), "%s/esp.tmp", rundir);
	snprintf(runs, sizeof(runs), "%s/efipt", tmp);
	remove_tree(tmp);
	if (mkdir(tmp, 0777)) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	int rc = -1;
	json_t *gm = NULL, *pm = NULL, *gmap = NULL, *pmap = NULL, *gimg = NULL;
	int cr = copy_out(esp, tmp, err, errlen);
	if (cr) {
		rc = cr; /* 1: no \efipt on it, nothing to merge */
		goto out;
	}
	if (pick_run(runs, before, res->guest_run, sizeof(res->guest_run), &gm)) {
		snprintf(err, errlen, "%s: no new run of 'efipt.efi trace --source qemu' in \\efipt, "
				      "nor of 'collect' after a firmware that ran the trace markers (did "
				      "efipt.efi finish and write its run directory?)", esp);
		rc = 1;
		goto out;
	}
	snprintf(guest, sizeof(guest), "%s/%s", runs, res->guest_run);

	char path[PATH_MAX + 128];
	json_error_t je;
	snprintf(path, sizeof(path), "%s/manifest.json", rundir);
	pm = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	snprintf(path, sizeof(path), "%s/memmap.json", rundir);
	pmap = json_load_file(path, 0, &je);
	snprintf(path, sizeof(path), "%s/memmap.json", guest);
	gmap = json_load_file(path, 0, &je);
	snprintf(path, sizeof(path), "%s/images.json", guest);
	gimg = json_load_file(path, 0, &je);
	json_t *pregs = json_object_get(pmap, "regions");
	json_t *gregs = json_object_get(gmap, "regions");
	json_t *imgs = json_object_get(gimg, "images");
	json_t *ptrace = json_object_get(pm, "trace");
	json_t *files = json_object_get(pm, "files");
	if (!json_is_object(ptrace) || !json_is_array(files) || !json_is_array(pregs)) {
		snprintf(err, errlen, "%s: the plugin's manifest.json or memmap.json is not complete",
			 rundir);
		goto out;
	}
	if (!json_is_array(gregs) || !json_is_array(imgs)) {
		snprintf(err, errlen, "%s: guest run %s has no memmap.json or images.json (it was "
				      "made with --no-snapshot?)", esp, res->guest_run);
		goto out;
	}
	/* the trace must be this run's: its start marker (start=guest: the
	 * WRMSR that set TraceEn) lies in a listed image */
	uint64_t first;
	bool guest_start = json_is_object(json_object_get(ptrace, "guest"));
	const char *what = guest_start ? "the WRMSR that set TraceEn" : "the start marker";
	if (guest_start ? traceen_wrmsr_ip(rundir, ptrace, &first)
			: hex(json_object_get(ptrace, "first_ip"), &first)) {
		snprintf(err, errlen, "%s: %s", rundir,
			 guest_start ? "no WRMSR of the guest's set TraceEn (trace.guest.log)"
				     : "the trace has no first_ip (it never started)");
		goto out;
	}
	size_t i;
	json_t *im;
	json_array_foreach(imgs, i, im) {
		uint64_t base;
		json_t *sz = json_object_get(im, "size");
		if (!hex(json_object_get(im, "base"), &base) && json_is_integer(sz) &&
		    first >= base && first - base < (uint64_t)json_integer_value(sz)) {
			snprintf(res->marker_image, sizeof(res->marker_image), "%s",
				 json_string_value(json_object_get(im, "name")) ?: "?");
		}
	}
	if (!res->marker_image[0]) {
		snprintf(err, errlen, "%s: %s at 0x%" PRIx64 " lies in no image of guest run %s: "
				      "not the run that was traced", esp, what, first, res->guest_run);
		goto out;
	}
	res->images = (unsigned)json_array_size(imgs);
	add_code_sections(imgs, gregs, guest); /* before the snapshots move */
	unplace_loads(imgs);

	/* memory map: the guest's regions, whose snapshots are taken over where
	 * the plugin recorded no code (the plugin's bytes are what executed),
	 * then the plugin's QemuCode regions */
	json_t *merged = json_array();
	json_t *r;
	json_array_foreach(gregs, i, r) {
		json_t *snap = json_object_get(r, "snapshot");
		uint64_t a, len;
		const char *sn = json_string_value(snap);
		if (sn) {
			char dst[PATH_MAX + 64];
			struct stat st;
			snprintf(dst, sizeof(dst), "%s/%s", rundir, sn);
			if (region_span(r, &a, &len) || overlaps_any(pregs, a, len) || strchr(sn, '/') ||
			    !stat(dst, &st) || move_in(guest, rundir, sn, err, errlen)) {
				json_object_del(r, "snapshot");
			} else {
				note_file(files, rundir, sn);
				res->snapshots++;
			}
		}
		json_array_append(merged, r);
	}
	json_array_extend(merged, pregs);
	json_object_set_new(pmap, "regions", merged);
	if (rundir_json_save(rundir, "memmap.json", pmap, 1, err, errlen) ||
	    rundir_json_save(rundir, "images.json", gimg, 1, err, errlen))
		goto out;
	note_file(files, rundir, "memmap.json");
	note_file(files, rundir, "images.json");
	if (!move_in(guest, rundir, "cpuid.txt", err, errlen))
		note_file(files, rundir, "cpuid.txt");
	if (!move_in(guest, rundir, "fpdt.bin", err, errlen))
		note_file(files, rundir, "fpdt.bin");

	/* the manifest: what the guest knew (the CPU as emulated, the firmware,
	 * the traced image and how it returned), and which run it was */
	static const char *const take[] = { "firmware", "cpu", "traced_image",
					    "traced_exit_status", "emulated_pt", "boot_trace", "fpdt",
					    NULL };
	for (const char *const *k = take; *k; k++) {
		json_t *v = json_object_get(gm, *k);
		if (v)
			json_object_set(pm, *k, v);
	}
	json_object_set_new(ptrace, "marker_image", json_string(res->marker_image));
	merge_cpu_ids(ptrace, json_object_get(gm, "trace"));
	json_t *g = json_object();
	static const char *const about[] = { "run_id", "efipt_version", "efipt_gitrev", "started",
					     "command_line", "status", NULL };
	for (const char *const *k = about; *k; k++) {
		json_t *v = json_object_get(gm, *k);
		if (v)
			json_object_set(g, *k, v);
	}
	json_object_set_new(g, "esp", json_string(esp));
	json_object_set_new(pm, "guest_run", g);
	rc = rundir_json_save(rundir, "manifest.json", pm, 1, err, errlen);
out:
	json_decref(gm);
	json_decref(pm);
	json_decref(gmap);
	json_decref(pmap);
	json_decref(gimg);
	remove_tree(tmp);
	return rc;
}
