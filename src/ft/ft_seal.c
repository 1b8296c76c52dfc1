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
 * a file no smaller: once FT_SEAL_MAX_WAITING pages of the relation that
 * its current transaction deleted wait for reuse, the backend stops
 * merging, and the rows stay uncompressed for VACUUM (autovacuum comes by
 * for inserts), as before.  Pages earlier transactions deleted only wait
 * for other backends' snapshots (an ANALYZE's) and do not count.
 *
 * An index's appends are the ends of groups: the entries that share
 * leading key columns, such as one sensor's (sensor, time) entries, or the
 * whole tree for ascending keys.  A direct insert at the end of a full leaf
 * (ft_flush_child's append_cut) leaves a full page of its group behind, and
 * the group's next entries go right of it; no later insert of an append
 * load lands among those left behind.  So an index's run is the leaves
 * whose first entry shares at least as many leading columns with the new
 * entry as the first entry of its page does (then so does every entry
 * between them: entries are in key order); when that is none, only the
 * tree's right edge is an append point, and the run may be any leaves
 * before it.  Unlike a table's, an index's run is merged as soon as it
 * holds two leaves, the first of which may be the compressed leaf the
 * group's last merge made while that has room: a group may fill only a
 * few leaves in all.  An index cannot tell an append load from random inserts
 * that happen to end a leaf (one split in a leaf's items, rarely): an
 * insert into a compressed leaf rewrites it uncompressed, as before.  The
 * run's children must have nothing buffered in the node (their messages
 * would have to move to the merged leaf), and the merged leaf takes the
 * highest MSN of the run's leaves, so that a scan's copy of a message any
 * of them had applied is not applied again (ft_merge_leaves).
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
#include "utils/guc.h"
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

/*
 * Pages deleted and not reused yet beyond which merging stops (above;
 * fractam.debug_seal_max_waiting, for tests).  Well above what one short
 * transaction may delete at once (an index's groups that grow in step:
 * ft_buffer.c, FT_OWN_DELETED_MAX); a long statement pays the merges for
 * 16 MB of pages it cannot reuse before it stops.
 */
#define FT_SEAL_MAX_WAITING	2048

static int	seal_max_waiting = FT_SEAL_MAX_WAITING;

static void seal_run(FtTree *tree, Buffer bbuf, int childidx,
					 const char *item, Size len, bool tail);

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
 * May leaf buf (share-locked) end a run to merge: a live leaf other than
 * the rightmost, with items?  In a table, an uncompressed one whose items
 * are each adjacent to the next, and the last to next (the first key of
 * the page after it); in an index, one (compressed or not) whose first
 * entry shares at least groupcols leading key columns with the new item.
 * Sets *space to the page space its items take (decoded).
 */
static bool
leaf_joins_run(FtTree *tree, Buffer buf, const char *next, Size nextlen,
			   const char *item, Size len, int groupcols, Size *space)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	char	   *prev = NULL;
	Size		prevlen = 0;

	if (!FtPageIsLeaf(opaque) || FtPageIsDeleted(opaque) ||
		FtPageIsRightmost(opaque))
		return false;
	if (tree->adjacent == NULL)
	{
		Size		flen;
		char	   *fitem;

		/* an index: a compressed leaf is decoded, its first entry checked */
		if (FtPageIsCompressed(opaque))
		{
			page = ft_leaf_view(tree, buf);
			first = FtFirstDataOffset(FtPageGetOpaque(page));
			maxoff = PageGetMaxOffsetNumber(page);
		}
		if (maxoff < first)
			return false;
		fitem = ft_page_item(page, first, &flen);
		if (groupcols > 0 &&
			tree->sharedcols(tree->cmp_arg, fitem, flen, item, len) < groupcols)
			return false;
		*space = ft_leaf_items_space(page);
		return true;
	}
	/*
	 * A table's compressed leaf joins as the run's first (seal_run stops
	 * there): the short page a run cut at a gap made (the start of a range
	 * of row ids) fills up with the next run's rows.  It is not decoded
	 * here (its rows were adjacent when they were sealed, and adjacency
	 * only keeps inserts out of compressed leaves: it is no invariant), and
	 * its size comes from its frame's header.
	 */
	if (FtPageIsCompressed(opaque))
	{
		*space = ft_leaf_frame_space(tree, buf);
		return *space > 0;
	}
	if (maxoff < first)
		return false;
	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		Size		ilen;
		char	   *it = ft_page_item(page, off, &ilen);

		if (prev != NULL && !tree->adjacent(tree->cmp_arg, prev, prevlen, it, ilen))
			return false;
		prev = it;
		prevlen = ilen;
	}
	if (!tree->adjacent(tree->cmp_arg, prev, prevlen, next, nextlen))
		return false;
	*space = ft_leaf_items_space(page);
	return true;
}

/*
 * The key the run ending with child childidx of level-1 node bpage must be
 * adjacent to, palloc'd (NULL: no run can end there), and for an index the
 * leading key columns the run's entries share with item (*groupcols).
 *
 * A table's run ends where the next leaf's range begins: that leaf's pivot
 * in the node (or the node's high key after its last child), whatever the
 * leaf holds now (another backend may have compressed it already).  Rows
 * from there on go right of the run, and none can come between the run's
 * last row and an adjacent row id.  An index's is the first entry of the
 * page the new item went to, which must share columns with item (the
 * group) or be the tree's rightmost leaf.
 */
static char *
run_bound(FtTree *tree, Page bpage, int childidx, const char *item,
		  Size len, Size *nextlen, int *groupcols)
{
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	Buffer		buf;
	Page		page;
	char	   *next;

	*groupcols = 0;
	if (tree->adjacent != NULL)
	{
		char	   *bound;

		if (childidx + 1 < bopaque->ft_nchildren)
			ft_pivot(bpage, FtFirstDataOffset(bopaque) + childidx + 1,
					 &bound, nextlen);
		else if (!FtPageIsRightmost(bopaque))
			bound = ft_page_item(bpage, FT_HIKEY, nextlen);
		else
			return NULL;
		next = palloc(*nextlen);
		memcpy(next, bound, *nextlen);
		return next;
	}
	if (childidx + 1 >= bopaque->ft_nchildren)
		return NULL;
	buf = ft_getleaf(tree, ft_child_block(bpage, childidx + 1), BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (FtPageIsCompressed(FtPageGetOpaque(page)) ||
		PageGetMaxOffsetNumber(page) < FtFirstDataOffset(FtPageGetOpaque(page)))
	{
		UnlockReleaseBuffer(buf);
		return NULL;
	}
	next = first_key(tree, page, nextlen);
	*groupcols = tree->sharedcols(tree->cmp_arg, next, *nextlen, item, len);
	if (*groupcols == 0 && !FtPageIsRightmost(FtPageGetOpaque(page)))
	{
		pfree(next);
		next = NULL;
	}
	UnlockReleaseBuffer(buf);
	return next;
}

/* Has child j of level-1 node page no buffered messages? */
static bool
slice_is_empty(FtTree *tree, Page bpage, int j)
{
	OffsetNumber first;
	OffsetNumber end;

	ft_slice_range(tree, bpage, j, &first, &end);
	return first == end;
}

/*
 * Child childidx of level-1 node bbuf (held exclusively) is the full page a
 * split of an append point left behind (FtTree.sealed_split), item (len
 * bytes) the item whose insert split it: merge the run of full
 * uncompressed leaves that ends with that page into one compressed leaf,
 * once the run is as long as one takes.  See the file's comment.
 */
void
ft_seal_behind(FtTree *tree, Buffer bbuf, int childidx, const char *item,
			   Size len)
{
	seal_run(tree, bbuf, childidx, item, len, false);
}

/*
 * A table's backend has stored the last row of its range of row ids (item,
 * len bytes): no row can come into the range any more.  Merge the run of
 * uncompressed leaves that ends with the leaf holding it, however short:
 * the run would otherwise wait for a split behind it that never comes
 * (the backend appends elsewhere now), and stay uncompressed until VACUUM.
 * Rows that compress ten to one fill about ten leaves per page, and a
 * range of row ids (up to FRACTAM_MAX_RANGE_BLOCKS pseudo-blocks) only a
 * few times that: half of a concurrent load's leaves were such tails.
 */
void
ft_seal_tail(FtTree *tree, const char *item, Size len)
{
	Buffer		bbuf;
	Page		bpage;
	int			childidx;

	Assert(tree->adjacent != NULL && !tree->buffering);
	if (tree->codec == FT_CODEC_NONE)
		return;
	bbuf = ft_descend_to_level(tree, item, len, 1, BUFFER_LOCK_EXCLUSIVE);
	bpage = BufferGetPage(bbuf);
	if (FtPageGetOpaque(bpage)->ft_level == 1)
	{
		childidx = ft_child_index(tree, bpage, item, len, false);
		seal_run(tree, bbuf, childidx, item, len, true);
	}
	UnlockReleaseBuffer(bbuf);
}

/*
 * The two above: the run that ends with child childidx of bbuf, merged once
 * it is as long as a frame takes, or (tail) as soon as it has two leaves.
 */
static void
seal_run(FtTree *tree, Buffer bbuf, int childidx, const char *item,
		 Size len, bool tail)
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
	int			groupcols = 0;
	int			k = 0;
	int			a;
	bool		compressed = false;
	bool		linked = true;

	Assert(tree->codec != FT_CODEC_NONE);
	Assert(tree->adjacent != NULL || tree->sharedcols != NULL);
	if (childidx < 1 || childidx >= bopaque->ft_nchildren ||
		ft_own_deleted_pages(tree, seal_max_waiting) >= seal_max_waiting)
		return;

	next = run_bound(tree, bpage, childidx, item, len, &nextlen, &groupcols);
	if (next == NULL)
		return;

	/* the run, right to left, as long as one frame takes */
	for (int j = childidx; j >= 1 && k < FT_MERGE_MAX_LEAVES; j--)
	{
		Size		sp = 0;
		bool		joins;

		if (!slice_is_empty(tree, bpage, j))
			break;
		buf = ft_getleaf(tree, ft_child_block(bpage, j), BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		joins = leaf_joins_run(tree, buf, next, nextlen, item, len,
							   groupcols, &sp) &&
			total + sp <= cap;
		compressed = FtPageIsCompressed(FtPageGetOpaque(page));
		if (joins)
		{
			pfree(next);
			next = compressed ? NULL : first_key(tree, page, &nextlen);
			total += sp;
			space[k] = sp;
			k++;
		}
		UnlockReleaseBuffer(buf);
		/* a compressed leaf is where the last run went */
		if (!joins || compressed)
			break;
	}
	if (next)
		pfree(next);

	/*
	 * A table's run waits while another leaf like its leaves would still
	 * fit: its runs are long (a session's rows), and each is compressed
	 * once.  An index's is merged at once, into the compressed leaf the
	 * group's last run made if it has room: a group may take only a few
	 * leaves in all (16,000 sensors of the timeseries load's 30M rows take
	 * five each), and would otherwise stay uncompressed.
	 */
	if (k < 2 || (tree->adjacent != NULL && !tail && total + total / k <= cap))
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
			FtPageIsDeleted(op) || FtPageIsRightmost(op) ||
			(FtPageIsCompressed(op) && i > 0))
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

void
ft_seal_init(void)
{
	DefineCustomIntVariable("fractam.debug_seal_max_waiting",
							"Pages a backend's merges behind append points may have deleted and not yet reused before it stops merging (testing).",
							"One long statement cannot reuse the pages its merges free "
							"before it ends; past this many, it leaves its rows uncompressed "
							"for VACUUM.",
							&seal_max_waiting, FT_SEAL_MAX_WAITING, 0, 4096,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}
