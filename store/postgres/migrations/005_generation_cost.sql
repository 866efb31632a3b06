-- What a test-case generation's run cost: JSON text {input, output, total,
-- currency}, beside its usage; NULL when no price of the model was known
-- or the model was not called.

ALTER TABLE generations ADD COLUMN cost text;
