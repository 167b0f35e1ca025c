/*
 * Flow decoder throughput on real UEFI applications (PE32+ from Debian
 * packages), side by side with libipt's pt_blk_next, and the shape of each
 * trace that sets the ratio. For each image: a trace synthesized from its
 * entry point (no function list: indirect branches go to the CALL targets
 * seen so far, as in the firmware's synthetic source), decoded by efipt
 * counting only (as 'efipt insn --stat'), by efipt with a run callback that
 * only adds ninsn (what every consumer of instructions pays), and by
 * pt_blk_next over the same relocated bytes (through libipt's section
 * cache, as 'ptxed --block-decoder' would). CPU time, best of three.
 *
 * Shape columns: insn/step = instructions per step of efipt's walk (a
 * chain of blocks); insn/blk = per libipt block; TNT/ki and TIP/ki = TNT
 * bits and TIP packets per 1000 instructions; B/insn = trace bytes per
 * instruction; entries = cache entries the walk filled (its working set);
 * decoded = blocks decoded from the image (cache misses).
 *
 * usage: bench_flow_uefi [-n MILLION-INSNS] PE[:BASE]|ELF...
 *        BENCH_PROFILE=N: only efipt counting, N times (for perf record)
 *        (a PE that is missing is skipped: its package is not installed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "core/pt_flow.h"
#include "core/pt_pkt.h"
#include "core/pt_synth.h"
#include "host/input/pt_sections.h"
#include "tests/bench/libipt_blk.h"

#define CACHE_SIZE (1u << 19)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct ours {
	uint64_t insns, steps, decoded, errors;
	uint32_t used;
	double secs;
};

static void add_run(void *ctx, const struct ptflow_run *run)
{
	*(uint64_t *)ctx += run->ninsn;
}

/* efipt's flow decoder; with_run: a run callback that adds ninsn. */
static void run_ours(const struct ptimg *img, const uint8_t *buf, size_t size, bool with_run,
		     struct ours *o)
{
	static struct ptflow_block cache[CACHE_SIZE];
	static struct ptflow_decoder d;
	struct ptflow_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.image = *img;
	cfg.cache = cache;
	cfg.cache_size = CACHE_SIZE;
	uint64_t counted = 0;
	struct ptflow_sink sink = { &counted, with_run ? add_run : NULL, NULL };
	ptflow_init(&d, &cfg, &sink);
	double t = now();
	ptflow_decode(&d, buf, size, 0);
	o->secs = now() - t;
	o->insns = with_run ? counted : d.stat.insns;
	o->steps = d.stat.blocks;
	o->decoded = d.stat.decoded;
	o->errors = d.stat.errors;
	o->used = d.used;
}

/* libipt's block decoder; *blocks: blocks with instructions. */
static uint64_t run_blk(struct pt_image *image, uint8_t *buf, size_t size, double *secs,
			uint64_t *errors, uint64_t *blocks)
{
	double t = now();
	uint64_t n = libipt_blk_count(image, buf, size, errors, blocks);
	*secs = now() - t;
	return n;
}

/* TNT bits and TIP packets (indirect branches, far transfers) in the trace. */
static void count_packets(const uint8_t *buf, size_t size, uint64_t *tnt, uint64_t *tip)
{
	struct ptpkt_decoder pd;
	struct ptpkt p;
	*tnt = *tip = 0;
	ptpkt_init(&pd, buf, size, 0);
	while (ptpkt_sync_forward(&pd) == 0)
		while (ptpkt_next(&pd, &p) > 0) {
			if (p.type == ptpkt_tnt8 || p.type == ptpkt_tnt64)
				*tnt += p.u.tnt.nbits;
			else if (p.type == ptpkt_tip)
				++*tip;
		}
}

/* libipt image: the relocated sections, written to one file for its section cache. */
static struct pt_image *libipt_image(const struct ptsec_image *im, struct pt_image_section_cache *isc,
				     const char *tmp)
{
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return NULL;
	struct pt_image *image = pt_image_alloc("bench");
	uint64_t off = 0;
	for (size_t i = 0; i < im->n; i++) {
		fwrite(im->sec[i].data, 1, im->sec[i].size, f);
		off += im->sec[i].size;
	}
	fclose(f);
	off = 0;
	for (size_t i = 0; i < im->n; i++) {
		int isid = pt_iscache_add_file(isc, tmp, off, im->sec[i].size, im->sec[i].vaddr);
		if (isid < 0 || pt_image_add_cached(image, isc, isid, NULL) < 0)
			fprintf(stderr, "bench_flow_uefi: libipt image: section %zu failed\n", i);
		off += im->sec[i].size;
	}
	return image;
}

static int bench_one(const char *spec, uint64_t want, uint8_t *buf, size_t cap)
{
	struct ptsec_image im;
	ptsec_init(&im);
	if (ptsec_load_pe(&im, spec)) {
		char why[sizeof(im.err)];
		memcpy(why, im.err, sizeof(why));
		ptsec_free(&im);
		ptsec_init(&im);
		if (ptsec_load_elf(&im, spec)) { /* an ELF for comparison, as libc */
			printf("%-22s skipped: %s\n", spec, why);
			ptsec_free(&im);
			return 0;
		}
	}
	char name[23];
	snprintf(name, sizeof(name), "%s", strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec);
	if (strchr(name, ':'))
		*strchr(name, ':') = 0;
	static struct ptsynth syn;
	struct ptsynth_config sc;
	memset(&sc, 0, sizeof(sc));
	sc.image = ptsec_ptimg(&im);
	sc.start = ptsec_last_entry(&im);
	sc.seed = 42;
	sc.max_insns = want;
	sc.psb_period = 4096;
	sc.p_interrupt = 4;
	sc.biased = true;
	struct ptsynth_result res;
	ptsynth_run(&syn, &sc, NULL, buf, cap, &res);

	char tmp[] = "/tmp/bench_flow_uefi.XXXXXX";
	int fd = mkstemp(tmp);
	if (fd >= 0)
		close(fd);
	struct pt_image_section_cache *isc = pt_iscache_alloc("bench");
	struct pt_image *image = fd >= 0 ? libipt_image(&im, isc, tmp) : NULL;
	if (!image) {
		printf("%-28s skipped: cannot write %s\n", name, tmp);
		pt_iscache_free(isc);
		ptsec_free(&im);
		return 0;
	}

	struct ptimg img = ptsec_ptimg(&im);
	struct ours cnt = { 0 }, run = { 0 }, o;
	if (getenv("BENCH_PROFILE")) { /* perf record: efipt counting only, N times */
		for (int rep = atoi(getenv("BENCH_PROFILE")); rep > 0; rep--)
			run_ours(&img, buf, res.size, false, &o);
		printf("%-22s %.1f M insn/s (last run)\n", name, (double)o.insns / o.secs / 1e6);
		unlink(tmp);
		pt_image_free(image);
		pt_iscache_free(isc);
		ptsec_free(&im);
		return 0;
	}
	double s_blk = 1e30;
	uint64_t n_blk = 0, e_blk = 0, blocks = 0;
	cnt.secs = run.secs = 1e30;
	for (int rep = 0; rep < 3; rep++) { /* interleaved: the machine is shared */
		double t;
		run_ours(&img, buf, res.size, false, &o);
		if (o.secs < cnt.secs)
			cnt = o;
		run_ours(&img, buf, res.size, true, &o);
		if (o.secs < run.secs)
			run = o;
		n_blk = run_blk(image, buf, res.size, &t, &e_blk, &blocks);
		s_blk = t < s_blk ? t : s_blk;
	}
	uint64_t tnt, tip;
	count_packets(buf, res.size, &tnt, &tip);
	double r_cnt = (double)cnt.insns / cnt.secs, r_run = (double)run.insns / run.secs,
	       r_blk = (double)n_blk / s_blk, k = (double)res.insns / 1000.0;
	printf("%-22s %5.1fM %7.0f %6.0f %6.0f %5.1fx %5.1fx %7.1f %7.1f %6.1f %6.2f %5.3f %7u %8llu\n",
	       name, (double)res.insns / 1e6, r_cnt / 1e6, r_run / 1e6, r_blk / 1e6,
	       r_cnt / r_blk, r_run / r_blk, (double)cnt.insns / (double)cnt.steps,
	       (double)n_blk / (double)blocks, (double)tnt / k, (double)tip / k,
	       (double)res.size / (double)res.insns, cnt.used, (unsigned long long)cnt.decoded);
	int bad = cnt.insns != res.insns || run.insns != res.insns || n_blk != res.insns ||
		  cnt.errors || e_blk;
	if (bad)
		printf("  MISMATCH: ground truth %llu, efipt %llu/%llu (%llu errors), "
		       "pt_blk_next %llu (%llu errors)\n",
		       (unsigned long long)res.insns, (unsigned long long)cnt.insns,
		       (unsigned long long)run.insns, (unsigned long long)cnt.errors,
		       (unsigned long long)n_blk, (unsigned long long)e_blk);
	unlink(tmp);
	pt_image_free(image);
	pt_iscache_free(isc);
	ptsec_free(&im);
	return bad;
}

int main(int argc, char **argv)
{
	uint64_t want = 30;
	int i = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		want = strtoull(argv[2], NULL, 0);
		i = 3;
	}
	if (i >= argc || !want) {
		fprintf(stderr, "usage: bench_flow_uefi [-n MILLION-INSNS] PE[:BASE]...\n");
		return 2;
	}
	want *= 1000000ull;
	size_t cap = (size_t)(want / 2) + (64u << 20);
	uint8_t *buf = malloc(cap);
	if (!buf)
		return 1;
	printf("%-22s %6s %7s %6s %6s %6s %6s %7s %7s %6s %6s %5s %7s %8s\n", "image", "insns",
	       "count", "run", "blk", "cnt/b", "run/b", "i/step", "i/blk", "TNT/ki", "TIP/ki",
	       "B/ins", "entries", "decoded");
	printf("%-22s %6s %7s %6s %6s %6s %6s\n", "", "", "M/s", "M/s", "M/s", "", "");
	int bad = 0;
	for (; i < argc; i++)
		bad |= bench_one(argv[i], want, buf, cap);
	printf("count: efipt counting (insn --stat); run: efipt with a run callback; blk: libipt "
	       "pt_blk_next; target: count >= 10x blk\n");
	free(buf);
	return bad;
}
