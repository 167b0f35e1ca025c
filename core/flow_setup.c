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
	if (f->have_cpu)
		fc->errata = ptflow_errata_for_cpu(f->family, f->model, f->stepping);
	if (f->have_ctl) {
		/* 33.2.8.2: DisTNT drops TNT packets, DisRETC compresses no RET. */
		fc->distnt = f->rtit_ctl & RTIT_CTL_DISTNT;
		fc->disretc = f->rtit_ctl & RTIT_CTL_DISRETC;
	}
}
