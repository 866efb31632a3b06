#!/usr/bin/env bash
# eval.sh is the CI step of examples/ci: it runs a canvas's test cases on
# the candidate version through `canvasd eval`, writes the JUnit report and
# the markdown summary into $REPORTS, and exits non-zero when the candidate
# passes too few cases or regresses against the baseline.
#
# Environment:
#   CANVAS_URL        the server's URL (required)
#   CANVAS_KEY        an API key of the editor role or above (required)
#   CANVAS_ID         the canvas whose test cases run (required)
#   CANDIDATE         the version judged: a version id or an environment (default staging)
#   BASELINE          the version compared with (default production)
#   EVALUATORS        space-separated --evaluator values: rule types or saved evaluators' ids (default contains)
#   TAGS              comma-separated tags of the test cases to run (default all)
#   MIN_PASS_RATE     the candidate's lowest pass rate (default 90%)
#   MAX_REGRESSIONS   most cases that may pass on the baseline and fail on the candidate (default 0)
#   REPORTS           directory of junit.xml and summary.md (default reports)
#   CANVASD           the canvasd program (default canvasd, on PATH)
set -euo pipefail

: "${CANVAS_URL:?set CANVAS_URL to the URL of the server}"
: "${CANVAS_KEY:?set CANVAS_KEY to an API key of the editor role}"
: "${CANVAS_ID:?set CANVAS_ID to the canvas to evaluate}"
reports="${REPORTS:-reports}"
mkdir -p "$reports"

args=()
for evaluator in ${EVALUATORS:-contains}; do
  args+=(--evaluator "$evaluator")
done
if [ -n "${TAGS:-}" ]; then
  args+=(--tags "$TAGS")
fi

status=0
"${CANVASD:-canvasd}" eval \
  --canvas "$CANVAS_ID" \
  --candidate "${CANDIDATE:-staging}" \
  --baseline "${BASELINE:-production}" \
  --min-pass-rate "${MIN_PASS_RATE:-90%}" \
  --max-regressions "${MAX_REGRESSIONS:-0}" \
  --junit "$reports/junit.xml" \
  --summary "$reports/summary.md" \
  "${args[@]}" || status=$?

# On GitHub Actions the summary is shown on the run's page.
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$reports/summary.md" ]; then
  cat "$reports/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
