/*-------------------------------------------------------------------------
 *
 * ft_prune.c
 *	  A full leaf gives up the items its owner no longer needs before it
 *	  splits.
 *
 * The tree does not know what its items mean; its owner may (FtTree's
 * leaf_prune_hook).  A table's leaf fills with the versions of rows
 * updated again and again (a small, hot table: every UPDATE appends a new
 * version at the right edge): the hook names the versions no snapshot can
 * see any more and gives compact records in their place, and the leaf
 * takes the new item instead of splitting.  Heap does the same when it
 * prunes a full page.
 *
 * The change is one XLOG_FT_PRUNE record (the leaf's delta), after the
 * hot-standby conflict horizon (XLOG_FT_REUSE).  An exclusive lock on the
 * leaf is enough: readers copy what they read under a share lock (scans
 * copy the leaf; item lookups hold the lock while they look), so none
 * holds a pointer into the page across the change.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "wal/ft_xlog.h"

/* a prune must leave at least this much room beyond the new item's */
#define FT_PRUNE_MIN_FREE	(BLCKSZ / 16)

/*
 * The leaf whose last prune attempt failed, as it was then: an insert that
 * finds the leaf full retries with the parent locked exclusively and comes
 * back to the same unchanged leaf, which need not be read again.  Valid
 * for one insert only (ft_prune_forget), since a page of an unlogged
 * relation can change without its LSN moving.
 */
static struct
{
	RelFileNode node;
	BlockNumber blkno;
	XLogRecPtr	lsn;
	LocationIndex lower;
	LocationIndex upper;
}			failed = {{0, 0, 0}, InvalidBlockNumber, 0, 0, 0};

static bool
same_as_failed(Relation rel, Buffer lbuf, Page page)
{
	return failed.blkno == BufferGetBlockNumber(lbuf) &&
		RelFileNodeEquals(failed.node, rel->rd_node) &&
		failed.lsn == PageGetLSN(page) &&
		failed.lower == ((PageHeader) page)->pd_lower &&
		failed.upper == ((PageHeader) page)->pd_upper;
}

/* a new insert: forget the last failed prune */
void
ft_prune_forget(void)
{
	failed.blkno = InvalidBlockNumber;
}

static void
remember_failed(Relation rel, Buffer lbuf, Page page)
{
	failed.node = rel->rd_node;
	failed.blkno = BufferGetBlockNumber(lbuf);
	failed.lsn = PageGetLSN(page);
	failed.lower = ((PageHeader) page)->pd_lower;
	failed.upper = ((PageHeader) page)->pd_upper;
}

/* Free what the hook allocated */
void
ft_prune_free(FtLeafPrune *pr)
{
	for (int i = 0; i < pr->nnew; i++)
		pfree(pr->newitems[i]);
	if (pr->newitems)
		pfree(pr->newitems);
	if (pr->newlens)
		pfree(pr->newlens);
	if (pr->dead)
		pfree(pr->dead);
	memset(pr, 0, sizeof(FtLeafPrune));
}

/*
 * Let the owner prune old[0..nold) (ascending items of one key range, which
 * it must not change): false if it changes nothing.  Else *items and *lens
 * (palloc'd) are the items after the prune, n of them, kept ones by
 * address and new ones the hook's (valid until ft_prune_free(pr)), and
 * *freed and *added the page space the dropped and the new items take.
 */
bool
ft_prune_run(FtTree *tree, char **old, Size *oldlens, int nold,
			   bool rightmost, FtLeafPrune *pr, char ***itemsp, Size **lensp,
			   int *np, Size *freed, Size *added)
{
	char	  **items;
	Size	   *lens;
	int			n = 0;
	int			d = 0;
	int			k = 0;
	int			i;

	memset(pr, 0, sizeof(FtLeafPrune));
	pr->horizon = InvalidFullTransactionId;
	*freed = 0;
	*added = 0;
	if (tree->leaf_prune_hook == NULL ||
		!tree->leaf_prune_hook(tree, old, oldlens, nold, rightmost, pr) ||
		pr->ndead == 0)
	{
		ft_prune_free(pr);
		return false;
	}

	/* the items after the change: kept ones (by address) and new */
	items = palloc((nold + pr->nnew) * sizeof(char *));
	lens = palloc((nold + pr->nnew) * sizeof(Size));
	for (i = 0; i < nold; i++)
	{
		if (d < pr->ndead && pr->dead[d] == i)
		{
			*freed += ft_item_space(oldlens[i]);
			d++;
			continue;
		}
		while (k < pr->nnew &&
			   ft_cmp(tree, pr->newitems[k], pr->newlens[k], old[i],
					  oldlens[i]) < 0)
		{
			items[n] = pr->newitems[k];
			lens[n++] = pr->newlens[k];
			*added += ft_item_space(pr->newlens[k]);
			k++;
		}
		items[n] = old[i];
		lens[n++] = oldlens[i];
	}
	for (; k < pr->nnew; k++)
	{
		items[n] = pr->newitems[k];
		lens[n++] = pr->newlens[k];
		*added += ft_item_space(pr->newlens[k]);
	}
	if (d != pr->ndead)
		elog(ERROR, "fractam: a prune named items that are not on the leaf");
	*itemsp = items;
	*lensp = lens;
	*np = n;
	return true;
}

/*
 * Let the owner of leaf lbuf (locked exclusively) drop items to make room
 * for need more bytes.  Returns true if the leaf changed and has the room.
 * A prune that would leave less than FT_PRUNE_MIN_FREE more is not done:
 * the leaf splits as it would have, rather than fill and prune again at
 * every insert.
 */
bool
ft_prune_leaf(FtTree *tree, Buffer lbuf, Size need)
{
	Page		page = BufferGetPage(lbuf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	FtLeafPrune pr;
	char	  **old;
	Size	   *oldlens;
	char	  **items;
	Size	   *lens;
	int			nold;
	Size		freed = 0;
	Size		added = 0;
	Size		deltalen;
	char	   *delta;
	int			n = 0;
	int			i;
	bool		ok;

	/* a compressed leaf is rewritten whole instead (see leaf_insert) */
	if (tree->leaf_prune_hook == NULL || !FtPageIsLeaf(opaque) ||
		FtPageIsCompressed(opaque) ||
		maxoff < first || same_as_failed(tree->rel, lbuf, page))
		return false;
	nold = maxoff - first + 1;
	old = palloc(nold * sizeof(char *));
	oldlens = palloc(nold * sizeof(Size));
	for (i = 0; i < nold; i++)
		old[i] = ft_page_item(page, first + i, &oldlens[i]);
	if (!ft_prune_run(tree, old, oldlens, nold, FtPageIsRightmost(opaque),
						&pr, &items, &lens, &n, &freed, &added))
	{
		remember_failed(tree->rel, lbuf, page);
		pfree(old);
		pfree(oldlens);
		return false;
	}

	ok = PageGetExactFreeSpace(page) + freed >=
		added + need + FT_PRUNE_MIN_FREE;
	if (ok)
	{
		delta = ft_build_leaf_delta(page, items, lens, n, NULL, 0,
									InvalidBlockNumber, opaque->ft_msn, false,
									&deltalen);
		if (FullTransactionIdIsValid(pr.horizon))
			ft_log_removal_horizon(tree, pr.horizon);

		START_CRIT_SECTION();
		ft_apply_leaf_delta(page, delta);
		MarkBufferDirty(lbuf);
		ftxlog_prune(tree->rel, lbuf, delta, deltalen, (uint16) pr.ndead,
					 (uint16) pr.nnew);
		END_CRIT_SECTION();
		pfree(delta);
	}
	else
		remember_failed(tree->rel, lbuf, page);

	ft_prune_free(&pr);
	pfree(items);
	pfree(lens);
	pfree(old);
	pfree(oldlens);
	return ok;
}
