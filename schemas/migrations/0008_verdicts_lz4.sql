-- A user's packed verdicts (17 bytes a scheme, about 5 KB for a state's thousand-odd schemes)
-- are stored compressed, and each micro-batch reads and rewrites hundreds of them. PostgreSQL's
-- default compression, pglz, cost the database a large share of its CPU at stream speed
-- (docs/fleet.md "Where the time goes"); lz4 compresses several times faster at about the same
-- size. Values written before this keep their compression until their row is next written.
-- A server built without lz4 keeps pglz: the data is the same either way.
DO $$
BEGIN
    ALTER TABLE user_verdicts ALTER COLUMN verdicts SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4: user_verdicts.verdicts stays pglz-compressed';
END $$;
