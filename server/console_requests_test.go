package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestsWorld is a canvas of a full test server whose production serves
// its first version, and two named editor keys: alice asks, bob approves.
type requestsWorld struct {
	*includeWorld
	canvasID       string
	v1, v2, v3, v4 string
	alice, bob     string
}

func newRequestsWorld(t *testing.T) *requestsWorld {
	w := &requestsWorld{includeWorld: newIncludeWorld(t)}
	w.canvasID = w.canvas("Support")
	w.v1 = w.mustVersion(w.canvasID, "Hello {{name}}.", map[string]any{"name": "name", "type": "text"})
	w.v2 = w.mustVersion(w.canvasID, "Bonjour {{name}}.", map[string]any{"name": "name", "type": "text"})
	w.v3, w.v4 = w.mustVersion(w.canvasID, "Hallo."), w.mustVersion(w.canvasID, "Hola.")
	w.publish(w.canvasID, "production", w.v1)
	key := func(name string) string {
		res := w.Do(http.MethodPost, "/api-keys", w.Admin, map[string]any{"role": "editor", "name": name})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return res.Map(t)["token"].(string)
	}
	w.alice, w.bob = key("alice"), key("bob")
	return w
}

// request asks, with token, that version be published to production, and
// returns the request's id.
func (w *requestsWorld) request(token, version string) string {
	w.t.Helper()
	res := w.Do(http.MethodPost, "/publication-requests", token, map[string]any{"resourceType": "prompt",
		"resourceId": w.canvasID, "envName": "production", "versionId": version})
	require.Equal(w.t, http.StatusCreated, res.Status, "%s", res.Body)
	return res.Map(w.t)["id"].(string)
}

// decisionButtons are the test ids of the decisions the request's page
// offers.
func decisionButtons(t *testing.T, b *browserTab) []string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="request-decision"] button')].map(b => b.dataset.testid)`))
}

// served is the id of the version production serves.
func (w *requestsWorld) served() string {
	w.t.Helper()
	res := w.Do(http.MethodGet, "/environment/version?resourceType=prompt&resourceId="+w.canvasID+"&envName=production", w.Viewer, nil)
	require.Equal(w.t, http.StatusOK, res.Status, "%s", res.Body)
	return res.Map(w.t)["id"].(string)
}

// TestConsole_PublicationRequests drives governed publications in a real
// browser with two people's keys: an admin protects production in the
// console; alice requests a publication there, sees it listed with names
// and its diff, and is refused her own approval; bob approves, and the
// request is published and production serves the version. Bob cannot
// approve a version edited since, and rejects it; he cannot withdraw
// alice's request, and she does.
func TestConsole_PublicationRequests(t *testing.T) {
	execPath := findChromium(t)
	w := newRequestsWorld(t)
	b := newBrowser(t, execPath)
	signIn := func(token string) {
		t.Helper()
		b.Do(t, chromedp.Navigate(w.URL+"/console"), chromedp.WaitReady(chromedp.CSS(`#sign-out`)))
		// Both are hidden until the page has read the stored key: sign
		// out only once it shows one of them.
		waitUntil(t, b, `!document.getElementById("nav").hidden || !document.getElementById("sign-in").hidden`)
		browserRun(t, b, chromedp.Evaluate[bool](`(() => { if (!document.getElementById("nav").hidden) document.getElementById("sign-out").click(); return true; })()`))
		b.Do(t,
			chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
			chromedp.SendKeys(chromedp.CSS(`#api-key`), token+kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`#nav-requests`)),
		)
	}
	// open shows the page of hash, and waits until it is shown (not the
	// page before it) and sel is visible in it.
	open := func(hash, sel string) {
		t.Helper()
		b.Do(t, chromedp.Navigate(w.URL+"/console#"+hash))
		waitUntil(t, b, `(v => v.dataset.path === `+jsQuote(hash)+` && !v.hasAttribute("aria-busy"))(document.getElementById("view"))`)
		b.Do(t, chromedp.WaitVisible(chromedp.CSS(sel)))
	}
	envPage := "/canvases/" + w.canvasID + "/environments"

	// The admin protects production with the policy editor.
	signIn(w.Admin)
	open(envPage, `[data-testid="env-production-policy-toggle"]`)
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-policy-toggle"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-policy-protected"]`)),
	)
	setFieldValue(t, b, `[data-testid="env-production-policy-approvals"]`, "9")
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="env-production-policy-save"]`)))
	assert.Equal(t, "The approvals are a whole number from 1 to 5.", pageText(t, b, `[data-testid="env-production-policy-error"]`))
	setFieldValue(t, b, `[data-testid="env-production-policy-approvals"]`, "1")
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-policy-save"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-protected"]`)),
	)
	assert.Equal(t, "production is protected: 1 approval publish it.", pageText(t, b, `#environments-result`))
	assert.Contains(t, pageText(t, b, `[data-testid="env-production-protected"]`), "protected: 1 approval")
	envs := w.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+w.canvasID, w.Viewer, nil)
	var list []map[string]any
	envs.JSON(t, &list)
	require.Equal(t, "production", list[0]["name"])
	assert.Equal(t, true, list[0]["protected"])
	assert.Equal(t, float64(1), list[0]["requiredApprovals"])

	// Alice requests v2 in the console; the environment and the Requests
	// page list it by name.
	signIn(w.alice)
	open(envPage, `[data-testid="env-production-request"]`)
	assert.Zero(t, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="env-production-policy-toggle"]').length`)),
		"an editor is not offered the admins' protection")
	b.Do(t, chromedp.SetValue(chromedp.CSS(`[data-testid="env-production-version"]`), w.v2))
	setFieldValue(t, b, `[data-testid="env-production-request-comment"]`, "French greeting")
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-request"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-requests"]`)),
	)
	pending := w.Do(http.MethodGet, "/publication-requests?status=pending", w.Viewer, nil)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	pending.JSON(t, &page)
	require.Len(t, page.Data, 1)
	first := page.Data[0]["id"].(string)
	assert.Equal(t, w.v2, page.Data[0]["versionId"])
	assert.Equal(t, "French greeting", page.Data[0]["comment"])
	waitUntil(t, b, `document.querySelector('[data-testid="env-request-`+first+`"]').textContent.includes("requested by alice")`)

	// Two more requests of alice, made before production moves.
	edited, withdrawn := w.request(w.alice, w.v3), w.request(w.alice, w.v4)

	open("/requests", `[data-testid="requests-table"]`)
	assert.Equal(t, "pending", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("requests-status").value`)), "pending by default")
	row := `document.querySelector('[data-testid="request-link-` + first + `"]').closest("tr")`
	waitUntil(t, b, row+`.cells[3].textContent === "alice"`)
	cells := browserRun(t, b, chromedp.Evaluate[[]string](`[...`+row+`.cells].map(c => c.textContent)`))
	assert.Equal(t, []string{"Support", "production"}, cells[:2])
	assert.Regexp(t, `^#2 `, cells[2], "the version by number and title")
	assert.Equal(t, "0 of 1", cells[4])
	assert.Equal(t, "pending", cells[6])
	assert.Equal(t, 3, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="requests-table"] tbody tr').length`)))

	// The detail shows the diff against v1; alice's own approval is refused.
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="request-link-`+first+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-diff"] [data-testid="diff-message-0-table"]`)),
	)
	diff := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="diff-message-0-table"] tbody tr')].map(tr => tr.dataset.kind + ":" + tr.cells[1].textContent + "|" + tr.cells[3].textContent)`))
	assert.Equal(t, []string{"change:Hello {{name}}.|Bonjour {{name}}."}, diff)
	assert.Equal(t, "French greeting", pageText(t, b, `[data-testid="request-comment"]`))
	assert.Equal(t, "You made this request: people other than you approve or reject it; you may withdraw it.",
		pageText(t, b, `[data-testid="request-decision-hint"]`))
	assert.Equal(t, []string{"request-withdraw"}, decisionButtons(t, b), "the requester is offered to withdraw only")
	assert.Equal(t, w.v1, w.served())

	// Bob approves: the request is published, and production serves v2.
	signIn(w.bob)
	open("/requests/"+first, `[data-testid="request-approve"]`)
	setFieldValue(t, b, `[data-testid="request-decision-comment"]`, "Looks right")
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="request-approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-notice"]`)),
	)
	assert.Equal(t, "Approved: the request is published to production.", pageText(t, b, `[data-testid="request-notice"]`))
	assert.True(t, strings.HasPrefix(pageText(t, b, `[data-testid="request-status"]`), "published to production"), pageText(t, b, `[data-testid="request-status"]`))
	waitUntil(t, b, `[...document.querySelectorAll('[data-testid="request-approvals"] tbody tr')].map(tr => tr.cells[0].textContent + "|" + tr.cells[1].textContent).join() === "bob|Looks right"`)
	assert.Equal(t, 0, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="request-decision"]').length`)), "a decided request takes no decision")
	assert.Equal(t, w.v2, w.served())

	// A version edited since its request: the approval is refused, and bob
	// rejects it; the list says what moved.
	res := w.Do(http.MethodPatch, "/prompt-version/"+w.v3, w.Editor, map[string]any{"content": "Hallo!"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	open("/requests", `[data-testid="request-flags-`+edited+`"]`)
	assert.Equal(t, "production moved since this request was made; the version was edited since.", pageText(t, b, `[data-testid="request-flags-`+edited+`"]`))
	assert.Equal(t, "production moved since this request was made.", pageText(t, b, `[data-testid="request-flags-`+withdrawn+`"]`))
	open("/requests/"+edited, `[data-testid="request-approve"]`)
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="request-approve"]`)))
	waitUntil(t, b, `document.querySelector('[data-testid="request-decision-error"]').textContent !== ""`)
	assert.Equal(t, "The version was edited after the request was made; request its publication again.", pageText(t, b, `[data-testid="request-decision-error"]`))
	setFieldValue(t, b, `[data-testid="request-decision-comment"]`, "Edited since")
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="request-reject"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-notice"]`)),
	)
	waitUntil(t, b, `document.querySelector('[data-testid="request-status"]').textContent.startsWith("rejected by bob ")`)
	assert.True(t, strings.HasSuffix(pageText(t, b, `[data-testid="request-status"]`), ": Edited since"))

	// Only alice withdraws hers.
	open("/requests/"+withdrawn, `[data-testid="request-decision"]`)
	assert.Equal(t, []string{"request-approve", "request-reject"}, decisionButtons(t, b), "another person approves or rejects")
	signIn(w.alice)
	open("/requests/"+withdrawn, `[data-testid="request-withdraw"]`)
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="request-withdraw"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-notice"]`)),
	)
	assert.Equal(t, "Withdrawn.", pageText(t, b, `[data-testid="request-notice"]`))
	assert.True(t, strings.HasPrefix(pageText(t, b, `[data-testid="request-status"]`), "withdrawn by the requester"))
	open("/requests", `[data-testid="requests-table-empty"]`)
	assert.Equal(t, "No pending requests.", pageText(t, b, `[data-testid="requests-table-empty"]`))
	assert.Equal(t, w.v2, w.served())
	// The browser logs the refused answers (403, 409); nothing else.
	for _, msg := range b.Errors() {
		assert.Contains(t, msg, "Failed to load resource", "the page logs no script error")
	}
}

// TestConsole_PublicationRequestSplit shows a request of a split in the
// console: the Requests page and the request's page name each version of
// the split with its weight.
func TestConsole_PublicationRequestSplit(t *testing.T) {
	execPath := findChromium(t)
	w := newRequestsWorld(t)
	envs := w.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+w.canvasID, w.Viewer, nil)
	var list []map[string]any
	envs.JSON(t, &list)
	require.Equal(t, "production", list[0]["name"])
	protect(t, w.testEnv, list[0]["id"].(string), map[string]any{"protected": true, "requiredApprovals": 1})
	res := w.Do(http.MethodPost, "/publication-requests", w.alice, map[string]any{"resourceType": "prompt",
		"resourceId": w.canvasID, "envName": "production",
		"split": []map[string]any{{"versionId": w.v2, "weight": 70}, {"versionId": w.v3, "weight": 30}}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	id := res.Map(t)["id"].(string)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(w.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), w.Admin+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav-requests`)),
		chromedp.Navigate(w.URL+"/console#/requests"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-split-`+id+`"]`)),
	)
	row := pageText(t, b, `[data-testid="request-split-`+id+`"]`)
	assert.Equal(t, "#2 Version 2 70 % · #3 Version 3 30 %", row)

	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/requests/"+id),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-split"]`)),
	)
	assert.Equal(t, "Publish a split of 2 versions to production", pageText(t, b, `#request-title`))
	assert.Equal(t, row, pageText(t, b, `[data-testid="request-split"]`))
	links := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="request-split"] a')].map(a => a.getAttribute("href"))`))
	assert.Equal(t, []string{"#/versions/" + w.v2, "#/versions/" + w.v3}, links)
	assert.Empty(t, b.Errors())
}
