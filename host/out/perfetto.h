/*
 * A timeline in Perfetto's protobuf trace format (a Trace: a sequence of
 * TracePackets), the format ui.perfetto.dev and trace_processor read
 * natively: a timeline sink (timeline_sink.h, pft_sink_ops) streamed into
 * an atomic file (host/util/file_io.h).
 *
 * What is written (field numbers: Perfetto's protos/perfetto/trace/
 * trace.proto, trace_packet.proto, clock_snapshot.proto,
 * trace_packet_defaults.proto, track_event/track_event.proto,
 * track_descriptor.proto, process_descriptor.proto,
 * thread_descriptor.proto, counter_descriptor.proto,
 * debug_annotation.proto, interned_data/interned_data.proto; the subset
 * is tests/data/perfetto_trace.proto):
 *   - sequence 1 (trusted_packet_sequence_id) holds the TrackDescriptors
 *     and the file's description: the process (uuid 1, pid 1), a thread
 *     track per timeline track (uuid tid + 1, pid 1, that tid), a counter
 *     track per counter the first time it is sampled (child of its thread
 *     track, named "NAME UNIT" as Perfetto's JSON importer names it);
 *   - each thread track's events are a sequence of their own (2, 3, ...
 *     in the order the tracks first have one), as the Perfetto SDK writes
 *     a thread's: its first packet clears the sequence's incremental state
 *     and sets it: TracePacketDefaults (the track, and clock 64 for the
 *     timestamps) and a ClockSnapshot that makes clock 64 incremental,
 *     0 where the default clock (BOOTTIME) is 0. So an event carries
 *     neither its track (a counter sample names its counter track) nor
 *     its whole time, only the ns since the sequence's last event: a
 *     timeline's time moves only at timing packets, so that is mostly 0.
 *     An event earlier than the one before it (never, from efipt timeline)
 *     has its whole time, on BOOTTIME;
 *   - TrackEvents: SLICE_BEGIN/SLICE_END, INSTANT (arguments as debug
 *     annotations), COUNTER, each needing its sequence's incremental state;
 *   - event names and debug annotation names interned per sequence: each
 *     written once, in InternedData of the sequence's first packet that
 *     uses it, then only its iid (the name's handle + 1 on every sequence);
 *   - the file's description (info) as an instant "efipt timeline" at
 *     ts 0 on the process track.
 */
#ifndef EFIPT_HOST_PERFETTO_H
#define EFIPT_HOST_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>

#include "host/util/file_io.h"
#include "host/out/name_table.h"
#include "host/out/protobuf.h"
#include "host/out/timeline_sink.h"

/* The longest string written: longer ones are cut (at a UTF-8 boundary). */
#define PFT_STR_MAX 4096

struct pft_counter {
	int tid;
	uint32_t name;
	uint64_t uuid;
};

/* A set of small numbers (names' handles), as bits. */
struct pft_bits {
	uint64_t *w;
	uint32_t nw;		/* words */
};

/* A packet sequence: the process's (id 1) or a thread track's. */
struct pft_seq {
	uint32_t id;		/* trusted_packet_sequence_id */
	int tid;		/* its thread track's (not for id 1) */
	bool started;		/* its first packet (state cleared) is written */
	uint64_t last_ns;	/* clock 64's time: the last event's */
	struct pft_bits names, keys;	/* interned on it */
};

struct pft_writer {
	struct atomic_file af;
	struct ntab keys;		/* debug annotation names */
	struct pft_seq proc;		/* sequence 1 */
	struct pft_seq *seq;		/* the thread tracks' */
	uint32_t nseq;
	size_t seq_cap;
	struct pft_seq *cur;		/* the one used last */
	struct pft_counter *ctr;	/* the counter tracks made */
	uint32_t nctr, ctr_cap;
	bool full;			/* a packet did not fit its buffer */
	uint8_t pkt_mem[32768], ev_mem[24576], in_mem[16384], tmp_mem[8192];
	struct pb_buf pkt, ev, in, tmp;
	uint8_t out_mem[65536];		/* packets not yet written to the file */
	size_t out_len;
};

#endif
