/* Trace-level checks; see trace_end.h. */
#include <stdio.h>

#include "core/pt_pkt.h"
#include "host/input/trace_end.h"

enum trace_end trace_end_check(const uint8_t *buf, size_t len, uint64_t *off)
{
	struct ptpkt_decoder d;
	if (!len)
		return TRACE_END_OK;
	ptpkt_init(&d, buf, len, 0);
	if (ptpkt_sync_forward(&d))
		return TRACE_END_NO_PSB;
	/* Only the packets after the last PSB can end the trace; errors before
	 * it are the decoder's to report. */
	d.pos = d.end;
	if (ptpkt_sync_backward(&d))
		return TRACE_END_OK;
	for (;;) {
		struct ptpkt p;
		uint64_t at = ptpkt_offset(&d);
		int n = ptpkt_next(&d, &p);
		if (n > 0)
			continue;
		if (n == -ptpkt_err_truncated) {
			*off = at;
			return TRACE_END_CUT;
		}
		return TRACE_END_OK;
	}
}

int trace_end_report(const char *cmd, const char *path, const uint8_t *buf, size_t len,
		     bool stop_full)
{
	uint64_t off = 0;
	switch (trace_end_check(buf, len, &off)) {
	case TRACE_END_NO_PSB:
		fprintf(stderr, "efipt %s: %s: no PSB found (%zu bytes, nothing to decode)\n", cmd,
			path, len);
		return 1;
	case TRACE_END_CUT:
		if (stop_full) {
			fprintf(stderr, "efipt %s: %s: the last packet, at offset 0x%llx, is cut "
					"(%llu bytes): the output stopped where its ToPA STOP region "
					"filled (SDM 33.2.7.2)\n", cmd, path, (unsigned long long)off,
				(unsigned long long)(len - off));
			return 0;
		}
		fprintf(stderr, "efipt %s: %s: the trace ends inside a packet at offset 0x%llx "
				"(%llu bytes cut off)\n", cmd, path, (unsigned long long)off,
			(unsigned long long)(len - off));
		return 1;
	case TRACE_END_OK:
		break;
	}
	return 0;
}
