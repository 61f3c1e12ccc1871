//go:build invariants

package log

// invariantsEnabled turns on expensive self-checks (go test -tags invariants).
const invariantsEnabled = true
