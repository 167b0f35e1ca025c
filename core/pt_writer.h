/*
 * The packet writer of every trace efipt writes itself: the trace
 * synthesizer (core/pt_synth.c) and the QEMU plugin (qemu-plugin/ptgen.c).
 * It keeps the rules by which a processor lays out its packets (SDM Vol. 3C
 * 33.4), so that each encoder only says what happened:
 *  - TNT: bits collected oldest first, written when tnt_cap are held (6: a
 *    short TNT, as most processors write; up to 47: a long one) and before
 *    any other packet (33.4.2.1);
 *  - IP compression against Last IP (33.4.2.2, Table 33-18), which a PSB
 *    resets; a suppressed IP (IPBytes 0) leaves Last IP alone;
 *  - RET compression against the 64-entry stack of CALL return addresses a
 *    processor keeps (33.4.2.2), emptied at PSB, OVF and where packets
 *    start again;
 *  - MODE.Exec: which code size the decoder was last told (33.4.2.8);
 *  - PSB+ every psb_period bytes (33.3.7): opened by ptwr_psb_begin(),
 *    filled by the caller with the status it has, closed by ptwr_psb_end().
 * Packets go into buf; with a drain callback buf is a staging buffer
 * handed on as it fills, without one it is the whole trace. Timing packets
 * are the caller's (each encoder has its own clock): the before hook runs
 * before every packet outside PSB+, and writes them with ptwr_emit().
 * Freestanding: no allocation; the caller owns the struct and the buffer.
 */
#ifndef EFIPT_CORE_PT_WRITER_H
#define EFIPT_CORE_PT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_pkt.h"

#define PTWR_STACK 64	/* the processor's RET compression stack */

struct ptwr_hooks {
	void *ctx;
	/* before each packet written outside PSB+ (type: enum ptpkt_type) */
	void (*before)(void *ctx, int type);
	/* after each TNT packet: how many bits the next one holds (1..47) */
	uint8_t (*tnt_cap)(void *ctx);
};

struct ptwr {
	/* output */
	uint8_t *buf;
	size_t cap, fill;
	bool (*drain)(void *ctx, const uint8_t *buf, size_t n);	/* may be NULL */
	void *drain_ctx;
	bool failed;		/* a drain failed: nothing more reaches it */
	uint64_t limit;		/* most bytes (a ToPA STOP region), 0: none */
	bool full;		/* limit reached: nothing more is written */
	/* With a drain: hand the staged bytes on as soon as the stream holds
	 * this many (0: only when buf fills), e.g. at the end of the output
	 * region a PT unit writes into, where a ToPA STOP or an operational
	 * error ends the output (SDM 33.2.7.2): the drain sees the packet
	 * that crosses it before any later one is made. */
	uint64_t drain_at;
	struct ptwr_hooks hooks;

	/* what the stream holds so far */
	uint64_t bytes;		/* written, staged ones included */
	uint64_t packets;
	uint64_t last_psb;	/* bytes at the end of the last PSB+ */
	uint32_t psb_period;
	bool in_psb;

	/* decoder-visible state the rules depend on */
	uint64_t lastip;
	uint64_t tnt_bits;
	uint8_t tnt_n, tnt_cap;
	bool retcomp;		/* not DisRETC */
	bool distnt;		/* DisTNT (33.3.9): no TNT bits at all */
	uint8_t mode;		/* enum x86_mode the decoder was last told */
	bool mode_sent;		/* ... and whether it was told at all */
	uint8_t sp, depth;	/* RET compression stack: top, entries */
	uint64_t stack[PTWR_STACK];
};

/* A writer into buf[0..cap) (cap > PTPKT_MAX_SIZE); drain NULL: buf is the
 * whole trace, a packet that does not fit is dropped. psb_period 0: 4096. */
void ptwr_init(struct ptwr *w, uint8_t *buf, size_t cap, uint32_t psb_period, bool retcomp,
	       bool (*drain)(void *ctx, const uint8_t *buf, size_t n), void *drain_ctx);

/* One packet as it is, no hook, no TNT flush (timing packets from the
 * before hook). False when it was not written (full, no room). */
bool ptwr_emit(struct ptwr *w, const struct ptpkt *p);
/* One packet in stream order: TNT bits first, the before hook, then p. */
bool ptwr_put(struct ptwr *w, const struct ptpkt *p);
/* A packet without payload (PSB, PSBEND, OVF, TIP.PGD without IP, ...). */
bool ptwr_put_simple(struct ptwr *w, int type);

/* A conditional branch or compressed RET: one TNT bit. True if it filled
 * the TNT packet, which was written. */
bool ptwr_tnt(struct ptwr *w, bool taken);
/* The TNT bits held, as one packet; true if there were any. */
bool ptwr_flush_tnt(struct ptwr *w);

/* TIP, TIP.PGE, TIP.PGD or FUP to ip, in its shortest form. */
void ptwr_ip(struct ptwr *w, int type, uint64_t ip);
/* ... with IPBytes ipc (ptpkt_ip_choices() against w->lastip says which
 * reconstruct ip; 0: the IP suppressed, ip ignored). */
void ptwr_ip_sized(struct ptwr *w, int type, uint64_t ip, unsigned ipc);

/* MODE.Exec for code size mode (enum x86_mode). */
void ptwr_mode(struct ptwr *w, unsigned mode);
/* ... only if the decoder was told another size, or none yet. */
void ptwr_mode_change(struct ptwr *w, unsigned mode);

/* A near CALL (not a zero-length one) whose return address is ret_to. */
void ptwr_call(struct ptwr *w, uint64_t ret_to);
/* A near RET to target: pops the stack. Compressed (the popped entry is
 * target, RET compression on): its TNT bit is written (none with DisTNT),
 * true. Else false: the caller writes the TIP (or what replaces it). */
bool ptwr_ret(struct ptwr *w, uint64_t target);
/* No RET is compressed against CALLs before this point: packets start
 * again (TIP.PGE, 33.4.2.2) or were lost (OVF, 33.4.2.16). */
void ptwr_forget_calls(struct ptwr *w);

/* OVF: the processor lost packets (33.4.2.16). */
void ptwr_ovf(struct ptwr *w);

/* True when psb_period bytes went by since the last PSB+. */
bool ptwr_psb_due(const struct ptwr *w);
/* PSB: TNT bits out, Last IP and the RET stack reset; status packets
 * follow until ptwr_psb_end() writes PSBEND. */
void ptwr_psb_begin(struct ptwr *w);
void ptwr_psb_end(struct ptwr *w);

/* Hand on what is staged; false if any drain failed. */
bool ptwr_flush(struct ptwr *w);

#endif
