/*-------------------------------------------------------------------------
 *
 * table_logical.c
 *	  Row changes of fractam tables for logical decoding.
 *
 * With wal_level = logical, every INSERT, UPDATE and DELETE of a row of a
 * logically logged fractam table (RelationIsLogicallyLogged: WAL-logged,
 * not a catalog) also writes an XLOG_FT_LOGICAL record with what heap's
 * records carry for decoding: the new version as stored (TOAST pointers
 * included: its TOAST chunks are heap inserts into the TOAST table,
 * decoded before it in the same transaction), and the old row's replica
 * identity.  src/wal/ft_decode.c turns the record into the reorder-buffer
 * change heap's decoder makes, so publications (also FOR ALL TABLES and
 * TABLES IN SCHEMA, which take fractam tables created later), pgoutput
 * subscriptions and test_decoding see fractam tables as they see heap
 * tables.
 *
 * The old row's identity follows heap: nothing for REPLICA IDENTITY
 * NOTHING; the whole old row for FULL; otherwise the identity key's
 * columns (the primary key, or the index named by USING INDEX), others
 * null, on DELETE always and on UPDATE only when a key column changes or
 * is stored out of line.  Values stored in the TOAST table are inlined,
 * since their chunks are not in the WAL of this transaction.
 *
 * The records are written with no buffer lock held (building the identity
 * may read the TOAST table); the callers copy what they need from the leaf
 * first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "am/table/fractam_table.h"
#include "catalog/catalog.h"
#include "catalog/pg_class.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "wal/ft_xlog.h"

/*
 * The columns of the replica identity key, when an UPDATE or DELETE of
 * this table logs them (NULL otherwise).  Call before any leaf is locked:
 * it may open the table's indexes.
 */
Bitmapset *
fractam_logical_identity_columns(Relation rel)
{
	if (!RelationIsLogicallyLogged(rel) ||
		rel->rd_rel->relreplident == REPLICA_IDENTITY_NOTHING ||
		rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
		return NULL;
	return RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
}

/*
 * The old row as logged: the whole row (FULL), or only the identity key's
 * columns (idattrs), out-of-line values inlined.  A palloc'd tuple, or
 * NULL when there is nothing to log.
 */
static HeapTuple
old_row_identity(Relation rel, HeapTuple oldtup, Bitmapset *idattrs)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	key;
	int			i;

	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
		return HeapTupleHasExternal(oldtup) ?
			toast_flatten_tuple(oldtup, desc) : heap_copytuple(oldtup);
	if (bms_is_empty(idattrs))
		return NULL;

	values = palloc(desc->natts * sizeof(Datum));
	nulls = palloc(desc->natts * sizeof(bool));
	heap_deform_tuple(oldtup, desc, values, nulls);
	for (i = 0; i < desc->natts; i++)
		if (!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs))
			nulls[i] = true;
	key = heap_form_tuple(desc, values, nulls);
	pfree(values);
	pfree(nulls);
	if (HeapTupleHasExternal(key))
	{
		HeapTuple	flat = toast_flatten_tuple(key, desc);

		heap_freetuple(key);
		key = flat;
	}
	return key;
}

void
fractam_log_insert(Relation rel, HeapTuple newtup)
{
	if (RelationIsLogicallyLogged(rel))
		ftxlog_logical(rel, FT_LOGICAL_INSERT, newtup, NULL);
}

/* INSERT ... ON CONFLICT: the speculative row, then its confirm or abort */
void
fractam_log_speculative(Relation rel, HeapTuple newtup)
{
	if (RelationIsLogicallyLogged(rel))
		ftxlog_logical(rel, FT_LOGICAL_SPEC_INSERT, newtup, NULL);
}

void
fractam_log_speculative_end(Relation rel, bool confirmed)
{
	if (RelationIsLogicallyLogged(rel))
		ftxlog_logical(rel, confirmed ? FT_LOGICAL_SPEC_CONFIRM :
					   FT_LOGICAL_SPEC_ABORT, NULL, NULL);
}

/*
 * oldtup is a copy of the old version taken under its leaf's lock (NULL
 * when the table logs no old rows: REPLICA IDENTITY NOTHING, or no key);
 * idattrs from fractam_logical_identity_columns.  newtup is the new row as the
 * statement made it (before TOAST), which is what heap compares the key
 * columns with; stored is the version as stored, which is logged.
 */
void
fractam_log_update(Relation rel, HeapTuple oldtup, HeapTuple newtup,
				   HeapTuple stored, Bitmapset *idattrs)
{
	HeapTuple	old = NULL;

	if (!RelationIsLogicallyLogged(rel))
		return;
	if (oldtup &&
		(rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL ||
		 !fractam_columns_intact(rel, idattrs, oldtup, newtup, true)))
		old = old_row_identity(rel, oldtup, idattrs);
	ftxlog_logical(rel, FT_LOGICAL_UPDATE, stored, old);
	if (old)
		heap_freetuple(old);
}

/* oldtup and idattrs as for fractam_log_update */
void
fractam_log_delete(Relation rel, HeapTuple oldtup, Bitmapset *idattrs)
{
	HeapTuple	old = NULL;

	if (!RelationIsLogicallyLogged(rel))
		return;
	if (oldtup)
		old = old_row_identity(rel, oldtup, idattrs);
	ftxlog_logical(rel, FT_LOGICAL_DELETE, NULL, old);
	if (old)
		heap_freetuple(old);
}
