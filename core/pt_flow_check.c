/*
 * ptflow_selfcheck(): synthesize traces over a small built-in function set
 * and decode them; the decoded instruction count and the number of errors
 * must match. For the firmware self-test and the unit tests.
 */
#include "core/pt_flow.h"
#include "core/pt_synth.h"

#include "core/mem.h"

/*
 * 64-bit code at 0x1000:
 *   1000: 31 c0          xor eax, eax
 *   1002: ff c0          inc eax            <- loop
 *   1004: e8 07 00 00 00 call 1010
 *   1009: 83 f8 10       cmp eax, 16
 *   100c: 75 f4          jne 1002
 *   100e: ff e3          jmp rbx            (indirect)
 *   1010: 85 c0          test eax, eax      <- function
 *   1012: 74 02          je 1016
 *   1014: 90             nop
 *   1015: 90             nop
 *   1016: c3             ret
 */
static const uint8_t code[] = {
	0x31, 0xc0, 0xff, 0xc0, 0xe8, 0x07, 0x00, 0x00, 0x00, 0x83, 0xf8, 0x10,
	0x75, 0xf4, 0xff, 0xe3, 0x85, 0xc0, 0x74, 0x02, 0x90, 0x90, 0xc3,
};

struct count {
	uint64_t n;
	uint64_t sum;
};

static void c_insn(void *ctx, uint64_t ip)
{
	struct count *c = ctx;
	c->n++;
	c->sum = c->sum * 31 + ip;
}

static void c_run(void *ctx, const struct ptflow_run *r)
{
	struct count *c = ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		c->n++;
		c->sum = c->sum * 31 + ip;
		ip += r->lens[i];
	}
}

int ptflow_selfcheck(void)
{
	struct ptimg_flat flat = { code, 0x1000, sizeof(code) };
	struct ptimg img = { ptimg_flat_read, &flat };
	static const uint64_t entries[] = { 0x1000, 0x1010 };
	uint8_t buf[4096];
	struct ptsynth syn;
	struct ptflow_block cache[16];
	struct ptflow_decoder dec;

	for (unsigned seed = 1; seed <= 4; seed++) {
		struct ptsynth_config sc;
		efipt_memset(&sc, 0, sizeof(sc));
		sc.image = img;
		sc.start = 0x1000;
		sc.entries = entries;
		sc.nentries = 2;
		sc.seed = seed;
		sc.max_insns = 500;
		sc.psb_period = 256;
		sc.p_interrupt = seed & 1 ? 2000 : 0;
		sc.p_ovf = seed & 2 ? 2000 : 0;
		sc.disretc = seed == 4;
		struct count want = { 0, 0 }, got = { 0, 0 };
		struct ptsynth_sink ss = { &want, c_insn, 0 };
		struct ptsynth_result res;
		if (ptsynth_run(&syn, &sc, &ss, buf, sizeof(buf), &res))
			return -1;
		struct ptflow_config fc;
		efipt_memset(&fc, 0, sizeof(fc));
		fc.image = img;
		fc.cache = cache;
		fc.cache_size = 16;
		fc.disretc = sc.disretc;
		struct ptflow_sink fs = { &got, c_run, 0 };
		if (ptflow_init(&dec, &fc, &fs))
			return -2;
		if (ptflow_decode(&dec, buf, res.size, 0) != 0)
			return -3;
		if (got.n != want.n || got.sum != want.sum || want.n < 100)
			return -4;
	}
	return 0;
}
