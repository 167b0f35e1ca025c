/* Intel PT MSR model (SDM 33.2.8, 33.2.7, 33.3.10); see pt_model.h. */
#include "tests/lib/pt_model.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/pt_msr.h"
#include "core/pt_config.h"
#include "core/strbuf.h"

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
	m->u.status |= RTIT_STATUS_ERROR;
	m->u.status &= ~RTIT_STATUS_TRIGGEREN;
}

static uint64_t phys_limit(const struct ptmodel *m)
{
	return m->caps.maxphyaddr >= 64 ? ~0ull : (1ull << m->caps.maxphyaddr) - 1;
}

/* core/pt_unit.c's memory callbacks over the simulated memory */
static bool mem_read64(void *ctx, uint64_t phys, uint64_t *v)
{
	struct ptmodel *m = ctx;
	if (!simmem_find(m->mem, phys, 8))
		return false;
	*v = simmem_read64(m->mem, phys);
	return true;
}

static void mem_write(void *ctx, uint64_t phys, const uint8_t *b, size_t n)
{
	simmem_write(((struct ptmodel *)ctx)->mem, phys, b, n);
}

static const struct ptunit_mem *unit_mem(struct ptmodel *m)
{
	m->umem = (struct ptunit_mem){ mem_read64, mem_write, NULL, m };
	return &m->umem;
}

static int rdmsr(void *ctx, uint32_t msr, uint64_t *v)
{
	struct ptmodel *m = ctx;
	m->rdmsr_count++;
	char why[200];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	if (ptunit_rdmsr(&m->u, msr, v, &sb) == PTUNIT_GP)
		return gp(m, "%s", why);
	return 0;
}

/* ---- operational errors (checked at TraceEn 0 -> 1) --------------------- */

/* Beyond the SDM's rules (core/pt_unit.c): the range must be memory. */
static void check_single(struct ptmodel *m)
{
	uint64_t msk = (m->u.mask & 0xffffffffull) | RTIT_MASK_LOWER;
	if (!simmem_find(m->mem, m->u.base, msk + 1))
		return operr(m, "single-range: [0x%llx, +0x%llx) is not allocated memory",
			     (unsigned long long)m->u.base, (unsigned long long)(msk + 1));
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

/*
 * The whole chain at TraceEn 0 -> 1, stricter than a CPU (which checks an
 * entry when it reaches it, core/pt_unit.c): every entry by the same rules
 * (ptunit_topa_entry_error), and beyond them the memory each table and
 * region occupies, overlaps, and a chain that neither ends nor comes back.
 */
static void check_topa(struct ptmodel *m)
{
	static struct span sp[1 << 14];
	unsigned nsp = 0;
	const uint64_t addr_mask = phys_limit(m) & ~0xfffull;
	uint64_t table = m->u.base & ~0xfffull;
	unsigned idx = (unsigned)((m->u.mask & RTIT_MASK_TABLE_OFFSET_MASK) >>
				  RTIT_MASK_TABLE_OFFSET_SHIFT);
	if (m->u.base & 0xf80)
		return; /* the unit said so */
	const uint64_t start_table = table;
	const unsigned start_idx = idx;
	for (unsigned steps = 0; steps < (1u << 20); steps++) {
		uint64_t ea = table + 8ull * idx;
		if (!simmem_find(m->mem, ea, 8))
			return operr(m, "ToPA: entry at 0x%llx is not in allocated memory",
				     (unsigned long long)ea);
		uint64_t e = simmem_read64(m->mem, ea);
		if ((idx == 0 || steps == 0) && nsp < (1u << 14))
			sp[nsp++] = (struct span){ table, 4096 };
		const char *bad = ptunit_topa_entry_error(&m->caps, table, idx, e);
		if (bad)
			return operr(m, "ToPA: entry %u of table 0x%llx = 0x%llx: %s", idx,
				     (unsigned long long)table, (unsigned long long)e, bad);
		if (e & TOPA_END) {
			table = e & addr_mask;
			idx = 0;
		} else {
			uint64_t size = ptunit_topa_size(e);
			uint64_t rb = e & addr_mask;
			if (!simmem_find(m->mem, rb, size))
				return operr(m, "ToPA: region [0x%llx, +%llu) is not allocated memory",
					     (unsigned long long)rb, (unsigned long long)size);
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

static size_t emit_now(struct ptmodel *m, const uint8_t *bytes, size_t n);

static int wrmsr(void *ctx, uint32_t msr, uint64_t v)
{
	struct ptmodel *m = ctx;
	m->wrmsr_count++;
	char why[300];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	bool was = m->u.ctl & RTIT_CTL_TRACEEN;
	if (msr == MSR_IA32_RTIT_CTL && was && !(v & RTIT_CTL_TRACEEN) && m->nheld) {
		/* clearing TraceEn writes out what the CPU held (33.2.8.3) */
		emit_now(m, m->held, m->nheld);
		m->nheld = 0;
	}
	switch (ptunit_wrmsr(&m->u, msr, v, unit_mem(m), &sb)) {
	case PTUNIT_GP:
		return gp(m, "%s", why);
	case PTUNIT_OPERR:
		m->enables++;
		operr(m, "%s", why);
		return 0;
	case PTUNIT_NO_TRIGGER:
		m->enables++;
		m->stale_status++; /* 33.3.2.1: software should have cleared STATUS */
		return 0;
	default:
		break;
	}
	if (msr == MSR_IA32_RTIT_CTL && !was && (v & RTIT_CTL_TRACEEN)) {
		m->enables++;
		if (m->u.ctl & RTIT_CTL_FABRICEN)
			return 0;
		if (m->u.ctl & RTIT_CTL_TOPA)
			check_topa(m);
		else
			check_single(m);
	}
	return 0;
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
	ptunit_init(&m->u, caps);
	m->ops = (struct cpu_ops){
		.cpuid = cpuid, .rdmsr = rdmsr, .wrmsr = wrmsr, .rdtsc = rdtsc, .ctx = m,
	};
}

void ptmodel_clear_counts(struct ptmodel *m)
{
	m->gp = m->operr = m->stale_status = m->enables = m->hazards = 0;
	m->rdmsr_count = m->wrmsr_count = 0;
	m->last_gp[0] = m->last_operr[0] = m->last_hazard[0] = 0;
}

void ptmodel_warm_reset(struct ptmodel *m)
{
	/* 33.2.8.1, 33.3.4, Table 33-11 EBX[2]; what the CPU held is lost */
	m->u.ctl &= ~RTIT_CTL_TRACEEN;
	m->nheld = 0;
	if (m->u.caps.ip_filter)
		return;
	struct ptcaps caps = m->u.caps;
	ptunit_init(&m->u, &caps); /* every MSR at its reset value */
}

static size_t emit_now(struct ptmodel *m, const uint8_t *bytes, size_t n)
{
	char why[300] = "";
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	bool before = m->u.status & RTIT_STATUS_ERROR;
	size_t k = ptunit_emit(&m->u, unit_mem(m), bytes, n, &sb);
	if (!before && (m->u.status & RTIT_STATUS_ERROR))
		operr(m, "%s", why);
	return k;
}

size_t ptmodel_emit(struct ptmodel *m, const uint8_t *bytes, size_t n)
{
	size_t hold = m->hold < PTMODEL_HOLD_MAX ? m->hold : PTMODEL_HOLD_MAX;
	if (!hold)
		return emit_now(m, bytes, n);
	if (m->nheld + n <= hold) {
		memcpy(m->held + m->nheld, bytes, n);
		m->nheld += n;
		return n;
	}
	/* the oldest bytes beyond hold go out: the held ones first */
	size_t out = m->nheld + n - hold;
	size_t from_held = out < m->nheld ? out : m->nheld;
	emit_now(m, m->held, from_held);
	memmove(m->held, m->held + from_held, m->nheld - from_held);
	m->nheld -= from_held;
	size_t k = emit_now(m, bytes, out - from_held);
	memcpy(m->held + m->nheld, bytes + (out - from_held), n - (out - from_held));
	m->nheld += n - (out - from_held);
	return k == out - from_held ? n : k;
}
