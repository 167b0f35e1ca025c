/*
 * The flow decoder's blocks, block cache and chains (see pt_flow.h for the
 * layout, pt_flow_int.h for the parts).
 */
#include "core/pt_flow_int.h"

int ptflow_block_decode(const struct ptimg *img, uint64_t ip, uint8_t mode,
			struct ptflow_block *b, uint8_t *lens)
{
	uint8_t buf[128];
	size_t have = 0;	/* bytes in buf, buf[0] is at address bufip */
	uint64_t bufip = ip, cur = ip, target = 0;
	bool eof = false;
	int ret = 0;
	unsigned ninsn = 0, last_len = 0, iclass = X86_IC_OTHER, bend, zlc = 0, wrmsr = 0;

	for (;;) {
		size_t off = (size_t)(cur - bufip);
		if (have - off < 15 && !eof) {
			/* keep the undecoded tail, refill behind it */
			size_t keep = have - off;
			for (size_t i = 0; i < keep; i++)
				buf[i] = buf[off + i];
			have = keep;
			bufip = cur;
			off = 0;
			while (have < sizeof(buf)) {
				int r = img->read(img->ctx, bufip + have, buf + have, sizeof(buf) - have);
				if (r <= 0) {
					eof = true;
					break;
				}
				have += (size_t)r;
			}
		}
		size_t avail = have - off;
		if (avail == 0) {
			bend = PTFLOW_BEND_NOCODE;
			ret = -1;
			break;
		}
		struct x86_insn in;
		int n = x86_decode(&in, buf + off, avail, cur, (enum x86_mode)mode);
		if (n == -X86_ERR_NEED_MORE) {
			bend = PTFLOW_BEND_NOCODE;
			ret = -1;
			break;
		}
		if (n < 0) {
			bend = PTFLOW_BEND_INVALID;
			ret = n;
			break;
		}
		if (lens)
			lens[ninsn] = (uint8_t)n;
		if (in.enc == X86_ENC_LEGACY && in.map == X86_MAP_0F && in.opcode == 0x30)
			wrmsr = 1;
		ninsn++;
		last_len = (unsigned)n;
		cur += (uint64_t)n;
		if (in.iclass != X86_IC_OTHER) {
			bend = PTFLOW_BEND_BRANCH;
			iclass = in.iclass;
			if (in.has_target)
				target = in.target;
			zlc = in.zero_len_call;
			break;
		}
		if (ninsn == PTFLOW_BLOCK_MAX) {
			bend = PTFLOW_BEND_SPLIT;
			break;
		}
	}
	b->ip = ip;
	b->disp = (int32_t)(uint32_t)(target - cur);
	b->size_wrmsr_lastlen = (uint16_t)((cur - ip) | wrmsr << 10 | last_len << 12);
	b->ninsn_mode = (uint8_t)(ninsn | (unsigned)mode << 6);
	b->class_end = (uint8_t)(iclass | bend << 5 | zlc << 7);
	b->chain_link[0] = b->chain_link[1] = 0;
	b->chain_ret_link = 0;
	b->chain_ninsn = 0; /* no chain: the cache links blocks (chain_build()) */
	b->chain_class_end = PTFLOW_BEND_NOCODE << 5;
	b->chain_branches = 0;
	b->chain_hot = HK_OTHER;
	return ret;
}

void ptflow_cache_flush(struct ptflow_decoder *d)
{
	ptflow_counts_flush(d); /* while the entries are there */
	if (d->nents)
		efipt_memset(d->index, 0, ((size_t)d->imask + 1) * sizeof(*d->index));
	d->used = 0;
	efipt_memset(d->stack_link, 0, sizeof(d->stack_link)); /* links no more */
}

/* A new entry for ip/mode, as a stub; the caller made sure there is room. */
static struct ptflow_block *cache_add(struct ptflow_decoder *d, uint64_t ip, unsigned mode)
{
	struct ptflow_block *b = &d->ents[d->used++];
	efipt_memset(b, 0, sizeof(*b));
	b->ip = ip;
	b->size_wrmsr_lastlen = STUB_SIZE;
	b->ninsn_mode = (uint8_t)(mode << 6);
	b->chain_class_end = PTFLOW_BEND_NOCODE << 5;
	d->index[slot(ip, d->imask)] = d->used;
	return b;
}

/* Link to the entry for ip/mode, made as a stub if there is none. */
static uint32_t cache_link(struct ptflow_decoder *d, uint64_t ip, unsigned mode)
{
	struct ptflow_block *b = cache_find(d, ip, mode);
	if (!b)
		b = cache_add(d, ip, mode);
	return (uint32_t)(b - d->ents) + 1;
}

/* b's code lies in the block consumer's region that ends at end (not 0). */
static bool in_region(const struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t end)
{
	return end && d->blk_region(d->blk_region_ctx, b->ip) == end && b_next(b) > b->ip &&
	       b_next(b) <= end;
}

/* ip is in the block consumer's region that ends at end (not 0). */
static bool goes_in_region(const struct ptflow_decoder *d, uint64_t ip, uint64_t end)
{
	return end && d->blk_region(d->blk_region_ctx, ip) == end;
}

/*
 * Make b's chain (see pt_flow.h): the blocks after the first are taken from
 * the cache, or decoded into it while there is room (their own chains are
 * made when the walk gets there; ptflow_blk_chain() finds them), else
 * decoded aside; then link b to the entries where its last branch goes (at
 * most three new entries: ptflow_block_get() made room). Returns nothing.
 */
static void chain_build(struct ptflow_decoder *d, struct ptflow_block *b)
{
	struct ptflow_block last = *b, next;
	unsigned mode = b_mode(b), ninsn = b_ninsn(b), nblk = 1;
	unsigned nbr = b_bend(b) == PTFLOW_BEND_BRANCH, push = 0;
	uint64_t ret = 0;
	uint32_t member = 0; /* the entry of the chain's second block */
	/* the end of the consumer's region the chain stays in (ptflow_blk_regions()),
	 * 0 when it leaves it or there are none */
	uint64_t region = d->blk_region ? d->blk_region(d->blk_region_ctx, b->ip) : 0;
	if (region && !in_region(d, b, region))
		region = 0;

	for (; nblk < PTFLOW_CHAIN_MAX; nblk++) {
		unsigned ic = b_iclass(&last), bend = b_bend(&last);
		uint64_t to;
		bool call = false;
		if (bend == PTFLOW_BEND_SPLIT)
			to = b_next(&last);
		else if (bend != PTFLOW_BEND_BRANCH)
			break;
		else if (ic == X86_IC_JMP_DIRECT)
			to = b_target(&last);
		/* with regions, a chain ends at a CALL that pushes: the part
		 * before it and the callee's can then each be one block */
		else if (ic == X86_IC_CALL_DIRECT && (b_zlc(&last) || (!push && !d->blk_region)))
			to = b_target(&last), call = !b_zlc(&last);
		else
			break;
		struct ptflow_block *nb = cache_find(d, to, mode);
		if (!nb || b_stub(nb)) {
			d->stat.decoded++;
			if (!nb && d->used + 4 <= d->nents) /* 3 left for the links */
				nb = cache_add(d, to, mode);
			if (!nb)
				nb = &next;
			ptflow_block_decode(&d->cfg.image, to, (uint8_t)mode, nb, NULL);
		}
		if (b_bend(nb) > PTFLOW_BEND_SPLIT || ninsn + b_ninsn(nb) > 255)
			break;
		if (call)
			ret = b_next(&last), push = 1;
		if (nblk == 1 && nb != &next)
			member = (uint32_t)(nb - d->ents) + 1;
		ninsn += b_ninsn(nb);
		nbr += b_bend(nb) == PTFLOW_BEND_BRANCH;
		last = *nb;
		if (region && !in_region(d, &last, region))
			region = 0;
	}
	unsigned lic = b_iclass(&last), lbend = b_bend(&last);
	bool branch = lbend == PTFLOW_BEND_BRANCH;
	/* where the last branch goes on: its fall-through (also the return
	 * address of a CALL), its direct target */
	if (lbend == PTFLOW_BEND_SPLIT ||
	    (branch && lic != X86_IC_JMP_DIRECT && lic != X86_IC_JMP_INDIRECT &&
	     lic != X86_IC_RET_NEAR && lic != X86_IC_FAR_JMP && lic != X86_IC_FAR_RET &&
	     lic != X86_IC_IRET))
		b->chain_link[0] = cache_link(d, b_next(&last), mode);
	if (branch && (lic == X86_IC_JCC || lic == X86_IC_JMP_DIRECT || lic == X86_IC_CALL_DIRECT))
		b->chain_link[1] = cache_link(d, b_target(&last), mode);
	/* the second block's entry, where a link field is free (see
	 * chain_member()) */
	b->chain_ret_link = push ? cache_link(d, ret, mode) : member;
	if (push && !b->chain_link[1])
		b->chain_link[1] = member;
	b->chain_ninsn = (uint8_t)ninsn;
	b->chain_class_end = last.class_end;
	b->chain_branches = (uint8_t)nbr;
	unsigned hk = HK_OTHER;
	if (last.class_end == X86_IC_JCC) /* bend BRANCH, not a zero-length CALL */
		hk = HK_JCC;
	else if (last.class_end == X86_IC_RET_NEAR)
		hk = HK_RET;
	else if (last.class_end == X86_IC_CALL_DIRECT) /* not a zero-length CALL */
		hk = HK_CALL;
	/* quiet: the last branch cannot leave the region either (a Jcc, a
	 * direct JMP or a split into it; nothing that pushes) */
	bool jcc = last.class_end == X86_IC_JCC, jmp = last.class_end == X86_IC_JMP_DIRECT;
	bool quiet = region && !push && (lbend == PTFLOW_BEND_SPLIT || jcc || jmp) &&
		     (jmp || goes_in_region(d, b_next(&last), region)) &&
		     (!(jcc || jmp) || goes_in_region(d, b_target(&last), region));
	/* a region chain: its code in the region, delivered as one block
	 * whose after is its end when a return comes back there (a CALL) */
	int64_t off = (int64_t)(b_next(&last) - b->ip);
	bool in = region && !push && (lbend == PTFLOW_BEND_SPLIT || branch) &&
		  (!x86_returns_after(lic) ||
		   (off > -(int64_t)REGION_END_BIAS && off < REGION_END_BIAS));
	/* a region chain comes as one block (blk_region()), which needs no
	 * second block's entry: the offset of that end instead, once */
	if (in && !quiet)
		b->chain_ret_link = x86_returns_after(lic) ? (uint32_t)(off + REGION_END_BIAS) : 0;
	b->chain_hot = (uint8_t)(hk | HK_MODE(mode) | (push ? HK_PUSH : 0) | HK_CHAINED |
				 (quiet ? HK_QUIET : in ? HK_REGION : 0));
}

/* See pt_flow_int.h. */
const struct ptflow_block *ptflow_block_get(struct ptflow_decoder *d, uint64_t ip,
					    struct ptflow_block *tmp)
{
	struct ptflow_block *b = cache_find(d, ip, d->mode);
	if (b && chained(b))
		return b;
	if (!d->nents) {
		d->stat.decoded++;
		ptflow_block_decode(&d->cfg.image, ip, d->mode, tmp, NULL);
		return tmp;
	}
	if (d->used + 4 > d->nents) { /* full: start over (a block, 3 links) */
		ptflow_cache_flush(d);
		b = NULL;
	}
	if (!b)
		b = cache_add(d, ip, d->mode);
	if (b_stub(b)) { /* else decoded already, as part of another's chain */
		d->stat.decoded++;
		ptflow_block_decode(&d->cfg.image, ip, d->mode, b, NULL);
	}
	chain_build(d, b);
	return b;
}

/* The entry nb as the block after b in b's chain, which goes on to `to`,
 * or NULL to look it up: b is a cache entry and nb one in use, of that
 * address and mode, decoded. */
static inline const struct ptflow_block *chain_next(const struct ptflow_decoder *d,
						    const struct ptflow_block *b,
						    const struct ptflow_block *nb, uint64_t to,
						    unsigned mode)
{
	if (b < d->ents || nb >= d->ents + d->used || nb->ip != to || b_mode(nb) != mode ||
	    b_stub(nb))
		return NULL;
	return nb;
}

/* The blocks of b's chain into o (room for PTFLOW_CHAIN_MAX), the last
 * going on to next; returns the end. The blocks after the first are mostly
 * in the cache (chain_build() put them there), right after the first. */
static struct ptflow_blk *chain_blocks(struct ptflow_decoder *d, const struct ptflow_block *b,
				       uint64_t next, struct ptflow_blk *o)
{
	struct ptflow_block tmp;
	unsigned mode = b_mode(b), left = b->chain_ninsn;
	uint32_t member = chain_member(b);

	for (unsigned k = 1;; k++, o++) {
		unsigned n = b_ninsn(b);
		o->ip = b->ip;
		o->size = (uint16_t)b_size(b);
		o->after = b->ip + b_size(b);
		o->mode = (uint8_t)mode;
		o->iclass = (uint8_t)b_iclass(b);
		o->end = (uint8_t)b_bend(b);
		if (n >= left || k == PTFLOW_CHAIN_MAX) { /* (the code changed) */
			o->ninsn = (uint16_t)left;
			o->next = next;
			return o + 1;
		}
		uint64_t to = b_bend(b) == PTFLOW_BEND_SPLIT ? b_next(b) : b_target(b);
		o->ninsn = (uint16_t)n;
		o->next = to;
		left -= n;
		/* the second block: the entry the chain names; the next ones:
		 * a chain built in one go has its blocks in the entries after
		 * each other; else the index */
		const struct ptflow_block *nb =
			chain_next(d, b, member ? linked(d, member) : b + 1, to, mode);
		member = 0;
		if (!nb)
			nb = cache_find(d, to, mode);
		if (!nb || b_stub(nb)) {
			ptflow_block_decode(&d->cfg.image, to, (uint8_t)mode, &tmp, NULL);
			nb = &tmp;
		}
		b = nb;
	}
}

/* See pt_flow_int.h. */
void ptflow_blk_chain(struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t next)
{
	/* two blocks, the second the entry the chain names, as
	 * chain_blocks() finds it (on the boot, most of these: a loop's
	 * jump back to a block that calls, which regions cannot take as one
	 * block, the return coming back below where it starts) */
	unsigned n = b_ninsn(b), mode = b_mode(b), left = b->chain_ninsn - n;
	uint32_t member = chain_member(b);
	uint64_t to = b_bend(b) == PTFLOW_BEND_SPLIT ? b_next(b) : b_target(b);
	const struct ptflow_block *m = member ? chain_next(d, b, linked(d, member), to, mode) : NULL;
	if (m && b_ninsn(m) >= left) {
		blk_put_walk(d, b->ip, n, b_size(b), mode, b_iclass(b), b_bend(b), to);
		blk_put_walk(d, m->ip, left, b_size(m), mode, b_iclass(m), b_bend(m), next);
		return;
	}
	if (d->blk_cur > d->blk + PTFLOW_BLK_BATCH - PTFLOW_CHAIN_MAX)
		ptflow_blk_flush(d); /* room for the whole chain */
	d->blk_cur = chain_blocks(d, b, next, d->blk_cur);
}

/* See pt_flow_int.h. Every entry made since the cache was last emptied
 * may have counts; each way of a chain's last Jcc comes as the chain's
 * blocks going that way. */
void ptflow_counts_flush(struct ptflow_decoder *d)
{
	uint64_t *cnt = d->counts;
	if (!cnt || !d->on_blocks || !d->nents)
		return;
	struct ptflow_blk o[PTFLOW_BLK_BATCH];
	uint64_t execs[PTFLOW_BLK_BATCH];
	size_t n = 0;
	for (uint32_t i = 0; i < d->used; i++) {
		const struct ptflow_block *b = &d->ents[i];
		for (unsigned way = 0; way < 2; way++) {
			uint64_t x = cnt[2 * (size_t)i + way];
			if (!x)
				continue;
			cnt[2 * (size_t)i + way] = 0;
			if (n > PTFLOW_BLK_BATCH - PTFLOW_CHAIN_MAX) {
				ptflow_hand_over(d, o, n, execs);
				n = 0;
			}
			uint32_t l = b->chain_link[way];
			uint64_t next = b->chain_class_end == X86_IC_JCC && l ? linked(d, l)->ip : 0;
			size_t m = (size_t)(chain_blocks(d, b, next, o + n) - o);
			for (; n < m; n++)
				execs[n] = x;
		}
	}
	if (n)
		ptflow_hand_over(d, o, n, execs);
}
