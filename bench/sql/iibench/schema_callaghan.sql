-- iiBench table, Mark Callaghan's version (mytools bench/ibench/iibench.py, create_table_postgres).
-- psql variables set by bench/run:
--   tam      table access method (heap | fractam); topts: WITH (...) for the table, or empty
--   pk_btree true: PRIMARY KEY (btree); false: UNIQUE index USING fractam on the PK column
--   pkopts   WITH (...) clause for the fractam PK index, or empty
DROP TABLE IF EXISTS pi1;
CREATE TABLE pi1 (
  transactionid  bigserial NOT NULL,
  dateandtime    timestamp without time zone,
  cashregisterid int NOT NULL,
  customerid     int NOT NULL,
  productid      int NOT NULL,
  price          int NOT NULL,
  data           varchar(4000)
) USING :tam :topts;
ALTER SEQUENCE pi1_transactionid_seq CACHE 1000;
\if :pk_btree
ALTER TABLE pi1 ADD CONSTRAINT pi1_pkey PRIMARY KEY (transactionid);
\else
CREATE UNIQUE INDEX pi1_pkey ON pi1 USING fractam (transactionid) :pkopts;
\endif
