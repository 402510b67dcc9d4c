// Package archtest holds the tests that enforce clawhost's dependency rules
// (see TestDependencyRules) and its function and file size limits (see
// TestSizeLimits); it has no code of its own.
package archtest
