/* fpdt.bin: the firmware's boot-performance tables; see fpdt_save.h. */
#include <efi.h>
#include <efilib.h>

#include "core/fpdt.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "efi/console.h"
#include "efi/fpdt_save.h"

/* No table efipt saves is larger: EDK2's FBPT with its extended records is
 * tens of KiB. A stated length above it is taken for damage. */
#define FPDT_TABLE_MAX (16u << 20)

struct memmap {
	EFI_MEMORY_DESCRIPTOR *d;
	UINTN n, dsize;
};

/* Whether [a, a+len) lies in memory the memory map describes (in one or
 * more adjacent descriptors): firmware runs identity mapped, so an address
 * a table gives is read only when the map has it, and never where a read
 * could reach a device (memory-mapped I/O) or memory marked unusable. EDK2
 * keeps the FBPT in EfiReservedMemoryType, the FPDT in ACPI memory. */
static bool mapped(const struct memmap *m, uint64_t a, uint64_t len)
{
	if (!len || a + len < a)
		return false;
	uint64_t end = a + len;
	while (a < end) {
		bool found = false;
		for (UINTN i = 0; i < m->n; i++) {
			EFI_MEMORY_DESCRIPTOR *d =
				(EFI_MEMORY_DESCRIPTOR *)((UINT8 *)m->d + i * m->dsize);
			uint64_t lo = d->PhysicalStart, hi = lo + d->NumberOfPages * 4096ull;
			if (d->Type == EfiMemoryMappedIO || d->Type == EfiMemoryMappedIOPortSpace ||
			    d->Type == EfiUnusableMemory)
				continue;
			if (a >= lo && a < hi) {
				a = hi;
				found = true;
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/* A table at a: its header is read only once mapped, its length only
 * trusted once the whole table is mapped. 0 and a reason in why when it
 * cannot be read. */
static uint32_t table_len(const struct memmap *m, uint64_t a, uint32_t min, const char **why)
{
	if (!mapped(m, a, 8)) {
		*why = "its address is not in the memory map";
		return 0;
	}
	uint32_t len = efipt_le32((const uint8_t *)(UINTN)a + 4);
	if (len < min)
		*why = "its length is below its header";
	else if (len > FPDT_TABLE_MAX)
		*why = "its length is above 16 MiB";
	else if (!mapped(m, a, len))
		*why = "it runs past the memory map";
	else
		return len;
	return 0;
}

static uint64_t find_acpi_table(const struct memmap *m, uint32_t want, struct strbuf *note)
{
	EFI_GUID acpi20 = ACPI_20_TABLE_GUID;
	const uint8_t *rsdp = NULL;
	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++)
		if (!CompareMem(&ST->ConfigurationTable[i].VendorGuid, &acpi20, sizeof(acpi20)))
			rsdp = ST->ConfigurationTable[i].VendorTable;
	if (!rsdp) {
		sb_puts(note, "the firmware publishes no ACPI 2.0 table");
		return 0;
	}
	/* RSDP (ACPI 6.5 5.2.5.3): "RSD PTR ", 16 RsdtAddress u32, 24 XsdtAddress u64 */
	if (!mapped(m, (UINTN)rsdp, 36) || efipt_memcmp(rsdp, "RSD PTR ", 8)) {
		sb_puts(note, "the ACPI 2.0 table is no RSDP");
		return 0;
	}
	uint64_t root = rsdp[15] >= 2 ? efipt_le64(rsdp + 24) : 0;
	unsigned esize = 8;
	if (!root) {
		root = efipt_le32(rsdp + 16);
		esize = 4;
	}
	const char *why = NULL;
	uint32_t rlen = table_len(m, root, FPDT_ACPI_HEADER, &why);
	if (!rlen) {
		sb_printf(note, "the %s at 0x%llx is damaged: %s", esize == 8 ? "XSDT" : "RSDT",
			  (unsigned long long)root, why);
		return 0;
	}
	const uint8_t *r = (const uint8_t *)(UINTN)root;
	for (uint32_t at = FPDT_ACPI_HEADER; at + esize <= rlen; at += esize) {
		uint64_t t = efipt_load_le(r + at, esize);
		if (mapped(m, t, 8) && efipt_le32((const uint8_t *)(UINTN)t) == want)
			return t;
	}
	sb_printf(note, "the %s lists no FPDT", esize == 8 ? "XSDT" : "RSDT");
	return 0;
}

struct pointers {
	uint64_t fbpt, s3pt;
	struct strbuf *note;
};

static void on_pointer(void *ctx, const struct fpdt_rec *r)
{
	struct pointers *p = ctx;
	if (r->kind != FPDT_K_TABLE_PTR)
		return;
	if (r->type == FPDT_T_FBPT_PTR)
		p->fbpt = r->addr;
	else
		p->s3pt = r->addr;
}

static void on_damaged(void *ctx, uint64_t off, uint32_t type, uint32_t len, const char *why)
{
	struct pointers *p = ctx;
	sb_printf(p->note, "%sFPDT record at offset %llu (type 0x%x, length %u) skipped: %s",
		  p->note->len ? "; " : "", (unsigned long long)off, type, len, why);
}

/* One table of the file: its address checked, its signature and length. */
static bool add_table(const struct memmap *m, uint64_t a, uint32_t sig, const char *name,
		      uint64_t *addr, uint32_t *len, unsigned *n, struct strbuf *note)
{
	if (!a)
		return false;
	const char *why = NULL;
	uint32_t l = table_len(m, a, FPDT_PERF_HEADER, &why);
	if (l && efipt_le32((const uint8_t *)(UINTN)a) != sig)
		why = "its signature is wrong";
	if (!l || why) {
		sb_printf(note, "%s%s at 0x%llx skipped: %s", note->len ? "; " : "", name,
			  (unsigned long long)a, why);
		return false;
	}
	addr[*n] = a;
	len[*n] = l;
	(*n)++;
	return true;
}

EFI_STATUS fpdt_save(struct run *run)
{
	static char notes[1024];
	struct strbuf note;
	sb_init(&note, notes, sizeof(notes));
	struct memmap m = { 0 };
	UINTN key;
	UINT32 dver;
	m.d = LibMemoryMap(&m.n, &key, &m.dsize, &dver);
	if (!m.d) {
		run_member(run, "fpdt", "{\"status\": \"not read\", \"reason\": \"no memory map\"}");
		return EFI_SUCCESS;
	}
	uint64_t addr[3];
	uint32_t len[3];
	unsigned n = 0;
	uint64_t fpdt = find_acpi_table(&m, FPDT_SIG_FPDT, &note);
	const char *why = NULL;
	uint32_t flen = fpdt ? table_len(&m, fpdt, FPDT_ACPI_HEADER, &why) : 0;
	if (fpdt && !flen)
		sb_printf(&note, "the FPDT at 0x%llx is damaged: %s", (unsigned long long)fpdt, why);
	if (flen) {
		addr[n] = fpdt;
		len[n++] = flen;
		struct pointers p = { 0, 0, &note };
		struct fpdt_sink sink = { NULL, on_pointer, on_damaged, &p };
		fpdt_table_records((const uint8_t *)(UINTN)fpdt, flen, FPDT_SIG_FPDT,
				   FPDT_ACPI_HEADER, 0, &sink);
		if (!p.fbpt)
			sb_printf(&note, "%sthe FPDT has no FBPT pointer", note.len ? "; " : "");
		add_table(&m, p.fbpt, FPDT_SIG_FBPT, "FBPT", addr, len, &n, &note);
		add_table(&m, p.s3pt, FPDT_SIG_S3PT, "S3PT", addr, len, &n, &note);
	}
	FreePool(m.d);

	static char member[1400];
	struct strbuf mb;
	sb_init(&mb, member, sizeof(member));
	EFI_STATUS st = EFI_SUCCESS;
	if (!n) {
		sb_puts(&mb, "{\"status\": \"absent\", \"reason\": ");
		sb_json_str(&mb, notes);
		sb_puts(&mb, "}");
		run_member(run, "fpdt", "%s", member);
		return EFI_SUCCESS;
	}
	UINTN total = 0;
	for (unsigned i = 0; i < n; i++)
		total += len[i];
	uint8_t *buf = AllocatePool(total);
	if (!buf) {
		run_member(run, "fpdt", "{\"status\": \"not saved\", \"reason\": \"out of memory\"}");
		return EFI_OUT_OF_RESOURCES;
	}
	UINTN at = 0;
	for (unsigned i = 0; i < n; i++) {
		efipt_memcpy(buf + at, (const void *)(UINTN)addr[i], len[i]);
		at += len[i];
	}
	st = run_write_file(run, "fpdt.bin", buf, total);
	FreePool(buf);
	sb_printf(&mb, "{\"status\": \"%s\", \"file\": \"fpdt.bin\", \"tables\": [",
		  EFI_ERROR(st) ? "not saved" : "saved");
	for (unsigned i = 0; i < n; i++) {
		uint32_t sig = efipt_le32((const uint8_t *)(UINTN)addr[i]);
		sb_printf(&mb, "%s{\"signature\": \"%c%c%c%c\", \"address\": \"0x%llx\", "
			       "\"length\": %u}", i ? ", " : "", sig & 0xff, (sig >> 8) & 0xff,
			  (sig >> 16) & 0xff, sig >> 24, (unsigned long long)addr[i], len[i]);
	}
	sb_puts(&mb, "]");
	if (note.len) {
		sb_puts(&mb, ", \"problems\": ");
		sb_json_str(&mb, notes);
	}
	sb_puts(&mb, "}");
	run_member(run, "fpdt", "%s", member);
	con_printf("efipt: the firmware's boot performance tables: %u saved to fpdt.bin%s%s\n", n,
		   note.len ? "; " : "", notes);
	return st;
}
