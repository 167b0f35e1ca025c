/* Run results by name; see run_result.h. */
#include "core/run_result.h"

#include "core/mem.h"

const char *run_result_name(enum run_result r)
{
	switch (r) {
	case RUN_OK: return "ok";
	case RUN_UNSUPPORTED: return "unsupported";
	case RUN_FAILED: return "failed";
	}
	return "failed";
}

int run_result_parse(const char *s, enum run_result *r)
{
	static const enum run_result all[] = { RUN_OK, RUN_UNSUPPORTED, RUN_FAILED };
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!efipt_strcmp(s, run_result_name(all[i]))) {
			*r = all[i];
			return 0;
		}
	}
	return -1;
}
