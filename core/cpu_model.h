/*
 * What efipt knows about each Intel CPU model, in one table (cpu_model.c):
 * the errata the flow decoder works around (PTFLOW_ERRATUM_*) and the quirks
 * the configuration must respect (CPUMODEL_QUIRK_*). Every other file asks
 * this table; no CPU model number appears anywhere else.
 *
 * Models are CPUID display family/model (SDM Vol. 2A, CPUID leaf 1), as in
 * Intel's specification updates ("06_97H" is family 6, model 0x97).
 */
#ifndef EFIPT_CORE_CPU_MODEL_H
#define EFIPT_CORE_CPU_MODEL_H

#include <stdint.h>

/* Configuration quirks. */
enum {
	/* BDM106: WRMSR of IA32_RTIT_CTL with BranchEn=0 may #GP. */
	CPUMODEL_QUIRK_BDM106 = 1u << 0,
	/* TGL052/ADL037/RPL017: single-range output above 4 KiB corrupts trace. */
	CPUMODEL_QUIRK_SINGLE_4K = 1u << 1,
	/* Goldmont: the RTIT MSRs are shared by the core, not per logical CPU. */
	CPUMODEL_QUIRK_CORE_SCOPED = 1u << 2,
	/* 33.3.1.2: Intel PT and LBRs cannot be used at the same time. */
	CPUMODEL_QUIRK_LBR_EXCLUSIVE = 1u << 3,
};

struct cpumodel {
	uint16_t family;	/* display family */
	uint8_t model;		/* display model */
	const char *name;	/* e.g. "Raptor Lake-P" */
	uint32_t errata;	/* PTFLOW_ERRATUM_* to apply when decoding */
	uint32_t quirks;	/* CPUMODEL_QUIRK_* */
};

/* The row for a CPU, or NULL for a model efipt knows nothing about. */
const struct cpumodel *cpumodel_find(unsigned family, unsigned model);

/* The whole table: *n rows. */
const struct cpumodel *cpumodel_table(unsigned *n);

/* Its quirks (0 for an unknown model). */
uint32_t cpumodel_quirks(unsigned family, unsigned model);

#endif
