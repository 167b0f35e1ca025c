/*
 * Finding a recorder after a reset (or in the boot that armed it): the
 * variable, then this boot's memory map, before a byte of the region is
 * read: a variable may name memory that is no RAM now (reading MMIO can
 * hang a machine), or that this boot's firmware already uses.
 */
#include <efi.h>
#include <efilib.h>

#include "core/mem.h"
#include "efi/console.h"
#include "efi/recorder.h"

#define PAGE 4096ull
#define DESC(map, i, dsize) ((EFI_MEMORY_DESCRIPTOR *)((UINT8 *)(map) + (i) * (dsize)))

/* Does our configuration table of this boot name the header at hdr? */
static bool table_names(uint64_t hdr)
{
	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
		if (!CompareMem(&t->VendorGuid, &recorder_table_guid, sizeof(EFI_GUID)))
			return (UINTN)t->VendorTable == hdr;
	}
	return false;
}

/* Classify [lo, hi) by this boot's map: all free, all EfiReservedMemoryType,
 * partly something else (*block), or partly no RAM. */
static void classify(uint64_t lo, uint64_t hi, bool *all_free, bool *all_reserved,
		     bool *hole, EFI_MEMORY_DESCRIPTOR *block)
{
	*all_free = *all_reserved = true;
	*hole = false;
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	if (!map) {
		*all_free = *all_reserved = false;
		*hole = true;
		return;
	}
	bool have_block = false;
	for (uint64_t at = lo; at < hi;) {
		EFI_MEMORY_DESCRIPTOR *d = NULL;
		for (UINTN i = 0; i < n && !d; i++) {
			EFI_MEMORY_DESCRIPTOR *e = DESC(map, i, dsize);
			if (at >= e->PhysicalStart && at < e->PhysicalStart + e->NumberOfPages * PAGE)
				d = e;
		}
		if (!d) {
			*hole = true;
			*all_free = *all_reserved = false;
			break;
		}
		if (d->Type != EfiConventionalMemory)
			*all_free = false;
		if (d->Type != EfiReservedMemoryType)
			*all_reserved = false;
		if (d->Type != EfiConventionalMemory && d->Type != EfiReservedMemoryType &&
		    !have_block) {
			*block = *d;
			have_block = true;
		}
		at = d->PhysicalStart + d->NumberOfPages * PAGE;
	}
	FreePool(map);
}

void recorder_find(struct recorder_found *f)
{
	efipt_memset(f, 0, sizeof(*f));
	struct strbuf sb;
	sb_init(&sb, f->why, sizeof(f->why));
	uint8_t raw[256];
	UINTN n = sizeof(raw);
	UINT32 attr;
	EFI_STATUS st = uefi_call_wrapper(RT->GetVariable, 5, L"" PTREC_VAR_NAME,
					  &recorder_vendor_guid, &attr, &n, raw);
	if (st == EFI_NOT_FOUND) {
		f->where = REC_NONE;
		sb_printf(&sb, "no recorder: the variable %s-%s is not set (trace --recorder arms "
			       "one)",
			  PTREC_VAR_NAME, PTREC_VENDOR_GUID_TEXT);
		return;
	}
	f->where = REC_BAD_VAR;
	if (EFI_ERROR(st)) {
		sb_printf(&sb, "cannot read the variable %s: %s", PTREC_VAR_NAME, efi_status_name(st));
		return;
	}
	if (ptrec_var_decode(raw, n, &f->var, &sb))
		return;
	uint64_t lo = f->var.region_phys, hi = lo + f->var.region_size;
	bool all_free, all_reserved, hole;
	EFI_MEMORY_DESCRIPTOR b;
	classify(lo, hi, &all_free, &all_reserved, &hole, &b);
	if (all_reserved && table_names(lo + f->var.header_off)) {
		f->where = REC_THIS_BOOT;
	} else if (all_free) {
		f->where = REC_FREE;
	} else if (hole) {
		f->where = REC_OUTSIDE;
		sb_printf(&sb, "the recorder region 0x%llx-0x%llx is not all RAM in this boot's "
			       "memory map: not read",
			  (unsigned long long)lo, (unsigned long long)(hi - 1));
	} else {
		f->where = REC_IN_USE;
		if (all_reserved)
			sb_printf(&sb, "the recorder region 0x%llx-0x%llx is reserved in this boot, "
				       "but not by a recorder armed in it: not read",
				  (unsigned long long)lo, (unsigned long long)(hi - 1));
		else
			sb_printf(&sb, "the recorder region 0x%llx-0x%llx is in use by this boot's "
				       "firmware (0x%llx-0x%llx is %s): its trace is overwritten, not "
				       "read",
				  (unsigned long long)lo, (unsigned long long)(hi - 1),
				  (unsigned long long)b.PhysicalStart,
				  (unsigned long long)(b.PhysicalStart + b.NumberOfPages * PAGE - 1),
				  uefi_memtype_name(b.Type));
	}
}

static int read_region(void *ctx, uint64_t off, void *dst, size_t len)
{
	const struct ptrec_var *v = ctx;
	if (off > v->region_size || len > v->region_size - off)
		return -1;
	CopyMem(dst, (const void *)(UINTN)(v->region_phys + off), len);
	return 0;
}

void recorder_reader(const struct ptrec_var *var, struct ptrec_reader *rd)
{
	rd->read = read_region;
	rd->ctx = (void *)var;
}

void recorder_check_at_start(void)
{
	static struct recorder_found f;
	recorder_find(&f);
	if (f.where == REC_NONE || f.var.state == PTREC_VAR_RECOVERED)
		return;
	if (f.where != REC_FREE && f.where != REC_THIS_BOOT) {
		con_printf("efipt: the flight recorder of boot %u (generation %llu) cannot be "
			   "recovered: %s\n",
			   f.var.boot, (unsigned long long)f.var.generation, f.why);
		return;
	}
	struct ptrec_reader rd;
	recorder_reader(&f.var, &rd);
	static struct ptrec_header h;
	char why[512];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	if (ptrec_peek(&f.var, &rd, &h, &sb)) {
		con_printf("efipt: the flight recorder of boot %u cannot be recovered: %s\n",
			   f.var.boot, why);
		return;
	}
	bool now = f.where == REC_THIS_BOOT && h.boot == recorder_boot_number();
	con_printf("efipt: a flight recorder trace %s is in memory (armed %s by run %s, "
		   "generation %llu, %llu KiB at 0x%llx): 'efipt.efi recover' writes it to a run "
		   "directory\n",
		   now ? "of this boot" : "from an earlier boot", h.armed_at,
		   h.run_id, (unsigned long long)h.generation, (unsigned long long)(h.trace_size >> 10),
		   (unsigned long long)f.var.region_phys);
}
