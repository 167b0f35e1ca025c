/*
 * efipt packets: list the Intel PT packets of a raw trace, one per line
 * (text in the spirit of libipt's ptdump, or jsonl per docs/packets.md), or count
 * them (--stat).
 *
 * The trace is read in fixed-size windows, so memory stays bounded for any
 * file size; a packet cut by the end of a window is completed from the next
 * one. After a bad packet the error is reported with its offset and decoding
 * resumes at the next PSB.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pt_pkt.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

#define WINDOW (1u << 20)

struct popts {
	bool jsonl, lastip, no_pad, no_timing, no_offset, stat;
	bool have_sync_offset;
	unsigned long long sync_offset;
};

/* Reader over a FILE with one window and the decoder on it. */
struct reader {
	FILE *f;
	const char *path;
	uint8_t *buf;
	size_t have;
	bool eof;
	bool io_error;
	struct ptpkt_decoder d;
};

static const char packets_usage[] =
	"usage: efipt packets [OPTIONS] TRACE\n\n"
	"List the Intel PT packets in TRACE, a raw trace file ('-' for stdin) or\n"
	"an efipt run directory (its trace.pt).\n"
	"Decoding starts at the first PSB; after a bad packet the error is shown\n"
	"and decoding resumes at the next PSB.\n\n";

static const char packets_tail[] =
	"jsonl: payload fields as in docs/packets.md; addresses and values that can\n"
	"exceed 2^53 are hex strings; single-bit flags are booleans; the type\n"
	"field of BBP, CFE and EVD is \"subtype\" (\"type\" names the packet).\n"
	"Errors: {\"off\":N,\"type\":\"error\",\"msg\":\"...\"}.\n\n"
	"Exit status: 0, 1 if the trace had decode errors, 2 on bad usage or I/O.\n";

static int set_format(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	struct popts *o = ctx;
	(void)row;
	if (strcmp(value, "jsonl") && strcmp(value, "text")) {
		sb_printf(err, "--format is text or jsonl, not '%s'", term_safe(value));
		return -1;
	}
	o->jsonl = !strcmp(value, "jsonl");
	return 0;
}

static int set_sync_offset(void *ctx, const struct opt_row *row, const char *value,
			   struct strbuf *err)
{
	struct popts *o = ctx;
	(void)row;
	if (parse_u64(value, &o->sync_offset)) {
		sb_printf(err, "--sync-offset needs a number, got '%s'", term_safe(value));
		return -1;
	}
	o->have_sync_offset = true;
	return 0;
}

static const struct opt_row packets_rows[] = {
	{ "format", OPT_VALUE, set_format, 0, "text|jsonl", "text (default, like ptdump) or "
	  "one JSON object per\npacket: {\"off\":N,\"size\":N,\"type\":\"NAME\",...}" },
	{ "lastip", OPT_FLAG, opt_set_true, offsetof(struct popts, lastip), NULL,
	  "also show the reconstructed IP of IP packets" },
	{ "no-pad", OPT_FLAG, opt_set_true, offsetof(struct popts, no_pad), NULL,
	  "do not show PAD packets" },
	{ "no-timing", OPT_FLAG, opt_set_true, offsetof(struct popts, no_timing), NULL,
	  "do not show timing packets (TSC TMA MTC CYC CBR)" },
	{ "no-offset", OPT_FLAG, opt_set_true, offsetof(struct popts, no_offset), NULL,
	  "text: do not show the offset column" },
	{ "sync-offset", OPT_VALUE, set_sync_offset, 0, "N", "start decoding at offset N (a "
	  "packet boundary)\ninstead of at the first PSB" },
	{ "stat", OPT_FLAG, opt_set_true, offsetof(struct popts, stat), NULL,
	  "only count packets and bytes per type" },
};

/* Fill the window after keeping the bytes from keep_from on. */
static void refill(struct reader *r, const uint8_t *keep_from)
{
	uint64_t base = ptpkt_offset(&r->d) - (uint64_t)(r->d.pos - keep_from);
	size_t keep = (size_t)(r->buf + r->have - keep_from);
	memmove(r->buf, keep_from, keep);
	r->have = keep;
	while (!r->eof && r->have < WINDOW) {
		size_t n = fread(r->buf + r->have, 1, WINDOW - r->have, r->f);
		r->have += n;
		if (n == 0) {
			if (ferror(r->f))
				r->io_error = true;
			r->eof = true;
		}
	}
	const uint8_t *pos = r->d.pos;
	ptpkt_set_buffer(&r->d, r->buf, r->have, base);
	r->d.pos = r->buf + (pos - keep_from);
}

/* Synchronise at the next PSB, reading on as needed. */
static bool resync(struct reader *r)
{
	for (;;) {
		if (ptpkt_sync_forward(&r->d) == 0)
			return true;
		if (r->eof)
			return false;
		refill(r, r->d.pos);
	}
}

static void hex(char **o, uint64_t v)
{
	*o += sprintf(*o, "\"0x%" PRIx64 "\"", v);
}

static const char *tnt_string(const struct ptpkt *p, char *s)
{
	unsigned n = p->u.tnt.nbits;
	for (unsigned i = 0; i < n; i++)
		s[i] = (p->u.tnt.bits >> (n - 1 - i)) & 1 ? '!' : '.';
	s[n] = 0;
	return s;
}

#define B(x) ((x) ? "true" : "false")

static void print_jsonl(const struct ptpkt *p, uint64_t off, const struct popts *o,
			bool have_ip, uint64_t ip)
{
	char line[512], *s = line, tnt[64];
	s += sprintf(s, "{\"off\":%" PRIu64 ",\"size\":%u,\"type\":\"%s\"", off, p->size,
		     ptpkt_name(p->type));
	switch ((enum ptpkt_type)p->type) {
	case ptpkt_tnt8: case ptpkt_tnt64:
		s += sprintf(s, ",\"bits\":\"%s\"", tnt_string(p, tnt));
		break;
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup:
		s += sprintf(s, ",\"ipc\":%u,\"ip\":", p->u.ip.ipc);
		hex(&s, p->u.ip.ip);
		if (o->lastip && have_ip) {
			s += sprintf(s, ",\"lastip\":");
			hex(&s, ip);
		}
		break;
	case ptpkt_tsc:
		s += sprintf(s, ",\"tsc\":");
		hex(&s, p->u.tsc.tsc);
		break;
	case ptpkt_tma:
		s += sprintf(s, ",\"ctc\":%u,\"fc\":%u", p->u.tma.ctc, p->u.tma.fc);
		break;
	case ptpkt_mtc:
		s += sprintf(s, ",\"ctc\":%u", p->u.mtc.ctc);
		break;
	case ptpkt_cyc:
		s += sprintf(s, ",\"cyc\":");
		hex(&s, p->u.cyc.cyc);
		break;
	case ptpkt_cbr:
		s += sprintf(s, ",\"ratio\":%u", p->u.cbr.ratio);
		break;
	case ptpkt_pip:
		s += sprintf(s, ",\"cr3\":%" PRIu64 ",\"nr\":%s", p->u.pip.cr3, B(p->u.pip.nr));
		break;
	case ptpkt_mode_exec:
		s += sprintf(s, ",\"csl\":%s,\"csd\":%s,\"if\":%s", B(p->u.mode_exec.csl),
			     B(p->u.mode_exec.csd), B(p->u.mode_exec.iflag));
		break;
	case ptpkt_mode_tsx:
		s += sprintf(s, ",\"intx\":%s,\"abrt\":%s", B(p->u.mode_tsx.intx),
			     B(p->u.mode_tsx.abrt));
		break;
	case ptpkt_vmcs:
		s += sprintf(s, ",\"base\":%" PRIu64, p->u.vmcs.base);
		break;
	case ptpkt_mnt:
		s += sprintf(s, ",\"payload\":");
		hex(&s, p->u.mnt.payload);
		break;
	case ptpkt_ptw:
		s += sprintf(s, ",\"bytes\":%u,\"ip\":%s,\"payload\":", p->u.ptw.bytes,
			     B(p->u.ptw.ip));
		hex(&s, p->u.ptw.payload);
		break;
	case ptpkt_exstop:
		s += sprintf(s, ",\"ip\":%s", B(p->u.exstop.ip));
		break;
	case ptpkt_mwait:
		s += sprintf(s, ",\"hints\":%u,\"ext\":%u", p->u.mwait.hints, p->u.mwait.ext);
		break;
	case ptpkt_pwre:
		s += sprintf(s, ",\"state\":%u,\"sub\":%u,\"hw\":%s", p->u.pwre.state,
			     p->u.pwre.sub, B(p->u.pwre.hw));
		break;
	case ptpkt_pwrx:
		s += sprintf(s, ",\"last\":%u,\"deepest\":%u,\"wr\":%u", p->u.pwrx.last,
			     p->u.pwrx.deepest, p->u.pwrx.wr);
		break;
	case ptpkt_bbp:
		s += sprintf(s, ",\"sz\":%u,\"subtype\":%u", p->u.bbp.sz, p->u.bbp.type);
		break;
	case ptpkt_bip:
		s += sprintf(s, ",\"id\":%u,\"payload\":", p->u.bip.id);
		hex(&s, p->u.bip.payload);
		break;
	case ptpkt_bep:
		s += sprintf(s, ",\"ip\":%s", B(p->u.bep.ip));
		break;
	case ptpkt_cfe:
		s += sprintf(s, ",\"subtype\":%u,\"vector\":%u,\"ip\":%s", p->u.cfe.type,
			     p->u.cfe.vector, B(p->u.cfe.ip));
		break;
	case ptpkt_evd:
		s += sprintf(s, ",\"subtype\":%u,\"payload\":", p->u.evd.type);
		hex(&s, p->u.evd.payload);
		break;
	case ptpkt_pad: case ptpkt_psb: case ptpkt_psbend: case ptpkt_stop: case ptpkt_ovf:
	case ptpkt_invalid: case ptpkt_ntypes:
		break;
	}
	strcpy(s, "}\n");
	fputs(line, stdout);
}

static void print_text(const struct ptpkt *p, uint64_t off, const struct popts *o,
		       bool have_ip, uint64_t ip)
{
	char line[512], *s = line, tnt[64];
	if (!o->no_offset)
		s += sprintf(s, "%016" PRIx64 "  ", off);
	s += sprintf(s, "%-10s", ptpkt_name(p->type));
	switch ((enum ptpkt_type)p->type) {
	case ptpkt_tnt8: case ptpkt_tnt64:
		s += sprintf(s, "%s", tnt_string(p, tnt));
		break;
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup: {
		int n = ptpkt_ipc_bytes(p->u.ip.ipc);
		if (n == 0)
			s += sprintf(s, "%u: ip suppressed", p->u.ip.ipc);
		else
			s += sprintf(s, "%u: 0x%0*" PRIx64, p->u.ip.ipc, 2 * n, p->u.ip.ip);
		if (o->lastip && have_ip)
			s += sprintf(s, "  ip=0x%016" PRIx64, ip);
		break;
	}
	case ptpkt_tsc:  s += sprintf(s, "0x%" PRIx64, p->u.tsc.tsc); break;
	case ptpkt_tma:  s += sprintf(s, "ctc=0x%x fc=0x%x", p->u.tma.ctc, p->u.tma.fc); break;
	case ptpkt_mtc:  s += sprintf(s, "0x%02x", p->u.mtc.ctc); break;
	case ptpkt_cyc:  s += sprintf(s, "0x%" PRIx64, p->u.cyc.cyc); break;
	case ptpkt_cbr:  s += sprintf(s, "%u", p->u.cbr.ratio); break;
	case ptpkt_pip:
		s += sprintf(s, "cr3=0x%" PRIx64 "%s", p->u.pip.cr3, p->u.pip.nr ? ", nr" : "");
		break;
	case ptpkt_mode_exec:
		s += sprintf(s, "%s%s%s", p->u.mode_exec.csl ? "cs.l" : "",
			     p->u.mode_exec.csd ? (p->u.mode_exec.csl ? ", cs.d" : "cs.d") : "",
			     p->u.mode_exec.iflag ?
				     (p->u.mode_exec.csl || p->u.mode_exec.csd ? ", if" : "if") : "");
		break;
	case ptpkt_mode_tsx:
		s += sprintf(s, "%s%s", p->u.mode_tsx.intx ? "intx" : "",
			     p->u.mode_tsx.abrt ? (p->u.mode_tsx.intx ? ", abrt" : "abrt") : "");
		break;
	case ptpkt_vmcs:  s += sprintf(s, "0x%" PRIx64, p->u.vmcs.base); break;
	case ptpkt_mnt:   s += sprintf(s, "0x%016" PRIx64, p->u.mnt.payload); break;
	case ptpkt_ptw:
		s += sprintf(s, "%u: 0x%0*" PRIx64 "%s", p->u.ptw.bytes, 2 * p->u.ptw.bytes,
			     p->u.ptw.payload, p->u.ptw.ip ? ", ip" : "");
		break;
	case ptpkt_exstop: s += sprintf(s, "%s", p->u.exstop.ip ? "ip" : ""); break;
	case ptpkt_mwait:
		s += sprintf(s, "hints=0x%x ext=0x%x", p->u.mwait.hints, p->u.mwait.ext);
		break;
	case ptpkt_pwre:
		s += sprintf(s, "c%u.%u%s", p->u.pwre.state, p->u.pwre.sub, p->u.pwre.hw ? ", hw" : "");
		break;
	case ptpkt_pwrx:
		s += sprintf(s, "last=c%u deepest=c%u wr=0x%x", p->u.pwrx.last, p->u.pwrx.deepest,
			     p->u.pwrx.wr);
		break;
	case ptpkt_bbp:
		s += sprintf(s, "sz=%u (%u-byte items) type=0x%02x", p->u.bbp.sz,
			     p->u.bbp.sz ? 4 : 8, p->u.bbp.type);
		break;
	case ptpkt_bip:
		s += sprintf(s, "id=0x%02x 0x%0*" PRIx64, p->u.bip.id, 2 * p->u.bip.bytes,
			     p->u.bip.payload);
		break;
	case ptpkt_bep:   s += sprintf(s, "%s", p->u.bep.ip ? "ip" : ""); break;
	case ptpkt_cfe:
		s += sprintf(s, "type=0x%x vector=0x%02x%s", p->u.cfe.type, p->u.cfe.vector,
			     p->u.cfe.ip ? ", ip" : "");
		break;
	case ptpkt_evd:
		s += sprintf(s, "type=0x%x 0x%016" PRIx64, p->u.evd.type, p->u.evd.payload);
		break;
	case ptpkt_pad: case ptpkt_psb: case ptpkt_psbend: case ptpkt_stop: case ptpkt_ovf:
	case ptpkt_invalid: case ptpkt_ntypes:
		break;
	}
	while (s > line && s[-1] == ' ')
		s--;
	strcpy(s, "\n");
	fputs(line, stdout);
}

static void print_error(uint64_t off, int err, const struct popts *o)
{
	if (o->stat)
		return;
	if (o->jsonl)
		printf("{\"off\":%" PRIu64 ",\"type\":\"error\",\"msg\":\"%s\"}\n", off,
		       ptpkt_errstr(err));
	else if (o->no_offset)
		printf("[error: %s]\n", ptpkt_errstr(err));
	else
		printf("%016" PRIx64 "  [error: %s]\n", off, ptpkt_errstr(err));
}

static bool is_timing(unsigned t)
{
	return t == ptpkt_tsc || t == ptpkt_tma || t == ptpkt_mtc || t == ptpkt_cyc ||
	       t == ptpkt_cbr;
}

/* Skip to offset n of the input. */
static int skip_to(struct reader *r, unsigned long long n)
{
	struct stat sb;
	if (r->f != stdin && fstat(fileno(r->f), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    n > (unsigned long long)sb.st_size)
		return -1;
	if (r->f != stdin && fseeko(r->f, (off_t)n, SEEK_SET) == 0) {
		ptpkt_init(&r->d, r->buf, 0, n);
		return 0;
	}
	unsigned long long left = n;
	while (left) {
		size_t want = left < WINDOW ? (size_t)left : WINDOW;
		size_t got = fread(r->buf, 1, want, r->f);
		if (!got)
			break;
		left -= got;
	}
	ptpkt_init(&r->d, r->buf, 0, n - left);
	return left ? -1 : 0;
}

static void print_stat(const struct ptpkt_stat *st, uint64_t errors, uint64_t skipped)
{
	uint64_t n = 0, b = 0;
	printf("%-10s %14s %16s\n", "packet", "count", "bytes");
	for (unsigned t = ptpkt_pad; t < ptpkt_ntypes; t++) {
		if (!st->count[t])
			continue;
		printf("%-10s %14" PRIu64 " %16" PRIu64 "\n", ptpkt_name(t), st->count[t],
		       st->bytes[t]);
		n += st->count[t];
		b += st->bytes[t];
	}
	printf("%-10s %14" PRIu64 " %16" PRIu64 "\n", "total", n, b);
	printf("%-10s %14" PRIu64 "\n", "errors", errors);
	printf("%-10s %14s %16" PRIu64 "\n", "skipped", "", skipped);
}

static int run(struct reader *r, const struct popts *o)
{
	struct ptpkt_lastip lip;
	struct ptpkt_stat st;
	struct ptpkt p;
	uint64_t errors = 0, skipped = 0;

	ptpkt_lastip_init(&lip);
	memset(&st, 0, sizeof(st));
	if (o->have_sync_offset) {
		if (skip_to(r, o->sync_offset)) {
			fprintf(stderr, "efipt packets: %s: --sync-offset %llu is beyond the end\n",
				r->path, o->sync_offset);
			return 2;
		}
		refill(r, r->d.pos);
		ptpkt_sync_set(&r->d, o->sync_offset);
	} else {
		ptpkt_init(&r->d, r->buf, 0, 0);
		refill(r, r->d.pos);
		if (!resync(r)) {
			if (r->io_error)
				goto io_error;
			if (ptpkt_offset(&r->d) + (uint64_t)(r->d.end - r->d.pos) == 0) {
				/* no packets is no result: said, not printed empty */
				fprintf(stderr, "efipt packets: %s: the trace is empty (0 bytes): "
						"nothing to list\n", r->path);
				return 1;
			}
			fprintf(stderr, "efipt packets: %s: no PSB found\n", r->path);
			return 1;
		}
		skipped += ptpkt_offset(&r->d);
	}

	for (;;) {
		uint64_t off = ptpkt_offset(&r->d);
		int n;
		if (o->stat) {
			n = ptpkt_scan(&r->d, &st);
			off = ptpkt_offset(&r->d);
		} else {
			n = ptpkt_next(&r->d, &p);
		}
		if (n > 0) {
			uint64_t ip = 0;
			bool have_ip = ptpkt_lastip_apply(&lip, &p, &ip) == 1;
			if ((o->no_pad && p.type == ptpkt_pad) || (o->no_timing && is_timing(p.type)))
				continue;
			if (o->jsonl)
				print_jsonl(&p, off, o, have_ip, ip);
			else
				print_text(&p, off, o, have_ip, ip);
			continue;
		}
		if (n == -ptpkt_err_eos || n == -ptpkt_err_truncated) {
			if (!r->eof) {
				refill(r, r->d.pos);
				continue;
			}
			if (r->io_error)
				goto io_error;
			if (n == -ptpkt_err_truncated) {
				print_error(off, n, o);
				errors++;
				skipped += (uint64_t)(r->d.end - r->d.pos);
			}
			break;
		}
		/* A bad packet: report it, then resume at the next PSB, where
		 * Last IP and block state start over (33.3.7). */
		print_error(off, n, o);
		errors++;
		bool again = resync(r);
		if (r->io_error)
			goto io_error;
		skipped += again ? ptpkt_offset(&r->d) - off
				 : ptpkt_offset(&r->d) + (uint64_t)(r->d.end - r->d.pos) - off;
		if (!again)
			break;
	}
	if (o->stat)
		print_stat(&st, errors, skipped);
	return errors ? 1 : 0; /* main's finish_stdout() checks the writes */
io_error:
	fprintf(stderr, "efipt packets: %s: read error: %s\n", r->path, strerror(errno));
	return 2;
}

int cmd_packets(int argc, char **argv)
{
	struct popts o;
	memset(&o, 0, sizeof(o));
	const struct opts_group g[] = {
		{ NULL, packets_rows, sizeof(packets_rows) / sizeof(packets_rows[0]), &o },
	};
	const struct opts_cmd cmd = { "packets", packets_usage, packets_tail, g, 1, 1 };
	char *operand[1];
	unsigned nop;
	int pr = opts_parse(&cmd, argc, argv, operand, &nop);
	if (pr != OPTS_OK)
		return pr == OPTS_HELP ? 0 : 2;
	if (nop != 1) {
		fprintf(stderr, "efipt packets: a trace (a file, '-' or a run directory) is "
			"required\n");
		opts_help(&cmd, stderr);
		return 2;
	}

	struct reader r;
	memset(&r, 0, sizeof(r));
	r.path = operand[0];
	if (!strcmp(r.path, "-")) {
		r.f = stdin;
		r.path = "<stdin>";
	} else {
		struct stat sb;
		static char trace_path[4200];
		if (stat(r.path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			/* a run directory: its trace is trace.pt (docs/format.md) */
			snprintf(trace_path, sizeof(trace_path), "%s/trace.pt", r.path);
			if (stat(trace_path, &sb) != 0) {
				fprintf(stderr, "efipt packets: %s: a directory without trace.pt (not "
						"a run directory of a trace run)\n", r.path);
				return 2;
			}
			r.path = trace_path;
		}
		char err[4400];
		int fd = open_regular(r.path, err, sizeof(err));
		r.f = fd < 0 ? NULL : fdopen(fd, "rb");
		if (!r.f) {
			if (fd >= 0) {
				snprintf(err, sizeof(err), "%s: %s", r.path, strerror(errno));
				close(fd);
			}
			fprintf(stderr, "efipt packets: %s\n", err);
			return 2;
		}
	}
	r.buf = malloc(WINDOW);
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	int rc = r.buf ? run(&r, &o) : 2;
	flush_stdout(); /* finish_stdout() names the cause of a failure */
	free(r.buf);
	if (r.f != stdin)
		fclose(r.f);
	return rc;
}
