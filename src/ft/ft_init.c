/*-------------------------------------------------------------------------
 *
 * ft_init.c
 *	  Library-load initialization of the tree engine: the settings and
 *	  invalidation callbacks of its backend-local caches.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"

void
ft_init(void)
{
	ft_buffer_init();
	ft_routecache_init();
	ft_item_init();
	ft_oscache_init();
	ft_compress_init();
	ft_seal_init();
}
