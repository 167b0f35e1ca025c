/* efipt — host CLI: dispatch to one subcommand per host/cmd/<name>.c. */
#include <stdio.h>
#include <string.h>

#include "core/version.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/util/stats.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "caps", cmd_caps, "Intel PT capability report from a CPUID dump" },
	{ "info", cmd_info, "validate and show an efipt run directory" },
	{ "decode", cmd_decode, "decode a run directory and print its summary" },
	{ "packets", cmd_packets, "list or count the Intel PT packets of a raw trace" },
	{ "plan", cmd_plan, "the MSR writes and ToPA tables efipt.efi would use on a CPU" },
	{ "insn", cmd_insn, "the instructions executed according to a trace and code images" },
	{ "coverage", cmd_coverage, "executed code per image: drcov for disassemblers, text, json" },
	{ "synth", cmd_synth, "write a synthetic trace (and ground truth) of code images" },
	{ "qemu", cmd_qemu, "run QEMU with the PT plugin: a run directory of emulated trace" },
	{ "symbols", cmd_symbols, "which symbol file names each traced image, and why" },
	{ "top", cmd_top, "functions by instructions executed (needs --symbols)" },
	{ "flame", cmd_flame, "folded call stacks for flame graphs" },
	{ "calls", cmd_calls, "the call trace, indented by stack depth" },
	{ "timeline", cmd_timeline, "a timeline of the call stacks (Perfetto protobuf, JSON)" },
	{ "log", cmd_log, "the firmware's DEBUG output, each line at the instruction that wrote it" },
	{ "recover", cmd_recover, "the flight recorder's trace from Linux (--linux): a run directory" },
	{ "diff", cmd_diff, "what changed between two runs, per function or image; CI gates" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: efipt COMMAND [OPTIONS] ...\n\n"
		   "Offline tools for Intel Processor Trace captured by efipt.efi.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'efipt COMMAND --help' for a command's options.\n"
		   "efipt %s (%s)\n", efipt_version, efipt_gitrev);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish_stdout(NULL, 0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("efipt %s (%s)\n", efipt_version, efipt_gitrev);
		return finish_stdout(NULL, 0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			/* getopt names argv[0] in its messages: "efipt insn: ..." */
			char name[32];
			snprintf(name, sizeof(name), "efipt %s", commands[i].name);
			argv[1] = name;
			int rc = finish_stdout(commands[i].name, commands[i].run(argc - 1, argv + 1));
			stats_report();
			return rc;
		}
	fprintf(stderr, "efipt: unknown command '%s' (see 'efipt --help')\n", argv[1]);
	return 2;
}
