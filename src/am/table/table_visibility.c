/*-------------------------------------------------------------------------
 *
 * table_visibility.c
 *	  Which row versions a snapshot sees, without hint bits.
 *
 * Row versions carry heap's header, but readers never write shared pages
 * (ARCHITECTURE §2.6), so nothing here sets a hint bit: the commit status
 * of xmin and xmax comes from the snapshot, the proc array and the commit
 * log every time (a leaf rewrite will later settle versions visible to
 * all).  The rules are heap's (heapam_visibility.c), written for a header
 * that may be a private copy.
 *
 * Row locks (table_lock.c) write a lock-only xmax: one transaction's xid,
 * or a MultiXact of several lockers.  A lock-only xmax never deletes.  An
 * update or delete writes its own xid, or a MultiXact of itself and the
 * holders that may stay (table_xmax.c): FOR KEY SHARE lockers beside a
 * non-key update, and locks of its own transaction tree under other
 * subtransaction ids, which rolling back the updating subtransaction keeps
 * (heap does the same).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/subtrans.h"
#include "access/transam.h"
#include "access/xact.h"
#include "am/fractam.h"
#include "am/table/fractam_table.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/combocid.h"
#include "utils/snapmgr.h"

/*
 * A backend-local cache of transactions known to have committed.  Without
 * hint bits every check of a version not yet settled asks the commit log
 * (a shared buffer lookup under an LWLock that all backends share), and
 * scans of recently changed rows check the same few thousand xids again
 * and again (a small table updated over and over holds a version per
 * update until VACUUM, and the versions it started with carry the xid of
 * the load that wrote them).  Commit is final, so a cached commit stays
 * true as long as its 32-bit xid names the same transaction.
 *
 * The cache has a base, a full (epoch-qualified) xid taken from RecentXmin
 * and checked whenever this backend's RecentXmin moves: once RecentXmin is
 * more than COMMITTED_CACHE_SPAN past base, the cache starts again from
 * it.  Only xids within COMMITTED_CACHE_BEHIND (2^30) of base, before or
 * after it, are cached (the window of TransactionIdPrecedes from
 * base - 2^30); others ask the commit log each time.  An xid x in that
 * window could name another transaction only once the next xid reaches
 * x + 2^32, at least base + 2^32 - COMMITTED_CACHE_BEHIND; the next xid
 * never gets 2^31 ahead of the oldest running xmin, so RecentXmin would be
 * more than 2^31 - COMMITTED_CACHE_BEHIND (2^30) past base by then, far
 * beyond COMMITTED_CACHE_SPAN: the cache has been reset long before.
 * Direct mapped: an xid can only be in the slot of its low bits.
 */
#define COMMITTED_CACHE_SIZE 4096
#define COMMITTED_CACHE_SPAN 100000000
#define COMMITTED_CACHE_BEHIND ((TransactionId) 1 << 30)

static TransactionId committed_cache[COMMITTED_CACHE_SIZE];
static FullTransactionId committed_cache_base = {InvalidTransactionId};
static TransactionId committed_cache_checked_xmin = InvalidTransactionId;
static TransactionId committed_cache_low = InvalidTransactionId;

static void
committed_cache_check_base(void)
{
	FullTransactionId xmin = fractam_full_xid(RecentXmin);

	if (!FullTransactionIdIsValid(committed_cache_base) ||
		FullTransactionIdPrecedes(xmin, committed_cache_base) ||
		U64FromFullTransactionId(xmin) -
		U64FromFullTransactionId(committed_cache_base) > COMMITTED_CACHE_SPAN)
	{
		memset(committed_cache, 0, sizeof(committed_cache));
		committed_cache_base = xmin;
		committed_cache_low = XidFromFullTransactionId(xmin) -
			COMMITTED_CACHE_BEHIND;
		/* the xids of the window never wrap onto the special ones */
		if (!TransactionIdIsNormal(committed_cache_low))
			committed_cache_low = FirstNormalTransactionId;
	}
	committed_cache_checked_xmin = RecentXmin;
}

static bool
xid_did_commit(TransactionId xid)
{
	TransactionId *slot;

	if (!TransactionIdIsNormal(xid) || !TransactionIdIsNormal(RecentXmin))
		return TransactionIdDidCommit(xid);
	if (RecentXmin != committed_cache_checked_xmin)
		committed_cache_check_base();
	if (TransactionIdPrecedes(xid, committed_cache_low))
		return TransactionIdDidCommit(xid);
	slot = &committed_cache[xid % COMMITTED_CACHE_SIZE];
	if (*slot == xid)
		return true;
	if (!TransactionIdDidCommit(xid))
		return false;
	*slot = xid;
	return true;
}

/* xmin committed or frozen: decided without a lookup */
static inline bool
xmin_frozen(HeapTupleHeader tup)
{
	return HeapTupleHeaderXminFrozen(tup);
}

/*
 * The transaction that deleted or updated the version, or
 * InvalidTransactionId if none did (no xmax, or only row locks).  A
 * MultiXact xmax that is not lock-only holds an updater beside lockers of
 * the same transaction tree (a subtransaction deleting a row its parent
 * locked keeps that lock, as heap does).
 */
static inline TransactionId
deleter_xid(HeapTupleHeader tup)
{
	if ((tup->t_infomask & HEAP_XMAX_INVALID) != 0 ||
		!TransactionIdIsValid(HeapTupleHeaderGetRawXmax(tup)) ||
		HEAP_XMAX_IS_LOCKED_ONLY(tup->t_infomask))
		return InvalidTransactionId;
	if (tup->t_infomask & HEAP_XMAX_IS_MULTI)
		return HeapTupleGetUpdateXid(tup);
	return HeapTupleHeaderGetRawXmax(tup);
}

/* no deleting xmax (none, or only a row lock) */
static inline bool
xmax_unset(HeapTupleHeader tup)
{
	return !TransactionIdIsValid(deleter_xid(tup));
}

/* super-deleted speculative insertions have no xmin */
static inline bool
xmin_killed(HeapTupleHeader tup)
{
	return !xmin_frozen(tup) &&
		!TransactionIdIsValid(HeapTupleHeaderGetRawXmin(tup));
}

static bool
visible_mvcc(HeapTupleHeader tup, Snapshot snapshot)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(tup);
	TransactionId xmax;

	if (xmin_killed(tup))
		return false;
	if (!xmin_frozen(tup))
	{
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (HeapTupleHeaderGetCmin(tup) >= snapshot->curcid)
				return false;	/* inserted after the scan started */
			if (xmax_unset(tup))
				return true;
			if (!TransactionIdIsCurrentTransactionId(deleter_xid(tup)))
				return true;	/* deleting subtransaction aborted */
			return HeapTupleHeaderGetCmax(tup) >= snapshot->curcid;
		}
		if (XidInMVCCSnapshot(xmin, snapshot))
			return false;
		if (!xid_did_commit(xmin))
			return false;		/* aborted or crashed */
	}

	/* xmin is visible: is the deletion? */
	if (xmax_unset(tup))
		return true;
	xmax = deleter_xid(tup);
	if (TransactionIdIsCurrentTransactionId(xmax))
		return HeapTupleHeaderGetCmax(tup) >= snapshot->curcid;
	if (XidInMVCCSnapshot(xmax, snapshot))
		return true;
	return !xid_did_commit(xmax);
}

/*
 * SnapshotSelf and SnapshotDirty: everything committed now, plus this
 * transaction's own changes; Dirty also sees other transactions' changes
 * in progress, and reports them in the snapshot (xmin, xmax,
 * speculativeToken) so that the caller can wait for them.
 */
static bool
visible_self_or_dirty(HeapTupleHeader tup, Snapshot snapshot, bool dirty)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(tup);
	TransactionId xmax;

	if (dirty)
	{
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}
	if (xmin_killed(tup))
		return false;
	if (!xmin_frozen(tup))
	{
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (xmax_unset(tup))
				return true;
			if (!TransactionIdIsCurrentTransactionId(deleter_xid(tup)))
				return true;	/* deleting subtransaction aborted */
			return false;
		}
		if (TransactionIdIsInProgress(xmin))
		{
			if (!dirty)
				return false;
			if (HeapTupleHeaderIsSpeculative(tup))
				snapshot->speculativeToken =
					HeapTupleHeaderGetSpeculativeToken(tup);
			snapshot->xmin = xmin;
			return true;
		}
		if (!xid_did_commit(xmin))
			return false;
	}

	if (xmax_unset(tup))
		return true;
	xmax = deleter_xid(tup);
	if (TransactionIdIsCurrentTransactionId(xmax))
		return false;
	if (TransactionIdIsInProgress(xmax))
	{
		if (dirty)
			snapshot->xmax = xmax;
		return true;
	}
	return !xid_did_commit(xmax);
}

/* SnapshotToast: TOAST rows are never updated; only aborted inserts hide */
static bool
visible_toast(HeapTupleHeader tup)
{
	return !xmin_killed(tup);
}

bool
fractam_tuple_visible(HeapTupleHeader tup, Snapshot snapshot)
{
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			return visible_mvcc(tup, snapshot);
		case SNAPSHOT_SELF:
			return visible_self_or_dirty(tup, snapshot, false);
		case SNAPSHOT_DIRTY:
			return visible_self_or_dirty(tup, snapshot, true);
		case SNAPSHOT_ANY:
			return true;
		case SNAPSHOT_TOAST:
			return visible_toast(tup);
		case SNAPSHOT_NON_VACUUMABLE:
			{
				TransactionId dead_after = InvalidTransactionId;
				HTSV_Result res = fractam_tuple_htsv(tup, &dead_after);

				if (res == HEAPTUPLE_RECENTLY_DEAD &&
					GlobalVisTestIsRemovableXid(snapshot->vistest, dead_after))
					res = HEAPTUPLE_DEAD;
				return res != HEAPTUPLE_DEAD;
			}
		case SNAPSHOT_HISTORIC_MVCC:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("logical decoding of fractam tables is not supported yet")));
	}
	return false;				/* keep compiler quiet */
}

/*
 * Heap's HeapTupleSatisfiesVacuumHorizon: the state of a version for
 * VACUUM, ANALYZE and index builds.  For RECENTLY_DEAD, *dead_after is the
 * xid whose horizon decides when it becomes DEAD.
 */
HTSV_Result
fractam_tuple_htsv(HeapTupleHeader tup, TransactionId *dead_after)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(tup);
	TransactionId xmax;

	*dead_after = InvalidTransactionId;
	if (xmin_killed(tup))
		return HEAPTUPLE_DEAD;
	if (!xmin_frozen(tup))
	{
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (xmax_unset(tup))
				return HEAPTUPLE_INSERT_IN_PROGRESS;
			if (TransactionIdIsCurrentTransactionId(deleter_xid(tup)))
				return HEAPTUPLE_DELETE_IN_PROGRESS;
			return HEAPTUPLE_INSERT_IN_PROGRESS;	/* deleter aborted */
		}
		if (TransactionIdIsInProgress(xmin))
			return HEAPTUPLE_INSERT_IN_PROGRESS;
		if (!xid_did_commit(xmin))
			return HEAPTUPLE_DEAD;	/* aborted or crashed */
	}
	if (xmax_unset(tup))
		return HEAPTUPLE_LIVE;
	xmax = deleter_xid(tup);
	if (TransactionIdIsCurrentTransactionId(xmax) ||
		TransactionIdIsInProgress(xmax))
		return HEAPTUPLE_DELETE_IN_PROGRESS;
	if (!xid_did_commit(xmax))
		return HEAPTUPLE_LIVE;	/* deleter aborted */
	*dead_after = xmax;
	return HEAPTUPLE_RECENTLY_DEAD;
}

/* Is the version dead to every transaction (index entries may go)? */
bool
fractam_tuple_surely_dead(HeapTupleHeader tup, GlobalVisState *vistest)
{
	TransactionId dead_after;
	HTSV_Result res = fractam_tuple_htsv(tup, &dead_after);

	if (res == HEAPTUPLE_DEAD)
		return true;
	return res == HEAPTUPLE_RECENTLY_DEAD &&
		GlobalVisTestIsRemovableXid(vistest, dead_after);
}

/*
 * A lock-only xmax is in the way only while a locker runs.  The caller
 * decides whether it conflicts (a MultiXact may hold only this
 * transaction, or lockers of compatible strength).
 */
static bool
lock_holder_runs(HeapTupleHeader tup)
{
	TransactionId xmax = HeapTupleHeaderGetRawXmax(tup);

	if ((tup->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax) ||
		!HEAP_XMAX_IS_LOCKED_ONLY(tup->t_infomask))
		return false;
	if (tup->t_infomask & HEAP_XMAX_IS_MULTI)
		return MultiXactIdIsRunning(xmax, true);
	return TransactionIdIsCurrentTransactionId(xmax) ||
		TransactionIdIsInProgress(xmax);
}

/*
 * Heap's HeapTupleSatisfiesUpdate: may this transaction (command curcid)
 * update or delete the version whose TID is self?  TM_BeingModified means another
 * transaction's change is in progress (its xid is the raw xmax).
 */
TM_Result
fractam_tuple_satisfies_update(HeapTupleHeader tup, ItemPointer self,
							   CommandId curcid)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(tup);
	TransactionId xmax;

	if (xmin_killed(tup))
		return TM_Invisible;
	if (!xmin_frozen(tup))
	{
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (HeapTupleHeaderGetCmin(tup) >= curcid)
				return TM_Invisible;	/* inserted after the scan started */
			if (xmax_unset(tup))
			{
				/*
				 * Row locks of other transactions carried over from the
				 * version this transaction updated are in the way too.
				 */
				return lock_holder_runs(tup) ? TM_BeingModified : TM_Ok;
			}
			if (!TransactionIdIsCurrentTransactionId(deleter_xid(tup)))
			{
				/* the deleting subtransaction aborted: lockers may remain */
				if ((tup->t_infomask & HEAP_XMAX_IS_MULTI) &&
					MultiXactIdIsRunning(HeapTupleHeaderGetRawXmax(tup), false))
					return TM_BeingModified;
				return TM_Ok;
			}
			return HeapTupleHeaderGetCmax(tup) >= curcid ?
				TM_SelfModified : TM_Invisible;
		}
		if (TransactionIdIsInProgress(xmin))
			return TM_Invisible;
		if (!xid_did_commit(xmin))
			return TM_Invisible;
	}
	if ((tup->t_infomask & HEAP_XMAX_INVALID) != 0 ||
		!TransactionIdIsValid(HeapTupleHeaderGetRawXmax(tup)))
		return TM_Ok;
	xmax = HeapTupleHeaderGetRawXmax(tup);
	if (HEAP_XMAX_IS_LOCKED_ONLY(tup->t_infomask))
		return lock_holder_runs(tup) ? TM_BeingModified : TM_Ok;
	if (tup->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		/* an updater with lockers: judge the updater, then the lockers */
		TransactionId upd = HeapTupleGetUpdateXid(tup);

		if (TransactionIdIsCurrentTransactionId(upd))
			return HeapTupleHeaderGetCmax(tup) >= curcid ?
				TM_SelfModified : TM_Invisible;
		if (TransactionIdIsInProgress(upd))
			return TM_BeingModified;
		if (!xid_did_commit(upd))
			return MultiXactIdIsRunning(xmax, false) ? TM_BeingModified : TM_Ok;
		return ItemPointerEquals(self, &tup->t_ctid) ? TM_Deleted : TM_Updated;
	}
	if (TransactionIdIsCurrentTransactionId(xmax))
		return HeapTupleHeaderGetCmax(tup) >= curcid ?
			TM_SelfModified : TM_Invisible;
	if (TransactionIdIsInProgress(xmax))
		return TM_BeingModified;
	if (!xid_did_commit(xmax))
		return TM_Ok;			/* deleter aborted */
	/* an update links to the next version (or to a moved partition) */
	return ItemPointerEquals(self, &tup->t_ctid) ? TM_Deleted : TM_Updated;
}

/*
 * Serializable transactions: reading a version written or deleted by a
 * concurrent serializable transaction is a rw-conflict out, as heap's
 * HeapCheckForSerializableConflictOut reports it (without the buffer: the
 * version's state comes from fractam_tuple_htsv).
 */
void
fractam_serializable_conflict_out(Relation rel, HeapTupleHeader tup,
								  bool visible, Snapshot snapshot)
{
	TransactionId xid;
	TransactionId dead_after;
	HTSV_Result res;

	if (!CheckForSerializableConflictOutNeeded(rel, snapshot))
		return;
	res = fractam_tuple_htsv(tup, &dead_after);
	if (res == HEAPTUPLE_RECENTLY_DEAD &&
		TransactionIdPrecedes(dead_after, TransactionXmin))
		res = HEAPTUPLE_DEAD;
	switch (res)
	{
		case HEAPTUPLE_LIVE:
			if (visible)
				return;
			xid = HeapTupleHeaderGetXmin(tup);
			break;
		case HEAPTUPLE_RECENTLY_DEAD:
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			xid = visible ? HeapTupleHeaderGetUpdateXid(tup) :
				HeapTupleHeaderGetXmin(tup);
			if (TransactionIdPrecedes(xid, TransactionXmin))
				return;
			break;
		case HEAPTUPLE_INSERT_IN_PROGRESS:
			xid = HeapTupleHeaderGetXmin(tup);
			break;
		default:
			return;
	}
	if (!TransactionIdIsValid(xid) ||
		TransactionIdEquals(xid, GetTopTransactionIdIfAny()))
		return;
	xid = SubTransGetTopmostTransaction(xid);
	if (TransactionIdPrecedes(xid, TransactionXmin))
		return;
	CheckForSerializableConflictOut(rel, xid, snapshot);
}
