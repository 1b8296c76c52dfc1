/*-------------------------------------------------------------------------
 *
 * table_build.c
 *	  Index builds over fractam tables, and table rewrites.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/relscan.h"
#include "access/xact.h"
#include "am/table/fractam_table.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "utils/tuplesort.h"
#include "miscadmin.h"
#include "utils/snapmgr.h"

/*
 * Feed every version an index must have to the index AM's callback: all
 * but those dead to everyone, as heap's build scan does (a version some
 * snapshot may still see must stay reachable through the new index).
 */
double
fractam_index_build_range_scan(Relation table_rel, Relation index_rel,
							   IndexInfo *index_info, bool allow_sync,
							   bool anyvisible, bool progress,
							   BlockNumber start_blockno,
							   BlockNumber numblocks,
							   IndexBuildCallback callback,
							   void *callback_state, TableScanDesc scan)
{
	EState	   *estate;
	ExprContext *econtext;
	ExprState  *predicate;
	TupleTableSlot *slot;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	double		reltuples = 0;
	FtRowId		lo = (FtRowId) start_blockno * FRACTAM_ROWS_PER_BLOCK;
	FtRowId		hi = numblocks == InvalidBlockNumber ? PG_UINT64_MAX :
		((FtRowId) start_blockno + numblocks) * FRACTAM_ROWS_PER_BLOCK;

	Snapshot	snapshot = NULL;

	fractam_flush_kept_rows_if(table_rel);
	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	if (scan == NULL)
	{
		/*
		 * CREATE INDEX CONCURRENTLY's first phase indexes what a fresh
		 * snapshot sees (validate_index adds the rest); otherwise every
		 * version that is not dead to everyone.
		 */
		if (index_info->ii_Concurrent)
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
		scan = table_beginscan_strat(table_rel,
									 snapshot ? snapshot : SnapshotAny,
									 0, NULL, true, false);
		/* a range of TID blocks (BRIN summarizes one at a time) */
		if (lo > 0 || hi < PG_UINT64_MAX)
			fractam_scan_set_rowid_range(scan, lo, hi - 1);
	}
	else
		Assert(scan->rs_snapshot == SnapshotAny ||
			   IsMVCCSnapshot(scan->rs_snapshot));

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		HeapTuple	tup = ((HeapTupleTableSlot *) slot)->tuple;
		FtRowId		rowid = fractam_tid_rowid(&tup->t_self);
		TransactionId dead_after;
		bool		alive;

		CHECK_FOR_INTERRUPTS();
		if (rowid < lo)
			continue;
		if (rowid >= hi)
			break;
		if (IsMVCCSnapshot(scan->rs_snapshot))
			alive = true;		/* the scan showed only visible versions */
		else
		{
			switch (fractam_tuple_htsv(tup->t_data, &dead_after))
			{
				case HEAPTUPLE_DEAD:
					continue;
				case HEAPTUPLE_RECENTLY_DEAD:
				case HEAPTUPLE_DELETE_IN_PROGRESS:
					alive = false;
					break;
				default:
					alive = true;
					break;
			}
		}
		if (alive)
			reltuples += 1;

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		callback(index_rel, &tup->t_self, values, isnull, alive,
				 callback_state);
	}

	table_endscan(scan);
	if (snapshot)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

/*
 * CREATE INDEX CONCURRENTLY's validation: every version the reference
 * snapshot sees whose TID the index does not have yet (state->tuplesort
 * holds the index's TIDs, sorted) is inserted.  Sequential scans return
 * versions in row-id order, which is TID order, so the two merge.
 */
void
fractam_index_validate_scan(Relation table_rel, Relation index_rel,
							IndexInfo *index_info, Snapshot snapshot,
							struct ValidateIndexState *state)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	ExprState  *predicate;
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	TableScanDesc scan;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	ItemPointerData indexcursor;
	bool		tuplesort_empty = false;

	fractam_flush_kept_rows_if(table_rel);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);
	ItemPointerSetInvalid(&indexcursor);

	scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, false);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		ItemPointer tid = &slot->tts_tid;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;

		/* advance the index's TIDs up to this one */
		while (!tuplesort_empty &&
			   (!ItemPointerIsValid(&indexcursor) ||
				ItemPointerCompare(&indexcursor, tid) < 0))
		{
			Datum		ts_val;
			bool		ts_isnull;

			tuplesort_empty = !tuplesort_getdatum(state->tuplesort, true,
												  &ts_val, &ts_isnull, NULL);
			Assert(tuplesort_empty || !ts_isnull);
			if (!tuplesort_empty)
			{
				itemptr_decode(&indexcursor, DatumGetInt64(ts_val));
				state->itups += 1;
			}
		}
		if (!tuplesort_empty && ItemPointerEquals(&indexcursor, tid))
			continue;			/* the index has it */

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		index_insert(index_rel, values, isnull, tid, table_rel,
					 index_info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, index_info);
		state->tups_inserted += 1;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
}

/* ---- VACUUM FULL and CLUSTER ---- */

/* The versions of a table in the order the rewrite writes them */
typedef struct RewriteSource
{
	Relation	rel;
	Relation	index;			/* CLUSTER through an index scan, or NULL */
	Tuplesortstate *sort;		/* CLUSTER through a sort, or NULL */
	TableScanDesc scan;
	IndexScanDesc iscan;
	TupleTableSlot *slot;
} RewriteSource;

static void
source_begin(RewriteSource *src, bool first)
{
	if (src->sort)
	{
		if (first)
		{
			TableScanDesc scan = table_beginscan(src->rel, SnapshotAny, 0, NULL);

			while (table_scan_getnextslot(scan, ForwardScanDirection, src->slot))
			{
				CHECK_FOR_INTERRUPTS();
				tuplesort_putheaptuple(src->sort,
									   ((HeapTupleTableSlot *) src->slot)->tuple);
			}
			table_endscan(scan);
			tuplesort_performsort(src->sort);
		}
		else
			tuplesort_rescan(src->sort);
	}
	else if (src->index)
	{
		src->iscan = index_beginscan(src->rel, src->index, SnapshotAny, 0, 0);
		index_rescan(src->iscan, NULL, 0, NULL, 0);
	}
	else
		src->scan = table_beginscan(src->rel, SnapshotAny, 0, NULL);
}

/* The next version (valid until the next call), or NULL */
static HeapTuple
source_next(RewriteSource *src)
{
	CHECK_FOR_INTERRUPTS();
	if (src->sort)
		return tuplesort_getheaptuple(src->sort, true);
	if (src->index)
		return index_getnext_slot(src->iscan, ForwardScanDirection, src->slot) ?
			((HeapTupleTableSlot *) src->slot)->tuple : NULL;
	return table_scan_getnextslot(src->scan, ForwardScanDirection, src->slot) ?
		((HeapTupleTableSlot *) src->slot)->tuple : NULL;
}

static void
source_end(RewriteSource *src)
{
	if (src->iscan)
		index_endscan(src->iscan);
	if (src->scan)
		table_endscan(src->scan);
	src->iscan = NULL;
	src->scan = NULL;
}

/* old row id -> new row id */
typedef struct RowIdMap
{
	FtRowId		oldid;
	FtRowId		newid;
} RowIdMap;

static int
rowidmap_cmp(const void *a, const void *b)
{
	FtRowId		x = ((const RowIdMap *) a)->oldid;
	FtRowId		y = ((const RowIdMap *) b)->oldid;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Does the rewrite keep this version?  (counts what it drops or keeps) */
static bool
version_survives(HeapTupleHeader hdr, TransactionId OldestXmin,
				 double *num_tuples, double *tups_vacuumed,
				 double *tups_recently_dead)
{
	TransactionId dead_after;

	switch (fractam_tuple_htsv(hdr, &dead_after))
	{
		case HEAPTUPLE_DEAD:
			*tups_vacuumed += 1;
			return false;
		case HEAPTUPLE_RECENTLY_DEAD:
			if (TransactionIdPrecedes(dead_after, OldestXmin))
			{
				*tups_vacuumed += 1;
				return false;
			}
			*tups_recently_dead += 1;
			return true;
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			*tups_recently_dead += 1;
			return true;
		default:
			*num_tuples += 1;
			return true;
	}
}

/*
 * Is the version one that every snapshot sees, with no xmax at all?  Its
 * xmin may be frozen: the rewrite holds AccessExclusiveLock, which hot
 * standbys replay too, so no query reads the table across the change (as
 * with heap's rewrite, which also freezes).
 */
static bool
visible_to_everyone(HeapTupleHeader hdr, TransactionId OldestXmin)
{
	TransactionId dead_after;

	if (!(hdr->t_infomask & HEAP_XMAX_INVALID) ||
		TransactionIdIsValid(HeapTupleHeaderGetRawXmax(hdr)) ||
		fractam_tuple_htsv(hdr, &dead_after) != HEAPTUPLE_LIVE)
		return false;
	return HeapTupleHeaderXminFrozen(hdr) ||
		TransactionIdPrecedes(HeapTupleHeaderGetRawXmin(hdr), OldestXmin);
}

/*
 * The version tup of OldTable formed again for NewTable, header and all,
 * as heap's rewrite does (reform_and_rewrite_tuple): attributes added
 * after it was stored (ADD COLUMN with a default) take their missing
 * values, and dropped columns become nulls.  The caller (finish_heap_swap)
 * then clears the missing values from the catalog, so no version may keep
 * fewer attributes than the table has.
 */
static HeapTuple
reform_version(HeapTuple tup, TupleDesc olddesc, TupleDesc newdesc,
			   Datum *values, bool *isnull)
{
	HeapTuple	copy;

	heap_deform_tuple(tup, olddesc, values, isnull);
	for (int i = 0; i < newdesc->natts; i++)
		if (TupleDescAttr(newdesc, i)->attisdropped)
			isnull[i] = true;
	copy = heap_form_tuple(newdesc, values, isnull);
	memcpy(&copy->t_data->t_choice.t_heap, &tup->t_data->t_choice.t_heap,
		   sizeof(HeapTupleFields));
	copy->t_data->t_infomask &= ~HEAP_XACT_MASK;
	copy->t_data->t_infomask |= tup->t_data->t_infomask & HEAP_XACT_MASK;
	copy->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	copy->t_data->t_infomask2 |= tup->t_data->t_infomask2 & HEAP2_XACT_MASK;
	copy->t_data->t_ctid = tup->t_data->t_ctid;
	copy->t_self = tup->t_self;
	copy->t_tableOid = tup->t_tableOid;
	return copy;
}

/*
 * Copy every version some snapshot may still see into NewTable, in row-id
 * order (VACUUM FULL) or the index's order (CLUSTER), numbering them from
 * the new file's first row id (0, unless a debug setting says otherwise).
 * Versions are frozen on the way as VACUUM freezes them (table_freeze.c,
 * with the caller's freeze limit);
 * links to the next version of an updated row are renumbered, or point to
 * the version itself when that next version is gone.  A first pass numbers
 * the survivors, the second writes them; those visible to everyone settle
 * (table_format.c).  relfrozenxid and relminmxid of
 * the new file are the oldest values it stores (or the cutoffs, if older).
 */
void
fractam_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
								  Relation OldIndex, bool use_sort,
								  TransactionId OldestXmin,
								  TransactionId *xid_cutoff,
								  MultiXactId *multi_cutoff,
								  double *num_tuples, double *tups_vacuumed,
								  double *tups_recently_dead)
{
	RewriteSource src;
	RowIdMap   *map;
	Size		nmap = 0;
	Size		maxmap = 1024;
	HeapTuple	tup;
	TransactionId minxid = *xid_cutoff;
	MultiXactId minmulti = *multi_cutoff;
	TransactionId freeze_limit = *xid_cutoff;
	double		dummy = 0;
	bool		sorted = true;
	FtTree		newtree;
	FtBuildState build;
	FtRowId		first;
	Size		written = 0;
	Size		compact_limit;
	TupleDesc	olddesc = RelationGetDescr(OldTable);
	TupleDesc	newdesc = RelationGetDescr(NewTable);
	Datum	   *values = palloc(sizeof(Datum) * newdesc->natts);
	bool	   *isnull = palloc(sizeof(bool) * newdesc->natts);

	Assert(olddesc->natts == newdesc->natts);
	fractam_flush_kept_rows_if(OldTable);
	memset(&src, 0, sizeof(src));
	src.rel = OldTable;
	src.slot = table_slot_create(OldTable, NULL);
	if (OldIndex != NULL && use_sort)
		src.sort = tuplesort_begin_cluster(RelationGetDescr(OldTable), OldIndex,
										   maintenance_work_mem, NULL,
										   TUPLESORT_RANDOMACCESS);
	else
		src.index = OldIndex;

	/* pass 1: which versions survive, and their new row ids */
	map = palloc(sizeof(RowIdMap) * maxmap);
	source_begin(&src, true);
	while ((tup = source_next(&src)) != NULL)
	{
		if (!version_survives(tup->t_data, OldestXmin, num_tuples,
							  tups_vacuumed, tups_recently_dead))
			continue;
		if (nmap >= maxmap)
		{
			maxmap *= 2;
			map = repalloc_huge(map, sizeof(RowIdMap) * maxmap);
		}
		map[nmap].oldid = fractam_tid_rowid(&tup->t_self);
		map[nmap].newid = nmap;
		if (nmap > 0 && map[nmap].oldid < map[nmap - 1].oldid)
			sorted = false;
		nmap++;
	}
	source_end(&src);
	if (!sorted)
		qsort(map, nmap, sizeof(RowIdMap), rowidmap_cmp);

	/*
	 * pass 2: load them bottom-up (ft_build.c), numbered from the new
	 * file's first row id.  Uncompressed leaves are filled to
	 * FRACTAM_REWRITE_FILLFACTOR: a version changed later is expanded to
	 * heap's header in its leaf, and a leaf of settled versions has no other
	 * room for that.  A table with a compression method gets compressed
	 * leaves, each decoding to at most FtFrameCapacity (the same room), so
	 * that VACUUM FULL and CLUSTER recompress a table whole.
	 */
	fractam_table_tree(NewTable, &newtree);
	newtree.fillfactor = FRACTAM_REWRITE_FILLFACTOR;
	compact_limit = fractam_compact_limit(NewTable);
	first = ft_meta_read_seq(&newtree);
	if (nmap > FRACTAM_ROWID_LIMIT - Min(first, FRACTAM_ROWID_LIMIT))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("table \"%s\" would use more than its %llu row ids",
						RelationGetRelationName(OldTable),
						(unsigned long long) FRACTAM_ROWID_LIMIT),
				 errdetail("The rewrite keeps %llu row versions, numbered from %llu.",
						   (unsigned long long) nmap, (unsigned long long) first)));
	fractam_warn_rowids_running_out(NewTable, first + nmap);
	build = ft_build_begin_empty(&newtree);
	source_begin(&src, false);
	while ((tup = source_next(&src)) != NULL)
	{
		HeapTupleHeader hdr = tup->t_data;
		RowIdMap	key;
		RowIdMap   *found;
		FtRowId		newid;
		HeapTuple	copy;
		HeapTuple	stored;
		FractamHeaderCopy frz;
		char	   *item;
		Size		itemlen;

		if (!version_survives(hdr, OldestXmin, &dummy, &dummy, &dummy))
			continue;
		key.oldid = fractam_tid_rowid(&tup->t_self);
		found = bsearch(&key, map, nmap, sizeof(RowIdMap), rowidmap_cmp);
		/* the second pass sees what the first saw, in the same order */
		if (found == NULL || found->newid != written)
			elog(ERROR, "table \"%s\" changed while it was rewritten",
				 RelationGetRelationName(OldTable));
		newid = first + found->newid;
		written++;

		copy = reform_version(tup, olddesc, newdesc, values, isnull);
		fractam_rowid_tid(newid, &copy->t_self);
		if (!(hdr->t_infomask & HEAP_XMAX_INVALID) &&
			!HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask) &&
			!HeapTupleHeaderIndicatesMovedPartitions(hdr) &&
			!ItemPointerEquals(&tup->t_self, &hdr->t_ctid) &&
			fractam_tid_is_valid(&hdr->t_ctid))
		{
			key.oldid = fractam_tid_rowid(&hdr->t_ctid);
			found = bsearch(&key, map, nmap, sizeof(RowIdMap), rowidmap_cmp);
			if (found)
				fractam_rowid_tid(first + found->newid, &copy->t_data->t_ctid);
			else
				copy->t_data->t_ctid = copy->t_self;
		}
		else if (!HeapTupleHeaderIndicatesMovedPartitions(hdr) &&
				 !HeapTupleHeaderIsSpeculative(hdr))
			copy->t_data->t_ctid = copy->t_self;
		if (fractam_freeze_header(freeze_limit, copy->t_data, &frz.hdr))
			memcpy(copy->t_data, &frz.hdr, SizeofHeapTupleHeader);
		/* a version visible to everyone settles (table_format.c) */
		if (visible_to_everyone(copy->t_data, OldestXmin))
			HeapTupleHeaderSetXminFrozen(copy->t_data);
		fractam_note_oldest(copy->t_data, &minxid, &minmulti);

		/* TOAST values move to the new table's TOAST relation */
		stored = copy;
		if (HeapTupleHasExternal(copy) || copy->t_len > TOAST_TUPLE_THRESHOLD)
			stored = heap_toast_insert_or_update(NewTable, copy, NULL,
												 HEAP_INSERT_SKIP_FSM |
												 HEAP_INSERT_NO_LOGICAL);
		item = fractam_version_item(newid, stored, compact_limit, &itemlen);
		ft_build_add(build, item, itemlen);
		pfree(item);
		if (stored != copy)
			heap_freetuple(stored);
		heap_freetuple(copy);
	}
	source_end(&src);
	ft_build_set_seq(build, first + nmap);
	ft_build_finish(build);
	if (src.sort)
		tuplesort_end(src.sort);
	ExecDropSingleTupleTableSlot(src.slot);
	pfree(map);
	pfree(values);
	pfree(isnull);

	*xid_cutoff = minxid;
	*multi_cutoff = minmulti;
}
