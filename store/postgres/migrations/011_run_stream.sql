-- runs.stream says whether the run's answer was streamed to its caller as
-- it came (a completion requested with stream: true), false otherwise.
ALTER TABLE runs ADD COLUMN stream boolean NOT NULL DEFAULT false;
