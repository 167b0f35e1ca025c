/* The Intel PT unit's software-visible rules (SDM 33.2.7, 33.2.8, 33.3.10);
 * see pt_unit.h. */
#include "core/pt_unit.h"
#include "core/cpu_model.h"
#include "core/mem.h"
#include "core/pt_rtit.h"

void ptunit_init(struct ptunit *u, const struct ptcaps *caps)
{
	efipt_memset(u, 0, sizeof(*u));
	u->caps = *caps;
	u->mask = RTIT_MASK_LOWER;
}

static bool present(const struct ptcaps *c) { return c->absent == PTCAPS_PRESENT; }
static bool tracing(const struct ptunit *u) { return u->ctl & RTIT_CTL_TRACEEN; }

static unsigned nranges(const struct ptcaps *c)
{
	unsigned n = c->ip_filter ? c->addr_ranges : 0;
	return n > PTUNIT_RANGES ? PTUNIT_RANGES : n;
}

static uint64_t phys_limit(const struct ptcaps *c)
{
	return c->maxphyaddr >= 64 ? ~0ull : (1ull << c->maxphyaddr) - 1;
}

static bool canonical48(uint64_t a)
{
	uint64_t top = a >> 47;
	return top == 0 || top == 0x1ffff;
}

static bool is_addr_msr(uint32_t msr) { return msr >= 0x580 && msr <= 0x58f; }

const char *ptunit_msr_absent(const struct ptcaps *c, uint32_t msr)
{
	if (msr != MSR_IA32_RTIT_CTL && msr != MSR_IA32_RTIT_STATUS &&
	    msr != MSR_IA32_RTIT_OUTPUT_BASE && msr != MSR_IA32_RTIT_OUTPUT_MASK_PTRS &&
	    msr != MSR_IA32_RTIT_CR3_MATCH && !is_addr_msr(msr))
		return "not an Intel PT MSR";
	if (!present(c))
		return "Intel PT is not enumerated (CPUID.(EAX=07H,ECX=0):EBX[25]=0; SDM 33.2.8)";
	if ((msr == MSR_IA32_RTIT_OUTPUT_BASE || msr == MSR_IA32_RTIT_OUTPUT_MASK_PTRS) &&
	    !c->topa && !c->single_range)
		return "no output to memory: neither ToPA (CPUID.(EAX=14H,ECX=0):ECX[0]) nor "
		       "single-range output (ECX[2]) (SDM 33.2.8.7)";
	if (msr == MSR_IA32_RTIT_CR3_MATCH && !c->cr3_filter)
		return "no CR3 filtering: CPUID.(EAX=14H,ECX=0):EBX[0]=0 (SDM 33.2.8.6)";
	if (is_addr_msr(msr) && (msr - 0x580) / 2 >= nranges(c))
		return "address range not enumerated: CPUID.(EAX=14H,ECX=1):EAX[2:0] (and "
		       "CPUID.(EAX=14H,ECX=0):EBX[2]) (SDM 33.2.8.5)";
	return 0;
}

const char *ptunit_msr_name(uint32_t msr)
{
	static const char *const addr[] = {
		"IA32_RTIT_ADDR0_A", "IA32_RTIT_ADDR0_B", "IA32_RTIT_ADDR1_A", "IA32_RTIT_ADDR1_B",
		"IA32_RTIT_ADDR2_A", "IA32_RTIT_ADDR2_B", "IA32_RTIT_ADDR3_A", "IA32_RTIT_ADDR3_B",
		"IA32_RTIT_ADDR4_A", "IA32_RTIT_ADDR4_B", "IA32_RTIT_ADDR5_A", "IA32_RTIT_ADDR5_B",
		"IA32_RTIT_ADDR6_A", "IA32_RTIT_ADDR6_B", "IA32_RTIT_ADDR7_A", "IA32_RTIT_ADDR7_B",
	};
	switch (msr) {
	case MSR_IA32_RTIT_OUTPUT_BASE: return "IA32_RTIT_OUTPUT_BASE";
	case MSR_IA32_RTIT_OUTPUT_MASK_PTRS: return "IA32_RTIT_OUTPUT_MASK_PTRS";
	case MSR_IA32_RTIT_CTL: return "IA32_RTIT_CTL";
	case MSR_IA32_RTIT_STATUS: return "IA32_RTIT_STATUS";
	case MSR_IA32_RTIT_CR3_MATCH: return "IA32_RTIT_CR3_MATCH";
	default: return is_addr_msr(msr) ? addr[msr - 0x580] : 0;
	}
}

int ptunit_rdmsr(const struct ptunit *u, uint32_t msr, uint64_t *v, struct strbuf *why)
{
	const char *absent = ptunit_msr_absent(&u->caps, msr);
	*v = 0;
	if (absent) {
		sb_printf(why, "RDMSR 0x%x: %s", msr, absent);
		return PTUNIT_GP;
	}
	switch (msr) {
	case MSR_IA32_RTIT_CTL: *v = u->ctl; break;
	case MSR_IA32_RTIT_STATUS: *v = u->status; break;
	case MSR_IA32_RTIT_OUTPUT_BASE: *v = u->base; break;
	case MSR_IA32_RTIT_OUTPUT_MASK_PTRS: *v = u->mask | RTIT_MASK_LOWER; break;
	case MSR_IA32_RTIT_CR3_MATCH: *v = u->cr3; break;
	default: *v = (msr & 1) ? u->addr_b[(msr - 0x580) / 2] : u->addr_a[(msr - 0x580) / 2]; break;
	}
	return PTUNIT_OK;
}

static bool encoding_ok(uint16_t bitmap, unsigned v) { return bitmap & (1u << v); }

/* A feature bit of IA32_RTIT_CTL and the CPUID bit it needs (Table 33-6). */
static const struct {
	uint64_t bits;
	enum ptcap cap;
	const char *what;
} ctl_needs[] = {
	{ RTIT_CTL_CYCEN | RTIT_CTL_CYCTHRESH_MASK | RTIT_CTL_PSBFREQ_MASK, PTCAP_PSB_CYC,
	  "CYCEn/CycThresh/PSBFreq" },
	{ RTIT_CTL_PTWEN | RTIT_CTL_FUPONPTW, PTCAP_PTWRITE, "PTWEn/FUPonPTW" },
	{ RTIT_CTL_PWREVTEN, PTCAP_POWER_EVENT, "PwrEvtEn" },
	{ RTIT_CTL_FABRICEN, PTCAP_TRACE_TRANSPORT, "FabricEn" },
	{ RTIT_CTL_CR3FILTER, PTCAP_CR3_FILTER, "CR3Filter" },
	{ RTIT_CTL_TOPA, PTCAP_TOPA, "ToPA" },
	{ RTIT_CTL_MTCEN | RTIT_CTL_MTCFREQ_MASK, PTCAP_MTC, "MTCEn/MTCFreq" },
	{ RTIT_CTL_EVENTEN, PTCAP_EVENT_TRACE, "EventEn" },
	{ RTIT_CTL_DISTNT, PTCAP_TNT_DISABLE, "DisTNT" },
	{ RTIT_CTL_INJECTPSBPMI, PTCAP_PSB_PMI_PRESERVE, "InjectPsbPmiOnEnable" },
};

/* Why v may not be written to IA32_RTIT_CTL (33.2.8.2, Table 33-6), or false. */
static bool ctl_bad(const struct ptcaps *c, uint64_t v, struct strbuf *why)
{
	if (v & RTIT_CTL_RESERVED) {
		sb_printf(why, "reserved bits 0x%llx set (SDM 33.2.8.2)",
			  (unsigned long long)(v & RTIT_CTL_RESERVED));
		return true;
	}
	for (unsigned i = 0; i < sizeof(ctl_needs) / sizeof(ctl_needs[0]); i++) {
		if (!(v & ctl_needs[i].bits) || ptcaps_has(c, ctl_needs[i].cap))
			continue;
		sb_printf(why, "%s set without ", ctl_needs[i].what);
		ptcaps_bit_name(ctl_needs[i].cap, why);
		sb_puts(why, " (SDM 33.2.8.2)");
		return true;
	}
	for (unsigned i = 0; i < 4; i++) {
		unsigned cfg = (unsigned)((v & RTIT_CTL_ADDR_CFG_MASK(i)) >> RTIT_CTL_ADDR_CFG_SHIFT(i));
		if (cfg && i >= nranges(c)) {
			sb_printf(why, "ADDR%u_CFG=%u but this CPU has %u address ranges "
				       "(CPUID.(EAX=14H,ECX=1):EAX[2:0]; SDM 33.2.8.2)",
				  i, cfg, nranges(c));
			return true;
		}
		if (cfg > RTIT_ADDR_CFG_STOP) {
			sb_printf(why, "ADDR%u_CFG=%u is a reserved encoding (0..2; SDM 33.2.8.2)", i,
				  cfg);
			return true;
		}
	}
	unsigned f = (unsigned)((v & RTIT_CTL_MTCFREQ_MASK) >> RTIT_CTL_MTCFREQ_SHIFT);
	if ((f || (v & RTIT_CTL_MTCEN)) && !encoding_ok(c->mtc_periods, f)) {
		sb_printf(why, "MTCFreq=%u is not in CPUID.(EAX=14H,ECX=1):EAX[31:16]=0x%04x", f,
			  c->mtc_periods);
		return true;
	}
	unsigned t = (unsigned)((v & RTIT_CTL_CYCTHRESH_MASK) >> RTIT_CTL_CYCTHRESH_SHIFT);
	if ((t || (v & RTIT_CTL_CYCEN)) && !encoding_ok(c->cyc_thresholds, t)) {
		sb_printf(why, "CycThresh=%u is not in CPUID.(EAX=14H,ECX=1):EBX[15:0]=0x%04x", t,
			  c->cyc_thresholds);
		return true;
	}
	unsigned p = (unsigned)((v & RTIT_CTL_PSBFREQ_MASK) >> RTIT_CTL_PSBFREQ_SHIFT);
	if (p && !encoding_ok(c->psb_periods, p)) {
		sb_printf(why, "PSBFreq=%u is not in CPUID.(EAX=14H,ECX=1):EBX[31:16]=0x%04x", p,
			  c->psb_periods);
		return true;
	}
	if ((v & RTIT_CTL_TRACEEN) && !(v & (RTIT_CTL_TOPA | RTIT_CTL_FABRICEN)) &&
	    !c->single_range) {
		sb_puts(why, "TraceEn with single-range output (ToPA=0, FabricEn=0) but "
			     "CPUID.(EAX=14H,ECX=0):ECX[2]=0 (SDM 33.2.8.2)");
		return true;
	}
	if ((v & RTIT_CTL_TRACEEN) && !(v & RTIT_CTL_BRANCHEN) &&
	    (cpumodel_quirks(c->family, c->model) & CPUMODEL_QUIRK_BDM106)) {
		sb_puts(why, "TraceEn with BranchEn=0 on Broadwell (erratum BDM106)");
		return true;
	}
	return false;
}

bool ptunit_triggered(const struct ptunit *u)
{
	return tracing(u) && !(u->status & (RTIT_STATUS_ERROR | RTIT_STATUS_STOPPED));
}

static int operr(struct ptunit *u)
{
	u->status |= RTIT_STATUS_ERROR;
	u->status &= ~RTIT_STATUS_TRIGGEREN;
	return PTUNIT_OPERR;
}

uint64_t ptunit_topa_size(uint64_t e)
{
	return 4096ull << ((e & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT);
}

const char *ptunit_topa_entry_error(const struct ptcaps *c, uint64_t table, unsigned idx,
				    uint64_t e)
{
	const uint64_t reserved = TOPA_RESERVED_LOW | ~phys_limit(c);
	if (e & reserved)
		return "reserved bits set (ToPA error 1; bits at or above MAXPHYADDR included, "
		       "error 2c)";
	if (e & TOPA_END) {
		if (e & (TOPA_STOP | TOPA_INT))
			return "END with STOP or INT (ToPA error 4a)";
		if (idx == 0)
			return "END in entry 0 of a table (ToPA error 4b)";
		if (!c->topa_multi && (e & phys_limit(c) & ~0xfffull) != table)
			return "one output region only (CPUID.(EAX=14H,ECX=0):ECX[1]=0): entry 1's "
			       "END must point back to the table (ToPA error 4c.ii)";
		return 0;
	}
	if (!c->topa_multi && idx != 0)
		return "one output region only (CPUID.(EAX=14H,ECX=0):ECX[1]=0): entry 1 must be "
		       "END (ToPA error 4c.i)";
	if ((e & phys_limit(c) & ~0xfffull) & (ptunit_topa_size(e) - 1))
		return "region base not aligned to its size (ToPA error 2b)";
	return 0;
}

/* 33.2.7.1 "Single-Range Output Errors", checked at TraceEn 0 -> 1. */
static int enable_single(struct ptunit *u, const struct ptunit_mem *mem, struct strbuf *why)
{
	uint64_t msk = (u->mask & 0xffffffffull) | RTIT_MASK_LOWER;
	uint64_t off = u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
	if (msk & (msk + 1)) {
		sb_printf(why, "single-range output: the mask 0x%llx is not contiguous (SDM "
			       "33.2.7.1 \"Single-Range Output Errors\")",
			  (unsigned long long)msk);
		return operr(u);
	}
	if (u->base & msk) {
		sb_printf(why, "single-range output: the base 0x%llx has bits of the mask 0x%llx "
			       "set (not aligned to the size; SDM 33.2.7.1)",
			  (unsigned long long)u->base, (unsigned long long)msk);
		return operr(u);
	}
	if (off > msk) {
		sb_printf(why, "single-range output: OutputOffset 0x%llx is above the mask 0x%llx "
			       "(SDM 33.2.7.1)",
			  (unsigned long long)off, (unsigned long long)msk);
		return operr(u);
	}
	u->region_size = msk + 1;
	if (mem && mem->region)
		mem->region(mem->ctx, u->base, 0, u->base, msk + 1, off, 0);
	return PTUNIT_OK;
}

/*
 * The ToPA entry the output is at, checked as the processor reaches it
 * (33.2.7.2 "ToPA Errors"), END entries followed to the next table: 0 with
 * the output entry in *e and its region reported, or PTUNIT_OPERR. The
 * OutputOffset check applies to the first entry (start) only: later
 * entries begin at offset 0.
 */
static int reach(struct ptunit *u, const struct ptunit_mem *mem, bool start, uint64_t *e,
		 struct strbuf *why)
{
	const uint64_t addr_mask = phys_limit(&u->caps) & ~0xfffull;
	for (unsigned hops = 0; hops < 4; hops++) {
		unsigned idx = (unsigned)((u->mask & RTIT_MASK_TABLE_OFFSET_MASK) >>
					  RTIT_MASK_TABLE_OFFSET_SHIFT);
		uint64_t off = u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
		if (u->base & 0xf80) {
			sb_printf(why, "ToPA: the table base 0x%llx is not 4K aligned (ToPA error 2a)",
				  (unsigned long long)u->base);
			return operr(u);
		}
		if (!u->caps.topa_multi && idx > 1) {
			sb_printf(why, "ToPA: table offset at entry %u, but this CPU has one output "
				       "region (ToPA error 4c)", idx);
			return operr(u);
		}
		uint64_t ea = (u->base & ~0xfffull) + 8ull * idx;
		if (!mem || !mem->read64(mem->ctx, ea, e)) {
			sb_printf(why, "ToPA: entry %u of the table at 0x%llx (0x%llx) is not in memory",
				  idx, (unsigned long long)u->base, (unsigned long long)ea);
			return operr(u);
		}
		u->entries++;
		const char *bad = ptunit_topa_entry_error(&u->caps, u->base & ~0xfffull, idx, *e);
		if (bad) {
			sb_printf(why, "ToPA: entry %u of the table at 0x%llx = 0x%llx: %s (SDM "
				       "33.2.7.2)",
				  idx, (unsigned long long)u->base, (unsigned long long)*e, bad);
			return operr(u);
		}
		if (*e & TOPA_END) {
			/* to the next table, entry 0, offset 0 */
			u->base = *e & addr_mask;
			u->mask = RTIT_MASK_LOWER;
			start = false;
			continue;
		}
		uint64_t size = ptunit_topa_size(*e);
		if (start && off >= size) {
			sb_printf(why, "ToPA: OutputOffset 0x%llx is not below the size %llu of the "
				       "region of entry %u (ToPA error 3)",
				  (unsigned long long)off, (unsigned long long)size, idx);
			return operr(u);
		}
		u->region_size = size;
		u->entry = *e;
		if (mem->region)
			mem->region(mem->ctx, u->base & ~0xfffull, idx, *e & addr_mask, size, off, *e);
		return PTUNIT_OK;
	}
	/* END -> a table whose entry is END again is error 4b: not reached */
	sb_puts(why, "ToPA: END entries lead nowhere");
	return operr(u);
}

static int enable(struct ptunit *u, const struct ptunit_mem *mem, struct strbuf *why)
{
	if (u->status & (RTIT_STATUS_ERROR | RTIT_STATUS_STOPPED)) {
		sb_printf(why, "TraceEn set while IA32_RTIT_STATUS.%s=1: TriggerEn stays 0, nothing "
			       "is traced (SDM 33.2.6.2; clear STATUS before enabling, 33.3.2.1)",
			  (u->status & RTIT_STATUS_ERROR) ? "Error" : "Stopped");
		return PTUNIT_NO_TRIGGER;
	}
	u->status |= RTIT_STATUS_TRIGGEREN;
	if (u->ctl & RTIT_CTL_FABRICEN)
		return PTUNIT_OK;
	uint64_t e;
	if (u->ctl & RTIT_CTL_TOPA)
		return reach(u, mem, true, &e, why);
	return enable_single(u, mem, why);
}

int ptunit_wrmsr(struct ptunit *u, uint32_t msr, uint64_t v, const struct ptunit_mem *mem,
		 struct strbuf *why)
{
	const struct ptcaps *c = &u->caps;
	const char *absent = ptunit_msr_absent(c, msr);
	const char *name = ptunit_msr_name(msr);
	if (absent) {
		sb_printf(why, "WRMSR 0x%x=0x%llx: %s", msr, (unsigned long long)v, absent);
		return PTUNIT_GP;
	}
	if (msr == MSR_IA32_RTIT_CTL) {
		size_t at = why->len;
		sb_printf(why, "WRMSR %s=0x%llx: ", name, (unsigned long long)v);
		if (ctl_bad(c, v, why))
			return PTUNIT_GP;
		/* 33.2.8.3: while TraceEn=1 only the same value or one clearing TraceEn */
		if (tracing(u) && v != u->ctl && (v & RTIT_CTL_TRACEEN)) {
			sb_printf(why, "changes bits while TraceEn=1 (was 0x%llx; SDM 33.2.8.3)",
				  (unsigned long long)u->ctl);
			return PTUNIT_GP;
		}
		why->len = at;
		if (why->cap)
			why->buf[at] = 0;
		bool was = tracing(u);
		u->ctl = v;
		if (!was && (v & RTIT_CTL_TRACEEN))
			return enable(u, mem, why);
		if (was && !(v & RTIT_CTL_TRACEEN))
			u->status &= ~RTIT_STATUS_TRIGGEREN;
		return PTUNIT_OK;
	}
	/* 33.2.8.1: every other configuration MSR #GPs while TraceEn=1 */
	if (tracing(u)) {
		sb_printf(why, "WRMSR %s=0x%llx while TraceEn=1 (SDM 33.2.8)", name,
			  (unsigned long long)v);
		return PTUNIT_GP;
	}
	switch (msr) {
	case MSR_IA32_RTIT_STATUS: {
		uint64_t res = RTIT_STATUS_RESERVED;
		if (!c->psb_pmi_preserve)
			res |= RTIT_STATUS_PENDPSB | RTIT_STATUS_PENDTOPAPMI;
		if (!c->psb_cyc)
			res |= RTIT_STATUS_BYTECNT_MASK;
		if (v & res) {
			sb_printf(why, "WRMSR %s=0x%llx: reserved bits 0x%llx (SDM 33.2.8.4)", name,
				  (unsigned long long)v, (unsigned long long)(v & res));
			return PTUNIT_GP;
		}
		/* FilterEn, ContextEn, TriggerEn are the processor's: ignored */
		u->status = (u->status & RTIT_STATUS_RO) | (v & ~RTIT_STATUS_RO);
		return PTUNIT_OK;
	}
	case MSR_IA32_RTIT_OUTPUT_BASE:
		if ((v & RTIT_BASE_RESERVED_LOW) || (v & ~phys_limit(c))) {
			sb_printf(why, "WRMSR %s=0x%llx: reserved bits (6:0, or at or above "
				       "MAXPHYADDR %u; SDM 33.2.8.7)",
				  name, (unsigned long long)v, c->maxphyaddr);
			return PTUNIT_GP;
		}
		u->base = v;
		return PTUNIT_OK;
	case MSR_IA32_RTIT_OUTPUT_MASK_PTRS:
		u->mask = v | RTIT_MASK_LOWER; /* bits 6:0 read as 1 */
		return PTUNIT_OK;
	case MSR_IA32_RTIT_CR3_MATCH:
		if (v & RTIT_CR3_RESERVED) {
			sb_printf(why, "WRMSR %s=0x%llx: bits 4:0 are reserved (SDM 33.2.8.6)", name,
				  (unsigned long long)v);
			return PTUNIT_GP;
		}
		u->cr3 = v;
		return PTUNIT_OK;
	default:
		if (!canonical48(v)) {
			sb_printf(why, "WRMSR %s=0x%llx: not a canonical address (SDM 33.2.8.5)", name,
				  (unsigned long long)v);
			return PTUNIT_GP;
		}
		if (msr & 1)
			u->addr_b[(msr - 0x580) / 2] = v;
		else
			u->addr_a[(msr - 0x580) / 2] = v;
		return PTUNIT_OK;
	}
}

/* ---- output ------------------------------------------------------------- */

static size_t emit_single(struct ptunit *u, const struct ptunit_mem *mem, const uint8_t *b,
			  size_t n)
{
	uint64_t msk = (u->mask & 0xffffffffull) | RTIT_MASK_LOWER;
	uint64_t off = u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
	size_t done = 0;
	while (done < n) {
		/* 33.2.7.1: trace_store_phys_addr = (base & ~mask) + (offset & mask) */
		uint64_t room = msk + 1 - (off & msk);
		size_t k = n - done < room ? n - done : (size_t)room;
		mem->write(mem->ctx, (u->base & ~msk) + (off & msk), b + done, k);
		done += k;
		off = (off + k) & msk;
		if (!(off & msk) && mem->region && done < n)
			mem->region(mem->ctx, u->base, 0, u->base & ~msk, msk + 1, 0, 0);
	}
	u->mask = (off << RTIT_MASK_OUTPUT_OFFSET_SHIFT) | msk;
	return done;
}

static size_t emit_topa(struct ptunit *u, const struct ptunit_mem *mem, const uint8_t *b,
			size_t n, struct strbuf *why)
{
	const uint64_t addr_mask = phys_limit(&u->caps) & ~0xfffull;
	size_t done = 0;
	/* the entry the output is at, as read and checked when the output
	 * reached it: the processor keeps it, memory is read again only for
	 * the next one */
	uint64_t e = u->entry;
	unsigned idx = (unsigned)((u->mask & RTIT_MASK_TABLE_OFFSET_MASK) >>
				  RTIT_MASK_TABLE_OFFSET_SHIFT);
	while (done < n) {
		uint64_t off = u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
		uint64_t size = ptunit_topa_size(e);
		uint64_t room = size - off;
		size_t k = n - done < room ? n - done : (size_t)room;
		mem->write(mem->ctx, (e & addr_mask) + off, b + done, k);
		done += k;
		off += k;
		u->mask = (u->mask & 0xffffffffull) | (off << RTIT_MASK_OUTPUT_OFFSET_SHIFT);
		if (off < size)
			break;
		if (e & TOPA_INT)
			u->pmis++; /* a PMI (33.2.7.2 "ToPA PMI"); after STOP if both */
		if (e & TOPA_STOP) {
			/* 33.2.7.2 "ToPA STOP": Stopped, the offset left at size - 1 */
			u->status |= RTIT_STATUS_STOPPED;
			u->status &= ~RTIT_STATUS_TRIGGEREN;
			u->mask = (u->mask & 0xffffffffull) |
				  ((size - 1) << RTIT_MASK_OUTPUT_OFFSET_SHIFT);
			break;
		}
		/* the next entry; past offset 0FFFFF8H back to entry 0 of this table */
		idx = idx + 1 > TOPA_MAX_ENTRY_INDEX ? 0 : idx + 1;
		u->mask = ((uint64_t)idx << RTIT_MASK_TABLE_OFFSET_SHIFT) | RTIT_MASK_LOWER;
		if (reach(u, mem, false, &e, why) != PTUNIT_OK)
			break;
		idx = (unsigned)((u->mask & RTIT_MASK_TABLE_OFFSET_MASK) >>
				 RTIT_MASK_TABLE_OFFSET_SHIFT);
	}
	return done;
}

uint64_t ptunit_room(const struct ptunit *u)
{
	uint64_t off = u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
	if (!ptunit_triggered(u) || !(u->ctl & RTIT_CTL_TOPA) || (u->ctl & RTIT_CTL_FABRICEN) ||
	    off >= u->region_size)
		return 0;
	return u->region_size - off;
}

size_t ptunit_emit(struct ptunit *u, const struct ptunit_mem *mem, const uint8_t *b, size_t n,
		   struct strbuf *why)
{
	if (!ptunit_triggered(u) || (u->ctl & RTIT_CTL_FABRICEN))
		return 0;
	size_t k = (u->ctl & RTIT_CTL_TOPA) ? emit_topa(u, mem, b, n, why)
					   : emit_single(u, mem, b, n);
	if (u->caps.psb_cyc) {
		uint64_t cnt = ((u->status & RTIT_STATUS_BYTECNT_MASK) >> RTIT_STATUS_BYTECNT_SHIFT) + k;
		u->status = (u->status & ~RTIT_STATUS_BYTECNT_MASK) |
			    ((cnt << RTIT_STATUS_BYTECNT_SHIFT) & RTIT_STATUS_BYTECNT_MASK);
	}
	return k;
}
