/*
 * An Intel PT MSR model over a CPU profile, for hosted tests: implements
 * struct cpu_ops (CPUID from the profile, RDMSR/WRMSR of the IA32_RTIT_*
 * MSRs) with the PT unit of core/pt_unit.h (SDM 33.2.8, Table 33-11: the
 * rules efipt-qemu.so applies to a guest too), and checks the whole output
 * configuration for operational errors (33.2.7.1, 33.2.7.2 "ToPA Errors",
 * 33.3.10) each time TraceEn goes from 0 to 1, more strictly than a CPU,
 * which checks a ToPA entry when the output reaches it.
 *
 * It never stops a test: every #GP and operational error is counted and
 * described (gp, operr, last_gp, last_operr), so tests assert zero.
 *
 * #GP (the access does not happen):
 *   - any IA32_RTIT_* MSR when PT is not enumerated; OUTPUT_BASE/MASK_PTRS
 *     without ToPA or single-range; CR3_MATCH without CR3 filtering;
 *     ADDRn_A/B for n >= CPUID.(14H,1):EAX[2:0] (or without IP filtering);
 *     any other MSR (the engine has no business there)
 *   - IA32_RTIT_CTL: reserved bits; feature bits whose CPUID bit is 0;
 *     MTCFreq/CycThresh/PSBFreq encodings not in the CPUID bitmaps;
 *     ADDRn_CFG > 2; TraceEn with ToPA=0 and no single-range support;
 *     any change while TraceEn=1 unless the write clears TraceEn;
 *     BranchEn=0 with TraceEn=1 on Broadwell (erratum BDM106)
 *   - IA32_RTIT_STATUS: reserved bits, PendPSB/PendTopaPMI without PMI
 *     preservation, PacketByteCnt without configurable PSB; TraceEn=1
 *   - OUTPUT_BASE: bits 6:0 or bits >= MAXPHYADDR; CR3_MATCH bits 4:0;
 *     non-canonical ADDRn; any of them while TraceEn=1
 * Operational errors at TraceEn 0->1 (STATUS.Error is set):
 *   - single-range: non-contiguous mask, base overlapping the mask,
 *     OutputOffset > mask, region outside allocated memory
 *   - ToPA: table base bits 11:7; entry reserved bits (incl. >= MAXPHYADDR);
 *     region not aligned to its size; END with STOP or INT; END in entry 0;
 *     OutputOffset >= region size; MENTRY=0 rules (entry 1 must be END back
 *     to the table base); tables/regions outside allocated memory; a table
 *     chain that never ends or comes back
 * Also counted: enabling with STATUS.Error/Stopped still set (stale_status);
 * ToPA output regions that overlap a table or another region (hazards: not
 * an SDM error, but the CPU would overwrite its own tables or trace).
 */
#ifndef EFIPT_TESTS_PT_MODEL_H
#define EFIPT_TESTS_PT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/cpu_ops.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_unit.h"
#include "host/util/sim_mem.h"

#define PTMODEL_HOLD_MAX 256u

struct ptmodel {
	struct ptcaps caps;
	const struct cpuid_set *cpuid; /* may be NULL */
	struct simmem *mem;
	struct ptunit u;	/* the MSRs: u.ctl, u.status, u.base, ... */
	struct ptunit_mem umem;
	uint64_t tsc;
	/* Packets the CPU holds before they reach memory (33.2.8.2: "may be
	 * buffered internally"): the last hold bytes (up to PTMODEL_HOLD_MAX)
	 * of ptmodel_emit() stay in held until more come or TraceEn is
	 * cleared, which writes them (33.2.8.3). 0: written at once. */
	size_t hold;
	uint8_t held[256];
	size_t nheld;

	unsigned gp, operr, stale_status, enables;
	unsigned hazards; /* output regions overlapping ToPA tables or each other */
	unsigned rdmsr_count, wrmsr_count;
	char last_gp[200], last_operr[200], last_hazard[200];
	struct cpu_ops ops;
};

void ptmodel_init(struct ptmodel *m, const struct ptcaps *caps, const struct cpuid_set *cpuid,
		  struct simmem *mem);

/* Clear the counters (not the MSRs). */
void ptmodel_clear_counts(struct ptmodel *m);

/*
 * A warm reset (33.3.4): TraceEn is cleared; where CPUID.(14H,0):EBX[2] is
 * set the other trace configuration MSRs keep their values, else all are
 * cleared (Table 33-11, 33.2.8.1). Memory (the trace) is the caller's.
 */
void ptmodel_warm_reset(struct ptmodel *m);

/*
 * The CPU writes n packet bytes to the output as configured (while TraceEn=1
 * and neither Error nor Stopped): ptunit_emit() (u.pmis counts INT regions).
 * Returns the bytes written.
 */
size_t ptmodel_emit(struct ptmodel *m, const uint8_t *bytes, size_t n);

#endif
