/*
 * The firmware boot trace of edk2/EfiptPkg (docs/edk2.md): one record that
 * EfiptPei hands to EfiptDxe in a GUID HOB and that EfiptDxe publishes as a
 * UEFI configuration table for `efipt.efi collect`.
 *
 * Three builds read and write it (the PEIM, the DXE driver, efipt.efi; two
 * tool chains), so the layout is fixed-width little-endian fields, naturally
 * aligned, no pointers, no bool or enum members; `version` changes with it.
 *
 *   struct fwtrace_rec        status, options, configuration (the settings
 *                             ptcfg_validate made), buffer layout (the ptout
 *                             regions and ToPA tables), the output MSRs read
 *                             back at stop, TSC, CPUID leaves
 *   struct fwtrace_image[n]   the table only: every image EfiptDxe saw load
 *   struct fwtrace_rec[ncpus] the table only: one record per application
 *                             processor EfiptDxe was asked to trace (--cpus),
 *                             traced or not and why; its own CPUID, settings,
 *                             buffer and output MSRs (no images, no CPUs)
 *
 * A table comes from firmware memory: efipt.efi treats it as untrusted and
 * accepts it only through fwtrace_check().
 */
#ifndef EFIPT_CORE_FWTRACE_H
#define EFIPT_CORE_FWTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/cpu_list.h"
#include "core/cpuid_set.h"
#include "core/pt_config.h"
#include "core/strbuf.h"

/*
 * The GUIDs (EFI_GUID initialisers) and the variable, as edk2/EfiptPkg's
 * EfiptPkg.dec declares them for EDK2 code (tests/edk2 check they agree).
 */
#define FWTRACE_HOB_GUID_INIT \
	{ 0xC14F1D68, 0xCCFE, 0x4363, { 0x8E, 0xF3, 0xD6, 0xD5, 0xAC, 0xAC, 0x33, 0xE9 } }
#define FWTRACE_TABLE_GUID_INIT \
	{ 0xCFBB89D9, 0xFC52, 0x4405, { 0xAF, 0xD3, 0x07, 0x1B, 0x06, 0xCE, 0x8B, 0xBF } }
#define FWTRACE_VARIABLE_GUID_INIT \
	{ 0x2A9BEE08, 0xAA47, 0x43E5, { 0x95, 0x12, 0x6C, 0x32, 0x84, 0xF8, 0x80, 0x58 } }
/* The variable (UCS-2 name; NV+BS+RT) holding the next boot's options text. */
#define FWTRACE_VARIABLE_NAME "EfiptNextBoot"
/* Test builds (PcdEfiptEmulatedCaps), QEMU TCG only: a CPU profile (`cpuid
 * -r` text, efipt.efi --emulated-caps) whose Intel PT the firmware programs
 * for efipt-qemu.so start=guest to follow (docs/qemu.md). Same GUID. */
#define FWTRACE_CAPS_VARIABLE_NAME "EfiptEmulatedCaps"
#define FWTRACE_CAPS_MAX 8192

#define FWTRACE_MAGIC "EFIPTBT1"
#define FWTRACE_VERSION 2
#define FWTRACE_MAX_REGIONS 64   /* ToPA output regions (64 x 128M at most) */
#define FWTRACE_MAX_TABLES 4
#define FWTRACE_MAX_CPUID 160    /* = CPUID_SET_MAX */
#define FWTRACE_MAX_IMAGES 1024
#define FWTRACE_OPTIONS_MAX 512
#define FWTRACE_MAX_CPUS CPU_LIST_MAX /* application processors after the images */

/* What happened to this boot's trace, in the order it can happen. */
enum fwtrace_status {
	FWTRACE_NO_HOB = 1,    /* EfiptDxe found no record from EfiptPei */
	FWTRACE_OFF,           /* --off: not traced on purpose */
	FWTRACE_BAD_OPTIONS,   /* the options text did not parse */
	FWTRACE_UNSUPPORTED,   /* no Intel PT: reason names the CPUID bit */
	FWTRACE_REFUSED,       /* the CPU lacks what the options ask for */
	FWTRACE_NO_MEMORY,     /* the trace buffer could not be reserved */
	FWTRACE_FAILED,        /* PT could not be started (busy, #GP) */
	FWTRACE_BAD_HOB,       /* EfiptDxe refused EfiptPei's record */
	FWTRACE_RUNNING,       /* tracing; not stopped yet */
	FWTRACE_STOPPED,       /* stopped, output state read back */
	FWTRACE_STATUS_END
};

/* Where EfiptDxe stops the trace (--stop-at). */
enum fwtrace_stop {
	FWTRACE_STOP_NONE = 0,         /* stopped_at only: not stopped (yet) */
	FWTRACE_STOP_READY_TO_BOOT,
	FWTRACE_STOP_END_OF_DXE,
	FWTRACE_STOP_EXIT_BOOT_SERVICES,
	FWTRACE_STOP_NEVER,            /* left to efipt.efi collect */
	FWTRACE_STOP_COLLECT,          /* stopped_at only: efipt.efi collect */
	FWTRACE_STOP_BAD_HOB,          /* stopped_at only: EfiptDxe refused the record */
	FWTRACE_STOP_END
};

enum fwtrace_source {
	FWTRACE_SRC_HW = 0,            /* Intel PT */
	FWTRACE_SRC_SYNTHETIC,         /* the core synthesizer fills the buffer (test builds) */
	FWTRACE_SRC_END
};

/* Test builds (--source synthetic): damage injected on purpose, so that the
 * refusals of EfiptDxe and efipt.efi collect are seen to work. */
enum fwtrace_fault {
	FWTRACE_FAULT_NONE = 0,
	FWTRACE_FAULT_HOB_OUTSIDE_RAM, /* EfiptPei: region 0 moved beyond RAM */
	FWTRACE_FAULT_FORGED_TABLE,    /* EfiptDxe: a byte changed after the CRC */
	FWTRACE_FAULT_STALE_TABLE,     /* EfiptDxe: says Intel PT still runs */
	FWTRACE_FAULT_END
};

#define FWTRACE_F_MARKERS   (1u << 0) /* the EPT1/EPT0 trace markers ran (QEMU TCG) */
#define FWTRACE_F_VARIABLE  (1u << 1) /* options from the EfiptNextBoot variable */
#define FWTRACE_F_INTO_OS   (1u << 2) /* --into-os: not stopped at ExitBootServices */
#define FWTRACE_F_EMULATED  (1u << 3) /* QEMU TCG: PT emulated from a CPU profile (test builds);
				       * cpuid[] holds the profile */
#define FWTRACE_F_ALL       0xFu

/* code_type of a module that ran in place from a firmware volume */
#define FWTRACE_CODE_FIRMWARE_VOLUME 0xFFFFFFFFu

#define FWTRACE_IMG_PEI      (1u << 0) /* loaded in PEI (shadowed from a volume) */
#define FWTRACE_IMG_DXE      (1u << 1)
#define FWTRACE_IMG_UNLOADED (1u << 2) /* unloaded while the trace ran (or by its end) */
#define FWTRACE_IMG_KEPT     (1u << 3) /* unloaded, its pages kept from reuse: its code stays */

struct fwtrace_region {
	uint64_t base, size;
	uint32_t table, entry;
};

struct fwtrace_table {
	uint64_t phys;
	uint32_t first, nout;
};

struct fwtrace_leaf {
	uint32_t leaf, subleaf, r[4];
};

struct fwtrace_rec {
	uint8_t magic[8];
	uint32_t version;
	uint32_t size;          /* bytes of the record, its images included */
	uint32_t crc32;         /* CRC-32 (IEEE) of those bytes with this field 0 */
	uint32_t status;        /* enum fwtrace_status */
	uint32_t source;        /* enum fwtrace_source */
	uint32_t flags;         /* FWTRACE_F_* */
	uint32_t stop_at;       /* enum fwtrace_stop: asked for */
	uint32_t stopped_at;    /* enum fwtrace_stop: where it did stop */
	uint32_t nimages, max_images;
	char reason[384];       /* why it is not traced, or the notes; NUL-terminated */
	char options[FWTRACE_OPTIONS_MAX]; /* the options text in force */
	/* the configuration (struct ptcfg_settings) */
	uint64_t rtit_ctl;      /* TraceEn clear */
	uint64_t buf_size;
	uint64_t cr3_match;
	uint64_t addr_a[PTCFG_MAX_RANGES], addr_b[PTCFG_MAX_RANGES];
	uint32_t output, mode, topa_multi, maxphyaddr;
	uint32_t cr3_filter, nranges, notes, force;
	/* the buffer (struct ptout) */
	uint32_t nreg, ntab, per_table, reserved0;
	uint64_t msr_base, msr_mask;
	struct fwtrace_region reg[FWTRACE_MAX_REGIONS];
	struct fwtrace_table tab[FWTRACE_MAX_TABLES];
	/* read back after TraceEn was cleared (33.3.2.2) */
	uint64_t stop_base, stop_mask, stop_status;
	uint64_t tsc_start, tsc_stop;
	uint32_t have_nom, nom_freq;
	/* the synthetic source's ground truth */
	uint64_t synth_seed, synth_insns, synth_start, synth_ip_hash, synth_bytes;
	/* the CPUID leaves the configuration was validated against */
	uint32_t ncpuid;
	uint32_t fault;         /* enum fwtrace_fault (test builds) */
	/* which CPU this record is; the main record counts the APs' records */
	uint32_t ncpus;         /* struct fwtrace_rec after the images (0 in an AP's) */
	uint32_t cpu_number;    /* MP services' processor number */
	uint32_t apic_id;
	uint32_t reserved1;
	struct fwtrace_leaf cpuid[FWTRACE_MAX_CPUID];
};

struct fwtrace_image {
	uint64_t base, size, entry;
	uint32_t code_type;     /* EFI_MEMORY_TYPE of the image's code */
	uint32_t flags;         /* FWTRACE_IMG_* */
	uint8_t guid[16];       /* FvFile name (EFI_GUID bytes), zero if none */
	char name[64];          /* from the PDB path, else the volume's UI section */
	char pdb[256];          /* CodeView path the build recorded, "" if none */
};

/* A record with its images (the table). */
static inline struct fwtrace_image *fwtrace_images(struct fwtrace_rec *r)
{
	return (struct fwtrace_image *)(r + 1);
}

/* The application processors' records, after the images. */
static inline struct fwtrace_rec *fwtrace_cpus(struct fwtrace_rec *r)
{
	return (struct fwtrace_rec *)(fwtrace_images(r) + r->nimages);
}

static inline size_t fwtrace_size_for(uint32_t nimages, uint32_t ncpus)
{
	return sizeof(struct fwtrace_rec) + (size_t)nimages * sizeof(struct fwtrace_image) +
	       (size_t)ncpus * sizeof(struct fwtrace_rec);
}

/* An empty record: magic, version, size (no images), status NO_HOB. */
void fwtrace_init(struct fwtrace_rec *r, uint32_t max_images);

/* An application processor's record: its number and APIC ID, the main
 * record's options, stop point and source; status NO_HOB until set. */
void fwtrace_init_cpu(struct fwtrace_rec *cpu, const struct fwtrace_rec *main,
		      uint32_t number, uint32_t apic_id);

/* Set size from nimages and ncpus and compute crc32. */
void fwtrace_seal(struct fwtrace_rec *r);

uint32_t fwtrace_crc32(const void *buf, size_t len);

/*
 * Check an untrusted record of len bytes (a table found in memory): magic,
 * version, size, CRC, every count and enum in range, strings terminated,
 * the buffer layout consistent (regions powers of two 4K..128M aligned to
 * their size, below MAXPHYADDR, not overlapping; tables and their entries
 * covering the regions in order; the output MSRs pointing into them); the
 * same for each application processor's record, which holds no images and
 * no CPUs, and whose number and APIC ID differ from every other's.
 * Returns 0, or -1 with the first problem in why.
 */
int fwtrace_check(const void *buf, size_t len, struct strbuf *why);

/* Settings and CPUID to and from the record. */
void fwtrace_put_settings(struct fwtrace_rec *r, const struct ptcfg_settings *s);
void fwtrace_get_settings(const struct fwtrace_rec *r, struct ptcfg_settings *s);
void fwtrace_put_cpuid(struct fwtrace_rec *r, const struct cpuid_set *s);
void fwtrace_get_cpuid(const struct fwtrace_rec *r, struct cpuid_set *s);

/* Copy s into a fixed field of cap bytes, NUL-terminated (cut if longer). */
void fwtrace_put_str(char *field, size_t cap, const char *s);

const char *fwtrace_status_name(uint32_t status);
const char *fwtrace_stop_name(uint32_t stop);

/* The package's own options, besides the trace options of core/pt_config.c. */
struct fwtrace_opts {
	uint32_t stop_at;       /* enum fwtrace_stop */
	uint32_t source;        /* enum fwtrace_source */
	int off;                /* --off */
	int into_os;            /* --into-os */
	uint64_t seed;          /* --seed (synthetic) */
	uint64_t insns;         /* --insns (synthetic) */
	uint32_t fault;         /* --fault (synthetic) */
	int cpus_given;         /* --cpus: application processors too (EfiptDxe) */
	struct cpu_list cpus;
	struct ptcfg cfg;
	char words[FWTRACE_OPTIONS_MAX];
	char *argv[64];
};

/*
 * Parse an options text (efipt trace options and the package's:
 * --stop-at, --source, --off, --into-os, --seed, --insns, --cpus) into o. Returns
 * 0, or -1 with the reason in err. --filter image=NAME and --force are
 * refused: no image is loaded when tracing starts, and nothing traces
 * before it.
 */
int fwtrace_parse_options(struct fwtrace_opts *o, const char *text, struct strbuf *err);

/*
 * The options text from the bytes of the EfiptNextBoot variable: printable
 * ASCII (tabs too), optionally NUL-terminated, shorter than cap. Returns 0
 * with the text in out, or -1 with why (too long, the offset of a byte
 * that is not text).
 */
int fwtrace_options_text(const uint8_t *bytes, size_t n, char *out, size_t cap,
			 struct strbuf *why);

/* The package's option lines, for usage messages. */
void fwtrace_usage(struct strbuf *out);

/*
 * The manifest's "boot_trace" object: status, reason, options, stop_at,
 * stopped_at, source, markers, from_variable, into_os, images, cpu and
 * apic_id, for a synthetic trace its truth, and with APs "cpus": each AP's
 * cpu, apic_id, status and reason.
 */
void fwtrace_json(const struct fwtrace_rec *r, struct strbuf *sb);

#endif
