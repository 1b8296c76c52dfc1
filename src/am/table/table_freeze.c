/*-------------------------------------------------------------------------
 *
 * table_freeze.c
 *	  Freezing a fractam table's row versions, and the xid horizons
 *	  (relfrozenxid, relminmxid) that what is stored allows.
 *
 * A version's header is heap's, so freezing follows heap's rules: an xmin
 * before the freeze limit is marked frozen (HEAP_XMIN_FROZEN; the raw xmin
 * stays, so the xmin system column shows it as heap's does), and an xmax
 * that no longer matters is cleared: a locker that ended, a MultiXact none
 * of whose members runs and whose updater (if any) aborted, an updater or
 * deleter that aborted.  VACUUM applies the result in place in the leaf
 * (table_vacuum.c); rewrites (VACUUM FULL, CLUSTER) write the frozen
 * header into the new file (table_build.c).  Afterwards the table's
 * relfrozenxid is the oldest xid still stored, never later, and its
 * relminmxid the oldest MultiXact.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "am/table/fractam_table.h"
#include "miscadmin.h"
#include "storage/procarray.h"

/*
 * Is xmax of a version that stays one that no longer matters?  A single
 * xid before the freeze limit has ended (the limit is at most the oldest
 * xmin of any running transaction): a locker's lock is gone, and an
 * updater that did not commit aborted.  A MultiXact of any age goes once
 * none of its members runs, unless its updater committed (a key-share
 * locker beside an update that aborted must not hold relfrozenxid back
 * until the MultiXact gets old).
 */
static bool
xmax_to_clear(TransactionId freeze_limit, HeapTupleHeader hdr)
{
	TransactionId xmax = HeapTupleHeaderGetRawXmax(hdr);
	bool		lock_only = HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask);

	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax))
		return false;
	if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		TransactionId upd;

		if (MultiXactIdIsRunning(xmax, lock_only))
			return false;
		if (lock_only)
			return true;
		upd = HeapTupleGetUpdateXid(hdr);
		return !TransactionIdIsValid(upd) ||
			(!TransactionIdIsInProgress(upd) && !TransactionIdDidCommit(upd));
	}
	if (!TransactionIdPrecedes(xmax, freeze_limit))
		return false;
	return lock_only || !TransactionIdDidCommit(xmax);
}

/*
 * Freeze the header of a version that stays (not dead to everyone, so an
 * xmin before the limit committed) into *frz, a copy of it of
 * SizeofHeapTupleHeader bytes.  True if anything changed.
 */
bool
fractam_freeze_header(TransactionId freeze_limit, HeapTupleHeader hdr,
					  HeapTupleHeader frz)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(hdr);
	bool		changed = false;

	memcpy(frz, hdr, SizeofHeapTupleHeader);
	if (!HeapTupleHeaderXminFrozen(hdr) && TransactionIdIsNormal(xmin) &&
		TransactionIdPrecedes(xmin, freeze_limit))
	{
		HeapTupleHeaderSetXminFrozen(frz);
		changed = true;
	}
	if (xmax_to_clear(freeze_limit, hdr))
	{
		frz->t_infomask &= ~HEAP_XMAX_BITS;
		frz->t_infomask |= HEAP_XMAX_INVALID;
		HeapTupleHeaderSetXmax(frz, InvalidTransactionId);
		frz->t_infomask2 &= ~(HEAP_HOT_UPDATED | HEAP_KEYS_UPDATED);
		changed = true;
	}
	return changed;
}

/* The oldest member xid of a MultiXact (InvalidTransactionId: none) */
static TransactionId
oldest_member(MultiXactId multi)
{
	MultiXactMember *members;
	TransactionId oldest = InvalidTransactionId;
	int			n = GetMultiXactIdMembers(multi, &members, false, false);
	int			i;

	for (i = 0; i < n; i++)
		if (TransactionIdIsNormal(members[i].xid) &&
			(!TransactionIdIsValid(oldest) ||
			 TransactionIdPrecedes(members[i].xid, oldest)))
			oldest = members[i].xid;
	if (n > 0)
		pfree(members);
	return oldest;
}

/*
 * Lower *minxid and *minmulti to the xids and MultiXact a version stores
 * (a frozen xmin and a cleared xmax do not count; every member of a
 * MultiXact does, as the MultiXact's members are read back by later
 * lock and visibility checks).
 */
void
fractam_note_oldest(HeapTupleHeader hdr, TransactionId *minxid,
					MultiXactId *minmulti)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(hdr);
	TransactionId xmax = HeapTupleHeaderGetRawXmax(hdr);

	if (!HeapTupleHeaderXminFrozen(hdr) && TransactionIdIsNormal(xmin) &&
		TransactionIdPrecedes(xmin, *minxid))
		*minxid = xmin;
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax))
		return;
	if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
	{
		TransactionId member = oldest_member(xmax);

		if (MultiXactIdPrecedes(xmax, *minmulti))
			*minmulti = xmax;
		if (TransactionIdIsValid(member) &&
			TransactionIdPrecedes(member, *minxid))
			*minxid = member;
	}
	else if (TransactionIdIsNormal(xmax) &&
			 TransactionIdPrecedes(xmax, *minxid))
		*minxid = xmax;
}

static void
report_older_than_frozen(Relation rel, const char *item, const char *what,
						 TransactionId xid, const char *field,
						 TransactionId limit)
{
	ItemPointerData tid;

	fractam_rowid_tid(fractam_item_rowid(item), &tid);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("row version (%u,%u) of table \"%s\" stores %s %u, older than its %s %u",
					ItemPointerGetBlockNumber(&tid),
					ItemPointerGetOffsetNumber(&tid),
					RelationGetRelationName(rel), what, xid, field, limit)));
}

/*
 * fractam_verify: no version stores an xid older than the table's
 * relfrozenxid, or a MultiXact older than its relminmxid (the commit log
 * and MultiXact SLRUs before them may be gone).
 */
void
fractam_verify_frozen(Relation rel)
{
	TransactionId frozenxid = rel->rd_rel->relfrozenxid;
	MultiXactId minmulti = rel->rd_rel->relminmxid;
	FtTree		tree;
	FtScan		scan;
	const char *item;
	Size		len;

	fractam_table_tree(rel, &tree);
	scan = ft_scan_begin(&tree);
	ft_scan_set_keep_pins(scan, false);
	ft_scan_seek(scan, NULL, 0, true);
	while (fractam_scan_next_version(scan, &item, &len))
	{
		FractamHeaderCopy hbuf;
		HeapTupleHeader hdr = fractam_item_header(rel, item, &hbuf);
		TransactionId xmin = HeapTupleHeaderGetRawXmin(hdr);
		TransactionId xmax = HeapTupleHeaderGetRawXmax(hdr);

		CHECK_FOR_INTERRUPTS();
		if (!HeapTupleHeaderXminFrozen(hdr) && TransactionIdIsNormal(xmin) &&
			TransactionIdPrecedes(xmin, frozenxid))
			report_older_than_frozen(rel, item, "xmin", xmin, "relfrozenxid",
									 frozenxid);
		if ((hdr->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax))
			continue;
		if (hdr->t_infomask & HEAP_XMAX_IS_MULTI)
		{
			TransactionId member;

			if (MultiXactIdIsValid(minmulti) &&
				MultiXactIdPrecedes(xmax, minmulti))
				report_older_than_frozen(rel, item, "MultiXact", xmax,
										 "relminmxid", minmulti);
			member = oldest_member(xmax);
			if (TransactionIdIsValid(member) &&
				TransactionIdPrecedes(member, frozenxid))
				report_older_than_frozen(rel, item, "MultiXact member xid",
										 member, "relfrozenxid", frozenxid);
		}
		else if (TransactionIdIsNormal(xmax) &&
				 TransactionIdPrecedes(xmax, frozenxid))
			report_older_than_frozen(rel, item, "xmax", xmax, "relfrozenxid",
									 frozenxid);
	}
	ft_scan_end(scan);
}
