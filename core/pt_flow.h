/*
 * Intel PT instruction flow decoder: packets + code -> executed instructions.
 *
 * Specification: Intel SDM Vol. 3C chapter 33 "Intel Processor Trace":
 * 33.2.1 (what is traced), 33.2.5/33.2.6 (filtering, PacketEn), 33.3.7 (PSB+),
 * 33.3.8 (overflow), 33.3.9 (DisTNT), 33.4.1 and
 * 33.4.2 (packets; IP compression in 33.4.2.2 Table 33-18; RET compression in
 * "Indirect Transfer Compression for Returns"), 33.7 (packet generation
 * scenarios).
 *
 * The decoder walks the code from the current IP and consumes one packet
 * per decision the code alone cannot make: a TNT bit per conditional branch
 * or compressed RET, a TIP per indirect or far transfer, a FUP where an
 * asynchronous event interrupted the flow. Executed instructions are
 * delivered in runs (a start IP and instruction lengths), events one by one,
 * through the caller's sink.
 *
 * Freestanding: no allocation, no globals. The caller owns the decoder and
 * the block cache (a power-of-two number of entries, 8 or more).
 */
#ifndef EFIPT_CORE_PT_FLOW_H
#define EFIPT_CORE_PT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_image.h"
#include "core/pt_pkt.h"
#include "core/pt_time.h"

/* Instructions per cached block: a longer straight-line run is split. */
#define PTFLOW_BLOCK_MAX 48
/* RET compression stack depth (33.4.2.2: the youngest 64 return addresses). */
#define PTFLOW_STACK 64

/* Why a block ends. */
enum ptflow_bend {
	PTFLOW_BEND_BRANCH,	/* last instruction has a class other than OTHER */
	PTFLOW_BEND_SPLIT,	/* PTFLOW_BLOCK_MAX instructions; continues at next */
	PTFLOW_BEND_NOCODE,	/* nothing readable at next */
	PTFLOW_BEND_INVALID,	/* the instruction at next does not decode */
	PTFLOW_BEND_CUT,	/* (delivered blocks only) the flow left before its end */
};

/*
 * A run of straight-line code starting at ip, cached by ip and mode: up to
 * PTFLOW_BLOCK_MAX instructions, the last of which ends the block (a branch,
 * or the size limit, or code that cannot be read or decoded after it).
 * 32 bytes: the block itself, then its chain.
 *
 *   ip (64) | disp (32) |
 *   size_wrmsr_lastlen: size (10) wrmsr (1) 0 (1) last_len (4) |
 *   ninsn_mode: ninsn (6) mode (2) |
 *   class_end: iclass (5) bend (2) zero_len_call (1)
 *
 * disp is the direct branch target relative to ip + size (in 16/32-bit
 * code modulo 2^32); size is in bytes, last_len the last instruction's
 * length, wrmsr says the block may hold a WRMSR. Instruction lengths are
 * not kept: ptflow_block_decode() gives them when needed.
 *
 * The chain is the block plus the blocks it always continues into: through
 * a direct JMP, a direct CALL (at most one that pushes a return address)
 * or a size split, up to PTFLOW_CHAIN_MAX blocks. The hot loops walk a
 * chain as one step, as if it were one block ending in the last block's
 * branch, and go on through links to the cache entries of where that
 * branch goes:
 *
 *   chain_link[0], chain_link[1] (32 each: the entries at the fall-through
 *   and at the direct target, entry number + 1, or 0) |
 *   chain_ret_link (32: the entry at the return address a CALL in the
 *   chain pushes; without one, the entry of the chain's second block, or
 *   in a chain delivered as one block of a region, the offset from ip to
 *   the end of its last instruction when a return comes back there, else
 *   0) | chain_ninsn (8) | chain_class_end (8: the last block's
 *   class_end) | chain_branches (8: blocks ending in a branch) |
 *   chain_hot (8: what the hot loop does, the mode, the push)
 *
 * The cache (cfg.cache, cfg.cache_size entries) holds an index by address
 * (4 bytes per entry, at its start) and the entries, filled in the order
 * the code is first walked and emptied as a whole when full, so that a link
 * stays valid as long as the entry it is in. Fields are private.
 */
struct ptflow_block {
	uint64_t ip;
	int32_t disp;
	uint16_t size_wrmsr_lastlen;
	uint8_t ninsn_mode;
	uint8_t class_end;
	uint32_t chain_link[2];
	uint32_t chain_ret_link;
	uint8_t chain_ninsn;
	uint8_t chain_class_end;
	uint8_t chain_branches;
	uint8_t chain_hot;
};
_Static_assert(sizeof(struct ptflow_block) == 32, "a cache entry is 32 bytes");
#define PTFLOW_CHAIN_MAX 8

/* Event kinds, reported through the sink. */
enum ptflow_ev {
	PTFLOW_EV_ENABLED,	/* TIP.PGE: tracing (re)starts at ip */
	PTFLOW_EV_DISABLED,	/* TIP.PGD: tracing stops; ip where (if known) */
	PTFLOW_EV_ASYNC_DISABLED, /* FUP+TIP.PGD: stopped before the insn at ip */
	PTFLOW_EV_INTERRUPT,	/* FUP+TIP: async branch from ip to target */
	PTFLOW_EV_OVERFLOW,	/* OVF; resumes at ip (if known) */
	PTFLOW_EV_EXEC_MODE,	/* MODE.Exec took effect; value = enum x86_mode */
	PTFLOW_EV_TSX,		/* MODE.TSX; value bit0 intx, bit1 abort */
	PTFLOW_EV_PAGING,	/* PIP: value = CR3, flag = NR */
	PTFLOW_EV_VMCS,		/* VMCS: value = base */
	PTFLOW_EV_STOP,		/* TraceStop */
	PTFLOW_EV_PTWRITE,	/* PTW at the PTWRITE instruction ip; value */
	PTFLOW_EV_EXSTOP,	/* EXSTOP (ip if flag) */
	PTFLOW_EV_MWAIT,	/* value = hints | ext << 8 */
	PTFLOW_EV_PWRE,		/* value = state | sub << 4; flag = hw */
	PTFLOW_EV_PWRX,		/* value = last | deepest << 4 | wr << 8 */
	PTFLOW_EV_CFE,		/* value = type | vector << 8 */
	PTFLOW_EV_EVD,		/* value = payload, aux = type */
	PTFLOW_EV_GAP,		/* DisTNT: a conditional branch could not be followed */
	PTFLOW_EV_ERROR,	/* err says what; decoding resyncs at the next PSB */
	PTFLOW_EV_COUNT
};

/*
 * Why decoding failed (PTFLOW_EV_ERROR's err); ptflow_errstr() names each.
 * The ip of NO_CODE and BAD_INSN is the address that cannot be read or
 * decoded.
 */
enum ptflow_err {
	PTFLOW_ERR_NONE,
	PTFLOW_ERR_PACKET,		/* the packet decoder's: aux = enum ptpkt_error */
	PTFLOW_ERR_PSB_BAD_PACKET,	/* an undecodable packet inside PSB+ */
	PTFLOW_ERR_PSB_UNEXPECTED,	/* TNT, TIP*, PSB inside PSB+ */
	PTFLOW_ERR_PGE_NO_IP,
	PTFLOW_ERR_PGE_ENABLED,		/* TIP.PGE while tracing was on */
	PTFLOW_ERR_OVF_FUP_NO_IP,
	PTFLOW_ERR_FUP_DISABLED,
	PTFLOW_ERR_FUP_NO_IP,
	PTFLOW_ERR_TIP_DISABLED,
	PTFLOW_ERR_TIP_NO_IP,
	PTFLOW_ERR_PGD_DISABLED,
	PTFLOW_ERR_TNT_DISABLED,
	PTFLOW_ERR_UNEXPECTED,		/* a packet the flow has no place for */
	PTFLOW_ERR_FUP_BAD_PACKET,	/* after a FUP; aux = enum ptpkt_error */
	PTFLOW_ERR_FUP_NO_TIP,		/* an async FUP without its TIP/TIP.PGD */
	PTFLOW_ERR_TIP_TNT_PENDING,	/* indirect branch with TNT bits left */
	PTFLOW_ERR_NEED_TIP,		/* indirect branch, another packet next */
	PTFLOW_ERR_NEED_TNT,		/* Jcc, another packet next */
	PTFLOW_ERR_RET_NOT_TAKEN,	/* compressed RET with a not-taken bit */
	PTFLOW_ERR_RET_NO_CALL,		/* compressed RET, empty call stack */
	PTFLOW_ERR_STEPS,		/* cfg.max_steps instructions, no packet */
	PTFLOW_ERR_NO_CODE,		/* nothing readable at ip */
	PTFLOW_ERR_BAD_INSN,		/* the instruction at ip does not decode */
	PTFLOW_ERR_COUNT
};

/* Static text for an error code ("tip without ip"). */
const char *ptflow_errstr(enum ptflow_err err);

struct ptflow_event {
	uint8_t type;		/* enum ptflow_ev */
	bool has_ip;
	bool flag;
	uint64_t offset;	/* trace offset of the packet that caused it */
	uint64_t ip;
	uint64_t target;	/* PTFLOW_EV_INTERRUPT */
	uint64_t value;
	uint64_t aux;
	uint16_t err;		/* PTFLOW_EV_ERROR: enum ptflow_err */
	const char *msg;	/* PTFLOW_EV_ERROR: static text, ptflow_errstr(err)
				 * (PTFLOW_ERR_PACKET: ptpkt_errstr(aux)) */
	uint32_t errata;	/* PTFLOW_EV_ERROR: errata (PTFLOW_ERRATUM_*) whose
				 * pattern the trace showed here, their
				 * workarounds not applied: the CPU that
				 * recorded it may have them (--cpu) */
	bool has_time;
	uint64_t tsc;		/* estimated TSC at the event (core/pt_time.h) */
	uint32_t lost_mtc, lost_cyc;	/* how far to trust it (pttime_get()) */
};

/* ninsn instructions executed from ip, lengths lens[0..ninsn). */
struct ptflow_run {
	uint64_t ip;
	const uint8_t *lens;
	uint32_t ninsn;
	uint8_t mode;
	uint8_t last_iclass;	/* class of the last insn (OTHER if cut short) */
};

/*
 * A block of executed instructions as ptflow_on_blocks() hands it over:
 * straight-line code from ip, ninsn instructions in size bytes. The fast
 * loops deliver these as they walk, without decoding a single instruction
 * again; ptflow_blk_lens() gives the lengths to a consumer that needs them.
 * With ptflow_blk_regions(), a block can stand for several in one region.
 */
struct ptflow_blk {
	uint64_t ip;		/* the first instruction */
	uint64_t next;		/* where the flow went after the last one (the
				 * branch's target or fall-through: the next
				 * block's ip), or 0 when an event came first */
	uint16_t ninsn;
	uint16_t size;		/* bytes from ip to the end of the last insn */
	uint8_t mode;		/* enum x86_mode */
	uint8_t iclass;		/* class of the last insn (OTHER if cut short) */
	uint8_t end;		/* enum ptflow_bend: how the block ended */
	/* where the last instruction ends (where a CALL returns): ip + size,
	 * except in a block of several with regions (ptflow_blk_regions()),
	 * which says it only when a return comes back there */
	uint64_t after;
};
#define PTFLOW_BLK_BATCH 64	/* blocks per call, at most */

/* ptflow_blocks_timed(): where the time moved inside a batch (a timing
 * packet between two blocks): from block at on, the estimate is tsc
 * (has_time: valid) and the core:bus ratio cbr. */
struct ptflow_time_mark {
	uint64_t tsc;
	uint32_t at;
	uint8_t cbr;
	bool has_time;
};

/*
 * A batch of blocks as ptflow_on_blocks() hands it over, with what a
 * consumer needs of the decoder at that point, so that none holds the
 * decoder while it delivers: the blocks b[0..n) in the order they ran (an
 * event is delivered after the blocks before it), the time estimate and
 * core:bus ratio when the batch left the decoder (with
 * ptflow_blocks_timed(): those of its first blocks, and marks where they
 * change), and the code they ran in, for ptflow_blk_lens().
 */
struct ptflow_batch {
	const struct ptflow_blk *b;
	size_t n;
	bool has_time;		/* tsc is valid (a TSC packet was seen) */
	uint64_t tsc;		/* the time estimate (core/pt_time.h) */
	uint8_t cbr;		/* the last CBR (0: none yet) */
	const struct ptimg *image;	/* the decoder's code */
	/* ptflow_blocks_counted(): b[i] ran execs[i] times, each time going
	 * on to b[i].next, which is 0 unless its last instruction is a
	 * conditional branch (the way it went); the batch is in no order.
	 * NULL: each block ran once, in the order given. */
	const uint64_t *execs;
	/* ptflow_blocks_timed(): the time of b[0] up to marks[0].at is the
	 * one above, then each mark's; 0 < marks[k].at < n, increasing */
	const struct ptflow_time_mark *marks;
	size_t nmarks;
};

/* Part k (0..nmarks) of a batch: its blocks of one time, as a batch of
 * their own (no marks; never empty). */
static inline struct ptflow_batch ptflow_batch_part(const struct ptflow_batch *bt, size_t k)
{
	struct ptflow_batch p = *bt;
	size_t from = k ? bt->marks[k - 1].at : 0, to = k < bt->nmarks ? bt->marks[k].at : bt->n;
	if (k) {
		p.has_time = bt->marks[k - 1].has_time;
		p.tsc = bt->marks[k - 1].tsc;
		p.cbr = bt->marks[k - 1].cbr;
	}
	p.b = bt->b + from;
	p.n = to - from;
	p.marks = NULL;
	p.nmarks = 0;
	return p;
}

typedef void (*ptflow_blocks_fn)(void *ctx, const struct ptflow_batch *batch);

struct ptflow_sink {
	void *ctx;
	/* May be NULL: runs are then only counted (--stat). */
	void (*run)(void *ctx, const struct ptflow_run *run);
	void (*event)(void *ctx, const struct ptflow_event *ev);
};

/* Errata workarounds (see docs and pt_flow.c for each). */
enum {
	PTFLOW_ERRATUM_BDM70 = 1u << 0,
	PTFLOW_ERRATUM_BDM64 = 1u << 1,
	PTFLOW_ERRATUM_SKD007 = 1u << 2,
	PTFLOW_ERRATUM_SKD022 = 1u << 3,
	PTFLOW_ERRATUM_SKD010 = 1u << 4,
	PTFLOW_ERRATUM_SKL014 = 1u << 5,
	PTFLOW_ERRATUM_APL11 = 1u << 6,
	PTFLOW_ERRATUM_APL12 = 1u << 7,
	PTFLOW_ERRATUM_SKL168 = 1u << 8,
	PTFLOW_ERRATUM_SKZ84 = 1u << 9,
};

/*
 * The workarounds that act only where a trace breaks the SDM's rules: at a
 * packet the strict decoder rejects as an error (a TIP.PGE while tracing
 * is on, TIP/TNT/TIP.PGD while off after an overflow), never on a trace
 * that follows them, which therefore decodes the same with them or
 * without (tests/unit/test_pt_flow_scenarios.c decodes every SDM scenario
 * both ways). They are applied when nothing says which CPU recorded a
 * trace. The others change how a trace that follows the SDM decodes
 * (SKD022 and SKL014 reread a valid disable, BDM64 an abort's FUP, SKD007
 * a CYC, SKZ84 the byte after a TMA, SKL168 time), so they need the CPU.
 */
#define PTFLOW_ERRATA_SDM_SAFE                                                   \
	(PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12 | PTFLOW_ERRATUM_SKD010 |   \
	 PTFLOW_ERRATUM_APL11)

/* Errata that apply to a CPU (family, model as displayed: 6/0x3d; stepping
 * or -1 for any). */
uint32_t ptflow_errata_for_cpu(unsigned family, unsigned model, int stepping);
/* Name of one erratum bit ("bdm70"), or NULL. */
const char *ptflow_erratum_name(uint32_t bit);

struct ptflow_config {
	struct ptimg image;
	struct ptflow_block *cache;	/* cache_size entries, power of two; */
	uint32_t cache_size;		/* below 8: no cache (slow) */
	uint32_t errata;		/* PTFLOW_ERRATUM_* */
	uint64_t max_steps;		/* insns without a packet (0: 1<<20) */
	bool distnt;			/* trace recorded with DisTNT=1 */
	bool disretc;			/* trace recorded with DisRETC=1 */
	/* Timing: CPUID.15H EAX/EBX (TSC/CTC ratio), MTC frequency field
	 * (IA32_RTIT_CTL.MTCFreq), nominal frequency ratio (CPUID.16H / BCLK). */
	uint32_t cpuid15_eax, cpuid15_ebx;
	uint8_t mtc_freq;
	uint8_t nom_freq;
};

struct ptflow_stat {
	uint64_t insns;
	uint64_t branches;	/* instructions whose class is not OTHER */
	uint64_t events;
	uint64_t errors;
	uint64_t packets;
	uint64_t blocks;	/* steps of the walk: blocks, or chains of blocks */
	uint64_t decoded;	/* blocks decoded (cache misses) */
	uint32_t errata_used;	/* PTFLOW_ERRATUM_* whose workarounds acted */
	struct ptflow_event first_error;	/* the first PTFLOW_EV_ERROR (type
					 * PTFLOW_EV_ERROR only when errors) */
};

/* The decoder: caller-owned, about 2.7 KiB. Fields are private. */
struct ptflow_decoder {
	struct ptflow_config cfg;
	uint32_t *index;		/* cache: index by address, imask + 1 slots */
	struct ptflow_block *ents;	/* cache: entries, nents of them */
	uint32_t imask, nents, used;
	struct ptflow_sink sink;
	struct ptpkt_decoder pk;
	struct ptpkt_lastip lastip;
	struct ptflow_stat stat;
	uint64_t ip;
	uint64_t tnt_bits;	/* next bit to use is bit tnt_n-1 */
	uint64_t steps;
	uint64_t pend_off;
	struct ptpkt pend;
	int fetch_err;		/* the packet decoder's error, until the next PSB */
	uint8_t tnt_n;
	uint8_t mode;
	uint8_t next_mode;	/* MODE.Exec waiting for its TIP/PGE/FUP */
	bool have_next_mode;
	bool have_pend;
	bool enabled;
	uint8_t fup_kind;	/* why the pending FUP was sent */
	uint8_t sp, sn;		/* return stack top index and depth */
	bool walked;		/* an instruction ran since the last enable */
	bool after_ovf;
	bool gap;		/* DisTNT: flow lost at a Jcc, PacketEn still 1 */
	bool at_mov_cr3;	/* the walk stopped right after a MOV CR3 and
				 * its PIP: a TIP.PGD without IP binds there */
	uint64_t mov_cr3_next;	/* ... the IP after that MOV CR3 */
	bool ret_unknown;	/* DisTNT: calls were lost, the stack is unknown */
	bool bound_set;		/* bound_ev waits for the FUP that gives its IP */
	uint32_t erratum_seen;	/* since the last PSB: erratum patterns met
				 * without their workaround (for the next error) */
	uint64_t tma_end;	/* offset after the last TMA (SKZ84's bogus byte) */
	struct ptflow_event bound_ev;
	uint64_t stack[PTFLOW_STACK];
	uint32_t stack_link[PTFLOW_STACK];	/* the cache entries there (or 0) */
	struct pttime time;
	ptflow_blocks_fn on_blocks;	/* ptflow_on_blocks() */
	uint64_t (*blk_region)(void *ctx, uint64_t ip);	/* ptflow_blk_regions() */
	void *blk_region_ctx;
	struct ptflow_blk *blk_merge;	/* blk_cur after a quiet chain's block,
					 * which takes the next one's counts */
	bool blk_open;		/* the last buffered block waits for its next */
	uint8_t blk_timed;	/* ptflow_blocks_timed(): enum ptflow_timing */
	/* with it: the time of blk[0] on, and where it changes in blk */
	struct ptflow_time_mark blk_time, blk_marks[PTFLOW_BLK_BATCH];
	uint32_t blk_nmarks;
	struct ptflow_time_mark *blk_due;	/* its tsc and cbr: the estimate now */
	struct ptflow_blk *blk_due_cur;		/* blk_cur when it was made */
	bool blk_waiting;	/* the last block handed over waits for its next */
	uint64_t *counts;	/* ptflow_blocks_counted() */
	bool stop;		/* ptflow_stop() */
	void (*progress)(void *ctx, uint64_t offset);	/* ptflow_on_progress() */
	void *progress_ctx;
	/* ptflow_on_position(): the packet reader's end is held at pos_at
	 * (pk.end below pk_end) until the decoder gets there */
	uint64_t pos_at;
	uint64_t (*pos_fn)(void *ctx, uint64_t offset);
	void *pos_ctx;
	const uint8_t *pk_end;	/* the buffer's real end */
	uint32_t code_gen;	/* counts the cache emptied for a position */
	struct ptflow_blk blk[PTFLOW_BLK_BATCH], *blk_cur; /* to deliver */
};

/* Set up d over a configuration and sink (both copied). */
int ptflow_init(struct ptflow_decoder *d, const struct ptflow_config *cfg,
		const struct ptflow_sink *sink);

/*
 * Decode the whole trace buf[0..size) (stream offset base): synchronise at
 * the first PSB, decode, report errors as PTFLOW_EV_ERROR events and resync
 * at the next PSB after each. Returns the number of errors (0 = clean).
 * Work is bounded per byte: at most cfg.max_steps instructions between two
 * packets.
 */
long ptflow_decode(struct ptflow_decoder *d, const uint8_t *buf, size_t size, uint64_t base);

/*
 * Have the executed instructions delivered as blocks, in batches, to
 * fn(sink.ctx, ...) (set after ptflow_init(); NULL: no blocks). This is
 * the fast way to see every instruction: the block cache's loops deliver
 * blocks as fast as they count, where a run callback gets lengths decoded
 * again for every block. Both may be set.
 */
void ptflow_on_blocks(struct ptflow_decoder *d, ptflow_blocks_fn fn);

/*
 * Regions of code inside which the block consumer only counts (a call-stack
 * model: the lookup ranges of its symbols), so that it gets fewer, larger
 * blocks. region(ctx, ip) returns the end of ip's region: every address
 * from ip up to it is in that region, two addresses with the same end are
 * in the same one; 0 puts ip in none. Then:
 * - a chain of blocks whose code lies in one region (with regions, a chain
 *   ends at every CALL that pushes) comes as one block: ip its first
 *   instruction, ninsn all its instructions, iclass, end and next those of
 *   its last; after is the address after its last instruction when a
 *   return comes back there (x86_returns_after()), which may lie below ip
 *   (a loop's jump back to the code that calls); ip + size is some address
 *   in the region past ip;
 * - a quiet chain, one that also cannot take the flow out of its region
 *   (it ends in a Jcc, a direct JMP or a split, and every place that goes
 *   is in the region), leaves the block it came as open: the next chain,
 *   if it lies in the same region (it starts there), is added to that
 *   block (ninsn grows; iclass, end, next and, when a return comes back
 *   after its last instruction, after become its own) instead of coming
 *   as blocks of its own; the block stays open while
 *   quiet chains are added.
 * Nothing is added across a batch, an event or any other block, so every
 * point where the flow can leave a region or where time moves on
 * (ptflow_blocks_timed(), unless PTFLOW_TIME_REGIONS) still ends a block. Set after ptflow_on_blocks()
 * and before decoding (the cache is emptied: chains are marked as they are
 * made); NULL: blocks as without.
 */
void ptflow_blk_regions(struct ptflow_decoder *d, uint64_t (*region)(void *ctx, uint64_t ip),
			void *ctx);

/*
 * Have the blocks counted rather than handed over one by one, for a
 * consumer that wants to know which blocks ran, how often, and which way
 * each conditional branch went, in no particular order (coverage): the
 * fast loops count each step they take in its cache entry's slot of
 * counts, one per way of the step's last branch (2 per cache entry,
 * caller-owned, zeroed), and hand the counts over as batches with execs
 * set when the cache is emptied, before a position callback
 * (ptflow_on_position()) and at the end of ptflow_decode(). Blocks the
 * state machine delivers come one by one as before, and so does the first
 * block after a batch whose last block still waited for where the flow
 * went (an event came between), so that a consumer waiting for it learns
 * it in order. Works with the cache only, and not with runs (sink.run),
 * regions or timed blocks: then blocks come as without. NULL: off.
 */
void ptflow_blocks_counted(struct ptflow_decoder *d, uint64_t *counts);

/* How closely ptflow_blocks_timed() times the blocks (in increasing order
 * of detail: a decoder serving several consumers takes the most any asks). */
enum ptflow_timing {
	PTFLOW_TIME_NONE,	/* the batch's time only */
	PTFLOW_TIME_REGIONS,	/* exact at each block where the flow may
				 * leave a region: a quiet chain joins the
				 * open block across timing packets */
	PTFLOW_TIME_BLOCKS,	/* each block's own time */
};

/*
 * Give each block its time (how: PTFLOW_TIME_BLOCKS): the estimate after
 * the last timing packet (TSC, MTC, CYC, TMA, CBR) read before the walk
 * reached the block's end (33.8.3; the decoder reads the packet that
 * steers a branch before walking to it, so a block counts as earlier than
 * the timing packets between that packet and its end). A batch's time is
 * that of its first blocks; where it changes, a mark says so (struct
 * ptflow_batch), so a timed trace (an MTC every few blocks) still comes in
 * full batches. With PTFLOW_TIME_REGIONS a timing packet other than CBR
 * ends no block merged inside a region (ptflow_blk_regions()): such a
 * block keeps the time it began with and the mark comes with the next
 * block, so the time is exact at every block where the flow may have left
 * a region, and the core:bus ratio at every block (a
 * consumer that looks at time only where the function changes loses
 * nothing, and gets far fewer blocks and marks on a trace with an MTC
 * every few blocks). Costs nothing on a trace without timing packets.
 */
void ptflow_blocks_timed(struct ptflow_decoder *d, enum ptflow_timing how);

/* Have fn(ctx, offset) called at each PSB the decoder reaches (its stream
 * offset), for a progress display (NULL: none). */
void ptflow_on_progress(struct ptflow_decoder *d, void (*fn)(void *ctx, uint64_t offset),
			void *ctx);

/*
 * Sideband at trace positions (code that changed while traced: the run
 * directory's codechanges.bin, docs/format.md): fn(ctx, off) is called
 * when the decoder has used every packet before stream offset off and is
 * about to read the one there, first for off = at. The decoder reads the
 * packet that steers the next branch as soon as it used the last one
 * (SDM 33.4.1: each TNT bit, TIP and FUP belongs to the next branch or
 * event in program order), so it has walked no instruction after the
 * last branch before off: code the trace writer changed at off (after
 * writing the packets of every branch before the change) is read in its
 * new form from the first instruction after that branch on. fn applies
 * what is due at off and returns the next position (UINT64_MAX: none).
 * Before fn, the blocks walked so far are handed over (their lengths come
 * from the code before the change); after it, the block cache is emptied.
 * Set after ptflow_init() and before ptflow_decode(); fn NULL: none.
 */
void ptflow_on_position(struct ptflow_decoder *d, uint64_t at,
			uint64_t (*fn)(void *ctx, uint64_t offset), void *ctx);

/* The time estimate now (pttime_get(); false before the first TSC) and the
 * last core:bus ratio (CBR, 0 if none). */
bool ptflow_time(const struct ptflow_decoder *d, uint64_t *tsc, uint8_t *cbr);

/* The lengths of b's instructions into lens (PTFLOW_BLOCK_MAX bytes), from
 * the code img it ran in (its batch's image); returns how many (b->ninsn
 * unless the code changed). */
unsigned ptflow_blk_lens(const struct ptimg *img, const struct ptflow_blk *b, uint8_t *lens);

/* Stop decoding: ptflow_decode() returns at its next packet, after handing
 * over the blocks walked so far (the consumer has what it wanted, e.g. a
 * window of the trace). Safe to call while the decoder delivers. */
void ptflow_stop(struct ptflow_decoder *d);

/* Empty the block cache (the code is about to change): the blocks counted
 * so far (ptflow_blocks_counted()) are handed over first, from the code as
 * it still is. */
void ptflow_cache_flush(struct ptflow_decoder *d);

/* Decode one block at ip/mode without the cache. lens (PTFLOW_BLOCK_MAX
 * bytes, may be NULL) receives the instruction lengths. Returns 0 or a
 * negative x86_err / -1 for no code; b is filled in either case. */
int ptflow_block_decode(const struct ptimg *img, uint64_t ip, uint8_t mode,
			struct ptflow_block *b, uint8_t *lens);

/* Event name for output ("interrupt", "overflow", ...). */
const char *ptflow_ev_name(int type);

/* What an event that comes between a branch and the block after it says
 * of where the branch went. */
enum ptflow_ev_way {
	PTFLOW_WAY_AT_IP,	/* asynchronous, at ev->ip (if has_ip): the flow
				 * was there (an interrupt, a TSX abort, ...) */
	PTFLOW_WAY_KEPT,	/* changes nothing in the flow: the next block says */
	PTFLOW_WAY_LOST,	/* overflow, disable, gap, error: not known */
};
enum ptflow_ev_way ptflow_ev_way(int type);

/* Synthesizes traces over a small built-in code buffer and decodes them. */
int ptflow_selfcheck(void);

#endif
