/*
 * Test-only UEFI application for images loaded while efipt.efi traces
 * (efi/load_watch.c, tests/qemu/t_qemu_loads.sh): it loads and starts
 * \EFI\tools\child.efi (an application: the firmware unloads it when it
 * returns, freeing its memory) 40 times, then loads and starts
 * \EFI\tools\child2.efi,
 * a different image of the same size, which the firmware's allocator
 * places in the memory the first one had. child.efi is this application
 * again, child2.efi this application built with LOAD_APP_VARIANT (its code
 * a few bytes further on), each told by its load options ("child") to
 * return at once.
 */
#include <efi.h>
#include <efilib.h>
#include <stdbool.h>

#define LOAD_APP_CHILDREN 40

static CHAR16 child_opt[] = L"child";

static EFI_STATUS run_child(EFI_HANDLE parent, EFI_HANDLE dev, CHAR16 *path, bool as_child)
{
	EFI_DEVICE_PATH *dp = FileDevicePath(dev, path);
	if (!dp)
		return EFI_OUT_OF_RESOURCES;
	EFI_HANDLE h = NULL;
	EFI_STATUS st = uefi_call_wrapper(BS->LoadImage, 6, FALSE, parent, dp, NULL, 0, &h);
	FreePool(dp);
	if (EFI_ERROR(st))
		return st;
	if (as_child) {
		EFI_LOADED_IMAGE *li = NULL;
		uefi_call_wrapper(BS->HandleProtocol, 3, h, &LoadedImageProtocol, (void **)&li);
		if (li) {
			li->LoadOptions = child_opt;
			li->LoadOptionsSize = sizeof(child_opt);
		}
	}
	return uefi_call_wrapper(BS->StartImage, 3, h, NULL, NULL);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
#ifdef LOAD_APP_VARIANT
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop");
#endif
	InitializeLib(image, systab);
	EFI_LOADED_IMAGE *self = NULL;
	uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **)&self);
	if (!self)
		return EFI_LOAD_ERROR;
	if (self->LoadOptionsSize == sizeof(child_opt) &&
	    !CompareMem(self->LoadOptions, child_opt, sizeof(child_opt)))
		return EFI_SUCCESS;
	/* more loads than the watch keeps without allocating (32) */
	for (int i = 0; i < LOAD_APP_CHILDREN; i++) {
		EFI_STATUS st = run_child(image, self->DeviceHandle, L"\\EFI\\tools\\child.efi", true);
		if (EFI_ERROR(st))
			return st;
	}
	return run_child(image, self->DeviceHandle, L"\\EFI\\tools\\child2.efi", true);
}
