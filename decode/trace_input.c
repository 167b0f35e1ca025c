/* Run directory and --pt inputs of the decoding commands; see trace_input.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/file_io.h"
#include "decode/rundir.h"
#include "decode/rundir_code.h"
#include "decode/trace_input.h"

static int images_room(const char *cmd, struct trace_images *imgs)
{
	if (!imgs->img) {
		imgs->img = calloc(TRACE_IMAGES_MAX, sizeof(*imgs->img));
		imgs->code_size = calloc(TRACE_IMAGES_MAX, sizeof(*imgs->code_size));
		imgs->entry = calloc(TRACE_IMAGES_MAX, sizeof(*imgs->entry));
	}
	if (!imgs->img || !imgs->code_size || !imgs->entry) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return -1;
	}
	return 0;
}

int trace_input_run(const char *cmd, const char *dir, struct ptsec_image *im,
		    struct ptflow_config *fc, char *trace, size_t cap, struct trace_images *imgs)
{
	struct rundir rd;
	static struct rundir_code code;
	char err[4400];
	int rc = -1;
	if (rundir_open(&rd, dir)) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(rd.err));
		goto done;
	}
	if (rundir_trace(&rd, trace, cap, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		goto done;
	}
	if (rundir_code_load(&code, &rd, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		goto done;
	}
	for (unsigned i = 0; i < code.view.n; i++) {
		const struct memview_region *r = &code.view.r[i];
		if (ptsec_add(im, r->base, r->bytes, r->size, "snapshot")) {
			fprintf(stderr, "%s: %s\n", cmd, im->err);
			goto done;
		}
	}
	if (imgs) {
		if (images_room(cmd, imgs))
			goto done;
		for (unsigned i = 0; i < code.nimages && imgs->n < TRACE_IMAGES_MAX; i++)
			imgs->img[imgs->n++] = code.images[i];
	}
	struct flow_facts facts;
	rundir_flow_facts(&rd, &facts);
	flow_setup(fc, &facts);
	rc = 0;
done:
	rundir_code_free(&code);
	rundir_close(&rd);
	return rc;
}

int trace_input_images(const char *cmd, const char *path, struct trace_images *imgs)
{
	if (images_room(cmd, imgs))
		return -1;
	size_t len;
	char *text = read_small_file(path, 64u << 20, &len);
	if (!text)
		return -1;
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	char err[4400];
	if (!j) {
		fprintf(stderr, "%s: %s:%d:%d: %s\n", cmd, term_safe(path), je.line, je.column,
			term_safe(je.text));
		return -1;
	}
	unsigned n = 0;
	int rc = images_json_parse(j, path, imgs->img + imgs->n, TRACE_IMAGES_MAX - imgs->n, &n,
				   err, sizeof(err));
	json_decref(j);
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, term_safe(err));
		return -1;
	}
	imgs->n += n;
	return 0;
}

int trace_input_pe(const char *cmd, const char *spec, struct ptsec_image *im,
		   struct trace_images *imgs)
{
	if (ptsec_load_pe(im, spec)) {
		fprintf(stderr, "%s: %s\n", cmd, im->err);
		return -1;
	}
	if (images_room(cmd, imgs))
		return -1;
	if (imgs->n >= TRACE_IMAGES_MAX) {
		fprintf(stderr, "%s: more than %d images\n", cmd, TRACE_IMAGES_MAX);
		return -1;
	}
	/* the file name without a :BASE suffix and without its directory */
	char file[4096];
	snprintf(file, sizeof(file), "%s", spec);
	char *colon = strrchr(file, ':');
	unsigned long long v;
	if (colon && !parse_u64(colon + 1, &v))
		*colon = 0;
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	imgs->code_size[imgs->n] = im->pe_code;
	imgs->entry[imgs->n] = im->entry;
	struct ptsum_image *m = &imgs->img[imgs->n++];
	memset(m, 0, sizeof(*m));
	m->base = im->pe_base;
	m->size = im->pe_size;
	snprintf(m->name, sizeof(m->name), "%.63s", base);
	return 0;
}

void trace_images_free(struct trace_images *imgs)
{
	free(imgs->img);
	free(imgs->code_size);
	free(imgs->entry);
	imgs->img = NULL;
	imgs->code_size = imgs->entry = NULL;
	imgs->n = 0;
}
