/*
 * libFuzzer target for the x86 length decoder (core/x86_insn.c).
 * The input is swept linearly in each of the three modes. Invariants:
 *  - the result is a length 1..15 within the bytes available, or one of
 *    the errors; need-more only when fewer than 15 bytes were available;
 *  - a decoded instruction decodes identically from exactly its own bytes,
 *    and every shorter prefix of it asks for more bytes;
 *  - class, target and zero-length-call flags are consistent, targets are
 *    wrapped to 32 bits outside 64-bit mode;
 *  - whenever Zydis (minus Knights Corner) decodes the bytes, x86_decode
 *    does too, with the same length.
 * Built by mk/x86.mk with clang -fsanitize=fuzzer,address,undefined.
 */
#include <Zydis/Zydis.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/x86_insn.h"

#define REQUIRE(c)                      \
	do {                            \
		if (!(c))               \
			abort();        \
	} while (0)

static ZydisDecoder zdec[3];
static int zinit;

static int zydis_len(int mode, const uint8_t *p, size_t n)
{
	ZydisDecodedInstruction z;
	ZydisDecoderContext ctx;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&zdec[mode], &ctx, p, n, &z)))
		return -1;
	if (z.encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX || z.meta.isa_ext == ZYDIS_ISA_EXT_KNC ||
	    z.meta.isa_ext == ZYDIS_ISA_EXT_KNCE || z.meta.isa_ext == ZYDIS_ISA_EXT_KNCV)
		return -1;
	return z.length;
}

static void one(const uint8_t *p, size_t avail, uint64_t ip, int mode)
{
	struct x86_insn a, b;
	int n = x86_decode(&a, p, avail, ip, (enum x86_mode)mode);
	if (n < 0) {
		REQUIRE(n == -X86_ERR_NEED_MORE || n == -X86_ERR_INVALID || n == -X86_ERR_TOO_LONG);
		REQUIRE(n != -X86_ERR_NEED_MORE || avail < 15);
		REQUIRE(zydis_len(mode, p, avail) < 0);
		return;
	}
	REQUIRE(n >= 1 && n <= 15 && (size_t)n <= avail && a.len == n);
	REQUIRE(a.iclass < X86_IC_COUNT);
	REQUIRE(zydis_len(mode, p, avail) < 0 || zydis_len(mode, p, avail) == n);
	REQUIRE(x86_decode(&b, p, (size_t)n, ip, (enum x86_mode)mode) == n);
	REQUIRE(b.iclass == a.iclass && b.has_target == a.has_target && b.target == a.target &&
		b.zero_len_call == a.zero_len_call && b.opcode == a.opcode);
	for (int k = 0; k < n; k++)
		REQUIRE(x86_decode(&b, p, (size_t)k, ip, (enum x86_mode)mode) == -X86_ERR_NEED_MORE);
	if (a.zero_len_call) {
		/* 16-bit operand size wraps at 64 KiB, except for 16-bit code
		 * above 64 KiB (a CS base that is not 0: x86_insn.h) */
		bool wrap16 = a.osize == 16 && !(mode == X86_MODE_16 && ip > 0xffff);
		uint64_t mask = mode == X86_MODE_64 ? ~0ull : wrap16 ? 0xffff : 0xffffffff;
		REQUIRE(a.iclass == X86_IC_CALL_DIRECT && a.target == ((ip + (uint64_t)n) & mask));
	}
	if (a.has_target && mode != X86_MODE_64)
		REQUIRE(a.target <= 0xffffffffu);
	if (a.iclass == X86_IC_JCC || a.iclass == X86_IC_JMP_DIRECT || a.iclass == X86_IC_CALL_DIRECT)
		REQUIRE(a.has_target);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!zinit) {
		ZydisDecoderInit(&zdec[0], ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
		ZydisDecoderInit(&zdec[1], ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
		ZydisDecoderInit(&zdec[2], ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		zinit = 1;
	}
	if (size > 4096)
		size = 4096;
	/* Copy so that reads past the end are caught by ASan. */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (int mode = 0; mode < 3; mode++) {
		/* 16-bit code both at the reset vector and below 64 KiB */
		uint64_t ip = mode == 2 ? 0xfffffffffffff000ull : (mode == 0 && (size & 1)) ? 0xf000 : 0xfffff000u;
		for (size_t off = 0; off < size;) {
			struct x86_insn in;
			one(buf + off, size - off, ip + off, mode);
			int n = x86_decode(&in, buf + off, size - off, ip + off, (enum x86_mode)mode);
			off += n > 0 ? (size_t)n : 1;
		}
	}
	free(buf);
	return 0;
}
