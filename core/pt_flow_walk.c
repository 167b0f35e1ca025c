/*
 * The flow decoder's fast loops: lean_walk() for 64- and 32-bit code that needs
 * only TNT bits, walk() for the rest of the plain flow. Both stop before
 * anything else, which the state machine (pt_flow.c) handles; whatever
 * they do must be exactly what do_block() would do, which the tests check
 * by decoding every trace with and without the cache.
 */
#include "core/pt_flow_int.h"

/* What the loops deliver besides the counts (compile-time constants, so
 * that each combination has a loop of its own); OUT_COUNTED with
 * OUT_BLOCKS: the steps counted (counting()), the other blocks delivered. */
enum { OUT_RUNS = 1, OUT_BLOCKS = 2, OUT_COUNTED = 4 };

/*
 * The common case as tight as it gets: 64-bit or 32-bit code (mode, a
 * constant: a loop for each; firmware runs PEI in 32-bit code on many
 * platforms, OVMF among them), no packet pending, and
 * chains that end in a Jcc or a compressed RET, so that every step takes
 * one TNT bit, or in a direct CALL (with regions, ptflow_blk_regions(), a
 * chain ends at each); short TNT packets, and MTCs between them, are read
 * here. It stops before the first chain it cannot take as it is (walk() goes on from there). As
 * a step takes at most 255 instructions, the step limit is checked per TNT
 * packet, and at a CALL. Returns nothing: the walk's state is in the caller's
 * variables (*ipp ... *blocksp), updated in place.
 */
static inline __attribute__((always_inline)) void
lean_walk(struct ptflow_decoder *d, uint64_t *ipp, const struct ptflow_block **ep, uint64_t *tntp,
	  unsigned *np, uint64_t *stepsp, uint64_t *insnsp, uint64_t *branchesp, uint64_t *blocksp,
	  const unsigned out, const unsigned mode)
{
	/* the chains this loop takes (chain_hot without HK_MARKS) */
	const unsigned hk_jcc = HK_JCC | HK_MODE(mode) | HK_CHAINED;
	const unsigned hk_ret = HK_RET | HK_MODE(mode) | HK_CHAINED;
	const unsigned hk_call = HK_CALL | HK_MODE(mode) | HK_CHAINED;
	uint64_t ip = *ipp, tnt = *tntp, steps = *stepsp, insns = 0, since = 0;
	uint64_t branches = 0, blocks = 0;
	unsigned n = *np;
	/* Quiet chains that blk_step() would add to the open block (the last
	 * delivered, a quiet chain's) are summed here, up to the room it has
	 * left, and added once: when anything else comes or the loop ends. */
	unsigned qn = 0, qleft = 0; /* qleft: the room the open block has left (0: none open) */
	/* the last one summed (the chain after it, where they went, is the
	 * one at hand when they are added) */
	const struct ptflow_block *qlast = NULL;
	if ((out & OUT_BLOCKS) && !(out & OUT_COUNTED) && d->blk_merge == d->blk_cur)
		qleft = 0xffffu - d->blk_cur[-1].ninsn;
	/* the entry at ip: from here on the links lead the way */
	const struct ptflow_block *e = *ep ? *ep : cache_find(d, ip, mode);

	*ep = e;
	/* DisTNT: a Jcc takes no bit (do_block() loses the flow there) */
	if (!e || d->cfg.distnt || steps + 255u * n > d->cfg.max_steps)
		return;
	for (;;) {
		if (!n) {
			if (!(n = short_tnt(d, &tnt))) {
				if (!mtc_next(d))
					break;
				/* an MTC between TNTs (as many as TNTs in a
				 * timed trace), read as walk() reads it, the
				 * quiet chains before it added first (it may
				 * close the open block) */
				if (qn) {
					blk_add_quiet(d, qn, qlast->chain_class_end, e->ip);
					qn = 0;
				}
				ptflow_read_mtc(d);
				if ((out & OUT_BLOCKS) && !(out & OUT_COUNTED))
					qleft = d->blk_merge == d->blk_cur
							? 0xffffu - d->blk_cur[-1].ninsn : 0;
				steps = 0;
				since = insns;
				continue;
			}
			steps = 0;
			since = insns;
			if (255u * n > d->cfg.max_steps)
				break; /* walk() takes these bits step by step */
		}
		const struct ptflow_block *cur = e;
		unsigned hk = cur->chain_hot; /* a stub's is HK_OTHER */
		uint64_t to;
		unsigned way = 0;
		if ((out & OUT_BLOCKS) && !(out & OUT_COUNTED) && hk == (hk_jcc | HK_QUIET) &&
		    cur->chain_ninsn - 1u < qleft) {
			/* the usual step with blocks, on its own path: a quiet
			 * chain (this loop takes none but those ending in a
			 * Jcc) summed for the open block */
			n--;
			e = linked(d, cur->chain_link[(tnt >> n) & 1]);
			insns += cur->chain_ninsn;
			branches += cur->chain_branches;
			blocks++;
			if (out & OUT_RUNS)
				ptflow_deliver_chain(d, cur, X86_IC_JCC);
			qn += cur->chain_ninsn;
			qleft -= cur->chain_ninsn;
			qlast = cur;
			continue;
		}
		if ((hk & ~HK_MARKS) == hk_jcc) {
			if (hk & HK_PUSH)
				stack_push(d, linked(d, cur->chain_ret_link)->ip, cur->chain_ret_link);
			n--;
			way = (tnt >> n) & 1;
			e = linked(d, cur->chain_link[way]);
			to = e->ip;
		} else if ((hk & ~HK_MARKS) == hk_ret && (tnt >> (n - 1)) & 1 &&
			   (d->sn || hk & HK_PUSH) && !d->cfg.disretc) {
			/* compressed RET: a taken bit, the target from the stack */
			if (hk & HK_PUSH)
				stack_push(d, linked(d, cur->chain_ret_link)->ip, cur->chain_ret_link);
			n--;
			ip = stack_take(d, mode, &e);
			if (!e)
				e = cache_find(d, ip, mode);
			to = ip;
		} else if ((hk & ~HK_MARKS) == hk_call &&
			   steps + (insns - since) + cur->chain_ninsn + 255u * n <= d->cfg.max_steps) {
			/* a direct CALL takes no packet, so the step limit is
			 * checked here, with room for the steps the bits left
			 * may take (walk() checks it exactly) */
			if (hk & HK_PUSH)
				stack_push(d, linked(d, cur->chain_ret_link)->ip, cur->chain_ret_link);
			stack_push(d, linked(d, cur->chain_link[0])->ip, cur->chain_link[0]);
			e = linked(d, cur->chain_link[1]);
			to = e->ip;
		} else {
			break;
		}
		insns += cur->chain_ninsn;
		branches += cur->chain_branches;
		blocks++;
		if (out & OUT_RUNS)
			ptflow_deliver_chain(d, cur, (uint8_t)(cur->chain_class_end & 31));
		if (out & OUT_COUNTED) {
			count_step(d, cur, way, to);
		} else if ((out & OUT_BLOCKS) && (hk & HK_REGION)) {
			/* a region chain closes the open block: added with
			 * the quiet chains summed before it, at once, if it
			 * has room, else a block of its own (blk_region()) */
			if (cur->chain_ninsn - 1u < qleft) {
				blk_add_region(d, qn + cur->chain_ninsn, cur, to);
			} else {
				if (qn)
					blk_add_quiet(d, qn, qlast->chain_class_end, cur->ip);
				blk_region(d, cur, to);
			}
			qn = 0;
			qleft = 0;
		} else if (out & OUT_BLOCKS) {
			if (qn)
				blk_add_quiet(d, qn, qlast->chain_class_end, cur->ip);
			qn = 0;
			blk_step(d, cur, to);
			qleft = d->blk_merge == d->blk_cur ? 0xffffu - d->blk_cur[-1].ninsn : 0;
		}
		if (!e)
			goto out; /* returned to code not in the cache */
	}
	ip = e->ip;
out:
	if (qn) /* (a step that ends here added them: e is the next chain) */
		blk_add_quiet(d, qn, qlast->chain_class_end, e->ip);
	*ep = e;
	*ipp = ip;
	*tntp = tnt;
	*np = n;
	*stepsp = steps + insns - since;
	*insnsp += insns;
	*branchesp += branches;
	*blocksp += blocks;
}

/*
 * The entry at next, where a TIP sent b's chain, or NULL: the one it went
 * to the last time, kept in a link the chain's last branch leaves free
 * (chain_link[0] after an indirect JMP or a RET, which have no
 * fall-through; chain_link[1] after an indirect CALL when the chain pushes
 * nothing, see chain_member()), else found in the index and kept there.
 * UEFI code calls through protocol and service tables: most of its
 * indirect transfers go where they went before, and a link costs one load
 * where the index costs two. Returns the entry or NULL (not in the cache).
 */
static inline const struct ptflow_block *tip_entry(struct ptflow_decoder *d,
						   const struct ptflow_block *b, unsigned ic,
						   uint64_t next, unsigned mode)
{
	struct ptflow_block *w = (struct ptflow_block *)b; /* an entry of d's cache */
	uint32_t *l = ic != X86_IC_CALL_INDIRECT ? &w->chain_link[0]
		      : chain_push(b) ? NULL : &w->chain_link[1];
	if (l && *l) {
		const struct ptflow_block *t = linked(d, *l);
		if (t->ip == next && b_mode(t) == mode)
			return t;
	}
	struct ptflow_block *t = cache_find(d, next, mode);
	if (t && l)
		*l = (uint32_t)(t - d->ents) + 1;
	return t;
}

/* Where link k of b's chain leads (0: nowhere yet), in the chain's mode
 * (as b_target()). Read only where the step needs it: each is a load of
 * another entry. */
static inline uint64_t chain_ip(const struct ptflow_decoder *d, const struct ptflow_block *b,
				unsigned k, unsigned mode)
{
	uint32_t l = b->chain_link[k];
	uint64_t ip = l ? linked(d, l)->ip : 0;
	return mode == X86_MODE_64 ? ip : (uint32_t)ip;
}

/*
 * The hot loop. While the flow needs only TNT bits and plain TIPs, follow
 * conditional branches, direct jumps and calls, compressed RETs and
 * indirect jumps, calls and RETs block by block, reading TNT and TIP
 * packets as they are needed, without leaving this loop. Anything else
 * (another packet, an error, a far transfer, PTWRITE, the step limit) goes
 * back to step()/do_block(), which handle every case; this loop only ever
 * stops before a block, never inside one. Returns nothing: d holds where
 * it stopped (the IP, the TNT bits, the pending packet) and the counts.
 */
static inline __attribute__((always_inline)) void walk(struct ptflow_decoder *d, const unsigned out)
{
	uint64_t ip = d->ip, tnt = d->tnt_bits, insns = 0, branches = 0, blocks = 0;
	uint64_t steps = d->steps, max_steps = d->cfg.max_steps;
	unsigned n = d->tnt_n, mode = d->mode;
	uint64_t enabled_at = 0; /* blocks walked when tracing was last enabled */
	struct ptflow_block tmp;
	const struct ptflow_block *e = NULL; /* the entry at ip, if known */
	/* The block the state machine delivered last waits for where the
	 * flow went: here, if this loop delivers a block (then none comes
	 * between); the puts need not ask. */
	struct ptflow_blk *open = NULL;

	if (!d->nents)
		return;
	if ((out & OUT_BLOCKS) && d->blk_open) {
		open = d->blk_cur - 1;
		open->next = ip;
		d->blk_open = false;
	}
	for (;;) {
		if (!n && !d->have_pend) {
			/* the next packet: a short TNT or a TIP right here */
			if ((n = short_tnt(d, &tnt))) {
				steps = 0;
			} else if (d->pk.sync && !d->pk.block && d->pk.pos < d->pk.end && ip_packet(d)) {
				steps = 0;
			} else if (mtc_next(d)) {
				/* as ptflow_fetch() would, without leaving */
				ptflow_read_mtc(d);
				steps = 0;
				continue;
			} else {
				d->tnt_n = 0;
				d->steps = steps;
				uint32_t gen = d->code_gen;
				if (ptflow_fetch(d) < 0)
					break;
				if (gen != d->code_gen)
					e = NULL; /* the code changed: the cache was emptied */
				steps = d->steps;
				n = d->tnt_n;
				tnt = d->tnt_bits;
			}
		}
		if ((mode == X86_MODE_64 || mode == X86_MODE_32) && !d->have_pend && n) {
			if (mode == X86_MODE_64)
				lean_walk(d, &ip, &e, &tnt, &n, &steps, &insns, &branches, &blocks, out,
					  X86_MODE_64);
			else
				lean_walk(d, &ip, &e, &tnt, &n, &steps, &insns, &branches, &blocks, out,
					  X86_MODE_32);
			if (!n && !d->have_pend)
				continue; /* the next packet is not a short TNT */
		}
		/* a TIP.PGD waits for the indirect or far transfer that leaves */
		bool pgd = false;
		if (!n && !plain_tip(d)) {
			if (!(d->have_pend && d->pend.type == ptpkt_tip_pgd))
				break;
			pgd = true;
		}
		const struct ptflow_block *b = e ? e : cache_find(d, ip, mode);
		e = NULL;
		if (!b || !chained(b)) {
			d->ip = ip;
			b = ptflow_block_get(d, ip, &tmp);
			if (b == &tmp)
				break;
		}
		/* the step: the chain from ip; with a TIP.PGD pending only the
		 * block (a direct branch in the chain may be where tracing
		 * stops) */
		unsigned cn, ci, nbr;
		bool push;
		uint64_t ft = 0, tg = 0; /* the chain's: chain_ip() where needed */
		if (!pgd) {
			cn = b->chain_ninsn;
			ci = b->chain_class_end;
			nbr = b->chain_branches;
			push = chain_push(b);
		} else {
			cn = b_ninsn(b);
			ci = b->class_end;
			nbr = b_bend(b) == PTFLOW_BEND_BRANCH;
			push = false;
			ft = b_next(b);
			tg = ft + (uint64_t)(int64_t)b->disp;
			if (mode != X86_MODE_64) { /* as b_target(): the block has this mode */
				ft = (uint32_t)ft;
				tg = (uint32_t)tg;
			}
		}
		if (steps + cn > max_steps)
			break;
		uint64_t next;
		unsigned ic = ci & 31, bend = (ci >> 5) & 3;
		if (pgd && !b_wrmsr(b) &&
		    (bend == PTFLOW_BEND_SPLIT ||
		     (bend == PTFLOW_BEND_BRANCH &&
		      (ic == X86_IC_JMP_DIRECT || ic == X86_IC_CALL_DIRECT) &&
		      !(pend_has_ip(d) ? d->pend.u.ip.ip == tg
				       : (d->cfg.errata & PTFLOW_ERRATUM_SKL014))))) {
			/* on the way to the transfer the TIP.PGD waits for:
			 * straight-line code, direct jumps and calls that stay
			 * in the traced region (do_block() has the others) */
			if (bend == PTFLOW_BEND_BRANCH && !pend_has_ip(d))
				d->erratum_seen |= PTFLOW_ERRATUM_SKL014; /* without it */
		} else if (pgd) {
			/* as do_block(): the block runs, then tracing stops at
			 * its branch (a WRMSR in it would stop it there) */
			if (bend != PTFLOW_BEND_BRANCH || b_wrmsr(b) || !takes_tip(ic))
				break;
			if (ic == X86_IC_CALL_INDIRECT)
				stack_push(d, ft, 0);
			else if (ic == X86_IC_RET_NEAR)
				stack_pop(d);
			steps += cn;
			insns += cn;
			blocks++;
			branches++;
			if (out & OUT_RUNS)
				ptflow_deliver(d, b, cn, (uint8_t)ic);
			if (out & OUT_BLOCKS) { /* tracing stops: at the TIP.PGD's IP */
				blk_put_walk(d, b->ip, cn, b_size(b), mode, ic, bend,
					     pend_has_ip(d) ? d->pend.u.ip.ip : 0);
				d->blk_waiting = false;
			}
			d->ip = ip;
			ptflow_disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), d->pend.u.ip.ip);
			/* the usual way back: MODE.Exec, TIP.PGE (33.7) */
			for (;;) {
				d->tnt_n = 0;
				d->steps = steps;
				if (!(d->pk.sync && !d->pk.block && d->pk.pos < d->pk.end &&
				      (mode_exec_packet(d) || ip_packet(d)))) {
					uint32_t gen = d->code_gen;
					int r = ptflow_fetch(d);
					if (gen != d->code_gen)
						b = NULL; /* its cache entry is gone */
					n = d->tnt_n;
					tnt = d->tnt_bits;
					if (r < 0 || n) {
						steps = d->steps;
						goto out;
					}
				}
				steps = d->steps;
				if (d->pend.type == ptpkt_mode_exec) {
					d->have_pend = false;
					d->next_mode = mode_of(&d->pend);
					d->have_next_mode = true;
					continue;
				}
				if (d->pend.type != ptpkt_tip_pge || !pend_has_ip(d))
					goto out;
				/* as handle_pend(): tracing is off, nothing to check */
				d->have_pend = false;
				ptflow_enable_at(d, d->pend.u.ip.ip, d->pend_off);
				break;
			}
			/* back after the SYSCALL (or whatever left): a link */
			if (b && b->chain_link[0] && d->mode == mode &&
			    linked(d, b->chain_link[0])->ip == d->ip)
				e = linked(d, b->chain_link[0]);
			ip = d->ip;
			mode = d->mode;
			enabled_at = blocks;
			continue;
		}
		/* what the last branch needs; nothing changes before all is there */
		bool push_last = false;
		int pop = 0; /* 1: RET with a TIP, 2: compressed RET */
		unsigned nl = 2; /* the link to the next entry: 0, 1 or none */
		if ((ci & 0x7f) == X86_IC_JCC) { /* bend BRANCH, the usual (never pgd) */
			if (!n || d->cfg.distnt)
				break; /* DisTNT: do_block() loses the flow here */
			n--;
			nl = (tnt >> n) & 1;
			next = chain_ip(d, b, nl, mode);
		} else if (bend == PTFLOW_BEND_SPLIT) {
			next = pgd ? ft : chain_ip(d, b, 0, mode);
			nl = 0;
		} else if (bend != PTFLOW_BEND_BRANCH) {
			break;
		} else if (ic == X86_IC_JMP_DIRECT) {
			next = pgd ? tg : chain_ip(d, b, 1, mode);
			nl = 1;
		} else if (ic == X86_IC_CALL_DIRECT) {
			push_last = !(ci >> 7); /* not a zero-length CALL */
			next = pgd ? tg : chain_ip(d, b, 1, mode);
			nl = 1;
		} else if (ic == X86_IC_RET_NEAR && n && !d->cfg.disretc) {
			/* compressed RET: a taken bit, the target from the stack */
			if (!(d->sn || push) || !((tnt >> (n - 1)) & 1))
				break;
			n--;
			pop = 2;
			next = 0;
		} else if ((ic == X86_IC_RET_NEAR || ic == X86_IC_JMP_INDIRECT ||
			    ic == X86_IC_CALL_INDIRECT) && !n && plain_tip(d)) {
			push_last = ic == X86_IC_CALL_INDIRECT;
			pop = ic == X86_IC_RET_NEAR;
			next = d->pend.u.ip.ip;
			d->have_pend = false;
			nl = 3; /* the TIP's target: tip_entry() */
		} else {
			break;
		}
		/* in execution order: the CALL inside the chain, then the last branch */
		if (push) {
			stack_push(d, linked(d, b->chain_ret_link)->ip, b->chain_ret_link);
		}
		if (push_last) /* the return address: the fall-through */
			stack_push(d, pgd ? ft : chain_ip(d, b, 0, mode), b->chain_link[0]);
		if (pop == 2) {
			next = stack_take(d, mode, &e);
		} else if (pop) {
			stack_pop(d);
		}
		steps += cn;
		insns += cn;
		blocks++;
		branches += nbr;
		if ((out & OUT_RUNS) && pgd)
			ptflow_deliver(d, b, cn, (uint8_t)ic);
		else if (out & OUT_RUNS)
			ptflow_deliver_chain(d, b, (uint8_t)ic);
		if ((out & OUT_BLOCKS) && pgd) {
			blk_put_walk(d, b->ip, cn, b_size(b), mode, ic, bend, next);
			d->blk_waiting = false;
		} else if (out & OUT_COUNTED) {
			count_step(d, b, (ci & 0x7f) == X86_IC_JCC ? nl : 0, next);
		} else if (out & OUT_BLOCKS) {
			blk_step(d, b, next);
		}
		if (nl < 2 && !pgd)
			e = linked(d, b->chain_link[nl]);
		else if (nl == 3)
			e = tip_entry(d, b, ic, next, mode);
		ip = next;
	}
	d->ip = ip;
out:
	/* none delivered: it still waits (unless handed over meanwhile) */
	if (open && !blocks && open == d->blk_cur - 1) {
		open->next = 0;
		d->blk_open = true;
	}
	if (blocks != enabled_at)
		d->walked = true;
	d->steps = steps;
	d->tnt_n = (uint8_t)n;
	d->tnt_bits = tnt;
	d->stat.insns += insns;
	d->stat.branches += branches;
	d->stat.blocks += blocks;
}

/* See pt_flow_int.h. A loop for each kind of consumer: counting only
 * (--stat, the benchmark) tests for none per block. */
void ptflow_walk(struct ptflow_decoder *d)
{
	if (d->sink.run && d->on_blocks)
		walk(d, OUT_RUNS | OUT_BLOCKS);
	else if (d->sink.run)
		walk(d, OUT_RUNS);
	else if (counting(d))
		walk(d, OUT_BLOCKS | OUT_COUNTED);
	else if (d->on_blocks)
		walk(d, OUT_BLOCKS);
	else
		walk(d, 0);
}
