/*
 * Where a timeline goes: one process with a track per CPU, slices that
 * begin and end on a track, instants, counters. Two writers implement it:
 * Chrome trace event JSON (trace_events.h) and Perfetto's protobuf trace
 * (perfetto.h). The file is written under a temporary name and renamed by
 * tlsink_close(): nothing appears under the real name on failure.
 *
 * Times are ns. The caller keeps them monotonic per track and slices
 * strictly nested; a name is given once (tlsink_name()) and referred to
 * by its handle after.
 */
#ifndef EFIPT_HOST_TIMELINE_SINK_H
#define EFIPT_HOST_TIMELINE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/out/name_table.h"

enum tl_format { TL_JSON, TL_PERFETTO };

/* A key/value pair of an instant or of the file's description. */
enum tl_arg_kind {
	TL_U64,		/* a number */
	TL_HEX,		/* an address or value: JSON "0x..", Perfetto a pointer */
	TL_STR,
	TL_BOOL,
};
struct tl_arg {
	const char *key;
	enum tl_arg_kind kind;
	uint64_t u;		/* TL_U64, TL_HEX, TL_BOOL */
	const char *s;		/* TL_STR */
};

struct tl_sink;
struct tl_sink_ops {
	int (*open)(struct tl_sink *s, const char *cmd, const char *path);
	/* The process first, each track before its events; what the file
	 * is (what ts means, where it is from) once, anywhere after the
	 * process (the JSON writes it last, Perfetto where it is given). */
	void (*process)(struct tl_sink *s, const char *name);
	void (*info)(struct tl_sink *s, const struct tl_arg *a, size_t n);
	void (*track)(struct tl_sink *s, int tid, const char *name);
	/* A slice's begin, or (end) its end; name: the slice's (an end's
	 * as its begin had it). One call for both: a timeline's begins and
	 * ends alternate in no pattern a branch predictor learns, and one
	 * indirect call has one target. */
	void (*slice)(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, bool end);
	void (*instant)(struct tl_sink *s, int tid, uint64_t ns, uint32_t name,
			const struct tl_arg *a, size_t n);
	/* A sample of the counter name (in unit) that belongs with track tid. */
	void (*counter)(struct tl_sink *s, int tid, uint64_t ns, uint32_t name, const char *unit,
			int64_t value);
	/* Finish, flush and rename into place: 0, or -1 (printed, nothing
	 * left behind). */
	int (*close)(struct tl_sink *s);
	/* Give up: remove the temporary file. */
	void (*abort)(struct tl_sink *s);
	size_t size;		/* of the writer */
};

struct tl_sink {
	const struct tl_sink_ops *ops;
	void *w;		/* the writer's state (ops->size bytes) */
	const char *cmd;	/* "timeline": for messages */
	struct ntab names;	/* every name given: a handle each */
	const char *oom;	/* what memory ran out for, the first time (said
				 * at close, which then writes nothing) */
	bool ns_precise;	/* times are ns to the ns (JSON writes us with
				 * three decimals); else whole us */
};

/*
 * The format: --format NAME when given (json, perfetto), else by the
 * output file's name (.pftrace and .perfetto-trace: Perfetto; any other:
 * JSON). 0, or -1 when NAME is neither.
 */
int tlsink_format(const char *name, const char *path, enum tl_format *f);
/* Create the writer and its temporary file. 0 or -1 (printed). */
int tlsink_open(struct tl_sink *s, enum tl_format f, const char *cmd, const char *path);
/* The handle of a name (the same name: the same handle). */
uint32_t tlsink_name(struct tl_sink *s, const char *name);
/* The name of a handle ("" for none). */
const char *tlsink_str(const struct tl_sink *s, uint32_t name);
/* Memory ran out for what (kept: the first reason); tlsink_close() says so
 * and writes nothing. */
static inline void tlsink_oom(struct tl_sink *s, const char *what)
{
	if (!s->oom)
		s->oom = what;
}
/* 0, or -1 (printed; nothing left behind). Frees the writer either way. */
int tlsink_close(struct tl_sink *s);
void tlsink_abort(struct tl_sink *s);

extern const struct tl_sink_ops tev_sink_ops, pft_sink_ops;

#endif
