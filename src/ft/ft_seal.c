/*-------------------------------------------------------------------------
 *
 * ft_seal.c
 *	  Compressing the leaves that rows inserted one at a time fill, right
 *	  behind the point where they are appended.
 *
 * A compressed table's rows that arrive one at a time (INSERT, INSERT ...
 * SELECT, the timeseries load's 1000-row INSERTs) fill uncompressed leaves
 * at the point where their backend appends: the right edge, or the leaf of
 * the pseudo-block of row ids it holds.  A COPY brings along the rows that
 * fill compressed pages when the full right edge splits (ft_flush.c,
 * take_append_batch); an insert of one row cannot.  Until the next VACUUM
 * merged them into compressed leaves, the file held such rows uncompressed.
 *
 * So when a direct insert splits a full leaf of such a tree that asks for
 * it (FtTree.seal_appends: a table's inserts, not its UPDATEs' new
 * versions) and goes right of the full page it leaves behind
 * (ft_flush_child sets FtTree.sealed_split), the inserting backend, still holding the level-1
 * node exclusively, looks at the run of uncompressed leaves that ends with
 * that page.  Once the run holds as many rows as one frame takes decoded
 * (FtFrameCapacity), or as fit one page at the ratio this backend's last
 * merge reached, it is merged into one compressed leaf as VACUUM does it
 * (ft_merge_leaves): keys move right into the run's last leaf, the others
 * are deleted, one WAL record.  Without VACUUM's pruning: the rows were
 * just inserted, and the owner's prune would look at each for nothing.
 *
 * Only runs of adjacent items (FtTree.adjacent: consecutive row ids), up to
 * the first item of the page after the run, are merged: no insert can land
 * inside them, where it would rewrite the compressed leaf uncompressed.  A
 * gap before the run's first item does not matter: a table's pivots are
 * row ids (FtTree.keyprefix, no separator), so rows that come into it go
 * into the leaf before the run.  The run never takes a level-1 node's first
 * leaf, whose left sibling, which the merge relinks, is under another node.
 *
 * The pages the merge deletes are kept by this backend and reused by its
 * own next allocations in the relation once no snapshot predates their
 * deletion (ft_buffer.c, ft_remember_deleted_page): a stream of short
 * transactions reuses them a few transactions later.  One long load (a
 * single INSERT ... SELECT of millions of rows) cannot reuse them before it
 * ends, and would pay for the compression (CPU, and the merges' WAL) with
 * a file no smaller: once FT_SEAL_MAX_WAITING pages of the relation wait
 * for reuse, the backend stops merging, and the rows stay uncompressed
 * for VACUUM (autovacuum comes by for inserts), as before.
 *
 * Locking: the level-1 node is held exclusively throughout, so no leaf
 * under it splits, merges or takes a new item meanwhile (all need the node
 * exclusively, or share-locked for a direct insert).  The leaves are first
 * read one at a time under share locks, right to left, to find the run;
 * then locked exclusively left to right, the order every other path uses,
 * and merged.  Their row versions may change in place meanwhile (a delete
 * or a row lock): ft_merge_leaves reads them under the exclusive locks,
 * and gives up if they no longer fit one compressed page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "utils/rel.h"

/*
 * How well this backend's last merge in a relation compressed: the page
 * space its leaves' items took, per byte of the compressed page it made
 * (or, after a merge that did not fit a page, a bound below that).  A run
 * is cut to what should fit one page at that ratio, so that a table whose
 * rows compress less than 3:1 (lz4 on random doubles) is merged two
 * leaves at a time at once, instead of failing at three first and
 * compressing everything twice, and one whose rows hardly compress is not
 * merged at all.  Every FT_SEAL_PROBE_EVERY-th run is cut to a frame's
 * size anyway, in case the rows have changed.  0: nothing known.
 */
#define FT_SEAL_PROBE_EVERY	32

/* pages deleted and not reused yet beyond which merging stops (above) */
#define FT_SEAL_MAX_WAITING	128

static RelFileNode ratio_node;
static double ratio = 0;
static uint32 nruns = 0;

/* the page space a run may take: a frame's decoded bytes, or less */
static Size
run_limit(FtTree *tree)
{
	Size		cap = FtFrameCapacity(tree);

	if (ratio > 0 && RelFileNodeEquals(ratio_node, tree->rel->rd_node) &&
		++nruns % FT_SEAL_PROBE_EVERY != 0)
		cap = Min(cap, (Size) (ratio * FT_LEAF_CAPACITY * 0.97));
	return cap;
}

/* a merge of leaves whose items took space made page (NULL: failed) */
static void
remember_ratio(FtTree *tree, Size space, Page page)
{
	double		r;

	if (page != NULL)
		r = (double) space /
			Max(FT_LEAF_CAPACITY - PageGetExactFreeSpace(page), 1);
	else
		r = (double) space / FT_LEAF_CAPACITY;
	if (page == NULL && ratio > 0 &&
		RelFileNodeEquals(ratio_node, tree->rel->rd_node))
		r = Min(r, ratio);
	ratio_node = tree->rel->rd_node;
	ratio = r;
}

/* a copy of the key of the first item of a leaf (uncompressed) */
static char *
first_key(FtTree *tree, Page page, Size *keylen)
{
	Size		len;
	char	   *item = ft_page_item(page, FtFirstDataOffset(FtPageGetOpaque(page)),
									&len);
	char	   *key;

	*keylen = ft_key_len(tree, len);
	key = palloc(*keylen);
	memcpy(key, item, *keylen);
	return key;
}

/*
 * May leaf page (share-locked) end a run to merge: a live uncompressed leaf
 * other than the rightmost, with items, each adjacent to the next and the
 * last to next (the first key of the page after it)?  Sets *space to the
 * page space its items take.
 */
static bool
leaf_joins_run(FtTree *tree, Page page, const char *next, Size nextlen,
			   Size *space)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	char	   *prev = NULL;
	Size		prevlen = 0;

	if (!FtPageIsLeaf(opaque) || FtPageIsDeleted(opaque) ||
		FtPageIsCompressed(opaque) || FtPageIsRightmost(opaque) ||
		maxoff < first)
		return false;
	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);

		if (prev != NULL && !tree->adjacent(tree->cmp_arg, prev, prevlen, item, len))
			return false;
		prev = item;
		prevlen = len;
	}
	if (!tree->adjacent(tree->cmp_arg, prev, prevlen, next, nextlen))
		return false;
	*space = ft_leaf_items_space(page);
	return true;
}

/*
 * Child childidx of level-1 node bbuf (held exclusively) is the full page a
 * split of an append point left behind (FtTree.sealed_split): merge the
 * run of full uncompressed leaves that ends with it into one compressed
 * leaf, once the run is as long as one takes.  See the file's comment.
 */
void
ft_seal_behind(FtTree *tree, Buffer bbuf, int childidx)
{
	Page		bpage = BufferGetPage(bbuf);
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	Size		cap = run_limit(tree);
	Size		space[FT_MERGE_MAX_LEAVES];	/* of each leaf, right to left */
	Buffer		leaves[FT_MERGE_MAX_LEAVES];	/* left to right */
	Buffer		lsbuf;
	Buffer		buf;
	Page		page;
	Size		total = 0;
	char	   *next;
	Size		nextlen;
	int			k = 0;
	int			a;
	bool		linked = true;

	Assert(tree->adjacent != NULL && tree->codec != FT_CODEC_NONE);
	if (childidx < 1 || childidx + 1 >= bopaque->ft_nchildren ||
		ft_own_deleted_pages(tree) >= FT_SEAL_MAX_WAITING)
		return;

	/* the first key after the run: the page the new item went to */
	buf = ft_getleaf(tree, ft_child_block(bpage, childidx + 1), BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (FtPageIsCompressed(FtPageGetOpaque(page)) ||
		PageGetMaxOffsetNumber(page) < FtFirstDataOffset(FtPageGetOpaque(page)))
	{
		UnlockReleaseBuffer(buf);
		return;
	}
	next = first_key(tree, page, &nextlen);
	UnlockReleaseBuffer(buf);

	/* the run, right to left, as long as one frame takes */
	for (int j = childidx; j >= 1 && k < FT_MERGE_MAX_LEAVES; j--)
	{
		Size		sp = 0;
		bool		joins;

		buf = ft_getleaf(tree, ft_child_block(bpage, j), BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		joins = leaf_joins_run(tree, page, next, nextlen, &sp) &&
			total + sp <= cap;
		if (joins)
		{
			pfree(next);
			next = first_key(tree, page, &nextlen);
			total += sp;
			space[k] = sp;
			k++;
		}
		UnlockReleaseBuffer(buf);
		if (!joins)
			break;
	}
	pfree(next);

	/* while another leaf like these would still fit, wait for it */
	if (k < 2 || total + total / k <= cap)
		return;

	a = childidx - k + 1;
	lsbuf = ft_getleaf(tree, ft_child_block(bpage, a - 1), BUFFER_LOCK_EXCLUSIVE);
	for (int i = 0; i < k; i++)
		leaves[i] = ft_getleaf(tree, ft_child_block(bpage, a + i),
							   BUFFER_LOCK_EXCLUSIVE);

	/* the node's children link to each other, and stay what they were */
	for (int i = 0; i < k && linked; i++)
	{
		Buffer		left = i == 0 ? lsbuf : leaves[i - 1];
		FtPageOpaque op = FtPageGetOpaque(BufferGetPage(leaves[i]));

		if (FtPageGetOpaque(BufferGetPage(left))->ft_right !=
			BufferGetBlockNumber(leaves[i]) ||
			FtPageIsDeleted(op) || FtPageIsCompressed(op) ||
			FtPageIsRightmost(op))
			linked = false;
	}

	/*
	 * As VACUUM's compress_leaves: fewer leaves until they fit one
	 * compressed page, the last left out (it starts the next run).
	 */
	while (linked && k >= 2 &&
		   !ft_merge_leaves(tree, bbuf, a, lsbuf, leaves, k, false))
	{
		remember_ratio(tree, total, NULL);
		/* leaves[k - 1] is child a + k - 1, space[childidx - (a + k - 1)] */
		total -= space[childidx - a - k + 1];
		UnlockReleaseBuffer(leaves[--k]);
	}
	if (linked && k >= 2)
	{
		remember_ratio(tree, total, BufferGetPage(leaves[k - 1]));
		for (int i = 0; i < k - 1; i++)
			ft_remember_deleted_page(tree, BufferGetBlockNumber(leaves[i]));
	}
	for (int i = 0; i < k; i++)
		UnlockReleaseBuffer(leaves[i]);
	UnlockReleaseBuffer(lsbuf);
}
