/*
 * Intel PT packet opcodes and sizes (Intel SDM Vol. 3C 33.4.2): the one
 * place the packet bytes are written down. The packet decoder's dispatch
 * and scan tables (pt_pkt_dec.c), the encoder (pt_pkt_enc.c) and the flow
 * decoder's inline readers (pt_flow_int.h) take their bytes from here.
 *
 * First byte (bit 7 .. bit 0):
 *   0000 0000  PAD             xxxx xxx0  short TNT (stop bit + 1..6 bits)
 *   0000 0010  extended        xxxx xx11  CYC (bit 2: Exp, more bytes)
 *   iii0 0001  TIP.PGD         iii0 1101  TIP
 *   iii1 0001  TIP.PGE         iii1 1101  FUP
 *   0001 1001  TSC             0101 1001  MTC        1001 1001  MODE
 * Inside a packet block, xxxx x100 is a BIP header (33.4.1.1).
 */
#ifndef EFIPT_CORE_PT_OPCODES_H
#define EFIPT_CORE_PT_OPCODES_H

#include "core/pt_pkt.h"

/* Packets told apart by their whole first byte: X(name, type, byte, size). */
#define PT_OPCODES_1(X)                                                   \
	X(PAD, ptpkt_pad, 0x00, 1)                                        \
	X(EXT, ptpkt_invalid, 0x02, 2) /* the opcode is byte 1 */         \
	X(TSC, ptpkt_tsc, 0x19, 8)                                        \
	X(MTC, ptpkt_mtc, 0x59, 2)                                        \
	X(MODE, ptpkt_invalid, 0x99, 2) /* the leaf is byte 1 bits 7:5 */

/* IP packets (33.4.2.2-6): the opcode in bits 4:0, IPBytes in bits 7:5,
 * then the payload (Table 33-18): X(name, type, bits 4:0). */
#define PT_OPCODES_IP(X)                                                  \
	X(TIP_PGD, ptpkt_tip_pgd, 0x01)                                   \
	X(TIP, ptpkt_tip, 0x0d)                                           \
	X(TIP_PGE, ptpkt_tip_pge, 0x11)                                   \
	X(FUP, ptpkt_fup, 0x1d)
#define PT_OPC_IP_MASK 0x1f
#define PT_OPC_IPBYTES_SHIFT 5

/*
 * Extended packets, 02 then byte 1: X(name, type, byte 1, size, scan).
 * scan: the size follows from byte 1 alone, no payload check needed (the
 * packet scan's second level takes it). Byte 1 bit 7 is the IP bit of
 * PTW, EXSTOP and BEP; bits 6:5 of PTW are PayloadBytes (01b: 8 bytes,
 * 1xb reserved: kept here so that they decode as bad packets, not as
 * unknown opcodes).
 */
#define PT_OPCODES_EXT(X)                                                 \
	X(PSB, ptpkt_psb, 0x82, 16, 0) /* 02 82 eight times (33.4.2.17) */ \
	X(PSBEND, ptpkt_psbend, 0x23, 2, 1)                               \
	X(LTNT, ptpkt_tnt64, 0xa3, 8, 1)                                  \
	X(PIP, ptpkt_pip, 0x43, 8, 1)                                     \
	X(CBR, ptpkt_cbr, 0x03, 4, 1)                                     \
	X(TMA, ptpkt_tma, 0x73, 7, 1)                                     \
	X(STOP, ptpkt_stop, 0x83, 2, 1)                                   \
	X(OVF, ptpkt_ovf, 0xf3, 2, 1)                                     \
	X(MNT, ptpkt_mnt, 0xc3, 11, 0) /* then PT_MNT_BYTE2 */            \
	X(VMCS, ptpkt_vmcs, 0xc8, 7, 1)                                   \
	X(PTW4, ptpkt_ptw, 0x12, 6, 1)                                    \
	X(PTW8, ptpkt_ptw, 0x32, 10, 1)                                   \
	X(PTW4_IP, ptpkt_ptw, 0x92, 6, 1)                                 \
	X(PTW8_IP, ptpkt_ptw, 0xb2, 10, 1)                                \
	X(PTW_RSV2, ptpkt_ptw, 0x52, 0, 0)                                \
	X(PTW_RSV3, ptpkt_ptw, 0x72, 0, 0)                                \
	X(PTW_RSV2_IP, ptpkt_ptw, 0xd2, 0, 0)                             \
	X(PTW_RSV3_IP, ptpkt_ptw, 0xf2, 0, 0)                             \
	X(EXSTOP, ptpkt_exstop, 0x62, 2, 1)                               \
	X(EXSTOP_IP, ptpkt_exstop, 0xe2, 2, 1)                            \
	X(MWAIT, ptpkt_mwait, 0xc2, 10, 1)                                \
	X(PWRE, ptpkt_pwre, 0x22, 4, 1)                                   \
	X(PWRX, ptpkt_pwrx, 0xa2, 7, 1)                                   \
	X(BBP, ptpkt_bbp, 0x63, 3, 0) /* opens a block: not scanned */    \
	X(BEP, ptpkt_bep, 0x33, 2, 1)                                     \
	X(BEP_IP, ptpkt_bep, 0xb3, 2, 1)                                  \
	X(CFE, ptpkt_cfe, 0x13, 4, 1)                                     \
	X(EVD, ptpkt_evd, 0x53, 11, 1)

#define PT_OPC_1_(name, type, byte, size) PT_OPC_##name = byte, PT_SIZE_##name = size,
#define PT_OPC_IP_(name, type, byte) PT_OPC_##name = byte,
#define PT_OPC_EXT_(name, type, byte, size, scan) PT_EXT_##name = byte, PT_SIZE_##name = size,
enum { PT_OPCODES_1(PT_OPC_1_) PT_OPCODES_IP(PT_OPC_IP_) PT_OPCODES_EXT(PT_OPC_EXT_) };
#undef PT_OPC_1_
#undef PT_OPC_IP_
#undef PT_OPC_EXT_

#define PT_EXT_IP_BIT 0x80	/* PTW, EXSTOP, BEP: byte 1 bit 7 */
#define PT_PTW_PLB_SHIFT 5	/* PTW: PayloadBytes in byte 1 bits 6:5 */
#define PT_MNT_BYTE2 0x88	/* MNT: 02 c3 88 (33.4.2.19) */
#define PT_MODE_LEAF_SHIFT 5	/* MODE: leaf ID in byte 1 bits 7:5 */
enum { PT_MODE_LEAF_EXEC = 0, PT_MODE_LEAF_TSX = 1 };
#define PT_CYC_MASK 0x03	/* CYC: xxxx xx11 */
#define PT_CYC_EXP 0x04		/* CYC: more bytes follow */
#define PT_BIP_MASK 0x07	/* BIP header in a block: xxxx x100 */
#define PT_BIP_BITS 0x04

/* Short TNT: any even first byte but PAD and EXT (33.4.2.1). */
static inline int pt_opc_is_tnt8(unsigned b)
{
	return !(b & 1) && b != PT_OPC_PAD && b != PT_OPC_EXT;
}

_Static_assert(PT_SIZE_PSB == PTPKT_PSB_SIZE, "PSB size");
_Static_assert(PT_OPC_PAD < PT_OPC_EXT && PT_OPC_EXT == 2,
	       "the even first bytes up to EXT are no TNT (pt_flow_int.h short_tnt)");

#endif
