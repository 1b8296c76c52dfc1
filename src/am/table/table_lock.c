/*-------------------------------------------------------------------------
 *
 * table_lock.c
 *	  Row locks on fractam tables: SELECT ... FOR UPDATE/NO KEY UPDATE/
 *	  SHARE/KEY SHARE, the locks of foreign keys and ON CONFLICT, and
 *	  EvalPlanQual's walk to the newest version of an updated row.
 *
 * A lock is a lock-only xmax written in place into the version's header,
 * as heap does: the locker's xid with the mode's infomask bits, or, when
 * holders of compatible strength overlap (two FOR KEY SHARE lockers of a
 * referenced row, or one beside a non-key update), a MultiXact of them
 * (table_xmax.c composes it).  A waiter first takes the heavyweight tuple
 * lock of the version, as heap_acquire_tuplock does, so that waiters queue
 * and the first in line gets the row when its holders end.  Nothing waits
 * while it holds a leaf.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/xact.h"
#include "am/table/fractam_table.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

/* the heavyweight lock mode of each row lock mode (heap's tupleLockExtraInfo) */
static const LOCKMODE tuplock_mode[] = {
	AccessShareLock,			/* LockTupleKeyShare */
	RowShareLock,				/* LockTupleShare */
	ExclusiveLock,				/* LockTupleNoKeyExclusive */
	AccessExclusiveLock			/* LockTupleExclusive */
};

/*
 * A conditional lock or wait that failed: SKIP LOCKED skips the row
 * (returns false), NOWAIT raises heap's error.
 */
static bool
not_acquired(Relation rel, LockWaitPolicy policy)
{
	Assert(policy != LockWaitBlock);
	if (policy == LockWaitError)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain lock on row in relation \"%s\"",
						RelationGetRelationName(rel))));
	return false;
}

/*
 * Take the heavyweight lock on the version's TID before waiting for its
 * holders, once per wait (*have tells).  Returns false for SKIP LOCKED
 * when another waiter has it; NOWAIT raises the row lock error.
 */
static bool
acquire_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
				LockWaitPolicy policy, bool *have)
{
	if (*have)
		return true;
	if (policy == LockWaitBlock)
	{
		ft_release_kept_pins(); /* never wait holding a scan's pin */
		LockTuple(rel, tid, tuplock_mode[mode]);
	}
	else if (!ConditionalLockTuple(rel, tid, tuplock_mode[mode]))
		return not_acquired(rel, policy);
	*have = true;
	return true;
}

void
fractam_release_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
						bool *have)
{
	if (*have)
		UnlockTuple(rel, tid, tuplock_mode[mode]);
	*have = false;
}

/*
 * Wait for the transactions in xids (the leaf released) as the wait policy
 * says.  Returns false for SKIP LOCKED when one still runs.
 */
static bool
wait_for(Relation rel, ItemPointer tid, TransactionId *xids, int nxids,
		 LockWaitPolicy policy, XLTW_Oper oper)
{
	int			i;

	for (i = 0; i < nxids; i++)
	{
		if (policy == LockWaitBlock)
		{
			ft_release_kept_pins();
			XactLockTableWait(xids[i], rel, tid, oper);
		}
		else if (!ConditionalXactLockTableWait(xids[i]))
			return not_acquired(rel, policy);
	}
	return true;
}

/*
 * For updates and deletes (table_modify.c): the version's leaf is held and
 * holders (computed under it) are in the way.  Release the leaf, queue on
 * the tuple lock (unless this transaction holds the version too: heap
 * skips it then, to avoid a deadlock with the waiters), and wait for them;
 * the caller then finds the version again.  (The holders are not looked up
 * again here: one may have ended meanwhile, and the leaf must be released
 * whatever they do now.)
 */
void
fractam_wait_for_holders(Relation rel, ItemPointer tid, FtItemRef *ref,
						 FractamHolders *holders, LockTupleMode mode,
						 XLTW_Oper oper, bool *have_tuplock)
{
	Assert(holders->nxids > 0);
	ft_item_release(ref);
	if (holders->own < 0)
		acquire_tuplock(rel, tid, mode, LockWaitBlock, have_tuplock);
	wait_for(rel, tid, holders->xids, holders->nxids, LockWaitBlock, oper);
}

static void
fill_failure(HeapTupleHeader hdr, TM_Result result, TM_FailureData *tmfd)
{
	tmfd->ctid = hdr->t_ctid;
	tmfd->xmax = HeapTupleHeaderGetUpdateXid(hdr);
	tmfd->cmax = result == TM_SelfModified ?
		HeapTupleHeaderGetCmax(hdr) : InvalidCommandId;
}

/* Copy the version into slot */
static void
store_version(Relation rel, FtItemRef *ref, ItemPointer tid,
			  TupleTableSlot *slot)
{
	HeapTuple	copy;
	MemoryContext old = MemoryContextSwitchTo(slot->tts_mcxt);

	copy = fractam_item_copy(rel, ref->item, ref->len);
	Assert(ItemPointerEquals(&copy->t_self, tid));
	MemoryContextSwitchTo(old);
	ExecStoreHeapTuple(copy, slot, true);
}

/*
 * EvalPlanQual: from an updated version, the newest version of the row
 * that is not an uncommitted insertion of another transaction.  Returns
 * TM_Ok with *tid set to it, or why there is none.
 */
static TM_Result
find_last_version(Relation rel, ItemPointer tid, CommandId cid,
				  LockWaitPolicy policy, TM_FailureData *tmfd)
{
	TransactionId priorXmax = tmfd->xmax;
	ItemPointerData ctid = tmfd->ctid;
	SnapshotData dirty;

	InitDirtySnapshot(dirty);
	for (;;)
	{
		HeapTuple	tup;
		HeapTupleHeader hdr;

		if (ItemPointerIndicatesMovedPartitions(&ctid))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
		if (!fractam_tid_is_valid(&ctid) ||
			(tup = fractam_fetch_version(rel, fractam_tid_rowid(&ctid))) == NULL)
			return TM_Deleted;
		hdr = tup->t_data;
		if (!TransactionIdEquals(HeapTupleHeaderGetXmin(hdr), priorXmax))
		{
			/* the row id holds an unrelated version: the row is gone */
			heap_freetuple(tup);
			return TM_Deleted;
		}
		if (fractam_tuple_visible(hdr, &dirty))
		{
			if (TransactionIdIsValid(dirty.xmin))
			{
				/* its inserter still runs: wait, then look again */
				TransactionId xwait = dirty.xmin;

				heap_freetuple(tup);
				if (!wait_for(rel, &ctid, &xwait, 1, policy, XLTW_FetchUpdated))
					return TM_WouldBlock;
				continue;
			}

			/*
			 * The newest version is this transaction's, written by this
			 * command or a later one (a function it called): the caller
			 * ignores the row or raises an error, by tmfd->cmax.
			 */
			if (TransactionIdIsCurrentTransactionId(priorXmax) &&
				HeapTupleHeaderGetCmin(hdr) >= cid)
			{
				tmfd->xmax = priorXmax;
				tmfd->cmax = HeapTupleHeaderGetCmin(hdr);
				heap_freetuple(tup);
				return TM_SelfModified;
			}
			*tid = ctid;
			tmfd->traversed = true;
			heap_freetuple(tup);
			return TM_Ok;
		}
		/* deleted or updated again by a committed transaction */
		if (ItemPointerEquals(&ctid, &hdr->t_ctid))
		{
			heap_freetuple(tup);
			return TM_Deleted;
		}
		priorXmax = HeapTupleHeaderGetUpdateXid(hdr);
		ctid = hdr->t_ctid;
		heap_freetuple(tup);
	}
}

/*
 * A FOR KEY SHARE lock taken beside a non-key update (running or
 * committed) also locks the newer versions of the row, as heap's
 * heap_lock_updated_tuple does: deleting the row or changing its key in
 * one of them must wait for the locker (a foreign key's referencing row).
 * hdr is a copy of the locked version's header at tid; the walk ends at
 * the newest version, or where the chain breaks (an aborted or unrelated
 * version).  Returns TM_Ok, or TM_Updated/TM_Deleted when a committed
 * change of a newer version conflicts.
 */
static TM_Result
lock_update_chain(Relation rel, HeapTupleHeader hdr, ItemPointer tid,
				  TransactionId xid, LockTupleMode mode)
{
	bool		key_update;
	TransactionId priorXmax = fractam_updater(hdr, &key_update);
	ItemPointerData cur = hdr->t_ctid;
	MultiXactStatus status = fractam_status_of_mode(mode, false);

	if (ItemPointerEquals(&cur, tid))
		return TM_Ok;
	for (;;)
	{
		FtTree		tree;
		FtItemRef	ref;
		HeapTupleHeader vh;
		FractamHolders holders;
		FractamHeaderCopy h;
		FractamXmax x;
		TransactionId next;

		CHECK_FOR_INTERRUPTS();
		if (ItemPointerIndicatesMovedPartitions(&cur) ||
			!fractam_tid_is_valid(&cur))
			return TM_Ok;
		fractam_table_tree(rel, &tree);
		if (!fractam_find_version(&tree, fractam_tid_rowid(&cur),
								  BUFFER_LOCK_EXCLUSIVE, &ref))
			return TM_Ok;
		vh = fractam_item_tuple(ref.item);
		if (!TransactionIdEquals(HeapTupleHeaderGetXmin(vh), priorXmax) ||
			(!HeapTupleHeaderXminFrozen(vh) &&
			 TransactionIdDidAbort(HeapTupleHeaderGetXmin(vh))))
		{
			ft_item_release(&ref);
			return TM_Ok;
		}

		fractam_holders(vh, mode, &holders);
		if (holders.nxids > 0)
		{
			ft_item_release(&ref);
			wait_for(rel, &cur, holders.xids, holders.nxids, LockWaitBlock,
					 XLTW_LockUpdated);
			pfree(holders.xids);
			continue;			/* look at this version again */
		}
		if (holders.xids)
			pfree(holders.xids);

		next = fractam_updater(vh, &key_update);
		if (TransactionIdIsValid(next) &&
			!TransactionIdIsCurrentTransactionId(next) &&
			!TransactionIdIsInProgress(next) &&
			TransactionIdDidCommit(next) && key_update)
		{
			/* a committed key change or delete: the key is gone */
			TM_Result	res = ItemPointerEquals(&cur, &vh->t_ctid) ?
				TM_Deleted : TM_Updated;

			ft_item_release(&ref);
			return res;
		}
		if (!(TransactionIdIsValid(next) &&
			  TransactionIdIsCurrentTransactionId(next)))
		{
			memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
			fractam_compose_xmax(&h.hdr, xid, status, &x);
			fractam_set_xmax(&h.hdr, &x);
			fractam_vm_clear_frozen(rel, fractam_item_rowid(ref.item));
			ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data,
						  FRACTAM_PATCH_LEN);
		}

		/* on to the next version, if this one was updated and not aborted */
		vh = fractam_item_tuple(ref.item);
		if (!TransactionIdIsValid(next) ||
			ItemPointerIndicatesMovedPartitions(&vh->t_ctid) ||
			ItemPointerEquals(&cur, &vh->t_ctid) ||
			(!TransactionIdIsCurrentTransactionId(next) &&
			 !TransactionIdIsInProgress(next) &&
			 !TransactionIdDidCommit(next)))
		{
			ft_item_release(&ref);
			return TM_Ok;
		}
		priorXmax = next;
		cur = vh->t_ctid;
		ft_item_release(&ref);
	}
}

/*
 * The version at *cur cannot be locked (*result says why, tmfd is
 * filled).  With TUPLE_LOCK_FLAG_FIND_LAST_VERSION an update is followed
 * to the newest version: returns true with *cur set to it, which the
 * caller locks; the caller's TID follows too, as heap's does (the executor
 * retries its update there).  Otherwise returns false with the final
 * result.
 */
static bool
lock_failed(Relation rel, TM_Result *result, ItemPointer cur, CommandId cid,
			LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	if (*result != TM_Updated || !(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
		return false;
	*result = find_last_version(rel, cur, cid, wait_policy, tmfd);
	return *result == TM_Ok;
}

TM_Result
fractam_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
				   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				   LockWaitPolicy wait_policy, uint8 flags,
				   TM_FailureData *tmfd)
{
	TransactionId xid = GetCurrentTransactionId();
	ItemPointerData cur = *tid;
	bool		follow_updates = (flags & TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS) != 0;
	TransactionId followed = InvalidTransactionId;
	bool		have_tuplock = false;
	FtTree		tree;
	FtItemRef	ref;

	fractam_flush_kept_rows_if(rel);
	tmfd->traversed = false;
	/* a MultiXact may be needed: be counted before taking part in one */
	MultiXactIdSetOldestMember();

	for (;;)
	{
		HeapTupleHeader hdr;
		TM_Result	result;
		FractamHolders holders;
		FractamHeaderCopy h;
		FractamXmax x;
		TransactionId updater;
		bool		key_update;

		CHECK_FOR_INTERRUPTS();
		fractam_table_tree(rel, &tree);
		if (!fractam_tid_is_valid(&cur) ||
			!fractam_find_version(&tree, fractam_tid_rowid(&cur),
								  BUFFER_LOCK_EXCLUSIVE, &ref))
		{
			fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
			tmfd->ctid = cur;
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Deleted;
		}
		hdr = fractam_item_tuple(ref.item);
		result = fractam_tuple_satisfies_update(hdr, &cur, cid);
		updater = fractam_updater(hdr, &key_update);

		/*
		 * FOR KEY SHARE may lock a version whose non-key update committed
		 * (heap_lock_tuple does): the key it protects is still the row's.
		 */
		if (result == TM_Updated && mode == LockTupleKeyShare && !key_update)
			result = TM_BeingModified;
		if (result == TM_Updated || result == TM_Deleted ||
			result == TM_SelfModified || result == TM_Invisible)
		{
			fill_failure(hdr, result, tmfd);
			/* the caller looks at the version even then (xmin, for one) */
			store_version(rel, &ref, &cur, slot);
			ft_item_release(&ref);
			fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
			if (!lock_failed(rel, &result, &cur, cid, wait_policy, flags, tmfd))
				return result;
			*tid = cur;
			followed = InvalidTransactionId;
			continue;			/* lock the newest version */
		}

		/*
		 * (TM_Invisible, a version this command inserted, goes back to the
		 * caller as in heap: ON CONFLICT DO UPDATE then says the command
		 * cannot affect the row a second time.)
		 *
		 * TM_Ok or TM_BeingModified: who holds it, and does it conflict?
		 */
		fractam_holders(hdr, mode, &holders);
		if (holders.nxids == 0 && result == TM_BeingModified)
		{
			/*
			 * The holder that made it TM_BeingModified may have ended since:
			 * an updater that committed must not be joined.  Look again.
			 */
			TM_Result	again = fractam_tuple_satisfies_update(hdr, &cur, cid);

			if (again == TM_Updated && mode == LockTupleKeyShare &&
				!(hdr->t_infomask2 & HEAP_KEYS_UPDATED))
				again = TM_BeingModified;
			if (again != TM_BeingModified && again != TM_Ok)
			{
				if (holders.xids)
					pfree(holders.xids);
				ft_item_release(&ref);
				continue;
			}
		}
		if (holders.own >= (int) mode)
		{
			/* this transaction holds it at least as strongly already */
			if (holders.xids)
				pfree(holders.xids);
			store_version(rel, &ref, &cur, slot);
			ft_item_release(&ref);
			fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
			return TM_Ok;
		}
		if (holders.nxids > 0)
		{
			ft_item_release(&ref);
			if ((holders.own < 0 &&
				 !acquire_tuplock(rel, &cur, mode, wait_policy, &have_tuplock)) ||
				!wait_for(rel, &cur, holders.xids, holders.nxids, wait_policy,
						  XLTW_Lock))
			{
				pfree(holders.xids);
				fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
				tmfd->ctid = cur;
				tmfd->xmax = InvalidTransactionId;
				tmfd->cmax = InvalidCommandId;
				return TM_WouldBlock;
			}
			pfree(holders.xids);
			continue;			/* look again: it may be updated now */
		}
		if (holders.xids)
			pfree(holders.xids);

		/*
		 * Beside a non-key update that runs or committed, a FOR KEY SHARE
		 * lock also goes onto the newer versions (READ COMMITTED's
		 * LOCK_UPDATE_IN_PROGRESS), before this one is locked.
		 */
		if (mode == LockTupleKeyShare && follow_updates &&
			TransactionIdIsValid(updater) &&
			!TransactionIdEquals(updater, followed) &&
			!TransactionIdIsCurrentTransactionId(updater) &&
			(TransactionIdIsInProgress(updater) ||
			 TransactionIdDidCommit(updater)))
		{
			TM_Result	res;

			memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
			store_version(rel, &ref, &cur, slot);
			ft_item_release(&ref);
			res = lock_update_chain(rel, &h.hdr, &cur, xid, mode);
			if (res != TM_Ok)
			{
				fill_failure(&h.hdr, res, tmfd);
				fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
				if (!lock_failed(rel, &res, &cur, cid, wait_policy, flags, tmfd))
					return res;
				*tid = cur;
				followed = InvalidTransactionId;
				continue;		/* lock the newest version */
			}
			followed = updater;
			continue;			/* lock this version (it may have changed) */
		}

		memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
		fractam_compose_xmax(&h.hdr, xid, fractam_status_of_mode(mode, false),
							 &x);
		fractam_set_xmax(&h.hdr, &x);
		fractam_vm_clear_frozen(rel, fractam_item_rowid(ref.item));
		ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data,
					  FRACTAM_PATCH_LEN);
		store_version(rel, &ref, &cur, slot);
		ft_item_release(&ref);
		fractam_release_tuplock(rel, &cur, mode, &have_tuplock);
		return TM_Ok;
	}
}
