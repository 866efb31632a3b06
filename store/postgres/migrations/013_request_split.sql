-- publication_requests.split is the JSON array of the entries
-- ([{versionId, weight}]) of a request to publish a split, NULL for a
-- request of one version; version_id is then the first entry's, as a
-- publication's is, and version_changed_at the last change of any version
-- of the split.
ALTER TABLE publication_requests ADD COLUMN split text;
