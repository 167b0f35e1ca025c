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
#include <unistd.h>

#include "core/pt_config.h"
#include "core/pt_synth.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/input/pt_sections.h"

static void synth_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt synth --out TRACE IMAGE... [OPTIONS]\n\n"
		"  --raw/--elf/--pe SPEC  code images, as for 'efipt insn'\n"
		"  --start ADDR     first instruction (default: entry of the last ELF/PE)\n"
		"  --seed N         PRNG seed (default 1)\n"
		"  --insns N        instruction budget (default 100000; 0: no budget, until\n"
		"                   the trace fills --size)\n"
		"  --size N         most trace bytes, 4K or more (e.g. 65536, 64K, 4M, 1G;\n"
		"                   default 64M)\n"
		"  --interrupts N   interrupt chance per instruction, per 65536\n"
		"  --ovf N          overflow chance per packet-producing branch, per 65536\n"
		"  --disable N      TIP.PGD chance per indirect branch, per 65536\n"
		"  --disretc        never compress RETs\n"
		"  --distnt         DisTNT: no TNT for Jcc and compressed RETs (decode with\n"
		"                   'efipt insn --distnt'; best with --disretc)\n"
		"  --tsx N          TSX transaction begin chance per instruction, per 65536\n"
		"                   (MODE.TSX+FUP; half of them abort: +TIP)\n"
		"  --power N        power event (hardware duty cycling: PWRE, EXSTOP, FUP,\n"
		"                   CBR, PWRX) chance per instruction, per 65536; MWAIT\n"
		"                   instructions then enter C-states (MWAIT packets)\n"
		"  --event-trace    Event Trace: CFE (and EVD for #PF) at interrupts, faults\n"
		"  --ptwrite        PTWEn: a PTW packet at each PTWRITE instruction\n"
		"  --fup-on-ptw     FUPonPTW: a FUP with the PTWRITE's address after it\n"
		"  --mode N         chance per 65536 that tracing re-enabled in a new\n"
		"                   context runs in the other code size (64 <-> 32 bit)\n"
		"  --bits 16|32|64  code size at the start (default 64)\n"
		"  --tsc            a TSC packet in each PSB+ (TSC = 3 * trace offset + 1000)\n"
		"  --psb-period N   trace bytes between PSB+, 64 or more (default 4096)\n"
		"  --cyc            --tsc and cycle-accurate mode: a CBR (ratio 32) in each\n"
		"                   PSB+, a CYC before each TNT, TIP and FUP counting the\n"
		"                   cycles to 3 * offset + 1000 (decode with nominal ratio 32)\n"
		"  --mtc            --tsc and MTC timing: a TMA after each TSC, MTCs of a\n"
		"                   crystal clock at TSC / 6 (decode with CPUID.15H EAX 2,\n"
		"                   EBX 12, MTCFreq 1)\n"
		"  --truth FILE     write the executed instruction addresses to FILE\n\n"
		"TRACE and FILE are written under a temporary name and renamed when\n"
		"complete: on any failure neither is left behind.\n\n"
		"Exit status: 0 written, 1 the start address holds no code, 2 on usage\n"
		"errors, unreadable images or a write error.\n");
}

static void w_insn(void *ctx, uint64_t ip)
{
	char line[24];
	snprintf(line, sizeof(line), "%016" PRIx64 "\n", ip);
	atomic_write(ctx, line, 17);
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
		{ "distnt", no_argument, 0, 'D' },
		{ "tsx", required_argument, 0, 'x' },
		{ "power", required_argument, 0, 'p' },
		{ "event-trace", no_argument, 0, 'E' },
		{ "ptwrite", no_argument, 0, 'w' },
		{ "fup-on-ptw", no_argument, 0, 'W' },
		{ "mode", required_argument, 0, 'm' },
		{ "bits", required_argument, 0, 'b' },
		{ "tsc", no_argument, 0, 'T' },
		{ "psb-period", required_argument, 0, 'Q' },
		{ "cyc", no_argument, 0, 'C' },
		{ "mtc", no_argument, 0, 'M' },
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
		if (c == 'z') {
			uint64_t z;
			if (ptcfg_parse_size(optarg, &z) || z < 4096 || z > (1ull << 40)) {
				fprintf(stderr, "efipt synth: --size takes a byte count from 4K to 1024G "
						"(K, M, G suffixes), not '%s'\n", optarg);
				goto out;
			}
			size = z;
			continue;
		}
		if (strchr("sSiIOdxpmbQ", c) && parse_u64(optarg, &v)) {
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
		case 'I': sc.p_interrupt = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'O': sc.p_ovf = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'd': sc.p_disable = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'R': sc.disretc = true; break;
		case 'D': sc.distnt = true; break;
		case 'x': sc.p_tsx = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'p': sc.p_power = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'E': sc.event_trace = true; break;
		case 'w': sc.ptw = true; break;
		case 'W': sc.fup_on_ptw = true; break;
		case 'm': sc.p_mode = (uint32_t)(v > 65536 ? 65536 : v); break;
		case 'b':
			if (v != 16 && v != 32 && v != 64) {
				fprintf(stderr, "efipt synth: --bits is 16, 32 or 64\n");
				goto out;
			}
			sc.bits = (uint8_t)v;
			break;
		case 'T': sc.tsc = true; break;
		case 'C': sc.tsc = sc.cyc = true; break;
		case 'M': sc.tsc = sc.mtc = true; break;
		case 'Q':
			if (v < 64 || v > (1u << 30)) {
				fprintf(stderr, "efipt synth: --psb-period takes 64 to 2^30 bytes, not "
						"'%s'\n", optarg);
				goto out;
			}
			sc.psb_period = (uint32_t)v;
			break;
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
	static struct atomic_file tf, of;
	if (truth && atomic_open(&tf, "synth", truth))
		goto out;
	uint8_t *buf = malloc(size);
	struct ptsynth *syn = malloc(sizeof(*syn));
	struct ptsynth_sink sink = { &tf, truth ? w_insn : NULL, NULL };
	struct ptsynth_result res;
	if (!buf || !syn) {
		fprintf(stderr, "efipt synth: out of memory for a %llu-byte trace\n", size);
	} else if (ptsynth_run(syn, &sc, &sink, buf, size, &res)) {
		fprintf(stderr, "efipt synth: the synthesizer failed\n");
	} else if (!atomic_open(&of, "synth", out)) {
		atomic_write(&of, buf, res.size);
		if (atomic_commit(&of, "synth") == 0) {
			if (truth && atomic_commit(&tf, "synth")) {
				unlink(out); /* the trace without its truth is no result */
			} else {
				fprintf(stderr, "efipt synth: %zu bytes, %" PRIu64 " instructions, %" PRIu64
						" packets, stopped: %s\n", res.size, res.insns, res.packets,
					res.stop == PTSYNTH_STOP_BUDGET ? "budget" :
					res.stop == PTSYNTH_STOP_SPACE ? "buffer full" : "no code");
				rc = res.stop == PTSYNTH_STOP_NOCODE ? 1 : 0;
			}
		}
	}
	atomic_abort(&tf);
	free(buf);
	free(syn);
out:
	ptsec_free(&im);
	return rc;
}
