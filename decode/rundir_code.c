/* Snapshots and image list of a run directory; see rundir_code.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode/file_io.h"
#include "decode/rundir_code.h"

#define MAX_SNAPSHOTS 4096
#define MAX_IMAGES 4096

static int map_snapshot(struct rundir_code *c, const struct rundir *rd, const char *name,
			unsigned long long phys, unsigned long long size, char *err,
			size_t errlen)
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
	c->maps[c->nmaps] = p;
	c->map_sizes[c->nmaps] = size;
	c->nmaps++;
	if (!memview_add(&c->view, phys, size, p)) {
		snprintf(err, errlen, "%s: cannot map %llu bytes at 0x%llx", path, size, phys);
		return -1;
	}
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const struct memview_region *x = *(const struct memview_region *const *)a;
	const struct memview_region *y = *(const struct memview_region *const *)b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* The one rule for every decoder of a run directory: snapshots must not
 * overlap (efipt.efi writes one per memory-map region), so no reader has to
 * choose which copy of an address is the code. */
static int check_overlaps(const struct memview *v, char *err, size_t errlen)
{
	const struct memview_region **s = calloc(v->n ? v->n : 1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < v->n; i++)
		s[i] = &v->r[i];
	qsort(s, v->n, sizeof(*s), by_base);
	int rc = 0;
	for (unsigned i = 1; i < v->n && !rc; i++)
		if (s[i - 1]->base + s[i - 1]->size > s[i]->base) {
			snprintf(err, errlen, "memmap.json: the snapshot at 0x%llx-0x%llx overlaps "
					      "the one at 0x%llx-0x%llx",
				 (unsigned long long)s[i]->base,
				 (unsigned long long)(s[i]->base + s[i]->size - 1),
				 (unsigned long long)s[i - 1]->base,
				 (unsigned long long)(s[i - 1]->base + s[i - 1]->size - 1));
			rc = -1;
		}
	free(s);
	return rc;
}

int rundir_code_load(struct rundir_code *c, const struct rundir *rd, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->regions = calloc(MAX_SNAPSHOTS, sizeof(*c->regions));
	c->maps = calloc(MAX_SNAPSHOTS, sizeof(*c->maps));
	c->map_sizes = calloc(MAX_SNAPSHOTS, sizeof(*c->map_sizes));
	c->images = calloc(MAX_IMAGES, sizeof(*c->images));
	if (!c->regions || !c->maps || !c->map_sizes || !c->images) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memview_init(&c->view, c->regions, MAX_SNAPSHOTS);

	json_t *mm = rundir_json(rd, "memmap.json", err, errlen);
	if (!mm)
		return -1;
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
		if (c->nmaps >= MAX_SNAPSHOTS) {
			snprintf(err, errlen, "memmap.json: more than %d snapshots", MAX_SNAPSHOTS);
			rc = -1;
			break;
		}
		rc = map_snapshot(c, rd, json_string_value(snap), phys,
				  (unsigned long long)json_integer_value(pages) * 4096ull, err, errlen);
	}
	json_decref(mm);
	if (rc || (rc = check_overlaps(&c->view, err, errlen)))
		return rc;

	json_t *ij = rundir_json(rd, "images.json", err, errlen);
	if (!ij)
		return -1;
	rc = images_json_parse(ij, "images.json", c->images, MAX_IMAGES, &c->nimages, err, errlen);
	json_decref(ij);
	return rc;
}

int images_json_entry(json_t *r, size_t i, const char *what, const char **name,
		      uint64_t *base, uint64_t *size, char *err, size_t errlen)
{
	unsigned long long b;
	json_t *sz = json_object_get(r, "size");
	*name = json_string_value(json_object_get(r, "name"));
	if (rundir_hex(json_object_get(r, "base"), &b) || !json_is_integer(sz) || !*name) {
		snprintf(err, errlen, "%s: image %zu is malformed (name, base \"0x...\", integer "
			 "size)", what, i);
		return -1;
	}
	/* images are attributed by [base, base + size): it must fit below 2^64 */
	long long n = (long long)json_integer_value(sz);
	if (n < 0 || !ptimg_range_ok(b, (uint64_t)n)) {
		snprintf(err, errlen, "%s: image %zu: base 0x%llx, size %lld: the range %s", what, i,
			 b, n, n < 0 ? "has a negative size" : "runs past 2^64");
		return -1;
	}
	*base = b;
	*size = (uint64_t)n;
	return 0;
}

int images_json_parse(json_t *ij, const char *what, struct ptsum_image *out, unsigned max,
		      unsigned *n, char *err, size_t errlen)
{
	json_t *imgs = json_object_get(ij, "images");
	size_t i;
	json_t *r;
	*n = 0;
	if (!json_is_array(imgs)) {
		snprintf(err, errlen, "%s: \"images\" must be an array", what);
		return -1;
	}
	json_array_foreach(imgs, i, r) {
		if (*n >= max)
			break;
		const char *name;
		struct ptsum_image *m = &out[*n];
		if (images_json_entry(r, i, what, &name, &m->base, &m->size, err, errlen))
			return -1;
		snprintf(m->name, sizeof(m->name), "%s", name);
		(*n)++;
	}
	return 0;
}

void rundir_code_free(struct rundir_code *c)
{
	for (unsigned i = 0; i < c->nmaps; i++)
		munmap(c->maps[i], c->map_sizes[i]);
	free(c->regions);
	free(c->maps);
	free(c->map_sizes);
	free(c->images);
	memset(c, 0, sizeof(*c));
}
