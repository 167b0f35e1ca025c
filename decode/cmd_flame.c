/*
 * efipt flame: folded call stacks, "image`func;...;image`leaf COUNT" per line,
 * the input of flamegraph.pl, speedscope and Perfetto. Every instruction of
 * the trace is counted exactly once, in the stack it ran under.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/commands.h"
#include "decode/file_io.h"
#include "decode/stack/analysis.h"
#include "decode/stack/inline_frames.h"

static void flame_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt flame RUNDIR [--symbols PATH]... > stacks.folded\n"
		"       efipt flame --pt TRACE --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
		"Folded stacks weighted by instructions: one line per distinct stack,\n"
		"\"image`func;image`callee;... COUNT\". Code without symbols is [unknown];\n"
		"a stack whose bottom returned to a caller the trace never saw starts\n"
		"with [unknown caller]. --inline adds inline frames from DWARF after the\n"
		"frame they are inlined into: \"image`caller;inlinee [inlined];...\".\n\n"
		TRACE_INPUT_USAGE
		"\nExit status: 0, 1 if the trace had decode errors, 2 on usage errors,\n"
		"unreadable inputs or a write error.\n");
}

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
		symtab_fn_name(st, fn, name, sizeof(name));
		for (char *p = name; *p; p++)
			if (*p == ';' || *p == '\n')
				*p = '_'; /* the format's separators */
		nm->s[fn] = strdup(term_safe(name));
		if (!nm->s[fn])
			return "[unknown]";
	}
	return nm->s[fn];
}

/* The frames from the root to node, ';'-separated (iterative: stacks may
 * be deep). path holds cs->nnode entries, more than any path. */
static void print_path(const struct callstack *cs, const struct symtab *st, uint32_t node,
		       uint32_t *path, struct names *nm)
{
	uint32_t n = 0;
	for (; node && n < cs->nnode; node = cs->node[node].parent)
		path[n++] = node;
	while (n--) {
		fputs(frame_name(nm, st, cs->node[path[n]].fn), stdout);
		if (n)
			putchar(';');
	}
}

/* With inline frames, the call tree's paths are the expanded stacks: each
 * frame's node, kept as the inline frames listener shows them. */
struct inline_tree {
	struct callstack *cs;
	uint32_t *node;		/* per expanded frame */
	uint32_t cap;
	bool oom;
};

static void tree_enter(void *ctx, const struct callstack *v, const struct cs_frame *f)
{
	struct inline_tree *it = ctx;
	uint32_t d = v->depth - 1;
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

static void tree_insns(void *ctx, const struct callstack *v, uint64_t ip, uint64_t n)
{
	(void)ip;
	struct inline_tree *it = ctx;
	if (v->depth - 1 < it->cap)
		it->cs->node[it->node[v->depth - 1]].insns += n;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option opts[] = {
		TRACE_INPUT_OPTS,
		{ "inline", no_argument, 0, 'i' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct trace_input t;
	struct callstack cs;
	struct names nm = { 0 };
	struct inl_frames x = { 0 };
	struct inline_tree it = { &cs, NULL, 0, false };
	bool inline_frames = false;
	int c, rc = 2;
	trace_input_init(&t, "flame");
	memset(&cs, 0, sizeof(cs));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			flame_usage(stdout);
			rc = 0;
			goto out;
		}
		if (c == 'i') {
			inline_frames = true;
			continue;
		}
		if (c == '?') {
			flame_usage(stderr);
			goto out;
		}
		if (trace_input_option(&t, c, optarg))
			goto out;
	}
	if (optind + 1 < argc) {
		flame_usage(stderr);
		goto out;
	}
	if (trace_input_finish(&t, optind < argc ? argv[optind] : NULL, true))
		goto out;
	struct cs_listener ls = { &it, tree_enter, NULL, tree_insns };
	if ((inline_frames && (symtab_use_inline(&t.st) || inl_frames_init(&x, &ls))) ||
	    cs_init(&cs, &t.st, NULL)) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	if (inline_frames) {
		cs.ls = inl_frames_listener(&x);
		cs.tree = false; /* the listener builds it */
	}
	long errs = analysis_decode(&t, &cs);
	if (errs < 0)
		goto out;
	if (x.oom || it.oom) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	uint32_t *path = malloc(cs.nnode * sizeof(*path));
	if (!path) {
		fprintf(stderr, "efipt flame: out of memory\n");
		goto out;
	}
	for (uint32_t n = 1; n < cs.nnode; n++) {
		if (!cs.node[n].insns)
			continue;
		print_path(&cs, &t.st, n, path, &nm);
		printf(" %" PRIu64 "\n", cs.node[n].insns);
	}
	free(path);
	rc = errs ? 1 : 0;
out:
	for (uint32_t i = 0; i < nm.n; i++)
		free(nm.s[i]);
	free(nm.s);
	cs_free(&cs);
	inl_frames_free(&x);
	free(it.node);
	trace_input_free(&t);
	return rc; /* main's finish_stdout() checks the writes */
}
