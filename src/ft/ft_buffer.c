/*-------------------------------------------------------------------------
 *
 * ft_buffer.c
 *	  Page access through the buffer manager: reading and checking pages,
 *	  allocating and recycling them, the metapage and the root cache, and
 *	  whether a page is in shared buffers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "ft/ft_int.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/proc.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "wal/ft_xlog.h"

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
				(errcode(ft_corrupted_errcode(rel)),
				 errmsg("%s \"%s\" contains unexpected zero page at block %u",
						ft_relkind_name(rel), RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 ft_relation_is_index(rel) ? errhint("Please REINDEX it.") : 0));
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(FtPageOpaqueData)))
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(rel)),
				 errmsg("%s \"%s\" contains corrupted page at block %u",
						ft_relkind_name(rel), RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errdetail("Special space has size %u, expected %u.",
						   (unsigned) PageGetSpecialSize(page),
						   (unsigned) MAXALIGN(sizeof(FtPageOpaqueData))),
		/* formats 1 and 2 had 32 bytes there */
				 PageGetSpecialSize(page) == 32 ?
				 errhint("It may have been written by a development build of fractam before on-disk format 3: %s",
						 ft_relation_is_index(rel) ? "REINDEX it." :
						 "move the table with pg_dump from that build.") : 0));
	opaque = FtPageGetOpaque(page);
	if (opaque->ft_page_id == FT_PAGE_ID && !ft_page_format_known(opaque))
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(rel)),
				 errmsg("%s \"%s\" has a page in a format this build of fractam cannot read at block %u",
						ft_relkind_name(rel), RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errdetail("Codec %u, item format %u, dictionary %u, frame layout %u; this build reads codecs up to %u, item formats up to %u, no dictionary, and frame layouts %u and %u to %u of compressed leaves.",
						   opaque->ft_codec, opaque->ft_item_format,
						   opaque->ft_dict, opaque->ft_frame_layout,
						   FT_CODEC_MAX, FT_ITEM_FORMAT_MAX,
						   FT_FRAME_LAYOUT_PREFIXED, FT_FRAME_LAYOUT_PARTS,
						   FT_FRAME_LAYOUT_MAX),
				 errhint("It may have been written by a newer version of fractam%s",
						 ft_relation_is_index(rel) ?
						 ", or by a development build; REINDEX it." : ".")));
	kind = opaque->ft_flags & FT_PAGE_KIND_MASK;
	if (opaque->ft_page_id != FT_PAGE_ID ||
		(opaque->ft_flags & ~(FT_PAGE_KIND_MASK | FT_PAGE_DELETED)) != 0 ||
		(FtPageIsDeleted(opaque) && kind != FT_PAGE_LEAF &&
		 kind != FT_PAGE_BUFFER) ||
		!((kind == FT_PAGE_META && opaque->ft_level == 0) ||
		  (kind == FT_PAGE_LEAF && opaque->ft_level == 0) ||
		  (kind == FT_PAGE_BUFFER && FtLevelIsBuffer(opaque->ft_level)) ||
		  (kind == FT_PAGE_ROUTING && opaque->ft_level > FT_TOP_BUFFER_LEVEL)))
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(rel)),
				 errmsg("%s \"%s\" contains corrupted page at block %u",
						ft_relkind_name(rel), RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
				 errdetail("Page kind 0x%04x at level %u with page id 0x%04x is not valid.",
						   opaque->ft_flags, opaque->ft_level, opaque->ft_page_id)));
	if ((kind == FT_PAGE_BUFFER || kind == FT_PAGE_ROUTING) &&
		!FtPageIsDeleted(opaque))
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

		if (opaque->ft_nchildren == 0 ||
			FtFirstDataOffset(opaque) + opaque->ft_nchildren - 1 > maxoff ||
			(kind == FT_PAGE_ROUTING &&
			 FtFirstDataOffset(opaque) + opaque->ft_nchildren - 1 != maxoff))
			ereport(ERROR,
					(errcode(ft_corrupted_errcode(rel)),
					 errmsg("%s \"%s\" contains corrupted page at block %u",
							ft_relkind_name(rel), RelationGetRelationName(rel), BufferGetBlockNumber(buf)),
					 errdetail("Internal page claims %u children but has %u items.",
							   opaque->ft_nchildren, maxoff)));
	}
}

static void count_recent_read(FtTree *tree, Buffer buf);

/*
 * The shared buffers this backend last found its trees' internal pages in
 * (buffer nodes and the metapage; routing pages have their own copies, see
 * ft_routecache.c).  Every insert and lookup reads a level-2 and a level-1
 * node: through the buffer manager, each read is a lookup in the shared
 * buffer mapping table under a partition lock, a few cache misses apiece
 * in a large shared_buffers.  A remembered buffer is pinned directly with
 * ReadRecentBuffer, which checks under the buffer header lock that it
 * still holds the page (a wrong memory costs one failed check and a
 * normal read).  Direct-mapped by (relation file, block): a slot holds the
 * page last read there.  A built index has a level-1 node per few leaves
 * (iiBench's three indexes of 2M rows: 4,550 nodes), so the table is sized
 * for a few such indexes (192 kB per backend; the routing copies take up
 * to 2 MB).  Leaves are not remembered: a cached load touches
 * too many of them for a small table, and leaves have their own memory
 * for the one read that follows a residency check (ft_getbuf_recent).
 */
#define FT_NODE_BUFFER_SLOTS	16384

typedef struct NodeBufferSlot
{
	Oid			relnode;
	BlockNumber blkno;
	Buffer		buf;
} NodeBufferSlot;

static NodeBufferSlot node_buffers[FT_NODE_BUFFER_SLOTS];

static inline NodeBufferSlot *
node_buffer_slot(Relation rel, BlockNumber blkno)
{
	uint32		h = (rel->rd_node.relNode * 0x9E3779B1u) ^ (blkno * 0x85EBCA77u);

	return &node_buffers[(h ^ (h >> 15)) % FT_NODE_BUFFER_SLOTS];
}

/* Pin the page through this backend's memory of its buffer, if it holds */
static Buffer
read_remembered(FtTree *tree, BlockNumber blkno)
{
	NodeBufferSlot *slot = node_buffer_slot(tree->rel, blkno);

	if (slot->blkno != blkno || slot->relnode != tree->rel->rd_node.relNode ||
		!BufferIsValid(slot->buf))
		return InvalidBuffer;
	if (!ReadRecentBuffer(tree->rel->rd_node, MAIN_FORKNUM, blkno, slot->buf))
	{
		slot->buf = InvalidBuffer;
		return InvalidBuffer;
	}
	count_recent_read(tree, slot->buf);
	return slot->buf;
}

/*
 * Read and lock a page, checking that it is sane; through strategy, if not
 * NULL.
 */
static Buffer
getbuf(FtTree *tree, BlockNumber blkno, int access,
	   BufferAccessStrategy strategy)
{
	Buffer		buf = InvalidBuffer;
	bool		remember;

	if (blkno == InvalidBlockNumber)
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(tree->rel)),
				 errmsg("%s \"%s\" references an invalid block",
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel))));

	/*
	 * Only plain locked reads of shared buffers use the memory: rings give
	 * their buffers no usage beyond the first read, and local buffers are
	 * one lookup in a backend-local table already.
	 */
	remember = strategy == NULL && access != BUFFER_LOCK_UNLOCK &&
		!RelationUsesLocalBuffers(tree->rel);
	if (remember)
		buf = read_remembered(tree, blkno);
	if (!BufferIsValid(buf))
		buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 strategy);
	else
		remember = false;		/* already remembered */
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
		if (remember &&
			(FtPageGetOpaque(BufferGetPage(buf))->ft_flags & FT_PAGE_KIND_MASK) != FT_PAGE_LEAF)
		{
			NodeBufferSlot *slot = node_buffer_slot(tree->rel, blkno);

			slot->relnode = tree->rel->rd_node.relNode;
			slot->blkno = blkno;
			slot->buf = buf;
		}
	}
	return buf;
}

Buffer
ft_getbuf(FtTree *tree, BlockNumber blkno, int access)
{
	return getbuf(tree, blkno, access, NULL);
}

/*
 * ft_getbuf for a leaf: through the tree's ring if it has one
 * (FtTree.strategy), which gives a buffer already in shared buffers no use
 * beyond its first, so that the ring can recycle the leaves a load filled
 * or a scan passed.
 */
Buffer
ft_getleaf(FtTree *tree, BlockNumber blkno, int access)
{
	return getbuf(tree, blkno, access, tree->strategy);
}

/*
 * Can a deleted page be reused?  Only once no backend (or hot-standby
 * query, see XLOG_FT_REUSE) can still hold a pointer to it from before it
 * was unlinked: every snapshot must be newer than the XID recorded at
 * deletion, as in nbtree.
 */
bool
ft_page_recyclable(Page page)
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
 * True while free_page_candidate searches the free space map.  The FSM
 * search of recent PostgreSQL 15 minors checks a candidate beyond the
 * cached file size against RelationGetNumberOfBlocks, which for a table AM
 * is table_relation_size: a fractam table answers that from the last leaf
 * of its tree, which the caller may hold locked (an append that needs a
 * page), so it would wait for itself.  While this is set the table reports
 * its file's pages instead, which is what that check wants to know.
 */
static bool searching_free_pages = false;

bool
ft_searching_free_pages(void)
{
	return searching_free_pages;
}

/*
 * A relation whose free space map has no page (VACUUM never recorded a free
 * page, so the fork was never created) has nothing to offer, but asking
 * costs a failed open() of the map's file every time: PostgreSQL checks
 * whether a missing fork has appeared on each lookup.  Appends allocate a
 * page every few dozen rows (4 % of INSERT ... SELECT into a table).  So
 * while this backend last saw the map empty, it looks again only every
 * FT_FSM_EMPTY_RECHECK allocations; a map created by another backend's
 * VACUUM is noticed that much later (its pages wait there meanwhile), one
 * created by this backend's at once (its size is cached in the smgr).
 */
#define FT_FSM_EMPTY_RECHECK	32

static int	fsm_empty_skips = 0;

/*
 * A page the free space map offers (InvalidBlockNumber if none); recheck:
 * ask even if this backend last saw the map without pages.
 */
static BlockNumber
free_page_candidate(Relation rel, bool recheck)
{
	BlockNumber blkno;

	if (!recheck &&
		RelationGetSmgr(rel)->smgr_cached_nblocks[FSM_FORKNUM] == 0 &&
		++fsm_empty_skips < FT_FSM_EMPTY_RECHECK)
		return InvalidBlockNumber;
	fsm_empty_skips = 0;

	Assert(!searching_free_pages);
	searching_free_pages = true;
	PG_TRY();
	{
		blkno = GetFreeIndexPage(rel);
	}
	PG_FINALLY();
	{
		searching_free_pages = false;
	}
	PG_END_TRY();
	return blkno;
}

/* candidates ft_newbuf may reject before it extends the file instead */
#define FT_NEWBUF_MAX_REJECTS	8

/*
 * Free page blkno, which the free space map offered, locked exclusively if
 * it really is free (new, or deleted and recyclable); else InvalidBuffer.
 */
static Buffer
try_free_page(FtTree *tree, BufferAccessStrategy strategy, BlockNumber blkno)
{
	Buffer		buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno,
										 RBM_NORMAL, strategy);

	if (ConditionalLockBuffer(buf))
	{
		Page		page = BufferGetPage(buf);

		if (ft_page_recyclable(page))
		{
			if (!PageIsNew(page))
				ftxlog_reuse(tree->rel, blkno,
							 FullTransactionIdFromU64(FtPageGetOpaque(page)->ft_msn));
			return buf;
		}

		/*
		 * A stale entry (the page is in use again), or deleted too recently
		 * (a scan may still follow a link to it): drop the entry and go on,
		 * as nbtree does.  The next VACUUM offers a deleted page again
		 * (record_unreached_free_pages).
		 */
		UnlockReleaseBuffer(buf);
		return InvalidBuffer;
	}
	ReleaseBuffer(buf);
	return InvalidBuffer;
}

/*
 * A free page from the free space map, locked exclusively (InvalidBuffer
 * if the map has none to give).
 */
static Buffer
take_free_page(FtTree *tree, BufferAccessStrategy strategy)
{
	int			rejected;

	/*
	 * The map only offers pages that were old enough when VACUUM offered
	 * them, so a rejection is rare (a page in use again, or locked by
	 * someone); the caller holds other pages locked, so after a few, extend.
	 */
	for (rejected = 0; rejected < FT_NEWBUF_MAX_REJECTS; rejected++)
	{
		BlockNumber blkno = free_page_candidate(tree->rel, false);
		Buffer		buf;

		if (blkno == InvalidBlockNumber)
			break;
		buf = try_free_page(tree, strategy, blkno);
		if (BufferIsValid(buf))
			return buf;
	}
	return InvalidBuffer;
}

/*
 * Pages this backend deleted outside VACUUM (leaves merged into a
 * compressed one behind a table's append point, ft_seal.c), oldest first:
 * the free space map is only a hint that VACUUM fills, and a page offered
 * there before it may be reused is dropped by the first allocation that
 * finds it too young (try_free_page).  So the backend keeps them and takes
 * one for its own next allocation in the same relation once every snapshot
 * is newer than its deletion, as ft_page_recyclable wants; a stream of
 * short transactions (the timeseries load) thus reuses the pages its
 * merges free a few transactions later, and the file stays the size of
 * the compressed rows.  Deletions are stamped in order, so the oldest
 * entry tells whether any may be reused yet.  Entries are hints as the
 * map's are (try_free_page checks the page under its lock); when the list
 * is full the oldest is forgotten, and the next VACUUM offers it
 * (record_unreached_free_pages).
 *
 * A backend may not come back to the relation (a session that ends after
 * its load, a pooler's idle connection): so its commits also offer the
 * pages deleted since its last commit to the free space map
 * (offer_own_deleted_pages), for any backend to reuse; an allocation that
 * takes one of them too early drops it from the map, and this backend's
 * list still has it.
 */
typedef struct OwnDeletedPage
{
	RelFileNode node;
	Oid			relid;
	BlockNumber blkno;
	FullTransactionId deleted_at;
	LocalTransactionId lxid;	/* the transaction that deleted it */
	bool		offered;		/* recorded in the free space map */
} OwnDeletedPage;

/*
 * A backend may delete many pages in one short transaction: the timeseries
 * load's 1000 sensors of a session grow in step, so their append points in
 * the key's index fill and split, and their runs merge, in the same
 * transaction, about a thousand at once, every few hundred transactions.
 */
#define FT_OWN_DELETED_MAX	4096

static OwnDeletedPage own_deleted[FT_OWN_DELETED_MAX];
static int	n_own_deleted = 0;
static int	n_own_unoffered = 0;

void
ft_remember_deleted_page(FtTree *tree, BlockNumber blkno)
{
	if (n_own_deleted == FT_OWN_DELETED_MAX)
	{
		if (!own_deleted[0].offered)
			n_own_unoffered--;
		memmove(own_deleted, own_deleted + 1,
				sizeof(OwnDeletedPage) * (FT_OWN_DELETED_MAX - 1));
		n_own_deleted--;
	}
	own_deleted[n_own_deleted].node = tree->rel->rd_node;
	own_deleted[n_own_deleted].relid = RelationGetRelid(tree->rel);
	own_deleted[n_own_deleted].blkno = blkno;
	/* read after the deletion: not older than the page's own stamp */
	own_deleted[n_own_deleted].deleted_at = ReadNextFullTransactionId();
	own_deleted[n_own_deleted].lxid = MyProc->lxid;
	own_deleted[n_own_deleted].offered = false;
	n_own_deleted++;
	n_own_unoffered++;
}

/*
 * How many pages of this relation this backend's current transaction
 * deleted and has not reused yet (or, when fewer than limit pages of all
 * relations wait, at most how many): many means that its merges delete
 * pages that cannot be reused before it ends (one long statement), see
 * ft_seal.c.  Pages that earlier transactions deleted do not count: they
 * wait for other backends' snapshots (an ANALYZE of the table holds one
 * for a second or more, while a timeseries load merges thousands of
 * pages), which end.
 */
int
ft_own_deleted_pages(FtTree *tree, int limit)
{
	int			n = 0;

	/* no relation has more than all (the list is long only in bursts) */
	if (n_own_deleted < limit)
		return n_own_deleted;
	for (int i = 0; i < n_own_deleted; i++)
		if (own_deleted[i].lxid == MyProc->lxid &&
			RelFileNodeEquals(own_deleted[i].node, tree->rel->rd_node))
			n++;
	return n;
}

/*
 * At commit: record the pages deleted since the last commit in the free
 * space maps of their relations (still open and locked by the transaction
 * that changed them), with the map's upper levels, so that searches find
 * them.
 */
static void
offer_own_deleted_pages(void)
{
	for (int i = 0; i < n_own_deleted && n_own_unoffered > 0; i++)
	{
		Relation	rel;
		BlockNumber lo;
		BlockNumber hi;

		if (own_deleted[i].offered)
			continue;
		rel = RelationIdGetRelation(own_deleted[i].relid);
		lo = hi = own_deleted[i].blkno;
		for (int j = i; j < n_own_deleted; j++)
		{
			OwnDeletedPage *e = &own_deleted[j];

			if (e->offered || e->relid != own_deleted[i].relid)
				continue;
			if (RelationIsValid(rel) && RelFileNodeEquals(rel->rd_node, e->node))
			{
				RecordFreeIndexPage(rel, e->blkno);
				lo = Min(lo, e->blkno);
				hi = Max(hi, e->blkno);
			}
			e->offered = true;
			n_own_unoffered--;
		}
		if (RelationIsValid(rel))
		{
			FreeSpaceMapVacuumRange(rel, lo, hi + 1);
			RelationClose(rel);
		}
	}
}

static void
own_deleted_xact_end(XactEvent event, void *arg)
{
	if ((event == XACT_EVENT_PRE_COMMIT ||
		 event == XACT_EVENT_PARALLEL_PRE_COMMIT) && n_own_unoffered > 0)
		offer_own_deleted_pages();
}

void
ft_buffer_init(void)
{
	RegisterXactCallback(own_deleted_xact_end, NULL);
}

/* a page of this relation that this backend deleted and may reuse now */
static Buffer
take_own_deleted_page(FtTree *tree, BufferAccessStrategy strategy)
{
	BlockNumber nblocks = InvalidBlockNumber;
	int			i = 0;

	while (i < n_own_deleted &&
		   GlobalVisCheckRemovableFullXid(NULL, own_deleted[i].deleted_at))
	{
		BlockNumber blkno = own_deleted[i].blkno;
		Buffer		buf;

		if (!RelFileNodeEquals(own_deleted[i].node, tree->rel->rd_node))
		{
			i++;
			continue;
		}
		if (!own_deleted[i].offered)
			n_own_unoffered--;
		memmove(own_deleted + i, own_deleted + i + 1,
				sizeof(OwnDeletedPage) * (n_own_deleted - i - 1));
		n_own_deleted--;
		/* the file may have been truncated since (VACUUM, a new relfilenode) */
		if (nblocks == InvalidBlockNumber)
			nblocks = smgrnblocks(RelationGetSmgr(tree->rel), MAIN_FORKNUM);
		if (blkno >= nblocks)
			continue;
		buf = try_free_page(tree, strategy, blkno);
		if (BufferIsValid(buf))
			return buf;
	}
	return InvalidBuffer;
}

/*
 * Pages a backend that waited for the extension lock adds beyond its own,
 * per backend still waiting (as heap's RelationAddExtraBlocks), and at most
 * this many.
 */
#define FT_EXTRA_PAGES_PER_WAITER	20
#define FT_MAX_EXTRA_PAGES			512

/*
 * Extend the file by n new pages for others to take from the free space
 * map: while appenders wait for the extension lock, each extension by one
 * page makes the next waiter wait again (a table's appenders take a new
 * leaf every few dozen rows each).  The pages are zeroed and not logged,
 * as new pages always are until used: after a crash VACUUM finds them new
 * and offers them again (record_unreached_free_pages).
 */
static void
add_extra_pages(FtTree *tree, BufferAccessStrategy strategy, int n)
{
	BlockNumber first = InvalidBlockNumber;
	BlockNumber last = InvalidBlockNumber;

	for (int i = 0; i < n; i++)
	{
		Buffer		buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, P_NEW,
											 RBM_ZERO_AND_LOCK, strategy);

		last = BufferGetBlockNumber(buf);
		if (first == InvalidBlockNumber)
			first = last;
		UnlockReleaseBuffer(buf);
		RecordFreeIndexPage(tree->rel, last);
	}
	if (first != InvalidBlockNumber)
		FreeSpaceMapVacuumRange(tree->rel, first, last + 1);
}

/*
 * Allocate a page: a recyclable deleted page from the free space map, or a
 * new one at the end of the relation.  Returned exclusively locked; the
 * caller initializes it inside its critical section and logs its image.
 *
 * Holding buffer locks while waiting for the relation extension lock is
 * safe, as in nbtree and heap: the extension lock is held only while
 * extending the file and recording the new pages in the free space map
 * (whose page locks are never held while waiting for it).
 */
static Buffer
newbuf(FtTree *tree, BufferAccessStrategy strategy)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(tree->rel);
	int			extra = 0;

	if (n_own_deleted > 0)
	{
		buf = take_own_deleted_page(tree, strategy);
		if (BufferIsValid(buf))
			return buf;
	}
	for (;;)
	{
		BlockNumber blkno;

		buf = take_free_page(tree, strategy);
		if (BufferIsValid(buf))
			return buf;
		if (!needLock ||
			ConditionalLockRelationForExtension(tree->rel, ExclusiveLock))
			break;
		LockRelationForExtension(tree->rel, ExclusiveLock);

		/*
		 * The backend that had the lock may have added pages for the
		 * waiters (below): the map gives one of those (marking it used),
		 * which is read and checked after the lock is released, as heap
		 * does.  Else add some for the backends still waiting.
		 */
		blkno = free_page_candidate(tree->rel, true);
		if (blkno == InvalidBlockNumber)
		{
			extra = Min(FT_MAX_EXTRA_PAGES, FT_EXTRA_PAGES_PER_WAITER *
						RelationExtensionLockWaiterCount(tree->rel));
			break;
		}
		UnlockRelationForExtension(tree->rel, ExclusiveLock);
		buf = try_free_page(tree, strategy, blkno);
		if (BufferIsValid(buf))
			return buf;
		CHECK_FOR_INTERRUPTS();
	}
	buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, P_NEW,
							 RBM_ZERO_AND_LOCK, strategy);
	if (extra > 0)
		add_extra_pages(tree, strategy, extra);
	if (needLock)
		UnlockRelationForExtension(tree->rel, ExclusiveLock);
	return buf;
}

Buffer
ft_newbuf(FtTree *tree)
{
	return newbuf(tree, NULL);
}

/*
 * ft_newbuf for a new leaf: through the tree's ring if it has one
 * (FtTree.strategy).  Internal pages never go through it: every descent
 * reads them.
 */
Buffer
ft_newleaf(FtTree *tree)
{
	Buffer		buf = tree->spare_leaf;

	if (BufferIsValid(buf))
	{
		tree->spare_leaf = InvalidBuffer;
		return buf;
	}
	return newbuf(tree, tree->strategy);
}

/*
 * Give back the page an insert took for a split that did not happen
 * (FtTree.spare_leaf): the free space map offers it to the next allocation,
 * which checks it under its lock as any free page (it is new, or deleted
 * and recyclable).
 */
void
ft_release_spare_leaf(FtTree *tree)
{
	Buffer		buf = tree->spare_leaf;
	BlockNumber blkno;

	if (!BufferIsValid(buf))
		return;
	tree->spare_leaf = InvalidBuffer;
	blkno = BufferGetBlockNumber(buf);
	UnlockReleaseBuffer(buf);
	RecordFreeIndexPage(tree->rel, blkno);
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
 * The pages of the tree's file.  Not RelationGetNumberOfBlocks: a table
 * AM reports the TID blocks of its relation there (a fractam table's
 * pseudo-blocks of row ids), which may outnumber the pages.
 */
BlockNumber
ft_nblocks(FtTree *tree)
{
	return smgrnblocks(RelationGetSmgr(tree->rel), MAIN_FORKNUM);
}

/* Check that a locked metapage is one of a tree this build can read */
static void
check_meta(FtTree *tree, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FtMetaData *meta = FtPageGetMeta(page);

	if (!(FtPageGetOpaque(page)->ft_flags & FT_PAGE_META) ||
		meta->magic != FT_MAGIC)
	{
		uint32		magic = meta->magic;

		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(tree->rel)),
				 errmsg("%s \"%s\" is not a fractam %s",
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel),
						ft_relkind_name(tree->rel)),
				 errdetail("Metapage magic is 0x%08x, expected 0x%08x.",
						   magic, FT_MAGIC)));
	}
	if (meta->version < FT_FORMAT_VERSION_MIN ||
		meta->version > FT_FORMAT_VERSION)
	{
		uint32		version = meta->version;

		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(tree->rel)),
				 errmsg("%s \"%s\" has fractam format version %u, but this build supports versions %u to %u",
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel), version,
						FT_FORMAT_VERSION_MIN, FT_FORMAT_VERSION),
				 ft_relation_is_index(tree->rel) ?
				 errhint("REINDEX the index with this version of fractam.") : 0));
	}
}

/*
 * Read the root location from the metapage.
 */
void
ft_read_meta(FtTree *tree, BlockNumber *root, uint32 *root_level)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_SHARE);
	FtMetaData *meta = FtPageGetMeta(BufferGetPage(buf));

	check_meta(tree, buf);
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
 * The tree's on-disk format version (FT_FORMAT_VERSION_MIN ..
 * FT_FORMAT_VERSION): what its owner may write into it.
 */
uint32
ft_meta_version(FtTree *tree)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_SHARE);
	uint32		version;

	check_meta(tree, buf);
	version = FtPageGetMeta(BufferGetPage(buf))->version;
	UnlockReleaseBuffer(buf);
	return version;
}

/*
 * Write an empty tree (metapage + empty root leaf) into the given fork of a
 * fresh relation file, its metapage counter at first_seq.  Used for the init fork of unlogged relations, for
 * empty builds and for a table's new relation file.  Pages are written
 * through smgr, checksummed, WAL-logged if wal says so, and synced.
 */
void
ft_create_storage(SMgrRelation smgr, ForkNumber forknum, bool wal,
				  uint64 first_seq)
{
	PGAlignedBlock metabuf;
	PGAlignedBlock leafbuf;

	ft_meta_init(metabuf.data, 1, 0);
	ft_meta_set_seq(metabuf.data, first_seq);
	FtPageGetMeta(metabuf.data)->seq_first = first_seq;
	ft_page_init(leafbuf.data, FT_PAGE_LEAF, 0);

	PageSetChecksumInplace(metabuf.data, FT_METAPAGE_BLKNO);
	smgrwrite(smgr, forknum, FT_METAPAGE_BLKNO, metabuf.data, true);
	PageSetChecksumInplace(leafbuf.data, 1);
	smgrextend(smgr, forknum, 1, leafbuf.data, true);

	if (wal)
	{
		log_newpage(&smgr->smgr_rnode.node, forknum, FT_METAPAGE_BLKNO,
					metabuf.data, true);
		log_newpage(&smgr->smgr_rnode.node, forknum, 1, leafbuf.data, true);
	}
	smgrimmedsync(smgr, forknum);
}

/*
 * The same for an existing relation of the tree.  The init fork must be
 * logged and synced even at wal_level=minimal.
 */
void
ft_init_tree(FtTree *tree, ForkNumber forknum)
{
	ft_create_storage(RelationGetSmgr(tree->rel), forknum,
					  forknum == INIT_FORKNUM || RelationNeedsWAL(tree->rel), 0);
}

/*
 * Take values (one WAL record): from the first range given back that the
 * policy finds reusable, else from the counter; see FtSeqPolicy.  Returns
 * the first value taken, with the number taken in *count.
 */
uint64
ft_meta_take_seq(FtTree *tree, const FtSeqPolicy *policy, uint64 *count)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE);
	Page		page = BufferGetPage(buf);
	FtMetaData *meta = FtPageGetMeta(page);
	uint64		value = meta->seq;
	uint64		n;
	int			reuse = -1;

	if (policy->reusable)
	{
		for (uint32 i = 0; i < meta->nfree_seq; i++)
			if (policy->reusable(meta->free_seq[i].tag, policy->arg))
			{
				reuse = (int) i;
				break;
			}
	}
	if (reuse >= 0)
	{
		FtSeqExtent ranges[FT_META_MAX_FREE_SEQ];
		uint32		nranges = meta->nfree_seq;

		memcpy(ranges, meta->free_seq, nranges * sizeof(FtSeqExtent));
		value = ranges[reuse].first;
		n = policy->grant(value, true, policy->arg);
		Assert(n >= 1);
		n = Min(n, ranges[reuse].end - value);
		ranges[reuse].first += n;
		if (ranges[reuse].first >= ranges[reuse].end)
		{
			memmove(&ranges[reuse], &ranges[reuse + 1],
					(nranges - reuse - 1) * sizeof(FtSeqExtent));
			nranges--;
		}
		START_CRIT_SECTION();
		/* as redo sets them */
		ft_meta_set_free_seq(page, ranges, nranges);
		MarkBufferDirty(buf);
		ftxlog_meta_seq(tree->rel, buf, meta->seq, true);
		END_CRIT_SECTION();
	}
	else
	{
		if (value >= policy->limit)
		{
			UnlockReleaseBuffer(buf);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s \"%s\" has used up its %llu row ids",
							ft_relkind_name(tree->rel),
							RelationGetRelationName(tree->rel),
							(unsigned long long) policy->limit),
					 errhint("VACUUM FULL the table to renumber its rows.")));
		}
		n = policy->grant(value, false, policy->arg);
		Assert(n >= 1);
		n = Min(n, policy->limit - value);
		START_CRIT_SECTION();
		ft_meta_set_seq(page, value + n);
		MarkBufferDirty(buf);
		ftxlog_meta_seq(tree->rel, buf, value + n, false);
		END_CRIT_SECTION();
	}
	/* published before anyone can see the counter or the list past it */
	if (policy->granted)
		policy->granted(value, n, policy->arg);
	UnlockReleaseBuffer(buf);
	*count = n;
	return value;
}

/* The metapage's counter now (the next value ft_meta_take_seq returns) */
uint64
ft_meta_read_seq(FtTree *tree)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_SHARE);
	uint64		value = FtPageGetMeta(BufferGetPage(buf))->seq;

	UnlockReleaseBuffer(buf);
	return value;
}

/* The counter and the ranges given back, under one lock of the metapage */
void
ft_meta_read_seq_state(FtTree *tree, FtSeqState *state)
{
	Buffer		buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_SHARE);
	FtMetaData *meta = FtPageGetMeta(BufferGetPage(buf));

	state->seq = meta->seq;
	state->seq_first = meta->seq_first;
	state->nfree = Min(meta->nfree_seq, FT_META_MAX_FREE_SEQ);
	memcpy(state->given_back, meta->free_seq,
		   state->nfree * sizeof(FtSeqExtent));
	UnlockReleaseBuffer(buf);
}

static int
extent_cmp(const void *a, const void *b)
{
	const FtSeqExtent *x = (const FtSeqExtent *) a;
	const FtSeqExtent *y = (const FtSeqExtent *) b;

	return (x->first > y->first) - (x->first < y->first);
}

static int
extent_size_desc_cmp(const void *a, const void *b)
{
	const FtSeqExtent *x = (const FtSeqExtent *) a;
	const FtSeqExtent *y = (const FtSeqExtent *) b;
	uint64		xs = x->end - x->first;
	uint64		ys = y->end - y->first;

	return (xs < ys) - (xs > ys);
}

/*
 * Give ranges of the counter back for reuse (one WAL record).  The owner
 * vouches that nothing uses them and that no range of them is already
 * given back.  Adjacent ranges with the same tag merge; ranges with
 * different tags stay apart (merged, the older would wait for the newer's
 * tag: a queue gives back the range next to the one it is reusing).  Only
 * beyond FT_META_MAX_FREE_SEQ ranges do adjacent ones merge anyway
 * (keeping the larger tag: reusable once both are), and then the smallest
 * are forgotten (their values are never handed out again).
 */
void
ft_meta_give_back_seq(FtTree *tree, const FtSeqExtent *ranges, int nranges)
{
	Buffer		buf;
	FtMetaData *meta;
	FtSeqExtent *all;
	int			n;
	int			merged;

	if (nranges <= 0)
		return;
	buf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE);
	meta = FtPageGetMeta(BufferGetPage(buf));
	all = palloc((meta->nfree_seq + nranges) * sizeof(FtSeqExtent));
	memcpy(all, meta->free_seq, meta->nfree_seq * sizeof(FtSeqExtent));
	n = meta->nfree_seq;
	for (int i = 0; i < nranges; i++)
	{
		if (ranges[i].first >= ranges[i].end || ranges[i].end > meta->seq)
			elog(ERROR, "fractam: cannot give back range [" UINT64_FORMAT ", " UINT64_FORMAT ") of \"%s\" with the counter at " UINT64_FORMAT,
				 ranges[i].first, ranges[i].end,
				 RelationGetRelationName(tree->rel), meta->seq);
		all[n++] = ranges[i];
	}
	qsort(all, n, sizeof(FtSeqExtent), extent_cmp);
	merged = 0;
	for (int i = 0; i < n; i++)
	{
		/* a value given back twice would be handed out twice */
		if (merged > 0 && all[merged - 1].end > all[i].first)
			elog(ERROR, "fractam: range [" UINT64_FORMAT ", " UINT64_FORMAT ") of \"%s\" given back twice",
				 all[i].first, all[i].end, RelationGetRelationName(tree->rel));
		if (merged > 0 && all[merged - 1].end == all[i].first &&
			all[merged - 1].tag == all[i].tag)
			all[merged - 1].end = all[i].end;
		else
			all[merged++] = all[i];
	}
	if (merged > FT_META_MAX_FREE_SEQ)
	{
		int			m = 0;

		for (int i = 0; i < merged; i++)
		{
			if (m > 0 && all[m - 1].end == all[i].first)
			{
				all[m - 1].end = all[i].end;
				all[m - 1].tag = Max(all[m - 1].tag, all[i].tag);
			}
			else
				all[m++] = all[i];
		}
		merged = m;
	}
	if (merged > FT_META_MAX_FREE_SEQ)
	{
		qsort(all, merged, sizeof(FtSeqExtent), extent_size_desc_cmp);
		merged = FT_META_MAX_FREE_SEQ;
		qsort(all, merged, sizeof(FtSeqExtent), extent_cmp);
	}
	START_CRIT_SECTION();
	ft_meta_set_free_seq(BufferGetPage(buf), all, (uint32) merged);
	MarkBufferDirty(buf);
	ftxlog_meta_seq(tree->rel, buf, meta->seq, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
	pfree(all);
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

	/*
	 * A page every insert reads sits at the highest count: no need to take
	 * the header lock to find that (a stale read only delays a count).
	 */
	if (BUF_STATE_GET_USAGECOUNT(pg_atomic_read_u32(&desc->state)) >= BM_MAX_USAGE_COUNT)
		return;
	state = LockBufHdr(desc);
	if (BUF_STATE_GET_USAGECOUNT(state) < BM_MAX_USAGE_COUNT)
		state += BUF_USAGECOUNT_ONE;
	UnlockBufHdr(desc, state);
}

/*
 * Count a read through ReadRecentBuffer as ReadBuffer counts a hit: in the
 * relation's statistics (pg_statio), and as a use of the buffer unless the
 * tree reads through a ring (which gives its buffers no use beyond the
 * first, so that the ring can recycle them).
 */
static void
count_recent_read(FtTree *tree, Buffer buf)
{
	if (tree->strategy == NULL)
		count_buffer_use(buf);
	pgstat_count_buffer_read(tree->rel);
	pgstat_count_buffer_hit(tree->rel);
}

/*
 * ft_getbuf for a leaf that was seen in buffer recent a moment ago (see
 * ft_leaf_resident): pin that buffer directly if it still holds the page.
 * A tree with a bulk-load ring reads its leaves through it and leaves
 * their usage count alone, so that the ring can recycle them.
 */
Buffer
ft_getbuf_recent(FtTree *tree, BlockNumber blkno, int access, Buffer recent)
{
	Buffer		buf;

	if (!BufferIsValid(recent) ||
		!ReadRecentBuffer(tree->rel->rd_node, MAIN_FORKNUM, blkno, recent))
		return getbuf(tree, blkno, access, tree->strategy);
	buf = recent;
	count_recent_read(tree, buf);
	LockBuffer(buf, access);
	ft_checkpage(tree->rel, buf);
	return buf;
}

/*
 * The buffer each relation's target leaf (ft_insert.c's fast path) was
 * last found in, so that an append pins it without a buffer-mapping
 * lookup.  Direct-mapped by relation file; the target block itself stays
 * in the relation's smgr (RelationSetTargetBlock), which forgets it when
 * the relation file changes, so a slot is used only while the two agree.
 * Only plain reads of shared buffers use it, as for buffer nodes.
 */
#define FT_TARGET_SLOTS		64

static NodeBufferSlot target_buffers[FT_TARGET_SLOTS];

static inline NodeBufferSlot *
target_slot(Relation rel)
{
	return &target_buffers[rel->rd_node.relNode % FT_TARGET_SLOTS];
}

/* blkno, where an insert just went in buffer buf, is the new target */
void
ft_set_target(FtTree *tree, BlockNumber blkno, Buffer buf)
{
	NodeBufferSlot *slot = target_slot(tree->rel);

	RelationSetTargetBlock(tree->rel, blkno);
	slot->relnode = tree->rel->rd_node.relNode;
	slot->blkno = blkno;
	slot->buf = buf;
}

/* Pin the target leaf blkno (not locked) */
Buffer
ft_pin_target(FtTree *tree, BlockNumber blkno)
{
	NodeBufferSlot *slot = target_slot(tree->rel);
	Buffer		buf;

	if (tree->strategy == NULL && !RelationUsesLocalBuffers(tree->rel) &&
		slot->relnode == tree->rel->rd_node.relNode &&
		slot->blkno == blkno && BufferIsValid(slot->buf) &&
		ReadRecentBuffer(tree->rel->rd_node, MAIN_FORKNUM, blkno, slot->buf))
	{
		count_recent_read(tree, slot->buf);
		return slot->buf;
	}
	buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
							 tree->strategy);
	slot->relnode = tree->rel->rd_node.relNode;
	slot->blkno = blkno;
	slot->buf = buf;
	return buf;
}
