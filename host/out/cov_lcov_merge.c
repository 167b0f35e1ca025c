/*
 * efipt coverage --merge for lcov tracefiles: counts add as `lcov -a` adds
 * them (see cov_lcov.h). Records are gathered per source file, sorted by
 * their key and summed; the totals (FNF, FNH, BRF, BRH, MCF, MCH, LF, LH)
 * are counted again from the merged records. The format is geninfo(1)'s,
 * lcov 1.x and 2.x records alike: VER, FNL/FNA (function leaders and their
 * aliases), FN with an end line, BRDA with e/f/U flags and a branch that
 * is any text, MCDC. The output uses the records both read (FN, FNDA),
 * so that genhtml 1.x and 2.x take it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cov/cov_lcov.h"
#include "host/util/file_io.h"
#include "host/util/grow.h"

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

/* BRDA:LINE,[e][f][U]BLOCK,BRANCH,TAKEN and MCDC:LINE,[U]SIZE,SENSE,
 * TAKEN,INDEX,EXPRESSION: the key is everything but TAKEN. */
struct mbr {
	long line;
	char *key;		/* BRDA: "BLOCK,BRANCH"; MCDC: "SIZE,SENSE" */
	char *tail;		/* MCDC: "INDEX,EXPRESSION"; BRDA: NULL */
	uint64_t taken;
	bool none;		/* BRDA '-': the branch's block never ran */
};

/* FNL:INDEX,START[,END] of the file being read: its aliases (FNA) name it */
struct mleader {
	uint64_t index;
	long line;
};

struct msf {
	char *path;
	char *ver;		/* VER (NULL: none) */
	struct mfn *fn;
	size_t nfn, fn_cap;
	struct mline *da;
	size_t nda, da_cap;
	struct mbr *br, *mc;
	size_t nbr, br_cap, nmc, mc_cap;
};

struct mall {
	struct msf *sf;
	size_t n, cap;
	size_t seq;
	struct mleader *lead;	/* the FNL records of the section being read */
	size_t nlead, lead_cap;
	unsigned file;		/* the input being read (0, 1, ...) */
	size_t line;		/* its line */
	/* counts past 2^64 - 1: kept there, and said where (the first) */
	uint64_t clipped;
	unsigned clip_file;	/* UINT_MAX: in the merge */
	size_t clip_line;
	char clip_what[200];
};

/* A count that would pass 2^64 - 1 stays there; the first is said, with
 * where it was (an input's line, or the merged record). */
static void clip(struct mall *m, bool in_input, const char *what)
{
	if (!m->clipped++) {
		m->clip_file = in_input ? m->file : UINT_MAX;
		m->clip_line = m->line;
		snprintf(m->clip_what, sizeof(m->clip_what), "%s", what);
	}
}

static uint64_t add_sat(struct mall *m, uint64_t a, uint64_t b, const char *path,
			const char *rec, long line)
{
	if (a > UINT64_MAX - b) {
		char what[sizeof(m->clip_what)];
		snprintf(what, sizeof(what), "SF %.80s: %s %ld: the counts add up past 2^64 - 1, "
			 "written as 18446744073709551615", path, rec, line);
		clip(m, false, what);
		return UINT64_MAX;
	}
	return a + b;
}

/* A decimal number that ends at a comma or the end: its value (past
 * 2^64 - 1: that, said by clip()), the position after it. -1 when it is
 * not one. */
static int number(struct mall *m, const char *s, const char **after, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *e;
	unsigned long long x = strtoull(s, &e, 10);
	if (*e && *e != ',')
		return -1;
	if (errno == ERANGE) {
		clip(m, true, "a count above 2^64 - 1, taken as 18446744073709551615");
		x = UINT64_MAX;
	}
	*v = x;
	*after = e;
	return 0;
}

/* A line number: 1..LONG_MAX, then a comma or the end. */
static int line_no(struct mall *m, const char *s, const char **after, long *line)
{
	uint64_t v;
	if (number(m, s, after, &v) || !v || v > LONG_MAX)
		return -1;
	*line = (long)v;
	return 0;
}

static struct msf *sf_for(struct mall *m, const char *path)
{
	for (size_t i = m->n; i-- > 0;)
		if (!strcmp(m->sf[i].path, path))
			return &m->sf[i];
	if (!grow_array((void **)&m->sf, &m->cap, m->n, sizeof(*m->sf), 64))
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
	if (!grow_array((void **)&f->fn, &f->fn_cap, f->nfn, sizeof(*f->fn), 64))
		return NULL;
	char *s = strdup(name);
	if (!s)
		return NULL;
	f->fn[f->nfn] = (struct mfn){ s, line, count, m->seq++ };
	return &f->fn[f->nfn++];
}

static bool br_add(struct mbr **a, size_t *n, size_t *cap, long line, const char *key,
		   size_t keylen, const char *tail, uint64_t taken, bool none)
{
	if (!grow_array((void **)a, cap, *n, sizeof(**a), 64))
		return false;
	char *k = strndup(key, keylen), *t = tail ? strdup(tail) : NULL;
	if (!k || (tail && !t)) {
		free(k);
		free(t);
		return false;
	}
	(*a)[(*n)++] = (struct mbr){ line, k, t, taken, none };
	return true;
}

/* BRDA's block: optional e, f, U flags, then digits. */
static bool block_ok(const char *s, const char *end)
{
	while (s < end && (*s == 'e' || *s == 'f' || *s == 'U'))
		s++;
	if (s == end)
		return false;
	for (; s < end; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool is(const char *tag, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(tag, *set))
			return true;
	return false;
}

/* One record (a line without its newline) into m; *cur is the SF section
 * open. 0, or -1 with the reason in err. */
static int record(struct mall *m, struct msf **cur, char *ln, char *err, size_t errlen)
{
	static const char *const known[] = { "VER", "FN", "FNL", "FNA", "FNDA", "DA", "BRDA",
					     "MCDC", "FNF", "FNH", "LF", "LH", "BRF", "BRH",
					     "MCF", "MCH", NULL };
	char *colon = strchr(ln, ':');
	const char *v = colon ? colon + 1 : "";
	const char *p;
	uint64_t a, b;
	long line;
	if (!strcmp(ln, "end_of_record")) {
		if (!*cur) {
			snprintf(err, errlen, "end_of_record without its SF");
			return -1;
		}
		*cur = NULL;
		m->nlead = 0;
		return 0;
	}
	if (ln[0] == '#')
		return 0; /* a comment (lcov --comment) */
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
		m->nlead = 0;
		return 0;
	}
	struct msf *f = *cur;
	if (!is(ln, known)) {
		snprintf(err, errlen, "'%.40s' is no lcov tracefile record", ln);
		return -1;
	}
	if (!f) {
		snprintf(err, errlen, "%s outside an SF ... end_of_record section", ln);
		return -1;
	}
	if (!strcmp(ln, "VER")) {
		/* lcov merges a file only with the same version of it */
		if (f->ver && strcmp(f->ver, v)) {
			snprintf(err, errlen, "SF %.200s: VER %.60s, where another tracefile has "
				 "VER %.60s: two versions of the source cannot be added", f->path, v,
				 f->ver);
			return -1;
		}
		if (!f->ver && !(f->ver = strdup(v)))
			goto oom;
	} else if (!strcmp(ln, "FN")) {
		/* FN:START,[END,]NAME */
		long end;
		const char *q;
		if (line_no(m, v, &p, &line) || *p != ',' || !p[1])
			goto bad;
		if (!line_no(m, p + 1, &q, &end) && *q == ',' && q[1])
			p = q; /* an end line */
		if (!fn_add(m, f, p + 1, line, 0))
			goto oom;
	} else if (!strcmp(ln, "FNL")) {
		/* FNL:INDEX,START[,END]: a function; FNA names it */
		long end;
		if (number(m, v, &p, &a) || *p != ',' || line_no(m, p + 1, &p, &line) ||
		    (*p && (*p != ',' || line_no(m, p + 1, &p, &end) || *p)))
			goto bad;
		if (!grow_array((void **)&m->lead, &m->lead_cap, m->nlead, sizeof(*m->lead), 64))
			goto oom;
		m->lead[m->nlead++] = (struct mleader){ a, line };
	} else if (!strcmp(ln, "FNA")) {
		/* FNA:INDEX,COUNT,NAME: an alias of the function FNL INDEX */
		size_t k = 0;
		if (number(m, v, &p, &a) || *p != ',' || number(m, p + 1, &p, &b) || *p != ',' ||
		    !p[1])
			goto bad;
		while (k < m->nlead && m->lead[k].index != a)
			k++;
		if (k == m->nlead) {
			snprintf(err, errlen, "FNA:%.60s names function %" PRIu64 ", which no FNL "
				 "before it gives", v, a);
			return -1;
		}
		if (!fn_add(m, f, p + 1, m->lead[k].line, b))
			goto oom;
	} else if (!strcmp(ln, "FNDA")) {
		if (number(m, v, &p, &a) || *p != ',' || !p[1])
			goto bad;
		if (!fn_add(m, f, p + 1, -1, a))
			goto oom;
	} else if (!strcmp(ln, "DA")) {
		/* DA:LINE,COUNT[,CHECKSUM] */
		if (line_no(m, v, &p, &line) || *p != ',' || number(m, p + 1, &p, &b))
			goto bad;
		if (!grow_array((void **)&f->da, &f->da_cap, f->nda, sizeof(*f->da), 64))
			goto oom;
		f->da[f->nda++] = (struct mline){ line, b };
	} else if (!strcmp(ln, "BRDA")) {
		/* BRDA:LINE,[e][f][U]BLOCK,BRANCH,TAKEN: BRANCH may be any
		 * text, commas included; TAKEN follows the last comma */
		const char *last = strrchr(v, ',');
		if (line_no(m, v, &p, &line) || *p != ',' || !last || last <= p + 1)
			goto bad;
		const char *key = p + 1, *comma = strchr(key, ',');
		if (!comma || comma >= last || !block_ok(key, comma) || comma + 1 == last)
			goto bad;
		uint64_t t = 0;
		bool none = !strcmp(last + 1, "-");
		if (!none && (number(m, last + 1, &p, &t) || *p))
			goto bad;
		if (!br_add(&f->br, &f->nbr, &f->br_cap, line, key, (size_t)(last - key), NULL, t,
			    none))
			goto oom;
	} else if (!strcmp(ln, "MCDC")) {
		/* MCDC:LINE,[U]SIZE,SENSE,TAKEN,INDEX,EXPRESSION */
		const char *key, *c1, *c2, *c3;
		uint64_t t;
		if (line_no(m, v, &p, &line) || *p != ',')
			goto bad;
		key = p + 1;
		if (!(c1 = strchr(key, ',')) || !block_ok(key, c1) || !(c2 = strchr(c1 + 1, ',')) ||
		    (c2 - c1 != 2 || (c1[1] != 't' && c1[1] != 'f')) ||
		    number(m, c2 + 1, &c3, &t) || *c3 != ',' || !strchr(c3 + 1, ','))
			goto bad;
		if (!br_add(&f->mc, &f->nmc, &f->mc_cap, line, key, (size_t)(c2 - key), c3 + 1, t,
			    false))
			goto oom;
	} else if (number(m, v, &p, &a) || *p) {
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
	char why[512];
	m->nlead = 0;
	for (size_t pos = 0; pos < size;) {
		const unsigned char *nl = memchr(d + pos, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - (d + pos)) : size - pos;
		m->line = ++no;
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
	m->file++;
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
	int c = strcmp(x->key, y->key);
	if (c || (!x->tail && !y->tail))
		return c;
	return strcmp(x->tail ? x->tail : "", y->tail ? y->tail : "");
}

/* Branches (or MC/DC conditions) with the same key summed: '-' + '-' is
 * '-', '-' + n is n. */
static size_t br_combine(struct mall *m, const char *path, const char *rec, struct mbr *a,
			 size_t n)
{
	size_t u = 0;
	if (n)
		qsort(a, n, sizeof(*a), br_by_key);
	for (size_t i = 0; i < n; i++) {
		if (u && !br_by_key(&a[u - 1], &a[i])) {
			struct mbr *k = &a[u - 1];
			if (k->none)
				k->taken = a[i].taken;
			else if (!a[i].none)
				k->taken = add_sat(m, k->taken, a[i].taken, path, rec, k->line);
			k->none = k->none && a[i].none;
			free(a[i].key);
			free(a[i].tail);
		} else {
			a[u++] = a[i];
		}
	}
	return u;
}

/* Sum records with the same key: functions by name (the first FN line),
 * lines, branches, MC/DC conditions. */
static void combine(struct mall *m, struct msf *f)
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
			k->count = add_sat(m, k->count, f->fn[i].count, f->path, "FNDA of the "
					   "function at line", k->line);
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
			f->da[u - 1].count = add_sat(m, f->da[u - 1].count, f->da[i].count, f->path,
						     "DA line", f->da[i].line);
		else
			f->da[u++] = f->da[i];
	}
	f->nda = u;
	f->nbr = br_combine(m, f->path, "BRDA line", f->br, f->nbr);
	f->nmc = br_combine(m, f->path, "MCDC line", f->mc, f->nmc);
}

/* Paths and names as records hold them: one line each, no control bytes. */
static void write_sf(FILE *o, const struct msf *f)
{
	size_t fnh = 0, nfn = 0, brh = 0, lh = 0, mch = 0;
	fprintf(o, "TN:\nSF:%s\n", term_safe(f->path));
	if (f->ver)
		fprintf(o, "VER:%s\n", term_safe(f->ver));
	for (size_t i = 0; i < f->nfn; i++)
		if (f->fn[i].line >= 0) {
			fprintf(o, "FN:%ld,%s\n", f->fn[i].line, term_safe(f->fn[i].name));
			nfn++;
		}
	for (size_t i = 0; i < f->nfn; i++) {
		fprintf(o, "FNDA:%" PRIu64 ",%s\n", f->fn[i].count, term_safe(f->fn[i].name));
		fnh += f->fn[i].line >= 0 && f->fn[i].count > 0;
	}
	fprintf(o, "FNF:%zu\nFNH:%zu\n", nfn, fnh);
	for (size_t i = 0; i < f->nbr; i++) {
		const struct mbr *b = &f->br[i];
		if (b->none)
			fprintf(o, "BRDA:%ld,%s,-\n", b->line, term_safe(b->key));
		else
			fprintf(o, "BRDA:%ld,%s,%" PRIu64 "\n", b->line, term_safe(b->key), b->taken);
		brh += !b->none && b->taken > 0;
	}
	if (f->nbr)
		fprintf(o, "BRF:%zu\nBRH:%zu\n", f->nbr, brh);
	for (size_t i = 0; i < f->nmc; i++) {
		const struct mbr *b = &f->mc[i];
		fprintf(o, "MCDC:%ld,%s,%" PRIu64 ",%s\n", b->line, term_safe(b->key), b->taken,
			term_safe(b->tail));
		mch += b->taken > 0;
	}
	if (f->nmc)
		fprintf(o, "MCF:%zu\nMCH:%zu\n", f->nmc, mch);
	for (size_t i = 0; i < f->nda; i++) {
		fprintf(o, "DA:%ld,%" PRIu64 "\n", f->da[i].line, f->da[i].count);
		lh += f->da[i].count > 0;
	}
	fprintf(o, "LF:%zu\nLH:%zu\nend_of_record\n", f->nda, lh);
}

static void free_br(struct mbr *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].key);
		free(a[i].tail);
	}
	free(a);
}

int cov_lcov_merge(const char *cmd, const char *const *files, unsigned n, const char *out)
{
	struct mall m = { 0 };
	int rc = input_each(cmd, files, n, read_info, &m);
	struct atomic_file af;
	if (!rc)
		for (size_t k = 0; k < m.n; k++)
			combine(&m, &m.sf[k]);
	if (!rc && m.clipped && m.clip_file < n)
		fprintf(stderr, "%s: %s: line %zu: %s%s\n", cmd, term_safe(files[m.clip_file]),
			m.clip_line, m.clip_what, m.clipped > 1 ? " (and other counts)" : "");
	else if (!rc && m.clipped)
		fprintf(stderr, "%s: %s%s\n", cmd, term_safe(m.clip_what),
			m.clipped > 1 ? " (and other counts)" : "");
	if (!rc && atomic_open(&af, cmd, out))
		rc = 2;
	if (!rc) {
		for (size_t k = 0; k < m.n; k++)
			write_sf(af.f, &m.sf[k]);
		if (atomic_commit(&af, cmd))
			rc = 2;
	}
	for (size_t k = 0; k < m.n; k++) {
		for (size_t i = 0; i < m.sf[k].nfn; i++)
			free(m.sf[k].fn[i].name);
		free(m.sf[k].fn);
		free(m.sf[k].da);
		free_br(m.sf[k].br, m.sf[k].nbr);
		free_br(m.sf[k].mc, m.sf[k].nmc);
		free(m.sf[k].path);
		free(m.sf[k].ver);
	}
	free(m.sf);
	free(m.lead);
	return rc;
}
