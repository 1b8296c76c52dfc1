--
-- fractam_multicol: multi-column keys, DESC / NULLS FIRST / NULLS LAST,
-- INCLUDE columns, IS [NOT] NULL, = ANY(array), expression and partial
-- indexes.  Every query is compared with a sequential scan.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

CREATE TABLE mc (id int, a int, b text, c float8, d int);
INSERT INTO mc
SELECT i,
       CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 7919) % 97 END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE 'k' || ((i * 104729) % 53) END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE ((i * 13) % 1000) / 10.0 END,
       i % 7
FROM generate_series(1, 4000) i;

-- (a, b): leading column, both columns, second column only
CREATE INDEX mc_ab ON mc USING fractam (a, b) WITH (fanout = 4);
INSERT INTO mc
SELECT i,
       CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 7919) % 97 END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE 'k' || ((i * 104729) % 53) END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE ((i * 13) % 1000) / 10.0 END,
       i % 7
FROM generate_series(4001, 8000) i;
VACUUM ANALYZE mc;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('a=',          'index',  'SELECT id FROM mc WHERE a = 17', false),
	('a= b=',       'index',  'SELECT id FROM mc WHERE a = 17 AND b = ''k5''', false),
	('a= b>',       'index',  'SELECT id FROM mc WHERE a = 17 AND b > ''k40''', false),
	('a range b<=', 'index',  'SELECT id FROM mc WHERE a BETWEEN 10 AND 12 AND b <= ''k2''', false),
	('b= only',     'bitmap', 'SELECT id FROM mc WHERE b = ''k7''', false),
	('a null',      'index',  'SELECT id FROM mc WHERE a IS NULL', false),
	('a null b nn', 'index',  'SELECT id FROM mc WHERE a IS NULL AND b IS NOT NULL', false),
	('a= b null',   'index',  'SELECT id FROM mc WHERE a = 3 AND b IS NULL', false),
	('a nn b null', 'bitmap', 'SELECT id FROM mc WHERE a IS NOT NULL AND b IS NULL', false),
	('a any',       'bitmap', 'SELECT id FROM mc WHERE a = ANY (ARRAY[1, 50, 96, 200])', false),
	('a any null',  'bitmap', 'SELECT id FROM mc WHERE a = ANY (ARRAY[2, NULL])', false),
	('a any empty', 'bitmap', 'SELECT id FROM mc WHERE a = ANY (''{}''::int[])', false),
	('a= b any',    'bitmap', 'SELECT id FROM mc WHERE a = 5 AND b = ANY (ARRAY[''k1'', ''k2'', ''k30''])', false),
	('ord a,b',     'index',  'SELECT a, b FROM mc ORDER BY a, b LIMIT 300', true),
	('ord a,b from','index',  'SELECT a, b FROM mc WHERE a >= 40 ORDER BY a, b LIMIT 300', true),
	('ord desc',    'index',  'SELECT a, b FROM mc ORDER BY a DESC, b DESC LIMIT 300', true),
	('ord desc to', 'index',  'SELECT a, b FROM mc WHERE a < 60 ORDER BY a DESC, b DESC LIMIT 300', true),
	('a= ord b',    'index',  'SELECT b FROM mc WHERE a = 33 ORDER BY b', true),
	('a= ord b dsc','index',  'SELECT b FROM mc WHERE a = 33 ORDER BY b DESC', true),
	('ios a,b',     'ios',    'SELECT a, b FROM mc WHERE a > 90 ORDER BY a, b', true),
	('ios all',     'ios',    'SELECT a, b FROM mc ORDER BY a, b', true)
) v(label, mode, q, ord);
SELECT fractam_verify('mc_ab');
DROP INDEX mc_ab;

-- (a DESC NULLS LAST, b NULLS FIRST)
CREATE INDEX mc_dn ON mc USING fractam (a DESC NULLS LAST, b NULLS FIRST) WITH (fanout = 4);
\d mc_dn
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('fwd',         'index', 'SELECT a, b FROM mc ORDER BY a DESC NULLS LAST, b NULLS FIRST LIMIT 500', true),
	('fwd tail',    'index', 'SELECT a, b FROM mc WHERE a < 3 OR a IS NULL ORDER BY a DESC NULLS LAST, b NULLS FIRST', true),
	('bwd',         'index', 'SELECT a, b FROM mc ORDER BY a NULLS FIRST, b DESC NULLS LAST LIMIT 500', true),
	('bwd from',    'index', 'SELECT a, b FROM mc WHERE a > 80 ORDER BY a NULLS FIRST, b DESC NULLS LAST', true),
	('a= ord b',    'index', 'SELECT b FROM mc WHERE a = 7 ORDER BY b NULLS FIRST', true),
	('a= ord b bwd','index', 'SELECT b FROM mc WHERE a = 7 ORDER BY b DESC NULLS LAST', true),
	('a null',      'index', 'SELECT id FROM mc WHERE a IS NULL', false),
	('a range',     'index', 'SELECT id FROM mc WHERE a > 10 AND a <= 20', false),
	('a< b null',   'index', 'SELECT id FROM mc WHERE a < 5 AND b IS NULL', false),
	('ios',         'ios',   'SELECT a, b FROM mc WHERE a >= 90 ORDER BY a DESC NULLS LAST, b NULLS FIRST', true)
) v(label, mode, q, ord);
-- an order the index cannot give needs a sort
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT a, b FROM mc ORDER BY a DESC NULLS FIRST, b LIMIT 10;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT fractam_verify('mc_dn');
DROP INDEX mc_dn;

-- three columns, mixed directions
CREATE INDEX mc_3 ON mc USING fractam (d, c DESC, a) WITH (fanout = 8);
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('d=',          'index', 'SELECT id FROM mc WHERE d = 3', false),
	('d= c>',       'index', 'SELECT id FROM mc WHERE d = 3 AND c > 50', false),
	('d= c= a=',    'index', 'SELECT id FROM mc WHERE d = 2 AND c = 30.0 AND a = 89', false),
	('d= c null',   'index', 'SELECT id FROM mc WHERE d = 4 AND c IS NULL', false),
	('ord',         'index', 'SELECT d, c, a FROM mc WHERE d = 2 ORDER BY c DESC, a LIMIT 100', true),
	('ord bwd',     'index', 'SELECT d, c, a FROM mc WHERE d = 2 ORDER BY c, a DESC LIMIT 100', true),
	('ord all',     'index', 'SELECT d, c, a FROM mc ORDER BY d, c DESC, a', true)
) v(label, mode, q, ord);
SELECT fractam_verify('mc_3');
DROP INDEX mc_3;

-- INCLUDE columns: returned by index-only scans, not part of the key
CREATE INDEX mc_inc ON mc USING fractam (a) INCLUDE (c, d) WITH (fanout = 4);
\d mc_inc
VACUUM mc;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('ios inc',   'ios',   'SELECT a, c, d FROM mc WHERE a < 5', false),
	('ios ord',   'ios',   'SELECT a FROM mc WHERE a BETWEEN 20 AND 25 ORDER BY a', true),
	('inc filt',  'ios',   'SELECT a, c FROM mc WHERE a = 40 AND d = 2', false),
	('ios bwd',   'ios',   'SELECT a FROM mc ORDER BY a DESC LIMIT 100', true),
	('idx inc',   'index', 'SELECT id, a, c, d FROM mc WHERE a = 41', false)
) v(label, mode, q, ord);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT a, c, d FROM mc WHERE a < 5;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT a, c, d FROM mc WHERE a = 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT fractam_verify('mc_inc');
-- an INCLUDE column cannot be searched through the index
SELECT ft_check('any', 'SELECT id FROM mc WHERE d = 5');
DROP INDEX mc_inc;

-- expression and partial indexes
CREATE INDEX mc_expr ON mc USING fractam ((a * 2 + d), lower(b)) WITH (fanout = 4);
CREATE INDEX mc_part ON mc USING fractam (c) WHERE d = 1;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('expr=',     'index', 'SELECT id FROM mc WHERE a * 2 + d = 40', false),
	('expr= b',   'index', 'SELECT id FROM mc WHERE a * 2 + d = 40 AND lower(b) = ''k3''', false),
	('expr ord',  'index', 'SELECT a * 2 + d FROM mc WHERE a * 2 + d > 150 ORDER BY a * 2 + d', true),
	('part',      'index', 'SELECT id FROM mc WHERE d = 1 AND c < 10', false),
	('part ord',  'index', 'SELECT c FROM mc WHERE d = 1 ORDER BY c DESC LIMIT 50', true),
	('part null', 'index', 'SELECT id FROM mc WHERE d = 1 AND c IS NULL', false)
) v(label, mode, q, ord);
UPDATE mc SET d = 1 WHERE id % 100 = 0;
DELETE FROM mc WHERE id % 100 = 1;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('part',      'index', 'SELECT id FROM mc WHERE d = 1 AND c < 10', false),
	('expr=',     'index', 'SELECT id FROM mc WHERE a * 2 + d = 41', false)
) v(label, mode, q, ord);
SELECT ft_verify_all('mc');

DROP TABLE mc;

-- Keys whose columns follow variable-length ones: the comparator walks each
-- entry's columns once, and hands comparators short values with 4-byte
-- headers (index_attrs.h).  Values are short (1-byte headers), long (4-byte
-- headers) and compressed in the entry, with NULLs and fixed-width columns
-- after them, so a wrong offset or header shows as wrong rows here.
CREATE TABLE mv (id int, n numeric, t text, k int8, m numeric);
CREATE FUNCTION mv_rows(lo int, hi int) RETURNS SETOF mv LANGUAGE sql AS $$
SELECT i,
       CASE WHEN i % 37 = 0 THEN NULL ELSE ((i * 7919) % 61) * 1.25 END,
       CASE WHEN i % 41 = 0 THEN NULL
            WHEN i % 5 = 0 THEN repeat('l', 150) || (i % 13)
            WHEN i % 7 = 0 THEN repeat('c', 900) || (i % 11)
            ELSE 's' || (i % 17) END,
       CASE WHEN i % 43 = 0 THEN NULL ELSE (i * 104729) % 29 END,
       i * 1000000007::numeric
FROM generate_series(lo, hi) i $$;
INSERT INTO mv SELECT * FROM mv_rows(1, 6000);
CREATE INDEX mv_ntkm ON mv USING fractam (n, t, k, m) WITH (fanout = 4);
CREATE UNIQUE INDEX mv_u ON mv USING fractam (t, m, n) WITH (fanout = 4);
INSERT INTO mv SELECT * FROM mv_rows(6001, 12000);
VACUUM ANALYZE mv;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('n=',          'index', 'SELECT id FROM mv WHERE n = 10', false),
	('n= t=',       'index', 'SELECT id FROM mv WHERE n = 10 AND t = ''s3''', false),
	('n= t= long',  'index', 'SELECT id FROM mv WHERE n = 12.5 AND t = repeat(''l'', 150) || ''4''', false),
	('n= t= cmpr',  'index', 'SELECT id FROM mv WHERE n = 20 AND t = repeat(''c'', 900) || ''3''', false),
	('n= t= k>',    'index', 'SELECT id FROM mv WHERE n = 10 AND t = ''s3'' AND k > 10', false),
	('n= t null k', 'index', 'SELECT id FROM mv WHERE n = 35 AND t IS NULL AND k >= 0', false),
	('n null t k=', 'index', 'SELECT id FROM mv WHERE n IS NULL AND t >= ''s'' AND k >= 0', false),
	('n= t= k= m>', 'index', 'SELECT id FROM mv WHERE n = 10 AND t = ''s3'' AND k >= 0 AND m > 3000000000000', false),
	('ord all',     'ios',   'SELECT n, t, k, m FROM mv ORDER BY n, t, k, m', true),
	('ord desc',    'ios',   'SELECT n, t, k, m FROM mv WHERE n < 30 ORDER BY n DESC, t DESC, k DESC, m DESC', true),
	('u t=',        'index', 'SELECT id FROM mv WHERE t = repeat(''c'', 900) || ''5''', false),
	('u t= m=',     'index', 'SELECT id FROM mv WHERE t = ''s6'' AND m = 6000000042', false),
	('u ord',       'ios',   'SELECT t, m, n FROM mv WHERE t > ''l'' ORDER BY t, m, n', true)
) v(label, mode, q, ord);
-- the unique check compares the new entry's columns with the stored ones
INSERT INTO mv SELECT 0, n, t, k, m FROM mv WHERE id = 35;
INSERT INTO mv SELECT 0, n, t, k, m FROM mv WHERE id = 7000;
INSERT INTO mv SELECT 0, n, t, k, m + 1 FROM mv WHERE id = 7000;
INSERT INTO mv SELECT 0, n, t, k, m FROM mv WHERE id = 82;
SELECT count(*) FROM mv WHERE id = 0;
SELECT ft_verify_all('mv');
DROP FUNCTION mv_rows;
DROP TABLE mv;
