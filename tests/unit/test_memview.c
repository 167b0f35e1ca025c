/* Region view of code memory: boundaries, overlaps (first added wins),
 * addresses in no region, and the last-hit shortcut never breaking priority. */
#include <string.h>

#include "check.h"
#include "core/memview.h"

int main(void)
{
	static uint8_t a[0x100], b[0x400];
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	struct memview_region reg[2];
	struct memview v;
	memview_init(&v, reg, 2);
	CHECK(memview_add(&v, 0x1100, sizeof(a), a), "add copy");
	CHECK(memview_add(&v, 0x1000, sizeof(b), b), "add live region");
	CHECK(!memview_add(&v, 0x5000, 16, a), "full view refuses more");
	uint8_t buf[64];
	int n = memview_read(&v, 0x1000, buf, 16);
	CHECK(n == 16 && buf[0] == 0xbb, "read the live region");
	n = memview_read(&v, 0x1100, buf, 16);
	CHECK(n == 16 && buf[0] == 0xaa, "overlap: the first region added wins");
	n = memview_read(&v, 0x1010, buf, 16); /* last hit is now the copy: must not be used */
	CHECK(n == 16 && buf[0] == 0xbb, "last-hit shortcut keeps priority");
	n = memview_read(&v, 0x1120, buf, 16);
	CHECK(n == 16 && buf[0] == 0xaa, "last-hit shortcut respects earlier regions");
	n = memview_read(&v, 0x11f8, buf, 64);
	CHECK(n == 8 && buf[7] == 0xaa, "short read at a region's end");
	n = memview_read(&v, 0x13f0, buf, 64);
	CHECK(n == 16, "short read at the live region's end");
	CHECK(memview_read(&v, 0x1400, buf, 1) == 0 && memview_read(&v, 0xfff, buf, 1) == 0 &&
		      memview_read(&v, ~0ull, buf, 8) == 0,
	      "addresses outside every region read nothing");
	struct memview_region r1[1];
	memview_init(&v, r1, 1);
	CHECK(!memview_add(&v, ~0ull - 4, 16, a), "a region wrapping the address space is refused");
	return check_exit();
}
