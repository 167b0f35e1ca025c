/*
 * Flow decoder scenarios from the SDM's packet generation rules (Vol. 3C
 * 33.4.2 and 33.7) and from the Intel PT errata: a table of {name, errata,
 * options, packets, expected output}, the packets written out as words
 * (build()) and encoded by ptpkt_encode, over small hand-assembled code.
 * Each trace is decoded with and without the block cache (both must give
 * the same), and the output must be the expected one, written in full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/pt_flow.h"
#include "core/pt_pkt.h"

/*
 * 64-bit code at 0x1000:
 *   1000 90              nop
 *   1001 74 03           je 1006
 *   1003 90              nop
 *   1004 eb 02           jmp 1008
 *   1006 90              nop
 *   1007 90              nop
 *   1008 e8 13 00 00 00  call 1020
 *   100d ff e0           jmp rax
 *   100f 0f 05           syscall
 *   1011 0f 01 c2        vmlaunch
 *   1014 f3 48 0f ae e0  ptwrite rax
 *   1019 0f 22 d8        mov cr3, rax
 *   101c f4              hlt
 *   101d 90 90 90        nop x3
 *   1020 90              nop            (function)
 *   1021 c3              ret
 *   1022 e8 00 00 00 00  call 1027      (zero-length call)
 *   1027 c3              ret
 *   1028 eb fe           jmp 1028       (endless loop)
 * 0x2000: 48 90 (32-bit: dec eax; nop -- 64-bit: a single rex.w nop), c3
 * 0x3000: 90 nop; 0f 30 wrmsr; 74 02 je 3007; 90 90; c3 ret
 *
 * 16-bit code as at the reset vector (CS base 0xFFFF0000, linear IPs):
 *   fffffff0 90 90        nop x2
 *   fffffff2 e9 0b ff     jmp ffffff00 (IP fff5 - 0xf5)
 *   ffffff00 90           nop
 *   ffffff01 74 02        je ffffff05
 *   ffffff03 90 90        nop x2
 *   ffffff05 e8 03 00     call ffffff0b
 *   ffffff08 90           nop
 *   ffffff09 eb fe        jmp ffffff09
 *   ffffff0b c3           ret
 * 0x4000: 60 nops, c3 ret (straight code longer than a block)
 * 0x7000: 60 nops, 75 c2 jne 7000 (703c), e8 bd ef ff ff call 6000 (703e)
 * 16-bit code with CS base 0: IP wraps at the end of the segment.
 *   fff0 eb 0e            jmp 0000 (IP 0x10000 wraps to 0)
 *   0000 90 90            nop x2
 */
static const uint8_t code1[] = {
	0x90, 0x74, 0x03, 0x90, 0xeb, 0x02, 0x90, 0x90, 0xe8, 0x13, 0x00, 0x00, 0x00,
	0xff, 0xe0, 0x0f, 0x05, 0x0f, 0x01, 0xc2, 0xf3, 0x48, 0x0f, 0xae, 0xe0,
	0x0f, 0x22, 0xd8, 0xf4, 0x90, 0x90, 0x90, 0x90, 0xc3, 0xe8, 0x00, 0x00,
	0x00, 0x00, 0xc3, 0xeb, 0xfe,
};
static const uint8_t code2[] = { 0x48, 0x90, 0xc3 };
static const uint8_t code3[] = { 0x90, 0x0f, 0x30, 0x74, 0x02, 0x90, 0x90, 0xc3 };
static const uint8_t reset_vec[] = { 0x90, 0x90, 0xe9, 0x0b, 0xff };
static const uint8_t reset_code[] = { 0x90, 0x74, 0x02, 0x90, 0x90, 0xe8, 0x03, 0x00,
				      0x90, 0xeb, 0xfe, 0xc3 };
static const uint8_t call_self[] = { 0xe8, 0xfb, 0xff, 0xff, 0xff };
static uint8_t nops[61];
static uint8_t nop_loop[67];
static const uint8_t seg_end[] = { 0xeb, 0x0e };
static const uint8_t seg_start[] = { 0x90, 0x90 };

static const struct {
	uint64_t base;
	const uint8_t *c;
	size_t size;
} regions[] = {
	{ 0x1000, code1, sizeof(code1) },
	{ 0x2000, code2, sizeof(code2) },
	{ 0x3000, code3, sizeof(code3) },
	{ 0x4000, nops, sizeof(nops) },
	{ 0x6000, call_self, sizeof(call_self) },
	{ 0x7000, nop_loop, sizeof(nop_loop) },
	{ 0xfffffff0, reset_vec, sizeof(reset_vec) },
	{ 0xffffff00, reset_code, sizeof(reset_code) },
	{ 0xfff0, seg_end, sizeof(seg_end) },
	{ 0, seg_start, sizeof(seg_start) },
};

static int img_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		if (ip < regions[i].base || ip - regions[i].base >= regions[i].size)
			continue;
		size_t k = (size_t)(regions[i].size - (ip - regions[i].base));
		if (n > k)
			n = k;
		memcpy(buf, regions[i].c + (ip - regions[i].base), n);
		return (int)n;
	}
	return 0;
}

/* ---- trace builder ---- */
static uint8_t tr[4096];
static size_t tn;

static void pk(struct ptpkt p)
{
	int n = ptpkt_encode(tr + tn, sizeof(tr) - tn, &p);
	if (n < 0) {
		fprintf(stderr, "encode failed\n");
		exit(2);
	}
	tn += (size_t)n;
}

/*
 * The packets of a scenario, written out: words separated by spaces, hex
 * numbers. "start:A" is how every trace enable begins (33.7): PSB, PSBEND,
 * MODE.Exec 64-bit, TIP.PGE A.
 *   psb psbend ovf stop      the packet
 *   mode64 mode32 mode16     MODE.Exec
 *   pge:A tip:A fup:A pgd:A  IP packets (A 0 or none: IP suppressed)
 *   pgd                      TIP.PGD without IP
 *   tnt:!.!                  a short TNT, ! taken, . not taken, oldest first
 *   tsx:intx tsx:commit tsx:abort      MODE.TSX
 *   cfe:IP,TYPE,VECTOR  ptw:BYTES,PAYLOAD  pip:CR3
 *   tsc:V tma:CTC cbr:R cyc:V mtc:CTC  timing
 *   raw:HEX                  bytes as they are
 */
static void build(const char *text)
{
	char buf[1024], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", text);
	tn = 0;
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *arg = strchr(w, ':');
		if (arg)
			*arg++ = 0;
		unsigned long long v = arg ? strtoull(arg, NULL, 16) : 0;
		struct ptpkt p;
		memset(&p, 0, sizeof(p));
		if (!strcmp(w, "start")) {
			p.type = ptpkt_psb; pk(p);
			p.type = ptpkt_psbend; pk(p);
			p.type = ptpkt_mode_exec; p.u.mode_exec.csl = true; pk(p);
			memset(&p, 0, sizeof(p));
			p.type = ptpkt_tip_pge; p.u.ip.ipc = 6; p.u.ip.ip = v;
		} else if (!strcmp(w, "psb")) {
			p.type = ptpkt_psb;
		} else if (!strcmp(w, "psbend")) {
			p.type = ptpkt_psbend;
		} else if (!strcmp(w, "ovf")) {
			p.type = ptpkt_ovf;
		} else if (!strcmp(w, "stop")) {
			p.type = ptpkt_stop;
		} else if (!strncmp(w, "mode", 4)) {
			p.type = ptpkt_mode_exec;
			p.u.mode_exec.csl = !strcmp(w, "mode64");
			p.u.mode_exec.csd = !strcmp(w, "mode32");
		} else if (!strcmp(w, "pge") || !strcmp(w, "tip") || !strcmp(w, "fup") || !strcmp(w, "pgd")) {
			p.type = w[1] == 'g' ? (w[2] == 'e' ? ptpkt_tip_pge : ptpkt_tip_pgd)
					     : w[0] == 't' ? ptpkt_tip : ptpkt_fup;
			p.u.ip.ipc = v ? 6 : 0;
			p.u.ip.ip = v;
		} else if (!strcmp(w, "tnt")) {
			p.type = ptpkt_tnt8;
			for (const char *c = arg; *c; c++) {
				p.u.tnt.bits = p.u.tnt.bits << 1 | (*c == '!');
				p.u.tnt.nbits++;
			}
		} else if (!strcmp(w, "tsx")) {
			p.type = ptpkt_mode_tsx;
			p.u.mode_tsx.intx = !strcmp(arg, "intx");
			p.u.mode_tsx.abrt = !strcmp(arg, "abort");
		} else if (!strcmp(w, "cfe")) {
			unsigned ip, type, vec;
			sscanf(arg, "%x,%x,%x", &ip, &type, &vec);
			p.type = ptpkt_cfe;
			p.u.cfe.ip = ip;
			p.u.cfe.type = (uint8_t)type;
			p.u.cfe.vector = (uint8_t)vec;
		} else if (!strcmp(w, "ptw")) {
			unsigned bytes;
			sscanf(arg, "%x,%llx", &bytes, &v);
			p.type = ptpkt_ptw;
			p.u.ptw.bytes = (uint8_t)bytes;
			p.u.ptw.payload = v;
		} else if (!strcmp(w, "pip")) {
			p.type = ptpkt_pip;
			p.u.pip.cr3 = v;
		} else if (!strcmp(w, "tsc")) {
			p.type = ptpkt_tsc;
			p.u.tsc.tsc = v;
		} else if (!strcmp(w, "tma")) {
			p.type = ptpkt_tma;
			p.u.tma.ctc = (uint16_t)v;
		} else if (!strcmp(w, "cbr")) {
			p.type = ptpkt_cbr;
			p.u.cbr.ratio = (uint8_t)v;
		} else if (!strcmp(w, "cyc")) {
			p.type = ptpkt_cyc;
			p.u.cyc.cyc = v;
		} else if (!strcmp(w, "mtc")) {
			p.type = ptpkt_mtc;
			p.u.mtc.ctc = (uint8_t)v;
		} else if (!strcmp(w, "raw")) {
			for (const char *c = arg; c[0] && c[1]; c += 2) {
				unsigned x;
				sscanf(c, "%2x", &x);
				tr[tn++] = (uint8_t)x;
			}
			continue;
		} else {
			fprintf(stderr, "scenario: unknown word '%s'\n", w);
			exit(2);
		}
		pk(p);
	}
}

/* ---- output ---- */
static char out[8192];
static size_t on;

static void put(const char *fmt, unsigned long long a, unsigned long long b)
{
	if (on)
		on += (size_t)snprintf(out + on, sizeof(out) - on, " ");
	on += (size_t)snprintf(out + on, sizeof(out) - on, fmt, a, b);
}

static void s_run(void *ctx, const struct ptflow_run *r)
{
	(void)ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		put("%llx", ip, 0);
		ip += r->lens[i];
	}
}

static uint32_t error_errata;	/* the errata hints of the errors */
static uint64_t last_times[16];
static uint32_t last_lost_mtc[16], last_lost_cyc[16];
static unsigned ntimes;

static void s_event(void *ctx, const struct ptflow_event *ev)
{
	(void)ctx;
	char f[96];
	if (ntimes < 16) {
		last_lost_mtc[ntimes] = ev->lost_mtc;
		last_lost_cyc[ntimes] = ev->lost_cyc;
		last_times[ntimes++] = ev->has_time ? ev->tsc : 0;
	}
	if (ev->type == PTFLOW_EV_ERROR) {
		error_errata |= ev->errata;
		/* by its code; msg is the same text */
		const char *what = ev->err == PTFLOW_ERR_PACKET ? ptpkt_errstr((int)ev->aux)
								: ptflow_errstr(ev->err);
		snprintf(f, sizeof(f), "[error %%llx: %s%s]", what, strcmp(what, ev->msg) ? " (msg differs)" : "");
		put(f, ev->ip, 0);
	} else if (ev->type == PTFLOW_EV_INTERRUPT) {
		put("[interrupt %llx>%llx]", ev->ip, ev->target);
	} else if (ev->type == PTFLOW_EV_EXEC_MODE || ev->type == PTFLOW_EV_TSX ||
		   ev->type == PTFLOW_EV_PTWRITE || ev->type == PTFLOW_EV_PAGING ||
		   ev->type == PTFLOW_EV_CFE) {
		snprintf(f, sizeof(f), "[%s%s %%llx]", ptflow_ev_name(ev->type), ev->has_ip ? "@%llx" : "");
		if (ev->has_ip)
			put(f, ev->ip, ev->value);
		else
			put(f, ev->value, 0);
	} else if (ev->has_ip) {
		snprintf(f, sizeof(f), "[%s %%llx]", ptflow_ev_name(ev->type));
		put(f, ev->ip, 0);
	} else {
		snprintf(f, sizeof(f), "[%s]", ptflow_ev_name(ev->type));
		put(f, 0, 0);
	}
}

static struct ptflow_config cfg;
static uint32_t errata_used;

static void decode_with(uint32_t cache_size)
{
	static struct ptflow_block cache[64];
	struct ptflow_decoder d;
	struct ptflow_sink sink = { NULL, s_run, s_event };
	cfg.image.read = img_read;
	cfg.cache = cache_size ? cache : NULL;
	cfg.cache_size = cache_size;
	on = 0;
	out[0] = 0;
	ntimes = 0;
	error_errata = 0;
	ptflow_init(&d, &cfg, &sink);
	ptflow_decode(&d, tr, tn, 0);
	errata_used = d.stat.errata_used;
}

/*
 * Decode the trace twice: block by block (cache 0) and with the cache
 * (the fast loops); both must give the same instructions and events, times
 * included. out and the times are the cached decode's.
 */
static void decode(const char *name)
{
	static char slow[sizeof(out)];
	uint64_t times[16];
	unsigned n;
	decode_with(0);
	memcpy(slow, out, sizeof(out));
	memcpy(times, last_times, sizeof(times));
	n = ntimes;
	decode_with(64);
	CHECKF(!strcmp(out, slow) && n == ntimes && !memcmp(times, last_times, n * sizeof(*times)),
	       name, "cache 0 and cache 64 differ\n  cache 0: %s\n cache 64: %s", slow, out);
}

enum { DISTNT = 1, DISRETC = 2, STEPS3 = 4 /* max_steps 3 */ };

struct scenario {
	const char *name;	/* the SDM section or the erratum (libipt's names) */
	uint32_t errata;	/* PTFLOW_ERRATUM_* */
	unsigned opts;		/* DISTNT, DISRETC, STEPS3 */
	const char *packets;	/* see build() */
	const char *expected;	/* the decoder's output, see s_run()/s_event() */
};

static const struct scenario scenarios[] = {
	/* 33.4.2.1 TNT, 33.4.2.2 TIP and RET compression: taken Jcc, direct
	 * call, compressed RET, indirect jmp, uncompressed RET (empty stack),
	 * SYSCALL leaving the traced context (TIP.PGD, IP suppressed) */
	{ "33.7 tnt, compressed ret, tip, far transfer disables", 0, 0,
	  "start:1000 tnt:!! tip:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 100d 1020 1021 100f [disabled]" },
	{ "33.4.2.1 not-taken jcc, direct jmp without packets", 0, 0,
	  "start:1000 tnt:.! tip:100f pgd",
	  "[enabled 1000] 1000 1001 1003 1004 1008 1020 1021 100d 100f [disabled]" },
	/* DisRETC: every RET sends a TIP */
	{ "33.2.1.2 disretc: ret with tip", 0, DISRETC,
	  "start:1000 tnt:! tip:100d tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 100d 100f [disabled]" },
	/* a taken bit for a RET whose CALL was not seen is an error */
	{ "33.4.2.2 compressed ret needs a seen call", 0, 0,
	  "start:1020 tnt:!",
	  "[enabled 1020] [error 1021: compressed ret: empty call stack]" },
	/* every near RET pops the call stack, also one sent as a TIP */
	{ "33.4.2.2 uncompressed ret pops the call stack too", 0, 0,
	  "start:1008 tip:1022 tnt:!",
	  "[enabled 1008] 1008 1020 1021 1022 [error 1027: compressed ret: empty call stack]" },
	/* CALL with displacement 0 is not a call: nothing to compress against */
	{ "33.4.2.2 zero-length call is not pushed", 0, 0,
	  "start:1022 tip:1003 fup:1008 pgd",
	  "[enabled 1022] 1022 1027 1003 1004 [async disabled 1008]" },
	/* interrupt: FUP (next IP) + TIP (handler); the instruction at the FUP
	 * did not execute yet */
	{ "33.7 interrupt fup+tip", 0, 0,
	  "start:1000 tnt:. fup:1004 tip:1020 tip:1004 fup:1008 pgd",
	  "[enabled 1000] 1000 1001 1003 [interrupt 1004>1020] 1020 1021 1004 [async disabled 1008]" },
	/* PSB+ in the middle: status only, call stack reset */
	{ "33.3.7 psb+ is status; no ret compression across psb", 0, 0,
	  "start:1008 psb mode64 fup:1020 psbend tnt:!",
	  "[enabled 1008] 1008 [error 1021: compressed ret: empty call stack]" },
	/* PSB+ without FUP: tracing is off until TIP.PGE */
	{ "33.7 psb+ without fup then tip.pge", 0, 0,
	  "psb mode64 psbend pge:1020 tip:100f pgd",
	  "[enabled 1020] 1020 1021 100f [disabled]" },
	/* synchronising at a PSB+ with a FUP: tracing on at that IP */
	{ "33.3.7 sync at psb+ with fup", 0, 0,
	  "psb mode64 fup:1020 psbend tip:100f pgd",
	  "1020 1021 100f [disabled]" },
	{ "33.3.8 ovf then fup", 0, 0,
	  "start:1000 tnt:! ovf fup:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [overflow] 1020 1021 100f [disabled]" },
	/* overflow while tracing is off: recovered with TIP.PGE */
	{ "33.3.8 ovf then tip.pge", 0, 0,
	  "start:100f pgd ovf pge:1020 tip:100f pgd",
	  "[enabled 100f] 100f [disabled] [overflow] [enabled 1020] 1020 1021 100f [disabled]" },
	/* MODE.Exec takes effect at the next TIP: 32-bit code at 0x2000 */
	{ "33.4.2.8 mode.exec applies at the tip", 0, 0,
	  "start:100f mode32 tip:2000 fup:2002 pgd",
	  "[enabled 100f] 100f [exec mode@2000 1] 2000 2001 [async disabled 2002]" },
	/* 16-bit code at the reset vector: IPs are linear (33.3.1.1), MODE.Exec
	 * says 16-bit (33.4.2.8); the direct jmp, je and call land at CS base
	 * 0xFFFF0000 + IP, and the RET compresses against that call */
	{ "33.3.1.1 lip: 16-bit direct branches at the reset vector", 0, 0,
	  "psb mode16 psbend pge:fffffff0 tnt:!! fup:ffffff09 pgd",
	  "[enabled fffffff0] fffffff0 fffffff1 fffffff2 ffffff00 ffffff01 ffffff05 "
	  "ffffff0b ffffff08 [async disabled ffffff09]" },
	/* below 64 KiB 16-bit code has CS base 0: the IP wraps to 0 */
	{ "33.3.1.1 lip: 16-bit ip wraps at 64 KiB with cs base 0", 0, 0,
	  "psb mode16 psbend pge:fff0 fup:1 pgd",
	  "[enabled fff0] fff0 0 [async disabled 1]" },
	/* TSX: MODE.TSX + FUP gives the IP; abort: + TIP to the handler */
	{ "33.4.2.8 mode.tsx begin and abort", 0, 0,
	  "start:1003 tsx:intx fup:1004 tsx:abort fup:1008 tip:100f pgd",
	  "[enabled 1003] 1003 [tsx@1004 1] 1004 [tsx@1008 2] 100f [disabled]" },
	/* TSX commit: MODE.TSX + FUP is stand-alone; the TIP after it is the
	 * indirect JMP's at the FUP's IP (Table 33-10) */
	{ "33.2.9.1 mode.tsx commit fup is stand-alone", 0, 0,
	  "start:100d tsx:commit fup:100d tip:1020 tip:100f pgd",
	  "[enabled 100d] [tsx@100d 0] 100d 1020 1021 100f [disabled]" },
	/* Event Trace: CFE.INTR without IP binds to the interrupt's FUP (Table
	 * 33-59 case 4); with IP its FUP stands alone (case 1) */
	{ "33.4.2.29 cfe binds to the next fup", 0, 0,
	  "start:1000 tnt:. cfe:0,1,20 fup:1004 tip:1020 tip:100d cfe:1,2,0 fup:100d tip:100f pgd",
	  "[enabled 1000] 1000 1001 1003 [cfe@1004 2001] [interrupt 1004>1020] 1020 1021 "
	  "[cfe@100d 2] 100d 100f [disabled]" },
	/* the PTW packet binds to the PTWRITE instruction */
	{ "33.4.2.21 ptw at the ptwrite", 0, 0,
	  "start:1014 ptw:8,42 fup:101c pgd",
	  "[enabled 1014] 1014 [ptwrite@1014 42] 1019 [async disabled 101c]" },
	{ "33.4.2.7 pip at the mov cr3", 0, 0,
	  "start:1019 pip:5000 fup:101c pgd",
	  "[enabled 1019] 1019 [paging@1019 5000] [async disabled 101c]" },
	/* CR3 filtering (33.2.5.2): a MOV CR3 to a CR3 that does not match
	 * clears ContextEn: PIP, then TIP.PGD without IP, which binds to that
	 * MOV CR3 (Table 33-21); tracing resumes at a MOV CR3 back: PIP (OS=1
	 * traces it while ContextEn is 0), TIP.PGE at the next instruction */
	{ "33.2.5.2 cr3 filter: pgd after the pip of a mov cr3", 0, 0,
	  "start:1019 pip:5000 pgd pip:6000 pge:101d fup:101f pgd",
	  "[enabled 1019] 1019 [paging@1019 5000] [disabled] [paging 6000] [enabled 101d] 101d "
	  "101e [async disabled 101f]" },
	/* interrupt into another address space: FUP, PIP, TIP */
	{ "33.7 interrupt fup, pip, tip", 0, 0,
	  "start:1000 tnt:. fup:1004 pip:7000 tip:100f pgd",
	  "[enabled 1000] 1000 1001 1003 [paging 7000] [interrupt 1004>100f] 100f [disabled]" },
	{ "33.4.2.7 pip before a far transfer's tip", 0, 0,
	  "start:100f pip:6000 tip:1020 tip:100f pgd",
	  "[enabled 100f] [paging 6000] 100f 1020 1021 100f [disabled]" },
	{ "33.4.2.9 tracestop", 0, 0,
	  "start:100f stop pgd",
	  "[enabled 100f] [stopped] 100f [disabled]" },
	/* DisTNT: a conditional branch cannot be followed; resume at the next IP */
	{ "33.3.9 distnt gap", 0, DISTNT,
	  "start:1000 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [gap 1001] 100f [disabled]" },
	/* DisTNT: after the gap the next FUP is still an event at its IP */
	{ "33.3.9 distnt gap then interrupt", 0, DISTNT,
	  "start:1000 fup:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [gap 1001] [interrupt 1020>100f] 100f [disabled]" },
	{ "33.3.9 distnt gap then mode.tsx, tip.pgd", 0, DISTNT | DISRETC,
	  "start:1000 tsx:intx fup:1003 tip:100f pgd:5000",
	  "[enabled 1000] 1000 1001 [gap 1001] [tsx@1003 1] 1003 1004 1008 1020 1021 100f [disabled 5000]" },
	/* DisTNT: a TNT packet (none should come) does not decide a Jcc */
	{ "33.3.9 distnt: a tnt bit does not follow a jcc", 0, DISTNT | DISRETC,
	  "start:1000 tnt:! tip:100f pgd",
	  "[enabled 1000] 1000 1001 [gap 1001] 100f [disabled]" },
	{ "33.3.9 distnt gap then tip.pgd", 0, DISTNT,
	  "start:1000 pgd:5000",
	  "[enabled 1000] 1000 1001 [gap 1001] [disabled 5000]" },
	/* DisTNT with RET compression: a RET with its call on the stack may
	 * have been compressed (no bit): the flow is lost there; after a gap
	 * the stack is unknown, so at any RET; with a known empty stack the
	 * RET sends a TIP */
	{ "33.3.9 distnt, ret with a call on the stack is a gap", 0, DISTNT,
	  "start:1008 tip:100d tip:100f pgd",
	  "[enabled 1008] 1008 1020 1021 [gap 1021] 100d 100f [disabled]" },
	{ "33.3.9 distnt, ret after a gap is a gap", 0, DISTNT,
	  "start:1000 tip:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [gap 1001] 1020 1021 [gap 1021] 100f [disabled]" },
	{ "33.3.9 distnt, ret with an empty stack takes a tip", 0, DISTNT,
	  "start:1020 tip:100f pgd",
	  "[enabled 1020] 1020 1021 100f [disabled]" },
	/* FilterEn cleared by a Jcc: TIP.PGD without IP replaces the TNT bit */
	{ "33.4.2.5 jcc leaves the filter region", 0, 0,
	  "start:1000 pgd",
	  "[enabled 1000] 1000 1001 [disabled]" },
	/* WRMSR clearing TraceEn: TIP.PGD without IP, after the WRMSR */
	{ "33.7 wrmsr clears traceen", 0, 0,
	  "start:3000 pgd",
	  "[enabled 3000] 3000 3001 [disabled]" },
	/* direct branch leaving the filter region: TIP.PGD with its target */
	{ "33.4.2.5 direct jmp leaves the filter region", 0, 0,
	  "start:1003 pgd:1008",
	  "[enabled 1003] 1003 1004 [disabled 1008]" },
	/* errors: no code at the IP; straight-line walk without end; bad
	 * packet, then resync at the next PSB */
	{ "error: no code at ip", 0, 0,
	  "start:5000 tnt:!",
	  "[enabled 5000] [error 5000: no code at the ip (not in any image)]" },
	{ "error: bounded work without packets", 0, STEPS3,
	  "start:1028 tnt:!",
	  "[enabled 1028] 1028 1028 1028 [error 1028: too many instructions without a packet]" },
	/* the fast loop reads the packet after the SYSCALL's TIP.PGD itself:
	 * the error is the packet's, as block by block */
	{ "error: bad packet after tracing stops", 0, 0,
	  "start:100f pgd raw:d9d9",
	  "[enabled 100f] 100f [disabled] [error 100f: unknown opcode]" },
	{ "error: bad packet, resync at psb", 0, 0,
	  "start:1000 raw:d9d9 psb mode64 psbend pge:100f pgd",
	  "[enabled 1000] [error 1000: unknown opcode] [enabled 100f] 100f [disabled]" },

	/* ---- errata ---- */
	/* BDM70: PSB+ holds FUP and MODE.Exec while tracing is off, then TIP.PGE */
	{ "bdm70-psb_fup-tip_pge", PTFLOW_ERRATUM_BDM70, 0,
	  "psb mode64 fup:1003 psbend pge:1020 tip:100f pgd",
	  "[enabled 1020] 1020 1021 100f [disabled]" },
	{ "bdm70-psb_fup-tip_pge without workaround is an error", 0, 0,
	  "psb mode64 fup:1003 psbend pge:1020",
	  "[error 1003: tip.pge while tracing is enabled]" },
	/* BDM64: the TIP before a TSX abort has a wrong target (the RET really
	 * went to 100d, then the abort hit at 1004); the abort's FUP cannot be
	 * reached from it */
	{ "bdm64-tip-tsx_abort", PTFLOW_ERRATUM_BDM64, 0,
	  "start:1000 tnt:! tip:1020 tsx:abort fup:1004 tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 [tsx@1004 2] 100f [disabled]" },
	{ "bdm64 without workaround is an error", 0, 0,
	  "start:1000 tnt:! tip:1020 tsx:abort fup:1004 tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 1020 1021 "
	  "[error 1021: indirect branch: expected tip]" },
	/* SKD007: OVF in the middle of a multi-byte CYC (first byte with Exp
	 * set, then OVF) */
	{ "skd007-cyc-ovf", PTFLOW_ERRATUM_SKD007, 0,
	  "start:1000 tnt:! raw:0702f3 fup:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [overflow] 1020 1021 100f [disabled]" },
	/* SKD022: VM entry clearing TraceEn sends FUP before TIP.PGD */
	{ "skd022-vmlaunch-fup-tip_pgd", PTFLOW_ERRATUM_SKD022, 0,
	  "start:1011 fup:1011 pgd",
	  "[enabled 1011] 1011 [disabled]" },
	{ "skd022 without workaround", 0, 0,
	  "start:1011 fup:1011 pgd",
	  "[enabled 1011] [async disabled 1011]" },
	/* SKD010: no FUP after OVF; the next TIP gives the IP */
	{ "skd010-ovf-tip", PTFLOW_ERRATUM_SKD010, 0,
	  "start:1000 tnt:! ovf tip:1020 tip:100f pgd",
	  "[enabled 1000] 1000 1001 [overflow] 1020 1021 100f [disabled]" },
	/* SKL014: TIP.PGD without IP after a direct branch out of the region */
	{ "skl014-direct_jmp-tip_pgd", PTFLOW_ERRATUM_SKL014, 0,
	  "start:1003 pgd",
	  "[enabled 1003] 1003 1004 [disabled 1008]" },
	/* APL11: OVF followed by TIP.PGD */
	{ "apl11-ovf-tip_pgd", PTFLOW_ERRATUM_APL11, 0,
	  "start:1000 tnt:! ovf pgd pge:100f pgd",
	  "[enabled 1000] 1000 1001 [overflow] [enabled 100f] 100f [disabled]" },
	{ "apl11 without workaround is an error", 0, 0,
	  "start:1000 tnt:! ovf pgd",
	  "[enabled 1000] 1000 1001 [overflow] [error 1006: tip.pgd while tracing is disabled]" },
	/* APL12: OVF followed by an unexpected FUP while tracing is off */
	{ "apl12-ovf-fup-tip_pge", PTFLOW_ERRATUM_APL12, 0,
	  "start:1000 tnt:! ovf fup:1003 pge:100f pgd",
	  "[enabled 1000] 1000 1001 [overflow] [enabled 100f] 100f [disabled]" },
	/* SKZ84: a corrupt TMA followed by one bogus byte; also where a TMA
	 * mostly is: in PSB+, after the TSC */
	{ "skz84-tma-bogus-byte", PTFLOW_ERRATUM_SKZ84, 0,
	  "start:1000 tma:1 raw:d9 tnt:! tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 100f [disabled]" },
	{ "skz84-tma-bogus-byte-in-psb+", PTFLOW_ERRATUM_SKZ84, 0,
	  "start:1000 tnt:! psb tsc:1234 tma:1 raw:d9 mode64 fup:1006 psbend tip:100f pgd",
	  "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 100f [disabled]" },
	{ "skz84 in psb+ without workaround is an error", 0, 0,
	  "start:1000 tnt:! psb tsc:1234 tma:1 raw:d9 mode64 fup:1006 psbend tip:100f pgd",
	  "[enabled 1000] 1000 1001 [error 1006: bad packet in psb+]" },
};

/* Decode sc's packets with errata e: the output in out. */
static void decode_as(const struct scenario *sc, uint32_t e)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.errata = e;
	cfg.distnt = sc->opts & DISTNT;
	cfg.disretc = sc->opts & DISRETC;
	cfg.max_steps = sc->opts & STEPS3 ? 3 : 0;
	build(sc->packets);
	decode(sc->name);
}

/*
 * PTFLOW_ERRATA_SDM_SAFE, the workarounds applied when the CPU is unknown,
 * cannot change the decode of a trace that follows the SDM: every SDM
 * scenario (and every error scenario that is no erratum's pattern)
 * decodes with them exactly as without; the patterns of their errata
 * decode as with the erratum. Each erratum left out changes the decode of
 * a trace that follows the SDM, shown here.
 */
static void check_sdm_safe(void)
{
	int bad = 0, n = 0;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *sc = &scenarios[i];
		if (strstr(sc->name, "without workaround"))
			continue; /* an erratum's pattern, not the SDM's */
		if (sc->errata && !(sc->errata & PTFLOW_ERRATA_SDM_SAFE))
			continue;
		decode_as(sc, PTFLOW_ERRATA_SDM_SAFE);
		n++;
		if (strcmp(out, sc->expected)) {
			bad++;
			fprintf(stderr, "# %s with the safe errata: %s\n", sc->name, out);
		}
	}
	CHECKF(!bad && n > 40, "errata when the CPU is unknown: every SDM scenario decodes the same",
	       "%d of %d differ", bad, n);
	CHECK(PTFLOW_ERRATA_SDM_SAFE == (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12 |
					 PTFLOW_ERRATUM_SKD010 | PTFLOW_ERRATUM_APL11),
	      "errata when the CPU is unknown: BDM70, APL12, SKD010, APL11");
	/* the others: a trace that follows the SDM, decoded differently */
	static const struct scenario unsafe[] = {
		/* 33.4.2.5: a direct jmp, then a Jcc that leaves the filter
		 * region (TIP.PGD without IP); SKL014 stops at the jmp */
		{ "skl014 rereads a jcc leaving the region", PTFLOW_ERRATUM_SKL014, 0,
		  "psb mode16 psbend pge:fffffff0 pgd",
		  "[enabled fffffff0] fffffff0 fffffff1 fffffff2 ffffff00 ffffff01 [disabled]" },
		/* an interrupt right before a VMLAUNCH, its handler not traced */
		{ "skd022 rereads an async disable at a vmlaunch", PTFLOW_ERRATUM_SKD022, 0,
		  "start:1011 fup:1011 pgd", "[enabled 1011] [async disabled 1011]" },
		/* a TSX abort past a block of 48 straight instructions */
		{ "bdm64 takes an abort before its fup", PTFLOW_ERRATUM_BDM64, 0,
		  "start:4000 tsx:abort fup:4034 tip:100f pgd", NULL },
		/* a CYC ending in 02 and a one-byte CYC F3 */
		{ "skd007 reads two cyc as an ovf", PTFLOW_ERRATUM_SKD007, 0,
		  "start:1000 raw:0702f3 tnt:.! tip:100f pgd",
		  "[enabled 1000] 1000 1001 1003 1004 1008 1020 1021 100d 100f [disabled]" },
		/* a TMA followed by a TNT */
		{ "skz84 skips the byte after a tma", PTFLOW_ERRATUM_SKZ84, 0,
		  "start:1000 tma:1 tnt:!! tip:1020 tip:100f pgd", NULL },
	};
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++) {
		const struct scenario *sc = &unsafe[i];
		static char strict[sizeof(out)];
		decode_as(sc, 0);
		snprintf(strict, sizeof(strict), "%s", out);
		bool clean = !strstr(strict, "[error") && (!sc->expected || !strcmp(strict, sc->expected));
		decode_as(sc, sc->errata);
		bool changes = strcmp(out, strict) != 0;
		decode_as(sc, PTFLOW_ERRATA_SDM_SAFE);
		CHECKF(clean && changes && !strcmp(out, strict) && !(sc->errata & PTFLOW_ERRATA_SDM_SAFE),
		       sc->name, "strict: %s; with the safe set: %s", strict, out);
	}
	/* which workarounds acted, and the patterns of the others named */
	decode_as(&(struct scenario){ "bdm70 with the safe set", 0, 0,
				      "psb mode64 fup:1003 psbend pge:1020 tip:100f pgd", NULL },
		  PTFLOW_ERRATA_SDM_SAFE);
	CHECKF(errata_used == (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12) && !strcmp(out, "[enabled 1020] 1020 1021 100f [disabled]"),
	       "errata used: bdm70's workaround acted", "used %#x: %s", errata_used, out);
	decode_as(&(struct scenario){ "bdm70 without", 0, 0,
				      "psb mode64 fup:1003 psbend pge:1020", NULL }, 0);
	CHECKF(error_errata == (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12),
	       "error hint: the bdm70 pattern without its workaround", "%#x", error_errata);
	decode_as(&(struct scenario){ "skz84 without", 0, 0,
				      "start:1000 tnt:! psb tsc:1234 tma:1 raw:d9 mode64 fup:1006 psbend",
				      NULL }, PTFLOW_ERRATA_SDM_SAFE);
	CHECKF(error_errata == PTFLOW_ERRATUM_SKZ84, "error hint: a bogus byte after a tma is skz84's",
	       "%#x: %s", error_errata, out);
	decode_as(&(struct scenario){ "bdm64 without", 0, 0,
				      "start:1000 tnt:! tip:1020 tsx:abort fup:1004 tip:100f pgd",
				      NULL }, PTFLOW_ERRATA_SDM_SAFE);
	CHECKF(error_errata == PTFLOW_ERRATUM_BDM64, "error hint: an abort's fup out of reach is bdm64's",
	       "%#x: %s", error_errata, out);
	decode_as(&(struct scenario){ "no hint", 0, 0, "start:5000 tnt:!", NULL }, 0);
	CHECKF(error_errata == 0, "error hint: none for an error no erratum explains", "%#x", error_errata);
}

int main(void)
{
	memset(nops, 0x90, sizeof(nops) - 1);
	nops[sizeof(nops) - 1] = 0xc3;
	memset(nop_loop, 0x90, 60);
	memcpy(nop_loop + 60, "\x75\xc2\xe8\xbd\xef\xff\xff", 7);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *sc = &scenarios[i];
		memset(&cfg, 0, sizeof(cfg));
		cfg.errata = sc->errata;
		cfg.distnt = sc->opts & DISTNT;
		cfg.disretc = sc->opts & DISRETC;
		cfg.max_steps = sc->opts & STEPS3 ? 3 : 0;
		build(sc->packets);
		decode(sc->name);
		CHECKF(!strcmp(out, sc->expected), sc->name, "\n     got: %s\n    want: %s", out,
		       sc->expected);
	}

	check_sdm_safe();

	/* A CALL to itself after the last packet: the fast loop takes direct
	 * CALLs without reading a packet, so it has to stop at the step limit
	 * as block by block does (max_steps above 255: the fast loop runs) */
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_steps = 300;
	build("start:6000 tnt:!");
	decode("error: bounded work through calls, cache 0 decodes the same");
	unsigned ncalls = 0;
	for (const char *p = out; (p = strstr(p, " 6000 ")); p++)
		ncalls++;
	CHECKF(ncalls == 300 && strstr(out, "[error 6000: too many instructions without a packet]"),
	       "error: bounded work through calls without packets", "%u calls: %s", ncalls, out);

	/* The same with an MTC that the fast loop reads between two TNTs:
	 * two bits through the 61-instruction loop at 7000, the MTC, a bit
	 * for the calls: 703e calls 6000, which calls itself, 600 steps from
	 * the last packet (max_steps 600: the fast loop takes two bits, 2 *
	 * 255 steps at most) */
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_steps = 600;
	build("start:7000 tnt:!. mtc:1 tnt:!");
	decode("error: the step limit after an MTC amid the fast loop, cache 0 decodes the same");
	ncalls = 0;
	for (const char *p = out; (p = strstr(p, " 6000 ")); p++)
		ncalls++;
	CHECKF(ncalls == 599 && strstr(out, "[error 6000: too many instructions without a packet]"),
	       "error: the step limit counts from the last packet after an MTC", "%u calls: %s", ncalls,
	       out);

	/* Timing: TSC, then CYC with CBR, and TMA+MTC (33.8.3); decimal: TSC
	 * 1000, CBR 10, CYC 5, TSC 2000, TMA CTC 0x100, MTC 0x22 */
	memset(&cfg, 0, sizeof(cfg));
	build("start:100f tsc:3e8 cbr:a cyc:5 pgd tsc:7d0 tma:100 mtc:22 pge:100f pgd");
	cfg.nom_freq = 20;
	cfg.mtc_freq = 3;
	cfg.cpuid15_eax = 1;
	cfg.cpuid15_ebx = 4;
	decode("33.8.3 timing, cache 0 decodes the same");
	CHECKF(!strcmp(out, "[enabled 100f] 100f [disabled] [enabled 100f] 100f [disabled]"),
	       "33.8.3 timing packets do not disturb the flow", "got %s", out);
	CHECKF(last_times[1] == 1010 && last_times[2] == 2064 && last_times[3] == 2064,
	       "33.8.3 tsc + cyc*nom/cbr, tma+mtc*ebx/eax",
	       "times %llu %llu %llu %llu", (unsigned long long)last_times[0],
	       (unsigned long long)last_times[1], (unsigned long long)last_times[2],
	       (unsigned long long)last_times[3]);

	/* Timing packets between the TNT and TIP packets the hot loop reads
	 * itself still reach the time: TSC 1000, TMA 0, CBR 10, nominal 20,
	 * P = 100; CYC 5, MTC 0x01 (1100), CYC 3 and 2: 1100 + 5 * 2 */
	memset(&cfg, 0, sizeof(cfg));
	build("psb tsc:3e8 tma:0 cbr:a mode64 psbend pge:1000 cyc:5 tnt:!! mtc:1 cyc:3 tip:100f cyc:2 pgd");
	cfg.nom_freq = 20;
	cfg.cpuid15_eax = 1;
	cfg.cpuid15_ebx = 100;
	decode("33.8.3 timing amid the hot loop, cache 0 decodes the same");
	CHECKF(!strcmp(out, "[enabled 1000] 1000 1001 1006 1007 1008 1020 1021 100d 100f [disabled]") &&
	       ntimes == 2 && last_times[0] == 1000 && last_times[1] == 1110,
	       "33.8.3 timing packets amid the hot loop's tnt and tip", "%s; times %llu %llu", out,
	       (unsigned long long)last_times[0], (unsigned long long)last_times[1]);

	/*
	 * SKL168: a CYC right before a PSB may be dropped, possibly with an
	 * MTC. PSB+ with TSC 1000, TMA CTC 0, CBR 10; nominal ratio 20, P = 100,
	 * MTCFreq 0. CYC 10 (20 ticks), then the dropped CYC and MTC 0x01, a
	 * PSB+ without TSC, CYC 4 (8 ticks): the estimate keeps the cycles
	 * from before the PSB (1028, not 1008) and marks the CYC after it;
	 * MTC 0x02 covers the dropped one's period too (1000 + 2 * 100) and
	 * starts over.
	 */
	for (int w = 1; w >= 0; w--) {
		memset(&cfg, 0, sizeof(cfg));
		build("psb tsc:3e8 tma:0 cbr:a mode64 psbend pge:100f cyc:a pgd "
		      "psb mode64 psbend cyc:4 pge:100f mtc:2 pgd");
		cfg.errata = w ? PTFLOW_ERRATUM_SKL168 : 0;
		cfg.nom_freq = 20;
		cfg.cpuid15_eax = 1;
		cfg.cpuid15_ebx = 100;
		decode(w ? "skl168, cache 0 decodes the same" : "no skl168, cache 0 decodes the same");
		bool flow = !strcmp(out, "[enabled 100f] 100f [disabled] [enabled 100f] 100f [disabled]");
		bool times = ntimes == 4 && last_times[0] == 1000 && last_times[1] == 1020 &&
			     last_times[2] == 1028 && last_times[3] == 1200;
		bool lost = last_lost_cyc[0] == 0 && last_lost_cyc[1] == 0 &&
			    last_lost_cyc[2] == (uint32_t)w && last_lost_cyc[3] == 0 &&
			    last_lost_mtc[2] == 0 && last_lost_mtc[3] == 1;
		CHECKF(flow && times && lost,
		       w ? "skl168-cyc-psb" : "skl168 without workaround: nothing marked",
		       "%s; times %llu %llu %llu %llu; lost cyc %u %u %u %u, mtc %u", out,
		       (unsigned long long)last_times[0], (unsigned long long)last_times[1],
		       (unsigned long long)last_times[2], (unsigned long long)last_times[3],
		       last_lost_cyc[0], last_lost_cyc[1], last_lost_cyc[2], last_lost_cyc[3],
		       last_lost_mtc[3]);
	}

	/* every error code has its own text */
	{
		int bad = 0;
		for (int i = 0; i < PTFLOW_ERR_COUNT; i++)
			for (int j = 0; j < i; j++)
				bad += !strcmp(ptflow_errstr(i), ptflow_errstr(j)) || !strcmp(ptflow_errstr(i), "?");
		CHECKF(!bad && !strcmp(ptflow_errstr(PTFLOW_ERR_COUNT), "?"), "ptflow_errstr: a text per code",
		       "%d duplicates", bad);
	}

	/* errata selection by CPU */
	CHECK(ptflow_errata_for_cpu(6, 0x3d, -1) & PTFLOW_ERRATUM_BDM70, "errata: broadwell has bdm70");
	CHECK(ptflow_errata_for_cpu(6, 0x4e, 3) & PTFLOW_ERRATUM_SKL014, "errata: skylake has skl014");
	CHECK(ptflow_errata_for_cpu(6, 0x5c, -1) & PTFLOW_ERRATUM_APL11, "errata: apollo lake has apl11");
	CHECK(ptflow_errata_for_cpu(6, 0x2a, -1) == 0, "errata: sandy bridge has none of these");
	CHECK(ptflow_errata_for_cpu(15, 0x4e, -1) == 0, "errata: only family 6");
	return check_exit();
}
