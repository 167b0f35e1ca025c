/*
 * Intel PT packet decoder (SDM Vol. 3C 33.4.2).
 *
 * The first byte selects a packet class through one 256-entry table; the
 * second byte does the same for the extended packets. Each packet has one
 * small decode_<packet>() that checks the bytes it needs are there before
 * reading them and returns the packet size. Every table is computed at
 * compile time from the opcodes in pt_opcodes.h.
 */
#include "core/pt_pkt.h"
#include "core/mem.h"
#include "core/pt_opcodes.h"

/* First-byte classes. */
enum {
	C_BAD = 0, C_PAD, C_TNT, C_EXT, C_CYC, C_TIP, C_PGE, C_PGD, C_FUP,
	C_TSC, C_MTC, C_MODE,
};

#define T4(F, n) F(n), F(n + 1), F(n + 2), F(n + 3)
#define T16(F, n) T4(F, n), T4(F, n + 4), T4(F, n + 8), T4(F, n + 12)
#define T64(F, n) T16(F, n), T16(F, n + 16), T16(F, n + 32), T16(F, n + 48)
#define T256(F) T64(F, 0), T64(F, 64), T64(F, 128), T64(F, 192)

#define IS_IP(b, name) (((b) & PT_OPC_IP_MASK) == PT_OPC_##name)
#define IS_CYC(b) (((b) & PT_CYC_MASK) == PT_CYC_MASK)
/* Class of every first byte: even bytes are TNT except PAD and EXT, odd
 * bytes with bits 1:0 = 11 are CYC; the rest is decided by bits 4:0 (IP
 * packets) or the whole byte. */
#define CLS1(b)                                                                         \
	((b) == PT_OPC_PAD ? C_PAD : (b) == PT_OPC_EXT ? C_EXT : !((b) & 1) ? C_TNT :    \
	 IS_CYC(b) ? C_CYC : IS_IP(b, TIP_PGD) ? C_PGD : IS_IP(b, TIP) ? C_TIP :         \
	 IS_IP(b, TIP_PGE) ? C_PGE : IS_IP(b, FUP) ? C_FUP : (b) == PT_OPC_TSC ? C_TSC :  \
	 (b) == PT_OPC_MTC ? C_MTC : (b) == PT_OPC_MODE ? C_MODE : C_BAD)
static const uint8_t cls1[256] = { T256(CLS1) };

/* Packet type of byte 1 of an extended packet (ptpkt_invalid: unknown). */
#define EXT_TYPE(name, type, byte, size, scan) [byte] = type,
static const uint8_t ext_kind[256] = { PT_OPCODES_EXT(EXT_TYPE) };
#undef EXT_TYPE

/* IP payload bytes by IPBytes (Table 33-18); -1: reserved (101b, 111b). */
static const int8_t ipc_len[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };

int ptpkt_ipc_bytes(unsigned ipc)
{
	return ipc < 8 ? ipc_len[ipc] : -1;
}

unsigned ptpkt_ip_choices(uint64_t ip, uint64_t last)
{
	unsigned m = 1u << 6;
	if ((ip >> 16) == (last >> 16))
		m |= 1u << 1;
	if ((ip >> 32) == (last >> 32))
		m |= 1u << 2;
	if ((uint64_t)((int64_t)(ip << 16) >> 16) == ip)
		m |= 1u << 3;
	if ((ip >> 48) == (last >> 48))
		m |= 1u << 4;
	return m;
}

uint64_t ptpkt_ip_payload(uint64_t ip, unsigned ipc)
{
	switch (ipc) {
	case 1: return ip & 0xffff;
	case 2: return ip & 0xffffffff;
	case 3: case 4: return ip & 0xffffffffffffull;
	default: return ip;
	}
}

/* Size check for a fixed-size packet: truncated, not bad, when cut. */
#define NEED(n)                                            \
	do {                                               \
		if (avail < (size_t)(n))                   \
			return -ptpkt_err_truncated;       \
	} while (0)

static inline int decode_fixed(struct ptpkt *pkt, uint8_t type, size_t avail, unsigned n)
{
	NEED(n);
	pkt->type = type;
	pkt->size = (uint8_t)n;
	return (int)n;
}

/* Short TNT: stop bit, then B1 (oldest) .. BN, then 0 (33.4.2.1). */
static inline int decode_tnt8(const uint8_t *p, struct ptpkt *pkt)
{
	unsigned v = (unsigned)p[0] >> 1; /* 2..127: a stop bit is set */
	unsigned n = 31u - (unsigned)__builtin_clz(v);
	pkt->type = ptpkt_tnt8;
	pkt->size = 1;
	pkt->u.tnt.nbits = (uint8_t)n;
	pkt->u.tnt.bits = v & ((1u << n) - 1);
	return 1;
}

/* Long TNT: 02 a3, then 48 bits with the stop bit as the highest set bit. */
static inline int decode_tnt64(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(8);
	uint64_t v = efipt_load_le(p + 2, 6);
	if (!v)
		return -ptpkt_err_bad_packet; /* no stop bit */
	unsigned n = 63u - (unsigned)__builtin_clzll(v);
	pkt->type = ptpkt_tnt64;
	pkt->size = 8;
	pkt->u.tnt.nbits = (uint8_t)n;
	pkt->u.tnt.bits = v & ((1ull << n) - 1);
	return 8;
}

/* TIP/TIP.PGE/TIP.PGD/FUP: IPBytes in bits 7:5 (33.4.2.2, Table 33-18). */
static inline int decode_ip(const uint8_t *p, size_t avail, uint8_t type, struct ptpkt *pkt)
{
	unsigned ipc = p[0] >> PT_OPC_IPBYTES_SHIFT;
	int n = ipc_len[ipc];
	if (n < 0)
		return -ptpkt_err_bad_packet;
	NEED(1 + n);
	pkt->type = type;
	pkt->size = (uint8_t)(1 + n);
	pkt->u.ip.ipc = (uint8_t)ipc;
	if (avail >= 9) /* one 8-byte load, then keep the payload bytes */
		pkt->u.ip.ip = efipt_le64(p + 1) & (n == 8 ? ~0ull : (1ull << (8 * n)) - 1);
	else
		pkt->u.ip.ip = efipt_load_le(p + 1, (unsigned)n);
	return 1 + n;
}

/* CYC: Cycle Counter[4:0] | Exp | 11, then bytes Counter[..] | Exp
 * (33.4.2.14). The counter is 64 bits: at most 10 bytes. */
static inline int decode_cyc(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	uint64_t v = p[0] >> 3;
	unsigned i = 1;
	if (p[0] & PT_CYC_EXP) {
		unsigned shift = 5;
		for (;;) {
			if (i >= avail)
				return -ptpkt_err_truncated;
			uint8_t b = p[i++];
			uint64_t chunk = (uint64_t)(b >> 1);
			if (shift == 61 && (chunk >> 3))
				return -ptpkt_err_bad_packet; /* beyond 64 bits */
			v |= chunk << shift;
			if (!(b & 1))
				break;
			if (shift == 61)
				return -ptpkt_err_bad_packet; /* 11th byte */
			shift += 7;
		}
	}
	pkt->type = ptpkt_cyc;
	pkt->size = (uint8_t)i;
	pkt->u.cyc.cyc = v;
	return (int)i;
}

/* MODE: 99, Leaf ID in byte 1 bits 7:5 (33.4.2.8). */
static inline int decode_mode(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(2);
	uint8_t b = p[1];
	switch (b >> PT_MODE_LEAF_SHIFT) {
	case PT_MODE_LEAF_EXEC: /* MODE.Exec: IF, CS.D, CS.L & LMA */
		pkt->type = ptpkt_mode_exec;
		pkt->u.mode_exec.csl = b & 1;
		pkt->u.mode_exec.csd = (b >> 1) & 1;
		pkt->u.mode_exec.iflag = (b >> 2) & 1;
		break;
	case PT_MODE_LEAF_TSX: /* MODE.TSX: TXAbort, InTX */
		pkt->type = ptpkt_mode_tsx;
		pkt->u.mode_tsx.intx = b & 1;
		pkt->u.mode_tsx.abrt = (b >> 1) & 1;
		break;
	default:
		return -ptpkt_err_bad_packet;
	}
	pkt->size = 2;
	return 2;
}

static inline int decode_tsc(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(8);
	pkt->type = ptpkt_tsc;
	pkt->size = 8;
	pkt->u.tsc.tsc = efipt_load_le(p + 1, 7);
	return 8;
}

static inline int decode_mtc(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(2);
	pkt->type = ptpkt_mtc;
	pkt->size = 2;
	pkt->u.mtc.ctc = p[1];
	return 2;
}

/* PSB: 02 82 repeated 8 times (33.4.2.17). */
static inline int decode_psb(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	size_t n = avail < PTPKT_PSB_SIZE ? avail : PTPKT_PSB_SIZE;
	for (size_t i = 2; i < n; i++)
		if (p[i] != ((i & 1) ? PT_EXT_PSB : PT_OPC_EXT))
			return -ptpkt_err_bad_packet;
	return decode_fixed(pkt, ptpkt_psb, avail, PTPKT_PSB_SIZE);
}

/* PIP: CR3[51:5] in bytes 2..7 with NR in bit 0 of byte 2 (33.4.2.7). */
static inline int decode_pip(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(8);
	uint64_t v = efipt_load_le(p + 2, 6);
	pkt->type = ptpkt_pip;
	pkt->size = 8;
	pkt->u.pip.nr = v & 1;
	pkt->u.pip.cr3 = (v >> 1) << 5;
	return 8;
}

static inline int decode_cbr(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(4);
	pkt->type = ptpkt_cbr;
	pkt->size = 4;
	pkt->u.cbr.ratio = p[2];
	return 4;
}

/* TMA: 02 73, CTC[15:0], reserved byte, FastCounter[7:0], FC[8] (33.4.2.13). */
static inline int decode_tma(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(7);
	pkt->type = ptpkt_tma;
	pkt->size = 7;
	pkt->u.tma.ctc = efipt_le16(p + 2);
	pkt->u.tma.fc = (uint16_t)(p[5] | ((p[6] & 1u) << 8));
	return 7;
}

/* MNT: 02 c3 88, then 8 bytes (33.4.2.19). */
static inline int decode_mnt(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(3);
	if (p[2] != PT_MNT_BYTE2)
		return -ptpkt_err_bad_opc;
	NEED(11);
	pkt->type = ptpkt_mnt;
	pkt->size = 11;
	pkt->u.mnt.payload = efipt_le64(p + 3);
	return 11;
}

/* VMCS: 02 c8, VMCS pointer[51:12] in 5 bytes (33.4.2.15). */
static inline int decode_vmcs(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(7);
	pkt->type = ptpkt_vmcs;
	pkt->size = 7;
	pkt->u.vmcs.base = efipt_load_le(p + 2, 5) << 12;
	return 7;
}

/* PTW: byte 1 = IP | PayloadBytes(2) | 10010; 00b: 4 bytes, 01b: 8 bytes,
 * 1xb reserved (33.4.2.21). */
static inline int decode_ptw(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	unsigned plb = (p[1] >> PT_PTW_PLB_SHIFT) & 3;
	if (plb > 1)
		return -ptpkt_err_bad_packet;
	unsigned n = plb ? 8 : 4;
	NEED(2 + n);
	pkt->type = ptpkt_ptw;
	pkt->size = (uint8_t)(2 + n);
	pkt->u.ptw.bytes = (uint8_t)n;
	pkt->u.ptw.ip = (p[1] & PT_EXT_IP_BIT) != 0;
	pkt->u.ptw.payload = efipt_load_le(p + 2, n);
	return (int)(2 + n);
}

/* MWAIT: 02 c2, Hints[7:0], reserved, EXT[1:0] in byte 6 (33.4.2.23). */
static inline int decode_mwait(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(10);
	pkt->type = ptpkt_mwait;
	pkt->size = 10;
	pkt->u.mwait.hints = p[2];
	pkt->u.mwait.ext = p[6] & 3;
	return 10;
}

/* PWRE: 02 22, HW in byte 2 bit 7, C-state:sub C-state in byte 3
 * (33.4.2.24). */
static inline int decode_pwre(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(4);
	pkt->type = ptpkt_pwre;
	pkt->size = 4;
	pkt->u.pwre.hw = p[2] >> 7;
	pkt->u.pwre.state = p[3] >> 4;
	pkt->u.pwre.sub = p[3] & 0xf;
	return 4;
}

/* PWRX: 02 a2, Last:Deepest core C-state in byte 2, wake reason in byte 3
 * bits 3:0 (33.4.2.25). */
static inline int decode_pwrx(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(7);
	pkt->type = ptpkt_pwrx;
	pkt->size = 7;
	pkt->u.pwrx.last = p[2] >> 4;
	pkt->u.pwrx.deepest = p[2] & 0xf;
	pkt->u.pwrx.wr = p[3] & 0xf;
	return 7;
}

/* BBP: 02 63, SZ in byte 2 bit 7, Type[4:0] (33.4.2.26). */
static inline int decode_bbp(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(3);
	pkt->type = ptpkt_bbp;
	pkt->size = 3;
	pkt->u.bbp.sz = p[2] >> 7;
	pkt->u.bbp.type = p[2] & 0x1f;
	return 3;
}

/* BIP: ID in bits 7:3, 100b, then a 4- or 8-byte payload whose size the
 * BBP gave (33.4.2.27). */
static inline int decode_bip(const uint8_t *p, size_t avail, unsigned block, struct ptpkt *pkt)
{
	NEED(1 + block);
	pkt->type = ptpkt_bip;
	pkt->size = (uint8_t)(1 + block);
	pkt->u.bip.id = p[0] >> 3;
	pkt->u.bip.bytes = (uint8_t)block;
	pkt->u.bip.payload = efipt_load_le(p + 1, block);
	return (int)(1 + block);
}

/* CFE: 02 13, IP | Type[4:0], Vector (33.4.2.29). */
static inline int decode_cfe(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(4);
	pkt->type = ptpkt_cfe;
	pkt->size = 4;
	pkt->u.cfe.ip = p[2] >> 7;
	pkt->u.cfe.type = p[2] & 0x1f;
	pkt->u.cfe.vector = p[3];
	return 4;
}

/* EVD: 02 53, Type[5:0], 8-byte payload (33.4.2.30). */
static inline int decode_evd(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(11);
	pkt->type = ptpkt_evd;
	pkt->size = 11;
	pkt->u.evd.type = p[2] & 0x3f;
	pkt->u.evd.payload = efipt_le64(p + 3);
	return 11;
}

static inline int decode_ext(const uint8_t *p, size_t avail, struct ptpkt *pkt)
{
	NEED(2);
	switch ((enum ptpkt_type)ext_kind[p[1]]) {
	case ptpkt_psb:    return decode_psb(p, avail, pkt);
	case ptpkt_psbend: return decode_fixed(pkt, ptpkt_psbend, avail, PT_SIZE_PSBEND);
	case ptpkt_tnt64:  return decode_tnt64(p, avail, pkt);
	case ptpkt_pip:    return decode_pip(p, avail, pkt);
	case ptpkt_cbr:    return decode_cbr(p, avail, pkt);
	case ptpkt_tma:    return decode_tma(p, avail, pkt);
	case ptpkt_stop:   return decode_fixed(pkt, ptpkt_stop, avail, PT_SIZE_STOP);
	case ptpkt_ovf:    return decode_fixed(pkt, ptpkt_ovf, avail, PT_SIZE_OVF);
	case ptpkt_mnt:    return decode_mnt(p, avail, pkt);
	case ptpkt_vmcs:   return decode_vmcs(p, avail, pkt);
	case ptpkt_ptw:    return decode_ptw(p, avail, pkt);
	case ptpkt_exstop:
		pkt->u.exstop.ip = (p[1] & PT_EXT_IP_BIT) != 0;
		return decode_fixed(pkt, ptpkt_exstop, avail, PT_SIZE_EXSTOP);
	case ptpkt_mwait:  return decode_mwait(p, avail, pkt);
	case ptpkt_pwre:   return decode_pwre(p, avail, pkt);
	case ptpkt_pwrx:   return decode_pwrx(p, avail, pkt);
	case ptpkt_bbp:    return decode_bbp(p, avail, pkt);
	case ptpkt_bep:
		pkt->u.bep.ip = (p[1] & PT_EXT_IP_BIT) != 0;
		return decode_fixed(pkt, ptpkt_bep, avail, PT_SIZE_BEP);
	case ptpkt_cfe:    return decode_cfe(p, avail, pkt);
	case ptpkt_evd:    return decode_evd(p, avail, pkt);
	default:
		break;
	}
	return -ptpkt_err_bad_opc;
}

/* The one dispatch: first byte class, then the packet's decoder. */
static inline __attribute__((always_inline)) int
decode_one(const uint8_t *p, size_t avail, unsigned block, struct ptpkt *pkt)
{
	if (!avail)
		return -ptpkt_err_eos;
	uint8_t b = p[0];
	switch (cls1[b]) {
	case C_TNT:
		if (block && (b & PT_BIP_MASK) == PT_BIP_BITS)
			return decode_bip(p, avail, block, pkt);
		return decode_tnt8(p, pkt);
	case C_PAD:
		pkt->type = ptpkt_pad;
		pkt->size = PT_SIZE_PAD;
		return PT_SIZE_PAD;
	case C_CYC:  return decode_cyc(p, avail, pkt);
	case C_TIP:  return decode_ip(p, avail, ptpkt_tip, pkt);
	case C_PGE:  return decode_ip(p, avail, ptpkt_tip_pge, pkt);
	case C_PGD:  return decode_ip(p, avail, ptpkt_tip_pgd, pkt);
	case C_FUP:  return decode_ip(p, avail, ptpkt_fup, pkt);
	case C_EXT:  return decode_ext(p, avail, pkt);
	case C_TSC:  return decode_tsc(p, avail, pkt);
	case C_MTC:  return decode_mtc(p, avail, pkt);
	case C_MODE: return decode_mode(p, avail, pkt);
	}
	return -ptpkt_err_bad_opc;
}

int ptpkt_decode(const uint8_t *p, size_t avail, unsigned block, struct ptpkt *pkt)
{
	if (!p && avail)
		return -ptpkt_err_invalid;
	if (!pkt || (block != 0 && block != 4 && block != 8))
		return -ptpkt_err_invalid;
	struct ptpkt tmp;
	int n = decode_one(p, avail, block, &tmp);
	if (n > 0)
		*pkt = tmp;
	return n;
}

/* Packets that cannot occur inside a block (Table 33-15), plus OVF, which
 * ends a block (33.4.1.1), and BEP; BBP opens a new one. */
static inline unsigned block_after(unsigned block, unsigned type, bool sz)
{
	switch (type) {
	case ptpkt_bbp:
		return sz ? 4 : 8;
	case ptpkt_bep: case ptpkt_ovf:
	case ptpkt_tnt8: case ptpkt_tnt64:
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd:
	case ptpkt_mode_exec: case ptpkt_mode_tsx: case ptpkt_pip: case ptpkt_vmcs:
	case ptpkt_stop: case ptpkt_psb: case ptpkt_psbend: case ptpkt_ptw:
	case ptpkt_mwait:
		return 0;
	default:
		return block;
	}
}

unsigned ptpkt_block_after(unsigned block, const struct ptpkt *pkt)
{
	return block_after(block, pkt->type, pkt->type == ptpkt_bbp && pkt->u.bbp.sz);
}

void ptpkt_init(struct ptpkt_decoder *d, const uint8_t *buf, size_t size, uint64_t base)
{
	d->begin = buf;
	d->end = size ? buf + size : buf; /* an empty mapping may be NULL */
	d->pos = buf;
	d->base = base;
	d->block = 0;
	d->sync = false;
}

void ptpkt_set_buffer(struct ptpkt_decoder *d, const uint8_t *buf, size_t size, uint64_t base)
{
	d->begin = buf;
	d->end = size ? buf + size : buf; /* an empty mapping may be NULL */
	d->pos = buf;
	d->base = base;
}

uint64_t ptpkt_offset(const struct ptpkt_decoder *d)
{
	return d->base + (uint64_t)(d->pos - d->begin);
}

int ptpkt_next(struct ptpkt_decoder *d, struct ptpkt *pkt)
{
	if (!d->sync)
		return -ptpkt_err_nosync;
	int n = decode_one(d->pos, (size_t)(d->end - d->pos), d->block, pkt);
	if (n > 0) {
		d->pos += n;
		/* Outside a block only a BBP changes the block state. */
		if (__builtin_expect(d->block != 0 || pkt->type == ptpkt_bbp, 0))
			d->block = (uint8_t)block_after(d->block, pkt->type,
							pkt->type == ptpkt_bbp && pkt->u.bbp.sz);
	} else if (n != -ptpkt_err_eos && n != -ptpkt_err_truncated) {
		d->sync = false;
	}
	return n;
}

/*
 * Scan fast path: the size and type of packets whose first byte alone
 * determines both (PAD, short TNT, 1-byte CYC, TIP/TIP.PGE/TIP.PGD/FUP with
 * a defined IPBytes, TSC, MTC); 0 sends the byte to the full decoder
 * (extended opcodes, longer CYC, MODE, reserved and unknown encodings).
 * Computed at compile time from the same first-byte rules as cls1.
 */
#define IPLEN(b) (ipc_len_c((b) >> PT_OPC_IPBYTES_SHIFT) < 0 ? 0 : 1 + ipc_len_c((b) >> PT_OPC_IPBYTES_SHIFT))
#define ipc_len_c(i) ((i) == 0 ? 0 : (i) == 1 ? 2 : (i) == 2 ? 4 : (i) == 3 || (i) == 4 ? 6 : \
		      (i) == 6 ? 8 : -1)
#define IS_ANY_IP(b) (IS_IP(b, TIP_PGD) || IS_IP(b, TIP) || IS_IP(b, TIP_PGE) || IS_IP(b, FUP))
#define FLEN(b) ((b) == PT_OPC_PAD ? PT_SIZE_PAD : (b) == PT_OPC_EXT ? 0 : !((b) & 1) ? 1 :      \
		 IS_CYC(b) ? (((b) & PT_CYC_EXP) ? 0 : 1) : IS_ANY_IP(b) ? IPLEN(b) :             \
		 (b) == PT_OPC_TSC ? PT_SIZE_TSC : (b) == PT_OPC_MTC ? PT_SIZE_MTC : 0)
#define FTYPE(b) ((b) == PT_OPC_PAD ? ptpkt_pad : (b) == PT_OPC_EXT ? 0 : !((b) & 1) ? ptpkt_tnt8 : \
		  IS_CYC(b) ? ptpkt_cyc : IS_IP(b, TIP_PGD) ? ptpkt_tip_pgd :                    \
		  IS_IP(b, TIP) ? ptpkt_tip : IS_IP(b, TIP_PGE) ? ptpkt_tip_pge :                 \
		  IS_IP(b, FUP) ? ptpkt_fup : (b) == PT_OPC_TSC ? ptpkt_tsc :                     \
		  (b) == PT_OPC_MTC ? ptpkt_mtc : 0)
static const uint8_t fast_len[256] = { T256(FLEN) };
static const uint8_t fast_type[256] = { T256(FTYPE) };

/*
 * Second-level fast path, for the first bytes fast_len sends away: the
 * extended packets of fixed size that need no payload check (by byte 1),
 * long TNT with its stop bit, and CYC of up to 9 bytes (at most 61 bits,
 * so never too long). PSB, MNT, BBP, reserved PTW sizes, MODE and unknown
 * opcodes still take the full decoder.
 */
#define XLEN(name, type, byte, size, scan) [byte] = (scan) ? (size) : 0,
#define XTYPE(name, type, byte, size, scan) [byte] = (scan) ? (type) : 0,
static const uint8_t ext_len[256] = { PT_OPCODES_EXT(XLEN) };
static const uint8_t ext_type[256] = { PT_OPCODES_EXT(XTYPE) };

/* Size of the packet at p (at least PTPKT_MAX_SIZE bytes readable, outside
 * a block) if the second-level path takes it, else 0. */
static inline unsigned scan_medium(const uint8_t *p, unsigned *type)
{
	uint8_t b = p[0];
	if (b == PT_OPC_EXT) {
		unsigned n = ext_len[p[1]];
		if (p[1] == PT_EXT_LTNT && !efipt_load_le(p + 2, 6))
			return 0; /* long TNT without a stop bit: bad */
		*type = ext_type[p[1]];
		return n;
	}
	if (IS_CYC(b) && (b & PT_CYC_EXP)) { /* CYC with Exp set */
		for (unsigned i = 1; i < 9; i++)
			if (!(p[i] & 1)) {
				*type = ptpkt_cyc;
				return i + 1;
			}
	}
	return 0;
}

/* One chain of the scan: a stretch of the buffer decoded on its own. */
struct scan_chain {
	const uint8_t *start; /* a PSB, except for the first chain */
	const uint8_t *pos;
	const uint8_t *lim;   /* stop at or after this (a PSB, or the end) */
	unsigned block;
	int err;              /* 0 while running, then 1 (reached lim) or < 0 */
	struct ptpkt_stat st;
	uint64_t by_byte[256]; /* fast-path packets counted by first byte */
};

/* One packet through the full decoder; returns its size or an error. */
static inline int scan_slow(struct scan_chain *c, const uint8_t *end)
{
	struct ptpkt pkt;
	int n = decode_one(c->pos, (size_t)(end - c->pos), c->block, &pkt);
	if (n <= 0)
		return n;
	c->pos += n;
	c->st.count[pkt.type]++;
	c->st.bytes[pkt.type] += (unsigned)n;
	/* Outside a block only a BBP changes the block state. */
	if (__builtin_expect(c->block != 0 || pkt.type == ptpkt_bbp, 0))
		c->block = block_after(c->block, pkt.type, pkt.type == ptpkt_bbp && pkt.u.bbp.sz);
	return n;
}

/* Full-decoder packets until outside a block again (or the chain's limit). */
static int scan_slow_block(struct scan_chain *c, const uint8_t *end)
{
	int n;
	do {
		n = scan_slow(c, end);
	} while (n > 0 && c->block && c->pos < c->lim);
	return n;
}

/* A packet the first-byte tables do not size: the second-level path, else
 * the full decoder (through a whole block). Out of line: it is rare, and
 * keeps the four-chain loop in registers. */
static __attribute__((noinline, cold)) int scan_other(struct scan_chain *c, const uint8_t *end)
{
	unsigned t, n;
	if (end - c->pos >= PTPKT_MAX_SIZE && (n = scan_medium(c->pos, &t)) != 0) {
		c->st.count[t]++;
		c->st.bytes[t] += n;
		c->pos += n;
		return (int)n;
	}
	return scan_slow_block(c, end);
}

/* Run chain c until it reaches its limit or fails. */
static void scan_run(struct scan_chain *c, const uint8_t *end)
{
	const uint8_t *fast_end = end - PTPKT_MAX_SIZE;
	while (c->pos < c->lim) {
		/* Outside blocks, with room for any packet, most packets take
		 * two table loads: no bounds check, no field extraction. */
		if (!c->block) {
			const uint8_t *pos = c->pos, *lim = c->lim < fast_end ? c->lim : fast_end;
			while (pos < lim) {
				uint8_t b = *pos;
				unsigned len = fast_len[b], t;
				if (__builtin_expect(len != 0, 1)) {
					c->by_byte[b]++;
				} else if ((len = scan_medium(pos, &t)) != 0) {
					c->st.count[t]++;
					c->st.bytes[t] += len;
				} else {
					break;
				}
				pos += len;
			}
			c->pos = pos;
			if (pos >= c->lim)
				break;
		}
		int n = scan_slow(c, end);
		if (n <= 0) {
			c->err = n;
			return;
		}
	}
	c->err = 1;
}

static void scan_fold(struct scan_chain *c, struct ptpkt_stat *st)
{
	for (unsigned b = 0; b < 256; b++) {
		if (!c->by_byte[b])
			continue;
		st->count[fast_type[b]] += c->by_byte[b];
		st->bytes[fast_type[b]] += c->by_byte[b] * fast_len[b];
	}
	for (unsigned t = 0; t < ptpkt_ntypes; t++) {
		st->count[t] += c->st.count[t];
		st->bytes[t] += c->st.bytes[t];
	}
}

static bool is_psb_at(const uint8_t *p, const uint8_t *end);

#define SCAN_CHAINS 4
#define SCAN_SPLIT_MIN (64u << 10)   /* smaller buffers: one chain */
#define SCAN_PSB_SEARCH (64u << 10)  /* how far to look for a split PSB */

/*
 * The first-byte loads of consecutive packets form one dependency chain,
 * so the scan decodes up to four stretches of the buffer at once, each
 * starting at a PSB (a packet boundary, and no state crosses it: 33.3.7).
 * A stretch's packets only count once the stretch before it has ended
 * exactly on its PSB; otherwise (an error first, or a PSB pattern that was
 * really inside a packet) decoding continues sequentially from there, so
 * the result is always that of a packet-by-packet decode.
 */
int ptpkt_scan(struct ptpkt_decoder *d, struct ptpkt_stat *st)
{
	if (!d->sync)
		return -ptpkt_err_nosync;
	struct scan_chain ch[SCAN_CHAINS];
	const uint8_t *end = d->end;
	size_t len = (size_t)(end - d->pos);
	unsigned k = 1;

	efipt_memset(&ch[0], 0, sizeof(ch[0]));
	ch[0].start = ch[0].pos = d->pos;
	ch[0].block = d->block;
	if (len >= SCAN_SPLIT_MIN) {
		for (unsigned i = 1; i < SCAN_CHAINS; i++) {
			const uint8_t *p = d->pos + len / SCAN_CHAINS * i;
			const uint8_t *stop = p + SCAN_PSB_SEARCH < end ? p + SCAN_PSB_SEARCH : end;
			if (p <= ch[k - 1].pos)
				continue;
			for (; p < stop; p++)
				if (*p == PT_OPC_EXT && is_psb_at(p, end))
					break;
			if (p >= stop)
				continue;
			ch[k - 1].lim = p;
			efipt_memset(&ch[k], 0, sizeof(ch[k]));
			ch[k].start = ch[k].pos = p;
			k++;
		}
	}
	ch[k - 1].lim = end;

	if (k == SCAN_CHAINS) {
		/* All four chains step together: four independent load chains.
		 * A first byte the tables do not know takes the full decoder
		 * (through a whole packet block, so the fast step never sees a
		 * BIP header). */
		const uint8_t *p0 = ch[0].pos, *p1 = ch[1].pos, *p2 = ch[2].pos, *p3 = ch[3].pos;
		const uint8_t *l0 = ch[0].lim, *l1 = ch[1].lim, *l2 = ch[2].lim;
		const uint8_t *l3 = end - PTPKT_MAX_SIZE;
		if (ch[0].block) {
			int r = scan_slow_block(&ch[0], end);
			if (r <= 0)
				ch[0].err = r;
			p0 = ch[0].pos;
		}
#define STEP(i)                                                                  \
	do {                                                                     \
		uint8_t b_ = *p##i;                                              \
		unsigned n_ = fast_len[b_];                                      \
		if (__builtin_expect(n_ != 0, 1)) {                              \
			ch[i].by_byte[b_]++;                                     \
			p##i += n_;                                              \
		} else {                                                         \
			ch[i].pos = p##i;                                        \
			int r_ = scan_other(&ch[i], end);                        \
			/* After a block, or still inside one at the limit, \
			 * re-check the limits before the next fast step. */ \
			if (ch[i].block || ch[i].pos - p##i > PTPKT_MAX_SIZE)    \
				steps = 1;                                       \
			p##i = ch[i].pos;                                        \
			if (r_ <= 0) {                                           \
				ch[i].err = r_;                                  \
				goto chains_out;                                 \
			}                                                        \
		}                                                                \
	} while (0)
		for (;;) {
			/* Steps without a bounds check: no packet is longer
			 * than PTPKT_MAX_SIZE, so each chain can take room/16. */
			size_t room = (size_t)(l0 - p0);
			if ((size_t)(l1 - p1) < room) room = (size_t)(l1 - p1);
			if ((size_t)(l2 - p2) < room) room = (size_t)(l2 - p2);
			if ((size_t)(l3 - p3) < room) room = (size_t)(l3 - p3);
			if (p0 >= l0 || p1 >= l1 || p2 >= l2 || p3 >= l3 || room < PTPKT_MAX_SIZE)
				break;
			for (size_t steps = room / PTPKT_MAX_SIZE; steps; steps--) {
				STEP(0);
				STEP(1);
				STEP(2);
				STEP(3);
			}
		}
#undef STEP
chains_out:
		ch[0].pos = p0, ch[1].pos = p1, ch[2].pos = p2, ch[3].pos = p3;
	}

	/* Finish the chains in order; count a chain only if the one before
	 * ended exactly where it starts. */
	const uint8_t *pos = d->pos;
	unsigned block = d->block;
	int n = -ptpkt_err_eos;
	for (unsigned i = 0; i < k; i++) {
		if (!ch[i].err)
			scan_run(&ch[i], end);
		scan_fold(&ch[i], st);
		pos = ch[i].pos;
		block = ch[i].block;
		n = ch[i].err;
		if (n < 0)
			break;
		if (i + 1 < k && pos != ch[i + 1].start) {
			/* Overshot a PSB pattern inside a packet: go on alone. */
			efipt_memset(&ch[i + 1], 0, sizeof(ch[i + 1]));
			ch[i + 1].start = ch[i + 1].pos = pos;
			ch[i + 1].block = block;
			ch[i + 1].lim = end;
			k = i + 2;
		}
	}
	d->pos = pos;
	d->block = (uint8_t)block;
	if (n > 0)
		n = -ptpkt_err_eos; /* the last chain reached the end of the buffer */
	if (n != -ptpkt_err_eos && n != -ptpkt_err_truncated)
		d->sync = false;
	return n;
}

static bool is_psb_at(const uint8_t *p, const uint8_t *end)
{
	if (end - p < PTPKT_PSB_SIZE)
		return false;
	for (unsigned i = 0; i < PTPKT_PSB_SIZE; i += 2)
		if (p[i] != PT_OPC_EXT || p[i + 1] != PT_EXT_PSB)
			return false;
	return true;
}

/*
 * The PSB pattern cannot be formed by any legal packet combination
 * (33.3.7), so a byte search finds packet boundaries.
 */
int ptpkt_sync_forward(struct ptpkt_decoder *d)
{
	const uint8_t *p = d->pos + (d->sync && d->pos < d->end ? 1 : 0);
	for (; p + PTPKT_PSB_SIZE <= d->end; p++) {
		if (*p == PT_OPC_EXT && is_psb_at(p, d->end)) {
			d->pos = p;
			d->sync = true;
			d->block = 0;
			return 0;
		}
	}
	/* Leave pos where a PSB cut by the end could begin. */
	d->pos = p > d->end ? d->end : p;
	d->sync = false;
	return -ptpkt_err_eos;
}

int ptpkt_sync_backward(struct ptpkt_decoder *d)
{
	const uint8_t *p = d->pos;
	while (p > d->begin) {
		p--;
		if (*p == PT_OPC_EXT && is_psb_at(p, d->end)) {
			d->pos = p;
			d->sync = true;
			d->block = 0;
			return 0;
		}
	}
	return -ptpkt_err_eos;
}

int ptpkt_sync_set(struct ptpkt_decoder *d, uint64_t off)
{
	if (off < d->base || off - d->base > (uint64_t)(d->end - d->begin))
		return -ptpkt_err_eos;
	d->pos = d->begin + (off - d->base);
	d->sync = true;
	d->block = 0;
	return 0;
}

void ptpkt_lastip_init(struct ptpkt_lastip *l)
{
	l->ip = 0;
}

/* Table 33-18: suppressed upper bytes come from Last IP; 011b sign-extends
 * bit 47. PSB resets Last IP to zero; IPBytes 000b leaves it as it was. */
int ptpkt_lastip_apply(struct ptpkt_lastip *l, const struct ptpkt *pkt, uint64_t *ip)
{
	switch (pkt->type) {
	case ptpkt_psb:
		l->ip = 0;
		return 0;
	case ptpkt_tip: case ptpkt_tip_pge: case ptpkt_tip_pgd: case ptpkt_fup:
		break;
	default:
		return 0;
	}
	uint64_t v = pkt->u.ip.ip, last = l->ip;
	switch (pkt->u.ip.ipc) {
	case 0:
		return -ptpkt_err_noip;
	case 1:
		v = (last & ~0xffffull) | (v & 0xffff);
		break;
	case 2:
		v = (last & ~0xffffffffull) | (v & 0xffffffff);
		break;
	case 3:
		v &= 0xffffffffffffull;
		if (v & (1ull << 47))
			v |= 0xffff000000000000ull;
		break;
	case 4:
		v = (last & 0xffff000000000000ull) | (v & 0xffffffffffffull);
		break;
	case 6:
		break;
	default:
		return -ptpkt_err_bad_packet;
	}
	l->ip = v;
	if (ip)
		*ip = v;
	return 1;
}

const char *ptpkt_errstr(int err)
{
	enum ptpkt_error e = (enum ptpkt_error)(err < 0 ? -err : err);
	switch (e) {
	case ptpkt_ok:             return "success";
	case ptpkt_err_eos:        return "end of trace";
	case ptpkt_err_truncated:  return "truncated packet (need more bytes)";
	case ptpkt_err_bad_opc:    return "unknown opcode";
	case ptpkt_err_bad_packet: return "bad packet payload";
	case ptpkt_err_nosync:     return "not synchronised (no PSB)";
	case ptpkt_err_invalid:    return "invalid argument";
	case ptpkt_err_nospace:    return "no space in output buffer";
	case ptpkt_err_noip:       return "IP suppressed";
	}
	return "unknown error";
}

const char *ptpkt_name(enum ptpkt_type type)
{
	switch (type) {
	case ptpkt_invalid:   return "invalid";
	case ptpkt_pad:       return "pad";
	case ptpkt_psb:       return "psb";
	case ptpkt_psbend:    return "psbend";
	case ptpkt_tnt8:      return "tnt.8";
	case ptpkt_tnt64:     return "tnt.64";
	case ptpkt_tip:       return "tip";
	case ptpkt_tip_pge:   return "tip.pge";
	case ptpkt_tip_pgd:   return "tip.pgd";
	case ptpkt_fup:       return "fup";
	case ptpkt_pip:       return "pip";
	case ptpkt_mode_exec: return "mode.exec";
	case ptpkt_mode_tsx:  return "mode.tsx";
	case ptpkt_stop:      return "stop";
	case ptpkt_tsc:       return "tsc";
	case ptpkt_tma:       return "tma";
	case ptpkt_mtc:       return "mtc";
	case ptpkt_cyc:       return "cyc";
	case ptpkt_cbr:       return "cbr";
	case ptpkt_ovf:       return "ovf";
	case ptpkt_vmcs:      return "vmcs";
	case ptpkt_mnt:       return "mnt";
	case ptpkt_ptw:       return "ptw";
	case ptpkt_exstop:    return "exstop";
	case ptpkt_mwait:     return "mwait";
	case ptpkt_pwre:      return "pwre";
	case ptpkt_pwrx:      return "pwrx";
	case ptpkt_bbp:       return "bbp";
	case ptpkt_bip:       return "bip";
	case ptpkt_bep:       return "bep";
	case ptpkt_cfe:       return "cfe";
	case ptpkt_evd:       return "evd";
	case ptpkt_ntypes:    break;
	}
	return "invalid";
}
