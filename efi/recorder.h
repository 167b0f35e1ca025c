/*
 * The flight recorder in firmware (trace --recorder, docs/recorder.md): one
 * region of EfiReservedMemoryType memory that keeps the trace and what a
 * decoder needs across ExitBootServices and a warm reset (format:
 * core/recorder.h), found again through efipt's UEFI variable and, in the
 * boot that armed it, a configuration table.
 *
 * Arming order (efi/cmd_trace.c): recorder_arm() places the region and
 * takes the images and their code; the trace source lays its buffer out in
 * recorder_trace_mem() (Intel PT through hw_trace's hooks, recorder_hooks();
 * the synthesizer with recorder_synthetic()); at ExitBootServices the
 * images whose code is new or changed are taken again (no allocation);
 * recorder_finish() when efipt.efi goes on (the image returned, or arming
 * failed: recorder_disarm()).
 */
#ifndef EFIPT_EFI_RECORDER_H
#define EFIPT_EFI_RECORDER_H

#include <efi.h>

#include "arch/x86_64/pt_carve.h"
#include "core/recorder.h"
#include "efi/app.h"
#include "efi/hw_trace.h"
#include "efi/image_load.h"

struct recorder_opts {
	bool on;		/* --recorder */
	bool stop_at_exit;	/* --recorder-stop exit */
	uint64_t room;		/* --recorder-room: code taken at ExitBootServices */
	uint64_t at;		/* --recorder-at: the region's address (0: efipt picks) */
};
#define RECORDER_DEFAULT_ROOM (32ull << 20)

/* efipt's vendor GUID (the variable) and the configuration table's. */
extern EFI_GUID recorder_vendor_guid, recorder_table_guid;

/*
 * Place and reserve the region (trace_area bytes for the output buffer at
 * its start, aligned to align; 0 for --source qemu), write the header, the
 * command line, the loaded images and their code, the variable and the
 * configuration table. msg says where and why, or why not.
 */
EFI_STATUS recorder_arm(struct app *app, const struct recorder_opts *o, uint32_t source,
			uint64_t trace_area, uint64_t align, const struct traced_image *img,
			struct strbuf *msg);

/* Where the output buffer is carved out of the region. */
const struct ptout_mem *recorder_trace_mem(void);

/* hw_trace's hooks for Intel PT into the armed region. */
const struct hw_hooks *recorder_hooks(struct app *app, const struct recorder_opts *o,
				      const struct traced_image *img);

/*
 * The synthetic source: lay a ring out (set: ToPA, wrap) in the region and
 * put the stream into it as a CPU in wrap mode would have; *tail_off: where
 * in the stream the ring's oldest byte is. seed and insns are recorded.
 */
EFI_STATUS recorder_synthetic(const struct ptcfg_settings *set, uint64_t ctl,
			      const uint8_t *stream, uint64_t len, uint64_t seed, uint64_t insns,
			      uint64_t *tail_off, struct strbuf *msg);
/* Where the synthetic stream's next byte would have gone (ring offset). */
uint64_t recorder_synthetic_pos(void);

/* The traced image returned: record where the trace ends (synthetic: the
 * write position) and that it returned. */
void recorder_returned(void);

/* Arming failed: release the region, the table and the variable. */
void recorder_disarm(void);

/* efipt.efi goes on after the traced code: close the ExitBootServices
 * event (efipt.efi's code is about to go away); the region stays. */
void recorder_finish(void);

/* The "recorder" manifest member of the arming run. */
void recorder_manifest(struct run *run);

/* ---- finding a recorder (efi/recorder_find.c) ------------------------- */

enum recorder_where {
	REC_NONE,		/* no variable */
	REC_BAD_VAR,		/* a variable that is not a usable one */
	REC_THIS_BOOT,		/* armed in this boot: our configuration table names it */
	REC_FREE,		/* free memory in this boot's map: readable, ours to claim */
	REC_IN_USE,		/* this boot's firmware uses (part of) it */
	REC_OUTSIDE,		/* (part of) it is no RAM in this boot's map */
};

struct recorder_found {
	enum recorder_where where;
	struct ptrec_var var;
	char why[512];
};

/* Read the variable and check the region against this boot's memory map
 * (no byte of the region is read). */
void recorder_find(struct recorder_found *f);

/* A reader of the region for core/recorder.h (the memory is identity mapped). */
void recorder_reader(const struct ptrec_var *var, struct ptrec_reader *rd);

/* Placement (efi/recorder_place.c): reserve size bytes aligned to align at
 * at (0: choose), never where this boot's firmware has memory. why says
 * where and why, or why not. */
EFI_STATUS recorder_place(uint64_t size, uint64_t align, uint64_t at, uint64_t *phys,
			  struct strbuf *why);

/* This boot's number: the high half of the monotonic count, which the
 * platform advances once per boot (UEFI 2.10 7.5.3); 0 if there is none. */
uint32_t recorder_boot_number(void);

/* Set the variable (state ARMED or RECOVERED). */
EFI_STATUS recorder_set_var(const struct ptrec_var *v);

/* Every efipt.efi run: say whether a recorder trace from an earlier boot
 * is in memory (main.c, before the command runs). */
void recorder_check_at_start(void);

/* ---- recover (efi/cmd_recover.c) ---------------------------------------- */

/* trace --recorder over a recorder of an earlier boot not yet recovered:
 * recover it into a run directory of its own first. EFI_SUCCESS when there
 * was none or it was recovered; an error when arming would lose it. */
EFI_STATUS recover_pending(struct app *app);

#endif
