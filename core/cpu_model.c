/*
 * The CPU model table; see cpu_model.h.
 *
 * Decode errata: the selection of libipt's pt_cpu_errata() as of libipt 2.2,
 * which follows Intel's specification updates (since 2.2 skl014 no longer
 * applies to Sapphire Rapids and later servers, nor to Alder Lake and later
 * client CPUs). Quirks: the specification updates named above the rows, and
 * SDM 33.3.1.2.
 */
#include "core/cpu_model.h"

#include "core/pt_flow.h"

/* Errata sets shared by one core generation. */
#define E_BROADWELL (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_BDM64)
#define E_SKYLAKE (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKD007 | PTFLOW_ERRATUM_SKD022 | \
		   PTFLOW_ERRATUM_SKD010 | PTFLOW_ERRATUM_SKL014 | PTFLOW_ERRATUM_SKL168)
#define E_SKYLAKE_SP (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKL014 | PTFLOW_ERRATUM_SKD022 | \
		      PTFLOW_ERRATUM_SKZ84)
#define E_SERVER (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_SKZ84)
#define E_ICELAKE (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKL014 | PTFLOW_ERRATUM_SKD022)
#define E_HYBRID (PTFLOW_ERRATUM_BDM70 | PTFLOW_ERRATUM_SKD022 | PTFLOW_ERRATUM_APL11)
#define E_GOLDMONT (PTFLOW_ERRATUM_APL12 | PTFLOW_ERRATUM_APL11)
#define E_ATOM PTFLOW_ERRATUM_APL11

#define Q_BROADWELL (CPUMODEL_QUIRK_BDM106 | CPUMODEL_QUIRK_LBR_EXCLUSIVE)
#define Q_GOLDMONT CPUMODEL_QUIRK_CORE_SCOPED
#define Q_SINGLE_4K CPUMODEL_QUIRK_SINGLE_4K
#define Q_LBR CPUMODEL_QUIRK_LBR_EXCLUSIVE

static const struct cpumodel models[] = {
	/* BDM106 (Broadwell spec updates, also BDD/BDF/BDH) */
	{ 6, 0x3d, "Broadwell-U/Y", E_BROADWELL, Q_BROADWELL },
	{ 6, 0x47, "Broadwell-H", E_BROADWELL, Q_BROADWELL },
	{ 6, 0x4f, "Broadwell-EP/EX", E_BROADWELL, Q_BROADWELL },
	{ 6, 0x56, "Broadwell-DE", E_BROADWELL, Q_BROADWELL },

	{ 6, 0x4e, "Skylake-U/Y", E_SKYLAKE, Q_LBR },
	{ 6, 0x5e, "Skylake-S/H", E_SKYLAKE, Q_LBR },
	{ 6, 0x8e, "Kaby/Coffee/Whiskey Lake-U", E_SKYLAKE, 0 },
	{ 6, 0x9e, "Kaby/Coffee Lake-S/H", E_SKYLAKE, 0 },
	{ 6, 0xa5, "Comet Lake-S/H", E_SKYLAKE, 0 },
	{ 6, 0xa6, "Comet Lake-U", E_SKYLAKE, 0 },

	{ 6, 0x55, "Skylake-SP/Cascade Lake/Cooper Lake", E_SKYLAKE_SP, 0 },
	{ 6, 0x6a, "Ice Lake-SP", E_SKYLAKE_SP, 0 },
	{ 6, 0x6c, "Ice Lake-D", E_SKYLAKE_SP, 0 },
	{ 6, 0x8f, "Sapphire Rapids", E_SERVER, 0 },
	{ 6, 0xcf, "Emerald Rapids", E_SERVER, 0 },
	{ 6, 0xad, "Granite Rapids-X", E_SERVER, 0 },
	{ 6, 0xae, "Granite Rapids-D", E_SERVER, 0 },
	{ 19, 0x01, "Diamond Rapids", E_SERVER, 0 },

	{ 6, 0x66, "Cannon Lake", E_ICELAKE, 0 },
	{ 6, 0x7d, "Ice Lake", E_ICELAKE, 0 },
	{ 6, 0x7e, "Ice Lake-U/Y", E_ICELAKE, 0 },
	/* TGL052 */
	{ 6, 0x8c, "Tiger Lake-U", E_ICELAKE, Q_SINGLE_4K },
	{ 6, 0x8d, "Tiger Lake-H", E_ICELAKE, Q_SINGLE_4K },
	{ 6, 0xa7, "Rocket Lake", E_ICELAKE, 0 },
	{ 6, 0xa8, "Rocket Lake", E_ICELAKE, 0 },

	/* ADL037 */
	{ 6, 0x97, "Alder Lake-S", E_HYBRID, Q_SINGLE_4K },
	{ 6, 0x9a, "Alder Lake-P", E_HYBRID, Q_SINGLE_4K },
	/*
	 * Gracemont cores only, and Alder Lake's PT unit: single-range output
	 * is treated like ADL037 until Intel's N-series specification update
	 * says otherwise (Linux limits single-range output to 4 KiB on every
	 * CPU). libipt lists no decode errata for it.
	 */
	{ 6, 0xbe, "Alder Lake-N", 0, Q_SINGLE_4K },
	/* RPL017 */
	{ 6, 0xb7, "Raptor Lake-S", E_HYBRID, Q_SINGLE_4K },
	{ 6, 0xba, "Raptor Lake-P", E_HYBRID, Q_SINGLE_4K },
	{ 6, 0xbf, "Raptor Lake-S", E_HYBRID, Q_SINGLE_4K },
	{ 6, 0xaa, "Meteor Lake", E_HYBRID, 0 },
	{ 6, 0xac, "Meteor Lake", E_HYBRID, 0 },
	{ 6, 0xc5, "Arrow Lake-H", E_HYBRID, 0 },
	{ 6, 0xc6, "Arrow Lake-S", E_HYBRID, 0 },
	{ 6, 0xb5, "Arrow Lake-U", E_HYBRID, 0 },
	{ 6, 0xbd, "Lunar Lake", E_HYBRID, 0 },
	{ 6, 0xcc, "Panther Lake", E_HYBRID, 0 },
	{ 6, 0xd5, "Wildcat Lake", E_HYBRID, 0 },
	{ 18, 0x01, "Nova Lake", E_HYBRID, 0 },
	{ 18, 0x03, "Nova Lake", E_HYBRID, 0 },

	/* Goldmont: RTIT MSRs scoped per core */
	{ 6, 0x5c, "Apollo Lake", E_GOLDMONT, Q_GOLDMONT },
	{ 6, 0x5f, "Denverton", E_GOLDMONT, Q_GOLDMONT },
	{ 6, 0x7a, "Gemini Lake", E_ATOM, 0 },
	{ 6, 0x86, "Snow Ridge", E_ATOM, 0 },
	{ 6, 0x96, "Elkhart Lake", E_ATOM, 0 },
	{ 6, 0x9c, "Jasper Lake", E_ATOM, 0 },
	{ 6, 0xb6, "Grand Ridge", E_ATOM, 0 },
	{ 6, 0xaf, "Sierra Forest", E_ATOM, 0 },
	{ 6, 0xdd, "Clearwater Forest", E_ATOM, 0 },
};

const struct cpumodel *cpumodel_find(unsigned family, unsigned model)
{
	for (unsigned i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i].family == family && models[i].model == model)
			return &models[i];
	return 0;
}

const struct cpumodel *cpumodel_table(unsigned *n)
{
	*n = sizeof(models) / sizeof(models[0]);
	return models;
}

uint32_t cpumodel_quirks(unsigned family, unsigned model)
{
	const struct cpumodel *m = cpumodel_find(family, model);
	return m ? m->quirks : 0;
}

/* Declared in pt_flow.h: the decoder's errata come from the same table. */
uint32_t ptflow_errata_for_cpu(unsigned family, unsigned model, int stepping)
{
	(void)stepping; /* none of the supported errata depends on it */
	const struct cpumodel *m = cpumodel_find(family, model);
	return m ? m->errata : 0;
}
