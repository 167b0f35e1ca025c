/* The firmware's boot-performance tables; see fpdt.h. */
#include "core/fpdt.h"

#include "core/mem.h"
#include "core/strbuf.h"

#define REC_HEADER 4u

static void say_damaged(const struct fpdt_sink *s, uint64_t off, uint32_t type, uint32_t len,
			const char *why)
{
	if (s && s->damaged)
		s->damaged(s->ctx, off, type, len, why);
}

/* The record's string: bytes [at, len) up to the first NUL. */
static void take_name(struct fpdt_rec *r, const uint8_t *p, unsigned at)
{
	unsigned n = 0;
	for (unsigned i = at; i < r->len && n + 1 < sizeof(r->name); i++) {
		uint8_t c = p[i];
		if (!c)
			break;
		r->name[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	r->name[n] = 0;
}

/* The smallest length of a record of this type in this table; 0: unknown. */
static unsigned min_len(uint32_t sig, uint16_t type)
{
	if (sig == FPDT_SIG_FPDT)
		return type == FPDT_T_FBPT_PTR || type == FPDT_T_S3PT_PTR ? 16 : 0;
	if (sig == FPDT_SIG_S3PT)
		return type == FPDT_T_S3_RESUME ? 24 : type == FPDT_T_S3_SUSPEND ? 20 : 0;
	switch (type) {
	case FPDT_T_BASIC_BOOT: return 48;
	case FPDT_T_GUID: return 34;
	case FPDT_T_STRING: return 34;
	case FPDT_T_DUAL_GUID_STRING: return 50;
	case FPDT_T_GUID_QWORD: return 42;
	case FPDT_T_GUID_QWORD_STRING: return 42;
	default: return 0;
	}
}

/* Fill r from the record at p (r->len bytes, at least min_len). */
static void decode(struct fpdt_rec *r, const uint8_t *p)
{
	if (r->table == FPDT_SIG_FPDT && min_len(r->table, r->type)) {
		r->kind = FPDT_K_TABLE_PTR;
		r->addr = efipt_le64(p + 8);
	} else if (r->table == FPDT_SIG_S3PT && r->type == FPDT_T_S3_RESUME) {
		r->kind = FPDT_K_S3_RESUME;
		r->count = efipt_le32(p + 4);
		r->s3[0] = efipt_le64(p + 8);
		r->s3[1] = efipt_le64(p + 16);
	} else if (r->table == FPDT_SIG_S3PT && r->type == FPDT_T_S3_SUSPEND) {
		r->kind = FPDT_K_S3_SUSPEND;
		r->s3[0] = efipt_le64(p + 4);
		r->s3[1] = efipt_le64(p + 12);
	} else if (r->table == FPDT_SIG_FBPT && r->type == FPDT_T_BASIC_BOOT) {
		r->kind = FPDT_K_BASIC_BOOT;
		for (unsigned i = 0; i < FPDT_BOOT_FIELDS; i++)
			r->boot[i] = efipt_le64(p + 8 + 8 * i);
	} else if (r->table == FPDT_SIG_FBPT && min_len(r->table, r->type)) {
		r->kind = FPDT_K_EVENT;
		r->progress = efipt_le16(p + 4);
		r->apic = efipt_le32(p + 6);
		r->ts = efipt_le64(p + 10);
		efipt_memcpy(r->guid, p + 18, 16);
		if (r->type == FPDT_T_DUAL_GUID_STRING) {
			r->has_guid2 = true;
			efipt_memcpy(r->guid2, p + 34, 16);
			take_name(r, p, 50);
		} else if (r->type == FPDT_T_GUID_QWORD || r->type == FPDT_T_GUID_QWORD_STRING) {
			r->has_qword = true;
			r->qword = efipt_le64(p + 34);
			if (r->type == FPDT_T_GUID_QWORD_STRING)
				take_name(r, p, 42);
		} else if (r->type == FPDT_T_STRING) {
			take_name(r, p, 34);
		}
	} else {
		r->kind = FPDT_K_OTHER;
	}
}

unsigned fpdt_table_records(const uint8_t *buf, uint32_t len, uint32_t sig, uint32_t hdr,
			    uint64_t off0, const struct fpdt_sink *sink)
{
	static const char *const too_short = "shorter than its type's fields";
	uint32_t at = hdr;
	while (at < len) {
		uint64_t off = off0 + at;
		if (len - at < REC_HEADER) {
			say_damaged(sink, off, 0xffff, len - at,
				    "a record header cut by the table's end");
			return 1;
		}
		const uint8_t *p = buf + at;
		struct fpdt_rec r;
		efipt_memset(&r, 0, sizeof(r));
		r.table = sig;
		r.off = off;
		r.type = efipt_le16(p);
		r.len = p[2];
		r.rev = p[3];
		if (r.len < REC_HEADER) {
			say_damaged(sink, off, r.type, r.len, "record length below its 4-byte header");
			return 1;
		}
		if (r.len > len - at) {
			say_damaged(sink, off, r.type, r.len, "record passes the table's end");
			return 1;
		}
		unsigned need = min_len(sig, r.type);
		if (need && r.len < need) {
			/* its length is known to be in the table: the next one can be read */
			say_damaged(sink, off, r.type, r.len, too_short);
		} else {
			decode(&r, p);
			if (sink && sink->record)
				sink->record(sink->ctx, &r);
		}
		at += r.len;
	}
	return 0;
}

static uint32_t header_size(uint32_t sig)
{
	return sig == FPDT_SIG_FPDT ? FPDT_ACPI_HEADER
	     : sig == FPDT_SIG_FBPT || sig == FPDT_SIG_S3PT ? FPDT_PERF_HEADER : 0;
}

unsigned fpdt_walk(const uint8_t *buf, size_t len, const struct fpdt_sink *sink)
{
	unsigned tables = 0;
	size_t at = 0;
	while (at < len) {
		if (len - at < 8) {
			say_damaged(sink, at, 0xffffffffu, (uint32_t)(len - at),
				    "bytes after the last table, too few for a table header");
			return tables;
		}
		uint32_t sig = efipt_le32(buf + at), tlen = efipt_le32(buf + at + 4);
		uint32_t hdr = header_size(sig);
		const char *why = NULL;
		if (!hdr)
			why = "no FPDT, FBPT or S3PT signature";
		else if (tlen < hdr)
			why = "table length below its header";
		else if (tlen > len - at)
			why = "table passes the file's end";
		if (why) {
			say_damaged(sink, at, 0xffffffffu, tlen, why);
			/* resynchronise on the next signature */
			size_t next = at + 1;
			while (next + 8 <= len && !header_size(efipt_le32(buf + next)))
				next++;
			if (next + 8 > len)
				return tables;
			at = next;
			continue;
		}
		if (sink && sink->table)
			sink->table(sink->ctx, sig, at, tlen);
		fpdt_table_records(buf + at, tlen, sig, hdr, at, sink);
		tables++;
		at += tlen;
	}
	return tables;
}

bool fpdt_is_start(uint16_t id)
{
	return id < 0x10 ? (id & 1) != 0 : (id & 0xf) == 0;
}

bool fpdt_is_end(uint16_t id)
{
	return id < 0x10 ? id != 0 && !(id & 1) : (id & 0xf) != 0;
}

uint16_t fpdt_start_of(uint16_t end)
{
	return end < 0x10 ? (uint16_t)(end - 1) : (uint16_t)(end & ~0xfu);
}

const char *fpdt_progress_name(uint16_t id, char *buf, size_t cap)
{
	uint16_t s = fpdt_is_end(id) ? fpdt_start_of(id) : id;
	switch (s) {
	case 0x00: return "Event";
	case 0x01: return "StartImage";
	case 0x03: return "LoadImage";
	case 0x05: return "DB:Start";
	case 0x07: return "DB:Support";
	case 0x09: return "DB:Stop";
	case 0x10: return "EventSignal";
	case 0x20: return "Callback";
	case 0x30: return "Function";
	case 0x40: return "InModule";
	case 0x50: return "CrossModule";
	default: break;
	}
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_printf(&sb, "ID 0x%04x", id);
	return buf;
}

const char *fpdt_boot_field_name(enum fpdt_boot_field f)
{
	switch (f) {
	case FPDT_RESET_END: return "ResetEnd";
	case FPDT_LOADER_LOAD: return "OsLoaderLoadImageStart";
	case FPDT_LOADER_START: return "OsLoaderStartImageStart";
	case FPDT_EBS_ENTRY: return "ExitBootServicesEntry";
	case FPDT_EBS_EXIT: return "ExitBootServicesExit";
	case FPDT_BOOT_FIELDS: break;
	}
	return "?";
}

const char *fpdt_type_name(uint32_t table, uint16_t type)
{
	if (table == FPDT_SIG_FPDT)
		return type == FPDT_T_FBPT_PTR ? "FBPT pointer"
		     : type == FPDT_T_S3PT_PTR ? "S3PT pointer" : "unknown FPDT record";
	if (table == FPDT_SIG_S3PT)
		return type == FPDT_T_S3_RESUME ? "S3 resume"
		     : type == FPDT_T_S3_SUSPEND ? "S3 suspend" : "unknown S3PT record";
	switch (type) {
	case FPDT_T_BASIC_BOOT: return "basic boot";
	case FPDT_T_GUID: return "GUID event";
	case FPDT_T_STRING: return "string event";
	case FPDT_T_DUAL_GUID_STRING: return "dual GUID string event";
	case FPDT_T_GUID_QWORD: return "GUID qword event";
	case FPDT_T_GUID_QWORD_STRING: return "GUID qword string event";
	default: return "unknown FBPT record";
	}
}

void fpdt_guid_text(const uint8_t g[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	/* EFI_GUID: Data1 u32, Data2 u16, Data3 u16 little endian, Data4 bytes */
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	unsigned n = 0;
	for (unsigned i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[n++] = '-';
		out[n++] = hex[g[order[i]] >> 4];
		out[n++] = hex[g[order[i]] & 15];
	}
	out[n] = 0;
}
