/*
 * The QEMU plugin's timing packets (qemu-plugin/ptgen.c) without QEMU: a
 * made-up run of instructions with branches, its packets read back with
 * efipt's packet decoder and timed with core/pt_time.c given the emulated
 * clock's CPUID.15H and nominal ratio: the time at every CYC-eligible
 * packet must be the instruction count << shift.
 */
#include <string.h>

#include "check.h"
#include "ptgen_buf.h"
#include "core/pt_pkt.h"
#include "core/pt_time.h"
#include "core/x86_insn.h"
#include "qemu-plugin/ptgen.h"

static uint8_t trace[1 << 20];
static struct ptgen_buf out = { trace, 0, sizeof(trace) };

static struct ptgen g;
static uint64_t insns;

/* n instructions, each of the last a Jcc (taken every third); the TSC
 * expected at each TNT packet, its first branch's (33.3.6.2), is recorded
 * in want[] */
static uint64_t want[1 << 16];
static unsigned nwant;
static void generate(const struct ptgen_timing *t, uint64_t start, unsigned branches)
{
	out.len = 0;
	nwant = 0;
	ptgen_init(&g, 4096, true, ptgen_buf_write, &out);
	insns = 0; /* the plugin sets the clock up before QEMU runs */
	ptgen_set_timing(&g, t, &insns);
	insns = start + 1; /* the first traced instruction starts */
	ptgen_enable(&g, 0x1000, X86_MODE_64);
	uint64_t first = 0;
	for (unsigned i = 0; i < branches; i++) {
		insns += 1 + i % 37; /* straight code, then the branch's successor */
		if (!g.w.tnt_n)
			first = (insns - 1) << t->shift;
		uint64_t before = g.w.bytes;
		ptgen_jcc(&g, i % 3 == 0);
		if (g.w.bytes != before && nwant < sizeof(want) / sizeof(want[0]))
			want[nwant++] = first;
	}
	ptgen_flush(&g);
}

/* Walk the packets; at each TNT, the decoder's time against want[]. */
static int check_times(const struct ptgen_timing *t, unsigned *mtcs, unsigned *cycs)
{
	struct pttime_config tc = { .cpuid15_eax = PTGEN_CPUID15_EAX,
				    .cpuid15_ebx = PTGEN_CPUID15_EBX,
				    .mtc_freq = t->mtc_freq, .nom_freq = PTGEN_NOM_RATIO };
	struct pttime tm;
	pttime_init(&tm, &tc);
	unsigned k = 0;
	*mtcs = *cycs = 0;
	for (size_t off = 0; off < out.len;) {
		struct ptpkt p;
		int n = ptpkt_decode(trace + off, out.len - off, 0, &p);
		if (n <= 0)
			return -1;
		off += (size_t)n;
		pttime_packet(&tm, &p);
		*mtcs += p.type == ptpkt_mtc;
		*cycs += p.type == ptpkt_cyc;
		if (p.type != ptpkt_tnt8 || k >= nwant)
			continue;
		uint64_t tsc;
		if (!pttime_get(&tm, &tsc, NULL, NULL))
			return -2;
		/* exact with CYC; with MTC alone, the last crystal clock edge */
		uint64_t w = want[k++];
		uint64_t period = (uint64_t)PTGEN_CPUID15_EBX << t->mtc_freq;
		if (t->cyc ? tsc != w : tsc > w || w - tsc >= period)
			return (int)k;
	}
	return k == nwant && k > 100 ? 0 : -3;
}

int main(void)
{
	unsigned mtcs, cycs;
	struct ptgen_timing t = { .tsc = true, .mtc = true, .cyc = true, .mtc_freq = 3, .shift = 3 };
	generate(&t, 0, 3000);
	CHECK(!check_times(&t, &mtcs, &cycs) && mtcs > 100 && cycs > 100,
	      "TSC+MTC+CYC, shift 3: the time at every TNT is its first branch's instruction count << 3 (33.3.6.2)");
	t.cyc = false;
	t.mtc_freq = 0;
	t.shift = 0;
	generate(&t, 5, 3000);
	CHECK(!check_times(&t, &mtcs, &cycs) && mtcs > 100 && !cycs,
	      "TSC+MTC, MTCFreq 0, shift 0: within one crystal clock period");
	/* tracing deep into a run: no MTC for the edges before TraceEn */
	t.cyc = true;
	t.mtc_freq = 3;
	t.shift = 2;
	generate(&t, 100000000, 1200);
	CHECK(!check_times(&t, &mtcs, &cycs) && out.len < 65536,
	      "TraceEn after 1e8 instructions: the first PSB+ starts the clock, no MTC backlog");
	struct ptpkt p;
	CHECK(ptpkt_decode(trace, out.len, 0, &p) > 0 && p.type == ptpkt_psb &&
		      ptpkt_decode(trace + 16, out.len - 16, 0, &p) > 0 && p.type == ptpkt_tsc &&
		      p.u.tsc.tsc == 100000000ull << 2,
	      "PSB+ starts with the TSC of TraceEn");
	/* no timing asked for: no timing packet */
	struct ptgen_timing none = { .shift = 3 };
	generate(&none, 0, 1000);
	check_times(&none, &mtcs, &cycs);
	CHECK(!mtcs && !cycs && trace[16] != 0x19, "no timing options: no timing packets");
	return check_exit();
}
