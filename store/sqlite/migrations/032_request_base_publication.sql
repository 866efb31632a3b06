-- publication_requests.base_publication_id is the publication the
-- environment served when the request was made (NULL for none, and for
-- requests made before it was kept): a pending request is stale once
-- another publication is active, which also tells one split from another
-- that starts with the same version.
ALTER TABLE publication_requests ADD COLUMN base_publication_id TEXT;
