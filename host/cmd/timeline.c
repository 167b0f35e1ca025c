/*
 * efipt timeline: the trace as Chrome/Perfetto trace event JSON or
 * Perfetto's protobuf trace (host/out/timeline_sink.h): a track per
 * CPU of function slices from the call-stack model (strictly nested B/E),
 * instants where the trace was enabled, disabled, overflowed, lost the flow
 * or was interrupted, the firmware's DEBUG lines where they were written
 * (debugport.jsonl), a counter of the core frequency (CBR packets). Time is
 * the TSC estimate from the trace's timing packets (TSC, MTC, CYC: us since
 * the first, ns precision), or without them the instruction index (one
 * microsecond per instruction): the file's otherData says which.
 *
 * Written as the trace is decoded, in memory that does not grow with it:
 * a frame's begin is written once it has run --min-dur instructions (its
 * outer frames, at least as long, first), its end when it is left; what
 * comes after a begin not yet known to be a slice waits in a queue (the
 * open frames, and the instants of at most --min-dur instructions). So a
 * slice dropped by --min-dur never leaves a B without its E, and ts never
 * goes back. Mostly the queue is empty: a call into a child frame or the
 * frame's end tells that a frame is a slice, and a frame without children
 * writes its begin and end as it ends. The time base (ts 0: the earliest first TSC of every CPU's
 * trace) is read from the traces' packets before decoding.
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
#include "core/version.h"
#include "host/cmd/commands.h"
#include "host/input/debuglog.h"
#include "host/input/irqlog.h"
#include "host/input/fpdt_run.h"
#include "host/input/session.h"
#include "host/out/fpdt_out.h"
#include "host/out/timeline_sink.h"
#include "host/stack/callstack.h"
#include "host/stack/fn_window.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"
#include "host/util/grow.h"

static const char timeline_usage[] =
	"usage: efipt timeline RUNDIR [--symbols PATH]... -o FILE.json|FILE.pftrace [OPTIONS]\n"
	"       efipt timeline --pt TRACE --pe FILE[:BASE]... [--symbols PATH]... -o FILE\n\n"
	"The trace as a timeline for ui.perfetto.dev (Perfetto's protobuf trace,\n"
	"-o FILE.pftrace, many times smaller) or as trace event JSON for\n"
	"ui.perfetto.dev, chrome://tracing and speedscope (-o FILE.json):\n"
	"function slices nested as the call stack was, instants for events\n"
	"(enabled, disabled, overflow, gap, decode error, interrupt, PTWRITE, power)\n"
	"and the firmware's DEBUG lines recorded by efipt qemu (debugport.jsonl), each\n"
	"an instant named by its text at the instruction that wrote it. An interrupt\n"
	"whose vector efipt qemu recorded (interrupts.jsonl, QEMU 9.2 on) is named\n"
	"by it: 'timer interrupt, vector 0x20', '#PF page fault, vector 0x0e',\n"
	"'interrupt vector 0x30'.\n"
	"ts is the time in us (ns precision) since the trace's first timing packet\n"
	"(TSC, MTC, CYC; TSC ticks when the TSC frequency is unknown), with a\n"
	"counter of the core frequency from CBR packets; a trace without timing\n"
	"packets has the instruction index: one microsecond per instruction.\n"
	"A run directory of several CPUs (efipt qemu -smp N) gives a track per\n"
	"CPU; --cpu N (N > 0) draws that CPU's alone.\n"
	"A run directory with the firmware's boot-performance records (fpdt.bin)\n"
	"gets their tracks too (\"Firmware FPDT\": measurements as slices, the\n"
	"basic boot times as instants), placed by their ns since reset on the\n"
	"trace's time where it has the TSC's frequency (the TSC counts from reset),\n"
	"else from 0 on their own clock.\n\n";

/* the firmware's tracks: after every CPU's (tid CPU + 1) */
#define FPDT_TID 100000

static const char timeline_tail[] =
	"Decoding stops at --to: the rest of the trace is not read.\n\n"
	"Exit status: 0, 1 if the trace had decode errors, 2 on usage errors,\n"
	"unreadable inputs or a write error.\n";

/* The options. */
struct tl_opts {
	const char *out, *format;
	struct fnwin_where from, to;
	unsigned long long min_dur, depth;
	bool no_log;
};

static const struct opt_row timeline_rows[] = {
	{ "output", OPT_VALUE, opts_set_str, offsetof(struct tl_opts, out), "FILE",
	  "the file (written under a temporary name, then\nrenamed)" },
	{ "format", OPT_VALUE, opts_set_str, offsetof(struct tl_opts, format), "json|perfetto",
	  "the format (default: perfetto for FILE.pftrace and\nFILE.perfetto-trace, else json)" },
	{ "from", OPT_VALUE, fnwin_opt_where, offsetof(struct tl_opts, from), "WHERE",
	  "only instructions from WHERE on: slices are cut\nthere. WHERE: an instruction "
	  "index N (also when\nts is time), or the first instruction executed in\na FUNCTION "
	  "(NAME or IMAGE`NAME)" },
	{ "to", OPT_VALUE, fnwin_opt_where, offsetof(struct tl_opts, to), "WHERE",
	  "only instructions before WHERE: slices are cut\nthere (a FUNCTION: its first "
	  "instruction after\nthe window opened)" },
	{ "min-dur", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, min_dur), "N",
	  "drop slices shorter than N instructions (default 1)" },
	{ "depth", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, depth), "N",
	  "only slices N levels deep at most" },
	{ "no-log", OPT_FLAG, opt_set_true, offsetof(struct tl_opts, no_log), NULL,
	  "leave out the firmware's DEBUG lines" },
};

/* A frame of the open stack as the timeline sees it (by depth):
 * PENDING until it has run --min-dur instructions in the window, then
 * SHOWN (its begin written or queued); HIDDEN past --depth. */
enum { FR_PENDING, FR_SHOWN, FR_HIDDEN };
struct tl_frame {
	uint64_t b;		/* where it began: instruction index, */
	uint32_t fn;
	uint8_t state;
	size_t qi;		/* PENDING: its begin in the queue */
	uint64_t tb;		/* and time (not next to b: the two copied as
				 * one 16-byte load of the model's fields just
				 * stored cost a store-forwarding stall) */
};

enum { HAS_IP = 1, HAS_TARGET = 2, HAS_VALUE = 4, HAS_TSC = 8, IS_DEBUG = 16 };
struct instant {
	const char *name;	/* static, or a DEBUG line's text (IS_DEBUG); NULL: a
				 * CBR counter sample */
	const char *error;	/* a decode error's (static), or NULL */
	uint64_t offset, ip, target, value, tsc;
	uint32_t mhz;		/* a CBR sample's */
	uint8_t has;		/* HAS_*: which of ip .. tsc are known */
};

/* What waits to be written: a slice's begin (pending while its frame is)
 * or end, an instant. x, t: where it is (instruction index, time). An
 * instant's details wait in a queue of their own (struct tl, iq): the
 * instants are written in the order they came, and the items, mostly
 * begins and ends moved about by the dozen each batch, stay small. */
enum { Q_BEGIN, Q_END, Q_INSTANT };
struct tl_item {
	uint8_t kind;
	bool pending;
	bool cut;		/* a begin cut at --from: its time is --from's */
	uint32_t fn;
	uint64_t x, t;
};

/* One CPU's trace as it is decoded: the open frames, what waits to be
 * written (times as TSC estimates: 0 before the first timing packet), and
 * what its decoding found. */
struct tl {
	struct session *t;
	struct callstack *cs;
	struct tl_sink *sink;
	unsigned cpu;
	bool timed;			/* the file's ts is time (every trace has it) */
	uint64_t base;			/* the TSC ts 0 stands for */
	struct fnwin_span w;		/* the window: [from, to) */
	unsigned long long min_dur, depth;
	struct tl_frame fr[CS_MAX_DEPTH + 2];	/* by frame depth */
	uint32_t shown;			/* frames 1..shown are SHOWN */
	struct tl_item *q;		/* q[qh..qn): in the order they are written */
	size_t qh, qn, qcap, qpeak;
	struct instant *iq;		/* iq[ih..in): the instants' of q, in order */
	size_t ih, in, icap;
	uint32_t *names, nnames;	/* the sink's name of each function + 1 */
	char cname[64];			/* the CBR counter's */
	uint64_t nslices, ninstants;
	bool oom;
	uint8_t cbr;			/* the last CBR sampled */
	uint64_t cbr_samples;
	bool from_set, to_set;		/* the times of --from, --to are known */
	uint64_t from_t, to_t;
	bool ns_known;			/* ns is the sink's time of TSC ns_t */
	uint64_t ns_t, ns;
	/* the CPU's DEBUG lines by instruction index; the first not yet placed */
	const struct dbglog_line **dbg;
	size_t ndbg, next_dbg, dbg_placed;
	const struct irqlog *irq;	/* the interrupts' vectors */
};

/* fn_name()'s first time for fn: the cache grown to hold it, the name
 * asked of the sink. Out of line: its buffer costs every call a stack
 * check, and it runs once per function. */
static __attribute__((noinline)) uint32_t fn_name_new(struct tl *l, uint32_t fn)
{
	char name[700];
	if (fn >= l->nnames) {
		uint32_t c = l->nnames ? l->nnames : 256;
		while (c <= fn)
			c *= 2;
		uint32_t *a = realloc(l->names, c * sizeof(*a));
		if (!a)
			return tlsink_name(l->sink, "[unknown]");
		memset(a + l->nnames, 0, (c - l->nnames) * sizeof(*a));
		l->names = a;
		l->nnames = c;
	}
	symtab_fn_name(&l->t->st, fn, name, sizeof(name));
	l->names[fn] = tlsink_name(l->sink, name) + 1;
	return l->names[fn] - 1;
}

/* The sink's handle of each function's name, asked once per function
 * (cache: handle + 1 by function id). */
static inline uint32_t fn_name(struct tl *l, uint32_t fn)
{
	if (fn < l->nnames && l->names[fn])
		return l->names[fn] - 1;
	return fn_name_new(l, fn);
}

/* A TSC estimate as ts: ns (or ticks) since base, the first time of
 * every CPU's trace. */
static uint64_t ts_of(const struct tl *l, uint64_t tsc)
{
	return session_ns(l->t, tsc > l->base ? tsc - l->base : 0);
}

/* ts as the sink takes it, in ns: itself when it is ns, else (the
 * instruction index, TSC ticks) one us each. */
static uint64_t sink_ns(const struct tl_sink *sink, uint64_t ts)
{
	if (sink->ns_precise)
		return ts;
	return ts > UINT64_MAX / 1000 ? UINT64_MAX / 1000 * 1000 : ts * 1000;
}

/* An event's instant (in: its details), its arguments in a: how many. */
static size_t instant_args(const struct tl_item *it, const struct instant *in, struct tl_arg *a)
{
	size_t n = 0;
	if (in->has & IS_DEBUG) {
		a[n++] = (struct tl_arg){ "debug_port", TL_STR, 0, "firmware DEBUG output" };
		a[n++] = (struct tl_arg){ "insn", TL_U64, it->x, NULL };
		a[n++] = (struct tl_arg){ "ip", TL_HEX, in->ip, NULL };
		return n;
	}
	a[n++] = (struct tl_arg){ "offset", TL_U64, in->offset, NULL };
	if (in->has & HAS_IP)
		a[n++] = (struct tl_arg){ "ip", TL_HEX, in->ip, NULL };
	if (in->has & HAS_TARGET)
		a[n++] = (struct tl_arg){ "target", TL_HEX, in->target, NULL };
	if (in->has & HAS_VALUE)
		a[n++] = (struct tl_arg){ "value", TL_HEX, in->value, NULL };
	if (in->error)
		a[n++] = (struct tl_arg){ "error", TL_STR, 0, in->error };
	if (in->has & HAS_TSC)
		a[n++] = (struct tl_arg){ "tsc", TL_U64, in->tsc, NULL };
	return n;
}

/* The sink's time of what is at instruction x, TSC estimate t. */
static inline uint64_t item_ns(struct tl *l, uint64_t x, uint64_t t)
{
	if (!l->timed)
		return sink_ns(l->sink, x);
	if (l->ns_known && t == l->ns_t)
		return l->ns; /* time moves only at timing packets */
	l->ns_known = true;
	l->ns_t = t;
	l->ns = sink_ns(l->sink, ts_of(l, t));
	return l->ns;
}

/* item_ns() of a begin or end; a begin cut at --from is at --from's time. */
static inline uint64_t slice_ns(struct tl *l, const struct tl_item *it)
{
	uint64_t t = it->t;
	if (it->cut && l->from_set && t < l->from_t)
		t = l->from_t; /* the time of --from's block */
	return item_ns(l, it->x, t);
}

/* A slice's begin or end onto the CPU's track (tid CPU + 1). */
static inline void put_slice(struct tl *l, uint64_t ns, uint32_t name, bool end)
{
	l->sink->ops->slice(l->sink, (int)l->cpu + 1, ns, name, end);
}

/* One item onto the CPU's track (tid CPU + 1); an instant's details are
 * the first that wait. */
static void write_item(struct tl *l, const struct tl_item *it)
{
	struct tl_sink *sink = l->sink;
	const int TID = (int)l->cpu + 1;
	uint64_t ns = slice_ns(l, it);
	if (it->kind != Q_INSTANT) {
		put_slice(l, ns, fn_name(l, it->fn), it->kind == Q_END);
	} else {
		const struct instant *in = &l->iq[l->ih++];
		if (l->ih == l->in)
			l->ih = l->in = 0;
		if (!in->name) {
			/* a counter's ts is its time (0 without) */
			sink->ops->counter(sink, TID, sink_ns(sink, ts_of(l, it->t)),
					   tlsink_name(sink, l->cname), "MHz", in->mhz);
		} else {
			struct tl_arg a[6];
			size_t n = instant_args(it, in, a);
			sink->ops->instant(sink, TID, ns, tlsink_name(sink, in->name), a, n);
		}
	}
}

/* Write what can be: up to the first pending begin, and instants only
 * once the model has moved past them (a begin or end where an instant is
 * goes before it); all: the trace has ended. */
static void flush_queue(struct tl *l, bool all)
{
	const struct callstack *cs = l->cs;
	while (l->qh < l->qn) {
		const struct tl_item *it = &l->q[l->qh];
		if (it->pending)
			break;
		if (!all && it->kind == Q_INSTANT &&
		    !(it->x < cs->insns || (it->x == cs->insns && it->t < cs->now)))
			break;
		write_item(l, it);
		l->qh++;
	}
	if (l->qh == l->qn)
		l->qh = l->qn = 0;
}

/* May what is known be written before the batch ends? Not while a begin
 * cut at --from waits for --from's time (write_item()). */
static inline bool write_early(const struct tl *l)
{
	return !l->w.from || l->from_set;
}

/* Room for one more item at the queue's end: 0, or -1 (out of memory). */
static int queue_room(struct tl *l)
{
	if (l->qn < l->qcap)
		return 0;
	if (l->qh) { /* move what waits to the front */
		memmove(l->q, l->q + l->qh, (l->qn - l->qh) * sizeof(*l->q));
		for (uint32_t d = l->shown + 1; d <= l->cs->depth && d <= CS_MAX_DEPTH + 1; d++)
			if (l->fr[d].state == FR_PENDING)
				l->fr[d].qi -= l->qh;
		l->qn -= l->qh;
		l->qh = 0;
		return 0;
	}
	if (!grow_array((void **)&l->q, &l->qcap, l->qn, sizeof(*l->q), 256)) {
		l->oom = true;
		return -1;
	}
	return 0;
}

/* Queue an item of kind at (x, t) (a begin or an end: before the
 * instants at its place, which the model made first); its index, or
 * SIZE_MAX. Filled in place, field by field: an item composed on the
 * stack and copied whole is read back before its bytes are stored. */
static inline size_t queue(struct tl *l, uint8_t kind, bool pending, uint32_t fn, uint64_t x,
			   uint64_t t)
{
	if (l->qn == l->qcap && queue_room(l))
		return SIZE_MAX;
	size_t p = l->qn;
	if (kind != Q_INSTANT)
		while (p > l->qh && l->q[p - 1].kind == Q_INSTANT && l->q[p - 1].x == x &&
		       l->q[p - 1].t == t)
			p--;
	if (p < l->qn) /* mostly it goes last */
		memmove(l->q + p + 1, l->q + p, (l->qn - p) * sizeof(*l->q));
	struct tl_item *it = &l->q[p];
	it->kind = kind;
	it->pending = pending;
	it->cut = false;
	it->fn = fn;
	it->x = x;
	it->t = t;
	l->qn++;
	if (l->qn - l->qh > l->qpeak)
		l->qpeak = l->qn - l->qh;
	return p;
}

static void queue_instant(struct tl *l, uint64_t x, uint64_t t, const struct instant *in)
{
	if (l->in == l->icap) {
		if (l->ih) { /* move what waits to the front */
			memmove(l->iq, l->iq + l->ih, (l->in - l->ih) * sizeof(*l->iq));
			l->in -= l->ih;
			l->ih = 0;
		} else if (!grow_array((void **)&l->iq, &l->icap, l->in, sizeof(*l->iq), 64)) {
			l->oom = true;
			return;
		}
	}
	if (queue(l, Q_INSTANT, false, 0, x, t) != SIZE_MAX)
		l->iq[l->in++] = *in;
}

/* The DEBUG lines written before instruction cs->insns, as instants at the
 * model's time now (the latest it knows). */
static void place_debug_lines_due(struct tl *l, const struct callstack *cs)
{
	while (l->next_dbg < l->ndbg && (uint64_t)l->dbg[l->next_dbg]->insn < cs->insns) {
		const struct dbglog_line *d = l->dbg[l->next_dbg++];
		uint64_t at = (uint64_t)d->insn;
		if (at < l->w.from || (l->w.to && at >= l->w.to))
			continue;
		struct instant in = { .name = d->text, .ip = d->ip, .has = HAS_IP | IS_DEBUG };
		queue_instant(l, at, cs->now, &in);
		l->ninstants++;
		l->dbg_placed++;
	}
}

/* place_debug_lines_due() where a line waits: every frame's enter and
 * leave asks. */
static inline void place_debug_lines(struct tl *l, const struct callstack *cs)
{
	if (l->next_dbg < l->ndbg)
		place_debug_lines_due(l, cs);
}

/* Has frame d run --min-dur instructions in the window by instruction e? */
static bool long_enough(const struct tl *l, const struct tl_frame *f, uint64_t e)
{
	uint64_t b = f->b < l->w.from ? l->w.from : f->b;
	if (l->w.to && e > l->w.to)
		e = l->w.to;
	return e > b && e - b >= l->min_dur;
}

/* Pending frame f is a slice: its begin as it is to be written. */
static inline struct tl_item *show_frame(struct tl *l, struct tl_frame *f)
{
	struct tl_item *it = &l->q[f->qi];
	/* cut at --from: its time is that of --from's block, known when the
	 * batch that reaches it ends (write_item()) */
	it->x = f->b < l->w.from ? l->w.from : f->b;
	it->t = f->tb;
	it->cut = f->b < l->w.from;
	it->pending = false;
	f->state = FR_SHOWN;
	return it;
}

/* Frames shown+1..d are slices (an outer frame is at least as long as
 * one it holds): their begins can be written. */
static void show(struct tl *l, uint32_t d)
{
	for (uint32_t k = l->shown + 1; k <= d; k++)
		if (l->fr[k].state == FR_PENDING) /* else not queued (out of
						   * memory: said at the end) */
			show_frame(l, &l->fr[k]);
	l->shown = d;
}

/* The open frames that have run --min-dur instructions: shown now, so
 * that what follows them need not wait for their end. */
static void show_long(struct tl *l)
{
	const struct callstack *cs = l->cs;
	uint32_t d = l->shown;
	while (d + 1 <= cs->depth && d + 1 <= CS_MAX_DEPTH + 1 &&
	       l->fr[d + 1].state == FR_PENDING && long_enough(l, &l->fr[d + 1], cs->insns))
		d++;
	if (d > l->shown)
		show(l, d);
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct tl *l = ctx;
	uint32_t d = cs->depth;
	if (l->w.by_fn)
		fnwin_span_at(&l->w, cs, f->fn);
	place_debug_lines(l, cs);
	if (d > CS_MAX_DEPTH + 1)
		return;
	/* the frame below has run up to here: a slice once long enough, its
	 * begin (and what waited for it) written now, so that the queue
	 * stays short and the end of a frame without children goes out at
	 * once (on_leave()) */
	if (d - 1 > l->shown && l->fr[d - 1].state == FR_PENDING &&
	    long_enough(l, &l->fr[d - 1], cs->insns) && write_early(l)) {
		show(l, d - 1);
		flush_queue(l, false);
	}
	struct tl_frame *fr = &l->fr[d];
	fr->b = cs->insns; /* field by field: a whole struct is zeroed first */
	fr->tb = cs->now;
	fr->fn = f->fn;
	fr->state = FR_HIDDEN;
	if (l->depth && d > l->depth)
		return;
	size_t qi = queue(l, Q_BEGIN, true, f->fn, cs->insns < l->w.from ? l->w.from : cs->insns,
			  cs->now);
	if (qi != SIZE_MAX) {
		fr->qi = qi;
		fr->state = FR_PENDING;
	}
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct tl *l = ctx;
	(void)f;
	uint32_t d = cs->depth;
	if (l->w.by_fn) {
		uint32_t back = fnwin_leave_to(cs, why);
		if (back != UINT32_MAX)
			fnwin_span_at(&l->w, cs, back);
	}
	place_debug_lines(l, cs);
	if (d > CS_MAX_DEPTH + 1)
		return;
	struct tl_frame *fr = &l->fr[d];
	if (fr->state == FR_HIDDEN)
		return;
	uint64_t e = cs->insns, te = cs->now;
	uint32_t name = UINT32_MAX; /* the sink's, once asked */
	if (fr->state == FR_PENDING) {
		if (!long_enough(l, fr, e)) {
			/* no slice: its begin goes (the last begin queued) */
			if (fr->qi + 1 < l->qn)
				memmove(l->q + fr->qi, l->q + fr->qi + 1,
					(l->qn - fr->qi - 1) * sizeof(*l->q));
			l->qn--;
			fr->state = FR_HIDDEN;
			return;
		}
		if (fr->qi == l->qh && l->qn == l->qh + 1 && write_early(l)) {
			/* the usual slice, a frame without children: nothing
			 * else waits, its begin goes out at once (show()) */
			const struct tl_item *it = show_frame(l, fr);
			name = fn_name(l, fr->fn);
			put_slice(l, slice_ns(l, it), name, false);
			l->qh = l->qn = 0;
		} else {
			show(l, d);
		}
	}
	if (l->w.to && e > l->w.to)
		e = l->w.to;
	if (l->to_set && e == l->w.to && te > l->to_t)
		te = l->to_t;
	if (write_early(l)) {
		if (l->qh < l->qn)
			flush_queue(l, false);
		if (l->qh == l->qn) /* nothing waits to go before it */
			put_slice(l, item_ns(l, e, te),
				  name != UINT32_MAX ? name : fn_name(l, fr->fn), true);
		else
			queue(l, Q_END, false, fr->fn, e, te);
	} else {
		queue(l, Q_END, false, fr->fn, e, te);
	}
	l->nslices++;
	l->shown = d - 1;
	fr->state = FR_HIDDEN;
}

/* --from/--to: the time where the window opens and closes. Called after
 * each part of a batch: the model's time is the part's end's (it catches
 * up at each batch's end, PTFLOW_TIME_REGIONS too). */
static void window_times(struct tl *l, const struct callstack *cs)
{
	if (!cs->timed)
		return;
	if (!l->from_set && cs->insns >= l->w.from) {
		l->from_set = true;
		l->from_t = cs->now;
	}
	if (l->w.to && !l->to_set && cs->insns >= l->w.to) {
		l->to_set = true;
		l->to_t = cs->now;
	}
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct tl *l = ctx;
	(void)ticks;
	/* a CBR counter sample where the ratio changes (33.4.2.14: CBR is the
	 * core:bus ratio, the bus clock 100 MHz) */
	if (cs->cbr == l->cbr || cs->insns < l->w.from || (l->w.to && cs->insns >= l->w.to))
		return;
	l->cbr = cs->cbr;
	struct instant in = { .name = NULL, .mhz = cs->cbr * 100u };
	queue_instant(l, cs->insns, cs->now, &in);
	l->cbr_samples++;
}

static const char *event_name(const struct ptflow_event *ev)
{
	switch (ev->type) {
	case PTFLOW_EV_ENABLED: return "tracing enabled";
	case PTFLOW_EV_DISABLED: return "tracing disabled";
	case PTFLOW_EV_ASYNC_DISABLED: return "tracing disabled (async)";
	case PTFLOW_EV_INTERRUPT: return "interrupt";
	case PTFLOW_EV_OVERFLOW: return "overflow";
	case PTFLOW_EV_STOP: return "trace stop";
	case PTFLOW_EV_PTWRITE: return "ptwrite";
	case PTFLOW_EV_EXSTOP: return "exstop";
	case PTFLOW_EV_MWAIT: return "mwait";
	case PTFLOW_EV_PWRE: return "power entry";
	case PTFLOW_EV_PWRX: return "power exit";
	case PTFLOW_EV_GAP: return "gap (DisTNT)";
	case PTFLOW_EV_ERROR: return "decode error";
	default: return NULL; /* mode changes, paging, VMCS: not shown */
	}
}

/* A batch of blocks through the model, each part of one time
 * (ptflow_batch_part()) with the times of --from and --to and the DEBUG
 * lines it passed; then what is known written (when makes no difference
 * to what: the queue's order is fixed as items come). Once both times are
 * known and no line waits, the parts need nothing between them: the
 * batch goes whole (the model takes the marks itself). */
static void on_batch(void *ctx, const struct ptflow_batch *b)
{
	struct tl *l = ctx;
	if (l->from_set && (!l->w.to || l->to_set) && l->next_dbg >= l->ndbg) {
		cs_on_blocks(l->cs, b);
	} else {
		for (size_t k = 0; k <= b->nmarks; k++) {
			struct ptflow_batch part = ptflow_batch_part(b, k);
			cs_on_blocks(l->cs, &part);
			window_times(l, l->cs);
			place_debug_lines(l, l->cs);
		}
	}
	show_long(l);
	flush_queue(l, false);
}

/* The model's regions (cs_consumer()). */
static uint64_t tl_region(void *ctx, uint64_t ip)
{
	struct tl *l = ctx;
	struct flow_consumer c = cs_consumer(l->cs);
	return c.region(c.ctx, ip);
}

static void on_event(void *ctx, const struct ptflow_event *ev)
{
	struct tl *l = ctx;
	uint64_t ts = l->cs->insns;
	const char *name = event_name(ev);
	const char *vec = ev->type == PTFLOW_EV_INTERRUPT
				  ? irqlog_name(irqlog_find(l->irq, l->cpu, ts)) : NULL;
	if (vec)
		name = vec;
	place_debug_lines(l, l->cs); /* those before it first: instants in order */
	/* the model's time moves to the event's first (cs_on_event() again
	 * changes nothing) */
	if (ev->has_time)
		cs_time(l->cs, ev->tsc, l->cs->cbr);
	if (name && ts >= l->w.from && (!l->w.to || ts < l->w.to)) {
		struct instant in = { .name = name, .offset = ev->offset, .ip = ev->ip,
				      .target = ev->target, .value = ev->value, .tsc = ev->tsc };
		in.has = (ev->has_ip ? HAS_IP : 0) | (ev->has_time ? HAS_TSC : 0) |
			 (ev->type == PTFLOW_EV_INTERRUPT ? HAS_TARGET : 0);
		if (ev->type == PTFLOW_EV_PTWRITE || ev->type == PTFLOW_EV_MWAIT ||
		    ev->type == PTFLOW_EV_PWRE || ev->type == PTFLOW_EV_PWRX)
			in.has |= HAS_VALUE;
		if (ev->type == PTFLOW_EV_ERROR)
			in.error = ev->msg;
		queue_instant(l, ts, l->cs->now, &in);
		l->ninstants++;
	}
	cs_on_event(l->cs, ev);
	show_long(l);
	flush_queue(l, false);
}

/* Packets from d on until a TSC packet (1, its value in *tsc), the end of
 * the trace or no PSB after a bad packet (0), or with psb_only the end of
 * the PSB+ (2). */
static int next_tsc(struct ptpkt_decoder *d, bool psb_only, uint64_t *tsc)
{
	for (;;) {
		struct ptpkt p;
		int n = ptpkt_next(d, &p);
		if (n > 0) {
			if (p.type == ptpkt_tsc) {
				*tsc = p.u.tsc.tsc;
				return 1;
			}
			if (psb_only && (p.type == ptpkt_psbend || p.type == ptpkt_ovf))
				return 2;
		} else if (n == -ptpkt_err_eos || n == -ptpkt_err_truncated ||
			   ptpkt_sync_forward(d)) {
			return 0; /* the end, or no PSB after a bad packet */
		}
	}
}

/*
 * The time base before anything is written: a trace's first TSC packet
 * (33.4.2.11) is where its time starts (the decoder's estimate exists from
 * it on), found by reading packets only. *tsc: that, or with no TSC
 * packet -1 and *psb whether the trace has a PSB at all (one without
 * decodes to nothing). 0, or -1 (printed).
 * window (--to): the rest of the trace is not decoded, so it is not read
 * here either: the first PSB+ has a TSC packet if TSC packets were on
 * (33.3.7, TSCEn), and that changes only while tracing is off, so a trace
 * whose first PSB+ has none is taken as one without (the scan ends at its
 * PSBEND, or at an OVF, which ends a PSB+ too).
 */
static int first_tsc(struct session *s, const char *path, bool window, uint64_t *tsc,
		     bool *psb)
{
	struct input_map in;
	char err[4400];
	struct ptpkt_decoder d;
	*tsc = UINT64_MAX;
	*psb = false;
	if (input_map(&in, path, SIZE_MAX, err, sizeof(err))) {
		fprintf(stderr, "efipt %s: %s\n", s->cmd, term_safe(err));
		return -1;
	}
	ptpkt_init(&d, in.data, in.size, 0);
	if (in.size && !ptpkt_sync_forward(&d)) {
		*psb = true;
		/* the first PSB+, then (without a window) the rest counted by
		 * ptpkt_scan(), many times faster than packet by packet: only
		 * the stretch with a TSC packet is read again for its value */
		int r = next_tsc(&d, true, tsc);
		while (r == 2 && !window) {
			struct ptpkt_decoder at = d;
			struct ptpkt_stat st;
			memset(&st, 0, sizeof(st));
			int n = ptpkt_scan(&d, &st);
			if (st.count[ptpkt_tsc]) {
				d = at;
				r = next_tsc(&d, false, tsc);
			} else if (n == -ptpkt_err_eos || n == -ptpkt_err_truncated ||
				   ptpkt_sync_forward(&d)) {
				r = 0;
			}
		}
	}
	input_unmap(&in);
	return 0;
}

/* A trace on a pipe (--pt -) is read twice (its first TSC, then the
 * decode): copied to an unnamed temporary file that becomes stdin. */
static int stdin_to_file(const char *cmd)
{
	struct stat st;
	if (fstat(0, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	FILE *f = tmpfile();
	char buf[1 << 16];
	ssize_t n;
	if (!f) {
		fprintf(stderr, "efipt %s: a temporary file for the trace on stdin: %s\n", cmd,
			strerror(errno));
		return -1;
	}
	while ((n = read(0, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fwrite(buf, 1, (size_t)n, f) != (size_t)n) {
			fprintf(stderr, "efipt %s: copying the trace on stdin: %s\n", cmd,
				strerror(errno));
			fclose(f);
			return -1;
		}
	}
	if (fflush(f) || dup2(fileno(f), 0) < 0) {
		fprintf(stderr, "efipt %s: the trace on stdin: %s\n", cmd, strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/* The whole timeline's description: JSON's otherData, an instant of
 * Perfetto's. */
struct tl_totals {
	uint64_t insns, gaps, back, cbr, slices, instants, debug;
	long errs;
};

int cmd_timeline(int argc, char **argv)
{
	struct session t;
	struct callstack cs;
	struct tl_sink tw;
	enum tl_format fmt;
	struct tl_opts opt = { .min_dur = 1 };
	struct tl *m = NULL;			/* the CPU being decoded */
	bool opened = false;
	struct dbglog dl = { 0 };
	struct irqlog irq = { 0 };
	int rc = 2;
	struct fpdt_run fpdt;
	memset(&fpdt, 0, sizeof(fpdt));
	session_init(&t, "timeline");
	memset(&cs, 0, sizeof(cs));
	const struct session_cmd sc = { "timeline", timeline_usage, timeline_tail, true,
					"output", timeline_rows,
					sizeof(timeline_rows) / sizeof(timeline_rows[0]), &opt };
	char *run;
	int pr = session_parse_args(&t, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	const char *out = opt.out;
	if (!out) {
		fprintf(stderr, "efipt timeline: -o FILE.json is required (or -o FILE.pftrace: "
			"Perfetto's protobuf trace)\n");
		goto out;
	}
	if (tlsink_format(opt.format, out, &fmt)) {
		fprintf(stderr, "efipt timeline: --format takes json or perfetto, not '%s'\n",
			opt.format);
		goto out;
	}
	/* (an unset from is index 0) */
	if (opt.to.set && !opt.to.is_fn && !opt.from.is_fn && opt.to.index <= opt.from.index) {
		fprintf(stderr, "efipt timeline: --to %llu is not after --from %llu\n",
			(unsigned long long)opt.to.index, (unsigned long long)opt.from.index);
		goto out;
	}
	bool by_fn = opt.from.is_fn || opt.to.is_fn;
	if (!opt.min_dur)
		opt.min_dur = 1; /* an empty slice shows nothing */
	if (session_open(&t, run,
			 SESSION_TRACE | SESSION_SYMBOLS | SESSION_EVERY_CPU))
		goto out;
	/* the DEBUG lines: names of instants, so printable ASCII */
	bool dl_read = false;
	if (t.have_run && !opt.no_log) {
		int r = dbglog_read(&dl, t.rd.path, -1, "timeline");
		if (r < 0)
			goto out;
		dl_read = r == 0;
		for (size_t i = 0; i < dl.n; i++)
			for (char *c = dl.v[i].text; *c; c++)
				if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
					*c = '?';
	}
	if (t.have_run && irqlog_read(&irq, t.rd.path, "timeline") < 0)
		goto out;
	/* time where every trace (that has a PSB) has it, from the earliest
	 * first TSC: known before anything is written */
	int ncpu = (int)t.ntrace;
	bool timed = true;
	uint64_t base = UINT64_MAX;
	for (int i = 0; i < ncpu; i++) {
		uint64_t first;
		bool psb;
		if (!strcmp(t.trace[i].path, "-") && stdin_to_file("timeline"))
			goto out;
		if (first_tsc(&t, t.trace[i].path, opt.to.set, &first, &psb))
			goto out;
		if (psb && first == UINT64_MAX)
			timed = false;
		if (first < base)
			base = first;
	}
	if (base == UINT64_MAX)
		timed = false;
	/* the firmware's records: on the trace's clock where it is ns from a
	 * TSC that counts from reset, else on their own from 0 */
	char ferr[4400];
	if (t.rd.manifest && fpdtrun_load(&fpdt, t.rd.path, &t.images, ferr, sizeof(ferr))) {
		fprintf(stderr, "efipt timeline: %s\n", term_safe(ferr));
		goto out;
	}
	fpdtout_warn_damage("efipt timeline", &fpdt);
	bool pb = fmt == TL_PERFETTO;
	const char *trace0 = t.trace[0].path;
	if (tlsink_open(&tw, fmt, "timeline", out))
		goto out;
	opened = true;
	tw.ns_precise = timed && t.tsc_hz;
	tw.ops->process(&tw, trace0);
	m = calloc(1, sizeof(*m));
	if (!m) {
		fprintf(stderr, "efipt timeline: out of memory\n");
		goto out;
	}
	/* each CPU's track, written as its trace is decoded */
	struct tl_totals tot = { 0 };
	const char *peak = getenv("EFIPT_TIMELINE_PEAK");
	bool whole = false;		/* some CPU's window is whole */
	char missing[700] = "";
	for (int i = 0; i < ncpu; i++) {
		free(m->q);
		free(m->iq);
		free(m->names);
		free(m->dbg);
		fnwin_free(&m->w.win);
		memset(m, 0, sizeof(*m));
		fnwin_span_init(&m->w, &opt.from, &opt.to, &t.st);
		m->min_dur = opt.min_dur;
		m->depth = opt.depth;
		m->t = &t;
		m->cs = &cs;
		m->sink = &tw;
		m->timed = timed;
		m->base = base;
		m->cpu = t.trace[i].cpu;
		m->irq = &irq;
		snprintf(m->cname, sizeof(m->cname), "CPU %u frequency (CBR)", m->cpu);
		bool oom = false;
		if (dl_read && !(m->dbg = dbglog_traced(&dl, m->cpu, &m->ndbg, &oom)) && oom) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
		char tn[32];
		snprintf(tn, sizeof(tn), "CPU %u", m->cpu);
		tw.ops->track(&tw, (int)m->cpu + 1, tn);
		/* slices need the time where frames change; a window's ends
		 * and a DEBUG line need it at an instruction */
		struct cs_listener ls = { m, on_enter, on_leave, NULL, on_time,
					  opt.from.set || opt.to.set || m->ndbg };
		if (cs_init(&cs, &t.st, &ls)) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
		cs.tree = false;
		/* the model's blocks, and the events as instants; decoding
		 * stops at --to */
		struct flow_consumer c = { m, on_batch, on_event, NULL, tl_region, cs.timing, m->w.to,
					   false, by_fn ? &m->w.done : NULL };
		long e = session_decode(&t, (unsigned)i, &c, 1);
		if (e < 0)
			goto out;
		cs_finish(&cs);
		place_debug_lines(m, &cs);
		flush_queue(m, true);
		/* a function's window on some CPU's trace is the file's */
		char why[700];
		if (!fnwin_span_missing(&m->w, cs.insns, why, sizeof(why)))
			whole = true;
		else if (!*missing)
			snprintf(missing, sizeof(missing), "%s", why);
		if (m->oom || cs.oom || m->w.win.oom) {
			fprintf(stderr, "efipt timeline: out of memory for the slices (narrow the "
				"timeline with --from/--to, --depth or --min-dur)\n");
			goto out;
		}
		if (peak)
			fprintf(stderr, "efipt timeline: CPU %u: %zu events held at most\n", m->cpu,
				m->qpeak);
		tot.errs += e;
		tot.insns += cs.insns;
		tot.gaps += cs.gaps;
		tot.back += cs.time_back;
		tot.cbr += m->cbr_samples;
		tot.slices += m->nslices;
		tot.instants += m->ninstants;
		tot.debug += m->dbg_placed;
		m->cs = NULL;
		cs_free(&cs);
	}
	/* a window a function was to open or close that it never did: the
	 * file would not be what was asked for */
	if ((by_fn || opt.from.set) && !whole) {
		fprintf(stderr, "efipt timeline: %s\n", missing);
		goto out;
	}
	/* what the file is (the JSON writes it last, Perfetto where it is) */
	char producer[64], clock[200];
	struct tl_arg info[24];
	size_t ni = 0;
	snprintf(producer, sizeof(producer), "efipt %s", efipt_version);
	info[ni++] = (struct tl_arg){ "producer", TL_STR, 0, producer };
	info[ni++] = (struct tl_arg){ "trace", TL_STR, 0, trace0 };
	if (!timed) {
		info[ni++] = (struct tl_arg){ "time", TL_STR, 0,
			"instruction index: ts counts instructions executed, one microsecond "
			"each; not wall-clock time (timing packets are not used)" };
	} else {
		snprintf(clock, sizeof(clock), "%s since the first timing packet, from the "
			 "trace's TSC, MTC and CYC packets",
			 t.tsc_hz ? (pb ? "ns" : "us (ns precision)")
				  : pb ? "TSC ticks (frequency unknown), one microsecond each"
				       : "TSC ticks (frequency unknown)");
		info[ni++] = (struct tl_arg){ "time", TL_STR, 0, clock };
		info[ni++] = (struct tl_arg){ "tsc_hz", TL_U64, t.tsc_hz, NULL };
		info[ni++] = (struct tl_arg){ "tsc_hz_source", TL_STR, 0, t.tsc_src };
		info[ni++] = (struct tl_arg){ "tsc_first", TL_U64, base, NULL };
		info[ni++] = (struct tl_arg){ "emulated", TL_BOOL, t.facts.emulated, NULL };
		info[ni++] = (struct tl_arg){ "time_steps_back", TL_U64, tot.back, NULL };
		info[ni++] = (struct tl_arg){ "cbr_samples", TL_U64, tot.cbr, NULL };
	}
	info[ni++] = (struct tl_arg){ "instructions", TL_U64, tot.insns, NULL };
	info[ni++] = (struct tl_arg){ "gaps", TL_U64, tot.gaps, NULL };
	info[ni++] = (struct tl_arg){ "decode_errors", TL_U64, (uint64_t)tot.errs, NULL };
	info[ni++] = (struct tl_arg){ "slices", TL_U64, tot.slices, NULL };
	info[ni++] = (struct tl_arg){ "instants", TL_U64, tot.instants, NULL };
	info[ni++] = (struct tl_arg){ "debug_lines", TL_U64, tot.debug, NULL };
	if (ncpu > 1)
		info[ni++] = (struct tl_arg){ "cpus", TL_U64, (uint64_t)ncpu, NULL };
	/* the window, as given; a function's index where one trace has it */
	char wtext[2][600];
	const struct fnwin_where *we[2] = { &opt.from, &opt.to };
	static const char *const wkey[2] = { "window_from", "window_to" };
	for (int k = 0; k < 2; k++) {
		if (!we[k]->set)
			continue;
		uint64_t at = k ? m->w.to : m->w.from;
		if (!we[k]->is_fn)
			snprintf(wtext[k], sizeof(wtext[k]), "instruction %" PRIu64, we[k]->index);
		else if (ncpu == 1 && (k ? at != 0 : at != UINT64_MAX))
			snprintf(wtext[k], sizeof(wtext[k]), "%s (instruction %" PRIu64 ")",
				 we[k]->fn, at);
		else
			snprintf(wtext[k], sizeof(wtext[k]), "%s", we[k]->fn);
		info[ni++] = (struct tl_arg){ wkey[k], TL_STR, 0, wtext[k] };
	}
	uint64_t fshift = 0;
	char fclock[200];
	if (fpdt.present) {
		bool aligned = timed && t.tsc_hz;
		if (aligned)
			fshift = session_ns(&t, base);
		snprintf(fclock, sizeof(fclock), aligned
			 ? "ns since reset less %llu ns (the trace's first TSC): on the trace's clock"
			 : "ns since reset, from 0: not aligned with the trace (it has no "
			   "time in ns)", (unsigned long long)fshift);
		info[ni++] = (struct tl_arg){ "fpdt_time", TL_STR, 0, fclock };
		info[ni++] = (struct tl_arg){ "fpdt_measurements", TL_U64, fpdt.nspan, NULL };
		info[ni++] = (struct tl_arg){ "fpdt_damaged", TL_U64, fpdt.ndamage, NULL };
	}
	tw.ops->info(&tw, info, ni);
	if (fpdt.present) {
		uint64_t dropped;
		if (fpdtout_track(&tw, &fpdt, FPDT_TID, fshift, &dropped) < 0) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
		if (dropped)
			fprintf(stderr, "efipt timeline: %llu FPDT records end before the trace "
				"starts: left out\n", (unsigned long long)dropped);
	}
	opened = false;
	if (tlsink_close(&tw))
		goto out;
	rc = tot.errs ? 1 : 0;
out:
	if (opened)
		tlsink_abort(&tw);
	cs_free(&cs);
	fpdtrun_free(&fpdt);
	session_free(&t);
	if (m) {
		free(m->q);
		free(m->iq);
		free(m->names);
		free(m->dbg);
		fnwin_free(&m->w.win);
	}
	dbglog_free(&dl);
	irqlog_free(&irq);
	free(m);
	return rc;
}
