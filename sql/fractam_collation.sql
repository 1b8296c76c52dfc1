--
-- fractam_collation: text, varchar and bpchar keys under the "C" collation and
-- under a linguistic (non-C) collation, plus a nondeterministic ICU collation.
-- The ordering must be the collation's, and an index is only used for a
-- query whose collation matches it.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- The linguistic collation: ICU's root collation if this server has ICU,
-- else a libc one, else "default" (the output below does not depend on which).
SELECT coalesce(
	(SELECT collname FROM pg_collation
	 WHERE collname IN ('und-x-icu', 'en-x-icu', 'en_US.utf8', 'en_US')
	 ORDER BY collname = 'und-x-icu' DESC, collname = 'en-x-icu' DESC, collname LIMIT 1),
	'default') AS lingcoll \gset
SELECT :'lingcoll' <> 'C' AS have_linguistic_collation;

CREATE TABLE co (id int, tc text COLLATE "C", tl text COLLATE :"lingcoll",
                 vc varchar(30) COLLATE "C", vl varchar(30) COLLATE :"lingcoll",
                 bl char(12) COLLATE :"lingcoll");
-- words whose order differs between "C" and linguistic collations
CREATE TABLE words (w text);
INSERT INTO words VALUES ('apple'), ('Apple'), ('APPLE'), ('äpple'), ('Äpfel'), ('banana'),
	('Banana'), ('côte'), ('cote'), ('coté'), ('côté'), ('Zebra'), ('zebra'), ('_under'),
	('-dash'), ('dash'), ('a b'), ('ab'), ('a-b'), ('1abc'), ('10'), ('9'), (''), ('ß'),
	('ss'), ('Straße'), ('strasse'), ('ǅ'), ('日本'), ('中文'), ('ёж'), ('еж'), ('Ωmega'), ('omega');
INSERT INTO co
SELECT i, w || s, w || s, left(w || s, 30), left(w || s, 30), left(w || s, 12)
FROM generate_series(1, 2000) i,
     LATERAL (SELECT w FROM words OFFSET (i * 7) % 34 LIMIT 1) x,
     LATERAL (SELECT CASE WHEN i % 3 = 0 THEN '' ELSE ' ' || (i % 97) END AS s) y;
INSERT INTO co VALUES (0, NULL, NULL, NULL, NULL, NULL);
CREATE INDEX co_tc ON co USING fractam (tc) WITH (fanout = 4);
CREATE INDEX co_tl ON co USING fractam (tl) WITH (fanout = 4);
CREATE INDEX co_vc ON co USING fractam (vc);
CREATE INDEX co_vl ON co USING fractam (vl);
CREATE INDEX co_bl ON co USING fractam (bl);
-- more rows after the build (buffered)
INSERT INTO co SELECT id + 5000, tc || 'x', tl || 'X', vc, vl, bl FROM co WHERE id % 5 = 1;
SELECT a.attname, c.collname = 'C' AS is_c
FROM pg_index x JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
JOIN pg_collation c ON c.oid = x.indcollation[0]
WHERE x.indrelid = 'co'::regclass ORDER BY 1;

-- (row counts are not shown: they depend on the collation library's version)
SELECT label, regexp_replace(ft_check(mode, q, ord), 'rows=\d+ ', '') AS result FROM (VALUES
	('C eq',        'index', 'SELECT id FROM co WHERE tc = ''apple 1''', false),
	('C range',     'index', 'SELECT tc FROM co WHERE tc >= ''B'' AND tc < ''c''', false),
	('C ord',       'index', 'SELECT tc FROM co ORDER BY tc', true),
	('C ord desc',  'index', 'SELECT tc FROM co WHERE tc < ''c'' ORDER BY tc DESC LIMIT 300', true),
	('C bitmap',    'bitmap','SELECT id FROM co WHERE tc > ''z''', false),
	('L eq',        'index', 'SELECT id FROM co WHERE tl = ''côte 5''', false),
	('L range',     'index', 'SELECT tl FROM co WHERE tl >= ''B'' AND tl < ''c''', false),
	('L ord',       'index', 'SELECT tl FROM co ORDER BY tl', true),
	('L ord desc',  'index', 'SELECT tl FROM co WHERE tl < ''d'' ORDER BY tl DESC LIMIT 300', true),
	('L ios',       'ios',   'SELECT tl FROM co WHERE tl > ''s'' ORDER BY tl', true),
	('L null',      'index', 'SELECT id FROM co WHERE tl IS NULL', false),
	('vc ord',      'index', 'SELECT vc FROM co ORDER BY vc LIMIT 500', true),
	('vl ord',      'index', 'SELECT vl FROM co WHERE vl > ''a'' ORDER BY vl LIMIT 500', true),
	('vl eq',       'index', 'SELECT id FROM co WHERE vl = ''Zebra 4''', false),
	('bl eq',       'index', 'SELECT id FROM co WHERE bl = ''ab 7''', false),
	('bl ord',      'index', 'SELECT bl FROM co ORDER BY bl DESC LIMIT 500', true),
	('L expl coll', 'index', 'SELECT tl FROM co WHERE tl > ''m'' COLLATE ' || quote_ident(:'lingcoll') || ' ORDER BY tl LIMIT 100', true)
) v(label, mode, q, ord);

-- a comparison under another collation cannot use the index
SELECT ft_check('index', 'SELECT id FROM co WHERE tc > ''m'' COLLATE ' || quote_ident(:'lingcoll'))
       ~ '^Seq Scan \| rows=\d+ ok$' AS c_index_not_used_for_linguistic_query;
SELECT ft_check('index', 'SELECT id FROM co WHERE tl > ''m'' COLLATE "C"')
       ~ '^Seq Scan \| rows=\d+ ok$' AS linguistic_index_not_used_for_c_query;
-- ORDER BY under the other collation cannot use the index order
SELECT ft_check('index', 'SELECT tc FROM co ORDER BY tc COLLATE ' || quote_ident(:'lingcoll') || ' LIMIT 50', true)
       !~ 'co_tc' AS c_index_gives_no_linguistic_order;
SELECT ft_verify_all('co');

-- a nondeterministic (case-insensitive) ICU collation: equality by collation
SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i') AS have_icu \gset
\if :have_icu
CREATE COLLATION ci_test (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
\else
CREATE COLLATION ci_test FROM "C";
\endif
CREATE TABLE ci (id int, t text COLLATE ci_test);
INSERT INTO ci SELECT i, w FROM generate_series(1, 3) i, words;
CREATE INDEX ci_t ON ci USING fractam (t);
INSERT INTO ci SELECT i, upper(w) FROM generate_series(4, 5) i, words;
SELECT label, regexp_replace(ft_check(mode, q, ord), 'rows=\d+ ', '') AS result FROM (VALUES
	('ci eq',    'index', 'SELECT id, t FROM ci WHERE t = ''APPLE''', false),
	('ci eq2',   'index', 'SELECT id, t FROM ci WHERE t = ''straße''', false),
	('ci range', 'index', 'SELECT id, t FROM ci WHERE t > ''b'' AND t < ''d''', false),
	('ci any',   'bitmap', 'SELECT id, t FROM ci WHERE t = ANY (ARRAY[''zebra'', ''OMEGA''])', false)
) v(label, mode, q, ord);
SELECT ft_verify_all('ci');

DROP TABLE co, ci, words;
DROP COLLATION ci_test;
