/*
 * Intel PT packet encoder (SDM Vol. 3C 33.4.2), packet comparison and the
 * self-check the firmware runs.
 *
 * Every field is range-checked: a value that does not fit its bits is
 * -ptpkt_err_bad_packet rather than silently truncated, so a test or the
 * synthesizer cannot emit a packet that decodes differently.
 */
#include "core/pt_pkt.h"
#include "core/mem.h"
#include "core/pt_opcodes.h"

static int put(uint8_t *out, size_t avail, const uint8_t *bytes, unsigned n)
{
	if (avail < n)
		return -ptpkt_err_nospace;
	efipt_memcpy(out, bytes, n);
	return (int)n;
}

/* Header bytes then an n-byte little-endian value. */
static int put_le(uint8_t *out, size_t avail, const uint8_t *hdr, unsigned nh,
		  uint64_t v, unsigned n)
{
	uint8_t b[PTPKT_MAX_SIZE];
	efipt_memcpy(b, hdr, nh);
	efipt_store_le(b + nh, v, n);
	return put(out, avail, b, nh + n);
}

static bool fits(uint64_t v, unsigned bits)
{
	return bits >= 64 || (v >> bits) == 0;
}

static int enc_ip(uint8_t *out, size_t avail, uint8_t opc, const struct ptpkt *pkt)
{
	unsigned ipc = pkt->u.ip.ipc;
	int n = ptpkt_ipc_bytes(ipc);
	if (n < 0 || !fits(pkt->u.ip.ip, 8u * (unsigned)n))
		return -ptpkt_err_bad_packet;
	uint8_t h = (uint8_t)(ipc << PT_OPC_IPBYTES_SHIFT | opc);
	return put_le(out, avail, &h, 1, pkt->u.ip.ip, (unsigned)n);
}

/* TNT: payload bits then a stop bit above them (33.4.2.1). */
static int enc_tnt(uint8_t *out, size_t avail, const struct ptpkt *pkt)
{
	unsigned n = pkt->u.tnt.nbits;
	uint64_t bits = pkt->u.tnt.bits;
	if (pkt->type == ptpkt_tnt8) {
		if (n < 1 || n > 6 || !fits(bits, n))
			return -ptpkt_err_bad_packet;
		uint8_t b = (uint8_t)(((1u << n) | bits) << 1);
		return put(out, avail, &b, 1);
	}
	if (n > 47 || !fits(bits, n))
		return -ptpkt_err_bad_packet;
	static const uint8_t h[2] = { PT_OPC_EXT, PT_EXT_LTNT };
	return put_le(out, avail, h, 2, (1ull << n) | bits, PT_SIZE_LTNT - 2);
}

/* CYC: 5 bits in the header, then 7 bits per byte, Exp chaining (33.4.2.14). */
static int enc_cyc(uint8_t *out, size_t avail, uint64_t v)
{
	uint8_t b[10];
	unsigned n = 0;
	b[n++] = (uint8_t)(((v & 0x1f) << 3) | PT_CYC_MASK);
	v >>= 5;
	while (v) {
		b[n - 1] |= n == 1 ? PT_CYC_EXP : 1;
		b[n++] = (uint8_t)((v & 0x7f) << 1);
		v >>= 7;
	}
	return put(out, avail, b, n);
}

int ptpkt_encode(uint8_t *out, size_t avail, const struct ptpkt *pkt)
{
	uint8_t b[PTPKT_MAX_SIZE];

	if (!pkt || (!out && avail))
		return -ptpkt_err_invalid;
	efipt_memset(b, 0, sizeof(b));
	b[0] = PT_OPC_EXT;
	switch ((enum ptpkt_type)pkt->type) {
	case ptpkt_pad:
		b[0] = PT_OPC_PAD;
		return put(out, avail, b, PT_SIZE_PAD);
	case ptpkt_psb:
		for (unsigned i = 0; i < PTPKT_PSB_SIZE; i += 2) {
			b[i] = PT_OPC_EXT;
			b[i + 1] = PT_EXT_PSB;
		}
		return put(out, avail, b, PTPKT_PSB_SIZE);
	case ptpkt_psbend:
		b[1] = PT_EXT_PSBEND;
		return put(out, avail, b, PT_SIZE_PSBEND);
	case ptpkt_tnt8:
	case ptpkt_tnt64:
		return enc_tnt(out, avail, pkt);
	case ptpkt_tip:     return enc_ip(out, avail, PT_OPC_TIP, pkt);
	case ptpkt_tip_pge: return enc_ip(out, avail, PT_OPC_TIP_PGE, pkt);
	case ptpkt_tip_pgd: return enc_ip(out, avail, PT_OPC_TIP_PGD, pkt);
	case ptpkt_fup:     return enc_ip(out, avail, PT_OPC_FUP, pkt);
	case ptpkt_pip:
		/* CR3[51:5] above NR (33.4.2.7); CR3[4:0] are not sent. */
		if ((pkt->u.pip.cr3 & 0x1f) || !fits(pkt->u.pip.cr3, 52))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_PIP;
		return put_le(out, avail, b, 2,
			      (pkt->u.pip.cr3 >> 4) | (pkt->u.pip.nr ? 1 : 0), PT_SIZE_PIP - 2);
	case ptpkt_mode_exec:
		b[0] = PT_OPC_MODE;
		b[1] = (uint8_t)(PT_MODE_LEAF_EXEC << PT_MODE_LEAF_SHIFT | (pkt->u.mode_exec.iflag ? 4 : 0) |
				 (pkt->u.mode_exec.csd ? 2 : 0) | (pkt->u.mode_exec.csl ? 1 : 0));
		return put(out, avail, b, PT_SIZE_MODE);
	case ptpkt_mode_tsx:
		b[0] = PT_OPC_MODE;
		b[1] = (uint8_t)(PT_MODE_LEAF_TSX << PT_MODE_LEAF_SHIFT | (pkt->u.mode_tsx.abrt ? 2 : 0) |
				 (pkt->u.mode_tsx.intx ? 1 : 0));
		return put(out, avail, b, PT_SIZE_MODE);
	case ptpkt_stop:
		b[1] = PT_EXT_STOP;
		return put(out, avail, b, PT_SIZE_STOP);
	case ptpkt_tsc:
		if (!fits(pkt->u.tsc.tsc, 56))
			return -ptpkt_err_bad_packet;
		b[0] = PT_OPC_TSC;
		return put_le(out, avail, b, 1, pkt->u.tsc.tsc, PT_SIZE_TSC - 1);
	case ptpkt_tma:
		if (!fits(pkt->u.tma.fc, 9))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_TMA;
		efipt_store_le(b + 2, pkt->u.tma.ctc, 2);
		b[5] = (uint8_t)pkt->u.tma.fc;
		b[6] = (uint8_t)(pkt->u.tma.fc >> 8);
		return put(out, avail, b, PT_SIZE_TMA);
	case ptpkt_mtc:
		b[0] = PT_OPC_MTC;
		b[1] = pkt->u.mtc.ctc;
		return put(out, avail, b, PT_SIZE_MTC);
	case ptpkt_cyc:
		return enc_cyc(out, avail, pkt->u.cyc.cyc);
	case ptpkt_cbr:
		b[1] = PT_EXT_CBR;
		b[2] = pkt->u.cbr.ratio;
		return put(out, avail, b, PT_SIZE_CBR);
	case ptpkt_ovf:
		b[1] = PT_EXT_OVF;
		return put(out, avail, b, PT_SIZE_OVF);
	case ptpkt_vmcs:
		if ((pkt->u.vmcs.base & 0xfff) || !fits(pkt->u.vmcs.base, 52))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_VMCS;
		return put_le(out, avail, b, 2, pkt->u.vmcs.base >> 12, PT_SIZE_VMCS - 2);
	case ptpkt_mnt:
		b[1] = PT_EXT_MNT;
		b[2] = PT_MNT_BYTE2;
		return put_le(out, avail, b, 3, pkt->u.mnt.payload, PT_SIZE_MNT - 3);
	case ptpkt_ptw: {
		unsigned n = pkt->u.ptw.bytes;
		if ((n != 4 && n != 8) || !fits(pkt->u.ptw.payload, 8 * n))
			return -ptpkt_err_bad_packet;
		b[1] = (uint8_t)((pkt->u.ptw.ip ? PT_EXT_IP_BIT : 0) | (n == 8 ? PT_EXT_PTW8 : PT_EXT_PTW4));
		return put_le(out, avail, b, 2, pkt->u.ptw.payload, n);
	}
	case ptpkt_exstop:
		b[1] = pkt->u.exstop.ip ? PT_EXT_EXSTOP_IP : PT_EXT_EXSTOP;
		return put(out, avail, b, PT_SIZE_EXSTOP);
	case ptpkt_mwait:
		if (!fits(pkt->u.mwait.ext, 2))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_MWAIT;
		b[2] = pkt->u.mwait.hints;
		b[6] = pkt->u.mwait.ext;
		return put(out, avail, b, PT_SIZE_MWAIT);
	case ptpkt_pwre:
		if (!fits(pkt->u.pwre.state, 4) || !fits(pkt->u.pwre.sub, 4))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_PWRE;
		b[2] = pkt->u.pwre.hw ? 0x80 : 0;
		b[3] = (uint8_t)(pkt->u.pwre.state << 4 | pkt->u.pwre.sub);
		return put(out, avail, b, PT_SIZE_PWRE);
	case ptpkt_pwrx:
		if (!fits(pkt->u.pwrx.last, 4) || !fits(pkt->u.pwrx.deepest, 4) ||
		    !fits(pkt->u.pwrx.wr, 4))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_PWRX;
		b[2] = (uint8_t)(pkt->u.pwrx.last << 4 | pkt->u.pwrx.deepest);
		b[3] = pkt->u.pwrx.wr;
		return put(out, avail, b, PT_SIZE_PWRX);
	case ptpkt_bbp:
		if (!fits(pkt->u.bbp.type, 5))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_BBP;
		b[2] = (uint8_t)((pkt->u.bbp.sz ? 0x80 : 0) | pkt->u.bbp.type);
		return put(out, avail, b, PT_SIZE_BBP);
	case ptpkt_bip: {
		unsigned n = pkt->u.bip.bytes;
		if ((n != 4 && n != 8) || !fits(pkt->u.bip.id, 5) ||
		    !fits(pkt->u.bip.payload, 8 * n))
			return -ptpkt_err_bad_packet;
		b[0] = (uint8_t)(pkt->u.bip.id << 3 | PT_BIP_BITS);
		return put_le(out, avail, b, 1, pkt->u.bip.payload, n);
	}
	case ptpkt_bep:
		b[1] = pkt->u.bep.ip ? PT_EXT_BEP_IP : PT_EXT_BEP;
		return put(out, avail, b, PT_SIZE_BEP);
	case ptpkt_cfe:
		if (!fits(pkt->u.cfe.type, 5))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_CFE;
		b[2] = (uint8_t)((pkt->u.cfe.ip ? 0x80 : 0) | pkt->u.cfe.type);
		b[3] = pkt->u.cfe.vector;
		return put(out, avail, b, PT_SIZE_CFE);
	case ptpkt_evd:
		if (!fits(pkt->u.evd.type, 6))
			return -ptpkt_err_bad_packet;
		b[1] = PT_EXT_EVD;
		b[2] = pkt->u.evd.type;
		return put_le(out, avail, b, 3, pkt->u.evd.payload, PT_SIZE_EVD - 3);
	case ptpkt_invalid:
	case ptpkt_ntypes:
		break;
	}
	return -ptpkt_err_bad_opc;
}

bool ptpkt_same(const struct ptpkt *a, const struct ptpkt *b)
{
	if (a->type != b->type || a->size != b->size)
		return false;
	switch ((enum ptpkt_type)a->type) {
	case ptpkt_pad: case ptpkt_psb: case ptpkt_psbend: case ptpkt_stop:
	case ptpkt_ovf:
		return true;
	case ptpkt_tnt8: case ptpkt_tnt64:
		return a->u.tnt.nbits == b->u.tnt.nbits && a->u.tnt.bits == b->u.tnt.bits;
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup:
		return a->u.ip.ipc == b->u.ip.ipc && a->u.ip.ip == b->u.ip.ip;
	case ptpkt_pip:
		return a->u.pip.cr3 == b->u.pip.cr3 && a->u.pip.nr == b->u.pip.nr;
	case ptpkt_mode_exec:
		return a->u.mode_exec.csl == b->u.mode_exec.csl &&
		       a->u.mode_exec.csd == b->u.mode_exec.csd &&
		       a->u.mode_exec.iflag == b->u.mode_exec.iflag;
	case ptpkt_mode_tsx:
		return a->u.mode_tsx.intx == b->u.mode_tsx.intx &&
		       a->u.mode_tsx.abrt == b->u.mode_tsx.abrt;
	case ptpkt_tsc:
		return a->u.tsc.tsc == b->u.tsc.tsc;
	case ptpkt_tma:
		return a->u.tma.ctc == b->u.tma.ctc && a->u.tma.fc == b->u.tma.fc;
	case ptpkt_mtc:
		return a->u.mtc.ctc == b->u.mtc.ctc;
	case ptpkt_cyc:
		return a->u.cyc.cyc == b->u.cyc.cyc;
	case ptpkt_cbr:
		return a->u.cbr.ratio == b->u.cbr.ratio;
	case ptpkt_vmcs:
		return a->u.vmcs.base == b->u.vmcs.base;
	case ptpkt_mnt:
		return a->u.mnt.payload == b->u.mnt.payload;
	case ptpkt_ptw:
		return a->u.ptw.bytes == b->u.ptw.bytes && a->u.ptw.ip == b->u.ptw.ip &&
		       a->u.ptw.payload == b->u.ptw.payload;
	case ptpkt_exstop:
		return a->u.exstop.ip == b->u.exstop.ip;
	case ptpkt_mwait:
		return a->u.mwait.hints == b->u.mwait.hints && a->u.mwait.ext == b->u.mwait.ext;
	case ptpkt_pwre:
		return a->u.pwre.state == b->u.pwre.state && a->u.pwre.sub == b->u.pwre.sub &&
		       a->u.pwre.hw == b->u.pwre.hw;
	case ptpkt_pwrx:
		return a->u.pwrx.last == b->u.pwrx.last &&
		       a->u.pwrx.deepest == b->u.pwrx.deepest && a->u.pwrx.wr == b->u.pwrx.wr;
	case ptpkt_bbp:
		return a->u.bbp.sz == b->u.bbp.sz && a->u.bbp.type == b->u.bbp.type;
	case ptpkt_bip:
		return a->u.bip.id == b->u.bip.id && a->u.bip.bytes == b->u.bip.bytes &&
		       a->u.bip.payload == b->u.bip.payload;
	case ptpkt_bep:
		return a->u.bep.ip == b->u.bep.ip;
	case ptpkt_cfe:
		return a->u.cfe.ip == b->u.cfe.ip && a->u.cfe.type == b->u.cfe.type &&
		       a->u.cfe.vector == b->u.cfe.vector;
	case ptpkt_evd:
		return a->u.evd.type == b->u.evd.type && a->u.evd.payload == b->u.evd.payload;
	case ptpkt_invalid: case ptpkt_ntypes:
		break;
	}
	return false;
}

/* One packet of every type (and every IPBytes, both TNT forms, a block of
 * each item size) for the self-check. */
static void selfcheck_packet(unsigned i, struct ptpkt *p)
{
	static const uint8_t types[] = {
		ptpkt_psb, ptpkt_pad, ptpkt_mode_exec, ptpkt_fup, ptpkt_tsc, ptpkt_tma,
		ptpkt_cbr, ptpkt_pip, ptpkt_vmcs, ptpkt_mode_tsx, ptpkt_psbend,
		ptpkt_tnt8, ptpkt_tnt64, ptpkt_tip, ptpkt_tip_pge, ptpkt_tip_pgd,
		ptpkt_mtc, ptpkt_cyc, ptpkt_stop, ptpkt_mnt, ptpkt_ptw, ptpkt_exstop,
		ptpkt_mwait, ptpkt_pwre, ptpkt_pwrx, ptpkt_bbp, ptpkt_bip, ptpkt_bip,
		ptpkt_bep, ptpkt_cfe, ptpkt_evd, ptpkt_bbp, ptpkt_bip, ptpkt_ovf,
		ptpkt_tip, ptpkt_tip, ptpkt_tip, ptpkt_fup, ptpkt_fup,
	};
	efipt_memset(p, 0, sizeof(*p));
	if (i >= sizeof(types)) {
		p->type = ptpkt_invalid;
		return;
	}
	p->type = types[i];
	uint64_t x = 0x0123456789abcdefull * (i + 1);
	switch ((enum ptpkt_type)p->type) {
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup: {
		static const uint8_t ipcs[] = { 0, 1, 2, 3, 4, 6 };
		p->u.ip.ipc = ipcs[i % 6];
		int n = ptpkt_ipc_bytes(p->u.ip.ipc);
		p->u.ip.ip = n == 8 ? x : x & ((1ull << (8 * n)) - 1);
		break;
	}
	case ptpkt_tnt8:  p->u.tnt.nbits = 5; p->u.tnt.bits = 0x15; break;
	case ptpkt_tnt64: p->u.tnt.nbits = 47; p->u.tnt.bits = x >> 17; break;
	case ptpkt_pip:   p->u.pip.cr3 = x & 0xfffffffffffe0ull; p->u.pip.nr = 1; break;
	case ptpkt_mode_exec: p->u.mode_exec.csl = 1; p->u.mode_exec.iflag = 1; break;
	case ptpkt_mode_tsx:  p->u.mode_tsx.intx = 1; break;
	case ptpkt_tsc:   p->u.tsc.tsc = x >> 8; break;
	case ptpkt_tma:   p->u.tma.ctc = 0xbeef; p->u.tma.fc = 0x1a5; break;
	case ptpkt_mtc:   p->u.mtc.ctc = 0xc3; break;
	case ptpkt_cyc:   p->u.cyc.cyc = x; break;
	case ptpkt_cbr:   p->u.cbr.ratio = 0x2a; break;
	case ptpkt_vmcs:  p->u.vmcs.base = x & 0xffffffffff000ull; break;
	case ptpkt_mnt:   p->u.mnt.payload = x; break;
	case ptpkt_ptw:   p->u.ptw.bytes = 8; p->u.ptw.ip = 1; p->u.ptw.payload = x; break;
	case ptpkt_exstop: p->u.exstop.ip = 1; break;
	case ptpkt_mwait: p->u.mwait.hints = 0x21; p->u.mwait.ext = 1; break;
	case ptpkt_pwre:  p->u.pwre.state = 3; p->u.pwre.sub = 2; p->u.pwre.hw = 1; break;
	case ptpkt_pwrx:  p->u.pwrx.last = 6; p->u.pwrx.deepest = 7; p->u.pwrx.wr = 9; break;
	case ptpkt_bbp:   p->u.bbp.sz = i > 30; p->u.bbp.type = 0x10; break;
	case ptpkt_bip:
		p->u.bip.id = (uint8_t)(i & 0x1f);
		p->u.bip.bytes = i > 30 ? 4 : 8;
		p->u.bip.payload = i > 30 ? x & 0xffffffff : x;
		break;
	case ptpkt_bep:   p->u.bep.ip = 1; break;
	case ptpkt_cfe:   p->u.cfe.ip = 1; p->u.cfe.type = 1; p->u.cfe.vector = 14; break;
	case ptpkt_evd:   p->u.evd.type = 2; p->u.evd.payload = x; break;
	default: break;
	}
}

int ptpkt_selfcheck(void)
{
	uint8_t buf[512];
	size_t len = 0;
	unsigned n;
	bool seen[ptpkt_ntypes];
	struct ptpkt p, q;

	efipt_memset(seen, 0, sizeof(seen));
	for (n = 0;; n++) {
		selfcheck_packet(n, &p);
		if (p.type == ptpkt_invalid)
			break;
		int r = ptpkt_encode(buf + len, sizeof(buf) - len, &p);
		if (r <= 0)
			return r < 0 ? r : -ptpkt_err_invalid;
		len += (size_t)r;
		seen[p.type] = true;
	}
	for (unsigned t = ptpkt_pad; t < ptpkt_ntypes; t++)
		if (!seen[t])
			return -ptpkt_err_invalid;

	struct ptpkt_decoder d;
	ptpkt_init(&d, buf, len, 0);
	if (ptpkt_sync_forward(&d) || ptpkt_offset(&d) != 0)
		return -ptpkt_err_nosync;
	for (unsigned i = 0; i < n; i++) {
		uint8_t one[PTPKT_MAX_SIZE];
		selfcheck_packet(i, &p);
		int r = ptpkt_next(&d, &q);
		if (r < 0)
			return r;
		/* The expected size is what the encoder wrote for p alone. */
		int e = ptpkt_encode(one, sizeof(one), &p);
		if (e != r)
			return -ptpkt_err_bad_packet;
		p.size = (uint8_t)e;
		if (!ptpkt_same(&p, &q))
			return -ptpkt_err_bad_packet;
	}
	if (ptpkt_next(&d, &q) != -ptpkt_err_eos)
		return -ptpkt_err_bad_packet;
	/* Every proper prefix of the stream ends in a truncated packet or on a
	 * boundary; it never decodes as something else. */
	for (size_t cut = 1; cut < 40; cut++) {
		ptpkt_init(&d, buf, cut, 0);
		ptpkt_sync_set(&d, 0);
		int r;
		while ((r = ptpkt_next(&d, &q)) > 0)
			;
		if (r != -ptpkt_err_eos && r != -ptpkt_err_truncated)
			return -ptpkt_err_bad_packet;
	}
	/* Back to the one PSB from the end. */
	ptpkt_init(&d, buf, len, 0);
	d.pos = d.end;
	if (ptpkt_sync_backward(&d) || ptpkt_offset(&d) != 0)
		return -ptpkt_err_nosync;
	return 0;
}
