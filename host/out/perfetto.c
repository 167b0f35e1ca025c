/* Perfetto protobuf trace writer: see perfetto.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/out/perfetto.h"

/* Field numbers, from Perfetto's .proto files (perfetto.h). */
enum {
	TRACE_PACKET = 1,		/* Trace.packet */

	PKT_TIMESTAMP = 8,		/* TracePacket */
	PKT_SEQUENCE_ID = 10,		/* trusted_packet_sequence_id */
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRACK_DESCRIPTOR = 60,

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

enum { SEQUENCE = 1, PROCESS_UUID = 1, PID = 1 };
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

/* Start a packet of the sequence; the first one clears its state. */
static void start(struct pft_writer *w, uint32_t flags)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, PKT_SEQUENCE_ID, SEQUENCE);
	if (!w->started)
		flags |= SEQ_INCREMENTAL_STATE_CLEARED;
	w->started = true;
	if (flags)
		pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS, flags);
}

/* The interned data gathered so far, in a packet of its own. */
static void flush_interned(struct pft_writer *w)
{
	if (!w->in.len)
		return;
	start(w, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_msg(&w->pkt, PKT_INTERNED_DATA, &w->in);
	emit(w);
	pb_reset(&w->in);
}

/* An EventName / DebugAnnotationName entry into the interned data. */
static void intern(struct pft_writer *w, uint32_t field, uint32_t iid, const char *name)
{
	pb_reset(&w->tmp);
	pb_uint(&w->tmp, IN_IID, iid);
	str_field(&w->tmp, IN_NAME, name);
	if (w->in.len + w->tmp.len + 16 > w->in.cap)
		flush_interned(w);
	pb_msg(&w->in, field, &w->tmp);
}

/* Every name not interned yet, for the packet about to be written. */
static void intern_new(struct tl_sink *s)
{
	struct pft_writer *w = s->w;
	for (; w->names_sent < s->names.n; w->names_sent++)
		intern(w, ID_EVENT_NAMES, w->names_sent + 1, s->names.s[w->names_sent]);
	for (; w->keys_sent < w->keys.n; w->keys_sent++)
		intern(w, ID_DEBUG_ANNOTATION_NAMES, w->keys_sent + 1, w->keys.s[w->keys_sent]);
}

/* A TrackEvent packet of w->ev at ns, with the names it introduces. */
static void event_packet(struct tl_sink *s, uint64_t ns)
{
	struct pft_writer *w = s->w;
	intern_new(s);
	start(w, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_uint(&w->pkt, PKT_TIMESTAMP, ns);
	if (w->in.len)
		pb_msg(&w->pkt, PKT_INTERNED_DATA, &w->in);
	pb_msg(&w->pkt, PKT_TRACK_EVENT, &w->ev);
	emit(w);
	pb_reset(&w->in);
}

/* Start w->ev: an event of type on a track. */
static void event(struct pft_writer *w, int type, uint64_t track)
{
	pb_reset(&w->ev);
	pb_uint(&w->ev, TE_TYPE, (uint64_t)type);
	pb_uint(&w->ev, TE_TRACK_UUID, track);
}

/* The arguments as debug annotations of w->ev (names interned). */
static void annotations(struct tl_sink *s, const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	for (size_t i = 0; i < n; i++) {
		uint32_t key = ntab_add(&w->keys, a[i].key);
		if (key == NTAB_NONE) {
			s->oom = true;
			return;
		}
		pb_reset(&w->tmp);
		pb_uint(&w->tmp, DA_NAME_IID, key + 1);
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
	return atomic_open(&w->af, cmd, path);
}

static void pft_info(struct tl_sink *s, const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	event(w, TYPE_INSTANT, PROCESS_UUID);
	pb_uint(&w->ev, TE_NAME_IID, tlsink_name(s, "efipt timeline") + 1);
	annotations(s, a, n);
	event_packet(s, 0);
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
	start(w, 0);
	pb_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
	emit(w);
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
	start(w, 0);
	pb_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
	emit(w);
}

/*
 * A slice's begin or end (iid: a begin's name) written straight into
 * out_mem, the same bytes event_packet() makes through its buffers: a
 * timeline is mostly these, tens of millions of them. Only when no name
 * is to be interned first, the sequence has started and out_mem has room;
 * false: not written (event_packet() does it).
 */
static inline __attribute__((always_inline)) bool
slice_packet(struct tl_sink *s, bool end, uint64_t track, uint32_t iid, uint64_t ns)
{
	struct pft_writer *w = s->w;
	/* the packet (at most 59 bytes, so one byte of length each), in
	 * place: sequence, flags, timestamp, the TrackEvent; no call, so
	 * that it saves no registers (a full out_mem: event_packet()) */
	if (w->names_sent < s->names.n || !w->started || w->keys_sent < w->keys.n ||
	    w->in.len || w->pkt.full || 80 > sizeof(w->out_mem) - w->out_len)
		return false;
	uint8_t *o = w->out_mem + w->out_len, *q = o + 2;
	*q++ = PKT_SEQUENCE_ID << 3 | PB_VARINT;
	*q++ = SEQUENCE;
	*q++ = PKT_SEQUENCE_FLAGS << 3 | PB_VARINT;
	*q++ = SEQ_NEEDS_INCREMENTAL_STATE;
	*q++ = PKT_TIMESTAMP << 3 | PB_VARINT;
	q = pb_put_varint(q, ns);
	*q++ = PKT_TRACK_EVENT << 3 | PB_LEN;
	uint8_t *ev = q++; /* its length */
	*q++ = TE_TYPE << 3 | PB_VARINT;
	*q++ = end ? TYPE_SLICE_END : TYPE_SLICE_BEGIN;
	*q++ = TE_TRACK_UUID << 3 | PB_VARINT;
	q = pb_put_varint(q, track);
	/* the name, written either way and kept for a begin (an end needs
	 * none, TrackEvent.Type): no branch on which it is */
	*q = TE_NAME_IID << 3 | PB_VARINT;
	uint8_t *named = pb_put_varint(q + 1, iid);
	q = end ? q : named;
	*ev = (uint8_t)(q - ev - 1);
	o[0] = TRACE_PACKET << 3 | PB_LEN;
	o[1] = (uint8_t)(q - o - 2);
	w->out_len += (size_t)(q - o);
	return true;
}

/* A slice's begin or end through the buffers, where slice_packet() does
 * not write it: out of line, so that the common case saves no registers. */
static __attribute__((noinline)) void slice_event(struct tl_sink *s, int tid, uint64_t ns,
						  uint32_t name, bool end)
{
	struct pft_writer *w = s->w;
	event(w, end ? TYPE_SLICE_END : TYPE_SLICE_BEGIN, thread_uuid(tid));
	if (!end) /* an end needs no name (TrackEvent.Type) */
		pb_uint(&w->ev, TE_NAME_IID, name + 1);
	event_packet(s, ns);
}

static void pft_slice(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, bool end)
{
	if (!slice_packet(s, end, thread_uuid(tid), name + 1, ns))
		slice_event(s, tid, ns, name, end);
}

static void pft_instant(struct tl_sink *s, int tid, uint64_t ns, uint32_t name,
			const struct tl_arg *a, size_t n)
{
	struct pft_writer *w = s->w;
	event(w, TYPE_INSTANT, thread_uuid(tid));
	pb_uint(&w->ev, TE_NAME_IID, name + 1);
	annotations(s, a, n);
	event_packet(s, ns);
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
			s->oom = true;
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
	start(w, 0);
	pb_msg(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->ev);
	emit(w);
	return uuid;
}

static void pft_counter(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, const char *unit,
			int64_t value)
{
	struct pft_writer *w = s->w;
	uint64_t uuid = counter_track(s, tid, name, unit);
	if (!uuid)
		return;
	event(w, TYPE_COUNTER, uuid);
	pb_int(&w->ev, TE_COUNTER_VALUE, value);
	event_packet(s, ns);
}

static void release(struct pft_writer *w)
{
	ntab_free(&w->keys);
	free(w->ctr);
	w->ctr = NULL;
	w->nctr = w->ctr_cap = 0;
}

static int pft_close(struct tl_sink *s)
{
	struct pft_writer *w = s->w;
	flush_interned(w);
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
