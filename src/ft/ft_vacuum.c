/*-------------------------------------------------------------------------
 *
 * ft_vacuum.c
 *	  Bulk deletion of items, from leaves AND from buffered messages.
 *
 * VACUUM walks the buffer levels top-down and left to right, cleaning
 * each buffer node's messages before anything below it (see ft_vacuum).
 * Every page is cleaned under a cleanup lock, which waits for scans that
 * still pin the page, so no scan can return an entry whose TID VACUUM has
 * freed for reuse.  A tree whose readers need no such wait (a table's,
 * FtTree.vacuum_skip_pinned) has the pages scans pin only read instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "access/transam.h"
#include "commands/vacuum.h"
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
	if (ft_leaf_is_compressed(BufferGetPage(buf)))
	{
		/* offsets of its decoded page: their dead bits are set */
		ft_leaf_delete(tree, buf, dead, ndead);
		return;
	}
	START_CRIT_SECTION();
	PageIndexMultiDelete(BufferGetPage(buf), dead, ndead);
	MarkBufferDirty(buf);
	ftxlog_vacuum(tree->rel, buf, dead, ndead);
	END_CRIT_SECTION();
}

/*
 * Remove items that a unique insert's search found obsolete (where the
 * insert's own descent could not decide, see ft_insert_unique), or that an
 * index scan's executor found dead: each is looked for in its leaf, which
 * is locked exclusively; the caller's prune callback confirms those found
 * and returns the removal's horizon (logged first, as in the descent's
 * pruning).  An item still buffered above its leaf is not found and stays
 * until VACUUM.  items must ascend.
 *
 * leaves, if not NULL, gives each item's leaf as a scan saw it
 * (ft_scan_item_leaf; InvalidBlockNumber if unknown).  The removal then
 * reads that leaf instead of descending to it: an item is in the leaf its
 * key range belongs to or nowhere, so finding the very item there is
 * enough, whatever happened to the leaf since.  Items not found in their
 * hinted leaf (it split or was rewritten) are looked for with a descent.
 */
void
ft_prune_items(FtTree *tree, char **items, Size *lens,
			   const BlockNumber *leaves, int n,
			   FtUniquePruneFn prune, void *arg)
{
	const char **cand = palloc(n * sizeof(char *));
	Size	   *candlens = palloc(n * sizeof(Size));
	OffsetNumber *candoffs = palloc(n * sizeof(OffsetNumber));
	bool	   *remove = palloc(n * sizeof(bool));
	char	  **missed = NULL;
	Size	   *missedlens = NULL;
	int			nmissed = 0;
	int			i = 0;

	while (i < n)
	{
		Buffer		leaf = InvalidBuffer;
		BlockNumber hint = leaves ? leaves[i] : InvalidBlockNumber;
		Page		page;
		FtPageOpaque opaque;
		int			ncand = 0;
		int			ndead = 0;
		int			j;

		if (hint != InvalidBlockNumber)
		{
			leaf = ft_getleaf(tree, hint, BUFFER_LOCK_EXCLUSIVE);
			opaque = FtPageGetOpaque(BufferGetPage(leaf));
			if (!FtPageIsLeaf(opaque) || FtPageIsDeleted(opaque))
			{
				UnlockReleaseBuffer(leaf);
				leaf = InvalidBuffer;
				hint = InvalidBlockNumber;
			}
		}
		if (!BufferIsValid(leaf))
			leaf = ft_descend_to_leaf(tree, items[i], lens[i], BUFFER_LOCK_EXCLUSIVE);
		page = ft_leaf_view(tree, leaf);
		opaque = FtPageGetOpaque(page);

		/* the items of the batch that belong to this leaf */
		for (j = i; j < n; j++)
		{
			bool		found;
			OffsetNumber off;
			Size		len;
			char	   *stored;

			if (hint != InvalidBlockNumber)
			{
				/* the items the scan saw in this leaf */
				if (leaves[j] != hint)
					break;
			}
			else if (j > i && !FtPageIsRightmost(opaque))
			{
				char	   *hikey = ft_page_item(page, FT_HIKEY, &len);

				if (ft_cmp(tree, items[j], lens[j], hikey, len) >= 0)
					break;
			}
			off = ft_leaf_lower_bound(tree, page, items[j], lens[j], &found);
			if (found)
			{
				stored = ft_page_item(page, off, &len);
				found = len == lens[j] && memcmp(stored, items[j], len) == 0;
			}
			if (!found)
			{
				if (hint != InvalidBlockNumber)
				{
					/* look for it again with a descent, below */
					if (missed == NULL)
					{
						missed = palloc(n * sizeof(char *));
						missedlens = palloc(n * sizeof(Size));
					}
					missed[nmissed] = items[j];
					missedlens[nmissed++] = lens[j];
				}
				continue;
			}
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
	/* they ascend still: the hinted groups took them in order */
	if (nmissed > 0)
	{
		ft_prune_items(tree, missed, missedlens, NULL, nmissed, prune, arg);
		pfree(missed);
		pfree(missedlens);
	}
}

/*
 * The blocks the walk reached.  Pages it did not reach are the metapage,
 * routing pages and deleted pages; the deleted ones are put in the free
 * space map again at the end, because the map is not crash-safe (nbtree
 * finds them again the same way, by looking at every block).  The map
 * only gets pages that may be reused already (ft_page_recyclable), as
 * nbtree's: ft_newbuf runs with other pages locked and should not have to
 * read and reject pages that are too young.  So the pages this pass
 * deletes, which it reached, wait in "deleted" and are offered at the end
 * if they have become old enough meanwhile; otherwise the next pass offers
 * them.
 */
typedef struct VisitMap
{
	BlockNumber nblocks;		/* blocks when the walk started */
	uint8	   *bits;
	BlockNumber *deleted;		/* pages this pass deleted */
	FullTransactionId *deleted_at;	/* no older than their stamps */
	int			ndeleted;
	int			deleted_size;
} VisitMap;

/* a page this pass deleted, to offer at its end (offer_deleted_pages) */
static void
remember_deleted(VisitMap *v, BlockNumber blkno)
{
	if (v->ndeleted == v->deleted_size)
	{
		v->deleted_size = Max(16, v->deleted_size * 2);
		v->deleted = v->deleted ?
			repalloc(v->deleted, sizeof(BlockNumber) * v->deleted_size) :
			palloc(sizeof(BlockNumber) * v->deleted_size);
		v->deleted_at = v->deleted_at ?
			repalloc(v->deleted_at, sizeof(FullTransactionId) * v->deleted_size) :
			palloc(sizeof(FullTransactionId) * v->deleted_size);
	}
	v->deleted[v->ndeleted] = blkno;
	/* read after the deletion: not older than the page's own stamp */
	v->deleted_at[v->ndeleted] = ReadNextFullTransactionId();
	v->ndeleted++;
}

static void
offer_deleted_pages(FtTree *tree, VisitMap *v)
{
	int			i;

	for (i = 0; i < v->ndeleted; i++)
		if (GlobalVisCheckRemovableFullXid(NULL, v->deleted_at[i]))
			RecordFreeIndexPage(tree->rel, v->deleted[i]);
	if (v->deleted)
	{
		pfree(v->deleted);
		pfree(v->deleted_at);
	}
}

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
 * Offer every deleted page the walk did not reach, and that may be reused
 * already, to the free space map.
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
		vacuum_delay_point();
		buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 tree->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page))
			isfree = true;		/* extension interrupted by a crash */
		else
		{
			ft_checkpage(tree->rel, buf);
			isfree = ft_page_recyclable(page);
		}
		UnlockReleaseBuffer(buf);
		if (isfree)
			RecordFreeIndexPage(tree->rel, blkno);
	}
}

/*
 * Read a page and take its cleanup lock: waits until no scan pins it.  Or,
 * with FtTree.vacuum_skip_pinned, if a scan pins it: a share lock, and
 * *readonly set (nothing may change on the page then).  The page must be
 * of the given kind (the walk only reaches leaves and buffer nodes).
 * Pages are read through the VACUUM's ring (FtTree.strategy), as nbtree's
 * and heap's VACUUM read theirs: a walk over every leaf of an index larger
 * than shared buffers would otherwise push out the nodes the inserters
 * descend through, and they would stall reading them back at the end of
 * every autovacuum pass.  And before each page the walk honours the
 * cost-based delay (vacuum_cost_delay, autovacuum_vacuum_cost_delay) as
 * nbtree's does, holding nothing: an unthrottled autovacuum took the disk
 * from the inserters.
 */
static Buffer
cleanup_lock(FtTree *tree, BlockNumber blkno, uint16 kind, VisitMap *visited,
			 bool *readonly)
{
	Buffer		buf;

	vacuum_delay_point();
	buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
							 tree->strategy);
	mark_visited(visited, blkno);
	*readonly = false;
	if (!tree->vacuum_skip_pinned)
		LockBufferForCleanup(buf);
	else if (!ConditionalLockBufferForCleanup(buf))
	{
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		*readonly = true;
	}
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

/*
 * A leaf a scan pins, share-locked by cleanup_lock: may VACUUM only read it
 * (FtTree.vacuum_pinned_readable), or must it wait for its cleanup lock?
 */
static bool
pinned_leaf_readable(FtTree *tree, Buffer buf, void *arg)
{
	Page		page;
	FtPageOpaque opaque;
	OffsetNumber off;
	OffsetNumber maxoff;

	if (tree->vacuum_pinned_readable == NULL)
		return true;
	page = ft_leaf_view(tree, buf);
	opaque = FtPageGetOpaque(page);
	if (FtPageIsDeleted(opaque))
		return true;
	maxoff = PageGetMaxOffsetNumber(page);
	for (off = FtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);

		if (!tree->vacuum_pinned_readable(item, len, arg))
			return false;
	}
	return true;
}

/*
 * Leaves found empty, candidates for unlinking; and, when the tree
 * compresses its leaves, those visited uncompressed with items, candidates
 * for compress_leaves (only leaves this pass visits: a leaf VACUUM skips
 * is not read for it either).
 */
typedef struct EmptyLeaves
{
	BlockNumber *blocks;
	int			n;
	int			size;
	bool		want_plain;
	BlockNumber *plain;
	int			nplain;
	int			plainsize;
	int			merged;			/* leaves the last merge took (0: none yet) */
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

static void
remember_plain(EmptyLeaves *e, BlockNumber blkno)
{
	if (e->nplain == e->plainsize)
	{
		e->plainsize = Max(16, e->plainsize * 2);
		e->plain = e->plain ? repalloc(e->plain, sizeof(BlockNumber) * e->plainsize) :
			palloc(sizeof(BlockNumber) * e->plainsize);
	}
	e->plain[e->nplain++] = blkno;
}

static bool
is_plain(EmptyLeaves *e, BlockNumber blkno)
{
	for (int i = 0; i < e->nplain; i++)
		if (e->plain[i] == blkno)
			return true;
	return false;
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
 * ft_leaf_recompress of items[0..n) once their owner has settled what it
 * can (as ft_merge_leaves does): a wide frame is filled to fit, so the row
 * versions a transaction expanded in it (deleted, locked, updated) may no
 * longer fit its page as they are, but do once settled.
 */
static bool
recompress_settled(FtTree *tree, Buffer buf, char **items, Size *lens, int n)
{
	FtLeafPrune pr;
	char	  **pitems;
	Size	   *plens;
	int			pn;
	Size		freed;
	Size		added;
	bool		ok;

	if (!ft_prune_run(tree, items, lens, n, false, &pr, &pitems, &plens, &pn,
					  &freed, &added))
		return false;
	if (FullTransactionIdIsValid(pr.horizon))
		ft_log_removal_horizon(tree, pr.horizon);
	ok = ft_leaf_recompress(tree, buf, pitems, plens, pn);
	ft_prune_free(&pr);
	pfree(pitems);
	pfree(plens);
	return ok;
}

/*
 * VACUUM changes entries of compressed leaf buf (view: its decoded page):
 * the patches in payload (ft_apply_patches' form, decoded offsets) apply
 * and the entries at offsets dead[0..ndead) go, in one new frame.
 */
static void
recompress_leaf(FtTree *tree, Buffer buf, Page view, const char *payload,
				Size paylen, const OffsetNumber *dead, int ndead)
{
	OffsetNumber first = FtFirstDataOffset(FtPageGetOpaque(view));
	OffsetNumber maxoff = PageGetMaxOffsetNumber(view);
	int			nall = maxoff >= first ? maxoff - first + 1 : 0;
	char	  **items = palloc(sizeof(char *) * Max(nall, 1));
	Size	   *lens = palloc(sizeof(Size) * Max(nall, 1));
	char	   *copy = palloc(ft_view_bytes(view));
	int			n = 0;
	int			d = 0;
	Size		pos = 0;

	/* the view may be decoded again by others: work on a copy */
	ft_view_copy(copy, view, BufferGetPage(buf));
	while (pos < paylen)
	{
		uint16		hdr[3];

		Size		ilen;

		memcpy(hdr, payload + pos, sizeof(hdr));
		pos += sizeof(hdr);
		memcpy(ft_page_item(copy, hdr[0], &ilen) + hdr[1], payload + pos,
			   hdr[2]);
		pos += hdr[2];
	}
	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		if (d < ndead && dead[d] == off)
		{
			d++;
			continue;
		}
		items[n] = ft_page_item(copy, off, &lens[n]);
		n++;
	}
	if (!ft_leaf_recompress(tree, buf, items, lens, n) &&
		!recompress_settled(tree, buf, items, lens, n))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("block %u of %s \"%s\" no longer fits one compressed page once vacuumed",
						BufferGetBlockNumber(buf), ft_relkind_name(tree->rel),
						RelationGetRelationName(tree->rel)),
				 errhint("VACUUM FULL rewrites the table.")));
	pfree(items);
	pfree(lens);
	pfree(copy);
}

/*
 * Clean one leaf, which the caller has cleanup-locked: items the callback
 * changes are patched first, then those it removes go.  With readonly (the
 * leaf is only share-locked: a scan pins it) the callback sees every item
 * with patch NULL and nothing changes.
 */
static void
vacuum_leaf(FtTree *tree, Buffer buf, FtVacuumCallback callback, void *arg,
			FtVacuumResult *result, bool readonly)
{
	Page		page = ft_leaf_view(tree, buf);
	bool		compressed = (page != BufferGetPage(buf));
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	/* a wide view holds up to FT_FRAME_MAX_ITEMS entries */
	OffsetNumber *dead = palloc(sizeof(OffsetNumber) * (maxoff + 1));
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
		if (readonly)
		{
			(void) callback(item, len, arg, NULL);
			result->num_items += 1;
			continue;
		}
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
	if (npatches > 0 && compressed &&
		!ft_leaf_patch_entries(tree, buf, page, payload, paylen, npatches))
	{
		/* more than its change area takes: a new frame, one image */
		recompress_leaf(tree, buf, page, payload, paylen, dead, ndead);
		pfree(payload);
		result->items_removed += ndead;
		pfree(dead);
		return;
	}
	if (npatches > 0 && compressed)
	{
		/* in the change area; the view is stale now, the offsets are not */
		pfree(payload);
		ft_delete_offsets(tree, buf, dead, ndead);
		result->items_removed += ndead;
		pfree(dead);
		return;
	}
	if (npatches > 0)
	{
		patch_items(tree, buf, payload, paylen, npatches);
		pfree(payload);
	}
	ft_delete_offsets(tree, buf, dead, ndead);
	result->items_removed += ndead;
	pfree(dead);
}

/*
 * Clean the messages of one buffer node, which the caller has
 * cleanup-locked; or, readonly, only share-locked because a scan pins it
 * (FtTree.vacuum_skip_pinned, set only for trees that never buffer: there
 * is nothing to clean).
 */
static void
vacuum_messages(FtTree *tree, Buffer buf, FtVacuumCallback callback,
				void *arg, FtVacuumResult *result, bool readonly)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;

	if (readonly)
	{
		if (maxoff >= FtFirstMsgOffset(opaque))
			ereport(ERROR,
					(errcode(ft_corrupted_errcode(tree->rel)),
					 errmsg("%s \"%s\" has buffered messages at block %u, but its tree never buffers",
							ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel),
							BufferGetBlockNumber(buf))));
		return;
	}

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
		bool		readonly;

		if (plan)
		{
			blkno = skip_children(plan, blkno, arg, result, visited);
			if (blkno == InvalidBlockNumber)
				break;
		}
		buf = cleanup_lock(tree, blkno, FT_PAGE_LEAF, visited, &readonly);
		if (readonly && !pinned_leaf_readable(tree, buf, arg))
		{
			/* wait after all; the leaf may change meanwhile (or go) */
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBufferForCleanup(buf);
			readonly = false;
		}
		page = BufferGetPage(buf);
		opaque = FtPageGetOpaque(page);
		if (!FtPageIsDeleted(opaque))
		{
			vacuum_leaf(tree, buf, callback, arg, result, readonly);
			if (empties && PageGetMaxOffsetNumber(page) < FtFirstDataOffset(opaque))
				remember_empty(empties, blkno);
			else if (empties && empties->want_plain &&
					 !FtPageIsRightmost(opaque) &&
					 !ft_leaf_is_compressed(page))
				remember_plain(empties, blkno);
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

/* at most this many leaves go with an empty level-1 node (one WAL record) */
#define FT_DELETE_NODE_MAX_LEAVES	4

/*
 * Unlink empty leaves of buffer node bblk.  An empty leaf L with a left
 * sibling LS and a right sibling R under the same buffer node is removed
 * the way nbtree removes pages: R takes over L's key range (L's pivot now
 * points to R and R's pivot goes away), LS links to R, and L is marked
 * deleted, keeping its right link to R, so that anyone who still reaches
 * L through an old pointer moves right to the page that now owns its
 * keys.  L may only be reused once no snapshot older than the deletion
 * remains (see ft_newbuf).  One WAL record carries the three new images.
 * Returns whether the node itself might go now (delete_empty_node).
 */
static bool
unlink_empty_leaves(FtTree *tree, BlockNumber bblk, EmptyLeaves *empties,
					FtVacuumResult *result, VisitMap *visited)
{
	bool		candidate;

	Buffer		bbuf = ft_getbuf(tree, bblk, BUFFER_LOCK_EXCLUSIVE);
	Page		bpage = BufferGetPage(bbuf);
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	int			e;

	if (!FtPageIsBuffer(bopaque) || FtPageIsDeleted(bopaque))
	{
		UnlockReleaseBuffer(bbuf);
		return false;
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
		ftxlog_images_relinked(tree->rel, bufs, 3, FT_IMAGES_DELETE_RELINK,
							   NULL);
		END_CRIT_SECTION();

		UnlockReleaseBuffer(lbuf);
		UnlockReleaseBuffer(lsbuf);
		remember_deleted(visited, empties->blocks[e]);
		result->pages_deleted++;
	}

	/*
	 * Might the node go as a whole (delete_empty_node)?  Only a cheap look
	 * here, under the lock already held: it buffers nothing and has few
	 * leaves left.  Locking its parent to find out more would stall inserts.
	 */
	candidate = PageGetMaxOffsetNumber(bpage) < FtFirstMsgOffset(bopaque) &&
		bopaque->ft_nchildren <= FT_DELETE_NODE_MAX_LEAVES;
	UnlockReleaseBuffer(bbuf);
	return candidate;
}

/* is this a live (not deleted) page of the given kind? */
static bool
live_page(Page page, uint16 kind)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);

	return (opaque->ft_flags & FT_PAGE_KIND_MASK) == kind &&
		!FtPageIsDeleted(opaque);
}

/* a deleted page whose range now belongs to right; recyclable later */
static void
mark_deleted(Page page, uint16 kind, uint16 level, BlockNumber right)
{
	FtPageOpaque opaque;

	ft_page_init(page, kind | FT_PAGE_DELETED, level);
	opaque = FtPageGetOpaque(page);
	opaque->ft_right = right;
	opaque->ft_msn = U64FromFullTransactionId(ReadNextFullTransactionId());
}

/* the page space a leaf's items take (its high key not counted) */
Size
ft_leaf_items_space(Page page)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		total = 0;

	for (OffsetNumber off = FtFirstDataOffset(opaque); off <= maxoff; off++)
		total += ft_item_space(ItemIdGetLength(PageGetItemId(page, off)));
	return total;
}

/*
 * Merge leaves[0..k) (consecutive children a .. a + k - 1 of level-1 node
 * bbuf, the left sibling lsbuf before them; all locked exclusively) into
 * one compressed leaf in the place of the last, if their items (pruned by
 * the owner first, if prune) fit one; the first may be compressed already
 * (a run behind an append point, ft_seal.c), the others may not.
 * The others are deleted as
 * unlink_empty_leaves deletes an empty leaf, their range going to the
 * compressed leaf on their right: anyone who reaches one through an old
 * pointer moves right to it.  Keys only ever move right, as in a split, so
 * a reader that copied a leaf before finds nothing twice: a forward scan
 * goes on past its old high key (ft_scan.c), and a lookup moves right.  One
 * WAL record: images of the node and the leaves, and the left sibling's new
 * right link.
 */
bool
ft_merge_leaves(FtTree *tree, Buffer bbuf, int a, Buffer lsbuf, Buffer *leaves,
				int k, bool prune)
{
	Page		bpage = BufferGetPage(bbuf);
	Page		tpage = BufferGetPage(leaves[k - 1]);
	FtPageOpaqueData template = *FtPageGetOpaque(tpage);
	BlockNumber target = BufferGetBlockNumber(leaves[k - 1]);
	PGAlignedBlock image;
	char	  **old;
	Size	   *oldlens;
	char	  **items;
	Size	   *lens;
	int			nold = 0;
	int			n;
	FtLeafPrune pr;
	Size		freed;
	Size		added;
	bool		pruned;
	char	   *hikey;
	Size		hikeylen;
	Buffer		bufs[FT_MERGE_MAX_LEAVES + 2];
	xl_ft_merged_node node = {.first = a, .nmerged = k};
	Page		view = NULL;	/* a compressed leaf's decoded page */
	bool		ok;

	Assert(!FtPageIsRightmost(&template));
	Assert(!FtPageIsCompressed(&template));
	old = palloc(sizeof(char *) * FT_FRAME_MAX_ITEMS);
	oldlens = palloc(sizeof(Size) * FT_FRAME_MAX_ITEMS);
	for (int i = 0; i < k; i++)
	{
		/* an index's run may start with a compressed leaf (ft_seal.c) */
		Page		lp = ft_leaf_view(tree, leaves[i]);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(lp);

		if (lp != BufferGetPage(leaves[i]))
		{
			Assert(i == 0 && view == NULL);
			view = lp;
			ft_leaf_view_protect(view);
		}
		for (OffsetNumber off = FtFirstDataOffset(FtPageGetOpaque(lp));
			 off <= maxoff; off++)
		{
			if (nold >= FT_FRAME_MAX_ITEMS)
			{
				if (view)
					ft_leaf_view_unprotect(view);
				pfree(old);
				pfree(oldlens);
				return false;
			}
			old[nold] = ft_page_item(lp, off, &oldlens[nold]);
			nold++;
		}
	}

	/* the owner drops what nobody needs and settles what it can */
	pruned = prune &&
		ft_prune_run(tree, old, oldlens, nold, false, &pr, &items, &lens,
					 &n, &freed, &added);
	if (!pruned)
	{
		items = old;
		lens = oldlens;
		n = nold;
	}
	hikey = ft_page_item(tpage, FT_HIKEY, &hikeylen);
	template.ft_codec = FT_CODEC_NONE;

	/*
	 * The merged leaf has applied every message any of them had: a scan
	 * that copied its buffer node before the merge must not apply one of
	 * those again (an index's leaves take messages; a table's none).
	 */
	for (int i = 0; i < k - 1; i++)
		template.ft_msn = Max(template.ft_msn,
							  FtPageGetOpaque(BufferGetPage(leaves[i]))->ft_msn);
	ok = n > 0 && n <= FtFrameMaxItems(tree) &&
		ft_leaf_compress(tree, image.data, &template, items, lens, n, hikey,
						 hikeylen);
	if (ok)
	{
		if (pruned && FullTransactionIdIsValid(pr.horizon))
			ft_log_removal_horizon(tree, pr.horizon);
		ftxlog_reserve(tree->rel, k + 2);

		START_CRIT_SECTION();
		FtPageGetOpaque(BufferGetPage(lsbuf))->ft_right = target;
		for (int i = 0; i < k - 1; i++)
			mark_deleted(BufferGetPage(leaves[i]), FT_PAGE_LEAF, 0, target);
		memcpy(tpage, image.data, BLCKSZ);
		/* the target takes the range of the first: its pivot, and theirs go */
		ft_apply_merge_to_node(bpage, a, k, target);
		bufs[0] = bbuf;
		bufs[1] = lsbuf;
		for (int i = 0; i < k; i++)
			bufs[i + 2] = leaves[i];
		for (int i = 0; i < k + 2; i++)
			MarkBufferDirty(bufs[i]);
		ftxlog_images_relinked(tree->rel, bufs, k + 2, FT_IMAGES_MERGED_PIVOTS,
							   &node);
		END_CRIT_SECTION();
	}
	if (pruned)
	{
		ft_prune_free(&pr);
		pfree(items);
		pfree(lens);
	}
	if (view)
		ft_leaf_view_unprotect(view);
	pfree(old);
	pfree(oldlens);
	return ok;
}

/*
 * Compress the leaves of level-1 node bblk (a table's, whose tree names a
 * codec): each run of uncompressed leaves whose items fit one frame
 * decoded is merged into one compressed leaf, as many as fit it once
 * compressed.  A table's rows arrive at its right edge, fill leaves there
 * uncompressed, and are compressed here by the VACUUM after (autovacuum
 * comes by for inserts too): the versions visible to everyone are settled
 * on the way, so the frame holds the short header.  Only leaves this pass
 * visited (cands): a leaf it skipped is not read for this either.  Never
 * the tree's last leaf (the append point), nor a node's first leaf (its
 * left sibling is under another node, which is not locked here).
 */
static void
compress_leaves(FtTree *tree, BlockNumber bblk, EmptyLeaves *cands,
				FtVacuumResult *result, VisitMap *visited)
{
	Buffer		bbuf = ft_getbuf(tree, bblk, BUFFER_LOCK_EXCLUSIVE);
	Page		bpage = BufferGetPage(bbuf);
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	int			a = 1;

	if (!live_page(bpage, FT_PAGE_BUFFER) || bopaque->ft_level != 1 ||
		PageGetMaxOffsetNumber(bpage) >= FtFirstMsgOffset(bopaque))
	{
		UnlockReleaseBuffer(bbuf);
		return;
	}
	for (;;)
	{
		int			lastidx = FtPageIsRightmost(bopaque) ?
			bopaque->ft_nchildren - 2 : bopaque->ft_nchildren - 1;
		Buffer		lsbuf;
		Buffer		leaves[FT_MERGE_MAX_LEAVES];
		int			k = 0;
		Size		space = 0;
		BlockNumber prevright;
		Page		lspage;

		int			want;

		if (a + 1 > lastidx)
			break;

		/*
		 * The rows of a table are much alike: try one more leaf than the
		 * last merge took, so that a run costs one or two compressions.
		 */
		want = cands->merged > 0 ?
			Min(cands->merged + 1, FT_MERGE_MAX_LEAVES) : FT_MERGE_MAX_LEAVES;
		lsbuf = ft_getleaf(tree, ft_child_block(bpage, a - 1),
						   BUFFER_LOCK_EXCLUSIVE);
		lspage = BufferGetPage(lsbuf);
		prevright = FtPageGetOpaque(lspage)->ft_right;
		if (!live_page(lspage, FT_PAGE_LEAF))
			prevright = InvalidBlockNumber;
		for (int j = a; j <= lastidx && k < want; j++)
		{
			BlockNumber blk = ft_child_block(bpage, j);
			Buffer		lb;
			Page		lp;
			Size		sp;

			if (prevright != blk || !is_plain(cands, blk))
				break;
			lb = ft_getleaf(tree, blk, BUFFER_LOCK_EXCLUSIVE);
			lp = BufferGetPage(lb);
			sp = live_page(lp, FT_PAGE_LEAF) && !ft_leaf_is_compressed(lp) &&
				!FtPageIsRightmost(FtPageGetOpaque(lp)) ?
				ft_leaf_items_space(lp) : 0;
			if (sp == 0 || space + sp > FtFrameCapacity(tree))
			{
				UnlockReleaseBuffer(lb);
				break;
			}
			leaves[k++] = lb;
			space += sp;
			prevright = FtPageGetOpaque(lp)->ft_right;
		}

		/*
		 * Fewer leaves until they fit one compressed page: the last is left
		 * out, to start the next run (leaving out the first instead left
		 * every third leaf uncompressed where only two fit).
		 */
		while (k >= 2 &&
			   !ft_merge_leaves(tree, bbuf, a, lsbuf, leaves, k, true))
			UnlockReleaseBuffer(leaves[--k]);
		if (k >= 2)
		{
			cands->merged = k;
			for (int i = 0; i < k - 1; i++)
				remember_deleted(visited, BufferGetBlockNumber(leaves[i]));
			result->pages_deleted += k - 1;
			result->leaves_compressed++;
			a++;				/* the compressed leaf is child a now */
		}
		else
			a += Max(k, 1);
		for (int i = 0; i < k; i++)
			UnlockReleaseBuffer(leaves[i]);
		UnlockReleaseBuffer(lsbuf);
	}
	UnlockReleaseBuffer(bbuf);
}

/*
 * What goes when a level-1 node X goes: X, its leaves, and the links into
 * them from the left, all locked exclusively (XR, X's right sibling, only
 * shared).  lock_lower fills it; held[] collects every buffer to release.
 */
typedef struct LowerPart
{
	Buffer		xlbuf;			/* level-1 node left of X */
	Buffer		xbuf;
	Buffer		lsbuf;			/* leaf left of X's first leaf */
	Buffer		leaves[FT_DELETE_NODE_MAX_LEAVES];
	int			nleaves;
	BlockNumber xrblk;			/* takes over X's range */
	BlockNumber r1;				/* XR's first leaf: takes over the leaves' */
} LowerPart;

#define FT_DELETE_MAX_HELD	(FT_DELETE_NODE_MAX_LEAVES + 8)

/*
 * Exclusively lock the live buffer node at level whose right link is
 * target, starting at start (it may have split since: its right siblings
 * are followed, a few at most).  The buffer goes into held either way;
 * false if it is not found.
 */
static bool
lock_left_sibling(FtTree *tree, BlockNumber start, BlockNumber target,
				  uint32 level, Buffer *buf, Buffer *held, int *nheld)
{
	int			hops;

	*buf = ft_getbuf(tree, start, BUFFER_LOCK_EXCLUSIVE);
	for (hops = 0;; hops++)
	{
		Page		page = BufferGetPage(*buf);
		FtPageOpaque op = FtPageGetOpaque(page);

		if (!live_page(page, FT_PAGE_BUFFER) || op->ft_level != level)
			break;
		if (op->ft_right == target)
		{
			held[(*nheld)++] = *buf;
			return true;
		}
		if (FtPageIsRightmost(op) || hops >= 8)
			break;
		UnlockReleaseBuffer(*buf);
		*buf = ft_getbuf(tree, op->ft_right, BUFFER_LOCK_EXCLUSIVE);
	}
	held[(*nheld)++] = *buf;
	return false;
}

/*
 * Lock X (xblk) and what goes with it, after the caller has locked the
 * levels above.  xlblk is where to look for X's level-1 left sibling (it
 * may have split: its right siblings are followed to X).  X must
 * buffer nothing and have at most FT_DELETE_NODE_MAX_LEAVES leaves, all
 * empty; xrblk must be its right sibling.  Locks: XL, X, XR (share), then
 * LS and X's leaves.  False if anything is not so.
 */
static bool
lock_lower(FtTree *tree, BlockNumber xlblk, BlockNumber xblk,
		   BlockNumber xrblk, LowerPart *lp, Buffer *held, int *nheld)
{
	Page		xpage;
	FtPageOpaque xopaque;
	Buffer		xrbuf;
	int			i;

	memset(lp, 0, sizeof(LowerPart));
	lp->xrblk = xrblk;
	if (!lock_left_sibling(tree, xlblk, xblk, 1, &lp->xlbuf, held, nheld))
		return false;

	/* X: a level-1 node that buffers nothing, with few leaves */
	lp->xbuf = ft_getbuf(tree, xblk, BUFFER_LOCK_EXCLUSIVE);
	held[(*nheld)++] = lp->xbuf;
	xpage = BufferGetPage(lp->xbuf);
	xopaque = FtPageGetOpaque(xpage);
	if (!live_page(xpage, FT_PAGE_BUFFER) || xopaque->ft_level != 1 ||
		xopaque->ft_right != xrblk ||
		PageGetMaxOffsetNumber(xpage) >= FtFirstMsgOffset(xopaque) ||
		xopaque->ft_nchildren > FT_DELETE_NODE_MAX_LEAVES)
		return false;

	/* XR's first leaf takes over */
	xrbuf = ft_getbuf(tree, xrblk, BUFFER_LOCK_SHARE);
	held[(*nheld)++] = xrbuf;
	if (!live_page(BufferGetPage(xrbuf), FT_PAGE_BUFFER) ||
		FtPageGetOpaque(BufferGetPage(xrbuf))->ft_level != 1)
		return false;
	lp->r1 = ft_child_block(BufferGetPage(xrbuf), 0);

	/* LS: XL's last leaf, whose right link is X's first leaf */
	{
		Page		xlpage = BufferGetPage(lp->xlbuf);
		BlockNumber lsblk = ft_child_block(xlpage,
										   FtPageGetOpaque(xlpage)->ft_nchildren - 1);

		lp->lsbuf = ft_getbuf(tree, lsblk, BUFFER_LOCK_EXCLUSIVE);
		held[(*nheld)++] = lp->lsbuf;
		if (!live_page(BufferGetPage(lp->lsbuf), FT_PAGE_LEAF) ||
			FtPageGetOpaque(BufferGetPage(lp->lsbuf))->ft_right !=
			ft_child_block(xpage, 0))
			return false;
	}

	/* X's leaves: empty, chained to R1 */
	for (i = 0; i < xopaque->ft_nchildren; i++)
	{
		Page		lpage;
		FtPageOpaque lop;
		BlockNumber next = i + 1 < xopaque->ft_nchildren ?
			ft_child_block(xpage, i + 1) : lp->r1;

		lp->leaves[i] = ft_getbuf(tree, ft_child_block(xpage, i),
								  BUFFER_LOCK_EXCLUSIVE);
		held[(*nheld)++] = lp->leaves[i];
		lp->nleaves = i + 1;
		lpage = BufferGetPage(lp->leaves[i]);
		lop = FtPageGetOpaque(lpage);
		if (!live_page(lpage, FT_PAGE_LEAF) || lop->ft_right != next ||
			PageGetMaxOffsetNumber(lpage) >= FtFirstDataOffset(lop))
			return false;
	}
	return true;
}

/* The buffers lock_lower changes, top-down and left to right (as redo locks) */
static int
lower_buffers(LowerPart *lp, Buffer *logged)
{
	int			n = 0;
	int			i;

	logged[n++] = lp->xlbuf;
	logged[n++] = lp->xbuf;
	logged[n++] = lp->lsbuf;
	for (i = 0; i < lp->nleaves; i++)
		logged[n++] = lp->leaves[i];
	return n;
}

/* In the caller's critical section: relink around X and its leaves, delete them */
static void
delete_lower(LowerPart *lp)
{
	int			i;

	FtPageGetOpaque(BufferGetPage(lp->xlbuf))->ft_right = lp->xrblk;
	FtPageGetOpaque(BufferGetPage(lp->lsbuf))->ft_right = lp->r1;
	mark_deleted(BufferGetPage(lp->xbuf), FT_PAGE_BUFFER, 1, lp->xrblk);
	for (i = 0; i < lp->nleaves; i++)
		mark_deleted(BufferGetPage(lp->leaves[i]), FT_PAGE_LEAF, 0, lp->r1);
}

/* Release what a deletion held; remember the deleted pages for the FSM */
static void
finish_deletion(FtTree *tree, bool ok, BlockNumber *deleted, int ndeleted,
				Buffer *held, int nheld, FtVacuumResult *result,
				VisitMap *visited)
{
	int			i;

	while (nheld > 0)
		UnlockReleaseBuffer(held[--nheld]);
	if (!ok)
		return;
	for (i = 0; i < ndeleted; i++)
		remember_deleted(visited, deleted[i]);
	result->pages_deleted += ndeleted;
}

/* X and its leaves, as deleted blocks */
static int
lower_blocks(LowerPart *lp, BlockNumber *blocks)
{
	int			n = 0;
	int			i;

	blocks[n++] = BufferGetBlockNumber(lp->xbuf);
	for (i = 0; i < lp->nleaves; i++)
		blocks[n++] = BufferGetBlockNumber(lp->leaves[i]);
	return n;
}

/* a buffer node's pivot at childidx now leads to child, the next goes */
static void
drop_next_pivot(Page page, int childidx, BlockNumber child)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber off = FtFirstDataOffset(opaque) + childidx;

	((FtPivotHeader *) PageGetItem(page, PageGetItemId(page, off)))->child = child;
	PageIndexTupleDelete(page, off + 1);
	opaque->ft_nchildren--;
}

/*
 * Remove level-1 node X (xblk) when nothing is left below it: it buffers
 * nothing, nothing is buffered for it in its parent P, and its leaves
 * (the first and last, which unlink_empty_leaves keeps, and any it could
 * not unlink) are empty.  X's right sibling XR under the same parent
 * takes over X's key range, as a leaf's right sibling does in
 * unlink_empty_leaves: P's pivot for X now points to XR and XR's pivot
 * goes; XR's first leaf R1 likewise takes over the range of X's leaves.
 * X and its leaves are marked deleted with right links to XR and R1, so
 * that a descent or scan that still reaches one through an old pointer
 * moves right to the page that owns its keys; they are recycled once no
 * snapshot older than the deletion remains (ft_newbuf).  The level-1
 * sibling XL left of X and the leaf LS left of X's first leaf are relinked
 * to XR and R1.  XL is P's child before X, or, for P's first child, the
 * level-1 node the walk passed before X (leftblk; it may have split since:
 * its right siblings are followed to X).  The leftmost node (its range
 * starts at minus infinity) stays.  When X is P's only child, P goes with
 * it (delete_empty_upper).
 *
 * Without this, a queue (rows or entries added at one end, removed at the
 * other) leaves every level-1 node it empties in the tree with two empty
 * leaves (a table grew by ~5% of what passed through it).
 *
 * Locks, top-down and left to right within a level: P, XL, X, XR (share),
 * then LS and X's leaves.  One WAL record carries every changed page's
 * image.  Scans that reach a deleted leaf descend again: their copy of X
 * does not cover the messages XR holds for R1 (README, Reads).  Returns 1
 * if X went, -1 if X is the only child of parentblk and parentblk buffers
 * nothing (it may go as a whole), else 0.
 */
static int
delete_empty_node(FtTree *tree, BlockNumber parentblk, BlockNumber xblk,
				  BlockNumber leftblk, bool leftmost, FtVacuumResult *result,
				  VisitMap *visited)
{
	Buffer		held[FT_DELETE_MAX_HELD];
	int			nheld = 0;
	Buffer		pbuf;
	Buffer		logged[FT_DELETE_MAX_HELD];
	int			nlogged = 0;
	BlockNumber deleted[FT_DELETE_NODE_MAX_LEAVES + 1];
	int			ndeleted = 0;
	LowerPart	lp;
	Page		ppage;
	FtPageOpaque popaque;
	OffsetNumber sfirst;
	OffsetNumber send;
	int			j = 0;
	int			n = 0;
	int			hops;
	int			ret = 0;

	/*
	 * A node whose range starts at minus infinity stays: it may be a former
	 * root, which backends' root caches may still name (ft_descend_copy
	 * takes a cached root that is rightmost and at the cached level), so it
	 * must never be recycled.  Its leftmost leaf stays for the same reason
	 * (a first child is never unlinked).  This keeps a constant handful of
	 * pages at the left edge.
	 */
	if (parentblk == InvalidBlockNumber || leftmost)
		return 0;				/* X is the root, or the leftmost node */

	/* P: the level-2 node with X's downlink (it may have split since) */
	pbuf = ft_getbuf(tree, parentblk, BUFFER_LOCK_EXCLUSIVE);
	for (hops = 0;; hops++)
	{
		ppage = BufferGetPage(pbuf);
		popaque = FtPageGetOpaque(ppage);
		if (!live_page(ppage, FT_PAGE_BUFFER) || popaque->ft_level != 2)
			break;
		n = popaque->ft_nchildren;
		for (j = 0; j < n; j++)
			if (ft_child_block(ppage, j) == xblk)
				break;
		if (j < n || FtPageIsRightmost(popaque) || hops >= 3)
			break;
		{
			BlockNumber right = popaque->ft_right;

			UnlockReleaseBuffer(pbuf);
			pbuf = ft_getbuf(tree, right, BUFFER_LOCK_EXCLUSIVE);
		}
	}
	held[nheld++] = pbuf;
	if (!live_page(ppage, FT_PAGE_BUFFER) || popaque->ft_level != 2 ||
		j >= n)
		goto done;				/* not found */
	if (j == n - 1)
	{
		/* P's last child stays, unless it is its only one (P may go) */
		if (n == 1 && hops == 0 &&
			PageGetMaxOffsetNumber(ppage) < FtFirstMsgOffset(popaque))
			ret = -1;
		goto done;
	}
	ft_slice_range(tree, ppage, j, &sfirst, &send);
	if (sfirst != send)
		goto done;				/* messages are on their way to X */

	/* XL: P's child before X, or the node the walk kept before X */
	if (j > 0)
		leftblk = ft_child_block(ppage, j - 1);
	else if (leftblk == InvalidBlockNumber)
		goto done;
	if (!lock_lower(tree, leftblk, xblk, ft_child_block(ppage, j + 1), &lp,
					held, &nheld))
		goto done;

	logged[nlogged++] = pbuf;
	nlogged += lower_buffers(&lp, logged + nlogged);
	ftxlog_reserve(tree->rel, nlogged);

	START_CRIT_SECTION();
	drop_next_pivot(ppage, j, lp.xrblk);
	delete_lower(&lp);
	for (int i = 0; i < nlogged; i++)
		MarkBufferDirty(logged[i]);
	ftxlog_images(tree->rel, logged, nlogged, FT_IMAGES_DELETE);
	END_CRIT_SECTION();
	ndeleted = lower_blocks(&lp, deleted);
	ret = 1;

done:
	finish_deletion(tree, ret == 1, deleted, ndeleted, held, nheld, result,
					visited);
	return ret;
}

/*
 * Remove level-2 node P with its only child X, X's leaves and all, when
 * nothing is left below it (X as for delete_empty_node; P buffers
 * nothing).  P's right sibling PR under its routing parent G takes over
 * P's range (G's pivot for P points to PR, PR's pivot goes), PR's first
 * child XR takes over X's, and XR's first leaf R1 the leaves'.  P is
 * marked deleted with a right link to PR, and its left sibling PL (G's
 * child before P, or for G's first child the level-2 node the walk passed
 * before P, leftparent) links to PR; X and its leaves go as in
 * delete_empty_node, XL being PL's last child.  The leftmost level-2 node
 * stays (delete_empty_node says why).  Without this, every
 * level-2 node a queue emptied kept a level-1 node and its first and last
 * leaves: ~0.7% of what passed through a table of the default fanout,
 * ~14% at fanout 4.
 *
 * Copies of G in backends' routing caches may still point to P: a descent
 * through one reaches P and moves right, but once P is recycled it would
 * reach an unrelated page.  So the deletion advances the shared routing
 * epoch (ft_routecache.c), which makes every backend drop its copies
 * before it uses one again; redo does the same on standbys
 * (FT_IMAGES_DELETE_UPPER).
 *
 * G is found by a descent to level 3 for P's lower bound (low; the leftmost
 * P, whose bound is minus infinity, stays).  Locks, top-down and left to right within a level: G,
 * PL, P, PR (share), XL, X, XR (share), LS, X's leaves.  Returns whether
 * P went.
 */
static bool
delete_empty_upper(FtTree *tree, BlockNumber pblk, BlockNumber xblk,
				   BlockNumber leftparent, const char *low, Size lowlen,
				   FtVacuumResult *result, VisitMap *visited)
{
	Buffer		held[FT_DELETE_MAX_HELD];
	int			nheld = 0;
	Buffer		logged[FT_DELETE_MAX_HELD];
	int			nlogged = 0;
	BlockNumber deleted[FT_DELETE_NODE_MAX_LEAVES + 2];
	int			ndeleted = 0;
	Buffer		gbuf;
	Buffer		plbuf;
	Buffer		pbuf;
	Buffer		prbuf;
	Page		gpage;
	Page		ppage;
	FtPageOpaque gopaque;
	FtPageOpaque popaque;
	BlockNumber prblk;
	BlockNumber xlblk = InvalidBlockNumber;
	LowerPart	lp;
	int			j;
	int			n;
	bool		ok = false;

	/* the leftmost node stays (a former root, see delete_empty_node) */
	if (!ft_routecache_epoch_ready() || low == NULL)
		return false;

	/* G: the routing page above P */
	gbuf = ft_descend_to_level(tree, low, lowlen, 3, BUFFER_LOCK_EXCLUSIVE);
	held[nheld++] = gbuf;
	gpage = BufferGetPage(gbuf);
	gopaque = FtPageGetOpaque(gpage);
	if (!live_page(gpage, FT_PAGE_ROUTING) || gopaque->ft_level != 3)
		goto done;				/* P is the root, or G is not found */
	n = gopaque->ft_nchildren;
	for (j = 0; j < n; j++)
		if (ft_child_block(gpage, j) == pblk)
			break;
	if (j >= n - 1)
		goto done;				/* not found, or G's last child */
	prblk = ft_child_block(gpage, j + 1);

	/* PL: G's child before P, or the level-2 node the walk kept before P */
	if (j > 0)
		leftparent = ft_child_block(gpage, j - 1);
	else if (leftparent == InvalidBlockNumber)
		goto done;
	if (!lock_left_sibling(tree, leftparent, pblk, 2, &plbuf, held, &nheld))
		goto done;
	/* PL's children cannot split while PL is locked */
	xlblk = ft_child_block(BufferGetPage(plbuf),
						   FtPageGetOpaque(BufferGetPage(plbuf))->ft_nchildren - 1);

	/* P: X is its only child, it buffers nothing */
	pbuf = ft_getbuf(tree, pblk, BUFFER_LOCK_EXCLUSIVE);
	held[nheld++] = pbuf;
	ppage = BufferGetPage(pbuf);
	popaque = FtPageGetOpaque(ppage);
	if (!live_page(ppage, FT_PAGE_BUFFER) || popaque->ft_level != 2 ||
		popaque->ft_right != prblk || popaque->ft_nchildren != 1 ||
		ft_child_block(ppage, 0) != xblk ||
		PageGetMaxOffsetNumber(ppage) >= FtFirstMsgOffset(popaque))
		goto done;

	/* PR's first child takes over X's range */
	prbuf = ft_getbuf(tree, prblk, BUFFER_LOCK_SHARE);
	held[nheld++] = prbuf;
	if (!live_page(BufferGetPage(prbuf), FT_PAGE_BUFFER) ||
		FtPageGetOpaque(BufferGetPage(prbuf))->ft_level != 2)
		goto done;
	if (!lock_lower(tree, xlblk, xblk,
					ft_child_block(BufferGetPage(prbuf), 0), &lp,
					held, &nheld))
		goto done;

	logged[nlogged++] = gbuf;
	logged[nlogged++] = plbuf;
	logged[nlogged++] = pbuf;
	nlogged += lower_buffers(&lp, logged + nlogged);
	ftxlog_reserve(tree->rel, nlogged);

	START_CRIT_SECTION();
	drop_next_pivot(gpage, j, prblk);
	FtPageGetOpaque(BufferGetPage(plbuf))->ft_right = prblk;
	mark_deleted(ppage, FT_PAGE_BUFFER, 2, prblk);
	delete_lower(&lp);
	for (int i = 0; i < nlogged; i++)
		MarkBufferDirty(logged[i]);
	ftxlog_images(tree->rel, logged, nlogged, FT_IMAGES_DELETE_UPPER);
	END_CRIT_SECTION();
	/* before P can be reused: no routing-cache copy may lead to it */
	ft_routecache_advance_epoch();
	deleted[ndeleted++] = pblk;
	ndeleted += lower_blocks(&lp, deleted + ndeleted);
	ok = true;

done:
	finish_deletion(tree, ok, deleted, ndeleted, held, nheld, result,
					visited);
	return ok;
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
 * skip callback; it is advanced too (a palloc'd copy, or NULL).  Nodes
 * left empty are deleted (delete_empty_node): parentblk is the level-2
 * node whose range the run covers (InvalidBlockNumber: the tree has no
 * level 2), *leftblk the last node the walk kept, advanced too; a level-2
 * node left empty goes too (delete_empty_upper: leftparent is the last
 * level-2 node the walk kept).  Returns whether parentblk went.
 */
static bool
vacuum_lower_run(FtTree *tree, BlockNumber parentblk, BlockNumber leftparent,
				 BlockNumber *bblk, BlockNumber *leftblk, BlockNumber *leafblk,
				 char **low, Size *lowlen,
				 const char *bound, Size boundlen,
				 FtVacuumCallback callback, FtVacuumSkipFn skip, void *arg,
				 FtVacuumResult *result, EmptyLeaves *empties,
				 VisitMap *visited)
{
	bool		parent_deleted = false;

	while (*bblk != InvalidBlockNumber)
	{
		bool		readonly;
		Buffer		bbuf = cleanup_lock(tree, *bblk, FT_PAGE_BUFFER, visited,
										&readonly);
		BlockNumber thisblk = *bblk;
		Page		bpage = BufferGetPage(bbuf);
		FtPageOpaque bopaque = FtPageGetOpaque(bpage);
		char	   *hikey;
		Size		hlen;
		bool		last;
		SkipPlan	plan;

		vacuum_messages(tree, bbuf, callback, arg, result, readonly);
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
		empties->nplain = 0;
		empties->want_plain = tree->codec != FT_CODEC_NONE &&
			!tree->buffering && tree->frame_chgcap > 0;
		*leafblk = vacuum_leaf_run(tree, *leafblk, hikey, hlen,
								   callback, arg, result, empties, visited,
								   skip ? &plan : NULL);
		if (skip)
			free_skip_plan(&plan);
		if (empties->n > 0 &&
			unlink_empty_leaves(tree, thisblk, empties, result, visited))
		{
			int			gone = delete_empty_node(tree, parentblk, thisblk,
												 *leftblk, *low == NULL,
												 result, visited);

			if (gone < 0 &&
				delete_empty_upper(tree, parentblk, thisblk, leftparent,
								   *low, *lowlen, result, visited))
			{
				/* the parent went too: the next level-2 node took over */
				parent_deleted = true;
				gone = 1;
			}
			if (gone > 0)
			{
				/* its right sibling took over its range, lower bound too */
				if (hikey)
					pfree(hikey);
				if (last)
					break;
				continue;
			}
		}
		if (empties->nplain >= 2)
			compress_leaves(tree, thisblk, empties, result, visited);
		*leftblk = thisblk;
		/* this node's high key is the next one's lower bound */
		if (*low)
			pfree(*low);
		*low = hikey;
		*lowlen = hlen;
		if (last)
			break;
	}
	return parent_deleted;
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
	BlockNumber leftblk = InvalidBlockNumber;	/* level-1 node before bblk */
	BlockNumber prevtop = InvalidBlockNumber;	/* level-2 node before topblk */
	BlockNumber leafblk;
	EmptyLeaves empties = {0};
	VisitMap	visited;
	char	   *low = NULL;		/* lower bound of the next level-1 node */
	Size		lowlen = 0;

	/* skipping a pinned node would leave its messages uncleaned */
	Assert(!tree->vacuum_skip_pinned || !tree->buffering);
	memset(result, 0, sizeof(FtVacuumResult));
	memset(&visited, 0, sizeof(visited));
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
		(void) vacuum_lower_run(tree, InvalidBlockNumber, InvalidBlockNumber,
								&bblk, &leftblk, &leafblk, &low, &lowlen,
								NULL, 0, callback, skip, arg, result,
								&empties, &visited);
	while (topblk != InvalidBlockNumber)
	{
		BlockNumber thisblk = topblk;
		bool		readonly;
		Buffer		tbuf = cleanup_lock(tree, topblk, FT_PAGE_BUFFER, &visited,
										&readonly);
		Page		tpage = BufferGetPage(tbuf);
		char	   *hikey;
		Size		hlen;

		vacuum_messages(tree, tbuf, callback, arg, result, readonly);
		hikey = copy_hikey(tpage, &hlen);
		topblk = FtPageGetOpaque(tpage)->ft_right;
		UnlockReleaseBuffer(tbuf);

		if (!vacuum_lower_run(tree, thisblk, prevtop, &bblk, &leftblk,
							  &leafblk, &low, &lowlen, hikey, hlen,
							  callback, skip, arg, result, &empties,
							  &visited))
			prevtop = thisblk;
		if (hikey)
			pfree(hikey);
	}
	if (low)
		pfree(low);
	record_unreached_free_pages(tree, &visited);
	offer_deleted_pages(tree, &visited);
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
