/*
 * The call-stack model (host/stack/callstack.c) on hand-made flows over a
 * hand-made symbol table: each case of docs/symbols.md "The stack model"
 * with the frames it must open and close and the counts it must give.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/x86_insn.h"
#include "host/stack/callstack.h"
#include "host/stack/inline_frames.h"
#include "host/stack/profile.h"

#define BASE 0x10000u

/* RVAs: main 0x100, A 0x200 (and its cold part at 0x600), B 0x300,
 * C 0x400, H (a handler) 0x500; 0x700.. is between functions */
static struct symfunc funcs[] = {
	{ 0x100, 0x180, 0x100, "main", true, 0 },
	{ 0x200, 0x280, 0x200, "A", true, 0 },
	{ 0x300, 0x380, 0x300, "B", true, 0 },
	{ 0x400, 0x480, 0x400, "C", true, 0 },
	{ 0x500, 0x580, 0x500, "H", true, 0 },
	{ 0x600, 0x640, 0x200, "A", true, 0 },
};

struct log {
	char s[4096];
	struct profile p;
	struct cs_listener prof;
	/* a snapshot taken where the time begins, before the profile hears
	 * of it (as a window's listener may take one) */
	struct profile_fn *at_first_time;
};

static const char *fname(const struct callstack *cs, uint32_t fn)
{
	return cs->st->fn[fn].name;
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	static const char *how[] = { "root", "call", "tail", "jump", "int", "unk", "inl" };
	struct log *l = ctx;
	size_t n = strlen(l->s);
	snprintf(l->s + n, sizeof(l->s) - n, "+%s(%s) ", fname(cs, f->fn), how[f->enter]);
	l->prof.enter(l->prof.ctx, cs, f);
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	static const char *w[] = { "ret", "skip", "repl", "gap", "end" };
	struct log *l = ctx;
	size_t n = strlen(l->s);
	snprintf(l->s + n, sizeof(l->s) - n, "-%s(%s) ", fname(cs, f->fn), w[why]);
	l->prof.leave(l->prof.ctx, cs, f, why);
}

static void on_insns(void *ctx, const struct callstack *cs, uint64_t ip, uint64_t n)
{
	struct log *l = ctx;
	if (l->prof.insns) /* the profile counts at enter and leave */
		l->prof.insns(l->prof.ctx, cs, ip, n);
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct log *l = ctx;
	if (!ticks && cs->now == cs->time_first && !l->at_first_time)
		l->at_first_time = profile_snapshot(&l->p, cs);
	l->prof.time(l->prof.ctx, cs, ticks);
}

static struct symfile sf;
static struct image img;
static struct symtab st;
static struct callstack cs;
static struct log lg;
static const uint8_t ones[64] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

/* The flow goes in as runs (cs_on_run) or as blocks (cs_on_blocks): both
 * must open and close the same frames with the same counts. Blocks come
 * one at a time, or (batched) as the decoder hands them over, up to an
 * event, so that the model's paths within a batch are taken too. */
static bool via_blocks, batched;
static bool by_regions;	/* the model's time moves where frames may change
			 * (PTFLOW_TIME_REGIONS) */
static struct ptflow_blk pending[PTFLOW_BLK_BATCH];
static size_t npending;

static unsigned lens_asked;	/* blocks whose lengths the model asked for */
static char runs_log[32][4096];	/* each case's log via runs */
static unsigned ncase;

/* The code: one-byte instructions (NOPs) everywhere; a block's lengths
 * are one read of it (blocks here are shorter than the decoder's reads). */
static int nop_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	(void)ctx, (void)addr;
	lens_asked++;
	memset(buf, 0x90, n);
	return (int)n;
}
static const struct ptimg nops = { nop_read, NULL };

/* A decoder's time estimate, as each batch brings it (0: none yet);
 * batched, as the decoder times them (ptflow_blocks_timed()): the time of
 * the first pending blocks, and a mark where it moved. */
static uint64_t fake_tsc, pending_tsc;
static struct ptflow_time_mark marks[PTFLOW_BLK_BATCH];
static size_t nmarks;

static void blocks(const struct ptflow_blk *b, size_t n)
{
	struct ptflow_batch batch = { b, n, fake_tsc != 0, fake_tsc, 0, &nops, NULL, NULL, 0 };
	cs_on_blocks(&cs, &batch);
}

static void flush_blocks(void)
{
	if (npending) {
		struct ptflow_batch batch = { pending, npending, pending_tsc != 0, pending_tsc, 0,
					      &nops, NULL, marks, nmarks };
		cs_on_blocks(&cs, &batch);
	}
	npending = 0;
	nmarks = 0;
}

/* A block into the pending batch at the time now. */
static void pend_block(const struct ptflow_blk *b)
{
	if (npending == PTFLOW_BLK_BATCH)
		flush_blocks();
	uint64_t last = nmarks ? marks[nmarks - 1].tsc : pending_tsc;
	if (!npending)
		pending_tsc = fake_tsc;
	else if (fake_tsc != last)
		marks[nmarks++] = (struct ptflow_time_mark){ fake_tsc, (uint32_t)npending, 0,
							     fake_tsc != 0 };
	pending[npending++] = *b;
}

static void start(void)
{
	memset(&sf, 0, sizeof(sf));
	sf.funcs = funcs;
	sf.nfuncs = sizeof(funcs) / sizeof(funcs[0]);
	memset(&img, 0, sizeof(img));
	snprintf(img.name, sizeof(img.name), "img");
	img.base = BASE;
	img.size = 0x1000;
	img.sf = &sf;
	memset(&lg, 0, sizeof(lg));
	fake_tsc = 0;
	npending = 0;
	nmarks = 0;
	lg.prof = profile_listener(&lg.p);
	/* a listener that needs the time at an instruction has each block
	 * timed; any other, only where frames may change */
	struct cs_listener ls = { &lg, on_enter, on_leave, on_insns, on_time, !by_regions };
	symtab_init(&st, &img, 1);
	cs_init(&cs, &st, &ls);
	CHECK(cs.timing == (by_regions ? PTFLOW_TIME_REGIONS : PTFLOW_TIME_BLOCKS) &&
	      cs_consumer(&cs).timed == cs.timing,
	      "the listener's need of time at an instruction sets the decoder's timing");
}

/* n one-byte instructions from RVA rva, the last of class last */
static void run(uint64_t rva, uint32_t n, int last)
{
	if (via_blocks) {
		struct ptflow_blk b = { .ip = BASE + rva, .ninsn = (uint16_t)n, .size = (uint16_t)n,
					.mode = X86_MODE_64, .iclass = (uint8_t)last,
					.after = BASE + rva + n };
		if (!batched) {
			blocks(&b, 1);
			return;
		}
		pend_block(&b);
		return;
	}
	struct ptflow_run r = { BASE + rva, ones, n, X86_MODE_64, (uint8_t)last };
	if (fake_tsc) /* who delivers runs gives the time first */
		cs_time(&cs, fake_tsc, 0);
	cs_on_run(&cs, &r);
}

static void event(int type, uint64_t rva, uint64_t target_rva)
{
	struct ptflow_event e;
	memset(&e, 0, sizeof(e));
	e.type = (uint8_t)type;
	e.has_ip = true;
	e.ip = BASE + rva;
	e.target = BASE + target_rva;
	flush_blocks();
	cs_on_event(&cs, &e);
}

/* The profile's id of function name (UINT32_MAX: none counted). */
static uint32_t fn_id(const char *name)
{
	for (uint32_t i = 0; i < st.nfn && i < lg.p.n; i++)
		if (st.fn[i].image == 0 && !strcmp(st.fn[i].name, name))
			return i;
	return UINT32_MAX;
}

static const struct profile_fn *prof(const char *name)
{
	static const struct profile_fn none;
	uint32_t i = fn_id(name);
	return i != UINT32_MAX ? &lg.p.fn[i] : &none;
}

static void finish(const char *name, const char *want)
{
	flush_blocks();
	cs_finish(&cs);
	CHECKF(!strcmp(lg.s, want), name, "got '%s', want '%s'", lg.s, want);
	if (ncase < 32 && !via_blocks)
		snprintf(runs_log[ncase], sizeof(runs_log[ncase]), "%s", lg.s);
	else if (ncase < 32)
		CHECKF(!strcmp(lg.s, runs_log[ncase]), name, "blocks gave '%s', runs '%s'",
		       lg.s, runs_log[ncase]);
	ncase++;
}

static void done(void)
{
	free(lg.at_first_time);
	lg.at_first_time = NULL;
	cs_free(&cs);
	symtab_free(&st);
	profile_free(&lg.p);
}

static void cases(void)
{
	/* call and return; counts */
	start();
	run(0x100, 4, X86_IC_CALL_DIRECT);	/* main: call at 0x103, returns to 0x104 */
	run(0x200, 3, X86_IC_RET_NEAR);	/* A */
	run(0x104, 2, X86_IC_OTHER);
	finish("stack: call and return",
	       "+main(root) +A(call) -A(ret) -main(end) ");
	CHECK(prof("main")->excl == 6 && prof("main")->incl == 9 && prof("A")->excl == 3 &&
	      prof("A")->incl == 3 && prof("A")->calls == 1 && prof("main")->calls == 0,
	      "stack: exclusive, inclusive, calls");
	done();

	/* INT n: a frame for the handler, closed by its IRET back */
	start();
	run(0x100, 2, X86_IC_INT);		/* main: INT at 0x101, back at 0x102 */
	run(0x500, 2, X86_IC_IRET);		/* H */
	run(0x102, 1, X86_IC_OTHER);
	finish("stack: INT n and its IRET", "+main(root) +H(int) -H(ret) -main(end) ");
	CHECK(prof("H")->calls == 1 && prof("H")->excl == 2 && prof("main")->incl == 5,
	      "stack: INT n enters its handler as a call");
	CHECK(lg.p.irqs == 0 && lg.p.irq_done == 0 && prof("H")->excl_irq == 0 &&
	      prof("H")->calls_irq == 0 && prof("main")->incl_irq == 0,
	      "stack: INT n is the code's own, no interrupt");
	done();

	/* a call into a block that runs past its function's end */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);	/* returns to 0x102 */
	run(0x37e, 4, X86_IC_RET_NEAR);	/* 0x37e, 0x37f in B; 0x380, 0x381 in none */
	run(0x102, 1, X86_IC_OTHER);
	finish("stack: a call into a block across its function's end",
	       "+main(root) +B(call) -B(repl) +[unknown](jump) -[unknown](ret) -main(end) ");
	CHECK(prof("B")->excl == 2 && prof("B")->calls == 1 && prof("[unknown]")->excl == 2 &&
	      prof("main")->incl == 7, "stack: a call's block counted for each function it is in");
	done();

	/* a return into a block that runs past the caller's end */
	start();
	run(0x17c, 2, X86_IC_CALL_DIRECT);	/* main: returns to 0x17e */
	run(0x200, 1, X86_IC_RET_NEAR);	/* A */
	run(0x17e, 4, X86_IC_OTHER);		/* 0x17e, 0x17f in main; 0x180, 0x181 in none */
	finish("stack: a return into a block across the caller's end",
	       "+main(root) +A(call) -A(ret) -main(repl) +[unknown](root) -[unknown](end) ");
	CHECK(prof("main")->excl == 4 && prof("[unknown]")->excl == 2 && prof("A")->excl == 1,
	      "stack: a return's block counted for each function it is in");
	done();

	/* longjmp by RET: main -> A -> B -> C, C returns to main's call site */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);	/* returns to 0x102 */
	run(0x200, 2, X86_IC_CALL_DIRECT);	/* returns to 0x202 */
	run(0x300, 2, X86_IC_CALL_DIRECT);	/* returns to 0x302 */
	run(0x400, 2, X86_IC_RET_NEAR);
	run(0x102, 1, X86_IC_OTHER);
	finish("stack: RET to an older frame closes the skipped ones",
	       "+main(root) +A(call) +B(call) +C(call) -C(skip) -B(skip) -A(ret) -main(end) ");
	done();

	/* longjmp by an indirect JMP to a saved return address (EDK2 LongJump) */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);	/* returns to 0x102 */
	run(0x200, 2, X86_IC_CALL_DIRECT);	/* returns to 0x202 */
	run(0x300, 2, X86_IC_JMP_INDIRECT);	/* to 0x102 */
	run(0x102, 1, X86_IC_OTHER);
	finish("stack: indirect JMP to a return address is a longjmp",
	       "+main(root) +A(call) +B(call) -B(skip) -A(ret) -main(end) ");
	done();

	/* tail call: A jumps to B's entry; B's RET returns to main */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);
	run(0x200, 2, X86_IC_JMP_DIRECT);
	run(0x300, 2, X86_IC_RET_NEAR);
	run(0x102, 1, X86_IC_OTHER);
	finish("stack: JMP to an entry is a tail call",
	       "+main(root) +A(call) -A(repl) +B(tail) -B(ret) -main(end) ");
	CHECK(prof("B")->calls == 1 && prof("B")->incl == 2 && prof("main")->incl == 7,
	      "stack: a tail call counts as a call");
	done();

	/* a Jcc into a function's cold part stays in that function */
	start();
	run(0x200, 2, X86_IC_JCC);
	run(0x600, 3, X86_IC_JMP_DIRECT);
	run(0x204, 1, X86_IC_OTHER);
	finish("stack: cold part of the same function", "+A(root) -A(end) ");
	CHECK(prof("A")->excl == 6, "stack: cold part counts for the function");
	done();

	/* interrupt: a handler frame that the IRET back closes */
	start();
	run(0x100, 3, X86_IC_CALL_DIRECT);	/* returns to 0x103 */
	run(0x200, 2, X86_IC_OTHER);
	event(PTFLOW_EV_INTERRUPT, 0x202, 0x500);
	run(0x500, 4, X86_IC_IRET);
	run(0x202, 2, X86_IC_RET_NEAR);
	run(0x103, 1, X86_IC_OTHER);
	finish("stack: interrupt frame ends at IRET",
	       "+main(root) +A(call) +H(int) -H(ret) -A(ret) -main(end) ");
	CHECK(prof("H")->calls == 1 && prof("A")->incl == 8, "stack: interrupt counts");
	CHECK(lg.p.irqs == 1 && lg.p.irq_done == 4 && prof("H")->excl_irq == 4 &&
	      prof("H")->incl_irq == 4 && prof("H")->calls_irq == 1 &&
	      prof("A")->excl_irq == 0 && prof("A")->incl_irq == 4 &&
	      prof("main")->incl_irq == 4 && prof("main")->incl == 12 &&
	      prof("A")->calls_irq == 0, "stack: the interrupt's instructions apart");
	done();

	/* an interrupt whose handler calls what the code calls too, then
	 * jumps on into another function (still the same interrupt) */
	start();
	run(0x100, 3, X86_IC_CALL_DIRECT);	/* main, returns to 0x103 */
	run(0x400, 2, X86_IC_RET_NEAR);	/* C */
	run(0x103, 1, X86_IC_OTHER);
	event(PTFLOW_EV_INTERRUPT, 0x104, 0x500);
	run(0x500, 2, X86_IC_CALL_DIRECT);	/* H, returns to 0x502 */
	run(0x400, 3, X86_IC_RET_NEAR);	/* C */
	run(0x502, 1, X86_IC_JMP_DIRECT);	/* H tail-calls B */
	run(0x300, 2, X86_IC_IRET);		/* B */
	run(0x104, 1, X86_IC_OTHER);
	finish("stack: interrupt calling shared code, jumping on",
	       "+main(root) +C(call) -C(ret) +H(int) +C(call) -C(ret) -H(repl) +B(tail) "
	       "-B(ret) -main(end) ");
	CHECK(lg.p.irqs == 1 && lg.p.irq_done == 8 && prof("C")->excl == 5 &&
	      prof("C")->excl_irq == 3 && prof("C")->calls == 2 && prof("C")->calls_irq == 1 &&
	      prof("C")->incl_irq == 3 && prof("B")->excl_irq == 2 && prof("H")->excl_irq == 3 &&
	      prof("main")->incl == 15 && prof("main")->incl_irq == 8 &&
	      prof("main")->excl_irq == 0, "stack: an interrupt's calls and jumps stay its own");
	CHECK(prof("H")->incl_in_irq == 6 && prof("C")->incl_in_irq == 3 &&
	      prof("B")->incl_in_irq == 2 && prof("main")->incl_in_irq == 0,
	      "stack: inclusive instructions in interrupts");
	done();

	/* interrupt at a call's target, before its first instruction */
	start();
	run(0x100, 3, X86_IC_CALL_DIRECT);
	event(PTFLOW_EV_INTERRUPT, 0x200, 0x500);
	run(0x500, 1, X86_IC_IRET);
	run(0x200, 1, X86_IC_RET_NEAR);
	run(0x103, 1, X86_IC_OTHER);
	finish("stack: interrupt before a callee's first instruction",
	       "+main(root) +A(call) +H(int) -H(ret) -A(ret) -main(end) ");
	done();

	/* gap: every frame ends; the next code is a new root */
	start();
	run(0x100, 3, X86_IC_CALL_DIRECT);
	run(0x200, 2, X86_IC_OTHER);
	event(PTFLOW_EV_OVERFLOW, 0x300, 0);
	run(0x300, 2, X86_IC_RET_NEAR);
	run(0x103, 1, X86_IC_OTHER);
	finish("stack: a gap closes every frame",
	       "+main(root) +A(call) -A(gap) -main(gap) +B(root) -B(ret) +main(unk) -main(end) ");
	flush_blocks();
	CHECK(cs.unmatched_rets == 1 && cs.gaps == 1, "stack: gap and unmatched return counted");
	done();

	/* RET from the bottom: the caller becomes the bottom, unknown caller */
	start();
	run(0x300, 2, X86_IC_RET_NEAR);
	run(0x204, 2, X86_IC_RET_NEAR);
	run(0x104, 2, X86_IC_OTHER);
	finish("stack: returns past the trace start",
	       "+B(root) -B(ret) +A(unk) -A(ret) +main(unk) -main(end) ");
	done();

	/* CALL to the next instruction is no call */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);
	run(0x102, 2, X86_IC_OTHER);
	finish("stack: call $+5 is no call", "+main(root) -main(end) ");
	CHECK(prof("main")->calls == 0, "stack: call $+5 not counted");
	done();

	/* recursion counts once in inclusive */
	start();
	run(0x200, 2, X86_IC_CALL_DIRECT);	/* A calls A, returns to 0x202 */
	run(0x200, 2, X86_IC_RET_NEAR);
	run(0x202, 2, X86_IC_OTHER);
	finish("stack: recursion", "+A(root) +A(call) -A(ret) -A(end) ");
	CHECK(prof("A")->incl == 6 && prof("A")->excl == 6 && prof("A")->calls == 1,
	      "stack: recursion counted once in inclusive");
	done();

	/* falling through into code of no function inside one run (the bottom
	 * frame stays the bottom) */
	start();
	run(0x17e, 4, X86_IC_OTHER);	/* 0x17e, 0x17f in main; 0x180, 0x181 in none */
	finish("stack: a run across a function's end",
	       "+main(root) -main(repl) +[unknown](root) -[unknown](end) ");
	CHECK(prof("main")->excl == 2 && prof("[unknown]")->excl == 2,
	      "stack: each instruction counts for its own function");
	done();

	/* deeper than CS_MAX_DEPTH: cut, and a return off the bottom */
	start();
	for (unsigned i = 0; i < CS_MAX_DEPTH + 2; i++)
		run(0x200, 1, X86_IC_CALL_DIRECT);	/* A calls A, returns to 0x201 */
	flush_blocks();
	CHECK(cs.depth == 2 && cs.too_deep == 1, "stack: cut at CS_MAX_DEPTH");
	run(0x201, 1, X86_IC_RET_NEAR);
	run(0x201, 1, X86_IC_RET_NEAR);
	run(0x201, 1, X86_IC_RET_NEAR);
	flush_blocks();
	CHECK(cs.depth == 1, "stack: returns off a cut stack leave a new bottom");
	cs_finish(&cs);
	CHECK(prof("A")->excl == CS_MAX_DEPTH + 5, "stack: every instruction counted");
	done();
}

/* Time: taken per run or batch, the difference to the top frame when it
 * moves on, held when an estimate steps back. */
static void time_case(void)
{
	start();
	fake_tsc = 0;
	run(0x100, 1, X86_IC_OTHER);		/* main, before any time */
	fake_tsc = 1000;
	run(0x101, 2, X86_IC_CALL_DIRECT);	/* returns to 0x103 */
	run(0x200, 2, X86_IC_OTHER);		/* A */
	fake_tsc = 1300;
	run(0x202, 1, X86_IC_RET_NEAR);		/* 300 ticks on A's account */
	fake_tsc = 1250;			/* a new TSC below the estimate */
	run(0x103, 2, X86_IC_OTHER);
	fake_tsc = 1400;
	run(0x105, 1, X86_IC_OTHER);		/* 100 on main's */
	flush_blocks();
	cs_finish(&cs);
	CHECKF(prof("A")->excl_t == 300 && prof("A")->incl_t == 300 &&
	       prof("main")->excl_t == 100 && prof("main")->incl_t == 400,
	       by_regions ? "time: where frames change: exclusive and inclusive"
	       : batched ? "time: batches with marks: exclusive and inclusive"
	       : via_blocks ? "time: blocks: exclusive and inclusive"
			    : "time: runs: exclusive and inclusive",
	       "A %llu/%llu main %llu/%llu", (unsigned long long)prof("A")->excl_t,
	       (unsigned long long)prof("A")->incl_t, (unsigned long long)prof("main")->excl_t,
	       (unsigned long long)prof("main")->incl_t);
	CHECK(cs.timed && cs.time_first == 1000 && cs.now == 1400 && cs.time_back == 1,
	      "time: never back, the step back counted");
	/* main was on the stack when the time began at 1000: a snapshot
	 * there, whoever takes it first, has no time for it */
	const struct profile_fn *s = lg.at_first_time;
	uint32_t main_fn = fn_id("main");
	CHECKF(s && main_fn < lg.p.n && s[main_fn].incl == 1 && s[main_fn].incl_t == 0 &&
		       s[main_fn].incl_t_irq == 0,
	       "time: a snapshot where the time begins counts no time before it",
	       "main incl %llu incl_t %llu", s ? (unsigned long long)s[main_fn].incl : 0,
	       s ? (unsigned long long)s[main_fn].incl_t : 0);
	done();
}

/* Time in an interrupt: the ticks while its handler is on top are the
 * interrupt's, and so are they in the inclusive times below it. */
static void irq_time_case(void)
{
	start();
	fake_tsc = 1000;
	run(0x100, 3, X86_IC_CALL_DIRECT);	/* main, returns to 0x103 */
	run(0x200, 2, X86_IC_OTHER);		/* A */
	event(PTFLOW_EV_INTERRUPT, 0x202, 0x500);
	fake_tsc = 1100;
	run(0x500, 4, X86_IC_IRET);		/* H: 100 */
	fake_tsc = 1150;
	run(0x202, 2, X86_IC_RET_NEAR);		/* H still on top: 50 */
	fake_tsc = 1300;
	run(0x103, 1, X86_IC_OTHER);		/* A: 150 */
	flush_blocks();
	cs_finish(&cs);
	const struct profile_fn *h = prof("H"), *a = prof("A"), *m = prof("main");
	CHECKF(h->excl_t == 150 && h->excl_t_irq == 150 && h->incl_t_in_irq == 150 &&
	       a->incl_t == 300 && a->incl_t_irq == 150 && a->excl_t_irq == 0 &&
	       m->incl_t_irq == 150 && lg.p.irq_t_done == 150,
	       by_regions ? "time: where frames change: an interrupt's time apart"
	       : batched ? "time: batches with marks: an interrupt's time apart"
	       : via_blocks ? "time: blocks: an interrupt's time apart"
			    : "time: runs: an interrupt's time apart",
	       "H %llu/%llu/%llu A %llu/%llu main %llu irq %llu", (unsigned long long)h->excl_t,
	       (unsigned long long)h->excl_t_irq, (unsigned long long)h->incl_t_in_irq,
	       (unsigned long long)a->incl_t, (unsigned long long)a->incl_t_irq,
	       (unsigned long long)m->incl_t_irq, (unsigned long long)lg.p.irq_t_done);
	done();
}

/* Inline frames: in main, I is inlined at [0x110, 0x120) and J into I at
 * [0x118, 0x11c); J's last instruction calls A. */
static struct syminline inls[] = { { .name = "I", .parent = 0, .depth = 1 }, { .name = "J", .parent = 1, .depth = 2 } };
static struct syminl_seg segs[] = {
	{ 0x110, 0x118, 0 }, { 0x118, 0x11c, 1 }, { 0x11c, 0x120, 0 },
};
static struct inl_frames ix;

static void inline_case(void)
{
	start();
	sf.inl = inls;
	sf.ninl = 2;
	sf.segs = segs;
	sf.nsegs = 3;
	CHECK(symtab_use_inline(&st) == 0, "inline: set up");
	struct cs_listener out = { &lg, on_enter, on_leave, on_insns, NULL, true };
	CHECK(inl_frames_init(&ix, &out) == 0, "inline: listener");
	cs.ls = inl_frames_listener(&ix);
	CHECK(cs.ls.time_at_insn, "inline: the listener's need of time at an instruction passed on");
	lens_asked = 0;
	run(0x100, 0x10, X86_IC_OTHER);		/* main */
	run(0x110, 0x0c, X86_IC_CALL_DIRECT);	/* I, then I;J: the call at 0x11b */
	run(0x200, 3, X86_IC_RET_NEAR);		/* A */
	run(0x11c, 4, X86_IC_OTHER);		/* I */
	run(0x120, 2, X86_IC_OTHER);		/* main */
	finish("inline: frames enter and leave where the chain changes",
	       "+main(root) +I(inl) +J(inl) +A(call) -A(ret) -J(repl) -I(repl) -main(end) ");
	CHECK(prof("main")->excl == 18 && prof("I")->excl == 12 && prof("J")->excl == 4 &&
	      prof("A")->excl == 3, "inline: exclusive counts go to the innermost frame");
	CHECK(prof("I")->incl == 19 && prof("J")->incl == 7 && prof("main")->incl == 37 &&
	      prof("I")->calls == 0 && prof("A")->calls == 1,
	      "inline: inclusive counts include the calls under an inline frame");
	if (via_blocks)
		CHECKF(lens_asked == 1, "inline: only the block across a chain's end is split",
		       "lengths asked for %u blocks", lens_asked);
	inl_frames_free(&ix);
	sf.inl = NULL;
	sf.segs = NULL;
	done();
}

/* A full call tree (CS_MAX_NODES): each frame on a path it has no room
 * for counts for its deepest known node, and each such push is counted
 * (flame says how many), a loop's second call too. */
static void tree_full_case(void)
{
	start();
	for (uint32_t fn = 1000; cs.nnode < CS_MAX_NODES && !cs.oom; fn++)
		cs_tree_child(&cs, 0, fn);
	CHECK(!cs.oom && cs.nnode == CS_MAX_NODES && cs.tree_full == 0, "tree full: filled");
	run(0x100, 2, X86_IC_CALL_DIRECT);	/* main, a root: no room */
	run(0x200, 1, X86_IC_RET_NEAR);	/* A under it: no room */
	run(0x102, 2, X86_IC_CALL_DIRECT);
	run(0x200, 1, X86_IC_RET_NEAR);	/* A again: still none */
	run(0x104, 1, X86_IC_OTHER);
	finish("tree full: the frames as ever",
	       "+main(root) +A(call) -A(ret) +A(call) -A(ret) -main(end) ");
	CHECKF(cs.tree_full == 3 && cs.nnode == CS_MAX_NODES, "tree full: each push counted",
	       "%llu pushes counted, %u nodes", (unsigned long long)cs.tree_full, cs.nnode);
	CHECKF(cs.node[1].insns == 7, "tree full: the instructions go to the deepest known node",
	       "node 1 has %llu", (unsigned long long)cs.node[1].insns);
	done();

	/* the tree fills while A runs, then A calls A twice: each call's
	 * path (main;A;A) has no room, and counts for main;A, a node of the
	 * same function, which the node a frame keeps must not take for
	 * the path itself */
	start();
	run(0x100, 2, X86_IC_CALL_DIRECT);	/* main calls A */
	run(0x200, 2, X86_IC_CALL_DIRECT);	/* A (main;A made), calls A */
	uint32_t a = cs.depth == 2 ? cs.f[1].node : 0;
	for (uint32_t fn = 1000; cs.nnode < CS_MAX_NODES && !cs.oom; fn++)
		cs_tree_child(&cs, 0, fn);
	run(0x200, 1, X86_IC_RET_NEAR);	/* A in A: no room */
	run(0x202, 2, X86_IC_CALL_DIRECT);
	run(0x200, 1, X86_IC_RET_NEAR);	/* A in A again */
	run(0x204, 1, X86_IC_RET_NEAR);
	run(0x102, 1, X86_IC_OTHER);
	finish("tree full: a recursion's frames as ever",
	       "+main(root) +A(call) +A(call) -A(ret) +A(call) -A(ret) -A(ret) -main(end) ");
	CHECKF(a > 1 && cs.tree_full == 2, "tree full: each recursive call counted",
	       "%llu pushes counted (main;A is node %u)", (unsigned long long)cs.tree_full, a);
	CHECKF(a > 1 && cs.node[a].insns == 2 + 2 + 1 + 1 + 1,
	       "tree full: a recursion's instructions go to its caller's node",
	       "main;A has %llu", (unsigned long long)cs.node[a].insns);
	done();
}

int main(void)
{
	time_case();
	irq_time_case();
	via_blocks = true;
	time_case();
	irq_time_case();
	/* the time moving inside a batch (ptflow_time_mark) */
	batched = true;
	time_case();
	irq_time_case();
	/* the same, the time given only where a frame may change */
	by_regions = true;
	time_case();
	irq_time_case();
	by_regions = false;
	batched = false;
	via_blocks = false;
	cases();
	inline_case();
	via_blocks = true;
	ncase = 0;
	lens_asked = 0;
	cases();
	unsigned asked = lens_asked;
	inline_case();
	lens_asked = asked;
	/* only the blocks across main's end (twice) and B's needed lengths */
	CHECKF(lens_asked == 3, "stack: blocks in one function are counted whole",
	       "lengths asked for %u blocks", lens_asked);
	/* the same again, blocks in batches: each case as via runs */
	batched = true;
	ncase = 0;
	cases();
	inline_case();
	batched = false;

	/* a batch of blocks is the same as one block at a time */
	start();
	struct ptflow_blk b[3] = {
		{ .ip = BASE + 0x100, .ninsn = 2, .size = 2, .iclass = X86_IC_CALL_DIRECT,
		  .after = BASE + 0x102 },
		{ .ip = BASE + 0x200, .ninsn = 3, .size = 5, .iclass = X86_IC_RET_NEAR,
		  .after = BASE + 0x205 },
		{ .ip = BASE + 0x102, .ninsn = 1, .size = 1, .iclass = X86_IC_OTHER,
		  .after = BASE + 0x103 },
	};
	blocks(b, 3);
	ncase = 32;
	finish("stack: blocks in one batch", "+main(root) +A(call) -A(ret) -main(end) ");
	CHECK(prof("A")->excl == 3 && prof("main")->excl == 3 && prof("main")->incl == 6,
	      "stack: a batch's counts");
	done();
	/* the space above the last image: one range end for its addresses,
	 * so that the model's regions there are not one per address */
	start();
	uint64_t h1, h2, h3;
	bool e;
	uint32_t f1 = symtab_lookup(&st, BASE + 0x100000, &h1, &e);
	uint32_t f2 = symtab_lookup(&st, BASE + 0x2000000, &h2, &e);
	symtab_lookup(&st, 0xffffffff80001000ull, &h3, &e);
	CHECKF(f1 == SYMFN_UNKNOWN && f2 == SYMFN_UNKNOWN && h1 == h2 && h1 > BASE + 0x2000000 &&
		       h3 > 0xffffffff80001000ull,
	       "symbols: one range end above the last image", "ends %llx %llx %llx",
	       (unsigned long long)h1, (unsigned long long)h2, (unsigned long long)h3);
	done();
	ncase = 32;
	tree_full_case();
	return check_failures ? 1 : 0;
}
