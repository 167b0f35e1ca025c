/*
 * efipt insn: reconstruct the executed instructions from a raw Intel PT
 * trace and the code images, ptxed-style: one line per instruction
 * ("%016llx  disassembly"), events in square brackets, errors as
 * "[offset, ip: error: message]" after which decoding resumes at the next
 * PSB. Exit status 1 if any error occurred.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "core/pt_flow.h"
#include "core/x86_insn.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/input/session.h"
#include "host/util/opts.h"

struct iopts {
	bool no_inst, stat, time;
	const struct session *s;	/* its code_now: the code at this point */
};

static const char insn_usage[] =
	"usage: efipt insn --pt TRACE IMAGE... [OPTIONS]   (TRACE '-': standard input)\n"
	"       efipt insn --run DIR [OPTIONS]\n\n"
	"Show the instructions executed according to a raw Intel PT trace: one line\n"
	"per instruction (address and disassembly), events in square brackets,\n"
	"errors as [offset, ip: error: message] (decoding goes on at the next PSB).\n"
	"IMAGE: --raw, --elf or --pe (any number, no overlaps).\n\n";

static const char insn_tail[] =
	"A trace with no PSB, or whose last packet is cut by the end of the file,\n"
	"is reported as an error.\n\n"
	"Exit status: 0 if the trace decoded without errors, 1 if it had decode\n"
	"errors, 2 on usage errors, unreadable inputs or a write error on standard\n"
	"output.\n";

static const struct opt_row insn_rows[] = {
	{ "no-inst", OPT_FLAG, opt_set_true, offsetof(struct iopts, no_inst), NULL,
	  "print addresses only, no disassembly" },
	{ "stat", OPT_FLAG, opt_set_true, offsetof(struct iopts, stat), NULL,
	  "print only counts: instructions, branches, events, errors" },
	{ "time", OPT_FLAG, opt_set_true, offsetof(struct iopts, time), NULL,
	  "show the time stamp (TSC) on event lines" },
};

/* "%016" PRIx64 into p, without printf: address lines are most of the
 * output of a long trace */
static char *hex16(char *p, uint64_t v)
{
	static const char digit[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = digit[v & 15];
	return p + 16;
}

static void print_run(void *ctx, const struct ptflow_run *r)
{
	struct iopts *o = ctx;
	uint64_t ip = r->ip;
	if (o->no_inst) {
		char line[17 * PTFLOW_BLOCK_MAX], *p = line;
		for (uint32_t i = 0; i < r->ninsn; i++) {
			p = hex16(p, ip);
			*p++ = '\n';
			ip += r->lens[i];
			if (p == line + sizeof(line)) {
				fwrite(line, 1, (size_t)(p - line), stdout);
				p = line;
			}
		}
		fwrite(line, 1, (size_t)(p - line), stdout);
		return;
	}
	static const ZydisMachineMode zm[] = { ZYDIS_MACHINE_MODE_LEGACY_16,
					       ZYDIS_MACHINE_MODE_LEGACY_32,
					       ZYDIS_MACHINE_MODE_LONG_64 };
	for (uint32_t i = 0; i < r->ninsn; i++) {
		uint8_t b[16];
		int n = o->s->code_now.read(o->s->code_now.ctx, ip, b, r->lens[i]);
		ZydisDisassembledInstruction zi;
		if (n == r->lens[i] && r->mode < 3 &&
		    ZYAN_SUCCESS(ZydisDisassembleIntel(zm[r->mode], ip, b, (ZyanUSize)n, &zi)))
			printf("%016" PRIx64 "  %s\n", ip, zi.text);
		else
			printf("%016" PRIx64 "  (bad)\n", ip);
		ip += r->lens[i];
	}
}

static void print_event(void *ctx, const struct ptflow_event *ev)
{
	struct iopts *o = ctx;
	if (ev->type == PTFLOW_EV_ERROR) {
		printf("[%" PRIx64 ", %016" PRIx64 ": error: ", ev->offset, ev->ip);
		/* errors about the code at an address name the address */
		if (ev->err == PTFLOW_ERR_NO_CODE)
			printf("no code at %016" PRIx64 " (not in any image)]\n", ev->ip);
		else if (ev->err == PTFLOW_ERR_BAD_INSN)
			printf("invalid instruction at %016" PRIx64 "]\n", ev->ip);
		else
			printf("%s]\n", ev->msg);
		return;
	}
	printf("[");
	if (o->time && ev->has_time)
		printf("%016" PRIx64 " ", ev->tsc);
	switch (ev->type) {
	case PTFLOW_EV_INTERRUPT:
		printf("interrupt, from: %016" PRIx64 ", to: %016" PRIx64 "]\n", ev->ip, ev->target);
		return;
	case PTFLOW_EV_EXEC_MODE: {
		static const char *m[] = { "16-bit", "32-bit", "64-bit" };
		printf("exec mode: %s]\n", ev->value < 3 ? m[ev->value] : "?");
		return;
	}
	case PTFLOW_EV_TSX:
		printf("%s]\n", ev->value & 2 ? "aborted" : ev->value & 1 ? "begin transaction"
									: "committed");
		return;
	case PTFLOW_EV_PAGING:
		printf("paging, cr3: %016" PRIx64 "%s]\n", ev->value, ev->flag ? ", nr" : "");
		return;
	case PTFLOW_EV_VMCS:
		printf("vmcs, base: %016" PRIx64 "]\n", ev->value);
		return;
	case PTFLOW_EV_PTWRITE:
		printf("ptwrite: %" PRIx64 "]\n", ev->value);
		return;
	case PTFLOW_EV_MWAIT: case PTFLOW_EV_PWRE: case PTFLOW_EV_PWRX:
	case PTFLOW_EV_CFE: case PTFLOW_EV_EVD:
		printf("%s: %" PRIx64 "]\n", ptflow_ev_name(ev->type), ev->value);
		return;
	default:
		break;
	}
	if (ev->has_ip)
		printf("%s, ip: %016" PRIx64 "]\n", ptflow_ev_name(ev->type), ev->ip);
	else
		printf("%s]\n", ptflow_ev_name(ev->type));
}

int cmd_insn(int argc, char **argv)
{
	struct session s;
	struct iopts o = { 0 };
	int rc = 2;
	session_init(&s, "insn");
	o.s = &s;
	const struct session_cmd sc = { "insn", insn_usage, insn_tail, false,
					"output", insn_rows,
					sizeof(insn_rows) / sizeof(insn_rows[0]), &o };
	char *run;
	int pr = session_parse_args(&s, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	/* the listing names each error; --stat only counts them */
	s.errors_shown = !o.stat;
	s.streams = !o.stat;
	if (session_open(&s, run, SESSION_TRACE))
		goto out;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct flow_consumer c = { &o, NULL, o.stat ? NULL : print_event, o.stat ? NULL : print_run,
				   NULL, PTFLOW_TIME_NONE, 0, false, NULL };
	long errs = session_decode(&s, 0, &c, 1);
	if (errs < 0)
		goto out;
	if (o.stat)
		printf("insn: %" PRIu64 "\nbranches: %" PRIu64 "\nevents: %" PRIu64
		       "\nerrors: %ld\npackets: %" PRIu64 "\n",
		       s.stat.insns, s.stat.branches, s.stat.events, errs, s.stat.packets);
	rc = errs ? 1 : 0;
out:
	session_free(&s);
	return rc;
}
