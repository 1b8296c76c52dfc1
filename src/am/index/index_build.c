/*-------------------------------------------------------------------------
 *
 * index_build.c
 *	  CREATE INDEX: sort the table's entries, then load the tree bottom-up.
 *
 * Entries are sorted with a tuplesort over (key columns..., heap TID) using
 * the ordering operators of the index's operator families, which is the
 * tree's order, and handed to ft_build in one pass: no per-row inserts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "am/index/fractam_index.h"
#include "catalog/index.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

typedef struct BuildState
{
	Relation	index;
	Tuplesortstate *sort;
	TupleTableSlot *slot;		/* virtual: input to the sort */
	TupleTableSlot *outslot;	/* minimal tuples out of the sort */
	TupleDesc	sortdesc;		/* index columns + tid + alive */
	int			natts;
	double		indtuples;
} BuildState;

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = (BuildState *) state;
	TupleTableSlot *slot = bs->slot;
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < bs->natts; i++)
	{
		slot->tts_values[i] = values[i];
		slot->tts_isnull[i] = isnull[i];
	}
	slot->tts_values[bs->natts] = PointerGetDatum(tid);
	slot->tts_isnull[bs->natts] = false;
	slot->tts_values[bs->natts + 1] = BoolGetDatum(tupleIsAlive);
	slot->tts_isnull[bs->natts + 1] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(bs->sort, slot);
	bs->indtuples += 1;
}

static void
report_duplicate(Relation heap, Relation index, IndexTuple itup)
{
	char	   *key = fractam_key_description(index, itup);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("could not create unique index \"%s\"",
					RelationGetRelationName(index)),
			 key ? errdetail("Key %s is duplicated.", key) :
			 errdetail("Duplicate keys exist."),
			 errtableconstraint(heap, RelationGetRelationName(index))));
}

IndexBuildResult *
fractam_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BuildState	bs;
	TupleDesc	itupdesc = RelationGetDescr(index);
	int			natts = IndexRelationGetNumberOfAttributes(index);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	AttrNumber	attNums[INDEX_MAX_KEYS + 1];
	Oid			sortOps[INDEX_MAX_KEYS + 1];
	Oid			sortColls[INDEX_MAX_KEYS + 1];
	bool		nullsFirst[INDEX_MAX_KEYS + 1];
	FtTree		tree;
	FtBuildState ftb;
	FractamIndexState *state;
	IndexTuple	prev = NULL;
	bool		group_alive = false;
	bool		check_unique = indexInfo->ii_Unique;
	double		reltuples;
	int			i;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	/* sort descriptor: the index's columns, then the TID, then "alive" */
	bs.sortdesc = CreateTemplateTupleDesc(natts + 2);
	for (i = 0; i < natts; i++)
		TupleDescCopyEntry(bs.sortdesc, i + 1, itupdesc, i + 1);
	TupleDescInitEntry(bs.sortdesc, natts + 1, "tid", TIDOID, -1, 0);
	TupleDescInitEntry(bs.sortdesc, natts + 2, "alive", BOOLOID, -1, 0);
	for (i = 0; i < nkeyatts; i++)
	{
		int16		option = index->rd_indoption[i];
		bool		desc = (option & INDOPTION_DESC) != 0;
		Oid			op = get_opfamily_member(index->rd_opfamily[i],
											 index->rd_opcintype[i],
											 index->rd_opcintype[i],
											 desc ? BTGreaterStrategyNumber :
											 BTLessStrategyNumber);

		if (!OidIsValid(op))
			elog(ERROR, "missing ordering operator for column %d of index \"%s\"",
				 i + 1, RelationGetRelationName(index));
		attNums[i] = i + 1;
		sortOps[i] = op;
		sortColls[i] = index->rd_indcollation[i];
		nullsFirst[i] = (option & INDOPTION_NULLS_FIRST) != 0;
	}
	attNums[nkeyatts] = natts + 1;
	sortOps[nkeyatts] = TIDLessOperator;
	sortColls[nkeyatts] = InvalidOid;
	nullsFirst[nkeyatts] = false;

	bs.index = index;
	bs.natts = natts;
	bs.indtuples = 0;
	bs.sort = tuplesort_begin_heap(bs.sortdesc, nkeyatts + 1, attNums,
								   sortOps, sortColls, nullsFirst,
								   maintenance_work_mem, NULL, TUPLESORT_NONE);
	bs.slot = MakeSingleTupleTableSlot(bs.sortdesc, &TTSOpsVirtual);
	bs.outslot = MakeSingleTupleTableSlot(bs.sortdesc, &TTSOpsMinimalTuple);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) &bs, NULL);
	tuplesort_performsort(bs.sort);

	fractam_index_tree(index, &tree);
	state = fractam_index_state(index);
	state->rootcache.valid = false;
	ftb = ft_build_begin(&tree);
	while (tuplesort_gettupleslot(bs.sort, true, false, bs.outslot, NULL))
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		bool		alive;
		bool		anynull = false;
		IndexTuple	itup;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(bs.outslot);
		for (i = 0; i < natts; i++)
		{
			values[i] = bs.outslot->tts_values[i];
			isnull[i] = bs.outslot->tts_isnull[i];
			if (i < nkeyatts && isnull[i])
				anynull = true;
		}
		alive = DatumGetBool(bs.outslot->tts_values[natts + 1]);
		itup = index_form_tuple(itupdesc, values, isnull);
		itup->t_tid = *((ItemPointer) DatumGetPointer(bs.outslot->tts_values[natts]));

		/* unique: two live entries with equal keys are a violation */
		if (check_unique && (!anynull || indexInfo->ii_NullsNotDistinct))
		{
			if (prev && fractam_compare_keys(state, prev, itup) == 0)
			{
				if (alive && group_alive)
					report_duplicate(heap, index, itup);
				group_alive = group_alive || alive;
			}
			else
				group_alive = alive;
		}
		ft_build_add(ftb, (char *) itup, IndexTupleSize(itup));
		if (prev)
			pfree(prev);
		prev = itup;
	}
	ft_build_finish(ftb);
	tuplesort_end(bs.sort);
	ExecDropSingleTupleTableSlot(bs.slot);
	ExecDropSingleTupleTableSlot(bs.outslot);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* Unlogged index: an empty tree in the init fork */
void
fractam_buildempty(Relation index)
{
	FtTree		tree;

	fractam_index_tree(index, &tree);
	fractam_index_state(index)->rootcache.valid = false;
	ft_init_tree(&tree, INIT_FORKNUM);
}
