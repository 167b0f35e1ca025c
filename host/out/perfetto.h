/*
 * A timeline in Perfetto's protobuf trace format (a Trace: a sequence of
 * TracePackets), the format ui.perfetto.dev and trace_processor read
 * natively: a timeline sink (timeline_sink.h, pft_sink_ops) streamed into
 * an atomic file (host/util/file_io.h).
 *
 * What is written (field numbers: Perfetto's protos/perfetto/trace/
 * trace.proto, trace_packet.proto, track_event/track_event.proto,
 * track_descriptor.proto, process_descriptor.proto,
 * thread_descriptor.proto, counter_descriptor.proto,
 * debug_annotation.proto, interned_data/interned_data.proto; the subset
 * is tests/data/perfetto_trace.proto):
 *   - every packet on one sequence (trusted_packet_sequence_id 1); the
 *     first clears its incremental state, every TrackEvent needs it;
 *   - TrackDescriptors: the process (uuid 1, pid 1), a thread track per
 *     timeline track (uuid tid + 1, pid 1, that tid), a counter track per
 *     counter the first time it is sampled (child of its thread track,
 *     named "NAME UNIT" as Perfetto's JSON importer names it);
 *   - TrackEvents: SLICE_BEGIN/SLICE_END, INSTANT (arguments as debug
 *     annotations), COUNTER; timestamp in ns on the default clock;
 *   - event names and debug annotation names interned: each written once,
 *     in InternedData of the first packet that uses it, then only its iid;
 *   - the file's description (info) as an instant "efipt timeline" at
 *     ts 0 on the process track.
 */
#ifndef EFIPT_HOST_PERFETTO_H
#define EFIPT_HOST_PERFETTO_H

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

struct pft_writer {
	struct atomic_file af;
	uint32_t names_sent;		/* event names 0..names_sent-1 are interned */
	struct ntab keys;		/* debug annotation names */
	uint32_t keys_sent;
	struct pft_counter *ctr;	/* the counter tracks made */
	uint32_t nctr, ctr_cap;
	bool started;			/* the first packet is written */
	bool full;			/* a packet did not fit its buffer */
	uint8_t pkt_mem[32768], ev_mem[24576], in_mem[16384], tmp_mem[8192];
	struct pb_buf pkt, ev, in, tmp;
	uint8_t out_mem[65536];		/* packets not yet written to the file */
	size_t out_len;
};

#endif
