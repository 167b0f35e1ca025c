/** @file
  Test builds (PcdEfiptSynthetic): --source synthetic. No Intel PT is
  programmed; at the stop point efipt's trace synthesizer (core/pt_synth.c)
  walks the DXE core's code from its entry point and writes the packets a
  CPU tracing that walk would have written into the reserved buffer, in the
  order the CPU fills it, with the output state the CPU would leave. Its
  ground truth (instruction count, a hash of every instruction address) is
  recorded so that a host decode of efipt.efi collect's run directory can
  be compared with it. Labelled SYNTHETIC in the table and the run.
**/
#include "EfiptDxe.h"
#include <Library/BaseMemoryLib.h>
#include <Library/DebugLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/UefiBootServicesTableLib.h>
#include "core/pt_rtit.h"
#include "core/pt_synth.h"

STATIC struct ptsynth  mSynth;

struct Truth {
  uint64_t    Hash;
};

STATIC
void
OnInsn (
  void      *Ctx,
  uint64_t  Ip
  )
{
  struct Truth  *T;

  T       = Ctx;
  T->Hash = boottrace_ip_hash (T->Hash, Ip);
}

VOID
SyntheticFill (
  IN struct boottrace_work  *Work
  )
{
  struct fwtrace_image     *Core;
  struct ptimg_flat        Flat;
  struct ptsynth_config    Config;
  struct ptsynth_sink      Sink;
  struct ptsynth_result    Result;
  struct Truth             Truth;
  struct ptout_mem         Mem;
  UINT8                    *Buf;

  /* the image that holds the boot services is the DXE core */
  Core = ImageAt ((UINTN)gBS->LoadImage);
  Buf  = AllocatePool ((UINTN)mRec->buf_size);
  if ((Core == NULL) || (Core->entry == 0) || (Buf == NULL)) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: SYNTHETIC: no DXE core image or no memory to synthesize\n"));
    if (Buf != NULL) {
      FreePool (Buf);
    }

    return;
  }

  Flat.bytes = (const uint8_t *)(UINTN)Core->base;
  Flat.base  = Core->base;
  Flat.size  = Core->size;
  ZeroMem (&Config, sizeof (Config));
  Config.image.read = ptimg_flat_read;
  Config.image.ctx  = &Flat;
  Config.start      = Core->entry;
  Config.seed       = mRec->synth_seed;
  Config.max_insns  = mRec->synth_insns;
  Config.psb_period = 4096;
  Config.disretc    = (mRec->rtit_ctl & RTIT_CTL_DISRETC) != 0;
  Truth.Hash        = BOOTTRACE_IP_HASH_INIT;
  Sink.ctx          = &Truth;
  Sink.insn         = OnInsn;
  Sink.event        = NULL;
  ZeroMem (&Mem, sizeof (Mem));
  Mem.write64 = EfiptMemWrite64;
  Mem.read    = EfiptMemRead;
  if (ptsynth_run (&mSynth, &Config, &Sink, Buf, (size_t)mRec->buf_size, &Result) != 0) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: SYNTHETIC: the synthesizer refused its arguments\n"));
    FreePool (Buf);
    return;
  }

  boottrace_synth_store (mRec, Work, &Mem, Buf, Result.size);
  mRec->synth_insns   = Result.insns;
  mRec->synth_start   = Core->entry;
  mRec->synth_ip_hash = Truth.Hash;
  DEBUG ((
    DEBUG_INFO,
    "EfiptDxe: SYNTHETIC trace: %Lu instructions of %a from 0x%Lx, %Lu bytes\n",
    Result.insns,
    Core->name,
    Core->entry,
    (UINT64)Result.size
    ));
  FreePool (Buf);
}
