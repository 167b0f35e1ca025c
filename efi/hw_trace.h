/*
 * One Intel PT capture in firmware: validate the options against CPUID,
 * lay out and reserve the output buffer, start PT (SDM 33.3.2.1), run a
 * body of code, stop (33.3.2.2; also at ExitBootServices), copy the trace
 * out oldest byte first, and free the buffer. Used by `trace` and by the
 * tracing cases of `selftest`.
 */
#ifndef EFIPT_EFI_HW_TRACE_H
#define EFIPT_EFI_HW_TRACE_H

#include <efi.h>

#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_output.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "core/strbuf.h"

struct hw_result {
	uint8_t *buf;            /* the trace (pool memory, caller frees), or NULL */
	uint64_t len;
	struct ptout_extent ext; /* wrapped, full, Error/Stopped, ... */
	uint64_t tsc_start, tsc_stop;
	bool have_nom;
	unsigned nom_freq;       /* MSR_PLATFORM_INFO[15:8] */
	EFI_STATUS body_status;  /* what the traced body returned */
	bool spilled;            /* no copy: the trace went to hw_spill */
	EFI_STATUS spill_status;
	bool have_json;
	char trace_json[2048];   /* the manifest's "trace" object */
};

typedef EFI_STATUS (*hw_body_fn)(void *ctx);

/* Where a trace goes when it is too large for a copy in pool memory: begin
 * gets its size, write its spans oldest first, straight from the PT buffer. */
struct hw_spill {
	EFI_STATUS (*begin)(void *ctx, uint64_t total);
	EFI_STATUS (*write)(void *ctx, const void *data, uint64_t len);
	void *ctx;
};

/*
 * A capture whose buffer outlives the run (trace --recorder): it lies in
 * memory the hooks provide and is not freed; tracing may go on through
 * ExitBootServices; the hooks see the configuration, the start, the exit
 * and the stop. NULL hooks: a plain capture.
 */
struct hw_hooks {
	/* after validation, before the buffer is laid out: where to lay it
	 * out, or NULL (refused; msg says why) */
	const struct ptout_mem *(*place)(void *ctx, const struct ptcfg_settings *set,
					 struct strbuf *msg);
	/* laid out, about to start (tsc before the start) */
	void (*laid_out)(void *ctx, const struct ptcfg_settings *set, const struct ptout *out);
	/* tracing runs: the TSC read before and after the start */
	void (*started)(void *ctx, uint64_t tsc_before, uint64_t tsc_after);
	/* ExitBootServices is being signalled: stop tracing first? */
	bool stop_at_exit;
	/* called at ExitBootServices after the stop (if any): no allocation */
	void (*at_exit)(void *ctx, const struct rtit_engine *eng);
	/* tracing was stopped when the body returned: the read-back state */
	void (*stopped)(void *ctx, const struct rtit_engine *eng, uint64_t tsc_stop);
	void *ctx;
};

/*
 * Returns EFI_SUCCESS when the body ran under tracing and the trace was
 * copied out; EFI_UNSUPPORTED when the CPU cannot do what cfg asks (msg
 * names the CPUID bit or the valid values); another error when the buffer
 * could not be had or PT could not be started (msg says why). msg also
 * receives the validator's notes and the stop report. spill may be NULL: a
 * trace that cannot be copied is then lost (EFI_OUT_OF_RESOURCES).
 */
EFI_STATUS hw_trace(const struct ptcaps *caps, const struct ptcfg *cfg, hw_body_fn body,
		    void *ctx, const struct hw_spill *spill, const struct hw_hooks *hooks,
		    struct hw_result *res, struct strbuf *msg);

/*
 * While hw_trace's body runs: the exact position in the trace now (the
 * offset of the next packet in trace.pt; rtit_position() pauses TraceEn
 * for the read). EFI_NOT_READY when not tracing, EFI_DEVICE_ERROR when it
 * could not be read (the trace had stopped: buffer full, error).
 */
EFI_STATUS hw_trace_position(uint64_t *pos);

#endif
