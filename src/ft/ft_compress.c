/*-------------------------------------------------------------------------
 *
 * ft_compress.c
 *	  Compressed leaves: building a leaf's frame, cutting items into
 *	  compressed leaves (as full as they fit, or sharing them evenly when a
 *	  leaf splits), decoding a leaf for readers
 *	  (with a backend cache of decoded leaves), and deletes that only set
 *	  dead bits.
 *
 * The frame format is described in ft_page.h.  A compressed leaf is still
 * one 8 kB page in shared buffers, with the high key outside the frame.
 * Readers see it decoded: a page of FT_VIEW_SIZE bytes in backend memory,
 * laid out like an uncompressed leaf, so every in-page search and the
 * merges work on it unchanged.  It is built from the shared page under the
 * caller's buffer lock and never written back.
 *
 * Decoded leaves are cached per backend (fractam.decoded_leaf_cache, in
 * kB), keyed by relation file and block and checked against the frame's
 * stamp and checksums, which change with every change of the frame: an LSN
 * would not do, as it does not move on unlogged or temporary relations.
 * The stamps come from a shared counter started at the server's start
 * time in microseconds, so they do not repeat across restarts either.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "port/pg_crc32c.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "wal/ft_xlog.h"

/* fractam.decoded_leaf_cache: kB of decoded leaves each backend keeps */
static int	decoded_leaf_cache_kb = 8192;

#define CACHE_WAYS	4

typedef struct ViewSlot
{
	RelFileNode node;
	BlockNumber blkno;
	uint64		stamp;
	uint32		crc;
	uint32		deadcrc;
	uint64		used;			/* tick of the last use; 0: empty */
	int			part;			/* -1: the whole leaf; else the part of a
								 * frame of parts decoded
								 * (ft_leaf_view_part) */
	char	   *view;			/* FT_VIEW_SIZE bytes (FT_WIDE_VIEW_MAX in
								 * wide_slots) */
} ViewSlot;

static MemoryContext cache_cxt = NULL;
static ViewSlot *slots = NULL;
static int	nsets = 0;
static uint64 tick = 0;

/*
 * Wide frames decoded whole (wide views, FT_PD_WIDE_VIEW), outside the
 * sets: whole-leaf readers (flushes, VACUUM, direct inserts, verify) need
 * them, and they would take a set's ways eight times over; lookups and
 * scans decode such a frame part by part into the sets.
 */
#define WIDE_WAYS	2
static ViewSlot wide_slots[WIDE_WAYS + 1];	/* the last: never cached */

/*
 * Decoded leaves that an item reference (FtItemRef) points into: never
 * evicted or reused while so, since the reference's holder keeps reading
 * and may patch it (ft_item.c).  At most a few at a time.
 */
#define MAX_PROTECTED_VIEWS 4
static char *protected_views[MAX_PROTECTED_VIEWS];
static int	nprotected = 0;

/*
 * Decoded leaves outside the cache (cache disabled, or every way of a set
 * protected), one more than can be protected; and scratch space.
 */
#define NSPARE_VIEWS (MAX_PROTECTED_VIEWS + 1)
static char *spare_views[NSPARE_VIEWS];
static char *raw_buf = NULL;
static char *planes_buf = NULL;
static bool plane_filter = true;	/* fractam.debug_index_planes */
static char *columns_buf = NULL;
static bool column_filter = true;	/* fractam.debug_table_columns */
static char *comp_buf = NULL;
static Size comp_cap = 0;

/* the shared stamp counter */
typedef struct FrameStamps
{
	pg_atomic_uint64 next;
} FrameStamps;

static FrameStamps *frame_stamps = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static char *
scratch(char **p, Size size)
{
	if (*p == NULL)
		*p = MemoryContextAlloc(TopMemoryContext, size);
	return *p;
}

static bool
is_protected(const char *view)
{
	for (int i = 0; i < nprotected; i++)
		if (protected_views[i] == view)
			return true;
	return false;
}

/* a decoded leaf outside the cache that no reference points into */
static char *
spare_view(void)
{
	for (int i = 0; i < NSPARE_VIEWS; i++)
		if (!is_protected(spare_views[i]) || spare_views[i] == NULL)
			return scratch(&spare_views[i], FT_VIEW_SIZE);
	elog(ERROR, "fractam: no decoded leaf left to decode into");
	return NULL;				/* keep compiler quiet */
}

/* An item reference points into decoded leaf view from now on */
void
ft_leaf_view_protect(Page view)
{
	if (nprotected >= MAX_PROTECTED_VIEWS)
		elog(ERROR, "fractam: too many references into decoded leaves");
	protected_views[nprotected++] = (char *) view;
}

/* ... no longer (one reference: view may stay protected by another) */
void
ft_leaf_view_unprotect(Page view)
{
	for (int i = nprotected - 1; i >= 0; i--)
		if (protected_views[i] == (char *) view)
		{
			protected_views[i] = protected_views[--nprotected];
			return;
		}
}

/* An abort: the references are gone with the buffer locks they needed */
void
ft_leaf_view_unprotect_all(void)
{
	nprotected = 0;
}

/* A stamp no frame of this cluster carried before */
static uint64
new_stamp(void)
{
	if (frame_stamps == NULL)
		elog(ERROR, "fractam: shared memory is not set up (is fractam in shared_preload_libraries?)");
	return pg_atomic_fetch_add_u64(&frame_stamps->next, 1);
}

static uint32
frame_crc(FtCodecId codec, uint16 layout, const FtFrameHeader *hdr,
		  const char *data)
{
	pg_crc32c	crc;
	uint8		c = (uint8) codec;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &c, 1);
	if (layout != FT_FRAME_LAYOUT_PREFIXED)
		COMP_CRC32C(crc, &layout, sizeof(layout));
	COMP_CRC32C(crc, &hdr->rawlen, sizeof(hdr->rawlen));
	COMP_CRC32C(crc, &hdr->complen, sizeof(hdr->complen));
	COMP_CRC32C(crc, &hdr->nitems, sizeof(hdr->nitems));
	if (hdr->chgcap > 0)
		COMP_CRC32C(crc, &hdr->chgcap, sizeof(hdr->chgcap));
	COMP_CRC32C(crc, data, hdr->complen);
	FIN_CRC32C(crc);
	return crc;
}

/* the page space items[0..n) take */
static Size
items_space(char **items, Size *lens, int n)
{
	Size		total = 0;

	for (int i = 0; i < n; i++)
		total += ft_item_space(lens[i]);
	return total;
}

/*
 * Does a decoded page have room for n entries taking itemsbytes
 * (MAXALIGNed) with their line pointers, and a high key taking hikeyspace
 * (0: none)?  (A frame's entries always fit; a corrupt frame's may not.)
 */
static inline bool
view_layout_fits(int n, Size itemsbytes, Size hikeyspace)
{
	return SizeOfPageHeaderData + n * sizeof(ItemIdData) + hikeyspace +
		itemsbytes + MAXALIGN(sizeof(FtPageOpaqueData)) <= FT_VIEW_SIZE;
}

/* ... a wide view (FT_PD_WIDE_VIEW)? */
static inline bool
wide_layout_fits(int n, Size itemsbytes, Size hikeyspace)
{
	return n <= FT_FRAME_MAX_ITEMS &&
		FT_WIDE_ITEMS + hikeyspace + itemsbytes <= FT_WIDE_VIEW_MAX;
}

/* comp_buf: a frame of any layout, with room to spare */
static void
setup_comp_buf(void)
{
	if (comp_buf == NULL)
	{
		comp_cap = FT_FRAME_HDRSZ + FtFrameDeadBytes(FT_FRAME_MAX_ITEMS) +
			sizeof(FtFrameParts) + FT_FRAME_MAX_PARTS * sizeof(FtFramePart) +
			FT_FRAME_MAX_PARTS * (sizeof(uint16) + FT_MAX_ITEM_SIZE) +
			Max(ft_codec_bound(FT_CODEC_LZ4, FT_WIDE_VIEW_MAX),
				ft_codec_bound(FT_CODEC_ZSTD, FT_WIDE_VIEW_MAX)) +
			(FT_FRAME_MAX_PARTS + 1) *
			Max(ft_codec_bound(FT_CODEC_LZ4, 0), ft_codec_bound(FT_CODEC_ZSTD, 0)) +
			PG_UINT16_MAX;
		comp_buf = MemoryContextAlloc(TopMemoryContext, comp_cap);
	}
}

/*
 * Parts compressed lately, with their raw bytes.
 *
 * Fill to fit (cut_compressed_pass) finds how many entries a compressed
 * leaf takes by encoding candidate frames, a few per page, and then writes
 * the page with one of them.  The candidates of a page start at the same
 * entry, and a frame's parts are cut by decoded bytes from its first
 * entry, so they share every part but the last: compressing each part
 * once, instead of each candidate whole, takes most of the codec's work
 * out of a flush into compressed leaves (bench/RESULTS.md, session 28).
 * A part is reused only if its raw bytes, codec and level are equal (the
 * lengths at the start of an index part's raw bytes tell most others
 * apart at once), so the result never depends on what was encoded
 * before: the frame's bytes are what compressing would have given.
 */
#define PART_MEMO_SLOTS 32		/* a wide frame's parts, and more */
#define PART_MEMO_RAW_MAX 16384	/* a part's raw bytes: entries of at most
								 * FT_TABLE_FRAME_PART_BYTES, a last one
								 * that crosses it, and their lengths */

typedef struct PartMemo
{
	uint64		used;			/* tick of the last use; 0: empty */
	uint16		rawlen;
	uint16		complen;
	uint16		filter;			/* FT_PART_FILTER_NONE or _COLUMNS */
	FtCodecId	codec;
	int			level;
	char	   *raw;			/* PART_MEMO_RAW_MAX bytes */
	char	   *comp;			/* the codecs' bound for as many */
} PartMemo;

static PartMemo part_memo[PART_MEMO_SLOTS];
static uint64 part_memo_tick = 0;

/*
 * The memo's entry for len raw bytes at src compressed after filter
 * (FT_PART_FILTER_NONE or FT_PART_FILTER_COLUMNS) into at most cap bytes,
 * or NULL with *victim the entry to replace (NULL: not to be kept).
 */
static PartMemo *
memo_find(FtTree *tree, const char *src, Size len, uint16 filter, Size cap,
		  PartMemo **victim)
{
	*victim = NULL;
	if (len > PART_MEMO_RAW_MAX)
		return NULL;
	*victim = &part_memo[0];
	for (int i = 0; i < PART_MEMO_SLOTS; i++)
	{
		PartMemo   *m = &part_memo[i];

		if (m->used != 0 && m->rawlen == len && m->filter == filter &&
			m->codec == tree->codec && m->level == tree->codec_level &&
			m->complen <= cap && memcmp(m->raw, src, len) == 0)
		{
			m->used = ++part_memo_tick;
			return m;
		}
		if (m->used < (*victim)->used)
			*victim = m;
	}
	return NULL;
}

static void
memo_keep(FtTree *tree, PartMemo *victim, const char *src, Size len,
		  uint16 filter, const char *comp, Size n)
{
	Size		bound = Max(ft_codec_bound(FT_CODEC_LZ4, PART_MEMO_RAW_MAX),
							ft_codec_bound(FT_CODEC_ZSTD, PART_MEMO_RAW_MAX));

	if (victim == NULL || n > bound)
		return;
	scratch(&victim->raw, PART_MEMO_RAW_MAX);
	scratch(&victim->comp, bound);
	memcpy(victim->raw, src, len);
	memcpy(victim->comp, comp, n);
	victim->rawlen = (uint16) len;
	victim->complen = (uint16) n;
	victim->filter = filter;
	victim->codec = tree->codec;
	victim->level = tree->codec_level;
	victim->used = ++part_memo_tick;
}

/* compress len bytes of src to dst (cap bytes), for encode_frame */
static Size
compress_or_fail(FtTree *tree, const char *src, Size len, char *dst, Size cap)
{
	Size		n;
	PartMemo   *victim;
	PartMemo   *m = memo_find(tree, src, len, FT_PART_FILTER_NONE, cap, &victim);

	if (m)
	{
		memcpy(dst, m->comp, m->complen);
		return m->complen;
	}
	n = ft_codec_compress(tree->codec, tree->codec_level, src, len, dst, cap);
	if (n == 0)
		elog(ERROR, "fractam: %s failed to compress %zu bytes",
			 ft_codec_name(tree->codec), len);
	memo_keep(tree, victim, src, len, FT_PART_FILTER_NONE, dst, n);
	return n;
}

/*
 * A table's part (its rows items[0..n) of itemlen bytes each, laid out as
 * raw, rawlen bytes) as columns, compressed into dst (cap bytes): the
 * columns' length, then the codec's bytes (FT_PART_FILTER_COLUMNS).
 * Returns the length, or 0 if the rows are not to be stored as columns.
 * The memo keeps the result by the rows' bytes: the candidates of fill to
 * fit share parts, and encoding the columns costs as much as compressing.
 * (Equal rows of another table, whose columns have other types, may get
 * this table's columns from it: a part says how its own columns are
 * stored, so they decode all the same.)
 */
static Size
compress_columns(FtTree *tree, const char *raw, Size rawlen, char **items,
				 int n, Size itemlen, char *dst, Size cap)
{
	char	   *cols = scratch(&columns_buf, PG_UINT16_MAX);
	PartMemo   *victim;
	PartMemo   *m = memo_find(tree, raw, rawlen, FT_PART_FILTER_COLUMNS, cap,
							  &victim);
	Size		enclen;
	Size		c;
	uint16		e16;

	if (m)
	{
		memcpy(dst, m->comp, m->complen);
		return m->complen;
	}
	if (cap <= sizeof(uint16))
		return 0;
	enclen = ft_columns_encode(tree, items, n, itemlen, cols, PG_UINT16_MAX);
	if (enclen == 0)
		return 0;
	e16 = (uint16) enclen;
	memcpy(dst, &e16, sizeof(e16));
	c = ft_codec_compress(tree->codec, tree->codec_level, cols, enclen,
						  dst + sizeof(uint16), cap - sizeof(uint16));
	if (c == 0)
		elog(ERROR, "fractam: %s failed to compress %zu bytes",
			 ft_codec_name(tree->codec), enclen);
	memo_keep(tree, victim, raw, rawlen, FT_PART_FILTER_COLUMNS, dst,
			  sizeof(uint16) + c);
	return sizeof(uint16) + c;
}

/*
 * encode_frame: the entries cut into parts, each compressed alone (see
 * ft_page.h), and after them a change area of chgcap bytes.  An index's
 * frame (no change area) takes layout FT_FRAME_LAYOUT_PARTS, a table's
 * FT_FRAME_LAYOUT_ROW_PARTS (*layout), or their wide forms if the entries
 * and the high key (hikeyspace) take more than the decoded page of
 * FtFrameNarrowCapacity.  room is what the frame may take on its page.
 * A frame that would not fit room is not compressed to its end: *need is
 * then an estimate from the parts compressed.
 */
static Size
encode_parts(FtTree *tree, char **items, Size *lens, int n, Size room,
			 Size chgcap, Size hikeyspace, Size *need, uint16 *layout)
{
	char	   *raw = scratch(&raw_buf, FT_WIDE_VIEW_MAX);
	Size		dead = FtFrameDeadBytes(n);
	char	   *data;
	Size		cap;
	Size		pos;
	Size		itemsbytes = 0;
	Size		acc = 0;
	int			start[FT_FRAME_MAX_PARTS + 1];
	Size		partbytes[FT_FRAME_MAX_PARTS] PG_USED_FOR_ASSERTS_ONLY;
	FtFrameParts fp;
	FtFramePart parts[FT_FRAME_MAX_PARTS];
	FtFrameHeader hdr;
	Size		rawtotal;
	int			np = 0;
	bool		filtered = false;

	bool		rows = (chgcap > 0);

	/*
	 * A table's frame (24 kB of rows decoded at most) in two parts: a point
	 * read decodes 12 kB instead of 24, and lz4, which finds fewer matches
	 * in smaller parts, loses less than with three (bench/RESULTS.md,
	 * session 27).
	 */
	Size		partbytes_max = rows ? FT_TABLE_FRAME_PART_BYTES :
		FT_FRAME_PART_BYTES;

	Size		rawdone = 0;
	Size		rawall = 0;

	*layout = rows ? FT_FRAME_LAYOUT_ROW_PARTS : FT_FRAME_LAYOUT_PARTS;

	/* the cuts: a part ends before the entry that would overflow it */
	start[0] = 0;
	for (int i = 0; i < n; i++)
	{
		Size		space = MAXALIGN(lens[i]);

		Assert(lens[i] > 0 && lens[i] <= PG_UINT16_MAX);
		if (acc > 0 && acc + space > partbytes_max)
		{
			/* a wide frame holds at most 20 parts of 6.4 kB */
			if (np + 1 >= FT_FRAME_MAX_PARTS)
				elog(ERROR, "fractam: a frame of %d entries needs more than %d parts",
					 n, FT_FRAME_MAX_PARTS);
			partbytes[np++] = acc;
			start[np] = i;
			acc = 0;
		}
		acc += space;
		itemsbytes += space;
	}
	partbytes[np++] = acc;
	start[np] = n;

	/* an index's parts of entries of one length go as planes */
	memset(parts, 0, sizeof(parts));
	for (int p = 0; p < np && !rows && plane_filter; p++)
	{
		Size		len = MAXALIGN(lens[start[p]]);
		bool		same = (start[p + 1] - start[p] >= 2);

		for (int i = start[p] + 1; i < start[p + 1] && same; i++)
			same = (MAXALIGN(lens[i]) == len);
		if (same)
		{
			parts[p].filter = FT_PART_FILTER_PLANES;
			filtered = true;
		}
	}
	/* a table's parts of rows of one length go as columns, if they can */
	for (int p = 0; p < np && rows && column_filter && tree->row_fields; p++)
	{
		bool		same = true;

		for (int i = start[p] + 1; i < start[p + 1] && same; i++)
			same = (lens[i] == lens[start[p]]);
		if (same)
		{
			parts[p].filter = FT_PART_FILTER_COLUMNS;
			filtered = true;
		}
	}
	if (filtered)
		*layout = rows ? FT_FRAME_LAYOUT_COLUMN_ROW_PARTS :
			FT_FRAME_LAYOUT_PLANE_PARTS;
	if (itemsbytes + n * sizeof(ItemIdData) + hikeyspace >
		FtFrameNarrowCapacity(tree) || n > FT_FRAME_NARROW_MAX_ITEMS)
	{
		Assert(wide_layout_fits(n, itemsbytes, hikeyspace));
		*layout = rows ?
			(filtered ? FT_FRAME_LAYOUT_WIDE_COLUMN_ROW_PARTS :
			 FT_FRAME_LAYOUT_WIDE_ROW_PARTS) :
			FT_FRAME_LAYOUT_WIDE_PARTS;
	}
	for (int i = 0; i < n; i++)
		rawall += sizeof(uint16) + (rows ? lens[i] : MAXALIGN(lens[i]));

	setup_comp_buf();
	data = comp_buf + FT_FRAME_HDRSZ + dead;
	cap = comp_cap - FT_FRAME_HDRSZ - dead - chgcap;

	/*
	 * The directory: counts, then the key of each part's first entry but
	 * the first's (the whole entry, but in a tree whose keys are a prefix of
	 * its items: a table's row id).
	 */
	pos = sizeof(FtFrameParts) + np * sizeof(FtFramePart);
	for (int p = 1; p < np; p++)
	{
		uint16		l16 = (uint16) ft_key_len(tree, lens[start[p]]);

		memcpy(data + pos, &l16, sizeof(l16));
		pos += sizeof(l16);
		memcpy(data + pos, items[start[p]], l16);
		pos += l16;
	}

	/*
	 * The parts: an index's lengths, then its entries as the decoded page
	 * holds them; a table's entries each after its length.
	 */
	rawtotal = 0;
	for (int p = 0; p < np; p++)
	{
		Size		rawlen = 0;

		for (int i = start[p]; i < start[p + 1]; i++)
		{
			uint16		l16 = (uint16) lens[i];

			memcpy(raw + rawlen, &l16, sizeof(l16));
			rawlen += sizeof(l16);
			if (rows)
			{
				memcpy(raw + rawlen, items[i], lens[i]);
				rawlen += lens[i];
			}
		}
		for (int i = start[p]; i < start[p + 1] && !rows; i++)
		{
			memcpy(raw + rawlen, items[i], lens[i]);
			memset(raw + rawlen + lens[i], 0, MAXALIGN(lens[i]) - lens[i]);
			rawlen += MAXALIGN(lens[i]);
		}
		Assert(rows ||
			   rawlen == partbytes[p] + (start[p + 1] - start[p]) * sizeof(uint16));
		Assert(rawlen <= PG_UINT16_MAX);
		if (parts[p].filter == FT_PART_FILTER_PLANES)
		{
			int			pn = start[p + 1] - start[p];
			Size		lensbytes = pn * sizeof(uint16);
			char	   *planes = scratch(&planes_buf, PG_UINT16_MAX);

			ft_planes_encode(raw + lensbytes, planes, pn,
							 MAXALIGN(lens[start[p]]));
			memcpy(raw + lensbytes, planes, rawlen - lensbytes);
		}
		rawtotal += rawlen;
		parts[p].nitems = (uint16) (start[p + 1] - start[p]);
		parts[p].rawlen = (uint16) rawlen;
		if (parts[p].filter == FT_PART_FILTER_COLUMNS)
		{
			parts[p].complen = (uint16)
				compress_columns(tree, raw, rawlen, items + start[p],
								 start[p + 1] - start[p], lens[start[p]],
								 data + pos, cap - pos);
			if (parts[p].complen == 0)
			{
				/* the rows as they are, in a layout that allows columns */
				parts[p].filter = FT_PART_FILTER_NONE;
				parts[p].complen = (uint16) compress_or_fail(tree, raw, rawlen,
															 data + pos, cap - pos);
			}
		}
		else
			parts[p].complen = (uint16) compress_or_fail(tree, raw, rawlen,
														 data + pos, cap - pos);
		pos += parts[p].complen;
		rawdone += rawlen;

		/* too large already: the rest at the ratio so far */
		if (FT_FRAME_HDRSZ + dead + pos + chgcap > room && p + 1 < np)
		{
			*need = FT_FRAME_HDRSZ + dead + chgcap +
				(Size) ((double) pos * rawall / rawdone);
			return 0;
		}
	}
	fp.nparts = (uint16) np;
	fp.reserved = 0;
	memcpy(data, &fp, sizeof(fp));
	memcpy(data + sizeof(fp), parts, np * sizeof(FtFramePart));

	*need = FT_FRAME_HDRSZ + dead + pos + chgcap;
	if (*need > room)
		return 0;

	memset(&hdr, 0, sizeof(hdr));
	Assert(rows || rawtotal == n * sizeof(uint16) + itemsbytes);
	hdr.rawlen = (uint32) rawtotal;
	hdr.complen = (uint32) pos;
	hdr.nitems = (uint16) n;
	hdr.chgcap = (uint16) chgcap;
	hdr.chglen = 0;
	hdr.crc = frame_crc(tree->codec, *layout, &hdr, data);
	memset(comp_buf, 0, FT_FRAME_HDRSZ + dead);
	memcpy(comp_buf, &hdr, sizeof(hdr));
	memset(data + pos, 0, chgcap);
	return *need;
}

/*
 * Compress items[0..n) into a frame (in comp_buf) for a leaf page that also
 * holds a high key taking hikeyspace bytes (0: none).  Returns the frame's
 * length if it fits on the page, else 0; *need is the length the frame has
 * (0 if the items would not even fit a decoded page).  *layout is how the
 * entries are laid out (the page's ft_frame_layout): in parts, for index
 * and table leaves alike, so that a point read decodes one part (a table's
 * frames of the prefixed layout, which earlier builds wrote, are read).
 */
static Size
encode_frame(FtTree *tree, char **items, Size *lens, int n, Size hikeyspace,
			 Size *need, uint16 *layout)
{
	Size		room;

	*need = 0;
	*layout = FT_FRAME_LAYOUT_PARTS;	/* until encode_parts says */
	if (n <= 0 || n > FtFrameMaxItems(tree) ||
		items_space(items, lens, n) + hikeyspace > FtFrameCapacity(tree))
		return 0;
	room = MAXALIGN_DOWN(FT_LEAF_CAPACITY - hikeyspace - sizeof(ItemIdData));
	return encode_parts(tree, items, lens, n, room, tree->frame_chgcap,
						hikeyspace, need, layout);
}

/*
 * Write items[0..n) (ascending) into page as one compressed leaf with the
 * special space of template and high key hikey (NULL: no right sibling).
 * False, with page untouched, if they do not fit.
 */
bool
ft_leaf_compress(FtTree *tree, Page page, FtPageOpaque template,
				 char **items, Size *lens, int n,
				 const char *hikey, Size hikeylen)
{
	Size		hikeyspace = hikey ? ft_item_space(hikeylen) : 0;
	Size		framelen;
	Size		need;
	uint16		layout;
	FtFrameHeader *hdr;
	FtPageOpaque opaque;
	OffsetNumber off = FirstOffsetNumber;

	Assert(tree->codec != FT_CODEC_NONE);
	Assert((hikey != NULL) == (template->ft_right != InvalidBlockNumber));
	framelen = encode_frame(tree, items, lens, n, hikeyspace, &need, &layout);
	if (framelen == 0)
		return false;

	/* the stamp and deadcrc are set last: both are outside hdr->crc */
	hdr = (FtFrameHeader *) comp_buf;
	hdr->stamp = new_stamp();
	hdr->deadcrc = ft_frame_deadcrc(hdr);

	ft_leaf_page_init(page, template);
	opaque = FtPageGetOpaque(page);
	opaque->ft_codec = (uint8) tree->codec;
	opaque->ft_frame_layout = layout;
	if (hikey)
		ft_page_add_item(page, hikey, hikeylen, off++);
	ft_page_add_item(page, comp_buf, framelen, off);
	return true;
}

/*
 * One pass of ft_cut_compressed: pages of at most cap bytes of items once
 * decoded, each as full as fits within that.
 *
 * Each page's count is guessed from the items that fit decoded, then
 * corrected in proportion to the compressed size that guess gave, a few
 * times at most.  The guesses compress what they test (a few tens of
 * microseconds each with lz4, a few hundred with zstd), so they are few.
 */
static int
cut_compressed_pass(FtTree *tree, char **items, Size *lens, int n,
					Size last_hikey_space, int *starts, int maxpages, Size cap)
{
	int			i = 0;
	int			p = 0;
	int			prev = 0;		/* the count the page before took */

	while (i < n)
	{
		int			k = 0;
		int			good = 0;
		int			bad;
		Size		space = 0;

		if (p >= maxpages)
			return -1;
		starts[p++] = i;

		/* as many as fit decoded, with room for the high key */
		while (i + k < n && k < FtFrameMaxItems(tree))
		{
			Size		hk = (i + k + 1 < n) ?
				ft_item_space(ft_key_len(tree, lens[i + k + 1])) : last_hikey_space;

			if (space + ft_item_space(lens[i + k]) + hk > cap)
				break;
			space += ft_item_space(lens[i + k]);
			k++;
		}
		k = Max(k, 1);
		bad = k + 1;			/* the least count known not to fit */

		/*
		 * Pages of one cut hold similar entries: start at the count the
		 * page before took (a wide frame's decoded bytes are many pages'
		 * worth, so the count that fills them is a poor first guess).
		 */
		if (prev > 0 && prev < k)
			k = prev;

		for (int tries = 0; tries < 6 && good + 1 < bad; tries++)
		{
			Size		hk = (i + k < n) ?
				ft_item_space(ft_key_len(tree, lens[i + k])) : last_hikey_space;
			Size		room = FT_LEAF_CAPACITY - hk - sizeof(ItemIdData);
			Size		need;
			uint16		layout;
			double		scale;

			if (encode_frame(tree, items + i, lens + i, k, hk, &need, &layout) > 0)
				good = k;
			else
				bad = k;
			if (good + 1 >= bad)
				break;
			/* the count the room would take at this ratio, a little less */
			scale = need > 0 ? (double) room / need * 0.97 : 0.5;
			k = (int) (k * scale);
			k = Min(Max(k, good + 1), bad - 1);
		}
		/* a single item always fits (it is at most a fifth of a page) */
		i += Max(good, 1);
		prev = Max(good, 1);
	}
	return p;
}

/*
 * Cut items[0..n) into compressed leaves ("fill to fit").  starts[p] is the
 * index of page p's first item; the last page's high key takes
 * last_hikey_space bytes.  Returns the number of pages, or -1 if more than
 * maxpages are needed.
 *
 * Without even, each page holds as many items as fit once compressed: right
 * for builds and for the sealed pages behind an append point, which take no
 * more entries.  With even, the same number of pages share the items about
 * equally instead, as a leaf that splits under random inserts should: cut
 * greedily, a full leaf that takes a few more entries would split into a
 * full page and a nearly empty one, and split again at its next flush,
 * leaving a trail of nearly empty compressed leaves.
 */
int
ft_cut_compressed(FtTree *tree, char **items, Size *lens, int n,
				  Size last_hikey_space, int *starts, int maxpages, bool even)
{
	int			np = cut_compressed_pass(tree, items, lens, n, last_hikey_space,
										 starts, maxpages, FtFrameCapacity(tree));

	if (even && np > 1)
	{
		int		   *alt = palloc(sizeof(int) * maxpages);
		Size		total = 0;
		Size		cap;
		int			na;

		for (int i = 0; i < n; i++)
			total += ft_item_space(lens[i]);
		/* a share of the items, with a margin for the high keys */
		cap = Min(total / np + total / (np * 16) + BLCKSZ / 16,
				  FtFrameCapacity(tree));
		na = cut_compressed_pass(tree, items, lens, n, last_hikey_space, alt,
								 maxpages, cap);
		/* keep the balanced cut unless it needs more pages */
		if (na > 0 && na <= np)
		{
			memcpy(starts, alt, sizeof(int) * na);
			np = na;
		}
		pfree(alt);
	}
	return np;
}

/* ---------------------------------------------------------------------
 * Decoding
 * ---------------------------------------------------------------------
 */

static void
corrupt(FtTree *tree, BlockNumber blkno, const char *detail)
{
	ereport(ERROR,
			(errcode(ft_corrupted_errcode(tree->rel)),
			 errmsg("%s \"%s\" has a corrupted compressed leaf at block %u",
					ft_relkind_name(tree->rel),
					RelationGetRelationName(tree->rel), blkno),
			 errdetail_internal("%s", detail),
			 ft_relation_is_index(tree->rel) ? errhint("Please REINDEX it.") : 0));
}

/*
 * The frame of compressed leaf page, its header copied to *hdr after the
 * checks of the line pointers and of the header alone (constant time: what
 * a use of a cached decoded leaf needs, ft_leaf_view).
 */
static const char *
frame_locate(FtTree *tree, BlockNumber blkno, Page page, FtFrameHeader *hdr)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber foff = FtFirstDataOffset(opaque);
	ItemId		iid;
	const char *frame;
	Size		len;

	if (PageGetMaxOffsetNumber(page) != foff)
		corrupt(tree, blkno, "The page does not hold exactly one frame.");
	if (foff != FirstOffsetNumber)
	{
		/* the high key is copied into decoded leaves: it must lie in the page */
		iid = PageGetItemId(page, FT_HIKEY);
		if (!ItemIdIsNormal(iid) || ItemIdGetLength(iid) == 0 ||
			ItemIdGetOffset(iid) < ((PageHeader) page)->pd_upper ||
			ItemIdGetOffset(iid) + ItemIdGetLength(iid) > ((PageHeader) page)->pd_special)
			corrupt(tree, blkno, "The high key's line pointer is invalid.");
	}
	iid = PageGetItemId(page, foff);
	len = ItemIdGetLength(iid);
	if (!ItemIdIsNormal(iid) || len < FT_FRAME_HDRSZ ||
		ItemIdGetOffset(iid) < ((PageHeader) page)->pd_upper ||
		ItemIdGetOffset(iid) + len > ((PageHeader) page)->pd_special)
		corrupt(tree, blkno, "The frame's line pointer is invalid.");
	frame = PageGetItem(page, iid);
	memcpy(hdr, frame, sizeof(FtFrameHeader));
	if (hdr->nitems == 0 || hdr->nitems > FT_FRAME_MAX_ITEMS ||
		hdr->ndead >= hdr->nitems || hdr->chglen > hdr->chgcap ||
		hdr->rawlen > (FtFrameLayoutIsWide(opaque->ft_frame_layout) ?
					   FT_WIDE_VIEW_MAX : FT_VIEW_SIZE) ||
		(Size) FT_FRAME_HDRSZ + FtFrameDeadBytes(hdr->nitems) + hdr->complen +
		hdr->chgcap != len)
		corrupt(tree, blkno, "The frame's header is inconsistent.");
	return frame;
}

/*
 * The frame of compressed leaf page, its header copied to *hdr after every
 * check that needs no decompression (its dead bits and change area too).
 */
static const char *
frame_of(FtTree *tree, BlockNumber blkno, Page page, FtFrameHeader *hdr)
{
	const char *frame = frame_locate(tree, blkno, page, hdr);
	int			ndead = 0;

	if (ft_frame_deadcrc((const FtFrameHeader *) frame) != hdr->deadcrc)
		corrupt(tree, blkno, "The frame's dead bits fail their checksum.");
	{
		/* bits past the last entry's do not count (they are never set) */
		const uint8 *bits = FtFrameDeadBits((const FtFrameHeader *) frame);
		int			nbytes = FtFrameDeadBytes(hdr->nitems);
		int			inlast = hdr->nitems - (nbytes - 1) * 8;

		ndead = (int) pg_popcount((const char *) bits, nbytes - 1) +
			pg_popcount32(bits[nbytes - 1] & ((1U << inlast) - 1));
	}
	if (ndead != hdr->ndead)
		corrupt(tree, blkno, "The frame's dead bits do not match its count.");
	return frame;
}

/*
 * About the page space the live entries of a table's compressed leaf take
 * decoded (ft_leaf_items_space of its decoded page), from its frame's
 * header alone: each row as stored after its length, aligned, with a line
 * pointer, and what its change area adds.  For ft_seal.c, which sizes a
 * run before it merges (and lets ft_merge_leaves find out exactly).
 */
Size
ft_leaf_frame_space(FtTree *tree, Buffer buf)
{
	FtFrameHeader hdr;
	Size		rows;
	int			live;

	(void) frame_locate(tree, BufferGetBlockNumber(buf), BufferGetPage(buf),
						&hdr);
	live = hdr.nitems - hdr.ndead;
	if (hdr.nitems == 0 || live <= 0)
		return 0;
	rows = hdr.rawlen - Min(hdr.rawlen, hdr.nitems * sizeof(uint16));
	return (Size) ((double) rows * live / hdr.nitems) +
		live * (sizeof(ItemIdData) + MAXIMUM_ALIGNOF / 2) + hdr.chglen;
}

/* the entries of the frame being decoded, in raw_buf or change_cxt */
static char *entry_ptr[FT_FRAME_MAX_ITEMS];
static Size entry_len[FT_FRAME_MAX_ITEMS];

/* where decoding keeps entries that changes replaced */
static MemoryContext change_cxt = NULL;

/*
 * Apply the change area of frame to the decoded entries (entry_ptr,
 * entry_len) of frame indexes [lo, hi), in the order the changes happened;
 * changes of other entries are checked and skipped.
 */
static void
apply_changes(FtTree *tree, BlockNumber blkno, const FtFrameHeader *frame,
			  int lo, int hi)
{
	const char *area = FtFrameChanges(frame);
	Size		pos = 0;
	MemoryContext old;

	if (change_cxt == NULL)
		change_cxt = AllocSetContextCreate(TopMemoryContext,
										   "fractam frame changes",
										   ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(change_cxt);
	old = MemoryContextSwitchTo(change_cxt);
	while (pos < frame->chglen)
	{
		FtFrameChange c;

		if (pos + FT_CHANGE_HDRSZ > frame->chglen)
			corrupt(tree, blkno, "The frame's change area ends early.");
		memcpy(&c, area + pos, FT_CHANGE_HDRSZ);
		pos += FT_CHANGE_HDRSZ;
		if (c.count == 0 || (int) c.first + c.count > frame->nitems ||
			pos + c.len > frame->chglen ||
			(c.kind != FT_CHANGE_PATCH && c.kind != FT_CHANGE_TRANSFORM))
			corrupt(tree, blkno, "A change of the frame's entries is invalid.");
		for (int i = Max(c.first, lo); i < Min(c.first + c.count, hi); i++)
		{
			if (c.kind == FT_CHANGE_PATCH)
			{
				if ((Size) c.start + c.len > entry_len[i])
					corrupt(tree, blkno, "A change of the frame's entries does not fit its entry.");
				/* entries live in raw_buf or change_cxt: both are ours */
				memcpy(entry_ptr[i] + c.start, area + pos, c.len);
			}
			else
			{
				Size		newlen;

				entry_ptr[i] = ft_item_transformed(c.transform, entry_ptr[i],
												   entry_len[i], &newlen);
				entry_len[i] = newlen;
			}
		}
		pos += c.len;
	}
	MemoryContextSwitchTo(old);
}

/*
 * Add an entry (or the high key) to decoded page view at line pointer
 * *off, below what is there: how a frame's entries are laid out when they
 * are not copied into place as their part holds them.
 */
static inline void
view_add(FtTree *tree, BlockNumber blkno, Page view, OffsetNumber *off,
		 const char *ptr, Size len)
{
	PageHeader	vh = (PageHeader) view;

	if (FtViewIsWide(view))
	{
		/* a wide view's entries go upwards from FT_WIDE_ITEMS, in units */
		Size		at = (Size) vh->pd_upper * MAXIMUM_ALIGNOF;

		if (at + MAXALIGN(len) > FT_WIDE_VIEW_MAX ||
			vh->pd_lower + sizeof(ItemIdData) > FT_WIDE_SPECIAL)
			corrupt(tree, blkno, "The entries do not fit a decoded page.");
		ItemIdSetNormal(PageGetItemId(view, *off), at / MAXIMUM_ALIGNOF, len);
		memcpy(view + at, ptr, len);
		memset(view + at + len, 0, MAXALIGN(len) - len);
		vh->pd_upper += MAXALIGN(len) / MAXIMUM_ALIGNOF;
		vh->pd_lower += sizeof(ItemIdData);
		(*off)++;
		return;
	}
	if (vh->pd_upper < MAXALIGN(len) ||
		vh->pd_upper - MAXALIGN(len) < vh->pd_lower + sizeof(ItemIdData))
		corrupt(tree, blkno, "The entries do not fit a decoded page.");
	vh->pd_upper -= MAXALIGN(len);
	ItemIdSetNormal(PageGetItemId(view, *off), vh->pd_upper, len);
	memcpy(view + vh->pd_upper, ptr, len);
	memset(view + vh->pd_upper + len, 0, MAXALIGN(len) - len);
	vh->pd_lower += sizeof(ItemIdData);
	(*off)++;
}

/* A frame of layout FT_FRAME_LAYOUT_PARTS taken apart: its directory */
typedef struct FrameParts
{
	int			nparts;
	int			start[FT_FRAME_MAX_PARTS + 1];	/* first entry of each part */
	Size		offset[FT_FRAME_MAX_PARTS + 1]; /* where each part's entries
												 * start among all entries,
												 * decoded
												 * (FT_FRAME_LAYOUT_PARTS) */
	const char *comp[FT_FRAME_MAX_PARTS];	/* each part, compressed */
	Size		complen[FT_FRAME_MAX_PARTS];
	Size		rawlen[FT_FRAME_MAX_PARTS];
	const char *first[FT_FRAME_MAX_PARTS];	/* each part's first entry, in
											 * the page (NULL for part 0) */
	Size		firstlen[FT_FRAME_MAX_PARTS];
	uint16		filter[FT_FRAME_MAX_PARTS]; /* FT_PART_FILTER_* */
} FrameParts;

static FrameParts frame_parts;

/*
 * Read the directory of frame (header hdr, checked at least by
 * frame_locate; layout FT_FRAME_LAYOUT_PARTS or FT_FRAME_LAYOUT_ROW_PARTS)
 * into frame_parts.  It reads only within the frame's compressed bytes,
 * so a part can be picked before the checksums are checked
 * (ft_leaf_view_part); decoding checks them first.
 */
static FrameParts *
parse_parts(FtTree *tree, BlockNumber blkno, const FtFrameHeader *frame,
			const FtFrameHeader *hdr, uint16 layout)
{
	FrameParts *fp = &frame_parts;
	const char *data = FtFrameData(frame);
	Size		len = hdr->complen;
	Size		pos;
	FtFrameParts dir;
	FtFramePart part;
	Size		raw = 0;
	bool		rows = FtFrameLayoutIsRows(layout);

	/* only a table's entries change in place */
	if ((!rows && hdr->chgcap != 0) || len < sizeof(FtFrameParts))
		corrupt(tree, blkno, "The frame's parts are invalid.");
	memcpy(&dir, data, sizeof(dir));
	if (dir.nparts < 1 || dir.nparts > FT_FRAME_MAX_PARTS ||
		dir.reserved != 0 ||
		len < sizeof(FtFrameParts) + dir.nparts * sizeof(FtFramePart))
		corrupt(tree, blkno, "The frame's parts are invalid.");
	fp->nparts = dir.nparts;
	fp->start[0] = 0;
	fp->offset[0] = 0;
	for (int p = 0; p < fp->nparts; p++)
	{
		memcpy(&part, data + sizeof(FtFrameParts) + p * sizeof(FtFramePart),
			   sizeof(part));
		if (part.nitems == 0 || fp->start[p] + part.nitems > hdr->nitems ||
			part.filter > FT_PART_FILTER_COLUMNS ||
			(part.filter == FT_PART_FILTER_PLANES &&
			 !FtFrameLayoutMayFilter(layout)) ||
			(part.filter == FT_PART_FILTER_COLUMNS &&
			 (!FtFrameLayoutMayColumns(layout) ||
			  part.complen <= sizeof(uint16))) ||
			part.rawlen < part.nitems * (sizeof(uint16) + (rows ? 1 : MAXIMUM_ALIGNOF)) ||
			(!rows && (part.rawlen - part.nitems * sizeof(uint16)) % MAXIMUM_ALIGNOF != 0))
			corrupt(tree, blkno, "The frame's parts are invalid.");
		fp->start[p + 1] = fp->start[p] + part.nitems;
		fp->complen[p] = part.complen;
		fp->rawlen[p] = part.rawlen;
		fp->filter[p] = part.filter;
		fp->offset[p + 1] = fp->offset[p] + part.rawlen -
			part.nitems * sizeof(uint16);
		raw += part.rawlen;
	}
	if (fp->start[fp->nparts] != hdr->nitems || raw != hdr->rawlen)
		corrupt(tree, blkno, "The frame's parts do not hold its entries.");

	pos = sizeof(FtFrameParts) + fp->nparts * sizeof(FtFramePart);
	fp->first[0] = NULL;
	fp->firstlen[0] = 0;
	for (int p = 1; p < fp->nparts; p++)
	{
		uint16		l16;

		if (pos + sizeof(uint16) > len)
			corrupt(tree, blkno, "The frame's parts are invalid.");
		memcpy(&l16, data + pos, sizeof(l16));
		pos += sizeof(l16);
		if (l16 == 0 || l16 > len - pos)
			corrupt(tree, blkno, "The frame's parts are invalid.");
		fp->first[p] = data + pos;
		fp->firstlen[p] = l16;
		pos += l16;
	}
	for (int p = 0; p < fp->nparts; p++)
	{
		if (fp->complen[p] > len - pos)
			corrupt(tree, blkno, "The frame's parts are invalid.");
		fp->comp[p] = data + pos;
		pos += fp->complen[p];
	}
	if (pos != len)
		corrupt(tree, blkno, "The frame's parts do not fill it.");
	return fp;
}

/*
 * decode_parts for layout FT_FRAME_LAYOUT_ROW_PARTS (a table's): the parts
 * are decompressed one after another into raw_buf, their entries noted by
 * frame index, the changes of those entries applied (an expanded row
 * header makes its entry longer), and the live ones laid out in view below
 * the high key, as decode_leaf lays out a frame of the prefixed layout.
 */
static void
decode_row_parts(FtTree *tree, BlockNumber blkno, Page page, char *view,
				 const FtFrameHeader *frame, FrameParts *fp, int from, int to)
{
	FtCodecId	codec = (FtCodecId) FtPageGetOpaque(page)->ft_codec;
	char	   *raw = scratch(&raw_buf, FT_WIDE_VIEW_MAX);
	Size		rawpos = 0;
	OffsetNumber off = FirstOffsetNumber;
	bool		changes = (frame->chglen > 0);
	char	   *hikey = NULL;
	Size		hlen = 0;

	if (!FtPageIsRightmost(FtPageGetOpaque(page)))
		hikey = ft_page_item(page, FT_HIKEY, &hlen);
	/* without changes, each entry goes into view as it is met */
	if (hikey && !changes)
		view_add(tree, blkno, view, &off, hikey, hlen);
	for (int p = from; p < to; p++)
	{
		int			n = fp->start[p + 1] - fp->start[p];
		char	   *praw = raw + rawpos;
		Size		pos = 0;

		/* parse_parts checked that the parts add up to rawlen */
		Assert(rawpos + fp->rawlen[p] <= FT_WIDE_VIEW_MAX);
		if (fp->filter[p] == FT_PART_FILTER_COLUMNS)
		{
			char	   *cols = scratch(&columns_buf, PG_UINT16_MAX);
			uint16		enclen;

			/* parse_parts checked there is more than the length */
			memcpy(&enclen, fp->comp[p], sizeof(enclen));
			if (!ft_codec_decompress(codec, fp->comp[p] + sizeof(uint16),
									 fp->complen[p] - sizeof(uint16), cols,
									 enclen))
				corrupt(tree, blkno, "The compressed bytes do not decompress.");
			if (!ft_columns_decode(cols, enclen, n, praw, fp->rawlen[p]))
				corrupt(tree, blkno, "A part's columns do not hold its rows.");
		}
		else if (!ft_codec_decompress(codec, fp->comp[p], fp->complen[p], praw,
									  fp->rawlen[p]))
			corrupt(tree, blkno, "The compressed bytes do not decompress.");
		for (int i = 0; i < n; i++)
		{
			uint16		len;

			if (pos + sizeof(uint16) > fp->rawlen[p])
				corrupt(tree, blkno, "The decompressed entries end early.");
			memcpy(&len, praw + pos, sizeof(uint16));
			pos += sizeof(uint16);
			if (len == 0 || len > fp->rawlen[p] - pos)
				corrupt(tree, blkno, "A decompressed entry has an invalid length.");
			if (i == 0 && p > 0 &&
				(fp->firstlen[p] != ft_key_len(tree, len) ||
				 memcmp(fp->first[p], praw + pos, fp->firstlen[p]) != 0))
				corrupt(tree, blkno, "A part of the frame does not start with the entry its directory names.");
			if (changes)
			{
				entry_ptr[fp->start[p] + i] = praw + pos;
				entry_len[fp->start[p] + i] = len;
			}
			else if (!FtFrameIsDead(frame, fp->start[p] + i))
				view_add(tree, blkno, view, &off, praw + pos, len);
			pos += len;
		}
		if (pos != fp->rawlen[p])
			corrupt(tree, blkno, "The decompressed entries do not fill the frame.");
		rawpos += fp->rawlen[p];
	}
	if (!changes)
		return;

	apply_changes(tree, blkno, frame, fp->start[from], fp->start[to]);
	if (hikey)
		view_add(tree, blkno, view, &off, hikey, hlen);
	for (int i = fp->start[from]; i < fp->start[to]; i++)
		if (!FtFrameIsDead(frame, i))
			view_add(tree, blkno, view, &off, entry_ptr[i], entry_len[i]);
}

/*
 * Decode parts [from, to) of a frame of layout FT_FRAME_LAYOUT_PARTS (see
 * ft_page.h) into view, whose header and special space are set: the high
 * key under the special space, the parts' entries below it where the
 * page's items go (each part decompressed aside and its entries copied
 * into place at once), and the line pointers of the live ones.  frame and
 * hdr are checked by frame_of and the checksum.
 */
static void
decode_parts(FtTree *tree, BlockNumber blkno, Page page, char *view,
			 const FtFrameHeader *frame, FrameParts *fp, int from, int to)
{
	PageHeader	vh = (PageHeader) view;
	FtCodecId	codec = (FtCodecId) FtPageGetOpaque(page)->ft_codec;
	char	   *raw = scratch(&raw_buf, FT_WIDE_VIEW_MAX);
	OffsetNumber off = FirstOffsetNumber;
	Size		itemsbytes = fp->offset[to] - fp->offset[from];
	Size		items;
	Size		hlen = 0;
	char	   *hikey = NULL;
	bool		wide = FtViewIsWide(view);
	Size		unit = wide ? MAXIMUM_ALIGNOF : 1;	/* of line pointers */

	if (FtFrameLayoutIsRows(FtPageGetOpaque(page)->ft_frame_layout))
	{
		decode_row_parts(tree, blkno, page, view, frame, fp, from, to);
		return;
	}
	if (!FtPageIsRightmost(FtPageGetOpaque(page)))
		hikey = ft_page_item(page, FT_HIKEY, &hlen);
	if (wide ?
		!wide_layout_fits(fp->start[to] - fp->start[from], itemsbytes,
						  hikey ? ft_item_space(hlen) : 0) :
		!view_layout_fits(fp->start[to] - fp->start[from], itemsbytes,
						  hikey ? ft_item_space(hlen) : 0))
		corrupt(tree, blkno, "The entries do not fit a decoded page.");

	if (wide)
	{
		/* upwards from FT_WIDE_ITEMS: the high key, then the entries */
		items = (Size) vh->pd_upper * MAXIMUM_ALIGNOF;
		if (hikey)
		{
			memcpy(view + items, hikey, hlen);
			ItemIdSetNormal(PageGetItemId(view, off), items / unit, hlen);
			vh->pd_lower += sizeof(ItemIdData);
			off++;
			items += MAXALIGN(hlen);
		}
		vh->pd_upper = (items + itemsbytes) / MAXIMUM_ALIGNOF;
	}
	else
	{
		vh->pd_upper = vh->pd_special;
		if (hikey)
		{
			vh->pd_upper -= MAXALIGN(hlen);
			memcpy(view + vh->pd_upper, hikey, hlen);
			ItemIdSetNormal(PageGetItemId(view, off), vh->pd_upper, hlen);
			vh->pd_lower += sizeof(ItemIdData);
			off++;
		}
		items = vh->pd_upper - itemsbytes;
		vh->pd_upper = items;
	}
	for (int p = from; p < to; p++)
	{
		int			n = fp->start[p + 1] - fp->start[p];
		Size		lensbytes = n * sizeof(uint16);
		Size		at = items + fp->offset[p] - fp->offset[from];
		Size		pos = 0;

		Size		planelen = 0;	/* each entry's, if stored as planes */

		if (!ft_codec_decompress(codec, fp->comp[p], fp->complen[p], raw,
								 fp->rawlen[p]))
			corrupt(tree, blkno, "The compressed bytes do not decompress.");
		if (fp->filter[p] == FT_PART_FILTER_PLANES)
		{
			/* parse_parts checked the entries' part of rawlen is aligned */
			planelen = (fp->rawlen[p] - lensbytes) / n;
			if (planelen * n != fp->rawlen[p] - lensbytes ||
				planelen % MAXIMUM_ALIGNOF != 0)
				corrupt(tree, blkno, "A part's planes do not hold entries of one length.");
			ft_planes_decode(raw + lensbytes, view + at, n, planelen);
		}
		else
			memcpy(view + at, raw + lensbytes, fp->rawlen[p] - lensbytes);
		for (int i = 0; i < n; i++)
		{
			uint16		len;

			memcpy(&len, raw + i * sizeof(uint16), sizeof(uint16));
			if (len == 0 || MAXALIGN(len) > fp->rawlen[p] - lensbytes - pos ||
				(planelen > 0 && MAXALIGN(len) != planelen))
				corrupt(tree, blkno, "A decompressed entry has an invalid length.");
			/* what lookups pick the part by is its first entry's key */
			if (i == 0 && p > 0 &&
				(fp->firstlen[p] != ft_key_len(tree, len) ||
				 memcmp(fp->first[p], view + at, fp->firstlen[p]) != 0))
				corrupt(tree, blkno, "A part of the frame does not start with the entry its directory names.");
			if (!FtFrameIsDead(frame, fp->start[p] + i))
			{
				ItemIdSetNormal(PageGetItemId(view, off), (at + pos) / unit, len);
				vh->pd_lower += sizeof(ItemIdData);
				off++;
			}
			pos += MAXALIGN(len);
		}
		if (pos != fp->rawlen[p] - lensbytes)
			corrupt(tree, blkno, "The decompressed entries do not fill the frame.");
	}
}

/*
 * The header and special space of a decoded page of leaf page: a wide view
 * (FT_PD_WIDE_VIEW) if wide, else an ordinary one of the entries from
 * frame index base on.
 */
static void
view_init(char *view, Page page, bool wide, int base)
{
	PageHeader	vh = (PageHeader) view;
	FtPageOpaque vopaque;

	memcpy(view, page, SizeOfPageHeaderData);
	vh->pd_lower = SizeOfPageHeaderData;
	vh->pd_flags &= ~FT_PD_WIDE_VIEW;
	vh->pd_checksum = (uint16) base;
	if (wide)
	{
		Assert(base == 0);
		vh->pd_flags |= FT_PD_WIDE_VIEW;
		vh->pd_special = FT_WIDE_SPECIAL;
		vh->pd_upper = FT_WIDE_ITEMS / MAXIMUM_ALIGNOF;
	}
	else
	{
		vh->pd_special = FT_VIEW_SIZE - MAXALIGN(sizeof(FtPageOpaqueData));
		vh->pd_upper = vh->pd_special;
	}
	vopaque = FtPageGetOpaque(view);
	memcpy(vopaque, FtPageGetOpaque(page), sizeof(FtPageOpaqueData));
	vopaque->ft_codec = FT_CODEC_NONE;
	vopaque->ft_frame_layout = FT_FRAME_LAYOUT_PREFIXED;
}

/*
 * decode compressed leaf page into view (FT_VIEW_SIZE bytes, or
 * FT_WIDE_VIEW_MAX for a wide frame: a wide view)
 */
static void
decode_leaf(FtTree *tree, BlockNumber blkno, Page page, char *view)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	FtFrameHeader hdr;
	const char *frame = frame_of(tree, blkno, page, &hdr);
	const char *data = FtFrameData((const FtFrameHeader *) frame);
	char	   *raw;
	Size		pos = 0;
	OffsetNumber off = FirstOffsetNumber;

	if (frame_crc((FtCodecId) opaque->ft_codec, opaque->ft_frame_layout,
				  &hdr, data) != hdr.crc)
		corrupt(tree, blkno, "The compressed bytes fail their checksum.");

	/* the page header and special space, then the items */
	view_init(view, page, FtFrameLayoutIsWide(opaque->ft_frame_layout), 0);

	if (FtFrameLayoutHasParts(opaque->ft_frame_layout))
	{
		FrameParts *fp = parse_parts(tree, blkno,
									 (const FtFrameHeader *) frame, &hdr,
									 opaque->ft_frame_layout);

		decode_parts(tree, blkno, page, view, (const FtFrameHeader *) frame,
					 fp, 0, fp->nparts);
		return;
	}

	raw = scratch(&raw_buf, FT_WIDE_VIEW_MAX);
	if (!ft_codec_decompress((FtCodecId) opaque->ft_codec, data, hdr.complen,
							 raw, hdr.rawlen))
		corrupt(tree, blkno, "The compressed bytes do not decompress.");


	if (!FtPageIsRightmost(opaque))
	{
		Size		hlen;
		char	   *hikey = ft_page_item(page, FT_HIKEY, &hlen);

		view_add(tree, blkno, view, &off, hikey, hlen);
	}
	for (int i = 0; i < hdr.nitems; i++)
	{
		uint16		len;

		if (pos + sizeof(uint16) > hdr.rawlen)
			corrupt(tree, blkno, "The decompressed entries end early.");
		memcpy(&len, raw + pos, sizeof(uint16));
		pos += sizeof(uint16);
		if (len == 0 || len > hdr.rawlen - pos)
			corrupt(tree, blkno, "A decompressed entry has an invalid length.");
		entry_ptr[i] = raw + pos;
		entry_len[i] = len;
		pos += len;
	}
	if (pos != hdr.rawlen)
		corrupt(tree, blkno, "The decompressed entries do not fill the frame.");
	if (hdr.chglen > 0)
		apply_changes(tree, blkno, (const FtFrameHeader *) frame, 0, hdr.nitems);
	for (int i = 0; i < hdr.nitems; i++)
		if (!FtFrameIsDead((const FtFrameHeader *) frame, i))
			view_add(tree, blkno, view, &off, entry_ptr[i], entry_len[i]);
}

/*
 * Does decoded leaf view hold page's high key?  (Nothing changes a
 * compressed leaf's high key in place today; checking costs little.)
 */
static bool
same_high_key(Page page, Page view)
{
	bool		pright = FtPageIsRightmost(FtPageGetOpaque(page));
	bool		vright = FtPageIsRightmost(FtPageGetOpaque(view));
	Size		plen;
	Size		vlen;
	char	   *pk;
	char	   *vk;

	if (pright || vright)
		return pright == vright;
	pk = ft_page_item(page, FT_HIKEY, &plen);
	vk = ft_page_item(view, FT_HIKEY, &vlen);
	return plen == vlen && memcmp(pk, vk, plen) == 0;
}

/*
 * The part ft_leaf_view_part returned last, with the bounds it gave: a
 * table's index fetches come back to it for row after row (a range of
 * 100 rows: about a hundred times per part decoded), and then need
 * neither the directory nor a search of the cache.  The bounds are kept
 * as offsets into the frame, whose bytes are the same while its stamp and
 * checksums are.
 */
typedef struct LastPart
{
	ViewSlot   *slot;			/* NULL: none */
	RelFileNode node;
	BlockNumber blkno;
	uint64		stamp;
	uint32		crc;
	uint32		deadcrc;
	int			part;
	bool		forward;		/* the direction its bounds were picked for */
	Size		lowoff;			/* 0: no lower bound (the first part) */
	Size		lowlen;
	Size		highoff;		/* 0: no upper bound (the last part) */
	Size		highlen;
} LastPart;

static LastPart last_part;

static void
cache_reset(void)
{
	if (cache_cxt)
		MemoryContextDelete(cache_cxt);
	cache_cxt = NULL;
	slots = NULL;
	nsets = 0;
	last_part.slot = NULL;
	for (int w = 0; w <= WIDE_WAYS; w++)
		wide_slots[w].used = 0;
}

static void
cache_setup(void)
{
	int			want = (decoded_leaf_cache_kb * 1024L) / FT_VIEW_SIZE / CACHE_WAYS;

	if (want == nsets && (slots != NULL || want == 0))
		return;
	cache_reset();
	if (want == 0)
		return;
	cache_cxt = AllocSetContextCreate(TopMemoryContext,
									  "fractam decoded leaves",
									  ALLOCSET_DEFAULT_SIZES);
	slots = MemoryContextAllocZero(cache_cxt,
								   sizeof(ViewSlot) * want * CACHE_WAYS);
	nsets = want;
}

/* How many decoded leaves the cache holds at most (fractam.decoded_leaf_cache) */
int
ft_leaf_cache_leaves(void)
{
	return (int) ((decoded_leaf_cache_kb * 1024L) / FT_VIEW_SIZE);
}

/*
 * Does cache slot s hold the leaf page (block blkno of node, its frame's
 * header hdr) decoded, whole or in part?  If so, it is now the most
 * recently used and has page's special space.
 */
static bool
slot_holds(ViewSlot *s, RelFileNode node, BlockNumber blkno, Page page,
		   const FtFrameHeader *hdr)
{
	FtPageOpaque vopaque;

	if (s->used == 0 || s->blkno != blkno || !RelFileNodeEquals(s->node, node) ||
		s->stamp != hdr->stamp || s->crc != hdr->crc ||
		s->deadcrc != hdr->deadcrc || !same_high_key(page, (Page) s->view))
		return false;

	/*
	 * The frame is the same, but VACUUM changes a leaf's right link in place
	 * (unlinking its empty right sibling): take the special space as it is
	 * now.
	 */
	vopaque = FtPageGetOpaque(s->view);
	memcpy(vopaque, FtPageGetOpaque(page), sizeof(FtPageOpaqueData));
	vopaque->ft_codec = FT_CODEC_NONE;
	vopaque->ft_frame_layout = FT_FRAME_LAYOUT_PREFIXED;
	s->used = ++tick;
	return true;
}

/*
 * The way of the decoded-leaf cache that holds compressed leaf page (block
 * blkno) whole, or NULL; then *victim is the way to decode it into (NULL
 * if the cache is off or every way of its set is referenced).  *hdr is the
 * frame's header.
 */
static ViewSlot *
cache_find(FtTree *tree, BlockNumber blkno, Page page, FtFrameHeader *hdr,
		   ViewSlot **victim)
{
	RelFileNode node = tree->rel->rd_node;
	uint32		h;
	ViewSlot   *set;

	/* the rest is checked where the leaf is decoded (decode_leaf) */
	(void) frame_locate(tree, blkno, page, hdr);
	*victim = NULL;
	cache_setup();
	if (nsets == 0)
		return NULL;
	h = hash_bytes_uint32((uint32) node.relNode ^ (blkno * 0x9E3779B1U));
	set = &slots[(h % nsets) * CACHE_WAYS];
	for (int w = 0; w < CACHE_WAYS; w++)
	{
		ViewSlot   *s = &set[w];

		if (s->part == -1 && slot_holds(s, node, blkno, page, hdr))
			return s;
		if ((*victim == NULL || s->used < (*victim)->used) &&
			!is_protected(s->view))
			*victim = s;
	}
	return NULL;
}

/*
 * The leaf in buf (locked by the caller, at least share) as a page to read
 * items from: the shared page itself, or if it is compressed its decoded
 * copy in this backend's cache.  The copy stays valid until the next call
 * of ft_leaf_view or ft_leaf_copy; nothing may write it.
 */
/*
 * Slot s now holds the decoding of part (-1: the whole frame) of the leaf
 * blkno of node whose frame header is hdr, and was used last.
 */
static void
slot_fill(ViewSlot *s, RelFileNode node, BlockNumber blkno, int part,
		  const FtFrameHeader *hdr)
{
	s->node = node;
	s->blkno = blkno;
	s->part = part;
	s->stamp = hdr->stamp;
	s->crc = hdr->crc;
	s->deadcrc = hdr->deadcrc;
	s->used = ++tick;
}

/* ft_leaf_view of a wide frame: a wide view, in wide_slots */
static Page
wide_view(FtTree *tree, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	RelFileNode node = tree->rel->rd_node;
	FtFrameHeader hdr;
	ViewSlot   *victim = NULL;

	(void) frame_locate(tree, blkno, page, &hdr);
	cache_setup();
	for (int w = 0; w < WIDE_WAYS; w++)
	{
		ViewSlot   *s = &wide_slots[w];

		if (nsets > 0 && slot_holds(s, node, blkno, page, &hdr))
			return (Page) s->view;
		if ((victim == NULL || s->used < victim->used) && !is_protected(s->view))
			victim = s;
	}
	/* the cache off, or both ways referenced: the way never cached */
	if (victim == NULL || nsets == 0)
		victim = &wide_slots[WIDE_WAYS];
	if (is_protected(victim->view))
		elog(ERROR, "fractam: no decoded leaf left to decode into");
	if (victim->view == NULL)
		victim->view = MemoryContextAlloc(TopMemoryContext, FT_WIDE_VIEW_MAX);
	victim->used = 0;			/* invalid until decoded */
	decode_leaf(tree, blkno, page, victim->view);
	if (victim != &wide_slots[WIDE_WAYS])
		slot_fill(victim, node, blkno, -1, &hdr);
	return (Page) victim->view;
}

Page
ft_leaf_view(FtTree *tree, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	BlockNumber blkno;
	FtFrameHeader hdr;
	ViewSlot   *victim;
	ViewSlot   *hit;

	if (!FtPageIsCompressed(opaque))
		return page;
	Assert(FtPageIsLeaf(opaque));
	if (FtFrameLayoutIsWide(opaque->ft_frame_layout))
		return wide_view(tree, buf);

	blkno = BufferGetBlockNumber(buf);
	hit = cache_find(tree, blkno, page, &hdr, &victim);
	if (hit)
		return (Page) hit->view;

	/* cache off, or every way of the set is referenced: outside the cache */
	if (victim == NULL)
	{
		char	   *view = spare_view();

		decode_leaf(tree, blkno, page, view);
		return (Page) view;
	}

	/* decode into the least recently used way of the set */
	if (victim->view == NULL)
		victim->view = MemoryContextAlloc(cache_cxt, FT_VIEW_SIZE);
	victim->used = 0;			/* invalid until decoded */
	decode_leaf(tree, blkno, page, victim->view);
	slot_fill(victim, tree->rel->rd_node, blkno, -1, &hdr);
	return (Page) victim->view;
}

/*
 * Copy the leaf in buf (locked by the caller) into dst, FT_VIEW_SIZE bytes
 * (BLCKSZ suffice for a leaf that is not compressed; a wide frame's,
 * ft_leaf_is_wide, needs ft_view_bytes of its view): decoded if
 * compressed.  Only the used parts are copied, as ft_copy_page does.
 */
void
ft_leaf_copy(FtTree *tree, Buffer buf, char *dst)
{
	ft_view_copy(dst, ft_leaf_view(tree, buf), BufferGetPage(buf));
}

/*
 * ft_leaf_copy for a scan that reads each leaf once (ft_scan_set_bulk): a
 * compressed leaf the cache holds is copied from it, any other is decoded
 * straight into dst and not cached.
 */
void
ft_leaf_copy_uncached(FtTree *tree, Buffer buf, char *dst)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	FtFrameHeader hdr;
	ViewSlot   *victim;
	ViewSlot   *hit;

	if (!FtPageIsCompressed(FtPageGetOpaque(page)))
	{
		ft_copy_page(dst, page);
		return;
	}
	if (ft_leaf_is_wide(page))
		elog(ERROR, "fractam: a wide frame cannot be copied into a decoded page");
	hit = cache_find(tree, blkno, page, &hdr, &victim);
	if (hit)
		ft_view_copy(dst, (Page) hit->view, page);
	else
		decode_leaf(tree, blkno, page, dst);
}

/*
 * Copy view, a leaf's decoded view (or part) or page itself (the leaf is
 * not compressed), into dst, FT_VIEW_SIZE bytes: only the used parts.
 */
void
ft_view_copy(char *dst, Page view, Page page)
{
	PageHeader	hdr = (PageHeader) view;

	if (view == page)
	{
		ft_copy_page(dst, view);
		return;
	}
	if (FtViewIsWide(view))
	{
		memcpy(dst, view, hdr->pd_lower);
		memcpy(dst + FT_WIDE_SPECIAL, view + FT_WIDE_SPECIAL,
			   ft_view_bytes(view) - FT_WIDE_SPECIAL);
		return;
	}
	memcpy(dst, view, hdr->pd_lower);
	memcpy(dst + hdr->pd_upper, view + hdr->pd_upper,
		   FT_VIEW_SIZE - hdr->pd_upper);
}

/* last_part := part of the frame (in the page) that slot s holds */
static void
remember_part(ViewSlot *s, RelFileNode node, BlockNumber blkno,
			  const FtFrameHeader *hdr, int part, bool forward,
			  const char *frame, const char *low, Size lowlen,
			  const char *high, Size highlen)
{
	last_part.slot = s;
	last_part.node = node;
	last_part.blkno = blkno;
	last_part.stamp = hdr->stamp;
	last_part.crc = hdr->crc;
	last_part.deadcrc = hdr->deadcrc;
	last_part.part = part;
	last_part.forward = forward;
	/* the bounds are entries in the frame's directory, after its header */
	Assert(low == NULL || low > frame);
	Assert(high == NULL || high > frame);
	last_part.lowoff = low ? low - frame : 0;
	last_part.lowlen = lowlen;
	last_part.highoff = high ? high - frame : 0;
	last_part.highlen = highlen;
}

/*
 * The part of the compressed leaf in buf (locked by the caller, at least
 * share) where a scan starts at key (forward: the first item >= key;
 * backward: the last item < key; key NULL: the leaf's first or last item),
 * decoded as a page laid out like the leaf's decoded page but holding only
 * that part's entries, or the whole leaf decoded (ft_leaf_view) if its
 * frame has one part or is cached whole.  *low and *high bound the part's
 * entries (the first entry of the part and of the next, pointing into the
 * locked page), or are NULL where the part ends where the leaf does.  The
 * decoded page stays valid as ft_leaf_view's does.  A point lookup thus
 * decodes at most FT_FRAME_PART_BYTES of entries, not 32 kB.
 */
Page
ft_leaf_view_part(FtTree *tree, Buffer buf, const char *key, Size keylen,
				  bool forward, const char **low, Size *lowlen,
				  const char **high, Size *highlen)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	const char *frame;
	FtFrameHeader hdr;
	FrameParts *fp;
	RelFileNode node;
	ViewSlot   *set = NULL;
	ViewSlot   *victim = NULL;
	char	   *view;
	int			part;

	*low = *high = NULL;
	*lowlen = *highlen = 0;
	if (!FtPageIsCompressed(opaque) ||
		!FtFrameLayoutHasParts(opaque->ft_frame_layout))
		return ft_leaf_view(tree, buf);
	frame = frame_locate(tree, blkno, page, &hdr);
	/* (a wide frame's view is never a part's: callers copy parts) */
	if (hdr.nitems <= 1 && !FtFrameLayoutIsWide(opaque->ft_frame_layout))
		return ft_leaf_view(tree, buf);

	node = tree->rel->rd_node;
	cache_setup();

	/* the part returned last, if it holds the key (see LastPart) */
	if (last_part.slot != NULL && key != NULL && last_part.blkno == blkno &&
		last_part.forward == forward &&
		last_part.stamp == hdr.stamp && last_part.crc == hdr.crc &&
		last_part.deadcrc == hdr.deadcrc && last_part.slot->part == last_part.part &&
		RelFileNodeEquals(last_part.node, node))
	{
		const char *lo = last_part.lowoff ? frame + last_part.lowoff : NULL;
		const char *hi = last_part.highoff ? frame + last_part.highoff : NULL;

		if ((lo == NULL ||
			 (forward ? ft_cmp(tree, lo, last_part.lowlen, key, keylen) <= 0 :
			  ft_cmp(tree, lo, last_part.lowlen, key, keylen) < 0)) &&
			(hi == NULL ||
			 (forward ? ft_cmp(tree, hi, last_part.highlen, key, keylen) > 0 :
			  ft_cmp(tree, hi, last_part.highlen, key, keylen) >= 0)) &&
			slot_holds(last_part.slot, node, blkno, page, &hdr))
		{
			*low = lo;
			*lowlen = lo ? last_part.lowlen : 0;
			*high = hi;
			*highlen = hi ? last_part.highlen : 0;
			return (Page) last_part.slot->view;
		}
	}

	/* the leaf decoded whole, if the cache has it */
	if (nsets > 0)
	{
		uint32		h = hash_bytes_uint32((uint32) node.relNode ^ (blkno * 0x9E3779B1U));

		set = &slots[(h % nsets) * CACHE_WAYS];
		for (int w = 0; w < CACHE_WAYS; w++)
			if (set[w].part == -1 && slot_holds(&set[w], node, blkno, page, &hdr))
				return (Page) set[w].view;
	}

	/*
	 * A narrow frame of one part decodes whole (its checksum checked
	 * there); a wide one (planes) decodes its part as any.  The
	 * directory picks the part before the checksums are checked: a part
	 * found in the cache was decoded from this frame (same stamp and
	 * checksums in its header), checked then, as a whole leaf found there
	 * is (ft_leaf_view); a table's index fetches come back to the same
	 * part for row after row.
	 */
	fp = parse_parts(tree, blkno, (const FtFrameHeader *) frame, &hdr,
					 opaque->ft_frame_layout);
	if (fp->nparts == 1 && !FtFrameLayoutIsWide(opaque->ft_frame_layout))
		return ft_leaf_view(tree, buf);

	/* the last part whose first entry is <= key (forward) or < key */
	part = 0;
	if (key == NULL)
		part = forward ? 0 : fp->nparts - 1;
	else
		while (part + 1 < fp->nparts &&
			   (forward ? ft_cmp(tree, fp->first[part + 1], fp->firstlen[part + 1],
								 key, keylen) <= 0 :
				ft_cmp(tree, fp->first[part + 1], fp->firstlen[part + 1],
					   key, keylen) < 0))
			part++;
	if (part > 0)
	{
		*low = fp->first[part];
		*lowlen = fp->firstlen[part];
	}
	if (part + 1 < fp->nparts)
	{
		*high = fp->first[part + 1];
		*highlen = fp->firstlen[part + 1];
	}

	if (set != NULL)
	{
		for (int w = 0; w < CACHE_WAYS; w++)
		{
			ViewSlot   *s = &set[w];

			if (s->part == part && slot_holds(s, node, blkno, page, &hdr))
			{
				remember_part(s, node, blkno, &hdr, part, forward, frame,
							  *low, *lowlen, *high, *highlen);
				return (Page) s->view;
			}
			if ((victim == NULL || s->used < victim->used) &&
				!is_protected(s->view))
				victim = s;
		}
	}

	/* decoding: every check first */
	(void) frame_of(tree, blkno, page, &hdr);
	if (frame_crc((FtCodecId) opaque->ft_codec, opaque->ft_frame_layout,
				  &hdr, FtFrameData((const FtFrameHeader *) frame)) != hdr.crc)
		corrupt(tree, blkno, "The compressed bytes fail their checksum.");
	if (victim == NULL)
		view = spare_view();
	else
	{
		if (victim->view == NULL)
			victim->view = MemoryContextAlloc(cache_cxt, FT_VIEW_SIZE);
		victim->used = 0;		/* invalid until decoded */
		view = victim->view;
	}
	view_init(view, page, false, fp->start[part]);
	decode_parts(tree, blkno, page, view, (const FtFrameHeader *) frame, fp,
				 part, part + 1);
	if (victim != NULL)
	{
		slot_fill(victim, node, blkno, part, &hdr);
		remember_part(victim, node, blkno, &hdr, part, forward, frame,
					  *low, *lowlen, *high, *highlen);
	}
	return (Page) view;
}

/* Is the page a compressed leaf? */
bool
ft_leaf_is_compressed(Page page)
{
	return FtPageIsCompressed(FtPageGetOpaque(page));
}

/* ... one whose frame is wide (decodes whole into a wide view)? */
bool
ft_leaf_is_wide(Page page)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);

	return FtPageIsCompressed(opaque) &&
		FtFrameLayoutIsWide(opaque->ft_frame_layout);
}

/* The bytes a copy of decoded page view takes (FT_VIEW_SIZE unless wide) */
Size
ft_view_bytes(Page view)
{
	if (FtViewIsWide(view))
		return (Size) ((PageHeader) view)->pd_upper * MAXIMUM_ALIGNOF;
	return FT_VIEW_SIZE;
}

/*
 * The frame index of the entry at offset off of a decoded leaf, or of a
 * part of one (its entries from frame index base on: view_init)
 */
static int
frame_index_of(const FtFrameHeader *frame, int base, OffsetNumber first,
			   OffsetNumber off)
{
	int			live = 0;

	for (int i = base; i < frame->nitems; i++)
	{
		if (FtFrameIsDead(frame, i))
			continue;
		if (first + live == off)
			return i;
		live++;
	}
	return -1;
}

/* the cache slot holding view, decoded from block blkno, or NULL */
static ViewSlot *
slot_of_view(FtTree *tree, BlockNumber blkno, Page view)
{
	RelFileNode node = tree->rel->rd_node;
	uint32		h;
	ViewSlot   *set;

	for (int w = 0; w < WIDE_WAYS; w++)
		if (wide_slots[w].used != 0 && wide_slots[w].view == (char *) view)
			return &wide_slots[w];
	if (nsets == 0 || slots == NULL)
		return NULL;
	h = hash_bytes_uint32((uint32) node.relNode ^ (blkno * 0x9E3779B1U));
	set = &slots[(h % nsets) * CACHE_WAYS];
	for (int w = 0; w < CACHE_WAYS; w++)
		if (set[w].used != 0 && set[w].view == (char *) view)
			return &set[w];
	return NULL;
}

/* the bytes a decoded leaf's live items would take decoded afresh */
static Size
view_items_space(Page view)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(view);
	Size		total = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		total += ft_item_space(ItemIdGetLength(PageGetItemId(view, off)));
	return total;
}

/*
 * Does compressed leaf buf (locked) have room for a locked change of an
 * entry in place (FT_FRAME_CHANGE_ROOM in its change area)?  True for a
 * leaf that is not compressed.
 */
bool
ft_leaf_has_change_room(FtTree *tree, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FtFrameHeader hdr;

	if (!FtPageIsCompressed(FtPageGetOpaque(page)))
		return true;
	(void) frame_locate(tree, BufferGetBlockNumber(buf), page, &hdr);
	return (Size) hdr.chglen + FT_FRAME_CHANGE_ROOM <= hdr.chgcap;
}

/*
 * Record changes chgs[0..n) (with their bytes) in the change area of
 * compressed leaf buf, held exclusively: all of them or, if they do not
 * fit (tried on a copy of the frame first), none (false).  One WAL record,
 * one new stamp.
 */
static bool
add_changes(FtTree *tree, Buffer buf, FtFrameHeader *frame,
			const FtFrameChange *chgs, const char *const *bytes, int n,
			uint64 *stampp)
{
	Page		page = BufferGetPage(buf);
	ItemId		fid = PageGetItemId(page, FtFirstDataOffset(FtPageGetOpaque(page)));
	Size		framelen = ItemIdGetLength(fid);
	char	   *trial = palloc(framelen);
	char	   *data;
	Size		datalen = 0;
	uint64		stamp;

	memcpy(trial, frame, framelen);
	for (int c = 0; c < n; c++)
	{
		if (!ft_frame_add_change((FtFrameHeader *) trial, 0, &chgs[c],
								 bytes[c], false))
		{
			pfree(trial);
			return false;
		}
		datalen += FT_CHANGE_HDRSZ + chgs[c].len;
	}
	pfree(trial);

	/* the record's block data: the changes as ft_redo_frame_change reads */
	data = palloc(datalen);
	datalen = 0;
	for (int c = 0; c < n; c++)
	{
		memcpy(data + datalen, &chgs[c], FT_CHANGE_HDRSZ);
		datalen += FT_CHANGE_HDRSZ;
		if (chgs[c].len > 0)
			memcpy(data + datalen, bytes[c], chgs[c].len);
		datalen += chgs[c].len;
	}

	stamp = new_stamp();
	START_CRIT_SECTION();
	for (int c = 0; c < n; c++)
		if (!ft_frame_add_change(frame, stamp, &chgs[c], bytes[c], false))
			elog(PANIC, "fractam: a checked change does not fit its frame");
	MarkBufferDirty(buf);
	ftxlog_frame_change(tree->rel, buf, stamp, data, datalen);
	END_CRIT_SECTION();
	pfree(data);
	if (stampp)
		*stampp = stamp;
	return true;
}

/*
 * VACUUM's patches of entries of compressed leaf buf (cleanup-locked;
 * view: its decoded page), in ft_apply_patches' form with decoded
 * offsets, recorded in its change area if they all fit there (freezing
 * patches the same bytes of row after row, which extend one change).
 * False, with nothing changed, if they do not: the caller writes a new
 * frame instead.
 */
bool
ft_leaf_patch_entries(FtTree *tree, Buffer buf, Page view,
					  const char *payload, Size paylen, int npatches)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	FtFrameHeader hdr;
	FtFrameHeader *frame = (FtFrameHeader *) frame_of(tree, blkno, page, &hdr);
	OffsetNumber first = FtFirstDataOffset(FtPageGetOpaque(view));
	OffsetNumber maxoff = PageGetMaxOffsetNumber(view);
	int			base = ((PageHeader) view)->pd_checksum;
	uint16	   *index_of;
	FtFrameChange *chgs;
	const char **bytes;
	Size		pos = 0;
	int			n = 0;
	int			live = 0;
	bool		ok;

	if (hdr.chgcap == 0)
		return false;
	/* decoded offset -> frame index (dead entries are not decoded) */
	index_of = palloc(sizeof(uint16) * (maxoff + 1));
	for (int i = base; i < hdr.nitems; i++)
		if (!FtFrameIsDead(frame, i) && first + live <= maxoff)
			index_of[first + live++] = (uint16) i;
	chgs = palloc(sizeof(FtFrameChange) * npatches);
	bytes = palloc(sizeof(char *) * npatches);
	while (pos < paylen)
	{
		uint16		ph[3];

		memcpy(ph, payload + pos, sizeof(ph));
		pos += sizeof(ph);
		if (ph[0] < first || ph[0] > maxoff || n >= npatches)
			elog(ERROR, "fractam: a patch names no entry of block %u of \"%s\"",
				 blkno, RelationGetRelationName(tree->rel));
		memset(&chgs[n], 0, sizeof(FtFrameChange));
		chgs[n].first = index_of[ph[0]];
		chgs[n].count = 1;
		chgs[n].kind = FT_CHANGE_PATCH;
		chgs[n].start = ph[1];
		chgs[n].len = ph[2];
		bytes[n] = payload + pos;
		pos += ph[2];
		n++;
	}
	ok = add_changes(tree, buf, frame, chgs, bytes, n, NULL);
	pfree(index_of);
	pfree(chgs);
	pfree(bytes);
	return ok;
}

/* Has a change of frame's change area transformed entry idx? */
static bool
entry_transformed(const FtFrameHeader *frame, int idx)
{
	const char *area = FtFrameChanges(frame);
	Size		pos = 0;

	while (pos + FT_CHANGE_HDRSZ <= frame->chglen)
	{
		FtFrameChange c;

		memcpy(&c, area + pos, FT_CHANGE_HDRSZ);
		if (c.kind == FT_CHANGE_TRANSFORM && idx >= c.first &&
			idx < (int) c.first + c.count)
			return true;
		pos += FT_CHANGE_HDRSZ + c.len;
	}
	return false;
}

/* the most changes one patch of an entry becomes (ft_leaf_change_entry) */
#define MAX_PATCH_PIECES 8

/*
 * Change the entry at offset off of compressed leaf buf (locked
 * exclusively; view is what ft_leaf_view gave for it): with transform > 0
 * replace it by that transform, else overwrite len bytes at start with
 * bytes.  The change goes into the frame's change area, logged with a
 * small record (XLOG_FT_FRAME_DEAD with xl_ft_frame_change), and into view
 * too, which stays the leaf's decoded page.  A patch is recorded as the
 * pieces of it that differ from the entry (split where two or more bytes
 * stay as they are): a DELETE rewrites a row's whole header but changes
 * its xmax, command id and flags, the same for every row it deletes, so
 * that the pieces of the next row extend those of the last (one change
 * each per leaf), where the whole patch, which holds each row's own TID,
 * would take a change per row.  *viewp is where the caller finds the entry
 * from now on (the offset does not change).  False, with nothing changed,
 * if the change area or a decoded page has no room for it: the caller then
 * rewrites the leaf (ft_replace, ft_rewrite_leaf_of: into compressed
 * halves).
 */
bool
ft_leaf_change_entry(FtTree *tree, Buffer buf, Page *viewp, OffsetNumber off,
					 int transform, Size start, const char *bytes, Size len)
{
	Page		page = BufferGetPage(buf);
	Page		view = *viewp;
	BlockNumber blkno = BufferGetBlockNumber(buf);
	FtFrameHeader hdr;
	FtFrameHeader *frame;
	FtFrameChange chgs[MAX_PATCH_PIECES];
	const char *chgbytes[MAX_PATCH_PIECES];
	int			nchg = 0;
	ItemId		vid = PageGetItemId(view, off);
	Size		itemlen;
	char	   *item = ft_page_item(view, off, &itemlen);
	char	   *newitem = NULL;
	Size		newlen = itemlen;
	int			idx;
	uint64		stamp;
	ViewSlot   *slot;

	Assert(FtPageIsCompressed(FtPageGetOpaque(page)));
	/* view was decoded from this frame, which decoding checked whole */
	frame = (FtFrameHeader *) frame_locate(tree, blkno, page, &hdr);
	idx = frame_index_of(frame, ((PageHeader) view)->pd_checksum,
						 FtFirstDataOffset(FtPageGetOpaque(view)), off);
	if (idx < 0)
		elog(ERROR, "fractam: block %u of \"%s\" has no entry at decoded offset %u",
			 blkno, RelationGetRelationName(tree->rel), off);

	if (transform > 0)
	{
		memset(&chgs[0], 0, sizeof(FtFrameChange));
		chgs[0].first = (uint16) idx;
		chgs[0].count = 1;
		chgs[0].kind = FT_CHANGE_TRANSFORM;
		chgs[0].transform = (uint8) transform;
		chgbytes[0] = NULL;
		nchg = 1;
		newitem = ft_item_transformed(transform, item, itemlen, &newlen);

		/*
		 * The leaf must still decode into one decoded page, or for a wide
		 * frame each part into one and the whole into a wide view: an
		 * entry of a wide frame grows once, by FT_FRAME_ROW_GROWTH at most
		 * (ft_page.h), and writers change it through a part (lookup_view),
		 * which checks as a whole leaf does.
		 */
		if (FtViewIsWide(view) ||
			(FtFrameLayoutIsWide(FtPageGetOpaque(page)->ft_frame_layout) &&
			 (MAXALIGN(newlen) > MAXALIGN(itemlen) + FT_FRAME_ROW_GROWTH ||
			  hdr.nitems > FT_FRAME_TABLE_MAX_ITEMS ||
			  entry_transformed(frame, idx))) ||
			view_items_space(view) - ft_item_space(itemlen) +
			ft_item_space(newlen) > FT_VIEW_CAPACITY)
		{
			pfree(newitem);
			return false;
		}
	}
	else
	{
		Size		i = 0;

		Assert(len > 0 && start + len <= itemlen);
		while (i < len)
		{
			Size		j;
			Size		same;

			if (bytes[i] == item[start + i])
			{
				i++;
				continue;
			}
			/* a piece ends where two bytes in a row stay */
			j = i + 1;
			same = 0;
			while (j < len && same < 2)
			{
				same = (bytes[j] == item[start + j]) ? same + 1 : 0;
				j++;
			}
			j -= same;
			if (nchg == MAX_PATCH_PIECES)
			{
				/* many small pieces: the rest as one */
				nchg--;
				i = chgs[nchg].start - start;
				j = len;
				while (j > i && bytes[j - 1] == item[start + j - 1])
					j--;
			}
			memset(&chgs[nchg], 0, sizeof(FtFrameChange));
			chgs[nchg].first = (uint16) idx;
			chgs[nchg].count = 1;
			chgs[nchg].kind = FT_CHANGE_PATCH;
			chgs[nchg].start = (uint16) (start + i);
			chgs[nchg].len = (uint16) (j - i);
			chgbytes[nchg] = bytes + i;
			nchg++;
			i = j;
		}
		if (nchg == 0)
			return true;		/* the entry already holds these bytes */
	}


	/*
	 * Pieces that do not fit the change area go as one (fewer change
	 * headers: what FT_FRAME_CHANGE_ROOM counts).
	 */
	while (!add_changes(tree, buf, frame, chgs, chgbytes, nchg, &stamp))
	{
		if (nchg <= 1)
		{
			if (newitem)
				pfree(newitem);
			return false;
		}
		chgs[0].len = chgs[nchg - 1].start + chgs[nchg - 1].len - chgs[0].start;
		nchg = 1;
	}

	/* the decoded page follows, where it can; else it is decoded again */
	slot = slot_of_view(tree, blkno, view);
	if (transform == 0)
		memcpy(item + start, bytes, len);
	else
	{
		PageHeader	vh = (PageHeader) view;

		if (vh->pd_upper >= vh->pd_lower + MAXALIGN(newlen))
		{
			/* the old bytes stay behind as a hole: nothing counts on them */
			vh->pd_upper -= MAXALIGN(newlen);
			memcpy((char *) view + vh->pd_upper, newitem, newlen);
			ItemIdSetNormal(vid, vh->pd_upper, newlen);
		}
		else
		{
			int			base = vh->pd_checksum;

			if (slot)
				slot->used = 0;
			slot = NULL;
			if (base == 0 && !ft_leaf_is_wide(page))
				*viewp = ft_leaf_view(tree, buf);
			else
			{
				const char *low;
				const char *high;
				Size		lowlen;
				Size		highlen;

				/* the part again, found by the entry's key */
				*viewp = ft_leaf_view_part(tree, buf, newitem,
										   ft_key_len(tree, newlen), true,
										   &low, &lowlen, &high, &highlen);
				Assert(((PageHeader) *viewp)->pd_checksum == base);
			}
		}
		pfree(newitem);
	}
	if (slot)
	{
		slot->stamp = stamp;
		slot->deadcrc = frame->deadcrc;
	}
	return true;
}

/*
 * Rewrite compressed leaf buf (cleanup-locked by VACUUM) as one compressed
 * leaf of items[0..n), its entries as the caller changed them (the same
 * keys, fewer of them or the same lengths), with a fresh change area; one
 * image.  No items left: an empty uncompressed leaf, as ft_leaf_delete
 * leaves.  False, with nothing changed, if they no longer fit one page
 * (they did before, with a change area's room to spare, so this is for
 * entries that compress much worse once changed).
 */
bool
ft_leaf_recompress(FtTree *tree, Buffer buf, char **items, Size *lens, int n)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	FtPageOpaqueData template = *opaque;
	PGAlignedBlock image;
	char	   *hikey = NULL;
	Size		hikeylen = 0;
	uint16		chgcap = tree->frame_chgcap;
	FtCodecId	codec = tree->codec;
	int			level = tree->codec_level;
	bool		ok;

	Assert(FtPageIsCompressed(opaque));

	/*
	 * The relation's compression now, or, once it has none (ALTER ... RESET
	 * leaves earlier leaves compressed), the page's own method: a rewrite
	 * for VACUUM must fit where the leaf is.
	 */
	if (tree->codec == FT_CODEC_NONE)
	{
		FtCodecId	pagecodec;
		int			deflevel;

		if (!ft_codec_lookup(ft_codec_name((FtCodecId) opaque->ft_codec),
							 &pagecodec, &deflevel))
			elog(ERROR, "fractam: unknown codec %u", opaque->ft_codec);
		tree->codec = pagecodec;
		tree->codec_level = deflevel;
	}
	if (!FtPageIsRightmost(opaque))
	{
		char	   *h = ft_page_item(page, FT_HIKEY, &hikeylen);

		hikey = palloc(hikeylen);
		memcpy(hikey, h, hikeylen);
	}
	template.ft_codec = FT_CODEC_NONE;
	if (n == 0)
	{
		ft_rewrite_leaf_page(image.data, &template, NULL, NULL, 0, hikey,
							 hikeylen);
		ok = true;
	}
	else
	{
		ok = ft_leaf_compress(tree, image.data, &template, items, lens, n,
							  hikey, hikeylen);
		if (!ok && chgcap > 0)
		{
			/* without room for later changes, then */
			tree->frame_chgcap = 0;
			ok = ft_leaf_compress(tree, image.data, &template, items, lens, n,
								  hikey, hikeylen);
			tree->frame_chgcap = chgcap;
		}
	}
	tree->codec = codec;
	tree->codec_level = level;
	if (ok)
	{
		START_CRIT_SECTION();
		memcpy(page, image.data, BLCKSZ);
		MarkBufferDirty(buf);
		ftxlog_images(tree->rel, &buf, 1,
					  n == 0 ? FT_IMAGES_EMPTIED : FT_IMAGES_RECOMPRESSED);
		END_CRIT_SECTION();
	}
	if (hikey)
		pfree(hikey);
	return ok;
}

/*
 * Delete the items at offsets dead (ascending, offsets of the leaf's
 * decoded page) from compressed leaf buf, held exclusively: their dead
 * bits are set and logged (XLOG_FT_FRAME_DEAD), the frame is not
 * re-encoded.  A leaf left with no live item becomes an empty uncompressed
 * leaf, so that VACUUM finds it empty as any other.
 */
void
ft_leaf_delete(FtTree *tree, Buffer buf, OffsetNumber *dead, int ndead)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	FtFrameHeader hdr;
	FtFrameHeader *frame;
	OffsetNumber first = FtFirstDataOffset(opaque);
	uint16	   *idx;
	int			n = 0;
	int			live = 0;
	int			d = 0;
	uint64		stamp;

	frame = (FtFrameHeader *) frame_of(tree, blkno, page, &hdr);
	idx = palloc(sizeof(uint16) * ndead);

	/* the k-th live entry is the one at decoded offset first + k */
	for (int i = 0; i < hdr.nitems && d < ndead; i++)
	{
		if (FtFrameIsDead(frame, i))
			continue;
		if (first + live == dead[d])
		{
			idx[n++] = (uint16) i;
			d++;
		}
		live++;
	}
	if (n != ndead)
		elog(ERROR, "fractam: deleting entries that block %u of \"%s\" does not hold",
			 blkno, RelationGetRelationName(tree->rel));

	if (hdr.ndead + n == hdr.nitems)
	{
		/* nothing left: an empty leaf like any other */
		PGAlignedBlock image;
		char	   *hikey = NULL;
		Size		hikeylen = 0;
		FtPageOpaqueData template = *opaque;

		if (!FtPageIsRightmost(opaque))
		{
			char	   *h = ft_page_item(page, FT_HIKEY, &hikeylen);

			hikey = palloc(hikeylen);
			memcpy(hikey, h, hikeylen);
		}
		ft_rewrite_leaf_page(image.data, &template, NULL, NULL, 0, hikey,
							 hikeylen);
		START_CRIT_SECTION();
		memcpy(page, image.data, BLCKSZ);
		MarkBufferDirty(buf);
		ftxlog_images(tree->rel, &buf, 1, FT_IMAGES_EMPTIED);
		END_CRIT_SECTION();
		if (hikey)
			pfree(hikey);
		pfree(idx);
		return;
	}

	stamp = new_stamp();
	START_CRIT_SECTION();
	ft_frame_set_dead(frame, stamp, idx, n);
	MarkBufferDirty(buf);
	ftxlog_frame_dead(tree->rel, buf, stamp, idx, n);
	END_CRIT_SECTION();
	pfree(idx);
}

/* ---------------------------------------------------------------------
 * Setup
 * ---------------------------------------------------------------------
 */

static void
stamps_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(FrameStamps)));
}

static void
stamps_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	frame_stamps = ShmemInitStruct("fractam frame stamps",
								   sizeof(FrameStamps), &found);
	if (!found)
		pg_atomic_init_u64(&frame_stamps->next,
						   (uint64) GetCurrentTimestamp());
	LWLockRelease(AddinShmemInitLock);
}

void
ft_compress_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stamps_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stamps_shmem_startup;

	DefineCustomIntVariable("fractam.decoded_leaf_cache",
							"Memory each backend keeps decoded compressed leaves in.",
							"Scans and repeated probes of a compressed leaf decode it "
							"once while it stays here; 0 disables the cache.",
							&decoded_leaf_cache_kb, 8192, 0, 1024 * 1024,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomBoolVariable("fractam.debug_index_planes",
							 "Stores the entries of compressed index leaves as byte planes where they have one length (testing, measuring).",
							 "Off writes them as they are, as builds before the planes did; "
							 "pages of either kind are read.",
							 &plane_filter, true,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomBoolVariable("fractam.debug_table_columns",
							 "Stores the rows of compressed table leaves column by column where they have one length (testing, measuring).",
							 "Off writes them row by row, as builds before the columns did; "
							 "pages of either kind are read.",
							 &column_filter, true,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}
