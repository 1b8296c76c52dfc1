-- iiBench secondary indexes, Callaghan's set (created after the load: phase l.x).
-- psql variables: sam = index AM for secondary indexes (btree | fractam), sopts = WITH (...) or empty.
\timing on
CREATE INDEX pi1_marketsegment   ON pi1 USING :sam (productid, customerid, price) :sopts;
CREATE INDEX pi1_registersegment ON pi1 USING :sam (cashregisterid, customerid, price) :sopts;
CREATE INDEX pi1_pdc             ON pi1 USING :sam (price, dateandtime, customerid) :sopts;
