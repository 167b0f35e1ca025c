/* Traced images and images.json; see image.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_image.h"
#include "host/input/image.h"
#include "host/input/rundir.h"
#include "host/symbols/symguid.h"
#include "host/symbols/symmap.h"
#include "host/util/file_io.h"

struct image *image_list_add(struct image_list *l)
{
	if (l->n == IMAGES_MAX)
		return NULL;
	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 16;
		struct image *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	struct image *m = &l->v[l->n++];
	memset(m, 0, sizeof(*m));
	return m;
}

void image_list_clear(struct image_list *l)
{
	for (unsigned i = 0; i < l->n; i++)
		symmap_release(&l->v[i]);
	l->n = 0;
}

void image_list_free(struct image_list *l)
{
	image_list_clear(l);
	free(l->v);
	memset(l, 0, sizeof(*l));
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

int images_json_read(json_t *ij, const char *what, struct image_list *l, char *err,
		     size_t errlen)
{
	json_t *imgs = json_object_get(ij, "images");
	size_t i;
	json_t *r;
	if (!json_is_array(imgs)) {
		snprintf(err, errlen, "%s: \"images\" must be an array", what);
		return -1;
	}
	json_array_foreach(imgs, i, r) {
		const char *name;
		uint64_t base, size;
		if (images_json_entry(r, i, what, &name, &base, &size, err, errlen))
			return -1;
		struct image *m = image_list_add(l);
		if (!m) {
			snprintf(err, errlen, "%s: more than %d images", what, IMAGES_MAX);
			return -1;
		}
		m->base = base;
		m->size = size;
		snprintf(m->name, sizeof(m->name), "%s", name);
		if (image_code(r, i, what, base, size, &m->code, err, errlen))
			return -1;
		json_t *at = json_object_get(r, "loaded_at");
		if (at && !json_is_null(at) &&
		    (!json_is_integer(at) || json_integer_value(at) < 0)) {
			snprintf(err, errlen, "%s: image %zu: \"loaded_at\" must be a trace "
				 "position (an integer from 0) or null", what, i);
			return -1;
		}
		m->loaded = at != NULL;
		m->loaded_known = json_is_integer(at);
		m->loaded_at = m->loaded_known ? (uint64_t)json_integer_value(at) : 0;
		const char *pdb = json_string_value(json_object_get(r, "pdb"));
		snprintf(m->pdb, sizeof(m->pdb), "%s", pdb ? pdb : "");
		/* an image loaded from a firmware volume: its FvFile GUID */
		const char *path = json_string_value(json_object_get(r, "path"));
		if (!path || !symguid_from_path(path, m->guid))
			symguid_from_path(name, m->guid);
	}
	return 0;
}

void image_list_rename(struct image_list *l, struct image_list *named)
{
	for (unsigned i = 0; i < named->n; i++)
		for (unsigned k = 0; k < l->n && !named->v[i].code.n; k++)
			if (l->v[k].base == named->v[i].base && l->v[k].size == named->v[i].size)
				named->v[i].code = l->v[k].code;
	image_list_free(l);
	*l = *named;
	memset(named, 0, sizeof(*named));
}

const char *image_name(const void *img)
{
	return ((const struct image *)img)->name;
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
