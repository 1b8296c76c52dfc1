--
-- fractam_compression: compressed index leaves (lz4, zstd).
--
-- Leaves are compressed where they are rewritten whole: index builds,
-- flushes of buffered messages into a leaf, and the pages an append point
-- leaves behind.  A direct insert into a compressed leaf rewrites it
-- uncompressed; deletes only set dead bits.  Every step is checked against
-- a btree index on the same table and with fractam_verify, which decodes
-- every compressed leaf.
--

-- options: methods, levels, clear errors
CREATE TABLE cz (id int, k int, t text);
CREATE INDEX cz_bad ON cz USING fractam (k) WITH (compression = 'gzip');
CREATE INDEX cz_bad ON cz USING fractam (k) WITH (compression = 'lz4', compression_level = 13);
CREATE INDEX cz_bad ON cz USING fractam (k) WITH (compression = 'zstd', compression_level = 23);
CREATE INDEX cz_bad ON cz USING fractam (k) WITH (compression_level = 3);
CREATE TABLE cz_t (a int) USING fractam WITH (compression = 'brotli');
CREATE INDEX cz_k_z ON cz USING fractam (k, id) WITH (compression = 'zstd', fanout = 4);
CREATE INDEX cz_t_l ON cz USING fractam (t, id) WITH (compression = 'lz4', compression_level = 9, fanout = 4);
CREATE UNIQUE INDEX cz_id_z ON cz USING fractam (id) WITH (compression = 'zstd');
CREATE INDEX cz_k_bt ON cz (k, id);
-- fractam.default_compression is written into the options of new indexes;
-- an explicit 'none' stays, and so do the options of an index created
-- under the catalog name, as pg_dump writes it
SHOW fractam.default_compression;
SET fractam.default_compression = 'lz4';
CREATE INDEX cz_id_d ON cz USING fractam (id);
CREATE INDEX cz_id_plain ON cz USING fractam (id) WITH (compression = 'none');
CREATE INDEX cz_id_dump ON cz USING fractam_index (id);
RESET fractam.default_compression;
CREATE INDEX cz_id_n ON cz USING fractam (id);
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'cz\_%' ORDER BY relname;
ALTER INDEX cz_id_n SET (compression = 'zstd', compression_level = 1);
ALTER INDEX cz_id_n SET (compression = 'brotli');
ALTER INDEX cz_id_n RESET (compression_level);
SELECT reloptions FROM pg_class WHERE relname = 'cz_id_n';
BEGIN;
ALTER INDEX cz_id_n SET (compression = 'lz4');
ROLLBACK;
SELECT reloptions FROM pg_class WHERE relname = 'cz_id_n';

-- a build compresses every leaf but a lone root
INSERT INTO cz SELECT g, (g * 7919) % 50000, 'v' || (g % 3000)
FROM generate_series(1, 60000) g;
REINDEX TABLE cz;
SELECT relname, leaf_pages > 1 AS several, compressed_leaf_pages >= leaf_pages - 1 AS compressed,
       compression_ratio > 1.5 AS smaller
FROM pg_class c, fractam_stats(c.oid) s
WHERE relname IN ('cz_k_z', 'cz_t_l', 'cz_id_z', 'cz_id_d', 'cz_id_n') ORDER BY relname;
SELECT pg_relation_size('cz_k_z') < pg_relation_size('cz_k_bt') AS smaller_than_btree;
SELECT relname, leaf_pages > 1 AS several, compressed_leaf_pages = 0 AS uncompressed
FROM pg_class c, fractam_stats(c.oid) s
WHERE relname IN ('cz_id_plain', 'cz_id_dump') ORDER BY relname;
DROP INDEX cz_id_plain, cz_id_dump;

DROP INDEX cz_k_bt;

-- a query's answer through the fractam indexes (index or bitmap scans) or
-- through a sequential scan
CREATE FUNCTION cz_q(q text, mode text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	PERFORM set_config('enable_seqscan', (mode = 'seq')::text, true);
	PERFORM set_config('enable_indexscan', (mode = 'index')::text, true);
	PERFORM set_config('enable_indexonlyscan', (mode = 'index')::text, true);
	PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
	EXECUTE q INTO r;
	RETURN r;
END $$;
CREATE FUNCTION cz_check() RETURNS TABLE (what text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q text;
BEGIN
	FOREACH q IN ARRAY ARRAY[
		'SELECT md5(string_agg(id::text, '','' ORDER BY k, id)) FROM cz WHERE k BETWEEN 1000 AND 30000',
		'SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM cz WHERE k BETWEEN 1000 AND 30000 ORDER BY k DESC, id DESC) s',
		'SELECT count(*) FROM cz WHERE k < 25000',
		'SELECT md5(string_agg(id::text, '','' ORDER BY t, id)) FROM cz WHERE t BETWEEN ''v1'' AND ''w2''',
		'SELECT count(*) FROM generate_series(1, 250000, 7) g WHERE EXISTS (SELECT 1 FROM cz WHERE id = g)']
	LOOP
		RETURN QUERY SELECT left(q, 60), cz_q(q, 'index') = cz_q(q, 'seq');
	END LOOP;
	q := 'SELECT sum(id::bigint) FROM cz WHERE k BETWEEN 7 AND 40000 OR t = ''v17''';
	RETURN QUERY SELECT 'bitmap', cz_q(q, 'bitmap') = cz_q(q, 'seq');
END $$;
SELECT * FROM cz_check();
-- the plans do use the fractam indexes
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM cz WHERE k BETWEEN 1000 AND 30000 ORDER BY k DESC, id DESC;
EXPLAIN (COSTS OFF) SELECT id FROM cz WHERE t BETWEEN 'v1' AND 'w2';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- buffered inserts flush into compressed leaves, which stay compressed
SET fractam.direct_apply = off;
INSERT INTO cz SELECT g, (g * 7919) % 50000, 'w' || (g % 2000)
FROM generate_series(60001, 120000) g;
RESET fractam.direct_apply;
SELECT fractam_verify('cz_k_z'), fractam_verify('cz_t_l'), fractam_verify('cz_id_z');
SELECT relname, compressed_leaf_pages * 2 > leaf_pages AS mostly_compressed
FROM pg_class c, fractam_stats(c.oid) s
WHERE relname IN ('cz_k_z', 'cz_t_l') ORDER BY relname;
SELECT * FROM cz_check();

-- flushes fill compressed leaves: a leaf is compressed when it would
-- split, and a full compressed leaf splits into halves that take more
-- (cut greedily, it would leave a nearly empty page at every split)
CREATE TABLE cf (k int);
CREATE INDEX cf_k ON cf USING fractam (k) WITH (compression = 'zstd', fanout = 4);
SET fractam.direct_apply = off;
DO $$
BEGIN
	FOR b IN 0..19 LOOP
		INSERT INTO cf SELECT (g * 7919) % 1000003
		FROM generate_series(b * 10000 + 1, b * 10000 + 10000) g;
	END LOOP;
END $$;
RESET fractam.direct_apply;
-- an uncompressed leaf holds about 400 of these entries
SELECT compressed_leaf_pages * 10 > leaf_pages * 9 AS mostly_compressed,
       leaf_items / leaf_pages > 600 AS filled
FROM fractam_stats('cf_k');
SELECT fractam_verify('cf_k');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint) FROM cf WHERE k BETWEEN 0 AND 1000003;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*), sum(k::bigint) FROM cf;
-- a flush that fits the uncompressed leaf leaves it uncompressed (changed
-- in place, logged as a delta)
TRUNCATE cf;
ALTER INDEX cf_k SET (compression = 'none', fillfactor = 50);
ALTER INDEX cf_k RESET (fanout);
INSERT INTO cf SELECT g * 10 FROM generate_series(1, 40000) g;
REINDEX INDEX cf_k;
ALTER INDEX cf_k SET (compression = 'zstd');
SELECT leaf_pages AS leaves_before FROM fractam_stats('cf_k') \gset
SET fractam.direct_apply = off;
INSERT INTO cf SELECT ((g * 7919) % 40000) * 10 + 5 FROM generate_series(1, 20000) g;
RESET fractam.direct_apply;
SELECT flushes > 0 AS flushed, compressed_leaf_pages * 20 < leaf_pages AS few_compressed,
       leaf_pages = :leaves_before AS no_split
FROM fractam_stats('cf_k');
SELECT fractam_verify('cf_k');
SELECT count(*), sum(k::bigint) FROM cf;
DROP TABLE cf;

-- direct inserts into compressed leaves rewrite them uncompressed
INSERT INTO cz SELECT g, (g * 31) % 50000, 'x' || (g % 900)
FROM generate_series(120001, 140000) g;
SELECT fractam_verify('cz_k_z'), fractam_verify('cz_t_l'), fractam_verify('cz_id_z');
SELECT * FROM cz_check();

-- unique checks see entries in compressed leaves
INSERT INTO cz VALUES (5, 1, 'dup');
INSERT INTO cz VALUES (90000, 1, 'dup');
INSERT INTO cz VALUES (5, 1, 'dup') ON CONFLICT (id) DO NOTHING;
INSERT INTO cz VALUES (140001, 1, 'new') ON CONFLICT (id) DO UPDATE SET t = 'upd';
INSERT INTO cz VALUES (140001, 1, 'new') ON CONFLICT (id) DO UPDATE SET t = 'upd';
SELECT id, t FROM cz WHERE id = 140001;

-- deletes: VACUUM sets dead bits; a leaf that loses every entry empties
DELETE FROM cz WHERE id % 3 = 0 OR id BETWEEN 20000 AND 40000;
VACUUM cz;
SELECT fractam_verify('cz_k_z'), fractam_verify('cz_t_l'), fractam_verify('cz_id_z'),
       fractam_verify('cz_id_d'), fractam_verify('cz_id_n');
SELECT * FROM cz_check();
SELECT count(*) FROM cz WHERE id BETWEEN 20000 AND 40000;
-- the freed row ids are reused by heap: their old entries must be gone
INSERT INTO cz SELECT g, g % 50000, 'y' FROM generate_series(200001, 230000) g;
SELECT * FROM cz_check();
SELECT fractam_verify('cz_k_z'), fractam_verify('cz_id_z');

-- a small decoded-leaf cache, and none, give the same answers
SET fractam.decoded_leaf_cache = '64kB';
SELECT * FROM cz_check();
SET fractam.decoded_leaf_cache = 0;
SELECT * FROM cz_check();
RESET fractam.decoded_leaf_cache;

-- VACUUM FULL recompresses everything
VACUUM FULL cz;
SELECT relname, compressed_leaf_pages >= leaf_pages - 1 AS compressed
FROM pg_class c, fractam_stats(c.oid) s
WHERE relname IN ('cz_k_z', 'cz_t_l', 'cz_id_z') ORDER BY relname;
SELECT * FROM cz_check();

-- VACUUM unlinks an emptied leaf by changing its left neighbour's right
-- link in place: a backend that cached the neighbour decoded must follow
-- the new link, also once the freed page is reused
CREATE TABLE cs (id int);
INSERT INTO cs SELECT g FROM generate_series(1, 40000) g;
CREATE INDEX cs_i ON cs USING fractam (id) WITH (compression = 'lz4');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM cs WHERE id BETWEEN 1 AND 40000;
-- exactly the entries of one leaf, so that its left neighbour's frame
-- stays as this backend cached it: the leaf between the second and third
-- smallest high keys of leaves (where lz4 cuts them, read from the pages:
-- an int4 high key is the 4 bytes after its index tuple header)
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE TEMP TABLE cs_hikeys AS
SELECT get_byte(p, lo + 8) + 256 * get_byte(p, lo + 9) +
       65536 * get_byte(p, lo + 10) + 16777216 * get_byte(p, lo + 11) AS hk
FROM (SELECT p, (get_byte(p, 24) + 256 * get_byte(p, 25)) & 32767 AS lo,
             get_byte(p, 16) + 256 * get_byte(p, 17) AS sp
      FROM (SELECT get_raw_page('cs_i', b) AS p
            FROM generate_series(1, (pg_relation_size('cs_i') / 8192)::int - 1) b) r) s
WHERE get_byte(p, sp + 28) & 2 = 2
  AND get_byte(p, sp + 8) + get_byte(p, sp + 9) + get_byte(p, sp + 10) + get_byte(p, sp + 11) < 1020;
SELECT hk AS cut_lo FROM cs_hikeys ORDER BY hk OFFSET 1 LIMIT 1 \gset
SELECT hk AS cut_hi FROM cs_hikeys ORDER BY hk OFFSET 2 LIMIT 1 \gset
SELECT :cut_hi - :cut_lo > 500 AS one_leaf_of_many;
SELECT leaf_pages AS leaves_before FROM fractam_stats('cs_i') \gset
DELETE FROM cs WHERE id >= :cut_lo AND id < :cut_hi;
VACUUM (INDEX_CLEANUP ON) cs;
SELECT :leaves_before - leaf_pages AS leaves_unlinked FROM fractam_stats('cs_i');
SELECT fractam_verify('cs_i');
SELECT txid_current() > 0 AS burn;
SELECT txid_current() > 0 AS burn;
DELETE FROM cs WHERE id = 39000;
VACUUM (INDEX_CLEANUP ON) cs;
INSERT INTO cs SELECT g FROM generate_series(40001, 60000) g;
SELECT count(*) = (SELECT count(*) FROM generate_series(2000, 10000) g
                   WHERE NOT (g >= :cut_lo AND g < :cut_hi)) AS all_there
FROM cs WHERE id BETWEEN 2000 AND 10000;
SELECT fractam_verify('cs_i');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT cz_q('SELECT count(*) FROM cs WHERE id BETWEEN 2000 AND 10000', 'seq') =
       cz_q('SELECT count(*) FROM cs WHERE id BETWEEN 2000 AND 10000', 'index') AS seqscan_same;
DROP TABLE cs;

-- index scans decode only the part of a compressed leaf where they start
-- (frames of index leaves are cut into parts of 8 kB decoded): point
-- lookups, ranges that run past their part forward and backward, with
-- buffered entries inside the parts' ranges, and no decoded-leaf cache
-- (every lookup decodes) as with one
CREATE TABLE cp (id int, pad text);
INSERT INTO cp SELECT g, repeat('x', g % 7) FROM generate_series(1, 30000) g;
CREATE INDEX cp_i ON cp USING fractam (id, pad) WITH (compression = 'zstd');
SET fractam.direct_apply = off;
INSERT INTO cp SELECT g, 'new' FROM generate_series(1, 30000, 3) g;
RESET fractam.direct_apply;
SELECT buffered_messages > 0 AS buffered, compressed_leaf_pages > 1 AS compressed
FROM fractam_stats('cp_i');
CREATE FUNCTION cp_check() RETURNS TABLE (what text, same boolean)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	RETURN QUERY SELECT 'point lookups', count(*) = 0
		FROM generate_series(1, 30000, 7) k
		WHERE (SELECT count(*) FROM cp WHERE id = k) <> CASE WHEN k % 3 = 1 THEN 2 ELSE 1 END;
	RETURN QUERY SELECT 'forward ranges', bool_and(n = want)
		FROM (SELECT (SELECT count(*) FROM cp WHERE id >= lo AND id < lo + 700) n,
					 700 + (SELECT count(*) FROM generate_series(lo, lo + 699) g WHERE g % 3 = 1) want
			  FROM generate_series(1, 29000, 613) lo) r;
	RETURN QUERY SELECT 'backward ranges', bool_and(ok)
		FROM (SELECT (SELECT array_agg(id ORDER BY id DESC, pad DESC) FROM
						(SELECT id, pad FROM cp WHERE id < hi ORDER BY id DESC, pad DESC LIMIT 900) s) =
					 (SELECT array_agg(id ORDER BY id DESC, pad DESC) FROM
						(SELECT g AS id, p AS pad FROM generate_series(hi - 900, hi - 1) g,
							 LATERAL (SELECT repeat('x', g % 7) UNION ALL SELECT 'new' WHERE g % 3 = 1) x(p)
						 ORDER BY g DESC, p DESC LIMIT 900) t) AS ok
			  FROM generate_series(1000, 30000, 1733) hi) r;
	RETURN QUERY SELECT 'index-only count', (SELECT count(*) FROM cp WHERE id BETWEEN 5000 AND 25000) = 20001 + 6667;
END $$;
SELECT * FROM cp_check();
SET fractam.decoded_leaf_cache = 0;
SELECT * FROM cp_check();
RESET fractam.decoded_leaf_cache;
SELECT fractam_verify('cp_i');
DROP FUNCTION cp_check();
DROP TABLE cp;

-- the full pages an index's append points leave behind are merged into
-- compressed leaves as they fill (ft_seal.c): the append point of each
-- group of entries that share leading key columns (one sensor's
-- (sensor, ts) entries: a unique key, whose inserts are direct) and the
-- tree's right edge (ascending ids); random keys are left as they are.
-- An uncompressed copy of each index sizes them.
CREATE TABLE ca (sensor int, ts int, id int, r int);
CREATE UNIQUE INDEX ca_pk ON ca USING fractam (sensor, ts) WITH (compression = 'zstd');
CREATE INDEX ca_id ON ca USING fractam (id) WITH (compression = 'lz4');
CREATE INDEX ca_r ON ca USING fractam (r) WITH (compression = 'zstd');
CREATE INDEX ca_pk_plain ON ca USING fractam (sensor, ts);
CREATE INDEX ca_id_plain ON ca USING fractam (id);
CREATE INDEX ca_r_plain ON ca USING fractam (r);
DO $$
BEGIN
	FOR b IN 0..149 LOOP
		INSERT INTO ca
		SELECT s, 2 * t, t * 20 + s, ((t * 20 + s) * 7919) % 1000003
		FROM generate_series(b * 20, b * 20 + 19) t, generate_series(1, 20) s
		ORDER BY t, s;
		COMMIT;
	END LOOP;
END $$;
SELECT c.relname, s.compressed_leaf_pages > 0 AS compressed,
       s.leaf_pages * 3 < p.leaf_pages * 2 AS smaller
FROM (VALUES ('ca_pk'), ('ca_id')) v(n)
JOIN pg_class c ON c.relname = v.n,
     LATERAL fractam_stats(c.oid) s,
     LATERAL fractam_stats((v.n || '_plain')::regclass) p
ORDER BY 1;
SELECT s.compressed_leaf_pages * 10 < s.leaf_pages AS random_mostly_plain
FROM fractam_stats('ca_r') s;
SELECT fractam_verify('ca_pk'), fractam_verify('ca_id'), fractam_verify('ca_r');
CREATE FUNCTION ca_check() RETURNS TABLE (what text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	want_pk text;
	want_id text;
BEGIN
	SELECT string_agg(sensor || ':' || ts, ',' ORDER BY sensor, ts),
		   string_agg(id::text, ',' ORDER BY id) FILTER (WHERE id > 0)
	  INTO want_pk, want_id FROM ca;
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_sort = off;
	RETURN QUERY SELECT 'pk forward',
		(SELECT string_agg(sensor || ':' || ts, ',' ORDER BY sensor, ts)
		 FROM (SELECT sensor, ts FROM ca WHERE sensor > 0 ORDER BY sensor, ts) x) = want_pk;
	RETURN QUERY SELECT 'pk backward',
		(SELECT string_agg(sensor || ':' || ts, ',' ORDER BY sensor, ts)
		 FROM (SELECT sensor, ts FROM ca WHERE sensor > 0 ORDER BY sensor DESC, ts DESC) x) = want_pk;
	RETURN QUERY SELECT 'id forward',
		(SELECT string_agg(id::text, ',' ORDER BY id)
		 FROM (SELECT id FROM ca WHERE id > 0 ORDER BY id) x) = want_id;
	RETURN QUERY SELECT 'pk point lookups', count(*) = 0
		FROM generate_series(1, 20) s, generate_series(0, 5999, 37) t
		WHERE (SELECT count(*) FROM ca WHERE sensor = s AND ts = t) <>
			  (SELECT count(*) FROM ca WHERE sensor + 0 = s AND ts + 0 = t);
	RETURN QUERY SELECT 'r ranges', bool_and(n = m)
		FROM (SELECT (SELECT count(*) FROM ca WHERE r >= lo AND r < lo + 20000) n,
					 (SELECT count(*) FROM ca WHERE r + 0 >= lo AND r + 0 < lo + 20000) m
			  FROM generate_series(0, 1000000, 99991) lo) x;
END $$;
SELECT * FROM ca_check();
-- unique checks see the merged entries
INSERT INTO ca VALUES (7, 1000, 0, 0);
INSERT INTO ca VALUES (7, 1000, 0, 0) ON CONFLICT DO NOTHING;
-- an insert among merged entries (odd ts are free) rewrites their leaf
INSERT INTO ca SELECT 7, t, -t, t FROM generate_series(1001, 1201, 2) t;
SELECT fractam_verify('ca_pk'), fractam_verify('ca_id'), fractam_verify('ca_r');
SELECT * FROM ca_check();
SELECT count(*) FROM ca WHERE sensor = 7 AND ts BETWEEN 1000 AND 1202;
DROP FUNCTION ca_check();
DROP TABLE ca;

DROP TABLE cz;
DROP FUNCTION cz_check();
DROP FUNCTION cz_q(text, text);
