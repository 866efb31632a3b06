package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditScreenshot is where the audit page's screenshot is written when
// CANVAS_UPDATE_SCREENSHOT=1, relative to the server package.
const auditScreenshot = "../docs/console-audit.png"

// TestConsole_Audit drives the audit page in a real browser: the changes
// made through the API listed newest first by the name of the key that
// made them, filtered by a canvas's id in a route that survives a reload,
// a rename opened on its title's old and new values, a time filter sent
// as an RFC 3339 instant, no credential's key anywhere in the page, and a
// viewer told the log is for admins.
func TestConsole_Audit(t *testing.T) {
	execPath := findChromium(t)
	e := newFullEnv(t)
	created := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "admin", "name": "auditor"})
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	key := created.Map(t)
	admin, actorID := key["token"].(string), "key:"+key["id"].(string)

	project := mustCreate(t, e.testEnv, "/projects", admin, map[string]any{"name": "audited"})["id"].(string)
	c := mustCreate(t, e.testEnv, "/prompt", admin, map[string]any{"title": "Draft", "projectId": project})["id"].(string)
	r := e.Do(http.MethodPatch, "/prompt/"+c, admin, map[string]any{"title": "Final"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	const secret = "sk-ant-audit-console-secret-7319"
	cred := mustCreate(t, e.testEnv, "/credentials", admin, map[string]any{"name": "vendor", "provider": "anthropic", "apiKey": secret})["id"].(string)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(e.URL+"/console#/audit"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), admin),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-table"]`)),
	)
	rows := func() []map[string]string {
		t.Helper()
		return browserRun(t, b, chromedp.Evaluate[[]map[string]string](`[...document.querySelectorAll('[data-testid="audit-row"]')].map(tr => ({
			seq: tr.dataset.seq, action: tr.dataset.action, actor: tr.querySelector("span.actor").textContent,
			actorTitle: tr.querySelector("span.actor").title, resource: tr.cells[4].textContent}))`))
	}

	t.Run("NewestFirstByName", func(t *testing.T) {
		waitUntil(t, b, `document.querySelector('[data-testid="audit-row"] span.actor').textContent === "auditor"`)
		got := rows()
		require.GreaterOrEqual(t, len(got), 3)
		for i, want := range []string{"credential.create", "prompt.update", "prompt.create"} {
			assert.Equal(t, want, got[i]["action"])
			assert.Equal(t, "auditor", got[i]["actor"])
			assert.Equal(t, actorID, got[i]["actorTitle"])
		}
		for i := 1; i < len(got); i++ {
			assert.Greater(t, seqOf(t, got[i-1]["seq"]), seqOf(t, got[i]["seq"]), "newest first")
		}
		assert.Equal(t, "#/canvases/"+c, browserRun(t, b, chromedp.Evaluate[string](
			`document.querySelectorAll('[data-testid="audit-row"]')[1].querySelector('[data-testid="audit-resource-link"]').getAttribute("href")`)))
		head := pageText(t, b, `[data-testid="audit-head"]`)
		assert.Equal(t, "#"+got[0]["seq"]+" ", head[:len(got[0]["seq"])+2], "the chain's head is the newest event")
		assert.Regexp(t, `^#\d+ [0-9a-f]{12}$`, head)
		assert.Contains(t, pageText(t, b, `[data-testid="audit-chain"]`), "canvasd audit verify")
		assert.Equal(t, "page", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("nav-audit").getAttribute("aria-current")`)))
	})

	t.Run("ResourceTypesAsDocumented", func(t *testing.T) {
		raw, err := os.ReadFile("openapi.json")
		require.NoError(t, err)
		var doc struct {
			Paths struct {
				AuditEvents struct {
					Get struct {
						Parameters []struct{ Name, Description string } `json:"parameters"`
					} `json:"get"`
				} `json:"/audit-events"`
			} `json:"paths"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		var documented []string
		for _, p := range doc.Paths.AuditEvents.Get.Parameters {
			if p.Name == "resourceType" {
				m := regexp.MustCompile(`\(([^)]*)\)`).FindStringSubmatch(p.Description)
				require.NotNil(t, m, "the parameter lists the types: %s", p.Description)
				documented = strings.Split(m[1], ", ")
			}
		}
		require.NotEmpty(t, documented)
		options := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#audit-resource-type option")].map(o => o.value).filter(Boolean)`))
		assert.Equal(t, documented, options)
	})

	t.Run("NoSecret", func(t *testing.T) {
		browserRun(t, b, chromedp.Evaluate[bool](`document.querySelectorAll('[data-testid^="audit-toggle-"]').forEach(el => el.click()), true`))
		waitUntil(t, b, `[...document.querySelectorAll("tr.audit-details")].every(tr => !tr.hidden)`)
		text := browserRun(t, b, chromedp.Evaluate[string](`document.documentElement.textContent`))
		assert.Contains(t, text, cred, "the credential's event is shown")
		assert.NotContains(t, text, secret)
		assert.NotContains(t, text, secret[len(secret)-12:], "not even part of the key")
	})

	t.Run("FilterByResource", func(t *testing.T) {
		setFieldValue(t, b, `#audit-resource-id`, c)
		b.Do(t, chromedp.Click(chromedp.CSS(`#audit-apply`)))
		waitUntil(t, b, `location.hash.includes("resourceId=`+c+`") && document.querySelectorAll('[data-testid="audit-row"]').length === 2`)
		b.Do(t, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-table"]`)))
		got := rows()
		require.Len(t, got, 2, "the filter is kept in the route")
		assert.Equal(t, "prompt.update", got[0]["action"])
		assert.Equal(t, "prompt.create", got[1]["action"])
		assert.Equal(t, c, browserRun(t, b, chromedp.Value(chromedp.CSS(`#audit-resource-id`))))
		assert.Contains(t, pageText(t, b, `[data-testid="audit-count"]`), "1–2 of 2 events")
		assert.Contains(t, pageText(t, b, `[data-testid="audit-chain"]`), "Newest event shown", "a filtered page's newest event is not the chain's head")
	})

	t.Run("RenameOpensOnTitle", func(t *testing.T) {
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="audit-row"] button.toggle`)))
		sel := `[data-testid="audit-row"] + tr.audit-details tr[data-member="title"]`
		waitUntil(t, b, `(() => { const tr = document.querySelector(`+jsQuote(sel)+`); return tr !== null && tr.checkVisibility(); })()`)
		got := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelector(`+jsQuote(sel)+`).cells].map(td => td.textContent)`))
		assert.Equal(t, []string{"title", `"Draft"`, `"Final"`}, got)
		assert.Equal(t, "changed", browserRun(t, b, chromedp.Evaluate[string](`document.querySelector(`+jsQuote(sel)+`).dataset.change`)))
		assert.Equal(t, "true", browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="audit-row"] button.toggle').getAttribute("aria-expanded")`)))
		writeScreenshot(t, b, auditScreenshot)
	})

	t.Run("TimeFilter", func(t *testing.T) {
		setFieldValue(t, b, `#audit-since`, "2100-01-01T00:00:30")
		b.Do(t, chromedp.Click(chromedp.CSS(`#audit-apply`)))
		waitUntil(t, b, `document.querySelector('[data-testid="audit-empty"]') !== null`)
		hash := browserRun(t, b, chromedp.Evaluate[string](`decodeURIComponent(location.hash)`))
		assert.Regexp(t, `since=21\d\d-\d\d-\d\dT\d\d:\d\d:30\.000Z`, hash, "a local time is sent as an RFC 3339 UTC instant")
		assert.Contains(t, hash, "resourceId="+c, "the other filters stay")
		assert.Equal(t, "2100-01-01T00:00:30", browserRun(t, b, chromedp.Value(chromedp.CSS(`#audit-since`))), "the field shows the local time back")
		b.Do(t, chromedp.Click(chromedp.CSS(`#audit-clear`)))
		waitUntil(t, b, `location.hash === "#/audit" && document.querySelectorAll('[data-testid="audit-row"]').length >= 3`)

		b.Do(t, chromedp.Navigate(e.URL+"/console#/audit?since=yesterday"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="error"]`)))
		assert.Contains(t, pageText(t, b, `[data-testid="error"]`), "validation", "the API's refusal is shown")
		assert.True(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("audit-filters") !== null`)), "the form stays to be corrected")
	})

	t.Run("ActorFilter", func(t *testing.T) {
		setFieldValue(t, b, `#audit-actor`, actorID)
		b.Do(t, chromedp.Click(chromedp.CSS(`#audit-apply`)))
		waitUntil(t, b, `location.hash.includes("actor=`+key["id"].(string)+`") && document.querySelector('[data-testid="audit-table"]') !== null`)
		for _, row := range rows() {
			assert.Equal(t, actorID, row["actorTitle"], "only the actor's events, its id typed as the title shows it")
		}
	})

	t.Run("Paging", func(t *testing.T) {
		for i := range 50 {
			r := e.Do(http.MethodPatch, "/prompt/"+c, admin, map[string]any{"title": fmt.Sprintf("Final %d", i)})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		b.Do(t, chromedp.Navigate(e.URL+"/console#/audit?resourceId="+c), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-older"]`)))
		assert.Len(t, rows(), 50)
		assert.Equal(t, "1–50 of 52 events", pageText(t, b, `[data-testid="audit-count"]`))
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="audit-older"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-newer"]`)))
		got := rows()
		require.Len(t, got, 2)
		assert.Equal(t, "prompt.create", got[1]["action"], "the oldest last")
		assert.Equal(t, "51–52 of 52 events", pageText(t, b, `[data-testid="audit-count"]`))
		assert.Contains(t, browserRun(t, b, chromedp.Evaluate[string](`location.hash`)), "offset=50")
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="audit-newer"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-older"]`)))
		assert.Len(t, rows(), 50)
	})

	t.Run("ViewerRefused", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#sign-out`)),
			chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
			chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Viewer),
			chromedp.Click(chromedp.CSS(`#sign-in-button`)),
			chromedp.WaitVisible(chromedp.CSS(`#nav-audit`)),
			chromedp.Navigate(e.URL+"/console#/audit"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-forbidden"]`)),
		)
		assert.Equal(t, "The audit log is for admins.", pageText(t, b, `[data-testid="audit-forbidden"]`))
		assert.Empty(t, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="audit-row"]').length`)))
	})
	for _, msg := range b.Errors() {
		assert.Regexp(t, `Failed to load resource: .* status of (403|422) .*/audit-events\?`, msg,
			"the browser logs the requests the API refused, and nothing else")
	}
}

// seqOf reads an event's seq as the page shows it.
func seqOf(t *testing.T, s string) int {
	t.Helper()
	var n int
	require.NoError(t, json.Unmarshal([]byte(s), &n))
	return n
}
