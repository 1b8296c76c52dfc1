--
-- fractam_compression_estimate: every page of a fractam index or table is
-- compressed in memory (lz4, zstd) and must decompress to the same bytes;
-- the function reports raw and compressed bytes per page kind.  Exact byte
-- counts depend on the library version, so this checks their shape: all
-- items counted, compressible data compressed, incompressible data not
-- inflated past the frame header, and clear errors for bad arguments and
-- for roles not granted EXECUTE.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE TABLE ce (id int, k int, label text, noise text) USING fractam;
CREATE INDEX ce_k ON ce USING fractam (k, label);
CREATE INDEX ce_noise ON ce USING fractam (noise);
INSERT INTO ce SELECT i, i % 100, 'sensor-' || (i % 10), md5(i::text)
FROM generate_series(1, 20000) i;

SELECT page_kind, pages > 0 AS has_pages, items,
	   raw_bytes > compressed_bytes AS smaller, ratio > 2 AS ratio_over_2,
	   pages_if_compressed < pages AS fewer_pages
FROM fractam_compression_estimate('ce_k', 'zstd') ORDER BY page_kind;
SELECT page_kind, items, ratio > 2 AS ratio_over_2
FROM fractam_compression_estimate('ce_k', 'lz4') WHERE page_kind = 'leaf';
-- a table's leaves hold its rows; levels go up to what each method allows
SELECT items, ratio > 1.2 AS compresses
FROM fractam_compression_estimate('ce', 'zstd', 19) WHERE page_kind = 'leaf';
SELECT items, ratio > 1.2 AS compresses
FROM fractam_compression_estimate('ce', 'lz4', 12) WHERE page_kind = 'leaf';
-- md5 text is barely compressible: never much worse than raw
SELECT ratio > 0.9 AS not_inflated
FROM fractam_compression_estimate('ce_noise', 'lz4') WHERE page_kind = 'leaf';
-- defaults: zstd at its default level
SELECT count(*) FROM fractam_compression_estimate('ce_k');
SELECT count(*) FROM fractam_compression_estimate('ce_k', NULL);

-- errors
SELECT * FROM fractam_compression_estimate('ce_k', 'gzip');
SELECT * FROM fractam_compression_estimate('ce_k', 'none');
SELECT * FROM fractam_compression_estimate('ce_k', 'zstd', 0);
SELECT * FROM fractam_compression_estimate('ce_k', 'lz4', 13);
CREATE ROLE ce_user;
SET ROLE ce_user;
SELECT * FROM fractam_compression_estimate('ce_k');
RESET ROLE;
DROP ROLE ce_user;
CREATE TABLE ce_heap (a int);
SELECT * FROM fractam_compression_estimate('ce_heap', 'zstd');
DROP TABLE ce_heap;
DROP TABLE ce;
