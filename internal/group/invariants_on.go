//go:build invariants

package group

// invariantsEnabled turns on the expensive consistency checks; CI builds
// with -tags invariants.
const invariantsEnabled = true
