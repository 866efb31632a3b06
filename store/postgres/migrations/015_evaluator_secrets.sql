-- secrets_key_id tells where a row's webhook evaluator secrets stand: NULL
-- when the row holds none, the id of the key every one of them is sealed
-- under, or '' when some is in clear (rows written before secrets were
-- sealed) or they are sealed under different keys. canvasd secrets
-- rotate-key re-seals every row whose value is not the current key's id.
ALTER TABLE evaluators ADD COLUMN secrets_key_id text;
ALTER TABLE experiments ADD COLUMN secrets_key_id text;

UPDATE evaluators SET secrets_key_id = '' WHERE spec::jsonb ? 'secret';
UPDATE experiments SET secrets_key_id = ''
	WHERE jsonb_path_exists(request::jsonb, '$.evaluators[*] ? (exists (@.secret))');

CREATE INDEX evaluators_secrets_key ON evaluators (secrets_key_id, id) WHERE secrets_key_id IS NOT NULL;
CREATE INDEX experiments_secrets_key ON experiments (secrets_key_id, id) WHERE secrets_key_id IS NOT NULL;
