/* A window of the flow by function: see fn_window.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt_table.h"
#include "core/strbuf.h"
#include "host/stack/fn_window.h"
#include "host/util/file_io.h"

bool fnwin_names(const char *image, const char *name, const char *spec)
{
	const char *tick = strchr(spec, '`');
	if (!tick)
		return !strcmp(name, spec);
	return !strcmp(name, tick + 1) && strlen(image) == (size_t)(tick - spec) &&
	       !strncmp(image, spec, (size_t)(tick - spec));
}

int fnwin_parse(const char *v, struct fnwin_where *w)
{
	memset(w, 0, sizeof(*w));
	if (!*v)
		return -1;
	w->set = true;
	/* a function name never begins with a digit, '-' or '+': those are
	 * an index (decimal, or hex with 0x; never octal: 010 is ten), or
	 * nothing; an image's name may (8254TimerDxe`TimerDriverInitialize) */
	if (*v == '-' || *v == '+')
		return -1;
	if (*v >= '0' && *v <= '9' && !strchr(v, '`')) {
		unsigned long long n;
		if (parse_u64(v, &n))
			return -1;
		w->index = n;
		return 0;
	}
	w->is_fn = true;
	w->fn = v;
	return 0;
}

int fnwin_opt_where(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	if (fnwin_parse(v, (struct fnwin_where *)((char *)ctx + r->field))) {
		sb_printf(err, "--%s needs an instruction index or a function (NAME or "
			  "IMAGE`NAME), got '%s'", r->name, term_safe(v));
		return -1;
	}
	return 0;
}

bool fnwin_empty(const char *cmd, const struct fnwin_where *from, const struct fnwin_where *to)
{
	uint64_t first = from->set && !from->is_fn ? from->index : 0;
	if (!to->set || to->is_fn || (from->set && from->is_fn) || first < to->index)
		return false;
	if (from->set)
		fprintf(stderr, "%s: --from %llu --to %llu: no instruction index is in [from, to)\n",
			cmd, (unsigned long long)from->index, (unsigned long long)to->index);
	else
		fprintf(stderr, "%s: --to 0: no instruction index is before it\n", cmd);
	return true;
}

void fnwin_init(struct fnwin *w, const char *from, const char *to, struct symtab *st)
{
	memset(w, 0, sizeof(*w));
	w->from = from;
	w->to = to;
	w->st = st;
	/* without a function to open it, the window opens with the trace */
	w->state = from ? FNWIN_BEFORE : FNWIN_OPEN;
}

/* Whether fn is --from's (bit 2) or --to's (bit 4), found once per id. */
static unsigned matches(struct fnwin *w, uint32_t fn)
{
	if (fn >= w->nmatch) {
		uint32_t n = w->nmatch ? w->nmatch : 1024;
		while (n <= fn)
			n *= 2;
		uint8_t *m = realloc(w->match, n);
		if (!m) {
			w->oom = true;
			return 0;
		}
		memset(m + w->nmatch, 0, n - w->nmatch);
		w->match = m;
		w->nmatch = n;
	}
	if (!w->match[fn]) {
		const char *im = symtab_fn_image(w->st, fn), *nm = w->st->fn[fn].name;
		w->match[fn] = (uint8_t)(1 | (w->from && fnwin_names(im, nm, w->from) ? 2 : 0) |
					 (w->to && fnwin_names(im, nm, w->to) ? 4 : 0));
	}
	return w->match[fn];
}

int fnwin_at(struct fnwin *w, uint32_t fn)
{
	if (w->state == FNWIN_CLOSED || fn >= w->st->nfn)
		return FNWIN_NONE;
	unsigned m = matches(w, fn);
	if (w->state == FNWIN_BEFORE && (m & 2)) {
		w->state = FNWIN_OPEN;
		return FNWIN_OPEN;
	}
	if (w->state == FNWIN_OPEN && (m & 4)) {
		w->state = FNWIN_CLOSED;
		return FNWIN_CLOSED;
	}
	return FNWIN_NONE;
}

uint32_t fnwin_leave_to(const struct callstack *cs, int why)
{
	if (cs->depth >= 2 && (why == CS_LEAVE_RETURN || why == CS_LEAVE_SKIPPED))
		return cs->f[cs->depth - 2].fn;
	return UINT32_MAX;
}

void fnwin_free(struct fnwin *w)
{
	free(w->match);
	w->match = NULL;
	w->nmatch = 0;
}

void fnwin_span_init(struct fnwin_span *s, const struct fnwin_where *from,
		     const struct fnwin_where *to, struct symtab *st)
{
	memset(s, 0, sizeof(*s));
	s->from_w = *from;
	s->to_w = *to;
	/* a function's index is known when it runs: nothing before */
	s->from = from->is_fn ? UINT64_MAX : from->index;
	s->to = to->is_fn ? 0 : to->index;
	s->by_fn = from->is_fn || to->is_fn;
	fnwin_init(&s->win, from->is_fn ? from->fn : NULL, to->is_fn ? to->fn : NULL, st);
}

void fnwin_span_at(struct fnwin_span *s, const struct callstack *cs, uint32_t fn)
{
	if (!s->by_fn || (!s->from_w.is_fn && cs->insns < s->from))
		return;
	int r = fnwin_at(&s->win, fn);
	if (r == FNWIN_OPEN) {
		s->from = cs->insns;
		s->opened = true;
	} else if (r == FNWIN_CLOSED) {
		s->to = cs->insns;
		s->done = true;
	}
}

bool fnwin_why_empty(const struct fnwin_where *from, const struct fnwin_where *to, bool opened,
		     uint64_t from_at, bool closed, uint64_t insns, char *buf, size_t cap)
{
	if (closed)
		return false;
	if (from->set && !from->is_fn && insns <= from->index) {
		snprintf(buf, cap, "--from %llu: the trace ends before it (the window never opened)",
			 (unsigned long long)from->index);
		return true;
	}
	if (!from->is_fn && !to->is_fn)
		return false;
	if (from->is_fn && !opened && to->set && !to->is_fn) {
		snprintf(buf, cap, "--from %s: it did not run before --to %llu (the window is empty)",
			 term_safe(from->fn), (unsigned long long)to->index);
		return true;
	}
	if ((from->is_fn && !opened) || to->is_fn) {
		bool o = !from->is_fn || opened;
		snprintf(buf, cap, "--%s %s: it never ran in the trace%s (the window never %s)",
			 o ? "to" : "from", term_safe(o ? to->fn : from->fn),
			 o ? " after the window opened" : "", o ? "closed" : "opened");
		return true;
	}
	if (to->set && from_at >= to->index) {
		snprintf(buf, cap, "--from %s: it first ran at instruction %llu, not before --to "
			 "%llu (the window is empty)", term_safe(from->fn),
			 (unsigned long long)from_at, (unsigned long long)to->index);
		return true;
	}
	return false;
}

bool fnwin_span_missing(const struct fnwin_span *s, uint64_t insns, char *buf, size_t cap)
{
	return fnwin_why_empty(&s->from_w, &s->to_w, s->opened, s->from,
			       s->win.state == FNWIN_CLOSED, insns, buf, cap);
}
