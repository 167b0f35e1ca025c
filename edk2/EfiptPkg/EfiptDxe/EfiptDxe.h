/** @file
  EfiptDxe's parts: the takeover and stop (EfiptDxe.c), the image record
  (Images.c), the application processors (Cpus.c) and, in test builds, the
  synthetic source (Synthetic.c).
**/
#ifndef EFIPT_DXE_H_
#define EFIPT_DXE_H_

#include <PiDxe.h>
#include <Library/EfiptCoreLib.h>

/* The table: the record and its images, in reserved pages. */
extern struct fwtrace_rec  *mRec;

/* Record the images loaded so far (the DXE core, drivers before us, PEI
   images loaded into memory) and every one after, until ImagesStop. */
VOID
ImagesStart (
  VOID
  );

/* No more images: mark those gone since (no code left for a snapshot),
   add the PEI modules that ran in place from the volumes. */
VOID
ImagesStop (
  VOID
  );

/* The image record holding Address, or NULL. */
struct fwtrace_image *
ImageAt (
  UINT64  Address
  );

/* --cpus: start the application processors once MP services is there. */
VOID
CpusStart (
  VOID
  );

/* Stop the APs' traces (at the stop point, ReadyToBoot at the latest). */
VOID
CpusStop (
  IN UINT32  Where
  );

/* The APs' records the table holds after its images, and writing them. */
UINT32
CpusRecords (
  VOID
  );

VOID
CpusPut (
  IN struct fwtrace_rec  *Table
  );

/* Test builds (PcdEfiptSynthetic): fill the adopted buffer with a
   synthesized trace of the DXE core's code and record its truth. */
VOID
SyntheticFill (
  IN struct boottrace_work  *Work
  );

#endif
