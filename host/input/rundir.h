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
#include "host/input/image.h"

/* A code snapshot (mem-<phys>.bin, memmap.json), mapped. */
struct rundir_snapshot {
	uint64_t phys, size;
	const uint8_t *bytes;	/* mmap'd */
};

/* One CPU's trace (manifest trace.traces; a run without it has CPU 0's
 * trace.pt only). */
#define RUNDIR_TRACES_MAX 256
struct rundir_cpu_trace {
	unsigned cpu;
	char file[32];		/* trace.pt, trace.cpuN.pt */
	uint64_t bytes, insns;	/* as the manifest says (0: not said) */
};

/*
 * A run directory, each of its files read once: the manifest (validated
 * by rundir_open()), then, by rundir_load_code(), the code snapshots of
 * memmap.json and the images of images.json.
 */
struct run_dir {
	char path[4096];      /* the directory */
	json_t *manifest;     /* owned */
	char err[1024];       /* why rundir_open failed */
	/* rundir_load_code(): snapshots (sorted by address, none overlap)
	 * and images */
	struct rundir_snapshot *snap;
	unsigned nsnap;
	struct image_list images;
	struct { uint64_t lo, hi; } qemu_code[64];	/* memmap.json's QemuCode */
	unsigned nqemu_code;
	/* codechanges.bin: code that changed while traced (code_changes.h) */
	struct codechg *chg;
	size_t nchg;
};

/* Open and validate DIR (or DIR/manifest.json). Returns 0, or -1 with err set. */
int rundir_open(struct run_dir *rd, const char *path);
void rundir_close(struct run_dir *rd);

/* Map every snapshot memmap.json names, read images.json and the code
 * changes of codechanges.bin (images in
 * code a QEMU plugin recorded, memmap.json's QemuCode regions, are marked
 * executed_only). Returns 0, or -1 with a message naming the file and the
 * problem in err. */
int rundir_load_code(struct run_dir *rd, char *err, size_t errlen);
/* Mark the images of l that lie in code a QEMU plugin recorded (memmap.json's
 * QemuCode regions: only the bytes of executed instructions are known there,
 * the rest reads as zero, which the symbol file check must not take for
 * the image's code) executed_only: --images may replace the run's list. */
void rundir_mark_executed_only(const struct run_dir *rd, struct image_list *l);
void rundir_free_code(struct run_dir *rd);

/* Load DIR/NAME (a regular file) as JSON. NULL with "PATH: reason" or
 * "PATH:LINE:COL: reason" in err. */
json_t *rundir_json(const struct run_dir *rd, const char *name, char *err, size_t errlen);

/* Write j as DIR/NAME (JSON_INDENT(indent)) through NAME.tmp and a rename,
 * so that a failed write never leaves a half file under NAME. 0, or -1 with
 * "PATH: reason" in err. */
int rundir_json_save(const char *dir, const char *name, json_t *j, int indent, char *err,
		     size_t errlen);

/* DIR/trace.pt into path, if the manifest says it was written; otherwise -1
 * with why not in err (no trace recorded, or the EFI_STATUS of its failed
 * write, e.g. EFI_VOLUME_FULL). */
int rundir_trace(const struct run_dir *rd, char *path, size_t cap, char *err, size_t errlen);

/* A JSON string "0x" + hex digits (run directory addresses: images.json's
 * base, memmap.json's phys) into *out. 0, or -1 when v is no such string
 * or the number passes 2^64. */
int rundir_hex(json_t *v, unsigned long long *out);

/* The run's traces into t (at most max): their number, or -1 with why in
 * err (a malformed trace.traces). */
int rundir_traces(const struct run_dir *rd, struct rundir_cpu_trace *t, unsigned max,
		  char *err, size_t errlen);

/* The trace of CPU cpu into path, as rundir_trace() (cpu 0: trace.pt);
 * -1 with the CPUs the run has in err when it has none of that CPU. */
int rundir_trace_cpu(const struct run_dir *rd, unsigned cpu, char *path, size_t cap, char *err,
		     size_t errlen);

/* Manifest accessors (NULL/0 when absent). */
const char *rundir_str(const struct run_dir *rd, const char *key);

/* What the manifest says about the CPU ("cpu") and the trace ("trace.rtit_ctl"). */
/* Does CPU cpu's output end where a ToPA STOP region filled (SDM 33.2.7.2
 * "ToPA STOP": the region's last byte is written, the packet it is in cut
 * short)? The manifest's trace.full (efipt.efi), or trace.guest.cpus[]
 * stopped (efipt-qemu.so start=guest). */
bool rundir_stopped_full(const struct run_dir *rd, unsigned cpu);

void rundir_flow_facts(const struct run_dir *rd, struct flow_facts *f);

#endif
