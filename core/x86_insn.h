/*
 * x86 instruction length decoder and branch classifier.
 *
 * Decodes one instruction's length and, for the instructions that change
 * control flow the way Intel PT sees it, its class and direct target. It does
 * not produce operands: the flow decoder only needs to know where the next
 * instruction starts, whether this one is a branch, and where a direct branch
 * goes. Disassembly text is the host's business (host/, via Zydis).
 *
 * Coverage: 16-, 32- and 64-bit code; legacy prefixes (66/67 change the sizes
 * of immediates, displacements and moffs), REX, the one-byte map, 0F, 0F38,
 * 0F3A, 3DNow! (0F 0F .. ib), VEX (C4/C5), EVEX (62), XOP (8F), and the
 * 15-byte limit. Opcodes the CPU does not define are reported as invalid;
 * encodings that are well-formed but fault for a reason that does not change
 * the length (LOCK on a non-lockable instruction, CR9, a non-1111 VEX.vvvv, an
 * EVEX field a given instruction does not accept) are decoded: they raise #UD
 * when executed, so a trace never continues past them anyway.
 *
 * Which opcodes are defined comes from core/x86_valid.c (generated with Zydis
 * 4.0 by core/gen/x86_valid_gen.c, plus a few newer instructions added there
 * by hand from the SDM: WRMSRNS, RDMSRLIST/WRMSRLIST, ERETS/ERETU, LKGS,
 * CMPccXADD). Knights Corner (MVEX) encodings are undefined.
 *
 * Near branches follow Intel: in 64-bit mode a 66h prefix does not shrink a
 * relative branch (AMD processors differ; PT is Intel).
 *
 * Freestanding: no allocation, no state. Tables are const.
 */
#ifndef EFIPT_CORE_X86_INSN_H
#define EFIPT_CORE_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Code size: CS.L=1 is 64-bit; otherwise CS.D selects 32 or 16. */
enum x86_mode {
	X86_MODE_16,
	X86_MODE_32,
	X86_MODE_64,
};

/*
 * What an instruction does to control flow.
 *
 * X86_IC_JCC covers everything that is taken or not taken and so consumes a
 * TNT bit: Jcc, JCXZ/JECXZ/JRCXZ, LOOP/LOOPE/LOOPNE.
 * Far transfers (INT*, IRET*, SYS*, VM*, far JMP/CALL/RET) are reported by PT
 * with a TIP (or FUP+TIP), never with TNT.
 * The last few classes are not branches but matter to a flow decoder:
 * MOV CR3 (PIP packets), HLT (power events), UD0/UD1/UD2 (always fault).
 */
enum x86_iclass {
	X86_IC_OTHER,		/* not a branch */
	X86_IC_JCC,		/* conditional: Jcc, J*CXZ, LOOP* */
	X86_IC_JMP_DIRECT,	/* JMP rel8/rel16/rel32 */
	X86_IC_CALL_DIRECT,	/* CALL rel16/rel32 */
	X86_IC_JMP_INDIRECT,	/* JMP r/m (FF /4) */
	X86_IC_CALL_INDIRECT,	/* CALL r/m (FF /2) */
	X86_IC_RET_NEAR,	/* RET, RET imm16 (C3, C2) */
	X86_IC_FAR_JMP,		/* JMP ptr16:z (EA), JMP m16:z (FF /5) */
	X86_IC_FAR_CALL,	/* CALL ptr16:z (9A), CALL m16:z (FF /3) */
	X86_IC_FAR_RET,		/* RETF, RETF imm16 (CB, CA) */
	X86_IC_INT,		/* INT n, INT3, INT1, INTO */
	X86_IC_IRET,		/* IRET/IRETD/IRETQ, ERETS/ERETU (FRED) */
	X86_IC_SYSCALL,
	X86_IC_SYSRET,
	X86_IC_SYSENTER,
	X86_IC_SYSEXIT,
	X86_IC_VMLAUNCH,
	X86_IC_VMRESUME,
	X86_IC_VMCALL,		/* VM exit by design */
	X86_IC_PTWRITE,		/* F3 (REX.W) 0F AE /4 */
	X86_IC_MOV_CR3,		/* MOV CR3, r (0F 22 /3): PIP */
	X86_IC_HLT,
	X86_IC_UD,		/* UD0, UD1, UD2 */
	X86_IC_COUNT
};

/*
 * Which packet Intel PT reports an instruction of a class with, when it
 * retires normally (SDM 33.2.1, Table 33-1): conditional branches a TNT
 * bit; unconditional direct branches and non-branches nothing; indirect
 * branches, near RET and far transfers a TIP. Special cases stay with the
 * users: a near RET may be compressed to a TNT bit (33.4.2.2), and INT n and
 * UD (its #UD fault) are events whose FUP names the instruction itself
 * (Table 33-23). The flow decoder (core/pt_flow_int.h) and the QEMU
 * plugin's encoder (qemu-plugin/infer.c) both ask here.
 */
enum x86_pt_report {
	X86_PT_NONE,	/* no packet: the next IP follows from the bytes */
	X86_PT_TNT,	/* one TNT bit: taken or not */
	X86_PT_TIP,	/* a TIP with the target */
};

_Static_assert(X86_IC_COUNT == 23, "a new enum x86_iclass needs its case in x86_pt_report()");

static inline enum x86_pt_report x86_pt_report(unsigned iclass)
{
	switch ((enum x86_iclass)iclass) {
	case X86_IC_OTHER:
	case X86_IC_JMP_DIRECT:
	case X86_IC_CALL_DIRECT:
	case X86_IC_PTWRITE:	/* a PTW packet when enabled, not a branch (33.2.2) */
	case X86_IC_MOV_CR3:	/* a PIP packet, not a branch (33.4.2.7) */
	case X86_IC_HLT:
	case X86_IC_UD:		/* faults: the trace goes on as an event */
		return X86_PT_NONE;
	case X86_IC_JCC:
		return X86_PT_TNT;
	case X86_IC_JMP_INDIRECT:
	case X86_IC_CALL_INDIRECT:
	case X86_IC_RET_NEAR:
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
		return X86_PT_TIP;
	case X86_IC_COUNT:
		break;
	}
	/* not a class x86_decode() gives: a decoder waits for a packet
	 * rather than walk past it */
	return X86_PT_TIP;
}

/*
 * Transfers a return is expected to come back after (to the next
 * instruction): near and far CALL, INT n, and SYSCALL, SYSENTER and VMCALL,
 * which leave for system code that returns there. The call-stack model
 * pushes a frame for them (host/stack/callstack.c), and the flow decoder's
 * merged blocks keep that address (ptflow_blk_regions()).
 */
static inline bool x86_returns_after(unsigned iclass)
{
	return iclass == X86_IC_CALL_DIRECT || iclass == X86_IC_CALL_INDIRECT ||
	       iclass == X86_IC_FAR_CALL || iclass == X86_IC_INT || iclass == X86_IC_SYSCALL ||
	       iclass == X86_IC_SYSENTER || iclass == X86_IC_VMCALL;
}

/* Errors, returned negated by x86_decode(). */
enum x86_err {
	X86_ERR_NEED_MORE = 1,	/* avail ends inside the instruction */
	X86_ERR_INVALID,	/* undefined opcode or malformed encoding */
	X86_ERR_TOO_LONG,	/* would exceed 15 bytes (#GP) */
	X86_ERR_MODE,		/* mode argument out of range */
};

/* Opcode maps, as reported in x86_insn.map. */
enum x86_map {
	X86_MAP_1B,	/* one-byte opcodes */
	X86_MAP_0F,
	X86_MAP_0F38,
	X86_MAP_0F3A,
	X86_MAP_3DNOW,	/* 0F 0F modrm .. ib; opcode is the trailing ib */
};

/* x86_insn.enc: how the opcode was encoded. */
enum x86_enc {
	X86_ENC_LEGACY,
	X86_ENC_VEX,
	X86_ENC_EVEX,
	X86_ENC_XOP,
};

struct x86_insn {
	uint8_t len;		/* 1..15 */
	uint8_t iclass;		/* enum x86_iclass */
	uint8_t enc;		/* enum x86_enc */
	uint8_t map;		/* enum x86_map (legacy), or the VEX/EVEX/XOP map number */
	uint8_t opcode;		/* last opcode byte */
	uint8_t modrm;		/* 0 when has_modrm is false */
	uint8_t osize;		/* effective operand size in bits: 16, 32 or 64 */
	uint8_t asize;		/* effective address size in bits */
	uint8_t prefix;		/* mandatory prefix: 0, 0x66, 0xf3 or 0xf2 (VEX/EVEX/XOP: pp) */
	bool has_modrm;
	bool has_target;	/* relative branch: target is valid */
	bool zero_len_call;	/* CALL with displacement 0 (pushes, is not a call) */
	uint64_t target;	/* direct target, wrapped to the operand size */
};

/*
 * Decode the instruction at bytes[0..avail) whose address is ip.
 * Returns its length (1..15) and fills *out, or a negative enum x86_err:
 * -X86_ERR_NEED_MORE only when more bytes could still make it valid (avail
 * is below 15 and the bytes so far are a proper prefix of an instruction).
 *
 * ip is the linear address (CS base + IP, as in traces with CPUID.(14H,0):
 * ECX.LIP = 1, SDM 33.3.1.1). Direct targets wrap to 32 bits outside 64-bit
 * mode, and a 16-bit operand size wraps them to 16 bits, as (E)IP does,
 * where the linear address is the IP: in 32-bit code (flat segments) and
 * in 16-bit code below 64 KiB (CS base 0). 16-bit code above 64 KiB has a
 * CS base that is not 0 (real mode: CS<<4; the reset vector: 0xFFFF0000),
 * which the instruction stream does not tell: its targets are the linear
 * next IP plus the displacement, exact unless the code relies on IP
 * wrapping at the end of its 64 KiB segment (firmware never does).
 */
int x86_decode(struct x86_insn *out, const uint8_t *bytes, size_t avail,
	       uint64_t ip, enum x86_mode mode);

/* Message for a (negative or positive) x86_err; never NULL. */
const char *x86_errstr(int err);

/* Lower-case name of an enum x86_iclass ("jcc", "call.direct", ...). */
const char *x86_iclass_name(int iclass);

/* Decodes a handful of known encodings: 0 if all agree, negative otherwise. */
int x86_selfcheck(void);

#endif
