/*
 * FvFile GUIDs to module names through EDK2's FV/Guid.xref, for images that
 * record no usable build path (a firmware driver listed as FvFile(GUID)).
 * Guid.xref is a text file GenFds writes beside the FVs, one "GUID NAME"
 * per line: the modules' FILE_GUIDs first, then the GUIDs they use.
 */
#ifndef EFIPT_HOST_SYMGUID_H
#define EFIPT_HOST_SYMGUID_H

#include <stdbool.h>
#include <stddef.h>

#define SYMGUID_LEN 36	/* 8-4-4-4-12 */

/* The GUID of the first "FvFile(GUID)" node in a device path's text (as
 * efipt.efi and efipt qemu write an image's path in images.json). */
bool symguid_from_path(const char *path, char guid[SYMGUID_LEN + 1]);

/* The name xref (a Guid.xref file) gives guid, compared without case.
 * 1 found, 0 not, -1 unreadable (reason in err). */
int symguid_lookup(const char *xref, const char *guid, char *name, size_t cap, char *err,
		   size_t errlen);

#endif
