-- iiBench secondary indexes, Tokutek's original set (jiibench.java; note the leading columns
-- differ from Callaghan's). psql variables: sam, sopts.
\timing on
CREATE INDEX marketsegment   ON purchases_index USING :sam (price, customerid) :sopts;
CREATE INDEX registersegment ON purchases_index USING :sam (cashregisterid, price, customerid) :sopts;
CREATE INDEX pdc             ON purchases_index USING :sam (price, dateandtime, customerid) :sopts;
