/*
 * Intel PT time tracking: an estimate of the TSC at any point of a trace
 * from its timing packets.
 *
 * Specification: Intel SDM Vol. 3C chapter 33: 33.3.6 (cycle-accurate
 * mode), 33.3.8.2 (timing packets lost in an overflow), 33.4.2.10-14 (CBR,
 * TSC, MTC, TMA, CYC), 33.8.3 "Tracking Time" (33.8.3.1 the relation
 * TSC = CTC * P + AdjustedProcessorCycles + offset, 33.8.3.2 estimating the
 * TSC from MTC, TMA and CYC).
 *
 * The estimate is base + fine: base is the TSC of the last TSC packet, or
 * of the core crystal clock edge of the last MTC; fine is what happened
 * since: the TMA's FastCounter and the core cycles counted by CYC,
 * converted to TSC ticks at nominal : CBR. Feed the timing packets in
 * stream order; pttime_get() gives the estimate after the last one.
 *
 * Freestanding: no allocation, no globals. The caller owns struct pttime.
 */
#ifndef EFIPT_CORE_PT_TIME_H
#define EFIPT_CORE_PT_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_pkt.h"

struct pttime_config {
	/* CPUID.15H: TSC ticks per core crystal clock tick are EBX / EAX
	 * (P in 33.8.3). 0: MTCs cannot be used. */
	uint32_t cpuid15_eax, cpuid15_ebx;
	uint8_t mtc_freq;	/* IA32_RTIT_CTL.MTCFreq: MTC carries CTC[N+7:N] */
	uint8_t nom_freq;	/* the TSC's (P1) ratio to the 100 MHz bus clock
				 * (CPUID.16H / 100 MHz); 0: CYCs cannot be used */
	bool skl168;		/* erratum SKL168 (see pttime_psb()) */
};

/* Fields are private; read them through pttime_get(). */
struct pttime {
	struct pttime_config cfg;
	uint64_t base;		/* TSC at the last TSC packet or MTC edge */
	uint64_t fine;		/* TSC ticks since base: FastCounter, folded CYCs */
	uint64_t cyc;		/* core cycles since fine, all at ratio cbr */
	uint64_t edge;		/* TSC at the crystal clock edge before the TMA */
	uint64_t ctc;		/* crystal clock ticks from that edge to the last MTC */
	/* ctc in TSC ticks, ctc * EBX = ctc_tsc * EAX + ctc_rem (0 <= ctc_rem
	 * < EAX), kept up to date per MTC without a division; and an MTC
	 * period's (2^MTCFreq crystal ticks) share of it, computed once */
	uint64_t ctc_tsc, ctc_rem, period_tsc, period_rem;
	uint32_t lost_mtc;	/* since the last TSC */
	uint32_t lost_cyc;	/* since the last TSC or MTC */
	uint16_t tma_ctc;	/* TMA's CTC[15:0] */
	uint8_t mtc;		/* payload of the last MTC */
	uint8_t cbr;		/* core:bus ratio, 0 if none seen */
	bool have_tsc;
	bool have_tma;		/* a TMA since the last TSC */
	bool have_mtc;		/* an MTC since the last TMA */
	bool psb_cyc;		/* SKL168: a PSB since the last TSC or MTC, no CYC yet */
};

void pttime_init(struct pttime *t, const struct pttime_config *cfg);

/* One packet each (33.4.2.10-14). */
void pttime_tsc(struct pttime *t, uint64_t tsc);
void pttime_tma(struct pttime *t, uint16_t ctc, uint16_t fc);
void pttime_mtc(struct pttime *t, uint8_t payload);
void pttime_cyc(struct pttime *t, uint64_t cycles);
void pttime_cbr(struct pttime *t, uint8_t ratio);
/* A PSB was read (only SKL168 cares). */
void pttime_psb(struct pttime *t);
/* Any packet: the timing packets and PSB go to the functions above, the
 * others are ignored. */
void pttime_packet(struct pttime *t, const struct ptpkt *p);

/*
 * The estimated TSC now in *tsc (0 if unknown). Returns false before the
 * first TSC packet. lost_mtc (MTCs lost or unusable since the last TSC) and
 * lost_cyc (CYCs that could not be converted, or that may miss cycles, since
 * the last TSC or MTC) say how far to trust it; either may be NULL.
 */
bool pttime_get(const struct pttime *t, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);

#endif
