/*-------------------------------------------------------------------------
 *
 * table_format.c
 *	  The three forms of a row version item: full, compact and settled.
 *
 * Heap spends 23 bytes (24 with alignment) on every tuple's header, and a
 * fractam table adds its 8-byte row id.  Most versions never need most of
 * that header: a version nobody has deleted, updated or locked has no
 * xmax, no combo command id, and a t_ctid that is its own TID; once its
 * inserter is visible to everyone, it needs no xmin either.  So a version
 * is written in the smallest form that says everything about it
 * (fractam_table.h, "Row version items"):
 *
 *	full	 row id, heap tuple header, null bitmap, data (as heap)
 *	compact  row id, info word, xmin, cmin, null bitmap, data: 10 header
 *			 bytes instead of 24, what INSERT, COPY and UPDATE write
 *	settled  row id, info word, null bitmap, data: 2 header bytes, for a
 *			 version visible to everyone with no xmax
 *
 * The info word holds the attribute count and the infomask bits that
 * describe the data (nulls, variable width, external values, "is an
 * updated version"), and, in the compact form, VACUUM's freeze bit.  The
 * data bytes are heap's, unchanged: the compact and settled forms store
 * them unaligned, and readers copy them behind a decoded header into an
 * aligned buffer, where heap's alignment rules hold again.
 *
 * The full form is the only one that is ever changed in place: a delete,
 * an update or a row lock first expands the item (fractam_find_version
 * does it when it locks a leaf exclusively), then writes the header as
 * before.  A version settles only where its leaf is rewritten anyway: a
 * full leaf that prunes (table_prune.c), VACUUM FULL and CLUSTER
 * (table_build.c), and COPY FREEZE, whose rows are frozen from the start.
 * A settled version reads as xmin FrozenTransactionId and cmin 0, as a
 * frozen heap tuple's xmin would read if heap did not keep the raw xid.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "am/table/fractam_table.h"

/* infomask bits the info word keeps, and where */
static const struct
{
	uint16		infomask;
	uint16		info;
}			info_bits[] = {
	{HEAP_HASNULL, FRACTAM_INFO_HASNULL},
	{HEAP_HASVARWIDTH, FRACTAM_INFO_VARWIDTH},
	{HEAP_HASEXTERNAL, FRACTAM_INFO_EXTERNAL},
	{HEAP_UPDATED, FRACTAM_INFO_UPDATED},
};

#define DATA_INFOMASK \
	(HEAP_HASNULL | HEAP_HASVARWIDTH | HEAP_HASEXTERNAL | HEAP_UPDATED)

/*
 * The same mapping as a table, for readers, which decode a header per row
 * (a sequential scan spent 7 % of its time in the loop over info_bits):
 * the four data bits of an info word are adjacent, from HASNULL up.
 */
StaticAssertDecl(FRACTAM_INFO_VARWIDTH == FRACTAM_INFO_HASNULL << 1 &&
				 FRACTAM_INFO_EXTERNAL == FRACTAM_INFO_HASNULL << 2 &&
				 FRACTAM_INFO_UPDATED == FRACTAM_INFO_HASNULL << 3,
				 "the info word's data bits are not adjacent");
#define INFO_DATA_INDEX(info) \
	(((info) / FRACTAM_INFO_HASNULL) & 0x0F)
#define INFO_DATA_INFOMASK(i) \
	(((i) & 1 ? HEAP_HASNULL : 0) | ((i) & 2 ? HEAP_HASVARWIDTH : 0) | \
	 ((i) & 4 ? HEAP_HASEXTERNAL : 0) | ((i) & 8 ? HEAP_UPDATED : 0))
static const uint16 data_infomask[16] = {
	INFO_DATA_INFOMASK(0), INFO_DATA_INFOMASK(1), INFO_DATA_INFOMASK(2),
	INFO_DATA_INFOMASK(3), INFO_DATA_INFOMASK(4), INFO_DATA_INFOMASK(5),
	INFO_DATA_INFOMASK(6), INFO_DATA_INFOMASK(7), INFO_DATA_INFOMASK(8),
	INFO_DATA_INFOMASK(9), INFO_DATA_INFOMASK(10), INFO_DATA_INFOMASK(11),
	INFO_DATA_INFOMASK(12), INFO_DATA_INFOMASK(13), INFO_DATA_INFOMASK(14),
	INFO_DATA_INFOMASK(15),
};

static inline Size
form_header_size(uint8 form)
{
	return form == FRACTAM_ITEM_COMPACT ? FRACTAM_COMPACT_HDRSZ :
		FRACTAM_SETTLED_HDRSZ;
}

static inline Size
info_bitmap_len(uint16 info)
{
	return (info & FRACTAM_INFO_HASNULL) ?
		BITMAPLEN(info & FRACTAM_INFO_NATTS) : 0;
}

/* heap's t_hoff for a tuple with this info word */
static inline uint8
info_hoff(uint16 info)
{
	return (uint8) MAXALIGN(SizeofHeapTupleHeader + info_bitmap_len(info));
}

static uint16
info_of(HeapTupleHeader hdr)
{
	uint16		info = HeapTupleHeaderGetNatts(hdr);

	for (int i = 0; i < lengthof(info_bits); i++)
		if (hdr->t_infomask & info_bits[i].infomask)
			info |= info_bits[i].info;
	return info;
}

/*
 * Can the version in tup (t_self set) be stored without a full header?
 * Only one that holds nothing but what the compact form keeps: no xmax,
 * no lock, no combo command id, no speculative token, t_ctid itself, and
 * heap's own t_hoff for its null bitmap.  A version to be settled may
 * have a combo command id: nobody needs its command ids any more.
 */
static bool
header_is_plain(HeapTupleHeader hdr, ItemPointer self, bool settle)
{
	uint16		natts = HeapTupleHeaderGetNatts(hdr);
	Size		bitmaplen = (hdr->t_infomask & HEAP_HASNULL) ?
		BITMAPLEN(natts) : 0;
	uint16		xminbits = hdr->t_infomask & HEAP_XMIN_FROZEN;
	uint16		allowed = DATA_INFOMASK | HEAP_XMAX_INVALID | HEAP_XMIN_FROZEN |
		(settle ? HEAP_COMBOCID : 0);

	if ((hdr->t_infomask & ~allowed) != 0 ||
		!(hdr->t_infomask & HEAP_XMAX_INVALID) ||
		(xminbits != 0 && xminbits != HEAP_XMIN_FROZEN) ||
		(hdr->t_infomask2 & ~HEAP_NATTS_MASK) != 0 ||
		TransactionIdIsValid(HeapTupleHeaderGetRawXmax(hdr)) ||
		!ItemPointerEquals(&hdr->t_ctid, self) ||
		hdr->t_hoff != MAXALIGN(SizeofHeapTupleHeader + bitmaplen))
		return false;
	return xminbits == HEAP_XMIN_FROZEN ||
		TransactionIdIsNormal(HeapTupleHeaderGetRawXmin(hdr));
}

/* Build an item of form (compact or settled) from a plain header */
static char *
build_item(FtRowId rowid, uint8 form, HeapTupleHeader hdr, Size tuplen,
		   Size *len)
{
	uint16		info = info_of(hdr);
	Size		bitmaplen = info_bitmap_len(info);
	Size		datalen = tuplen - hdr->t_hoff;
	Size		hdrsz = form_header_size(form);
	char	   *item;
	char	   *p;

	*len = FRACTAM_ROWID_SIZE + hdrsz + bitmaplen + datalen;
	item = palloc(*len);
	fractam_rowid_key_form(rowid, form, item);
	if (form == FRACTAM_ITEM_COMPACT)
	{
		TransactionId xmin = HeapTupleHeaderGetRawXmin(hdr);
		CommandId	cmin = HeapTupleHeaderGetRawCommandId(hdr);

		if (HeapTupleHeaderXminFrozen(hdr))
			info |= FRACTAM_INFO_FROZEN;
		memcpy(item + FRACTAM_COMPACT_XMIN_OFF, &xmin, sizeof(xmin));
		memcpy(item + FRACTAM_COMPACT_CMIN_OFF, &cmin, sizeof(cmin));
	}
	memcpy(item + FRACTAM_INFO_OFF, &info, sizeof(info));
	p = item + FRACTAM_ROWID_SIZE + hdrsz;
	memcpy(p, hdr->t_bits, bitmaplen);
	memcpy(p + bitmaplen, (char *) hdr + hdr->t_hoff, datalen);
	return item;
}

/*
 * The tree item of a version (its header filled in, t_self its TID) under
 * row id rowid.  With compact_limit (fractam_compact_limit: 0 if the tree
 * takes only full versions), a version that needs no full header gets the
 * compact form, or the settled one if it is frozen already (COPY FREEZE, a
 * rewrite's versions visible to everyone), provided its full form is not
 * longer than compact_limit: a change expands it to that form.
 */
char *
fractam_version_item(FtRowId rowid, HeapTuple tup, Size compact_limit,
					 Size *len)
{
	char	   *item;
	bool		frozen = HeapTupleHeaderXminFrozen(tup->t_data);

	if (FRACTAM_ROWID_SIZE + tup->t_len <= compact_limit &&
		header_is_plain(tup->t_data, &tup->t_self, frozen))
		return build_item(rowid,
						  frozen ? FRACTAM_ITEM_SETTLED : FRACTAM_ITEM_COMPACT,
						  tup->t_data, tup->t_len, len);
	*len = FRACTAM_ROWID_SIZE + tup->t_len;
	item = palloc(*len);
	fractam_rowid_key(rowid, item);
	memcpy(item + FRACTAM_ROWID_SIZE, tup->t_data, tup->t_len);
	return item;
}

/*
 * The row version at rowid does not hold what its header says: in table rel
 * (NULL: not known here, as in redo's transforms).
 */
static void version_corrupted(Relation rel, FtRowId rowid,
							  const char *detail) pg_attribute_noreturn();

static void
version_corrupted(Relation rel, FtRowId rowid, const char *detail)
{
	BlockNumber blk = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
	unsigned	off = (unsigned) (rowid % FRACTAM_ROWS_PER_BLOCK + 1);

	if (rel)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("row version (%u,%u) of table \"%s\" is corrupted",
						blk, off, RelationGetRelationName(rel)),
				 errdetail_internal("%s", detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("row version (%u,%u) of a fractam table is corrupted",
					blk, off),
			 errdetail_internal("%s", detail)));
}

/* The header fields of a compact or settled version (not t_bits) */
void
fractam_decode_header(Relation rel, const char *item, HeapTupleHeader hdr)
{
	uint8		form = fractam_item_form(item);
	uint16		info = fractam_item_info(item);
	TransactionId xmin = FrozenTransactionId;
	CommandId	cmin = FirstCommandId;

	if (unlikely(form != FRACTAM_ITEM_COMPACT && form != FRACTAM_ITEM_SETTLED))
		version_corrupted(rel, fractam_item_rowid(item),
						  psprintf("Its header has unknown form %u.", form));
	memset(hdr, 0, SizeofHeapTupleHeader);
	hdr->t_infomask2 = info & FRACTAM_INFO_NATTS;
	hdr->t_infomask = HEAP_XMAX_INVALID | data_infomask[INFO_DATA_INDEX(info)];
	if (form == FRACTAM_ITEM_COMPACT)
	{
		memcpy(&xmin, item + FRACTAM_COMPACT_XMIN_OFF, sizeof(xmin));
		memcpy(&cmin, item + FRACTAM_COMPACT_CMIN_OFF, sizeof(cmin));
	}
	HeapTupleHeaderSetXmin(hdr, xmin);
	if (form == FRACTAM_ITEM_SETTLED || (info & FRACTAM_INFO_FROZEN))
		HeapTupleHeaderSetXminFrozen(hdr);
	HeapTupleHeaderSetCmin(hdr, cmin);
	HeapTupleHeaderSetXmax(hdr, InvalidTransactionId);
	fractam_rowid_tid(fractam_item_rowid(item), &hdr->t_ctid);
	hdr->t_hoff = info_hoff(info);
}

/* Bytes of the heap tuple a version item holds (t_len) */
Size
fractam_item_tuple_len(Relation rel, const char *item, Size len)
{
	uint8		form = fractam_item_form(item);
	uint16		info;
	Size		stored;

	if (form == FRACTAM_ITEM_FULL)
		return len - FRACTAM_ROWID_SIZE;
	if (unlikely(form != FRACTAM_ITEM_COMPACT && form != FRACTAM_ITEM_SETTLED))
		version_corrupted(rel, fractam_item_rowid(item),
						  psprintf("Its header has unknown form %u.", form));
	info = fractam_item_info(item);
	stored = FRACTAM_ROWID_SIZE + form_header_size(form) +
		info_bitmap_len(info);
	if (unlikely(len < stored))
		version_corrupted(rel, fractam_item_rowid(item),
						  psprintf("Its item of %zu bytes is too short for its header.",
								   len));
	return info_hoff(info) + (len - stored);
}

/*
 * The heap tuple of a version item, into dst (MAXALIGNed, of
 * fractam_item_tuple_len bytes): the item's bytes, or for the compact and
 * settled forms the decoded header and the data behind it.
 */
void
fractam_item_to_tuple(Relation rel, const char *item, Size len,
					  HeapTupleHeader dst)
{
	uint8		form = fractam_item_form(item);
	uint16		info;
	Size		bitmaplen;
	Size		hoff;
	const char *p;

	if (form == FRACTAM_ITEM_FULL)
	{
		memcpy(dst, item + FRACTAM_ROWID_SIZE, len - FRACTAM_ROWID_SIZE);
		return;
	}
	fractam_decode_header(rel, item, dst);
	info = fractam_item_info(item);
	bitmaplen = info_bitmap_len(info);
	hoff = dst->t_hoff;
	p = item + FRACTAM_ROWID_SIZE + form_header_size(form);
	memcpy(dst->t_bits, p, bitmaplen);
	/* the alignment padding after the bitmap, as heap_form_tuple leaves it */
	memset((char *) dst->t_bits + bitmaplen, 0,
		   hoff - SizeofHeapTupleHeader - bitmaplen);
	/* the caller sized dst with fractam_item_tuple_len, which checked len */
	memcpy((char *) dst + hoff, p + bitmaplen,
		   len - (p + bitmaplen - item));
}

/* The full form of a version item (palloc'd), for a change in place */
char *
fractam_item_expand(const char *item, Size len, Size *newlen)
{
	/* a transform, also in redo: no relation at hand */
	Size		tuplen = fractam_item_tuple_len(NULL, item, len);
	char	   *full = palloc(FRACTAM_ROWID_SIZE + tuplen);

	fractam_rowid_key(fractam_item_rowid(item), full);
	fractam_item_to_tuple(NULL, item, len,
						  (HeapTupleHeader) (full + FRACTAM_ROWID_SIZE));
	*newlen = FRACTAM_ROWID_SIZE + tuplen;
	return full;
}

/*
 * Is the version in item one that may settle: no xmax, not settled yet,
 * and inserted by a transaction that committed and is visible to every
 * snapshot (vistest)?  Sets *xmin to the inserter (for the recovery
 * conflict horizon: hot-standby snapshots that do not see it yet must not
 * read the row as frozen).
 */
bool
fractam_item_may_settle(const char *item, Size len, GlobalVisState *vistest,
						TransactionId *xmin)
{
	FractamHeaderCopy buf;
	HeapTupleHeader hdr;
	ItemPointerData self;
	TransactionId dead_after;

	if (fractam_item_is_deadset(item, len) ||
		fractam_item_form(item) == FRACTAM_ITEM_SETTLED)
		return false;
	hdr = fractam_item_header(NULL, item, &buf);
	fractam_rowid_tid(fractam_item_rowid(item), &self);
	if (!header_is_plain(hdr, &self, true))
		return false;
	/*
	 * A frozen xmin needs no conflict horizon (its freezing had one), and
	 * its raw xid may be older than 2^31 xids, which a comparison with the
	 * others would misread.
	 */
	*xmin = InvalidTransactionId;
	if (HeapTupleHeaderXminFrozen(hdr))
		return true;
	*xmin = HeapTupleHeaderGetRawXmin(hdr);
	return fractam_tuple_htsv(hdr, &dead_after) == HEAPTUPLE_LIVE &&
		GlobalVisTestIsRemovableXid(vistest, *xmin);
}

/* The settled form of a version that may settle (palloc'd) */
char *
fractam_item_settle(const char *item, Size len, Size *newlen)
{
	char	   *tup;
	HeapTupleHeader hdr;
	char	   *settled;

	if (fractam_item_form(item) == FRACTAM_ITEM_COMPACT)
	{
		/* the same bytes without xmin and cmin */
		uint16		info = fractam_item_info(item) & ~FRACTAM_INFO_FROZEN;
		Size		rest = len - FRACTAM_ROWID_SIZE - FRACTAM_COMPACT_HDRSZ;

		*newlen = FRACTAM_ROWID_SIZE + FRACTAM_SETTLED_HDRSZ + rest;
		settled = palloc(*newlen);
		fractam_rowid_key_form(fractam_item_rowid(item), FRACTAM_ITEM_SETTLED,
							   settled);
		memcpy(settled + FRACTAM_INFO_OFF, &info, sizeof(info));
		memcpy(settled + FRACTAM_ROWID_SIZE + FRACTAM_SETTLED_HDRSZ,
			   item + FRACTAM_ROWID_SIZE + FRACTAM_COMPACT_HDRSZ, rest);
		return settled;
	}
	Assert(fractam_item_form(item) == FRACTAM_ITEM_FULL);
	/* a full item's header is aligned in the page; copy for build_item */
	tup = palloc(len - FRACTAM_ROWID_SIZE);
	memcpy(tup, item + FRACTAM_ROWID_SIZE, len - FRACTAM_ROWID_SIZE);
	hdr = (HeapTupleHeader) tup;
	settled = build_item(fractam_item_rowid(item), FRACTAM_ITEM_SETTLED, hdr,
						 len - FRACTAM_ROWID_SIZE, newlen);
	pfree(tup);
	return settled;
}

/*
 * VACUUM's freezing of a compact version: the freeze bit of its info word
 * (the raw xmin stays, as heap's HEAP_XMIN_FROZEN keeps it).  True, with
 * patch filled in, if the version's xmin precedes freeze_limit (the caller
 * knows it is not dead, so that xmin committed).
 */
bool
fractam_item_freeze_patch(const char *item, TransactionId freeze_limit,
						  FtVacuumPatch *patch)
{
	uint16		info = fractam_item_info(item);
	TransactionId xmin;

	Assert(fractam_item_form(item) == FRACTAM_ITEM_COMPACT);
	memcpy(&xmin, item + FRACTAM_COMPACT_XMIN_OFF, sizeof(xmin));
	if ((info & FRACTAM_INFO_FROZEN) || !TransactionIdIsNormal(xmin) ||
		!TransactionIdPrecedes(xmin, freeze_limit))
		return false;
	info |= FRACTAM_INFO_FROZEN;
	patch->start = FRACTAM_INFO_OFF;
	patch->len = sizeof(info);
	memcpy(patch->bytes, &info, sizeof(info));
	return true;
}
