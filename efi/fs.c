/* ESP file access; see fs.h. Every EFI_STATUS is checked. */
#include <efi.h>
#include <efilib.h>

#include "core/mem.h"
#include "efi/console.h"
#include "efi/fs.h"

void ascii_to_ucs2(CHAR16 *dst, UINTN cap, const char *src)
{
	UINTN i = 0;
	for (; cap && i + 1 < cap && src[i]; i++)
		dst[i] = (CHAR16)(unsigned char)src[i];
	if (cap)
		dst[i] = 0;
}

void ucs2_to_ascii(char *dst, UINTN cap, const CHAR16 *src)
{
	UINTN i = 0;
	for (; cap && i + 1 < cap && src[i]; i++) {
		CHAR16 c = src[i];
		dst[i] = (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' ? (char)c
											  : '?';
	}
	if (cap)
		dst[i] = 0;
}

const char *efi_status_name(EFI_STATUS st)
{
	switch (st) {
	case EFI_SUCCESS: return "EFI_SUCCESS";
	case EFI_LOAD_ERROR: return "EFI_LOAD_ERROR";
	case EFI_INVALID_PARAMETER: return "EFI_INVALID_PARAMETER";
	case EFI_UNSUPPORTED: return "EFI_UNSUPPORTED";
	case EFI_BAD_BUFFER_SIZE: return "EFI_BAD_BUFFER_SIZE";
	case EFI_BUFFER_TOO_SMALL: return "EFI_BUFFER_TOO_SMALL";
	case EFI_NOT_READY: return "EFI_NOT_READY";
	case EFI_DEVICE_ERROR: return "EFI_DEVICE_ERROR";
	case EFI_WRITE_PROTECTED: return "EFI_WRITE_PROTECTED";
	case EFI_OUT_OF_RESOURCES: return "EFI_OUT_OF_RESOURCES";
	case EFI_VOLUME_CORRUPTED: return "EFI_VOLUME_CORRUPTED";
	case EFI_VOLUME_FULL: return "EFI_VOLUME_FULL";
	case EFI_NO_MEDIA: return "EFI_NO_MEDIA";
	case EFI_MEDIA_CHANGED: return "EFI_MEDIA_CHANGED";
	case EFI_NOT_FOUND: return "EFI_NOT_FOUND";
	case EFI_ACCESS_DENIED: return "EFI_ACCESS_DENIED";
	case EFI_ABORTED: return "EFI_ABORTED";
	case EFI_SECURITY_VIOLATION: return "EFI_SECURITY_VIOLATION";
	case EFI_ALREADY_STARTED: return "EFI_ALREADY_STARTED";
	case EFI_CRC_ERROR: return "EFI_CRC_ERROR";
	case EFI_COMPROMISED_DATA: return "EFI_COMPROMISED_DATA";
	default: return "EFI_ERROR";
	}
}

/* Directory part of the image's file path: the last FILEPATH node's text. */
static void image_directory(EFI_LOADED_IMAGE *image, CHAR16 *out, UINTN cap)
{
	out[0] = 0;
	EFI_DEVICE_PATH *dp = image->FilePath;
	CHAR16 path[256];
	path[0] = 0;
	UINTN n = 0;
	/* a file path may be split over several FILEPATH nodes: concatenate them */
	while (dp && !IsDevicePathEnd(dp)) {
		if (DevicePathType(dp) == MEDIA_DEVICE_PATH &&
		    DevicePathSubType(dp) == MEDIA_FILEPATH_DP) {
			FILEPATH_DEVICE_PATH *fp = (FILEPATH_DEVICE_PATH *)dp;
			UINTN chars = (DevicePathNodeLength(dp) - 4) / sizeof(CHAR16);
			if (n && path[n - 1] != L'\\' && fp->PathName[0] != L'\\' && n + 1 < 255)
				path[n++] = L'\\';
			for (UINTN i = 0; i < chars && fp->PathName[i] && n + 1 < 255; i++)
				path[n++] = fp->PathName[i];
			path[n] = 0;
		}
		dp = NextDevicePathNode(dp);
	}
	/* cut the file name */
	while (n && path[n - 1] != L'\\' && path[n - 1] != L'/')
		n--;
	if (n > 1)
		n--; /* drop the trailing backslash, keep "\" for the root */
	path[n] = 0;
	for (UINTN i = 0; i <= n && i + 1 < cap; i++) {
		out[i] = path[i] == L'/' ? L'\\' : path[i];
		out[i + 1] = 0;
	}
}

EFI_STATUS esp_open(struct esp *esp, EFI_LOADED_IMAGE *image)
{
	esp->root = LibOpenRoot(image->DeviceHandle);
	if (!esp->root)
		return EFI_NOT_FOUND;
	image_directory(image, esp->image_dir, sizeof(esp->image_dir) / sizeof(CHAR16));
	return EFI_SUCCESS;
}

void esp_close(struct esp *esp)
{
	if (esp->root)
		uefi_call_wrapper(esp->root->Close, 1, esp->root);
	esp->root = NULL;
}

EFI_STATUS esp_read_head(struct esp *esp, const CHAR16 *path, UINTN max, char **data,
			 UINTN *len, UINT64 *size)
{
	EFI_FILE_HANDLE f;
	*data = NULL;
	*len = 0;
	*size = 0;
	EFI_STATUS st = uefi_call_wrapper(esp->root->Open, 5, esp->root, &f, (CHAR16 *)path,
					  EFI_FILE_MODE_READ, 0ULL);
	if (EFI_ERROR(st))
		return st;
	EFI_FILE_INFO *info = LibFileInfo(f);
	if (!info) {
		uefi_call_wrapper(f->Close, 1, f);
		return EFI_DEVICE_ERROR;
	}
	*size = info->FileSize;
	bool is_dir = (info->Attribute & EFI_FILE_DIRECTORY) != 0;
	FreePool(info);
	if (is_dir) {
		uefi_call_wrapper(f->Close, 1, f);
		return EFI_UNSUPPORTED;
	}
	UINTN want = *size < max ? (UINTN)*size : max;
	char *buf = AllocatePool(want + 1);
	if (!buf) {
		uefi_call_wrapper(f->Close, 1, f);
		return EFI_OUT_OF_RESOURCES;
	}
	UINTN got = want;
	st = uefi_call_wrapper(f->Read, 3, f, &got, buf);
	uefi_call_wrapper(f->Close, 1, f);
	if (EFI_ERROR(st) || got != want) {
		FreePool(buf);
		return EFI_ERROR(st) ? st : EFI_DEVICE_ERROR;
	}
	buf[got] = 0;
	*data = buf;
	*len = got;
	return EFI_SUCCESS;
}

BOOLEAN esp_exists(struct esp *esp, const CHAR16 *path)
{
	EFI_FILE_HANDLE f;
	EFI_STATUS st = uefi_call_wrapper(esp->root->Open, 5, esp->root, &f, (CHAR16 *)path,
					  EFI_FILE_MODE_READ, 0ULL);
	if (EFI_ERROR(st))
		return FALSE;
	uefi_call_wrapper(f->Close, 1, f);
	return TRUE;
}

EFI_STATUS esp_mkdir(struct esp *esp, const CHAR16 *path)
{
	CHAR16 part[256];
	UINTN n = 0;
	for (UINTN i = 0;; i++) {
		CHAR16 c = path[i];
		if ((c == L'\\' || c == 0) && n > 0 && !(n == 1 && part[0] == L'\\')) {
			part[n] = 0;
			EFI_FILE_HANDLE d;
			EFI_STATUS st = uefi_call_wrapper(
				esp->root->Open, 5, esp->root, &d, part,
				EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE | EFI_FILE_MODE_CREATE,
				(UINT64)EFI_FILE_DIRECTORY);
			if (EFI_ERROR(st))
				return st;
			uefi_call_wrapper(d->Close, 1, d);
		}
		if (!c)
			break;
		if (n + 1 >= sizeof(part) / sizeof(part[0]))
			return EFI_BAD_BUFFER_SIZE;
		part[n++] = c;
	}
	return EFI_SUCCESS;
}

static void path_join(CHAR16 *out, UINTN cap, const CHAR16 *dir, const CHAR16 *name)
{
	UINTN n = 0;
	for (UINTN i = 0; dir[i] && n + 1 < cap; i++)
		out[n++] = dir[i];
	if (n && out[n - 1] != L'\\' && n + 1 < cap)
		out[n++] = L'\\';
	for (UINTN i = 0; name[i] && n + 1 < cap; i++)
		out[n++] = name[i];
	out[n] = 0;
}

static EFI_STATUS delete_if_exists(struct esp *esp, const CHAR16 *path)
{
	EFI_FILE_HANDLE f;
	EFI_STATUS st = uefi_call_wrapper(esp->root->Open, 5, esp->root, &f, (CHAR16 *)path,
					  EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE, 0ULL);
	if (st == EFI_NOT_FOUND)
		return EFI_SUCCESS;
	if (EFI_ERROR(st))
		return st;
	/* Delete closes the handle, even on failure */
	st = uefi_call_wrapper(f->Delete, 1, f);
	return st == EFI_WARN_DELETE_FAILURE ? EFI_ACCESS_DENIED : st;
}

EFI_STATUS esp_delete(struct esp *esp, const CHAR16 *dir, const CHAR16 *name)
{
	CHAR16 path[320];
	path_join(path, 320, dir, name);
	return delete_if_exists(esp, path);
}

/* Rename an open file within its directory via EFI_FILE_INFO.FileName. */
static EFI_STATUS rename_open_file(EFI_FILE_HANDLE f, const CHAR16 *new_name)
{
	EFI_FILE_INFO *info = LibFileInfo(f);
	if (!info)
		return EFI_DEVICE_ERROR;
	UINTN name_len = StrLen((CHAR16 *)new_name);
	UINTN size = SIZE_OF_EFI_FILE_INFO + (name_len + 1) * sizeof(CHAR16);
	EFI_FILE_INFO *ni = AllocateZeroPool(size);
	if (!ni) {
		FreePool(info);
		return EFI_OUT_OF_RESOURCES;
	}
	CopyMem(ni, info, SIZE_OF_EFI_FILE_INFO);
	FreePool(info);
	ni->Size = size;
	CopyMem(ni->FileName, (CHAR16 *)new_name, (name_len + 1) * sizeof(CHAR16));
	EFI_STATUS st = uefi_call_wrapper(f->SetInfo, 4, f, &GenericFileInfo, size, ni);
	FreePool(ni);
	return st;
}

EFI_STATUS esp_file_create(struct esp *esp, const CHAR16 *dir, const CHAR16 *name,
			   UINT64 total, struct esp_file *w)
{
	efipt_memset(w, 0, sizeof(*w));
	path_join(w->name, 128, L"", name);
	CHAR16 tmp_name[136];
	path_join(tmp_name, 136, L"", name);
	StrCat(tmp_name, L".tmp");
	path_join(w->tmp_path, 320, dir, tmp_name);
	path_join(w->final_path, 320, dir, name);
	w->total = total;
	EFI_STATUS st = delete_if_exists(esp, w->tmp_path);
	if (EFI_ERROR(st))
		return st;
	st = uefi_call_wrapper(esp->root->Open, 5, esp->root, &w->f, w->tmp_path,
			       EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE | EFI_FILE_MODE_CREATE,
			       0ULL);
	if (EFI_ERROR(st))
		w->f = NULL;
	return st;
}

EFI_STATUS esp_file_append(struct esp_file *w, const void *data, UINTN len)
{
	/* write in chunks: some firmware file systems reject very large writes */
	const UINT8 *p = data;
	EFI_STATUS st = EFI_SUCCESS;
	while (len && !EFI_ERROR(st)) {
		/* large files (trace buffers can be GiBs) show their progress */
		if (w->total >= (32u << 20) && w->done * 10 / w->total >= w->shown + 1u) {
			w->shown = (unsigned)(w->done * 10 / w->total);
			char line[96];
			ucs2_to_ascii(line, 64, w->name);
			con_printf("efipt:   writing %s: %u%%\n", line, w->shown * 10);
		}
		UINTN chunk = len > (1u << 20) ? (1u << 20) : len;
		UINTN done = chunk;
		st = uefi_call_wrapper(w->f->Write, 3, w->f, &done, (void *)p);
		if (!EFI_ERROR(st) && done != chunk)
			st = EFI_VOLUME_FULL;
		p += done;
		len -= done;
		w->done += done;
	}
	return st;
}

void esp_file_abort(struct esp_file *w)
{
	if (w->f)
		uefi_call_wrapper(w->f->Delete, 1, w->f); /* closes the handle */
	w->f = NULL;
}

EFI_STATUS esp_file_commit(struct esp *esp, struct esp_file *w)
{
	EFI_STATUS st = uefi_call_wrapper(w->f->Flush, 1, w->f);
	if (!EFI_ERROR(st))
		st = delete_if_exists(esp, w->final_path);
	if (!EFI_ERROR(st))
		st = rename_open_file(w->f, w->name);
	if (EFI_ERROR(st)) {
		esp_file_abort(w);
		return st;
	}
	st = uefi_call_wrapper(w->f->Close, 1, w->f);
	w->f = NULL;
	return st;
}

EFI_STATUS esp_write_atomic(struct esp *esp, const CHAR16 *dir, const CHAR16 *name,
			    const void *data, UINTN len)
{
	struct esp_file w;
	EFI_STATUS st = esp_file_create(esp, dir, name, len, &w);
	if (EFI_ERROR(st))
		return st;
	st = esp_file_append(&w, data, len);
	if (EFI_ERROR(st)) {
		esp_file_abort(&w);
		return st;
	}
	return esp_file_commit(esp, &w);
}
