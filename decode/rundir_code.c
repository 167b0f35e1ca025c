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
	c->code = calloc(MAX_IMAGES, sizeof(*c->code));
	if (!c->regions || !c->maps || !c->map_sizes || !c->images || !c->code) {
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
	rc = images_json_parse(ij, "images.json", c->images, c->code, MAX_IMAGES, &c->nimages, err,
			       errlen);
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

/* An image's "code" (its executable sections) and "entry", both optional:
 * 0, or -1 with why in err. */
static int image_code(json_t *r, size_t i, const char *what, uint64_t base, uint64_t size,
		      struct pe_code *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	unsigned long long e;
	if (!rundir_hex(json_object_get(r, "entry"), &e) && e - base < size && e != base)
		c->entry_rva = (uint32_t)(e - base);
	json_t *code = json_object_get(r, "code"), *s;
	size_t k;
	if (!code)
		return 0;
	if (!json_is_array(code) || json_array_size(code) > PE_CODE_MAX) {
		snprintf(err, errlen, "%s: image %zu: \"code\" must be an array of at most %d "
			 "sections", what, i, PE_CODE_MAX);
		return -1;
	}
	json_array_foreach(code, k, s) {
		unsigned long long rva;
		json_t *sz = json_object_get(s, "size");
		long long n = json_integer_value(sz);
		if (rundir_hex(json_object_get(s, "rva"), &rva) || !json_is_integer(sz) || n <= 0 ||
		    rva >= size || (uint64_t)n > size - rva || rva > UINT32_MAX || n > UINT32_MAX) {
			snprintf(err, errlen, "%s: image %zu: code[%zu] must be {\"rva\": \"0x...\", "
				 "\"size\": N} inside the image", what, i, k);
			return -1;
		}
		c->r[c->n].rva = (uint32_t)rva;
		c->r[c->n].size = (uint32_t)n;
		c->n++;
	}
	return 0;
}

int images_json_parse(json_t *ij, const char *what, struct ptsum_image *out,
		      struct pe_code *code, unsigned max, unsigned *n, char *err, size_t errlen)
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
		if (code && image_code(r, i, what, m->base, m->size, &code[*n], err, errlen))
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
	free(c->code);
	memset(c, 0, sizeof(*c));
}

const char *ptsum_image_name(const void *img)
{
	return ((const struct ptsum_image *)img)->name;
}

void images_note_overlaps(const char *cmd, const void *list, unsigned n, size_t stride,
			  const char *(*name)(const void *img))
{
	unsigned i = 0, j = 0, shown = 0, more = 0;
	while (ptimg_list_overlap_next(list, n, stride, &i, &j)) {
		if (shown == 6) {
			more++;
			continue;
		}
		const uint64_t *a = ptimg_list_at(list, stride, i), *b = ptimg_list_at(list, stride, j);
		const void *ea = a, *eb = b;
		char outer[80], inner[80];
		snprintf(outer, sizeof(outer), "%s", term_safe(name(ea)));
		snprintf(inner, sizeof(inner), "%s", term_safe(name(eb)));
		if (ptimg_inside(a, b))
			fprintf(stderr, "%s: image %s (0x%llx-0x%llx) lies inside image %s "
					"(0x%llx-0x%llx): its addresses count for %s (the "
					"innermost image owns them)\n",
				cmd, inner, (unsigned long long)b[0],
				(unsigned long long)(b[0] + (b[1] - 1)), outer,
				(unsigned long long)a[0], (unsigned long long)(a[0] + (a[1] - 1)), inner);
		else
			fprintf(stderr, "%s: image %s (0x%llx-0x%llx) overlaps image %s "
					"(0x%llx-0x%llx): 0x%llx-0x%llx count for %s (of two "
					"overlapping images, the one that starts last owns them)\n",
				cmd, inner, (unsigned long long)b[0],
				(unsigned long long)(b[0] + (b[1] - 1)), outer,
				(unsigned long long)a[0], (unsigned long long)(a[0] + (a[1] - 1)),
				(unsigned long long)b[0], (unsigned long long)(a[0] + (a[1] - 1)), inner);
		shown++;
	}
	if (more)
		fprintf(stderr, "%s: and %u more overlaps of images\n", cmd, more);
}
