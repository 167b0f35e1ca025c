/*
 * Intel PT instruction flow decoder. See pt_flow.h; section numbers refer to
 * Intel SDM Vol. 3C chapter 33.
 *
 * Structure: the packet stream is read one "decision" ahead. Whenever the
 * TNT buffer is empty the next packet that is not padding or timing is
 * fetched into d->pend. Packets that do not bind to an instruction (PGE,
 * PSB+, OVF, MODE.*, PIP, VMCS, power events, ...) are handled at once;
 * packets that do (TIP and TIP.PGD bind to the next branch that needs one,
 * FUP to the instruction at its IP, PTW to the next PTWRITE) stay pending
 * while the code is walked block by block.
 */
#include "core/pt_flow_int.h"

/* ---- errata (which CPU has which: core/cpu_model.c) ---------------------- */

const char *ptflow_erratum_name(uint32_t bit)
{
	switch (bit) {
	case PTFLOW_ERRATUM_BDM70: return "bdm70";
	case PTFLOW_ERRATUM_BDM64: return "bdm64";
	case PTFLOW_ERRATUM_SKD007: return "skd007";
	case PTFLOW_ERRATUM_SKD022: return "skd022";
	case PTFLOW_ERRATUM_SKD010: return "skd010";
	case PTFLOW_ERRATUM_SKL014: return "skl014";
	case PTFLOW_ERRATUM_APL11: return "apl11";
	case PTFLOW_ERRATUM_APL12: return "apl12";
	case PTFLOW_ERRATUM_SKL168: return "skl168";
	case PTFLOW_ERRATUM_SKZ84: return "skz84";
	}
	return NULL;
}

const char *ptflow_errstr(enum ptflow_err err)
{
	switch (err) {
	case PTFLOW_ERR_NONE: return "no error";
	case PTFLOW_ERR_PACKET: return "bad packet (packet decoder)";
	case PTFLOW_ERR_PSB_BAD_PACKET: return "bad packet in psb+";
	case PTFLOW_ERR_PSB_UNEXPECTED: return "unexpected packet in psb+";
	case PTFLOW_ERR_PGE_NO_IP: return "tip.pge without ip";
	case PTFLOW_ERR_PGE_ENABLED: return "tip.pge while tracing is enabled";
	case PTFLOW_ERR_OVF_FUP_NO_IP: return "fup without ip after ovf";
	case PTFLOW_ERR_FUP_DISABLED: return "fup while tracing is disabled";
	case PTFLOW_ERR_FUP_NO_IP: return "fup without ip";
	case PTFLOW_ERR_TIP_DISABLED: return "tip while tracing is disabled";
	case PTFLOW_ERR_TIP_NO_IP: return "tip without ip";
	case PTFLOW_ERR_PGD_DISABLED: return "tip.pgd while tracing is disabled";
	case PTFLOW_ERR_TNT_DISABLED: return "tnt while tracing is disabled";
	case PTFLOW_ERR_UNEXPECTED: return "unexpected packet";
	case PTFLOW_ERR_FUP_BAD_PACKET: return "bad packet";
	case PTFLOW_ERR_FUP_NO_TIP: return "fup not followed by tip or tip.pgd";
	case PTFLOW_ERR_TIP_TNT_PENDING: return "indirect branch, but tnt bits pending";
	case PTFLOW_ERR_NEED_TIP: return "indirect branch: expected tip";
	case PTFLOW_ERR_NEED_TNT: return "conditional branch: expected tnt";
	case PTFLOW_ERR_RET_NOT_TAKEN: return "compressed ret: tnt bit not taken";
	case PTFLOW_ERR_RET_NO_CALL: return "compressed ret: empty call stack";
	case PTFLOW_ERR_STEPS: return "too many instructions without a packet";
	case PTFLOW_ERR_NO_CODE: return "no code at the ip (not in any image)";
	case PTFLOW_ERR_BAD_INSN: return "invalid instruction at the ip";
	case PTFLOW_ERR_COUNT: break;
	}
	return "?";
}

const char *ptflow_ev_name(int type)
{
	switch ((enum ptflow_ev)type) {
	case PTFLOW_EV_ENABLED: return "enabled";
	case PTFLOW_EV_DISABLED: return "disabled";
	case PTFLOW_EV_ASYNC_DISABLED: return "async disabled";
	case PTFLOW_EV_INTERRUPT: return "interrupt";
	case PTFLOW_EV_OVERFLOW: return "overflow";
	case PTFLOW_EV_EXEC_MODE: return "exec mode";
	case PTFLOW_EV_TSX: return "tsx";
	case PTFLOW_EV_PAGING: return "paging";
	case PTFLOW_EV_VMCS: return "vmcs";
	case PTFLOW_EV_STOP: return "stopped";
	case PTFLOW_EV_PTWRITE: return "ptwrite";
	case PTFLOW_EV_EXSTOP: return "exstop";
	case PTFLOW_EV_MWAIT: return "mwait";
	case PTFLOW_EV_PWRE: return "pwre";
	case PTFLOW_EV_PWRX: return "pwrx";
	case PTFLOW_EV_CFE: return "cfe";
	case PTFLOW_EV_EVD: return "evd";
	case PTFLOW_EV_GAP: return "gap";
	case PTFLOW_EV_ERROR: return "error";
	case PTFLOW_EV_COUNT: break;
	}
	return "?";
}

enum ptflow_ev_way ptflow_ev_way(int type)
{
	switch (type) {
	case PTFLOW_EV_INTERRUPT:
	case PTFLOW_EV_ASYNC_DISABLED:
	case PTFLOW_EV_TSX:
	case PTFLOW_EV_EXSTOP:
	case PTFLOW_EV_CFE:
	case PTFLOW_EV_PTWRITE:
		return PTFLOW_WAY_AT_IP;
	case PTFLOW_EV_EXEC_MODE:
	case PTFLOW_EV_PAGING:
	case PTFLOW_EV_VMCS:
	case PTFLOW_EV_MWAIT:
	case PTFLOW_EV_PWRE:
	case PTFLOW_EV_PWRX:
	case PTFLOW_EV_EVD:
		return PTFLOW_WAY_KEPT;
	default:
		return PTFLOW_WAY_LOST;
	}
}

/* ---- output -------------------------------------------------------------- */

/* An event to the sink, with the time estimate so far. */
static void emit(struct ptflow_decoder *d, struct ptflow_event *ev)
{
	d->stat.events++;
	/* the estimate after the timing packets read so far (33.8.3) */
	ev->has_time = pttime_get(&d->time, &ev->tsc, &ev->lost_mtc, &ev->lost_cyc);
	if (d->sink.event) {
		if (d->blk_cur != d->blk)
			ptflow_blk_flush(d); /* the blocks before it first */
		d->sink.event(d->sink.ctx, ev);
	}
}

/* See pt_flow_int.h. */
void ptflow_event(struct ptflow_decoder *d, int type, uint64_t off, bool has_ip, uint64_t ip)
{
	if (!d->sink.event) { /* counted only (--stat) */
		d->stat.events++;
		return;
	}
	struct ptflow_event ev;
	/* every field (an event per enable and disable: no byte loop) */
	ev.type = (uint8_t)type;
	ev.has_ip = has_ip;
	ev.flag = false;
	ev.offset = off;
	ev.ip = ip;
	ev.target = 0;
	ev.value = 0;
	ev.aux = 0;
	ev.msg = NULL;
	ev.has_time = false;
	ev.tsc = 0;
	emit(d, &ev);
}

/* Report an error; returns STEP_ERR (decoding resyncs at the next PSB). */
static int report_hint(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err,
		       int pkt_err, uint32_t hint)
{
	struct ptflow_event ev;
	efipt_memset(&ev, 0, sizeof(ev));
	ev.type = PTFLOW_EV_ERROR;
	ev.offset = off;
	ev.has_ip = true;
	ev.ip = ip;
	ev.err = (uint16_t)err;
	ev.aux = (uint64_t)pkt_err;
	ev.msg = err == PTFLOW_ERR_PACKET ? ptpkt_errstr(pkt_err) : ptflow_errstr(err);
	/* SKZ84: a bogus byte right after a TMA */
	if (off == d->tma_end && (err == PTFLOW_ERR_PACKET || err == PTFLOW_ERR_PSB_BAD_PACKET))
		hint |= PTFLOW_ERRATUM_SKZ84;
	ev.errata = (hint | d->erratum_seen) & ~d->cfg.errata;
	d->erratum_seen = 0;
	d->stat.errors++;
	d->stat.events--; /* counted as an error, not an event */
	if (d->stat.first_error.type != PTFLOW_EV_ERROR)
		d->stat.first_error = ev;
	emit(d, &ev);
	return STEP_ERR;
}

static int report(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err,
		  int pkt_err)
{
	return report_hint(d, off, ip, err, pkt_err, 0);
}

/* The flow decoder's error err at trace offset off, at ip; STEP_ERR. */
static int error(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err)
{
	return report(d, off, ip, err, 0);
}

/* The same error where the trace shows the pattern of errata hint (the
 * CPU that recorded it may have them). */
static int error_hint(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err,
		      uint32_t hint)
{
	return report_hint(d, off, ip, err, 0, hint);
}

/* Erratum e's workaround acts here when the CPU has it (true: counted);
 * otherwise its pattern is remembered for the error that may follow. */
static bool erratum(struct ptflow_decoder *d, uint32_t e)
{
	if (d->cfg.errata & e) {
		d->stat.errata_used |= e;
		return true;
	}
	d->erratum_seen |= e;
	return false;
}

/* The packet decoder's error r (negative ptpkt_error); STEP_ERR. */
static int packet_error(struct ptflow_decoder *d, uint64_t off, uint64_t ip, int r)
{
	return report(d, off, ip, PTFLOW_ERR_PACKET, -r);
}

/* n instructions of b ran, the last of class last_iclass: counted, and
 * delivered as a run and as a block if the sink takes them. */
static void run(struct ptflow_decoder *d, const struct ptflow_block *b, uint32_t n,
		uint8_t last_iclass)
{
	if (!n)
		return;
	d->stat.insns += n;
	if (last_iclass != X86_IC_OTHER)
		d->stat.branches++;
	d->walked = true;
	if (d->sink.run)
		ptflow_deliver(d, b, n, last_iclass);
	if (d->on_blocks) {
		/* where it goes on is known when the next block comes */
		unsigned size = b_size(b), end = b_bend(b);
		if (n < b_ninsn(b)) {
			uint8_t lens[PTFLOW_BLOCK_MAX];
			struct ptflow_block tmp;
			ptflow_block_decode(&d->cfg.image, b->ip, b_mode(b), &tmp, lens);
			size = 0;
			for (unsigned i = 0; i < n && i < b_ninsn(&tmp); i++)
				size += lens[i];
			end = PTFLOW_BEND_CUT;
		}
		blk_put(d, b->ip, n, size, b_mode(b), last_iclass, end, 0, true);
	}
}

/* A mark's time: the estimate now. */
static void mark_fill(const struct ptflow_decoder *d, struct ptflow_time_mark *m)
{
	m->has_time = pttime_get(&d->time, &m->tsc, NULL, NULL);
	m->cbr = d->time.cbr;
}

/* The mark due (time_moves()) given its time. */
static void mark_due_fill(struct ptflow_decoder *d)
{
	if (d->blk_due) {
		mark_fill(d, d->blk_due);
		d->blk_due = NULL;
	}
}

/* See pt_flow_int.h. */
void ptflow_hand_over(struct ptflow_decoder *d, const struct ptflow_blk *b, size_t n,
		      const uint64_t *execs)
{
	struct ptflow_batch batch;
	batch.b = b;
	batch.n = n;
	batch.tsc = 0;
	batch.cbr = 0;
	batch.has_time = false;
	batch.marks = NULL;
	batch.nmarks = 0;
	if (execs) {
		/* counts hold no time */
	} else if (d->blk_timed && b == d->blk) {
		/* a mark at the end belongs to no block: the next batch's */
		uint32_t k = d->blk_nmarks;
		if (k && d->blk_marks[k - 1].at >= n)
			k--;
		batch.has_time = d->blk_time.has_time;
		batch.tsc = d->blk_time.tsc;
		batch.cbr = d->blk_time.cbr;
		batch.marks = d->blk_marks;
		batch.nmarks = k;
	} else {
		batch.has_time = pttime_get(&d->time, &batch.tsc, NULL, NULL);
		batch.cbr = d->time.cbr;
	}
	batch.image = &d->cfg.image;
	batch.execs = execs;
	d->on_blocks(d->sink.ctx, &batch);
}

void ptflow_blk_flush(struct ptflow_decoder *d)
{
	size_t n = (size_t)(d->blk_cur - d->blk);
	mark_due_fill(d); /* no timing packet since: the estimate now */
	if (n && d->on_blocks) {
		ptflow_hand_over(d, d->blk, n, NULL);
		d->blk_waiting = d->blk_open;
	}
	if (d->blk_nmarks) { /* the time now: the next batch's */
		d->blk_time = d->blk_marks[d->blk_nmarks - 1];
		d->blk_nmarks = 0;
	}
	d->blk_cur = d->blk;
	d->blk_open = false;
	d->blk_merge = NULL;
}

void ptflow_on_blocks(struct ptflow_decoder *d, ptflow_blocks_fn fn)
{
	d->on_blocks = fn;
	d->blk_nmarks = 0;
	d->blk_due = NULL;
	d->blk_cur = d->blk;
	d->blk_open = false;
	d->blk_merge = NULL;
}

void ptflow_blk_regions(struct ptflow_decoder *d, uint64_t (*region)(void *ctx, uint64_t ip),
			void *ctx)
{
	d->blk_region = region;
	d->blk_region_ctx = ctx;
	d->blk_merge = NULL;
	ptflow_cache_flush(d); /* chains made before are not marked */
}

void ptflow_blocks_counted(struct ptflow_decoder *d, uint64_t *counts)
{
	d->counts = counts;
}

void ptflow_blocks_timed(struct ptflow_decoder *d, enum ptflow_timing how)
{
	d->blk_timed = (uint8_t)how;
	d->blk_nmarks = 0;
	d->blk_due = NULL;
	efipt_memset(&d->blk_time, 0, sizeof(d->blk_time));
	d->blk_time.has_time = pttime_get(&d->time, &d->blk_time.tsc, NULL, NULL);
	d->blk_time.cbr = d->time.cbr;
}

void ptflow_on_progress(struct ptflow_decoder *d, void (*fn)(void *ctx, uint64_t offset),
			void *ctx)
{
	d->progress = fn;
	d->progress_ctx = ctx;
}

bool ptflow_time(const struct ptflow_decoder *d, uint64_t *tsc, uint8_t *cbr)
{
	*cbr = d->time.cbr;
	return pttime_get(&d->time, tsc, NULL, NULL);
}

unsigned ptflow_blk_lens(const struct ptimg *img, const struct ptflow_blk *b, uint8_t *lens)
{
	struct ptflow_block tmp;
	ptflow_block_decode(img, b->ip, b->mode, &tmp, lens);
	return b->ninsn <= b_ninsn(&tmp) ? b->ninsn : b_ninsn(&tmp);
}

void ptflow_stop(struct ptflow_decoder *d)
{
	d->stop = true;
	/* every packet reader, the fast loops' too, meets the end where it
	 * is, as at a held position (pos_hold()): none checks d->stop */
	if (d->pk.pos && d->pk.pos < d->pk.end)
		d->pk.end = d->pk.pos;
}

/* The first n instructions of b to the run callback. */
void ptflow_deliver(struct ptflow_decoder *d, const struct ptflow_block *b, uint32_t n,
		    uint8_t last_iclass)
{
	struct ptflow_block tmp;
	uint8_t lens[PTFLOW_BLOCK_MAX];
	struct ptflow_run r;
	ptflow_block_decode(&d->cfg.image, b->ip, b_mode(b), &tmp, lens);
	r.ip = b->ip;
	r.lens = lens;
	r.ninsn = n <= b_ninsn(&tmp) ? n : b_ninsn(&tmp);
	r.mode = b_mode(b);
	r.last_iclass = last_iclass;
	d->sink.run(d->sink.ctx, &r);
}

/* b's chain to the run callback, block by block, each with its own last
 * instruction's class (last_iclass for the last). */
void ptflow_deliver_chain(struct ptflow_decoder *d, const struct ptflow_block *b,
			  uint8_t last_iclass)
{
	struct ptflow_block blk = *b;
	for (unsigned left = b->chain_ninsn;;) {
		unsigned n = b_ninsn(&blk);
		if (n >= left) {
			ptflow_deliver(d, &blk, left, last_iclass);
			return;
		}
		ptflow_deliver(d, &blk, n, (uint8_t)b_iclass(&blk));
		left -= n;
		uint64_t to = b_bend(&blk) == PTFLOW_BEND_SPLIT ? b_next(&blk) : b_target(&blk);
		ptflow_block_decode(&d->cfg.image, to, (uint8_t)b_mode(&blk), &blk, NULL);
	}
}

/* ---- state ---------------------------------------------------------------- */

/* Forget the flow (a PSB follows): nothing pending, tracing off. */
static void reset_state(struct ptflow_decoder *d)
{
	d->have_pend = false;
	d->tnt_n = 0;
	d->enabled = false;
	d->after_ovf = false;
	d->gap = false;
	d->at_mov_cr3 = false;
	d->have_next_mode = false;
	d->fup_kind = FUP_ASYNC;
	d->steps = 0;
	d->fetch_err = 0;
	d->erratum_seen = 0;
	d->tma_end = ~0ull;
	stack_reset(d);
	ptpkt_lastip_init(&d->lastip);
}

int ptflow_init(struct ptflow_decoder *d, const struct ptflow_config *cfg,
		const struct ptflow_sink *sink)
{
	if (!d || !cfg || !cfg->image.read)
		return -1;
	if (cfg->cache_size & (cfg->cache_size - 1))
		return -1;
	if (cfg->cache_size && !cfg->cache)
		return -1;
	efipt_memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	if (!d->cfg.max_steps)
		d->cfg.max_steps = 1u << 20;
	if (sink)
		d->sink = *sink;
	d->blk_cur = d->blk;
	d->mode = X86_MODE_64;
	struct pttime_config tc = {
		.cpuid15_eax = cfg->cpuid15_eax, .cpuid15_ebx = cfg->cpuid15_ebx,
		.mtc_freq = cfg->mtc_freq, .nom_freq = cfg->nom_freq,
		.skl168 = (cfg->errata & PTFLOW_ERRATUM_SKL168) != 0,
	};
	pttime_init(&d->time, &tc);
	/* the index first (a slot per entry of the cache), then the entries */
	uint32_t iblocks = (uint32_t)((cfg->cache_size * sizeof(uint32_t) +
				       sizeof(struct ptflow_block) - 1) / sizeof(struct ptflow_block));
	if (cfg->cache_size >= 8) {
		d->index = (uint32_t *)(void *)cfg->cache;
		d->imask = cfg->cache_size - 1;
		d->ents = cfg->cache + iblocks;
		d->nents = cfg->cache_size - iblocks;
	}
	ptflow_cache_flush(d);
	reset_state(d);
	return 0;
}

/* ---- packets -------------------------------------------------------------- */

/* With ptflow_blocks_timed(): the time estimate is about to move on at a
 * timing packet (cbr: a CBR). The blocks walked so far ran before it;
 * those from here on have the new time: a mark (or the batch's time) at
 * the next block, due: its time is read when the time moves on after a
 * block took it, or at hand-over, so that a run of timing packets with no
 * block between reads the estimate once (on the boot 29.8 M MTCs, 9.8 M
 * marks with PTFLOW_TIME_REGIONS). */
static inline void time_moves(struct ptflow_decoder *d, bool cbr)
{
	/* no block before it takes what comes after (a quiet chain's),
	 * unless only where the flow may leave a region needs the time
	 * (a CBR still ends it: a frequency change shows where it was) */
	if (d->blk_timed == PTFLOW_TIME_BLOCKS || cbr)
		d->blk_merge = NULL;
	if (d->blk_due && d->blk_cur == d->blk_due_cur)
		return; /* no block since: it takes the newer time, later */
	/* the blocks since the mark due ran at the estimate before this */
	mark_due_fill(d);
	uint32_t at = (uint32_t)(d->blk_cur - d->blk), k = d->blk_nmarks;
	struct ptflow_time_mark *m = !at ? &d->blk_time
				   : k && d->blk_marks[k - 1].at == at ? &d->blk_marks[k - 1]
				   : &d->blk_marks[d->blk_nmarks++];
	m->at = at;
	d->blk_due = m;
	d->blk_due_cur = d->blk_cur;
}

/* A timing packet to the time estimate (33.8.3). */
static void timing(struct ptflow_decoder *d, const struct ptpkt *p)
{
	if (d->blk_timed && (p->type == ptpkt_tsc || p->type == ptpkt_mtc || p->type == ptpkt_cyc ||
			     p->type == ptpkt_tma || p->type == ptpkt_cbr))
		time_moves(d, p->type == ptpkt_cbr);
	pttime_packet(&d->time, p);
}

/* The trace byte at stream offset off (inside the buffer). */
static const uint8_t *raw_at(const struct ptflow_decoder *d, uint64_t off)
{
	return d->pk.begin + (off - d->pk.base);
}

/*
 * SKZ84: with TSC offsetting or scaling in a VMX guest every TMA is corrupt
 * and followed by one bogus byte: skip both (true) when the CPU has it.
 * TMA comes right after the TSC, so mostly inside PSB+.
 */
static bool skz84_skip(struct ptflow_decoder *d, uint64_t off, const struct ptpkt *p)
{
	d->tma_end = off + p->size;
	if (!(d->cfg.errata & PTFLOW_ERRATUM_SKZ84))
		return false;
	d->stat.errata_used |= PTFLOW_ERRATUM_SKZ84;
	uint64_t next = off + p->size + 1;
	if (next <= d->pk.base + (uint64_t)(d->pk.end - d->pk.begin))
		ptpkt_sync_set(&d->pk, next);
	return true;
}

/*
 * SKD007: an OVF may replace the rest of a multi-byte CYC; the decoder
 * then reads 02 F3 as CYC bytes. Cut the CYC after its first byte and
 * decode the OVF (true) when the CPU has it; a trace that follows the SDM
 * may hold the same bytes (a CYC ending in 02, then a CYC F3).
 */
static bool skd007_cut(struct ptflow_decoder *d, uint64_t off, const struct ptpkt *p)
{
	const uint8_t *q = raw_at(d, off);
	for (unsigned i = 1; i < p->size; i++)
		if (q[i] == PT_OPC_EXT && q + i + 1 < d->pk.end && q[i + 1] == PT_EXT_OVF) {
			if (!erratum(d, PTFLOW_ERRATUM_SKD007))
				return false;
			ptpkt_sync_set(&d->pk, off + i);
			return true;
		}
	return false;
}

/* See pt_flow_int.h. */
void ptflow_read_mtc(struct ptflow_decoder *d)
{
	uint8_t ctc = d->pk.pos[1];
	d->pk.pos += PT_SIZE_MTC;
	d->stat.packets++;
	d->steps = 0;
	if (d->blk_timed) /* as timing() */
		time_moves(d, false);
	pttime_mtc(&d->time, ctc);
}

/*
 * Read packets until a TNT (bits loaded) or a packet that matters to the
 * flow (d->pend). IP packets are reconstructed against Last IP here, in
 * stream order (33.4.2.2, Table 33-18). Returns 0 or a negative ptpkt_error.
 */
static int fetch_packets(struct ptflow_decoder *d)
{
	for (;;) {
		struct ptpkt p;
		uint64_t off = pk_offset(d);
		unsigned n = short_tnt(d, &d->tnt_bits);
		if (n) {
			d->steps = 0;
			d->tnt_n = (uint8_t)n;
			return 0;
		}
		if (d->pk.sync && !d->pk.block && d->pk.pos < d->pk.end &&
		    (ip_packet(d) || mode_exec_packet(d)))
			return 0;
		if (mtc_next(d)) {
			ptflow_read_mtc(d);
			continue;
		}
		int r = ptpkt_next(&d->pk, &p);
		if (r < 0)
			return r;
		d->stat.packets++;
		d->steps = 0;
		switch (p.type) {
		case ptpkt_pad:
		case ptpkt_mnt:
		case ptpkt_bbp:
		case ptpkt_bip:
		case ptpkt_bep:
			continue;
		case ptpkt_cyc:
			if (p.size >= 2 && skd007_cut(d, off, &p))
				continue;
			timing(d, &p);
			continue;
		case ptpkt_tma:
			if (!skz84_skip(d, off, &p))
				timing(d, &p);
			continue;
		case ptpkt_tsc:
		case ptpkt_mtc:
		case ptpkt_cbr:
			timing(d, &p);
			continue;
		case ptpkt_tnt8:
		case ptpkt_tnt64:
			if (!p.u.tnt.nbits)
				continue;
			d->tnt_bits = p.u.tnt.bits;
			d->tnt_n = p.u.tnt.nbits;
			d->pend_off = off;
			return 0;
		default:
			break;
		}
		uint64_t ip = 0;
		r = ptpkt_lastip_apply(&d->lastip, &p, &ip);
		if (r == -ptpkt_err_bad_packet)
			return r;
		d->pend = p;
		if (p.type == ptpkt_tip || p.type == ptpkt_tip_pge ||
		    p.type == ptpkt_tip_pgd || p.type == ptpkt_fup) {
			/* keep the full IP; ipc 0 now means "no IP" */
			d->pend.u.ip.ip = r == 1 ? ip : 0;
			d->pend.u.ip.ipc = r == 1 ? p.u.ip.ipc : 0;
		}
		d->pend_off = off;
		d->have_pend = true;
		return 0;
	}
}

/* ---- positions (ptflow_on_position) ---------------------------------------- */

/* The packet reader ends at the next position, if it lies in the buffer
 * (never behind the read position): every reader stops there. */
static void pos_hold(struct ptflow_decoder *d)
{
	d->pk.end = d->pk_end;
	if (!d->pos_fn)
		return;
	uint64_t cur = pk_offset(d);
	uint64_t end = d->pk.base + (uint64_t)(d->pk_end - d->pk.begin);
	if (d->pos_at >= end)
		return;
	uint64_t at = d->pos_at > cur ? d->pos_at : cur;
	d->pk.end = d->pk.begin + (at - d->pk.base);
}

/* A reader met the end: if it is a held position, what is due there is
 * applied and the reader may go on (true); false at the buffer's end. */
static bool pos_reached(struct ptflow_decoder *d)
{
	if (d->stop || d->pk.end == d->pk_end || !d->pos_fn)
		return false;
	uint64_t off = d->pk.base + (uint64_t)(d->pk.end - d->pk.begin);
	ptflow_blk_flush(d); /* walked in the code before */
	ptflow_counts_flush(d);
	uint64_t next = d->pos_fn(d->pos_ctx, off);
	d->pos_at = next > off ? next : off + 1; /* always forward */
	if (d->used) { /* an empty cache costs nothing to keep (many positions) */
		ptflow_cache_flush(d);
		d->code_gen++;
	}
	pos_hold(d);
	return true;
}

void ptflow_on_position(struct ptflow_decoder *d, uint64_t at,
			uint64_t (*fn)(void *ctx, uint64_t offset), void *ctx)
{
	d->pos_at = at;
	d->pos_fn = fn;
	d->pos_ctx = ctx;
}

static bool at_end(int r)
{
	return r == -ptpkt_err_eos || r == -ptpkt_err_truncated;
}

/* See pt_flow_int.h. An error stays until the next PSB: whoever reads the
 * next packet (the fast loops or the state machine) gets the same one. */
int ptflow_fetch(struct ptflow_decoder *d)
{
	if (!d->fetch_err) {
		d->fetch_err = fetch_packets(d);
		while (at_end(d->fetch_err) && pos_reached(d))
			d->fetch_err = fetch_packets(d);
	}
	return d->fetch_err < 0 ? d->fetch_err : 0;
}

/* The MODE.Exec waiting for this IP packet takes effect (33.4.2.8); an
 * event if the mode changed. */
static void apply_mode(struct ptflow_decoder *d, uint64_t off)
{
	if (!d->have_next_mode)
		return;
	d->have_next_mode = false;
	if (d->next_mode != d->mode) {
		d->mode = d->next_mode;
		struct ptflow_event ev;
		efipt_memset(&ev, 0, sizeof(ev));
		ev.type = PTFLOW_EV_EXEC_MODE;
		ev.offset = off;
		ev.has_ip = true;
		ev.ip = d->ip;
		ev.value = d->mode;
		emit(d, &ev);
	}
}

/* Tracing (re)starts at ip: after PSB+ with a FUP, TIP.PGE, or the first IP
 * known after an overflow. */
static void resume_at(struct ptflow_decoder *d, uint64_t ip)
{
	d->enabled = true;
	d->after_ovf = false;
	d->gap = false;
	d->walked = false;
	d->ip = ip;
}

/* TIP.PGE (33.4.2.3): tracing starts at ip, in the mode a MODE.Exec before
 * it gave (33.4.2.8). */
void ptflow_enable_at(struct ptflow_decoder *d, uint64_t ip, uint64_t off)
{
	resume_at(d, ip);
	/* 33.4.2.2: RETs are never compressed across PacketEn=0, so no CALL
	 * from before the enable can match one */
	stack_reset(d);
	apply_mode(d, off);
	ptflow_event(d, PTFLOW_EV_ENABLED, off, true, d->ip);
}

/* See pt_flow_int.h. */
int ptflow_disable(struct ptflow_decoder *d, int type, bool has_ip, uint64_t ip)
{
	d->enabled = false;
	d->have_pend = false;
	ptflow_event(d, type, d->pend_off, has_ip, ip);
	return STEP_OK;
}

/* PSB+ (33.3.7, 33.4.2.17): status only. Reads up to PSBEND. Returns
 * STEP_OK, STEP_DONE (the trace ends inside it) or STEP_ERR. */
static int psb_plus(struct ptflow_decoder *d)
{
	uint64_t psb_off = d->pend_off;
	bool have_fup = false;
	uint64_t fup_ip = 0;

	d->have_pend = false;
	if (d->progress)
		d->progress(d->progress_ctx, psb_off);
	/* Nothing crosses a PSB: call stack and compound events reset
	 * (33.3.7). While tracing, the PSB sits at the FUP's IP, which the
	 * walk has not reached yet: the stack is reset there. */
	if (!d->enabled)
		stack_reset(d);
	d->tnt_n = 0;
	d->fup_kind = FUP_ASYNC;
	pttime_psb(&d->time); /* SKL168: a CYC before the PSB may be lost */
	for (;;) {
		struct ptpkt p;
		uint64_t off = pk_offset(d);
		int r = ptpkt_next(&d->pk, &p);
		if (at_end(r) && pos_reached(d))
			continue;
		if (at_end(r))
			return STEP_DONE;
		if (r < 0)
			return error(d, off, d->ip, PTFLOW_ERR_PSB_BAD_PACKET);
		d->stat.packets++;
		uint64_t ip = 0;
		r = ptpkt_lastip_apply(&d->lastip, &p, &ip);
		switch (p.type) {
		case ptpkt_psbend:
			goto done;
		case ptpkt_fup:
			if (r == 1) {
				have_fup = true;
				fup_ip = ip;
			}
			break;
		case ptpkt_mode_exec:
			d->mode = mode_of(&p);
			d->have_next_mode = false;
			break;
		case ptpkt_ovf:
			/* PSB+ cut by an overflow: handle the OVF normally */
			d->pend = p;
			d->pend_off = off;
			d->have_pend = true;
			return STEP_OK;
		case ptpkt_tnt8: case ptpkt_tnt64: case ptpkt_tip: case ptpkt_tip_pge:
		case ptpkt_tip_pgd: case ptpkt_psb:
			return error(d, off, d->ip, PTFLOW_ERR_PSB_UNEXPECTED);
		case ptpkt_tma:
			if (!skz84_skip(d, off, &p))
				timing(d, &p);
			break;
		default:
			timing(d, &p);
			break;
		}
	}
done:
	if (!have_fup) {
		d->enabled = false; /* PacketEn=0 at the PSB */
		d->gap = false;
		return STEP_OK;
	}
	if (!d->enabled) {
		resume_at(d, fup_ip);
		return STEP_OK;
	}
	/* Tracing: the FUP is the IP of the next instruction; walk there. */
	d->pend.type = ptpkt_fup;
	d->pend.u.ip.ipc = 6;
	d->pend.u.ip.ip = fup_ip;
	d->pend_off = psb_off;
	d->have_pend = true;
	d->fup_kind = FUP_STATUS;
	return STEP_OK;
}

static int reach_fup(struct ptflow_decoder *d);

/*
 * A pending packet that does not bind to an instruction, or any packet
 * while tracing is disabled. Returns STEP_OK if handled, STEP_ERR, STEP_DONE,
 * or -1 if it waits for the walk.
 */
static int handle_pend(struct ptflow_decoder *d)
{
	const struct ptpkt *p = &d->pend;
	uint64_t off = d->pend_off;
	struct ptflow_event ev;

	efipt_memset(&ev, 0, sizeof(ev));
	ev.offset = off;
	switch (p->type) {
	case ptpkt_psb:
		return psb_plus(d);
	case ptpkt_psbend:
		d->have_pend = false;
		return STEP_OK;
	case ptpkt_ovf:
		/* 33.3.8, 33.4.2.16: packets were lost; skip to the IP of the next FUP
		 * or TIP.PGE; no RET compression across it. */
		d->have_pend = false;
		d->tnt_n = 0;
		stack_reset(d);
		d->enabled = false;
		d->after_ovf = true;
		d->gap = false;
		d->fup_kind = FUP_ASYNC;
		ptflow_event(d, PTFLOW_EV_OVERFLOW, off, false, 0);
		return STEP_OK;
	case ptpkt_tip_pge:
		d->have_pend = false;
		if (!pend_has_ip(d))
			return error(d, off, d->ip, PTFLOW_ERR_PGE_NO_IP);
		if (d->enabled && d->walked)
			return error(d, off, d->ip, PTFLOW_ERR_PGE_ENABLED);
		if (d->enabled) {
			/* BDM70, APL12: PSB+ with FUP (and MODE.Exec) before
			 * the TIP.PGE that starts tracing */
			uint32_t e = PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12;
			if (!(d->cfg.errata & e))
				return error_hint(d, off, d->ip, PTFLOW_ERR_PGE_ENABLED, e);
			d->stat.errata_used |= d->cfg.errata & e;
		}
		ptflow_enable_at(d, p->u.ip.ip, off);
		return STEP_OK;
	case ptpkt_mode_exec:
		d->have_pend = false;
		d->next_mode = mode_of(p);
		d->have_next_mode = true;
		return STEP_OK;
	case ptpkt_mode_tsx:
		d->have_pend = false;
		d->fup_kind = p->u.mode_tsx.abrt ? FUP_TSX_ABORT : FUP_BOUND;
		ev.type = PTFLOW_EV_TSX;
		ev.value = (uint64_t)p->u.mode_tsx.intx | (uint64_t)p->u.mode_tsx.abrt << 1;
		d->bound_ev = ev; /* nothing left from an earlier bound event */
		d->bound_set = true;
		return STEP_OK;
	case ptpkt_pip:
		if (d->enabled)
			return -1; /* binds to the MOV CR3 (or far transfer) */
		d->have_pend = false;
		ev.type = PTFLOW_EV_PAGING;
		ev.value = p->u.pip.cr3;
		ev.flag = p->u.pip.nr;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_vmcs:
		d->have_pend = false;
		ev.type = PTFLOW_EV_VMCS;
		ev.value = p->u.vmcs.base;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_stop:
		d->have_pend = false;
		ev.type = PTFLOW_EV_STOP;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_exstop:
		d->have_pend = false;
		ev.type = PTFLOW_EV_EXSTOP;
		if (p->u.exstop.ip && (d->enabled || d->gap)) {
			d->bound_ev = ev;
			d->bound_set = true;
			d->fup_kind = FUP_BOUND;
		} else {
			emit(d, &ev);
		}
		return STEP_OK;
	case ptpkt_mwait:
		d->have_pend = false;
		ev.type = PTFLOW_EV_MWAIT;
		ev.value = p->u.mwait.hints | (uint64_t)p->u.mwait.ext << 8;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_pwre:
		d->have_pend = false;
		ev.type = PTFLOW_EV_PWRE;
		ev.value = p->u.pwre.state | (uint64_t)p->u.pwre.sub << 4;
		ev.flag = p->u.pwre.hw;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_pwrx:
		d->have_pend = false;
		ev.type = PTFLOW_EV_PWRX;
		ev.value = p->u.pwrx.last | (uint64_t)p->u.pwrx.deepest << 4 |
			   (uint64_t)p->u.pwrx.wr << 8;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_cfe:
		d->have_pend = false;
		ev.type = PTFLOW_EV_CFE;
		ev.value = p->u.cfe.type | (uint64_t)p->u.cfe.vector << 8;
		if (d->enabled || d->gap) {
			/* Event Trace (33.4.2.29): with the IP bit a stand-alone
			 * FUP follows; without it the CFE binds to the next FUP,
			 * e.g. the FUP of the interrupt's FUP+TIP (33.7, Table
			 * 33-59 case 4). */
			d->bound_ev = ev;
			d->bound_set = true;
			if (p->u.cfe.ip)
				d->fup_kind = FUP_BOUND;
		} else {
			emit(d, &ev);
		}
		return STEP_OK;
	case ptpkt_evd:
		d->have_pend = false;
		ev.type = PTFLOW_EV_EVD;
		ev.value = p->u.evd.payload;
		ev.aux = p->u.evd.type;
		emit(d, &ev);
		return STEP_OK;
	case ptpkt_ptw:
		ev.type = PTFLOW_EV_PTWRITE;
		ev.value = p->u.ptw.payload;
		ev.aux = p->u.ptw.bytes;
		if (p->u.ptw.ip) {
			/* FUPonPTW: the FUP that follows is the PTWRITE's IP */
			d->have_pend = false;
			d->bound_ev = ev;
			d->bound_set = true;
			d->fup_kind = FUP_BOUND;
			return STEP_OK;
		}
		if (!d->enabled) {
			d->have_pend = false;
			emit(d, &ev);
			return STEP_OK;
		}
		return -1; /* binds to the next PTWRITE */
	case ptpkt_fup:
		if (d->gap && pend_has_ip(d)) {
			/* DisTNT: the flow was lost at a Jcc, but this FUP is one
			 * of its usual kinds (interrupt, TSX, PTW, EXSTOP, CFE):
			 * the event happened at its IP */
			resume_at(d, p->u.ip.ip);
			return reach_fup(d);
		}
		if (d->after_ovf) {
			d->have_pend = false;
			if (!pend_has_ip(d))
				return error(d, off, d->ip, PTFLOW_ERR_OVF_FUP_NO_IP);
			resume_at(d, p->u.ip.ip);
			d->fup_kind = FUP_ASYNC;
			d->bound_set = false;
			apply_mode(d, off);
			return STEP_OK;
		}
		if (!d->enabled) {
			d->have_pend = false;
			return error(d, off, d->ip, PTFLOW_ERR_FUP_DISABLED);
		}
		if (!pend_has_ip(d)) {
			d->have_pend = false;
			return error(d, off, d->ip, PTFLOW_ERR_FUP_NO_IP);
		}
		return -1;
	case ptpkt_tip:
		if (d->after_ovf && pend_has_ip(d) &&
		    (d->cfg.distnt || erratum(d, PTFLOW_ERRATUM_SKD010))) {
			/* SKD010: the FUP after OVF was dropped; DisTNT: the flow
			 * was lost at a conditional branch. The TIP is the first
			 * IP we know. */
			d->have_pend = false;
			resume_at(d, p->u.ip.ip);
			apply_mode(d, off);
			return STEP_OK;
		}
		if (!d->enabled) {
			d->have_pend = false;
			return error(d, off, d->ip, PTFLOW_ERR_TIP_DISABLED);
		}
		if (!pend_has_ip(d)) {
			d->have_pend = false;
			return error(d, off, d->ip, PTFLOW_ERR_TIP_NO_IP);
		}
		return -1;
	case ptpkt_tip_pgd:
		if (d->gap) {
			/* DisTNT: tracing stops somewhere after the lost Jcc */
			d->after_ovf = false;
			d->gap = false;
			return ptflow_disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), p->u.ip.ip);
		}
		if (d->after_ovf && erratum(d, PTFLOW_ERRATUM_APL11)) {
			/* APL11: OVF as TraceEn/ContextEn clears may be followed
			 * by TIP.PGD: tracing simply stays off. */
			d->have_pend = false;
			d->after_ovf = false;
			return STEP_OK;
		}
		if (!d->enabled) {
			d->have_pend = false;
			return error(d, off, d->ip, PTFLOW_ERR_PGD_DISABLED);
		}
		return -1;
	default:
		d->have_pend = false;
		return error(d, off, d->ip, PTFLOW_ERR_UNEXPECTED);
	}
}

/* Index k of the instruction at fip in b (0..ninsn-1; ninsn if b ends at
 * code that cannot be decoded and fip is that address), or -1. */
static int fup_index(const struct ptflow_decoder *d, const struct ptflow_block *b, uint64_t fip)
{
	if (fip < b->ip || fip > b_next(b))
		return -1;
	if (fip == b->ip)
		return 0;
	/* the last instruction and the end need no decoding: a FUP where
	 * the flow leaves (a branch out of the traced region) is there */
	bool cut = b_bend(b) == PTFLOW_BEND_NOCODE || b_bend(b) == PTFLOW_BEND_INVALID;
	if (fip == b_next(b))
		return cut ? (int)b_ninsn(b) : -1;
	if (b_ninsn(b) && fip == b_next(b) - b_last_len(b))
		return (int)b_ninsn(b) - 1;
	struct ptflow_block tmp;
	uint8_t lens[PTFLOW_BLOCK_MAX];
	ptflow_block_decode(&d->cfg.image, b->ip, b_mode(b), &tmp, lens);
	uint64_t a = b->ip;
	for (unsigned i = 0; i < b_ninsn(&tmp); i++) {
		if (a == fip)
			return (int)i;
		a += lens[i];
	}
	if (a == fip && (b_bend(b) == PTFLOW_BEND_NOCODE || b_bend(b) == PTFLOW_BEND_INVALID))
		return b_ninsn(b);
	return -1;
}

/* Peek past packets that may sit between a FUP and its TIP (33.4.1, Table 33-14:
 * "PIP, VMCS, MODE.Exec in any order"). Returns 0 (a TNT or packet is
 * pending) or a negative ptpkt_error. */
static int fetch_flow(struct ptflow_decoder *d)
{
	for (;;) {
		if (d->tnt_n || d->have_pend)
			return 0;
		int r = ptflow_fetch(d);
		if (r < 0)
			return r;
		if (pend_is(d, ptpkt_pip)) {
			/* the async transfer changes CR3: report it here */
			struct ptflow_event ev;
			efipt_memset(&ev, 0, sizeof(ev));
			ev.type = PTFLOW_EV_PAGING;
			ev.offset = d->pend_off;
			ev.value = d->pend.u.pip.cr3;
			ev.flag = d->pend.u.pip.nr;
			d->have_pend = false;
			emit(d, &ev);
			continue;
		}
		if (pend_is(d, ptpkt_vmcs) || pend_is(d, ptpkt_mode_exec)) {
			handle_pend(d);
			continue;
		}
		return 0;
	}
}

/* The walk reached the IP of the pending FUP. Returns STEP_OK, STEP_DONE
 * or STEP_ERR. */
static int reach_fup(struct ptflow_decoder *d)
{
	uint64_t off = d->pend_off;
	uint64_t fip = d->pend.u.ip.ip;
	int kind = d->fup_kind;

	d->have_pend = false;
	d->fup_kind = FUP_ASYNC;
	d->steps = 0;
	if (d->bound_set) {
		d->bound_set = false;
		d->bound_ev.has_ip = true;
		d->bound_ev.ip = fip;
		emit(d, &d->bound_ev);
	}
	if (kind == FUP_STATUS) {
		stack_reset(d);
		return STEP_OK;
	}
	if (kind == FUP_BOUND) {
		/* stand-alone FUP (MODE.TSX without abort, PTW, EXSTOP, CFE
		 * with IP: 33.4.2.6, 33.4.2.8): a TIP after it belongs to a
		 * later branch */
		return STEP_OK;
	}
	int r = fetch_flow(d);
	if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated)
		return STEP_DONE;
	if (r < 0)
		return report(d, ptpkt_offset(&d->pk), fip, PTFLOW_ERR_FUP_BAD_PACKET, -r);
	if (pend_is(d, ptpkt_tip) && pend_has_ip(d)) {
		d->have_pend = false;
		if (kind == FUP_ASYNC) {
			struct ptflow_event ev;
			efipt_memset(&ev, 0, sizeof(ev));
			ev.type = PTFLOW_EV_INTERRUPT;
			ev.offset = off;
			ev.has_ip = true;
			ev.ip = fip;
			ev.target = d->pend.u.ip.ip;
			emit(d, &ev);
		}
		d->ip = d->pend.u.ip.ip;
		apply_mode(d, d->pend_off);
		return STEP_OK;
	}
	if (pend_is(d, ptpkt_tip_pgd)) {
		if ((d->cfg.errata & PTFLOW_ERRATUM_SKD022) && kind == FUP_ASYNC) {
			/* SKD022: a VM entry that clears TraceEn sends FUP before
			 * TIP.PGD; the VMLAUNCH/VMRESUME at the FUP did execute. */
			struct ptflow_block tmp;
			const struct ptflow_block *b = ptflow_block_get(d, fip, &tmp);
			if (b_ninsn(b) == 1 && (b_iclass(b) == X86_IC_VMLAUNCH ||
					      b_iclass(b) == X86_IC_VMRESUME)) {
				d->stat.errata_used |= PTFLOW_ERRATUM_SKD022;
				run(d, b, 1, b_iclass(b));
				return ptflow_disable(d, PTFLOW_EV_DISABLED, false, 0);
			}
		}
		return ptflow_disable(d, PTFLOW_EV_ASYNC_DISABLED, true, fip);
	}
	if (kind == FUP_ASYNC || kind == FUP_TSX_ABORT)
		return error(d, off, fip, PTFLOW_ERR_FUP_NO_TIP);
	return STEP_OK;
}

/* Consume the TIP/TIP.PGD for an indirect or far transfer at ip. Returns
 * STEP_OK (d->ip is the target, or tracing stopped), STEP_DONE (no packet
 * left) or STEP_ERR. */
static int take_tip(struct ptflow_decoder *d, uint64_t ip)
{
	if (d->tnt_n)
		return error(d, d->pend_off, ip, PTFLOW_ERR_TIP_TNT_PENDING);
	if (pend_is(d, ptpkt_tip)) {
		d->have_pend = false;
		d->ip = d->pend.u.ip.ip;
		apply_mode(d, d->pend_off);
		return STEP_OK;
	}
	if (pend_is(d, ptpkt_tip_pgd))
		return ptflow_disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), d->pend.u.ip.ip);
	if (!d->have_pend)
		return STEP_DONE;
	return error(d, d->pend_off, ip, PTFLOW_ERR_NEED_TIP);
}

/* The next TNT bit, for the branch at ip, to *bit. Returns STEP_OK,
 * STEP_DONE (no packet left) or STEP_ERR (another packet is next). */
static int take_tnt(struct ptflow_decoder *d, uint64_t ip, int *bit)
{
	if (d->tnt_n) {
		d->tnt_n--;
		*bit = (int)((d->tnt_bits >> d->tnt_n) & 1);
		return STEP_OK;
	}
	if (!d->have_pend)
		return STEP_DONE;
	return error(d, d->pend_off, ip, PTFLOW_ERR_NEED_TNT);
}

/* Index of the first WRMSR (0F 30) in b, or -1. */
static int find_wrmsr(const struct ptflow_decoder *d, const struct ptflow_block *b)
{
	uint8_t lens[PTFLOW_BLOCK_MAX], buf[16];
	struct ptflow_block tmp;
	if (!b_wrmsr(b))
		return -1;
	ptflow_block_decode(&d->cfg.image, b->ip, b_mode(b), &tmp, lens);
	uint64_t a = b->ip;
	for (unsigned i = 0; i < b_ninsn(&tmp); i++) {
		struct x86_insn in;
		int n = d->cfg.image.read(d->cfg.image.ctx, a, buf, lens[i]);
		if (n == lens[i] && x86_decode(&in, buf, (size_t)n, a, (enum x86_mode)b_mode(b)) > 0 &&
		    in.enc == X86_ENC_LEGACY && in.map == X86_MAP_0F && in.opcode == 0x30)
			return (int)i;
		a += lens[i];
	}
	return -1;
}

/*
 * DisTNT (33.3.9): a Jcc, or a RET that may have been compressed, writes
 * no TNT bit; the flow is lost at last until the next IP packet. A RET
 * may have been compressed if the call stack has an entry for it or is
 * unknown (calls ran in a gap): with RET compression on, such a RET sends
 * a TIP only when its target is not the call's next IP, so a decoder
 * cannot tell which it was (the SDM advises DisRETC with DisTNT). Returns
 * STEP_OK.
 */
static int lose_flow(struct ptflow_decoder *d, uint64_t last)
{
	ptflow_event(d, PTFLOW_EV_GAP, d->pend_off, true, last);
	d->enabled = false;
	d->after_ovf = true;
	d->gap = true;
	d->ret_unknown = true;
	return STEP_OK;
}

/* Walk one block from d->ip. Returns STEP_OK (d->ip: where the flow goes
 * on), STEP_DONE (no packet left for its branch) or STEP_ERR. */
static int do_block(struct ptflow_decoder *d)
{
	struct ptflow_block tmp;
	const struct ptflow_block *b = ptflow_block_get(d, d->ip, &tmp);

	d->stat.blocks++;
	bool at_mov_cr3 = d->at_mov_cr3 && d->ip == d->mov_cr3_next;
	d->at_mov_cr3 = false;
	if (at_mov_cr3 && pend_is(d, ptpkt_tip_pgd) && !pend_has_ip(d) && !d->tnt_n) {
		/* ContextEn cleared by the MOV CR3 whose PIP came before
		 * (CR3 filtering, 33.2.5.2): its TIP.PGD has no IP and binds
		 * to that MOV CR3 (Table 33-21), tracing ends after it */
		return ptflow_disable(d, PTFLOW_EV_DISABLED, false, 0);
	}
	if (pend_is(d, ptpkt_pip)) {
		/* 33.4.2.7: PIP follows the MOV CR3 that wrote CR3, or comes
		 * before the TIP of a far transfer that changed it */
		bool at_mov = b_bend(b) == PTFLOW_BEND_BRANCH && b_iclass(b) == X86_IC_MOV_CR3;
		bool at_far = b_bend(b) == PTFLOW_BEND_BRANCH &&
			      (b_iclass(b) == X86_IC_JCC || needs_packet(b_iclass(b)));
		if (at_mov || at_far) {
			struct ptflow_event ev;
			efipt_memset(&ev, 0, sizeof(ev));
			ev.type = PTFLOW_EV_PAGING;
			ev.offset = d->pend_off;
			ev.value = d->pend.u.pip.cr3;
			ev.flag = d->pend.u.pip.nr;
			d->have_pend = false;
			if (at_mov) {
				run(d, b, b_ninsn(b), b_iclass(b));
				ev.has_ip = true;
				ev.ip = b_next(b) - b_last_len(b);
				d->ip = b_next(b);
				d->at_mov_cr3 = true;
				d->mov_cr3_next = d->ip;
			}
			emit(d, &ev);
			return STEP_OK;
		}
	}
	if (pend_is(d, ptpkt_tip_pgd) && !pend_has_ip(d) && !d->tnt_n) {
		/* TIP.PGD without IP: TraceEn or ContextEn went to 0
		 * (33.4.2.5). A WRMSR to IA32_RTIT_CTL is the usual way, and
		 * it is no branch: tracing ends right after it. */
		int k = find_wrmsr(d, b);
		if (k >= 0) {
			run(d, b, (uint32_t)k + 1, X86_IC_OTHER);
			return ptflow_disable(d, PTFLOW_EV_DISABLED, false, 0);
		}
	}
	if (pend_is(d, ptpkt_ovf) && b_bend(b) == PTFLOW_BEND_BRANCH && needs_packet(b_iclass(b))) {
		/* The overflow is noticed where the next packet is needed:
		 * the instructions before that branch ran, the branch itself
		 * is where tracing resumes (the FUP after the OVF says). */
		run(d, b, b_ninsn(b) - 1u, X86_IC_OTHER);
		return handle_pend(d);
	}
	if (pend_is(d, ptpkt_fup)) {
		int k = fup_index(d, b, d->pend.u.ip.ip);
		if (k >= 0) {
			run(d, b, (uint32_t)k, X86_IC_OTHER);
			d->ip = d->pend.u.ip.ip;
			return reach_fup(d);
		}
		if (d->fup_kind == FUP_TSX_ABORT &&
		    (b_bend(b) != PTFLOW_BEND_BRANCH || needs_packet(b_iclass(b))) &&
		    erratum(d, PTFLOW_ERRATUM_BDM64)) {
			/* BDM64: a transactional abort right after a branch may
			 * log a wrong target for that branch, so the walk cannot
			 * reach the abort's FUP: take the abort from here. */
			d->ip = d->pend.u.ip.ip;
			return reach_fup(d);
		}
	}
	d->steps += b_ninsn(b);
	if (d->steps > d->cfg.max_steps)
		return error(d, d->pend_off, d->ip, PTFLOW_ERR_STEPS);
	switch (b_bend(b)) {
	case PTFLOW_BEND_NOCODE:
		run(d, b, b_ninsn(b), X86_IC_OTHER);
		return error(d, d->pend_off, b_next(b), PTFLOW_ERR_NO_CODE);
	case PTFLOW_BEND_INVALID:
		run(d, b, b_ninsn(b), X86_IC_OTHER);
		return error(d, d->pend_off, b_next(b), PTFLOW_ERR_BAD_INSN);
	case PTFLOW_BEND_SPLIT:
		run(d, b, b_ninsn(b), X86_IC_OTHER);
		d->ip = b_next(b);
		return STEP_OK;
	default:
		break;
	}

	uint64_t last = b_next(b) - b_last_len(b);
	int bit = 0, r;
	switch (b_iclass(b)) {
	case X86_IC_JCC:
		if (d->cfg.distnt) {
			/* DisTNT (33.3.9): no TNT; the flow is lost until the
			 * next IP packet. */
			run(d, b, b_ninsn(b), b_iclass(b));
			return lose_flow(d, last);
		}
		if (!d->tnt_n && pend_is(d, ptpkt_tip_pgd) && !pend_has_ip(d)) {
			/* 33.4.2.5: a conditional branch that leaves the filter
			 * region sends TIP.PGD without IP instead of its TNT bit. */
			run(d, b, b_ninsn(b), b_iclass(b));
			return ptflow_disable(d, PTFLOW_EV_DISABLED, false, 0);
		}
		r = take_tnt(d, last, &bit);
		if (r)
			return r;
		run(d, b, b_ninsn(b), b_iclass(b));
		d->ip = bit ? b_target(b) : b_next(b);
		return STEP_OK;
	case X86_IC_JMP_DIRECT:
	case X86_IC_CALL_DIRECT:
		run(d, b, b_ninsn(b), b_iclass(b));
		if (b_iclass(b) == X86_IC_CALL_DIRECT && !b_zlc(b))
			stack_push(d, b_next(b), 0);
		if (!d->tnt_n && pend_is(d, ptpkt_tip_pgd) &&
		    ((pend_has_ip(d) && d->pend.u.ip.ip == b_target(b)) ||
		     (!pend_has_ip(d) && erratum(d, PTFLOW_ERRATUM_SKL014)))) {
			/* A direct branch out of the filter region (33.4.2.5); its
			 * TIP.PGD may lack the IP (SKL014). */
			d->ip = b_target(b);
			return ptflow_disable(d, PTFLOW_EV_DISABLED, true, b_target(b));
		}
		d->ip = b_target(b);
		return STEP_OK;
	case X86_IC_RET_NEAR:
		if (!d->cfg.disretc && d->tnt_n) {
			/* compressed RET (33.4.2.2): one taken bit, target from
			 * the call stack */
			take_tnt(d, last, &bit);
			if (!bit)
				return error(d, d->pend_off, last, PTFLOW_ERR_RET_NOT_TAKEN);
			if (!d->sn)
				return error(d, d->pend_off, last, PTFLOW_ERR_RET_NO_CALL);
			run(d, b, b_ninsn(b), b_iclass(b));
			const struct ptflow_block *unused;
			d->ip = stack_take(d, d->mode, &unused);
			return STEP_OK;
		}
		if (!d->have_pend && !d->tnt_n)
			return STEP_DONE;
		run(d, b, b_ninsn(b), b_iclass(b));
		if (d->cfg.distnt && !d->cfg.disretc && !d->tnt_n && (d->sn || d->ret_unknown)) {
			stack_pop(d);
			return lose_flow(d, last);
		}
		stack_pop(d); /* every near RET pops (33.4.2.2), compressed or not */
		return take_tip(d, last);
	case X86_IC_CALL_INDIRECT:
		if (d->have_pend || d->tnt_n) {
			run(d, b, b_ninsn(b), b_iclass(b));
			stack_push(d, b_next(b), 0);
			return take_tip(d, last);
		}
		return STEP_DONE;
	case X86_IC_PTWRITE:
		run(d, b, b_ninsn(b), b_iclass(b));
		if (pend_is(d, ptpkt_ptw)) {
			struct ptflow_event ev;
			efipt_memset(&ev, 0, sizeof(ev));
			ev.type = PTFLOW_EV_PTWRITE;
			ev.offset = d->pend_off;
			ev.has_ip = true;
			ev.ip = last;
			ev.value = d->pend.u.ptw.payload;
			ev.aux = d->pend.u.ptw.bytes;
			d->have_pend = false;
			emit(d, &ev);
		}
		d->ip = b_next(b);
		return STEP_OK;
	default:
		if (takes_tip(b_iclass(b))) {
			/* the other indirect and far transfers (x86_pt_report()) */
			if (!d->have_pend && !d->tnt_n)
				return STEP_DONE;
			run(d, b, b_ninsn(b), b_iclass(b));
			return take_tip(d, last);
		}
		/* MOV CR3, HLT, UD*: no packet of their own */
		run(d, b, b_ninsn(b), b_iclass(b));
		d->ip = b_next(b);
		return STEP_OK;
	}
}

/* The pending packet binds to an instruction the walk has yet to reach
 * (true), or is handled where it is read (false). */
static bool pend_binds(const struct ptflow_decoder *d)
{
	switch (d->pend.type) {
	case ptpkt_fup:
		return !d->after_ovf;
	case ptpkt_tip:
	case ptpkt_tip_pgd:
		return true;
	case ptpkt_ovf:
		return false; /* handled where it is read: right after the
			       * packet before it (as libipt does) */
	case ptpkt_ptw:
		return !d->pend.u.ptw.ip;
	case ptpkt_pip:
		return true;
	default:
		return false;
	}
}

/* ptflow_walk() can go on: TNT bits, a plain TIP or a TIP.PGD to walk to */
static bool hot(const struct ptflow_decoder *d)
{
	/* DisTNT with RET compression: do_block() decides at each RET */
	return d->enabled && !(d->cfg.distnt && !d->cfg.disretc) &&
	       ((d->tnt_n && !d->have_pend) || plain_tip(d) ||
		(!d->tnt_n && pend_is(d, ptpkt_tip_pgd) &&
		 !(d->at_mov_cr3 && d->ip == d->mov_cr3_next)));	/* do_block() binds it */
}

/* Decode from the current position. Returns STEP_DONE (the trace ended) or
 * STEP_ERR (an error was reported: resync at the next PSB). */
static int step(struct ptflow_decoder *d)
{
	for (;;) {
		if (d->stop)
			return STEP_DONE;
		if (hot(d)) {
			uint64_t before = d->stat.blocks;
			ptflow_walk(d);
			if (d->stat.blocks != before)
				continue;
		}
		if (!d->tnt_n && !d->have_pend) {
			int r = ptflow_fetch(d);
			if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated)
				return STEP_DONE;
			if (r < 0)
				return packet_error(d, ptpkt_offset(&d->pk), d->ip, r);
			if (hot(d))
				continue; /* the hot loop takes it from here */
		}
		if (d->have_pend && (!d->enabled || !pend_binds(d))) {
			int r = handle_pend(d);
			if (r == -1)
				r = STEP_OK;
			if (r != STEP_OK)
				return r;
			if (!d->enabled && d->have_pend)
				continue;
			continue;
		}
		if (!d->enabled) {
			/* TNT while tracing is off */
			if (d->after_ovf && (d->cfg.distnt || erratum(d, PTFLOW_ERRATUM_SKD010))) {
				d->tnt_n = 0; /* flow unknown until an IP */
				continue;
			}
			d->tnt_n = 0;
			return error(d, d->pend_off, d->ip, PTFLOW_ERR_TNT_DISABLED);
		}
		int r = do_block(d);
		if (r != STEP_OK)
			return r;
	}
}

long ptflow_decode(struct ptflow_decoder *d, const uint8_t *buf, size_t size, uint64_t base)
{
	uint64_t errors0 = d->stat.errors;
	ptpkt_init(&d->pk, buf, size, base);
	d->pk_end = d->pk.end;
	pos_hold(d);
	reset_state(d);
	for (;;) {
		if (d->stop)
			break;
		if (ptpkt_sync_forward(&d->pk) < 0) {
			if (pos_reached(d))
				continue;
			break;
		}
		reset_state(d);
		int r = step(d);
		if (r == STEP_DONE)
			break;
	}
	ptflow_blk_flush(d);
	ptflow_counts_flush(d);
	return (long)(d->stat.errors - errors0);
}
