/*
 * efipt coverage --merge for lcov tracefiles: counts add as `lcov -a` adds
 * them (see cov_lcov.h). Records are gathered per source file, sorted by
 * their key and summed; the totals (FNF, FNH, BRF, BRH, LF, LH) are
 * counted again from the merged records. The format is geninfo(1)'s.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/cov_lcov.h"
#include "decode/file_io.h"

#define TAKEN_NONE UINT64_MAX	/* BRDA '-': the branch's block never ran */

struct mfn {
	char *name;
	long line;		/* -1: only FNDA named it */
	uint64_t count;
	size_t seq;		/* order seen: the first FN line wins */
};

struct mline {
	long line;
	uint64_t count;
};

struct mbr {
	long line, block, branch;
	uint64_t taken;		/* or TAKEN_NONE */
};

struct msf {
	char *path;
	struct mfn *fn;
	size_t nfn, fn_cap;
	struct mline *da;
	size_t nda, da_cap;
	struct mbr *br;
	size_t nbr, br_cap;
};

struct mall {
	struct msf *sf;
	size_t n, cap;
	size_t seq;
};

static bool more(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - 1 - b ? UINT64_MAX - 1 : a + b;
}

/* A decimal number that ends at *end or a comma: its value, the position
 * after it. -1 when it is not one. */
static int number(const char *s, const char **after, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *e;
	unsigned long long x = strtoull(s, &e, 10);
	if (errno || (*e && *e != ','))
		return -1;
	*v = x;
	*after = e;
	return 0;
}

static struct msf *sf_for(struct mall *m, const char *path)
{
	for (size_t i = m->n; i-- > 0;)
		if (!strcmp(m->sf[i].path, path))
			return &m->sf[i];
	if (!more((void **)&m->sf, &m->cap, m->n, sizeof(*m->sf)))
		return NULL;
	struct msf *f = &m->sf[m->n];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return NULL;
	m->n++;
	return f;
}

static struct mfn *fn_add(struct mall *m, struct msf *f, const char *name, long line,
			  uint64_t count)
{
	if (!more((void **)&f->fn, &f->fn_cap, f->nfn, sizeof(*f->fn)))
		return NULL;
	char *s = strdup(name);
	if (!s)
		return NULL;
	f->fn[f->nfn] = (struct mfn){ s, line, count, m->seq++ };
	return &f->fn[f->nfn++];
}

/* One record (a line without its newline) into m; *cur is the SF section
 * open. 0, or -1 with the reason in err. */
static int record(struct mall *m, struct msf **cur, char *ln, char *err, size_t errlen)
{
	char *colon = strchr(ln, ':');
	const char *v = colon ? colon + 1 : "";
	const char *p;
	uint64_t a, b, c;
	if (!strcmp(ln, "end_of_record")) {
		if (!*cur) {
			snprintf(err, errlen, "end_of_record without its SF");
			return -1;
		}
		*cur = NULL;
		return 0;
	}
	if (!colon) {
		snprintf(err, errlen, "'%.40s' is no tracefile record (TAG:VALUE)", ln);
		return -1;
	}
	*colon = 0;
	if (!strcmp(ln, "TN"))
		return 0;
	if (!strcmp(ln, "SF")) {
		if (*cur) {
			snprintf(err, errlen, "SF before the end_of_record of the previous one");
			return -1;
		}
		if (!*v) {
			snprintf(err, errlen, "SF without a path");
			return -1;
		}
		if (!(*cur = sf_for(m, v))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	struct msf *f = *cur;
	bool known = !strcmp(ln, "FN") || !strcmp(ln, "FNDA") || !strcmp(ln, "DA") ||
		     !strcmp(ln, "BRDA") || !strcmp(ln, "FNF") || !strcmp(ln, "FNH") ||
		     !strcmp(ln, "LF") || !strcmp(ln, "LH") || !strcmp(ln, "BRF") ||
		     !strcmp(ln, "BRH");
	if (!known) {
		snprintf(err, errlen, "'%.40s' is no lcov tracefile record", ln);
		return -1;
	}
	if (!f) {
		snprintf(err, errlen, "%s outside an SF ... end_of_record section", ln);
		return -1;
	}
	if (!strcmp(ln, "FN")) {
		if (number(v, &p, &a) || *p != ',' || !p[1] || a > LONG_MAX)
			goto bad;
		if (!fn_add(m, f, p + 1, (long)a, 0))
			goto oom;
	} else if (!strcmp(ln, "FNDA")) {
		if (number(v, &p, &a) || *p != ',' || !p[1])
			goto bad;
		if (!fn_add(m, f, p + 1, -1, a))
			goto oom;
	} else if (!strcmp(ln, "DA")) {
		/* DA:LINE,COUNT[,CHECKSUM] */
		if (number(v, &p, &a) || *p != ',' || number(p + 1, &p, &b) || a > LONG_MAX)
			goto bad;
		if (!more((void **)&f->da, &f->da_cap, f->nda, sizeof(*f->da)))
			goto oom;
		f->da[f->nda++] = (struct mline){ (long)a, b };
	} else if (!strcmp(ln, "BRDA")) {
		uint64_t t;
		if (number(v, &p, &a) || *p != ',' || number(p + 1, &p, &b) || *p != ',' ||
		    number(p + 1, &p, &c) || *p != ',' || a > LONG_MAX || b > LONG_MAX ||
		    c > LONG_MAX)
			goto bad;
		if (!strcmp(p + 1, "-"))
			t = TAKEN_NONE;
		else if (number(p + 1, &p, &t) || *p || t == TAKEN_NONE)
			goto bad;
		if (!more((void **)&f->br, &f->br_cap, f->nbr, sizeof(*f->br)))
			goto oom;
		f->br[f->nbr++] = (struct mbr){ (long)a, (long)b, (long)c, t };
	} else if (number(v, &p, &a) || *p) {
		goto bad; /* a total: counted again when written */
	}
	return 0;
bad:
	snprintf(err, errlen, "%s:%.60s is malformed", ln, v);
	return -1;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Read tracefile d[0..size). 0, or -1 with "LINE: reason" in err. */
static int read_info(void *mall, const unsigned char *d, size_t size, char *err,
		     size_t errlen)
{
	struct mall *m = mall;
	struct msf *cur = NULL;
	size_t no = 0, nsf = 0;
	char why[256];
	for (size_t pos = 0; pos < size;) {
		const unsigned char *nl = memchr(d + pos, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - (d + pos)) : size - pos;
		no++;
		if (n && d[pos + n - 1] == '\r')
			n--;
		char *ln = malloc(n + 1);
		if (!ln) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(ln, d + pos, n);
		ln[n] = 0;
		pos += (nl ? (size_t)(nl - (d + pos)) + 1 : size - pos);
		if (memchr(ln, 0, n)) {
			free(ln);
			snprintf(err, errlen, "line %zu: a NUL byte: not an lcov tracefile", no);
			return -1;
		}
		nsf += !strncmp(ln, "SF:", 3);
		int r = n ? record(m, &cur, ln, why, sizeof(why)) : 0;
		free(ln);
		if (r) {
			snprintf(err, errlen, "line %zu: %s", no, why);
			return -1;
		}
	}
	if (cur) {
		snprintf(err, errlen, "line %zu: the file ends inside an SF section (no end_of_record)",
			 no);
		return -1;
	}
	if (!nsf) {
		snprintf(err, errlen, "not an lcov tracefile: no SF record");
		return -1;
	}
	return 0;
}

static int fn_by_name(const void *a, const void *b)
{
	const struct mfn *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int fn_by_line(const void *a, const void *b)
{
	const struct mfn *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int da_by_line(const void *a, const void *b)
{
	const struct mline *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int br_by_key(const void *a, const void *b)
{
	const struct mbr *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->branch < y->branch ? -1 : x->branch > y->branch;
}

/* Sum records with the same key: functions by name (the first FN line),
 * lines, branches ('-' + '-' is '-', '-' + n is n). */
static void combine(struct msf *f)
{
	/* (qsort of no records: a NULL array, which qsort must not get) */
	size_t u = 0;
	if (f->nfn)
		qsort(f->fn, f->nfn, sizeof(*f->fn), fn_by_name);
	for (size_t i = 0; i < f->nfn; i++) {
		if (u && !strcmp(f->fn[u - 1].name, f->fn[i].name)) {
			struct mfn *k = &f->fn[u - 1];
			if (k->line < 0)
				k->line = f->fn[i].line;
			k->count = add_sat(k->count, f->fn[i].count);
			free(f->fn[i].name);
		} else {
			f->fn[u++] = f->fn[i];
		}
	}
	f->nfn = u;
	if (f->nfn)
		qsort(f->fn, f->nfn, sizeof(*f->fn), fn_by_line);
	u = 0;
	if (f->nda)
		qsort(f->da, f->nda, sizeof(*f->da), da_by_line);
	for (size_t i = 0; i < f->nda; i++) {
		if (u && f->da[u - 1].line == f->da[i].line)
			f->da[u - 1].count = add_sat(f->da[u - 1].count, f->da[i].count);
		else
			f->da[u++] = f->da[i];
	}
	f->nda = u;
	u = 0;
	if (f->nbr)
		qsort(f->br, f->nbr, sizeof(*f->br), br_by_key);
	for (size_t i = 0; i < f->nbr; i++) {
		if (u && !br_by_key(&f->br[u - 1], &f->br[i])) {
			uint64_t *t = &f->br[u - 1].taken, x = f->br[i].taken;
			if (*t == TAKEN_NONE)
				*t = x;
			else if (x != TAKEN_NONE)
				*t = add_sat(*t, x);
		} else {
			f->br[u++] = f->br[i];
		}
	}
	f->nbr = u;
}

static void write_sf(FILE *o, const struct msf *f)
{
	size_t fnh = 0, nfn = 0, brh = 0, lh = 0;
	fprintf(o, "TN:\nSF:%s\n", f->path);
	for (size_t i = 0; i < f->nfn; i++)
		if (f->fn[i].line >= 0) {
			fprintf(o, "FN:%ld,%s\n", f->fn[i].line, f->fn[i].name);
			nfn++;
		}
	for (size_t i = 0; i < f->nfn; i++) {
		fprintf(o, "FNDA:%" PRIu64 ",%s\n", f->fn[i].count, f->fn[i].name);
		fnh += f->fn[i].line >= 0 && f->fn[i].count > 0;
	}
	fprintf(o, "FNF:%zu\nFNH:%zu\n", nfn, fnh);
	for (size_t i = 0; i < f->nbr; i++) {
		const struct mbr *b = &f->br[i];
		if (b->taken == TAKEN_NONE)
			fprintf(o, "BRDA:%ld,%ld,%ld,-\n", b->line, b->block, b->branch);
		else
			fprintf(o, "BRDA:%ld,%ld,%ld,%" PRIu64 "\n", b->line, b->block, b->branch,
				b->taken);
		brh += b->taken != TAKEN_NONE && b->taken > 0;
	}
	if (f->nbr)
		fprintf(o, "BRF:%zu\nBRH:%zu\n", f->nbr, brh);
	for (size_t i = 0; i < f->nda; i++) {
		fprintf(o, "DA:%ld,%" PRIu64 "\n", f->da[i].line, f->da[i].count);
		lh += f->da[i].count > 0;
	}
	fprintf(o, "LF:%zu\nLH:%zu\nend_of_record\n", f->nda, lh);
}

int cov_lcov_merge(const char *cmd, const char *const *files, unsigned n, const char *out)
{
	struct mall m = { 0 };
	int rc = input_each(cmd, files, n, read_info, &m);
	struct atomic_file af;
	if (!rc && atomic_open(&af, cmd, out))
		rc = 2;
	if (!rc) {
		for (size_t k = 0; k < m.n; k++) {
			combine(&m.sf[k]);
			write_sf(af.f, &m.sf[k]);
		}
		if (atomic_commit(&af, cmd))
			rc = 2;
	}
	for (size_t k = 0; k < m.n; k++) {
		for (size_t i = 0; i < m.sf[k].nfn; i++)
			free(m.sf[k].fn[i].name);
		free(m.sf[k].fn);
		free(m.sf[k].da);
		free(m.sf[k].br);
		free(m.sf[k].path);
	}
	free(m.sf);
	return rc;
}
