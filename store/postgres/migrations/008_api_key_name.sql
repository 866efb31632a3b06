-- An API key's name, for people to tell keys apart ("ci", "Ada's laptop");
-- empty when the key was made without one.

ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '';
