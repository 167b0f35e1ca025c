/*
 * What a recovered run directory holds, from an opened recorder region:
 * code snapshots, images.json, memmap.json, cpuid.txt's leaves and the
 * manifest's members (docs/format.md, docs/recorder.md). The same text for
 * efipt.efi recover and efipt recover --linux.
 */
#include "core/mem.h"
#include "core/pt_config.h"
#include "core/pt_rtit.h"
#include "core/recorder.h"

static const struct ptrec_section *good_section(const struct ptrec *r, uint32_t kind)
{
	for (uint32_t i = 0; i < r->h.nsect; i++)
		if (r->h.sect[i].kind == kind)
			return r->sec_ok[i] ? &r->h.sect[i] : 0;
	return 0;
}

static bool overlaps_exit(const struct ptrec *r, const struct ptrec_snap *a)
{
	for (uint32_t j = 0; j < r->nsnap[1]; j++) {
		const struct ptrec_snap *b = &r->snap[1][j];
		if (a->phys < b->phys + b->size && b->phys < a->phys + a->size)
			return true;
	}
	return false;
}

bool ptrec_code(struct ptrec *r, unsigned i, struct ptrec_code *c)
{
	const struct ptrec_section *s;
	const struct ptrec_snap *a = 0;
	if (i < r->nsnap[1]) {
		s = good_section(r, PTREC_SEC_CODE_EXIT);
		a = &r->snap[1][i];
		c->at_exit = true;
	} else {
		s = good_section(r, PTREC_SEC_CODE_ARM);
		unsigned want = i - r->nsnap[1];
		for (uint32_t k = 0; k < r->nsnap[0] && !a; k++)
			if (!overlaps_exit(r, &r->snap[0][k]) && !want--)
				a = &r->snap[0][k];
		c->at_exit = false;
	}
	if (!a || !s)
		return false;
	c->phys = a->phys;
	c->size = a->size;
	c->off = s->off + a->off;
	c->code_type = a->code_type;
	return true;
}

/* Image record i of an images section (sanitized), or false. */
static bool image_at(struct ptrec *r, const struct ptrec_section *s, uint32_t i,
		     struct imgrec *rec)
{
	uint32_t n;
	if (s->used < 8 || ptrec_read(r, s->off, &n, 4) || i >= n || 8 + (uint64_t)sizeof(*rec) * (i + 1) > s->used ||
	    ptrec_read(r, s->off + 8 + (uint64_t)sizeof(*rec) * i, rec, sizeof(*rec)))
		return false;
	imgrec_sanitize(rec);
	return true;
}

unsigned ptrec_images_json(struct ptrec *r, struct strbuf *sb)
{
	const struct ptrec_section *ex = good_section(r, PTREC_SEC_IMAGES_EXIT);
	const struct ptrec_section *ar = good_section(r, PTREC_SEC_IMAGES_ARM);
	struct imgrec rec, other;
	unsigned listed = 0;
	sb_puts(sb, "{\"images\": [");
	for (uint32_t i = 0; ex && image_at(r, ex, i, &rec); i++) {
		sb_puts(sb, listed++ ? ",\n  " : "\n  ");
		imgrec_json(&rec, sb);
	}
	for (uint32_t i = 0; ar && image_at(r, ar, i, &rec); i++) {
		bool again = false;
		for (uint32_t j = 0; ex && !again && image_at(r, ex, j, &other); j++)
			again = other.base == rec.base;
		if (again)
			continue;
		sb_puts(sb, listed++ ? ",\n  " : "\n  ");
		imgrec_json(&rec, sb);
	}
	sb_puts(sb, "\n]}\n");
	return listed;
}

void ptrec_memmap_json(struct ptrec *r, struct strbuf *sb)
{
	struct ptrec_code c;
	sb_puts(sb, "{\"regions\": [");
	for (unsigned i = 0; ptrec_code(r, i, &c); i++)
		sb_printf(sb,
			  "%s\n  {\"type\": \"%s\", \"phys\": \"0x%llx\", \"pages\": %llu, \"attr\": "
			  "\"0x0\", \"snapshot\": \"mem-%016llx.bin\", \"taken\": \"%s\"}",
			  i ? "," : "", uefi_memtype_name(c.code_type), (unsigned long long)c.phys,
			  (unsigned long long)(c.size / 4096), (unsigned long long)c.phys,
			  c.at_exit ? "exit_boot_services" : "arming");
	sb_puts(sb, "\n]}\n");
}

void ptrec_cpuid(const struct ptrec *r, struct cpuid_set *set)
{
	cpuid_set_init(set);
	for (uint32_t i = 0; i < r->h.ncpuid; i++)
		cpuid_set_put(set, r->h.cpuid[i].leaf, r->h.cpuid[i].subleaf, r->h.cpuid[i].r);
}

static const char *tf(bool v)
{
	return v ? "true" : "false";
}

static const char *source_name(uint32_t s)
{
	return s == PTREC_SRC_HW ? "hw" : s == PTREC_SRC_SYNTHETIC ? "synthetic" : "qemu";
}

void ptrec_describe(const struct ptrec *r, struct strbuf *sb)
{
	const struct ptrec_header *h = &r->h;
	sb_printf(sb, "recorder of boot %u (armed %s by run %s, generation %llu): %s%llu KiB of "
		      "trace at 0x%llx",
		  h->boot, h->armed_at, h->run_id, (unsigned long long)h->generation,
		  h->source == PTREC_SRC_SYNTHETIC ? "SYNTHETIC, " : "",
		  (unsigned long long)(h->trace_size >> 10), (unsigned long long)h->region_phys);
}

void ptrec_manifest_members(struct ptrec *r, const struct ptrec_end *e,
			    const struct ptrec_here *here, const char *end_notes,
			    struct strbuf *sb)
{
	const struct ptrec_header *h = &r->h;
	unsigned ncode = 0, nexit = 0;
	struct ptrec_code c;
	for (; ptrec_code(r, ncode, &c); ncode++)
		nexit += c.at_exit;
	sb_printf(sb, "\"recovered\": {\"reader\": \"%s\", \"from_boot\": %u, ", here->reader,
		  h->boot);
	if (here->same_boot_known)
		sb_printf(sb, "\"this_boot\": %u, \"same_boot\": %s, ", here->boot,
			  tf(here->boot == h->boot));
	sb_puts(sb, "\"armed\": \"");
	sb_json_escape(sb, h->armed_at);
	sb_puts(sb, "\", \"armed_run_id\": \"");
	sb_json_escape(sb, h->run_id);
	sb_printf(sb, "\", \"generation\": %llu, \"region\": \"0x%llx\", \"region_size\": %llu, "
		      "\"header\": \"0x%llx\", \"placement\": \"",
		  (unsigned long long)h->generation, (unsigned long long)h->region_phys,
		  (unsigned long long)h->region_size,
		  (unsigned long long)(h->region_phys + h->header_off));
	sb_json_escape(sb, h->placement);
	sb_printf(sb, "\", \"live\": %s, \"exit_boot_services\": %s, \"stop_at_exit\": %s, "
		      "\"returned\": %s, \"stopped_by_efipt\": %s, \"end\": \"%s\", \"bytes\": %llu",
		  tf(here->live), tf(h->flags & PTREC_F_EXIT), tf(h->flags & PTREC_F_STOP_AT_EXIT),
		  tf(h->flags & PTREC_F_RETURNED), tf(h->flags & PTREC_F_STOPPED),
		  ptrec_end_how_name(e->how), (unsigned long long)e->len);
	if (e->how == PTREC_END_PSB_TSC)
		sb_printf(sb, ", \"write_position_after\": \"0x%llx\", \"write_position_before\": "
			      "\"0x%llx\", \"left_out_at_most\": %llu, \"newest_tsc\": \"0x%llx\"",
			  (unsigned long long)e->lo, (unsigned long long)e->hi,
			  (unsigned long long)((e->hi + h->trace_size - e->lo) % h->trace_size),
			  (unsigned long long)e->newest_tsc);
	else
		sb_printf(sb, ", \"write_position\": \"0x%llx\"", (unsigned long long)e->pos);
	sb_printf(sb, ", \"psbs_with_tsc\": %u, \"tsc_inversions\": %u, \"code_snapshots\": %u, "
		      "\"code_snapshots_at_exit\": %u",
		  e->psbs, e->tsc_inversions, ncode, nexit);
	if (h->exit_note[0]) {
		sb_puts(sb, ", \"exit_note\": \"");
		sb_json_escape(sb, h->exit_note);
		sb_putc(sb, '"');
	}
	if (end_notes && end_notes[0]) {
		sb_puts(sb, ", \"notes\": \"");
		sb_json_escape(sb, end_notes);
		sb_putc(sb, '"');
	}
	sb_puts(sb, "}");

	/* the trace object: as a trace run's (docs/format.md "trace") */
	sb_printf(sb, ",\n  \"trace\": {\"source\": \"%s\", \"recovered\": true, \"rtit_ctl\": "
		      "\"0x%llx\", \"output\": \"%s\", \"mode\": \"%s\", \"size\": %llu, "
		      "\"regions\": %u, \"tables\": %u, \"ranges\": ",
		  source_name(h->source), (unsigned long long)h->rtit_ctl,
		  h->output == PTREC_OUT_TOPA ? "topa" : "single",
		  h->mode == PTREC_MODE_WRAP ? "wrap" : "stop", (unsigned long long)h->trace_size,
		  r->nreg, r->ntab);
	ptcfg_ranges_json(h->rtit_ctl, h->nranges, h->addr_a, h->addr_b, sb);
	sb_printf(sb, ", \"bytes\": %llu, \"wrapped\": %s, \"full\": %s, \"stopped\": %s, "
		      "\"error\": %s",
		  (unsigned long long)e->len, tf(e->wrapped), tf(e->full), tf(e->stopped_bit),
		  tf(e->error_bit));
	if (h->source == PTREC_SRC_SYNTHETIC)
		sb_printf(sb, ", \"seed\": %llu, \"insns\": %llu, \"generated\": %llu",
			  (unsigned long long)h->synth_seed, (unsigned long long)h->synth_insns,
			  (unsigned long long)h->synth_bytes);
	sb_puts(sb, "}");

	/* timing: the synthesizer's clock is not a TSC */
	if (h->source == PTREC_SRC_HW) {
		uint64_t stop = (h->flags & PTREC_F_STOPPED) ? h->tsc_stop : 0;
		sb_printf(sb, ",\n  \"timing\": {\"tsc_start\": \"0x%llx\"",
			  (unsigned long long)h->tsc_started);
		if (stop)
			sb_printf(sb, ", \"tsc_stop\": \"0x%llx\"", (unsigned long long)stop);
		if (h->flags & PTREC_F_EXIT)
			sb_printf(sb, ", \"tsc_exit_boot_services\": \"0x%llx\"",
				  (unsigned long long)h->tsc_exit);
		if (h->nom_freq)
			sb_printf(sb, ", \"nom_freq\": %u", h->nom_freq);
		sb_puts(sb, "}");
	}
	if (h->traced_path[0]) {
		sb_puts(sb, ",\n  \"traced_image\": {\"path\": \"");
		sb_json_escape(sb, h->traced_path);
		sb_printf(sb, "\", \"base\": \"0x%llx\", \"size\": %llu}",
			  (unsigned long long)h->traced_base, (unsigned long long)h->traced_size);
	}
}
