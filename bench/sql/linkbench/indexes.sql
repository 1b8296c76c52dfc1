-- LinkBench's covering secondary index (lb.postgres.post), built after the load.
-- psql variables: sam (btree | fractam), sopts.
\timing on
CREATE INDEX id1_type ON linktable USING :sam (id1, link_type, visibility, time, id2, version, data) :sopts;
