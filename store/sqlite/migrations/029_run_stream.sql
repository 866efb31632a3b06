-- runs.stream says whether the run's answer was streamed to its caller as
-- it came (a completion requested with stream: true), 0 otherwise.
ALTER TABLE runs ADD COLUMN stream INTEGER NOT NULL DEFAULT 0;
