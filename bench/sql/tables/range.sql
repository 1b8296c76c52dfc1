-- 100-row range through the primary key (tables workload); n: rows in tb
\set r random(1, :n - 100)
SELECT count(*), sum(v) FROM tb WHERE id BETWEEN :r AND :r + 99;
