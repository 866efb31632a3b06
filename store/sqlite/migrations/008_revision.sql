-- The revision counter: one number that every commit changing what the
-- caches derive values from (workspaces, projects, keys, canvases, versions,
-- messages, environments, publications) increments, through the triggers
-- below. Writes to other tables (runs, jobs, idempotency keys...) leave it
-- alone, so that they do not empty the caches. store/sqlite/dataversion.go
-- reads it; a test checks that every table is either counted here or
-- listed as one that no cache reads.
CREATE TABLE revision (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO revision (id, value) VALUES (1, 0);

CREATE TRIGGER workspaces_revision_insert AFTER INSERT ON workspaces
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER workspaces_revision_update AFTER UPDATE ON workspaces
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER workspaces_revision_delete AFTER DELETE ON workspaces
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER projects_revision_insert AFTER INSERT ON projects
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER projects_revision_update AFTER UPDATE ON projects
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER projects_revision_delete AFTER DELETE ON projects
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_revision_insert AFTER INSERT ON api_keys
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_revision_update AFTER UPDATE ON api_keys
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_revision_delete AFTER DELETE ON api_keys
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER canvases_revision_insert AFTER INSERT ON canvases
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER canvases_revision_update AFTER UPDATE ON canvases
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER canvases_revision_delete AFTER DELETE ON canvases
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER favorites_revision_insert AFTER INSERT ON favorites
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER favorites_revision_update AFTER UPDATE ON favorites
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER favorites_revision_delete AFTER DELETE ON favorites
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER versions_revision_insert AFTER INSERT ON versions
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER versions_revision_update AFTER UPDATE ON versions
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER versions_revision_delete AFTER DELETE ON versions
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER messages_revision_insert AFTER INSERT ON messages
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER messages_revision_update AFTER UPDATE ON messages
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER messages_revision_delete AFTER DELETE ON messages
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER environments_revision_insert AFTER INSERT ON environments
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER environments_revision_update AFTER UPDATE ON environments
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER environments_revision_delete AFTER DELETE ON environments
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER publications_revision_insert AFTER INSERT ON publications
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER publications_revision_update AFTER UPDATE ON publications
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER publications_revision_delete AFTER DELETE ON publications
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
