/*-------------------------------------------------------------------------
 *
 * index_attrs.h
 *	  Fetching the key columns of index entries for comparisons.
 *
 * Two things made comparing entries cost more than it must:
 *
 * - index_getattr finds a column after a variable-length one by walking the
 *   tuple from its first column (nocache_index_getattr), so comparing the
 *   columns of (link_type, id1, id2) in turn walked 1 + 2 + 3 columns per
 *   side.  A FractamAttrWalk keeps its place and fetches the columns in
 *   order, each once.
 *
 * - Index tuples store short variable-length values with a 1-byte header.
 *   Comparators that detoast their arguments in full (numeric's, through
 *   PG_GETARG_NUMERIC) then palloc a copy with a 4-byte header and free it,
 *   on every call.  fractam_unpack_short makes that copy once, in the
 *   caller's buffer; a short value is at most 127 bytes, so the buffer is
 *   small and fixed.  Comparators must accept either header, so the result
 *   is the same.
 *
 *-------------------------------------------------------------------------
 */
#ifndef INDEX_ATTRS_H
#define INDEX_ATTRS_H

#include "access/itup.h"
#include "access/tupdesc.h"
#include "access/tupmacs.h"

/* a short varlena with a 4-byte header instead of its 1-byte one */
#define FRACTAM_UNPACKED_SHORT_MAX	(VARATT_SHORT_MAX - VARHDRSZ_SHORT + VARHDRSZ)

typedef union FractamUnpackedShort
{
	int32		align;			/* VARSIZE reads a uint32 */
	char		data[FRACTAM_UNPACKED_SHORT_MAX];
} FractamUnpackedShort;

/*
 * value of a column whose attlen is attlen, with a 1-byte header replaced
 * by a 4-byte one (copied into buf) if it has one
 */
static pg_attribute_always_inline Datum
fractam_unpack_short(Datum value, bool isnull, int16 attlen,
					 FractamUnpackedShort *buf)
{
	char	   *p = DatumGetPointer(value);
	Size		datalen;

	if (isnull || attlen != -1 || !VARATT_IS_SHORT(p) || VARATT_IS_EXTERNAL(p))
		return value;
	datalen = VARSIZE_SHORT(p) - VARHDRSZ_SHORT;
	Assert(datalen + VARHDRSZ <= FRACTAM_UNPACKED_SHORT_MAX);
	SET_VARSIZE(buf->data, datalen + VARHDRSZ);
	memcpy(VARDATA(buf->data), VARDATA_SHORT(p), datalen);
	return PointerGetDatum(buf->data);
}

/*
 * The columns of one index tuple, fetched in order from the first by
 * fractam_attr_next (the layout rules are index_deform_tuple's: offsets
 * cached in the descriptor hold until the first null or variable-length
 * column).  fractam_attr_next's value may point into the walk (unpacked),
 * so it lives until the next call; fractam_attr_next_raw's points into the
 * tuple.
 */
typedef struct FractamAttrWalk
{
	TupleDesc	desc;
	char	   *data;			/* the tuple's data area */
	bits8	   *nulls;			/* its null bitmap, or NULL */
	int			attno;			/* the next column, from 0 */
	uint32		off;			/* where the next column's search starts */
	bool		slow;			/* cached offsets no longer apply */
	FractamUnpackedShort unpacked;
} FractamAttrWalk;

static pg_attribute_always_inline void
fractam_attr_walk(FractamAttrWalk *w, TupleDesc desc, IndexTuple tup)
{
	w->desc = desc;
	w->data = (char *) tup + IndexInfoFindDataOffset(tup->t_info);
	w->nulls = IndexTupleHasNulls(tup) ?
		(bits8 *) ((char *) tup + sizeof(IndexTupleData)) : NULL;
	w->attno = 0;
	w->off = 0;
	w->slow = false;
}

static pg_attribute_always_inline Datum
fractam_attr_next_raw(FractamAttrWalk *w, bool *isnull)
{
	Form_pg_attribute att = TupleDescAttr(w->desc, w->attno);
	Datum		value;

	Assert(w->attno < w->desc->natts);
	/* the common case, as index_getattr's: no nulls, a cached offset */
	if (likely(!w->slow && w->nulls == NULL && att->attcacheoff >= 0))
	{
		*isnull = false;
		value = fetchatt(att, w->data + att->attcacheoff);
		if (att->attlen > 0)
			w->off = att->attcacheoff + att->attlen;
		else
		{
			w->off = att_addlength_pointer(att->attcacheoff, att->attlen,
										   w->data + att->attcacheoff);
			w->slow = true;
		}
		w->attno++;
		return value;
	}
	if (w->nulls && att_isnull(w->attno, w->nulls))
	{
		w->attno++;
		w->slow = true;
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	if (!w->slow && att->attcacheoff >= 0)
		w->off = att->attcacheoff;
	else if (att->attlen == -1)
	{
		/*
		 * A varlena's offset can be cached only where no pad byte can
		 * precede it; after that the position depends on the values.
		 */
		if (!w->slow && w->off == att_align_nominal(w->off, att->attalign))
			att->attcacheoff = w->off;
		else
		{
			w->off = att_align_pointer(w->off, att->attalign, -1,
									   w->data + w->off);
			w->slow = true;
		}
	}
	else
	{
		w->off = att_align_nominal(w->off, att->attalign);
		if (!w->slow)
			att->attcacheoff = w->off;
	}
	value = fetchatt(att, w->data + w->off);
	w->off = att_addlength_pointer(w->off, att->attlen, w->data + w->off);
	if (att->attlen <= 0)
		w->slow = true;
	w->attno++;
	return value;
}

static pg_attribute_always_inline Datum
fractam_attr_next(FractamAttrWalk *w, bool *isnull)
{
	int16		attlen = TupleDescAttr(w->desc, w->attno)->attlen;
	Datum		value = fractam_attr_next_raw(w, isnull);

	return fractam_unpack_short(value, *isnull, attlen, &w->unpacked);
}

#endif							/* INDEX_ATTRS_H */
