/* Trace event JSON writer: see trace_events.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "host/out/trace_events.h"

static void put(struct tev_writer *w, const char *fmt, ...)
{
	char buf[16384]; /* the longest event: a name of tev_json_string(8192) */
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1; /* names are cut by tev_json_string first */
	atomic_write(&w->af, buf, (size_t)n);
	w->bytes += (uint64_t)n;
	if (!w->warned && w->bytes > TEV_WARN_BYTES) {
		w->warned = true;
		fprintf(stderr, "efipt %s: warning: %s passes 1 GB, more than the browser UIs "
			"load: narrow it with --from/--to, --depth or --min-dur\n", w->cmd,
			w->af.path);
	}
}

/* Start an event: the separator from the previous one. */
static void next(struct tev_writer *w)
{
	put(w, w->first ? "\n" : ",\n");
	w->first = false;
}

int tev_open(struct tev_writer *w, const char *cmd, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->cmd = cmd;
	w->first = true;
	if (atomic_open(&w->af, cmd, path))
		return -1;
	put(w, "{\"traceEvents\":[");
	return 0;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] < 0xe0)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] < 0xf0)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] < 0xf5)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void tev_json_string(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;
	if (cap < 3) {
		if (cap)
			buf[0] = 0;
		return;
	}
	buf[o++] = '"';
	while (*p && o + 8 < cap) {
		size_t n = utf8_len(p);
		if (!n) {
			o += (size_t)snprintf(buf + o, cap - o, "\\\\x%02x", *p++);
		} else if (*p == '"' || *p == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			o += (size_t)snprintf(buf + o, cap - o, "\\u%04x", *p++);
		} else {
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		}
	}
	buf[o++] = '"';
	buf[o] = 0;
}

void tev_process_name(struct tev_writer *w, int pid, const char *name_json)
{
	next(w);
	put(w, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":%s}}",
	    pid, name_json);
}

void tev_thread_name(struct tev_writer *w, int pid, int tid, const char *name_json)
{
	next(w);
	put(w, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":%s}}",
	    pid, tid, name_json);
}

/* ts as written: the number itself, or ns as us with three decimals. */
static const char *ts_text(const struct tev_writer *w, uint64_t ts, char *buf, size_t cap)
{
	if (w->ts_ns)
		snprintf(buf, cap, "%" PRIu64 ".%03" PRIu64, ts / 1000, ts % 1000);
	else
		snprintf(buf, cap, "%" PRIu64, ts);
	return buf;
}

void tev_begin(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json)
{
	char t[32];
	next(w);
	put(w, "{\"ph\":\"B\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"name\":%s}", pid, tid,
	    ts_text(w, ts, t, sizeof(t)), name_json);
}

void tev_end(struct tev_writer *w, int pid, int tid, uint64_t ts)
{
	char t[32];
	next(w);
	put(w, "{\"ph\":\"E\",\"pid\":%d,\"tid\":%d,\"ts\":%s}", pid, tid,
	    ts_text(w, ts, t, sizeof(t)));
}

void tev_counter(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json,
		 const char *args_json)
{
	char t[32];
	next(w);
	put(w, "{\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"name\":%s,\"args\":%s}",
	    pid, tid, ts_text(w, ts, t, sizeof(t)), name_json, args_json);
}

void tev_instant(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json,
		 const char *args_json)
{
	char t[32];
	next(w);
	put(w, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"name\":%s%s%s}",
	    pid, tid, ts_text(w, ts, t, sizeof(t)), name_json, args_json ? ",\"args\":" : "",
	    args_json ? args_json : "");
}

int tev_close(struct tev_writer *w, const char *other_json)
{
	put(w, "\n],\n\"otherData\":%s}\n", other_json);
	return atomic_commit(&w->af, w->cmd);
}

void tev_abort(struct tev_writer *w)
{
	atomic_abort(&w->af);
}
