-- Table workload: the same table twice (tb loaded by COPY, tb2 by INSERT ... SELECT), each with a
-- primary key and one secondary index.  The table access method comes from the variant
-- (default_table_access_method in PGOPTIONS).  psql variables: pk_btree, pkopts, sam, sopts, topts.
DROP TABLE IF EXISTS tb, tb2;
\if :pk_btree
CREATE TABLE tb (id bigint PRIMARY KEY, k int, ts timestamptz, v float8, pad text) :topts;
CREATE TABLE tb2 (id bigint PRIMARY KEY, k int, ts timestamptz, v float8, pad text) :topts;
\else
CREATE TABLE tb (id bigint, k int, ts timestamptz, v float8, pad text) :topts;
CREATE TABLE tb2 (id bigint, k int, ts timestamptz, v float8, pad text) :topts;
CREATE UNIQUE INDEX tb_pkey ON tb USING fractam (id) :pkopts;
CREATE UNIQUE INDEX tb2_pkey ON tb2 USING fractam (id) :pkopts;
\endif
CREATE INDEX tb_k ON tb USING :sam (k) :sopts;
CREATE INDEX tb2_k ON tb2 USING :sam (k) :sopts;
