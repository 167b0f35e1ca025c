/*
 * debugport.jsonl into lines (debuglog.h). A record holds the bytes one
 * instruction wrote; a line begins at the first byte after a '\n' and takes
 * that byte's record's instruction as its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "host/input/debuglog.h"
#include "host/util/grow.h"

/* One CPU's line being read. */
struct partial {
	char text[DBGLOG_TEXT];
	size_t n;
	bool open;
	int64_t insn;
	uint64_t ip;
};

static int end_line(struct dbglog *dl, struct partial *p, unsigned cpu)
{
	while (p->n && p->text[p->n - 1] == '\r')
		p->n--;
	if (!grow_array((void **)&dl->v, &dl->cap, dl->n, sizeof(*dl->v), 256))
		return -1;
	char *t = malloc(p->n + 1);
	if (!t)
		return -1;
	memcpy(t, p->text, p->n);
	t[p->n] = 0;
	dl->v[dl->n++] = (struct dbglog_line){ cpu, p->insn, p->ip, t, p->n };
	p->n = 0;
	p->open = false;
	return 0;
}

bool dbglog_hex_address(const char *s, uint64_t *v)
{
	if (strncmp(s, "0x", 2))
		return false;
	size_t n = strspn(s + 2, "0123456789abcdefABCDEF");
	if (n < 1 || n > 16 || s[2 + n])
		return false;
	*v = strtoull(s + 2, NULL, 16);
	return true;
}

/* The bytes of one record (UTF-8 of characters below 256): 0, -1 out of
 * memory, -2 a character above 0xff. */
static int add_bytes(struct dbglog *dl, struct partial *p, unsigned cpu, int64_t insn,
		     uint64_t ip, const char *utf8, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned c = (unsigned char)utf8[i++];
		if (c >= 0xc0 && c < 0xc4 && i < len) /* U+0080..U+00FF */
			c = (c & 0x1f) << 6 | ((unsigned char)utf8[i++] & 0x3f);
		else if (c >= 0x80)
			return -2;
		if (!p->open) {
			p->open = true;
			p->insn = insn;
			p->ip = ip;
		}
		if (c == '\n') {
			if (end_line(dl, p, cpu))
				return -1;
			continue;
		}
		if (p->n + 1 < sizeof(p->text))
			p->text[p->n++] = (char)c;
	}
	return 0;
}

int dbglog_read(struct dbglog *dl, const char *dir, long cpu, const char *cmd)
{
	memset(dl, 0, sizeof(*dl));
	char path[4200];
	snprintf(path, sizeof(path), "%s/debugport.jsonl", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "efipt %s: %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	int rc = dbglog_read_file(dl, f, path, cpu, cmd);
	fclose(f);
	return rc;
}

int dbglog_read_file(struct dbglog *dl, FILE *f, const char *path, long cpu, const char *cmd)
{
	memset(dl, 0, sizeof(*dl));
	struct partial *p = calloc(DBGLOG_CPUS, sizeof(*p));
	char *line = NULL;
	size_t cap = 0;
	unsigned long no = 0;
	int rc = -1;
	if (!p)
		goto oom;
	while (getline(&line, &cap, f) > 0) {
		no++;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je), *jinsn = NULL;
		json_int_t c = -1;
		const char *ip = NULL, *text = NULL;
		size_t len = 0;
		uint64_t ipv = 0;
		if (!o || json_unpack(o, "{s:I, s:o, s:s, s:s%}", "cpu", &c, "insn", &jinsn, "ip",
				      &ip, "bytes", &text, &len) || c < 0 || c >= DBGLOG_CPUS ||
		    (!json_is_null(jinsn) && !json_is_integer(jinsn)) ||
		    (json_is_integer(jinsn) && json_integer_value(jinsn) < 0) ||
		    !dbglog_hex_address(ip, &ipv)) {
			fprintf(stderr, "efipt %s: %s: line %lu: not a debug port record (cpu, insn, "
				"ip, bytes)\n", cmd, path, no);
			json_decref(o);
			goto out;
		}
		int64_t insn = json_is_integer(jinsn) ? (int64_t)json_integer_value(jinsn) : -1;
		int bad = cpu >= 0 && c != cpu ? 0 : add_bytes(dl, &p[c], (unsigned)c, insn, ipv,
							       text, len);
		json_decref(o);
		if (bad == -1)
			goto oom;
		if (bad) {
			fprintf(stderr, "efipt %s: %s: line %lu: bytes above 0xff in \"bytes\"\n", cmd,
				path, no);
			goto out;
		}
		dl->records++;
	}
	if (ferror(f)) {
		fprintf(stderr, "efipt %s: %s: read error\n", cmd, path);
		goto out;
	}
	for (unsigned k = 0; k < DBGLOG_CPUS; k++)
		if (p[k].open && end_line(dl, &p[k], k))
			goto oom;
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "efipt %s: %s: out of memory\n", cmd, path);
out:
	free(line);
	free(p);
	if (rc)
		dbglog_free(dl);
	return rc;
}

void dbglog_free(struct dbglog *dl)
{
	for (size_t i = 0; i < dl->n; i++)
		free(dl->v[i].text);
	free(dl->v);
	memset(dl, 0, sizeof(*dl));
}

static int by_insn(const void *a, const void *b)
{
	const struct dbglog_line *x = *(const struct dbglog_line *const *)a;
	const struct dbglog_line *y = *(const struct dbglog_line *const *)b;
	if (x->insn != y->insn)
		return x->insn < y->insn ? -1 : 1;
	return x < y ? -1 : x > y; /* stable: in the order they ended */
}

const struct dbglog_line **dbglog_traced(const struct dbglog *dl, unsigned cpu, size_t *n,
					 bool *oom)
{
	*n = 0;
	size_t k = 0;
	for (size_t i = 0; i < dl->n; i++)
		k += dl->v[i].cpu == cpu && dl->v[i].insn >= 0;
	if (!k)
		return NULL;
	const struct dbglog_line **a = malloc(k * sizeof(*a));
	if (!a) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < dl->n; i++)
		if (dl->v[i].cpu == cpu && dl->v[i].insn >= 0)
			a[(*n)++] = &dl->v[i];
	qsort(a, *n, sizeof(*a), by_insn);
	return a;
}
