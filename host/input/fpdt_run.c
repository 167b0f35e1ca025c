/* A run's fpdt.bin as spans; see fpdt_run.h. */
#include "host/input/fpdt_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "host/input/image.h"
#include "host/util/grow.h"

/* fpdt.bin holds at most three tables of at most 16 MiB (efi/fpdt_save.c) */
#define FPDT_FILE_MAX (48u << 20)

#define FPDT_CROSS_MODULE 0x50 /* PerformanceLib.h PERF_CROSSMODULE_START_ID */

/* A start record waiting for its end. */
struct open_start {
	uint16_t id;
	uint8_t guid[16];
	char name[FPDT_NAME_MAX];
	uint64_t ts, off;
};

struct pairing {
	struct fpdt_run *f;
	const struct image_list *images;
	struct open_start *open;
	size_t nopen, capopen, capspan, capdamage;
};

static void add_damage(struct fpdt_run *f, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_damage(struct fpdt_run *f, size_t *cap, const char *fmt, ...)
{
	if (!grow_array((void **)&f->damage, cap, f->ndamage, sizeof(*f->damage), 8)) {
		f->oom = true;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->damage[f->ndamage++], sizeof(*f->damage), fmt, ap);
	va_end(ap);
}

static void on_damaged(void *ctx, uint64_t off, uint32_t type, uint32_t len, const char *why)
{
	struct pairing *p = ctx;
	if (type == 0xffffffffu)
		add_damage(p->f, &p->capdamage, "offset %llu: table (length %u): %s",
			   (unsigned long long)off, len, why);
	else
		add_damage(p->f, &p->capdamage, "offset %llu: record type 0x%04x, length %u: %s",
			   (unsigned long long)off, type, len, why);
}

static void on_table(void *ctx, uint32_t sig, uint64_t off, uint32_t len)
{
	(void)off;
	(void)len;
	struct fpdt_run *f = ((struct pairing *)ctx)->f;
	f->tables++;
	size_t n = strlen(f->table_names);
	if (n + 6 < sizeof(f->table_names))
		snprintf(f->table_names + n, sizeof(f->table_names) - n, "%s%c%c%c%c", n ? " " : "",
			 sig & 0xff, (sig >> 8) & 0xff, (sig >> 16) & 0xff, sig >> 24);
}

static const char *image_of(const struct image_list *l, const char *guid)
{
	for (unsigned i = 0; l && i < l->n; i++)
		if (l->v[i].guid[0] && !strcasecmp(l->v[i].guid, guid))
			return l->v[i].name;
	return NULL;
}

static void add_span(struct pairing *p, uint16_t id, const uint8_t guid[16], const char *name,
		     uint64_t start, uint64_t dur, uint64_t off, bool single)
{
	struct fpdt_run *f = p->f;
	if (!grow_array((void **)&f->span, &p->capspan, f->nspan, sizeof(*f->span), 64)) {
		f->oom = true;
		return;
	}
	struct fpdt_span *s = &f->span[f->nspan++];
	memset(s, 0, sizeof(*s));
	char idbuf[16];
	snprintf(s->what, sizeof(s->what), "%s", fpdt_progress_name(id, idbuf, sizeof(idbuf)));
	fpdt_guid_text(guid, s->guid);
	const char *img = image_of(p->images, s->guid);
	if (img)
		snprintf(s->image, sizeof(s->image), "%s", img);
	snprintf(s->name, sizeof(s->name), "%s", name[0] ? name : img ? img : s->guid);
	s->start = start;
	s->dur = dur;
	s->off = off;
	s->single = single;
}

static void on_record(void *ctx, const struct fpdt_rec *r)
{
	struct pairing *p = ctx;
	struct fpdt_run *f = p->f;
	f->records++;
	if (r->kind == FPDT_K_BASIC_BOOT) {
		f->have_boot = true;
		memcpy(f->boot, r->boot, sizeof(f->boot));
		return;
	}
	if (r->kind == FPDT_K_S3_RESUME || r->kind == FPDT_K_S3_SUSPEND) {
		unsigned k = r->kind == FPDT_K_S3_SUSPEND;
		f->s3[k] = *r;
		f->have_s3[k] = true;
		return;
	}
	if (r->kind != FPDT_K_EVENT)
		return;
	if (fpdt_is_start(r->progress)) {
		if (!grow_array((void **)&p->open, &p->capopen, p->nopen, sizeof(*p->open), 64)) {
			f->oom = true;
			return;
		}
		struct open_start *o = &p->open[p->nopen++];
		o->id = r->progress;
		memcpy(o->guid, r->guid, 16);
		memcpy(o->name, r->name, sizeof(o->name));
		o->ts = r->ts;
		o->off = r->off;
		return;
	}
	if (!fpdt_is_end(r->progress)) {
		add_span(p, r->progress, r->guid, r->name, r->ts, 0, r->off, true);
		return;
	}
	uint16_t want = fpdt_start_of(r->progress);
	for (size_t i = p->nopen; i-- > 0;) {
		struct open_start *o = &p->open[i];
		/* a cross-module measurement (PEI, DXE, BDS) ends in another
		 * module than it starts in: its string alone names it */
		if (o->id != want || strcmp(o->name, r->name) ||
		    (want != FPDT_CROSS_MODULE && memcmp(o->guid, r->guid, 16)))
			continue;
		if (r->ts < o->ts) {
			add_damage(f, &p->capdamage, "offset %llu: record type 0x%04x, length %u: "
				   "ends at %llu ns, before its start at offset %llu (%llu ns)",
				   (unsigned long long)r->off, r->type, r->len,
				   (unsigned long long)r->ts, (unsigned long long)o->off,
				   (unsigned long long)o->ts);
		} else {
			add_span(p, o->id, o->guid, o->name, o->ts, r->ts - o->ts, o->off, false);
		}
		memmove(o, o + 1, (p->nopen - i - 1) * sizeof(*o));
		p->nopen--;
		return;
	}
	f->unpaired++;
}

static int by_start(const void *a, const void *b)
{
	const struct fpdt_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* by what, name and GUID, then start: to number each one's occurrences */
static int by_key(const void *a, const void *b)
{
	const struct fpdt_span *x = *(const struct fpdt_span *const *)a;
	const struct fpdt_span *y = *(const struct fpdt_span *const *)b;
	int c = strcmp(x->what, y->what);
	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = strcmp(x->guid, y->guid);
	return c ? c : by_start(x, y);
}

int fpdtrun_parse(struct fpdt_run *f, const uint8_t *buf, size_t len,
		  const struct image_list *images)
{
	struct pairing p = { .f = f, .images = images };
	struct fpdt_sink sink = { on_table, on_record, on_damaged, &p };
	f->present = true;
	fpdt_walk(buf, len, &sink);
	f->unpaired += p.nopen;
	free(p.open);
	if (f->oom)
		return -1;
	if (f->nspan) {
		qsort(f->span, f->nspan, sizeof(*f->span), by_start);
		struct fpdt_span **k = malloc(f->nspan * sizeof(*k));
		if (!k)
			return f->oom = true, -1;
		for (size_t i = 0; i < f->nspan; i++)
			k[i] = &f->span[i];
		qsort(k, f->nspan, sizeof(*k), by_key);
		for (size_t i = 1; i < f->nspan; i++)
			if (!strcmp(k[i]->what, k[i - 1]->what) && !strcmp(k[i]->name, k[i - 1]->name) &&
			    !strcmp(k[i]->guid, k[i - 1]->guid))
				k[i]->nth = k[i - 1]->nth + 1;
		free(k);
	}
	return 0;
}

int fpdtrun_load(struct fpdt_run *f, const char *dir, const struct image_list *images,
		 char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s/fpdt.bin", dir);
	struct stat st;
	if (lstat(f->path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > FPDT_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", f->path,
			 S_ISREG(st.st_mode) ? "larger than 48 MiB, three tables of at most 16 MiB"
					     : "not a regular file");
		return -1;
	}
	FILE *in = fopen(f->path, "rb");
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = in && buf ? fread(buf, 1, (size_t)st.st_size, in) : 0;
	int bad = !in || !buf || got != (size_t)st.st_size || ferror(in);
	if (in)
		fclose(in);
	if (bad) {
		snprintf(err, errlen, "%s: %s", f->path,
			 !buf ? "out of memory" : !in ? strerror(errno) : "read error");
		free(buf);
		return -1;
	}
	int rc = fpdtrun_parse(f, buf, got, images);
	free(buf);
	if (rc)
		snprintf(err, errlen, "%s: out of memory", f->path);
	return rc;
}

void fpdtrun_free(struct fpdt_run *f)
{
	free(f->span);
	free(f->damage);
	f->span = NULL;
	f->damage = NULL;
	f->nspan = f->ndamage = 0;
}

void fpdtrun_label(const struct fpdt_span *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s", s->what, s->name);
}
