package queue_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/queue"
)

func TestDueOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	stats := []queue.KindStats{
		{Kind: "completion", Due: 3, OldestDue: t0.Add(time.Minute), Running: 2},
		{Kind: "delivery", Due: 9, OldestDue: t0},
		{Kind: "task", Due: 2, OldestDue: t0.Add(30 * time.Second)},
		{Kind: "workflow", Scheduled: 4, Running: 1},
	}
	for _, tc := range []struct {
		name  string
		kinds []string
		want  queue.Due
	}{
		{"OldestOfTheKinds", []string{"completion", "task", "workflow"}, queue.Due{Jobs: 5, Oldest: t0.Add(30 * time.Second)}},
		{"NoneDue", []string{"workflow"}, queue.Due{}},
		{"NoKinds", nil, queue.Due{}},
		{"OneKind", []string{"delivery"}, queue.Due{Jobs: 9, Oldest: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, queue.DueOf(stats, tc.kinds))
		})
	}
}
