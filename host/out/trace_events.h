/*
 * A writer of Chrome/Perfetto trace event JSON ({"traceEvents":[...]}, the
 * format ui.perfetto.dev and chrome://tracing open), streamed into an
 * atomic file (host/util/file_io.h): nothing appears under the real name until
 * tev_close() succeeded. Events are written in the order given; the caller
 * keeps ts monotonic and B/E nested. No displayTimeUnit is ever written:
 * with it Perfetto's importer reads ts in other units.
 */
#ifndef EFIPT_HOST_TRACE_EVENTS_H
#define EFIPT_HOST_TRACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "host/util/file_io.h"

/* Past this many bytes the browser UIs cannot load a file: warned once. */
#define TEV_WARN_BYTES 1000000000ull

struct tev_writer {
	struct atomic_file af;
	const char *cmd;	/* "timeline": for messages */
	uint64_t bytes;
	bool first, warned;
	bool ts_ns;		/* ts given in ns, written as us.nnn (else as is) */
};

/* Create the temporary file and start the event list. 0 or -1 (printed). */
int tev_open(struct tev_writer *w, const char *cmd, const char *path);

/* s as a JSON string literal (quotes included) into buf: control
 * characters escaped, invalid UTF-8 shown as \xNN text. */
void tev_json_string(const char *s, char *buf, size_t cap);

/* Metadata: the process's and a thread's (track's) names. name_json is a
 * JSON string literal (tev_json_string). */
void tev_process_name(struct tev_writer *w, int pid, const char *name_json);
void tev_thread_name(struct tev_writer *w, int pid, int tid, const char *name_json);
/* A slice begins / ends at ts (microseconds). */
void tev_begin(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json);
void tev_end(struct tev_writer *w, int pid, int tid, uint64_t ts);
/* A counter sample (a "C" event: a track of the process named name_json
 * with args_json's values; tid is the track it belongs with). */
void tev_counter(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json,
		 const char *args_json);
/* A thread-scoped instant; args_json: a JSON object literal, or NULL. */
void tev_instant(struct tev_writer *w, int pid, int tid, uint64_t ts, const char *name_json,
		 const char *args_json);

/* End the list with otherData (a JSON object literal), then flush and
 * rename into place. 0 or -1 (printed, nothing left behind). */
int tev_close(struct tev_writer *w, const char *other_json);
/* Give up: remove the temporary file. */
void tev_abort(struct tev_writer *w);

#endif
