/*-------------------------------------------------------------------------
 *
 * table_storage.c
 *	  A fractam table's tree, its row ids, and its relation files.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "am/table/fractam_table.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* Items compare by their row id, the first FRACTAM_ROWID_SIZE bytes */
static int
rowid_compare(void *arg, const char *a, Size alen, const char *b, Size blen)
{
	FtRowId		x;
	FtRowId		y;

	Assert(alen >= FRACTAM_ROWID_SIZE && blen >= FRACTAM_ROWID_SIZE);
	/* the order of the big-endian bytes, without a call to memcmp */
	x = fractam_item_rowid(a);
	y = fractam_item_rowid(b);
	return (x > y) - (x < y);
}

/*
 * FtTree.sharedcols for a table: do two row ids lie in the same
 * pseudo-block (1) or not (0)?  A new version placed right before a row id
 * of another pseudo-block, after a run of its own, is an append point: a
 * backend filling a range of row ids VACUUM gave back in front of the
 * table's oldest rows, or one filling the pseudo-block it holds in front of
 * another backend's (each holds a pseudo-block's range at a time,
 * table_rowid_reuse.c).  The leaf split then cuts right after it
 * (ft_flush.c append_cut), so that the run fills the left page, instead of
 * halving the leaf again at every split.  (Row ids within a pseudo-block's
 * width of each other, the test before, took two neighbouring backends'
 * ranges for one run: 16 appending clients left the leaves two thirds
 * full.)
 */
static int
rowid_close(void *arg, const char *a, Size alen, const char *b, Size blen)
{
	FtRowId		x = fractam_item_rowid(a);
	FtRowId		y = fractam_item_rowid(b);

	return x / FRACTAM_ROWS_PER_BLOCK == y / FRACTAM_ROWS_PER_BLOCK ? 1 : 0;
}

/*
 * Consecutive row ids: no row can come between them, so a load may seal
 * the leaves that hold such a run compressed (another backend's rows
 * still to come, in the pseudo-block it holds, go into a gap).
 */
static bool
rowid_adjacent(void *arg, const char *a, Size alen, const char *b, Size blen)
{
	return fractam_item_rowid(b) == fractam_item_rowid(a) + 1;
}

static void note_leaf_range(FtTree *tree, const char *lo, Size lolen,
							const char *hi, Size hilen, BlockNumber leaf);

/*
 * A backend's state of each table (FractamTableCache) lives in a hash table
 * keyed by the table's OID, not in rd_amcache: the relcache frees
 * rd_amcache on every invalidation of the table, also while it is open, and
 * operations and scans (a cursor, across statements) point at the cache
 * through their FtTree while they wait for other transactions, which
 * accepts invalidations.  An invalidation only marks the entry; an entry
 * marked and not used again is dropped at the end of the transaction, when
 * no operation on the table is in flight (the table may have been dropped).
 * A changed relfilenode resets the entry's contents.
 */
typedef struct TableCacheEntry
{
	Oid			relid;			/* hash key */
	bool		invalidated;	/* since last used */
	FractamTableCache cache;
} TableCacheEntry;

static HTAB *table_caches = NULL;
static int	table_caches_invalidated = 0;

/*
 * The entry table_cache returned last: a row's insert asks for its table's
 * cache several times (row id, version form, tree), and a hash lookup each
 * time cost 4 % of INSERT ... SELECT.  Entries do not move while they
 * exist; table_cache_xact_end, which removes them, forgets this one.
 */
static TableCacheEntry *last_entry = NULL;

/* bytes of leaf hints this backend holds, over all tables */
static Size leafhint_bytes = 0;

static void
free_leaf_hints(FractamTableCache *cache)
{
	if (cache->leafhints)
	{
		pfree(cache->leafhints);
		leafhint_bytes -= cache->nleafhints * sizeof(FractamLeafHintSlot);
	}
	cache->leafhints = NULL;
	cache->nleafhints = 0;
}

/* empty a cache for the relation file node (its hints are freed) */
static void
reset_cache(FractamTableCache *cache, RelFileNode node)
{
	free_leaf_hints(cache);
	/* the range of row ids goes: let go of its pseudo-block */
	fractam_rowids_release(cache);
	memset(cache, 0, sizeof(FractamTableCache));
	cache->node = node;
	cache->lastleaf = FT_NO_LEAF_HINT;
	cache->compact_forms = -1;
	cache->holding = -1;
}

static void
mark_invalidated(TableCacheEntry *entry)
{
	if (!entry->invalidated)
	{
		entry->invalidated = true;
		table_caches_invalidated++;
	}
}

/* relcache invalidation callback (relid InvalidOid: all relations) */
static void
table_cache_invalidate(Datum arg, Oid relid)
{
	TableCacheEntry *entry;

	if (table_caches == NULL)
		return;
	if (OidIsValid(relid))
	{
		entry = hash_search(table_caches, &relid, HASH_FIND, NULL);
		if (entry)
			mark_invalidated(entry);
	}
	else
	{
		HASH_SEQ_STATUS status;

		hash_seq_init(&status, table_caches);
		while ((entry = hash_seq_search(&status)) != NULL)
			mark_invalidated(entry);
	}
}

/* at the end of a transaction: drop the entries invalidated and unused */
static void
table_cache_xact_end(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS status;
	TableCacheEntry *entry;

	if (table_caches == NULL || table_caches_invalidated == 0)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			break;
		default:
			return;
	}
	hash_seq_init(&status, table_caches);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->invalidated)
		{
			free_leaf_hints(&entry->cache);
			fractam_rowids_release(&entry->cache);
			if (entry == last_entry)
				last_entry = NULL;
			hash_search(table_caches, &entry->relid, HASH_REMOVE, NULL);
		}
	table_caches_invalidated = 0;
}

void
fractam_table_cache_init(void)
{
	CacheRegisterRelcacheCallback(table_cache_invalidate, (Datum) 0);
	RegisterXactCallback(table_cache_xact_end, NULL);
}

/* table_cache when last_entry is not the relation's: the hash table */
static pg_noinline FractamTableCache *
table_cache_lookup(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	TableCacheEntry *entry;
	bool		found;

	if (table_caches == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(TableCacheEntry);
		ctl.hcxt = TopMemoryContext;
		table_caches = hash_create("fractam table caches", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(table_caches, &relid, HASH_ENTER, &found);
	if (!found)
	{
		entry->cache.leafhints = NULL;
		entry->cache.holding = -1;
	}
	if (!found || !RelFileNodeEquals(entry->cache.node, rel->rd_node))
		reset_cache(&entry->cache, rel->rd_node);
	if (!found)
		entry->invalidated = false;
	else if (entry->invalidated)
	{
		/* the table's options may have changed */
		entry->cache.options_loaded = false;
		entry->invalidated = false;
		table_caches_invalidated--;
	}
	if (!entry->cache.options_loaded)
	{
		fractam_table_options_load(rel, &entry->cache.options);
		/* a statement's pending options hold only while it runs */
		entry->cache.options_loaded = !fractam_table_options_pending(relid);
	}
	last_entry = entry;
	return &entry->cache;
}

/* This backend's state of a table (its options, row ids, hints) */
static inline FractamTableCache *
table_cache(Relation rel)
{
	TableCacheEntry *entry = last_entry;

	if (likely(entry != NULL) && entry->relid == RelationGetRelid(rel) &&
		!entry->invalidated && entry->cache.options_loaded &&
		RelFileNodeEquals(entry->cache.node, rel->rd_node))
		return &entry->cache;
	return table_cache_lookup(rel);
}

/* Forget this backend's state of the relation (its file was reset) */
void
fractam_forget_cache(Relation rel)
{
	FractamTableCache *cache = table_cache(rel);

	reset_cache(cache, rel->rd_node);
	ft_routecache_invalidate(RelationGetRelid(rel));
	ft_oscache_invalidate(RelationGetRelid(rel));
}

/*
 * Fill an FtTree for a table.  Tables never buffer: every row version is in
 * its leaf, where the table AM reads and patches it (ft_item.c), and row
 * ids ascend, so inserts take the tree's right-edge path anyway.
 */
void
fractam_table_tree(Relation rel, FtTree *tree)
{
	FractamTableCache *cache = table_cache(rel);

	memset(tree, 0, sizeof(FtTree));
	tree->rel = rel;
	tree->cmp = rowid_compare;
	tree->cmp_arg = NULL;
	/* a table's buffer nodes only route: tables never buffer */
	tree->fanout = cache->options.fanout;
	tree->fillfactor = 100;
	tree->buffering = false;
	tree->direct_apply = true;
	tree->rootcache = &cache->rootcache;
	tree->max_item_size = 0;
	tree->sharedcols = rowid_close;
	tree->adjacent = rowid_adjacent;
	/* high keys and pivots are row ids, not whole rows */
	tree->keyprefix = FRACTAM_ROWID_SIZE;
	/* a new version's pseudo-block is no longer all-visible */
	tree->leaf_insert_hook = fractam_vm_leaf_insert_hook;
	/* a full leaf drops versions dead to everyone before it splits */
	tree->leaf_prune_hook = fractam_leaf_prune;
	tree->leaf_range_hook = note_leaf_range;
	tree->owner = cache;
	/* loads and VACUUM's merges write compressed leaves (ft_flush.c, ft_vacuum.c) */
	tree->codec = cache->options.codec;
	tree->codec_level = cache->options.compression_level;
	tree->frame_chgcap = FT_FRAME_TABLE_CHGCAP;
	/* ... and store rows of one length column by column */
	tree->row_fields = fractam_row_fields;
}

/*
 * Leaf hints: the leaf where this backend last found a row id of each run
 * of 2^LEAF_HINT_SHIFT row ids, and the buffer it was in then (pinned
 * again with ReadRecentBuffer, without a buffer-table lookup), tried before
 * a descent (ft_item_find_near checks that the page is still a leaf whose
 * range holds the row id, so a stale hint only costs a look at one page).
 * An index scan in random order then reads one page of the table per row,
 * as heap does, instead of a root-to-leaf descent.  Direct mapped and sized
 * to the row ids seen, up to LEAF_HINT_MAX entries (8 MB, 32M row ids) per
 * table and LEAF_HINT_BUDGET bytes per backend (a session touching many
 * large partitions stops growing hints); the table's file never shrinks (a
 * new file resets the cache), so a hint never points past its end.  NULL:
 * no hint.
 */
#define LEAF_HINT_SHIFT 5
#define LEAF_HINT_MAX	(1 << 20)
#define LEAF_HINT_BUDGET (32 * 1024 * 1024)

static FractamLeafHintSlot *
leaf_hint_slot(FractamTableCache *cache, FtRowId rowid)
{
	uint64		run = rowid >> LEAF_HINT_SHIFT;

	if (run >= cache->nleafhints && cache->nleafhints < LEAF_HINT_MAX)
	{
		uint32		n = Max(cache->nleafhints, 64);
		Size		grow;
		FractamLeafHintSlot *hints;

		while (n <= run && n < LEAF_HINT_MAX)
			n *= 2;
		grow = (n - cache->nleafhints) * sizeof(FractamLeafHintSlot);
		if (leafhint_bytes + grow <= LEAF_HINT_BUDGET)
		{
			/* allocate first: an error here leaves the old hints intact */
			hints = MemoryContextAlloc(TopMemoryContext,
									   n * sizeof(FractamLeafHintSlot));
			/* keep the hints so far (those of runs that wrapped are stale) */
			if (cache->leafhints)
				memcpy(hints, cache->leafhints,
					   cache->nleafhints * sizeof(FractamLeafHintSlot));
			for (uint32 i = cache->nleafhints; i < n; i++)
			{
				hints[i].blkno = InvalidBlockNumber;
				hints[i].buf = InvalidBuffer;
			}
			free_leaf_hints(cache);
			cache->leafhints = hints;
			cache->nleafhints = n;
			leafhint_bytes += n * sizeof(FractamLeafHintSlot);
		}
	}
	if (cache->leafhints == NULL)
		return NULL;
	return &cache->leafhints[run & (cache->nleafhints - 1)];
}

/*
 * FtTree.leaf_range_hook: a descent passed a level-1 node, whose leaf
 * [lo, hi) is block leaf.  Each run whose first row id lies in the leaf's
 * range gets it as hint (a lookup in the run's part past the leaf steps
 * right from it), so the first lookups of the node's few hundred leaves
 * need no descent of their own: an index scan in random order over a
 * large table (a range query's first row, a point query) warms its hints
 * one level-1 node at a time instead of one run at a time.  A leaf that
 * spans more than LEAF_RANGE_RUNS runs (sparse row ids, after deletes)
 * hints only its first ones, and so does the rightmost leaf, whose range
 * has no end.
 */
#define LEAF_RANGE_RUNS 64

static void
note_leaf_range(FtTree *tree, const char *lo, Size lolen, const char *hi,
				Size hilen, BlockNumber leaf)
{
	FractamTableCache *cache = (FractamTableCache *) tree->owner;
	FtRowId		first = lo ? fractam_item_rowid(lo) : 0;
	FtRowId		end;
	uint64		run;
	uint64		endrun;

	Assert(lo == NULL || lolen >= FRACTAM_ROWID_SIZE);
	Assert(hi == NULL || hilen >= FRACTAM_ROWID_SIZE);
	if (cache == NULL)
		return;
	/* the rightmost leaf: as far as a leaf's hints go */
	end = hi ? fractam_item_rowid(hi) :
		first + ((uint64) LEAF_RANGE_RUNS << LEAF_HINT_SHIFT);
	if (end <= first)
		return;
	/* the runs that start in [first, end) */
	run = (first + (UINT64CONST(1) << LEAF_HINT_SHIFT) - 1) >> LEAF_HINT_SHIFT;
	endrun = (end - 1) >> LEAF_HINT_SHIFT;
	endrun = Min(endrun, run + LEAF_RANGE_RUNS - 1);
	for (; run <= endrun; run++)
	{
		FractamLeafHintSlot *slot = leaf_hint_slot(cache,
												   run << LEAF_HINT_SHIFT);

		if (slot == NULL)
			break;
		if (slot->blkno != leaf)
		{
			slot->blkno = leaf;
			slot->buf = InvalidBuffer;
		}
	}
}

/*
 * How many row ids a backend takes from value, a value of the metapage's
 * counter or (reused) of a range VACUUM gave back: from the counter, one
 * at a time while the table is in its first pseudo-block, so that a small
 * table numbers its versions (0,1), (0,2), ... in the order they are
 * written, whichever backend writes them (as heap fills its first page,
 * and as tests that show ctids expect); otherwise the rest of the
 * pseudo-block the value falls in, so that concurrent inserters append to
 * pseudo-blocks of their own and take the metapage's lock once per
 * FRACTAM_ROWS_PER_BLOCK rows, and from the counter range_blocks - 1 whole
 * pseudo-blocks more (see fractam_next_rowid_ex).
 */
typedef struct RowidTake
{
	Relation	rel;
	FractamTableCache *cache;
} RowidTake;

static uint64
rowid_grant(uint64 value, bool reused, void *arg)
{
	uint64		n;

	if (value < FRACTAM_ROWS_PER_BLOCK && !reused)
		return 1;
	n = FRACTAM_ROWS_PER_BLOCK - value % FRACTAM_ROWS_PER_BLOCK;
	if (!reused)
		n += (uint64) (((RowidTake *) arg)->cache->range_blocks - 1) *
			FRACTAM_ROWS_PER_BLOCK;
	return n;
}

/*
 * The first row id of a new or truncated table's file: 0, or for tests a
 * debug setting (fractam.debug_table_first_rowid) that starts it past the
 * first 40 million row ids or near the limit, so that TID block numbers
 * far beyond the file's pages are exercised.
 */
static uint64
first_rowid(void)
{
	return (uint64) Min(fractam_debug_first_rowid,
						(double) (FRACTAM_ROWID_LIMIT - 1));
}

/*
 * Warn as the row ids run out (80 % and 95 % of FRACTAM_ROWID_LIMIT used),
 * as PostgreSQL warns before transaction ids wrap around; ft_meta_take_seq
 * refuses row ids beyond the limit with an error.
 */
void
fractam_warn_rowids_running_out(Relation rel, uint64 end)
{
	if (end < FRACTAM_ROWID_LIMIT / 100 * 80)
		return;
	ereport(WARNING,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("table \"%s\" has used %d%% of its row ids",
					RelationGetRelationName(rel),
					(int) (end * 100.0 / FRACTAM_ROWID_LIMIT)),
			 errdetail("%llu row ids are left; every row version takes one.",
					   (unsigned long long) (FRACTAM_ROWID_LIMIT - end)),
			 errhint("%s",
					 end >= FRACTAM_ROWID_LIMIT / 100 * 95 ?
					 "Run VACUUM FULL on the table soon to renumber its rows: writes fail once the row ids are used up." :
					 "Plan a VACUUM FULL of the table to renumber its rows.")));
}

/*
 * FtSeqPolicy.granted: the backend's new range, and the pseudo-blocks it
 * holds now, published while the metapage is still locked
 * (table_rowid_reuse.c).
 */
static bool
rowids_reusable(uint64 tag, void *arg)
{
	return fractam_rowids_reusable(((RowidTake *) arg)->rel, tag);
}

static void
rowids_granted(uint64 first, uint64 count, void *arg)
{
	FractamTableCache *cache = ((RowidTake *) arg)->cache;
	BlockNumber blk = (BlockNumber) (first / FRACTAM_ROWS_PER_BLOCK);
	BlockNumber last = (BlockNumber) ((first + count - 1) /
									  FRACTAM_ROWS_PER_BLOCK);

	fractam_rowids_hold(cache, blk, last - blk + 1);
	cache->next_rowid = first;
	cache->end_rowid = first + count;
}

/*
 * The next row id for a new version; *last_in_range says whether it is the
 * last of this backend's range: a caller that numbers versions before it
 * stores them (COPY's batches) stores those of a range before it takes the
 * next, as table_rowid_reuse.c requires.
 */
FtRowId
fractam_next_rowid_ex(Relation rel, bool *last_in_range)
{
	FractamTableCache *cache = table_cache(rel);

	if (cache->next_rowid >= cache->end_rowid)
	{
		FtTree		tree;
		FtSeqPolicy policy;
		RowidTake	take;
		uint64		first;
		uint64		count;

		fractam_rowids_check_ready();

		/*
		 * A backend that used up its last range in the transaction that
		 * took it or the next (a bulk load, INSERTs of many rows) takes
		 * twice as many pseudo-blocks from the counter next time, up to
		 * FRACTAM_MAX_RANGE_BLOCKS, and half as many after a range that
		 * lasted longer.  One pseudo-block fills about three leaves, and
		 * the leaf where a backend's range ends stays part full (the next
		 * row ids are another backend's, elsewhere): sixteen appenders of
		 * one pseudo-block each left the leaves four fifths full, and took
		 * the metapage's lock once per 291 rows each.  The rest of a range
		 * goes unused if the backend stops writing here, until VACUUM gives
		 * it back.  (Decided by transactions, not time, so that a session's
		 * row ids do not depend on its speed.)
		 */
		if (cache->range_blocks == 0)
			cache->range_blocks = 1;
		else if ((LocalTransactionId) (MyProc->lxid - cache->range_lxid) <= 1)
			cache->range_blocks = Min(cache->range_blocks * 2,
									  FRACTAM_MAX_RANGE_BLOCKS);
		else
			cache->range_blocks = Max(cache->range_blocks / 2, 1);
		fractam_table_tree(rel, &tree);
		take.rel = rel;
		take.cache = cache;
		policy.grant = rowid_grant;
		policy.reusable = rowids_reusable;
		policy.granted = rowids_granted;
		policy.limit = FRACTAM_ROWID_LIMIT;
		policy.arg = &take;
		first = ft_meta_take_seq(&tree, &policy, &count);
		/* (rowids_granted set the range) */
		Assert(cache->next_rowid == first && cache->end_rowid == first + count);
		cache->range_lxid = MyProc->lxid;
		/* the first pseudo-block's row ids, one at a time, do not count */
		if (first + count <= FRACTAM_ROWS_PER_BLOCK)
			cache->range_blocks = 0;
		fractam_warn_rowids_running_out(rel, first + count);
		fractam_vm_cover(rel, first + count - 1);
	}
	*last_in_range = cache->next_rowid + 1 >= cache->end_rowid;
	return cache->next_rowid++;
}

/* The next row id for a new version, stored before the next is taken */
FtRowId
fractam_next_rowid(Relation rel)
{
	bool		last;

	return fractam_next_rowid_ex(rel, &last);
}

/* The first (forward) or last row id stored; false if the table is empty */
static bool
edge_rowid(Relation rel, bool forward, FtRowId *rowid)
{
	FtTree		tree;
	FtScan		scan;
	const char *item;
	Size		len;
	bool		found;

	fractam_table_tree(rel, &tree);
	if (!forward)
	{
		FractamTableCache *cache = (FractamTableCache *) tree.owner;
		char		maxkey[FRACTAM_ROWID_SIZE];
		char	   *last;

		/* the rightmost leaf's last version, unless it is a dead set */
		fractam_rowid_key(FRACTAM_ROWID_MASK, maxkey);
		if (ft_item_last(&tree, maxkey, sizeof(maxkey), &cache->lastleaf,
						 &last, &len))
		{
			found = !fractam_item_is_deadset(last, len);
			if (found)
				*rowid = fractam_item_rowid(last);
			pfree(last);
			if (found)
				return true;
		}
	}
	scan = ft_scan_begin(&tree);
	ft_scan_set_keep_pins(scan, false);
	ft_scan_seek(scan, NULL, 0, forward);
	found = ft_scan_next(scan, &item, &len);
	if (found)
	{
		*rowid = fractam_item_rowid(item);
		/* a dead set's row ids count: index entries may point to them */
		if (!forward && fractam_item_is_deadset(item, len))
		{
			for (int b = FRACTAM_DEADSET_ROWS - 1; b > 0; b--)
				if (fractam_deadset_has(item, b))
				{
					*rowid += b;
					break;
				}
		}
	}
	ft_scan_end(scan);
	return found;
}

/*
 * One more than the largest row id stored (0 if the table is empty): the
 * TID blocks that hold versions are those below it.  Read from the end of
 * the tree.
 */
FtRowId
fractam_rowid_end(Relation rel)
{
	FtRowId		last;

	return edge_rowid(rel, false, &last) ? last + 1 : 0;
}

/* The smallest row id stored (0 if the table is empty) */
FtRowId
fractam_rowid_first(Relation rel)
{
	FtRowId		first;

	return edge_rowid(rel, true, &first) ? first : 0;
}

/* Row ids below this were handed out (versions may exist for them) */
uint64
fractam_rowid_limit(Relation rel)
{
	FtTree		tree;

	fractam_table_tree(rel, &tree);
	return ft_meta_read_seq(&tree);
}

/*
 * May this table's tree hold versions in the compact and settled forms?
 * Trees of format 4 and later (all that this build creates); a table
 * written by an older build keeps full versions, which that build reads.
 */
bool
fractam_table_compact_forms(Relation rel)
{
	FractamTableCache *cache = table_cache(rel);

	if (cache->compact_forms < 0)
	{
		FtTree		tree;

		fractam_table_tree(rel, &tree);
		cache->compact_forms = ft_meta_version(&tree) >= 4 ? 1 : 0;
	}
	return cache->compact_forms > 0;
}

/*
 * 0 if the table's tree takes only full versions, else the longest full
 * item it takes (fractam_version_item).
 */
Size
fractam_compact_limit(Relation rel)
{
	FtTree		tree;

	if (!fractam_table_compact_forms(rel))
		return 0;
	fractam_table_tree(rel, &tree);
	return ft_tree_max_item_size(&tree);
}

/*
 * The row version in a tree item as a palloc'd HeapTuple (in the current
 * memory context), t_self and t_tableOid set.
 */
HeapTuple
fractam_item_copy(Relation rel, const char *item, Size len)
{
	Size		tlen = fractam_item_tuple_len(rel, item, len);
	HeapTuple	tup = (HeapTuple) palloc(HEAPTUPLESIZE + tlen);

	tup->t_len = tlen;
	tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
	fractam_item_to_tuple(rel, item, len, tup->t_data);
	fractam_rowid_tid(fractam_item_rowid(item), &tup->t_self);
	tup->t_tableOid = RelationGetRelid(rel);
	return tup;
}

/* ft_replace's check: is the stored item still the one expanded? */
static FtUniqueVerdict
still_unexpanded(void *arg, const char *item, Size len)
{
	FtItemRef  *old = (FtItemRef *) arg;

	return len == old->len && memcmp(item, old->item, len) == 0 ?
		FT_UNIQUE_ACCEPT : FT_UNIQUE_REFUSE;
}

/*
 * A version found for a change (its leaf locked exclusively) is changed in
 * the full form only: expand a compact or settled one.  In place if the
 * leaf has room (true, ref then holds the full item; the WAL record names
 * the expansion, FT_TRANSFORM_TABLE_EXPAND, which redo repeats); else the leaf is
 * released and the item replaced through ft_replace, which splits the leaf
 * (false: the caller finds the version again).  Expanding changes what the
 * page holds, not what it says, so a concurrent expansion of the same item
 * is harmless; ft_replace only checks that the item is still the compact
 * or settled one, so that it cannot undo a change made in between.
 */
static bool
expand_version(FtTree *tree, FtItemRef *ref)
{
	Size		fulllen;
	char	   *full;
	FtItemRef	old;

	if (ft_item_transform(tree, ref, FT_TRANSFORM_TABLE_EXPAND))
		return true;
	full = fractam_item_expand(ref->item, ref->len, &fulllen);
	old.len = ref->len;
	old.item = palloc(ref->len);
	memcpy(old.item, ref->item, ref->len);
	ft_item_release(ref);
	(void) ft_replace(tree, full, fulllen, still_unexpanded, &old);
	pfree(old.item);
	pfree(full);
	return false;
}

/*
 * Find the version with row id rowid and lock its leaf (access): false if
 * there is none (never written, removed by VACUUM, or only a dead set
 * remembers it, see table_prune.c).  *hint is where the caller's previous
 * lookup ended (FT_NO_LEAF_HINT: none); the backend's leaf hint of the row
 * id's run, when it names another leaf, replaces it.  *hint is set to
 * where this lookup ended.
 */
static bool
find_version_near(FtTree *tree, FtRowId rowid, int access, FtItemRef *ref,
				  FtLeafHint *hint)
{
	char		key[FRACTAM_ROWID_SIZE];
	FractamTableCache *cache = (FractamTableCache *) tree->owner;
	FractamLeafHintSlot *slot = cache ? leaf_hint_slot(cache, rowid) : NULL;
	bool		found;

	if (slot && slot->blkno != InvalidBlockNumber && slot->blkno != hint->blkno)
	{
		hint->blkno = slot->blkno;
		hint->recent = slot->buf;
		hint->off = InvalidOffsetNumber;
	}
	fractam_rowid_key(rowid, key);
	for (;;)
	{
		found = ft_item_find_near(tree, key, sizeof(key), access, ref, hint);
		if (!found || access != BUFFER_LOCK_EXCLUSIVE ||
			fractam_item_form(ref->item) == FRACTAM_ITEM_FULL ||
			expand_version(tree, ref))
			break;
		CHECK_FOR_INTERRUPTS();
	}
	/* looked up again: nothing in between frees hints, but stay safe */
	if (cache && (slot = leaf_hint_slot(cache, rowid)) != NULL)
	{
		slot->blkno = hint->blkno;
		slot->buf = hint->recent;
	}
	if (!found)
		return false;
	if (fractam_item_is_deadset(ref->item, ref->len))
	{
		ft_item_release(ref);
		return false;
	}
	return true;
}

bool
fractam_find_version(FtTree *tree, FtRowId rowid, int access, FtItemRef *ref)
{
	FtLeafHint	hint = FT_NO_LEAF_HINT;

	return find_version_near(tree, rowid, access, ref, &hint);
}

/* The next row version of a scan of a table's tree, past dead sets */
bool
fractam_scan_next_version(FtScan scan, const char **item, Size *len)
{
	while (ft_scan_next(scan, item, len))
	{
		if (!fractam_item_is_deadset(*item, *len))
			return true;
	}
	return false;
}

/*
 * A palloc'd copy of the version with row id rowid, or NULL if there is
 * none.  t_self and t_tableOid are set.
 */
HeapTuple
fractam_fetch_version(Relation rel, FtRowId rowid)
{
	FtLeafHint	hint = FT_NO_LEAF_HINT;

	return fractam_fetch_version_near(rel, rowid, &hint);
}

/*
 * The same for a run of fetches (an index scan's): *hint is the leaf the
 * previous one ended in, tried first (ft_item_find_near).
 */
HeapTuple
fractam_fetch_version_near(Relation rel, FtRowId rowid, FtLeafHint *hint)
{
	FtTree		tree;
	FtItemRef	ref;
	HeapTuple	tup;

	fractam_table_tree(rel, &tree);
	if (!find_version_near(&tree, rowid, BUFFER_LOCK_SHARE, &ref, hint))
		return NULL;
	tup = fractam_item_copy(rel, ref.item, ref.len);
	ft_item_release(&ref);
	return tup;
}

/* Add a new version (its header already filled in) under row id rowid */
void
fractam_store_version(Relation rel, FtRowId rowid, HeapTuple tup,
					  bool is_update)
{
	FtTree		tree;
	Size		len;
	char	   *item = fractam_version_item(rowid, tup,
											fractam_compact_limit(rel), &len);
	FractamTableCache *cache;

	fractam_table_tree(rel, &tree);
	cache = (FractamTableCache *) tree.owner;
	/* new rows compress behind the append point, new versions wait (ft.h) */
	tree.seal_appends = !is_update;
	/* a version of this transaction's own (see fractam_vm_leaf_insert_hook) */
	if (!HeapTupleHeaderXminFrozen(tup->t_data) &&
		HeapTupleHeaderGetRawXmin(tup->t_data) == GetCurrentTransactionIdIfAny())
		cache->vm_own_xid = HeapTupleHeaderGetRawXmin(tup->t_data);
	ft_insert(&tree, item, len);	/* refuses rows too large for a leaf */
	cache->vm_own_xid = InvalidTransactionId;

	/*
	 * The last row of this backend's range of row ids: the leaves behind it
	 * take no more rows, compress them now (ft_seal.c)
	 */
	if (!is_update && tree.codec != FT_CODEC_NONE &&
		rowid + 1 == cache->end_rowid)
		ft_seal_tail(&tree, item, len);
	pfree(item);
}

/*
 * A new relation file (CREATE TABLE, TRUNCATE, rewrites): an empty tree.
 * Unlogged tables get the same empty tree as their init fork.
 */
void
fractam_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
								  char persistence, TransactionId *freezeXid,
								  MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* rows a load kept go into the old file, which a rollback brings back */
	fractam_flush_kept_rows_if(rel);
	/* no version can be older than this transaction's snapshot horizon */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	srel = RelationCreateStorage(*newrnode, persistence, true);
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		Assert(rel->rd_rel->relkind == RELKIND_RELATION ||
			   rel->rd_rel->relkind == RELKIND_MATVIEW ||
			   rel->rd_rel->relkind == RELKIND_TOASTVALUE);
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		ft_create_storage(srel, INIT_FORKNUM, true, first_rowid());
	}
	ft_create_storage(srel, MAIN_FORKNUM,
					  persistence == RELPERSISTENCE_PERMANENT && XLogIsNeeded(),
					  first_rowid());
	smgrclose(srel);
}

/*
 * TRUNCATE of a table created or truncated in this transaction: empty the
 * file in place.  No other backend can have seen it.
 */
void
fractam_relation_nontransactional_truncate(Relation rel)
{
	/* rows a load kept for the old file go with it */
	fractam_forget_kept_rows_of(rel);
	RelationTruncate(rel, 0);
	fractam_forget_cache(rel);
	ft_create_storage(RelationGetSmgr(rel), MAIN_FORKNUM,
					  RelationNeedsWAL(rel), first_rowid());
}

/* ALTER TABLE ... SET TABLESPACE: copy every fork to the new file */
void
fractam_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	SMgrRelation dstrel;
	ForkNumber	fork;

	fractam_flush_kept_rows_if(rel);
	FlushRelationBuffers(rel);
	dstrel = RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (fork = MAIN_FORKNUM + 1; fork <= MAX_FORKNUM; fork++)
	{
		if (!smgrexists(RelationGetSmgr(rel), fork))
			continue;
		smgrcreate(dstrel, fork, false);
		/* the init fork of an unlogged table is WAL-logged, as heap's */
		if (RelationIsPermanent(rel) ||
			(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
			 fork == INIT_FORKNUM))
			log_smgrcreate(newrnode, fork);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, fork,
							rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

/*
 * The size of a fork.  PostgreSQL reads the main fork's size as the number
 * of TID blocks (RelationGetNumberOfBlocks: BRIN, ANALYZE, bitmap scans,
 * relpages), and TID blocks are pseudo-blocks of row ids, which may
 * outnumber the pages (once rows are compressed, or after much churn): the
 * main fork reports the larger of its file and the pseudo-blocks up to the
 * last version stored, so every stored row id is covered, and relpages and
 * ANALYZE's arithmetic stay in pages as they are for heap (a sampled block
 * beyond the last pseudo-block is simply empty).
 */
/*
 * ANALYZE (PostgreSQL 15's acquire_sample_rows) prefetches each TID block
 * it samples as the file page of that number (maintenance_io_concurrency):
 * for a fractam table that reads an unrelated tree page, and a TID block
 * past the file's first 1 GB segment while the file is smaller makes md.c
 * fail the ANALYZE.  It asks for the size right before it decides on
 * prefetching, so while an ANALYZE runs (its progress report says so) the
 * setting is turned off here; ANALYZE reverts every setting changed during
 * it when it is done with the table (its own GUC nest level).
 */
static void
no_analyze_prefetch(void)
{
	if (MyBEEntry == NULL ||
		MyBEEntry->st_progress_command != PROGRESS_COMMAND_ANALYZE ||
		maintenance_io_concurrency == 0)
		return;
	(void) set_config_option("maintenance_io_concurrency", "0", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

uint64
fractam_relation_size(Relation rel, ForkNumber forkNumber)
{
	uint64		size = table_block_relation_size(rel, forkNumber);

	/*
	 * The free space map's search asks whether a page it offers is in the
	 * file, maybe while the tree's last leaf is locked by this backend: the
	 * file's size answers it (ft_searching_free_pages).
	 */
	if (ft_searching_free_pages())
		return size;
	/* (the main fork's own size answers for it: one lseek per plan, not two) */
	if (forkNumber == MAIN_FORKNUM ? size > 0 :
		forkNumber == InvalidForkNumber &&
		smgrnblocks(RelationGetSmgr(rel), MAIN_FORKNUM) > 0)
	{
		uint64		pseudo = (fractam_rowid_end(rel) + FRACTAM_ROWS_PER_BLOCK - 1) /
			FRACTAM_ROWS_PER_BLOCK;

		/* the metapage holds no rows: a one-leaf table is one page, as heap's */
		size -= BLCKSZ;
		size = Max(size, pseudo * BLCKSZ);
		no_analyze_prefetch();
	}
	return size;
}

/*
 * Heap's rule: a TOAST table when a row of maximal width could exceed
 * TOAST_TUPLE_THRESHOLD and some column can be toasted.  Rows are stored in
 * heap layout, so heap's toaster serves them unchanged.
 */
bool
fractam_relation_needs_toast_table(Relation rel)
{
	TupleDesc	tupdesc = rel->rd_att;
	int32		data_length = 0;
	bool		maxlength_unknown = false;
	bool		has_toastable_attrs = false;
	int32		tuple_length;
	int			i;

	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attisdropped)
			continue;
		data_length = att_align_nominal(data_length, att->attalign);
		if (att->attlen > 0)
			data_length += att->attlen;
		else
		{
			int32		maxlen = type_maximum_size(att->atttypid,
												   att->atttypmod);

			if (maxlen < 0)
				maxlength_unknown = true;
			else
				data_length += maxlen;
			if (att->attstorage != TYPSTORAGE_PLAIN)
				has_toastable_attrs = true;
		}
	}
	if (!has_toastable_attrs)
		return false;
	if (maxlength_unknown)
		return true;
	tuple_length = MAXALIGN(SizeofHeapTupleHeader + BITMAPLEN(tupdesc->natts)) +
		MAXALIGN(data_length);
	return tuple_length > TOAST_TUPLE_THRESHOLD;
}

/*
 * Row count and page estimates, heap's own way and with heap's constants:
 * a leaf holds row versions much as a heap page holds tuples (8 bytes more
 * each, for the row id), so the planner makes heap's choices for the same
 * data.  No page is all-visible yet (no visibility map).
 */
void
fractam_relation_estimate_size(Relation rel, int32 *attr_widths,
							   BlockNumber *pages, double *tuples,
							   double *allvisfrac)
{
	BlockNumber tid_blocks;

	table_block_relation_estimate_size(rel, attr_widths, pages, tuples,
									   allvisfrac,
									   MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData),
									   BLCKSZ - SizeOfPageHeaderData);

	/*
	 * relallvisible counts all-visible TID blocks (VACUUM and ANALYZE count
	 * the map's bits), relpages counts pages when rows are wider than a
	 * page's share of a pseudo-block: the all-visible fraction is of the
	 * TID blocks holding row ids.  (Pseudo-blocks VACUUM emptied are not
	 * marked: their row ids are given back and reused.)
	 */
	tid_blocks = (BlockNumber) ((fractam_rowid_end(rel) + FRACTAM_ROWS_PER_BLOCK - 1) /
								FRACTAM_ROWS_PER_BLOCK);
	if (tid_blocks > 0 && rel->rd_rel->relallvisible > 0)
		*allvisfrac = Min(1.0, (double) rel->rd_rel->relallvisible / tid_blocks);
	else
		*allvisfrac = 0;
}
