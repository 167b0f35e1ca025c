/*
 * Flow decoder throughput, side by side with libipt on the same trace in the
 * same run: a trace of >= 100M instructions synthesized over libc's code,
 * decoded by efipt's flow decoder (instruction counts only, as
 * 'efipt insn --stat'), libipt's pt_insn_next and pt_blk_next (image from
 * the same file's PT_LOAD segments through a section cache). CPU time,
 * best of three runs each.
 *
 * usage: bench_pt_flow [ELF [MILLION-INSNS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "core/mem.h"
#include "core/pt_flow.h"
#include "core/pt_synth.h"
#include "host/input/pt_sections.h"
#include "tests/bench/libipt_blk.h"
#include "tests/libipt_insn.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)n);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* STT_FUNC symbols in code: function entries for indirect branches. */
static size_t funcs(const uint8_t *b, size_t len, struct ptsec_image *im, uint64_t *out, size_t max)
{
	size_t n = 0;
	uint64_t shoff = efipt_le64(b + 40);
	unsigned shnum = efipt_le16(b + 60);
	if (len < 64 || shoff > len || (uint64_t)shnum * 64 > len - shoff)
		return 0;
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = b + shoff + i * 64;
		uint32_t type = efipt_le32(sh + 4);
		uint64_t off = efipt_le64(sh + 24), sz = efipt_le64(sh + 32);
		if ((type != 2 && type != 11) || off > len || sz > len - off)
			continue;
		for (uint64_t e = off; e + 24 <= off + sz && n < max; e += 24) {
			uint8_t c;
			uint64_t v = efipt_le64(b + e + 8);
			if ((b[e + 4] & 0xf) == 2 && efipt_le64(b + e + 16) && ptsec_read(im, v, &c, 1) == 1)
				out[n++] = v;
		}
	}
	return n;
}

static uint64_t run_ours(const struct ptimg *img, const uint8_t *buf, size_t size, double *secs,
			 uint64_t *errors)
{
	static struct ptflow_block cache[1 << 19];
	static struct ptflow_decoder d;
	struct ptflow_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.image = *img;
	cfg.cache = cache;
	cfg.cache_size = 1 << 19;
	struct ptflow_sink sink = { NULL, NULL, NULL };
	ptflow_init(&d, &cfg, &sink);
	double t = now();
	ptflow_decode(&d, buf, size, 0);
	*secs = now() - t;
	*errors = d.stat.errors;
	if (getenv("BENCH_VERBOSE"))
		printf("  blocks %llu, decoded %llu, cache entries used %u, packets %llu\n",
		       (unsigned long long)d.stat.blocks,
		       (unsigned long long)d.stat.decoded, d.used, (unsigned long long)d.stat.packets);
	return d.stat.insns;
}

/* Consumers that see every instruction: a run callback (instruction
 * lengths decoded for each block) and a block sink (blocks from the fast
 * loops); both only add up what they are given. */
static void sum_run(void *ctx, const struct ptflow_run *r)
{
	*(uint64_t *)ctx += r->ninsn;
}

static void sum_blocks(void *ctx, const struct ptflow_batch *batch)
{
	uint64_t s = 0;
	for (size_t i = 0; i < batch->n; i++)
		s += batch->b[i].ninsn;
	*(uint64_t *)ctx += s;
}

enum { SINK_RUNS, SINK_BLOCKS };

/* As run_ours(), delivering to a sink; returns the instructions it saw. */
static uint64_t run_ours_sink(const struct ptimg *img, const uint8_t *buf, size_t size, int kind,
			      double *secs, uint64_t *errors)
{
	static struct ptflow_block cache[1 << 19];
	static struct ptflow_decoder d;
	struct ptflow_config cfg;
	uint64_t seen = 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.image = *img;
	cfg.cache = cache;
	cfg.cache_size = 1 << 19;
	struct ptflow_sink sink = { &seen, kind == SINK_RUNS ? sum_run : NULL, NULL };
	ptflow_init(&d, &cfg, &sink);
	if (kind == SINK_BLOCKS)
		ptflow_on_blocks(&d, sum_blocks);
	double t = now();
	ptflow_decode(&d, buf, size, 0);
	*secs = now() - t;
	*errors = d.stat.errors;
	return seen == d.stat.insns ? seen : 0;
}

static void count_insn(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn)
{
	(void)d;
	(void)insn;
	++*(uint64_t *)ctx;
}

static uint64_t run_insn(struct pt_image *image, uint8_t *buf, size_t size, double *secs,
			 uint64_t *errors)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	pt_insn_set_image(d, image);
	uint64_t n = 0;
	struct libipt_insn_walk w = { count_insn, &n, false, 0, 0, 0, NULL };
	double t = now();
	libipt_insn_walk(d, &w);
	*secs = now() - t;
	*errors = w.errors;
	pt_insn_free_decoder(d);
	return n;
}

static uint64_t run_blk(struct pt_image *image, uint8_t *buf, size_t size, double *secs,
			uint64_t *errors)
{
	uint64_t blocks;
	double t = now();
	uint64_t n = libipt_blk_count(image, buf, size, errors, &blocks);
	*secs = now() - t;
	return n;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint64_t want = (argc > 2 ? strtoull(argv[2], NULL, 0) : 100) * 1000000ull;
	struct ptsec_image im;
	ptsec_init(&im);
	if (ptsec_load_elf(&im, path)) {
		fprintf(stderr, "bench_pt_flow: %s\n", im.err);
		return 1;
	}
	size_t flen = 0;
	uint8_t *file = slurp(path, &flen);
	static uint64_t entries[1 << 16];
	size_t ne = file ? funcs(file, flen, &im, entries, 1 << 16) : 0;

	size_t cap = (size_t)(want / 2) + (64u << 20);
	uint8_t *buf = malloc(cap);
	struct ptsynth *syn = malloc(sizeof(*syn));
	struct ptsynth_config sc;
	memset(&sc, 0, sizeof(sc));
	sc.image = ptsec_ptimg(&im);
	sc.start = ptsec_last_entry(&im);
	sc.entries = entries;
	sc.nentries = ne;
	sc.seed = 42;
	sc.max_insns = want;
	sc.psb_period = 4096;
	sc.p_interrupt = 4;
	sc.biased = !getenv("BENCH_UNBIASED");
	struct ptsynth_result res;
	double t = now();
	ptsynth_run(syn, &sc, NULL, buf, cap, &res);
	double ts = now() - t;
	printf("trace: %s, %zu entries, %llu instructions, %zu bytes (%.2f bytes/insn), synthesized in %.2f s\n",
	       path, ne, (unsigned long long)res.insns, res.size, (double)res.size / (double)res.insns, ts);

	/* libipt image: the same PT_LOAD segments, through a section cache */
	struct pt_image_section_cache *isc = pt_iscache_alloc("bench");
	struct pt_image *image = pt_image_alloc("bench");
	if (file && flen >= 64) {
		uint64_t phoff = efipt_le64(file + 32);
		unsigned phnum = efipt_le16(file + 56);
		for (unsigned i = 0; i < phnum && phoff + (i + 1) * 56ull <= flen; i++) {
			const uint8_t *ph = file + phoff + i * 56;
			if (efipt_le32(ph) != 1 || !(efipt_le32(ph + 4) & 1))
				continue;
			int isid = pt_iscache_add_file(isc, path, efipt_le64(ph + 8), efipt_le64(ph + 32),
						       efipt_le64(ph + 16));
			if (isid < 0 || pt_image_add_cached(image, isc, isid, NULL) < 0)
				fprintf(stderr, "bench_pt_flow: libipt image: segment %u failed\n", i);
		}
	}

	double s_ours, s_insn, s_blk;
	uint64_t e_ours, e_insn, e_blk;
	struct ptimg img = ptsec_ptimg(&im);
	if (argc > 3 && !strcmp(argv[3], "ours")) { /* profiling: our decoder only */
		int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 5;
		for (int i = 0; i < reps; i++) {
			uint64_t n = run_ours(&img, buf, res.size, &s_ours, &e_ours);
			printf("efipt ptflow_decode:  %11llu insns %7.3f s %8.1f M insn/s\n",
			       (unsigned long long)n, s_ours, (double)n / s_ours / 1e6);
		}
		return 0;
	}
	if (argc > 3 && !strcmp(argv[3], "blocks")) { /* profiling: the block sink */
		int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 5;
		for (int i = 0; i < reps; i++) {
			uint64_t n = run_ours_sink(&img, buf, res.size, SINK_BLOCKS, &s_ours, &e_ours);
			printf("efipt block sink:     %11llu insns %7.3f s %8.1f M insn/s\n",
			       (unsigned long long)n, s_ours, (double)n / s_ours / 1e6);
		}
		return 0;
	}
	/* best of three runs each, interleaved: the machine is shared */
	uint64_t n_ours = 0, n_insn = 0, n_blk = 0, n_sblk = 0, n_srun = 0, e_sblk, e_srun;
	double s_sblk = 1e30, s_srun = 1e30;
	s_ours = s_insn = s_blk = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		double t1, t2, t3, t4, t5;
		n_ours = run_ours(&img, buf, res.size, &t1, &e_ours);
		n_sblk = run_ours_sink(&img, buf, res.size, SINK_BLOCKS, &t4, &e_sblk);
		n_srun = run_ours_sink(&img, buf, res.size, SINK_RUNS, &t5, &e_srun);
		n_insn = run_insn(image, buf, res.size, &t2, &e_insn);
		n_blk = run_blk(image, buf, res.size, &t3, &e_blk);
		s_ours = t1 < s_ours ? t1 : s_ours;
		s_insn = t2 < s_insn ? t2 : s_insn;
		s_blk = t3 < s_blk ? t3 : s_blk;
		s_sblk = t4 < s_sblk ? t4 : s_sblk;
		s_srun = t5 < s_srun ? t5 : s_srun;
	}
	double r_ours = (double)n_ours / s_ours, r_insn = (double)n_insn / s_insn,
	       r_blk = (double)n_blk / s_blk;
	printf("efipt ptflow_decode:  %11llu insns %7.3f s %8.1f M insn/s  (%llu errors)\n",
	       (unsigned long long)n_ours, s_ours, r_ours / 1e6, (unsigned long long)e_ours);
	printf("libipt pt_insn_next:  %11llu insns %7.3f s %8.1f M insn/s  (%llu errors)\n",
	       (unsigned long long)n_insn, s_insn, r_insn / 1e6, (unsigned long long)e_insn);
	printf("libipt pt_blk_next:   %11llu insns %7.3f s %8.1f M insn/s  (%llu errors)\n",
	       (unsigned long long)n_blk, s_blk, r_blk / 1e6, (unsigned long long)e_blk);
	printf("ratio efipt/pt_insn_next: %.1fx   efipt/pt_blk_next: %.1fx   (target >= 10x pt_blk_next)\n",
	       r_ours / r_insn, r_ours / r_blk);
	/* consumers that see every instruction, side by side with counting */
	double r_sblk = (double)n_sblk / s_sblk, r_srun = (double)n_srun / s_srun;
	printf("efipt block sink:     %11llu insns %7.3f s %8.1f M insn/s  (%llu errors)\n",
	       (unsigned long long)n_sblk, s_sblk, r_sblk / 1e6, (unsigned long long)e_sblk);
	printf("efipt run callback:   %11llu insns %7.3f s %8.1f M insn/s  (%llu errors)\n",
	       (unsigned long long)n_srun, s_srun, r_srun / 1e6, (unsigned long long)e_srun);
	printf("ratio counting/block sink: %.2fx (target <= 1.5x)   block sink/pt_blk_next: %.1fx "
	       "(target >= 10x)   counting/run callback: %.1fx\n",
	       r_ours / r_sblk, r_sblk / r_blk, r_ours / r_srun);
	int bad = n_ours != res.insns || n_insn != res.insns || n_blk != res.insns ||
		  n_sblk != res.insns || n_srun != res.insns;
	if (bad)
		printf("MISMATCH: instruction counts differ from the ground truth (%llu)\n",
		       (unsigned long long)res.insns);
	pt_image_free(image);
	pt_iscache_free(isc);
	ptsec_free(&im);
	free(file);
	free(buf);
	free(syn);
	return bad;
}
