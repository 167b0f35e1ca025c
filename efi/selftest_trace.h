/* The tracing cases of `efipt.efi selftest`: built-in code with a known
 * control flow, traced in each output mode the CPU supports and decoded in
 * place. */
#ifndef EFIPT_EFI_SELFTEST_TRACE_H
#define EFIPT_EFI_SELFTEST_TRACE_H

#include <efi.h>

#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "core/strbuf.h"

/* Returns 1 pass, 0 fail, -1 skip (the CPU lacks this mode); detail says
 * what was seen or why it was skipped. */
int selftest_trace_mode(const struct ptcaps *caps, enum ptcfg_output output,
			enum ptcfg_mode mode, uint64_t size, struct strbuf *detail);

#endif
