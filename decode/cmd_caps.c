/* efipt caps --cpuid FILE: the Intel PT capability report, from a CPUID dump. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "decode/commands.h"
#include "decode/file_io.h"

static void caps_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt caps --cpuid FILE [--cpu N] [--json]\n\n"
		"Print the Intel PT capability report efipt.efi would print on that CPU.\n"
		"FILE is a raw CPUID dump in the format of 'cpuid -r -1' (Debian package\n"
		"cpuid) or the cpuid.txt of an efipt run directory.\n\n"
		"  --cpuid FILE  the CPUID dump to read\n"
		"  --cpu N       use the Nth 'CPU' block of a multi-CPU dump (default 0)\n"
		"  --json        print one JSON object instead of the text report\n\n"
		"Exit status: 0 if Intel PT is supported, 3 if it is not, 2 on bad input\n"
		"or a write error on standard output.\n");
}

int cmd_caps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpuid", required_argument, 0, 'c' },
		{ "cpu", required_argument, 0, 'n' },
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *file = NULL;
	unsigned long long cpu = 0;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			file = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, &cpu) || cpu > 4096) {
				fprintf(stderr, "efipt caps: --cpu needs a CPU block index, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			caps_usage(stdout);
			return 0;
		default:
			caps_usage(stderr);
			return 2;
		}
	}
	if (!file || optind != argc) {
		fprintf(stderr, "efipt caps: %s\n",
			file ? "unexpected argument" : "--cpuid FILE is required");
		caps_usage(stderr);
		return 2;
	}
	static struct cpuid_set set;
	if (read_cpuid_file("caps", file, (unsigned)cpu, &set))
		return 2;
	struct ptcaps caps;
	ptcaps_parse(&caps, &set);
	static char buf[16384];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	if (json) {
		ptcaps_json(&caps, &sb);
		sb_putc(&sb, '\n');
	} else {
		ptcaps_report(&caps, &sb);
	}
	fputs(buf, stdout);
	return caps.absent == PTCAPS_PRESENT ? 0 : 3;
}
