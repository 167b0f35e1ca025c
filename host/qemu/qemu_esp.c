/* The ESP image among QEMU's arguments; see qemu_esp.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host/qemu/qemu_esp.h"

/* See qemu_esp.h. */
int qemu_drive_opt(const char *d, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	for (const char *o = d; o;) {
		if (!strncmp(o, key, kl) && o[kl] == '=') {
			size_t n = 0;
			for (const char *c = o + kl + 1; *c && n + 1 < cap; c++) {
				if (*c == ',' && c[1] != ',')
					break;
				if (*c == ',')
					c++;
				out[n++] = *c;
			}
			out[n] = 0;
			return 0;
		}
		const char *c = o;
		while ((c = strchr(c, ',')) && c[1] == ',')
			c += 2;
		o = c ? c + 1 : NULL;
	}
	return -1;
}

/* A FAT boot sector (0x55AA, "FAT" in the BPB of FAT12/16 or FAT32) at
 * offset off of f. */
static int fat_at(FILE *f, long off)
{
	unsigned char s[512];
	if (fseek(f, off, SEEK_SET) || fread(s, 1, sizeof(s), f) != sizeof(s))
		return 0;
	return s[510] == 0x55 && s[511] == 0xaa &&
	       (!memcmp(s + 0x36, "FAT", 3) || !memcmp(s + 0x52, "FAT", 3));
}

/* "" if path is a raw FAT image (or a GPT disk with the ESP at 1 MiB, as
 * ovmf/mkesp.sh makes), else why not into why. */
static void check_image(const char *path, char *why, size_t whylen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return;
	}
	unsigned char m[4] = { 0 };
	size_t n = fread(m, 1, sizeof(m), f);
	if (n == 4 && !memcmp(m, "QFI\xfb", 4))
		snprintf(why, whylen, "%s is a qcow2 image: efipt reads raw FAT images only", path);
	else if (!fat_at(f, 0) && !fat_at(f, 1 << 20))
		snprintf(why, whylen, "%s holds no FAT file system (at 0, or at 1 MiB of a GPT "
				      "disk)", path);
	else
		why[0] = 0;
	fclose(f);
}

int qemu_find_esp(int argc, char **argv, char *esp, size_t cap, char *from, size_t fromcap,
		  char *why, size_t whylen)
{
	char first[4096] = "", second[4096] = "", fmt[64] = "";
	const char *src = "";
	unsigned n = 0;
	why[0] = 0;
	for (int i = 0; i + 1 < argc; i++) {
		char file[4096], f[64] = "";
		const char *d = argv[i + 1];
		if (!strcmp(argv[i], "-hda")) {
			snprintf(file, sizeof(file), "%s", d);
		} else if (!strcmp(argv[i], "-drive")) {
			char intf[32] = "", media[32] = "";
			qemu_drive_opt(d, "if", intf, sizeof(intf));
			qemu_drive_opt(d, "media", media, sizeof(media));
			/* the firmware's flash and CD-ROMs are no ESP */
			if (!strcmp(intf, "pflash") || !strcmp(media, "cdrom") ||
			    qemu_drive_opt(d, "file", file, sizeof(file)))
				continue;
			qemu_drive_opt(d, "format", f, sizeof(f));
		} else {
			continue;
		}
		if (n++ == 0) {
			snprintf(first, sizeof(first), "%s", file);
			snprintf(fmt, sizeof(fmt), "%s", f);
			src = argv[i][1] == 'h' ? "-hda" : "-drive file=";
		} else if (n == 2) {
			snprintf(second, sizeof(second), "%s", file);
		}
	}
	if (!n)
		return 0;
	if (n > 1) {
		snprintf(why, whylen, "%u disk images in the QEMU arguments (%s, %s%s): give --esp "
				      "IMAGE to say which is the ESP", n, first, second, n > 2 ? ", ..." : "");
		return 0;
	}
	if (*fmt && strcmp(fmt, "raw")) {
		snprintf(why, whylen, "%s is format=%s: efipt reads raw FAT images only", first, fmt);
		return 0;
	}
	check_image(first, why, whylen);
	if (*why)
		return 0;
	snprintf(esp, cap, "%s", first);
	snprintf(from, fromcap, "%s", src);
	return 1;
}
