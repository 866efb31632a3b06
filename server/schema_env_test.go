package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// TestSchemaSet_EnvironmentNames checks that the environment name schemas
// of openapi.json and the env package's checks agree on every name, and
// that a body whose name breaks them is 400 INVALID_ENVIRONMENT_NAME with
// the env package's own message.
func TestSchemaSet_EnvironmentNames(t *testing.T) {
	s := newRoutedServer(t).schemas
	const id = "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"
	names := []string{
		"staging", "prod-eu-1", "a", "0", " staging ", "\tstaging\n", "\vstaging\f", "\rx\r",
		strings.Repeat("a", 64), " " + strings.Repeat("a", 64) + " ", strings.Repeat("a", 65),
		strings.Repeat("ab-", 21) + "a", strings.Repeat("ab-", 21) + "ab",
		"production", " production", "promoted", "latest", "draft", "drafts", "latest-1",
		id, " " + id, strings.ToUpper(id), "6f1c2a3e7d5b4c8a9e0f1a2b3c4d5e6f",
		"", " ", "Staging", "stag ing", "-staging", "staging-", "stag--ing", "stag_ing", "staging\u00a0",
		"\u00a0staging", "stäging", "staging\x00",
	}
	for _, name := range names {
		t.Run(strings.ToValidUTF8(name, "?"), func(t *testing.T) {
			_, customErr := env.CheckCustomName(name)
			err := s.validate("CreateEnvironmentRequest", map[string]any{"resourceType": "prompt", "resourceId": id, "name": name})
			assert.Equal(t, customErr, err, "custom name %q", name)

			_, publishErr := env.CheckPublishName(name)
			err = s.validate("PublishRequest", map[string]any{"resourceType": "prompt", "resourceId": id, "envName": name, "versionId": id})
			assert.Equal(t, publishErr, err, "publish name %q", name)
			err = s.validate("CreateApplicationRequest", map[string]any{"name": "a", "environmentName": name})
			assert.Equal(t, publishErr, err, "application environment %q", name)
			err = s.validate("CompletionRequest", map[string]any{"canvas_id": id, "environment_name": name})
			if name == "" {
				assert.NoError(t, err, "an empty environment_name is no environment")
			} else {
				assert.Equal(t, publishErr, err, "completion environment %q", name)
			}
		})
	}
	t.Run("WrongTypeIsValidation", func(t *testing.T) {
		err := s.validate("PublishRequest", map[string]any{"resourceType": "prompt", "resourceId": id, "envName": 5, "versionId": id})
		require.Error(t, err)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	})
}
