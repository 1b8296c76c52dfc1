/*-------------------------------------------------------------------------
 *
 * fractam.h
 *	  Declarations shared by fractam's access methods (src/am): library
 *	  init, the utility hook, the executor hook and small helpers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRACTAM_H
#define FRACTAM_H

#include "access/transam.h"

/* utility_hook.c */
extern void fractam_install_utility_hook(void);
extern int	fractam_utility_depth(void);

/* executor_hook.c */
extern void fractam_install_executor_hook(void);

/* index/index_handler.c: the compression options of indexes and tables */
extern void fractam_validate_compression(const char *value);
extern void fractam_check_compression_level(int codec, int level);
/* ... and fractam.default_compression, for relations created without one */
extern int	fractam_default_compression;

/*
 * A 32-bit xid near the present (a removal horizon: not older than the
 * oldest xid still stored) as a full one, for XLOG_FT_REUSE records.
 */
static inline FullTransactionId
fractam_full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (xid > XidFromFullTransactionId(next))
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, xid);
}

#endif							/* FRACTAM_H */
