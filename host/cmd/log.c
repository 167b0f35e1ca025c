/*
 * efipt log RUNDIR: the firmware's DEBUG output (the bytes it wrote to its
 * debug port, debugport.jsonl of an efipt qemu run: qemu-plugin/debugport.h),
 * line by line, each at the instruction that wrote its first byte: that
 * instruction's index in the trace and the function it is in (with
 * --symbols; else image+offset).
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "host/cmd/commands.h"
#include "host/input/session.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

static const char log_usage[] =
	"usage: efipt log RUNDIR [--symbols PATH]... [--cpu N] [--format text|jsonl]\n\n"
	"The firmware's DEBUG output recorded by efipt qemu (the bytes written to\n"
	"the debug port, OVMF's 0x402: QEMU 9.0 or newer; string writes, OVMF's\n"
	"way, QEMU 10.0), one line per output line: the CPU, the index in its\n"
	"trace of the instruction that wrote the line's first byte ('-' where\n"
	"it was not traced), the function it is in (with --symbols; else\n"
	"image+offset), the text.\n\n";

static const char log_tail[] =
	"Exit status: 0 lines printed, 1 no debug output in the run directory or\n"
	"an unreadable debugport.jsonl, 2 on usage errors.\n";

struct log_opts {
	const char *cpu;	/* --cpu N, as given */
	const char *format;	/* --format, as given */
};

static const struct opt_row log_rows[] = {
	{ "cpu", OPT_VALUE, opts_set_str, offsetof(struct log_opts, cpu), "N",
	  "CPU N's output (default: every CPU, its number shown)" },
	{ "format", OPT_VALUE, opts_set_str, offsetof(struct log_opts, format), "F",
	  "text (default), or jsonl: one object per line: cpu,\ninsn (null before tracing), "
	  "ip, function, text" },
};

/* One CPU's partial line. */
struct pending {
	char text[4096];
	size_t n;
	bool open;		/* a line has begun */
	json_int_t insn;	/* of its first byte (-1: not traced) */
	uint64_t ip;
};

#define LOG_CPUS 64

struct log_state {
	struct session *t;
	bool jsonl;
	long cpu;		/* -1: all */
	uint64_t lines;
	struct pending p[LOG_CPUS];
};

/* "image`function", or "image+0xOFF", or the address alone */
static void where(struct log_state *s, uint64_t ip, char *buf, size_t cap)
{
	uint64_t hi;
	bool entry;
	uint32_t fn = symtab_lookup(&s->t->st, ip, &hi, &entry);
	symtab_fn_name(&s->t->st, fn, buf, cap);
	/* "[unknown]", or "image`[unknown]" in an image without symbols */
	size_t n = strlen(buf), u = strlen("[unknown]");
	if (n < u || strcmp(buf + n - u, "[unknown]"))
		return;
	for (unsigned i = 0; i < s->t->images.n; i++) {
		const struct image *m = &s->t->images.v[i];
		if (ip >= m->base && ip - m->base < m->size) {
			snprintf(buf, cap, "%s+0x%" PRIx64, m->name, ip - m->base);
			return;
		}
	}
	snprintf(buf, cap, "0x%" PRIx64, ip);
}

static void emit(struct log_state *s, unsigned cpu)
{
	struct pending *p = &s->p[cpu];
	char fn[512];
	while (p->n && p->text[p->n - 1] == '\r')
		p->n--;
	p->text[p->n] = 0;
	where(s, p->ip, fn, sizeof(fn));
	if (s->jsonl) {
		char ipbuf[24];
		snprintf(ipbuf, sizeof(ipbuf), "0x%" PRIx64, p->ip);
		/* each byte as the character of that code point, as read */
		char u[2 * sizeof(p->text)];
		size_t k = 0;
		for (size_t i = 0; i < p->n; i++) {
			unsigned char b = (unsigned char)p->text[i];
			if (b < 0x80) {
				u[k++] = (char)b;
			} else {
				u[k++] = (char)(0xc0 | b >> 6);
				u[k++] = (char)(0x80 | (b & 0x3f));
			}
		}
		json_t *o = json_pack("{s:I, s:o, s:s, s:s, s:s%}", "cpu", (json_int_t)cpu, "insn",
				      p->insn < 0 ? json_null() : json_integer(p->insn), "ip",
				      ipbuf, "function", fn, "text", u, k);
		char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		if (line)
			printf("%s\n", line);
		free(line);
		json_decref(o);
	} else {
		char idx[24] = "-";
		if (p->insn >= 0)
			snprintf(idx, sizeof(idx), "%" PRId64, (int64_t)p->insn);
		printf("%3u %12s  %-40s  %s\n", cpu, idx, term_safe(fn), term_safe(p->text));
	}
	s->lines++;
	p->n = 0;
	p->open = false;
}

/* "0x" and 1-16 hex digits: a 64-bit address, nothing else */
static bool hex_address(const char *s)
{
	if (strncmp(s, "0x", 2))
		return false;
	size_t n = strspn(s + 2, "0123456789abcdefABCDEF");
	return n >= 1 && n <= 16 && !s[2 + n];
}

/* The bytes of one record: characters below 256 are the bytes */
static int add_bytes(struct log_state *s, unsigned cpu, json_int_t insn, uint64_t ip,
		     const char *utf8, size_t len)
{
	struct pending *p = &s->p[cpu];
	for (size_t i = 0; i < len;) {
		unsigned c = (unsigned char)utf8[i++];
		if (c >= 0xc0 && c < 0xc4 && i < len) /* U+0080..U+00FF */
			c = (c & 0x1f) << 6 | ((unsigned char)utf8[i++] & 0x3f);
		else if (c >= 0x80)
			return -1;
		if (!p->open) {
			p->open = true;
			p->insn = insn;
			p->ip = ip;
		}
		if (c == '\n') {
			emit(s, cpu);
			continue;
		}
		if (p->n + 1 < sizeof(p->text))
			p->text[p->n++] = (char)c;
	}
	return 0;
}

int cmd_log(int argc, char **argv)
{
	static struct log_state s;
	struct session t;
	struct log_opts lo = { 0 };
	FILE *f = NULL;
	int rc = 2;
	memset(&s, 0, sizeof(s));
	s.cpu = -1;
	session_init(&t, "log");
	s.t = &t;
	const struct opts_group g[] = {
		{ NULL, log_rows, sizeof(log_rows) / sizeof(log_rows[0]), &lo },
		{ "symbols", session_symbol_rows, session_symbol_nrows, &t },
	};
	const struct opts_cmd cmd = { "log", log_usage, log_tail, g, 2, 2 };
	char *operand[2];
	unsigned nop = 0;
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	unsigned long long v;
	if (lo.cpu) {
		if (parse_u64(lo.cpu, &v) || v >= LOG_CPUS) {
			fprintf(stderr, "efipt log: --cpu takes a CPU number below %d, not '%s'\n",
				LOG_CPUS, term_safe(lo.cpu));
			goto out;
		}
		s.cpu = (long)v;
	}
	if (lo.format) {
		if (strcmp(lo.format, "text") && strcmp(lo.format, "jsonl")) {
			fprintf(stderr, "efipt log: --format takes text or jsonl, not '%s'\n",
				term_safe(lo.format));
			goto out;
		}
		s.jsonl = !strcmp(lo.format, "jsonl");
	}
	if (nop != 1) {
		fprintf(stderr, "efipt log: %s\n",
			!nop ? "a run directory is required" : "one run directory at a time");
		opts_help(&cmd, stderr);
		goto out;
	}
	int so = session_open(&t, operand[0], SESSION_SYMBOLS);
	if (so) {
		rc = so == -2 ? 2 : 1;
		goto out;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/debugport.jsonl", t.rd.path);
	rc = 1;
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "efipt log: %s: %s (efipt qemu records the debug port with QEMU 9.0 "
			"or newer; see the manifest's trace.debug_port)\n", path, strerror(errno));
		goto out;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned long no = 0;
	uint64_t records = 0;
	while (getline(&line, &cap, f) > 0) {
		no++;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		json_int_t cpu = -1, insn = -1;
		const char *ip = NULL, *text = NULL;
		size_t len = 0;
		json_t *jinsn = NULL;
		if (!o || json_unpack(o, "{s:I, s:o, s:s, s:s%}", "cpu", &cpu, "insn", &jinsn, "ip",
				      &ip, "bytes", &text, &len) || cpu < 0 || cpu >= LOG_CPUS ||
		    (!json_is_null(jinsn) && !json_is_integer(jinsn)) || !hex_address(ip)) {
			fprintf(stderr, "efipt log: %s: line %lu: not a debug port record (cpu, "
				"insn, ip, bytes)\n", path, no);
			json_decref(o);
			free(line);
			goto out;
		}
		insn = json_is_integer(jinsn) ? json_integer_value(jinsn) : -1;
		uint64_t a = strtoull(ip + 2, NULL, 16);
		int bad = s.cpu >= 0 && cpu != s.cpu ? 0 : add_bytes(&s, (unsigned)cpu, insn, a, text, len);
		json_decref(o);
		if (bad) {
			fprintf(stderr, "efipt log: %s: line %lu: bytes above 0xff in \"bytes\"\n", path,
				no);
			free(line);
			goto out;
		}
		records++;
	}
	free(line);
	for (unsigned k = 0; k < LOG_CPUS; k++)
		if (s.p[k].open)
			emit(&s, k);
	if (!s.lines) {
		fprintf(stderr, "efipt log: %s: no debug output %s(%" PRIu64 " records)\n", path,
			s.cpu >= 0 ? "from that CPU " : "", records);
		goto out;
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	session_free(&t);
	return rc;
}
