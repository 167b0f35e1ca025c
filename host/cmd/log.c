/*
 * efipt log RUNDIR: the firmware's DEBUG output (the bytes it wrote to its
 * debug port, debugport.jsonl of an efipt qemu run: qemu-plugin/debugport.h),
 * line by line, each at the instruction that wrote its first byte: that
 * instruction's index in the trace and the function it is in (with
 * --symbols; else image+offset).
 */
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "host/cmd/commands.h"
#include "host/input/debuglog.h"
#include "host/input/session.h"
#include "host/out/jsonl_out.h"
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

struct log_state {
	struct session *t;
	bool jsonl;
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

static void emit(struct log_state *s, const struct dbglog_line *p)
{
	char fn[512];
	where(s, p->ip, fn, sizeof(fn));
	if (s->jsonl) {
		char ipbuf[24];
		snprintf(ipbuf, sizeof(ipbuf), "0x%" PRIx64, p->ip);
		/* each byte as the character of that code point, as read */
		char *u = malloc(2 * p->len + 1);
		size_t k = 0;
		if (!u)
			return;
		for (size_t i = 0; i < p->len; i++) {
			unsigned char b = (unsigned char)p->text[i];
			if (b < 0x80) {
				u[k++] = (char)b;
			} else {
				u[k++] = (char)(0xc0 | b >> 6);
				u[k++] = (char)(0x80 | (b & 0x3f));
			}
		}
		json_t *o = json_pack("{s:I, s:o, s:s, s:s, s:s%}", "cpu", (json_int_t)p->cpu, "insn",
				      p->insn < 0 ? json_null() : json_integer(p->insn), "ip",
				      ipbuf, "function", fn, "text", u, k);
		jsonl_put(o);
		free(u);
	} else {
		char idx[24] = "-";
		if (p->insn >= 0)
			snprintf(idx, sizeof(idx), "%" PRId64, p->insn);
		printf("%3u %12s  %-40s  %s\n", p->cpu, idx, term_safe(fn), term_safe(p->text));
	}
}

int cmd_log(int argc, char **argv)
{
	struct log_state s;
	struct session t;
	struct log_opts lo = { 0 };
	int rc = 2;
	memset(&s, 0, sizeof(s));
	long cpu = -1;
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
		if (parse_u64(lo.cpu, &v) || v >= DBGLOG_CPUS) {
			fprintf(stderr, "efipt log: --cpu takes a CPU number below %d, not '%s'\n",
				DBGLOG_CPUS, term_safe(lo.cpu));
			goto out;
		}
		cpu = (long)v;
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
	struct dbglog dl;
	int dr = dbglog_read(&dl, t.rd.path, cpu, "log");
	rc = 1;
	if (dr == 1)
		fprintf(stderr, "efipt log: %s/debugport.jsonl: No such file or directory (efipt qemu "
			"records the debug port with QEMU 9.0 or newer; see the manifest's "
			"trace.debug_port)\n", t.rd.path);
	if (dr)
		goto out;
	for (size_t i = 0; i < dl.n; i++)
		emit(&s, &dl.v[i]);
	if (!dl.n) {
		fprintf(stderr, "efipt log: %s/debugport.jsonl: no debug output %s(%" PRIu64
			" records)\n", t.rd.path, cpu >= 0 ? "from that CPU " : "", dl.records);
		dbglog_free(&dl);
		goto out;
	}
	dbglog_free(&dl);
	rc = 0;
out:
	session_free(&t);
	return rc;
}
