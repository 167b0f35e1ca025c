/*
 * Intel PT on several CPUs in firmware (efipt.efi trace --cpus): the CPUs
 * through MP services (efi/mp_services.h), the per-CPU engine of
 * arch/x86_64/pt_cpus.h, each CPU's trace written into the run directory
 * straight from its buffer (trace.pt for CPU 0, trace.cpuN.pt; docs/format.md
 * "Several CPUs"), and a copy of each kept for the in-place decode.
 */
#ifndef EFIPT_EFI_MP_TRACE_H
#define EFIPT_EFI_MP_TRACE_H

#include <efi.h>

#include "core/cpu_list.h"
#include "core/cpuid_set.h"
#include "core/pt_config.h"
#include "core/strbuf.h"
#include "efi/hw_trace.h"
#include "efi/run.h"

#define MP_TRACE_MAX CPU_LIST_MAX

/* One CPU's part of a run (which CPUs: struct cpu_list, core/cpu_list.h). */
struct mp_trace_cpu {
	unsigned number;
	UINT64 apic_id;
	bool traced;		/* false: its core is traced by another thread (Goldmont) */
	uint8_t *buf;		/* a copy of its trace for the decode (caller frees), or NULL */
	uint64_t len;
	struct ptout_extent ext;
	EFI_STATUS write_status;	/* writing its trace file */
};

struct mp_trace_result {
	unsigned n;
	struct mp_trace_cpu cpu[MP_TRACE_MAX];
	uint64_t tsc_start, tsc_stop;
	EFI_STATUS body_status;
};

/*
 * Trace the body on the selected CPUs (the body runs on this CPU, the BSP,
 * which must be one of them). profile: --emulated-caps, or NULL. keep: keep
 * a copy of each trace (res->cpu[i].buf) for the decode. With a run
 * directory each trace is written into it and the manifest's "trace"
 * object lists them. EFI_NOT_FOUND when the firmware has no MP services;
 * EFI_UNSUPPORTED when a CPU cannot do what cfg asks (msg names it).
 */
EFI_STATUS mp_trace(struct run *run, const struct cpu_list *sel,
		    const struct cpuid_set *profile, const struct ptcfg *cfg, bool keep,
		    hw_body_fn body, void *ctx, struct mp_trace_result *res, struct strbuf *msg);

#endif
