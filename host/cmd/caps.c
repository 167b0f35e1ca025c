/* efipt caps --cpuid FILE: the Intel PT capability report, from a CPUID dump. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu_model.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_flow.h"
#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/util/opts.h"

/* The row of an Intel CPU with PT, or NULL. */
static const struct cpumodel *intel_model(const struct ptcaps *caps)
{
	if (caps->absent != PTCAPS_PRESENT || strcmp(caps->vendor, "GenuineIntel"))
		return 0;
	return cpumodel_find(caps->family, caps->model);
}

static const char *quirk_text(uint32_t bit)
{
	switch (bit) {
	case CPUMODEL_QUIRK_BDM106: return "BranchEn must stay set (BDM106)";
	case CPUMODEL_QUIRK_SINGLE_4K: return "single-range output above 4 KiB goes to ToPA "
					      "(TGL052/ADL037/RPL017)";
	case CPUMODEL_QUIRK_CORE_SCOPED: return "RTIT MSRs shared by the core";
	case CPUMODEL_QUIRK_LBR_EXCLUSIVE: return "no LBRs while tracing (33.3.1.2)";
	}
	return "?";
}

/* The decode errata ("Errata       bdm70 skd022 apl11 (Raptor Lake-S: ...)") and the
 * configuration quirks, one line each; nothing for a CPU without Intel PT. */
static void errata_report(const struct ptcaps *caps, struct strbuf *out)
{
	if (caps->absent != PTCAPS_PRESENT || strcmp(caps->vendor, "GenuineIntel"))
		return;
	const struct cpumodel *m = intel_model(caps);
	if (!m) {
		sb_printf(out, "Errata       none known: family 0x%x model 0x%x is not in efipt's "
			       "CPU table\n", caps->family, caps->model);
		return;
	}
	sb_puts(out, "Errata      ");
	for (uint32_t b = 1; b; b <<= 1)
		if (m->errata & b)
			sb_printf(out, " %s", ptflow_erratum_name(b));
	if (m->errata)
		sb_printf(out, " (%s: the decoder works around these)\n", m->name);
	else
		sb_printf(out, " none the decoder works around (%s)\n", m->name);
	for (uint32_t b = 1; b; b <<= 1)
		if (m->quirks & b)
			sb_printf(out, "Quirk        %s\n", quirk_text(b));
}

/* The decode errata as a JSON array of names ([] without Intel PT). */
static void errata_json(const struct ptcaps *caps, struct strbuf *out)
{
	const struct cpumodel *m = intel_model(caps);
	const char *sep = "";
	sb_putc(out, '[');
	for (uint32_t b = 1; m && b; b <<= 1) {
		if (m->errata & b) {
			sb_printf(out, "%s\"%s\"", sep, ptflow_erratum_name(b));
			sep = ",";
		}
	}
	sb_putc(out, ']');
}

static const char caps_usage[] =
	"usage: efipt caps --cpuid FILE [--cpu N] [--json]\n\n"
	"Print the Intel PT capability report efipt.efi would print on that CPU,\n"
	"and the errata the decoder works around on it.\n"
	"FILE is a raw CPUID dump in the format of 'cpuid -r -1' (Debian package\n"
	"cpuid) or the cpuid.txt of an efipt run directory.\n\n";

static const char caps_tail[] =
	"Exit status: 0 if Intel PT is supported, 3 if it is not, 2 on bad input\n"
	"or a write error on standard output.\n";

struct caps_opts {
	const char *file;
	unsigned long long cpu;
	bool json;
};

/* --cpu N: a CPU block of the dump */
static int set_block(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	unsigned long long *cpu = (unsigned long long *)((char *)ctx + row->field);
	if (parse_u64(value, cpu) || *cpu > 4096) {
		sb_printf(err, "--cpu needs a CPU block index, got '%s'", term_safe(value));
		return -1;
	}
	return 0;
}

static const struct opt_row caps_rows[] = {
	{ "cpuid", OPT_VALUE, opts_set_str, offsetof(struct caps_opts, file), "FILE",
	  "the CPUID dump to read" },
	{ "cpu", OPT_VALUE, set_block, offsetof(struct caps_opts, cpu), "N",
	  "use the Nth 'CPU' block of a multi-CPU dump (default 0)" },
	{ "json", OPT_FLAG, opt_set_true, offsetof(struct caps_opts, json), NULL,
	  "print one JSON object instead of the text report (the\nerrata as \"errata\": "
	  "[\"bdm70\", ...])" },
};

int cmd_caps(int argc, char **argv)
{
	struct caps_opts o = { 0 };
	const struct opts_group g[] = { { NULL, caps_rows, sizeof(caps_rows) / sizeof(caps_rows[0]),
					  &o } };
	const struct opts_cmd cmd = { "caps", caps_usage, caps_tail, g, 1, 0 };
	unsigned nop;
	int pr = opts_parse(&cmd, argc, argv, NULL, &nop);
	if (pr != OPTS_OK)
		return pr == OPTS_HELP ? 0 : 2;
	if (!o.file) {
		fprintf(stderr, "efipt caps: --cpuid FILE is required\n");
		opts_help(&cmd, stderr);
		return 2;
	}
	const char *file = o.file;
	unsigned long long cpu = o.cpu;
	bool json = o.json;
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
		/* one more member: the decode errata that apply to this CPU */
		if (sb.len && buf[sb.len - 1] == '}') {
			sb.len--;
			sb_puts(&sb, ",\"errata\":");
			errata_json(&caps, &sb);
			sb_putc(&sb, '}');
		}
		sb_putc(&sb, '\n');
	} else {
		ptcaps_report(&caps, &sb);
		errata_report(&caps, &sb);
	}
	fputs(buf, stdout);
	return caps.absent == PTCAPS_PRESENT ? 0 : 3;
}
