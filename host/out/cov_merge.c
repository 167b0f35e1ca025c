/* Union of drcov files; see cov_merge.h and docs/coverage.md. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_cov.h"
#include "host/out/cov_merge.h"
#include "host/util/file_io.h"

#define MAX_MODULES 65536u
#define MAX_COLUMNS 16

struct span {
	uint64_t start, end;	/* offsets from the module base */
};

struct module {
	char *path;
	uint64_t base, end, entry;
	struct span *sp;
	size_t n, cap;
	int seen;
};

struct merged {
	struct module *m;
	unsigned n, cap;
	uint64_t outside;	/* blocks in no module (id 65535): left out */
};

/* One line of text at *pos (without its newline), NUL-terminated into buf.
 * -1 at the end of the data or a line longer than cap. */
static int next_line(const unsigned char *d, size_t size, size_t *pos, char *buf, size_t cap)
{
	size_t i = *pos, n = 0;
	while (i < size && d[i] != '\n') {
		if (n + 1 >= cap)
			return -1;
		buf[n++] = (char)d[i++];
	}
	if (i >= size)
		return -1;
	buf[n] = 0;
	*pos = i + 1;
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

static int num(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static struct module *module_for(struct merged *mg, const char *path)
{
	for (unsigned i = 0; i < mg->n; i++)
		if (!strcmp(mg->m[i].path, path))
			return &mg->m[i];
	if (mg->n >= MAX_MODULES)
		return NULL;
	if (mg->n == mg->cap) {
		unsigned cap = mg->cap ? mg->cap * 2 : 8;
		struct module *m = realloc(mg->m, cap * sizeof(*m));
		if (!m)
			return NULL;
		mg->m = m;
		mg->cap = cap;
	}
	struct module *m = &mg->m[mg->n];
	memset(m, 0, sizeof(*m));
	if (!(m->path = strdup(path)))
		return NULL;
	mg->n++;
	return m;
}

static int add_span(struct module *m, uint64_t start, uint64_t end)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct span *s = realloc(m->sp, cap * sizeof(*s));
		if (!s)
			return -1;
		m->sp = s;
		m->cap = cap;
	}
	m->sp[m->n++] = (struct span){ start, end };
	return 0;
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); goto bad; } while (0)

/* A module table entry: a module, or (table versions 3 and later) one
 * segment of one; its blocks' offsets are from the entry's own start. */
struct entry {
	struct module *m;
	uint64_t delta;		/* the entry's start minus its module's base */
};

/* The module table's columns (DynamoRIO's drcovlib, modules.c): version 2
 * "id, base, end, entry[, checksum, timestamp], path", 3 adds containing_id
 * and calls base "start", 4 adds offset, 5 preferred_base; Windows builds
 * add checksum and timestamp. Unknown columns are skipped; path is last. */
struct columns {
	int n, id, containing, base, end, entry, path;
};

static int read_columns(char *line, struct columns *c, char *err, size_t errlen)
{
	*c = (struct columns){ 0, -1, -1, -1, -1, -1, -1 };
	for (char *tok = strtok(line, ","); tok; tok = strtok(NULL, ",")) {
		tok = trim(tok);
		if (c->n >= MAX_COLUMNS)
			BAD("line 4: more than %d columns", MAX_COLUMNS);
		if (!strcmp(tok, "id")) c->id = c->n;
		else if (!strcmp(tok, "containing_id")) c->containing = c->n;
		else if (!strcmp(tok, "base") || !strcmp(tok, "start")) c->base = c->n;
		else if (!strcmp(tok, "end")) c->end = c->n;
		else if (!strcmp(tok, "entry")) c->entry = c->n;
		else if (!strcmp(tok, "path")) c->path = c->n;
		else if (!strcmp(tok, "(custom fields)"))
			BAD("line 4: the module table has custom fields (drmodtrack_add_custom_data), "
			    "whose columns cannot be told apart");
		c->n++;
	}
	if (c->id < 0 || c->base < 0 || c->end < 0 || c->path != c->n - 1)
		BAD("line 4: the columns must include id, base (or start), end, and path last");
	return 0;
bad:
	return -1;
}

/* The BB table in text ("module id, start, size:" then a line per block,
 * drcov -dump_text) into the 8-byte binary layout at out. */
static int text_blocks(const unsigned char *d, size_t size, size_t *pos, uint64_t nbb,
		       unsigned char *out, char *err, size_t errlen)
{
	char line[256];
	for (uint64_t i = 0; i < nbb; i++) {
		unsigned id;
		unsigned long long start, sz;
		char tail;
		if (next_line(d, size, pos, line, sizeof(line)) ||
		    sscanf(line, " module[ %u]: %llx, %llu %c", &id, &start, &sz, &tail) != 3 ||
		    start > UINT32_MAX || sz > 0xffff || id > 0xffff)
			BAD("BB table (text): block %llu: 'module[ID]: 0xSTART, SIZE' expected",
			    (unsigned long long)i);
		unsigned char *e = out + 8 * i;
		for (int b = 0; b < 4; b++)
			e[b] = (unsigned char)(start >> (8 * b));
		e[4] = (unsigned char)sz, e[5] = (unsigned char)(sz >> 8);
		e[6] = (unsigned char)id, e[7] = (unsigned char)(id >> 8);
	}
	return 0;
bad:
	return -1;
}

/* Parse one drcov file into mg. 0, or -1 with the reason in err. */
static int read_drcov(void *merged, const unsigned char *d, size_t size, char *err,
		      size_t errlen)
{
	struct merged *mg = merged;
	char line[8192];
	size_t pos = 0;
	uint64_t count, nbb, version;
	struct entry *ids = NULL;
	unsigned char *text = NULL;
	struct columns col;
	if (next_line(d, size, &pos, line, sizeof(line)) || strcmp(trim(line), "DRCOV VERSION: 2"))
		BAD("not a drcov version 2 file (the first line must be 'DRCOV VERSION: 2')");
	if (next_line(d, size, &pos, line, sizeof(line)) || strncmp(line, "DRCOV FLAVOR:", 13))
		BAD("line 2: 'DRCOV FLAVOR: ...' expected");
	if (next_line(d, size, &pos, line, sizeof(line)))
		BAD("line 3: 'Module Table: version N, count M' expected");
	char *cnt = strstr(line, ", count ");
	if (!strncmp(line, "Module Table: ", 14) && !strstr(line, "version"))
		BAD("line 3: a version 1 module table (DynamoRIO 6): it has no module bases; "
		    "efipt reads versions 2 to 5");
	if (strncmp(line, "Module Table: version ", 22) || !cnt || (*cnt = 0, 0) ||
	    num(trim(line + 22), &version) || num(trim(cnt + 8), &count) || count > MAX_MODULES)
		BAD("line 3: 'Module Table: version N, count M' (M up to %u) expected", MAX_MODULES);
	if (version < 2 || version > 5)
		BAD("line 3: module table version %llu: efipt reads versions 2 to 5",
		    (unsigned long long)version);
	if (next_line(d, size, &pos, line, sizeof(line)) || strncmp(line, "Columns: ", 9))
		BAD("line 4: 'Columns: ...' expected");
	if (read_columns(line + 9, &col, err, errlen))
		goto bad;
	ids = calloc(count ? count : 1, sizeof(*ids));
	if (!ids)
		BAD("out of memory");
	uint64_t *starts = calloc(count ? count : 1, sizeof(*starts));
	if (!starts)
		BAD("out of memory");
	for (uint64_t k = 0; k < count; k++) {
		if (next_line(d, size, &pos, line, sizeof(line))) {
			free(starts);
			BAD("module table: %llu of %llu modules, then the file ends",
			    (unsigned long long)k, (unsigned long long)count);
		}
		char *f[MAX_COLUMNS], *p = line;
		for (int c = 0; c < col.n - 1; c++) {
			char *comma = strchr(p, ',');
			if (!comma) {
				free(starts);
				BAD("module %llu: %d columns expected", (unsigned long long)k, col.n);
			}
			*comma = 0;
			f[c] = trim(p);
			p = comma + 1;
		}
		f[col.n - 1] = trim(p);
		uint64_t id, base, end, entry = 0, in = k;
		if (num(f[col.id], &id) || id != k || num(f[col.base], &base) ||
		    num(f[col.end], &end) || end < base ||
		    (col.entry >= 0 && num(f[col.entry], &entry)) ||
		    (col.containing >= 0 && num(f[col.containing], &in)) || !*f[col.path]) {
			free(starts);
			BAD("module %llu: bad id, containing_id, base, end, entry or path",
			    (unsigned long long)k);
		}
		starts[k] = base;
		if (in != k) {
			/* a segment of the module listed at in (its first) */
			if (in > k || ids[in].delta || strcmp(ids[in].m->path, f[col.path]) ||
			    base < starts[in]) {
				free(starts);
				BAD("module %llu: containing_id %llu is no earlier entry of %s",
				    (unsigned long long)k, (unsigned long long)in, f[col.path]);
			}
			struct module *m = ids[in].m;
			ids[k] = (struct entry){ m, base - starts[in] };
			if (end - starts[in] > m->end - m->base)
				m->end = m->base + (end - starts[in]);
			continue;
		}
		struct module *m = module_for(mg, f[col.path]);
		if (!m) {
			free(starts);
			BAD("out of memory (or more than %u modules)", MAX_MODULES);
		}
		if (!m->seen) { /* first seen: its addresses */
			m->seen = 1;
			m->base = base;
			m->end = base;
			m->entry = entry;
		}
		if (end - base > m->end - m->base)
			m->end = m->base + (end - base);
		ids[k] = (struct entry){ m, 0 };
	}
	free(starts);
	if (next_line(d, size, &pos, line, sizeof(line)) || strncmp(line, "BB Table: ", 10))
		BAD("'BB Table: N bbs' expected after the module table");
	char *sp = strchr(line + 10, ' ');
	if (!sp || strcmp(trim(sp), "bbs") || (*sp = 0, num(line + 10, &nbb)))
		BAD("'BB Table: N bbs' expected after the module table");
	const unsigned char *bb = d + pos;
	size_t at = pos;
	if (!next_line(d, size, &at, line, sizeof(line)) && !strcmp(trim(line), "module id, start, size:")) {
		/* drcov -dump_text: a line per block */
		if (nbb > (size - at) / 8)
			BAD("BB table (text): %llu blocks cannot fit in the rest of the file",
			    (unsigned long long)nbb);
		text = malloc(nbb ? nbb * 8 : 1);
		if (!text)
			BAD("out of memory");
		if (text_blocks(d, size, &at, nbb, text, err, errlen))
			goto bad;
		bb = text;
	} else {
		if ((size - pos) / 8 < nbb)
			BAD("truncated: the BB table holds %zu of its %llu blocks", (size - pos) / 8,
			    (unsigned long long)nbb);
		if (size - pos != nbb * 8)
			BAD("%zu bytes after the BB table's %llu blocks", size - pos - nbb * 8,
			    (unsigned long long)nbb);
	}
	for (uint64_t i = 0; i < nbb; i++) {
		const unsigned char *e = bb + 8 * i;
		uint64_t start = e[0] | e[1] << 8 | e[2] << 16 | (uint32_t)e[3] << 24;
		unsigned bsz = e[4] | e[5] << 8, id = e[6] | e[7] << 8;
		if (id == 0xffff && count < 0xffff) {
			mg->outside++; /* drcov's id for code in no module */
			continue;
		}
		if (id >= count)
			BAD("block %llu: module id %u, the table has %llu", (unsigned long long)i, id,
			    (unsigned long long)count);
		struct module *m = ids[id].m;
		if (!bsz)
			continue; /* covers nothing */
		start += ids[id].delta;
		if (start + bsz > m->end - m->base)
			BAD("block %llu: offset 0x%llx size %u runs past the end of module %u",
			    (unsigned long long)i, (unsigned long long)start, bsz, id);
		if (add_span(m, start, start + bsz))
			BAD("out of memory");
	}
	free(ids);
	free(text);
	return 0;
bad:
	free(ids);
	free(text);
	return -1;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Pieces of module m: its spans united, cut at every span start and at
 * 65535 bytes. emit gets each; returns the count. */
static uint64_t pieces(struct module *m, void (*emit)(void *ctx, uint64_t s, uint64_t e),
		       void *ctx)
{
	uint64_t count = 0;
	size_t i = 0;
	while (i < m->n) {
		uint64_t ue = m->sp[i].end;
		size_t j = i + 1;
		for (; j < m->n && m->sp[j].start <= ue; j++)
			if (m->sp[j].end > ue)
				ue = m->sp[j].end;
		/* spans i..j-1 form [sp[i].start, ue); cut at their distinct starts */
		for (size_t k = i; k < j;) {
			uint64_t s = m->sp[k].start;
			size_t n = k + 1;
			while (n < j && m->sp[n].start == s)
				n++;
			uint64_t e = n < j ? m->sp[n].start : ue;
			for (; s < e; s += PTCOV_BLOCK_MAX) {
				uint64_t pe = e - s > PTCOV_BLOCK_MAX ? s + PTCOV_BLOCK_MAX : e;
				if (emit)
					emit(ctx, s, pe);
				count++;
			}
			k = n;
		}
		i = j;
	}
	return count;
}

struct emitter {
	struct atomic_file *af;
	unsigned id;
};

static void emit_block(void *ctx, uint64_t s, uint64_t e)
{
	struct emitter *em = ctx;
	unsigned char b[8];
	uint64_t sz = e - s;
	b[0] = (unsigned char)s;
	b[1] = (unsigned char)(s >> 8);
	b[2] = (unsigned char)(s >> 16);
	b[3] = (unsigned char)(s >> 24);
	b[4] = (unsigned char)sz;
	b[5] = (unsigned char)(sz >> 8);
	b[6] = (unsigned char)em->id;
	b[7] = (unsigned char)(em->id >> 8);
	atomic_write(em->af, b, 8);
}

int cov_merge(const char *cmd, const char *const *files, unsigned n, const char *out)
{
	struct merged mg = { 0 };
	int rc = input_each(cmd, files, n, read_drcov, &mg);
	if (!rc && mg.outside)
		fprintf(stderr, "%s: %llu blocks in no module (module id 65535, code outside "
				"every module) left out\n", cmd, (unsigned long long)mg.outside);
	uint64_t nbb = 0;
	for (unsigned k = 0; k < mg.n && !rc; k++) {
		qsort(mg.m[k].sp, mg.m[k].n, sizeof(*mg.m[k].sp), by_start);
		nbb += pieces(&mg.m[k], NULL, NULL);
	}
	struct atomic_file af;
	if (!rc && atomic_open(&af, cmd, out))
		rc = 2;
	if (!rc) {
		fprintf(af.f, "DRCOV VERSION: 2\nDRCOV FLAVOR: efipt\n"
			      "Module Table: version 2, count %u\nColumns: id, base, end, entry, path\n",
			mg.n);
		for (unsigned k = 0; k < mg.n; k++) {
			static char safe[8192];
			struct strbuf sb;
			sb_init(&sb, safe, sizeof(safe));
			ptcov_drcov_path(&sb, mg.m[k].path);
			fprintf(af.f, "%u, 0x%016llx, 0x%016llx, 0x%016llx, %s\n", k,
				(unsigned long long)mg.m[k].base, (unsigned long long)mg.m[k].end,
				(unsigned long long)mg.m[k].entry, safe);
		}
		fprintf(af.f, "BB Table: %llu bbs\n", (unsigned long long)nbb);
		for (unsigned k = 0; k < mg.n; k++) {
			struct emitter em = { &af, k };
			pieces(&mg.m[k], emit_block, &em);
		}
		if (atomic_commit(&af, cmd))
			rc = 2;
	}
	for (unsigned k = 0; k < mg.n; k++) {
		free(mg.m[k].path);
		free(mg.m[k].sp);
	}
	free(mg.m);
	return rc;
}
