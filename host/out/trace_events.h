/*
 * A timeline as Chrome trace event JSON ({"traceEvents":[...],
 * "otherData":{...}}), the format ui.perfetto.dev, chrome://tracing and
 * speedscope open: a timeline sink (timeline_sink.h, tev_sink_ops),
 * streamed into an atomic file (host/util/file_io.h). Events are written in
 * the order given; ts is in us (the sink's ns / 1000, with three decimals
 * when ns_precise). No displayTimeUnit is ever written: with it
 * Perfetto's importer reads ts in other units.
 *
 * An E event carries the name of the slice it ends: speedscope ends a
 * slice only on an E of the same name (chrome://tracing checks it too).
 */
#ifndef EFIPT_HOST_TRACE_EVENTS_H
#define EFIPT_HOST_TRACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "host/util/file_io.h"
#include "host/out/timeline_sink.h"

/* Past this many bytes the browser UIs cannot load a file: warned once. */
#define TEV_WARN_BYTES 1000000000ull

struct tev_writer {
	struct atomic_file af;
	char out[65536];	/* text not yet written to the file */
	size_t out_len;
	uint64_t bytes;
	bool first, warned;
	struct tev_name {	/* names by handle, as JSON string literals */
		char *s;
		size_t n;	/* strlen(s) */
	} *esc;
	uint32_t nesc;
	char *other;		/* otherData (info), written at the end */
};

/* s as a JSON string literal (quotes included) into buf: control
 * characters escaped, invalid UTF-8 shown as \xNN text. */
void tev_json_string(const char *s, char *buf, size_t cap);

#endif
