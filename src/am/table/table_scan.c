/*-------------------------------------------------------------------------
 *
 * table_scan.c
 *	  Reading fractam tables: sequential (and parallel) scans, fetches by
 *	  TID for indexes, bitmap scans and ANALYZE's sample.
 *
 * A sequential scan walks the tree in row-id order; parallel workers take
 * pseudo-blocks (FRACTAM_ROWS_PER_BLOCK row ids) from PostgreSQL's block
 * allocator, whose block count is the number of pseudo-blocks handed out.
 * Fetches by TID descend to the row id's leaf and copy the version out.
 * Nothing here writes a page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/relscan.h"
#include "access/tsmapi.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "am/table/fractam_table.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

typedef struct FractamScanDescData
{
	TableScanDescData rs_base;
	FtTree		tree;
	MemoryContext scancxt;		/* the scan's lifetime: ftscan allocates
								 * here, not in the caller's per-row memory */
	FtScan		ftscan;			/* NULL until the first row is asked for */
	bool		done;			/* parallel: no pseudo-block left */
	/* serial scans: where the scan stands, for changes of direction */
	enum
	{
		POS_START,				/* before the first row */
		POS_AT,					/* at row id pos_rowid (last returned) */
		POS_END					/* after the last row */
	}			pos;
	FtRowId		pos_rowid;
	bool		backward;		/* ftscan's direction */
	/* serial scans: only row ids in [range_lo, range_hi] (TID ranges) */
	FtRowId		range_lo;
	FtRowId		range_hi;
	FtRowId		range_end;		/* parallel: end of the current
								 * pseudo-block (exclusive) */
	ParallelBlockTableScanWorkerData pwork;
	HeapTupleData tuple;		/* the current row (in ftscan's memory, or
								 * decoded into rowbuf) */
	char	   *rowbuf;			/* compact and settled rows, decoded */
	Size		rowbufsize;

	/*
	 * MVCC scans: the visibility-map bits of the pseudo-blocks the current
	 * leaf holds rows of (vm_bits), read under the leaf's share lock
	 * as it was copied: a block marked all-visible then needs no
	 * visibility check of its rows, as heap's page-at-a-time scans skip
	 * the checks on all-visible pages.
	 */
	bool		vm_skip;		/* snapshot allows it */
	bool		bulk;			/* larger than the decoded-leaf cache: see
								 * ft_scan_set_bulk */
	Buffer		vmbuf;
	BlockNumber vm_first;		/* first pseudo-block of the leaf's rows */
	int			vm_nblocks;		/* how many of them vm_bits covers */
	uint64		vm_bits;		/* bit i: vm_first + i is all-visible */

	bool		strategy_borrowed;	/* tree.strategy is ANALYZE's ring */

	/* bitmap scans and ANALYZE: the versions of one range, copied */
	MemoryContext rangecxt;
	HeapTuple  *rangetups;
	int			nrangetups;
	int			rangepos;
	int			rangepruned;	/* pruned row ids of the range (dead sets) */
	/* TABLESAMPLE: the pseudo-block being sampled, its versions by offset */
	bool		sample_started;
	BlockNumber sample_nblocks;
	BlockNumber sample_block;
	int			sample_at[FRACTAM_ROWS_PER_BLOCK + 1];
} FractamScanDescData;

typedef FractamScanDescData *FractamScanDesc;

static FtScan begin_tree_scan(FractamScanDesc scan);

const TupleTableSlotOps *
fractam_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

TableScanDesc
fractam_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
				   struct ScanKeyData *key, ParallelTableScanDesc pscan,
				   uint32 flags)
{
	FractamScanDesc scan = palloc0(sizeof(FractamScanDescData));
	BlockNumber nblocks;

	fractam_flush_kept_rows_if(rel);
	RelationIncrementReferenceCount(rel);
	scan->rs_base.rs_rd = rel;
	scan->rs_base.rs_snapshot = snapshot;
	scan->rs_base.rs_nkeys = nkeys;
	scan->rs_base.rs_flags = flags;
	scan->rs_base.rs_parallel = pscan;
	scan->scancxt = CurrentMemoryContext;
	scan->range_lo = 0;
	scan->range_hi = PG_UINT64_MAX;
	scan->vmbuf = InvalidBuffer;
	scan->rangecxt = AllocSetContextCreate(CurrentMemoryContext,
										   "fractam scan range",
										   ALLOCSET_DEFAULT_SIZES);
	fractam_table_tree(rel, &scan->tree);

	/*
	 * A scan of a table larger than a quarter of shared buffers reads its
	 * leaves through a small ring, as heap's does (initscan), so that it
	 * does not push everything else out of shared buffers.  The size is the
	 * file's: RelationGetNumberOfBlocks counts TID blocks (row ids) and
	 * descends the tree to find them.  Every leaf goes through the ring,
	 * whether reached through a right link or by a descent (one per level-1
	 * node, and every leaf of a backward scan); the nodes above do not.
	 */
	nblocks = smgrnblocks(RelationGetSmgr(rel), MAIN_FORKNUM);
	if ((flags & SO_ALLOW_STRAT) && !RelationUsesLocalBuffers(rel) &&
		nblocks > NBuffers / 4)
		scan->tree.strategy = GetAccessStrategy(BAS_BULKREAD);

	/*
	 * The same for the backend's cache of decoded leaves: a table with more
	 * pages than the cache has room for leaves is decoded leaf by leaf into
	 * the scan's copy, past the cache; a smaller one is cached, for the
	 * next scan of it.
	 */
	scan->bulk = nblocks > ft_leaf_cache_leaves();

	/* a serializable seq scan reads the whole table, as heap's */
	if (flags & SO_TYPE_SEQSCAN)
	{
		PredicateLockRelation(rel, snapshot);
		pgstat_count_heap_scan(rel);
	}
	return (TableScanDesc) scan;
}

void
fractam_scan_end(TableScanDesc sscan)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	if (scan->ftscan)
		ft_scan_end(scan->ftscan);
	if (BufferIsValid(scan->vmbuf))
		ReleaseBuffer(scan->vmbuf);
	if (scan->tree.strategy && !scan->strategy_borrowed)
		FreeAccessStrategy(scan->tree.strategy);
	MemoryContextDelete(scan->rangecxt);
	if (scan->rowbuf)
		pfree(scan->rowbuf);
	RelationDecrementReferenceCount(sscan->rs_rd);
	if (sscan->rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(sscan->rs_snapshot);
	pfree(scan);
}

void
fractam_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key,
					bool set_params, bool allow_strat, bool allow_sync,
					bool allow_pagemode)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	if (scan->ftscan)
		ft_scan_end(scan->ftscan);
	scan->ftscan = NULL;
	scan->done = false;
	scan->pos = POS_START;
	scan->sample_started = false;
	if (sscan->rs_flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(sscan->rs_rd);
	scan->range_end = 0;
	memset(&scan->pwork, 0, sizeof(scan->pwork));
}

/* Parallel scans: the next pseudo-block, or false when none is left */
static bool
next_parallel_range(FractamScanDesc scan)
{
	ParallelBlockTableScanDesc pbscan =
		(ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;
	BlockNumber block;
	FtRowId		first;
	char		key[FRACTAM_ROWID_SIZE];

	if (scan->ftscan == NULL)
	{
		scan->ftscan = begin_tree_scan(scan);
		table_block_parallelscan_startblock_init(scan->rs_base.rs_rd,
												 &scan->pwork, pbscan);
	}
	block = table_block_parallelscan_nextpage(scan->rs_base.rs_rd,
											  &scan->pwork, pbscan);
	if (block == InvalidBlockNumber)
		return false;
	/* the shared counter counts from the first pseudo-block in use */
	first = ((FractamParallelScanDesc) pbscan)->first_rowid +
		(FtRowId) block * FRACTAM_ROWS_PER_BLOCK;
	fractam_rowid_key(first, key);
	ft_scan_seek(scan->ftscan, key, sizeof(key), true);
	scan->range_end = first + FRACTAM_ROWS_PER_BLOCK;
	return true;
}

/* Parallel scans: the next row version of this worker, or NULL */
static const char *
next_parallel_version(FractamScanDesc scan, Size *len)
{
	const char *item;

	if (scan->done)
		return NULL;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (scan->range_end == 0 && !next_parallel_range(scan))
		{
			scan->done = true;
			return NULL;
		}
		if (fractam_scan_next_version(scan->ftscan, &item, len) &&
			fractam_item_rowid(item) < scan->range_end)
			return item;
		scan->range_end = 0;
	}
}

/*
 * FtLeafCopiedFn of MVCC scans: note which pseudo-blocks of the copied leaf
 * are all-visible (see vm_bits).  Writers clear a block's bit under the
 * exclusive lock of the leaf that holds the version they change or add,
 * and VACUUM sets it only after checking every version of the block under
 * the share locks of the leaves holding them (and after removing dead ones
 * under an exclusive lock): with the leaf's share lock held, the bit read
 * here and the copy agree.  Only the first 64 blocks of a leaf whose rows
 * are spread wider are noted; the others are checked row by row.
 */
static void
note_leaf_vm(void *arg, const char *first, Size firstlen, const char *last,
			 Size lastlen)
{
	FractamScanDesc scan = (FractamScanDesc) arg;
	Relation	rel = scan->rs_base.rs_rd;
	BlockNumber lastblk;

	scan->vm_nblocks = 0;
	scan->vm_bits = 0;
	if (first == NULL)
		return;
	scan->vm_first = (BlockNumber) (fractam_item_rowid(first) / FRACTAM_ROWS_PER_BLOCK);
	lastblk = (BlockNumber) (fractam_item_rowid(last) / FRACTAM_ROWS_PER_BLOCK);
	scan->vm_nblocks = (int) Min((uint64) lastblk - scan->vm_first + 1, 64);
	for (int i = 0; i < scan->vm_nblocks; i++)
		if (VM_ALL_VISIBLE(rel, scan->vm_first + i, &scan->vmbuf))
			scan->vm_bits |= UINT64CONST(1) << i;
}

/* Is pseudo-block blk of the current leaf noted all-visible? */
static inline bool
noted_all_visible(FractamScanDesc scan, BlockNumber blk)
{
	uint64		i = (uint64) blk - scan->vm_first;

	return scan->vm_skip && i < (uint64) scan->vm_nblocks &&
		(scan->vm_bits & (UINT64CONST(1) << i)) != 0;
}

/* Start a tree scan for the table scan (serial or parallel) */
static FtScan
begin_tree_scan(FractamScanDesc scan)
{
	Snapshot	snapshot = scan->rs_base.rs_snapshot;
	FtScan		fts = ft_scan_begin(&scan->tree);

	ft_scan_set_bulk(fts, scan->bulk);

	/*
	 * Heap's rule (all-visible page, snapshot not taken in recovery), for
	 * plain MVCC snapshots only: historic ones must reach
	 * fractam_tuple_visible (which refuses them), and old_snapshot_threshold
	 * lets VACUUM mark blocks whose rows an old snapshot does not see.
	 */
	scan->vm_skip = snapshot != NULL &&
		snapshot->snapshot_type == SNAPSHOT_MVCC &&
		!snapshot->takenDuringRecovery && !OldSnapshotThresholdActive();
	scan->vm_nblocks = 0;
	if (scan->vm_skip)
		ft_scan_set_leaf_callback(fts, note_leaf_vm, scan);
	return fts;
}

/*
 * Serial scans: the next row version in the given direction, or NULL.  A
 * change of direction starts a new tree scan next to the row last returned
 * (ft scans go one way), as heap rescans its current page.
 */
static const char *
next_serial_version(FractamScanDesc scan, bool backward, Size *len)
{
	const char *item;

	if (scan->ftscan == NULL || scan->backward != backward)
	{
		char		key[FRACTAM_ROWID_SIZE];

		if ((!backward && scan->pos == POS_END) ||
			(backward && scan->pos == POS_START))
			return NULL;
		if (scan->ftscan)
			ft_scan_end(scan->ftscan);
		scan->ftscan = begin_tree_scan(scan);
		scan->backward = backward;
		if (scan->pos == POS_AT)
		{
			/* forward: from the next row id; backward: below this one */
			fractam_rowid_key(scan->pos_rowid + (backward ? 0 : 1), key);
			ft_scan_seek(scan->ftscan, key, sizeof(key), !backward);
		}
		else if (!backward && scan->range_lo > 0)
		{
			fractam_rowid_key(scan->range_lo, key);
			ft_scan_seek(scan->ftscan, key, sizeof(key), true);
		}
		else if (backward && scan->range_hi < PG_UINT64_MAX)
		{
			/* backward: at the last item below range_hi + 1 */
			fractam_rowid_key(scan->range_hi + 1, key);
			ft_scan_seek(scan->ftscan, key, sizeof(key), false);
		}
		else
			ft_scan_seek(scan->ftscan, NULL, 0, !backward);
	}
	if (!fractam_scan_next_version(scan->ftscan, &item, len) ||
		(!backward && fractam_item_rowid(item) > scan->range_hi) ||
		(backward && fractam_item_rowid(item) < scan->range_lo))
	{
		scan->pos = backward ? POS_START : POS_END;
		ft_scan_end(scan->ftscan);
		scan->ftscan = NULL;
		return NULL;
	}
	return item;
}

/*
 * The row of item as scan->tuple: in the leaf copy for the full form, else
 * decoded into the scan's row buffer (valid until the next row, as the
 * leaf copy is).
 */
static void
set_scan_tuple(FractamScanDesc scan, const char *item, Size len)
{
	if (fractam_item_form(item) == FRACTAM_ITEM_FULL)
	{
		scan->tuple.t_data = fractam_item_tuple(item);
		scan->tuple.t_len = len - FRACTAM_ROWID_SIZE;
		return;
	}
	scan->tuple.t_len = fractam_item_tuple_len(scan->rs_base.rs_rd, item, len);
	if (scan->tuple.t_len > scan->rowbufsize)
	{
		Size		size = Max(scan->tuple.t_len, 2 * scan->rowbufsize);

		if (scan->rowbuf)
			pfree(scan->rowbuf);
		scan->rowbuf = MemoryContextAlloc(scan->scancxt, Max(size, 256));
		scan->rowbufsize = Max(size, 256);
	}
	fractam_item_to_tuple(scan->rs_base.rs_rd, item, len,
						  (HeapTupleHeader) scan->rowbuf);
	scan->tuple.t_data = (HeapTupleHeader) scan->rowbuf;
}

/*
 * Does the scan's snapshot see the version with header hdr in pseudo-block
 * blk?
 */
static inline bool
scan_row_visible(FractamScanDesc scan, HeapTupleHeader hdr, BlockNumber blk)
{
	Snapshot	snapshot = scan->rs_base.rs_snapshot;
	bool		visible = noted_all_visible(scan, blk) ||
		fractam_tuple_visible(hdr, snapshot);

	fractam_check_serializable_out(scan->rs_base.rs_rd, hdr, visible,
								   snapshot);
	return visible;
}

bool
fractam_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
						 TupleTableSlot *slot)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;
	const char *item;
	Size		len;

	bool		backward = ScanDirectionIsBackward(direction);

	Assert(!backward || sscan->rs_parallel == NULL);
	for (;;)
	{
		MemoryContext old = MemoryContextSwitchTo(scan->scancxt);
		FtRowId		rowid;
		BlockNumber blk;

		item = sscan->rs_parallel ? next_parallel_version(scan, &len) :
			next_serial_version(scan, backward, &len);
		MemoryContextSwitchTo(old);
		if (item == NULL)
			break;
		CHECK_FOR_INTERRUPTS();
		rowid = fractam_item_rowid(item);
		blk = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
		if (fractam_item_form(item) == FRACTAM_ITEM_FULL)
		{
			if (!scan_row_visible(scan, fractam_item_tuple(item), blk))
				continue;
			set_scan_tuple(scan, item, len);
		}
		else
		{
			/*
			 * Decode the row first and judge the header it decoded to: one
			 * decoding per row, where judging first would decode the
			 * header twice.  A settled version is visible to everyone, from
			 * a frozen xmin: no check to make.
			 */
			set_scan_tuple(scan, item, len);
			if (fractam_item_form(item) == FRACTAM_ITEM_COMPACT &&
				!scan_row_visible(scan, scan->tuple.t_data, blk))
				continue;
		}
		/* fractam_rowid_tid, with the division done once above */
		ItemPointerSet(&scan->tuple.t_self, blk,
					   (OffsetNumber) (rowid - (FtRowId) blk * FRACTAM_ROWS_PER_BLOCK + 1));
		scan->tuple.t_tableOid = RelationGetRelid(sscan->rs_rd);
		scan->pos = POS_AT;
		scan->pos_rowid = rowid;
		pgstat_count_heap_getnext(sscan->rs_rd);
		ExecStoreHeapTuple(&scan->tuple, slot, false);
		return true;
	}
	ExecClearTuple(slot);
	return false;
}

/* Limit a serial scan to row ids lo .. hi (inclusive); before it starts */
void
fractam_scan_set_rowid_range(TableScanDesc sscan, FtRowId lo, FtRowId hi)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	Assert(sscan->rs_parallel == NULL);
	if (scan->ftscan)
		ft_scan_end(scan->ftscan);
	scan->ftscan = NULL;
	scan->pos = POS_START;
	scan->range_lo = lo;
	scan->range_hi = hi;
}

/* A TID's row id, the first at or after it (offsets beyond a block move on) */
static FtRowId
tid_rowid_ceil(ItemPointer tid)
{
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);
	FtRowId		block = ItemPointerGetBlockNumberNoCheck(tid);

	if (off < 1)
		off = 1;
	if (off > FRACTAM_ROWS_PER_BLOCK)
		return (block + 1) * FRACTAM_ROWS_PER_BLOCK;
	return block * FRACTAM_ROWS_PER_BLOCK + off - 1;
}

/* TID range scans: the row ids between two TIDs */
void
fractam_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid,
						  ItemPointer maxtid)
{
	FtRowId		lo = tid_rowid_ceil(mintid);
	FtRowId		hi;
	OffsetNumber maxoff = ItemPointerGetOffsetNumberNoCheck(maxtid);
	FtRowId		maxblock = ItemPointerGetBlockNumberNoCheck(maxtid);

	/* the last row id at or before maxtid */
	if (maxoff > FRACTAM_ROWS_PER_BLOCK)
		hi = (maxblock + 1) * FRACTAM_ROWS_PER_BLOCK - 1;
	else if (maxoff >= 1)
		hi = maxblock * FRACTAM_ROWS_PER_BLOCK + maxoff - 1;
	else if (maxblock > 0)
		hi = maxblock * FRACTAM_ROWS_PER_BLOCK - 1;
	else
	{
		/* nothing is at or before (0,0) */
		lo = 1;
		hi = 0;
	}
	fractam_scan_set_rowid_range(sscan, lo, hi);
	if (lo > hi)
		((FractamScanDesc) sscan)->pos = POS_END;
}

bool
fractam_scan_getnextslot_tidrange(TableScanDesc sscan, ScanDirection direction,
								  TupleTableSlot *slot)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	if (scan->range_lo > scan->range_hi)
	{
		ExecClearTuple(slot);
		return false;
	}
	return fractam_scan_getnextslot(sscan, direction, slot);
}

/*
 * Parallel scans hand out pseudo-blocks through PostgreSQL's block
 * allocator: those from the first one that holds a version to the last
 * one with row ids handed out now, counted from the first (a table whose
 * row ids start far from zero does not walk the empty ones).  Rows added
 * later by this transaction's own commands are not seen by the scan's
 * snapshot; other transactions' are not visible either.
 */
Size
fractam_parallelscan_estimate(Relation rel)
{
	return sizeof(FractamParallelScanDescData);
}

Size
fractam_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	FractamParallelScanDesc fpscan = (FractamParallelScanDesc) pscan;
	uint64		end;
	uint64		first;

	/* before the workers start (a parallel index build's leader is one) */
	fractam_flush_kept_rows_if(rel);
	end = (fractam_rowid_limit(rel) + FRACTAM_ROWS_PER_BLOCK - 1) /
		FRACTAM_ROWS_PER_BLOCK;
	first = fractam_rowid_first(rel) / FRACTAM_ROWS_PER_BLOCK;
	table_block_parallelscan_initialize(rel, pscan);
	first = Min(first, end);
	fpscan->first_rowid = first * FRACTAM_ROWS_PER_BLOCK;
	fpscan->base.phs_nblocks = (BlockNumber) Min(end - first,
												 (uint64) MaxBlockNumber);
	fpscan->base.base.phs_syncscan = false;
	return sizeof(FractamParallelScanDescData);
}

/* ---- fetches by TID ---- */

typedef struct FractamIndexFetchData
{
	IndexFetchTableData xs_base;
	FtLeafHint	leaf_hint;		/* the leaf the last fetch ended in, kept
								 * pinned as heap keeps its page (table
								 * VACUUM skips pinned leaves) */
} FractamIndexFetchData;

static void
index_fetch_forget(FractamIndexFetchData *fetch)
{
	ft_leaf_hint_release(&fetch->leaf_hint);
	fetch->leaf_hint = FT_NO_LEAF_HINT;
	fetch->leaf_hint.keep_pin = true;
}

struct IndexFetchTableData *
fractam_index_fetch_begin(Relation rel)
{
	FractamIndexFetchData *fetch = palloc0(sizeof(FractamIndexFetchData));

	fractam_flush_kept_rows_if(rel);
	fetch->xs_base.rel = rel;
	fetch->leaf_hint = FT_NO_LEAF_HINT;
	fetch->leaf_hint.keep_pin = true;
	return &fetch->xs_base;
}

void
fractam_index_fetch_reset(struct IndexFetchTableData *data)
{
	index_fetch_forget((FractamIndexFetchData *) data);
}

void
fractam_index_fetch_end(struct IndexFetchTableData *data)
{
	index_fetch_forget((FractamIndexFetchData *) data);
	pfree(data);
}

/*
 * The version at tid, if it exists and snapshot sees it, into slot.  hint:
 * NULL, or the leaf a previous fetch of the same scan ended in.
 */
static bool
fetch_visible(Relation rel, ItemPointer tid, Snapshot snapshot,
			  TupleTableSlot *slot, bool *all_dead, FtLeafHint *hint)
{
	HeapTuple	tup;
	MemoryContext old;
	bool		visible;

	if (!fractam_tid_is_valid(tid))
		return false;
	/* the slot frees the copy: it must live in the slot's memory */
	old = MemoryContextSwitchTo(slot->tts_mcxt);
	tup = hint ? fractam_fetch_version_near(rel, fractam_tid_rowid(tid), hint) :
		fractam_fetch_version(rel, fractam_tid_rowid(tid));
	MemoryContextSwitchTo(old);
	if (tup == NULL)
	{
		if (all_dead)
			*all_dead = true;	/* removed by VACUUM or pruned */
		return false;
	}
	visible = fractam_tuple_visible(tup->t_data, snapshot);
	fractam_check_serializable_out(rel, tup->t_data, visible, snapshot);
	if (!visible)
	{
		if (all_dead)
			*all_dead = fractam_tuple_surely_dead(tup->t_data,
												  GlobalVisTestFor(rel));
		heap_freetuple(tup);
		return false;
	}
	if (IsolationIsSerializable())
		PredicateLockTID(rel, tid, snapshot, HeapTupleHeaderGetXmin(tup->t_data));
	ExecStoreHeapTuple(tup, slot, true);
	return true;
}

bool
fractam_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
						  Snapshot snapshot, TupleTableSlot *slot,
						  bool *call_again, bool *all_dead)
{
	/* no HOT chains: one TID is one version */
	*call_again = false;
	if (all_dead)
		*all_dead = false;
	if (!fetch_visible(scan->rel, tid, snapshot, slot, all_dead,
					   &((FractamIndexFetchData *) scan)->leaf_hint))
		return false;
	pgstat_count_heap_fetch(scan->rel);
	return true;
}

bool
fractam_tuple_fetch_row_version(Relation rel, ItemPointer tid,
								Snapshot snapshot, TupleTableSlot *slot)
{
	fractam_flush_kept_rows_if(rel);
	return fetch_visible(rel, tid, snapshot, slot, NULL, NULL);
}

bool
fractam_tuple_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	return fractam_tid_is_valid(tid) &&
		fractam_tid_rowid(tid) < fractam_rowid_limit(scan->rs_rd);
}

/* Follow the update chain from tid to the newest version the snapshot sees */
void
fractam_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	Relation	rel = scan->rs_rd;
	ItemPointerData ctid = *tid;
	TransactionId priorXmax = InvalidTransactionId;

	fractam_flush_kept_rows_if(scan->rs_rd);
	for (;;)
	{
		HeapTuple	tup;
		HeapTupleHeader hdr;

		if (!fractam_tid_is_valid(&ctid))
			break;
		tup = fractam_fetch_version(rel, fractam_tid_rowid(&ctid));
		if (tup == NULL)
			break;
		hdr = tup->t_data;
		if (TransactionIdIsValid(priorXmax) &&
			!TransactionIdEquals(priorXmax, HeapTupleHeaderGetXmin(hdr)))
		{
			heap_freetuple(tup);
			break;
		}
		if (fractam_tuple_visible(hdr, scan->rs_snapshot))
			*tid = ctid;
		if ((hdr->t_infomask & HEAP_XMAX_INVALID) ||
			HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask) ||
			HeapTupleHeaderIndicatesMovedPartitions(hdr) ||
			ItemPointerEquals(&ctid, &hdr->t_ctid))
		{
			heap_freetuple(tup);
			break;
		}
		ctid = hdr->t_ctid;
		priorXmax = HeapTupleHeaderGetUpdateXid(hdr);
		heap_freetuple(tup);
	}
}

/* Does the snapshot see the current state of the version in slot? */
bool
fractam_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
								 Snapshot snapshot)
{
	HeapTuple	tup = fractam_fetch_version(rel, fractam_tid_rowid(&slot->tts_tid));
	bool		res;

	if (tup == NULL)
		return false;
	res = fractam_tuple_visible(tup->t_data, snapshot);
	heap_freetuple(tup);
	return res;
}

/*
 * Which index entries point to versions dead to everyone?  Each is looked
 * up; the horizon returned covers every version found deletable.
 */
TransactionId
fractam_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	TransactionId latest = InvalidTransactionId;
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	int			freed = 0;
	int			i;

	for (i = 0; i < delstate->ndeltids; i++)
	{
		TM_IndexDelete *d = &delstate->deltids[i];
		TM_IndexStatus *st = &delstate->status[d->id];
		HeapTuple	tup;

		if (delstate->bottomup && freed >= delstate->bottomupfreespace)
			break;
		tup = fractam_tid_is_valid(&d->tid) ?
			fractam_fetch_version(rel, fractam_tid_rowid(&d->tid)) : NULL;
		if (tup == NULL)
		{
			/*
			 * its version is gone: VACUUM removed it, or a full leaf pruned
			 * it (which logged its conflict horizon for standbys then)
			 */
			st->knowndeletable = true;
		}
		else
		{
			if (fractam_tuple_surely_dead(tup->t_data, vistest))
			{
				st->knowndeletable = true;
				HeapTupleHeaderAdvanceLatestRemovedXid(tup->t_data, &latest);
			}
			else
				st->knowndeletable = false;
			heap_freetuple(tup);
		}
		if (st->knowndeletable)
			freed += st->freespace;
	}
	return latest;
}

/* ---- ranges of versions: bitmap scans and ANALYZE ---- */

static void
reset_range(FractamScanDesc scan)
{
	MemoryContextReset(scan->rangecxt);
	scan->rangetups = NULL;
	scan->nrangetups = 0;
	scan->rangepos = 0;
	scan->rangepruned = 0;
}

static void
keep_version(FractamScanDesc scan, HeapTuple tup, int *size)
{
	if (scan->nrangetups >= *size)
	{
		*size = Max(64, *size * 2);
		scan->rangetups = scan->rangetups == NULL ?
			MemoryContextAlloc(scan->rangecxt, sizeof(HeapTuple) * *size) :
			repalloc(scan->rangetups, sizeof(HeapTuple) * *size);
	}
	scan->rangetups[scan->nrangetups++] = tup;
}

/*
 * Copy the versions with row ids in [lo, hi) (visible ones if snapshot),
 * and count the pruned row ids of the dead sets keyed there
 */
static void
collect_range(FractamScanDesc scan, FtRowId lo, FtRowId hi, Snapshot snapshot)
{
	Relation	rel = scan->rs_base.rs_rd;
	FtScan		fts;
	char		key[FRACTAM_ROWID_SIZE];
	const char *item;
	Size		len;
	int			size = 0;

	reset_range(scan);
	if (lo >= hi)
		return;
	fts = ft_scan_begin(&scan->tree);
	fractam_rowid_key(lo, key);
	ft_scan_seek(fts, key, sizeof(key), true);
	while (ft_scan_next(fts, &item, &len))
	{
		FtRowId		rowid = fractam_item_rowid(item);
		HeapTupleHeader hdr;
		FractamHeaderCopy hbuf;
		HeapTuple	tup;
		MemoryContext old;

		if (rowid >= hi)
			break;
		if (fractam_item_is_deadset(item, len))
		{
			/* (a dead set lies in one pseudo-block: ranges hold whole ones) */
			scan->rangepruned += fractam_deadset_count(item);
			continue;
		}
		hdr = fractam_item_header(scan->rs_base.rs_rd, item, &hbuf);
		if (snapshot)
		{
			bool		visible = fractam_tuple_visible(hdr, snapshot);

			fractam_check_serializable_out(rel, hdr, visible, snapshot);
			if (!visible)
				continue;
			if (IsolationIsSerializable())
			{
				ItemPointerData tid;

				fractam_rowid_tid(rowid, &tid);
				PredicateLockTID(rel, &tid, snapshot, HeapTupleHeaderGetXmin(hdr));
			}
		}
		old = MemoryContextSwitchTo(scan->rangecxt);
		tup = fractam_item_copy(rel, item, len);
		MemoryContextSwitchTo(old);
		keep_version(scan, tup, &size);
	}
	ft_scan_end(fts);
}

bool
fractam_scan_bitmap_next_block(TableScanDesc sscan,
							   struct TBMIterateResult *tbmres)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;
	Relation	rel = sscan->rs_rd;
	FtRowId		first = (FtRowId) tbmres->blockno * FRACTAM_ROWS_PER_BLOCK;

	reset_range(scan);
	if (tbmres->ntuples >= 0)
	{
		int			size = 0;
		int			i;

		/* exact: look up each row id */
		for (i = 0; i < tbmres->ntuples; i++)
		{
			OffsetNumber off = tbmres->offsets[i];
			HeapTuple	tup;
			MemoryContext old;
			bool		visible;

			if (off < 1 || off > FRACTAM_ROWS_PER_BLOCK)
				continue;
			old = MemoryContextSwitchTo(scan->rangecxt);
			tup = fractam_fetch_version(rel, first + off - 1);
			MemoryContextSwitchTo(old);
			if (tup == NULL)
				continue;
			visible = fractam_tuple_visible(tup->t_data, sscan->rs_snapshot);
			fractam_check_serializable_out(rel, tup->t_data, visible,
										   sscan->rs_snapshot);
			if (!visible)
				continue;
			PredicateLockTID(rel, &tup->t_self, sscan->rs_snapshot,
							 HeapTupleHeaderGetXmin(tup->t_data));
			keep_version(scan, tup, &size);
		}
	}
	else
	{
		/* lossy: every version of the pseudo-block */
		collect_range(scan, first, first + FRACTAM_ROWS_PER_BLOCK,
					  sscan->rs_snapshot);
	}
	return scan->nrangetups > 0;
}

bool
fractam_scan_bitmap_next_tuple(TableScanDesc sscan,
							   struct TBMIterateResult *tbmres,
							   TupleTableSlot *slot)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	if (scan->rangepos >= scan->nrangetups)
		return false;
	pgstat_count_heap_fetch(sscan->rs_rd);
	ExecStoreHeapTuple(scan->rangetups[scan->rangepos++], slot, false);
	return true;
}

/*
 * ANALYZE samples TID blocks (RelationGetNumberOfBlocks covers every
 * pseudo-block that holds versions, see fractam_relation_size): block b is
 * the versions with row ids b * FRACTAM_ROWS_PER_BLOCK and up, so every row
 * id belongs to exactly one block, blocks beyond the last version are
 * empty, and ANALYZE's rows-per-block arithmetic scales to the right total.
 */
bool
fractam_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
								BufferAccessStrategy bstrategy)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;
	FtRowId		lo = (FtRowId) blockno * FRACTAM_ROWS_PER_BLOCK;

	/*
	 * The leaves go through ANALYZE's ring, as heap's sampled pages do: a
	 * sample of a table larger than shared buffers reads most of its
	 * leaves, and must not push out the pages the writers work in.
	 */
	if (scan->tree.strategy == NULL && bstrategy != NULL)
	{
		scan->tree.strategy = bstrategy;
		scan->strategy_borrowed = true;
	}
	collect_range(scan, lo, lo + FRACTAM_ROWS_PER_BLOCK, NULL);
	return true;
}

bool
fractam_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
								double *liverows, double *deadrows,
								TupleTableSlot *slot)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;

	while (scan->rangepos < scan->nrangetups)
	{
		HeapTuple	tup = scan->rangetups[scan->rangepos++];
		TransactionId dead_after;
		bool		sample = false;

		switch (fractam_tuple_htsv(tup->t_data, &dead_after))
		{
			case HEAPTUPLE_LIVE:
				sample = true;
				*liverows += 1;
				break;
			case HEAPTUPLE_DEAD:
			case HEAPTUPLE_RECENTLY_DEAD:
				*deadrows += 1;
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
				/* only our own inserts count, as in heap */
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data)))
				{
					sample = true;
					*liverows += 1;
				}
				break;
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(tup->t_data)))
					*deadrows += 1;
				else
				{
					sample = true;
					*liverows += 1;
				}
				break;
		}
		if (sample)
		{
			ExecStoreHeapTuple(tup, slot, false);
			return true;
		}
	}
	/* pruned versions are dead rows, as heap counts LP_DEAD items */
	*deadrows += scan->rangepruned;
	scan->rangepruned = 0;
	ExecClearTuple(slot);
	return false;
}

/*
 * TABLESAMPLE: the sampling method picks TID blocks (pseudo-blocks of
 * FRACTAM_ROWS_PER_BLOCK row ids) and offsets in them, as it picks heap
 * pages and line pointers.
 */
bool
fractam_scan_sample_next_block(TableScanDesc sscan,
							   struct SampleScanState *scanstate)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber blockno;
	int			i;

	if (!scan->sample_started)
	{
		uint64		limit = fractam_rowid_limit(sscan->rs_rd);

		scan->sample_nblocks = (BlockNumber)
			Min((limit + FRACTAM_ROWS_PER_BLOCK - 1) / FRACTAM_ROWS_PER_BLOCK,
				(uint64) MaxBlockNumber);
	}
	if (tsm->NextSampleBlock)
		blockno = tsm->NextSampleBlock(scanstate, scan->sample_nblocks);
	else if (!scan->sample_started)
		blockno = scan->sample_nblocks > 0 ? 0 : InvalidBlockNumber;
	else if (scan->sample_block + 1 < scan->sample_nblocks)
		blockno = scan->sample_block + 1;
	else
		blockno = InvalidBlockNumber;
	scan->sample_started = true;
	if (!BlockNumberIsValid(blockno))
	{
		reset_range(scan);
		return false;
	}
	scan->sample_block = blockno;
	collect_range(scan, (FtRowId) blockno * FRACTAM_ROWS_PER_BLOCK,
				  ((FtRowId) blockno + 1) * FRACTAM_ROWS_PER_BLOCK, NULL);
	/* versions by offset */
	memset(scan->sample_at, -1, sizeof(scan->sample_at));
	for (i = 0; i < scan->nrangetups; i++)
		scan->sample_at[ItemPointerGetOffsetNumber(&scan->rangetups[i]->t_self)] = i;
	return true;
}

bool
fractam_scan_sample_next_tuple(TableScanDesc sscan,
							   struct SampleScanState *scanstate,
							   TupleTableSlot *slot)
{
	FractamScanDesc scan = (FractamScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;

	for (;;)
	{
		OffsetNumber off;
		HeapTuple	tup;
		bool		visible;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, scan->sample_block,
								   FRACTAM_ROWS_PER_BLOCK);
		if (!OffsetNumberIsValid(off))
		{
			ExecClearTuple(slot);
			return false;
		}
		if (off > FRACTAM_ROWS_PER_BLOCK || scan->sample_at[off] < 0)
			continue;
		tup = scan->rangetups[scan->sample_at[off]];
		visible = fractam_tuple_visible(tup->t_data, sscan->rs_snapshot);
		fractam_check_serializable_out(sscan->rs_rd, tup->t_data, visible,
									   sscan->rs_snapshot);
		if (!visible)
			continue;
		pgstat_count_heap_getnext(sscan->rs_rd);
		ExecStoreHeapTuple(tup, slot, false);
		return true;
	}
}
