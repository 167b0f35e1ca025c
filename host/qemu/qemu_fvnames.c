/* Module names from the flash image's firmware volumes; see qemu_merge.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "host/util/file_io.h"
#include "host/qemu/fv.h"
#include "host/input/rundir.h"
#include "host/qemu/qemu_fvfind.h"
#include "host/qemu/qemu_merge.h"

/* Does one of the first n images of imgs overlap [base, base + size)? */
static bool listed(json_t *imgs, size_t n, uint64_t base, uint64_t size)
{
	for (size_t i = 0; i < n && i < json_array_size(imgs); i++) {
		json_t *im = json_array_get(imgs, i);
		unsigned long long b;
		json_t *sz = json_object_get(im, "size");
		if (!rundir_hex(json_object_get(im, "base"), &b) && json_is_integer(sz) &&
		    b < base + size && base < b + (uint64_t)json_integer_value(sz))
			return true;
	}
	return false;
}

/* Module m as an images.json entry at base, with its executable sections
 * (the plugin records no headers), its entry (PE or TE) and, from a PE
 * file, its CodeView path. 0, or -1 out of memory. */
static int add_image(json_t *imgs, const struct fv_module *m, uint64_t base, const char *type)
{
	char at[24], fvfile[48];
	snprintf(at, sizeof(at), "0x%" PRIx64, base);
	snprintf(fvfile, sizeof(fvfile), "FvFile(%s)", m->guid_text);
	struct pe_info pi;
	bool pe = m->pe && (!pe_read_info(m->pe, m->pe_len, false, &pi) ||
			    !pe_read_te(m->pe, m->pe_len, &pi)); /* a TE has no debug path */
	json_t *e = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}", "name",
			      m->name[0] ? m->name : fvfile, "base", at, "size",
			      (json_int_t)m->image_size, "code_type", type, "path", fvfile, "pdb",
			      pe ? pi.debug_path : "");
	if (!e)
		return -1;
	if (pe && pi.entry_rva) {
		snprintf(at, sizeof(at), "0x%" PRIx64, base + pi.entry_rva);
		json_object_set_new(e, "entry", json_string(at));
	}
	json_t *code = json_array();
	for (unsigned c = 0; code && c < m->code.n; c++) {
		char rva[24];
		if ((uint64_t)m->code.r[c].rva + m->code.r[c].size > m->image_size)
			continue;
		snprintf(rva, sizeof(rva), "0x%" PRIx32, m->code.r[c].rva);
		json_array_append_new(code, json_pack("{s:s, s:I}", "rva", rva, "size",
						      (json_int_t)m->code.r[c].size));
	}
	if (json_array_size(code))
		json_object_set_new(e, "code", code);
	else
		json_decref(code);
	return json_array_append_new(imgs, e);
}

/* The run's snapshots searched for the modules that are loaded where the
 * DXE core chooses; each found where nothing is listed is added. 0, or -1
 * with err set. */
static int find_loaded(const char *rundir, const struct fv_modules *ms, json_t *imgs,
		       struct qemu_fv_result *res, char *err, size_t errlen)
{
	static struct run_dir rd;
	char why[sizeof(rd.err) + 64];
	if (rundir_open(&rd, rundir)) {
		snprintf(err, errlen, "%s", rd.err);
		return -1;
	}
	int rc = -1;
	struct fv_found *f = calloc(FV_MODULES_MAX, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (rundir_load_code(&rd, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		goto out;
	}
	int n = fvfind_loaded(ms, rd.snap, rd.nsnap, f, FV_MODULES_MAX);
	if (n < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* not where an image is listed; those found may overlap each other
	 * (one left, another was loaded there: the later one's bytes are the
	 * later image's, as images.json says of overlaps) */
	size_t before = json_array_size(imgs);
	for (int i = 0; i < n; i++) {
		const struct fv_module *m = &ms->m[f[i].module];
		if (listed(imgs, before, f[i].base, m->image_size))
			continue;
		if (add_image(imgs, m, f[i].base, "FirmwareVolumeLoaded")) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		res->found++;
	}
	rc = 0;
out:
	free(f);
	rundir_close(&rd);
	return rc;
}

int qemu_name_fv_modules(const char *rundir, const char *flash, struct qemu_fv_result *res,
			 char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	struct fv_modules ms;
	int lr = fv_modules_load(flash, &ms);
	if (lr) {
		if (lr == -1)
			snprintf(err, errlen, "%s: cannot be read (see above)", flash);
		else
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct fv_stats st = ms.st;
	res->modules = ms.n;
	res->lzma = st.lzma;
	res->lzma_failed = st.lzma_failed;
	int rc = -1;
	char path[PATH_MAX + 64];
	json_error_t je;
	snprintf(path, sizeof(path), "%s/images.json", rundir);
	json_t *ij = json_load_file(path, 0, &je);
	snprintf(path, sizeof(path), "%s/manifest.json", rundir);
	json_t *man = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	json_t *imgs = json_object_get(ij, "images");
	if (!json_is_array(imgs) || !man) {
		snprintf(err, errlen, "%s: images.json or manifest.json unreadable", rundir);
		goto out;
	}
	if (!ms.n) {
		snprintf(err, errlen, "%s: no firmware volume module found (%u volumes)", flash,
			 st.volumes);
		goto out;
	}
	/* FvFile(GUID) entries (DXE drivers efipt.efi listed) take the UI name */
	size_t i;
	json_t *im;
	json_array_foreach(imgs, i, im) {
		const char *name = json_string_value(json_object_get(im, "name"));
		if (!name || strncmp(name, "FvFile(", 7) || strlen(name) != 7 + 36 + 1)
			continue;
		for (unsigned k = 0; k < ms.n; k++)
			if (ms.m[k].name[0] && !strncasecmp(name + 7, ms.m[k].guid_text, 36)) {
				json_object_set_new(im, "name", json_string(ms.m[k].name));
				res->renamed++;
				break;
			}
	}
	/* SEC/PEI modules run in place: listed where nothing else is */
	for (unsigned k = 0; k < ms.n; k++) {
		const struct fv_module *m = &ms.m[k];
		if (!fv_module_xip(m) || m->image_base + m->image_size < m->image_base)
			continue;
		if (!listed(imgs, json_array_size(imgs), m->image_base, m->image_size) &&
		    !add_image(imgs, m, m->image_base, "FirmwareVolume"))
			res->added++;
	}
	/* DXE modules, PEI's copies: found where their code is in the
	 * snapshots; without that the names above still stand */
	find_loaded(rundir, &ms, imgs, res, res->find_err, sizeof(res->find_err));
	if (rundir_json_save(rundir, "images.json", ij, 1, err, errlen))
		goto out;
	/* the manifest's files entry for images.json, and what was done */
	struct stat sb;
	snprintf(path, sizeof(path), "%s/images.json", rundir);
	json_t *f;
	json_array_foreach(json_object_get(man, "files"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")) ?: "", "images.json") &&
		    !stat(path, &sb))
			json_object_set_new(f, "size", json_integer((json_int_t)sb.st_size));
	json_object_set_new(man, "firmware_volumes",
			    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "flash", flash, "modules",
				      (json_int_t)ms.n, "renamed", (json_int_t)res->renamed, "added",
				      (json_int_t)res->added, "found", (json_int_t)res->found,
				      "lzma", (json_int_t)st.lzma,
				      "lzma_failed", (json_int_t)st.lzma_failed));
	rc = rundir_json_save(rundir, "manifest.json", man, 1, err, errlen);
out:
	json_decref(ij);
	json_decref(man);
	fv_modules_free(&ms);
	return rc;
}
