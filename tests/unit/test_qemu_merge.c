/*
 * host/qemu/qemu_merge: which guest run a plugin trace belongs to. Under
 * start=guest the mark is the WRMSR that set TraceEn (rtit.jsonl), not the
 * first traced instruction: a timer interrupt taken at the boundary right
 * after that WRMSR makes the first traced instruction its handler's, in
 * another image (seen once in CI as "is in CpuDxe"-like output). The ESP
 * is a real FAT image made with mkfs.vfat and mcopy, as efipt qemu reads it.
 */
#define _XOPEN_SOURCE 700
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "host/qemu/qemu_merge.h"
#include "host/util/file_io.h"
#include "lib/test_files.h"

static char top[64] = "/tmp/efipt-merge-XXXXXX";

/* a plugin run directory: trace (guest: its WRMSR log) and no memory map */
static void plugin_run(const char *name, const char *trace, const char *rtit)
{
	char d[256], m[512];
	snprintf(d, sizeof(d), "%s/%s", top, name);
	snprintf(m, sizeof(m), "{\"trace\": %s, \"files\": []}", trace);
	CHECK(!tf_mkdirs(d) && !tf_write_text(d, "manifest.json", m) &&
		      !tf_write_text(d, "memmap.json", "{\"regions\": []}") &&
		      (!rtit || !tf_write_text(d, "rtit.jsonl", rtit)),
	      "the plugin's run directory");
}

/* the merged manifest's trace.marker_image ("" when there is none) */
static const char *merged_marker(const char *name, char *buf, size_t cap)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s/manifest.json", top, name);
	json_t *m = json_load_file(p, 0, NULL);
	snprintf(buf, cap, "%s",
		 json_string_value(json_object_get(json_object_get(m, "trace"), "marker_image"))
			 ?: "");
	json_decref(m);
	return buf;
}

int main(void)
{
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	/* efipt.efi's run on the ESP: BOOTX64 holds its WRMSR, CpuDxe the
	 * timer's handler */
	char g[256], cmd[1024];
	snprintf(g, sizeof(g), "%s/efipt/20261127-120000", top);
	CHECK(!tf_mkdirs(g) &&
		      !tf_write_text(g, "manifest.json",
				     "{\"command\": \"trace\", \"trace\": {\"source\": \"qemu\"}}") &&
		      !tf_write_text(g, "memmap.json", "{\"regions\": []}") &&
		      !tf_write_text(g, "images.json",
				     "{\"images\": [{\"name\": \"BOOTX64\", \"base\": \"0x100000\", "
				     "\"size\": 4096}, {\"name\": \"CpuDxe\", \"base\": "
				     "\"0x200000\", \"size\": 4096}]}"),
	      "the guest run's directory");
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkfs.vfat -C esp.img 4096 >/dev/null && MTOOLS_SKIP_CHECK=1 "
		 "mcopy -s -i esp.img efipt ::/efipt",
		 top);
	if (!CHECK(!system(cmd), "the ESP: mkfs.vfat and mcopy"))
		return check_exit();
	char esp[128];
	snprintf(esp, sizeof(esp), "%s/esp.img", top);

	/* start=guest, the first traced instruction in CpuDxe's handler: the
	 * writes before the one that set TraceEn (another MSR, CTL without
	 * TraceEn, a refused CTL write) are not it */
	const char *wrmsrs =
		"{\"cpu\": 0, \"ip\": \"0x100100\", \"msr\": \"IA32_RTIT_OUTPUT_BASE\", "
		"\"value\": \"0x5000\", \"result\": \"ok\"}\n"
		"{\"cpu\": 0, \"ip\": \"0x900000\", \"msr\": \"IA32_RTIT_CTL\", "
		"\"value\": \"0x2001\", \"result\": \"#GP\"}\n"
		"{\"cpu\": 0, \"ip\": \"0x100180\", \"msr\": \"IA32_RTIT_CTL\", "
		"\"value\": \"0x2000\", \"result\": \"ok\"}\n"
		"not json\n"
		"{\"cpu\": 0, \"ip\": \"0x100200\", \"msr\": \"IA32_RTIT_CTL\", "
		"\"value\": \"0x2001\", \"result\": \"ok\"}\n";
	plugin_run("guest", "{\"first_ip\": \"0x200040\", \"guest\": {\"log\": \"rtit.jsonl\"}}",
		   wrmsrs);
	struct qemu_merge_result r;
	char err[1024] = "", rd[256], mk[256];
	snprintf(rd, sizeof(rd), "%s/guest", top);
	int rc = qemu_merge_esp(rd, esp, NULL, &r, err, sizeof(err));
	CHECKF(rc == 0 && !strcmp(r.marker_image, "BOOTX64"),
	       "start=guest: the run is marked where the WRMSR that set TraceEn is, not where an "
	       "interrupt's handler was first traced",
	       "rc %d, image '%s': %s", rc, r.marker_image, err);
	CHECKF(!strcmp(merged_marker("guest", mk, sizeof(mk)), "BOOTX64"),
	       "start=guest: the merged manifest's marker_image", "'%s'", mk);
	CHECKF(!strcmp(r.guest_run, "20261127-120000") && r.images == 2,
	       "start=guest: the guest's run and its images merged", "run '%s', %u images",
	       r.guest_run, r.images);

	/* the markers' start: the first traced instruction is the mark */
	plugin_run("marker", "{\"first_ip\": \"0x200040\"}", NULL);
	snprintf(rd, sizeof(rd), "%s/marker", top);
	rc = qemu_merge_esp(rd, esp, NULL, &r, err, sizeof(err));
	CHECKF(rc == 0 && !strcmp(r.marker_image, "CpuDxe"),
	       "start marker: the run is marked by the first traced instruction",
	       "rc %d, image '%s': %s", rc, r.marker_image, err);

	/* start=guest without a write that set TraceEn: refused, saying so */
	plugin_run("nowrite", "{\"first_ip\": \"0x100200\", \"guest\": {\"log\": \"rtit.jsonl\"}}",
		   "{\"cpu\": 0, \"ip\": \"0x100200\", \"msr\": \"IA32_RTIT_CTL\", "
		   "\"value\": \"0x2001\", \"result\": \"#GP\"}\n");
	snprintf(rd, sizeof(rd), "%s/nowrite", top);
	rc = qemu_merge_esp(rd, esp, NULL, &r, err, sizeof(err));
	CHECKF(rc == -1 && strstr(err, "no WRMSR of the guest's set TraceEn"),
	       "start=guest: no WRMSR set TraceEn: refused with the reason", "rc %d: %s", rc, err);

	/* start=guest, the WRMSR in no image of the run: not this run */
	plugin_run("other", "{\"first_ip\": \"0x100200\", \"guest\": {\"log\": \"rtit.jsonl\"}}",
		   "{\"cpu\": 0, \"ip\": \"0x700000\", \"msr\": \"IA32_RTIT_CTL\", "
		   "\"value\": \"0x2001\", \"result\": \"ok\"}\n");
	snprintf(rd, sizeof(rd), "%s/other", top);
	rc = qemu_merge_esp(rd, esp, NULL, &r, err, sizeof(err));
	CHECKF(rc == -1 && strstr(err, "the WRMSR that set TraceEn at 0x700000 lies in no image"),
	       "start=guest: a WRMSR outside the run's images: not the run, said with the address",
	       "rc %d: %s", rc, err);

	if (remove_tree(top))
		printf("# %s left behind\n", top);
	return check_exit();
}
