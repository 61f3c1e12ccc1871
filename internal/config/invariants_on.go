//go:build invariants

package config

// invariantsEnabled turns on the consistency checks; CI builds with
// -tags invariants.
const invariantsEnabled = true
