/*
 * Intel PT capabilities decoded from raw CPUID (SDM 33.3.1, Tables 33-11 and
 * 33-12). Pure functions over a cpuid_set, shared by efipt.efi (live CPUID)
 * and the host (`efipt caps --cpuid FILE`).
 */
#ifndef EFIPT_CORE_PT_CAPS_H
#define EFIPT_CORE_PT_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuid_set.h"
#include "core/strbuf.h"

/* Why Intel PT cannot be used; checked in this order. */
enum ptcaps_absent {
	PTCAPS_PRESENT = 0,
	PTCAPS_NOT_INTEL,     /* vendor string (CPUID.0) is not "GenuineIntel" */
	PTCAPS_NO_LEAF7,      /* max basic leaf < 7: leaf 7 would alias another leaf */
	PTCAPS_NO_PT_BIT,     /* CPUID.(EAX=07H,ECX=0):EBX[25] = 0 */
	PTCAPS_NO_LEAF14,     /* bit 25 set but max basic leaf < 14H */
};

struct ptcaps {
	/* identity (CPUID 0, 1, 40000000H) */
	char vendor[13];
	char hypervisor[13];  /* hypervisor vendor if CPUID.1:ECX[31], else "" */
	uint32_t max_leaf;
	uint32_t max_ext_leaf;
	uint32_t signature;   /* CPUID.1:EAX */
	unsigned family, model, stepping; /* display values (SDM Vol. 2A, CPUID) */

	enum ptcaps_absent absent;

	/* leaf 14H, subleaf 0 (valid only when absent == PTCAPS_PRESENT) */
	uint32_t max_subleaf;
	uint32_t l14_ebx, l14_ecx; /* raw, for reports and manifests */
	bool cr3_filter;      /* EBX[0] */
	bool psb_cyc;         /* EBX[1] configurable PSB and cycle-accurate mode */
	bool ip_filter;       /* EBX[2] IP filtering, TraceStop, MSRs kept on warm reset */
	bool mtc;             /* EBX[3] */
	bool ptwrite;         /* EBX[4] */
	bool power_event;     /* EBX[5] */
	bool psb_pmi_preserve;/* EBX[6] */
	bool event_trace;     /* EBX[7] */
	bool tnt_disable;     /* EBX[8] */
	bool topa;            /* ECX[0] */
	bool topa_multi;      /* ECX[1] ToPA tables with many output entries */
	bool single_range;    /* ECX[2] */
	bool trace_transport; /* ECX[3] FabricEn */
	bool lip;             /* ECX[31] IP payloads are linear addresses */

	/* leaf 14H, subleaf 1 (zero when max_subleaf < 1) */
	unsigned addr_ranges;     /* EAX[2:0] */
	uint16_t mtc_periods;     /* EAX[31:16] bitmap of MTCFreq encodings */
	uint16_t cyc_thresholds;  /* EBX[15:0] bitmap of CycThresh encodings */
	uint16_t psb_periods;     /* EBX[31:16] bitmap of PSBFreq encodings */

	/* leaf 15H: TSC/"core crystal clock" ratio = ebx/eax; crystal in Hz */
	uint32_t tsc_den, tsc_num, crystal_hz;
	/* leaf 16H: base frequency in MHz, 0 if not enumerated */
	uint32_t base_mhz;
	unsigned maxphyaddr;      /* CPUID.80000008H:EAX[7:0], 36 if absent */
};

/*
 * The capability bits of leaf 14H subleaf 0 (Table 33-11), one row each in
 * pt_caps.c like Linux's PT_CAP table: ptcaps_parse() fills the fields above
 * from it, the report lists it, and ptcfg_validate() names the bit when it
 * refuses an option.
 */
enum ptcap {
	PTCAP_CR3_FILTER,
	PTCAP_PSB_CYC,
	PTCAP_IP_FILTER,
	PTCAP_MTC,
	PTCAP_PTWRITE,
	PTCAP_POWER_EVENT,
	PTCAP_PSB_PMI_PRESERVE,
	PTCAP_EVENT_TRACE,
	PTCAP_TNT_DISABLE,
	PTCAP_TOPA,
	PTCAP_TOPA_MULTI,
	PTCAP_SINGLE_RANGE,
	PTCAP_TRACE_TRANSPORT,
	PTCAP_LIP,
	PTCAP_COUNT
};

/* Whether the CPU has capability c (false without Intel PT). */
bool ptcaps_has(const struct ptcaps *caps, enum ptcap c);

/* Where c is enumerated: "CPUID.(EAX=14H,ECX=0):EBX[3]". */
void ptcaps_bit_name(enum ptcap c, struct strbuf *out);

/* Decode s into caps. Never fails: a CPU without PT gets caps->absent set. */
void ptcaps_parse(struct ptcaps *caps, const struct cpuid_set *s);

/*
 * Emulated Intel PT (efipt.efi --emulated-caps, efipt-qemu.so pt=guest): the
 * PT unit described by a CPU profile's CPUID (profile; leaves 7, 14H, 15H,
 * 16H, its family and model for the errata and quirks) on a machine that
 * has none. caps keeps what the machine itself says: vendor, hypervisor,
 * leaf counts and MAXPHYADDR (the guest's physical addresses). Both sides
 * call this, so the firmware and the emulated unit hold the same rules.
 * False (caps unchanged) if the profile has no Intel PT.
 */
bool ptcaps_emulate(struct ptcaps *caps, const struct cpuid_set *profile);

/* One line naming why PT is unusable, e.g.
 * "Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0 (GenuineIntel, TCG)". */
void ptcaps_absent_line(const struct ptcaps *caps, struct strbuf *out);

/* The full human-readable capability report (several lines). */
void ptcaps_report(const struct ptcaps *caps, struct strbuf *out);

/* A JSON object summarising the capabilities (for manifests). */
void ptcaps_json(const struct ptcaps *caps, struct strbuf *out);

/* Write the encodings set in a 16-bit bitmap as "0 1 2" ("none" if empty). */
void ptcaps_bitmap_list(uint16_t bitmap, struct strbuf *out);

#endif
