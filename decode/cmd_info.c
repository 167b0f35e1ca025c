/* efipt info DIR: validate and show a run directory (filled in below). */
#include <stdio.h>

#include "decode/commands.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "efipt info: not built yet\n");
	return 2;
}
