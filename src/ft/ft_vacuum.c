/*-------------------------------------------------------------------------
 *
 * ft_vacuum.c
 *	  Bulk deletion of items, from leaves AND from buffered messages.
 *
 * VACUUM walks the buffer levels top-down and left to right, cleaning
 * each buffer node's messages before anything below it (see ft_vacuum).
 * Every page is cleaned under a cleanup lock, which waits for scans that
 * still pin the page, so no scan can return an entry whose TID VACUUM has
 * freed for reuse.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "access/transam.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

/*
 * Delete the items (or messages) at the sorted offsets dead from page buf,
 * held exclusively (VACUUM holds a cleanup lock; a unique insert's pruning
 * only an exclusive lock, as scans work on copies of the page and the
 * removed entries' TIDs are not freed by it).
 */
void
ft_delete_offsets(FtTree *tree, Buffer buf, OffsetNumber *dead, int ndead)
{
	if (ndead == 0)
		return;
	START_CRIT_SECTION();
	PageIndexMultiDelete(BufferGetPage(buf), dead, ndead);
	MarkBufferDirty(buf);
	ftxlog_vacuum(tree->rel, buf, dead, ndead);
	END_CRIT_SECTION();
}

/*
 * Remove items that a unique insert's search found obsolete (where the
 * insert's own descent could not decide, see ft_insert_unique): each is
 * looked for in its leaf, which is locked exclusively; the caller's prune
 * callback confirms those found and returns the removal's horizon (logged
 * first, as in the descent's pruning).  An item still buffered above its
 * leaf is not found and stays until VACUUM.  items must ascend.
 */
void
ft_prune_items(FtTree *tree, char **items, Size *lens, int n,
			   FtUniquePruneFn prune, void *arg)
{
	const char **cand = palloc(n * sizeof(char *));
	Size	   *candlens = palloc(n * sizeof(Size));
	OffsetNumber *candoffs = palloc(n * sizeof(OffsetNumber));
	bool	   *remove = palloc(n * sizeof(bool));
	int			i = 0;

	while (i < n)
	{
		Buffer		leaf;
		Page		page;
		FtPageOpaque opaque;
		int			ncand = 0;
		int			ndead = 0;
		int			j;

		leaf = ft_descend_to_leaf(tree, items[i], lens[i], BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(leaf);
		opaque = FtPageGetOpaque(page);

		/* the items of the batch that belong to this leaf */
		for (j = i; j < n; j++)
		{
			bool		found;
			OffsetNumber off;
			Size		len;
			char	   *stored;

			if (j > i && !FtPageIsRightmost(opaque))
			{
				char	   *hikey = ft_page_item(page, FT_HIKEY, &len);

				if (ft_cmp(tree, items[j], lens[j], hikey, len) >= 0)
					break;
			}
			off = ft_leaf_lower_bound(tree, page, items[j], lens[j], &found);
			if (!found)
				continue;
			stored = ft_page_item(page, off, &len);
			if (len != lens[j] || memcmp(stored, items[j], len) != 0)
				continue;
			cand[ncand] = stored;
			candlens[ncand] = len;
			candoffs[ncand] = off;
			ncand++;
		}
		if (ncand > 0)
		{
			FullTransactionId horizon;
			int			k;

			memset(remove, 0, ncand * sizeof(bool));
			horizon = prune(arg, cand, candlens, ncand, remove);
			for (k = 0; k < ncand; k++)
				if (remove[k])
					candoffs[ndead++] = candoffs[k];
			if (ndead > 0)
			{
				if (FullTransactionIdIsValid(horizon))
					ft_log_removal_horizon(tree, horizon);
				ft_delete_offsets(tree, leaf, candoffs, ndead);
			}
		}
		UnlockReleaseBuffer(leaf);
		i = j;
	}
	pfree(cand);
	pfree(candlens);
	pfree(candoffs);
	pfree(remove);
}

/*
 * The blocks the walk reached.  Pages it did not reach are the metapage,
 * routing pages and deleted pages; the deleted ones are put in the free
 * space map again at the end, because the map is not crash-safe (nbtree
 * finds them again the same way, by looking at every block).
 */
typedef struct VisitMap
{
	BlockNumber nblocks;		/* blocks when the walk started */
	uint8	   *bits;
} VisitMap;

static void
mark_visited(VisitMap *v, BlockNumber blkno)
{
	if (blkno < v->nblocks)
		v->bits[blkno / 8] |= (uint8) (1 << (blkno % 8));
}

static bool
was_visited(VisitMap *v, BlockNumber blkno)
{
	return (v->bits[blkno / 8] & (1 << (blkno % 8))) != 0;
}

/*
 * Offer every deleted page the walk did not reach to the free space map.
 * Entries there are only hints: ft_newbuf checks under the page lock that
 * a page is really deleted and old enough before it reuses it.  A page the
 * map already offers is not read again (taking a page from the map clears
 * its entry, GetFreeIndexPage): a VACUUM that skips most of the tree then
 * does not read every deleted page each time.  Entries a crash lost are
 * found again here.
 */
static void
record_unreached_free_pages(FtTree *tree, VisitMap *v)
{
	BlockNumber blkno;

	for (blkno = FT_METAPAGE_BLKNO + 1; blkno < v->nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		bool		isfree;

		if (was_visited(v, blkno) ||
			GetRecordedFreeSpace(tree->rel, blkno) >= BLCKSZ / 2)
			continue;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(tree->rel, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page))
			isfree = true;		/* extension interrupted by a crash */
		else
		{
			ft_checkpage(tree->rel, buf);
			isfree = FtPageIsDeleted(FtPageGetOpaque(page));
		}
		UnlockReleaseBuffer(buf);
		if (isfree)
			RecordFreeIndexPage(tree->rel, blkno);
	}
}

/*
 * Read a page and take its cleanup lock: waits until no scan pins it.
 * The page must be of the given kind (the walk only reaches leaves and
 * buffer nodes).
 */
static Buffer
cleanup_lock(FtTree *tree, BlockNumber blkno, uint16 kind, VisitMap *visited)
{
	Buffer		buf = ReadBuffer(tree->rel, blkno);

	mark_visited(visited, blkno);

	CHECK_FOR_INTERRUPTS();
	LockBufferForCleanup(buf);
	ft_checkpage(tree->rel, buf);
	if ((FtPageGetOpaque(BufferGetPage(buf))->ft_flags & FT_PAGE_KIND_MASK) != kind)
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(tree->rel)),
				 errmsg("%s \"%s\" has a page of the wrong kind at block %u",
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel), blkno),
				 errdetail("VACUUM expected a %s page.",
						   kind == FT_PAGE_LEAF ? "leaf" : "buffer node")));
	return buf;
}

/* leaves found empty, candidates for unlinking */
typedef struct EmptyLeaves
{
	BlockNumber *blocks;
	int			n;
	int			size;
} EmptyLeaves;

static void
remember_empty(EmptyLeaves *e, BlockNumber blkno)
{
	if (e->n == e->size)
	{
		e->size = Max(16, e->size * 2);
		e->blocks = e->blocks ? repalloc(e->blocks, sizeof(BlockNumber) * e->size) :
			palloc(sizeof(BlockNumber) * e->size);
	}
	e->blocks[e->n++] = blkno;
}

/*
 * Overwrite bytes of items in place (the same length: the page layout does
 * not change), in one critical section with one WAL record.  payload is in
 * the form redo applies (ft_apply_patches), checked by the caller.
 */
static void
patch_items(FtTree *tree, Buffer buf, const char *payload, Size len, int n)
{
	START_CRIT_SECTION();
	if (!ft_apply_patches(BufferGetPage(buf), payload, len))
		elog(PANIC, "fractam: patches do not fit their leaf");
	MarkBufferDirty(buf);
	ftxlog_patches(tree->rel, buf, payload, len, n);
	END_CRIT_SECTION();
}

/*
 * Clean one leaf, which the caller has cleanup-locked: items the callback
 * changes are patched first, then those it removes go.
 */
static void
vacuum_leaf(FtTree *tree, Buffer buf, FtVacuumCallback callback, void *arg,
			FtVacuumResult *result)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;
	char	   *payload = NULL;
	Size		paylen = 0;
	int			npatches = 0;
	FtVacuumPatch patch;

	for (off = FtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);
		uint16		hdr[3];

		patch.len = 0;
		if (callback(item, len, arg, &patch))
		{
			dead[ndead++] = off;
			continue;
		}
		result->num_items += 1;
		if (patch.len == 0)
			continue;
		if (patch.len > FT_VACUUM_MAX_PATCH ||
			(Size) patch.start + patch.len > len)
			elog(ERROR, "fractam: a patch of %u bytes at %u does not fit item %u of length %zu",
				 patch.len, patch.start, off, len);
		if (payload == NULL)
			payload = palloc(maxoff * (sizeof(hdr) + FT_VACUUM_MAX_PATCH));
		hdr[0] = off;
		hdr[1] = patch.start;
		hdr[2] = patch.len;
		memcpy(payload + paylen, hdr, sizeof(hdr));
		paylen += sizeof(hdr);
		memcpy(payload + paylen, patch.bytes, patch.len);
		paylen += patch.len;
		npatches++;
	}
	if (npatches > 0)
	{
		patch_items(tree, buf, payload, paylen, npatches);
		pfree(payload);
	}
	ft_delete_offsets(tree, buf, dead, ndead);
	result->items_removed += ndead;
}

/* clean the messages of one buffer node, which the caller has cleanup-locked */
static void
vacuum_messages(FtTree *tree, Buffer buf, FtVacuumCallback callback,
				void *arg, FtVacuumResult *result)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;

	for (off = FtFirstMsgOffset(opaque); off <= maxoff; off++)
	{
		char	   *key;
		Size		keylen;
		FtMsgHeader *hdr = ft_msg(page, off, &key, &keylen);

		/*
		 * A buffered INSERT of a dead entry goes away.  DELETE messages
		 * carry no TID that could be reused and are left to the flush.
		 */
		if (FtMsgType(hdr) == FT_MSG_INSERT &&
			callback(key, keylen, arg, NULL))
			dead[ndead++] = off;
		else if (FtMsgType(hdr) == FT_MSG_INSERT)
			result->num_items += 1;
	}
	ft_delete_offsets(tree, buf, dead, ndead);
	result->items_removed += ndead;
}

/*
 * The children of a level-1 node and their key ranges, for the skip
 * callback: child i holds [lo[i], lo[i + 1]), the last one [lo[n - 1],
 * hi); a NULL bound is open.
 */
typedef struct SkipPlan
{
	FtVacuumSkipFn skip;
	int			n;
	BlockNumber *child;
	char	  **lo;
	Size	   *lolen;
	const char *hi;
	Size		hilen;
} SkipPlan;

/*
 * Fill plan from level-1 node page (locked), whose own range starts at low
 * (NULL: the start of the tree) and ends at its high key hikey.
 */
static void
make_skip_plan(SkipPlan *plan, Page page, const char *low, Size lowlen,
			   const char *hikey, Size hlen)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	int			i;

	plan->n = opaque->ft_nchildren;
	plan->child = palloc(sizeof(BlockNumber) * plan->n);
	plan->lo = palloc(sizeof(char *) * plan->n);
	plan->lolen = palloc(sizeof(Size) * plan->n);
	for (i = 0; i < plan->n; i++)
	{
		char	   *key;
		Size		keylen;
		FtPivotHeader *piv = ft_pivot(page, FtFirstDataOffset(opaque) + i,
									  &key, &keylen);

		plan->child[i] = piv->child;
		if (i == 0)
		{
			/* the first pivot's key is empty: the node's own lower bound */
			key = (char *) low;
			keylen = lowlen;
		}
		plan->lo[i] = key ? palloc(keylen) : NULL;
		if (key)
			memcpy(plan->lo[i], key, keylen);
		plan->lolen[i] = keylen;
	}
	plan->hi = hikey;
	plan->hilen = hlen;
}

static void
free_skip_plan(SkipPlan *plan)
{
	int			i;

	for (i = 0; i < plan->n; i++)
		if (plan->lo[i])
			pfree(plan->lo[i]);
	pfree(plan->child);
	pfree(plan->lo);
	pfree(plan->lolen);
}

/*
 * If blkno is a child of the plan whose range the skip callback lets go,
 * the block to go on with: the next child (leaves split off the skipped
 * one lie before it, in the skipped range), or InvalidBlockNumber after
 * the last child.  Otherwise blkno itself.
 */
static BlockNumber
skip_children(SkipPlan *plan, BlockNumber blkno, void *arg,
			  FtVacuumResult *result, VisitMap *visited)
{
	int			i;

	for (i = 0; i < plan->n; i++)
		if (plan->child[i] == blkno)
			break;
	if (i == plan->n)
		return blkno;			/* split off after the plan was made */
	while (i < plan->n)
	{
		const char *hi = i + 1 < plan->n ? plan->lo[i + 1] : plan->hi;
		Size		hilen = i + 1 < plan->n ? plan->lolen[i + 1] : plan->hilen;

		if (!plan->skip(plan->lo[i], plan->lolen[i], hi, hilen, arg))
			return plan->child[i];
		/* a live leaf: the walk counts it as reached */
		mark_visited(visited, plan->child[i]);
		result->leaves_skipped++;
		i++;
	}
	return InvalidBlockNumber;
}

/*
 * Clean the leaves from blkno rightwards up to the one whose high key is
 * bound (NULL: to the end).  Returns the block after the last one cleaned.
 * With a plan, children whose ranges may be skipped are not read; if that
 * ends the run, InvalidBlockNumber is returned (the next level-1 node's
 * first child goes on).
 */
static BlockNumber
vacuum_leaf_run(FtTree *tree, BlockNumber blkno, const char *bound,
				Size boundlen, FtVacuumCallback callback, void *arg,
				FtVacuumResult *result, EmptyLeaves *empties,
				VisitMap *visited, SkipPlan *plan)
{
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		FtPageOpaque opaque;
		bool		last;

		if (plan)
		{
			blkno = skip_children(plan, blkno, arg, result, visited);
			if (blkno == InvalidBlockNumber)
				break;
		}
		buf = cleanup_lock(tree, blkno, FT_PAGE_LEAF, visited);
		page = BufferGetPage(buf);
		opaque = FtPageGetOpaque(page);
		if (!FtPageIsDeleted(opaque))
		{
			vacuum_leaf(tree, buf, callback, arg, result);
			if (empties && PageGetMaxOffsetNumber(page) < FtFirstDataOffset(opaque))
				remember_empty(empties, blkno);
		}
		if (FtPageIsRightmost(opaque))
			last = true;
		else if (bound == NULL)
			last = false;
		else
		{
			Size		hlen;
			char	   *hikey = ft_page_item(page, FT_HIKEY, &hlen);

			last = ft_cmp(tree, hikey, hlen, bound, boundlen) >= 0;
		}
		blkno = opaque->ft_right;
		UnlockReleaseBuffer(buf);
		if (last)
			break;
	}
	return blkno;
}

/*
 * Unlink empty leaves of buffer node bblk.  An empty leaf L with a left
 * sibling LS and a right sibling R under the same buffer node is removed
 * the way nbtree removes pages: R takes over L's key range (L's pivot now
 * points to R and R's pivot goes away), LS links to R, and L is marked
 * deleted, keeping its right link to R, so that anyone who still reaches
 * L through an old pointer moves right to the page that now owns its
 * keys.  L may only be reused once no snapshot older than the deletion
 * remains (see ft_newbuf).  One WAL record carries the three new images.
 */
static void
unlink_empty_leaves(FtTree *tree, BlockNumber bblk, EmptyLeaves *empties,
					FtVacuumResult *result)
{
	Buffer		bbuf = ft_getbuf(tree, bblk, BUFFER_LOCK_EXCLUSIVE);
	Page		bpage = BufferGetPage(bbuf);
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	int			e;

	if (!FtPageIsBuffer(bopaque))
	{
		UnlockReleaseBuffer(bbuf);
		return;
	}
	for (e = 0; e < empties->n; e++)
	{
		OffsetNumber first = FtFirstDataOffset(bopaque);
		int			n = bopaque->ft_nchildren;
		int			i;
		BlockNumber lsblk;
		BlockNumber rblk;
		Buffer		lsbuf;
		Buffer		lbuf;
		Page		lspage;
		Page		lpage;
		FtPageOpaque lop;
		OffsetNumber sfirst;
		OffsetNumber send;
		Buffer		bufs[3];

		for (i = 1; i < n - 1; i++)
			if (ft_child_block(bpage, i) == empties->blocks[e])
				break;
		if (i >= n - 1)
			continue;			/* first or last child, or gone */
		ft_slice_range(tree, bpage, i, &sfirst, &send);
		if (sfirst != send)
			continue;			/* messages are on their way to it */
		lsblk = ft_child_block(bpage, i - 1);
		rblk = ft_child_block(bpage, i + 1);

		lsbuf = ft_getbuf(tree, lsblk, BUFFER_LOCK_EXCLUSIVE);
		lbuf = ft_getbuf(tree, empties->blocks[e], BUFFER_LOCK_EXCLUSIVE);
		lspage = BufferGetPage(lsbuf);
		lpage = BufferGetPage(lbuf);
		lop = FtPageGetOpaque(lpage);
		if (FtPageGetOpaque(lspage)->ft_right != empties->blocks[e] ||
			!FtPageIsLeaf(lop) || FtPageIsDeleted(lop) ||
			lop->ft_right != rblk ||
			PageGetMaxOffsetNumber(lpage) >= FtFirstDataOffset(lop))
		{
			UnlockReleaseBuffer(lbuf);
			UnlockReleaseBuffer(lsbuf);
			continue;
		}

		START_CRIT_SECTION();
		FtPageGetOpaque(lspage)->ft_right = rblk;
		ft_page_init(lpage, FT_PAGE_LEAF | FT_PAGE_DELETED, 0);
		lop = FtPageGetOpaque(lpage);
		lop->ft_right = rblk;
		lop->ft_msn = U64FromFullTransactionId(ReadNextFullTransactionId());
		PageIndexTupleDelete(bpage, first + i + 1);
		((FtPivotHeader *) PageGetItem(bpage, PageGetItemId(bpage, first + i)))->child = rblk;
		bopaque->ft_nchildren--;
		MarkBufferDirty(bbuf);
		MarkBufferDirty(lsbuf);
		MarkBufferDirty(lbuf);
		bufs[0] = bbuf;
		bufs[1] = lsbuf;
		bufs[2] = lbuf;
		ftxlog_images(tree->rel, bufs, 3, FT_IMAGES_DELETE);
		END_CRIT_SECTION();

		UnlockReleaseBuffer(lbuf);
		UnlockReleaseBuffer(lsbuf);
		RecordFreeIndexPage(tree->rel, empties->blocks[e]);
		result->pages_deleted++;
	}
	UnlockReleaseBuffer(bbuf);
}

/* does a page with this high key (NULL: rightmost) end at or past bound? */
static bool
reaches_bound(FtTree *tree, const char *hikey, Size hlen, const char *bound,
			  Size boundlen)
{
	if (hikey == NULL)
		return true;
	if (bound == NULL)
		return false;
	return ft_cmp(tree, hikey, hlen, bound, boundlen) >= 0;
}

static char *
copy_hikey(Page page, Size *len)
{
	char	   *hikey;
	char	   *copy;

	if (FtPageIsRightmost(FtPageGetOpaque(page)))
	{
		*len = 0;
		return NULL;
	}
	hikey = ft_page_item(page, FT_HIKEY, len);
	copy = palloc(*len);
	memcpy(copy, hikey, *len);
	return copy;
}

/*
 * Clean the level-1 buffer nodes from *bblk rightwards, each followed by
 * the leaves of its range, up to the one whose high key is bound (NULL:
 * to the end).  Advances *bblk and *leafblk past what was cleaned.  *low
 * is the first node's lower bound (NULL: the start of the tree), for the
 * skip callback; it is advanced too (a palloc'd copy, or NULL).
 */
static void
vacuum_lower_run(FtTree *tree, BlockNumber *bblk, BlockNumber *leafblk,
				 char **low, Size *lowlen,
				 const char *bound, Size boundlen,
				 FtVacuumCallback callback, FtVacuumSkipFn skip, void *arg,
				 FtVacuumResult *result, EmptyLeaves *empties,
				 VisitMap *visited)
{
	while (*bblk != InvalidBlockNumber)
	{
		Buffer		bbuf = cleanup_lock(tree, *bblk, FT_PAGE_BUFFER, visited);
		BlockNumber thisblk = *bblk;
		Page		bpage = BufferGetPage(bbuf);
		FtPageOpaque bopaque = FtPageGetOpaque(bpage);
		char	   *hikey;
		Size		hlen;
		bool		last;
		SkipPlan	plan;

		vacuum_messages(tree, bbuf, callback, arg, result);
		hikey = copy_hikey(bpage, &hlen);
		last = reaches_bound(tree, hikey, hlen, bound, boundlen);
		*bblk = bopaque->ft_right;
		/*
		 * The previous node's last leaves were skipped: go on at this one's
		 * first (the leaf after them in the chain: leaves split only under
		 * their own node, and a first child is never unlinked).
		 */
		if (*leafblk == InvalidBlockNumber)
			*leafblk = ft_child_block(bpage, 0);
		if (skip)
		{
			plan.skip = skip;
			make_skip_plan(&plan, bpage, *low, *lowlen, hikey, hlen);
		}
		UnlockReleaseBuffer(bbuf);

		empties->n = 0;
		*leafblk = vacuum_leaf_run(tree, *leafblk, hikey, hlen,
								   callback, arg, result, empties, visited,
								   skip ? &plan : NULL);
		if (skip)
			free_skip_plan(&plan);
		if (empties->n > 0)
			unlink_empty_leaves(tree, thisblk, empties, result);
		/* this node's high key is the next one's lower bound */
		if (*low)
			pfree(*low);
		*low = hikey;
		*lowlen = hlen;
		if (last)
			break;
	}
}

/*
 * VACUUM holds at most one page lock at a time, and waits for a cleanup
 * lock holding nothing else.  It walks the top buffer level left to right;
 * for each node there it first cleans the node's messages, then each
 * level-1 node of its key range (following the sibling chain, so nodes
 * split off meanwhile are seen too), and after each level-1 node the
 * leaves of that node's range.  Messages only move down, so nothing it has
 * not seen can move into a page it has cleaned: a flush or a move only
 * carries messages the upper node held when it was cleaned (already
 * clean) or later ones, and entries inserted during VACUUM never carry a
 * TID VACUUM is removing (the table keeps those TIDs reserved until index
 * cleanup is done).
 *
 * With a skip callback, the leaves under a level-1 node whose key ranges
 * (from the node's pivots) it lets go are not read at all, nor the leaves
 * split off them meanwhile (they lie in the same range, before the next
 * child).  A tree whose root is a leaf is always read.
 */
void
ft_vacuum(FtTree *tree, FtVacuumCallback callback, FtVacuumSkipFn skip,
		  void *arg, FtVacuumResult *result)
{
	FtDescent	d;
	BlockNumber topblk = InvalidBlockNumber;
	BlockNumber bblk;
	BlockNumber leafblk;
	EmptyLeaves empties = {0};
	VisitMap	visited;
	char	   *low = NULL;		/* lower bound of the next level-1 node */
	Size		lowlen = 0;

	memset(result, 0, sizeof(FtVacuumResult));
	visited.nblocks = ft_nblocks(tree);
	visited.bits = palloc0(visited.nblocks / 8 + 1);

	/* leftmost node of the top buffer level, or the root leaf */
	ft_descend(tree, "", 0, false, FT_TOP_BUFFER_LEVEL, BUFFER_LOCK_SHARE, &d);
	if (d.level == 0)
	{
		leafblk = BufferGetBlockNumber(d.buf);
		UnlockReleaseBuffer(d.buf);
		vacuum_leaf_run(tree, leafblk, NULL, 0, callback, arg, result, NULL,
						&visited, NULL);
		result->num_pages = ft_nblocks(tree);
		pfree(visited.bits);
		return;
	}
	if (d.level == 2)
	{
		Buffer		xbuf;

		topblk = BufferGetBlockNumber(d.buf);
		bblk = ft_child_block(BufferGetPage(d.buf), 0);
		UnlockReleaseBuffer(d.buf);
		xbuf = ft_getbuf(tree, bblk, BUFFER_LOCK_SHARE);
		leafblk = ft_child_block(BufferGetPage(xbuf), 0);
		UnlockReleaseBuffer(xbuf);
	}
	else
	{
		bblk = BufferGetBlockNumber(d.buf);
		leafblk = ft_child_block(BufferGetPage(d.buf), 0);
		UnlockReleaseBuffer(d.buf);
	}

	if (topblk == InvalidBlockNumber)
		vacuum_lower_run(tree, &bblk, &leafblk, &low, &lowlen, NULL, 0,
						 callback, skip, arg, result, &empties, &visited);
	while (topblk != InvalidBlockNumber)
	{
		Buffer		tbuf = cleanup_lock(tree, topblk, FT_PAGE_BUFFER, &visited);
		Page		tpage = BufferGetPage(tbuf);
		char	   *hikey;
		Size		hlen;

		vacuum_messages(tree, tbuf, callback, arg, result);
		hikey = copy_hikey(tpage, &hlen);
		topblk = FtPageGetOpaque(tpage)->ft_right;
		UnlockReleaseBuffer(tbuf);

		vacuum_lower_run(tree, &bblk, &leafblk, &low, &lowlen, hikey, hlen,
						 callback, skip, arg, result, &empties, &visited);
		if (hikey)
			pfree(hikey);
	}
	if (low)
		pfree(low);
	record_unreached_free_pages(tree, &visited);
	pfree(visited.bits);
	result->num_pages = ft_nblocks(tree);
}

/*
 * Before the caller removes items that hot-standby queries might still
 * read (a table's dead row versions), tell standbys the newest xid whose
 * effects are removed: queries whose snapshots could see them are
 * cancelled at replay (an XLOG_FT_REUSE record without a block).
 */
void
ft_log_removal_horizon(FtTree *tree, FullTransactionId horizon)
{
	ftxlog_reuse(tree->rel, InvalidBlockNumber, horizon);
}
