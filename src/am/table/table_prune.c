/*-------------------------------------------------------------------------
 *
 * table_prune.c
 *	  A full leaf of a fractam table drops the row versions no snapshot can
 *	  see any more, before it splits.
 *
 * Every UPDATE appends a new version at the right edge of the table's tree,
 * so a small table updated over and over (pgbench's branches and tellers)
 * would grow by a version per update until VACUUM, and every sequential
 * scan of it would read them all.  Heap prunes a full page; fractam prunes
 * a full leaf: when a leaf has no room for a new version (src/ft calls
 * fractam_leaf_prune through the tree's leaf_prune_hook, ft_prune.c), the
 * versions dead to everyone (GlobalVisTestFor, as heap's pruning) leave it.
 *
 * Their index entries may still exist, and VACUUM must find them to clean
 * the indexes, as heap keeps LP_DEAD line pointers.  So their row ids stay
 * behind in dead sets (fractam_table.h): 24 bytes for up to 128 row ids of
 * one pseudo-block, against ~40 bytes and more per version.  On the
 * rightmost leaf (where a hot table's versions go) the dead sets already
 * there are merged with the new row ids, so a leaf that prunes again and
 * again keeps a few of them.  Readers see a dead set as
 * no version at all (a looked-up row id is not there), sequential scans
 * skip it, and VACUUM collects its row ids like dead versions' (whose
 * index entries it removes first) and then clears them.
 *
 * Only versions with a deleting or updating xmax are considered: an aborted
 * insertion (rare) waits for VACUUM, and checking the inserter of every
 * live version on every full leaf (a COPY or INSERT fills a leaf after
 * another) would cost a commit-log lookup per row.  A prune that would free
 * little is not done (ft_prune.c): the leaf splits, as it would have.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/heapam_xlog.h"
#include "am/fractam.h"
#include "am/table/fractam_table.h"
#include "lib/qunique.h"
#include "storage/procarray.h"

/* could the version be dead to everyone?  (cheap: header bits only) */
static inline bool
may_be_dead(HeapTupleHeader hdr)
{
	if ((hdr->t_infomask & HEAP_XMAX_INVALID) ||
		!TransactionIdIsValid(HeapTupleHeaderGetRawXmax(hdr)))
		return false;
	return !HEAP_XMAX_IS_LOCKED_ONLY(hdr->t_infomask);
}

static int
rowid_cmp(const void *a, const void *b)
{
	FtRowId		x = *(const FtRowId *) a;
	FtRowId		y = *(const FtRowId *) b;

	return (x > y) - (x < y);
}

static int
int_cmp(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/* a new item of a prune, to be put in key order */
typedef struct NewItem
{
	FtRowId		rowid;
	char	   *item;
	Size		len;
} NewItem;

static int
newitem_cmp(const void *a, const void *b)
{
	return rowid_cmp(&((const NewItem *) a)->rowid,
					 &((const NewItem *) b)->rowid);
}

/* Dead sets for the ascending, distinct row ids */
static int
build_deadsets(FtRowId *rowids, int n, char **items, Size *lens)
{
	int			nsets = 0;
	int			i = 0;

	while (i < n)
	{
		FtRowId		start = rowids[i];
		FtRowId		blockend = (start / FRACTAM_ROWS_PER_BLOCK + 1) *
		FRACTAM_ROWS_PER_BLOCK;
		FtRowId		limit = Min(start + FRACTAM_DEADSET_ROWS, blockend);
		char	   *item = palloc0(FRACTAM_DEADSET_SIZE);
		uint8	   *bits = (uint8 *) item + FRACTAM_ROWID_SIZE;

		fractam_rowid_key(start, item);
		for (; i < n && rowids[i] < limit; i++)
		{
			int			b = (int) (rowids[i] - start);

			bits[b / 8] |= (uint8) (1 << (b % 8));
		}
		items[nsets] = item;
		lens[nsets++] = FRACTAM_DEADSET_SIZE;
	}
	return nsets;
}

/*
 * FtTree's leaf_prune_hook of a table (see FtLeafPrune): the dead versions
 * (and, on the rightmost leaf, the old dead sets) go, dead sets for all
 * their row ids come in.  Since the leaf is rewritten anyway, the versions
 * visible to everyone settle on the way (table_format.c): their header
 * shrinks to two bytes.  The horizon covers them too, as heap's freezing
 * records' does: a hot-standby snapshot that does not see an inserter yet
 * must not read its row as frozen.
 */
bool
fractam_leaf_prune(FtTree *tree, char **items, Size *lens, int nitems,
				   bool rightmost, FtLeafPrune *prune)
{
	GlobalVisState *vistest = NULL;
	TransactionId latest = InvalidTransactionId;
	int		   *dead;
	FtRowId    *rowids;
	int			ndead = 0;
	int			nrowids = 0;
	int			nversions = 0;
	int			maxrowids = 0;
	char	  **newitems;
	Size	   *newlens;
	bool	   *gone;
	NewItem    *all;
	int			nsets;
	int			nsettled = 0;

	dead = palloc(nitems * sizeof(int));
	gone = palloc0(nitems * sizeof(bool));
	for (int i = 0; i < nitems; i++)
	{
		HeapTupleHeader hdr;
		FractamHeaderCopy hbuf;

		if (fractam_item_is_deadset(items[i], lens[i]))
		{
			/*
			 * Merged into the new dead sets only on the rightmost leaf: a
			 * leaf with a right sibling may hold a dead set from before a
			 * split whose row ids lie past its high key, and new sets are
			 * keyed by their first row id, which must stay in range.
			 */
			if (rightmost)
			{
				dead[ndead++] = i;
				gone[i] = true;
				maxrowids += FRACTAM_DEADSET_ROWS;
			}
			continue;
		}
		hdr = fractam_item_header(tree->rel, items[i], &hbuf);
		if (!may_be_dead(hdr))
			continue;
		if (vistest == NULL)
			vistest = GlobalVisTestFor(tree->rel);
		if (!fractam_tuple_surely_dead(hdr, vistest))
			continue;
		HeapTupleHeaderAdvanceLatestRemovedXid(hdr, &latest);
		dead[ndead++] = i;
		gone[i] = true;
		maxrowids++;
		nversions++;
	}
	/*
	 * With no dead version, settling alone may make the room, but not on
	 * the rightmost leaf: appends fill it, and settling each time it fills
	 * would log most of the leaf again and again.  Elsewhere a full leaf
	 * is one that takes a concurrent inserter's row ids, or an expansion
	 * for a change in place (ft_item_transform).
	 */
	if (nversions == 0 &&
		(rightmost || tree->owner == NULL ||
		 ((FractamTableCache *) tree->owner)->compact_forms <= 0))
	{
		pfree(dead);
		pfree(gone);
		return false;
	}
	if (vistest == NULL)
		vistest = GlobalVisTestFor(tree->rel);

	/* the row ids of the dropped versions and of the old dead sets */
	rowids = palloc(maxrowids * sizeof(FtRowId));
	for (int j = 0; j < ndead; j++)
	{
		const char *item = items[dead[j]];

		if (fractam_item_is_deadset(item, lens[dead[j]]))
		{
			FtRowId		base = fractam_item_rowid(item);

			for (int b = 0; b < FRACTAM_DEADSET_ROWS; b++)
				if (fractam_deadset_has(item, b))
					rowids[nrowids++] = base + b;
		}
		else
			rowids[nrowids++] = fractam_item_rowid(item);
	}
	qsort(rowids, nrowids, sizeof(FtRowId), rowid_cmp);
	nrowids = qunique(rowids, nrowids, sizeof(FtRowId), rowid_cmp);

	newitems = palloc((nrowids + nitems) * sizeof(char *));
	newlens = palloc((nrowids + nitems) * sizeof(Size));
	nsets = build_deadsets(rowids, nrowids, newitems, newlens);
	pfree(rowids);

	/*
	 * The versions that settle: replaced by their settled form.  (Whether
	 * the tree takes that form is known from the insert that filled the
	 * leaf: the metapage is not read under the leaf's lock.)
	 */
	if (tree->owner &&
		((FractamTableCache *) tree->owner)->compact_forms > 0)
	{
		for (int i = 0; i < nitems; i++)
		{
			TransactionId xmin;
			Size		slen;

			if (gone[i] ||
				!fractam_item_may_settle(items[i], lens[i], vistest, &xmin))
				continue;
			newitems[nsets + nsettled] = fractam_item_settle(items[i], lens[i],
															  &slen);
			newlens[nsets + nsettled++] = slen;
			dead[ndead++] = i;
			if (TransactionIdIsNormal(xmin) &&
				(!TransactionIdIsValid(latest) ||
				 TransactionIdFollows(xmin, latest)))
				latest = xmin;
		}
		qsort(dead, ndead, sizeof(int), int_cmp);
	}
	if (ndead == 0)
	{
		pfree(dead);
		pfree(gone);
		pfree(newitems);
		pfree(newlens);
		return false;
	}

	/* new items in key order: dead sets and settled versions interleave */
	all = palloc((nsets + nsettled) * sizeof(NewItem));
	for (int k = 0; k < nsets + nsettled; k++)
	{
		all[k].rowid = fractam_item_rowid(newitems[k]);
		all[k].item = newitems[k];
		all[k].len = newlens[k];
	}
	qsort(all, nsets + nsettled, sizeof(NewItem), newitem_cmp);
	for (int k = 0; k < nsets + nsettled; k++)
	{
		newitems[k] = all[k].item;
		newlens[k] = all[k].len;
	}
	pfree(all);
	pfree(gone);

	prune->nnew = nsets + nsettled;
	prune->dead = dead;
	prune->ndead = ndead;
	prune->newitems = newitems;
	prune->newlens = newlens;
	prune->horizon = TransactionIdIsValid(latest) ?
		fractam_full_xid(latest) : InvalidFullTransactionId;
	return true;
}
