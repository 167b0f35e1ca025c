/*
 * Test-only: libipt's instruction flow decoder over a trace and raw code,
 * for comparing with `efipt insn --no-inst` (both print one address per
 * instruction, 16 hex digits).
 *
 *   ipt_insns [--time EAX,EBX,NOM,MTCFREQ] [--filter A-B] TRACE FILE:ADDRESS...
 *
 * --time: libipt's time too, "ADDRESS TSC" per instruction (TSC in hex,
 * "-" before the first), with CPUID.15H EAX/EBX, the nominal ratio and
 * MTCFreq configured as given (an independent reading of the timing
 * packets: tests/qemu/t_qemu_plugin.sh). --filter: the trace was taken with
 * ADDR0 as the IP filter range [A, B] (libipt needs it to bind a TIP.PGD
 * without IP).
 *
 * Exit status 0, or 1 after any decode error (the first is on stderr).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "tests/libipt_insn.h"

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return b;
}

static void print_ip(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn)
{
	(void)ctx;
	(void)d;
	printf("%016" PRIx64 "\n", insn->ip);
}

/* the address and libipt's TSC at it ("-" before the first) */
static void print_timed(void *ctx, struct pt_insn_decoder *d, const struct pt_insn *insn)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	(void)ctx;
	if (pt_insn_time(d, &tsc, &lost_mtc, &lost_cyc) < 0)
		printf("%016" PRIx64 " -\n", insn->ip);
	else
		printf("%016" PRIx64 " %" PRIx64 "\n", insn->ip, tsc);
}

int main(int argc, char **argv)
{
	unsigned eax = 0, ebx = 0, nom = 0, mtcf = 0;
	bool timed = argc > 2 && !strcmp(argv[1], "--time");
	if (timed) {
		if (sscanf(argv[2], "%u,%u,%u,%u", &eax, &ebx, &nom, &mtcf) != 4) {
			fprintf(stderr, "--time wants EAX,EBX,NOM,MTCFREQ\n");
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	unsigned long long fa = 0, fb = 0;
	bool filter = argc > 2 && !strcmp(argv[1], "--filter");
	if (filter) {
		if (sscanf(argv[2], "%lli-%lli", &fa, &fb) != 2) {
			fprintf(stderr, "--filter wants A-B\n");
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: ipt_insns TRACE FILE:ADDRESS...\n");
		return 2;
	}
	size_t size;
	uint8_t *buf = slurp(argv[1], &size);
	if (!buf) {
		perror(argv[1]);
		return 2;
	}
	struct pt_image *image = pt_image_alloc("code");
	for (int i = 2; i < argc; i++) {
		char *colon = strrchr(argv[i], ':');
		if (!colon) {
			fprintf(stderr, "%s: expected FILE:ADDRESS\n", argv[i]);
			return 2;
		}
		*colon = 0;
		uint64_t addr = strtoull(colon + 1, NULL, 0);
		int st = pt_image_add_file(image, argv[i], 0, UINT64_MAX, NULL, addr);
		if (st < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], pt_errstr(pt_errcode(st)));
			return 2;
		}
	}
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	cfg.cpuid_0x15_eax = eax;
	cfg.cpuid_0x15_ebx = ebx;
	cfg.nom_freq = (uint8_t)nom;
	cfg.mtc_freq = (uint8_t)mtcf;
	if (filter) {
		cfg.addr_filter.config.ctl.addr0_cfg = 1; /* filter */
		cfg.addr_filter.addr0_a = fa;
		cfg.addr_filter.addr0_b = fb;
	}
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return 2;
	pt_insn_set_image(d, image);
	struct libipt_insn_walk w = { timed ? print_timed : print_ip, NULL, false, 0, 0, 0, NULL };
	libipt_insn_walk(d, &w);
	if (w.errors)
		fprintf(stderr, "ipt_insns: %s at offset 0x%" PRIx64 "\n",
			pt_errstr(pt_errcode(w.first_error)), w.first_error_offset);
	pt_insn_free_decoder(d);
	pt_image_free(image);
	free(buf);
	return w.errors ? 1 : 0;
}
