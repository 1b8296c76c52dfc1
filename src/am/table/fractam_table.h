/*-------------------------------------------------------------------------
 *
 * fractam_table.h
 *	  The fractam table access method: rows as items of a fractal tree.
 *
 * A table is one unbuffered tree (src/ft) whose items are row versions
 * keyed by a row id.  Row ids map to virtual, dense TIDs: row id r is
 * (r / FRACTAM_ROWS_PER_BLOCK, r % FRACTAM_ROWS_PER_BLOCK + 1), so a small
 * table shows heap's ctids (0,1), (0,2), ... and offsets stay within
 * MaxHeapTuplesPerPage (bitmap scans work).  Every version takes the next
 * row id (an UPDATE appends, as in heap).  Row ids come from the
 * metapage's counter: one at a time while the table is in its first
 * pseudo-block, then a backend takes the rest of a pseudo-block
 * (FRACTAM_ROWS_PER_BLOCK ids) at a time, like heap's per-backend target
 * block.
 *
 * A row version item is the row id (8 bytes, big-endian) followed by the
 * tuple in one of three forms, named by the key's first byte (row ids stay
 * below 2^56; see "Row version items" below and table_format.c): the
 * tuple exactly as heap lays it out (header, null bitmap, data), or a
 * compact header that holds only what a version nobody has deleted or
 * locked needs, or the settled ~2-byte header of a version visible to
 * everyone.  See README "Table access method" for what is not done yet.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRACTAM_TABLE_H
#define FRACTAM_TABLE_H

#include "access/heapam.h"
#include "access/multixact.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "ft/ft.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#define FRACTAM_ROWS_PER_BLOCK	MaxHeapTuplesPerPage

/* pseudo-blocks a backend takes from the row-id counter at once, at most */
#define FRACTAM_MAX_RANGE_BLOCKS	8
#define FRACTAM_ROWID_SIZE		8
/*
 * pseudo-blocks 0 .. MaxBlockNumber - 1, so that their count fits a
 * BlockNumber below InvalidBlockNumber (RelationGetNumberOfBlocks); row ids
 * beyond are refused
 */
#define FRACTAM_MAX_BLOCKS		((uint64) MaxBlockNumber)
#define FRACTAM_ROWID_LIMIT		(FRACTAM_MAX_BLOCKS * FRACTAM_ROWS_PER_BLOCK)

/* table_handler.c: settings */
extern double fractam_debug_first_rowid;

typedef uint64 FtRowId;

static inline FtRowId
fractam_tid_rowid(ItemPointer tid)
{
	return (FtRowId) ItemPointerGetBlockNumberNoCheck(tid) * FRACTAM_ROWS_PER_BLOCK +
		(ItemPointerGetOffsetNumberNoCheck(tid) - 1);
}

static inline void
fractam_rowid_tid(FtRowId rowid, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK),
				   (OffsetNumber) (rowid % FRACTAM_ROWS_PER_BLOCK + 1));
}

/* is tid one that a row id can have (offset within a pseudo-block)? */
static inline bool
fractam_tid_is_valid(ItemPointer tid)
{
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	return off >= 1 && off <= FRACTAM_ROWS_PER_BLOCK &&
		ItemPointerGetBlockNumberNoCheck(tid) != InvalidBlockNumber;
}

/*
 * Row version items.  The first byte of the key is the item's form; the
 * other seven are the row id, big-endian.  The comparator masks the form,
 * so an item keeps its place when its form changes.
 *
 * FRACTAM_ITEM_FULL: key, then the heap tuple (HeapTupleHeaderData at
 *   offset 8, MAXALIGNed in the page, so it is read and patched in place).
 *   Dead sets (below) also have this form.
 * FRACTAM_ITEM_COMPACT: key, info word, xmin, cmin (FractamCompactHeader,
 *   10 bytes, unaligned), the null bitmap if any, then the data bytes as
 *   heap stores them after t_hoff.  A version as INSERT, COPY and UPDATE
 *   write it: xmax invalid, t_ctid its own TID, no combo command id.
 *   VACUUM freezes it in place (FRACTAM_INFO_FROZEN, the raw xmin stays).
 * FRACTAM_ITEM_SETTLED: key, info word, bitmap, data.  A version visible to
 *   everyone with no xmax: it reads as xmin FrozenTransactionId, cmin 0.
 *   Written where a leaf is rewritten anyway (a prune, VACUUM FULL and
 *   CLUSTER, COPY FREEZE).
 *
 * A version is changed only in the full form: before a delete, an update
 * or a row lock writes its header, the item is expanded in place
 * (fractam_find_version with an exclusive lock).  The compact and settled
 * forms are written only into trees of format 4 and later, which builds
 * that know only full items refuse (ft_read_meta).
 */
#define FRACTAM_ITEM_FULL		0x00
#define FRACTAM_ITEM_COMPACT	0x01
#define FRACTAM_ITEM_SETTLED	0x02
#define FRACTAM_ROWID_BITS		56
#define FRACTAM_ROWID_MASK		((UINT64CONST(1) << FRACTAM_ROWID_BITS) - 1)

/* the info word of the compact and settled forms (uint16, unaligned) */
#define FRACTAM_INFO_NATTS		0x07FF	/* = HEAP_NATTS_MASK */
#define FRACTAM_INFO_HASNULL	0x0800
#define FRACTAM_INFO_VARWIDTH	0x1000
#define FRACTAM_INFO_EXTERNAL	0x2000
#define FRACTAM_INFO_UPDATED	0x4000	/* HEAP_UPDATED */
#define FRACTAM_INFO_FROZEN		0x8000	/* compact: xmin frozen */

#define FRACTAM_INFO_OFF		FRACTAM_ROWID_SIZE
#define FRACTAM_COMPACT_XMIN_OFF	(FRACTAM_INFO_OFF + 2)
#define FRACTAM_COMPACT_CMIN_OFF	(FRACTAM_INFO_OFF + 6)
#define FRACTAM_COMPACT_HDRSZ	10	/* info, xmin, cmin */
/* leaf fill of VACUUM FULL and CLUSTER: room to expand a tenth of a leaf */
#define FRACTAM_REWRITE_FILLFACTOR	90
#define FRACTAM_SETTLED_HDRSZ	2	/* info */

static inline void
fractam_rowid_key_form(FtRowId rowid, uint8 form, char *key)
{
	uint64		be = pg_hton64(rowid | ((uint64) form << FRACTAM_ROWID_BITS));

	StaticAssertStmt(FRACTAM_ROWID_SIZE == sizeof(uint64),
					 "row ids are 8-byte keys");
	memcpy(key, &be, sizeof(be));
}

/*
 * Row ids are stored big-endian.  (A byte loop here was a fifth of a
 * sequential scan's CPU: the scan decodes each item's row id several
 * times.)
 */
static inline void
fractam_rowid_key(FtRowId rowid, char *key)
{
	fractam_rowid_key_form(rowid, FRACTAM_ITEM_FULL, key);
}

static inline FtRowId
fractam_item_rowid(const char *item)
{
	uint64		be;

	memcpy(&be, item, sizeof(be));
	return pg_ntoh64(be) & FRACTAM_ROWID_MASK;
}

static inline uint8
fractam_item_form(const char *item)
{
	return (uint8) item[0];
}

static inline uint16
fractam_item_info(const char *item)
{
	uint16		info;

	Assert(fractam_item_form(item) != FRACTAM_ITEM_FULL);
	memcpy(&info, item + FRACTAM_INFO_OFF, sizeof(info));
	return info;
}

static inline HeapTupleHeader
fractam_item_tuple(const char *item)
{
	return (HeapTupleHeader) (item + FRACTAM_ROWID_SIZE);
}

/*
 * A dead-row record ("dead set"): the row ids of up to FRACTAM_DEADSET_ROWS
 * versions that a full leaf dropped because no snapshot could see them any
 * more (table_prune.c), while index entries may still point to them.  The
 * item is the first row id's key and a bitmap: bit i stands for row id
 * key + i.  Its row ids never cross a pseudo-block boundary, so every row
 * id of a pseudo-block is found among the items keyed inside it.  VACUUM
 * collects the row ids like dead versions' and clears the bits once their
 * index entries are gone.  It is shorter than any version (a version holds
 * at least a heap tuple header), which is how readers tell them apart.
 */
#define FRACTAM_DEADSET_ROWS	128
#define FRACTAM_DEADSET_SIZE	(FRACTAM_ROWID_SIZE + FRACTAM_DEADSET_ROWS / 8)

static inline bool
fractam_item_is_deadset(const char *item, Size len)
{
	StaticAssertStmt(FRACTAM_DEADSET_SIZE <
					 FRACTAM_ROWID_SIZE + SizeofHeapTupleHeader,
					 "dead sets must be shorter than full row versions");
	return len == FRACTAM_DEADSET_SIZE &&
		fractam_item_form(item) == FRACTAM_ITEM_FULL;
}

static inline bool
fractam_deadset_has(const char *item, int i)
{
	const uint8 *bits = (const uint8 *) item + FRACTAM_ROWID_SIZE;

	return (bits[i / 8] & (1 << (i % 8))) != 0;
}

/* how many row ids a dead set holds */
static inline int
fractam_deadset_count(const char *item)
{
	return (int) pg_popcount(item + FRACTAM_ROWID_SIZE,
							 FRACTAM_DEADSET_ROWS / 8);
}

/*
 * The part of a version's header written in place (xmax, command id,
 * next-version link, infomask bits): everything before t_hoff.
 */
#define FRACTAM_PATCH_START		FRACTAM_ROWID_SIZE
#define FRACTAM_PATCH_LEN		offsetof(HeapTupleHeaderData, t_hoff)

/* A version's header, copied out of its leaf to be changed and patched */
typedef union FractamHeaderCopy
{
	HeapTupleHeaderData hdr;
	char		data[MAXALIGN(SizeofHeapTupleHeader)];
} FractamHeaderCopy;

/*
 * The header of a version in any form: in the leaf for the full form, else
 * decoded into *buf (which only the header fields fill, not t_bits).  For
 * the visibility rules, freezing and locking, which read only the header.
 */
extern void fractam_decode_header(Relation rel, const char *item,
								  HeapTupleHeader hdr);

static inline HeapTupleHeader
fractam_item_header(Relation rel, const char *item, FractamHeaderCopy *buf)
{
	if (likely(fractam_item_form(item) == FRACTAM_ITEM_FULL))
		return fractam_item_tuple(item);
	fractam_decode_header(rel, item, &buf->hdr);
	return &buf->hdr;
}

/* table_columns.c */
extern int	fractam_row_fields(FtTree *tree, const char *item, Size len,
							   FtRowField *fields);

/* table_format.c */
extern Size fractam_item_tuple_len(Relation rel, const char *item, Size len);
extern void fractam_item_to_tuple(Relation rel, const char *item, Size len,
								  HeapTupleHeader dst);
extern char *fractam_item_expand(const char *item, Size len, Size *newlen);
extern char *fractam_item_settle(const char *item, Size len, Size *newlen);
extern bool fractam_item_may_settle(const char *item, Size len,
									GlobalVisState *vistest,
									TransactionId *xmin);
extern bool fractam_item_freeze_patch(const char *item,
									  TransactionId freeze_limit,
									  FtVacuumPatch *patch);

/* fractam's storage parameters of a table (table_options.c) */
typedef struct FractamTableOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			fanout;
	int			compression_offset; /* "compression": the method's name */
	int			compression_level;	/* 0: the method's default */
	FtCodecId	codec;			/* resolved by load_defs, not a reloption */
} FractamTableOptions;

#define FRACTAM_TABLE_DEFAULT_FANOUT	16

/* Per-relation state of a backend (table_storage.c: not in rd_amcache) */
/* A leaf hint (table_storage.c, leaf_hint_slot): a leaf, and its buffer */
typedef struct FractamLeafHintSlot
{
	BlockNumber blkno;			/* InvalidBlockNumber: none */
	Buffer		buf;			/* where it was last found, or InvalidBuffer */
} FractamLeafHintSlot;

typedef struct FractamTableCache
{
	RelFileNode node;			/* the relation file it belongs to */
	bool		options_loaded; /* options valid (reset by invalidations) */
	FractamTableOptions options;
	FtRootCache rootcache;
	FtRowId		next_rowid;		/* this backend's range of row ids */
	FtRowId		end_rowid;
	uint32		range_blocks;	/* pseudo-blocks the next range from the
								 * counter spans (see rowid_grant) */
	LocalTransactionId range_lxid;	/* the transaction that took it */
	int			holding;		/* its slot in this backend's holdings
								 * (table_rowid_reuse.c), or -1 */
	FractamLeafHintSlot *leafhints; /* or NULL: see leaf_hint_slot */
	FtLeafHint	lastleaf;		/* the rightmost leaf, as edge_rowid last
								 * found it */
	uint32		nleafhints;		/* a power of 2 */
	int8		compact_forms;	/* -1 unknown; else may the tree hold
								 * compact and settled versions (format
								 * 4 and later)? */

	/*
	 * The visibility-map bits of a new version's pseudo-block, cleared once
	 * per transaction and pseudo-block (fractam_vm_leaf_insert_hook):
	 * own_xid is the transaction whose new version this backend is storing
	 * right now (else InvalidTransactionId), cleared_xid had its own
	 * version stored in pseudo-block cleared_block after clearing its bits.
	 */
	TransactionId vm_own_xid;
	TransactionId vm_cleared_xid;
	BlockNumber vm_cleared_block;
} FractamTableCache;

/* table_options.c */
typedef struct FractamTableOptionsWork FractamTableOptionsWork;
extern void fractam_table_options_init(void);
extern bool fractam_table_options_needs_rewrite(Node *stmt);
extern FractamTableOptionsWork *fractam_table_options_rewrite(Node *stmt);
extern FractamTableOptionsWork *fractam_table_options_capture(void);
extern void fractam_table_options_push(FractamTableOptionsWork *work);
extern void fractam_table_options_pop(FractamTableOptionsWork *work);
extern void fractam_table_options_apply(FractamTableOptionsWork *work);
extern Oid	fractam_table_options_relid(FractamTableOptionsWork *work);
extern void fractam_reloptions_update(Oid relid, List *set, List *reset);
extern void fractam_table_options_load(Relation rel,
									   FractamTableOptions *opts);
extern bool fractam_table_options_pending(Oid relid);

/* table_storage.c */
extern void fractam_table_tree(Relation rel, FtTree *tree);
extern FtRowId fractam_next_rowid(Relation rel);
extern FtRowId fractam_next_rowid_ex(Relation rel, bool *last_in_range);
extern uint64 fractam_rowid_limit(Relation rel);
extern void fractam_warn_rowids_running_out(Relation rel, uint64 end);
extern FtRowId fractam_rowid_end(Relation rel);
extern FtRowId fractam_rowid_first(Relation rel);
extern void fractam_forget_cache(Relation rel);
extern void fractam_table_cache_init(void);

/* table_rowid_reuse.c */
#define FRACTAM_MAX_ROWID_GAPS	1024
typedef struct FractamRowidGaps
{
	int			n;
	int			last;			/* the run added last, or -1 */
	struct
	{
		BlockNumber lo;
		BlockNumber hi;			/* InvalidBlockNumber: to the counter */
	}			range[FRACTAM_MAX_ROWID_GAPS];
} FractamRowidGaps;

extern int	fractam_rowid_holdings;
extern void fractam_rowid_reuse_init(void);
extern void fractam_rowids_check_ready(void);
extern void fractam_rowids_hold(FractamTableCache *cache, BlockNumber blk,
								BlockNumber nblks);
extern void fractam_rowids_release(FractamTableCache *cache);
extern bool fractam_rowids_reusable(Relation rel, uint64 tag);
extern void fractam_rowid_gaps_add(FractamRowidGaps *gaps, BlockNumber lo,
								   BlockNumber hi);
extern uint64 fractam_rowids_give_back(Relation rel, FractamRowidGaps *gaps);
extern uint64 fractam_rowids_in_use(Relation rel);
extern void fractam_rowids_verify_item(Relation rel, const FtSeqState *state,
									   FtRowId rowid, uint32 *next);
extern void fractam_rowids_verify_state(Relation rel, const FtSeqState *state);
extern bool fractam_find_version(FtTree *tree, FtRowId rowid, int access,
								 FtItemRef *ref);
extern bool fractam_scan_next_version(FtScan scan, const char **item,
									  Size *len);
extern HeapTuple fractam_item_copy(Relation rel, const char *item, Size len);
extern HeapTuple fractam_fetch_version(Relation rel, FtRowId rowid);
extern HeapTuple fractam_fetch_version_near(Relation rel, FtRowId rowid,
											FtLeafHint *hint);
extern char *fractam_version_item(FtRowId rowid, HeapTuple tup,
								  Size compact_limit, Size *len);
extern bool fractam_table_compact_forms(Relation rel);
extern Size fractam_compact_limit(Relation rel);
extern void fractam_store_version(Relation rel, FtRowId rowid, HeapTuple tup,
								  bool is_update);
extern void fractam_relation_set_new_filenode(Relation rel,
											  const RelFileNode *newrnode,
											  char persistence,
											  TransactionId *freezeXid,
											  MultiXactId *minmulti);
extern void fractam_relation_nontransactional_truncate(Relation rel);
extern void fractam_relation_copy_data(Relation rel, const RelFileNode *newrnode);
extern uint64 fractam_relation_size(Relation rel, ForkNumber forkNumber);
extern bool fractam_relation_needs_toast_table(Relation rel);
extern void fractam_relation_estimate_size(Relation rel, int32 *attr_widths,
										   BlockNumber *pages, double *tuples,
										   double *allvisfrac);

/* table_prune.c */
extern bool fractam_leaf_prune(FtTree *tree, char **items, Size *lens,
							   int nitems, bool rightmost,
							   FtLeafPrune *prune);

/* table_visibility.c */
extern bool fractam_tuple_visible(HeapTupleHeader tup, Snapshot snapshot);
extern HTSV_Result fractam_tuple_htsv(HeapTupleHeader tup,
									  TransactionId *dead_after);
extern void fractam_serializable_conflict_out(Relation rel,
											  HeapTupleHeader tup,
											  bool visible,
											  Snapshot snapshot);

/*
 * Serializable transactions: record the rw-conflict out that reading the
 * version may be.  Only they have a serializable transaction to record it
 * in, so the others, scanning millions of rows, skip the call (heap makes
 * it for every tuple to learn that).
 */
static inline void
fractam_check_serializable_out(Relation rel, HeapTupleHeader tup,
							   bool visible, Snapshot snapshot)
{
	if (IsolationIsSerializable())
		fractam_serializable_conflict_out(rel, tup, visible, snapshot);
}
extern bool fractam_tuple_surely_dead(HeapTupleHeader tup,
									  GlobalVisState *vistest);
extern TM_Result fractam_tuple_satisfies_update(HeapTupleHeader tup,
												ItemPointer self,
												CommandId curcid);

/* table_scan.c */
typedef struct FractamParallelScanDescData
{
	ParallelBlockTableScanDescData base;	/* hands out pseudo-blocks ... */
	FtRowId		first_rowid;	/* ... counted from this one's */
} FractamParallelScanDescData;
typedef FractamParallelScanDescData *FractamParallelScanDesc;

extern Size fractam_parallelscan_estimate(Relation rel);
extern const TupleTableSlotOps *fractam_slot_callbacks(Relation rel);
extern TableScanDesc fractam_scan_begin(Relation rel, Snapshot snapshot,
										int nkeys, struct ScanKeyData *key,
										ParallelTableScanDesc pscan,
										uint32 flags);
extern void fractam_scan_end(TableScanDesc scan);
extern void fractam_scan_rescan(TableScanDesc scan, struct ScanKeyData *key,
								bool set_params, bool allow_strat,
								bool allow_sync, bool allow_pagemode);
extern bool fractam_scan_getnextslot(TableScanDesc scan,
									 ScanDirection direction,
									 TupleTableSlot *slot);
extern void fractam_scan_set_rowid_range(TableScanDesc scan, FtRowId lo,
										 FtRowId hi);
extern void fractam_scan_set_tidrange(TableScanDesc scan, ItemPointer mintid,
									  ItemPointer maxtid);
extern bool fractam_scan_getnextslot_tidrange(TableScanDesc scan,
											  ScanDirection direction,
											  TupleTableSlot *slot);
extern Size fractam_parallelscan_initialize(Relation rel,
											ParallelTableScanDesc pscan);
extern struct IndexFetchTableData *fractam_index_fetch_begin(Relation rel);
extern void fractam_index_fetch_reset(struct IndexFetchTableData *data);
extern void fractam_index_fetch_end(struct IndexFetchTableData *data);
extern bool fractam_index_fetch_tuple(struct IndexFetchTableData *scan,
									  ItemPointer tid, Snapshot snapshot,
									  TupleTableSlot *slot,
									  bool *call_again, bool *all_dead);
extern bool fractam_tuple_fetch_row_version(Relation rel, ItemPointer tid,
											Snapshot snapshot,
											TupleTableSlot *slot);
extern bool fractam_tuple_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void fractam_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool fractam_tuple_satisfies_snapshot(Relation rel,
											 TupleTableSlot *slot,
											 Snapshot snapshot);
extern TransactionId fractam_index_delete_tuples(Relation rel,
												 TM_IndexDeleteOp *delstate);
extern bool fractam_scan_analyze_next_block(TableScanDesc scan,
											BlockNumber blockno,
											BufferAccessStrategy bstrategy);
extern bool fractam_scan_analyze_next_tuple(TableScanDesc scan,
											TransactionId OldestXmin,
											double *liverows,
											double *deadrows,
											TupleTableSlot *slot);
extern bool fractam_scan_bitmap_next_block(TableScanDesc scan,
										   struct TBMIterateResult *tbmres);
extern bool fractam_scan_bitmap_next_tuple(TableScanDesc scan,
										   struct TBMIterateResult *tbmres,
										   TupleTableSlot *slot);
extern bool fractam_scan_sample_next_block(TableScanDesc scan,
										   struct SampleScanState *scanstate);
extern bool fractam_scan_sample_next_tuple(TableScanDesc scan,
										   struct SampleScanState *scanstate,
										   TupleTableSlot *slot);

/* table_modify.c */
/* rows a load into a new table keeps before it stores them */
extern PGDLLIMPORT Oid fractam_kept_relid;
extern void fractam_flush_kept_rows(void);
extern void fractam_flush_kept_rows_of(Relation rel);
extern void fractam_forget_kept_rows_of(Relation rel);
extern void fractam_finish_bulk_insert(Relation rel, int options);

/* Store rel's kept rows, if any, before anything else reaches rel */
static inline void
fractam_flush_kept_rows_if(Relation rel)
{
	if (unlikely(fractam_kept_relid == RelationGetRelid(rel)))
		fractam_flush_kept_rows_of(rel);
}

extern void fractam_tuple_insert(Relation rel, TupleTableSlot *slot,
								 CommandId cid, int options,
								 struct BulkInsertStateData *bistate);
extern void fractam_tuple_insert_speculative(Relation rel,
											 TupleTableSlot *slot,
											 CommandId cid, int options,
											 struct BulkInsertStateData *bistate,
											 uint32 specToken);
extern void fractam_tuple_complete_speculative(Relation rel,
											   TupleTableSlot *slot,
											   uint32 specToken,
											   bool succeeded);
extern void fractam_multi_insert(Relation rel, TupleTableSlot **slots,
								 int nslots, CommandId cid, int options,
								 struct BulkInsertStateData *bistate);
/* table_modify.c, table_logical.c */
extern bool fractam_columns_intact(Relation rel, Bitmapset *attrs,
								   HeapTuple oldtup, HeapTuple newtup,
								   bool external_changed);
extern Bitmapset *fractam_logical_identity_columns(Relation rel);
extern void fractam_log_insert(Relation rel, HeapTuple newtup);
extern void fractam_log_speculative(Relation rel, HeapTuple newtup);
extern void fractam_log_speculative_end(Relation rel, bool confirmed);
extern void fractam_log_update(Relation rel, HeapTuple oldtup,
							   HeapTuple newtup, HeapTuple stored,
							   Bitmapset *idattrs);
extern void fractam_log_delete(Relation rel, HeapTuple oldtup,
							   Bitmapset *idattrs);

extern TM_Result fractam_tuple_delete(Relation rel, ItemPointer tid,
									  CommandId cid, Snapshot snapshot,
									  Snapshot crosscheck, bool wait,
									  TM_FailureData *tmfd,
									  bool changingPart);
extern TM_Result fractam_tuple_update(Relation rel, ItemPointer otid,
									  TupleTableSlot *slot, CommandId cid,
									  Snapshot snapshot, Snapshot crosscheck,
									  bool wait, TM_FailureData *tmfd,
									  LockTupleMode *lockmode,
									  bool *update_indexes);

/* table_xmax.c: the holders of a version (its xmax members) */
typedef struct FractamHolders
{
	TransactionId *xids;		/* running others in the way */
	int			nxids;
	int			own;			/* our strongest lock mode, -1 if none */
} FractamHolders;

/* An xmax with its infomask bits, as table_xmax.c composes it */
typedef struct FractamXmax
{
	TransactionId xmax;
	uint16		infomask;		/* bits within HEAP_XMAX_BITS */
	uint16		infomask2;		/* HEAP_KEYS_UPDATED or 0 */
} FractamXmax;

extern LockTupleMode fractam_mode_of_status(MultiXactStatus status);
extern MultiXactStatus fractam_status_of_mode(LockTupleMode mode,
											  bool is_update);
extern void fractam_holders(HeapTupleHeader hdr, LockTupleMode mode,
							FractamHolders *out);
extern void fractam_compose_xmax(HeapTupleHeader hdr, TransactionId xid,
								 MultiXactStatus status, FractamXmax *out);
extern void fractam_carried_locks(HeapTupleHeader hdr, TransactionId skip_xid,
								  FractamXmax *out);
extern void fractam_set_xmax(HeapTupleHeader hdr, const FractamXmax *x);
extern TransactionId fractam_updater(HeapTupleHeader hdr, bool *key_update);

/* table_lock.c */
extern void fractam_wait_for_holders(Relation rel, ItemPointer tid,
									 FtItemRef *ref, FractamHolders *holders,
									 LockTupleMode mode, XLTW_Oper oper,
									 bool *have_tuplock);
extern void fractam_release_tuplock(Relation rel, ItemPointer tid,
									LockTupleMode mode, bool *have_tuplock);
extern TM_Result fractam_tuple_lock(Relation rel, ItemPointer tid,
									Snapshot snapshot, TupleTableSlot *slot,
									CommandId cid, LockTupleMode mode,
									LockWaitPolicy wait_policy, uint8 flags,
									TM_FailureData *tmfd);

/* table_build.c */
extern double fractam_index_build_range_scan(Relation table_rel,
											 Relation index_rel,
											 struct IndexInfo *index_info,
											 bool allow_sync, bool anyvisible,
											 bool progress,
											 BlockNumber start_blockno,
											 BlockNumber numblocks,
											 IndexBuildCallback callback,
											 void *callback_state,
											 TableScanDesc scan);
extern void fractam_index_validate_scan(Relation table_rel, Relation index_rel,
										struct IndexInfo *index_info,
										Snapshot snapshot,
										struct ValidateIndexState *state);
extern void fractam_relation_copy_for_cluster(Relation OldTable,
											  Relation NewTable,
											  Relation OldIndex, bool use_sort,
											  TransactionId OldestXmin,
											  TransactionId *xid_cutoff,
											  MultiXactId *multi_cutoff,
											  double *num_tuples,
											  double *tups_vacuumed,
											  double *tups_recently_dead);

/* table_freeze.c */
extern bool fractam_freeze_header(TransactionId freeze_limit,
								  HeapTupleHeader hdr, HeapTupleHeader frz);
extern void fractam_note_oldest(HeapTupleHeader hdr, TransactionId *minxid,
								MultiXactId *minmulti);
extern void fractam_verify_frozen(Relation rel);

/* table_vacuum.c */
extern void fractam_relation_vacuum(Relation rel, struct VacuumParams *params,
									BufferAccessStrategy bstrategy);

/* table_vm.c */
extern void fractam_vm_clear(Relation rel, FtRowId rowid);
extern void fractam_vm_clear_frozen(Relation rel, FtRowId rowid);
extern bool fractam_vm_range_marked(Relation rel, FtRowId first, FtRowId end,
									uint8 flags, Buffer *vmbuf);
extern void fractam_vm_leaf_insert_hook(FtTree *tree, const char *item,
										Size len);
extern void fractam_vm_cover(Relation rel, FtRowId last_rowid);
extern BlockNumber fractam_vm_vacuum(Relation rel, struct FractamRowidGaps *gaps,
									 TransactionId oldest_xmin,
									 uint8 skip,
									 BufferAccessStrategy bstrategy);
extern void fractam_vm_verify(Relation rel);

/* table_stats.c */
typedef struct FractamTableCounts
{
	uint64		rowids_used;	/* handed out (the metapage's counter) */
	uint64		rowids_left;	/* before FRACTAM_ROWID_LIMIT */
	uint64		live;			/* versions visible to new snapshots */
	uint64		dead;			/* removable by VACUUM now */
	uint64		recently_dead;	/* deleted, still visible to some */
	uint64		in_progress;	/* insert or delete in progress */
	uint64		file_bytes;		/* main fork */
	uint64		forms[3];		/* versions stored full, compact, settled */
} FractamTableCounts;

extern void fractam_table_counts(Relation rel, FractamTableCounts *counts);

/* table_executor.c */
struct QueryDesc;
extern void fractam_table_prepare_plan(struct QueryDesc *queryDesc);

/* table_partition.c (called by the utility hook) */
extern bool fractam_partition_needs_rewrite(Node *stmt);
extern void fractam_partition_rewrite(Node *stmt, RangeVar **mark,
									  bool *mark_on);
extern void fractam_partition_mark(Oid relid, bool on);

/* table_handler.c */
extern void fractam_table_init(void);
extern Datum fractam_table_handler(PG_FUNCTION_ARGS);
extern bool fractam_is_table(Relation rel);

#endif							/* FRACTAM_TABLE_H */
