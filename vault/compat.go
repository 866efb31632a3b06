package vault

import (
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// compatibilityDates lists the dated behaviours of the /v3/files API,
// oldest first. A request's x-compatibility-date selects the newest one
// dated on or before it. It is the one place the list is kept.
func compatibilityDates() []string { return []string{"2025-01-01"} }

// FirstCompatibilityDate is the earliest accepted x-compatibility-date.
const FirstCompatibilityDate = "2025-01-01"

// ResolveCompatibilityDate returns the compatibility date a request's
// x-compatibility-date header selects: the newest dated behaviour on or
// before it. A missing value, one not of the form YYYY-MM-DD naming a real
// day, or one earlier than FirstCompatibilityDate is
// INVALID_COMPATIBILITY_DATE.
func ResolveCompatibilityDate(header string) (string, error) {
	d, err := time.Parse(time.DateOnly, header)
	if header == "" {
		return "", canvas.Errorf(canvas.EINVALIDCOMPATDATE, "The x-compatibility-date header is required (YYYY-MM-DD, %s or later).", FirstCompatibilityDate)
	}
	if err != nil || d.Format(time.DateOnly) != header {
		return "", canvas.Errorf(canvas.EINVALIDCOMPATDATE, "The x-compatibility-date header must be a date of the form YYYY-MM-DD.")
	}
	used := ""
	for _, c := range compatibilityDates() {
		if c <= header {
			used = c
		}
	}
	if used == "" {
		return "", canvas.Errorf(canvas.EINVALIDCOMPATDATE, "The x-compatibility-date %s is earlier than the first supported date, %s.", header, FirstCompatibilityDate)
	}
	return used, nil
}
