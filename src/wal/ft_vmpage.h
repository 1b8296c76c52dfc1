/*-------------------------------------------------------------------------
 *
 * ft_vmpage.h
 *	  Bits of a visibility-map page, for a fractam table's map fork.
 *
 * PostgreSQL's visibility-map page layout (visibilitymap.c): after the page
 * header, two bits per TID block (VISIBILITYMAP_ALL_VISIBLE,
 * VISIBILITYMAP_ALL_FROZEN), four blocks per byte; map page m covers TID
 * blocks m * FT_VM_BLOCKS_PER_PAGE and up.  fractam writes the bits itself
 * (visibilitymap_set logs heap records for heap pages) and the executor
 * reads them with visibilitymap_get_status, as for a heap.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FT_VMPAGE_H
#define FT_VMPAGE_H

#include "access/visibilitymapdefs.h"
#include "storage/bufpage.h"

#define FT_VM_MAPSIZE			(BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define FT_VM_BLOCKS_PER_BYTE	(BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define FT_VM_BLOCKS_PER_PAGE	(FT_VM_MAPSIZE * FT_VM_BLOCKS_PER_BYTE)

/* the map page that holds blk's bits */
static inline BlockNumber
ft_vm_map_block(BlockNumber blk)
{
	return blk / FT_VM_BLOCKS_PER_PAGE;
}

static inline uint8
ft_vm_page_get(Page page, BlockNumber blk)
{
	uint32		byte = (blk % FT_VM_BLOCKS_PER_PAGE) / FT_VM_BLOCKS_PER_BYTE;
	uint8		shift = (blk % FT_VM_BLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK;

	return (((uint8 *) PageGetContents(page))[byte] >> shift) &
		VISIBILITYMAP_VALID_BITS;
}

/* set (on) or clear flags of blk; returns whether the page changed */
static inline bool
ft_vm_page_change(Page page, BlockNumber blk, uint8 flags, bool on)
{
	uint32		byte = (blk % FT_VM_BLOCKS_PER_PAGE) / FT_VM_BLOCKS_PER_BYTE;
	uint8		shift = (blk % FT_VM_BLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK;
	uint8	   *map = (uint8 *) PageGetContents(page);
	uint8		old = map[byte];

	if (on)
		map[byte] |= (uint8) (flags << shift);
	else
		map[byte] &= (uint8) ~(flags << shift);
	return map[byte] != old;
}

#endif							/* FT_VMPAGE_H */
