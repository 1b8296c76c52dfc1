/*-------------------------------------------------------------------------
 *
 * ft_planes.c
 *	  The byte-plane filter of a compressed frame's parts
 *	  (FT_PART_FILTER_PLANES, ft_page.h).
 *
 * An index leaf's entries are sorted, and in most indexes they have one
 * length: the key's columns and the TID, padded.  Neighbours then differ in
 * a few bytes (the last of a timestamp, a TID's offset), and a general
 * compressor fed the entries one after another sees a match of a dozen
 * bytes per entry at best: zstd packs the timeseries key's entries to 4.7
 * bytes each.  Stored as byte planes (the first byte of every entry, then
 * the second, ...), each byte as its difference from the same byte of the
 * entry before, the constant columns become runs of zeros and a timestamp
 * that ticks becomes a run of ones: 0.75 bytes an entry.  This is the
 * transposition Blosc calls shuffle, with a delta per plane; being done on
 * bytes it knows nothing of types, so it serves every fixed-width key.
 *
 * Both directions are plain loops over n * len bytes, a few microseconds
 * per 8 kB part, against the tens a part's decompression takes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"

/*
 * src holds n entries of len bytes each, one after another; write them to
 * dst (n * len bytes, not overlapping src) as len planes of n byte
 * differences each.
 */
void
ft_planes_encode(const char *src, char *dst, int n, Size len)
{
	const uint8 *s = (const uint8 *) src;
	uint8	   *d = (uint8 *) dst;

	for (Size j = 0; j < len; j++)
	{
		uint8		prev = 0;
		uint8	   *plane = d + j * n;

		for (int i = 0; i < n; i++)
		{
			uint8		b = s[i * len + j];

			plane[i] = (uint8) (b - prev);
			prev = b;
		}
	}
}

/* The inverse of ft_planes_encode: src's planes back into dst's entries */
void
ft_planes_decode(const char *src, char *dst, int n, Size len)
{
	const uint8 *s = (const uint8 *) src;
	uint8	   *d = (uint8 *) dst;

	for (Size j = 0; j < len; j++)
	{
		uint8		prev = 0;
		const uint8 *plane = s + j * n;

		for (int i = 0; i < n; i++)
		{
			prev = (uint8) (prev + plane[i]);
			d[i * len + j] = prev;
		}
	}
}
