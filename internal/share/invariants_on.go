//go:build invariants

package share

// invariantsEnabled turns on the expensive consistency checks; CI builds
// with -tags invariants.
const invariantsEnabled = true
