// Package env owns environments and publications: the name rules, publishing
// a version to an environment, the publication history, and the version an
// environment serves.
//
// Every canvas has the system environment production, created on demand;
// custom environments are created explicitly. Each environment serves at
// most one active publication at a time and keeps every earlier one.
// Publishing to production is what makes a version the promoted version.
package env
