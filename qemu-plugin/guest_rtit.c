/* pt=guest: the PT unit the guest programs; see guest_rtit.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pt_rtit.h"
#include "qemu-plugin/guest_rtit.h"
#include "qemu-plugin/plugin_api.h"

/* ToPA entries from guest memory. QEMU 10.0's plugins read linear
 * addresses only: UEFI maps memory 1:1 (UEFI 2.x, 2.3.4 "x64 Platforms"),
 * so in firmware they are the physical ones the unit uses. */
static bool mem_read64(void *ctx, uint64_t phys, uint64_t *v)
{
	struct grtit *g = ctx;
	uint8_t b[8];
	if (g->no_memory || !papi_read_memory(phys, b, sizeof(b))) {
		g->unread++;
		return false;
	}
	*v = 0;
	for (int i = 7; i >= 0; i--)
		*v = *v << 8 | b[i];
	return true;
}

static struct grtit_region *region_of(struct grtit *g, uint64_t phys)
{
	if (g->cur < g->nreg) {
		struct grtit_region *r = &g->reg[g->cur];
		if (phys >= r->base && phys - r->base < r->size)
			return r;
	}
	return NULL;
}

static void mem_write(void *ctx, uint64_t phys, const uint8_t *b, size_t n)
{
	struct grtit *g = ctx;
	struct grtit_region *r = region_of(g, phys);
	if (!r)
		return; /* a region not recorded (limits): the bytes are in trace.pt */
	uint64_t off = phys - r->base;
	if (pwrite(fileno(g->out), b, n, (off_t)(r->file_off + off)) != (ssize_t)n)
		g->regions_dropped++;
	if (off + n > r->written)
		r->written = off + n;
}

/* The output reaches a region: recorded once (the same table entry and
 * base again, as single-range output and ToPA wrapping do, is the same). */
static void mem_region(void *ctx, uint64_t table, unsigned idx, uint64_t base, uint64_t size,
		       uint64_t off, uint64_t entry)
{
	struct grtit *g = ctx;
	(void)off;
	(void)entry;
	for (unsigned i = 0; i < g->nreg; i++) {
		struct grtit_region *r = &g->reg[i];
		if (r->table == table && r->idx == idx && r->base == base && r->size == size) {
			g->cur = i;
			return;
		}
	}
	g->cur = g->nreg;
	uint64_t at = __atomic_load_n(g->out_size, __ATOMIC_RELAXED);
	if (g->nreg >= GRTIT_MAX_REGIONS || size > GRTIT_MAX_FILE || at + size > GRTIT_MAX_FILE) {
		g->regions_dropped++;
		return;
	}
	if (!g->reg && !(g->reg = calloc(GRTIT_MAX_REGIONS, sizeof(*g->reg)))) {
		g->regions_dropped++;
		return;
	}
	struct grtit_region *r = &g->reg[g->nreg++];
	r->table = table;
	r->idx = idx;
	r->base = base;
	r->size = size;
	r->file_off = __atomic_fetch_add(g->out_size, size, __ATOMIC_RELAXED);
	r->written = 0;
}

bool grtit_init(struct grtit *g, const struct ptcaps *caps, unsigned cpu, FILE *out,
		uint64_t *out_size)
{
	memset(g, 0, sizeof(*g));
	ptunit_init(&g->u, caps);
	g->cpu = cpu;
	g->out = out;
	g->out_size = out_size;
	g->mem.read64 = mem_read64;
	g->mem.write = mem_write;
	g->mem.region = mem_region;
	g->mem.ctx = g;
	return true;
}

static const char *result_name(int r)
{
	switch (r) {
	case PTUNIT_OK: return "ok";
	case PTUNIT_GP: return "#GP";
	case PTUNIT_OPERR: return "operational error";
	default: return "no trigger";
	}
}

enum grtit_edge grtit_wrmsr(struct grtit *g, uint64_t ip, uint32_t msr, uint64_t v,
			    struct strbuf *line, struct strbuf *msg)
{
	const char *name = ptunit_msr_name(msr);
	if (!name)
		return GRTIT_NONE;
	g->writes++;
	bool was = g->u.ctl & RTIT_CTL_TRACEEN;
	char why[400] = "";
	struct strbuf wb;
	sb_init(&wb, why, sizeof(why));
	int r = ptunit_wrmsr(&g->u, msr, v, &g->mem, &wb);
	bool now = g->u.ctl & RTIT_CTL_TRACEEN;
	sb_printf(line, "{\"cpu\": %u, \"ip\": \"0x%" PRIx64 "\", \"msr\": \"%s\", \"value\": "
			"\"0x%" PRIx64 "\", \"result\": \"%s\"", g->cpu, ip, name, v, result_name(r));
	if (why[0]) {
		sb_puts(line, ", \"why\": \"");
		sb_json_escape(line, why);
		sb_putc(line, '"');
	}
	sb_putc(line, '}');
	if (r == PTUNIT_GP) {
		g->gp++;
		sb_printf(msg, "CPU %u: WRMSR %s = 0x%" PRIx64 " at 0x%" PRIx64 " would #GP on a CPU "
			       "with these capabilities: %s (the write is not applied)",
			  g->cpu, name, v, ip, why);
	} else if (r == PTUNIT_OPERR) {
		g->operr++;
		sb_printf(msg, "CPU %u: WRMSR %s = 0x%" PRIx64 " at 0x%" PRIx64 ": operational "
			       "error, IA32_RTIT_STATUS.Error set, nothing traced: %s",
			  g->cpu, name, v, ip, why);
	} else if (r == PTUNIT_NO_TRIGGER) {
		g->no_trigger++;
		sb_printf(msg, "CPU %u: WRMSR %s = 0x%" PRIx64 " at 0x%" PRIx64 ": %s", g->cpu,
			  name, v, ip, why);
	}
	if (!was && now && ptunit_triggered(&g->u))
		return GRTIT_ON;
	if (was && !now)
		return GRTIT_OFF;
	return GRTIT_NONE;
}

size_t grtit_emit(struct grtit *g, const uint8_t *b, size_t n, struct strbuf *msg)
{
	char why[400] = "";
	struct strbuf wb;
	sb_init(&wb, why, sizeof(why));
	size_t k = ptunit_emit(&g->u, &g->mem, b, n, &wb);
	g->emitted += k;
	if (why[0]) /* even with every byte taken: the entry after a full region */
		sb_printf(msg, "CPU %u: the output stopped after %" PRIu64 " bytes: %s "
			       "(IA32_RTIT_STATUS.Error set)", g->cpu, g->emitted, why);
	return k;
}

void grtit_json(const struct grtit *g, struct strbuf *out)
{
	const struct ptunit *u = &g->u;
	sb_printf(out, "{\"cpu\": %u, \"ctl\": \"0x%" PRIx64 "\", \"status\": \"0x%" PRIx64
		       "\", \"output_base\": \"0x%" PRIx64 "\", \"output_mask_ptrs\": \"0x%" PRIx64
		       "\", \"output\": \"%s\", \"writes\": %" PRIu64 ", \"gp\": %" PRIu64
		       ", \"operational_errors\": %" PRIu64 ", \"no_trigger\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"topa_entries\": %" PRIu64 ", \"pmis\": %"
		       PRIu64 ", \"stopped\": %s, \"error\": %s",
		  g->cpu, u->ctl, u->status, u->base, u->mask,
		  (u->ctl & RTIT_CTL_TOPA) ? "topa" : "single-range", g->writes, g->gp, g->operr,
		  g->no_trigger, g->emitted, u->entries, u->pmis,
		  (u->status & RTIT_STATUS_STOPPED) ? "true" : "false",
		  (u->status & RTIT_STATUS_ERROR) ? "true" : "false");
	if (g->unread)
		sb_printf(out, ", \"unread_entries\": %" PRIu64, g->unread);
	if (g->regions_dropped)
		sb_printf(out, ", \"regions_not_recorded\": %" PRIu64, g->regions_dropped);
	sb_puts(out, ", \"regions\": [");
	for (unsigned i = 0; i < g->nreg; i++) {
		const struct grtit_region *r = &g->reg[i];
		sb_printf(out, "%s{\"table\": \"0x%" PRIx64 "\", \"entry\": %u, \"base\": \"0x%"
			       PRIx64 "\", \"size\": %" PRIu64 ", \"file_offset\": %" PRIu64
			       ", \"written\": %" PRIu64 "}",
			  i ? ", " : "", r->table, r->idx, r->base, r->size, r->file_off,
			  r->written);
	}
	sb_puts(out, "]");
	/* where the next byte would go: the region and OutputOffset (bits
	 * 63:32 of OUTPUT_MASK_PTRS in both output schemes, 33.2.7.1, .2) */
	if (g->cur < g->nreg)
		sb_printf(out, ", \"position\": {\"region\": %u, \"offset\": %" PRIu64 "}", g->cur,
			  u->mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT);
	sb_putc(out, '}');
}

void grtit_free(struct grtit *g)
{
	free(g->reg);
	g->reg = NULL;
}
