/*
 * Intel PT packet layer: decoder, encoder, last-IP reconstruction, sync.
 *
 * Specification: Intel SDM Vol. 3C, section 33.4 "Trace Packets and Data
 * Types" (packet formats in 33.4.2, packet blocks in 33.4.1.1, IP
 * compression in Table 33-18).
 *
 * Freestanding: no allocation, no global state. The caller owns every
 * struct. Functions return a non-negative value on success and a negative
 * enum ptpkt_error on failure (-ptpkt_err_bad_packet, ...).
 */
#ifndef EFIPT_CORE_PT_PKT_H
#define EFIPT_CORE_PT_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Errors, returned negated. ptpkt_errstr() has a message for each. */
enum ptpkt_error {
	ptpkt_ok = 0,
	ptpkt_err_eos,        /* no more bytes: the buffer ends on a packet boundary */
	ptpkt_err_truncated,  /* need more bytes: a packet is cut by the buffer end */
	ptpkt_err_bad_opc,    /* unknown opcode */
	ptpkt_err_bad_packet, /* known opcode, invalid payload (reserved encoding) */
	ptpkt_err_nosync,     /* decoder not synchronised / no PSB found */
	ptpkt_err_invalid,    /* invalid argument */
	ptpkt_err_nospace,    /* encoder: output buffer too small */
	ptpkt_err_noip,       /* IP packet with suppressed IP (IPBytes 000b) */
};

const char *ptpkt_errstr(int err);

/* Packet types. ptpkt_name() gives the DESIGN.md jsonl name ("tip.pge"). */
enum ptpkt_type {
	ptpkt_invalid = 0,
	ptpkt_pad,
	ptpkt_psb,
	ptpkt_psbend,
	ptpkt_tnt8,     /* short TNT, 1..6 bits */
	ptpkt_tnt64,    /* long TNT, 0..47 bits */
	ptpkt_tip,
	ptpkt_tip_pge,
	ptpkt_tip_pgd,
	ptpkt_fup,
	ptpkt_pip,
	ptpkt_mode_exec,
	ptpkt_mode_tsx,
	ptpkt_stop,     /* TraceStop */
	ptpkt_tsc,
	ptpkt_tma,
	ptpkt_mtc,
	ptpkt_cyc,
	ptpkt_cbr,
	ptpkt_ovf,
	ptpkt_vmcs,
	ptpkt_mnt,
	ptpkt_ptw,
	ptpkt_exstop,
	ptpkt_mwait,
	ptpkt_pwre,
	ptpkt_pwrx,
	ptpkt_bbp,
	ptpkt_bip,
	ptpkt_bep,
	ptpkt_cfe,
	ptpkt_evd,
	ptpkt_ntypes
};

const char *ptpkt_name(enum ptpkt_type type);

/* Largest packet: PSB, 16 bytes (an over-long CYC is at most 10). */
#define PTPKT_MAX_SIZE 16
#define PTPKT_PSB_SIZE 16

/*
 * One decoded packet. Only the union member of pkt.type is meaningful.
 * Values are the fields as sent, reserved bits dropped.
 */
struct ptpkt {
	uint8_t type;  /* enum ptpkt_type */
	uint8_t size;  /* bytes in the stream */
	union {
		/* TIP, TIP.PGE, TIP.PGD, FUP. ip is the raw payload, zero-extended:
		 * ipc 0 -> 0 bytes, 1 -> 2, 2 -> 4, 3 and 4 -> 6, 6 -> 8. */
		struct { uint8_t ipc; uint64_t ip; } ip;
		/* TNT: bit nbits-1 is the oldest branch (B1), bit 0 the youngest. */
		struct { uint8_t nbits; uint64_t bits; } tnt;
		struct { uint64_t cr3; bool nr; } pip;
		struct { bool csl, csd, iflag; } mode_exec;
		struct { bool intx, abrt; } mode_tsx;
		struct { uint64_t tsc; } tsc;             /* 56 bits */
		struct { uint16_t ctc; uint16_t fc; } tma; /* 16 and 9 bits */
		struct { uint8_t ctc; } mtc;
		struct { uint64_t cyc; } cyc;
		struct { uint8_t ratio; } cbr;
		struct { uint64_t base; } vmcs;           /* 4 KiB aligned address */
		struct { uint64_t payload; } mnt;
		struct { uint8_t bytes; bool ip; uint64_t payload; } ptw; /* 4 or 8 */
		struct { bool ip; } exstop;
		struct { uint8_t hints; uint8_t ext; } mwait; /* 8 and 2 bits */
		struct { uint8_t state, sub; bool hw; } pwre;  /* 4, 4 bits */
		struct { uint8_t last, deepest, wr; } pwrx;    /* 4, 4, 4 bits */
		struct { bool sz; uint8_t type; } bbp;  /* sz: 1 = 4-byte items */
		struct { uint8_t id; uint8_t bytes; uint64_t payload; } bip;
		struct { bool ip; } bep;
		struct { bool ip; uint8_t type; uint8_t vector; } cfe;
		struct { uint8_t type; uint64_t payload; } evd; /* 6-bit type */
	} u;
};

/*
 * Decode the single packet at p (avail bytes readable). block is the BIP
 * payload size of the enclosing packet block (4 or 8), or 0 outside a block
 * (SDM 33.4.1.1: inside a block a BIP header shares TNT's encoding).
 * Returns the packet size, or -ptpkt_err_truncated if avail ends inside the
 * packet (-ptpkt_err_eos if avail is 0), -ptpkt_err_bad_opc or
 * -ptpkt_err_bad_packet. pkt is written only on success.
 */
int ptpkt_decode(const uint8_t *p, size_t avail, unsigned block, struct ptpkt *pkt);

/* Block state after pkt: BBP opens (or replaces) a block; BEP, OVF and the
 * packets Table 33-15 forbids inside a block end it. */
unsigned ptpkt_block_after(unsigned block, const struct ptpkt *pkt);

/* Decoder over one caller-owned buffer. */
struct ptpkt_decoder {
	const uint8_t *begin;
	const uint8_t *end;
	const uint8_t *pos;
	uint64_t base;    /* stream offset of begin */
	uint8_t block;    /* 0, 4 or 8 */
	bool sync;
};

/* Start over buf; not synchronised; base is the stream offset of buf[0]. */
void ptpkt_init(struct ptpkt_decoder *d, const uint8_t *buf, size_t size, uint64_t base);
/* Continue into the next window of the stream (block and sync state kept):
 * buf[0] is stream offset base, where decoding resumes. */
void ptpkt_set_buffer(struct ptpkt_decoder *d, const uint8_t *buf, size_t size, uint64_t base);
/* Stream offset of the next packet. */
uint64_t ptpkt_offset(const struct ptpkt_decoder *d);

/*
 * Decode the next packet and advance past it. Returns its size, or a
 * negative error without advancing: -ptpkt_err_eos at the end of the buffer,
 * -ptpkt_err_truncated for a packet cut at the end, -ptpkt_err_bad_* for a
 * bad packet (the decoder is then out of sync: call ptpkt_sync_forward),
 * -ptpkt_err_nosync if not synchronised.
 */
int ptpkt_next(struct ptpkt_decoder *d, struct ptpkt *pkt);

/* Move to the next PSB: at or after pos when not synchronised, after pos
 * when synchronised. Returns 0, or -ptpkt_err_eos when none is left (pos is
 * then at the first byte that could still begin a PSB cut by the end). */
int ptpkt_sync_forward(struct ptpkt_decoder *d);
/* Move to the last PSB that starts before pos. -ptpkt_err_eos if none. */
int ptpkt_sync_backward(struct ptpkt_decoder *d);
/* Declare a packet boundary at stream offset off (inside the buffer) and
 * synchronise there, outside any block. */
int ptpkt_sync_set(struct ptpkt_decoder *d, uint64_t off);

/* Packet statistics: the --stat mode and the benchmark. */
struct ptpkt_stat {
	uint64_t count[ptpkt_ntypes];
	uint64_t bytes[ptpkt_ntypes];
};
/* Decode packets into st until an error or the end of the buffer; returns
 * that (negative) error, exactly as ptpkt_next would have returned it. */
int ptpkt_scan(struct ptpkt_decoder *d, struct ptpkt_stat *st);

/* Last-IP state for IP reconstruction (Table 33-18). */
struct ptpkt_lastip {
	uint64_t ip;
};
void ptpkt_lastip_init(struct ptpkt_lastip *l);
/*
 * Apply pkt: a PSB resets Last IP to 0 (33.4.2.2); an IP packet with an IP
 * stores the reconstructed IP in *ip and updates Last IP (returns 1); a
 * suppressed IP (IPBytes 000b) leaves Last IP unchanged (returns
 * -ptpkt_err_noip); a reserved IPBytes returns -ptpkt_err_bad_packet; any
 * other packet returns 0.
 */
int ptpkt_lastip_apply(struct ptpkt_lastip *l, const struct ptpkt *pkt, uint64_t *ip);
/* Bytes of IP payload for an IPBytes value, or -1 if reserved. */
int ptpkt_ipc_bytes(unsigned ipc);
/*
 * IP compression for an encoder (33.4.2.2, Table 33-18): the IPBytes
 * values whose payload reconstructs ip against Last IP last, as a mask of
 * 1u << IPBytes (6, the full IP, always; 3, the sign-extended 48 bits, for a
 * canonical ip; 1, 2 and 4 when the upper 48, 32 or 16 bits are last's).
 */
unsigned ptpkt_ip_choices(uint64_t ip, uint64_t last);
/* The payload that carries ip with IPBytes ipc (one of the choices). */
uint64_t ptpkt_ip_payload(uint64_t ip, unsigned ipc);

/*
 * Encode pkt at out (avail bytes). pkt.size is ignored. BIP uses
 * pkt.u.bip.bytes (4 or 8). CYC uses the shortest form. Returns the bytes
 * written or -ptpkt_err_nospace / -ptpkt_err_bad_packet (a value that does
 * not fit its field, a reserved encoding) / -ptpkt_err_bad_opc.
 */
int ptpkt_encode(uint8_t *out, size_t avail, const struct ptpkt *pkt);

/* True if a and b are the same type and the same payload fields (size too). */
bool ptpkt_same(const struct ptpkt *a, const struct ptpkt *b);

/* Encode a stream with every packet type, decode it back and compare.
 * Returns 0 or a negative error. For the firmware self-test. */
int ptpkt_selfcheck(void);

#endif
