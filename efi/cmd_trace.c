/*
 * efipt.efi trace [options] -- IMAGE [ARGS]   |   efipt.efi trace --connect
 *
 * Load the image, take the sideband (memory map, images, code), trace while
 * it runs, stop when it returns, then write trace.pt and decode in place if
 * asked. The trace comes from Intel PT (--source hw, the default) or, where
 * the CPU has none, from the synthesizer walking the image's real code
 * (--source synthetic, always labelled as such), or from efipt-qemu.so on
 * the host when the guest runs under QEMU (--source qemu: the trace markers
 * around the traced code, nothing programmed, no trace in the guest).
 *
 * Hardware sequence (SDM 33.3.2): options validated against CPUID leaf 14H
 * (core/pt_config.c) before any WRMSR; output buffer laid out and allocated
 * (arch/x86_64/pt_output.c); rtit_start writes RTIT_CTL last; rtit_stop clears
 * TraceEn on every path out, including ExitBootServices (an OS loader that
 * never returns), so PT never runs on into an OS. With --cpus the same on
 * every selected CPU through MP services (efi/mp_trace.c), each CPU on itself.
 */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/trace_marker.h"
#include "core/mem.h"
#include "core/opt_table.h"
#include "core/pe_info.h"
#include "core/pt_flow.h"
#include "core/pt_rtit.h"
#include "core/pt_summary.h"
#include "core/pt_synth.h"
#include "efi/app.h"
#include "efi/code_view.h"
#include "efi/console.h"
#include "efi/fpdt_save.h"
#include "efi/fs.h"
#include "efi/hw_trace.h"
#include "efi/image_load.h"
#include "efi/load_watch.h"
#include "efi/inplace.h"
#include "efi/inplace_cov.h"
#include "efi/mp_trace.h"
#include "efi/recorder.h"
#include "efi/sideband.h"

#define MAX_IMAGES 512
#define DEFAULT_SYNTH_INSNS 1000000ull

enum source { SOURCE_HW, SOURCE_SYNTHETIC, SOURCE_QEMU };

/* What the command line asked for (filled by efi_parse_trace). */
static struct trace_opts {
	struct ptcfg cfg;
	enum source source;
	bool decode, snapshot, connect;
	uint64_t seed, insns;
	const char *image;
	int image_argc;
	char **image_argv;
	const char *emulated_caps;	/* --emulated-caps FILE: a CPU profile */
	bool cpus_given;		/* --cpus: through MP services */
	struct cpu_list cpus;
	struct recorder_opts rec;	/* --recorder* */
} opt;

static struct cpuid_set prof; /* --emulated-caps: the profile */

static const char trace_usage[] =
	"usage: efipt.efi trace [OPTIONS] -- IMAGE.efi [ARGS...]\n"
	"       efipt.efi trace [OPTIONS] --%s\n"
	"\n"
	"Trace IMAGE (path on this volume, absolute or relative to efipt.efi) from\n"
	"StartImage until it returns, or trace connecting every controller.\n"
	"\n";

static int set_source(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)ctx;
	if (!efipt_strcmp(v, "hw"))
		opt.source = SOURCE_HW;
	else if (!efipt_strcmp(v, "synthetic"))
		opt.source = SOURCE_SYNTHETIC;
	else if (!efipt_strcmp(v, "qemu"))
		opt.source = SOURCE_QEMU;
	else {
		sb_printf(err, "--%s is hw, synthetic or qemu, not '%s'", o->name, v);
		return -1;
	}
	return 0;
}

static int set_emulated_caps(void *ctx, const struct opt_row *o, const char *v,
			     struct strbuf *err)
{
	(void)ctx;
	if (!v || !*v) {
		sb_printf(err, "--%s needs a CPU profile file (cpuid -r text) on this volume",
			  o->name);
		return -1;
	}
	opt.emulated_caps = v;
	return 0;
}

static int set_cpus(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)ctx, (void)o;
	if (!v || cpu_list_parse(&opt.cpus, v, err))
		return -1;
	opt.cpus_given = true;
	return 0;
}

static int set_no_snapshot(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	(void)ctx, (void)o, (void)v, (void)err;
	opt.snapshot = false;
	return 0;
}

/* A count into the uint64_t at o->field; zero only where allowed. */
static int count(void *ctx, const struct opt_row *o, const char *v, bool zero_ok,
		 struct strbuf *err)
{
	uint64_t n;
	if (ptcfg_parse_size(v, &n) || (!n && !zero_ok)) {
		sb_printf(err, "--%s needs a number, got '%s'", o->name, v);
		return -1;
	}
	*(uint64_t *)((char *)ctx + o->field) = n;
	return 0;
}

static int set_seed(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	return count(ctx, o, v, true, err);
}

static int set_insns(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	return count(ctx, o, v, false, err);
}

static int set_recorder_stop(void *ctx, const struct opt_row *o, const char *v,
			     struct strbuf *err)
{
	(void)ctx;
	if (!efipt_strcmp(v, "exit") || !efipt_strcmp(v, "never")) {
		opt.rec.stop_at_exit = !efipt_strcmp(v, "exit");
		return 0;
	}
	sb_printf(err, "--%s is exit or never, not '%s'", o->name, v);
	return -1;
}

static int set_recorder_room(void *ctx, const struct opt_row *o, const char *v,
			     struct strbuf *err)
{
	return count(ctx, o, v, true, err);
}

static int set_recorder_at(void *ctx, const struct opt_row *o, const char *v, struct strbuf *err)
{
	int rc = count(ctx, o, v, false, err);
	if (!rc && (opt.rec.at & 0xfff)) {
		sb_printf(err, "--%s 0x%llx is not page aligned", o->name,
			  (unsigned long long)opt.rec.at);
		return -1;
	}
	return rc;
}

enum {
	T_SOURCE, T_DECODE, T_NO_SNAPSHOT, T_CONNECT, T_SEED, T_INSNS, T_EMULATED_CAPS, T_RECORDER,
	T_RECORDER_STOP, T_RECORDER_ROOM, T_RECORDER_AT, T_CPUS, NTRACE_OPTIONS
};
#define FIELD(f) offsetof(struct trace_opts, f)
static const struct opt_row trace_options[NTRACE_OPTIONS] = {
	[T_SOURCE] = { "source", OPT_VALUE, set_source, 0, "hw|synthetic|qemu",
		       "Intel PT (default), a trace synthesized by walking\n"
		       "the image's code (no PT needed; not a real trace), or qemu:\n"
		       "trace markers for efipt-qemu.so (efipt qemu --start marker)" },
	[T_DECODE] = { "decode", OPT_FLAG, opt_set_true, FIELD(decode), 0,
		       "decode in place: print a summary (summary.txt), write coverage.drcov" },
	[T_NO_SNAPSHOT] = { "no-snapshot", OPT_FLAG, set_no_snapshot, 0, 0,
			    "do not save the memory map, image list and code copies" },
	[T_CONNECT] = { "connect", OPT_FLAG, opt_set_true, FIELD(connect), 0,
			"trace connecting every controller instead of an image" },
	[T_SEED] = { "seed", OPT_VALUE, set_seed, FIELD(seed), "N",
		     "synthetic: branch choices (default 1)" },
	[T_INSNS] = { "insns", OPT_VALUE, set_insns, FIELD(insns), "N",
		      "synthetic: instructions to walk (default 1000000)" },
	[T_EMULATED_CAPS] = { "emulated-caps", OPT_VALUE, set_emulated_caps, 0, "FILE",
			      "under QEMU's TCG only: run the hardware path on the\n"
			      "Intel PT of this CPU profile (cpuid -r text), which\n"
			      "efipt-qemu.so start=guest emulates (efipt qemu docs)" },
	[T_RECORDER] = { "recorder", OPT_FLAG, opt_set_true, FIELD(rec.on), 0,
			 "flight recorder for an OS loader: the trace and what decodes it\n"
			 "in reserved memory that the OS leaves alone and a warm reset\n"
			 "keeps; tracing goes on through ExitBootServices into the OS\n"
			 "(Linux finds TraceEn set and leaves PT alone; a warm reset\n"
			 "clears TraceEn). After a hang and reset: 'efipt.efi recover';\n"
			 "from Linux: 'efipt recover --linux'. Defaults --mode wrap, --tsc" },
	[T_RECORDER_STOP] = { "recorder-stop", OPT_VALUE, set_recorder_stop, 0, "exit|never",
			      "stop tracing at ExitBootServices, or never (default)" },
	[T_RECORDER_ROOM] = { "recorder-room", OPT_VALUE, set_recorder_room, FIELD(rec.room), "N",
			      "room for the code taken again at ExitBootServices\n"
			      "(the loader's and what it loaded; default 32M)" },
	[T_RECORDER_AT] = { "recorder-at", OPT_VALUE, set_recorder_at, FIELD(rec.at), "ADDR",
			    "place the recorder region here (free memory in this\n"
			    "boot's map; default: efipt picks and says why)" },
	[T_CPUS] = { "cpus", OPT_VALUE, set_cpus, 0, "all|LIST",
		     "trace these CPUs too (MP services numbers, e.g. 0,2-3;\n"
		     "must include the BSP, 0), each with its own buffer and\n"
		     "validated against its own CPUID: trace.pt is CPU 0's,\n"
		     "trace.cpuN.pt CPU N's (default: the BSP alone). Goldmont:\n"
		     "one thread per core (its RTIT MSRs are per core)" },
};
#undef FIELD

void efi_help_trace(void)
{
	con_printf(trace_usage, trace_options[T_CONNECT].name);
	char *u = AllocatePool(8192);
	if (u) {
		struct strbuf ub;
		sb_init(&ub, u, 8192);
		opt_usage(trace_options, NTRACE_OPTIONS, &ub);
		ptcfg_usage(&ub);
		con_puts(u);
		FreePool(u);
	}
}

EFI_STATUS efi_parse_trace(struct app *app)
{
	char err[256];
	struct strbuf sb;
	sb_init(&sb, err, sizeof(err));
	efipt_memset(&opt, 0, sizeof(opt));
	ptcfg_init(&opt.cfg);
	opt.snapshot = true;
	opt.rec.room = RECORDER_DEFAULT_ROOM;
	bool recorder_opts_given = false;
	opt.seed = 1;
	opt.insns = DEFAULT_SYNTH_INSNS;
	int i = 1;
	for (; i < app->argc; i++) {
		const char *a = app->argv[i];
		const char *next = i + 1 < app->argc ? app->argv[i + 1] : NULL;
		if (!efipt_strcmp(a, "--")) {
			i++;
			break;
		}
		int used = ptcfg_option(&opt.cfg, a, next, &sb);
		if (!used)
			used = opt_parse(trace_options, NTRACE_OPTIONS, &opt, a, next, &sb);
		if (used < 0) {
			con_printf("efipt: trace: %s\n", err);
			return EFI_INVALID_PARAMETER;
		}
		if (!used) {
			con_printf("efipt: trace: unknown option '%s' (see efipt.efi trace --help)\n",
				   a);
			return EFI_INVALID_PARAMETER;
		}
		recorder_opts_given |= !efipt_memcmp(a, "--recorder-", 11);
		i += used - 1;
	}
	if (i < app->argc) {
		opt.image = app->argv[i];
		opt.image_argc = app->argc - i - 1;
		opt.image_argv = &app->argv[i + 1];
	}
	if (opt.connect && opt.image) {
		con_printf("efipt: trace: --%s traces the drivers already loaded; give no image\n",
			   trace_options[T_CONNECT].name);
		return EFI_INVALID_PARAMETER;
	}
	if (!opt.connect && !opt.image) {
		con_puts("efipt: trace: which image? (trace [OPTIONS] -- IMAGE.efi [ARGS])\n");
		return EFI_INVALID_PARAMETER;
	}
	if (opt.connect && opt.source == SOURCE_SYNTHETIC) {
		con_printf("efipt: trace: --%s needs --%s hw (nothing to synthesize from)\n",
			   trace_options[T_CONNECT].name, trace_options[T_SOURCE].name);
		return EFI_INVALID_PARAMETER;
	}
	if (opt.emulated_caps && opt.source != SOURCE_HW) {
		con_printf("efipt: trace: --%s is for the hardware path (--%s hw)\n",
			   trace_options[T_EMULATED_CAPS].name, trace_options[T_SOURCE].name);
		return EFI_INVALID_PARAMETER;
	}
	if (opt.cpus_given && opt.source != SOURCE_HW) {
		con_printf("efipt: trace: --%s is for Intel PT (--%s hw)\n",
			   trace_options[T_CPUS].name, trace_options[T_SOURCE].name);
		return EFI_INVALID_PARAMETER;
	}
	if (opt.cpus_given && opt.rec.on) {
		con_printf("efipt: trace: --%s traces the BSP alone; not with --%s\n",
			   trace_options[T_RECORDER].name, trace_options[T_CPUS].name);
		return EFI_INVALID_PARAMETER;
	}
	if (recorder_opts_given && !opt.rec.on) {
		con_printf("efipt: trace: the --%s-* options need --%s\n",
			   trace_options[T_RECORDER].name, trace_options[T_RECORDER].name);
		return EFI_INVALID_PARAMETER;
	}
	if (opt.rec.on && opt.connect) {
		con_printf("efipt: trace: --%s follows an OS loader through ExitBootServices: give "
			   "it an image, not --%s\n",
			   trace_options[T_RECORDER].name, trace_options[T_CONNECT].name);
		return EFI_INVALID_PARAMETER;
	}
	if (opt.rec.on) {
		/* a flight recorder keeps the newest trace, and finding where it ends
		 * after a reset needs the TSC in each PSB+ (docs/recorder.md) */
		if (opt.cfg.mode == PTCFG_MODE_AUTO)
			opt.cfg.mode = PTCFG_MODE_WRAP;
		opt.cfg.tsc = true;
	}
	if (opt.source == SOURCE_QEMU && opt.decode) {
		con_printf("efipt: trace: --%s needs a trace in memory; with --%s qemu the host has "
			   "it (efipt decode RUNDIR after efipt qemu)\n",
			   trace_options[T_DECODE].name, trace_options[T_SOURCE].name);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

struct collect {
	uint8_t *buf;       /* the trace in pool memory, or NULL */
	uint64_t len, cap;
	bool spilled;       /* too large to copy: trace.pt was written from the buffer */
	EFI_STATUS spill_status;
};

/* ---- the run ----------------------------------------------------------- */

static struct ptsum_image images[MAX_IMAGES];

static void fail(struct app *app, enum run_result result, EFI_STATUS st, const char *why)
{
	con_printf("efipt: %s\n", why);
	run_set_result(&app->run, result, st, why);
}

/* Run the traced code: the image, or every controller connection. With
 * --source qemu the trace markers sit right around it, inline, so that
 * efipt-qemu.so's trace holds the call and nothing else of efipt.efi. */
static EFI_STATUS run_target(struct traced_image *img, bool *started)
{
	bool mark = opt.source == SOURCE_QEMU;
	if (opt.connect) {
		UINTN n;
		if (mark)
			trace_marker_start();
		EFI_STATUS st = connect_all(&n);
		if (mark)
			trace_marker_stop();
		app_watchdog_off(); /* a driver may have armed the watchdog */
		con_printf("efipt: connected %llu controllers\n", (unsigned long long)n);
		return st;
	}
	*started = true;
	if (mark)
		trace_marker_start();
	EFI_STATUS st = image_start(img);
	if (mark)
		trace_marker_stop();
	app_watchdog_off(); /* the image may have armed the watchdog */
	con_printf("efipt: %s returned %s\n", img->path, efi_status_name(st));
	return st;
}

/* --filter image=NAME: the image's [base, base+size-1] (33.2.5.3 ranges are
 * inclusive), looked up once the traced image itself is loaded. */
static bool resolve_image_filters(struct strbuf *err)
{
	for (unsigned i = 0; i < opt.cfg.nranges; i++) {
		const char *name = opt.cfg.range[i].image;
		if (!name)
			continue;
		uint64_t base, size;
		if (!sideband_find_image(name, &base, &size) || !size) {
			sb_printf(err, "--%s image=%s: no loaded image has that name (see "
				       "images.json of a snapshot run for the names)",
				  ptcfg_opt_name(PTCFG_OPT_FILTER), name);
			return false;
		}
		ptcfg_resolve_range(&opt.cfg, i, base, base + size - 1);
		con_printf("efipt: filter %u: image %s = 0x%llx-0x%llx\n", i, name,
			   (unsigned long long)base, (unsigned long long)(base + size - 1));
	}
	return true;
}

struct target {
	struct traced_image *img;
	bool *started;
};

static EFI_STATUS run_target_body(void *ctx)
{
	struct target *t = ctx;
	return run_target(t->img, t->started);
}

/* A hardware trace on one CPU: images loaded while it runs are noted with
 * their trace position (efi/load_watch.h). */
static EFI_STATUS run_target_watched(void *ctx)
{
	loadwatch_begin(hw_trace_position);
	EFI_STATUS st = run_target_body(ctx);
	loadwatch_end();
	return st;
}

/* A trace too large for a copy goes from the PT buffer straight to trace.pt. */
static struct esp_file spill_file;
static bool spill_begun;

static EFI_STATUS spill_begin(void *ctx, uint64_t total)
{
	struct app *app = ctx;
	if (!app->have_run)
		return EFI_NOT_READY;
	con_printf("efipt: the trace (%llu KiB) is too large to copy: writing trace.pt straight "
		   "from the trace buffer; no in-place decode\n",
		   (unsigned long long)(total >> 10));
	EFI_STATUS st = run_file_begin(&app->run, "trace.pt", total, &spill_file);
	spill_begun = !EFI_ERROR(st);
	return st;
}

static EFI_STATUS spill_write(void *ctx, const void *data, uint64_t len)
{
	(void)ctx;
	return esp_file_append(&spill_file, data, (UINTN)len);
}

static EFI_STATUS trace_hw(struct app *app, struct traced_image *img, bool *started,
			   struct collect *trace)
{
	static struct hw_result res;
	struct hw_spill spill = { spill_begin, spill_write, app };
	char msg[512];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	if (!resolve_image_filters(&sb)) {
		fail(app, RUN_FAILED, EFI_NOT_FOUND, msg);
		return EFI_NOT_FOUND;
	}
	struct target t = { img, started };
	spill_begun = false;
	const struct hw_hooks *hooks = opt.rec.on ? recorder_hooks(app, &opt.rec, img) : NULL;
	EFI_STATUS st = hw_trace(&app->caps, &opt.cfg, run_target_watched, &t, &spill, hooks, &res,
				 &sb);
	UINTN changes = loadwatch_write(app->have_run && !EFI_ERROR(st) ? &app->run : NULL,
					res.ext.wrapped, res.ext.bytes);
	if (changes)
		con_printf("efipt: %llu code change records (images loaded while traced): "
			   "codechanges.bin\n", (unsigned long long)changes);
	if (EFI_ERROR(st)) {
		if (opt.rec.on)
			recorder_disarm();
		fail(app, st == EFI_UNSUPPORTED ? RUN_UNSUPPORTED : RUN_FAILED, st, msg);
		return st;
	}
	if (sb.len)
		con_printf("efipt: %s\n", msg);
	char timing[160];
	struct strbuf tb;
	sb_init(&tb, timing, sizeof(timing));
	sb_printf(&tb, "{\"tsc_start\": \"0x%llx\", \"tsc_stop\": \"0x%llx\"",
		  (unsigned long long)res.tsc_start, (unsigned long long)res.tsc_stop);
	if (res.have_nom)
		sb_printf(&tb, ", \"nom_freq\": %u", res.nom_freq);
	sb_putc(&tb, '}');
	run_member(&app->run, "timing", "%s", timing);
	if (res.have_json)
		run_member(&app->run, "trace", "%s", res.trace_json);
	trace->len = trace->cap = res.len;
	if (res.spilled) {
		trace->spilled = true;
		trace->spill_status = res.spill_status;
		if (spill_begun)
			trace->spill_status = run_file_end(&app->run, "trace.pt", &spill_file,
							   res.spill_status);
	} else {
		/* an empty trace (e.g. filters excluded everything) is still a result */
		trace->buf = res.buf ? res.buf : AllocatePool(1);
	}
	if (opt.emulated_caps && !trace->len)
		con_puts("efipt: EMULATED Intel PT: QEMU reads the PT MSRs back as 0, as from a CPU "
			 "that wrote nothing; the trace is efipt-qemu.so's (start=guest)\n");
	con_printf("efipt: %llu trace bytes%s%s%s\n", (unsigned long long)trace->len,
		   res.ext.wrapped ? ", wrapped (older trace overwritten)" : "",
		   res.ext.full ? ", buffer full (trace stopped early)" : "",
		   res.ext.error ? ", IA32_RTIT_STATUS.Error set" : "");
	return res.body_status;
}

/* --cpus: every selected CPU through MP services (efi/mp_trace.c). */
static struct mp_trace_result mp_res;
static bool mp_traced;
static bool mp_unstopped; /* a CPU could not be reached to stop it */

static EFI_STATUS trace_mp(struct app *app, struct traced_image *img, bool *started)
{
	char *msg = AllocatePool(8192);
	if (!msg) {
		fail(app, RUN_FAILED, EFI_OUT_OF_RESOURCES, "no pool memory");
		return EFI_OUT_OF_RESOURCES;
	}
	struct strbuf sb;
	sb_init(&sb, msg, 8192);
	EFI_STATUS st = EFI_SUCCESS;
	if (!resolve_image_filters(&sb))
		st = EFI_NOT_FOUND;
	struct target t = { img, started };
	if (!EFI_ERROR(st))
		st = mp_trace(app->have_run ? &app->run : NULL, &opt.cpus,
			      opt.emulated_caps ? &prof : NULL, &opt.cfg, opt.decode,
			      run_target_body, &t, &mp_res, &sb);
	mp_traced = mp_res.n > 0;
	mp_unstopped = mp_traced && EFI_ERROR(st);
	if (EFI_ERROR(st) && !mp_traced) {
		/* the last line names the cause; the lines before it are the steps */
		if (sb.len && msg[sb.len - 1] == '\n')
			msg[--sb.len] = 0;
		fail(app, st == EFI_UNSUPPORTED || st == EFI_NOT_FOUND ? RUN_UNSUPPORTED
									: RUN_FAILED,
		     st, msg);
		FreePool(msg);
		return st;
	}
	if (sb.len)
		con_printf("efipt: %s\n", msg);
	FreePool(msg);
	run_member(&app->run, "timing", "{\"tsc_start\": \"0x%llx\", \"tsc_stop\": \"0x%llx\"}",
		   (unsigned long long)mp_res.tsc_start, (unsigned long long)mp_res.tsc_stop);
	if (opt.emulated_caps)
		con_puts("efipt: EMULATED Intel PT: QEMU reads the PT MSRs back as 0, as from CPUs "
			 "that wrote nothing; the traces are efipt-qemu.so's (start=guest)\n");
	return mp_res.body_status; /* a CPU left running is said in the result */
}

/* Why arming did not happen when recover_pending() refused it. */
static const char *pending_refusal(EFI_STATUS st)
{
	return st == EFI_ALREADY_STARTED
		       ? "a recorder armed in this boot is still tracing: one recorder at a time"
		       : "the last recorder's trace is still in memory and could not be recovered: "
			 "not arming over it";
}

/*
 * --recorder --source synthetic: the stream goes into a ring in the
 * recorder region as a CPU in wrap mode would have written it, and the
 * trace of this run is what the ring holds, oldest first.
 */
static EFI_STATUS synthetic_into_recorder(struct app *app, struct traced_image *img,
					  struct collect *trace, uint64_t ring,
					  const struct ptsynth_result *res, char *json, UINTN cap)
{
	char msg[600];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	struct ptcfg_settings set = { 0 };
	set.output = PTCFG_OUT_TOPA;
	set.mode = opt.cfg.mode == PTCFG_MODE_STOP ? PTCFG_MODE_STOP : PTCFG_MODE_WRAP;
	set.size = ring;
	set.topa_multi = true;
	set.maxphyaddr = app->caps.maxphyaddr;
	/* IA32_RTIT_CTL as hardware would run it (what the decoders read it by) */
	uint64_t ctl = RTIT_CTL_TRACEEN | RTIT_CTL_OS | RTIT_CTL_USER | RTIT_CTL_TOPA |
		       RTIT_CTL_TSCEN | RTIT_CTL_BRANCHEN |
		       (opt.cfg.disretc ? RTIT_CTL_DISRETC : 0) | (opt.cfg.distnt ? RTIT_CTL_DISTNT : 0);
	EFI_STATUS st = recover_pending(app);
	if (!EFI_ERROR(st))
		st = recorder_arm(app, &opt.rec, PTREC_SRC_SYNTHETIC, ptout_carve_need(&set),
				  ptout_carve_align(&set), img, &sb);
	if (EFI_ERROR(st)) {
		fail(app, RUN_FAILED, st, msg[0] ? msg : pending_refusal(st));
		return st;
	}
	con_printf("efipt: %s\n", msg);
	sb_reset(&sb);
	uint64_t tail;
	st = recorder_synthetic(&set, ctl, trace->buf, trace->len, opt.seed, res->insns, &tail,
				&sb);
	if (EFI_ERROR(st)) {
		recorder_disarm();
		fail(app, RUN_FAILED, st, msg);
		return st;
	}
	con_printf("efipt: recorder: the SYNTHETIC stream of %llu bytes went round a %llu-byte "
		   "ring %llu times; it holds the last %llu, write position 0x%llx\n",
		   (unsigned long long)trace->len, (unsigned long long)ring,
		   (unsigned long long)(trace->len / ring), (unsigned long long)(trace->len - tail),
		   (unsigned long long)recorder_synthetic_pos());
	struct strbuf jb;
	sb_init(&jb, json, cap);
	sb_printf(&jb, ", \"ring\": %llu, \"generated\": %llu, \"ring_position\": \"0x%llx\"",
		  (unsigned long long)ring, (unsigned long long)trace->len,
		  (unsigned long long)recorder_synthetic_pos());
	/* this run's trace: the ring's contents */
	CopyMem(trace->buf, trace->buf + tail, trace->len - tail);
	trace->len -= tail;
	return EFI_SUCCESS;
}

static EFI_STATUS trace_synthetic(struct app *app, struct traced_image *img, bool *started,
				  struct collect *trace, const uint8_t *copy)
{
	static struct ptsynth synth;
	struct ptimg_flat flat = { copy, img->base, img->size };
	/* the walk starts where StartImage will: the PE entry point */
	struct pe_info pe;
	uint64_t entry = 0;
	if (pe_read_info(copy, img->size, true, &pe) == PE_OK && pe.entry_rva)
		entry = flat.base + pe.entry_rva;
	if (!entry) {
		fail(app, RUN_FAILED, EFI_LOAD_ERROR, "cannot find the image's entry point");
		return EFI_LOAD_ERROR;
	}
	/* a recorder's ring is written over and over: synthesize more than it holds */
	uint64_t ring = ((opt.cfg.size < 8192 ? 8192 : opt.cfg.size) + 4095) & ~4095ull;
	trace->cap = opt.rec.on ? 4 * ring : opt.cfg.size;
	trace->buf = AllocatePool(trace->cap);
	if (!trace->buf) {
		char why[120];
		struct strbuf wb;
		sb_init(&wb, why, sizeof(why));
		sb_printf(&wb, "no memory for a %llu KiB synthetic trace buffer (lower --%s)",
			  (unsigned long long)(trace->cap >> 10), ptcfg_opt_name(PTCFG_OPT_SIZE));
		fail(app, RUN_FAILED, EFI_OUT_OF_RESOURCES, why);
		return EFI_OUT_OF_RESOURCES;
	}
	struct ptsynth_config sc = { 0 };
	sc.image.read = ptimg_flat_read;
	sc.image.ctx = &flat;
	sc.start = entry;
	sc.seed = opt.seed;
	sc.max_insns = opt.insns;
	sc.psb_period = 4096;
	sc.p_interrupt = 2;
	/* the packets the same options would give on hardware (the manifest
	 * records them, and the decoders read the trace by them) */
	sc.distnt = opt.cfg.distnt;
	sc.disretc = opt.cfg.disretc;
	sc.ptw = opt.cfg.ptwrite;
	sc.fup_on_ptw = opt.cfg.fuponptw;
	sc.event_trace = opt.cfg.event;
	sc.p_power = opt.cfg.pwr ? 8 : 0;
	sc.tsc = opt.cfg.tsc;
	struct ptsynth_sink sink = { 0 };
	struct ptsynth_result res;
	if (ptsynth_run(&synth, &sc, &sink, trace->buf, trace->cap, &res)) {
		fail(app, RUN_FAILED, EFI_INVALID_PARAMETER, "the synthesizer refused its arguments");
		return EFI_INVALID_PARAMETER;
	}
	trace->len = res.size;
	con_printf("efipt: SYNTHETIC trace (no Intel PT): %llu instructions of %s walked from "
		   "its entry 0x%llx, %llu bytes, %llu packets\n",
		   (unsigned long long)res.insns, img->path, (unsigned long long)entry,
		   (unsigned long long)res.size, (unsigned long long)res.packets);
	char ring_json[96] = "";
	if (opt.rec.on) {
		EFI_STATUS rs = synthetic_into_recorder(app, img, trace, ring, &res, ring_json,
							sizeof(ring_json));
		if (EFI_ERROR(rs)) {
			/* no recorder, no trace: the run failed (the reason is recorded) */
			FreePool(trace->buf);
			trace->buf = NULL;
			trace->len = 0;
			return rs;
		}
	}
	run_member(&app->run, "trace",
		   "{\"source\": \"synthetic\", \"bytes\": %llu, \"seed\": %llu, "
		   "\"insns\": %llu, \"start\": \"0x%llx\"%s}",
		  (unsigned long long)trace->len, (unsigned long long)opt.seed,
		  (unsigned long long)res.insns, (unsigned long long)entry, ring_json);
	/* the image still really runs: its behaviour and exit status are real */
	return run_target(img, started);
}

static bool qemu_marked; /* the markers ran: the host has a trace */

/* --source qemu: the code runs between the trace markers; efipt-qemu.so
 * (efipt qemu --start marker --stop marker) writes the trace on the host.
 * Not under QEMU's TCG the markers are plain NOPs: said, not hidden. */
static EFI_STATUS trace_qemu(struct app *app, struct traced_image *img, bool *started)
{
	bool tcg = !efipt_strcmp(app->caps.hypervisor, "TCGTCGTCGTCG");
	if (!tcg)
		con_printf("efipt: --%s qemu: not running under QEMU's TCG (hypervisor \"%s\"): "
			   "the trace markers are NOPs here, nothing records a trace\n",
			   trace_options[T_SOURCE].name, app->caps.hypervisor);
	run_member(&app->run, "trace",
		   "{\"source\": \"qemu\", \"markers\": \"EPT1/EPT0\", \"tcg\": %s}",
		   tcg ? "true" : "false");
	if (opt.rec.on) {
		/* no trace in memory: the region keeps the images and their code at
		 * arming and at ExitBootServices, where --recorder-stop exit puts the
		 * stop marker */
		char msg[600];
		struct strbuf sb;
		sb_init(&sb, msg, sizeof(msg));
		EFI_STATUS st = recover_pending(app);
		if (!EFI_ERROR(st))
			st = recorder_arm(app, &opt.rec, PTREC_SRC_QEMU, 0, 0, img, &sb);
		if (EFI_ERROR(st)) {
			fail(app, RUN_FAILED, st, msg[0] ? msg : pending_refusal(st));
			return st;
		}
		con_printf("efipt: %s\n", msg);
	}
	qemu_marked = true;
	return run_target(img, started);
}

/* The in-place decode feeds the summary and the coverage. */
struct decode_sinks {
	struct ptsum *sum;
	struct ptcov *cov;	/* NULL: no coverage */
};

static void both_on_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct decode_sinks *d = ctx;
	ptsum_on_blocks(d->sum, batch);
	if (d->cov)
		ptcov_on_blocks(d->cov, batch);
}

static void both_on_event(void *ctx, const struct ptflow_event *ev)
{
	ptsum_on_event(((struct decode_sinks *)ctx)->sum, ev);
}

/* One trace to decode in place: a CPU's. */
struct decode_item {
	const uint8_t *buf;
	uint64_t len;
	unsigned cpu;
	uint64_t apic_id;
};

/* Decode each trace: a summary per CPU (summary.txt holds them in order),
 * and one coverage.drcov of every CPU's blocks together. */
static void decode_in_place(struct app *app, const struct decode_item *item, unsigned n,
			    bool per_cpu, struct traced_image *img, const uint8_t *copy,
			    unsigned nimg)
{
	static struct memview view;
	static struct memview_region regions[256];
	memview_init(&view, regions, 256);
	if (copy)
		memview_add(&view, img->base, img->size, copy);
	code_view_add_code_regions(&view);
	static struct ptsum sum;
	/* coverage.drcov only where there is a run directory to write it to */
	static struct inplace_cov ic;
	struct ptimg code = { memview_read, &view };
	bool cov = app->have_run && !EFI_ERROR(inplace_cov_init(&ic, images, nimg, &code));
	/* blocks from the fast loops: the summary and the coverage decode
	 * nothing again but blocks that cross an image's end or are new, and
	 * need no order, so they come counted */
	static struct ptflow_decoder dec;
	if (cov)
		ptcov_use_blocks(&ic.cov, ic.seen, ic.nseen);
	struct decode_sinks ds = { &sum, cov ? &ic.cov : NULL };
	struct ptflow_sink sink = { &ds, NULL, both_on_event };
	struct ptflow_stat stat;
	/* the trace bits a decoder must know: what hardware and synthesizer were asked for */
	uint64_t ctl = (opt.cfg.distnt ? RTIT_CTL_DISTNT : 0) | (opt.cfg.disretc ? RTIT_CTL_DISRETC : 0);
	UINTN cap = 8192 * (UINTN)n;
	char *text = AllocatePool(cap);
	struct strbuf sb;
	if (text)
		sb_init(&sb, text, cap);
	for (unsigned i = 0; i < n; i++) {
		ptsum_init(&sum, images, nimg);
		if (EFI_ERROR(inplace_decode(item[i].buf, item[i].len, &view, &app->caps, ctl, &dec,
					     &sink, both_on_blocks, true, &stat))) {
			con_puts("efipt: no memory for the decoder's block cache: not decoding\n");
			if (cov)
				inplace_cov_free(&ic);
			if (text)
				FreePool(text);
			return;
		}
		if (!text)
			continue;
		if (per_cpu)
			sb_printf(&sb, "CPU %u (APIC ID 0x%llx), %llu trace bytes:\n", item[i].cpu,
				  (unsigned long long)item[i].apic_id,
				  (unsigned long long)item[i].len);
		ptsum_format(&sum, &stat, 10, &sb);
	}
	if (text) {
		con_puts("efipt: in-place decode:\n");
		con_puts(text);
		run_write_file(&app->run, "summary.txt", text, sb.len);
		FreePool(text);
	}
	if (cov) {
		if (ic.skipped)
			con_printf("efipt: coverage.drcov: %u images have no blocks (more than %u MiB "
				   "of coverage bitmaps, or no pool memory)\n",
				   ic.skipped, INPLACE_COV_MAX >> 20);
		EFI_STATUS st = inplace_cov_write(&ic, &app->run);
		if (EFI_ERROR(st))
			con_printf("efipt: writing coverage.drcov failed: %s\n", efi_status_name(st));
		inplace_cov_free(&ic);
	}
}

/*
 * --emulated-caps FILE: efipt-qemu.so start=guest emulates the PT unit of a
 * CPU profile, which QEMU 10.0's CPUID cannot show. Accepted only where
 * CPUID names QEMU's TCG as the hypervisor: on any other machine WRMSRs
 * to absent MSRs would #GP. Every later step is the hardware path.
 */
static EFI_STATUS emulate_caps(struct app *app)
{
	char why[300];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	const char *name = trace_options[T_EMULATED_CAPS].name;
	if (efipt_strcmp(app->caps.hypervisor, "TCGTCGTCGTCG")) {
		sb_printf(&sb, "--%s: only under QEMU's TCG (CPUID hypervisor \"TCGTCGTCGTCG\"), "
			       "this is \"%s\": the WRMSRs would go to a real CPU",
			  name, app->caps.hypervisor);
		fail(app, RUN_UNSUPPORTED, EFI_UNSUPPORTED, why);
		return EFI_UNSUPPORTED;
	}
	CHAR16 path[300];
	ascii_to_ucs2(path, 300, opt.emulated_caps);
	char *text = NULL;
	UINTN len;
	UINT64 size;
	EFI_STATUS st = esp_read_head(&app->esp, path, 1 << 20, &text, &len, &size);
	unsigned line = 0;
	int e = EFI_ERROR(st) ? 0 : cpuidtxt_parse(&prof, text, len, 0, &line);
	if (text)
		FreePool(text);
	if (EFI_ERROR(st))
		sb_printf(&sb, "--%s %s: cannot read it: %s", name, opt.emulated_caps,
			  efi_status_name(st));
	else if (size > len)
		sb_printf(&sb, "--%s %s: larger than 1 MiB, not a cpuid -r dump", name,
			  opt.emulated_caps);
	else if (e)
		sb_printf(&sb, "--%s %s: line %u: %s", name, opt.emulated_caps, line,
			  cpuidtxt_errstr(e));
	else if (!ptcaps_emulate(&app->caps, &prof))
		sb_printf(&sb, "--%s %s: this CPU profile has no Intel PT", name,
			  opt.emulated_caps);
	if (sb.len) {
		fail(app, RUN_FAILED, EFI_INVALID_PARAMETER, why);
		return EFI_INVALID_PARAMETER;
	}
	con_printf("efipt: EMULATED Intel PT: the capabilities of %s (family %u model 0x%x) under "
		   "QEMU's TCG; efipt-qemu.so start=guest must run with cpuid= the same profile\n",
		   opt.emulated_caps, app->caps.family, app->caps.model);
	char esc[300];
	struct strbuf eb;
	sb_init(&eb, esc, sizeof(esc));
	sb_json_escape(&eb, opt.emulated_caps);
	run_member(&app->run, "emulated_pt",
		   "{\"profile\": \"%s\", \"hypervisor\": \"TCGTCGTCGTCG\", \"family\": %u, "
		   "\"model\": %u, \"note\": \"QEMU 10.0 reads the RTIT MSRs as 0: the trace and "
		   "its write position are efipt-qemu.so's\"}",
		   esc, app->caps.family, app->caps.model);
	return EFI_SUCCESS;
}

EFI_STATUS efi_cmd_trace(struct app *app)
{
	app_detect_cpu(app);
	if (opt.emulated_caps) {
		EFI_STATUS est = emulate_caps(app);
		if (EFI_ERROR(est))
			return est;
	}
	if (opt.source == SOURCE_HW && app->caps.absent != PTCAPS_PRESENT) {
		char why[200];
		struct strbuf sb;
		sb_init(&sb, why, sizeof(why));
		ptcaps_absent_line(&app->caps, &sb);
		sb_printf(&sb, " (--%s synthetic runs without it)", trace_options[T_SOURCE].name);
		fail(app, RUN_UNSUPPORTED, EFI_UNSUPPORTED, why);
		return EFI_UNSUPPORTED;
	}
	static struct traced_image img;
	efipt_memset(&img, 0, sizeof(img));
	EFI_STATUS st;
	if (opt.image) {
		st = image_load(app, opt.image, opt.image_argc, opt.image_argv, &img);
		if (EFI_ERROR(st)) {
			run_set_result(&app->run, RUN_FAILED, st, "the image to trace could not be loaded");
			return st;
		}
		con_printf("efipt: loaded %s at 0x%llx (%llu bytes)\n", img.path,
			   (unsigned long long)img.base,
			   (unsigned long long)img.size);
		char esc[300];
		struct strbuf eb;
		sb_init(&eb, esc, sizeof(esc));
		sb_json_escape(&eb, img.path);
		run_member(&app->run, "traced_image",
			   "{\"path\": \"%s\", \"base\": \"0x%llx\", \"size\": %llu}", esc,
			   (unsigned long long)img.base,
			   (unsigned long long)img.size);
	}
	/* The sideband comes first: an application's memory is released when it
	 * exits. The traced image is also kept as a copy for in-place decoding. */
	unsigned nimg = 0;
	if (opt.snapshot && app->have_run) {
		struct sideband_stats ss;
		sideband_write(&app->run, &ss, images, MAX_IMAGES, &nimg);
		fpdt_save(&app->run);
	} else if (opt.decode) {
		sideband_list_images(images, MAX_IMAGES, &nimg); /* for the summary */
	}
	uint8_t *copy = NULL;
	if (opt.image) {
		copy = AllocatePool(img.size);
		if (copy)
			CopyMem(copy, (void *)(UINTN)img.base, img.size);
	}

	struct collect trace = { 0 };
	bool started = false;
	if (opt.rec.on && opt.source == SOURCE_HW)
		st = recover_pending(app);
	if (opt.rec.on && opt.source == SOURCE_HW && EFI_ERROR(st)) {
		fail(app, RUN_FAILED, st, pending_refusal(st));
		sideband_images_forget();
		if (copy)
			FreePool(copy);
		image_release(&img, false);
		return st;
	}
	if (opt.source == SOURCE_HW && opt.cpus_given)
		st = trace_mp(app, &img, &started);
	else if (opt.source == SOURCE_HW)
		st = trace_hw(app, &img, &started, &trace);
	else if (opt.source == SOURCE_QEMU)
		st = trace_qemu(app, &img, &started);
	else if (copy)
		st = trace_synthetic(app, &img, &started, &trace, copy);
	else {
		fail(app, RUN_FAILED, EFI_OUT_OF_RESOURCES, "no memory to copy the image's code");
		st = EFI_OUT_OF_RESOURCES;
	}
	EFI_STATUS target_st = st;
	sideband_images_forget(); /* images loaded while traced are in it by now */
	st = EFI_SUCCESS;
	if (opt.rec.on) {
		/* the image returned: the region keeps the trace for recover */
		recorder_returned();
		recorder_manifest(&app->run);
		recorder_finish();
	}
	/* under QEMU the trace is the host's: the run is complete without one */
	bool have_trace = trace.buf || trace.spilled || (opt.source == SOURCE_QEMU && qemu_marked) ||
			  mp_traced;
	if (trace.spilled)
		st = trace.spill_status;
	else if (trace.buf && app->have_run)
		st = run_write_file(&app->run, "trace.pt", trace.buf, trace.len);
	if (trace.buf && opt.decode) {
		struct decode_item one = { trace.buf, trace.len, 0, 0 };
		decode_in_place(app, &one, 1, false, &img, copy, nimg);
	}
	uint64_t mp_bytes = 0;
	if (mp_traced) {
		static struct decode_item item[MP_TRACE_MAX];
		unsigned n = 0;
		for (unsigned i = 0; i < mp_res.n; i++) {
			struct mp_trace_cpu *r = &mp_res.cpu[i];
			if (!r->traced)
				continue;
			mp_bytes += r->len;
			if (EFI_ERROR(r->write_status) && !EFI_ERROR(st))
				st = r->write_status;
			if (r->buf)
				item[n++] = (struct decode_item){ r->buf, r->len, r->number, r->apic_id };
		}
		if (opt.decode && n)
			decode_in_place(app, item, n, true, &img, copy, nimg);
		for (unsigned i = 0; i < mp_res.n; i++)
			if (mp_res.cpu[i].buf)
				FreePool(mp_res.cpu[i].buf);
		trace.len = mp_bytes;
	}
	if (!have_trace)
		st = target_st; /* no trace: the failure was reported where it happened */
	if (have_trace) {
		/* the trace is the result; the traced code's own status is a fact of it */
		run_member(&app->run, "traced_exit_status", "\"%s\"", efi_status_name(target_st));
		char msg[320];
		struct strbuf sb;
		sb_init(&sb, msg, sizeof(msg));
		if (opt.source == SOURCE_QEMU)
			sb_printf(&sb, "QEMU trace markers around %s (efipt-qemu.so on the host "
				       "writes the trace); the traced code returned %s",
				  opt.connect ? "ConnectController" : img.path,
				  efi_status_name(target_st));
		else
			sb_printf(&sb, "%s trace of %s%s: %llu bytes; the traced code returned %s",
				  opt.source != SOURCE_HW ? "SYNTHETIC"
				  : opt.emulated_caps     ? "EMULATED Intel PT (efipt-qemu.so start=guest "
							    "holds it)"
							  : "Intel PT",
				  opt.connect ? "ConnectController" : img.path,
				  mp_traced ? " on every CPU traced" : "",
				  (unsigned long long)trace.len, efi_status_name(target_st));
		if (EFI_ERROR(st))
			sb_printf(&sb, "; writing %s failed: %s", mp_traced ? "a trace" : "trace.pt",
				  efi_status_name(st));
		if (mp_unstopped) {
			sb_puts(&sb, "; a CPU could not be stopped: its TraceEn may still be set");
			st = EFI_DEVICE_ERROR;
		}
		run_set_result(&app->run, EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st, msg);
		if (trace.buf)
			FreePool(trace.buf);
	}
	if (copy)
		FreePool(copy);
	if (opt.image)
		image_release(&img, started);
	return st;
}
