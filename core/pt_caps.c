/* Intel PT capability decoding, SDM 33.3.1; see pt_caps.h. */
#include <stddef.h>

#include "core/pt_caps.h"
#include "core/mem.h"

#define BIT(n) (1u << (n))

/* One leaf 14H, subleaf 0 capability bit: where it is and the field it sets. */
struct ptcap_row {
	uint8_t reg;		/* CPUID_EBX or CPUID_ECX */
	uint8_t bit;
	uint16_t field;		/* offsetof(struct ptcaps, <its bool>) */
	const char *desc;	/* for the report */
};

#define CAP(id, r, b, f, d) [id] = { CPUID_##r, b, offsetof(struct ptcaps, f), d }
static const struct ptcap_row ptcap_rows[PTCAP_COUNT] = {
	CAP(PTCAP_CR3_FILTER, EBX, 0, cr3_filter, "CR3 filtering (CR3Filter, RTIT_CR3_MATCH)"),
	CAP(PTCAP_PSB_CYC, EBX, 1, psb_cyc, "configurable PSB, cycle-accurate mode (CYC)"),
	CAP(PTCAP_IP_FILTER, EBX, 2, ip_filter, "IP filtering and TraceStop"),
	CAP(PTCAP_MTC, EBX, 3, mtc, "MTC packets"),
	CAP(PTCAP_PTWRITE, EBX, 4, ptwrite, "PTWRITE"),
	CAP(PTCAP_POWER_EVENT, EBX, 5, power_event, "power event trace"),
	CAP(PTCAP_PSB_PMI_PRESERVE, EBX, 6, psb_pmi_preserve, "PSB and PMI preservation"),
	CAP(PTCAP_EVENT_TRACE, EBX, 7, event_trace, "event trace"),
	CAP(PTCAP_TNT_DISABLE, EBX, 8, tnt_disable, "TNT disable (DisTNT)"),
	CAP(PTCAP_TOPA, ECX, 0, topa, "ToPA output"),
	CAP(PTCAP_TOPA_MULTI, ECX, 1, topa_multi, "ToPA tables with multiple output entries"),
	CAP(PTCAP_SINGLE_RANGE, ECX, 2, single_range, "single-range output"),
	CAP(PTCAP_TRACE_TRANSPORT, ECX, 3, trace_transport, "output to trace transport (FabricEn)"),
	CAP(PTCAP_LIP, ECX, 31, lip, "IP payloads are"),
};
#undef CAP

static bool *cap_field(struct ptcaps *caps, enum ptcap c)
{
	return (bool *)((char *)caps + ptcap_rows[c].field);
}

bool ptcaps_has(const struct ptcaps *caps, enum ptcap c)
{
	return caps->absent == PTCAPS_PRESENT && c < PTCAP_COUNT &&
	       *(const bool *)((const char *)caps + ptcap_rows[c].field);
}

static const char *reg_name(unsigned reg)
{
	return reg == CPUID_EBX ? "EBX" : "ECX";
}

void ptcaps_bit_name(enum ptcap c, struct strbuf *out)
{
	sb_printf(out, "CPUID.(EAX=14H,ECX=0):%s[%u]", reg_name(ptcap_rows[c].reg),
		  ptcap_rows[c].bit);
}

static void regs_to_str(char out[13], uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t w[3] = { a, b, c };
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++)
			out[i * 4 + j] = (char)(w[i] >> (8 * j));
	out[12] = 0;
	for (int i = 0; i < 12; i++) { /* keep reports printable */
		if (!out[i]) {
			out[i] = 0;
			break;
		}
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = '?';
	}
	for (int i = 11; i >= 0 && (out[i] == ' ' || !out[i]); i--)
		out[i] = 0;
}

void ptcaps_parse(struct ptcaps *caps, const struct cpuid_set *s)
{
	uint32_t r[4];
	efipt_memset(caps, 0, sizeof(*caps));

	cpuid_set_get(s, 0, 0, r);
	caps->max_leaf = r[CPUID_EAX];
	/* vendor string is EBX, EDX, ECX */
	regs_to_str(caps->vendor, r[CPUID_EBX], r[CPUID_EDX], r[CPUID_ECX]);

	cpuid_set_get(s, 1, 0, r);
	caps->signature = r[CPUID_EAX];
	unsigned base_family = (r[CPUID_EAX] >> 8) & 0xf;
	unsigned base_model = (r[CPUID_EAX] >> 4) & 0xf;
	caps->stepping = r[CPUID_EAX] & 0xf;
	caps->family = base_family;
	if (base_family == 0xf)
		caps->family += (r[CPUID_EAX] >> 20) & 0xff;
	caps->model = base_model;
	if (base_family == 0x6 || base_family == 0xf)
		caps->model |= ((r[CPUID_EAX] >> 16) & 0xf) << 4;
	if (r[CPUID_ECX] & BIT(31)) {
		uint32_t h[4];
		if (cpuid_set_get(s, 0x40000000u, 0, h))
			regs_to_str(caps->hypervisor, h[CPUID_EBX], h[CPUID_ECX], h[CPUID_EDX]);
		else
			efipt_memcpy(caps->hypervisor, "unknown", 8);
	}

	cpuid_set_get(s, 0x80000000u, 0, r);
	caps->max_ext_leaf = r[CPUID_EAX];
	caps->maxphyaddr = 36;
	if (caps->max_ext_leaf >= 0x80000008u && cpuid_set_get(s, 0x80000008u, 0, r) &&
	    (r[CPUID_EAX] & 0xff))
		caps->maxphyaddr = r[CPUID_EAX] & 0xff;

	if (caps->max_leaf >= 0x15) {
		cpuid_set_get(s, 0x15, 0, r);
		caps->tsc_den = r[CPUID_EAX];
		caps->tsc_num = r[CPUID_EBX];
		caps->crystal_hz = r[CPUID_ECX];
	}
	if (caps->max_leaf >= 0x16) {
		cpuid_set_get(s, 0x16, 0, r);
		caps->base_mhz = r[CPUID_EAX] & 0xffff;
	}

	/*
	 * Intel PT and its enumeration are Intel's: another vendor's leaf 7 or
	 * 14H bits mean something else, or nothing (reserved).
	 */
	if (efipt_strcmp(caps->vendor, "GenuineIntel")) {
		caps->absent = PTCAPS_NOT_INTEL;
		return;
	}
	/*
	 * 33.3.1: PT is enumerated by CPUID.(EAX=07H,ECX=0):EBX[25]. A leaf above
	 * the maximum returns the highest basic leaf's data on Intel CPUs, so the
	 * maximum is checked before either leaf is believed.
	 */
	if (caps->max_leaf < 7) {
		caps->absent = PTCAPS_NO_LEAF7;
		return;
	}
	cpuid_set_get(s, 7, 0, r);
	if (!(r[CPUID_EBX] & BIT(25))) {
		caps->absent = PTCAPS_NO_PT_BIT;
		return;
	}
	if (caps->max_leaf < 0x14) {
		caps->absent = PTCAPS_NO_LEAF14;
		return;
	}

	cpuid_set_get(s, 0x14, 0, r);
	caps->max_subleaf = r[CPUID_EAX];
	caps->l14_ebx = r[CPUID_EBX];
	caps->l14_ecx = r[CPUID_ECX];
	for (unsigned i = 0; i < PTCAP_COUNT; i++)
		*cap_field(caps, (enum ptcap)i) = (r[ptcap_rows[i].reg] >> ptcap_rows[i].bit) & 1;

	if (caps->max_subleaf >= 1) {
		cpuid_set_get(s, 0x14, 1, r);
		caps->addr_ranges = r[CPUID_EAX] & 0x7;
		caps->mtc_periods = (uint16_t)(r[CPUID_EAX] >> 16);
		caps->cyc_thresholds = (uint16_t)r[CPUID_EBX];
		caps->psb_periods = (uint16_t)(r[CPUID_EBX] >> 16);
	}
}

static void vendor_note(const struct ptcaps *caps, struct strbuf *out)
{
	sb_printf(out, " (%s", caps->vendor);
	if (caps->hypervisor[0])
		sb_printf(out, ", %s", caps->hypervisor);
	sb_putc(out, ')');
}

bool ptcaps_emulate(struct ptcaps *caps, const struct cpuid_set *profile)
{
	struct ptcaps p;
	ptcaps_parse(&p, profile);
	if (p.absent != PTCAPS_PRESENT)
		return false;
	struct ptcaps keep = *caps;
	*caps = p;
	efipt_memcpy(caps->vendor, keep.vendor, sizeof(caps->vendor));
	efipt_memcpy(caps->hypervisor, keep.hypervisor, sizeof(caps->hypervisor));
	caps->max_leaf = keep.max_leaf;
	caps->max_ext_leaf = keep.max_ext_leaf;
	caps->maxphyaddr = keep.maxphyaddr;
	return true;
}

void ptcaps_absent_line(const struct ptcaps *caps, struct strbuf *out)
{
	sb_puts(out, "Intel PT not supported: ");
	switch (caps->absent) {
	case PTCAPS_PRESENT:
		sb_puts(out, "(it is supported)");
		return;
	case PTCAPS_NOT_INTEL:
		sb_printf(out, "the CPU vendor is \"%s\" (CPUID.(EAX=00H):EBX,EDX,ECX), not "
			       "\"GenuineIntel\"",
			  caps->vendor);
		if (caps->hypervisor[0])
			sb_printf(out, " (hypervisor %s)", caps->hypervisor);
		return;
	case PTCAPS_NO_LEAF7:
		sb_printf(out, "CPUID max basic leaf 0x%x < 07H, no structured feature flags",
			  caps->max_leaf);
		break;
	case PTCAPS_NO_PT_BIT:
		sb_puts(out, "CPUID.(EAX=07H,ECX=0):EBX[25]=0");
		break;
	case PTCAPS_NO_LEAF14:
		sb_printf(out, "CPUID.(EAX=07H,ECX=0):EBX[25]=1 but max basic leaf 0x%x < 14H",
			  caps->max_leaf);
		break;
	}
	vendor_note(caps, out);
}

void ptcaps_bitmap_list(uint16_t bitmap, struct strbuf *out)
{
	bool any = false;
	for (unsigned i = 0; i < 16; i++) {
		if (bitmap & (1u << i)) {
			sb_printf(out, any ? " %u" : "%u", i);
			any = true;
		}
	}
	if (!any)
		sb_puts(out, "none");
}

static void flag(struct strbuf *out, const char *bit, const char *name, bool v)
{
	sb_printf(out, "  %-8s %-44s %s\n", bit, name, v ? "yes" : "no");
}

/* "EBX[3]" */
static void cap_bit(const struct ptcap_row *c, char *buf, size_t n)
{
	struct strbuf b;
	sb_init(&b, buf, n);
	sb_printf(&b, "%s[%u]", reg_name(c->reg), c->bit);
}

/* The yes/no lines of one register's capability bits (LIP has its own line). */
static void cap_flags(const struct ptcaps *caps, unsigned reg, struct strbuf *out)
{
	for (unsigned i = 0; i < PTCAP_COUNT; i++) {
		const struct ptcap_row *c = &ptcap_rows[i];
		if (c->reg != reg || i == PTCAP_LIP)
			continue;
		char bit[12];
		cap_bit(c, bit, sizeof(bit));
		flag(out, bit, c->desc, ptcaps_has(caps, (enum ptcap)i));
	}
}

static void bitmap_line(struct strbuf *out, const char *bit, const char *name, uint16_t bm,
			const char *unit_note)
{
	sb_printf(out, "  %-10s %-42s ", bit, name);
	ptcaps_bitmap_list(bm, out);
	sb_printf(out, "  (bitmap 0x%04x%s)\n", bm, unit_note);
}

void ptcaps_report(const struct ptcaps *caps, struct strbuf *out)
{
	sb_printf(out, "CPU          %s family 0x%x model 0x%x stepping 0x%x (CPUID.1:EAX=0x%08x)\n",
		  caps->vendor, caps->family, caps->model, caps->stepping, caps->signature);
	if (caps->hypervisor[0])
		sb_printf(out, "Hypervisor   %s (CPUID.1:ECX[31]=1)\n", caps->hypervisor);
	sb_printf(out, "Max leaves   basic 0x%x, extended 0x%x\n", caps->max_leaf,
		  caps->max_ext_leaf);
	sb_printf(out, "MAXPHYADDR   %u bits\n", caps->maxphyaddr);
	if (caps->tsc_den && caps->tsc_num)
		sb_printf(out, "TSC/crystal  CPUID.15H ratio %u/%u, crystal %u Hz%s\n", caps->tsc_num,
			  caps->tsc_den, caps->crystal_hz,
			  caps->crystal_hz ? "" : " (not enumerated)");
	else
		sb_puts(out, "TSC/crystal  CPUID.15H not enumerated (no TSC:ART ratio; TMA "
			     "packets cannot be converted without --cpuid-0x15)\n");
	if (caps->base_mhz)
		sb_printf(out, "Base freq    %u MHz (CPUID.16H)\n", caps->base_mhz);

	if (caps->absent != PTCAPS_PRESENT) {
		ptcaps_absent_line(caps, out);
		sb_putc(out, '\n');
		return;
	}
	sb_printf(out, "Intel PT     supported: CPUID.(EAX=07H,ECX=0):EBX[25]=1, leaf 14H "
		       "max subleaf %u\n", caps->max_subleaf);
	sb_printf(out, "CPUID.(EAX=14H,ECX=0):EBX=0x%08x\n", caps->l14_ebx);
	cap_flags(caps, CPUID_EBX, out);
	if (caps->l14_ebx >> 9)
		sb_printf(out, "  EBX[31:9] reserved bits set: 0x%x\n", caps->l14_ebx >> 9);
	sb_printf(out, "CPUID.(EAX=14H,ECX=0):ECX=0x%08x\n", caps->l14_ecx);
	cap_flags(caps, CPUID_ECX, out);
	char lip[12];
	cap_bit(&ptcap_rows[PTCAP_LIP], lip, sizeof(lip));
	sb_printf(out, "  %-8s %-44s %s\n", lip, ptcap_rows[PTCAP_LIP].desc,
		  caps->lip ? "LIP (linear, CS base included)" : "RIP (CS base not included)");
	if (caps->max_subleaf < 1) {
		sb_puts(out, "CPUID.(EAX=14H,ECX=1) not enumerated: no address ranges, no MTC/CYC/PSB "
			     "period choices\n");
		return;
	}
	sb_puts(out, "CPUID.(EAX=14H,ECX=1)\n");
	sb_printf(out, "  %-10s %-42s %u\n", "EAX[2:0]", "address ranges (ADDRn_CFG)",
		  caps->addr_ranges);
	bitmap_line(out, "EAX[31:16]", "MTC periods (MTCFreq, ART(n))", caps->mtc_periods, "");
	bitmap_line(out, "EBX[15:0]", "cycle thresholds (CycThresh)", caps->cyc_thresholds, "");
	bitmap_line(out, "EBX[31:16]", "PSB periods (PSBFreq, 2K<<n bytes)", caps->psb_periods,
		    "");
}

static void jbool(struct strbuf *out, const char *k, bool v, bool comma)
{
	sb_printf(out, "\"%s\":%s%s", k, v ? "true" : "false", comma ? "," : "");
}

void ptcaps_json(const struct ptcaps *caps, struct strbuf *out)
{
	sb_puts(out, "{\"vendor\":\"");
	sb_json_escape(out, caps->vendor);
	sb_puts(out, "\",\"hypervisor\":\"");
	sb_json_escape(out, caps->hypervisor);
	sb_printf(out, "\",\"signature\":\"0x%08x\",\"family\":%u,\"model\":%u,\"stepping\":%u,",
		  caps->signature, caps->family, caps->model, caps->stepping);
	sb_printf(out, "\"maxphyaddr\":%u,", caps->maxphyaddr);
	jbool(out, "pt", caps->absent == PTCAPS_PRESENT, true);
	if (caps->absent != PTCAPS_PRESENT) {
		char line[160];
		struct strbuf l;
		sb_init(&l, line, sizeof(line));
		ptcaps_absent_line(caps, &l);
		sb_puts(out, "\"reason\":\"");
		sb_json_escape(out, line);
		sb_puts(out, "\"}");
		return;
	}
	sb_printf(out, "\"leaf14_ebx\":\"0x%08x\",\"leaf14_ecx\":\"0x%08x\",", caps->l14_ebx,
		  caps->l14_ecx);
	jbool(out, "cr3_filter", caps->cr3_filter, true);
	jbool(out, "psb_cyc", caps->psb_cyc, true);
	jbool(out, "ip_filter", caps->ip_filter, true);
	jbool(out, "mtc", caps->mtc, true);
	jbool(out, "ptwrite", caps->ptwrite, true);
	jbool(out, "power_event", caps->power_event, true);
	jbool(out, "event_trace", caps->event_trace, true);
	jbool(out, "tnt_disable", caps->tnt_disable, true);
	jbool(out, "topa", caps->topa, true);
	jbool(out, "topa_multi", caps->topa_multi, true);
	jbool(out, "single_range", caps->single_range, true);
	jbool(out, "lip", caps->lip, true);
	sb_printf(out, "\"addr_ranges\":%u,\"mtc_periods\":\"0x%04x\",\"cyc_thresholds\":"
		       "\"0x%04x\",\"psb_periods\":\"0x%04x\"}",
		  caps->addr_ranges, caps->mtc_periods, caps->cyc_thresholds, caps->psb_periods);
}
