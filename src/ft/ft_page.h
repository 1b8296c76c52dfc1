/*-------------------------------------------------------------------------
 *
 * ft_page.h
 *	  On-page layout of fractam trees and page-level helpers shared by the
 *	  files of src/ft and by the redo routines in src/wal.
 *
 * Every page uses the standard PostgreSQL page layout (PageInit, line
 * pointers, nothing stored between pd_lower and pd_upper); all fractam
 * bookkeeping lives in the special space (FtPageOpaqueData).
 *
 * Page kinds (ft_level / ft_flags):
 *	- metapage (block 0): FtMetaData right after the page header.
 *	- leaf (level 0): [high key] items, sorted, unique under the comparator.
 *	- buffer node (levels 1 and 2): [high key] nchildren pivots, then
 *	  messages sorted by (key, MSN).
 *	- routing node (level >= 3): [high key] nchildren pivots.
 *
 * New messages enter the top buffer level (level 2, or level 1 while the
 * tree is only two levels high) and move down a level at a time.
 *
 * The high key (offset 1) exists only on pages that have a right sibling.
 * The first pivot of every internal page has an empty key, meaning "the
 * page's own lower bound".
 *
 *-------------------------------------------------------------------------
 */
#ifndef FT_PAGE_H
#define FT_PAGE_H

#include "storage/bufpage.h"
#include "storage/off.h"

#define FT_MAGIC			0x46544D31	/* "FTM1" */
/*
 * 2: two buffer levels; 3: codec, item format and dictionary fields in
 * every page's special space; 4: a table's leaves may hold row versions in
 * the compact and settled forms (am/table/fractam_table.h), which builds
 * of version 3 would misread, so they refuse the tree.  From version 3 on,
 * every later build reads every earlier format: a table cannot be rebuilt
 * by REINDEX (binary fixtures of versions 3 and 4 stay in the tests,
 * t/090_format_fixture.pl).  New trees get FT_FORMAT_VERSION.
 */
#define FT_FORMAT_VERSION	4
#define FT_FORMAT_VERSION_MIN	3	/* the oldest this build reads */
#define FT_METAPAGE_BLKNO	0
#define FT_PAGE_ID			0xFF8A	/* last two bytes of the special space */

/* levels that hold buffered messages: 1 .. FT_TOP_BUFFER_LEVEL */
#define FT_TOP_BUFFER_LEVEL	2
#define FtLevelIsBuffer(level) ((level) >= 1 && (level) <= FT_TOP_BUFFER_LEVEL)

/* most items a page can hold (each takes a line pointer and >= 8 bytes) */
#define FT_MAX_ITEMS_PER_PAGE \
	((BLCKSZ - SizeOfPageHeaderData) / (MAXIMUM_ALIGNOF + sizeof(ItemIdData)))

/* ft_flags */
#define FT_PAGE_META		0x0001
#define FT_PAGE_LEAF		0x0002
#define FT_PAGE_BUFFER		0x0004
#define FT_PAGE_ROUTING		0x0008
#define FT_PAGE_KIND_MASK	0x000F
#define FT_PAGE_DELETED		0x0010	/* unlinked leaf awaiting reuse */

typedef struct FtPageOpaqueData
{
	uint64		ft_msn;			/* leaf: highest MSN applied by a flush;
								 * buffer node: last MSN assigned;
								 * deleted page: full XID after which it
								 * may be reused */
	BlockNumber ft_right;		/* right sibling, or InvalidBlockNumber */
	uint32		ft_nflushes;	/* buffer node: flushes out of it */
	uint32		ft_nsplits;		/* splits of this page (left half keeps it) */
	uint32		ft_nflushed;	/* buffer node: messages flushed out of it */
	uint16		ft_level;		/* 0 = leaf */
	uint16		ft_nchildren;	/* internal pages: number of pivots */
	uint16		ft_flags;
	uint8		ft_codec;		/* how the items are stored: FT_CODEC_* */
	uint8		ft_item_format; /* the owner's item layout, 0 = the first */
	uint16		ft_dict;		/* compression dictionary, 0 = none */
	uint16		ft_frame_layout;	/* compressed leaf: FT_FRAME_LAYOUT_* */
	uint16		ft_reserved2;	/* zero */
	uint16		ft_page_id;		/* FT_PAGE_ID, for page-kind identification */
} FtPageOpaqueData;

/*
 * ft_codec: FT_CODEC_NONE is the only one so far (items as line pointers
 * and bytes); compressed pages will name theirs.  A page whose codec, item
 * format or dictionary this build does not know is refused, never
 * misread.
 */
typedef enum FtCodecId
{
	FT_CODEC_NONE = 0,
	FT_CODEC_LZ4 = 1,			/* compressed leaves (ft_compress.c) */
	FT_CODEC_ZSTD = 2
} FtCodecId;

#define FT_CODEC_MAX		FT_CODEC_ZSTD
#define FT_ITEM_FORMAT_MAX	0	/* the newest item format this build reads */

/*
 * How a compressed leaf's entries are laid out once decompressed (see the
 * frame format below); 0 on every other page.
 */
#define FT_FRAME_LAYOUT_PREFIXED	0	/* each entry after its length */
/* 1: one build's layout (10c0773), never released: refused as unknown */
#define FT_FRAME_LAYOUT_PARTS		2	/* entries as in the decoded page, in
										 * parts compressed one by one */
#define FT_FRAME_LAYOUT_ROW_PARTS	3	/* each entry after its length, in
										 * parts compressed one by one */
#define FT_FRAME_LAYOUT_WIDE_PARTS	4	/* FT_FRAME_LAYOUT_PARTS whose entries
										 * take more than a decoded page */
#define FT_FRAME_LAYOUT_WIDE_ROW_PARTS	5	/* ... FT_FRAME_LAYOUT_ROW_PARTS */
#define FT_FRAME_LAYOUT_PLANE_PARTS	6	/* FT_FRAME_LAYOUT_PARTS whose parts
										 * may be byte planes */
#define FT_FRAME_LAYOUT_COLUMN_ROW_PARTS	7	/* FT_FRAME_LAYOUT_ROW_PARTS
												 * whose parts may be
												 * columns */
#define FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS	8	/* ... of a wide frame */
#define FT_FRAME_LAYOUT_MAX			FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS

/* a layout of parts (FtFrameParts): a lookup may decode one */
#define FtFrameLayoutHasParts(layout) \
	((layout) >= FT_FRAME_LAYOUT_PARTS && (layout) <= FT_FRAME_LAYOUT_MAX)
/* ... each entry after its length (a table's) */
#define FtFrameLayoutIsRows(layout) \
	((layout) == FT_FRAME_LAYOUT_ROW_PARTS || \
	 (layout) == FT_FRAME_LAYOUT_WIDE_ROW_PARTS || \
	 FtFrameLayoutMayColumns(layout))
/* ... whose parts may be byte planes (FtFramePart.filter) */
#define FtFrameLayoutMayFilter(layout) \
	((layout) == FT_FRAME_LAYOUT_WIDE_PARTS || \
	 (layout) == FT_FRAME_LAYOUT_PLANE_PARTS)
/* ... whose parts may be columns (a table's) */
#define FtFrameLayoutMayColumns(layout) \
	((layout) == FT_FRAME_LAYOUT_COLUMN_ROW_PARTS || \
	 (layout) == FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS)
/* ... decoding whole into a wide view (see FT_WIDE_VIEW_MAX below) */
#define FtFrameLayoutIsWide(layout) \
	((layout) == FT_FRAME_LAYOUT_WIDE_PARTS || \
	 (layout) == FT_FRAME_LAYOUT_WIDE_ROW_PARTS || \
	 (layout) == FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS)


typedef FtPageOpaqueData *FtPageOpaque;

/*
 * Can this build read the page's items?  Only leaves are ever compressed
 * (FT_PAGE_LEAF is checked separately, by ft_checkpage).
 */
static inline bool
ft_page_format_known(FtPageOpaque opaque)
{
	return opaque->ft_codec <= FT_CODEC_MAX &&
		(opaque->ft_codec == FT_CODEC_NONE ||
		 (opaque->ft_flags & (FT_PAGE_LEAF | FT_PAGE_DELETED)) == FT_PAGE_LEAF) &&
		opaque->ft_item_format <= FT_ITEM_FORMAT_MAX && opaque->ft_dict == 0 &&
		(opaque->ft_frame_layout == FT_FRAME_LAYOUT_PREFIXED ||
		 (FtFrameLayoutHasParts(opaque->ft_frame_layout) &&
		  opaque->ft_codec != FT_CODEC_NONE)) &&
		opaque->ft_reserved2 == 0;
}

/*
 * Not PageGetSpecialPointer: a decoded compressed leaf (ft_compress.c) is
 * a page larger than BLCKSZ in backend memory, which that macro's
 * assertions refuse.
 */
#define FtPageGetOpaque(page) \
	((FtPageOpaque) ((char *) (page) + ((PageHeader) (page))->pd_special))
#define FtPageIsCompressed(opaque)	((opaque)->ft_codec != FT_CODEC_NONE)
#define FtPageIsLeaf(opaque)	(((opaque)->ft_flags & FT_PAGE_LEAF) != 0)
#define FtPageIsBuffer(opaque)	(((opaque)->ft_flags & FT_PAGE_BUFFER) != 0)
#define FtPageIsRouting(opaque)	(((opaque)->ft_flags & FT_PAGE_ROUTING) != 0)
#define FtPageIsRightmost(opaque) ((opaque)->ft_right == InvalidBlockNumber)
#define FtPageIsDeleted(opaque) (((opaque)->ft_flags & FT_PAGE_DELETED) != 0)

#define FT_HIKEY ((OffsetNumber) 1)
#define FtFirstDataOffset(opaque) \
	(FtPageIsRightmost(opaque) ? FirstOffsetNumber : OffsetNumberNext(FT_HIKEY))
/* first message of a buffer node */
#define FtFirstMsgOffset(opaque) \
	((OffsetNumber) (FtFirstDataOffset(opaque) + (opaque)->ft_nchildren))

/*
 * A compressed leaf (ft_codec lz4 or zstd) has the high key, as any leaf,
 * and after it one item, the frame, instead of one item per entry:
 *
 *	FtFrameHeader, then the dead bits (one per entry, (nitems + 7) / 8
 *	bytes), then complen compressed bytes that decompress to rawlen bytes;
 *	then, in a table leaf, the change area (chgcap bytes, below).  The
 *	page's ft_frame_layout says what the rawlen bytes hold:
 *
 *	FT_FRAME_LAYOUT_PREFIXED: every entry, in key order, as a uint16
 *	length and its bytes (the only layout of builds before it had a name;
 *	table leaves used it until FT_FRAME_LAYOUT_ROW_PARTS).
 *
 *	FT_FRAME_LAYOUT_PARTS (index leaves): the entries in parts of at most
 *	FT_FRAME_PART_BYTES decoded, each compressed on its own, so that a
 *	lookup decodes the part that holds its key, not the whole leaf.  The
 *	compressed bytes are then, in order: an FtFrameParts (how many parts);
 *	an FtFramePart per part (its entries, its compressed and decompressed
 *	lengths); the first entry of every part but the first, as a uint16
 *	length and its bytes (what a lookup picks its part by); and each part,
 *	compressed: its entries' lengths as uint16s, then its entries, each
 *	padded with zeros to MAXALIGN as the decoded page holds them, so that
 *	decoding copies them into place at once and writes only line pointers
 *	(building the decoded page entry by entry cost as much as decompressing
 *	it: bench/RESULTS.md, session 25).  rawlen is the parts' sum.
 *
 *	FT_FRAME_LAYOUT_ROW_PARTS (table leaves): parts and a directory as
 *	FT_FRAME_LAYOUT_PARTS, of at most FT_TABLE_FRAME_PART_BYTES decoded,
 *	but each part holds its entries as FT_FRAME_LAYOUT_PREFIXED does (a
 *	uint16 length, then the bytes, unpadded), and the directory names each
 *	part's first entry by its key alone (the row id).  A table's decoded
 *	entries are laid out one by one anyway, for the changes of its change
 *	area may make them longer, and the padding of FT_FRAME_LAYOUT_PARTS
 *	cost lz4 a tenth of its rows per page.
 *
 *	FT_FRAME_LAYOUT_WIDE_PARTS and FT_FRAME_LAYOUT_WIDE_ROW_PARTS: as the
 *	two above, for a frame whose entries take more than one decoded page
 *	(FtFrameNarrowCapacity, FT_FRAME_NARROW_MAX_ITEMS): it decodes whole
 *	into a wide view (below), a part at a time into a decoded page.  The
 *	index's parts may be filtered (FT_PART_FILTER_PLANES).  Builds that
 *	read only the narrow layouts refuse these pages.
 *
 *	FT_FRAME_LAYOUT_PLANE_PARTS: FT_FRAME_LAYOUT_PARTS (narrow) with
 *	filtered parts; refused by the builds before filters.
 *
 *	FT_FRAME_LAYOUT_COLUMN_ROW_PARTS and
 *	FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS: FT_FRAME_LAYOUT_ROW_PARTS and
 *	its wide form, whose parts may be columns (FT_PART_FILTER_COLUMNS);
 *	refused by the builds before columns.
 *
 * The compressed bytes never change: the frame is built only when the
 * whole leaf is rewritten (flush, build, VACUUM) and logged as a new image,
 * so redo never compresses.  Deleting entries (VACUUM, a unique insert's
 * pruning) sets their dead bits instead, outside the compressed bytes: a
 * small WAL record, and readers skip them; a table's changes of entries in
 * place go into the change area.  crc covers what never changes in place
 * (the codec, the layout, the lengths, chgcap and the compressed bytes);
 * deadcrc covers stamp, ndead, the dead bits and the change area.  stamp
 * changes with every change of the frame, its dead bits or its change
 * area: backends cache decoded leaves by block and stamp.
 */
typedef struct FtFrameHeader
{
	uint64		stamp;
	uint32		rawlen;
	uint32		complen;
	uint16		nitems;
	uint16		ndead;
	uint32		crc;
	uint32		deadcrc;
	uint16		chgcap;			/* bytes of the change area (0: none) */
	uint16		chglen;			/* ... used */
} FtFrameHeader;

#define FT_FRAME_HDRSZ		MAXALIGN(sizeof(FtFrameHeader))
#define FtFrameDeadBits(hdr)	((uint8 *) (hdr) + FT_FRAME_HDRSZ)
#define FtFrameDeadBytes(nitems)	(((nitems) + 7) / 8)
#define FtFrameData(hdr) \
	((char *) (hdr) + FT_FRAME_HDRSZ + FtFrameDeadBytes((hdr)->nitems))
#define FtFrameIsDead(hdr, i) \
	((FtFrameDeadBits(hdr)[(i) / 8] & (1 << ((i) % 8))) != 0)
#define FtFrameChanges(hdr)	(FtFrameData(hdr) + (hdr)->complen)

/* FT_FRAME_LAYOUT_PARTS and FT_FRAME_LAYOUT_ROW_PARTS: see above */
#define FT_FRAME_PART_BYTES		8192	/* decoded entries a part holds,
										 * at most (one entry may be more) */
#define FT_TABLE_FRAME_PART_BYTES	12288	/* ... in a table's frame (see
											 * encode_parts) */
#define FT_FRAME_MAX_PARTS		24	/* a wide frame's 128 kB in parts of
										 * at least 6.4 kB */

typedef struct FtFrameParts
{
	uint16		nparts;
	uint16		reserved;		/* zero */
} FtFrameParts;

typedef struct FtFramePart
{
	uint16		nitems;
	uint16		complen;
	uint16		rawlen;			/* lengths and entries, decompressed */
	uint16		filter;			/* FT_PART_FILTER_*: what was done to the
								 * entries before they were compressed */
} FtFramePart;

/*
 * A part's filter (FtFramePart.filter).  FT_PART_FILTER_PLANES: the part's
 * entries all take the same padded length L, and are stored as L byte
 * planes (byte j of every entry, in order, then byte j + 1, ...), each
 * byte the difference (mod 256) from the same byte of the entry before (0
 * before the first): sorted keys and their TIDs, which change little from
 * one entry to the next, become runs of zeros and small constants that the
 * codec packs several times better than the entries as they are
 * (bench/RESULTS.md, session 33).  Only an index's parts, in the layouts
 * FtFrameLayoutMayFilter names (builds before them refuse those); the
 * other layouts' parts have 0.
 */
#define FT_PART_FILTER_NONE		0
#define FT_PART_FILTER_PLANES	1
/*
 * FT_PART_FILTER_COLUMNS: a table's part whose entries (rows) all have one
 * length, stored field by field (ft_columns.c): integers as offsets from
 * a base or from the step between neighbours, doubles that are exact
 * decimals as scaled integers, the other bytes as byte planes.  The part's
 * compressed bytes are the length of what the codec decompresses to (a
 * uint16), then the codec's bytes; rawlen is the part decoded, its
 * entries each after its length as in FT_FRAME_LAYOUT_ROW_PARTS.  Only in
 * the layouts FtFrameLayoutMayColumns names.
 */
#define FT_PART_FILTER_COLUMNS	2

/*
 * A compressed table leaf's frame ends with a change area (chgcap bytes,
 * reserved when the frame is built; index frames have none): what changed
 * in its entries since, in the order it happened, applied to the decoded
 * entries by every reader.  A row version's header changed in place (xmax,
 * lock bits, the update link) or its expansion to heap's header thus costs
 * a few bytes and a small WAL record, never a re-encoded frame.  Each
 * change is an FtFrameChange and, for a patch, len bytes (unaligned); it
 * covers count consecutive entries (by frame index, dead ones included),
 * so that one DELETE or UPDATE of ascending rows takes one change per leaf
 * (ft_frame_add_change extends the last change that does the same to the
 * entry before).  deadcrc covers the used part; stamp changes with it.
 */
typedef struct FtFrameChange
{
	uint16		first;			/* frame index of the first entry changed */
	uint16		count;			/* entries first .. first + count - 1 */
	uint8		kind;			/* FT_CHANGE_* */
	uint8		transform;		/* FT_CHANGE_TRANSFORM: its number */
	uint16		start;			/* FT_CHANGE_PATCH: where in the entry */
	uint16		len;			/* ... how many bytes follow */
} FtFrameChange;

#define FT_CHANGE_PATCH		1	/* len bytes overwrite the entry at start */
#define FT_CHANGE_TRANSFORM	2	/* the entry becomes its transform */

#define FT_CHANGE_HDRSZ		sizeof(FtFrameChange)

/*
 * What one locked change of a row version may append to a compressed
 * leaf's change area: an expansion and a patch of up to 32 bytes (as one
 * piece).  A leaf whose area has less room left is rewritten into
 * compressed halves with fresh areas before a writer gets it (ft_item.c).
 */
#define FT_FRAME_CHANGE_ROOM	(2 * FT_CHANGE_HDRSZ + 32)

/* the change area a table leaf's frame reserves */
#define FT_FRAME_TABLE_CHGCAP	512

/*
 * The decoded bytes a frame holds at most: a table's frames leave a
 * quarter of a decoded page for the expansion of their row versions to
 * heap's header when they are deleted, locked or updated (ft_item.c), so
 * that a leaf can take that for a good share of its rows before it must be
 * rewritten uncompressed.
 */
#define FtFrameNarrowCapacity(tree) \
	((tree)->frame_chgcap > 0 ? FT_VIEW_CAPACITY - FT_VIEW_CAPACITY / 4 : \
	 FT_VIEW_CAPACITY)

/*
 * ... and at most, in a wide frame (FT_FRAME_LAYOUT_WIDE_*): its entries
 * decode whole into a wide view (below), and one at a time into an
 * ordinary decoded page, part by part.  A table's again leave a quarter
 * for the expansion of row versions; a transform may make an entry of a
 * wide frame FT_FRAME_ROW_GROWTH bytes longer at most (ft_compress.c), so
 * that the frame, all its entries expanded, still decodes whole.
 */
#define FT_WIDE_FRAME_BYTES		(128 * 1024)
#define FtFrameCapacity(tree) \
	((tree)->frame_chgcap > 0 ? FT_WIDE_FRAME_BYTES - FT_WIDE_FRAME_BYTES / 4 : \
	 FT_WIDE_FRAME_BYTES)
#define FT_FRAME_ROW_GROWTH		48	/* a row version expanded to heap's
									 * header grows by 28 at most */

/*
 * Most entries one frame holds: one that decodes into an ordinary decoded
 * page, so that it has line pointers for all of them (MaxOffsetNumber);
 * a wide one of a table (whose entries may each grow by
 * FT_FRAME_ROW_GROWTH); a wide one of an index, whose dead bits (one per
 * entry) then take up to 1000 bytes of the page.
 */
#define FT_FRAME_NARROW_MAX_ITEMS	2000
#define FT_FRAME_TABLE_MAX_ITEMS	2000
#define FT_FRAME_MAX_ITEMS	8000
#define FtFrameMaxItems(tree) \
	((tree)->frame_chgcap > 0 ? FT_FRAME_TABLE_MAX_ITEMS : FT_FRAME_MAX_ITEMS)

/*
 * A decoded compressed leaf is a page of FT_VIEW_SIZE bytes in backend
 * memory, laid out like a leaf (line pointers, items, the same special
 * space with codec none).  Line pointers hold offsets below 32 kB.
 */
#define FT_VIEW_SIZE		32768
#define FT_VIEW_CAPACITY \
	(FT_VIEW_SIZE - SizeOfPageHeaderData - MAXALIGN(sizeof(FtPageOpaqueData)))

/*
 * A wide frame decoded whole is a wide view: a page of up to FT_WIDE_VIEW_MAX
 * bytes in backend memory, flagged FT_PD_WIDE_VIEW in pd_flags (a flag no
 * shared page has: PostgreSQL's page check refuses it), whose line
 * pointers' offsets and pd_upper count MAXIMUM_ALIGNOF-byte units, and
 * whose special space sits after room for the line pointers of
 * FT_FRAME_MAX_ITEMS entries and a high key, the entries after it, going
 * upwards to pd_upper (the end of the view's bytes, ft_view_bytes).  Read
 * its entries with ft_page_item (never
 * PageGetItem); PageGetMaxOffsetNumber and FtPageGetOpaque work as on any
 * page.  An ordinary decoded page (FT_VIEW_SIZE) may hold part of a frame:
 * then pd_checksum is the frame index of the first entry decoded into it
 * (ft_compress.c maps its offsets to frame indexes from there).
 */
#define FT_PD_WIDE_VIEW		0x8000
#define FT_WIDE_VIEW_MAX	(256 * 1024)
#define FT_WIDE_SPECIAL \
	MAXALIGN(SizeOfPageHeaderData + (FT_FRAME_MAX_ITEMS + 1) * sizeof(ItemIdData))
#define FT_WIDE_ITEMS		(FT_WIDE_SPECIAL + MAXALIGN(sizeof(FtPageOpaqueData)))

StaticAssertDecl(FT_WIDE_VIEW_MAX / MAXIMUM_ALIGNOF <= (1 << 15),
				 "a wide view's offsets must fit line pointers");
StaticAssertDecl(FT_WIDE_ITEMS + BLCKSZ + FT_WIDE_FRAME_BYTES -
				 FT_WIDE_FRAME_BYTES / 4 +
				 FT_FRAME_TABLE_MAX_ITEMS * FT_FRAME_ROW_GROWTH <= FT_WIDE_VIEW_MAX &&
				 FT_WIDE_ITEMS + BLCKSZ + FT_WIDE_FRAME_BYTES <= FT_WIDE_VIEW_MAX,
				 "a wide frame, its high key and its expansions must fit a wide view");

#define FtViewIsWide(page) \
	((((PageHeader) (page))->pd_flags & FT_PD_WIDE_VIEW) != 0)

/*
 * A range [first, end) of the metapage's counter that its owner gave back
 * (a table: the row ids of pseudo-blocks VACUUM emptied), to be handed out
 * again once the owner's test of tag says so.
 */
typedef struct FtSeqExtent
{
	uint64		first;
	uint64		end;
	uint64		tag;			/* the owner's (a table: a full xid) */
} FtSeqExtent;

/* ranges a metapage keeps at most (the largest, when more are given back) */
#define FT_META_MAX_FREE_SEQ	32

/*
 * Metapage contents, stored right after the page header.  pd_lower covers
 * all of it, so that full-page images keep it; fields added later read as
 * zero in metapages written before them (PageInit zeroes the page, and an
 * image's hole restores as zeroes).
 */
typedef struct FtMetaData
{
	uint32		magic;
	uint32		version;
	BlockNumber root;
	uint32		root_level;		/* 0: the root is a leaf */
	uint64		seq;			/* the caller's counter (a table hands out
								 * row-id ranges from it); 0 in metapages
								 * written before it existed */
	uint64		seq_first;		/* the counter's value at creation */
	uint32		nfree_seq;		/* ranges given back, in free_seq[] */
	uint32		reserved;		/* zero */
	FtSeqExtent free_seq[FT_META_MAX_FREE_SEQ]; /* by first, disjoint */
} FtMetaData;

#define FtPageGetMeta(page) ((FtMetaData *) PageGetContents(page))

/* Internal-page pivot: downlink followed by the key (may be empty) */
typedef struct FtPivotHeader
{
	BlockNumber child;
	uint32		reserved;
} FtPivotHeader;

#define FT_PIVOT_HDRSZ	MAXALIGN(sizeof(FtPivotHeader))

/*
 * Buffer-node message: one 8-byte word (MSN in the low 56 bits, message
 * type in the high 8) followed by the key.  Small headers mean more
 * messages per buffer node, hence more messages moved per leaf write.
 */
typedef struct FtMsgHeader
{
	uint64		msn_type;
} FtMsgHeader;

#define FT_MSG_TYPE_SHIFT	56
#define FT_MSG_MAX_MSN		((UINT64CONST(1) << FT_MSG_TYPE_SHIFT) - 1)
#define FtMsgMsn(hdr)		((hdr)->msn_type & FT_MSG_MAX_MSN)
#define FtMsgType(hdr)		((int) ((hdr)->msn_type >> FT_MSG_TYPE_SHIFT))
#define FtMsgSet(hdr, msn, type) \
	((hdr)->msn_type = ((uint64) (type) << FT_MSG_TYPE_SHIFT) | (msn))

#define FT_MSG_HDRSZ	MAXALIGN(sizeof(FtMsgHeader))

/* Byte accessors for the three item kinds */
/* where the item of line pointer iid of page starts (see FT_PD_WIDE_VIEW) */
static inline Size
ft_item_offset(Page page, ItemId iid)
{
	Size		off = ItemIdGetOffset(iid);

	if (unlikely(FtViewIsWide(page)))
		off *= MAXIMUM_ALIGNOF;
	return off;
}

static inline char *
ft_page_item(Page page, OffsetNumber off, Size *len)
{
	ItemId		iid = PageGetItemId(page, off);

	*len = ItemIdGetLength(iid);
	return (char *) page + ft_item_offset(page, iid);
}

/*
 * Start fetching into the CPU cache the item at off, from byte skip on (its
 * key).  In-page binary searches fetch both candidates for their next probe
 * this way, so that its cache miss overlaps with the current comparison:
 * buffer nodes much larger than the CPU cache make these misses the main
 * cost of a search.
 */
static inline void
ft_prefetch_item(Page page, OffsetNumber off, Size skip)
{
#if defined(__GNUC__)
	__builtin_prefetch((char *) page + ft_item_offset(page, PageGetItemId(page, off)) + skip);
#endif
}

/*
 * Copy a page into backend memory for reading: only its used parts (header
 * and line pointers, items and special space), not the hole between
 * pd_lower and pd_upper.  Buffer nodes that buffer little and half-full
 * leaves are mostly hole.
 */
static inline void
ft_copy_page(char *dst, Page src)
{
	PageHeader	hdr = (PageHeader) src;

	/* the buffer manager checked the header; still, never trust it blindly */
	if (unlikely(hdr->pd_lower > hdr->pd_upper || hdr->pd_upper > BLCKSZ))
	{
		memcpy(dst, src, BLCKSZ);
		return;
	}
	memcpy(dst, src, hdr->pd_lower);
	memcpy(dst + hdr->pd_upper, (char *) src + hdr->pd_upper,
		   BLCKSZ - hdr->pd_upper);
}

/*
 * Copy a buffer node for a reader of its messages and high key only (the
 * scans of ft_scan.c).  A node that buffers nothing, as every node of an
 * index that never buffers (a unique one) and most of one that takes
 * direct inserts, is copied as its header and line pointers, its high key
 * and its special space: its pivots, which such a reader never looks at,
 * are left out (in the copy their line pointers point to garbage).
 */
static inline void
ft_copy_node_messages(char *dst, Page src)
{
	PageHeader	hdr = (PageHeader) src;
	FtPageOpaque opaque = FtPageGetOpaque(src);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(src);
	ItemId		hk;

	if (unlikely(hdr->pd_lower > hdr->pd_upper ||
				 hdr->pd_upper > hdr->pd_special ||
				 hdr->pd_special > BLCKSZ) ||
		FtFirstMsgOffset(opaque) <= maxoff)
	{
		ft_copy_page(dst, src);
		return;
	}
	if (!FtPageIsRightmost(opaque))
	{
		if (unlikely(maxoff < FT_HIKEY))
		{
			ft_copy_page(dst, src);
			return;
		}
		hk = PageGetItemId(src, FT_HIKEY);
		if (unlikely(ItemIdGetOffset(hk) < hdr->pd_upper ||
					 ItemIdGetOffset(hk) + ItemIdGetLength(hk) > hdr->pd_special))
		{
			ft_copy_page(dst, src);
			return;
		}
		memcpy(dst + ItemIdGetOffset(hk), (char *) src + ItemIdGetOffset(hk),
			   ItemIdGetLength(hk));
	}
	memcpy(dst, src, hdr->pd_lower);
	memcpy(dst + hdr->pd_special, (char *) src + hdr->pd_special,
		   BLCKSZ - hdr->pd_special);
}

static inline FtPivotHeader *
ft_pivot(Page page, OffsetNumber off, char **key, Size *keylen)
{
	Size		len;
	char	   *p = ft_page_item(page, off, &len);

	*key = p + FT_PIVOT_HDRSZ;
	*keylen = len - FT_PIVOT_HDRSZ;
	return (FtPivotHeader *) p;
}

static inline FtMsgHeader *
ft_msg(Page page, OffsetNumber off, char **key, Size *keylen)
{
	Size		len;
	char	   *p = ft_page_item(page, off, &len);

	*key = p + FT_MSG_HDRSZ;
	*keylen = len - FT_MSG_HDRSZ;
	return (FtMsgHeader *) p;
}

static inline BlockNumber
ft_child_block(Page page, int childidx)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	ItemId		iid = PageGetItemId(page, FtFirstDataOffset(opaque) + childidx);

	return ((FtPivotHeader *) PageGetItem(page, iid))->child;
}

/*
 * An in-place change of a leaf by a flush (also the block data of its WAL
 * record): this header, then ndeleted OffsetNumbers of the old page
 * (ascending), then ninserted items, each a uint16 final offset, a uint16
 * length and the bytes, in ascending offset order.  With
 * FT_LEAF_DELTA_SPLIT the leaf becomes the left page of a split: its high
 * key is one of the inserted items (offset 1), its right link becomes
 * right, and the split is counted.  delete_from (a split's tail): every old
 * offset from it on is deleted too, without being listed.
 */
typedef struct FtLeafDelta
{
	uint64		msn;			/* the leaf's new ft_msn, if higher */
	uint16		ndeleted;
	uint16		ninserted;
	uint16		flags;
	OffsetNumber delete_from;	/* old offsets >= this go too (a split's
								 * tail), or InvalidOffsetNumber */
	BlockNumber right;			/* FT_LEAF_DELTA_SPLIT: the new right link */
} FtLeafDelta;

#define FT_LEAF_DELTA_COUNT_FLUSH	0x0001
#define FT_LEAF_DELTA_SPLIT			0x0002

/* Page-level helpers shared with redo (ft_page.c) */
extern void ft_meta_set_seq(Page page, uint64 seq);
extern void ft_meta_set_free_seq(Page page, const FtSeqExtent *ranges,
								 uint32 n);
extern bool ft_leaf_delta_valid(const char *delta, Size len);
extern void ft_apply_leaf_delta(Page leaf, const char *delta);
extern bool ft_apply_patches(Page page, const char *payload, Size len);
extern void ft_page_init(Page page, uint16 flags, uint16 level);
extern void ft_leaf_page_init(Page page, FtPageOpaque template);
extern void ft_page_add_item(Page page, const char *item, Size len, OffsetNumber off);
extern void ft_meta_init(Page page, BlockNumber root, uint32 root_level);
extern void ft_apply_move_lower(Page lower, const char *payload, int nmoved,
								uint64 lower_msn);
extern void ft_apply_move_upper(Page upper, OffsetNumber *moved, int nmoved);
extern uint32 ft_frame_deadcrc(const FtFrameHeader *hdr);
extern bool ft_frame_add_change(FtFrameHeader *hdr, uint64 stamp,
								const FtFrameChange *chg, const char *bytes,
								bool check);
extern bool ft_frame_change_fits(const FtFrameHeader *hdr,
								 const FtFrameChange *chg);
extern void ft_frame_set_dead(FtFrameHeader *hdr, uint64 stamp,
							  const uint16 *idx, int n);
extern void ft_apply_merge_to_node(Page page, int a, int k, BlockNumber target);
extern void ft_apply_flush_to_buffer_node(Page page, OffsetNumber slice_first,
										  uint16 nslice, OffsetNumber pivot_off,
										  char **pivots, Size *pivotlens,
										  int npivots, bool count_flush);

#endif							/* FT_PAGE_H */
