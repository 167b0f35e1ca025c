/* Errata choice and decode error notes for every command; see flow_notes.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/util/file_io.h"
#include "host/input/flow_notes.h"

bool flownote_errata(struct ptflow_config *fc, const struct flow_facts *facts, bool cpu_given,
		     uint32_t cpu_errata)
{
	if (cpu_given) {
		fc->errata = cpu_errata;
		return true;
	}
	if (facts && (facts->have_cpu || facts->emulated_trace))
		return true; /* flow_setup() took the run's */
	fc->errata = PTFLOW_ERRATA_SDM_SAFE;
	return false;
}

const char *flownote_errata_names(uint32_t e)
{
	static char buf[160];
	size_t n = 0;
	buf[0] = 0;
	for (uint32_t bit = 1; bit && n < sizeof(buf) - 16; bit <<= 1) {
		const char *name = (e & bit) ? ptflow_erratum_name(bit) : NULL;
		if (name)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", name);
	}
	for (char *p = buf; *p; p++) /* as Intel writes them: BDM70 */
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	return buf;
}

const char *flownote_hint(uint32_t errata)
{
	static char buf[320];
	if (!errata)
		return "";
	snprintf(buf, sizeof(buf), "; it looks like erratum %s: if the CPU that recorded the "
		 "trace has it, give its --cpu FAMILY/MODEL ('efipt caps --cpuid' lists a CPU's "
		 "errata)", flownote_errata_names(errata));
	return buf;
}

void flownote_report(const char *cmd, const char *trace, const struct ptflow_stat *st,
		     uint64_t errors, bool cpu_known, bool errors_shown)
{
	const struct ptflow_event *e = &st->first_error;
	if (e->type == PTFLOW_EV_ERROR && !errors_shown)
		fprintf(stderr, "%s: %s: %" PRIu64 " decode error%s (decoding goes on at the next "
				"PSB after each); the first at trace offset 0x%" PRIx64 ", ip 0x%"
				PRIx64 ": %s%s\n",
			cmd, term_safe(trace), errors, errors == 1 ? "" : "s", e->offset, e->ip,
			e->msg, flownote_hint(e->errata));
	else if (e->type == PTFLOW_EV_ERROR && e->errata)
		fprintf(stderr, "%s: %s: the first decode error, at trace offset 0x%" PRIx64 "%s\n",
			cmd, term_safe(trace), e->offset, flownote_hint(e->errata));
	if (!cpu_known && st->errata_used)
		fprintf(stderr, "%s: %s: the CPU that recorded the trace is not known (--cpu "
				"FAMILY/MODEL): applied the workarounds of erratum %s, which act "
				"only where a trace breaks the SDM's rules\n",
			cmd, term_safe(trace), flownote_errata_names(st->errata_used));
}
