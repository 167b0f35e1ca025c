/*
 * efipt qemu without --esp: the ESP image among the QEMU arguments, if
 * exactly one raw FAT disk image is given (-drive file=IMAGE, -hda IMAGE),
 * so that efipt.efi's run on it is merged as with --esp (docs/qemu.md).
 */
#ifndef EFIPT_HOST_QEMU_ESP_H
#define EFIPT_HOST_QEMU_ESP_H

#include <stddef.h>

/*
 * Returns 1 with the image in esp and the argument it came from in from
 * ("-drive file=...", "-hda"); 0 when there is none to use, with why it is
 * not used in why ("" when the arguments give no disk image at all).
 */
/* The value of option key (e.g. "file") of a -drive argument d into out,
 * with ",," read as a comma (QEMU's option syntax); 0, or -1 when absent. */
int qemu_drive_opt(const char *d, const char *key, char *out, size_t cap);

int qemu_find_esp(int argc, char **argv, char *esp, size_t cap, char *from, size_t fromcap,
		  char *why, size_t whylen);

#endif
