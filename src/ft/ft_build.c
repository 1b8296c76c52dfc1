/*-------------------------------------------------------------------------
 *
 * ft_build.c
 *	  Bottom-up load of a tree from sorted input (CREATE INDEX, and a
 *	  table's rewrite by VACUUM FULL or CLUSTER).
 *
 * Items arrive in comparator order.  Each level keeps one page under
 * construction; when it fills, the next page of that level is allocated
 * (so the full page can get its right link), the full page is written and
 * WAL-logged as a whole image, and its lower bound becomes a pivot one
 * level up.  Buffer nodes are left with room for messages and for more
 * children, leaves with (100 - fillfactor)% free.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

#define FT_MAX_BUILD_LEVELS 16

typedef struct BuildLevel
{
	Buffer		buf;			/* page being filled (allocated, pinned) */
	char	   *lowkey;			/* its lower bound; NULL on the first page */
	Size		lowkeylen;
	char	  **items;			/* leaf items / pivot keys (copies) */
	Size	   *lens;
	BlockNumber *children;		/* internal levels: downlinks */
	int			n;
	Size		used;			/* page bytes used by items */
	Size		pivotbytes;
	int			npages_done;
	MemoryContext itemcxt;		/* copies of the current page's items */
	MemoryContext sparecxt;		/* compressed leaves: where items carried
								 * to the next batch are copied */
} BuildLevel;

typedef struct FtBuildStateData
{
	FtTree	   *tree;
	Buffer		metabuf;
	int			nlevels;
	BuildLevel	levels[FT_MAX_BUILD_LEVELS];
	MemoryContext cxt;
	uint64		seq;			/* the metapage's counter, when building
								 * into an empty tree */
	uint64		seq_first;
} FtBuildStateData;

static void
level_start(FtBuildState state, int level, Buffer buf)
{
	BuildLevel *lv = &state->levels[level];
	int			cap = Max(FT_MAX_ITEMS_PER_PAGE, FT_FRAME_MAX_ITEMS) + 1;

	lv->buf = buf;
	if (lv->items == NULL)
	{
		lv->items = MemoryContextAlloc(state->cxt, sizeof(char *) * cap);
		lv->lens = MemoryContextAlloc(state->cxt, sizeof(Size) * cap);
		lv->children = MemoryContextAlloc(state->cxt, sizeof(BlockNumber) * cap);
		lv->itemcxt = AllocSetContextCreate(state->cxt, "fractam build page",
											ALLOCSET_DEFAULT_SIZES);
		lv->sparecxt = AllocSetContextCreate(state->cxt, "fractam build page",
											 ALLOCSET_DEFAULT_SIZES);
	}
	else
		MemoryContextReset(lv->itemcxt);
	lv->n = 0;
	lv->used = 0;
	lv->pivotbytes = 0;
}

static FtBuildState
build_state_new(FtTree *tree)
{
	FtBuildState state = palloc0(sizeof(FtBuildStateData));

	state->tree = tree;
	state->cxt = AllocSetContextCreate(CurrentMemoryContext,
									   "fractam build",
									   ALLOCSET_DEFAULT_SIZES);
	state->nlevels = 1;
	return state;
}

/*
 * A new page for the build, pinned but not locked: nobody else reads the
 * relation while it is built, and a build holding buffer locks from page to
 * page would hold off query cancel and shutdown (an LWLock defers
 * interrupts) for as long as its input takes.  write_page locks it.
 */
static Buffer
build_newbuf(FtBuildState state)
{
	Buffer		buf = ft_newbuf(state->tree);

	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return buf;
}

FtBuildState
ft_build_begin(FtTree *tree)
{
	FtBuildState state = build_state_new(tree);

	if (ft_nblocks(tree) != 0)
		elog(ERROR, "%s \"%s\" already contains data",
			 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
	state->metabuf = build_newbuf(state);
	Assert(BufferGetBlockNumber(state->metabuf) == FT_METAPAGE_BLKNO);
	level_start(state, 0, build_newbuf(state));
	return state;
}

/*
 * Load a tree that ft_create_storage made and that holds nothing (a table's
 * new file in a rewrite, whose row ids are numbered from the metapage's
 * counter): its empty root leaf becomes the first leaf, and the metapage
 * keeps the counter, set by ft_build_set_seq.
 */
FtBuildState
ft_build_begin_empty(FtTree *tree)
{
	FtBuildState state = build_state_new(tree);
	Buffer		leafbuf;
	FtMetaData *meta;

	if (ft_nblocks(tree) != 2)
		elog(ERROR, "%s \"%s\" is not an empty tree",
			 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
	state->metabuf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE);
	meta = FtPageGetMeta(BufferGetPage(state->metabuf));
	leafbuf = ft_getbuf(tree, 1, BUFFER_LOCK_EXCLUSIVE);
	if (meta->root != 1 || meta->root_level != 0 || meta->nfree_seq != 0 ||
		PageGetMaxOffsetNumber(BufferGetPage(leafbuf)) != 0)
		elog(ERROR, "%s \"%s\" is not an empty tree",
			 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
	state->seq = meta->seq;
	state->seq_first = meta->seq_first;
	LockBuffer(state->metabuf, BUFFER_LOCK_UNLOCK);
	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
	level_start(state, 0, leafbuf);
	return state;
}

/* The metapage's counter once an ft_build_begin_empty build finishes */
void
ft_build_set_seq(FtBuildState state, uint64 seq)
{
	Assert(seq >= state->seq);
	state->seq = seq;
}

/* write a finished page image and log it */
static void
write_page(FtBuildState state, Buffer buf, Page image)
{
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buf), image, BLCKSZ);
	MarkBufferDirty(buf);
	ftxlog_images(state->tree->rel, &buf, 1, FT_IMAGES_BUILD);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}

static void add_pivot(FtBuildState state, int level, const char *key,
					  Size keylen, BlockNumber child);

/*
 * Write the page under construction at level with the given high key
 * (NULL: rightmost) and right link, then add its pivot one level up
 * unless it is the root.
 */
static void
finish_page(FtBuildState state, int level, const char *hikey, Size hikeylen,
			BlockNumber right, bool is_root)
{
	BuildLevel *lv = &state->levels[level];
	PGAlignedBlock image;
	FtPageOpaque opaque;
	OffsetNumber off = FirstOffsetNumber;
	BlockNumber blkno = BufferGetBlockNumber(lv->buf);
	int			i;

	ft_page_init(image.data,
				 level == 0 ? FT_PAGE_LEAF :
				 FtLevelIsBuffer(level) ? FT_PAGE_BUFFER : FT_PAGE_ROUTING,
				 level);
	opaque = FtPageGetOpaque(image.data);
	opaque->ft_right = right;
	if (hikey)
		ft_page_add_item(image.data, hikey, hikeylen, off++);
	for (i = 0; i < lv->n; i++)
	{
		if (level == 0)
			ft_page_add_item(image.data, lv->items[i], lv->lens[i], off++);
		else
		{
			PGAlignedBlock pivot;
			FtPivotHeader *ph = (FtPivotHeader *) pivot.data;
			Size		keylen = (i == 0) ? 0 : lv->lens[i];

			memset(ph, 0, FT_PIVOT_HDRSZ);
			ph->child = lv->children[i];
			if (keylen > 0)
				memcpy(pivot.data + FT_PIVOT_HDRSZ, lv->items[i], keylen);
			ft_page_add_item(image.data, pivot.data, FT_PIVOT_HDRSZ + keylen, off++);
		}
	}
	if (level > 0)
		opaque->ft_nchildren = lv->n;
	write_page(state, lv->buf, image.data);
	lv->npages_done++;

	if (!is_root)
		add_pivot(state, level + 1, lv->lowkey, lv->lowkeylen, blkno);
}

static bool
level_full(FtBuildState state, int level, Size newlen)
{
	FtTree	   *tree = state->tree;
	BuildLevel *lv = &state->levels[level];
	Size		sp;

	if (lv->n == 0)
		return false;
	if (level == 0)
	{
		sp = ft_item_space(newlen);
		/* keep room for a high key as large as the next item */
		return lv->used + 2 * sp > FT_LEAF_CAPACITY ||
			lv->used + sp > FT_LEAF_CAPACITY * tree->fillfactor / 100;
	}
	sp = ft_item_space(FT_PIVOT_HDRSZ + newlen);

	/*
	 * Buffer nodes get three quarters of the children they may have.  In a
	 * buffering tree that is the fanout of a node that holds messages: a
	 * build cannot know whether the index will take inserts larger than
	 * memory, where narrow level-1 nodes make each flush carry more
	 * (bench/RESULTS.md, session 16).  A tree that never buffers (a table,
	 * or an index WITH (buffering = off)) only routes through them, as
	 * its inserts and appends do, with the wider limit of an unbuffered
	 * node: narrow nodes would add a page per six leaves for nothing.
	 */
	if (FtLevelIsBuffer(level))
		return lv->n >= Max(2, ft_node_child_limit(tree, level,
												   tree->buffering) * 3 / 4) ||
			lv->pivotbytes + sp > FT_BUFFER_PIVOT_LIMIT / 2;
	return lv->used + sp + FT_PIVOT_RESERVE + ft_item_space(newlen) >
		FT_LEAF_CAPACITY * 9 / 10;
}

/* copy a key into a memory context */
static char *
copy_key(MemoryContext cxt, const char *key, Size len)
{
	char	   *p;

	if (key == NULL)
		return NULL;
	p = MemoryContextAlloc(cxt, Max(len, 1));
	memcpy(p, key, len);
	return p;
}

static void
add_pivot(FtBuildState state, int level, const char *key, Size keylen,
		  BlockNumber child)
{
	BuildLevel *lv;

	if (level >= FT_MAX_BUILD_LEVELS)
		elog(ERROR, "fractam: tree too tall");
	if (level >= state->nlevels)
	{
		state->nlevels = level + 1;
		memset(&state->levels[level], 0, sizeof(BuildLevel));
		level_start(state, level, build_newbuf(state));
	}
	lv = &state->levels[level];
	if (level_full(state, level, keylen))
	{
		Buffer		next = build_newbuf(state);
		char	   *sep = copy_key(state->cxt, key, keylen);

		finish_page(state, level, sep, keylen, BufferGetBlockNumber(next), false);
		level_start(state, level, next);
		lv->lowkey = sep;
		lv->lowkeylen = keylen;
	}
	lv->items[lv->n] = copy_key(lv->itemcxt, key, keylen);
	lv->lens[lv->n] = keylen;
	lv->children[lv->n] = child;
	lv->n++;
	lv->used += ft_item_space(FT_PIVOT_HDRSZ + (lv->n == 1 ? 0 : keylen));
	lv->pivotbytes += ft_item_space(FT_PIVOT_HDRSZ + keylen);
}

/*
 * Compressed leaves.  Items gather until they would fill a decoded page;
 * then they are cut into compressed leaves as full as fit
 * (ft_cut_compressed), and all but the last are written (the last one too
 * if it is the only one: next, the item that did not fit, gives its high
 * key).  The last one's items stay, as the start of the next batch.
 */
static void
write_compressed_leaf(FtBuildState state, int from, int n, const char *hikey,
					  Size hikeylen, bool last)
{
	BuildLevel *lv = &state->levels[0];
	PGAlignedBlock image;
	FtPageOpaqueData template;
	BlockNumber blkno = BufferGetBlockNumber(lv->buf);
	Buffer		next = last ? InvalidBuffer : build_newbuf(state);

	memset(&template, 0, sizeof(template));
	template.ft_right = last ? InvalidBlockNumber : BufferGetBlockNumber(next);
	if (!ft_leaf_compress(state->tree, image.data, &template, lv->items + from,
						  lv->lens + from, n, last ? NULL : hikey, hikeylen))
		elog(ERROR, "fractam: %d entries cut to fit a compressed leaf do not fit it", n);
	write_page(state, lv->buf, image.data);
	lv->npages_done++;
	add_pivot(state, 1, lv->lowkey, lv->lowkeylen, blkno);
	if (!last)
	{
		lv->buf = next;
		lv->lowkey = copy_key(state->cxt, hikey, hikeylen);
		lv->lowkeylen = hikeylen;
	}
}

static void
emit_compressed_leaves(FtBuildState state, const char *next, Size nextlen)
{
	FtTree	   *tree = state->tree;
	BuildLevel *lv = &state->levels[0];
	int			starts[FT_FRAME_MAX_ITEMS + 1];
	int			np;
	int			nwrite;
	int			p;
	int			keep;
	MemoryContext tmp;

	np = ft_cut_compressed(tree, lv->items, lv->lens, lv->n,
						   ft_item_space(ft_key_len(tree, nextlen)), starts,
						   lengthof(starts), false);
	Assert(np >= 1);
	nwrite = (np == 1) ? 1 : np - 1;
	for (p = 0; p < nwrite; p++)
	{
		int			end = (p + 1 < np) ? starts[p + 1] : lv->n;
		const char *right = (p + 1 < np) ? lv->items[end] : next;
		Size		rightlen = (p + 1 < np) ? lv->lens[end] : nextlen;
		Size		hikeylen;
		const char *hikey = ft_separator(tree, lv->items[end - 1],
										 lv->lens[end - 1], right, rightlen,
										 &hikeylen);

		write_compressed_leaf(state, starts[p], end - starts[p], hikey,
							  hikeylen, false);
		if (hikey != right)
			pfree((char *) hikey);
	}

	/* carry the unwritten items over, copied out of the page's context */
	keep = (np == 1) ? lv->n : starts[np - 1];
	MemoryContextReset(lv->sparecxt);
	lv->used = 0;
	for (p = keep; p < lv->n; p++)
	{
		lv->items[p - keep] = copy_key(lv->sparecxt, lv->items[p], lv->lens[p]);
		lv->lens[p - keep] = lv->lens[p];
		lv->used += ft_item_space(lv->lens[p]);
	}
	lv->n -= keep;
	tmp = lv->itemcxt;
	lv->itemcxt = lv->sparecxt;
	lv->sparecxt = tmp;
}

/*
 * Where a table's append point starts in the last batch: the items at the
 * end that fill one uncompressed leaf to fillfactor.  A table's new rows
 * go to its last leaf; VACUUM never compresses it, and neither does a
 * build (a compressed last leaf would be rewritten at the first insert).
 */
static int
append_point_start(FtBuildState state)
{
	FtTree	   *tree = state->tree;
	BuildLevel *lv = &state->levels[0];
	Size		budget = FT_LEAF_CAPACITY * tree->fillfactor / 100;
	Size		used = 0;
	int			start = lv->n;

	if (tree->frame_chgcap == 0)
		return lv->n;
	while (start > 0 && used + ft_item_space(lv->lens[start - 1]) <= budget)
	{
		used += ft_item_space(lv->lens[start - 1]);
		start--;
	}
	return start;
}

/*
 * The last compressed batch of a build: everything pending is written,
 * compressed but for a table's append point (append_point_start).
 */
static void
finish_compressed_leaves(FtBuildState state)
{
	FtTree	   *tree = state->tree;
	BuildLevel *lv = &state->levels[0];
	int			starts[FT_FRAME_MAX_ITEMS + 1];
	int			np = 0;
	int			p;
	int			ncomp = append_point_start(state);

	if (ncomp > 0)
		np = ft_cut_compressed(tree, lv->items, lv->lens, ncomp,
							   ncomp < lv->n ?
							   ft_item_space(ft_key_len(tree, lv->lens[ncomp])) : 0,
							   starts, lengthof(starts), false);
	/* a tree needs at least two leaves to have a root above them */
	if (np == 1 && lv->npages_done == 0 && ncomp == lv->n)
	{
		np = 2;
		starts[1] = lv->n / 2;
	}
	for (p = 0; p < np; p++)
	{
		int			end = (p + 1 < np) ? starts[p + 1] : ncomp;
		bool		last = p + 1 == np && ncomp == lv->n;
		const char *hikey = NULL;
		Size		hikeylen = 0;

		/* (the first of two leaves of a one-entry tree is empty) */
		if (!last)
			hikey = ft_separator(tree,
								 end > starts[p] ? lv->items[end - 1] : NULL,
								 end > starts[p] ? lv->lens[end - 1] : 0,
								 lv->items[end], lv->lens[end], &hikeylen);
		write_compressed_leaf(state, starts[p], end - starts[p], hikey,
							  hikeylen, last);
		if (hikey != NULL && hikey != lv->items[end])
			pfree((char *) hikey);
	}

	/* the append point: the last leaf, uncompressed */
	if (ncomp < lv->n)
	{
		lv->used = 0;
		for (p = ncomp; p < lv->n; p++)
		{
			lv->items[p - ncomp] = lv->items[p];
			lv->lens[p - ncomp] = lv->lens[p];
			lv->used += ft_item_space(lv->lens[p]);
		}
		lv->n -= ncomp;
		finish_page(state, 0, NULL, 0, InvalidBlockNumber, false);
	}
	lv->n = 0;
}

void
ft_build_add(FtBuildState state, const char *item, Size len)
{
	BuildLevel *lv = &state->levels[0];

	ft_check_item_size(state->tree, len);
	if (state->tree->codec != FT_CODEC_NONE)
	{
		if (lv->n > 0 &&
			(lv->n >= FtFrameMaxItems(state->tree) ||
			 lv->used + ft_item_space(len) +
			 ft_item_space(ft_key_len(state->tree, len)) > FtFrameCapacity(state->tree)))
			emit_compressed_leaves(state, item, len);
		lv->items[lv->n] = copy_key(lv->itemcxt, item, len);
		lv->lens[lv->n] = len;
		lv->n++;
		lv->used += ft_item_space(len);
		return;
	}
	if (level_full(state, 0, len))
	{
		Buffer		next = build_newbuf(state);
		Size		seplen;
		const char *key = ft_separator(state->tree, lv->items[lv->n - 1],
									   lv->lens[lv->n - 1], item, len,
									   &seplen);
		char	   *sep = copy_key(state->cxt, key, seplen);

		if (key != item)
			pfree((char *) key);
		finish_page(state, 0, sep, seplen, BufferGetBlockNumber(next), false);
		level_start(state, 0, next);
		lv->lowkey = sep;
		lv->lowkeylen = seplen;
	}
	if (lv->n >= FT_MAX_ITEMS_PER_PAGE)
		elog(ERROR, "fractam: too many items on a leaf page");
	lv->items[lv->n] = copy_key(lv->itemcxt, item, len);
	lv->lens[lv->n] = len;
	lv->n++;
	lv->used += ft_item_space(len);
}

void
ft_build_finish(FtBuildState state)
{
	int			level;
	BlockNumber root = InvalidBlockNumber;
	uint32		root_level = 0;
	PGAlignedBlock meta;

	for (level = 0; level < state->nlevels; level++)
	{
		BuildLevel *lv = &state->levels[level];
		bool		is_root;

		/*
		 * Compressed leaves: what is pending goes into compressed leaves,
		 * unless it is the whole tree and fits one uncompressed leaf (the
		 * root is never compressed).
		 */
		if (level == 0 && state->tree->codec != FT_CODEC_NONE &&
			(lv->npages_done > 0 || lv->used > FT_LEAF_CAPACITY))
		{
			finish_compressed_leaves(state);
			continue;
		}
		is_root = (level == state->nlevels - 1 && lv->npages_done == 0);

		if (is_root)
		{
			root = BufferGetBlockNumber(lv->buf);
			root_level = level;
		}
		finish_page(state, level, NULL, 0, InvalidBlockNumber, is_root);
		if (is_root)
			break;
	}
	Assert(root != InvalidBlockNumber);

	ft_meta_init(meta.data, root, root_level);
	if (state->seq != 0 || state->seq_first != 0)
	{
		ft_meta_set_seq(meta.data, state->seq);
		FtPageGetMeta(meta.data)->seq_first = state->seq_first;
	}
	write_page(state, state->metabuf, meta.data);
	MemoryContextDelete(state->cxt);
	pfree(state);
}
