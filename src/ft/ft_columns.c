/*-------------------------------------------------------------------------
 *
 * ft_columns.c
 *	  The column filter of a table's compressed parts
 *	  (FT_PART_FILTER_COLUMNS, ft_page.h).
 *
 * A general-purpose compressor fed a table's rows one after another finds
 * the bytes that repeat (constant columns, a timestamp shared by a batch)
 * but not the structure of the rest: a counter that goes up by one is a
 * new string of bytes in every row, and a double such as 12.3 is eight
 * bytes of mantissa noise.  Percona's timeseries rows thus packed to about
 * 16-20 bytes a row with zstd (../shared/notes/compression.md §2).  Stored
 * field by field, as columns, the same rows take a third of that:
 *
 *	- an integer column is stored as the offset of each value from the
 *	  column's least value ("frame of reference"), or, when that is
 *	  narrower, as the offset of each step between neighbours from the
 *	  least step: a row id or a sensor number that goes up by one, a
 *	  batch's xmin or timestamp, take no bytes at all;
 *	- a double column whose values are all exact decimals of at most
 *	  FT_COLUMN_MAX_SCALE places (v == m / 10^s for integers m and a
 *	  common s) is stored as the integers m, coded as an integer column;
 *	- everything else (flags, padding, text, noisy doubles) as byte
 *	  planes with a difference per plane, as an index's entries are
 *	  (ft_planes.c).
 *
 * The stored offsets of a column are written as byte planes of the
 * column's width (the low byte of every row, then the next), so that the
 * codec that runs afterwards sees each plane's skew (values 1..1000 take a
 * byte and a quarter, the high plane being nearly constant).
 *
 * The owner of the tree (the table AM, which knows the row's types) says
 * what each field of a row is (FtTree.row_fields), for the first row of a
 * part; the filter takes that as a hint only.  Every row of a filtered
 * part has the same length, every field covers the same bytes of each
 * row, and an integer is just its bytes read as a number, so whatever the
 * hint, the bytes come back exactly; a double column is coded as decimals
 * only if every value checks (its decoding gives back its exact bits,
 * which excludes NaNs, infinities and -0), else as byte planes.  Decoding
 * thus needs no type and no catalog: what a part says of its fields is
 * in the part.
 *
 * Encoded part: uint16 row length, uint8 field count, then per field an
 * encoding byte (ENC_*), a uint16 width, and for the integer encodings
 * the stored width (0..8 bytes), the scale, the base and, for steps, the
 * least step (int64s, unaligned); then the fields' bytes in field order:
 * width planes of n bytes for ENC_PLANES, stored-width planes of n bytes
 * for the others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "ft/ft_int.h"
#include "port/pg_bswap.h"
#include "utils/memutils.h"

/* how a field's bytes are stored */
#define ENC_PLANES		0		/* byte planes, a difference per plane */
#define ENC_BASE		1		/* integer: offset from the least value */
#define ENC_STEP		2		/* integer: offset of the step from the
								 * least step */
#define ENC_DEC_BASE	3		/* double: m of m / 10^scale, ENC_BASE */
#define ENC_DEC_STEP	4		/* ... ENC_STEP */
#define ENC_MAX			ENC_DEC_STEP

#define ENC_FLAG_BE		0x80	/* an integer encoding: big-endian bytes */

#define IsIntEnc(e)		((e) == ENC_BASE || (e) == ENC_STEP)
#define IsDecEnc(e)		((e) == ENC_DEC_BASE || (e) == ENC_DEC_STEP)
#define IsStepEnc(e)	((e) == ENC_STEP || (e) == ENC_DEC_STEP)

/*
 * Places of a decimal, at most (the powers of ten up to it are exact
 * doubles; a value is taken only if it comes back bit for bit anyway)
 */
#define FT_COLUMN_MAX_SCALE	9
/* integers a double represents exactly, and more than any scaled m */
#define DEC_INT_LIMIT	9007199254740992.0	/* 2^53 */

/* rows a part must have for columns to pay for their descriptions */
#define FT_COLUMN_MIN_ROWS	8

static const double pow10_table[FT_COLUMN_MAX_SCALE + 1] = {
	1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0, 10000000.0,
	100000000.0, 1000000000.0
};

typedef struct ColumnDesc
{
	uint8		enc;			/* ENC_*, with ENC_FLAG_BE */
	uint16		width;			/* bytes of the row */
	uint8		stored;			/* bytes per row stored (integer encodings) */
	uint8		scale;			/* ENC_DEC_*: places */
	uint64		base;			/* ENC_*BASE: least value; ENC_*STEP: first */
	uint64		step;			/* ENC_*STEP: least step */
} ColumnDesc;

/* scratch of one part's values (a part holds a few hundred rows) */
static uint64 *values = NULL;
static int	values_cap = 0;

static uint64 *
values_for(int n)
{
	if (n > values_cap)
	{
		int			cap = Max(n, 1024);

		if (values)
			pfree(values);
		values = MemoryContextAlloc(TopMemoryContext, cap * sizeof(uint64));
		values_cap = cap;
	}
	return values;
}

/* the encoder's values of each field of a part, kept between its passes */
static uint64 *field_vals = NULL;
static int	field_vals_rows = 0;

static uint64 *
field_values(int f, int n)
{
	if (n > field_vals_rows)
	{
		if (field_vals)
			pfree(field_vals);
		field_vals_rows = Max(n, 512);
		field_vals = MemoryContextAlloc(TopMemoryContext,
										sizeof(uint64) * field_vals_rows *
										FT_MAX_ROW_FIELDS);
	}
	return field_vals + (Size) f * field_vals_rows;
}

/* bytes that hold x (0 for 0) */
static inline int
bytes_for(uint64 x)
{
	int			n = 0;

	while (x != 0)
	{
		n++;
		x >>= 8;
	}
	return n;
}

/* the width bytes at p as a sign-extended integer */
static inline uint64
read_int(const char *p, int width, bool be)
{
	const uint8 *b = (const uint8 *) p;
	uint64		v = 0;
	int			shift = 64 - 8 * width;

#ifndef WORDS_BIGENDIAN
	if (!be && width == sizeof(int32))
	{
		int32		x;

		memcpy(&x, p, sizeof(x));
		return (uint64) (int64) x;
	}
	if (!be && width == sizeof(uint64))
	{
		memcpy(&v, p, sizeof(v));
		return v;
	}
#endif
	if (be)
		for (int i = 0; i < width; i++)
			v = (v << 8) | b[i];
	else
		for (int i = width - 1; i >= 0; i--)
			v = (v << 8) | b[i];
	/* sign-extend: a negative value's offsets stay small */
	if (shift > 0)
		v = (uint64) (((int64) (v << shift)) >> shift);
	return v;
}

static inline void
write_int(char *p, int width, bool be, uint64 v)
{
	uint8	   *b = (uint8 *) p;

	if (be)
		for (int i = width - 1; i >= 0; i--, v >>= 8)
			b[i] = (uint8) v;
	else
		for (int i = 0; i < width; i++, v >>= 8)
			b[i] = (uint8) v;
}

/*
 * The scale s at which every one of vals[0..n) (doubles' bits) is an exact
 * decimal m / 10^s, replacing vals with the m; -1 (vals unchanged) if none.
 */
static int
decimal_scale(uint64 *vals, int n)
{
	uint64	   *m = values_for(n);

	for (int s = 0; s <= FT_COLUMN_MAX_SCALE; s++)
	{
		int			i;

		for (i = 0; i < n; i++)
		{
			double		v;
			double		t;
			double		back;
			int64		mi;

			memcpy(&v, &vals[i], sizeof(v));
			t = v * pow10_table[s];
			if (!(fabs(t) < DEC_INT_LIMIT))
				break;			/* too large, or not a number */
			mi = (int64) rint(t);
			back = (double) mi / pow10_table[s];
			if (memcmp(&back, &vals[i], sizeof(back)) != 0)
				break;
			m[i] = (uint64) mi;
		}
		if (i == n)
		{
			memcpy(vals, m, sizeof(uint64) * n);
			return s;
		}
	}
	return -1;
}

/*
 * Choose how to store the integers vals[0..n) (sign-extended, as uint64
 * to wrap): as offsets from their least value, or of their steps from the
 * least step, whichever takes fewer bytes; vals become the offsets.
 */
static void
choose_integers(ColumnDesc *d, uint64 *vals, int n, bool dec)
{
	int64		min = (int64) vals[0];
	int64		max = (int64) vals[0];
	int64		smin = 0;
	int64		smax = 0;
	int			basebytes;
	int			stepbytes;

	for (int i = 1; i < n; i++)
	{
		int64		v = (int64) vals[i];
		int64		st = (int64) (vals[i] - vals[i - 1]);

		min = Min(min, v);
		max = Max(max, v);
		if (i == 1)
			smin = smax = st;
		smin = Min(smin, st);
		smax = Max(smax, st);
	}
	basebytes = bytes_for((uint64) max - (uint64) min);
	stepbytes = (n > 1) ? bytes_for((uint64) smax - (uint64) smin) : 8;
	if (stepbytes < basebytes)
	{
		uint64		prev = vals[0];

		d->enc = (d->enc & ENC_FLAG_BE) | (dec ? ENC_DEC_STEP : ENC_STEP);
		d->stored = (uint8) stepbytes;
		d->base = vals[0];
		d->step = (uint64) smin;
		vals[0] = 0;
		for (int i = 1; i < n; i++)
		{
			uint64		v = vals[i];

			vals[i] = v - prev - (uint64) smin;
			prev = v;
		}
	}
	else
	{
		d->enc = (d->enc & ENC_FLAG_BE) | (dec ? ENC_DEC_BASE : ENC_BASE);
		d->stored = (uint8) basebytes;
		d->base = (uint64) min;
		d->step = 0;
		for (int i = 0; i < n; i++)
			vals[i] -= (uint64) min;
	}
}

/* the low bytes of vals[0..n) as stored planes at dst */
static char *
put_planes(char *dst, const uint64 *vals, int n, int stored)
{
	for (int b = 0; b < stored; b++)
		for (int i = 0; i < n; i++)
			*dst++ = (char) (uint8) (vals[i] >> (8 * b));
	return dst;
}

/*
 * The n rows items[0..n), each len bytes, field by field into dst (cap
 * bytes); returns the length written, or 0 if they are not to be stored
 * as columns (too few rows, no fields, or no room).
 */
Size
ft_columns_encode(FtTree *tree, char **items, int n, Size len, char *dst,
				  Size cap)
{
	FtRowField fields[FT_MAX_ROW_FIELDS];
	ColumnDesc descs[FT_MAX_ROW_FIELDS];
	int			nfields;
	Size		covered = 0;
	Size		need;
	Size		off;
	char	   *p;
	uint64	   *vals;

	if (tree->row_fields == NULL || n < FT_COLUMN_MIN_ROWS ||
		len > PG_UINT16_MAX)
		return 0;
	nfields = tree->row_fields(tree, items[0], len, fields);
	if (nfields <= 0 || nfields > FT_MAX_ROW_FIELDS)
		return 0;
	for (int f = 0; f < nfields; f++)
	{
		if (fields[f].width == 0)
			return 0;
		covered += fields[f].width;
	}
	if (covered != len)
		return 0;

	/* the descriptions, and what the bytes will take */
	need = sizeof(uint16) + 1;
	off = 0;
	for (int f = 0; f < nfields; f++)
	{
		ColumnDesc *d = &descs[f];
		int			w = fields[f].width;
		uint8		kind = fields[f].kind;
		bool		be = (kind == FT_FIELD_INT_BE);

		memset(d, 0, sizeof(*d));
		d->width = (uint16) w;
		d->enc = ENC_PLANES;
		if (((kind == FT_FIELD_INT || be) && (w == 1 || w == 2 || w == 4 || w == 8)) ||
			(kind == FT_FIELD_FLOAT8 && w == sizeof(double)))
		{
			int			scale = 0;

			vals = field_values(f, n);
			for (int i = 0; i < n; i++)
				vals[i] = read_int(items[i] + off, w, be);
			if (kind == FT_FIELD_FLOAT8)
				scale = decimal_scale(vals, n);
			if (scale >= 0)
			{
				d->enc = be ? ENC_FLAG_BE : 0;
				d->scale = (uint8) scale;
				choose_integers(d, vals, n, kind == FT_FIELD_FLOAT8);
			}
		}
		need += 1 + sizeof(uint16);
		if (d->enc == ENC_PLANES)
			need += (Size) w * n;
		else
			need += 2 + sizeof(uint64) * (IsStepEnc(d->enc & ~ENC_FLAG_BE) ? 2 : 1) +
				(Size) d->stored * n;
		off += w;
	}
	if (need > cap)
		return 0;

	/* the header and descriptions */
	p = dst;
	{
		uint16		l16 = (uint16) len;
		uint8		nf = (uint8) nfields;

		memcpy(p, &l16, sizeof(l16));
		p += sizeof(l16);
		*p++ = (char) nf;
	}
	for (int f = 0; f < nfields; f++)
	{
		ColumnDesc *d = &descs[f];

		*p++ = (char) d->enc;
		memcpy(p, &d->width, sizeof(uint16));
		p += sizeof(uint16);
		if (d->enc == ENC_PLANES)
			continue;
		*p++ = (char) d->stored;
		*p++ = (char) d->scale;
		memcpy(p, &d->base, sizeof(uint64));
		p += sizeof(uint64);
		if (IsStepEnc(d->enc & ~ENC_FLAG_BE))
		{
			memcpy(p, &d->step, sizeof(uint64));
			p += sizeof(uint64);
		}
	}

	/* the fields' bytes: the offsets the first pass left in field_values */
	off = 0;
	for (int f = 0; f < nfields; f++)
	{
		ColumnDesc *d = &descs[f];
		int			w = d->width;

		if (d->enc == ENC_PLANES)
		{
			for (int j = 0; j < w; j++)
			{
				uint8		prev = 0;

				for (int i = 0; i < n; i++)
				{
					uint8		b = (uint8) items[i][off + j];

					*p++ = (char) (uint8) (b - prev);
					prev = b;
				}
			}
		}
		else
			p = put_planes(p, field_values(f, n), n, d->stored);
		off += w;
	}
	Assert((Size) (p - dst) == need);
	return need;
}

/*
 * Decode a part's columns (src, srclen bytes) of n rows into dst: each row
 * after its length as a uint16, dstlen bytes in all.  False if what src
 * says does not hold together (the caller reports the corruption).
 */
bool
ft_columns_decode(const char *src, Size srclen, int n, char *dst,
				  Size dstlen)
{
	ColumnDesc	descs[FT_MAX_ROW_FIELDS];
	const char *p = src;
	const char *end = src + srclen;
	uint16		len;
	int			nfields;
	Size		width = 0;
	Size		stride;
	Size		bytes = 0;
	Size		off;

	if (n <= 0 || srclen < sizeof(uint16) + 1)
		return false;
	memcpy(&len, p, sizeof(len));
	p += sizeof(len);
	nfields = (uint8) *p++;
	stride = sizeof(uint16) + len;
	if (len == 0 || nfields == 0 || nfields > FT_MAX_ROW_FIELDS ||
		stride * n != dstlen)
		return false;
	for (int f = 0; f < nfields; f++)
	{
		ColumnDesc *d = &descs[f];
		uint8		enc;

		memset(d, 0, sizeof(*d));
		if (end - p < 1 + (long) sizeof(uint16))
			return false;
		d->enc = (uint8) *p++;
		memcpy(&d->width, p, sizeof(uint16));
		p += sizeof(uint16);
		enc = d->enc & ~ENC_FLAG_BE;
		if (d->width == 0 || enc > ENC_MAX ||
			(d->enc == (ENC_PLANES | ENC_FLAG_BE)))
			return false;
		width += d->width;
		if (enc == ENC_PLANES)
		{
			bytes += (Size) d->width * n;
			continue;
		}
		if (end - p < 2 + (long) sizeof(uint64) * (IsStepEnc(enc) ? 2 : 1))
			return false;
		d->stored = (uint8) *p++;
		d->scale = (uint8) *p++;
		memcpy(&d->base, p, sizeof(uint64));
		p += sizeof(uint64);
		if (IsStepEnc(enc))
		{
			memcpy(&d->step, p, sizeof(uint64));
			p += sizeof(uint64);
		}
		if (d->stored > sizeof(uint64) || d->scale > FT_COLUMN_MAX_SCALE ||
			(IsIntEnc(enc) &&
			 !(d->width == 1 || d->width == 2 || d->width == 4 || d->width == 8)) ||
			(IsDecEnc(enc) &&
			 (d->width != sizeof(double) || (d->enc & ENC_FLAG_BE))))
			return false;
		bytes += (Size) d->stored * n;
	}
	if (width != len || (Size) (end - p) != bytes)
		return false;

	for (int i = 0; i < n; i++)
		memcpy(dst + i * stride, &len, sizeof(len));
	off = sizeof(uint16);
	for (int f = 0; f < nfields; f++)
	{
		ColumnDesc *d = &descs[f];
		uint8		enc = d->enc & ~ENC_FLAG_BE;
		bool		be = (d->enc & ENC_FLAG_BE) != 0;

		if (enc == ENC_PLANES)
		{
			for (int j = 0; j < d->width; j++)
			{
				uint8		prev = 0;
				char	   *at = dst + off + j;

				for (int i = 0; i < n; i++, at += stride)
				{
					prev = (uint8) (prev + (uint8) *p++);
					*at = (char) prev;
				}
			}
		}
		else
		{
			uint64	   *vals = values_for(n);
			char	   *at = dst + off;

			/* the stored offsets, a plane at a time */
			if (d->stored == 0)
				memset(vals, 0, sizeof(uint64) * n);
			else
			{
				for (int i = 0; i < n; i++)
					vals[i] = (uint8) p[i];
				for (int b = 1; b < d->stored; b++)
				{
					const uint8 *plane = (const uint8 *) p + (Size) b * n;

					for (int i = 0; i < n; i++)
						vals[i] |= (uint64) plane[i] << (8 * b);
				}
			}

			/* the values */
			if (IsStepEnc(enc))
			{
				uint64		acc = d->base + vals[0];

				vals[0] = acc;
				for (int i = 1; i < n; i++)
				{
					acc += d->step + vals[i];
					vals[i] = acc;
				}
			}
			else
				for (int i = 0; i < n; i++)
					vals[i] += d->base;

			/* into the rows */
			if (IsDecEnc(enc))
			{
				double		scale = pow10_table[d->scale];

				for (int i = 0; i < n; i++, at += stride)
				{
					double		x = (double) (int64) vals[i] / scale;

					memcpy(at, &x, sizeof(x));
				}
			}
#ifndef WORDS_BIGENDIAN
			else if (!be)
			{
				for (int i = 0; i < n; i++, at += stride)
					memcpy(at, &vals[i], d->width);
			}
			else if (d->width == sizeof(uint64))
			{
				for (int i = 0; i < n; i++, at += stride)
				{
					uint64		v = pg_hton64(vals[i]);

					memcpy(at, &v, sizeof(v));
				}
			}
#endif
			else
				for (int i = 0; i < n; i++, at += stride)
					write_int(at, d->width, be, vals[i]);
			p += (Size) d->stored * n;
		}
		off += d->width;
	}
	Assert(p == end);
	return true;
}
