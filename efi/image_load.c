/* Load, start and connect; see image_load.h. */
#include <efi.h>
#include <efilib.h>

#include "core/mem.h"
#include "efi/console.h"
#include "efi/image_load.h"

static void make_path(struct app *app, const char *in, CHAR16 *out, UINTN cap)
{
	UINTN n = 0;
	if (in[0] != '\\' && in[0] != '/') {
		for (const CHAR16 *d = app->esp.image_dir; *d && n + 2 < cap; d++)
			out[n++] = *d;
		if (n && out[n - 1] != L'\\')
			out[n++] = L'\\';
	}
	for (; *in && n + 1 < cap; in++)
		out[n++] = *in == '/' ? L'\\' : (CHAR16)(unsigned char)*in;
	out[n] = 0;
}

EFI_STATUS image_load(struct app *app, const char *path, int argc, char **argv,
		      struct traced_image *img)
{
	efipt_memset(img, 0, sizeof(*img));
	CHAR16 wpath[256];
	make_path(app, path, wpath, 256);
	ucs2_to_ascii(img->path, sizeof(img->path), wpath);
	if (!esp_exists(&app->esp, wpath)) {
		con_printf("efipt: %s: no such file on the volume efipt.efi was loaded from\n",
			   img->path);
		return EFI_NOT_FOUND;
	}
	EFI_DEVICE_PATH *dp = FileDevicePath(app->image->DeviceHandle, wpath);
	if (!dp)
		return EFI_OUT_OF_RESOURCES;
	EFI_STATUS st = uefi_call_wrapper(BS->LoadImage, 6, FALSE, app->image_handle, dp, NULL, 0,
					  &img->handle);
	FreePool(dp);
	if (EFI_ERROR(st)) {
		con_printf("efipt: cannot load %s: %s%s\n", img->path, efi_status_name(st),
			   st == EFI_SECURITY_VIOLATION ? " (Secure Boot refused it)"
			   : st == EFI_UNSUPPORTED      ? " (not an x64 EFI image?)"
							: "");
		img->handle = NULL;
		return st;
	}
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	st = uefi_call_wrapper(BS->HandleProtocol, 3, img->handle, &lip, (void **)&img->li);
	if (EFI_ERROR(st)) {
		image_release(img, false);
		return st;
	}
	img->base = (UINTN)img->li->ImageBase;
	img->size = img->li->ImageSize;
	/* the image's command line: its own name, then the arguments */
	UINTN chars = efipt_strlen(img->path) + 1;
	for (int i = 0; i < argc; i++)
		chars += efipt_strlen(argv[i]) + 3;
	img->options = AllocatePool((chars + 1) * sizeof(CHAR16));
	if (!img->options) {
		image_release(img, false);
		return EFI_OUT_OF_RESOURCES;
	}
	UINTN n = 0;
	for (const char *p = img->path; *p; p++)
		img->options[n++] = (CHAR16)(unsigned char)*p;
	for (int i = 0; i < argc; i++) {
		img->options[n++] = L' ';
		bool quote = false;
		for (const char *p = argv[i]; *p; p++)
			quote |= *p == ' ';
		if (quote)
			img->options[n++] = L'"';
		for (const char *p = argv[i]; *p; p++)
			img->options[n++] = (CHAR16)(unsigned char)*p;
		if (quote)
			img->options[n++] = L'"';
	}
	img->options[n] = 0;
	img->li->LoadOptions = img->options;
	img->li->LoadOptionsSize = (UINT32)((n + 1) * sizeof(CHAR16));
	return EFI_SUCCESS;
}

EFI_STATUS image_start(struct traced_image *img)
{
	CHAR16 *exit_data = NULL;
	img->exit_status = uefi_call_wrapper(BS->StartImage, 3, img->handle,
					     &img->exit_data_size, &exit_data);
	img->li = NULL; /* an application's protocol data is gone now */
	if (exit_data)
		FreePool(exit_data);
	return img->exit_status;
}

void image_release(struct traced_image *img, bool started)
{
	/* A started application is unloaded by the firmware when it exits; a
	 * driver stays resident by design. Only a never-started image is ours. */
	if (img->handle && !started)
		uefi_call_wrapper(BS->UnloadImage, 1, img->handle);
	img->handle = NULL;
	img->li = NULL;
	if (img->options && !started)
		FreePool(img->options);
	/* after a start the image may still point at its options: keep them */
	img->options = NULL;
}

EFI_STATUS connect_all(UINTN *connected)
{
	UINTN nh = 0;
	EFI_HANDLE *h = NULL;
	*connected = 0;
	EFI_STATUS st = uefi_call_wrapper(BS->LocateHandleBuffer, 5, AllHandles, NULL, NULL, &nh,
					  &h);
	if (EFI_ERROR(st))
		return st;
	for (UINTN i = 0; i < nh; i++)
		if (!EFI_ERROR(uefi_call_wrapper(BS->ConnectController, 4, h[i], NULL, NULL, TRUE)))
			(*connected)++;
	FreePool(h);
	return EFI_SUCCESS;
}
