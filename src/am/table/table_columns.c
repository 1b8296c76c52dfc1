/*-------------------------------------------------------------------------
 *
 * table_columns.c
 *	  What the bytes of a row version item are, field by field, for the
 *	  column filter of compressed table parts (src/ft/ft_columns.c).
 *
 * The tree stores a compressed part of rows of one length column by
 * column, and asks the table, for the part's first row, which bytes are
 * integers, which are doubles and which are anything else.  The answer is
 * a hint (the filter checks every value, and gives back any bytes
 * exactly), so it only has to be right for the rows worth compressing
 * well: the item's row id (big-endian), the header's xids and command id,
 * then the data's fixed-width columns at heap's offsets, up to the first
 * null bitmap or variable-width column, after which the rest is bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "am/table/fractam_table.h"
#include "catalog/pg_type_d.h"

typedef struct FieldList
{
	FtRowField *fields;
	int			n;
	Size		at;				/* bytes of the item covered so far */
} FieldList;

/* the next width bytes as a field of kind; bytes after bytes merge */
static void
add_field(FieldList *fl, Size width, uint8 kind)
{
	while (width > 0)
	{
		FtRowField *last = fl->n > 0 ? &fl->fields[fl->n - 1] : NULL;
		Size		w;

		if (kind == FT_FIELD_BYTES && last && last->kind == FT_FIELD_BYTES &&
			last->width < PG_UINT16_MAX)
		{
			w = Min(width, (Size) (PG_UINT16_MAX - last->width));
			last->width += (uint16) w;
		}
		else
		{
			/* out of fields: the rest goes into the last one as bytes */
			if (fl->n == FT_MAX_ROW_FIELDS)
			{
				last->kind = FT_FIELD_BYTES;
				kind = FT_FIELD_BYTES;
				continue;
			}
			w = Min(width, (Size) PG_UINT16_MAX);
			fl->fields[fl->n].width = (uint16) w;
			fl->fields[fl->n].kind = kind;
			fl->n++;
		}
		width -= w;
		fl->at += w;
	}
}

/*
 * The data bytes of a version of natts attributes without nulls, from
 * item offset start on: the fixed-width attributes at heap's offsets
 * (relative to the data's start, which heap aligns), until a
 * variable-width one.
 */
static void
add_data_fields(FieldList *fl, TupleDesc desc, int natts, Size len)
{
	Size		start = fl->at;
	Size		off = 0;

	for (int i = 0; i < natts && i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Size		aligned;
		uint8		kind = FT_FIELD_BYTES;

		if (att->attlen <= 0)
			break;
		aligned = att_align_nominal(off, att->attalign);
		if (start + aligned + att->attlen > len)
			break;
		if (aligned > off)
			add_field(fl, aligned - off, FT_FIELD_BYTES);
		if (!att->attisdropped && att->attbyval)
			kind = (att->atttypid == FLOAT8OID) ? FT_FIELD_FLOAT8 :
				(att->atttypid == FLOAT4OID) ? FT_FIELD_BYTES : FT_FIELD_INT;
		add_field(fl, att->attlen, kind);
		off = aligned + att->attlen;
	}
}

/* FtTree.row_fields of a table (fractam_table_tree) */
int
fractam_row_fields(FtTree *tree, const char *item, Size len,
				   FtRowField *fields)
{
	TupleDesc	desc = RelationGetDescr(tree->rel);
	FieldList	fl;
	uint16		info = 0;
	int			natts;
	bool		nulls;

	fl.fields = fields;
	fl.n = 0;
	fl.at = 0;
	if (len <= FRACTAM_ROWID_SIZE + FRACTAM_SETTLED_HDRSZ)
		return 0;
	add_field(&fl, FRACTAM_ROWID_SIZE, FT_FIELD_INT_BE);
	switch (fractam_item_form(item))
	{
		case FRACTAM_ITEM_COMPACT:
			if (len < FRACTAM_ROWID_SIZE + FRACTAM_COMPACT_HDRSZ)
				return 0;
			memcpy(&info, item + FRACTAM_INFO_OFF, sizeof(info));
			add_field(&fl, sizeof(uint16), FT_FIELD_BYTES);
			add_field(&fl, sizeof(TransactionId), FT_FIELD_INT);	/* xmin */
			add_field(&fl, sizeof(CommandId), FT_FIELD_INT);	/* cmin */
			natts = info & FRACTAM_INFO_NATTS;
			nulls = (info & FRACTAM_INFO_HASNULL) != 0;
			break;
		case FRACTAM_ITEM_SETTLED:
			memcpy(&info, item + FRACTAM_INFO_OFF, sizeof(info));
			add_field(&fl, sizeof(uint16), FT_FIELD_BYTES);
			natts = info & FRACTAM_INFO_NATTS;
			nulls = (info & FRACTAM_INFO_HASNULL) != 0;
			break;
		case FRACTAM_ITEM_FULL:
			{
				HeapTupleHeaderData hdr;

				if (len < FRACTAM_ROWID_SIZE + SizeofHeapTupleHeader)
					return 0;	/* a dead set */
				memcpy(&hdr, item + FRACTAM_ROWID_SIZE, SizeofHeapTupleHeader);
				if (hdr.t_hoff < SizeofHeapTupleHeader ||
					FRACTAM_ROWID_SIZE + hdr.t_hoff > len)
					return 0;
				add_field(&fl, sizeof(TransactionId), FT_FIELD_INT);	/* xmin */
				add_field(&fl, sizeof(TransactionId), FT_FIELD_INT);	/* xmax */
				add_field(&fl, sizeof(CommandId), FT_FIELD_INT);	/* cid */
				add_field(&fl, hdr.t_hoff - offsetof(HeapTupleHeaderData, t_ctid),
						  FT_FIELD_BYTES);
				natts = HeapTupleHeaderGetNatts(&hdr);
				nulls = (hdr.t_infomask & HEAP_HASNULL) != 0;
			}
			break;
		default:
			return 0;
	}
	/* rows with nulls have their columns at offsets of their own */
	if (!nulls)
		add_data_fields(&fl, desc, natts, len);
	if (fl.at < len)
		add_field(&fl, len - fl.at, FT_FIELD_BYTES);
	Assert(fl.at == len);
	return fl.n;
}
