/*
 * The call stack over the decoded flow (docs/symbols.md, "The stack model"),
 * one module every analysis shares (top, flame; coverage and timelines).
 *
 * Fed with the flow decoder's runs and events, it keeps a stack of frames,
 * each a function (symtab id) and the return address that ends it:
 * - CALL (near, far, INT n, SYSCALL) pushes a frame for the target and the
 *   address after the call; a CALL to the next instruction is no call;
 * - RET (near, far, IRET, SYSRET) pops to the frame whose return address is
 *   where it went, closing the frames above it (a longjmp skips frames); a
 *   RET that matches no frame pops the top frame, or, from the root, makes
 *   the function it went to a new root under "[unknown caller]"; an
 *   indirect JMP to a frame's return address returns to it (a longjmp);
 * - any other way into a different function (a JMP, a Jcc, falling through)
 *   replaces the top frame's function; into its entry, that is a tail call;
 * - an interrupt (FUP+TIP) pushes a frame for the handler that ends at the
 *   IRET back to the interrupted instruction;
 * - a gap (tracing disabled, overflow, decode error, DisTNT gap) closes every
 *   frame ("unknown end"); the next run starts a new root.
 * Only the last instruction of a run or block can transfer control (both
 * are straight-line code), so nothing is stored per instruction.
 */
#ifndef EFIPT_HOST_CALLSTACK_H
#define EFIPT_HOST_CALLSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_flow.h"
#include "host/input/consumer.h"
#include "host/symbols/symtab.h"

/* How a frame began. */
enum cs_enter {
	CS_ENTER_ROOT,		/* first code after the trace start or a gap */
	CS_ENTER_CALL,
	CS_ENTER_TAIL,		/* a jump to another function's entry */
	CS_ENTER_JUMP,		/* into another function, not at its entry */
	CS_ENTER_INTERRUPT,
	CS_ENTER_UNKNOWN_CALLER,	/* a RET to a caller the trace never saw */
	CS_ENTER_INLINE,	/* an inline frame (host/stack/inline_frames.h) */
};

/* How a frame ended. */
enum cs_leave {
	CS_LEAVE_RETURN,
	CS_LEAVE_SKIPPED,	/* a RET to an older frame went past it */
	CS_LEAVE_REPLACED,	/* tail call or jump to another function */
	CS_LEAVE_UNKNOWN_END,	/* a gap in the trace */
	CS_LEAVE_TRACE_END,
};

struct cs_frame {
	uint64_t ip;		/* where it began (call target, handler, ...) */
	uint32_t fn;
	uint32_t node;		/* call tree node (cs_node) of this frame */
	uint64_t ret;		/* return address that ends it */
	/* [ret_lo, ret_hi): a lookup range holding ret and known to be the
	 * function of the frame below (empty: not known) */
	uint64_t ret_lo, ret_hi;
	bool has_ret;
	uint8_t enter;		/* enum cs_enter */
	/* the frame runs an asynchronous event's handler (FUP+TIP: an
	 * interrupt or exception the code did not ask for; not INT n), or
	 * replaced such a frame (the handler jumped on) */
	bool async;
	/* the node of the last frame pushed on this one, when the call tree
	 * is kept (0: none yet): push() looks up no node when the next is in
	 * the same function (in the frame's padding: 48 bytes still) */
	uint32_t kid;
};

/* Call tree: one node per distinct path of functions from a root. */
struct cs_node {
	uint32_t parent;	/* 0: a root (node 0 is the tree's top) */
	uint32_t fn;
	uint64_t insns;		/* instructions with this node on top */
};

struct callstack;
struct cs_listener {
	void *ctx;
	void (*enter)(void *ctx, const struct callstack *cs, const struct cs_frame *f);
	void (*leave)(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why);
	/* n instructions of the top frame's function from ip on, all in one
	 * address range of symtab_lookup() (one answer: one function, one
	 * inline chain). Counts are batched, but always handed over before
	 * the top frame changes (before enter/leave), so a weight besides
	 * instructions can be taken at exactly the points where frames change. */
	void (*insns)(void *ctx, const struct callstack *cs, uint64_t ip, uint64_t n);
	/* The time moved on by ticks (TSC) with the stack as it is, or the
	 * CBR changed (ticks 0); the first time (cs->now == cs->time_first,
	 * ticks 0) says the trace has time from here on. May be NULL. */
	void (*time)(void *ctx, const struct callstack *cs, uint64_t ticks);
	/* The listener looks at the time at an instruction count, not only
	 * where a frame changes (a window's ends, a line placed by its
	 * instruction): cs_init() then has each block timed. A listener
	 * that wraps another passes this on. */
	bool time_at_insn;
};

/* A stack deeper than this is cut: every frame is closed (unknown end) and
 * the call's frame is the new bottom. Firmware stacks are far shallower; runaway
 * depth comes from flows whose returns the trace does not show. */
#define CS_MAX_DEPTH 1024
/* Call tree nodes at most (16 bytes each, plus the index): a new path past
 * that counts for its deepest known node. */
#define CS_MAX_NODES (1u << 22)
#define CS_RET_HASH 1024

struct callstack {
	struct symtab *st;
	struct cs_listener ls;
	struct cs_frame *f;	/* f[0..depth) */
	uint32_t depth;
	/* frames on the stack returning to an address of each hash
	 * (CS_RET_HASH): a RET or JMP that no frame returns to is known
	 * without looking through the stack */
	uint16_t *ret_count;
	uint64_t insns;		/* instructions so far (pending ones included) */
	uint64_t batch;		/* instructions of the top frame not yet given
				 * to the listener or its node: from batch_ip,
				 * in the lookup range that ends at batch_hi */
	uint64_t batch_ip, batch_hi;
	bool batching;		/* a listener or the tree takes the batches */
	uint64_t gaps, unmatched_rets, too_deep, tree_full;
	struct cs_node *node;	/* call tree */
	uint32_t nnode, node_cap;
	uint32_t *node_hash;	/* (parent, fn) -> node + 1 */
	uint32_t node_hash_cap;
	bool tree;		/* keep the call tree (cs_init: on; flame needs
				 * it, top and calls do not) */
	/* How closely cs_consumer() asks the decoder to time its blocks
	 * (enum ptflow_timing). cs_init() sets PTFLOW_TIME_BLOCKS (each
	 * block's own time) for a listener with time_at_insn, otherwise
	 * PTFLOW_TIME_REGIONS: exact where a frame may change, and there
	 * only: the time moves on (the listener's time()) just before a
	 * block that may change a frame, at the end of a batch and at an
	 * event, with the ticks of every timing packet since, so a
	 * listener credits them to the top frame (or its range) and looks
	 * at the time only when a frame changes. An analysis that shows
	 * no time may set PTFLOW_TIME_NONE after cs_init(): the time then
	 * moves only at each batch and event. */
	uint8_t timing;
	uint64_t later;		/* PTFLOW_TIME_REGIONS: the time now moves on
				 * to (when above it) where a frame may change */
	uint64_t at;		/* the address control is arriving at */
	bool pend;		/* the last run ended in pend_class at pend_end */
	uint8_t pend_class;
	uint64_t pend_end;
	bool oom;
	bool next_async;	/* the next frame pushed is async (cs_frame) */
	/* cs_on_blocks(): [near_lo, near_hi) is known to be the top frame's
	 * function, one lookup range (empty after the top frame changes) */
	uint64_t near_lo, near_hi;
	/* Time (docs/symbols.md, "Time"): each batch of blocks brings the
	 * decoder's estimate (TSC) of its first blocks and a mark where it
	 * moved on (ptflow_blocks_timed(), struct ptflow_time_mark), each
	 * event its own. The time a frame changes is the time of the
	 * block that changes it; time only moves on at timing packets, so
	 * nothing is done per instruction. */
	bool timed;		/* a time seen: now is valid */
	uint64_t now;		/* TSC now, never going back */
	uint64_t time_first;	/* the first time seen */
	uint64_t last_est;	/* the last estimate (may be below now) */
	uint64_t time_back;	/* estimates that stepped back (held at now) */
	uint8_t cbr;		/* core:bus ratio (0: none seen) */
};

int cs_init(struct callstack *cs, struct symtab *st, const struct cs_listener *ls);
void cs_free(struct callstack *cs);

/* ptflow_sink callbacks (ctx: the callstack). A run brings no time: who
 * delivers runs calls cs_time() first. */
void cs_on_run(void *cs, const struct ptflow_run *run);
void cs_on_event(void *cs, const struct ptflow_event *ev);
/* The same flow as blocks (ptflow_on_blocks(); ctx: the callstack): the
 * same frames and counts as its runs, and the batch's time. A block in one
 * function is counted whole; only one that crosses a function's end is
 * split by its instructions' lengths (ptflow_blk_lens()). */
void cs_on_blocks(void *cs, const struct ptflow_batch *batch);

/* The model as a consumer of the decoder loop: blocks (timed, merged
 * inside its regions: the lookup ranges of the symbols, where a jump or a
 * fall-through changes no frame) and events. */
struct flow_consumer cs_consumer(struct callstack *cs);
/* Its regions (ctx: the callstack): the end of ip's lookup range. */
uint64_t cs_region(void *cs, uint64_t ip);

/* The time is tsc (TSC estimate), the core:bus ratio cbr: now moves on
 * (never back: a lower estimate is held and counted in time_back). The
 * model calls it with each batch's estimate and each event's. */
void cs_time(struct callstack *cs, uint64_t tsc, uint8_t cbr);

/* The call tree node for fn under parent (0: a root), made when new: for
 * a listener that builds its own paths (inline frames). */
uint32_t cs_tree_child(struct callstack *cs, uint32_t parent, uint32_t fn);

/* Close every frame at the end of the trace. */
void cs_finish(struct callstack *cs);

#endif
