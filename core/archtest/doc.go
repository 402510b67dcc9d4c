// Package archtest holds the test that enforces clawhost's dependency rules
// (see TestDependencyRules); it has no code of its own.
package archtest
