/*-------------------------------------------------------------------------
 *
 * index_insert.c
 *	  aminsert, including unique checks.
 *
 * A plain insert is a blind write: the entry goes into the tree (as a
 * buffered message or directly into a cached leaf) without reading it.
 *
 * A unique check must see entries wherever they are, in leaves and in
 * buffered messages.  Concurrent inserters of the same key are serialized
 * by one of FRACTAM_UNIQUE_LOCKS striped LWLocks chosen by hash(index, key),
 * held across the check and the insertion of our entry and released before
 * any wait, as nbtree does with its leaf lock.  Holding it, nobody else can
 * add an entry with our key, so whatever the check saw stays true until our
 * entry is in.  The stripes are many (a collision of two different keys
 * costs one inserter a short wait) and held only for one index insert.
 *
 * First ft_insert_unique tries to check and insert in one descent: when
 * nothing is buffered above the key's leaf, the leaf alone holds every entry
 * with the key, next to where ours goes, so the tree inserts ours right away
 * if its neighbours have other keys (nearly always, for new keys).  Only if
 * that cannot decide (an entry with the key exists, or entries for the leaf
 * are still buffered) does check_unique search the tree for the key, which
 * merges leaves and buffered messages, and look up each entry found in the
 * table; then the entry is inserted by a plain ft_insert.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "am/index_search.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* this backend's unique-insert counters (fractam_unique_stats()) */
static FractamUniqueStats unique_stats;

void
fractam_get_unique_stats(FractamUniqueStats *stats)
{
	*stats = unique_stats;
}

static LWLock *
unique_lock_for(Relation index, FractamIndexState *state, IndexTuple itup)
{
	uint32		h = hash_uint32(RelationGetRelid(index));
	int			i;

	if (state->hashable)
	{
		for (i = 0; i < state->nkeyatts; i++)
		{
			bool		isnull;
			Datum		v = index_getattr(itup, i + 1, state->tupdesc, &isnull);

			Form_pg_attribute att = TupleDescAttr(state->tupdesc, i);

			if (isnull)
				continue;
			if (state->hash_image[i])
				h = hash_combine(h, datum_image_hash(v, att->attbyval, att->attlen));
			else
				h = hash_combine(h, DatumGetUInt32(FunctionCall1Coll(&state->hashproc[i],
																	 state->collation[i],
																	 v)));
		}
	}
	return &fractam_unique_locks()[h % FRACTAM_UNIQUE_LOCKS].lock;
}

typedef enum UniqueResult
{
	UNIQUE_OK,
	UNIQUE_CONFLICT,			/* a live conflicting row exists */
	UNIQUE_WAIT					/* a conflicting row's xact is in progress */
} UniqueResult;

/*
 * Look for live entries with the same key as itup.  Fills *xwait and
 * *spectoken when the caller must wait.
 */
static UniqueResult
check_unique(Relation index, Relation heap, IndexTuple itup,
			 IndexUniqueCheck checkUnique, TransactionId *xwait,
			 uint32 *spectoken, ItemPointer conflict_tid)
{
	FtTree		tree;
	FractamSearchCtx ctx;
	FractamSearchKey key;
	FtScan		scan;
	FractamIndexState *state;
	const char *item;
	Size		len;
	UniqueResult result = UNIQUE_OK;
	int			i;

	fractam_search_tree(index, &tree, &ctx);
	state = ctx.state;
	memset(&key, 0, sizeof(key));
	for (i = 0; i < state->nkeyatts; i++)
	{
		FractamSearchColumn *c = &key.col[i];
		int16		option = index->rd_indoption[i];

		c->attno = i + 1;
		c->cmp = index_getprocinfo(index, i + 1, FRACTAM_CMP_PROC);
		c->collation = index->rd_indcollation[i];
		c->arg = index_getattr(itup, i + 1, state->tupdesc, &c->isnull);
		c->desc = (option & INDOPTION_DESC) != 0;
		c->nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;
	}
	key.nprefix = state->nkeyatts;
	key.tail = -1;

	scan = ft_scan_begin(&tree);
	ctx.key = &key;
	ft_scan_seek(scan, (char *) &key, sizeof(key), true);
	ctx.key = NULL;

	while (ft_scan_next(scan, &item, &len))
	{
		IndexTuple	other = (IndexTuple) item;
		SnapshotData SnapshotDirty;
		bool		all_dead = false;
		ItemPointerData tid;

		if (fractam_compare_keys(state, other, itup) != 0)
			break;
		tid = other->t_tid;
		if (ItemPointerEquals(&tid, &itup->t_tid))
			continue;			/* our own entry (UNIQUE_CHECK_EXISTING) */

		InitDirtySnapshot(SnapshotDirty);
		if (table_index_fetch_tuple_check(heap, &tid, &SnapshotDirty, &all_dead))
		{
			TransactionId x = TransactionIdIsValid(SnapshotDirty.xmin) ?
			SnapshotDirty.xmin : SnapshotDirty.xmax;

			if (TransactionIdIsValid(x))
			{
				*xwait = x;
				*conflict_tid = tid;
				*spectoken = SnapshotDirty.speculativeToken;
				result = UNIQUE_WAIT;
				break;
			}

			/*
			 * A live conflicting row.  For deferred rechecks of a row that
			 * is itself dead (for example updated again in the same
			 * transaction), there is no conflict.
			 */
			if (checkUnique == UNIQUE_CHECK_EXISTING)
			{
				bool		dummy;

				if (!table_index_fetch_tuple_check(heap, &itup->t_tid,
												   SnapshotSelf, &dummy))
					continue;
			}
			*conflict_tid = tid;
			result = UNIQUE_CONFLICT;
			break;
		}
	}
	ft_scan_end(scan);
	return result;
}

static void
report_unique_violation(Relation index, Relation heap, IndexTuple itup)
{
	char	   *key = fractam_key_description(index, itup);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"%s\"",
					RelationGetRelationName(index)),
			 key ? errdetail("Key %s already exists.", key) : 0,
			 errtableconstraint(heap, RelationGetRelationName(index))));
}

/*
 * ft_insert (or, with unique, ft_insert_unique) with the entry deformed
 * once for all its comparisons.
 */
static bool
insert_entry(FtTree *tree, FractamIndexState *state, IndexTuple itup,
			 bool unique)
{
	bool		inserted = true;

	fractam_set_probe(state, itup);
	PG_TRY();
	{
		if (unique)
			inserted = ft_insert_unique(tree, (char *) itup, IndexTupleSize(itup),
										fractam_compare_item_keys);
		else
			ft_insert(tree, (char *) itup, IndexTupleSize(itup));
	}
	PG_FINALLY();
	{
		fractam_set_probe(state, NULL);
	}
	PG_END_TRY();
	return inserted;
}

bool
fractam_insert(Relation index, Datum *values, bool *isnull,
			   ItemPointer ht_ctid, Relation heapRel,
			   IndexUniqueCheck checkUnique, bool indexUnchanged,
			   IndexInfo *indexInfo)
{
	FtTree		tree;
	IndexTuple	itup;
	FractamIndexState *state;
	bool		result = true;
	bool		anynull = false;
	int			i;

	itup = index_form_tuple(RelationGetDescr(index), values, isnull);
	itup->t_tid = *ht_ctid;
	fractam_index_tree(index, &tree);
	state = (FractamIndexState *) tree.cmp_arg;
	ft_check_item_size(&tree, IndexTupleSize(itup));

	for (i = 0; i < state->nkeyatts; i++)
		if (isnull[i])
			anynull = true;

	if (checkUnique == UNIQUE_CHECK_NO ||
		(anynull && !indexInfo->ii_NullsNotDistinct))
	{
		if (checkUnique != UNIQUE_CHECK_EXISTING)
			insert_entry(&tree, state, itup, false);
		pfree(itup);
		return true;
	}

	for (;;)
	{
		LWLock	   *lock = unique_lock_for(index, state, itup);
		TransactionId xwait = InvalidTransactionId;
		uint32		spectoken = 0;
		ItemPointerData conflict;
		UniqueResult ur;

		LWLockAcquire(lock, LW_EXCLUSIVE);

		/*
		 * Usually the tree can tell on its way to the leaf that no entry
		 * with this key exists, and inserts ours at once: one descent, no
		 * separate search.
		 */
		if (checkUnique != UNIQUE_CHECK_EXISTING &&
			insert_entry(&tree, state, itup, true))
		{
			LWLockRelease(lock);
			unique_stats.in_descent++;
			break;
		}

		unique_stats.searched++;
		ur = check_unique(index, heapRel, itup, checkUnique, &xwait,
						  &spectoken, &conflict);
		if (ur == UNIQUE_WAIT && checkUnique != UNIQUE_CHECK_PARTIAL)
		{
			/* never wait while holding the lock */
			LWLockRelease(lock);
			unique_stats.waited++;
			if (spectoken)
				SpeculativeInsertionWait(xwait, spectoken);
			else
				XactLockTableWait(xwait, heapRel, &conflict, XLTW_InsertIndex);
			continue;
		}
		if (ur == UNIQUE_CONFLICT && checkUnique != UNIQUE_CHECK_PARTIAL)
		{
			LWLockRelease(lock);
			report_unique_violation(index, heapRel, itup);
		}
		if (ur != UNIQUE_OK)
			result = false;		/* PARTIAL: maybe not unique, recheck later */
		if (checkUnique != UNIQUE_CHECK_EXISTING)
			insert_entry(&tree, state, itup, false);
		LWLockRelease(lock);
		break;
	}
	pfree(itup);
	return result;
}
