/*-------------------------------------------------------------------------
 *
 * ft_build.c
 *	  Bottom-up load of a tree from sorted input (CREATE INDEX).
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
	Buffer		buf;			/* page being filled (allocated, locked) */
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
} BuildLevel;

typedef struct FtBuildStateData
{
	FtTree	   *tree;
	Buffer		metabuf;
	int			nlevels;
	BuildLevel	levels[FT_MAX_BUILD_LEVELS];
	MemoryContext cxt;
} FtBuildStateData;

static void
level_start(FtBuildState state, int level, Buffer buf)
{
	BuildLevel *lv = &state->levels[level];
	int			cap = FT_MAX_ITEMS_PER_PAGE + 1;

	lv->buf = buf;
	if (lv->items == NULL)
	{
		lv->items = MemoryContextAlloc(state->cxt, sizeof(char *) * cap);
		lv->lens = MemoryContextAlloc(state->cxt, sizeof(Size) * cap);
		lv->children = MemoryContextAlloc(state->cxt, sizeof(BlockNumber) * cap);
		lv->itemcxt = AllocSetContextCreate(state->cxt, "fractam build page",
											ALLOCSET_DEFAULT_SIZES);
	}
	else
		MemoryContextReset(lv->itemcxt);
	lv->n = 0;
	lv->used = 0;
	lv->pivotbytes = 0;
}

FtBuildState
ft_build_begin(FtTree *tree)
{
	FtBuildState state = palloc0(sizeof(FtBuildStateData));

	state->tree = tree;
	state->cxt = AllocSetContextCreate(CurrentMemoryContext,
									   "fractam build",
									   ALLOCSET_DEFAULT_SIZES);
	if (ft_nblocks(tree) != 0)
		elog(ERROR, "%s \"%s\" already contains data",
			 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
	state->metabuf = ft_newbuf(tree);
	Assert(BufferGetBlockNumber(state->metabuf) == FT_METAPAGE_BLKNO);
	state->nlevels = 1;
	level_start(state, 0, ft_newbuf(tree));
	return state;
}

/* write a finished page image and log it */
static void
write_page(FtBuildState state, Buffer buf, Page image)
{
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
	if (FtLevelIsBuffer(level))
		return lv->n >= Max(2, ft_node_fanout(tree, level) * 3 / 4) ||
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
		level_start(state, level, ft_newbuf(state->tree));
	}
	lv = &state->levels[level];
	if (level_full(state, level, keylen))
	{
		Buffer		next = ft_newbuf(state->tree);
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

void
ft_build_add(FtBuildState state, const char *item, Size len)
{
	BuildLevel *lv = &state->levels[0];

	ft_check_item_size(state->tree, len);
	if (level_full(state, 0, len))
	{
		Buffer		next = ft_newbuf(state->tree);
		Size		seplen = ft_key_len(state->tree, len);
		char	   *sep = copy_key(state->cxt, item, seplen);

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
		bool		is_root = (level == state->nlevels - 1 && lv->npages_done == 0);

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
	write_page(state, state->metabuf, meta.data);
	MemoryContextDelete(state->cxt);
	pfree(state);
}
