/*-------------------------------------------------------------------------
 *
 * ft_int.h
 *	  Declarations private to src/ft.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FT_INT_H
#define FT_INT_H

#include "ft/ft.h"
#include "ft/ft_page.h"
#include "catalog/pg_class.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

/*
 * Largest item the tree accepts (also bounds pivots and messages): a fifth
 * of a page (1600 bytes with 8 kB pages).  A buffer node must hold its
 * high key, two pivots, the room kept for one more pivot (FT_PIVOT_ROOM)
 * and a message, each up to this size; with btree's third of a page a
 * level-2 node could hold only one pivot, and trees of such keys grew
 * chains of one-child nodes (dozens of levels, more internal pages than
 * leaves).
 */
#define FT_MAX_ITEM_SIZE \
	MAXALIGN_DOWN((BLCKSZ - MAXALIGN(SizeOfPageHeaderData + 5 * sizeof(ItemIdData)) - \
				   MAXALIGN(sizeof(FtPageOpaqueData))) / 5 - 16)

/* Room a level-2 buffer node keeps for one more pivot (see ft_split.c) */
#define FT_PIVOT_ROOM(tree) \
	(MAXALIGN(MAXALIGN(sizeof(uint64)) + \
			  ((tree)->keyprefix > 0 ? (tree)->keyprefix : \
			   (tree)->max_item_size > 0 ? (tree)->max_item_size : FT_MAX_ITEM_SIZE)) + \
	 sizeof(ItemIdData))

/*
 * The tree's kind is its relation's: an index's tree or a table's.  Error
 * messages name it, corruption is reported with the errcode PostgreSQL uses
 * for that kind of relation, and only an index can be rebuilt by REINDEX.
 */
static inline bool
ft_relation_is_index(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_INDEX;
}

static inline const char *
ft_relkind_name(Relation rel)
{
	return ft_relation_is_index(rel) ? "index" : "table";
}

static inline int
ft_corrupted_errcode(Relation rel)
{
	return ft_relation_is_index(rel) ? ERRCODE_INDEX_CORRUPTED : ERRCODE_DATA_CORRUPTED;
}

/* usable bytes for items on a leaf page */
#define FT_LEAF_CAPACITY \
	(BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(FtPageOpaqueData)))

/* The length of an item's key, as high keys and pivots store it */
static inline Size
ft_key_len(FtTree *tree, Size itemlen)
{
	return tree->keyprefix > 0 ? Min(tree->keyprefix, itemlen) : itemlen;
}

/*
 * The key that separates two adjacent items where a leaf splits (the left
 * page's high key, the right page's pivot): the tree's separator if it has
 * one (palloc'd, see FtSeparatorFn), else right's key (a pointer into
 * right).  left is NULL when nothing lies to the left.  Space reserved for
 * a high key before the cut is chosen is that of right's whole key, which
 * the separator never exceeds.
 */
static inline const char *
ft_separator(FtTree *tree, const char *left, Size leftlen,
			 const char *right, Size rightlen, Size *seplen)
{
	if (tree->separator != NULL && left != NULL)
	{
		char	   *sep = tree->separator(tree->cmp_arg, left, leftlen,
										  right, rightlen, seplen);

		if (sep != NULL)
		{
			Assert(*seplen > 0 && *seplen <= ft_key_len(tree, rightlen));
			Assert(tree->cmp(tree->cmp_arg, left, leftlen, sep, *seplen) < 0);
			Assert(tree->cmp(tree->cmp_arg, sep, *seplen, right, rightlen) <= 0);
			return sep;
		}
	}
	*seplen = ft_key_len(tree, rightlen);
	return right;
}

/* Reserve kept free on internal pages for one more pivot */
#define FT_PIVOT_RESERVE \
	(MAXALIGN(FT_PIVOT_HDRSZ + FT_MAX_ITEM_SIZE) + sizeof(ItemIdData))
/* A buffer node whose pivots take more than this must split */
#define FT_BUFFER_PIVOT_LIMIT	(BLCKSZ / 2)

/*
 * Most children a buffer node at this level may have.  Level-1 nodes get
 * half of the tree's fanout: a leaf flush then moves about twice as many
 * messages per leaf read and write.  That makes the level-1 layer twice as
 * large, which costs little because inserts do not touch it: they stop at
 * level 2, and a level-1 node is touched once per move of a whole batch.
 */
static inline int
ft_node_fanout(FtTree *tree, int level)
{
	return level == 1 ? Max(2, tree->fanout / 2) : tree->fanout;
}

/*
 * Most children a buffer node at this level may have right now.  A level-1
 * node that buffers nothing (every insert below it was applied directly, as
 * in a cached index, or for unique inserts, which read their leaf anyway)
 * only routes to its leaves, like a B-tree's internal page, and may have
 * FT_UNBUFFERED_FANOUT_FACTOR times more children: with half the fanout,
 * level-1 nodes are a sixth as many as the leaves, and an insert load whose
 * leaves are all cached would need all of them cached as well.  Pivot bytes
 * bound it too (FT_BUFFER_PIVOT_LIMIT).  Once messages move into such a
 * node, each leaf split below it that needs a pivot splits it (in half),
 * until it is back at ft_node_fanout.  (Splitting it before the move
 * instead would use up the pivot room of the level-2 node above it, which
 * a move is often made to restore.)
 */
#define FT_UNBUFFERED_FANOUT_FACTOR 16

static inline int
ft_node_child_limit(FtTree *tree, int level, bool has_messages)
{
	if (level == 1 && !has_messages)
		return ft_node_fanout(tree, level) * FT_UNBUFFERED_FANOUT_FACTOR;
	return ft_node_fanout(tree, level);
}

/* Does buffer node page hold any message? */
static inline bool
ft_node_has_messages(Page page)
{
	return PageGetMaxOffsetNumber(page) >= FtFirstMsgOffset(FtPageGetOpaque(page));
}

/* A position in the tree found by a descent */
typedef struct FtDescent
{
	Buffer		buf;			/* target page (locked as requested) */
	int			level;			/* its level */
	Buffer		parent;			/* pinned (not locked) level-1 parent, or
								 * InvalidBuffer when the root is a leaf */
	Buffer		parent2;		/* scans: the pinned level-2 buffer node, or
								 * InvalidBuffer */
	int			childidx;		/* index of buf among parent's children */
	char	   *lowkey;			/* lower bound of the target, palloc'd, or
								 * NULL for minus infinity */
	Size		lowkeylen;
	bool		parentlow_known;	/* parentlow is set (only for a tree
									 * with a leaf_range_hook, when the
									 * level-1 node was copied) */
	char	   *parentlow;		/* lower bound of that node, palloc'd, or
								 * NULL for minus infinity */
	Size		parentlowlen;
} FtDescent;

/* ft_routecache.c, ft_oscache.c: called by ft_init */
extern void ft_routecache_init(void);
extern void ft_item_init(void);
extern void ft_oscache_init(void);

/* ft_buffer.c */
extern Buffer ft_getbuf(FtTree *tree, BlockNumber blkno, int access);
extern Buffer ft_getleaf(FtTree *tree, BlockNumber blkno, int access);
extern BlockNumber ft_nblocks(FtTree *tree);
extern void ft_checkpage(Relation rel, Buffer buf);
extern Buffer ft_newbuf(FtTree *tree);
extern Buffer ft_newleaf(FtTree *tree);
extern void ft_release_spare_leaf(FtTree *tree);
extern void ft_remember_deleted_page(FtTree *tree, BlockNumber blkno);
extern int	ft_own_deleted_pages(FtTree *tree, int limit);
extern void ft_buffer_init(void);
extern bool ft_page_recyclable(Page page);
extern void ft_read_meta(FtTree *tree, BlockNumber *root, uint32 *root_level);
extern void ft_forget_root(FtTree *tree);
extern bool ft_leaf_resident(FtTree *tree, BlockNumber blkno, Buffer *recent);
extern Buffer ft_getbuf_recent(FtTree *tree, BlockNumber blkno, int access,
							   Buffer recent);
extern void ft_set_target(FtTree *tree, BlockNumber blkno, Buffer buf);
extern Buffer ft_pin_target(FtTree *tree, BlockNumber blkno);

/* ft_search.c: searches within one page */
extern int	ft_cmp(FtTree *tree, const char *a, Size alen, const char *b, Size blen);
extern OffsetNumber ft_leaf_lower_bound(FtTree *tree, Page page,
										const char *key, Size len, bool *found);
extern OffsetNumber ft_leaf_insert_position(FtTree *tree, Page page,
											const char *key, Size len,
											bool *found);
extern int	ft_child_index(FtTree *tree, Page page, const char *key, Size len,
						   bool strict);
extern OffsetNumber ft_msg_bound(FtTree *tree, Page page, const char *key,
								 Size len, bool upper);
extern OffsetNumber ft_slice_start(FtTree *tree, Page page, int childidx);
extern void ft_slice_range(FtTree *tree, Page page, int childidx,
						   OffsetNumber *first, OffsetNumber *end);
extern bool ft_must_move_right(FtTree *tree, Page page, const char *key,
							   Size len, bool strict);

/* ft_page.c */
extern Size ft_item_space(Size len);
extern void ft_rewrite_leaf_page(Page page, FtPageOpaque template,
								 char **items, Size *lens, int nitems,
								 const char *hikey, Size hikeylen);
extern char *ft_build_leaf_delta(Page old, char **items, Size *lens,
								 int nitems, const char *hikey,
								 Size hikeylen, BlockNumber right,
								 uint64 msn, bool count_flush,
								 Size *deltalen);

/* messages at offsets [first, end) of a buffer node (or its copy) */
typedef struct FtMsgRun
{
	Page		page;			/* NULL: no messages */
	OffsetNumber first;
	OffsetNumber end;
} FtMsgRun;

/* one buffered message, decoded */
typedef struct FtMsgRef
{
	char	   *key;
	Size		keylen;
	uint64		msn;
	int			type;
} FtMsgRef;

/*
 * FtTree.append_batch: items[0] is the item being inserted, items[1..n)
 * the batch's later ones (ascending); a right-edge split that takes some
 * of them along sets taken to their number.
 */
typedef struct FtAppendBatch
{
	char	  **items;
	Size	   *lens;
	int			n;
	int			taken;
} FtAppendBatch;

/* ft_merge.c */
extern int	ft_merge_leaf(FtTree *tree, Page lpage, const FtMsgRun *runs,
						  int nruns, const char *extra, Size extralen,
						  char **items, Size *lens, uint64 *maxmsn);

/* ft_compress.c */
extern void ft_compress_init(void);
extern bool ft_leaf_compress(FtTree *tree, Page page, FtPageOpaque template,
							 char **items, Size *lens, int n,
							 const char *hikey, Size hikeylen);
extern int	ft_cut_compressed(FtTree *tree, char **items, Size *lens, int n,
							  Size last_hikey_space, int *starts, int maxpages,
							  bool even);
extern Page ft_leaf_view(FtTree *tree, Buffer buf);
extern void ft_leaf_copy(FtTree *tree, Buffer buf, char *dst);
extern void ft_leaf_copy_uncached(FtTree *tree, Buffer buf, char *dst);
extern void ft_view_copy(char *dst, Page view, Page page);
extern Page ft_leaf_view_part(FtTree *tree, Buffer buf, const char *key,
							  Size keylen, bool forward, const char **low,
							  Size *lowlen, const char **high,
							  Size *highlen);
extern bool ft_leaf_is_compressed(Page page);
extern Size ft_leaf_frame_space(FtTree *tree, Buffer buf);
extern bool ft_leaf_is_wide(Page page);
extern Size ft_view_bytes(Page view);

/* ft_planes.c */
extern void ft_planes_encode(const char *src, char *dst, int n, Size len);
extern void ft_planes_decode(const char *src, char *dst, int n, Size len);

/* ft_columns.c */
extern Size ft_columns_encode(FtTree *tree, char **items, int n, Size len,
							  char *dst, Size cap);
extern bool ft_columns_decode(const char *src, Size srclen, int n, char *dst,
							  Size dstlen);
extern void ft_leaf_delete(FtTree *tree, Buffer buf, OffsetNumber *dead,
						   int ndead);
extern bool ft_leaf_has_change_room(FtTree *tree, Buffer buf);
extern void ft_leaf_view_protect(Page view);
extern void ft_leaf_view_unprotect(Page view);
extern void ft_leaf_view_unprotect_all(void);
extern bool ft_leaf_recompress(FtTree *tree, Buffer buf, char **items,
							   Size *lens, int n);
extern bool ft_leaf_patch_entries(FtTree *tree, Buffer buf, Page view,
								  const char *payload, Size paylen,
								  int npatches);
extern bool ft_leaf_change_entry(FtTree *tree, Buffer buf, Page *viewp,
								 OffsetNumber off, int transform, Size start,
								 const char *bytes, Size len);

/* a page-sized buffer that also holds a decoded compressed leaf */
typedef union FtViewBuf
{
	char		data[FT_VIEW_SIZE];
	double		force_align_d;
	int64		force_align_i64;
} FtViewBuf;

/* ft_oscache.c */
extern bool ft_leaf_in_memory(FtTree *tree, BlockNumber blkno);
extern bool ft_index_in_memory(FtTree *tree);

/* ft_routecache.c */
extern Page ft_routecache_lookup(FtTree *tree, BlockNumber blkno, uint32 level);
extern void ft_routecache_store(FtTree *tree, BlockNumber blkno, Page page);
extern void ft_routecache_forget(FtTree *tree, BlockNumber blkno);
extern bool ft_routecache_epoch_ready(void);

/* ft_search.c: descents */
extern void ft_descend(FtTree *tree, const char *key, Size len, bool strict,
					   int stoplevel, int access, FtDescent *d);
extern void ft_descend_copy(FtTree *tree, const char *key, Size len,
							bool strict, int stoplevel, int access,
							FtDescent *d, char *bcopy, char *b2copy,
							bool pivots);
extern Buffer ft_descend_to_leaf(FtTree *tree, const char *key, Size len,
								 int access);
extern Buffer ft_descend_to_level(FtTree *tree, const char *key, Size len,
								  int level, int access);

/* ft_flush.c */
typedef enum FtFlushResult
{
	FT_FLUSH_DONE,
	FT_FLUSH_NEED_SPLIT			/* the parent has no room for new pivots */
} FtFlushResult;

extern FtFlushResult ft_flush_child(FtTree *tree, Buffer bbuf, int childidx,
									Buffer lbuf, const char *extra,
									Size extralen, bool over_fanout);
extern int	ft_heaviest_child(FtTree *tree, Page page);
extern int	ft_heaviest_slice(FtTree *tree, Page page, Size *slicebytes);
extern FtFlushResult ft_flush_to_node(FtTree *tree, Buffer ubuf, int xidx,
									  char **splitkey, Size *splitkeylen,
									  bool over_fanout);
extern void ft_prefetch_move_leaves(FtTree *tree, BlockNumber xblk,
									Size need);

/*
 * Read-ahead for flushes and moves (see buffer_insert): a level-1 node
 * prefetches its next flush target when its free space drops below
 * FT_PREFETCH_FREE; a level-2 node prefetches its next move target when it
 * has room for fewer than FT_PREFETCH_MOVE_MSGS more messages, and the
 * leaves that move will flush when fewer than FT_PREFETCH_LEAVES_MSGS.
 */
#define FT_PREFETCH_FREE	(BLCKSZ / 4)
#define FT_PREFETCH_MOVE_MSGS	4
#define FT_PREFETCH_LEAVES_MSGS	2

/* ft_vacuum.c */
extern void ft_delete_offsets(FtTree *tree, Buffer buf, OffsetNumber *dead,
							  int ndead);

/*
 * at most this many leaves merge into one compressed leaf (one record): a
 * wide frame's worth (FT_WIDE_FRAME_BYTES) of full ones
 */
#define FT_MERGE_MAX_LEAVES	16

extern Size ft_leaf_items_space(Page page);
extern bool ft_merge_leaves(FtTree *tree, Buffer bbuf, int a, Buffer lsbuf,
							Buffer *leaves, int k, bool prune);

/* ft_seal.c */
extern void ft_seal_init(void);
extern void ft_seal_behind(FtTree *tree, Buffer bbuf, int childidx,
						   const char *item, Size len);

/* ft_prune.c */
extern bool ft_prune_leaf(FtTree *tree, Buffer lbuf, Size need);
extern bool ft_prune_run(FtTree *tree, char **old, Size *oldlens, int nold,
						 bool rightmost, FtLeafPrune *pr, char ***items,
						 Size **lens, int *n, Size *freed, Size *added);
extern void ft_prune_free(FtLeafPrune *pr);
extern void ft_prune_forget(void);

/* ft_split.c */

/*
 * What an insert asks ft_make_room to split even if it does not look full:
 * the node at level on the key's path (or the root, if the root is at or
 * below it), which could not take the pivots, item or message the insert
 * had for it.  With blkno set, only if that node is still the page at
 * blkno with the split count nsplits it had then: inserts that found one
 * node full at the same moment would otherwise each split it again, one
 * after the other, halving it once per insert (a table's concurrent
 * appenders left level-1 nodes with 14 leaves of their 128 on average).
 */
typedef struct FtSplitRequest
{
	int			level;
	BlockNumber blkno;			/* or InvalidBlockNumber: whatever node */
	uint32		nsplits;
} FtSplitRequest;

extern void ft_make_room(FtTree *tree, const char *key, Size len,
						 const FtSplitRequest *force);

/* A request to split the node in buf (locked) if it has not split since */
static inline FtSplitRequest
ft_split_request(Buffer buf)
{
	FtPageOpaque opaque = FtPageGetOpaque(BufferGetPage(buf));
	FtSplitRequest r;

	r.level = opaque->ft_level;
	r.blkno = BufferGetBlockNumber(buf);
	r.nsplits = opaque->ft_nsplits;
	return r;
}

/* A request to split whatever node is at level on the path */
static inline FtSplitRequest
ft_split_request_level(int level)
{
	FtSplitRequest r;

	r.level = level;
	r.blkno = InvalidBlockNumber;
	r.nsplits = 0;
	return r;
}

#endif							/* FT_INT_H */
