-- iiBench table, Tokutek's original (tmcallaghan/iibench-mysql src/jiibench.java, no char fields):
-- transactionid int auto_increment, price float (MySQL 4-byte float = PostgreSQL real).
-- psql variables as in schema_callaghan.sql (tam, pk_btree, pkopts).
DROP TABLE IF EXISTS purchases_index;
CREATE TABLE purchases_index (
  transactionid  serial NOT NULL,
  dateandtime    timestamp without time zone,
  cashregisterid int NOT NULL,
  customerid     int NOT NULL,
  productid      int NOT NULL,
  price          real NOT NULL
) USING :tam :topts;
ALTER SEQUENCE purchases_index_transactionid_seq CACHE 1000;
\if :pk_btree
ALTER TABLE purchases_index ADD CONSTRAINT purchases_index_pkey PRIMARY KEY (transactionid);
\else
CREATE UNIQUE INDEX purchases_index_pkey ON purchases_index USING fractam (transactionid) :pkopts;
\endif
