/* Random Intel PT packets and streams for tests (see ptpkt_gen.h). */
#include "ptpkt_gen.h"

#include <string.h>

uint64_t ptgen_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t bits(uint64_t *rng, unsigned n)
{
	uint64_t v = ptgen_rand(rng);
	return n >= 64 ? v : v & ((1ull << n) - 1);
}

void ptgen_packet(uint64_t *rng, enum ptpkt_type type, unsigned bip_bytes, struct ptpkt *p)
{
	static const uint8_t ipcs[] = { 0, 1, 2, 3, 4, 6 };
	memset(p, 0, sizeof(*p));
	p->type = (uint8_t)type;
	switch (type) {
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup:
		p->u.ip.ipc = ipcs[ptgen_rand(rng) % 6];
		p->u.ip.ip = bits(rng, 8u * (unsigned)ptpkt_ipc_bytes(p->u.ip.ipc));
		break;
	case ptpkt_tnt8:
		p->u.tnt.nbits = (uint8_t)(1 + ptgen_rand(rng) % 6);
		p->u.tnt.bits = bits(rng, p->u.tnt.nbits);
		break;
	case ptpkt_tnt64:
		p->u.tnt.nbits = (uint8_t)(1 + ptgen_rand(rng) % 47);
		p->u.tnt.bits = bits(rng, p->u.tnt.nbits);
		break;
	case ptpkt_pip:
		p->u.pip.cr3 = bits(rng, 52) & ~0x1full;
		p->u.pip.nr = ptgen_rand(rng) & 1;
		break;
	case ptpkt_mode_exec:
		p->u.mode_exec.csl = ptgen_rand(rng) & 1;
		p->u.mode_exec.csd = ptgen_rand(rng) & 1;
		p->u.mode_exec.iflag = ptgen_rand(rng) & 1;
		break;
	case ptpkt_mode_tsx:
		p->u.mode_tsx.intx = ptgen_rand(rng) & 1;
		p->u.mode_tsx.abrt = ptgen_rand(rng) & 1;
		break;
	case ptpkt_tsc: p->u.tsc.tsc = bits(rng, 56); break;
	case ptpkt_tma:
		p->u.tma.ctc = (uint16_t)bits(rng, 16);
		p->u.tma.fc = (uint16_t)bits(rng, 9);
		break;
	case ptpkt_mtc: p->u.mtc.ctc = (uint8_t)bits(rng, 8); break;
	case ptpkt_cyc:
		/* Spread over every length: 1..64 significant bits. */
		p->u.cyc.cyc = bits(rng, 1 + (unsigned)(ptgen_rand(rng) % 64));
		break;
	case ptpkt_cbr: p->u.cbr.ratio = (uint8_t)bits(rng, 8); break;
	case ptpkt_vmcs: p->u.vmcs.base = bits(rng, 52) & ~0xfffull; break;
	case ptpkt_mnt: p->u.mnt.payload = bits(rng, 64); break;
	case ptpkt_ptw:
		p->u.ptw.bytes = (ptgen_rand(rng) & 1) ? 8 : 4;
		p->u.ptw.ip = ptgen_rand(rng) & 1;
		p->u.ptw.payload = bits(rng, 8u * p->u.ptw.bytes);
		break;
	case ptpkt_exstop: p->u.exstop.ip = ptgen_rand(rng) & 1; break;
	case ptpkt_mwait:
		p->u.mwait.hints = (uint8_t)bits(rng, 8);
		p->u.mwait.ext = (uint8_t)bits(rng, 2);
		break;
	case ptpkt_pwre:
		p->u.pwre.state = (uint8_t)bits(rng, 4);
		p->u.pwre.sub = (uint8_t)bits(rng, 4);
		p->u.pwre.hw = ptgen_rand(rng) & 1;
		break;
	case ptpkt_pwrx:
		p->u.pwrx.last = (uint8_t)bits(rng, 4);
		p->u.pwrx.deepest = (uint8_t)bits(rng, 4);
		p->u.pwrx.wr = (uint8_t)bits(rng, 4);
		break;
	case ptpkt_bbp:
		p->u.bbp.sz = ptgen_rand(rng) & 1;
		p->u.bbp.type = (uint8_t)bits(rng, 5);
		break;
	case ptpkt_bip:
		p->u.bip.id = (uint8_t)bits(rng, 5);
		p->u.bip.bytes = (uint8_t)bip_bytes;
		p->u.bip.payload = bits(rng, 8 * bip_bytes);
		break;
	case ptpkt_bep: p->u.bep.ip = ptgen_rand(rng) & 1; break;
	case ptpkt_cfe:
		p->u.cfe.ip = ptgen_rand(rng) & 1;
		p->u.cfe.type = (uint8_t)bits(rng, 5);
		p->u.cfe.vector = (uint8_t)bits(rng, 8);
		break;
	case ptpkt_evd:
		p->u.evd.type = (uint8_t)bits(rng, 6);
		p->u.evd.payload = bits(rng, 64);
		break;
	default:
		break;
	}
}

static int emit(uint8_t *buf, size_t size, size_t *len, struct ptpkt *p,
		struct ptpkt *pkts, size_t max_pkts, size_t *npkts)
{
	int n = ptpkt_encode(buf + *len, size - *len, p);
	if (n <= 0)
		return -1;
	p->size = (uint8_t)n;
	*len += (size_t)n;
	if (pkts && *npkts < max_pkts)
		pkts[*npkts] = *p;
	(*npkts)++;
	return 0;
}

size_t ptgen_stream(uint64_t *rng, uint8_t *buf, size_t size, size_t psb_period,
		    struct ptpkt *pkts, size_t max_pkts, size_t *npkts)
{
	size_t len = 0, n = 0, next_psb = 0;
	struct ptpkt p;
	for (;;) {
		if (size - len < 64)
			break;
		if (len >= next_psb) {
			/* PSB+: PSB, status packets, PSBEND. */
			static const uint8_t plus[] = { ptpkt_psb, ptpkt_tsc, ptpkt_tma,
							ptpkt_cbr, ptpkt_pip, ptpkt_vmcs,
							ptpkt_mode_exec, ptpkt_fup,
							ptpkt_psbend };
			for (size_t i = 0; i < sizeof(plus); i++) {
				ptgen_packet(rng, plus[i], 0, &p);
				emit(buf, size, &len, &p, pkts, max_pkts, &n);
			}
			next_psb = len + psb_period;
			continue;
		}
		unsigned t = (unsigned)(ptgen_rand(rng) % (ptpkt_ntypes - 1)) + 1;
		if (t == ptpkt_psb || t == ptpkt_psbend || t == ptpkt_bip || t == ptpkt_bep)
			continue;
		if (t == ptpkt_bbp) {
			/* A block: BBP, 0..5 BIPs with timing in between, then BEP
			 * (or, now and then, OVF or a new BBP). */
			ptgen_packet(rng, ptpkt_bbp, 0, &p);
			unsigned sz = p.u.bbp.sz ? 4 : 8;
			emit(buf, size, &len, &p, pkts, max_pkts, &n);
			unsigned items = (unsigned)(ptgen_rand(rng) % 6);
			for (unsigned i = 0; i < items; i++) {
				ptgen_packet(rng, (ptgen_rand(rng) % 4) ? ptpkt_bip : ptpkt_cyc, sz, &p);
				emit(buf, size, &len, &p, pkts, max_pkts, &n);
			}
			unsigned end = (unsigned)(ptgen_rand(rng) % 8);
			ptgen_packet(rng, end == 0 ? ptpkt_ovf : ptpkt_bep, 0, &p);
			emit(buf, size, &len, &p, pkts, max_pkts, &n);
			continue;
		}
		ptgen_packet(rng, (enum ptpkt_type)t, 0, &p);
		emit(buf, size, &len, &p, pkts, max_pkts, &n);
	}
	if (npkts)
		*npkts = n;
	return len;
}
