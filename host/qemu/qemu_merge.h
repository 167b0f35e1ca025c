/*
 * efipt qemu --esp IMAGE: merge the run directory efipt.efi `trace --source
 * qemu` wrote on the guest's ESP (a raw FAT image, or a GPT disk with the
 * ESP at 1 MiB, read with mtools) into the run directory efipt-qemu.so
 * wrote, so that one directory holds the trace and the guest's sideband
 * (images.json, memory map, cpuid.txt) like a hardware run (docs/qemu.md).
 */
#ifndef EFIPT_HOST_QEMU_MERGE_H
#define EFIPT_HOST_QEMU_MERGE_H

#include <stddef.h>

struct qemu_merge_result {
	char guest_run[64];	/* the run-id merged */
	char marker_image[256];	/* the guest image holding the start marker
				 * (start=guest: the WRMSR that set TraceEn) */
	unsigned images;	/* images.json entries */
	unsigned snapshots;	/* guest code snapshots taken over */
};

/*
 * The run directories already in ESP's \efipt (mdir's listing, malloc'd;
 * "" when there are none or it cannot be read), taken before QEMU runs so
 * that a run left by an earlier boot is never merged as this one's.
 */
char *qemu_esp_runs(const char *esp);

/*
 * Only a run not named in before (qemu_esp_runs, may be NULL) is merged.
 * Returns 0; 1 when the ESP has no such run or no \efipt (nothing changed); or -1 with
 * the reason in err (the start marker lies in no image of the run, a file
 * could not be written). err is set for 1 too. The
 * merged files replace the plugin's by rename; manifest.json is rewritten
 * last.
 */
int qemu_merge_esp(const char *rundir, const char *esp, const char *before,
		   struct qemu_merge_result *res, char *err, size_t errlen);

struct qemu_fv_result {
	unsigned modules;	/* modules found in the firmware volumes */
	unsigned renamed;	/* images.json entries named FvFile(GUID) given their UI name */
	unsigned added;		/* SEC/PEI images added at their in-place addresses */
	unsigned found;		/* DXE images added where their code is in the
				 * snapshots (host/qemu/qemu_fvfind.h) */
	char find_err[1200];	/* why that search could not be done ("": it was) */
	unsigned lzma, lzma_failed;
};

/*
 * Name the firmware's modules in RUNDIR/images.json from the firmware
 * volumes of the flash image FLASH (host/qemu/fv.c): entries named
 * FvFile(GUID) take the UI name of that file, SEC/PEI modules, which run
 * where their PE/TE headers say, are added where no image is listed, and
 * so are the modules found loaded elsewhere by their code in the run's
 * snapshots (DXE drivers, PEI's copies in memory: qemu_fvfind.h).
 * images.json and the manifest's files entry are rewritten (tmp + rename).
 */
int qemu_name_fv_modules(const char *rundir, const char *flash, struct qemu_fv_result *res,
			 char *err, size_t errlen);

#endif
