/* interrupts.jsonl into records and names; see irqlog.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "host/input/debuglog.h"
#include "host/input/irqlog.h"
#include "host/util/file_io.h"
#include "host/util/grow.h"

#define IRQLOG_CPUS 4096	/* more than any trace's CPU number */
#define IRQLOG_MAX (256u << 20)	/* a larger file is no run's */

/* One record (a line without its '\n'): 0, or -1 not one. */
static int parse_line(const char *s, size_t n, struct irqlog_rec *r)
{
	json_error_t je;
	json_t *o = json_loadb(s, n, 0, &je), *jv = NULL, *jt = NULL;
	json_int_t cpu = -1, insn = -1;
	const char *ip = NULL, *h = NULL;
	int rc = -1;
	if (!o || json_unpack(o, "{s:I, s:I, s:s, s:s, s:o, s?o}", "cpu", &cpu, "insn", &insn, "ip",
			      &ip, "handler", &h, "vector", &jv, "timer", &jt))
		goto out;
	if (cpu < 0 || cpu >= IRQLOG_CPUS || insn < 0 || !dbglog_hex_address(ip, &r->ip) ||
	    !dbglog_hex_address(h, &r->handler))
		goto out;
	if (json_is_null(jv)) {
		r->vector = -1;
	} else if (json_is_integer(jv) && json_integer_value(jv) >= 0 &&
		   json_integer_value(jv) <= 255) {
		r->vector = (int)json_integer_value(jv);
	} else {
		goto out;
	}
	if (jt && !json_is_boolean(jt))
		goto out;
	r->timer = jt && json_is_true(jt) && r->vector >= 0;
	r->cpu = (unsigned)cpu;
	r->insn = (uint64_t)insn;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

static int by_place(const void *a, const void *b)
{
	const struct irqlog_rec *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

int irqlog_parse(struct irqlog *l, const char *text, size_t len, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	unsigned long no = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		no++;
		struct irqlog_rec r;
		if (parse_line(text + at, n, &r)) {
			snprintf(err, errlen, "line %lu: not an interrupt record (cpu, insn, ip, "
				 "handler, vector 0-255 or null, timer)", no);
			irqlog_free(l);
			return -1;
		}
		if (!grow_array((void **)&l->v, &l->cap, l->n, sizeof(*l->v), 256)) {
			snprintf(err, errlen, "out of memory");
			irqlog_free(l);
			return -1;
		}
		l->v[l->n++] = r;
		at += n + (nl != NULL);
	}
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_place);
	return 0;
}

int irqlog_read(struct irqlog *l, const char *dir, const char *cmd)
{
	memset(l, 0, sizeof(*l));
	char path[4200], err[256];
	snprintf(path, sizeof(path), "%s/interrupts.jsonl", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "efipt %s: %s: %s\n", cmd, term_safe(path), strerror(errno));
		return -1;
	}
	char *text = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;
	for (;;) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 1 << 16;
			char *t = c <= IRQLOG_MAX ? realloc(text, c) : NULL;
			if (!t) {
				fprintf(stderr, "efipt %s: %s: %s\n", cmd, term_safe(path),
					c > IRQLOG_MAX ? "larger than 256 MiB: not a run's"
						       : "out of memory");
				goto out;
			}
			text = t;
			cap = c;
		}
		size_t k = fread(text + n, 1, cap - n, f);
		n += k;
		if (!k)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "efipt %s: %s: read error\n", cmd, term_safe(path));
		goto out;
	}
	if (irqlog_parse(l, text, n, err, sizeof(err))) {
		fprintf(stderr, "efipt %s: %s: %s\n", cmd, term_safe(path), err);
		goto out;
	}
	rc = 0;
out:
	free(text);
	fclose(f);
	return rc;
}

void irqlog_free(struct irqlog *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct irqlog_rec *irqlog_find(const struct irqlog *l, unsigned cpu, uint64_t insn)
{
	size_t lo = 0, hi = l->n;
	struct irqlog_rec key = { .cpu = cpu, .insn = insn };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = by_place(&l->v[mid], &key);
		if (!c)
			return &l->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The exceptions' mnemonics and names (SDM Vol. 3, Table 6-1). */
static const char *const exc[32] = {
	"#DE divide error", "#DB debug exception", "NMI", "#BP breakpoint",
	"#OF overflow", "#BR BOUND range exceeded", "#UD invalid opcode",
	"#NM device not available", "#DF double fault", "coprocessor segment overrun",
	"#TS invalid TSS", "#NP segment not present", "#SS stack-segment fault",
	"#GP general protection", "#PF page fault", NULL, "#MF x87 floating-point error",
	"#AC alignment check", "#MC machine check", "#XM SIMD floating-point exception",
	"#VE virtualization exception", "#CP control protection exception",
};

const char *irqlog_name(const struct irqlog_rec *r)
{
	static char names[2][256][64];
	if (!r || r->vector < 0 || r->vector > 255)
		return NULL;
	char *s = names[r->timer][r->vector];
	if (!s[0]) {
		if (r->timer)
			snprintf(s, 64, "timer interrupt, vector 0x%02x", r->vector);
		else if (r->vector < 32 && exc[r->vector])
			snprintf(s, 64, "%s, vector 0x%02x", exc[r->vector], r->vector);
		else if (r->vector < 32)
			snprintf(s, 64, "reserved exception vector 0x%02x", r->vector);
		else
			snprintf(s, 64, "interrupt vector 0x%02x", r->vector);
	}
	return s;
}
