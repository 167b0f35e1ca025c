/*
 * Hand-written vectors for x86_decode(): lengths, classes and targets per
 * mode, prefix edge cases, and the error paths. Encodings follow the SDM
 * Vol. 2 instruction pages; each line says what the bytes are.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/x86_insn.h"

#define NT 0xdeadull /* "no target expected" */

enum { M16 = X86_MODE_16, M32 = X86_MODE_32, M64 = X86_MODE_64 };
enum { IC_OTHER = X86_IC_OTHER };

struct vec {
	int mode;
	const char *hex;
	int ret;		/* length or negative error */
	int iclass;
	uint64_t ip, target;	/* target NT: has_target must be false */
	const char *what;
	int avail;		/* 0: exactly the bytes given */
};

static const struct vec vecs[] = {
	/* ---- plain one-byte, ModRM/SIB/displacement forms (64-bit) ---- */
	{ M64, "90", 1, IC_OTHER, 0, NT, "nop", 0 },
	{ M64, "8b 04 24", 3, IC_OTHER, 0, NT, "mov eax,[rsp]: SIB, no disp", 0 },
	{ M64, "8b 44 24 08", 4, IC_OTHER, 0, NT, "mov eax,[rsp+8]: SIB disp8", 0 },
	{ M64, "8b 84 24 00 01 00 00", 7, IC_OTHER, 0, NT, "SIB disp32", 0 },
	{ M64, "8b 05 00 00 00 00", 6, IC_OTHER, 0, NT, "RIP-relative disp32", 0 },
	{ M64, "8b 04 25 00 10 00 00", 7, IC_OTHER, 0, NT, "SIB base 101 mod 00: disp32, no base", 0 },
	{ M64, "8b 44 25 00", 4, IC_OTHER, 0, NT, "SIB base 101 mod 01: [rbp+..] disp8", 0 },
	{ M64, "8b 45 00", 3, IC_OTHER, 0, NT, "mov eax,[rbp+0]", 0 },
	{ M64, "67 8b 05 00 00 00 00", 7, IC_OTHER, 0, NT, "67h in 64-bit: EIP-relative, still disp32", 0 },
	{ M64, "b8 01 00 00 00", 5, IC_OTHER, 0, NT, "mov eax,imm32", 0 },
	{ M64, "66 b8 01 00", 4, IC_OTHER, 0, NT, "66h: mov ax,imm16", 0 },
	{ M64, "48 b8 01 02 03 04 05 06 07 08", 10, IC_OTHER, 0, NT, "REX.W mov rax,imm64", 0 },
	{ M64, "66 48 b8 01 02 03 04 05 06 07 08", 11, IC_OTHER, 0, NT, "REX.W beats 66h", 0 },
	{ M64, "48 66 b8 01 00", 5, IC_OTHER, 0, NT, "REX before 66h is ignored", 0 },
	{ M64, "48 c7 c0 ff ff ff ff", 7, IC_OTHER, 0, NT, "REX.W C7: imm32 (sign-extended)", 0 },
	{ M64, "66 c7 00 01 00", 5, IC_OTHER, 0, NT, "66h C7: imm16", 0 },
	{ M64, "68 00 00 00 00", 5, IC_OTHER, 0, NT, "push imm32", 0 },
	{ M64, "66 68 00 00", 4, IC_OTHER, 0, NT, "66h push imm16", 0 },
	{ M64, "f6 c0 01", 3, IC_OTHER, 0, NT, "test al,imm8 (F6 /0)", 0 },
	{ M64, "f6 d0", 2, IC_OTHER, 0, NT, "not al (F6 /2): no immediate", 0 },
	{ M64, "f7 c0 01 00 00 00", 6, IC_OTHER, 0, NT, "test eax,imm32 (F7 /0)", 0 },
	{ M64, "66 f7 c0 01 00", 5, IC_OTHER, 0, NT, "test ax,imm16", 0 },
	{ M64, "f7 d8", 2, IC_OTHER, 0, NT, "neg eax (F7 /3)", 0 },
	{ M64, "c8 10 00 01", 4, IC_OTHER, 0, NT, "enter 16,1: imm16+imm8", 0 },
	{ M64, "a1 00 00 00 00 00 00 00 00", 9, IC_OTHER, 0, NT, "mov eax,moffs64", 0 },
	{ M64, "67 a1 00 00 00 00", 6, IC_OTHER, 0, NT, "67h: moffs32", 0 },
	{ M64, "f0 01 00", 3, IC_OTHER, 0, NT, "lock add [rax],eax", 0 },
	{ M64, "2e 3e 26 64 65 36 90", 7, IC_OTHER, 0, NT, "segment prefixes", 0 },
	{ M64, "f3 a4", 2, IC_OTHER, 0, NT, "rep movsb", 0 },
	{ M64, "f3 90", 2, IC_OTHER, 0, NT, "pause", 0 },
	{ M64, "8f c0", 2, IC_OTHER, 0, NT, "pop rax (8F /0, not XOP)", 0 },
	/* ---- 0F maps ---- */
	{ M64, "0f 1f 44 00 00", 5, IC_OTHER, 0, NT, "nop dword [rax+rax+0]", 0 },
	{ M64, "66 0f 1f 84 00 00 00 00 00", 9, IC_OTHER, 0, NT, "nopw [rax+rax+0]", 0 },
	{ M64, "0f 20 00", 3, IC_OTHER, 0, NT, "mov rax,cr0: mod ignored, no SIB/disp", 0 },
	{ M64, "0f 22 d8", 3, X86_IC_MOV_CR3, 0, NT, "mov cr3,rax", 0 },
	{ M64, "0f 22 1d", 3, X86_IC_MOV_CR3, 0, NT, "mov cr3,rbp encoded with mod 00", 0 },
	{ M64, "41 0f 22 d8", 4, X86_IC_MOV_CR3, 0, NT, "mov cr3,r8", 0 },
	{ M64, "0f 22 c0", 3, IC_OTHER, 0, NT, "mov cr0,rax", 0 },
	{ M64, "0f ba e0 05", 4, IC_OTHER, 0, NT, "bt eax,5 (0F BA /4 ib)", 0 },
	{ M64, "0f a4 c0 05", 4, IC_OTHER, 0, NT, "shld eax,eax,5", 0 },
	{ M64, "66 0f 3a 0f c1 08", 6, IC_OTHER, 0, NT, "palignr: 0F3A has imm8", 0 },
	{ M64, "66 0f 38 00 c1", 5, IC_OTHER, 0, NT, "pshufb: 0F38, no immediate", 0 },
	{ M64, "f2 0f 38 f1 c1", 5, IC_OTHER, 0, NT, "crc32 eax,ecx", 0 },
	{ M64, "66 0f 70 c1 1b", 5, IC_OTHER, 0, NT, "pshufd imm8", 0 },
	{ M64, "66 0f 78 c0 04 08", 6, IC_OTHER, 0, NT, "extrq xmm0,4,8: two imm8 (AMD SSE4a)", 0 },
	{ M64, "0f 78 c0", 3, IC_OTHER, 0, NT, "vmread rax,rax: none", 0 },
	{ M64, "0f 0f c1 b4", 4, IC_OTHER, 0, NT, "3DNow! pfmul mm0,mm1", 0 },
	{ M64, "0f 0f 40 10 9e", 5, IC_OTHER, 0, NT, "3DNow! pfadd mm0,[rax+16]", 0 },
	{ M64, "0f 0f c1 00", -X86_ERR_INVALID, IC_OTHER, 0, NT, "3DNow! undefined suffix", 0 },
	/* ---- VEX / EVEX / XOP ---- */
	{ M64, "c5 f8 77", 3, IC_OTHER, 0, NT, "vzeroupper: no ModRM", 0 },
	{ M64, "c5 fd 6f 04 24", 5, IC_OTHER, 0, NT, "vmovdqa ymm0,[rsp]", 0 },
	{ M64, "c4 e3 7d 18 c1 01", 6, IC_OTHER, 0, NT, "vinsertf128: map 3 imm8", 0 },
	{ M64, "c4 e2 79 18 00", 5, IC_OTHER, 0, NT, "vbroadcastss xmm0,[rax]: map 2", 0 },
	{ M64, "c5 f9 70 c1 1b", 5, IC_OTHER, 0, NT, "vpshufd imm8 (VEX map 1)", 0 },
	{ M64, "66 c5 f8 77", -X86_ERR_INVALID, IC_OTHER, 0, NT, "66h before VEX", 0 },
	{ M64, "40 c5 f8 77", -X86_ERR_INVALID, IC_OTHER, 0, NT, "REX before VEX", 0 },
	{ M64, "c4 e0 78 00 00", -X86_ERR_INVALID, IC_OTHER, 0, NT, "VEX map 0", 0 },
	{ M64, "62 f1 7c 48 10 40 01", 7, IC_OTHER, 0, NT, "vmovups zmm0,[rax+64] (disp8*N)", 0 },
	{ M64, "62 f3 7d 48 19 c1 01", 7, IC_OTHER, 0, NT, "vextractf32x4: EVEX map 3 imm8", 0 },
	{ M64, "62 f1 7c 08 10 04 25 00 00 00 00", 11, IC_OTHER, 0, NT, "EVEX SIB disp32", 0 },
	{ M64, "62 f1 7c 48 18 c1", -X86_ERR_INVALID, IC_OTHER, 0, NT, "EVEX undefined opcode", 0 },
	{ M64, "62 f1 78 48 10 c1", -X86_ERR_INVALID, IC_OTHER, 0, NT, "EVEX P1 bit 2 clear (MVEX)", 0 },
	{ M64, "8f e8 78 c0 c1 05", 6, IC_OTHER, 0, NT, "vprotb xmm0,xmm1,5: XOP map 8 imm8", 0 },
	{ M64, "8f e9 78 81 c1", 5, IC_OTHER, 0, NT, "vfrczps: XOP map 9", 0 },
	{ M64, "8f ea 78 10 c1 01 02 00 00", 9, IC_OTHER, 0, NT, "bextr eax,ecx,imm32: XOP map A", 0 },
	/* ---- branches, 64-bit ---- */
	{ M64, "e8 00 00 00 00", 5, X86_IC_CALL_DIRECT, 0x401000, 0x401005, "call next (zero-length)", 0 },
	{ M64, "e8 fb ff ff ff", 5, X86_IC_CALL_DIRECT, 0x401000, 0x401000, "call self", 0 },
	{ M64, "66 e8 00 10 00 00", 6, X86_IC_CALL_DIRECT, 0x1000, 0x2006, "66h call: still rel32 (Intel)", 0 },
	{ M64, "e9 00 00 00 80", 5, X86_IC_JMP_DIRECT, 0xffffffff80000000ull, 0xffffffff00000005ull, "jmp rel32 negative", 0 },
	{ M64, "eb fe", 2, X86_IC_JMP_DIRECT, 0x1000, 0x1000, "jmp $", 0 },
	{ M64, "74 10", 2, X86_IC_JCC, 0x1000, 0x1012, "je rel8", 0 },
	{ M64, "3e 74 10", 3, X86_IC_JCC, 0x1000, 0x1013, "je with branch hint", 0 },
	{ M64, "0f 84 00 01 00 00", 6, X86_IC_JCC, 0x1000, 0x1106, "je rel32", 0 },
	{ M64, "e3 02", 2, X86_IC_JCC, 0x1000, 0x1004, "jrcxz", 0 },
	{ M64, "67 e3 02", 3, X86_IC_JCC, 0x1000, 0x1005, "jecxz", 0 },
	{ M64, "e2 fe", 2, X86_IC_JCC, 0x1000, 0x1000, "loop", 0 },
	{ M64, "e0 fe", 2, X86_IC_JCC, 0x1000, 0x1000, "loopne", 0 },
	{ M64, "ff 15 00 00 00 00", 6, X86_IC_CALL_INDIRECT, 0, NT, "call [rip]", 0 },
	{ M64, "ff d0", 2, X86_IC_CALL_INDIRECT, 0, NT, "call rax", 0 },
	{ M64, "41 ff e3", 3, X86_IC_JMP_INDIRECT, 0, NT, "jmp r11", 0 },
	{ M64, "3e ff e0", 3, X86_IC_JMP_INDIRECT, 0, NT, "notrack jmp rax", 0 },
	{ M64, "ff 25 00 00 00 00", 6, X86_IC_JMP_INDIRECT, 0, NT, "jmp [rip]", 0 },
	{ M64, "ff 1d 00 00 00 00", 6, X86_IC_FAR_CALL, 0, NT, "call far [rip]", 0 },
	{ M64, "48 ff 2d 00 00 00 00", 7, X86_IC_FAR_JMP, 0, NT, "jmp far m16:64", 0 },
	{ M64, "c3", 1, X86_IC_RET_NEAR, 0, NT, "ret", 0 },
	{ M64, "f2 c3", 2, X86_IC_RET_NEAR, 0, NT, "bnd ret", 0 },
	{ M64, "c2 08 00", 3, X86_IC_RET_NEAR, 0, NT, "ret 8", 0 },
	{ M64, "cb", 1, X86_IC_FAR_RET, 0, NT, "retf", 0 },
	{ M64, "48 ca 10 00", 4, X86_IC_FAR_RET, 0, NT, "retfq 16", 0 },
	{ M64, "48 cf", 2, X86_IC_IRET, 0, NT, "iretq", 0 },
	{ M64, "cc", 1, X86_IC_INT, 0, NT, "int3", 0 },
	{ M64, "cd 80", 2, X86_IC_INT, 0, NT, "int 0x80", 0 },
	{ M64, "f1", 1, X86_IC_INT, 0, NT, "int1", 0 },
	{ M64, "ce", -X86_ERR_INVALID, IC_OTHER, 0, NT, "into is invalid in 64-bit mode", 0 },
	{ M64, "0f 05", 2, X86_IC_SYSCALL, 0, NT, "syscall", 0 },
	{ M64, "48 0f 07", 3, X86_IC_SYSRET, 0, NT, "sysretq", 0 },
	{ M64, "0f 34", 2, X86_IC_SYSENTER, 0, NT, "sysenter", 0 },
	{ M64, "48 0f 35", 3, X86_IC_SYSEXIT, 0, NT, "sysexitq", 0 },
	{ M64, "0f 01 c2", 3, X86_IC_VMLAUNCH, 0, NT, "vmlaunch", 0 },
	{ M64, "0f 01 c3", 3, X86_IC_VMRESUME, 0, NT, "vmresume", 0 },
	{ M64, "0f 01 c1", 3, X86_IC_VMCALL, 0, NT, "vmcall", 0 },
	{ M64, "0f 01 d0", 3, IC_OTHER, 0, NT, "xgetbv", 0 },
	{ M64, "f3 0f ae e0", 4, X86_IC_PTWRITE, 0, NT, "ptwrite eax", 0 },
	{ M64, "f3 48 0f ae 20", 5, X86_IC_PTWRITE, 0, NT, "ptwrite qword [rax]", 0 },
	{ M64, "0f ae 20", 3, IC_OTHER, 0, NT, "xsave [rax] (no F3: not ptwrite)", 0 },
	{ M64, "f4", 1, X86_IC_HLT, 0, NT, "hlt", 0 },
	{ M64, "f3 0f 01 ca", 4, X86_IC_IRET, 0, NT, "eretu (FRED)", 0 },
	{ M64, "f2 0f 01 ca", 4, X86_IC_IRET, 0, NT, "erets (FRED)", 0 },
	{ M32, "f3 0f 01 ca", -X86_ERR_INVALID, IC_OTHER, 0, NT, "eretu outside 64-bit mode", 0 },
	{ M64, "0f 01 c6", 3, IC_OTHER, 0, NT, "wrmsrns", 0 },
	{ M64, "f2 0f 00 f0", 4, IC_OTHER, 0, NT, "lkgs ax", 0 },
	{ M64, "c4 e2 79 e0 08", 5, IC_OTHER, 0, NT, "cmpoxadd [rax],ecx,eax", 0 },
	{ M64, "c4 e2 79 e0 c8", -X86_ERR_INVALID, IC_OTHER, 0, NT, "cmpoxadd needs memory", 0 },
	{ M64, "0f 0b", 2, X86_IC_UD, 0, NT, "ud2", 0 },
	{ M64, "0f b9 c0", 3, X86_IC_UD, 0, NT, "ud1 eax,eax", 0 },
	{ M64, "c7 f8 00 01 00 00", 6, IC_OTHER, 0x1000, 0x1106, "xbegin rel32: a target, not a branch", 0 },
	/* ---- invalid in 64-bit mode ---- */
	{ M64, "06", -X86_ERR_INVALID, IC_OTHER, 0, NT, "push es", 0 },
	{ M64, "d6", -X86_ERR_INVALID, IC_OTHER, 0, NT, "salc", 0 },
	{ M64, "ea 00 00 00 00 10 00", -X86_ERR_INVALID, IC_OTHER, 0, NT, "jmp ptr16:32", 0 },
	{ M64, "0f 04", -X86_ERR_INVALID, IC_OTHER, 0, NT, "0F 04", 0 },
	{ M64, "8d c0", -X86_ERR_INVALID, IC_OTHER, 0, NT, "lea with a register operand", 0 },
	{ M64, "fe f8", -X86_ERR_INVALID, IC_OTHER, 0, NT, "FE /7", 0 },
	/* ---- 32-bit mode ---- */
	{ M32, "ea 00 00 01 00 10 00", 7, X86_IC_FAR_JMP, 0, NT, "jmp ptr16:32", 0 },
	{ M32, "66 ea 00 01 10 00", 6, X86_IC_FAR_JMP, 0, NT, "66h jmp ptr16:16", 0 },
	{ M32, "9a 00 00 01 00 10 00", 7, X86_IC_FAR_CALL, 0, NT, "call ptr16:32", 0 },
	{ M32, "ce", 1, X86_IC_INT, 0, NT, "into", 0 },
	{ M32, "cf", 1, X86_IC_IRET, 0, NT, "iretd", 0 },
	{ M32, "e8 00 00 00 00", 5, X86_IC_CALL_DIRECT, 0xfffffff0, 0xfffffff5, "call rel32", 0 },
	{ M32, "e9 10 00 00 00", 5, X86_IC_JMP_DIRECT, 0xfffffff0, 0x5, "jmp wraps at 4 GiB", 0 },
	{ M32, "66 e9 fc ff", 4, X86_IC_JMP_DIRECT, 0x10000, 0x0, "66h jmp rel16: IP wraps to 16 bits", 0 },
	{ M32, "66 e8 00 00", 4, X86_IC_CALL_DIRECT, 0x1000, 0x1004, "66h zero-length call rel16", 0 },
	{ M32, "66 0f 84 10 00", 5, X86_IC_JCC, 0x1000, 0x1015, "66h je rel16", 0 },
	{ M32, "e3 00", 2, X86_IC_JCC, 0x1000, 0x1002, "jecxz", 0 },
	{ M32, "a1 00 00 00 00", 5, IC_OTHER, 0, NT, "mov eax,moffs32", 0 },
	{ M32, "67 a1 00 00", 4, IC_OTHER, 0, NT, "67h: moffs16", 0 },
	{ M32, "67 8b 06 00 10", 5, IC_OTHER, 0, NT, "67h: [disp16] (rm 110)", 0 },
	{ M32, "67 8b 00", 3, IC_OTHER, 0, NT, "67h: [bx+si]", 0 },
	{ M32, "67 8b 44 08", 4, IC_OTHER, 0, NT, "67h: [si+disp8]", 0 },
	{ M32, "67 8b 84 00 10", 5, IC_OTHER, 0, NT, "67h: [si+disp16]", 0 },
	{ M32, "67 8b 04", 3, IC_OTHER, 0, NT, "67h: [si] (rm 100 is not SIB)", 0 },
	{ M32, "8b 04 24", 3, IC_OTHER, 0, NT, "mov eax,[esp]", 0 },
	{ M32, "8b 05 00 00 00 00", 6, IC_OTHER, 0, NT, "mov eax,[disp32]", 0 },
	{ M32, "40", 1, IC_OTHER, 0, NT, "inc eax (not REX)", 0 },
	{ M32, "48 b8 01 00 00 00", 1, IC_OTHER, 0, NT, "dec eax: 48 is no REX here", 0 },
	{ M32, "c4 00", 2, IC_OTHER, 0, NT, "les eax,[eax] (mod != 11: not VEX)", 0 },
	{ M32, "c5 05 00 00 00 00", 6, IC_OTHER, 0, NT, "lds eax,[disp32]", 0 },
	{ M32, "c5 f8 77", 3, IC_OTHER, 0, NT, "vzeroupper (mod 11: VEX)", 0 },
	{ M32, "c4 e3 7d 18 c1 01", 6, IC_OTHER, 0, NT, "VEX3 in 32-bit mode", 0 },
	{ M32, "62 00", 2, IC_OTHER, 0, NT, "bound eax,[eax]", 0 },
	{ M32, "62 f1 7c 48 10 00", 6, IC_OTHER, 0, NT, "vmovups zmm0,[eax]: EVEX", 0 },
	{ M32, "62 f1 7c 40 10 00", -X86_ERR_INVALID, IC_OTHER, 0, NT, "EVEX.V' = 0 outside 64-bit", 0 },
	{ M32, "8f 00", 2, IC_OTHER, 0, NT, "pop [eax]", 0 },
	{ M32, "8f e8 78 c0 c1 05", 6, IC_OTHER, 0, NT, "XOP in 32-bit mode", 0 },
	{ M32, "0f 01 c2", 3, X86_IC_VMLAUNCH, 0, NT, "vmlaunch", 0 },
	{ M32, "c8 00 01 00", 4, IC_OTHER, 0, NT, "enter 256,0", 0 },
	{ M32, "66 c8 00 01 00", 5, IC_OTHER, 0, NT, "enterw: still imm16+imm8", 0 },
	/* ---- 16-bit mode ---- */
	{ M16, "e8 10 00", 3, X86_IC_CALL_DIRECT, 0xfff0, 0x0003, "call rel16 wraps in 64 KiB", 0 },
	{ M16, "e8 00 00", 3, X86_IC_CALL_DIRECT, 0x7c00, 0x7c03, "zero-length call rel16", 0 },
	{ M16, "66 e8 00 00 01 00", 6, X86_IC_CALL_DIRECT, 0x7c00, 0x17c06, "66h call rel32", 0 },
	{ M16, "e9 fd ff", 3, X86_IC_JMP_DIRECT, 0x100, 0x100, "jmp rel16 to self", 0 },
	{ M16, "0f 84 00 00", 4, X86_IC_JCC, 0x100, 0x104, "je rel16", 0 },
	{ M16, "ea 5b e0 00 f0", 5, X86_IC_FAR_JMP, 0xfff0, NT, "jmp f000:e05b (reset vector)", 0 },
	{ M16, "66 ea 00 00 00 00 08 00", 8, X86_IC_FAR_JMP, 0, NT, "jmp ptr16:32 from 16-bit code", 0 },
	{ M16, "b8 01 00", 3, IC_OTHER, 0, NT, "mov ax,imm16", 0 },
	{ M16, "66 b8 01 00 00 00", 6, IC_OTHER, 0, NT, "66h: mov eax,imm32", 0 },
	{ M16, "8b 04", 2, IC_OTHER, 0, NT, "mov ax,[si]", 0 },
	{ M16, "8b 06 00 10", 4, IC_OTHER, 0, NT, "mov ax,[disp16]", 0 },
	{ M16, "8b 46 00", 3, IC_OTHER, 0, NT, "mov ax,[bp+0]", 0 },
	{ M16, "67 8b 04 24", 4, IC_OTHER, 0, NT, "67h: 32-bit addressing with SIB", 0 },
	{ M16, "67 66 8b 05 00 00 00 00", 8, IC_OTHER, 0, NT, "67h: [disp32]", 0 },
	{ M16, "a1 00 10", 3, IC_OTHER, 0, NT, "mov ax,moffs16", 0 },
	{ M16, "67 a1 00 10 00 00", 6, IC_OTHER, 0, NT, "67h: moffs32", 0 },
	{ M16, "81 c0 01 00", 4, IC_OTHER, 0, NT, "add ax,imm16", 0 },
	{ M16, "66 81 c0 01 00 00 00", 7, IC_OTHER, 0, NT, "add eax,imm32", 0 },
	{ M16, "0f 20 c0", 3, IC_OTHER, 0, NT, "mov eax,cr0", 0 },
	{ M16, "0f 22 d8", 3, X86_IC_MOV_CR3, 0, NT, "mov cr3,eax", 0 },
	{ M16, "cf", 1, X86_IC_IRET, 0, NT, "iret", 0 },
	{ M16, "fa", 1, IC_OTHER, 0, NT, "cli", 0 },
	/* ---- limits and truncation ---- */
	{ M64, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", 15, IC_OTHER, 0, NT, "15 bytes is fine", 0 },
	{ M64, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", -X86_ERR_TOO_LONG, IC_OTHER, 0, NT, "16 bytes", 0 },
	{ M64, "66 66 66 66 66 66 66 66 66 66 48 b8 00 00 00 00 00 00 00 00", -X86_ERR_TOO_LONG, IC_OTHER, 0, NT, "imm64 crosses 15", 0 },
	{ M64, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 66", -X86_ERR_TOO_LONG, IC_OTHER, 0, NT, "15 prefixes, avail 15", 0 },
	{ M64, "66 66 66 66 66 66 66 66 66 66 66 66 66 66", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "14 prefixes, avail 14", 0 },
	{ M64, "e8 00 00", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "call cut in its rel32", 0 },
	{ M64, "0f", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "escape only", 0 },
	{ M64, "8b 04", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "SIB missing", 0 },
	{ M64, "62 f1 7c", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "EVEX cut", 0 },
	{ M32, "c5", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "C5 alone: LDS or VEX?", 0 },
	{ M64, "", -X86_ERR_NEED_MORE, IC_OTHER, 0, NT, "no bytes", 0 },
	{ M64, "e8 00 00 00 00", 5, X86_IC_CALL_DIRECT, 0, 5, "avail larger than the instruction", 15 },
};

static size_t parse_hex(const char *s, uint8_t *out)
{
	size_t n = 0;
	unsigned v;
	int k;
	while (sscanf(s, " %2x%n", &v, &k) == 1) {
		out[n++] = (uint8_t)v;
		s += k;
	}
	return n;
}

int main(void)
{
	char name[160];
	for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
		const struct vec *v = &vecs[i];
		uint8_t buf[32];
		memset(buf, 0, sizeof buf);
		size_t n = parse_hex(v->hex, buf);
		size_t avail = v->avail ? (size_t)v->avail : n;
		struct x86_insn in;
		memset(&in, 0xff, sizeof in); /* forgotten fields show */
		int r = x86_decode(&in, buf, avail, v->ip, (enum x86_mode)v->mode);
		snprintf(name, sizeof name, "x86 %d-bit %s: %s", 16 << v->mode, v->hex, v->what);
		if (r != v->ret) {
			CHECKF(0, name, "returned %d (%s), want %d", r, r < 0 ? x86_errstr(r) : "ok", v->ret);
			continue;
		}
		if (r < 0) {
			CHECKF(1, name, "-");
			continue;
		}
		bool want_t = v->target != NT;
		bool zl = v->iclass == X86_IC_CALL_DIRECT && v->target == v->ip + (uint64_t)r;
		CHECKF(in.len == r && in.iclass == v->iclass && in.has_target == want_t &&
		       (!want_t || in.target == v->target) && in.zero_len_call == zl,
		       name, "len %u class %s has_target %d target %#llx zero_len_call %d",
		       in.len, x86_iclass_name(in.iclass), in.has_target,
		       (unsigned long long)in.target, in.zero_len_call);
	}

	/* Every truncation of a valid instruction asks for more bytes. */
	{
		static const char *const full[] = {
			"62 f1 7c 08 10 04 25 00 00 00 00", "66 48 b8 01 02 03 04 05 06 07 08",
			"8f ea 78 10 c1 01 02 00 00", "0f 0f 40 10 9e", "c4 e3 7d 18 c1 01",
			"f3 48 0f ae 20", "67 8b 05 00 00 00 00",
		};
		int bad = 0;
		for (size_t i = 0; i < sizeof full / sizeof full[0]; i++) {
			uint8_t buf[16];
			size_t n = parse_hex(full[i], buf);
			struct x86_insn in;
			for (size_t k = 0; k < n; k++)
				bad += x86_decode(&in, buf, k, 0, X86_MODE_64) != -X86_ERR_NEED_MORE;
			bad += x86_decode(&in, buf, n, 0, X86_MODE_64) != (int)n;
		}
		CHECKF(bad == 0, "x86 every truncation of a valid instruction is need-more", "%d", bad);
	}

	struct x86_insn in;
	uint8_t nop = 0x90;
	CHECK(x86_decode(&in, &nop, 1, 0, (enum x86_mode)3) == -X86_ERR_MODE, "x86 bad mode");
	CHECK(x86_selfcheck() == 0, "x86_selfcheck");
	int distinct = 1;
	for (int e = X86_ERR_NEED_MORE; e <= X86_ERR_MODE; e++)
		for (int f = e + 1; f <= X86_ERR_MODE; f++)
			distinct &= strcmp(x86_errstr(-e), x86_errstr(-f)) != 0;
	CHECK(distinct, "x86_errstr distinct messages");
	int named = 1;
	for (int c = 0; c < X86_IC_COUNT; c++)
		named &= strcmp(x86_iclass_name(c), "?") != 0;
	CHECK(named && !strcmp(x86_iclass_name(X86_IC_COUNT), "?"), "x86_iclass_name");
	return check_exit();
}
