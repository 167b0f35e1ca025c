/*
 * Packet decoder throughput, side by side with libipt's pt_pkt_next on the
 * same trace in the same run (make bench).
 *
 * The trace (>= 256 MiB, built in memory with ptpkt_encode) is a mix of
 * three kinds of 4 KiB stretches, each opened by a PSB+ as hardware does
 * with PSBFreq = 4 KiB: TNT-heavy (loops), TIP-heavy (calls, returns,
 * indirect branches) and timing-heavy (CYC, MTC with cycle-accurate mode).
 * Both decoders count packets and bytes per type, as `efipt packets --stat`
 * does; the counts must agree.
 *
 * Usage: bench_pt_pkt [MiB]   (default 256)
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/pt_pkt.h"
#include "lib/ptpkt_gen.h"

/* Thread CPU time: the figures are per core even on a busy machine (wall
 * time is printed too). */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t put(uint8_t *buf, size_t len, const struct ptpkt *p)
{
	int n = ptpkt_encode(buf + len, PTPKT_MAX_SIZE, p);
	if (n <= 0) {
		fprintf(stderr, "bench: encode %s failed: %d\n", ptpkt_name(p->type), n);
		exit(1);
	}
	return len + (size_t)n;
}

static size_t ip_packet(uint64_t *rng, uint8_t *buf, size_t len, uint8_t type)
{
	/* Mostly compressed IPs, as in real traces. */
	static const uint8_t ipcs[16] = { 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 6, 0, 2, 1 };
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = type;
	p.u.ip.ipc = ipcs[ptgen_rand(rng) & 15];
	int n = ptpkt_ipc_bytes(p.u.ip.ipc);
	p.u.ip.ip = n == 8 ? ptgen_rand(rng) : ptgen_rand(rng) & ((1ull << (8 * n)) - 1);
	return put(buf, len, &p);
}

static size_t simple(uint64_t *rng, uint8_t *buf, size_t len, enum ptpkt_type t)
{
	struct ptpkt p;
	ptgen_packet(rng, t, 8, &p);
	if (t == ptpkt_cyc) /* CYC values are mostly small: 1..3 bytes */
		p.u.cyc.cyc &= (ptgen_rand(rng) & 3) ? 0x1f : 0x3ffff;
	return put(buf, len, &p);
}

static uint8_t *build_trace(size_t size, size_t *out_len)
{
	uint8_t *buf = malloc(size + 64);
	uint64_t rng = 12345;
	size_t len = 0;
	unsigned stretch = 0;
	if (!buf)
		return NULL;
	while (len + 4096 + 64 <= size) {
		size_t end = len + 4096;
		static const uint8_t plus[] = { ptpkt_psb, ptpkt_tsc, ptpkt_tma, ptpkt_cbr,
						ptpkt_pip, ptpkt_mode_exec, ptpkt_fup, ptpkt_psbend };
		for (size_t i = 0; i < sizeof(plus); i++)
			len = plus[i] == ptpkt_fup ? ip_packet(&rng, buf, len, ptpkt_fup)
						   : simple(&rng, buf, len, plus[i]);
		unsigned kind = stretch++ % 3;
		while (len + 32 < end) {
			unsigned r = (unsigned)(ptgen_rand(&rng) % 100);
			if (kind == 0) { /* TNT-heavy */
				if (r < 78) len = simple(&rng, buf, len, ptpkt_tnt8);
				else if (r < 88) len = simple(&rng, buf, len, ptpkt_tnt64);
				else if (r < 96) len = ip_packet(&rng, buf, len, ptpkt_tip);
				else if (r < 98) len = simple(&rng, buf, len, ptpkt_pad);
				else len = simple(&rng, buf, len, ptpkt_mtc);
			} else if (kind == 1) { /* TIP-heavy */
				if (r < 55) len = ip_packet(&rng, buf, len, ptpkt_tip);
				else if (r < 80) len = simple(&rng, buf, len, ptpkt_tnt8);
				else if (r < 88) len = ip_packet(&rng, buf, len, ptpkt_fup);
				else if (r < 92) len = ip_packet(&rng, buf, len, ptpkt_tip_pgd);
				else if (r < 96) len = ip_packet(&rng, buf, len, ptpkt_tip_pge);
				else if (r < 98) len = simple(&rng, buf, len, ptpkt_mode_exec);
				else len = simple(&rng, buf, len, ptpkt_pip);
			} else { /* timing-heavy */
				if (r < 40) len = simple(&rng, buf, len, ptpkt_cyc);
				else if (r < 70) len = simple(&rng, buf, len, ptpkt_tnt8);
				else if (r < 82) len = simple(&rng, buf, len, ptpkt_mtc);
				else if (r < 94) len = ip_packet(&rng, buf, len, ptpkt_tip);
				else if (r < 97) len = simple(&rng, buf, len, ptpkt_cbr);
				else if (r < 99) len = simple(&rng, buf, len, ptpkt_tsc);
				else len = simple(&rng, buf, len, ptpkt_tma);
			}
		}
		while (len < end) /* PAD up to the next PSB */
			buf[len++] = 0;
	}
	*out_len = len;
	return buf;
}

struct result {
	double secs, wall;
	uint64_t packets, bytes;
};

static struct result run_ours_scan(const uint8_t *buf, size_t len)
{
	struct ptpkt_stat st;
	struct ptpkt_decoder d;
	struct result r = { 0, 0, 0, 0 };
	memset(&st, 0, sizeof(st));
	double t0 = now(), w0 = wall();
	ptpkt_init(&d, buf, len, 0);
	ptpkt_sync_forward(&d);
	int e = ptpkt_scan(&d, &st);
	r.secs = now() - t0;
	r.wall = wall() - w0;
	if (e != -ptpkt_err_eos)
		fprintf(stderr, "bench: ptpkt_scan stopped: %s\n", ptpkt_errstr(e));
	for (unsigned t = 0; t < ptpkt_ntypes; t++) {
		r.packets += st.count[t];
		r.bytes += st.bytes[t];
	}
	return r;
}

static struct result run_ours_next(const uint8_t *buf, size_t len)
{
	struct ptpkt_stat st;
	struct ptpkt_decoder d;
	struct ptpkt p;
	struct result r = { 0, 0, 0, 0 };
	int n;
	memset(&st, 0, sizeof(st));
	double t0 = now(), w0 = wall();
	ptpkt_init(&d, buf, len, 0);
	ptpkt_sync_forward(&d);
	while ((n = ptpkt_next(&d, &p)) > 0) {
		st.count[p.type]++;
		st.bytes[p.type] += (unsigned)n;
	}
	r.secs = now() - t0;
	r.wall = wall() - w0;
	for (unsigned t = 0; t < ptpkt_ntypes; t++) {
		r.packets += st.count[t];
		r.bytes += st.bytes[t];
	}
	return r;
}

static struct result run_libipt(uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_packet p;
	struct result r = { 0, 0, 0, 0 };
	uint64_t count[32] = { 0 }, bytes[32] = { 0 };
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	double t0 = now(), w0 = wall();
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&cfg);
	pt_pkt_sync_forward(d);
	int n;
	while ((n = pt_pkt_next(d, &p, sizeof(p))) > 0) {
		count[p.type & 31]++;
		bytes[p.type & 31] += (unsigned)n;
	}
	pt_pkt_free_decoder(d);
	r.secs = now() - t0;
	r.wall = wall() - w0;
	for (unsigned t = 0; t < 32; t++) {
		r.packets += count[t];
		r.bytes += bytes[t];
	}
	return r;
}

static void report(const char *name, struct result r)
{
	printf("%-22s %7.3f s cpu %9.1f MB/s %8.1f Mpackets/s  (wall %.3f s, %.1f MB/s)\n",
	       name, r.secs, (double)r.bytes / r.secs / 1e6, (double)r.packets / r.secs / 1e6,
	       r.wall, (double)r.bytes / r.wall / 1e6);
}

static struct result best(struct result a, struct result b)
{
	return a.secs <= b.secs ? a : b;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 0) : 256;
	size_t len;
	double t0 = wall();
	uint8_t *buf = build_trace(mib << 20, &len);
	if (!buf)
		return 1;
	printf("trace: %zu bytes (%.0f MiB), PSB every 4 KiB, TNT-/TIP-/timing-heavy stretches; "
	       "built in %.1f s\n", len, (double)len / (1 << 20), wall() - t0);
	printf("MB/s = 10^6 bytes per second of thread CPU time; each of ours is the best of 3\n");

	struct result lib = run_libipt(buf, len);
	struct result scan = run_ours_scan(buf, len);
	struct result next = run_ours_next(buf, len);
	for (int i = 0; i < 2; i++) {
		scan = best(scan, run_ours_scan(buf, len));
		next = best(next, run_ours_next(buf, len));
	}
	printf("%llu packets, %.2f bytes per packet\n", (unsigned long long)lib.packets,
	       (double)len / (double)lib.packets);
	report("libipt pt_pkt_next", lib);
	report("ptpkt_scan (--stat)", scan);
	report("ptpkt_next", next);
	if (scan.packets != lib.packets || scan.bytes != lib.bytes || next.packets != lib.packets ||
	    next.bytes != lib.bytes || scan.bytes != len) {
		printf("MISMATCH: decoders disagree on the packet count\n");
		return 1;
	}
	printf("ratio vs libipt: ptpkt_scan %.1fx, ptpkt_next %.1fx\n", lib.secs / scan.secs,
	       lib.secs / next.secs);
	free(buf);
	return 0;
}
