/* host/out/perfetto.c through the timeline sink: a timeline with random
 * names (bytes of every value, invalid UTF-8, longer than a string may
 * be) read back with a protobuf reader written here: every packet on
 * sequence 1, the first clearing its state; every string valid UTF-8; each
 * name interned once and before its first use; begins and ends balanced
 * per track; the count of each event type as written. A failed or
 * abandoned write leaves nothing. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "host/util/file_io.h"
#include "host/out/timeline_sink.h"

/* --- a reader of the wire format ---------------------------------------- */
struct field {
	uint32_t num;
	uint64_t v;		/* varint */
	const uint8_t *d;	/* length-delimited */
	size_t len;
};

static int varint(const uint8_t *p, size_t n, size_t *o, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *o < n; s += 7) {
		uint8_t b = p[(*o)++];
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* The next field of p[0..n) at *o: 1, 0 at the end, -1 if malformed. */
static int next_field(const uint8_t *p, size_t n, size_t *o, struct field *f)
{
	uint64_t key;
	if (*o == n)
		return 0;
	if (varint(p, n, o, &key))
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->d = NULL;
	f->len = 0;
	if ((key & 7) == 0)
		return varint(p, n, o, &f->v) ? -1 : 1;
	if ((key & 7) != 2 || varint(p, n, o, &f->v) || f->v > n - *o)
		return -1;
	f->d = p + *o;
	f->len = (size_t)f->v;
	*o += f->len;
	return 1;
}

static int utf8_ok(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n;) {
		char tmp[5] = { 0 };
		size_t k = d[i] < 0x80 ? 1 : 0;
		if (!k) {
			memcpy(tmp, d + i, n - i < 4 ? n - i : 4);
			k = (size_t)utf8_seq_len((const unsigned char *)tmp);
		}
		if (!k || !d[i])
			return 0;
		i += k;
	}
	return 1;
}

/* What the reader found. */
static struct {
	int malformed, bad_utf8, bad_seq, first_flags, twice, undefined;
	unsigned packets, begins, ends, instants, counters, descriptors;
	char *names[4096];	/* by iid */
	int depth[8];
} r;

static void read_interned(const uint8_t *p, size_t n)
{
	struct field f, g;
	size_t o = 0;
	int k;
	while ((k = next_field(p, n, &o, &f)) > 0) {
		if (f.num != 2 || !f.d)
			continue; /* debug annotation names: checked for UTF-8 below */
		uint64_t iid = 0;
		const uint8_t *name = NULL;
		size_t len = 0, q = 0;
		while (next_field(f.d, f.len, &q, &g) > 0) {
			if (g.num == 1)
				iid = g.v;
			if (g.num == 2) {
				name = g.d;
				len = g.len;
			}
		}
		if (!name || !iid || iid >= 4096) {
			r.malformed++;
			continue;
		}
		if (!utf8_ok(name, len))
			r.bad_utf8++;
		for (unsigned i = 1; i < 4096; i++)
			if (r.names[i] && strlen(r.names[i]) == len && !memcmp(r.names[i], name, len))
				r.twice++;
		if (r.names[iid])
			r.twice++;
		r.names[iid] = strndup((const char *)name, len);
	}
	if (k < 0)
		r.malformed++;
}

/* Every string of a message, checked for UTF-8 (fields known to hold
 * strings: names, process/thread names, annotation values). */
static void read_strings(const uint8_t *p, size_t n, int depth)
{
	struct field f;
	size_t o = 0;
	while (next_field(p, n, &o, &f) > 0) {
		if (!f.d)
			continue;
		/* a nested message parses whole; else it is a string */
		size_t q = 0;
		struct field g;
		int k;
		while ((k = next_field(f.d, f.len, &q, &g)) > 0)
			;
		if (k == 0 && f.len && depth < 6)
			read_strings(f.d, f.len, depth + 1);
		else if (!utf8_ok(f.d, f.len))
			r.bad_utf8++;
	}
}

static void read_event(const uint8_t *p, size_t n)
{
	struct field f;
	size_t o = 0;
	uint64_t type = 0, track = 0, iid = 0;
	while (next_field(p, n, &o, &f) > 0) {
		if (f.num == 9)
			type = f.v;
		if (f.num == 11)
			track = f.v;
		if (f.num == 10)
			iid = f.v;
	}
	if ((type == 1 || type == 3) && (iid >= 4096 || !r.names[iid]))
		r.undefined++;
	if (type == 1)
		r.begins++, r.depth[track & 7]++;
	else if (type == 2)
		r.ends++, r.depth[track & 7]--;
	else if (type == 3)
		r.instants++;
	else if (type == 4)
		r.counters++;
}

static void read_trace(const uint8_t *p, size_t n)
{
	struct field f, g;
	size_t o = 0;
	int k;
	while ((k = next_field(p, n, &o, &f)) > 0) {
		size_t q = 0;
		uint64_t seq = 0, flags = 0;
		if (f.num != 1 || !f.d) {
			r.malformed++;
			continue;
		}
		read_strings(f.d, f.len, 0);
		/* interned data first: a packet's names serve its event */
		while (next_field(f.d, f.len, &q, &g) > 0) {
			if (g.num == 10)
				seq = g.v;
			if (g.num == 13)
				flags = g.v;
			if (g.num == 12 && g.d)
				read_interned(g.d, g.len);
		}
		q = 0;
		while (next_field(f.d, f.len, &q, &g) > 0) {
			if (g.num == 11 && g.d)
				read_event(g.d, g.len);
			if (g.num == 60)
				r.descriptors++;
		}
		if (seq != 1)
			r.bad_seq++;
		if (!r.packets)
			r.first_flags = (int)flags;
		else if (flags & 1)
			r.bad_seq++;
		r.packets++;
	}
	if (k < 0)
		r.malformed++;
}

/* --- the timeline written ------------------------------------------------ */
static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static size_t files_in(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/efipt-test-perfetto-XXXXXX", path[128];
	static char pool[64][6000];
	struct tl_sink s;
	if (!mkdtemp(dir)) {
		CHECK(0, "perfetto: a temporary directory");
		return check_exit();
	}
	snprintf(path, sizeof(path), "%s/t.pftrace", dir);
	/* names: random bytes 1..255, some long past PFT_STR_MAX */
	for (int i = 0; i < 64; i++) {
		size_t len = i % 16 == 0 ? 5000 + rnd() % 900 : 1 + rnd() % 40;
		for (size_t k = 0; k < len; k++)
			pool[i][k] = (char)(1 + rnd() % 255);
		pool[i][len] = 0;
	}
	strcpy(pool[1], pool[0]); /* the same name twice: one handle */
	CHECK(tlsink_open(&s, TL_PERFETTO, "test", path) == 0, "perfetto: open");
	struct tl_arg info[] = { { "trace", TL_STR, 0, pool[2] }, { "n", TL_U64, 7, NULL },
				 { "emulated", TL_BOOL, 1, NULL } };
	s.ops->process(&s, pool[3]);
	s.ops->info(&s, info, 3);
	s.ops->track(&s, 1, "CPU 0");
	s.ops->track(&s, 2, pool[4]);
	unsigned begins = 0, instants = 0, counters = 0, open[3] = { 0 };
	uint32_t stack[3][64];
	uint64_t ns = 0;
	for (int i = 0; i < 20000; i++) {
		int tid = 1 + (int)(rnd() % 2);
		uint32_t name = tlsink_name(&s, pool[rnd() % 64]);
		unsigned what = rnd() % 8;
		ns += rnd() % 3;
		if (what < 3 && open[tid] < 64) {
			stack[tid][open[tid]++] = name;
			s.ops->slice(&s, tid, ns, name, false);
			begins++;
		} else if (what < 6 && open[tid]) {
			open[tid]--;
			s.ops->slice(&s, tid, ns, stack[tid][open[tid]], true);
		} else if (what == 6) {
			struct tl_arg a[] = { { "offset", TL_U64, rnd(), NULL },
					      { "ip", TL_HEX, rnd(), NULL },
					      { pool[5], TL_STR, 0, pool[rnd() % 64] } };
			s.ops->instant(&s, tid, ns, name, a, 3);
			instants++;
		} else {
			s.ops->counter(&s, tid, ns, tlsink_name(&s, "frequency"), "MHz",
				       (int64_t)(rnd() % 5000) - 100);
			counters++;
		}
	}
	for (int tid = 1; tid <= 2; tid++)
		while (open[tid]) {
			open[tid]--;
			s.ops->slice(&s, tid, ns, stack[tid][open[tid]], true);
		}
	CHECK(tlsink_name(&s, pool[0]) == tlsink_name(&s, pool[1]),
	      "perfetto: the same name has one handle");
	CHECK(tlsink_close(&s) == 0, "perfetto: close");

	struct input_map m;
	char err[256];
	if (!CHECK(input_map(&m, path, 1u << 30, err, sizeof(err)) == 0, "perfetto: read back"))
		return check_exit();
	read_trace(m.data, m.size);
	input_unmap(&m);
	CHECK(!r.malformed, "perfetto: the file is well-formed protobuf");
	CHECK(!r.bad_seq && r.first_flags & 1,
	      "perfetto: one sequence, its state cleared by the first packet only");
	CHECK(!r.bad_utf8, "perfetto: every string is UTF-8");
	CHECK(!r.twice, "perfetto: each name interned once");
	CHECK(!r.undefined, "perfetto: each name interned before its use");
	CHECKF(r.begins == begins && r.ends == begins && r.instants == instants + 1 &&
		       r.counters == counters,
	       "perfetto: every event written once",
	       "begins %u/%u ends %u instants %u/%u counters %u/%u", r.begins, begins, r.ends,
	       r.instants, instants + 1, r.counters, counters);
	CHECK(!r.depth[2] && !r.depth[3], "perfetto: slices balanced on each track");
	CHECK(r.descriptors == 5, "perfetto: the process, two threads, two counter tracks");

	/* a write that fails or is abandoned leaves nothing */
	unlink(path);
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/no/t.pftrace", dir);
	CHECK(tlsink_open(&s, TL_PERFETTO, "test", bad) == -1 && files_in(dir) == 0,
	      "perfetto: an output directory missing: refused, nothing made");
	CHECK(tlsink_open(&s, TL_PERFETTO, "test", path) == 0, "perfetto: open again");
	s.ops->process(&s, "p");
	s.ops->slice(&s, 1, 0, tlsink_name(&s, "f"), false);
	tlsink_abort(&s);
	CHECK(files_in(dir) == 0, "perfetto: an abandoned write leaves no file");
	if (access("/dev/full", W_OK) == 0) {
		CHECK(tlsink_open(&s, TL_PERFETTO, "test", "/dev/full") == 0, "perfetto: /dev/full");
		s.ops->process(&s, "p");
		for (int i = 0; i < 2000; i++)
			s.ops->slice(&s, 1, (uint64_t)i, tlsink_name(&s, pool[i % 64]), false);
		CHECK(tlsink_close(&s) == -1, "perfetto: a write error fails the close");
	}
	for (unsigned i = 0; i < 4096; i++)
		free(r.names[i]);
	rmdir(dir);
	return check_exit();
}
