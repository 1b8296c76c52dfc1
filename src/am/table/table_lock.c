/*-------------------------------------------------------------------------
 *
 * table_lock.c
 *	  Row locks on fractam tables: SELECT ... FOR UPDATE/NO KEY UPDATE/
 *	  SHARE/KEY SHARE, the locks of foreign keys and ON CONFLICT, and
 *	  EvalPlanQual's walk to the newest version of an updated row.
 *
 * A lock is a lock-only xmax written in place into the version's header,
 * as heap does: the locker's xid with the mode's infomask bits, or, when
 * lockers of compatible strength overlap (two FOR KEY SHARE lockers of a
 * referenced row), a MultiXact of them.  Updates and deletes are stricter
 * than heap's yet: they wait for every other locker (heap lets a non-key
 * update proceed beside FOR KEY SHARE lockers), so a MultiXact never holds
 * an updater.  Nothing waits while it holds a leaf.
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

/* heap's conflict table of row lock modes (tupleLockExtraInfo) */
static bool
modes_conflict(LockTupleMode a, LockTupleMode b)
{
	static const bool conflicts[4][4] = {
		/* KeyShare, Share, NoKeyExclusive, Exclusive */
		{false, false, false, true},	/* KeyShare */
		{false, false, true, true}, /* Share */
		{false, true, true, true},	/* NoKeyExclusive */
		{true, true, true, true}	/* Exclusive */
	};

	return conflicts[a][b];
}

static LockTupleMode
mode_of_status(MultiXactStatus status)
{
	switch (status)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		default:
			return LockTupleExclusive;
	}
}

static MultiXactStatus
status_of_mode(LockTupleMode mode)
{
	switch (mode)
	{
		case LockTupleKeyShare:
			return MultiXactStatusForKeyShare;
		case LockTupleShare:
			return MultiXactStatusForShare;
		case LockTupleNoKeyExclusive:
			return MultiXactStatusForNoKeyUpdate;
		default:
			return MultiXactStatusForUpdate;
	}
}

/* The mode of a single-xid xmax (a lock, or a delete/update: Exclusive) */
static LockTupleMode
mode_of_xmax(HeapTupleHeader hdr)
{
	uint16		infomask = hdr->t_infomask;

	if (!HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		return LockTupleExclusive;
	if (hdr->t_infomask2 & HEAP_KEYS_UPDATED)
		return LockTupleExclusive;
	if (HEAP_XMAX_IS_EXCL_LOCKED(infomask))
		return LockTupleNoKeyExclusive;
	if (HEAP_XMAX_IS_SHR_LOCKED(infomask))
		return LockTupleShare;
	return LockTupleKeyShare;
}

/*
 * The running transactions other than this one whose hold on the version
 * (its xmax) conflicts with mode; *nxids of them in a palloc'd array.
 * Also tells this transaction's own strongest lock (*own, -1 if none) and
 * whether lockers that do not conflict run (*others_running).
 */
static TransactionId *
conflicting_holders(HeapTupleHeader hdr, LockTupleMode mode, int *nxids,
					int *own, bool *others_running)
{
	TransactionId xmax = HeapTupleHeaderGetRawXmax(hdr);
	TransactionId *xids;

	*nxids = 0;
	*own = -1;
	*others_running = false;
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax))
		return NULL;
	if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(xmax, &members, false, true);
		int			i;

		xids = palloc(sizeof(TransactionId) * Max(n, 1));
		for (i = 0; i < n; i++)
		{
			LockTupleMode m = mode_of_status(members[i].status);

			if (TransactionIdIsCurrentTransactionId(members[i].xid))
				*own = Max(*own, (int) m);
			else if (TransactionIdIsInProgress(members[i].xid))
			{
				if (modes_conflict(m, mode))
					xids[(*nxids)++] = members[i].xid;
				else
					*others_running = true;
			}
		}
		if (n > 0)
			pfree(members);
		return xids;
	}
	xids = palloc(sizeof(TransactionId));
	if (TransactionIdIsCurrentTransactionId(xmax))
	{
		if (HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask))
			*own = (int) mode_of_xmax(hdr);
	}
	else if (TransactionIdIsInProgress(xmax))
	{
		if (modes_conflict(mode_of_xmax(hdr), mode))
			xids[(*nxids)++] = xmax;
		else
			*others_running = true;
	}
	return xids;
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
		switch (policy)
		{
			case LockWaitBlock:
				XactLockTableWait(xids[i], rel, tid, oper);
				break;
			case LockWaitSkip:
				if (!ConditionalXactLockTableWait(xids[i]))
					return false;
				break;
			case LockWaitError:
				if (!ConditionalXactLockTableWait(xids[i]))
					ereport(ERROR,
							(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
							 errmsg("could not obtain lock on row in relation \"%s\"",
									RelationGetRelationName(rel))));
				break;
		}
	}
	return true;
}

/*
 * For updates and deletes (table_modify.c), with the version's leaf held:
 * does another running transaction lock or change it?
 */
bool
fractam_holders_conflict(HeapTupleHeader hdr)
{
	int			nxids;
	int			own;
	bool		others;
	TransactionId *xids = conflicting_holders(hdr, LockTupleExclusive,
											  &nxids, &own, &others);

	if (xids)
		pfree(xids);
	return nxids > 0;
}

/*
 * For updates and deletes (table_modify.c): with the version's leaf held,
 * is some other transaction's lock or change in the way?  Then release the
 * leaf, wait for it, and return true (the caller finds the version again).
 */
bool
fractam_wait_for_holders(Relation rel, ItemPointer tid, FtItemRef *ref,
						 XLTW_Oper oper)
{
	HeapTupleHeader hdr = fractam_item_tuple(ref->item);
	int			nxids;
	int			own;
	bool		others;
	TransactionId *xids = conflicting_holders(hdr, LockTupleExclusive,
											  &nxids, &own, &others);

	Assert(!others);
	if (nxids == 0)
	{
		if (xids)
			pfree(xids);
		return false;
	}
	ft_item_release(ref);
	wait_for(rel, tid, xids, nxids, LockWaitBlock, oper);
	pfree(xids);
	return true;
}

/*
 * The xmax a delete, update (status MultiXactStatusUpdate) or row lock by
 * this (sub)transaction writes when no other transaction holds the
 * version: its xid, or, when the version holds a lock of this transaction
 * tree under another xid (taken before a SAVEPOINT, or by a parent), a
 * MultiXact of that lock and the new one, so that rolling back to the
 * savepoint keeps the earlier lock (as heap does).  *ismulti tells which.
 */
TransactionId
fractam_own_xmax(HeapTupleHeader hdr, TransactionId xid,
				 MultiXactStatus status, bool *ismulti)
{
	TransactionId old = HeapTupleHeaderGetRawXmax(hdr);

	*ismulti = false;
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(old) ||
		!HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask))
		return xid;
	if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(old, &members, false, true);
		bool		keep = false;
		int			i;

		for (i = 0; i < n; i++)
			if (TransactionIdIsCurrentTransactionId(members[i].xid) &&
				!TransactionIdEquals(members[i].xid, xid))
				keep = true;
		if (n > 0)
			pfree(members);
		if (!keep)
			return xid;
		MultiXactIdSetOldestMember();
		*ismulti = true;
		return MultiXactIdExpand(old, xid, status);
	}
	if (!TransactionIdIsCurrentTransactionId(old) || TransactionIdEquals(old, xid))
		return xid;
	MultiXactIdSetOldestMember();
	*ismulti = true;
	return MultiXactIdCreate(old, status_of_mode(mode_of_xmax(hdr)),
							 xid, status);
}

/* Is the version locked by this transaction tree (any of its xids)? */
bool
fractam_locked_by_us(HeapTupleHeader hdr)
{
	TransactionId old = HeapTupleHeaderGetRawXmax(hdr);
	int			nxids;
	int			own;
	bool		others;
	TransactionId *xids;

	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(old) ||
		!HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask))
		return false;
	xids = conflicting_holders(hdr, LockTupleKeyShare, &nxids, &own, &others);
	if (xids)
		pfree(xids);
	return own >= 0;
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
		if (TransactionIdIsCurrentTransactionId(priorXmax) &&
			HeapTupleHeaderGetCmin(hdr) >= cid)
		{
			tmfd->xmax = priorXmax;
			tmfd->cmax = HeapTupleHeaderGetCmin(hdr);
			heap_freetuple(tup);
			return TM_SelfModified;
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

TM_Result
fractam_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
				   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				   LockWaitPolicy wait_policy, uint8 flags,
				   TM_FailureData *tmfd)
{
	TransactionId xid = GetCurrentTransactionId();
	ItemPointerData cur = *tid;
	FtTree		tree;
	FtItemRef	ref;
	char		key[FRACTAM_ROWID_SIZE];

	tmfd->traversed = false;
	/* a MultiXact may be needed: be counted before taking part in one */
	MultiXactIdSetOldestMember();

	for (;;)
	{
		HeapTupleHeader hdr;
		TM_Result	result;
		TransactionId *xids;
		int			nxids;
		int			own;
		bool		others;
		FractamHeaderCopy h;

		CHECK_FOR_INTERRUPTS();
		fractam_table_tree(rel, &tree);
		fractam_rowid_key(fractam_tid_rowid(&cur), key);
		if (!fractam_tid_is_valid(&cur) ||
			!ft_item_find(&tree, key, sizeof(key), BUFFER_LOCK_EXCLUSIVE, &ref))
		{
			tmfd->ctid = cur;
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Deleted;
		}
		hdr = fractam_item_tuple(ref.item);
		result = fractam_tuple_satisfies_update(hdr, &cur, cid);
		if (result == TM_Updated || result == TM_Deleted ||
			result == TM_SelfModified || result == TM_Invisible)
		{
			fill_failure(hdr, result, tmfd);
			/* the caller looks at the version even then (xmin, for one) */
			store_version(rel, &ref, &cur, slot);
			ft_item_release(&ref);
			if (result == TM_Updated &&
				(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
			{
				result = find_last_version(rel, &cur, cid, wait_policy, tmfd);
				if (result == TM_Ok)
				{
					/*
					 * The caller's TID follows to the newest version, as
					 * heap's does: the executor retries its update there.
					 */
					*tid = cur;
					continue;	/* lock the newest version */
				}
			}
			return result;
		}

		/*
		 * (TM_Invisible, a version this command inserted, goes back to the
		 * caller as in heap: ON CONFLICT DO UPDATE then says the command
		 * cannot affect the row a second time.)
		 *
		 * TM_Ok or TM_BeingModified: who holds it, and does it conflict?
		 */
		xids = conflicting_holders(hdr, mode, &nxids, &own, &others);
		if (nxids > 0)
		{
			ft_item_release(&ref);
			if (!wait_for(rel, &cur, xids, nxids, wait_policy, XLTW_Lock))
			{
				pfree(xids);
				tmfd->ctid = cur;
				tmfd->xmax = InvalidTransactionId;
				tmfd->cmax = InvalidCommandId;
				return TM_WouldBlock;
			}
			pfree(xids);
			continue;			/* look again: it may be updated now */
		}
		if (xids)
			pfree(xids);

		if (own >= (int) mode && !others)
		{
			/* this transaction holds it at least as strongly already */
			store_version(rel, &ref, &cur, slot);
			ft_item_release(&ref);
			return TM_Ok;
		}

		memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
		h.hdr.t_infomask &= ~HEAP_XMAX_BITS;
		h.hdr.t_infomask2 &= ~HEAP_KEYS_UPDATED;
		if (others)
		{
			/* compatible lockers still run: join them in a MultiXact */
			TransactionId oldxmax = HeapTupleHeaderGetRawXmax(hdr);
			MultiXactId multi;
			LockTupleMode strongest = mode;

			if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
			{
				MultiXactMember *members;
				int			n = GetMultiXactIdMembers(oldxmax, &members, false, true);
				int			i;

				for (i = 0; i < n; i++)
					if (TransactionIdIsInProgress(members[i].xid))
						strongest = Max(strongest, mode_of_status(members[i].status));
				if (n > 0)
					pfree(members);
				multi = MultiXactIdExpand(oldxmax, xid, status_of_mode(mode));
			}
			else
			{
				LockTupleMode oldmode = mode_of_xmax(hdr);

				strongest = Max(strongest, oldmode);
				multi = MultiXactIdCreate(oldxmax, status_of_mode(oldmode),
										  xid, status_of_mode(mode));
			}
			h.hdr.t_infomask |= HEAP_XMAX_IS_MULTI | HEAP_XMAX_LOCK_ONLY;
			mode = strongest;
			HeapTupleHeaderSetXmax(&h.hdr, multi);
		}
		else
		{
			/*
			 * Alone: our xid, at the stronger of the old and new modes, or
			 * a MultiXact with a lock our transaction took under another
			 * xid (before a SAVEPOINT), which must survive its rollback.
			 */
			bool		ismulti;
			TransactionId newxmax = fractam_own_xmax(hdr, xid,
													 status_of_mode(mode),
													 &ismulti);

			if (own > (int) mode)
				mode = (LockTupleMode) own;
			h.hdr.t_infomask |= HEAP_XMAX_LOCK_ONLY;
			if (ismulti)
				h.hdr.t_infomask |= HEAP_XMAX_IS_MULTI;
			HeapTupleHeaderSetXmax(&h.hdr, newxmax);
		}
		switch (mode)
		{
			case LockTupleKeyShare:
				h.hdr.t_infomask |= HEAP_XMAX_KEYSHR_LOCK;
				break;
			case LockTupleShare:
				h.hdr.t_infomask |= HEAP_XMAX_SHR_LOCK;
				break;
			case LockTupleNoKeyExclusive:
				h.hdr.t_infomask |= HEAP_XMAX_EXCL_LOCK;
				break;
			case LockTupleExclusive:
				h.hdr.t_infomask |= HEAP_XMAX_EXCL_LOCK;
				h.hdr.t_infomask2 |= HEAP_KEYS_UPDATED;
				break;
		}
		ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data,
					  FRACTAM_PATCH_LEN);
		store_version(rel, &ref, &cur, slot);
		ft_item_release(&ref);
		return TM_Ok;
	}
}
