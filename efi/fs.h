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

/* Read at most max bytes from the start of a file into pool memory (NUL
 * appended); *size receives the whole file's size. */
EFI_STATUS esp_read_head(struct esp *esp, const CHAR16 *path, UINTN max, char **data,
			 UINTN *len, UINT64 *size);

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

/* The same in steps, for data that arrives in pieces (a trace read straight
 * out of its buffer): create NAME.tmp, append, then commit (flush, replace
 * NAME) or abort (delete NAME.tmp). total is only for progress lines. */
struct esp_file {
	EFI_FILE_HANDLE f;
	CHAR16 name[128], tmp_path[320], final_path[320];
	UINT64 total, done;
	unsigned shown;
};
EFI_STATUS esp_file_create(struct esp *esp, const CHAR16 *dir, const CHAR16 *name,
			   UINT64 total, struct esp_file *w);
EFI_STATUS esp_file_append(struct esp_file *w, const void *data, UINTN len);
EFI_STATUS esp_file_commit(struct esp *esp, struct esp_file *w);
void esp_file_abort(struct esp_file *w);

/* Delete dir\name if it exists. */
EFI_STATUS esp_delete(struct esp *esp, const CHAR16 *dir, const CHAR16 *name);

/* ASCII -> UCS-2 into a fixed buffer (truncates, always terminates). */
void ascii_to_ucs2(CHAR16 *dst, UINTN cap, const char *src);
/* UCS-2 -> ASCII ('?' for anything outside 0x20..0x7e except blanks). */
void ucs2_to_ascii(char *dst, UINTN cap, const CHAR16 *src);

/* Short text for an EFI_STATUS ("EFI_NOT_FOUND"). */
const char *efi_status_name(EFI_STATUS st);

#endif
