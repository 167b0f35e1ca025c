/* One run of efipt diff as its header describes it; see diff_side.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/diff/diff_side.h"
#include "host/util/file_io.h"

#define CMD "efipt diff"

/* What the manifest says of the firmware and the CPU (for the header and
 * the different-machines warning). */
void diff_side_facts(struct diff_side *s)
{
	const struct run_dir *rd = &s->t.rd;
	snprintf(s->firmware, sizeof(s->firmware), "unknown firmware");
	snprintf(s->cpu, sizeof(s->cpu), "unknown CPU");
	snprintf(s->command, sizeof(s->command), "efipt");
	if (!s->t.have_run)
		return;
	json_t *fw = json_object_get(rd->manifest, "firmware");
	const char *v = json_string_value(json_object_get(fw, "vendor"));
	const char *r = json_string_value(json_object_get(fw, "revision"));
	if (v)
		snprintf(s->firmware, sizeof(s->firmware), "%.120s%s%.60s", v, r ? " " : "",
			 r ? r : "");
	json_t *cpu = json_object_get(rd->manifest, "cpu");
	const char *sig = json_string_value(json_object_get(cpu, "signature"));
	if (cpu)
		snprintf(s->cpu, sizeof(s->cpu), "CPU %lld/%lld/%lld%s%.20s",
			 (long long)json_integer_value(json_object_get(cpu, "family")),
			 (long long)json_integer_value(json_object_get(cpu, "model")),
			 (long long)json_integer_value(json_object_get(cpu, "stepping")),
			 sig ? " " : "", sig ? sig : "");
	const char *c = rundir_str(rd, "command");
	if (c)
		snprintf(s->command, sizeof(s->command), "efipt %.40s", c);
}

/* "run B: DIR (efipt qemu; EDK II 0x10000; CPU 6/94/3): 1234 instructions,
 * 0 gaps, 0 decode errors; symbols for 3 of 5 images" */
void diff_side_text(FILE *f, const struct diff_side *s)
{
	fprintf(f, "%s: %s (%s; %s; %s): %" PRIu64 " instructions (%" PRIu64 " in interrupts), %"
		PRIu64 " gap%s, %ld decode error%s; symbols for %zu of %zu images", s->label,
		term_safe(s->t.run_path), term_safe(s->command), term_safe(s->firmware),
		term_safe(s->cpu), s->fn.insns, s->fn.irq_insns, s->fn.gaps, s->fn.gaps == 1 ? "" : "s",
		s->fn.errs, s->fn.errs == 1 ? "" : "s", s->fn.nimg_sym, s->fn.nimg);
	if (s->fn.nimg_map)
		fprintf(f, ", %zu of them by a link map only (not checked against the code)",
			s->fn.nimg_map);
	if (s->t.so.npaths || s->t.so.nbinds) {
		fprintf(f, " (--symbols");
		for (size_t i = 0; i < s->t.so.npaths; i++)
			fprintf(f, " %s", term_safe(s->t.so.paths[i]));
		for (size_t i = 0; i < s->t.so.nbinds; i++)
			fprintf(f, " %s=%s", term_safe(s->t.so.bind_img[i]),
				term_safe(s->t.so.bind_file[i]));
		fputc(')', f);
	}
	fputc('\n', f);
}

json_t *diff_side_json(const struct diff_side *s)
{
	json_t *paths = json_array();
	for (size_t i = 0; i < s->t.so.npaths; i++)
		json_array_append_new(paths, json_string(s->t.so.paths[i]));
	for (size_t i = 0; i < s->t.so.nbinds; i++) {
		char b[2200];
		snprintf(b, sizeof(b), "%s=%s", s->t.so.bind_img[i], s->t.so.bind_file[i]);
		json_array_append_new(paths, json_string(b));
	}
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "run",
			 s->t.run_path, "command", s->command, "firmware", s->firmware, "cpu", s->cpu,
			 "insns", (json_int_t)s->fn.insns, "interrupts", (json_int_t)s->fn.irqs,
			 "interrupt_insns", (json_int_t)s->fn.irq_insns, "gaps",
			 (json_int_t)s->fn.gaps, "decode_errors",
			 (json_int_t)s->fn.errs, "images", (json_int_t)s->fn.nimg,
			 "images_with_symbols", (json_int_t)s->fn.nimg_sym, "images_by_map_only",
			 (json_int_t)s->fn.nimg_map, "symbols", paths);
	if (o && s->fn.cov)
		json_object_set_new(o, "hit", json_integer((json_int_t)s->fn.hit));
	if (o && s->fn.timed) {
		/* its time (ns; TSC ticks where the TSC frequency is unknown) */
		json_object_set_new(o, s->fn.ns ? "time_ns" : "time_ticks",
				    json_integer((json_int_t)s->fn.time_ns));
		json_object_set_new(o, s->fn.ns ? "interrupt_ns" : "interrupt_ticks",
				    json_integer((json_int_t)s->fn.irq_ns));
	}
	return o;
}

void diff_side_warn_machines(const struct diff_side *a, const struct diff_side *b)
{
	if (strcmp(a->cpu, b->cpu))
		fprintf(stderr, CMD ": warning: the runs are of different CPUs (A: %s, B: %s); "
			"compared by name all the same\n", term_safe(a->cpu), term_safe(b->cpu));
	if (strcmp(a->firmware, b->firmware))
		fprintf(stderr, CMD ": warning: the runs are of different firmware (A: %s, B: "
			"%s); compared by name all the same\n", term_safe(a->firmware),
			term_safe(b->firmware));
}


/* Whether both runs have time, in one unit: then times are compared. */
bool diff_side_both_timed(const struct diff_side *a, const struct diff_side *b)
{
	return a->fn.timed && b->fn.timed && a->fn.ns == b->fn.ns;
}
