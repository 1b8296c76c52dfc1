/*-------------------------------------------------------------------------
 *
 * ft_scan.c
 *	  Ordered scans, forward and backward, merging buffered messages.
 *
 * Readers never modify shared pages.  A scan copies the buffer node above
 * its leaf (under a share lock) BEFORE it reads the leaf, then merges the
 * copied messages for the leaf's key range into the leaf's items in
 * backend memory, ignoring messages whose MSN is not above the leaf's
 * ft_msn (a flush that happened in between already put them in the leaf).
 * Copying the buffer node first is what makes this safe: a message can
 * move from the node to the leaf only after our copy, so it is found in
 * one place or the other (see README).
 *
 * The scan keeps its buffer node and its current leaf pinned while it
 * returns their contents, so VACUUM (which takes cleanup locks) cannot
 * remove entries under it and let their TIDs be recycled.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"

typedef struct FtScanData
{
	FtTree	   *tree;
	bool		forward;
	bool		positioned;
	bool		eof;
	bool		keep_pins;		/* hold pins while returning a leaf's items */
	FtLeafCopiedFn leaf_copied; /* or NULL: see ft_scan_set_leaf_callback */
	void	   *leaf_copied_arg;

	/* copy of the upper (level-2) buffer node above it, if any */
	PGAlignedBlock b2copy;
	bool		have_b2;
	Buffer		b2pin;

	/* copy of the buffer node above the current leaf */
	PGAlignedBlock bcopy;
	bool		have_b;
	Buffer		bpin;
	char	   *bhigh;			/* its high key, in bcopy; NULL = +inf */
	Size		bhighlen;

	/* current leaf */
	PGAlignedBlock lcopy;
	Buffer		lpin;
	BlockNumber lright;
	char	   *lhigh;			/* in lcopy; NULL = +inf */
	Size		lhighlen;
	char	   *llow;			/* palloc'd; NULL = -inf */
	Size		llowlen;

	/* merged items of the current leaf */
	char	  **items;
	Size	   *lens;
	int			nitems;
	int			pos;			/* next item to return */
} FtScanData;

FtScan
ft_scan_begin(FtTree *tree)
{
	/* not palloc0: the three page buffers need no zeroing */
	FtScan		scan = palloc(sizeof(FtScanData));

	memset(scan, 0, offsetof(FtScanData, b2copy));
	scan->have_b2 = false;
	scan->have_b = false;
	scan->bhigh = NULL;
	scan->bhighlen = 0;
	scan->lright = InvalidBlockNumber;
	scan->lhigh = NULL;
	scan->lhighlen = 0;
	scan->llow = NULL;
	scan->llowlen = 0;
	scan->items = NULL;
	scan->lens = NULL;
	scan->nitems = 0;
	scan->pos = 0;

	scan->tree = tree;
	scan->bpin = InvalidBuffer;
	scan->b2pin = InvalidBuffer;
	scan->lpin = InvalidBuffer;
	scan->keep_pins = true;
	return scan;
}

/*
 * Whether the scan keeps its leaf and buffer node pinned while it returns
 * their (copied) contents.  The pins make VACUUM's cleanup locks wait, which
 * index-only scans and non-MVCC snapshots need (an entry's TID must not be
 * recycled under them); an MVCC scan that visits the table can never see a
 * tuple a recycled TID now points to, so it drops them at once, as nbtree
 * does, and does not hold VACUUM up.
 */
void
ft_scan_set_keep_pins(FtScan scan, bool keep)
{
	scan->keep_pins = keep;
}

/* Tell the leaf callback about the copy in scan->lcopy */
static void
report_leaf_copied(FtScan scan)
{
	Page		page = scan->lcopy.data;
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber lo = FtFirstDataOffset(opaque);
	OffsetNumber hi = PageGetMaxOffsetNumber(page);
	Size		firstlen;
	Size		lastlen;
	char	   *first;
	char	   *last;

	if (hi < lo)
	{
		scan->leaf_copied(scan->leaf_copied_arg, NULL, 0, NULL, 0);
		return;
	}
	first = ft_page_item(page, lo, &firstlen);
	last = ft_page_item(page, hi, &lastlen);
	scan->leaf_copied(scan->leaf_copied_arg, first, firstlen, last, lastlen);
}

/*
 * Call fn(arg, first, last) each time the scan has copied a leaf (its first
 * and last item), while it still
 * holds the leaf's share lock: what fn reads of other state that writers
 * change only under the leaf's exclusive lock (a table's visibility-map
 * bits) is then as current as the copy.
 */
void
ft_scan_set_leaf_callback(FtScan scan, FtLeafCopiedFn fn, void *arg)
{
	scan->leaf_copied = fn;
	scan->leaf_copied_arg = arg;
}

static void
drop_pins(FtScan scan)
{
	if (BufferIsValid(scan->lpin))
		ReleaseBuffer(scan->lpin);
	if (BufferIsValid(scan->bpin))
		ReleaseBuffer(scan->bpin);
	if (BufferIsValid(scan->b2pin))
		ReleaseBuffer(scan->b2pin);
	scan->lpin = InvalidBuffer;
	scan->bpin = InvalidBuffer;
	scan->b2pin = InvalidBuffer;
}

/* Drop pins and forget the position */
void
ft_scan_release(FtScan scan)
{
	drop_pins(scan);
	scan->have_b = false;
	scan->have_b2 = false;
	scan->positioned = false;
	scan->eof = false;
	if (scan->llow)
		pfree(scan->llow);
	scan->llow = NULL;
	if (scan->items)
	{
		pfree(scan->items);
		pfree(scan->lens);
	}
	scan->items = NULL;
	scan->lens = NULL;
	scan->nitems = 0;
}

void
ft_scan_end(FtScan scan)
{
	ft_scan_release(scan);
	pfree(scan);
}

/*
 * Adopt a descent result: the leaf (share-locked) and, if the tree has
 * buffer levels, the pinned buffer nodes whose copies are in scan->bcopy
 * and scan->b2copy.
 */
static void
load_leaf(FtScan scan, FtDescent *d)
{
	FtTree	   *tree = scan->tree;
	Page		lpage;
	FtPageOpaque lopaque;
	FtMsgRun	runs[2];
	int			nruns = 0;
	int			maxitems;
	int			r;
	uint64		maxmsn;

	if (BufferIsValid(d->parent2))
	{
		if (BufferIsValid(scan->b2pin))
			ReleaseBuffer(scan->b2pin);
		scan->b2pin = d->parent2;
		scan->have_b2 = true;
	}
	if (BufferIsValid(d->parent))
	{
		FtPageOpaque bop = FtPageGetOpaque(scan->bcopy.data);

		if (BufferIsValid(scan->bpin))
			ReleaseBuffer(scan->bpin);
		scan->bpin = d->parent;
		scan->have_b = true;
		if (FtPageIsRightmost(bop))
			scan->bhigh = NULL;
		else
			scan->bhigh = ft_page_item(scan->bcopy.data, FT_HIKEY, &scan->bhighlen);
	}
	else if (!scan->have_b && BufferIsValid(scan->bpin))
	{
		ReleaseBuffer(scan->bpin);
		scan->bpin = InvalidBuffer;
	}

	/* copy the leaf and keep at most a pin */
	ft_copy_page(scan->lcopy.data, BufferGetPage(d->buf));
	if (scan->leaf_copied)
		report_leaf_copied(scan);
	LockBuffer(d->buf, BUFFER_LOCK_UNLOCK);
	if (BufferIsValid(scan->lpin))
		ReleaseBuffer(scan->lpin);
	scan->lpin = d->buf;
	if (!scan->keep_pins)
		drop_pins(scan);

	lpage = scan->lcopy.data;
	lopaque = FtPageGetOpaque(lpage);
	scan->lright = lopaque->ft_right;
	if (FtPageIsRightmost(lopaque))
		scan->lhigh = NULL;
	else
		scan->lhigh = ft_page_item(lpage, FT_HIKEY, &scan->lhighlen);
	if (scan->llow)
		pfree(scan->llow);
	scan->llow = d->lowkey;
	scan->llowlen = d->lowkeylen;
	d->lowkey = NULL;

	/*
	 * The copied messages that fall into this leaf's range: the upper
	 * node's (newer) first, then the lower node's.
	 */
	if (scan->have_b2)
		runs[nruns++].page = scan->b2copy.data;
	if (scan->have_b)
		runs[nruns++].page = scan->bcopy.data;
	maxitems = PageGetMaxOffsetNumber(lpage) + 1;
	for (r = 0; r < nruns; r++)
	{
		Page		bpage = runs[r].page;

		if (scan->llow)
			runs[r].first = ft_msg_bound(tree, bpage, scan->llow, scan->llowlen, false);
		else
			runs[r].first = FtFirstMsgOffset(FtPageGetOpaque(bpage));
		if (scan->lhigh)
			runs[r].end = ft_msg_bound(tree, bpage, scan->lhigh, scan->lhighlen, false);
		else
			runs[r].end = PageGetMaxOffsetNumber(bpage) + 1;
		if (runs[r].end < runs[r].first)
			runs[r].end = runs[r].first;
		maxitems += runs[r].end - runs[r].first;
	}

	if (scan->items)
	{
		pfree(scan->items);
		pfree(scan->lens);
	}
	scan->items = palloc(sizeof(char *) * maxitems);
	scan->lens = palloc(sizeof(Size) * maxitems);
	scan->nitems = ft_merge_leaf(tree, lpage, runs, nruns, NULL, 0,
								 scan->items, scan->lens, &maxmsn);
}

static void
descend_and_load(FtScan scan, const char *key, Size len, bool strict)
{
	FtDescent	d;

	/*
	 * Drop our pins first: VACUUM may hold a buffer node's cleanup lock
	 * while waiting for the pins on its children to go away, so we must not
	 * wait for a buffer-node lock while pinning a leaf.
	 */
	drop_pins(scan);
	scan->have_b = false;
	scan->have_b2 = false;

	ft_descend_copy(scan->tree, key, len, strict, 0, BUFFER_LOCK_SHARE, &d,
					scan->bcopy.data, scan->b2copy.data);
	load_leaf(scan, &d);
}

/* the first merged item of the current leaf >= key (nitems if none) */
static int
merged_lower_bound(FtScan scan, const char *key, Size keylen)
{
	int			lo = 0;
	int			hi = scan->nitems;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (ft_cmp(scan->tree, scan->items[mid], scan->lens[mid],
				   key, keylen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Position the scan.  forward: before the first item >= key; backward:
 * at the last item < key.  key NULL: the start (forward) or end (backward)
 * of the tree.
 */
void
ft_scan_seek(FtScan scan, const char *key, Size keylen, bool forward)
{
	ft_scan_release(scan);
	scan->forward = forward;
	scan->positioned = true;

	if (forward)
	{
		descend_and_load(scan, key ? key : "", key ? keylen : 0, false);
		scan->pos = key ? merged_lower_bound(scan, key, keylen) : 0;
	}
	else
	{
		descend_and_load(scan, key, keylen, true);
		scan->pos = (key ? merged_lower_bound(scan, key, keylen) :
					 scan->nitems) - 1;
	}
}

/*
 * Move to the next leaf in scan direction; false at the end of the tree.
 */
static bool
step_leaf(FtScan scan)
{
	FtTree	   *tree = scan->tree;

	CHECK_FOR_INTERRUPTS();
	if (scan->forward)
	{
		char	   *boundary;
		Size		blen;

		if (scan->lhigh == NULL)
			return false;
		boundary = palloc(scan->lhighlen);
		memcpy(boundary, scan->lhigh, scan->lhighlen);
		blen = scan->lhighlen;

		if (scan->have_b &&
			(scan->bhigh == NULL ||
			 ft_cmp(tree, boundary, blen, scan->bhigh, scan->bhighlen) < 0))
		{
			/* same buffer node: follow the right link */
			FtDescent	d;

			memset(&d, 0, sizeof(d));
			d.buf = ft_getbuf(tree, scan->lright, BUFFER_LOCK_SHARE);
			if (FtPageIsDeleted(FtPageGetOpaque(BufferGetPage(d.buf))))
			{
				/*
				 * Its range went to its right sibling, which may sit under
				 * another buffer node (VACUUM's delete_empty_node), whose
				 * messages our copy lacks: descend again.
				 */
				UnlockReleaseBuffer(d.buf);
				descend_and_load(scan, boundary, blen, false);
				pfree(boundary);
			}
			else
			{
				d.parent = InvalidBuffer;
				d.parent2 = InvalidBuffer;
				d.lowkey = boundary;
				d.lowkeylen = blen;
				load_leaf(scan, &d);
			}
		}
		else
		{
			/* next buffer node (or no buffer level): descend again */
			descend_and_load(scan, boundary, blen, false);
			pfree(boundary);
		}
		scan->pos = 0;
		return true;
	}
	else
	{
		char	   *boundary;
		Size		blen;
		int			i;

		if (scan->llow == NULL)
			return false;
		boundary = scan->llow;
		blen = scan->llowlen;
		scan->llow = NULL;
		descend_and_load(scan, boundary, blen, true);
		/* keep only items below where we came from */
		for (i = scan->nitems; i > 0; i--)
		{
			if (ft_cmp(tree, scan->items[i - 1], scan->lens[i - 1],
					   boundary, blen) < 0)
				break;
		}
		scan->nitems = i;
		scan->pos = scan->nitems - 1;
		pfree(boundary);
		return true;
	}
}

/*
 * Return the next item in scan direction.  The pointer stays valid until
 * the next call.
 */
bool
ft_scan_next(FtScan scan, const char **item, Size *len)
{
	if (!scan->positioned || scan->eof)
		return false;
	for (;;)
	{
		if (scan->forward && scan->pos < scan->nitems)
		{
			*item = scan->items[scan->pos];
			*len = scan->lens[scan->pos];
			scan->pos++;
			return true;
		}
		if (!scan->forward && scan->pos >= 0 && scan->nitems > 0)
		{
			*item = scan->items[scan->pos];
			*len = scan->lens[scan->pos];
			scan->pos--;
			return true;
		}
		if (!step_leaf(scan))
		{
			scan->eof = true;
			return false;
		}
	}
}
