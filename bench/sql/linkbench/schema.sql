-- LinkBench tables, PostgreSQL port used by Mark Callaghan (mdcallag/mytools
-- bench/run_linkbench/lb.postgres.pre; ids are numeric(20) as MySQL's bigint unsigned), in schema
-- public instead of linkdb0. The covering secondary index id1_type is created after the load
-- (indexes.sql), as LinkBench's README suggests.
-- psql variables set by bench/run:
--   tam, topts   table access method and WITH (...) for the tables
--   pk_btree     true: PRIMARY KEYs (btree); false: UNIQUE indexes USING fractam on the same columns
--   pkopts       WITH (...) for fractam PK indexes, or empty
DROP TABLE IF EXISTS linktable, counttable, nodetable;
CREATE TABLE linktable (
  id1        numeric(20) NOT NULL DEFAULT '0',
  id2        numeric(20) NOT NULL DEFAULT '0',
  link_type  numeric(20) NOT NULL DEFAULT '0',
  visibility smallint NOT NULL DEFAULT '0',
  data       bytea NOT NULL,
  time       numeric(20) NOT NULL DEFAULT '0',
  version    bigint NOT NULL DEFAULT '0'
) USING :tam :topts;
CREATE TABLE counttable (
  id        numeric(20) NOT NULL DEFAULT '0',
  link_type numeric(20) NOT NULL DEFAULT '0',
  count     int NOT NULL DEFAULT '0',
  time      numeric(20) NOT NULL DEFAULT '0',
  version   numeric(20) NOT NULL DEFAULT '0'
) USING :tam :topts;
CREATE TABLE nodetable (
  id      bigserial NOT NULL,
  type    int NOT NULL,
  version numeric NOT NULL,
  time    int NOT NULL,
  data    bytea NOT NULL
) USING :tam :topts;
\if :pk_btree
ALTER TABLE linktable  ADD CONSTRAINT linktable_pkey  PRIMARY KEY (link_type, id1, id2);
ALTER TABLE counttable ADD CONSTRAINT counttable_pkey PRIMARY KEY (id, link_type);
ALTER TABLE nodetable  ADD CONSTRAINT nodetable_pkey  PRIMARY KEY (id);
\else
CREATE UNIQUE INDEX linktable_pkey  ON linktable  USING fractam (link_type, id1, id2) :pkopts;
CREATE UNIQUE INDEX counttable_pkey ON counttable USING fractam (id, link_type) :pkopts;
CREATE UNIQUE INDEX nodetable_pkey  ON nodetable  USING fractam (id) :pkopts;
\endif
