/*-------------------------------------------------------------------------
 *
 * index_insert.c
 *	  aminsert, including unique checks.
 *
 * A plain insert is a blind write: the entry goes into the tree (as a
 * buffered message or directly into a cached leaf) without reading it.
 *
 * A unique check must see entries wherever they are, in leaves and in
 * buffered messages, and nobody may add an entry with the key between the
 * check and the insertion of ours.
 *
 * First ft_insert_unique tries to check and insert in one descent: when
 * nothing is buffered above the key's leaf, the leaf alone holds every entry
 * with the key, in one run next to where ours goes; the tree hands each of
 * them to accept_entry (a table lookup, under the leaf's lock, as nbtree
 * does) and inserts ours if none conflicts.  The leaf's lock, held from the
 * check to the insertion, serializes such inserters of one key, as nbtree's
 * does.  Only if that cannot decide (entries for the leaf are still
 * buffered, the run may go on in another leaf, or the leaf was full after
 * the check) does check_unique search the tree for the key, which merges
 * leaves and buffered messages, and look up each entry found in the table;
 * then the entry is inserted by a plain ft_insert.
 *
 * A search holds no leaf lock until its entry is in, so the inserters of a
 * key are also serialized by one of FRACTAM_UNIQUE_LOCKS striped LWLocks
 * chosen by hash(index, key): the one-descent insert takes it shared, the
 * search and its insertion exclusively, and every holder releases it before
 * any wait for a transaction.  Inserters that decide in their descent (the
 * usual case) thus never wait for each other on a stripe, even when one
 * keeps it across a leaf split or is descheduled holding it; with 16
 * inserters on 2 cores, exclusive stripes had them waiting a fifth of
 * their time.
 *
 * Entries the check finds whose rows are dead to everyone are removed on
 * the way (fractam_prune_entries), so that a row updated over and over does not
 * leave a growing run of entries for every later update to check.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "am/index/index_search.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* fractam.debug_unique_delay: microseconds (index_handler.c) */
int			fractam_debug_unique_delay = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static LWLockPadded *unique_locks = NULL;

static void
unique_locks_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestNamedLWLockTranche("fractam_unique", FRACTAM_UNIQUE_LOCKS);
}

/* At library load: ask for the lock stripes' shared memory */
void
fractam_unique_locks_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = unique_locks_shmem_request;
}

/*
 * Striped locks that serialize inserters of equal keys into a unique
 * index.
 */
static LWLockPadded *
fractam_unique_locks(void)
{
	if (unique_locks == NULL)
		unique_locks = GetNamedLWLockTranche("fractam_unique");
	return unique_locks;
}

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

	fractam_index_state_hash(index, state);
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

/* One unique check: the new entry, and what was found */
typedef struct UniqueCheck
{
	FractamPruneTarget target;	/* first: the prune callback's argument */
	IndexTuple	itup;			/* the entry being inserted */
	IndexUniqueCheck checkUnique;
	UniqueResult result;		/* the first entry that was not OK */
	TransactionId xwait;		/* UNIQUE_WAIT: the transaction */
	uint32		spectoken;		/* and its speculative insertion token */
	ItemPointerData conflict;	/* the conflicting row */
	bool		last_dead;		/* judge_entry: the entry's row is dead to
								 * every transaction */
	/* check_unique: copies of the entries found dead, in scan order */
	char	  **dead;
	Size	   *deadlens;
	int			ndead;
	int			maxdead;
} UniqueCheck;

/*
 * Judge one existing entry with the new entry's key: UNIQUE_OK if its row
 * is dead (or is the new entry's own row), else a conflict or a wait, which
 * is recorded in uc.
 */
static UniqueResult
judge_entry(UniqueCheck *uc, IndexTuple other)
{
	SnapshotData SnapshotDirty;
	bool		all_dead = false;
	ItemPointerData tid = other->t_tid;
	TransactionId x;

	uc->last_dead = false;
	if (ItemPointerEquals(&tid, &uc->itup->t_tid))
		return UNIQUE_OK;		/* our own entry (UNIQUE_CHECK_EXISTING) */

	InitDirtySnapshot(SnapshotDirty);
	if (!table_index_fetch_tuple_check(uc->target.heap, &tid, &SnapshotDirty, &all_dead))
	{
		uc->last_dead = all_dead;
		return UNIQUE_OK;
	}

	x = TransactionIdIsValid(SnapshotDirty.xmin) ?
		SnapshotDirty.xmin : SnapshotDirty.xmax;
	if (TransactionIdIsValid(x))
	{
		uc->xwait = x;
		uc->conflict = tid;
		uc->spectoken = SnapshotDirty.speculativeToken;
		uc->result = UNIQUE_WAIT;
		return UNIQUE_WAIT;
	}

	/*
	 * A live conflicting row.  For deferred rechecks of a row that is itself
	 * dead (for example updated again in the same transaction), there is no
	 * conflict.
	 */
	if (uc->checkUnique == UNIQUE_CHECK_EXISTING)
	{
		bool		dummy;

		if (!table_index_fetch_tuple_check(uc->target.heap, &uc->itup->t_tid,
										   SnapshotSelf, &dummy))
			return UNIQUE_OK;
	}
	uc->conflict = tid;
	uc->result = UNIQUE_CONFLICT;
	return UNIQUE_CONFLICT;
}

/*
 * The tree's callback (FtUniqueCheckFn) while it holds the leaf.
 * UNIQUE_CHECK_PARTIAL inserts anyway and reports "maybe not unique" (the
 * executor rechecks).  An entry whose row is dead to everyone is offered
 * for removal (fractam_prune_entries).
 */
static FtUniqueVerdict
accept_entry(void *arg, const char *item, Size len)
{
	UniqueCheck *uc = (UniqueCheck *) arg;

	if (judge_entry(uc, (IndexTuple) item) == UNIQUE_OK)
		return uc->last_dead ? FT_UNIQUE_ACCEPT_OBSOLETE : FT_UNIQUE_ACCEPT;
	return uc->checkUnique == UNIQUE_CHECK_PARTIAL ?
		FT_UNIQUE_ACCEPT : FT_UNIQUE_REFUSE;
}

/*
 * Search the tree for live entries with the new entry's key (leaves and
 * buffered messages); the result is in uc.
 */
static void
check_unique(Relation index, UniqueCheck *uc)
{
	FtTree		tree;
	FractamSearchCtx ctx;
	FractamSearchKey key;
	FtScan		scan;
	FractamIndexState *state;
	const char *item;
	Size		len;
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
		c->arg = index_getattr(uc->itup, i + 1, state->tupdesc, &c->isnull);
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

		if (fractam_compare_keys(state, other, uc->itup) != 0)
			break;
		if (judge_entry(uc, other) != UNIQUE_OK)
			break;
		if (uc->last_dead)
		{
			if (uc->ndead == uc->maxdead)
			{
				uc->maxdead = Max(16, uc->maxdead * 2);
				uc->dead = uc->dead ?
					repalloc(uc->dead, uc->maxdead * sizeof(char *)) :
					palloc(uc->maxdead * sizeof(char *));
				uc->deadlens = uc->deadlens ?
					repalloc(uc->deadlens, uc->maxdead * sizeof(Size)) :
					palloc(uc->maxdead * sizeof(Size));
			}
			uc->dead[uc->ndead] = palloc(len);
			memcpy(uc->dead[uc->ndead], item, len);
			uc->deadlens[uc->ndead] = len;
			uc->ndead++;
		}
	}
	ft_scan_end(scan);
}

/* Forget the entries check_unique found dead */
static void
forget_dead(UniqueCheck *uc)
{
	int			i;

	for (i = 0; i < uc->ndead; i++)
		pfree(uc->dead[i]);
	if (uc->dead)
	{
		pfree(uc->dead);
		pfree(uc->deadlens);
	}
	uc->dead = NULL;
	uc->deadlens = NULL;
	uc->ndead = uc->maxdead = 0;
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
 * ft_insert (or, with uc, ft_insert_unique) with the entry deformed once for
 * all its comparisons.
 */
static FtUniqueResult
insert_entry(FtTree *tree, FractamIndexState *state, IndexTuple itup,
			 UniqueCheck *uc)
{
	FtUniqueResult res = FT_UNIQUE_INSERTED;

	fractam_set_probe(state, itup);
	PG_TRY();
	{
		if (uc)
			res = ft_insert_unique(tree, (char *) itup, IndexTupleSize(itup),
								   fractam_compare_item_keys, accept_entry,
								   fractam_prune_entries, uc);
		else
			ft_insert(tree, (char *) itup, IndexTupleSize(itup));
	}
	PG_FINALLY();
	{
		fractam_set_probe(state, NULL);
	}
	PG_END_TRY();
	return res;
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
	FractamPruneTarget prune_target;
	bool		result = true;
	bool		anynull = false;
	int			i;

	itup = index_form_tuple(RelationGetDescr(index), values, isnull);
	itup->t_tid = *ht_ctid;
	fractam_index_tree(index, &tree);
	state = (FractamIndexState *) tree.cmp_arg;
	prune_target.heap = heapRel;
	prune_target.index = index;
	/* room for the entry and a little more, as ft_prune_leaf asks */
	prune_target.freespace = BLCKSZ / 16 + MAXALIGN(IndexTupleSize(itup));
	if (indexUnchanged)
	{
		/* version churn: a full leaf first drops dead rows' entries */
		tree.leaf_prune_hook = fractam_index_leaf_prune;
		tree.prune_arg = &prune_target;
	}
	ft_check_item_size(&tree, IndexTupleSize(itup));

	for (i = 0; i < state->nkeyatts; i++)
		if (isnull[i])
			anynull = true;

	if (checkUnique == UNIQUE_CHECK_NO ||
		(anynull && !indexInfo->ii_NullsNotDistinct))
	{
		if (checkUnique != UNIQUE_CHECK_EXISTING)
			insert_entry(&tree, state, itup, NULL);
		pfree(itup);
		return true;
	}

	for (;;)
	{
		LWLock	   *lock = unique_lock_for(index, state, itup);
		UniqueCheck uc;
		bool		searching = (checkUnique == UNIQUE_CHECK_EXISTING);

		uc.target.heap = heapRel;
		uc.target.index = index;
		uc.target.freespace = 0;
		uc.itup = itup;
		uc.checkUnique = checkUnique;
		uc.result = UNIQUE_OK;
		uc.xwait = InvalidTransactionId;
		uc.spectoken = 0;
		ItemPointerSetInvalid(&uc.conflict);
		uc.dead = NULL;
		uc.deadlens = NULL;
		uc.ndead = uc.maxdead = 0;

		/*
		 * Usually the tree decides on the insert's own descent, seeing every
		 * entry with this key next to where ours goes in its leaf (judged by
		 * accept_entry under the leaf's lock): one descent, no search.  The
		 * leaf's lock then serializes inserters of the key, so the stripe is
		 * only taken shared, to keep out a searching inserter of the key
		 * (below); inserters whose keys share a stripe do not wait for each
		 * other, even when one holds it across a split or is descheduled.
		 */
		if (!searching)
		{
			FtUniqueResult res;

			LWLockAcquire(lock, LW_SHARED);
			res = insert_entry(&tree, state, itup, &uc);
			if (res != FT_UNIQUE_UNDECIDED)
				unique_stats.in_descent++;
			if (res == FT_UNIQUE_INSERTED)
			{
				LWLockRelease(lock);
				if (uc.result != UNIQUE_OK)
					result = false; /* PARTIAL: maybe not unique */
				break;
			}
			if (res == FT_UNIQUE_UNDECIDED)
			{
				/* search, with the key's other inserters kept out */
				LWLockRelease(lock);
				uc.result = UNIQUE_OK;	/* forget what it saw */
				searching = true;
			}
		}

		/*
		 * Otherwise search for the key, then insert.  The check does not
		 * hold the leaf locked until the entry is in, so the stripe is held
		 * exclusively from before the search until after the insertion:
		 * nobody inserts an entry with the key meanwhile.
		 */
		if (searching)
		{
			LWLockAcquire(lock, LW_EXCLUSIVE);
			unique_stats.searched++;
			check_unique(index, &uc);
		}
		else
		{
			/* the descent refused: a conflict, or a row to wait for */
			Assert(checkUnique != UNIQUE_CHECK_PARTIAL);
			Assert(uc.result == UNIQUE_WAIT || uc.result == UNIQUE_CONFLICT);
		}
		if (uc.result == UNIQUE_WAIT && checkUnique != UNIQUE_CHECK_PARTIAL)
		{
			/* never wait while holding the lock */
			LWLockRelease(lock);
			forget_dead(&uc);
			unique_stats.waited++;
			ft_release_kept_pins(); /* nor a table scan's pin */
			if (uc.spectoken)
				SpeculativeInsertionWait(uc.xwait, uc.spectoken);
			else
				XactLockTableWait(uc.xwait, heapRel, &uc.conflict,
								  XLTW_InsertIndex);
			continue;
		}
		if (uc.result == UNIQUE_CONFLICT && checkUnique != UNIQUE_CHECK_PARTIAL)
		{
			LWLockRelease(lock);
			report_unique_violation(index, heapRel, itup);
		}
		if (uc.result != UNIQUE_OK)
			result = false;		/* PARTIAL: maybe not unique, recheck later */
		if (fractam_debug_unique_delay > 0)
			pg_usleep(fractam_debug_unique_delay);
		if (checkUnique != UNIQUE_CHECK_EXISTING)
			insert_entry(&tree, state, itup, NULL);

		/*
		 * The search's dead entries go now, or the key's run would stay too
		 * long for the descent to decide (and prune) until VACUUM.
		 */
		if (uc.ndead > 0)
			ft_prune_items(&tree, uc.dead, uc.deadlens, NULL, uc.ndead,
						   fractam_prune_entries, &uc.target);
		LWLockRelease(lock);
		forget_dead(&uc);
		break;
	}
	pfree(itup);
	return result;
}
