/*
 * Test-only UEFI application: firmware without MP services for efipt.efi
 * (tests/qemu/t_qemu_nomp.sh). Booted as BOOTX64.EFI, it uninstalls
 * EFI_MP_SERVICES_PROTOCOL from every handle that has it, checks that
 * LocateProtocol no longer finds it, then loads and starts
 * \EFI\BOOT\efipt.efi (which reads efipt.args beside itself) and shuts
 * the machine down (ResetSystem) when it returns. What it does is said on
 * the debug console (port 0xe9).
 */
#include <efi.h>
#include <efilib.h>

static EFI_GUID mp_guid = { 0x3fdda605, 0xa76e, 0x4f46,
			    { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } };

static void say(const char *s)
{
	for (; *s; s++)
		__asm__ volatile("outb %0, %1" : : "a"(*s), "Nd"((UINT16)0xe9));
}

static void power_off(void)
{
	uefi_call_wrapper(RT->ResetSystem, 4, EfiResetShutdown, EFI_SUCCESS, 0, NULL);
}

static void say_status(EFI_STATUS s)
{
	char b[] = "nomp: efipt.efi returned 0x0000000000000000\n";
	for (int i = 0; i < 16; i++)
		b[27 + i] = "0123456789abcdef"[(s >> (60 - 4 * i)) & 15];
	say(b);
}

/* EFI_SUCCESS when no handle has MP services any more */
static EFI_STATUS remove_mp_services(void)
{
	UINTN n = 0;
	EFI_HANDLE *h = NULL;
	EFI_STATUS s = uefi_call_wrapper(BS->LocateHandleBuffer, 5, ByProtocol, &mp_guid, NULL, &n,
					 &h);
	if (EFI_ERROR(s))
		return EFI_NOT_FOUND; /* none to begin with: not what the test wants */
	for (UINTN i = 0; i < n && !EFI_ERROR(s); i++) {
		void *iface = NULL;
		s = uefi_call_wrapper(BS->HandleProtocol, 3, h[i], &mp_guid, &iface);
		if (!EFI_ERROR(s))
			s = uefi_call_wrapper(BS->UninstallProtocolInterface, 3, h[i], &mp_guid,
					      iface);
	}
	FreePool(h);
	void *mp = NULL;
	if (!EFI_ERROR(s) &&
	    !EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &mp_guid, NULL, &mp)))
		s = EFI_ALREADY_STARTED;
	return s;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	InitializeLib(image, st);
	if (EFI_ERROR(remove_mp_services())) {
		say("nomp: MP services could not be removed\n");
		power_off();
		return EFI_ABORTED;
	}
	say("nomp: MP services removed\n");
	EFI_LOADED_IMAGE *li = NULL;
	EFI_HANDLE child = NULL;
	EFI_STATUS s = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol,
					 (void **)&li);
	if (!EFI_ERROR(s)) {
		EFI_DEVICE_PATH *dp = FileDevicePath(li->DeviceHandle, L"\\EFI\\BOOT\\efipt.efi");
		s = dp ? uefi_call_wrapper(BS->LoadImage, 6, FALSE, image, dp, NULL, 0, &child)
		       : EFI_OUT_OF_RESOURCES;
	}
	if (!EFI_ERROR(s))
		s = uefi_call_wrapper(BS->StartImage, 3, child, NULL, NULL);
	say_status(s);
	power_off();
	return s;
}
