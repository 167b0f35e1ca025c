/*
 * The QEMU plugin's inference (qemu-plugin/infer.c, ptgen.c) without QEMU:
 * feed it executions of hand-made 64-bit code the way QEMU's callbacks come
 * (REP iterations repeated, interrupts as jumps to a handler), decode what
 * it wrote with efipt's flow decoder, and require exactly the instructions
 * executed, with no decode error; and libipt's pt_insn_next the same.
 * t_qemu_plugin.sh does the same on OVMF.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "check.h"
#include "ptgen_buf.h"
#include "tests/libipt_insn.h"
#include "core/pt_flow.h"
#include "core/pt_image.h"
#include "qemu-plugin/infer.h"

#define BASE 0x1000
static uint8_t code[0x400];

/* the code: offsets from BASE */
static void put(unsigned off, const char *hex)
{
	for (unsigned i = 0; hex[2 * i]; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		code[off + i] = (uint8_t)v;
	}
}

static void build_code(void)
{
	memset(code, 0x90, sizeof(code));
	put(0x000, "e8fb000000");	/* 1000 call 1100 */
	put(0x005, "7402");		/* 1005 jz 1009 */
	put(0x007, "9090");		/* 1007 nop; 1008 nop */
	put(0x009, "f3aa");		/* 1009 rep stosb */
	put(0x00b, "ffe0");		/* 100b jmp rax */
	put(0x020, "cd03");		/* 1020 int 3 */
	put(0x022, "90");		/* 1022 nop */
	put(0x023, "e9d8ffffff");	/* 1023 jmp 1000 */
	put(0x030, "e80b000000");	/* 1030 call 1040 */
	put(0x040, "e8bb000000");	/* 1040 call 1100 */
	put(0x050, "c3");		/* 1050 ret */
	/* no packet, no branch (x86_pt_report() == X86_PT_NONE) */
	put(0x060, "f30faee0");		/* 1060 ptwrite eax */
	put(0x064, "90");		/* 1064 nop */
	put(0x065, "e9b8ffffff");	/* 1065 jmp 1022 */
	put(0x070, "0f22d8");		/* 1070 mov cr3, rax */
	put(0x073, "90");		/* 1073 nop */
	put(0x074, "e9a9ffffff");	/* 1074 jmp 1022 */
	put(0x080, "f4");		/* 1080 hlt */
	put(0x081, "9090");		/* 1081 nop; 1082 nop */
	put(0x090, "0f0b");		/* 1090 ud2 */
	put(0x092, "9090");		/* 1092 nop; 1093 nop */
	put(0x100, "90c3");		/* 1100 nop; 1101 ret */
	put(0x200, "9048cf");		/* 1200 nop; 1201 iretq (handler) */
	put(0x300, "0f1f844500505431"); /* not a marker (SIB 45): an 8-byte nop */
	put(0x308, "0f1f840045505431"); /* 1308 start marker */
	put(0x310, "90");		/* 1310 nop */
	put(0x311, "0f1f840045505430"); /* 1311 stop marker */
	put(0x319, "90");		/* 1319 nop */
	put(0x320, "0f30");		/* 1320 wrmsr (start=guest: TraceEn on) */
	put(0x322, "7401");		/* 1322 jz 1325 */
	put(0x324, "90");		/* 1324 nop */
	put(0x325, "0f30");		/* 1325 wrmsr (TraceEn off) */
	put(0x327, "90");		/* 1327 nop */
	/* CR3 filtering: 1330, 1335, 133a mov cr3, rax; nops between, and at
	 * 1338 jmp 133a (a decoder walking on for a TIP.PGD passes it) */
	put(0x330, "0f22d890900f22d8eb000f22d89090");
}

/* one struct pinsn per address, as QEMU's translation would make */
static struct pinsn pins[sizeof(code)];
static bool by_blocks;		/* feed_blocks() instead of one at a time */
static struct pinsn *pin(uint64_t a)
{
	struct pinsn *p = &pins[a - BASE];
	if (!p->len) {
		struct x86_insn in;
		int n = x86_decode(&in, code + (a - BASE), sizeof(code) - (a - BASE), a, X86_MODE_64);
		if (n <= 0)
			abort();
		pinsn_init(p, a, code + (a - BASE), (unsigned)n);
		p->modes = PINSN_MODE_BIT(X86_MODE_64); /* REX elsewhere in the block */
	}
	return p;
}

static uint8_t trace[1 << 16];
static struct ptgen_buf out = { trace, 0, sizeof(trace) };

struct got {
	uint64_t ip[4096];
	size_t n;
	unsigned errors, interrupts;
	char first_error[160];
	uint64_t async_disabled[8];	/* FUPs of FUP+TIP.PGD */
	unsigned nasync;
	uint64_t intr_ip[8];		/* where each interrupt struck */
};
static void got_run(void *ctx, const struct ptflow_run *r)
{
	struct got *g = ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn && g->n < 4096; i++) {
		g->ip[g->n++] = ip;
		ip += r->lens[i];
	}
}
static void got_event(void *ctx, const struct ptflow_event *ev)
{
	struct got *g = ctx;
	if (ev->type == PTFLOW_EV_INTERRUPT && g->interrupts < 8)
		g->intr_ip[g->interrupts] = ev->ip;
	if (ev->type == PTFLOW_EV_INTERRUPT)
		g->interrupts++;
	if (ev->type == PTFLOW_EV_ASYNC_DISABLED && ev->has_ip && g->nasync < 8)
		g->async_disabled[g->nasync++] = ev->ip;
	if (ev->type == PTFLOW_EV_ERROR && !g->errors++)
		snprintf(g->first_error, sizeof(g->first_error), "error at 0x%llx",
			 (unsigned long long)ev->ip);
}

static int ipt_read(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		    void *ctx)
{
	(void)asid;
	int n = ptimg_flat_read(ctx, ip, buf, size);
	return n > 0 ? n : -pte_nomap;
}

struct ipt_list {
	uint64_t *ip;
	size_t cap, n;
};
static void list_ip(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn)
{
	struct ipt_list *l = ctx;
	(void)d;
	if (l->n < l->cap)
		l->ip[l->n] = insn->ip;
	l->n++;
}

/* libipt's instruction decoder over the trace: instructions into ip[],
 * returns their number, or -1 after a decode error */
static long libipt_decode(uint64_t *ip, size_t cap, bool retcomp)
{
	struct ptimg_flat flat = { code, BASE, sizeof(code) };
	struct pt_image *image = pt_image_alloc("code");
	pt_image_set_callback(image, ipt_read, &flat);
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + out.len;
	(void)retcomp; /* libipt needs no DisRETC: it takes a TIP at any RET */
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	pt_insn_set_image(d, image);
	struct ipt_list list = { ip, cap, 0 };
	struct libipt_insn_walk w = { list_ip, &list, true, 0, 0, 0, NULL };
	libipt_insn_walk(d, &w);
	pt_insn_free_decoder(d);
	pt_image_free(image);
	return w.errors ? -1 : (long)list.n;
}

/*
 * Run exec[] (what QEMU executed, -1 ends it) through the inference with
 * cfg, decode, and compare with want[] (-1 ends it). Returns the decoder's
 * view for more checks.
 */
/* Feed exec[] as the plugin does with one callback per block: stretches
 * of fall-through instructions (at most 4) through infer_exec_run(). */
static void feed_blocks(struct infer *inf, const int64_t *exec)
{
	static struct pinsn blk[64][4];
	unsigned nb = 0;
	for (const int64_t *e = exec; *e >= 0 && nb < 64; nb++) {
		size_t k = 0;
		bool straight = true;
		do {
			blk[nb][k] = *pin((uint64_t)*e);
			if (blk[nb][k].flags & (PINSN_START | PINSN_STOP))
				straight = false;
			k++;
			e++;
		} while (k < 4 && *e >= 0 && blk[nb][k - 1].iclass[X86_MODE_64] == X86_IC_OTHER &&
			 (uint64_t)*e == blk[nb][k - 1].addr + blk[nb][k - 1].len);
		if (infer_exec_run(inf, blk[nb], k, straight))
			return;
	}
}

static struct got got;

/* efipt's flow decoder over the trace, into got */
static void flow_decode(bool retcomp)
{
	static struct ptflow_block cache[64];
	struct ptimg_flat flat = { code, BASE, sizeof(code) };
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	fc.image = (struct ptimg){ ptimg_flat_read, &flat };
	fc.cache = cache;
	fc.cache_size = 64;
	fc.disretc = !retcomp;
	memset(&got, 0, sizeof(got));
	struct ptflow_sink fs = { &got, got_run, got_event };
	static struct ptflow_decoder dec;
	ptflow_init(&dec, &fc, &fs);
	ptflow_decode(&dec, trace, out.len, 0);
}
/* start=guest: the WRMSRs at these addresses set / clear TraceEn, told
 * as the plugin tells them (on after feeding, off before); 0: none */
static uint64_t guest_on_at, guest_off_at;

/* As run(), and an event leaves the filter ranges after the instruction
 * before leave_fup: FUP(leave_fup), TIP.PGD (0: none does). */
static void run_leaving(const char *name, const struct infer_config *cfg, bool retcomp,
			const int64_t *exec, const int64_t *want, unsigned interrupts,
			uint64_t leave_fup)
{
	static struct ptgen gen;
	struct infer inf;
	out.len = 0;
	ptgen_init(&gen, 256, retcomp, ptgen_buf_write, &out);
	infer_init(&inf, cfg, &gen);
	inf.mode = X86_MODE_64;
	if (by_blocks) {
		feed_blocks(&inf, exec);
	} else {
		for (const int64_t *e = exec; *e >= 0; e++) {
			if ((uint64_t)*e == guest_off_at)
				infer_guest_off(&inf);
			if (infer_exec(&inf, pin((uint64_t)*e)))
				break;
			if ((uint64_t)*e == guest_on_at)
				infer_guest_on(&inf);
		}
	}
	infer_finish(&inf);
	ptgen_flush(inf.g);

	flow_decode(retcomp);

	size_t nw = 0;
	while (want[nw] >= 0)
		nw++;
	size_t i = 0;
	while (i < nw && i < got.n && got.ip[i] == (uint64_t)want[i])
		i++;
	char t[160];
	const char *how = by_blocks ? " (by blocks)" : "";
	snprintf(t, sizeof(t), "%s%s: decoded = executed, no errors", name, how);
	CHECKF(!got.errors && i == nw && got.n == nw && inf.traced == nw, t,
	       "%s; %zu decoded, %zu wanted, %llu traced, first difference at %zu (0x%llx)",
	       got.errors ? got.first_error : "no error", got.n, nw,
	       (unsigned long long)inf.traced, i, i < got.n ? (unsigned long long)got.ip[i] : 0ull);
	static uint64_t lip[4096];
	long ln = libipt_decode(lip, 4096, retcomp);
	snprintf(t, sizeof(t), "%s%s: libipt decodes the same", name, how);
	CHECKF(ln == (long)nw && !memcmp(lip, got.ip, nw * sizeof(uint64_t)), t,
	       "libipt: %ld instructions%s", ln, ln < 0 ? " (decode error)" : "");
	snprintf(t, sizeof(t), "%s%s: %u interrupts%s", name, how, interrupts,
		 leave_fup ? " and one event out of the ranges" : "");
	CHECKF(got.interrupts == interrupts && inf.events == interrupts + (leave_fup != 0), t,
	       "decoder saw %u, the plugin wrote %llu events", got.interrupts,
	       (unsigned long long)inf.events);
	if (!leave_fup)
		return;
	bool left = false;
	for (unsigned k = 0; k < got.nasync; k++)
		left |= got.async_disabled[k] == leave_fup;
	snprintf(t, sizeof(t), "%s%s: FUP(0x%llx), TIP.PGD", name, how,
		 (unsigned long long)leave_fup);
	CHECKF(left, t, "decoder saw %u FUP+TIP.PGD, none with that FUP", got.nasync);
}

static void run(const char *name, const struct infer_config *cfg, bool retcomp,
		const int64_t *exec, const int64_t *want, unsigned interrupts)
{
	run_leaving(name, cfg, retcomp, exec, want, interrupts, 0);
}

/* QEMU's view: REP iterations call back once each; the handler runs
 * where an interrupt came. */
static const int64_t flow_exec[] = {
	0x1000, 0x1100, 0x1101,			/* call, ret (compressed) */
	0x1005, 0x1007, 0x1008,			/* jz not taken */
	0x1009, 0x1009, 0x1009,			/* rep stosb, three iterations */
	0x100b,					/* jmp rax */
	0x1020,					/* int 3 */
	0x1200, 0x1201,				/* handler, iretq */
	0x1022, 0x1023,				/* nop, jmp 1000 */
	0x1000, 0x1100,				/* call, nop ... */
	0x1200, 0x1201,				/* interrupt after the nop */
	0x1101, 0x1005,				/* ret, jz taken */
	0x1200, 0x1201,				/* interrupt right after a jz */
	0x1009, 0x100b,				/* rep stosb (once), jmp rax */
	0x1023, 0x1000,				/* jmp 1000, call */
	0x1200, 0x1201,				/* interrupt before the callee */
	0x1100, 0x1101,				/* nop, ret */
	0x1022,					/* ... to elsewhere: a TIP */
	0x1023, 0x1000, 0x1100, 0x1101, 0x1005,	/* compressed again; QEMU
						 * exits after the jz (left out) */
	-1
};

/*
 * Code size changes the instructions do not tell at once (docs/qemu.md
 * "Several CPUs"): 16-bit start-up code at 0x9000 enters 32-bit code at
 * 0x9100 with a far JMP with a 32-bit offset, whose target decodes alike in
 * both sizes until the MOV EBX, imm32; then the AP halts and a start-up IPI
 * restarts it in real mode at 0x9000, whose NOPs decode alike too. The
 * MODE.Exec must come with each TIP, else the decoder takes the wrong
 * lengths. QEMU's lengths are those of the size the CPU ran.
 */
/* A fresh inference (cfg, or none: NULL) writing into out, PSB+ every psb
 * bytes, RET compression on; the code size it starts in is the caller's. */
static void infer_start(struct infer *inf, const struct infer_config *cfg, unsigned psb)
{
	static struct ptgen start_gen;
	static const struct infer_config none;
	out.len = 0;
	ptgen_init(&start_gen, psb, true, ptgen_buf_write, &out);
	infer_init(inf, cfg ? cfg : &none, &start_gen);
}

/* Code at base (the tests' own, not code[]), read by the flow decoder. */
struct window {
	uint64_t base;
	uint8_t *buf;
	size_t size;
};
static int window_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	const struct window *w = ctx;
	if (ip < w->base || ip >= w->base + w->size)
		return 0;
	size_t k = (size_t)(w->base + w->size - ip);
	if (n > k)
		n = k;
	memcpy(buf, w->buf + (ip - w->base), n);
	return (int)n;
}

/* The trace the test wrote (out), decoded over w into got. */
static void decode_window(struct window *w)
{
	static struct ptflow_block cache[64];
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	fc.image = (struct ptimg){ window_read, w };
	fc.cache = cache;
	fc.cache_size = 64;
	memset(&got, 0, sizeof(got));
	struct ptflow_sink fs = { &got, got_run, got_event };
	static struct ptflow_decoder dec;
	ptflow_init(&dec, &fc, &fs);
	ptflow_decode(&dec, trace, out.len, 0);
}

static uint8_t sipi_code[0x200];
static struct window sipi_window = { 0x9000, sipi_code, sizeof(sipi_code) };

static void mode_switch_tests(void)
{
	static const struct { uint16_t off; uint8_t len; const char *hex; } ins[] = {
		{ 0x000, 1, "90" }, { 0x001, 1, "90" },
		{ 0x002, 4, "2e66ff2d" },	/* ljmpl *%cs:(%di) (16-bit) */
		{ 0x100, 1, "90" }, { 0x101, 2, "89f7" },
		{ 0x103, 5, "bb01000000" },	/* mov ebx, 1 (32-bit) */
		{ 0x108, 1, "f4" },		/* hlt */
	};
	static struct pinsn pi[7];
	memset(sipi_code, 0x90, sizeof(sipi_code));
	for (unsigned i = 0; i < 7; i++) {
		for (unsigned b = 0; b < ins[i].len; b++) {
			unsigned v;
			sscanf(ins[i].hex + 2 * b, "%2x", &v);
			sipi_code[ins[i].off + b] = (uint8_t)v;
		}
		pinsn_init(&pi[i], 0x9000 + ins[i].off, sipi_code + ins[i].off, ins[i].len);
	}
	/* twice through: reset, far jump, halt, start-up IPI, again */
	static const unsigned order[] = { 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6 };
	const size_t n = sizeof(order) / sizeof(order[0]);
	struct infer inf;
	infer_start(&inf, NULL, 4096); /* real mode, as at reset */
	unsigned modes[14];
	for (size_t i = 0; i < n; i++) {
		infer_exec(&inf, &pi[order[i]]);
		modes[i] = inf.mode;
	}
	infer_finish(&inf);
	ptgen_flush(inf.g);
	CHECKF(modes[3] == X86_MODE_32 && modes[7] == X86_MODE_16 && modes[10] == X86_MODE_32,
	       "far jmp with a 32-bit offset goes to 32-bit code, a start-up IPI to 16-bit",
	       "modes at the targets: %u, %u, %u", modes[3], modes[7], modes[10]);

	decode_window(&sipi_window);
	size_t same = 0;
	while (same < got.n && same < n && got.ip[same] == pi[order[same]].addr)
		same++;
	/* the last HLT ran: the trace ends at its next IP */
	CHECKF(!got.errors && got.n == n && same == n && got.interrupts == 1,
	       "16 -> 32 by far jmp, 32 -> 16 by start-up IPI: decoded = executed",
	       "%s; %zu decoded, %zu the same, %u interrupts", got.errors ? got.first_error : "no error",
	       got.n, same, got.interrupts);
}

/*
 * 32-bit code entering long mode the way Debian 13's OVMF does: MOV CR0
 * (PG on, EFER.LME set before), then a far JMP to a 64-bit CS, whose
 * target (TEST, Jcc, NOPs) decodes alike in 32 and 64 bits up to the REX
 * prefix of MOV RBX, RAX. Without registers (QEMU 7.2) the switch must be
 * inferred at the far JMP: its TIP carries the MODE.Exec (33.4.2.8), and
 * one at the REX would come too late for a decoder, which would read 48 as
 * DEC EAX.
 */
static uint8_t lm_code[0x200];
static struct window lm_window = { 0xa000, lm_code, sizeof(lm_code) };

static void long_mode_run(struct pinsn *pi, size_t n, size_t first_block)
{
	struct infer inf;
	infer_start(&inf, NULL, 4096);
	unsigned modes[16];
	size_t i = 0;
	if (first_block) {
		infer_exec_run(&inf, pi, first_block, true);
		for (; i < first_block; i++)
			modes[i] = inf.mode;
	}
	for (; i < n; i++) {
		infer_exec(&inf, &pi[i]);
		modes[i] = inf.mode;
	}
	infer_finish(&inf);
	ptgen_flush(inf.g);
	CHECKF(modes[2] == X86_MODE_32 && modes[3] == X86_MODE_64,
	       first_block ? "a far jmp right after MOV CR0 goes to 64-bit code (by blocks)"
			   : "a far jmp right after MOV CR0 in 32-bit code goes to 64-bit code",
	       "modes at the jmp and its target: %u, %u", modes[2], modes[3]);

	decode_window(&lm_window);
	size_t same = 0;
	while (same < got.n && same < n && got.ip[same] == pi[same].addr)
		same++;
	CHECKF(!got.errors && got.n == n && same == n,
	       first_block ? "long mode entered by MOV CR0 and far jmp: decoded = executed (by blocks)"
			   : "long mode entered by MOV CR0 and far jmp: decoded = executed",
	       "%s; %zu decoded for %zu, %zu the same", got.errors ? got.first_error : "no error", got.n, n, same);
}

static void long_mode_tests(void)
{
	static const struct { uint16_t off; uint8_t len; const char *hex; } ins[] = {
		{ 0x000, 5, "b801000000" },	/* mov eax, 1 (32 or 64) */
		{ 0x005, 3, "0f22c0" },		/* mov cr0, eax */
		{ 0x008, 7, "ea00a100003800" },	/* ljmp 0x38:0xa100 (32 only) */
		{ 0x100, 2, "85c0" },		/* test eax, eax */
		{ 0x102, 2, "7402" },		/* jz 0xa106 (not taken) */
		{ 0x104, 1, "90" }, { 0x105, 1, "90" },
		{ 0x106, 3, "4889c3" },		/* mov rbx, rax (64 only) */
		{ 0x109, 1, "f4" },		/* hlt */
	};
	enum { N = sizeof(ins) / sizeof(ins[0]) };
	static struct pinsn pi[N];
	memset(lm_code, 0x90, sizeof(lm_code));
	for (unsigned i = 0; i < N; i++) {
		for (unsigned b = 0; b < ins[i].len; b++) {
			unsigned v;
			sscanf(ins[i].hex + 2 * b, "%2x", &v);
			lm_code[ins[i].off + b] = (uint8_t)v;
		}
		pinsn_init(&pi[i], 0xa000 + ins[i].off, lm_code + ins[i].off, ins[i].len);
	}
	CHECK((pi[1].flags & PINSN_MOV_CR0) && !(pi[0].flags & PINSN_MOV_CR0) &&
		      !(pi[7].flags & PINSN_MOV_CR0),
	      "MOV CR0 is told from other instructions");
	/* one at a time, then the first block as QEMU runs it (the MOV CR0
	 * inside a straight stretch: infer_exec_run()'s fast path) */
	for (int blocks = 0; blocks < 2; blocks++)
		long_mode_run(pi, N, blocks ? 3 : 0);
}

static void regs_mode_tests(void)
{
	const unsigned all = PINSN_MODE_BIT(X86_MODE_16) | PINSN_MODE_BIT(X86_MODE_32) |
			     PINSN_MODE_BIT(X86_MODE_64);
	struct infer_regs real = { .valid = true, .cr0 = 0x10, .efer = 0, .eflags = 0x2, .cr3 = 0 };
	struct infer_regs prot = { .valid = true, .cr0 = 0x11, .efer = 0, .eflags = 0x2, .cr3 = 0 };
	struct infer_regs v86 = { .valid = true, .cr0 = 0x11, .efer = 0, .eflags = 0x20002, .cr3 = 0 };
	struct infer_regs ia32e = { .valid = true, .cr0 = 0x80000011, .efer = 0x500, .eflags = 0x2, .cr3 = 0x1000 };
	CHECK(infer_regs_mode(&real, all, X86_MODE_32, true) == X86_MODE_16,
	      "regs: real mode runs 16-bit code whatever the lengths suggest");
	CHECK(infer_regs_mode(&v86, all, X86_MODE_32, false) == X86_MODE_16, "regs: virtual-8086 mode too");
	CHECK(infer_regs_mode(&prot, all, X86_MODE_64, true) == X86_MODE_32 &&
	      infer_regs_mode(&prot, PINSN_MODE_BIT(X86_MODE_16), X86_MODE_64, false) == X86_MODE_16 &&
	      infer_regs_mode(&prot, all, X86_MODE_16, false) == X86_MODE_16,
	      "regs: protected mode, no LMA: 32 or 16, never 64");
	CHECK(infer_regs_mode(&ia32e, all, X86_MODE_32, false) == X86_MODE_32 &&
	      infer_regs_mode(&ia32e, all, X86_MODE_64, false) == X86_MODE_64,
	      "regs: IA-32e mode: 64-bit or compatibility mode, as the lengths say");
	CHECK(infer_regs_mode(&ia32e, all, X86_MODE_32, true) == X86_MODE_64 &&
	      infer_regs_mode(&ia32e, PINSN_MODE_BIT(X86_MODE_32), X86_MODE_32, true) == X86_MODE_32,
	      "regs: a far transfer in IA-32e mode goes to 64-bit code where the lengths allow");

	/* NOP, MOV CR3, NOP in IA-32e mode; CR3 0x1000, then 0x2000 after the
	 * MOV (the registers at the next block): the first CR3 in PSB+, the
	 * second in a PIP after the MOV (Table 33-55 case 14) */
	static const uint8_t nop[] = { 0x90 }, mov_cr3[] = { 0x0f, 0x22, 0xd8 };
	static struct pinsn p[3];
	pinsn_init(&p[0], 0x7000, nop, 1);
	pinsn_init(&p[1], 0x7001, mov_cr3, 3);
	pinsn_init(&p[2], 0x7004, nop, 1);
	for (int i = 0; i < 3; i++)
		p[i].modes = (uint8_t)all;
	struct infer inf;
	infer_start(&inf, NULL, 4096);
	inf.mode = X86_MODE_64;
	infer_block_regs(&inf, &ia32e);
	infer_exec(&inf, &p[0]);
	infer_exec(&inf, &p[1]);
	struct infer_regs after = ia32e;
	after.cr3 = 0x2000;
	infer_block_regs(&inf, &after);
	infer_exec(&inf, &p[2]);
	infer_finish(&inf);
	ptgen_flush(inf.g);
	struct ptpkt_decoder d;
	struct ptpkt k;
	ptpkt_init(&d, trace, out.len, 0);
	ptpkt_sync_forward(&d);
	unsigned pips = 0;
	uint64_t cr3s[4] = { 0 };
	while (ptpkt_next(&d, &k) > 0) {
		if (k.type == ptpkt_pip && pips < 4)
			cr3s[pips++] = k.u.pip.cr3;
	}
	CHECKF(pips == 2 && cr3s[0] == 0x1000 && cr3s[1] == 0x2000 && inf.pips == 1,
	       "regs: CR3 in PSB+, a PIP with the new CR3 after MOV CR3",
	       "%u PIPs: 0x%llx 0x%llx, %llu counted", pips, (unsigned long long)cr3s[0],
	       (unsigned long long)cr3s[1], (unsigned long long)inf.pips);

	/* an AP woken from HLT by INIT and SIPI: CR3 0 at the start-up vector
	 * (the registers of its next block); the event's PIP comes between its
	 * FUP and its TIP (Table 33-55), where a decoder binds it to the event */
	static const uint8_t hlt[] = { 0xf4 };
	pinsn_init(&p[1], 0x7001, hlt, 1);
	pinsn_init(&p[2], 0x87000, nop, 1);
	for (int i = 0; i < 3; i++)
		p[i].modes = (uint8_t)all;
	infer_start(&inf, NULL, 4096);
	inf.mode = X86_MODE_64;
	infer_block_regs(&inf, &ia32e);
	infer_exec(&inf, &p[0]);
	infer_exec(&inf, &p[1]);
	after.cr3 = 0;
	infer_block_regs(&inf, &after);
	infer_exec(&inf, &p[2]);
	infer_finish(&inf);
	ptgen_flush(inf.g);
	ptpkt_init(&d, trace, out.len, 0);
	ptpkt_sync_forward(&d);
	char order[16] = "";
	unsigned n = 0;
	uint64_t fup = 0, tip = 0;
	bool psbend = false;
	while (ptpkt_next(&d, &k) > 0 && n < sizeof(order) - 1) {
		if (k.type == ptpkt_psbend)
			psbend = true;
		if (!psbend)
			continue;
		if (k.type == ptpkt_fup && !n)
			order[n++] = 'F', fup = k.u.ip.ip;
		else if (k.type == ptpkt_pip)
			order[n++] = 'P';
		else if (k.type == ptpkt_tip && !tip)
			order[n++] = 'T', tip = k.u.ip.ip;
	}
	CHECKF(!strncmp(order, "FPT", 3) && fup == 0x7002 && tip == 0x87000,
	       "regs: an event that changes CR3: FUP, PIP, TIP", "order %s, FUP 0x%llx, TIP 0x%llx",
	       order, (unsigned long long)fup, (unsigned long long)tip);
}

/* CR3 filtering (33.2.5.2): CR3 0x1000 at the start (ContextEn 0: PSB+
 * without IP), 0x2000 (the match) after the MOV CR3 at 1330: PIP, TIP.PGE
 * at 1333; 0x1000 after the one at 1335: PIP, TIP.PGD without IP, which
 * binds to it (Table 33-21); 0x2000 again after 133a: PIP (OS=1 while
 * ContextEn is 0), TIP.PGE at 133d. efipt's decoder and libipt decode what
 * ran while CR3 matched. */
static void cr3_filter_tests(void)
{
	static const int64_t exec[] = { 0x1330, 0x1333, 0x1334, 0x1335, 0x1338, 0x133a, 0x133d,
					0x133e, -1 };
	static const uint64_t cr3[] = { 0x1000, 0x2000, 0x2000, 0x2000, 0x1000, 0x1000, 0x2000,
					0x2000 };
	static const uint64_t want[] = { 0x1333, 0x1334, 0x1335, 0x133d, 0x133e };
	const size_t nw = sizeof(want) / sizeof(want[0]);
	static struct ptgen gen;
	struct infer inf;
	struct infer_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.cr3_filter = true;
	cfg.cr3_match = 0x2000;
	out.len = 0;
	ptgen_init(&gen, 4096, true, ptgen_buf_write, &out);
	infer_init(&inf, &cfg, &gen);
	inf.mode = X86_MODE_64;
	for (size_t i = 0; exec[i] >= 0; i++) {
		struct infer_regs r = { .valid = true, .cr0 = 0x80000011, .efer = 0x500, .eflags = 0x2, .cr3 = cr3[i] };
		infer_block_regs(&inf, &r);
		infer_exec(&inf, pin((uint64_t)exec[i]));
	}
	infer_finish(&inf);
	ptgen_flush(inf.g);

	flow_decode(true);
	CHECKF(!got.errors && got.n == nw && !memcmp(got.ip, want, sizeof(want)) &&
	       inf.traced == nw && inf.context_changes == 3,
	       "cr3 filter: decoded = executed while CR3 matched, no errors",
	       "%s; %zu decoded (first 0x%llx), %llu traced, %llu ContextEn changes",
	       got.errors ? got.first_error : "no error", got.n,
	       got.n ? (unsigned long long)got.ip[0] : 0ull, (unsigned long long)inf.traced,
	       (unsigned long long)inf.context_changes);
	static uint64_t lip[64];
	long ln = libipt_decode(lip, 64, true);
	CHECKF(ln == (long)nw && !memcmp(lip, want, sizeof(want)),
	       "cr3 filter: libipt decodes the same", "libipt: %ld instructions%s", ln,
	       ln < 0 ? " (decode error)" : "");
	/* the packets: PIP then TIP.PGD without IP at the MOV CR3 at 1335 */
	struct ptpkt_decoder d;
	struct ptpkt k;
	ptpkt_init(&d, trace, out.len, 0);
	ptpkt_sync_forward(&d);
	char order[32] = "";
	unsigned n = 0;
	bool psbend = false;
	while (ptpkt_next(&d, &k) > 0 && n < sizeof(order) - 1) {
		if (k.type == ptpkt_psbend)
			psbend = true;
		else if (psbend && k.type == ptpkt_pip)
			order[n++] = 'P';
		else if (psbend && k.type == ptpkt_tip_pge)
			order[n++] = 'E';
		else if (psbend && k.type == ptpkt_tip_pgd)
			order[n++] = k.u.ip.ipc ? 'D' : 'd';
		else if (psbend && k.type == ptpkt_fup)
			order[n++] = 'F';
	}
	CHECKF(!strcmp(order, "PEPdPEFd"), "cr3 filter: PIP, TIP.PGE; PIP, TIP.PGD(); PIP, TIP.PGE",
	       "packets after PSB+: %s (P PIP, E TIP.PGE, d/D TIP.PGD without/with IP, F FUP)",
	       order);
}

/* An interrupt right after a RET or an indirect JMP: the block order makes
 * the handler look like the branch's target; with the handler's frame read
 * (infer_regs.struck, plugin API 4) the branch goes where the frame says
 * and the event is there: RET (compressed), FUP, TIP(handler). Without it,
 * the same instructions and no event (docs/qemu.md). */
/*
 * exec[] through the inference, the handler at 1200 entered right after a
 * branch: with know, each entry's registers carry the event's frame, whose
 * IP is where the IRETQ returns (two instructions on). Decoded into got
 * and by libipt; returns the instructions that must decode (the last JMP's
 * target never came: no packet), *same how many of them got has, *ln
 * libipt's count (-1: an error; the same list as got's, else -2).
 */
static size_t struck_run(const int64_t *exec, bool know, uint64_t *events, size_t *same, long *ln)
{
	static struct ptgen gen;
	struct infer inf;
	struct infer_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	out.len = 0;
	ptgen_init(&gen, 256, true, ptgen_buf_write, &out);
	infer_init(&inf, &cfg, &gen);
	inf.mode = X86_MODE_64;
	struct infer_regs r = { .valid = true, .cr0 = 0x80000011, .efer = 0x500 };
	size_t n = 0;
	for (const int64_t *e = exec; *e >= 0; e++, n++) {
		struct infer_regs now = r;
		if (know && *e == 0x1200) {
			now.struck = true;
			now.struck_ip = (uint64_t)e[2];	/* where the IRETQ returns */
		}
		infer_block_regs(&inf, &now);
		infer_exec(&inf, pin((uint64_t)*e));
	}
	infer_finish(&inf);
	ptgen_flush(inf.g);
	flow_decode(true);
	*events = inf.events;
	n--;
	*same = 0;
	while (*same < n && *same < got.n && got.ip[*same] == (uint64_t)exec[*same])
		(*same)++;
	static uint64_t lip[64];
	*ln = libipt_decode(lip, 64, true);
	if (*ln >= 0 && memcmp(lip, got.ip, (size_t)*ln * sizeof(uint64_t)))
		*ln = -2;
	return n;
}

static void struck_tests(void)
{
	static const int64_t exec[] = {
		0x1000, 0x1100, 0x1101,		/* call, nop, ret */
		0x1200, 0x1201,			/* interrupted before 1005 */
		0x1005, 0x1007, 0x1008,		/* jz not taken */
		0x1009, 0x100b,			/* rep stosb (no iteration), jmp rax */
		0x1200, 0x1201,			/* interrupted before 1022 */
		0x1022, 0x1023, -1
	};
	for (int know = 0; know < 2; know++) {
		uint64_t events;
		size_t same;
		long ln;
		size_t n = struck_run(exec, know, &events, &same, &ln);
		CHECKF(!got.errors && got.n == n && same == n && ln == (long)n &&
		       got.interrupts == (know ? 2u : 0u) && events == got.interrupts,
		       know ? "struck: an interrupt right after a RET and a JMP rax, from its frame"
			    : "struck: without the frame, the same instructions and no event",
		       "%s; %zu decoded of %zu, %zu the same, libipt %ld, %u interrupts, %llu events",
		       got.errors ? got.first_error : "no error", got.n, n, same, ln, got.interrupts,
		       (unsigned long long)events);
	}
}

/*
 * An interrupt right after a Jcc (plugin API 4): QEMU runs the handler next,
 * so the block order cannot say whether the Jcc was taken; the handler's
 * frame holds the IP the CPU resumes at (the target or the fall-through).
 * With the frame the trace has the real outcome and the FUP there; without
 * it the old inference: not taken, FUP at the fall-through (the decoded
 * instructions are the executed ones either way, the IRETQ's TIP goes
 * where execution resumed).
 */
static void jcc_struck_tests(void)
{
	/* jz 1009 at 1005 taken, then not taken, each interrupted */
	static const int64_t taken[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1200, 0x1201,
					 0x1009, 0x100b, 0x1022, 0x1023, -1 };
	static const int64_t not_taken[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1200, 0x1201,
					     0x1007, 0x1008, 0x1009, 0x100b, 0x1022, 0x1023, -1 };
	static const struct {
		const int64_t *exec;
		const char *name;
	} c[] = { { taken, "taken" }, { not_taken, "not taken" } };
	for (unsigned k = 0; k < 2; k++)
		for (int know = 0; know < 2; know++) {
			uint64_t events;
			size_t same;
			long ln;
			size_t n = struck_run(c[k].exec, know, &events, &same, &ln);
			uint64_t want_fup = know ? (uint64_t)c[k].exec[6] : 0x1007;
			char name[96];
			snprintf(name, sizeof(name), "struck Jcc %s: %s", c[k].name,
				 know ? "taken or not from the frame, FUP where it resumed"
				      : "without the frame, not taken, FUP at the fall-through");
			CHECKF(!got.errors && got.n == n && same == n && ln == (long)n &&
			       got.interrupts == 1 && events == 1 && got.intr_ip[0] == want_fup,
			       name, "%s; %zu decoded of %zu, %zu the same, libipt %ld, %u interrupts "
			       "(FUP 0x%llx, want 0x%llx), %llu events",
			       got.errors ? got.first_error : "no error", got.n, n, same, ln,
			       got.interrupts, (unsigned long long)got.intr_ip[0],
			       (unsigned long long)want_fup, (unsigned long long)events);
		}
}

int main(void)
{
	build_code();
	struck_tests();
	jcc_struck_tests();
	mode_switch_tests();
	long_mode_tests();
	regs_mode_tests();
	cr3_filter_tests();
	struct infer_config cfg;
	memset(&cfg, 0, sizeof(cfg));

	for (int pass = 0; pass < 2; pass++) {
		by_blocks = pass == 1;
		memset(&cfg, 0, sizeof(cfg));
		/* decoded: the REP instruction once per execution; the INT 3 itself
		 * is reported at its FUP, before it runs (Table 33-23) */
		static const int64_t flow_want[] = {
			0x1000, 0x1100, 0x1101, 0x1005, 0x1007, 0x1008, 0x1009, 0x100b,
			0x1200, 0x1201, 0x1022, 0x1023, 0x1000, 0x1100, 0x1200, 0x1201,
			0x1101, 0x1005, 0x1200, 0x1201, 0x1009, 0x100b, 0x1023, 0x1000,
			0x1200, 0x1201, 0x1100, 0x1101, 0x1022, 0x1023, 0x1000, 0x1100,
			0x1101, -1
		};
		run("calls, jcc, rep, interrupts", &cfg, true, flow_exec, flow_want, 4);
		run("the same without RET compression", &cfg, false, flow_exec, flow_want, 4);

		/* markers: traced from the start marker up to the stop marker */
		static const int64_t mark_exec[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1300, 0x1308,
						     0x1310, 0x1311, 0x1319, -1 };
		static const int64_t mark_want[] = { 0x1308, 0x1310, -1 };
		cfg.start = INFER_START_MARKER;
		cfg.stop = INFER_STOP_MARKER;
		run("start and stop markers", &cfg, true, mark_exec, mark_want, 0);

		/* start=guest (Table 33-55 cases 2, 3): from after the WRMSR that
		 * sets TraceEn to before the one that clears it, twice */
		if (!by_blocks) {
			static const int64_t g_exec[] = { 0x1000, 0x1100, 0x1101, 0x1320, 0x1322,
							  0x1325, 0x1327, 0x1320, 0x1322, 0x1324,
							  0x1325, 0x1327, -1 };
			static const int64_t g_want[] = { 0x1322, 0x1322, 0x1324, -1 };
			memset(&cfg, 0, sizeof(cfg));
			cfg.start = INFER_START_GUEST;
			guest_on_at = 0x1320;
			guest_off_at = 0x1325;
			run("start=guest: two TraceEn spans", &cfg, true, g_exec, g_want, 0);
			guest_on_at = guest_off_at = 0;
		}

		/* limit: stops before the instruction after the Nth */
		static const int64_t lim_want[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1007, -1 };
		memset(&cfg, 0, sizeof(cfg));
		cfg.limit = 5;
		run("limit=5", &cfg, true, flow_exec, lim_want, 0);

		/* a RET that misses its CALL (longjmp-like): the RET of the outer
		 * call may not be compressed, libipt's stack still holds 1045 */
		static const int64_t miss_exec[] = { 0x1030, 0x1040, 0x1100, 0x1101, 0x1050, 0x1035,
						     0x1036, -1 };
		static const int64_t miss_want[] = { 0x1030, 0x1040, 0x1100, 0x1101, 0x1050, 0x1035,
						     0x1036, -1 };
		memset(&cfg, 0, sizeof(cfg));
		run("a RET to elsewhere, then the outer RET", &cfg, true, miss_exec, miss_want, 0);

		/* filter ranges (33.2.5.3): packets only in range, TIP.PGE where a
		 * branch enters, TIP.PGD(target) where one leaves */
		static const int64_t filt_exec[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1007, 0x1008,
						     0x1009, 0x100b, 0x1023, 0x1000, 0x1100, 0x1101,
						     0x1005, -1 };
		static const int64_t callee_want[] = { 0x1100, 0x1101, 0x1100, 0x1101, -1 };
		memset(&cfg, 0, sizeof(cfg));
		cfg.nfilter = 1;
		cfg.filter_a[0] = 0x1100;
		cfg.filter_b[0] = 0x1101;
		run("filter: the callee only (entered by CALL, left by RET)", &cfg, true, filt_exec,
		    callee_want, 0);
		/* the caller's range: left by the CALL and JMP RAX, entered by the
		 * RET and the JMP back; the last JZ is left out (QEMU exits) */
		static const int64_t caller_want[] = { 0x1000, 0x1005, 0x1007, 0x1008, 0x1009,
						       0x100b, 0x1000, -1 };
		cfg.filter_a[0] = 0x1000;
		cfg.filter_b[0] = 0x1010;
		run("filter: the caller only (left by CALL and JMP, entered by RET and JMP)", &cfg,
		    true, filt_exec, caller_want, 0);

		/* instructions PT reports with no packet, like a NOP (PTWRITE,
		 * MOV CR3, HLT, UD: x86_pt_report()): falling through to the
		 * next one out of the range leaves nothing; FilterEn changes at
		 * the next taken branch, here the JMP (33.2.5.3) */
		static const int64_t ptw_exec[] = { 0x1060, 0x1064, 0x1065, 0x1022, 0x1023, -1 };
		static const int64_t ptw_want[] = { 0x1060, 0x1064, 0x1065, -1 };
		memset(&cfg, 0, sizeof(cfg));
		cfg.nfilter = 1;
		cfg.filter_a[0] = 0x1060;
		cfg.filter_b[0] = 0x1063;
		run("filter: PTWRITE at the range's end, then out of it in sequence", &cfg, true,
		    ptw_exec, ptw_want, 0);
		static const int64_t cr3_exec[] = { 0x1070, 0x1073, 0x1074, 0x1022, 0x1023, -1 };
		static const int64_t cr3_want[] = { 0x1070, 0x1073, 0x1074, -1 };
		cfg.filter_a[0] = 0x1070;
		cfg.filter_b[0] = 0x1072;
		run("filter: MOV CR3 at the range's end, then out of it in sequence", &cfg, true,
		    cr3_exec, cr3_want, 0);
		/* ... and an event after one that goes out of the range sends
		 * FUP(next IP), TIP.PGD, as after a NOP and as in range (else
		 * the TIP.PGD binds to a later branch, Table 33-21): an
		 * interrupt wakes the HLT (handler out of the range); its
		 * IRETQ comes back in */
		static const int64_t hlt_exec[] = { 0x1080, 0x1200, 0x1201, 0x1081, 0x1082, -1 };
		static const int64_t hlt_want[] = { 0x1080, 0x1081, 0x1082, -1 };
		cfg.filter_a[0] = 0x1080;
		cfg.filter_b[0] = 0x1082;
		run_leaving("filter: an interrupt wakes a HLT, its handler out of the range", &cfg,
			    true, hlt_exec, hlt_want, 0, 0x1081);
		/* an interrupt right after a JZ (handler out of the range):
		 * the JZ's TNT bit (not taken, as in range), then FUP(next),
		 * TIP.PGD; the IRETQ comes back in with TIP.PGE */
		static const int64_t jz_exec[] = { 0x1000, 0x1100, 0x1101, 0x1005, 0x1200, 0x1201,
						   0x1007, 0x1008, 0x1009, -1 };
		static const int64_t jz_want[] = { 0x1000, 0x1005, 0x1007, 0x1008, 0x1009, -1 };
		cfg.filter_a[0] = 0x1000;
		cfg.filter_b[0] = 0x1010;
		run_leaving("filter: an interrupt right after a JZ, its handler out of the range",
			    &cfg, true, jz_exec, jz_want, 0, 0x1007);
		/* a UD2 does not retire: its #UD is a fault, whose FUP names
		 * the UD2 itself (Table 33-23, Table 33-56 case 8), so it is
		 * not decoded; the handler, out of the range, skips it */
		static const int64_t ud_exec[] = { 0x108f, 0x1090, 0x1200, 0x1201, 0x1092, 0x1093, -1 };
		static const int64_t ud_want[] = { 0x108f, 0x1092, 0x1093, -1 };
		cfg.filter_a[0] = 0x108f;
		cfg.filter_b[0] = 0x1093;
		run_leaving("filter: UD2 faults, its handler out of the range skips it", &cfg, true,
			    ud_exec, ud_want, 0, 0x1090);

		/* ... and in range: FUP(UD2), TIP(handler), as for INT 3
		 * (Table 33-55 case 13) */
		static const int64_t udin_exec[] = { 0x108e, 0x108f, 0x1090, 0x1200, 0x1201, 0x1092,
						     0x1093, -1 };
		static const int64_t udin_want[] = { 0x108e, 0x108f, 0x1200, 0x1201, 0x1092, 0x1093,
						     -1 };
		memset(&cfg, 0, sizeof(cfg));
		run("UD2 faults, its handler skips it", &cfg, true, udin_exec, udin_want, 1);

		/* QEMU exits after an instruction PT reports with no packet:
		 * it ran, the trace ends at its next IP (FUP, TIP.PGD); a UD
		 * as the last one faulted and did not retire */
		static const int64_t ptw_last_exec[] = { 0x105e, 0x105f, 0x1060, -1 };
		run("exit after a PTWRITE", &cfg, true, ptw_last_exec, ptw_last_exec, 0);
		static const int64_t cr3_last_exec[] = { 0x106e, 0x106f, 0x1070, -1 };
		run("exit after a MOV CR3", &cfg, true, cr3_last_exec, cr3_last_exec, 0);
		static const int64_t hlt_last_exec[] = { 0x107e, 0x107f, 0x1080, -1 };
		run("exit after a HLT", &cfg, true, hlt_last_exec, hlt_last_exec, 0);
		static const int64_t ud_last_exec[] = { 0x108e, 0x108f, 0x1090, -1 };
		static const int64_t ud_last_want[] = { 0x108e, 0x108f, -1 };
		run("exit after a UD2 (its #UD handler never ran)", &cfg, true, ud_last_exec,
		    ud_last_want, 0);

		/* QEMU exits right after a branch: the branch is left out */
		static const int64_t exit_exec[] = { 0x1000, 0x1100, 0x1101, 0x1005, -1 };
		static const int64_t exit_want[] = { 0x1000, 0x1100, 0x1101, -1 };
		memset(&cfg, 0, sizeof(cfg));
		run("exit after a jcc", &cfg, true, exit_exec, exit_want, 0);
	}
	return check_exit();
}
