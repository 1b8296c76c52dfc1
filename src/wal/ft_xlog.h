/*-------------------------------------------------------------------------
 *
 * ft_xlog.h
 *	  WAL records of fractam's custom resource manager.
 *
 * Every page change of a fractam tree is logged through one custom
 * resource manager (RM_FRACTAM_ID).  Records are either small logical
 * changes to one page (INSERT, VACUUM) or multi-page changes logged in one
 * atomic record (FLUSH, IMAGES), so that every record leaves a valid tree.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FT_XLOG_H
#define FT_XLOG_H

#include "access/htup.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "storage/buf.h"
#include "storage/off.h"
#include "storage/relfilenode.h"
#include "utils/relcache.h"

/*
 * Custom resource manager ID.  128 is for experiments and 129-140 and 241
 * are used by other extensions (wiki: CustomWALResourceManagers); fractam
 * uses 173.  It is baked into every record: never change it.
 */
#define RM_FRACTAM_ID		173
#define FT_RMGR_NAME		"fractam"

/* record types (high nibble of xl_info) */
#define XLOG_FT_INSERT		0x00	/* add one item to one page */
#define XLOG_FT_FLUSH		0x10	/* buffer node delta + rewritten leaves */
#define XLOG_FT_IMAGES		0x20	/* whole new images of several pages */
#define XLOG_FT_VACUUM		0x30	/* delete items from one page */
#define XLOG_FT_REUSE		0x40	/* a deleted page is about to be reused */
#define XLOG_FT_MOVE		0x50	/* messages move one buffer level down */
#define XLOG_FT_INSERT_MSG	0x60	/* add one message to a buffer node */
#define XLOG_FT_PATCH		0x70	/* overwrite bytes of one item in place */
#define XLOG_FT_META_SEQ	0x80	/* advance the metapage's counter */
#define XLOG_FT_VM_SET		0x90	/* a table's visibility-map bits set */
#define XLOG_FT_VM_CLEAR	0xA0	/* ... cleared */
#define XLOG_FT_APPEND		0xB0	/* add items at the end of one leaf */
#define XLOG_FT_PATCHES		0xC0	/* overwrite bytes of items of one leaf */
#define XLOG_FT_LOGICAL		0xD0	/* a table row change, for logical decoding */
#define XLOG_FT_PRUNE		0xE0	/* a full leaf gave up items it no longer needs */
#define XLOG_FT_FRAME_DEAD	0xF0	/* entries of a compressed leaf marked dead */

/*
 * XLOG_FT_INSERT: block 0 = page, block data = the item, main data = its
 * offset (an OffsetNumber).  XLOG_FT_INSERT_MSG: the same for a buffer-node
 * message, whose MSN (in its FtMsgHeader) becomes the node's; builds before
 * session 27 also wrote that MSN after the offset (a uint64, unaligned:
 * SizeOfFtInsertMsgOld), which redo still reads.  Leaf inserts are most
 * records, as many as index entries: 2 bytes of main data, as nbtree's.
 */
#define SizeOfFtInsert		sizeof(OffsetNumber)
#define SizeOfFtInsertMsgOld	(sizeof(OffsetNumber) + sizeof(uint64))

/*
 * XLOG_FT_FLUSH: block 0 = buffer node, whose messages at offsets
 * [slice_first, slice_first + nslice) are removed and which gets npivots
 * new pivots at pivot_off, pivot_off + 1, ... (block data: for each pivot a
 * uint16 length and the bytes); blocks 1..nleaves = whole leaf images, but
 * with FT_XL_LEAF_DELTA block 1 = the old leaf changed in place (data: an
 * FtLeafDelta; for a split, the leaf becomes the left page) and only the
 * new leaves 2..nleaves are images.
 */
typedef struct xl_ft_flush
{
	OffsetNumber slice_first;
	uint16		nslice;
	OffsetNumber pivot_off;
	uint16		npivots;
	uint16		nleaves;
	uint16		flags;
} xl_ft_flush;

#define FT_XL_COUNT_FLUSH	0x0001
#define FT_XL_LEAF_DELTA	0x0002	/* the old leaf, changed in place: block
									 * 1 data is an FtLeafDelta, not an image */

/*
 * XLOG_FT_IMAGES: blocks 0..nblocks-1 carry whole page images; with the
 * reasons FtImagesRelinked says, block 1 carries only its new right link
 * (block data: a BlockNumber).
 */
typedef struct xl_ft_images
{
	uint16		nblocks;
	uint16		reason;
} xl_ft_images;

#define FT_IMAGES_BUILD		1
#define FT_IMAGES_SPLIT		2
#define FT_IMAGES_NEWROOT	3
#define FT_IMAGES_DELETE	4
#define FT_IMAGES_DELETE_UPPER	5	/* a level-2 node went: routing epoch */
#define FT_IMAGES_EMPTIED	6	/* a compressed leaf lost its last entry */
#define FT_IMAGES_MERGED	8	/* VACUUM merged leaves into a compressed
								 * leaf: the level-1 node, the left
								 * sibling, the leaves (the last one
								 * compressed, the others deleted) */
#define FT_IMAGES_RECOMPRESSED	7	/* VACUUM changed a compressed leaf's
										 * entries: a new frame */
#define FT_IMAGES_MERGED_RELINK	9	/* FT_IMAGES_MERGED whose block 1, the
									 * left sibling, only takes a new right
									 * link: block data = that BlockNumber,
									 * not an image */
#define FT_IMAGES_DELETE_RELINK	10	/* the same for FT_IMAGES_DELETE of an
									 * empty leaf (node, left sibling, leaf) */
#define FT_IMAGES_MERGED_PIVOTS	11	/* FT_IMAGES_MERGED_RELINK whose block 0,
									 * the level-1 node, loses the merged
									 * leaves' pivots but the first: block
									 * data = xl_ft_merged_node, not an
									 * image */
#define FtImagesRelinked(reason) \
	((reason) == FT_IMAGES_MERGED_RELINK || (reason) == FT_IMAGES_DELETE_RELINK || \
	 (reason) == FT_IMAGES_MERGED_PIVOTS)

/*
 * FT_IMAGES_MERGED_PIVOTS, block 0 data: the node's children first ..
 * first + nmerged - 1 were merged into the last of them, the record's last
 * block (ft_apply_merge_to_node).
 */
typedef struct xl_ft_merged_node
{
	uint16		first;
	uint16		nmerged;
} xl_ft_merged_node;

/*
 * XLOG_FT_FRAME_DEAD: block 0 = compressed leaf, block data = the indexes
 * (uint16, ascending) of the frame's entries whose dead bits are set; the
 * frame takes the new stamp.
 */
typedef struct xl_ft_frame_dead
{
	uint64		stamp;
	uint16		ndead;
} xl_ft_frame_dead;

/*
 * XLOG_FT_FRAME_DEAD with the longer main data xl_ft_frame_change: block
 * 0 = compressed table leaf, block data = FtFrameChanges, each followed by
 * its bytes, which ft_frame_add_change records in the frame's change area
 * in that order; the frame takes the new stamp.
 */
typedef struct xl_ft_frame_change
{
	uint64		stamp;
	uint64		reserved1;		/* zero; tells the record from frame_dead */
	uint32		reserved2;		/* zero */
} xl_ft_frame_change;

/* XLOG_FT_VACUUM: block 0 = page, block data = sorted offsets */
typedef struct xl_ft_vacuum
{
	uint16		ndeleted;
} xl_ft_vacuum;

/*
 * XLOG_FT_REUSE: no block; hot-standby queries that might still follow a
 * pointer to the page (snapshots not newer than safexid) are cancelled.
 * With block InvalidBlockNumber: items whose effects are not newer than
 * safexid are about to be removed (a table's dead row versions, or a
 * unique index's entries of rows dead to everyone, removed by an insert
 * with their key).
 */
typedef struct xl_ft_reuse
{
	RelFileNode node;
	BlockNumber block;
	FullTransactionId safexid;
} xl_ft_reuse;

/*
 * XLOG_FT_MOVE: block 0 = upper buffer node, block data = the ascending
 * offsets of the messages it loses; block 1 = lower buffer node, block
 * data = for each message a uint16 target offset, a uint16 length and the
 * bytes, in ascending target order.  The message bytes ride on block 1 so
 * that a full-page image of the lower node drops them.
 */
typedef struct xl_ft_move
{
	uint64		lower_msn;		/* highest MSN moved */
	uint16		nmoved;
} xl_ft_move;

/*
 * XLOG_FT_PATCH: block 0 = leaf, block data = the new bytes; len bytes at
 * start of the item at off are overwritten (a row version's header, by the
 * table AM: same length, so the page layout does not change).  With the
 * longer main data xl_ft_transform instead (no block data), the item at off
 * is replaced in place by its transform (FtItemTransformFn: a table's
 * compact row version expanded to heap's header), which redo computes.
 */
typedef struct xl_ft_patch
{
	OffsetNumber off;
	uint16		start;
	uint16		len;
} xl_ft_patch;

typedef struct xl_ft_transform
{
	OffsetNumber off;
	uint16		transform;		/* FT_TRANSFORM_* */
	uint32		reserved;		/* zero; tells the record from a patch */
} xl_ft_transform;

/*
 * XLOG_FT_PATCHES: block 0 = leaf, block data = the patches in the form
 * ft_apply_patches takes (offset, start, length, bytes each), main data =
 * their number (a uint16).  VACUUM freezing a table's versions: one record
 * per leaf.
 */

/*
 * XLOG_FT_META_SEQ: block 0 = metapage, main data = the counter's new value
 * (uint64), then, when the ranges given back changed, their number (uint32)
 * and the ranges (FtSeqExtent each).
 */

/*
 * XLOG_FT_APPEND: block 0 = leaf; its items at offsets first, first + 1,
 * ... are new (a batch of ascending keys appended at the right edge, e.g.
 * COPY into a table): block data = for each a uint16 length and the bytes.
 * One record per page instead of one per item, as heap's multi-insert.
 */
typedef struct xl_ft_append
{
	OffsetNumber first;
	uint16		nitems;
} xl_ft_append;

/*
 * XLOG_FT_VM_SET / XLOG_FT_VM_CLEAR: block 0 = a page of a fractam table's
 * visibility-map fork (registered without REGBUF_STANDARD: the map lies
 * where a standard page has its hole), main data = xl_ft_vm.  The map has
 * PostgreSQL's layout (two bits per TID block, i.e. per pseudo-block of row
 * ids), so the executor's index-only and bitmap scans read it as a heap's.
 * Redo of SET cancels hot-standby queries that might not see every version
 * in the pseudo-block (cutoff_xid: the newest xmin there), as heap's
 * XLOG_HEAP2_VISIBLE does.
 */
typedef struct xl_ft_vm
{
	BlockNumber heapblk;		/* the TID block */
	TransactionId cutoff_xid;	/* SET: conflict horizon; CLEAR: invalid */
	uint8		flags;			/* VISIBILITYMAP_* bits set or cleared */
} xl_ft_vm;

/*
 * XLOG_FT_PRUNE: block 0 = leaf, changed in place (block data: an
 * FtLeafDelta, see ft_page.h): a full leaf's owner dropped items nobody
 * needs before the leaf would split (a table's dead row versions, replaced
 * by compact records of their row ids).  Hot-standby conflicts are logged
 * before it (XLOG_FT_REUSE).  Main data: xl_ft_prune, for pg_waldump.
 */
typedef struct xl_ft_prune
{
	uint16		ndeleted;		/* items removed */
	uint16		ninserted;		/* items added */
} xl_ft_prune;

/*
 * XLOG_FT_LOGICAL: a row of a fractam table was inserted, updated or
 * deleted, written only with wal_level = logical and only for decoding:
 * redo does nothing (the page changes have records of their own).  Main
 * data: this header, then the new version (newlen bytes: a heap tuple
 * header and its data, as stored, TOAST pointers included), then the old
 * row (oldlen bytes: the replica identity's key columns, or the whole row
 * for REPLICA IDENTITY FULL, TOAST values inlined; none when not needed).
 * No block references: the row's page changes are logged separately.
 */
typedef struct xl_ft_logical
{
	RelFileNode node;			/* the table */
	uint8		action;			/* FT_LOGICAL_* */
	uint8		flags;			/* unused, zero */
	uint16		reserved;
	uint32		newlen;			/* 0: no new version (DELETE) */
	uint32		oldlen;			/* 0: no old row logged */
} xl_ft_logical;

#define FT_LOGICAL_INSERT	1
#define FT_LOGICAL_UPDATE	2
#define FT_LOGICAL_DELETE	3
/*
 * INSERT ... ON CONFLICT, as heap logs it: the speculative insertion with
 * its row, then a confirmation or an abort (no rows), so that the reorder
 * buffer drops an aborted row and the TOAST chunks it gathered for it.
 */
#define FT_LOGICAL_SPEC_INSERT	4
#define FT_LOGICAL_SPEC_CONFIRM 5
#define FT_LOGICAL_SPEC_ABORT	6

/* Most blocks one record may carry */
#define FT_MAX_RECORD_BLOCKS	(XLR_MAX_BLOCK_ID + 1)

/* do side (ft_xlog.c); all are called inside the caller's critical section */
extern void ftxlog_append(Relation rel, Buffer buf, OffsetNumber first,
						  int n, const char *data, Size datalen);
extern void ftxlog_insert(Relation rel, Buffer buf, OffsetNumber off,
						  const char *item, Size len, bool msg);
extern void ftxlog_flush(Relation rel, Buffer bbuf, OffsetNumber slice_first,
						 uint16 nslice, OffsetNumber pivot_off,
						 char **pivots, Size *pivotlens, int npivots,
						 Buffer *leaves, int nleaves, bool count_flush,
						 const char *leafdelta, Size leafdeltalen);
extern void ftxlog_move(Relation rel, Buffer upper, OffsetNumber *moved,
						int nmoved, Buffer lower, const char *payload,
						Size payloadlen, uint64 lower_msn);
extern void ftxlog_images(Relation rel, Buffer *bufs, int nbufs, uint16 reason);
extern void ftxlog_images_relinked(Relation rel, Buffer *bufs, int nbufs,
								   uint16 reason,
								   const xl_ft_merged_node *node);
extern void ftxlog_prune(Relation rel, Buffer buf, const char *delta,
						 Size deltalen, uint16 ndeleted, uint16 ninserted);
extern void ftxlog_frame_dead(Relation rel, Buffer buf, uint64 stamp,
							  const uint16 *idx, int n);
extern void ftxlog_frame_change(Relation rel, Buffer buf, uint64 stamp,
								const char *data, Size len);
extern void ftxlog_vacuum(Relation rel, Buffer buf, OffsetNumber *offsets,
						  int ndeleted);
extern void ftxlog_reuse(Relation rel, BlockNumber blkno,
						 FullTransactionId safexid);
extern void ftxlog_patch(Relation rel, Buffer buf, OffsetNumber off,
						 uint16 start, const char *bytes, uint16 len);
extern void ftxlog_transform(Relation rel, Buffer buf, OffsetNumber off,
							 uint16 transform);
extern void ftxlog_patches(Relation rel, Buffer buf, const char *payload,
						   Size len, uint16 npatches);
extern void ftxlog_meta_seq(Relation rel, Buffer metabuf, uint64 seq,
							bool with_free);
extern void ftxlog_vm(Relation rel, Buffer vmbuf, uint8 info,
					  BlockNumber heapblk, TransactionId cutoff_xid,
					  uint8 flags);
extern void ftxlog_logical(Relation rel, uint8 action, HeapTuple newtup,
						   HeapTuple oldtup);
/* call before START_CRIT_SECTION when a record may carry many blocks */
extern void ftxlog_reserve(Relation rel, int nblocks);

/* redo side */
extern void ft_register_rmgr(void);
extern void ft_redo(XLogReaderState *record);
extern void ft_mask(char *pagedata, BlockNumber blkno);
extern void ft_desc(StringInfo buf, XLogReaderState *record);
extern const char *ft_identify(uint8 info);

/* logical decoding (ft_decode.c) */
struct LogicalDecodingContext;
struct XLogRecordBuffer;
extern void ft_decode(struct LogicalDecodingContext *ctx,
					  struct XLogRecordBuffer *buf);

#endif							/* FT_XLOG_H */
