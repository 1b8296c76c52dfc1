/*-------------------------------------------------------------------------
 *
 * table_vm.c
 *	  The visibility map of a fractam table.
 *
 * PostgreSQL's executor reads a table's visibility-map fork by TID block
 * (visibilitymap_get_status): an index-only scan skips the table for a TID
 * whose block is all-visible, a bitmap count(*) skips the block.  A fractam
 * table keeps that fork in PostgreSQL's layout, one bit pair per TID block
 * (a pseudo-block of FRACTAM_ROWS_PER_BLOCK row ids), but writes the bits
 * with its own WAL records (XLOG_FT_VM_SET / XLOG_FT_VM_CLEAR):
 * visibilitymap_set logs heap records that would touch a heap page.
 *
 * The rule that keeps the bits true is heap's, with the leaves of a
 * pseudo-block in the role of the heap page:
 *
 * - a writer clears the bits of the pseudo-block of a version while it
 *   holds the version's leaf exclusively, before its change: an insert in
 *   the tree's leaf_insert_hook (once per transaction and pseudo-block:
 *   its first version there keeps the bits clear, see the hook), a delete
 *   or update before the in-place patch of the old version; a row lock
 *   clears only ALL_FROZEN (its xmax is an xid a frozen pseudo-block must
 *   not hold), as heap's does;
 * - VACUUM sets the bit of a pseudo-block only while it holds every leaf
 *   that may hold the pseudo-block's row ids share-locked (ft_range_all),
 *   after checking that each version there is visible to every snapshot,
 *   and only after the indexes have lost their entries for the versions it
 *   removed; and ALL_FROZEN with it when each version is also frozen
 *   (frozen xmin, no xmax).  Leaves are locked before the map page,
 *   everywhere.  VACUUM skips the leaves of all-frozen pseudo-blocks
 *   (fractam_vm_range_frozen): they hold nothing to remove or freeze.
 *
 * A writer learns the map's size from its smgr cache, which another
 * backend's extension of the map leaves stale until it processes the
 * invalidation.  A map page added since (by VACUUM, or by another backend
 * handing out row ids, which extends an existing map to cover its new
 * range) is looked for in the file when the cache has no page for the
 * block.  A map with no pages at all is taken at the cache's word: before
 * VACUUM sets the first bit of a map that had no pages, it creates the page
 * and then waits for every transaction that may be writing to the table
 * (WaitForLockers, as CREATE INDEX CONCURRENTLY waits), so every writer
 * from then on has processed the invalidation (it waits whenever the map
 * holds no bit yet, also when a cancelled VACUUM left pages behind).  Row lockers (RowShareLock:
 * SELECT ... FOR UPDATE/SHARE, foreign-key checks) are not waited for, as
 * heap's VACUUM does not wait for them; instead a row lock, which must
 * clear ALL_FROZEN, does not trust a cached "no map" and looks at the
 * file.  A table gets its map when VACUUM first finds an all-visible
 * pseudo-block, as heap's does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/visibilitymap.h"
#include "am/table/fractam_table.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "wal/ft_vmpage.h"
#include "wal/ft_xlog.h"

/* map pages a row-id handout extends the map to, at most */
#define FRACTAM_VM_EAGER_PAGES	1024

/* The map's pages as this backend's smgr cache has them (after a lookup) */
static BlockNumber
cached_map_pages(Relation rel)
{
	return RelationGetSmgr(rel)->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM];
}

/* The map's pages, from the file */
static BlockNumber
map_pages(Relation rel)
{
	SMgrRelation smgr = RelationGetSmgr(rel);

	if (!smgrexists(smgr, VISIBILITYMAP_FORKNUM))
		return 0;
	return smgrnblocks(smgr, VISIBILITYMAP_FORKNUM);
}

/* Set (on) or clear flags of blk in the pinned map page, and log it */
static void
change_bits(Relation rel, Buffer vmbuf, BlockNumber blk, uint8 flags, bool on,
			TransactionId cutoff_xid)
{
	Page		page = BufferGetPage(vmbuf);

	LockBuffer(vmbuf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	if (ft_vm_page_change(page, blk, flags, on))
	{
		MarkBufferDirty(vmbuf);
		ftxlog_vm(rel, vmbuf, on ? XLOG_FT_VM_SET : XLOG_FT_VM_CLEAR, blk,
				  cutoff_xid, flags);
	}
	END_CRIT_SECTION();
	LockBuffer(vmbuf, BUFFER_LOCK_UNLOCK);
}

/*
 * Clear flags of the pseudo-block of rowid, if set (see the callers).
 * trust_empty: a cached "no map at all" is believed (writers, which the
 * first VACUUM waits for; see the file header).
 */
static void
clear_bits(Relation rel, FtRowId rowid, uint8 flags, bool trust_empty)
{
	BlockNumber blk = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
	Buffer		vmbuf = InvalidBuffer;
	uint8		status = visibilitymap_get_status(rel, blk, &vmbuf);

	/* no page for blk in the cache: a map with pages may have grown */
	if (!BufferIsValid(vmbuf) &&
		(cached_map_pages(rel) != 0 || !trust_empty) &&
		cached_map_pages(rel) != InvalidBlockNumber &&
		ft_vm_map_block(blk) < map_pages(rel))
		status = visibilitymap_get_status(rel, blk, &vmbuf);
	if ((status & flags) != 0)
		change_bits(rel, vmbuf, blk, flags, false, InvalidTransactionId);
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
}

/*
 * A version with this row id is about to be added, deleted or replaced;
 * the caller holds its leaf exclusively.  Its pseudo-block is no longer
 * all-visible (nor all-frozen).
 */
void
fractam_vm_clear(Relation rel, FtRowId rowid)
{
	clear_bits(rel, rowid, VISIBILITYMAP_VALID_BITS, true);
}

/*
 * A version with this row id is about to take a row lock (an xmax); the
 * caller holds its leaf exclusively.  Its pseudo-block is no longer
 * all-frozen; it stays all-visible, as a heap page does.  A locker may have
 * cached "no map" before the first VACUUM made one, and VACUUM does not
 * wait for lockers: a table without a map costs each lock a look at the
 * file.
 */
void
fractam_vm_clear_frozen(Relation rel, FtRowId rowid)
{
	clear_bits(rel, rowid, VISIBILITYMAP_ALL_FROZEN, false);
}

/*
 * The tree's leaf_insert_hook: a new version's pseudo-block.
 *
 * Once a transaction's own version is in a pseudo-block, VACUUM cannot set
 * its bits again until the transaction ends: it sets them only after
 * seeing every version there visible to all, under the leaves' locks.  So
 * the bits of the pseudo-block a backend is appending its transaction's
 * versions to are cleared once, not for each row: a look at the map page
 * per row cost 5 % of a bulk INSERT.  Only while the table AM stores a new
 * version of the current (sub)transaction (vm_own_xid), not when the tree
 * calls this for the replacement of a version someone else wrote: after a
 * row lock, say, the pseudo-block may be all-visible again.  A
 * subtransaction's abort removes its versions, and the next version is the
 * parent's, under another xid.
 */
void
fractam_vm_leaf_insert_hook(FtTree *tree, const char *item, Size len)
{
	FractamTableCache *cache = (FractamTableCache *) tree->owner;
	FtRowId		rowid = fractam_item_rowid(item);
	BlockNumber blk = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
	TransactionId xid;

	if (cache == NULL || !TransactionIdIsValid(cache->vm_own_xid) ||
		cache->vm_own_xid != GetCurrentTransactionIdIfAny())
	{
		fractam_vm_clear(tree->rel, rowid);
		return;
	}
	xid = cache->vm_own_xid;
	if (cache->vm_cleared_xid == xid && cache->vm_cleared_block == blk)
		return;
	fractam_vm_clear(tree->rel, rowid);
	cache->vm_cleared_xid = xid;
	cache->vm_cleared_block = blk;
}

/*
 * Row ids up to last_rowid were just handed out: let the map cover their
 * pseudo-block, so that writers find its page in their cache.
 */
void
fractam_vm_cover(Relation rel, FtRowId last_rowid)
{
	BlockNumber blk = (BlockNumber) (last_rowid / FRACTAM_ROWS_PER_BLOCK);
	Buffer		vmbuf = InvalidBuffer;

	(void) visibilitymap_get_status(rel, blk, &vmbuf);
	if (!BufferIsValid(vmbuf) && cached_map_pages(rel) != 0 &&
		ft_vm_map_block(blk) < FRACTAM_VM_EAGER_PAGES)
		visibilitymap_pin(rel, blk, &vmbuf);
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
}

/* ---- VACUUM ---- */

typedef struct VmSetState
{
	Relation	rel;
	bool		map_was_empty;	/* wait for writers before the first bit */
	TransactionId oldest_xmin;
	BlockNumber blk;
	Buffer		vmbuf;
	TransactionId cutoff_xid;	/* newest xmin in the pseudo-block */
	bool		all_frozen;		/* so far, every version is frozen */
	BufferAccessStrategy strategy;	/* VACUUM's ring, for the leaves */
} VmSetState;

/* Frozen: no xid left to look up (a frozen xmin, no xmax at all) */
static bool
version_frozen(HeapTupleHeader tup)
{
	return HeapTupleHeaderXminFrozen(tup) &&
		((tup->t_infomask & HEAP_XMAX_INVALID) ||
		 !TransactionIdIsValid(HeapTupleHeaderGetRawXmax(tup)));
}

/*
 * Is the version visible to every snapshot, now and later?  Also notes in
 * st->all_frozen whether it is frozen.
 */
static bool
visible_to_all(VmSetState *st, HeapTupleHeader tup)
{
	TransactionId dead_after;
	TransactionId xmin;

	/* (LIVE: no deleter, or one that aborted; row locks do not count) */
	if (fractam_tuple_htsv(tup, &dead_after) != HEAPTUPLE_LIVE)
		return false;
	if (!version_frozen(tup))
		st->all_frozen = false;
	if (HeapTupleHeaderXminFrozen(tup))
		return true;
	xmin = HeapTupleHeaderGetRawXmin(tup);
	if (!TransactionIdPrecedes(xmin, st->oldest_xmin))
		return false;
	if (!TransactionIdIsValid(st->cutoff_xid) ||
		TransactionIdFollows(xmin, st->cutoff_xid))
		st->cutoff_xid = xmin;
	return true;
}

static bool
check_version(void *arg, const char *item, Size len)
{
	FractamHeaderCopy hbuf;

	/* a dead set: index entries may still point to its row ids */
	if (fractam_item_is_deadset(item, len))
		return false;
	return visible_to_all((VmSetState *) arg,
						  fractam_item_header(((VmSetState *) arg)->rel, item, &hbuf));
}

static void
set_all_visible(void *arg)
{
	VmSetState *st = (VmSetState *) arg;

	change_bits(st->rel, st->vmbuf, st->blk,
				VISIBILITYMAP_ALL_VISIBLE |
				(st->all_frozen ? VISIBILITYMAP_ALL_FROZEN : 0),
				true, st->cutoff_xid);
}

/*
 * Set the bit of blk if all its versions are visible to all, and its
 * all-frozen bit if they are all frozen too (candidate: what the unlocked
 * read saw; checked again under the leaves' locks).
 */
static void
try_set(VmSetState *st, BlockNumber blk, bool frozen_candidate)
{
	char		lo[FRACTAM_ROWID_SIZE];
	char		hi[FRACTAM_ROWID_SIZE];
	FtTree		tree;
	uint8		status = visibilitymap_get_status(st->rel, blk, &st->vmbuf);

	if ((status & VISIBILITYMAP_ALL_VISIBLE) &&
		(!frozen_candidate || (status & VISIBILITYMAP_ALL_FROZEN)))
		return;
	/* pin (and extend) the map page before any leaf is locked */
	visibilitymap_pin(st->rel, blk, &st->vmbuf);
	if (st->map_was_empty)
	{
		LOCKTAG		tag;

		/*
		 * Writers that cached "no map" (see the file header) must be gone
		 * before the first bit: wait for every transaction holding a lock
		 * that lets it write to the table.
		 */
		SET_LOCKTAG_RELATION(tag, st->rel->rd_lockInfo.lockRelId.dbId,
							 RelationGetRelid(st->rel));
		WaitForLockers(tag, ShareLock, false);
		st->map_was_empty = false;
	}
	st->blk = blk;
	st->cutoff_xid = InvalidTransactionId;
	st->all_frozen = true;
	fractam_rowid_key((FtRowId) blk * FRACTAM_ROWS_PER_BLOCK, lo);
	fractam_rowid_key((FtRowId) (blk + 1) * FRACTAM_ROWS_PER_BLOCK, hi);
	fractam_table_tree(st->rel, &tree);
	tree.strategy = st->strategy;
	(void) ft_range_all(&tree, lo, sizeof(lo), hi, sizeof(hi), check_version,
						set_all_visible, st);
}

/*
 * Must the first bit this VACUUM sets wait for the table's writers (see the
 * file header)?  Not only when the map has no pages: a VACUUM that created
 * them may have been cancelled in its wait, leaving pages but no bit, and a
 * writer that cached "no map" before is still running.  So whenever no bit
 * is set at all.
 */
static bool
map_has_no_bits(Relation rel)
{
	BlockNumber all_visible = 0;
	BlockNumber all_frozen = 0;

	if (map_pages(rel) == 0)
		return true;
	visibilitymap_count(rel, &all_visible, &all_frozen);
	return all_visible == 0 && all_frozen == 0;
}

/* Has blk all of the bits flags (none: false)?  (Pins the map page.) */
static bool
block_marked(Relation rel, BlockNumber blk, uint8 flags, Buffer *vmbuf)
{
	return flags != 0 &&
		(visibilitymap_get_status(rel, blk, vmbuf) & flags) == flags;
}

/*
 * Is every pseudo-block holding row ids [first, end) marked with flags
 * (VISIBILITYMAP_ALL_FROZEN, or VISIBILITYMAP_ALL_VISIBLE)?  VACUUM skips
 * the leaves of such a range; *vmbuf keeps a map page pinned between
 * calls.
 */
bool
fractam_vm_range_marked(Relation rel, FtRowId first, FtRowId end,
						uint8 flags, Buffer *vmbuf)
{
	BlockNumber blk;
	BlockNumber last;

	if (end <= first)
		return false;
	last = (BlockNumber) ((end - 1) / FRACTAM_ROWS_PER_BLOCK);
	for (blk = (BlockNumber) (first / FRACTAM_ROWS_PER_BLOCK); blk <= last; blk++)
		if (!block_marked(rel, blk, flags, vmbuf))
			return false;
	return true;
}

/*
 * After VACUUM removed dead versions and the indexes their entries: set
 * the all-visible bit of each pseudo-block whose versions (read here
 * without locks, as candidates) all looked visible to every snapshot, and
 * its all-frozen bit if they all looked frozen, checking again under the
 * leaves' locks.  Runs of pseudo-blocks already marked skip (all-frozen;
 * or all-visible, for a VACUUM that does not freeze what it skips) are
 * passed over: the scan seeks past them.  Pseudo-blocks that hold no
 * version are not marked (unlike heap's empty pages): the runs of them the
 * scan finds, also before the first version and after the last, go to
 * gaps, for fractam_rowids_give_back, and a marked one would be passed
 * over by the next VACUUM's scan, which could then never give it back.
 * (Their row ids are reused soon; only the leaves whose ranges span them
 * cannot be skipped meanwhile.)  Returns how many TID blocks are
 * all-visible now (relallvisible, counted as ANALYZE counts it).
 */
BlockNumber
fractam_vm_vacuum(Relation rel, FractamRowidGaps *gaps,
				  TransactionId oldest_xmin, uint8 skip,
				  BufferAccessStrategy bstrategy)
{
	VmSetState	st;
	FtTree		tree;
	FtScan		scan;
	const char *item;
	Size		len;
	BlockNumber cur = InvalidBlockNumber;
	BlockNumber prev = InvalidBlockNumber;	/* last block with a version */
	bool		candidate = false;
	bool		frozen_candidate = false;
	BlockNumber all_visible = 0;
	BlockNumber all_frozen = 0;
	BlockNumber end_blk;

	memset(&st, 0, sizeof(st));
	st.rel = rel;
	st.map_was_empty = map_has_no_bits(rel);
	st.oldest_xmin = oldest_xmin;
	st.vmbuf = InvalidBuffer;
	st.strategy = bstrategy;

	end_blk = (BlockNumber) ((fractam_rowid_end(rel) + FRACTAM_ROWS_PER_BLOCK - 1) /
							 FRACTAM_ROWS_PER_BLOCK);
	fractam_table_tree(rel, &tree);
	/* the leaves go through VACUUM's ring, as its walk's do (ft_vacuum.c) */
	tree.strategy = bstrategy;
	scan = ft_scan_begin(&tree);
	ft_scan_set_keep_pins(scan, false);
	ft_scan_seek(scan, NULL, 0, true);
	for (;;)
	{
		bool		more = ft_scan_next(scan, &item, &len);
		FractamHeaderCopy hbuf;
		BlockNumber blk = more ?
			(BlockNumber) (fractam_item_rowid(item) / FRACTAM_ROWS_PER_BLOCK) :
			InvalidBlockNumber;

		if (blk != cur)
		{
			if (cur != InvalidBlockNumber && candidate)
				try_set(&st, cur, frozen_candidate);
			/* the empty pseudo-blocks up to this version's */
			if (more)
				fractam_rowid_gaps_add(gaps,
									   prev == InvalidBlockNumber ? 0 : prev + 1,
									   blk);
			cur = InvalidBlockNumber;
			if (more)
				prev = blk;
			if (more && block_marked(rel, blk, skip, &st.vmbuf))
			{
				char		key[FRACTAM_ROWID_SIZE];

				/* nothing to set there: on to the next block that is not */
				do
					blk++;
				while (blk < end_blk && block_marked(rel, blk, skip, &st.vmbuf));
				/* (blocks skipped over are not empty ones) */
				prev = blk - 1;
				fractam_rowid_key((FtRowId) blk * FRACTAM_ROWS_PER_BLOCK, key);
				ft_scan_seek(scan, key, sizeof(key), true);
				CHECK_FOR_INTERRUPTS();
				continue;
			}
			cur = blk;
			candidate = true;
			frozen_candidate = true;
		}
		if (!more)
			break;
		st.all_frozen = true;
		if (candidate && (fractam_item_is_deadset(item, len) ||
						  !visible_to_all(&st,
										  fractam_item_header(rel, item, &hbuf))))
			candidate = false;
		if (!st.all_frozen)
			frozen_candidate = false;
		/* the cost-based delay, as VACUUM's walk (ft_vacuum.c) */
		vacuum_delay_point();
	}
	ft_scan_end(scan);
	if (BufferIsValid(st.vmbuf))
		ReleaseBuffer(st.vmbuf);
	/* and those after the last version (all of them in an empty table) */
	fractam_rowid_gaps_add(gaps, prev == InvalidBlockNumber ? 0 : prev + 1,
						   InvalidBlockNumber);

	visibilitymap_count(rel, &all_visible, &all_frozen);
	return all_visible;
}

/* The pruned row ids of one pseudo-block, for fractam_vm_verify */
typedef struct PrunedInBlock
{
	BlockNumber blk;
	FtRowId		limit;			/* the table's row id limit */
	bool		bits[FRACTAM_ROWS_PER_BLOCK];
} PrunedInBlock;

/*
 * Dead sets (table_prune.c) hold at least one row id, all of them in their
 * key's pseudo-block and below the table's row id limit, and no row id of
 * a version that still exists.  Items come in row id order, and a dead
 * set's row ids follow its key, so one pass over the table checks it.
 */
static void
check_deadset_order(Relation rel, const char *item, Size len,
					PrunedInBlock *pruned)
{
	FtRowId		rowid = fractam_item_rowid(item);
	BlockNumber blk = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
	int			first = (int) (rowid % FRACTAM_ROWS_PER_BLOCK);

	if (blk != pruned->blk)
	{
		memset(pruned->bits, 0, sizeof(pruned->bits));
		pruned->blk = blk;
	}
	if (!fractam_item_is_deadset(item, len))
	{
		if (pruned->bits[first])
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("table \"%s\" holds row version (%u,%d) that a dead set says was pruned",
							RelationGetRelationName(rel), blk, first + 1)));
		return;
	}
	if (fractam_deadset_count(item) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("table \"%s\" holds an empty dead set at (%u,%d)",
						RelationGetRelationName(rel), blk, first + 1)));
	for (int b = 0; b < FRACTAM_DEADSET_ROWS; b++)
	{
		if (!fractam_deadset_has(item, b))
			continue;
		if (first + b >= FRACTAM_ROWS_PER_BLOCK || rowid + b >= pruned->limit)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("dead set at (%u,%d) of table \"%s\" names row id " UINT64_FORMAT " beyond its pseudo-block or the row ids handed out",
							blk, first + 1, RelationGetRelationName(rel),
							rowid + b)));
		pruned->bits[first + b] = true;
	}
}

/*
 * fractam_verify, with the table's writers locked out: every version in a
 * pseudo-block marked all-visible must be visible to every snapshot (no
 * insert or delete in progress, no deleter that committed), and every
 * version in one marked all-frozen must be frozen.
 */
void
fractam_vm_verify(Relation rel)
{
	FtTree		tree;
	FtScan		scan;
	const char *item;
	Size		len;
	Buffer		vmbuf = InvalidBuffer;
	PrunedInBlock pruned;
	FtSeqState	seqstate;
	uint32		nextfree = 0;

	pruned.blk = InvalidBlockNumber;
	pruned.limit = fractam_rowid_limit(rel);
	fractam_table_tree(rel, &tree);
	ft_meta_read_seq_state(&tree, &seqstate);
	fractam_rowids_verify_state(rel, &seqstate);
	scan = ft_scan_begin(&tree);
	ft_scan_set_keep_pins(scan, false);
	ft_scan_seek(scan, NULL, 0, true);
	while (ft_scan_next(scan, &item, &len))
	{
		ItemPointerData tid;
		TransactionId dead_after;
		uint8		status;
		FractamHeaderCopy hbuf;
		HeapTupleHeader hdr;

		CHECK_FOR_INTERRUPTS();
		fractam_rowid_tid(fractam_item_rowid(item), &tid);
		status = visibilitymap_get_status(rel, ItemPointerGetBlockNumber(&tid),
										  &vmbuf);
		check_deadset_order(rel, item, len, &pruned);
		fractam_rowids_verify_item(rel, &seqstate, fractam_item_rowid(item),
								   &nextfree);
		if (fractam_item_is_deadset(item, len))
		{
			if (status & VISIBILITYMAP_ALL_VISIBLE)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("visibility map of table \"%s\" marks TID block %u all-visible, but it holds pruned row versions from (%u,%u) on",
								RelationGetRelationName(rel),
								ItemPointerGetBlockNumber(&tid),
								ItemPointerGetBlockNumber(&tid),
								ItemPointerGetOffsetNumber(&tid))));
			continue;
		}
		hdr = fractam_item_header(rel, item, &hbuf);
		if ((status & VISIBILITYMAP_ALL_FROZEN) && !version_frozen(hdr))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("visibility map of table \"%s\" marks TID block %u all-frozen, but row version (%u,%u) is not frozen",
							RelationGetRelationName(rel),
							ItemPointerGetBlockNumber(&tid),
							ItemPointerGetBlockNumber(&tid),
							ItemPointerGetOffsetNumber(&tid))));
		if ((status & VISIBILITYMAP_ALL_VISIBLE) &&
			fractam_tuple_htsv(hdr, &dead_after) != HEAPTUPLE_LIVE)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("visibility map of table \"%s\" marks TID block %u all-visible, but row version (%u,%u) is not visible to all",
							RelationGetRelationName(rel),
							ItemPointerGetBlockNumber(&tid),
							ItemPointerGetBlockNumber(&tid),
							ItemPointerGetOffsetNumber(&tid))));
	}
	ft_scan_end(scan);
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
}
