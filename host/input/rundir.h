/*
 * Host side of an efipt run directory (docs/format.md): load manifest.json,
 * check it against the format, and check the files it lists.
 */
#ifndef EFIPT_HOST_RUNDIR_H
#define EFIPT_HOST_RUNDIR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/flow_setup.h"

struct rundir {
	char path[4096];      /* the directory */
	json_t *manifest;     /* owned */
	char err[1024];       /* why rundir_open failed */
};

/* Open and validate DIR (or DIR/manifest.json). Returns 0, or -1 with err set. */
int rundir_open(struct rundir *rd, const char *path);
void rundir_close(struct rundir *rd);

/* Load DIR/NAME (a regular file) as JSON. NULL with "PATH: reason" or
 * "PATH:LINE:COL: reason" in err. */
json_t *rundir_json(const struct rundir *rd, const char *name, char *err, size_t errlen);

/* Write j as DIR/NAME (JSON_INDENT(indent)) through NAME.tmp and a rename,
 * so that a failed write never leaves a half file under NAME. 0, or -1 with
 * "PATH: reason" in err. */
int rundir_json_save(const char *dir, const char *name, json_t *j, int indent, char *err,
		     size_t errlen);

/* DIR/trace.pt into path, if the manifest says it was written; otherwise -1
 * with why not in err (no trace recorded, or the EFI_STATUS of its failed
 * write, e.g. EFI_VOLUME_FULL). */
int rundir_trace(const struct rundir *rd, char *path, size_t cap, char *err, size_t errlen);

/* A JSON string "0x" + hex digits (run directory addresses: images.json's
 * base, memmap.json's phys) into *out. 0, or -1 when v is no such string
 * or the number passes 2^64. */
int rundir_hex(json_t *v, unsigned long long *out);

/* One CPU's trace (manifest trace.traces; a run without it has CPU 0's
 * trace.pt only). */
#define RUNDIR_TRACES_MAX 256
struct rundir_cpu_trace {
	unsigned cpu;
	char file[32];		/* trace.pt, trace.cpuN.pt */
	uint64_t bytes, insns;	/* as the manifest says (0: not said) */
};

/* The run's traces into t (at most max): their number, or -1 with why in
 * err (a malformed trace.traces). */
int rundir_traces(const struct rundir *rd, struct rundir_cpu_trace *t, unsigned max,
		  char *err, size_t errlen);

/* The trace of CPU cpu into path, as rundir_trace() (cpu 0: trace.pt);
 * -1 with the CPUs the run has in err when it has none of that CPU. */
int rundir_trace_cpu(const struct rundir *rd, unsigned cpu, char *path, size_t cap, char *err,
		     size_t errlen);

/* Manifest accessors (NULL/0 when absent). */
const char *rundir_str(const struct rundir *rd, const char *key);

/* What the manifest says about the CPU ("cpu") and the trace ("trace.rtit_ctl"). */
void rundir_flow_facts(const struct rundir *rd, struct flow_facts *f);

#endif
