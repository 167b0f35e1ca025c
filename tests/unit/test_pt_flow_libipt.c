/*
 * Differential test: libipt's instruction decoder (pt_insn_next, libipt-dev
 * 2.0) and ours decode the same synthesized traces over real code; both must
 * report the same instructions and the same enable/disable/interrupt/overflow,
 * TSX and EXSTOP events, and both must match the synthesizer's ground truth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "check.h"
#include "core/pt_flow.h"
#include "core/pt_synth.h"
#include "host/input/pt_sections.h"
#include "tests/libipt_insn.h"

struct item {
	uint8_t kind;	/* 0 instruction, else 1 + enum ptflow_ev */
	uint64_t ip;
};

struct seq {
	struct item *v;
	size_t n, cap;
};

static void add(struct seq *s, uint8_t kind, uint64_t ip)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n].kind = kind;
	s->v[s->n].ip = ip;
	s->n++;
}

/* The events both decoders report the same way; others are not compared. */
static bool compared(int type)
{
	return type == PTFLOW_EV_ENABLED || type == PTFLOW_EV_ASYNC_DISABLED ||
	       type == PTFLOW_EV_DISABLED || type == PTFLOW_EV_INTERRUPT ||
	       type == PTFLOW_EV_OVERFLOW || type == PTFLOW_EV_TSX || type == PTFLOW_EV_EXSTOP;
}

static void t_insn(void *ctx, uint64_t ip) { add(ctx, 0, ip); }
static void t_event(void *ctx, const struct ptsynth_event *ev)
{
	if (compared(ev->type))
		add(ctx, (uint8_t)(1 + ev->type), ev->has_ip && ev->type != PTFLOW_EV_DISABLED ? ev->ip : 0);
}

static void o_run(void *ctx, const struct ptflow_run *r)
{
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		add(ctx, 0, ip);
		ip += r->lens[i];
	}
}

static unsigned our_errors;
static void o_event(void *ctx, const struct ptflow_event *ev)
{
	if (ev->type == PTFLOW_EV_ERROR)
		our_errors++;
	else if (compared(ev->type))
		add(ctx, (uint8_t)(1 + ev->type),
		    ev->has_ip && ev->type != PTFLOW_EV_DISABLED ? ev->ip : 0);
}

static int read_cb(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
		   void *context)
{
	(void)asid;
	int n = ptsec_read(context, ip, buffer, size);
	return n > 0 ? n : -pte_nomap;
}

/* libipt's instructions and events, as o_event() records efipt's. */
struct lib_out {
	struct seq *out;
	bool tsx_abort;		/* the last event was a TSX abort */
};

static void lib_insn(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn)
{
	(void)d;
	add(((struct lib_out *)ctx)->out, 0, insn->ip);
}

static void lib_event(void *ctx, const struct pt_event *ev)
{
	struct lib_out *o = ctx;
	bool after_abort = o->tsx_abort;
	o->tsx_abort = ev->type == ptev_tsx && ev->variant.tsx.aborted;
	switch (ev->type) {
	/* libipt 2.1 also reports the tracing state of each PSB+ (FUP: on,
	 * none: off) as these events, status updates, which change nothing */
	case ptev_enabled:
		if (!ev->status_update)
			add(o->out, 1 + PTFLOW_EV_ENABLED, ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		if (!ev->status_update)
			add(o->out, 1 + PTFLOW_EV_DISABLED, 0);
		break;
	case ptev_async_disabled:
		add(o->out, 1 + PTFLOW_EV_ASYNC_DISABLED, ev->variant.async_disabled.at);
		break;
	case ptev_async_branch:
		/* libipt adds one to a TSX abort's event: its FUP+TIP is the
		 * abort, no interrupt */
		if (!after_abort)
			add(o->out, 1 + PTFLOW_EV_INTERRUPT, ev->variant.async_branch.from);
		break;
	case ptev_tsx:
		/* not the state in each PSB+ */
		if (!ev->status_update && !ev->ip_suppressed)
			add(o->out, 1 + PTFLOW_EV_TSX, ev->variant.tsx.ip);
		break;
	case ptev_exstop:
		add(o->out, 1 + PTFLOW_EV_EXSTOP, ev->ip_suppressed ? 0 : ev->variant.exstop.ip);
		break;
	case ptev_overflow:
		add(o->out, 1 + PTFLOW_EV_OVERFLOW, 0);
		break;
	default:
		break;
	}
}

/* Decode with libipt's instruction flow decoder. Returns errors seen. */
static unsigned libipt_decode(struct pt_image *image, uint8_t *buf, size_t size, struct seq *out,
			      char *first, size_t firstlen)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return 1000;
	pt_insn_set_image(d, image);
	struct lib_out o = { out, false };
	struct libipt_insn_walk w = { lib_insn, &o, false, 0, 0, 0, lib_event };
	libipt_insn_walk(d, &w);
	if (w.errors)
		snprintf(first, firstlen, "libipt: %s at offset 0x%llx",
			 pt_errstr(pt_errcode(w.first_error)),
			 (unsigned long long)w.first_error_offset);
	pt_insn_free_decoder(d);
	return (unsigned)w.errors;
}

static long diff(const struct seq *a, const struct seq *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++)
		if (a->v[i].kind != b->v[i].kind || a->v[i].ip != b->v[i].ip)
			return (long)i;
	return a->n == b->n ? -1 : (long)n;
}

static struct ptflow_block cache[4096];

static void image_tests(const char *kind, const char *path, int nseeds, uint64_t *total)
{
	struct ptsec_image im;
	ptsec_init(&im);
	if ((!strcmp(kind, "elf") ? ptsec_load_elf(&im, path) : ptsec_load_pe(&im, path))) {
		printf("# skipped %s: %s\n", path, im.err);
		return;
	}
	struct pt_image *image = pt_image_alloc(path);
	pt_image_set_callback(image, read_cb, &im);
	static uint8_t buf[2 << 20];
	int good = 0;
	for (int seed = 1; seed <= nseeds; seed++) {
		struct ptsynth syn;
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image = ptsec_ptimg(&im);
		sc.start = ptsec_last_entry(&im);
		sc.seed = (uint64_t)seed * 101;
		sc.max_insns = 100000;
		sc.psb_period = 1024u << (seed % 3);
		sc.p_interrupt = seed % 2 ? 40 : 0;
		sc.p_ovf = seed % 3 == 1 ? 300 : 0;
		sc.p_disable = seed % 4 == 2 ? 500 : 0;
		sc.disretc = seed % 5 == 4;
		sc.bits = seed % 7 == 3 ? 32 : 64; /* 16-bit code above 64 KiB: decoders differ */
		/* opt-in packets libipt 2.0 knows: MODE.TSX, power events,
		 * MODE.Exec at re-enables (not CFE/EVD, not DisTNT) */
		sc.p_tsx = seed % 4 == 3 ? 400 : 0;
		sc.p_power = seed % 3 == 1 ? 300 : 0;
		sc.p_mode = seed % 5 == 1 ? 20000 : 0;
		struct seq truth = { 0 }, ours = { 0 }, theirs = { 0 };
		struct ptsynth_sink ss = { &truth, t_insn, t_event };
		struct ptsynth_result res;
		ptsynth_run(&syn, &sc, &ss, buf, sizeof(buf), &res);

		struct ptflow_config fc;
		memset(&fc, 0, sizeof(fc));
		fc.image = sc.image;
		fc.cache = cache;
		fc.cache_size = 4096;
		fc.disretc = sc.disretc;
		struct ptflow_sink fs = { &ours, o_run, o_event };
		struct ptflow_decoder dec;
		ptflow_init(&dec, &fc, &fs);
		our_errors = 0;
		ptflow_decode(&dec, buf, res.size, 0);

		char first[200] = "";
		unsigned lerr = libipt_decode(image, buf, res.size, &theirs, first, sizeof(first));
		long d1 = diff(&theirs, &ours), d2 = diff(&truth, &ours);
		char name[160];
		snprintf(name, sizeof(name), "libipt agrees: %s seed %d", path, seed);
		int ok = d1 < 0 && d2 < 0 && !lerr && !our_errors;
		if (!ok && getenv("FLOW_DUMP")) {
			char fn[300];
			snprintf(fn, sizeof(fn), "%s.%s.%d", getenv("FLOW_DUMP"), strrchr(path, '/') + 1, seed);
			FILE *df = fopen(fn, "wb");
			if (df) {
				fwrite(buf, 1, res.size, df);
				fclose(df);
			}
		}
		if (!ok) {
			long at = d1 >= 0 ? d1 : d2;
			const struct seq *o = d1 >= 0 ? &theirs : &truth;
			check_named(0, name,
				    "%s; libipt %u errors, ours %u; at item %ld of %zu/%zu/%zu: %s %d %llx vs ours %d %llx",
				    first, lerr, our_errors, at, truth.n, theirs.n, ours.n,
				    d1 >= 0 ? "libipt" : "truth",
				    (size_t)at < o->n ? o->v[at].kind : -1,
				    (unsigned long long)((size_t)at < o->n ? o->v[at].ip : 0),
				    (size_t)at < ours.n ? ours.v[at].kind : -1,
				    (unsigned long long)((size_t)at < ours.n ? ours.v[at].ip : 0));
		}
		if (!ok && getenv("FLOW_DEBUG")) {
			long at = d1 >= 0 ? d1 : d2;
			for (long i = at > 6 ? at - 6 : 0; i < at + 3; i++)
				printf("#  %ld: libipt %d %llx  ours %d %llx\n", i,
				       (size_t)i < theirs.n ? theirs.v[i].kind : -1,
				       (unsigned long long)((size_t)i < theirs.n ? theirs.v[i].ip : 0),
				       (size_t)i < ours.n ? ours.v[i].kind : -1,
				       (unsigned long long)((size_t)i < ours.n ? ours.v[i].ip : 0));
		}
		if (ok)
			check_named(1, name, " ");
		good += ok;
		*total += res.insns;
		free(truth.v);
		free(ours.v);
		free(theirs.v);
	}
	CHECKF(good == nseeds, path, "libipt and ours agree on %d of %d traces", good, nseeds);
	pt_image_free(image);
	ptsec_free(&im);
}

/*
 * Our errata table (core/cpu_model.c) follows libipt 2.2's pt_cpu_errata().
 * Every CPU the installed libipt knows must get the same errata, except that
 * libipt before 2.2 still applied skl014 to Sapphire Rapids and the hybrid
 * CPUs (libipt commit "skl014 fixed on recent processors"): with an older
 * libipt that one difference is allowed, and only where ours has the rest
 * of that CPU's errata.
 */
static void errata_tests(void)
{
	static const unsigned families[] = { 6, 18, 19 };
	int bad = 0, known = 0, older = 0;
	char why[200] = "";
	for (unsigned f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		for (unsigned model = 0; model < 256; model++) {
			struct pt_cpu cpu = { pcv_intel, (uint16_t)families[f], (uint8_t)model, 0 };
			struct pt_errata e;
			memset(&e, 0, sizeof(e));
			if (pt_cpu_errata(&e, &cpu) < 0)
				continue;
			known++;
			uint32_t want = (e.bdm70 ? PTFLOW_ERRATUM_BDM70 : 0) |
					(e.bdm64 ? PTFLOW_ERRATUM_BDM64 : 0) |
					(e.skd007 ? PTFLOW_ERRATUM_SKD007 : 0) |
					(e.skd022 ? PTFLOW_ERRATUM_SKD022 : 0) |
					(e.skd010 ? PTFLOW_ERRATUM_SKD010 : 0) |
					(e.skl014 ? PTFLOW_ERRATUM_SKL014 : 0) |
					(e.apl12 ? PTFLOW_ERRATUM_APL12 : 0) |
					(e.apl11 ? PTFLOW_ERRATUM_APL11 : 0) |
					(e.skl168 ? PTFLOW_ERRATUM_SKL168 : 0) |
					(e.skz84 ? PTFLOW_ERRATUM_SKZ84 : 0);
			uint32_t got = ptflow_errata_for_cpu(families[f], model, -1);
			if (LIBIPT_VERSION < 0x202 && got != want &&
			    got == (want & ~PTFLOW_ERRATUM_SKL014) &&
			    (got & (PTFLOW_ERRATUM_SKZ84 | PTFLOW_ERRATUM_APL11)) &&
			    !(got & PTFLOW_ERRATUM_SKD007)) {
				older++;
				continue;
			}
			if (got != want && !bad++)
				snprintf(why, sizeof(why), "%u/0x%x: ours 0x%x, libipt 0x%x",
					 families[f], model, got, want);
		}
	}
	CHECKF(!bad && known > 20, "errata table matches libipt pt_cpu_errata",
	       "%d of %d CPUs differ; %s", bad, known, why);
	printf("# libipt %d.%d.%d knows %d CPUs; %d differ only by its older skl014 selection\n",
	       LIBIPT_VERSION_MAJOR, LIBIPT_VERSION_MINOR, LIBIPT_VERSION_PATCH, known, older);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 12;
	uint64_t total = 0;
	errata_tests();
	image_tests("elf", "/usr/lib/x86_64-linux-gnu/libc.so.6", n, &total);
	image_tests("elf", "/usr/bin/bash", n, &total);
	image_tests("elf", "/usr/bin/python3", n / 2, &total);
	image_tests("pe", "build/efipt.efi", n / 2, &total);
	image_tests("pe", "/usr/lib/systemd/boot/efi/systemd-bootx64.efi:0x7f000000", n / 2, &total);
	image_tests("pe", "/usr/lib/grub/x86_64-efi/monolithic/grubx64.efi:0x10000000", n / 2, &total);
	printf("# %llu instructions compared\n", (unsigned long long)total);
	return check_exit();
}
