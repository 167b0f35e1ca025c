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
 * Slices are kept as [begin, end) while decoding and written at the end,
 * sorted by begin (parents first): a slice dropped by --min-dur never
 * leaves a B without its E, and ts never goes back.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "host/cmd/commands.h"
#include "host/input/debuglog.h"
#include "host/util/file_io.h"
#include "host/input/fpdt_run.h"
#include "host/out/fpdt_out.h"
#include "host/out/timeline_sink.h"
#include "host/input/session.h"
#include "host/stack/callstack.h"
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
	"an instant named by its text at the instruction that wrote it.\n"
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

/* The options (copied into each CPU's struct tl). */
struct tl_opts {
	const char *out, *format;
	unsigned long long from, to, min_dur, depth;
	bool no_log;
};

static const struct opt_row timeline_rows[] = {
	{ "output", OPT_VALUE, opts_set_str, offsetof(struct tl_opts, out), "FILE",
	  "the file (written under a temporary name, then\nrenamed)" },
	{ "format", OPT_VALUE, opts_set_str, offsetof(struct tl_opts, format), "json|perfetto",
	  "the format (default: perfetto for FILE.pftrace and\nFILE.perfetto-trace, else json)" },
	{ "from", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, from), "N",
	  "only instructions N.. : slices are cut there\n(instruction indices, also when ts "
	  "is time)" },
	{ "to", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, to), "N",
	  "only instructions ..N (excluded): slices are cut\nthere" },
	{ "min-dur", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, min_dur), "N",
	  "drop slices shorter than N instructions (default 1)" },
	{ "depth", OPT_VALUE, opts_set_u64, offsetof(struct tl_opts, depth), "N",
	  "only slices N levels deep at most" },
	{ "no-log", OPT_FLAG, opt_set_true, offsetof(struct tl_opts, no_log), NULL,
	  "leave out the firmware's DEBUG lines" },
};

/* begin, end: instruction indices; tb, te: their times (TSC, 0 before the
 * first timing packet) */
struct slice {
	uint64_t begin, end;
	uint64_t tb, te;
	uint32_t fn, depth;
};

enum { HAS_IP = 1, HAS_TARGET = 2, HAS_VALUE = 4, HAS_TSC = 8, IS_DEBUG = 16 };
struct instant {
	uint64_t ts, t;		/* instruction index, time */
	const char *name;	/* static, or a DEBUG line's text (IS_DEBUG); NULL: a
				 * CBR counter sample */
	const char *error;	/* a decode error's (static), or NULL */
	uint64_t offset, ip, target, value, tsc;
	uint32_t mhz;		/* a CBR sample's */
	uint8_t has;		/* HAS_*: which of ip .. tsc are known */
};

/* One CPU's trace: its slices and instants (times as TSC estimates: 0
 * before the first timing packet), and what its decoding found. */
struct tl {
	struct session *t;
	struct callstack *cs;
	unsigned cpu;
	bool timed;			/* the CPU's trace had timing packets */
	uint64_t time_first, time_back, insns, gaps;
	long errs;
	unsigned long long from, to, min_dur, depth;
	uint64_t begin[CS_MAX_DEPTH + 2];	/* by frame depth */
	uint64_t begin_t[CS_MAX_DEPTH + 2];
	struct slice *s;
	size_t ns, scap;
	struct instant *in;
	size_t nin, incap;
	bool oom;
	uint8_t cbr;			/* the last CBR sampled */
	uint64_t cbr_samples;
	bool from_set, to_set;		/* the times of --from, --to are known */
	uint64_t from_t, to_t;
	/* the CPU's DEBUG lines by instruction index; the first not yet placed */
	const struct dbglog_line **dbg;
	size_t ndbg, next_dbg, dbg_placed;
};

/* The DEBUG lines written before instruction cs->insns, as instants at the
 * model's time now (the latest it knows). */
static void place_debug_lines(struct tl *l, const struct callstack *cs)
{
	while (l->next_dbg < l->ndbg && (uint64_t)l->dbg[l->next_dbg]->insn < cs->insns) {
		const struct dbglog_line *d = l->dbg[l->next_dbg++];
		uint64_t at = (uint64_t)d->insn;
		if (at < l->from || (l->to && at >= l->to))
			continue;
		if (!grow_array((void **)&l->in, &l->incap, l->nin, sizeof(*l->in), 4096)) {
			l->oom = true;
			return;
		}
		l->in[l->nin++] = (struct instant){ .ts = at, .t = cs->now, .name = d->text,
						    .ip = d->ip, .has = HAS_IP | IS_DEBUG };
		l->dbg_placed++;
	}
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct tl *l = ctx;
	(void)f;
	if (cs->depth <= CS_MAX_DEPTH + 1) {
		l->begin[cs->depth] = cs->insns;
		l->begin_t[cs->depth] = cs->now;
	}
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct tl *l = ctx;
	(void)why;
	uint32_t d = cs->depth;
	if (d > CS_MAX_DEPTH + 1 || (l->depth && d > l->depth))
		return;
	uint64_t b = l->begin[d], e = cs->insns;
	uint64_t tb = l->begin_t[d], te = cs->now;
	if (b < l->from)
		b = l->from; /* cut at --from: the time is that of --from's block */
	if (l->to && e > l->to)
		e = l->to;
	if (e <= b || e - b < l->min_dur)
		return;
	if (!grow_array((void **)&l->s, &l->scap, l->ns, sizeof(*l->s), 4096)) {
		l->oom = true;
		return;
	}
	if (l->from_set && b == l->from && tb < l->from_t)
		tb = l->from_t;
	if (l->to_set && e == l->to && te > l->to_t)
		te = l->to_t;
	l->s[l->ns++] = (struct slice){ b, e, tb, te, f->fn, d };
}

/* --from/--to: the time where the window opens and closes. */
static void window_times(struct tl *l, const struct callstack *cs)
{
	if (!cs->timed)
		return;
	if (!l->from_set && cs->insns >= l->from) {
		l->from_set = true;
		l->from_t = cs->now;
	}
	if (l->to && !l->to_set && cs->insns >= l->to) {
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
	if (cs->cbr == l->cbr || cs->insns < l->from || (l->to && cs->insns >= l->to))
		return;
	l->cbr = cs->cbr;
	if (!grow_array((void **)&l->in, &l->incap, l->nin, sizeof(*l->in), 4096)) {
		l->oom = true;
		return;
	}
	struct instant *i = &l->in[l->nin++];
	i->ts = cs->insns;
	i->t = cs->now;
	i->name = NULL;
	i->mhz = cs->cbr * 100u;
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

/* A batch of blocks through the model; the times of --from and --to. */
static void on_batch(void *ctx, const struct ptflow_batch *b)
{
	struct tl *l = ctx;
	cs_on_blocks(l->cs, b);
	window_times(l, l->cs);
	place_debug_lines(l, l->cs);
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
	place_debug_lines(l, l->cs); /* those before it first: instants in order */
	/* the model's time moves to the event's first (cs_on_event() again
	 * changes nothing) */
	if (ev->has_time)
		cs_time(l->cs, ev->tsc, l->cs->cbr);
	if (name && ts >= l->from && (!l->to || ts < l->to)) {
		if (!grow_array((void **)&l->in, &l->incap, l->nin, sizeof(*l->in), 4096)) {
			l->oom = true;
		} else {
			struct instant *i = &l->in[l->nin++];
			*i = (struct instant){ .ts = ts, .t = l->cs->now, .name = name,
					       .offset = ev->offset, .ip = ev->ip,
					       .target = ev->target, .value = ev->value,
					       .tsc = ev->tsc };
			i->has = (ev->has_ip ? HAS_IP : 0) | (ev->has_time ? HAS_TSC : 0) |
				 (ev->type == PTFLOW_EV_INTERRUPT ? HAS_TARGET : 0);
			if (ev->type == PTFLOW_EV_PTWRITE || ev->type == PTFLOW_EV_MWAIT ||
			    ev->type == PTFLOW_EV_PWRE || ev->type == PTFLOW_EV_PWRX)
				i->has |= HAS_VALUE;
			if (ev->type == PTFLOW_EV_ERROR)
				i->error = ev->msg;
		}
	}
	cs_on_event(l->cs, ev);
}

/* Begin ascending; at the same begin, the outer slice first. */
static int by_begin(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* The sink's handle of each function's name, asked once per function
 * (cache: handle + 1 by function id). */
static uint32_t fn_name(struct tl_sink *sink, uint32_t **cache, uint32_t *n,
			const struct symtab *st, uint32_t fn)
{
	char name[700];
	if (fn >= *n) {
		uint32_t c = *n ? *n : 256;
		while (c <= fn)
			c *= 2;
		uint32_t *a = realloc(*cache, c * sizeof(*a));
		if (!a)
			return tlsink_name(sink, "[unknown]");
		memset(a + *n, 0, (c - *n) * sizeof(*a));
		*cache = a;
		*n = c;
	}
	if (!(*cache)[fn]) {
		symtab_fn_name(st, fn, name, sizeof(name));
		(*cache)[fn] = tlsink_name(sink, name) + 1;
	}
	return (*cache)[fn] - 1;
}

/* A TSC estimate as ts: ns (or ticks) since base, the first time of
 * every CPU's trace. */
static uint64_t ts_of(const struct tl *l, uint64_t tsc, uint64_t base)
{
	return session_ns(l->t, tsc > base ? tsc - base : 0);
}

/* ts as the sink takes it, in ns: itself when it is ns, else (the
 * instruction index, TSC ticks) one us each. */
static uint64_t sink_ns(const struct tl_sink *sink, uint64_t ts)
{
	if (sink->ns_precise)
		return ts;
	return ts > UINT64_MAX / 1000 ? UINT64_MAX / 1000 * 1000 : ts * 1000;
}

/* An event's instant, its arguments in a: how many. */
static size_t instant_args(const struct instant *in, struct tl_arg *a)
{
	size_t n = 0;
	if (in->has & IS_DEBUG) {
		a[n++] = (struct tl_arg){ "debug_port", TL_STR, 0, "firmware DEBUG output" };
		a[n++] = (struct tl_arg){ "insn", TL_U64, in->ts, NULL };
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

/* One CPU's slices (sorted) and instants merged by time, as nested
 * slices on its track (tid CPU + 1); timed: ts is time since base. */
static void write_events(struct tl_sink *sink, struct tl *l, const struct symtab *st, bool timed,
			 uint64_t base)
{
	const int TID = (int)l->cpu + 1;
	char cname[64];
	snprintf(cname, sizeof(cname), "CPU %u frequency (CBR)", l->cpu);
	uint32_t *names = NULL, nnames = 0;
	/* the open slices' ends: instruction index, time, name */
	uint64_t *open = malloc((CS_MAX_DEPTH + 2) * sizeof(*open));
	uint64_t *open_t = malloc((CS_MAX_DEPTH + 2) * sizeof(*open_t));
	uint32_t *open_name = malloc((CS_MAX_DEPTH + 2) * sizeof(*open_name));
	uint32_t nopen = 0;
	size_t i = 0, k = 0;
	if (!open || !open_t || !open_name) {
		free(open);
		free(open_t);
		free(open_name);
		l->oom = true;
		return;
	}
	if (l->ns)
		qsort(l->s, l->ns, sizeof(*l->s), by_begin);
	/* in the order the model made them: by instruction index, then by
	 * time (several frames may change at one index as the time moves on;
	 * without time every time is 0) */
	for (;;) {
		bool slice_next = i < l->ns &&
				  (k >= l->nin || l->s[i].begin < l->in[k].ts ||
				   (l->s[i].begin == l->in[k].ts && l->s[i].tb <= l->in[k].t));
		uint64_t now = slice_next ? l->s[i].begin : k < l->nin ? l->in[k].ts : UINT64_MAX;
		uint64_t now_t = slice_next ? l->s[i].tb : k < l->nin ? l->in[k].t : UINT64_MAX;
		while (nopen && (open[nopen - 1] < now ||
				 (open[nopen - 1] == now && open_t[nopen - 1] <= now_t))) {
			nopen--;
			sink->ops->end(sink, TID, sink_ns(sink, timed ? ts_of(l, open_t[nopen], base)
								  : open[nopen]),
				       open_name[nopen]);
		}
		if (now == UINT64_MAX)
			break;
		if (slice_next) {
			const struct slice *s = &l->s[i++];
			uint32_t name = fn_name(sink, &names, &nnames, st, s->fn);
			sink->ops->begin(sink, TID, sink_ns(sink, timed ? ts_of(l, s->tb, base)
								: s->begin),
					 name);
			if (nopen < CS_MAX_DEPTH + 2) {
				open[nopen] = s->end;
				open_t[nopen] = s->te;
				open_name[nopen++] = name;
			}
		} else if (!l->in[k].name) {
			const struct instant *in = &l->in[k++];
			sink->ops->counter(sink, TID, sink_ns(sink, ts_of(l, in->t, base)),
					   tlsink_name(sink, cname), "MHz", in->mhz);
		} else {
			const struct instant *in = &l->in[k++];
			struct tl_arg a[6];
			size_t n = instant_args(in, a);
			sink->ops->instant(sink, TID, sink_ns(sink, timed ? ts_of(l, in->t, base)
								  : in->ts),
					   tlsink_name(sink, in->name), a, n);
		}
	}
	free(names);
	free(open);
	free(open_t);
	free(open_name);
}

int cmd_timeline(int argc, char **argv)
{
	struct session t;
	struct callstack cs;
	struct tl_sink tw;
	enum tl_format fmt;
	struct tl_opts opt = { .min_dur = 1 };
	struct tl *l = calloc(1, sizeof(*l));	/* the options */
	struct tl *tls = NULL;			/* per CPU */
	int ntl = 0;
	bool opened = false;
	struct dbglog dl = { 0 };
	int rc = 2;
	struct fpdt_run fpdt;
	memset(&fpdt, 0, sizeof(fpdt));
	session_init(&t, "timeline");
	memset(&cs, 0, sizeof(cs));
	if (!l) {
		fprintf(stderr, "efipt timeline: out of memory\n");
		goto out;
	}
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
	l->from = opt.from;
	l->to = opt.to;
	l->min_dur = opt.min_dur;
	l->depth = opt.depth;
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
	if (l->to && l->to <= l->from) {
		fprintf(stderr, "efipt timeline: --to %llu is not after --from %llu\n", l->to,
			l->from);
		goto out;
	}
	if (!l->min_dur)
		l->min_dur = 1; /* an empty slice shows nothing */
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
	int ncpu = (int)t.ntrace;
	tls = calloc((size_t)ncpu, sizeof(*tls));
	if (!tls) {
		fprintf(stderr, "efipt timeline: out of memory\n");
		goto out;
	}
	long errs = 0;
	for (int i = 0; i < ncpu; i++) {
		struct tl *m = &tls[i];
		ntl = i + 1;
		m->from = l->from;
		m->to = l->to;
		m->min_dur = l->min_dur;
		m->depth = l->depth;
		m->t = &t;
		m->cs = &cs;
		m->cpu = t.trace[i].cpu;
		bool oom = false;
		if (dl_read && !(m->dbg = dbglog_traced(&dl, m->cpu, &m->ndbg, &oom)) && oom) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
		struct cs_listener ls = { m, on_enter, on_leave, NULL, on_time };
		if (cs_init(&cs, &t.st, &ls)) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
		cs.tree = false;
		/* the model's blocks, and the events as instants; decoding
		 * stops at --to */
		struct flow_consumer c = { m, on_batch, on_event, NULL, tl_region, true, l->to };
		long e = session_decode(&t, (unsigned)i, &c, 1);
		if (e < 0)
			goto out;
		cs_finish(&cs);
		place_debug_lines(m, &cs);
		if (m->oom || cs.oom) {
			fprintf(stderr, "efipt timeline: out of memory for the slices (narrow the "
				"timeline with --from/--to, --depth or --min-dur)\n");
			goto out;
		}
		m->errs = e;
		m->timed = cs.timed;
		m->time_first = cs.time_first;
		m->time_back = cs.time_back;
		m->insns = cs.insns;
		m->gaps = cs.gaps;
		m->cs = NULL;
		errs += e;
		cs_free(&cs);
	}
	/* time where every trace has it, from the earliest first time */
	bool timed = true;
	uint64_t base = UINT64_MAX, insns = 0, gaps = 0, back = 0, cbr = 0;
	size_t nslices = 0, ninstants = 0, ndebug = 0;
	for (int i = 0; i < ntl; i++) {
		const struct tl *m = &tls[i];
		if (!m->timed && (m->ns || m->nin))
			timed = false;
		if (m->timed && m->time_first < base)
			base = m->time_first;
		insns += m->insns;
		gaps += m->gaps;
		back += m->time_back;
		cbr += m->cbr_samples;
		nslices += m->ns;
		ninstants += m->nin - m->cbr_samples;
		ndebug += m->dbg_placed;
	}
	if (base == UINT64_MAX)
		timed = false;
	/* what the file is: JSON's otherData, an instant of Perfetto's */
	bool pb = fmt == TL_PERFETTO;
	const char *trace0 = t.trace[0].path;
	char producer[64], clock[200];
	struct tl_arg info[20];
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
		info[ni++] = (struct tl_arg){ "time_steps_back", TL_U64, back, NULL };
		info[ni++] = (struct tl_arg){ "cbr_samples", TL_U64, cbr, NULL };
	}
	info[ni++] = (struct tl_arg){ "instructions", TL_U64, insns, NULL };
	info[ni++] = (struct tl_arg){ "gaps", TL_U64, gaps, NULL };
	info[ni++] = (struct tl_arg){ "decode_errors", TL_U64, (uint64_t)errs, NULL };
	info[ni++] = (struct tl_arg){ "slices", TL_U64, nslices, NULL };
	info[ni++] = (struct tl_arg){ "instants", TL_U64, ninstants, NULL };
	info[ni++] = (struct tl_arg){ "debug_lines", TL_U64, ndebug, NULL };
	if (ntl > 1)
		info[ni++] = (struct tl_arg){ "cpus", TL_U64, (uint64_t)ntl, NULL };
	/* the firmware's records: on the trace's clock where it is ns from a
	 * TSC that counts from reset, else on their own from 0 */
	char ferr[4400], fclock[200];
	if (t.rd.manifest && fpdtrun_load(&fpdt, t.rd.path, &t.images, ferr, sizeof(ferr))) {
		fprintf(stderr, "efipt timeline: %s\n", term_safe(ferr));
		goto out;
	}
	fpdtout_warn_damage("efipt timeline", &fpdt);
	uint64_t fshift = 0;
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
	if (tlsink_open(&tw, fmt, "timeline", out))
		goto out;
	opened = true;
	tw.ns_precise = timed && t.tsc_hz;
	tw.ops->process(&tw, trace0);
	tw.ops->info(&tw, info, ni);
	for (int i = 0; i < ntl; i++) {
		char tn[32];
		snprintf(tn, sizeof(tn), "CPU %u", tls[i].cpu);
		tw.ops->track(&tw, (int)tls[i].cpu + 1, tn);
		write_events(&tw, &tls[i], &t.st, timed, base);
		if (tls[i].oom) {
			fprintf(stderr, "efipt timeline: out of memory\n");
			goto out;
		}
	}
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
	rc = errs ? 1 : 0;
out:
	if (opened)
		tlsink_abort(&tw);
	cs_free(&cs);
	fpdtrun_free(&fpdt);
	session_free(&t);
	for (int i = 0; i < ntl; i++) {
		free(tls[i].s);
		free(tls[i].in);
		free(tls[i].dbg);
	}
	dbglog_free(&dl);
	free(tls);
	free(l);
	return rc;
}
