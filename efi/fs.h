/* Files on the volume efipt.efi was loaded from (the ESP, a USB stick). */
#ifndef EFIPT_EFI_FS_H
#define EFIPT_EFI_FS_H

#include <efi.h>

struct esp {
	EFI_FILE_HANDLE root;
	CHAR16 image_dir[256]; /* directory of efipt.efi, e.g. \EFI\BOOT */
};

/* Open the volume and remember the directory the image came from. */
EFI_STATUS esp_open(struct esp *esp, EFI_LOADED_IMAGE *image);
void esp_close(struct esp *esp);

/* Read a whole file (at most max bytes) into pool memory, NUL appended. */
EFI_STATUS esp_read_file(struct esp *esp, const CHAR16 *path, UINTN max, char **data,
			 UINTN *len);

/* Create a directory (and its parents); existing directories are fine. */
EFI_STATUS esp_mkdir(struct esp *esp, const CHAR16 *path);
/* Does the path exist? */
BOOLEAN esp_exists(struct esp *esp, const CHAR16 *path);

/*
 * Write a file completely or not at all: the data goes to NAME.tmp, is
 * flushed, and only then renamed to NAME (replacing an older NAME).
 * dir is the directory, name the file name without path.
 */
EFI_STATUS esp_write_atomic(struct esp *esp, const CHAR16 *dir, const CHAR16 *name,
			    const void *data, UINTN len);

/* ASCII -> UCS-2 into a fixed buffer (truncates, always terminates). */
void ascii_to_ucs2(CHAR16 *dst, UINTN cap, const char *src);
/* UCS-2 -> ASCII ('?' for anything outside 0x20..0x7e except blanks). */
void ucs2_to_ascii(char *dst, UINTN cap, const CHAR16 *src);

/* Short text for an EFI_STATUS ("EFI_NOT_FOUND"). */
const char *efi_status_name(EFI_STATUS st);

#endif
