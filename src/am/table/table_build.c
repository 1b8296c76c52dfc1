/*-------------------------------------------------------------------------
 *
 * table_build.c
 *	  Index builds over fractam tables, and table rewrites.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/xact.h"
#include "am/table/fractam_table.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "executor/executor.h"
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

	if (index_info->ii_Concurrent)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("CREATE INDEX CONCURRENTLY is not supported on fractam tables yet"),
				 errhint("Use CREATE INDEX without CONCURRENTLY, then drop the invalid index \"%s\".",
						 RelationGetRelationName(index_rel))));
	if (index_rel->rd_rel->relam == BRIN_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("BRIN indexes are not supported on fractam tables"),
				 errdetail("BRIN summarizes ranges of TID blocks, which in a fractam table are ranges of row ids, not pages.")));

	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	if (scan == NULL)
		scan = table_beginscan_strat(table_rel, SnapshotAny, 0, NULL, true,
									 false);
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
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

void
fractam_index_validate_scan(Relation table_rel, Relation index_rel,
							IndexInfo *index_info, Snapshot snapshot,
							struct ValidateIndexState *state)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("CREATE INDEX CONCURRENTLY is not supported on fractam tables yet")));
}

void
fractam_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
								  Relation OldIndex, bool use_sort,
								  TransactionId OldestXmin,
								  TransactionId *xid_cutoff,
								  MultiXactId *multi_cutoff,
								  double *num_tuples, double *tups_vacuumed,
								  double *tups_recently_dead)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("VACUUM FULL and CLUSTER are not supported on fractam tables yet")));
}
