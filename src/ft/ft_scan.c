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
 * The merge is lazy: the scan keeps a cursor in the leaf copy and in each
 * copied run of messages and produces one item at a time, starting at the
 * sought key, so a point lookup merges the one or two items it returns,
 * not the whole leaf.
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
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct FtScanData
{
	struct ScanHolder *holder;	/* see ft_scan_begin */
	FtTree	   *tree;
	bool		forward;
	bool		positioned;
	bool		eof;
	bool		keep_pins;		/* hold pins while returning a leaf's items */
	FtLeafCopiedFn leaf_copied; /* or NULL: see ft_scan_set_leaf_callback */
	void	   *leaf_copied_arg;
	bool		parts;			/* see ft_scan_set_parts */
	bool		parts_now;		/* ... and not run out of a part yet */
	bool		bulk;			/* see ft_scan_set_bulk */

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

	/* current leaf (decoded, if compressed) */
	FtViewBuf	lcopy;
	Buffer		lpin;
	BlockNumber lblkno;			/* the leaf lcopy is of */
	BlockNumber lright;
	char	   *lhigh;			/* in lcopy; NULL = +inf */
	Size		lhighlen;
	char	   *llow;			/* palloc'd; NULL = -inf */
	Size		llowlen;
	bool		lcut;			/* lcopy is a part of a compressed leaf that
								 * ends before the leaf: lhigh is the next
								 * part's first entry (palloc'd) */
	bool		lcut_low;		/* ... that starts after the leaf's start:
								 * llow is its first entry */

	/*
	 * The merge cursor over the leaf copy and the copied messages in the
	 * leaf's range (runs[0] the upper node's, the newer): the next position
	 * in scan direction in each; see merge_next.
	 */
	int			lpos;
	int			lfirst;			/* the leaf's first data offset */
	int			lmax;			/* and its last */
	uint64		applied;		/* the leaf's ft_msn */
	FtMsgRun	runs[2];
	int			rpos[2];
	int			nruns;
	/* the first message in scan direction among the runs' next ones */
	int			mrun;			/* its run, or -1: no message left */
	char	   *mkey;
	Size		mlen;
} FtScanData;

/*
 * A scan's state is large (three page buffers, one of them a decoded
 * leaf's), and most scans are lookups that end a few microseconds after
 * they begin: allocating it each time was a malloc and a free of its own.
 * The backend keeps the state of the last scan that ended for the next one
 * (spare_scan, in TopMemoryContext).  A scan that takes it registers, in the
 * memory context it was begun in, a holder whose callback gives the state
 * back if that context goes away first (an error, or a caller that never
 * ends its scan), so that it is never lost.  A context's callbacks cannot
 * be unregistered, so the holder of the scan that ended last is kept for
 * the next scan begun in the same context (idle_holder): scans begun and
 * ended one after the other, thousands per statement, do not pile up
 * holders.
 */
typedef struct ScanHolder
{
	MemoryContextCallback cb;
	MemoryContext cxt;			/* where it is registered */
	FtScan		scan;			/* NULL once the scan has ended */
} ScanHolder;

static FtScan spare_scan = NULL;
static ScanHolder *idle_holder = NULL;

static void
give_back(FtScan scan)
{
	if (spare_scan == NULL)
		spare_scan = scan;
	else
		pfree(scan);
}

static void
holder_gone(void *arg)
{
	ScanHolder *holder = (ScanHolder *) arg;

	if (holder->scan)
		give_back(holder->scan);
	holder->scan = NULL;
	if (idle_holder == holder)
		idle_holder = NULL;
}

FtScan
ft_scan_begin(FtTree *tree)
{
	FtScan		scan;
	ScanHolder *holder;

	if (idle_holder && idle_holder->cxt == CurrentMemoryContext)
	{
		holder = idle_holder;
		idle_holder = NULL;
	}
	else
	{
		holder = palloc(sizeof(ScanHolder));
		holder->cxt = CurrentMemoryContext;
		holder->cb.func = holder_gone;
		holder->cb.arg = holder;
		MemoryContextRegisterResetCallback(CurrentMemoryContext, &holder->cb);
	}

	/* not palloc0: the three page buffers need no zeroing */
	if (spare_scan)
	{
		scan = spare_scan;
		spare_scan = NULL;
	}
	else
		scan = MemoryContextAlloc(TopMemoryContext, sizeof(FtScanData));
	holder->scan = scan;

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
	scan->nruns = 0;
	scan->mrun = -1;
	scan->lpos = 0;
	scan->lfirst = 1;
	scan->lmax = 0;

	scan->holder = holder;
	scan->tree = tree;
	scan->bpin = InvalidBuffer;
	scan->b2pin = InvalidBuffer;
	scan->lpin = InvalidBuffer;
	scan->lblkno = InvalidBlockNumber;
	scan->keep_pins = true;
	scan->parts = false;
	scan->parts_now = false;
	scan->bulk = false;
	scan->lcut = false;
	scan->lcut_low = false;
	return scan;
}

/*
 * Whether the scan copies, of a compressed leaf whose frame is in parts
 * (FT_FRAME_LAYOUT_PARTS), only the part where it starts, decoded
 * (ft_leaf_view_part): a point lookup then decodes a fraction of the leaf.
 * A scan that runs out of its part descends again to where it stopped and
 * copies whole leaves from then on, as it does without parts; a wide frame
 * (FT_FRAME_LAYOUT_WIDE_*) it always copies part by part.
 */
void
ft_scan_set_parts(FtScan scan, bool parts)
{
	scan->parts = parts;
	scan->parts_now = parts;
}

/*
 * Whether the scan reads leaf after leaf, once each (a table's sequential
 * scan): then a compressed leaf that is not in the backend's cache of
 * decoded leaves is decoded straight into the scan's copy and not cached
 * (ft_leaf_copy_uncached), so that the scan neither copies each leaf
 * twice nor pushes out of the cache the leaves that lookups come back to,
 * as a ring keeps a large sequential scan from taking all of shared
 * buffers.
 */
void
ft_scan_set_bulk(FtScan scan, bool bulk)
{
	scan->bulk = bulk;
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

/* the current copy is no part of a leaf (any more) */
static void
forget_cut(FtScan scan)
{
	if (scan->lcut && scan->lhigh)
		pfree(scan->lhigh);
	if (scan->lcut)
		scan->lhigh = NULL;
	scan->lcut = false;
	scan->lcut_low = false;
}

/* Drop pins and forget the position */
/*
 * The leaf that holds item, an item the scan returned last, if it came from
 * the leaf (not from a buffered message): a hint for removing it
 * (ft_prune_items), good until the scan moves on.
 */
BlockNumber
ft_scan_item_leaf(FtScan scan, const char *item)
{
	if (item >= scan->lcopy.data && item < scan->lcopy.data + FT_VIEW_SIZE)
		return scan->lblkno;
	return InvalidBlockNumber;
}

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
	forget_cut(scan);
	scan->parts_now = scan->parts;
	scan->nruns = 0;
	scan->mrun = -1;
	scan->lfirst = 1;
	scan->lmax = 0;
}

void
ft_scan_end(FtScan scan)
{
	ft_scan_release(scan);
	scan->holder->scan = NULL;
	idle_holder = scan->holder;
	give_back(scan);
}

/*
 * Copy the part of the compressed leaf in buf (share-locked) where the
 * cursor will start at key (see ft_leaf_view_part) into scan->lcopy; with
 * the part's bounds where it ends before the leaf (scan->lcut, lhigh) or
 * starts after it (returned, palloc'd, with *lowlen; else NULL).  Entries
 * are distinct, so an entry bounds a part exactly.
 */
static char *
copy_part(FtScan scan, Buffer buf, const char *key, Size keylen,
		  Size *lowlen)
{
	const char *low;
	const char *high;
	Size		highlen;
	Page		view = ft_leaf_view_part(scan->tree, buf, key, keylen,
										 scan->forward, &low, lowlen,
										 &high, &highlen);
	char	   *lowcopy = NULL;

	ft_view_copy(scan->lcopy.data, view, BufferGetPage(buf));
	if (high)
	{
		scan->lhigh = palloc(highlen);
		memcpy(scan->lhigh, high, highlen);
		scan->lhighlen = highlen;
		scan->lcut = true;
	}
	if (low)
	{
		lowcopy = palloc(*lowlen);
		memcpy(lowcopy, low, *lowlen);
	}
	return lowcopy;
}

/*
 * Adopt a descent result: the leaf (share-locked) and, if the tree has
 * buffer levels, the pinned buffer nodes whose copies are in scan->bcopy
 * and scan->b2copy.  key is where the cursor will be put (see
 * position_cursor), for a scan that copies parts of compressed leaves.
 */
static void
load_leaf(FtScan scan, FtDescent *d, const char *key, Size keylen)
{
	FtTree	   *tree = scan->tree;
	Page		lpage;
	FtPageOpaque lopaque;
	char	   *partlow = NULL;
	Size		partlowlen = 0;
	int			r;

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

	/* copy the leaf (or a part of it) and keep at most a pin */
	forget_cut(scan);
	/* a wide frame does not fit lcopy whole: always a part of it */
	if ((scan->parts_now && ft_leaf_is_compressed(BufferGetPage(d->buf))) ||
		ft_leaf_is_wide(BufferGetPage(d->buf)))
		partlow = copy_part(scan, d->buf, key, keylen, &partlowlen);
	else if (scan->bulk)
		ft_leaf_copy_uncached(tree, d->buf, scan->lcopy.data);
	else
		ft_leaf_copy(tree, d->buf, scan->lcopy.data);
	if (scan->leaf_copied)
		report_leaf_copied(scan);
	LockBuffer(d->buf, BUFFER_LOCK_UNLOCK);
	if (BufferIsValid(scan->lpin))
		ReleaseBuffer(scan->lpin);
	scan->lpin = d->buf;
	scan->lblkno = BufferGetBlockNumber(d->buf);
	if (!scan->keep_pins)
		drop_pins(scan);

	lpage = scan->lcopy.data;
	lopaque = FtPageGetOpaque(lpage);
	scan->lright = lopaque->ft_right;
	if (scan->lcut)
		;						/* lhigh bounds the part */
	else if (FtPageIsRightmost(lopaque))
		scan->lhigh = NULL;
	else
		scan->lhigh = ft_page_item(lpage, FT_HIKEY, &scan->lhighlen);
	if (scan->llow)
		pfree(scan->llow);
	scan->lcut_low = (partlow != NULL);
	if (partlow)
	{
		/* the part starts inside the leaf: its first entry bounds it */
		if (d->lowkey)
			pfree(d->lowkey);
		scan->llow = partlow;
		scan->llowlen = partlowlen;
	}
	else
	{
		scan->llow = d->lowkey;
		scan->llowlen = d->lowkeylen;
	}
	d->lowkey = NULL;

	scan->lfirst = FtFirstDataOffset(lopaque);
	scan->lmax = PageGetMaxOffsetNumber(lpage);
	scan->applied = lopaque->ft_msn;

	/*
	 * The copied messages that fall into this leaf's range: the upper
	 * node's (newer) first, then the lower node's.
	 */
	scan->nruns = 0;
	if (scan->have_b2 && ft_node_has_messages(scan->b2copy.data))
		scan->runs[scan->nruns++].page = scan->b2copy.data;
	if (scan->have_b && ft_node_has_messages(scan->bcopy.data))
		scan->runs[scan->nruns++].page = scan->bcopy.data;
	for (r = 0; r < scan->nruns; r++)
	{
		FtMsgRun   *run = &scan->runs[r];
		Page		bpage = run->page;

		if (scan->llow)
			run->first = ft_msg_bound(tree, bpage, scan->llow, scan->llowlen, false);
		else
			run->first = FtFirstMsgOffset(FtPageGetOpaque(bpage));
		if (scan->lhigh)
			run->end = ft_msg_bound(tree, bpage, scan->lhigh, scan->lhighlen, false);
		else
			run->end = PageGetMaxOffsetNumber(bpage) + 1;
		if (run->end < run->first)
			run->end = run->first;
	}
}

/* does run r have a message left in scan direction? */
static inline bool
run_has_more(FtScan scan, int r)
{
	return scan->rpos[r] >= scan->runs[r].first &&
		scan->rpos[r] < scan->runs[r].end;
}

/*
 * Find the first message in scan direction among the runs' next ones
 * (scan->mrun, mkey, mlen): one comparison when both runs have one.  Done
 * whenever a run moves, so that each leaf item costs one comparison, with
 * that message.
 */
static void
pick_message(FtScan scan)
{
	int			r;

	scan->mrun = -1;
	for (r = 0; r < scan->nruns; r++)
	{
		char	   *key;
		Size		len;

		if (!run_has_more(scan, r))
			continue;
		(void) ft_msg(scan->runs[r].page, scan->rpos[r], &key, &len);
		if (scan->mrun < 0 ||
			(scan->forward ? 1 : -1) *
			ft_cmp(scan->tree, key, len, scan->mkey, scan->mlen) < 0)
		{
			scan->mrun = r;
			scan->mkey = key;
			scan->mlen = len;
		}
	}
}

/*
 * Put the merge cursor on the first item >= key (forward) or the last
 * item < key (backward) of the current leaf; key NULL: on the leaf's first
 * (forward) or last (backward) item.
 */
static void
position_cursor(FtScan scan, const char *key, Size keylen)
{
	FtTree	   *tree = scan->tree;
	bool		found;
	int			lb;
	int			r;

	if (key == NULL)
	{
		scan->lpos = scan->forward ? scan->lfirst : scan->lmax;
		for (r = 0; r < scan->nruns; r++)
			scan->rpos[r] = scan->forward ? scan->runs[r].first :
				scan->runs[r].end - 1;
		pick_message(scan);
		return;
	}

	lb = ft_leaf_lower_bound(tree, scan->lcopy.data, key, keylen, &found);
	scan->lpos = scan->forward ? lb : lb - 1;
	for (r = 0; r < scan->nruns; r++)
	{
		FtMsgRun   *run = &scan->runs[r];
		int			mb = ft_msg_bound(tree, run->page, key, keylen, false);

		mb = Max(mb, run->first);
		mb = Min(mb, run->end);
		scan->rpos[r] = scan->forward ? mb : mb - 1;
	}
	pick_message(scan);
}

/*
 * The next item of the merge in scan direction, false when the leaf's range
 * is done.  Each key's newest message decides, if the leaf has not applied
 * it yet (its MSN is above the leaf's ft_msn): INSERT returns the message's
 * item, DELETE hides the key.  Otherwise the leaf's item, if any, stands.
 * A message seen in both runs (it moved down between the two copies) keeps
 * its MSN, so seeing it twice changes nothing.
 */
static bool
merge_next(FtScan scan, const char **item, Size *len)
{
	FtTree	   *tree = scan->tree;
	int			step = scan->forward ? 1 : -1;

	for (;;)
	{
		bool		leaf_has = (scan->lpos >= scan->lfirst &&
								scan->lpos <= scan->lmax);
		char	   *litem = NULL;
		Size		llen = 0;
		char	   *key;
		Size		keylen;
		char	   *newest = NULL;
		Size		newestlen = 0;
		uint64		newestmsn = scan->applied;
		int			newesttype = 0;
		int			c;
		int			r;

		if (leaf_has)
			litem = ft_page_item(scan->lcopy.data, scan->lpos, &llen);
		if (scan->mrun < 0)
		{
			/* no message left: the leaf's items as they are */
			if (!leaf_has)
				return false;
			scan->lpos += step;
			*item = litem;
			*len = llen;
			return true;
		}
		c = leaf_has ? step * ft_cmp(tree, litem, llen,
									 scan->mkey, scan->mlen) : 1;
		if (c < 0)
		{
			scan->lpos += step;
			*item = litem;
			*len = llen;
			return true;
		}

		/* consume the messages of that key, keeping the newest not applied */
		key = scan->mkey;
		keylen = scan->mlen;
		for (r = 0; r < scan->nruns; r++)
		{
			while (run_has_more(scan, r))
			{
				char	   *mkey;
				Size		mlen;
				FtMsgHeader *hdr = ft_msg(scan->runs[r].page, scan->rpos[r],
										  &mkey, &mlen);

				if (mkey != key && ft_cmp(tree, mkey, mlen, key, keylen) != 0)
					break;
				if (FtMsgMsn(hdr) > newestmsn)
				{
					newestmsn = FtMsgMsn(hdr);
					newesttype = FtMsgType(hdr);
					newest = mkey;
					newestlen = mlen;
				}
				scan->rpos[r] += step;
			}
		}
		pick_message(scan);
		if (c == 0)
			scan->lpos += step; /* the message replaces or hides it */

		if (newesttype == FT_MSG_INSERT)
		{
			*item = newest;
			*len = newestlen;
			return true;
		}
		if (newesttype == 0 && c == 0)
		{
			*item = litem;
			*len = llen;
			return true;
		}
		/* deleted, or only messages the leaf already holds and no item */
	}
}

/*
 * Descend to the leaf where the cursor will be put at key (see
 * position_cursor; NULL: the tree's first leaf forward, its last backward)
 * and load it.
 */
static void
descend_and_load(FtScan scan, const char *key, Size len)
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

	/* forward: the leaf holding key; backward: the one holding items < key */
	if (scan->forward)
		ft_descend_copy(scan->tree, key ? key : "", key ? len : 0, false, 0,
						BUFFER_LOCK_SHARE, &d, scan->bcopy.data,
						scan->b2copy.data, false);
	else
		ft_descend_copy(scan->tree, key, len, true, 0, BUFFER_LOCK_SHARE, &d,
						scan->bcopy.data, scan->b2copy.data, false);
	if (d.parentlow)
		pfree(d.parentlow);
	load_leaf(scan, &d, key, len);
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

	descend_and_load(scan, key, keylen);
	position_cursor(scan, key, keylen);
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

		/*
		 * A part that ran out ends inside its leaf: the scan goes on in
		 * that leaf, copied whole from now on, as are the leaves after it.
		 */
		if (scan->lcut)
		{
			scan->parts_now = false;
			descend_and_load(scan, boundary, blen);
		}
		else if (scan->have_b &&
			(scan->bhigh == NULL ||
			 ft_cmp(tree, boundary, blen, scan->bhigh, scan->bhighlen) < 0))
		{
			/* same buffer node: follow the right link */
			FtDescent	d;

			memset(&d, 0, sizeof(d));
			d.buf = ft_getleaf(tree, scan->lright, BUFFER_LOCK_SHARE);
			if (FtPageIsDeleted(FtPageGetOpaque(BufferGetPage(d.buf))))
			{
				/*
				 * Its range went to its right sibling, which may sit under
				 * another buffer node (VACUUM's delete_empty_node), whose
				 * messages our copy lacks: descend again.
				 */
				UnlockReleaseBuffer(d.buf);
				descend_and_load(scan, boundary, blen);
			}
			else
			{
				d.parent = InvalidBuffer;
				d.parent2 = InvalidBuffer;
				d.lowkey = palloc(blen);
				memcpy(d.lowkey, boundary, blen);
				d.lowkeylen = blen;
				load_leaf(scan, &d, boundary, blen);
			}
		}
		else
		{
			/* next buffer node (or no buffer level): descend again */
			descend_and_load(scan, boundary, blen);
		}

		/*
		 * Only items from where we left off: VACUUM may have merged the
		 * leaf we copied into the one on its right since (compress_leaves),
		 * which then holds its items too.
		 */
		position_cursor(scan, boundary, blen);
		pfree(boundary);
		return true;
	}
	else
	{
		char	   *boundary;
		Size		blen;

		if (scan->llow == NULL)
			return false;
		if (scan->lcut_low)
			scan->parts_now = false;	/* as forward */
		boundary = scan->llow;
		blen = scan->llowlen;
		scan->llow = NULL;
		descend_and_load(scan, boundary, blen);
		/* only items below where we came from */
		position_cursor(scan, boundary, blen);
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
		if (merge_next(scan, item, len))
			return true;
		if (!step_leaf(scan))
		{
			scan->eof = true;
			return false;
		}
	}
}
