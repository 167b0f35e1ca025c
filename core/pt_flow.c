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
#include "core/pt_flow.h"

#include "core/mem.h"
#include "core/x86_insn.h"

enum { STEP_OK = 0, STEP_DONE = 1, STEP_ERR = 2 };

/* ptflow_block fields (see the layout in pt_flow.h) */
_Static_assert(PTFLOW_BEND_BRANCH == 0, "info & 0x7f is the class of a block ending in a branch");
static inline unsigned b_size(const struct ptflow_block *b) { return b->szl & 0x3ff; }
_Static_assert(PTFLOW_BLOCK_MAX * 15 < 1024, "block size field is 10 bits");
/* the block may hold a WRMSR (0F 30): find_wrmsr() has to look */
static inline bool b_wrmsr(const struct ptflow_block *b) { return (b->szl >> 10) & 1; }
static inline unsigned b_last_len(const struct ptflow_block *b) { return b->szl >> 12; }
static inline unsigned b_ninsn(const struct ptflow_block *b) { return b->nm & 63; }
static inline unsigned b_mode(const struct ptflow_block *b) { return b->nm >> 6; }
static inline unsigned b_iclass(const struct ptflow_block *b) { return b->info & 31; }
static inline unsigned b_bend(const struct ptflow_block *b) { return (b->info >> 5) & 3; }
static inline bool b_zlc(const struct ptflow_block *b) { return b->info >> 7; }
static inline uint64_t b_next(const struct ptflow_block *b) { return b->ip + b_size(b); }
static inline uint64_t b_target(const struct ptflow_block *b)
{
	uint64_t t = b_next(b) + (uint64_t)(int64_t)b->disp;
	return b_mode(b) == X86_MODE_64 ? t : (uint32_t)t;
}

/*
 * c_hk: how the hot loop takes a chain (64-bit code only: the mode is part
 * of the value, so other modes fall through to the general walk):
 * HK_JCC / HK_RET the last branch is a Jcc / near RET, anything else is
 * HK_OTHER; HK_PUSH a CALL in the chain pushes the return address c_retl
 * links to.
 */
enum { HK_OTHER = 0, HK_JCC = 1, HK_RET = 2, HK_PUSH = 1 << 5 };
#define HK_MODE(m) ((unsigned)(m) << 3)
#define HK_JCC64 (HK_JCC | HK_MODE(X86_MODE_64))
#define HK_RET64 (HK_RET | HK_MODE(X86_MODE_64))
static inline bool c_push(const struct ptflow_block *b) { return b->c_hk & HK_PUSH; }

/* Why the pending FUP was sent (the packet before it, 33.4.2.6 / 33.7). */
enum fup_kind {
	FUP_ASYNC,	/* interrupt, exception, async disable: TIP/TIP.PGD follows */
	FUP_STATUS,	/* PSB+: the current IP, nothing happens there */
	FUP_BOUND,	/* MODE.TSX, PTW, EXSTOP, CFE: an event at that IP */
	FUP_TSX_ABORT,	/* MODE.TSX with Abort: a TIP to the abort handler follows */
};

/* ---- errata -------------------------------------------------------------- */

uint32_t ptflow_errata_for_cpu(unsigned family, unsigned model, int stepping)
{
	(void)stepping; /* none of the supported errata depends on it */
	if (family != 6)
		return 0;
	/* Which CPU has which erratum: Intel specification updates for each
	 * family (the erratum names are their IDs); same selection as
	 * libipt's pt_cpu_errata(). */
	switch (model) {
	case 0x3d: case 0x47: case 0x4f: case 0x56: /* Broadwell */
		return PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_BDM64;
	case 0x4e: case 0x5e: case 0x8e: case 0x9e: /* Skylake, Kaby/Coffee Lake */
	case 0xa5: case 0xa6: /* Comet Lake */
		return PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKD007 |
		       PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_SKD010 |
		       PTFLOW_ERRATUM_SKL014 | PTFLOW_ERRATUM_SKL168;
	case 0x55: /* Skylake-SP, Cascade/Cooper Lake */
	case 0x6a: case 0x6c: /* Ice Lake-SP/D */
	case 0x8f: /* Sapphire Rapids */
		return PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKL014 |
		       PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_SKZ84;
	case 0x66: case 0x7d: case 0x7e: /* Cannon Lake, Ice Lake */
	case 0x8c: case 0x8d: /* Tiger Lake */
	case 0xa7: case 0xa8: /* Rocket Lake */
		return PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKL014 |
		       PTFLOW_ERRATUM_SKD022;
	case 0x97: case 0x9a: case 0xbf: /* Alder Lake */
		return PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKL014 |
		       PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_APL11;
	case 0x5c: case 0x5f: /* Apollo Lake, Denverton */
		return PTFLOW_ERRATUM_APL12 | PTFLOW_ERRATUM_APL11;
	case 0x7a: case 0x86: case 0x96: case 0x9c: /* Gemini Lake, Snow Ridge,
						      * Elkhart Lake, Jasper Lake */
		return PTFLOW_ERRATUM_APL11;
	default:
		return 0;
	}
}

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

/* ---- blocks -------------------------------------------------------------- */

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
	b->szl = (uint16_t)((cur - ip) | wrmsr << 10 | last_len << 12);
	b->nm = (uint8_t)(ninsn | (unsigned)mode << 6);
	b->info = (uint8_t)(iclass | bend << 5 | zlc << 7);
	b->link[0] = b->link[1] = 0;
	b->c_retl = 0;
	b->c_ninsn = 0; /* no chain: the cache links blocks (chain_build()) */
	b->c_info = PTFLOW_BEND_NOCODE << 5;
	b->c_nbr = 0;
	b->c_hk = HK_OTHER;
	return ret;
}

/*
 * Index slot of an address: blocks close in the code are close in the
 * index; a code region larger than 4 x the slots wraps around.
 */
static inline uint32_t slot(uint64_t ip, uint32_t mask)
{
	return (uint32_t)((ip >> 2) ^ (ip >> 24)) & mask;
}

/* An entry made for a link before its block is decoded (block_get() does
 * that when the walk gets there). */
#define STUB_SZL 0xffff
_Static_assert(PTFLOW_BLOCK_MAX * 15 < 1023, "no block has the stub's size");
static inline bool b_stub(const struct ptflow_block *b) { return b->szl == STUB_SZL; }

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

void ptflow_cache_flush(struct ptflow_decoder *d)
{
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
	b->szl = STUB_SZL;
	b->nm = (uint8_t)(mode << 6);
	b->c_info = PTFLOW_BEND_NOCODE << 5;
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

/*
 * Make b's chain (see pt_flow.h): the blocks after the first are taken from
 * the cache or decoded aside; then link b to the entries where its last
 * branch goes (at most two new entries: block_get() made room).
 */
static void chain_build(struct ptflow_decoder *d, struct ptflow_block *b)
{
	struct ptflow_block last = *b, next;
	unsigned mode = b_mode(b), ninsn = b_ninsn(b), nblk = 1;
	unsigned nbr = b_bend(b) == PTFLOW_BEND_BRANCH, push = 0;
	uint64_t ret = 0;

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
		else if (ic == X86_IC_CALL_DIRECT && (b_zlc(&last) || !push))
			to = b_target(&last), call = !b_zlc(&last);
		else
			break;
		const struct ptflow_block *nb = cache_find(d, to, mode);
		if (!nb || b_stub(nb)) {
			d->stat.decoded++;
			ptflow_block_decode(&d->cfg.image, to, (uint8_t)mode, &next, NULL);
			nb = &next;
		}
		if (b_bend(nb) > PTFLOW_BEND_SPLIT || ninsn + b_ninsn(nb) > 255)
			break;
		if (call)
			ret = b_next(&last), push = 1;
		ninsn += b_ninsn(nb);
		nbr += b_bend(nb) == PTFLOW_BEND_BRANCH;
		last = *nb;
	}
	unsigned lic = b_iclass(&last), lbend = b_bend(&last);
	bool branch = lbend == PTFLOW_BEND_BRANCH;
	/* where the last branch goes on: its fall-through (also the return
	 * address of a CALL), its direct target */
	if (lbend == PTFLOW_BEND_SPLIT ||
	    (branch && lic != X86_IC_JMP_DIRECT && lic != X86_IC_JMP_INDIRECT &&
	     lic != X86_IC_RET_NEAR && lic != X86_IC_FAR_JMP && lic != X86_IC_FAR_RET &&
	     lic != X86_IC_IRET))
		b->link[0] = cache_link(d, b_next(&last), mode);
	if (branch && (lic == X86_IC_JCC || lic == X86_IC_JMP_DIRECT || lic == X86_IC_CALL_DIRECT))
		b->link[1] = cache_link(d, b_target(&last), mode);
	b->c_retl = push ? cache_link(d, ret, mode) : 0;
	b->c_ninsn = (uint8_t)ninsn;
	b->c_info = last.info;
	b->c_nbr = (uint8_t)nbr;
	unsigned hk = HK_OTHER;
	if (last.info == X86_IC_JCC) /* bend BRANCH, not a zero-length CALL */
		hk = HK_JCC;
	else if (last.info == X86_IC_RET_NEAR)
		hk = HK_RET;
	b->c_hk = (uint8_t)(hk | HK_MODE(mode) | (push ? HK_PUSH : 0));
}

/* The decoded block at ip in the current mode: from the cache, decoded
 * into it, or (no cache) decoded into tmp. */
static const struct ptflow_block *block_get(struct ptflow_decoder *d, uint64_t ip,
					    struct ptflow_block *tmp)
{
	struct ptflow_block *b = cache_find(d, ip, d->mode);
	if (b && !b_stub(b))
		return b;
	d->stat.decoded++;
	if (!d->nents) {
		ptflow_block_decode(&d->cfg.image, ip, d->mode, tmp, NULL);
		return tmp;
	}
	if (d->used + 4 > d->nents) { /* full: start over (a block, 3 links) */
		ptflow_cache_flush(d);
		b = NULL;
	}
	if (!b)
		b = cache_add(d, ip, d->mode);
	ptflow_block_decode(&d->cfg.image, ip, d->mode, b, NULL);
	chain_build(d, b);
	return b;
}

/* The entry a link names. */
static inline const struct ptflow_block *linked(const struct ptflow_decoder *d, uint32_t l)
{
	return &d->ents[l - 1];
}

/* ---- output -------------------------------------------------------------- */

static void emit(struct ptflow_decoder *d, struct ptflow_event *ev)
{
	d->stat.events++;
	/* the estimate after the timing packets read so far (33.8.3) */
	ev->has_time = pttime_get(&d->time, &ev->tsc, &ev->lost_mtc, &ev->lost_cyc);
	if (d->sink.event)
		d->sink.event(d->sink.ctx, ev);
}

static void event(struct ptflow_decoder *d, int type, uint64_t off, bool has_ip, uint64_t ip)
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
static int report(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err,
		  int pkt_err)
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
	d->stat.errors++;
	d->stat.events--; /* counted as an error, not an event */
	emit(d, &ev);
	return STEP_ERR;
}

/* The flow decoder's error err at trace offset off, at ip; STEP_ERR. */
static int error(struct ptflow_decoder *d, uint64_t off, uint64_t ip, enum ptflow_err err)
{
	return report(d, off, ip, err, 0);
}

/* The packet decoder's error r (negative ptpkt_error); STEP_ERR. */
static int packet_error(struct ptflow_decoder *d, uint64_t off, uint64_t ip, int r)
{
	return report(d, off, ip, PTFLOW_ERR_PACKET, -r);
}

static void deliver(struct ptflow_decoder *d, const struct ptflow_block *b, uint32_t n,
		    uint8_t last_iclass);

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
		deliver(d, b, n, last_iclass);
}

/* The first n instructions of b to the run callback. */
static void deliver(struct ptflow_decoder *d, const struct ptflow_block *b, uint32_t n,
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
static void deliver_chain(struct ptflow_decoder *d, const struct ptflow_block *b,
			  uint8_t last_iclass)
{
	struct ptflow_block blk = *b;
	for (unsigned left = b->c_ninsn;;) {
		unsigned n = b_ninsn(&blk);
		if (n >= left) {
			deliver(d, &blk, left, last_iclass);
			return;
		}
		deliver(d, &blk, n, (uint8_t)b_iclass(&blk));
		left -= n;
		uint64_t to = b_bend(&blk) == PTFLOW_BEND_SPLIT ? b_next(&blk) : b_target(&blk);
		ptflow_block_decode(&d->cfg.image, to, (uint8_t)b_mode(&blk), &blk, NULL);
	}
}

/* ---- state ---------------------------------------------------------------- */

static void stack_reset(struct ptflow_decoder *d)
{
	d->sp = 0;
	d->sn = 0;
	d->ret_unknown = false;
}

/* Near CALL: push the return address (and its cache entry, if known); a
 * full stack drops its oldest entry. */
static void stack_push(struct ptflow_decoder *d, uint64_t ret, uint32_t link)
{
	d->stack[d->sp] = ret;
	d->stack_link[d->sp] = link;
	d->sp = (uint8_t)((d->sp + 1) % PTFLOW_STACK);
	if (d->sn < PTFLOW_STACK)
		d->sn++;
}

/* Near RET: drop the youngest entry, if any. */
static void stack_pop(struct ptflow_decoder *d)
{
	if (!d->sn)
		return;
	d->sp = (uint8_t)((d->sp + PTFLOW_STACK - 1) % PTFLOW_STACK);
	d->sn--;
}

/* Compressed RET: take the youngest return address (the stack has one);
 * *e gets its cache entry when the push knew it and it is in mode. */
static inline uint64_t stack_take(struct ptflow_decoder *d, unsigned mode,
				  const struct ptflow_block **e)
{
	d->sp = (uint8_t)((d->sp + PTFLOW_STACK - 1) % PTFLOW_STACK);
	d->sn--;
	uint32_t l = d->stack_link[d->sp];
	*e = l && b_mode(linked(d, l)) == mode ? linked(d, l) : NULL;
	return d->stack[d->sp];
}

static void reset_state(struct ptflow_decoder *d)
{
	d->have_pend = false;
	d->tnt_n = 0;
	d->enabled = false;
	d->after_ovf = false;
	d->gap = false;
	d->have_next_mode = false;
	d->fup_kind = FUP_ASYNC;
	d->steps = 0;
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

static uint8_t mode_of(const struct ptpkt *p)
{
	/* MODE.Exec (33.4.2.8): CS.L selects 64-bit, else CS.D 32/16. */
	if (p->u.mode_exec.csl)
		return X86_MODE_64;
	return p->u.mode_exec.csd ? X86_MODE_32 : X86_MODE_16;
}

static void timing(struct ptflow_decoder *d, const struct ptpkt *p)
{
	pttime_packet(&d->time, p);
}

/* Stream offset of the next packet (ptpkt_offset(), inline). */
static inline uint64_t pk_offset(const struct ptflow_decoder *d)
{
	return d->pk.base + (uint64_t)(d->pk.pos - d->pk.begin);
}

static const uint8_t *raw_at(const struct ptflow_decoder *d, uint64_t off)
{
	return d->pk.begin + (off - d->pk.base);
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
	static const uint8_t ipkind[32] = {
		[0x01] = ptpkt_tip_pgd, [0x0d] = ptpkt_tip,
		[0x11] = ptpkt_tip_pge, [0x1d] = ptpkt_fup,
	};
	const uint8_t *pos = d->pk.pos;
	unsigned b = *pos, ipc = b >> 5, nb = ipbytes[ipc], kind = ipkind[b & 0x1f];
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
	if (*pos != 0x99 || d->pk.end - pos < 2 || (pos[1] >> 5))
		return false;
	unsigned m = pos[1];
	d->pk.pos = pos + 2;
	d->stat.packets++;
	d->steps = 0;
	d->pend.type = ptpkt_mode_exec;
	d->pend.size = 2;
	d->pend.u.mode_exec.csl = m & 1;
	d->pend.u.mode_exec.csd = (m >> 1) & 1;
	d->pend.u.mode_exec.iflag = (m >> 2) & 1;
	d->pend_off = d->pk.base + (uint64_t)(pos - d->pk.begin);
	d->have_pend = true;
	return true;
}

/*
 * SKZ84: with TSC offsetting or scaling in a VMX guest every TMA is corrupt
 * and followed by one bogus byte: skip both (true) when the CPU has it.
 * TMA comes right after the TSC, so mostly inside PSB+.
 */
static bool skz84_skip(struct ptflow_decoder *d, uint64_t off, const struct ptpkt *p)
{
	if (!(d->cfg.errata & PTFLOW_ERRATUM_SKZ84))
		return false;
	uint64_t next = off + p->size + 1;
	if (next <= d->pk.base + (uint64_t)(d->pk.end - d->pk.begin))
		ptpkt_sync_set(&d->pk, next);
	return true;
}

/*
 * Read packets until a TNT (bits loaded) or a packet that matters to the
 * flow (d->pend). IP packets are reconstructed against Last IP here, in
 * stream order (33.4.2.2, Table 33-18).
 */
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
	if ((c & 1) || c <= 2)
		return 0;
	unsigned n = 30u - (unsigned)__builtin_clz(c);
	*bits = (c >> 1) & ((1u << n) - 1);
	d->pk.pos = pos + 1;
	d->stat.packets++;
	d->pend_off = d->pk.base + (uint64_t)(pos - d->pk.begin);
	return n;
}

static int fetch(struct ptflow_decoder *d)
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
			/* SKD007: an OVF may replace the rest of a multi-byte CYC;
			 * the decoder then reads 02 F3 as CYC bytes. Cut the CYC
			 * after its first byte and decode the OVF. */
			if ((d->cfg.errata & PTFLOW_ERRATUM_SKD007) && p.size >= 2) {
				const uint8_t *q = raw_at(d, off);
				bool cut = false;
				for (unsigned i = 1; i < p.size; i++)
					if (q[i] == 0x02 && q + i + 1 < d->pk.end && q[i + 1] == 0xf3) {
						ptpkt_sync_set(&d->pk, off + i);
						cut = true;
						break;
					}
				if (cut)
					continue;
			}
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

static bool pend_is(const struct ptflow_decoder *d, int type)
{
	return d->have_pend && d->pend.type == type;
}

static bool pend_has_ip(const struct ptflow_decoder *d)
{
	return d->pend.u.ip.ipc != 0;
}

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
static void enable_at(struct ptflow_decoder *d, uint64_t ip, uint64_t off)
{
	resume_at(d, ip);
	/* 33.4.2.2: RETs are never compressed across PacketEn=0, so no CALL
	 * from before the enable can match one */
	stack_reset(d);
	apply_mode(d, off);
	event(d, PTFLOW_EV_ENABLED, off, true, d->ip);
}

static int disable(struct ptflow_decoder *d, int type, bool has_ip, uint64_t ip)
{
	d->enabled = false;
	d->have_pend = false;
	event(d, type, d->pend_off, has_ip, ip);
	return STEP_OK;
}

/* PSB+ (33.3.7, 33.4.2.17): status only. Reads up to PSBEND. */
static int psb_plus(struct ptflow_decoder *d)
{
	uint64_t psb_off = d->pend_off;
	bool have_fup = false;
	uint64_t fup_ip = 0;

	d->have_pend = false;
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
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated)
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
		event(d, PTFLOW_EV_OVERFLOW, off, false, 0);
		return STEP_OK;
	case ptpkt_tip_pge:
		d->have_pend = false;
		if (!pend_has_ip(d))
			return error(d, off, d->ip, PTFLOW_ERR_PGE_NO_IP);
		if (d->enabled && d->walked)
			return error(d, off, d->ip, PTFLOW_ERR_PGE_ENABLED);
		if (d->enabled && !(d->cfg.errata & (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_APL12)))
			return error(d, off, d->ip, PTFLOW_ERR_PGE_ENABLED);
		enable_at(d, p->u.ip.ip, off);
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
		    ((d->cfg.errata & PTFLOW_ERRATUM_SKD010) || d->cfg.distnt)) {
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
			return disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), p->u.ip.ip);
		}
		if (d->after_ovf && (d->cfg.errata & PTFLOW_ERRATUM_APL11)) {
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
 * "PIP, VMCS, MODE.Exec in any order"). */
static int fetch_flow(struct ptflow_decoder *d)
{
	for (;;) {
		if (d->tnt_n || d->have_pend)
			return 0;
		int r = fetch(d);
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

/* The walk reached the IP of the pending FUP. */
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
			const struct ptflow_block *b = block_get(d, fip, &tmp);
			if (b_ninsn(b) == 1 && (b_iclass(b) == X86_IC_VMLAUNCH ||
					      b_iclass(b) == X86_IC_VMRESUME)) {
				run(d, b, 1, b_iclass(b));
				return disable(d, PTFLOW_EV_DISABLED, false, 0);
			}
		}
		return disable(d, PTFLOW_EV_ASYNC_DISABLED, true, fip);
	}
	if (kind == FUP_ASYNC || kind == FUP_TSX_ABORT)
		return error(d, off, fip, PTFLOW_ERR_FUP_NO_TIP);
	return STEP_OK;
}

/* Consume the TIP/TIP.PGD for an indirect or far transfer at ip. */
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
		return disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), d->pend.u.ip.ip);
	if (!d->have_pend)
		return STEP_DONE;
	return error(d, d->pend_off, ip, PTFLOW_ERR_NEED_TIP);
}

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

/* Branches that consume a TNT bit or a TIP. */
static bool needs_packet(unsigned iclass)
{
	switch (iclass) {
	case X86_IC_OTHER:
	case X86_IC_JMP_DIRECT:
	case X86_IC_CALL_DIRECT:
	case X86_IC_PTWRITE:
	case X86_IC_MOV_CR3:
	case X86_IC_HLT:
	case X86_IC_UD:
		return false;
	default:
		return true;
	}
}

/* Branches whose target comes in a TIP (or that a TIP.PGD stops) when no
 * TNT bit is pending: take_tip() in do_block(). */
static bool takes_tip(unsigned iclass)
{
	return needs_packet(iclass) && iclass != X86_IC_JCC;
}

/*
 * DisTNT (33.3.9): a Jcc, or a RET that may have been compressed, writes
 * no TNT bit; the flow is lost at last until the next IP packet. A RET
 * may have been compressed if the call stack has an entry for it or is
 * unknown (calls ran in a gap): with RET compression on, such a RET sends
 * a TIP only when its target is not the call's next IP, so a decoder
 * cannot tell which it was (the SDM advises DisRETC with DisTNT).
 */
static int lose_flow(struct ptflow_decoder *d, uint64_t last)
{
	event(d, PTFLOW_EV_GAP, d->pend_off, true, last);
	d->enabled = false;
	d->after_ovf = true;
	d->gap = true;
	d->ret_unknown = true;
	return STEP_OK;
}

/* Walk one block from d->ip. */
static int do_block(struct ptflow_decoder *d)
{
	struct ptflow_block tmp;
	const struct ptflow_block *b = block_get(d, d->ip, &tmp);

	d->stat.blocks++;
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
			return disable(d, PTFLOW_EV_DISABLED, false, 0);
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
		if (d->fup_kind == FUP_TSX_ABORT && (d->cfg.errata & PTFLOW_ERRATUM_BDM64) &&
		    (b_bend(b) != PTFLOW_BEND_BRANCH || needs_packet(b_iclass(b)))) {
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
			return disable(d, PTFLOW_EV_DISABLED, false, 0);
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
		     (!pend_has_ip(d) && (d->cfg.errata & PTFLOW_ERRATUM_SKL014)))) {
			/* A direct branch out of the filter region (33.4.2.5); its
			 * TIP.PGD may lack the IP (SKL014). */
			d->ip = b_target(b);
			return disable(d, PTFLOW_EV_DISABLED, true, b_target(b));
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
	case X86_IC_JMP_INDIRECT:
	case X86_IC_FAR_JMP:
	case X86_IC_FAR_CALL:
	case X86_IC_FAR_RET:
	case X86_IC_INT:
	case X86_IC_IRET:
	case X86_IC_SYSCALL:
	case X86_IC_SYSRET:
	case X86_IC_SYSENTER:
	case X86_IC_SYSEXIT:
	case X86_IC_VMLAUNCH:
	case X86_IC_VMRESUME:
	case X86_IC_VMCALL:
		if (!d->have_pend && !d->tnt_n)
			return STEP_DONE;
		run(d, b, b_ninsn(b), b_iclass(b));
		return take_tip(d, last);
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
		/* MOV CR3, HLT, UD*: no packet of their own */
		run(d, b, b_ninsn(b), b_iclass(b));
		d->ip = b_next(b);
		return STEP_OK;
	}
}

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

/* The pending packet is a TIP with an IP that nothing else waits for. */
static bool plain_tip(const struct ptflow_decoder *d)
{
	return d->have_pend && d->pend.type == ptpkt_tip && d->pend.u.ip.ipc &&
	       !d->have_next_mode;
}

/*
 * The common case as tight as it gets: 64-bit code, no packet pending, and
 * chains that end in a Jcc or a compressed RET, so that every step takes
 * one TNT bit; short TNT packets are read here. It stops before the first
 * chain it cannot take as it is (walk() goes on from there). As a step
 * takes at most 255 instructions, the step limit is checked per TNT packet,
 * not per step.
 */
static inline __attribute__((always_inline)) void
lean_walk(struct ptflow_decoder *d, uint64_t *ipp, const struct ptflow_block **ep, uint64_t *tntp,
	  unsigned *np, uint64_t *stepsp, uint64_t *insnsp, uint64_t *branchesp, uint64_t *blocksp,
	  const bool sink)
{
	uint64_t ip = *ipp, tnt = *tntp, steps = *stepsp, insns = 0, since = 0;
	uint64_t branches = 0, blocks = 0;
	unsigned n = *np;
	/* the entry at ip: from here on the links lead the way */
	const struct ptflow_block *e = *ep ? *ep : cache_find(d, ip, X86_MODE_64);

	*ep = e;
	/* DisTNT: a Jcc takes no bit (do_block() loses the flow there) */
	if (!e || d->cfg.distnt || steps + 255u * n > d->cfg.max_steps)
		return;
	for (;;) {
		if (!n) {
			if (!(n = short_tnt(d, &tnt)))
				break;
			steps = 0;
			since = insns;
			if (255u * n > d->cfg.max_steps)
				break; /* walk() takes these bits step by step */
		}
		const struct ptflow_block *cur = e;
		unsigned hk = cur->c_hk; /* a stub's is HK_OTHER */
		if ((hk & ~HK_PUSH) == HK_JCC64) {
			if (hk & HK_PUSH)
				stack_push(d, linked(d, cur->c_retl)->ip, cur->c_retl);
			n--;
			e = linked(d, cur->link[(tnt >> n) & 1]);
		} else if ((hk & ~HK_PUSH) == HK_RET64 && (tnt >> (n - 1)) & 1 &&
			   (d->sn || hk & HK_PUSH) && !d->cfg.disretc) {
			/* compressed RET: a taken bit, the target from the stack */
			if (hk & HK_PUSH)
				stack_push(d, linked(d, cur->c_retl)->ip, cur->c_retl);
			n--;
			ip = stack_take(d, X86_MODE_64, &e);
			if (!e)
				e = cache_find(d, ip, X86_MODE_64);
		} else {
			break;
		}
		insns += cur->c_ninsn;
		branches += cur->c_nbr;
		blocks++;
		if (sink)
			deliver_chain(d, cur, (uint8_t)(cur->c_info & 31));
		if (!e)
			goto out; /* returned to code not in the cache */
	}
	ip = e->ip;
out:
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
 * The hot loop. While the flow needs only TNT bits and plain TIPs, follow
 * conditional branches, direct jumps and calls, compressed RETs and
 * indirect jumps, calls and RETs block by block, reading TNT and TIP
 * packets as they are needed, without leaving this loop. Anything else
 * (another packet, an error, a far transfer, PTWRITE, the step limit) goes
 * back to step()/do_block(), which handle every case; this loop only ever
 * stops before a block, never inside one.
 */
static inline __attribute__((always_inline)) void walk(struct ptflow_decoder *d, const bool sink)
{
	uint64_t ip = d->ip, tnt = d->tnt_bits, insns = 0, branches = 0, blocks = 0;
	uint64_t steps = d->steps, max_steps = d->cfg.max_steps;
	unsigned n = d->tnt_n, mode = d->mode;
	uint64_t enabled_at = 0; /* blocks walked when tracing was last enabled */
	struct ptflow_block tmp;
	const struct ptflow_block *e = NULL; /* the entry at ip, if known */

	if (!d->nents)
		return;
	for (;;) {
		if (!n && !d->have_pend) {
			/* the next packet: a short TNT or a TIP right here */
			if ((n = short_tnt(d, &tnt))) {
				steps = 0;
			} else if (d->pk.sync && !d->pk.block && d->pk.pos < d->pk.end && ip_packet(d)) {
				steps = 0;
			} else {
				d->tnt_n = 0;
				d->steps = steps;
				if (fetch(d) < 0)
					break;
				steps = d->steps;
				n = d->tnt_n;
				tnt = d->tnt_bits;
			}
		}
		if (mode == X86_MODE_64 && !d->have_pend && n) {
			lean_walk(d, &ip, &e, &tnt, &n, &steps, &insns, &branches, &blocks, sink);
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
		if (!b || b_stub(b)) {
			d->ip = ip;
			b = block_get(d, ip, &tmp);
			if (b == &tmp)
				break;
		}
		/* the step: the chain from ip; with a TIP.PGD pending only the
		 * block (a direct branch in the chain may be where tracing
		 * stops) */
		unsigned cn, ci, nbr;
		bool push;
		uint64_t ft, tg;
		if (!pgd) {
			cn = b->c_ninsn;
			ci = b->c_info;
			nbr = b->c_nbr;
			push = c_push(b);
			ft = b->link[0] ? linked(d, b->link[0])->ip : 0;
			tg = b->link[1] ? linked(d, b->link[1])->ip : 0;
		} else {
			cn = b_ninsn(b);
			ci = b->info;
			nbr = b_bend(b) == PTFLOW_BEND_BRANCH;
			push = false;
			ft = b_next(b);
			tg = ft + (uint64_t)(int64_t)b->disp;
		}
		if (steps + cn > max_steps)
			break;
		if (mode != X86_MODE_64) { /* as b_target(): the block has this mode */
			ft = (uint32_t)ft;
			tg = (uint32_t)tg;
		}
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
			if (sink)
				deliver(d, b, cn, (uint8_t)ic);
			d->ip = ip;
			disable(d, PTFLOW_EV_DISABLED, pend_has_ip(d), d->pend.u.ip.ip);
			/* the usual way back: MODE.Exec, TIP.PGE (33.7) */
			for (;;) {
				d->tnt_n = 0;
				d->steps = steps;
				if (!(d->pk.sync && !d->pk.block && d->pk.pos < d->pk.end &&
				      (mode_exec_packet(d) || ip_packet(d)))) {
					int r = fetch(d);
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
				enable_at(d, d->pend.u.ip.ip, d->pend_off);
				break;
			}
			/* back after the SYSCALL (or whatever left): a link */
			if (b->link[0] && d->mode == mode && linked(d, b->link[0])->ip == d->ip)
				e = linked(d, b->link[0]);
			ip = d->ip;
			mode = d->mode;
			enabled_at = blocks;
			continue;
		}
		/* what the last branch needs; nothing changes before all is there */
		bool push_last = false;
		int pop = 0; /* 1: RET with a TIP, 2: compressed RET */
		unsigned nl = 2; /* the link to the next entry: 0, 1 or none */
		if ((ci & 0x7f) == X86_IC_JCC) { /* bend BRANCH, the usual */
			if (!n || d->cfg.distnt)
				break; /* DisTNT: do_block() loses the flow here */
			n--;
			nl = (tnt >> n) & 1;
			next = nl ? tg : ft;
		} else if (bend == PTFLOW_BEND_SPLIT) {
			next = ft;
			nl = 0;
		} else if (bend != PTFLOW_BEND_BRANCH) {
			break;
		} else if (ic == X86_IC_JMP_DIRECT) {
			next = tg;
			nl = 1;
		} else if (ic == X86_IC_CALL_DIRECT) {
			push_last = !(ci >> 7); /* not a zero-length CALL */
			next = tg;
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
		} else {
			break;
		}
		/* in execution order: the CALL inside the chain, then the last branch */
		if (push) {
			stack_push(d, linked(d, b->c_retl)->ip, b->c_retl);
		}
		if (push_last)
			stack_push(d, ft, b->link[0]);
		if (pop == 2) {
			next = stack_take(d, mode, &e);
		} else if (pop) {
			stack_pop(d);
		}
		steps += cn;
		insns += cn;
		blocks++;
		branches += nbr;
		if (sink && pgd)
			deliver(d, b, cn, (uint8_t)ic);
		else if (sink)
			deliver_chain(d, b, (uint8_t)ic);
		if (nl < 2 && !pgd)
			e = linked(d, b->link[nl]);
		ip = next;
	}
	d->ip = ip;
out:
	if (blocks != enabled_at)
		d->walked = true;
	d->steps = steps;
	d->tnt_n = (uint8_t)n;
	d->tnt_bits = tnt;
	d->stat.insns += insns;
	d->stat.branches += branches;
	d->stat.blocks += blocks;
}

/* the hot loop without a run callback (--stat, the benchmark) has no
 * per-block test for one */
static void fast_walk(struct ptflow_decoder *d)
{
	if (d->sink.run)
		walk(d, true);
	else
		walk(d, false);
}

/* fast_walk() can go on: TNT bits, a plain TIP or a TIP.PGD to walk to */
static bool hot(const struct ptflow_decoder *d)
{
	/* DisTNT with RET compression: do_block() decides at each RET */
	return d->enabled && !(d->cfg.distnt && !d->cfg.disretc) &&
	       ((d->tnt_n && !d->have_pend) || plain_tip(d) ||
		(!d->tnt_n && pend_is(d, ptpkt_tip_pgd)));
}

static int step(struct ptflow_decoder *d)
{
	for (;;) {
		if (hot(d)) {
			uint64_t before = d->stat.blocks;
			fast_walk(d);
			if (d->stat.blocks != before)
				continue;
		}
		if (!d->tnt_n && !d->have_pend) {
			int r = fetch(d);
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
			if (d->after_ovf && (d->cfg.errata & PTFLOW_ERRATUM_SKD010 || d->cfg.distnt)) {
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
	reset_state(d);
	for (;;) {
		if (ptpkt_sync_forward(&d->pk) < 0)
			break;
		reset_state(d);
		int r = step(d);
		if (r == STEP_DONE)
			break;
	}
	return (long)(d->stat.errors - errors0);
}
