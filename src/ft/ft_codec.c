/*-------------------------------------------------------------------------
 *
 * ft_codec.c
 *	  General-purpose compressors for fractam pages (lz4, zstd), and an
 *	  estimate of what they would save on a tree's pages as they are now.
 *
 * Compressed pages are still to come (issue #11): a page will name its
 * codec in the special space (ft_codec, format 3 reserves it).  What this
 * file gives today is the codecs themselves and ft_compression_estimate,
 * which compresses the contents each page would hand a compressor -- its
 * items with their lengths, not the line pointers or the hole -- in
 * backend memory, checks that they decompress to the same bytes, and
 * counts bytes per page kind.  "Fill to fit" will put as many items on a
 * compressed 8 kB page as fit once compressed, so the ratio of raw to
 * compressed bytes per page is what a tree of compressed pages would save.
 * A compressed frame will carry a header (codec, raw length, checksum):
 * the estimate counts FT_CODEC_FRAME_HEADER bytes for it on every page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

/* the header a compressed frame will carry: codec, raw length, checksum */
#define FT_CODEC_FRAME_HEADER	8

const char *
ft_codec_name(FtCodecId codec)
{
	switch (codec)
	{
		case FT_CODEC_NONE:
			return "none";
		case FT_CODEC_LZ4:
			return "lz4";
		case FT_CODEC_ZSTD:
			return "zstd";
	}
	return "unknown";
}

/*
 * The codec named name, with its default level; false if there is none.
 *
 * zstd's default here is level 1, not libzstd's 3: on the index leaves
 * measured (integer keys, timestamps, md5 text) level 1 packed as densely
 * as level 3 or denser, for less CPU per flush.  Pages of 8 kB are small
 * units for zstd's higher levels, and where a leaf holds a whole decoded
 * page of entries (FT_VIEW_SIZE; e.g. three integer-like columns) no level
 * can pack more.
 */
bool
ft_codec_lookup(const char *name, FtCodecId *codec, int *default_level)
{
	if (pg_strcasecmp(name, "lz4") == 0)
	{
		*codec = FT_CODEC_LZ4;
		*default_level = 1;
		return true;
	}
	if (pg_strcasecmp(name, "zstd") == 0)
	{
		*codec = FT_CODEC_ZSTD;
		*default_level = 1;
		return true;
	}
	if (pg_strcasecmp(name, "none") == 0)
	{
		*codec = FT_CODEC_NONE;
		*default_level = 0;
		return true;
	}
	return false;
}

/* The levels a codec accepts: lz4 1 (fast) and 2..12 (HC); zstd 1..max */
void
ft_codec_level_range(FtCodecId codec, int *min, int *max)
{
	switch (codec)
	{
		case FT_CODEC_LZ4:
			*min = 1;
			*max = LZ4HC_CLEVEL_MAX;
			break;
		case FT_CODEC_ZSTD:
			*min = 1;
			*max = ZSTD_maxCLevel();
			break;
		default:
			*min = *max = 0;
			break;
	}
}

/* Room a compressed copy of len bytes may need */
Size
ft_codec_bound(FtCodecId codec, Size len)
{
	switch (codec)
	{
		case FT_CODEC_LZ4:
			return (Size) LZ4_compressBound((int) len);
		case FT_CODEC_ZSTD:
			return ZSTD_compressBound(len);
		default:
			return len;
	}
}

/*
 * Compress len bytes of src into dst (cap bytes); returns the compressed
 * length, or 0 if it does not fit.
 */
Size
ft_codec_compress(FtCodecId codec, int level, const char *src, Size len,
				  char *dst, Size cap)
{
	switch (codec)
	{
		case FT_CODEC_LZ4:
			{
				int			n;

				if (level <= 1)
					n = LZ4_compress_default(src, dst, (int) len, (int) cap);
				else
					n = LZ4_compress_HC(src, dst, (int) len, (int) cap, level);
				return n > 0 ? (Size) n : 0;
			}
		case FT_CODEC_ZSTD:
			{
				/* one context per backend: making one costs more than a page */
				static ZSTD_CCtx *cctx = NULL;
				size_t		n;

				if (cctx == NULL && (cctx = ZSTD_createCCtx()) == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_OUT_OF_MEMORY),
							 errmsg("out of memory"),
							 errdetail("Could not create a zstd compression context.")));
				n = ZSTD_compressCCtx(cctx, dst, cap, src, len, level);
				return ZSTD_isError(n) ? 0 : n;
			}
		default:
			if (len > cap)
				return 0;
			memcpy(dst, src, len);
			return len;
	}
}

/*
 * Decompress len bytes of src into exactly rawlen bytes at dst; false if
 * the input does not decode to that (never reads or writes out of bounds).
 */
bool
ft_codec_decompress(FtCodecId codec, const char *src, Size len, char *dst,
					Size rawlen)
{
	switch (codec)
	{
		case FT_CODEC_LZ4:
			return LZ4_decompress_safe(src, dst, (int) len, (int) rawlen) ==
				(int) rawlen;
		case FT_CODEC_ZSTD:
			{
				static ZSTD_DCtx *dctx = NULL;
				size_t		n;

				if (dctx == NULL && (dctx = ZSTD_createDCtx()) == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_OUT_OF_MEMORY),
							 errmsg("out of memory"),
							 errdetail("Could not create a zstd decompression context.")));
				n = ZSTD_decompressDCtx(dctx, dst, rawlen, src, len);
				return !ZSTD_isError(n) && n == rawlen;
			}
		default:
			if (len != rawlen)
				return false;
			memcpy(dst, src, len);
			return true;
	}
}

/*
 * Serialize the items of a page (high key and pivots included, each a
 * uint16 length and the bytes) into buf; returns the length.
 */
static Size
serialize_items(Page page, char *buf, int64 *nitems)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		n = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);
		uint16		l16 = (uint16) len;

		memcpy(buf + n, &l16, sizeof(l16));
		n += sizeof(l16);
		memcpy(buf + n, item, len);
		n += len;
	}
	if (FtPageIsLeaf(opaque))
		*nitems += maxoff - FtFirstDataOffset(opaque) + 1;
	else if (FtPageIsBuffer(opaque))
		*nitems += maxoff - FtFirstMsgOffset(opaque) + 1;
	else
		*nitems += opaque->ft_nchildren;
	return n;
}

/*
 * Compress every live page of the tree with codec at level, in backend
 * memory, and add up raw and compressed bytes per page kind.
 */
void
ft_compression_estimate(FtTree *tree, FtCodecId codec, int level,
						FtCompressionEstimate *est)
{
	BlockNumber nblocks = ft_nblocks(tree);
	char	   *copy = palloc(FT_WIDE_VIEW_MAX);	/* a wide view, too */
	char	   *raw = palloc(FT_WIDE_VIEW_MAX);
	Size		cap = ft_codec_bound(codec, FT_WIDE_VIEW_MAX);
	char	   *comp = palloc(cap);
	char	   *check = palloc(FT_WIDE_VIEW_MAX);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);

	memset(est, 0, sizeof(FtCompressionEstimate));
	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		/* a ring of buffers, as a sequential scan: not a cache flush */
		Buffer		buf = ReadBufferExtended(tree->rel, MAIN_FORKNUM, blkno,
											 RBM_NORMAL, strategy);
		Page		page = BufferGetPage(buf);
		FtPageOpaque opaque;
		int			kind;
		Size		rawlen;
		Size		complen;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (PageIsNew(page))
		{
			UnlockReleaseBuffer(buf);
			continue;
		}
		ft_checkpage(tree->rel, buf);
		/* a compressed leaf: what its entries would take recompressed */
		if (ft_leaf_is_compressed(page))
			ft_leaf_copy(tree, buf, copy);
		else
			memcpy(copy, page, BLCKSZ);
		UnlockReleaseBuffer(buf);

		opaque = FtPageGetOpaque(copy);
		if (FtPageIsDeleted(opaque) || (opaque->ft_flags & FT_PAGE_META))
			continue;
		kind = FtPageIsLeaf(opaque) ? FT_EST_LEAF :
			FtPageIsBuffer(opaque) ? FT_EST_BUFFER : FT_EST_ROUTING;
		rawlen = serialize_items(copy, raw, &est->items[kind]);
		complen = ft_codec_compress(codec, level, raw, rawlen, comp, cap);
		if (rawlen > 0 &&
			(complen == 0 ||
			 !ft_codec_decompress(codec, comp, complen, check, rawlen) ||
			 memcmp(check, raw, rawlen) != 0))
			elog(ERROR, "fractam: %s did not give back block %u of \"%s\"",
				 ft_codec_name(codec), blkno,
				 RelationGetRelationName(tree->rel));
		est->pages[kind]++;
		est->raw_bytes[kind] += rawlen;
		est->compressed_bytes[kind] += complen + FT_CODEC_FRAME_HEADER;
	}
	FreeAccessStrategy(strategy);
	pfree(copy);
	pfree(raw);
	pfree(comp);
	pfree(check);
}
