package env

import "github.com/promptcanvas/promptcanvas/canvas"

// MaxNameLength bounds environment names, in characters
// (canvas.MaxEnvironmentNameLength).
const MaxNameLength = canvas.MaxEnvironmentNameLength

// NormalizeName trims name of ASCII whitespace and checks the name rules
// shared by every use of an environment name
// (canvas.NormalizeEnvironmentName). Reserved names pass.
func NormalizeName(name string) (string, error) { return canvas.NormalizeEnvironmentName(name) }

// CheckPublishName normalizes a name that selects an environment to read or
// publish to: production or a custom name (canvas.CheckEnvironmentName).
func CheckPublishName(name string) (string, error) { return canvas.CheckEnvironmentName(name) }

// CheckCustomName normalizes the name of a new custom environment: no
// reserved name, and not a UUID (canvas.CheckCustomEnvironmentName).
func CheckCustomName(name string) (string, error) { return canvas.CheckCustomEnvironmentName(name) }
