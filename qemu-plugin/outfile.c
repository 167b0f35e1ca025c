/* Files written through a temporary name; see outfile.h. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "qemu-plugin/outfile.h"

int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->path, sizeof(o->path), "%s/%s", dir, name);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", o->path);
	o->f = fopen(o->tmp, "wb");
	if (!o->f) {
		snprintf(err, errlen, "%s: %s", o->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

void outfile_write(struct outfile *o, const void *buf, size_t n)
{
	if (o->err || !n)
		return;
	if (fwrite(buf, 1, n, o->f) != n)
		o->err = errno ? errno : EIO;
	else
		o->size += n;
}

void outfile_printf(struct outfile *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = o->err ? 0 : vfprintf(o->f, fmt, ap);
	va_end(ap);
	if (n < 0)
		o->err = errno ? errno : EIO;
	else
		o->size += (uint64_t)n;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	if (fflush(o->f) && !o->err)
		o->err = errno ? errno : EIO;
	if (!o->err && fsync(fileno(o->f)))
		o->err = errno ? errno : EIO;
	if (fclose(o->f) && !o->err)
		o->err = errno ? errno : EIO;
	o->f = NULL;
	if (!o->err && rename(o->tmp, o->path))
		o->err = errno ? errno : EIO;
	if (o->err) {
		snprintf(err, errlen, "%s: %s", o->tmp, strerror(o->err));
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	unlink(o->tmp);
}
