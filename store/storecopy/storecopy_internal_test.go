package storecopy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanTables(t *testing.T) {
	target := &targetSchema{
		tables: map[string]map[string]targetColumn{
			"workspaces": {"id": {dataType: "text"}},
			"canvases":   {"id": {dataType: "text"}, "workspace_id": {dataType: "text"}},
			"versions":   {"id": {dataType: "text"}, "canvas_id": {dataType: "text"}, "origin_version_id": {dataType: "text"}},
			"jobs":       {"id": {dataType: "text"}},
		},
		references: map[string][]string{"canvases": {"workspaces"}, "versions": {"canvases"}},
	}
	source := []sourceTable{
		{name: "versions", columns: []string{"id", "canvas_id", "origin_version_id"}},
		{name: "jobs", columns: []string{"id"}},
		{name: "canvases", columns: []string{"id", "workspace_id"}},
		{name: "workspaces", columns: []string{"id"}},
	}
	t.Run("ForeignKeyOrder", func(t *testing.T) {
		plan, err := planTables(source, target)
		require.NoError(t, err)
		var names []string
		for _, p := range plan {
			names = append(names, p.name)
		}
		assert.Equal(t, []string{"workspaces", "canvases", "jobs", "versions"}, names,
			"each table after those it references, ties by name")
	})
	t.Run("MissingTable", func(t *testing.T) {
		_, err := planTables(append(source, sourceTable{name: "gadgets", columns: []string{"id"}}), target)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no table gadgets")
	})
	t.Run("MissingColumn", func(t *testing.T) {
		_, err := planTables([]sourceTable{{name: "jobs", columns: []string{"id", "colour"}}}, target)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "jobs has no column colour")
	})
	t.Run("Cycle", func(t *testing.T) {
		cyclic := &targetSchema{tables: target.tables, references: map[string][]string{
			"canvases": {"workspaces"}, "workspaces": {"canvases"}}}
		_, err := planTables(source, cyclic)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cycle")
	})
}

func TestConvert(t *testing.T) {
	at := time.Date(2026, 11, 25, 15, 4, 5, 123456789, time.UTC)
	for _, tc := range []struct {
		v        any
		dataType string
		want     any
	}{
		{"2026-11-25T15:04:05.123456789Z", "timestamp with time zone", at},
		{[]byte("2026-11-25T15:04:05.123456789Z"), "timestamp with time zone", at},
		{int64(1), "boolean", true},
		{int64(0), "boolean", false},
		{int64(42), "bigint", int64(42)},
		{"[1,2]", "text", "[1,2]"},
		{[]byte(`{"a":1}`), "text", `{"a":1}`},
		{[]byte{0, 1, 2}, "bytea", []byte{0, 1, 2}},
		{"secret", "bytea", []byte("secret")},
		{nil, "bigint", nil},
		{1.5, "double precision", 1.5},
	} {
		got, err := convert(tc.v, tc.dataType)
		require.NoError(t, err, "%#v to %s", tc.v, tc.dataType)
		assert.Equal(t, tc.want, got, "%#v to %s", tc.v, tc.dataType)
	}
	for _, tc := range []struct {
		v        any
		dataType string
	}{
		{"yesterday", "timestamp with time zone"},
		{"yes", "boolean"},
		{"many", "bigint"},
		{int64(1), "uuid"},
	} {
		_, err := convert(tc.v, tc.dataType)
		assert.Error(t, err, "%#v to %s", tc.v, tc.dataType)
	}
}
