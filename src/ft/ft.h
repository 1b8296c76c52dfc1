/*-------------------------------------------------------------------------
 *
 * ft.h
 *	  Public interface of the buffered fractal tree (B-epsilon tree) engine.
 *
 * The tree stores opaque byte strings ("items") ordered by a comparator
 * supplied by the caller.  It knows nothing about MVCC, tuples or the
 * executor: src/am builds items (index tuples) and the comparator, and
 * this layer stores them in relation pages and logs every change through
 * fractam's WAL resource manager.  See src/ft/README for the algorithm.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FT_H
#define FT_H

#include "access/transam.h"
#include "common/relpath.h"
#include "storage/block.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "storage/smgr.h"
#include "utils/relcache.h"
#include "ft/ft_page.h"

/*
 * Three-way comparison of two items.  A zero-length item is never passed:
 * the tree itself treats an empty key as "minus infinity" (the first pivot
 * of every internal page).
 */
typedef int (*FtCompareFn) (void *arg, const char *a, Size alen,
							const char *b, Size blen);

/*
 * How many leading key columns two items share (the caller's notion of a
 * key made of columns; 0 if none).  Tells where keys that grow at many
 * points at once are appended to (see append_cut in ft_flush.c).
 */
typedef int (*FtSharedPrefixFn) (void *arg, const char *a, Size alen,
								 const char *b, Size blen);

/*
 * The shortest key that separates two adjacent items of a leaf split, for
 * the high key of the left page and the pivot of the right one: left < key
 * <= right.  Returns it palloc'd, with its length in *seplen, or NULL to
 * take right whole.  Keys shorter than items make internal nodes wider and
 * the tree lower (suffix truncation, as nbtree does since PostgreSQL 12).
 */
typedef char *(*FtSeparatorFn) (void *arg, const char *left, Size leftlen,
								const char *right, Size rightlen,
								Size *seplen);

/*
 * Whether no item can ever sort between a and b (a < b): a table's
 * consecutive row ids.  A range of items in which every neighbour is
 * adjacent takes no more inserts, so a load may seal it compressed.
 */
typedef bool (*FtAdjacentFn) (void *arg, const char *a, Size alen,
							  const char *b, Size blen);

/*
 * What the bytes of an item are, field by field, for the column filter of
 * a table's compressed parts (ft_columns.c): a hint only, which the filter
 * checks value by value, so that any bytes come back exactly as they went
 * in whatever the hint says.
 */
typedef enum FtFieldKind
{
	FT_FIELD_BYTES = 0,			/* anything: stored as byte planes */
	FT_FIELD_INT,				/* an integer of 1, 2, 4 or 8 bytes, native
								 * byte order */
	FT_FIELD_INT_BE,			/* ... big-endian (a table's row id) */
	FT_FIELD_FLOAT8				/* a double, often an exact decimal */
} FtFieldKind;

typedef struct FtRowField
{
	uint16		width;			/* bytes of the item, from the end of the
								 * field before */
	uint8		kind;			/* FtFieldKind */
} FtRowField;

#define FT_MAX_ROW_FIELDS	64

/*
 * The fields of item (len bytes), in order, covering all of it; returns
 * their count (at most FT_MAX_ROW_FIELDS; 0: none, store the items as
 * they are).  Called only by writers of compressed leaves.
 */
struct FtTree;

typedef int (*FtRowFieldsFn) (struct FtTree *tree, const char *item,
							  Size len, FtRowField *fields);

/* Message kinds stored in buffer nodes */
#define FT_MSG_INSERT	1
#define FT_MSG_DELETE	2

/*
 * Backend-local cache kept by the caller across operations (the AMs keep
 * it per relation): the root location, used only while that page
 * still has no right sibling at the cached level (the root only ever
 * changes by splitting), and whether the last insert was buffered, which
 * predicts whether the next one needs the buffer node exclusively.
 */
typedef struct FtRootCache
{
	bool		valid;
	BlockNumber root;
	uint32		level;
	bool		last_buffered;	/* the previous insert was buffered */
	/* is the index in memory, if not in shared buffers? (ft_oscache.c) */
	uint32		oscache_tick;	/* leaves outside shared buffers seen */
	uint32		oscache_samples;	/* of them probed */
	float		oscache_rate;	/* sampled share of them in the page cache */
	bool		oscache_mode;	/* apply to them directly */
} FtRootCache;

/*
 * What a leaf's owner gives up when the leaf is full (FtTree's
 * leaf_prune_hook): the items at positions dead (ascending indexes into
 * the items the hook was shown) go, and nnew items (ascending, palloc'd)
 * come in; none of the new ones may have the key of an item that stays,
 * and all must lie in the leaf's key range.  horizon: the newest xid whose
 * effects the dropped items hide from hot-standby queries, or invalid.
 */
typedef struct FtLeafPrune
{
	int		   *dead;
	int			ndead;
	char	  **newitems;
	Size	   *newlens;
	int			nnew;
	FullTransactionId horizon;
} FtLeafPrune;

/* Tunables and context of one tree, built by the caller per operation */
typedef struct FtTree
{
	Relation	rel;
	FtCompareFn cmp;
	void	   *cmp_arg;
	int			fanout;			/* max children of a buffer node */
	int			fillfactor;		/* leaf fill (percent) on build/right split */
	bool		buffering;		/* false: behave like a plain B+-tree */
	bool		direct_apply;	/* apply to resident leaves directly */
	int			unique_retry_delay; /* testing: microseconds a unique
									 * insert that must start over after
									 * its check sleeps first (0: none) */
	FtRootCache *rootcache;		/* or NULL */
	Size		max_item_size;	/* longest item this tree can hold (at
								 * most FT_MAX_ITEM_SIZE); 0 = unknown */
	FtSharedPrefixFn sharedcols;	/* or NULL: for placing leaf splits
									 * (ft_flush.c append_cut) */
	Size		keyprefix;		/* 0: high keys and pivots are whole items;
								 * else the first keyprefix bytes of an
								 * item, which alone decide its order (a
								 * table's row id) */
	FtSeparatorFn separator;	/* or NULL: high keys and pivots between
								 * leaves are whole items (or keyprefix
								 * bytes of them); called with cmp_arg */
	FtAdjacentFn adjacent;		/* or NULL (no two items are): for sealing
								 * a load's pages compressed (ft_flush.c
								 * take_append_batch); called with cmp_arg */

	/*
	 * Or NULL.  Called with the leaf that takes a new item locked
	 * exclusively, before the item goes in (every path: direct, split,
	 * rewrite; possibly more than once per item); it must not wait for
	 * anything but short-term locks of other relations' pages.  The table
	 * AM clears the visibility-map bits of the item's pseudo-block here.
	 */
	void		(*leaf_insert_hook) (struct FtTree *tree, const char *item,
									 Size len);

	/*
	 * Or NULL.  Called with a full leaf locked exclusively, before it
	 * splits, with its nitems items (pointers into the shared page, which
	 * it must not change) and whether it is the rightmost leaf: returns
	 * true, with prune filled in, to drop and replace items (see
	 * FtLeafPrune); the tree does it if that frees enough room.  It must
	 * not wait for anything but short-term locks of other relations'
	 * pages.  The table AM drops row versions dead to everyone
	 * here, as heap prunes a full page; the index AM drops entries of rows
	 * dead to everyone when an UPDATE that left the key alone would split
	 * the leaf, as nbtree's bottom-up deletion does.
	 */
	bool		(*leaf_prune_hook) (struct FtTree *tree, char **items,
									Size *lens, int nitems, bool rightmost,
									FtLeafPrune *prune);
	void	   *prune_arg;		/* the owner's, for leaf_prune_hook */

	/*
	 * Or NULL.  Called by the descents of ft_item_find_near (unbuffered
	 * trees) once for each leaf under the level-1 node the descent passed:
	 * the leaf's range [lo, hi) as that node had it (lo NULL: not known
	 * here; hi NULL: plus infinity) and its block.  One descent thus tells
	 * where a few hundred leaves are: the table AM fills its leaf hints
	 * from it, so that a lookup that finds no hint descends once per
	 * level-1 node rather than once per leaf.  What it says may be stale
	 * by the time it is used, so it may serve as a hint only.
	 */
	void		(*leaf_range_hook) (struct FtTree *tree, const char *lo,
									Size lolen, const char *hi, Size hilen,
									BlockNumber leaf);
	void	   *owner;			/* the owner's state of the tree, opaque
								 * here (a table's FractamTableCache) */
	FtCodecId	codec;			/* how leaves written from now on are
								 * compressed (FT_CODEC_NONE: not at all);
								 * leaves already written keep theirs */
	int			codec_level;	/* the codec's level */
	uint16		frame_chgcap;	/* bytes of change area a compressed leaf
								 * reserves for changes of its entries in
								 * place (a table's: FT_FRAME_TABLE_CHGCAP;
								 * 0: entries never change in place) */
	FtRowFieldsFn row_fields;	/* or NULL: a table's rows as fields, for
								 * the column filter of its compressed
								 * parts (ft_columns.c) */

	/*
	 * Or NULL.  A buffer ring that leaves go through (ft_getleaf,
	 * ft_newleaf, and the last step of a descent): COPY's bulk-insert ring
	 * for the new leaves and the right-edge leaf of an ascending load, a
	 * bulk-read ring for the leaves a large sequential scan reads, ANALYZE's
	 * for its sample, VACUUM's for every page its walk (ft_vacuum) reads,
	 * of tables and indexes alike (index trees have none otherwise).  A
	 * buffer read through a ring gains no use beyond the first, so the ring
	 * can recycle it, and the load or scan does not push the rest of shared
	 * buffers out, as heap's do not.
	 */
	BufferAccessStrategy strategy;

	/*
	 * A new page, locked exclusively, that an insert took for the split of
	 * a full leaf before it locked the leaf's parent exclusively
	 * (ft_insert.c, take_spare_leaf); ft_newleaf hands it out first.  Set
	 * only during one ft_insert, InvalidBuffer otherwise.
	 */
	Buffer		spare_leaf;

	/*
	 * The items of a load's batch that follow the one an insert is putting
	 * in (ft_insert_ascending, for a compressed table): a split of the
	 * full rightmost leaf takes as many of them along as make its sealed
	 * pages compressed (ft_flush_child).  Set only during one ft_insert,
	 * NULL otherwise.
	 */
	struct FtAppendBatch *append_batch;

	/*
	 * Merge the full leaves a direct insert leaves behind its append point
	 * into compressed ones (ft_seal.c), in a compressed tree.  The table AM
	 * asks for it for inserted rows, not for UPDATE's new versions: rows
	 * just updated are likely to be updated again, and each change of a
	 * compressed leaf's rows takes room of its change area, then rewrites
	 * it.  The index AM asks for it always: an index's append points are
	 * the ends of groups of entries that share leading key columns, such as
	 * (sensor, time), and of the whole tree (ascending keys).
	 */
	bool		seal_appends;

	/*
	 * Set by ft_flush_child when such an insert split a full leaf and went
	 * right of the pages the split left behind: an append point moved on.
	 * Meaningful only right after that call.
	 */
	bool		sealed_split;

	/*
	 * VACUUM (ft_vacuum) does not wait for a page a scan has pinned: it reads
	 * that page under a share lock instead, calls the callback with patch
	 * NULL and changes nothing there, as heap's VACUUM handles a page whose
	 * cleanup lock it cannot get (unless vacuum_pinned_readable says it must
	 * wait).  Only for trees that never buffer (no message to clean in a
	 * node it cannot lock) and whose readers keep nothing of a page but
	 * their copy (a table): an index scan's pin must make VACUUM wait.
	 */
	bool		vacuum_skip_pinned;

	/*
	 * Or NULL.  With vacuum_skip_pinned: may a leaf a scan pins be only
	 * read?  Called with each of its items (and ft_vacuum's arg) under a
	 * share lock; one false answer and VACUUM waits for the leaf's cleanup
	 * lock after all, as heap's aggressive VACUUM does for a page with
	 * something to freeze (NULL: never wait).
	 */
	bool		(*vacuum_pinned_readable) (const char *item, Size len,
										   void *arg);
} FtTree;

/* Largest item a tree accepts (also bounds pivots and messages) */
extern Size ft_max_item_size(void);
/* ... and this tree: larger for unbuffered trees with short keys */
extern Size ft_tree_max_item_size(FtTree *tree);

/* Statistics gathered by ft_collect_stats */
typedef struct FtStats
{
	int			height;			/* levels, 1 = root is a leaf */
	int64		meta_pages;
	int64		leaf_pages;
	int64		buffer_pages;
	int64		routing_pages;
	int64		free_pages;
	int64		leaf_items;
	int64		buffered_messages;
	int64		buffered_bytes;
	int64		flushes;
	int64		flushed_messages;
	int64		splits;
	/* the level-2 buffer nodes (also counted above, except flushes) */
	int64		upper_buffer_pages;
	int64		upper_buffered_messages;
	int64		moves;			/* level 2 -> level 1 */
	int64		moved_messages;
	/* compressed leaves (also counted above): frames and decoded entries */
	int64		compressed_leaf_pages;
	int64		compressed_leaf_bytes;	/* their frames */
	int64		compressed_leaf_raw_bytes;	/* the same, decompressed */
} FtStats;

/*
 * Callback for ft_vacuum: return true to delete the item.  A leaf item that
 * is kept may be changed in place without changing its length (a table
 * freezing a row version's header): the callback then sets patch->len to
 * the number of bytes from patch->start to overwrite with patch->bytes.
 * patch is NULL where nothing may change (buffered messages, and pages a
 * scan pinned under FtTree.vacuum_skip_pinned, where an answer of true is
 * ignored: the callback must count what stays itself).
 */
#define FT_VACUUM_MAX_PATCH 32

typedef struct FtVacuumPatch
{
	uint16		start;
	uint16		len;			/* 0: leave the item as it is */
	char		bytes[FT_VACUUM_MAX_PATCH];
} FtVacuumPatch;

typedef bool (*FtVacuumCallback) (const char *item, Size len, void *arg,
								  FtVacuumPatch *patch);

/*
 * Optional callback for ft_vacuum: may the leaves holding the keys in
 * [lo, hi) be skipped, as holding nothing for callback to do?  lo NULL:
 * from the start of the tree; hi NULL: to its end.
 */
typedef bool (*FtVacuumSkipFn) (const char *lo, Size lolen, const char *hi,
								Size hilen, void *arg);

typedef struct FtVacuumResult
{
	double		num_items;		/* items remaining (leaves + buffered) */
	double		items_removed;
	BlockNumber num_pages;
	BlockNumber pages_deleted;	/* pages this pass deleted */
	BlockNumber leaves_skipped; /* ranges the skip callback let go */
	BlockNumber leaves_compressed;	/* compressed leaves made of others */
} FtVacuumResult;

/* ft_init.c: at library load (_PG_init) */
extern void ft_init(void);

/* ft_buffer.c */
extern void ft_init_tree(FtTree *tree, ForkNumber forknum);
extern void ft_create_storage(SMgrRelation smgr,
							  ForkNumber forknum, bool wal,
							  uint64 first_seq);

/*
 * How a tree's owner takes values from the metapage's counter and from the
 * ranges of it given back (ft_meta_take_seq): grant(value, reused) says
 * how many (at least one) the owner takes from value, of the counter or
 * (reused) of a range given back; reusable(tag) whether a range
 * given back with that tag may be handed out again (NULL: never); granted
 * is told what was taken while the metapage is still locked, so that the
 * owner can publish it before anyone can read the counter past it.
 * Counter values at or above limit are refused with an error.
 */
typedef struct FtSeqPolicy
{
	uint64		(*grant) (uint64 value, bool reused, void *arg);
	bool		(*reusable) (uint64 tag, void *arg);
	void		(*granted) (uint64 first, uint64 count, void *arg);
	uint64		limit;
	void	   *arg;
} FtSeqPolicy;

/* The counter and the ranges given back, as one look at the metapage saw them */
typedef struct FtSeqState
{
	uint64		seq;			/* the counter */
	uint64		seq_first;		/* its value when the tree was created */
	uint32		nfree;
	FtSeqExtent given_back[FT_META_MAX_FREE_SEQ];	/* by first */
} FtSeqState;

extern uint64 ft_meta_take_seq(FtTree *tree, const FtSeqPolicy *policy,
							   uint64 *count);
extern uint64 ft_meta_read_seq(FtTree *tree);
extern void ft_meta_read_seq_state(FtTree *tree, FtSeqState *state);
extern void ft_meta_give_back_seq(FtTree *tree, const FtSeqExtent *ranges,
								  int nranges);
extern uint32 ft_meta_version(FtTree *tree);
extern bool ft_searching_free_pages(void);

/* ft_item.c: one item of an unbuffered tree, in place */
typedef struct FtItemRef
{
	Buffer		buf;			/* its leaf, locked */
	OffsetNumber off;			/* in view */
	Page		view;			/* the shared page, or for a compressed
								 * leaf its decoded page (ft_leaf_view) */
	char	   *item;			/* in view */
	Size		len;
	bool		borrowed;		/* the pin of buf is a hint's (kept_pin):
								 * releasing the ref only unlocks */
} FtItemRef;

extern bool ft_item_find(FtTree *tree, const char *key, Size keylen,
						 int access, FtItemRef *ref);
/*
 * Where a run of lookups of nearby keys last ended (ft_item_find_near):
 * the leaf, the buffer it was in then, which is pinned again without a
 * buffer-table lookup and without adding to its usage count while it still
 * holds the leaf (one use per leaf per run, as heap's index fetches count
 * one per page), and the entry found, whose successor is tried before a
 * binary search.
 *
 * A run may also keep the leaf pinned between lookups (keep_pin, as heap's
 * index fetches keep their heap page pinned): the next lookup in the same
 * leaf then only locks it.  The owner must call ft_leaf_hint_release
 * before it forgets the hint, in the same resource owner, and keep the
 * hint where it is while it keeps a pin (ft_release_kept_pins finds it).
 * A kept pin makes a VACUUM that needs the leaf's cleanup lock skip or wait
 * for the leaf, so only trees whose VACUUM skips pinned leaves
 * (FtTree.vacuum_skip_pinned) should keep one, and code about to wait for
 * a transaction or heavyweight lock calls ft_release_kept_pins first.
 */
typedef struct FtLeafHint
{
	BlockNumber blkno;			/* InvalidBlockNumber: no hint */
	Buffer		recent;			/* or InvalidBuffer */
	OffsetNumber off;			/* where the last key was found there, or
								 * InvalidOffsetNumber */
	bool		keep_pin;		/* keep the leaf found pinned in kept */
	Buffer		kept;			/* pinned by the hint, or InvalidBuffer */
} FtLeafHint;

#define FT_NO_LEAF_HINT \
	((FtLeafHint) {InvalidBlockNumber, InvalidBuffer, InvalidOffsetNumber, \
				   false, InvalidBuffer})

extern void ft_leaf_hint_release(FtLeafHint *hint);
extern bool ft_item_last(FtTree *tree, const char *maxkey, Size maxkeylen,
						 FtLeafHint *hint, char **item, Size *len);
extern void ft_release_kept_pins(void);
extern bool ft_item_find_near(FtTree *tree, const char *key, Size keylen,
							  int access, FtItemRef *ref, FtLeafHint *hint);
extern void ft_item_patch(FtTree *tree, FtItemRef *ref, Size start,
						  const char *bytes, Size len);

/*
 * An owner's transform of an item into a longer one with the same key (a
 * table expands a compact row version into heap's full header before it
 * changes it).  Registered at library load under a number that WAL records
 * name, so that redo, which knows nothing of owners, repeats it; it must
 * depend on the item's bytes only.  Returns a palloc'd item.
 */
typedef char *(*FtItemTransformFn) (const char *item, Size len,
									Size *newlen);

#define FT_TRANSFORM_TABLE_EXPAND	1
#define FT_TRANSFORM_MAX			1

extern void ft_register_item_transform(int id, FtItemTransformFn fn);
extern char *ft_item_transformed(int id, const char *item, Size len,
								 Size *newlen);
extern bool ft_item_transform(FtTree *tree, FtItemRef *ref, int id);
extern void ft_item_release(FtItemRef *ref);

/*
 * ft_item.c: every item of an unbuffered tree in a key range, checked and
 * acted on while all the leaves that hold the range are share-locked
 */
typedef bool (*FtItemCheckFn) (void *arg, const char *item, Size len);
extern bool ft_range_all(FtTree *tree, const char *lo, Size lolen,
						 const char *hi, Size hilen, FtItemCheckFn check,
						 void (*done) (void *arg), void *arg);

/* ft_insert.c */
extern void ft_check_item_size(FtTree *tree, Size len);

/* ft_routecache.c: backend-local copies of routing pages */
extern PGDLLIMPORT int ft_routing_cache_pages;
typedef struct FtRouteCacheStats
{
	int64		cached_pages;	/* copies held now */
	int64		hits;			/* descents that used a copy */
	int64		stores;			/* copies taken from shared buffers */
	int64		stale;			/* copies dropped for missing a downlink */
} FtRouteCacheStats;

extern void ft_routecache_invalidate(Oid relid);
/* a level-2 node was deleted (also in redo): copies must go */
extern void ft_routecache_advance_epoch(void);

/* ft_oscache.c: is a leaf in the kernel's page cache */
typedef enum FtPageCacheProbe
{
	FT_PAGE_CACHE_PROBE_OFF,
	FT_PAGE_CACHE_PROBE_ON,
	FT_PAGE_CACHE_PROBE_ASSUME	/* testing: the index is in memory */
} FtPageCacheProbe;
extern PGDLLIMPORT int ft_page_cache_probe;
extern void ft_oscache_invalidate(Oid relid);
extern void ft_routecache_stats(FtRouteCacheStats *stats);

/* ft_insert.c */
extern void ft_insert(FtTree *tree, const char *item, Size len);
extern void ft_seal_tail(FtTree *tree, const char *item, Size len);
extern void ft_insert_ascending(FtTree *tree, char **items, Size *lens,
								int n);
typedef enum FtUniqueResult
{
	FT_UNIQUE_INSERTED,
	FT_UNIQUE_REJECTED,			/* the check refused an item with the key */
	FT_UNIQUE_UNDECIDED			/* the caller must search for the key */
} FtUniqueResult;

/* what a unique insert's check says of a stored item with the key */
typedef enum FtUniqueVerdict
{
	FT_UNIQUE_REFUSE,			/* refuse the insert */
	FT_UNIQUE_ACCEPT,			/* no conflict */
	FT_UNIQUE_ACCEPT_OBSOLETE	/* no conflict, and the item may be one
								 * nobody needs any more: offer it to the
								 * prune callback */
} FtUniqueVerdict;

typedef FtUniqueVerdict (*FtUniqueCheckFn) (void *arg, const char *item,
											Size len);

/*
 * Of the n items the check called obsolete, which may go (remove[i] =
 * true)?  Returns the newest xid whose effects the removal hides
 * (hot-standby queries that could still need the items are cancelled), or
 * InvalidFullTransactionId if no query can.  Called under the same locks as
 * the check.
 */
typedef FullTransactionId (*FtUniquePruneFn) (void *arg, const char **items,
											  const Size *lens, int n,
											  bool *remove);

extern FtUniqueResult ft_insert_unique(FtTree *tree, const char *item,
									   Size len, FtCompareFn keycmp,
									   FtUniqueCheckFn check,
									   FtUniquePruneFn prune, void *checkarg);
extern bool ft_replace(FtTree *tree, const char *item, Size len,
					   FtUniqueCheckFn check, void *checkarg);
extern void ft_rewrite_leaf_of(FtTree *tree, const char *item, Size len);

/* ft_scan.c */
typedef struct FtScanData *FtScan;
extern FtScan ft_scan_begin(FtTree *tree);
extern void ft_scan_set_keep_pins(FtScan scan, bool keep);
extern void ft_scan_set_parts(FtScan scan, bool parts);
extern void ft_scan_set_bulk(FtScan scan, bool bulk);
extern int	ft_leaf_cache_leaves(void);
/* a leaf was copied: its first and last item (both NULL if it has none) */
typedef void (*FtLeafCopiedFn) (void *arg, const char *first, Size firstlen,
								const char *last, Size lastlen);
extern void ft_scan_set_leaf_callback(FtScan scan, FtLeafCopiedFn fn,
									  void *arg);
extern void ft_scan_seek(FtScan scan, const char *key, Size keylen, bool forward);
extern bool ft_scan_next(FtScan scan, const char **item, Size *len);
extern BlockNumber ft_scan_item_leaf(FtScan scan, const char *item);
extern void ft_scan_release(FtScan scan);
extern void ft_scan_end(FtScan scan);

/* ft_build.c: bottom-up load from sorted input */
typedef struct FtBuildStateData *FtBuildState;
extern FtBuildState ft_build_begin(FtTree *tree);
extern FtBuildState ft_build_begin_empty(FtTree *tree);
extern void ft_build_set_seq(FtBuildState state, uint64 seq);
extern void ft_build_add(FtBuildState state, const char *item, Size len);
extern void ft_build_finish(FtBuildState state);

/* ft_vacuum.c */
extern void ft_vacuum(FtTree *tree, FtVacuumCallback callback,
					  FtVacuumSkipFn skip, void *arg,
					  FtVacuumResult *result);
extern void ft_log_removal_horizon(FtTree *tree, FullTransactionId horizon);
extern void ft_prune_items(FtTree *tree, char **items, Size *lens,
						   const BlockNumber *leaves, int n,
						   FtUniquePruneFn prune, void *arg);

/* ft_codec.c: page compressors, and what they would save on a tree */
#define FT_EST_LEAF		0
#define FT_EST_BUFFER	1
#define FT_EST_ROUTING	2
#define FT_EST_KINDS	3

typedef struct FtCompressionEstimate
{
	int64		pages[FT_EST_KINDS];
	int64		items[FT_EST_KINDS];	/* leaf items, messages, pivots */
	int64		raw_bytes[FT_EST_KINDS];
	int64		compressed_bytes[FT_EST_KINDS];
} FtCompressionEstimate;

extern const char *ft_codec_name(FtCodecId codec);
extern bool ft_codec_lookup(const char *name, FtCodecId *codec,
							int *default_level);
extern void ft_codec_level_range(FtCodecId codec, int *min, int *max);
extern Size ft_codec_bound(FtCodecId codec, Size len);
extern Size ft_codec_compress(FtCodecId codec, int level, const char *src,
							  Size len, char *dst, Size cap);
extern bool ft_codec_decompress(FtCodecId codec, const char *src, Size len,
								char *dst, Size rawlen);
extern void ft_compression_estimate(FtTree *tree, FtCodecId codec, int level,
									FtCompressionEstimate *est);

/* ft_verify.c */
extern void ft_verify(FtTree *tree);
extern void ft_collect_stats(FtTree *tree, FtStats *stats);

#endif							/* FT_H */
