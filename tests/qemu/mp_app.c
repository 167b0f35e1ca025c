/*
 * Test-only UEFI application: work on every application processor through
 * EFI_MP_SERVICES_PROTOCOL.StartupAllAPs (one AP after the other), then on
 * the BSP, and return EFI_SUCCESS; EFI_UNSUPPORTED without MP services.
 * efipt.efi trace --cpus all traces it (tests/qemu/t_qemu_guest_smp.sh):
 * each AP's trace must hold mp_app_ap_procedure.
 * -DMP_APP_EXIT (mp_exit.efi): then, as an OS loader does, ExitBootServices
 * and no return: it says so on the debug console (port 0xe9) and powers
 * QEMU off through isa-debug-exit (port 0xf4), so that only efipt.efi's
 * ExitBootServices handler can have stopped the CPUs' tracing
 * (tests/qemu/t_qemu_guest_ebs.sh).
 */
#include <efi.h>
#include <efilib.h>

typedef VOID(EFIAPI *ap_procedure)(VOID *arg);

/* the first members of the PI spec's EFI_MP_SERVICES_PROTOCOL */
struct mp_services {
	EFI_STATUS(EFIAPI *get_number_of_processors)(struct mp_services *self, UINTN *all,
						     UINTN *enabled);
	void *get_processor_info;
	EFI_STATUS(EFIAPI *startup_all_aps)(struct mp_services *self, ap_procedure fn,
					    BOOLEAN single_thread, EFI_EVENT wait,
					    UINTN timeout_us, VOID *arg, UINTN **failed);
};

static __attribute__((noinline)) UINT32 step(UINT32 x)
{
	return (x & 1) ? 3 * x + 1 : x / 2;
}

static __attribute__((noinline)) UINT32 collatz(UINT32 n)
{
	UINT32 c = 0;
	while (n != 1) {
		n = step(n);
		c++;
	}
	return c;
}

static volatile UINT32 ap_sum, ap_runs;

#ifdef MP_APP_EXIT
static void say(const char *s)
{
	for (; *s; s++)
		__asm__ volatile("outb %0, %1" : : "a"(*s), "Nd"((UINT16)0xe9));
}

/* ExitBootServices with the current map key (again once if the map changed
 * in between, UEFI 2.10 7.4), then power-off: boot services are gone */
static void exit_boot_services(EFI_HANDLE image)
{
	static UINT8 map[64 * 1024];
	EFI_STATUS s = EFI_NOT_READY;
	for (int tries = 0; tries < 2 && EFI_ERROR(s); tries++) {
		UINTN size = sizeof(map), key = 0, dsize = 0;
		UINT32 dver = 0;
		s = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, (EFI_MEMORY_DESCRIPTOR *)map, &key,
				      &dsize, &dver);
		if (!EFI_ERROR(s))
			s = uefi_call_wrapper(BS->ExitBootServices, 2, image, key);
	}
	say(EFI_ERROR(s) ? "mp_app: ExitBootServices failed\n"
			 : "mp_app: ExitBootServices succeeded, powering off\n");
	__asm__ volatile("outb %0, %1" : : "a"((UINT8)0), "Nd"((UINT16)0xf4));
	for (;;)
		__asm__ volatile("hlt");
}
#endif

VOID EFIAPI mp_app_ap_procedure(VOID *arg);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);

/* runs on each AP in turn (single-threaded): no boot services here */
__attribute__((noinline)) VOID EFIAPI mp_app_ap_procedure(VOID *arg)
{
	UINT32 base = *(UINT32 *)arg, s = 0;
	for (UINT32 i = 1; i < 60; i++)
		s += collatz(base + i);
	ap_sum += s;
	ap_runs++;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	InitializeLib(image, st);
	EFI_GUID guid = { 0x3fdda605, 0xa76e, 0x4f46,
			  { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } };
	struct mp_services *mp;
	if (EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &guid, NULL, (void **)&mp))) {
		Print(L"mp_app: no MP services\n");
		return EFI_UNSUPPORTED;
	}
	UINTN all = 0, enabled = 0;
	mp->get_number_of_processors(mp, &all, &enabled);
	UINT32 base = 27;
	EFI_STATUS s = mp->startup_all_aps(mp, mp_app_ap_procedure, TRUE, NULL, 0, &base, NULL);
	UINT32 bsp = 0;
	for (UINT32 i = 1; i < 30; i++)
		bsp += collatz(base + i);
	Print(L"mp_app: %d CPUs, StartupAllAPs %r, %d APs ran the procedure (sum %d), BSP %d\n",
	      (int)all, s, (int)ap_runs, (int)ap_sum, (int)bsp);
#ifdef MP_APP_EXIT
	say(ap_runs + 1 == enabled && !EFI_ERROR(s) ? "mp_app: every AP ran the procedure\n"
						     : "mp_app: NOT every AP ran the procedure\n");
	exit_boot_services(image);
#endif
	return EFI_ERROR(s) ? s : (ap_runs + 1 == enabled ? EFI_SUCCESS : EFI_DEVICE_ERROR);
}
