/*
 * efipt.efi arm --next-boot [OPTIONS] | --show | --clear | --emulated-caps FILE
 *
 * Chooses what the firmware's own boot trace (edk2/EfiptPkg) records on
 * the next boot, from a USB stick: the options go to the UEFI variable
 * EfiptNextBoot (core/fwtrace.h), which EfiptPei reads instead of
 * PcdEfiptOptions and EfiptDxe deletes once used. The options are checked
 * as the firmware will parse them (fwtrace_parse_options) and, where this
 * CPU has Intel PT, validated against its CPUID exactly as the firmware
 * will: what the next boot would refuse is refused now, with the reason.
 * --emulated-caps FILE (QEMU TCG, test builds of the package) writes a CPU
 * profile to EfiptEmulatedCaps, whose PT the next boot then programs for
 * efipt-qemu.so start=guest (docs/edk2.md).
 */
#include <efi.h>
#include <efilib.h>

#include "core/fwtrace.h"
#include "core/mem.h"
#include "core/pt_caps.h"
#include "efi/app.h"
#include "efi/console.h"

#define VAR_ATTRIBUTES \
	(EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS)

static const char arm_usage[] =
	"usage: efipt.efi arm --next-boot [OPTIONS]\n"
	"       efipt.efi arm --show | --clear\n"
	"       efipt.efi arm --emulated-caps FILE\n"
	"\n"
	"Choose what the firmware's boot trace (EfiptPkg, docs/edk2.md) records on the\n"
	"next boot: the options are written to the UEFI variable EfiptNextBoot, which\n"
	"replaces the platform's PcdEfiptOptions for that one boot. Then reboot, and\n"
	"run 'efipt.efi collect'. --show prints the variable, --clear deletes it (and\n"
	"EfiptEmulatedCaps). --emulated-caps FILE, under QEMU's TCG only: the CPU\n"
	"profile (cpuid -r text) whose Intel PT a test build of the firmware\n"
	"(PcdEfiptEmulatedCaps) programs for efipt qemu --start guest --cpuid FILE.\n"
	"\n"
	"OPTIONS are trace's (efipt.efi trace --help; not --filter image=, --force)\n"
	"and:\n";

static struct {
	enum { ARM_NEXT_BOOT, ARM_SHOW, ARM_CLEAR, ARM_CAPS } what;
	const char *caps_file;
	char text[FWTRACE_OPTIONS_MAX];
	struct fwtrace_opts opts;
} arm;

void efi_help_arm(void)
{
	con_puts(arm_usage);
	char *u = AllocatePool(4096);
	if (u) {
		struct strbuf ub;
		sb_init(&ub, u, 4096);
		fwtrace_usage(&ub);
		con_puts(u);
		FreePool(u);
	}
}

EFI_STATUS efi_parse_arm(struct app *app)
{
	const char *first = app->argc > 1 ? app->argv[1] : "";
	if (!efipt_strcmp(first, "--show") || !efipt_strcmp(first, "--clear")) {
		if (app->argc > 2) {
			con_printf("efipt: arm %s takes nothing more, got '%s'\n", first, app->argv[2]);
			return EFI_INVALID_PARAMETER;
		}
		arm.what = first[2] == 's' ? ARM_SHOW : ARM_CLEAR;
		return EFI_SUCCESS;
	}
	if (!efipt_strcmp(first, "--emulated-caps")) {
		if (app->argc != 3) {
			con_puts("efipt: arm --emulated-caps takes one FILE\n");
			return EFI_INVALID_PARAMETER;
		}
		arm.what = ARM_CAPS;
		arm.caps_file = app->argv[2];
		return EFI_SUCCESS;
	}
	if (efipt_strcmp(first, "--next-boot")) {
		con_puts("efipt: arm: --next-boot OPTIONS, --show, --clear or --emulated-caps FILE "
			 "(efipt.efi arm --help)\n");
		return EFI_INVALID_PARAMETER;
	}
	arm.what = ARM_NEXT_BOOT;
	/* the words as one text, as the firmware will split it (quoted where
	 * a word has a blank) */
	struct strbuf tb;
	sb_init(&tb, arm.text, sizeof(arm.text));
	for (int i = 2; i < app->argc; i++) {
		const char *w = app->argv[i];
		bool blank = false;
		for (const char *c = w; *c; c++)
			blank |= *c == ' ' || *c == '\t';
		sb_printf(&tb, "%s%s%s%s", i > 2 ? " " : "", blank ? "\"" : "", w, blank ? "\"" : "");
	}
	if (tb.truncated) {
		con_printf("efipt: arm: the options are longer than the %u bytes the firmware reads\n",
			   (unsigned)sizeof(arm.text) - 1);
		return EFI_INVALID_PARAMETER;
	}
	char err[300];
	struct strbuf es;
	sb_init(&es, err, sizeof(err));
	if (fwtrace_parse_options(&arm.opts, arm.text, &es)) {
		con_printf("efipt: arm: %s\n", err);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

static EFI_STATUS show(struct app *app, EFI_GUID *guid, CHAR16 *name)
{
	char buf[FWTRACE_OPTIONS_MAX + 8];
	UINTN size = sizeof(buf) - 1;
	UINT32 attr;
	EFI_STATUS st = uefi_call_wrapper(RT->GetVariable, 5, name, guid, &attr, &size, buf);
	if (st == EFI_NOT_FOUND) {
		con_puts("efipt: no EfiptNextBoot variable: the next boot uses the platform's "
			 "PcdEfiptOptions\n");
		run_set_result(&app->run, RUN_OK, EFI_SUCCESS, "no EfiptNextBoot variable");
		return EFI_SUCCESS;
	}
	if (EFI_ERROR(st)) {
		con_printf("efipt: reading EfiptNextBoot failed: %s\n", efi_status_name(st));
		run_set_result(&app->run, RUN_FAILED, st, "reading EfiptNextBoot failed");
		return st;
	}
	char text[FWTRACE_OPTIONS_MAX], why[200];
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	if (fwtrace_options_text((const uint8_t *)buf, size, text, sizeof(text), &ws)) {
		con_printf("efipt: EfiptNextBoot is not usable (%s): the next boot will refuse it\n",
			   why);
		run_set_result(&app->run, RUN_OK, EFI_SUCCESS, why);
		return EFI_SUCCESS;
	}
	con_printf("efipt: the next boot traces with: %s\n", text[0] ? text : "(defaults)");
	char esc[FWTRACE_OPTIONS_MAX * 2];
	struct strbuf eb;
	sb_init(&eb, esc, sizeof(esc));
	sb_json_escape(&eb, text);
	run_member(&app->run, "next_boot", "{\"options\": \"%s\", \"written\": false}", esc);
	run_set_result(&app->run, RUN_OK, EFI_SUCCESS, text);
	return EFI_SUCCESS;
}

/* --emulated-caps FILE: the profile, checked as the firmware will read it. */
static EFI_STATUS arm_caps(struct app *app, EFI_GUID *guid)
{
	char why[300];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	app_detect_cpu(app);
	CHAR16 path[300], name[32];
	ascii_to_ucs2(path, 300, arm.caps_file);
	ascii_to_ucs2(name, 32, FWTRACE_CAPS_VARIABLE_NAME);
	char *text = NULL;
	UINTN len = 0;
	UINT64 size = 0;
	static struct cpuid_set prof;
	struct ptcaps caps;
	unsigned line = 0;
	EFI_STATUS st = EFI_INVALID_PARAMETER;
	if (efipt_strcmp(app->caps.hypervisor, "TCGTCGTCGTCG")) {
		sb_printf(&sb, "arm --emulated-caps: only under QEMU's TCG (CPUID hypervisor "
			       "\"TCGTCGTCGTCG\"), this is \"%s\"", app->caps.hypervisor);
		st = EFI_UNSUPPORTED;
	} else if ((st = esp_read_head(&app->esp, path, FWTRACE_CAPS_MAX, &text, &len, &size)),
		   EFI_ERROR(st)) {
		sb_printf(&sb, "arm --emulated-caps %s: cannot read it: %s", arm.caps_file,
			  efi_status_name(st));
	} else if (size > len) {
		sb_printf(&sb, "arm --emulated-caps %s: %llu bytes, the firmware reads at most %u",
			  arm.caps_file, (unsigned long long)size, FWTRACE_CAPS_MAX);
		st = EFI_INVALID_PARAMETER;
	} else {
		int e = cpuidtxt_parse(&prof, text, len, 0, &line);
		ptcaps_parse(&caps, &prof);
		if (e)
			sb_printf(&sb, "arm --emulated-caps %s: line %u: %s", arm.caps_file, line,
				  cpuidtxt_errstr(e));
		else if (caps.absent != PTCAPS_PRESENT)
			sb_printf(&sb, "arm --emulated-caps %s: this CPU profile has no Intel PT",
				  arm.caps_file);
		else
			st = uefi_call_wrapper(RT->SetVariable, 5, name, guid, VAR_ATTRIBUTES, len,
					       text);
		if (!e && caps.absent == PTCAPS_PRESENT && EFI_ERROR(st))
			sb_printf(&sb, "writing the EfiptEmulatedCaps variable failed: %s",
				  efi_status_name(st));
		else if (!sb.len)
			sb_printf(&sb, "armed: a test build of the firmware emulates the Intel PT of "
				       "%s under QEMU's TCG", arm.caps_file);
		else
			st = EFI_INVALID_PARAMETER;
	}
	if (text)
		FreePool(text);
	con_printf("efipt: %s\n", why);
	run_set_result(&app->run, EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st, why);
	return st;
}

EFI_STATUS efi_cmd_arm(struct app *app)
{
	EFI_GUID guid = FWTRACE_VARIABLE_GUID_INIT;
	CHAR16 name[32];
	ascii_to_ucs2(name, 32, FWTRACE_VARIABLE_NAME);
	if (arm.what == ARM_SHOW)
		return show(app, &guid, name);
	if (arm.what == ARM_CAPS)
		return arm_caps(app, &guid);
	if (arm.what == ARM_CLEAR) {
		CHAR16 caps[32];
		ascii_to_ucs2(caps, 32, FWTRACE_CAPS_VARIABLE_NAME);
		uefi_call_wrapper(RT->SetVariable, 5, caps, &guid, VAR_ATTRIBUTES, 0, NULL);
		EFI_STATUS st = uefi_call_wrapper(RT->SetVariable, 5, name, &guid, VAR_ATTRIBUTES, 0,
						  NULL);
		if (st == EFI_NOT_FOUND)
			st = EFI_SUCCESS;
		con_printf("efipt: EfiptNextBoot %s\n", EFI_ERROR(st) ? "not deleted" : "deleted");
		run_set_result(&app->run, EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st,
			       EFI_ERROR(st) ? "deleting EfiptNextBoot failed" : "EfiptNextBoot deleted");
		return st;
	}

	/* what the next boot will do with them on this CPU */
	app_detect_cpu(app);
	char msg[600];
	struct strbuf ms;
	sb_init(&ms, msg, sizeof(msg));
	if (arm.opts.source == FWTRACE_SRC_HW && !arm.opts.off) {
		if (app->caps.absent != PTCAPS_PRESENT) {
			ptcaps_absent_line(&app->caps, &ms);
			con_printf("efipt: note: %s: the next boot will record why it cannot trace\n", msg);
		} else {
			struct ptcfg_settings set;
			if (ptcfg_validate(&arm.opts.cfg, &app->caps, &set, &ms)) {
				char why[700];
				struct strbuf wb;
				sb_init(&wb, why, sizeof(why));
				sb_printf(&wb, "not armed: the next boot would refuse these options: %s", msg);
				con_printf("efipt: %s\n", why);
				run_set_result(&app->run, RUN_UNSUPPORTED, EFI_UNSUPPORTED, why);
				return EFI_UNSUPPORTED;
			}
			if (ms.len)
				con_printf("efipt: %s", msg);
		}
	}
	EFI_GUID table = FWTRACE_TABLE_GUID_INIT;
	bool have_table = false;
	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++)
		have_table |= !CompareMem(&ST->ConfigurationTable[i].VendorGuid, &table, sizeof(table));
	if (!have_table)
		con_puts("efipt: note: this firmware publishes no EfiptPkg table: nothing may read the "
			 "variable at the next boot\n");
	/* with its NUL: the defaults (no options) are a variable too, not a deletion */
	UINTN len = efipt_strlen(arm.text) + 1;
	EFI_STATUS st = uefi_call_wrapper(RT->SetVariable, 5, name, &guid, VAR_ATTRIBUTES, len,
					  arm.text);
	char esc[FWTRACE_OPTIONS_MAX * 2];
	struct strbuf eb;
	sb_init(&eb, esc, sizeof(esc));
	sb_json_escape(&eb, arm.text);
	run_member(&app->run, "next_boot", "{\"options\": \"%s\", \"written\": %s}", esc,
		   EFI_ERROR(st) ? "false" : "true");
	char res[700];
	struct strbuf rb;
	sb_init(&rb, res, sizeof(res));
	if (EFI_ERROR(st))
		sb_printf(&rb, "writing the EfiptNextBoot variable failed: %s", efi_status_name(st));
	else
		sb_printf(&rb, "armed: the next boot traces with: %s",
			  arm.text[0] ? arm.text : "(defaults)");
	con_printf("efipt: %s\n", res);
	run_set_result(&app->run, EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st, res);
	return st;
}
