-- The next day on which the user's age, read from the date of birth, reaches an age a held rule
-- tests (engine::calendar::next_age_change): the daily sweep re-evaluates the users whose day
-- has come (docs/releases.md, "The calendar"). NULL: no date of birth, or no such age ahead.
-- Rows stored before this column get theirs at their next evaluation.
ALTER TABLE profile_current ADD COLUMN next_age_change DATE;
CREATE INDEX idx_profile_current_next_age_change ON profile_current (next_age_change)
    WHERE next_age_change IS NOT NULL;
