/*
 * efipt synth: write a synthetic Intel PT trace of code images (the trace
 * the CPU would write while executing them with random branch outcomes) and
 * optionally the ground truth, one executed instruction address per line.
 * For tests, benchmarks and demos without PT hardware.
 */
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_synth.h"
#include "decode/commands.h"
#include "decode/file_io.h"
#include "decode/pt_sections.h"

static void synth_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt synth --out TRACE IMAGE... [OPTIONS]\n\n"
		"  --raw/--elf/--pe SPEC  code images, as for 'efipt insn'\n"
		"  --start ADDR     first instruction (default: entry of the last ELF/PE)\n"
		"  --seed N         PRNG seed (default 1)\n"
		"  --insns N        instruction budget (default 100000)\n"
		"  --size N         most trace bytes (default 64 MiB)\n"
		"  --interrupts N   interrupt chance per instruction, per 65536\n"
		"  --ovf N          overflow chance per packet-producing branch, per 65536\n"
		"  --disable N      TIP.PGD chance per indirect branch, per 65536\n"
		"  --disretc        never compress RETs\n"
		"  --truth FILE     write the executed instruction addresses to FILE\n");
}

static void w_insn(void *ctx, uint64_t ip)
{
	fprintf(ctx, "%016" PRIx64 "\n", ip);
}

int cmd_synth(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, 0, 'o' },
		{ "raw", required_argument, 0, 'r' },
		{ "elf", required_argument, 0, 'e' },
		{ "pe", required_argument, 0, 'P' },
		{ "start", required_argument, 0, 's' },
		{ "seed", required_argument, 0, 'S' },
		{ "insns", required_argument, 0, 'i' },
		{ "size", required_argument, 0, 'z' },
		{ "interrupts", required_argument, 0, 'I' },
		{ "ovf", required_argument, 0, 'O' },
		{ "disable", required_argument, 0, 'd' },
		{ "disretc", no_argument, 0, 'R' },
		{ "truth", required_argument, 0, 't' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct ptsec_image im;
	struct ptsynth_config sc;
	const char *out = NULL, *truth = NULL;
	unsigned long long v, size = 64ull << 20, start = 0;
	int c, rc = 2;

	ptsec_init(&im);
	memset(&sc, 0, sizeof(sc));
	sc.seed = 1;
	sc.max_insns = 100000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lr = 0;
		if (strchr("sSizIOd", c) && parse_u64(optarg, &v)) {
			fprintf(stderr, "efipt synth: bad number '%s'\n", optarg);
			goto out;
		}
		switch (c) {
		case 'o': out = optarg; break;
		case 't': truth = optarg; break;
		case 'r': lr = ptsec_load_raw(&im, optarg); break;
		case 'e': lr = ptsec_load_elf(&im, optarg); break;
		case 'P': lr = ptsec_load_pe(&im, optarg); break;
		case 's': start = v; break;
		case 'S': sc.seed = v; break;
		case 'i': sc.max_insns = v; break;
		case 'z': size = v < 4096 ? 4096 : v; break;
		case 'I': sc.p_interrupt = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'O': sc.p_ovf = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'd': sc.p_disable = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'R': sc.disretc = true; break;
		case 'h': synth_usage(stdout); rc = 0; goto out;
		default: synth_usage(stderr); goto out;
		}
		if (lr) {
			fprintf(stderr, "efipt synth: %s\n", im.err);
			goto out;
		}
	}
	if (!out || optind != argc || !im.n) {
		synth_usage(stderr);
		goto out;
	}
	sc.image = ptsec_ptimg(&im);
	sc.start = start ? start : ptsec_last_entry(&im);
	if (!sc.start)
		sc.start = im.sec[0].vaddr;
	FILE *tf = NULL;
	if (truth && !(tf = fopen(truth, "w"))) {
		perror(truth);
		goto out;
	}
	uint8_t *buf = malloc(size);
	struct ptsynth *syn = malloc(sizeof(*syn));
	struct ptsynth_sink sink = { tf, tf ? w_insn : NULL, NULL };
	struct ptsynth_result res;
	if (!buf || !syn || ptsynth_run(syn, &sc, &sink, buf, size, &res)) {
		fprintf(stderr, "efipt synth: failed\n");
	} else {
		FILE *f = fopen(out, "wb");
		if (!f || fwrite(buf, 1, res.size, f) != res.size || fclose(f)) {
			perror(out);
		} else {
			fprintf(stderr, "efipt synth: %zu bytes, %" PRIu64 " instructions, %" PRIu64
					" packets, stopped: %s\n", res.size, res.insns, res.packets,
				res.stop == PTSYNTH_STOP_BUDGET ? "budget" :
				res.stop == PTSYNTH_STOP_SPACE ? "buffer full" : "no code");
			rc = res.stop == PTSYNTH_STOP_NOCODE ? 1 : 0;
		}
	}
	if (tf)
		fclose(tf);
	free(buf);
	free(syn);
out:
	ptsec_free(&im);
	return rc;
}
