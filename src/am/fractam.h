/*-------------------------------------------------------------------------
 *
 * fractam.h
 *	  Declarations shared by fractam's access methods (src/am): library
 *	  init and the utility hook.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRACTAM_H
#define FRACTAM_H

/* utility_hook.c */
extern void fractam_install_utility_hook(void);

#endif							/* FRACTAM_H */
