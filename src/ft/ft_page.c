/*-------------------------------------------------------------------------
 *
 * ft_page.c
 *	  Page access, sanity checks, allocation and in-page searches.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "ft/ft_int.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "wal/ft_xlog.h"

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
	if (PageAddItem(page, (Item) item, len, off, false, false) != off)
		elog(PANIC, "fractam: failed to add item of size %zu at offset %u",
			 len, off);
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
 * Sanity-check a page just read.  A page that is not a fractam page, or
 * whose layout is impossible, raises ERRCODE_INDEX_CORRUPTED rather than
 * letting later code trip over it.
 */
void
ft_checkpage(Relation rel, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque;
	uint16		kind;

	if (PageIsNew(page))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected zero page at block %u",
						RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(FtPageOpaqueData)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errdetail("Special space has size %u, expected %u.",
						   (unsigned) PageGetSpecialSize(page),
						   (unsigned) MAXALIGN(sizeof(FtPageOpaqueData)))));
	opaque = FtPageGetOpaque(page);
	kind = opaque->ft_flags & FT_PAGE_KIND_MASK;
	if (opaque->ft_page_id != FT_PAGE_ID ||
		(opaque->ft_flags & ~(FT_PAGE_KIND_MASK | FT_PAGE_DELETED)) != 0 ||
		(FtPageIsDeleted(opaque) && kind != FT_PAGE_LEAF) ||
		!((kind == FT_PAGE_META && opaque->ft_level == 0) ||
		  (kind == FT_PAGE_LEAF && opaque->ft_level == 0) ||
		  (kind == FT_PAGE_BUFFER && FtLevelIsBuffer(opaque->ft_level)) ||
		  (kind == FT_PAGE_ROUTING && opaque->ft_level > FT_TOP_BUFFER_LEVEL)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errdetail("Page kind 0x%04x at level %u with page id 0x%04x is not valid.",
						   opaque->ft_flags, opaque->ft_level, opaque->ft_page_id)));
	if (kind == FT_PAGE_BUFFER || kind == FT_PAGE_ROUTING)
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

		if (opaque->ft_nchildren == 0 ||
			FtFirstDataOffset(opaque) + opaque->ft_nchildren - 1 > maxoff ||
			(kind == FT_PAGE_ROUTING &&
			 FtFirstDataOffset(opaque) + opaque->ft_nchildren - 1 != maxoff))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" contains corrupted page at block %u",
							RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
					 errdetail("Internal page claims %u children but has %u items.",
							   opaque->ft_nchildren, maxoff)));
	}
}

/*
 * Read and lock a page, checking that it is sane.
 */
Buffer
ft_getbuf(FtTree *tree, BlockNumber blkno, int access)
{
	Buffer		buf;

	if (blkno == InvalidBlockNumber)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" references an invalid block",
						RelationGetRelationName(tree->rel))));
	buf = ReadBuffer(tree->rel, blkno);
	if (access != BUFFER_LOCK_UNLOCK)
	{
#if defined(__GNUC__)
		/* fetch the header and special space while we wait for the lock */
		__builtin_prefetch(BufferGetPage(buf));
		__builtin_prefetch((char *) BufferGetPage(buf) + BLCKSZ -
						   MAXALIGN(sizeof(FtPageOpaqueData)));
#endif
		LockBuffer(buf, access);
		ft_checkpage(tree->rel, buf);
	}
	return buf;
}

/*
 * Can a deleted page be reused?  Only once no backend (or hot-standby
 * query, see XLOG_FT_REUSE) can still hold a pointer to it from before it
 * was unlinked: every snapshot must be newer than the XID recorded at
 * deletion, as in nbtree.
 */
static bool
page_recyclable(Page page)
{
	FtPageOpaque opaque;

	if (PageIsNew(page))
		return true;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(FtPageOpaqueData)))
		return false;
	opaque = FtPageGetOpaque(page);
	return FtPageIsDeleted(opaque) &&
		GlobalVisCheckRemovableFullXid(NULL,
									   FullTransactionIdFromU64(opaque->ft_msn));
}

/*
 * Allocate a page: a recyclable deleted page from the free space map, or a
 * new one at the end of the relation.  Returned exclusively locked; the
 * caller initializes it inside its critical section and logs its image.
 *
 * Holding buffer locks while waiting for the relation extension lock is
 * safe, as in nbtree: the extension lock is never held while waiting for
 * anything else.
 */
Buffer
ft_newbuf(FtTree *tree)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(tree->rel);

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(tree->rel);

		if (blkno == InvalidBlockNumber)
			break;
		buf = ReadBuffer(tree->rel, blkno);
		if (ConditionalLockBuffer(buf))
		{
			Page		page = BufferGetPage(buf);

			if (page_recyclable(page))
			{
				if (!PageIsNew(page))
					ftxlog_reuse(tree->rel, blkno,
								 FullTransactionIdFromU64(FtPageGetOpaque(page)->ft_msn));
				return buf;
			}
			if (PageGetSpecialSize(page) == MAXALIGN(sizeof(FtPageOpaqueData)) &&
				FtPageIsDeleted(FtPageGetOpaque(page)))
			{
				/* not yet: give it back and extend instead */
				UnlockReleaseBuffer(buf);
				RecordFreeIndexPage(tree->rel, blkno);
				break;
			}
			/* a stale entry (the page is in use again): drop it, go on */
			UnlockReleaseBuffer(buf);
			continue;
		}
		ReleaseBuffer(buf);
	}

	if (needLock)
		LockRelationForExtension(tree->rel, ExclusiveLock);
	buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, P_NEW,
							 RBM_ZERO_AND_LOCK, NULL);
	if (needLock)
		UnlockRelationForExtension(tree->rel, ExclusiveLock);
	return buf;
}

/*
 * Forget the cached root location (after the caller saw it was stale).
 */
void
ft_forget_root(FtTree *tree)
{
	if (tree->rootcache)
		tree->rootcache->valid = false;
}

/*
 * Read the root location from the metapage.
 */
void
ft_read_meta(FtTree *tree, BlockNumber *root, uint32 *root_level)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_SHARE);
	Page		page = BufferGetPage(buf);
	FtMetaData *meta = FtPageGetMeta(page);

	if (!(FtPageGetOpaque(page)->ft_flags & FT_PAGE_META) ||
		meta->magic != FT_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a fractam index",
						RelationGetRelationName(tree->rel)),
				 errdetail("Metapage magic is 0x%08x, expected 0x%08x.",
						   meta->magic, FT_MAGIC)));
	if (meta->version != FT_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has fractam format version %u, but this build supports version %u",
						RelationGetRelationName(tree->rel), meta->version,
						FT_FORMAT_VERSION),
				 errhint("REINDEX the index with this version of fractam.")));
	*root = meta->root;
	*root_level = meta->root_level;
	UnlockReleaseBuffer(buf);
	if (tree->rootcache)
	{
		tree->rootcache->root = *root;
		tree->rootcache->level = *root_level;
		tree->rootcache->valid = true;
	}
}

/*
 * Write an empty tree (metapage + empty root leaf) into the given fork of a
 * fresh relation.  Used for the init fork of unlogged indexes and for empty
 * builds.  Pages are written through smgr, checksummed and WAL-logged.
 */
void
ft_init_tree(FtTree *tree, ForkNumber forknum)
{
	PGAlignedBlock metabuf;
	PGAlignedBlock leafbuf;
	SMgrRelation smgr = RelationGetSmgr(tree->rel);

	ft_meta_init(metabuf.data, 1, 0);
	ft_page_init(leafbuf.data, FT_PAGE_LEAF, 0);

	PageSetChecksumInplace(metabuf.data, FT_METAPAGE_BLKNO);
	smgrwrite(smgr, forknum, FT_METAPAGE_BLKNO, metabuf.data, true);
	PageSetChecksumInplace(leafbuf.data, 1);
	smgrextend(smgr, forknum, 1, leafbuf.data, true);

	/* The init fork must be logged and synced even at wal_level=minimal */
	if (forknum == INIT_FORKNUM || RelationNeedsWAL(tree->rel))
	{
		log_newpage(&(RelationGetSmgr(tree->rel))->smgr_rnode.node, forknum,
					FT_METAPAGE_BLKNO, metabuf.data, true);
		log_newpage(&(RelationGetSmgr(tree->rel))->smgr_rnode.node, forknum,
					1, leafbuf.data, true);
	}
	smgrimmedsync(RelationGetSmgr(tree->rel), forknum);
}

/*
 * Compare two keys; an empty key is minus infinity.
 */
int
ft_cmp(FtTree *tree, const char *a, Size alen, const char *b, Size blen)
{
	if (alen == 0)
		return blen == 0 ? 0 : -1;
	if (blen == 0)
		return 1;
	return tree->cmp(tree->cmp_arg, a, alen, b, blen);
}

/*
 * A binary search probing mid of [lo, hi) next probes the middle of
 * [lo, mid) or of [mid + 1, hi): start fetching both items (see
 * ft_prefetch_item).
 */
static inline void
prefetch_next_probes(Page page, OffsetNumber lo, OffsetNumber mid,
					 OffsetNumber hi, Size skip)
{
	if (mid > lo)
		ft_prefetch_item(page, lo + (mid - lo) / 2, skip);
	if (mid + 1 < hi)
		ft_prefetch_item(page, mid + 1 + (hi - mid - 1) / 2, skip);
}

/*
 * On a leaf: the first data offset whose item is >= key (maxoff+1 if
 * none).  *found tells whether that item compares equal.
 */
OffsetNumber
ft_leaf_lower_bound(FtTree *tree, Page page, const char *key, Size len,
					bool *found)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber lo = FtFirstDataOffset(opaque);
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	*found = false;
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		Size		ilen;
		char	   *item;
		int			c;

		prefetch_next_probes(page, lo, mid, hi, 0);
		item = ft_page_item(page, mid, &ilen);
		c = ft_cmp(tree, item, ilen, key, len);

		if (c < 0)
			lo = mid + 1;
		else
		{
			if (c == 0)
				*found = true;
			hi = mid;
		}
	}
	if (*found)
	{
		Size		ilen;
		char	   *item;

		/* found was set by some probe >= lo; confirm it is lo itself */
		if (lo > PageGetMaxOffsetNumber(page))
			*found = false;
		else
		{
			item = ft_page_item(page, lo, &ilen);
			*found = (ft_cmp(tree, item, ilen, key, len) == 0);
		}
	}
	return lo;
}

/*
 * On an internal page: the index of the child whose range holds key.
 * With strict, the child holding the largest keys < key instead (used by
 * backward scans).
 */
int
ft_child_index(FtTree *tree, Page page, const char *key, Size len, bool strict)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	int			lo = 0;
	int			hi = opaque->ft_nchildren - 1;

	/* find the last pivot i with pivot <= key (< key if strict) */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;
		char	   *pkey;
		Size		pkeylen;
		int			c;

		/* the next probe is in [lo, mid - 1] or in [mid, hi] */
		if (mid - 1 > lo)
			ft_prefetch_item(page, first + lo + (mid - lo) / 2, FT_PIVOT_HDRSZ);
		if (hi > mid)
			ft_prefetch_item(page, first + mid + (hi - mid + 1) / 2, FT_PIVOT_HDRSZ);
		ft_pivot(page, first + mid, &pkey, &pkeylen);
		c = ft_cmp(tree, pkey, pkeylen, key, len);
		if (c < 0 || (c == 0 && !strict))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * On a buffer node: the first message offset whose key is >= key (or >
 * key with upper).  Messages are sorted by (key, MSN).
 */
OffsetNumber
ft_msg_bound(FtTree *tree, Page page, const char *key, Size len, bool upper)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber lo = FtFirstMsgOffset(opaque);
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		char	   *mkey;
		Size		mkeylen;
		int			c;

		prefetch_next_probes(page, lo, mid, hi, FT_MSG_HDRSZ);
		ft_msg(page, mid, &mkey, &mkeylen);
		c = ft_cmp(tree, mkey, mkeylen, key, len);
		if (c < 0 || (c == 0 && upper))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The offset where the messages of child childidx begin in a buffer node;
 * childidx == ft_nchildren gives the end of the last child's messages.  A
 * child's slice ends where the next one's begins, so loops over all
 * children need one search per child, not two.
 */
OffsetNumber
ft_slice_start(FtTree *tree, Page page, int childidx)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	char	   *pkey;
	Size		pkeylen;

	Assert(FtPageIsBuffer(opaque));
	Assert(childidx >= 0 && childidx <= opaque->ft_nchildren);
	if (childidx == 0)
		return FtFirstMsgOffset(opaque);
	if (childidx == opaque->ft_nchildren)
		return PageGetMaxOffsetNumber(page) + 1;
	ft_pivot(page, FtFirstDataOffset(opaque) + childidx, &pkey, &pkeylen);
	return ft_msg_bound(tree, page, pkey, pkeylen, false);
}

/*
 * The messages of child childidx occupy offsets [*first, *end).
 */
void
ft_slice_range(FtTree *tree, Page page, int childidx,
			   OffsetNumber *first, OffsetNumber *end)
{
	*first = ft_slice_start(tree, page, childidx);
	*end = ft_slice_start(tree, page, childidx + 1);
}

/*
 * Lehman-Yao: does key lie beyond this page's high key?  With strict
 * (searching for keys < key) only a key strictly above the high key does.
 */
bool
ft_must_move_right(FtTree *tree, Page page, const char *key, Size len,
				   bool strict)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	Size		hlen;
	char	   *hikey;
	int			c;

	if (FtPageIsRightmost(opaque))
		return false;
	hikey = ft_page_item(page, FT_HIKEY, &hlen);
	c = ft_cmp(tree, key, len, hikey, hlen);
	return strict ? c > 0 : c >= 0;
}

/* Page space one item of this length takes */
Size
ft_item_space(Size len)
{
	return MAXALIGN(len) + sizeof(ItemIdData);
}

/*
 * Is the page already in shared buffers?  Used to decide between applying
 * a change directly to a leaf (no I/O) and buffering it.  A pure lookup in
 * the buffer mapping table: it neither reads nor prefetches the page.
 * *recent gets the buffer it was found in (InvalidBuffer if none is known),
 * for ft_getbuf_recent: reading it then costs no second lookup.
 */
bool
ft_leaf_resident(FtTree *tree, BlockNumber blkno, Buffer *recent)
{
	BufferTag	tag;
	uint32		hash;
	LWLock	   *partlock;
	int			id;

	*recent = InvalidBuffer;
	if (RelationUsesLocalBuffers(tree->rel))
		return true;
	INIT_BUFFERTAG(tag, tree->rel->rd_node, MAIN_FORKNUM, blkno);
	hash = BufTableHashCode(&tag);
	partlock = BufMappingPartitionLock(hash);
	LWLockAcquire(partlock, LW_SHARED);
	id = BufTableLookup(&tag, hash);
	LWLockRelease(partlock);
	if (id < 0)
		return false;
	*recent = id + 1;
	return true;
}

/*
 * Count a use of a shared buffer we hold pinned, as ReadBuffer's pin does.
 * ReadRecentBuffer pins a buffer with its header locked, which leaves the
 * usage count alone (PostgreSQL 15).  A leaf reached only that way would
 * age out of shared buffers as if nobody used it: in a cached insert load
 * leaves taking inserts every few milliseconds were evicted right after a
 * change, each costing a read back, a write, and a WAL flush (fdatasync) in
 * the evicting backend.  Same protocol as the buffer manager's own pin:
 * change the state word only with the header lock held.
 */
static void
count_buffer_use(Buffer buf)
{
	BufferDesc *desc;
	uint32		state;

	Assert(!BufferIsLocal(buf));
	desc = GetBufferDescriptor(buf - 1);
	state = LockBufHdr(desc);
	if (BUF_STATE_GET_USAGECOUNT(state) < BM_MAX_USAGE_COUNT)
		state += BUF_USAGECOUNT_ONE;
	UnlockBufHdr(desc, state);
}

/*
 * ft_getbuf for a page that was seen in buffer recent a moment ago (see
 * ft_leaf_resident): pin that buffer directly if it still holds the page.
 */
Buffer
ft_getbuf_recent(FtTree *tree, BlockNumber blkno, int access, Buffer recent)
{
	Buffer		buf;

	if (!BufferIsValid(recent) ||
		!ReadRecentBuffer(tree->rel->rd_node, MAIN_FORKNUM, blkno, recent))
		return ft_getbuf(tree, blkno, access);
	buf = recent;
	count_buffer_use(buf);
	LockBuffer(buf, access);
	ft_checkpage(tree->rel, buf);
	return buf;
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

	ft_page_init(page, FT_PAGE_LEAF, 0);
	opaque = FtPageGetOpaque(page);
	opaque->ft_msn = template->ft_msn;
	opaque->ft_right = template->ft_right;
	opaque->ft_nsplits = template->ft_nsplits;
	opaque->ft_nflushes = template->ft_nflushes;
	if (opaque->ft_right != InvalidBlockNumber)
	{
		Assert(hikey != NULL);
		ft_page_add_item(page, hikey, hikeylen, off++);
	}
	for (i = 0; i < nitems; i++)
		ft_page_add_item(page, items[i], lens[i], off++);
}

/*
 * Collect the messages of up to two runs (an upper buffer node's first,
 * then the lower one's) in (key, MSN) order.  A message may appear in both
 * copies when it moved down between them; it keeps its MSN, so the second
 * sighting is dropped.
 */
static int
collect_messages(FtTree *tree, const FtMsgRun *runs, int nruns, FtMsgRef *refs)
{
	int			n = 0;
	int			r;

	for (r = 0; r < nruns; r++)
	{
		const FtMsgRun *run = &runs[r];
		OffsetNumber off;
		int			prev = n;	/* refs[0 .. prev) came from earlier runs */
		int			i = 0;
		FtMsgRef   *merged;
		int			nmerged = 0;

		if (run->page == NULL || run->first >= run->end)
			continue;
		if (prev == 0)
		{
			for (off = run->first; off < run->end; off++)
			{
				FtMsgHeader *hdr = ft_msg(run->page, off, &refs[n].key,
										  &refs[n].keylen);

				refs[n].msn = FtMsgMsn(hdr);
				refs[n].type = FtMsgType(hdr);
				n++;
			}
			continue;
		}

		/* merge this run into the refs collected so far */
		merged = palloc(sizeof(FtMsgRef) * (prev + run->end - run->first));
		off = run->first;
		while (i < prev || off < run->end)
		{
			FtMsgRef	m;
			int			c;

			if (off < run->end)
			{
				FtMsgHeader *hdr = ft_msg(run->page, off, &m.key, &m.keylen);

				m.msn = FtMsgMsn(hdr);
				m.type = FtMsgType(hdr);
			}
			if (off >= run->end)
				c = -1;
			else if (i >= prev)
				c = 1;
			else
			{
				c = ft_cmp(tree, refs[i].key, refs[i].keylen, m.key, m.keylen);
				if (c == 0)
					c = (refs[i].msn < m.msn) ? -1 : (refs[i].msn > m.msn) ? 1 : 0;
			}
			if (c <= 0)
				merged[nmerged++] = refs[i++];
			if (c >= 0)
			{
				if (c > 0)
					merged[nmerged++] = m;
				off++;			/* c == 0: the same message seen twice */
			}
		}
		memcpy(refs, merged, sizeof(FtMsgRef) * nmerged);
		pfree(merged);
		n = nmerged;
	}
	return n;
}

/*
 * The newest message of the group of equal keys starting at refs[mi] that
 * the leaf has not applied yet (type 0 if none), and the index just past
 * the group.
 */
static int
msg_group(FtTree *tree, const FtMsgRef *refs, int mi, int end,
		  uint64 applied, char **key, Size *keylen, int *type)
{
	const FtMsgRef *g = &refs[mi];

	/* messages at or below the leaf's MSN are already in the leaf */
	*type = (g->msn > applied) ? g->type : 0;
	*key = g->key;
	*keylen = g->keylen;
	for (mi++; mi < end; mi++)
	{
		if (ft_cmp(tree, refs[mi].key, refs[mi].keylen, g->key, g->keylen) != 0)
			break;
		if (refs[mi].msn > applied)
		{
			*key = refs[mi].key;
			*keylen = refs[mi].keylen;
			*type = refs[mi].type;
		}
	}
	return mi;
}

/*
 * Merge the leaf's items with the messages of runs (a leaf's slice in its
 * buffer node, and in a two-level tree first the slice of the node above
 * it) and an optional extra INSERT that is newer than all of them, into
 * items/lens.  For each key the newest message decides: INSERT puts its
 * item, DELETE removes it.  Messages whose MSN is not above the leaf's
 * ft_msn are already applied and are ignored.  Items point into lpage,
 * the runs' pages or extra.
 */
int
ft_merge_leaf(FtTree *tree, Page lpage, const FtMsgRun *runs, int nruns,
			  const char *extra, Size extralen,
			  char **items, Size *lens, uint64 *maxmsn)
{
	FtPageOpaque lopaque = FtPageGetOpaque(lpage);
	OffsetNumber li = FtFirstDataOffset(lopaque);
	OffsetNumber lmax = PageGetMaxOffsetNumber(lpage);
	int			nmsgs = 0;
	FtMsgRef   *refs;
	int			mi;
	int			end;
	bool		extra_done = (extra == NULL);
	int			n = 0;
	int			r;

	for (r = 0; r < nruns; r++)
		if (runs[r].page != NULL && runs[r].end > runs[r].first)
			nmsgs += runs[r].end - runs[r].first;
	refs = palloc(sizeof(FtMsgRef) * Max(nmsgs, 1));
	end = collect_messages(tree, runs, nruns, refs);

	*maxmsn = lopaque->ft_msn;
	for (mi = 0; mi < end; mi++)
		if (refs[mi].msn > *maxmsn)
			*maxmsn = refs[mi].msn;

	mi = 0;
	for (;;)
	{
		char	   *litem = NULL;
		Size		llen = 0;
		char	   *mkey = NULL;
		Size		mlen = 0;
		int			mtype = 0;
		int			gend = mi;
		bool		use_extra = false;
		int			c;

		if (li <= lmax)
			litem = ft_page_item(lpage, li, &llen);
		while (mi < end)
		{
			gend = msg_group(tree, refs, mi, end, lopaque->ft_msn,
							 &mkey, &mlen, &mtype);
			if (mtype != 0)
				break;
			mi = gend;			/* nothing new in this group */
			mkey = NULL;
		}
		if (!extra_done &&
			(mkey == NULL || ft_cmp(tree, extra, extralen, mkey, mlen) <= 0))
		{
			/* the extra item is the newest message of its key */
			if (mkey == NULL || ft_cmp(tree, extra, extralen, mkey, mlen) != 0)
				gend = mi;		/* the group is not consumed now */
			use_extra = true;
			mkey = (char *) extra;
			mlen = extralen;
			mtype = FT_MSG_INSERT;
		}

		if (litem == NULL && mkey == NULL)
			break;
		if (mkey == NULL)
			c = -1;
		else if (litem == NULL)
			c = 1;
		else
			c = ft_cmp(tree, litem, llen, mkey, mlen);

		if (c < 0)
		{
			items[n] = litem;
			lens[n++] = llen;
			li++;
			continue;
		}
		/* consume the message (group) */
		mi = gend;
		if (use_extra)
			extra_done = true;
		if (c == 0)
			li++;				/* the message replaces or deletes the item */
		if (mtype == FT_MSG_INSERT)
		{
			items[n] = mkey;
			lens[n++] = mlen;
		}
	}
	pfree(refs);
	return n;
}
