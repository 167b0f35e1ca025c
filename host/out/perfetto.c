/* Perfetto protobuf trace writer: see perfetto.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/out/perfetto.h"
#include "host/util/grow.h"

/* Field numbers, from Perfetto's .proto files (perfetto.h). */
enum {
	TRACE_PACKET = 1,		/* Trace.packet */

	PKT_CLOCK_SNAPSHOT = 6,		/* TracePacket */
	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,		/* trusted_packet_sequence_id */
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TIMESTAMP_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,		/* trace_packet_defaults */
	PKT_TRACK_DESCRIPTOR = 60,

	CS_CLOCKS = 1,			/* ClockSnapshot */
	CLK_ID = 1,			/* ClockSnapshot.Clock */
	CLK_TIMESTAMP = 2,
	CLK_INCREMENTAL = 3,

	DEF_TRACK_EVENT = 11,		/* TracePacketDefaults */
	DEF_TIMESTAMP_CLOCK_ID = 58,
	TED_TRACK_UUID = 11,		/* TrackEventDefaults */

	TD_UUID = 1,			/* TrackDescriptor */
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,

	PD_PID = 1,			/* ProcessDescriptor */
	PD_PROCESS_NAME = 6,

	THD_PID = 1,			/* ThreadDescriptor */
	THD_TID = 2,
	THD_THREAD_NAME = 5,

	TE_DEBUG_ANNOTATIONS = 4,	/* TrackEvent */
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_COUNTER_VALUE = 30,

	DA_NAME_IID = 1,		/* DebugAnnotation */
	DA_BOOL_VALUE = 2,
	DA_UINT_VALUE = 3,
	DA_STRING_VALUE = 6,
	DA_POINTER_VALUE = 7,

	ID_EVENT_NAMES = 2,		/* InternedData */
	ID_DEBUG_ANNOTATION_NAMES = 3,

	IN_IID = 1,			/* EventName, DebugAnnotationName */
	IN_NAME = 2,
};

/* TrackEvent.Type */
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
/* TracePacket.SequenceFlags */
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

/* BuiltinClocks.BOOTTIME, the default; 64: the first sequence-scoped id */
enum { CLOCK_BOOTTIME = 6, CLOCK_DELTA = 64 };

enum { PROCESS_SEQUENCE = 1, PROCESS_UUID = 1, PID = 1 };
/* Counter tracks: uuids past every thread track's (tid + 1). */
#define COUNTER_UUID0 0x100000000ull

static uint64_t thread_uuid(int tid)
{
	return (uint64_t)(uint32_t)tid + 1;
}

/*
 * s as a protobuf string must be UTF-8: invalid bytes become \xNN text, as
 * the JSON writer shows them; cut at PFT_STR_MAX bytes.
 */
static void str_field(struct pb_buf *b, uint32_t field, const char *s)
{
	char out[PFT_STR_MAX + 1];
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = *p < 0x80 ? 1 : (size_t)utf8_seq_len(p);
		if (o + (n ? n : 4) > PFT_STR_MAX)
			break;
		if (n) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		} else {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", *p++);
		}
	}
	pb_bytes(b, field, out, o);
}

/* The packets gathered in out_mem to the file: one write for many small
 * packets. */
static void flush_out(struct pft_writer *w)
{
	if (w->out_len)
		atomic_write(&w->af, w->out_mem, w->out_len);
	w->out_len = 0;
}

/* Write one packet (Trace.packet) to the file. */
static void emit(struct pft_writer *w)
{
	if (w->pkt.full) {
		w->full = true;
		return;
	}
	/* key and length: at most 1 + 10 bytes; pkt_mem is half of out_mem */
	if (w->pkt.len + 16 > sizeof(w->out_mem) - w->out_len)
		flush_out(w);
	uint8_t *p = w->out_mem + w->out_len;
	uint8_t *q = pb_put_varint(pb_put_varint(p, TRACE_PACKET << 3 | PB_LEN), w->pkt.len);
	memcpy(q, w->pkt.p, w->pkt.len);
	w->out_len += (size_t)(q - p) + w->pkt.len;
}

static bool bits_has(const struct pft_bits *b, uint32_t i)
{
	return i / 64 < b->nw && (b->w[i / 64] >> (i % 64) & 1);
}

/* i into the set: false when out of memory. */
static bool bits_add(struct pft_bits *b, uint32_t i)
{
	if (i / 64 >= b->nw) {
		uint32_t n = b->nw ? b->nw : 4;
		while (n <= i / 64)
			n *= 2;
		uint64_t *a = realloc(b->w, n * sizeof(*a));
		if (!a)
			return false;
		memset(a + b->nw, 0, (n - b->nw) * sizeof(*a));
		b->w = a;
		b->nw = n;
	}
	b->w[i / 64] |= 1ull << (i % 64);
	return true;
}

static void seq_free(struct pft_seq *q)
{
	free(q->names.w);
	free(q->keys.w);
	q->names = q->keys = (struct pft_bits){ NULL, 0 };
}

/* Start a packet of sequence q; its first packet clears its state. */
static void start(struct pft_writer *w, struct pft_seq *q, uint32_t flags)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, PKT_SEQUENCE_ID, q->id);
	if (!q->started)
		flags |= SEQ_INCREMENTAL_STATE_CLEARED;
	q->started = true;
	if (flags)
		pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS, flags);
}

/* The interned data gathered so far, in a packet of its own on q. */
static void flush_interned(struct pft_writer *w, struct pft_seq *q)
{
	if (!w->in.len)
		return;
	start(w, q, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_msg(&w->pkt, PKT_INTERNED_DATA, &w->in);
	emit(w);
	pb_reset(&w->in);
}

/* An EventName / DebugAnnotationName entry into the interned data of q's
 * next packet. */
static void intern(struct pft_writer *w, struct pft_seq *q, uint32_t field, uint32_t iid,
		   const char *name)
{
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, IN_IID, iid);
	str_field(&w->tmp, IN_NAME, name);
	if (w->in.len + w->tmp.len + 16 > w->in.cap)
		flush_interned(w, q);
	pb_msg(&w->in, field, &w->tmp);
}

/* Event name handle `name`, interned on q unless it is: its iid. */
static uint32_t use_name(struct tl_sink *s, struct pft_seq *q, uint32_t name)
{
	struct pft_writer *w = s->w;
	if (!bits_has(&q->names, name)) {
		if (!bits_add(&q->names, name))
			tlsink_oom(s, "the names each track has interned");
		intern(w, q, ID_EVENT_NAMES, name + 1, tlsink_str(s, name));
	}
	return name + 1;
}

/* The same for a debug annotation name (key: its handle in w->keys). */
static uint32_t use_key(struct tl_sink *s, struct pft_seq *q, uint32_t key)
{
	struct pft_writer *w = s->w;
	if (!bits_has(&q->keys, key)) {
		if (!bits_add(&q->keys, key))
			tlsink_oom(s, "the annotation names each track has interned");
		intern(w, q, ID_DEBUG_ANNOTATION_NAMES, key + 1, w->keys.s[key]);
	}
	return key + 1;
}

/*
 * Thread track tid's sequence; made the first time, with its first packet:
 * the state cleared, the defaults (the track, clock 64) and the snapshot
 * that makes clock 64 count ns since the last event, from 0 where
 * BOOTTIME is 0. NULL: out of memory (tlsink_oom()).
 */
static __attribute__((noinline)) struct pft_seq *seq_new(struct tl_sink *s, int tid)
{
	struct pft_writer *w = s->w;
	if (!grow_array((void **)&w->seq, &w->seq_cap, w->nseq, sizeof(*w->seq), 8)) {
		tlsink_oom(s, "the tracks' packet sequences");
		return NULL;
	}
	w->cur = NULL; /* the array may have moved */
	struct pft_seq *q = &w->seq[w->nseq];
	*q = (struct pft_seq){ .id = PROCESS_SEQUENCE + 1 + w->nseq, .tid = tid };
	w->nseq++;
	start(w, q, 0);
	pb_uint(&w->pkt, PKT_TIMESTAMP, 0);
	pb_uint(&w->pkt, PKT_TIMESTAMP_CLOCK_ID, CLOCK_BOOTTIME);
	pb_reset(&w->ev); /* the ClockSnapshot */
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, CLK_ID, CLOCK_DELTA);
	pb_uint(&w->tmp, CLK_TIMESTAMP, 0);
	pb_uint(&w->tmp, CLK_INCREMENTAL, 1);
	pb_msg(&w->ev, CS_CLOCKS, &w->tmp);
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, CLK_ID, CLOCK_BOOTTIME);
	pb_uint(&w->tmp, CLK_TIMESTAMP, 0);
	pb_msg(&w->ev, CS_CLOCKS, &w->tmp);
	pb_msg(&w->pkt, PKT_CLOCK_SNAPSHOT, &w->ev);
	pb_reset(&w->ev); /* the TracePacketDefaults */
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, TED_TRACK_UUID, thread_uuid(tid));
	pb_uint(&w->ev, DEF_TIMESTAMP_CLOCK_ID, CLOCK_DELTA);
	pb_msg(&w->ev, DEF_TRACK_EVENT, &w->tmp);
	pb_msg(&w->pkt, PKT_DEFAULTS, &w->ev);
	emit(w);
	return q;
}

/* Thread track tid's sequence (NULL: out of memory). */
static inline struct pft_seq *seq_of(struct tl_sink *s, int tid)
{
	struct pft_writer *w = s->w;
	if (w->cur && w->cur->tid == tid)
		return w->cur;
	for (uint32_t i = 0; i < w->nseq; i++)
		if (w->seq[i].tid == tid)
			return w->cur = &w->seq[i];
	struct pft_seq *q = seq_new(s, tid);
	return q ? (w->cur = q) : NULL;
}

/* A TrackEvent packet of w->ev on q at ns, with the names interned for it. */
static void event_packet(struct tl_sink *s, struct pft_seq *q, uint64_t ns)
{
	struct pft_writer *w = s->w;
	start(w, q, SEQ_NEEDS_INCREMENTAL_STATE);
	if (q->id == PROCESS_SEQUENCE) {
		pb_uint(&w->pkt, PKT_TIMESTAMP, ns); /* BOOTTIME, the default */
	} else if (ns >= q->last_ns) {
		pb_uint(&w->pkt, PKT_TIMESTAMP, ns - q->last_ns);
		q->last_ns = ns;
	} else { /* earlier than the last: whole, on BOOTTIME */
		pb_uint(&w->pkt, PKT_TIMESTAMP, ns);
		pb_uint(&w->pkt, PKT_TIMESTAMP_CLOCK_ID, CLOCK_BOOTTIME);
	}
	if (w->in.len)
		pb_msg(&w->pkt, PKT_INTERNED_DATA, &w->in);
	pb_msg(&w->pkt, PKT_TRACK_EVENT, &w->ev);
	emit(w);
	pb_reset(&w->in);
}

/* Start w->ev: an event of type (on the sequence's own track unless track
 * is not 0). */
static void event(struct pft_writer *w, int type, uint64_t track)
{
	pb_reset(&w->ev);
	pb_uint(&w->ev, TE_TYPE, (uint64_t)type);
	if (track)
		pb_uint(&w->ev, TE_TRACK_UUID, track);
}

/* The arguments as debug annotations of w->ev (names interned on q). */
static void annotations(struct tl_sink *s, struct pft_seq *q, const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	for (size_t i = 0; i < n; i++) {
		uint32_t key = ntab_add(&w->keys, a[i].key);
		if (key == NTAB_NONE) {
			tlsink_oom(s, "the annotation names");
			return;
		}
		uint32_t iid = use_key(s, q, key);
		pb_reset(&w->tmp);
		pb_uint(&w->tmp, DA_NAME_IID, iid);
		switch (a[i].kind) {
		case TL_U64:
			pb_uint(&w->tmp, DA_UINT_VALUE, a[i].u);
			break;
		case TL_HEX:
			pb_uint(&w->tmp, DA_POINTER_VALUE, a[i].u);
			break;
		case TL_STR:
			str_field(&w->tmp, DA_STRING_VALUE, a[i].s);
			break;
		case TL_BOOL:
			pb_uint(&w->tmp, DA_BOOL_VALUE, a[i].u != 0);
			break;
		}
		pb_msg(&w->ev, TE_DEBUG_ANNOTATIONS, &w->tmp);
	}
}

static int pft_open(struct tl_sink *s, const char *cmd, const char *path)
{
	struct pft_writer *w = s->w;
	pb_init(&w->pkt, w->pkt_mem, sizeof(w->pkt_mem));
	pb_init(&w->ev, w->ev_mem, sizeof(w->ev_mem));
	pb_init(&w->in, w->in_mem, sizeof(w->in_mem));
	pb_init(&w->tmp, w->tmp_mem, sizeof(w->tmp_mem));
	w->out_len = 0;
	w->proc = (struct pft_seq){ .id = PROCESS_SEQUENCE };
	return atomic_open(&w->af, cmd, path);
}

static void pft_info(struct tl_sink *s, const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	uint32_t iid = use_name(s, &w->proc, tlsink_name(s, "efipt timeline"));
	event(w, TYPE_INSTANT, PROCESS_UUID);
	pb_uint(&w->ev, TE_NAME_IID, iid);
	annotations(s, &w->proc, a, n);
	event_packet(s, &w->proc, 0);
}

/* A TrackDescriptor (in w->ev) on sequence 1. */
static void descriptor_packet(struct pft_writer *w)
{
	start(w, &w->proc, 0);
	pb_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
	emit(w);
}

static void pft_process(struct tl_sink *s, const char *name)
{
	struct pft_writer *w = s->w;
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, PD_PID, PID);
	str_field(&w->tmp, PD_PROCESS_NAME, name);
	pb_reset(&w->ev);
	pb_uint(&w->ev, TD_UUID, PROCESS_UUID);
	pb_msg(&w->ev, TD_PROCESS, &w->tmp);
	descriptor_packet(w);
}

static void pft_track(struct tl_sink *s, int tid, const char *name)
{
	struct pft_writer *w = s->w;
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, THD_PID, PID);
	pb_uint(&w->tmp, THD_TID, (uint64_t)tid);
	str_field(&w->tmp, THD_THREAD_NAME, name);
	pb_reset(&w->ev);
	pb_uint(&w->ev, TD_UUID, thread_uuid(tid));
	pb_msg(&w->ev, TD_THREAD, &w->tmp);
	descriptor_packet(w);
}

/*
 * A slice's begin or end (iid: a begin's name) written straight into
 * out_mem, the same bytes event_packet() makes through its buffers: a
 * timeline is mostly these, tens of millions of them. Only when the
 * sequence q has the name, time does not go back and out_mem has room;
 * false: not written (event_packet() does it).
 */
static inline __attribute__((always_inline)) bool
slice_packet(struct pft_writer *w, struct pft_seq *q, bool end, uint32_t name, uint64_t ns)
{
	/* the packet (at most 30 bytes, so one byte of length each), in
	 * place: sequence, flags, timestamp, the TrackEvent; no call, so
	 * that it saves no registers (a full out_mem: event_packet()) */
	if ((!end && !bits_has(&q->names, name)) || ns < q->last_ns || w->pkt.full ||
	    48 > sizeof(w->out_mem) - w->out_len)
		return false;
	uint8_t *o = w->out_mem + w->out_len, *p = o + 2;
	*p++ = PKT_SEQUENCE_ID << 3 | PB_VARINT;
	p = pb_put_varint(p, q->id);
	*p++ = PKT_SEQUENCE_FLAGS << 3 | PB_VARINT;
	*p++ = SEQ_NEEDS_INCREMENTAL_STATE;
	*p++ = PKT_TIMESTAMP << 3 | PB_VARINT; /* clock 64: since the last */
	p = pb_put_varint(p, ns - q->last_ns);
	q->last_ns = ns;
	*p++ = PKT_TRACK_EVENT << 3 | PB_LEN;
	uint8_t *ev = p++; /* its length */
	*p++ = TE_TYPE << 3 | PB_VARINT;
	*p++ = end ? TYPE_SLICE_END : TYPE_SLICE_BEGIN;
	/* the name, written either way and kept for a begin (an end needs
	 * none, TrackEvent.Type): no branch on which it is */
	*p = TE_NAME_IID << 3 | PB_VARINT;
	uint8_t *named = pb_put_varint(p + 1, (uint64_t)name + 1);
	p = end ? p : named;
	*ev = (uint8_t)(p - ev - 1);
	o[0] = TRACE_PACKET << 3 | PB_LEN;
	o[1] = (uint8_t)(p - o - 2);
	w->out_len += (size_t)(p - o);
	return true;
}

/* pft_slice() where slice_packet() cannot write it: the track's sequence
 * found or made, and the packet through the buffers when slice_packet()
 * still cannot (a name to intern, time going back, out_mem full). */
static __attribute__((noinline)) void slice_slow(struct tl_sink *s, int tid, uint64_t ns,
						 uint32_t name, bool end)
{
	struct pft_writer *w = s->w;
	struct pft_seq *q = seq_of(s, tid);
	if (!q || slice_packet(w, q, end, name, ns))
		return;
	uint32_t iid = end ? 0 : use_name(s, q, name);
	event(w, end ? TYPE_SLICE_END : TYPE_SLICE_BEGIN, 0);
	if (!end) /* an end needs no name (TrackEvent.Type) */
		pb_uint(&w->ev, TE_NAME_IID, iid);
	event_packet(s, q, ns);
}

/* The common case, the same track as the last event's, without a call
 * (a tail call else), so that it saves no registers. */
static void pft_slice(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, bool end)
{
	struct pft_writer *w = s->w;
	struct pft_seq *q = w->cur;
	if (!q || q->tid != tid || !slice_packet(w, q, end, name, ns))
		slice_slow(s, tid, ns, name, end);
}

static void pft_instant(struct tl_sink *s, int tid, uint64_t ns, uint32_t name,
			const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	struct pft_seq *q = seq_of(s, tid);
	if (!q)
		return;
	uint32_t iid = use_name(s, q, name);
	event(w, TYPE_INSTANT, 0);
	pb_uint(&w->ev, TE_NAME_IID, iid);
	annotations(s, q, a, n);
	event_packet(s, q, ns);
}

/* The counter track of (tid, name), described the first time. */
static uint64_t counter_track(struct tl_sink *s, int tid, uint32_t name, const char *unit)
{
	struct pft_writer *w = s->w;
	for (uint32_t i = 0; i < w->nctr; i++)
		if (w->ctr[i].tid == tid && w->ctr[i].name == name)
			return w->ctr[i].uuid;
	if (w->nctr == w->ctr_cap) {
		uint32_t c = w->ctr_cap ? w->ctr_cap * 2 : 16;
		struct pft_counter *a = realloc(w->ctr, c * sizeof(*a));
		if (!a) {
			tlsink_oom(s, "the counter tracks");
			return 0;
		}
		w->ctr = a;
		w->ctr_cap = c;
	}
	uint64_t uuid = COUNTER_UUID0 + w->nctr;
	w->ctr[w->nctr++] = (struct pft_counter){ tid, name, uuid };
	char full[PFT_STR_MAX];
	snprintf(full, sizeof(full), "%s %s", tlsink_str(s, name), unit);
	pb_reset(&w->ev);
	pb_uint(&w->ev, TD_UUID, uuid);
	pb_uint(&w->ev, TD_PARENT_UUID, thread_uuid(tid));
	str_field(&w->ev, TD_NAME, full);
	pb_bytes(&w->ev, TD_COUNTER, NULL, 0);
	descriptor_packet(w);
	return uuid;
}

/* A sample on the sequence of its thread track tid, naming its own. */
static void pft_counter(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, const char *unit,
			int64_t value)
{
	struct pft_writer *w = s->w;
	uint64_t uuid = counter_track(s, tid, name, unit);
	struct pft_seq *q = seq_of(s, tid);
	if (!uuid || !q)
		return;
	event(w, TYPE_COUNTER, uuid);
	pb_int(&w->ev, TE_COUNTER_VALUE, value);
	event_packet(s, q, ns);
}

static void release(struct pft_writer *w)
{
	ntab_free(&w->keys);
	free(w->ctr);
	w->ctr = NULL;
	w->nctr = w->ctr_cap = 0;
	seq_free(&w->proc);
	for (uint32_t i = 0; i < w->nseq; i++)
		seq_free(&w->seq[i]);
	free(w->seq);
	w->seq = w->cur = NULL;
	w->nseq = w->seq_cap = 0;
}

static int pft_close(struct tl_sink *s)
{
	struct pft_writer *w = s->w;
	flush_out(w);
	release(w);
	if (w->full) {
		fprintf(stderr, "efipt %s: %s: a packet was larger than its buffer: nothing "
			"written\n", s->cmd, w->af.path);
		atomic_abort(&w->af);
		return -1;
	}
	return atomic_commit(&w->af, s->cmd);
}

static void pft_abort(struct tl_sink *s)
{
	struct pft_writer *w = s->w;
	release(w);
	atomic_abort(&w->af);
}

const struct tl_sink_ops pft_sink_ops = {
	.open = pft_open,
	.info = pft_info,
	.process = pft_process,
	.track = pft_track,
	.slice = pft_slice,
	.instant = pft_instant,
	.counter = pft_counter,
	.close = pft_close,
	.abort = pft_abort,
	.size = sizeof(struct pft_writer),
};
