/* Memory map, loaded images, code snapshots; see sideband.h. */
#include <efi.h>
#include <efilib.h>

#include <stdbool.h>

#include "core/imgrec.h"
#include "core/mem.h"
#include "core/pe_info.h"
#include "efi/console.h"
#include "efi/sideband.h"

static bool is_code(UINT32 t)
{
	return t == EfiLoaderCode || t == EfiBootServicesCode || t == EfiRuntimeServicesCode;
}

static EFI_STATUS first_error(EFI_STATUS a, EFI_STATUS b)
{
	return EFI_ERROR(a) ? a : b;
}

#define DESC(map, i, dsize) ((EFI_MEMORY_DESCRIPTOR *)((UINT8 *)(map) + (i) * (dsize)))

static EFI_STATUS write_memmap(struct run *run, EFI_MEMORY_DESCRIPTOR *map, UINTN n,
			       UINTN dsize, const struct sideband_region *extra, unsigned nextra,
			       struct sideband_stats *stats)
{
	UINTN cap = 256 + (n + nextra) * 160;
	char *buf = AllocatePool(cap);
	if (!buf)
		return EFI_OUT_OF_RESOURCES;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_puts(&sb, "{\"regions\": [");
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = DESC(map, i, dsize);
		sb_printf(&sb,
			  "%s\n  {\"type\": \"%s\", \"phys\": \"0x%llx\", \"pages\": %llu, "
			  "\"attr\": \"0x%llx\"",
			  i ? "," : "", uefi_memtype_name(d->Type), (unsigned long long)d->PhysicalStart,
			  (unsigned long long)d->NumberOfPages, (unsigned long long)d->Attribute);
		if (is_code(d->Type))
			sb_printf(&sb, ", \"snapshot\": \"mem-%016llx.bin\"",
				  (unsigned long long)d->PhysicalStart);
		sb_putc(&sb, '}');
		if (is_code(d->Type)) {
			stats->regions++;
			stats->code_bytes += d->NumberOfPages * 4096ull;
		}
	}
	for (unsigned i = 0; i < nextra; i++) {
		const struct sideband_region *x = &extra[i];
		sb_printf(&sb, "%s\n  {\"type\": \"%s\", \"phys\": \"0x%llx\", \"pages\": %llu, "
			      "\"attr\": \"0x0\", \"snapshot\": \"mem-%016llx.bin\"}",
			  n || i ? "," : "", x->type, (unsigned long long)x->phys,
			  (unsigned long long)x->pages, (unsigned long long)x->phys);
		stats->regions++;
		stats->code_bytes += x->pages * 4096ull;
	}
	sb_puts(&sb, "\n]}\n");
	EFI_STATUS st = sb.truncated ? EFI_BUFFER_TOO_SMALL
				     : run_write_file(run, "memmap.json", buf, sb.len);
	FreePool(buf);
	return st;
}

/* The file path nodes of dp joined, without allocating (at ExitBootServices
 * nothing may allocate memory: UEFI 2.10 7.4). */
static void file_path_text(EFI_DEVICE_PATH *dp, char *out, UINTN cap)
{
	UINTN o = 0;
	for (EFI_DEVICE_PATH *n = dp; n && !IsDevicePathEnd(n) && o + 1 < cap;
	     n = NextDevicePathNode(n)) {
		/* MEDIA_DEVICE_PATH subtype 4: a file path, UCS-2 after the 4-byte node header */
		if (DevicePathType(n) != MEDIA_DEVICE_PATH || DevicePathSubType(n) != 4)
			continue;
		const UINT8 *w = (const UINT8 *)n + 4;
		UINTN chars = (DevicePathNodeLength(n) - 4) / 2;
		for (UINTN i = 0; i < chars && o + 1 < cap; i++) {
			UINT16 c = (UINT16)(w[2 * i] | w[2 * i + 1] << 8);
			if (!c)
				break;
			out[o++] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
		}
	}
	out[o] = 0;
}

/*
 * Text for an image's device path. Firmware drivers live in firmware volumes
 * and are named by a PI "FvFile(GUID)" node, which gnu-efi cannot print.
 * Without may_alloc only file path nodes are printed.
 */
static void devpath_text(EFI_DEVICE_PATH *dp, char *out, UINTN cap, bool may_alloc)
{
	out[0] = 0;
	for (EFI_DEVICE_PATH *n = dp; n && !IsDevicePathEnd(n); n = NextDevicePathNode(n)) {
		/* MEDIA_DEVICE_PATH subtype 6: PI firmware file, 7: firmware volume */
		if (DevicePathType(n) == MEDIA_DEVICE_PATH &&
		    (DevicePathSubType(n) == 6 || DevicePathSubType(n) == 7) &&
		    DevicePathNodeLength(n) >= 4 + 16) {
			const UINT8 *g = (const UINT8 *)n + 4;
			struct strbuf sb;
			sb_init(&sb, out, cap);
			sb_printf(&sb, "%s(%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X)",
				  DevicePathSubType(n) == 6 ? "FvFile" : "Fv",
				  (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (unsigned)g[3] << 24),
				  (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9],
				  g[10], g[11], g[12], g[13], g[14], g[15]);
			if (DevicePathSubType(n) == 6)
				return;
		}
	}
	if (out[0])
		return;
	if (!may_alloc) {
		file_path_text(dp, out, cap);
		return;
	}
	CHAR16 *w = DevicePathToStr(dp);
	if (w) {
		ucs2_to_ascii(out, cap, w);
		FreePool(w);
	}
}

/* The name the summary and images.json use: the CodeView debug file's base
 * name where the build recorded one, else the device path's last component. */
static void image_name(EFI_LOADED_IMAGE *li, struct pe_info *pe, int *perr, char *path,
		       UINTN path_cap, char *name, UINTN name_cap, bool may_alloc)
{
	const UINT8 *base = li->ImageBase;
	*perr = base && li->ImageSize && ptimg_range_ok((UINTN)base, li->ImageSize)
			? pe_read_info(base, li->ImageSize, true, pe)
			: PE_ERR_TRUNCATED;
	path[0] = 0;
	if (li->FilePath)
		devpath_text(li->FilePath, path, path_cap, may_alloc);
	if (*perr == PE_OK && pe->debug_path[0])
		pe_debug_name(pe->debug_path, name, name_cap);
	else
		pe_debug_name(path, name, name_cap);
}

/* image_name's name alone. */
static void image_short_name(EFI_LOADED_IMAGE *li, char *name, UINTN name_cap)
{
	struct pe_info pe;
	int perr;
	char path[256];
	image_name(li, &pe, &perr, path, sizeof(path), name, name_cap, true);
}

/* The handles with a loaded image protocol, in firmware order (FreePool). */
static EFI_STATUS image_handles(EFI_HANDLE **handles, UINTN *nh)
{
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	*nh = 0;
	*handles = NULL;
	return uefi_call_wrapper(BS->LocateHandleBuffer, 5, ByProtocol, &lip, NULL, nh, handles);
}

EFI_LOADED_IMAGE *sideband_loaded_image(EFI_HANDLE h)
{
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	EFI_LOADED_IMAGE *li;
	if (EFI_ERROR(uefi_call_wrapper(BS->HandleProtocol, 3, h, &lip, (void **)&li)))
		return NULL;
	return li;
}

/* The image as the decode summary sees it. */
static void summary_entry(EFI_LOADED_IMAGE *li, const char *name, struct ptsum_image *out)
{
	out->base = (UINTN)li->ImageBase;
	out->size = ptimg_range_ok(out->base, li->ImageSize) ? li->ImageSize : 0;
	efipt_memcpy(out->name, name, sizeof(out->name));
	out->insns = 0;
}

void sideband_image_record(EFI_LOADED_IMAGE *li, struct imgrec *r, bool may_alloc)
{
	struct pe_info pe;
	int perr;
	efipt_memset(r, 0, sizeof(*r));
	image_name(li, &pe, &perr, r->path, sizeof(r->path), r->name, sizeof(r->name),
		   may_alloc);
	r->base = (UINTN)li->ImageBase;
	/* firmware data: an ImageSize that runs past 2^64 is recorded, not used */
	if (ptimg_range_ok(r->base, li->ImageSize))
		r->size = li->ImageSize;
	else
		r->bad_size = li->ImageSize;
	r->code_type = li->ImageCodeType;
	r->pe_err = perr;
	if (perr == PE_OK) {
		efipt_memcpy(r->pdb, pe.debug_path, sizeof(r->pdb));
		r->entry = r->base + pe.entry_rva;
	}
}

static void image_entry(struct strbuf *sb, EFI_LOADED_IMAGE *li, bool first,
			struct ptsum_image *out)
{
	static struct imgrec r;
	sideband_image_record(li, &r, true);
	if (out)
		summary_entry(li, r.name, out);
	sb_puts(sb, first ? "\n  " : ",\n  ");
	imgrec_json(&r, sb);
}

EFI_STATUS sideband_list_images(struct ptsum_image *img, unsigned max, unsigned *nimg)
{
	UINTN nh;
	EFI_HANDLE *handles;
	*nimg = 0;
	EFI_STATUS st = image_handles(&handles, &nh);
	if (EFI_ERROR(st))
		return st;
	for (UINTN i = 0; i < nh && *nimg < max; i++) {
		EFI_LOADED_IMAGE *li = sideband_loaded_image(handles[i]);
		if (!li)
			continue;
		char name[64];
		image_short_name(li, name, sizeof(name));
		summary_entry(li, name, &img[(*nimg)++]);
	}
	FreePool(handles);
	return EFI_SUCCESS;
}

/* The last images.json written, for sideband_images_append(). */
static struct {
	char *text;
	UINTN len;
	bool any;	/* it lists an image */
} kept;

static EFI_STATUS write_images(struct run *run, struct sideband_stats *stats,
			       struct ptsum_image *img, unsigned max, unsigned *nimg)
{
	UINTN nh;
	EFI_HANDLE *handles;
	EFI_STATUS st = image_handles(&handles, &nh);
	if (EFI_ERROR(st))
		return st;
	UINTN cap = 256 + nh * 700;
	char *buf = AllocatePool(cap);
	if (!buf) {
		FreePool(handles);
		return EFI_OUT_OF_RESOURCES;
	}
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_puts(&sb, "{\"images\": [");
	bool first = true;
	for (UINTN i = 0; i < nh; i++) {
		EFI_LOADED_IMAGE *li = sideband_loaded_image(handles[i]);
		if (!li)
			continue;
		struct ptsum_image *o = img && *nimg < max ? &img[(*nimg)++] : NULL;
		image_entry(&sb, li, first, o);
		first = false;
		stats->images++;
	}
	sb_puts(&sb, "\n]}\n");
	FreePool(handles);
	st = sb.truncated ? EFI_BUFFER_TOO_SMALL : run_write_file(run, "images.json", buf, sb.len);
	sideband_images_forget();
	if (EFI_ERROR(st)) {
		FreePool(buf);
		return st;
	}
	kept.text = buf;
	kept.len = sb.len;
	kept.any = !first;
	return st;
}

void sideband_images_forget(void)
{
	if (kept.text)
		FreePool(kept.text);
	kept.text = NULL;
}

EFI_STATUS sideband_images_append(struct run *run, const char *more)
{
	static const char end[] = "\n]}\n";
	UINTN tail = sizeof(end) - 1;
	if (!kept.text || kept.len < tail)
		return EFI_NOT_READY;
	UINTN n = efipt_strlen(more), cap = kept.len + n + 8;
	char *buf = AllocatePool(cap);
	if (!buf)
		return EFI_OUT_OF_RESOURCES;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_putn(&sb, kept.text, kept.len - tail);
	sb_puts(&sb, kept.any ? ",\n  " : "\n  ");
	sb_puts(&sb, more);
	sb_puts(&sb, end);
	EFI_STATUS st = sb.truncated ? EFI_BUFFER_TOO_SMALL
				     : run_write_file(run, "images.json", buf, sb.len);
	FreePool(buf);
	return st;
}

bool sideband_find_image(const char *want, uint64_t *base, uint64_t *size)
{
	UINTN nh;
	EFI_HANDLE *handles;
	if (EFI_ERROR(image_handles(&handles, &nh)))
		return false;
	bool found = false;
	for (UINTN i = 0; i < nh && !found; i++) {
		EFI_LOADED_IMAGE *li = sideband_loaded_image(handles[i]);
		if (!li)
			continue;
		char name[64];
		image_short_name(li, name, sizeof(name));
		if (!efipt_strcmp(name, want) &&
		    ptimg_range_ok((UINTN)li->ImageBase, li->ImageSize)) {
			*base = (UINTN)li->ImageBase;
			*size = li->ImageSize;
			found = true;
		}
	}
	FreePool(handles);
	return found;
}

/* One snapshot file; progress lines when there is much to write. */
static EFI_STATUS write_snapshot(struct run *run, uint64_t phys, uint64_t pages,
				 const struct sideband_stats *stats, UINT64 *done)
{
	char name[48];
	struct strbuf nb;
	sb_init(&nb, name, sizeof(name));
	sb_printf(&nb, "mem-%016llx.bin", (unsigned long long)phys);
	UINT64 bytes = pages * 4096ull;
	EFI_STATUS st = run_write_file(run, name, (const void *)(UINTN)phys, bytes);
	*done += bytes;
	if (stats->code_bytes >= (8u << 20))
		con_printf("efipt:   %3llu%%  %s (%llu KiB)\n",
			   (unsigned long long)(*done * 100 / stats->code_bytes), name,
			   (unsigned long long)(bytes >> 10));
	return st;
}

static EFI_STATUS write_sideband(struct run *run, struct sideband_stats *stats,
				 const struct sideband_region *extra, unsigned nextra,
				 bool images, struct ptsum_image *img, unsigned max, unsigned *nimg)
{
	unsigned dummy;
	if (!nimg)
		nimg = &dummy;
	*nimg = 0;
	stats->images = stats->regions = 0;
	stats->code_bytes = 0;
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	if (!map)
		return EFI_OUT_OF_RESOURCES;
	EFI_STATUS st = write_memmap(run, map, n, dsize, extra, nextra, stats);
	if (images)
		st = first_error(st, write_images(run, stats, img, max, nimg));
	con_printf("efipt: saving %llu KiB of code in %llu regions\n",
		   (unsigned long long)(stats->code_bytes >> 10), (unsigned long long)stats->regions);
	UINT64 done = 0;
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = DESC(map, i, dsize);
		if (is_code(d->Type))
			st = first_error(st, write_snapshot(run, d->PhysicalStart, d->NumberOfPages,
							    stats, &done));
	}
	for (unsigned i = 0; i < nextra; i++)
		st = first_error(st, write_snapshot(run, extra[i].phys, extra[i].pages, stats, &done));
	FreePool(map);
	return st;
}

EFI_STATUS sideband_write(struct run *run, struct sideband_stats *stats,
			  struct ptsum_image *img, unsigned max, unsigned *nimg)
{
	return write_sideband(run, stats, NULL, 0, true, img, max, nimg);
}

EFI_STATUS sideband_write_code(struct run *run, struct sideband_stats *stats,
			       const struct sideband_region *extra, unsigned nextra)
{
	return write_sideband(run, stats, extra, nextra, false, NULL, 0, NULL);
}
