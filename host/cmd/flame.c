/*
 * efipt flame: folded call stacks, "image`func;...;image`leaf COUNT" per line,
 * the input of flamegraph.pl, speedscope and Perfetto. Every instruction of
 * the trace is counted exactly once, in the stack it ran under; with
 * --weight time, the time of a trace with timing packets (ns).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/stack/analysis.h"
#include "host/stack/fn_window.h"
#include "host/stack/folded.h"
#include "host/stack/inline_frames.h"
#include "host/util/file_io.h"
#include "host/util/grow.h"
#include "host/util/opts.h"

static const char flame_usage[] =
	"usage: efipt flame RUNDIR [--symbols PATH]... > stacks.folded\n"
	"       efipt flame --pt TRACE --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
	"Folded stacks weighted by instructions: one line per distinct stack,\n"
	"\"image`func;image`callee;... COUNT\". Code without symbols is [unknown];\n"
	"a stack whose bottom returned to a caller the trace never saw starts\n"
	"with [unknown caller].\n\n";

static const char flame_tail[] =
	"With --from/--to, only the window's instructions (or time) are counted,\n"
	"each under the whole stack it ran in; decoding stops where it closes.\n\n"
	"Exit status: 0, 1 if the trace had decode errors, 2 on usage errors,\n"
	"unreadable inputs or a write error.\n";

struct flame_opts {
	bool inline_frames, by_time;
	struct fnwin_where from, to;
};

static int set_weight(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	if (strcmp(v, "insns") && strcmp(v, "time")) {
		sb_printf(err, "--%s takes insns or time, not '%s'", r->name, term_safe(v));
		return -1;
	}
	((struct flame_opts *)ctx)->by_time = !strcmp(v, "time");
	return 0;
}

static const struct opt_row flame_rows[] = {
	{ "inline", OPT_FLAG, opt_set_true, offsetof(struct flame_opts, inline_frames), NULL,
	  "inline frames from DWARF after the frame they are\ninlined into: \"image`caller;"
	  "inlinee [inlined];...\"" },
	{ "weight", OPT_VALUE, set_weight, 0, "insns|time", "instructions (default), or the "
	  "time each stack\nwas on the CPU in ns, from the trace's timing\npackets (TSC ticks "
	  "when the TSC frequency is\nunknown)" },
	FNWIN_OPT_ROWS(struct flame_opts, "count only"),
};

/* Frame names as printed, made once per function. */
struct names {
	char **s;
	uint32_t n;
};

static const char *frame_name(struct names *nm, const struct symtab *st, uint32_t fn)
{
	if (fn >= nm->n) {
		uint32_t n = nm->n ? nm->n : 256;
		while (n <= fn)
			n *= 2;
		char **a = realloc(nm->s, n * sizeof(*a));
		if (!a)
			return "[unknown]";
		memset(a + nm->n, 0, (n - nm->n) * sizeof(*a));
		nm->s = a;
		nm->n = n;
	}
	if (!nm->s[fn]) {
		char name[700];
		folded_frame_name(st, fn, name, sizeof(name));
		nm->s[fn] = strdup(name);
		if (!nm->s[fn])
			return "[unknown]";
	}
	return nm->s[fn];
}

/* Time (TSC ticks) per call tree node: the node on top when it moved on. */
struct node_time {
	uint64_t *ticks;
	uint32_t n;
	bool oom;
};

static void node_time_add(struct node_time *nt, uint32_t node, uint64_t ticks)
{
	if (node >= nt->n) {
		uint32_t n = nt->n ? nt->n : 1024;
		while (n <= node)
			n *= 2;
		uint64_t *a = realloc(nt->ticks, (size_t)n * sizeof(*a));
		if (!a) {
			nt->oom = true;
			return;
		}
		memset(a + nt->n, 0, (size_t)(n - nt->n) * sizeof(*a));
		nt->ticks = a;
		nt->n = n;
	}
	nt->ticks[node] += ticks;
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	if (ticks && cs->depth)
		node_time_add(ctx, cs->f[cs->depth - 1].node, ticks);
}

/* Every node with a weight, one line each: its frames from the root,
 * ';'-separated, and the weight. The tree is walked from the roots with the
 * path so far in one buffer, so each line costs a copy of its bytes (the
 * output of deep random walks runs to gigabytes), not a walk up to the
 * root with a name lookup per frame. 0, or -1 out of memory. */
static int print_tree(const struct callstack *cs, const struct symtab *st, struct names *nm,
		      const uint64_t *weight)
{
	uint32_t nn = cs->nnode;
	uint32_t *first = calloc(nn, sizeof(*first)), *next = calloc(nn, sizeof(*next));
	uint32_t *up = malloc(nn * sizeof(*up));
	size_t *plen = malloc(nn * sizeof(*plen));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = -1;
	if (!first || !next || !up || !plen)
		goto out;
	for (uint32_t n = nn; n-- > 1;) { /* children in the order they were made */
		uint32_t p = cs->node[n].parent < nn ? cs->node[n].parent : 0;
		next[n] = first[p];
		first[p] = n;
	}
	uint32_t depth = 0, n = nn > 1 ? first[0] : 0;
	while (n) {
		const char *name = frame_name(nm, st, cs->node[n].fn);
		size_t k = strlen(name);
		if (!grow_array((void **)&buf, &cap, len + k + 24, 1, 4096))
			goto out;
		plen[depth] = len;
		if (depth)
			buf[len++] = ';';
		memcpy(buf + len, name, k);
		len += k;
		if (weight[n]) {
			int m = snprintf(buf + len, cap - len, " %" PRIu64 "\n", weight[n]);
			fwrite(buf, 1, len + (size_t)m, stdout);
		}
		if (first[n] && depth + 1 < nn) {
			up[depth++] = n;
			n = first[n];
			continue;
		}
		for (;;) { /* the next sibling of n or of a node above it */
			len = plen[depth];
			if (next[n]) {
				n = next[n];
				break;
			}
			if (!depth) {
				n = 0;
				break;
			}
			n = up[--depth];
		}
	}
	rc = 0;
out:
	free(first);
	free(next);
	free(up);
	free(plen);
	free(buf);
	return rc;
}

/* With inline frames, or a window, the call tree's paths are built by a
 * listener: each frame's node, kept as the (inline frames) listener shows
 * them; with a window, only its instructions and time are counted. */
struct inline_tree {
	struct callstack *cs;
	uint32_t *node;		/* per expanded frame */
	uint32_t cap;
	bool oom;
	struct node_time *nt;	/* --weight time */
	struct fnwin_span *win;	/* --from/--to (NULL: none) */
};

static void tree_enter(void *ctx, const struct callstack *v, const struct cs_frame *f)
{
	struct inline_tree *it = ctx;
	uint32_t d = v->depth - 1;
	if (it->win)
		fnwin_span_at(it->win, v, f->fn);
	if (d >= it->cap) {
		uint32_t cap = it->cap ? it->cap * 2 : 4096;
		uint32_t *a = realloc(it->node, cap * sizeof(*a));
		if (!a) {
			it->oom = true;
			return;
		}
		it->node = a;
		it->cap = cap;
	}
	uint32_t parent = d ? it->node[d - 1] : 0;
	if (f->enter == CS_ENTER_UNKNOWN_CALLER)
		parent = cs_tree_child(it->cs, 0, SYMFN_UNKNOWN_CALLER);
	it->node[d] = cs_tree_child(it->cs, parent, f->fn);
}

/* f leaves: where control returns may open or close the window */
static void tree_leave(void *ctx, const struct callstack *v, const struct cs_frame *f, int why)
{
	(void)f;
	struct inline_tree *it = ctx;
	uint32_t back = fnwin_leave_to(v, why);
	if (back != UINT32_MAX)
		fnwin_span_at(it->win, v, back);
}

/* n instructions of the top frame, the last before v->insns: those in
 * the window */
static void tree_insns(void *ctx, const struct callstack *v, uint64_t ip, uint64_t n)
{
	(void)ip;
	struct inline_tree *it = ctx;
	if (it->win) {
		uint64_t lo = v->insns - n, hi = v->insns, from = it->win->from;
		if (it->win->to && hi > it->win->to)
			hi = it->win->to;
		if (lo < from)
			lo = from;
		n = hi > lo ? hi - lo : 0;
	}
	if (v->depth - 1 < it->cap)
		it->cs->node[it->node[v->depth - 1]].insns += n;
}

/* time moves at timing packets: it counts when they fall in the window */
static void tree_time(void *ctx, const struct callstack *v, uint64_t ticks)
{
	struct inline_tree *it = ctx;
	if (it->win && (v->insns < it->win->from || (it->win->to && v->insns >= it->win->to)))
		return;
	if (ticks && v->depth && v->depth - 1 < it->cap)
		node_time_add(it->nt, it->node[v->depth - 1], ticks);
}

int cmd_flame(int argc, char **argv)
{
	struct session t;
	struct callstack cs;
	struct names nm = { 0 };
	struct node_time nt = { 0 };
	struct flame_opts o = { 0 };
	struct inl_frames x = { 0 };
	struct fnwin_span win;
	struct inline_tree it = { &cs, NULL, 0, false, &nt, NULL };
	memset(&win, 0, sizeof(win));
	int rc = 2;
	session_init(&t, "flame");
	memset(&cs, 0, sizeof(cs));
	const struct session_cmd sc = { "flame", flame_usage, flame_tail, true,
					"output", flame_rows,
					sizeof(flame_rows) / sizeof(flame_rows[0]), &o };
	char *run;
	int pr = session_parse_args(&t, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	bool by_time = o.by_time, inline_frames = o.inline_frames;
	bool windowed = o.from.set || o.to.set;
	if (fnwin_empty("efipt flame", &o.from, &o.to))
		goto out;
	if (session_open(&t, run, SESSION_TRACE | SESSION_SYMBOLS))
		goto out;
	if (windowed) {
		fnwin_span_init(&win, &o.from, &o.to, &t.st);
		it.win = &win;
	}
	/* a window's ends need the time at an instruction */
	struct cs_listener ls = { &it, tree_enter, windowed ? tree_leave : NULL, tree_insns,
				  by_time ? tree_time : NULL, windowed };
	struct cs_listener tl = { &nt, NULL, NULL, NULL, on_time, false };
	if (inline_frames) {
		if (symtab_use_inline(&t.st) || inl_frames_init(&x, &ls)) {
			fprintf(stderr, "efipt flame: out of memory\n");
			goto out;
		}
		ls = inl_frames_listener(&x);
	}
	/* the model keeps the tree unless a listener builds it (inline
	 * frames, a window) */
	bool own_tree = inline_frames || windowed;
	if (cs_init(&cs, &t.st, own_tree ? &ls : by_time ? &tl : NULL)) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	cs.tree = !own_tree;
	if (!by_time) /* weighed by instructions: nothing shows the time */
		cs.timing = PTFLOW_TIME_NONE;
	/* a window stops decoding where it closes */
	long errs = analysis_decode(&t, 0, &cs, win.to, win.by_fn ? &win.done : NULL);
	if (errs < 0)
		goto out;
	if (nt.oom || x.oom || it.oom || win.win.oom) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	char why[700];
	if (windowed && fnwin_span_missing(&win, cs.insns, why, sizeof(why))) {
		fprintf(stderr, "efipt flame: %s\n", why);
		goto out;
	}
	if (by_time && !cs.timed) {
		fprintf(stderr, "efipt flame: --weight time: the trace has no timing packets (TSC, "
			"MTC, CYC); use --weight insns\n");
		goto out;
	}
	if (by_time && !t.tsc_hz)
		fprintf(stderr, "efipt flame: the TSC frequency is unknown: weights are TSC ticks "
			"(--tsc-hz)\n");
	uint64_t *w = malloc(cs.nnode * sizeof(*w));
	if (!w) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	for (uint32_t n = 0; n < cs.nnode; n++)
		w[n] = !by_time ? cs.node[n].insns : n < nt.n ? session_ns(&t, nt.ticks[n]) : 0;
	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	int pt = print_tree(&cs, &t.st, &nm, w);
	free(w);
	if (pt) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	/* the paths the model could not keep whole (top says so in its
	 * summary); with a window, cuts outside it may be counted: not said */
	if (cs.too_deep && !windowed)
		fprintf(stderr,
			"efipt flame: %" PRIu64 " stacks went deeper than %u frames: each was cut "
			"there, its paths start again at the call that went deeper\n",
			cs.too_deep, CS_MAX_DEPTH);
	if (cs.tree_full && !windowed)
		fprintf(stderr,
			"efipt flame: the call tree is full (%u paths): %" PRIu64 " frames on paths "
			"past it were counted for their caller's path\n",
			CS_MAX_NODES, cs.tree_full);
	rc = errs ? 1 : 0;
out:
	for (uint32_t i = 0; i < nm.n; i++)
		free(nm.s[i]);
	free(nm.s);
	free(nt.ticks);
	cs_free(&cs);
	inl_frames_free(&x);
	free(it.node);
	fnwin_free(&win.win);
	session_free(&t);
	return rc; /* main's finish_stdout() checks the writes */
}
