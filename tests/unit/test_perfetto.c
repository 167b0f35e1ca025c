/* host/out/perfetto.c through the timeline sink: a timeline with random
 * names (bytes of every value, invalid UTF-8, longer than a string may
 * be) read back with a protobuf reader written here: descriptors on
 * sequence 1, each track's events on a sequence of its own, each cleared
 * by its first packet, which makes clock 64 incremental and the track the
 * default; every string valid UTF-8; each name interned once per sequence
 * and before its first use there; begins and ends balanced per track;
 * every event on its track at the ns written (times that stay, jump, or
 * go back). A failed or abandoned write leaves nothing. */
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

/* A packet sequence as the reader keeps it: the names interned on it, its
 * default track, its incremental clock (33: Perfetto's clock 64). */
#define NSEQ 8
struct rseq {
	int seen, has_clock;
	char *names[4096];	/* by iid */
	uint64_t track, clock;
};

/* An event as written or as read back: its track, type, time in ns. */
struct ev {
	uint64_t track, type, ns;
};
#define NEV 30000

/* What the reader found. */
static struct {
	int malformed, bad_utf8, bad_seq, twice, undefined, bad_clock;
	unsigned packets, begins, ends, instants, counters, descriptors;
	struct rseq seq[NSEQ];	/* by trusted_packet_sequence_id */
	int depth[8];
	struct ev ev[NEV];
	unsigned nev;
} r;

static void read_interned(struct rseq *sq, const uint8_t *p, size_t n)
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
			if (sq->names[i] && strlen(sq->names[i]) == len &&
			    !memcmp(sq->names[i], name, len))
				r.twice++;
		if (sq->names[iid])
			r.twice++;
		sq->names[iid] = strndup((const char *)name, len);
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

static void read_event(struct rseq *sq, uint64_t ns, const uint8_t *p, size_t n)
{
	struct field f;
	size_t o = 0;
	uint64_t type = 0, track = sq->track, iid = 0;
	while (next_field(p, n, &o, &f) > 0) {
		if (f.num == 9)
			type = f.v;
		if (f.num == 11)
			track = f.v;
		if (f.num == 10)
			iid = f.v;
	}
	if ((type == 1 || type == 3) && (iid >= 4096 || !sq->names[iid]))
		r.undefined++;
	if (type == 1)
		r.begins++, r.depth[track & 7]++;
	else if (type == 2)
		r.ends++, r.depth[track & 7]--;
	else if (type == 3)
		r.instants++;
	else if (type == 4)
		r.counters++;
	if (r.nev < NEV)
		r.ev[r.nev++] = (struct ev){ track, type, ns };
}

/* The first field numbered num of message p[0..n): its value, or def. */
static uint64_t field_v(const uint8_t *p, size_t n, uint32_t num, uint64_t def)
{
	struct field f;
	size_t o = 0;
	while (next_field(p, n, &o, &f) > 0)
		if (f.num == num)
			return f.d ? (uint64_t)(uintptr_t)f.d : f.v;
	return def;
}

/* The first length-delimited field numbered num: its bytes, or NULL. */
static const uint8_t *field_msg(const uint8_t *p, size_t n, uint32_t num, size_t *len)
{
	struct field f;
	size_t o = 0;
	while (next_field(p, n, &o, &f) > 0)
		if (f.num == num && f.d) {
			*len = f.len;
			return f.d;
		}
	return NULL;
}

/* A packet's ClockSnapshot and TracePacketDefaults into sq: clock 64
 * incremental from 0 where BOOTTIME is 0, and the default track. */
static void read_state(struct rseq *sq, const uint8_t *p, size_t n)
{
	size_t len, dl, tl;
	const uint8_t *cs = field_msg(p, n, 6, &len);
	if (cs) {
		struct field f;
		size_t o = 0;
		int ok = 0;
		while (next_field(cs, len, &o, &f) > 0) {
			if (f.num != 1 || !f.d)
				continue;
			uint64_t id = field_v(f.d, f.len, 1, 0), ts = field_v(f.d, f.len, 2, 1);
			uint64_t inc = field_v(f.d, f.len, 3, 0);
			ok += (id == 64 && ts == 0 && inc == 1) || (id == 6 && ts == 0 && !inc);
		}
		if (ok != 2)
			r.bad_clock++;
		sq->has_clock = 1;
		sq->clock = 0;
	}
	const uint8_t *d = field_msg(p, n, 59, &dl);
	if (d) {
		if (field_v(d, dl, 58, 0) != 64)
			r.bad_clock++;
		const uint8_t *te = field_msg(d, dl, 11, &tl);
		sq->track = te ? field_v(te, tl, 11, 0) : 0;
	}
}

static void read_trace(const uint8_t *p, size_t n)
{
	struct field f, g;
	size_t o = 0;
	int k;
	while ((k = next_field(p, n, &o, &f)) > 0) {
		size_t q = 0;
		if (f.num != 1 || !f.d) {
			r.malformed++;
			continue;
		}
		read_strings(f.d, f.len, 0);
		uint64_t seq = field_v(f.d, f.len, 10, 0), flags = field_v(f.d, f.len, 13, 0);
		if (!seq || seq >= NSEQ) {
			r.bad_seq++;
			continue;
		}
		struct rseq *sq = &r.seq[seq];
		/* each sequence's first packet clears its state, no other does */
		if (!sq->seen != !!(flags & 1))
			r.bad_seq++;
		sq->seen = 1;
		read_state(sq, f.d, f.len);
		/* the time: clock 64 since the sequence's last (its default) or
		 * whole on BOOTTIME */
		uint64_t ts = field_v(f.d, f.len, 8, UINT64_MAX);
		uint64_t clock = field_v(f.d, f.len, 58, sq->has_clock ? 64 : 6);
		if (clock == 64 && ts != UINT64_MAX)
			ts = sq->clock += ts;
		/* interned data first: a packet's names serve its event */
		while (next_field(f.d, f.len, &q, &g) > 0)
			if (g.num == 12 && g.d)
				read_interned(sq, g.d, g.len);
		q = 0;
		while (next_field(f.d, f.len, &q, &g) > 0) {
			if (g.num == 11 && g.d)
				read_event(sq, ts, g.d, g.len);
			if (g.num == 60)
				r.descriptors++;
		}
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
	uint64_t ns[3] = { 0 };
	static struct ev want[NEV];
	unsigned nwant = 1;
	want[0] = (struct ev){ 1, 3, 0 }; /* the file's description */
	for (int i = 0; i < 20000; i++) {
		int tid = 1 + (int)(rnd() % 2);
		uint32_t name = tlsink_name(&s, pool[rnd() % 64]);
		unsigned what = rnd() % 8;
		/* mostly the same ns (time moves at timing packets), now and
		 * then far on; an instant now and then before the last event */
		unsigned step = rnd() % 16;
		ns[tid] += step < 12 ? 0 : step < 15 ? rnd() % 300 : (uint64_t)rnd() << 20;
		uint64_t t = ns[tid];
		if (what < 3 && open[tid] < 64) {
			stack[tid][open[tid]++] = name;
			s.ops->slice(&s, tid, t, name, false);
			want[nwant++] = (struct ev){ (uint64_t)tid + 1, 1, t };
			begins++;
		} else if (what < 6 && open[tid]) {
			open[tid]--;
			s.ops->slice(&s, tid, t, stack[tid][open[tid]], true);
			want[nwant++] = (struct ev){ (uint64_t)tid + 1, 2, t };
		} else if (what == 6) {
			struct tl_arg a[] = { { "offset", TL_U64, rnd(), NULL },
					      { "ip", TL_HEX, rnd(), NULL },
					      { pool[5], TL_STR, 0, pool[rnd() % 64] } };
			if (i % 5 == 0 && t > 1000)
				t -= 1000;
			s.ops->instant(&s, tid, t, name, a, 3);
			want[nwant++] = (struct ev){ (uint64_t)tid + 1, 3, t };
			instants++;
		} else {
			s.ops->counter(&s, tid, t, tlsink_name(&s, "frequency"), "MHz",
				       (int64_t)(rnd() % 5000) - 100);
			want[nwant++] = (struct ev){ 0, 4, t }; /* its track: below */
			counters++;
		}
	}
	for (int tid = 1; tid <= 2; tid++)
		while (open[tid]) {
			open[tid]--;
			s.ops->slice(&s, tid, ns[tid], stack[tid][open[tid]], true);
			want[nwant++] = (struct ev){ (uint64_t)tid + 1, 2, ns[tid] };
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
	CHECK(!r.bad_seq && r.seq[1].seen && r.seq[2].seen && r.seq[3].seen && !r.seq[4].seen,
	      "perfetto: sequence 1 and one per track, each cleared by its first packet only");
	CHECK(!r.bad_clock && r.seq[2].has_clock && r.seq[3].has_clock && !r.seq[1].has_clock,
	      "perfetto: each track's sequence counts ns on clock 64, incremental from 0");
	unsigned same = 0;
	for (unsigned i = 0; i < nwant && i < r.nev; i++)
		same += r.ev[i].type == want[i].type && r.ev[i].ns == want[i].ns &&
			(want[i].type == 4 ? r.ev[i].track >= 0x100000000ull
					   : r.ev[i].track == want[i].track);
	CHECKF(r.nev == nwant && same == nwant,
	       "perfetto: every event read back on its track at the ns written",
	       "%u events read, %u written, %u the same", r.nev, nwant, same);
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
	for (unsigned q = 0; q < NSEQ; q++)
		for (unsigned i = 0; i < 4096; i++)
			free(r.seq[q].names[i]);
	rmdir(dir);
	return check_exit();
}
