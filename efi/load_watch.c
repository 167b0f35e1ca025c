/* Images loaded while traced; see load_watch.h. */
#include <efi.h>
#include <efilib.h>

#include "core/codechg.h"
#include "core/imgrec.h"
#include "core/mem.h"
#include "core/pe_info.h"
#include "core/pt_image.h"
#include "core/strbuf.h"
#include "efi/fs.h"
#include "efi/load_watch.h"
#include "efi/sideband.h"

/* Loads kept without allocating; more grow the table (AllocatePool),
 * and a load that finds no memory is counted, never lost unsaid. */
#define FIRST_LOADS 32

struct load {
	struct imgrec rec;
	uint64_t pos;
	bool pos_known;
	char why[80];		/* no position: why */
	struct pe_code code;	/* its executable ranges (one: all of it) */
	uint8_t *copy;		/* the image as loaded (pool), or NULL */
};

static struct {
	EFI_IMAGE_LOAD orig;
	loadwatch_pos_fn pos;
	struct load first[FIRST_LOADS];
	struct load *load;	/* first, or a pool copy grown from it */
	unsigned n, cap, dropped;
} w;

static void say(char *dst, const char *text)
{
	struct strbuf sb;
	sb_init(&sb, dst, 80);
	sb_puts(&sb, text);
}

static int live_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	const struct imgrec *r = ctx;
	if (ip < r->base || ip - r->base >= r->size)
		return 0;
	uint64_t left = r->size - (ip - r->base);
	size_t k = n < left ? n : (size_t)left;
	CopyMem(buf, (void *)(UINTN)ip, k);
	return (int)k;
}

/* The table changed as a whole: no event sees it half done (TPL_HIGH_LEVEL),
 * its CRC32 over the header size with the field 0 (UEFI 2.10 4.2) */
static void set_load_image(EFI_IMAGE_LOAD fn)
{
	EFI_TPL old = uefi_call_wrapper(BS->RaiseTPL, 1, TPL_HIGH_LEVEL);
	BS->LoadImage = fn;
	BS->Hdr.CRC32 = 0;
	UINT32 crc = 0;
	uefi_call_wrapper(BS->CalculateCrc32, 3, BS, BS->Hdr.HeaderSize, &crc);
	BS->Hdr.CRC32 = crc;
	uefi_call_wrapper(BS->RestoreTPL, 1, old);
}

/* Room for one more load: false when the table cannot grow. */
static bool room(void)
{
	if (w.n < w.cap)
		return true;
	UINTN cap = (UINTN)w.cap * 2;
	struct load *more = AllocatePool(cap * sizeof(*more));
	if (!more)
		return false;
	CopyMem(more, w.load, w.n * sizeof(*more));
	if (w.load != w.first)
		FreePool(w.load);
	w.load = more;
	w.cap = (unsigned)cap;
	return true;
}

/* The name of an image whose loaded image protocol gives none (no
 * FilePath, no CodeView path): the device path LoadImage was given, else
 * "image@BASE". */
static void name_from(struct imgrec *r, EFI_DEVICE_PATH *path)
{
	if (!r->path[0] && path) {
		CHAR16 *t = DevicePathToStr(path);
		if (t) {
			ucs2_to_ascii(r->path, sizeof(r->path), t);
			FreePool(t);
		}
		pe_debug_name(r->path, r->name, sizeof(r->name));
	}
	if (!r->name[0]) {
		struct strbuf sb;
		sb_init(&sb, r->name, sizeof(r->name));
		sb_printf(&sb, "image@0x%llx", (unsigned long long)r->base);
	}
}

/* The new image's record, position and code, right after it loaded. */
static void note(EFI_HANDLE h, EFI_DEVICE_PATH *path)
{
	/* the position first, right after LoadImage wrote the image: every
	 * instruction from there on ran with its code in memory */
	uint64_t pos;
	bool pos_known = !EFI_ERROR(w.pos(&pos));
	EFI_LOADED_IMAGE *li = sideband_loaded_image(h);
	if (!li || !room()) {
		w.dropped++;
		return;
	}
	struct load *l = &w.load[w.n++];
	efipt_memset(l, 0, sizeof(*l));
	l->pos = pos;
	l->pos_known = pos_known;
	if (!l->pos_known)
		say(l->why, "the trace position could not be read");
	sideband_image_record(li, &l->rec, true);
	name_from(&l->rec, path);
	if (!l->rec.size) {
		say(l->why, "its size is 0 or runs past 2^64: no code to copy");
		return;
	}
	struct ptimg img = { live_read, &l->rec };
	if (pe_code_read(&img, l->rec.base, l->rec.size, &l->code) || !l->code.n) {
		l->code.n = 1; /* no PE headers to go by: all of it */
		l->code.r[0].rva = 0;
		l->code.r[0].size = (uint32_t)(l->rec.size < 0xffffffffu ? l->rec.size : 0xffffffffu);
	}
	l->copy = AllocatePool(l->rec.size);
	if (l->copy)
		CopyMem(l->copy, (void *)(UINTN)l->rec.base, l->rec.size);
	else
		say(l->why, "no memory for a copy of its code");
}

static EFI_STATUS EFIAPI watched_load(BOOLEAN boot_policy, EFI_HANDLE parent,
				      EFI_DEVICE_PATH *path, VOID *src, UINTN src_size,
				      EFI_HANDLE *out)
{
	EFI_STATUS st = uefi_call_wrapper(w.orig, 6, boot_policy, parent, path, src, src_size, out);
	if (!EFI_ERROR(st) && out && *out && w.pos)
		note(*out, path);
	return st;
}

void loadwatch_begin(loadwatch_pos_fn pos)
{
	if (w.orig)
		return;
	w.pos = pos;
	w.n = w.dropped = 0;
	w.load = w.first;
	w.cap = FIRST_LOADS;
	w.orig = BS->LoadImage;
	set_load_image(watched_load);
}

void loadwatch_end(void)
{
	if (!w.orig)
		return;
	set_load_image(w.orig);
	w.orig = NULL;
	w.pos = NULL;
}

/* Records of load l: its code ranges in 16-byte pieces at its position
 * (into out, when not NULL). */
static UINTN records(const struct load *l, uint8_t *out)
{
	UINTN k = 0;
	for (unsigned i = 0; i < l->code.n; i++) {
		uint64_t rva = l->code.r[i].rva, end = rva + l->code.r[i].size;
		if (end > l->rec.size)
			end = l->rec.size;
		for (uint64_t a = rva; a < end; a += CODECHG_MAX_LEN, k++) {
			if (!out)
				continue;
			struct codechg c = { .pos = l->pos, .addr = l->rec.base + a, .cpu = 0 };
			c.by = 0;
			c.len = (uint8_t)(end - a < CODECHG_MAX_LEN ? end - a : CODECHG_MAX_LEN);
			efipt_memcpy(c.bytes, l->copy + a, c.len);
			codechg_put(out + CODECHG_HEADER + k * CODECHG_RECORD, &c);
		}
	}
	return k;
}

/* Free the copies and the table. */
static void forget(void)
{
	for (unsigned i = 0; i < w.n; i++)
		if (w.load[i].copy)
			FreePool(w.load[i].copy);
	if (w.load && w.load != w.first)
		FreePool(w.load);
	w.load = w.first;
	w.n = 0;
}

/* codechanges.bin: the placed loads' code. Returns the records written. */
static UINTN write_changes(struct run *run)
{
	UINTN total = 0;
	for (unsigned i = 0; i < w.n; i++)
		if (w.load[i].pos_known && w.load[i].copy)
			total += records(&w.load[i], NULL);
	UINTN size = CODECHG_HEADER + total * CODECHG_RECORD;
	uint8_t *file = total ? AllocatePool(size) : NULL;
	if (!file)
		return 0;
	codechg_header(file);
	UINTN k = 0;
	for (unsigned i = 0; i < w.n; i++)
		if (w.load[i].pos_known && w.load[i].copy)
			k += records(&w.load[i], file + k * CODECHG_RECORD);
	UINTN written = EFI_ERROR(run_write_file(run, "codechanges.bin", file, size)) ? 0 : total;
	FreePool(file);
	return written;
}

/* Load l placed in the trace: its position is where its code starts. */
static bool placed(const struct load *l, UINTN written)
{
	return l->pos_known && l->copy && written;
}

static const char *why_not(const struct load *l)
{
	return l->why[0] ? l->why : "codechanges.bin could not be written";
}

/* images.json again, the loads after the images it listed: each a full
 * record with "loaded_at" (its position, or null and "loaded_why"). */
static void append_images(struct run *run, UINTN written)
{
	UINTN cap = 64 + (UINTN)w.n * 900;
	char *text = AllocatePool(cap);
	if (!text) {
		run_member(run, "loaded_while_traced_images_json",
			   "\"not written: no memory for the list\"");
		return;
	}
	struct strbuf sb;
	sb_init(&sb, text, cap);
	for (unsigned i = 0; i < w.n; i++) {
		const struct load *l = &w.load[i];
		if (i)
			sb_puts(&sb, ",\n  ");
		imgrec_json(&l->rec, &sb);
		sb.len--; /* its closing brace: the load's members follow */
		/* its executable sections: its headers are in no snapshot */
		for (unsigned k = 0; k < l->code.n; k++)
			sb_printf(&sb, "%s{\"rva\": \"0x%x\", \"size\": %u}",
				  k ? ", " : ", \"code\": [", l->code.r[k].rva, l->code.r[k].size);
		if (l->code.n)
			sb_putc(&sb, ']');
		if (placed(l, written))
			sb_printf(&sb, ", \"loaded_at\": %llu}", (unsigned long long)l->pos);
		else
			sb_printf(&sb, ", \"loaded_at\": null, \"loaded_why\": \"%s\"}", why_not(l));
	}
	EFI_STATUS st = sb.truncated ? EFI_BUFFER_TOO_SMALL : sideband_images_append(run, text);
	if (EFI_ERROR(st))
		run_member(run, "loaded_while_traced_images_json", "\"not written: %s\"",
			   st == EFI_NOT_READY ? "no images.json (no snapshot taken)"
					       : efi_status_name(st));
	FreePool(text);
}

/* The manifest's list: each load's name, base, size and position, as many
 * as the manifest has room for (images.json has them all). */
static void list_loads(struct run *run, UINTN written)
{
	UINTN cap = 64 + (UINTN)w.n * 240, room = run->extra_sb.cap - run->extra_sb.len;
	char *list = AllocatePool(cap);
	unsigned listed = 0;
	if (list) {
		struct strbuf sb;
		sb_init(&sb, list, cap);
		sb_putc(&sb, '[');
		for (unsigned i = 0; i < w.n; i++) {
			const struct load *l = &w.load[i];
			UINTN at = sb.len;
			sb_puts(&sb, i ? ", {\"image\": {\"name\": " : "{\"image\": {\"name\": ");
			sb_json_str(&sb, l->rec.name);
			sb_printf(&sb, ", \"base\": \"0x%llx\", \"size\": %llu}",
				  (unsigned long long)l->rec.base, (unsigned long long)l->rec.size);
			if (placed(l, written))
				sb_printf(&sb, ", \"position\": %llu}", (unsigned long long)l->pos);
			else
				sb_printf(&sb, ", \"position\": null, \"why\": \"%s\"}", why_not(l));
			/* 200: the members that follow */
			if (sb.truncated || sb.len + 200 > room) {
				sb.len = at;
				sb.truncated = false;
				break;
			}
			listed++;
		}
		sb_putc(&sb, ']');
		if (listed)
			run_member(run, "loaded_while_traced", "%s", list);
		FreePool(list);
	}
	if (listed < w.n)
		run_member(run, "loaded_while_traced_unlisted", "%u", w.n - listed);
}

UINTN loadwatch_write(struct run *run, bool wrapped, uint64_t trace_len)
{
	if (!run) {
		forget();
		return 0;
	}
	for (unsigned i = 0; i < w.n; i++) {
		struct load *l = &w.load[i];
		if (l->pos_known && (wrapped || l->pos > trace_len)) {
			l->pos_known = false;
			say(l->why, wrapped ? "the trace wrapped: older trace was overwritten"
						      : "past the end of the trace");
		}
	}
	UINTN written = write_changes(run);
	if (w.n) {
		append_images(run, written);
		list_loads(run, written);
	}
	if (w.dropped)
		run_member(run, "loaded_while_traced_dropped", "%u", w.dropped);
	forget();
	return written;
}
