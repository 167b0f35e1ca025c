/*
 * The code the in-place decoder reads in firmware (a core/memview.h view):
 * copies that take priority (the traced application, copied before it ran,
 * since the firmware unloads an application when it exits), then the memory
 * map's code regions, live.
 */
#ifndef EFIPT_EFI_CODE_VIEW_H
#define EFIPT_EFI_CODE_VIEW_H

#include <efi.h>

#include "core/memview.h"

/* Add every LoaderCode/BootServicesCode/RuntimeServicesCode region, live. */
EFI_STATUS code_view_add_code_regions(struct memview *v);

#endif
