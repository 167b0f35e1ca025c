/*
 * The packet writer (core/pt_writer.c): what it writes is read back with
 * efipt's packet decoder and Last IP reconstruction, and each rule is
 * checked on the packets: TNT batching and its flush before other packets,
 * IP compression (the shortest IPBytes, every IP reconstructed), RET
 * compression (matching RETs as TNT bits, a mismatch turns it off for what
 * was pushed before), PSB+ resets and the period, the drain and the limit.
 */
#include <string.h>

#include "check.h"
#include "core/pt_pkt.h"
#include "core/pt_writer.h"
#include "core/x86_insn.h"

static uint8_t trace[1 << 16];

struct pk {
	int type;
	uint64_t ip;		/* reconstructed, IP packets */
	unsigned ipc, nbits;
	uint64_t bits;
};
static struct pk pk[4096];
static size_t npk;

/* decode trace[0..len) into pk[]; false on any decode error */
static bool read_back(const uint8_t *buf, size_t len)
{
	struct ptpkt_decoder d;
	struct ptpkt_lastip l;
	ptpkt_init(&d, buf, len, 0);
	ptpkt_lastip_init(&l);
	npk = 0;
	if (ptpkt_sync_forward(&d))
		return false;
	for (;;) {
		struct ptpkt p;
		int n = ptpkt_next(&d, &p);
		if (n == -ptpkt_err_eos)
			return true;
		if (n < 0 || npk == sizeof(pk) / sizeof(pk[0]))
			return false;
		struct pk *k = &pk[npk++];
		memset(k, 0, sizeof(*k));
		k->type = p.type;
		if (p.type == ptpkt_tnt8 || p.type == ptpkt_tnt64) {
			k->nbits = p.u.tnt.nbits;
			k->bits = p.u.tnt.bits;
		}
		uint64_t ip = 0;
		if (p.type == ptpkt_tip || p.type == ptpkt_fup || p.type == ptpkt_tip_pge ||
		    p.type == ptpkt_tip_pgd)
			k->ipc = p.u.ip.ipc;
		if (ptpkt_lastip_apply(&l, &p, &ip) == 1)
			k->ip = ip;
	}
}

static size_t count(int type)
{
	size_t n = 0;
	for (size_t i = 0; i < npk; i++)
		n += pk[i].type == type;
	return n;
}

static void start(struct ptwr *w, bool retcomp)
{
	ptwr_init(w, trace, sizeof(trace), 4096, retcomp, NULL, NULL);
	ptwr_psb_begin(w);
	ptwr_mode(w, X86_MODE_64);
	ptwr_psb_end(w);
}

static void test_tnt(void)
{
	struct ptwr w;
	start(&w, true);
	for (int i = 0; i < 13; i++)
		ptwr_tnt(&w, i % 3 == 0);
	ptwr_ip(&w, ptpkt_tip, 0x401000);
	CHECK(read_back(trace, w.fill), "tnt: the trace decodes");
	/* 13 bits: two full short TNTs of 6, then the 13th flushed by the TIP */
	CHECK(count(ptpkt_tnt8) == 3 && pk[3].nbits == 6 && pk[4].nbits == 6 && pk[5].nbits == 1,
	      "tnt: six bits to a short TNT, the rest before the next packet");
	CHECK(pk[3].bits == 0x24 && pk[4].bits == 0x24 && pk[5].bits == 1,
	      "tnt: bits oldest first, as executed");
	CHECK(pk[6].type == ptpkt_tip && pk[6].ip == 0x401000, "tnt: then the TIP");
	ptwr_init(&w, trace, sizeof(trace), 4096, true, NULL, NULL);
	w.tnt_cap = 47;
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	for (int i = 0; i < 47; i++)
		ptwr_tnt(&w, true);
	CHECK(read_back(trace, w.fill) && count(ptpkt_tnt64) == 1 && pk[npk - 1].nbits == 47,
	      "tnt: a cap of 47 writes a long TNT");
	w.distnt = true;
	size_t before = w.fill;
	ptwr_tnt(&w, true);
	ptwr_flush_tnt(&w);
	CHECK(w.fill == before, "tnt: DisTNT writes no bits");
}

static void test_ip(void)
{
	struct ptwr w;
	start(&w, true);
	static const uint64_t ips[] = { 0xfffff80012345678ull, 0xfffff80012345000ull,
					0xfffff80099999999ull, 0x7fff00001000ull, 0x1000,
					0xffff0000, 0xfffffff0, 0x123456789abcull };
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		ptwr_ip(&w, i & 1 ? ptpkt_fup : ptpkt_tip, ips[i]);
	ptwr_ip_sized(&w, ptpkt_tip_pgd, 0, 0);
	ptwr_ip(&w, ptpkt_tip_pge, 0x123456789abdull);
	bool ok = read_back(trace, w.fill);
	size_t j = 0, k = 0;
	/* canonical from Last IP 0: 3; upper 48 bits the same: 1; upper 32: 2 */
	unsigned want_ipc[] = { 3, 1, 2, 3, 3, 2, 1, 3 };
	bool all = true, shortest = true;
	for (size_t i = 0; i < npk; i++) {
		if (pk[i].type != ptpkt_tip && pk[i].type != ptpkt_fup)
			continue;
		all = all && pk[i].ip == ips[j];
		shortest = shortest && pk[i].ipc == want_ipc[j];
		j++;
	}
	CHECK(ok && j == 8 && all, "ip: every IP reconstructed against Last IP");
	CHECK(shortest, "ip: the shortest IPBytes each time (Table 33-18)");
	for (size_t i = 0; i < npk; i++)
		if (pk[i].type == ptpkt_tip_pgd || pk[i].type == ptpkt_tip_pge)
			k = i;
	CHECK(pk[k - 1].type == ptpkt_tip_pgd && pk[k - 1].ipc == 0 && pk[k].ipc == 1 &&
	      pk[k].ip == 0x123456789abdull, "ip: a suppressed IP leaves Last IP alone");
}

static void test_ret(void)
{
	struct ptwr w;
	start(&w, true);
	ptwr_call(&w, 0x1005);
	ptwr_call(&w, 0x2005);
	ptwr_call(&w, 0x3005);
	bool c1 = ptwr_ret(&w, 0x3005);	/* matches: a bit */
	bool c2 = ptwr_ret(&w, 0x9999);	/* longjmp-like: mismatch */
	bool c3 = ptwr_ret(&w, 0x1005);	/* below a mismatch: not compressed */
	CHECK(c1 && !c2 && !c3, "ret: a matching RET compressed, a mismatch stops compression");
	for (int i = 0; i < 70; i++)
		ptwr_call(&w, 0x5000 + (uint64_t)i);
	bool deep = true;
	for (int i = 69; i >= 6; i--)
		deep = deep && ptwr_ret(&w, 0x5000 + (uint64_t)i);
	CHECK(deep && !ptwr_ret(&w, 0x5005), "ret: the stack holds the last 64 CALLs");
	ptwr_call(&w, 0x6000);
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	CHECK(!ptwr_ret(&w, 0x6000), "ret: nothing compressed across a PSB");
	ptwr_call(&w, 0x7000);
	ptwr_ovf(&w);
	CHECK(!ptwr_ret(&w, 0x7000), "ret: nothing compressed across an OVF");
	ptwr_init(&w, trace, sizeof(trace), 4096, false, NULL, NULL);
	ptwr_call(&w, 0x8000);
	CHECK(!ptwr_ret(&w, 0x8000), "ret: DisRETC compresses nothing");
}

static void test_psb_mode(void)
{
	struct ptwr w;
	ptwr_init(&w, trace, sizeof(trace), 256, true, NULL, NULL);
	ptwr_psb_begin(&w);
	ptwr_mode(&w, X86_MODE_32);
	ptwr_ip(&w, ptpkt_fup, 0xfff00000);
	ptwr_psb_end(&w);
	unsigned psbs = 1;
	uint64_t ip = 0xfffff80000100000ull;
	for (int i = 0; i < 400; i++) {
		ptwr_mode_change(&w, i & 32 ? X86_MODE_64 : X86_MODE_32);
		ptwr_ip(&w, ptpkt_tip, ip += 0x10000);
		if (ptwr_psb_due(&w)) {
			ptwr_psb_begin(&w);
			ptwr_mode(&w, w.mode);
			ptwr_psb_end(&w);
			psbs++;
		}
	}
	bool ok = read_back(trace, w.fill);
	CHECK(ok && count(ptpkt_psb) == psbs && psbs > 5, "psb: a PSB+ every period");
	bool after_psb_full = true;
	for (size_t i = 1; i < npk; i++)
		if (pk[i].type == ptpkt_tip && pk[i - 1].type == ptpkt_psbend)
			after_psb_full = after_psb_full && pk[i].ipc >= 3;
	CHECK(after_psb_full, "psb: Last IP reset (the first IP after it is not compressed)");
	/* 400 TIPs alternate the size every 32: 12 changes, plus the PSB+'s */
	CHECK(count(ptpkt_mode_exec) == 1 + 12 + (psbs - 1),
	      "mode: MODE.Exec only where the code size changes (and in PSB+)");
}

struct sink {
	uint8_t data[1 << 16];
	size_t len;
	unsigned calls;
	bool fail;
};

static bool drain(void *ctx, const uint8_t *buf, size_t n)
{
	struct sink *s = ctx;
	s->calls++;
	if (s->fail || s->len + n > sizeof(s->data))
		return false;
	memcpy(s->data + s->len, buf, n);
	s->len += n;
	return true;
}

static void test_drain_limit(void)
{
	static struct sink s;
	static uint8_t stage[64];
	struct ptwr w;
	ptwr_init(&w, stage, sizeof(stage), 4096, true, drain, &s);
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	for (int i = 0; i < 200; i++)
		ptwr_ip(&w, ptpkt_tip, 0x1000 + (uint64_t)i * 0x100000);
	CHECK(ptwr_flush(&w) && s.len == w.bytes && s.calls > 10, "drain: every staged byte handed on");
	CHECK(read_back(s.data, s.len) && count(ptpkt_tip) == 200, "drain: whole packets across drains");
	s.fail = true;
	ptwr_ip(&w, ptpkt_tip, 0x5000);
	CHECK(!ptwr_flush(&w) && w.failed, "drain: a failed drain is reported");
	memset(&s, 0, sizeof(s));
	ptwr_init(&w, stage, sizeof(stage), 4096, true, drain, &s);
	w.limit = 100;
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	for (int i = 0; i < 50; i++)
		ptwr_ip(&w, ptpkt_tip, 0x1000 + (uint64_t)i * 0x100000);
	ptwr_flush(&w);
	CHECK(w.full && s.len <= 100 && s.len > 90 && read_back(s.data, s.len),
	      "limit: stops at the last whole packet that fits");	/* drain_at: the bytes go out with the packet that reaches it (an
	 * output region's end), not when the staging buffer fills */
	static uint8_t big[4096];
	memset(&s, 0, sizeof(s));
	ptwr_init(&w, big, sizeof(big), 4096, true, drain, &s);
	w.drain_at = 40;
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	unsigned n = 0;
	while (!s.calls && n < 100) {
		ptwr_ip(&w, ptpkt_tip, 0x1000 + (uint64_t)n * 0x100000);
		n++;
	}
	CHECK(s.calls == 1 && s.len >= 40 && s.len < 40 + PTPKT_MAX_SIZE && s.len == w.bytes &&
	      !w.fill, "drain_at: handed on by the packet that reaches it");
}

int main(void)
{
	test_tnt();
	test_ip();
	test_ret();
	test_psb_mode();
	test_drain_limit();
	return check_exit();
}
