/* Decoder settings from the facts of a run; see flow_setup.h. */
#include "core/flow_setup.h"

#include "core/mem.h"
#include "core/pt_rtit.h"

void flow_facts_from_caps(struct flow_facts *f, const struct ptcaps *caps, uint64_t rtit_ctl)
{
	efipt_memset(f, 0, sizeof(*f));
	f->have_cpu = true;
	f->family = caps->family;
	f->model = caps->model;
	f->stepping = (int)caps->stepping;
	f->have_ctl = true;
	f->rtit_ctl = rtit_ctl;
}

void flow_setup(struct ptflow_config *fc, const struct flow_facts *f)
{
	if (f->emulated_trace)
		fc->errata = 0;
	else if (f->have_cpu)
		fc->errata = ptflow_errata_for_cpu(f->family, f->model, f->stepping);
	if (f->have_ctl) {
		/* 33.2.8.2: DisTNT drops TNT packets, DisRETC compresses no RET. */
		fc->distnt = f->rtit_ctl & RTIT_CTL_DISTNT;
		fc->disretc = f->rtit_ctl & RTIT_CTL_DISRETC;
		/* 33.2.8.2: MTC carries CTC bits [MTCFreq+7:MTCFreq] */
		fc->mtc_freq = (uint8_t)((f->rtit_ctl & RTIT_CTL_MTCFREQ_MASK) >>
					 RTIT_CTL_MTCFREQ_SHIFT);
	}
	if (f->have_cpuid15 && f->cpuid15_eax && f->cpuid15_ebx) {
		fc->cpuid15_eax = f->cpuid15_eax;
		fc->cpuid15_ebx = f->cpuid15_ebx;
	}
	if (f->nom_freq)
		fc->nom_freq = f->nom_freq;
}

uint64_t flow_tsc_hz(const struct flow_facts *f, enum flow_tsc_src *src)
{
	*src = FLOW_TSC_NONE;
	if (f->tsc_hz) {
		*src = FLOW_TSC_GIVEN;
		return f->tsc_hz;
	}
	/* CPUID.15H: TSC Hz = ECX * EBX / EAX (ECX 0: crystal not enumerated) */
	if (f->have_cpuid15 && f->cpuid15_eax && f->cpuid15_ebx && f->cpuid15_ecx) {
		*src = FLOW_TSC_CPUID15;
		return (uint64_t)f->cpuid15_ecx * f->cpuid15_ebx / f->cpuid15_eax;
	}
	if (f->nom_freq) {
		/* the TSC runs at the nominal (P1) frequency, ratio * 100 MHz */
		*src = FLOW_TSC_NOM_FREQ;
		return (uint64_t)f->nom_freq * 100000000ull;
	}
	return 0;
}

const char *flow_tsc_src_name(enum flow_tsc_src src)
{
	switch (src) {
	case FLOW_TSC_GIVEN: return "manifest timing.tsc_hz";
	case FLOW_TSC_CPUID15: return "CPUID.15H";
	case FLOW_TSC_NOM_FREQ: return "nominal ratio";
	case FLOW_TSC_NONE: break;
	}
	return "unknown";
}
