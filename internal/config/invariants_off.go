//go:build !invariants

package config

const invariantsEnabled = false
