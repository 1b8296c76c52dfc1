-- iiBench point queries (phase qpN), same as Callaghan's version, on Tokutek's table: 10 PK values uniform in [min, max] of the
-- table, min/max re-read every 100 queries. pgbench -D n=0
\set n :n + 1
\if :n % 100 = 1
SELECT min(transactionid) AS lo, max(transactionid) AS hi FROM purchases_index \gset
\endif
\set k1 random(:lo, :hi)
\set k2 random(:lo, :hi)
\set k3 random(:lo, :hi)
\set k4 random(:lo, :hi)
\set k5 random(:lo, :hi)
\set k6 random(:lo, :hi)
\set k7 random(:lo, :hi)
\set k8 random(:lo, :hi)
\set k9 random(:lo, :hi)
\set k10 random(:lo, :hi)
SELECT transactionid, productid, price FROM purchases_index WHERE transactionid IN (:k1, :k2, :k3, :k4, :k5, :k6, :k7, :k8, :k9, :k10);
