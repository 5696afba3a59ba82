-- A user's packed verdicts stay in their row. lz4 (0008) compresses a state's thousand-odd
-- schemes (17 bytes each, about 5.4 KB) to about 2.3 KB, which is still over PostgreSQL's default
-- target for a row (about 2 KB), so every value was moved out of line into the TOAST table: each
-- micro-batch's update of a user's verdicts wrote and indexed the new chunks and deleted the old
-- ones, and each batch's load read them back through the TOAST index. With a target of about
-- half a page a compressed value of up to about 4 KB stays in the row (two or more rows a page);
-- a larger one (a citizen without a known state holds every scheme) still moves out of line.
-- Rows written before this move in when next written (docs/fleet.md "Where the time goes").
ALTER TABLE user_verdicts SET (toast_tuple_target = 4080);
