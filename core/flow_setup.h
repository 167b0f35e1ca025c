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
};

/* The facts of a trace recorded on the CPU of caps with rtit_ctl. */
void flow_facts_from_caps(struct flow_facts *f, const struct ptcaps *caps, uint64_t rtit_ctl);

/*
 * Set what the facts decide in fc: the errata of the CPU, and DisTNT and
 * DisRETC of the trace. Settings the facts do not have are left as they are
 * (a command line may have set them).
 */
void flow_setup(struct ptflow_config *fc, const struct flow_facts *f);

#endif
