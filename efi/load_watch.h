/*
 * Images loaded while a hardware trace runs (trace --source hw, one CPU):
 * their code was not in the snapshots taken before the trace, and memory
 * one image freed may now hold another's. While the trace runs,
 * BS->LoadImage goes through efipt.efi: after each load it takes the trace
 * position (hw_trace_position(): TraceEn paused for the read, so it is
 * exact; rtit_position()) and a copy of the new image's code, and after
 * the trace writes them as codechanges.bin (core/codechg.h, docs/format.md):
 * the decoder reads the new code from that position on. Each load is also
 * an image of images.json (written again after the trace, its record with
 * "loaded_at"), so that symbol files name its functions. Where the
 * position cannot be placed in the trace file (the buffer wrapped), the
 * load has no position there and in the manifest's list. The table of
 * loads grows as needed; a load it finds no memory for is counted.
 */
#ifndef EFIPT_EFI_LOAD_WATCH_H
#define EFIPT_EFI_LOAD_WATCH_H

#include <efi.h>

#include "efi/run.h"

/* The trace position now, or an error (tracing is not running). */
typedef EFI_STATUS (*loadwatch_pos_fn)(uint64_t *pos);

/* Route BS->LoadImage through the watch (the table's CRC kept right). */
void loadwatch_begin(loadwatch_pos_fn pos);
/* Put LoadImage back; idempotent. */
void loadwatch_end(void);
/*
 * After the trace: codechanges.bin (positions valid: the trace file
 * starts at position 0, wrapped false), images.json again with the loads
 * (sideband_images_append()) and the manifest's "loaded_while_traced"
 * list; frees the copies (run NULL: only that). Returns the number of
 * records written.
 */
UINTN loadwatch_write(struct run *run, bool wrapped, uint64_t trace_len);

#endif
