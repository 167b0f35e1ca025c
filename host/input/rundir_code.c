/* The code snapshots and images of a run directory; see rundir.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/input/code_changes.h"
#include "host/input/rundir.h"
#include "host/util/file_io.h"
#include "host/util/stats.h"

#define MAX_SNAPSHOTS 4096

static int map_snapshot(struct run_dir *rd, const char *name, unsigned long long phys,
			unsigned long long size, char *err, size_t errlen)
{
	if (strchr(name, '/') || name[0] == '.') {
		snprintf(err, errlen, "memmap.json: snapshot name '%s' is not a plain file name",
			 name);
		return -1;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", rd->path, name);
	int fd = open_regular(path, err, errlen);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) || (unsigned long long)st.st_size != size) {
		snprintf(err, errlen, "%s: %lld bytes, memmap.json says %llu", path,
			 (long long)st.st_size, size);
		close(fd);
		return -1;
	}
	void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		return -1;
	}
	rd->snap[rd->nsnap++] = (struct rundir_snapshot){ phys, size, p };
	if (phys + size < phys) {
		snprintf(err, errlen, "%s: cannot map %llu bytes at 0x%llx", path, size, phys);
		return -1;
	}
	return 0;
}

static int by_phys(const void *a, const void *b)
{
	const struct rundir_snapshot *x = a, *y = b;
	return x->phys < y->phys ? -1 : x->phys > y->phys;
}

/* The one rule for every decoder of a run directory: snapshots must not
 * overlap (efipt.efi writes one per memory-map region), so no reader has to
 * choose which copy of an address is the code. The snapshots in memmap.json
 * order as they are checked: sorted after. */
static int check_overlaps(struct run_dir *rd, char *err, size_t errlen)
{
	if (rd->nsnap)
		qsort(rd->snap, rd->nsnap, sizeof(*rd->snap), by_phys);
	for (unsigned i = 1; i < rd->nsnap; i++) {
		const struct rundir_snapshot *a = &rd->snap[i - 1], *b = &rd->snap[i];
		if (a->phys + a->size > b->phys) {
			snprintf(err, errlen, "memmap.json: the snapshot at 0x%llx-0x%llx overlaps "
					      "the one at 0x%llx-0x%llx",
				 (unsigned long long)b->phys,
				 (unsigned long long)(b->phys + b->size - 1),
				 (unsigned long long)a->phys,
				 (unsigned long long)(a->phys + a->size - 1));
			return -1;
		}
	}
	return 0;
}

void rundir_mark_executed_only(const struct run_dir *rd, struct image_list *l)
{
	for (unsigned i = 0; i < rd->nqemu_code; i++)
		for (unsigned k = 0; k < l->n; k++)
			if (l->v[k].base < rd->qemu_code[i].hi &&
			    rd->qemu_code[i].lo < l->v[k].base + l->v[k].size)
				l->v[k].executed_only = true;
}

int rundir_load_code(struct run_dir *rd, char *err, size_t errlen)
{
	rd->snap = calloc(MAX_SNAPSHOTS, sizeof(*rd->snap));
	if (!rd->snap) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_t *mm = rundir_json(rd, "memmap.json", err, errlen);
	if (!mm)
		return -1;
	stats.memmap++;
	json_t *regions = json_object_get(mm, "regions");
	size_t i;
	json_t *r;
	int rc = 0;
	if (!json_is_array(regions)) {
		snprintf(err, errlen, "memmap.json: \"regions\" must be an array");
		rc = -1;
	}
	json_array_foreach(regions, i, r) {
		if (rc)
			break;
		json_t *snap = json_object_get(r, "snapshot");
		if (!snap)
			continue;
		unsigned long long phys;
		json_t *pages = json_object_get(r, "pages");
		if (!json_is_string(snap) || rundir_hex(json_object_get(r, "phys"), &phys) ||
		    !json_is_integer(pages) || json_integer_value(pages) <= 0 ||
		    json_integer_value(pages) > (1ll << 36)) {
			snprintf(err, errlen, "memmap.json: region %zu is malformed", i);
			rc = -1;
			break;
		}
		if (rd->nsnap >= MAX_SNAPSHOTS) {
			snprintf(err, errlen, "memmap.json: more than %d snapshots", MAX_SNAPSHOTS);
			rc = -1;
			break;
		}
		rc = map_snapshot(rd, json_string_value(snap), phys,
				  (unsigned long long)json_integer_value(pages) * 4096ull, err, errlen);
	}
	if (rc || (rc = check_overlaps(rd, err, errlen))) {
		json_decref(mm);
		return rc;
	}
	json_t *ij = rundir_json(rd, "images.json", err, errlen);
	if (!ij) {
		json_decref(mm);
		return -1;
	}
	stats.images++;
	rc = images_json_read(ij, "images.json", &rd->images, err, errlen);
	json_decref(ij);
	/* the code QEMU's plugin recorded (the same memmap.json) */
	json_array_foreach(regions, i, r) {
		unsigned long long lo;
		json_t *pages = json_object_get(r, "pages");
		const char *type = json_string_value(json_object_get(r, "type"));
		if (rc || !type || strcmp(type, "QemuCode") ||
		    rundir_hex(json_object_get(r, "phys"), &lo) || !json_is_integer(pages) ||
		    json_integer_value(pages) <= 0 || json_integer_value(pages) > (1ll << 36) ||
		    rd->nqemu_code == sizeof(rd->qemu_code) / sizeof(rd->qemu_code[0]))
			continue;
		rd->qemu_code[rd->nqemu_code].lo = lo;
		rd->qemu_code[rd->nqemu_code++].hi = lo + (uint64_t)json_integer_value(pages) * 4096;
	}
	json_decref(mm);
	rundir_mark_executed_only(rd, &rd->images);
	if (!rc) {
		/* the count the manifest gives, if any, must be the file's */
		json_t *tc = json_object_get(json_object_get(rd->manifest, "trace"), "code_changes");
		long long expect = json_is_integer(tc) ? json_integer_value(tc) : -1;
		rc = codechanges_load(rd->path, expect, &rd->chg, &rd->nchg, err, errlen);
	}
	return rc;
}

void rundir_free_code(struct run_dir *rd)
{
	for (unsigned i = 0; i < rd->nsnap; i++)
		munmap((void *)rd->snap[i].bytes, rd->snap[i].size);
	free(rd->snap);
	rd->snap = NULL;
	rd->nsnap = 0;
	rd->nqemu_code = 0;
	image_list_free(&rd->images);
	free(rd->chg);
	rd->chg = NULL;
	rd->nchg = 0;
}
