/* Loading and running the image efipt traces (a driver, an application, an
 * OS loader) from the volume efipt.efi came from. */
#ifndef EFIPT_EFI_IMAGE_LOAD_H
#define EFIPT_EFI_IMAGE_LOAD_H

#include <efi.h>

#include "efi/app.h"

struct traced_image {
	EFI_HANDLE handle;
	EFI_LOADED_IMAGE *li; /* freed by the firmware once an application exits */
	uint64_t base, size;  /* where it was loaded: use these after the start */
	char path[256];     /* as given, with '\' separators */
	CHAR16 *options;    /* load options handed to the image (pool) */
	EFI_STATUS exit_status;
	UINTN exit_data_size;
};

/*
 * Load path (absolute "\dir\x.efi", or relative to efipt.efi's directory)
 * and give it argv[0..argc) as its command line. The image is loaded and
 * relocated but not started.
 */
EFI_STATUS image_load(struct app *app, const char *path, int argc, char **argv,
		      struct traced_image *img);

/* StartImage; records the image's exit status. */
EFI_STATUS image_start(struct traced_image *img);

/* Unload an image that was never started, and free what image_load took. */
void image_release(struct traced_image *img, bool started);

/* ConnectController(recursive) on every handle: runs drivers' Supported/Start. */
EFI_STATUS connect_all(UINTN *connected);

#endif
