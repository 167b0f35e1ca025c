/* The firmware's boot-performance records as text and timeline tracks; see
 * fpdt_out.h. */
#include "host/out/fpdt_out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "host/input/fpdt_trace.h"
#include "host/input/image.h"
#include "host/out/timeline_sink.h"
#include "host/util/file_io.h"

/* ns as microseconds with three decimals */
static void us(char *buf, size_t cap, uint64_t ns)
{
	snprintf(buf, cap, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

void fpdtout_info(FILE *out, const struct fpdt_run *f)
{
	if (!f->present)
		return;
	fprintf(out, "FPDT         fpdt.bin: %s; %zu records, %zu measurements", f->table_names[0] ?
		f->table_names : "no table", f->records, f->nspan);
	if (f->unpaired)
		fprintf(out, ", %zu records without their start or end", f->unpaired);
	if (f->ndamage)
		fprintf(out, ", %zu damaged (skipped)", f->ndamage);
	fputc('\n', out);
	char a[32];
	if (f->have_boot) {
		for (int i = 0; i < FPDT_BOOT_FIELDS; i++) {
			us(a, sizeof(a), f->boot[i]);
			fprintf(out, "  %-26s %14s us since reset\n",
				fpdt_boot_field_name((enum fpdt_boot_field)i), a);
		}
	}
	if (f->have_s3[0]) {
		char b[32];
		us(a, sizeof(a), f->s3[0].s3[0]);
		us(b, sizeof(b), f->s3[0].s3[1]);
		fprintf(out, "  S3 resume: count %u, the last %s us, average %s us\n",
			f->s3[0].count, a, b);
	}
	if (f->have_s3[1]) {
		char b[32];
		us(a, sizeof(a), f->s3[1].s3[0]);
		us(b, sizeof(b), f->s3[1].s3[1]);
		fprintf(out, "  S3 suspend: from %s us to %s us\n", a, b);
	}
	if (f->nspan)
		fprintf(out, "  %14s %14s  %-12s %s\n", "start us", "duration us", "what", "module");
	for (size_t i = 0; i < f->nspan; i++) {
		const struct fpdt_span *s = &f->span[i];
		char d[32];
		us(a, sizeof(a), s->start);
		if (s->single)
			snprintf(d, sizeof(d), "(event)");
		else
			us(d, sizeof(d), s->dur);
		fprintf(out, "  %14s %14s  %-12s %s", a, d, s->what, term_safe(s->name));
		if (s->image[0] && strcmp(s->image, s->name))
			fprintf(out, " (%s)", term_safe(s->image));
		else if (!s->image[0] && strcmp(s->guid, s->name))
			fprintf(out, " (%s)", s->guid);
		fputc('\n', out);
	}
	for (size_t i = 0; i < f->ndamage; i++)
		fprintf(out, "  damaged: %s: skipped\n", f->damage[i]);
}

void fpdtout_vs_trace(FILE *out, const struct fpdt_run *f, const struct image_list *l,
		      const struct fpdt_window *w, bool timed)
{
	if (!f->present)
		return;
	fprintf(out, "FPDT/trace   each measurement of an image beside that image in the trace "
		"(us since reset)\n");
	fprintf(out, "  %12s %12s %12s %12s %12s %12s  %-28s %s\n", "record", "trace",
		"rec start", "rec end", "trace first", "trace last", "agrees", "measurement");
	char label[FPDT_NAME_MAX + 40];
	size_t n = 0;
	for (size_t i = 0; i < f->nspan; i++) {
		const struct fpdt_span *s = &f->span[i];
		if (s->single || !s->image[0])
			continue;
		unsigned k;
		for (k = 0; k < l->n && strcmp(l->v[k].name, s->image); k++)
			;
		if (k == l->n)
			continue;
		n++;
		fpdtrun_label(s, label, sizeof(label));
		char d[32], rs[32], re[32], tw[32] = "-", tf[32] = "-", tl[32] = "-", v[64];
		us(d, sizeof(d), s->dur);
		us(rs, sizeof(rs), s->start);
		us(re, sizeof(re), s->start + s->dur);
		const struct fpdt_window *x = &w[k];
		if (!x->insns) {
			snprintf(v, sizeof(v), "not in the trace");
		} else if (!timed || !x->timed) {
			snprintf(v, sizeof(v), "%llu insns, no time",
				 (unsigned long long)x->insns);
		} else {
			us(tw, sizeof(tw), x->last - x->first);
			us(tf, sizeof(tf), x->first);
			us(tl, sizeof(tl), x->last);
			/* a driver's code also runs after its entry point returns,
			 * when its protocols are called: "runs past it" */
			uint64_t b = s->start + s->dur;
			snprintf(v, sizeof(v), "%s",
				 x->last < s->start || x->first > b ? "no: outside the record"
				 : x->first < s->start		     ? "starts before the record"
				 : x->last <= b			     ? "yes: the record brackets it"
								     : "starts inside, runs past it");
		}
		fprintf(out, "  %12s %12s %12s %12s %12s %12s  %-28s %s\n", d, tw, rs, re, tf, tl, v,
			term_safe(label));
	}
	if (!n)
		fprintf(out, "  no measurement names an image of this run (by its FvFile GUID)\n");
}

void fpdtout_warn_damage(const char *cmd, const struct fpdt_run *f)
{
	for (size_t i = 0; i < f->ndamage; i++)
		fprintf(stderr, "%s: %s: %s: skipped\n", cmd, term_safe(f->path), f->damage[i]);
}

#define FPDT_TRACKS 16

/* An instant of the first track: a basic boot time (span NULL) or an event. */
struct fpdt_instant {
	uint64_t t;
	int field;
	const struct fpdt_span *span;
};

static int by_time(const void *a, const void *b)
{
	const struct fpdt_instant *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* The first track: its instants in time order (a track's time never goes
 * back). -1 out of memory. */
static int write_instants(struct tl_sink *s, const struct fpdt_run *f, int tid, uint64_t shift,
			  uint64_t *dropped)
{
	struct fpdt_instant *in = malloc((f->nspan + FPDT_BOOT_FIELDS) * sizeof(*in));
	if (!in)
		return -1;
	size_t n = 0;
	for (int i = 0; f->have_boot && i < FPDT_BOOT_FIELDS; i++)
		if (f->boot[i])
			in[n++] = (struct fpdt_instant){ f->boot[i], i, NULL };
	for (size_t i = 0; i < f->nspan; i++)
		if (f->span[i].single || !f->span[i].dur)
			in[n++] = (struct fpdt_instant){ f->span[i].start, 0, &f->span[i] };
	qsort(in, n, sizeof(*in), by_time);
	char label[FPDT_NAME_MAX + 40];
	for (size_t i = 0; i < n; i++) {
		if (in[i].t < shift) {
			(*dropped)++;
			continue;
		}
		const struct fpdt_span *sp = in[i].span;
		if (!sp) {
			struct tl_arg arg = { "ns_since_reset", TL_U64, in[i].t, NULL };
			s->ops->instant(s, tid, in[i].t - shift,
					tlsink_name(s, fpdt_boot_field_name(in[i].field)), &arg, 1);
			continue;
		}
		fpdtrun_label(sp, label, sizeof(label));
		struct tl_arg arg[3] = { { "guid", TL_STR, 0, sp->guid },
					 { "record_offset", TL_U64, sp->off, NULL },
					 { "ns_since_reset", TL_U64, sp->start, NULL } };
		s->ops->instant(s, tid, in[i].t - shift, tlsink_name(s, label), arg, 3);
	}
	free(in);
	return 0;
}

int fpdtout_track(struct tl_sink *s, const struct fpdt_run *f, int tid0, uint64_t shift_ns,
		  uint64_t *dropped)
{
	*dropped = 0;
	if (!f->present)
		return 0;
	s->ops->track(s, tid0, "Firmware FPDT: basic boot and events");
	if (write_instants(s, f, tid0, shift_ns, dropped))
		return -1;
	/* per track, the ends of its open slices, the last first (they nest) */
	static uint64_t end[FPDT_TRACKS][64];
	static uint32_t ename[FPDT_TRACKS][64];
	unsigned depth[FPDT_TRACKS] = { 0 };
	int ntracks = 0;
	char label[FPDT_NAME_MAX + 40];
	for (size_t i = 0; i < f->nspan; i++) {
		const struct fpdt_span *sp = &f->span[i];
		if (sp->single || !sp->dur)
			continue; /* an instant */
		uint64_t b = sp->start, e = sp->start + sp->dur;
		if (e < shift_ns) {
			(*dropped)++;
			continue;
		}
		b = b < shift_ns ? 0 : b - shift_ns;
		e -= shift_ns;
		int k;
		for (k = 0; k < FPDT_TRACKS; k++) {
			while (depth[k] && end[k][depth[k] - 1] <= b) {
				depth[k]--;
				s->ops->slice(s, tid0 + 1 + k, end[k][depth[k]], ename[k][depth[k]], true);
			}
			if (!depth[k] || (end[k][depth[k] - 1] >= e && depth[k] < 64))
				break;
		}
		if (k == FPDT_TRACKS) {
			(*dropped)++; /* more overlap than tracks */
			continue;
		}
		if (k >= ntracks) {
			char tn[48];
			if (k)
				snprintf(tn, sizeof(tn), "Firmware FPDT: measurements %d", k + 1);
			else
				snprintf(tn, sizeof(tn), "Firmware FPDT: measurements");
			s->ops->track(s, tid0 + 1 + k, tn);
			ntracks = k + 1;
		}
		fpdtrun_label(sp, label, sizeof(label));
		uint32_t name = tlsink_name(s, label);
		s->ops->slice(s, tid0 + 1 + k, b, name, false);
		end[k][depth[k]] = e;
		ename[k][depth[k]++] = name;
	}
	for (int k = 0; k < ntracks; k++)
		while (depth[k]) {
			depth[k]--;
			s->ops->slice(s, tid0 + 1 + k, end[k][depth[k]], ename[k][depth[k]], true);
		}
	return ntracks + 1;
}
