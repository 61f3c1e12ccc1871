//go:build invariants

package controller

// invariantsEnabled turns on the expensive consistency checks; CI builds
// with -tags invariants.
const invariantsEnabled = true
