/* Intel PT MSR model (SDM 33.2.8, 33.2.7, 33.3.10); see pt_model.h. */
#include "tests/lib/pt_model.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/pt_msr.h"
#include "core/pt_config.h"

static int gp(struct ptmodel *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gp(struct ptmodel *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->last_gp, sizeof(m->last_gp), fmt, ap);
	va_end(ap);
	m->gp++;
	return CPU_FAULT_GP;
}

static void operr(struct ptmodel *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void operr(struct ptmodel *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->last_operr, sizeof(m->last_operr), fmt, ap);
	va_end(ap);
	m->operr++;
	m->status |= RTIT_STATUS_ERROR;
	m->status &= ~RTIT_STATUS_TRIGGEREN;
}

static bool pt_present(const struct ptmodel *m) { return m->caps.absent == PTCAPS_PRESENT; }
static bool tracing(const struct ptmodel *m) { return m->ctl & RTIT_CTL_TRACEEN; }

static unsigned nranges(const struct ptmodel *m)
{
	return m->caps.ip_filter ? m->caps.addr_ranges : 0;
}

static uint64_t phys_limit(const struct ptmodel *m)
{
	return m->caps.maxphyaddr >= 64 ? ~0ull : (1ull << m->caps.maxphyaddr) - 1;
}

static bool canonical48(uint64_t a)
{
	uint64_t top = a >> 47;
	return top == 0 || top == 0x1ffff;
}

/* Which MSRs exist on this CPU (33.2.8.1, Table 33-11). */
static const char *msr_absent(const struct ptmodel *m, uint32_t msr)
{
	if (msr != MSR_IA32_RTIT_CTL && msr != MSR_IA32_RTIT_STATUS &&
	    msr != MSR_IA32_RTIT_OUTPUT_BASE && msr != MSR_IA32_RTIT_OUTPUT_MASK_PTRS &&
	    msr != MSR_IA32_RTIT_CR3_MATCH && (msr < 0x580 || msr > 0x587))
		return "MSR not modelled (not an Intel PT MSR)";
	if (!pt_present(m))
		return "Intel PT not enumerated (CPUID.(7,0):EBX[25])";
	if ((msr == MSR_IA32_RTIT_OUTPUT_BASE || msr == MSR_IA32_RTIT_OUTPUT_MASK_PTRS) &&
	    !m->caps.topa && !m->caps.single_range)
		return "no ToPA or single-range output (CPUID.(14H,0):ECX[0,2])";
	if (msr == MSR_IA32_RTIT_CR3_MATCH && !m->caps.cr3_filter)
		return "no CR3 filtering (CPUID.(14H,0):EBX[0])";
	if (msr >= 0x580 && msr <= 0x587 && (msr - 0x580) / 2 >= nranges(m))
		return "address range not enumerated (CPUID.(14H,1):EAX[2:0])";
	return NULL;
}

static int rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
	struct ptmodel *m = ctx;
	m->rdmsr_count++;
	const char *why = msr_absent(m, msr);
	*v = 0;
	if (why)
		return gp(m, "RDMSR 0x%x: %s", msr, why);
	switch (msr) {
	case MSR_IA32_RTIT_CTL: *v = m->ctl; break;
	case MSR_IA32_RTIT_STATUS: *v = m->status; break;
	case MSR_IA32_RTIT_OUTPUT_BASE: *v = m->base; break;
	case MSR_IA32_RTIT_OUTPUT_MASK_PTRS: *v = m->mask | RTIT_MASK_LOWER; break;
	case MSR_IA32_RTIT_CR3_MATCH: *v = m->cr3; break;
	default:
		*v = (msr & 1) ? m->addr_b[(msr - 0x580) / 2] : m->addr_a[(msr - 0x580) / 2];
		break;
	}
	return 0;
}

static bool encoding_ok(uint16_t bitmap, unsigned v) { return bitmap & (1u << v); }

/* The reason a value may not be written to IA32_RTIT_CTL, or NULL. */
static const char *ctl_bad(const struct ptmodel *m, uint64_t v, char *buf, size_t n)
{
	const struct ptcaps *c = &m->caps;
	if (v & RTIT_CTL_RESERVED)
		return "reserved bit set";
	if ((v & RTIT_CTL_INJECTPSBPMI) && !c->psb_pmi_preserve)
		return "InjectPsbPmiOnEnable without CPUID.(14H,0):EBX[6]";
	if ((v & (RTIT_CTL_CYCEN | RTIT_CTL_CYCTHRESH_MASK | RTIT_CTL_PSBFREQ_MASK)) && !c->psb_cyc)
		return "CYCEn/CycThresh/PSBFreq without CPUID.(14H,0):EBX[1]";
	if ((v & (RTIT_CTL_PTWEN | RTIT_CTL_FUPONPTW)) && !c->ptwrite)
		return "PTWEn/FUPonPTW without CPUID.(14H,0):EBX[4]";
	if ((v & RTIT_CTL_PWREVTEN) && !c->power_event)
		return "PwrEvtEn without CPUID.(14H,0):EBX[5]";
	if ((v & RTIT_CTL_FABRICEN) && !c->trace_transport)
		return "FabricEn without CPUID.(14H,0):ECX[3]";
	if ((v & RTIT_CTL_CR3FILTER) && !c->cr3_filter)
		return "CR3Filter without CPUID.(14H,0):EBX[0]";
	if ((v & RTIT_CTL_TOPA) && !c->topa)
		return "ToPA without CPUID.(14H,0):ECX[0]";
	if ((v & (RTIT_CTL_MTCEN | RTIT_CTL_MTCFREQ_MASK)) && !c->mtc)
		return "MTCEn/MTCFreq without CPUID.(14H,0):EBX[3]";
	if ((v & RTIT_CTL_EVENTEN) && !c->event_trace)
		return "EventEn without CPUID.(14H,0):EBX[7]";
	if ((v & RTIT_CTL_DISTNT) && !c->tnt_disable)
		return "DisTNT without CPUID.(14H,0):EBX[8]";
	for (unsigned i = 0; i < 4; i++) {
		unsigned cfg = (unsigned)((v & RTIT_CTL_ADDR_CFG_MASK(i)) >> RTIT_CTL_ADDR_CFG_SHIFT(i));
		if (cfg && i >= nranges(m)) {
			snprintf(buf, n, "ADDR%u_CFG set but only %u ranges", i, nranges(m));
			return buf;
		}
		if (cfg > RTIT_ADDR_CFG_STOP) {
			snprintf(buf, n, "ADDR%u_CFG=%u is a reserved encoding", i, cfg);
			return buf;
		}
	}
	unsigned f = (unsigned)((v & RTIT_CTL_MTCFREQ_MASK) >> RTIT_CTL_MTCFREQ_SHIFT);
	if (c->mtc && (f || (v & RTIT_CTL_MTCEN)) && !encoding_ok(c->mtc_periods, f)) {
		snprintf(buf, n, "MTCFreq=%u not in bitmap 0x%04x", f, c->mtc_periods);
		return buf;
	}
	unsigned t = (unsigned)((v & RTIT_CTL_CYCTHRESH_MASK) >> RTIT_CTL_CYCTHRESH_SHIFT);
	if (c->psb_cyc && (t || (v & RTIT_CTL_CYCEN)) && !encoding_ok(c->cyc_thresholds, t)) {
		snprintf(buf, n, "CycThresh=%u not in bitmap 0x%04x", t, c->cyc_thresholds);
		return buf;
	}
	unsigned p = (unsigned)((v & RTIT_CTL_PSBFREQ_MASK) >> RTIT_CTL_PSBFREQ_SHIFT);
	if (c->psb_cyc && p && !encoding_ok(c->psb_periods, p)) {
		snprintf(buf, n, "PSBFreq=%u not in bitmap 0x%04x", p, c->psb_periods);
		return buf;
	}
	if ((v & RTIT_CTL_TRACEEN) && !(v & (RTIT_CTL_TOPA | RTIT_CTL_FABRICEN)) && !c->single_range)
		return "TraceEn with single-range output, CPUID.(14H,0):ECX[2]=0";
	if ((v & RTIT_CTL_TRACEEN) && !(v & RTIT_CTL_BRANCHEN) && ptcfg_erratum_bdm106(c))
		return "TraceEn with BranchEn=0 on Broadwell (erratum BDM106)";
	return NULL;
}

/* ---- operational errors (checked at TraceEn 0 -> 1) --------------------- */

static void check_single(struct ptmodel *m)
{
	uint64_t msk = (m->mask & 0xffffffffull) | RTIT_MASK_LOWER;
	uint64_t off = m->mask >> 32;
	/* 33.2.7.1 "Single-Range Output Errors" */
	if (msk & (msk + 1))
		return operr(m, "single-range: mask 0x%llx is not contiguous", (unsigned long long)msk);
	if (m->base & msk)
		return operr(m, "single-range: base 0x%llx overlaps mask 0x%llx",
			     (unsigned long long)m->base, (unsigned long long)msk);
	if (off > msk)
		return operr(m, "single-range: OutputOffset 0x%llx > mask 0x%llx",
			     (unsigned long long)off, (unsigned long long)msk);
	if (!simmem_find(m->mem, m->base, msk + 1))
		return operr(m, "single-range: [0x%llx, +0x%llx) is not allocated memory",
			     (unsigned long long)m->base, (unsigned long long)(msk + 1));
}

struct span {
	uint64_t a, n;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a;
}

/* Trace output landing on a ToPA table or on another region corrupts it. */
static void check_overlaps(struct ptmodel *m, struct span *sp, unsigned n)
{
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (unsigned i = 1; i < n; i++)
		if (sp[i].a < sp[i - 1].a + sp[i - 1].n) {
			m->hazards++;
			snprintf(m->last_hazard, sizeof(m->last_hazard),
				 "ToPA: [0x%llx,+0x%llx) overlaps [0x%llx,+0x%llx)",
				 (unsigned long long)sp[i - 1].a, (unsigned long long)sp[i - 1].n,
				 (unsigned long long)sp[i].a, (unsigned long long)sp[i].n);
			return;
		}
}

static void check_topa(struct ptmodel *m)
{
	static struct span sp[1 << 14];
	unsigned nsp = 0;
	const bool multi = m->caps.topa_multi;
	const uint64_t addr_mask = phys_limit(m) & ~0xfffull;
	const uint64_t reserved = TOPA_RESERVED_LOW | ~(phys_limit(m));
	uint64_t table = m->base;
	unsigned idx = (unsigned)((m->mask & RTIT_MASK_TABLE_OFFSET_MASK) >> RTIT_MASK_TABLE_OFFSET_SHIFT);
	uint64_t off = m->mask >> 32;

	/* 33.2.7.2 ToPA error 2a: table base not 4K aligned. */
	if (table & 0xf80)
		return operr(m, "ToPA: table base 0x%llx not 4K aligned", (unsigned long long)table);
	if (!multi && idx > 1)
		return operr(m, "ToPA (single entry): table offset at entry %u", idx);

	const uint64_t start_table = table;
	const unsigned start_idx = idx;
	bool first = true;
	for (unsigned steps = 0; steps < (1u << 20); steps++) {
		uint64_t ea = table + 8ull * idx;
		if (!simmem_find(m->mem, ea, 8))
			return operr(m, "ToPA: entry at 0x%llx is not in allocated memory",
				     (unsigned long long)ea);
		uint64_t e = simmem_read64(m->mem, ea);
		if ((idx == 0 || steps == 0) && nsp < (1u << 14))
			sp[nsp++] = (struct span){ table, 4096 };
		if (e & reserved)
			return operr(m, "ToPA: entry %u of table 0x%llx = 0x%llx: reserved bits set",
				     idx, (unsigned long long)table, (unsigned long long)e);
		if (e & TOPA_END) {
			if (e & (TOPA_STOP | TOPA_INT))
				return operr(m, "ToPA: END entry with STOP/INT (table 0x%llx entry %u)",
					     (unsigned long long)table, idx);
			if (idx == 0)
				return operr(m, "ToPA: END in entry 0 of table 0x%llx",
					     (unsigned long long)table);
			uint64_t next = e & addr_mask;
			if (!multi && next != table)
				return operr(m, "ToPA (single entry): END points to 0x%llx, not back to "
						"the table 0x%llx",
					     (unsigned long long)next, (unsigned long long)table);
			table = next;
			idx = 0;
			if (first)
				off = 0;
		} else {
			if (!multi && idx != 0)
				return operr(m, "ToPA (single entry): entry %u of table 0x%llx is not END",
					     idx, (unsigned long long)table);
			uint64_t size = 4096ull << ((e & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT);
			uint64_t rb = e & addr_mask;
			if (rb & (size - 1))
				return operr(m, "ToPA: region 0x%llx not aligned to its size %llu",
					     (unsigned long long)rb, (unsigned long long)size);
			if (!simmem_find(m->mem, rb, size))
				return operr(m, "ToPA: region [0x%llx, +%llu) is not allocated memory",
					     (unsigned long long)rb, (unsigned long long)size);
			if (first && off >= size)
				return operr(m, "ToPA: OutputOffset %llu >= region size %llu",
					     (unsigned long long)off, (unsigned long long)size);
			first = false;
			if (nsp < (1u << 14))
				sp[nsp++] = (struct span){ rb, size };
			if (e & TOPA_STOP)
				return check_overlaps(m, sp, nsp); /* output ends here */
			idx = idx + 1 > TOPA_MAX_ENTRY_INDEX ? 0 : idx + 1;
		}
		if (table == start_table && idx == start_idx)
			return check_overlaps(m, sp, nsp); /* circular */
	}
	operr(m, "ToPA: table chain from 0x%llx neither ends nor returns",
	      (unsigned long long)start_table);
}

static void enable(struct ptmodel *m)
{
	m->enables++;
	if (m->status & (RTIT_STATUS_ERROR | RTIT_STATUS_STOPPED)) {
		m->stale_status++; /* 33.3.2.1: software should have cleared STATUS */
		return;
	}
	m->status |= RTIT_STATUS_TRIGGEREN;
	if (m->ctl & RTIT_CTL_FABRICEN)
		return;
	if (m->ctl & RTIT_CTL_TOPA)
		check_topa(m);
	else
		check_single(m);
}

static int wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
	struct ptmodel *m = ctx;
	m->wrmsr_count++;
	const char *why = msr_absent(m, msr);
	if (why)
		return gp(m, "WRMSR 0x%x=0x%llx: %s", msr, (unsigned long long)v, why);
	if (msr == MSR_IA32_RTIT_CTL) {
		char buf[120];
		const char *bad = ctl_bad(m, v, buf, sizeof(buf));
		if (bad)
			return gp(m, "WRMSR IA32_RTIT_CTL=0x%llx: %s", (unsigned long long)v, bad);
		/* 33.2.8.3: while TraceEn=1 only the same value or a write clearing TraceEn. */
		if (tracing(m) && v != m->ctl && (v & RTIT_CTL_TRACEEN))
			return gp(m, "WRMSR IA32_RTIT_CTL=0x%llx changes bits while TraceEn=1 "
				     "(was 0x%llx)",
				  (unsigned long long)v, (unsigned long long)m->ctl);
		bool was = tracing(m);
		m->ctl = v;
		if (!was && (v & RTIT_CTL_TRACEEN))
			enable(m);
		else if (was && !(v & RTIT_CTL_TRACEEN))
			m->status &= ~RTIT_STATUS_TRIGGEREN;
		return 0;
	}
	/* 33.2.8.1: every other configuration MSR #GPs while TraceEn=1. */
	if (tracing(m))
		return gp(m, "WRMSR 0x%x while TraceEn=1", msr);
	switch (msr) {
	case MSR_IA32_RTIT_STATUS: {
		uint64_t res = RTIT_STATUS_RESERVED;
		if (!m->caps.psb_pmi_preserve)
			res |= RTIT_STATUS_PENDPSB | RTIT_STATUS_PENDTOPAPMI;
		if (!m->caps.psb_cyc)
			res |= RTIT_STATUS_BYTECNT_MASK;
		if (v & res)
			return gp(m, "WRMSR IA32_RTIT_STATUS=0x%llx: reserved bits",
				  (unsigned long long)v);
		m->status = (m->status & RTIT_STATUS_RO) | (v & ~RTIT_STATUS_RO);
		return 0;
	}
	case MSR_IA32_RTIT_OUTPUT_BASE:
		if ((v & RTIT_BASE_RESERVED_LOW) || (v & ~phys_limit(m)))
			return gp(m, "WRMSR IA32_RTIT_OUTPUT_BASE=0x%llx: reserved bits (6:0 or >= "
				     "MAXPHYADDR %u)",
				  (unsigned long long)v, m->caps.maxphyaddr);
		m->base = v;
		return 0;
	case MSR_IA32_RTIT_OUTPUT_MASK_PTRS:
		m->mask = v | RTIT_MASK_LOWER; /* bits 6:0 forced to 1 */
		return 0;
	case MSR_IA32_RTIT_CR3_MATCH:
		if (v & RTIT_CR3_RESERVED)
			return gp(m, "WRMSR IA32_RTIT_CR3_MATCH=0x%llx: bits 4:0 reserved",
				  (unsigned long long)v);
		m->cr3 = v;
		return 0;
	default:
		if (!canonical48(v))
			return gp(m, "WRMSR 0x%x=0x%llx: not canonical", msr, (unsigned long long)v);
		if (msr & 1)
			m->addr_b[(msr - 0x580) / 2] = v;
		else
			m->addr_a[(msr - 0x580) / 2] = v;
		return 0;
	}
}

static void cpuid(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	struct ptmodel *m = ctx;
	if (m->cpuid)
		cpuid_set_get(m->cpuid, leaf, subleaf, r);
	else
		r[0] = r[1] = r[2] = r[3] = 0;
}

static uint64_t rdtsc(void *ctx)
{
	struct ptmodel *m = ctx;
	return m->tsc += 1000;
}

void ptmodel_init(struct ptmodel *m, const struct ptcaps *caps, const struct cpuid_set *cpuid_set,
		  struct simmem *mem)
{
	memset(m, 0, sizeof(*m));
	m->caps = *caps;
	m->cpuid = cpuid_set;
	m->mem = mem;
	m->mask = RTIT_MASK_LOWER;
	m->ops = (struct cpu_ops){
		.cpuid = cpuid, .rdmsr = rdmsr, .wrmsr = wrmsr, .rdtsc = rdtsc, .ctx = m,
	};
}

void ptmodel_clear_counts(struct ptmodel *m)
{
	m->gp = m->operr = m->stale_status = m->enables = m->pmis = m->hazards = 0;
	m->rdmsr_count = m->wrmsr_count = 0;
	m->last_gp[0] = m->last_operr[0] = m->last_hazard[0] = 0;
}

void ptmodel_warm_reset(struct ptmodel *m)
{
	/* 33.2.8.1, 33.3.4, Table 33-11 EBX[2] */
	m->ctl &= ~RTIT_CTL_TRACEEN;
	if (m->caps.ip_filter)
		return;
	m->ctl = m->status = m->base = m->mask = m->cr3 = 0;
	for (unsigned i = 0; i < 8; i++)
		m->addr_a[i] = m->addr_b[i] = 0;
}

/* ---- packet output ------------------------------------------------------ */

static size_t emit_single(struct ptmodel *m, const uint8_t *b, size_t n)
{
	uint64_t msk = (m->mask & 0xffffffffull) | RTIT_MASK_LOWER;
	uint64_t off = m->mask >> 32;
	size_t done = 0;
	while (done < n) {
		/* 33.2.7.1: trace_store_phys_addr = (base & ~mask) + (offset & mask) */
		uint64_t room = msk + 1 - (off & msk);
		size_t k = n - done < room ? n - done : (size_t)room;
		simmem_write(m->mem, (m->base & ~msk) + (off & msk), b + done, k);
		done += k;
		off = (off + k) & msk;
	}
	m->mask = (off << 32) | msk;
	return done;
}

static size_t emit_topa(struct ptmodel *m, const uint8_t *b, size_t n)
{
	const uint64_t addr_mask = phys_limit(m) & ~0xfffull;
	unsigned idx = (unsigned)((m->mask & RTIT_MASK_TABLE_OFFSET_MASK) >> RTIT_MASK_TABLE_OFFSET_SHIFT);
	uint64_t off = m->mask >> 32;
	size_t done = 0;
	unsigned guard = 0;
	while (done < n && guard++ < (1u << 22)) {
		uint64_t e = simmem_read64(m->mem, m->base + 8ull * idx);
		if (e & TOPA_END) {
			m->base = e & addr_mask;
			idx = 0;
			off = 0;
			continue;
		}
		uint64_t size = 4096ull << ((e & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT);
		uint64_t room = size - off;
		size_t k = n - done < room ? n - done : (size_t)room;
		simmem_write(m->mem, (e & addr_mask) + off, b + done, k);
		done += k;
		off += k;
		if (off == size) {
			if (e & TOPA_INT)
				m->pmis++;
			if (e & TOPA_STOP) {
				/* 33.2.7.2 "ToPA STOP": Stopped, offset left at size - 1. */
				m->status |= RTIT_STATUS_STOPPED;
				m->status &= ~RTIT_STATUS_TRIGGEREN;
				off = size - 1;
				break;
			}
			idx = idx + 1 > TOPA_MAX_ENTRY_INDEX ? 0 : idx + 1;
			off = 0;
		}
	}
	m->mask = (off << 32) | ((uint64_t)idx << RTIT_MASK_TABLE_OFFSET_SHIFT) | RTIT_MASK_LOWER;
	return done;
}

size_t ptmodel_emit(struct ptmodel *m, const uint8_t *bytes, size_t n)
{
	if (!tracing(m) || (m->status & (RTIT_STATUS_ERROR | RTIT_STATUS_STOPPED)))
		return 0;
	size_t k = (m->ctl & RTIT_CTL_TOPA) ? emit_topa(m, bytes, n) : emit_single(m, bytes, n);
	uint64_t cnt = ((m->status & RTIT_STATUS_BYTECNT_MASK) >> RTIT_STATUS_BYTECNT_SHIFT) + k;
	if (m->caps.psb_cyc)
		m->status = (m->status & ~RTIT_STATUS_BYTECNT_MASK) |
			    ((cnt << RTIT_STATUS_BYTECNT_SHIFT) & RTIT_STATUS_BYTECNT_MASK);
	return k;
}
