/*
 * The call-stack model: see callstack.h and docs/symbols.md.
 */
#include <stdlib.h>
#include <string.h>

#include "core/x86_insn.h"
#include "host/stack/callstack.h"

static uint32_t node_hash(uint32_t parent, uint32_t fn)
{
	uint64_t k = ((uint64_t)parent << 32 | fn) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32);
}

static int node_rehash(struct callstack *cs, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (uint32_t id = 1; id < cs->nnode; id++) {
		uint32_t i = node_hash(cs->node[id].parent, cs->node[id].fn) & (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = id + 1;
	}
	free(cs->node_hash);
	cs->node_hash = h;
	cs->node_hash_cap = cap;
	return 0;
}

/* The node for fn under parent, made when new (0 out of memory). */
static uint32_t child(struct callstack *cs, uint32_t parent, uint32_t fn)
{
	uint32_t i = node_hash(parent, fn) & (cs->node_hash_cap - 1);
	while (cs->node_hash[i]) {
		const struct cs_node *n = &cs->node[cs->node_hash[i] - 1];
		if (n->parent == parent && n->fn == fn)
			return cs->node_hash[i] - 1;
		i = (i + 1) & (cs->node_hash_cap - 1);
	}
	if (cs->nnode >= CS_MAX_NODES) {
		cs->tree_full++;
		return parent ? parent : 1;
	}
	if (cs->nnode == cs->node_cap) {
		struct cs_node *n = realloc(cs->node, (size_t)cs->node_cap * 2 * sizeof(*n));
		if (!n) {
			cs->oom = true;
			return 0;
		}
		cs->node = n;
		cs->node_cap *= 2;
	}
	uint32_t id = cs->nnode++;
	cs->node[id] = (struct cs_node){ parent, fn, 0 };
	cs->node_hash[i] = id + 1;
	if (cs->nnode * 2 > cs->node_hash_cap && node_rehash(cs, cs->node_hash_cap * 2))
		cs->oom = true;
	return id;
}

uint32_t cs_tree_child(struct callstack *cs, uint32_t parent, uint32_t fn)
{
	return child(cs, parent, fn);
}

int cs_init(struct callstack *cs, struct symtab *st, const struct cs_listener *ls)
{
	memset(cs, 0, sizeof(*cs));
	cs->st = st;
	if (ls)
		cs->ls = *ls;
	cs->f = malloc(CS_MAX_DEPTH * sizeof(*cs->f));
	cs->ret_count = calloc(CS_RET_HASH, sizeof(*cs->ret_count));
	cs->node_cap = 1024;
	cs->node = malloc(cs->node_cap * sizeof(*cs->node));
	if (!cs->f || !cs->ret_count || !cs->node || node_rehash(cs, 4096))
		return -1;
	cs->node[0] = (struct cs_node){ 0, SYMFN_UNKNOWN, 0 };
	cs->nnode = 1;
	child(cs, 0, SYMFN_UNKNOWN); /* node 1: where paths go when the tree is full */
	cs->tree = true;
	cs->timing = cs->ls.time_at_insn ? PTFLOW_TIME_BLOCKS : PTFLOW_TIME_REGIONS;
	return 0;
}

void cs_free(struct callstack *cs)
{
	free(cs->f);
	free(cs->ret_count);
	free(cs->node);
	free(cs->node_hash);
	memset(cs, 0, sizeof(*cs));
}

static void close_all(struct callstack *cs, int why);

static unsigned ret_hash(uint64_t ret)
{
	return (unsigned)(ret ^ ret >> 10) & (CS_RET_HASH - 1);
}

/* Hand the top frame its pending instructions (cs->batch, all in one
 * address range of symtab_lookup() from batch_ip): before any frame
 * changes, so a listener sees every point where the top frame changes. */
static inline void flush(struct callstack *cs)
{
	uint64_t n = cs->batch;
	if (!n)
		return;
	cs->batch = 0;
	if (cs->tree)
		cs->node[cs->f[cs->depth - 1].node].insns += n;
	if (cs->ls.insns)
		cs->ls.insns(cs->ls.ctx, cs, cs->batch_ip, n);
}

/* The top frame changes: nothing is known to be its function. */
static void forget_near(struct callstack *cs)
{
	cs->near_lo = 0;
	cs->near_hi = 0;
}

/* k instructions from ip counted for the top frame; [ip, hi) is one range
 * of symtab_lookup(): they join the pending ones if those are in it. */
static inline void add_insns(struct callstack *cs, uint64_t ip, uint64_t k, uint64_t hi)
{
	if (!cs->batching) {
		cs->insns += k;
		return;
	}
	if (cs->batch && cs->batch_hi != hi)
		flush(cs);
	if (!cs->batch) {
		cs->batch_ip = ip;
		cs->batch_hi = hi;
	}
	cs->batch += k;
	cs->insns += k;
}

/* push_known(), pop() and push_call() are inline: the frame changes of
 * cs_on_blocks()'s common cases are most of the model's work. A frame for
 * fn, returning to ret (has_ret); [ret_lo, ret_hi): a lookup range of the
 * frame below known to hold ret (empty: none, returns_to_caller()). */
static inline __attribute__((always_inline)) void
push_known(struct callstack *cs, uint32_t fn, int enter, bool has_ret, uint64_t ret,
	   uint64_t ret_lo, uint64_t ret_hi)
{
	flush(cs);
	forget_near(cs);
	if (cs->depth == CS_MAX_DEPTH) {
		cs->too_deep++;
		close_all(cs, CS_LEAVE_UNKNOWN_END); /* the call is the new bottom */
	}
	uint32_t node = 0;
	if (cs->tree) {
		/* the caller's frame, whose node is the parent (none for a
		 * root or an unknown caller) */
		struct cs_frame *p = cs->depth && enter != CS_ENTER_UNKNOWN_CALLER
					     ? &cs->f[cs->depth - 1] : NULL;
		if (p && p->kid && cs->node[p->kid].fn == fn) {
			node = p->kid; /* a loop's calls: the same callee */
		} else {
			uint32_t parent = p ? p->node
				        : enter == CS_ENTER_UNKNOWN_CALLER ? child(cs, 0, SYMFN_UNKNOWN_CALLER)
									   : 0;
			node = child(cs, parent, fn);
			/* kept only when found or made (a full tree counts
			 * each path it drops) */
			if (p && cs->node[node].parent == parent && cs->node[node].fn == fn)
				p->kid = node;
		}
	}
	struct cs_frame *f = &cs->f[cs->depth++];
	*f = (struct cs_frame){ cs->at, fn, node, ret, ret_lo, ret_hi, has_ret, (uint8_t)enter,
				cs->next_async, 0 };
	cs->next_async = false;
	if (has_ret)
		cs->ret_count[ret_hash(ret)]++;
	if (cs->ls.enter)
		cs->ls.enter(cs->ls.ctx, cs, f);
}

/* A frame for fn pushed, nothing known about its caller's range. */
static inline __attribute__((always_inline)) void
push(struct callstack *cs, uint32_t fn, int enter, bool has_ret, uint64_t ret)
{
	push_known(cs, fn, enter, has_ret, ret, 0, 0);
}

static inline __attribute__((always_inline)) void pop(struct callstack *cs, int why)
{
	flush(cs);
	forget_near(cs);
	if (cs->f[cs->depth - 1].has_ret)
		cs->ret_count[ret_hash(cs->f[cs->depth - 1].ret)]--;
	if (cs->ls.leave)
		cs->ls.leave(cs->ls.ctx, cs, &cs->f[cs->depth - 1], why);
	cs->depth--;
}

static void close_all(struct callstack *cs, int why)
{
	while (cs->depth)
		pop(cs, why);
	cs->pend = false;
}

/* Make fn the top frame's function (a jump or fall-through into it). */
static void set_top(struct callstack *cs, uint32_t fn, bool entry)
{
	struct cs_frame *t = &cs->f[cs->depth - 1];
	if (t->fn == fn)
		return;
	struct cs_frame keep = *t;
	pop(cs, CS_LEAVE_REPLACED);
	int enter = keep.enter == CS_ENTER_UNKNOWN_CALLER ? CS_ENTER_UNKNOWN_CALLER
		  : keep.enter == CS_ENTER_ROOT && cs->depth == 0 ? CS_ENTER_ROOT
		  : entry ? CS_ENTER_TAIL : CS_ENTER_JUMP;
	cs->next_async = keep.async; /* still the handler's code */
	/* the same frame below */
	push_known(cs, fn, enter, keep.has_ret, keep.ret, keep.ret_lo, keep.ret_hi);
}

/* The youngest frame that returns to ip, or depth. */
static uint32_t frame_returning_to(const struct callstack *cs, uint64_t ip)
{
	uint32_t j = cs->depth;
	if (!cs->ret_count[ret_hash(ip)])
		return j; /* no frame returns to an address of that hash */
	while (j-- > 0)
		if (cs->f[j].has_ret && cs->f[j].ret == ip)
			return j;
	return cs->depth;
}

/* A RET (or IRET) went to ip. */
static void do_return(struct callstack *cs, uint64_t ip)
{
	uint32_t j = frame_returning_to(cs, ip);
	if (j < cs->depth) {
		while (cs->depth > j + 1)
			pop(cs, CS_LEAVE_SKIPPED);
		pop(cs, CS_LEAVE_RETURN);
		return;
	}
	cs->unmatched_rets++;
	if (cs->depth > 1) {
		pop(cs, CS_LEAVE_RETURN);
		return;
	}
	/* the root returned: to a caller from before the trace */
	pop(cs, CS_LEAVE_RETURN);
	uint64_t hi;
	bool entry;
	push(cs, symtab_lookup(cs->st, ip, &hi, &entry), CS_ENTER_UNKNOWN_CALLER, false, 0);
}

/* A call (or INT n) from the range [near_lo, near_hi) pushed a frame that
 * returns to ret: if ret is in that range, the return needs no lookup. */
static inline __attribute__((always_inline)) void
push_call(struct callstack *cs, uint32_t fn, int enter, uint64_t ret)
{
	uint64_t lo = cs->near_lo, hi = cs->near_hi;
	bool known = ret - lo < hi - lo;
	push_known(cs, fn, enter, true, ret, known ? lo : 0, known ? hi : 0);
}

static bool is_return(unsigned iclass)
{
	return iclass == X86_IC_RET_NEAR || iclass == X86_IC_FAR_RET || iclass == X86_IC_IRET ||
	       iclass == X86_IC_SYSRET || iclass == X86_IC_SYSEXIT;
}

/*
 * The usual return: the top frame returns to ip, and [ip, ip + size) lies
 * in the caller's range known at the call (ret_lo, ret_hi; only a frame
 * with a return address has one). Then what do_return() and set_top()
 * would do needs no lookup: return_to_caller().
 */
static inline bool returns_to_caller(const struct callstack *cs, uint64_t ip, uint64_t size)
{
	if (cs->depth < 2)
		return false;
	const struct cs_frame *t = &cs->f[cs->depth - 1];
	return t->ret == ip && ip - t->ret_lo < t->ret_hi - t->ret_lo &&
	       size - 1 < t->ret_hi - ip;
}

static inline void return_to_caller(struct callstack *cs, uint64_t ip)
{
	uint64_t lo = cs->f[cs->depth - 1].ret_lo, hi = cs->f[cs->depth - 1].ret_hi;
	cs->at = ip;
	cs->pend = false;
	pop(cs, CS_LEAVE_RETURN);
	cs->near_lo = lo;
	cs->near_hi = hi;
}

/* Control reached ip: apply the transfer the last run ended in. The top
 * frame's function is then the one at ip; *hi: the end of its range
 * (symtab_lookup()). */
static void arrive(struct callstack *cs, uint64_t ip, uint64_t *hi)
{
	if (cs->pend && is_return(cs->pend_class) && returns_to_caller(cs, ip, 1)) {
		return_to_caller(cs, ip);
		*hi = cs->near_hi;
		return;
	}
	bool entry;
	uint32_t fn = symtab_lookup(cs->st, ip, hi, &entry);
	cs->at = ip;
	if (!cs->depth) {
		push(cs, fn, CS_ENTER_ROOT, false, 0);
		cs->pend = false;
		return;
	}
	if (cs->pend) {
		unsigned k = cs->pend_class;
		cs->pend = false;
		if (x86_returns_after(k)) {
			/* a CALL to the next instruction is a push, no call */
			if (k != X86_IC_CALL_DIRECT || ip != cs->pend_end) {
				push_call(cs, fn, k == X86_IC_INT ? CS_ENTER_INTERRUPT : CS_ENTER_CALL,
					  cs->pend_end);
				return;
			}
		} else if (is_return(k) ||
			   /* a jump to where a frame returns: a longjmp (EDK2's
			    * LongJump jumps to the address SetJump saved) */
			   ((k == X86_IC_JMP_INDIRECT || k == X86_IC_FAR_JMP) &&
			    frame_returning_to(cs, ip) < cs->depth)) {
			do_return(cs, ip);
			if (!cs->depth) {
				/* it returned from the bottom frame (a cut stack) */
				push(cs, fn, CS_ENTER_ROOT, false, 0);
				return;
			}
		}
	}
	set_top(cs, fn, entry);
}

/* n instructions from ip with lengths lens (NULL: all in one function,
 * size bytes), control having arrived at ip: counted for the function each
 * lies in; returns the address after the last. */
static uint64_t count_insns(struct callstack *cs, uint64_t ip, const uint8_t *lens, uint32_t n,
			    uint32_t size)
{
	for (uint32_t i = 0; i < n;) {
		uint64_t hi;
		bool entry;
		uint32_t fn = symtab_lookup(cs->st, ip, &hi, &entry);
		if (i) {
			cs->at = ip;
			set_top(cs, fn, entry); /* fell through into another function */
		}
		uint64_t start = ip;
		uint32_t k = 0;
		if (!lens) {
			k = n;
			ip += size;
			i = n;
		} else {
			do {
				ip += lens[i++];
				k++;
			} while (i < n && ip < hi && ip > start);
		}
		add_insns(cs, start, k, hi);
	}
	forget_near(cs);
	return ip;
}

/* The last instruction (of class iclass) ended at end: applied when
 * control arrives at the next code. */
static void ended(struct callstack *cs, uint8_t iclass, uint64_t end)
{
	cs->pend = true;
	cs->pend_class = iclass;
	cs->pend_end = end;
}

void cs_on_run(void *ctx, const struct ptflow_run *r)
{
	struct callstack *cs = ctx;
	uint64_t hi;
	if (!r->ninsn)
		return;
	cs->batching = cs->tree || cs->ls.insns;
	arrive(cs, r->ip, &hi);
	ended(cs, r->last_iclass, count_insns(cs, r->ip, r->lens, r->ninsn, 0));
}

/* A block that crosses into another function (or wraps), control having
 * arrived at it: split where its run would be (img: the code it ran in). */
static void split_block(struct callstack *cs, const struct ptflow_blk *b, const struct ptimg *img)
{
	uint8_t lens[PTFLOW_BLOCK_MAX];
	uint64_t end = b->ip + b->size;
	unsigned k = ptflow_blk_lens(img, b, lens);
	uint64_t at = count_insns(cs, b->ip, lens, k < b->ninsn ? k : b->ninsn, 0);
	if (k < b->ninsn) /* the code changed: the rest where it ended */
		count_insns(cs, at, NULL, b->ninsn - k, (uint32_t)(end - at));
	ended(cs, b->iclass, b->after);
}

/* The time is tsc (cbr the core:bus ratio): move now on, never back (a
 * new TSC packet can put the estimate below what MTC/CYC made of it). */
void cs_time(struct callstack *cs, uint64_t tsc, uint8_t cbr)
{
	if (!cs->timed) {
		cs->timed = true;
		cs->now = cs->time_first = cs->last_est = tsc;
		cs->cbr = cbr;
		if (cs->ls.time)
			cs->ls.time(cs->ls.ctx, cs, 0);
		return;
	}
	if (tsc < cs->last_est)
		cs->time_back++;
	cs->last_est = tsc;
	uint64_t ticks = tsc > cs->now ? tsc - cs->now : 0;
	bool cbr_changed = cbr != cs->cbr;
	cs->now += ticks;
	cs->cbr = cbr;
	if ((ticks || cbr_changed) && cs->ls.time) {
		flush(cs);	/* the instructions before it first */
		cs->ls.time(cs->ls.ctx, cs, ticks);
	}
}

/* PTFLOW_TIME_REGIONS: a timing mark's estimate noted (counted when it
 * steps back, as cs_time() does); now moves on to it at catch_up(). The
 * first time and a new CBR are given at once. */
static inline void time_later(struct callstack *cs, uint64_t tsc, uint8_t cbr)
{
	if (!cs->timed || cbr != cs->cbr) {
		cs_time(cs, tsc, cbr);
		return;
	}
	if (tsc < cs->last_est)
		cs->time_back++;
	cs->last_est = tsc;
	if (tsc > cs->later)
		cs->later = tsc;
}

/* The time noted by time_later() given, before a frame may change. */
static inline void catch_up(struct callstack *cs)
{
	if (cs->later <= cs->now)
		return;
	uint64_t ticks = cs->later - cs->now;
	cs->now = cs->later;
	if (cs->ls.time) {
		flush(cs); /* the instructions before it first */
		cs->ls.time(cs->ls.ctx, cs, ticks);
	}
}

/* After a last instruction of these classes control goes on in the same
 * frame unless it lands in another function (arrive()'s default case). */
static bool plain_class(unsigned iclass)
{
	return iclass == X86_IC_OTHER || iclass == X86_IC_JCC || iclass == X86_IC_JMP_DIRECT;
}

/* A block the fast loop cannot count: control arrives (frames may change)
 * and [near_lo, near_hi) becomes what is known about the top frame. */
static void slow_block(struct callstack *cs, const struct ptflow_blk *b, const struct ptimg *img)
{
	uint64_t hi, end = b->ip + b->size;
	arrive(cs, b->ip, &hi);
	if (end > hi || end <= b->ip) {
		split_block(cs, b, img);
		return;
	}
	add_insns(cs, b->ip, b->ninsn, hi);
	/* every address from one looked up to its range's end has its answer */
	if (hi == cs->near_hi) {
		if (b->ip < cs->near_lo)
			cs->near_lo = b->ip;
	} else {
		cs->near_lo = b->ip;
		cs->near_hi = hi;
	}
	ended(cs, b->iclass, b->after);
}

/* The usual call: prev's near CALL (not to the next instruction) went to
 * b, which lies in one function. What arrive() and slow_block() would do;
 * false (nothing done) for anything else. */
static inline bool call_into(struct callstack *cs, const struct ptflow_blk *prev,
			     const struct ptflow_blk *b)
{
	uint64_t ret = prev->after, hi;
	bool entry;
	if (!(prev->iclass == X86_IC_CALL_INDIRECT ||
	      (prev->iclass == X86_IC_CALL_DIRECT && b->ip != ret)) ||
	    !cs->depth)
		return false;
	uint32_t fn = symtab_lookup(cs->st, b->ip, &hi, &entry);
	if ((uint64_t)b->size - 1 >= hi - b->ip)
		return false; /* it crosses into another function */
	cs->at = b->ip;
	cs->pend = false;
	push_call(cs, fn, CS_ENTER_CALL, ret);
	cs->near_lo = b->ip;
	cs->near_hi = hi;
	add_insns(cs, b->ip, b->ninsn, hi);
	return true;
}

void cs_on_blocks(void *ctx, const struct ptflow_batch *bt)
{
	struct callstack *cs = ctx;
	cs->batching = cs->tree || cs->ls.insns;
	/* a batch without marks has one time: given at once */
	bool later = cs->timing == PTFLOW_TIME_REGIONS && bt->nmarks;
	if (bt->has_time && later)
		time_later(cs, bt->tsc, bt->cbr);
	else if (bt->has_time)
		cs_time(cs, bt->tsc, bt->cbr);
	const struct ptflow_blk *b = bt->b, *e = b + bt->n, *prev = NULL;
	bool plain = !cs->pend || plain_class(cs->pend_class);
	/* where the time moves next: the block of mark k (none: e) */
	size_t k = 0;
	const struct ptflow_blk *mark = bt->nmarks ? bt->b + bt->marks[0].at : e;
	for (; b < e; b++) {
		if (b == mark) {
			const struct ptflow_time_mark *m = &bt->marks[k++];
			mark = k < bt->nmarks ? bt->b + bt->marks[k].at : e;
			if (m->has_time && later && cs->timed && m->cbr == cs->cbr) {
				time_later(cs, m->tsc, m->cbr); /* noted: nothing to hand over */
			} else if (m->has_time) { /* the instructions before it first */
				if (later) /* (a new CBR) the time noted before it */
					catch_up(cs);
				cs_time(cs, m->tsc, m->cbr);
			}
		}
		if (!b->ninsn)
			continue;
		if (plain && b->ip - cs->near_lo < cs->near_hi - cs->near_lo &&
		    (uint64_t)b->size - 1 < cs->near_hi - b->ip) {
			/* a jump or fall-through inside the range known to be
			 * the top frame's function: counted whole, no lookup,
			 * and no frame changes (near is forgotten when one
			 * does) */
			add_insns(cs, b->ip, b->ninsn, cs->near_hi);
		} else {
			/* a frame may change: the common ones, a return to the
			 * caller and a call into a function, without arrive() */
			if (later)
				catch_up(cs);
			if (prev && is_return(prev->iclass) &&
			    returns_to_caller(cs, b->ip, b->size)) {
				return_to_caller(cs, b->ip);
				add_insns(cs, b->ip, b->ninsn, cs->near_hi);
			} else if (!(prev && call_into(cs, prev, b))) {
				if (prev)
					ended(cs, prev->iclass, prev->after);
				slow_block(cs, b, bt->image);
			}
		}
		plain = plain_class(b->iclass);
		prev = b;
	}
	if (later)
		catch_up(cs);
	if (prev)
		ended(cs, prev->iclass, prev->after);
}

void cs_on_event(void *ctx, const struct ptflow_event *ev)
{
	struct callstack *cs = ctx;
	if (ev->has_time)
		cs_time(cs, ev->tsc, cs->cbr);
	switch (ev->type) {
	case PTFLOW_EV_INTERRUPT:
		/* the interrupted instruction at ip has not run; the handler
		 * returns to it (IRET) */
		if (ev->has_ip && cs->depth) {
			uint64_t hi;
			arrive(cs, ev->ip, &hi);
		}
		{
			uint64_t hi;
			bool entry;
			uint32_t fn = symtab_lookup(cs->st, ev->target, &hi, &entry);
			cs->at = ev->target;
			cs->next_async = true;
			if (!cs->depth)
				push(cs, fn, CS_ENTER_ROOT, false, 0);
			else
				push(cs, fn, CS_ENTER_INTERRUPT, ev->has_ip, ev->ip);
		}
		cs->pend = false;
		break;
	case PTFLOW_EV_DISABLED:
	case PTFLOW_EV_ASYNC_DISABLED:
	case PTFLOW_EV_OVERFLOW:
	case PTFLOW_EV_ERROR:
	case PTFLOW_EV_GAP:
		if (cs->depth)
			cs->gaps++;
		close_all(cs, CS_LEAVE_UNKNOWN_END);
		break;
	default:
		break;
	}
}

void cs_finish(struct callstack *cs)
{
	close_all(cs, CS_LEAVE_TRACE_END);
}

/* The model's regions: the lookup ranges of the symbols (symtab_lookup()).
 * Inside one, a jump or a fall-through changes no frame and counts for the
 * same range, so the decoder may merge the blocks there. */
uint64_t cs_region(void *ctx, uint64_t ip)
{
	struct callstack *cs = ctx;
	uint64_t hi;
	bool entry;
	symtab_lookup(cs->st, ip, &hi, &entry);
	return hi;
}

struct flow_consumer cs_consumer(struct callstack *cs)
{
	struct flow_consumer c = { cs, cs_on_blocks, cs_on_event, NULL, cs_region, cs->timing,
				   0, false, NULL };
	return c;
}
