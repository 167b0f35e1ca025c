/*
 * efipt.efi selftest: checks for firmware CI. Every check is a test case in
 * selftest.json and in a JUnit XML file (selftest.xml) in the run directory.
 *
 *  - core self-checks: the packet codec and the x86 decoder, run here in
 *    firmware, compiled exactly as the tracing code is;
 *  - the #GP guard: a deliberately faulting load must come back as an error;
 *  - output buffers: ToPA and single-range layouts allocated from this
 *    machine's memory map, aligned as 33.2.7 demands, tables as written;
 *  - tracing: each output mode the CPU supports (needs Intel PT).
 */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_fault.h"
#include "arch/x86_64/cpu_ops.h"
#include "core/pt_flow.h"
#include "core/pt_pkt.h"
#include "core/x86_insn.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/gp_guard.h"
#include "efi/selftest_trace.h"
#include "efi/trace_mem.h"

#define MAX_CASES 16

struct selftest {
	unsigned n, failed, skipped;
	struct {
		const char *name;
		const char *result; /* "pass", "fail", "skip" */
		char detail[160];
	} c[MAX_CASES];
};

static void record(struct selftest *t, const char *name, const char *result, const char *detail)
{
	if (t->n >= MAX_CASES)
		return;
	t->c[t->n].name = name;
	t->c[t->n].result = result;
	struct strbuf sb;
	sb_init(&sb, t->c[t->n].detail, sizeof(t->c[t->n].detail));
	sb_puts(&sb, detail);
	t->n++;
	if (result[0] == 'f')
		t->failed++;
	if (result[0] == 's')
		t->skipped++;
	con_printf("selftest %-24s %s%s%s\n", name,
		   result[0] == 'p' ? "PASS" : result[0] == 'f' ? "FAIL" : "SKIP",
		   detail[0] ? ": " : "", detail);
}

static void check_gp_guard(struct selftest *t)
{
	if (EFI_ERROR(gp_guard_install())) {
		record(t, "gp-guard", "skip", "no #GP handler could be registered");
		return;
	}
	UINTN before = gp_guard_hits();
	/* bit 63 set, bits 62:47 clear: non-canonical in 4- and 5-level paging */
	int r = cpu_probe_read(0x8000000000000000ull);
	gp_guard_remove();
	if (r == CPU_FAULT_GP && gp_guard_hits() == before + 1)
		record(t, "gp-guard", "pass", "");
	else
		record(t, "gp-guard", "fail", "a non-canonical load did not come back as #GP");
}

/*
 * Lay out a trace buffer in real firmware memory and read it back: every
 * region aligned to its size and below MAXPHYADDR, every ToPA entry in
 * memory equal to what the layout says, everything freed again.
 */
static void check_output(struct selftest *t, const char *name, enum ptcfg_output kind,
			 enum ptcfg_mode mode, uint64_t size, unsigned maxphyaddr)
{
	static struct ptout_region reg[64];
	static struct ptout_table tab[4];
	struct ptcfg_settings set = { 0 };
	set.output = kind;
	set.mode = mode;
	set.size = size;
	set.topa_multi = true;
	set.maxphyaddr = maxphyaddr;
	struct ptout out;
	ptout_init(&out, reg, 64, tab, 4);
	char err[160];
	struct strbuf sb;
	sb_init(&sb, err, sizeof(err));
	if (ptout_build(&out, &set, &efi_trace_mem, &sb)) {
		record(t, name, "fail", err);
		return;
	}
	const char *bad = NULL;
	uint64_t total = 0;
	for (unsigned i = 0; i < out.nreg && !bad; i++) {
		if (out.reg[i].base & (out.reg[i].size - 1))
			bad = "a region is not aligned to its size";
		if (maxphyaddr < 64 && out.reg[i].base + out.reg[i].size > (1ull << maxphyaddr))
			bad = "a region lies above MAXPHYADDR";
		total += out.reg[i].size;
	}
	for (unsigned ti = 0; ti < out.ntab && !bad; ti++)
		for (unsigned e = 0; e <= out.tab[ti].nout && !bad; e++)
			if (*(volatile uint64_t *)(UINTN)(out.tab[ti].phys + 8ull * e) !=
			    ptout_entry(&out, ti, e))
				bad = "a ToPA entry in memory differs from the layout";
	if (!bad && total != out.size)
		bad = "regions do not add up to the buffer size";
	unsigned nreg = out.nreg, ntab = out.ntab;
	ptout_free(&out, &efi_trace_mem);
	sb_reset(&sb);
	if (!bad)
		sb_printf(&sb, "%llu KiB in %u region%s, %u ToPA table%s",
			  (unsigned long long)(size >> 10), nreg, nreg == 1 ? "" : "s", ntab,
			  ntab == 1 ? "" : "s");
	record(t, name, bad ? "fail" : "pass", bad ? bad : err);
}

/* Text for an XML attribute value. */
static void xml_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '"': sb_puts(sb, "&quot;"); break;
		case '&': sb_puts(sb, "&amp;"); break;
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		default: sb_putc(sb, *s); break;
		}
	}
}

static void write_reports(struct app *app, struct selftest *t)
{
	UINTN cap = 16 * 1024;
	char *buf = AllocatePool(cap);
	if (!buf)
		return;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_printf(&sb, "{\"tests\": %u, \"failed\": %u, \"skipped\": %u, \"cases\": [", t->n,
		  t->failed, t->skipped);
	for (unsigned i = 0; i < t->n; i++) {
		sb_printf(&sb, "%s\n  {\"name\": \"%s\", \"result\": \"%s\", \"detail\": \"",
			  i ? "," : "", t->c[i].name, t->c[i].result);
		sb_json_escape(&sb, t->c[i].detail);
		sb_puts(&sb, "\"}");
	}
	sb_puts(&sb, "\n]}\n");
	if (!sb.truncated)
		run_write_file(&app->run, "selftest.json", buf, sb.len);

	sb_reset(&sb);
	sb_printf(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<testsuite name=\"efipt.selftest\" tests=\"%u\" failures=\"%u\" "
		       "skipped=\"%u\">\n",
		  t->n, t->failed, t->skipped);
	for (unsigned i = 0; i < t->n; i++) {
		sb_printf(&sb, "  <testcase classname=\"efipt\" name=\"%s\"", t->c[i].name);
		if (t->c[i].result[0] == 'p') {
			sb_puts(&sb, "/>\n");
			continue;
		}
		sb_printf(&sb, ">\n    <%s message=\"",
			  t->c[i].result[0] == 'f' ? "failure" : "skipped");
		xml_escape(&sb, t->c[i].detail); /* may quote a CPU vendor string */
		sb_puts(&sb, "\"/>\n  </testcase>\n");
	}
	sb_puts(&sb, "</testsuite>\n");
	if (!sb.truncated)
		run_write_file(&app->run, "selftest.xml", buf, sb.len);
	FreePool(buf);
}

EFI_STATUS efi_parse_selftest(struct app *app)
{
	if (app->argc > 1) {
		con_printf("efipt: selftest takes no arguments, got '%s'\n", app->argv[1]);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

EFI_STATUS efi_cmd_selftest(struct app *app)
{
	static struct selftest t;
	t.n = t.failed = t.skipped = 0;
	app_detect_cpu(app);

	int r = ptpkt_selfcheck();
	record(&t, "packet-codec", r == 0 ? "pass" : "fail",
	       r == 0 ? "" : "encode/decode of every packet type disagrees");
	r = x86_selfcheck();
	record(&t, "x86-decoder", r == 0 ? "pass" : "fail",
	       r == 0 ? "" : "known encodings decoded wrongly");
	r = ptflow_selfcheck();
	record(&t, "flow-decoder", r == 0 ? "pass" : "fail",
	       r == 0 ? "" : "a built-in trace decoded to the wrong instructions");
	check_gp_guard(&t);
	check_output(&t, "output-topa", PTCFG_OUT_TOPA, PTCFG_MODE_STOP, 96ull << 20,
		     app->caps.maxphyaddr);
	check_output(&t, "output-single", PTCFG_OUT_SINGLE, PTCFG_MODE_WRAP, 1ull << 20,
		     app->caps.maxphyaddr);

	if (app->caps.absent != PTCAPS_PRESENT) {
		char why[160];
		struct strbuf sb;
		sb_init(&sb, why, sizeof(why));
		ptcaps_absent_line(&app->caps, &sb);
		record(&t, "trace", "skip", why);
	} else {
		static const struct {
			const char *name;
			enum ptcfg_output output;
			enum ptcfg_mode mode;
			uint64_t size;
		} modes[] = {
			{ "trace-topa-stop", PTCFG_OUT_TOPA, PTCFG_MODE_STOP, 64u << 10 },
			{ "trace-topa-wrap", PTCFG_OUT_TOPA, PTCFG_MODE_WRAP, 64u << 10 },
			/* 4 KiB: within TGL052/ADL037/RPL017's safe single-range size */
			{ "trace-single", PTCFG_OUT_SINGLE, PTCFG_MODE_WRAP, 4u << 10 },
		};
		for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			char detail[160];
			struct strbuf sb;
			sb_init(&sb, detail, sizeof(detail));
			int got = selftest_trace_mode(&app->caps, modes[i].output, modes[i].mode,
						    modes[i].size, &sb);
			record(&t, modes[i].name, got > 0 ? "pass" : got == 0 ? "fail" : "skip", detail);
		}
	}
	write_reports(app, &t);

	EFI_STATUS st = EFI_SUCCESS;
	char msg[160];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	sb_printf(&sb, "%u checks: %u passed, %u failed, %u skipped", t.n,
		  t.n - t.failed - t.skipped, t.failed, t.skipped);
	con_printf("selftest: %s\n", msg);
	if (t.failed) {
		st = EFI_DEVICE_ERROR;
		run_set_result(&app->run, "failed", st, msg);
	} else if (app->caps.absent != PTCAPS_PRESENT) {
		st = EFI_UNSUPPORTED;
		run_set_result(&app->run, "unsupported", st, msg);
	} else {
		run_set_result(&app->run, "ok", st, msg);
	}
	return st;
}
