/* The packet writer; see pt_writer.h. Section numbers: Intel SDM Vol. 3C. */
#include "core/pt_writer.h"

#include "core/mem.h"
#include "core/x86_insn.h"

void ptwr_init(struct ptwr *w, uint8_t *buf, size_t cap, uint32_t psb_period, bool retcomp,
	       bool (*drain)(void *ctx, const uint8_t *buf, size_t n), void *drain_ctx)
{
	efipt_memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	w->drain = drain;
	w->drain_ctx = drain_ctx;
	w->psb_period = psb_period ? psb_period : 4096;
	w->retcomp = retcomp;
	w->tnt_cap = 6;
}

bool ptwr_flush(struct ptwr *w)
{
	if (!w->drain)
		return true;
	if (w->fill && !w->failed && !w->drain(w->drain_ctx, w->buf, w->fill))
		w->failed = true;
	w->fill = 0;
	return !w->failed;
}

/* With a limit (stop mode) the first packet that does not fit ends the
 * trace, as a full ToPA STOP region would: it holds whole packets only. */
bool ptwr_emit(struct ptwr *w, const struct ptpkt *p)
{
	if (w->full)
		return false;
	if (w->drain && w->cap - w->fill < PTPKT_MAX_SIZE)
		ptwr_flush(w);
	int n = ptpkt_encode(w->buf + w->fill, w->cap - w->fill, p);
	if (n <= 0)
		return false;
	if (w->limit && w->bytes + (uint64_t)n > w->limit) {
		w->full = true;
		return false;
	}
	w->fill += (size_t)n;
	w->bytes += (uint64_t)n;
	w->packets++;
	if (w->drain_at && w->bytes >= w->drain_at)
		ptwr_flush(w);
	return true;
}

static bool is_tnt(int type)
{
	return type == ptpkt_tnt8 || type == ptpkt_tnt64;
}

bool ptwr_put(struct ptwr *w, const struct ptpkt *p)
{
	if (!is_tnt(p->type))
		ptwr_flush_tnt(w);
	if (!w->in_psb && w->hooks.before)
		w->hooks.before(w->hooks.ctx, p->type);
	return ptwr_emit(w, p);
}

bool ptwr_put_simple(struct ptwr *w, int type)
{
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	return ptwr_put(w, &p);
}

/* 33.4.2.1: short TNT up to 6 bits, long TNT up to 47 */
bool ptwr_flush_tnt(struct ptwr *w)
{
	if (!w->tnt_n)
		return false;
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = w->tnt_n > 6 ? ptpkt_tnt64 : ptpkt_tnt8;
	p.u.tnt.nbits = w->tnt_n;
	p.u.tnt.bits = w->tnt_bits;
	w->tnt_n = 0;
	w->tnt_bits = 0;
	ptwr_put(w, &p);
	if (w->hooks.tnt_cap)
		w->tnt_cap = w->hooks.tnt_cap(w->hooks.ctx);
	return true;
}

bool ptwr_tnt(struct ptwr *w, bool taken)
{
	if (w->distnt)
		return false;
	w->tnt_bits = w->tnt_bits << 1 | (taken ? 1u : 0u);
	if (++w->tnt_n < w->tnt_cap)
		return false;
	return ptwr_flush_tnt(w);
}

void ptwr_ip_sized(struct ptwr *w, int type, uint64_t ip, unsigned ipc)
{
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	p.u.ip.ipc = (uint8_t)ipc;
	if (ipc) {
		p.u.ip.ip = ptpkt_ip_payload(ip, ipc);
		w->lastip = ip;
	}
	ptwr_put(w, &p);
}

/* The shortest IPBytes that reconstructs ip (Table 33-18); 4 is never
 * shorter than 3, which a canonical IP can take. */
void ptwr_ip(struct ptwr *w, int type, uint64_t ip)
{
	unsigned c = ptpkt_ip_choices(ip, w->lastip);
	unsigned ipc = c & 1u << 1 ? 1 : c & 1u << 2 ? 2 : c & 1u << 3 ? 3 : 6;
	ptwr_ip_sized(w, type, ip, ipc);
}

void ptwr_mode(struct ptwr *w, unsigned mode)
{
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = ptpkt_mode_exec;
	p.u.mode_exec.csl = mode == X86_MODE_64;
	p.u.mode_exec.csd = mode == X86_MODE_32;
	ptwr_put(w, &p);
	w->mode = (uint8_t)mode;
	w->mode_sent = true;
}

void ptwr_mode_change(struct ptwr *w, unsigned mode)
{
	if (!w->mode_sent || w->mode != mode)
		ptwr_mode(w, mode);
}

void ptwr_call(struct ptwr *w, uint64_t ret_to)
{
	w->sp = (uint8_t)((w->sp + 1) % PTWR_STACK);
	w->stack[w->sp] = ret_to;
	if (w->depth < PTWR_STACK)
		w->depth++;
}

/* 33.4.2.2: every near RET pops the stack; it is compressed only where it
 * goes to the entry popped. */
bool ptwr_ret(struct ptwr *w, uint64_t target)
{
	bool match = false;
	if (w->depth) {
		match = w->stack[w->sp] == target;
		w->sp = (uint8_t)((w->sp + PTWR_STACK - 1) % PTWR_STACK);
		w->depth--;
		/* Software changed its stack (longjmp, a pushed target): no
		 * later RET is compressed against the entries below. Decoders
		 * differ here (libipt pops only compressed RETs, the SDM's
		 * model every RET); compressing nothing older keeps both right. */
		if (!match)
			w->depth = 0;
	}
	if (!match || !w->retcomp)
		return false;
	ptwr_tnt(w, true);
	return true;
}

void ptwr_forget_calls(struct ptwr *w)
{
	w->depth = 0;
	w->sp = 0;
}

void ptwr_ovf(struct ptwr *w)
{
	ptwr_put_simple(w, ptpkt_ovf);
	ptwr_forget_calls(w);
}

bool ptwr_psb_due(const struct ptwr *w)
{
	return w->bytes - w->last_psb >= w->psb_period;
}

/* 33.3.7, 33.4.2.17: Last IP and the RET compression stack do not cross a
 * PSB; no timing packet is written before the status inside PSB+. */
void ptwr_psb_begin(struct ptwr *w)
{
	ptwr_flush_tnt(w);
	w->in_psb = true;
	ptwr_put_simple(w, ptpkt_psb);
	w->lastip = 0;
	ptwr_forget_calls(w);
}

void ptwr_psb_end(struct ptwr *w)
{
	ptwr_put_simple(w, ptpkt_psbend);
	w->in_psb = false;
	w->last_psb = w->bytes;
}
