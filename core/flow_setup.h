/*
 * What a run recorded that decoding its trace depends on, and the one
 * function that turns it into decoder settings. efipt.efi fills the facts
 * from live CPUID and the trace options (in-place decode), the host from a
 * run directory's manifest.json (`efipt insn --run`, `efipt decode`).
 */
#ifndef EFIPT_CORE_FLOW_SETUP_H
#define EFIPT_CORE_FLOW_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_caps.h"
#include "core/pt_flow.h"

struct flow_facts {
	bool have_cpu;
	unsigned family, model;	/* CPUID display values */
	int stepping;		/* -1: unknown */
	bool have_ctl;
	uint64_t rtit_ctl;	/* IA32_RTIT_CTL the trace was recorded with */
	/* Timing (SDM 33.8.3): CPUID.15H of the clock that made the trace
	 * (TSC/crystal ratio EBX/EAX, crystal Hz ECX), the nominal (P1)
	 * ratio to the 100 MHz bus clock, the TSC frequency if known. */
	bool have_cpuid15;
	uint32_t cpuid15_eax, cpuid15_ebx, cpuid15_ecx;
	uint8_t nom_freq;	/* 0: unknown */
	uint64_t tsc_hz;	/* 0: unknown */
	bool emulated;		/* the trace's time is emulated (efipt qemu) */
	bool emulated_trace;	/* no CPU wrote the trace (efipt qemu): it
				 * follows the SDM, no CPU's errata apply */
};

/* Where flow_tsc_hz() took the TSC frequency from. */
enum flow_tsc_src {
	FLOW_TSC_NONE,		/* unknown: times stay in TSC ticks */
	FLOW_TSC_GIVEN,		/* the run says it (manifest timing.tsc_hz) */
	FLOW_TSC_CPUID15,	/* crystal Hz * EBX / EAX (CPUID.15H) */
	FLOW_TSC_NOM_FREQ,	/* nominal ratio * 100 MHz */
};

/* The facts of a trace recorded on the CPU of caps with rtit_ctl. */
void flow_facts_from_caps(struct flow_facts *f, const struct ptcaps *caps, uint64_t rtit_ctl);

/*
 * Set what the facts decide in fc: the errata of the CPU, DisTNT, DisRETC
 * and MTCFreq of the trace, CPUID.15H and the nominal ratio for its time. Settings the facts do not have are left as they are
 * (a command line may have set them).
 */
void flow_setup(struct ptflow_config *fc, const struct flow_facts *f);

/* The TSC frequency in Hz the facts give (0 if none) and where from. */
uint64_t flow_tsc_hz(const struct flow_facts *f, enum flow_tsc_src *src);
/* "manifest timing.tsc_hz", "CPUID.15H", "nominal ratio", "unknown". */
const char *flow_tsc_src_name(enum flow_tsc_src src);

#endif
