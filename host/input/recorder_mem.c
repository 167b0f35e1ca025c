/* The flight recorder read from Linux; see recorder_mem.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "host/input/recorder_mem.h"

int recmem_read(void *ctx, uint64_t off, void *dst, size_t len)
{
	struct recmem *m = ctx;
	uint64_t at = m->phys + off;
	if (at < m->base)
		return -1;
	uint8_t *d = dst;
	while (len) {
		ssize_t n = pread(m->fd, d, len, (off_t)(at - m->base));
		if (n <= 0) {
			if (!m->err)
				m->err = n < 0 ? errno : EIO;
			return -1;
		}
		d += n;
		len -= (size_t)n;
		at += (uint64_t)n;
	}
	return 0;
}

/* The variable through efivarfs: 4 bytes of attributes, then its data. */
int recmem_read_var(const char *dir, struct ptrec_var *v, char *why, size_t cap)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s-%s", dir, PTREC_VAR_NAME, PTREC_VENDOR_GUID_TEXT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (no recorder: efipt.efi trace --recorder arms one; is "
					   "efivarfs mounted?)"
					 : "");
		return errno == ENOENT ? 1 : 2;
	}
	uint8_t buf[4 + sizeof(*v) + 1];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	struct strbuf sb;
	sb_init(&sb, why, cap);
	if (n < 4) {
		snprintf(why, cap, "%s: %s", path, n < 0 ? strerror(errno) : "too short");
		return 2;
	}
	return ptrec_var_decode(buf + 4, (size_t)n - 4, v, &sb) ? 1 : 0;
}
