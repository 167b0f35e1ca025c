/*
 * efipt.efi caps: is Intel PT there, and what can it do (SDM 33.3.1).
 * MSRs are read only when CPUID enumerates PT: on other CPUs an RTIT MSR
 * access raises #GP (33.2.8), and under emulators it may silently "work".
 */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_msr.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/gp_guard.h"

void app_detect_cpu(struct app *app)
{
	cpuid_set_capture(&app->cpuid, cpu_native_ops.cpuid, cpu_native_ops.ctx);
	ptcaps_parse(&app->caps, &app->cpuid);
	if (!app->have_run)
		return;
	app->run.caps = &app->caps;
	UINTN cap = 32 * 1024;
	char *buf = AllocatePool(cap);
	if (!buf)
		return;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	cpuidtxt_write(&app->cpuid, &sb);
	run_write_file(&app->run, "cpuid.txt", buf, sb.len);
	FreePool(buf);
}

EFI_STATUS efi_parse_caps(struct app *app)
{
	if (app->argc > 1) {
		con_printf("efipt: caps takes no arguments, got '%s'\n", app->argv[1]);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

EFI_STATUS efi_cmd_caps(struct app *app)
{
	app_detect_cpu(app);
	UINTN cap = 16 * 1024;
	char *buf = AllocatePool(cap);
	if (!buf)
		return EFI_OUT_OF_RESOURCES;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	ptcaps_report(&app->caps, &sb);
	con_puts(buf);

	EFI_STATUS st = EFI_SUCCESS;
	sb_reset(&sb);
	if (app->caps.absent != PTCAPS_PRESENT) {
		ptcaps_absent_line(&app->caps, &sb);
		st = EFI_UNSUPPORTED;
		run_set_result(&app->run, RUN_UNSUPPORTED, st, buf);
	} else {
		uint64_t ctl = 0;
		gp_guard_install();
		int fault = cpu_native_ops.rdmsr(cpu_native_ops.ctx, MSR_IA32_RTIT_CTL, &ctl);
		gp_guard_remove();
		if (fault) {
			con_puts("efipt: RDMSR IA32_RTIT_CTL raised #GP although CPUID enumerates "
				 "Intel PT (a hypervisor hiding it?)\n");
		} else {
			sb_printf(&sb, "IA32_RTIT_CTL 0x%016llx: TraceEn=%u%s", (unsigned long long)ctl,
				  (unsigned)(ctl & RTIT_CTL_TRACEEN),
				  (ctl & RTIT_CTL_TRACEEN) ? " (firmware is already tracing)" : "");
			con_printf("%s\n", buf);
			run_member(&app->run, "rtit_ctl_at_start", "\"0x%llx\"",
				   (unsigned long long)ctl);
		}
		run_set_result(&app->run, RUN_OK, st, "Intel PT supported");
	}
	FreePool(buf);
	return st;
}
