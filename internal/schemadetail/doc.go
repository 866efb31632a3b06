// Package schemadetail words the failures of a JSON Schema validation
// (santhosh-tekuri/jsonschema) as VALIDATION details: one per problem, in
// plain words, at the JSON pointer of the offending value. Request bodies
// (server) and the configs of workflow nodes (workflow) report their
// problems through it, so both read alike.
package schemadetail
