/*
 * x86 instruction length decoder and branch classifier (see x86_insn.h).
 *
 * An instruction is, in order (SDM Vol. 2, 2.1 and 2.3):
 *
 *   legacy prefixes* REX? | VEX2/VEX3/XOP/EVEX   opcode   ModRM? SIB? disp? imm?
 *
 * The structure tables below (ModRM present, immediate kind, branch class)
 * are written from the SDM opcode maps, Vol. 2 Appendix A. Which opcodes are
 * defined in which mode comes from the generated tables in x86_valid.c.
 * Decoding is one pass over the bytes with table lookups; no calls through
 * pointers.
 */
#include "core/x86_insn.h"

#include "core/mem.h"
#include "core/x86_valid.h"

/* Immediate (or other trailing operand) kinds. */
enum {
	I_NONE,
	I_B,		/* imm8 */
	I_W,		/* imm16 */
	I_Z,		/* imm16/imm32 by operand size */
	I_V,		/* imm16/imm32/imm64 by operand size (B8+r) */
	I_WB,		/* imm16, imm8 (ENTER) */
	I_P,		/* ptr16:16 / ptr16:32 (far JMP/CALL) */
	I_R8,		/* rel8 */
	I_D,		/* imm32 (XOP map A) */
	/* Sizes that need more than the operand size: */
	I_RZ,		/* rel16/rel32; always rel32 in 64-bit mode */
	I_O,		/* moffs by address size */
	I_F6,		/* imm8 for /0 and /1 only (TEST) */
	I_F7,		/* immz for /0 and /1 only (TEST) */
	I_78,		/* 0F 78: imm8, imm8 with 66 or F2 (EXTRQ/INSERTQ) */
};

/* Immediate bytes by kind and operand size (16, 32, 64). */
static const uint8_t immsz[16][3] = {
	[I_B] = { 1, 1, 1 }, [I_W] = { 2, 2, 2 }, [I_Z] = { 2, 4, 4 }, [I_V] = { 2, 4, 8 },
	[I_WB] = { 3, 3, 3 }, [I_P] = { 4, 6, 6 }, [I_R8] = { 1, 1, 1 }, [I_D] = { 4, 4, 4 },
};

/* Structure entry: bits 0-3 immediate kind, bit 4 ModRM, bits 5-7 special. */
#define M	0x10	/* has ModRM */
#define ESC	0x20	/* escape/prefix-like byte handled in code */
#define FREG	0x40	/* ModRM mod field ignored: always a register (MOV CR/DR) */

/* One-byte map. Prefix bytes never reach this table. */
static const uint8_t op1b[256] = {
	[0x00 ... 0x03] = M, [0x04] = I_B, [0x05] = I_Z,
	[0x08 ... 0x0b] = M, [0x0c] = I_B, [0x0d] = I_Z, [0x0f] = ESC,
	[0x10 ... 0x13] = M, [0x14] = I_B, [0x15] = I_Z,
	[0x18 ... 0x1b] = M, [0x1c] = I_B, [0x1d] = I_Z,
	[0x20 ... 0x23] = M, [0x24] = I_B, [0x25] = I_Z,
	[0x28 ... 0x2b] = M, [0x2c] = I_B, [0x2d] = I_Z,
	[0x30 ... 0x33] = M, [0x34] = I_B, [0x35] = I_Z,
	[0x38 ... 0x3b] = M, [0x3c] = I_B, [0x3d] = I_Z,
	[0x62] = M | ESC, [0x63] = M,
	[0x68] = I_Z, [0x69] = M | I_Z, [0x6a] = I_B, [0x6b] = M | I_B,
	[0x70 ... 0x7f] = I_R8,
	[0x80] = M | I_B, [0x81] = M | I_Z, [0x82] = M | I_B, [0x83] = M | I_B,
	[0x84 ... 0x8e] = M, [0x8f] = M | ESC,
	[0x9a] = I_P,
	[0xa0 ... 0xa3] = I_O, [0xa8] = I_B, [0xa9] = I_Z,
	[0xb0 ... 0xb7] = I_B, [0xb8 ... 0xbf] = I_V,
	[0xc0] = M | I_B, [0xc1] = M | I_B, [0xc2] = I_W,
	[0xc4] = M | ESC, [0xc5] = M | ESC, [0xc6] = M | I_B, [0xc7] = M | I_Z,
	[0xc8] = I_WB, [0xca] = I_W, [0xcd] = I_B,
	[0xd0 ... 0xd3] = M, [0xd4] = I_B, [0xd5] = I_B, [0xd8 ... 0xdf] = M,
	[0xe0 ... 0xe3] = I_R8, [0xe4 ... 0xe7] = I_B,
	[0xe8] = I_RZ, [0xe9] = I_RZ, [0xea] = I_P, [0xeb] = I_R8,
	[0xf6] = M | I_F6, [0xf7] = M | I_F7, [0xfe] = M, [0xff] = M,
};

/* Two-byte map (0F xx). 0F 38 and 0F 3A are escapes; 0F 0F is 3DNow!. */
static const uint8_t op0f[256] = {
	[0x00 ... 0x03] = M, [0x0d] = M, [0x0f] = M | ESC,
	[0x10 ... 0x1f] = M,
	[0x20 ... 0x23] = M | FREG, [0x24 ... 0x2f] = M,
	[0x38] = ESC, [0x3a] = ESC,
	[0x40 ... 0x4f] = M,
	[0x50 ... 0x6f] = M, [0x70 ... 0x73] = M | I_B, [0x74 ... 0x76] = M,
	[0x78] = M | I_78, [0x79 ... 0x7f] = M,
	[0x80 ... 0x8f] = I_RZ,
	[0x90 ... 0x9f] = M,
	[0xa3] = M, [0xa4] = M | I_B, [0xa5 ... 0xa7] = M,
	[0xab] = M, [0xac] = M | I_B, [0xad ... 0xaf] = M,
	[0xb0 ... 0xb9] = M, [0xba] = M | I_B, [0xbb ... 0xbf] = M,
	[0xc0 ... 0xc1] = M, [0xc2] = M | I_B, [0xc3] = M, [0xc4 ... 0xc6] = M | I_B,
	[0xc7] = M,
	[0xd0 ... 0xff] = M,
};

/*
 * Bytes that follow a ModRM byte in memory forms: bits 0-2 the displacement
 * size, bit 3 a SIB byte (SDM Vol. 2, Tables 2-1 and 2-2). Rows are mod
 * 00/01/10/11, each the same for all eight reg values.
 */
#define X8(...) __VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__, \
		__VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__
static const uint8_t modrm_a32[256] = {
	X8(0, 0, 0, 0, 8, 4, 0, 0),	/* mod 00: rm 100 SIB, rm 101 disp32 */
	X8(1, 1, 1, 1, 9, 1, 1, 1),	/* mod 01: disp8 */
	X8(4, 4, 4, 4, 12, 4, 4, 4),	/* mod 10: disp32 */
	X8(0, 0, 0, 0, 0, 0, 0, 0),	/* mod 11: register */
};
static const uint8_t modrm_a16[256] = {
	X8(0, 0, 0, 0, 0, 0, 2, 0),	/* mod 00: rm 110 disp16 */
	X8(1, 1, 1, 1, 1, 1, 1, 1),
	X8(2, 2, 2, 2, 2, 2, 2, 2),
	X8(0, 0, 0, 0, 0, 0, 0, 0),
};
#undef X8

/* Branch classes; G_* are refined from the ModRM byte or prefixes. */
enum {
	G_FF = X86_IC_COUNT,	/* FF /2 /3 /4 /5 */
	G_0F01,			/* 0F 01 C1/C2/C3: VMCALL/VMLAUNCH/VMRESUME */
	G_0FAE,			/* F3 0F AE /4: PTWRITE */
	G_0F22,			/* 0F 22 /3: MOV CR3 */
};

static const uint8_t cls1b[256] = {
	[0x70 ... 0x7f] = X86_IC_JCC, [0xe0 ... 0xe3] = X86_IC_JCC,
	[0x9a] = X86_IC_FAR_CALL, [0xea] = X86_IC_FAR_JMP,
	[0xc2] = X86_IC_RET_NEAR, [0xc3] = X86_IC_RET_NEAR,
	[0xca] = X86_IC_FAR_RET, [0xcb] = X86_IC_FAR_RET,
	[0xcc ... 0xce] = X86_IC_INT, [0xf1] = X86_IC_INT, [0xcf] = X86_IC_IRET,
	[0xe8] = X86_IC_CALL_DIRECT, [0xe9] = X86_IC_JMP_DIRECT, [0xeb] = X86_IC_JMP_DIRECT,
	[0xf4] = X86_IC_HLT, [0xff] = G_FF,
};

static const uint8_t cls0f[256] = {
	[0x01] = G_0F01, [0x05] = X86_IC_SYSCALL, [0x07] = X86_IC_SYSRET,
	[0x0b] = X86_IC_UD, [0xb9] = X86_IC_UD, [0xff] = X86_IC_UD,
	[0x22] = G_0F22, [0x34] = X86_IC_SYSENTER, [0x35] = X86_IC_SYSEXIT,
	[0x80 ... 0x8f] = X86_IC_JCC, [0xae] = G_0FAE,
};

/* Prefix bytes: which field they set. REX is only a prefix in 64-bit mode. */
enum { P_NO, P_SEG, P_OSZ, P_ASZ, P_LOCK, P_F2, P_F3, P_REX };
static const uint8_t pfx_kind[256] = {
	[0x26] = P_SEG, [0x2e] = P_SEG, [0x36] = P_SEG, [0x3e] = P_SEG,
	[0x64] = P_SEG, [0x65] = P_SEG, [0x66] = P_OSZ, [0x67] = P_ASZ,
	[0xf0] = P_LOCK, [0xf2] = P_F2, [0xf3] = P_F3,
	[0x40 ... 0x4f] = P_REX,
};

/* Mandatory-prefix class, as in x86_valid.h: none, 66, F3, F2 (= VEX pp). */
enum { MP_NONE, MP_66, MP_F3, MP_F2 };
static const uint8_t mp_byte[4] = { 0, 0x66, 0xf3, 0xf2 };

static inline bool valid(unsigned space, unsigned mp, unsigned op, unsigned mode,
			 unsigned a, unsigned w, unsigned l, unsigned modrm)
{
	unsigned key = (space * 4 + mp) * 256 + op;
	if (space < X86V_NLEGACY && (x86_vfast[mode][key >> 3] >> (key & 7) & 1))
		return true;
	unsigned row = x86_vkey[key];
	const uint8_t *bits = x86_vbits[x86_vrow[row][mode * 16 + a * 8 + w * 4 + l]];
	return bits[modrm >> 3] >> (modrm & 7) & 1;
}

/* Fail if the next n bytes are not there: too long beats need-more. */
#define NEED(n)                                                        \
	do {                                                           \
		if (pos + (n) > lim)                                   \
			return pos + (n) > 15 ? -X86_ERR_TOO_LONG      \
					      : -X86_ERR_NEED_MORE;    \
	} while (0)

int x86_decode(struct x86_insn *out, const uint8_t *b, size_t avail, uint64_t ip,
	       enum x86_mode mode)
{
	unsigned lim = avail < 15 ? (unsigned)avail : 15;
	unsigned pos = 0, osz = 0, asz = 0, lock = 0, rex = 0, rep = 0;
	unsigned c, op, space, mp, w = 0, l = 0, flags, modrm = 0;

	if ((unsigned)mode > X86_MODE_64)
		return -X86_ERR_MODE;
	bool m64 = mode == X86_MODE_64;

	/* Legacy prefixes and REX. A REX not directly before the opcode is ignored. */
	for (;;) {
		NEED(1);
		c = b[pos];
		unsigned k = pfx_kind[c];
		if (k == P_NO || (k == P_REX && !m64))
			break;
		pos++;
		switch (k) {
		case P_REX:
			rex = c;
			continue;
		case P_OSZ:
			osz = 1;
			break;
		case P_ASZ:
			asz = 1;
			break;
		case P_LOCK:
			lock = 1;
			break;
		case P_F2:
		case P_F3:
			rep = c;
			break;
		default:
			break;
		}
		rex = 0;
	}

	op = b[pos++];
	unsigned enc = X86_ENC_LEGACY;
	flags = op1b[op];
	space = X86V_1B;
	mp = rep == 0xf3 ? MP_F3 : rep == 0xf2 ? MP_F2 : osz ? MP_66 : MP_NONE;

	if (flags & ESC) {
		if (op == 0x0f) {
			NEED(1);
			op = b[pos++];
			space = X86V_0F;
			flags = op0f[op];
			if (op == 0x38 || op == 0x3a) {
				space = op == 0x38 ? X86V_0F38 : X86V_0F3A;
				NEED(1);
				op = b[pos++];
				flags = space == X86V_0F38 ? M : M | I_B;
			}
		} else {
			/*
			 * C4/C5 (LES/LDS), 62 (BOUND) and 8F (POP r/m) double as
			 * VEX/EVEX/XOP escapes. Outside 64-bit mode C4/C5/62 are
			 * VEX/EVEX only if the next byte would be a register ModRM;
			 * 8F is XOP if the next byte's map field is 8 or more.
			 */
			NEED(1);
			unsigned n = b[pos];
			bool esc;
			if (op == 0x8f)
				esc = (n & 0x1f) >= 8;
			else
				esc = m64 || (n & 0xc0) == 0xc0;
			if (esc) {
				/* 66/F2/F3/LOCK/REX before these #UD. */
				if (osz || rep || lock || rex)
					return -X86_ERR_INVALID;
				if (op == 0xc5) {
					pos++;
					space = X86V_VEX1;
					l = n >> 2 & 1;
					mp = n & 3;
					enc = X86_ENC_VEX;
				} else if (op == 0x62) {
					NEED(3);
					unsigned p1 = b[pos + 1], p2 = b[pos + 2];
					pos += 3;
					/* P0[3] = 0, P1[2] = 1; outside 64-bit mode V' = 1. */
					if ((n & 0x08) || !(p1 & 0x04))
						return -X86_ERR_INVALID;
					if (!m64 && !(p2 & 0x08))
						return -X86_ERR_INVALID;
					switch (n & 7) {
					case 1: space = X86V_EVEX1; break;
					case 2: space = X86V_EVEX2; break;
					case 3: space = X86V_EVEX3; break;
					case 5: space = X86V_EVEX5; break;
					case 6: space = X86V_EVEX6; break;
					default: return -X86_ERR_INVALID;
					}
					w = p1 >> 7;
					mp = p1 & 3;
					/* With EVEX.b, a register form's L'L is rounding: 512-bit. */
					l = p2 >> 5 & 3;
					if (p2 & 0x10)
						l |= 0x10;
					enc = X86_ENC_EVEX;
				} else {
					NEED(2);
					unsigned p1 = b[pos + 1], map = n & 0x1f;
					pos += 2;
					if (op == 0xc4) {
						if (map < 1 || map > 3)
							return -X86_ERR_INVALID;
						space = X86V_VEX1 + map - 1;
						enc = X86_ENC_VEX;
					} else {
						if (map > 10)
							return -X86_ERR_INVALID;
						space = X86V_XOP8 + map - 8;
						enc = X86_ENC_XOP;
					}
					w = p1 >> 7;
					l = p1 >> 2 & 1;
					mp = p1 & 3;
				}
				NEED(1);
				op = b[pos++];
				switch (space) {
				case X86V_VEX1:
				case X86V_EVEX1:
					flags = op == 0x77 && enc == X86_ENC_VEX ? 0 : M;
					if ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					    (op >= 0xc4 && op <= 0xc6))
						flags |= I_B;
					break;
				case X86V_VEX3:
				case X86V_EVEX3:
				case X86V_XOP8:
					flags = M | I_B;
					break;
				case X86V_XOPA:
					flags = M | I_D;
					break;
				default:
					flags = M;
					break;
				}
			}
		}
	}

	/* Effective operand and address sizes. */
	unsigned osize, asize;
	if (m64) {
		osize = rex & 8 ? 64 : osz ? 16 : 32;
		asize = asz ? 32 : 64;
	} else {
		osize = (mode == X86_MODE_32) ^ osz ? 32 : 16;
		asize = (mode == X86_MODE_32) ^ asz ? 32 : 16;
	}

	/* ModRM, SIB, displacement. */
	if (flags & M) {
		NEED(1);
		modrm = b[pos++];
		unsigned e = flags & FREG ? 0 : asize == 16 ? modrm_a16[modrm] : modrm_a32[modrm];
		if (e & 8) {
			/* SIB; base 101 with mod 00 means disp32 and no base. */
			NEED(1);
			if ((b[pos] & 7) == 5 && modrm < 0x40)
				e += 4;
			pos++;
		}
		e &= 7;
		NEED(e);
		pos += e;
		unsigned mod = modrm >> 6;
		if (l & 0x10)
			l = mod == 3 ? 2 : l & 3;
		if (space == X86V_0F && op == 0x0f) {
			/* 3DNow!: the opcode is the byte after the operands. */
			NEED(1);
			op = b[pos++];
			space = X86V_3DNOW;
			flags = M;
		}
	}

	if (!valid(space, mp, op, mode, asz, w, l & 3, modrm))
		return -X86_ERR_INVALID;

	/* Immediates and relative displacements. */
	unsigned kind = flags & 0x0f, reg = modrm >> 3 & 7;
	unsigned imm = immsz[kind][osize >> 5];
	bool rel = kind == I_R8;
	if (kind == I_Z && op == 0xc7 && modrm == 0xf8 && space == X86V_1B)
		rel = true; /* XBEGIN rel16/rel32 */
	if (kind >= I_RZ) {
		unsigned zsz = osize == 16 ? 2 : 4;
		switch (kind) {
		case I_RZ: imm = m64 ? 4 : zsz; rel = true; break;
		case I_O: imm = asize / 8; break;
		case I_F6: imm = reg < 2; break;
		case I_F7: imm = reg < 2 ? zsz : 0; break;
		case I_78: imm = mp == MP_66 || mp == MP_F2 ? 2 : 0; break;
		}
	}
	NEED(imm);

	unsigned ic = X86_IC_OTHER;
	if (enc == X86_ENC_LEGACY) {
		if (space == X86V_1B)
			ic = cls1b[op];
		else if (space == X86V_0F)
			ic = cls0f[op];
		switch (ic) {
		case G_FF: {
			static const uint8_t ff[8] = {
				X86_IC_OTHER, X86_IC_OTHER, X86_IC_CALL_INDIRECT, X86_IC_FAR_CALL,
				X86_IC_JMP_INDIRECT, X86_IC_FAR_JMP, X86_IC_OTHER, X86_IC_OTHER,
			};
			ic = ff[reg];
			break;
		}
		case G_0F01:
			ic = modrm == 0xc1 ? X86_IC_VMCALL : modrm == 0xc2 ? X86_IC_VMLAUNCH
				: modrm == 0xc3 ? X86_IC_VMRESUME : X86_IC_OTHER;
			/* ERETS (F2) and ERETU (F3) 0F 01 CA return from FRED events. */
			if (modrm == 0xca && (mp == MP_F3 || mp == MP_F2))
				ic = X86_IC_IRET;
			break;
		case G_0FAE:
			ic = reg == 4 && mp == MP_F3 ? X86_IC_PTWRITE : X86_IC_OTHER;
			break;
		case G_0F22:
			ic = reg == 3 && !(rex & 4) ? X86_IC_MOV_CR3 : X86_IC_OTHER;
			break;
		default:
			break;
		}
	}

	out->len = (uint8_t)(pos + imm);
	out->iclass = (uint8_t)ic;
	out->enc = (uint8_t)enc;
	out->map = enc != X86_ENC_LEGACY ? 0 : (uint8_t)space;
	if (enc == X86_ENC_VEX || enc == X86_ENC_XOP)
		out->map = (uint8_t)(space <= X86V_VEX3 ? space - X86V_VEX1 + 1 : space - X86V_XOP8 + 8);
	else if (enc == X86_ENC_EVEX)
		out->map = (uint8_t)(space <= X86V_EVEX3 ? space - X86V_EVEX1 + 1 : space - X86V_EVEX5 + 5);
	out->opcode = (uint8_t)op;
	out->modrm = (uint8_t)modrm;
	out->has_modrm = (flags & M) != 0;
	out->osize = (uint8_t)osize;
	out->prefix = mp_byte[mp];
	out->asize = (uint8_t)asize;
	out->has_target = rel;
	out->zero_len_call = false;
	out->target = 0;
	if (rel) {
		/* Sign-extend the displacement, add it to the next IP, wrap. */
		uint64_t d = efipt_load_le(b + pos, imm);
		unsigned sh = 64 - 8 * imm;
		int64_t disp = (int64_t)(d << sh) >> sh;
		uint64_t t = ip + pos + imm + (uint64_t)disp;
		if (m64)
			out->osize = 64;
		else if (osize == 16 && !(mode == X86_MODE_16 && ip > 0xffff))
			t &= 0xffff;
		else
			t &= 0xffffffff;
		out->target = t;
		out->zero_len_call = ic == X86_IC_CALL_DIRECT && disp == 0;
	}
	return (int)(pos + imm);
}

const char *x86_errstr(int err)
{
	switch ((enum x86_err)(err < 0 ? -err : err)) {
	case X86_ERR_NEED_MORE:
		return "instruction continues past the end of the available bytes";
	case X86_ERR_INVALID:
		return "invalid or undefined opcode";
	case X86_ERR_TOO_LONG:
		return "instruction longer than 15 bytes";
	case X86_ERR_MODE:
		return "bad execution mode";
	}
	return err == 0 ? "no error" : "unknown error";
}

const char *x86_iclass_name(int iclass)
{
	switch ((enum x86_iclass)iclass) {
	case X86_IC_OTHER: return "other";
	case X86_IC_JCC: return "jcc";
	case X86_IC_JMP_DIRECT: return "jmp.direct";
	case X86_IC_CALL_DIRECT: return "call.direct";
	case X86_IC_JMP_INDIRECT: return "jmp.indirect";
	case X86_IC_CALL_INDIRECT: return "call.indirect";
	case X86_IC_RET_NEAR: return "ret";
	case X86_IC_FAR_JMP: return "jmp.far";
	case X86_IC_FAR_CALL: return "call.far";
	case X86_IC_FAR_RET: return "ret.far";
	case X86_IC_INT: return "int";
	case X86_IC_IRET: return "iret";
	case X86_IC_SYSCALL: return "syscall";
	case X86_IC_SYSRET: return "sysret";
	case X86_IC_SYSENTER: return "sysenter";
	case X86_IC_SYSEXIT: return "sysexit";
	case X86_IC_VMLAUNCH: return "vmlaunch";
	case X86_IC_VMRESUME: return "vmresume";
	case X86_IC_VMCALL: return "vmcall";
	case X86_IC_PTWRITE: return "ptwrite";
	case X86_IC_MOV_CR3: return "mov.cr3";
	case X86_IC_HLT: return "hlt";
	case X86_IC_UD: return "ud";
	case X86_IC_COUNT: break;
	}
	return "?";
}

/* Known encodings for the firmware self-check: mode, bytes, length, class, target. */
struct x86_known {
	uint8_t mode, len, iclass, n;
	uint8_t bytes[15];
	uint64_t ip, target;
};

static const struct x86_known known[] = {
	{ X86_MODE_64, 1, X86_IC_RET_NEAR, 1, { 0xc3 }, 0x1000, 0 },
	{ X86_MODE_64, 5, X86_IC_CALL_DIRECT, 5, { 0xe8, 0x00, 0x00, 0x00, 0x00 }, 0x1000, 0x1005 },
	{ X86_MODE_64, 2, X86_IC_JCC, 2, { 0x74, 0xfe }, 0x2000, 0x2000 },
	{ X86_MODE_64, 10, X86_IC_OTHER, 10, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 0, 0 },
	{ X86_MODE_64, 6, X86_IC_JMP_INDIRECT, 6, { 0xff, 0x25, 0, 0, 0, 0 }, 0, 0 },
	{ X86_MODE_64, 3, X86_IC_SYSRET, 3, { 0x48, 0x0f, 0x07 }, 0, 0 },
	{ X86_MODE_64, 5, X86_IC_PTWRITE, 5, { 0xf3, 0x48, 0x0f, 0xae, 0xe0 }, 0, 0 },
	{ X86_MODE_64, 5, X86_IC_OTHER, 5, { 0xc5, 0xfd, 0x6f, 0x04, 0x24 }, 0, 0 },
	{ X86_MODE_64, 7, X86_IC_OTHER, 7, { 0x62, 0xf1, 0x7c, 0x48, 0x10, 0x40, 0x01 }, 0, 0 },
	{ X86_MODE_32, 7, X86_IC_FAR_JMP, 7, { 0xea, 0, 0, 1, 0, 0x10, 0 }, 0, 0 },
	{ X86_MODE_32, 4, X86_IC_JMP_DIRECT, 4, { 0x66, 0xe9, 0xfc, 0xff }, 0x10000, 0 },
	{ X86_MODE_16, 3, X86_IC_CALL_DIRECT, 3, { 0xe8, 0x10, 0x00 }, 0xfff0, 0x0003 },
	{ X86_MODE_16, 3, X86_IC_JMP_DIRECT, 3, { 0xe9, 0x0b, 0xff }, 0xfffffff2, 0xffffff00 },
	{ X86_MODE_16, 4, X86_IC_OTHER, 4, { 0xc8, 0x10, 0x00, 0x01 }, 0, 0 },
	{ X86_MODE_32, 3, X86_IC_VMLAUNCH, 3, { 0x0f, 0x01, 0xc2 }, 0, 0 },
	{ X86_MODE_32, 2, X86_IC_INT, 2, { 0xcd, 0x80 }, 0, 0 },
};

int x86_selfcheck(void)
{
	struct x86_insn in;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		const struct x86_known *k = &known[i];
		int n = x86_decode(&in, k->bytes, k->n, k->ip, (enum x86_mode)k->mode);
		if (n != k->len || in.iclass != k->iclass)
			return -(int)(i + 1);
		if (in.has_target && in.target != k->target)
			return -(int)(i + 1);
	}
	/* A truncated instruction must ask for more, not fail. */
	if (x86_decode(&in, known[1].bytes, 3, 0, X86_MODE_64) != -X86_ERR_NEED_MORE)
		return -100;
	return 0;
}
