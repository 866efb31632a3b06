//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walkthroughLimit bounds the whole walkthrough, so that a delivery that
// never comes fails the test rather than hangs it. Nothing is asserted
// about how long it takes.
const walkthroughLimit = 3 * time.Minute

// requireTools returns the paths of the programs named, skipping the test
// when one is missing, except under CI=true, where it fails: .ci/run
// installs them.
func requireTools(t *testing.T, names ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	var missing []string
	for _, name := range names {
		path, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		paths[name] = path
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%s: %s not installed, so the README's walkthrough is NOT TESTED (apt-get install %s; .ci/run installs them)",
			t.Name(), strings.Join(missing, " and "), strings.Join(missing, " "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, "SKIP", msg)
		t.Skip(msg)
	}
	return paths
}

// markdownSection returns the part of a Markdown document from the line
// heading (a level-2 heading, "## ...") to the next level-2 heading.
func markdownSection(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "README has no %q section", heading)
	section := doc[start+1:]
	if end := strings.Index(section[len(heading):], "\n## "); end >= 0 {
		section = section[:len(heading)+end+1]
	}
	return section
}

// fencedBlocks returns the bodies of the fenced code blocks of a Markdown
// text whose info string is lang, in order.
func fencedBlocks(text, lang string) []string {
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			if strings.TrimSpace(strings.TrimPrefix(line, "```")) == lang {
				cur = &strings.Builder{}
			} else {
				// Another language: skip to its closing fence.
				for sc.Scan() && !strings.HasPrefix(sc.Text(), "```") {
				}
			}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

// freeAddr returns a loopback address nothing listens on at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// builtWithRace reports whether this test binary was built with -race.
func builtWithRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// blockResult is what one pasted block did.
type blockResult struct {
	text     string
	output   string
	status   int
	finished bool
	failures []string // commands that failed (the shell's ERR trap)
	vars     map[string]string
}

var assignment = regexp.MustCompile(`(?m)^\s*([A-Z][A-Z0-9_]*)=`)

// TestREADME_Walkthrough pastes the README's walkthrough into one shell, as
// its reader would: every ```sh block of the "Walkthrough with curl"
// section, top to bottom, against a new server started as the section
// says, with only what a reader would type changed (the printed key, the
// server's and the receiver's addresses, which are free ports here). Each
// block must succeed, every command in it too, every id it captures must
// be one, and the outputs the README shows must appear.
func TestREADME_Walkthrough(t *testing.T) {
	t.Parallel()
	tools := requireTools(t, "bash", "curl", "jq")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	section := markdownSection(t, string(raw), "## Walkthrough with curl")

	// The server runs as the section starts it.
	require.Contains(t, fencedBlocks(section, "text"), "CANVAS_ALLOW_PRIVATE_NETWORKS=1 go run ./cmd/canvasd\n")
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key, "CANVAS_ALLOW_PRIVATE_NETWORKS": "1"})

	blocks := fencedBlocks(section, "sh")
	require.NotEmpty(t, blocks)
	joined := strings.Join(blocks, "")
	for _, sub := range [][2]string{
		{"paste-the-printed-key-here", key},
		{"http://127.0.0.1:8080", d.URL},
		{"127.0.0.1:9000", freeAddr(t)},
	} {
		require.Contains(t, joined, sub[0], "the walkthrough no longer says %q", sub[0])
		for i := range blocks {
			blocks[i] = strings.ReplaceAll(blocks[i], sub[0], sub[1])
		}
	}

	// The walkthrough writes notes.txt where it runs, the repository's
	// root, and removes it; a file of that name already there is not
	// this test's to overwrite.
	notes := filepath.Join(root, "notes.txt")
	require.NoFileExists(t, notes, "the walkthrough writes notes.txt in the repository's root")
	t.Cleanup(func() { _ = os.Remove(notes) })

	var script strings.Builder
	script.WriteString("set -o pipefail\n")
	script.WriteString(`trap 'echo "@@failed: $BASH_COMMAND (exit $?)"' ERR` + "\n")
	script.WriteString(`trap 'kill $(jobs -p) 2>/dev/null || true' EXIT` + "\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '@@block %d'\n%s", i, b)
		fmt.Fprintf(&script, "echo \"@@end %d $?\"\n", i)
		for _, m := range assignment.FindAllStringSubmatch(b, -1) {
			fmt.Fprintf(&script, "echo \"@@var %s=$%s\"\n", m[1], m[1])
		}
	}
	path := filepath.Join(t.TempDir(), "walkthrough.sh")
	require.NoError(t, os.WriteFile(path, []byte(script.String()), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), walkthroughLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools["bash"], "--noprofile", "--norc", path)
	cmd.Dir = root
	cmd.Env = walkthroughEnv()
	// The shell and what it starts (the receiver) are one process group,
	// killed together if the walkthrough outlives its limit.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, runErr := cmd.CombinedOutput()
	results := parseWalkthrough(t, string(out), blocks)
	require.NoError(t, runErr, "the walkthrough's shell failed; output:\n%s\nserver log:\n%s", out, d.Stderr)

	for i, r := range results {
		require.True(t, r.finished, "block %d did not finish:\n%s\noutput:\n%s", i, r.text, r.output)
		assert.Equal(t, 0, r.status, "block %d ended with status %d:\n%s\noutput:\n%s", i, r.status, r.text, r.output)
		assert.Empty(t, r.failures, "commands of block %d failed:\n%s\noutput:\n%s", i, r.text, r.output)
		for name, v := range r.vars {
			assert.NotContains(t, []string{"", "null"}, v, "block %d set %s to %q:\n%s\noutput:\n%s", i, name, v, r.text, r.output)
		}
	}

	// What the README says each block shows: the block is found by a
	// piece of its text, and each pattern must match its output.
	uuidRE := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	expected := []struct {
		block string
		want  []string
	}{
		{`echo "project $PROJECT, canvas $PROMPT"`, []string{`project ` + uuidRE + `, canvas ` + uuidRE}},
		{`echo "versions $V1 $V2"`, []string{`versions ` + uuidRE + ` ` + uuidRE}},
		{`"envName\":\"staging\",\"versionId\":\"$V2\"`, []string{`"environmentName": "production"`, `"name": "staging"`, `"environmentName": "staging"`}},
		{`'{title, versionIndex, promoted, content}'`, []string{`"title": "Friendly"`, `"content": "Say hi to \{\{name\}\}."`}},
		{`'{"promoted":true}'`, []string{`"promoted": true`, `"isActive": true`, `"unpublishedAt": "20`}},
		{`\"name\":\"Not Valid\"`, []string{`"code":"INVALID_ENVIRONMENT_NAME"`}},
		{`\"variables\":{\"name\":\"Ada\"}}" | jq .`, []string{`"text": "Say hi to Ada."`, `"model": "echo"`}},
		{`-w 'HTTP %{http_code}\n'`, []string{
			`\{"code":"VALIDATION","message":"Missing required variables: name.","details":\[\{"path":"/json/variables/name","message":"required variable has no value"\}\]`,
			`(?m)^HTTP 422$`}},
		{`"apiKey":"sk-ant-made-up-0000"`, []string{`(?m)^\{"name":"claude","provider":"anthropic","keyHint":"…0000"\}$`}},
		{`call get_weather`, []string{`(?m)^\{"finishReason":"tool_calls","toolCalls":\[\{"id":"call_echo_0","name":"get_weather","arguments":\{"city":"Paris"\}\}\]\}$`}},
		{`\"stream\":true`, []string{`(?m)^data: \{"id":"`, `(?m)^data: \[DONE\]$`}},
		{`go run ./examples/receiver`, []string{`(?m)^POST /hook$`, `(?m)^tenant: acme$`, `(?m)^webhook-id: `,
			`"type": "completion.succeeded"`, `"text": "Say hi to Ada."`, `"status": "completed"`}},
		{`> notes.txt`, []string{`"uploadUrl": "http://127\.0\.0\.1:`}},
		{`--data-binary @notes.txt`, []string{`"status": "uploaded"`, `"size": 25`, `"mimeType": "text/plain"`}},
		{`vault://$FILE`, []string{`(?m)^Summarize \[file name=notes\.txt type=text/plain size=25\]$`, `(?m)^Ada likes short answers\.$`}},
		{`-X DELETE`, []string{`(?m)^204$`}},
		{`/test-case/$CASE/run`, []string{`(?m)^\{"status":"completed","output":"Say hi to Ada\.","passed":true\}$`}},
		{`"requiredApprovals":1}'`, []string{`(?m)^\{"name":"production","protected":true,"requiredApprovals":1\}$`,
			`(?m)^APPROVAL_REQUIRED$`}},
		{`/publication-requests/$REQ/approve`, []string{`(?m)^FORBIDDEN$`, `(?m)^\{"status":"published","approvals":1\}$`}},
		{`resourceType=publication-request&resourceId=$REQ`, []string{
			`(?m)^\d+ publication-request\.approve by apiKey\n\d+ publication-request\.create by apiKey$`}},
		{`/workflow/runs/$RUN/review`, []string{`(?m)^running$`,
			`\{"status":"completed","output":"Welcome Ada! \(lovely\)","steps":\[\{"id":"start","status":"completed"\}`}},
	}
	for _, e := range expected {
		var found []blockResult
		for _, r := range results {
			if strings.Contains(r.text, e.block) {
				found = append(found, r)
			}
		}
		if !assert.Len(t, found, 1, "one walkthrough block contains %q", e.block) {
			continue
		}
		for _, want := range e.want {
			assert.Regexp(t, regexp.MustCompile(want), found[0].output, "block:\n%s", found[0].text)
		}
	}
	assert.NoFileExists(t, notes, "the walkthrough removes the file it wrote")
}

// walkthroughEnv is the environment of the reader's shell: this process's,
// without canvasd's variables, with the go command of the toolchain that
// runs the test first on PATH. A test binary built with -race has the go
// command build with -race too, so that `go run` finds the standard
// library already compiled in the build cache.
func walkthroughEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CANVAS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Join(runtime.GOROOT(), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	goflags := os.Getenv("GOFLAGS")
	if builtWithRace() {
		goflags = strings.TrimSpace(goflags + " -race")
	}
	if goflags != "" {
		env = append(env, "GOFLAGS="+goflags)
	}
	return env
}

// parseWalkthrough splits the shell's output by the markers the script
// prints around each block.
func parseWalkthrough(t *testing.T, out string, blocks []string) []blockResult {
	t.Helper()
	results := make([]blockResult, len(blocks))
	for i := range results {
		results[i] = blockResult{text: blocks[i], status: -1, vars: map[string]string{}}
	}
	cur := -1
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "@@block "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "@@block "))
			require.NoError(t, err)
			cur = n
			text.Reset()
		case strings.HasPrefix(line, "@@end ") && cur >= 0:
			var n, status int
			_, err := fmt.Sscanf(line, "@@end %d %d", &n, &status)
			require.NoError(t, err)
			results[cur].output = text.String()
			results[cur].status = status
			results[cur].finished = true
		case strings.HasPrefix(line, "@@var ") && cur >= 0:
			name, value, _ := strings.Cut(strings.TrimPrefix(line, "@@var "), "=")
			results[cur].vars[name] = value
		case strings.HasPrefix(line, "@@failed: ") && cur >= 0:
			results[cur].failures = append(results[cur].failures, strings.TrimPrefix(line, "@@failed: "))
		case cur >= 0:
			text.WriteString(line + "\n")
		}
	}
	if cur >= 0 && !results[cur].finished {
		results[cur].output = text.String()
	}
	return results
}
