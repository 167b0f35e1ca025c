/*
 * The firmware's boot-performance records: ACPI's Firmware Performance Data
 * Table (FPDT, ACPI 6.5 section 5.2.24) and the tables it points to, the
 * Firmware Basic Boot Performance Table (FBPT) and the S3 Performance Table
 * (S3PT), with the extended records EDK2 writes into the FBPT after the
 * basic boot record (MdeModulePkg's ExtendedFirmwarePerformance.h).
 *
 * efipt.efi saves the tables raw into fpdt.bin (docs/format.md): one after
 * the other, each as the firmware had it, FPDT first. Every table starts
 * with a 4-byte signature and a 4-byte little-endian length that counts the
 * whole table; its records follow its header (36 bytes for the ACPI FPDT,
 * 8 for FBPT and S3PT), each with a 4-byte header:
 *
 *   Type u16 | Length u8 (the whole record) | Revision u8
 *
 * Records (offsets within the record, little endian, packed):
 *   FPDT  0 FBPT pointer, 1 S3PT pointer (16): 4 reserved u32, 8 address u64
 *   FBPT  2 basic boot (48): 8 ResetEnd, 16 OsLoaderLoadImageStart,
 *         24 OsLoaderStartImageStart, 32 ExitBootServicesEntry,
 *         40 ExitBootServicesExit (u64 ns since reset)
 *   S3PT  0 resume (24): 4 ResumeCount u32, 8 FullResume, 16 AverageResume
 *         1 suspend (20): 4 SuspendStart, 12 SuspendEnd
 *   EDK2 (in FBPT): 4 ProgressID u16, 6 ApicID u32, 10 Timestamp u64 (ns),
 *         18 GUID; then by type:
 *         0x1010 GUID event (34)
 *         0x1011 string event: 34 string
 *         0x1012 dual GUID string: 34 second GUID, 50 string
 *         0x1013 GUID qword (42): 34 qword
 *         0x1014 GUID qword string: 34 qword, 42 string
 *
 * The parser reads only buf[0..len): a table whose length passes the buffer
 * or is shorter than its header, and a record whose length passes its table
 * or is shorter than its type's fields, are reported (offset, type, length,
 * why) and skipped; a damaged record ends its table's walk (the next record's
 * place is not known), the next table is found by its signature.
 */
#ifndef EFIPT_CORE_FPDT_H
#define EFIPT_CORE_FPDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FPDT_SIG_FPDT 0x54445046u /* "FPDT" */
#define FPDT_SIG_FBPT 0x54504246u /* "FBPT" */
#define FPDT_SIG_S3PT 0x54503353u /* "S3PT" */

#define FPDT_ACPI_HEADER 36u
#define FPDT_PERF_HEADER 8u

/* Record types (ACPI 6.5 Tables 5.108, 5.111, 5.113; EDK2's extended ones). */
enum fpdt_type {
	FPDT_T_FBPT_PTR = 0,		/* in FPDT */
	FPDT_T_S3PT_PTR = 1,		/* in FPDT */
	FPDT_T_BASIC_BOOT = 2,		/* in FBPT */
	FPDT_T_S3_RESUME = 0,		/* in S3PT */
	FPDT_T_S3_SUSPEND = 1,		/* in S3PT */
	FPDT_T_GUID = 0x1010,
	FPDT_T_STRING = 0x1011,
	FPDT_T_DUAL_GUID_STRING = 0x1012,
	FPDT_T_GUID_QWORD = 0x1013,
	FPDT_T_GUID_QWORD_STRING = 0x1014,
};

/* What a record is, independent of its table. */
enum fpdt_kind {
	FPDT_K_TABLE_PTR,	/* FPDT's FBPT or S3PT pointer: addr */
	FPDT_K_BASIC_BOOT,	/* FBPT's basic boot record: boot[] */
	FPDT_K_S3_RESUME,	/* count, s3[0] full, s3[1] average */
	FPDT_K_S3_SUSPEND,	/* s3[0] start, s3[1] end */
	FPDT_K_EVENT,		/* EDK2's extended records */
	FPDT_K_OTHER,		/* a type efipt does not know: only the header */
};

/* The basic boot record's five times, in this order (ns since reset). */
enum fpdt_boot_field {
	FPDT_RESET_END,
	FPDT_LOADER_LOAD,
	FPDT_LOADER_START,
	FPDT_EBS_ENTRY,
	FPDT_EBS_EXIT,
	FPDT_BOOT_FIELDS
};

#define FPDT_NAME_MAX 256 /* a record's length is a u8 */

struct fpdt_rec {
	uint32_t table;		/* FPDT_SIG_* of the table it is in */
	uint64_t off;		/* its offset in the buffer */
	uint16_t type;
	uint8_t len, rev;
	enum fpdt_kind kind;
	uint64_t addr;			/* TABLE_PTR */
	uint64_t boot[FPDT_BOOT_FIELDS];	/* BASIC_BOOT */
	uint32_t count;			/* S3_RESUME */
	uint64_t s3[2];			/* S3_RESUME, S3_SUSPEND */
	/* EVENT */
	uint16_t progress;
	uint32_t apic;
	uint64_t ts;			/* ns since reset */
	uint8_t guid[16], guid2[16];
	bool has_guid2, has_qword;
	uint64_t qword;
	char name[FPDT_NAME_MAX];	/* the string up to its first NUL, non-printable bytes as '?' */
};

struct fpdt_sink {
	void (*table)(void *ctx, uint32_t sig, uint64_t off, uint32_t len);
	void (*record)(void *ctx, const struct fpdt_rec *r);
	/* a damaged table or record; type is 0xffffffff for a table */
	void (*damaged)(void *ctx, uint64_t off, uint32_t type, uint32_t len, const char *why);
	void *ctx;
};

/* Walk the tables of buf[0..len) (fpdt.bin). Returns the number of tables
 * read (damaged ones not counted). Any callback may be NULL. */
unsigned fpdt_walk(const uint8_t *buf, size_t len, const struct fpdt_sink *sink);

/* Walk the records of one table at buf[0..len) whose header the caller
 * checked (sig, header size hdr, stated length len): fpdt_walk's step,
 * and efipt.efi's way to read FPDT's pointers. off0 is the table's offset
 * for the reports. Returns the number of damaged records (0 or 1). */
unsigned fpdt_table_records(const uint8_t *buf, uint32_t len, uint32_t sig, uint32_t hdr,
			    uint64_t off0, const struct fpdt_sink *sink);

/* EDK2's ProgressID rules (MdePkg PerformanceLib.h): below 0x10 odd IDs
 * start and even IDs end (ID 0 is a single event); from 0x10 an ID whose low
 * nibble is 0 starts and one with the same upper bits and a non-zero low
 * nibble ends it. fpdt_start_of(end) is the start ID an end pairs with. */
bool fpdt_is_start(uint16_t id);
bool fpdt_is_end(uint16_t id);
uint16_t fpdt_start_of(uint16_t end);

/* What a ProgressID measures ("StartImage", "LoadImage", "DB:Start",
 * "DB:Support", "DB:Stop", "EventSignal", "Callback", "Function",
 * "InModule", "CrossModule", "Event"; "ID 0xNNNN" for others, into buf). */
const char *fpdt_progress_name(uint16_t id, char *buf, size_t cap);

/* The basic boot record's field names: "ResetEnd", ... */
const char *fpdt_boot_field_name(enum fpdt_boot_field f);

/* The record type's name ("basic boot", "GUID event", ...). */
const char *fpdt_type_name(uint32_t table, uint16_t type);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (EFI_GUID's byte order: the first
 * three fields little endian), 37 bytes with the NUL. */
void fpdt_guid_text(const uint8_t g[16], char out[37]);

#endif
