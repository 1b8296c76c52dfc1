/*-------------------------------------------------------------------------
 *
 * fractam.h
 *	  Declarations shared by fractam's access methods (src/am): library
 *	  init, the utility hook and the executor hook.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRACTAM_H
#define FRACTAM_H

/* utility_hook.c */
extern void fractam_install_utility_hook(void);

/* executor_hook.c */
extern void fractam_install_executor_hook(void);

#endif							/* FRACTAM_H */
