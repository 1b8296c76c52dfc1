-- point query through the primary key (tables workload); n: rows in tb
\set r random(1, :n)
SELECT id, k, v, pad FROM tb WHERE id = :r;
