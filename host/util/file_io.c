/* Host file helpers; see file_io.h. */
/* nftw() (XSI) also where the build does not ask for _GNU_SOURCE (fuzz) */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cpuid_set.h"
#include "host/util/file_io.h"

/* Messages begin "efipt CMD: ": callers name the command with or without
 * "efipt " ("coverage" or "efipt coverage"), the prefix is written once. */
static const char *who(const char *cmd)
{
	static char buf[64];
	if (!strncmp(cmd, "efipt ", 6))
		return cmd;
	snprintf(buf, sizeof(buf), "efipt %s", cmd);
	return buf;
}

int open_regular(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s, not a regular file", path,
			 S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file");
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int input_map(struct input_map *m, const char *path, size_t max, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	bool is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? 0 : open_regular(path, err, errlen);
	if (fd < 0)
		return -1;
	const char *name = is_stdin ? "<stdin>" : path;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((unsigned long long)st.st_size > max) {
			snprintf(err, errlen, "%s: %lld bytes, more than the %zu this command reads",
				 name, (long long)st.st_size, max);
			goto fail;
		}
		m->size = (size_t)st.st_size;
		if (m->size) {
			m->map = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m->map == MAP_FAILED) {
				m->map = NULL;
				snprintf(err, errlen, "%s: mmap: %s", name, strerror(errno));
				goto fail;
			}
			m->data = m->map;
		}
		if (!is_stdin)
			close(fd);
		return 0;
	}
	/* a pipe: read it, growing the buffer as it comes */
	size_t cap = 0;
	for (;;) {
		if (m->size == cap) {
			if (cap >= max) {
				snprintf(err, errlen, "%s: more than the %zu bytes this command reads",
					 name, max);
				goto fail;
			}
			size_t nc = cap ? (cap > max / 2 ? max : cap * 2) : (1u << 20);
			unsigned char *nb = realloc(m->heap, nc);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory after %zu bytes", name, m->size);
				goto fail;
			}
			m->heap = nb;
			cap = nc;
		}
		ssize_t n = read(fd, m->heap + m->size, cap - m->size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		m->size += (size_t)n;
	}
	m->data = m->heap;
	if (!is_stdin)
		close(fd);
	return 0;
fail:
	if (!is_stdin)
		close(fd);
	input_unmap(m);
	return -1;
}

void input_release(struct input_map *m, size_t offset)
{
	/* a stretch behind the reader stays: 16 MiB, and whole pages */
	const size_t keep = 16u << 20;
	if (!m->map || offset < keep || offset > m->size)
		return;
	size_t upto = (offset - keep) & ~(size_t)(sysconf(_SC_PAGESIZE) - 1);
	if (upto <= m->released + keep)
		return; /* in steps of 16 MiB at least */
	madvise((char *)m->map + m->released, upto - m->released, MADV_DONTNEED);
	m->released = upto;
}

void input_unmap(struct input_map *m)
{
	if (m->map)
		munmap(m->map, m->size);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

int input_each(const char *cmd, const char *const *files, unsigned n,
	       int (*read)(void *ctx, const unsigned char *d, size_t size, char *err,
			   size_t errlen),
	       void *ctx)
{
	for (unsigned i = 0; i < n; i++) {
		struct input_map in;
		char err[4400];
		if (input_map(&in, files[i], 1ull << 32, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", who(cmd), term_safe(err));
			return 2;
		}
		int bad = read(ctx, in.data, in.size, err, sizeof(err));
		input_unmap(&in);
		if (bad) {
			fprintf(stderr, "%s: %s: %s\n", who(cmd), term_safe(files[i]), term_safe(err));
			return 1;
		}
	}
	return 0;
}

char *read_small_file(const char *cmd, const char *path, size_t max, size_t *len)
{
	char err[4200];
	int fd = open_regular(path, err, sizeof(err));
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
	if (!f) {
		if (fd >= 0) {
			snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
			close(fd);
		}
		fprintf(stderr, "efipt%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", err);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			if (cap >= max) {
				fprintf(stderr, "efipt%s%s: %s: larger than %zu bytes, not a valid input\n",
					cmd ? " " : "", cmd ? cmd : "", path, max);
				free(buf);
				buf = NULL;
				break;
			}
			cap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				fprintf(stderr, "efipt%s%s: %s: read error: %s\n", cmd ? " " : "",
					cmd ? cmd : "", path, strerror(errno));
				free(buf);
				buf = NULL;
			}
			break;
		}
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = 0;
	*len = n;
	return buf;
}

int parse_u64(const char *s, unsigned long long *v)
{
	/* strtoull itself skips blanks and takes a sign: " -5" is 2^64-5 */
	if (!s || *s < '0' || *s > '9')
		return -1;
	/* decimal or 0x hex, never octal: an engineer's 010 is ten */
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (hex && !isxdigit((unsigned char)s[2]))
		return -1;
	char *end;
	errno = 0;
	*v = strtoull(s + (hex ? 2 : 0), &end, hex ? 16 : 10);
	return (errno || *end) ? -1 : 0;
}

int read_cpuid_file(const char *cmd, const char *path, unsigned cpu, struct cpuid_set *set)
{
	size_t len;
	char *text = read_small_file(cmd, path, 4u << 20, &len);
	if (!text)
		return -1;
	unsigned line;
	int err = cpuidtxt_parse(set, text, len, cpu, &line);
	free(text);
	if (!err)
		return 0;
	if (line)
		fprintf(stderr, "%s: %s:%u: %s\n", who(cmd), path, line, cpuidtxt_errstr(err));
	else
		fprintf(stderr, "%s: %s: %s\n", who(cmd), path, cpuidtxt_errstr(err));
	return -1;
}

static int stdout_errno; /* the cause of the first failed flush_stdout() */

void flush_stdout(void)
{
	if (fflush(stdout) && !stdout_errno)
		stdout_errno = errno;
}

int finish_stdout(const char *cmd, int rc)
{
	/* ferror: a write failed earlier, even if this flush succeeds */
	int bad = ferror(stdout);
	int err = stdout_errno ? stdout_errno : bad ? EIO : 0;
	if (fflush(stdout)) {
		bad = 1;
		err = errno;
	}
	if (fclose(stdout) && !bad) {
		bad = 1;
		err = errno;
	}
	if (!bad)
		return rc;
	fprintf(stderr, "efipt%s%s: write error on standard output: %s (the output is "
			"incomplete)\n", cmd ? " " : "", cmd ? cmd : "", strerror(err));
	return 2;
}

/* Under /dev/ or /proc/: a device, or a stream's name (/dev/stdout,
 * /proc/self/fd/N). */
static bool in_dev_or_proc(const char *path)
{
	return !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6);
}

int atomic_open(struct atomic_file *af, const char *cmd, const char *path)
{
	af->f = NULL;
	af->err = 0;
	if (strlen(path) >= sizeof(af->path)) {
		fprintf(stderr, "%s: %s: path too long\n", who(cmd), path);
		return -1;
	}
	strcpy(af->path, path);
	strcpy(af->dest, path);
	af->tmp[0] = 0;
	struct stat st, lst;
	char link[4096];
	ssize_t ln = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)
			     ? readlink(path, link, sizeof(link) - 1) : -1;
	if (ln >= 0)
		link[ln] = 0;
	if (stat(path, &st) == 0 &&
	    (!S_ISREG(st.st_mode) || in_dev_or_proc(path) || (ln >= 0 && in_dev_or_proc(link)))) {
		/* /dev/null, a FIFO, /dev/stdout: written in place, never
		 * renamed over */
		af->f = S_ISDIR(st.st_mode) ? NULL : fopen(path, "wb");
		if (!af->f) {
			fprintf(stderr, "%s: %s: %s\n", who(cmd), path,
				S_ISDIR(st.st_mode) ? "a directory" : strerror(errno));
			return -1;
		}
		return 0;
	}
	/* a link stays a link: the file it leads to is replaced */
	char *real = ln >= 0 ? realpath(path, NULL) : NULL;
	if (real && strlen(real) < sizeof(af->dest))
		strcpy(af->dest, real);
	free(real);
	snprintf(af->tmp, sizeof(af->tmp), "%s.tmp-XXXXXX", af->dest);
	int fd = mkstemp(af->tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: cannot create a temporary file next to it: %s\n",
			who(cmd), path, strerror(errno));
		return -1;
	}
	/* mkstemp makes it 0600; give it the mode a plain create would */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	af->f = fdopen(fd, "wb");
	if (!af->f) {
		fprintf(stderr, "%s: %s: %s\n", who(cmd), af->tmp, strerror(errno));
		close(fd);
		unlink(af->tmp);
		return -1;
	}
	return 0;
}

void atomic_write(struct atomic_file *af, const void *p, size_t n)
{
	if (fwrite(p, 1, n, af->f) != n && !af->err)
		af->err = errno;
}

int atomic_commit(struct atomic_file *af, const char *cmd)
{
	int err = af->err ? af->err : ferror(af->f) ? EIO : 0;
	if (fflush(af->f) && !err)
		err = errno;
	if (!err && af->tmp[0] && fsync(fileno(af->f)))
		err = errno;
	if (fclose(af->f) && !err)
		err = errno;
	af->f = NULL;
	if (!err && af->tmp[0] && rename(af->tmp, af->dest))
		err = errno;
	if (!err)
		return 0;
	fprintf(stderr, "%s: %s: write error: %s%s\n", who(cmd), af->path, strerror(err),
		af->tmp[0] ? " (nothing written)" : "");
	if (af->tmp[0])
		unlink(af->tmp);
	return -1;
}

void atomic_abort(struct atomic_file *af)
{
	if (af->f) {
		fclose(af->f);
		af->f = NULL;
		if (af->tmp[0])
			unlink(af->tmp);
	}
}

/* The one escaping rule; emit() receives the text piece by piece. */
static void escape(const char *str, bool text, void (*emit)(void *, const char *, size_t),
		   void *ctx)
{
	const unsigned char *s = (const unsigned char *)str;
	char e[8];
	while (*s) {
		const unsigned char *run = s;
		while (*s >= 0x20 && *s < 0x7f)
			s++;
		if (s > run)
			emit(ctx, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		if (*s < 0x80) {
			if (text && (*s == '\n' || *s == '\t'))
				emit(ctx, (const char *)s, 1);
			else if (*s == '\n' || *s == '\t' || *s == '\r')
				emit(ctx, *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : "\\r", 2);
			else
				emit(ctx, e, (size_t)snprintf(e, sizeof(e), "\\x%02x", *s));
			s++;
			continue;
		}
		int n = utf8_seq_len(s);
		if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* C1 controls, e.g. CSI */
			emit(ctx, e, (size_t)snprintf(e, sizeof(e), "\\u%04x", s[1]));
		else if (n)
			emit(ctx, (const char *)s, (size_t)n);
		else
			emit(ctx, e, (size_t)snprintf(e, sizeof(e), "\\x%02x", *s));
		s += n ? n : 1;
	}
}

static void emit_file(void *ctx, const char *p, size_t n)
{
	fwrite(p, 1, n, ctx);
}

void fputs_safe_text(const char *s, FILE *f)
{
	escape(s, true, emit_file, f);
}

struct ebuf {
	char *p;
	size_t n, cap;
};

static void emit_buf(void *ctx, const char *p, size_t n)
{
	struct ebuf *b = ctx;
	if (n > b->cap - 1 - b->n)
		n = b->cap - 1 - b->n;
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

const char *term_safe(const char *s)
{
	static char ring[8][4096];
	static unsigned next;
	struct ebuf b = { ring[next++ % 8], 0, sizeof(ring[0]) };
	if (!s)
		s = "";
	escape(s, false, emit_buf, &b);
	b.p[b.n] = 0;
	return b.p;
}

/* nftw() has no context argument: whether remove_tree() left anything */
static bool remove_failed;

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	if (remove(path))
		remove_failed = true;
	return 0; /* on: what can go, goes */
}

int remove_tree(const char *path)
{
	remove_failed = false;
	/* depth first, so that a directory is empty when it comes */
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS))
		return -1;
	return remove_failed ? -1 : 0;
}
