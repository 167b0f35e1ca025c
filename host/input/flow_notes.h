/*
 * What every decoding command decides and says the same way: which
 * errata the flow decoder works around (core/pt_flow.h), and, after
 * decoding, the decode errors (how many, the first named with its offset
 * and the erratum it looks like) and the workarounds that acted on a
 * trace whose CPU is not known.
 */
#ifndef EFIPT_HOST_FLOW_NOTES_H
#define EFIPT_HOST_FLOW_NOTES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/flow_setup.h"
#include "core/pt_flow.h"

/*
 * fc->errata for a trace: --cpu FAMILY/MODEL's when given (cpu_given,
 * cpu_errata), else those of the CPU the run recorded (facts, NULL for a
 * raw trace; flow_setup() has set them), else, the CPU unknown, the
 * workarounds that cannot change the decode of a trace that follows the
 * SDM (PTFLOW_ERRATA_SDM_SAFE). Returns whether the CPU is known.
 */
bool flownote_errata(struct ptflow_config *fc, const struct flow_facts *facts, bool cpu_given,
		     uint32_t cpu_errata);

/* "bdm70, apl12" for the errata bits e (static buffer). */
const char *flownote_errata_names(uint32_t e);

/*
 * On stderr, as "CMD: TRACE: ...": the decode errors of st (errors: how many the
 * command counted; the first named with its trace offset and IP, and the
 * erratum whose pattern it shows, with --cpu), unless errors_shown (the
 * command's own output names the first), then only the erratum; and, the
 * CPU unknown, the workarounds that acted.
 */
void flownote_report(const char *cmd, const char *trace, const struct ptflow_stat *st,
		     uint64_t errors, bool cpu_known, bool errors_shown);

/* The erratum hint of an error event ("" or "; it looks like erratum
 * ...: ... --cpu ..."), for commands that print each error (static). */
const char *flownote_hint(uint32_t errata);

#endif
