/*
 * host/qemu/qemu_fvnames.c when the run's code snapshots cannot be
 * searched: memmap.json names a snapshot that is missing, or that is a
 * directory. The firmware volumes' names still go into images.json (a SEC
 * module in place is added), whole and as the manifest lists it, and
 * find_err, which efipt qemu prints as "modules not looked for in the code
 * snapshots: ...", names the file and why.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "check.h"
#include "host/qemu/qemu_merge.h"
#include "lib/fv_build.h"
#include "host/util/file_io.h"
#include "lib/test_files.h"

#define SNAP "mem-0000000000100000.bin"

static char dir[64], run[96], flash[96];

/* A flash with one volume: SecMain, a TE image in place at 0xfffcc000. */
static int make_flash(void)
{
	static struct fvb_buf fv, secs;
	fvb_begin(&fv);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "SecMain");
	fvb_te(&secs, 0xfffcc000, 0x200, 0x2e00);
	fvb_file(&fv, 0x11, 0x03, &secs);
	fvb_end(&fv);
	return tf_write(NULL, flash, fv.b, fv.n);
}

/* A run directory that lists no image, whose memmap.json names one
 * snapshot, SNAP (not written); the manifest lists images.json. */
static int make_run(void)
{
	static const char images[] = "{\"images\":[]}\n";
	char manifest[1024];
	if (mkdir(run, 0700) || tf_write_text(run, "images.json", images))
		return -1;
	if (tf_write_text(run, "memmap.json", "{\"regions\":[{\"type\":\"QemuCode\",\"phys\":\"0x100000\","
			     "\"pages\":1,\"attr\":\"0xf\",\"snapshot\":\"" SNAP "\"}]}"))
		return -1;
	snprintf(manifest, sizeof(manifest),
		 "{\"format\":\"efipt-run\",\"format_version\":1,\"efipt_version\":\"0.1.0\","
		 "\"efipt_gitrev\":\"x\",\"run_id\":\"20260101-000000-000\","
		 "\"started\":\"2026-01-01T00:00:00\",\"command\":\"qemu\","
		 "\"command_line\":\"qemu\",\"files\":[{\"name\":\"images.json\",\"size\":%zu,"
		 "\"status\":\"written\"}],\"status\":{\"result\":\"ok\",\"efi_status\":"
		 "\"EFI_SUCCESS\",\"message\":\"traced\"}}",
		 strlen(images));
	return tf_write_text(run, "manifest.json", manifest);
}

/* images.json whole: it parses, holds SecMain in place, and is as long as
 * the manifest says; and no temporary file is left. */
static void check_images(const char *what)
{
	char path[160], name[200];
	snprintf(path, sizeof(path), "%s/images.json", run);
	json_t *ij = json_load_file(path, 0, NULL);
	json_t *im = json_array_get(json_object_get(ij, "images"), 0);
	snprintf(name, sizeof(name), "fv_names: %s: images.json whole, SecMain added", what);
	CHECKF(json_array_size(json_object_get(ij, "images")) == 1 &&
	       !strcmp(json_string_value(json_object_get(im, "name")) ?: "", "SecMain") &&
	       !strcmp(json_string_value(json_object_get(im, "base")) ?: "", "0xfffcc000"),
	       name, "%s", ij ? "not as expected" : "not JSON");
	/* the TE header's AddressOfEntryPoint (fvb_te: 0x210) from its base */
	snprintf(name, sizeof(name), "fv_names: %s: the TE image's entry", what);
	CHECKF(!strcmp(json_string_value(json_object_get(im, "entry")) ?: "", "0xfffcc210"), name,
	       "entry %s", json_string_value(json_object_get(im, "entry")) ?: "none");
	json_decref(ij);
	struct stat st;
	snprintf(path, sizeof(path), "%s/manifest.json", run);
	json_t *man = json_load_file(path, 0, NULL);
	json_t *f = json_array_get(json_object_get(man, "files"), 0);
	snprintf(path, sizeof(path), "%s/images.json", run);
	long long listed = json_integer_value(json_object_get(f, "size"));
	snprintf(name, sizeof(name), "fv_names: %s: the manifest lists images.json's size", what);
	CHECKF(!stat(path, &st) && st.st_size == listed &&
	       json_is_object(json_object_get(man, "firmware_volumes")),
	       name, "%lld listed, %lld on disk", listed, (long long)st.st_size);
	json_decref(man);
	unsigned tmp = 0;
	DIR *d = opendir(run);
	for (struct dirent *e; d && (e = readdir(d));)
		tmp += strstr(e->d_name, ".tmp") != NULL;
	if (d)
		closedir(d);
	snprintf(name, sizeof(name), "fv_names: %s: no temporary file left", what);
	CHECKF(d && !tmp, name, "%u", tmp);
}

/* The names written (added: SEC/PEI images added now) and the search not
 * done, find_err saying why: it holds the snapshot's name and cause. */
static void check_unsearched(const char *what, const char *cause, unsigned added)
{
	struct qemu_fv_result res;
	char err[512] = "", name[200];
	int rc = qemu_name_fv_modules(run, flash, &res, err, sizeof(err));
	snprintf(name, sizeof(name), "fv_names: %s: names written, no search", what);
	CHECKF(rc == 0 && res.modules == 1 && res.added == added && res.found == 0, name,
	       "rc %d (%s), %u modules, %u added, %u found", rc, err, res.modules, res.added,
	       res.found);
	snprintf(name, sizeof(name), "fv_names: %s: find_err names the snapshot and the cause",
		 what);
	CHECKF(strstr(res.find_err, SNAP) && strstr(res.find_err, cause), name, "\"%s\"",
	       res.find_err);
	printf("# %s\n", res.find_err);
	check_images(what);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/efipt-test-fvnames-XXXXXX");
	if (!mkdtemp(dir)) {
		CHECK(0, "fv_names: a temporary directory");
		return 1;
	}
	snprintf(run, sizeof(run), "%s/run", dir);
	snprintf(flash, sizeof(flash), "%s/flash.fd", dir);
	CHECK(!make_flash() && !make_run(), "fv_names: the flash and the run directory written");
	check_unsearched("a missing snapshot", strerror(ENOENT), 1);

	/* again, the snapshot a directory: SecMain, listed now, not added twice */
	char path[160];
	snprintf(path, sizeof(path), "%s/" SNAP, run);
	CHECK(!mkdir(path, 0700), "fv_names: the snapshot made a directory");
	check_unsearched("a snapshot that is a directory", "not a regular file", 0);

	if (remove_tree(dir))
		printf("# %s left behind\n", dir);
	return check_exit();
}
