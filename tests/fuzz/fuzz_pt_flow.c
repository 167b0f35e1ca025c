/*
 * libFuzzer target for the flow decoder: random traces over a fixed code
 * image (hand-assembled branches of every kind, then pseudo-random bytes).
 * No crash, no hang (work is bounded per input byte by max_steps), no
 * allocation. Input byte 0 picks options (DisTNT, DisRETC, errata, cache,
 * instruction output), the rest is the trace. Each input is decoded with
 * and without the block cache, which must agree exactly. The code changes
 * while decoding (ptflow_on_position()): every few bytes of the trace,
 * chosen by the input's size, the image switches to another version.
 *
 * With FLOW_FUZZ_SEEDS=DIR set, the first run also writes synthesized
 * traces over the image into DIR as a starting corpus.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_flow.h"
#include "core/pt_synth.h"
#include "core/x86_insn.h"

static uint8_t image[8192];
static const uint8_t head[] = {
	0x90, 0x74, 0x03, 0x90, 0xeb, 0x02, 0x90, 0x90, 0xe8, 0x13, 0x00, 0x00, 0x00,
	0xff, 0xe0, 0x0f, 0x05, 0x0f, 0x01, 0xc2, 0xf3, 0x48, 0x0f, 0xae, 0xe0,
	0x0f, 0x22, 0xd8, 0xf4, 0x90, 0x90, 0x90, 0x90, 0xc3, 0xe8, 0x00, 0x00,
	0x00, 0x00, 0xc3, 0xeb, 0xfe, 0x75, 0xd4, 0xe2, 0xd2, 0xff, 0xd0, 0xc3,
};
static uint8_t image_b[sizeof(image)];	/* the code changed: every 7th byte */
static struct ptimg_flat flat = { image, 0x1000, sizeof(image) };

static void build_image(void)
{
	if (image[0])
		return;
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(image); i++) {
		x = x * 1103515245u + 12345u;
		image[i] = (uint8_t)(x >> 16);
	}
	memcpy(image, head, sizeof(head));
	for (size_t i = 0; i < sizeof(image); i++)
		image_b[i] = (uint8_t)(image[i] ^ (i % 7 ? 0 : 0x5a));
}

/* ptflow_on_position(): the other version of the code from off on, the
 * next change step bytes later. */
static uint64_t code_step;
static uint64_t switch_code(void *ctx, uint64_t off)
{
	(void)ctx;
	flat.bytes = flat.bytes == image ? image_b : image;
	return off + code_step;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	build_image();
	const char *dir = getenv("FLOW_FUZZ_SEEDS");
	if (!dir)
		return 0;
	static uint8_t buf[16384];
	static struct ptsynth syn;
	for (int seed = 1; seed <= 16; seed++) {
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image.read = ptimg_flat_read;
		sc.image.ctx = &flat;
		sc.start = 0x1000 + (seed % 2 ? 0 : 0x22);
		sc.seed = (uint64_t)seed;
		sc.max_insns = 2000;
		sc.psb_period = 512;
		sc.p_interrupt = 500;
		sc.p_ovf = 1000;
		sc.p_disable = 1000;
		/* seeds 9-16: the opt-in packets too (TSX, power events, Event
		 * Trace, PTW with and without FUP, mode changes, DisTNT) */
		if (seed > 8) {
			sc.p_tsx = 2000;
			sc.p_power = 1000;
			sc.event_trace = true;
			sc.ptw = true;
			sc.fup_on_ptw = seed & 1;
			sc.p_mode = 20000;
			sc.distnt = seed & 2;
			sc.disretc = sc.distnt;
		}
		struct ptsynth_result res;
		buf[0] = (uint8_t)(seed * 37);
		if (seed > 8) /* decoder options as the trace was written */
			buf[0] = (uint8_t)((buf[0] & ~3u) | (sc.distnt ? 3 : 0));
		if (ptsynth_run(&syn, &sc, NULL, buf + 1, sizeof(buf) - 1, &res))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/synth-%d", dir, seed);
		FILE *f = fopen(path, "wb");
		if (f) {
			fwrite(buf, 1, res.size + 1, f);
			fclose(f);
		}
	}
	return 0;
}

/* What a decode delivered, folded into a hash: every instruction (address
 * and length) and every event, in order; with blocks, where each call
 * returns (rets: the after of every block ending in a CALL or INT that
 * goes elsewhere than the next instruction), in order. */
struct seen {
	uint64_t hash, insns, events, rets;
};

static void mix_into(uint64_t *h, uint64_t v)
{
	*h = (*h ^ v) * 0x100000001b3ull;
	*h ^= *h >> 29;
}

static void mix(struct seen *s, uint64_t v)
{
	mix_into(&s->hash, v);
}

/* A block that ends in a call: where it returns, to s->rets. */
static void mix_ret(struct seen *s, const struct ptflow_blk *b)
{
	if (x86_returns_after(b->iclass) && b->end == PTFLOW_BEND_BRANCH && b->next != b->after)
		mix_into(&s->rets, b->after);
}

static void on_run(void *ctx, const struct ptflow_run *r)
{
	struct seen *s = ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		mix(s, ip);
		mix(s, r->lens[i]);
		ip += r->lens[i];
	}
	s->insns += r->ninsn;
}

/* A timed batch's marks lie inside it, in order (struct ptflow_batch). */
static void check_marks(const struct ptflow_batch *b)
{
	for (size_t k = 0; k < b->nmarks; k++)
		if (!b->marks[k].at || b->marks[k].at >= b->n ||
		    (k && b->marks[k].at <= b->marks[k - 1].at))
			__builtin_trap();
}

/* Blocks, expanded into the instructions on_run() would see. */
static void on_blocks(void *ctx, const struct ptflow_batch *batch)
{
	check_marks(batch);
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	for (size_t i = 0; i < n; i++) {
		uint8_t lens[PTFLOW_BLOCK_MAX];
		struct ptflow_run r = { b[i].ip, lens, 0, b[i].mode, b[i].iclass };
		r.ninsn = ptflow_blk_lens(batch->image, &b[i], lens);
		if (r.ninsn != b[i].ninsn || b[i].after != b[i].ip + b[i].size)
			__builtin_trap();
		mix_ret(ctx, &b[i]);
		on_run(ctx, &r);
	}
}

/* Regions for ptflow_blk_regions(): the image in 64-byte pieces. */
static uint64_t region_end(void *ctx, uint64_t ip)
{
	(void)ctx;
	return ip - flat.base < flat.size ? (ip | 63) + 1 : 0;
}

/* Blocks with regions: a block that holds more instructions than the code
 * at its ip (merged, or a chain) must lie in one region, and so must the
 * end of its last instruction when a return comes back there; counted
 * only. */
static void on_region_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct seen *s = ctx;
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	check_marks(batch);
	for (size_t i = 0; i < n; i++) {
		uint8_t lens[PTFLOW_BLOCK_MAX];
		uint64_t end = region_end(NULL, b[i].ip);
		if (ptflow_blk_lens(batch->image, &b[i], lens) != b[i].ninsn &&
		    (!end || !b[i].size || b[i].ip + b[i].size > end ||
		     (x86_returns_after(b[i].iclass) && region_end(NULL, b[i].after - 1) != end)))
			__builtin_trap();
		mix_ret(s, &b[i]);
		s->insns += b[i].ninsn;
	}
}

/* Blocks counted (ptflow_blocks_counted()): each with its lengths, as
 * often as it ran. */
static void on_counted_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct seen *s = ctx;
	const struct ptflow_blk *b = batch->b;
	for (size_t i = 0; i < batch->n; i++) {
		uint8_t lens[PTFLOW_BLOCK_MAX];
		if (ptflow_blk_lens(batch->image, &b[i], lens) != b[i].ninsn ||
		    (batch->execs && !batch->execs[i]))
			__builtin_trap();
		s->insns += b[i].ninsn * (batch->execs ? batch->execs[i] : 1);
	}
}

static void on_event(void *ctx, const struct ptflow_event *ev)
{
	struct seen *s = ctx;
	if (ev->type == PTFLOW_EV_ERROR && !ev->msg)
		__builtin_trap();
	mix(s, ev->type | (uint64_t)ev->has_ip << 8 | (uint64_t)ev->flag << 9);
	mix(s, ev->offset);
	mix(s, ev->has_ip ? ev->ip : 0);
	mix(s, ev->target);
	mix(s, ev->value);
	mix(s, ev->aux);
	mix(s, ev->has_time ? ev->tsc : 0);
	s->events++;
}

/* Decode data[1..size) with cache_size entries of cache (0: none);
 * blocks 1: as blocks too, 2: as blocks merged in regions, 3: as blocks
 * counted. */
static void decode(const uint8_t *data, size_t size, struct ptflow_block *cache,
		   uint32_t cache_size, int blocks, struct seen *s, struct ptflow_stat *st)
{
	static struct ptflow_decoder d;
	struct ptflow_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	memset(s, 0, sizeof(*s));
	cfg.image.read = ptimg_flat_read;
	cfg.image.ctx = &flat;
	cfg.cache = cache_size ? cache : NULL;
	cfg.cache_size = cache_size;
	/* 2048 lets the lean loop run (6 TNT bits x 255 instructions) */
	cfg.max_steps = data[0] & 0x10 ? 2048 : 256;
	cfg.distnt = data[0] & 1;
	cfg.disretc = data[0] & 2;
	if (data[0] & 4)
		cfg.errata = ptflow_errata_for_cpu(6, 0x4e, -1);
	if (data[0] & 8)
		cfg.errata |= ptflow_errata_for_cpu(6, 0x5c, -1) | PTFLOW_ERRATUM_SKZ84;
	/* MTCs and CYCs count (an estimate that moves: marks in timed
	 * batches) */
	cfg.cpuid15_eax = 2;
	cfg.cpuid15_ebx = 168;
	cfg.mtc_freq = 3;
	cfg.nom_freq = 24;
	struct ptflow_sink sink = { s, data[0] & 0x40 && !blocks ? on_run : NULL, on_event };
	if (ptflow_init(&d, &cfg, &sink))
		__builtin_trap();
	flat.bytes = image;
	code_step = 8 + size % 57;
	ptflow_on_position(&d, code_step, switch_code, NULL);
	static uint64_t counts[2 * 64];
	if (blocks) {
		ptflow_on_blocks(&d, blocks == 2 ? on_region_blocks
				     : blocks == 3 ? on_counted_blocks : on_blocks);
		if (blocks == 3)
			ptflow_blocks_counted(&d, counts);
		/* handed over before each timing packet (in regions, on odd
		 * sizes, only where the flow may leave one): the same blocks */
		enum ptflow_timing how = PTFLOW_TIME_NONE;
		if (data[0] & 0x80)
			how = blocks == 2 && size & 1 ? PTFLOW_TIME_REGIONS : PTFLOW_TIME_BLOCKS;
		ptflow_blocks_timed(&d, how);
		if (blocks == 2)
			ptflow_blk_regions(&d, region_end, NULL);
	}
	long errs = ptflow_decode(&d, data + 1, size - 1, 0);
	if (errs < 0 || (uint64_t)errs != d.stat.errors)
		__builtin_trap();
	/* bounded work: at most max_steps instructions per packet (+ one
	 * block per packet and one for the start of each PSB) */
	if (d.stat.insns > (d.stat.packets + 2) * (cfg.max_steps + PTFLOW_BLOCK_MAX))
		__builtin_trap();
	if ((sink.run || blocks) && s->insns != d.stat.insns)
		__builtin_trap();
	*st = d.stat;
}

/*
 * Input byte 0: bit 0 DisTNT, 1 DisRETC, 2 and 3 errata, 4 max_steps 2048,
 * 5 the smallest cache (8: emptied again and again), 6 instructions to the
 * sink (as runs; always also as blocks), 7 blocks handed over before each
 * timing packet (ptflow_blocks_timed(); in regions PTFLOW_TIME_REGIONS
 * when the input's size is odd). Every input is decoded with the
 * cache and without (cache 0: block by block, none of the fast loops), and
 * both must deliver the same; so must the cache's blocks, and the blocks
 * merged in regions (ptflow_blk_regions()) and the blocks counted
 * (ptflow_blocks_counted()) count the same instructions; the blocks merged
 * in regions return where the blocks do.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ptflow_block cache[64];
	struct seen with, without, blocks;
	struct ptflow_stat sw, so, sb;

	if (!size)
		return 0;
	build_image();
	decode(data, size, cache, data[0] & 0x20 ? 8 : 64, 0, &with, &sw);
	decode(data, size, NULL, 0, 0, &without, &so);
	decode(data, size, cache, data[0] & 0x20 ? 8 : 64, 1, &blocks, &sb);
	struct seen merged;
	struct ptflow_stat sm;
	decode(data, size, cache, data[0] & 0x20 ? 8 : 64, 2, &merged, &sm);
	if (merged.insns != so.insns || merged.events != without.events ||
	    merged.rets != blocks.rets || sm.errors != so.errors)
		__builtin_trap();
	struct seen counted;
	struct ptflow_stat sc;
	decode(data, size, cache, data[0] & 0x20 ? 8 : 64, 3, &counted, &sc);
	if (counted.insns != so.insns || counted.events != without.events || sc.errors != so.errors)
		__builtin_trap();
	/* blocks deliver every instruction, runs only with bit 6 */
	bool same = (data[0] & 0x40 ? blocks.hash == without.hash : blocks.events == without.events) &&
		    blocks.insns == so.insns && sb.insns == so.insns && sb.errors == so.errors;
	if (!same)
		__builtin_trap();
	if (with.hash != without.hash || with.insns != without.insns ||
	    with.events != without.events || sw.insns != so.insns ||
	    sw.branches != so.branches || sw.events != so.events || sw.errors != so.errors) {
		fprintf(stderr, "cache and cache 0 differ: insns %llu/%llu events %llu/%llu "
			"errors %llu/%llu branches %llu/%llu\n",
			(unsigned long long)sw.insns, (unsigned long long)so.insns,
			(unsigned long long)sw.events, (unsigned long long)so.events,
			(unsigned long long)sw.errors, (unsigned long long)so.errors,
			(unsigned long long)sw.branches, (unsigned long long)so.branches);
		__builtin_trap();
	}
	return 0;
}
