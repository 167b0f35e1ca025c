/*
 * Private to the flow decoder (core/pt_flow*.c): the packed block fields,
 * the return stack, the inline packet readers, and the functions the three
 * parts share:
 *
 *   pt_flow.c        the state machine: packets, events, do_block(), step()
 *   pt_flow_cache.c  blocks, the block cache and chains
 *   pt_flow_walk.c   the fast loops, lean_walk() and walk()
 *
 * Section numbers refer to Intel SDM Vol. 3C chapter 33.
 */
#ifndef EFIPT_CORE_PT_FLOW_INT_H
#define EFIPT_CORE_PT_FLOW_INT_H

#include "core/pt_flow.h"

#include "core/mem.h"
#include "core/pt_opcodes.h"
#include "core/x86_insn.h"

enum { STEP_OK = 0, STEP_DONE = 1, STEP_ERR = 2 };

/* ptflow_block fields (see the layout in pt_flow.h) */
_Static_assert(PTFLOW_BEND_BRANCH == 0, "class_end & 0x7f is the class of a block ending in a branch");
static inline unsigned b_size(const struct ptflow_block *b) { return b->size_wrmsr_lastlen & 0x3ff; }
_Static_assert(PTFLOW_BLOCK_MAX * 15 < 1024, "block size field is 10 bits");
/* the block may hold a WRMSR (0F 30): find_wrmsr() has to look */
static inline bool b_wrmsr(const struct ptflow_block *b) { return (b->size_wrmsr_lastlen >> 10) & 1; }
static inline unsigned b_last_len(const struct ptflow_block *b) { return b->size_wrmsr_lastlen >> 12; }
static inline unsigned b_ninsn(const struct ptflow_block *b) { return b->ninsn_mode & 63; }
static inline unsigned b_mode(const struct ptflow_block *b) { return b->ninsn_mode >> 6; }
static inline unsigned b_iclass(const struct ptflow_block *b) { return b->class_end & 31; }
static inline unsigned b_bend(const struct ptflow_block *b) { return (b->class_end >> 5) & 3; }
static inline bool b_zlc(const struct ptflow_block *b) { return b->class_end >> 7; }
static inline uint64_t b_next(const struct ptflow_block *b) { return b->ip + b_size(b); }
static inline uint64_t b_target(const struct ptflow_block *b)
{
	uint64_t t = b_next(b) + (uint64_t)(int64_t)b->disp;
	return b_mode(b) == X86_MODE_64 ? t : (uint32_t)t;
}

/*
 * chain_hot: how the hot loop takes a chain (the mode is part of the value:
 * the loop for 64-bit code takes only 64-bit chains, the one for 32-bit
 * code only 32-bit ones; 16-bit code takes the general walk):
 * HK_JCC / HK_RET / HK_CALL the last branch is a Jcc / near RET / direct
 * CALL that pushes (with regions a chain ends there), anything else is
 * HK_OTHER; HK_PUSH a CALL in the chain pushes the return address chain_ret_link
 * links to; HK_CHAINED the chain fields are there (a block decoded as part
 * of another's chain, or a stub, has none yet: ptflow_block_get() makes
 * them); HK_REGION the chain's code lies in one of the block consumer's
 * regions (ptflow_blk_regions(); never with HK_PUSH), HK_QUIET so does every
 * place its last branch goes (a Jcc, a direct JMP or a split).
 */
enum { HK_OTHER = 0, HK_JCC = 1, HK_RET = 2, HK_CALL = 3, HK_REGION = 1 << 2, HK_PUSH = 1 << 5,
       HK_CHAINED = 1 << 6, HK_QUIET = 1 << 7 };
#define HK_MODE(m) ((unsigned)(m) << 3)
#define HK_MARKS (HK_PUSH | HK_REGION | HK_QUIET) /* besides the kind and mode */
static inline bool chain_push(const struct ptflow_block *b) { return b->chain_hot & HK_PUSH; }
static inline bool chained(const struct ptflow_block *b) { return b->chain_hot & HK_CHAINED; }

/* Why the pending FUP was sent (the packet before it, 33.4.2.6 / 33.7). */
enum fup_kind {
	FUP_ASYNC,	/* interrupt, exception, async disable: TIP/TIP.PGD follows */
	FUP_STATUS,	/* PSB+: the current IP, nothing happens there */
	FUP_BOUND,	/* MODE.TSX, PTW, EXSTOP, CFE: an event at that IP */
	FUP_TSX_ABORT,	/* MODE.TSX with Abort: a TIP to the abort handler follows */
};

/* ---- the cache (pt_flow_cache.c) ------------------------------------------ */

/*
 * Index slot of an address: blocks close in the code are close in the
 * index; a code region larger than 4 x the slots wraps around.
 */
static inline uint32_t slot(uint64_t ip, uint32_t mask)
{
	return (uint32_t)((ip >> 2) ^ (ip >> 24)) & mask;
}

/* An entry made for a link before its block is decoded (ptflow_block_get() does
 * that when the walk gets there). */
#define STUB_SIZE 0xffff
_Static_assert(PTFLOW_BLOCK_MAX * 15 < 1023, "no block has the stub's size");
static inline bool b_stub(const struct ptflow_block *b) { return b->size_wrmsr_lastlen == STUB_SIZE; }

/* The entry for ip/mode (NULL: none). */
static inline struct ptflow_block *cache_find(const struct ptflow_decoder *d, uint64_t ip,
					      unsigned mode)
{
	if (!d->nents)
		return NULL;
	uint32_t i = d->index[slot(ip, d->imask)];
	if (!i)
		return NULL;
	struct ptflow_block *b = &d->ents[i - 1];
	return b->ip == ip && b_mode(b) == mode ? b : NULL;
}

/* The entry a link names. */
static inline const struct ptflow_block *linked(const struct ptflow_decoder *d, uint32_t l)
{
	return &d->ents[l - 1];
}

/* The decoded block at ip in the current mode: from the cache (its chain
 * built), decoded into it, or (no cache) decoded into tmp. Never NULL. */
const struct ptflow_block *ptflow_block_get(struct ptflow_decoder *d, uint64_t ip,
					    struct ptflow_block *tmp);

/* ---- the return stack ----------------------------------------------------- */

/* Empty the return stack: no later RET is compressed against it. */
static inline void stack_reset(struct ptflow_decoder *d)
{
	d->sp = 0;
	d->sn = 0;
	d->ret_unknown = false;
}

/* Near CALL: push the return address (and its cache entry, if known); a
 * full stack drops its oldest entry. */
static inline void stack_push(struct ptflow_decoder *d, uint64_t ret, uint32_t link)
{
	d->stack[d->sp] = ret;
	d->stack_link[d->sp] = link;
	d->sp = (uint8_t)((d->sp + 1) % PTFLOW_STACK);
	if (d->sn < PTFLOW_STACK)
		d->sn++;
}

/* Near RET: drop the youngest entry, if any. */
static inline void stack_pop(struct ptflow_decoder *d)
{
	if (!d->sn)
		return;
	d->sp = (uint8_t)((d->sp + PTFLOW_STACK - 1) % PTFLOW_STACK);
	d->sn--;
}

/* Compressed RET: take the youngest return address (the stack has one);
 * *e gets its cache entry when the push knew it and it is in mode. */
static inline __attribute__((always_inline)) uint64_t
stack_take(struct ptflow_decoder *d, unsigned mode, const struct ptflow_block **e)
{
	d->sp = (uint8_t)((d->sp + PTFLOW_STACK - 1) % PTFLOW_STACK);
	d->sn--;
	uint32_t l = d->stack_link[d->sp];
	*e = l && b_mode(linked(d, l)) == mode ? linked(d, l) : NULL;
	return d->stack[d->sp];
}

/* ---- packets -------------------------------------------------------------- */

/* The code size a MODE.Exec gives (enum x86_mode). */
static inline uint8_t mode_of(const struct ptpkt *p)
{
	/* MODE.Exec (33.4.2.8): CS.L selects 64-bit, else CS.D 32/16. */
	if (p->u.mode_exec.csl)
		return X86_MODE_64;
	return p->u.mode_exec.csd ? X86_MODE_32 : X86_MODE_16;
}

/* Stream offset of the next packet (ptpkt_offset(), inline). */
static inline uint64_t pk_offset(const struct ptflow_decoder *d)
{
	return d->pk.base + (uint64_t)(d->pk.pos - d->pk.begin);
}

/*
 * TIP, TIP.PGE, TIP.PGD, FUP (33.4.2.2-6) at the read position (in sync,
 * outside BBP blocks, at least one byte left): header type | IPBytes << 5,
 * the payload compressed against Last IP (Table 33-18); IPBytes 0: no IP,
 * Last IP kept. Becomes d->pend; false if it is no such packet.
 */
static inline __attribute__((always_inline)) bool ip_packet(struct ptflow_decoder *d)
{
	static const uint8_t ipbytes[8] = { 0, 2, 4, 6, 6, 0xff, 8, 0xff };
#define IP_KIND(name, type, bits) [bits] = type,
	static const uint8_t ipkind[PT_OPC_IP_MASK + 1] = { PT_OPCODES_IP(IP_KIND) };
#undef IP_KIND
	const uint8_t *pos = d->pk.pos;
	unsigned b = *pos, ipc = b >> PT_OPC_IPBYTES_SHIFT, nb = ipbytes[ipc];
	unsigned kind = ipkind[b & PT_OPC_IP_MASK];
	if (!kind || nb == 0xff || (size_t)(d->pk.end - pos) <= nb)
		return false;
	uint64_t v = 0;
	if (nb) {
		uint64_t last = d->lastip.ip;
		const uint8_t *q = pos + 1;
		if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && d->pk.end - q >= 8) {
			/* one load, then keep the nb payload bytes */
			__builtin_memcpy(&v, q, 8);
			if (nb < 8)
				v &= (1ull << (8 * nb)) - 1;
		} else {
			v = efipt_load_le(q, nb);
		}
		switch (ipc) {
		case 1: v |= last & ~0xffffull; break;
		case 2: v |= last & ~0xffffffffull; break;
		case 3: v = (uint64_t)((int64_t)(v << 16) >> 16); break;
		case 4: v |= last & 0xffff000000000000ull; break;
		default: break;
		}
		d->lastip.ip = v;
	}
	d->pk.pos = pos + nb + 1;
	d->stat.packets++;
	d->steps = 0;
	d->pend.type = (uint8_t)kind;
	d->pend.size = (uint8_t)(nb + 1);
	d->pend.u.ip.ipc = (uint8_t)ipc;
	d->pend.u.ip.ip = v;
	d->pend_off = d->pk.base + (uint64_t)(pos - d->pk.begin);
	d->have_pend = true;
	return true;
}

/* MODE.Exec (33.4.2.8): 99, then Leaf ID 000 in bits 7:5; as ip_packet(). */
static inline __attribute__((always_inline)) bool mode_exec_packet(struct ptflow_decoder *d)
{
	const uint8_t *pos = d->pk.pos;
	if (*pos != PT_OPC_MODE || d->pk.end - pos < PT_SIZE_MODE ||
	    (pos[1] >> PT_MODE_LEAF_SHIFT) != PT_MODE_LEAF_EXEC)
		return false;
	unsigned m = pos[1];
	d->pk.pos = pos + PT_SIZE_MODE;
	d->stat.packets++;
	d->steps = 0;
	d->pend.type = ptpkt_mode_exec;
	d->pend.size = PT_SIZE_MODE;
	d->pend.u.mode_exec.csl = m & 1;
	d->pend.u.mode_exec.csd = (m >> 1) & 1;
	d->pend.u.mode_exec.iflag = (m >> 2) & 1;
	d->pend_off = d->pk.base + (uint64_t)(pos - d->pk.begin);
	d->have_pend = true;
	return true;
}

/*
 * Short TNT (33.4.2.1), the most common packet: any even byte but 00 (PAD)
 * and 02 (extended opcodes), outside BBP blocks. The highest set bit is the
 * stop bit, B1 is right below it. If one is at the read position, read it:
 * its bits to *bits, their count returned (1-6); else 0.
 */
static inline __attribute__((always_inline)) unsigned short_tnt(struct ptflow_decoder *d,
								 uint64_t *bits)
{
	const uint8_t *pos = d->pk.pos;
	if (!(d->pk.sync && !d->pk.block && pos < d->pk.end))
		return 0;
	unsigned c = *pos;
	if (!pt_opc_is_tnt8(c))
		return 0;
	unsigned n = 30u - (unsigned)__builtin_clz(c);
	*bits = (c >> 1) & ((1u << n) - 1);
	d->pk.pos = pos + 1;
	d->stat.packets++;
	d->pend_off = d->pk.base + (uint64_t)(pos - d->pk.begin);
	return n;
}

/*
 * MTC (33.4.2.12) at the read position, outside BBP blocks, with no
 * fetch error waiting: a timed trace has about as many MTCs as TNTs, and
 * their two bytes need nothing of the general decoder (ptflow_read_mtc()).
 */
static inline bool mtc_next(const struct ptflow_decoder *d)
{
	const uint8_t *q = d->pk.pos;
	return d->pk.sync && !d->pk.block && !d->fetch_err && d->pk.end - q >= PT_SIZE_MTC &&
	       q[0] == PT_OPC_MTC;
}

/* A packet of this type is pending. */
static inline bool pend_is(const struct ptflow_decoder *d, int type)
{
	return d->have_pend && d->pend.type == type;
}

/* The pending IP packet has an IP (IPBytes not 0). */
static inline bool pend_has_ip(const struct ptflow_decoder *d)
{
	return d->pend.u.ip.ipc != 0;
}

/* Branches that consume a TNT bit or a TIP (33.2.1, x86_pt_report()). */
static inline bool needs_packet(unsigned iclass)
{
	return x86_pt_report(iclass) != X86_PT_NONE;
}

/* Branches whose target comes in a TIP (or that a TIP.PGD stops) when no
 * TNT bit is pending: take_tip() in do_block(). */
static inline bool takes_tip(unsigned iclass)
{
	return x86_pt_report(iclass) == X86_PT_TIP;
}

/* The pending packet is a TIP with an IP that nothing else waits for. */
static inline bool plain_tip(const struct ptflow_decoder *d)
{
	return d->have_pend && d->pend.type == ptpkt_tip && d->pend.u.ip.ipc &&
	       !d->have_next_mode;
}

/* ---- shared by the state machine and the fast loops (pt_flow.c) ------------ */

/*
 * Read packets until a TNT (bits loaded) or a packet that matters to the
 * flow (d->pend). IP packets are reconstructed against Last IP here, in
 * stream order (33.4.2.2, Table 33-18). Returns 0 or a negative ptpkt_error
 * (-ptpkt_err_eos at the end of the trace).
 */
int ptflow_fetch(struct ptflow_decoder *d);
/* Read the MTC at the read position (mtc_next()) into the time estimate
 * (with ptflow_blocks_timed(), the blocks from here on have its time). */
void ptflow_read_mtc(struct ptflow_decoder *d);
/* An event without payload to the sink (counted only without one). */
void ptflow_event(struct ptflow_decoder *d, int type, uint64_t off, bool has_ip, uint64_t ip);
/* TIP.PGE: tracing starts at ip (off: the packet). */
void ptflow_enable_at(struct ptflow_decoder *d, uint64_t ip, uint64_t off);
/* Tracing stops: the pending packet is used, event type reported. Returns
 * STEP_OK. */
int ptflow_disable(struct ptflow_decoder *d, int type, bool has_ip, uint64_t ip);
/* The first n instructions of b to the run callback; the class of the
 * last is last_iclass. */
void ptflow_deliver(struct ptflow_decoder *d, const struct ptflow_block *b, uint32_t n,
		    uint8_t last_iclass);
/* b's chain to the run callback, block by block (last_iclass: the class
 * of the chain's last instruction). */
void ptflow_deliver_chain(struct ptflow_decoder *d, const struct ptflow_block *b,
			  uint8_t last_iclass);

/* ---- delivered blocks (ptflow_on_blocks()) --------------------------------- */

/* b[0..n) to the consumer as a batch: counted (execs[i] times each,
 * ptflow_blocks_counted()), or with execs NULL in order, with the time
 * estimate now. */
void ptflow_hand_over(struct ptflow_decoder *d, const struct ptflow_blk *b, size_t n,
		      const uint64_t *execs);

/* Hand the buffered blocks to the consumer. */
void ptflow_blk_flush(struct ptflow_decoder *d);

/* Buffer one block the fast loops deliver (see struct ptflow_blk): they
 * deal with an open block before they start (ptflow_walk()). */
static inline __attribute__((always_inline)) void
blk_put_walk(struct ptflow_decoder *d, uint64_t ip, unsigned ninsn, unsigned size, unsigned mode,
	     unsigned iclass, unsigned end, uint64_t next)
{
	struct ptflow_blk *o = d->blk_cur;
	if (o == d->blk + PTFLOW_BLK_BATCH) {
		ptflow_blk_flush(d);
		o = d->blk;
	}
	o->ip = ip;
	o->next = next;
	o->after = ip + size;
	o->ninsn = (uint16_t)ninsn;
	o->size = (uint16_t)size;
	o->mode = (uint8_t)mode;
	o->iclass = (uint8_t)iclass;
	o->end = (uint8_t)end;
	d->blk_cur = o + 1;
}

/* Buffer one block the state machine delivers; open: its next is the ip
 * of the block that follows, if one does before an event. */
static inline void blk_put(struct ptflow_decoder *d, uint64_t ip, unsigned ninsn, unsigned size,
			   unsigned mode, unsigned iclass, unsigned end, uint64_t next, bool open)
{
	if (d->blk_open) {
		d->blk_cur[-1].next = ip;
		d->blk_open = false;
	}
	d->blk_waiting = false;
	blk_put_walk(d, ip, ninsn, size, mode, iclass, end, next);
	d->blk_open = open;
}

/* A region chain's chain_ret_link: where its last instruction ends, less
 * its ip (below it when the chain jumps back), plus this; 0 when no return
 * comes back there */
#define REGION_END_BIAS 0x80000000u

/* Where region chain b's last instruction ends (chain_ret_link not 0). */
static inline uint64_t region_after(const struct ptflow_block *b)
{
	return b->ip + (int64_t)b->chain_ret_link - REGION_END_BIAS;
}

/*
 * The entry of the second block of b's chain, or 0: chain_build() keeps it
 * in chain_ret_link when the chain pushes nothing, else in chain_link[1]
 * when the last branch has no direct target (the loops read neither then).
 * Not for a region chain (HK_REGION), delivered as one block: its
 * chain_ret_link holds an offset (blk_region()).
 */
static inline uint32_t chain_member(const struct ptflow_block *b)
{
	if (!chain_push(b))
		return b->chain_ret_link;
	unsigned last = b->chain_class_end, ic = last & 31;
	bool direct = ((last >> 5) & 3) == PTFLOW_BEND_BRANCH &&
		      (ic == X86_IC_JCC || ic == X86_IC_JMP_DIRECT || ic == X86_IC_CALL_DIRECT);
	return direct ? 0 : b->chain_link[1];
}

/* The blocks of b's chain (more than one), the last going on to next. */
void ptflow_blk_chain(struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t next);

/* The steps counted so far (ptflow_blocks_counted()) to the consumer, as
 * the blocks of their chains, and the counts set to 0. */
void ptflow_counts_flush(struct ptflow_decoder *d);

/* Counting the steps of the fast loops: ptflow_blocks_counted() was
 * given counts, and nothing needs the blocks one by one. */
static inline bool counting(const struct ptflow_decoder *d)
{
	return d->counts && d->on_blocks && d->nents && !d->sink.run && !d->blk_region &&
	       !d->blk_timed;
}

/* b's chain as blocks, the last going on to next. */
static inline __attribute__((always_inline)) void
blk_chain(struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t next)
{
	unsigned n = b_ninsn(b);
	if (__builtin_expect(b->chain_ninsn == n, 1)) /* a chain of one block */
		blk_put_walk(d, b->ip, n, b_size(b), b_mode(b), b_iclass(b), b_bend(b), next);
	else
		ptflow_blk_chain(d, b, next);
}

/* b's chain lies in one region and its last branch may leave it
 * (HK_REGION): added to the open block, with n instructions in all (the
 * quiet chains lean_walk() summed before it too), which it closes. */
static inline __attribute__((always_inline)) void
blk_add_region(struct ptflow_decoder *d, unsigned n, const struct ptflow_block *b, uint64_t next)
{
	struct ptflow_blk *m = d->blk_cur - 1;
	unsigned last = b->chain_class_end;
	m->ninsn = (uint16_t)(m->ninsn + n);
	if (b->chain_ret_link) /* a return comes back after its last instruction */
		m->after = region_after(b);
	m->iclass = (uint8_t)(last & 31);
	m->end = (uint8_t)((last >> 5) & 3);
	m->next = next;
	d->blk_merge = NULL;
}

/* b's chain lies in one region and its last branch may leave it
 * (HK_REGION): added to the open block (the last delivered, a quiet
 * chain's) when there is one and its count can hold it, else a block of
 * its own; either way the flow may leave the region here, so no block is
 * open after it. */
static inline __attribute__((always_inline)) void
blk_region(struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t next)
{
	unsigned n = b->chain_ninsn, last = b->chain_class_end;
	struct ptflow_blk *m = d->blk_merge;
	if (m == d->blk_cur && m[-1].ninsn <= 0xffff - n) {
		blk_add_region(d, n, b, next);
		return;
	}
	d->blk_merge = NULL;
	blk_put_walk(d, b->ip, n, b_size(b), b_mode(b), last & 31, (last >> 5) & 3, next);
	if (b->chain_ret_link)
		d->blk_cur[-1].after = region_after(b);
}

/* n instructions of quiet chains added to the open block, the last chain
 * ending as last says (its chain_class_end) and going on to next
 * (blk_step(); lean_walk() sums them first and adds them at once). */
static inline __attribute__((always_inline)) void
blk_add_quiet(struct ptflow_decoder *d, unsigned n, unsigned last, uint64_t next)
{
	struct ptflow_blk *m = d->blk_cur - 1;
	m->ninsn = (uint16_t)(m->ninsn + n);
	m->iclass = (uint8_t)(last & 31);
	m->end = (uint8_t)((last >> 5) & 3);
	m->next = next;
}

/*
 * What the fast loops deliver for a step through b's chain, the last
 * branch going on to next: a quiet chain added to the open block, if there
 * is one (nothing came between: the chain began in its region and stays
 * there), else as a block that is then open; a chain in one region as one
 * block (blk_region()); any other chain as its blocks.
 */
static inline __attribute__((always_inline)) void
blk_step(struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t next)
{
	unsigned hot = b->chain_hot;
	if (!(hot & (HK_QUIET | HK_REGION))) {
		blk_chain(d, b, next);
		return;
	}
	struct ptflow_blk *m = d->blk_merge;
	unsigned n = b->chain_ninsn;
	if (!(hot & HK_QUIET)) {
		blk_region(d, b, next);
	} else if (m == d->blk_cur && m[-1].ninsn <= 0xffff - n) {
		blk_add_quiet(d, n, b->chain_class_end, next);
	} else {
		unsigned last = b->chain_class_end;
		blk_put_walk(d, b->ip, n, b_size(b), b_mode(b), last & 31, (last >> 5) & 3, next);
		d->blk_merge = d->blk_cur;
	}
}

/* A step through the chain of cache entry b counted: its last branch went
 * the way way (a Jcc: 1 taken, else 0); or, when the last block handed
 * over waits for where the flow went, the step's blocks handed over. */
static inline __attribute__((always_inline)) void
count_step(struct ptflow_decoder *d, const struct ptflow_block *b, unsigned way, uint64_t next)
{
	if (__builtin_expect(!d->blk_waiting, 1)) {
		d->counts[2 * (size_t)(b - d->ents) + way]++;
	} else {
		d->blk_waiting = false;
		blk_chain(d, b, next);
	}
}

/* ---- the fast loops (pt_flow_walk.c) --------------------------------------- */

/* Walk from d->ip while only TNT bits and plain TIPs (or a TIP.PGD to walk
 * to) are needed; stops before a block it cannot take. Counts what it
 * walked in d->stat (blocks: the steps). */
void ptflow_walk(struct ptflow_decoder *d);

#endif
