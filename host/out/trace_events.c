/* Trace event JSON writer: see trace_events.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/out/trace_events.h"

enum { PID = 1 };

/* The text gathered in out to the file: one write for many events. */
static void flush_out(struct tev_writer *w)
{
	if (w->out_len)
		atomic_write(&w->af, w->out, w->out_len);
	w->out_len = 0;
}

/* n more bytes of text written: counted, with the warning past 1 GB */
static void count(struct tl_sink *s, size_t n)
{
	struct tev_writer *w = s->w;
	w->bytes += (uint64_t)n;
	if (!w->warned && w->bytes > TEV_WARN_BYTES) {
		w->warned = true;
		fprintf(stderr, "efipt %s: warning: %s passes 1 GB, more than the browser UIs "
			"load: narrow it with --from/--to, --depth or --min-dur, or write "
			"Perfetto's protobuf format (-o FILE.pftrace)\n", s->cmd, w->af.path);
	}
}

/* n bytes of text to the file */
static void put_raw(struct tl_sink *s, const char *buf, size_t n)
{
	struct tev_writer *w = s->w;
	if (n > sizeof(w->out) - w->out_len)
		flush_out(w);
	if (n > sizeof(w->out)) {
		atomic_write(&w->af, buf, n);
	} else {
		memcpy(w->out + w->out_len, buf, n);
		w->out_len += n;
	}
	count(s, n);
}

static void put(struct tl_sink *s, const char *fmt, ...)
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
	put_raw(s, buf, (size_t)n);
}

/*
 * Slice begins and ends are most of a timeline: composed by hand into one
 * write, the same bytes as put() would write with "%d" and ts_text().
 */
static char *cat(char *o, const char *str)
{
	size_t n = strlen(str);
	memcpy(o, str, n);
	return o + n;
}

static char *cat_n(char *o, const char *str, size_t n)
{
	memcpy(o, str, n);
	return o + n;
}

/* v in decimal: its length first (from its bits, then one comparison),
 * then two digits at a time from the end (half the divisions of one
 * digit at a time; timestamps are most of a JSON timeline's digits) */
static char *cat_u64(char *o, uint64_t v)
{
	static const char two[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull,
		1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	if (v < 10) {
		*o = (char)('0' + v);
		return o + 1;
	}
	/* log10(2) ~ 1233 / 4096: t or t + 1 digits */
	unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	unsigned n = t + (v >= pow10[t]);
	char *p = o + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, two + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(p - 2, two + 2 * v, 2);
	else
		p[-1] = (char)('0' + v);
	return o + n;
}

static char *cat_int(char *o, int v)
{
	if (v < 0) {
		*o++ = '-';
		return cat_u64(o, -(uint64_t)(int64_t)v);
	}
	return cat_u64(o, (uint64_t)v);
}

/* ts_text()'s "us.nnn" or "us" */
static char *cat_ts(const struct tl_sink *s, char *o, uint64_t ns)
{
	o = cat_u64(o, ns / 1000);
	if (s->ns_precise) {
		unsigned f = (unsigned)(ns % 1000);
		*o++ = '.';
		*o++ = (char)('0' + f / 100);
		*o++ = (char)('0' + f / 10 % 10);
		*o++ = (char)('0' + f % 10);
	}
	return o;
}

/* The separator from the previous event, then "{"head"tid":..,"ts":..} with
 * the name before (end) or after (begin). */
static void put_slice(struct tl_sink *s, bool end, int tid, uint64_t ns, const char *name,
		      size_t name_len)
{
	struct tev_writer *w = s->w;
	/* composed in place: names are at most 1024 bytes (name_json()) */
	if (2048 > sizeof(w->out) - w->out_len)
		flush_out(w);
	char *buf = w->out + w->out_len;
	char *o = cat(buf, w->first ? "\n" : ",\n");
	w->first = false;
	if (end) {
		o = cat(o, "{\"name\":");
		o = cat_n(o, name, name_len);
		o = cat(o, ",\"ph\":\"E\",\"pid\":");
	} else {
		o = cat(o, "{\"ph\":\"B\",\"pid\":");
	}
	o = cat_int(o, PID);
	o = cat(o, ",\"tid\":");
	o = cat_int(o, tid);
	o = cat(o, ",\"ts\":");
	o = cat_ts(s, o, ns);
	if (!end) {
		o = cat(o, ",\"name\":");
		o = cat_n(o, name, name_len);
	}
	*o++ = '}';
	w->out_len += (size_t)(o - buf);
	count(s, (size_t)(o - buf));
}

/* Start an event: the separator from the previous one. */
static void next(struct tl_sink *s)
{
	struct tev_writer *w = s->w;
	put(s, w->first ? "\n" : ",\n");
	w->first = false;
}

static int tev_open(struct tl_sink *s, const char *cmd, const char *path)
{
	struct tev_writer *w = s->w;
	w->first = true;
	w->out_len = 0;
	if (atomic_open(&w->af, cmd, path))
		return -1;
	put(s, "{\"traceEvents\":[");
	return 0;
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
		size_t n = *p < 0x80 ? 1 : (size_t)utf8_seq_len(p);
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

/* A name as a JSON string literal, made once per handle; *len (when
 * asked): its length. */
static const char *name_json(struct tl_sink *s, uint32_t name, size_t *len)
{
	static const char unknown[] = "\"[unknown]\"";
	struct tev_writer *w = s->w;
	if (len)
		*len = sizeof(unknown) - 1;
	if (name >= w->nesc) {
		uint32_t c = w->nesc ? w->nesc : 256;
		while (c <= name)
			c *= 2;
		struct tev_name *a = realloc(w->esc, c * sizeof(*a));
		if (!a)
			return unknown;
		memset(a + w->nesc, 0, (c - w->nesc) * sizeof(*a));
		w->esc = a;
		w->nesc = c;
	}
	if (!w->esc[name].s) {
		char js[1024];
		tev_json_string(tlsink_str(s, name), js, sizeof(js));
		w->esc[name].s = strdup(js);
		if (!w->esc[name].s)
			return unknown;
		w->esc[name].n = strlen(js);
	}
	if (len)
		*len = w->esc[name].n;
	return w->esc[name].s;
}

/* args as a JSON object literal into buf. */
static void args_json(const struct tl_arg *a, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	buf[o++] = '{';
	for (size_t i = 0; i < n && o < cap; i++) {
		char k[128], v[8192];
		tev_json_string(a[i].key, k, sizeof(k));
		switch (a[i].kind) {
		case TL_U64:
			snprintf(v, sizeof(v), "%" PRIu64, a[i].u);
			break;
		case TL_HEX:
			snprintf(v, sizeof(v), "\"0x%" PRIx64 "\"", a[i].u);
			break;
		case TL_STR:
			tev_json_string(a[i].s, v, sizeof(v));
			break;
		case TL_BOOL:
			snprintf(v, sizeof(v), "%s", a[i].u ? "true" : "false");
			break;
		}
		o += (size_t)snprintf(buf + o, cap - o, "%s%s:%s", i ? "," : "", k, v);
	}
	if (o + 2 > cap)
		o = cap - 2; /* cut: the caller's arguments are far shorter */
	buf[o++] = '}';
	buf[o] = 0;
}

static void tev_info(struct tl_sink *s, const struct tl_arg *a, size_t n)
{
	struct tev_writer *w = s->w;
	char buf[12288];
	args_json(a, n, buf, sizeof(buf));
	free(w->other);
	w->other = strdup(buf);
}

static void tev_process(struct tl_sink *s, const char *name)
{
	char js[8192];
	tev_json_string(name, js, sizeof(js));
	next(s);
	put(s, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":%s}}",
	    PID, js);
}

static void tev_track(struct tl_sink *s, int tid, const char *name)
{
	char js[1024];
	tev_json_string(name, js, sizeof(js));
	next(s);
	put(s, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":%s}}",
	    PID, tid, js);
}

/* ts as written: us with three decimals, or whole us. */
static const char *ts_text(const struct tl_sink *s, uint64_t ns, char *buf, size_t cap)
{
	if (s->ns_precise)
		snprintf(buf, cap, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	else
		snprintf(buf, cap, "%" PRIu64, ns / 1000);
	return buf;
}

static void tev_slice(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, bool end)
{
	size_t n;
	const char *js = name_json(s, name, &n);
	put_slice(s, end, tid, ns, js, n);
}

static void tev_counter(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, const char *unit,
			int64_t value)
{
	char t[32], u[128];
	tev_json_string(unit, u, sizeof(u));
	next(s);
	put(s, "{\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"name\":%s,\"args\":{%s:%" PRId64 "}}",
	    PID, tid, ts_text(s, ns, t, sizeof(t)), name_json(s, name, NULL), u, value);
}

static void tev_instant(struct tl_sink *s, int tid, uint64_t ns, uint32_t name,
			const struct tl_arg *a, size_t n)
{
	char t[32], args[4096];
	if (n)
		args_json(a, n, args, sizeof(args));
	next(s);
	put(s, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"name\":%s%s%s}", PID, tid,
	    ts_text(s, ns, t, sizeof(t)), name_json(s, name, NULL), n ? ",\"args\":" : "",
	    n ? args : "");
}

static void release(struct tev_writer *w)
{
	for (uint32_t i = 0; i < w->nesc; i++)
		free(w->esc[i].s);
	free(w->esc);
	w->esc = NULL;
	w->nesc = 0;
	free(w->other);
	w->other = NULL;
}

static int tev_close(struct tl_sink *s)
{
	struct tev_writer *w = s->w;
	put(s, "\n],\n\"otherData\":%s}\n", w->other ? w->other : "{}");
	flush_out(w);
	release(w);
	return atomic_commit(&w->af, s->cmd);
}

static void tev_abort(struct tl_sink *s)
{
	struct tev_writer *w = s->w;
	release(w);
	atomic_abort(&w->af);
}

const struct tl_sink_ops tev_sink_ops = {
	.open = tev_open,
	.info = tev_info,
	.process = tev_process,
	.track = tev_track,
	.slice = tev_slice,
	.instant = tev_instant,
	.counter = tev_counter,
	.close = tev_close,
	.abort = tev_abort,
	.size = sizeof(struct tev_writer),
};
