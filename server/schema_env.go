package server

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/schemadetail"
)

// envNameSchemas maps the component schemas of environment names to the
// check of the env package they describe. A body whose environment name
// fails one of them is 400 INVALID_ENVIRONMENT_NAME, as the contract says
// of every invalid environment name, not 422 VALIDATION.
var envNameSchemas = map[string]func(string) (string, error){
	"EnvironmentName":       env.CheckPublishName,
	"CustomEnvironmentName": env.CheckCustomName,
}

// envNameError returns the INVALID_ENVIRONMENT_NAME error of the first
// environment name of doc that ve reports, produced by the env package's
// own check so that its message is the one every other path gives; nil
// when ve reports none (a wrong type is VALIDATION).
func envNameError(ve *jsonschema.ValidationError, doc any) error {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			if err := envNameError(c, doc); err != nil {
				return err
			}
		}
		return nil
	}
	if strings.HasSuffix(ve.KeywordLocation, "/type") {
		return nil
	}
	_, fragment, _ := strings.Cut(ve.AbsoluteKeywordLocation, "#")
	for name, check := range envNameSchemas {
		if !strings.HasPrefix(fragment, "/components/schemas/"+name+"/") {
			continue
		}
		if s, ok := schemadetail.Lookup(doc, ve.InstanceLocation).(string); ok {
			if _, err := check(s); err != nil {
				return err
			}
		}
	}
	return nil
}
