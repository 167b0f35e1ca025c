/*
 * Inline frames (--inline, docs/symbols.md "Inline frames"): a listener
 * between the call-stack model and an analysis's listener that shows each
 * concrete frame followed by the inline chain it is in (symtab_inline()):
 * the top frame's at the instructions it runs, any other frame's at the last
 * instruction it ran (its call site). Inline frames enter and leave where
 * the chain changes (enter: CS_ENTER_INLINE; leave: CS_LEAVE_REPLACED, or
 * how their concrete frame left); the analysis sees a callstack whose f and
 * depth are the expanded stack, so a count keyed by the top frame goes to
 * the innermost inline frame.
 */
#ifndef EFIPT_HOST_INLINE_FRAMES_H
#define EFIPT_HOST_INLINE_FRAMES_H

#include "host/stack/callstack.h"

struct inl_frames {
	struct cs_listener out;
	struct callstack view;	/* what out is given */
	struct cs_frame *f;	/* the expanded stack */
	uint32_t depth, cap;
	uint32_t *base;		/* per concrete frame: its index in f */
	uint32_t *ctx;		/* per concrete frame: its inline chain */
	bool oom;
};

int inl_frames_init(struct inl_frames *x, const struct cs_listener *out);
void inl_frames_free(struct inl_frames *x);
/* The listener to give cs_init (ctx: x). */
struct cs_listener inl_frames_listener(struct inl_frames *x);

#endif
