/*-------------------------------------------------------------------------
 *
 * ft_page.c
 *	  The on-disk page format: initializing pages and the page transforms
 *	  that the do side and redo share (so that redo equals do).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "port/pg_crc32c.h"

/* pg_filedump-style tools find FT_PAGE_ID in a page's last two bytes */
StaticAssertDecl(offsetof(FtPageOpaqueData, ft_page_id) + sizeof(uint16) ==
				 MAXALIGN(sizeof(FtPageOpaqueData)),
				 "ft_page_id must end the special space");
/* sql/fractam_buffers.sql finds leaves by ft_flags at this offset */
StaticAssertDecl(offsetof(FtPageOpaqueData, ft_flags) == 28,
				 "ft_flags moved: update fractam_buffers");

/*
 * Initialize an empty page of the given kind.
 */
void
ft_page_init(Page page, uint16 flags, uint16 level)
{
	FtPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(FtPageOpaqueData));
	opaque = FtPageGetOpaque(page);
	memset(opaque, 0, sizeof(FtPageOpaqueData));
	opaque->ft_right = InvalidBlockNumber;
	opaque->ft_level = level;
	opaque->ft_flags = flags;
	opaque->ft_page_id = FT_PAGE_ID;
}

/*
 * Add an item at a given offset; the caller has checked that it fits.
 * Used in critical sections and by redo, hence PANIC on failure.
 */
void
ft_page_add_item(Page page, const char *item, Size len, OffsetNumber off)
{
	ItemId		iid;

	if (PageAddItem(page, (Item) item, len, off, false, false) != off)
		elog(PANIC, "fractam: failed to add item of size %zu at offset %u",
			 len, off);

	/*
	 * Zero the alignment padding after an item whose length is not a
	 * multiple of MAXALIGN (a table's row versions): it would otherwise
	 * keep whatever bytes were there before, which a full-page image (its
	 * hole zeroed) does not reproduce on a standby.
	 */
	if (MAXALIGN(len) != len)
	{
		iid = PageGetItemId(page, off);
		memset((char *) PageGetItem(page, iid) + len, 0, MAXALIGN(len) - len);
	}
}

void
ft_meta_init(Page page, BlockNumber root, uint32 root_level)
{
	FtMetaData *meta;

	ft_page_init(page, FT_PAGE_META, 0);
	meta = FtPageGetMeta(page);
	meta->magic = FT_MAGIC;
	meta->version = FT_FORMAT_VERSION;
	meta->root = root;
	meta->root_level = root_level;
	/* keep pd_lower honest so full-page images keep the metadata */
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(FtMetaData)) - (char *) page;
}

/* Set the metapage's counter (do side and redo) */
void
ft_meta_set_seq(Page page, uint64 seq)
{
	FtMetaData *meta = FtPageGetMeta(page);

	meta->seq = seq;
	/* metapages from before the counter existed end before it */
	((PageHeader) page)->pd_lower =
		Max(((PageHeader) page)->pd_lower,
			((char *) meta + sizeof(FtMetaData)) - (char *) page);
}

/* Set the ranges of the counter given back (do side and redo) */
void
ft_meta_set_free_seq(Page page, const FtSeqExtent *ranges, uint32 n)
{
	FtMetaData *meta = FtPageGetMeta(page);

	Assert(n <= FT_META_MAX_FREE_SEQ);
	memcpy(meta->free_seq, ranges, n * sizeof(FtSeqExtent));
	memset(meta->free_seq + n, 0,
		   (FT_META_MAX_FREE_SEQ - n) * sizeof(FtSeqExtent));
	meta->nfree_seq = n;
	((PageHeader) page)->pd_lower =
		Max(((PageHeader) page)->pd_lower,
			((char *) meta + sizeof(FtMetaData)) - (char *) page);
}

/*
 * The buffer-node half of a flush: drop the flushed slice of messages and
 * add the pivots of the leaves the flush created.  Shared by the do side
 * and redo so that both produce byte-identical pages.
 */
void
ft_apply_flush_to_buffer_node(Page page, OffsetNumber slice_first,
							  uint16 nslice, OffsetNumber pivot_off,
							  char **pivots, Size *pivotlens, int npivots,
							  bool count_flush)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	int			i;

	if (nslice > 0)
	{
		OffsetNumber deletable[MaxOffsetNumber];

		for (i = 0; i < nslice; i++)
			deletable[i] = slice_first + i;
		PageIndexMultiDelete(page, deletable, nslice);
	}
	for (i = 0; i < npivots; i++)
		ft_page_add_item(page, pivots[i], pivotlens[i], pivot_off + i);
	opaque->ft_nchildren += npivots;
	if (count_flush)
	{
		opaque->ft_nflushes++;
		opaque->ft_nflushed += nslice;
	}
}

/*
 * The level-1 node's half of a merge of its children a .. a + k - 1 into
 * the last of them, block target (ft_merge_leaves): target takes their
 * range, so the first child's pivot now points to it and the others go.
 * Shared by the do side and redo so that both produce byte-identical
 * pages.
 */
void
ft_apply_merge_to_node(Page page, int a, int k, BlockNumber target)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);

	for (int j = a + k - 1; j > a; j--)
		PageIndexTupleDelete(page, first + j);
	((FtPivotHeader *) PageGetItem(page, PageGetItemId(page, first + a)))->child = target;
	opaque->ft_nchildren -= k - 1;
}

/*
 * The two halves of a MOVE of messages from an upper buffer node to a
 * lower one, shared with redo.  The lower node receives nmoved messages
 * from payload: for each a uint16 target offset, a uint16 length and the
 * bytes, in ascending target order (adding them in that order builds the
 * final layout).  The upper node loses the messages at the ascending
 * offsets moved.
 */
void
ft_apply_move_lower(Page lower, const char *payload, int nmoved,
					uint64 lower_msn)
{
	FtPageOpaque lop = FtPageGetOpaque(lower);
	int			i;

	for (i = 0; i < nmoved; i++)
	{
		uint16		hdr[2];
		PGAlignedBlock msg;

		memcpy(hdr, payload, sizeof(hdr));
		payload += sizeof(hdr);
		memcpy(msg.data, payload, hdr[1]);	/* realign */
		payload += hdr[1];
		ft_page_add_item(lower, msg.data, hdr[1], hdr[0]);
	}
	if (lower_msn > lop->ft_msn)
		lop->ft_msn = lower_msn;
}

/*
 * Is len exactly the size of the FtLeafDelta at delta?  Redo checks it
 * before applying one, so that a record in another layout (WAL of an older
 * fractam build) stops recovery instead of corrupting the leaf.
 */
bool
ft_leaf_delta_valid(const char *delta, Size len)
{
	FtLeafDelta hdr;
	Size		off = MAXALIGN(sizeof(FtLeafDelta));
	int			i;

	if (len < off)
		return false;
	memcpy(&hdr, delta, sizeof(FtLeafDelta));
	off += hdr.ndeleted * sizeof(OffsetNumber);
	for (i = 0; i < hdr.ninserted && off <= len; i++)
	{
		uint16		ihdr[2];

		if (off + sizeof(ihdr) > len)
			return false;
		memcpy(ihdr, delta + off, sizeof(ihdr));
		off += sizeof(ihdr) + ihdr[1];
	}
	return off == len;
}

/*
 * Overwrite bytes of items in place, without changing their lengths (VACUUM
 * freezing a table's row versions).  payload is a sequence of patches, each
 * an OffsetNumber, a uint16 start, a uint16 length and that many bytes,
 * unaligned.  Every patch is checked against the page before any is
 * applied; false (nothing changed) if one does not fit, so that redo of a
 * record in another layout stops instead of corrupting the page.
 */
bool
ft_apply_patches(Page page, const char *payload, Size len)
{
	int			pass;

	for (pass = 0; pass < 2; pass++)
	{
		Size		pos = 0;

		while (pos < len)
		{
			uint16		hdr[3];
			ItemId		iid;

			if (pos + sizeof(hdr) > len)
				return false;
			memcpy(hdr, payload + pos, sizeof(hdr));
			pos += sizeof(hdr);
			if (pass == 0)
			{
				if (hdr[0] < FirstOffsetNumber ||
					hdr[0] > PageGetMaxOffsetNumber(page) ||
					pos + hdr[2] > len)
					return false;
				iid = PageGetItemId(page, hdr[0]);
				if (!ItemIdHasStorage(iid) ||
					(Size) hdr[1] + hdr[2] > ItemIdGetLength(iid))
					return false;
			}
			else
			{
				iid = PageGetItemId(page, hdr[0]);
				memcpy((char *) PageGetItem(page, iid) + hdr[1],
					   payload + pos, hdr[2]);
			}
			pos += hdr[2];
		}
	}
	return true;
}

/*
 * Describe how to turn leaf page old into the leaf holding items (its
 * merge with a slice) as an FtLeafDelta (see ft_page.h): the offsets of old
 * items that go (deleted or replaced), then the new items with their final
 * offsets.  Kept items are recognized by address: the merge returns
 * pointers into old for them.  With a valid right, old becomes the left
 * page of a split, ending before hikey (which replaces its high key, if it
 * had one) and linking to right.
 */
char *
ft_build_leaf_delta(Page old, char **items, Size *lens, int nitems,
					const char *hikey, Size hikeylen, BlockNumber right,
					uint64 msn, bool count_flush, Size *deltalen)
{
	FtPageOpaque oldop = FtPageGetOpaque(old);
	OffsetNumber firstoff = FtFirstDataOffset(oldop);
	OffsetNumber newfirst = firstoff;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(old);
	OffsetNumber o = firstoff;
	Size		newbytes = 0;
	FtLeafDelta *hdr;
	OffsetNumber *deleted;
	char	   *delta;
	char	   *p;
	int			i;

	for (i = 0; i < nitems; i++)
		if (items[i] < (char *) old || items[i] >= (char *) old + BLCKSZ)
			newbytes += 2 * sizeof(uint16) + lens[i];
	if (right != InvalidBlockNumber)
		newbytes += 2 * sizeof(uint16) + hikeylen;
	delta = palloc(MAXALIGN(sizeof(FtLeafDelta)) +
				   (maxoff + 1) * sizeof(OffsetNumber) + newbytes);
	hdr = (FtLeafDelta *) delta;
	memset(hdr, 0, sizeof(FtLeafDelta));
	hdr->msn = msn;
	hdr->flags = count_flush ? FT_LEAF_DELTA_COUNT_FLUSH : 0;
	hdr->right = InvalidBlockNumber;
	deleted = (OffsetNumber *) (delta + MAXALIGN(sizeof(FtLeafDelta)));

	if (right != InvalidBlockNumber)
	{
		hdr->flags |= FT_LEAF_DELTA_SPLIT;
		hdr->right = right;
		/* the old high key goes; the new one will be at FT_HIKEY */
		if (!FtPageIsRightmost(oldop))
			deleted[hdr->ndeleted++] = FT_HIKEY;
		newfirst = OffsetNumberNext(FT_HIKEY);
	}

	/* old items missing from the output go */
	for (i = 0; i < nitems; i++)
	{
		if (items[i] < (char *) old || items[i] >= (char *) old + BLCKSZ)
			continue;
		while (o <= maxoff && PageGetItem(old, PageGetItemId(old, o)) != items[i])
			deleted[hdr->ndeleted++] = o++;
		Assert(o <= maxoff);
		o++;
	}
	while (o <= maxoff)
		deleted[hdr->ndeleted++] = o++;

	/* a run of deletions up to the end (a split's right part): one number */
	hdr->delete_from = InvalidOffsetNumber;
	if (hdr->ndeleted > 0 && deleted[hdr->ndeleted - 1] == maxoff)
	{
		int			k = hdr->ndeleted - 1;

		while (k > 0 && deleted[k - 1] == deleted[k] - 1)
			k--;
		hdr->delete_from = deleted[k];
		hdr->ndeleted = k;
	}

	/* new items, at their final offsets, in ascending order */
	p = (char *) (deleted + hdr->ndeleted);
	if (right != InvalidBlockNumber)
	{
		uint16		ih[2] = {FT_HIKEY, (uint16) hikeylen};

		memcpy(p, ih, sizeof(ih));
		p += sizeof(ih);
		memcpy(p, hikey, hikeylen);
		p += hikeylen;
		hdr->ninserted++;
	}
	for (i = 0; i < nitems; i++)
	{
		uint16		ih[2];

		if (items[i] >= (char *) old && items[i] < (char *) old + BLCKSZ)
			continue;
		ih[0] = newfirst + i;
		ih[1] = (uint16) lens[i];
		memcpy(p, ih, sizeof(ih));
		p += sizeof(ih);
		memcpy(p, items[i], lens[i]);
		p += lens[i];
		hdr->ninserted++;
	}
	*deltalen = p - delta;
	return delta;
}

/* Apply an FtLeafDelta (see ft_page.h) to a leaf */
void
ft_apply_leaf_delta(Page leaf, const char *delta)
{
	FtLeafDelta hdr;
	OffsetNumber deleted[MaxOffsetNumber];
	const char *p = delta + MAXALIGN(sizeof(FtLeafDelta));
	FtPageOpaque opaque = FtPageGetOpaque(leaf);

	int			ndeleted;

	memcpy(&hdr, delta, sizeof(FtLeafDelta));
	ndeleted = hdr.ndeleted;
	memcpy(deleted, p, ndeleted * sizeof(OffsetNumber));
	p += ndeleted * sizeof(OffsetNumber);
	if (hdr.delete_from != InvalidOffsetNumber)
	{
		OffsetNumber o;

		for (o = hdr.delete_from; o <= PageGetMaxOffsetNumber(leaf); o++)
			deleted[ndeleted++] = o;
	}
	if (ndeleted > 0)
		PageIndexMultiDelete(leaf, deleted, ndeleted);
	ft_apply_move_lower(leaf, p, hdr.ninserted, hdr.msn);
	if (hdr.flags & FT_LEAF_DELTA_COUNT_FLUSH)
		opaque->ft_nflushes++;
	if (hdr.flags & FT_LEAF_DELTA_SPLIT)
	{
		opaque->ft_right = hdr.right;
		opaque->ft_nsplits++;
	}
}

void
ft_apply_move_upper(Page upper, OffsetNumber *moved, int nmoved)
{
	FtPageOpaque uop = FtPageGetOpaque(upper);

	PageIndexMultiDelete(upper, moved, nmoved);
	uop->ft_nflushes++;
	uop->ft_nflushed += nmoved;
}

/*
 * Initialize an empty, uncompressed leaf with template's MSN, right link
 * and counters.
 */
void
ft_leaf_page_init(Page page, FtPageOpaque template)
{
	FtPageOpaque opaque;

	ft_page_init(page, FT_PAGE_LEAF, 0);
	opaque = FtPageGetOpaque(page);
	opaque->ft_msn = template->ft_msn;
	opaque->ft_right = template->ft_right;
	opaque->ft_nsplits = template->ft_nsplits;
	opaque->ft_nflushes = template->ft_nflushes;
}

/* Page space one item of this length takes */
Size
ft_item_space(Size len)
{
	return MAXALIGN(len) + sizeof(ItemIdData);
}

/*
 * Rebuild a leaf page from an item array (used by flush and split, both
 * on the do side; redo restores images).
 */
void
ft_rewrite_leaf_page(Page page, FtPageOpaque template,
					 char **items, Size *lens, int nitems,
					 const char *hikey, Size hikeylen)
{
	FtPageOpaque opaque;
	OffsetNumber off = FirstOffsetNumber;
	int			i;

	ft_leaf_page_init(page, template);
	opaque = FtPageGetOpaque(page);
	if (opaque->ft_right != InvalidBlockNumber)
	{
		Assert(hikey != NULL);
		ft_page_add_item(page, hikey, hikeylen, off++);
	}
	for (i = 0; i < nitems; i++)
		ft_page_add_item(page, items[i], lens[i], off++);
}

/*
 * The checksum of what a compressed leaf's frame changes in place: its
 * stamp, its count of dead entries and their bits.
 */
uint32
ft_frame_deadcrc(const FtFrameHeader *hdr)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &hdr->stamp, sizeof(hdr->stamp));
	COMP_CRC32C(crc, &hdr->ndead, sizeof(hdr->ndead));
	COMP_CRC32C(crc, FtFrameDeadBits(hdr), FtFrameDeadBytes(hdr->nitems));
	if (hdr->chgcap > 0)
	{
		COMP_CRC32C(crc, &hdr->chgcap, sizeof(hdr->chgcap));
		COMP_CRC32C(crc, &hdr->chglen, sizeof(hdr->chglen));
		COMP_CRC32C(crc, FtFrameChanges(hdr), hdr->chglen);
	}
	FIN_CRC32C(crc);
	return crc;
}

/*
 * Where chg can go in the change area of frame hdr: the offset of an
 * earlier change it extends (one that does the same to the entries just
 * before chg's, with no later change touching chg's entries, so that the
 * order of changes per entry stays), or -1 to append it.
 */
static int
extensible_change(const FtFrameHeader *hdr, const FtFrameChange *chg,
				  const char *bytes)
{
	const char *area = FtFrameChanges(hdr);
	int			offs[FT_FRAME_TABLE_CHGCAP / FT_CHANGE_HDRSZ + 1];
	int			n = 0;
	Size		pos = 0;

	while (pos + FT_CHANGE_HDRSZ <= hdr->chglen &&
		   n < lengthof(offs))
	{
		FtFrameChange c;

		memcpy(&c, area + pos, FT_CHANGE_HDRSZ);
		offs[n++] = (int) pos;
		pos += FT_CHANGE_HDRSZ + c.len;
	}
	for (int j = n - 1; j >= 0; j--)
	{
		FtFrameChange c;

		memcpy(&c, area + offs[j], FT_CHANGE_HDRSZ);
		if ((Size) offs[j] + FT_CHANGE_HDRSZ + c.len > hdr->chglen)
			return -1;			/* not a change of this frame's: append */
		if (c.kind == chg->kind && c.transform == chg->transform &&
			c.start == chg->start && c.len == chg->len &&
			c.first + c.count == chg->first &&
			(int) c.count + chg->count <= PG_UINT16_MAX &&
			(c.len == 0 ||
			 memcmp(area + offs[j] + FT_CHANGE_HDRSZ, bytes, c.len) == 0))
			return offs[j];
		/* a change that touches chg's entries keeps its place before chg */
		if (c.first < chg->first + chg->count &&
			chg->first < c.first + c.count)
			return -1;
	}
	return -1;
}

/* Could ft_frame_add_change take chg now? */
bool
ft_frame_change_fits(const FtFrameHeader *hdr, const FtFrameChange *chg)
{
	return (Size) hdr->chglen + FT_CHANGE_HDRSZ + chg->len <= hdr->chgcap;
}

/*
 * Record change chg (with its len bytes) in the change area of frame hdr,
 * extending an earlier change where one does the same to the entries just
 * before, and give the frame a new stamp.  Shared by the do side and redo,
 * byte for byte.  False, with nothing changed, if chg is invalid for this
 * frame or the area has no room (the do side checks the room first with
 * ft_frame_change_fits, which does not count on an extension).
 */
bool
ft_frame_add_change(FtFrameHeader *hdr, uint64 stamp,
					const FtFrameChange *chg, const char *bytes, bool check)
{
	char	   *area = FtFrameChanges(hdr);
	int			at;

	if (chg->count == 0 || (int) chg->first + chg->count > hdr->nitems ||
		(chg->kind == FT_CHANGE_PATCH ? chg->len == 0 || chg->transform != 0 :
		 chg->kind != FT_CHANGE_TRANSFORM || chg->len != 0 || chg->start != 0))
		return false;
	at = extensible_change(hdr, chg, bytes);
	if (at < 0 && !ft_frame_change_fits(hdr, chg))
		return false;
	if (check)
		return true;
	if (at >= 0)
	{
		FtFrameChange c;

		memcpy(&c, area + at, FT_CHANGE_HDRSZ);
		c.count += chg->count;
		memcpy(area + at, &c, FT_CHANGE_HDRSZ);
	}
	else
	{
		memcpy(area + hdr->chglen, chg, FT_CHANGE_HDRSZ);
		if (chg->len > 0)
			memcpy(area + hdr->chglen + FT_CHANGE_HDRSZ, bytes, chg->len);
		hdr->chglen += FT_CHANGE_HDRSZ + chg->len;
	}
	hdr->stamp = stamp;
	hdr->deadcrc = ft_frame_deadcrc(hdr);
	return true;
}

/*
 * Mark entries idx[0..n) of a compressed leaf's frame dead (not already
 * dead, below nitems: checked by the caller, or by redo's caller) and give
 * the frame a new stamp.  Shared by the do side and redo, byte for byte.
 */
void
ft_frame_set_dead(FtFrameHeader *hdr, uint64 stamp, const uint16 *idx, int n)
{
	uint8	   *bits = FtFrameDeadBits(hdr);

	for (int i = 0; i < n; i++)
	{
		if (idx[i] >= hdr->nitems || FtFrameIsDead(hdr, idx[i]))
			elog(PANIC, "fractam: entry %u of a frame of %u cannot be marked dead",
				 idx[i], hdr->nitems);
		bits[idx[i] / 8] |= (uint8) (1 << (idx[i] % 8));
	}
	hdr->ndead += n;
	hdr->stamp = stamp;
	hdr->deadcrc = ft_frame_deadcrc(hdr);
}
