/*-------------------------------------------------------------------------
 *
 * table_xmax.c
 *	  Who holds a fractam row version: the members of its xmax, whether
 *	  they are in the way of a lock or change, and the xmax that results
 *	  when one more transaction locks, updates or deletes the version.
 *
 * A version's xmax is heap's: one transaction id with infomask bits that
 * say how it holds the version (a row lock of one of four strengths, a
 * non-key update, or a key update or delete), or a MultiXact of several
 * such members, at most one of them an updater.  Everything here works on
 * the list of members, so single xids and MultiXacts follow one set of
 * rules, heap's (heapam.c compute_new_xmax_infomask, DoesMultiXactIdConflict):
 *
 * - modes conflict as the row lock table says: FOR KEY SHARE lockers (every
 *   foreign-key check) may stay while another transaction updates the row
 *   without changing its key columns, and join a row whose non-key update
 *   runs or committed;
 * - a new holder keeps the other members that still matter: lockers still
 *   running, lockers of this transaction tree under other subtransaction
 *   ids (rolling back to a savepoint keeps them), and an updater that runs
 *   or committed; its own earlier lock under the same xid merges into the
 *   new entry (the stronger one);
 * - one member is written as a plain xid, more as a MultiXact.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "am/table/fractam_table.h"
#include "storage/procarray.h"

#define STATUS_IS_UPDATE(s)	((s) > MultiXactStatusForUpdate)

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

LockTupleMode
fractam_mode_of_status(MultiXactStatus status)
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
		case MultiXactStatusForUpdate:
		case MultiXactStatusUpdate:
			break;
	}
	return LockTupleExclusive;
}

MultiXactStatus
fractam_status_of_mode(LockTupleMode mode, bool is_update)
{
	switch (mode)
	{
		case LockTupleKeyShare:
			Assert(!is_update);
			return MultiXactStatusForKeyShare;
		case LockTupleShare:
			Assert(!is_update);
			return MultiXactStatusForShare;
		case LockTupleNoKeyExclusive:
			return is_update ? MultiXactStatusNoKeyUpdate :
				MultiXactStatusForNoKeyUpdate;
		case LockTupleExclusive:
			break;
	}
	return is_update ? MultiXactStatusUpdate : MultiXactStatusForUpdate;
}

/* How a single-xid xmax holds the version, from its infomask bits */
static MultiXactStatus
single_xmax_status(HeapTupleHeader hdr)
{
	uint16		infomask = hdr->t_infomask;
	bool		keys = (hdr->t_infomask2 & HEAP_KEYS_UPDATED) != 0;

	if (!HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		return keys ? MultiXactStatusUpdate : MultiXactStatusNoKeyUpdate;
	if (HEAP_XMAX_IS_KEYSHR_LOCKED(infomask))
		return MultiXactStatusForKeyShare;
	if (HEAP_XMAX_IS_SHR_LOCKED(infomask))
		return MultiXactStatusForShare;
	return keys ? MultiXactStatusForUpdate : MultiXactStatusForNoKeyUpdate;
}

/*
 * The members of the version's xmax (none when it has none); *members is
 * palloc'd when the result is positive.
 */
static int
xmax_members(HeapTupleHeader hdr, MultiXactMember **members)
{
	TransactionId xmax = HeapTupleHeaderGetRawXmax(hdr);
	int			n;

	*members = NULL;
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax))
		return 0;
	if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		n = GetMultiXactIdMembers(xmax, members, false,
								  HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask));
		return Max(n, 0);
	}
	*members = palloc(sizeof(MultiXactMember));
	(*members)[0].xid = xmax;
	(*members)[0].status = single_xmax_status(hdr);
	return 1;
}

/*
 * Which holders of the version are in the way of a lock or change of
 * strength mode by this transaction: the running transactions other than
 * this one whose hold conflicts (out->xids, palloc'd when any).  Also this
 * transaction tree's strongest row lock on it (out->own, -1 if none).
 */
void
fractam_holders(HeapTupleHeader hdr, LockTupleMode mode, FractamHolders *out)
{
	MultiXactMember *members;
	int			n = xmax_members(hdr, &members);
	int			i;

	out->nxids = 0;
	out->own = -1;
	out->xids = n > 0 ? palloc(sizeof(TransactionId) * n) : NULL;
	for (i = 0; i < n; i++)
	{
		LockTupleMode m = fractam_mode_of_status(members[i].status);

		if (TransactionIdIsCurrentTransactionId(members[i].xid))
		{
			if (!STATUS_IS_UPDATE(members[i].status))
				out->own = Max(out->own, (int) m);
		}
		else if (modes_conflict(m, mode) &&
				 TransactionIdIsInProgress(members[i].xid))
			out->xids[out->nxids++] = members[i].xid;
	}
	if (members)
		pfree(members);
}

/* The xmax and bits that write a list of members */
static void
members_xmax(MultiXactMember *members, int n, FractamXmax *out)
{
	int			strongest = -1;
	bool		keys = false;
	bool		update = false;
	int			i;

	out->infomask = 0;
	out->infomask2 = 0;
	if (n == 0)
	{
		out->xmax = InvalidTransactionId;
		out->infomask = HEAP_XMAX_INVALID;
		return;
	}
	for (i = 0; i < n; i++)
	{
		strongest = Max(strongest, (int) fractam_mode_of_status(members[i].status));
		if (members[i].status == MultiXactStatusForUpdate ||
			members[i].status == MultiXactStatusUpdate)
			keys = true;
		if (STATUS_IS_UPDATE(members[i].status))
			update = true;
	}
	if (keys)
		out->infomask2 = HEAP_KEYS_UPDATED;
	if (n == 1)
	{
		out->xmax = members[0].xid;
		/* a plain updater carries no lock bits */
		if (update)
			return;
	}
	else
	{
		MultiXactIdSetOldestMember();
		out->xmax = MultiXactIdCreateFromMembers(n, members);
		out->infomask = HEAP_XMAX_IS_MULTI;
	}
	if (!update)
		out->infomask |= HEAP_XMAX_LOCK_ONLY;
	switch ((LockTupleMode) strongest)
	{
		case LockTupleKeyShare:
			out->infomask |= HEAP_XMAX_KEYSHR_LOCK;
			break;
		case LockTupleShare:
			out->infomask |= HEAP_XMAX_SHR_LOCK;
			break;
		case LockTupleNoKeyExclusive:
		case LockTupleExclusive:
			out->infomask |= HEAP_XMAX_EXCL_LOCK;
			break;
	}
}

/*
 * The xmax of the version once xid (this transaction's current xid) holds
 * it with status, beside the members that stay (see the file header).
 * The caller has waited out every holder that conflicts.
 */
void
fractam_compose_xmax(HeapTupleHeader hdr, TransactionId xid,
					 MultiXactStatus status, FractamXmax *out)
{
	MultiXactMember *members;
	int			n = xmax_members(hdr, &members);
	MultiXactMember *keep = palloc(sizeof(MultiXactMember) * (n + 1));
	int			nkeep = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		TransactionId mxid = members[i].xid;
		MultiXactStatus mstatus = members[i].status;
		bool		stays;

		if (STATUS_IS_UPDATE(mstatus))
		{
			/* an aborted updater goes; a live one never meets another */
			stays = TransactionIdIsCurrentTransactionId(mxid) ||
				TransactionIdIsInProgress(mxid) ||
				TransactionIdDidCommit(mxid);
			Assert(!stays || !STATUS_IS_UPDATE(status));
		}
		else if (TransactionIdEquals(mxid, xid))
		{
			/*
			 * Our own earlier lock: the new entry takes its place, at the
			 * stronger of the two modes (a FOR UPDATE lock, e.g. ON
			 * CONFLICT's when the key columns are assigned, makes the
			 * update that follows a key update, as in heap).
			 */
			LockTupleMode m = Max(fractam_mode_of_status(mstatus),
								  fractam_mode_of_status(status));

			status = fractam_status_of_mode(m, STATUS_IS_UPDATE(status));
			stays = false;
		}
		else
			stays = TransactionIdIsCurrentTransactionId(mxid) ||
				TransactionIdIsInProgress(mxid);
		if (stays)
			keep[nkeep++] = members[i];
	}
	keep[nkeep].xid = xid;
	keep[nkeep].status = status;
	nkeep++;
	members_xmax(keep, nkeep, out);
	pfree(keep);
	if (members)
		pfree(members);
}

/*
 * The row locks an update carries from the old version to the new one, as
 * heap_update does: the FOR KEY SHARE locks of other running transactions
 * (the only ones a non-key update lets stay), and this transaction tree's
 * locks, except those under skip_xid (a lock the update itself took while
 * it toasted).  A single lock of our own carries over as FOR KEY SHARE.
 */
void
fractam_carried_locks(HeapTupleHeader hdr, TransactionId skip_xid,
					  FractamXmax *out)
{
	MultiXactMember *members;
	int			n = xmax_members(hdr, &members);
	int			nkeep = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		TransactionId mxid = members[i].xid;

		if (STATUS_IS_UPDATE(members[i].status) ||
			TransactionIdEquals(mxid, skip_xid))
			continue;
		if (!TransactionIdIsCurrentTransactionId(mxid) &&
			!TransactionIdIsInProgress(mxid))
			continue;
		members[nkeep++] = members[i];
	}
	if (nkeep == 1 && !(hdr->t_infomask & HEAP_XMAX_IS_MULTI))
		members[0].status = MultiXactStatusForKeyShare;
	members_xmax(members, nkeep, out);
	if (members)
		pfree(members);
}

/* Write a composed xmax into a version's header */
void
fractam_set_xmax(HeapTupleHeader hdr, const FractamXmax *x)
{
	hdr->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_MOVED);
	hdr->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	hdr->t_infomask |= x->infomask;
	hdr->t_infomask2 |= x->infomask2;
	HeapTupleHeaderSetXmax(hdr, x->xmax);
}

/*
 * The updater of a version, if any, whether it runs or ended (aborted
 * ones too: callers check), and whether it changed the row's key.
 */
TransactionId
fractam_updater(HeapTupleHeader hdr, bool *key_update)
{
	*key_update = (hdr->t_infomask2 & HEAP_KEYS_UPDATED) != 0;
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) ||
		!TransactionIdIsValid(HeapTupleHeaderGetRawXmax(hdr)) ||
		HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask))
		return InvalidTransactionId;
	return HeapTupleHeaderGetUpdateXid(hdr);
}
