/*
 * host/out/run_files: the manifest efipt recover --linux writes, through
 * core's manifest writer (core/run_manifest.h). It must read back as the
 * files noted, the result and the members given; where it cannot be
 * written the caller hears why (no run directory is a run without it).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "host/out/run_files.h"

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(missing)";
}

static void check_written(const char *dir)
{
	static struct run_files o;
	memset(&o, 0, sizeof(o));
	snprintf(o.dir, sizeof(o.dir), "%s", dir);
	runfiles_note(&o, "trace.pt", 4096, "written");
	runfiles_note(&o, "images.json", 17, "No space left on device");
	int rc = runfiles_manifest(&o, "20261127-070000-000", "2026-11-27T07:00:00",
				   "efipt recover --linux -o \"x\"", NULL,
				   "\"recovered\": {\"boot\": 3}", "failed", "images.json: full");
	CHECKF(rc == 0, "run_files: manifest written", "rc %d: %s", rc, o.why);
	char path[4200];
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	CHECKF(j != NULL, "run_files: manifest is JSON", "%s", e.text);
	if (!j)
		return;
	json_t *files = json_object_get(j, "files"), *st = json_object_get(j, "status");
	CHECK(!strcmp(str(j, "command"), "recover") &&
		      !strcmp(str(j, "command_line"), "efipt recover --linux -o \"x\"") &&
		      !strcmp(str(j, "run_id"), "20261127-070000-000"),
	      "run_files: head members");
	CHECK(json_integer_value(json_object_get(json_object_get(j, "recovered"), "boot")) == 3,
	      "run_files: the caller's members");
	CHECK(json_array_size(files) == 2 &&
		      !strcmp(str(json_array_get(files, 0), "name"), "trace.pt") &&
		      json_integer_value(json_object_get(json_array_get(files, 0), "size")) == 4096 &&
		      !strcmp(str(json_array_get(files, 1), "status"), "No space left on device"),
	      "run_files: every file noted, with its status");
	CHECK(!strcmp(str(st, "result"), "failed") && !strcmp(str(st, "efi_status"), "none") &&
		      !strcmp(str(st, "message"), "images.json: full"),
	      "run_files: status");
	CHECK(o.failed && !strcmp(o.why, "images.json: No space left on device"),
	      "run_files: the first failure remembered");
	json_decref(j);
	unlink(path);
}

static void check_unwritable(const char *dir)
{
	static struct run_files o;
	memset(&o, 0, sizeof(o));
	snprintf(o.dir, sizeof(o.dir), "%s/missing", dir);
	int rc = runfiles_manifest(&o, "r", "unknown", "", NULL, "", "ok", "");
	CHECKF(rc == -1 && !strncmp(o.why, "manifest.json: ", 15),
	       "run_files: a manifest that cannot be written is an error, with why", "rc %d why '%s'",
	       rc, o.why);
}

int main(void)
{
	char dir[] = "/tmp/test_run_files.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	check_written(dir);
	check_unwritable(dir);
	rmdir(dir);
	return check_failures ? 1 : 0;
}
