/*-------------------------------------------------------------------------
 *
 * table_modify.c
 *	  INSERT, UPDATE and DELETE of fractam table rows.
 *
 * A new version is a new item under the next row id.  Deleting or
 * updating a version writes its header in place (xmax, command id, the
 * link to the next version) in the leaf just found, under that leaf's
 * exclusive lock, checked with the same rules as heap_update/heap_delete.
 * Nothing waits while it holds a leaf: a version another transaction is
 * changing is released, the transaction waited for, and the version found
 * again.  An UPDATE changes the old version first and then adds the new
 * one (the leaves may be the same; its lock is never held twice); both
 * carry this transaction's xid, so a crash between the two hides both.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/hio.h"			/* BulkInsertStateData: COPY's ring */
#include "access/multixact.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "am/table/fractam_table.h"
#include "catalog/catalog.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/combocid.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/relcache.h"

/* Fill in a new version's header (heap_prepare_insert); may toast it */
static HeapTuple
prepare_version(Relation rel, HeapTuple tup, TransactionId xid,
				CommandId cid, int options, HeapTuple oldtup)
{
	tup->t_data->t_infomask &= ~HEAP_XACT_MASK;
	tup->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	tup->t_data->t_infomask |= HEAP_XMAX_INVALID;
	if (oldtup)
		tup->t_data->t_infomask |= HEAP_UPDATED;
	HeapTupleHeaderSetXmin(tup->t_data, xid);
	if (options & HEAP_INSERT_FROZEN)
		HeapTupleHeaderSetXminFrozen(tup->t_data);
	HeapTupleHeaderSetCmin(tup->t_data, cid);
	HeapTupleHeaderSetXmax(tup->t_data, 0);
	tup->t_tableOid = RelationGetRelid(rel);

	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW)
	{
		Assert(!HeapTupleHasExternal(tup));
		return tup;
	}
	if (HeapTupleHasExternal(tup) || tup->t_len > TOAST_TUPLE_THRESHOLD ||
		(oldtup && HeapTupleHasExternal(oldtup)))
		return heap_toast_insert_or_update(rel, tup, oldtup, options);
	return tup;
}

/* Add a prepared version under a new row id; set its TID */
static void
add_version(Relation rel, HeapTuple tup, bool speculative, uint32 specToken)
{
	FtRowId		rowid = fractam_next_rowid(rel);

	fractam_rowid_tid(rowid, &tup->t_self);
	if (speculative)
		HeapTupleHeaderSetSpeculativeToken(tup->t_data, specToken);
	else
		tup->t_data->t_ctid = tup->t_self;
	fractam_store_version(rel, rowid, tup, false);
}

/*
 * A load's new version of slot's row: numbered with the next row id (*last
 * if it is the last of this backend's range: the load stores the versions
 * of a range before it takes the next) and formed into its item, palloc'd
 * in itemcxt; the slot gets its TID.
 */
static char *
number_new_version(Relation rel, TupleTableSlot *slot, TransactionId xid,
				   CommandId cid, int options, Size compact_limit,
				   MemoryContext itemcxt, Size *len, bool *last)
{
	bool		shouldFree = true;
	HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	HeapTuple	heaptup;
	FtRowId		rowid;
	char	   *item;
	MemoryContext old;

	slot->tts_tableOid = RelationGetRelid(rel);
	tuple->t_tableOid = slot->tts_tableOid;
	heaptup = prepare_version(rel, tuple, xid, cid, options, NULL);
	rowid = fractam_next_rowid_ex(rel, last);
	fractam_rowid_tid(rowid, &heaptup->t_self);
	heaptup->t_data->t_ctid = heaptup->t_self;
	old = MemoryContextSwitchTo(itemcxt);
	item = fractam_version_item(rowid, heaptup, compact_limit, len);
	MemoryContextSwitchTo(old);
	if (!(options & HEAP_INSERT_NO_LOGICAL))
		fractam_log_insert(rel, heaptup);
	slot->tts_tid = heaptup->t_self;
	tuple->t_self = heaptup->t_self;
	if (heaptup != tuple)
		heap_freetuple(heaptup);
	if (shouldFree)
		pfree(tuple);
	return item;
}

static void
insert_one(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
		   bool speculative, uint32 specToken)
{
	bool		shouldFree = true;
	HeapTuple	tuple;
	HeapTuple	heaptup;

	tuple = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	slot->tts_tableOid = RelationGetRelid(rel);
	tuple->t_tableOid = slot->tts_tableOid;
	heaptup = prepare_version(rel, tuple, GetCurrentTransactionId(), cid,
							  options, NULL);
	/* a serializable reader of the whole table conflicts with any insert */
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	add_version(rel, heaptup, speculative, specToken);
	if (!(options & HEAP_INSERT_NO_LOGICAL))
	{
		if (speculative)
			fractam_log_speculative(rel, heaptup);
		else
			fractam_log_insert(rel, heaptup);
	}
	pgstat_count_heap_insert(rel, 1);

	slot->tts_tid = heaptup->t_self;
	if (heaptup != tuple)
	{
		tuple->t_self = heaptup->t_self;
		heap_freetuple(heaptup);
	}
	if (shouldFree)
		pfree(tuple);
}

/*
 * Rows a load into a new table adds one at a time.
 *
 * CREATE TABLE AS, SELECT INTO, REFRESH MATERIALIZED VIEW and the rewrite
 * of an ALTER TABLE insert their rows one by one through a bulk-insert
 * state, into a relation file created in this transaction that has no
 * index and no trigger.  Stored one by one, each row costs an insert and a
 * WAL record of its own, and in a compressed table the full leaves at the
 * right edge seal uncompressed: only a batch brings the rows that fill
 * compressed pages (ft_flush.c take_append_batch), and appends a leaf's
 * worth per record.  So such rows are numbered and formed as they come, kept in backend memory,
 * and stored a range of row ids at a time through ft_insert_ascending, as
 * COPY's multi_insert stores its batches (before the next range is taken,
 * as table_rowid_reuse.c requires).  Nobody else can see the file, no
 * index entry points to a kept row, and the load itself reads nothing of
 * the table before its finish_bulk_insert, which stores the rest (the end
 * of the utility statement, for a COPY that inserts row by row and has
 * none: utility_hook.c); anything
 * else of this backend that reaches the table first (a scan, a fetch, a
 * change, VACUUM, an index build: fractam_flush_kept_rows_if) stores them
 * before it goes on, and so does the commit.  An abort of the
 * (sub)transaction that kept them forgets them, with the file.
 */
typedef struct KeptRows
{
	Oid			relid;			/* InvalidOid: none kept */
	SubTransactionId subid;		/* of the inserts (their subtransaction) */
	TransactionId xid;			/* their xmin */
	bool		frozen;			/* HEAP_INSERT_FROZEN */
	BufferAccessStrategy strategy;	/* the load's ring (its own: a load's
									 * bulk-insert state is freed before
									 * finish_bulk_insert) */
	MemoryContext cxt;			/* under TopTransactionContext */
	char	  **items;
	Size	   *lens;
	int			n;
	int			cap;
} KeptRows;

static KeptRows kept;

/* the relation whose rows are kept (see above), for a cheap check */
Oid			fractam_kept_relid = InvalidOid;

static bool kept_callbacks = false;

/* Does this insert go into kept rows (see KeptRows)? */
static bool
keeps_rows(Relation rel, int options, struct BulkInsertStateData *bistate)
{
	return bistate != NULL &&
		(rel->rd_rel->relkind == RELKIND_RELATION ||
		 rel->rd_rel->relkind == RELKIND_MATVIEW) &&
		(rel->rd_createSubid != InvalidSubTransactionId ||
		 rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId) &&
		!rel->rd_rel->relhasindex && rel->trigdesc == NULL &&
		!(options & HEAP_INSERT_SPECULATIVE);
}

static void
forget_kept_rows(void)
{
	if (kept.cxt)
		MemoryContextDelete(kept.cxt);
	memset(&kept, 0, sizeof(kept));
	fractam_kept_relid = InvalidOid;
}

static void
store_kept_rows(Relation rel)
{
	FtTree		tree;
	FractamTableCache *cache;

	Assert(RelationGetRelid(rel) == kept.relid);
	if (kept.n > 0)
	{
		fractam_table_tree(rel, &tree);
		tree.strategy = kept.strategy;
		cache = (FractamTableCache *) tree.owner;
		/* versions of this transaction's own (see fractam_vm_leaf_insert_hook) */
		if (!kept.frozen)
			cache->vm_own_xid = kept.xid;

		/*
		 * An error here leaves every row kept: storing them again skips
		 * those already stored (an item equal to one stored is a no-op).
		 */
		ft_insert_ascending(&tree, kept.items, kept.lens, kept.n);
		cache->vm_own_xid = InvalidTransactionId;
		for (int i = 0; i < kept.n; i++)
			pfree(kept.items[i]);
		kept.n = 0;
	}
}

/* Store the rows kept for rel (see KeptRows) */
void
fractam_flush_kept_rows_of(Relation rel)
{
	store_kept_rows(rel);
	forget_kept_rows();
}

static void
kept_rows_xact_end(XactEvent event, void *arg)
{
	if (kept.relid == InvalidOid)
		return;
	if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE)
		fractam_flush_kept_rows();	/* a load that did not finish */
	else
		forget_kept_rows();
}

static void
kept_rows_subxact_end(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (kept.relid == InvalidOid || kept.subid != mySubid)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget_kept_rows();
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		kept.subid = parentSubid;
}

/* Number and form a row of a load into kept rows (see KeptRows) */
static void
keep_row(Relation rel, TupleTableSlot *slot, CommandId cid, int options)
{
	bool		frozen = (options & HEAP_INSERT_FROZEN) != 0;
	bool		last_in_range;

	if (kept.relid != InvalidOid &&
		(kept.relid != RelationGetRelid(rel) || kept.frozen != frozen ||
		 kept.subid != GetCurrentSubTransactionId()))
		fractam_flush_kept_rows();
	if (!kept_callbacks)
	{
		RegisterXactCallback(kept_rows_xact_end, NULL);
		RegisterSubXactCallback(kept_rows_subxact_end, NULL);
		kept_callbacks = true;
	}
	if (kept.relid == InvalidOid)
	{
		kept.cxt = AllocSetContextCreate(TopTransactionContext,
										 "fractam kept rows",
										 ALLOCSET_DEFAULT_SIZES);
		kept.cap = 256;
		kept.items = MemoryContextAlloc(kept.cxt, sizeof(char *) * kept.cap);
		kept.lens = MemoryContextAlloc(kept.cxt, sizeof(Size) * kept.cap);
		kept.relid = RelationGetRelid(rel);
		kept.subid = GetCurrentSubTransactionId();
		kept.xid = GetCurrentTransactionId();
		kept.frozen = frozen;
		{
			MemoryContext old = MemoryContextSwitchTo(kept.cxt);

			kept.strategy = GetAccessStrategy(BAS_BULKWRITE);
			MemoryContextSwitchTo(old);
		}
		fractam_kept_relid = kept.relid;
	}
	if (kept.n == kept.cap)
	{
		kept.cap *= 2;
		kept.items = repalloc(kept.items, sizeof(char *) * kept.cap);
		kept.lens = repalloc(kept.lens, sizeof(Size) * kept.cap);
	}
	kept.items[kept.n] = number_new_version(rel, slot, kept.xid, cid,
											options,
											fractam_compact_limit(rel),
											kept.cxt, &kept.lens[kept.n],
											&last_in_range);
	kept.n++;
	pgstat_count_heap_insert(rel, 1);
	/* a range's versions are stored before the next range is taken */
	if (last_in_range)
		store_kept_rows(rel);
}

/* Store the rows kept for whichever table (see KeptRows) */
void
fractam_flush_kept_rows(void)
{
	Relation	rel;

	if (kept.relid == InvalidOid)
		return;
	rel = try_relation_open(kept.relid, NoLock);
	if (rel == NULL)
	{
		forget_kept_rows();
		return;
	}
	fractam_flush_kept_rows_of(rel);
	relation_close(rel, NoLock);
}

/* The rows kept for rel go with its file (TRUNCATE, a new file) */
void
fractam_forget_kept_rows_of(Relation rel)
{
	if (kept.relid == RelationGetRelid(rel))
		forget_kept_rows();
}

/* finish_bulk_insert: the end of a load (CREATE TABLE AS, a rewrite, COPY) */
void
fractam_finish_bulk_insert(Relation rel, int options)
{
	fractam_flush_kept_rows_if(rel);
}

void
fractam_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
					 int options, struct BulkInsertStateData *bistate)
{
	if (keeps_rows(rel, options, bistate))
	{
		keep_row(rel, slot, cid, options);
		return;
	}
	fractam_flush_kept_rows_if(rel);
	insert_one(rel, slot, cid, options, false, 0);
}

void
fractam_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
								 CommandId cid, int options,
								 struct BulkInsertStateData *bistate,
								 uint32 specToken)
{
	fractam_flush_kept_rows_if(rel);
	insert_one(rel, slot, cid, options, true, specToken);
}

void
fractam_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
					 CommandId cid, int options,
					 struct BulkInsertStateData *bistate)
{
	TransactionId xid = GetCurrentTransactionId();
	Size		compact_limit = fractam_compact_limit(rel);
	char	  **items = palloc(nslots * sizeof(char *));
	Size	   *lens = palloc(nslots * sizeof(Size));
	FtTree		tree;
	int			i;
	int			stored = 0;

	fractam_flush_kept_rows_if(rel);
	/* a serializable reader of the whole table conflicts with any insert */
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);

	/*
	 * Row ids ascend: at the right edge a leaf's worth goes in at once, and
	 * the leaves filled go through the load's buffer ring, as heap's pages
	 * do (bistate is NULL when heap would not use a ring either).
	 */
	fractam_table_tree(rel, &tree);
	if (bistate)
		tree.strategy = bistate->strategy;
	/* versions of this transaction's own (see fractam_vm_leaf_insert_hook) */
	if (!(options & HEAP_INSERT_FROZEN))
		((FractamTableCache *) tree.owner)->vm_own_xid = xid;
	for (i = 0; i < nslots; i++)
	{
		bool		last_in_range;

		items[i] = number_new_version(rel, slots[i], xid, cid, options,
									  compact_limit, CurrentMemoryContext,
									  &lens[i], &last_in_range);
		/* a range's versions are stored before the next range is taken */
		if (last_in_range)
		{
			ft_insert_ascending(&tree, items + stored, lens + stored,
								i + 1 - stored);
			stored = i + 1;
		}
	}
	if (stored < nslots)
		ft_insert_ascending(&tree, items + stored, lens + stored,
							nslots - stored);
	((FractamTableCache *) tree.owner)->vm_own_xid = InvalidTransactionId;
	pgstat_count_heap_insert(rel, nslots);

	for (i = 0; i < nslots; i++)
		pfree(items[i]);
	pfree(items);
	pfree(lens);
}

/*
 * Find the version at tid and lock its leaf exclusively; a missing version
 * means the caller's TID is wrong (the executor only passes TIDs it read).
 */
static void
find_version(Relation rel, FtTree *tree, ItemPointer tid, FtItemRef *ref)
{
	fractam_table_tree(rel, tree);
	if (!fractam_find_version(tree, fractam_tid_rowid(tid),
							  BUFFER_LOCK_EXCLUSIVE, ref))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("row version (%u,%u) of table \"%s\" does not exist",
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(rel))));
}

/*
 * Speculative insertion (INSERT ... ON CONFLICT): confirm the version (its
 * link becomes itself) or kill it (no xmin: invisible to everyone, as
 * heap_abort_speculative does).
 */
void
fractam_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
								   uint32 specToken, bool succeeded)
{
	FtTree		tree;
	FtItemRef	ref;
	FractamHeaderCopy	h;
	HeapTuple	toastcopy = NULL;

	find_version(rel, &tree, &slot->tts_tid, &ref);
	memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
	Assert(HeapTupleHeaderIsSpeculative(&h.hdr));
	if (succeeded)
		h.hdr.t_ctid = slot->tts_tid;
	else
	{
		if (HeapTupleHeaderHasExternal(fractam_item_tuple(ref.item)))
			toastcopy = fractam_item_copy(rel, ref.item, ref.len);
		h.hdr.t_infomask &= ~(HEAP_XMAX_BITS | HEAP_MOVED);
		h.hdr.t_infomask2 &= ~HEAP_KEYS_UPDATED;
		HeapTupleHeaderSetXmin(&h.hdr, InvalidTransactionId);
		h.hdr.t_ctid = slot->tts_tid;
	}
	if (!succeeded)
		fractam_vm_clear(rel, fractam_item_rowid(ref.item));
	ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data, FRACTAM_PATCH_LEN);
	ft_item_release(&ref);
	/* before the TOAST chunks go, as heap_abort_speculative logs */
	fractam_log_speculative_end(rel, succeeded);
	if (toastcopy)
	{
		heap_toast_delete(rel, toastcopy, true);
		heap_freetuple(toastcopy);
	}
}

/*
 * Does an update leave these columns alone (attrs as RelationGetIndexAttrBitmap
 * returns them)?  Values compare by their bytes, as heap_attr_equals does;
 * a system column other than tableoid counts as changed, as in heap.  With
 * external_changed, an old value stored out of line counts as changed too
 * (what logical decoding asks of the replica identity, as heap does).
 */
bool
fractam_columns_intact(Relation rel, Bitmapset *attrs, HeapTuple oldtup,
					   HeapTuple newtup, bool external_changed)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			member = -1;

	while ((member = bms_next_member(attrs, member)) >= 0)
	{
		AttrNumber	attnum = member + FirstLowInvalidHeapAttributeNumber;
		Datum		v1,
					v2;
		bool		null1,
					null2;
		Form_pg_attribute att;

		if (attnum <= 0)
		{
			if (attnum != TableOidAttributeNumber)
				return false;
			continue;
		}
		v1 = heap_getattr(oldtup, attnum, desc, &null1);
		v2 = heap_getattr(newtup, attnum, desc, &null2);
		att = TupleDescAttr(desc, attnum - 1);
		if (null1 != null2)
			return false;
		if (null1)
			continue;
		if (external_changed && att->attlen == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(v1)))
			return false;
		if (!datumIsEqual(v1, v2, att->attbyval, att->attlen))
			return false;
	}
	return true;
}

/*
 * Does the update leave the row's key columns alone (those of unique
 * indexes a foreign key can reference, heap's INDEX_ATTR_BITMAP_KEY)?
 * Then FOR KEY SHARE lockers may stay, as with heap.  key_attrs comes from
 * RelationGetIndexAttrBitmap, taken before the leaf was locked (it may
 * open the indexes); old is the version in its leaf.
 */
static bool
key_columns_intact(Relation rel, Bitmapset *key_attrs, HeapTupleHeader old,
				   uint32 oldlen, HeapTuple newtup)
{
	HeapTupleData oldtup;

	oldtup.t_data = old;
	oldtup.t_len = oldlen;
	oldtup.t_tableOid = RelationGetRelid(rel);
	ItemPointerSetInvalid(&oldtup.t_self);
	return fractam_columns_intact(rel, key_attrs, &oldtup, newtup, false);
}

/*
 * Find the version at tid and check that this transaction may change it,
 * waiting for other transactions' locks and changes that conflict with
 * *mode to end if wait.  For an update (newtup given), *mode comes out as
 * LockTupleNoKeyExclusive when the key columns stay, else Exclusive.  On
 * TM_Ok the leaf stays locked in *ref; otherwise it is released and tmfd
 * filled.  The caller releases the tuple lock (*have_tuplock) at the end.
 */
static TM_Result
lock_for_change(Relation rel, FtTree *tree, ItemPointer tid, CommandId cid,
				Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				FtItemRef *ref, XLTW_Oper oper, HeapTuple newtup,
				Bitmapset *key_attrs, LockTupleMode *mode, bool *have_tuplock)
{
	bool		mode_known = newtup == NULL;

	/* a MultiXact may be needed: be counted before taking part in one */
	MultiXactIdSetOldestMember();
	for (;;)
	{
		HeapTupleHeader hdr;
		TM_Result	result;

		find_version(rel, tree, tid, ref);
		hdr = fractam_item_tuple(ref->item);
		if (!mode_known)
		{
			*mode = key_columns_intact(rel, key_attrs, hdr,
									   ref->len - FRACTAM_ROWID_SIZE, newtup) ?
				LockTupleNoKeyExclusive : LockTupleExclusive;
			mode_known = true;
		}
		result = fractam_tuple_satisfies_update(hdr, tid, cid);
		if (result == TM_Invisible)
		{
			ft_item_release(ref);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("attempted to %s invisible tuple",
							oper == XLTW_Delete ? "delete" : "update")));
		}
		if (result == TM_BeingModified)
		{
			FractamHolders holders;

			fractam_holders(hdr, *mode, &holders);
			/*
			 * Our own locks, or lockers the change may stay beside; or the
			 * holder ended since the check above (an updater that has
			 * committed must not be joined): judge the version again.
			 */
			if (holders.nxids == 0)
			{
				result = fractam_tuple_satisfies_update(hdr, tid, cid);
				if (result == TM_BeingModified)
					result = TM_Ok;
			}
			else if (wait)
			{
				/* releases the leaf; then look again */
				fractam_wait_for_holders(rel, tid, ref, &holders, *mode, oper,
										 have_tuplock);
				pfree(holders.xids);
				continue;
			}
			if (holders.xids)
				pfree(holders.xids);
		}
		if (result == TM_Ok && crosscheck != InvalidSnapshot &&
			!fractam_tuple_visible(hdr, crosscheck))
			result = TM_Updated;
		if (result != TM_Ok)
		{
			tmfd->ctid = hdr->t_ctid;
			tmfd->xmax = HeapTupleHeaderGetUpdateXid(hdr);
			tmfd->cmax = result == TM_SelfModified ?
				HeapTupleHeaderGetCmax(hdr) : InvalidCommandId;
			ft_item_release(ref);
			return result;
		}
		return TM_Ok;
	}
}

/*
 * The header of a version this transaction deletes or replaces (h holds
 * its current header; cid is already adjusted for combo command ids): the
 * updater joins the holders that may stay (table_xmax.c).
 */
static void
set_deleter(FractamHeaderCopy *h, TransactionId xid, LockTupleMode mode,
			CommandId cid, bool iscombo, ItemPointer next)
{
	FractamXmax x;

	fractam_compose_xmax(&h->hdr, xid, fractam_status_of_mode(mode, true), &x);
	fractam_set_xmax(&h->hdr, &x);
	HeapTupleHeaderSetCmax(&h->hdr, cid, iscombo);
	if (next)
		h->hdr.t_ctid = *next;
}

TM_Result
fractam_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
					 Snapshot snapshot, Snapshot crosscheck, bool wait,
					 TM_FailureData *tmfd, bool changingPart)
{
	TransactionId xid = GetCurrentTransactionId();
	FtTree		tree;
	FtItemRef	ref;
	FractamHeaderCopy	h;
	bool		iscombo;
	HeapTuple	toastcopy = NULL;
	TM_Result	result;
	LockTupleMode mode = LockTupleExclusive;
	bool		have_tuplock = false;
	Bitmapset  *idattrs;
	HeapTuple	logold = NULL;
	bool		logical = RelationIsLogicallyLogged(rel);

	fractam_flush_kept_rows_if(rel);
	CheckForSerializableConflictIn(rel, tid, ItemPointerGetBlockNumber(tid));
	/* before any leaf is locked: it may open the indexes */
	idattrs = fractam_logical_identity_columns(rel);
	result = lock_for_change(rel, &tree, tid, cid, crosscheck, wait, tmfd,
							 &ref, XLTW_Delete, NULL, NULL, &mode,
							 &have_tuplock);
	if (result != TM_Ok)
	{
		fractam_release_tuplock(rel, tid, mode, &have_tuplock);
		bms_free(idattrs);
		return result;
	}
	if (logical && (rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL ||
					!bms_is_empty(idattrs)))
		logold = fractam_item_copy(rel, ref.item, ref.len);

	memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
	if (HeapTupleHeaderHasExternal(fractam_item_tuple(ref.item)) &&
		(rel->rd_rel->relkind == RELKIND_RELATION ||
		 rel->rd_rel->relkind == RELKIND_MATVIEW))
		toastcopy = fractam_item_copy(rel, ref.item, ref.len);
	HeapTupleHeaderAdjustCmax(&h.hdr, &cid, &iscombo);
	set_deleter(&h, xid, mode, cid, iscombo, tid);
	if (changingPart)
		HeapTupleHeaderSetMovedPartitions(&h.hdr);
	fractam_vm_clear(rel, fractam_item_rowid(ref.item));
	ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data, FRACTAM_PATCH_LEN);
	ft_item_release(&ref);
	fractam_release_tuplock(rel, tid, mode, &have_tuplock);

	/* before its TOAST values go: the old key may need them inlined */
	if (logical)
		fractam_log_delete(rel, logold, idattrs);
	if (logold)
		heap_freetuple(logold);
	bms_free(idattrs);
	if (toastcopy)
	{
		heap_toast_delete(rel, toastcopy, false);
		heap_freetuple(toastcopy);
	}
	pgstat_count_heap_delete(rel);
	return TM_Ok;
}

TM_Result
fractam_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
					 CommandId cid, Snapshot snapshot, Snapshot crosscheck,
					 bool wait, TM_FailureData *tmfd,
					 LockTupleMode *lockmode, bool *update_indexes)
{
	TransactionId xid = GetCurrentTransactionId();
	bool		shouldFree = true;
	HeapTuple	newtup = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	HeapTuple	heaptup;
	HeapTuple	oldcopy = NULL;
	FtTree		tree;
	FtItemRef	ref;
	FractamHeaderCopy	h;
	FractamXmax carried;
	bool		iscombo;
	CommandId	cmax = cid;
	FtRowId		newrowid;
	ItemPointerData newtid;
	TM_Result	result;
	TransactionId temp_lock_xid = InvalidTransactionId;
	bool		have_tuplock = false;
	Bitmapset  *key_attrs;
	Bitmapset  *idattrs;
	HeapTuple	logold = NULL;

	fractam_flush_kept_rows_if(rel);
	/* every update gets a new TID, so every index needs an entry */
	*update_indexes = true;
	*lockmode = LockTupleExclusive;
	slot->tts_tableOid = RelationGetRelid(rel);
	newtup->t_tableOid = slot->tts_tableOid;

	/* before any leaf is locked: it may lock the metapage */
	newrowid = fractam_next_rowid(rel);
	fractam_rowid_tid(newrowid, &newtid);

	CheckForSerializableConflictIn(rel, otid, ItemPointerGetBlockNumber(otid));
	/* before any leaf is locked: it may open the indexes */
	key_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	idattrs = fractam_logical_identity_columns(rel);
	result = lock_for_change(rel, &tree, otid, cid, crosscheck, wait, tmfd,
							 &ref, XLTW_Update, newtup, key_attrs, lockmode,
							 &have_tuplock);
	bms_free(key_attrs);
	if (result != TM_Ok)
	{
		fractam_release_tuplock(rel, otid, *lockmode, &have_tuplock);
		bms_free(idattrs);
		if (shouldFree)
			pfree(newtup);
		return result;
	}

	if ((HeapTupleHeaderHasExternal(fractam_item_tuple(ref.item)) ||
		 HeapTupleHasExternal(newtup) ||
		 newtup->t_len > TOAST_TUPLE_THRESHOLD) &&
		(rel->rd_rel->relkind == RELKIND_RELATION ||
		 rel->rd_rel->relkind == RELKIND_MATVIEW))
	{
		FractamXmax x;

		/*
		 * The toaster reads and writes the TOAST table, which must not
		 * happen with the leaf locked.  Lock the old version for this
		 * transaction first, in the update's strength (as heap_update
		 * does), so that no other writer changes it meanwhile, then toast,
		 * then find it again.  That lock is not carried to the new version.
		 */
		oldcopy = fractam_item_copy(rel, ref.item, ref.len);
		memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
		if (!(h.hdr.t_infomask & HEAP_XMAX_INVALID) &&
			HEAP_XMAX_IS_LOCKED_ONLY(h.hdr.t_infomask) &&
			!(h.hdr.t_infomask & HEAP_XMAX_IS_MULTI) &&
			TransactionIdEquals(HeapTupleHeaderGetRawXmax(&h.hdr), xid))
			temp_lock_xid = InvalidTransactionId;	/* our lock was there */
		else
			temp_lock_xid = xid;
		fractam_compose_xmax(&h.hdr, xid,
							 fractam_status_of_mode(*lockmode, false), &x);
		fractam_set_xmax(&h.hdr, &x);
		fractam_vm_clear_frozen(rel, fractam_item_rowid(ref.item));
		ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data,
					  FRACTAM_PATCH_LEN);
		ft_item_release(&ref);

		heaptup = prepare_version(rel, newtup, xid, cid, 0, oldcopy);
		find_version(rel, &tree, otid, &ref);
	}
	else
		heaptup = prepare_version(rel, newtup, xid, cid, 0, NULL);

	memcpy(h.data, ref.item + FRACTAM_PATCH_START, FRACTAM_PATCH_LEN);
	if (RelationIsLogicallyLogged(rel) &&
		(rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL ||
		 !bms_is_empty(idattrs)))
		logold = oldcopy ? heap_copytuple(oldcopy) :
			fractam_item_copy(rel, ref.item, ref.len);

	/*
	 * The row locks that stay carry over to the new version, as heap_update
	 * does: other transactions' FOR KEY SHARE locks beside a non-key
	 * update, and this transaction's own (an ON CONFLICT DO UPDATE's new
	 * version shows this transaction in xmax).
	 */
	fractam_carried_locks(&h.hdr, temp_lock_xid, &carried);
	fractam_set_xmax(heaptup->t_data, &carried);

	HeapTupleHeaderAdjustCmax(&h.hdr, &cmax, &iscombo);
	set_deleter(&h, xid, *lockmode, cmax, iscombo, &newtid);
	fractam_vm_clear(rel, fractam_item_rowid(ref.item));
	ft_item_patch(&tree, &ref, FRACTAM_PATCH_START, h.data, FRACTAM_PATCH_LEN);
	ft_item_release(&ref);
	fractam_release_tuplock(rel, otid, *lockmode, &have_tuplock);

	heaptup->t_self = newtid;
	heaptup->t_data->t_ctid = newtid;
	fractam_store_version(rel, newrowid, heaptup, true);
	fractam_log_update(rel, logold, newtup, heaptup, idattrs);
	if (logold)
		heap_freetuple(logold);
	bms_free(idattrs);
	pgstat_count_heap_update(rel, false);

	slot->tts_tid = newtid;
	newtup->t_self = newtid;
	if (heaptup != newtup)
		heap_freetuple(heaptup);
	if (oldcopy)
		heap_freetuple(oldcopy);
	if (shouldFree)
		pfree(newtup);
	return TM_Ok;
}
