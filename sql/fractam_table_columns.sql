--
-- fractam_table_columns: a compressed table's parts of rows of one length
-- are stored column by column (FT_PART_FILTER_COLUMNS, src/ft/ft_columns.c):
-- integers as offsets from a base or a step, doubles that are exact
-- decimals as scaled integers, everything else as byte planes.  The rows
-- must come back exactly, whatever their values (NaN, infinities, -0,
-- denormals, the ends of every integer type), through every read path and
-- after changes of the compressed leaves; and the timeseries rows the
-- filter is for must take far less room than row by row.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- Percona's sensor rows, pareto values (deterministic)
CREATE TABLE ch (ts integer NOT NULL, sensor_id integer NOT NULL,
                 data1 float8 NOT NULL, data2 float8 NOT NULL,
                 data3 float8 NOT NULL, data4 float8 NOT NULL,
                 data5 float8 NOT NULL, cnt integer NOT NULL);
INSERT INTO ch
SELECT 1700000000 + e, s,
       (1 + floor(1000 * power(((hashint4(e * 1000 + s) & 65535) / 65536.0)::float8, 7.2126))) / 10,
       (1 + floor(1000 * power(((hashint4(e * 1000 + s + 1) & 65535) / 65536.0)::float8, 7.2126))) / 10,
       (1 + floor(1000 * power(((hashint4(e * 1000 + s + 2) & 65535) / 65536.0)::float8, 7.2126))) / 10,
       (1 + floor(1000 * power(((hashint4(e * 1000 + s + 3) & 65535) / 65536.0)::float8, 7.2126))) / 10,
       (1 + floor(1000 * ((hashint4(e * 1000 + s + 4) & 65535) / 65536.0))) / 10,
       40 + (hashint4(e * 1000 + s + 5) & 65535) % 21
FROM generate_series(1, 60) e, generate_series(0, 999) s;

CREATE FUNCTION same_rows(a regclass, b regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL TABLE %s) UNION ALL
	                                      (TABLE %s EXCEPT ALL TABLE %s)) d', a, b, b, a)
	INTO n;
	RETURN n;
END $$;

-- the same rows compressed row by row and column by column, by a load
-- and then by a rewrite (which settles them: visible to all)
SET fractam.debug_table_columns = off;
CREATE TABLE ct_rows USING fractam WITH (compression = 'zstd') AS SELECT * FROM ch;
RESET fractam.debug_table_columns;
CREATE TABLE ct_zstd USING fractam WITH (compression = 'zstd') AS SELECT * FROM ch;
CREATE TABLE ct_lz4 USING fractam WITH (compression = 'lz4') AS SELECT * FROM ch;
SELECT pg_relation_size('ct_zstd') < 0.7 * pg_relation_size('ct_rows') AS zstd_load_smaller,
       pg_relation_size('ct_lz4') < 0.7 * pg_relation_size('ct_rows') AS lz4_load_smaller;
SELECT same_rows('ch', 'ct_zstd') AS zstd_diff, fractam_verify('ct_zstd');
SET fractam.debug_table_columns = off;
VACUUM FULL ct_rows;
RESET fractam.debug_table_columns;
VACUUM FULL ct_zstd;
VACUUM FULL ct_lz4;


-- nothing differs, and the columns take well under half the room of rows
SELECT same_rows('ch', 'ct_rows') AS rows_diff, same_rows('ch', 'ct_zstd') AS zstd_diff,
       same_rows('ch', 'ct_lz4') AS lz4_diff;
SELECT pg_relation_size('ct_zstd') < 0.5 * pg_relation_size('ct_rows') AS zstd_smaller,
       pg_relation_size('ct_lz4') < 0.5 * pg_relation_size('ct_rows') AS lz4_smaller,
       pg_relation_size('ct_zstd') < 0.12 * pg_relation_size('ch') AS tenth_of_heap;
SELECT fractam_verify('ct_zstd'), fractam_verify('ct_lz4');

-- every read path: sequential, TID, index fetches (a part decoded each),
-- bitmap scans; answers as heap's
CREATE INDEX ON ct_zstd (sensor_id, ts);
CREATE UNIQUE INDEX ct_zstd_key ON ct_zstd USING fractam (ts, sensor_id);
CREATE INDEX ON ch (sensor_id, ts);
ANALYZE ct_zstd, ch;
SELECT ft_check('index', 'SELECT * FROM ct_zstd WHERE sensor_id = 417 ORDER BY ts', true);
SELECT ft_check('index', 'SELECT * FROM ct_zstd WHERE ts = 1700000031 AND sensor_id BETWEEN 100 AND 140');
SELECT ft_check('bitmap', 'SELECT * FROM ct_zstd WHERE sensor_id IN (3, 500, 999)');
SELECT (SELECT array_agg(d ORDER BY d) FROM (SELECT data1 + data2 + data3 + data4 + data5 + cnt AS d
        FROM ct_zstd WHERE ctid = ANY (ARRAY['(10,5)', '(57,290)', '(205,1)']::tid[])) x) =
       (SELECT array_agg(d ORDER BY d) FROM (SELECT data1 + data2 + data3 + data4 + data5 + cnt AS d
        FROM ct_rows WHERE ctid = ANY (ARRAY['(10,5)', '(57,290)', '(205,1)']::tid[])) x) AS tid_same;
SELECT count(*), sum(data1), sum(data5), sum(cnt), min(ts), max(ts) FROM ct_lz4;
SELECT count(*), sum(data1), sum(data5), sum(cnt), min(ts), max(ts) FROM ch;

-- deletes, updates and row locks change the compressed leaves through
-- their change areas; VACUUM and a rewrite make columns again
BEGIN;
DELETE FROM ct_zstd WHERE sensor_id % 11 = 0;
UPDATE ct_zstd SET data3 = data3 + 0.5, cnt = -cnt WHERE sensor_id % 13 = 0;
SELECT count(*) FROM (SELECT 1 FROM ct_zstd WHERE sensor_id % 7 = 0 FOR SHARE) x;
COMMIT;
DELETE FROM ch WHERE sensor_id % 11 = 0;
UPDATE ch SET data3 = data3 + 0.5, cnt = -cnt WHERE sensor_id % 13 = 0;
SELECT same_rows('ch', 'ct_zstd') AS diff, fractam_verify('ct_zstd'), ft_verify_all('ct_zstd');
SELECT ft_check('index', 'SELECT * FROM ct_zstd WHERE sensor_id = 26 ORDER BY ts', true);
SELECT ft_wait_for_old_snapshots();
VACUUM ct_zstd;
VACUUM FULL ct_zstd;
SELECT same_rows('ch', 'ct_zstd') AS diff, fractam_verify('ct_zstd'), ft_verify_all('ct_zstd');
SELECT pg_relation_size('ct_zstd') < 0.12 * pg_relation_size('ch') AS tenth_of_heap;

-- values at every edge: the ends of each integer type, doubles that are no
-- decimals (NaN, infinities, -0, denormals, 1/3), reals, booleans, uuids,
-- timestamps; in runs where one odd value sits among decimals
CREATE TABLE eh (id bigint NOT NULL, i2 smallint NOT NULL, i4 int NOT NULL,
                 i8 bigint NOT NULL, f8 float8 NOT NULL, f4 real NOT NULL,
                 b bool NOT NULL, c "char" NOT NULL, u uuid NOT NULL,
                 t timestamptz NOT NULL, d date NOT NULL, o oid NOT NULL,
                 f8b float8 NOT NULL);
INSERT INTO eh
SELECT g,
       (ARRAY[-32768, 32767, 0, -1, 1])[1 + g % 5]::smallint,
       (ARRAY[-2147483648, 2147483647, 0, -1, g])[1 + (g / 3) % 5]::int,
       (ARRAY[-9223372036854775808, 9223372036854775807, 0, -1, g::bigint * 1000003])[1 + (g / 7) % 5]::bigint,
       CASE WHEN g % 997 = 0 THEN 'NaN'::float8
            WHEN g % 991 = 0 THEN 'Infinity'::float8
            WHEN g % 983 = 0 THEN '-Infinity'::float8
            WHEN g % 977 = 0 THEN '-0'::float8
            WHEN g % 971 = 0 THEN 5e-324::float8
            WHEN g % 967 = 0 THEN 1.0::float8 / 3
            WHEN g % 953 = 0 THEN 1e300::float8
            WHEN g % 947 = 0 THEN 9007199254740993::float8
            ELSE (g % 2000 - 1000) / 100.0 END,
       (g % 300) / 7.0,
       g % 3 = 0,
       chr(65 + g % 26)::"char",
       md5(g::text)::uuid,
       '2026-01-01 00:00:00+00'::timestamptz + g * interval '1.5 s',
       '2000-01-01'::date + g % 10000,
       (4000000000::bigint - g)::oid,
       CASE WHEN g < 20000 THEN g / 8.0 ELSE -g / 1000.0 END
FROM generate_series(1, 40000) g;
CREATE TABLE et_zstd USING fractam WITH (compression = 'zstd') AS SELECT * FROM eh ORDER BY id;
CREATE TABLE et_lz4 USING fractam WITH (compression = 'lz4') AS SELECT * FROM eh ORDER BY id;
SELECT same_rows('eh', 'et_zstd') AS zstd_diff, same_rows('eh', 'et_lz4') AS lz4_diff,
       fractam_verify('et_zstd'), fractam_verify('et_lz4');
-- the bits of every double, not only its value (-0 = 0, NaN = NaN)
SELECT count(*) AS bits_differ FROM eh JOIN et_zstd z USING (id)
WHERE float8send(eh.f8) <> float8send(z.f8) OR float4send(eh.f4) <> float4send(z.f4)
   OR float8send(eh.f8b) <> float8send(z.f8b);
SELECT count(*) AS odd_values FROM et_lz4
WHERE f8 = 'NaN' OR f8 IN ('Infinity', '-Infinity', 5e-324, 1e300)
   OR float8send(f8) = float8send('-0');
SELECT (SELECT compressed_leaf_pages FROM fractam_stats('et_zstd')) >
       0.9 * (SELECT leaf_pages FROM fractam_stats('et_zstd')) AS mostly_compressed;

-- rows of several lengths and forms in one table: nulls, text, a column
-- added later (older rows have fewer attributes), a dropped one
CREATE TABLE mh (id int NOT NULL, a float8, s text, n numeric);
INSERT INTO mh SELECT g, CASE WHEN g % 5 = 0 THEN NULL ELSE g / 4.0 END,
       CASE WHEN g % 3 = 0 THEN NULL ELSE 's' || (g % 10) END,
       CASE WHEN g % 2 = 0 THEN g / 3.0 END
FROM generate_series(1, 20000) g;
CREATE TABLE mt USING fractam WITH (compression = 'zstd') AS SELECT * FROM mh ORDER BY id;
ALTER TABLE mt ADD COLUMN k bigint NOT NULL DEFAULT 42;
ALTER TABLE mh ADD COLUMN k bigint NOT NULL DEFAULT 42;
INSERT INTO mt SELECT g, g / 2.0, 'new', NULL, g * 10 FROM generate_series(20001, 30000) g;
INSERT INTO mh SELECT g, g / 2.0, 'new', NULL, g * 10 FROM generate_series(20001, 30000) g;
ALTER TABLE mt DROP COLUMN s;
ALTER TABLE mh DROP COLUMN s;
SELECT same_rows('mh', 'mt') AS diff;
VACUUM FULL mt;
SELECT same_rows('mh', 'mt') AS diff, fractam_verify('mt'), ft_verify_all('mt');
SELECT count(*), count(a), count(n), sum(k), sum(a) FROM mt;

-- pages written row by row (as builds before the columns did) and column
-- pages in one table: COPY writes compressed pages either way
COPY (SELECT * FROM ct_rows WHERE sensor_id % 11 = 0) TO '/tmp/fractam_table_columns.copy';
COPY (SELECT ts + 1000, sensor_id, data1, data2, data3, data4, data5, cnt FROM ct_rows
      WHERE sensor_id % 11 = 0) TO '/tmp/fractam_table_columns2.copy';
SET fractam.debug_table_columns = off;
COPY ct_zstd FROM '/tmp/fractam_table_columns.copy';
RESET fractam.debug_table_columns;
COPY ct_zstd FROM '/tmp/fractam_table_columns2.copy';
COPY ch FROM '/tmp/fractam_table_columns.copy';
COPY ch FROM '/tmp/fractam_table_columns2.copy';
SELECT same_rows('ch', 'ct_zstd') AS diff, fractam_verify('ct_zstd'), ft_verify_all('ct_zstd');
SELECT ft_check('index', 'SELECT * FROM ct_zstd WHERE sensor_id = 22 ORDER BY ts', true);

DROP TABLE ch, ct_rows, ct_zstd, ct_lz4, eh, et_zstd, et_lz4, mh, mt;
DROP FUNCTION same_rows(regclass, regclass);
