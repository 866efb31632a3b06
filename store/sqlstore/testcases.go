package sqlstore

import (
	"context"
	"errors"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// Compile-time check that Store implements the testcase package's Store.
var _ testcase.Store = (*Store)(nil)

// testCaseCols are the columns scanTestCase reads, in order, from
// test_cases tc.
const testCaseCols = `tc.id, tc.workspace_id, tc.prompt_id, tc.title, tc.messages, tc.variables,
	tc.variables_rich_content, tc.files, tc.expected_output, tc.evaluator, tc.answers,
	tc.prompt_application_id, tc.metadata, tc.created_by, tc.updated_by, tc.created_at, tc.updated_at,
	tc.deleted_at`

// liveTestCases is the FROM clause of reads: live test cases of live
// canvases of the workspace of its one parameter.
const liveTestCases = `test_cases tc JOIN canvases c ON c.id = tc.prompt_id AND c.deleted_at IS NULL
	WHERE tc.deleted_at IS NULL AND tc.workspace_id = ?`

// tagCols are the columns scanTag reads, in order, from test_case_tags t.
const tagCols = `t.id, t.workspace_id, t.prompt_id, t.name, t.color, t.created_at, t.updated_at, t.deleted_at`

// liveTags is the FROM clause of tag reads: live tags of live canvases of
// the workspace of its one parameter.
const liveTags = `test_case_tags t JOIN canvases c ON c.id = t.prompt_id AND c.deleted_at IS NULL
	WHERE t.deleted_at IS NULL AND t.workspace_id = ?`

func scanTestCase(r Row) (*testcase.TestCase, error) {
	var tc testcase.TestCase
	err := r.Scan(&tc.ID, &tc.WorkspaceID, &tc.PromptID, &tc.Title, jsonCol{&tc.Messages}, jsonCol{&tc.Variables},
		jsonCol{&tc.VariablesRichContent}, jsonCol{&tc.Files}, &tc.ExpectedOutput, jsonCol{&tc.Evaluator},
		jsonCol{&tc.Answers}, &tc.PromptApplicationID, jsonCol{&tc.Metadata}, &tc.CreatedBy, &tc.UpdatedBy,
		&tc.CreatedAt, &tc.UpdatedAt, &tc.DeletedAt)
	tc.Tags = []*testcase.Tag{}
	return &tc, err
}

func scanTag(r Row) (*testcase.Tag, error) {
	var t testcase.Tag
	err := r.Scan(&t.ID, &t.WorkspaceID, &t.PromptID, &t.Name, &t.Color, &t.CreatedAt, &t.UpdatedAt, &t.DeletedAt)
	return &t, err
}

// testCaseJSON holds the JSON column values of a test case.
type testCaseJSON struct {
	messages, variables, rich, files, evaluator, answers, metadata any
	err                                                            error
}

func testCaseValues(tc *testcase.TestCase) testCaseJSON {
	var c testCaseJSON
	var errs [7]error
	c.messages, errs[0] = jsonOrNull(tc.Messages, tc.Messages == nil)
	c.variables, errs[1] = jsonOrNull(tc.Variables, tc.Variables == nil)
	c.rich, errs[2] = jsonOrNull(tc.VariablesRichContent, tc.VariablesRichContent == nil)
	c.files, errs[3] = jsonOrNull(tc.Files, tc.Files == nil)
	c.evaluator, errs[4] = jsonOrNull(tc.Evaluator, tc.Evaluator == nil)
	c.answers, errs[5] = jsonOrNull(tc.Answers, tc.Answers == nil)
	c.metadata, errs[6] = jsonOrNull(tc.Metadata, tc.Metadata == nil)
	c.err = errors.Join(errs[:]...)
	return c
}

// CreateTestCase inserts tc into a live canvas of its workspace.
func (s *Store) CreateTestCase(ctx context.Context, tc *testcase.TestCase) error {
	cols := testCaseValues(tc)
	if cols.err != nil {
		return cols.err
	}
	return s.writeAudited(ctx, Alone, changeOf("test-case.create", auditTestCase, tc.WorkspaceID, &tc.ID), func(ctx context.Context, tx *Tx) error {
		if err := s.liveCanvas(ctx, tx, tc.WorkspaceID, tc.PromptID); err != nil {
			return err
		}
		if tc.ID == "" {
			tc.ID = tx.NewID()
		}
		tc.CreatedAt, tc.UpdatedAt, tc.DeletedAt = tx.Now, tx.Now, nil
		if _, err := tx.Exec(ctx, `INSERT INTO test_cases (id, workspace_id, prompt_id, title, messages, variables,
			variables_rich_content, files, expected_output, evaluator, answers, prompt_application_id, metadata,
			created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			tc.ID, tc.WorkspaceID, tc.PromptID, tc.Title, cols.messages, cols.variables, cols.rich, cols.files,
			nullString(tc.ExpectedOutput), cols.evaluator, cols.answers, nullString(tc.PromptApplicationID),
			cols.metadata, tc.CreatedBy, tc.UpdatedBy, tx.Now, tx.Now); err != nil {
			return err
		}
		tc.Tags = []*testcase.Tag{}
		return nil
	})
}

// liveCanvas checks that a canvas of the workspace is live, and keeps it
// from being deleted until the transaction ends.
func (s *Store) liveCanvas(ctx context.Context, tx *Tx, workspaceID, id string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM canvases WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL`+
		s.d.ForShare(), id, workspaceID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return canvas.NotFound("canvas")
	}
	return err
}

// GetTestCase returns a live test case of a live canvas, with its tags.
func (s *Store) GetTestCase(ctx context.Context, workspaceID, id string) (*testcase.TestCase, error) {
	var tc *testcase.TestCase
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		tc, err = s.getTestCase(ctx, tx, workspaceID, id)
		return err
	})
	return tc, err
}

func (s *Store) getTestCase(ctx context.Context, tx *Tx, workspaceID, id string) (*testcase.TestCase, error) {
	list, err := s.listTestCases(ctx, tx, testcase.Filter{WorkspaceID: workspaceID, IDs: []string{id}})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, canvas.NotFound("test case")
	}
	return list[0], nil
}

// ListTestCases returns the live test cases the filter selects, oldest
// first, each with its tags.
func (s *Store) ListTestCases(ctx context.Context, f testcase.Filter) ([]*testcase.TestCase, error) {
	var list []*testcase.TestCase
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		list, err = s.listTestCases(ctx, tx, f)
		return err
	})
	return list, err
}

func (s *Store) listTestCases(ctx context.Context, tx *Tx, f testcase.Filter) ([]*testcase.TestCase, error) {
	if f.PromptID == "" && len(f.IDs) == 0 && len(f.TagIDs) == 0 {
		return []*testcase.TestCase{}, nil
	}
	where := []string{liveTestCases}
	args := []any{f.WorkspaceID}
	if f.PromptID != "" {
		where = append(where, "tc.prompt_id = ?")
		args = append(args, f.PromptID)
	}
	if len(f.IDs) > 0 {
		where = append(where, s.d.InIDs("tc.id"))
		args = append(args, IDs(f.IDs))
	}
	if len(f.TagIDs) > 0 {
		where = append(where, `tc.id IN (SELECT a.test_case_id FROM test_case_tag_assignments a
			JOIN test_case_tags t ON t.id = a.tag_id AND t.deleted_at IS NULL
			WHERE `+s.d.InIDs("a.tag_id")+`)`)
		args = append(args, IDs(f.TagIDs))
	}
	q := `SELECT ` + testCaseCols + ` FROM ` + strings.Join(where, " AND ") + ` ORDER BY tc.created_at, tc.id`
	rows, err := tx.Query(ctx, q, args...)
	list, err := RowsOf(rows, err, func(r Rows) (*testcase.TestCase, error) { return scanTestCase(r) })
	if err != nil || len(list) == 0 {
		return list, err
	}
	byID := make(map[string]*testcase.TestCase, len(list))
	caseIDs := make(IDs, len(list))
	for i, tc := range list {
		byID[tc.ID], caseIDs[i] = tc, tc.ID
	}
	rows, err = tx.Query(ctx, `SELECT a.test_case_id, `+tagCols+` FROM test_case_tag_assignments a
		JOIN test_case_tags t ON t.id = a.tag_id AND t.deleted_at IS NULL
		WHERE `+s.d.InIDs("a.test_case_id")+` ORDER BY t.name, t.id`, caseIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var tcID string
		var t testcase.Tag
		if err := rows.Scan(&tcID, &t.ID, &t.WorkspaceID, &t.PromptID, &t.Name, &t.Color, &t.CreatedAt,
			&t.UpdatedAt, &t.DeletedAt); err != nil {
			return nil, err
		}
		byID[tcID].Tags = append(byID[tcID].Tags, &t)
	}
	return list, rows.Err()
}

// UpdateTestCase applies p.Update to a live test case, records p.By as its
// updater, and returns it.
func (s *Store) UpdateTestCase(ctx context.Context, p testcase.UpdateTestCaseParams) (*testcase.TestCase, error) {
	workspaceID, id, upd, by := p.WorkspaceID, p.ID, p.Update, p.By
	var set setList
	var errs []error
	addJSON := func(col string, v any, null bool) {
		val, err := jsonOrNull(v, null)
		errs = append(errs, err)
		set.add(col, val)
	}
	if upd.Title != nil {
		set.add("title", *upd.Title)
	}
	if upd.Messages != nil {
		addJSON("messages", *upd.Messages, *upd.Messages == nil)
	}
	if upd.Variables != nil {
		addJSON("variables", *upd.Variables, *upd.Variables == nil)
	}
	if upd.VariablesRichContent != nil {
		addJSON("variables_rich_content", *upd.VariablesRichContent, *upd.VariablesRichContent == nil)
	}
	if upd.Files != nil {
		addJSON("files", *upd.Files, *upd.Files == nil)
	}
	if upd.ExpectedOutput != nil {
		set.add("expected_output", nullString(*upd.ExpectedOutput))
	}
	if upd.Evaluator != nil {
		addJSON("evaluator", *upd.Evaluator, *upd.Evaluator == nil)
	}
	if upd.Answers != nil {
		addJSON("answers", *upd.Answers, *upd.Answers == nil)
	}
	if upd.PromptApplicationID != nil {
		set.add("prompt_application_id", nullString(*upd.PromptApplicationID))
	}
	if upd.Metadata != nil {
		addJSON("metadata", *upd.Metadata, *upd.Metadata == nil)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	set.add("updated_by", by)
	var out *testcase.TestCase
	err := s.writeAudited(ctx, Alone, changeOf("test-case.update", auditTestCase, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		if _, err := s.getTestCase(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE test_cases SET `+set.sql()+`, updated_at = ? WHERE id = ?`,
			append(set.args[:len(set.args):len(set.args)], tx.Now, id)...); err != nil {
			return err
		}
		var err error
		out, err = s.getTestCase(ctx, tx, workspaceID, id)
		return err
	})
	return out, err
}

// DeleteTestCase soft-deletes a live test case. Its tag assignments stay,
// unseen, with the deleted row.
func (s *Store) DeleteTestCase(ctx context.Context, workspaceID, id string) error {
	return s.writeAudited(ctx, Alone, changeOf("test-case.delete", auditTestCase, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		return softDelete(ctx, tx, "test_cases", "test case", workspaceID, id)
	})
}

// softDelete sets deleted_at on the live row id of the workspace in table
// (a constant, never caller input), and is NOT_FOUND naming what when there
// is none.
func softDelete(ctx context.Context, tx *Tx, table, what, workspaceID, id string) error {
	n, err := tx.Exec(ctx, `UPDATE `+table+` SET deleted_at = ?, updated_at = ?
		WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL`, tx.Now, tx.Now, id, workspaceID)
	if err != nil {
		return err
	} else if n == 0 {
		return canvas.NotFound(what)
	}
	return nil
}

// CreateTag inserts t into a live canvas of its workspace.
func (s *Store) CreateTag(ctx context.Context, t *testcase.Tag) error {
	return s.writeAudited(ctx, Alone, changeOf("test-case-tag.create", auditTag, t.WorkspaceID, &t.ID), func(ctx context.Context, tx *Tx) error {
		if err := s.liveCanvas(ctx, tx, t.WorkspaceID, t.PromptID); err != nil {
			return err
		}
		if t.ID == "" {
			t.ID = tx.NewID()
		}
		t.CreatedAt, t.UpdatedAt, t.DeletedAt, t.AgentID = tx.Now, tx.Now, nil, nil
		_, err := tx.Exec(ctx, `INSERT INTO test_case_tags (id, workspace_id, prompt_id, name, color, created_at,
			updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, t.ID, t.WorkspaceID, t.PromptID, t.Name, t.Color, tx.Now, tx.Now)
		return err
	})
}

// GetTag returns a live tag of a live canvas.
func (s *Store) GetTag(ctx context.Context, workspaceID, id string) (*testcase.Tag, error) {
	var t *testcase.Tag
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		t, err = getTag(ctx, tx, workspaceID, id)
		return err
	})
	return t, err
}

func getTag(ctx context.Context, tx *Tx, workspaceID, id string) (*testcase.Tag, error) {
	t, err := scanTag(tx.QueryRow(ctx, `SELECT `+tagCols+` FROM `+liveTags+` AND t.id = ?`, workspaceID, id))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("test case tag")
	}
	return t, err
}

// ListTags returns the live tags of the ids, or of a canvas when ids is
// empty, ordered by name then id.
func (s *Store) ListTags(ctx context.Context, workspaceID, promptID string, tagIDs []string) ([]*testcase.Tag, error) {
	q := `SELECT ` + tagCols + ` FROM ` + liveTags
	args := []any{workspaceID}
	if len(tagIDs) > 0 {
		q += ` AND ` + s.d.InIDs("t.id")
		args = append(args, IDs(tagIDs))
	} else {
		q += ` AND t.prompt_id = ?`
		args = append(args, promptID)
	}
	var list []*testcase.Tag
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, q+` ORDER BY t.name, t.id`, args...)
		list, err = RowsOf(rows, err, func(r Rows) (*testcase.Tag, error) { return scanTag(r) })
		return err
	})
	return list, err
}

// UpdateTag applies upd to a live tag. Moving it to another canvas needs
// that canvas live and the tag assigned to no live test case (CONFLICT);
// the assignments to deleted test cases it leaves behind are removed.
func (s *Store) UpdateTag(ctx context.Context, workspaceID, id string, upd testcase.TagUpdate) (*testcase.Tag, error) {
	var out *testcase.Tag
	err := s.writeAudited(ctx, Alone, changeOf("test-case-tag.update", auditTag, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		if s.d.Postgres {
			// The tag's row is locked first, so that updates of it take
			// turns across processes.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM test_case_tags WHERE id = ?`+s.d.ForUpdate(), id); err != nil {
				return err
			}
		}
		cur, err := getTag(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		var set setList
		if upd.Name != nil {
			set.add("name", *upd.Name)
		}
		if upd.Color != nil {
			set.add("color", *upd.Color)
		}
		if upd.PromptID != nil && *upd.PromptID != cur.PromptID {
			if err := s.liveCanvas(ctx, tx, workspaceID, *upd.PromptID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM test_case_tag_assignments a
				JOIN test_cases tc ON tc.id = a.test_case_id AND tc.deleted_at IS NULL WHERE a.tag_id = ?`, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return canvas.Errorf(canvas.ECONFLICT,
					"The tag is assigned to %d test case(s) of its canvas; remove it from them before moving it to another canvas.", n)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM test_case_tag_assignments WHERE tag_id = ?`, id); err != nil {
				return err
			}
			set.add("prompt_id", *upd.PromptID)
		}
		set.add("updated_at", tx.Now)
		if _, err := tx.Exec(ctx, `UPDATE test_case_tags SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
			return err
		}
		out, err = getTag(ctx, tx, workspaceID, id)
		return err
	})
	return out, err
}

// DeleteTag soft-deletes a live tag and removes its assignments.
func (s *Store) DeleteTag(ctx context.Context, workspaceID, id string) error {
	return s.writeAudited(ctx, Alone, changeOf("test-case-tag.delete", auditTag, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		if err := softDelete(ctx, tx, "test_case_tags", "test case tag", workspaceID, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM test_case_tag_assignments WHERE tag_id = ?`, id)
		return err
	})
}

// AddTags assigns every tag to every test case in one transaction.
func (s *Store) AddTags(ctx context.Context, workspaceID string, testCaseIDs, tagIDs []string) (testcase.BulkAddResult, error) {
	var out testcase.BulkAddResult
	var none string
	err := s.writeAudited(ctx, Alone, changeOf("test-case.add-tags", assignmentsOf(testCaseIDs), workspaceID, &none), func(ctx context.Context, tx *Tx) error {
		out = testcase.BulkAddResult{}
		caseCanvas, tagCanvas, err := s.bulkRows(ctx, tx, workspaceID, testCaseIDs, tagIDs)
		if err != nil {
			return err
		}
		for _, tagID := range tagIDs {
			for _, tcID := range testCaseIDs {
				if caseCanvas[tcID] != tagCanvas[tagID] {
					return canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/json/tagIds",
						Message: "tag " + tagID + " belongs to another canvas than test case " + tcID})
				}
				n, err := tx.Exec(ctx, `INSERT INTO test_case_tag_assignments (test_case_id, tag_id, created_at)
					VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, tcID, tagID, tx.Now)
				if err != nil {
					return err
				}
				if n > 0 {
					out.Added++
				} else {
					out.Skipped++
				}
			}
		}
		return nil
	})
	return out, err
}

// RemoveTags removes every tag from every test case in one transaction.
func (s *Store) RemoveTags(ctx context.Context, workspaceID string, testCaseIDs, tagIDs []string) (testcase.BulkRemoveResult, error) {
	var out testcase.BulkRemoveResult
	var none string
	err := s.writeAudited(ctx, Alone, changeOf("test-case.remove-tags", assignmentsOf(testCaseIDs), workspaceID, &none), func(ctx context.Context, tx *Tx) error {
		out = testcase.BulkRemoveResult{}
		if _, _, err := s.bulkRows(ctx, tx, workspaceID, testCaseIDs, tagIDs); err != nil {
			return err
		}
		for _, tagID := range tagIDs {
			for _, tcID := range testCaseIDs {
				n, err := tx.Exec(ctx, `DELETE FROM test_case_tag_assignments WHERE test_case_id = ? AND tag_id = ?`, tcID, tagID)
				if err != nil {
					return err
				}
				if n > 0 {
					out.Removed++
				} else {
					out.Skipped++
				}
			}
		}
		return nil
	})
	return out, err
}

// bulkRows returns the canvas of every test case and every tag of a bulk
// call, NOT_FOUND for the first id that names no live row.
func (s *Store) bulkRows(ctx context.Context, tx *Tx, workspaceID string, testCaseIDs, tagIDs []string) (map[string]string, map[string]string, error) {
	type pair struct{ id, canvas string }
	scanPair := func(rows Rows) (pair, error) {
		var p pair
		return p, rows.Scan(&p.id, &p.canvas)
	}
	rows, err := tx.Query(ctx, `SELECT tc.id, tc.prompt_id FROM `+liveTestCases+` AND `+s.d.InIDs("tc.id"),
		workspaceID, IDs(testCaseIDs))
	cases, err := RowsOf(rows, err, scanPair)
	if err != nil {
		return nil, nil, err
	}
	rows, err = tx.Query(ctx, `SELECT t.id, t.prompt_id FROM `+liveTags+` AND `+s.d.InIDs("t.id"),
		workspaceID, IDs(tagIDs))
	tags, err := RowsOf(rows, err, scanPair)
	if err != nil {
		return nil, nil, err
	}
	caseCanvas := make(map[string]string, len(cases))
	for _, p := range cases {
		caseCanvas[p.id] = p.canvas
	}
	tagCanvas := make(map[string]string, len(tags))
	for _, p := range tags {
		tagCanvas[p.id] = p.canvas
	}
	for _, id := range testCaseIDs {
		if _, ok := caseCanvas[id]; !ok {
			return nil, nil, canvas.Errorf(canvas.ENOTFOUND, "Test case %s not found.", id)
		}
	}
	for _, id := range tagIDs {
		if _, ok := tagCanvas[id]; !ok {
			return nil, nil, canvas.Errorf(canvas.ENOTFOUND, "Test case tag %s not found.", id)
		}
	}
	return caseCanvas, tagCanvas, nil
}
