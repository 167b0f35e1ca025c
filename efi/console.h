/* Console output for efipt.efi: UEFI ConOut, mirrored to the debug port. */
#ifndef EFIPT_EFI_CONSOLE_H
#define EFIPT_EFI_CONSOLE_H

#include <stdbool.h>

/*
 * Mirror everything printed to I/O port 0xE9 (QEMU's debugcon, Bochs' port
 * e9 hack). Off by default: on real hardware that port may belong to
 * something else, so it is only written when asked for with --debugcon.
 */
void con_set_debugcon(bool on);
void con_puts(const char *s);
/* Only to the debug port (when on): where ConOut may no longer be used
 * (an ExitBootServices notification). */
void con_debugcon_puts(const char *s);
void con_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
