# fractam: PGXS build.  `make PG_CONFIG=/path/to/pg_config` to pick a server.

MODULE_big = fractam
EXTENSION = fractam
DATA = sql/fractam--0.1.sql
PGFILEDESC = "fractam - buffered fractal-tree access methods"

OBJS = \
	src/am/fractam_module.o \
	src/am/utility_hook.o \
	src/am/executor_hook.o \
	src/am/sql_functions.o \
	src/am/index/index_handler.o \
	src/am/index/index_compare.o \
	src/am/index/index_build.o \
	src/am/index/index_insert.o \
	src/am/index/index_scan.o \
	src/am/index/index_vacuum.o \
	src/am/index/index_prune.o \
	src/am/index/index_cost.o \
	src/am/index/index_validate.o \
	src/am/index/speculative.o \
	src/am/table/table_handler.o \
	src/am/table/table_storage.o \
	src/am/table/table_rowid_reuse.o \
	src/am/table/table_columns.o \
	src/am/table/table_format.o \
	src/am/table/table_visibility.o \
	src/am/table/table_scan.o \
	src/am/table/table_modify.o \
	src/am/table/table_lock.o \
	src/am/table/table_xmax.o \
	src/am/table/table_build.o \
	src/am/table/table_vacuum.o \
	src/am/table/table_prune.o \
	src/am/table/table_freeze.o \
	src/am/table/table_vm.o \
	src/am/table/table_partition.o \
	src/am/table/table_options.o \
	src/am/table/table_executor.o \
	src/am/table/table_stats.o \
	src/am/table/table_logical.o \
	src/ft/ft_init.o \
	src/ft/ft_page.o \
	src/ft/ft_buffer.o \
	src/ft/ft_merge.o \
	src/ft/ft_item.o \
	src/ft/ft_search.o \
	src/ft/ft_routecache.o \
	src/ft/ft_oscache.o \
	src/ft/ft_insert.o \
	src/ft/ft_flush.o \
	src/ft/ft_seal.o \
	src/ft/ft_split.o \
	src/ft/ft_scan.o \
	src/ft/ft_build.o \
	src/ft/ft_vacuum.o \
	src/ft/ft_prune.o \
	src/ft/ft_codec.o \
	src/ft/ft_planes.o \
	src/ft/ft_columns.o \
	src/ft/ft_compress.o \
	src/ft/ft_verify.o \
	src/wal/ft_xlog.o \
	src/wal/ft_redo.o \
	src/wal/ft_desc.o \
	src/wal/ft_decode.o

PG_CPPFLAGS = -I$(srcdir)/src
# page compressors (liblz4-dev, libzstd-dev)
SHLIB_LINK = -llz4 -lzstd
# Debian's PGXS sets with_llvm = yes; bitcode is optional for an extension.
with_llvm = no

REGRESS = $(patsubst sql/%.sql,%,$(filter-out sql/fractam--%.sql,$(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --load-extension=fractam
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --load-extension=fractam
TAP_TESTS = 1

ifdef WERROR
PG_CFLAGS += -Werror
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: rebuild everything when one changes.
$(OBJS): $(wildcard $(srcdir)/src/*/*.h $(srcdir)/src/*/*/*.h)
